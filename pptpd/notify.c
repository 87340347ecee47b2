/* sd_notify(3) for Type=notify units: systemd learns when we are ready
 * (after the listener, the GRE socket, the metrics endpoint and the signals
 * are set up), when we reload and stop, and how many sessions we carry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "pptpd/log.h"
#include "pptpd/notify.h"

#define NOTIFY_STATUS_LEN 96

void
notify_init(struct notify *n, struct loop *loop)
{
	n->on = getenv("NOTIFY_SOCKET") != NULL;
	n->loop = loop;
	n->sent_count = -1;
}

static void
notify_count(struct notify *n, unsigned sessions, unsigned ctrls)
{
	n->sessions = sessions;
	n->ctrls = ctrls;
}

/* `state` ("READY=1", ...) with the STATUS line: one datagram. */
static void
notify_send(struct notify *n, const char *state)
{
	char msg[NOTIFY_STATUS_LEN];

	if (!n->on)
		return;
	snprintf(msg, sizeof(msg), "%s%sSTATUS=%u session%s active, %u control "
	    "connection%s", state, state[0] ? "\n" : "", n->sessions,
	    n->sessions == 1 ? "" : "s", n->ctrls, n->ctrls == 1 ? "" : "s");
	/* Failing to reach systemd is not worth stopping for; at most a few
	 * lines a second (the STATUS rate limit). */
	int rc = n->as != 0 ? sd_pid_notify(n->as, 0, msg) : sd_notify(0, msg);
	if (rc < 0)
		log_msg(LOG_WARNING, "sd_notify: %s", strerror(-rc));
	n->sent_ms = loop_now(n->loop);
	n->sent_count = (long)n->sessions;
}

void
notify_as(struct notify *n, pid_t pid)
{
	n->as = pid;
}

void
notify_ready(struct notify *n, unsigned sessions, unsigned ctrls)
{
	notify_count(n, sessions, ctrls);
	notify_send(n, "READY=1");
}

void
notify_reloading(struct notify *n, unsigned sessions, unsigned ctrls)
{
	notify_count(n, sessions, ctrls);
	notify_send(n, "RELOADING=1");
}

void
notify_stopping(struct notify *n, unsigned sessions, unsigned ctrls)
{
	notify_count(n, sessions, ctrls);
	notify_send(n, "STOPPING=1");
}

static void
notify_status_due(void *arg)
{
	struct notify *n = arg;
	if ((long)n->sessions != n->sent_count)
		notify_send(n, "");
}

void
notify_sessions_changed(struct notify *n, unsigned sessions, unsigned ctrls)
{
	uint64_t now = loop_now(n->loop);

	notify_count(n, sessions, ctrls);
	if (!n->on || loop_timer_armed(&n->timer))
		return;
	/* Never straight from here: a flood of calls must not become a flood
	 * of messages, so STATUS waits for the timer, which sends the counts
	 * handed last. One of two delays, not the exact rest of the second:
	 * the loop keeps a timer list per delay (common/timer.h), and a few
	 * ms late does not matter. */
	loop_timer_set(n->loop, &n->timer, now >= n->sent_ms + NOTIFY_STATUS_MS ?
	    0 : NOTIFY_STATUS_MS, notify_status_due, n);
}

void
notify_free(struct notify *n)
{
	loop_timer_cancel(n->loop, &n->timer);
}
