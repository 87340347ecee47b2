/* pptpd/drop.c's one call as another user (drop_euid_begin/_end): root's
 * rights and the dumpable flag come back after it; as the user already,
 * it changes nothing and makes no call the worker's seccomp list lacks.
 * In children: the test's own credentials stay as they are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "pptpd/drop.h"
#include "pptpd/sandbox.h"

#define OTHER_UID 65534   /* nobody's: any uid but root's */

/* Exit status of a child running `fn`, or 100 + the signal that ended it. */
static int
in_child(int (*fn)(void))
{
	pid_t kid = fork();
	int st;

	assert_true(kid >= 0);
	if (kid == 0)
		_exit(fn());
	assert_int_equal(waitpid(kid, &st, 0), kid);
	return WIFSIGNALED(st) ? 100 + WTERMSIG(st) : WEXITSTATUS(st);
}

static int
as_other_and_back(void)
{
	struct drop_euid saved;

	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		return 1;
	if (drop_euid_begin(OTHER_UID, &saved) < 0)
		return 2;
	if (geteuid() != OTHER_UID || getuid() != 0)
		return 3;
	drop_euid_end(&saved);
	if (geteuid() != 0)
		return 4;
	/* The kernel cleared it at the change (fs.suid_dumpable 0, the
	 * default): a monitor that crashed after would leave no core. */
	if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 1)
		return 5;
	return 0;
}

static void
test_root_comes_back_dumpable(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();   /* counted as skipped, not passed */
	assert_int_equal(in_child(as_other_and_back), 0);
}

/* The worker binds a moved listener through the same call: as itself,
 * under its filter, which has neither prctl nor seteuid. */
static int
as_self_in_sandbox(void)
{
	struct drop_euid saved;
	char err[256];

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    sandbox_enter(err, sizeof(err)) < 0)
		return 1;
	if (drop_euid_begin(geteuid(), &saved) < 0)
		return 2;
	drop_euid_end(&saved);
	return 0;
}

static void
test_self_changes_nothing(void **state)
{
	(void)state;
	assert_int_equal(in_child(as_self_in_sandbox), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_comes_back_dumpable),
		cmocka_unit_test(test_self_changes_nothing),
	};
	return cmocka_run_group_tests_name("drop", tests, NULL, NULL);
}
