/* Unit tests for the kernel path's GRE guard's rules (pptpd/kguard-rule.h),
 * the same code the eBPF program runs, compiled for the host: each attack
 * of tests/attack on the sequence numbers, replayed against one call's
 * state, at several start points across the 2^32 wrap-around. What the
 * kernel is shown must always be newer than what it took before (it drops
 * anything else), and forged numbers must not move the guard while the
 * real stream flows. The VM run of tests/attack (PPTPD_ATTACK_DATAPATH=
 * kernel) is the proof on a real kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "pptpd/kguard-rule.h"

static const uint32_t bases[] = { 0, 1, 1000, 0xffffffffu, 0xfffffff0u,
    0xffffffc0u, 0x7fffffffu, 0x80000000u };
#define NBASES (sizeof(bases) / sizeof(bases[0]))

#define MS 1000000ULL

static struct kguard_state st;
static uint64_t now;
static uint32_t kernel_last;   /* what the kernel took last */
static int kernel_has;

static void
start(uint32_t base)
{
	memset(&st, 0, sizeof(st));
	now = 1000 * MS;
	kernel_has = 0;
	(void)base;
}

/* One packet: 1 if passed. What is passed must be newer for the kernel. */
static int
pkt(uint32_t seq)
{
	uint32_t k;
	if (kguard_rule_seq(&st, seq, now, &k) != KGUARD_PASS)
		return 0;
	if (kernel_has)
		assert_true((int32_t)(k - kernel_last) > 0);
	kernel_last = k;
	kernel_has = 1;
	return 1;
}

/* The real stream: n packets from `from`, 10 ms apart. Passed count. */
static int
stream(uint32_t from, int n)
{
	int passed = 0;
	for (int i = 0; i < n; i++) {
		now += 10 * MS;
		passed += pkt(from + (uint32_t)i);
	}
	return passed;
}

static void
test_in_order_and_loss(void **state)
{
	(void)state;
	for (size_t b = 0; b < NBASES; b++) {
		start(bases[b]);
		assert_int_equal(stream(bases[b], 100), 100);
		/* Loss within the window: the next number is taken at once. */
		assert_int_equal(stream(bases[b] + 100 + 63, 10), 10);
		assert_int_equal(st.offset, 0);
	}
}

/* Far-off and jumping numbers while the stream flows: all dropped, the
 * real stream untouched (issue 19 item 9: one such packet killed the
 * session on the unguarded kernel path). */
static void
test_far_and_jumps_flowing(void **state)
{
	(void)state;
	static const int64_t off[] = { 65, 200, 4096, 4097, 100000, 1000000,
	    0x7fffffff, -100000, -4097 };
	for (size_t b = 0; b < NBASES; b++) {
		uint32_t s = bases[b];
		start(s);
		assert_int_equal(stream(s, 10), 10);
		s += 10;
		for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
			/* A run of 16 consecutive forged numbers between two real
			 * packets. */
			for (int k = 0; k < 16; k++)
				assert_int_equal(pkt(s - 1 + (uint32_t)off[i] +
				    (uint32_t)k), 0);
			assert_int_equal(stream(s, 5), 5);
			s += 5;
		}
		assert_int_equal(st.offset, 0);
	}
}

/* Replays (numbers behind the stream): dropped while it flows, and never
 * believed then. */
static void
test_replay_flowing(void **state)
{
	(void)state;
	for (size_t b = 0; b < NBASES; b++) {
		uint32_t s = bases[b];
		start(s);
		assert_int_equal(stream(s, 50), 50);
		s += 50;
		for (int i = 0; i < 100; i++) {
			now += 5 * MS;
			assert_int_equal(pkt(s - 1 - (uint32_t)(i % 20)), 0);
			if (i % 10 == 9) {
				assert_int_equal(stream(s, 1), 1);
				s++;
			}
		}
		assert_int_equal(st.resyncs, 0);
	}
}

/* A forged burst just ahead of the real stream is taken (PPTP cannot tell
 * it from the real one); the real stream, then behind, is believed again
 * once the guard has passed nothing for the quiet time, and the kernel is
 * shown it as newer. Bound: back within QUIET plus two packets. */
static void
test_forged_burst_recovers(void **state)
{
	(void)state;
	for (size_t b = 0; b < NBASES; b++) {
		uint32_t s = bases[b];
		start(s);
		assert_int_equal(stream(s, 20), 20);
		s += 20;
		for (int r = 0; r < 3; r++) {
			for (uint32_t k = 0; k < 32; k++)
				assert_int_equal(pkt(s + k), 1);
			/* The real stream at 100 ms per packet (the suite's ping):
			 * lost until QUIET has passed, then back for good. */
			int lost = 0, back = 0;
			for (int i = 0; i < 30; i++) {
				now += 100 * MS;
				if (pkt(s + (uint32_t)i))
					back++;
				else if (back == 0)
					lost++;
				else
					fail_msg("lost after coming back");
			}
			assert_true(lost <= (int)(KGUARD_QUIET_NS / (100 * MS)) + 2);
			assert_int_equal(back + lost, 30);
			s += 30;
		}
		assert_int_equal(st.resyncs, 3);
	}
}

/* An idle call: a jump within JUMP_MAX needs RUN_JUMP packets in a row,
 * far off RUN_FAR: the real stream back after a long outage. */
static void
test_idle_runs(void **state)
{
	(void)state;
	for (size_t b = 0; b < NBASES; b++) {
		uint32_t s = bases[b];
		start(s);
		assert_int_equal(stream(s, 10), 10);
		s += 10;
		now += KGUARD_QUIET_NS;
		assert_int_equal(pkt(s + 1000), 0);
		assert_int_equal(pkt(s + 1001), 1);   /* RUN_JUMP = 2 */
		s += 1002;
		now += KGUARD_QUIET_NS;
		for (uint32_t k = 0; k < KGUARD_RUN_FAR - 1; k++)
			assert_int_equal(pkt(s + 1000000 + k), 0);
		assert_int_equal(pkt(s + 1000000 + KGUARD_RUN_FAR - 1), 1);
		/* Numbers that do not follow each other are no run. */
		s += 1000000 + KGUARD_RUN_FAR;
		now += KGUARD_QUIET_NS;
		for (uint32_t k = 0; k < 20; k++)
			assert_int_equal(pkt(s + 5000 + k * 1000), 0);
	}
}

/* A backward resync never goes back before the last one's origin: a
 * replay gets nothing delivered a third time. */
static void
test_floor(void **state)
{
	(void)state;
	for (size_t b = 0; b < NBASES; b++) {
		uint32_t s = bases[b];
		start(s);
		assert_int_equal(stream(s, 10), 10);
		for (uint32_t k = 0; k < 32; k++)
			assert_int_equal(pkt(s + 10 + k), 1);   /* forged */
		now += KGUARD_QUIET_NS;
		assert_int_equal(pkt(s + 10), 0);
		assert_int_equal(pkt(s + 11), 1);          /* real, back */
		assert_int_equal(stream(s + 12, 5), 5);
		now += KGUARD_QUIET_NS;
		/* Replayed numbers from before the forged burst's top. */
		assert_int_equal(pkt(s + 12), 0);
		assert_int_equal(pkt(s + 13), 0);
		assert_int_equal(pkt(s + 14), 0);
		assert_int_equal(st.resyncs, 1);
		/* A far-off run is a new stream (a client back after a long
		 * outage, renumbered): the floor does not hold it back, and
		 * the kernel is still shown newer numbers. */
		for (uint32_t k = 0; k < KGUARD_RUN_FAR - 1; k++)
			assert_int_equal(pkt(s - 100000 + k), 0);
		assert_int_equal(pkt(s - 100000 + KGUARD_RUN_FAR - 1), 1);
		assert_int_equal(st.have_floor, 0);
		assert_int_equal(stream(s - 100000 + KGUARD_RUN_FAR, 5), 5);
		assert_int_equal(st.resyncs, 2);
	}
}

static void
test_length(void **state)
{
	(void)state;
	/* IPv4 20, GRE with seq and ack 16, payload 12. */
	assert_true(kguard_rule_length(48, 20, 16, 12, 1));
	assert_false(kguard_rule_length(48, 20, 16, 11, 1));   /* short */
	assert_false(kguard_rule_length(48, 20, 16, 13, 1));   /* past the end */
	assert_false(kguard_rule_length(48, 20, 16, 4000, 1));
	assert_false(kguard_rule_length(30, 20, 12, 0, 0));    /* no room */
	assert_true(kguard_rule_length(32, 20, 12, 0, 0));     /* ack only */
	assert_false(kguard_rule_length(36, 20, 16, 0, 1));    /* seq, no payload */
	assert_false(kguard_rule_length(36, 20, 12, 4, 0));    /* payload, no seq */
	assert_true(kguard_rule_length(60, 24, 12, 24, 1));    /* IP options */
	/* A first fragment: the S bit alone. */
	assert_true(kguard_rule_length(0, 20, 16, 1400, 1));
	assert_false(kguard_rule_length(0, 20, 16, 0, 1));
}

static void
test_flags(void **state)
{
	(void)state;
	assert_true(kguard_rule_flags(0x30, 0x81));    /* K S, A v1 */
	assert_true(kguard_rule_flags(0x20, 0x81));    /* ack only */
	assert_false(kguard_rule_flags(0x10, 0x81));   /* no K */
	assert_false(kguard_rule_flags(0xb0, 0x81));   /* C R */
	assert_false(kguard_rule_flags(0x31, 0x01));   /* recursion */
	assert_false(kguard_rule_flags(0x38, 0x01));   /* s */
	assert_false(kguard_rule_flags(0x30, 0x09));   /* reserved flags */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order_and_loss),
		cmocka_unit_test(test_far_and_jumps_flowing),
		cmocka_unit_test(test_replay_flowing),
		cmocka_unit_test(test_forged_burst_recovers),
		cmocka_unit_test(test_idle_runs),
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_length),
		cmocka_unit_test(test_flags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
