/* Fuzz the RADIUS side of the Dynamic Authorization server (pptpd/radius.c)
 * as pptpd/dae.c uses it on every datagram: radius_parse(), the walk over
 * the attributes, radius_request_verify(), radius_dm_decode(), and the
 * answer built from it. Besides memory safety it checks the contract:
 *  - a packet radius_parse() accepts has a Length within the datagram and
 *    attributes that tile it exactly;
 *  - it fails, without reading past the end, on the same packet cut short;
 *  - once signed with the secret (flag bit 0) it verifies, and with one
 *    octet of it changed it does not;
 *  - the answer, Proxy-States echoed, parses again and is of the size
 *    built;
 *  - a request decoded without a NAK has a rate (WISPr) exactly when it
 *    is a CoA-Request.
 *
 * Input: 1 flags byte (bit 0: sign the packet first), then the datagram. */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_util.h"
#include "pptpd/radius.h"

#define SECRET "fuzz-secret"

static void
check_tiling(const struct radius_pkt *p, size_t n)
{
	struct radius_attr a;
	size_t off = 0, sum = RADIUS_HDR_LEN;

	if (p->len < RADIUS_HDR_LEN || p->len > n || p->len > RADIUS_MAX_LEN)
		abort();
	while (radius_attr_next(p, &off, &a)) {
		if (a.value + a.len > p->data + p->len)
			abort();
		sum += (size_t)a.len + RADIUS_ATTR_HDR_LEN;
	}
	if (sum != p->len)
		abort();
}

/* The answer dae.c would send, from what the request holds. */
static void
check_answer(const struct radius_pkt *p, uint32_t cause)
{
	struct radius_builder b;
	struct radius_attr a;
	struct radius_pkt q;
	const char *why;

	radius_begin(&b, cause ? RADIUS_DISCONNECT_NAK : RADIUS_DISCONNECT_ACK,
	    p->id);
	if (cause)
		radius_add_u32(&b, RADIUS_ERROR_CAUSE, cause);
	for (size_t off = 0; radius_attr_next(p, &off, &a); )
		if (a.type == RADIUS_PROXY_STATE)
			radius_add(&b, RADIUS_PROXY_STATE, a.value, a.len);
	if (p->msg_auth != NULL)
		radius_add_msg_auth(&b);
	int n = radius_finish(&b, p->auth, SECRET, strlen(SECRET));
	if (n < 0)
		return;   /* too many Proxy-States to echo: no answer */
	uint8_t *exact = fz_dup(b.buf, (size_t)n);
	if (radius_parse(&q, exact, (size_t)n, &why) < 0 || q.len != n)
		abort();
	free(exact);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct radius_pkt p;
	struct radius_dm dm;
	const char *why = NULL;

	if (size < 1)
		return 0;
	int sign = data[0] & 1;
	size_t n = size - 1;
	uint8_t *buf = fz_dup(data + 1, n);

	if (sign && n >= RADIUS_HDR_LEN) {
		/* the Length field as a client would set it, then the HMAC
		 * and the authenticator */
		size_t len = n > RADIUS_MAX_LEN ? RADIUS_MAX_LEN : n;
		buf[2] = (uint8_t)(len >> 8);
		buf[3] = (uint8_t)len;
		if (radius_parse(&p, buf, n, &why) == 0 && p.msg_auth != NULL) {
			uint8_t *ma = (uint8_t *)p.msg_auth;
			unsigned int ml;
			memset(buf + RADIUS_AUTH_OFF, 0, RADIUS_AUTH_LEN);
			memset(ma, 0, RADIUS_MSG_AUTH_LEN);
			HMAC(EVP_md5(), SECRET, (int)strlen(SECRET), buf, len, ma, &ml);
		}
		radius_request_auth(buf, len, SECRET, strlen(SECRET),
		    buf + RADIUS_AUTH_OFF);
	}
	if (radius_parse(&p, buf, n, &why) < 0) {
		if (why == NULL)
			abort();
		free(buf);
		return 0;
	}
	check_tiling(&p, n);
	/* cut short by one octet, in an exact buffer: refused */
	uint8_t *cut = fz_dup(buf, p.len - 1);
	struct radius_pkt pc;
	if (radius_parse(&pc, cut, p.len - 1, &why) == 0)
		abort();
	free(cut);

	int ok = radius_request_verify(&p, SECRET, strlen(SECRET));
	if (sign && !ok)
		abort();   /* signed just now: it must hold */
	if (ok) {
		buf[p.len - 1] ^= 0x01;
		if (radius_request_verify(&p, SECRET, strlen(SECRET)))
			abort();
		buf[p.len - 1] ^= 0x01;
	}
	uint32_t cause = radius_dm_decode(&p, &dm, &why);
	if (cause != 0 && why == NULL)
		abort();
	if (dm.has_user && strlen(dm.user) == 0)
		abort();
	/* a request served carries a rate exactly when it is a CoA (the
	 * only change pptpd makes) */
	if (cause == 0 && (p.code == RADIUS_COA_REQUEST) !=
	    (dm.has_rate_down || dm.has_rate_up))
		abort();
	check_answer(&p, cause);
	free(buf);
	return 0;
}
