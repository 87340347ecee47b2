/* The RFC 1661 option negotiation automaton (section 4), shared by LCP,
 * IPCP, CCP and IPV6CP: the ten states, Configure-Request/Ack/Nak/Reject,
 * Terminate-Request/Ack, Code-Reject, the restart timer and its counters.
 * A protocol supplies its options through fsm_ops; the automaton builds
 * and checks the packets around them and sends through the owner's
 * send(). It keeps no clock: every call that may arm the timer is given
 * the current time. */
#ifndef CLIENT_FSM_H
#define CLIENT_FSM_H

#include <stddef.h>
#include <stdint.h>

/* Codes (RFC 1661 section 5). */
#define FSM_CONFREQ  1
#define FSM_CONFACK  2
#define FSM_CONFNAK  3
#define FSM_CONFREJ  4
#define FSM_TERMREQ  5
#define FSM_TERMACK  6
#define FSM_CODEREJ  7
#define FSM_HDR_LEN  4

/* Restart timer and counters (RFC 1661 section 4.6). */
#define FSM_RESTART_MS     3000
#define FSM_MAX_CONFIGURE  10
#define FSM_MAX_TERMINATE  2
/* The largest packet the automaton builds (options of a request, and
 * the answer to a peer's request). */
#define FSM_PKT_MAX        256

enum fsm_state {
	FSM_INITIAL, FSM_STARTING, FSM_CLOSED, FSM_STOPPED, FSM_CLOSING,
	FSM_STOPPING, FSM_REQSENT, FSM_ACKRCVD, FSM_ACKSENT, FSM_OPENED,
};

struct fsm;

struct fsm_ops {
	/* The options of our Configure-Request. */
	size_t (*req_build)(struct fsm *f, uint8_t *p, size_t cap);
	/* The peer's Configure-Request: returns FSM_CONFACK, FSM_CONFNAK or
	 * FSM_CONFREJ with the options to answer in out (for an Ack, the
	 * automaton sends the request's own options), or -1 for a
	 * malformed request (dropped). */
	int (*req_check)(struct fsm *f, const uint8_t *p, size_t len,
	    uint8_t *out, size_t *outlen);
	/* Nak (reject 0) or Reject (reject 1) of our request; -1 drops a
	 * malformed one. */
	int (*nak_recv)(struct fsm *f, const uint8_t *p, size_t len,
	    int reject);
	/* The protocol's own part of This-Layer-Up (before the owner
	 * hears of it); may be NULL. */
	void (*up)(struct fsm *f);
	/* Codes beyond 7 (LCP Echo, CCP Reset...): 0 handled, -1 unknown
	 * (answered with Code-Reject). May be NULL. */
	int (*code_recv)(struct fsm *f, uint8_t code, uint8_t id,
	    const uint8_t *p, size_t len, uint64_t now);
};

typedef void fsm_send_fn(void *owner, uint16_t proto, const uint8_t *pkt,
    size_t len);
/* What the owner hears of a layer: This-Layer-Up, -Down, -Finished. */
enum fsm_event { FSM_EV_UP, FSM_EV_DOWN, FSM_EV_FINISHED };
typedef void fsm_event_fn(void *owner, uint16_t proto, enum fsm_event ev);

struct fsm {
	const struct fsm_ops *ops;
	fsm_send_fn *send;
	fsm_event_fn *event;
	void *owner;
	uint64_t deadline;       /* restart timer, 0 when stopped */
	uint16_t proto;
	uint8_t state;           /* enum fsm_state */
	uint8_t id;              /* next Identifier we use */
	uint8_t reqid;           /* Identifier of our last Configure-Request */
	uint8_t restart;         /* restart counter */
	uint8_t peer_terminated; /* we went down on the peer's Terminate */
};

void fsm_init(struct fsm *f, uint16_t proto, const struct fsm_ops *ops,
    fsm_send_fn *send, fsm_event_fn *event, void *owner);
void fsm_up(struct fsm *f, uint64_t now);      /* lower layer up */
void fsm_down(struct fsm *f);                  /* lower layer down */
void fsm_open(struct fsm *f, uint64_t now);
void fsm_close(struct fsm *f, uint64_t now);
/* One packet of the protocol (code onwards). Malformed packets return
 * -1 and change nothing. */
int fsm_input(struct fsm *f, const uint8_t *pkt, size_t len, uint64_t now);
void fsm_timer(struct fsm *f, uint64_t now);
/* Send a packet of this protocol with our next Identifier. */
void fsm_send_code(struct fsm *f, uint8_t code, uint8_t id,
    const uint8_t *data, size_t len);
uint8_t fsm_next_id(struct fsm *f);
/* The peer rejected the whole protocol (LCP Protocol-Reject or a
 * Code-Reject of a code we need): RFC 1661 event RXJ-. */
void fsm_rejected(struct fsm *f);
int fsm_is_open(const struct fsm *f);

#endif
