/* `pptpctl upgrade`'s execve and the hand-over across it: see upgrade.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/fds.h"
#include "pptpd/upgrade.h"
#include "proto/handover.h"

#define UPGRADE_ANSWER_MAX 512  /* bytes of --handover-version's answer:
                                   the number, or why not (file:line) */
#define UPGRADE_ARGS_MAX   64

void
upgrade_name(const char *exe)
{
	const char *slash = strrchr(exe, '/');
	prctl(PR_SET_NAME, slash != NULL ? slash + 1 : exe);
}

/* How long the installed binary has to answer: the monitor waits in its
 * request handler (the worker gives up on it at 5 s, monlink.h). */
#define UPGRADE_ASK_MS     2000

/* `argv` (NULL-terminated) without an earlier --resume and its number,
 * then "-c conf" (the last -c wins: an absolute path, since a daemon's
 * working directory is /), then `a` and `b` (NULL: none). -1 (E2BIG)
 * when it does not fit. */
static int
upgrade_args(char *args[UPGRADE_ARGS_MAX + 6], char *const argv[],
    const char *conf, const char *a, const char *b)
{
	size_t k = 0;

	for (size_t i = 0; argv[i] != NULL; i++) {
		if (strcmp(argv[i], "--resume") == 0 && argv[i + 1] != NULL) {
			i++;
			continue;
		}
		if (k == UPGRADE_ARGS_MAX) {
			errno = E2BIG;
			return -1;
		}
		args[k++] = argv[i];
	}
	args[k++] = "-c";
	args[k++] = (char *)conf;
	if (a != NULL)
		args[k++] = (char *)a;
	if (b != NULL)
		args[k++] = (char *)b;
	args[k] = NULL;
	return 0;
}

/* Read the child's answer on `fd` into buf until EOF or the deadline. */
static size_t
upgrade_read(int fd, char *buf, size_t len, const struct timespec *until)
{
	size_t got = 0;
	for (;;) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long ms = (until->tv_sec - now.tv_sec) * 1000 +
		    (until->tv_nsec - now.tv_nsec) / 1000000;
		struct pollfd p = { fd, POLLIN, 0 };
		if (ms <= 0 || poll(&p, 1, (int)ms) <= 0)
			break;
		ssize_t n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == len - 1)
			break;
	}
	buf[got] = '\0';
	return got;
}

/* Wait for child `pid` to exit until the deadline: 0 with *st, or -1
 * (still running). */
static int
upgrade_reap(pid_t pid, int *st, const struct timespec *until)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };
	for (;;) {
		pid_t r = waitpid(pid, st, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > until->tv_sec || (now.tv_sec == until->tv_sec &&
		    now.tv_nsec >= until->tv_nsec))
			return -1;
		nanosleep(&tick, NULL);
	}
}

/* Run the file open on `bin` (installed as `exe`) with ARGS
 * --handover-version: its output (both streams) into buf, its exit
 * status into *st. 0, or -1 with err set (killed at the deadline, or not
 * run). */
static int
upgrade_ask(int bin, const char *exe, char *const args[], char *buf,
    size_t len, int *st, char *err, size_t errlen)
{
	struct timespec until;
	int p[2];
	sigset_t none;

	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "cannot ask %s: %s", exe, strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		/* the monitor's blocked signals are not the binary's */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		dup2(p[1], STDOUT_FILENO);
		dup2(p[1], STDERR_FILENO);
		/* open across the exec: a script's interpreter reads it by
		 * its /dev/fd name */
		fexecve(fcntl(bin, F_DUPFD, STDERR_FILENO + 1), args, environ);
		_exit(127);
	}
	close(p[1]);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += UPGRADE_ASK_MS / 1000;
	if (pid > 0)
		upgrade_read(p[0], buf, len, &until);
	close(p[0]);
	if (pid < 0) {
		snprintf(err, errlen, "cannot run %s: %s", exe, strerror(errno));
		return -1;
	}
	if (upgrade_reap(pid, st, &until) == 0)
		return 0;
	/* it has had its time */
	kill(pid, SIGKILL);
	while (waitpid(pid, st, 0) < 0 && errno == EINTR)
		;
	snprintf(err, errlen, "installed pptpd %s did not answer "
	    "--handover-version in %d ms", exe, UPGRADE_ASK_MS);
	return -1;
}

/* The first line of `s`, cut there. */
static const char *
upgrade_line(char *s)
{
	s[strcspn(s, "\n")] = '\0';
	return s;
}

/* The file open on `bin` asked whether it speaks our hand-over with this
 * configuration. 0, or -1 with err set. */
static int
upgrade_answer(int bin, const char *exe, char *const argv[],
    const char *conf, char *err, size_t errlen)
{
	char buf[UPGRADE_ANSWER_MAX], *end, *args[UPGRADE_ARGS_MAX + 6];
	int st = 0;

	if (upgrade_args(args, argv, conf, "--handover-version", NULL) < 0) {
		snprintf(err, errlen, "too many arguments to run again");
		return -1;
	}
	if (upgrade_ask(bin, exe, args, buf, sizeof(buf), &st, err,
	    errlen) < 0)
		return -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == UPGRADE_EXIT_CONF) {
		snprintf(err, errlen, "installed pptpd %s refuses the "
		    "configuration: %s", exe, upgrade_line(buf));
		return -1;
	}
	long v = strtol(buf, &end, 10);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || end == buf ||
	    (*end != '\n' && *end != '\0')) {
		snprintf(err, errlen, "installed pptpd %s cannot hand over (it "
		    "does not know --handover-version: a release before the "
		    "hand-over, or not pptpd)", exe);
		return -1;
	}
	if (v != HANDOVER_VERSION) {
		snprintf(err, errlen, "installed pptpd %s speaks hand-over %ld, "
		    "running speaks %d", exe, v, HANDOVER_VERSION);
		return -1;
	}
	return 0;
}

int
upgrade_check(const char *exe, char *const argv[], const char *conf,
    int *bin, char *err, size_t errlen)
{
	*bin = open(exe, O_RDONLY | O_CLOEXEC);
	if (*bin < 0) {
		snprintf(err, errlen, "installed pptpd %s cannot hand over: %s",
		    exe, strerror(errno));
		return -1;
	}
	if (upgrade_answer(*bin, exe, argv, conf, err, errlen) < 0) {
		close(*bin);
		*bin = -1;
		return -1;
	}
	return 0;
}

/* Close-on-exec for `fd` (-1: none) on or off. */
static void
upgrade_cloexec(int fd, int on)
{
	if (fd >= 0)
		fcntl(fd, F_SETFD, on ? FD_CLOEXEC : 0);
}

static void
upgrade_keep(int journal, int memfd, const struct handover_call *c,
    size_t n, int keep)
{
	upgrade_cloexec(journal, !keep);
	upgrade_cloexec(memfd, !keep);
	for (size_t i = 0; i < n; i++) {
		upgrade_cloexec(c[i].conn, !keep);
		upgrade_cloexec(c[i].report, !keep);
		upgrade_cloexec(c[i].pty, !keep);
	}
}

void
upgrade_exec(int bin, char *const argv[], const char *conf,
    int journal, const struct handover_call *calls, size_t n,
    uint32_t generation)
{
	struct handover_head h = { .calls = (uint32_t)n,
		.generation = generation, .journal = journal };
	char *args[UPGRADE_ARGS_MAX + 6], num[16];
	int err, fd = memfd_create("pptpd-handover", MFD_CLOEXEC);

	if (fd < 0)
		return;
	snprintf(num, sizeof(num), "%d", fd);
	if (handover_write(fd, &h, calls) < 0 ||
	    upgrade_args(args, argv, conf, "--resume", num) < 0)
		goto fail;
	upgrade_keep(journal, fd, calls, n, 1);
	/* the file upgrade_check asked, whatever is at its path by now;
	 * open across the exec, as there (the new program closes it) */
	upgrade_cloexec(bin, 0);
	fexecve(bin, args, environ);
	upgrade_cloexec(bin, 1);
	upgrade_keep(journal, fd, calls, n, 0);
fail:
	err = errno;
	close(fd);
	errno = err;
}

/* Whatever the program before left open without close-on-exec (a
 * library's netlink socket, say) is closed: only stdio, the journal and
 * the calls' descriptors are the hand-over's. Nothing else is open yet. */
static void
upgrade_close_others(int journal, const struct handover_call *c, size_t n)
{
	int *keep = calloc(3 * n + 1, sizeof(*keep));
	size_t k = 0;

	if (keep == NULL)
		return;   /* left open: better than a session's closed */
	keep[k++] = journal;
	for (size_t i = 0; i < n; i++) {
		keep[k++] = c[i].conn;
		keep[k++] = c[i].report;
		keep[k++] = c[i].pty;
	}
	fds_close_except(keep, k);
	free(keep);
}

int
upgrade_take(int fd, int *journal, struct handover_call **calls,
    size_t *n, uint32_t *generation, char *err, size_t errlen)
{
	struct handover_head h;
	const char *why = NULL;

	if (handover_read(fd, &h, calls, &why) < 0) {
		snprintf(err, errlen, "--resume %d: %s", fd, why);
		close(fd);
		return -1;
	}
	close(fd);
	*journal = h.journal;
	*n = h.calls;
	*generation = h.generation;
	upgrade_keep(h.journal, -1, *calls, *n, 0);
	upgrade_close_others(h.journal, *calls, *n);
	return 0;
}
