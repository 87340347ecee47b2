/* The sessions' /64 routes (rtnetlink, libmnl): what nd.c adds for a
 * session without privilege separation, and the monitor with it. Only
 * ever a route of our own protocol number, never over another's. */
#ifndef PPTPD_ROUTE6_H
#define PPTPD_ROUTE6_H

#include <netinet/in.h>
#include <stddef.h>

/* The route protocol of our routes (rtnetlink's RTPROT_*: the kernel
 * does not interpret those above RTPROT_STATIC's 4): one that neither the
 * kernel's rtnetlink.h nor iproute2's rt_protos names (188 is OSPF's),
 * so `ip -6 route show proto 173` lists what pptpd added and nothing of a
 * routing daemon's. */
#define ROUTE6_RTPROT  173

struct route6;

/* The netlink socket. NULL with `why` set. */
struct route6 *route6_open(char *why, size_t whylen);
void route6_close(struct route6 *r);

/* prefix/64 to interface `ifindex`. Never over a route of someone
 * else's: a replace matches any route of that destination and metric,
 * whoever made it, and ours would then delete it at the session's end.
 * 0, or -1 with errno (EEXIST: a route to that /64 is there). */
int route6_add(struct route6 *r, unsigned ifindex, const struct in6_addr *prefix);
/* 0, or -1 with errno (ESRCH, ENODEV: gone already, with its interface). */
int route6_del(struct route6 *r, unsigned ifindex, const struct in6_addr *prefix);
/* route6_add's failure `err` (an errno) in words for the log. */
const char *route6_strerror(int err);

#endif
