/* pptp-echo: the server-side end of pptp-load's streams, on one UDP port
 * with one epoll loop. Per datagram (probe.h):
 *   DATA/echo        sent straight back to its source;
 *   DATA/sink        counted per source and stream (acct.c);
 *   REPORT_REQ       answered with that flow's counts (up streams);
 *   START_DOWN       starts sending DATA/down to the source at the asked
 *                    size and rate for the asked time (down streams).
 * It runs in the server's network namespace, beside pptpd. */
#include "client/acct.h"
#include "client/probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ECHO_PORT_DEFAULT 9000
#define FLOWS_DEFAULT     8192
#define BATCH             64
/* A down stream catches up at most this many datagrams per turn. */
#define DOWN_BURST        64
/* Longest down stream accepted, and fastest. */
#define DOWN_MAX_MS       3600000u
#define DOWN_MAX_PPS      1000000u

struct flow {
	int used;
	struct sockaddr_in peer;
	uint32_t stream;
	struct acct acct;        /* sink */
	/* down */
	uint32_t size, pps;
	uint64_t t0_ns, end_ns, sent;
	int down;
};

struct echo {
	int fd;
	struct flow *flow;
	unsigned nflows, cap;
	uint64_t echoed, sunk, down_sent, bad, full;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static unsigned flow_hash(const struct sockaddr_in *a, uint32_t stream,
    unsigned cap)
{
	uint32_t h = a->sin_addr.s_addr * 2654435761u ^ a->sin_port * 40503u ^
	    stream * 2246822519u;
	return h % cap;
}

/* The flow of (source, stream): found, or a new one; NULL when full. */
static struct flow *flow_get(struct echo *e, const struct sockaddr_in *a,
    uint32_t stream, int create)
{
	unsigned i = flow_hash(a, stream, e->cap);

	for (unsigned n = 0; n < e->cap; n++, i = (i + 1) % e->cap) {
		struct flow *f = &e->flow[i];
		if (!f->used) {
			if (!create || e->nflows * 10 >= e->cap * 9)
				return NULL;
			memset(f, 0, sizeof(*f));
			f->used = 1;
			f->peer = *a;
			f->stream = stream;
			acct_init(&f->acct);
			e->nflows++;
			return f;
		}
		if (f->stream == stream && f->peer.sin_addr.s_addr ==
		    a->sin_addr.s_addr && f->peer.sin_port == a->sin_port)
			return f;
	}
	return NULL;
}

static void send_to(struct echo *e, const uint8_t *b, size_t n,
    const struct sockaddr_in *to)
{
	if (sendto(e->fd, b, n, MSG_DONTWAIT, (const struct sockaddr *)to,
	    sizeof(*to)) < 0)
		e->full++;
}

static void on_probe(struct echo *e, uint8_t *b, size_t n,
    const struct sockaddr_in *from, uint64_t t)
{
	struct probe p, r;
	struct flow *f;
	uint8_t out[PROBE_MAX_LEN];
	size_t len;

	if (probe_decode(b, n, &p) < 0) {
		e->bad++;
		return;
	}
	switch (p.type) {
	case PROBE_DATA:
		if (p.mode == PROBE_MODE_ECHO) {
			send_to(e, b, n, from);
			e->echoed++;
		} else if (p.mode == PROBE_MODE_SINK &&
		    (f = flow_get(e, from, p.stream, 1)) != NULL) {
			acct_input(&f->acct, p.seq, p.ts_ns, t);
			e->sunk++;
		}
		return;
	case PROBE_REPORT_REQ:
		f = flow_get(e, from, p.stream, 0);
		memset(&r, 0, sizeof(r));
		r.type = PROBE_REPORT;
		r.stream = p.stream;
		if (f) {
			r.received = f->acct.received;
			r.reordered = f->acct.reordered;
			r.duplicates = f->acct.duplicates;
			r.max_seq = f->acct.max_seq;
		}
		len = probe_encode(&r, out, sizeof(out), 0);
		send_to(e, out, len, from);
		return;
	case PROBE_START_DOWN:
		if (p.size < PROBE_HDR_LEN || p.size > PROBE_MAX_LEN ||
		    p.pps == 0 || p.pps > DOWN_MAX_PPS ||
		    p.duration_ms == 0 || p.duration_ms > DOWN_MAX_MS) {
			e->bad++;
			return;
		}
		f = flow_get(e, from, p.stream, 1);
		if (!f || f->down)
			return;     /* a retried start: already running */
		f->down = 1;
		f->size = p.size;
		f->pps = p.pps;
		f->t0_ns = t;
		f->end_ns = t + (uint64_t)p.duration_ms * 1000000u;
		return;
	default:
		e->bad++;
	}
}

static void rx(struct echo *e)
{
	static uint8_t buf[BATCH][PROBE_MAX_LEN + 64];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_in from[BATCH];

	for (int i = 0; i < BATCH; i++) {
		iov[i].iov_base = buf[i];
		iov[i].iov_len = sizeof(buf[i]);
		memset(&m[i], 0, sizeof(m[i]));
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
		m[i].msg_hdr.msg_name = &from[i];
		m[i].msg_hdr.msg_namelen = sizeof(from[i]);
	}
	int n = recvmmsg(e->fd, m, BATCH, MSG_DONTWAIT, NULL);
	uint64_t t = now_ns();
	for (int i = 0; i < n; i++)
		on_probe(e, buf[i], m[i].msg_len, &from[i], t);
}

/* Send what the down streams owe by now; returns ns to the next one. */
static uint64_t down_tick(struct echo *e)
{
	uint64_t t = now_ns(), next = 0;
	uint8_t out[PROBE_MAX_LEN];

	for (unsigned i = 0; i < e->cap; i++) {
		struct flow *f = &e->flow[i];
		if (!f->used || f->down != 1)
			continue;
		uint64_t span = (t < f->end_ns ? t : f->end_ns) - f->t0_ns;
		uint64_t due = span * f->pps / 1000000000u + 1;
		uint64_t total = (f->end_ns - f->t0_ns) * f->pps / 1000000000u;
		if (due > total)
			due = total;
		for (unsigned b = 0; f->sent < due && b < DOWN_BURST; b++) {
			struct probe p = { .type = PROBE_DATA,
				.mode = PROBE_MODE_DOWN, .stream = f->stream,
				.seq = f->sent, .ts_ns = t };
			size_t len = probe_encode(&p, out, sizeof(out), f->size);
			send_to(e, out, len, &f->peer);
			f->sent++;
			e->down_sent++;
		}
		if (f->sent >= total) {
			f->down = 2;    /* finished */
			continue;
		}
		uint64_t at = f->t0_ns + (f->sent * 1000000000u + f->pps - 1) /
		    f->pps;
		uint64_t wait = at > t ? at - t : 0;
		if (!next || wait < next)
			next = wait ? wait : 1;
	}
	return next;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "bind", required_argument, NULL, 'b' },
		{ "flows", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_in sa = { .sin_family = AF_INET,
		.sin_port = htons(ECHO_PORT_DEFAULT) };
	struct echo e;
	int c, sz = 8 << 20;
	sigset_t set;

	memset(&e, 0, sizeof(e));
	e.cap = FLOWS_DEFAULT;
	while ((c = getopt_long(argc, argv, "p:b:f:h", lo, NULL)) != -1) {
		switch (c) {
		case 'p': sa.sin_port = htons((uint16_t)atoi(optarg)); break;
		case 'b':
			if (inet_pton(AF_INET, optarg, &sa.sin_addr) != 1) {
				fprintf(stderr, "pptp-echo: bad address %s\n", optarg);
				return 2;
			}
			break;
		case 'f': e.cap = (unsigned)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: pptp-echo [--port N] [--bind ADDR]"
			    " [--flows N]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (e.cap < 16)
		e.cap = 16;
	e.flow = calloc(e.cap, sizeof(*e.flow));
	e.fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (!e.flow || e.fd < 0 ||
	    bind(e.fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "pptp-echo: %s\n", strerror(errno));
		return 1;
	}
	(void)setsockopt(e.fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	(void)setsockopt(e.fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int sfd = signalfd(-1, &set, SFD_CLOEXEC);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = e.fd };
	epoll_ctl(ep, EPOLL_CTL_ADD, e.fd, &ev);
	ev.data.fd = sfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	fprintf(stderr, "pptp-echo: listening on udp %s:%u\n",
	    inet_ntoa(sa.sin_addr), ntohs(sa.sin_port));
	for (;;) {
		uint64_t wait = down_tick(&e);
		int ms = wait ? (int)((wait + 999999) / 1000000) : -1;
		struct epoll_event evs[4];
		int n = epoll_wait(ep, evs, 4, ms);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == sfd)
				goto out;
			rx(&e);
		}
	}
out:
	fprintf(stderr, "pptp-echo: echoed %llu, sunk %llu, sent down %llu, "
	    "bad %llu, send failures %llu, flows %u\n",
	    (unsigned long long)e.echoed, (unsigned long long)e.sunk,
	    (unsigned long long)e.down_sent, (unsigned long long)e.bad,
	    (unsigned long long)e.full, e.nflows);
	free(e.flow);
	return 0;
}
