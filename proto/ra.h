/* Router Advertisements and Solicitations on a ppp link (RFC 4861 4.1,
 * 4.2, 4.6.2, 4.6.4): what pptpd tells a session's client about its /64
 * (issue 20, item 4). The client forms its address from the prefix
 * (SLAAC, RFC 4862: the A flag) and the interface identifier IPV6CP gave
 * it; a ppp link has no link-layer address, so no such option is sent.
 * The ICMPv6 checksum is left zero: the kernel fills it in for raw
 * ICMPv6 sockets (RFC 3542 3.1). */
#ifndef PROTO_RA_H
#define PROTO_RA_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#define RA_ICMP6_RS          133
#define RA_ICMP6_RA          134
#define RA_HOP_LIMIT_LINK    255   /* sent and required on receipt */
#define RA_CUR_HOP_LIMIT     64    /* advertised to the client */
#define RA_OPT_PREFIX        3
#define RA_OPT_MTU           5
#define RA_OPT_UNIT          8     /* option lengths count 8 octets */
#define RA_PREFIX_FLAG_L     0x80  /* on-link */
#define RA_PREFIX_FLAG_A     0x40  /* autonomous address configuration */
#define RA_HDR_LEN           16
#define RA_RS_HDR_LEN        8
#define RA_PREFIX_OPT_LEN    32
#define RA_MTU_OPT_LEN       8
#define RA_LEN               (RA_HDR_LEN + RA_PREFIX_OPT_LEN + RA_MTU_OPT_LEN)
#define RA_MTU_MIN           1280  /* IPv6's minimum link MTU */

/* The router's and the prefix's lifetimes, in seconds. Router lifetime
 * 1800 (RFC 4861's default of 3 x MaxRtrAdvInterval at 600 s); the
 * prefix valid for a day and preferred for 4 hours, renewed by every
 * advertisement. A withdrawal (the session ending) sends 0 for all
 * three: the client stops using the router and the address for new
 * connections at once, and keeps the address at most two hours more
 * (RFC 4862 5.5.3 e). */
#define RA_ROUTER_LIFETIME   1800
#define RA_VALID_LIFETIME    86400
#define RA_PREFERRED_LIFETIME 14400

struct ra_info {
	struct in6_addr prefix;   /* the session's /64 */
	unsigned prefix_len;      /* 64 for SLAAC */
	unsigned mtu;             /* the ppp link's; 0: no MTU option */
	int withdraw;             /* lifetimes 0: the session is ending */
};

/* The advertisement into buf (at least RA_LEN octets); its length, or
 * -1 when the facts are not sendable (a prefix length other than 64 with
 * the A flag, an MTU below 1280). */
int ra_build(const struct ra_info *ri, uint8_t *buf, size_t len);
/* A Router Solicitation as received (ICMPv6 header first): 0 when it is
 * one by RFC 4861 6.1.1's checks that need only the message (type, code
 * 0, at least 8 octets, no option of length 0), -1 otherwise. The hop
 * limit of 255 is the caller's to check (IPV6_RECVHOPLIMIT). */
int ra_rs_valid(const uint8_t *msg, size_t len);
/* An advertisement as ra_build makes it, read back (tests, fuzzing): 0
 * and ri filled, or -1. */
int ra_parse(const uint8_t *msg, size_t len, struct ra_info *ri,
    unsigned *router_lifetime, uint32_t *valid, uint32_t *preferred);

#endif
