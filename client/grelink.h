/* pptp-load's GRE side: one raw GRE socket (IPPROTO_GRE) shared by every
 * session, demultiplexed by our Call ID, and per call the enhanced-GRE
 * sequencing of RFC 2637 4.4. Headers come from proto/packet.c and receive
 * sequencing from proto/seq.c, the rules the server's engine keeps too.
 *
 * The Windows profile's GRE (REFERENCE.md section 3): sequence numbers from
 * 0, an ack-only packet when nothing carried the ack within 100 ms, and no
 * send window (the peer's acks are not waited for). */
#ifndef CLIENT_GRELINK_H
#define CLIENT_GRELINK_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/seq.h"

/* An ack waits this long for a data packet to carry it. */
#define GRECALL_ACK_DELAY_MS 100

struct grelink;
struct grecall;

struct grecall_ops {
	/* One PPP frame, in order. */
	void (*deliver)(void *arg, const uint8_t *frame, size_t len,
	    uint64_t now_ms);
	/* grecall_timer's deadline moved earlier (an ack became due). */
	void (*rearm)(void *arg, uint64_t at_ms);
};

struct grecall {
	struct grelink *link;
	const struct grecall_ops *ops;
	void *arg;
	uint16_t our_id, peer_id;
	int attached;
	struct in_addr local, peer;
	uint32_t tx_seq;
	uint64_t ack_at;              /* an ack-only packet is due; 0: none */
	uint64_t tx_packets, tx_acks, tx_errors, rx_packets, rx_foreign;
	struct seq_rx rx;
};

/* Open the shared socket; NULL with errno on failure. */
struct grelink *grelink_open(void);
void grelink_close(struct grelink *l);
int grelink_fd(const struct grelink *l);
/* A random Call ID no attached call uses (0 is never handed out). */
uint16_t grelink_pick_id(struct grelink *l);
/* Read and dispatch what is waiting on the socket; returns the number of
 * GRE packets taken that matched no call or failed to parse. */
uint64_t grelink_input(struct grelink *l, uint64_t now_ms);
/* Packets for no call of ours, or unparseable. */
uint64_t grelink_foreign(const struct grelink *l);

/* Set up a call (before attach): first_seq is 0 for Windows, 1 for
 * pptp-linux. */
void grecall_init(struct grecall *c, struct grelink *l, uint16_t our_id,
    struct in_addr local, const struct grecall_ops *ops, void *arg,
    uint32_t first_seq);
/* The call is connected: GRE for `our_id` from `peer` goes to it. */
int grecall_attach(struct grecall *c, struct in_addr peer, uint16_t peer_id);
void grecall_detach(struct grecall *c);
/* Send one PPP frame (with the pending ack, if any). */
int grecall_send(struct grecall *c, const uint8_t *frame, size_t len,
    uint64_t now_ms);
/* Ack-only packets and the reorder gap timer; returns the next deadline
 * (0: none). */
uint64_t grecall_timer(struct grecall *c, uint64_t now_ms);
/* Release the reorder buffer. */
void grecall_free(struct grecall *c);

#endif
