/* Router Advertisements and Solicitations; see ra.h. Every field at an
 * explicit offset, big-endian, as msg.c does for PPTP. */
#include <string.h>

#include "proto/ra.h"
#include "common/byteorder.h"

/* Offsets in the advertisement (RFC 4861 4.2, 4.6.2, 4.6.4). */
#define RA_OFF_TYPE          0
#define RA_OFF_CODE          1
#define RA_OFF_CUR_HOP       4
#define RA_OFF_FLAGS         5
#define RA_OFF_ROUTER_LIFE   6
#define RA_OFF_REACHABLE     8
#define RA_OFF_RETRANS       12
#define RA_PFX_OFF_TYPE      0
#define RA_PFX_OFF_LEN       1
#define RA_PFX_OFF_PLEN      2
#define RA_PFX_OFF_FLAGS     3
#define RA_PFX_OFF_VALID     4
#define RA_PFX_OFF_PREFERRED 8
#define RA_PFX_OFF_PREFIX    16
#define RA_MTU_OFF_TYPE      0
#define RA_MTU_OFF_LEN       1
#define RA_MTU_OFF_MTU       4

int
ra_build(const struct ra_info *ri, uint8_t *buf, size_t len)
{
	size_t n = RA_HDR_LEN + RA_PREFIX_OPT_LEN +
	    (ri->mtu ? RA_MTU_OPT_LEN : 0);

	if (len < n || ri->prefix_len != 64 ||
	    (ri->mtu != 0 && ri->mtu < RA_MTU_MIN))
		return -1;
	memset(buf, 0, n);
	buf[RA_OFF_TYPE] = RA_ICMP6_RA;
	buf[RA_OFF_CUR_HOP] = RA_CUR_HOP_LIMIT;
	be16_put(buf + RA_OFF_ROUTER_LIFE,
	    (uint16_t)(ri->withdraw ? 0 : RA_ROUTER_LIFETIME));
	uint8_t *p = buf + RA_HDR_LEN;
	p[RA_PFX_OFF_TYPE] = RA_OPT_PREFIX;
	p[RA_PFX_OFF_LEN] = RA_PREFIX_OPT_LEN / RA_OPT_UNIT;
	p[RA_PFX_OFF_PLEN] = (uint8_t)ri->prefix_len;
	p[RA_PFX_OFF_FLAGS] = RA_PREFIX_FLAG_L | RA_PREFIX_FLAG_A;
	/* A withdrawal sends valid 0 too: RFC 4862 5.5.3 e) then cuts the
	 * client's remaining lifetime to two hours (a larger value, sent
	 * again, would renew it for a day). */
	be32_put(p + RA_PFX_OFF_VALID, ri->withdraw ? 0 : RA_VALID_LIFETIME);
	be32_put(p + RA_PFX_OFF_PREFERRED, ri->withdraw ? 0 : RA_PREFERRED_LIFETIME);
	memcpy(p + RA_PFX_OFF_PREFIX, ri->prefix.s6_addr, 16);
	if (ri->mtu) {
		p = buf + RA_HDR_LEN + RA_PREFIX_OPT_LEN;
		p[RA_MTU_OFF_TYPE] = RA_OPT_MTU;
		p[RA_MTU_OFF_LEN] = RA_MTU_OPT_LEN / RA_OPT_UNIT;
		be32_put(p + RA_MTU_OFF_MTU, ri->mtu);
	}
	return (int)n;
}

/* The options after `off`: each of length > 0 and inside the message. */
static int
ra_options_ok(const uint8_t *msg, size_t len, size_t off)
{
	while (off < len) {
		if (len - off < 2 || msg[off + 1] == 0 ||
		    (size_t)msg[off + 1] * RA_OPT_UNIT > len - off)
			return 0;
		off += (size_t)msg[off + 1] * RA_OPT_UNIT;
	}
	return 1;
}

int
ra_rs_valid(const uint8_t *msg, size_t len)
{
	if (len < RA_RS_HDR_LEN || msg[RA_OFF_TYPE] != RA_ICMP6_RS ||
	    msg[RA_OFF_CODE] != 0 || !ra_options_ok(msg, len, RA_RS_HDR_LEN))
		return -1;
	return 0;
}

int
ra_parse(const uint8_t *msg, size_t len, struct ra_info *ri,
    unsigned *router_lifetime, uint32_t *valid, uint32_t *preferred)
{
	int have_prefix = 0;

	if (len < RA_HDR_LEN || msg[RA_OFF_TYPE] != RA_ICMP6_RA ||
	    msg[RA_OFF_CODE] != 0 || !ra_options_ok(msg, len, RA_HDR_LEN))
		return -1;
	memset(ri, 0, sizeof(*ri));
	*router_lifetime = be16_get(msg + RA_OFF_ROUTER_LIFE);
	for (size_t off = RA_HDR_LEN; off < len;
	    off += (size_t)msg[off + 1] * RA_OPT_UNIT) {
		const uint8_t *p = msg + off;
		if (p[0] == RA_OPT_PREFIX && p[1] * RA_OPT_UNIT == RA_PREFIX_OPT_LEN) {
			ri->prefix_len = p[RA_PFX_OFF_PLEN];
			*valid = be32_get(p + RA_PFX_OFF_VALID);
			*preferred = be32_get(p + RA_PFX_OFF_PREFERRED);
			memcpy(ri->prefix.s6_addr, p + RA_PFX_OFF_PREFIX, 16);
			have_prefix = 1;
		} else if (p[0] == RA_OPT_MTU && p[1] * RA_OPT_UNIT == RA_MTU_OPT_LEN) {
			ri->mtu = be32_get(p + RA_MTU_OFF_MTU);
		}
	}
	ri->withdraw = *router_lifetime == 0;
	return have_prefix ? 0 : -1;
}
