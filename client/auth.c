/* CHAP (RFC 1994) with the MD5 and MS-CHAPv2 (RFC 2759) algorithms, and
 * PAP (RFC 1334), as the authenticated peer. */
#include "client/auth.h"

#include <string.h>

#include "common/byteorder.h"
#include "client/crypto.h"
#include "client/lcp.h"

#define CHAP_CHALLENGE 1
#define CHAP_RESPONSE  2
#define CHAP_SUCCESS   3
#define CHAP_FAILURE   4
#define PAP_REQUEST    1
#define PAP_ACK        2
#define PAP_NAK        3
#define AUTH_HDR_LEN   4
#define MD5_CHAL_MAX   255
#define NAME_MAX_LEN   255
#define AUTH_PKT_MAX   (AUTH_HDR_LEN + 1 + 255 + NAME_MAX_LEN)

void auth_init(struct auth *a, const char *user, const char *password,
    auth_send_fn *send, auth_random_fn *random, void *owner)
{
	memset(a, 0, sizeof(*a));
	a->user = user;
	a->password = password;
	a->send = send;
	a->random = random;
	a->owner = owner;
	a->result = AUTH_PENDING;
}

static void send_pkt(struct auth *a, uint8_t code, uint8_t id,
    const uint8_t *v, size_t vlen, int vlen_octet, const char *name)
{
	uint8_t p[AUTH_PKT_MAX];
	size_t n = AUTH_HDR_LEN, nlen = strlen(name);

	if (nlen > NAME_MAX_LEN)
		nlen = NAME_MAX_LEN;
	p[0] = code;
	p[1] = id;
	if (vlen_octet)
		p[n++] = (uint8_t)vlen;
	memcpy(p + n, v, vlen);
	n += vlen;
	memcpy(p + n, name, nlen);
	n += nlen;
	be16_put(p + 2, (uint16_t)n);
	a->send(a->owner, a->proto, p, n);
}

/* PAP Authenticate-Request: Peer-ID and Password, each with its length. */
static void pap_send(struct auth *a, uint64_t now)
{
	uint8_t p[AUTH_HDR_LEN + 2 + 2 * NAME_MAX_LEN];
	size_t ul = strlen(a->user), pl = strlen(a->password), n;

	if (ul > NAME_MAX_LEN)
		ul = NAME_MAX_LEN;
	if (pl > NAME_MAX_LEN)
		pl = NAME_MAX_LEN;
	p[0] = PAP_REQUEST;
	p[1] = a->id;
	n = AUTH_HDR_LEN;
	p[n++] = (uint8_t)ul;
	memcpy(p + n, a->user, ul);
	n += ul;
	p[n++] = (uint8_t)pl;
	memcpy(p + n, a->password, pl);
	n += pl;
	be16_put(p + 2, (uint16_t)n);
	a->send(a->owner, PPP_PAP, p, n);
	a->tries++;
	a->deadline = now + AUTH_PAP_RESTART_MS;
}

void auth_start(struct auth *a, uint16_t proto, uint8_t alg, uint64_t now)
{
	a->proto = proto;
	a->alg = alg;
	a->result = AUTH_PENDING;
	if (proto == PPP_PAP) {
		a->id = 1;
		pap_send(a, now);
	}
}

static void mschapv2_respond(struct auth *a, uint8_t id,
    const uint8_t *chal, size_t clen)
{
	uint8_t v[MSCHAP_RESPONSE_LEN] = { 0 };

	if (!a->answered || id != a->id ||
	    memcmp(chal, a->auth_chal, clen) != 0) {
		memcpy(a->auth_chal, chal, clen);
		a->random(a->peer_chal, sizeof(a->peer_chal));
		mschap_nt_response(a->auth_chal, a->peer_chal, a->user,
		    a->password, a->nt_resp);
	}
	memcpy(v, a->peer_chal, MSCHAP_CHALLENGE_LEN);
	/* 8 reserved zero octets, then the NT-Response, then Flags 0. */
	memcpy(v + MSCHAP_CHALLENGE_LEN + 8, a->nt_resp,
	    MSCHAP_NT_RESPONSE_LEN);
	send_pkt(a, CHAP_RESPONSE, id, v, sizeof(v), 1, a->user);
}

/* RFC 1994: MD5 over Identifier, secret and challenge. */
static void md5_respond(struct auth *a, uint8_t id, const uint8_t *chal,
    size_t clen)
{
	uint8_t buf[1 + NAME_MAX_LEN + MD5_CHAL_MAX], d[MD5_DIGEST_LENGTH];
	size_t pl = strlen(a->password), n = 0;

	if (pl > NAME_MAX_LEN)
		pl = NAME_MAX_LEN;
	buf[n++] = id;
	memcpy(buf + n, a->password, pl);
	n += pl;
	memcpy(buf + n, chal, clen);
	n += clen;
	MD5(buf, n, d);
	OPENSSL_cleanse(buf, sizeof(buf));
	send_pkt(a, CHAP_RESPONSE, id, d, sizeof(d), 1, a->user);
}

static int chap_input(struct auth *a, uint8_t code, uint8_t id,
    const uint8_t *d, size_t len)
{
	switch (code) {
	case CHAP_CHALLENGE:
		if (len < 1 || d[0] == 0 || d[0] > len - 1)
			return -1;
		if (a->alg == CHAP_ALG_MSCHAPV2) {
			if (d[0] != MSCHAP_CHALLENGE_LEN)
				return -1;
			mschapv2_respond(a, id, d + 1, d[0]);
		} else
			md5_respond(a, id, d + 1, d[0]);
		a->id = id;
		a->answered = 1;
		return a->result;
	case CHAP_SUCCESS:
		if (!a->answered || id != a->id)
			return -1;
		if (a->result != AUTH_PENDING)
			return a->result;
		if (a->alg == CHAP_ALG_MSCHAPV2 &&
		    mschap_auth_check(a->password, a->nt_resp, a->peer_chal,
		    a->auth_chal, a->user, d, len) < 0)
			a->result = AUTH_BAD;
		else
			a->result = AUTH_OK;
		return a->result;
	case CHAP_FAILURE:
		if (!a->answered || id != a->id)
			return -1;
		if (a->result == AUTH_PENDING)
			a->result = AUTH_FAIL;
		return a->result;
	}
	return -1;
}

int auth_input(struct auth *a, uint16_t proto, const uint8_t *pkt,
    size_t len, uint64_t now)
{
	size_t plen;

	(void)now;
	if (proto != a->proto || len < AUTH_HDR_LEN)
		return -1;
	plen = be16_get(pkt + 2);
	if (plen < AUTH_HDR_LEN || plen > len)
		return -1;
	if (proto == PPP_CHAP)
		return chap_input(a, pkt[0], pkt[1], pkt + AUTH_HDR_LEN,
		    plen - AUTH_HDR_LEN);
	if (pkt[1] != a->id || (pkt[0] != PAP_ACK && pkt[0] != PAP_NAK))
		return -1;
	if (a->result == AUTH_PENDING)
		a->result = pkt[0] == PAP_ACK ? AUTH_OK : AUTH_FAIL;
	a->deadline = 0;
	return a->result;
}

enum auth_result auth_timer(struct auth *a, uint64_t now)
{
	if (a->deadline == 0 || now < a->deadline)
		return a->result;
	a->deadline = 0;
	if (a->result != AUTH_PENDING || a->proto != PPP_PAP)
		return a->result;
	if (a->tries >= AUTH_PAP_MAX_TRIES)
		a->result = AUTH_FAIL;
	else
		pap_send(a, now);
	return a->result;
}

int auth_master_key(const struct auth *a, uint8_t out[MSCHAP_MASTER_KEY_LEN])
{
	if (a->proto != PPP_CHAP || a->alg != CHAP_ALG_MSCHAPV2 ||
	    a->result != AUTH_OK)
		return -1;
	mschap_master_key(a->password, a->nt_resp, out);
	return 0;
}
