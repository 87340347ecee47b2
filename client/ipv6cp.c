/* IPV6CP Interface-Identifier negotiation (RFC 5072 section 4.1). */
#include "client/ipv6cp.h"

#include <stddef.h>
#include <string.h>

#include "client/opt.h"

#define IPV6CP_OPT_IID 1

static struct ipv6cp *ipv6cp_of(struct fsm *f)
{
	return (struct ipv6cp *)((char *)f - offsetof(struct ipv6cp, fsm));
}

static int iid_zero(const uint8_t *iid)
{
	static const uint8_t zero[IPV6CP_IID_LEN];

	return memcmp(iid, zero, IPV6CP_IID_LEN) == 0;
}

static size_t ipv6cp_req_build(struct fsm *f, uint8_t *p, size_t cap)
{
	return opt_put(p, 0, cap, IPV6CP_OPT_IID, ipv6cp_of(f)->iid,
	    IPV6CP_IID_LEN);
}

static int ipv6cp_req_check(struct fsm *f, const uint8_t *p, size_t len,
    uint8_t *out, size_t *outlen)
{
	struct ipv6cp *c = ipv6cp_of(f);
	struct opt_reply r = { .out = out, .cap = FSM_PKT_MAX };

	if (opt_valid(p, len) < 0)
		return -1;
	for (const uint8_t *o = p; o < p + len; o += o[1]) {
		if (o[0] != IPV6CP_OPT_IID || o[1] != 2 + IPV6CP_IID_LEN) {
			opt_reply_rej(&r, o);
			continue;
		}
		/* Zero or ours: suggest one that differs from ours. */
		if (iid_zero(o + 2) ||
		    memcmp(o + 2, c->iid, IPV6CP_IID_LEN) == 0) {
			uint8_t s[IPV6CP_IID_LEN];

			for (int i = 0; i < IPV6CP_IID_LEN; i++)
				s[i] = (uint8_t)~c->iid[i];
			opt_reply_nak(&r, IPV6CP_OPT_IID, s, sizeof(s));
		} else
			memcpy(c->peer_iid, o + 2, IPV6CP_IID_LEN);
	}
	return opt_reply_end(&r, outlen);
}

static int ipv6cp_nak_recv(struct fsm *f, const uint8_t *p, size_t len,
    int reject)
{
	struct ipv6cp *c = ipv6cp_of(f);

	if (opt_valid(p, len) < 0)
		return -1;
	for (const uint8_t *o = p; o < p + len; o += o[1])
		if (!reject && o[0] == IPV6CP_OPT_IID &&
		    o[1] == 2 + IPV6CP_IID_LEN && !iid_zero(o + 2))
			memcpy(c->iid, o + 2, IPV6CP_IID_LEN);
	return 0;
}

static const struct fsm_ops ipv6cp_ops = {
	.req_build = ipv6cp_req_build,
	.req_check = ipv6cp_req_check,
	.nak_recv = ipv6cp_nak_recv,
};

void ipv6cp_init(struct ipv6cp *c, const uint8_t iid[IPV6CP_IID_LEN],
    fsm_send_fn *send, fsm_event_fn *event, void *owner)
{
	memset(c, 0, sizeof(*c));
	fsm_init(&c->fsm, PPP_IPV6CP, &ipv6cp_ops, send, event, owner);
	memcpy(c->iid, iid, IPV6CP_IID_LEN);
	if (iid_zero(c->iid))
		c->iid[IPV6CP_IID_LEN - 1] = 1;
}
