/* IPv4/UDP build and parse (see ipudp.h). */
#include "client/ipudp.h"

#include "common/byteorder.h"

#include <string.h>

#define IP_VERSION_IHL5  0x45
#define IP_TTL_DEFAULT   64
#define IP_PROTO_UDP     17
#define IP_FLAG_DF       0x4000
#define IP_MF_OFFSET     0x3fff    /* more-fragments flag and offset */
enum { IPH_VHL = 0, IPH_TOTLEN = 2, IPH_ID = 4, IPH_FRAG = 6, IPH_TTL = 8,
	IPH_PROTO = 9, IPH_CSUM = 10, IPH_SRC = 12, IPH_DST = 16, IPH_END = 20 };
enum { UDP_SPORT = 0, UDP_DPORT = 2, UDP_LEN = 4, UDP_CSUM = 6, UDP_END = 8 };

static uint32_t sum16(uint32_t s, const uint8_t *p, size_t n)
{
	for (; n > 1; p += 2, n -= 2)
		s += be16_get(p);
	if (n)
		s += (uint32_t)p[0] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint32_t pseudo(const uint8_t *ip, size_t udp_len)
{
	uint32_t s = sum16(0, ip + IPH_SRC, 8);
	return s + IP_PROTO_UDP + (uint32_t)udp_len;
}

size_t ipudp_build(uint8_t *out, const struct ipudp *u)
{
	size_t udp_len = UDP_END + u->len, tot = IPH_END + udp_len;
	uint8_t *udp = out + IPH_END;

	memset(out, 0, IPUDP_HDR_LEN);
	out[IPH_VHL] = IP_VERSION_IHL5;
	be16_put(out + IPH_TOTLEN, (uint16_t)tot);
	be16_put(out + IPH_FRAG, IP_FLAG_DF);
	out[IPH_TTL] = IP_TTL_DEFAULT;
	out[IPH_PROTO] = IP_PROTO_UDP;
	memcpy(out + IPH_SRC, &u->src, 4);
	memcpy(out + IPH_DST, &u->dst, 4);
	be16_put(out + IPH_CSUM, fold(sum16(0, out, IPH_END)));
	be16_put(udp + UDP_SPORT, u->sport);
	be16_put(udp + UDP_DPORT, u->dport);
	be16_put(udp + UDP_LEN, (uint16_t)udp_len);
	if (u->payload != udp + UDP_END)
		memmove(udp + UDP_END, u->payload, u->len);
	uint16_t c = fold(sum16(pseudo(out, udp_len), udp, udp_len));
	be16_put(udp + UDP_CSUM, c ? c : 0xffff);
	return tot;
}

int ipudp_parse(const uint8_t *ip, size_t len, struct ipudp *u)
{
	if (len < IPUDP_HDR_LEN || (ip[IPH_VHL] >> 4) != 4)
		return -1;
	size_t hl = (size_t)(ip[IPH_VHL] & 0x0f) * 4;
	size_t tot = be16_get(ip + IPH_TOTLEN);
	if (hl < IPH_END || tot > len || tot < hl + UDP_END ||
	    ip[IPH_PROTO] != IP_PROTO_UDP ||
	    (be16_get(ip + IPH_FRAG) & IP_MF_OFFSET) != 0 ||
	    fold(sum16(0, ip, hl)) != 0)
		return -1;
	const uint8_t *udp = ip + hl;
	size_t ulen = be16_get(udp + UDP_LEN);
	if (ulen < UDP_END || ulen > tot - hl)
		return -1;
	if (be16_get(udp + UDP_CSUM) != 0 &&
	    fold(sum16(pseudo(ip, ulen), udp, ulen)) != 0)
		return -1;
	memcpy(&u->src, ip + IPH_SRC, 4);
	memcpy(&u->dst, ip + IPH_DST, 4);
	u->sport = be16_get(udp + UDP_SPORT);
	u->dport = be16_get(udp + UDP_DPORT);
	u->payload = udp + UDP_END;
	u->len = ulen - UDP_END;
	return 0;
}
