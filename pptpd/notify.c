/* sd_notify(3) for Type=notify units: systemd learns when we are ready
 * (after the listener, the GRE socket, the metrics endpoint and the signals
 * are set up), when we reload and stop, and how many sessions we carry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "pptpd/log.h"
#include "pptpd/notify.h"
#include "pptpd/server.h"

#define NOTIFY_STATUS_LEN 96

void
notify_init(struct notify *n)
{
	n->on = getenv("NOTIFY_SOCKET") != NULL;
	n->sent_count = -1;
}

/* `state` ("READY=1", ...) with the STATUS line: one datagram. */
static void
notify_send(struct server *s, const char *state)
{
	char msg[NOTIFY_STATUS_LEN];
	unsigned n = server_sessions(s);

	if (!s->notify.on)
		return;
	snprintf(msg, sizeof(msg), "%s%sSTATUS=%u session%s active, %u control "
	    "connection%s", state, state[0] ? "\n" : "", n, n == 1 ? "" : "s",
	    s->nctrls, s->nctrls == 1 ? "" : "s");
	/* Failing to reach systemd is not worth stopping for; at most a few
	 * lines a second (the STATUS rate limit). */
	int rc = sd_notify(0, msg);
	if (rc < 0)
		log_msg(LOG_WARNING, "sd_notify: %s", strerror(-rc));
	s->notify.sent_ms = loop_now(s->loop);
	s->notify.sent_count = (long)n;
}

void
notify_ready(struct server *s)
{
	notify_send(s, "READY=1");
}

void
notify_reloading(struct server *s)
{
	notify_send(s, "RELOADING=1");
}

void
notify_stopping(struct server *s)
{
	notify_send(s, "STOPPING=1");
}

static void
notify_status_due(void *arg)
{
	struct server *s = arg;
	if ((long)server_sessions(s) != s->notify.sent_count)
		notify_send(s, "");
}

void
notify_sessions_changed(struct server *s)
{
	struct notify *n = &s->notify;
	uint64_t now = loop_now(s->loop);

	if (!n->on || loop_timer_armed(&n->timer))
		return;
	/* Never straight from here: the caller (call_end, the OCRQ handler)
	 * is half-way through changing the counts. One of two delays, not
	 * the exact rest of the second: the loop keeps a timer list per
	 * delay (common/timer.h), and a few ms late does not matter. */
	loop_timer_set(s->loop, &n->timer, now >= n->sent_ms + NOTIFY_STATUS_MS ?
	    0 : NOTIFY_STATUS_MS, notify_status_due, s);
}

void
notify_free(struct server *s)
{
	loop_timer_cancel(s->loop, &s->notify.timer);
}
