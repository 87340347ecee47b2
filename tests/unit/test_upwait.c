/* ctl/upwait.c: which process is the monitor behind the control socket,
 * when the process that listens on it is a worker that has not dropped
 * root yet (root, the same file, the monitor's child). The test process
 * plays the monitor; a forked child listens and answers `status`, then
 * opens the socket anew, as the server after an exec does. */
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctl/talk.h"
#include "ctl/upwait.h"

#define ANSWER "ok\nversion:     pptpd 9.9.9\n"

static char sock_path[108];

static int
listen_at(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	unlink(path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    listen(fd, 8) < 0)
		_exit(90);
	return fd;
}

/* The stand-in worker: answers the first connection's request, then
 * opens the socket anew (another inode) and answers `status` for ever. */
static void
worker(int ready)
{
	int fd = listen_at(sock_path), c;
	char buf[64];
	if (write(ready, "x", 1) != 1)
		_exit(91);
	for (int first = 1;; first = 0) {
		if ((c = accept(fd, NULL, NULL)) < 0)
			_exit(92);
		if (read(c, buf, sizeof(buf)) <= 0 ||
		    write(c, ANSWER, strlen(ANSWER)) < 0)
			_exit(93);
		close(c);
		if (first) {
			close(fd);
			fd = listen_at(sock_path);
		}
	}
}

/* A root child running the same file is taken for a worker: the
 * monitor is its parent, this process. */
static void
test_monitor_is_the_root_workers_parent(void **state)
{
	int p[2];
	char c, out[PATH_MAX + 64], line[512] = "";
	size_t len;

	snprintf(sock_path, sizeof(sock_path), "/tmp/test-upwait.%d", (int)getpid());
	assert_int_equal(pipe(p), 0);
	pid_t w = fork();
	assert_true(w >= 0);
	if (w == 0) {
		close(p[0]);
		worker(p[1]);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	int fd = talk_connect(sock_path, 0);
	assert_true(fd >= 0);
	struct upwait *uw = upwait_new(fd, sock_path);
	assert_non_null(uw);
	char *ans = talk_exchange(fd, "upgrade\n", 8, &len, TALK_TIMEOUT_MS, 0);
	assert_non_null(ans);
	free(ans);
	close(fd);
	snprintf(out, sizeof(out), "%s.out", sock_path);
	fflush(stdout);
	int saved = dup(STDOUT_FILENO);
	FILE *f = freopen(out, "w", stdout);
	assert_non_null(f);
	int rc = upwait_run(uw);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	upwait_free(uw);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	f = fopen(out, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	unlink(out);
	unlink(sock_path);
	assert_int_equal(rc, 0);
	char want[64];
	snprintf(want, sizeof(want), "), pid %d\n", (int)getpid());
	assert_non_null(strstr(line, "taken over: pptpd 9.9.9 ("));
	assert_non_null(strstr(line, want));
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monitor_is_the_root_workers_parent),
	};
	return cmocka_run_group_tests_name("upwait", tests, NULL, NULL);
}
