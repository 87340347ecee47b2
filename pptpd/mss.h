/* TCP MSS clamping (pptpd.conf's tcp-mss-adjust): the SYNs that cross a
 * ppp interface of ours, either way, leave with an MSS no larger than
 * what the interface carries in one packet, so that a host behind the
 * server never sends a segment the tunnel would have to fragment (PMTU
 * discovery, which should tell it, is often blocked on the way).
 *
 * Installed in an nftables table of our own, MSS_TABLE (inet family),
 * through libnftables: made at startup, one map element per session's
 * interface, deleted at exit. Nothing outside that table is touched. */
#ifndef PPTPD_MSS_H
#define PPTPD_MSS_H

#include <stddef.h>

#define MSS_TABLE        "pptpd"
/* IPv4 and TCP headers without options (20 + 20), IPv6's (40 + 20). */
#define MSS_HDR_IPV4     40
#define MSS_HDR_IPV6     60
/* The smallest MSS we clamp to: RFC 879's default, what every IPv4 host
 * must accept. A smaller MTU (pppd allows it) clamps to this. */
#define MSS_MIN          536
/* An interface name, as Linux takes it: IFNAMSIZ less the NUL. */
#define MSS_IFNAME_MAX   15
/* The longest nftables command we build (mss_cmd_*). */
#define MSS_CMD_MAX      1024

struct mss;

/* 1 if `name` is an interface name we put into a command: 1 to
 * MSS_IFNAME_MAX of [A-Za-z0-9_.-], and not "." or "..". The name comes
 * from pppd's plugin report, outside input as far as we are concerned. */
int mss_ifname_ok(const char *name);

/* The MSS for an interface of MTU `mtu` (`hdr`: MSS_HDR_IPV4 or
 * MSS_HDR_IPV6), or for a fixed `tcp-mss-adjust N` (fixed > 0: N for
 * IPv4, less the 20 more octets of IPv6's header for IPv6); never below
 * MSS_MIN - (hdr - MSS_HDR_IPV4). */
unsigned mss_value(int mtu, int fixed, int hdr);

/* The commands, as libnftables reads them (the pure part, unit-tested).
 * Each returns the length written, or -1 if it does not fit or the name
 * is refused by mss_ifname_ok. */
int mss_cmd_open(char *buf, size_t len);
/* `replace`: the element is there already (another session's, whose
 * interface had the name before) and is deleted first. */
int mss_cmd_add(char *buf, size_t len, const char *ifname, unsigned mss4,
    unsigned mss6, int replace);
int mss_cmd_del(char *buf, size_t len, const char *ifname);
int mss_cmd_close(char *buf, size_t len);

/* Makes the table (replacing one a pptpd killed before its exit left
 * behind). `fixed`: tcp-mss-adjust N, or 0 for the interface's MTU.
 * NULL with why set when nftables is not there (no nf_tables in the
 * kernel, no privilege): the caller runs without clamping. */
struct mss *mss_open(int fixed, char *why, size_t whylen);
/* Clamps the SYNs crossing `ifname` for call `owner`; *mss4 gets the
 * IPv4 value. The name reused by a new session replaces the old one's
 * element. -1 with why set (a bad name, no such interface, nftables
 * refused). */
int mss_add(struct mss *m, const char *ifname, unsigned owner,
    unsigned *mss4, char *why, size_t whylen);
/* Removes `ifname`'s element if call `owner` still holds it (a newer
 * session on an interface of the same name keeps its own). */
void mss_del(struct mss *m, const char *ifname, unsigned owner);
/* Deletes the table. NULL is fine. */
void mss_close(struct mss *m);

#endif
