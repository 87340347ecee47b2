/* CCP option 18 (RFC 3078 section 2.1): the initiator offers what it
 * supports, the responder Naks with one strength. */
#include "client/ccp.h"

#include <stddef.h>
#include <string.h>

#include "common/byteorder.h"
#include "client/mppe.h"
#include "client/opt.h"

#define CCP_OPT_MPPE    18
#define CCP_OPT_MPPE_LEN 6
#define CCP_RESETREQ    14
#define CCP_RESETACK    15
#define MPPE_STRENGTHS  (MPPE_OPT_40 | MPPE_OPT_56 | MPPE_OPT_128)

static struct ccp *ccp_of(struct fsm *f)
{
	return (struct ccp *)((char *)f - offsetof(struct ccp, fsm));
}

static size_t ccp_req_build(struct fsm *f, uint8_t *p, size_t cap)
{
	uint8_t v[4];

	if (ccp_of(f)->no_mppe)
		return 0;
	be32_put(v, ccp_of(f)->want);
	return opt_put(p, 0, cap, CCP_OPT_MPPE, v, 4);
}

/* The strongest strength of `bits` we allow, 0 if none. */
static uint32_t pick(const struct ccp *c, uint32_t bits)
{
	bits &= c->allow;
	return bits & MPPE_OPT_128 ? MPPE_OPT_128 : bits & MPPE_OPT_40;
}

static int ccp_req_check(struct fsm *f, const uint8_t *p, size_t len,
    uint8_t *out, size_t *outlen)
{
	struct ccp *c = ccp_of(f);
	struct opt_reply r = { .out = out, .cap = FSM_PKT_MAX };
	int seen = 0;

	if (opt_valid(p, len) < 0)
		return -1;
	for (const uint8_t *o = p; o < p + len; o += o[1]) {
		uint32_t bits, s, h, want;
		uint8_t v[4];

		if (o[0] != CCP_OPT_MPPE || o[1] != CCP_OPT_MPPE_LEN ||
		    seen || c->no_mppe) {
			opt_reply_rej(&r, o);
			continue;
		}
		seen = 1;
		bits = be32_get(o + 2);
		s = bits & MPPE_STRENGTHS;
		/* Both directions run one mode (RFC 3078 2.1 defines H per
		 * direction, but pppd and Windows agree on one): ours. pppd
		 * asks for stateless first and takes our Nak for stateful
		 * unless it refuses stateful mode; when it Naks ours back to
		 * stateless, ccp_nak_recv() settles for that. */
		h = c->want & MPPE_OPT_STATELESS;
		want = pick(c, s) | h;
		if (bits == want && want & MPPE_STRENGTHS) {
			c->peer = bits;
			continue;
		}
		if (!(want & MPPE_STRENGTHS))   /* nothing in common */
			want = c->want;
		be32_put(v, want);
		opt_reply_nak(&r, CCP_OPT_MPPE, v, 4);
	}
	return opt_reply_end(&r, outlen);
}

static int ccp_nak_recv(struct fsm *f, const uint8_t *p, size_t len,
    int reject)
{
	struct ccp *c = ccp_of(f);

	if (opt_valid(p, len) < 0)
		return -1;
	if (c->no_mppe)     /* we asked for nothing: nothing to change */
		return 0;
	for (const uint8_t *o = p; o < p + len; o += o[1]) {
		uint32_t bits, s;

		if (o[0] != CCP_OPT_MPPE)
			continue;
		if (reject || o[1] != CCP_OPT_MPPE_LEN) {
			c->refused = 1;
			continue;
		}
		bits = be32_get(o + 2);
		s = pick(c, bits & MPPE_STRENGTHS);
		if (!s || (!(bits & MPPE_OPT_STATELESS) && !c->stateful_ok)) {
			c->refused = 1;
			continue;
		}
		c->want = s | (bits & MPPE_OPT_STATELESS);
	}
	return 0;
}

static int ccp_code_recv(struct fsm *f, uint8_t code, uint8_t id,
    const uint8_t *p, size_t len, uint64_t now)
{
	struct ccp *c = ccp_of(f);

	(void)p;
	(void)len;
	(void)now;
	switch (code) {
	case CCP_RESETREQ:
		if (f->state != FSM_OPENED)
			return 0;
		c->reset_req = 1;
		fsm_send_code(f, CCP_RESETACK, id, NULL, 0);
		return 0;
	case CCP_RESETACK:
		return 0;
	}
	return -1;
}

static const struct fsm_ops ccp_ops = {
	.req_build = ccp_req_build,
	.req_check = ccp_req_check,
	.nak_recv = ccp_nak_recv,
	.code_recv = ccp_code_recv,
};

void ccp_init(struct ccp *c, int bits, int stateful, fsm_send_fn *send,
    fsm_event_fn *event, void *owner)
{
	memset(c, 0, sizeof(*c));
	fsm_init(&c->fsm, PPP_CCP, &ccp_ops, send, event, owner);
	c->allow = bits == 40 ? MPPE_OPT_40 : bits == 128 ? MPPE_OPT_128 :
	    MPPE_OPT_40 | MPPE_OPT_128;
	c->stateful_ok = stateful ? 1 : 0;
	c->want = c->allow | (stateful ? 0 : MPPE_OPT_STATELESS);
	c->no_mppe = bits == CCP_NO_MPPE;
}

int ccp_agreed(const struct ccp *c, int *bits, int *stateful)
{
	uint32_t s = c->want & MPPE_STRENGTHS;

	if (s != (c->peer & MPPE_STRENGTHS) || (s != MPPE_OPT_40 &&
	    s != MPPE_OPT_128) || (c->want ^ c->peer) & MPPE_OPT_STATELESS)
		return -1;
	*bits = s == MPPE_OPT_128 ? 128 : 40;
	*stateful = !(c->want & MPPE_OPT_STATELESS);
	return 0;
}

void ccp_send_reset(struct ccp *c)
{
	if (c->fsm.state == FSM_OPENED)
		fsm_send_code(&c->fsm, CCP_RESETREQ, fsm_next_id(&c->fsm),
		    NULL, 0);
}

int ccp_take_reset(struct ccp *c)
{
	int r = c->reset_req;

	c->reset_req = 0;
	return r;
}
