/* Control connection state machine (RFC 2637 section 2, server side).
 *
 *   WAIT_SCCRQ --SCCRQ/SCCRP--> ESTABLISHED --StopCCRQ/StopCCRP--> closed
 *                                    |
 *        shutdown, no call in time   |  calls hung up, then our StopCCRQ
 *                                    v
 *                                 STOPPING --StopCCRP or 3 s--> closed
 *
 * A connection without a live call (before its first OCRQ, and after its
 * last call has ended) is stopped after `stimeout` seconds: a peer that
 * only answers echoes cannot hold a connection slot for ever. Until then
 * it is on one of the server's lists of connections that hold no call
 * (ctrl_idle_arm), oldest first: when every slot is taken, a newcomer
 * takes the place of the first (ctrl_evict), so connections that say
 * nothing, or nothing but SCCRQ, cannot keep anybody out.
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
#include <sys/socket.h>
#include <unistd.h>

#include "pptpd/call.h"
#include "pptpd/client.h"
#include "pptpd/conf.h"
#include "pptpd/ctrl.h"
#include "pptpd/log.h"
#include "pptpd/loop.h"
#include "proto/msg.h"
#include "pptpd/pool.h"
#include "pptpd/version.h"

enum ctrl_state {
	CTRL_WAIT_SCCRQ,
	CTRL_ESTABLISHED,
	CTRL_STOPPING,
	CTRL_CLOSED,
};

struct ctrl {
	TAILQ_ENTRY(ctrl) entry;
	struct ctrls     *ctrls;
	struct client    *client;
	enum ctrl_state   state;
	int               fd;
	struct loop_fd    lf;
	struct loop_defer defer;
	struct sockaddr_in peer, local;
	char              name[32];        /* "a.b.c.d:port" for logs */
	struct call_list  calls;           /* until reaped */
	unsigned          ncalls;          /* on `calls` */
	unsigned          nlive;           /* of those, not ended yet */
	struct loop_timer setup_timer;     /* SCCRQ, then a call, in time */
	/* While it holds no live call: its place on the server's
	 * ctrls_unstarted or ctrls_idle (NULL: on neither). */
	TAILQ_ENTRY(ctrl) idle_entry;
	struct ctrl_list *idle_list;
	struct loop_timer echo_timer;
	struct loop_timer stop_timer;      /* StopCCRP in time */
	int               stop_sent;
	int               echo_outstanding;
	uint32_t          echo_id;
	uint16_t          ended_ids[CTRL_ENDED_IDS];   /* the peer's, a ring */
	unsigned          nended;                      /* ever ended */
	/* SO_RCVLOWAT now: 1, or the bytes of a message that has begun to
	 * arrive (ctrl_read); 0 before the first read sets it. */
	int               lowat;
	/* TCP, whose readiness honours it (a unix socket's, the fuzzer's,
	 * does not): see ctrl_read. */
	int               tcp;
	uint8_t           out[CTRL_OUTBUF_LEN];
	size_t            outlen;
};

static void ctrl_ready(void *arg, uint32_t events);
static void ctrl_echo_timeout(void *arg);

static void
ctrl_setup_timeout(void *arg)
{
	struct ctrl *c = arg;
	if (c->state == CTRL_WAIT_SCCRQ)
		ctrl_close(c, "no Start-Control-Connection-Request in time");
	else
		ctrl_stop(c, PPTP_CDN_ADMIN_SHUTDOWN, REPORT_CAUSE_NONE,
		    "no call in time");
}

/* It holds a live call now, or is going: no longer a candidate for
 * eviction, and no deadline to place a call. */
static void
ctrl_idle_disarm(struct ctrl *c)
{
	loop_timer_cancel(c->ctrls->loop, &c->setup_timer);
	if (c->idle_list == NULL)
		return;
	TAILQ_REMOVE(c->idle_list, c, idle_entry);
	c->idle_list = NULL;
}

/* No live call: the connection has `stimeout` to place one (to send its
 * SCCRQ first, before it is established), and joins the newest end of
 * the eviction candidates. */
static void
ctrl_idle_arm(struct ctrl *c)
{
	struct ctrls *s = c->ctrls;
	ctrl_idle_disarm(c);
	c->idle_list = c->state == CTRL_WAIT_SCCRQ ? &s->unstarted :
	    &s->idle;
	TAILQ_INSERT_TAIL(c->idle_list, c, idle_entry);
	loop_timer_set(s->loop, &c->setup_timer,
	    (uint64_t)s->conf->stimeout * 1000, ctrl_setup_timeout, c);
}

void
ctrls_init(struct ctrls *cs)
{
	TAILQ_INIT(&cs->list);
	TAILQ_INIT(&cs->unstarted);
	TAILQ_INIT(&cs->idle);
	ratelimit_init(&cs->rl_conn, CTRLS_RL_BURST, LOG_RL_PERIOD_MS);
}

struct ctrl *
ctrl_new(struct ctrls *s, int fd, const struct sockaddr_in *peer,
    const struct sockaddr_in *local, struct client *client)
{
	struct ctrl *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->ctrls = s;
	c->client = client;
	c->fd = fd;
	c->peer = *peer;
	c->local = *local;
	c->state = CTRL_WAIT_SCCRQ;
	c->lowat = 0;   /* not known: the first read sets it (a socket the
	                 * monitor hands on may come with another's) */
	int proto = 0;
	socklen_t plen = sizeof(proto);
	c->tcp = getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &plen) == 0 &&
	    proto == IPPROTO_TCP;
	TAILQ_INIT(&c->calls);
	snprintf(c->name, sizeof(c->name), "%s:%u", inet_ntoa(peer->sin_addr),
	    ntohs(peer->sin_port));
	if (loop_fd_add(s->loop, &c->lf, fd, EPOLLIN | EPOLLRDHUP, ctrl_ready,
	    c) < 0) {
		free(c);
		return NULL;
	}
	ctrl_idle_arm(c);
	client_ctrl_add(client);
	TAILQ_INSERT_TAIL(&s->list, c, entry);
	s->n++;
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
	struct ctrls *s = c->ctrls;
	struct call *call, *next;

	if (c->state == CTRL_CLOSED)
		return;
	c->state = CTRL_CLOSED;
	log_rl(&s->rl_conn, loop_now(s->loop), LOG_INFO, "ctrl %s: closed: %s",
	    c->name, reason);
	for (call = TAILQ_FIRST(&c->calls); call != NULL; call = next) {
		next = TAILQ_NEXT(call, c_entry);
		call_end(call, 0, "control connection closed");
	}
	/* Calls still ending stay on the server's list until reaped, and
	 * still count against the client address. */
	while ((call = TAILQ_FIRST(&c->calls)) != NULL) {
		TAILQ_REMOVE(&c->calls, call, c_entry);
		call_detach(call);
	}
	c->ncalls = c->nlive = 0;
	ctrl_idle_disarm(c);
	loop_timer_cancel(s->loop, &c->echo_timer);
	loop_timer_cancel(s->loop, &c->stop_timer);
	loop_fd_del(s->loop, &c->lf);
	/* Under privsep the monitor holds a copy of a connection with calls
	 * (until their pppd are reaped): the peer hears the end now, not at
	 * the last close. */
	shutdown(c->fd, SHUT_RDWR);
	close(c->fd);
	c->fd = -1;
	client_ctrl_gone(c->client);
	TAILQ_REMOVE(&s->list, c, entry);
	s->n--;
	s->gone(s->arg);
	loop_defer_free(s->loop, &c->defer, ctrl_free, c);
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
	loop_fd_mod(c->ctrls->loop, &c->lf, EPOLLIN | EPOLLRDHUP | EPOLLOUT);
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
		loop_fd_mod(c->ctrls->loop, &c->lf, EPOLLIN | EPOLLRDHUP);
}

static void
ctrl_echo_arm(struct ctrl *c)
{
	loop_timer_set(c->ctrls->loop, &c->echo_timer,
	    c->echo_outstanding ? CTRL_ECHO_REPLY_MS : CTRL_ECHO_IDLE_MS,
	    ctrl_echo_timeout, c);
}

static void
ctrl_stop_timeout(void *arg)
{
	ctrl_close(arg, "no Stop-Control-Connection-Reply in time");
}

/* Every call has ended: our Stop-Control-Connection-Request. */
static void
ctrl_send_stop(struct ctrl *c)
{
	struct pptp_msg m = { .type = PPTP_STOPCCRQ };
	if (c->stop_sent)
		return;
	c->stop_sent = 1;
	m.u.stop.reason_or_result = PPTP_STOP_REASON_LOCAL;
	if (ctrl_send(c, &m) == 0)
		loop_timer_set(c->ctrls->loop, &c->stop_timer, CTRL_STOP_REPLY_MS,
		    ctrl_stop_timeout, c);
}

void
ctrl_stop(struct ctrl *c, uint8_t cdn_result, enum report_cause cause,
    const char *reason)
{
	struct call *call, *next;

	if (c->state == CTRL_WAIT_SCCRQ) {
		ctrl_close(c, reason);
		return;
	}
	if (c->state != CTRL_ESTABLISHED)
		return;
	c->state = CTRL_STOPPING;
	log_rl(&c->ctrls->rl_conn, loop_now(c->ctrls->loop), LOG_INFO,
	    "ctrl %s: stopping: %s", c->name, reason);
	ctrl_idle_disarm(c);
	for (call = TAILQ_FIRST(&c->calls); call != NULL; call = next) {
		next = TAILQ_NEXT(call, c_entry);
		call_hangup(call, cdn_result, cause, reason);
	}
	if (c->state == CTRL_STOPPING && c->nlive == 0)
		ctrl_send_stop(c);
}

void
ctrl_stop_all(struct ctrls *s, uint8_t cdn_result, enum report_cause cause,
    const char *reason)
{
	struct ctrl *c, *next;

	/* ctrl_stop closes a connection still waiting for SCCRQ at once,
	 * taking it off the list: hold on to the next one first. */
	for (c = TAILQ_FIRST(&s->list); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		ctrl_stop(c, cdn_result, cause, reason);
	}
}

/* The peer is not answering: its calls end with a Call-Disconnect-Notify
 * and a Stop-Control-Connection-Request is sent, for the record, before
 * the connection closes without waiting. */
static void
ctrl_abort(struct ctrl *c, const char *reason)
{
	struct call *call, *next;
	struct pptp_msg m = { .type = PPTP_STOPCCRQ };

	for (call = TAILQ_FIRST(&c->calls); call != NULL; call = next) {
		next = TAILQ_NEXT(call, c_entry);
		call_end(call, PPTP_CDN_LOST_CARRIER, reason);
	}
	if (c->state == CTRL_CLOSED)
		return;
	m.u.stop.reason_or_result = PPTP_STOP_REASON_LOCAL;
	if (ctrl_send(c, &m) == 0)
		ctrl_close(c, reason);
}

int
ctrl_evict(struct ctrls *s)
{
	struct ctrl *c = TAILQ_FIRST(&s->unstarted);

	if (c != NULL) {
		ctrl_close(c, "replaced by a new connection (every slot taken, "
		    "and this one had sent no Start-Control-Connection-Request)");
		return 0;
	}
	if ((c = TAILQ_FIRST(&s->idle)) == NULL)
		return -1;
	ctrl_abort(c, "replaced by a new connection (every slot taken, and "
	    "this one had placed no call)");
	return 0;
}

static void
ctrl_echo_timeout(void *arg)
{
	struct ctrl *c = arg;
	if (c->echo_outstanding) {
		ctrl_abort(c, "no Echo-Reply");
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
	log_rl(c->ctrls->rl_input, loop_now(c->ctrls->loop), LOG_NOTICE,
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
	r.u.sccr.max_channels = (uint16_t)c->ctrls->conf->calls_per_conn;
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
	ctrl_idle_arm(c);
	ctrl_echo_arm(c);
	log_msg(LOG_DEBUG, "ctrl %s: established (peer vendor '%s')", c->name,
	    m->u.sccr.vendor);
}

static struct call *
ctrl_call_by_peer_id(struct ctrl *c, uint16_t peer_id)
{
	struct call *call;
	TAILQ_FOREACH(call, &c->calls, c_entry)
		if (call_is_live(call) && call->peer_id == peer_id)
			return call;
	return NULL;
}

/* Was `peer_id` the peer's Call ID of one of our last CTRL_ENDED_IDS calls
 * to end? */
static int
ctrl_ended_recently(const struct ctrl *c, uint16_t peer_id)
{
	unsigned n = c->nended < CTRL_ENDED_IDS ? c->nended : CTRL_ENDED_IDS;
	for (unsigned i = 0; i < n; i++)
		if (c->ended_ids[i] == peer_id)
			return 1;
	return 0;
}

static struct call *
ctrl_call_by_id(struct ctrl *c, uint16_t id)
{
	struct call *call;
	TAILQ_FOREACH(call, &c->calls, c_entry)
		if (call_is_live(call) && call->id == id)
			return call;
	return NULL;
}

/* The pool addresses one client address may hold (pool-share-per-client,
 * at least one); 0: no cap but the pool itself (no pool, or a share that
 * is all of it). Every call holds one until its pppd is reaped, so its
 * calls are what it holds. */
static unsigned
ctrl_pool_cap(const struct ctrls *s)
{
	const struct pool *pool = s->calls->pool;
	if (pool == NULL)
		return 0;
	size_t size = pool_size(pool);
	size_t cap = size * (size_t)s->conf->pool_share / 100;
	if (cap == 0)
		cap = 1;
	return cap < size ? (unsigned)cap : 0;
}

/* May this OCRQ start a call? NULL if so; otherwise why not, with the
 * OCRP result and error to answer. Calls still ending count everywhere:
 * their pppd and their address are still held. */
static const char *
ctrl_call_refusal(struct ctrl *c, const struct pptp_msg *m, uint8_t *result,
    uint8_t *error)
{
	const struct ctrls *s = c->ctrls;
	const struct conf *conf = s->conf;

	*result = PPTP_OCRP_GENERAL_ERROR;
	*error = PPTP_ERR_NO_RESOURCE;
	if (c->state != CTRL_ESTABLISHED)
		return "the connection is stopping";
	if (ctrl_call_by_peer_id(c, m->u.ocrq.call_id) != NULL) {
		*error = PPTP_ERR_BAD_CALL_ID;
		return "the peer's Call ID is already in use on this connection";
	}
	if (c->ncalls >= (unsigned)conf->calls_per_conn)
		return "too many calls on this connection (calls-per-connection)";
	if (conf->calls_per_client &&
	    client_calls(c->client) >= (unsigned)conf->calls_per_client)
		return "too many calls from this address (calls-per-client)";
	unsigned pool_cap = ctrl_pool_cap(s);
	if (pool_cap != 0 && client_calls(c->client) >= pool_cap)
		return "this address holds its share of the pool "
		    "(pool-share-per-client)";
	*result = PPTP_OCRP_BUSY;
	*error = PPTP_ERR_NONE;
	if (client_setups(c->client) >= (unsigned)conf->setups_per_client)
		return "too many call setups from this address (call-setups-per-client)";
	if (s->calls->setups >= (unsigned)conf->setups)
		return "too many call setups in progress (call-setups)";
	if (!client_setup_allow(c->client, loop_now(s->loop),
	    (unsigned)conf->call_rate))
		return "calls from this address too fast (call-rate-per-client)";
	return NULL;
}

static void ctrl_call_ended(void *arg, struct call *call, uint8_t result);
static void ctrl_call_gone(void *arg, struct call *call);

/* What a call needs of this connection. */
static struct call_conn
ctrl_call_conn(struct ctrl *c)
{
	return (struct call_conn){
		.arg = c,
		.peer = c->peer.sin_addr,
		.local = c->local.sin_addr,
		.peer_str = c->name,
		.sock = c->fd,
		.ended = ctrl_call_ended,
		.gone = ctrl_call_gone,
	};
}

/* The call the OCRQ asked for, told what it needs of this connection. */
static struct call *
ctrl_call_new(struct ctrl *c, const struct pptp_msg *m, uint8_t *result,
    uint8_t *error, const char **reason)
{
	const struct call_conn conn = ctrl_call_conn(c);
	return call_new(c->ctrls->calls, &conn, c->client, m, result, error,
	    reason);
}

static void
ctrl_on_ocrq(struct ctrl *c, const struct pptp_msg *m)
{
	struct pptp_msg r = { .type = PPTP_OCRP };
	struct call *call = NULL;
	const char *reason;

	r.u.ocrp.peer_call_id = m->u.ocrq.call_id;
	reason = ctrl_call_refusal(c, m, &r.u.ocrp.result, &r.u.ocrp.error);
	if (reason == NULL)
		call = ctrl_call_new(c, m, &r.u.ocrp.result, &r.u.ocrp.error,
		    &reason);
	c->ctrls->call_setup(c->ctrls->arg, call == NULL ? reason : NULL);
	if (call == NULL) {
		log_rl(c->ctrls->rl_input, loop_now(c->ctrls->loop), LOG_WARNING,
		    "ctrl %s: call %u refused: %s", c->name, m->u.ocrq.call_id,
		    reason);
		ctrl_send(c, &r);
		return;
	}
	TAILQ_INSERT_TAIL(&c->calls, call, c_entry);
	c->ncalls++;
	c->nlive++;
	ctrl_idle_disarm(c);
	r.u.ocrp.call_id = call->id;
	r.u.ocrp.result = PPTP_OCRP_CONNECTED;
	r.u.ocrp.speed = m->u.ocrq.max_bps;
	r.u.ocrp.window = PPTPD_RECV_WINDOW;
	r.u.ocrp.delay = 0;
	ctrl_send(c, &r);
}

struct ctrl *
ctrl_resume(struct ctrls *s, int fd, const struct sockaddr_in *peer,
    const struct sockaddr_in *local, struct client *client)
{
	struct ctrl *c = ctrl_new(s, fd, peer, local, client);

	if (c == NULL)
		return NULL;
	c->state = CTRL_ESTABLISHED;
	ctrl_idle_arm(c);
	ctrl_echo_arm(c);
	log_msg(LOG_INFO, "ctrl %s: taken over from the worker before", c->name);
	return c;
}

struct call *
ctrl_resume_call(struct ctrl *c, struct pppd_resumed *r, const char **reason)
{
	const struct call_conn conn = ctrl_call_conn(c);
	struct call *call;

	/* (closed by an earlier call of it that failed: freed after this
	 * round of the loop) */
	if (c->state == CTRL_CLOSED) {
		*reason = "its control connection was closed";
		return NULL;
	}
	call = call_resume(c->ctrls->calls, &conn, c->client, r,
	    reason);

	if (call == NULL)
		return NULL;
	TAILQ_INSERT_TAIL(&c->calls, call, c_entry);
	c->ncalls++;
	c->nlive++;
	ctrl_idle_disarm(c);
	if (*reason != NULL)
		call_resume_failed(call, *reason);   /* may close c */
	return call;
}

static void
ctrl_on_ccrq(struct ctrl *c, const struct pptp_msg *m)
{
	/* CCRQ names the call by the PNS's own Call ID. */
	struct call *call = ctrl_call_by_peer_id(c, m->u.ccrq.call_id);
	if (call == NULL && ctrl_ended_recently(c, m->u.ccrq.call_id)) {
		/* Our Call-Disconnect-Notify answers it already. */
		log_msg(LOG_DEBUG, "ctrl %s: Call-Clear-Request for call %u, "
		    "which has ended already (crossed our "
		    "Call-Disconnect-Notify)", c->name, m->u.ccrq.call_id);
		return;
	}
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
ctrl_on_stopccrp(struct ctrl *c)
{
	if (!c->stop_sent) {
		ctrl_drop(c, "Stop-Control-Connection-Reply", "nothing asked for it");
		return;
	}
	ctrl_close(c, "stopped");
}

static void
ctrl_on_wen(struct ctrl *c, const struct pptp_msg *m)
{
	/* A PNS has no WAN to report on: information at most, and a flood
	 * of them must not flood the log. */
	log_rl(c->ctrls->rl_input, loop_now(c->ctrls->loop), LOG_INFO,
	    "ctrl %s: WAN-Error-Notify for call %u: crc %u framing %u overrun "
	    "%u/%u timeout %u alignment %u", c->name, m->u.wen.peer_call_id,
	    m->u.wen.crc, m->u.wen.framing, m->u.wen.hw_overrun,
	    m->u.wen.buffer_overrun, m->u.wen.timeout, m->u.wen.alignment);
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
	case PPTP_STOPCCRP: ctrl_on_stopccrp(c); break;
	case PPTP_ECHORQ:  ctrl_on_echorq(c, m); break;
	case PPTP_ECHORP:  ctrl_on_echorp(c, m); break;
	case PPTP_OCRQ:    ctrl_on_ocrq(c, m); break;
	case PPTP_ICRQ:    ctrl_on_icrq(c, m); break;
	case PPTP_CCRQ:    ctrl_on_ccrq(c, m); break;
	case PPTP_SLI:     ctrl_on_sli(c, m); break;
	case PPTP_WEN:     ctrl_on_wen(c, m); break;
	default:
		/* SCCRP, OCRP, ICRP, ICCN, CDN: what a PAC sends, not a PNS. */
		ctrl_drop(c, msg_name(m->type), "not expected from a client");
		break;
	}
}

/* How many bytes of `buf` (`len` of them) are whole messages; *need is
 * the length of the first one not yet whole (0 when none has begun).
 * -1 with *reason when the stream is not PPTP. */
static ssize_t
ctrl_frame(const uint8_t *buf, size_t len, size_t *need, const char **reason)
{
	size_t off = 0;

	*need = 0;
	for (;;) {
		ssize_t m = msg_frame(buf + off, len - off, reason);
		if (m < 0)
			return -1;
		if (m == 0 || (size_t)m > len - off) {
			if (off < len)
				*need = m == 0 ? PPTP_HDR_LEN : (size_t)m;
			return (ssize_t)off;
		}
		off += (size_t)m;
	}
}

/* Until a begun message is whole, epoll says nothing of this socket
 * (SO_RCVLOWAT: TCP's readiness waits for that many bytes); then 1 again.
 * Without it the bytes left in the socket would wake the loop forever. */
static void
ctrl_lowat(struct ctrl *c, size_t need)
{
	int want = need > 0 ? (int)need : 1;
	if (want == c->lowat)
		return;
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof(want)) == 0)
		c->lowat = want;
}

/* Handle the `len` bytes of whole messages in buf. -1 once the
 * connection is closed. */
static int
ctrl_parse(struct ctrl *c, const uint8_t *buf, size_t len)
{
	size_t off = 0;
	while (off < len && c->state != CTRL_CLOSED) {
		const char *reason = NULL;
		struct pptp_msg m;
		ssize_t n = msg_frame(buf + off, len - off, &reason);
		if (n <= 0 || msg_decode(buf + off, (size_t)n, &m, &reason) < 0) {
			ctrl_close(c, reason != NULL ? reason : "bad framing");
			return -1;
		}
		off += (size_t)n;
		ctrl_dispatch(c, &m);
	}
	return c->state == CTRL_CLOSED ? -1 : 0;
}

/* Only whole messages leave the socket: a part of one stays in the
 * kernel's buffer until the rest has come. A worker that dies (privsep:
 * the monitor holds the connection for the next, doc/design/privsep.md)
 * then loses at most the whole messages it had taken (one read's worth),
 * never half a message, which would leave the stream out of step. The
 * bytes are looked at first (MSG_PEEK), then the whole messages among
 * them taken at once.
 *
 * Woken (TCP) with SO_RCVLOWAT already at this message's length, yet
 * shown less than the message: the bytes are there but a read will not
 * give them. TCP urgent data does that (a read stops at its mark, and PPTP
 * never sends any; one byte with MSG_OOB would otherwise spin the loop
 * until the connection's timers end it), and so does a receive queue the
 * kernel reports readable before it can be read in order. Closed. */
static void
ctrl_read(struct ctrl *c, uint32_t events)
{
	uint8_t buf[CTRL_INBUF_LEN];
	const char *reason = NULL;
	size_t need;
	ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);

	if (n == 0) {
		ctrl_close(c, "peer closed the connection");
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			ctrl_close(c, strerror(errno));
		return;
	}
	ssize_t whole = ctrl_frame(buf, (size_t)n, &need, &reason);
	if (whole < 0) {
		ctrl_close(c, reason);
		return;
	}
	if (whole == 0 && (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
		ctrl_close(c, "peer closed the connection in the middle of a "
		    "message");
		return;
	}
	if (whole == 0 && c->tcp && need > 1 && c->lowat == (int)need) {
		ctrl_close(c, "the stream stalled in the middle of a message "
		    "(TCP urgent data?)");
		return;
	}
	if (whole > 0 && recv(c->fd, buf, (size_t)whole, MSG_DONTWAIT) != whole) {
		ctrl_close(c, "the connection's input went away while read");
		return;
	}
	ctrl_lowat(c, need);
	if (whole == 0 || ctrl_parse(c, buf, (size_t)whole) < 0)
		return;
	/* Any traffic proves the peer alive; the idle timer restarts. */
	if ((c->state == CTRL_ESTABLISHED || c->state == CTRL_STOPPING) &&
	    !c->echo_outstanding)
		ctrl_echo_arm(c);
}

static void
ctrl_ready(void *arg, uint32_t events)
{
	struct ctrl *c = arg;
	if (events & EPOLLOUT)
		ctrl_flush(c);
	if (c->state != CTRL_CLOSED &&
	    (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
		ctrl_read(c, events);
}

/* The statistics field of a CDN goes to a peer that may not have
 * authenticated: a fixed text per result, the detail stays in our log. */
static const char *
ctrl_cdn_text(uint8_t result)
{
	switch (result) {
	case PPTP_CDN_LOST_CARRIER: return "lost carrier";
	case PPTP_CDN_ADMIN_SHUTDOWN: return "administrative shutdown";
	case PPTP_CDN_REQUEST: return "call cleared";
	default: return "call ended";
	}
}

static void
ctrl_call_ended(void *arg, struct call *call, uint8_t result)
{
	struct ctrl *c = arg;
	c->nlive--;
	c->ended_ids[c->nended++ % CTRL_ENDED_IDS] = call->peer_id;
	if (c->state != CTRL_ESTABLISHED && c->state != CTRL_STOPPING)
		return;
	if (result) {
		struct pptp_msg m = { .type = PPTP_CDN };
		m.u.cdn.call_id = call->id;
		m.u.cdn.result = result;
		m.u.cdn.error = PPTP_ERR_NONE;
		snprintf(m.u.cdn.stats, sizeof(m.u.cdn.stats), "%s",
		    ctrl_cdn_text(result));
		if (ctrl_send(c, &m) < 0)
			return;
	}
	if (c->nlive > 0)
		return;
	if (c->state == CTRL_STOPPING)
		ctrl_send_stop(c);
	else
		ctrl_idle_arm(c);
}

static void
ctrl_call_gone(void *arg, struct call *call)
{
	struct ctrl *c = arg;
	TAILQ_REMOVE(&c->calls, call, c_entry);
	c->ncalls--;
}
