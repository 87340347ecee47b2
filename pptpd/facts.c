/* facts.c -- one call's report channel from the pppd plugin (facts.h). */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pptpd/facts.h"
#include "proto/report.h"

void
facts_init(struct facts *f)
{
	f->loop = NULL;
	f->fd = -1;
	f->lf.fd = -1;
	f->draining = 0;
}

/* One message off our end into data: its length, 0 for an empty message,
 * FACTS_END once pppd has closed its end and everything it sent has been
 * read, -1 with errno (EAGAIN: nothing waiting). recv() returns 0 both for
 * an empty message and for the end, and the socket shows its peer's
 * shutdown (POLLRDHUP) while messages still wait: only a message carries
 * the sender's credentials (SO_PASSCRED, set at facts_open), the end
 * carries none. */
#define FACTS_END (-2)
static ssize_t
facts_recv(int fd, char *data, size_t len)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} cbuf;
	struct iovec iov = { data, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf) };
	ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n == 0 && mh.msg_controllen == 0)
		return FACTS_END;
	return n;
}

static void
facts_drain_now(struct facts *f)
{
	while (f->fd >= 0) {
		/* One byte more than a report may have: a longer message
		 * arrives cut to this size, which the parser refuses. */
		char data[REPORT_MAX_DGRAM + 1];
		ssize_t n = facts_recv(f->fd, data, sizeof(data));
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < 0) {
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
	int sv[2], one = 1;

	facts_init(f);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	f->loop = loop;
	f->fn = fn;
	f->arg = arg;
	f->fd = sv[0];
	if (setsockopt(f->fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
	    loop_fd_add(loop, &f->lf, f->fd, EPOLLIN, facts_ready, f) < 0) {
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

int
facts_adopt(struct facts *f, struct loop *loop, facts_fn fn, void *arg,
    int fd)
{
	facts_init(f);
	f->loop = loop;
	f->fn = fn;
	f->arg = arg;
	f->fd = fd;
	if (loop_fd_add(loop, &f->lf, fd, EPOLLIN, facts_ready, f) < 0) {
		int err = errno;
		close(fd);
		facts_init(f);
		errno = err;
		return -1;
	}
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

int
facts_send(struct facts *f, const void *data, size_t len)
{
	if (f->fd < 0) {
		errno = EPIPE;
		return -1;
	}
	return send(f->fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 ? -1 : 0;
}

int
facts_fd(const struct facts *f)
{
	return f->fd;
}
