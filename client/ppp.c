/* One session's userspace PPP (client/ppp.h): framing, the phases of
 * RFC 1661 section 3.2 (establish, authenticate, network), and the
 * datagram path through MPPE. The protocols live in lcp.c, auth.c,
 * ccp.c, ipcp.c and ipv6cp.c on fsm.c; this file hands them frames and
 * hears their This-Layer-Up/Down/Finished. */
#include "client/ppp.h"

#include <stdlib.h>
#include <string.h>

#include "client/auth.h"
#include "common/byteorder.h"
#include "client/ccp.h"
#include "client/crypto.h"
#include "client/ipcp.h"
#include "client/ipv6cp.h"
#include "client/lcp.h"
#include "client/mppe.h"
#include "proto/ra.h"

#define PPP_ADDRESS      0xFF
#define PPP_CONTROL      0x03
#define PPP_HDR_MAX      4          /* address, control, 2-octet protocol */
#define PPP_MTU_MAX      1500       /* the largest datagram we build */
/* The largest frame we decrypt: a 1500-octet MRU and headers, with room
 * for servers that overshoot a little. */
#define PPP_RX_MAX       2048
#define MPPE_OVERHEAD    (MPPE_HDR_LEN + 2)  /* header, inner protocol */
#define LCP_PROTREJ_CODE 8
#define WINDOWS_IDENT_1  "MSRASV5.20"
#define WINDOWS_IDENT_2  "MSRAS-0-PPTP-LOAD"

enum ppp_phase { PHASE_ESTABLISH, PHASE_AUTH, PHASE_NETWORK, PHASE_DEAD };

struct ppp {
	const struct ppp_ops *ops;
	void *arg;
	struct ppp_config cfg;       /* strings point into strings[] */
	struct lcp lcp;
	struct auth auth;
	struct ccp ccp;
	struct ipcp ipcp;
	struct ipv6cp ipv6cp;
	struct mppe *mppe;
	struct ppp_stats stats;
	/* The global IPv6 address formed from the server's Router
	 * Advertisement (its /64 and our IPV6CP interface identifier). */
	struct in6_addr ra_addr;
	int have_ra_addr;
	struct ppp_facts facts;
	uint64_t now;
	enum ppp_reason reason;
	uint8_t phase;
	uint8_t depth;               /* nesting of public calls */
	uint8_t up_sent, down_pending, down_sent;
	uint8_t use_ccp, ccp_done, ipcp_started;
	uint8_t renego_done;         /* cfg.renego happened (once) */
	uint8_t renego_switch;       /* the next authentication is as
	                                cfg.renego_user, with renego_mppe */
	unsigned auths;              /* authentications that succeeded */
	size_t strings_len;
	/* the text of the server's first LCP Terminate-Request (pppd puts
	 * its reason there: "MPPE required but peer negotiation failed") */
	char peer_msg[PPP_PEER_MSG_MAX];
	char strings[];              /* user, password, renego_user,
	                                renego_password: each NUL-ended */
};

const char *ppp_reason_str(enum ppp_reason r)
{
	static const char *const s[PPP_REASON__COUNT] = {
		[PPP_REASON_NONE] = "none",
		[PPP_REASON_LCP_TIMEOUT] = "lcp-timeout",
		[PPP_REASON_LCP_REJECTED] = "lcp-rejected",
		[PPP_REASON_AUTH_FAILED] = "auth-failed",
		[PPP_REASON_AUTH_BAD] = "auth-bad-response",
		[PPP_REASON_CCP_FAILED] = "ccp-failed",
		[PPP_REASON_IPCP_FAILED] = "ipcp-failed",
		[PPP_REASON_PEER_TERMINATE] = "peer-terminate",
		[PPP_REASON_LOCAL_CLOSE] = "local-close",
		[PPP_REASON_BAD_FRAME] = "bad-frame",
	};

	return (unsigned)r < PPP_REASON__COUNT && s[r] ? s[r] : "unknown";
}

static void random_default(uint8_t *buf, size_t len)
{
	if (RAND_bytes(buf, (int)len) != 1)
		memset(buf, 0x5A, len);   /* never fatal: a magic, a nonce */
}

/* A frame of `proto` around pkt: address/control unless the server let
 * us compress them (never for LCP, RFC 1661 section 6.6), the protocol
 * in one octet when PFC allows. */
static size_t frame_header(const struct ppp *p, uint16_t proto, uint8_t *h)
{
	size_t n = 0;

	if (!p->lcp.peer_acfc || proto == PPP_LCP) {
		h[n++] = PPP_ADDRESS;
		h[n++] = PPP_CONTROL;
	}
	if (p->lcp.peer_pfc && proto < 0x100 && proto != PPP_LCP)
		h[n++] = (uint8_t)proto;
	else {
		be16_put(h + n, proto);
		n += 2;
	}
	return n;
}

static void ppp_send(void *owner, uint16_t proto, const uint8_t *pkt,
    size_t len)
{
	struct ppp *p = owner;
	uint8_t f[PPP_HDR_MAX + FSM_HDR_LEN + FSM_PKT_MAX + 512];
	size_t n = frame_header(p, proto, f);

	if (p->down_sent || len > sizeof(f) - n)
		return;
	memcpy(f + n, pkt, len);
	p->ops->output(p->arg, f, n + len);
}

static void step(struct ppp *p, const char *what)
{
	if (p->ops->step)
		p->ops->step(p->arg, what);
}

/* End the session for `reason`: Terminate-Request to the server, and
 * ops->down when the outermost call returns. */
static void ppp_fail(struct ppp *p, enum ppp_reason reason)
{
	if (p->reason == PPP_REASON_NONE)
		p->reason = reason;
	if (p->phase != PHASE_DEAD) {
		p->phase = PHASE_DEAD;
		fsm_close(&p->lcp.fsm, p->now);
	}
	p->down_pending = 1;
}

static void renegotiate(struct ppp *p);

static void check_up(struct ppp *p)
{
	if (p->up_sent || p->phase != PHASE_NETWORK ||
	    !fsm_is_open(&p->ipcp.fsm))
		return;
	if (p->use_ccp && !p->mppe && !p->ccp_done)
		return;
	if (p->cfg.renego == PPP_RENEGO_UP && !p->renego_done) {
		renegotiate(p);
		return;
	}
	p->facts.local = p->ipcp.local;
	p->facts.peer = p->ipcp.peer;
	memcpy(p->facts.dns, p->ipcp.dns, sizeof(p->facts.dns));
	memcpy(p->facts.wins, p->ipcp.wins, sizeof(p->facts.wins));
	p->facts.peer_mru = p->lcp.peer_mru;
	p->up_sent = 1;
	p->ops->up(p->arg, &p->facts);
}

static void ipcp_start(struct ppp *p)
{
	if (p->ipcp_started)
		return;
	p->ipcp_started = 1;
	fsm_open(&p->ipcp.fsm, p->now);
	fsm_up(&p->ipcp.fsm, p->now);
}

/* CCP did not give us MPPE: fatal when required, else go on in clear. */
static void ccp_failed(struct ppp *p)
{
	if (p->ccp_done)
		return;
	p->ccp_done = 1;
	if (p->cfg.mppe_required) {
		ppp_fail(p, PPP_REASON_CCP_FAILED);
		return;
	}
	ipcp_start(p);
	check_up(p);
}

static void ccp_opened(struct ppp *p)
{
	uint8_t master[MSCHAP_MASTER_KEY_LEN];
	int bits, stateful;

	if (p->mppe)
		return;
	if (p->cfg.mppe == PPP_MPPE_REFUSE) {
		/* CCP open with nothing agreed: IP goes in clear */
		step(p, "ccp");
		ccp_failed(p);
		return;
	}
	if (ccp_agreed(&p->ccp, &bits, &stateful) < 0 ||
	    auth_master_key(&p->auth, master) < 0 ||
	    (p->mppe = mppe_new(master, bits, stateful, 0)) == NULL) {
		OPENSSL_cleanse(master, sizeof(master));
		fsm_close(&p->ccp.fsm, p->now);
		ccp_failed(p);
		return;
	}
	OPENSSL_cleanse(master, sizeof(master));
	p->facts.mppe_bits = bits;
	p->facts.mppe_stateful = stateful;
	step(p, "ccp");
	/* Windows' early IPCP and IPV6CP requests got pppd's Terminate-Ack:
	 * ask again now rather than at the restart timer (3 s later) */
	if (p->ipcp_started && p->ipcp.fsm.state == FSM_REQSENT)
		p->ipcp.fsm.deadline = p->now ? p->now : 1;
	if (p->cfg.ipv6cp && p->ipv6cp.fsm.state == FSM_REQSENT)
		p->ipv6cp.fsm.deadline = p->now ? p->now : 1;
	ipcp_start(p);
	check_up(p);
}

static void network_start(struct ppp *p)
{
	p->phase = PHASE_NETWORK;
	if (p->cfg.mppe != PPP_MPPE_NONE) {
		/* MPPE keys come from MS-CHAPv2 alone (a CCP without MPPE
		 * needs none). */
		if (p->cfg.mppe == PPP_MPPE_REFUSE || (p->auth.proto ==
		    PPP_CHAP && p->auth.alg == CHAP_ALG_MSCHAPV2)) {
			p->use_ccp = 1;
			fsm_open(&p->ccp.fsm, p->now);
			fsm_up(&p->ccp.fsm, p->now);
		} else
			ccp_failed(p);
	}
	if (p->phase != PHASE_NETWORK)
		return;
	/* Windows sends IPCP before CCP is up (the server answers it with
	 * Terminate-Ack until then); pppd waits for CCP. */
	if (!p->use_ccp || p->cfg.windows)
		ipcp_start(p);
	if (p->cfg.ipv6cp) {
		fsm_open(&p->ipv6cp.fsm, p->now);
		fsm_up(&p->ipv6cp.fsm, p->now);
	}
}

static void lcp_opened(struct ppp *p)
{
	step(p, "lcp");
	if (p->cfg.windows) {
		lcp_send_ident(&p->lcp, WINDOWS_IDENT_1);
		lcp_send_ident(&p->lcp, WINDOWS_IDENT_2);
	}
	p->phase = PHASE_AUTH;
	if (p->lcp.auth_proto)
		auth_start(&p->auth, p->lcp.auth_proto, p->lcp.auth_alg,
		    p->now);
	else
		network_start(p);
}

static void layer_event(void *owner, uint16_t proto, enum fsm_event ev);

/* CCP, IPCP and IPV6CP from scratch (Initial, nothing agreed), for the
 * CCP choice in cfg. */
static void ncps_init(struct ppp *p, const uint8_t *iid)
{
	ccp_init(&p->ccp, p->cfg.mppe == PPP_MPPE_40 ? 40 :
	    p->cfg.mppe == PPP_MPPE_128 ? 128 :
	    p->cfg.mppe == PPP_MPPE_REFUSE ? CCP_NO_MPPE : 0,
	    p->cfg.mppe_stateful, ppp_send, layer_event, p);
	ipcp_init(&p->ipcp, p->cfg.want_dns,
	    p->cfg.want_dns && p->cfg.windows, ppp_send, layer_event, p);
	ipv6cp_init(&p->ipv6cp, iid, ppp_send, layer_event, p);
}

/* LCP left Opened for a renegotiation: as pppd's link_down, everything
 * above LCP ends (the NCPs, MPPE and its keys, the authentication), the
 * link is not up until IPCP opens again, and the next authentication is
 * a new one, as the renegotiation's identity if it is ours. */
static void link_reset(struct ppp *p)
{
	const char *user = p->cfg.user, *password = p->cfg.password;
	uint8_t iid[IPV6CP_IID_LEN];

	p->stats.renegotiations++;
	step(p, "renegotiate");
	if (p->renego_switch) {
		p->renego_switch = 0;
		p->cfg.user = user = p->cfg.renego_user;
		p->cfg.password = password = p->cfg.renego_password;
		p->cfg.mppe = p->cfg.renego_mppe;
		p->cfg.mppe_required = p->cfg.renego_mppe_required;
	}
	OPENSSL_cleanse(&p->auth, sizeof(p->auth));
	auth_init(&p->auth, user, password, ppp_send, p->cfg.random, p);
	mppe_free(p->mppe);
	p->mppe = NULL;
	memcpy(iid, p->ipv6cp.iid, sizeof(iid));
	ncps_init(p, iid);
	memset(&p->facts, 0, sizeof(p->facts));
	p->use_ccp = p->ccp_done = p->ipcp_started = 0;
	p->up_sent = 0;
	p->phase = PHASE_ESTABLISH;
}

/* Our own renegotiation (cfg.renego): RFC 1661's restart option, Down
 * then Up on an open LCP, sends a new Configure-Request; the Down is
 * This-Layer-Down, which resets the link above LCP (link_reset). */
static void renegotiate(struct ppp *p)
{
	p->renego_done = 1;
	p->renego_switch = 1;
	fsm_down(&p->lcp.fsm);
	fsm_up(&p->lcp.fsm, p->now);
}

static void layer_event(void *owner, uint16_t proto, enum fsm_event ev)
{
	struct ppp *p = owner;

	switch (proto) {
	case PPP_LCP:
		if (ev == FSM_EV_UP && p->phase == PHASE_ESTABLISH)
			lcp_opened(p);
		else if (ev == FSM_EV_DOWN && p->lcp.fsm.peer_terminated) {
			/* The server's Terminate-Request was acked: no
			 * Terminate of our own over a link it closed. */
			if (p->reason == PPP_REASON_NONE)
				p->reason = PPP_REASON_PEER_TERMINATE;
			p->phase = PHASE_DEAD;
			p->down_pending = 1;
		} else if (ev == FSM_EV_DOWN && p->phase != PHASE_DEAD)
			/* A Configure-Request on the open link (the server's,
			 * or ours from renegotiate()): back to Establish. */
			link_reset(p);
		else if (ev == FSM_EV_FINISHED)
			ppp_fail(p, PPP_REASON_LCP_TIMEOUT);
		break;
	case PPP_CCP:
		if (ev == FSM_EV_UP)
			ccp_opened(p);
		else if (ev == FSM_EV_FINISHED || (ev == FSM_EV_DOWN &&
		    p->cfg.mppe_required))
			ccp_failed(p);
		break;
	case PPP_IPCP:
		if (ev == FSM_EV_UP) {
			step(p, "ipcp");
			check_up(p);
		} else if (ev == FSM_EV_FINISHED)
			ppp_fail(p, PPP_REASON_IPCP_FAILED);
		break;
	case PPP_IPV6CP:
		if (ev == FSM_EV_UP)
			step(p, "ipv6cp");
		break;
	}
}

struct ppp *ppp_new(const struct ppp_config *cfg, const struct ppp_ops *ops,
    void *arg)
{
	struct lcp_want w = { 0 };
	uint8_t iid[IPV6CP_IID_LEN], magic[4];
	const char *ru, *rp;
	size_t ul, pl, rul, rpl;
	struct ppp *p;

	if (cfg == NULL || ops == NULL || ops->output == NULL ||
	    ops->up == NULL || ops->ip_input == NULL || ops->down == NULL ||
	    cfg->user == NULL || cfg->password == NULL ||
	    (cfg->mru != 0 && (cfg->mru < 64 || cfg->mru > PPP_MTU_MAX)))
		return NULL;
	/* the renegotiation's identity is the first one unless given */
	ru = cfg->renego_user ? cfg->renego_user : cfg->user;
	rp = cfg->renego_password ? cfg->renego_password : cfg->password;
	ul = strlen(cfg->user);
	pl = strlen(cfg->password);
	rul = strlen(ru);
	rpl = strlen(rp);
	if ((p = calloc(1, sizeof(*p) + ul + pl + rul + rpl + 4)) == NULL)
		return NULL;
	p->ops = ops;
	p->arg = arg;
	p->cfg = *cfg;
	p->strings_len = ul + pl + rul + rpl + 4;
	p->cfg.user = memcpy(p->strings, cfg->user, ul + 1);
	p->cfg.password = memcpy(p->strings + ul + 1, cfg->password, pl + 1);
	p->cfg.renego_user = memcpy(p->strings + ul + pl + 2, ru, rul + 1);
	p->cfg.renego_password = memcpy(p->strings + ul + pl + rul + 3, rp,
	    rpl + 1);
	if (p->cfg.random == NULL)
		p->cfg.random = random_default;
	p->cfg.random(magic, sizeof(magic));
	p->cfg.random(iid, sizeof(iid));

	w.mru = cfg->mru;
	w.magic = be32_get(magic);
	w.accm = !cfg->windows;
	w.cbcp = cfg->windows ? 1 : 0;
	w.auth_proto = cfg->auth == PPP_AUTH_PAP ? PPP_PAP : PPP_CHAP;
	w.auth_alg = cfg->auth == PPP_AUTH_MSCHAPV2 ? CHAP_ALG_MSCHAPV2 :
	    cfg->auth == PPP_AUTH_CHAP_MD5 ? CHAP_ALG_MD5 : 0;
	lcp_init(&p->lcp, &w, ppp_send, layer_event, p);
	auth_init(&p->auth, p->cfg.user, p->cfg.password, ppp_send,
	    p->cfg.random, p);
	ncps_init(p, iid);
	p->phase = PHASE_ESTABLISH;
	return p;
}

void ppp_free(struct ppp *p)
{
	if (p == NULL)
		return;
	mppe_free(p->mppe);
	OPENSSL_cleanse(p->strings, p->strings_len);
	OPENSSL_cleanse(&p->auth, sizeof(p->auth));
	free(p);
}

static void call_enter(struct ppp *p, uint64_t now)
{
	p->depth++;
	p->now = now;
}

/* The last thing a public call does: ops->down may free the object. */
static void call_leave(struct ppp *p)
{
	if (--p->depth == 0 && p->down_pending && !p->down_sent) {
		p->down_sent = 1;
		p->ops->down(p->arg, p->reason);
	}
}

void ppp_start(struct ppp *p, uint64_t now_ms)
{
	call_enter(p, now_ms);
	fsm_open(&p->lcp.fsm, now_ms);
	fsm_up(&p->lcp.fsm, now_ms);
	call_leave(p);
}

void ppp_close(struct ppp *p, uint64_t now_ms)
{
	call_enter(p, now_ms);
	if (p->reason == PPP_REASON_NONE)
		p->reason = PPP_REASON_LOCAL_CLOSE;
	if (p->phase != PHASE_DEAD && p->lcp.fsm.state >= FSM_CLOSING) {
		/* LCP Terminate: down follows its Ack or the timeout. */
		p->phase = PHASE_DEAD;
		fsm_close(&p->lcp.fsm, now_ms);
	} else
		p->down_pending = 1;
	call_leave(p);
}

static void input_ip(struct ppp *p, const uint8_t *ip, size_t len)
{
	if (!p->up_sent)
		return;
	p->ops->ip_input(p->arg, ip, len);
}

/* An IPv6 datagram: only a Router Advertisement is looked at (this
 * client has no IPv6 stack): a /64 with the A flag gives the address
 * SLAAC would form with our IPV6CP identifier (RFC 4862 5.5.3), and the
 * step "ra" in the report. Everything else is dropped. */
#define IP6_HDR_LEN     40
#define IP6_NEXT_ICMP6  58
static void input_ipv6(struct ppp *p, const uint8_t *d, size_t len)
{
	struct ra_info ri;
	unsigned life;
	uint32_t valid, preferred;

	/* IPV6CP open is enough: the server advertises as soon as it is,
	 * before IPCP (and so the link) may be up. */
	/* From a link-local source only (RFC 4861 6.1.2). */
	if (p->ipv6cp.fsm.state != FSM_OPENED || len < IP6_HDR_LEN ||
	    (d[0] >> 4) != 6 || d[8] != 0xfe || (d[9] & 0xc0) != 0x80 ||
	    d[6] != IP6_NEXT_ICMP6 || d[7] != RA_HOP_LIMIT_LINK ||
	    be16_get(d + 4) != len - IP6_HDR_LEN)
		return;
	if (ra_parse(d + IP6_HDR_LEN, len - IP6_HDR_LEN, &ri, &life, &valid,
	    &preferred) < 0 || ri.prefix_len != 64 || preferred == 0)
		return;
	memcpy(p->ra_addr.s6_addr, ri.prefix.s6_addr, 8);
	memcpy(p->ra_addr.s6_addr + 8, p->ipv6cp.iid, 8);
	int first = !p->have_ra_addr;
	p->have_ra_addr = 1;   /* before the step: it asks for the address */
	if (first && p->ops->step)
		p->ops->step(p->arg, "ra");
}

int ppp_ipv6_address(const struct ppp *p, struct in6_addr *out)
{
	if (!p->have_ra_addr)
		return -1;
	*out = p->ra_addr;
	return 0;
}

static void input_mppe(struct ppp *p, const uint8_t *d, size_t len)
{
	uint8_t out[PPP_RX_MAX];
	size_t olen = 0, n;
	uint16_t proto;

	if (p->mppe == NULL || len > sizeof(out)) {
		p->stats.bad_frames++;
		return;
	}
	switch (mppe_decrypt(p->mppe, d, len, out, &olen)) {
	case MPPE_OK:
		break;
	case MPPE_RESET:
		ccp_send_reset(&p->ccp);
		/* FALLTHROUGH */
	case MPPE_DROP:
	case MPPE_LATE:
		p->stats.mppe_dropped++;
		return;
	case MPPE_BAD:
		p->stats.bad_frames++;
		return;
	}
	/* The inner protocol, one octet if the sender compressed it. */
	if (olen >= 1 && (out[0] & 1)) {
		proto = out[0];
		n = 1;
	} else if (olen >= 2) {
		proto = be16_get(out);
		n = 2;
	} else {
		p->stats.bad_frames++;
		return;
	}
	if (proto == PPP_IP)
		input_ip(p, out + n, olen - n);
	else if (proto == PPP_IPV6)
		input_ipv6(p, out + n, olen - n);
}

/* LCP Protocol-Reject of one of our NCPs ends that NCP (RXJ-). */
static void input_protrej(struct ppp *p, const uint8_t *d, size_t len)
{
	uint16_t proto;

	if (len < FSM_HDR_LEN + 2 || d[0] != LCP_PROTREJ_CODE ||
	    !fsm_is_open(&p->lcp.fsm) || be16_get(d + 2) < FSM_HDR_LEN + 2)
		return;
	proto = be16_get(d + FSM_HDR_LEN);
	if (proto == PPP_CCP)
		fsm_rejected(&p->ccp.fsm);
	else if (proto == PPP_IPCP)
		fsm_rejected(&p->ipcp.fsm);
	else if (proto == PPP_IPV6CP)
		fsm_rejected(&p->ipv6cp.fsm);
}

static void input_auth(struct ppp *p, uint16_t proto, const uint8_t *d,
    size_t len)
{
	int r;

	if (p->phase < PHASE_AUTH || p->phase == PHASE_DEAD ||
	    (r = auth_input(&p->auth, proto, d, len, p->now)) < 0) {
		p->stats.bad_frames++;
		return;
	}
	if (r == AUTH_OK && p->phase == PHASE_AUTH) {
		step(p, p->auths++ ? "reauth" : "auth");
		if (p->cfg.renego == PPP_RENEGO_AUTH && !p->renego_done)
			renegotiate(p);
		else
			network_start(p);
	} else if (r == AUTH_FAIL)
		ppp_fail(p, PPP_REASON_AUTH_FAILED);
	else if (r == AUTH_BAD)
		ppp_fail(p, PPP_REASON_AUTH_BAD);
}

static void reject_proto(struct ppp *p, uint16_t proto, const uint8_t *d,
    size_t len)
{
	p->stats.bad_frames++;
	if (fsm_is_open(&p->lcp.fsm))
		lcp_send_protrej(&p->lcp, proto, d, len);
}

static void input_ncp(struct ppp *p, struct fsm *f, const uint8_t *d,
    size_t len)
{
	/* NCP packets before the network phase are silently discarded
	 * (RFC 1661 section 3.4); so are those of an NCP not started. */
	if (p->phase != PHASE_NETWORK || f->state == FSM_INITIAL)
		return;
	if (fsm_input(f, d, len, p->now) < 0)
		p->stats.bad_frames++;
}

/* Keep the reason text of the server's first Terminate-Request, with
 * anything outside printable ASCII replaced (it comes from the network
 * and ends up in the report). */
static void note_terminate(struct ppp *p, const uint8_t *d, size_t len)
{
	size_t plen, n;

	if (len < FSM_HDR_LEN || d[0] != FSM_TERMREQ || p->peer_msg[0])
		return;
	plen = be16_get(d + 2);
	if (plen < FSM_HDR_LEN || plen > len)
		return;
	n = plen - FSM_HDR_LEN;
	if (n > sizeof(p->peer_msg) - 1)
		n = sizeof(p->peer_msg) - 1;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = d[FSM_HDR_LEN + i];
		p->peer_msg[i] = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ?
		    (char)c : '?';
	}
	p->peer_msg[n] = '\0';
}

const char *ppp_peer_message(const struct ppp *p)
{
	return p->peer_msg;
}

static void dispatch(struct ppp *p, uint16_t proto, const uint8_t *d,
    size_t len)
{
	switch (proto) {
	case PPP_LCP:
		input_protrej(p, d, len);
		note_terminate(p, d, len);
		if (fsm_input(&p->lcp.fsm, d, len, p->now) < 0)
			p->stats.bad_frames++;
		if (lcp_auth_refused(&p->lcp))
			ppp_fail(p, PPP_REASON_LCP_REJECTED);
		return;
	case PPP_CHAP:
	case PPP_PAP:
		input_auth(p, proto, d, len);
		return;
	case PPP_CCP:
		if (p->cfg.mppe == PPP_MPPE_NONE) {
			reject_proto(p, proto, d, len);
			return;
		}
		input_ncp(p, &p->ccp.fsm, d, len);
		if (ccp_take_reset(&p->ccp) && p->mppe)
			mppe_reset_tx(p->mppe);
		if (p->ccp.refused && !p->ccp_done) {
			fsm_close(&p->ccp.fsm, p->now);
			ccp_failed(p);
		}
		return;
	case PPP_IPCP:
		input_ncp(p, &p->ipcp.fsm, d, len);
		return;
	case PPP_IPV6CP:
		if (!p->cfg.ipv6cp) {
			reject_proto(p, proto, d, len);
			return;
		}
		input_ncp(p, &p->ipv6cp.fsm, d, len);
		return;
	case PPP_COMP:
		input_mppe(p, d, len);
		return;
	case PPP_IP:
		/* A clear datagram on an encrypted link is not taken. */
		if (p->mppe)
			p->stats.bad_frames++;
		else
			input_ip(p, d, len);
		return;
	case PPP_IPV6:
		if (!p->mppe)
			input_ipv6(p, d, len);
		return;
	}
	reject_proto(p, proto, d, len);
}

void ppp_input(struct ppp *p, const uint8_t *f, size_t len, uint64_t now_ms)
{
	uint16_t proto;

	call_enter(p, now_ms);
	if (p->down_sent)
		goto out;
	if (len >= 2 && f[0] == PPP_ADDRESS && f[1] == PPP_CONTROL) {
		f += 2;
		len -= 2;
	}
	/* RFC 1661 section 2: the protocol's low octet is odd, its high
	 * octet even; one octet when compressed. */
	if (len >= 1 && (f[0] & 1)) {
		proto = f[0];
		f++;
		len--;
	} else if (len >= 2 && (f[1] & 1)) {
		proto = be16_get(f);
		f += 2;
		len -= 2;
	} else {
		p->stats.bad_frames++;
		goto out;
	}
	dispatch(p, proto, f, len);
out:
	call_leave(p);
}

size_t ppp_mtu(const struct ppp *p)
{
	size_t mtu;

	if (!p->up_sent || p->down_pending)
		return 0;
	mtu = p->lcp.peer_mru < PPP_MTU_MAX ? p->lcp.peer_mru : PPP_MTU_MAX;
	return p->mppe ? mtu - MPPE_OVERHEAD : mtu;
}

int ppp_send_ip(struct ppp *p, const uint8_t *ip, size_t len)
{
	uint8_t plain[2 + PPP_MTU_MAX];
	uint8_t f[PPP_HDR_MAX + MPPE_HDR_LEN + 2 + PPP_MTU_MAX];
	size_t n, mtu = ppp_mtu(p);

	if (len == 0 || len > mtu)
		return -1;
	if (p->mppe == NULL) {
		n = frame_header(p, PPP_IP, f);
		memcpy(f + n, ip, len);
		p->ops->output(p->arg, f, n + len);
		return 0;
	}
	n = frame_header(p, PPP_COMP, f);
	be16_put(plain, PPP_IP);
	memcpy(plain + 2, ip, len);
	n += mppe_encrypt(p->mppe, plain, len + 2, f + n);
	p->ops->output(p->arg, f, n);
	return 0;
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
	if (a == 0)
		return b;
	return b && b < a ? b : a;
}

uint64_t ppp_timer(struct ppp *p, uint64_t now_ms)
{
	struct fsm *fsms[] = { &p->lcp.fsm, &p->ccp.fsm, &p->ipcp.fsm,
	    &p->ipv6cp.fsm };
	uint64_t next = 0;

	call_enter(p, now_ms);
	if (!p->down_sent) {
		for (size_t i = 0; i < sizeof(fsms) / sizeof(fsms[0]); i++)
			fsm_timer(fsms[i], now_ms);
		if (p->phase == PHASE_AUTH &&
		    auth_timer(&p->auth, now_ms) == AUTH_FAIL)
			ppp_fail(p, PPP_REASON_AUTH_FAILED);
		for (size_t i = 0; i < sizeof(fsms) / sizeof(fsms[0]); i++)
			next = earliest(next, fsms[i]->deadline);
		next = earliest(next, p->auth.deadline);
	}
	call_leave(p);
	return next;
}

void ppp_get_stats(const struct ppp *p, struct ppp_stats *st)
{
	*st = p->stats;
	st->mppe_resyncs = p->mppe ? mppe_resyncs(p->mppe) : 0;
}

size_t ppp_memory(const struct ppp *p)
{
	return sizeof(*p) + p->strings_len + (p->mppe ? mppe_size() : 0);
}
