/* The shared raw GRE socket and per-call sequencing (see grelink.h). */
#include "client/grelink.h"

#include "proto/packet.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define GRELINK_BATCH   32
/* An IPv4 header of up to 60 bytes, then GRE. */
#define GRELINK_BUFSZ   (60 + GRE_HDR_MAX + GRE_MAX_PAYLOAD)
#define CALL_IDS        65536

struct grelink {
	int fd;
	uint64_t foreign;
	struct grecall *call[CALL_IDS];   /* by our Call ID */
	struct mmsghdr msg[GRELINK_BATCH];
	struct iovec iov[GRELINK_BATCH];
	uint8_t buf[GRELINK_BATCH][GRELINK_BUFSZ];
};

struct grelink *grelink_open(void)
{
	struct grelink *l = calloc(1, sizeof(*l));
	int one = 1;

	if (!l)
		return NULL;
	l->fd = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    IPPROTO_GRE);
	if (l->fd < 0) {
		free(l);
		return NULL;
	}
	/* Large buffers: 1000 sessions' bursts land on this one socket. */
	int sz = 8 << 20;
	(void)setsockopt(l->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	(void)setsockopt(l->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	(void)setsockopt(l->fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	for (unsigned i = 0; i < GRELINK_BATCH; i++) {
		l->iov[i].iov_base = l->buf[i];
		l->iov[i].iov_len = GRELINK_BUFSZ;
		l->msg[i].msg_hdr.msg_iov = &l->iov[i];
		l->msg[i].msg_hdr.msg_iovlen = 1;
	}
	return l;
}

void grelink_close(struct grelink *l)
{
	if (!l)
		return;
	close(l->fd);
	free(l);
}

int grelink_fd(const struct grelink *l)
{
	return l->fd;
}

uint64_t grelink_foreign(const struct grelink *l)
{
	return l->foreign;
}

uint16_t grelink_pick_id(struct grelink *l)
{
	for (;;) {
		uint16_t id;
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			id = (uint16_t)random();
		if (id != 0 && l->call[id] == NULL)
			return id;
	}
}

void grecall_init(struct grecall *c, struct grelink *l, uint16_t our_id,
    struct in_addr local, const struct grecall_ops *ops, void *arg,
    uint32_t first_seq)
{
	memset(c, 0, sizeof(*c));
	c->link = l;
	c->our_id = our_id;
	c->local = local;
	c->ops = ops;
	c->arg = arg;
	c->tx_seq = first_seq;
	seq_rx_init(&c->rx);
	/* reserve the id from the start, so no other session picks it */
	if (l->call[our_id] == NULL)
		l->call[our_id] = c;
}

int grecall_attach(struct grecall *c, struct in_addr peer, uint16_t peer_id)
{
	if (c->link->call[c->our_id] != c)
		return -1;
	c->peer = peer;
	c->peer_id = peer_id;
	c->attached = 1;
	return 0;
}

void grecall_detach(struct grecall *c)
{
	if (c->link && c->link->call[c->our_id] == c)
		c->link->call[c->our_id] = NULL;
	c->attached = 0;
}

void grecall_free(struct grecall *c)
{
	grecall_detach(c);
	seq_rx_free(&c->rx);
}

static int send_packet(struct grecall *c, const uint8_t *frame, size_t len,
    int data)
{
	uint8_t hdr[GRE_HDR_MAX];
	int ack = c->rx.started && (c->rx.ack_pending || !data);
	size_t hl = gre_packet_build(hdr, c->peer_id, (uint16_t)len, data,
	    c->tx_seq, ack, seq_rx_ack(&c->rx));
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr = c->peer };
	struct iovec iov[2] = { { hdr, hl }, { (void *)frame, len } };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
	} ctl;
	struct msghdr h = { .msg_name = &to, .msg_namelen = sizeof(to),
		.msg_iov = iov, .msg_iovlen = data ? 2 : 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&h);
	struct in_pktinfo pi = { .ipi_spec_dst = c->local };

	cm->cmsg_level = IPPROTO_IP;
	cm->cmsg_type = IP_PKTINFO;
	cm->cmsg_len = CMSG_LEN(sizeof(pi));
	memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
	if (sendmsg(c->link->fd, &h, MSG_DONTWAIT) < 0) {
		c->tx_errors++;
		return -1;
	}
	if (data)
		c->tx_seq++;
	if (ack) {
		c->rx.ack_pending = 0;
		c->ack_at = 0;
	}
	if (data)
		c->tx_packets++;
	else
		c->tx_acks++;
	return 0;
}

int grecall_send(struct grecall *c, const uint8_t *frame, size_t len,
    uint64_t now)
{
	(void)now;
	if (!c->attached || len == 0 || len > GRE_MAX_PAYLOAD)
		return -1;
	return send_packet(c, frame, len, 1);
}

static void drain(struct grecall *c, uint64_t now)
{
	const struct seq_slot *s;

	while ((s = seq_rx_next(&c->rx)) != NULL && c->attached)
		c->ops->deliver(c->arg, s->data, s->len, now);
}

static void call_input(struct grecall *c, const struct gre_packet *p,
    uint64_t now)
{
	int had_ack = c->rx.ack_pending;

	c->rx_packets++;
	/* No send window: the peer's acks are read and not waited for. */
	if (!p->has_seq)
		return;
	if (seq_rx_input(&c->rx, p->seq, p->payload, p->payload_len, now) ==
	    SEQ_DELIVER)
		c->ops->deliver(c->arg, p->payload, p->payload_len, now);
	drain(c, now);
	if (c->attached && c->rx.ack_pending && !had_ack && c->ack_at == 0) {
		c->ack_at = now + GRECALL_ACK_DELAY_MS;
		c->ops->rearm(c->arg, c->ack_at);
	}
	if (c->attached && seq_rx_deadline(&c->rx))
		c->ops->rearm(c->arg, seq_rx_deadline(&c->rx));
}

uint64_t grelink_input(struct grelink *l, uint64_t now)
{
	uint64_t bad = 0;

	for (unsigned round = 0; round < 8; round++) {
		int n = recvmmsg(l->fd, l->msg, GRELINK_BATCH, MSG_DONTWAIT,
		    NULL);
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++) {
			struct gre_packet p;
			struct grecall *c;
			if (gre_packet_parse_ip(l->buf[i], l->msg[i].msg_len,
			    &p) != GRE_PARSE_OK) {
				bad++;
				continue;
			}
			c = l->call[p.call_id];
			if (!c || !c->attached ||
			    c->peer.s_addr != p.src.s_addr) {
				bad++;
				continue;
			}
			call_input(c, &p, now);
		}
		if (n < GRELINK_BATCH)
			break;
	}
	l->foreign += bad;
	return bad;
}

uint64_t grecall_timer(struct grecall *c, uint64_t now)
{
	uint64_t next;

	if (!c->attached)
		return 0;
	while (seq_rx_expire(&c->rx, now))
		drain(c, now);
	if (c->ack_at && now >= c->ack_at) {
		c->ack_at = 0;
		if (c->rx.ack_pending)
			send_packet(c, NULL, 0, 0);
	}
	next = c->ack_at;
	uint64_t g = seq_rx_deadline(&c->rx);
	if (g && (!next || g < next))
		next = g;
	return next;
}
