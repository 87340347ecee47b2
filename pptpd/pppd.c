/* pppd.c -- see pppd.h. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <pty.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "pptpd/conf.h"
#include "pptpd/facts.h"
#include "pptpd/loop.h"
#include "pptpd/pppd.h"

/* Append a formatted string to buf and to argv. */
static char *
pppd_argv_str(char **buf, size_t *buflen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static char *
pppd_argv_str(char **buf, size_t *buflen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(*buf, *buflen, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= *buflen)
		return NULL;
	char *s = *buf;
	*buf += n + 1;
	*buflen -= (size_t)n + 1;
	return s;
}

int
pppd_argv(const struct conf *conf, const struct pppd_args *in,
    char *argv[PPPD_ARGV_MAX], char *buf, size_t buflen)
{
	int argc = 0;
	char client[INET_ADDRSTRLEN], l[INET_ADDRSTRLEN] = "", r[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &in->client, client, sizeof(client));

	argv[argc++] = conf->ppp;
	argv[argc++] = "local";
	if (conf->option != NULL) {
		argv[argc++] = "file";
		argv[argc++] = conf->option;
	}
	/* No tty: no speed, and pppd cannot tell on its own that it must
	 * not detach (we reap it by pid). */
	argv[argc++] = in->kernel ? "nodetach" : conf->speed;
	if (in->remote.s_addr != INADDR_ANY) {
		/* Without localip pppd picks its own address: ":REMOTE". */
		if (in->local.s_addr != INADDR_ANY)
			inet_ntop(AF_INET, &in->local, l, sizeof(l));
		inet_ntop(AF_INET, &in->remote, r, sizeof(r));
		if ((argv[argc++] = pppd_argv_str(&buf, &buflen, "%s:%s", l, r)) == NULL)
			return -1;
	}
	char *cl = pppd_argv_str(&buf, &buflen, "%s", client);
	if (cl == NULL)
		return -1;
	if (!conf->noipparam) {
		argv[argc++] = "ipparam";
		argv[argc++] = cl;
	}
	argv[argc++] = "remotenumber";
	argv[argc++] = cl;
	if (in->reports || in->kernel) {
		argv[argc++] = "plugin";
		argv[argc++] = conf->plugin;
	}
	if (in->reports) {
		argv[argc++] = "pptpd-report-fd";
		if ((argv[argc++] = pppd_argv_str(&buf, &buflen, "%d",
		    FACTS_PPPD_FD)) == NULL)
			return -1;
		argv[argc++] = "pptpd-call";
		if ((argv[argc++] = pppd_argv_str(&buf, &buflen, "%u", in->call_id)) == NULL)
			return -1;
		argv[argc++] = "pptpd-client";
		argv[argc++] = cl;
		if (conf->peers != NULL) {
			argv[argc++] = "pptpd-peers";
			argv[argc++] = conf->peers;
		}
		if (conf->logwtmp)
			argv[argc++] = "pptpd-logwtmp";
	}
	if (in->kernel) {
		/* plugin/channel.h: OUR-ID,PEER-ID,LOCAL-ADDR,PEER-ADDR. */
		char self[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &in->self, self, sizeof(self));
		argv[argc++] = "pptpd-kernel";
		if ((argv[argc++] = pppd_argv_str(&buf, &buflen, "%u,%u,%s,%s",
		    in->call_id, in->peer_call_id, self, client)) == NULL)
			return -1;
		argv[argc++] = "pptpd-kernel-fd";
		if ((argv[argc++] = pppd_argv_str(&buf, &buflen, "%d",
		    PPPD_KERNEL_FD)) == NULL)
			return -1;
	}
	if (in->ipv6)
		argv[argc++] = "+ipv6";
	argv[argc] = NULL;
	return argc;
}

/* In the child: the kernel path's channel socket becomes PPPD_KERNEL_FD
 * and the plugin's report channel FACTS_PPPD_FD (-1: none), close-on-exec
 * cleared (dup2 clears it on the copy); every other descriptor above
 * stderr is closed, so nothing else of ours leaks into pppd. Both are
 * first copied above either place, so putting one where it belongs never
 * closes the other before it has been moved. */
static int
pppd_child_fds(int sock, int report)
{
	_Static_assert(PPPD_KERNEL_FD < FACTS_PPPD_FD &&
	    FACTS_PPPD_FD < PPPD_FD_SPARE, "places below the spare range");
	int k = sock < 0 ? -1 : fcntl(sock, F_DUPFD, PPPD_FD_SPARE);
	int r = report < 0 ? -1 : fcntl(report, F_DUPFD, PPPD_FD_SPARE);
	if ((sock >= 0 && k < 0) || (report >= 0 && r < 0))
		return -1;
	if (k < 0)
		close(PPPD_KERNEL_FD);
	else if (dup2(k, PPPD_KERNEL_FD) < 0)
		return -1;
	if (r < 0)
		close(FACTS_PPPD_FD);
	else if (dup2(r, FACTS_PPPD_FD) < 0)
		return -1;
	close_range(FACTS_PPPD_FD + 1, ~0U, 0);
	return 0;
}

/* In the child: the pty slave becomes pppd's controlling terminal and its
 * stdin/stdout. */
static void __attribute__((noreturn))
pppd_exec(int slave, int report, char **argv)
{
	loop_child_reset();
	/* systemd's notify socket is ours alone (NotifyAccess=main). */
	unsetenv("NOTIFY_SOCKET");
	setsid();
	ioctl(slave, TIOCSCTTY, 0);
	if (dup2(slave, STDIN_FILENO) < 0 || dup2(slave, STDOUT_FILENO) < 0 ||
	    pppd_child_fds(-1, report) < 0)
		_exit(127);
	execv(argv[0], argv);
	_exit(127);
}

/* The kernel path: no pty. stdin and stdout are /dev/null, so nothing of
 * ours is read or written by mistake. */
static void __attribute__((noreturn))
pppd_exec_kernel(int sock, int report, char **argv)
{
	loop_child_reset();
	unsetenv("NOTIFY_SOCKET");
	setsid();
	int null = open("/dev/null", O_RDWR);
	if (null < 0 || dup2(null, STDIN_FILENO) < 0 ||
	    dup2(null, STDOUT_FILENO) < 0 || pppd_child_fds(sock, report) < 0)
		_exit(127);
	execv(argv[0], argv);
	_exit(127);
}

/* Are PPPD_FDS_CHILD + PPPD_FDS_RESERVE descriptor numbers free above
 * PPPD_FD_SPARE? Tried by copying `fd` there, which is what the
 * child will do (fcntl F_DUPFD); the copies are closed at once. */
int
pppd_fds_spare(int fd)
{
	int probe[PPPD_FDS_CHILD + PPPD_FDS_RESERVE], n, ok = 1;

	for (n = 0; n < PPPD_FDS_CHILD + PPPD_FDS_RESERVE; n++)
		if ((probe[n] = fcntl(fd, F_DUPFD_CLOEXEC,
		    PPPD_FD_SPARE)) < 0) {
			ok = 0;
			break;
		}
	while (n-- > 0)
		close(probe[n]);
	return ok ? 0 : -1;
}

static pid_t
pppd_start_kernel(const struct conf *conf, const struct pppd_args *in,
    int sock, int report, const char **reason)
{
	char *argv[PPPD_ARGV_MAX];
	char buf[256];

	if (pppd_argv(conf, in, argv, buf, sizeof(buf)) < 0) {
		*reason = "pppd arguments too long";
		return -1;
	}
	if (pppd_fds_spare(sock) < 0) {
		*reason = "out of descriptors";
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0)
		pppd_exec_kernel(sock, report, argv);
	if (pid < 0)
		*reason = "cannot fork";
	return pid;
}

pid_t
pppd_start(const struct conf *conf, const struct pppd_args *in, int sock,
    int report, int *pty, const char **reason)
{
	int master, slave;
	struct termios tio;
	char *argv[PPPD_ARGV_MAX];
	char buf[256];

	*pty = -1;
	if (in->kernel)
		return pppd_start_kernel(conf, in, sock, report, reason);
	memset(&tio, 0, sizeof(tio));
	cfmakeraw(&tio);   /* echo off before pppd runs: no frame bounces back */
	if (openpty(&master, &slave, NULL, &tio, NULL) < 0) {
		*reason = "cannot open a pty";
		return -1;
	}
	pid_t pid = -1;
	if (pppd_argv(conf, in, argv, buf, sizeof(buf)) < 0)
		*reason = "pppd arguments too long";
	else if (pppd_fds_spare(master) < 0)
		*reason = "out of descriptors";
	else if ((pid = fork()) == 0)
		pppd_exec(slave, report, argv);
	else if (pid < 0)
		*reason = "cannot fork";
	close(slave);
	if (pid < 0) {
		close(master);
		return -1;
	}
	fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
	fcntl(master, F_SETFD, FD_CLOEXEC);
	*pty = master;
	return pid;
}

void
pppd_resumed_close(struct pppd_resumed *r)
{
	int *fds[] = { &r->conn, &r->report, &r->pty };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
