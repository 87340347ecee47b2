/* Per-user rate limits on ppp interfaces (shaper.h): tbf on egress, a
 * matchall filter with a police action on ingress, over rtnetlink. */
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include "pptpd/rtnl.h"
#include "pptpd/shaper.h"

/* Our egress qdisc's handle (major 0x5054, "PT"): one an admin's `tc`
 * would not pick (it numbers from 1: and 8001:), so a change finds ours
 * by it and a delete by it never takes theirs. */
#define SHAPER_ROOT_HANDLE    0x50540000U
/* The ingress qdisc's handle and parent are fixed by the kernel (ffff:,
 * under TC_H_INGRESS); filters go under ffff:fff2, which names the
 * ingress side of an ingress qdisc and of a clsact one alike. */
#define SHAPER_INGRESS_HANDLE 0xFFFF0000U
#define SHAPER_FILTER_PARENT  TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)
/* Our policing filters' priorities under ingress: the first two, so
 * that the limit applies before an admin's filters (tc numbers its own
 * from 49152 down; one whose filter returns "ok" would end the
 * classification before ours ran). An admin filter of theirs at 1 or 2
 * gets our filter refused and logged, never replaced. A change adds the
 * new filter at the other one before it deletes the old (matchall cannot
 * change a filter in place), so the link is never unpoliced in between. */
#define SHAPER_FILTER_PRIO_A  1U
#define SHAPER_FILTER_PRIO_B  2U
/* A filter's priority is the upper 16 bits of tcm_info, its protocol the
 * lower (tc's TC_H_MAKE(prio << 16, protocol)). */
#define SHAPER_PRIO_SHIFT     16
/* The actions of a filter are nested attributes numbered from 1, the
 * order they run in: ours is the one. */
#define SHAPER_ACT_ORDER      1
/* The police action's rate table: the kernel asks for one of 256 cells
 * and a non-zero cell_log (it reads its contents only for a rate whose
 * link layer is not given; ours is), filled as tc fills it. Packets are
 * measured by the rate; one larger than SHAPER_POLICE_MTU would count as
 * over the limit. */
#define SHAPER_RTAB_CELLS     256
#define SHAPER_CELL_LOG       3
#define SHAPER_POLICE_MTU     65535
/* The kernel's scheduler ticks are 64 ns (PSCHED_SHIFT 6): the unit of a
 * tbf buffer, a police burst and the rate table. */
#define SHAPER_NS_PER_TICK    64ULL
#define SHAPER_NS_PER_S       1000000000ULL
#define SHAPER_MS_PER_S       1000ULL
#define SHAPER_BITS_PER_BYTE  8ULL

struct shaper_link {
	TAILQ_ENTRY(shaper_link) entry;
	unsigned ifindex;          /* the key: a name is reused by later links */
	int      ingress_ours;     /* we made its ingress qdisc */
	uint64_t down;             /* egress rate of ours; 0: none */
	unsigned prio;             /* our policing filter's; 0: none */
};

struct shaper {
	struct mnl_socket  *nl;
	unsigned            seq;
	struct shaper_stats st;
	TAILQ_HEAD(, shaper_link) links;
};

int
shaper_rate_ok(uint64_t bps)
{
	return bps == 0 || (bps >= SHAPER_RATE_MIN && bps <= SHAPER_RATE_MAX);
}

struct shaper *
shaper_open(char *why, size_t whylen)
{
	struct shaper *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	TAILQ_INIT(&s->links);
	s->seq = (unsigned)time(NULL);
	if ((s->nl = rtnl_open(why, whylen)) == NULL) {
		shaper_close(s);
		return NULL;
	}
	return s;
}

void
shaper_close(struct shaper *s)
{
	struct shaper_link *l;

	if (s == NULL)
		return;
	while ((l = TAILQ_FIRST(&s->links)) != NULL)
		shaper_clear(s, l->ifindex);
	if (s->nl != NULL)
		mnl_socket_close(s->nl);
	free(s);
}

void
shaper_stats(const struct shaper *s, struct shaper_stats *st)
{
	*st = s->st;
}

/* ---- the messages */

static struct nlmsghdr *
shaper_msg(struct shaper *s, char *buf, uint16_t type, uint16_t flags,
    unsigned ifindex, uint32_t handle, uint32_t parent, uint32_t info)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++s->seq;
	struct tcmsg *tc = mnl_nlmsg_put_extra_header(nlh, sizeof(*tc));
	tc->tcm_family = AF_UNSPEC;
	tc->tcm_ifindex = (int)ifindex;
	tc->tcm_handle = handle;
	tc->tcm_parent = parent;
	tc->tcm_info = info;
	return nlh;
}

/* Ticks to send `bytes` at `bytes_per_s` (tc's tc_calc_xmittime), at
 * most UINT32_MAX. */
static uint32_t
shaper_ticks(uint64_t bytes, uint64_t bytes_per_s)
{
	uint64_t t = bytes * (SHAPER_NS_PER_S / SHAPER_NS_PER_TICK) / bytes_per_s;
	return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static uint64_t
shaper_burst(uint64_t bytes_per_s, uint64_t ms)
{
	uint64_t b = bytes_per_s * ms / SHAPER_MS_PER_S;
	return b < SHAPER_MIN_BURST ? SHAPER_MIN_BURST : b;
}

static struct tc_ratespec
shaper_ratespec(uint64_t bytes_per_s)
{
	return (struct tc_ratespec){ .rate = (uint32_t)bytes_per_s,
	    .linklayer = TC_LINKLAYER_ETHERNET, .cell_log = SHAPER_CELL_LOG };
}

/* Egress: our tbf made as the root qdisc (`change` 0), where only the
 * kernel's default is (EEXIST: another qdisc is there, an admin's), or
 * ours changed in place. */
static int
shaper_egress_put(struct shaper *s, unsigned ifindex, uint64_t bps, int change)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	uint64_t rate = bps / SHAPER_BITS_PER_BYTE;
	uint64_t burst = shaper_burst(rate, SHAPER_EGRESS_BURST_MS);
	struct tc_tbf_qopt q = { .rate = shaper_ratespec(rate),
	    .limit = (uint32_t)(rate * SHAPER_LATENCY_MS / SHAPER_MS_PER_S + burst),
	    .buffer = shaper_ticks(burst, rate) };
	struct nlmsghdr *nlh = shaper_msg(s, buf, RTM_NEWQDISC,
	    change ? 0 : NLM_F_CREATE | NLM_F_EXCL, ifindex, SHAPER_ROOT_HANDLE,
	    TC_H_ROOT, 0);

	mnl_attr_put_strz(nlh, TCA_KIND, "tbf");
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put(nlh, TCA_TBF_PARMS, sizeof(q), &q);
	mnl_attr_put_u32(nlh, TCA_TBF_BURST, (uint32_t)burst);
	mnl_attr_nest_end(nlh, opt);
	return rtnl_talk(s->nl, nlh);
}

/* Our root qdisc deleted (by its handle: never another's). */
static int
shaper_egress_del(struct shaper *s, unsigned ifindex)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	return rtnl_talk(s->nl, shaper_msg(s, buf, RTM_DELQDISC, 0, ifindex,
	    SHAPER_ROOT_HANDLE, TC_H_ROOT, 0));
}

/* An ingress qdisc: 1 made now, 0 one was there (ours, or an admin's
 * ingress or clsact), -1 error. */
static int
shaper_ingress_qdisc(struct shaper *s, unsigned ifindex)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = shaper_msg(s, buf, RTM_NEWQDISC,
	    NLM_F_CREATE | NLM_F_EXCL, ifindex, SHAPER_INGRESS_HANDLE,
	    TC_H_INGRESS, 0);

	mnl_attr_put_strz(nlh, TCA_KIND, "ingress");
	if (rtnl_talk(s->nl, nlh) == 0)
		return 1;
	return errno == EEXIST ? 0 : -1;
}

static uint32_t
shaper_filter_info(unsigned prio)
{
	return TC_H_MAKE(prio << SHAPER_PRIO_SHIFT, htons(ETH_P_ALL));
}

/* Our filter at `prio` deleted; one already gone (with its qdisc, which
 * the kernel then calls an invalid parent) is not an error. */
static int
shaper_filter_del(struct shaper *s, unsigned ifindex, unsigned prio)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	if (rtnl_talk(s->nl, shaper_msg(s, buf, RTM_DELTFILTER, 0, ifindex, 0,
	    SHAPER_FILTER_PARENT, shaper_filter_info(prio))) == 0)
		return 0;
	return errno == ENOENT || errno == EINVAL || errno == ENODEV ? 0 : -1;
}

/* The police action: drop what exceeds the rate; what conforms goes on
 * to the next filter (TC_ACT_UNSPEC), an admin's if there is one. */
static void
shaper_police_put(struct nlmsghdr *nlh, uint64_t rate)
{
	uint64_t burst = shaper_burst(rate, SHAPER_INGRESS_BURST_MS);
	struct tc_police p = { .action = TC_ACT_SHOT,
	    .burst = shaper_ticks(burst, rate), .mtu = SHAPER_POLICE_MTU,
	    .rate = shaper_ratespec(rate) };
	uint32_t rtab[SHAPER_RTAB_CELLS];

	for (unsigned i = 0; i < SHAPER_RTAB_CELLS; i++)
		rtab[i] = shaper_ticks((uint64_t)(i + 1) << SHAPER_CELL_LOG, rate);
	mnl_attr_put_strz(nlh, TCA_ACT_KIND, "police");
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_ACT_OPTIONS);
	mnl_attr_put(nlh, TCA_POLICE_TBF, sizeof(p), &p);
	mnl_attr_put(nlh, TCA_POLICE_RATE, sizeof(rtab), rtab);
	mnl_attr_put_u32(nlh, TCA_POLICE_RESULT, (uint32_t)TC_ACT_UNSPEC);
	mnl_attr_nest_end(nlh, opt);
}

/* Our matchall filter at `prio`, policing to `bps`. */
static int
shaper_filter_add(struct shaper *s, unsigned ifindex, unsigned prio,
    uint64_t bps)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = shaper_msg(s, buf, RTM_NEWTFILTER,
	    NLM_F_CREATE | NLM_F_EXCL, ifindex, 0, SHAPER_FILTER_PARENT,
	    shaper_filter_info(prio));

	mnl_attr_put_strz(nlh, TCA_KIND, "matchall");
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_MATCHALL_ACT);
	struct nlattr *act = mnl_attr_nest_start(nlh, SHAPER_ACT_ORDER);
	shaper_police_put(nlh, bps / SHAPER_BITS_PER_BYTE);
	mnl_attr_nest_end(nlh, act);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);
	return rtnl_talk(s->nl, nlh);
}

/* ---- the links */

static struct shaper_link *
shaper_find(struct shaper *s, unsigned ifindex)
{
	struct shaper_link *l;
	TAILQ_FOREACH(l, &s->links, entry)
		if (l->ifindex == ifindex)
			return l;
	return NULL;
}

static struct shaper_link *
shaper_link(struct shaper *s, unsigned ifindex)
{
	struct shaper_link *l = shaper_find(s, ifindex);

	if (l == NULL && (l = calloc(1, sizeof(*l))) != NULL) {
		l->ifindex = ifindex;
		TAILQ_INSERT_TAIL(&s->links, l, entry);
	}
	return l;
}

/* The egress way to `down`: made, changed or removed. 0 or -1 (errno);
 * EEXIST when the root qdisc is another's. */
static int
shaper_set_egress(struct shaper *s, struct shaper_link *l, uint64_t down)
{
	if (down == l->down)
		return 0;
	if (down == 0) {
		if (shaper_egress_del(s, l->ifindex) < 0 && errno != ENOENT &&
		    errno != EINVAL)
			return -1;
	} else if (shaper_egress_put(s, l->ifindex, down, l->down != 0) < 0)
		return -1;
	l->down = down;
	return 0;
}

/* The ingress way to `up`: the new filter first, at the priority ours
 * does not have, then the old one deleted (if that fails, the new one
 * goes again: the old stays). */
static int
shaper_set_ingress(struct shaper *s, struct shaper_link *l, uint64_t up)
{
	unsigned prio = l->prio == SHAPER_FILTER_PRIO_A ?
	    SHAPER_FILTER_PRIO_B : SHAPER_FILTER_PRIO_A;

	if (up > 0) {
		int made = shaper_ingress_qdisc(s, l->ifindex);
		if (made < 0)
			return -1;
		l->ingress_ours |= made;
		if (shaper_filter_add(s, l->ifindex, prio, up) < 0)
			return -1;
	}
	if (l->prio != 0 && shaper_filter_del(s, l->ifindex, l->prio) < 0) {
		int e = errno;
		if (up > 0)
			shaper_filter_del(s, l->ifindex, prio);
		errno = e;
		return -1;
	}
	l->prio = up > 0 ? prio : 0;
	return 0;
}

/* A link with nothing of ours on it any more: the ingress qdisc we made
 * goes too, and the record. */
static void
shaper_forget_idle(struct shaper *s, struct shaper_link *l)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];

	if (l->down != 0 || l->prio != 0)
		return;
	if (l->ingress_ours)
		rtnl_talk(s->nl, shaper_msg(s, buf, RTM_DELQDISC, 0, l->ifindex,
		    SHAPER_INGRESS_HANDLE, TC_H_INGRESS, 0));
	TAILQ_REMOVE(&s->links, l, entry);
	free(l);
}

/* Both ways of link `l` to the new rates; on failure each way as it was
 * (best effort) and the reason in `why`. */
static int
shaper_apply(struct shaper *s, struct shaper_link *l, const char *ifname,
    uint64_t down, uint64_t up, char *why, size_t whylen)
{
	uint64_t was = l->down;
	const char *what;

	if (shaper_set_egress(s, l, down) < 0)
		what = errno == EEXIST ? "the root qdisc is another's (an "
		    "admin's?), left as it is" : "egress tbf qdisc";
	else if (shaper_set_ingress(s, l, up) < 0) {
		int e = errno;
		what = "ingress policing filter";
		shaper_set_egress(s, l, was);
		errno = e;
	} else
		return 0;
	snprintf(why, whylen, "%s on %s: %s", what, ifname, strerror(errno));
	return -1;
}

unsigned
shaper_set(struct shaper *s, const char *ifname, uint64_t down, uint64_t up,
    char *why, size_t whylen)
{
	unsigned ifindex = strlen(ifname) < IF_NAMESIZE ? if_nametoindex(ifname) : 0;
	struct shaper_link *l = NULL;
	int rc = -1;

	if (ifindex == 0)
		snprintf(why, whylen, "no interface %.32s", ifname);
	else if ((l = shaper_link(s, ifindex)) == NULL)
		snprintf(why, whylen, "out of memory");
	else
		rc = shaper_apply(s, l, ifname, down, up, why, whylen);
	if (l != NULL)
		shaper_forget_idle(s, l);
	if (rc < 0) {
		s->st.failed++;
		return 0;
	}
	s->st.applied++;
	return ifindex;
}

void
shaper_clear(struct shaper *s, unsigned ifindex)
{
	struct shaper_link *l = shaper_find(s, ifindex);
	char name[IF_NAMESIZE];

	if (l == NULL)
		return;
	/* An interface gone (the session's end) took its qdiscs with it. */
	if (if_indextoname(ifindex, name) != NULL) {
		shaper_set_egress(s, l, 0);
		shaper_set_ingress(s, l, 0);
	} else
		l->ingress_ours = 0;
	l->down = 0;
	l->prio = 0;
	shaper_forget_idle(s, l);
}

const char *
shaper_rate_str(uint64_t bps, char *buf, size_t len)
{
	static const struct { uint64_t div; const char *suffix; } u[] = {
		{ 1000000000ULL, "G" }, { 1000000ULL, "M" }, { 1000ULL, "k" },
	};

	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		if (bps >= u[i].div) {
			if (bps % u[i].div == 0)
				snprintf(buf, len, "%llu%s",
				    (unsigned long long)(bps / u[i].div), u[i].suffix);
			else
				snprintf(buf, len, "%.4g%s",
				    (double)bps / (double)u[i].div, u[i].suffix);
			return buf;
		}
	snprintf(buf, len, "%llu", (unsigned long long)bps);
	return buf;
}

int
shaper_link_get(const struct shaper *s, unsigned ifindex,
    struct shaper_link_state *st)
{
	const struct shaper_link *l = shaper_find((struct shaper *)s, ifindex);

	if (l == NULL)
		return -1;
	*st = (struct shaper_link_state){ .down = l->down, .prio = l->prio,
		.ingress_ours = (uint32_t)l->ingress_ours };
	return 0;
}

int
shaper_link_adopt(struct shaper *s, unsigned ifindex,
    const struct shaper_link_state *st)
{
	struct shaper_link *l = shaper_link(s, ifindex);

	if (l == NULL)
		return -1;
	l->down = st->down;
	l->prio = st->prio;
	l->ingress_ours = st->ingress_ours != 0;
	return 0;
}
