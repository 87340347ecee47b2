/* The GRE engine: one raw socket for every call, batched I/O both ways.
 *
 * GRE -> pty: recvmmsg a batch, parse and check each datagram, run it through
 * the call's sequencer, HDLC-encode what is deliverable into a shared
 * staging buffer, and after the batch write each touched call's frames to
 * its pty with one writev. What the pty will not take goes to a bounded
 * per-call backlog (allocated only under back-pressure), and whole frames
 * are dropped when that is full: a slow pppd must never block the engine.
 *
 * pty -> GRE: read a big chunk, HDLC-decode every frame in it straight into
 * the transmit slot it leaves from (no copy after decoding), queue one GRE
 * packet per frame (piggybacking any pending ack) and send the queue with
 * sendmmsg. A send that would block drops the packets: PPP copes with
 * loss, not with a stalled server.
 *
 * Toward pppd only what pppd's LCP asked for is escaped (lcp.h); until
 * that is known, the RFC 1662 default (never Set-Link-Info's Send ACCM).
 *
 * Timers (delayed acks, reorder gaps) live in two lists sorted by deadline
 * (common/timer.h), so finding the next one is O(1) and only calls with a
 * timer are visited. */
#include "gre/gre.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

#include "gre/hdlc.h"
#include "gre/lcp.h"
#include "proto/packet.h"
#include "common/ratelimit.h"
#include "proto/seq.h"
#include "common/timer.h"

#define GRE_RX_BATCH      32
/* Batches per gre_engine_input, so ptys and the control plane get a turn
 * under a flood; level-triggered polling brings us back for the rest. */
#define GRE_RX_BUDGET     8
/* IPv4 header with options, GRE header, largest payload, and one more
 * octet so anything longer shows up as truncated. */
#define GRE_RX_BUFSZ      (60 + GRE_HDR_MAX + GRE_MAX_PAYLOAD + 1)
#define GRE_TX_BATCH      64
#define GRE_PTY_READ      (64 * 1024)
/* Reads per gre_call_pty_input: enough to empty a busy pty, bounded for
 * fairness between calls. */
#define GRE_PTY_READS     4
#define GRE_STAGE_BYTES   (256 * 1024)
#define GRE_STAGE_FRAMES  512
/* One socket carries every call, so its receive buffer is what rides out
 * the engine not being scheduled: 16 MiB is ~7000 full-size packets, over
 * 150 ms at 40k frames/s (the kernel counts ~2.3 KiB per such packet). */
#define GRE_SOCK_RCVBUF   (16 * 1024 * 1024)
#define GRE_SOCK_SNDBUF   (4 * 1024 * 1024)
#define GRE_CALL_IDS      65536
#define GRE_LOG_BURST     5
#define GRE_LOG_WINDOW_MS 1000
#define GRE_NO_FRAME      (-1)

/* Log reasons, each rate-limited on its own so a flood of one kind cannot
 * hide another. */
enum lr {
	LR_MALFORMED, LR_UNKNOWN_CALL, LR_WRONG_SOURCE, LR_SEQ, LR_ACK,
	LR_PTY_FULL, LR_PTY_FRAMING, LR_SEND, LR_RECV, LR__COUNT
};

struct stage_frame {
	uint32_t off, len;
	int32_t next;
};

struct gre_call {
	struct gre_engine *e;
	uint16_t local_id, peer_id;
	struct in_addr peer;
	struct sockaddr_in peer_sa;
	struct in_addr local;     /* our source address; INADDR_ANY: routing's */
	int pty_fd;
	void *arg;
	int dead, want_write, touched;
	struct lcp_snoop lcp;     /* the ACCM toward pppd */
	uint32_t sli_send_accm, recv_accm;   /* Set-Link-Info's, kept only */
	int pty_held;             /* frames wait until pppd has written */
	uint16_t peer_window, ack_threshold;
	uint32_t tx_seq;          /* next sequence number to send */
	uint32_t *tx_seq_mirror;  /* ... also stored there; NULL: not */
	uint32_t peer_ack;        /* highest ack from the peer */
	int peer_acked;
	int tx_any;               /* a data packet has been sent */
	uint32_t rx_unacked;      /* delivered since our last ack */
	int ack_waiting;          /* ack_since is set */
	uint64_t ack_since;       /* the first delivery the peer has no ack for */
	struct seq_rx rx;
	struct hdlc_decoder dec;
	int32_t chain_head, chain_tail;   /* frames in the stage */
	struct gre_call *touched_next;
	uint8_t *backlog;
	size_t bl_off, bl_len;
	struct timer ack_timer, gap_timer;     /* arg: the call */
	struct gre_stats st;
};

struct tx_slot {
	struct gre_call *call;
	int data;
	size_t payload;
	uint8_t buf[GRE_HDR_MAX + GRE_MAX_PAYLOAD];
};

struct gre_engine {
	int fd;
	struct gre_ops ops;
	void *arg;
	uint64_t now;
	int no_sendmmsg;
	struct gre_call *calls[GRE_CALL_IDS];
	/* Call IDs whose GRE the kernel's PPTP channel carries. */
	uint64_t kernel_ids[GRE_CALL_IDS / 64];
	struct gre_call *touched;
	struct timer_list ack_timers, gap_timers;
	struct seq_pool pool;     /* reorder buffers of every call */
	struct ratelimit rl[LR__COUNT];
	struct gre_engine_stats st;
	/* receive */
	struct mmsghdr rx_msg[GRE_RX_BATCH];
	struct iovec rx_iov[GRE_RX_BATCH];
	uint8_t rx_buf[GRE_RX_BATCH][GRE_RX_BUFSZ];
	/* staging toward the ptys */
	size_t stage_len;
	unsigned nframes;
	struct stage_frame frames[GRE_STAGE_FRAMES];
	uint8_t stage[GRE_STAGE_BYTES];
	/* send */
	unsigned ntx;
	struct mmsghdr tx_msg[GRE_TX_BATCH];
	struct iovec tx_iov[GRE_TX_BATCH];
	/* IP_PKTINFO per datagram: each call's source address */
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
	} tx_ctl[GRE_TX_BATCH];
	struct tx_slot tx[GRE_TX_BATCH];
	uint8_t rdbuf[GRE_PTY_READ];
};

/* ---- logging ---- */

static void elog(struct gre_engine *e, int prio, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void elog(struct gre_engine *e, int prio, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!e->ops.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	e->ops.log(e->arg, prio, msg);
}

/* At most GRE_LOG_BURST lines per reason per second; the count of the
 * suppressed ones is reported when the next window opens. */
static int rl_allow(struct gre_engine *e, enum lr why)
{
	uint32_t suppressed;
	int allow = ratelimit_allow(&e->rl[why], e->now, &suppressed);

	if (suppressed)
		elog(e, LOG_NOTICE, "%u similar messages suppressed", suppressed);
	return allow;
}

static void call_log(struct gre_call *c, enum lr why, int prio,
    const char *reason)
{
	char ip[INET_ADDRSTRLEN];

	/* LR__COUNT: a once-per-call event, never limited */
	if (!c->e->ops.log || (why != LR__COUNT && !rl_allow(c->e, why)))
		return;
	inet_ntop(AF_INET, &c->peer, ip, sizeof(ip));
	elog(c->e, prio, "call %u/%u %s: %s", c->local_id, c->peer_id, ip,
	    reason);
}

/* ---- pty side ---- */

static void want_write(struct gre_call *c, int on)
{
	if (c->want_write == on)
		return;
	c->want_write = on;
	if (c->e->ops.pty_want_write)
		c->e->ops.pty_want_write(c->arg, on);
}

static void pty_dead(struct gre_call *c, int err)
{
	if (c->dead)
		return;
	want_write(c, 0);
	c->dead = 1;
	timer_del(&c->ack_timer);
	timer_del(&c->gap_timer);
	free(c->backlog);
	c->backlog = NULL;
	c->bl_off = c->bl_len = 0;
	call_log(c, LR__COUNT, LOG_INFO, err ? strerror(err) : "pty closed");
	if (c->e->ops.pty_closed)
		c->e->ops.pty_closed(c->arg, err);
}

/* Queue `n` encoded bytes behind what the pty would not take. `must` is for
 * the tail of a frame already half written, which has to follow or the
 * frame is corrupt; whole frames that do not fit are dropped. */
static int backlog_put(struct gre_call *c, const uint8_t *p, size_t n, int must)
{
	if (!c->backlog && !(c->backlog = malloc(GRE_PTY_BACKLOG)))
		return -1;
	if (c->bl_off + c->bl_len + n > GRE_PTY_BACKLOG && c->bl_off) {
		memmove(c->backlog, c->backlog + c->bl_off, c->bl_len);
		c->bl_off = 0;
	}
	if (c->bl_len + n > GRE_PTY_BACKLOG && !must)
		return -1;
	memcpy(c->backlog + c->bl_off + c->bl_len, p, n);
	c->bl_len += n;
	return 0;
}

static void frame_dropped(struct gre_call *c)
{
	c->st.pty_drops++;
	call_log(c, LR_PTY_FULL, LOG_WARNING,
	    "pty not draining: frame dropped");
}

/* A call with a backlog is waiting for write readiness: new frames queue
 * behind it, encoded straight into it. */
static void backlog_frame(struct gre_call *c, const uint8_t *p, size_t len)
{
	uint8_t tmp[HDLC_ENCODED_MAX(GRE_MAX_PAYLOAD)];
	size_t n;

	/* full for the worst case: do not spend the FCS on a likely drop */
	if (c->bl_len + HDLC_ENCODED_MAX(len) > GRE_PTY_BACKLOG) {
		frame_dropped(c);
		return;
	}
	n = hdlc_encode(p, len, lcp_snoop_accm(&c->lcp), tmp, sizeof(tmp));
	if (backlog_put(c, tmp, n, 0) < 0)
		frame_dropped(c);
}

/* After a short write: keep what was not written, in order. */
static void chain_leftover(struct gre_engine *e, struct gre_call *c,
    int32_t head, size_t written)
{
	for (int32_t f = head; f != GRE_NO_FRAME; f = e->frames[f].next) {
		const uint8_t *p = e->stage + e->frames[f].off;
		size_t len = e->frames[f].len;

		if (written >= len) {
			written -= len;
			continue;
		}
		if (backlog_put(c, p + written, len - written, written > 0) < 0)
			frame_dropped(c);
		written = 0;
	}
	if (c->bl_len)
		want_write(c, 1);
}

/* Write the call's staged frames with one writev. */
static void chain_write(struct gre_engine *e, struct gre_call *c)
{
	struct iovec iov[GRE_STAGE_FRAMES];
	int n = 0;
	int32_t head = c->chain_head;
	ssize_t w;

	for (int32_t f = head; f != GRE_NO_FRAME; f = e->frames[f].next) {
		uint8_t *p = e->stage + e->frames[f].off;

		/* one call alone fills the stage contiguously: one iovec */
		if (n && (uint8_t *)iov[n - 1].iov_base + iov[n - 1].iov_len == p)
			iov[n - 1].iov_len += e->frames[f].len;
		else
			iov[n++] = (struct iovec){ p, e->frames[f].len };
	}
	c->chain_head = c->chain_tail = GRE_NO_FRAME;
	if (!n || c->dead)
		return;
	e->st.pty_writes++;
	do
		w = writev(c->pty_fd, iov, n);
	while (w < 0 && errno == EINTR);
	if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
		pty_dead(c, errno);
		return;
	}
	chain_leftover(e, c, head, w < 0 ? 0 : (size_t)w);
}

static void stage_flush(struct gre_engine *e)
{
	for (struct gre_call *c = e->touched; c; c = c->touched_next)
		if (c->chain_head != GRE_NO_FRAME)
			chain_write(e, c);
	e->stage_len = 0;
	e->nframes = 0;
}

static void call_touch(struct gre_call *c)
{
	if (c->touched)
		return;
	c->touched = 1;
	c->touched_next = c->e->touched;
	c->e->touched = c;
}

/* A frame from the wire, in order: on its way to pppd. */
static void call_deliver(struct gre_call *c, const uint8_t *p, size_t len)
{
	struct gre_engine *e = c->e;
	struct stage_frame *f;
	int32_t idx;

	c->st.rx_delivered++;
	c->rx_unacked++;
	if (c->dead)
		return;
	lcp_snoop_to_pppd(&c->lcp, p, len);
	if (c->bl_len || c->pty_held) {
		backlog_frame(c, p, len);
		return;
	}
	if (e->stage_len + HDLC_ENCODED_MAX(len) > GRE_STAGE_BYTES ||
	    e->nframes == GRE_STAGE_FRAMES)
		stage_flush(e);
	if (c->bl_len) {        /* that flush left this call a backlog */
		backlog_frame(c, p, len);
		return;
	}
	idx = (int32_t)e->nframes++;
	f = &e->frames[idx];
	f->off = (uint32_t)e->stage_len;
	f->len = (uint32_t)hdlc_encode(p, len, lcp_snoop_accm(&c->lcp),
	    e->stage + e->stage_len, HDLC_ENCODED_MAX(len));
	f->next = GRE_NO_FRAME;
	e->stage_len += f->len;
	if (c->chain_head == GRE_NO_FRAME)
		c->chain_head = idx;
	else
		e->frames[c->chain_tail].next = idx;
	c->chain_tail = idx;
}

/* ---- sending ---- */

static void tx_count(struct gre_engine *e, struct tx_slot *s, int ok)
{
	struct gre_call *c = s->call;

	if (!ok) {
		c->st.tx_drops++;
		return;
	}
	e->st.tx_datagrams++;
	if (s->data) {
		c->st.tx_packets++;
		c->st.tx_bytes += s->payload;
	} else {
		c->st.tx_acks_only++;
	}
}

static int tx_transient(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS;
}

/* One datagram by sendto: the fallback when sendmmsg fails on it. */
static int tx_one(struct gre_engine *e, unsigned i)
{
	struct msghdr *h = &e->tx_msg[i].msg_hdr;
	ssize_t r;

	do
		r = sendmsg(e->fd, h, MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	e->st.tx_fallbacks++;
	return r < 0 ? errno : 0;
}

/* Send the queue. Nothing here may block or tear a call down: a full
 * socket buffer drops the rest of the queue, a datagram the kernel refuses
 * (no route, ICMP-reported trouble, netfilter) drops that one alone. */
static void tx_flush(struct gre_engine *e)
{
	unsigned i = 0;

	while (i < e->ntx) {
		int r = -1, err;

		if (!e->no_sendmmsg) {
			e->st.tx_batches++;
			r = sendmmsg(e->fd, e->tx_msg + i, e->ntx - i, MSG_DONTWAIT);
			if (r > 0) {
				for (int k = 0; k < r; k++)
					tx_count(e, &e->tx[i + k], 1);
				i += (unsigned)r;
				continue;
			}
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 && errno == ENOSYS)
				e->no_sendmmsg = 1;
		}
		err = (r < 0 && tx_transient(errno)) ? errno : tx_one(e, i);
		if (!err) {
			tx_count(e, &e->tx[i++], 1);
			continue;
		}
		e->st.tx_errors++;
		call_log(e->tx[i].call, LR_SEND, LOG_WARNING, strerror(err));
		if (!tx_transient(err)) {
			tx_count(e, &e->tx[i++], 0);
			continue;
		}
		while (i < e->ntx)
			tx_count(e, &e->tx[i++], 0);
	}
	e->ntx = 0;
}

/* The socket is bound to no address: a call's GRE leaves from the address
 * its client connected to, which is the one the client will accept it
 * from on a multi-homed server. */
static void tx_source(struct gre_engine *e, unsigned i, struct in_addr src)
{
	struct msghdr *h = &e->tx_msg[i].msg_hdr;
	struct cmsghdr *cm;
	struct in_pktinfo pi = { .ipi_spec_dst = src };

	if (src.s_addr == INADDR_ANY) {
		h->msg_control = NULL;
		h->msg_controllen = 0;
		return;
	}
	h->msg_control = e->tx_ctl[i].buf;
	h->msg_controllen = sizeof(e->tx_ctl[i].buf);
	cm = CMSG_FIRSTHDR(h);
	cm->cmsg_level = IPPROTO_IP;
	cm->cmsg_type = IP_PKTINFO;
	cm->cmsg_len = CMSG_LEN(sizeof(pi));
	memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
}

static struct tx_slot *tx_slot(struct gre_engine *e, struct gre_call *c,
    size_t len, int data)
{
	struct tx_slot *s;

	if (e->ntx == GRE_TX_BATCH)
		tx_flush(e);
	s = &e->tx[e->ntx];
	s->call = c;
	s->data = data;
	s->payload = len;
	e->tx_msg[e->ntx].msg_hdr.msg_name = &c->peer_sa;
	tx_source(e, e->ntx, c->local);
	return s;
}

static void tx_commit(struct gre_engine *e, uint8_t *base, size_t len)
{
	e->tx_iov[e->ntx].iov_base = base;
	e->tx_iov[e->ntx].iov_len = len;
	e->ntx++;
}

/* Where the next data packet's payload goes: the decoder writes frames
 * there, and the header goes just before it (GRE_HDR_MAX is room for the
 * longest). The queue is sent first if it is full, so the slot is free. */
static uint8_t *tx_payload_next(struct gre_engine *e)
{
	if (e->ntx == GRE_TX_BATCH)
		tx_flush(e);
	return e->tx[e->ntx].buf + GRE_HDR_MAX;
}

static void ack_sent(struct gre_call *c)
{
	c->rx.ack_pending = 0;
	c->rx_unacked = 0;
	c->ack_waiting = 0;
	timer_del(&c->ack_timer);
}

static void call_send_ack(struct gre_call *c)
{
	struct tx_slot *s = tx_slot(c->e, c, 0, 0);
	size_t h = gre_packet_build(s->buf, c->peer_id, 0, 0, 0, 1,
	    seq_rx_ack(&c->rx));

	ack_sent(c);
	tx_commit(c->e, s->buf, h);
}

/* A delivery the peer has no ack for: the ack goes now when half our
 * window waits for it or it has waited GRE_ACK_DELAY_MS (with the batch
 * this packet arrived in: no wakeup of its own while traffic flows), else
 * the timer is pushed to GRE_ACK_DELAY_MS after this packet, so only a
 * stream that stopped wakes us for its ack. Every ack timer has the same
 * delay from a clock that never goes back: the list's tail, O(1). */
static void call_ack_due(struct gre_call *c)
{
	struct gre_engine *e = c->e;

	if (!c->ack_waiting) {
		c->ack_waiting = 1;
		c->ack_since = e->now;
	}
	if (c->rx_unacked >= c->ack_threshold ||
	    e->now - c->ack_since >= GRE_ACK_DELAY_MS)
		call_send_ack(c);
	else
		timer_list_add(&e->ack_timers, &c->ack_timer,
		    e->now + GRE_ACK_DELAY_MS);
}

/* Data packets sent and not acknowledged by the peer (sequence numbers
 * start at 0, so before any ack every one sent counts). */
static uint32_t tx_unacked(const struct gre_call *c)
{
	return c->peer_acked ? c->tx_seq - 1 - c->peer_ack : c->tx_seq;
}

/* A frame pppd wrote: one GRE data packet, with the ack if one is due.
 * The decoder put the frame in the next transmit slot already (unless it
 * was started before this read: then it is copied there). */
static void pty_frame(void *arg, const uint8_t *frame, size_t len)
{
	struct gre_call *c = arg;
	struct gre_engine *e = c->e;
	struct tx_slot *s;
	uint8_t hdr[GRE_HDR_MAX], *payload;
	int ack = c->rx.ack_pending;
	size_t h;

	if (len > GRE_MAX_PAYLOAD)
		return;         /* cannot happen: HDLC_MAX_FRAME is no larger */
	lcp_snoop_from_pppd(&c->lcp, frame, len);
	s = tx_slot(e, c, len, 1);
	payload = s->buf + GRE_HDR_MAX;
	if (frame != payload)
		memcpy(payload, frame, len);
	if (tx_unacked(c) >= c->peer_window)
		c->st.tx_over_window++;
	h = gre_packet_build(hdr, c->peer_id, (uint16_t)len, 1, c->tx_seq++,
	    ack, seq_rx_ack(&c->rx));
	if (c->tx_seq_mirror != NULL)
		*c->tx_seq_mirror = c->tx_seq;
	memcpy(payload - h, hdr, h);
	if (ack)
		ack_sent(c);
	c->tx_any = 1;
	tx_commit(e, payload - h, h + len);
	hdlc_decoder_set_output(&c->dec, tx_payload_next(e));
}

/* ---- receiving ---- */

/* The peer's ack; what it says about our stream is also the sequencer's
 * test of a resync after quiet (seq.h): only the real peer knows which of
 * our numbers it may acknowledge. */
static enum seq_ack call_ack_in(struct gre_call *c, uint32_t ack)
{
	const char *reason = NULL;

	if (!c->tx_any)
		reason = "ack before any data sent";
	else if (!seq_before(ack, c->tx_seq))
		reason = "ack for data not sent yet";
	else if (c->peer_acked && seq_before(ack, c->peer_ack))
		return SEQ_ACK_WRONG;   /* old, reordered: harmless, vouches not */
	if (reason) {
		c->st.rx_bad_acks++;
		call_log(c, LR_ACK, LOG_DEBUG, reason);
		return SEQ_ACK_WRONG;
	}
	if (!c->peer_acked || ack != c->peer_ack)
		c->st.rx_acks++;
	c->peer_ack = ack;
	c->peer_acked = 1;
	return SEQ_ACK_AGREES;
}

static void call_drain(struct gre_call *c)
{
	const struct seq_slot *s;

	while ((s = seq_rx_next(&c->rx)) != NULL)
		call_deliver(c, s->data, s->len);
}

static void call_data_in(struct gre_call *c, const struct gre_packet *pkt,
    uint64_t now)
{
	enum seq_verdict v;

	c->st.rx_packets++;
	c->st.rx_bytes += pkt->payload_len;
	v = seq_rx_input(&c->rx, pkt->seq, pkt->payload, pkt->payload_len, now);
	if (v == SEQ_DELIVER)
		call_deliver(c, pkt->payload, pkt->payload_len);
	call_drain(c);
	if (v == SEQ_TOO_FAR)
		call_log(c, LR_SEQ, LOG_NOTICE,
		    "sequence number far off: dropped until confirmed "
		    "with the stream quiet");
	else if (v == SEQ_NO_ROOM)
		call_log(c, LR_SEQ, LOG_NOTICE, "cannot hold packet for reordering");
}

static const char *ip_str(struct in_addr a, char *buf)
{
	return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

/* One datagram from the raw socket. Validated here, at the entry point;
 * every drop leaves through the single exit at the bottom. */
static void rx_datagram(struct gre_engine *e, const uint8_t *p, size_t len,
    int flags, uint64_t now)
{
	struct gre_packet pkt = { 0 };
	struct gre_call *c = NULL;
	const char *reason;
	enum gre_parse_result r;
	enum lr why = LR_MALFORMED;
	int prio = LOG_DEBUG;
	char ip[INET_ADDRSTRLEN];

	e->st.rx_datagrams++;
	if (flags & MSG_TRUNC) {
		reason = "datagram too long";
		goto drop;
	}
	if ((r = gre_packet_parse_ip(p, len, &pkt)) != GRE_PARSE_OK) {
		reason = gre_packet_strerror(r);
		goto drop;
	}
	c = e->calls[pkt.call_id];
	if (!c && (e->kernel_ids[pkt.call_id / 64] >> (pkt.call_id % 64) & 1)) {
		e->st.rx_kernel_call++;   /* the kernel's copy is the one used */
		return;
	}
	if (!c) {
		reason = "no such call";
		why = LR_UNKNOWN_CALL;
		goto drop;
	}
	if (pkt.src.s_addr != c->peer.s_addr) {
		c->st.rx_wrong_source++;
		reason = "packet from a wrong source address";
		why = LR_WRONG_SOURCE;
		prio = LOG_NOTICE;
		goto drop;
	}
	if (c->dead)
		return;
	call_touch(c);
	seq_rx_ack_verdict(&c->rx,
	    pkt.has_ack ? call_ack_in(c, pkt.ack) : SEQ_ACK_NONE);
	if (pkt.has_seq)
		call_data_in(c, &pkt, now);
	return;

drop:
	if (!c) {
		if (why == LR_MALFORMED)
			e->st.rx_malformed++;
		else
			e->st.rx_unknown_call++;
	}
	if (!e->ops.log || !rl_allow(e, why))
		return;
	if (pkt.src.s_addr)
		elog(e, prio, "from %s call %u: %s", ip_str(pkt.src, ip),
		    pkt.call_id, reason);
	else
		elog(e, prio, "%s", reason);
}

/* After a batch of input or timers: write the ptys, then settle each
 * touched call's acks and gap timer, then send what was queued. */
static void batch_end(struct gre_engine *e)
{
	struct gre_call *c, *next;

	stage_flush(e);
	for (c = e->touched; c; c = next) {
		next = c->touched_next;
		c->touched = 0;
		c->touched_next = NULL;
		if (c->dead)
			continue;
		/* Do not wait for write readiness alone: a pty's wakeup can
		 * come late (or, with some line disciplines, not at all), and
		 * while traffic flows a try per batch is cheap. */
		if (c->bl_len && c->want_write)
			gre_call_pty_output(c);
		if (c->rx.ack_pending)
			call_ack_due(c);
		if (c->rx.held)
			timer_list_add(&e->gap_timers, &c->gap_timer,
			    seq_rx_deadline(&c->rx));
		else
			timer_del(&c->gap_timer);
	}
	e->touched = NULL;
	tx_flush(e);
}

void gre_engine_input(struct gre_engine *e, uint64_t now_ms)
{
	e->now = now_ms;
	for (int b = 0; b < GRE_RX_BUDGET; b++) {
		int n = recvmmsg(e->fd, e->rx_msg, GRE_RX_BATCH, MSG_DONTWAIT, NULL);

		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR) {
				e->st.rx_errors++;
				if (rl_allow(e, LR_RECV))
					elog(e, LOG_WARNING, "recvmmsg: %s",
					    strerror(errno));
			}
			break;
		}
		e->st.rx_batches++;
		for (int i = 0; i < n; i++)
			rx_datagram(e, e->rx_buf[i], e->rx_msg[i].msg_len,
			    e->rx_msg[i].msg_hdr.msg_flags, now_ms);
		if (n < GRE_RX_BATCH)
			break;
	}
	batch_end(e);
}

/* ---- timers ---- */

void gre_engine_timers(struct gre_engine *e, uint64_t now_ms)
{
	struct timer *t;

	e->now = now_ms;
	while ((t = timer_list_pop_due(&e->ack_timers, now_ms)) != NULL) {
		struct gre_call *c = t->arg;

		if (!c->dead && c->rx.ack_pending)
			call_send_ack(c);
	}
	while ((t = timer_list_pop_due(&e->gap_timers, now_ms)) != NULL) {
		struct gre_call *c = t->arg;

		while (seq_rx_expire(&c->rx, now_ms))
			call_drain(c);
		call_touch(c);
	}
	batch_end(e);
}

uint64_t gre_engine_next_deadline(const struct gre_engine *e)
{
	const struct timer *a = timer_list_first(&e->ack_timers);
	const struct timer *g = timer_list_first(&e->gap_timers);

	if (a == NULL)
		return g != NULL ? g->at : 0;
	return g != NULL && g->at < a->at ? g->at : a->at;
}

/* ---- pty input ---- */

/* A frame pppd sent that does not decode is a fault: notice, rate-limited.
 * What it wrote before its first flag is not (hdlc.h, synced): pppd logs
 * to stdout, our pty, until it has taken the line, unless its options say
 * nologfd; said at debug level, once, when the first flag ends it. */
static void framing_log(struct gre_call *c, const struct hdlc_decoder *old)
{
	const struct hdlc_decoder *d = &c->dec;

	if (d->bad_fcs != old->bad_fcs || d->too_long != old->too_long ||
	    d->runts != old->runts)
		call_log(c, LR_PTY_FRAMING, LOG_NOTICE,
		    "bad frame from pppd dropped");
	if (d->synced && !old->synced && d->preamble != 0) {
		char msg[128];

		snprintf(msg, sizeof(msg), "%llu octets before pppd's first "
		    "frame dropped (its log lines: nologfd keeps them off the "
		    "line)", (unsigned long long)d->preamble);
		call_log(c, LR__COUNT, LOG_DEBUG, msg);
	}
}

void gre_call_pty_input(struct gre_call *c, uint64_t now_ms)
{
	struct gre_engine *e = c->e;
	struct hdlc_decoder before;

	e->now = now_ms;
	hdlc_decoder_set_output(&c->dec, tx_payload_next(e));
	for (int i = 0; i < GRE_PTY_READS && !c->dead; i++) {
		ssize_t n = read(c->pty_fd, e->rdbuf, sizeof(e->rdbuf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			/* EIO is how a pty master sees the slave closed */
			pty_dead(c, n < 0 ? errno : 0);
			break;
		}
		e->st.pty_reads++;
		if (c->pty_held)
			gre_call_release_pty(c);
		before.bad_fcs = c->dec.bad_fcs;
		before.too_long = c->dec.too_long;
		before.runts = c->dec.runts;
		before.synced = c->dec.synced;
		hdlc_decode(&c->dec, e->rdbuf, (size_t)n, pty_frame, c);
		framing_log(c, &before);
		if ((size_t)n < sizeof(e->rdbuf))
			break;
	}
	/* a frame still open goes home: the slots are reused before the
	 * rest of it can be read */
	hdlc_decoder_set_output(&c->dec, NULL);
	tx_flush(e);
}

void gre_call_pty_output(struct gre_call *c)
{
	ssize_t w;

	if (c->dead || !c->bl_len || c->pty_held) {
		want_write(c, 0);
		return;
	}
	do
		w = write(c->pty_fd, c->backlog + c->bl_off, c->bl_len);
	while (w < 0 && errno == EINTR);
	if (w < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			pty_dead(c, errno);
		return;
	}
	c->e->st.pty_writes++;
	c->bl_off += (size_t)w;
	c->bl_len -= (size_t)w;
	if (c->bl_len)
		return;
	/* drained: give the memory back, back-pressure is the exception */
	free(c->backlog);
	c->backlog = NULL;
	c->bl_off = 0;
	want_write(c, 0);
}

void gre_call_hold_pty(struct gre_call *c)
{
	c->pty_held = 1;
}

void gre_call_release_pty(struct gre_call *c)
{
	if (!c->pty_held)
		return;
	c->pty_held = 0;
	if (c->bl_len)
		gre_call_pty_output(c);
	if (c->bl_len)
		want_write(c, 1);
}

/* ---- engine and calls ---- */

static void rx_setup(struct gre_engine *e)
{
	for (int i = 0; i < GRE_RX_BATCH; i++) {
		e->rx_iov[i] = (struct iovec){ e->rx_buf[i], GRE_RX_BUFSZ };
		e->rx_msg[i].msg_hdr.msg_iov = &e->rx_iov[i];
		e->rx_msg[i].msg_hdr.msg_iovlen = 1;
	}
	for (int i = 0; i < GRE_TX_BATCH; i++) {
		e->tx_iov[i].iov_base = e->tx[i].buf;
		e->tx_msg[i].msg_hdr.msg_iov = &e->tx_iov[i];
		e->tx_msg[i].msg_hdr.msg_iovlen = 1;
		e->tx_msg[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_in);
	}
}

struct gre_engine *gre_engine_new_fd(int fd, const struct gre_ops *ops, void *arg)
{
	struct gre_engine *e;
	int fl;

	if (fd < 0 || (fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		if (fd >= 0)
			close(fd);
		errno = EINVAL;
		return NULL;
	}
	if (!(e = calloc(1, sizeof(*e)))) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	e->fd = fd;
	if (ops)
		e->ops = *ops;
	e->arg = arg;
	timer_list_init(&e->ack_timers);
	timer_list_init(&e->gap_timers);
	seq_pool_init(&e->pool, SEQ_POOL_CAP_DFLT);
	for (int i = 0; i < LR__COUNT; i++)
		ratelimit_init(&e->rl[i], GRE_LOG_BURST, GRE_LOG_WINDOW_MS);
	rx_setup(e);
	return e;
}

/* Big socket buffers absorb bursts between two event-loop turns; as root
 * the FORCE variants pass the sysctl ceilings. */
static void sock_buffers(int fd)
{
	int rcv = GRE_SOCK_RCVBUF, snd = GRE_SOCK_SNDBUF;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &snd, sizeof(snd)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd));
}

struct gre_engine *gre_engine_new(struct in_addr bind_addr,
    const struct gre_ops *ops, void *arg)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = bind_addr };
	int fd = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    IPPROTO_GRE);
	int err;

	if (fd < 0)
		return NULL;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	sock_buffers(fd);
	return gre_engine_new_fd(fd, ops, arg);
}

void gre_engine_free(struct gre_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < GRE_CALL_IDS; i++)
		if (e->calls[i])
			gre_call_free(e->calls[i]);
	seq_pool_drain(&e->pool);
	close(e->fd);
	free(e);
}

void gre_engine_ignore_call(struct gre_engine *e, uint16_t local_id, int on)
{
	uint64_t bit = UINT64_C(1) << (local_id % 64);

	if (on)
		e->kernel_ids[local_id / 64] |= bit;
	else
		e->kernel_ids[local_id / 64] &= ~bit;
}

int gre_engine_fd(const struct gre_engine *e)
{
	return e->fd;
}

int gre_engine_receive_none(struct gre_engine *e)
{
	struct sock_filter none[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
	struct sock_fprog prog = { .len = 1, .filter = none };

	return setsockopt(e->fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
	    sizeof(prog));
}

int gre_engine_has_call(const struct gre_engine *e, uint16_t local_id)
{
	return e->calls[local_id] != NULL;
}

void gre_engine_stats(const struct gre_engine *e, struct gre_engine_stats *st)
{
	*st = e->st;
}

struct gre_call *gre_call_new(struct gre_engine *e, uint16_t local_id,
    uint16_t peer_id, struct in_addr peer, int pty_fd, void *call_arg)
{
	struct gre_call *c;
	int fl;

	if (!e || pty_fd < 0 || (fl = fcntl(pty_fd, F_GETFL)) < 0 ||
	    fcntl(pty_fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		errno = EINVAL;
		return NULL;
	}
	if (e->calls[local_id]) {
		errno = EEXIST;
		return NULL;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		errno = ENOMEM;
		return NULL;
	}
	c->e = e;
	c->local_id = local_id;
	c->peer_id = peer_id;
	c->peer = peer;
	c->peer_sa = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr = peer };
	c->pty_fd = pty_fd;
	c->arg = call_arg;
	c->sli_send_accm = c->recv_accm = LCP_ACCM_DEFAULT;
	lcp_snoop_init(&c->lcp);
	c->peer_window = GRE_RECV_WINDOW_DFLT;
	c->ack_threshold = GRE_RECV_WINDOW_DFLT / 2;
	c->chain_head = c->chain_tail = GRE_NO_FRAME;
	c->ack_timer.arg = c->gap_timer.arg = c;
	seq_rx_init(&c->rx);
	seq_rx_set_pool(&c->rx, &e->pool);
	seq_rx_gate_on_acks(&c->rx);
	hdlc_decoder_init(&c->dec);
	e->calls[local_id] = c;
	e->st.calls++;
	return c;
}

void gre_call_free(struct gre_call *c)
{
	struct gre_engine *e;

	if (!c)
		return;
	e = c->e;
	/* defensive: a free from inside a callback during a batch */
	if (c->touched) {
		struct gre_call **pp = &e->touched;

		while (*pp != c)
			pp = &(*pp)->touched_next;
		*pp = c->touched_next;
		c->chain_head = GRE_NO_FRAME;
	}
	for (unsigned i = 0; i < e->ntx; i++)
		if (e->tx[i].call == c)
			tx_flush(e);    /* flush before the call's address goes */
	timer_del(&c->ack_timer);
	timer_del(&c->gap_timer);
	e->calls[c->local_id] = NULL;
	e->st.calls--;
	seq_rx_free(&c->rx);
	free(c->backlog);
	free(c);
}

void gre_call_set_accm(struct gre_call *c, uint32_t send_accm, uint32_t recv_accm)
{
	c->sli_send_accm = send_accm;
	c->recv_accm = recv_accm;
}

void gre_call_set_local(struct gre_call *c, struct in_addr local)
{
	c->local = local;
}

void gre_call_set_window(struct gre_call *c, uint16_t peer_window)
{
	c->peer_window = peer_window;
}

void gre_call_mirror_seq(struct gre_call *c, uint32_t *slot)
{
	c->tx_seq_mirror = slot;
	if (slot != NULL)
		*slot = c->tx_seq;   /* right from the start */
}

void gre_call_resume(struct gre_call *c, uint32_t next)
{
	c->tx_seq = next;
	if (next == 0)
		return;   /* nothing was sent: a fresh start */
	c->tx_any = 1;
	c->peer_ack = next - 1;
	c->peer_acked = 1;
}

void gre_call_set_recv_window(struct gre_call *c, uint16_t our_window)
{
	c->ack_threshold = our_window > 1 ? our_window / 2 : 1;
}

void gre_call_stats(const struct gre_call *c, struct gre_stats *st)
{
	*st = c->st;
	st->rx_duplicates = c->rx.duplicates;
	st->rx_stale = c->rx.stale;
	st->rx_too_far = c->rx.too_far;
	st->rx_reordered = c->rx.reordered;
	st->rx_lost = c->rx.lost;
	st->rx_resyncs = c->rx.resyncs;
	st->rx_no_room = c->rx.no_room;
	st->rx_bad_fcs = c->dec.bad_fcs;
	st->rx_runts = c->dec.runts;
	st->rx_too_long = c->dec.too_long;
	st->rx_aborts = c->dec.aborts;
	st->tx_unacked = tx_unacked(c);
	st->pty_backlog = (uint32_t)c->bl_len;
}
