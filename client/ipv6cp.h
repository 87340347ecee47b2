/* IPV6CP (RFC 5072): the Interface-Identifier option only. */
#ifndef CLIENT_IPV6CP_H
#define CLIENT_IPV6CP_H

#include "client/fsm.h"

#define PPP_IPV6CP   0x8057
#define PPP_IPV6     0x0057
#define IPV6CP_IID_LEN 8

struct ipv6cp {
	struct fsm fsm;
	uint8_t iid[IPV6CP_IID_LEN], peer_iid[IPV6CP_IID_LEN];
};

/* iid: our random, non-zero interface identifier. */
void ipv6cp_init(struct ipv6cp *c, const uint8_t iid[IPV6CP_IID_LEN],
    fsm_send_fn *send, fsm_event_fn *event, void *owner);

#endif
