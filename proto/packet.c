/* Enhanced GRE (RFC 2637 4.1) header build and parse. */
#include "proto/packet.h"

#include "common/byteorder.h"

#include <string.h>

/* First octet: C R K S s Recur(3). */
#define GRE_F_CSUM        0x80
#define GRE_F_ROUTING     0x40
#define GRE_F_KEY         0x20
#define GRE_F_SEQ         0x10
#define GRE_F_SSR         0x08
#define GRE_RECUR_MASK    0x07
/* Second octet: A Flags(4) Ver(3). */
#define GRE_F_ACK         0x80
#define GRE_FLAGS_MASK    0x78
#define GRE_VER_MASK      0x07
#define GRE_VERSION_PPTP  1
#define GRE_PROTO_PPP     0x880b
/* Offsets in the header. */
#define GRE_OFF_FLAGS0    0
#define GRE_OFF_FLAGS1    1
#define GRE_OFF_PROTO     2
#define GRE_OFF_PLEN      4
#define GRE_OFF_CALLID    6
#define GRE_OFF_OPT       8
#define GRE_OPT_LEN       4

#define IPV4_MIN_HDR      20
#define IPV4_VERSION      4
#define IPV4_OFF_TOTLEN   2
#define IPV4_OFF_PROTO    9
#define IPV4_OFF_SRC      12
#define IPPROTO_GRE_NUM   47

size_t gre_packet_build(uint8_t *out, uint16_t call_id, uint16_t payload_len,
    int has_seq, uint32_t seq, int has_ack, uint32_t ack)
{
	size_t n = GRE_OFF_OPT;

	out[GRE_OFF_FLAGS0] = GRE_F_KEY | (has_seq ? GRE_F_SEQ : 0);
	out[GRE_OFF_FLAGS1] = (has_ack ? GRE_F_ACK : 0) | GRE_VERSION_PPTP;
	be16_put(out + GRE_OFF_PROTO, GRE_PROTO_PPP);
	be16_put(out + GRE_OFF_PLEN, payload_len);
	be16_put(out + GRE_OFF_CALLID, call_id);
	if (has_seq) {
		be32_put(out + n, seq);
		n += GRE_OPT_LEN;
	}
	if (has_ack) {
		be32_put(out + n, ack);
		n += GRE_OPT_LEN;
	}
	return n;
}

static enum gre_parse_result check_flags(const uint8_t *p)
{
	if ((p[GRE_OFF_FLAGS1] & GRE_VER_MASK) != GRE_VERSION_PPTP)
		return GRE_PARSE_VERSION;
	if (be16_get(p + GRE_OFF_PROTO) != GRE_PROTO_PPP)
		return GRE_PARSE_PROTOCOL;
	if ((p[GRE_OFF_FLAGS0] & (GRE_F_CSUM | GRE_F_ROUTING | GRE_F_SSR |
	    GRE_RECUR_MASK)) || (p[GRE_OFF_FLAGS1] & GRE_FLAGS_MASK))
		return GRE_PARSE_FLAGS;
	if (!(p[GRE_OFF_FLAGS0] & GRE_F_KEY))
		return GRE_PARSE_NO_KEY;
	return GRE_PARSE_OK;
}

enum gre_parse_result gre_packet_parse(const uint8_t *p, size_t len,
    struct gre_packet *pkt)
{
	enum gre_parse_result r;
	size_t hdr = GRE_OFF_OPT;

	if (len < GRE_HDR_MIN)
		return GRE_PARSE_SHORT;
	if ((r = check_flags(p)) != GRE_PARSE_OK)
		return r;
	pkt->has_seq = (p[GRE_OFF_FLAGS0] & GRE_F_SEQ) != 0;
	pkt->has_ack = (p[GRE_OFF_FLAGS1] & GRE_F_ACK) != 0;
	hdr += (pkt->has_seq + pkt->has_ack) * GRE_OPT_LEN;
	if (len < hdr)
		return GRE_PARSE_SHORT;
	if (!pkt->has_seq && !pkt->has_ack)
		return GRE_PARSE_EMPTY;
	pkt->payload_len = be16_get(p + GRE_OFF_PLEN);
	pkt->call_id = be16_get(p + GRE_OFF_CALLID);
	if (pkt->payload_len > len - hdr)
		return GRE_PARSE_LENGTH;
	if (pkt->payload_len > GRE_MAX_PAYLOAD)
		return GRE_PARSE_TOO_BIG;
	if (!pkt->has_seq && pkt->payload_len)
		return GRE_PARSE_ACK_PAYLOAD;
	if (pkt->has_seq && !pkt->payload_len)
		return GRE_PARSE_NO_PAYLOAD;
	/* The payload length must be exactly what follows the header
	 * (RFC 2637 4.1 has no padding). No peer pads: pptp-linux and the
	 * Linux pptp module write the payload length of exactly the octets
	 * they send, Windows clients are not known to do otherwise, and
	 * link-layer padding never reaches a raw socket (the kernel trims
	 * to the IPv4 total length).
	 * Octets the length field disowns would be a second, forged reading
	 * of the packet; accepting it would consume a sequence number with a
	 * truncated payload and turn the real packet into a duplicate. */
	if (pkt->payload_len < len - hdr)
		return GRE_PARSE_LENGTH_MISMATCH;
	pkt->seq = pkt->has_seq ? be32_get(p + GRE_OFF_OPT) : 0;
	pkt->ack = pkt->has_ack ? be32_get(p + hdr - GRE_OPT_LEN) : 0;
	pkt->payload = p + hdr;
	return GRE_PARSE_OK;
}

enum gre_parse_result gre_packet_parse_ip(const uint8_t *p, size_t len,
    struct gre_packet *pkt)
{
	size_t ihl;

	if (len < IPV4_MIN_HDR)
		return GRE_PARSE_IP_SHORT;
	if ((p[0] >> 4) != IPV4_VERSION)
		return GRE_PARSE_IP_VERSION;
	ihl = (size_t)(p[0] & 0x0f) * 4;
	if (ihl < IPV4_MIN_HDR || ihl > len)
		return GRE_PARSE_IP_HDRLEN;
	if (p[IPV4_OFF_PROTO] != IPPROTO_GRE_NUM)
		return GRE_PARSE_IP_PROTO;
	/* Linux hands a raw socket the whole datagram, total length in
	 * network order and equal to what was received (trailing link-layer
	 * octets already trimmed): anything else is not a datagram we can
	 * trust the GRE length of. */
	if (be16_get(p + IPV4_OFF_TOTLEN) != len)
		return GRE_PARSE_IP_LENGTH;
	memcpy(&pkt->src.s_addr, p + IPV4_OFF_SRC, sizeof(pkt->src.s_addr));
	return gre_packet_parse(p + ihl, len - ihl, pkt);
}

const char *gre_packet_strerror(enum gre_parse_result r)
{
	static const char *const s[GRE_PARSE__COUNT] = {
		[GRE_PARSE_OK] = "ok",
		[GRE_PARSE_IP_SHORT] = "short IPv4 header",
		[GRE_PARSE_IP_VERSION] = "not IPv4",
		[GRE_PARSE_IP_HDRLEN] = "bad IPv4 header length",
		[GRE_PARSE_IP_PROTO] = "not GRE",
		[GRE_PARSE_SHORT] = "short GRE header",
		[GRE_PARSE_VERSION] = "GRE version not 1",
		[GRE_PARSE_PROTOCOL] = "GRE protocol not PPP",
		[GRE_PARSE_FLAGS] = "GRE flags not allowed",
		[GRE_PARSE_NO_KEY] = "GRE key missing",
		[GRE_PARSE_LENGTH] = "payload length past the end",
		[GRE_PARSE_LENGTH_MISMATCH] = "payload length disagrees with datagram",
		[GRE_PARSE_IP_LENGTH] = "IPv4 total length disagrees with datagram",
		[GRE_PARSE_TOO_BIG] = "payload too big",
		[GRE_PARSE_EMPTY] = "neither data nor ack",
		[GRE_PARSE_ACK_PAYLOAD] = "payload without sequence number",
		[GRE_PARSE_NO_PAYLOAD] = "sequence number without payload",
	};

	return (unsigned)r < GRE_PARSE__COUNT ? s[r] : "unknown";
}
