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

/* Callbacks. They run from inside engine calls: they must not free the
 * call or the engine (defer that to the event loop). Any may be NULL. */
struct gre_ops {
	/* Log a line; prio is a syslog priority. Drops are rate-limited per
	 * reason before they get here. */
	void (*log)(void *arg, int prio, const char *msg);
	/* The pty needs (on=1) or no longer needs (on=0) write readiness. */
	void (*pty_want_write)(void *call_arg, int on);
	/* The pty reported EOF or an error (pppd is gone): the call is dead.
	 * Called once. The daemon frees the call later; the engine stops using
	 * the pty (and asks for no more write readiness). */
	void (*pty_closed)(void *call_arg, int err);
};

/* Per call. "rx" is the GRE side toward pppd, except the rx_bad_fcs,
 * rx_runts, rx_too_long and rx_aborts counters, which count frames pppd
 * wrote to the pty that could not be sent. */
struct gre_stats {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	uint64_t rx_duplicates, rx_stale, rx_too_far, rx_reordered, rx_lost;
	uint64_t rx_bad_fcs, rx_runts, tx_acks_only, pty_drops;
	uint64_t rx_delivered;    /* frames written (or queued) to the pty */
	uint64_t rx_resyncs;      /* believed sequence jumps (seq.h) */
	uint64_t rx_no_room;      /* could not be held for reordering */
	uint64_t rx_wrong_source; /* our Call ID from another address */
	uint64_t rx_acks;         /* acks from the peer that moved forward */
	uint64_t rx_bad_acks;     /* acks for packets we never sent */
	uint64_t rx_too_long, rx_aborts;
	uint64_t tx_drops;        /* send failed (EAGAIN, ENOBUFS, routing) */
	uint64_t tx_over_window;  /* data sent with the peer's window full */
	uint32_t tx_unacked;      /* sent and not yet acked by the peer */
	uint32_t pty_backlog;     /* bytes waiting for the pty to drain */
};

/* Engine-wide: what cannot be charged to a call. */
struct gre_engine_stats {
	uint64_t rx_datagrams, rx_batches, rx_malformed, rx_unknown_call;
	uint64_t rx_errors, tx_datagrams, tx_batches, tx_errors, tx_fallbacks;
	uint64_t pty_writes, pty_reads;
	uint64_t rx_kernel_call;  /* for a gre_engine_ignore_call() Call ID */
	uint32_t calls;
};

/* Delayed acks, when no data packet carried the ack first: an ack-only
 * packet goes with the first packet that arrives this long or longer after
 * the first unacknowledged delivery, or this long after the last packet
 * when the stream stops, so never later than twice this after a delivery.
 * A steady stream is acked at its own packets' wakeups, none of a timer's
 * (issue 22: at 250 kbit/s the timer was a third of the engine's
 * wakeups). 100 ms is what the Windows client waits, and Windows keeps no
 * sliding window; a peer with RFC 2637's adaptive ack timeout (4.4)
 * learns the round trip from our acks, whatever it is. Half a window of
 * unacknowledged packets sends one at once, so a peer that honours our
 * window never stalls. */
#define GRE_ACK_DELAY_MS     100
#define GRE_RECV_WINDOW_DFLT 64
/* Bound of the per-call queue of bytes the pty would not take, allocated
 * only while the pty pushes back: ~190 frames of 1400 bytes, enough to ride
 * out a scheduling hiccup of pppd's side (tens of ms at tens of MB/s)
 * without turning into a bufferbloat queue. */
#define GRE_PTY_BACKLOG      (256 * 1024)

/* Open the raw socket bound to `bind_addr` (INADDR_ANY for all).
 * Returns NULL and sets errno on failure. */
struct gre_engine *gre_engine_new(struct in_addr bind_addr,
    const struct gre_ops *ops, void *arg);
/* Use an existing socket (tests, benchmarks). Takes ownership. */
struct gre_engine *gre_engine_new_fd(int fd, const struct gre_ops *ops, void *arg);
/* Frees any call still open (the daemon should have freed them first: its
 * pointers to them dangle afterwards). */
void gre_engine_free(struct gre_engine *e);
void gre_engine_stats(const struct gre_engine *e, struct gre_engine_stats *st);

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
 * pty_fd (the daemon closes it after gre_call_free) but makes it
 * nonblocking. Returns NULL with errno EEXIST if local_id is taken, EINVAL
 * on a bad argument, ENOMEM. The send ACCM is 0xffffffff (RFC 1662
 * default) until pppd's LCP says otherwise. */
struct gre_call *gre_call_new(struct gre_engine *e, uint16_t local_id,
    uint16_t peer_id, struct in_addr peer, int pty_fd, void *call_arg);
void gre_call_free(struct gre_call *c);

/* GRE for `local_id` is carried by someone else (the kernel's PPTP
 * channel, which a raw socket sees a copy of): while on, and no call of
 * ours has that id, its packets are counted in rx_kernel_call and dropped
 * without a log line. */
void gre_engine_ignore_call(struct gre_engine *e, uint16_t local_id, int on);

/* Every call is someone else's (`datapath kernel`): the raw socket would
 * only receive copies to throw away, a wake-up and a copy each. A socket
 * filter that accepts nothing stops them in the kernel, before they are
 * queued; sending is unaffected. Returns 0, or -1 with errno. */
int  gre_engine_receive_none(struct gre_engine *e);

/* Is a call using this local id? (for Call ID allocation) */
int  gre_engine_has_call(const struct gre_engine *e, uint16_t local_id);

/* The pty is readable / writable (the latter only while the engine asked
 * for it through ops->pty_want_write). */
void gre_call_pty_input(struct gre_call *c, uint64_t now_ms);
void gre_call_pty_output(struct gre_call *c);

/* Hold the frames toward pppd (in the call's backlog, acked as usual)
 * until pppd first writes to the pty, or until gre_call_release_pty. pppd
 * discards what its tty holds when it takes the line over (TCSAFLUSH, then
 * the PPP line discipline), and a client's first LCP Configure-Request
 * that arrives before then would be lost: the client would wait its LCP
 * restart timer (3 s) to send it again. pppd's first frame out is its own
 * Configure-Request, sent once the line is its. */
void gre_call_hold_pty(struct gre_call *c);
/* Deliver what was held and what comes (pppd is silent, say: it waits for
 * the peer to speak first). */
void gre_call_release_pty(struct gre_call *c);

/* Set-Link-Info, fields as they come. Kept for information only: toward
 * pppd the engine escapes every control character until it has seen
 * pppd's LCP open with an ACCM of its own (lcp.h), and then that one,
 * which is what pppd's line discipline actually drops unescaped. A Send
 * ACCM taken before LCP is open would let the peer's Configure-Request
 * reach pppd with its control octets bare, and pppd drops them; after it,
 * LCP's map is the one that matters. `recv_accm`: the pty inserts nothing
 * to delete. FLAG and ESCAPE are always escaped. */
void gre_call_set_accm(struct gre_call *c, uint32_t send_accm, uint32_t recv_accm);

/* The address this call's GRE leaves from (IP_PKTINFO): the local address
 * of its control connection, so that a client of a multi-homed server gets
 * GRE from the address it dialled. INADDR_ANY (the default): whatever the
 * socket's bind and routing give. */
void gre_call_set_local(struct gre_call *c, struct in_addr local);

/* The peer's advertised receive window (OCRQ), not honoured on purpose
 * (RFC 2637 4.2 asks a sender to stop at it; doc/architecture.md, "The
 * peer's receive window", has the whole case):
 * - no peer we know of enforces it on receipt: Windows advertises 64 and
 *   keeps no window itself; pptp-linux advertises 3, sends whatever pppd
 *   hands it, and first light through it loses < 1 % with us past its 3;
 * - a peer on Linux's pptp module sends no ack-only packets at all, so a
 *   one-way stream toward it would stall at every window until a timeout;
 * - honouring pptp-linux's 3 would cap a call at 3 packets per round
 *   trip, and PPTP retransmits nothing: there is no loss it prevents that
 *   TCP inside the tunnel does not handle itself.
 * What is kept: the window, and tx_over_window, the data packets sent
 * while the peer had `peer_window` or more unacknowledged: how far a
 * peer's window is from its traffic. */
void gre_call_set_window(struct gre_call *c, uint16_t peer_window);
/* The window we advertised (OCRP): an ack-only packet goes out as soon as
 * half of it is unacknowledged. Default GRE_RECV_WINDOW_DFLT. */
void gre_call_set_recv_window(struct gre_call *c, uint16_t our_window);

/* Where to store the next sequence number to send, now and after each
 * data packet (a journal's, privsep: the next worker continues from it);
 * NULL: nowhere. The engine's only store outside its own memory. */
void gre_call_mirror_seq(struct gre_call *c, uint32_t *slot);
/* A call taken over from a worker that died: the next data packet has
 * sequence number `next`, and every one before it counts as acked (the
 * window restarts; what the peer acks from now on is checked against
 * `next`). Toward pppd the engine escapes every control character from
 * then on, until it sees pppd's LCP open again (a renegotiation, which
 * most sessions never have): always safe, a few more bytes. */
void gre_call_resume(struct gre_call *c, uint32_t next);

void gre_call_stats(const struct gre_call *c, struct gre_stats *st);

#endif
