/* pptpctl: ask a running pptpd over its control socket (pptpd/ctl.h) and
 * print the answer. The exit status says what happened, for scripts:
 * pptpctl(8). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto/ctl.h"
#include "common/strclean.h"
#include "pptpd/version.h"

#define EXIT_NOMATCH      1   /* no such session, nothing matched */
#define EXIT_USAGE        2
#define EXIT_NOT_RUNNING  3   /* no socket, or nobody listening on it */
#define EXIT_ERROR        4   /* anything else (a reload refused, ...) */
#define EXIT_UNSUPPORTED  5   /* the daemon knows the request, cannot yet */

#define PPTPCTL_TIMEOUT_MS 10000
/* upgrade --wait: the monitor gives the installed binary's check 2 s and
 * the leaving worker 5 s; the new one took 1 s for 50 sessions (make
 * bench-scale UPGRADE=1). The rest is room for a loaded host. */
#define PPTPCTL_UPGRADE_WAIT_MS 20000
#define PPTPCTL_POLL_MS         100
#define PROC_DELETED            " (deleted)"   /* readlink of a replaced exe */

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: pptpctl [-s socket] command\n"
	    "  status                      version, uptime, connections, calls, pool, limits\n"
	    "  sessions [--json]           every session, one line (or JSON object) each\n"
	    "  show ID [--json]            one session in detail (ID: our Call ID)\n"
	    "  kill ID                     hang up that session cleanly\n"
	    "  kill user NAME              hang up every session of that user\n"
	    "  kill address ADDR           ... of that client or tunnel address\n"
	    "  reload                      re-read pptpd.conf; nothing is dropped\n"
	    "  upgrade [--wait]            the installed pptpd takes over; nothing is dropped\n"
	    "                              (--wait: until it has, or say why not)\n"
	    "  metrics                     (not supported yet)\n"
	    "  -s PATH  the daemon's control socket (default %s)\n"
	    "exit: 0 ok, 1 no such session, 2 usage, 3 pptpd not running, 4 error,\n"
	    "      5 not supported by this pptpd\n", CTL_SOCK_PATH);
}

/* An argument goes on the request line as it is: one line of printable
 * text, so it can neither end the request nor add to it. */
static int
arg_ok(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s; s++)
		if (!str_printable((unsigned char)*s))
			return 0;
	return 1;
}

static int
is_json(const char *s)
{
	return strcmp(s, "--json") == 0 || strcmp(s, "-j") == 0;
}

/* The request line for argv, or NULL (usage error, reported). */
static int
build_request(int argc, char **argv, char *req, size_t len)
{
	const char *cmd = argc > 0 ? argv[0] : "";
	int n = -1;

	for (int i = 0; i < argc; i++)
		if (!arg_ok(argv[i])) {
			fprintf(stderr, "pptpctl: argument %d: empty or not printable "
			    "text\n", i + 1);
			return -1;
		}
	if ((strcmp(cmd, "status") == 0 || strcmp(cmd, "reload") == 0 ||
	    strcmp(cmd, "upgrade") == 0 || strcmp(cmd, "metrics") == 0) &&
	    argc == 1)
		n = snprintf(req, len, "%s\n", cmd);
	else if (strcmp(cmd, "upgrade") == 0 && argc == 2 &&
	    strcmp(argv[1], "--wait") == 0)
		n = snprintf(req, len, "upgrade\n");   /* the waiting is ours */
	else if (strcmp(cmd, "sessions") == 0 && argc == 1)
		n = snprintf(req, len, "sessions\n");
	else if (strcmp(cmd, "sessions") == 0 && argc == 2 && is_json(argv[1]))
		n = snprintf(req, len, "sessions json\n");
	else if (strcmp(cmd, "show") == 0 && argc == 2)
		n = snprintf(req, len, "show %s\n", argv[1]);
	else if (strcmp(cmd, "show") == 0 && argc == 3 && is_json(argv[2]))
		n = snprintf(req, len, "show %s json\n", argv[1]);
	else if (strcmp(cmd, "kill") == 0 && argc == 2)
		n = snprintf(req, len, "kill id %s\n", argv[1]);
	else if (strcmp(cmd, "kill") == 0 && argc == 3 &&
	    (strcmp(argv[1], "user") == 0 || strcmp(argv[1], "address") == 0 ||
	    strcmp(argv[1], "id") == 0))
		n = snprintf(req, len, "kill %s %s\n", argv[1], argv[2]);
	else {
		usage(stderr);
		return -1;
	}
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "pptpctl: request too long\n");
		return -1;
	}
	return n;
}

/* `quiet`: no message where pptpd is not (yet) there, for polling. */
static int
connect_daemon(const char *path, int quiet)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "pptpctl: %s: path too long\n", path);
		return -EXIT_USAGE;
	}
	strcpy(sun.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "pptpctl: socket: %s\n", strerror(errno));
		return -EXIT_ERROR;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0)
		return fd;
	int e = errno;
	close(fd);
	if (e == ENOENT || e == ECONNREFUSED) {
		if (!quiet)
				fprintf(stderr, "pptpctl: pptpd is not running (%s: "
			    "%s)\n", path, strerror(e));
		return -EXIT_NOT_RUNNING;
	}
	if (e == EACCES || e == EPERM)
		fprintf(stderr, "pptpctl: %s: %s (only root may ask pptpd)\n", path,
		    strerror(e));
	else
		fprintf(stderr, "pptpctl: %s: %s\n", path, strerror(e));
	return -EXIT_ERROR;
}

/* Everything the daemon says until it closes; NULL on error (reported). */
static char *
read_answer(int fd, size_t *lenp)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	while (buf != NULL) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, PPTPCTL_TIMEOUT_MS);
		if (r == 0) {
			fprintf(stderr, "pptpctl: no answer from pptpd within %d s\n",
			    PPTPCTL_TIMEOUT_MS / 1000);
			break;
		}
		ssize_t n = r < 0 ? -1 : read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "pptpctl: read: %s\n", strerror(errno));
			break;
		}
		if (n == 0) {
			buf[len] = '\0';
			*lenp = len;
			return buf;
		}
		len += (size_t)n;
		if (cap - len < 2) {
			char *nb = realloc(buf, cap * 2);
			if (nb == NULL)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	if (buf == NULL)
		fprintf(stderr, "pptpctl: out of memory\n");
	free(buf);
	return NULL;
}

static int
exit_for(const char *code)
{
	if (strcmp(code, CTL_ERR_NOMATCH) == 0)
		return EXIT_NOMATCH;
	if (strcmp(code, CTL_ERR_USAGE) == 0)
		return EXIT_USAGE;
	if (strcmp(code, CTL_ERR_UNSUPPORTED) == 0)
		return EXIT_UNSUPPORTED;
	return EXIT_ERROR;
}

/* "ok\n" and the body, or "error CODE message\n". */
static int
print_answer(const char *ans, size_t len)
{
	const char *nl = memchr(ans, '\n', len);
	if (nl == NULL) {
		fprintf(stderr, "pptpctl: pptpd gave no complete answer\n");
		return EXIT_ERROR;
	}
	if (nl - ans == 2 && strncmp(ans, "ok", 2) == 0) {
		fwrite(nl + 1, 1, len - (size_t)(nl + 1 - ans), stdout);
		return fflush(stdout) == 0 ? 0 : EXIT_ERROR;
	}
	if (strncmp(ans, "error ", 6) == 0) {
		char code[32];
		const char *p = ans + 6, *sp = memchr(p, ' ', (size_t)(nl - p));
		size_t n = (size_t)((sp ? sp : nl) - p);
		snprintf(code, sizeof(code), "%.*s", (int)n, p);
		fprintf(stderr, "pptpctl: %.*s\n", (int)(nl - (sp ? sp + 1 : p)),
		    sp ? sp + 1 : p);
		return exit_for(code);
	}
	fprintf(stderr, "pptpctl: pptpd gave an answer not understood\n");
	return EXIT_ERROR;
}

/* Send `req` on `fd` and read the whole answer; NULL on error (reported). */
static char *
exchange(int fd, const char *req, size_t n, size_t *lenp)
{
	if (send(fd, req, n, MSG_NOSIGNAL) != (ssize_t)n) {
		fprintf(stderr, "pptpctl: send: %s\n", strerror(errno));
		return NULL;
	}
	return read_answer(fd, lenp);
}

/* ---- upgrade --wait: the daemon answers before the exec, so whether the
 * installed binary took over is seen from here, in /proc and on the
 * socket's path. The monitor executes the installed file in its own
 * process (its /proc/PID/exe changes), and a worker it starts opens the
 * control socket anew (another inode at the path); a worker that starts
 * while the exe has not changed is the old binary's, after a failed exec. */

struct answerer {
	pid_t  monitor;
	dev_t  dev;                 /* the file the monitor runs */
	ino_t  ino;
	char   path[PATH_MAX];      /* where that was run from: the monitor's
	                             * upgrade opens this path */
	dev_t  sock_dev;            /* the control socket's file */
	ino_t  sock_ino;
};

static pid_t
proc_ppid(pid_t pid)
{
	char p[64], line[256];
	long ppid = -1;
	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	FILE *f = fopen(p, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "PPid: %ld", &ppid) == 1)
			break;
	fclose(f);
	return (pid_t)ppid;
}

/* Has `pid` exited? (A zombie has: its parent has not reaped it yet.) */
static int
proc_gone(pid_t pid)
{
	char p[64], buf[512];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(p, "r");
	if (f == NULL)
		return 1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the state follows the name, which may hold anything: the last ')' */
	const char *rp = strrchr(buf, ')');
	return rp == NULL || rp[1] == '\0' || rp[2] == 'Z' || rp[2] == 'X';
}

static int
proc_exe(pid_t pid, struct stat *st)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
	return stat(p, st);
}

/* The monitor behind the process that answers on `fd`: that process
 * (which opened the socket: the monitor, or a worker it forked after the
 * first, running the monitor's file), or its parent where that runs the
 * same file. */
static int
answerer_of(int fd, const char *sock, struct answerer *a)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	struct stat st, pst, sst;
	char p[64];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
	    proc_exe(cr.pid, &st) < 0 || stat(sock, &sst) < 0)
		return -1;
	pid_t pp = proc_ppid(cr.pid);
	a->monitor = cr.pid;
	if (pp > 1 && proc_exe(pp, &pst) == 0 && pst.st_dev == st.st_dev &&
	    pst.st_ino == st.st_ino)
		a->monitor = pp;
	snprintf(p, sizeof(p), "/proc/%d/exe", (int)a->monitor);
	ssize_t n = readlink(p, a->path, sizeof(a->path) - 1);
	if (n < 0)
		return -1;
	a->path[n] = '\0';
	size_t dl = strlen(PROC_DELETED);
	if ((size_t)n > dl && strcmp(a->path + n - dl, PROC_DELETED) == 0)
		a->path[n - dl] = '\0';
	a->dev = st.st_dev;
	a->ino = st.st_ino;
	a->sock_dev = sst.st_dev;
	a->sock_ino = sst.st_ino;
	return 0;
}

/* `status` from a worker started since `before` (the control socket is
 * another file); NULL while there is none (the old worker still answers,
 * or nobody does). */
static char *
upgrade_poll(const char *sock, const struct answerer *before)
{
	struct stat sst;
	size_t len;
	char *ans;

	if (stat(sock, &sst) < 0 || (sst.st_dev == before->sock_dev &&
	    sst.st_ino == before->sock_ino))
		return NULL;
	int fd = connect_daemon(sock, 1);
	if (fd < 0)
		return NULL;
	ans = exchange(fd, "status\n", strlen("status\n"), &len);
	close(fd);
	if (ans != NULL && strncmp(ans, "ok\n", 3) != 0) {
		free(ans);
		ans = NULL;
	}
	return ans;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* What the new worker's status says of the version. */
static void
print_version_line(const char *status)
{
	const char *v = strstr(status, "version:");
	const char *nl = v != NULL ? strchr(v, '\n') : NULL;
	if (nl != NULL) {
		v += strlen("version:");
		v += strspn(v, " ");
		printf("%.*s", (int)(nl - v), v);
	} else
		printf("pptpd");
}

/* The verdict once a new worker answers: the monitor runs another file
 * than before (the installed binary), or the file at the path (the same
 * file, upgraded to itself). Otherwise its exec failed and the old binary
 * carries on. */
static int
upgrade_verdict(const struct answerer *before, const char *status)
{
	struct stat now, at;
	int at_ok = stat(before->path, &at) == 0;

	if (proc_exe(before->monitor, &now) < 0)
		return -1;   /* gone: the caller says so */
	int moved = now.st_dev != before->dev || now.st_ino != before->ino;
	int is_at = at_ok && at.st_dev == now.st_dev && at.st_ino == now.st_ino;
	if (!moved && !is_at) {
		fprintf(stderr, "pptpctl: the installed pptpd (%s) did not take "
		    "over: the running one carries on with every session (its log "
		    "says why)\n", before->path);
		return EXIT_ERROR;
	}
	printf("taken over: ");
	print_version_line(status);
	printf(" (%s), pid %d\n", before->path, (int)before->monitor);
	if (!is_at)
		printf("note: %s has changed since it was checked; pptpctl upgrade "
		    "again runs what is there now\n", before->path);
	return fflush(stdout) == 0 ? 0 : EXIT_ERROR;
}

static int
upgrade_wait(const char *sock, const struct answerer *before)
{
	for (long t = 0; t < PPTPCTL_UPGRADE_WAIT_MS; t += PPTPCTL_POLL_MS) {
		char *status = upgrade_poll(sock, before);
		int rc = status != NULL ? upgrade_verdict(before, status) : -1;
		free(status);
		if (rc >= 0)
			return rc;
		if (proc_gone(before->monitor)) {
			fprintf(stderr, "pptpctl: pptpd (pid %d) exited during the "
			    "upgrade: its sessions are gone (its log says why)\n",
			    (int)before->monitor);
			return EXIT_NOT_RUNNING;
		}
		sleep_ms(PPTPCTL_POLL_MS);
	}
	fprintf(stderr, "pptpctl: no new pptpd answered within %d s of the "
	    "upgrade\n", PPTPCTL_UPGRADE_WAIT_MS / 1000);
	return EXIT_ERROR;
}

int
main(int argc, char **argv)
{
	const char *path = CTL_SOCK_PATH;
	char req[CTL_REQ_MAX + 1];
	int ch;

	while ((ch = getopt(argc, argv, "+hs:V")) != -1) {
		switch (ch) {
		case 's': path = optarg; break;
		case 'V':
			printf("pptpctl %s\n", PPTPD_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	int n = build_request(argc - optind, argv + optind, req, sizeof(req));
	if (n < 0)
		return EXIT_USAGE;
	int waiting = argc - optind == 2 && strcmp(argv[optind], "upgrade") == 0;
	struct answerer before;
	int fd = connect_daemon(path, 0);
	if (fd < 0)
		return -fd;
	if (waiting && answerer_of(fd, path, &before) < 0) {
		fprintf(stderr, "pptpctl: cannot tell which pptpd answers (%s): "
		    "--wait needs /proc and root\n", strerror(errno));
		close(fd);
		return EXIT_ERROR;
	}
	size_t len = 0;
	char *ans = exchange(fd, req, (size_t)n, &len);
	close(fd);
	if (ans == NULL)
		return EXIT_ERROR;
	int rc = print_answer(ans, len);
	free(ans);
	if (rc == 0 && waiting)
		rc = upgrade_wait(path, &before);
	return rc;
}
