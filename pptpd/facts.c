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

void
facts_drain(struct facts *f)
{
	if (f->fd < 0)
		return;
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

static void
facts_ready(void *arg, uint32_t events)
{
	(void)events;
	facts_drain(arg);
}

/* Only root may enter the directory: nobody else can even try to send us a
 * forged report, or replace our socket. One that anybody else could enter
 * or that is not ours (or not a directory: a symbolic link) is refused, not
 * repaired: we did not make it so and cannot tell what was done in it. */
int
facts_dir_check(char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(FACTS_DIR, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", FACTS_DIR, strerror(errno));
		return -1;
	}
	if (lstat(FACTS_DIR, &st) < 0)
		snprintf(err, errlen, "%s: %s", FACTS_DIR, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		snprintf(err, errlen, "%s is not a directory (a symbolic link?): "
		    "refused; remove it", FACTS_DIR);
	else if (st.st_uid != geteuid())
		snprintf(err, errlen, "%s is owned by uid %u, not %u: refused",
		    FACTS_DIR, (unsigned)st.st_uid, (unsigned)geteuid());
	else if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
		snprintf(err, errlen, "%s has mode %04o: refused; group and others "
		    "must have no access (chmod 0700 %s)", FACTS_DIR,
		    (unsigned)(st.st_mode & 07777), FACTS_DIR);
	else
		return 0;
	return -1;
}

static void
facts_name(char *path, size_t size)
{
	snprintf(path, size, FACTS_DIR "/report.%d.sock", (int)getpid());
}

int
facts_open(struct facts *f, struct server *s, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int one = 1;

	f->srv = s;
	f->fd = -1;
	f->lf.fd = -1;
	if (facts_dir_check(err, errlen) < 0)
		return -1;
	facts_name(f->path, sizeof(f->path));
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

int
facts_rename(struct facts *f, char *err, size_t errlen)
{
	char path[sizeof(f->path)];

	facts_name(path, sizeof(path));
	if (f->fd < 0 || strcmp(path, f->path) == 0)
		return 0;
	/* The socket is found by its inode: the new name reaches it at once. */
	if (rename(f->path, path) < 0) {
		snprintf(err, errlen, "cannot rename the report socket %s to %s: %s",
		    f->path, path, strerror(errno));
		return -1;
	}
	memcpy(f->path, path, sizeof(path));
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
