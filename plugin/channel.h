/* The kernel data path inside pppd: the pptpd-kernel option, and the
 * kernel's PPTP channel as pppd's channel (the_channel). */
#ifndef PLUGIN_CHANNEL_H
#define PLUGIN_CHANNEL_H

/* Registers the option; from plugin_init. The option's value, as pptpd
 * writes it (pptpd/call.c):
 *
 *   pptpd-kernel OUR-CALL-ID,PEER-CALL-ID,LOCAL-ADDR,PEER-ADDR
 *
 * OUR-CALL-ID is the one pptpd gave the peer in its Outgoing-Call-Reply
 * (the peer puts it in its GRE key field), PEER-CALL-ID the one from the
 * peer's Outgoing-Call-Request, LOCAL-ADDR the local address of the
 * control connection (the GRE source), PEER-ADDR the peer's address. */
void channel_init(void);

#endif
