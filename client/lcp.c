/* LCP options (RFC 1661 section 6) and the LCP-only codes (section 5.7-5.9,
 * RFC 1570 Identification). */
#include "client/lcp.h"

#include <stddef.h>
#include <string.h>

#include "common/byteorder.h"
#include "client/opt.h"

#define LCP_OPT_MRU      1
#define LCP_OPT_ACCM     2
#define LCP_OPT_AUTH     3
#define LCP_OPT_MAGIC    5
#define LCP_OPT_PFC      7
#define LCP_OPT_ACFC     8
#define LCP_OPT_CALLBACK 13
#define LCP_CALLBACK_CBCP 6      /* RFC 1570 operation: CBCP */

#define LCP_PROTREJ      8
#define LCP_ECHOREQ      9
#define LCP_ECHOREP      10
#define LCP_DISCARD      11
#define LCP_IDENT        12
#define LCP_TIMEREMAIN   13

#define LCP_MIN_MRU      64      /* below that the frames carry nothing */
/* Our Protocol-Rejects carry at most this much of the rejected frame. */
#define LCP_PROTREJ_INFO 64

static struct lcp *lcp_of(struct fsm *f)
{
	return (struct lcp *)((char *)f - offsetof(struct lcp, fsm));
}

static size_t lcp_req_build(struct fsm *f, uint8_t *p, size_t cap)
{
	struct lcp *l = lcp_of(f);
	uint8_t v[4];
	size_t n = 0;

	if (l->want_mru) {
		be16_put(v, l->mru);
		n = opt_put(p, n, cap, LCP_OPT_MRU, v, 2);
	}
	if (l->want_accm) {
		be32_put(v, 0);
		n = opt_put(p, n, cap, LCP_OPT_ACCM, v, 4);
	}
	if (l->want_magic) {
		be32_put(v, l->magic);
		n = opt_put(p, n, cap, LCP_OPT_MAGIC, v, 4);
	}
	if (l->want_pfc)
		n = opt_put(p, n, cap, LCP_OPT_PFC, NULL, 0);
	if (l->want_acfc)
		n = opt_put(p, n, cap, LCP_OPT_ACFC, NULL, 0);
	if (l->want_cbcp) {
		v[0] = LCP_CALLBACK_CBCP;
		n = opt_put(p, n, cap, LCP_OPT_CALLBACK, v, 1);
	}
	return n;
}

/* The server's Authentication-Protocol: ours is acked, anything else is
 * Nak'ed with ours. */
static void auth_check(struct lcp *l, const uint8_t *o, struct opt_reply *r)
{
	uint16_t proto = o[1] >= 4 ? be16_get(o + 2) : 0;
	uint8_t alg = o[1] >= 5 ? o[4] : 0;
	uint8_t want[3];

	if (proto == l->want_auth_proto && (proto == PPP_PAP ?
	    o[1] == 4 : o[1] == 5 && alg == l->want_auth_alg)) {
		l->auth_proto = proto;
		l->auth_alg = alg;
		return;
	}
	l->auth_naks++;
	be16_put(want, l->want_auth_proto);
	want[2] = l->want_auth_alg;
	opt_reply_nak(r, LCP_OPT_AUTH, want, l->want_auth_proto == PPP_PAP ?
	    2 : 3);
}

static int lcp_req_check(struct fsm *f, const uint8_t *p, size_t len,
    uint8_t *out, size_t *outlen)
{
	struct lcp *l = lcp_of(f);
	struct opt_reply r = { .out = out, .cap = FSM_PKT_MAX };
	uint16_t mru = LCP_DEFAULT_MRU;
	uint8_t pfc = 0, acfc = 0, v[4];

	if (opt_valid(p, len) < 0)
		return -1;
	l->auth_proto = 0;
	for (const uint8_t *o = p; o < p + len; o += o[1]) {
		switch (o[0]) {
		case LCP_OPT_MRU:
			if (o[1] != 4)
				goto reject;
			mru = be16_get(o + 2);
			if (mru < LCP_MIN_MRU) {
				be16_put(v, LCP_MIN_MRU);
				opt_reply_nak(&r, LCP_OPT_MRU, v, 2);
			}
			break;
		case LCP_OPT_ACCM:
			/* No async HDLC inside GRE: any map will do. */
			if (o[1] != 6)
				goto reject;
			break;
		case LCP_OPT_AUTH:
			if (o[1] < 4)
				goto reject;
			auth_check(l, o, &r);
			break;
		case LCP_OPT_MAGIC:
			if (o[1] != 6)
				goto reject;
			/* Our own number back: a looped link or bad luck. */
			if (be32_get(o + 2) == l->magic) {
				be32_put(v, ~l->magic);
				opt_reply_nak(&r, LCP_OPT_MAGIC, v, 4);
			}
			break;
		case LCP_OPT_PFC:
			if (o[1] != 2)
				goto reject;
			pfc = 1;
			break;
		case LCP_OPT_ACFC:
			if (o[1] != 2)
				goto reject;
			acfc = 1;
			break;
		default:
		reject:
			opt_reply_rej(&r, o);
			break;
		}
	}
	l->peer_mru = mru;
	l->peer_pfc = pfc;
	l->peer_acfc = acfc;
	return opt_reply_end(&r, outlen);
}

static int lcp_nak_recv(struct fsm *f, const uint8_t *p, size_t len,
    int reject)
{
	struct lcp *l = lcp_of(f);

	if (opt_valid(p, len) < 0)
		return -1;
	for (const uint8_t *o = p; o < p + len; o += o[1]) {
		switch (o[0]) {
		case LCP_OPT_MRU:
			if (reject)
				l->want_mru = 0;
			else if (o[1] == 4 && be16_get(o + 2) >= LCP_MIN_MRU &&
			    be16_get(o + 2) <= LCP_DEFAULT_MRU)
				l->mru = be16_get(o + 2);
			break;
		case LCP_OPT_ACCM:
			l->want_accm = 0;
			break;
		case LCP_OPT_MAGIC:
			if (reject)
				l->want_magic = 0;
			else if (o[1] == 6)
				l->magic = be32_get(o + 2) ^ 0x5A5A5A5Au;
			break;
		case LCP_OPT_PFC:
			l->want_pfc = 0;
			break;
		case LCP_OPT_ACFC:
			l->want_acfc = 0;
			break;
		case LCP_OPT_CALLBACK:
			/* Windows asks for CBCP once; servers refuse it. */
			l->want_cbcp = 0;
			break;
		}
	}
	return 0;
}

static int lcp_code_recv(struct fsm *f, uint8_t code, uint8_t id,
    const uint8_t *p, size_t len, uint64_t now)
{
	struct lcp *l = lcp_of(f);
	uint8_t rep[FSM_PKT_MAX];

	(void)now;
	switch (code) {
	case LCP_ECHOREQ:
		if (f->state != FSM_OPENED || len < 4)
			return 0;
		if (len > sizeof(rep))
			len = sizeof(rep);
		memcpy(rep, p, len);
		be32_put(rep, l->magic);
		fsm_send_code(f, LCP_ECHOREP, id, rep, len);
		return 0;
	case LCP_PROTREJ:
		/* The owner hears of it through ppp_input's own parse. */
	case LCP_ECHOREP:
	case LCP_DISCARD:
	case LCP_IDENT:
	case LCP_TIMEREMAIN:
		return 0;
	}
	return -1;
}

static const struct fsm_ops lcp_ops = {
	.req_build = lcp_req_build,
	.req_check = lcp_req_check,
	.nak_recv = lcp_nak_recv,
	.code_recv = lcp_code_recv,
};

void lcp_init(struct lcp *l, const struct lcp_want *w, fsm_send_fn *send,
    fsm_event_fn *event, void *owner)
{
	memset(l, 0, sizeof(*l));
	fsm_init(&l->fsm, PPP_LCP, &lcp_ops, send, event, owner);
	l->mru = w->mru ? w->mru : LCP_DEFAULT_MRU;
	l->want_mru = w->mru && w->mru != LCP_DEFAULT_MRU;
	l->want_accm = w->accm;
	l->magic = w->magic ? w->magic : 1;
	l->want_magic = 1;
	l->want_pfc = 1;
	l->want_acfc = 1;
	l->want_cbcp = w->cbcp;
	l->want_auth_proto = w->auth_proto;
	l->want_auth_alg = w->auth_alg;
	l->peer_mru = LCP_DEFAULT_MRU;
}

void lcp_send_ident(struct lcp *l, const char *msg)
{
	uint8_t d[64];
	size_t n = strlen(msg);

	if (n > sizeof(d) - 4)
		n = sizeof(d) - 4;
	be32_put(d, l->magic);
	memcpy(d + 4, msg, n);
	fsm_send_code(&l->fsm, LCP_IDENT, fsm_next_id(&l->fsm), d, 4 + n);
}

void lcp_send_protrej(struct lcp *l, uint16_t proto, const uint8_t *info,
    size_t len)
{
	uint8_t d[2 + LCP_PROTREJ_INFO];

	if (len > LCP_PROTREJ_INFO)
		len = LCP_PROTREJ_INFO;
	be16_put(d, proto);
	if (len)
		memcpy(d + 2, info, len);
	fsm_send_code(&l->fsm, LCP_PROTREJ, fsm_next_id(&l->fsm), d, 2 + len);
}

int lcp_auth_refused(const struct lcp *l)
{
	return l->auth_naks >= LCP_MAX_AUTH_NAKS;
}
