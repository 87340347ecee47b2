/* Which data path carries the calls: resolved once, at startup, from
 * pptpd.conf's `datapath` (conf.h). */
#ifndef PPTPD_DATAPATH_H
#define PPTPD_DATAPATH_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

struct kguard;

/* 1: the kernel's PPTP channel, 0: our GRE engine, -1 with err set when
 * `datapath kernel` was asked for and the kernel has no PPTP channel.
 * For kernel and auto the pptp module is loaded (modprobe) if a socket of
 * its family cannot be had at first. `noplugin` makes auto the engine (the
 * plugin is what makes the channel pppd's). On the kernel path *guard is
 * its GRE guard (pptpd/kguard.h), or NULL where it cannot be loaded: auto
 * then takes the engine, kernel goes on without it with a warning. Logs
 * the choice. */
int datapath_choose(int conf_datapath, int noplugin, struct kguard **guard,
    char *err, size_t errlen);

/* Can a PPTP channel socket be opened right now? 0, or an errno. */
int datapath_kernel_probe(void);

/* One call's PPTP channel socket (close-on-exec), bound to our Call ID at
 * the control connection's local address and connected to the peer's
 * Call ID and address; or -1 with why set. Opened before the call is
 * answered: from the connect on, the kernel gives the peer's GRE for the
 * call to the socket's PPP channel, which queues what arrives until pppd
 * attaches it to a unit, so the peer's first LCP request is not lost. */
int datapath_kernel_open(uint16_t our_id, struct in_addr local,
    uint16_t peer_id, struct in_addr peer, char *why, size_t whylen);

#endif
