/* IPv6 prefixes as pptpd.conf writes them ("2001:db8:100::/56"): one
 * parsed and checked (what pool6.c hands out of, and a RADIUS
 * Framed-IPv6-Prefix), and the set `ipv6-radius-prefixes` names: the
 * prefixes a RADIUS server may give sessions /64s out of. A /64 routed
 * to a session is a claim on its traffic, so only these and the pool's
 * are ever routed (doc/design/privsep.md, "Which /64 the monitor
 * routes"). */
#ifndef PPTPD_PREFIX6_H
#define PPTPD_PREFIX6_H

#include <netinet/in.h>
#include <stddef.h>

#define PREFIX6_SET_MAX   16     /* prefixes in ipv6-radius-prefixes */
#define PREFIX6_LEN_SESSION 64   /* a session's prefix (SLAAC's) */

/* "ADDR/LEN" into addr and len, with LEN in [minlen, maxlen], the host
 * bits zero, and a prefix that can be a site's (not unspecified,
 * loopback, link-local or multicast). 0, or -1 with err set ("reason",
 * without the key's name). */
int prefix6_parse(const char *text, unsigned minlen, unsigned maxlen,
    struct in6_addr *addr, unsigned *len, char *err, size_t errlen);

struct prefix6_set {
	unsigned n;
	struct {
		struct in6_addr addr;
		unsigned        len;
	} p[PREFIX6_SET_MAX];
};

/* "P/L,P/L,...": up to PREFIX6_SET_MAX prefixes of length 1..64, none
 * holding a multicast, link-local or loopback address. 0, or -1 with err
 * set and *out empty. */
int prefix6_set_parse(const char *text, struct prefix6_set *out, char *err,
    size_t errlen);

/* Unspecified, loopback, link-local or multicast: never a session's. */
int prefix6_is_special(const struct in6_addr *a);

/* Is `p64` (a /64) inside one of the set's prefixes? */
int prefix6_set_holds(const struct prefix6_set *s, const struct in6_addr *p64);

#endif
