/* Unit tests for pptp-load's stream accounting (client/acct.c,
 * client/stream.c) and the datagrams it builds (client/probe.c,
 * client/ipudp.c): lost, out-of-order and duplicated packets counted as a
 * person would count them, percentiles, rate parsing, and a whole echo
 * stream through a lossy, reordering, duplicating "network". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <arpa/inet.h>

#include "client/acct.h"
#include "client/ipudp.h"
#include "client/probe.h"
#include "client/stream.h"

static struct acct a;

static void feed(const uint64_t *seq, size_t n)
{
	acct_init(&a);
	for (size_t i = 0; i < n; i++)
		acct_input(&a, seq[i], 0, 0);
}

static void in_order_nothing_lost(void **state)
{
	(void)state;
	static const uint64_t s[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	feed(s, 10);
	assert_int_equal(a.received, 10);
	assert_int_equal(a.reordered, 0);
	assert_int_equal(a.duplicates, 0);
	assert_int_equal(acct_lost(&a, 10), 0);
}

static void lost_counted(void **state)
{
	(void)state;
	/* 3 and 7 never come; 10 sent, 8 arrived */
	static const uint64_t s[] = { 0, 1, 2, 4, 5, 6, 8, 9 };
	feed(s, 8);
	assert_int_equal(a.received, 8);
	assert_int_equal(a.reordered, 0);
	assert_int_equal(acct_lost(&a, 10), 2);
	/* the sender's count unknown: numbers up to the highest seen */
	assert_int_equal(acct_lost(&a, 0), 2);
	/* the last two lost as well */
	assert_int_equal(acct_lost(&a, 12), 4);
}

static void reordered_not_lost(void **state)
{
	(void)state;
	/* 2 arrives after 3 and 4: one out of order, none lost */
	static const uint64_t s[] = { 0, 1, 3, 4, 2, 5 };
	feed(s, 6);
	assert_int_equal(a.received, 6);
	assert_int_equal(a.reordered, 1);
	assert_int_equal(a.duplicates, 0);
	assert_int_equal(acct_lost(&a, 6), 0);
}

static void duplicates_counted_once(void **state)
{
	(void)state;
	static const uint64_t s[] = { 0, 1, 1, 2, 0, 3, 3, 3 };
	feed(s, 8);
	assert_int_equal(a.received, 4);
	assert_int_equal(a.duplicates, 4);
	assert_int_equal(a.reordered, 0);
	assert_int_equal(acct_lost(&a, 4), 0);
	/* a late packet that is also a duplicate of a late one */
	static const uint64_t t[] = { 0, 2, 1, 1 };
	feed(t, 4);
	assert_int_equal(a.reordered, 1);
	assert_int_equal(a.duplicates, 1);
}

static void window_edges(void **state)
{
	(void)state;
	/* a jump of more than the window, then late packets on both sides
	 * of the window's edge */
	acct_init(&a);
	acct_input(&a, 0, 0, 0);
	acct_input(&a, 5000, 0, 0);
	assert_int_equal(acct_input(&a, 5000 - ACCT_WINDOW + 1, 0, 0),
	    ACCT_REORDERED);
	assert_int_equal(acct_input(&a, 5000 - ACCT_WINDOW, 0, 0), ACCT_STALE);
	assert_int_equal(acct_input(&a, 0, 0, 0), ACCT_STALE);
	assert_int_equal(a.received, 3);
	assert_int_equal(acct_lost(&a, 5001), 5001 - 3);
	/* shifts by every amount keep each bit where it belongs */
	for (uint64_t step = 1; step < 200; step += 13) {
		acct_init(&a);
		for (uint64_t s = 0; s < 3000; s += step)
			assert_int_equal(acct_input(&a, s, 0, 0), ACCT_NEW);
		for (uint64_t s = 3000 - ACCT_WINDOW + 64; s < 3000; s++) {
			int was = (s % step) == 0;
			uint64_t max = a.max_seq;
			enum acct_verdict v = acct_input(&a, s, 0, 0);
			if (s > max)
				continue;
			assert_int_equal(v, was ? ACCT_DUPLICATE : ACCT_REORDERED);
		}
	}
}

static void jitter(void **state)
{
	(void)state;
	/* constant transit: no jitter, whatever the clocks' offset */
	acct_init(&a);
	for (uint64_t i = 0; i < 100; i++)
		acct_input(&a, i, 1000000 * i, 5000000000ull + 1000000 * i + 300);
	assert_int_equal(acct_jitter_ns(&a), 0);
	/* transit alternating by 1 ms: jitter converges toward 1 ms */
	acct_init(&a);
	for (uint64_t i = 0; i < 1000; i++)
		acct_input(&a, i, 1000000 * i,
		    1000000 * i + (i % 2 ? 1000000 : 0));
	assert_in_range(acct_jitter_ns(&a), 900000, 1000000);
}

static void histogram(void **state)
{
	(void)state;
	static struct hist h;
	hist_init(&h);
	assert_int_equal(hist_pct(&h, 50), 0);
	for (uint64_t v = 1; v <= 1000; v++)
		hist_add(&h, v);
	/* within the 1/16 resolution of the true percentiles */
	assert_in_range(hist_pct(&h, 50), 500, 500 + 500 / 16 + 1);
	assert_in_range(hist_pct(&h, 99), 990, 1000);
	assert_int_equal(hist_pct(&h, 100), 1000);
	assert_int_equal(h.max, 1000);
	/* small values are exact */
	hist_init(&h);
	hist_add(&h, 3);
	hist_add(&h, 7);
	assert_int_equal(hist_pct(&h, 50), 3);
	assert_int_equal(hist_pct(&h, 99), 7);
	/* huge values do not overflow the table */
	hist_add(&h, UINT64_MAX);
	assert_int_equal(hist_pct(&h, 100), UINT64_MAX);
}

static void spec_parse(void **state)
{
	(void)state;
	struct stream_spec s;
	const char *why;
	assert_int_equal(stream_spec_parse("1200,1M,10,echo", &s, &why), 0);
	assert_int_equal(s.dir, STREAM_ECHO);
	assert_int_equal(s.size, 1200);
	/* 1e6 bit/s over (1200 + 28) * 8 bit per datagram */
	assert_int_equal(s.mpps, 101792);
	assert_int_equal(s.duration_ms, 10000);
	assert_int_equal(stream_spec_parse("100,50pps,500ms,up", &s, &why), 0);
	assert_int_equal(s.mpps, 50000);
	assert_int_equal(s.duration_ms, 500);
	assert_int_equal(s.dir, STREAM_UP);
	assert_int_equal(stream_spec_parse("64,32k,2.5,down", &s, &why), 0);
	assert_int_equal(s.dir, STREAM_DOWN);
	/* a down stream is whole packets/s: 42.6 is asked as 43 */
	assert_int_equal(s.mpps, 43000);
	assert_int_equal(s.duration_ms, 2500);
	/* one datagram every 5 s */
	assert_int_equal(stream_spec_parse("100,0.2pps,60,echo", &s, &why), 0);
	assert_int_equal(s.mpps, 200);
	assert_int_equal(stream_spec_parse("100,0.2pps,60,down", &s, &why), -1);
	assert_int_equal(stream_spec_parse("10,1M,10,echo", &s, &why), -1);
	assert_int_equal(stream_spec_parse("1200,1X,10,echo", &s, &why), -1);
	assert_int_equal(stream_spec_parse("1200,1M,10,sideways", &s, &why), -1);
	assert_int_equal(stream_spec_parse("1200,1M,10", &s, &why), -1);
	assert_int_equal(stream_spec_parse("1200,1M,10,up,x", &s, &why), -1);
	assert_int_equal(stream_spec_parse("1200,1M,0,up", &s, &why), -1);
}

static void datagrams(void **state)
{
	(void)state;
	uint8_t pl[PROBE_MAX_LEN], dg[IPUDP_HDR_LEN + PROBE_MAX_LEN];
	struct probe p = { .type = PROBE_DATA, .mode = PROBE_MODE_ECHO,
		.stream = 0x01020304, .seq = 0x1122334455667788ull,
		.ts_ns = 42 }, q;
	size_t n = probe_encode(&p, pl, sizeof(pl), 200);
	assert_int_equal(n, 200);
	struct ipudp u = { .sport = 40000, .dport = 9000, .payload = pl,
		.len = n }, v;
	u.src.s_addr = htonl(0xc6130a0a);
	u.dst.s_addr = htonl(0xc6130001);
	size_t m = ipudp_build(dg, &u);
	assert_int_equal(m, 228);
	assert_int_equal(ipudp_parse(dg, m, &v), 0);
	assert_int_equal(v.sport, 40000);
	assert_int_equal(v.dport, 9000);
	assert_int_equal(v.src.s_addr, u.src.s_addr);
	assert_int_equal(v.len, 200);
	assert_int_equal(probe_decode(v.payload, v.len, &q), 0);
	assert_int_equal(q.seq, p.seq);
	assert_int_equal(q.stream, p.stream);
	/* a flipped bit fails the UDP checksum */
	dg[100] ^= 1;
	assert_int_equal(ipudp_parse(dg, m, &v), -1);
	dg[100] ^= 1;
	/* short, or not a probe */
	assert_int_equal(ipudp_parse(dg, 27, &v), -1);
	assert_int_equal(probe_decode(pl, PROBE_HDR_LEN - 1, &q), -1);
	pl[0] ^= 0xff;
	assert_int_equal(probe_decode(pl, n, &q), -1);
}

/* A network between the stream and an echo service: drop every 10th,
 * swap pairs at every 7th, duplicate every 13th. */
static struct probe held;
static int have_held;
static unsigned pkt, dups_made;
static struct stream st;
static uint64_t clock_now_ns;

static void arrive(const uint8_t *b, size_t n)
{
	struct probe p;
	assert_int_equal(probe_decode(b, n, &p), 0);
	assert_int_equal(n, 100);
	clock_now_ns += 1000000;    /* 1 ms RTT */
	stream_input(&st, &p, clock_now_ns);
	clock_now_ns -= 1000000;
}

static int net_send(void *arg, const uint8_t *b, size_t n)
{
	(void)arg;
	pkt++;
	struct probe p;
	assert_int_equal(probe_decode(b, n, &p), 0);
	if (pkt % 10 == 0)
		return 0;
	if (pkt % 7 == 0 && !have_held) {
		held = p;
		have_held = 1;
		return 0;
	}
	arrive(b, n);
	if (pkt % 13 == 0) {
		arrive(b, n);
		dups_made++;
	}
	if (have_held) {
		uint8_t hb[PROBE_MAX_LEN];
		size_t hn = probe_encode(&held, hb, sizeof(hb), 100);
		have_held = 0;
		arrive(hb, hn);
	}
	return 0;
}

/* pptp-echo's answer to a path check (STREAM_CHECKING). */
static void path_answers(struct stream *s)
{
	struct probe rep = { .type = PROBE_REPORT, .stream = s->id };
	stream_input(s, &rep, 0);
}

/* Up and echo streams count nothing until the path has answered: what is
 * sent before the server's side of IPCP is up is not the tunnel's loss. */
static unsigned checks, datas;
static int check_send(void *arg, const uint8_t *b, size_t n)
{
	struct probe p;
	(void)arg;
	assert_int_equal(probe_decode(b, n, &p), 0);
	if (p.type == PROBE_REPORT_REQ)
		checks++;
	else if (p.type == PROBE_DATA)
		datas++;
	return 0;
}

static void streams_wait_for_the_path(void **state)
{
	(void)state;
	struct stream_spec spec = { .dir = STREAM_ECHO, .size = 64, .mpps = 10000,
		.duration_ms = 1000 };
	uint64_t now = 100, next;

	stream_init(&st, &spec, 3, NULL);
	stream_start(&st, now);
	checks = datas = 0;
	while (checks < 3) {
		next = stream_tick(&st, now, now * 1000000, check_send, NULL);
		now = next > now ? next : now;
	}
	assert_int_equal(datas, 0);
	/* checks every STREAM_CHECK_MS: the next one is due at the 4th step */
	assert_int_equal(now, 100 + 3 * STREAM_CHECK_MS);
	path_answers(&st);
	while ((next = stream_tick(&st, now, now * 1000000, check_send, NULL)))
		now = next > now ? next : now;
	assert_int_equal(checks, 3);
	assert_int_equal(datas, 10);
	/* a path that never answers: the stream starts anyway after
	 * STREAM_RETRIES checks, and what it loses is counted */
	stream_init(&st, &spec, 4, NULL);
	now = 100;
	stream_start(&st, now);
	checks = datas = 0;
	while ((next = stream_tick(&st, now, now * 1000000, check_send, NULL)))
		now = next > now ? next : now;
	assert_int_equal(checks, STREAM_RETRIES);
	assert_int_equal(datas, 10);
	struct stream_result r;
	stream_result(&st, &r);
	assert_int_equal(r.sent, 10);
	assert_int_equal(r.lost, 10);
}

static void echo_stream_through_bad_network(void **state)
{
	(void)state;
	static struct hist rtt;
	struct stream_spec spec = { .dir = STREAM_ECHO, .size = 100,
		.mpps = 100000, .duration_ms = 10000 };
	struct stream_result r;

	hist_init(&rtt);
	stream_init(&st, &spec, 7, &rtt);
	stream_start(&st, 1000);
	path_answers(&st);
	uint64_t now = 1000, next;
	while ((next = stream_tick(&st, now, now * 1000000, net_send, NULL))) {
		if (next > now)
			now = next;
		clock_now_ns = now * 1000000;
	}
	stream_result(&st, &r);
	/* 1000 sent at 100/s over 10 s; every 10th dropped */
	assert_int_equal(r.sent, 1000);
	assert_int_equal(r.lost, 100);
	assert_int_equal(r.received, 900);
	/* every held packet arrives one late: out of order, not lost */
	assert_true(r.reordered > 50);
	/* the 13ths that were neither dropped nor held */
	assert_in_range(dups_made, 50, 76);
	assert_int_equal(r.duplicates, dups_made);
	assert_int_equal(rtt.count, 900);
	assert_in_range(hist_pct(&rtt, 50), 1000, 1000 + 1000 / 16);
	/* it paced itself: the last packet went at about 10 s */
	assert_in_range(now, 1000 + 9980 + STREAM_GRACE_MS,
	    1000 + 10000 + STREAM_GRACE_MS);
	assert_true(stream_done(&st));
}

/* An up stream asks for the sink's report until it comes. */
static unsigned report_reqs;
static int up_send(void *arg, const uint8_t *b, size_t n)
{
	struct probe p;
	(void)arg;
	assert_int_equal(probe_decode(b, n, &p), 0);
	if (p.type == PROBE_REPORT_REQ)
		report_reqs++;
	return 0;
}

static void up_stream_report(void **state)
{
	(void)state;
	struct stream_spec spec = { .dir = STREAM_UP, .size = 64, .mpps = 10000,
		.duration_ms = 1000 };
	struct stream_result r;
	stream_init(&st, &spec, 1, NULL);
	stream_start(&st, 10);
	path_answers(&st);
	uint64_t now = 10, next;
	report_reqs = 0;
	while ((next = stream_tick(&st, now, 0, up_send, NULL))) {
		now = next > now ? next : now;
		if (report_reqs == 2) {
			struct probe rep = { .type = PROBE_REPORT, .stream = 1,
				.received = 8, .reordered = 1, .duplicates = 2,
				.max_seq = 9 };
			stream_input(&st, &rep, 0);
		}
	}
	stream_result(&st, &r);
	assert_int_equal(report_reqs, 2);
	assert_int_equal(r.sent, 10);
	assert_int_equal(r.received, 8);
	assert_int_equal(r.lost, 2);
	assert_int_equal(r.reordered, 1);
	assert_int_equal(r.duplicates, 2);
	/* no report at all: asked STREAM_RETRIES times, then given up */
	stream_init(&st, &spec, 1, NULL);
	stream_start(&st, 10);
	path_answers(&st);
	now = 10;
	report_reqs = 0;
	while ((next = stream_tick(&st, now, 0, up_send, NULL)))
		now = next > now ? next : now;
	assert_int_equal(report_reqs, STREAM_RETRIES);
	assert_true(stream_done(&st));
}

static uint64_t slow_sent_at[8];
static unsigned slow_n;
static uint64_t slow_now;

static int slow_send(void *arg, const uint8_t *b, size_t n)
{
	struct probe p;
	(void)arg;
	assert_int_equal(probe_decode(b, n, &p), 0);
	if (p.type == PROBE_DATA && slow_n < 8)
		slow_sent_at[slow_n++] = slow_now;
	return 0;
}

/* 0.2 pps for 20 s: four datagrams, 5 s apart (a rate below one packet a
 * second, as thousands of sessions sharing a fixed total have). */
static void slow_rate_spacing(void **state)
{
	(void)state;
	struct stream_spec spec;
	const char *why;
	assert_int_equal(stream_spec_parse("100,0.2pps,20,up", &spec, &why), 0);
	stream_init(&st, &spec, 1, NULL);
	stream_start(&st, 1000);
	path_answers(&st);
	uint64_t next;
	unsigned ticks = 0;
	slow_now = 1000;
	slow_n = 0;
	while ((next = stream_tick(&st, slow_now, 0, slow_send, NULL)) &&
	    ticks++ < 1000)
		slow_now = next > slow_now ? next : slow_now;
	assert_int_equal(slow_n, 4);
	for (unsigned i = 1; i < slow_n; i++)
		assert_int_equal(slow_sent_at[i] - slow_sent_at[i - 1], 5000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(in_order_nothing_lost),
		cmocka_unit_test(slow_rate_spacing),
		cmocka_unit_test(lost_counted),
		cmocka_unit_test(reordered_not_lost),
		cmocka_unit_test(duplicates_counted_once),
		cmocka_unit_test(window_edges),
		cmocka_unit_test(jitter),
		cmocka_unit_test(histogram),
		cmocka_unit_test(spec_parse),
		cmocka_unit_test(datagrams),
		cmocka_unit_test(echo_stream_through_bad_network),
		cmocka_unit_test(up_stream_report),
		cmocka_unit_test(streams_wait_for_the_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
