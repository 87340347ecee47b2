/* Unit tests for client/ppp.c and the protocols under it, driven against
 * a scripted server in this file that answers as pppd does: LCP (it
 * rejects the Windows callback option), MS-CHAPv2 with the RFC 2759
 * vectors (the client's random source is fixed to the vector's peer
 * challenge, so the NT-Response and the MPPE master key are the RFC's),
 * CHAP-MD5, PAP, CCP/MPPE (the server encrypts with client/mppe.c in its
 * server role), IPCP with DNS/WINS Naks, IPV6CP. Then what a user of
 * pptp-load sees: the session comes up with the right facts, datagrams
 * cross both ways, failures end with the right reason, a stateful loss
 * is resynchronised with a CCP Reset-Request, and garbage or truncated
 * frames in every phase are counted and never crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "proto/ra.h"

#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/md5.h>

#include "client/mppe.h"
#include "client/mschap.h"
#include "client/ppp.h"

static const uint8_t AUTH_CHAL[16] = { 0x5B, 0x5D, 0x7C, 0x7D, 0x7B, 0x3F,
    0x2F, 0x3E, 0x3C, 0x2C, 0x60, 0x21, 0x32, 0x26, 0x26, 0x28 };
static const uint8_t PEER_CHAL[16] = { 0x21, 0x40, 0x23, 0x24, 0x25, 0x5E,
    0x26, 0x2A, 0x28, 0x29, 0x5F, 0x2B, 0x3A, 0x33, 0x7C, 0x7E };
static const uint8_t NT_RESP[24] = { 0x82, 0x30, 0x9E, 0xCD, 0x8D, 0x70,
    0x8B, 0x5E, 0xA0, 0x8F, 0xAA, 0x39, 0x81, 0xCD, 0x83, 0x54, 0x42, 0x33,
    0x11, 0x4A, 0x3D, 0x85, 0xD6, 0xDF };
static const uint8_t MASTER[16] = { 0xFD, 0xEC, 0xE3, 0x71, 0x7A, 0x8C,
    0x83, 0x8C, 0xB3, 0x88, 0xE5, 0x27, 0xAE, 0x3C, 0xDD, 0x31 };

#define P_LCP 0xC021
#define P_PAP 0xC023
#define P_CHAP 0xC223
#define P_CCP 0x80FD
#define P_IPCP 0x8021
#define P_IPV6CP 0x8057
#define P_COMP 0x00FD
#define P_IP 0x0021

/* Frames in flight, each way. */
#define QMAX 256
struct frame {
	uint8_t b[2048];
	size_t len;
};
struct queue {
	struct frame f[QMAX];
	size_t head, tail;
};

static void q_push(struct queue *q, const uint8_t *b, size_t len)
{
	struct frame *f = &q->f[q->tail++ % QMAX];

	assert_true(len <= sizeof(f->b));
	assert_true(q->tail - q->head <= QMAX);
	memcpy(f->b, b, len);
	f->len = len;
}

/* The server's script and what it saw. */
struct srv {
	int auth;              /* enum ppp_auth it demands */
	int ccp_bits;          /* 128, 40, or 0: it rejects CCP */
	int ccp_stateful;
	int no_ccp;            /* sends no CCP at all */
	int fail_auth, bad_authresp, silent;
	int pppd_stateful;     /* as pppd without refuse-mppe-stateful: asks
	                          stateless, takes stateful when offered */
	int lcp_req_sent, lcp_acked, lcp_ack_sent, auth_sent;
	int lcp_reqs, cbcp_first, cbcp_later;
	char ident[64];
	int net, ccp_acked, ccp_ack_sent, ccp_up;
	int ipcp_req_sent, ipcp_acked, ipcp_termacks, ipv6cp_acked;
	int resets, protrej, termreqs, echo_replies, ccp_protrej;
	uint16_t protrej_proto;
	uint8_t chap_id;
	uint8_t nt[24], peer_chal[16];
	struct mppe *mppe;
	uint8_t last_ip[1600];
	size_t last_ip_len;
	int ip_rx;
	/* LCP renegotiations (a Configure-Request on its open LCP, or its
	 * own srv_renegotiate()), CCP Configure-Requests received, and the
	 * names of the MS-CHAPv2 responses in order */
	int lcp_renegs, ccp_reqs, nnames;
	/* an `allow` server: after the client rejects MPPE it asks for
	 * nothing and acks an empty request (CCP up, IP in clear) */
	int ccp_clear_ok, ccp_rej_rx, ccp_empty_req;
	char names[4][16];
};
/* The second identity of the renegotiation tests. */
#define USER2 "alice"
#define PASS2 "alicePass"

static struct queue c2s, s2c;
static struct srv S;
static struct ppp *C;
static uint64_t now;
/* What the client told its session. */
static int up_count, down_count;
static enum ppp_reason down_reason;
static struct ppp_facts facts;
static char steps[128];
static uint8_t rx_ip[1600];
static size_t rx_ip_len;
static int rx_ip_count;
static int sink_output;     /* drop what the client sends */

static void fixed_random(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = PEER_CHAL[i % sizeof(PEER_CHAL)];
}

static void cb_output(void *arg, const uint8_t *f, size_t len)
{
	(void)arg;
	if (!sink_output)
		q_push(&c2s, f, len);
}

static void cb_up(void *arg, const struct ppp_facts *f)
{
	(void)arg;
	up_count++;
	facts = *f;
}

static void cb_ip(void *arg, const uint8_t *ip, size_t len)
{
	(void)arg;
	assert_true(len <= sizeof(rx_ip));
	memcpy(rx_ip, ip, len);
	rx_ip_len = len;
	rx_ip_count++;
}

static void cb_down(void *arg, enum ppp_reason r)
{
	(void)arg;
	down_count++;
	down_reason = r;
}

/* What ppp_ipv6_address() said when the step "ra" was reported: the
 * session asks for the address right then (client/session.c). */
static int ra_addr_at_step = -2;

static void cb_step(void *arg, const char *s)
{
	struct in6_addr a;
	(void)arg;
	if (strcmp(s, "ra") == 0)
		ra_addr_at_step = ppp_ipv6_address(C, &a);
	if (strlen(steps) + strlen(s) + 2 > sizeof(steps))
		return;
	strcat(steps, s);
	strcat(steps, " ");
}

static const struct ppp_ops ops = {
	.output = cb_output, .up = cb_up, .ip_input = cb_ip,
	.down = cb_down, .step = cb_step,
};

/* ---- the server ---- */

static void srv_send(uint16_t proto, uint8_t code, uint8_t id,
    const uint8_t *d, size_t len)
{
	uint8_t f[600];

	f[0] = 0xFF;
	f[1] = 0x03;
	f[2] = proto >> 8;
	f[3] = proto & 0xFF;
	f[4] = code;
	f[5] = id;
	f[6] = (uint8_t)((len + 4) >> 8);
	f[7] = (uint8_t)(len + 4);
	if (len)
		memcpy(f + 8, d, len);
	q_push(&s2c, f, len + 8);
}

static const uint8_t *find_opt(const uint8_t *o, size_t len, uint8_t type)
{
	for (size_t i = 0; i + 2 <= len && o[i + 1] >= 2; i += o[i + 1])
		if (o[i] == type)
			return o + i;
	return NULL;
}

static void srv_lcp_req(void)
{
	uint8_t o[16] = { 1, 4, 0x05, 0x78, 5, 6, 0x11, 0x22, 0x33, 0x44 };
	size_t n = 10;

	o[n++] = 3;
	if (S.auth == PPP_AUTH_PAP) {
		o[n++] = 4;
		o[n++] = 0xC0;
		o[n++] = 0x23;
	} else {
		o[n++] = 5;
		o[n++] = 0xC2;
		o[n++] = 0x23;
		o[n++] = S.auth == PPP_AUTH_MSCHAPV2 ? 0x81 : 0x05;
	}
	srv_send(P_LCP, 1, 100, o, n);
	S.lcp_req_sent = 1;
}

static void srv_net_start(void)
{
	static const uint8_t iid[10] = { 1, 10, 2, 0, 0, 0, 0, 0, 0, 1 };

	S.net = 1;
	if (S.ccp_bits && !S.no_ccp) {
		uint8_t o[6] = { 18, 6, S.ccp_stateful ? 0 : 1, 0, 0,
		    S.ccp_bits == 128 ? 0x40 : 0x20 };

		srv_send(P_CCP, 1, 1, o, 6);
	}
	srv_send(P_IPV6CP, 1, 1, iid, sizeof(iid));
	if (!S.ccp_bits || S.no_ccp) {
		uint8_t o[6] = { 3, 6, 10, 0, 0, 1 };

		srv_send(P_IPCP, 1, 1, o, 6);
		S.ipcp_req_sent = 1;
	}
}

static void srv_chap(const uint8_t *d, size_t len)
{
	char msg[128], name[16];

	if (d[0] != 2)
		return;
	assert_int_equal(d[1], S.chap_id);
	if (S.auth == PPP_AUTH_MSCHAPV2) {
		assert_int_equal(d[4], 49);
		memcpy(S.peer_chal, d + 5, 16);
		memcpy(S.nt, d + 5 + 24, 24);
		assert_memory_equal(d + 5 + 24 + 24, "\0", 1);   /* flags */
		assert_true(len - 5 - 49 < sizeof(name));
		memcpy(name, d + 5 + 49, len - 5 - 49);
		name[len - 5 - 49] = '\0';
		if (S.nnames < 4)
			strcpy(S.names[S.nnames++], name);
		/* the vectors' user, or the renegotiation tests' second */
		assert_true(strcmp(name, "User") == 0 ||
		    strcmp(name, USER2) == 0);
		if (S.fail_auth) {
			snprintf(msg, sizeof(msg), "E=691 R=0 C=%032d V=3 M=no", 0);
			srv_send(P_CHAP, 4, d[1], (uint8_t *)msg, strlen(msg));
			return;
		}
		mschap_auth_response(strcmp(name, USER2) == 0 ? PASS2 :
		    "clientPass", S.nt, S.peer_chal, AUTH_CHAL, name, msg);
		if (S.bad_authresp)
			msg[5] = msg[5] == '0' ? '1' : '0';
		strcat(msg, " M=Access granted");
	} else {
		uint8_t b[64], md[16];

		b[0] = d[1];
		memcpy(b + 1, "clientPass", 10);
		memcpy(b + 11, AUTH_CHAL, 16);
		MD5(b, 27, md);
		assert_int_equal(d[4], 16);
		if (S.fail_auth || memcmp(md, d + 5, 16) != 0) {
			srv_send(P_CHAP, 4, d[1], (const uint8_t *)"no", 2);
			return;
		}
		strcpy(msg, "Welcome");
	}
	srv_send(P_CHAP, 3, d[1], (uint8_t *)msg, strlen(msg));
	srv_net_start();
}

static void srv_maybe_auth(void)
{
	uint8_t ch[1 + 16 + 3];

	if (S.auth_sent || !S.lcp_acked || !S.lcp_ack_sent)
		return;
	S.auth_sent = 1;
	if (S.auth == PPP_AUTH_PAP)
		return;
	ch[0] = 16;
	memcpy(ch + 1, AUTH_CHAL, 16);
	memcpy(ch + 17, "srv", 3);
	S.chap_id = 7;
	srv_send(P_CHAP, 1, S.chap_id, ch, sizeof(ch));
}

/* As pppd's link_down when LCP leaves Opened: everything above LCP ends
 * and LCP negotiates again. */
static void srv_link_down(void)
{
	S.lcp_renegs++;
	S.lcp_req_sent = S.lcp_acked = S.lcp_ack_sent = S.auth_sent = 0;
	S.net = S.ccp_acked = S.ccp_ack_sent = S.ccp_up = 0;
	S.ipcp_req_sent = S.ipcp_acked = S.ipv6cp_acked = 0;
	mppe_free(S.mppe);
	S.mppe = NULL;
}

/* The server renegotiates: a Configure-Request on its open LCP. */
static void srv_renegotiate(void)
{
	srv_link_down();
	srv_lcp_req();
}

static void srv_lcp(const uint8_t *d, size_t len)
{
	const uint8_t *o = d + 4, *cb;
	size_t olen = len - 4;

	switch (d[0]) {
	case 1:
		/* RCR in Opened (RFC 1661 4.3): This-Layer-Down, then a
		 * request of its own and the answer */
		if (S.lcp_acked && S.lcp_ack_sent)
			srv_link_down();
		if (!S.lcp_req_sent)
			srv_lcp_req();
		cb = find_opt(o, olen, 13);
		if (S.lcp_reqs++ == 0)
			S.cbcp_first = cb != NULL;
		else if (cb)
			S.cbcp_later = 1;
		if (cb) {
			srv_send(P_LCP, 4, d[1], cb, cb[1]);
			return;
		}
		srv_send(P_LCP, 2, d[1], o, olen);
		S.lcp_ack_sent = 1;
		break;
	case 2:
		S.lcp_acked = 1;
		break;
	case 5:
		S.termreqs++;
		srv_send(P_LCP, 6, d[1], NULL, 0);
		return;
	case 8:
		S.protrej++;
		S.protrej_proto = (uint16_t)(d[4] << 8 | d[5]);
		/* pppd goes on without CCP when it is not required. */
		if (S.protrej_proto == P_CCP && !S.ipcp_req_sent) {
			uint8_t ip[6] = { 3, 6, 10, 0, 0, 1 };

			srv_send(P_IPCP, 1, 1, ip, 6);
			S.ipcp_req_sent = 1;
		}
		return;
	case 10:
		S.echo_replies++;
		return;
	case 12:
		if (!S.ident[0] && olen > 4)
			memcpy(S.ident, o + 4, olen - 4 < 63 ? olen - 4 : 63);
		return;
	}
	srv_maybe_auth();
}

/* pppd takes stateful mode from the peer's request, or from its Nak of
 * our stateless one (then it asks again, stateful). Returns 1 when the
 * packet was that Nak. */
static int srv_ccp_adopt_stateful(const uint8_t *d, size_t len)
{
	static const uint8_t req[6] = { 18, 6, 0, 0, 0, 0x40 };

	if (!S.pppd_stateful || len != 4 + 6 || d[4] != 18 || (d[6] & 1) ||
	    (d[0] != 1 && d[0] != 3))
		return 0;
	S.ccp_stateful = 1;
	if (d[0] != 3)
		return 0;
	srv_send(P_CCP, 1, 2, req, sizeof(req));
	return 1;
}

static void srv_ccp(const uint8_t *d, size_t len)
{
	if (srv_ccp_adopt_stateful(d, len))
		return;
	const uint8_t *o = d + 4;
	uint8_t want[6] = { 18, 6, S.ccp_stateful ? 0 : 1, 0, 0,
	    S.ccp_bits == 128 ? 0x40 : 0x20 };

	switch (d[0]) {
	case 1:
		S.ccp_reqs++;
		if (len == 4)
			S.ccp_empty_req++;
		if (len == 4 && S.ccp_clear_ok) {
			srv_send(P_CCP, 2, d[1], NULL, 0);
			S.ccp_ack_sent = 1;
			break;
		}
		if (S.ccp_bits == 0) {
			srv_send(P_CCP, 4, d[1], o, len - 4);
			return;
		}
		if (len - 4 == 6 && memcmp(o, want, 6) == 0) {
			srv_send(P_CCP, 2, d[1], o, 6);
			S.ccp_ack_sent = 1;
		} else
			srv_send(P_CCP, 3, d[1], want, 6);
		break;
	case 2:
		S.ccp_acked = 1;
		break;
	case 4:
		S.ccp_rej_rx++;
		if (S.ccp_clear_ok)
			srv_send(P_CCP, 1, 2, NULL, 0);
		return;
	case 14:
		S.resets++;
		srv_send(P_CCP, 15, d[1], NULL, 0);
		mppe_reset_tx(S.mppe);
		return;
	default:
		return;
	}
	if (S.ccp_acked && S.ccp_ack_sent && !S.ccp_up) {
		uint8_t master[16], ip[6] = { 3, 6, 10, 0, 0, 1 };

		S.ccp_up = 1;
		if (!S.ccp_rej_rx) {
			mschap_master_key("clientPass", S.nt, master);
			S.mppe = mppe_new(master, S.ccp_bits, S.ccp_stateful,
			    1);
			assert_non_null(S.mppe);
		}
		srv_send(P_IPCP, 1, 1, ip, 6);
		S.ipcp_req_sent = 1;
	}
}

static void srv_ipcp(const uint8_t *d, size_t len)
{
	/* Address, primary DNS, NBNS, secondary DNS, NBNS. */
	static const uint8_t vals[][2] = { { 3, 2 }, { 129, 53 }, { 130, 60 },
	    { 131, 54 }, { 132, 61 } };
	const uint8_t *o = d + 4;
	size_t olen = len - 4;
	uint8_t nak[64];
	size_t n = 0;

	if (d[0] == 2) {
		S.ipcp_acked = 1;
		return;
	}
	if (d[0] != 1)
		return;
	/* pppd: IPCP is not open before CCP when MPPE is required. */
	if (!S.ipcp_req_sent) {
		S.ipcp_termacks++;
		srv_send(P_IPCP, 6, d[1], NULL, 0);
		return;
	}
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		const uint8_t *x = find_opt(o, olen, vals[i][0]);
		uint8_t v[4] = { 10, 0, 0, vals[i][1] };

		if (x && memcmp(x + 2, v, 4) != 0) {
			nak[n++] = vals[i][0];
			nak[n++] = 6;
			memcpy(nak + n, v, 4);
			n += 4;
		}
	}
	if (n)
		srv_send(P_IPCP, 3, d[1], nak, n);
	else
		srv_send(P_IPCP, 2, d[1], o, olen);
}

static void srv_input(const uint8_t *f, size_t len)
{
	uint16_t proto;
	uint8_t out[2048];
	size_t olen;

	if (S.silent)
		return;
	assert_true(len >= 4);
	assert_int_equal(f[0], 0xFF);
	assert_int_equal(f[1], 0x03);
	proto = (uint16_t)(f[2] << 8 | f[3]);
	f += 4;
	len -= 4;
	switch (proto) {
	case P_LCP:
		srv_lcp(f, len);
		break;
	case P_CHAP:
		srv_chap(f, len);
		break;
	case P_PAP:
		assert_int_equal(f[0], 1);
		assert_int_equal(f[4], 4);
		assert_memory_equal(f + 5, "User", 4);
		srv_send(P_PAP, S.fail_auth ? 3 : 2, f[1], (const uint8_t *)"\0",
		    1);
		if (!S.fail_auth)
			srv_net_start();
		break;
	case P_CCP:
		srv_ccp(f, len);
		break;
	case P_IPCP:
		srv_ipcp(f, len);
		break;
	case P_IPV6CP:
		if (f[0] == 1)
			srv_send(P_IPV6CP, 2, f[1], f + 4, len - 4);
		else if (f[0] == 2)
			S.ipv6cp_acked = 1;
		break;
	case P_COMP:
		assert_non_null(S.mppe);
		assert_int_equal(mppe_decrypt(S.mppe, f, len, out, &olen),
		    MPPE_OK);
		assert_int_equal(out[0], 0x00);
		assert_int_equal(out[1], 0x21);
		memcpy(S.last_ip, out + 2, olen - 2);
		S.last_ip_len = olen - 2;
		S.ip_rx++;
		break;
	case P_IP:
		memcpy(S.last_ip, f, len);
		S.last_ip_len = len;
		S.ip_rx++;
		break;
	}
}

/* Encrypt (when MPPE is up) and queue one datagram of `proto` (0x0021
 * IPv4, 0x0057 IPv6) to the client. */
static void srv_send_proto(uint16_t proto, const uint8_t *ip, size_t len,
    int deliver)
{
	uint8_t f[2048], plain[1600];

	f[0] = 0xFF;
	f[1] = 0x03;
	if (S.mppe) {
		f[2] = 0x00;
		f[3] = 0xFD;
		plain[0] = (uint8_t)(proto >> 8);
		plain[1] = (uint8_t)proto;
		memcpy(plain + 2, ip, len);
		len = mppe_encrypt(S.mppe, plain, len + 2, f + 4);
	} else {
		f[2] = (uint8_t)(proto >> 8);
		f[3] = (uint8_t)proto;
		memcpy(f + 4, ip, len);
	}
	if (deliver)
		q_push(&s2c, f, len + 4);
}

static void srv_send_ip(const uint8_t *ip, size_t len, int deliver)
{
	srv_send_proto(0x0021, ip, len, deliver);
}

/* Deliver frames both ways until nothing moves. */
static void pump(void)
{
	for (int i = 0; i < 10000; i++) {
		if (c2s.head != c2s.tail) {
			struct frame *f = &c2s.f[c2s.head++ % QMAX];

			srv_input(f->b, f->len);
		} else if (s2c.head != s2c.tail) {
			struct frame *f = &s2c.f[s2c.head++ % QMAX];

			if (down_count == 0)
				ppp_input(C, f->b, f->len, now);
		} else
			return;
	}
	fail_msg("frames never stop");
}

/* Time passes: run the client's timers up to `ms` later. */
static void advance(uint64_t ms)
{
	uint64_t end = now + ms;

	while (now < end && down_count == 0) {
		now += 100;
		ppp_timer(C, now);
		pump();
	}
}

static struct ppp_config cfg_windows(void)
{
	struct ppp_config c = {
		.user = "User", .password = "clientPass",
		.auth = PPP_AUTH_MSCHAPV2, .mppe = PPP_MPPE_128,
		.mppe_required = 1, .mru = 1400, .windows = 1, .want_dns = 1,
		.ipv6cp = 1, .random = fixed_random,
	};
	return c;
}

static int setup(void **state)
{
	(void)state;
	memset(&S, 0, sizeof(S));
	memset(&c2s, 0, sizeof(c2s));
	memset(&s2c, 0, sizeof(s2c));
	S.auth = PPP_AUTH_MSCHAPV2;
	S.ccp_bits = 128;
	now = 1000;
	up_count = down_count = rx_ip_count = 0;
	down_reason = PPP_REASON_NONE;
	memset(&facts, 0, sizeof(facts));
	steps[0] = '\0';
	sink_output = 0;
	C = NULL;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ppp_free(C);
	mppe_free(S.mppe);
	return 0;
}

static void start(const struct ppp_config *c)
{
	C = ppp_new(c, &ops, NULL);
	assert_non_null(C);
	ppp_start(C, now);
	pump();
}

static void ip_packet(uint8_t *ip, size_t len, uint8_t tag)
{
	memset(ip, tag, len);
	ip[0] = 0x45;
	ip[2] = (uint8_t)(len >> 8);
	ip[3] = (uint8_t)len;
}

static void assert_addr(struct in_addr a, const char *s)
{
	char b[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a, b, sizeof(b));
	assert_string_equal(b, s);
}

/* The Windows profile: CBCP refused and dropped, Identification, IPCP
 * before CCP answered with Terminate-Ack and retried, MPPE-128
 * stateless keyed from the RFC vectors, DNS/WINS, IPV6CP; datagrams
 * both ways; then a clean local close. */
static void test_windows_profile_up(void **state)
{
	struct ppp_config c = cfg_windows();
	uint8_t ip[1396];
	struct ppp_stats st;

	(void)state;
	start(&c);
	advance(4000);
	assert_int_equal(down_count, 0);
	assert_int_equal(up_count, 1);
	assert_true(S.cbcp_first);
	assert_false(S.cbcp_later);
	assert_string_equal(S.ident, "MSRASV5.20");
	assert_memory_equal(S.peer_chal, PEER_CHAL, 16);
	assert_memory_equal(S.nt, NT_RESP, 24);
	assert_true(S.ipcp_termacks >= 1);
	assert_true(S.ipv6cp_acked);
	assert_string_equal(steps, "lcp auth ccp ipv6cp ipcp ");
	assert_int_equal(facts.mppe_bits, 128);
	assert_int_equal(facts.mppe_stateful, 0);
	assert_int_equal(facts.peer_mru, 1400);
	assert_addr(facts.local, "10.0.0.2");
	assert_addr(facts.peer, "10.0.0.1");
	assert_addr(facts.dns[0], "10.0.0.53");
	assert_addr(facts.dns[1], "10.0.0.54");
	assert_addr(facts.wins[0], "10.0.0.60");
	assert_addr(facts.wins[1], "10.0.0.61");
	(void)MASTER;

	/* MTU: 1400 less MPPE's 4. */
	assert_int_equal(ppp_mtu(C), 1396);
	ip_packet(ip, sizeof(ip), 0xA5);
	assert_int_equal(ppp_send_ip(C, ip, sizeof(ip)), 0);
	assert_int_equal(ppp_send_ip(C, ip, sizeof(ip) + 1), -1);
	pump();
	assert_int_equal(S.ip_rx, 1);
	assert_int_equal(S.last_ip_len, sizeof(ip));
	assert_memory_equal(S.last_ip, ip, sizeof(ip));
	for (int i = 0; i < 50; i++) {
		ip_packet(ip, 100 + i, (uint8_t)i);
		srv_send_ip(ip, 100 + i, i % 5 != 3);   /* some lost */
		pump();
	}
	assert_int_equal(rx_ip_count, 40);
	assert_int_equal(rx_ip_len, 149);
	assert_memory_equal(rx_ip, ip, 149);
	ppp_get_stats(C, &st);
	assert_int_equal(st.bad_frames, 0);
	assert_int_equal(st.mppe_dropped, 0);

	ppp_close(C, now);
	assert_int_equal(down_count, 0);
	pump();
	assert_int_equal(S.termreqs, 1);
	assert_int_equal(down_count, 1);
	assert_int_equal(down_reason, PPP_REASON_LOCAL_CLOSE);
	assert_true(ppp_memory(C) <= 16384);
}

/* The linux profile with 40-bit stateful MPPE offered as "any": the
 * server Naks to 40-bit stateful; a lost datagram makes the client send
 * a CCP Reset-Request and drop until the server's FLUSHED packet. */
static void test_stateful_40_loss(void **state)
{
	struct ppp_config c = cfg_windows();
	struct ppp_stats st;
	uint8_t ip[200];

	(void)state;
	c.windows = 0;
	c.ipv6cp = 0;
	c.mru = 0;
	c.mppe = PPP_MPPE_ANY;
	c.mppe_stateful = 1;
	S.ccp_bits = 40;
	S.ccp_stateful = 1;
	start(&c);
	assert_int_equal(up_count, 1);
	assert_string_equal(steps, "lcp auth ccp ipcp ");
	assert_int_equal(S.protrej, 1);                 /* IPV6CP */
	assert_int_equal(S.protrej_proto, P_IPV6CP);
	assert_int_equal(facts.mppe_bits, 40);
	assert_int_equal(facts.mppe_stateful, 1);
	assert_int_equal(facts.peer_mru, 1400);
	for (int i = 0; i < 10; i++) {
		ip_packet(ip, sizeof(ip), (uint8_t)i);
		srv_send_ip(ip, sizeof(ip), 1);
		pump();
	}
	assert_int_equal(rx_ip_count, 10);
	/* Lose one; the next arrives, the Reset-Request goes out and the
	 * server's next packet is FLUSHED. */
	srv_send_ip(ip, sizeof(ip), 0);
	ip_packet(ip, sizeof(ip), 0x77);
	srv_send_ip(ip, sizeof(ip), 1);
	pump();
	assert_int_equal(S.resets, 1);
	assert_int_equal(rx_ip_count, 10);
	ip_packet(ip, sizeof(ip), 0x78);
	srv_send_ip(ip, sizeof(ip), 1);
	pump();
	assert_int_equal(rx_ip_count, 11);
	assert_memory_equal(rx_ip, ip, sizeof(ip));
	/* And 600 more over flag packets. */
	for (int i = 0; i < 600; i++) {
		srv_send_ip(ip, sizeof(ip), 1);
		pump();
	}
	assert_int_equal(rx_ip_count, 611);
	ppp_get_stats(C, &st);
	assert_int_equal(st.mppe_resyncs, 1);
	assert_int_equal(st.mppe_dropped, 1);
	/* Upstream too. */
	assert_int_equal(ppp_send_ip(C, ip, sizeof(ip)), 0);
	pump();
	assert_int_equal(S.ip_rx, 1);
}

/* The client asks stateful; the server (pppd without
 * refuse-mppe-stateful) asks stateless: the client Naks it to stateful,
 * both directions run stateful. */
static void test_stateful_nak_to_pppd(void **state)
{
	struct ppp_config c = cfg_windows();
	uint8_t ip[200];

	(void)state;
	c.windows = 0;
	c.ipv6cp = 0;
	c.mppe_stateful = 1;
	S.ccp_bits = 128;
	S.pppd_stateful = 1;
	start(&c);
	assert_int_equal(up_count, 1);
	assert_int_equal(facts.mppe_bits, 128);
	assert_int_equal(facts.mppe_stateful, 1);
	assert_int_equal(S.ccp_stateful, 1);
	ip_packet(ip, sizeof(ip), 0x42);
	assert_int_equal(ppp_send_ip(C, ip, sizeof(ip)), 0);
	pump();
	assert_int_equal(S.ip_rx, 1);
	assert_memory_equal(S.last_ip, ip, sizeof(ip));
	srv_send_ip(ip, sizeof(ip), 1);
	pump();
	assert_int_equal(rx_ip_count, 1);
}

static void expect_down(const struct ppp_config *c, enum ppp_reason r)
{
	start(c);
	advance(40000);
	assert_int_equal(up_count, 0);
	assert_int_equal(down_count, 1);
	assert_int_equal(down_reason, r);
	assert_string_equal(ppp_reason_str(r), ppp_reason_str(down_reason));
}

static void test_auth_failure(void **state)
{
	struct ppp_config c = cfg_windows();

	(void)state;
	S.fail_auth = 1;
	expect_down(&c, PPP_REASON_AUTH_FAILED);
	assert_string_equal(ppp_reason_str(PPP_REASON_AUTH_FAILED),
	    "auth-failed");
}

static void test_bad_authenticator(void **state)
{
	struct ppp_config c = cfg_windows();

	(void)state;
	S.bad_authresp = 1;
	expect_down(&c, PPP_REASON_AUTH_BAD);
	assert_int_equal(S.termreqs, 1);
}

static void test_lcp_timeout(void **state)
{
	struct ppp_config c = cfg_windows();

	(void)state;
	S.silent = 1;
	expect_down(&c, PPP_REASON_LCP_TIMEOUT);
	/* Ten Configure-Requests, 3 s apart. */
	assert_true(now >= 1000 + 10 * 3000);
}

static void test_ccp_required_rejected(void **state)
{
	struct ppp_config c = cfg_windows();

	(void)state;
	S.ccp_bits = 0;
	expect_down(&c, PPP_REASON_CCP_FAILED);
}

/* 40-bit only against a server that insists on 128. */
static void test_ccp_strength_refused(void **state)
{
	struct ppp_config c = cfg_windows();

	(void)state;
	c.mppe = PPP_MPPE_40;
	expect_down(&c, PPP_REASON_CCP_FAILED);
}

static void test_peer_terminate(void **state)
{
	struct ppp_config c = cfg_windows();

	(void)state;
	start(&c);
	advance(4000);
	assert_int_equal(up_count, 1);
	srv_send(P_LCP, 5, 9, NULL, 0);
	pump();
	assert_int_equal(down_count, 1);
	assert_int_equal(down_reason, PPP_REASON_PEER_TERMINATE);
	assert_int_equal(S.termreqs, 0);
}

/* CHAP-MD5 and PAP without MPPE: the server's CCP is Protocol-Rejected. */
static void test_md5_and_pap_clear(void **state)
{
	struct ppp_config c = cfg_windows();
	uint8_t ip[60];

	(void)state;
	c.auth = PPP_AUTH_CHAP_MD5;
	c.mppe = PPP_MPPE_NONE;
	c.mppe_required = 0;
	S.auth = PPP_AUTH_CHAP_MD5;
	start(&c);
	advance(4000);    /* IPCP's retry after the server's Terminate-Ack */
	assert_int_equal(up_count, 1);
	assert_int_equal(facts.mppe_bits, 0);
	assert_int_equal(S.protrej, 1);
	assert_int_equal(S.protrej_proto, P_CCP);
	ip_packet(ip, sizeof(ip), 3);
	assert_int_equal(ppp_send_ip(C, ip, sizeof(ip)), 0);
	pump();
	assert_int_equal(S.ip_rx, 1);
	srv_send_ip(ip, sizeof(ip), 1);
	pump();
	assert_int_equal(rx_ip_count, 1);
	ppp_free(C);
	C = NULL;

	setup(state);
	c.auth = PPP_AUTH_PAP;
	S.auth = PPP_AUTH_PAP;
	S.no_ccp = 1;
	start(&c);
	assert_int_equal(up_count, 1);
	assert_string_equal(steps, "lcp auth ipv6cp ipcp ");
}

/* MS-CHAPv2 required by us, CHAP-MD5 demanded by the server: Naks, then
 * the session ends as rejected. */
static void test_auth_mismatch(void **state)
{
	struct ppp_config c = cfg_windows();

	(void)state;
	S.auth = PPP_AUTH_CHAP_MD5;
	/* This server repeats its request unchanged on every Nak. */
	start(&c);
	for (int i = 0; i < 6 && down_count == 0; i++) {
		srv_lcp_req();
		pump();
	}
	assert_int_equal(down_count, 1);
	assert_int_equal(down_reason, PPP_REASON_LCP_REJECTED);
}

/* Echo-Request answered with our magic; an unknown protocol rejected. */
static void test_echo_and_protrej(void **state)
{
	struct ppp_config c = cfg_windows();
	struct ppp_stats st;
	uint8_t echo[8] = { 0x11, 0x22, 0x33, 0x44, 'a', 'b', 'c', 'd' };

	(void)state;
	start(&c);
	advance(4000);
	srv_send(P_LCP, 9, 3, echo, sizeof(echo));
	pump();
	assert_int_equal(S.echo_replies, 1);
	srv_send(0x8281, 1, 1, NULL, 0);   /* an NCP we do not know */
	pump();
	assert_int_equal(S.protrej_proto, 0x8281);
	ppp_get_stats(C, &st);
	assert_int_equal(st.bad_frames, 1);
	assert_int_equal(down_count, 0);
}

/* Every frame the server sends, cut at every length and with bytes
 * flipped, fed to a fresh client at the same point of its setup: none
 * ends the session or crashes it (ASan/UBSan under SANITIZE=1). */
static void test_garbage_never_fatal(void **state)
{
	struct ppp_config c = cfg_windows();
	static struct frame log[256];
	size_t nlog = 0;
	struct ppp_stats st;

	(void)state;
	/* Record a good run's server frames. */
	start(&c);
	for (size_t i = 0; i < s2c.tail && nlog < 256; i++)
		log[nlog++] = s2c.f[i % QMAX];
	advance(4000);
	for (size_t i = nlog; i < s2c.tail && nlog < 256; i++)
		log[nlog++] = s2c.f[i % QMAX];
	assert_int_equal(up_count, 1);
	ppp_free(C);
	C = NULL;
	mppe_free(S.mppe);
	S.mppe = NULL;

	sink_output = 1;
	for (size_t k = 0; k < nlog; k++) {
		C = ppp_new(&c, &ops, NULL);
		assert_non_null(C);
		down_count = 0;
		ppp_start(C, now);
		for (size_t j = 0; j < k; j++)
			ppp_input(C, log[j].b, log[j].len, now);
		for (size_t cut = 0; cut < log[k].len; cut++)
			ppp_input(C, log[k].b, cut, now);
		for (size_t b = 0; b < log[k].len && b < 40; b++) {
			uint8_t g[2048];

			memcpy(g, log[k].b, log[k].len);
			g[b] ^= 0xFF;
			ppp_input(C, g, log[k].len, now);
			g[b] = (uint8_t)(g[b] * 31 + 7);
			ppp_input(C, g, log[k].len, now);
		}
		ppp_timer(C, now + 100000);
		ppp_get_stats(C, &st);
		assert_true(st.bad_frames > 0 || log[k].len == 0);
		ppp_free(C);
		C = NULL;
	}
	c2s.head = c2s.tail = 0;
	s2c.head = s2c.tail = 0;
	/* Random bytes of every length. */
	C = ppp_new(&c, &ops, NULL);
	ppp_start(C, now);
	srand(1);
	for (int i = 0; i < 20000; i++) {
		uint8_t g[300];
		size_t len = (size_t)rand() % sizeof(g);

		for (size_t j = 0; j < len; j++)
			g[j] = (uint8_t)rand();
		if (i % 3 == 0 && len >= 4) {
			g[0] = 0xFF;
			g[1] = 0x03;
			g[2] = 0xC0 | (i & 2 ? 0x02 : 0x00);
			g[3] = (uint8_t)(i & 4 ? 0x21 : 0x23);
		}
		ppp_input(C, g, len, now);
	}
	sink_output = 0;
}

/* One datagram each way through the up link (encrypted when MPPE is up):
 * both arrive whole. */
static void ip_both_ways(uint8_t tag)
{
	uint8_t ip[60];
	int srv_rx = S.ip_rx, cli_rx = rx_ip_count;

	ip_packet(ip, sizeof(ip), tag);
	assert_int_equal(ppp_send_ip(C, ip, sizeof(ip)), 0);
	pump();
	assert_int_equal(S.ip_rx, srv_rx + 1);
	assert_memory_equal(S.last_ip, ip, sizeof(ip));
	srv_send_ip(ip, sizeof(ip), 1);
	pump();
	assert_int_equal(rx_ip_count, cli_rx + 1);
	assert_memory_equal(rx_ip, ip, sizeof(ip));
}

/* After one LCP renegotiation the link is up (the ups-th time, with
 * `bits` of MPPE) and carries IP both ways. */
static void assert_up_again(int ups, int bits, uint8_t tag)
{
	struct ppp_stats st;

	assert_int_equal(down_count, 0);
	assert_int_equal(up_count, ups);
	assert_int_equal(facts.mppe_bits, bits);
	ip_both_ways(tag);
	ppp_get_stats(C, &st);
	assert_int_equal(st.renegotiations, 1);
}

/* A Windows-profile session up, with the retries it needs. */
static void start_up(const struct ppp_config *c)
{
	start(c);
	advance(4000);
	assert_int_equal(up_count, 1);
}

/* pptp-load --renegotiate auth --renegotiate-user alice
 * --renegotiate-mppe none: right after the first authentication, before
 * any CCP, a new LCP Configure-Request; the server takes LCP down and up,
 * the client authenticates again as the second identity and then refuses
 * CCP (Protocol-Reject); IP comes up in clear. */
static void test_renegotiate_at_auth_as_second_identity(void **state)
{
	struct ppp_config c = cfg_windows();

	(void)state;
	c.renego = PPP_RENEGO_AUTH;
	c.renego_user = USER2;
	c.renego_password = PASS2;
	c.renego_mppe = PPP_MPPE_NONE;
	c.renego_mppe_required = 0;
	start(&c);
	advance(4000);    /* IPCP's retry after the server's Terminate-Ack */
	assert_int_equal(S.lcp_renegs, 1);
	assert_int_equal(S.nnames, 2);
	assert_string_equal(S.names[0], "User");
	assert_string_equal(S.names[1], USER2);
	assert_non_null(strstr(steps, "lcp auth renegotiate lcp reauth "));
	assert_int_equal(S.ccp_reqs, 0);
	assert_int_equal(S.protrej_proto, P_CCP);
	assert_up_again(1, 0, 5);
}

/* --renegotiate up with the same identity: the first IPCP/CCP opening is
 * not reported; after the renegotiation MPPE runs on the second
 * authentication's keys and the session comes up once. */
static void test_renegotiate_at_up_same_identity(void **state)
{
	struct ppp_config c = cfg_windows();

	(void)state;
	c.renego = PPP_RENEGO_UP;
	c.renego_mppe = PPP_MPPE_128;
	c.renego_mppe_required = 1;
	start(&c);
	advance(4000);
	assert_int_equal(S.lcp_renegs, 1);
	assert_int_equal(S.nnames, 2);
	assert_string_equal(S.names[1], "User");
	assert_non_null(strstr(steps, "ipcp renegotiate lcp reauth "));
	assert_up_again(1, 128, 6);
}

/* The second identity must hold MPPE when renegotiate-mppe requires it:
 * a server that rejects CCP then ends the session as ccp-failed. */
static void test_renegotiate_mppe_required_after(void **state)
{
	struct ppp_config c = cfg_windows();

	(void)state;
	c.mppe = PPP_MPPE_NONE;
	c.mppe_required = 0;
	c.renego = PPP_RENEGO_AUTH;
	c.renego_user = USER2;
	c.renego_password = PASS2;
	c.renego_mppe = PPP_MPPE_128;
	c.renego_mppe_required = 1;
	S.ccp_bits = 0;
	start(&c);
	advance(4000);
	assert_int_equal(S.lcp_renegs, 1);
	assert_true(S.ccp_reqs >= 1);   /* MPPE asked for after, not before */
	assert_int_equal(up_count, 0);
	assert_int_equal(down_count, 1);
	assert_int_equal(down_reason, PPP_REASON_CCP_FAILED);
}

/* The server renegotiates LCP on an up session: the client follows (it
 * used to end the session as lcp-rejected), authenticates again, and the
 * link comes up a second time with fresh MPPE keys. */
static void test_server_renegotiation_followed(void **state)
{
	struct ppp_config c = cfg_windows();

	(void)state;
	start_up(&c);
	srv_renegotiate();
	pump();
	advance(4000);
	assert_int_equal(S.nnames, 2);
	assert_up_again(2, 128, 7);
}

/* --mppe refuse: CCP runs, but the client asks for nothing and rejects
 * the server's MPPE option; an allow server then opens CCP empty and IP
 * runs in clear. */
static void test_ccp_without_mppe(void **state)
{
	struct ppp_config c = cfg_windows();

	(void)state;
	c.mppe = PPP_MPPE_REFUSE;
	c.mppe_required = 0;
	S.ccp_clear_ok = 1;
	start(&c);
	advance(4000);
	assert_true(S.ccp_rej_rx >= 1);
	assert_true(S.ccp_empty_req >= 1);
	assert_int_equal(S.ccp_empty_req, S.ccp_reqs);   /* never MPPE */
	assert_int_equal(S.protrej, 0);   /* CCP itself is not refused */
	assert_non_null(strstr(steps, "ccp "));
	assert_int_equal(up_count, 1);
	assert_int_equal(facts.mppe_bits, 0);
	ip_both_ways(9);
}

/* The server's Router Advertisement in an IPv6 datagram to ff02::1
 * (hop limit `hops`) with the /64 2001:db8:100:2a::. */
static size_t ra_datagram(uint8_t *d, uint8_t hops)
{
	struct ra_info ri = { .prefix_len = 64, .mtu = 1396 };
	inet_pton(AF_INET6, "2001:db8:100:2a::", &ri.prefix);
	int n = ra_build(&ri, d + 40, 1500 - 40);
	assert_true(n > 0);
	memset(d, 0, 40);
	d[0] = 0x60;
	d[4] = (uint8_t)(n >> 8);
	d[5] = (uint8_t)n;
	d[6] = 58;   /* ICMPv6 */
	d[7] = hops;
	d[8] = 0xfe;
	d[9] = 0x80;
	d[24] = 0xff;
	d[25] = 0x02;
	d[39] = 1;
	return 40 + (size_t)n;
}

/* pptp-load has no IPv6 stack, but takes the server's Router
 * Advertisement: the address SLAAC forms from the /64 and its IPV6CP
 * identifier, and the step "ra". One forwarded (hop limit not 255) is
 * not believed. */
static void test_router_advertisement(void **state)
{
	struct ppp_config c = cfg_windows();
	struct in6_addr a;
	uint8_t d[1500], want[8] = { 0x20, 0x01, 0x0d, 0xb8, 0x01, 0x00, 0x00, 0x2a };

	(void)state;
	start_up(&c);
	assert_int_equal(ppp_ipv6_address(C, &a), -1);
	srv_send_proto(0x0057, d, ra_datagram(d, 64), 1);
	pump();
	assert_int_equal(ppp_ipv6_address(C, &a), -1);
	assert_null(strstr(steps, "ra "));
	srv_send_proto(0x0057, d, ra_datagram(d, 255), 1);
	pump();
	assert_int_equal(ppp_ipv6_address(C, &a), 0);
	assert_memory_equal(a.s6_addr, want, sizeof(want));
	assert_non_null(strstr(steps, "ra "));
	assert_int_equal(ra_addr_at_step, 0);
	ip_both_ways(11);   /* IPv4 unaffected */
}

/* While the link is back in Establish, no datagram goes out. */
static void test_no_ip_while_renegotiating(void **state)
{
	struct ppp_config c = cfg_windows();
	uint8_t ip[60];

	(void)state;
	start_up(&c);
	srv_renegotiate();
	S.silent = 1;       /* the server's answers never come */
	pump();
	assert_non_null(strstr(steps, "renegotiate "));
	ip_packet(ip, sizeof(ip), 8);
	assert_int_equal(ppp_mtu(C), 0);
	assert_int_equal(ppp_send_ip(C, ip, sizeof(ip)), -1);
	assert_int_equal(down_count, 0);
}

static void test_config_checked(void **state)
{
	struct ppp_config c = cfg_windows();

	(void)state;
	c.user = NULL;
	assert_null(ppp_new(&c, &ops, NULL));
	c = cfg_windows();
	c.mru = 10;
	assert_null(ppp_new(&c, &ops, NULL));
	assert_null(ppp_new(NULL, &ops, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_windows_profile_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stateful_40_loss, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stateful_nak_to_pppd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_authenticator, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lcp_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ccp_required_rejected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ccp_strength_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_peer_terminate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_md5_and_pap_clear, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_echo_and_protrej, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_never_fatal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_renegotiate_at_auth_as_second_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_renegotiate_at_up_same_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_renegotiate_mppe_required_after, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_renegotiation_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_ip_while_renegotiating, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ccp_without_mppe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_router_advertisement, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
