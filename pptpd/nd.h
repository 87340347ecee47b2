/* IPv6 on the sessions' ppp links (pptpd.conf `ipv6-prefix-pool`): each
 * session's /64 is routed to its ppp interface and announced to its
 * client by Router Advertisements (proto/ra.h), sent when IPV6CP comes
 * up, ND_INITIAL_RAS times in the first minute, every ND_INTERVAL_MS
 * after, and in answer to the client's Router Solicitations. The client
 * forms its address from the prefix (SLAAC); the interface identifiers are
 * IPV6CP's (pppd's +ipv6).
 *
 * One raw ICMPv6 socket for every link (it sends with the link's index,
 * and receives only Solicitations, from the all-routers group joined on
 * each link) and route6.h's netlink socket for the routes (with `privsep
 * yes` the monitor routes, and nd only advertises). A route goes with its
 * interface when pppd removes it; nd removes its own when IPV6CP goes
 * down on a link that stays. */
#ifndef PPTPD_ND_H
#define PPTPD_ND_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

struct loop;
struct nd;

/* Three advertisements 4 s apart at first (a client's address must not
 * wait on a lost one), then every 200 s: far inside RA_ROUTER_LIFETIME. */
#define ND_INITIAL_RAS      3
#define ND_INITIAL_MS       4000
#define ND_INTERVAL_MS      200000
/* A Solicitation is answered at most this often per link (RFC 4861
 * 10's MIN_DELAY_BETWEEN_RAS), so a client that floods them gets one
 * advertisement every 3 s, not one each. */
#define ND_MIN_DELAY_MS     3000
/* The socket, and with `routes` the netlink handle (without: the /64s
 * are routed by someone else, privsep's monitor, and nd_link_up may not
 * be asked to route). NULL with `why` set when IPv6 is not there (no IPv6
 * in the kernel, no privilege). */
struct nd *nd_open(struct loop *loop, int routes, char *why, size_t whylen);
void nd_close(struct nd *n);

/* IPV6CP is up on `ifname` for call `owner`: route `prefix`/64 to it
 * (when `route`; else the monitor has, route6.h) and advertise it. -1
 * with `why` set (no such interface, the route refused); nothing is left
 * half done. A link already up is renewed (a new prefix or MTU after a
 * renegotiation). */
int nd_link_up(struct nd *n, const char *ifname, unsigned owner,
    const struct in6_addr *prefix, int route, char *why, size_t whylen);
/* IPV6CP went down on `ifname`, or the session ends: a last
 * advertisement with the router's and the prefix's preferred lifetimes 0
 * (when the interface is still there), our route deleted, the link
 * forgotten. Nothing when the link is not up. */
void nd_link_down(struct nd *n, const char *ifname, unsigned owner);

struct nd_stats {
	uint64_t ras_sent, rs_received, rs_dropped;
	unsigned links;
};
void nd_stats(const struct nd *n, struct nd_stats *st);

#endif
