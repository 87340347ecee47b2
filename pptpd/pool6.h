/* IPv6 prefix pool: each session gets a /64 of its own out of a
 * configured prefix (pptpd.conf `ipv6-prefix-pool 2001:db8:100::/56`),
 * announced to it by Router Advertisements and routed to its ppp
 * interface (issue 20, item 4). A pool never hands one /64 to two live
 * sessions.
 *
 * Spec: one IPv6 prefix in the usual text form with a length from
 * POOL6_LEN_MIN to 64 (/64: a pool of one), its host bits zero. The /64s
 * are handed out in order, the one freed longest ago first when the
 * pool is full once, as pool.c does for addresses. */
#ifndef PPTPD_POOL6_H
#define PPTPD_POOL6_H

#include <netinet/in.h>
#include <stddef.h>

#include "pptpd/prefix6.h"

#define POOL6_LEN_MIN  48        /* at most 2^16 /64s in one pool */
#define POOL6_SESSION_LEN PREFIX6_LEN_SESSION

struct pool6;

/* Parse `spec`. NULL with `err` set ("reason", without the key's name) on
 * a malformed address, a length outside POOL6_LEN_MIN..64, host bits set,
 * or a multicast, link-local or unspecified prefix. */
struct pool6 *pool6_new(const char *spec, char *err, size_t errlen);
void   pool6_free(struct pool6 *p);
/* One session's prefix, "2001:db8:1:2::/64" (as RADIUS' Framed-IPv6-Prefix
 * is reported), checked as a pool's is: 0 and `out` set, or -1 with `err`
 * set (not a /64, host bits set, not one to hand out). */
int    pool6_session_prefix(const char *text, struct in6_addr *out,
    char *err, size_t errlen);
/* Take a free /64 into `out`; -1 when the pool is exhausted. */
int    pool6_alloc(struct pool6 *p, struct in6_addr *out);
/* Mark `prefix` (a /64 of this pool) taken, as a reload's new pool learns
 * what live sessions hold, or a RADIUS Framed-IPv6-Prefix inside the
 * pool; -1 when it is not one of the pool's or already taken. */
int    pool6_take(struct pool6 *p, const struct in6_addr *prefix);
/* Give `prefix` back; -1, changing nothing, when it was not taken. */
int    pool6_release(struct pool6 *p, const struct in6_addr *prefix);
size_t pool6_size(const struct pool6 *p);
size_t pool6_available(const struct pool6 *p);

#endif
