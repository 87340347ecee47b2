/* Is an interface a ppp one (pppif.h). */
#include "pptpd/pppif.h"

#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int
pppif_is_ppp(int fd, const char *ifname)
{
	struct ifreq ifr;
	int own = fd < 0, ok;

	if (own && (fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ok = ioctl(fd, SIOCGIFHWADDR, &ifr) == 0 &&
	    ifr.ifr_hwaddr.sa_family == ARPHRD_PPP;
	if (own)
		close(fd);
	return ok;
}
