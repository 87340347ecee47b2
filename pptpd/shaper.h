/* Per-user rate limits on a session's ppp interface (the plugin's
 * rate_down/rate_up: the peers file's `rate`, RADIUS' WISPr attributes, a
 * CoA-Request). DOWN (server to client) is the interface's egress: a
 * token bucket (tbf) as its root qdisc, which queues what exceeds the rate
 * for up to SHAPER_LATENCY_MS and drops the rest. UP (client to server)
 * is its ingress: a matchall filter under the ingress (or an admin's
 * clsact) qdisc that polices to the rate (act_police drops the excess):
 * traffic that arrives cannot be queued without an extra device. Both
 * through rtnetlink (libmnl), in the kernel's traffic control, so the
 * data path (our engine or the kernel's PPTP channel) is the same to it.
 *
 * An admin's qdiscs are never replaced or deleted: an interface whose
 * root qdisc is not the kernel's default or ours is not shaped (the rate
 * is refused with the reason), and our policing filter lets what conforms
 * go on to the admin's ingress filters. An interface without a rate is
 * never touched.
 *
 * Why our own messages and not libnl-route-3: libnl has tbf and the
 * ingress qdisc but no police action, and libmnl already carries the
 * IPv6 routes (nd.c); the tc structures come from the kernel's UAPI
 * headers. A request waits for the kernel's answer (microseconds; the
 * first use of a classifier may load its module). */
#ifndef PPTPD_SHAPER_H
#define PPTPD_SHAPER_H

#include <stddef.h>
#include <stdint.h>

struct shaper;

/* The bounds of a rate (bits/s) pptpd applies, the same as the peers
 * file's (proto/peers.h) and a RADIUS attribute's. 0 is "no limit that
 * way". */
#define SHAPER_RATE_MIN     8000ULL
#define SHAPER_RATE_MAX     10000000000ULL
/* What exceeds the rate waits at most this long in the egress queue
 * (then is dropped): enough to keep a TCP flow at the rate, short enough
 * not to add a bufferbloat of seconds. */
#define SHAPER_LATENCY_MS   50
/* The egress bucket holds this many ms at the rate, the ingress policer
 * this many (a policer cannot queue: a TCP flow's burst of a round trip
 * must fit or it is cut), each at least SHAPER_MIN_BURST bytes: two
 * full-sized packets, or a packet would never pass at a low rate. The
 * egress bucket keeps no more tokens than it holds: when the link below
 * it stalls (pppd or the host busy, as a virtual server's steal time
 * does), a bucket of 20 ms lost what the stall was owed and delivered
 * 10 % under the rate in the test bed; 100 ms rides over such stalls. */
#define SHAPER_EGRESS_BURST_MS   100
#define SHAPER_INGRESS_BURST_MS  200
#define SHAPER_MIN_BURST         3200

struct shaper_stats {
	uint64_t applied;     /* rates set on an interface (a change counts) */
	uint64_t failed;      /* a rate that could not be set */
};

/* 0 (none that way) or within SHAPER_RATE_MIN..SHAPER_RATE_MAX. */
int shaper_rate_ok(uint64_t bps);

/* The netlink socket. NULL with `why` set. */
struct shaper *shaper_open(char *why, size_t whylen);
void shaper_close(struct shaper *s);

/* Limit `ifname` to `down` bits/s egress and `up` bits/s ingress (0: no
 * limit that way, and ours that way is removed; both 0: everything of
 * ours is). A change replaces what we set before, never leaving a moment
 * unlimited. Returns the interface's index (the link's key for
 * shaper_clear), or 0 with `why`: then each way keeps what it had. */
unsigned shaper_set(struct shaper *s, const char *ifname, uint64_t down,
    uint64_t up, char *why, size_t whylen);
/* Remove what we set on interface `ifindex` (a shaper_set's answer) if it
 * is still there, and forget the link. */
void shaper_clear(struct shaper *s, unsigned ifindex);
void shaper_stats(const struct shaper *s, struct shaper_stats *st);

/* What a shaper has set on one link, for the monitor an upgrade starts
 * (proto/handover.h): it takes the links over instead of finding qdiscs
 * and filters it did not make. */
struct shaper_link_state {
	uint64_t down;           /* egress rate; 0: none */
	uint32_t prio;           /* the policing filter's priority; 0: none */
	uint32_t ingress_ours;   /* we made its ingress qdisc */
};
/* Link `ifindex`'s state; -1 when nothing of ours is on it. */
int shaper_link_get(const struct shaper *s, unsigned ifindex,
    struct shaper_link_state *st);
/* Take link `ifindex` over as `st` says. 0, or -1 (out of memory). */
int shaper_link_adopt(struct shaper *s, unsigned ifindex,
    const struct shaper_link_state *st);

/* "2M", "512k", "1.5M", "64000" (bits/s) for the log and pptpctl. */
const char *shaper_rate_str(uint64_t bps, char *buf, size_t len);

#endif
