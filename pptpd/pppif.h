/* pppif.h -- is an interface a ppp one? The check every part that acts
 * on a session's interface by its name makes (nd.c's routes and
 * advertisements, the monitor's clamping and rates): the name comes from
 * a plugin report, and a stale or wrong one must not make pptpd act on a
 * LAN or uplink interface. */
#ifndef PPTPD_PPPIF_H
#define PPTPD_PPPIF_H

/* 1 when `ifname` exists and is of type ARPHRD_PPP. `fd` is any socket to
 * ask with (SIOCGIFHWADDR), or -1 for one opened for the question. */
int pppif_is_ppp(int fd, const char *ifname);

#endif
