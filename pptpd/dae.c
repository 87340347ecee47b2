/* The Dynamic Authorization server (dae.h). The RADIUS side is ours
 * (radius.c, on libcrypto's MD5): no library in Debian implements the NAS
 * side of RFC 5176. Sessions are found with the selector `pptpctl kill`
 * uses (callsel.h) and hung up by the same call_hangup(). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pptpd/call.h"
#include "pptpd/callsel.h"
#include "pptpd/conf.h"
#include "pptpd/dae.h"
#include "pptpd/dae_clients.h"
#include "pptpd/log.h"
#include "proto/msg.h"
#include "pptpd/radius.h"
#include "pptpd/shaper.h"
#include "common/strclean.h"

_Static_assert(CALL_NAME_MAX >= RADIUS_ATTR_MAX_VAL,
    "a session's names are compared whole with what a request gives");

/* Datagrams read per wake-up: a flood cannot hold the loop. */
#define DAE_BATCH        64
/* Answered requests (and sessions they hang up) logged per second. */
#define DAE_RL_REQ       50

/* A request answered: its key, and the answer for a retransmission. */
struct dae_cached {
	struct in_addr from;
	uint8_t        id;
	uint8_t        auth[RADIUS_AUTH_LEN];
	uint64_t       at_ms;     /* 0: empty slot */
	size_t         len;
	uint8_t       *answer;    /* NULL: none could be kept (out of memory) */
};

struct dae {
	struct loop      *loop;
	const struct conf *conf;
	struct calls     *calls;
	int               fd;
	struct loop_fd    lf;
	struct ratelimit  rl_drop;   /* dropped datagrams */
	struct ratelimit  rl_req;    /* answered requests */
	struct dae_cached cache[DAE_CACHE_SLOTS];
	unsigned          next;      /* the slot to fill next (oldest) */
};

/* One datagram and where it came from and went to. */
struct dae_dgram {
	const uint8_t     *buf;
	size_t             len;
	struct sockaddr_in from;
	struct in_addr     to;      /* our address it was sent to */
	char               from_str[INET_ADDRSTRLEN + 8];
};

static uint64_t
dae_now(const struct dae *d)
{
	return loop_now(d->loop);
}

static int
dae_cache_live(const struct dae *d, const struct dae_cached *e)
{
	return e->at_ms != 0 && dae_now(d) - e->at_ms < DAE_CACHE_MS;
}

static struct dae_cached *
dae_cache_find(struct dae *d, const struct dae_dgram *g,
    const struct radius_pkt *p)
{
	for (unsigned i = 0; i < DAE_CACHE_SLOTS; i++) {
		struct dae_cached *e = &d->cache[i];
		if (dae_cache_live(d, e) &&
		    e->from.s_addr == g->from.sin_addr.s_addr && e->id == p->id &&
		    memcmp(e->auth, p->auth, RADIUS_AUTH_LEN) == 0)
			return e;
	}
	return NULL;
}

/* Every slot holds a request that could still be replayed. */
static int
dae_cache_full(const struct dae *d)
{
	return dae_cache_live(d, &d->cache[d->next]);
}

/* Remember an answered request: in the oldest slot, which is not live
 * (dae_cache_full was asked first). */
static void
dae_cache_put(struct dae *d, const struct dae_dgram *g,
    const struct radius_pkt *p, const uint8_t *answer, size_t len)
{
	struct dae_cached *e = &d->cache[d->next];
	free(e->answer);
	d->next = (d->next + 1) % DAE_CACHE_SLOTS;
	*e = (struct dae_cached){ .from = g->from.sin_addr, .id = p->id,
	    .at_ms = dae_now(d), .len = len,
	    .answer = len > 0 ? malloc(len) : NULL };
	memcpy(e->auth, p->auth, RADIUS_AUTH_LEN);
	if (e->answer != NULL)
		memcpy(e->answer, answer, len);
}

/* From the address the request was sent to, so the client sees the
 * answer come from where it sent (the socket may be bound to any). */
static void
dae_send(struct dae *d, const struct dae_dgram *g, const uint8_t *buf,
    size_t len)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
	} cbuf;
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_name = (void *)&g->from,
	    .msg_namelen = sizeof(g->from), .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	struct in_pktinfo pi = { .ipi_spec_dst = g->to };

	memset(cbuf.buf, 0, sizeof(cbuf.buf));
	c->cmsg_level = IPPROTO_IP;
	c->cmsg_type = IP_PKTINFO;
	c->cmsg_len = CMSG_LEN(sizeof(pi));
	memcpy(CMSG_DATA(c), &pi, sizeof(pi));
	if (sendmsg(d->fd, &mh, MSG_DONTWAIT) < 0)
		log_rl(&d->rl_drop, dae_now(d), LOG_WARNING, "dae: cannot answer "
		    "%s: %s", g->from_str, strerror(errno));
}

/* Does the NAS-IP-Address name us? The address the request was sent to
 * does, and so does `listen` (what radius.so may give as ours). */
static int
dae_nas_ip_ours(const struct dae *d, const struct dae_dgram *g, uint32_t ip)
{
	return ip == g->to.s_addr || (d->conf->listen.s_addr != INADDR_ANY &&
	    ip == d->conf->listen.s_addr);
}

/* The sessions a Disconnect-Request names (every fact it gives). The
 * plugin's facts were cleaned for the log: the names are cleaned the same
 * way, so a name is found as it is shown. */
static void
dae_selector(struct radius_dm *dm, struct callsel *sel)
{
	*sel = (struct callsel){ 0 };
	if (dm->has_user) {
		str_clean_inplace(dm->user);
		sel->user = dm->user;
	}
	if (dm->has_acct_session_id) {
		str_clean_inplace(dm->acct_session_id);
		sel->acct_session_id = dm->acct_session_id;
	}
	sel->by_tunnel = dm->has_framed_ip;
	sel->tunnel.s_addr = dm->framed_ip;
}

/* What is done with an authenticated request: the answer's code, its
 * Error-Cause (0: none) and why, and the session it hung up. */
struct dae_verdict {
	uint8_t      code;
	uint32_t     cause;
	const char  *why;
	struct call *hung_up;
	struct call *changed;    /* a CoA-Request's session, its rate set */
	char         whybuf[160];   /* `why` when it is not a static text */
};

/* The NAK of a request's code. */
static uint8_t
dae_nak(uint8_t code)
{
	return code == RADIUS_COA_REQUEST ? RADIUS_COA_NAK : RADIUS_DISCONNECT_NAK;
}

/* The one session a request names: NULL with the NAK's cause set in `v`
 * when none or more than one does. */
static struct call *
dae_one(struct dae *d, struct radius_dm *dm, struct dae_verdict *v)
{
	struct callsel sel;
	struct call *c, *one = NULL;
	unsigned n = 0;

	dae_selector(dm, &sel);
	for (c = NULL; (c = callsel_next(&sel, d->calls, c)) != NULL; n++)
		one = c;
	if (n == 0) {
		v->cause = RADIUS_ERR_SESSION_NOT_FOUND;
		v->why = "no session matches";
	} else if (n > 1) {
		v->cause = RADIUS_ERR_MULTIPLE_SESSIONS;
		v->why = "more than one session matches; none changed";
	}
	return n == 1 ? one : NULL;
}

/* A CoA-Request that radius_dm_decode() and the NAS-IP-Address check let
 * through: the one session it names gets its new rate (WISPr). */
static void
dae_coa(struct dae *d, struct radius_dm *dm, struct dae_verdict *v)
{
	struct call *one;

	v->code = RADIUS_COA_NAK;
	if ((dm->has_rate_down && !shaper_rate_ok(dm->rate_down)) ||
	    (dm->has_rate_up && !shaper_rate_ok(dm->rate_up))) {
		v->cause = RADIUS_ERR_INVALID_ATTRIBUTE_VALUE;
		v->why = "a rate neither 0 nor within the bounds pptpd sets";
		return;
	}
	if ((one = dae_one(d, dm, v)) == NULL)
		return;
	if (one->state != CALL_ACTIVE) {
		v->cause = RADIUS_ERR_SESSION_NOT_FOUND;
		v->why = "the session is being hung up";
		return;
	}
	if (call_set_rate(one, dm->has_rate_down, dm->rate_down,
	    dm->has_rate_up, dm->rate_up, "coa", v->whybuf,
	    sizeof(v->whybuf)) < 0) {
		v->cause = RADIUS_ERR_RESOURCES_UNAVAILABLE;
		v->why = v->whybuf;
		return;
	}
	v->code = RADIUS_COA_ACK;
	v->changed = one;
}

/* A Disconnect-Request that radius_dm_decode() and the NAS-IP-Address
 * check let through: exactly one session is hung up (one already hanging
 * up counts: it is going). */
static void
dae_disconnect(struct dae *d, const struct dae_dgram *g, struct radius_dm *dm,
    struct dae_verdict *v)
{
	struct call *one;

	v->code = RADIUS_DISCONNECT_NAK;
	if ((one = dae_one(d, dm, v)) != NULL) {
		char reason[sizeof(one->hangup_reason)];
		snprintf(reason, sizeof(reason), "RADIUS Disconnect-Request from %s",
		    inet_ntoa(g->from.sin_addr));
		call_hangup(one, PPTP_CDN_ADMIN_SHUTDOWN, REPORT_CAUSE_ADMIN,
		    reason);
		v->code = RADIUS_DISCONNECT_ACK;
		v->hung_up = one;
	}
}

/* Decide on an authenticated request, whose attributes radius_dm_decode()
 * made `dm` of (`cause`, `why`: its verdict). */
static void
dae_decide(struct dae *d, const struct dae_dgram *g, const struct radius_pkt *p,
    struct radius_dm *dm, uint32_t cause, const char *why,
    struct dae_verdict *v)
{
	*v = (struct dae_verdict){ .code = dae_nak(p->code), .cause = cause,
	    .why = why };
	if (cause != 0)
		;
	else if (dm->has_nas_ip && !dae_nas_ip_ours(d, g, dm->nas_ip)) {
		v->cause = RADIUS_ERR_NAS_ID_MISMATCH;
		v->why = "NAS-IP-Address is not this server's";
	} else if (dae_cache_full(d)) {
		v->cause = RADIUS_ERR_RESOURCES_UNAVAILABLE;
		v->why = "the replay cache is full";
	} else if (p->code == RADIUS_COA_REQUEST)
		dae_coa(d, dm, v);
	else
		dae_disconnect(d, g, dm, v);
}

/* The one log line of an answered request, with the session it hung up. */
static void
dae_log_verdict(struct dae *d, const struct dae_dgram *g,
    const struct radius_pkt *p, const struct dae_verdict *v)
{
	const struct call *c = v->hung_up;
	char cbuf[16], r[40];

	if (v->changed != NULL)
		log_rl(&d->rl_req, dae_now(d), LOG_NOTICE, "dae: CoA-Request id %u "
		    "from %s: call %u/%u %s user %s: rate %s", p->id, g->from_str,
		    v->changed->id, v->changed->peer_id, v->changed->client_str,
		    v->changed->user[0] ? v->changed->user : "-",
		    v->changed->rate_down || v->changed->rate_up ?
		    call_rate_str(v->changed, r, sizeof(r)) : "unlimited");
	else if (c != NULL)
		log_rl(&d->rl_req, dae_now(d), LOG_NOTICE, "dae: Disconnect-Request "
		    "id %u from %s: call %u/%u %s user %s hung up", p->id,
		    g->from_str, c->id, c->peer_id, c->client_str,
		    c->user[0] ? c->user : "-");
	else
		log_rl(&d->rl_req, dae_now(d), LOG_NOTICE, "dae: %s id %u from %s: "
		    "NAK, Error-Cause %u (%s)", radius_code_name(p->code, cbuf,
		    sizeof(cbuf)), p->id, g->from_str, v->cause, v->why);
}

/* Build the answer into `b`: its length, or -1. */
static int
dae_build(const struct radius_pkt *p, const struct dae_client *cl,
    const struct dae_verdict *v, struct radius_builder *b)
{
	struct radius_attr a;

	radius_begin(b, v->code, p->id);
	if (v->cause != 0)
		radius_add_u32(b, RADIUS_ERROR_CAUSE, v->cause);
	for (size_t off = 0; radius_attr_next(p, &off, &a); )
		if (a.type == RADIUS_PROXY_STATE)
			radius_add(b, RADIUS_PROXY_STATE, a.value, a.len);
	if (p->msg_auth != NULL)
		radius_add_msg_auth(b);
	return radius_finish(b, p->auth, cl->secret, cl->slen);
}

/* Why an authenticated request is dropped unanswered: a replay by its
 * Event-Timestamp, or none where one is required. NULL: it is not. */
static const char *
dae_replay_check(const struct dae *d, const struct radius_dm *dm)
{
	if (!dm->has_timestamp)
		return d->conf->dae_require_timestamp ? "no Event-Timestamp "
		    "(radius-dae-require-timestamp)" : NULL;
	if (llabs((long long)dm->timestamp - (long long)time(NULL)) > DAE_WINDOW_S)
		return "Event-Timestamp outside the replay window";
	return NULL;
}

/* Validate at the entry: everything that drops a datagram is checked
 * here, with one reason and one log line. */
static void
dae_datagram(struct dae *d, struct dae_dgram *g)
{
	const struct dae_client *cl =
	    dae_clients_find(d->conf->dae_clients, g->from.sin_addr);
	struct radius_pkt p;
	struct radius_dm dm;
	const char *why = NULL, *dwhy = NULL;
	uint32_t cause = 0;
	char cbuf[16];

	if (cl == NULL)
		why = "not a client of radius-dae-clients";
	else if (radius_parse(&p, g->buf, g->len, &why) < 0)
		;
	else if (p.code != RADIUS_DISCONNECT_REQUEST && p.code != RADIUS_COA_REQUEST)
		why = "not a Disconnect- or CoA-Request";
	else if (!radius_request_verify(&p, cl->secret, cl->slen))
		why = "bad authenticator (wrong secret?)";
	else {
		cause = radius_dm_decode(&p, &dm, &dwhy);
		why = dae_replay_check(d, &dm);
	}
	if (why != NULL) {
		log_rl(&d->rl_drop, dae_now(d), LOG_WARNING, "dae: %s from %s "
		    "dropped: %s", cl != NULL && g->len >= 1 ?
		    radius_code_name(g->buf[0], cbuf, sizeof(cbuf)) : "datagram",
		    g->from_str, why);
		return;
	}
	struct dae_cached *e = dae_cache_find(d, g, &p);
	if (e != NULL) {
		log_rl(&d->rl_req, dae_now(d), LOG_INFO, "dae: %s id %u from %s: "
		    "a retransmission (or a replay), %s", radius_code_name(p.code,
		    cbuf, sizeof(cbuf)), p.id, g->from_str, e->answer != NULL ?
		    "answered again" : "not answered (its answer was not kept)");
		if (e->answer != NULL)
			dae_send(d, g, e->answer, e->len);
		return;
	}
	struct dae_verdict v;
	struct radius_builder b;
	dae_decide(d, g, &p, &dm, cause, dwhy, &v);
	dae_log_verdict(d, g, &p, &v);
	int n = dae_build(&p, cl, &v, &b);
	if (n < 0) {
		log_rl(&d->rl_drop, dae_now(d), LOG_WARNING, "dae: %s id %u from "
		    "%s: no answer (it would not fit, or libcrypto failed)",
		    radius_code_name(p.code, cbuf, sizeof(cbuf)), p.id, g->from_str);
		n = 0;
	}
	/* A request that acted is remembered even when its answer could not
	 * be built: a replay must find it. One that acted on nothing is not
	 * remembered when that would push out one that may still be replayed
	 * (its retransmission gets the same NAK anew). */
	if (!dae_cache_full(d))
		dae_cache_put(d, g, &p, b.buf, (size_t)n);
	if (n > 0)
		dae_send(d, g, b.buf, (size_t)n);
}

static void
dae_ready(void *arg, uint32_t events)
{
	struct dae *d = arg;
	(void)events;
	for (int i = 0; i < DAE_BATCH; i++) {
		/* One more than the largest packet: a longer datagram is
		 * padding after its Length (RFC 2865), so the cut is harmless. */
		uint8_t buf[RADIUS_MAX_LEN + 1];
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
		} cbuf;
		struct dae_dgram g = { .buf = buf };
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_name = &g.from, .msg_namelen = sizeof(g.from),
		    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
		    .msg_controllen = sizeof(cbuf.buf) };
		ssize_t n = recvmsg(d->fd, &mh, MSG_DONTWAIT);
		if (n < 0)
			return;
		if (mh.msg_namelen != sizeof(g.from) || g.from.sin_family != AF_INET)
			continue;
		g.len = (size_t)n;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
				struct in_pktinfo pi;
				memcpy(&pi, CMSG_DATA(c), sizeof(pi));
				g.to = pi.ipi_addr;
			}
		snprintf(g.from_str, sizeof(g.from_str), "%s:%u",
		    inet_ntoa(g.from.sin_addr), ntohs(g.from.sin_port));
		dae_datagram(d, &g);
	}
}

struct dae *
dae_new(struct loop *loop, const struct conf *conf, struct calls *calls,
    const struct sockaddr_in *addr, char *err, size_t errlen)
{
	struct dae *d = calloc(1, sizeof(*d));
	int one = 1;

	if (d == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	d->loop = loop;
	d->conf = conf;
	d->calls = calls;
	d->lf.fd = -1;
	ratelimit_init(&d->rl_drop, LOG_RL_BURST, LOG_RL_PERIOD_MS);
	ratelimit_init(&d->rl_req, DAE_RL_REQ, LOG_RL_PERIOD_MS);
	d->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (d->fd < 0 ||
	    setsockopt(d->fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) < 0 ||
	    bind(d->fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0 ||
	    loop_fd_add(loop, &d->lf, d->fd, EPOLLIN, dae_ready, d) < 0) {
		snprintf(err, errlen, "radius-dae-listen %s:%u: %s",
		    inet_ntoa(addr->sin_addr), ntohs(addr->sin_port), strerror(errno));
		dae_free(d);
		return NULL;
	}
	log_msg(LOG_NOTICE, "dae: serving RFC 5176 Disconnect-Requests on %s:%u",
	    inet_ntoa(addr->sin_addr), ntohs(addr->sin_port));
	return d;
}

void
dae_free(struct dae *d)
{
	if (d == NULL)
		return;
	if (d->lf.fd >= 0)
		loop_fd_del(d->loop, &d->lf);
	if (d->fd >= 0)
		close(d->fd);
	for (unsigned i = 0; i < DAE_CACHE_SLOTS; i++)
		free(d->cache[i].answer);
	free(d);
}
