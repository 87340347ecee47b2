/* sd_notify(3) for Type=notify units: systemd learns when we are ready
 * (after the listener, the GRE socket, the metrics endpoint and the signals
 * are set up), when we reload and stop, and how many sessions we carry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "pptpd/log.h"
#include "pptpd/notify.h"

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

void
notify_message(char *buf, size_t len, enum notify_state state,
    unsigned sessions, unsigned ctrls)
{
	static const char *const words[] = { [NOTIFY_STATUS] = "",
		[NOTIFY_READY] = "READY=1\n", [NOTIFY_RELOADING] = "RELOADING=1\n",
		[NOTIFY_STOPPING] = "STOPPING=1\n" };

	snprintf(buf, len, "%sSTATUS=%u session%s active, %u control "
	    "connection%s", words[state], sessions, sessions == 1 ? "" : "s",
	    ctrls, ctrls == 1 ? "" : "s");
}

/* `state` with the STATUS line: one datagram. */
static void
notify_send(struct notify *n, enum notify_state state)
{
	char msg[NOTIFY_MSG_LEN];

	if (!n->on)
		return;
	n->sent_ms = loop_now(n->loop);
	n->sent_count = (long)n->sessions;
	if (n->relay != NULL) {
		n->relay(n->relay_arg, state, n->sessions, n->ctrls);
		return;
	}
	notify_message(msg, sizeof(msg), state, n->sessions, n->ctrls);
	/* Failing to reach systemd is not worth stopping for; at most a few
	 * lines a second (the STATUS rate limit). */
	int rc = sd_notify(0, msg);
	if (rc < 0)
		log_msg(LOG_WARNING, "sd_notify: %s", strerror(-rc));
}

void
notify_relay(struct notify *n, notify_relay_fn fn, void *arg)
{
	n->relay = fn;
	n->relay_arg = arg;
}

void
notify_ready(struct notify *n, unsigned sessions, unsigned ctrls)
{
	notify_count(n, sessions, ctrls);
	notify_send(n, NOTIFY_READY);
}

void
notify_reloading(struct notify *n, unsigned sessions, unsigned ctrls)
{
	notify_count(n, sessions, ctrls);
	notify_send(n, NOTIFY_RELOADING);
}

void
notify_stopping(struct notify *n, unsigned sessions, unsigned ctrls)
{
	notify_count(n, sessions, ctrls);
	notify_send(n, NOTIFY_STOPPING);
}

static void
notify_status_due(void *arg)
{
	struct notify *n = arg;
	if ((long)n->sessions != n->sent_count)
		notify_send(n, NOTIFY_STATUS);
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
