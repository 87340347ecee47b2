/* `pptpctl upgrade`'s execve and the hand-over across it: see upgrade.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pptpd/upgrade.h"
#include "proto/handover.h"

#define UPGRADE_DELETED    " (deleted)"
#define UPGRADE_ANSWER_MAX 32   /* bytes of --handover-version's answer */
#define UPGRADE_ARGS_MAX   64

int
upgrade_exe(char path[PATH_MAX])
{
	ssize_t n = readlink("/proc/self/exe", path, PATH_MAX - 1);
	size_t k = strlen(UPGRADE_DELETED);

	if (n <= 0)
		return -1;
	path[n] = '\0';
	if ((size_t)n > k && strcmp(path + n - k, UPGRADE_DELETED) == 0)
		path[n - k] = '\0';
	return 0;
}

/* Run `exe --handover-version`, its first line into buf. 0, or -1 with
 * err set. */
static int
upgrade_ask(const char *exe, char *buf, size_t len, char *err, size_t errlen)
{
	int p[2], st = 0;
	size_t got = 0;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "cannot ask %s: %s", exe, strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		execl(exe, exe, "--handover-version", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (pid > 0 && got < len - 1 &&
	    ((n = read(p[0], buf + got, len - 1 - got)) > 0 ||
	    (n < 0 && errno == EINTR)))
		got += n > 0 ? (size_t)n : 0;
	close(p[0]);
	buf[got] = '\0';
	if (pid < 0 || waitpid(pid, &st, 0) < 0) {
		snprintf(err, errlen, "cannot run %s: %s", exe, strerror(errno));
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(err, errlen, "installed pptpd %s cannot hand over (it "
		    "does not know --handover-version: a release before the "
		    "hand-over, or not pptpd)", exe);
		return -1;
	}
	return 0;
}

int
upgrade_check(const char *exe, char *err, size_t errlen)
{
	char buf[UPGRADE_ANSWER_MAX], *end;

	if (upgrade_ask(exe, buf, sizeof(buf), err, errlen) < 0)
		return -1;
	long v = strtol(buf, &end, 10);
	if (end == buf || (*end != '\n' && *end != '\0')) {
		snprintf(err, errlen, "installed pptpd %s answers no hand-over "
		    "version", exe);
		return -1;
	}
	if (v != HANDOVER_VERSION) {
		snprintf(err, errlen, "installed pptpd %s speaks hand-over %ld, "
		    "running speaks %d", exe, v, HANDOVER_VERSION);
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
upgrade_exec(const char *exe, char *const argv[], int journal,
    const struct handover_call *calls, size_t n, uint32_t generation)
{
	struct handover_head h = { .calls = (uint32_t)n,
		.generation = generation, .journal = journal };
	char *args[UPGRADE_ARGS_MAX + 3], num[16];
	size_t k = 0;
	int err, fd = memfd_create("pptpd-handover", MFD_CLOEXEC);

	if (fd < 0)
		return;
	if (handover_write(fd, &h, calls) < 0)
		goto fail;
	/* the arguments it was started with, without an earlier --resume */
	for (size_t i = 0; argv[i] != NULL && k < UPGRADE_ARGS_MAX; i++) {
		if (strcmp(argv[i], "--resume") == 0 && argv[i + 1] != NULL) {
			i++;
			continue;
		}
		args[k++] = argv[i];
	}
	snprintf(num, sizeof(num), "%d", fd);
	args[k++] = "--resume";
	args[k++] = num;
	args[k] = NULL;
	upgrade_keep(journal, fd, calls, n, 1);
	execv(exe, args);
	upgrade_keep(journal, fd, calls, n, 0);
fail:
	err = errno;
	close(fd);
	errno = err;
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
	return 0;
}
