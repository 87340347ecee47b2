/*
 * handover.h -- what a running monitor hands the binary it re-executes
 * at `pptpctl upgrade` (doc/design/privsep.md, "Upgrade"). THIS FILE IS
 * THE CONTRACT between one release's monitor and the next's; handover.c
 * writes and checks it. Pure C, nothing of either side.
 *
 * Where
 *   A memfd the old monitor writes and passes, by number, across its own
 *   execve (`pptpd --resume FD`), with the descriptors it names: the
 *   sessions' journal and each call's control connection, report channel
 *   and pty master, their close-on-exec flags cleared. The process is the
 *   same (its pid, its pppd children); only the program changes. Host byte
 *   order (addresses in network order).
 *
 * Layout
 *   struct handover_head, then `calls` struct handover_call, oldest call
 *   first.
 *
 * Versions
 *   HANDOVER_VERSION is the one number an upgrade compares: the running
 *   monitor asks the installed binary (`pptpd --handover-version`) and
 *   refuses unless it prints its own. It is bumped with any change here,
 *   in the journal's layout (journal.h) or in the monitor-worker records
 *   (monitor.h): the new worker reads the old worker's journal, and the
 *   new monitor the old one's hand-over. Releases before the first with a
 *   hand-over cannot be upgraded from.
 */
#ifndef PROTO_HANDOVER_H
#define PROTO_HANDOVER_H

#include <stddef.h>
#include <stdint.h>

#define HANDOVER_MAGIC     0x5050484fU   /* "PPHO" */
#define HANDOVER_VERSION   1
#define HANDOVER_CALLS_MAX 65535         /* one per Call ID */
#define HANDOVER_IFNAME    16            /* IFNAMSIZ, NUL included */

/* A call's flags: the monitor-worker protocol's MON_CALL_* as CALL_START
 * had them, and what the monitor had set up for it */
#define HANDOVER_F_GUARDED  0x00010000   /* in the GRE guard's map */
#define HANDOVER_F_ORPHAN   0x00020000   /* ending: no worker's any more;
                                            its descriptors are closed
                                            (-1) */

struct handover_head {
	uint32_t magic;
	uint16_t version;
	uint16_t call_size;     /* sizeof(struct handover_call) */
	uint32_t calls;
	uint32_t generation;    /* workers started so far */
	int32_t  journal;       /* the journal's memfd */
	uint32_t reserved;
};

struct handover_call {
	uint16_t id, peer_id;
	uint32_t flags;         /* MON_CALL_* | HANDOVER_F_* */
	int32_t  pid;           /* its pppd, the monitor's child */
	uint32_t local, remote, client;   /* network order */
	int32_t  conn, report, pty;       /* descriptors (-1: none) */
	uint32_t shaped;        /* the interface index with its rate; 0 */
	uint32_t routed6;       /* the interface index of its /64's route */
	uint8_t  prefix6[16];   /* ... that /64 */
	/* with `shaped`: what the monitor's shaper set there */
	uint64_t shaped_down;
	uint32_t shaped_prio;
	uint32_t shaped_ingress_ours;
};

/* Write `head` (its calls set) and `calls` to `fd` from its start. 0,
 * or -1 with errno. */
int handover_write(int fd, const struct handover_head *head,
    const struct handover_call *calls);

/* Read a hand-over from `fd`: *calls is malloc'ed (free it; NULL when
 * there is none). 0, or -1 with *why set (nothing allocated). Checked:
 * the magic, version and layout, and in each call a Call ID, a pid and
 * descriptors that are open (fstat) and not 0-2. */
int handover_read(int fd, struct handover_head *head,
    struct handover_call **calls, const char **why);

#endif
