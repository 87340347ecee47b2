#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl/talk.h"

#define TALK_BUF_START 4096

int
talk_connect(const char *path, int quiet)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = -1, e = ENAMETOOLONG, rc = EXIT_USAGE;

	if (strlen(path) < sizeof(sun.sun_path)) {
		strcpy(sun.sun_path, path);
		rc = EXIT_ERROR;
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
			e = errno;
		else if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			return fd;
		else {
			e = errno;
			close(fd);
		}
	}
	if (e == ENOENT || e == ECONNREFUSED)
		rc = EXIT_NOT_RUNNING;
	if (quiet)
		return -rc;
	if (rc == EXIT_NOT_RUNNING)
		fprintf(stderr, "pptpctl: pptpd is not running (%s: %s)\n", path,
		    strerror(e));
	else if (e == EACCES || e == EPERM)
		fprintf(stderr, "pptpctl: %s: %s (only root may ask pptpd)\n", path,
		    strerror(e));
	else
		fprintf(stderr, "pptpctl: %s: %s\n", path, strerror(e));
	return -rc;
}

int64_t
talk_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Everything the daemon says until it closes, within `timeout_ms` in all;
 * NULL on error. */
static char *
talk_read(int fd, size_t *lenp, int timeout_ms, int quiet)
{
	size_t len = 0, cap = TALK_BUF_START;
	char *buf = malloc(cap), *nb;
	const char *why = buf == NULL ? "out of memory" : NULL;
	char whybuf[64];
	int64_t deadline = talk_now_ms() + timeout_ms;

	while (why == NULL) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - talk_now_ms();
		int r = left > 0 ? poll(&p, 1, (int)left) : 0;
		ssize_t n = r <= 0 ? -1 : read(fd, buf + len, cap - len - 1);
		if (r == 0) {
			snprintf(whybuf, sizeof(whybuf), "no answer from pptpd "
			    "within %d s", (timeout_ms + 999) / 1000);
			why = whybuf;
		} else if (n < 0 && errno == EINTR)
			continue;
		else if (n < 0) {
			snprintf(whybuf, sizeof(whybuf), "%s: %s", r < 0 ? "poll" :
			    "read", strerror(errno));
			why = whybuf;
		} else if (n == 0) {
			buf[len] = '\0';
			*lenp = len;
			return buf;
		} else if ((len += (size_t)n) + 2 > cap) {
			if ((nb = realloc(buf, cap * 2)) == NULL)
				why = "out of memory";
			else {
				buf = nb;
				cap *= 2;
			}
		}
	}
	if (!quiet)
		fprintf(stderr, "pptpctl: %s\n", why);
	free(buf);
	return NULL;
}

char *
talk_exchange(int fd, const char *req, size_t n, size_t *lenp,
    int timeout_ms, int quiet)
{
	if (send(fd, req, n, MSG_NOSIGNAL) != (ssize_t)n) {
		if (!quiet)
			fprintf(stderr, "pptpctl: send: %s\n", strerror(errno));
		return NULL;
	}
	return talk_read(fd, lenp, timeout_ms, quiet);
}
