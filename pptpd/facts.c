/* facts.c -- one call's report channel from the pppd plugin (facts.h). */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "facts.h"
#include "report.h"

void
facts_init(struct facts *f)
{
	f->loop = NULL;
	f->fd = -1;
	f->lf.fd = -1;
	f->draining = 0;
}

/* recv() returns 0 for an empty message too: only the peer's shutdown,
 * which the socket shows once its queue is empty, ends the channel. */
static int
facts_peer_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP)) != 0;
}

static void
facts_drain_now(struct facts *f)
{
	while (f->fd >= 0) {
		/* One byte more than a report may have: a longer message
		 * arrives cut to this size, which the parser refuses. */
		char data[REPORT_MAX_DGRAM + 1];
		ssize_t n = recv(f->fd, data, sizeof(data), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < 0 || (n == 0 && facts_peer_gone(f->fd))) {
			/* pppd closed its end (exited): nothing more comes. */
			facts_close(f);
			return;
		}
		if (n > 0)
			f->fn(f->arg, data, (size_t)n);
	}
}

void
facts_drain(struct facts *f)
{
	/* A report's handler may end the call, which drains too: that
	 * inner call returns, and this one goes on with the next report. */
	if (f->draining)
		return;
	f->draining = 1;
	facts_drain_now(f);
	f->draining = 0;
}

static void
facts_ready(void *arg, uint32_t events)
{
	(void)events;
	facts_drain(arg);
}

int
facts_open(struct facts *f, struct loop *loop, facts_fn fn, void *arg,
    int *pppd_fd)
{
	int sv[2];

	facts_init(f);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	f->loop = loop;
	f->fn = fn;
	f->arg = arg;
	f->fd = sv[0];
	if (loop_fd_add(loop, &f->lf, f->fd, EPOLLIN, facts_ready, f) < 0) {
		int err = errno;
		close(sv[0]);
		close(sv[1]);
		facts_init(f);
		errno = err;
		return -1;
	}
	*pppd_fd = sv[1];
	return 0;
}

void
facts_close(struct facts *f)
{
	if (f->fd < 0)
		return;
	loop_fd_del(f->loop, &f->lf);
	close(f->fd);
	f->fd = -1;
}
