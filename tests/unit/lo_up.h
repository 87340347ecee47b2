/* lo_up.h -- the unit tests that run in a network namespace of their own
 * (test_daemon, test_privsep) bring its loopback up with this. */
#ifndef TESTS_UNIT_LO_UP_H
#define TESTS_UNIT_LO_UP_H

#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static inline void
lo_up(void)
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	strcpy(ifr.ifr_name, "lo");
	ioctl(s, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	ioctl(s, SIOCSIFFLAGS, &ifr);
	close(s);
}

#endif
