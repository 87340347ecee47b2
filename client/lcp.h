/* LCP (RFC 1661) for the client: MRU, ACCM, magic number, PFC/ACFC,
 * the authentication protocol the server asks for, Echo replies,
 * Protocol-Reject, and Windows' extras (a callback/CBCP option in the
 * first request, Identification packets). */
#ifndef CLIENT_LCP_H
#define CLIENT_LCP_H

#include "client/fsm.h"

#define PPP_LCP   0xC021
#define PPP_PAP   0xC023
#define PPP_CHAP  0xC223
#define CHAP_ALG_MD5      0x05
#define CHAP_ALG_MSCHAPV2 0x81
#define LCP_DEFAULT_MRU   1500
/* The peer's asks for an authentication protocol we do not run: after
 * this many Naks the server will not change its mind. */
#define LCP_MAX_AUTH_NAKS 5

/* What the client asks for, from ppp_config. */
struct lcp_want {
	uint16_t mru;           /* 0: do not send MRU */
	uint32_t magic;
	uint16_t auth_proto;    /* PPP_CHAP or PPP_PAP */
	uint8_t auth_alg;       /* CHAP algorithm */
	uint8_t accm;           /* send ACCM 0 (pppd does) */
	uint8_t cbcp;           /* callback option 13 (Windows) */
};

struct lcp {
	struct fsm fsm;
	uint32_t magic;
	uint16_t mru, peer_mru;
	uint16_t auth_proto;    /* agreed; 0: the server asked for none */
	uint8_t auth_alg;
	uint8_t want_auth_alg;
	uint16_t want_auth_proto;
	uint8_t want_mru, want_accm, want_magic, want_pfc, want_acfc,
	    want_cbcp;
	uint8_t peer_pfc, peer_acfc;   /* we may compress toward the peer */
	uint8_t auth_naks;
};

void lcp_init(struct lcp *l, const struct lcp_want *w, fsm_send_fn *send,
    fsm_event_fn *event, void *owner);
/* Identification (code 12) with our magic number and `msg`. */
void lcp_send_ident(struct lcp *l, const char *msg);
/* Protocol-Reject (code 8) of a frame of `proto` whose information field
 * is info. */
void lcp_send_protrej(struct lcp *l, uint16_t proto, const uint8_t *info,
    size_t len);
/* The peer Nak'ed our authentication protocol LCP_MAX_AUTH_NAKS times. */
int lcp_auth_refused(const struct lcp *l);

#endif
