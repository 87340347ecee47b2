/* Fuzz the monitor's side of the monitor-worker records (proto/monitor.c):
 * what an unprivileged, possibly subverted worker sends, with descriptors.
 * Input: 1 byte, the number of descriptors to send along (0-3), then the
 * record. It goes through a real SOCK_SEQPACKET socketpair to mon_recv,
 * and straight to mon_decode. Besides memory safety:
 *  - a refused record leaves no descriptor open, an accepted one exactly
 *    its type's (the fd count of the process is checked, which ASan does
 *    not);
 *  - an accepted record encodes back to the same bytes (one encoding per
 *    record, so nothing in it is left unchecked). */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz/fuzz_util.h"
#include "proto/monitor.h"

static int
fz_open_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL)
		abort();
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

static void
fz_check_canonical(const struct mon_msg *m, const uint8_t *rec, size_t len)
{
	uint8_t buf[MON_MAX_LEN];
	if (mon_encode(m, buf, sizeof(buf)) != len || memcmp(buf, rec, len) != 0)
		abort();   /* accepted, but not as we would write it */
}

/* Through a socketpair, with `nfds` descriptors (/dev/null) beside it. */
static void
fz_over_socket(const uint8_t *rec, size_t len, unsigned nfds)
{
	int sv[2], fds[3];
	union { struct cmsghdr a; char b[CMSG_SPACE(sizeof(int) * 3)]; } ctl;
	struct iovec iov = { (void *)rec, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct mon_msg m;
	const char *why = NULL;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	for (unsigned i = 0; i < nfds; i++)
		if ((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
			abort();
	if (nfds > 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	if (sendmsg(sv[0], &mh, 0) < 0) {
		if (len <= 4096)
			abort();   /* a record of this size must go through */
	}
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);
	int before = fz_open_fds();
	int rc = mon_recv(sv[1], &m, &why);
	if (rc == 1) {
		if ((int)m.nfds != mon_fds_of(&m) ||
		    fz_open_fds() != before + (int)m.nfds)
			abort();
		fz_check_canonical(&m, rec, len);
		mon_close_fds(&m);
	} else if (rc < 0 && why == NULL) {
		abort();   /* refused without a reason */
	}
	if (fz_open_fds() != before)
		abort();   /* a descriptor that came with it leaked */
	close(sv[0]);
	close(sv[1]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mon_msg m;
	const char *why = NULL;
	static const int fake[MON_MAX_FDS] = { 1000, 1001, 1002 };

	if (size < 1)
		return 0;
	unsigned nfds = data[0] % 4;
	uint8_t *rec = fz_dup(data + 1, size - 1);
	if (mon_decode(rec, size - 1, fake, nfds > MON_MAX_FDS ? MON_MAX_FDS :
	    nfds, &m, &why) == 0)
		fz_check_canonical(&m, rec, size - 1);
	else if (why == NULL || m.nfds != 0)
		abort();
	fz_over_socket(rec, size - 1, nfds);
	free(rec);
	return 0;
}
