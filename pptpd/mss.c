/* TCP MSS clamping (pptpd/mss.h) in an nftables table of our own.
 *
 * The shape: one forward-hook chain with a fixed pair of rules per
 * address family, which set a SYN's MSS option to the value a map gives
 * for the interface it came in by (iifname) and for the one it leaves by
 * (oifname), and per session one element in each map: "ppp0" : 1360.
 * Why a map and not a rule pair per session: a session's start and end
 * are then one element added or deleted by its name, with no rule
 * handles to read back from libnftables and keep; the chain stays two
 * rules long whatever the number of sessions, and the map lookup is a
 * hash, not a walk through a thousand rules per SYN. The kernel never
 * raises an MSS with `tcp option maxseg size set` (nft_exthdr, since
 * Linux 4.14: a larger value is left alone), so a SYN that already
 * carries a smaller MSS keeps it, as with an explicit "size > X" test.
 *
 * Why libnftables and not a netlink batch of our own: it is nftables' own
 * library (Debian's libnftables1), it takes the same text an admin reads
 * in `nft list table inet pptpd`, and it does the expression encoding
 * that would otherwise be a few hundred lines here. No `nft` process is
 * forked per session. */
#include "pptpd/mss.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include <nftables/libnftables.h>

#include "pptpd/log.h"

/* The maps' names, one per address family (IPv6's header is longer). */
#define MSS_MAP_IPV4  "mss4"
#define MSS_MAP_IPV6  "mss6"
/* Only a SYN (a SYN-ACK too) without RST carries the option we set. */
#define MSS_SYN_MATCH "tcp flags & (syn | rst) == syn"
/* What libnftables said first (its message is several lines long: the
 * command, then a line of carets). */
#define MSS_WHY_MAX   200

struct mss_entry {
	char     name[MSS_IFNAME_MAX + 1];
	unsigned owner;
};

struct mss {
	struct nft_ctx   *nft;
	int               fixed;     /* tcp-mss-adjust N, or 0: the MTU */
	int               sock;      /* for SIOCGIFMTU */
	struct mss_entry *e;
	size_t            n, cap;
};

int
mss_ifname_ok(const char *name)
{
	size_t n = 0;

	if (name == NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0;
	for (; name[n] != '\0'; n++) {
		char ch = name[n];
		if (n == MSS_IFNAME_MAX || !((ch >= 'a' && ch <= 'z') ||
		    (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '_' || ch == '.' || ch == '-'))
			return 0;
	}
	return n > 0;
}

unsigned
mss_value(int mtu, int fixed, int hdr)
{
	int extra = hdr - MSS_HDR_IPV4;   /* IPv6: 20 octets more */
	int v = fixed > 0 ? fixed - extra : mtu - hdr;
	int floor = MSS_MIN - extra;

	return (unsigned)(v < floor ? floor : v);
}

/* snprintf's result as ours: -1 when cut short. */
static int
mss_fit(int n, size_t len)
{
	return n < 0 || (size_t)n >= len ? -1 : n;
}

int
mss_cmd_open(char *buf, size_t len)
{
	/* "add" then "delete" in the one transaction: a table left by a
	 * pptpd that was killed goes, and a missing one is no error. */
	return mss_fit(snprintf(buf, len,
	    "add table inet " MSS_TABLE "\n"
	    "delete table inet " MSS_TABLE "\n"
	    "table inet " MSS_TABLE " {\n"
	    "  map " MSS_MAP_IPV4 " { typeof iifname : tcp option maxseg size; }\n"
	    "  map " MSS_MAP_IPV6 " { typeof iifname : tcp option maxseg size; }\n"
	    "  chain forward {\n"
	    "    type filter hook forward priority mangle; policy accept;\n"
	    "    meta nfproto ipv4 " MSS_SYN_MATCH
	    " tcp option maxseg size set iifname map @" MSS_MAP_IPV4 "\n"
	    "    meta nfproto ipv4 " MSS_SYN_MATCH
	    " tcp option maxseg size set oifname map @" MSS_MAP_IPV4 "\n"
	    "    meta nfproto ipv6 " MSS_SYN_MATCH
	    " tcp option maxseg size set iifname map @" MSS_MAP_IPV6 "\n"
	    "    meta nfproto ipv6 " MSS_SYN_MATCH
	    " tcp option maxseg size set oifname map @" MSS_MAP_IPV6 "\n"
	    "  }\n"
	    "}\n"), len);
}

int
mss_cmd_del(char *buf, size_t len, const char *ifname)
{
	if (!mss_ifname_ok(ifname))
		return -1;
	return mss_fit(snprintf(buf, len,
	    "delete element inet " MSS_TABLE " " MSS_MAP_IPV4 " { \"%s\" }\n"
	    "delete element inet " MSS_TABLE " " MSS_MAP_IPV6 " { \"%s\" }\n",
	    ifname, ifname), len);
}

int
mss_cmd_add(char *buf, size_t len, const char *ifname, unsigned mss4,
    unsigned mss6, int replace)
{
	int n = 0;

	if (!mss_ifname_ok(ifname))
		return -1;
	if (replace && (n = mss_cmd_del(buf, len, ifname)) < 0)
		return -1;
	int m = mss_fit(snprintf(buf + n, len - (size_t)n,
	    "add element inet " MSS_TABLE " " MSS_MAP_IPV4 " { \"%s\" : %u }\n"
	    "add element inet " MSS_TABLE " " MSS_MAP_IPV6 " { \"%s\" : %u }\n",
	    ifname, mss4, ifname, mss6), len - (size_t)n);
	return m < 0 ? -1 : n + m;
}

int
mss_cmd_close(char *buf, size_t len)
{
	return mss_fit(snprintf(buf, len, "delete table inet " MSS_TABLE "\n"),
	    len);
}

/* Runs `cmd` as one transaction: 0, or -1 with why set to libnftables'
 * first line of complaint. */
static int
mss_run(struct mss *m, const char *cmd, char *why, size_t whylen)
{
	int rc = nft_run_cmd_from_buffer(m->nft, cmd);
	const char *err = nft_ctx_get_error_buffer(m->nft);

	if (rc == 0)
		return 0;
	if (err == NULL || *err == '\0')
		err = "nftables refused the command";
	size_t n = strcspn(err, "\n");
	if (n > MSS_WHY_MAX)
		n = MSS_WHY_MAX;
	snprintf(why, whylen, "%.*s", (int)n, err);
	return -1;
}

struct mss *
mss_open(int fixed, char *why, size_t whylen)
{
	struct mss *m = calloc(1, sizeof(*m));
	char cmd[MSS_CMD_MAX];

	if (m == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	m->fixed = fixed;
	/* The MTU by ioctl, not /sys/class/net: sysfs shows the network
	 * namespace of whoever mounted it, which need not be ours. */
	if ((m->sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0) {
		snprintf(why, whylen, "socket: %s", strerror(errno));
		free(m);
		return NULL;
	}
	if ((m->nft = nft_ctx_new(NFT_CTX_DEFAULT)) == NULL) {
		snprintf(why, whylen, "libnftables: cannot make a context");
		goto fail;
	}
	/* Its messages are ours to log, not for our stderr. */
	if (nft_ctx_buffer_error(m->nft) < 0 ||
	    nft_ctx_buffer_output(m->nft) < 0) {
		snprintf(why, whylen, "libnftables: cannot buffer its output");
		goto fail;
	}
	if (mss_cmd_open(cmd, sizeof(cmd)) < 0) {
		snprintf(why, whylen, "command too long");
		goto fail;
	}
	if (mss_run(m, cmd, why, whylen) < 0)
		goto fail;
	return m;
fail:
	if (m->nft != NULL)
		nft_ctx_free(m->nft);
	close(m->sock);
	free(m);
	return NULL;
}

static struct mss_entry *
mss_find(struct mss *m, const char *ifname)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->e[i].name, ifname) == 0)
			return &m->e[i];
	return NULL;
}

int
mss_add(struct mss *m, const char *ifname, unsigned owner, unsigned *mss4,
    char *why, size_t whylen)
{
	struct mss_entry *e;
	struct ifreq ifr;
	char cmd[MSS_CMD_MAX];
	int mtu = 0;

	if (!mss_ifname_ok(ifname)) {
		snprintf(why, whylen, "not an interface name we take");
		return -1;
	}
	if (m->fixed == 0) {
		memset(&ifr, 0, sizeof(ifr));
		memcpy(ifr.ifr_name, ifname, strlen(ifname) + 1);
		if (ioctl(m->sock, SIOCGIFMTU, &ifr) < 0) {
			snprintf(why, whylen, "cannot read the MTU of %s: %s", ifname,
			    strerror(errno));
			return -1;
		}
		mtu = ifr.ifr_mtu;
	}
	*mss4 = mss_value(mtu, m->fixed, MSS_HDR_IPV4);
	e = mss_find(m, ifname);
	if (mss_cmd_add(cmd, sizeof(cmd), ifname, *mss4,
	    mss_value(mtu, m->fixed, MSS_HDR_IPV6), e != NULL) < 0) {
		snprintf(why, whylen, "command too long");
		return -1;
	}
	if (e == NULL && m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct mss_entry *ne = realloc(m->e, cap * sizeof(*ne));
		if (ne == NULL) {
			snprintf(why, whylen, "out of memory");
			return -1;
		}
		m->e = ne;
		m->cap = cap;
	}
	if (mss_run(m, cmd, why, whylen) < 0)
		return -1;
	if (e == NULL) {
		e = &m->e[m->n++];
		snprintf(e->name, sizeof(e->name), "%s", ifname);
	}
	e->owner = owner;
	return 0;
}

void
mss_del(struct mss *m, const char *ifname, unsigned owner)
{
	struct mss_entry *e;
	char cmd[MSS_CMD_MAX], why[MSS_WHY_MAX + 1];

	if (m == NULL || (e = mss_find(m, ifname)) == NULL || e->owner != owner)
		return;
	if (mss_cmd_del(cmd, sizeof(cmd), ifname) >= 0 &&
	    mss_run(m, cmd, why, sizeof(why)) < 0)
		log_msg(LOG_WARNING, "TCP MSS clamping: cannot remove %s from table "
		    "inet " MSS_TABLE ": %s", ifname, why);
	*e = m->e[--m->n];
}

void
mss_close(struct mss *m)
{
	char cmd[MSS_CMD_MAX], why[MSS_WHY_MAX + 1];

	if (m == NULL)
		return;
	if (mss_cmd_close(cmd, sizeof(cmd)) >= 0 &&
	    mss_run(m, cmd, why, sizeof(why)) < 0)
		log_msg(LOG_WARNING, "TCP MSS clamping: cannot delete table inet "
		    MSS_TABLE ": %s", why);
	nft_ctx_free(m->nft);
	close(m->sock);
	free(m->e);
	free(m);
}

