/* Unit tests for proto/seq.c: first packet, in-order, duplicates, stale,
 * reordering, gap expiry, jumps and resync, all repeated across the 2^32
 * wrap-around. Payloads carry their own sequence number so every delivery
 * can be checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proto/seq.h"

/* Start points: ordinary, and just before the wrap. */
static const uint32_t bases[] = { 0, 1, 1000, 0xffffffffu, 0xfffffff0u,
    0xffffffc0u, 0x7fffffffu, 0x80000000u };
#define NBASES (sizeof(bases) / sizeof(bases[0]))

static struct seq_rx rx;
static uint32_t out[100000];
static size_t nout;

static int setup(void **state)
{
	(void)state;
	seq_rx_init(&rx);
	nout = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	seq_rx_free(&rx);
	return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void drain(void)
{
	const struct seq_slot *s;

	while ((s = seq_rx_next(&rx)) != NULL) {
		assert_int_equal(s->len, 4);
		assert_int_equal(get32(s->data), s->seq);
		out[nout++] = s->seq;
	}
}

/* Feed one packet the way the engine does, recording deliveries. */
static enum seq_verdict feed_at(uint32_t seq, uint64_t now)
{
	uint8_t p[4];
	enum seq_verdict v;

	put32(p, seq);
	v = seq_rx_input(&rx, seq, p, sizeof(p), now);
	if (v == SEQ_DELIVER)
		out[nout++] = seq;
	drain();
	return v;
}

static enum seq_verdict feed(uint32_t seq)
{
	return feed_at(seq, 1000);
}

static void expect_out(const uint32_t *want, size_t n)
{
	assert_int_equal(nout, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(out[i], want[i]);
}

static void reset(void)
{
	seq_rx_free(&rx);
	seq_rx_init(&rx);
	nout = 0;
}

static void test_first_seq_any(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		reset();
		assert_int_equal(feed(bases[i]), SEQ_DELIVER);
		assert_int_equal(seq_rx_ack(&rx), bases[i]);
		assert_int_equal(rx.next, bases[i] + 1);
		assert_true(rx.ack_pending);
	}
}

static void test_in_order(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i];

		reset();
		for (uint32_t k = 0; k < 300; k++) {
			assert_int_equal(feed(b + k), SEQ_DELIVER);
			assert_int_equal(seq_rx_ack(&rx), b + k);
		}
		assert_int_equal(nout, 300);
		assert_int_equal(rx.delivered, 300);
		assert_int_equal(rx.lost + rx.duplicates + rx.stale + rx.too_far, 0);
		assert_int_equal(rx.storage, 0);
	}
}

static void test_duplicates(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i];

		reset();
		for (uint32_t k = 0; k < 100; k++)
			feed(b + k);
		assert_int_equal(feed(b + 99), SEQ_DUPLICATE);
		assert_int_equal(feed(b + 50), SEQ_DUPLICATE);
		assert_int_equal(feed(b + 36), SEQ_DUPLICATE);
		/* beyond the 64 remembered: still dropped, as stale */
		assert_int_equal(feed(b + 35), SEQ_STALE);
		/* the replayed first packet is not delivered again */
		assert_int_equal(feed(b), SEQ_STALE);
		assert_int_equal(nout, 100);
		assert_int_equal(rx.duplicates, 3);
		assert_int_equal(rx.stale, 2);
		assert_int_equal(rx.next, b + 100);
	}
}

static void test_reorder_swap(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i];
		const uint32_t want[] = { b, b + 1, b + 2, b + 3 };

		reset();
		assert_int_equal(feed(b), SEQ_DELIVER);
		assert_int_equal(feed(b + 2), SEQ_HELD);
		assert_int_equal(seq_rx_ack(&rx), b);
		assert_int_equal(feed(b + 1), SEQ_DELIVER);
		assert_int_equal(feed(b + 3), SEQ_DELIVER);
		expect_out(want, 4);
		assert_int_equal(rx.reordered, 1);
		assert_int_equal(rx.held, 0);
		assert_int_equal(rx.storage, 0);
		assert_int_equal(seq_rx_deadline(&rx), 0);
	}
}

static void test_reorder_reversed_block(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i];

		reset();
		feed(b);
		for (uint32_t k = SEQ_REORDER_SLOTS; k >= 2; k--)
			assert_int_equal(feed(b + k), SEQ_HELD);
		assert_int_equal(rx.held, SEQ_REORDER_SLOTS - 1);
		assert_int_equal(feed(b + 1), SEQ_DELIVER);
		assert_int_equal(nout, SEQ_REORDER_SLOTS + 1);
		for (uint32_t k = 0; k <= SEQ_REORDER_SLOTS; k++)
			assert_int_equal(out[k], b + k);
		assert_int_equal(rx.lost, 0);
	}
}

static void test_duplicate_of_held(void **state)
{
	(void)state;
	feed(10);
	assert_int_equal(feed(13), SEQ_HELD);
	assert_int_equal(feed(13), SEQ_DUPLICATE);
	assert_int_equal(rx.held, 1);
	assert_int_equal(rx.duplicates, 1);
}

static void test_window_edges(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i];

		reset();
		feed(b);
		/* offset SLOTS from next is the last one held */
		assert_int_equal(feed(b + 1 + SEQ_REORDER_SLOTS), SEQ_HELD);
		reset();
		feed(b);
		/* one further, with nothing held, is a jump to be confirmed */
		assert_int_equal(feed(b + 2 + SEQ_REORDER_SLOTS), SEQ_TOO_FAR);
		assert_int_equal(rx.next, b + 1);
	}
}

static void test_gap_expiry(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i];
		const uint32_t want[] = { b, b + 2, b + 3 };

		reset();
		feed_at(b, 0);
		assert_int_equal(feed_at(b + 2, 10), SEQ_HELD);
		assert_int_equal(feed_at(b + 3, 20), SEQ_HELD);
		assert_int_equal(seq_rx_deadline(&rx), 10 + SEQ_REORDER_TIMEOUT_MS);
		assert_int_equal(seq_rx_expire(&rx, 9 + SEQ_REORDER_TIMEOUT_MS), 0);
		assert_int_equal(seq_rx_expire(&rx, 10 + SEQ_REORDER_TIMEOUT_MS), 1);
		drain();
		expect_out(want, 3);
		assert_int_equal(rx.lost, 1);
		assert_int_equal(seq_rx_deadline(&rx), 0);
		assert_int_equal(rx.storage, 0);
		/* the lost packet arriving late is stale, not delivered */
		assert_int_equal(feed_at(b + 1, 70), SEQ_STALE);
		assert_int_equal(feed_at(b + 4, 70), SEQ_DELIVER);
	}
}

/* pptp --test-type 3 from a slow sender: 16 first, then 15..5 one by one,
 * each a little less than the timeout after the previous one. The gap keeps
 * filling, so nothing is given up and everything comes out in order. */
static void test_slow_reversed_burst_not_lost(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i], want[17];
		uint64_t t = 0;

		reset();
		for (uint32_t k = 0; k <= 4; k++)
			feed_at(b + k, t);
		assert_int_equal(feed_at(b + 16, t), SEQ_HELD);
		for (uint32_t k = 15; k >= 6; k--) {
			t += SEQ_REORDER_TIMEOUT_MS - 1;
			assert_int_equal(seq_rx_expire(&rx, t), 0);
			assert_int_equal(feed_at(b + k, t), SEQ_HELD);
		}
		t += SEQ_REORDER_TIMEOUT_MS - 1;
		assert_int_equal(seq_rx_expire(&rx, t), 0);
		assert_int_equal(feed_at(b + 5, t), SEQ_DELIVER);
		for (uint32_t k = 0; k <= 16; k++)
			want[k] = b + k;
		expect_out(want, 17);
		assert_int_equal(rx.lost, 0);
	}
}

/* A real loss: only packets above the highest held keep coming, and the
 * gap is given up on time whatever they do. */
static void test_loss_not_extended_by_later_packets(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i];

		reset();
		feed_at(b, 0);
		assert_int_equal(feed_at(b + 2, 0), SEQ_HELD);
		for (uint32_t k = 3; k < 10; k++)
			assert_int_equal(feed_at(b + k, k * 5), SEQ_HELD);
		assert_int_equal(seq_rx_deadline(&rx), SEQ_REORDER_TIMEOUT_MS);
		assert_int_equal(seq_rx_expire(&rx, SEQ_REORDER_TIMEOUT_MS), 1);
		drain();
		assert_int_equal(rx.lost, 1);
		assert_int_equal(nout, 9);
	}
}

static void test_gap_expiry_two_gaps(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i];
		const uint32_t want[] = { b, b + 2, b + 5 };

		reset();
		feed_at(b, 0);
		feed_at(b + 5, 30);
		feed_at(b + 2, 40);
		/* 2 filled part of the gap at 40: the wait restarted there */
		assert_int_equal(seq_rx_deadline(&rx), 40 + SEQ_REORDER_TIMEOUT_MS);
		assert_int_equal(seq_rx_expire(&rx, 39 + SEQ_REORDER_TIMEOUT_MS), 0);
		while (seq_rx_expire(&rx, 40 + SEQ_REORDER_TIMEOUT_MS))
			drain();
		expect_out(want, 3);
		assert_int_equal(rx.lost, 3);
		assert_int_equal(rx.held, 0);
	}
}

static void test_gap_expiry_one_at_a_time(void **state)
{
	(void)state;
	feed_at(0, 0);
	feed_at(2, 0);
	feed_at(5, 40);
	assert_int_equal(seq_rx_expire(&rx, SEQ_REORDER_TIMEOUT_MS), 1);
	drain();
	assert_int_equal(nout, 2);
	/* the gap before 5 has its own deadline */
	assert_int_equal(seq_rx_deadline(&rx), 40 + SEQ_REORDER_TIMEOUT_MS);
	assert_int_equal(seq_rx_expire(&rx, SEQ_REORDER_TIMEOUT_MS), 0);
	assert_int_equal(seq_rx_expire(&rx, 40 + SEQ_REORDER_TIMEOUT_MS), 1);
	drain();
	assert_int_equal(nout, 3);
	assert_int_equal(out[2], 5);
}

static void test_buffer_full_gives_up_gap(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i];

		reset();
		feed(b);
		for (uint32_t k = 2; k <= SEQ_REORDER_SLOTS + 1; k++)
			assert_int_equal(feed(b + k), SEQ_HELD);
		assert_int_equal(rx.held, SEQ_REORDER_SLOTS);
		/* the stream goes on past a full buffer: gap 1 is given up */
		feed(b + SEQ_REORDER_SLOTS + 2);
		assert_int_equal(nout, SEQ_REORDER_SLOTS + 2);
		assert_int_equal(out[1], b + 2);
		for (size_t k = 1; k < nout; k++)
			assert_int_equal(out[k], (uint32_t)(b + 1 + k));
		assert_int_equal(rx.lost, 1);
		assert_int_equal(rx.next, b + SEQ_REORDER_SLOTS + 3);
		assert_int_equal(feed(b + SEQ_REORDER_SLOTS + 3), SEQ_DELIVER);
	}
}

static void test_burst_loss_jump_confirmed(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i];

		reset();
		for (uint32_t k = 0; k < 10; k++)
			feed(b + k);
		/* the outage lasted long enough for the stream to be quiet */
		assert_int_equal(feed_at(b + 200, 1000 + SEQ_QUIET_MS), SEQ_TOO_FAR);
		assert_int_equal(feed_at(b + 201, 1000 + SEQ_QUIET_MS), SEQ_DELIVER);
		assert_int_equal(feed_at(b + 202, 1000 + SEQ_QUIET_MS), SEQ_DELIVER);
		assert_int_equal(nout, 12);
		assert_int_equal(rx.lost, 191);
		assert_int_equal(rx.resyncs, 1);
		/* the packet that started the jump is now stale */
		assert_int_equal(feed(b + 200), SEQ_STALE);
	}
}

static void test_single_forged_jump_ignored(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i];

		reset();
		for (uint32_t k = 0; k < 10; k++)
			feed(b + k);
		assert_int_equal(feed(b + 3000), SEQ_TOO_FAR);
		assert_int_equal(feed(b + 10), SEQ_DELIVER);
		/* a second forged packet later does not confirm the first */
		assert_int_equal(feed(b + 3001), SEQ_TOO_FAR);
		assert_int_equal(feed(b + 11), SEQ_DELIVER);
		assert_int_equal(feed(b + SEQ_JUMP_MAX + 100), SEQ_TOO_FAR);
		assert_int_equal(feed(b + 12), SEQ_DELIVER);
		assert_int_equal(rx.next, b + 13);
		assert_int_equal(rx.too_far, 3);
		assert_int_equal(rx.resyncs, 0);
	}
}

static void test_jump_with_held_flushes_in_order(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i];
		const uint32_t want[] = { b, b + 2, b + 3, b + 501, b + 502 };

		reset();
		feed(b);
		assert_int_equal(feed(b + 2), SEQ_HELD);
		assert_int_equal(feed(b + 3), SEQ_HELD);
		/* (no gap timer run: the engine would have given them up) */
		assert_int_equal(feed_at(b + 500, 1000 + SEQ_QUIET_MS), SEQ_TOO_FAR);
		assert_int_equal(feed_at(b + 501, 1000 + SEQ_QUIET_MS), SEQ_HELD);
		assert_int_equal(feed_at(b + 502, 1000 + SEQ_QUIET_MS), SEQ_DELIVER);
		expect_out(want, 5);
		assert_int_equal(rx.lost, 498);
		assert_int_equal(rx.held, 0);
		assert_int_equal(rx.storage, 0);
	}
}

static void test_far_resync_forward(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i], far = b + 100000;

		reset();
		feed(b);
		for (uint32_t k = 0; k < SEQ_RESYNC_COUNT - 1; k++)
			assert_int_equal(feed_at(far + k, 1000 + SEQ_QUIET_MS),
			    SEQ_TOO_FAR);
		assert_int_equal(feed_at(far + SEQ_RESYNC_COUNT - 1,
		    1000 + SEQ_QUIET_MS), SEQ_DELIVER);
		assert_int_equal(rx.next, far + SEQ_RESYNC_COUNT);
		assert_int_equal(feed_at(far + SEQ_RESYNC_COUNT, 1000 + SEQ_QUIET_MS),
		    SEQ_DELIVER);
		assert_int_equal(rx.lost, 0); /* unknowable: not counted */
	}
}

static void test_far_resync_backward(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i], back = b - 100000;

		reset();
		feed(b);
		for (uint32_t k = 0; k < SEQ_RESYNC_COUNT - 1; k++)
			assert_int_equal(feed_at(back + k * 2, 1000 + SEQ_QUIET_MS),
			    SEQ_TOO_FAR);
		assert_int_equal(feed_at(back + (SEQ_RESYNC_COUNT - 1) * 2,
		    1000 + SEQ_QUIET_MS), SEQ_DELIVER);
		assert_int_equal(rx.next, back + (SEQ_RESYNC_COUNT - 1) * 2 + 1);
	}
}

static void test_far_run_broken_by_in_order(void **state)
{
	(void)state;
	feed(0);
	for (uint32_t k = 0; k < SEQ_RESYNC_COUNT - 1; k++)
		feed(1000000 + k);
	feed(1);
	for (uint32_t k = SEQ_RESYNC_COUNT - 1; k < 2 * SEQ_RESYNC_COUNT - 2; k++)
		assert_int_equal(feed(1000000 + k), SEQ_TOO_FAR);
	assert_int_equal(rx.next, 2);
}

static void test_far_run_must_be_consecutive(void **state)
{
	(void)state;
	feed(0);
	/* packets scattered far away never agree with each other */
	for (uint32_t k = 0; k < 50; k++)
		assert_int_equal(feed(1000000 + k * 1000), SEQ_TOO_FAR);
	assert_int_equal(rx.next, 1);
}

static void test_late_band_no_resync_while_flowing(void **state)
{
	(void)state;
	for (uint32_t k = 0; k < 5000; k++)
		feed(k);
	for (uint32_t k = 1000; k < 1100; k++)
		assert_int_equal(feed(k), SEQ_STALE);
	assert_int_equal(rx.next, 5000);
	assert_int_equal(rx.resyncs, 0);
}

/* The real stream at 10 packets/s; returns the time of its packet k. */
#define REAL_GAP_MS 100
static uint64_t real_at(uint32_t k)
{
	return 1000 + (uint64_t)k * REAL_GAP_MS;
}

/* A burst of forged numbers just ahead of the real stream (from the
 * client's own address: indistinguishable, so delivered) takes the real
 * stream's next numbers. The real stream, arriving behind `next` from then
 * on, must be delivered again within 1 s of the burst, in order, and stay
 * delivered. `gap`: the forger misses the next number by one, so its burst
 * is held and given up to by the gap timer. */
static void forged_burst_then_real(uint32_t b, int gap)
{
	const uint32_t burst = 32, first_after = 10;
	uint64_t t_burst = real_at(first_after) - 50, back_by = t_burst + 1000;
	int back = 0;

	reset();
	for (uint32_t k = 0; k < first_after; k++)
		assert_int_equal(feed_at(b + k, real_at(k)), SEQ_DELIVER);
	for (uint32_t k = gap; k < burst; k++)
		feed_at(b + first_after + k, t_burst);
	if (gap) {
		assert_int_equal(seq_rx_expire(&rx,
		    t_burst + SEQ_REORDER_TIMEOUT_MS), 1);
		drain();
	}
	assert_int_equal(rx.next, b + first_after + burst);
	for (uint32_t k = first_after; k < first_after + 3 * burst; k++) {
		uint64_t t = real_at(k);
		enum seq_verdict v = feed_at(b + k, t);

		if (v == SEQ_DELIVER && !back) {
			back = 1;
			assert_true(t <= back_by);
		}
		if (t >= back_by)
			assert_int_equal(v, SEQ_DELIVER);
	}
	assert_true(back);
	assert_int_equal(rx.next, b + first_after + 3 * burst);
	assert_int_equal(rx.held, 0);
}

static void test_forged_window_burst_real_back_within_1s(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		forged_burst_then_real(bases[i], 0);
		forged_burst_then_real(bases[i], 1);
	}
}

/* After such a recovery, a replay of the numbers that were delivered twice
 * (forged, then real) cannot have them delivered a third time, however
 * quiet the stream. */
static void test_back_resync_floor_stops_replay(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i];
		uint64_t t;

		forged_burst_then_real(b, 0);
		assert_int_equal(rx.resyncs, 1);
		t = real_at(200);
		for (uint32_t k = 15; k < 40; k++)
			assert_int_not_equal(feed_at(b + k, t + k), SEQ_DELIVER);
		assert_int_equal(rx.next, b + 106);
		assert_int_equal(rx.resyncs, 1);
		/* the stream goes on as before */
		assert_int_equal(feed_at(b + 106, t + 100), SEQ_DELIVER);
	}
}

/* While the real stream flows in order, a replay of its own recent
 * numbers, in order, is never believed. */
static void test_replay_while_flowing_never_believed(void **state)
{
	(void)state;
	for (uint32_t k = 0; k < 100; k++) {
		assert_int_equal(feed_at(k, real_at(k)), SEQ_DELIVER);
		if (k >= 20)
			for (uint32_t r = 0; r < 4; r++)
				assert_int_not_equal(feed_at(k - 20 + r,
				    real_at(k) + 50), SEQ_DELIVER);
	}
	assert_int_equal(rx.next, 100);
	assert_int_equal(rx.resyncs, 0);
}

/* Off path: the right Call ID but not the numbers. Runs of consecutive
 * far-off numbers, longer than SEQ_RESYNC_COUNT, and of jump numbers, sent
 * between the packets of a flowing real stream, never move `next`. */
static void test_far_and_jump_runs_while_flowing(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i], far = b + 0x40000000u, jump = b + 1000;

		reset();
		for (uint32_t k = 0; k < 50; k++) {
			uint64_t t = real_at(k);

			assert_int_equal(feed_at(b + k, t), SEQ_DELIVER);
			for (uint32_t j = 0; j < 2 * SEQ_RESYNC_COUNT; j++)
				assert_int_equal(feed_at(far++, t + 1), SEQ_TOO_FAR);
			for (uint32_t j = 0; j < 4; j++)
				assert_int_equal(feed_at(jump++, t + 2), SEQ_TOO_FAR);
		}
		assert_int_equal(rx.next, b + 50);
		assert_int_equal(rx.resyncs, 0);
		assert_int_equal(nout, 50);
	}
}

/* A real outage: the stream stops, and comes back far away. The run is
 * believed as soon as nothing has been delivered for SEQ_QUIET_MS, not
 * before, however many packets agree. */
static void test_far_run_believed_once_quiet(void **state)
{
	(void)state;
	for (size_t i = 0; i < NBASES; i++) {
		uint32_t b = bases[i], far = b + 0x40000000u;
		uint64_t last = real_at(9), t = last + 100;
		uint32_t k = 0;

		reset();
		for (uint32_t j = 0; j < 10; j++)
			feed_at(b + j, real_at(j));
		for (; t < last + SEQ_QUIET_MS; t += 20, k++)
			assert_int_equal(feed_at(far + k, t), SEQ_TOO_FAR);
		assert_true(k > SEQ_RESYNC_COUNT);
		assert_int_equal(feed_at(far + k, t), SEQ_DELIVER);
		assert_int_equal(feed_at(far + k + 1, t + 20), SEQ_DELIVER);
		assert_int_equal(rx.next, far + k + 2);
		/* a burst loss (jump) likewise */
		last = t + 20;
		for (t = last + 10, k = 0; t < last + SEQ_QUIET_MS; t += 20, k++)
			assert_int_equal(feed_at(rx.next + 500 + k, t), SEQ_TOO_FAR);
		assert_int_equal(feed_at(rx.next + 500 + k, t), SEQ_DELIVER);
	}
}

/* Issue 19, item 8: with the gate on, a far-off run is believed only on
 * a packet whose ack agrees; a wrong ack starts the run over. Jumps are
 * not gated. */
static void test_far_run_gated_on_acks(void **state)
{
	uint64_t t = 1000 + SEQ_QUIET_MS;
	uint32_t far = 0x40000000u, k;

	(void)state;
	reset();
	seq_rx_gate_on_acks(&rx);
	feed(0);
	seq_rx_ack_verdict(&rx, SEQ_ACK_NONE);
	for (k = 0; k < 4 * SEQ_RESYNC_COUNT; k++)
		assert_int_equal(feed_at(far + k, t), SEQ_TOO_FAR);
	/* a wrong guess at our numbers: the run starts over */
	seq_rx_ack_verdict(&rx, SEQ_ACK_WRONG);
	assert_int_equal(feed_at(far + k++, t), SEQ_TOO_FAR);
	seq_rx_ack_verdict(&rx, SEQ_ACK_AGREES);
	for (uint32_t j = 0; j < SEQ_RESYNC_COUNT - 1; j++)
		assert_int_equal(feed_at(far + k++, t), SEQ_TOO_FAR);
	assert_int_equal(feed_at(far + k, t), SEQ_DELIVER);
	assert_int_equal(rx.next, far + k + 1);
	/* a burst loss after quiet needs no ack */
	seq_rx_ack_verdict(&rx, SEQ_ACK_NONE);
	t += 2 * SEQ_QUIET_MS;
	assert_int_equal(feed_at(rx.next + 500, t), SEQ_TOO_FAR);
	assert_int_equal(feed_at(rx.next + 501, t), SEQ_DELIVER);
}

static void test_no_room(void **state)
{
	uint8_t big[SEQ_SLOT_BYTES + 1] = { 0 };

	(void)state;
	feed(0);
	assert_int_equal(seq_rx_input(&rx, 2, big, sizeof(big), 0), SEQ_NO_ROOM);
	assert_null(seq_rx_next(&rx));
	/* in order, size is the caller's business */
	assert_int_equal(seq_rx_input(&rx, 1, big, sizeof(big), 0), SEQ_DELIVER);
	assert_int_equal(rx.no_room, 1);
}

static void test_storage_is_lazy(void **state)
{
	(void)state;
	assert_int_equal(rx.storage, 0);
	feed(0);
	feed(1);
	assert_int_equal(rx.storage, 0);
	feed(3);
	feed(4);
	assert_int_equal(rx.storage, 2);
	feed(2);
	assert_int_equal(rx.storage, 0);
	for (size_t i = 0; i < SEQ_REORDER_SLOTS; i++)
		assert_null(rx.slot[i].data);
}

/* Reorder buffers come from the engine's pool and go back to it: a second
 * episode takes no memory from malloc, an idle call holds none, and the
 * pool keeps no more than its cap. */
static void test_storage_pool(void **state)
{
	struct seq_pool pool;
	struct seq_rx rx2;
	uint8_t *first, *second, *got;

	(void)state;
	seq_pool_init(&pool, 3);
	seq_rx_set_pool(&rx, &pool);
	feed(0);
	feed(2);
	feed(3);
	assert_int_equal(rx.storage, 2);
	assert_int_equal(pool.mallocs, 2);
	first = rx.slot[2 % SEQ_REORDER_SLOTS].data;
	second = rx.slot[3 % SEQ_REORDER_SLOTS].data;
	feed(1);
	assert_int_equal(rx.storage, 0);
	assert_int_equal(pool.idle, 2);
	/* another call's episode reuses them */
	seq_rx_init(&rx2);
	seq_rx_set_pool(&rx2, &pool);
	assert_int_equal(seq_rx_input(&rx2, 10, (const uint8_t *)"abcd", 4, 0),
	    SEQ_DELIVER);
	assert_int_equal(seq_rx_input(&rx2, 12, (const uint8_t *)"efgh", 4, 0),
	    SEQ_HELD);
	assert_int_equal(pool.mallocs, 2);
	assert_int_equal(pool.idle, 1);
	got = rx2.slot[12 % SEQ_REORDER_SLOTS].data;
	assert_true(got == first || got == second);
	seq_rx_free(&rx2);
	assert_int_equal(pool.idle, 2);
	/* more than the cap held: the excess is freed when given back */
	for (uint32_t s = 6; s < 12; s++)
		feed(s);
	assert_int_equal(rx.storage, 6);
	assert_int_equal(pool.mallocs, 6);
	feed(4);
	feed(5);
	assert_int_equal(rx.storage, 0);
	assert_int_equal(pool.idle, 3);
	seq_pool_drain(&pool);
	assert_int_equal(pool.idle, 0);
	assert_null(pool.free_list);
	seq_rx_set_pool(&rx, NULL);
}

static void test_seq_before_wraps(void **state)
{
	(void)state;
	assert_true(seq_before(0xffffffffu, 0));
	assert_false(seq_before(0, 0xffffffffu));
	assert_true(seq_before(0x7ffffff0u, 0x80000010u));
	assert_true(seq_before(0xfffffff0u, 0x10));
	assert_false(seq_before(5, 5));
}

static void test_wrap_reorder_and_duplicates(void **state)
{
	const uint32_t want[] = { 0xfffffffdu, 0xfffffffeu, 0xffffffffu, 0, 1, 2 };

	(void)state;
	feed(0xfffffffdu);
	assert_int_equal(feed(0xffffffffu), SEQ_HELD);
	assert_int_equal(feed(1), SEQ_HELD);
	assert_int_equal(feed(0xfffffffeu), SEQ_DELIVER);
	assert_int_equal(feed(0), SEQ_DELIVER);
	assert_int_equal(feed(2), SEQ_DELIVER);
	expect_out(want, 6);
	assert_int_equal(seq_rx_ack(&rx), 2);
	assert_int_equal(feed(0xffffffffu), SEQ_DUPLICATE);
	assert_int_equal(feed(0xfffffffdu), SEQ_DUPLICATE);
	assert_int_equal(feed(0xfffff100u), SEQ_STALE);
	/* half the space away is far, not late */
	assert_int_equal(feed(0x80000002u), SEQ_TOO_FAR);
}

static void test_wrap_gap_expiry(void **state)
{
	(void)state;
	feed_at(0xfffffffeu, 0);
	assert_int_equal(feed_at(1, 5), SEQ_HELD); /* 0xffffffff and 0 missing */
	assert_int_equal(seq_rx_expire(&rx, 5 + SEQ_REORDER_TIMEOUT_MS), 1);
	drain();
	assert_int_equal(nout, 2);
	assert_int_equal(out[1], 1);
	assert_int_equal(rx.lost, 2);
	assert_int_equal(feed_at(0, 60), SEQ_STALE);
}

/* A network with loss, bounded reordering and duplication: whatever comes
 * out must be strictly increasing, unique and intact. */
static void test_random_network(void **state)
{
	(void)state;
	for (size_t bi = 0; bi < NBASES; bi++) {
		uint32_t b = bases[bi];
		unsigned seed = 42 + (unsigned)bi;
		static uint32_t sent[20000];
		size_t n = 20000;
		uint64_t now = 0;

		reset();
		for (size_t i = 0; i < n; i++)
			sent[i] = b + (uint32_t)i;
		/* local shuffles of depth < 16 */
		for (size_t i = 0; i + 16 < n; i += 1 + (size_t)rand_r(&seed) % 40) {
			size_t j = i + (size_t)rand_r(&seed) % 16;
			uint32_t t = sent[i];
			sent[i] = sent[j];
			sent[j] = t;
		}
		for (size_t i = 0; i < n; i++) {
			int r = rand_r(&seed) % 100;

			now += (uint64_t)(rand_r(&seed) % 3);
			if (r < 3)
				continue;               /* lost */
			feed_at(sent[i], now);
			if (r > 97)
				feed_at(sent[i], now);  /* duplicated */
			while (seq_rx_expire(&rx, now))
				drain();
		}
		now += SEQ_REORDER_TIMEOUT_MS;
		while (seq_rx_expire(&rx, now))
			drain();
		assert_int_equal(rx.held, 0);
		for (size_t i = 1; i < nout; i++)
			assert_true(seq_before(out[i - 1], out[i]));
		assert_true(nout > n * 9 / 10);
		assert_int_equal(rx.delivered, nout);
		assert_int_equal(rx.storage, 0);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_first_seq_any),
		T(test_in_order),
		T(test_duplicates),
		T(test_reorder_swap),
		T(test_reorder_reversed_block),
		T(test_duplicate_of_held),
		T(test_window_edges),
		T(test_gap_expiry),
		T(test_slow_reversed_burst_not_lost),
		T(test_loss_not_extended_by_later_packets),
		T(test_gap_expiry_two_gaps),
		T(test_gap_expiry_one_at_a_time),
		T(test_buffer_full_gives_up_gap),
		T(test_burst_loss_jump_confirmed),
		T(test_single_forged_jump_ignored),
		T(test_jump_with_held_flushes_in_order),
		T(test_far_resync_forward),
		T(test_far_resync_backward),
		T(test_far_run_broken_by_in_order),
		T(test_far_run_must_be_consecutive),
		T(test_late_band_no_resync_while_flowing),
		T(test_forged_window_burst_real_back_within_1s),
		T(test_back_resync_floor_stops_replay),
		T(test_replay_while_flowing_never_believed),
		T(test_far_and_jump_runs_while_flowing),
		T(test_far_run_believed_once_quiet),
		T(test_far_run_gated_on_acks),
		T(test_no_room),
		T(test_storage_is_lazy),
		T(test_storage_pool),
		T(test_seq_before_wraps),
		T(test_wrap_reorder_and_duplicates),
		T(test_wrap_gap_expiry),
		T(test_random_network),
	};

	return cmocka_run_group_tests_name("seq", tests, NULL, NULL);
}
