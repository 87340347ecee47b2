/* systemd's readiness protocol (sd_notify(3)): READY, RELOADING, STOPPING
 * and a STATUS line with the session count. Nothing is sent unless systemd
 * started us with NOTIFY_SOCKET set; without it the daemon runs as before. */
#ifndef PPTPD_NOTIFY_H
#define PPTPD_NOTIFY_H

#include <stdint.h>
#include <sys/types.h>

#include "pptpd/loop.h"

/* STATUS is sent when the count changes, at most once per this long: a
 * flood of calls must not become a flood of messages to PID 1. */
#define NOTIFY_STATUS_MS 1000

struct notify {
	int               on;          /* NOTIFY_SOCKET was set */
	struct loop      *loop;
	struct loop_timer timer;       /* a STATUS waiting for its turn */
	uint64_t          sent_ms;     /* when the last STATUS went out */
	long              sent_count;  /* the count it carried; -1: none yet */
	/* The counts the server handed last: what a STATUS says. */
	unsigned          sessions, ctrls;
	/* Sent in the name of this pid (0: our own): under privsep the worker
	 * speaks for the monitor, the unit's main pid (NotifyAccess=main).
	 * The kernel takes another pid's credentials from root only: an
	 * unprivileged worker will need the monitor to relay. */
	pid_t             as;
};

void notify_init(struct notify *n, struct loop *loop);
/* The server listens and serves (also the end of a reload). Each says how
 * many sessions and control connections there are now. */
void notify_as(struct notify *n, pid_t pid);
void notify_ready(struct notify *n, unsigned sessions, unsigned ctrls);
void notify_reloading(struct notify *n, unsigned sessions, unsigned ctrls);
void notify_stopping(struct notify *n, unsigned sessions, unsigned ctrls);
/* A call started or ended: send STATUS now or after the rate limit. */
void notify_sessions_changed(struct notify *n, unsigned sessions,
    unsigned ctrls);
void notify_free(struct notify *n);

#endif
