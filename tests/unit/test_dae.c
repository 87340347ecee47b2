/* RFC 5176 Disconnect-Requests: the RADIUS codec (pptpd/radius.c), the
 * clients file (pptpd/dae_clients.c) and the pptpd.conf keys. The
 * daemon serving them over UDP is tested in test_daemon.c. The captured
 * requests below were sent by FreeRADIUS 3.2's radclient (secret
 * "s3cret"): another implementation's packets, not ours. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "pptpd/conf.h"
#include "pptpd/dae_clients.h"
#include "pptpd/radius.h"

#define SECRET "s3cret"

/* echo 'User-Name = alice' | radclient 127.0.0.1:3799 disconnect s3cret */
static const char *const req_alice =
    "2870001b51980162a88814cb1a45aec597bfa03c0107616c696365";
/* ... 'User-Name = alice, Framed-IP-Address = 198.19.0.10,
 * Message-Authenticator = 0x00' (radclient computes the HMAC) */
static const char *const req_alice_ma =
    "288e00333de0d60750e1161e5c666f5fc6e766f90107616c6963650806c613000a"
    "5012014c081db7d6bf951778a21f3cdd6e65";

static size_t
unhex(const char *h, uint8_t *out)
{
	size_t n = strlen(h) / 2;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		sscanf(h + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
	return n;
}

static void
assert_hex(const uint8_t *p, size_t n, const char *want)
{
	char got[2 * RADIUS_MAX_LEN + 1];
	for (size_t i = 0; i < n; i++)
		sprintf(got + 2 * i, "%02x", p[i]);
	got[2 * n] = '\0';
	assert_string_equal(got, want);
}

/* A request built here, its authenticator signed with `secret`. */
struct req {
	uint8_t b[RADIUS_MAX_LEN + 8];
	size_t  len;
};

static void
req_begin(struct req *r, uint8_t code)
{
	memset(r, 0, sizeof(*r));
	r->b[0] = code;
	r->b[1] = 7;
	r->len = RADIUS_HDR_LEN;
}

static void
req_attr(struct req *r, uint8_t type, const void *v, size_t len)
{
	r->b[r->len] = type;
	r->b[r->len + 1] = (uint8_t)(len + 2);
	memcpy(r->b + r->len + 2, v, len);
	r->len += len + 2;
}

static void
req_sign(struct req *r)
{
	r->b[2] = (uint8_t)(r->len >> 8);
	r->b[3] = (uint8_t)r->len;
	assert_int_equal(radius_request_auth(r->b, r->len, SECRET, strlen(SECRET),
	    r->b + RADIUS_AUTH_OFF), 0);
}

/* ---- authenticators */

static void
test_request_authenticator_rfc5176(void **state)
{
	uint8_t b[64], auth[RADIUS_AUTH_LEN];
	size_t n = unhex(req_alice, b);
	struct radius_pkt p;
	const char *why = NULL;

	/* MD5(Code+Identifier+Length+16 zero octets+Attributes+Secret) is
	 * what radclient put in the packet */
	assert_int_equal(radius_request_auth(b, n, SECRET, 6, auth), 0);
	assert_memory_equal(auth, b + RADIUS_AUTH_OFF, RADIUS_AUTH_LEN);
	assert_int_equal(radius_parse(&p, b, n, &why), 0);
	assert_int_equal(p.code, RADIUS_DISCONNECT_REQUEST);
	assert_int_equal(p.id, 0x70);
	assert_true(radius_request_verify(&p, SECRET, 6));
	assert_false(radius_request_verify(&p, "s3creT", 6));
	assert_false(radius_request_verify(&p, SECRET, 5));
	/* any octet changed breaks it */
	b[n - 1] ^= 1;
	assert_false(radius_request_verify(&p, SECRET, 6));
}

static void
test_message_authenticator_checked(void **state)
{
	uint8_t b[64];
	size_t n = unhex(req_alice_ma, b);
	struct radius_pkt p;
	const char *why = NULL;

	assert_int_equal(radius_parse(&p, b, n, &why), 0);
	assert_non_null(p.msg_auth);
	assert_true(radius_request_verify(&p, SECRET, 6));
	/* a forged HMAC under a correct Request Authenticator: refused */
	struct req r;
	memcpy(r.b, b, n);
	r.len = n;
	r.b[n - 1] ^= 0x80;
	req_sign(&r);
	assert_int_equal(radius_parse(&p, r.b, r.len, &why), 0);
	assert_false(radius_request_verify(&p, SECRET, 6));
}

/* Response Authenticator = MD5(Code+Id+Length+RequestAuth+Attributes+
 * Secret); the expected values from Python's hashlib. */
static void
test_ack_and_nak_built(void **state)
{
	uint8_t b[64];
	unhex(req_alice, b);
	struct radius_builder out;

	radius_begin(&out, RADIUS_DISCONNECT_ACK, 0x70);
	assert_int_equal(radius_finish(&out, b + RADIUS_AUTH_OFF, SECRET, 6), 20);
	assert_hex(out.buf, 20, "29700014" "6051df78d1f88557bb6618cfbee6c2ed");

	radius_begin(&out, RADIUS_DISCONNECT_NAK, 0x70);
	radius_add_u32(&out, RADIUS_ERROR_CAUSE, RADIUS_ERR_SESSION_NOT_FOUND);
	assert_int_equal(radius_finish(&out, b + RADIUS_AUTH_OFF, SECRET, 6), 26);
	assert_hex(out.buf, 26, "2a70001a" "8f36f26ad43db996969f4c2224ccd676"
	    "6506000001f7");
}

static void
test_answer_overflow_refused(void **state)
{
	struct radius_builder out;
	uint8_t big[RADIUS_ATTR_MAX_VAL] = { 0 }, auth[RADIUS_AUTH_LEN] = { 0 };

	radius_begin(&out, RADIUS_DISCONNECT_NAK, 1);
	radius_add(&out, RADIUS_PROXY_STATE, big, sizeof(big) + 1);
	assert_int_equal(radius_finish(&out, auth, SECRET, 6), -1);
	radius_begin(&out, RADIUS_DISCONNECT_NAK, 1);
	/* 15 of the largest fit in 4096 octets, a 16th does not */
	for (int i = 0; i < 15; i++)
		radius_add(&out, RADIUS_PROXY_STATE, big, sizeof(big));
	assert_int_equal(radius_finish(&out, auth, SECRET, 6),
	    RADIUS_HDR_LEN + 15 * (2 + RADIUS_ATTR_MAX_VAL));
	radius_add(&out, RADIUS_PROXY_STATE, big, sizeof(big));
	assert_int_equal(radius_finish(&out, auth, SECRET, 6), -1);
}

/* A Message-Authenticator in an answer: HMAC-MD5 over the answer with the
 * request's authenticator in place, then the Response Authenticator
 * covering it (expected bytes from Python's hmac and hashlib). */
static void
test_answer_message_authenticator(void **state)
{
	uint8_t b[64];
	unhex(req_alice_ma, b);
	struct radius_builder out;

	radius_begin(&out, RADIUS_DISCONNECT_ACK, 0x8e);
	radius_add_msg_auth(&out);
	assert_int_equal(radius_finish(&out, b + RADIUS_AUTH_OFF, SECRET, 6), 38);
	assert_hex(out.buf, 38, "298e0026" "be10a0e2148aed19c40ff4433e07eec1"
	    "5012" "2521006398590680ac65526673c533c0");
}

/* ---- parsing: every length error is a silent discard */

static void
assert_parse_fails(const uint8_t *b, size_t n, const char *want)
{
	struct radius_pkt p;
	const char *why = NULL;
	assert_int_equal(radius_parse(&p, b, n, &why), -1);
	assert_non_null(why);
	assert_non_null(strstr(why, want));
}

static void
test_parse_length_errors(void **state)
{
	struct req r;
	struct radius_pkt p;
	const char *why;

	req_begin(&r, RADIUS_DISCONNECT_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	req_sign(&r);
	assert_int_equal(radius_parse(&p, r.b, r.len, &why), 0);

	for (size_t n = 0; n < RADIUS_HDR_LEN; n++)
		assert_parse_fails(r.b, n, "shorter than a RADIUS header");
	/* the datagram shorter than its Length */
	assert_parse_fails(r.b, r.len - 1, "shorter than its Length");
	/* Length below a header, above 4096 */
	r.b[2] = 0; r.b[3] = 19;
	assert_parse_fails(r.b, r.len, "Length field out of range");
	r.b[2] = 0x10; r.b[3] = 0x01;
	assert_parse_fails(r.b, r.len, "Length field out of range");
	/* Length cuts the attribute: into its value, into its header */
	r.b[2] = 0; r.b[3] = (uint8_t)(r.len - 1);
	assert_parse_fails(r.b, r.len, "runs past the Length");
	r.b[3] = RADIUS_HDR_LEN + 1;
	assert_parse_fails(r.b, r.len, "attribute header cut");
	/* attribute Length 0 and 1 */
	r.b[3] = (uint8_t)r.len;
	r.b[21] = 0;
	assert_parse_fails(r.b, r.len, "attribute Length below 2");
	r.b[21] = 1;
	assert_parse_fails(r.b, r.len, "attribute Length below 2");
	/* attribute Length past the packet */
	r.b[21] = 8;
	assert_parse_fails(r.b, r.len, "runs past the Length");

	/* octets after Length are padding (RFC 2865 section 3): ignored,
	 * and the authenticator covers only Length octets */
	req_begin(&r, RADIUS_DISCONNECT_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	req_sign(&r);
	memset(r.b + r.len, 0xee, 3);
	assert_int_equal(radius_parse(&p, r.b, r.len + 3, &why), 0);
	assert_int_equal(p.len, r.len);
	assert_true(radius_request_verify(&p, SECRET, 6));

	/* Message-Authenticator: 16 octets, once */
	uint8_t ma[17] = { 0 };
	req_begin(&r, RADIUS_DISCONNECT_REQUEST);
	req_attr(&r, RADIUS_MESSAGE_AUTHENTICATOR, ma, 15);
	req_sign(&r);
	assert_parse_fails(r.b, r.len, "not 16 octets");
	req_begin(&r, RADIUS_DISCONNECT_REQUEST);
	req_attr(&r, RADIUS_MESSAGE_AUTHENTICATOR, ma, 16);
	req_attr(&r, RADIUS_MESSAGE_AUTHENTICATOR, ma, 16);
	req_sign(&r);
	assert_parse_fails(r.b, r.len, "two Message-Authenticators");
}

static void
test_parse_largest_packet(void **state)
{
	struct req r;
	struct radius_pkt p;
	const char *why;
	uint8_t v[RADIUS_ATTR_MAX_VAL] = { 0 };

	req_begin(&r, RADIUS_DISCONNECT_REQUEST);
	while (r.len + 2 + RADIUS_ATTR_MAX_VAL <= RADIUS_MAX_LEN)
		req_attr(&r, RADIUS_PROXY_STATE, v, RADIUS_ATTR_MAX_VAL);
	req_attr(&r, RADIUS_PROXY_STATE, v, RADIUS_MAX_LEN - r.len - 2);
	assert_int_equal(r.len, RADIUS_MAX_LEN);
	req_sign(&r);
	assert_int_equal(radius_parse(&p, r.b, r.len, &why), 0);
	assert_true(radius_request_verify(&p, SECRET, 6));
	size_t off = 0, n = 0;
	struct radius_attr a;
	while (radius_attr_next(&p, &off, &a))
		n++;
	assert_int_equal(n, 16);   /* 15 of 255 octets and one of 251 */
}

/* ---- what a Disconnect-Request names */

static uint32_t
decode(struct req *r, struct radius_dm *dm, const char **why)
{
	struct radius_pkt p;
	req_sign(r);
	assert_int_equal(radius_parse(&p, r->b, r->len, why), 0);
	return radius_dm_decode(&p, dm, why);
}

static void
test_decode_session_attributes(void **state)
{
	struct req r;
	struct radius_dm dm;
	const char *why = NULL;
	uint8_t ip[4] = { 198, 19, 0, 10 }, ts[4] = { 0x65, 0, 0, 1 };

	req_begin(&r, RADIUS_DISCONNECT_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	req_attr(&r, RADIUS_FRAMED_IP_ADDRESS, ip, 4);
	req_attr(&r, RADIUS_ACCT_SESSION_ID, "6571A3F0123400", 14);
	req_attr(&r, RADIUS_NAS_IP_ADDRESS, ip, 4);
	req_attr(&r, RADIUS_NAS_IDENTIFIER, "pptp1", 5);
	req_attr(&r, RADIUS_PROXY_STATE, "\x01\x02", 2);
	req_attr(&r, RADIUS_PROXY_STATE, "\x03", 1);
	req_attr(&r, RADIUS_EVENT_TIMESTAMP, ts, 4);
	assert_int_equal(decode(&r, &dm, &why), 0);
	assert_true(dm.has_user && dm.has_framed_ip && dm.has_acct_session_id);
	assert_string_equal(dm.user, "alice");
	assert_string_equal(dm.acct_session_id, "6571A3F0123400");
	struct in_addr a = { dm.framed_ip };
	assert_string_equal(inet_ntoa(a), "198.19.0.10");
	assert_true(dm.has_nas_ip);
	assert_true(dm.has_timestamp);
	assert_int_equal(dm.timestamp, 0x65000001);

	/* radclient's own */
	uint8_t b[64];
	struct radius_pkt p;
	size_t n = unhex(req_alice_ma, b);
	assert_int_equal(radius_parse(&p, b, n, &why), 0);
	assert_int_equal(radius_dm_decode(&p, &dm, &why), 0);
	assert_string_equal(dm.user, "alice");
	a.s_addr = dm.framed_ip;
	assert_string_equal(inet_ntoa(a), "198.19.0.10");
}

static void
test_decode_naks(void **state)
{
	struct req r;
	struct radius_dm dm;
	const char *why = NULL;
	uint8_t ip[5] = { 198, 19, 0, 10, 0 }, six[16] = { 0 };

	/* nothing that names a session */
	req_begin(&r, RADIUS_DISCONNECT_REQUEST);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_MISSING_ATTRIBUTE);
	req_attr(&r, RADIUS_NAS_IDENTIFIER, "pptp1", 5);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_MISSING_ATTRIBUTE);
	/* an attribute we do not serve (NAS-Port 5, Vendor-Specific 26,
	 * Service-Type 6, Error-Cause in a request): 401, even after a bad
	 * value */
	static const uint8_t unsupported[] = { 5, 26, 6, 101, 30, 31, 50 };
	for (size_t i = 0; i < sizeof(unsupported); i++) {
		req_begin(&r, RADIUS_DISCONNECT_REQUEST);
		req_attr(&r, RADIUS_FRAMED_IP_ADDRESS, ip, 3);
		req_attr(&r, RADIUS_USER_NAME, "alice", 5);
		req_attr(&r, unsupported[i], ip, 4);
		assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_UNSUPPORTED_ATTRIBUTE);
	}
	/* values of the wrong size */
	req_begin(&r, RADIUS_DISCONNECT_REQUEST);
	req_attr(&r, RADIUS_FRAMED_IP_ADDRESS, ip, 5);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_INVALID_ATTRIBUTE_VALUE);
	req_begin(&r, RADIUS_DISCONNECT_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "", 0);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_INVALID_ATTRIBUTE_VALUE);
	req_begin(&r, RADIUS_DISCONNECT_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "al\0ce", 5);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_INVALID_ATTRIBUTE_VALUE);
	req_begin(&r, RADIUS_DISCONNECT_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	req_attr(&r, RADIUS_EVENT_TIMESTAMP, ip, 3);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_INVALID_ATTRIBUTE_VALUE);
	/* twice */
	req_begin(&r, RADIUS_DISCONNECT_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	req_attr(&r, RADIUS_USER_NAME, "bob", 3);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_INVALID_REQUEST);
	/* an IPv6 NAS address: not us */
	req_begin(&r, RADIUS_DISCONNECT_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	req_attr(&r, RADIUS_NAS_IPV6_ADDRESS, six, 16);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_NAS_ID_MISMATCH);
}

/* A WISPr Vendor-Specific attribute's value: Vendor-Id 14122 and the
 * given (type, 4-octet value) sub-attributes; its length in *len. */
static const uint8_t *
wispr(size_t *len, int n, const uint8_t types[], const uint32_t values[])
{
	static uint8_t v[64];
	size_t off = 4;
	v[0] = 0; v[1] = 0; v[2] = 0x37; v[3] = 0x2a;   /* 14122 */
	for (int i = 0; i < n; i++) {
		v[off] = types[i];
		v[off + 1] = 6;
		v[off + 2] = (uint8_t)(values[i] >> 24);
		v[off + 3] = (uint8_t)(values[i] >> 16);
		v[off + 4] = (uint8_t)(values[i] >> 8);
		v[off + 5] = (uint8_t)values[i];
		off += 6;
	}
	*len = off;
	return v;
}

/* A CoA-Request names a session as a Disconnect-Request does and carries
 * its new rate in WISPr's Vendor-Specific attribute: down, up, or both
 * (in one attribute or two); anything else there is 401, a malformed one
 * 407, a rate given twice 404, and a CoA with no rate 402. A
 * Disconnect-Request with the same attribute is 401. */
static void
test_decode_coa(void **state)
{
	struct req r;
	struct radius_dm dm;
	const char *why = NULL;
	size_t n;
	const uint8_t *v;
	static const uint8_t both_t[] = { RADIUS_WISPR_BW_MAX_DOWN,
	    RADIUS_WISPR_BW_MAX_UP };
	static const uint32_t both_v[] = { 2000000, 512000 };
	(void)state;

	req_begin(&r, RADIUS_COA_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	v = wispr(&n, 2, both_t, both_v);
	req_attr(&r, RADIUS_VENDOR_SPECIFIC, v, n);
	assert_int_equal(decode(&r, &dm, &why), 0);
	assert_true(dm.has_rate_down && dm.has_rate_up);
	assert_int_equal(dm.rate_down, 2000000);
	assert_int_equal(dm.rate_up, 512000);
	assert_string_equal(dm.user, "alice");
	/* one direction only, in its own attribute */
	req_begin(&r, RADIUS_COA_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	v = wispr(&n, 1, both_t + 1, both_v + 1);
	req_attr(&r, RADIUS_VENDOR_SPECIFIC, v, n);
	assert_int_equal(decode(&r, &dm, &why), 0);
	assert_true(!dm.has_rate_down && dm.has_rate_up);
	/* no rate: nothing to change */
	req_begin(&r, RADIUS_COA_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_MISSING_ATTRIBUTE);
	/* a rate but no session */
	req_begin(&r, RADIUS_COA_REQUEST);
	v = wispr(&n, 1, both_t, both_v);
	req_attr(&r, RADIUS_VENDOR_SPECIFIC, v, n);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_MISSING_ATTRIBUTE);
	/* the same in a Disconnect-Request: not served */
	req_begin(&r, RADIUS_DISCONNECT_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	v = wispr(&n, 1, both_t, both_v);
	req_attr(&r, RADIUS_VENDOR_SPECIFIC, v, n);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_UNSUPPORTED_ATTRIBUTE);
	/* another WISPr attribute (Min-Up 5), another vendor */
	static const uint8_t min_t[] = { 5 };
	req_begin(&r, RADIUS_COA_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	v = wispr(&n, 1, min_t, both_v);
	req_attr(&r, RADIUS_VENDOR_SPECIFIC, v, n);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_UNSUPPORTED_ATTRIBUTE);
	uint8_t other[10];
	v = wispr(&n, 1, both_t, both_v);
	memcpy(other, v, n);
	other[3] = 0x2b;
	req_begin(&r, RADIUS_COA_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	req_attr(&r, RADIUS_VENDOR_SPECIFIC, other, n);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_UNSUPPORTED_ATTRIBUTE);
	/* malformed: a sub-attribute longer than the attribute, one too
	 * short, a 3-octet value, nothing after the Vendor-Id */
	memcpy(other, v, n);
	other[5] = 9;
	req_begin(&r, RADIUS_COA_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	req_attr(&r, RADIUS_VENDOR_SPECIFIC, other, n);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_INVALID_ATTRIBUTE_VALUE);
	other[5] = 1;
	req_begin(&r, RADIUS_COA_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	req_attr(&r, RADIUS_VENDOR_SPECIFIC, other, n);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_INVALID_ATTRIBUTE_VALUE);
	other[5] = 5;
	req_begin(&r, RADIUS_COA_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	req_attr(&r, RADIUS_VENDOR_SPECIFIC, other, n - 1);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_INVALID_ATTRIBUTE_VALUE);
	req_begin(&r, RADIUS_COA_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	req_attr(&r, RADIUS_VENDOR_SPECIFIC, other, 4);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_INVALID_ATTRIBUTE_VALUE);
	/* a rate twice */
	static const uint8_t twice_t[] = { RADIUS_WISPR_BW_MAX_DOWN,
	    RADIUS_WISPR_BW_MAX_DOWN };
	req_begin(&r, RADIUS_COA_REQUEST);
	req_attr(&r, RADIUS_USER_NAME, "alice", 5);
	v = wispr(&n, 2, twice_t, both_v);
	req_attr(&r, RADIUS_VENDOR_SPECIFIC, v, n);
	assert_int_equal(decode(&r, &dm, &why), RADIUS_ERR_INVALID_REQUEST);
}

/* ---- the clients file */

static char dir[] = "/tmp/test-dae-XXXXXX";

/* The path, in a buffer the next call overwrites. */
static const char *
write_file(const char *name, const char *text, mode_t mode)
{
	static char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
	return p;
}

static void
assert_clients_refused(const char *text, mode_t mode, const char *want)
{
	struct dae_clients *c = NULL;
	char err[256];
	const char *p = write_file("bad", text, mode);
	assert_int_equal(dae_clients_load(p, NULL, &c, err, sizeof(err)), -1);
	if (strstr(err, want) == NULL)
		fail_msg("'%s' lacks '%s'", err, want);
	assert_null(c);
}

static void
test_clients_file(void **state)
{
	struct dae_clients *c = NULL;
	char err[256];
	struct in_addr a;
	const char *p = write_file("clients", "# RADIUS servers\n\n"
	    "198.18.0.254 s3cret\n  198.18.0.253\tan#other:one  \r\n", 0600);

	assert_int_equal(dae_clients_load(p, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(c->n, 2);
	inet_pton(AF_INET, "198.18.0.253", &a);
	assert_string_equal(dae_clients_find(c, a)->secret, "an#other:one");
	inet_pton(AF_INET, "198.18.0.254", &a);
	assert_int_equal(dae_clients_find(c, a)->slen, 6);
	inet_pton(AF_INET, "198.18.0.1", &a);
	assert_null(dae_clients_find(c, a));
	dae_clients_free(c);

	assert_clients_refused("1.2.3.4 x\n", 0644, "bad: mode 0644: refused");
	assert_clients_refused("1.2.3.4 x\n", 0640, "mode 0640");
	assert_clients_refused("# only comments\n", 0600, "bad: no client listed");
	assert_clients_refused("\n1.2.3.4\n", 0600, "bad:2: no secret for 1.2.3.4");
	assert_clients_refused("1.2.3.4 x y\n", 0600, "bad:1: more than ADDRESS SECRET");
	assert_clients_refused("1.2.3.4 x # comment\n", 0600, "bad:1: more than");
	assert_clients_refused("1.2.3.999 x\n", 0600, "bad:1: bad IPv4 address '1.2.3.999'");
	assert_clients_refused("1.2.3.4 x\n1.2.3.4 y\n", 0600, "bad:2: 1.2.3.4 listed twice");
	char longs[DAE_SECRET_MAX + 32];
	snprintf(longs, sizeof(longs), "1.2.3.4 %0*d\n", DAE_SECRET_MAX + 1, 0);
	assert_clients_refused(longs, 0600, "bad:1: secret longer than 128");
	assert_clients_refused("1.2.3.4 a\x01z\n", 0600, "bad:1: secret holds a byte");
	char missing[300];
	snprintf(missing, sizeof(missing), "%s/none", dir);
	assert_int_equal(dae_clients_load(missing, NULL, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "none: cannot open"));
}

/* ---- pptpd.conf */

static int
load_conf(const char *text, struct conf *c, char *err)
{
	const char *p = write_file("pptpd.conf", text, 0644);
	conf_init(c);
	return conf_load(c, p, err, CONF_ERR_LEN);
}

static void
test_conf_keys(void **state)
{
	struct conf c;
	char err[CONF_ERR_LEN], text[1024], cl[256], bl[256];
	snprintf(cl, sizeof(cl), "%s", write_file("clients", "198.18.0.254 s3cret\n", 0600));

	/* off by default */
	if (load_conf("debug\n", &c, err) < 0)
		fail_msg("%s", err);
	assert_int_equal(c.dae_listen.sin_port, 0);
	assert_null(c.dae_clients);
	conf_free(&c);

	snprintf(text, sizeof(text), "radius-dae-listen 198.18.0.1\n"
	    "radius-dae-clients %s\n", cl);
	assert_int_equal(load_conf(text, &c, err), 0);
	assert_int_equal(ntohs(c.dae_listen.sin_port), 3799);
	assert_string_equal(inet_ntoa(c.dae_listen.sin_addr), "198.18.0.1");
	assert_non_null(c.dae_clients);
	assert_int_equal(c.dae_clients->n, 1);
	assert_int_equal(c.dae_require_timestamp, 0);
	conf_free(&c);

	/* issue 19 item 5: Event-Timestamp may be required */
	snprintf(text, sizeof(text), "radius-dae-listen 198.18.0.1\n"
	    "radius-dae-clients %s\nradius-dae-require-timestamp\n", cl);
	assert_int_equal(load_conf(text, &c, err), 0);
	assert_int_equal(c.dae_require_timestamp, 1);
	conf_free(&c);

	snprintf(text, sizeof(text), "radius-dae-clients %s\n"
	    "radius-dae-listen 0.0.0.0:1700\n", cl);
	assert_int_equal(load_conf(text, &c, err), 0);
	assert_int_equal(ntohs(c.dae_listen.sin_port), 1700);
	conf_free(&c);

	/* refused, at their lines */
	static const struct { const char *text, *want; } bad[] = {
		{ "\nradius-dae-listen 198.18.0.1:0\n", "pptpd.conf:2: bad ADDRESS[:PORT]" },
		{ "radius-dae-listen 198.18.0.1:65536\n", "pptpd.conf:1: bad ADDRESS[:PORT]" },
		{ "radius-dae-listen host:3799\n", "pptpd.conf:1: bad IPv4 address 'host'" },
		{ "radius-dae-listen :3799\n", "pptpd.conf:1: bad ADDRESS[:PORT]" },
		{ "radius-dae-listen\n", "pptpd.conf:1: 'radius-dae-listen' needs a value" },
		{ "debug\nradius-dae-listen 198.18.0.1\n",
		  "pptpd.conf:2: 'radius-dae-listen' needs 'radius-dae-clients FILE'" },
		{ "radius-dae-clients clients\n", "pptpd.conf:1: 'radius-dae-clients' needs an absolute path" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(load_conf(bad[i].text, &c, err), -1);
		conf_free(&c);   /* what conf_init gave it */
		if (strstr(err, bad[i].want) == NULL)
			fail_msg("'%s' lacks '%s'", err, bad[i].want);
	}
	/* a bad line of the clients file: both files named */
	snprintf(bl, sizeof(bl), "%s", write_file("badclients",
	    "198.18.0.254 s3cret\nnope x\n", 0600));
	snprintf(text, sizeof(text), "radius-dae-listen 198.18.0.1\n\n"
	    "radius-dae-clients %s\n", bl);
	assert_int_equal(load_conf(text, &c, err), -1);
	conf_free(&c);
	if (strstr(err, "pptpd.conf:3: radius-dae-clients: ") == NULL ||
	    strstr(err, "badclients:2: bad IPv4 address 'nope'") == NULL)
		fail_msg("%s", err);
	/* clients without listen: read, checked, a warning */
	snprintf(text, sizeof(text), "radius-dae-clients %s\n", cl);
	assert_int_equal(load_conf(text, &c, err), 0);
	assert_int_equal(c.nwarnings, 1);
	assert_non_null(strstr(c.warnings[0], "without 'radius-dae-listen'"));
	conf_free(&c);
}

int
main(void)
{
	if (mkdtemp(dir) == NULL)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_authenticator_rfc5176),
		cmocka_unit_test(test_message_authenticator_checked),
		cmocka_unit_test(test_ack_and_nak_built),
		cmocka_unit_test(test_answer_overflow_refused),
		cmocka_unit_test(test_answer_message_authenticator),
		cmocka_unit_test(test_parse_length_errors),
		cmocka_unit_test(test_parse_largest_packet),
		cmocka_unit_test(test_decode_session_attributes),
		cmocka_unit_test(test_decode_naks),
		cmocka_unit_test(test_decode_coa),
		cmocka_unit_test(test_clients_file),
		cmocka_unit_test(test_conf_keys),
	};
	int rc = cmocka_run_group_tests_name("dae", tests, NULL, NULL);
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return rc;
}
