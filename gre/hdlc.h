/* Async HDLC-like framing (RFC 1662) between the engine and pppd's pty. */
#ifndef GRE_HDLC_H
#define GRE_HDLC_H

#include <stddef.h>
#include <stdint.h>

#define HDLC_FLAG        0x7e
#define HDLC_ESCAPE      0x7d
#define HDLC_TRANS       0x20
#define HDLC_FCS_INIT    0xffff
#define HDLC_FCS_GOOD    0xf0b8
#define HDLC_FCS_LEN     2
/* Largest PPP frame we carry (address/control/protocol + MRU 1500 + slack). */
#define HDLC_MAX_FRAME   2048
/* Worst case encoded size of a frame of n bytes: every byte and the FCS
 * escaped, plus two flags. */
#define HDLC_ENCODED_MAX(n) (2 * ((n) + HDLC_FCS_LEN) + 2)

/* Running FCS-16 (not complemented): start with HDLC_FCS_INIT; over a frame
 * followed by its transmitted FCS the result is HDLC_FCS_GOOD. */
uint16_t hdlc_fcs16(uint16_t fcs, const uint8_t *p, size_t len);

/* Encode one PPP frame (no FCS in `frame`) into `out`, escaping the control
 * characters set in `accm` plus FLAG and ESCAPE. Returns bytes written;
 * `outlen` must be at least HDLC_ENCODED_MAX(len), else nothing is written
 * and 0 is returned. The frame is written as FLAG data FCS FLAG: the opening
 * flag makes every frame independent of what the previous write left. */
size_t hdlc_encode(const uint8_t *frame, size_t len, uint32_t accm,
    uint8_t *out, size_t outlen);

/* Smallest valid frame on the line: address, control and the FCS (RFC 1662
 * 4.3: "less than 4 octets" is discarded). */
#define HDLC_MIN_FRAME   4

/* Stream decoder: keeps a partial frame across reads. `buf` holds the
 * unescaped frame with its FCS; the FCS is checked once at the closing flag
 * over the whole frame, which is faster than a byte-at-a-time running FCS. */
struct hdlc_decoder {
	uint8_t  buf[HDLC_MAX_FRAME];
	uint8_t *out;        /* where frames are decoded: buf, or the caller's */
	size_t   len;
	int      escaped;
	int      overflow;   /* current frame too long: discard up to the flag */
	/* A flag has been seen. What comes before the first one is no frame
	 * (a frame is what lies between two flags, RFC 1662 4.3): on a fresh
	 * pty it is what pppd wrote before it took the line, its log lines
	 * when its options let it log to stdout (no nologfd). */
	int      synced;
	/* counters for logs and stats: good frames, FCS errors, frames longer
	 * than HDLC_MAX_FRAME, runts (1..3 octets), frames aborted by
	 * ESCAPE+FLAG (RFC 1662 4.3; not FCS errors), octets before the
	 * first flag (not errors either). */
	uint64_t frames, bad_fcs, too_long, runts, aborts, preamble;
};

void hdlc_decoder_init(struct hdlc_decoder *d);

/* Decode into `out` (HDLC_MAX_FRAME octets) from now on, or back into the
 * decoder's own buffer with NULL; a frame in progress moves along. This
 * lets a frame land where it is sent from (the engine's transmit slot)
 * instead of being copied there. It may be called from the frame callback,
 * for the next frame: the frame just delivered stays where it is. */
void hdlc_decoder_set_output(struct hdlc_decoder *d, uint8_t *out);

/* Called for every good frame (FCS checked and stripped). */
typedef void (*hdlc_frame_fn)(void *arg, const uint8_t *frame, size_t len);

/* Feed bytes read from the pty; calls `fn` once per complete good frame.
 * Bad FCS, over-long frames and garbage between flags are counted and
 * dropped; octets before the first flag are counted (preamble) and
 * dropped without being taken for a frame. The frame pointer is valid only during the callback. Control
 * characters arriving unescaped are kept as data: on a pty nothing inserts
 * them, so the receive-ACCM deletion rule of RFC 1662 does not apply. */
void hdlc_decode(struct hdlc_decoder *d, const uint8_t *p, size_t len,
    hdlc_frame_fn fn, void *arg);

#endif
