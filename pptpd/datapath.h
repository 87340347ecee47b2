/* Which data path carries the calls: resolved once, at startup, from
 * pptpd.conf's `datapath` (conf.h). */
#ifndef PPTPD_DATAPATH_H
#define PPTPD_DATAPATH_H

#include <stddef.h>

/* 1: the kernel's PPTP channel, 0: our GRE engine, -1 with err set when
 * `datapath kernel` was asked for and the kernel has no PPTP channel.
 * For kernel and auto the pptp module is loaded (modprobe) if a socket of
 * its family cannot be had at first. `noplugin` makes auto the engine (the
 * plugin is what opens the channel). Logs the choice. */
int datapath_choose(int conf_datapath, int noplugin, char *err, size_t errlen);

/* Can a PPTP channel socket be opened right now? 0, or an errno. */
int datapath_kernel_probe(void);

#endif
