/* harness.h -- small helpers the unit tests that drive real processes
 * share (test_daemon, test_privsep, test_monitor): a network namespace's
 * loopback, a log line looked for, a process's descriptors counted. */
#ifndef TESTS_UNIT_HARNESS_H
#define TESTS_UNIT_HARNESS_H

#include <dirent.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

/* The loopback of the namespace the test made for itself, up. */
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

/* Has a line of the file at `path` got `needle` in it? */
static inline int
file_contains(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int found = 0;
	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

/* The entries of /proc/PID/fd (0: this process), "." and ".." included:
 * a count to compare with itself, before and after. -1 when gone. */
static inline int
proc_fds(pid_t pid)
{
	char p[64];
	int n = 0;
	if (pid == 0)
		snprintf(p, sizeof(p), "/proc/self/fd");
	else
		snprintf(p, sizeof(p), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(p);
	if (d == NULL)
		return -1;
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

#endif
