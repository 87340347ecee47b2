/* The GRE engine: one raw IPPROTO_GRE socket for all calls, enhanced GRE
 * (RFC 2637 4.1/4.4) on the wire and async HDLC (RFC 1662) toward each call's
 * pppd pty. The engine does no polling of its own: the daemon's event loop
 * tells it when a descriptor is ready and when a timer is due, so the engine
 * can be driven as well by a benchmark or a test. */
#ifndef GRE_GRE_H
#define GRE_GRE_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

struct gre_engine;
struct gre_call;

struct gre_ops {
	/* Log a line; prio is a syslog priority. May be NULL. */
	void (*log)(void *arg, int prio, const char *msg);
	/* The pty needs (on=1) or no longer needs (on=0) write readiness. */
	void (*pty_want_write)(void *call_arg, int on);
	/* The pty reported EOF or an error (pppd is gone): the call is dead.
	 * The daemon frees the call later; the engine stops using the pty. */
	void (*pty_closed)(void *call_arg, int err);
};

struct gre_stats {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	uint64_t rx_duplicates, rx_stale, rx_too_far, rx_reordered, rx_lost;
	uint64_t rx_bad_fcs, rx_runts, tx_acks_only, pty_drops;
};

/* Open the raw socket bound to `bind_addr` (INADDR_ANY for all).
 * Returns NULL and sets errno on failure. */
struct gre_engine *gre_engine_new(struct in_addr bind_addr,
    const struct gre_ops *ops, void *arg);
/* Use an existing socket (tests, benchmarks). Takes ownership. */
struct gre_engine *gre_engine_new_fd(int fd, const struct gre_ops *ops, void *arg);
void gre_engine_free(struct gre_engine *e);

int  gre_engine_fd(const struct gre_engine *e);
/* The raw socket is readable: receive in batches, deliver to calls. */
void gre_engine_input(struct gre_engine *e, uint64_t now_ms);
/* Run due timers (ack-only packets, reorder gap expiry). */
void gre_engine_timers(struct gre_engine *e, uint64_t now_ms);
/* Earliest timer deadline in ms (monotonic), or 0 when none. */
uint64_t gre_engine_next_deadline(const struct gre_engine *e);

/* A call: `local_id` is our Call ID (the peer puts it in its GRE key),
 * `peer_id` is the peer's Call ID (we put it in ours). Packets for local_id
 * from any other source than `peer` are dropped. The engine does not own
 * pty_fd (the daemon closes it after gre_call_free). */
struct gre_call *gre_call_new(struct gre_engine *e, uint16_t local_id,
    uint16_t peer_id, struct in_addr peer, int pty_fd, void *call_arg);
void gre_call_free(struct gre_call *c);

/* Is a call using this local id? (for Call ID allocation) */
int  gre_engine_has_call(const struct gre_engine *e, uint16_t local_id);

/* The pty is readable / writable. */
void gre_call_pty_input(struct gre_call *c, uint64_t now_ms);
void gre_call_pty_output(struct gre_call *c);

/* Set-Link-Info: the ACCM to use when writing to pppd. */
void gre_call_set_accm(struct gre_call *c, uint32_t send_accm, uint32_t recv_accm);

/* The peer's advertised receive window (OCRQ) and packet delay. */
void gre_call_set_window(struct gre_call *c, uint16_t peer_window);

void gre_call_stats(const struct gre_call *c, struct gre_stats *st);

#endif
