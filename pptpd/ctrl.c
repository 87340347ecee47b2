/* Control connection state machine (RFC 2637 section 2, server side).
 *
 *   WAIT_SCCRQ --SCCRQ/SCCRP--> ESTABLISHED --StopCCRQ/StopCCRP--> closed
 *
 * Everything a connection receives is validated here at the entry point; a
 * message that cannot be framed closes this connection only. A message that
 * frames but makes no sense in the current state is logged (rate-limited)
 * and dropped, so a confused or hostile peer cannot disturb its own live
 * calls, let alone anybody else's. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include "call.h"
#include "ctrl.h"
#include "msg.h"
#include "server.h"
#include "version.h"

enum ctrl_state {
	CTRL_WAIT_SCCRQ,
	CTRL_ESTABLISHED,
	CTRL_CLOSED,
};

struct ctrl {
	TAILQ_ENTRY(ctrl) entry;
	struct server    *srv;
	enum ctrl_state   state;
	int               fd;
	struct loop_fd    lf;
	struct sockaddr_in peer, local;
	char              name[32];        /* "a.b.c.d:port" for logs */
	struct call_list  calls;
	unsigned          ncalls;
	struct loop_timer setup_timer;     /* SCCRQ, then first OCRQ deadline */
	struct loop_timer echo_timer;
	int               echo_outstanding;
	uint32_t          echo_id;
	uint8_t           in[CTRL_INBUF_LEN];
	size_t            inlen;
	uint8_t           out[CTRL_OUTBUF_LEN];
	size_t            outlen;
};

static void ctrl_ready(void *arg, uint32_t events);
static void ctrl_echo_timeout(void *arg);

unsigned
ctrl_count_from(struct server *s, struct in_addr addr)
{
	unsigned n = 0;
	struct ctrl *c;
	TAILQ_FOREACH(c, &s->ctrls, entry)
		n += c->peer.sin_addr.s_addr == addr.s_addr;
	return n;
}

const char *
ctrl_peer_str(const struct ctrl *c)
{
	return c->name;
}

struct in_addr
ctrl_peer_addr(const struct ctrl *c)
{
	return c->peer.sin_addr;
}

static void
ctrl_setup_timeout(void *arg)
{
	struct ctrl *c = arg;
	ctrl_close(c, c->state == CTRL_WAIT_SCCRQ ?
	    "no Start-Control-Connection-Request in time" :
	    "no Outgoing-Call-Request in time");
}

struct ctrl *
ctrl_new(struct server *s, int fd, const struct sockaddr_in *peer,
    const struct sockaddr_in *local)
{
	struct ctrl *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->srv = s;
	c->fd = fd;
	c->peer = *peer;
	c->local = *local;
	c->state = CTRL_WAIT_SCCRQ;
	TAILQ_INIT(&c->calls);
	snprintf(c->name, sizeof(c->name), "%s:%u", inet_ntoa(peer->sin_addr),
	    ntohs(peer->sin_port));
	if (loop_fd_add(s->loop, &c->lf, fd, EPOLLIN, ctrl_ready, c) < 0) {
		free(c);
		return NULL;
	}
	loop_timer_set(s->loop, &c->setup_timer,
	    (uint64_t)s->conf->stimeout * 1000, ctrl_setup_timeout, c);
	TAILQ_INSERT_TAIL(&s->ctrls, c, entry);
	s->nctrls++;
	log_msg(LOG_DEBUG, "ctrl %s: connected", c->name);
	return c;
}

static void
ctrl_free(void *p)
{
	free(p);
}

void
ctrl_close(struct ctrl *c, const char *reason)
{
	struct server *s = c->srv;
	if (c->state == CTRL_CLOSED)
		return;
	c->state = CTRL_CLOSED;
	log_msg(LOG_INFO, "ctrl %s: closed: %s", c->name, reason);
	struct call *call;
	while ((call = TAILQ_FIRST(&c->calls)) != NULL)
		call_end(call, 0, "control connection closed");
	loop_timer_cancel(s->loop, &c->setup_timer);
	loop_timer_cancel(s->loop, &c->echo_timer);
	loop_fd_del(s->loop, &c->lf);
	close(c->fd);
	c->fd = -1;
	TAILQ_REMOVE(&s->ctrls, c, entry);
	server_ctrl_gone(s, c);
	loop_defer_free(s->loop, ctrl_free, c);
}

/* Queue bytes for the peer. A peer that does not read its control channel
 * while we have 8 KiB for it is stuck or hostile: close rather than grow. */
static int
ctrl_write(struct ctrl *c, const uint8_t *p, size_t len)
{
	if (c->outlen == 0) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			ctrl_close(c, strerror(errno));
			return -1;
		}
		if (n > 0) {
			p += n;
			len -= (size_t)n;
		}
	}
	if (len == 0)
		return 0;
	if (len > sizeof(c->out) - c->outlen) {
		ctrl_close(c, "peer does not read its control connection");
		return -1;
	}
	memcpy(c->out + c->outlen, p, len);
	c->outlen += len;
	loop_fd_mod(c->srv->loop, &c->lf, EPOLLIN | EPOLLOUT);
	return 0;
}

static int
ctrl_send(struct ctrl *c, const struct pptp_msg *m)
{
	uint8_t buf[PPTP_MAX_MSG_LEN];
	size_t len = msg_encode(m, buf, sizeof(buf));
	if (len == 0) {
		ctrl_close(c, "internal error: cannot encode reply");
		return -1;
	}
	log_msg(LOG_DEBUG, "ctrl %s: send %s", c->name, msg_name(m->type));
	return ctrl_write(c, buf, len);
}

static void
ctrl_flush(struct ctrl *c)
{
	ssize_t n = send(c->fd, c->out, c->outlen, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			ctrl_close(c, strerror(errno));
		return;
	}
	memmove(c->out, c->out + n, c->outlen - (size_t)n);
	c->outlen -= (size_t)n;
	if (c->outlen == 0)
		loop_fd_mod(c->srv->loop, &c->lf, EPOLLIN);
}

static void
ctrl_echo_arm(struct ctrl *c)
{
	loop_timer_set(c->srv->loop, &c->echo_timer,
	    c->echo_outstanding ? CTRL_ECHO_REPLY_MS : CTRL_ECHO_IDLE_MS,
	    ctrl_echo_timeout, c);
}

static void
ctrl_echo_timeout(void *arg)
{
	struct ctrl *c = arg;
	if (c->echo_outstanding) {
		ctrl_close(c, "no Echo-Reply");
		return;
	}
	struct pptp_msg m = { .type = PPTP_ECHORQ };
	m.u.echo.id = ++c->echo_id;
	c->echo_outstanding = 1;
	if (ctrl_send(c, &m) == 0)
		ctrl_echo_arm(c);
}

/* Log a message we drop without closing: rate-limited per daemon. */
static void
ctrl_drop(struct ctrl *c, const char *what, const char *reason)
{
	log_rl(&c->srv->rl_input, loop_now(c->srv->loop), LOG_NOTICE,
	    "ctrl %s: %s dropped: %s", c->name, what, reason);
}

static void
ctrl_on_sccrq(struct ctrl *c, const struct pptp_msg *m)
{
	struct pptp_msg r = { .type = PPTP_SCCRP };
	if (c->state != CTRL_WAIT_SCCRQ) {
		ctrl_drop(c, "Start-Control-Connection-Request",
		    "connection already established");
		return;
	}
	r.u.sccr.version = PPTP_VERSION;
	r.u.sccr.framing = PPTP_FRAMING_ASYNC | PPTP_FRAMING_SYNC;
	r.u.sccr.bearer = PPTP_BEARER_ANALOG | PPTP_BEARER_DIGITAL;
	r.u.sccr.max_channels = CTRL_MAX_CALLS;
	r.u.sccr.firmware = PPTPD_FIRMWARE_REV;
	snprintf(r.u.sccr.hostname, sizeof(r.u.sccr.hostname), "local");
	snprintf(r.u.sccr.vendor, sizeof(r.u.sccr.vendor), "pptpd");
	if (m->u.sccr.version != PPTP_VERSION) {
		r.u.sccr.result = PPTP_SCCRP_BAD_VERSION;
		ctrl_send(c, &r);
		ctrl_close(c, "unsupported protocol version");
		return;
	}
	r.u.sccr.result = PPTP_SCCRP_OK;
	if (ctrl_send(c, &r) < 0)
		return;
	c->state = CTRL_ESTABLISHED;
	loop_timer_set(c->srv->loop, &c->setup_timer, CTRL_OCRQ_TIMEOUT_MS,
	    ctrl_setup_timeout, c);
	ctrl_echo_arm(c);
	log_msg(LOG_DEBUG, "ctrl %s: established (peer vendor '%s')", c->name,
	    m->u.sccr.vendor);
}

static void
ctrl_on_ocrq(struct ctrl *c, const struct pptp_msg *m)
{
	struct pptp_msg r = { .type = PPTP_OCRP };
	const char *reason = NULL;
	struct call *call = NULL;

	r.u.ocrp.peer_call_id = m->u.ocrq.call_id;
	if (c->ncalls >= CTRL_MAX_CALLS) {
		r.u.ocrp.result = PPTP_OCRP_GENERAL_ERROR;
		r.u.ocrp.error = PPTP_ERR_NO_RESOURCE;
		reason = "too many calls on this connection";
	} else {
		call = call_new(c->srv, c, m, &r.u.ocrp.result, &r.u.ocrp.error, &reason);
	}
	if (call == NULL) {
		log_msg(LOG_WARNING, "ctrl %s: call %u refused: %s", c->name,
		    m->u.ocrq.call_id, reason);
		ctrl_send(c, &r);
		return;
	}
	TAILQ_INSERT_TAIL(&c->calls, call, c_entry);
	c->ncalls++;
	loop_timer_cancel(c->srv->loop, &c->setup_timer);
	r.u.ocrp.call_id = call->id;
	r.u.ocrp.result = PPTP_OCRP_CONNECTED;
	r.u.ocrp.speed = m->u.ocrq.max_bps;
	r.u.ocrp.window = PPTPD_RECV_WINDOW;
	r.u.ocrp.delay = 0;
	ctrl_send(c, &r);
}

static struct call *
ctrl_call_by_peer_id(struct ctrl *c, uint16_t peer_id)
{
	struct call *call;
	TAILQ_FOREACH(call, &c->calls, c_entry)
		if (call->peer_id == peer_id)
			return call;
	return NULL;
}

static struct call *
ctrl_call_by_id(struct ctrl *c, uint16_t id)
{
	struct call *call;
	TAILQ_FOREACH(call, &c->calls, c_entry)
		if (call->id == id)
			return call;
	return NULL;
}

static void
ctrl_on_ccrq(struct ctrl *c, const struct pptp_msg *m)
{
	/* CCRQ names the call by the PNS's own Call ID. */
	struct call *call = ctrl_call_by_peer_id(c, m->u.ccrq.call_id);
	if (call == NULL) {
		ctrl_drop(c, "Call-Clear-Request", "no such call on this connection");
		return;
	}
	call_end(call, PPTP_CDN_REQUEST, "call cleared by peer");
}

static void
ctrl_on_sli(struct ctrl *c, const struct pptp_msg *m)
{
	/* SLI names the call by the Call ID we (the PAC) assigned. */
	struct call *call = ctrl_call_by_id(c, m->u.sli.peer_call_id);
	if (call == NULL) {
		ctrl_drop(c, "Set-Link-Info", "no such call on this connection");
		return;
	}
	call_set_accm(call, m->u.sli.send_accm, m->u.sli.recv_accm);
}

static void
ctrl_on_icrq(struct ctrl *c, const struct pptp_msg *m)
{
	/* We are a server: calls come in as outgoing calls from the PNS. */
	struct pptp_msg r = { .type = PPTP_ICRP };
	r.u.icrp.peer_call_id = m->u.icrq.call_id;
	r.u.icrp.result = PPTP_ICRP_DO_NOT_ACCEPT;
	ctrl_drop(c, "Incoming-Call-Request", "incoming calls are not accepted");
	ctrl_send(c, &r);
}

static void
ctrl_on_stopccrq(struct ctrl *c)
{
	struct pptp_msg r = { .type = PPTP_STOPCCRP };
	r.u.stop.reason_or_result = PPTP_STOP_OK;
	if (ctrl_send(c, &r) == 0)
		ctrl_close(c, "Stop-Control-Connection-Request from peer");
}

static void
ctrl_on_echorq(struct ctrl *c, const struct pptp_msg *m)
{
	struct pptp_msg r = { .type = PPTP_ECHORP };
	r.u.echo.id = m->u.echo.id;
	r.u.echo.result = PPTP_ECHO_OK;
	ctrl_send(c, &r);
}

static void
ctrl_on_echorp(struct ctrl *c, const struct pptp_msg *m)
{
	if (!c->echo_outstanding || m->u.echo.id != c->echo_id) {
		ctrl_drop(c, "Echo-Reply", "does not answer our request");
		return;
	}
	c->echo_outstanding = 0;
}

/* One framed, decoded message. Before SCCRQ nothing else is allowed. */
static void
ctrl_dispatch(struct ctrl *c, const struct pptp_msg *m)
{
	log_msg(LOG_DEBUG, "ctrl %s: recv %s", c->name, msg_name(m->type));
	if (c->state == CTRL_WAIT_SCCRQ && m->type != PPTP_SCCRQ) {
		char why[96];
		snprintf(why, sizeof(why), "%s before Start-Control-Connection-Request",
		    msg_name(m->type));
		ctrl_close(c, why);
		return;
	}
	switch (m->type) {
	case PPTP_SCCRQ:   ctrl_on_sccrq(c, m); break;
	case PPTP_STOPCCRQ: ctrl_on_stopccrq(c); break;
	case PPTP_STOPCCRP: ctrl_close(c, "Stop-Control-Connection-Reply"); break;
	case PPTP_ECHORQ:  ctrl_on_echorq(c, m); break;
	case PPTP_ECHORP:  ctrl_on_echorp(c, m); break;
	case PPTP_OCRQ:    ctrl_on_ocrq(c, m); break;
	case PPTP_ICRQ:    ctrl_on_icrq(c, m); break;
	case PPTP_CCRQ:    ctrl_on_ccrq(c, m); break;
	case PPTP_SLI:     ctrl_on_sli(c, m); break;
	case PPTP_WEN:
		log_msg(LOG_INFO, "ctrl %s: WAN-Error-Notify for call %u: crc %u "
		    "framing %u overrun %u/%u timeout %u alignment %u", c->name,
		    m->u.wen.peer_call_id, m->u.wen.crc, m->u.wen.framing,
		    m->u.wen.hw_overrun, m->u.wen.buffer_overrun,
		    m->u.wen.timeout, m->u.wen.alignment);
		break;
	default:
		/* SCCRP, OCRP, ICRP, ICCN, CDN: what a PAC sends, not a PNS. */
		ctrl_drop(c, msg_name(m->type), "not expected from a client");
		break;
	}
}

/* Frame and handle every complete message in the input buffer. Returns -1
 * once the connection is closed. */
static int
ctrl_parse(struct ctrl *c)
{
	size_t off = 0;
	while (c->state != CTRL_CLOSED) {
		const char *reason = NULL;
		struct pptp_msg m;
		ssize_t len = msg_frame(c->in + off, c->inlen - off, &reason);
		if (len < 0) {
			ctrl_close(c, reason);
			return -1;
		}
		if (len == 0 || (size_t)len > c->inlen - off)
			break;
		if (msg_decode(c->in + off, (size_t)len, &m, &reason) < 0) {
			ctrl_close(c, reason);
			return -1;
		}
		off += (size_t)len;
		ctrl_dispatch(c, &m);
	}
	if (c->state == CTRL_CLOSED)
		return -1;
	memmove(c->in, c->in + off, c->inlen - off);
	c->inlen -= off;
	return 0;
}

static void
ctrl_read(struct ctrl *c)
{
	ssize_t n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen, MSG_DONTWAIT);
	if (n == 0) {
		ctrl_close(c, "peer closed the connection");
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			ctrl_close(c, strerror(errno));
		return;
	}
	c->inlen += (size_t)n;
	if (ctrl_parse(c) < 0)
		return;
	/* Any traffic proves the peer alive; the idle timer restarts. */
	if (c->state == CTRL_ESTABLISHED && !c->echo_outstanding)
		ctrl_echo_arm(c);
}

static void
ctrl_ready(void *arg, uint32_t events)
{
	struct ctrl *c = arg;
	if (events & EPOLLOUT)
		ctrl_flush(c);
	if (c->state != CTRL_CLOSED && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		ctrl_read(c);
}

void
ctrl_call_ended(struct ctrl *c, struct call *call, uint8_t result, uint8_t error,
    const char *stats)
{
	TAILQ_REMOVE(&c->calls, call, c_entry);
	c->ncalls--;
	if (!result || c->state != CTRL_ESTABLISHED)
		return;
	struct pptp_msg m = { .type = PPTP_CDN };
	m.u.cdn.call_id = call->id;
	m.u.cdn.result = result;
	m.u.cdn.error = error;
	snprintf(m.u.cdn.stats, sizeof(m.u.cdn.stats), "%s", stats ? stats : "");
	ctrl_send(c, &m);
}
