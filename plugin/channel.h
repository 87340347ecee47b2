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
 * control connection (the GRE source), PEER-ADDR the peer's address.
 *
 *   pptpd-kernel-fd N
 *
 * N is a descriptor pppd inherited from pptpd: the call's PPTP socket,
 * bound and connected by pptpd before it answered the call, so the peer's
 * first frames wait on the channel's queue for pppd. The plugin checks it
 * is bound to OUR-CALL-ID. Without it the plugin opens the socket itself,
 * in pppd's connect. */
void channel_init(void);

#endif
