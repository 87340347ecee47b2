/* Client side of the PPTP control connection (see ctrl.h). Messages are
 * framed, decoded and encoded by proto/msg.c, the codec the server uses: it
 * handles every message type in both directions, so the client has no
 * codec of its own. */
#include "client/ctrl.h"

#include <stdio.h>
#include <string.h>

/* The ACCMs Windows puts in its Set-Link-Info: all control characters
 * escaped, which is what async PPP starts with (RFC 1662 7.1). */
#define CTRL_SLI_ACCM 0xffffffffU

static const char *const reasons[CTRL__COUNT] = {
	[CTRL_OK] = "ok",
	[CTRL_GARBAGE] = "ctrl-garbage",
	[CTRL_UNEXPECTED] = "ctrl-unexpected",
	[CTRL_SCCRP_REFUSED] = "sccrp-refused",
	[CTRL_OCRP_REFUSED] = "ocrp-refused",
	[CTRL_BAD_CALL_ID] = "ocrp-bad-call-id",
	[CTRL_SETUP_TIMEOUT] = "ctrl-setup-timeout",
	[CTRL_ECHO_TIMEOUT] = "ctrl-echo-timeout",
	[CTRL_CLEARED] = "call-cleared-by-server",
	[CTRL_STOPPED] = "stopped-by-server",
	[CTRL_CLOSE_TIMEOUT] = "close-timeout",
	[CTRL_SEND_FAILED] = "ctrl-send-failed",
};

const char *ctrl_reason_str(enum ctrl_reason r)
{
	return (unsigned)r < CTRL__COUNT ? reasons[r] : "unknown";
}

const char *ctrl_reason_format(const struct ctrl *c, enum ctrl_reason r,
    char *buf, size_t len)
{
	if (r == CTRL_SCCRP_REFUSED)
		snprintf(buf, len, "%s(result %u, error %u)", ctrl_reason_str(r),
		    c->refused_result, c->refused_error);
	else if (r == CTRL_OCRP_REFUSED)
		snprintf(buf, len, "%s(result %u, error %u, cause %u)",
		    ctrl_reason_str(r), c->refused_result, c->refused_error,
		    c->refused_cause);
	else if (r == CTRL_CLEARED)
		snprintf(buf, len, "%s(result %u, error %u, cause %u)",
		    ctrl_reason_str(r), c->cdn_result, c->cdn_error,
		    c->cdn_cause);
	else
		snprintf(buf, len, "%s", ctrl_reason_str(r));
	return buf;
}

void ctrl_init(struct ctrl *c, const struct ctrl_config *cfg,
    const struct ctrl_ops *ops, void *arg)
{
	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	c->ops = ops;
	c->arg = arg;
	if (c->cfg.setup_ms == 0)
		c->cfg.setup_ms = cfg->profile == CTRL_PROFILE_WINDOWS ?
		    CTRL_WIN_SETUP_MS : CTRL_LNX_SETUP_MS;
}

static void finish(struct ctrl *c, enum ctrl_reason r)
{
	if (c->state == CTRL_ST_DONE)
		return;
	c->state = CTRL_ST_DONE;
	c->deadline = 0;
	c->ops->done(c->arg, r);
}

static int send_msg(struct ctrl *c, const struct pptp_msg *m)
{
	uint8_t buf[PPTP_MAX_MSG_LEN];
	size_t n = msg_encode(m, buf, sizeof(buf));

	if (n == 0 || c->ops->send(c->arg, buf, n) < 0) {
		finish(c, CTRL_SEND_FAILED);
		return -1;
	}
	return 0;
}

static void send_sccrq(struct ctrl *c)
{
	struct pptp_msg m;
	int win = c->cfg.profile == CTRL_PROFILE_WINDOWS;

	memset(&m, 0, sizeof(m));
	m.type = PPTP_SCCRQ;
	m.u.sccr.version = PPTP_VERSION;
	if (win) {
		m.u.sccr.framing = CTRL_WIN_SCCRQ_FRAMING;
		m.u.sccr.bearer = CTRL_WIN_SCCRQ_BEARER;
		m.u.sccr.max_channels = CTRL_WIN_MAX_CHANNELS;
		m.u.sccr.firmware = CTRL_WIN_FIRMWARE;
		/* Windows leaves the host name zero */
		strcpy(m.u.sccr.vendor, CTRL_WIN_VENDOR);
	} else {
		m.u.sccr.framing = CTRL_LNX_SCCRQ_FRAMING;
		m.u.sccr.bearer = CTRL_LNX_SCCRQ_BEARER;
		m.u.sccr.max_channels = CTRL_LNX_MAX_CHANNELS;
		m.u.sccr.firmware = CTRL_LNX_FIRMWARE;
		strcpy(m.u.sccr.hostname, CTRL_LNX_HOSTNAME);
		strcpy(m.u.sccr.vendor, CTRL_LNX_VENDOR);
	}
	send_msg(c, &m);
}

static void send_ocrq(struct ctrl *c, uint64_t now)
{
	struct pptp_msg m;
	int win = c->cfg.profile == CTRL_PROFILE_WINDOWS;

	memset(&m, 0, sizeof(m));
	m.type = PPTP_OCRQ;
	m.u.ocrq.call_id = c->cfg.call_id;
	m.u.ocrq.serial = c->cfg.serial;
	m.u.ocrq.min_bps = win ? CTRL_WIN_MIN_BPS : CTRL_LNX_MIN_BPS;
	m.u.ocrq.max_bps = win ? CTRL_WIN_MAX_BPS : CTRL_LNX_MAX_BPS;
	m.u.ocrq.bearer = win ? CTRL_WIN_OCRQ_BEARER : CTRL_LNX_OCRQ_BEARER;
	m.u.ocrq.framing = win ? CTRL_WIN_OCRQ_FRAMING : CTRL_LNX_OCRQ_FRAMING;
	m.u.ocrq.window = win ? CTRL_WIN_WINDOW : CTRL_LNX_WINDOW;
	m.u.ocrq.delay = 0;
	if (c->cfg.subaddr)
		snprintf(m.u.ocrq.subaddr, sizeof(m.u.ocrq.subaddr), "%s",
		    c->cfg.subaddr);
	if (send_msg(c, &m) == 0) {
		c->state = CTRL_ST_WAIT_OCRP;
		c->deadline = now + c->cfg.setup_ms;
	}
}

static void send_simple(struct ctrl *c, uint16_t type)
{
	struct pptp_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	switch (type) {
	case PPTP_CCRQ:
		m.u.ccrq.call_id = c->cfg.call_id;
		break;
	case PPTP_STOPCCRQ:
		m.u.stop.reason_or_result = PPTP_STOP_REASON_NONE;
		break;
	case PPTP_STOPCCRP:
		m.u.stop.reason_or_result = PPTP_STOP_OK;
		break;
	}
	send_msg(c, &m);
}

void ctrl_start(struct ctrl *c, uint64_t now)
{
	c->idle_since = now;
	c->state = CTRL_ST_WAIT_SCCRP;
	c->deadline = now + c->cfg.setup_ms;
	send_sccrq(c);
}

void ctrl_send_sli(struct ctrl *c)
{
	struct pptp_msg m;

	if (c->state != CTRL_ST_UP)
		return;
	memset(&m, 0, sizeof(m));
	m.type = PPTP_SLI;
	m.u.sli.peer_call_id = c->peer_call_id;
	m.u.sli.send_accm = CTRL_SLI_ACCM;
	m.u.sli.recv_accm = CTRL_SLI_ACCM;
	send_msg(c, &m);
}

static void on_sccrp(struct ctrl *c, const struct pptp_msg *m, uint64_t now)
{
	c->seen |= CTRL_SEEN_SCCRP;
	if (m->u.sccr.result != PPTP_SCCRP_OK) {
		c->refused_result = m->u.sccr.result;
		c->refused_error = m->u.sccr.error;
		finish(c, CTRL_SCCRP_REFUSED);
		return;
	}
	if (c->cfg.profile == CTRL_PROFILE_LINUX) {
		c->state = CTRL_ST_OCRQ_DELAY;
		c->deadline = now + CTRL_LNX_OCRQ_DELAY_MS;
		return;
	}
	send_ocrq(c, now);
}

static void on_ocrp(struct ctrl *c, const struct pptp_msg *m)
{
	if (m->u.ocrp.peer_call_id != c->cfg.call_id) {
		finish(c, CTRL_BAD_CALL_ID);
		return;
	}
	if (m->u.ocrp.result != PPTP_OCRP_CONNECTED) {
		c->refused_result = m->u.ocrp.result;
		c->refused_error = m->u.ocrp.error;
		c->refused_cause = m->u.ocrp.cause;
		finish(c, CTRL_OCRP_REFUSED);
		return;
	}
	c->seen |= CTRL_SEEN_OCRP;
	c->peer_call_id = m->u.ocrp.call_id;
	c->state = CTRL_ST_UP;
	c->deadline = 0;
	/* Windows: Set-Link-Info before LCP starts */
	if (c->cfg.profile == CTRL_PROFILE_WINDOWS)
		ctrl_send_sli(c);
	if (c->state == CTRL_ST_UP)
		c->ops->call_up(c->arg, c->peer_call_id);
}

static void on_echo_request(struct ctrl *c, const struct pptp_msg *m)
{
	struct pptp_msg r;

	memset(&r, 0, sizeof(r));
	r.type = PPTP_ECHORP;
	r.u.echo.id = m->u.echo.id;
	r.u.echo.result = PPTP_ECHO_OK;
	send_msg(c, &r);
}

/* After our CCRQ was answered (or the server cleared the call while we
 * were closing): Windows stops the control connection, pptp-linux just
 * closes TCP. */
static void after_cdn(struct ctrl *c, uint64_t now)
{
	if (c->cfg.profile == CTRL_PROFILE_LINUX) {
		finish(c, CTRL_OK);
		return;
	}
	c->state = CTRL_ST_WAIT_STOPRP;
	c->deadline = now + CTRL_CLOSE_WAIT_MS;
	send_simple(c, PPTP_STOPCCRQ);
}

/* Note what the server sent: the report shows it per session. */
static void note(struct ctrl *c, const struct pptp_msg *m)
{
	switch (m->type) {
	case PPTP_CDN:
		if (c->seen & CTRL_SEEN_CDN)
			return;
		c->seen |= CTRL_SEEN_CDN;
		c->cdn_result = m->u.cdn.result;
		c->cdn_error = m->u.cdn.error;
		c->cdn_cause = m->u.cdn.cause;
		return;
	case PPTP_STOPCCRP:
		c->seen |= CTRL_SEEN_STOPCCRP;
		return;
	case PPTP_STOPCCRQ:
		c->seen |= CTRL_SEEN_STOPCCRQ;
		return;
	}
}

static void dispatch(struct ctrl *c, const struct pptp_msg *m, uint64_t now)
{
	note(c, m);
	switch (m->type) {
	case PPTP_ECHORQ:
		on_echo_request(c, m);
		return;
	case PPTP_ECHORP:
		if (c->echo_sent && m->u.echo.id == c->echo_id)
			c->echo_sent = 0;
		return;
	case PPTP_STOPCCRQ:
		send_simple(c, PPTP_STOPCCRP);
		finish(c, c->state == CTRL_ST_WAIT_STOPRP ? CTRL_OK : CTRL_STOPPED);
		return;
	case PPTP_SLI:
	case PPTP_WEN:
		return;    /* allowed any time; nothing for a client to do */
	}
	switch (c->state) {
	case CTRL_ST_WAIT_SCCRP:
		if (m->type == PPTP_SCCRP) {
			on_sccrp(c, m, now);
			return;
		}
		break;
	case CTRL_ST_WAIT_OCRP:
		if (m->type == PPTP_OCRP) {
			on_ocrp(c, m);
			return;
		}
		if (m->type == PPTP_CDN) {
			finish(c, CTRL_CLEARED);
			return;
		}
		break;
	case CTRL_ST_UP:
		if (m->type == PPTP_CDN) {
			finish(c, CTRL_CLEARED);
			return;
		}
		break;
	case CTRL_ST_WAIT_CDN:
		if (m->type == PPTP_CDN) {
			after_cdn(c, now);
			return;
		}
		break;
	case CTRL_ST_WAIT_STOPRP:
		if (m->type == PPTP_STOPCCRP) {
			finish(c, CTRL_OK);
			return;
		}
		if (m->type == PPTP_CDN)
			return;    /* a late one for the call we cleared */
		break;
	default:
		break;
	}
	finish(c, CTRL_UNEXPECTED);
}

void ctrl_input(struct ctrl *c, const uint8_t *buf, size_t len, uint64_t now)
{
	while (len > 0 && c->state != CTRL_ST_DONE) {
		size_t take = sizeof(c->rx) - c->rx_len;
		if (take > len)
			take = len;
		memcpy(c->rx + c->rx_len, buf, take);
		c->rx_len += (uint16_t)take;
		buf += take;
		len -= take;
		for (;;) {
			const char *why = NULL;
			ssize_t n = msg_frame(c->rx, c->rx_len, &why);
			struct pptp_msg m;
			if (n < 0) {
				finish(c, CTRL_GARBAGE);
				return;
			}
			if (n == 0 || (size_t)n > c->rx_len)
				break;
			if (msg_decode(c->rx, (size_t)n, &m, &why) < 0) {
				finish(c, CTRL_GARBAGE);
				return;
			}
			memmove(c->rx, c->rx + n, c->rx_len - (size_t)n);
			c->rx_len -= (uint16_t)n;
			c->idle_since = now;
			dispatch(c, &m, now);
			if (c->state == CTRL_ST_DONE)
				return;
		}
	}
}

void ctrl_close(struct ctrl *c, uint64_t now)
{
	switch (c->state) {
	case CTRL_ST_UP:
		c->state = CTRL_ST_WAIT_CDN;
		c->deadline = now + CTRL_CLOSE_WAIT_MS;
		send_simple(c, PPTP_CCRQ);
		return;
	case CTRL_ST_WAIT_OCRP:
	case CTRL_ST_OCRQ_DELAY:
		after_cdn(c, now);
		return;
	case CTRL_ST_WAIT_CDN:
	case CTRL_ST_WAIT_STOPRP:
	case CTRL_ST_DONE:
		return;
	default:
		finish(c, CTRL_OK);
		return;
	}
}

static void echo_tick(struct ctrl *c, uint64_t now)
{
	if (c->echo_sent) {
		if (now >= c->echo_sent + CTRL_ECHO_WAIT_MS)
			finish(c, CTRL_ECHO_TIMEOUT);
		return;
	}
	if (now >= c->idle_since + CTRL_ECHO_IDLE_MS) {
		struct pptp_msg m;
		memset(&m, 0, sizeof(m));
		m.type = PPTP_ECHORQ;
		m.u.echo.id = ++c->echo_id;
		c->echo_sent = now;
		send_msg(c, &m);
	}
}

uint64_t ctrl_timer(struct ctrl *c, uint64_t now)
{
	if (c->state == CTRL_ST_DONE || c->state == CTRL_ST_IDLE)
		return 0;
	if (c->deadline && now >= c->deadline) {
		switch (c->state) {
		case CTRL_ST_OCRQ_DELAY:
			send_ocrq(c, now);
			break;
		case CTRL_ST_WAIT_SCCRP:
		case CTRL_ST_WAIT_OCRP:
			finish(c, CTRL_SETUP_TIMEOUT);
			return 0;
		default:
			finish(c, CTRL_CLOSE_TIMEOUT);
			return 0;
		}
	}
	if (c->state == CTRL_ST_UP) {
		echo_tick(c, now);
		if (c->state != CTRL_ST_UP)
			return 0;
		return c->echo_sent ? c->echo_sent + CTRL_ECHO_WAIT_MS :
		    c->idle_since + CTRL_ECHO_IDLE_MS;
	}
	return c->state == CTRL_ST_DONE ? 0 : c->deadline;
}
