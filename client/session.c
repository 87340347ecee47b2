/* One session of pptp-load (see session.h). */
#include "client/session.h"

#include "client/clock.h"
#include "client/ipudp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define SESSION_TXBUF 1024
#define SESSION_RXBUF 2048
/* pptp-linux and the Linux kernel number GRE from 1, Windows from 0. */
#define GRE_FIRST_SEQ_WINDOWS 0
#define GRE_FIRST_SEQ_LINUX   1

static const char *const steps[SESSION_STEPS] = {
	"lcp", "auth", "ccp", "ipcp", "ipv6cp", "renegotiate", "reauth", "ra" };

const char *session_step_name(unsigned i)
{
	return i < SESSION_STEPS ? steps[i] : "?";
}

static void session_timer_fn(void *arg);

/* Run the timer at `at` (ms) unless it is already due earlier. */
static void rearm(struct session *s, uint64_t at)
{
	uint64_t now = clock_ms();

	if (at < now)
		at = now;
	if (timer_armed(&s->timer) && s->timer.at <= at)
		return;
	timers_arm(s->env->timers, &s->timer, now, at - now, session_timer_fn,
	    s);
}

/* ---- the end of a session ---- */

/* Release everything but the numbers. Called from the timer only, never
 * from inside a ctrl/ppp/gre callback, so none of them is freed while it
 * runs. */
static void release(struct session *s)
{
	if (s->fd >= 0) {
		epoll_ctl(s->env->epfd, EPOLL_CTL_DEL, s->fd, NULL);
		close(s->fd);
		s->fd = -1;
	}
	grecall_free(&s->gre);
	if (s->ppp) {
		ppp_free(s->ppp);
		s->ppp = NULL;
	}
	free(s->txbuf);
	s->txbuf = NULL;
	timer_del(&s->timer);
}

/* The session is over: keep the first reason, release at the next tick. */
static void end(struct session *s, enum session_reason r)
{
	if (s->state == SS_DONE)
		return;
	if (s->reason == SR_NONE)
		s->reason = r;
	if (s->was_up && r != SR_NONE && s->state != SS_CLOSING)
		s->lost_after_up = 1;
	s->state = SS_DONE;
	s->t_end_ns = clock_ns();
	grecall_detach(&s->gre);
	s->env->on_end(s->env->arg, s);
	rearm(s, 0);
}

/* ---- control connection ---- */

static int tcp_send(void *arg, const uint8_t *msg, size_t len)
{
	struct session *s = arg;
	ssize_t n = 0;

	if (s->fd < 0)
		return -1;
	if (s->txlen == 0) {
		n = send(s->fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (n < 0)
			n = 0;
		if ((size_t)n == len)
			return 0;
	}
	if (!s->txbuf && !(s->txbuf = malloc(SESSION_TXBUF)))
		return -1;
	if (s->txlen + len - (size_t)n > SESSION_TXBUF)
		return -1;
	memcpy(s->txbuf + s->txlen, msg + n, len - (size_t)n);
	s->txlen += (uint16_t)(len - (size_t)n);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.ptr = s };
	epoll_ctl(s->env->epfd, EPOLL_CTL_MOD, s->fd, &ev);
	return 0;
}

static void ppp_begin(struct session *s, uint64_t now);

static void ctrl_call_up(void *arg, uint16_t peer_call_id)
{
	struct session *s = arg;

	if (grecall_attach(&s->gre, s->env->server.sin_addr, peer_call_id) < 0) {
		end(s, SR_RESOURCES);
		return;
	}
	ppp_begin(s, clock_ms());
}

static void ctrl_done(void *arg, enum ctrl_reason r)
{
	struct session *s = arg;

	if (s->state == SS_CLOSING && r == CTRL_OK) {
		end(s, SR_NONE);
		return;
	}
	if (s->state == SS_CLOSING && r == CTRL_CLOSE_TIMEOUT) {
		end(s, s->was_up ? SR_NONE : SR_CLOSE_TIMEOUT);
		return;
	}
	s->ctrl_reason = r;
	end(s, SR_CTRL);
}

static const struct ctrl_ops ctrl_ops = {
	.send = tcp_send, .call_up = ctrl_call_up, .done = ctrl_done,
};

/* ---- PPP ---- */

static void ppp_output(void *arg, const uint8_t *frame, size_t len)
{
	struct session *s = arg;

	grecall_send(&s->gre, frame, len, 0);
}

static void start_streams(struct session *s, uint64_t now)
{
	if (s->env->nspecs == 0 || s->tun)
		return;
	s->streams = calloc(s->env->nspecs, sizeof(*s->streams));
	if (!s->streams)
		return;
	for (unsigned j = 0; j < s->env->nspecs; j++) {
		/* the run's tag keeps a long-running pptp-echo from taking
		 * this run's streams for an earlier run's (same tunnel address
		 * and ports); the low byte is the stream's index */
		stream_init(&s->streams[j], &s->env->specs[j],
		    (uint32_t)s->env->run_tag << 24 |
		    (uint32_t)(s->idx & 0xffff) << 8 | j, &s->env->rtt[j]);
		stream_start(&s->streams[j], now);
	}
}

static void ppp_up(void *arg, const struct ppp_facts *facts)
{
	struct session *s = arg;

	if (s->state != SS_PPP)
		return;
	s->facts = *facts;
	s->state = SS_UP;
	s->was_up = 1;
	s->t_up_ns = clock_ns();
	s->ppp_bytes = ppp_memory(s->ppp);
	s->env->on_up(s->env->arg, s);
	start_streams(s, clock_ms());
	rearm(s, 0);
}

static void deliver_udp(struct session *s, const uint8_t *ip, size_t len)
{
	struct ipudp u;
	struct probe p;

	if (ipudp_parse(ip, len, &u) < 0 || !s->streams ||
	    u.dport < SESSION_SPORT_BASE ||
	    u.dport >= SESSION_SPORT_BASE + s->env->nspecs ||
	    probe_decode(u.payload, u.len, &p) < 0)
		return;
	struct stream *st = &s->streams[u.dport - SESSION_SPORT_BASE];
	if (p.stream == st->id)
		stream_input(st, &p, clock_ns());
}

static void ppp_ip_input(void *arg, const uint8_t *ip, size_t len)
{
	struct session *s = arg;

	if (s->tun)
		s->env->tun_input(s->env->arg, s, ip, len);
	else
		deliver_udp(s, ip, len);
}

static void ppp_down(void *arg, enum ppp_reason r)
{
	struct session *s = arg;
	uint64_t now = clock_ms();

	if (s->state == SS_DONE)
		return;
	if (s->state == SS_CLOSING) {
		ctrl_close(&s->ctrl, now);
		rearm(s, 0);
		return;
	}
	/* the server ended PPP, or setup failed: clear the call ourselves */
	s->ppp_reason = r;
	snprintf(s->peer_msg, sizeof(s->peer_msg), "%s",
	    ppp_peer_message(s->ppp));
	s->reason = SR_PPP;
	if (s->was_up)
		s->lost_after_up = 1;
	s->state = SS_CLOSING;
	s->close_by = now + SESSION_CLOSE_MS;
	ctrl_close(&s->ctrl, now);
	rearm(s, 0);
}

static void ppp_step(void *arg, const char *step)
{
	struct session *s = arg;

	for (unsigned i = 0; i < SESSION_STEPS; i++)
		if (strcmp(step, steps[i]) == 0 && s->t_step_ns[i] == 0)
			s->t_step_ns[i] = clock_ns();
	if (strcmp(step, "ra") == 0 && ppp_ipv6_address(s->ppp, &s->ipv6) == 0)
		s->have_ipv6 = 1;
	/* Windows sends Set-Link-Info again once authenticated */
	if (strcmp(step, "auth") == 0 && s->env->profile == CTRL_PROFILE_WINDOWS)
		ctrl_send_sli(&s->ctrl);
}

static const struct ppp_ops ppp_ops = {
	.output = ppp_output, .up = ppp_up, .ip_input = ppp_ip_input,
	.down = ppp_down, .step = ppp_step,
};

static void ppp_begin(struct session *s, uint64_t now)
{
	struct ppp_config cfg = s->env->ppp;

	cfg.user = s->user;
	cfg.password = s->password;
	s->ppp = ppp_new(&cfg, &ppp_ops, s);
	if (!s->ppp) {
		end(s, SR_RESOURCES);
		return;
	}
	s->state = SS_PPP;
	ppp_start(s->ppp, now);
	rearm(s, 0);
}

/* ---- GRE ---- */

static void gre_deliver(void *arg, const uint8_t *frame, size_t len,
    uint64_t now)
{
	struct session *s = arg;

	if (s->ppp && s->state != SS_DONE) {
		ppp_input(s->ppp, frame, len, now);
		/* during setup a frame may start a retransmission timer;
		 * once up, the ack timer brings the next look within 100 ms */
		if (s->state == SS_PPP)
			rearm(s, 0);
	}
}

static void gre_rearm(void *arg, uint64_t at)
{
	rearm(arg, at);
}

static const struct grecall_ops gre_ops = {
	.deliver = gre_deliver, .rearm = gre_rearm,
};

/* ---- the session ---- */

void session_init(struct session *s, struct session_env *env, unsigned idx,
    struct in_addr src, const char *user, const char *password,
    uint16_t serial)
{
	uint8_t g[16];
	struct ctrl_config cc;

	memset(s, 0, sizeof(*s));
	s->kind = EPK_SESSION;
	s->env = env;
	s->idx = idx;
	s->src = src;
	s->fd = -1;
	s->user = user;
	s->password = password;
	for (unsigned i = 0; i < sizeof(g); i++)
		g[i] = (uint8_t)random();
	/* Windows' subaddress starts with a per-session GUID */
	snprintf(s->guid, sizeof(s->guid),
	    "{%02X%02X%02X%02X-%02X%02X-%02X%02X-%02X%02X-%02X%02X%02X%02X%02X%02X}",
	    g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10],
	    g[11], g[12], g[13], g[14], g[15]);
	memset(&cc, 0, sizeof(cc));
	cc.profile = env->profile;
	cc.call_id = grelink_pick_id(env->gre);
	cc.serial = serial;
	cc.subaddr = env->profile == CTRL_PROFILE_WINDOWS ? s->guid : NULL;
	ctrl_init(&s->ctrl, &cc, &ctrl_ops, s);
	grecall_init(&s->gre, env->gre, cc.call_id, src, &gre_ops, s,
	    env->profile == CTRL_PROFILE_WINDOWS ? GRE_FIRST_SEQ_WINDOWS :
	    GRE_FIRST_SEQ_LINUX);
}

void session_start(struct session *s, uint64_t now)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = s->src };
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.ptr = s };

	s->t_start_ns = clock_ns();
	s->setup_by = now + s->env->setup_ms;
	s->state = SS_CONNECTING;
	s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		end(s, SR_RESOURCES);
		return;
	}
	if (s->src.s_addr != INADDR_ANY &&
	    bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		end(s, SR_CONNECT);
		return;
	}
	if (connect(s->fd, (struct sockaddr *)&s->env->server,
	    sizeof(s->env->server)) < 0 && errno != EINPROGRESS) {
		end(s, SR_CONNECT);
		return;
	}
	if (epoll_ctl(s->env->epfd, EPOLL_CTL_ADD, s->fd, &ev) < 0) {
		end(s, SR_RESOURCES);
		return;
	}
	rearm(s, s->setup_by);
}

static void on_connected(struct session *s, uint64_t now)
{
	int err = 0;
	socklen_t el = sizeof(err);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = s };

	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err) {
		end(s, SR_CONNECT);
		return;
	}
	epoll_ctl(s->env->epfd, EPOLL_CTL_MOD, s->fd, &ev);
	s->state = SS_CTRL;
	ctrl_start(&s->ctrl, now);
	rearm(s, 0);
}

static void flush_tx(struct session *s)
{
	ssize_t n = send(s->fd, s->txbuf, s->txlen, MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
		end(s, SR_TCP_ERROR);
		return;
	}
	if (n > 0) {
		memmove(s->txbuf, s->txbuf + n, s->txlen - (size_t)n);
		s->txlen -= (uint16_t)n;
	}
	if (s->txlen == 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = s };
		epoll_ctl(s->env->epfd, EPOLL_CTL_MOD, s->fd, &ev);
	}
}

static void on_readable(struct session *s, uint64_t now)
{
	uint8_t buf[SESSION_RXBUF];

	for (;;) {
		ssize_t n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			ctrl_input(&s->ctrl, buf, (size_t)n, now);
			if (s->state == SS_DONE)
				return;
			/* a message may have started a wait (the linux
			 * profile's OCRQ delay, a teardown) */
			rearm(s, 0);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0 && errno == EINTR)
			continue;
		/* closed: the end of a teardown by pptp-linux's rules, or the
		 * server went away */
		if (s->state == SS_CLOSING &&
		    (s->ctrl.state == CTRL_ST_WAIT_STOPRP ||
		    s->ctrl.state == CTRL_ST_DONE))
			end(s, SR_NONE);
		else
			end(s, n == 0 ? SR_TCP_CLOSED : SR_TCP_ERROR);
		return;
	}
}

void session_event(struct session *s, uint32_t events, uint64_t now)
{
	if (s->state == SS_DONE || s->fd < 0)
		return;
	if (s->state == SS_CONNECTING) {
		if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			on_connected(s, now);
		return;
	}
	if ((events & EPOLLOUT) && s->txlen)
		flush_tx(s);
	if (s->state != SS_DONE && (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		on_readable(s, now);
}

static int stream_send(void *arg, const uint8_t *payload, size_t len)
{
	struct session *s = arg;
	uint8_t dg[IPUDP_HDR_LEN + PROBE_MAX_LEN];
	struct ipudp u = { .src = s->facts.local, .dst = s->env->target,
		.dport = s->env->target_port, .payload = payload, .len = len };
	/* which stream: the probe's id carries its index in the low byte */
	u.sport = (uint16_t)(SESSION_SPORT_BASE + (payload[11] & 0xff));
	size_t n = ipudp_build(dg, &u);
	return ppp_send_ip(s->ppp, dg, n);
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

static uint64_t streams_tick(struct session *s, uint64_t now)
{
	uint64_t next = 0, ns = clock_ns();

	if (!s->streams || s->state != SS_UP)
		return 0;
	for (unsigned j = 0; j < s->env->nspecs; j++)
		if (!stream_done(&s->streams[j]))
			next = earliest(next, stream_tick(&s->streams[j], now,
			    ns, stream_send, s));
	return next;
}

static void session_timer_fn(void *arg)
{
	struct session *s = arg;
	uint64_t now = clock_ms(), next = 0;

	if (s->state == SS_DONE) {
		release(s);
		return;
	}
	if (s->state < SS_UP && now >= s->setup_by) {
		session_close(s, now, SR_SETUP_TIMEOUT);
		if (s->state == SS_DONE)
			return;
	}
	if (s->state == SS_CLOSING && now >= s->close_by) {
		end(s, s->was_up && s->reason == SR_NONE ? SR_NONE :
		    s->reason ? s->reason : SR_CLOSE_TIMEOUT);
		return;
	}
	next = earliest(next, ctrl_timer(&s->ctrl, now));
	if (s->state == SS_DONE)
		return;
	if (s->ppp)
		next = earliest(next, ppp_timer(s->ppp, now));
	if (s->state == SS_DONE)
		return;
	next = earliest(next, grecall_timer(&s->gre, now));
	next = earliest(next, streams_tick(s, now));
	if (s->state < SS_UP)
		next = earliest(next, s->setup_by);
	if (s->state == SS_CLOSING)
		next = earliest(next, s->close_by);
	/* a deadline already past is looked at again next millisecond, not
	 * in this one: the loop must not spin on one session */
	if (next && next <= now)
		next = now + 1;
	if (next && s->state != SS_DONE)
		rearm(s, next);
}

void session_close(struct session *s, uint64_t now,
    enum session_reason reason_if_not_up)
{
	switch (s->state) {
	case SS_NEW:
	case SS_CONNECTING:
		end(s, reason_if_not_up);
		return;
	case SS_DONE:
	case SS_CLOSING:
		return;
	default:
		break;
	}
	if (!s->was_up && s->reason == SR_NONE)
		s->reason = reason_if_not_up;
	s->state = SS_CLOSING;
	s->close_by = now + SESSION_CLOSE_MS;
	if (s->ppp)
		ppp_close(s->ppp, now);   /* ppp_down then clears the call */
	else
		ctrl_close(&s->ctrl, now);
	rearm(s, 0);
}

void session_free(struct session *s)
{
	if (s->state != SS_NEW)
		release(s);
	free(s->streams);
	s->streams = NULL;
}

int session_send_ip(struct session *s, const uint8_t *ip, size_t len)
{
	if (s->state != SS_UP || !s->ppp)
		return -1;
	return ppp_send_ip(s->ppp, ip, len);
}

int session_streams_done(const struct session *s)
{
	if (s->state != SS_UP || s->env->nspecs == 0 || s->tun)
		return 1;
	if (!s->streams)
		return 1;
	for (unsigned j = 0; j < s->env->nspecs; j++)
		if (!stream_done(&s->streams[j]))
			return 0;
	return 1;
}

const char *session_reason_str(const struct session *s, char *buf,
    size_t len)
{
	switch (s->reason) {
	case SR_NONE: return "ok";
	case SR_CONNECT: return "tcp-connect-failed";
	case SR_TCP_CLOSED: return s->was_up ? "tcp-closed-by-server" :
	    "tcp-closed-mid-setup";
	case SR_TCP_ERROR: return "tcp-error";
	case SR_CTRL:
		return ctrl_reason_format(&s->ctrl, s->ctrl_reason, buf, len);
	case SR_PPP:
		if (s->ppp_reason == PPP_REASON_PEER_TERMINATE && s->peer_msg[0])
			snprintf(buf, len, "ppp-%s(%s)",
			    ppp_reason_str(s->ppp_reason), s->peer_msg);
		else
			snprintf(buf, len, "ppp-%s",
			    ppp_reason_str(s->ppp_reason));
		return buf;
	case SR_SETUP_TIMEOUT: return "setup-timeout";
	case SR_CLOSE_TIMEOUT: return "close-timeout";
	case SR_DEADLINE: return "deadline";
	case SR_RESOURCES: return "no-resources";
	}
	return "unknown";
}
