/* Receive sequencing for enhanced GRE; see seq.h for the rules. */
#include "proto/seq.h"

#include <stdlib.h>
#include <string.h>

#define RECENT_BITS 64

void seq_pool_init(struct seq_pool *p, uint32_t cap)
{
	memset(p, 0, sizeof(*p));
	p->cap = cap;
}

void seq_pool_drain(struct seq_pool *p)
{
	while (p->free_list) {
		void *b = p->free_list;

		memcpy(&p->free_list, b, sizeof(void *));
		free(b);
	}
	p->idle = 0;
}

static uint8_t *pool_get(struct seq_pool *p)
{
	void *b;

	if (!p || !p->free_list) {
		if ((b = malloc(SEQ_SLOT_BYTES)) && p)
			p->mallocs++;
		return b;
	}
	b = p->free_list;
	memcpy(&p->free_list, b, sizeof(void *));
	p->idle--;
	return b;
}

static void pool_put(struct seq_pool *p, uint8_t *b)
{
	if (!p || p->idle >= p->cap) {
		free(b);
		return;
	}
	memcpy(b, &p->free_list, sizeof(void *));
	p->free_list = b;
	p->idle++;
}

void seq_rx_init(struct seq_rx *rx)
{
	memset(rx, 0, sizeof(*rx));
}

void seq_rx_set_pool(struct seq_rx *rx, struct seq_pool *pool)
{
	rx->pool = pool;
}

static void slot_release(struct seq_rx *rx, struct seq_slot *s)
{
	if (s->data) {
		rx->storage--;
		pool_put(rx->pool, s->data);
	}
	s->data = NULL;
	s->used = 0;
}

void seq_rx_free(struct seq_rx *rx)
{
	for (size_t i = 0; i < SEQ_REORDER_SLOTS; i++)
		slot_release(rx, &rx->slot[i]);
	slot_release(rx, &rx->pend);
	rx->held = 0;
	rx->flush = 0;
}

/* The floor only matters within the late band: once `next` is further
 * past it, no backward resync can reach it, and forgetting it keeps the
 * serial comparison with it meaningful. */
static void floor_age(struct seq_rx *rx)
{
	if (rx->floor_set && !seq_before(rx->next, rx->floor) &&
	    rx->next - rx->floor > SEQ_JUMP_MAX)
		rx->floor_set = 0;
}

/* `next` moves to `seq` + 1 having delivered `seq`: the stream at `next`
 * is alive. */
static void advance_delivered(struct seq_rx *rx)
{
	rx->next++;
	rx->recent = (rx->recent << 1) | 1;
	rx->delivered++;
	rx->ack_pending = 1;
	rx->flow_ms = rx->now_ms;
	floor_age(rx);
}

/* Nothing delivered for SEQ_QUIET_MS: numbers away from `next` may be the
 * real stream's. */
static int quiet(const struct seq_rx *rx)
{
	return rx->now_ms >= rx->flow_ms &&
	    rx->now_ms - rx->flow_ms >= SEQ_QUIET_MS;
}

/* May a run of `count` packets, `need` of them needed, move `next` now?
 * Only with the stream quiet and, for a `gated` (far-off) run with the
 * gate on, an ack that agrees on the confirming packet (seq.h). */
static int believable(const struct seq_rx *rx, uint32_t count, uint32_t need,
    int gated)
{
	return count >= need && quiet(rx) &&
	    (!gated || !rx->ack_gate || rx->ack == SEQ_ACK_AGREES);
}

/* The length of the run `seq` continues (`last`, `count`: the run so far)
 * or 1 for a new one; in a `gated` run a wrong ack starts it over, so
 * each guess at our numbers costs a forger a whole run. */
static uint32_t run_length(const struct seq_rx *rx, uint32_t seq,
    uint32_t last, uint32_t count, int gated)
{
	if (gated && rx->ack_gate && rx->ack == SEQ_ACK_WRONG)
		return 0;
	if (count && (uint32_t)(seq - last - 1) < SEQ_REORDER_SLOTS)
		return count + 1;
	return 1;
}

/* Give up `n` sequence numbers that never arrived; `count` them as lost
 * unless resync() has already done so. */
static void skip(struct seq_rx *rx, uint32_t n, int count)
{
	if (count)
		rx->lost += n;
	rx->next += n;
	rx->recent = n >= RECENT_BITS ? 0 : rx->recent << n;
	floor_age(rx);
}

static struct seq_slot *slot_of(struct seq_rx *rx, uint32_t seq)
{
	return &rx->slot[seq % SEQ_REORDER_SLOTS];
}

static int slot_holds(const struct seq_slot *s, uint32_t seq)
{
	return s->used && s->seq == seq;
}

/* Copy a packet into `s`, allocating its storage on first use. */
static int slot_fill(struct seq_rx *rx, struct seq_slot *s, uint32_t seq, const uint8_t *data,
    size_t len, uint64_t now_ms)
{
	if (len > SEQ_SLOT_BYTES)
		return -1;
	if (!s->data) {
		if (!(s->data = pool_get(rx->pool)))
			return -1;
		rx->storage++;
	}
	memcpy(s->data, data, len);
	s->seq = seq;
	s->len = (uint16_t)len;
	s->t_ms = now_ms;
	s->used = 1;
	return 0;
}

/* Offset from `next` of the lowest (or highest) held packet; 0 if none. */
static uint32_t held_edge(struct seq_rx *rx, int highest)
{
	uint32_t edge = 0;

	for (uint32_t d = 1; d <= SEQ_REORDER_SLOTS; d++) {
		if (!slot_holds(slot_of(rx, rx->next + d), rx->next + d))
			continue;
		edge = d;
		if (!highest)
			break;
	}
	return edge;
}

static void gap_recompute(struct seq_rx *rx)
{
	uint64_t t = UINT64_MAX;

	for (size_t i = 0; i < SEQ_REORDER_SLOTS; i++)
		if (rx->slot[i].used && rx->slot[i].t_ms < t)
			t = rx->slot[i].t_ms;
	rx->gap_since_ms = rx->held ? t : 0;
}

/* The reorder episode is over: give the payload memory back. */
static void storage_release(struct seq_rx *rx)
{
	for (size_t i = 0; i < SEQ_REORDER_SLOTS; i++)
		if (rx->slot[i].data)
			slot_release(rx, &rx->slot[i]);
	if (rx->pend.data)
		slot_release(rx, &rx->pend);
}

static enum seq_verdict hold(struct seq_rx *rx, uint32_t seq,
    const uint8_t *data, size_t len, uint64_t now_ms)
{
	struct seq_slot *s = slot_of(rx, seq);

	if (slot_holds(s, seq)) {
		rx->duplicates++;
		return SEQ_DUPLICATE;
	}
	/* A packet landing below the highest held one is the gap filling in,
	 * not more traffic queueing behind a loss: the peer is still sending
	 * the reordered burst (a slow sender delivers it over many ms), so
	 * the wait starts again. A real loss sees only packets above the
	 * highest and expires on time. */
	int filling = rx->held > 0 && seq - rx->next < held_edge(rx, 1);
	if (s->used || slot_fill(rx, s, seq, data, len, now_ms) < 0) {
		rx->no_room++;
		return SEQ_NO_ROOM;
	}
	if (filling)
		for (size_t i = 0; i < SEQ_REORDER_SLOTS; i++)
			if (rx->slot[i].used)
				rx->slot[i].t_ms = now_ms;
	if (rx->held++ == 0 || filling || now_ms < rx->gap_since_ms)
		rx->gap_since_ms = now_ms;
	rx->cand_count = 0;
	rx->back_count = 0;
	return SEQ_HELD;
}

/* Forget every held packet (counted as lost). */
static void held_drop(struct seq_rx *rx)
{
	rx->lost += rx->held;
	for (size_t i = 0; i < SEQ_REORDER_SLOTS; i++)
		rx->slot[i].used = 0;
	rx->held = 0;
	rx->gap_since_ms = 0;
	storage_release(rx);
}

/* A believed run of late packets: `next` goes back to `seq`. Whatever was
 * held was ahead of the stream just abandoned. The floor rises to where we
 * came from, so no later backward resync reaches the numbers this one is
 * about to deliver a second time. */
static enum seq_verdict back_resync(struct seq_rx *rx, uint32_t seq)
{
	rx->resyncs++;
	rx->floor = rx->next;
	rx->floor_set = 1;
	rx->cand_count = 0;
	rx->back_count = 0;
	if (rx->held)
		held_drop(rx);
	rx->next = seq;
	rx->recent = 0;
	advance_delivered(rx);
	return SEQ_DELIVER;
}

/* Behind `next`: a duplicate or stale, unless it continues a run of late
 * packets that is believed (seq.h). */
static enum seq_verdict late(struct seq_rx *rx, uint32_t seq, uint32_t back)
{
	uint32_t age = back - 1;

	rx->back_count = run_length(rx, seq, rx->back_seq, rx->back_count, 0);
	rx->back_seq = seq;
	if (believable(rx, rx->back_count, SEQ_BACK_CONFIRM, 0) &&
	    (!rx->floor_set || !seq_before(seq, rx->floor)))
		return back_resync(rx, seq);
	if (age < RECENT_BITS && ((rx->recent >> age) & 1)) {
		rx->duplicates++;
		return SEQ_DUPLICATE;
	}
	rx->stale++;
	return SEQ_STALE;
}

/* A believed jump to `seq`: the held packets go first (their gaps given
 * up), then this one. */
static enum seq_verdict resync(struct seq_rx *rx, uint32_t seq,
    const uint8_t *data, size_t len, int32_t d, uint64_t now_ms)
{
	rx->resyncs++;
	rx->cand_count = 0;
	rx->back_count = 0;
	if (d > 0 && d <= SEQ_JUMP_MAX)
		rx->lost += (uint32_t)d - rx->held;
	else
		rx->floor_set = 0;      /* a new stream: the old floor is moot */
	if (rx->held && slot_fill(rx, &rx->pend, seq, data, len, now_ms) == 0) {
		rx->flush = 1;
		return SEQ_HELD;
	}
	if (rx->held)
		held_drop(rx);  /* no memory to park this one */
	rx->next = seq;
	rx->recent = 0;
	advance_delivered(rx);
	return SEQ_DELIVER;
}

/* Outside both the reorder window and the late band. */
static enum seq_verdict out_of_window(struct seq_rx *rx, uint32_t seq,
    const uint8_t *data, size_t len, int32_t d, uint64_t now_ms)
{
	int jump = d > 0 && d <= SEQ_JUMP_MAX;
	uint32_t need = jump ? SEQ_JUMP_CONFIRM : SEQ_RESYNC_COUNT;
	uint32_t top = rx->held ? held_edge(rx, 1) : 0;

	/* Just past the held packets: the buffer is full, not a jump. The
	 * stream is continuing what is held, so it needs no quiet. */
	if (jump && top && (uint32_t)d - top <= SEQ_REORDER_SLOTS)
		return resync(rx, seq, data, len, d, now_ms);
	rx->cand_count = run_length(rx, seq, rx->cand_seq, rx->cand_count,
	    !jump);
	rx->cand_seq = seq;
	if (believable(rx, rx->cand_count, need, !jump))
		return resync(rx, seq, data, len, d, now_ms);
	rx->too_far++;
	return SEQ_TOO_FAR;
}

enum seq_verdict seq_rx_input(struct seq_rx *rx, uint32_t seq,
    const uint8_t *data, size_t len, uint64_t now_ms)
{
	int32_t d;

	rx->now_ms = now_ms;
	if (!rx->started) {
		rx->started = 1;
		rx->next = seq;
	}
	d = (int32_t)(seq - rx->next);
	if (d == 0) {
		rx->cand_count = 0;
		rx->back_count = 0;
		advance_delivered(rx);
		return SEQ_DELIVER;
	}
	if (d > 0 && d <= SEQ_REORDER_SLOTS)
		return hold(rx, seq, data, len, now_ms);
	if (d < 0 && d >= -SEQ_JUMP_MAX)
		return late(rx, seq, (uint32_t)-d);
	return out_of_window(rx, seq, data, len, d, now_ms);
}

static const struct seq_slot *take(struct seq_rx *rx, struct seq_slot *s)
{
	s->used = 0;
	rx->held--;
	rx->reordered++;
	advance_delivered(rx);
	return s;
}

const struct seq_slot *seq_rx_next(struct seq_rx *rx)
{
	struct seq_slot *s;

	if (!rx->held && !rx->flush) {
		if (rx->storage)
			storage_release(rx);
		return NULL;
	}
	if (rx->held) {
		s = slot_of(rx, rx->next);
		if (slot_holds(s, rx->next))
			return take(rx, s);
		if (rx->flush) {
			uint32_t d = held_edge(rx, 0);

			if (d) {
				skip(rx, d, 0);
				return take(rx, slot_of(rx, rx->next));
			}
			rx->held = 0; /* unreachable: held counted a lost slot */
		}
	}
	if (rx->flush) {
		rx->flush = 0;
		rx->next = rx->pend.seq;
		rx->recent = 0;
		rx->pend.used = 0;
		advance_delivered(rx);
		return &rx->pend;
	}
	gap_recompute(rx);
	return NULL;
}

int seq_rx_expire(struct seq_rx *rx, uint64_t now_ms)
{
	rx->now_ms = now_ms;
	if (!rx->held || now_ms < seq_rx_deadline(rx))
		return 0;
	skip(rx, held_edge(rx, 0), 1);
	return 1;
}

uint64_t seq_rx_deadline(const struct seq_rx *rx)
{
	return rx->held ? rx->gap_since_ms + SEQ_REORDER_TIMEOUT_MS : 0;
}
