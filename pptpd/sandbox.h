/*
 * sandbox.h -- privsep's worker under a seccomp allow-list (libseccomp):
 * once it has given up root (drop.h), the system calls an event loop of
 * sockets needs and no others. A call outside the list kills the worker
 * (SIGSYS, which the monitor logs); socket() is allowed for IPv4, IPv6
 * and Unix sockets, and NETLINK_ROUTE for the resolver (no other netlink,
 * no packet sockets). The list was
 * found by tracing the worker through the test suites
 * (doc/design/privsep.md), not guessed.
 */
#ifndef PPTPD_SANDBOX_H
#define PPTPD_SANDBOX_H

#include <stddef.h>

/* Load the filter into this process (no_new_privs must be set). 0, or -1
 * with err set. */
int sandbox_enter(char *err, size_t errlen);

#endif
