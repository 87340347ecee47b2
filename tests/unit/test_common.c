/* common/: timer lists, the rate limiter, string cleaning, byte order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/byteorder.h"
#include "common/ratelimit.h"
#include "common/strclean.h"
#include "common/timer.h"

#define MANY 10000

static void
noop(void *arg)
{
	(void)arg;
}

/* Deadlines come out in order whatever order they went in, and a timer
 * deleted or re-armed is where its last arming put it. */
static void
test_timers_pop_in_order(void **state)
{
	static struct timer t[500];
	struct timers ts;
	uint64_t last = 0;
	unsigned n = 0, want = 0;
	struct timer *p;

	timers_init(&ts);
	srandom(7);
	for (size_t i = 0; i < 500; i++)
		timers_arm(&ts, &t[i], (uint64_t)random() % 1000,
		    (uint64_t)(random() % 40) * 250, noop, &t[i]);
	for (size_t i = 0; i < 500; i += 3)
		timer_del(&t[i]);
	for (size_t i = 1; i < 500; i += 7)
		timers_arm(&ts, &t[i], 5000, 10, noop, &t[i]);
	for (size_t i = 0; i < 500; i++)
		want += timer_armed(&t[i]);
	while ((p = timers_pop_due(&ts, UINT64_MAX - 1)) != NULL) {
		assert_false(timer_armed(p));   /* popped means disarmed */
		n++;
	}
	/* a third deleted, some of those armed again */
	assert_int_equal(want, 500 - 167 + 24);
	assert_int_equal(n, want);
	assert_int_equal(timers_next(&ts), 0);
	/* and again, checking the order through the deadlines */
	for (size_t i = 0; i < 500; i++)
		timers_arm(&ts, &t[i], 0, (uint64_t)(random() % 100000) + 1,
		    noop, &t[i]);
	for (;;) {
		uint64_t next = timers_next(&ts);
		if (next == 0)
			break;
		assert_true(next >= last);
		last = next;
		assert_non_null(timers_pop_due(&ts, next));
	}
}

/* The issue this module fixes: with a 60-s echo timer per connection, a
 * 100-ms timer (or a new connection's setup timer) must not walk past them
 * all. Counted in list steps, not timed. */
static void
test_timers_common_case_walks_nothing(void **state)
{
	static struct timer echo[MANY], setup[MANY], t;
	struct timers ts;
	unsigned walked = 0;

	timers_init(&ts);
	for (uint64_t i = 0; i < MANY; i++) {
		walked += timers_arm(&ts, &echo[i], i, 60000, noop, NULL);
		walked += timers_arm(&ts, &setup[i], i, 30000, noop, NULL);
	}
	walked += timers_arm(&ts, &t, MANY, 100, noop, NULL);
	/* re-arming an echo timer (every message a peer sends does) */
	walked += timers_arm(&ts, &echo[0], MANY + 1, 60000, noop, NULL);
	assert_int_equal(walked, 0);
	assert_int_equal(timers_next(&ts), MANY + 100);
	/* a plain list still sorts an out-of-order deadline correctly */
	struct timer_list l;
	timer_list_init(&l);
	for (uint64_t i = 0; i < 10; i++)
		timer_list_add(&l, &echo[i], 100 + i);
	assert_int_equal(timer_list_add(&l, &t, 50), 10);
	assert_ptr_equal(timer_list_first(&l), &t);
}

static void
test_timers_due(void **state)
{
	struct timer a = { 0 }, b = { 0 };
	struct timers ts;

	timers_init(&ts);
	timers_arm(&ts, &a, 1000, 50, noop, &a);
	timers_arm(&ts, &b, 1000, 0, noop, &b);
	assert_int_equal(timers_next(&ts), 1000);
	assert_ptr_equal(timers_pop_due(&ts, 1000), &b);
	assert_null(timers_pop_due(&ts, 1049));
	assert_ptr_equal(timers_pop_due(&ts, 1050), &a);
	assert_false(timer_armed(&a));
	timer_del(&a);             /* harmless when not armed */
}

static void
test_ratelimit(void **state)
{
	struct ratelimit rl = RATELIMIT_INIT(3, 1000);
	uint32_t sup;
	int allowed = 0;

	for (int i = 0; i < 10; i++) {
		allowed += ratelimit_allow(&rl, 5000, &sup);
		assert_int_equal(sup, 0);
	}
	assert_int_equal(allowed, 3);
	/* the next window reports the 7 held back */
	assert_true(ratelimit_allow(&rl, 6000, &sup));
	assert_int_equal(sup, 7);
	assert_true(ratelimit_allow(&rl, 6999, &sup));
	assert_int_equal(sup, 0);
}

static void
test_strclean(void **state)
{
	char out[64];
	const char evil[] = "bob\n12:00 pptpd notice: session start\x1b[2J";

	str_clean(out, sizeof(out), evil, sizeof(evil), 0);
	assert_null(strchr(out, '\n'));
	assert_null(strchr(out, '\x1b'));
	assert_string_equal(out, "bob?12:00 pptpd notice: session start?[2J");
	/* bounded: at most maxshow characters, then a marker */
	str_clean(out, sizeof(out), "abcdefghij", 10, 4);
	assert_string_equal(out, "abcd...");
	/* never past the buffer, stops at NUL and at srclen */
	str_clean(out, 5, "abcdefghij", 10, 0);
	assert_string_equal(out, "abcd");
	str_clean(out, sizeof(out), "ab\0cd", 5, 0);
	assert_string_equal(out, "ab");
	str_clean(out, sizeof(out), "abcd", 2, 0);
	assert_string_equal(out, "ab");
	/* a byte with the high bit set is not printable either */
	str_clean(out, sizeof(out), "caf\xc3\xa9", 5, 0);
	assert_string_equal(out, "caf??");
}

static void
test_byteorder(void **state)
{
	uint8_t b[6] = { 0 };

	be16_put(b, 0x880b);
	be32_put(b + 2, 0x1a2b3c4d);
	assert_int_equal(b[0], 0x88);
	assert_int_equal(b[1], 0x0b);
	assert_int_equal(b[2], 0x1a);
	assert_int_equal(b[5], 0x4d);
	assert_int_equal(be16_get(b), 0x880b);
	assert_int_equal(be32_get(b + 2), 0x1a2b3c4d);
	/* unaligned reads are fine */
	assert_int_equal(be16_get(b + 1), 0x0b1a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timers_pop_in_order),
		cmocka_unit_test(test_timers_common_case_walks_nothing),
		cmocka_unit_test(test_timers_due),
		cmocka_unit_test(test_ratelimit),
		cmocka_unit_test(test_strclean),
		cmocka_unit_test(test_byteorder),
	};
	return cmocka_run_group_tests_name("common", tests, NULL, NULL);
}
