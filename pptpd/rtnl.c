/* rtnetlink request and ack (rtnl.h). */
#include <errno.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>

#include "pptpd/rtnl.h"

struct mnl_socket *
rtnl_open(char *why, size_t whylen)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);

	if (nl == NULL || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(why, whylen, "netlink: %s", strerror(errno));
		if (nl != NULL)
			mnl_socket_close(nl);
		return NULL;
	}
	return nl;
}

int
rtnl_talk(struct mnl_socket *nl, struct nlmsghdr *nlh)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	ssize_t r = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (r < 0)
		return -1;
	return mnl_cb_run(buf, (size_t)r, nlh->nlmsg_seq,
	    mnl_socket_get_portid(nl), NULL, NULL) < 0 ? -1 : 0;
}
