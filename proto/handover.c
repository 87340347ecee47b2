/* The hand-over across an upgrade's execve: see handover.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/handover.h"
#include "proto/journal.h"
#include "proto/monitor.h"

/* handover.h's rule, where a change to either is made: bump
 * HANDOVER_VERSION with them, then these numbers. */
_Static_assert(HANDOVER_VERSION == 1 && JOURNAL_VERSION == 2 &&
    MON_VERSION == 8, "a new journal or monitor version: bump "
    "HANDOVER_VERSION (proto/handover.h)");

/* All of `len` bytes at `off`: 0, or -1 (errno; EIO when short). */
static int
handover_pio(int fd, void *buf, size_t len, off_t off, int out)
{
	char *p = buf;
	while (len > 0) {
		ssize_t n = out ? pwrite(fd, p, len, off) : pread(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

int
handover_write(int fd, const struct handover_head *head,
    const struct handover_call *calls)
{
	struct handover_head h = *head;

	h.magic = HANDOVER_MAGIC;
	h.version = HANDOVER_VERSION;
	h.call_size = sizeof(struct handover_call);
	h.reserved = 0;
	if (handover_pio(fd, &h, sizeof(h), 0, 1) < 0)
		return -1;
	return h.calls == 0 ? 0 : handover_pio(fd, (void *)calls,
	    (size_t)h.calls * sizeof(*calls), sizeof(h), 1);
}

/* An open descriptor a hand-over may name: -1 (none) or one above
 * stdio. */
static int
handover_fd_ok(int32_t fd)
{
	struct stat st;
	return fd == -1 || (fd > 2 && fstat(fd, &st) == 0);
}

static const char *
handover_call_check(const struct handover_call *c)
{
	if (c->id == 0 || c->pid <= 0)
		return "a call without a Call ID or a pppd";
	if (c->flags & HANDOVER_F_ORPHAN)   /* ending: it holds nothing */
		return c->conn == -1 && c->report == -1 && c->pty == -1 ? NULL :
		    "an ending call with descriptors";
	if (c->conn < 0 || !handover_fd_ok(c->conn) ||
	    !handover_fd_ok(c->report) || !handover_fd_ok(c->pty))
		return "a call's descriptor is not open";
	if (!(c->flags & MON_CALL_KERNEL) && c->pty < 0)
		return "an engine-path call without its pty";
	return NULL;
}

int
handover_read(int fd, struct handover_head *head,
    struct handover_call **calls, const char **why)
{
	struct handover_call *c = NULL;

	*calls = NULL;
	if (handover_pio(fd, head, sizeof(*head), 0, 0) < 0)
		*why = "cannot read the hand-over";
	else if (head->magic != HANDOVER_MAGIC)
		*why = "not a hand-over (magic)";
	else if (head->version != HANDOVER_VERSION)
		*why = "a hand-over of another version";
	else if (head->call_size != sizeof(struct handover_call) ||
	    head->calls > HANDOVER_CALLS_MAX)
		*why = "a hand-over of another layout";
	else if (!handover_fd_ok(head->journal) || head->journal < 0)
		*why = "the journal's descriptor is not open";
	else if (head->calls > 0 &&
	    (c = calloc(head->calls, sizeof(*c))) == NULL)
		*why = "out of memory";
	else if (head->calls > 0 && handover_pio(fd, c, (size_t)head->calls *
	    sizeof(*c), sizeof(*head), 0) < 0)
		*why = "the hand-over is short";
	else {
		*why = NULL;
		for (uint32_t i = 0; i < head->calls && *why == NULL; i++)
			*why = handover_call_check(&c[i]);
		if (*why == NULL) {
			*calls = c;
			return 0;
		}
	}
	free(c);
	return -1;
}
