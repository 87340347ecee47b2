/* RADIUS packets for the Dynamic Authorization server (radius.h): our own
 * code, written from RFC 2865 section 3 and RFC 5176 on libcrypto's MD5
 * (EVP) and HMAC-MD5 (HMAC()); no Debian library serves the NAS side. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>

#include "common/byteorder.h"
#include "pptpd/radius.h"

int
radius_parse(struct radius_pkt *p, const uint8_t *buf, size_t n,
    const char **why)
{
	size_t off;

	memset(p, 0, sizeof(*p));
	if (n < RADIUS_HDR_LEN) {
		*why = "shorter than a RADIUS header";
		return -1;
	}
	uint16_t len = be16_get(buf + 2);
	if (len < RADIUS_HDR_LEN || len > RADIUS_MAX_LEN) {
		*why = "Length field out of range (20..4096)";
		return -1;
	}
	if (len > n) {
		*why = "datagram shorter than its Length field";
		return -1;
	}
	p->data = buf;
	p->len = len;
	p->code = buf[0];
	p->id = buf[1];
	p->auth = buf + RADIUS_AUTH_OFF;
	for (off = RADIUS_HDR_LEN; off < len; ) {
		if (len - off < RADIUS_ATTR_HDR_LEN) {
			*why = "attribute header cut by the Length field";
			return -1;
		}
		uint8_t alen = buf[off + 1];
		if (alen < RADIUS_ATTR_HDR_LEN) {
			*why = "attribute Length below 2";
			return -1;
		}
		if (alen > len - off) {
			*why = "attribute runs past the Length field";
			return -1;
		}
		if (buf[off] == RADIUS_MESSAGE_AUTHENTICATOR) {
			if (alen != RADIUS_ATTR_HDR_LEN + RADIUS_MSG_AUTH_LEN) {
				*why = "Message-Authenticator not 16 octets";
				return -1;
			}
			if (p->msg_auth != NULL) {
				*why = "two Message-Authenticators";
				return -1;
			}
			p->msg_auth = buf + off + RADIUS_ATTR_HDR_LEN;
		}
		off += alen;
	}
	return 0;
}

int
radius_attr_next(const struct radius_pkt *p, size_t *off, struct radius_attr *a)
{
	if (*off < RADIUS_HDR_LEN)
		*off = RADIUS_HDR_LEN;
	if (*off >= p->len)
		return 0;
	a->type = p->data[*off];
	a->len = (uint8_t)(p->data[*off + 1] - RADIUS_ATTR_HDR_LEN);
	a->value = p->data + *off + RADIUS_ATTR_HDR_LEN;
	*off += (size_t)a->len + RADIUS_ATTR_HDR_LEN;
	return 1;
}

/* MD5(head[0..4) + mid[16] + pkt[20..len) + secret). */
static int
radius_md5(const uint8_t *pkt, size_t len, const uint8_t mid[RADIUS_AUTH_LEN],
    const void *secret, size_t slen, uint8_t out[RADIUS_AUTH_LEN])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int olen = 0;
	int ok = ctx != NULL &&
	    EVP_DigestInit_ex(ctx, EVP_md5(), NULL) == 1 &&
	    EVP_DigestUpdate(ctx, pkt, RADIUS_AUTH_OFF) == 1 &&
	    EVP_DigestUpdate(ctx, mid, RADIUS_AUTH_LEN) == 1 &&
	    EVP_DigestUpdate(ctx, pkt + RADIUS_HDR_LEN, len - RADIUS_HDR_LEN) == 1 &&
	    EVP_DigestUpdate(ctx, secret, slen) == 1 &&
	    EVP_DigestFinal_ex(ctx, out, &olen) == 1 && olen == RADIUS_AUTH_LEN;
	EVP_MD_CTX_free(ctx);
	return ok ? 0 : -1;
}

static int
radius_hmac(const uint8_t *pkt, size_t len, const void *secret, size_t slen,
    uint8_t out[RADIUS_MSG_AUTH_LEN])
{
	unsigned int olen = 0;
	if (HMAC(EVP_md5(), secret, (int)slen, pkt, len, out, &olen) == NULL ||
	    olen != RADIUS_MSG_AUTH_LEN)
		return -1;
	return 0;
}

int
radius_request_auth(const uint8_t *pkt, size_t len, const void *secret,
    size_t slen, uint8_t out[RADIUS_AUTH_LEN])
{
	static const uint8_t zero[RADIUS_AUTH_LEN];
	return radius_md5(pkt, len, zero, secret, slen, out);
}

int
radius_request_verify(const struct radius_pkt *p, const void *secret,
    size_t slen)
{
	uint8_t want[RADIUS_AUTH_LEN];

	if (radius_request_auth(p->data, p->len, secret, slen, want) < 0 ||
	    CRYPTO_memcmp(want, p->auth, RADIUS_AUTH_LEN) != 0)
		return 0;
	if (p->msg_auth == NULL)
		return 1;
	/* RFC 5176 section 3.3: over the packet with the Request
	 * Authenticator and the Message-Authenticator's value each taken as
	 * 16 zero octets. */
	uint8_t copy[RADIUS_MAX_LEN], mac[RADIUS_MSG_AUTH_LEN];
	size_t at = (size_t)(p->msg_auth - p->data);
	memcpy(copy, p->data, p->len);
	memset(copy + RADIUS_AUTH_OFF, 0, RADIUS_AUTH_LEN);
	memset(copy + at, 0, RADIUS_MSG_AUTH_LEN);
	if (radius_hmac(copy, p->len, secret, slen, mac) < 0)
		return 0;
	return CRYPTO_memcmp(mac, p->msg_auth, RADIUS_MSG_AUTH_LEN) == 0;
}

void
radius_begin(struct radius_builder *b, uint8_t code, uint8_t id)
{
	memset(b->buf, 0, RADIUS_HDR_LEN);
	b->buf[0] = code;
	b->buf[1] = id;
	b->len = RADIUS_HDR_LEN;
	b->msg_auth_off = 0;
	b->overflow = 0;
}

void
radius_add(struct radius_builder *b, uint8_t type, const void *value, size_t len)
{
	if (len > RADIUS_ATTR_MAX_VAL ||
	    sizeof(b->buf) - b->len < RADIUS_ATTR_HDR_LEN + len) {
		b->overflow = 1;
		return;
	}
	b->buf[b->len] = type;
	b->buf[b->len + 1] = (uint8_t)(RADIUS_ATTR_HDR_LEN + len);
	if (len > 0)
		memcpy(b->buf + b->len + RADIUS_ATTR_HDR_LEN, value, len);
	b->len += RADIUS_ATTR_HDR_LEN + len;
}

void
radius_add_u32(struct radius_builder *b, uint8_t type, uint32_t v)
{
	uint8_t be[4];
	be32_put(be, v);
	radius_add(b, type, be, sizeof(be));
}

void
radius_add_msg_auth(struct radius_builder *b)
{
	static const uint8_t zero[RADIUS_MSG_AUTH_LEN];
	size_t at = b->len + RADIUS_ATTR_HDR_LEN;
	radius_add(b, RADIUS_MESSAGE_AUTHENTICATOR, zero, sizeof(zero));
	if (!b->overflow)
		b->msg_auth_off = at;
}

int
radius_finish(struct radius_builder *b, const uint8_t req_auth[RADIUS_AUTH_LEN],
    const void *secret, size_t slen)
{
	uint8_t resp[RADIUS_AUTH_LEN];

	if (b->overflow)
		return -1;
	be16_put(b->buf + 2, (uint16_t)b->len);
	/* The Message-Authenticator first: the Response Authenticator
	 * covers it. */
	memcpy(b->buf + RADIUS_AUTH_OFF, req_auth, RADIUS_AUTH_LEN);
	if (b->msg_auth_off != 0 &&
	    radius_hmac(b->buf, b->len, secret, slen, b->buf + b->msg_auth_off) < 0)
		return -1;
	if (radius_md5(b->buf, b->len, req_auth, secret, slen, resp) < 0)
		return -1;
	memcpy(b->buf + RADIUS_AUTH_OFF, resp, RADIUS_AUTH_LEN);
	return (int)b->len;
}

int
radius_finish_request(struct radius_builder *b, const void *secret,
    size_t slen, uint8_t req_auth[RADIUS_AUTH_LEN])
{
	if (b->overflow)
		return -1;
	be16_put(b->buf + 2, (uint16_t)b->len);
	if (radius_request_auth(b->buf, b->len, secret, slen, req_auth) < 0)
		return -1;
	memcpy(b->buf + RADIUS_AUTH_OFF, req_auth, RADIUS_AUTH_LEN);
	return (int)b->len;
}

int
radius_response_verify(const struct radius_pkt *p,
    const uint8_t req_auth[RADIUS_AUTH_LEN], const void *secret, size_t slen)
{
	uint8_t want[RADIUS_AUTH_LEN];

	return radius_md5(p->data, p->len, req_auth, secret, slen, want) == 0 &&
	    CRYPTO_memcmp(want, p->auth, RADIUS_AUTH_LEN) == 0;
}

/* A string attribute: once, 1..253 octets, no NUL. */
static uint32_t
radius_dm_string(const struct radius_attr *a, int *has, char *out,
    const char **why)
{
	if (*has) {
		*why = "a session attribute given twice";
		return RADIUS_ERR_INVALID_REQUEST;
	}
	if (a->len == 0 || memchr(a->value, '\0', a->len) != NULL) {
		*why = "an empty name, or one holding a NUL";
		return RADIUS_ERR_INVALID_ATTRIBUTE_VALUE;
	}
	memcpy(out, a->value, a->len);
	out[a->len] = '\0';
	*has = 1;
	return 0;
}

/* A 4-octet attribute: once. */
static uint32_t
radius_dm_u32(const struct radius_attr *a, int *has, uint32_t *out,
    int raw, const char **why)
{
	if (*has) {
		*why = "an attribute given twice";
		return RADIUS_ERR_INVALID_REQUEST;
	}
	if (a->len != 4) {
		*why = "an address, timestamp or rate not 4 octets";
		return RADIUS_ERR_INVALID_ATTRIBUTE_VALUE;
	}
	if (raw)
		memcpy(out, a->value, 4);
	else
		*out = be32_get(a->value);
	*has = 1;
	return 0;
}

/* One WISPr rate of a CoA-Request's Vendor-Specific attribute. */
static uint32_t
radius_dm_wispr(uint8_t type, const uint8_t *v, size_t len,
    struct radius_dm *dm, const char **why)
{
	struct radius_attr a = { .type = type, .len = (uint8_t)len, .value = v };

	if (type == RADIUS_WISPR_BW_MAX_DOWN)
		return radius_dm_u32(&a, &dm->has_rate_down, &dm->rate_down, 0, why);
	if (type == RADIUS_WISPR_BW_MAX_UP)
		return radius_dm_u32(&a, &dm->has_rate_up, &dm->rate_up, 0, why);
	*why = "a WISPr attribute this NAS does not support";
	return RADIUS_ERR_UNSUPPORTED_ATTRIBUTE;
}

/* A Vendor-Specific attribute (RFC 2865 5.26): only WISPr's rates, only
 * in a CoA-Request; its sub-attributes must fill it exactly. */
static uint32_t
radius_dm_vsa(const struct radius_attr *a, uint8_t code, struct radius_dm *dm,
    const char **why)
{
	if (code == RADIUS_COA_REQUEST && a->len <= RADIUS_VSA_ID_LEN) {
		*why = "a Vendor-Specific attribute with nothing after its "
		    "Vendor-Id, or not a whole one";
		return RADIUS_ERR_INVALID_ATTRIBUTE_VALUE;
	}
	if (code != RADIUS_COA_REQUEST ||
	    be32_get(a->value) != RADIUS_VENDOR_WISPR) {
		*why = "a Vendor-Specific attribute this NAS does not support";
		return RADIUS_ERR_UNSUPPORTED_ATTRIBUTE;
	}
	size_t off = RADIUS_VSA_ID_LEN;
	while (off < a->len) {
		const uint8_t *sub = a->value + off;
		if (a->len - off < RADIUS_VSA_SUB_HDR_LEN ||
		    sub[1] < RADIUS_VSA_SUB_HDR_LEN || sub[1] > a->len - off) {
			*why = "a malformed Vendor-Specific attribute";
			return RADIUS_ERR_INVALID_ATTRIBUTE_VALUE;
		}
		uint32_t c = radius_dm_wispr(sub[0], sub + RADIUS_VSA_SUB_HDR_LEN,
		    sub[1] - RADIUS_VSA_SUB_HDR_LEN, dm, why);
		if (c != 0)
			return c;
		off += sub[1];
	}
	return 0;
}

static uint32_t
radius_dm_attr(const struct radius_attr *a, uint8_t code, struct radius_dm *dm,
    const char **why)
{
	switch (a->type) {
	case RADIUS_VENDOR_SPECIFIC:
		return radius_dm_vsa(a, code, dm, why);
	case RADIUS_USER_NAME:
		return radius_dm_string(a, &dm->has_user, dm->user, why);
	case RADIUS_ACCT_SESSION_ID:
		return radius_dm_string(a, &dm->has_acct_session_id,
		    dm->acct_session_id, why);
	case RADIUS_FRAMED_IP_ADDRESS:
		return radius_dm_u32(a, &dm->has_framed_ip, &dm->framed_ip, 1, why);
	case RADIUS_NAS_IP_ADDRESS:
		return radius_dm_u32(a, &dm->has_nas_ip, &dm->nas_ip, 1, why);
	case RADIUS_EVENT_TIMESTAMP:
		return 0;   /* decoded first, by radius_dm_decode */
	case RADIUS_NAS_IPV6_ADDRESS:
		*why = "a NAS-IPv6-Address (this NAS has no IPv6 address)";
		return RADIUS_ERR_NAS_ID_MISMATCH;
	case RADIUS_NAS_IDENTIFIER:      /* accepted, not compared: dae.c */
	case RADIUS_PROXY_STATE:         /* echoed in the answer */
	case RADIUS_MESSAGE_AUTHENTICATOR:   /* checked by radius_parse/verify */
		return 0;
	}
	*why = "an attribute this NAS does not support";
	return RADIUS_ERR_UNSUPPORTED_ATTRIBUTE;
}

uint32_t
radius_dm_decode(const struct radius_pkt *p, struct radius_dm *dm,
    const char **why)
{
	struct radius_attr a;
	size_t off = 0;
	uint32_t cause = 0, unsupported = 0;
	const char *uwhy = NULL;

	memset(dm, 0, sizeof(*dm));
	/* The timestamp first: a replay is dropped whatever else it holds. */
	while (radius_attr_next(p, &off, &a))
		if (a.type == RADIUS_EVENT_TIMESTAMP && (cause = radius_dm_u32(&a,
		    &dm->has_timestamp, &dm->timestamp, 0, why)) != 0)
			return cause;
	/* An unsupported attribute is the answer even after a bad value:
	 * it is what the server must fix first. */
	for (off = 0; radius_attr_next(p, &off, &a); ) {
		const char *w = NULL;
		uint32_t c = radius_dm_attr(&a, p->code, dm, &w);
		if (c == RADIUS_ERR_UNSUPPORTED_ATTRIBUTE && unsupported == 0) {
			unsupported = c;
			uwhy = w;
		} else if (c != 0 && cause == 0) {
			cause = c;
			*why = w;
		}
	}
	if (unsupported != 0) {
		*why = uwhy;
		return unsupported;
	}
	if (cause != 0)
		return cause;
	if (!dm->has_user && !dm->has_framed_ip && !dm->has_acct_session_id) {
		*why = "no User-Name, Framed-IP-Address or Acct-Session-Id";
		return RADIUS_ERR_MISSING_ATTRIBUTE;
	}
	if (p->code == RADIUS_COA_REQUEST && !dm->has_rate_down &&
	    !dm->has_rate_up) {
		*why = "no WISPr-Bandwidth-Max-Down or -Up: nothing this NAS "
		    "can change";
		return RADIUS_ERR_MISSING_ATTRIBUTE;
	}
	return 0;
}

const char *
radius_code_name(uint8_t code, char *buf, size_t len)
{
	switch (code) {
	case RADIUS_DISCONNECT_REQUEST: return "Disconnect-Request";
	case RADIUS_DISCONNECT_ACK:     return "Disconnect-ACK";
	case RADIUS_DISCONNECT_NAK:     return "Disconnect-NAK";
	case RADIUS_COA_REQUEST:        return "CoA-Request";
	case RADIUS_COA_ACK:            return "CoA-ACK";
	case RADIUS_COA_NAK:            return "CoA-NAK";
	}
	snprintf(buf, len, "code %u", code);
	return buf;
}
