/* Following LCP between pppd and the peer for the async map (RFC 1662 7.1)
 * pppd's line discipline uses: the engine is the async-to-sync converter of
 * RFC 1662 section 6, so doing "all stuffing conversions" is its job, and
 * escaping what pppd negotiated away only costs CPU and pty bytes (random
 * data such as MPPE's has a control character in 1 octet of 8).
 *
 * What is safe to leave unescaped toward pppd is exactly what pppd's async
 * line discipline does not drop when it arrives unescaped: its receive
 * ACCM. pppd sets that to what its own Configure-Request asked for, once
 * the peer acked it and LCP opened (lcp_up); before, it is 0xffffffff. So:
 *
 *   pppd sends a Configure-Request       remember its Identifier and ACCM
 *                                        (absent: 0xffffffff); escape the
 *                                        default until it is agreed
 *   the peer acks that request           agreed, but pppd has not yet read
 *   (same Identifier, same ACCM)         the ack nor set its map
 *   pppd sends anything but LCP          it does so only with LCP open, and
 *                                        after it set its receive ACCM:
 *                                        from now on escape the agreed map
 *   a Terminate-Request or -Ack either   back to the default; pppd may
 *   way, a Configure-Request from the    start over with the default map
 *   peer once open, or a new request
 *   from pppd
 *
 * Escaping more than pppd's map is always harmless, so every doubt falls
 * back to the RFC 1662 default, 0xffffffff: whatever the peer says in a
 * Set-Link-Info, pppd's line discipline drops an unescaped control octet
 * until its LCP is open, so a Send ACCM taken before then lets the peer's
 * Configure-Request reach pppd damaged (issue 19, item 10).
 *
 * How the engine knows LCP is open: by watching the frames it carries, not
 * from the plugin's report. The snoop sees pppd's first non-LCP frame in
 * the same stream, in order, as the frames it encodes toward pppd; the
 * report travels on another channel, arrives at another time, and would
 * tell us later than the frames do, and not when LCP goes down again.
 * Pure logic, no I/O. */
#ifndef GRE_LCP_H
#define GRE_LCP_H

#include <stddef.h>
#include <stdint.h>

#define LCP_ACCM_DEFAULT 0xffffffffu

enum lcp_snoop_state {
	LCP_SNOOP_NONE,     /* nothing known: the default map */
	LCP_SNOOP_REQ,      /* pppd asked for req_accm */
	LCP_SNOOP_AGREED,   /* the peer acked it; pppd may not have set it */
	LCP_SNOOP_OPEN,     /* pppd receives with `agreed` */
};

struct lcp_snoop {
	uint32_t req_accm, agreed;
	uint8_t  req_id;
	uint8_t  state;
	uint32_t opens;     /* times the agreed map came into use (stats) */
};

void lcp_snoop_init(struct lcp_snoop *s);

/* A PPP frame (address/control, protocol, information; no FCS) pppd wrote,
 * on its way to the peer. */
void lcp_snoop_from_pppd(struct lcp_snoop *s, const uint8_t *f, size_t len);
/* A PPP frame from the peer, before it is encoded toward pppd. */
void lcp_snoop_to_pppd(struct lcp_snoop *s, const uint8_t *f, size_t len);

/* The control characters to escape toward pppd now. */
static inline uint32_t lcp_snoop_accm(const struct lcp_snoop *s)
{
	return s->state == LCP_SNOOP_OPEN ? s->agreed : LCP_ACCM_DEFAULT;
}

#endif
