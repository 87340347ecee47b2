/* Receive-side sequencing for enhanced GRE (RFC 2637 4.4): duplicate and
 * stale packet rejection, bounded reordering, ack bookkeeping. Pure logic,
 * no I/O, so it can be tested exhaustively. All comparisons are serial
 * number arithmetic modulo 2^32. */
#ifndef GRE_SEQ_H
#define GRE_SEQ_H

#include <stddef.h>
#include <stdint.h>

/* Packets held while waiting for a gap to fill. */
#define SEQ_REORDER_SLOTS   64
/* A gap is given up after this long (ms) and the held packets delivered. */
#define SEQ_REORDER_TIMEOUT_MS 50
/* A packet further ahead than this is treated as bogus, not as loss. */
#define SEQ_JUMP_MAX        4096
#define SEQ_SLOT_BYTES      2048

enum seq_verdict {
	SEQ_DELIVER,      /* in order: deliver now (then drain with seq_rx_next) */
	SEQ_HELD,         /* ahead of a gap: copied into the reorder buffer */
	SEQ_DUPLICATE,    /* already delivered or already held */
	SEQ_STALE,        /* older than the last delivered packet */
	SEQ_TOO_FAR,      /* beyond SEQ_JUMP_MAX ahead */
};

struct seq_slot {
	uint32_t seq;
	uint16_t len;
	uint8_t  used;
	uint8_t  data[SEQ_SLOT_BYTES];
};

struct seq_rx {
	int      started;       /* first packet seen: any first seq accepted */
	uint32_t next;          /* next sequence number expected */
	uint32_t held;          /* number of slots in use */
	uint64_t gap_since_ms;  /* when the oldest gap was noticed (0: none) */
	int      ack_pending;   /* something delivered that the peer has no ack for */
	struct seq_slot slot[SEQ_REORDER_SLOTS];
	uint64_t delivered, duplicates, stale, too_far, reordered, lost;
};

void seq_rx_init(struct seq_rx *rx);

/* Classify packet `seq` of `len` bytes arriving at `now_ms`. On SEQ_HELD the
 * payload has been copied. On SEQ_DELIVER the caller delivers `data` itself
 * and then calls seq_rx_next() until it returns NULL. */
enum seq_verdict seq_rx_input(struct seq_rx *rx, uint32_t seq,
    const uint8_t *data, size_t len, uint64_t now_ms);

/* Next held packet that is now in order, or NULL. */
const struct seq_slot *seq_rx_next(struct seq_rx *rx);

/* Gap timer: if the oldest gap is older than SEQ_REORDER_TIMEOUT_MS, skip it
 * (count the missing as lost) so held packets can be drained with
 * seq_rx_next(). Returns 1 if something became deliverable. */
int seq_rx_expire(struct seq_rx *rx, uint64_t now_ms);

/* Deadline (ms) of the gap timer, or 0 when nothing is held. */
uint64_t seq_rx_deadline(const struct seq_rx *rx);

/* The sequence number to acknowledge: last delivered (next - 1). */
static inline uint32_t seq_rx_ack(const struct seq_rx *rx) { return rx->next - 1; }

/* Serial comparison: a before b. */
static inline int seq_before(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }

#endif
