/* Stream accounting and histograms (see acct.h). */
#include "client/acct.h"

#include <string.h>

void acct_init(struct acct *a)
{
	memset(a, 0, sizeof(*a));
}

static int window_test(const struct acct *a, uint64_t back)
{
	return (a->window[back / 64] >> (back % 64)) & 1;
}

static void window_set(struct acct *a, uint64_t back)
{
	a->window[back / 64] |= (uint64_t)1 << (back % 64);
}

/* Move the window forward by `n` numbers: bit i becomes bit i+n. */
static void window_shift(struct acct *a, uint64_t n)
{
	const unsigned words = ACCT_WINDOW / 64;

	if (n >= ACCT_WINDOW) {
		memset(a->window, 0, sizeof(a->window));
		return;
	}
	unsigned w = (unsigned)(n / 64), b = (unsigned)(n % 64);
	for (unsigned i = words; i-- > 0; ) {
		uint64_t v = 0;
		if (i >= w) {
			v = a->window[i - w] << b;
			if (b && i > w)
				v |= a->window[i - w - 1] >> (64 - b);
		}
		a->window[i] = v;
	}
}

static void jitter_update(struct acct *a, uint64_t sent_ns, uint64_t recv_ns)
{
	int64_t transit = (int64_t)(recv_ns - sent_ns);

	if (a->received > 1) {
		int64_t d = transit - a->last_transit;
		uint64_t ad = (uint64_t)(d < 0 ? -d : d);
		/* J += (|D| - J) / 16, kept as 16 J */
		a->jitter16 = a->jitter16 + ad - a->jitter16 / 16;
	}
	a->last_transit = transit;
}

enum acct_verdict acct_input(struct acct *a, uint64_t seq, uint64_t sent_ns,
    uint64_t recv_ns)
{
	enum acct_verdict v;

	if (!a->started) {
		a->started = 1;
		a->max_seq = seq;
		window_set(a, 0);
		v = ACCT_NEW;
	} else if (seq > a->max_seq) {
		window_shift(a, seq - a->max_seq);
		a->max_seq = seq;
		window_set(a, 0);
		v = ACCT_NEW;
	} else if (a->max_seq - seq >= ACCT_WINDOW) {
		a->stale++;
		return ACCT_STALE;
	} else if (window_test(a, a->max_seq - seq)) {
		a->duplicates++;
		return ACCT_DUPLICATE;
	} else {
		window_set(a, a->max_seq - seq);
		a->reordered++;
		v = ACCT_REORDERED;
	}
	a->received++;
	jitter_update(a, sent_ns, recv_ns);
	return v;
}

uint64_t acct_lost(const struct acct *a, uint64_t sent)
{
	uint64_t expected = sent;

	if (expected == 0)
		expected = a->started ? a->max_seq + 1 : 0;
	return expected > a->received ? expected - a->received : 0;
}

uint64_t acct_jitter_ns(const struct acct *a)
{
	return a->jitter16 / 16;
}

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
}

static unsigned hist_index(uint64_t v)
{
	if (v < (1u << HIST_SUB_BITS))
		return (unsigned)v;
	unsigned msb = 63 - (unsigned)__builtin_clzll(v);
	unsigned sub = (unsigned)(v >> (msb - HIST_SUB_BITS)) &
	    ((1u << HIST_SUB_BITS) - 1);
	return ((msb - HIST_SUB_BITS + 1) << HIST_SUB_BITS) | sub;
}

/* Largest value that falls into bucket i. */
static uint64_t hist_upper(unsigned i)
{
	if (i < (1u << HIST_SUB_BITS))
		return i;
	unsigned msb = (i >> HIST_SUB_BITS) + HIST_SUB_BITS - 1;
	uint64_t sub = i & ((1u << HIST_SUB_BITS) - 1);
	uint64_t lo = ((uint64_t)1 << msb) | sub << (msb - HIST_SUB_BITS);
	return lo + ((uint64_t)1 << (msb - HIST_SUB_BITS)) - 1;
}

void hist_add(struct hist *h, uint64_t v)
{
	unsigned i = hist_index(v);

	if (i >= HIST_BUCKETS)
		i = HIST_BUCKETS - 1;
	h->bucket[i]++;
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

void hist_merge(struct hist *into, const struct hist *from)
{
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		into->bucket[i] += from->bucket[i];
	into->count += from->count;
	into->sum += from->sum;
	if (from->max > into->max)
		into->max = from->max;
}

uint64_t hist_pct(const struct hist *h, double p)
{
	if (h->count == 0)
		return 0;
	uint64_t rank = (uint64_t)(p / 100.0 * (double)h->count + 0.5);
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			uint64_t u = hist_upper(i);
			return u < h->max ? u : h->max;
		}
	}
	return h->max;
}
