/* Receive-side sequencing for enhanced GRE (RFC 2637 4.4): duplicate and
 * stale packet rejection, bounded reordering, ack bookkeeping. Pure logic,
 * no I/O, so it can be tested exhaustively. All comparisons are serial
 * number arithmetic modulo 2^32.
 *
 * GRE carries no authentication: anyone who can send from the client's
 * address with the right Call ID is heard. What is delivered is decided by
 * the number alone, so these rules are what keeps a forger from starving
 * the real stream. "The stream is quiet" below means nothing has been
 * delivered for SEQ_QUIET_MS: a real stream that is flowing keeps
 * delivering at `next`, so numbers elsewhere are believed only when it
 * is not.
 *
 * Relative to the next expected number `next`, a packet is:
 *   d == 0                      in order: delivered
 *   1 <= d <= SLOTS             ahead of a gap: held (reordering)
 *   -JUMP_MAX <= d < 0          late: a duplicate or stale, dropped, unless
 *                               it is the SEQ_BACK_CONFIRMth of a run (each
 *                               at most SLOTS after the previous) and the
 *                               stream is quiet: then `next` moves back to
 *                               it (a backward resync). This is how the
 *                               real stream comes back after a burst of
 *                               forged in-window numbers took its place:
 *                               the forgers stop, the real packets keep
 *                               arriving behind `next`. Bounded: it never
 *                               goes back before the floor, the `next` a
 *                               previous backward resync came from, so a
 *                               number is delivered at most once more this
 *                               way and a replay cannot make it three times
 *   SLOTS < d <= JUMP_MAX       a jump (burst loss): believed when a second
 *                               packet follows it and the stream is quiet,
 *                               or at once when it continues the held
 *                               packets (the buffer is full), so that a
 *                               forger who lands in the window cannot move
 *                               `next` while the real stream flows
 *   anything else               far off: believed when SEQ_RESYNC_COUNT
 *                               packets in a row agree and the stream is
 *                               quiet, which recovers from a long outage;
 *                               an off-path forger who knows the Call ID
 *                               but not the numbers cannot move `next`
 *                               while the real stream flows
 * A far-off run also needs, when the user asks for it
 * (seq_rx_gate_on_acks: the engine does), its confirming packet to carry
 * an ack that agrees with what the peer was sent (the user judges it:
 * seq_rx_ack_verdict), and a packet of the run whose ack does not agree
 * starts the run over. A quiet call's numbers are no secret (they start
 * near 0, and a forger can cover 2^32 with runs), so a far-off run alone
 * is a guessable thing; only the real peer knows which of our numbers it
 * may acknowledge, and each wrong guess costs a forger a whole run. The
 * real peer, back after an outage that long, is believed once it
 * acknowledges something pppd sent it meanwhile. Jumps and late runs
 * are not gated: they are how a flowing stream comes back after a burst
 * loss or a forged in-window burst, when there may be nothing new of ours
 * for the peer to acknowledge; tests/attack/README.md says what that
 * leaves open.
 * A gap is given up when its oldest held packet has waited
 * SEQ_REORDER_TIMEOUT_MS (seq_rx_expire) or when a believed jump needs the
 * held packets out of the way. */
#ifndef PROTO_SEQ_H
#define PROTO_SEQ_H

#include <stddef.h>
#include <stdint.h>

/* Packets held while waiting for a gap to fill. */
#define SEQ_REORDER_SLOTS   64
/* A gap is given up after this long (ms) and the held packets delivered. */
#define SEQ_REORDER_TIMEOUT_MS 50
/* A packet further ahead than this is treated as bogus, not as loss. */
#define SEQ_JUMP_MAX        4096
#define SEQ_SLOT_BYTES      2048
/* Packets in a row (each at most SEQ_REORDER_SLOTS after the previous)
 * needed to believe a jump within SEQ_JUMP_MAX, and anything further. */
#define SEQ_JUMP_CONFIRM    2
#define SEQ_RESYNC_COUNT    8
/* Late packets in a row needed for a backward resync. */
#define SEQ_BACK_CONFIRM    2
/* How long nothing must have been delivered before a jump, a far-off run
 * or a late run is believed. Longer than the gaps of any stream worth
 * protecting (2 packets/s and up: interactive traffic, the attack suite's
 * 10/s ping), short enough that recovery after a forged burst is well
 * within a second, and a true outage that lost more than SLOTS packets
 * costs at most this on top (TCP's minimum retransmission timeout is
 * 200 ms to 1 s, so a transfer that lost that much is already waiting
 * about as long). */
#define SEQ_QUIET_MS        500

/* What the packet being input says about our own stream (the gate). */
enum seq_ack {
	SEQ_ACK_NONE,     /* no ack: says nothing */
	SEQ_ACK_AGREES,   /* acks what we sent, no less than the peer did */
	SEQ_ACK_WRONG,    /* acks what we never sent, or less than the peer
	                   * did: a forger sweeping up from 0 pays for each */
};

enum seq_verdict {
	SEQ_DELIVER,      /* in order: deliver now (then drain with seq_rx_next) */
	SEQ_HELD,         /* ahead of a gap: copied into the reorder buffer */
	SEQ_DUPLICATE,    /* already delivered or already held */
	SEQ_STALE,        /* older than the last delivered packet */
	SEQ_TOO_FAR,      /* beyond the window and not (yet) believed */
	SEQ_NO_ROOM,      /* should be held but too big or out of memory */
};

/* Payload buffers for held packets, shared by every call of an engine: a
 * reorder episode takes what it needs and gives it back when it ends, so
 * an idle or in-order call holds no payload memory, and the next episode
 * (of any call) reuses the buffers instead of a malloc/free per packet.
 * At most `cap` idle buffers are kept; the rest go back to malloc. */
struct seq_pool {
	void    *free_list;     /* idle buffers, linked through their start */
	uint32_t idle, cap;
	uint64_t mallocs;       /* buffers ever taken from malloc */
};

/* Idle buffers kept: one call's worst episode (every slot and `pend`). */
#define SEQ_POOL_CAP_DFLT   (SEQ_REORDER_SLOTS + 1)

void seq_pool_init(struct seq_pool *p, uint32_t cap);
/* Free the idle buffers (the engine going away). */
void seq_pool_drain(struct seq_pool *p);

/* A held packet. `data` is taken from the pool (or malloc without one)
 * only while a reorder episode lasts. */
struct seq_slot {
	uint32_t seq;
	uint16_t len;
	uint8_t  used;
	uint64_t t_ms;          /* arrival, or the gap last filling in */
	uint8_t *data;          /* SEQ_SLOT_BYTES or NULL */
};

struct seq_rx {
	int      started;       /* first packet seen: any first seq accepted */
	uint32_t next;          /* next sequence number expected */
	uint32_t held;          /* number of slots in use */
	uint64_t gap_since_ms;  /* earliest arrival among held packets */
	int      ack_pending;   /* something delivered that the peer has no ack
	                         * for; set here, cleared by the user */
	uint64_t recent;        /* bit i: next-1-i was delivered (duplicates) */
	int      flush;         /* deliver every held packet, then `pend` */
	struct seq_slot pend;   /* a believed jump, waiting for the held ones */
	uint32_t cand_seq;      /* last packet of the current out-of-window run */
	uint32_t cand_count;    /* length of that run */
	uint32_t back_seq;      /* last packet of the current late run */
	uint32_t back_count;    /* length of that run */
	uint32_t floor;         /* a backward resync never goes before this */
	int      floor_set;
	int      ack_gate;      /* far-off resyncs need SEQ_ACK_AGREES */
	uint8_t  ack;           /* enum seq_ack of the packet being input */
	uint64_t now_ms;        /* latest time given to input or expire */
	uint64_t flow_ms;       /* last delivery (quiet since then) */
	uint32_t storage;       /* slot buffers taken */
	struct seq_pool *pool;  /* where they come from; NULL: malloc */
	struct seq_slot slot[SEQ_REORDER_SLOTS];
	uint64_t delivered, duplicates, stale, too_far, reordered, lost;
	uint64_t resyncs, no_room;
};

void seq_rx_init(struct seq_rx *rx);
/* Take payload buffers from `pool` (call before any input). */
void seq_rx_set_pool(struct seq_rx *rx, struct seq_pool *pool);
/* A far-off resync needs a confirming packet whose ack agrees (the rules
 * above). Off by default: this file alone knows no acks. */
static inline void seq_rx_gate_on_acks(struct seq_rx *rx) { rx->ack_gate = 1; }
/* The ack verdict of the packet about to be input; with the gate on, set
 * it before every seq_rx_input. */
static inline void seq_rx_ack_verdict(struct seq_rx *rx, enum seq_ack a)
{
	rx->ack = (uint8_t)a;
}
/* Release the payload storage (a call being freed). */
void seq_rx_free(struct seq_rx *rx);

/* Classify packet `seq` of `len` bytes arriving at `now_ms`. On SEQ_HELD the
 * payload has been copied. On SEQ_DELIVER the caller delivers `data` itself.
 * After every call (whatever the verdict) the caller drains with
 * seq_rx_next() until it returns NULL: a believed jump releases the held
 * packets through it. */
enum seq_verdict seq_rx_input(struct seq_rx *rx, uint32_t seq,
    const uint8_t *data, size_t len, uint64_t now_ms);

/* Next held packet that is now in order, or NULL. The slot is valid until
 * the next call on `rx`. */
const struct seq_slot *seq_rx_next(struct seq_rx *rx);

/* Gap timer: if the oldest held packet has waited SEQ_REORDER_TIMEOUT_MS,
 * skip the gap before it (count the missing as lost) so held packets can be
 * drained with seq_rx_next(). Returns 1 if something became deliverable;
 * call again after draining, as a later gap may be due too. */
int seq_rx_expire(struct seq_rx *rx, uint64_t now_ms);

/* Deadline (ms) of the gap timer, or 0 when nothing is held. */
uint64_t seq_rx_deadline(const struct seq_rx *rx);

/* The sequence number to acknowledge: last delivered (next - 1). */
static inline uint32_t seq_rx_ack(const struct seq_rx *rx) { return rx->next - 1; }

/* Serial comparison: a before b. */
static inline int seq_before(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }

#endif
