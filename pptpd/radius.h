/* RADIUS packets as a NAS's Dynamic Authorization server sees them (RFC
 * 5176, on the wire format of RFC 2865 section 3): a strict parser, the
 * Request Authenticator and Message-Authenticator checks, and a builder
 * for the answers with their Response Authenticator.
 *
 * No library in Debian implements the NAS side of RFC 5176 (the RADIUS
 * client libraries there only ask servers), so this is our own code on
 * OpenSSL's libcrypto: MD5 through EVP, HMAC-MD5 through HMAC(). Pure
 * functions of their inputs: no sockets, no clock, no log. */
#ifndef PPTPD_RADIUS_H
#define PPTPD_RADIUS_H

#include <stddef.h>
#include <stdint.h>

#define RADIUS_DAE_PORT      3799   /* RFC 5176 section 3 */
#define RADIUS_HDR_LEN       20     /* Code, Identifier, Length, Authenticator */
#define RADIUS_AUTH_LEN      16
#define RADIUS_AUTH_OFF      4
#define RADIUS_MAX_LEN       4096   /* RFC 2865 section 3 */
#define RADIUS_ATTR_HDR_LEN  2      /* Type, Length */
#define RADIUS_ATTR_MAX_VAL  253

/* Codes (RFC 2866 section 3, RFC 5176 section 2.3). */
#define RADIUS_ACCOUNTING_REQUEST   4
#define RADIUS_ACCOUNTING_RESPONSE  5
#define RADIUS_DISCONNECT_REQUEST  40
#define RADIUS_DISCONNECT_ACK      41
#define RADIUS_DISCONNECT_NAK      42
#define RADIUS_COA_REQUEST         43
#define RADIUS_COA_ACK             44
#define RADIUS_COA_NAK             45

/* Attribute types (RFC 2865, 2866, 2869, 3162, 4372, 5176). */
#define RADIUS_USER_NAME              1
#define RADIUS_NAS_IP_ADDRESS         4
#define RADIUS_NAS_PORT               5
#define RADIUS_SERVICE_TYPE           6
#define RADIUS_FRAMED_PROTOCOL        7
#define RADIUS_FRAMED_IP_ADDRESS      8
#define RADIUS_NAS_IDENTIFIER         32
#define RADIUS_PROXY_STATE            33
#define RADIUS_VENDOR_SPECIFIC        26
#define RADIUS_ACCT_STATUS_TYPE       40
#define RADIUS_ACCT_SESSION_ID        44
#define RADIUS_ACCT_AUTHENTIC         45
#define RADIUS_ACCT_SESSION_TIME      46
#define RADIUS_EVENT_TIMESTAMP        55
#define RADIUS_MESSAGE_AUTHENTICATOR  80
#define RADIUS_NAS_IPV6_ADDRESS       95
#define RADIUS_FRAMED_IPV6_PREFIX     97
#define RADIUS_ERROR_CAUSE            101

/* WISPr (the Wi-Fi Alliance's vendor 14122, FreeRADIUS' dictionary.wispr):
 * the rate limits a CoA-Request may change, integers in bits/s. */
#define RADIUS_VENDOR_WISPR           14122
#define RADIUS_WISPR_BW_MAX_UP        7
#define RADIUS_WISPR_BW_MAX_DOWN      8
#define RADIUS_VSA_ID_LEN             4     /* Vendor-Id */
#define RADIUS_VSA_SUB_HDR_LEN        2     /* Vendor-Type, Vendor-Length */

#define RADIUS_IPV4_LEN        4
#define RADIUS_TIMESTAMP_LEN   4
#define RADIUS_ERROR_CAUSE_LEN 4
#define RADIUS_MSG_AUTH_LEN    16

/* Values of the accounting attributes (RFC 2865 5.6-5.7, RFC 2866 5.1,
 * 5.6). */
#define RADIUS_SERVICE_FRAMED         2
#define RADIUS_PROTOCOL_PPP           1
#define RADIUS_STATUS_INTERIM_UPDATE  3
#define RADIUS_AUTHENTIC_RADIUS       1
/* Framed-IPv6-Prefix (RFC 3162 2.3): Reserved, Prefix-Length, then the
 * prefix's octets that the length covers. */
#define RADIUS_PREFIX6_HDR_LEN        2

/* Error-Cause values (RFC 5176 section 3.5). */
#define RADIUS_ERR_UNSUPPORTED_ATTRIBUTE   401
#define RADIUS_ERR_MISSING_ATTRIBUTE       402
#define RADIUS_ERR_NAS_ID_MISMATCH         403
#define RADIUS_ERR_INVALID_REQUEST         404
#define RADIUS_ERR_UNSUPPORTED_SERVICE     405
#define RADIUS_ERR_INVALID_ATTRIBUTE_VALUE 407
#define RADIUS_ERR_SESSION_NOT_FOUND       503
#define RADIUS_ERR_RESOURCES_UNAVAILABLE   506
#define RADIUS_ERR_MULTIPLE_SESSIONS       508   /* Multiple Session Selection Unsupported */

/* A packet that passed radius_parse(): `len` is its Length field; the
 * datagram may have been longer (padding, RFC 2865 section 3). */
struct radius_pkt {
	const uint8_t *data;
	uint16_t       len;
	uint8_t        code, id;
	const uint8_t *auth;    /* data + RADIUS_AUTH_OFF */
	const uint8_t *msg_auth; /* the Message-Authenticator value, or NULL */
};

struct radius_attr {
	uint8_t        type;
	uint8_t        len;     /* of the value */
	const uint8_t *value;
};

/* Check a datagram of `n` bytes: at least a header, a Length field in
 * [RADIUS_HDR_LEN, RADIUS_MAX_LEN] and no larger than the datagram, and
 * attributes that each have a Length of at least 2 and end exactly at the
 * packet's end; at most one Message-Authenticator, of 16 octets. Returns
 * 0, or -1 with a static reason in *why (RFC 2865: such a packet is
 * silently discarded). Says nothing about the code or the secret. */
int radius_parse(struct radius_pkt *p, const uint8_t *buf, size_t n,
    const char **why);

/* The next attribute after offset *off (start with 0): 1 and *a filled, 0
 * at the end. Only for a packet radius_parse() accepted. */
int radius_attr_next(const struct radius_pkt *p, size_t *off,
    struct radius_attr *a);

/* RFC 5176 section 3: the Request Authenticator of a Disconnect- or
 * CoA-Request is MD5(Code + Identifier + Length + 16 zero octets +
 * Attributes + Secret). Fills `out`; 0, or -1 if libcrypto failed. */
int radius_request_auth(const uint8_t *pkt, size_t len, const void *secret,
    size_t slen, uint8_t out[RADIUS_AUTH_LEN]);

/* Does the Request Authenticator, and the Message-Authenticator if there
 * is one, hold for `secret`? Compared in constant time. 1 or 0. */
int radius_request_verify(const struct radius_pkt *p, const void *secret,
    size_t slen);

/* An answer, built in place. */
struct radius_builder {
	uint8_t buf[RADIUS_MAX_LEN];
	size_t  len;
	size_t  msg_auth_off;   /* of the Message-Authenticator value; 0: none */
	int     overflow;       /* an attribute did not fit or was too long */
};

void radius_begin(struct radius_builder *b, uint8_t code, uint8_t id);
void radius_add(struct radius_builder *b, uint8_t type, const void *value,
    size_t len);
void radius_add_u32(struct radius_builder *b, uint8_t type, uint32_t v);
/* A Message-Authenticator to be computed by radius_finish(). */
void radius_add_msg_auth(struct radius_builder *b);
/* Set the Length, the Message-Authenticator (HMAC-MD5 over the packet
 * with the Request Authenticator in the authenticator field, RFC 5176
 * section 3.3) and the Response Authenticator, MD5(Code + Identifier +
 * Length + Request Authenticator + Attributes + Secret). Returns the
 * packet's length, or -1 on overflow or a libcrypto failure. */
int radius_finish(struct radius_builder *b,
    const uint8_t req_auth[RADIUS_AUTH_LEN], const void *secret, size_t slen);

/* A request of our own (an Accounting-Request, RFC 2866 section 3): set
 * the Length and the Request Authenticator, MD5(Code + Identifier +
 * Length + 16 zero octets + Attributes + Secret), copied to `req_auth`
 * for the answer's check. The packet's length, or -1 on overflow or a
 * libcrypto failure. */
int radius_finish_request(struct radius_builder *b, const void *secret,
    size_t slen, uint8_t req_auth[RADIUS_AUTH_LEN]);

/* Does the answer's Response Authenticator, MD5(Code + Identifier +
 * Length + Request Authenticator + Attributes + Secret), hold? Compared
 * in constant time. 1 or 0. */
int radius_response_verify(const struct radius_pkt *p,
    const uint8_t req_auth[RADIUS_AUTH_LEN], const void *secret, size_t slen);

/* What a Disconnect-Request names (RFC 5176 section 3), from
 * radius_dm_decode(). Values are copied out NUL-terminated. */
struct radius_dm {
	int      has_user, has_framed_ip, has_acct_session_id;
	int      has_nas_ip, has_timestamp;
	char     user[RADIUS_ATTR_MAX_VAL + 1];
	char     acct_session_id[RADIUS_ATTR_MAX_VAL + 1];
	uint32_t framed_ip;    /* network byte order, as in_addr.s_addr */
	uint32_t nas_ip;       /* network byte order */
	uint32_t timestamp;    /* Event-Timestamp: seconds since 1970 UTC */
	/* A CoA-Request's changes: WISPr-Bandwidth-Max-Down/-Up (bits/s). */
	int      has_rate_down, has_rate_up;
	uint32_t rate_down, rate_up;
};

/* Decode the attributes of a parsed Disconnect- or CoA-Request. A
 * CoA-Request may also carry a Vendor-Specific attribute of WISPr with
 * WISPr-Bandwidth-Max-Down and/or -Up (4 octets each, once each), the
 * session's new rate, and must carry one of them (402 otherwise; any
 * other vendor or WISPr attribute is 401, a malformed one 407); the
 * rate's bounds are the caller's to check. Returns 0 when
 * the request is one we serve, or the Error-Cause of the NAK it deserves
 * with a static reason in *why:
 *   401 an attribute we do not support (RFC 5176 section 3: every
 *       attribute of a Disconnect-Request is mandatory): anything but
 *       User-Name, Framed-IP-Address, Acct-Session-Id, NAS-IP-Address,
 *       NAS-Identifier, NAS-IPv6-Address, Event-Timestamp, Proxy-State,
 *       Message-Authenticator;
 *   407 a value of the wrong size, or a name holding a NUL;
 *   404 an attribute that may appear once given twice;
 *   403 a NAS-IPv6-Address (this NAS has none);
 *   402 none of User-Name, Framed-IP-Address, Acct-Session-Id.
 * The Event-Timestamp is decoded whatever else is wrong (the replay check
 * comes first). NAS-IP-Address is the caller's to compare. */
uint32_t radius_dm_decode(const struct radius_pkt *p, struct radius_dm *dm,
    const char **why);

/* Names for the log: "Disconnect-Request", "code 7". */
const char *radius_code_name(uint8_t code, char *buf, size_t len);

#endif
