/* proto/journal.c: the journal a worker leaves for the next one. On a
 * real memfd, mapped twice as two workers would (one writes, the other
 * reads after it), and with records a hostile worker could have left. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "proto/journal.h"

static int fd = -1;
static void *map;

static int
setup(void **state)
{
	fd = memfd_create("test-journal", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)journal_size()), 0);
	map = mmap(NULL, journal_size(), PROT_READ | PROT_WRITE, MAP_SHARED,
	    fd, 0);
	assert_true(map != MAP_FAILED);
	journal_init(map);
	return 0;
}

static int
teardown(void **state)
{
	munmap(map, journal_size());
	close(fd);
	return 0;
}

static struct journal_rec
live(uint16_t id)
{
	struct journal_rec r;
	memset(&r, 0, sizeof(r));
	r.state = JOURNAL_LIVE;
	r.call_id = id;
	r.peer_call_id = 7;
	r.flags = JOURNAL_F_KERNEL;
	r.up_ms = 1000;
	r.pid = 4242;
	snprintf(r.user, sizeof(r.user), "alice");
	snprintf(r.mppe, sizeof(r.mppe), "128");
	snprintf(r.ifname, sizeof(r.ifname), "ppp3");
	return r;
}

/* What one process writes, another mapping of the memfd reads: the
 * next worker's view, after the first is gone. */
static void
test_written_then_read_by_another_mapping(void **state)
{
	const char *why = NULL;
	pid_t pid = fork();
	if (pid == 0) {
		struct journal_rec r = live(0xbeef);
		journal_rec_set(map, &r);
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	void *again = mmap(NULL, journal_size(), PROT_READ, MAP_SHARED, fd, 0);
	assert_true(again != MAP_FAILED);
	assert_int_equal(journal_check(again, journal_size(), &why), 0);
	const struct journal_rec *r = journal_rec(again, 0xbeef);
	assert_int_equal(journal_rec_check(r, 0xbeef, &why), 0);
	assert_string_equal(r->user, "alice");
	assert_int_equal(r->pid, 4242);
	/* another Call ID's record is untouched */
	assert_int_equal(journal_rec_check(journal_rec(again, 0xbeee), 0xbeee,
	    &why), -1);
	assert_string_equal(why, "no live record");
	munmap(again, journal_size());
}

/* Facts change, the call ends: each write replaces the record whole. */
static void
test_update_and_clear(void **state)
{
	const char *why = NULL;
	struct journal_rec r = live(9);
	journal_rec_set(map, &r);
	snprintf(r.user, sizeof(r.user), "bob");
	r.rate_down = 1000000;
	journal_rec_set(map, &r);
	assert_string_equal(journal_rec(map, 9)->user, "bob");
	assert_int_equal(journal_rec(map, 9)->rate_down, 1000000);
	journal_rec_clear(map, 9);
	assert_int_equal(journal_rec_check(journal_rec(map, 9), 9, &why), -1);
	assert_string_equal(why, "no live record");
}

/* A worker killed while it wrote leaves the record before, whole: here
 * the write is stopped after the copy, before the switch (what
 * journal_rec_set does in that order). */
static void
test_killed_mid_write_leaves_the_last_whole(void **state)
{
	const char *why = NULL;
	struct journal_rec r = live(11);
	journal_rec_set(map, &r);
	struct journal_entry *e = (struct journal_entry *)
	    ((char *)map + sizeof(struct journal_head)) + 11;
	/* half of a new record in the slot that is not current */
	memset(&e->rec[e->current == 1 ? 0 : 1], 'x', sizeof(r) / 2);
	const struct journal_rec *now = journal_rec(map, 11);
	assert_int_equal(journal_rec_check(now, 11, &why), 0);
	assert_string_equal(now->user, "alice");
}

/* What a hostile worker could leave is refused, with the reason. */
static void
test_bad_records_refused(void **state)
{
	const char *why = NULL;
	struct journal_rec r = live(5);

	r.call_id = 6;
	journal_rec_set(map, &r);   /* lands at 6, read as 5's below */
	assert_int_equal(journal_rec_check(journal_rec(map, 6), 5, &why), -1);
	assert_string_equal(why, "the record is another call's");

	r = live(5);
	r.flags |= 0x80;
	assert_int_equal(journal_rec_check(&r, 5, &why), -1);
	assert_string_equal(why, "a flag not defined");
	r = live(5);
	r.pid = 0;
	assert_int_equal(journal_rec_check(&r, 5, &why), -1);
	assert_string_equal(why, "no pppd in the record");
	r = live(5);
	memset(r.user, 'a', sizeof(r.user));   /* no NUL */
	assert_int_equal(journal_rec_check(&r, 5, &why), -1);
	assert_string_equal(why, "a name not ended, or not printable");
	r = live(5);
	r.acct_session_id[0] = '\n';
	assert_int_equal(journal_rec_check(&r, 5, &why), -1);
	assert_string_equal(why, "a name not ended, or not printable");
	r = live(5);
	snprintf(r.ifname, sizeof(r.ifname), "../etc");
	assert_int_equal(journal_rec_check(&r, 5, &why), -1);
	assert_string_equal(why, "an interface name not ended, or not one");
	r = live(5);
	assert_int_equal(journal_rec_check(&r, 5, &why), 0);

	/* an index out of range reads record 0 (then judged as any), never
	 * past the entry */
	journal_rec_set(map, &r);
	struct journal_entry *e = (struct journal_entry *)
	    ((char *)map + sizeof(struct journal_head)) + 5;
	e->current = 0xffffffffU;
	assert_ptr_equal(journal_rec(map, 5), &e->rec[0]);
}

/* A head that is not this version's is refused, so a record of another
 * layout is never read. */
static void
test_head_checked(void **state)
{
	const char *why = NULL;
	struct journal_head *h = map;
	assert_int_equal(journal_check(map, journal_size(), &why), 0);
	assert_int_equal(journal_check(map, journal_size() - 1, &why), -1);
	assert_string_equal(why, "the journal is shorter than its layout");
	h->version++;
	assert_int_equal(journal_check(map, journal_size(), &why), -1);
	assert_string_equal(why, "a journal of another version");
	h->version--;
	h->rec_size++;
	assert_int_equal(journal_check(map, journal_size(), &why), -1);
	assert_string_equal(why, "a journal of another layout");
	h->rec_size--;
	h->magic = 0;
	assert_int_equal(journal_check(map, journal_size(), &why), -1);
	assert_string_equal(why, "not a journal (magic)");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_written_then_read_by_another_mapping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_and_clear, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_killed_mid_write_leaves_the_last_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_records_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_head_checked, setup,
		    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
