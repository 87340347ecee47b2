/* Stream accounting for pptp-load and pptp-echo: what a receiver counts
 * about a numbered stream (received, lost, out of order, duplicated,
 * jitter), and a small log-scale histogram for percentiles (RTT, setup
 * time). Pure bookkeeping, no I/O and no clock: the caller hands in the
 * sequence numbers and times, so every rule is testable packet by packet. */
#ifndef CLIENT_ACCT_H
#define CLIENT_ACCT_H

#include <stdint.h>

/* How far behind the highest number seen a packet still counts as a late
 * (reordered) arrival rather than a stale one: a window of this many
 * numbers, one bit each. */
#define ACCT_WINDOW 1024

struct acct {
	int      started;
	uint64_t max_seq;        /* highest number seen */
	uint64_t received;       /* distinct numbers received */
	uint64_t reordered;      /* arrived after a higher number */
	uint64_t duplicates;     /* a number received again */
	uint64_t stale;          /* older than the window: not told apart */
	/* RFC 3550 6.4.1 interarrival jitter, in ns (x16 fixed point). */
	int64_t  last_transit;
	uint64_t jitter16;
	uint64_t window[ACCT_WINDOW / 64];  /* bit: max_seq - i was received */
};

enum acct_verdict { ACCT_NEW, ACCT_REORDERED, ACCT_DUPLICATE, ACCT_STALE };

void acct_init(struct acct *a);
/* Packet `seq`, sent at `sent_ns` by the sender's clock and received at
 * `recv_ns` by ours (the clocks need not agree: jitter uses differences). */
enum acct_verdict acct_input(struct acct *a, uint64_t seq, uint64_t sent_ns,
    uint64_t recv_ns);
/* Lost: of `sent` numbered 0..sent-1, how many never arrived. With
 * sent == 0 the sender's count is unknown: the numbers up to the highest
 * seen are expected (a loss at the very end goes unseen). */
uint64_t acct_lost(const struct acct *a, uint64_t sent);
/* Jitter in ns. */
uint64_t acct_jitter_ns(const struct acct *a);

/* Histogram of values (e.g. microseconds): 16 buckets per power of two,
 * so a percentile is within 1/16 (6 %) of the true value. */
#define HIST_SUB_BITS 4
#define HIST_BUCKETS  (64 << HIST_SUB_BITS)
struct hist {
	uint64_t count, max, sum;
	uint32_t bucket[HIST_BUCKETS];
};
void hist_init(struct hist *h);
void hist_add(struct hist *h, uint64_t v);
void hist_merge(struct hist *into, const struct hist *from);
/* The value at percentile p (0..100): the bucket's upper bound, never
 * more than the maximum seen; 0 when empty. */
uint64_t hist_pct(const struct hist *h, double p);

#endif
