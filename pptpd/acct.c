/* pptpd's own RADIUS accounting; see acct.h.
 *
 *   acct_interim --> sent --(radius_timeout)--> sent again ... (radius_retries)
 *       --> no answer: logged, dropped
 *   an Accounting-Response with our Identifier and a Response
 *   Authenticator that holds --> logged, done
 *
 * What arrives on the socket is the server's only if its authenticator
 * holds for our request; anything else is counted, logged at most
 * LOG_RL_BURST times a second, and dropped. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/ratelimit.h"
#include "pptpd/acct.h"
#include "pptpd/log.h"
#include "pptpd/loop.h"
#include "pptpd/prefix6.h"
#include "pptpd/radius.h"

/* The Identifier is one octet: at most this many requests unanswered. */
#define ACCT_PENDING_MAX  256
#define ACCT_WHO_MAX      48
#define ACCT_SID_MAX      64

struct acct_req {
	TAILQ_ENTRY(acct_req) entry;
	struct acct      *a;
	uint8_t           id;
	uint8_t           req_auth[RADIUS_AUTH_LEN];
	uint8_t          *pkt;
	size_t            len;
	unsigned          tries;
	char              who[ACCT_WHO_MAX], sid[ACCT_SID_MAX];
	char              prefix[INET6_ADDRSTRLEN];
	struct loop_timer timer;
};

struct acct {
	struct loop        *loop;
	struct radcfg       cfg;
	int                 fd;
	struct loop_fd      lf;
	struct loop_defer   defer;
	struct in_addr      nas_ip;     /* what we send from */
	TAILQ_HEAD(, acct_req) reqs;
	unsigned            npending;
	uint8_t             next_id;
	struct ratelimit    rl;
	struct acct_stats   st;
};

static void
acct_req_free(struct acct_req *r)
{
	struct acct *a = r->a;
	loop_timer_cancel(a->loop, &r->timer);
	TAILQ_REMOVE(&a->reqs, r, entry);
	a->npending--;
	free(r->pkt);
	free(r);
}

static void
acct_send(struct acct_req *r)
{
	struct acct *a = r->a;
	if (send(a->fd, r->pkt, r->len, 0) < 0)
		log_rl(&a->rl, loop_now(a->loop), LOG_WARNING, "accounting: %s: "
		    "Interim-Update to %s: %s", r->who,
		    inet_ntoa(a->cfg.server.sin_addr), strerror(errno));
	r->tries++;
}

static void
acct_timeout(void *arg)
{
	struct acct_req *r = arg;
	struct acct *a = r->a;

	if (r->tries < a->cfg.retries) {
		/* The same packet again (RFC 2866 section 2: a retransmission
		 * keeps its Identifier and authenticator; we send no
		 * Acct-Delay-Time that would change them). */
		acct_send(r);
		loop_timer_set(a->loop, &r->timer, a->cfg.timeout_s * 1000ULL,
		    acct_timeout, r);
		return;
	}
	a->st.unanswered++;
	log_msg(LOG_WARNING, "accounting: %s: Interim-Update (Acct-Session-Id %s, "
	    "IPv6 %s/64) not answered by %s after %u tries", r->who, r->sid,
	    r->prefix, inet_ntoa(a->cfg.server.sin_addr), r->tries);
	acct_req_free(r);
}

static struct acct_req *
acct_find(struct acct *a, uint8_t id)
{
	struct acct_req *r;
	TAILQ_FOREACH(r, &a->reqs, entry)
		if (r->id == id)
			return r;
	return NULL;
}

/* One datagram from the server: NULL when it answered a request, or why
 * it was dropped. */
static const char *
acct_input_one(struct acct *a, const uint8_t *buf, size_t n)
{
	struct radius_pkt p;
	struct acct_req *r;
	const char *why = NULL;

	if (radius_parse(&p, buf, n, &why) < 0)
		return why;
	if (p.code != RADIUS_ACCOUNTING_RESPONSE)
		return "not an Accounting-Response";
	if ((r = acct_find(a, p.id)) == NULL)
		return "answers no request of ours (late, or not ours)";
	if (!radius_response_verify(&p, r->req_auth, a->cfg.secret,
	    strlen(a->cfg.secret)))
		return "bad Response Authenticator (not our secret)";
	a->st.answered++;
	log_msg(LOG_INFO, "accounting: %s: Interim-Update (Acct-Session-Id %s, "
	    "IPv6 %s/64) answered by %s", r->who, r->sid, r->prefix,
	    inet_ntoa(a->cfg.server.sin_addr));
	acct_req_free(r);
	return NULL;
}

static void
acct_input(void *arg, uint32_t events)
{
	struct acct *a = arg;
	uint8_t buf[RADIUS_MAX_LEN];
	ssize_t n;

	(void)events;
	while ((n = recv(a->fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 0) {
		const char *why = acct_input_one(a, buf, (size_t)n);
		if (why == NULL)
			continue;
		a->st.bad_answers++;
		log_rl(&a->rl, loop_now(a->loop), LOG_WARNING, "accounting: a "
		    "datagram from %s dropped: %s", inet_ntoa(a->cfg.server.sin_addr),
		    why);
	}
}

/* A connected UDP socket: only the server's datagrams reach it. */
static int
acct_socket(struct acct *a, char *why, size_t whylen)
{
	struct sockaddr_in self = { .sin_family = AF_INET, .sin_addr = a->cfg.bind };
	socklen_t sl = sizeof(self);

	a->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (a->fd < 0 || bind(a->fd, (struct sockaddr *)&self, sizeof(self)) < 0 ||
	    connect(a->fd, (struct sockaddr *)&a->cfg.server,
	    sizeof(a->cfg.server)) < 0 ||
	    getsockname(a->fd, (struct sockaddr *)&self, &sl) < 0) {
		snprintf(why, whylen, "accounting socket toward %s: %s",
		    inet_ntoa(a->cfg.server.sin_addr), strerror(errno));
		return -1;
	}
	a->nas_ip = self.sin_addr;
	return 0;
}

struct acct *
acct_open(struct loop *loop, const struct radcfg *cfg, char *why, size_t whylen)
{
	struct acct *a = calloc(1, sizeof(*a));

	if (a == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	a->loop = loop;
	a->cfg = *cfg;
	a->lf.fd = -1;
	a->fd = -1;
	TAILQ_INIT(&a->reqs);
	ratelimit_init(&a->rl, LOG_RL_BURST, LOG_RL_PERIOD_MS);
	if (acct_socket(a, why, whylen) < 0) {
		acct_close(a);
		return NULL;
	}
	if (loop_fd_add(loop, &a->lf, a->fd, EPOLLIN, acct_input, a) < 0) {
		snprintf(why, whylen, "cannot watch the accounting socket");
		acct_close(a);
		return NULL;
	}
	return a;
}

static void
acct_free(void *p)
{
	struct acct *a = p;
	explicit_bzero(a->cfg.secret, sizeof(a->cfg.secret));
	free(a);
}

void
acct_close(struct acct *a)
{
	if (a == NULL)
		return;
	if (a->npending > 0)
		log_msg(LOG_NOTICE, "accounting: %u Interim-Updates unanswered "
		    "dropped", a->npending);
	while (!TAILQ_EMPTY(&a->reqs))
		acct_req_free(TAILQ_FIRST(&a->reqs));
	if (a->lf.fd >= 0)
		loop_fd_del(a->loop, &a->lf);
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	/* A reload closes it from another event of the same round, which
	 * may be followed by the socket's own: freed after the round. */
	loop_defer_free(a->loop, &a->defer, acct_free, a);
}

/* The Accounting-Request's attributes (RFC 2866 section 4.1: NAS-IP-Address
 * or NAS-Identifier, and what FreeRADIUS' accounting keys on). */
static void
acct_build(const struct acct *a, const struct acct_session *s,
    struct radius_builder *b, uint8_t id)
{
	uint8_t p6[RADIUS_PREFIX6_HDR_LEN + PREFIX6_LEN_SESSION / 8] = {
		0, PREFIX6_LEN_SESSION };

	memcpy(p6 + RADIUS_PREFIX6_HDR_LEN, s->prefix6.s6_addr,
	    PREFIX6_LEN_SESSION / 8);
	radius_begin(b, RADIUS_ACCOUNTING_REQUEST, id);
	radius_add_u32(b, RADIUS_ACCT_STATUS_TYPE, RADIUS_STATUS_INTERIM_UPDATE);
	radius_add(b, RADIUS_ACCT_SESSION_ID, s->session_id, strlen(s->session_id));
	if (s->user[0] != '\0')
		radius_add(b, RADIUS_USER_NAME, s->user, strlen(s->user));
	radius_add(b, RADIUS_NAS_IP_ADDRESS, &a->nas_ip.s_addr, RADIUS_IPV4_LEN);
	if (a->cfg.nas_id[0] != '\0')
		radius_add(b, RADIUS_NAS_IDENTIFIER, a->cfg.nas_id,
		    strlen(a->cfg.nas_id));
	/* radius.so's NAS-Port is the ppp unit (its default map-to-ifname):
	 * the same, so that a server's key for the session (FreeRADIUS'
	 * acct_unique hashes NAS-Port with the names above) is the same. */
	if (s->nas_port >= 0)
		radius_add_u32(b, RADIUS_NAS_PORT, (uint32_t)s->nas_port);
	radius_add_u32(b, RADIUS_SERVICE_TYPE, RADIUS_SERVICE_FRAMED);
	radius_add_u32(b, RADIUS_FRAMED_PROTOCOL, RADIUS_PROTOCOL_PPP);
	if (s->framed_ip.s_addr != INADDR_ANY)
		radius_add(b, RADIUS_FRAMED_IP_ADDRESS, &s->framed_ip.s_addr,
		    RADIUS_IPV4_LEN);
	radius_add(b, RADIUS_FRAMED_IPV6_PREFIX, p6, sizeof(p6));
	radius_add_u32(b, RADIUS_ACCT_SESSION_TIME, s->session_time);
	radius_add_u32(b, RADIUS_ACCT_AUTHENTIC, RADIUS_AUTHENTIC_RADIUS);
	radius_add_u32(b, RADIUS_EVENT_TIMESTAMP, (uint32_t)time(NULL));
}

/* A free Identifier: the next one not waiting for its answer. */
static int
acct_next_id(struct acct *a, uint8_t *id)
{
	if (a->npending >= ACCT_PENDING_MAX)
		return -1;
	while (acct_find(a, a->next_id) != NULL)
		a->next_id++;
	*id = a->next_id++;
	return 0;
}

int
acct_interim(struct acct *a, const struct acct_session *s)
{
	struct radius_builder b;
	struct acct_req *r = calloc(1, sizeof(*r));
	const char *reason = NULL;
	int len = -1;

	if (r == NULL || acct_next_id(a, &r->id) < 0)
		reason = r == NULL ? "out of memory" : "too many unanswered";
	else {
		acct_build(a, s, &b, r->id);
		len = radius_finish_request(&b, a->cfg.secret, strlen(a->cfg.secret),
		    r->req_auth);
		if (len < 0 || (r->pkt = malloc((size_t)len)) == NULL)
			reason = len < 0 ? "the attributes do not fit" : "out of memory";
	}
	if (reason != NULL) {
		log_rl(&a->rl, loop_now(a->loop), LOG_WARNING, "accounting: %s: "
		    "Interim-Update not sent: %s", s->who, reason);
		free(r);
		return -1;
	}
	memcpy(r->pkt, b.buf, (size_t)len);
	r->len = (size_t)len;
	r->a = a;
	snprintf(r->who, sizeof(r->who), "%s", s->who);
	snprintf(r->sid, sizeof(r->sid), "%s", s->session_id);
	inet_ntop(AF_INET6, &s->prefix6, r->prefix, sizeof(r->prefix));
	TAILQ_INSERT_TAIL(&a->reqs, r, entry);
	a->npending++;
	a->st.sent++;
	acct_send(r);
	loop_timer_set(a->loop, &r->timer, a->cfg.timeout_s * 1000ULL,
	    acct_timeout, r);
	return 0;
}

void
acct_stats(const struct acct *a, struct acct_stats *st)
{
	*st = a->st;
}
