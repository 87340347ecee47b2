#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/procexe.h"
#include "ctl/talk.h"
#include "ctl/upwait.h"

/* The monitor gives the leaving worker 5 s (then kills it) before it
 * executes the installed binary, which took 1 s to take 50 sessions over
 * (make bench-scale UPGRADE=1); the rest is room for a loaded host. */
#define UPWAIT_MS       20000
#define UPWAIT_POLL_MS  100
#define UPWAIT_STATUS   "status\n"
#define UPWAIT_VERSION  "version:"   /* status's line (pptpd/ctl.c) */

struct upwait {
	const char *sock;
	pid_t       monitor;
	unsigned long long start;      /* its start time: a pid reused is
	                                * another process */
	struct stat exe;               /* the file the monitor runs */
	char        path[PATH_MAX];    /* the path it was run from: the one
	                                * its upgrade opens */
	struct stat sockst;            /* the control socket's file */
};

static void
sleep_ms(int64_t ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* A number field of /proc/PID/status ("Uid:" gives the real uid), or -1.
 * That file is readable of any process, a non-dumpable one too. */
static long
proc_status(pid_t pid, const char *key)
{
	char p[64], line[256];
	long v = -1;
	size_t k = strlen(key);
	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	FILE *f = fopen(p, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, k) == 0) {
			v = strtol(line + k, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* /proc/PID/stat: the state letter and the start time (clock ticks
 * after boot). 0, or -1 with errno. */
static int
proc_stat(pid_t pid, char *state, unsigned long long *start)
{
	char p[64], buf[1024];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(p, "r");
	if (f == NULL)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after the name, which may hold anything: the last ')'; then the
	 * state (field 3) and, 19 fields on, starttime (field 22) */
	const char *rp = strrchr(buf, ')');
	if (rp == NULL || sscanf(rp + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s "
	    "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu", state, start) != 2) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Has the monitor exited? A zombie has (its parent has not reaped it),
 * and so has a process that reuses its pid. Where /proc cannot be read
 * for another reason, it has not. */
static int
upwait_gone(const struct upwait *w)
{
	char state;
	unsigned long long start;

	if (proc_stat(w->monitor, &state, &start) < 0)
		return errno == ENOENT || errno == ESRCH;
	return state == 'Z' || state == 'X' || start != w->start;
}

static int
proc_exe_stat(pid_t pid, struct stat *st)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
	return stat(p, st);
}

static int
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The same socket file, not one bound since: a file system may give a
 * new file the number of one just removed (ext4 does), not its change
 * time. */
static int
same_socket(const struct stat *a, const struct stat *b)
{
	return same_file(a, b) && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	    a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Is `parent` the monitor of `pid`, a worker it forked? It runs as root
 * and the same file; a worker that has opened the socket but not yet
 * dropped its privileges runs as root too, and can then be read. */
static int
upwait_parent_is_monitor(pid_t pid, pid_t parent)
{
	struct stat a, b;
	return parent > 0 && proc_status(parent, "Uid:") == 0 &&
	    proc_exe_stat(pid, &a) == 0 && proc_exe_stat(parent, &b) == 0 &&
	    same_file(&a, &b);
}

/* The monitor: the process that opened the socket (SO_PEERCRED names
 * the last to listen() on it), which is the monitor (it opens it before
 * it forks its first worker, and listens again after daemon()), or a
 * worker the monitor forked after one died, whose parent it is. A worker
 * runs as its own user once it has dropped root (its /proc/PID/exe then
 * needs CAP_SYS_PTRACE to be read, and is not); before that it runs as
 * root and the same file as its parent. */
static pid_t
upwait_monitor(int fd, const char **why)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
		*why = strerror(errno);
		return -1;
	}
	long uid = proc_status(cr.pid, "Uid:");
	pid_t parent = (pid_t)proc_status(cr.pid, "PPid:");
	if (uid < 0) {
		*why = "the process that opened it has exited (a pptpd 0.8.0 "
		    "started without -f)";
		return -1;
	}
	if (uid == 0)
		return upwait_parent_is_monitor(cr.pid, parent) ? parent : cr.pid;
	if (parent <= 0 || proc_status(parent, "Uid:") != 0) {
		*why = "it is served by a process that is not root, and not a "
		    "child of root";
		return -1;
	}
	return parent;
}

struct upwait *
upwait_new(int fd, const char *sock)
{
	struct upwait *w = calloc(1, sizeof(*w));
	const char *why = "out of memory";

	if (w != NULL) {
		w->sock = sock;
		if ((w->monitor = upwait_monitor(fd, &why)) <= 0)
			;
		else if (proc_exe_stat(w->monitor, &w->exe) < 0 ||
		    proc_exe_path(w->monitor, w->path) < 0 ||
		    proc_stat(w->monitor, &(char){ 0 }, &w->start) < 0 ||
		    stat(sock, &w->sockst) < 0)
			why = strerror(errno);
		else
			return w;
	}
	fprintf(stderr, "pptpctl: upgrade --wait cannot tell which pptpd serves "
	    "%s: %s; nothing asked\n", sock, why);
	free(w);
	return NULL;
}

void
upwait_free(struct upwait *w)
{
	free(w);
}

/* `status` from whatever serves a control socket opened since the
 * upgrade's answer (another file at the path), waiting at most
 * `left_ms`; NULL while there is none: the old worker still serves, or
 * nothing does. */
static char *
upwait_poll(const struct upwait *w, int64_t left_ms)
{
	struct stat st;
	size_t len;
	char *ans;
	int fd;

	if (stat(w->sock, &st) < 0 || same_socket(&st, &w->sockst) ||
	    (fd = talk_connect(w->sock, 1)) < 0)
		return NULL;
	ans = talk_exchange(fd, UPWAIT_STATUS, strlen(UPWAIT_STATUS), &len,
	    (int)left_ms, 1);
	close(fd);
	if (ans != NULL && strncmp(ans, "ok\n", 3) != 0) {
		free(ans);
		ans = NULL;
	}
	return ans;
}

/* The version line of a status answer, into `out`. */
static void
status_version(const char *status, char *out, size_t outlen)
{
	const char *v = strstr(status, UPWAIT_VERSION);
	const char *nl = v != NULL ? strchr(v, '\n') : NULL;

	snprintf(out, outlen, "pptpd");
	if (nl != NULL) {
		v += strlen(UPWAIT_VERSION);
		v += strspn(v, " ");
		snprintf(out, outlen, "%.*s", (int)(nl - v), v);
	}
}

/* Once a new server answers: the monitor runs another file than before
 * (the installed binary), or the file now at the path (an upgrade to the
 * very file that runs, which cannot be told from a failed exec of it:
 * the same binary serves either way). Otherwise its exec failed and the
 * old binary carries on, in a worker it forked. -1: the monitor is gone. */
static int
upwait_verdict(const struct upwait *w, const char *status)
{
	struct stat now, at;
	char version[128];

	if (proc_exe_stat(w->monitor, &now) < 0) {
		if (errno == ENOENT || errno == ESRCH)
			return -1;   /* gone: the caller says so */
		fprintf(stderr, "pptpctl: a pptpd answers, but /proc/%d/exe "
		    "cannot be read: %s\n", (int)w->monitor, strerror(errno));
		return EXIT_ERROR;
	}
	int at_path = stat(w->path, &at) == 0 && same_file(&at, &now);
	if (same_file(&now, &w->exe) && !at_path) {
		fprintf(stderr, "pptpctl: the installed pptpd (%s) did not take "
		    "over: the running one carries on with every session (its log "
		    "says why)\n", w->path);
		return EXIT_ERROR;
	}
	status_version(status, version, sizeof(version));
	printf("taken over: %s (%s), pid %d\n", version, w->path,
	    (int)w->monitor);
	if (!at_path)
		printf("note: %s has changed since it was checked; pptpctl upgrade "
		    "again runs what is there now\n", w->path);
	return fflush(stdout) == 0 ? 0 : EXIT_ERROR;
}

int
upwait_run(struct upwait *w)
{
	int64_t deadline = talk_now_ms() + UPWAIT_MS, left;

	while ((left = deadline - talk_now_ms()) > 0) {
		char *status = upwait_poll(w, left);
		int rc = status != NULL ? upwait_verdict(w, status) : -1;
		free(status);
		if (rc >= 0)
			return rc;
		if (upwait_gone(w)) {
			fprintf(stderr, "pptpctl: pptpd (pid %d) exited during the "
			    "upgrade: its sessions are gone (its log says why)\n",
			    (int)w->monitor);
			return EXIT_NOT_RUNNING;
		}
		sleep_ms(left < UPWAIT_POLL_MS ? left : UPWAIT_POLL_MS);
	}
	fprintf(stderr, "pptpctl: no new pptpd answered within %d s of the "
	    "upgrade\n", UPWAIT_MS / 1000);
	return EXIT_ERROR;
}
