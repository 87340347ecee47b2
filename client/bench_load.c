/* Benchmark of pptp-load's whole send path, per packet, on one core:
 * the IPv4/UDP datagram (ipudp.c), PPP framing and MPPE-128 stateless
 * encryption (ppp.c, mppe.c), the enhanced GRE header (grelink.c on
 * proto/packet.c) and the send on the raw GRE socket to a sink on loopback,
 * as a session's stream sends it (session.c: stream_send, ppp_output).
 *
 * The PPP object is brought up first against a scripted server in this
 * process (LCP, MS-CHAPv2 with a real authenticator response, CCP
 * MPPE-128 stateless, IPCP), so the datagrams are encrypted with keys
 * from a real handshake. Then, for each datagram size, it times:
 *   ppp:  IP/UDP build + PPP + MPPE-128 (the frame is dropped)
 *   full: the same, then GRE + sendto() on the raw socket
 * and prints packets per second of CPU time (user + system, this thread:
 * the loopback delivery to the sink runs in this thread too, so the full
 * figure is a little pessimistic for a real NIC).
 *
 *   client/bench_load [SECONDS]        (root: the raw GRE socket)
 * The target: >= 50,000 MPPE-128 packets/s on one core. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client/grelink.h"
#include "client/ipudp.h"
#include "client/mschap.h"
#include "client/ppp.h"

#define P_LCP  0xC021
#define P_CHAP 0xC223
#define P_CCP  0x80FD
#define P_IPCP 0x8021
#define CP_CONFREQ 1
#define CP_CONFACK 2
#define CP_CONFNAK 3
#define CHAP_CHALLENGE 1
#define CHAP_RESPONSE  2
#define CHAP_SUCCESS   3
#define LCP_OPT_MRU    1
#define LCP_OPT_AUTH   3
#define LCP_OPT_MAGIC  5
#define CCP_OPT_MPPE   18
#define IPCP_OPT_ADDR  3
#define CHAP_MSCHAPV2  0x81
#define SRV_MRU        1400
#define MPPE_OVERHEAD  4      /* the MPPE header and the inner protocol */
#define BENCH_S_DEFAULT 1.0
#define QMAX 64
#define TARGET_PPS 50000

static const char USER[] = "bench", PASS[] = "benchpass";
static const uint8_t AUTH_CHAL[MSCHAP_CHALLENGE_LEN] = { 0x5B, 0x5D, 0x7C,
    0x7D, 0x7B, 0x3F, 0x2F, 0x3E, 0x3C, 0x2C, 0x60, 0x21, 0x32, 0x26, 0x26,
    0x28 };
/* the addresses IPCP hands out (documentation range, never on the wire:
 * the GRE goes to loopback) */
static const uint8_t CLIENT_IP[4] = { 198, 18, 200, 2 };
static const uint8_t SERVER_IP[4] = { 198, 18, 200, 1 };

struct frame { uint8_t b[1600]; size_t len; };
static struct frame q[QMAX];
static unsigned qhead, qtail;

static struct ppp *C;
static struct grecall call;
static int up, handshake = 1, to_gre;
static uint64_t sent_frames;
static int lcp_acked, lcp_ack_sent, chap_sent, ccp_acked, ccp_ack_sent,
    ipcp_sent;

/* ---- the client's side ---- */

static void cb_output(void *arg, const uint8_t *f, size_t len)
{
	(void)arg;
	if (handshake) {
		if (qtail - qhead < QMAX && len <= sizeof(q[0].b)) {
			memcpy(q[qtail % QMAX].b, f, len);
			q[qtail++ % QMAX].len = len;
		}
		return;
	}
	sent_frames++;
	if (to_gre)
		grecall_send(&call, f, len, 0);
}

static void cb_up(void *arg, const struct ppp_facts *f)
{
	(void)arg;
	up = f->mppe_bits == 128;
}

static void cb_ip(void *arg, const uint8_t *ip, size_t len)
{
	(void)arg, (void)ip, (void)len;
}

static void cb_down(void *arg, enum ppp_reason r)
{
	(void)arg;
	fprintf(stderr, "bench_load: PPP down in the handshake: %s\n",
	    ppp_reason_str(r));
	exit(1);
}

static const struct ppp_ops ops = {
	.output = cb_output, .up = cb_up, .ip_input = cb_ip, .down = cb_down,
};

/* ---- the scripted server: just enough of pppd's side ---- */

static void srv_send(uint16_t proto, uint8_t code, uint8_t id,
    const uint8_t *d, size_t len)
{
	uint8_t f[600];

	f[0] = 0xFF;
	f[1] = 0x03;
	f[2] = (uint8_t)(proto >> 8);
	f[3] = (uint8_t)proto;
	f[4] = code;
	f[5] = id;
	f[6] = (uint8_t)((len + 4) >> 8);
	f[7] = (uint8_t)(len + 4);
	memcpy(f + 8, d, len);
	ppp_input(C, f, len + 8, 1);
}

static void srv_lcp(const uint8_t *d, size_t len)
{
	static const uint8_t req[] = { LCP_OPT_MRU, 4, SRV_MRU >> 8,
	    SRV_MRU & 0xFF, LCP_OPT_MAGIC, 6, 0x11, 0x22, 0x33, 0x44,
	    LCP_OPT_AUTH, 5, 0xC2, 0x23, CHAP_MSCHAPV2 };

	if (d[0] == CP_CONFREQ) {
		srv_send(P_LCP, CP_CONFREQ, 1, req, sizeof(req));
		srv_send(P_LCP, CP_CONFACK, d[1], d + 4, len - 4);
		lcp_ack_sent = 1;
	} else if (d[0] == CP_CONFACK)
		lcp_acked = 1;
	if (lcp_acked && lcp_ack_sent && !chap_sent) {
		uint8_t ch[1 + MSCHAP_CHALLENGE_LEN + 3] = { MSCHAP_CHALLENGE_LEN };
		memcpy(ch + 1, AUTH_CHAL, MSCHAP_CHALLENGE_LEN);
		memcpy(ch + 1 + MSCHAP_CHALLENGE_LEN, "srv", 3);
		chap_sent = 1;
		srv_send(P_CHAP, CHAP_CHALLENGE, 7, ch, sizeof(ch));
	}
}

static void srv_chap(const uint8_t *d, size_t len)
{
	/* Response: value size 49 = peer challenge 16, reserved 8, NT
	 * response 24, flags 1 (RFC 2759 4) */
	char msg[MSCHAP_AUTHRESP_LEN + 16];
	const uint8_t *peer = d + 5, *nt = d + 5 + 24;
	static const uint8_t mppe128[6] = { CCP_OPT_MPPE, 6, 0x01, 0, 0, 0x40 };

	if (d[0] != CHAP_RESPONSE || len < 5 + 49)
		return;
	mschap_auth_response(PASS, nt, peer, AUTH_CHAL, USER, msg);
	strcat(msg, " M=ok");
	srv_send(P_CHAP, CHAP_SUCCESS, d[1], (const uint8_t *)msg, strlen(msg));
	srv_send(P_CCP, CP_CONFREQ, 1, mppe128, sizeof(mppe128));
}

static void srv_ccp(const uint8_t *d, size_t len)
{
	static const uint8_t addr[6] = { IPCP_OPT_ADDR, 6, 198, 18, 200, 1 };

	if (d[0] == CP_CONFREQ) {
		srv_send(P_CCP, CP_CONFACK, d[1], d + 4, len - 4);
		ccp_ack_sent = 1;
	} else if (d[0] == CP_CONFACK)
		ccp_acked = 1;
	if (ccp_acked && ccp_ack_sent && !ipcp_sent) {
		ipcp_sent = 1;
		srv_send(P_IPCP, CP_CONFREQ, 1, addr, sizeof(addr));
	}
}

static void srv_ipcp(const uint8_t *d, size_t len)
{
	uint8_t nak[6] = { IPCP_OPT_ADDR, 6 };

	if (d[0] != CP_CONFREQ)
		return;
	memcpy(nak + 2, CLIENT_IP, 4);
	if (len - 4 >= 6 && d[4] == IPCP_OPT_ADDR &&
	    memcmp(d + 6, CLIENT_IP, 4) == 0)
		srv_send(P_IPCP, CP_CONFACK, d[1], d + 4, len - 4);
	else
		srv_send(P_IPCP, CP_CONFNAK, d[1], nak, sizeof(nak));
}

static void srv_input(const uint8_t *f, size_t len)
{
	if (len < 8 || f[0] != 0xFF || f[1] != 0x03)
		return;
	uint16_t proto = (uint16_t)(f[2] << 8 | f[3]);
	switch (proto) {
	case P_LCP: srv_lcp(f + 4, len - 4); break;
	case P_CHAP: srv_chap(f + 4, len - 4); break;
	case P_CCP: srv_ccp(f + 4, len - 4); break;
	case P_IPCP: srv_ipcp(f + 4, len - 4); break;
	}
}

static void handshake_run(void)
{
	struct ppp_config cfg = {
		.user = USER, .password = PASS, .auth = PPP_AUTH_MSCHAPV2,
		.mppe = PPP_MPPE_128, .mppe_required = 1, .mru = SRV_MRU,
	};

	C = ppp_new(&cfg, &ops, NULL);
	if (!C) {
		fprintf(stderr, "bench_load: ppp_new failed\n");
		exit(1);
	}
	ppp_start(C, 1);
	for (int i = 0; i < 1000 && !up; i++) {
		if (qhead == qtail)
			break;
		struct frame *f = &q[qhead++ % QMAX];
		srv_input(f->b, f->len);
	}
	if (!up) {
		fprintf(stderr, "bench_load: the handshake did not bring MPPE-128 up\n");
		exit(1);
	}
	handshake = 0;
}

/* ---- timing ---- */

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double bench(size_t dgram, double secs, uint64_t *n_out)
{
	uint8_t payload[1500], ip[1600];
	struct ipudp u = { .sport = 40000, .dport = 9000, .payload = payload,
		.len = dgram - IPUDP_HDR_LEN };
	uint64_t n = 0;
	double t0 = cpu_s(), t;

	memcpy(&u.src, CLIENT_IP, 4);
	memcpy(&u.dst, SERVER_IP, 4);
	memset(payload, 0xA5, sizeof(payload));
	do {
		for (int i = 0; i < 256; i++) {
			/* a probe's sequence number changes every packet */
			memcpy(payload, &n, sizeof(n));
			size_t len = ipudp_build(ip, &u);
			if (ppp_send_ip(C, ip, len) < 0) {
				fprintf(stderr, "bench_load: ppp_send_ip refused %zu bytes\n",
				    len);
				exit(1);
			}
			n++;
		}
	} while ((t = cpu_s() - t0) < secs);
	*n_out = n;
	return (double)n / t;
}

static void gre_deliver(void *arg, const uint8_t *f, size_t len, uint64_t now)
{
	(void)arg, (void)f, (void)len, (void)now;
}

static void gre_rearm(void *arg, uint64_t at)
{
	(void)arg, (void)at;
}

static const struct grecall_ops gre_ops = {
	.deliver = gre_deliver, .rearm = gre_rearm,
};

int main(int argc, char **argv)
{
	/* 1396: the largest datagram the MRU of 1400 carries under MPPE */
	static const size_t sizes[] = { 100, 512, SRV_MRU - MPPE_OVERHEAD };
	double secs = argc > 1 ? atof(argv[1]) : BENCH_S_DEFAULT;
	struct in_addr lo = { htonl(INADDR_LOOPBACK) };
	struct grelink *link;
	int bufsz = 1 << 20, ok = 1;

	if (secs <= 0)
		secs = BENCH_S_DEFAULT;
	handshake_run();
	link = grelink_open();
	if (!link) {
		perror("bench_load: raw GRE socket (needs root or CAP_NET_RAW)");
		return 1;
	}
	/* the sink is the link's own socket: it is never read, the kernel
	 * drops what overflows its receive buffer (kept small) */
	setsockopt(grelink_fd(link), SOL_SOCKET, SO_RCVBUF, &(int){ 4096 },
	    sizeof(int));
	setsockopt(grelink_fd(link), SOL_SOCKET, SO_SNDBUF, &bufsz,
	    sizeof(bufsz));
	grecall_init(&call, link, grelink_pick_id(link), lo, &gre_ops, NULL, 0);
	if (grecall_attach(&call, lo, 0x4242) < 0) {
		fprintf(stderr, "bench_load: grecall_attach failed\n");
		return 1;
	}
	printf("pptp-load send path, one core, MPPE-128 stateless (handshake "
	    "against a scripted server), %.1f s CPU per figure\n", secs);
	printf("%8s  %14s  %14s  %12s  %12s\n", "datagram", "ppp pkt/s",
	    "full pkt/s", "full ns/pkt", "full Mbit/s");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t n1, n2;
		to_gre = 0;
		double ppp = bench(sizes[i], secs, &n1);
		to_gre = 1;
		uint64_t err0 = call.tx_errors;
		double full = bench(sizes[i], secs, &n2);
		printf("%8zu  %14.0f  %14.0f  %12.0f  %12.1f%s\n", sizes[i], ppp,
		    full, 1e9 / full, full * (double)sizes[i] * 8 / 1e6,
		    call.tx_errors > err0 ? "  (send errors!)" : "");
		if (call.tx_errors > err0)
			ok = 0;
		if (sizes[i] == SRV_MRU - MPPE_OVERHEAD && full < TARGET_PPS)
			ok = 0;
	}
	printf("target: >= %d MPPE-128 packets/s on one core at %d bytes, "
	    "full path: %s\n", TARGET_PPS, SRV_MRU - MPPE_OVERHEAD, ok ? "met" : "NOT met");
	grecall_detach(&call);
	grecall_free(&call);
	grelink_close(link);
	ppp_free(C);
	return 0;
}
