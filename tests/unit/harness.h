/* harness.h -- small helpers the unit tests that drive real processes
 * share (test_daemon, test_privsep, test_monitor, test_acct): a file
 * written, a network namespace's
 * loopback, a log line looked for, a process's name and descriptors, a
 * datagram on a stand-in for systemd's notify socket. */
#ifndef TESTS_UNIT_HARNESS_H
#define TESTS_UNIT_HARNESS_H

#include <dirent.h>
#include <poll.h>
#include <string.h>
#include <net/if.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

/* `text` as the file `name` in `dir` (cmocka's assert_* need the test's
 * own includes, so failure is the caller's to see: -1). */
static inline int
harness_write(const char *dir, const char *name, const char *text)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (f == NULL)
		return -1;
	int rc = fputs(text, f) < 0 ? -1 : 0;
	return fclose(f) == 0 ? rc : -1;
}

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
/* Process `pid`'s name (/proc/PID/comm, its newline cut) into buf; ""
 * when it is gone. */
static inline void
proc_comm(pid_t pid, char *buf, size_t len)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/comm", (int)pid);
	FILE *f = fopen(p, "r");
	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* Has process `pid` a descriptor whose /proc link is `link` (`exact`),
 * or starts with it? 1 with its /proc path in `path`, or 0. */
static inline int
proc_fd_by_link(pid_t pid, const char *link, int exact, char *path,
    size_t len)
{
	char dir[64], l[128];
	struct dirent *e;
	int found = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(dir);
	if (d == NULL)
		return 0;
	while (!found && (e = readdir(d)) != NULL) {
		ssize_t n;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, len, "%s/%s", dir, e->d_name);
		if ((n = readlink(path, l, sizeof(l) - 1)) <= 0)
			continue;
		l[n] = '\0';
		found = exact ? strcmp(l, link) == 0 :
		    strncmp(l, link, strlen(link)) == 0;
	}
	closedir(d);
	return found;
}

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

/* One datagram on `s` (a unix datagram socket with SO_PASSCRED: a
 * stand-in for systemd's notify socket) within `ms`, NUL-ended in buf,
 * and the pid it came from, which systemd checks against the unit's
 * main pid (NotifyAccess=main). 0, or -1 when none came. */
static inline int
notify_recv_from(int s, char *buf, size_t len, int ms, pid_t *from)
{
	struct pollfd pfd = { s, POLLIN, 0 };
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(struct ucred))]; } ctl;
	struct iovec iov = { buf, len - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.b, .msg_controllen = sizeof(ctl.b) };
	if (poll(&pfd, 1, ms) != 1)
		return -1;
	ssize_t n = recvmsg(s, &mh, 0);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	*from = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred uc;
			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			*from = uc.pid;
		}
	return 0;
}

#endif
