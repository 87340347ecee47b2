/* Fuzz the whole GRE engine (gre/gre.c) as the daemon drives it: datagrams
 * arrive on its socket (a SOCK_DGRAM socketpair standing in for the raw
 * socket, carrying IPv4 + GRE as a raw socket delivers them), pppd's bytes
 * arrive on each call's pty (a socketpair with a small buffer, so the pty
 * pushes back), time moves, timers fire, ACCMs and windows change, ptys
 * close. What the engine sends is captured by interposing sendmmsg() and
 * sendmsg() on the engine's socket; the input can make those fail.
 *
 * Checks, besides memory safety and leaks:
 *  - every frame the engine writes to a call's pty is the payload of a GRE
 *    packet that came from that call's peer address with that call's ID
 *    (nothing from another source or another call reaches pppd, nothing is
 *    corrupted on the way);
 *  - every datagram the engine sends is well-formed enhanced GRE, addressed
 *    to the call's peer with the peer's Call ID, data packets numbered
 *    consecutively, carrying a frame pppd really wrote.
 *
 * Input: a sequence of operations, see the switch in LLVMFuzzerTestOneInput. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fuzz/fuzz_util.h"
#include "gre/gre.h"
#include "gre/hdlc.h"
#include "proto/packet.h"
#include "proto/seq.h"

#define NCALLS    2
#define SET_SIZE  4096

/* A set of 64-bit hashes of byte strings (open addressing, no removal). */
struct hset {
	uint64_t h[SET_SIZE];
	unsigned n;
	int full;
};

static uint64_t
hash(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull ^ n;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h | 1;   /* never 0, the empty slot */
}

static void
hset_add(struct hset *s, uint64_t h)
{
	if (s->n >= SET_SIZE / 2) {
		s->full = 1;    /* stop checking rather than guess */
		return;
	}
	for (unsigned i = (unsigned)h % SET_SIZE;; i = (i + 1) % SET_SIZE) {
		if (s->h[i] == h)
			return;
		if (s->h[i] == 0) {
			s->h[i] = h;
			s->n++;
			return;
		}
	}
}

static int
hset_has(const struct hset *s, uint64_t h)
{
	if (s->full)
		return 1;
	for (unsigned i = (unsigned)h % SET_SIZE;; i = (i + 1) % SET_SIZE) {
		if (s->h[i] == h)
			return 1;
		if (s->h[i] == 0)
			return 0;
	}
}

struct fcall {
	struct gre_call *gc;
	uint16_t local_id, peer_id;
	struct in_addr peer;
	int pty[2];               /* [0] the engine's, [1] ours (pppd's side) */
	int want_write, closed, freed;
	struct hset from_peer;    /* GRE payloads legitimately sent to it */
	struct hset from_pppd;    /* frames written to its pty */
	struct hdlc_decoder out;  /* decodes what the engine writes to pppd */
	struct hdlc_decoder in;   /* decodes what we write as pppd */
	uint32_t rx_seq;          /* our structured sequence for its peer */
	int tx_started;
	uint32_t tx_next;         /* next data seq we expect the engine to send */
	uint32_t tx_max;
};

static struct {
	struct gre_engine *e;
	int sock[2];
	struct fcall c[NCALLS];
	uint64_t now;
	int queued;
	int tx_fail;              /* 0 ok, 1 EAGAIN, 2 EPERM, 3 short batches */
	unsigned sent;
} F;

/* ---- what the engine sends ---- */

/* A datagram the engine hands to the kernel. `ok` is 0 when the (fake)
 * kernel refuses it: it is still checked, and its number still counts, as
 * a refused packet is lost like any packet on the way. */
static void
check_out(const void *buf, size_t len, const struct sockaddr *to, socklen_t tolen,
    int ok)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)to;
	struct gre_packet pkt;
	struct fcall *c = NULL;

	if (to == NULL || tolen < sizeof(*sin) || sin->sin_family != AF_INET)
		abort();
	if (gre_packet_parse(buf, len, &pkt) != GRE_PARSE_OK)
		abort();   /* we sent something malformed */
	for (int i = 0; i < NCALLS; i++)
		if (!F.c[i].freed && F.c[i].peer_id == pkt.call_id &&
		    F.c[i].peer.s_addr == sin->sin_addr.s_addr)
			c = &F.c[i];
	if (c == NULL)
		abort();   /* to nobody's peer, or with the wrong Call ID */
	if (pkt.has_seq) {
		if (c->tx_started && pkt.seq != c->tx_next)
			abort();   /* data numbering not consecutive */
		c->tx_started = 1;
		c->tx_next = pkt.seq + 1;
		c->tx_max = pkt.seq;
		if (!hset_has(&c->from_pppd, hash(pkt.payload, pkt.payload_len)))
			abort();   /* a payload pppd never wrote */
	}
	F.sent += ok;
}

static void
check_iov(const struct msghdr *h, int ok)
{
	size_t len = 0;
	for (size_t k = 0; k < h->msg_iovlen; k++)
		len += h->msg_iov[k].iov_len;
	uint8_t *flat = malloc(len ? len : 1), *p = flat;
	for (size_t k = 0; k < h->msg_iovlen; k++) {
		memcpy(p, h->msg_iov[k].iov_base, h->msg_iov[k].iov_len);
		p += h->msg_iov[k].iov_len;
	}
	check_out(flat, len, h->msg_name, h->msg_namelen, ok);
	free(flat);
}

ssize_t
sendmsg(int fd, const struct msghdr *h, int flags)
{
	if (F.e == NULL || fd != F.sock[0])
		return syscall(SYS_sendmsg, fd, h, flags);
	/* The engine calls sendmsg() for one datagram sendmmsg() refused. */
	if (F.tx_fail == 1 || F.tx_fail == 2) {
		check_iov(h, 0);
		errno = F.tx_fail == 1 ? EAGAIN : EPERM;
		return -1;
	}
	check_iov(h, 1);
	size_t len = 0;
	for (size_t k = 0; k < h->msg_iovlen; k++)
		len += h->msg_iov[k].iov_len;
	return (ssize_t)len;
}

int
sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	if (F.e == NULL || fd != F.sock[0])
		return (int)syscall(SYS_sendmmsg, fd, v, n, flags);
	if (F.tx_fail == 1) {
		/* A full socket buffer: the engine drops the whole queue. */
		for (unsigned i = 0; i < n; i++)
			check_iov(&v[i].msg_hdr, 0);
		errno = EAGAIN;
		return -1;
	}
	if (F.tx_fail == 2) {
		/* Refused: the engine retries each datagram with sendmsg(),
		 * where it is checked. */
		errno = EPERM;
		return -1;
	}
	if (F.tx_fail == 3 && n > 1)
		n = n / 2;   /* the kernel took only part of the batch */
	for (unsigned i = 0; i < n; i++) {
		size_t len = 0;
		for (size_t k = 0; k < v[i].msg_hdr.msg_iovlen; k++)
			len += v[i].msg_hdr.msg_iov[k].iov_len;
		check_iov(&v[i].msg_hdr, 1);
		v[i].msg_len = (unsigned)len;
	}
	return (int)n;
}

/* ---- callbacks ---- */

static void
op_log(void *arg, int prio, const char *msg)
{
	(void)arg;
	(void)prio;
	if (strlen(msg) > 4096)
		abort();
	if (getenv("FUZZ_LOG"))
		fprintf(stderr, "gre: %s\n", msg);
}

static void
op_want_write(void *arg, int on)
{
	struct fcall *c = arg;
	if (c->closed && on)
		abort();   /* asks to write a pty it declared dead */
	c->want_write = on;
}

static void
op_pty_closed(void *arg, int err)
{
	struct fcall *c = arg;
	(void)err;
	if (c->closed)
		abort();   /* reported twice */
	c->closed = 1;
}

static const struct gre_ops ops = { op_log, op_want_write, op_pty_closed };

/* ---- what the engine writes to pppd ---- */



static unsigned delivered;

static void
frame_to_pppd(void *arg, const uint8_t *frame, size_t len)
{
	struct fcall *c = arg;
	delivered++;
	if (!hset_has(&c->from_peer, hash(frame, len)))
		abort();   /* pppd got something its peer never sent */
}

/* pppd reads everything it is given: read, let the engine write its
 * backlog, read again, until nothing moves. */
static void
drain_pty(struct fcall *c)
{
	uint8_t buf[8192];
	if (c->freed || c->pty[1] < 0)
		return;
	for (int round = 0; round < 4096; round++) {
		size_t got = 0;
		for (;;) {
			ssize_t n = read(c->pty[1], buf, sizeof(buf));
			if (n <= 0)
				break;
			got += (size_t)n;
			hdlc_decode(&c->out, buf, (size_t)n, frame_to_pppd, c);
		}
		if (!c->want_write || c->closed)
			break;
		gre_call_pty_output(c->gc);
		if (got == 0 && round > 0)
			break;
	}
}

static void
frame_from_pppd(void *arg, const uint8_t *frame, size_t len)
{
	struct fcall *c = arg;
	hset_add(&c->from_pppd, hash(frame, len));
}

/* ---- input to the engine ---- */

static void
flush_input(void)
{
	if (F.queued) {
		gre_engine_input(F.e, F.now);
		F.queued = 0;
	}
}

static void
send_datagram(struct in_addr src, const uint8_t *gre, size_t len, int add_ip)
{
	uint8_t buf[70000];
	size_t n = 0;
	if (add_ip) {
		size_t total = 20 + len;
		uint8_t ip[20] = { 0x45, 0, (uint8_t)(total >> 8), (uint8_t)total,
			0, 1, 0, 0, 64, 47, 0, 0 };
		memcpy(ip + 12, &src, 4);
		ip[16] = 198; ip[17] = 18; ip[18] = 0; ip[19] = 1;
		memcpy(buf, ip, 20);
		n = 20;
	}
	if (len > sizeof(buf) - n)
		len = sizeof(buf) - n;
	memcpy(buf + n, gre, len);
	n += len;

	/* Register what the engine may legitimately hand to a pppd. */
	struct gre_packet pkt;
	if (gre_packet_parse_ip(buf, n, &pkt) == GRE_PARSE_OK && pkt.has_seq &&
	    n <= 60 + GRE_HDR_MAX + GRE_MAX_PAYLOAD)
		for (int i = 0; i < NCALLS; i++)
			if (!F.c[i].freed && pkt.call_id == F.c[i].local_id &&
			    pkt.src.s_addr == F.c[i].peer.s_addr)
				hset_add(&F.c[i].from_peer,
				    hash(pkt.payload, pkt.payload_len));

	if (send(F.sock[1], buf, n, MSG_DONTWAIT) < 0) {
		flush_input();
		if (send(F.sock[1], buf, n, MSG_DONTWAIT) < 0)
			return;   /* too big for a datagram socket: fine */
	}
	if (++F.queued >= 8)
		flush_input();
}

static struct in_addr
source(unsigned sel)
{
	struct in_addr a;
	switch (sel % 4) {
	case 0: return F.c[0].peer;
	case 1: return F.c[1].peer;
	case 2: a.s_addr = htonl(0xc6120009); return a;   /* a stranger */
	default: a.s_addr = htonl(0xc6120001); return a;  /* ourselves */
	}
}

static void
call_setup(int i, uint16_t local_id, uint16_t peer_id, uint32_t peer)
{
	struct fcall *c = &F.c[i];
	memset(c, 0, sizeof(*c));
	c->local_id = local_id;
	c->peer_id = peer_id;
	c->peer.s_addr = htonl(peer);
	hdlc_decoder_init(&c->out);
	hdlc_decoder_init(&c->in);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, c->pty) < 0)
		abort();
	int small = 4096;
	setsockopt(c->pty[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	setsockopt(c->pty[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	c->gc = gre_call_new(F.e, local_id, peer_id, c->peer, c->pty[0], c);
	if (c->gc == NULL)
		abort();
}

static void
call_teardown(struct fcall *c)
{
	if (c->freed)
		return;
	gre_call_free(c->gc);
	c->freed = 1;
	close(c->pty[0]);
	if (c->pty[1] >= 0)
		close(c->pty[1]);
	c->pty[1] = -1;
}

/* One engine for the whole run: creating and freeing it (65536 call slots)
 * cost far more than an input. Between inputs it holds no call, no timer,
 * nothing staged or queued; only its counters and log rate limiters carry
 * over, which change no verdict. */
static struct gre_engine *engine;
static int engine_sock[2];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (engine == NULL) {
		if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, engine_sock) < 0)
			abort();
		int big = 1 << 20;
		setsockopt(engine_sock[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
		engine = gre_engine_new_fd(engine_sock[0], &ops, NULL);
		if (engine == NULL)
			abort();
	}
	memset(&F, 0, sizeof(F));
	F.e = engine;
	F.sock[0] = engine_sock[0];
	F.sock[1] = engine_sock[1];
	{   /* nothing left over from the last input */
		uint8_t junk[64];
		while (recv(F.sock[0], junk, sizeof(junk), MSG_DONTWAIT) >= 0)
			;
	}
	F.now = 1000;
	call_setup(0, 0x4242, 0x1111, 0xc6120002);
	call_setup(1, 0x0001, 0xffff, 0xc6120003);

#define NEED(k) do { if (size < (k)) goto done; } while (0)
	while (size > 0) {
		uint8_t op = *data++;
		size--;
		struct fcall *c = &F.c[op & 1];
		switch (op >> 5) {
		case 0:   /* GRE datagram (we add the IPv4 header) */
		case 1: { /* whole IPv4 datagram as given */
			NEED(2);
			size_t len = (size_t)data[0] << 8 | data[1];
			data += 2;
			size -= 2;
			if (len > size)
				len = size;
			send_datagram(source(op >> 1), data, len, (op >> 5) == 0);
			data += len;
			size -= len;
			break;
		}
		case 2: { /* well-formed data packet for a call */
			NEED(4);
			if (c->freed)
				break;
			int16_t delta = (int16_t)(data[0] << 8 | data[1]);
			size_t plen = 1 + (size_t)data[2] * 8;
			uint8_t ackd = data[3];
			data += 4;
			size -= 4;
			c->rx_seq += (uint32_t)(int32_t)delta;
			uint8_t pkt[GRE_HDR_MAX + 2100];
			if (plen > 2048)
				plen = 2048;
			size_t h = gre_packet_build(pkt, c->local_id, (uint16_t)plen, 1,
			    c->rx_seq, (op >> 1) & 1, c->tx_max - ackd);
			for (size_t i = 0; i < plen; i++)
				pkt[h + i] = (uint8_t)(c->rx_seq * 7 + i + op);
			pkt[h] = 0xff;   /* looks like PPP */
			send_datagram((op >> 2) & 1 ? source(2) : c->peer, pkt, h + plen, 1);
			break;
		}
		case 3: { /* ack-only packet */
			NEED(1);
			if (c->freed)
				break;
			uint8_t pkt[GRE_HDR_MAX];
			size_t h = gre_packet_build(pkt, c->local_id, 0, 0, 0, 1,
			    c->tx_max - data[0] + ((op >> 1) & 3));
			data++;
			size--;
			send_datagram(c->peer, pkt, h, 1);
			break;
		}
		case 4: { /* pppd writes to the pty */
			NEED(1);
			size_t len = 1 + (size_t)data[0] * 8;
			data++;
			size--;
			if (len > size)
				len = size;
			if (c->freed || c->closed || c->pty[1] < 0) {
				data += len;
				size -= len;
				break;
			}
			uint8_t enc[HDLC_ENCODED_MAX(2048)];
			const uint8_t *p = data;
			size_t n = len;
			if (op & 2) {   /* as a well-formed frame */
				if (n > 2000)
					n = 2000;
				n = hdlc_encode(data, n, 0xffffffff, enc, sizeof(enc));
				p = enc;
			}
			ssize_t w = write(c->pty[1], p, n);
			if (w > 0)
				hdlc_decode(&c->in, p, (size_t)w, frame_from_pppd, c);
			gre_call_pty_input(c->gc, F.now);
			data += len;
			size -= len;
			break;
		}
		case 5:   /* time passes; due timers run */
			flush_input();
			F.now += (uint64_t)(op & 31) * 4 + 1;
			{
				uint64_t d = gre_engine_next_deadline(F.e);
				if (d && d <= F.now)
					gre_engine_timers(F.e, F.now);
			}
			break;
		case 6:   /* pppd reads its pty */
			flush_input();
			drain_pty(c);
			break;
		default:
			NEED(1);
			switch ((op >> 1) & 7) {
			case 0:
				NEED(8);
				if (!c->freed)
					gre_call_set_accm(c->gc,
					    (uint32_t)data[0] << 24 | data[1] << 16 | data[2] << 8 | data[3],
					    (uint32_t)data[4] << 24 | data[5] << 16 | data[6] << 8 | data[7]);
				data += 8;
				size -= 8;
				break;
			case 1:
				NEED(2);
				if (!c->freed)
					gre_call_set_window(c->gc, (uint16_t)(data[0] << 8 | data[1]));
				data += 2;
				size -= 2;
				break;
			case 2:   /* pppd exits: its side of the pty closes */
				if (!c->freed && c->pty[1] >= 0) {
					close(c->pty[1]);
					c->pty[1] = -1;
					gre_call_pty_input(c->gc, F.now);
					if (!c->closed)
						abort();   /* EOF not noticed */
				}
				break;
			case 3:
				flush_input();
				break;
			case 4:
				F.tx_fail = data[0] & 3;
				data++;
				size--;
				break;
			case 5:   /* the daemon frees the call (CCRQ, pppd reaped) */
				flush_input();
				call_teardown(c);
				break;
			case 6: { /* stats of a live call */
				struct gre_stats st;
				if (!c->freed)
					gre_call_stats(c->gc, &st);
				break;
			}
			default:
				if (!c->freed && gre_engine_has_call(F.e, c->local_id) != 1)
					abort();
				break;
			}
			break;
		}
	}
done:
	flush_input();
	F.tx_fail = 0;
	for (int i = 0; i < NCALLS; i++)
		drain_pty(&F.c[i]);
	F.now += 10000;
	gre_engine_timers(F.e, F.now);
	for (int i = 0; i < NCALLS; i++)
		drain_pty(&F.c[i]);
	if (getenv("FUZZ_STATS")) {
		struct gre_stats st;
		memset(&st, 0, sizeof(st));
		if (!F.c[0].freed)
			gre_call_stats(F.c[0].gc, &st);
		fprintf(stderr, "engine: %u frames to pppd, %u datagrams sent, "
		    "call 0: %llu delivered, %llu pty drops\n", delivered, F.sent,
		    (unsigned long long)st.rx_delivered,
		    (unsigned long long)st.pty_drops);
	}
	for (int i = 0; i < NCALLS; i++)
		call_teardown(&F.c[i]);
	delivered = 0;
	if (gre_engine_has_call(F.e, 0x4242) || gre_engine_has_call(F.e, 0x0001))
		abort();   /* a freed call is still registered */
	if (gre_engine_next_deadline(F.e) != 0)
		abort();   /* a freed call left a timer behind */
	F.e = NULL;    /* the interposed send functions go back to the kernel */
	return 0;
}
