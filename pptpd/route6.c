/* The sessions' /64 routes; see route6.h. */
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pptpd/prefix6.h"
#include "pptpd/route6.h"
#include "pptpd/rtnl.h"

struct route6 {
	struct mnl_socket *nl;
	unsigned           seq;
};

struct route6 *
route6_open(char *why, size_t whylen)
{
	struct route6 *r = calloc(1, sizeof(*r));

	if (r == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	r->seq = (unsigned)time(NULL);
	if ((r->nl = rtnl_open(why, whylen)) == NULL) {
		route6_close(r);
		return NULL;
	}
	return r;
}

void
route6_close(struct route6 *r)
{
	if (r == NULL)
		return;
	if (r->nl != NULL)
		mnl_socket_close(r->nl);
	free(r);
}

/* RTM_NEWROUTE or RTM_DELROUTE, answered by the kernel's ack. */
static int
route6_change(struct route6 *r, int type, unsigned ifindex,
    const struct in6_addr *prefix)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = (uint16_t)type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	if (type == RTM_NEWROUTE)
		nlh->nlmsg_flags |= NLM_F_CREATE | NLM_F_EXCL;
	nlh->nlmsg_seq = ++r->seq;
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_INET6;
	rtm->rtm_dst_len = PREFIX6_LEN_SESSION;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = ROUTE6_RTPROT;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put(nlh, RTA_DST, sizeof(*prefix), prefix);
	mnl_attr_put_u32(nlh, RTA_OIF, ifindex);
	return rtnl_talk(r->nl, nlh);
}

int
route6_add(struct route6 *r, unsigned ifindex, const struct in6_addr *prefix)
{
	return route6_change(r, RTM_NEWROUTE, ifindex, prefix);
}

const char *
route6_strerror(int err)
{
	return err == EEXIST ? "a route to that /64 exists already (not "
	    "pptpd's to replace)" : strerror(err);
}

int
route6_del(struct route6 *r, unsigned ifindex, const struct in6_addr *prefix)
{
	return route6_change(r, RTM_DELROUTE, ifindex, prefix);
}
