/* Router Advertisements and routes for the sessions' /64s (nd.h).
 *
 *   link_up --> route added, group joined, RA now --(4 s)--> RA --(4 s)--> RA
 *     --(200 s)--> RA ...     a valid Solicitation: RA (at most one per 3 s)
 *   link_down --> RA with lifetimes 0, route deleted, forgotten
 *
 * What arrives on the socket is a client's: a Solicitation is believed
 * only with hop limit 255 (it was not forwarded, RFC 4861 6.1.1) on the
 * interface of a link we serve, and then only asks for an advertisement
 * we would send anyway. Anything else is counted, logged at most
 * LOG_RL_BURST times a second, and dropped. */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/icmp6.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/ratelimit.h"
#include "pptpd/log.h"
#include "pptpd/loop.h"
#include "pptpd/nd.h"
#include "pptpd/pppif.h"
#include "pptpd/route6.h"
#include "proto/ra.h"

/* An RS is 8 octets and a few options; more than this is not one. */
#define ND_RX_MAX  1280

struct nd_link {
	TAILQ_ENTRY(nd_link) entry;
	struct nd        *nd;
	char              ifname[IF_NAMESIZE];
	unsigned          ifindex, owner;
	struct in6_addr   prefix;
	int               routed;        /* the route is ours to delete */
	unsigned          initial_left;  /* of ND_INITIAL_RAS */
	uint64_t          last_ra_ms;
	struct loop_timer timer;
};

struct nd {
	struct loop        *loop;
	int                 fd;
	struct loop_fd      lf;
	struct route6      *rt;
	TAILQ_HEAD(, nd_link) links;
	struct ratelimit    rl;
	struct nd_stats     st;
};

static const struct in6_addr nd_all_nodes = {
	.s6_addr = { 0xff, 0x02, [15] = 1 } };
static const struct in6_addr nd_all_routers = {
	.s6_addr = { 0xff, 0x02, [15] = 2 } };

static struct nd_link *
nd_find(const struct nd *n, const char *ifname, unsigned owner)
{
	struct nd_link *l;
	TAILQ_FOREACH(l, &n->links, entry)
		if (l->owner == owner && strcmp(l->ifname, ifname) == 0)
			return l;
	return NULL;
}

static struct nd_link *
nd_find_index(const struct nd *n, unsigned ifindex)
{
	struct nd_link *l;
	TAILQ_FOREACH(l, &n->links, entry)
		if (l->ifindex == ifindex)
			return l;
	return NULL;
}

/* The link's MTU, for the advertisement's MTU option; 0 (no option)
 * when it cannot be read or is below IPv6's minimum. */
static unsigned
nd_mtu(const struct nd *n, const char *ifname)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(n->fd, SIOCGIFMTU, &ifr) < 0 || ifr.ifr_mtu < RA_MTU_MIN)
		return 0;
	return (unsigned)ifr.ifr_mtu;
}

/* `withdraw`: the last one, as the link goes; it may be gone already
 * (the client hung up), which is not worth a line. */
static int
nd_send_ra(struct nd_link *l, int withdraw)
{
	struct nd *n = l->nd;
	uint8_t buf[RA_LEN];
	struct ra_info ri = { .prefix = l->prefix, .prefix_len = 64,
		.mtu = nd_mtu(n, l->ifname), .withdraw = withdraw };
	struct sockaddr_in6 to = { .sin6_family = AF_INET6,
		.sin6_addr = nd_all_nodes, .sin6_scope_id = l->ifindex };
	int len = ra_build(&ri, buf, sizeof(buf));

	if (len < 0)
		return -1;
	if (sendto(n->fd, buf, (size_t)len, 0, (struct sockaddr *)&to,
	    sizeof(to)) < 0) {
		if (withdraw)
			return -1;
		log_rl(&n->rl, loop_now(n->loop), LOG_WARNING, "nd: %s: router "
		    "advertisement: %s", l->ifname, strerror(errno));
		return -1;
	}
	l->last_ra_ms = loop_now(n->loop);
	n->st.ras_sent++;
	return 0;
}

static void
nd_tick(void *arg)
{
	struct nd_link *l = arg;
	uint64_t now = loop_now(l->nd->loop);
	/* One answered a Solicitation a moment ago: at most one per
	 * ND_MIN_DELAY_MS (RFC 4861 6.2.6), so this one waits. */
	if (l->last_ra_ms != 0 && now < l->last_ra_ms + ND_MIN_DELAY_MS) {
		loop_timer_set(l->nd->loop, &l->timer, ND_MIN_DELAY_MS, nd_tick, l);
		return;
	}
	nd_send_ra(l, 0);
	if (l->initial_left > 0)
		l->initial_left--;
	loop_timer_set(l->nd->loop, &l->timer, l->initial_left > 0 ?
	    ND_INITIAL_MS : ND_INTERVAL_MS, nd_tick, l);
}

/* The socket's membership of ff02::2 on the link. Leaving is needed even
 * when the interface went first: the kernel frees the socket's entry only
 * then (or at close), and entries count against the socket's option
 * memory. A failed join costs the Solicitations (with forwarding on the
 * kernel has joined ff02::2 itself), never the periodic advertisements. */
static void
nd_group(struct nd *n, unsigned ifindex, int join)
{
	struct ipv6_mreq mr = { .ipv6mr_multiaddr = nd_all_routers,
		.ipv6mr_interface = ifindex };
	if (setsockopt(n->fd, IPPROTO_IPV6, join ? IPV6_ADD_MEMBERSHIP :
	    IPV6_DROP_MEMBERSHIP, &mr, sizeof(mr)) < 0 && join)
		log_rl(&n->rl, loop_now(n->loop), LOG_WARNING, "nd: interface %u: "
		    "cannot join ff02::2: %s (Router Solicitations unanswered; "
		    "advertisements still go out)", ifindex, strerror(errno));
}

int
nd_link_up(struct nd *n, const char *ifname, unsigned owner,
    const struct in6_addr *prefix, int route, char *why, size_t whylen)
{
	struct nd_link *l = nd_find(n, ifname, owner);
	unsigned ifindex = if_nametoindex(ifname);

	if (ifindex == 0 || strlen(ifname) >= IF_NAMESIZE) {
		snprintf(why, whylen, "no interface %s", ifname);
		return -1;
	}
	if (!pppif_is_ppp(n->fd, ifname)) {
		snprintf(why, whylen, "%s is not a ppp interface", ifname);
		return -1;
	}
	if (l != NULL)
		nd_link_down(n, ifname, owner);   /* renewed: the old one goes */
	if (route && n->rt == NULL) {
		snprintf(why, whylen, "routes are not this process's to add");
		return -1;
	}
	if (route && route6_add(n->rt, ifindex, prefix) < 0) {
		snprintf(why, whylen, "route to %s: %s", ifname,
		    route6_strerror(errno));
		return -1;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		if (route)
			route6_del(n->rt, ifindex, prefix);
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	l->nd = n;
	snprintf(l->ifname, sizeof(l->ifname), "%s", ifname);
	l->ifindex = ifindex;
	l->owner = owner;
	l->prefix = *prefix;
	l->routed = route;
	l->initial_left = ND_INITIAL_RAS;
	TAILQ_INSERT_TAIL(&n->links, l, entry);
	n->st.links++;
	nd_group(n, ifindex, 1);
	nd_tick(l);
	return 0;
}

void
nd_link_down(struct nd *n, const char *ifname, unsigned owner)
{
	struct nd_link *l = nd_find(n, ifname, owner);

	if (l == NULL)
		return;
	loop_timer_cancel(n->loop, &l->timer);
	/* The interface still there with this index: IPV6CP went down but
	 * the link stays (or pppd has not removed it yet). */
	if (if_nametoindex(l->ifname) == l->ifindex) {
		nd_send_ra(l, 1);
		if (l->routed && route6_del(n->rt, l->ifindex, &l->prefix) < 0 &&
		    errno != ESRCH && errno != ENODEV)
			log_msg(LOG_WARNING, "nd: %s: deleting the route: %s",
			    l->ifname, strerror(errno));
	}
	nd_group(n, l->ifindex, 0);
	TAILQ_REMOVE(&n->links, l, entry);
	n->st.links--;
	free(l);
}

/* The interface index and hop limit a datagram came with. */
static void
nd_cmsgs(struct msghdr *mh, unsigned *ifindex, int *hops)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL;
	    c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != IPPROTO_IPV6)
			continue;
		if (c->cmsg_type == IPV6_PKTINFO &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct in6_pktinfo))) {
			struct in6_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			*ifindex = pi.ipi6_ifindex;
		} else if (c->cmsg_type == IPV6_HOPLIMIT &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			memcpy(hops, CMSG_DATA(c), sizeof(int));
		}
	}
}

/* One datagram: NULL when nothing is wrong with it (a Solicitation on a
 * session's link, answered; anything on another link, not ours), or why
 * it was dropped. */
static const char *
nd_input_one(struct nd *n, const uint8_t *buf, size_t len, unsigned ifindex,
    int hops)
{
	struct nd_link *l;

	/* Hosts on the server's other links solicit their own routers: not
	 * ours to answer, nor to count. */
	if ((l = nd_find_index(n, ifindex)) == NULL)
		return NULL;
	if (ra_rs_valid(buf, len) < 0)
		return "not a valid Router Solicitation";
	if (hops != RA_HOP_LIMIT_LINK)
		return "hop limit not 255 (forwarded)";
	n->st.rs_received++;
	if (loop_now(n->loop) < l->last_ra_ms + ND_MIN_DELAY_MS)
		return NULL;   /* answered a moment ago: that RA serves */
	nd_send_ra(l, 0);
	return NULL;
}

static void
nd_input(void *arg, uint32_t events)
{
	struct nd *n = arg;
	(void)events;
	for (;;) {
		uint8_t buf[ND_RX_MAX];
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(struct in6_pktinfo)) +
			    CMSG_SPACE(sizeof(int))];
		} ctl;
		struct sockaddr_in6 from;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof(from),
			.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			.msg_controllen = sizeof(ctl.buf) };
		unsigned ifindex = 0;
		int hops = -1;
		ssize_t r = recvmsg(n->fd, &mh, MSG_DONTWAIT);
		if (r < 0)
			return;
		nd_cmsgs(&mh, &ifindex, &hops);
		const char *why = (mh.msg_flags & MSG_TRUNC) ? "too long" :
		    nd_input_one(n, buf, (size_t)r, ifindex, hops);
		if (why == NULL)
			continue;
		n->st.rs_dropped++;
		char a[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, &from.sin6_addr, a, sizeof(a));
		log_rl(&n->rl, loop_now(n->loop), LOG_INFO, "nd: ICMPv6 from %s on "
		    "interface %u dropped: %s", a, ifindex, why);
	}
}

/* The raw ICMPv6 socket: Solicitations only in, with their interface and
 * hop limit; advertisements out with hop limit 255, not looped back. */
static int
nd_socket(void)
{
	struct icmp6_filter f;
	int on = 1, hops = RA_HOP_LIMIT_LINK, off = 0;
	int fd = socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    IPPROTO_ICMPV6);
	if (fd < 0)
		return -1;
	ICMP6_FILTER_SETBLOCKALL(&f);
	ICMP6_FILTER_SETPASS(RA_ICMP6_RS, &f);
	if (setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof(f)) < 0 ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof(on)) < 0 ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &on, sizeof(on)) < 0 ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops,
	    sizeof(hops)) < 0 ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &hops,
	    sizeof(hops)) < 0 ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &off,
	    sizeof(off)) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

struct nd *
nd_open(struct loop *loop, int routes, char *why, size_t whylen)
{
	struct nd *n = calloc(1, sizeof(*n));

	if (n == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	n->loop = loop;
	n->lf.fd = -1;
	TAILQ_INIT(&n->links);
	n->rl = (struct ratelimit)LOG_RL_INIT;
	if ((n->fd = nd_socket()) < 0) {
		snprintf(why, whylen, "ICMPv6 socket: %s", strerror(errno));
		goto fail;
	}
	/* An unprivileged worker keeps no netlink socket: one opened as
	 * root keeps root's rights (privsep.md). */
	if (routes && (n->rt = route6_open(why, whylen)) == NULL)
		goto fail;
	if (loop_fd_add(loop, &n->lf, n->fd, EPOLLIN, nd_input, n) < 0) {
		snprintf(why, whylen, "cannot watch the ICMPv6 socket");
		goto fail;
	}
	return n;
fail:
	nd_close(n);
	return NULL;
}

void
nd_close(struct nd *n)
{
	struct nd_link *l;

	if (n == NULL)
		return;
	while ((l = TAILQ_FIRST(&n->links)) != NULL)
		nd_link_down(n, l->ifname, l->owner);
	if (n->lf.fd >= 0)
		loop_fd_del(n->loop, &n->lf);
	if (n->fd >= 0)
		close(n->fd);
	route6_close(n->rt);
	free(n);
}

void
nd_stats(const struct nd *n, struct nd_stats *st)
{
	*st = n->st;
}
