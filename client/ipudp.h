/* IPv4/UDP datagrams built and parsed by pptp-load itself: the datagrams
 * inside each tunnel, with the addresses IPCP gave the session. */
#ifndef CLIENT_IPUDP_H
#define CLIENT_IPUDP_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#define IPUDP_HDR_LEN 28      /* IPv4 without options + UDP */

struct ipudp {
	struct in_addr src, dst;
	uint16_t sport, dport;
	const uint8_t *payload;
	size_t len;
};

/* Header and payload into `out` (IPUDP_HDR_LEN + len bytes), both
 * checksums filled; returns the datagram's length. */
size_t ipudp_build(uint8_t *out, const struct ipudp *u);
/* A UDP datagram (checksums checked); 0, or -1 for anything else. */
int ipudp_parse(const uint8_t *ip, size_t len, struct ipudp *u);

#endif
