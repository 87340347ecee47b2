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

#include "call.h"
#include "callsel.h"
#include "dae.h"
#include "dae_clients.h"
#include "log.h"
#include "msg.h"
#include "radius.h"
#include "server.h"
#include "strclean.h"

/* Datagrams read per wake-up: a flood cannot hold the loop. */
#define DAE_BATCH        64
/* Answered requests (and sessions they hang up) logged per second. */
#define DAE_RL_REQ       50

struct dae_cached {
	struct in_addr from;
	uint8_t        id;
	uint8_t        auth[RADIUS_AUTH_LEN];
	uint64_t       at_ms;
	size_t         len;       /* 0: empty slot */
	uint8_t       *answer;
};

struct dae {
	struct server    *srv;
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
	return loop_now(d->srv->loop);
}

static struct dae_cached *
dae_cache_find(struct dae *d, const struct dae_dgram *g,
    const struct radius_pkt *p)
{
	for (unsigned i = 0; i < DAE_CACHE_SLOTS; i++) {
		struct dae_cached *e = &d->cache[i];
		if (e->len != 0 && dae_now(d) - e->at_ms < DAE_CACHE_MS &&
		    e->from.s_addr == g->from.sin_addr.s_addr && e->id == p->id &&
		    memcmp(e->auth, p->auth, RADIUS_AUTH_LEN) == 0)
			return e;
	}
	return NULL;
}

static void
dae_cache_put(struct dae *d, const struct dae_dgram *g,
    const struct radius_pkt *p, const uint8_t *answer, size_t len)
{
	struct dae_cached *e = &d->cache[d->next];
	uint8_t *copy = malloc(len);
	if (copy == NULL)
		return;   /* a retransmission is served again: no worse */
	free(e->answer);
	d->next = (d->next + 1) % DAE_CACHE_SLOTS;
	*e = (struct dae_cached){ .from = g->from.sin_addr, .id = p->id,
	    .at_ms = dae_now(d), .len = len, .answer = copy };
	memcpy(e->auth, p->auth, RADIUS_AUTH_LEN);
	memcpy(copy, answer, len);
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
	return ip == g->to.s_addr || (d->srv->conf->listen.s_addr != INADDR_ANY &&
	    ip == d->srv->conf->listen.s_addr);
}

/* Hang up what the request names: returns how many sessions it named
 * (those already hanging up count: they are going). */
static unsigned
dae_disconnect(struct dae *d, const struct dae_dgram *g,
    struct radius_dm *dm, uint8_t id)
{
	struct callsel sel = { 0 };
	struct call *c;
	char reason[sizeof(c->hangup_reason)];
	unsigned n = 0;

	/* The plugin's facts were cleaned for the log: clean the names the
	 * same way, so a name is found as it is shown. */
	if (dm->has_user) {
		str_clean_inplace(dm->user);
		sel.user = dm->user;
	}
	if (dm->has_acct_session_id) {
		str_clean_inplace(dm->acct_session_id);
		sel.acct_session_id = dm->acct_session_id;
	}
	sel.by_tunnel = dm->has_framed_ip;
	sel.tunnel.s_addr = dm->framed_ip;
	snprintf(reason, sizeof(reason), "RADIUS Disconnect-Request from %s",
	    inet_ntoa(g->from.sin_addr));
	for (c = NULL; (c = callsel_next(&sel, d->srv, c)) != NULL; ) {
		n++;
		if (c->state == CALL_HANGUP)
			continue;
		call_hangup(c, PPTP_CDN_ADMIN_SHUTDOWN, reason);
		log_rl(&d->rl_req, dae_now(d), LOG_NOTICE, "dae: Disconnect-Request "
		    "id %u from %s: call %u/%u %s user %s hung up", id, g->from_str,
		    c->id, c->peer_id, c->client_str, c->user[0] ? c->user : "-");
	}
	return n;
}

/* Build the answer to an authenticated request, whose attributes
 * radius_dm_decode() made `dm` of (`cause`, `why`: its verdict), into `b`;
 * returns its length or -1. */
static int
dae_answer(struct dae *d, const struct dae_dgram *g, const struct radius_pkt *p,
    const struct dae_client *cl, struct radius_dm *dm, uint32_t cause,
    const char *why, struct radius_builder *b)
{
	uint8_t code;
	char what[48] = "";

	if (p->code == RADIUS_COA_REQUEST) {
		code = RADIUS_COA_NAK;
		cause = RADIUS_ERR_UNSUPPORTED_SERVICE;
		why = "CoA is not supported";
	} else if (cause == 0 && dm->has_nas_ip && !dae_nas_ip_ours(d, g, dm->nas_ip)) {
		code = RADIUS_DISCONNECT_NAK;
		cause = RADIUS_ERR_NAS_ID_MISMATCH;
		why = "NAS-IP-Address is not this server's";
	} else if (cause != 0) {
		code = RADIUS_DISCONNECT_NAK;
	} else {
		unsigned n = dae_disconnect(d, g, dm, p->id);
		code = n > 0 ? RADIUS_DISCONNECT_ACK : RADIUS_DISCONNECT_NAK;
		if (n == 0) {
			cause = RADIUS_ERR_SESSION_NOT_FOUND;
			why = "no session matches";
		} else
			snprintf(what, sizeof(what), "%u session%s", n, n > 1 ? "s" : "");
	}
	radius_begin(b, code, p->id);
	if (cause != 0)
		radius_add_u32(b, RADIUS_ERROR_CAUSE, cause);
	struct radius_attr a;
	for (size_t off = 0; radius_attr_next(p, &off, &a); )
		if (a.type == RADIUS_PROXY_STATE)
			radius_add(b, RADIUS_PROXY_STATE, a.value, a.len);
	if (p->msg_auth != NULL)
		radius_add_msg_auth(b);
	char cbuf[16];
	if (cause != 0)
		log_rl(&d->rl_req, dae_now(d), LOG_NOTICE, "dae: %s id %u from %s: "
		    "NAK, Error-Cause %u (%s)", radius_code_name(p->code, cbuf,
		    sizeof(cbuf)), p->id, g->from_str, cause, why);
	else
		log_rl(&d->rl_req, dae_now(d), LOG_NOTICE, "dae: Disconnect-Request "
		    "id %u from %s: ACK (%s)", p->id, g->from_str, what);
	return radius_finish(b, p->auth, cl->secret, cl->slen);
}

/* Validate at the entry: everything that drops a datagram is checked
 * here, with one reason and one log line. */
static void
dae_datagram(struct dae *d, struct dae_dgram *g)
{
	const struct dae_client *cl =
	    dae_clients_find(d->srv->conf->dae_clients, g->from.sin_addr);
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
		if (dm.has_timestamp && llabs((long long)dm.timestamp -
		    (long long)time(NULL)) > DAE_WINDOW_S)
			why = "Event-Timestamp outside the replay window";
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
		    "a retransmission, answered again", radius_code_name(p.code,
		    cbuf, sizeof(cbuf)), p.id, g->from_str);
		dae_send(d, g, e->answer, e->len);
		return;
	}
	struct radius_builder b;
	int n = dae_answer(d, g, &p, cl, &dm, cause, dwhy, &b);
	if (n < 0) {
		log_rl(&d->rl_drop, dae_now(d), LOG_WARNING, "dae: %s id %u from "
		    "%s: no answer (it would not fit, or libcrypto failed)",
		    radius_code_name(p.code, cbuf, sizeof(cbuf)), p.id, g->from_str);
		return;
	}
	dae_cache_put(d, g, &p, b.buf, (size_t)n);
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
dae_new(struct server *s, const struct sockaddr_in *addr, char *err,
    size_t errlen)
{
	struct dae *d = calloc(1, sizeof(*d));
	int one = 1;

	if (d == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	d->srv = s;
	d->lf.fd = -1;
	ratelimit_init(&d->rl_drop, LOG_RL_BURST, LOG_RL_PERIOD_MS);
	ratelimit_init(&d->rl_req, DAE_RL_REQ, LOG_RL_PERIOD_MS);
	d->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (d->fd < 0 ||
	    setsockopt(d->fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) < 0 ||
	    bind(d->fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0 ||
	    loop_fd_add(s->loop, &d->lf, d->fd, EPOLLIN, dae_ready, d) < 0) {
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
		loop_fd_del(d->srv->loop, &d->lf);
	if (d->fd >= 0)
		close(d->fd);
	for (unsigned i = 0; i < DAE_CACHE_SLOTS; i++)
		free(d->cache[i].answer);
	free(d);
}
