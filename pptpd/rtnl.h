/* One rtnetlink request and its ack, over a libmnl socket: what nd.c's
 * routes and shaper.c's traffic control both send. */
#ifndef PPTPD_RTNL_H
#define PPTPD_RTNL_H

#include <libmnl/libmnl.h>
#include <stddef.h>

/* A NETLINK_ROUTE socket, bound. NULL with why set. */
struct mnl_socket *rtnl_open(char *why, size_t whylen);

/* Send `nlh` (NLM_F_ACK set, its sequence number its own) and read the
 * kernel's answer: 0, or -1 with errno (the kernel's error, or the
 * socket's). */
int rtnl_talk(struct mnl_socket *nl, struct nlmsghdr *nlh);

#endif
