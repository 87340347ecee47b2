/* rtnetlink request and ack (rtnl.h). */
#include "pptpd/rtnl.h"

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
