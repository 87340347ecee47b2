/* IPCP (RFC 1332) with the DNS and NBNS (WINS) options of RFC 1877: the
 * client asks for 0.0.0.0 and takes what the server Naks. */
#ifndef CLIENT_IPCP_H
#define CLIENT_IPCP_H

#include <netinet/in.h>

#include "client/fsm.h"

#define PPP_IPCP 0x8021
#define PPP_IP   0x0021

struct ipcp {
	struct fsm fsm;
	struct in_addr local, peer, dns[2], wins[2];
	uint8_t want_dns[2], want_wins[2];
};

void ipcp_init(struct ipcp *c, int dns, int wins, fsm_send_fn *send,
    fsm_event_fn *event, void *owner);

#endif
