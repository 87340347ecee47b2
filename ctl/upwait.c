#include <errno.h>
#include <limits.h>
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
	struct stat exe;               /* the file the monitor runs */
	char        path[PATH_MAX];    /* the path it was run from: the one
	                                * its upgrade opens */
	struct stat sockst;            /* the control socket's file */
};

static long
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void
sleep_ms(long ms)
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

/* Has `pid` exited? A zombie has (its parent has not reaped it yet).
 * Where /proc cannot be read for another reason, it has not. */
static int
proc_gone(pid_t pid)
{
	char p[64], buf[512];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(p, "r");
	if (f == NULL)
		return errno == ENOENT || errno == ESRCH;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the state follows the name, which may hold anything: the last ')' */
	const char *rp = strrchr(buf, ')');
	return rp != NULL && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
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

/* The monitor: the process that opened the socket (SO_PEERCRED names
 * the last to listen() on it), which is the monitor (it opens it before
 * it forks its first worker, and again after daemon()), or a worker the
 * monitor forked after one died: that runs as its own user, the monitor
 * as root, and its parent is the monitor. The worker's own /proc/PID/exe
 * is not read: it is not dumpable, which would need CAP_SYS_PTRACE. */
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
	if (uid < 0) {
		*why = "the process that opened it has exited (a pptpd 0.8.0 "
		    "started without -f)";
		return -1;
	}
	return uid == 0 ? cr.pid : (pid_t)proc_status(cr.pid, "PPid:");
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
upwait_poll(const struct upwait *w, long left_ms)
{
	struct stat st;
	size_t len;
	char *ans;
	int fd;

	if (stat(w->sock, &st) < 0 || same_file(&st, &w->sockst) ||
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

	if (proc_exe_stat(w->monitor, &now) < 0)
		return -1;
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
	long deadline = now_ms() + UPWAIT_MS, left;

	while ((left = deadline - now_ms()) > 0) {
		char *status = upwait_poll(w, left);
		int rc = status != NULL ? upwait_verdict(w, status) : -1;
		free(status);
		if (rc >= 0)
			return rc;
		if (proc_gone(w->monitor)) {
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
