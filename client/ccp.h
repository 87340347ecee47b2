/* CCP (RFC 1962) carrying only MPPE (RFC 3078 option 18): what we offer
 * (40 and/or 128 bits, stateless or stateful), what the server picks,
 * and the Reset-Request/Ack pair of stateful resynchronisation. */
#ifndef CLIENT_CCP_H
#define CLIENT_CCP_H

#include "client/fsm.h"

#define PPP_CCP  0x80FD
#define PPP_COMP 0x00FD    /* an MPPE packet */

struct ccp {
	struct fsm fsm;
	uint32_t allow;     /* MPPE_OPT_40 / _128 we accept */
	uint32_t want;      /* our request: one strength or both, and H */
	uint32_t peer;      /* the server's request we acked */
	uint8_t stateful_ok;
	uint8_t reset_req;  /* the server asked for a reset: flush tx */
	uint8_t refused;    /* the server's offer and ours do not meet */
	uint8_t no_mppe;    /* CCP_NO_MPPE: offer nothing, reject MPPE */
};

/* bits for a CCP that runs without MPPE: our Configure-Request carries
 * no option and every option of the server's is rejected, MPPE among
 * them (a client that speaks CCP but will not encrypt). */
#define CCP_NO_MPPE (-1)

/* bits: 40, 128, 0 for both, or CCP_NO_MPPE; stateful: ask for
 * stateful. */
void ccp_init(struct ccp *c, int bits, int stateful, fsm_send_fn *send,
    fsm_event_fn *event, void *owner);
/* The agreed MPPE: 40 or 128 and stateful, or -1 if the two requests
 * disagree. */
int ccp_agreed(const struct ccp *c, int *bits, int *stateful);
/* A stateful gap: ask the server to flush (Reset-Request). */
void ccp_send_reset(struct ccp *c);
/* 1 once after a server Reset-Request (the owner flushes MPPE tx). */
int ccp_take_reset(struct ccp *c);

#endif
