/* proto/handover.c: what a monitor hands the binary it re-executes at an
 * upgrade, on a real memfd with real descriptors: read back as written;
 * another version, a short file, or a call naming a closed descriptor is
 * refused with its reason. And pptpd/upgrade.c's question to the
 * installed binary, asked of small scripts. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "pptpd/upgrade.h"
#include "proto/handover.h"
#include "proto/monitor.h"

/* A memfd far above the test's other descriptors: one the test closed
 * must stay closed (not come back as this). */
static int
memfd(void)
{
	int fd = memfd_create("test-handover", MFD_CLOEXEC);
	assert_true(fd >= 0);
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 500);
	assert_true(high >= 500);
	close(fd);
	return high;
}

/* Two calls on real descriptors: a kernel-path one, an engine one. */
static void
two_calls(struct handover_call c[2], int fds[4])
{
	for (int i = 0; i < 4; i++)
		assert_true((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) > 2);
	memset(c, 0, 2 * sizeof(*c));
	c[0] = (struct handover_call){ .id = 0x1234, .peer_id = 1,
		.flags = MON_CALL_KERNEL | HANDOVER_F_GUARDED, .pid = 4242,
		.conn = fds[0], .report = -1, .pty = -1, .client = 0x0100a8c0 };
	c[1] = (struct handover_call){ .id = 0x4321, .peer_id = 2,
		.flags = MON_CALL_REPORTS, .pid = 4243, .conn = fds[1],
		.report = fds[2], .pty = fds[3], .shaped = 7 };
}

static void
test_round_trip(void **state)
{
	struct handover_call c[2], *back = NULL;
	struct handover_head h = { .calls = 2, .generation = 3 }, got;
	int fds[4], fd = memfd();
	const char *why = NULL;

	two_calls(c, fds);
	h.journal = fds[0];
	assert_int_equal(handover_write(fd, &h, c), 0);
	assert_int_equal(handover_read(fd, &got, &back, &why), 0);
	assert_int_equal(got.calls, 2);
	assert_int_equal(got.generation, 3);
	assert_int_equal(got.journal, fds[0]);
	assert_memory_equal(back, c, sizeof(c));
	free(back);
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	close(fd);
}

/* Refused, with `reason`, after `edit` of the written bytes at `off`. */
static void
refused(const struct handover_head *h, const struct handover_call *c,
    size_t off, const void *edit, size_t len, const char *reason)
{
	struct handover_call *back = (void *)1;
	struct handover_head got;
	const char *why = NULL;
	int fd = memfd();

	assert_int_equal(handover_write(fd, h, c), 0);
	if (edit != NULL)
		assert_int_equal(pwrite(fd, edit, len, (off_t)off), (ssize_t)len);
	assert_int_equal(handover_read(fd, &got, &back, &why), -1);
	assert_null(back);
	assert_non_null(why);
	assert_string_equal(why, reason);
	close(fd);
}

static void
test_refused(void **state)
{
	struct handover_call c[2];
	struct handover_head h = { .calls = 2, .generation = 1 };
	int fds[4];
	const uint16_t other = HANDOVER_VERSION + 1;
	const uint32_t zero = 0, many = HANDOVER_CALLS_MAX + 1;

	two_calls(c, fds);
	h.journal = fds[0];
	refused(&h, c, offsetof(struct handover_head, version), &other,
	    sizeof(other), "a hand-over of another version");
	refused(&h, c, offsetof(struct handover_head, magic), &zero,
	    sizeof(zero), "not a hand-over (magic)");
	refused(&h, c, offsetof(struct handover_head, calls), &many,
	    sizeof(many), "a hand-over of another layout");
	/* a call short: the head says 3, 2 are there */
	const uint32_t three = 3;
	refused(&h, c, offsetof(struct handover_head, calls), &three,
	    sizeof(three), "the hand-over is short");
	/* a call without a pppd */
	c[1].pid = 0;
	refused(&h, c, 0, NULL, 0, "a call without a Call ID or a pppd");
	c[1].pid = 4243;
	/* an engine-path call without its pty */
	c[1].pty = -1;
	refused(&h, c, 0, NULL, 0, "an engine-path call without its pty");
	c[1].pty = fds[3];
	/* a descriptor closed by then */
	close(fds[2]);
	refused(&h, c, 0, NULL, 0, "a call's descriptor is not open");
	close(fds[3]);
	close(fds[1]);
	close(fds[0]);
	refused(&h, c, 0, NULL, 0, "the journal's descriptor is not open");
}

/* An installed "binary": a script with `body`, its path in path. */
static void
script(char path[64], const char *body)
{
	snprintf(path, 64, "/tmp/test-handover.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	dprintf(fd, "#!/bin/sh\n%s\n", body);
	fchmod(fd, 0700);
	close(fd);
}

/* upgrade_check of a script with `body`: its return, the error in err. */
static int
check_script(const char *body, char *err, size_t errlen)
{
	char path[64];
	char *const argv[] = { "pptpd", "-f", NULL };

	script(path, body);
	int bin, rc = upgrade_check(path, argv, "/etc/pptpd.conf", &bin, err,
	    errlen);
	unlink(path);
	assert_true(rc == 0 ? bin >= 0 : bin == -1);
	if (bin >= 0)
		close(bin);
	return rc;
}

static void
test_upgrade_check(void **state)
{
	char err[512], same[128];
	char *const argv[] = { "pptpd", "-f", NULL };

	/* asked with the arguments it would run with, -c absolute, last */
	snprintf(same, sizeof(same), "[ \"$*\" = \"-f -c /etc/pptpd.conf "
	    "--handover-version\" ] && echo %d", HANDOVER_VERSION);
	assert_int_equal(check_script(same, err, sizeof(err)), 0);
	assert_int_equal(check_script("echo 999", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "speaks hand-over 999, running speaks"));
	/* (a reason longer than a line of 80) */
	assert_int_equal(check_script("echo 'pptpd: /etc/pptpd.conf:3: unknown "
	    "key '\\''no-such-key'\\'' in a configuration file of a long "
	    "name' >&2; exit 2", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "refuses the configuration: pptpd: "
	    "/etc/pptpd.conf:3: unknown key 'no-such-key' in a configuration "
	    "file of a long name"));
	assert_int_equal(check_script("exit 1", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot hand over"));
	assert_int_equal(check_script("echo banana", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot hand over"));
	/* one that does not answer is not waited for */
	assert_int_equal(check_script("sleep 30", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "did not answer --handover-version"));
	int bin;
	assert_int_equal(upgrade_check("/nonexistent/pptpd", argv,
	    "/etc/pptpd.conf", &bin, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot hand over"));
}

/* What is executed is the file that was asked, even when a package has
 * put another at its path in between: a checked pptpd, not whatever
 * came after (that could be one that cannot take over). */
static void
test_upgrade_exec_runs_checked(void **state)
{
	char path[64], other[64], mark[] = "/tmp/test-handover-mark.XXXXXX";
	char body[256], got[32] = "";
	char *const argv[] = { "pptpd", NULL };
	int bin, st, journal = memfd();

	close(mkstemp(mark));
	snprintf(body, sizeof(body), "case \"$*\" in *--handover-version) "
	    "echo %d;; *) echo checked >%s;; esac", HANDOVER_VERSION, mark);
	script(path, body);
	snprintf(body, sizeof(body), "echo %d; echo replaced >%s",
	    HANDOVER_VERSION, mark);
	script(other, body);
	char err[512];
	assert_int_equal(upgrade_check(path, argv, "/etc/pptpd.conf", &bin,
	    err, sizeof(err)), 0);
	assert_int_equal(rename(other, path), 0);   /* as dpkg installs */
	pid_t pid = fork();
	if (pid == 0) {
		upgrade_exec(bin, argv, "/etc/pptpd.conf", journal, NULL, 0, 1);
		_exit(99);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	int fd = open(mark, O_RDONLY);
	assert_true(read(fd, got, sizeof(got) - 1) > 0);
	close(fd);
	assert_string_equal(got, "checked\n");
	close(bin);
	close(journal);
	unlink(path);
	unlink(mark);
	(void)state;
}

/* An ending call (an orphan) holds no descriptor and is handed over so;
 * one with a descriptor is refused. */
static void
test_orphan_handed_over(void **state)
{
	struct handover_call c[2], *back = NULL;
	struct handover_head h = { .calls = 2 }, got;
	int fds[4], fd = memfd();
	const char *why = NULL;

	two_calls(c, fds);
	h.journal = fds[0];
	c[1].flags |= HANDOVER_F_ORPHAN;
	c[1].conn = c[1].report = c[1].pty = -1;
	assert_int_equal(handover_write(fd, &h, c), 0);
	assert_int_equal(handover_read(fd, &got, &back, &why), 0);
	assert_int_equal(back[1].flags & HANDOVER_F_ORPHAN, HANDOVER_F_ORPHAN);
	free(back);
	close(fd);
	c[1].conn = fds[1];
	refused(&h, c, 0, NULL, 0, "an ending call with descriptors");
	for (int i = 0; i < 4; i++)
		close(fds[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_upgrade_check),
		cmocka_unit_test(test_upgrade_exec_runs_checked),
		cmocka_unit_test(test_orphan_handed_over),
	};
	return cmocka_run_group_tests_name("handover", tests, NULL, NULL);
}
