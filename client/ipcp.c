/* IPCP options: IP-Address (3), and RFC 1877 primary DNS (129), primary
 * NBNS (130), secondary DNS (131), secondary NBNS (132). */
#include "client/ipcp.h"

#include <stddef.h>
#include <string.h>

#include "client/opt.h"

#define IPCP_OPT_ADDR   3
#define IPCP_OPT_DNS1   129
#define IPCP_OPT_WINS1  130
#define IPCP_OPT_DNS2   131
#define IPCP_OPT_WINS2  132
#define IPCP_ADDR_LEN   6

static struct ipcp *ipcp_of(struct fsm *f)
{
	return (struct ipcp *)((char *)f - offsetof(struct ipcp, fsm));
}

static size_t put_addr(uint8_t *p, size_t n, size_t cap, uint8_t type,
    const struct in_addr *a)
{
	return opt_put(p, n, cap, type, (const uint8_t *)&a->s_addr, 4);
}

static size_t ipcp_req_build(struct fsm *f, uint8_t *p, size_t cap)
{
	struct ipcp *c = ipcp_of(f);
	size_t n = put_addr(p, 0, cap, IPCP_OPT_ADDR, &c->local);

	if (c->want_dns[0])
		n = put_addr(p, n, cap, IPCP_OPT_DNS1, &c->dns[0]);
	if (c->want_wins[0])
		n = put_addr(p, n, cap, IPCP_OPT_WINS1, &c->wins[0]);
	if (c->want_dns[1])
		n = put_addr(p, n, cap, IPCP_OPT_DNS2, &c->dns[1]);
	if (c->want_wins[1])
		n = put_addr(p, n, cap, IPCP_OPT_WINS2, &c->wins[1]);
	return n;
}

static int ipcp_req_check(struct fsm *f, const uint8_t *p, size_t len,
    uint8_t *out, size_t *outlen)
{
	struct ipcp *c = ipcp_of(f);
	struct opt_reply r = { .out = out, .cap = FSM_PKT_MAX };

	if (opt_valid(p, len) < 0)
		return -1;
	for (const uint8_t *o = p; o < p + len; o += o[1]) {
		if (o[0] == IPCP_OPT_ADDR && o[1] == IPCP_ADDR_LEN)
			memcpy(&c->peer.s_addr, o + 2, 4);
		else
			opt_reply_rej(&r, o);   /* VJ compression and others */
	}
	return opt_reply_end(&r, outlen);
}

static struct in_addr *slot(struct ipcp *c, uint8_t type, uint8_t **want)
{
	switch (type) {
	case IPCP_OPT_ADDR:
		*want = NULL;
		return &c->local;
	case IPCP_OPT_DNS1:
		*want = &c->want_dns[0];
		return &c->dns[0];
	case IPCP_OPT_DNS2:
		*want = &c->want_dns[1];
		return &c->dns[1];
	case IPCP_OPT_WINS1:
		*want = &c->want_wins[0];
		return &c->wins[0];
	case IPCP_OPT_WINS2:
		*want = &c->want_wins[1];
		return &c->wins[1];
	}
	return NULL;
}

static int ipcp_nak_recv(struct fsm *f, const uint8_t *p, size_t len,
    int reject)
{
	struct ipcp *c = ipcp_of(f);

	if (opt_valid(p, len) < 0)
		return -1;
	for (const uint8_t *o = p; o < p + len; o += o[1]) {
		uint8_t *want;
		struct in_addr *a = slot(c, o[0], &want);

		if (a == NULL)
			continue;
		if (reject) {
			/* A server that will not give DNS still gives a
			 * link; one that rejects the address gives none. */
			if (want)
				*want = 0;
		} else if (o[1] == IPCP_ADDR_LEN)
			memcpy(&a->s_addr, o + 2, 4);
	}
	return 0;
}

static const struct fsm_ops ipcp_ops = {
	.req_build = ipcp_req_build,
	.req_check = ipcp_req_check,
	.nak_recv = ipcp_nak_recv,
};

void ipcp_init(struct ipcp *c, int dns, int wins, fsm_send_fn *send,
    fsm_event_fn *event, void *owner)
{
	memset(c, 0, sizeof(*c));
	fsm_init(&c->fsm, PPP_IPCP, &ipcp_ops, send, event, owner);
	c->want_dns[0] = c->want_dns[1] = dns ? 1 : 0;
	c->want_wins[0] = c->want_wins[1] = wins ? 1 : 0;
}
