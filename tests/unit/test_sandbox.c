/* pptpd/sandbox.c: the worker's seccomp allow-list, in a child of the
 * test (the daemon has no test hook): a call the list does not hold, or
 * a socket family it does not allow, kills the process with SIGSYS; what
 * the worker does goes on working. */
#include <fcntl.h>
#include <netdb.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <cmocka.h>
#include "pptpd/sandbox.h"

enum try { TRY_UDP, TRY_UNIX, TRY_NETLINK, TRY_PACKET, TRY_EXECVE,
	TRY_OPEN_STATUS, TRY_QSORT, TRY_RESOLVE };

static int
cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Status of a child that entered the sandbox and tried `what`: exit 0
 * when it worked, a signal when it was killed. */
static int
sandboxed(enum try what)
{
	pid_t kid = fork();
	int st;
	char err[256];

	assert_true(kid >= 0);
	if (kid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    sandbox_enter(err, sizeof(err)) < 0)
			_exit(3);
		int fd = -1;
		switch (what) {
		case TRY_UDP: fd = socket(AF_INET, SOCK_DGRAM, 0); break;
		case TRY_UNIX: fd = socket(AF_UNIX, SOCK_SEQPACKET, 0); break;
		/* nftables' (the monitor's, never the worker's) */
		case TRY_NETLINK: fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER); break;
		case TRY_PACKET: fd = socket(AF_PACKET, SOCK_RAW, 0); break;
		case TRY_EXECVE:
			execl("/bin/true", "true", (char *)NULL);
			_exit(4);
		case TRY_QSORT: {
			/* glibc asks sysinfo once it sorts a kilobyte: a
			 * reload's pool or peers file */
			static int v[4096];
			for (int i = 0; i < 4096; i++)
				v[i] = 4096 - i;
			qsort(v, 4096, sizeof(v[0]), cmp_int);
			_exit(v[0] == 1 ? 0 : 7);
		}
		case TRY_RESOLVE: {
			/* AI_ADDRCONFIG reads the host's addresses over
			 * NETLINK_ROUTE, as sorting two answers does: a RADIUS
			 * server's name at a reload */
			struct addrinfo h = { .ai_family = AF_UNSPEC,
				.ai_flags = AI_ADDRCONFIG }, *res = NULL;
			int rc = getaddrinfo("127.0.0.1", NULL, &h, &res);
			if (res != NULL)
				freeaddrinfo(res);
			_exit(rc == 0 ? 0 : 8);
		}
		case TRY_OPEN_STATUS: {
			char buf[4096] = "";
			fd = open("/proc/self/status", O_RDONLY);
			ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
			/* seccomp filter mode */
			_exit(n > 0 && strstr(buf, "\nSeccomp:\t2\n") != NULL ? 0 : 5);
		}
		}
		_exit(fd >= 0 ? 0 : 6);
	}
	assert_int_equal(waitpid(kid, &st, 0), kid);
	return st;
}

static void
test_worker_calls_work(void **state)
{
	int st = sandboxed(TRY_UDP);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = sandboxed(TRY_UNIX);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = sandboxed(TRY_OPEN_STATUS);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = sandboxed(TRY_QSORT);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = sandboxed(TRY_RESOLVE);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void
test_outside_the_list_killed(void **state)
{
	const enum try bad[] = { TRY_NETLINK, TRY_PACKET, TRY_EXECVE };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int st = sandboxed(bad[i]);
		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), SIGSYS);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worker_calls_work),
		cmocka_unit_test(test_outside_the_list_killed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
