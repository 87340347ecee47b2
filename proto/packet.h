/* Enhanced GRE packets (RFC 2637 4.1): build the header of an outgoing
 * packet, parse and validate an incoming one. The wire layout stays private
 * to packet.c; callers see only this decoded form. */
#ifndef PROTO_PACKET_H
#define PROTO_PACKET_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

/* Header sizes: flags+protocol and key, then seq and ack when present. */
#define GRE_HDR_MIN       8
#define GRE_HDR_MAX       16
/* Largest payload accepted from the wire: what the reorder buffer can hold
 * (a PPP MRU of 1500 plus headers fits with room to spare). */
#define GRE_MAX_PAYLOAD   2048

enum gre_parse_result {
	GRE_PARSE_OK = 0,
	GRE_PARSE_IP_SHORT,       /* shorter than an IPv4 header */
	GRE_PARSE_IP_VERSION,     /* not IPv4 */
	GRE_PARSE_IP_HDRLEN,      /* IHL below 5 or past the end */
	GRE_PARSE_IP_PROTO,       /* not protocol 47 */
	GRE_PARSE_IP_LENGTH,      /* IPv4 total length is not the datagram's */
	GRE_PARSE_SHORT,          /* shorter than its GRE header */
	GRE_PARSE_VERSION,        /* GRE version other than 1 (enhanced) */
	GRE_PARSE_PROTOCOL,       /* protocol type other than PPP 0x880B */
	GRE_PARSE_FLAGS,          /* C, R, s, recursion or reserved flags set */
	GRE_PARSE_NO_KEY,         /* K bit clear */
	GRE_PARSE_LENGTH,         /* payload length past the end of the packet */
	GRE_PARSE_LENGTH_MISMATCH,/* payload length short of the packet's end */
	GRE_PARSE_TOO_BIG,        /* payload longer than GRE_MAX_PAYLOAD */
	GRE_PARSE_EMPTY,          /* neither sequence number nor ack */
	GRE_PARSE_ACK_PAYLOAD,    /* payload without a sequence number */
	GRE_PARSE_NO_PAYLOAD,     /* sequence number without payload */
	GRE_PARSE__COUNT
};

struct gre_packet {
	struct in_addr src;       /* from the IPv4 header (parse_ip only) */
	uint16_t call_id;         /* low half of the key: our Call ID */
	uint16_t payload_len;
	uint8_t  has_seq, has_ack;
	uint32_t seq, ack;
	const uint8_t *payload;   /* points into the parsed buffer */
};

/* Write the header of a data (has_seq) and/or ack (has_ack) packet for the
 * peer's `call_id` into `out` (GRE_HDR_MAX bytes). Returns its length: 16
 * for data+ack, 12 for data only or ack only. An ack-only packet carries
 * its ack where a data packet has its sequence number. */
size_t gre_packet_build(uint8_t *out, uint16_t call_id, uint16_t payload_len,
    int has_seq, uint32_t seq, int has_ack, uint32_t ack);

/* Parse a GRE packet (no IP header). */
enum gre_parse_result gre_packet_parse(const uint8_t *p, size_t len,
    struct gre_packet *pkt);
/* Parse an IPv4 datagram carrying GRE, as a raw socket receives it. */
enum gre_parse_result gre_packet_parse_ip(const uint8_t *p, size_t len,
    struct gre_packet *pkt);

/* A short lower-case reason for logs. */
const char *gre_packet_strerror(enum gre_parse_result r);

#endif
