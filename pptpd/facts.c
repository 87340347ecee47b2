#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "call.h"
#include "facts.h"
#include "report.h"
#include "server.h"

static void
facts_ready(void *arg, uint32_t events)
{
	struct facts *f = arg;
	(void)events;
	for (;;) {
		char data[REPORT_MAX_DGRAM + 1];
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(struct ucred))];
		} cbuf;
		struct iovec iov = { data, sizeof(data) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf) };
		ssize_t n = recvmsg(f->fd, &mh, MSG_DONTWAIT);
		if (n < 0)
			return;
		const struct ucred *cred = NULL;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS)
				cred = (const struct ucred *)CMSG_DATA(c);
		call_report(f->srv, data, (size_t)n, cred ? cred->pid : 0);
	}
}

int
facts_open(struct facts *f, struct server *s, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int one = 1;

	f->srv = s;
	f->fd = -1;
	f->lf.fd = -1;
	/* Only root may enter the directory: nobody else can even try to send
	 * us a forged report. */
	if (mkdir(FACTS_DIR, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", FACTS_DIR, strerror(errno));
		return -1;
	}
	snprintf(f->path, sizeof(f->path), FACTS_DIR "/report.%d.sock", (int)getpid());
	memcpy(sun.sun_path, f->path, sizeof(f->path));
	unlink(f->path);
	f->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (f->fd < 0 ||
	    setsockopt(f->fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
	    bind(f->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    loop_fd_add(s->loop, &f->lf, f->fd, EPOLLIN, facts_ready, f) < 0) {
		snprintf(err, errlen, "cannot open the report socket %s: %s", f->path,
		    strerror(errno));
		facts_close(f);
		return -1;
	}
	return 0;
}

void
facts_close(struct facts *f)
{
	if (f->fd < 0)
		return;
	loop_fd_del(f->srv->loop, &f->lf);
	close(f->fd);
	unlink(f->path);
	f->fd = -1;
}
