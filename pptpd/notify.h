/* systemd's readiness protocol (sd_notify(3)): READY, RELOADING, STOPPING
 * and a STATUS line with the session count. Nothing is sent unless systemd
 * started us with NOTIFY_SOCKET set; without it the daemon runs as before. */
#ifndef PPTPD_NOTIFY_H
#define PPTPD_NOTIFY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pptpd/loop.h"

/* STATUS is sent when the count changes, at most once per this long: a
 * flood of calls must not become a flood of messages to PID 1. */
#define NOTIFY_STATUS_MS 1000
/* The longest message (notify_message). */
#define NOTIFY_MSG_LEN   96

/* What a message says besides its STATUS line. */
enum notify_state {
	NOTIFY_STATUS = 1,
	NOTIFY_READY,
	NOTIFY_RELOADING,
	NOTIFY_STOPPING,
};

/* Under privsep the worker's messages are the monitor's to send: it is
 * the unit's main pid (NotifyAccess=main), and the kernel lets only root
 * send in another pid's name. */
typedef void (*notify_relay_fn)(void *arg, enum notify_state state,
    unsigned sessions, unsigned ctrls);

struct notify {
	int               on;          /* NOTIFY_SOCKET was set */
	struct loop      *loop;
	struct loop_timer timer;       /* a STATUS waiting for its turn */
	uint64_t          sent_ms;     /* when the last STATUS went out */
	long              sent_count;  /* the count it carried; -1: none yet */
	/* The counts the server handed last: what a STATUS says. */
	unsigned          sessions, ctrls;
	notify_relay_fn   relay;       /* NULL: sent from here */
	void             *relay_arg;
};

void notify_init(struct notify *n, struct loop *loop);
/* The server listens and serves (also the end of a reload). Each says how
 * many sessions and control connections there are now. */
void notify_relay(struct notify *n, notify_relay_fn fn, void *arg);
void notify_ready(struct notify *n, unsigned sessions, unsigned ctrls);
void notify_reloading(struct notify *n, unsigned sessions, unsigned ctrls);
void notify_stopping(struct notify *n, unsigned sessions, unsigned ctrls);
/* A call started or ended: send STATUS now or after the rate limit. */
void notify_sessions_changed(struct notify *n, unsigned sessions,
    unsigned ctrls);
void notify_free(struct notify *n);
/* The datagram for `state`: "READY=1\nSTATUS=2 sessions active, ..."
 * into buf (NOTIFY_MSG_LEN is enough). */
void notify_message(char *buf, size_t len, enum notify_state state,
    unsigned sessions, unsigned ctrls);

#endif
