/* Prometheus metrics over HTTP. libmicrohttpd runs in its "external epoll"
 * mode: its epoll descriptor sits in our event loop and MHD_run() is called
 * from the loop when it is readable or its timeout is due, so the pages are
 * written in the loop's own thread, with no lock on the server's state.
 *
 * Names follow the Prometheus conventions: a counter ends in _total, units
 * are base units (bytes, seconds), and every family has HELP and TYPE. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "pptpd/call.h"
#include "pptpd/conf.h"
#include "pptpd/ctrl.h"
#include "gre/gre.h"
#include "pptpd/log.h"
#include "pptpd/metrics.h"
#include "pptpd/nd.h"
#include "pptpd/pool.h"
#include "pptpd/pool6.h"
#include "pptpd/shaper.h"

#define METRICS_PATH        "/metrics"
#define METRICS_CONTENT     "text/plain; version=0.0.4; charset=utf-8"
/* A scraper or two, and room for a curious admin: more is a flood. */
#define METRICS_CONNECTIONS 16
#define METRICS_TIMEOUT_S   10    /* an idle or slow HTTP client is dropped */
/* MHD asks to be run again within its timeout. We use one delay (or 0,
 * work pending): the loop keeps a timer list per delay (common/timer.h),
 * and an idle scraper dropped a second late costs nothing. */
#define METRICS_TICK_MS     1000
#define METRICS_LOG_LEN     256

struct metrics {
	struct metrics_env env;
	struct MHD_Daemon *d;
	struct loop_fd     lf;
	struct loop_timer  timer;
	struct ratelimit   rl;      /* MHD's complaints about HTTP clients */
};

/* The reasons ctrl.c and call.c log when they refuse a call, and their
 * labels. A reason not in the table (a new one) counts as "internal"
 * rather than going uncounted. */
static const struct {
	const char *reason;
	enum metrics_refusal r;
} refusal_texts[] = {
	{ "the connection is stopping", REFUSAL_STOPPING },
	{ "the peer's Call ID is already in use on this connection",
	  REFUSAL_CALL_ID_IN_USE },
	{ "too many calls on this connection (calls-per-connection)",
	  REFUSAL_CALLS_PER_CONN },
	{ "too many calls from this address (calls-per-client)",
	  REFUSAL_CALLS_PER_CLIENT },
	{ "too many call setups from this address (call-setups-per-client)",
	  REFUSAL_SETUPS_PER_CLIENT },
	{ "too many call setups in progress (call-setups)", REFUSAL_SETUPS },
	{ "calls from this address too fast (call-rate-per-client)",
	  REFUSAL_CALL_RATE },
	{ "address pool exhausted", REFUSAL_POOL_EXHAUSTED },
	{ "this address holds its share of the pool (pool-share-per-client)",
	  REFUSAL_POOL_SHARE },
	{ "no free Call ID", REFUSAL_NO_CALL_ID },
	{ "out of descriptors", REFUSAL_NO_DESCRIPTORS },
};

static const char *const refusal_labels[REFUSAL_COUNT] = {
	[REFUSAL_STOPPING] = "connection_stopping",
	[REFUSAL_CALL_ID_IN_USE] = "call_id_in_use",
	[REFUSAL_CALLS_PER_CONN] = "calls_per_connection",
	[REFUSAL_CALLS_PER_CLIENT] = "calls_per_client",
	[REFUSAL_SETUPS_PER_CLIENT] = "call_setups_per_client",
	[REFUSAL_SETUPS] = "call_setups",
	[REFUSAL_CALL_RATE] = "call_rate_per_client",
	[REFUSAL_POOL_EXHAUSTED] = "pool_exhausted",
	[REFUSAL_POOL_SHARE] = "pool_share_per_client",
	[REFUSAL_NO_CALL_ID] = "no_call_id",
	[REFUSAL_NO_DESCRIPTORS] = "no_descriptors",
	[REFUSAL_INTERNAL] = "internal",
};

enum metrics_refusal
metrics_refusal_of(const char *reason)
{
	for (size_t i = 0; i < sizeof(refusal_texts) / sizeof(refusal_texts[0]); i++)
		if (strcmp(reason, refusal_texts[i].reason) == 0)
			return refusal_texts[i].r;
	return REFUSAL_INTERNAL;
}

const char *
metrics_refusal_label(enum metrics_refusal r)
{
	return r < REFUSAL_COUNT ? refusal_labels[r] : "internal";
}

void
metrics_count_ended(struct metrics_counts *mc, const struct gre_stats *st)
{
	mc->ended_rx_packets += st->rx_packets;
	mc->ended_rx_bytes += st->rx_bytes;
	mc->ended_tx_packets += st->tx_packets;
	mc->ended_tx_bytes += st->tx_bytes;
	mc->ended_lost += st->rx_lost;
	mc->ended_reordered += st->rx_reordered;
	mc->ended_duplicates += st->rx_duplicates;
	mc->ended_wrong_source += st->rx_wrong_source;
	mc->ended_tx_over_window += st->tx_over_window;
}

/* ---- the exposition text ---- */

static void
family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void
sample(FILE *f, const char *name, const char *type, const char *help,
    unsigned long long v)
{
	family(f, name, type, help);
	fprintf(f, "%s %llu\n", name, v);
}

/* GRE counters over the live calls plus those that ended. */
struct gre_totals {
	unsigned long long rx_packets, rx_bytes, tx_packets, tx_bytes;
	unsigned long long lost, reordered, duplicates, wrong_source;
	unsigned long long tx_over_window;
};

static void
gre_totals(const struct metrics_env *s, struct gre_totals *t)
{
	const struct metrics_counts *mc = s->counts;
	struct call *c;

	*t = (struct gre_totals){ mc->ended_rx_packets, mc->ended_rx_bytes,
		mc->ended_tx_packets, mc->ended_tx_bytes, mc->ended_lost,
		mc->ended_reordered, mc->ended_duplicates, mc->ended_wrong_source,
		mc->ended_tx_over_window };
	TAILQ_FOREACH(c, &s->calls->list, s_entry) {
		struct gre_stats st;
		if (c->gre == NULL)
			continue;   /* ended: counted in mc */
		gre_call_stats(c->gre, &st);
		t->rx_packets += st.rx_packets;
		t->rx_bytes += st.rx_bytes;
		t->tx_packets += st.tx_packets;
		t->tx_bytes += st.tx_bytes;
		t->lost += st.rx_lost;
		t->reordered += st.rx_reordered;
		t->duplicates += st.rx_duplicates;
		t->wrong_source += st.rx_wrong_source;
		t->tx_over_window += st.tx_over_window;
	}
}

static void
render_sessions(FILE *f, const struct metrics_env *s)
{
	static const char *const names[] = {
		[CALL_ACTIVE] = "active", [CALL_HANGUP] = "hangup",
		[CALL_ENDING] = "ending",
	};
	unsigned n[3] = { 0, 0, 0 }, clamped = 0;
	struct call *c;

	TAILQ_FOREACH(c, &s->calls->list, s_entry) {
		if ((unsigned)c->state < 3)
			n[c->state]++;
		clamped += c->mss_on != 0;
	}
	family(f, "pptpd_sessions", "gauge", "Calls by state: active, hangup "
	    "(we hang up, pppd ends LCP), ending (waiting for pppd to exit).");
	for (unsigned i = 0; i < 3; i++)
		fprintf(f, "pptpd_sessions{state=\"%s\"} %u\n", names[i], n[i]);
	sample(f, "pptpd_sessions_active", "gauge", "Calls carrying traffic "
	    "(state active).", n[CALL_ACTIVE]);
	sample(f, "pptpd_control_connections", "gauge", "Open PPTP control "
	    "connections.", s->ctrls->n);
	sample(f, "pptpd_sessions_tcp_mss_clamped", "gauge", "Sessions whose "
	    "ppp interface's TCP SYNs are MSS-clamped now (tcp-mss-adjust).",
	    clamped);
}

static void
render_calls(FILE *f, const struct metrics_env *s)
{
	const struct metrics_counts *mc = s->counts;

	sample(f, "pptpd_call_setups_total", "counter", "Outgoing-Call-Requests "
	    "answered, started or refused.", mc->setups);
	family(f, "pptpd_call_failures_total", "counter", "Outgoing-Call-Requests "
	    "refused, by reason.");
	for (unsigned r = 0; r < REFUSAL_COUNT; r++)
		fprintf(f, "pptpd_call_failures_total{reason=\"%s\"} %llu\n",
		    refusal_labels[r], (unsigned long long)mc->failures[r]);
	sample(f, "pptpd_pool_addresses", "gauge", "Client addresses in the "
	    "pool (remoteip).", s->calls->pool ? pool_size(s->calls->pool) : 0);
	sample(f, "pptpd_pool_addresses_in_use", "gauge", "Pool addresses held "
	    "by calls.", s->calls->pool ? pool_size(s->calls->pool) - pool_available(s->calls->pool) : 0);
}

/* Per-user rate limits. */
static void
render_rates(FILE *f, const struct metrics_env *s)
{
	struct shaper_stats st = { 0 };
	const struct call *c;
	unsigned limited = 0;

	if (s->calls->shaper != NULL)
		shaper_stats(s->calls->shaper, &st);
	else if (s->calls->shape_by_runner)
		st = s->calls->runner_rates;
	TAILQ_FOREACH(c, &s->calls->list, s_entry)
		limited += c->shaped_ifindex != 0;
	sample(f, "pptpd_rate_limited_sessions", "gauge", "Sessions whose rate "
	    "limit is set on their interface.", limited);
	family(f, "pptpd_rate_limit_changes_total", "counter", "Rate limits "
	    "set on a session's interface (a change counts), by result.");
	fprintf(f, "pptpd_rate_limit_changes_total{result=\"set\"} %llu\n",
	    (unsigned long long)st.applied);
	fprintf(f, "pptpd_rate_limit_changes_total{result=\"failed\"} %llu\n",
	    (unsigned long long)st.failed);
}

/* IPv6 in the tunnel: only with an ipv6-prefix-pool. */
static void
render_ipv6(FILE *f, const struct metrics_env *s)
{
	const struct pool6 *p6 = s->calls->pool6;
	struct nd_stats st = { 0 };
	const struct call *c;
	unsigned up = 0;

	if (p6 == NULL)
		return;
	if (s->calls->nd != NULL)
		nd_stats(s->calls->nd, &st);
	TAILQ_FOREACH(c, &s->calls->list, s_entry)
		up += c->ifname6[0] != '\0';
	sample(f, "pptpd_ipv6_prefixes", "gauge", "/64s in the IPv6 prefix pool "
	    "(ipv6-prefix-pool).", pool6_size(p6));
	sample(f, "pptpd_ipv6_prefixes_in_use", "gauge", "/64s held by calls.",
	    pool6_size(p6) - pool6_available(p6));
	sample(f, "pptpd_ipv6_sessions_up", "gauge", "Sessions whose IPV6CP is "
	    "up: their /64 routed and advertised.", up);
	sample(f, "pptpd_ipv6_router_advertisements_total", "counter", "Router "
	    "Advertisements sent to sessions.", (unsigned long long)st.ras_sent);
	family(f, "pptpd_ipv6_router_solicitations_total", "counter", "Router "
	    "Solicitations from sessions, by what became of them.");
	fprintf(f, "pptpd_ipv6_router_solicitations_total{result=\"valid\"} "
	    "%llu\n", (unsigned long long)st.rs_received);
	fprintf(f, "pptpd_ipv6_router_solicitations_total{result=\"dropped\"} "
	    "%llu\n", (unsigned long long)st.rs_dropped);
}

static void
render_gre(FILE *f, const struct metrics_env *s)
{
	struct gre_engine_stats es;
	struct gre_totals t;

	gre_engine_stats(s->gre, &es);
	gre_totals(s, &t);
	sample(f, "pptpd_gre_rx_packets_total", "counter", "GRE packets "
	    "received on calls.", t.rx_packets);
	sample(f, "pptpd_gre_rx_bytes_total", "counter", "GRE payload bytes "
	    "received on calls.", t.rx_bytes);
	sample(f, "pptpd_gre_tx_packets_total", "counter", "GRE packets sent "
	    "on calls.", t.tx_packets);
	sample(f, "pptpd_gre_tx_bytes_total", "counter", "GRE payload bytes "
	    "sent on calls.", t.tx_bytes);
	sample(f, "pptpd_gre_lost_total", "counter", "GRE packets never "
	    "received (sequence gaps given up on).", t.lost);
	sample(f, "pptpd_gre_reordered_total", "counter", "GRE packets received "
	    "out of order and put back in order.", t.reordered);
	sample(f, "pptpd_gre_duplicates_total", "counter", "GRE packets "
	    "received twice.", t.duplicates);
	sample(f, "pptpd_gre_malformed_total", "counter", "GRE datagrams "
	    "dropped as malformed.", es.rx_malformed);
	sample(f, "pptpd_gre_wrong_source_total", "counter", "GRE packets for a "
	    "call from an address other than its client's.", t.wrong_source);
	sample(f, "pptpd_gre_tx_over_window_total", "counter", "GRE data "
	    "packets sent while the peer's receive window was full (counted, "
	    "not held back: doc/architecture.md).", t.tx_over_window);
	sample(f, "pptpd_gre_unknown_call_total", "counter", "GRE packets for "
	    "no call of ours.", es.rx_unknown_call);
	sample(f, "pptpd_gre_kernel_path_total", "counter", "GRE packets of "
	    "kernel data path calls the engine saw a copy of and left alone.",
	    es.rx_kernel_call);
}

/* metrics-per-session: one series per live call, labelled by our Call ID
 * and the client's address. */
static void
render_per_session(FILE *f, const struct metrics_env *s)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} fam[] = {
		{ "pptpd_session_gre_rx_packets_total", "GRE packets received on "
		  "this call.", offsetof(struct gre_stats, rx_packets) },
		{ "pptpd_session_gre_rx_bytes_total", "GRE payload bytes received "
		  "on this call.", offsetof(struct gre_stats, rx_bytes) },
		{ "pptpd_session_gre_tx_packets_total", "GRE packets sent on this "
		  "call.", offsetof(struct gre_stats, tx_packets) },
		{ "pptpd_session_gre_tx_bytes_total", "GRE payload bytes sent on "
		  "this call.", offsetof(struct gre_stats, tx_bytes) },
	};
	struct call *c;

	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
		family(f, fam[i].name, "counter", fam[i].help);
		TAILQ_FOREACH(c, &s->calls->list, s_entry) {
			struct gre_stats st;
			uint64_t v;
			if (c->gre == NULL)
				continue;
			gre_call_stats(c->gre, &st);
			memcpy(&v, (const char *)&st + fam[i].off, sizeof(v));
			fprintf(f, "%s{call_id=\"%u\",client=\"%s\"} %llu\n",
			    fam[i].name, c->id, inet_ntoa(c->peer),
			    (unsigned long long)v);
		}
	}
}

/* Resident pages: the second field of /proc/self/statm. */
static unsigned long long
process_rss_bytes(void)
{
	unsigned long long size = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "re");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &rss) != 2)
		rss = 0;
	fclose(f);
	return rss * (unsigned long long)sysconf(_SC_PAGESIZE);
}

static unsigned long long
process_fds(void)
{
	unsigned long long n = 0;
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n > 0 ? n - 1 : 0;   /* not the one opendir holds */
}

static void
render_process(FILE *f)
{
	struct rusage ru;
	struct rlimit rl;
	double cpu = 0;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
		    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	family(f, "process_cpu_seconds_total", "counter", "User and system CPU "
	    "time of the daemon (not of pppd) in seconds.");
	fprintf(f, "process_cpu_seconds_total %.6f\n", cpu);
	sample(f, "process_resident_memory_bytes", "gauge", "Resident memory "
	    "size in bytes.", process_rss_bytes());
	sample(f, "process_open_fds", "gauge", "Open file descriptors.",
	    process_fds());
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		sample(f, "process_max_fds", "gauge", "Limit of open file "
		    "descriptors (RLIMIT_NOFILE).", (unsigned long long)rl.rlim_cur);
}

char *
metrics_render(const struct metrics_env *s, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (f == NULL)
		return NULL;
	render_sessions(f, s);
	render_calls(f, s);
	render_gre(f, s);
	render_ipv6(f, s);
	render_rates(f, s);
	if (s->conf->metrics_per_session)
		render_per_session(f, s);
	render_process(f);
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

/* ---- HTTP ---- */

static enum MHD_Result
metrics_reply(struct MHD_Connection *conn, unsigned status, char *body,
    size_t len, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body,
	    MHD_RESPMEM_MUST_FREE);
	enum MHD_Result rc;

	if (r == NULL) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result
metrics_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
	char *body = strdup(text);
	if (body == NULL)
		return MHD_NO;
	return metrics_reply(conn, status, body, strlen(body),
	    "text/plain; charset=utf-8");
}

/* Only GET (and HEAD, which HTTP requires alongside it) of /metrics. The
 * answer is given at the first call, before any request body: we want
 * none. */
static enum MHD_Result
metrics_answer(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **req_cls)
{
	struct metrics *m = cls;
	size_t len;
	char *body;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req_cls;
	if (strcmp(url, METRICS_PATH) != 0)
		return metrics_text(conn, MHD_HTTP_NOT_FOUND, "not found: try "
		    METRICS_PATH "\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return metrics_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
		    "method not allowed\n");
	if ((body = metrics_render(&m->env, &len)) == NULL)
		return metrics_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "out of memory\n");
	return metrics_reply(conn, MHD_HTTP_OK, body, len, METRICS_CONTENT);
}

/* What MHD has to say is about HTTP clients: remote input, rate-limited. */
static void
metrics_log(void *cls, const char *fmt, va_list ap)
{
	struct metrics *m = cls;
	char msg[METRICS_LOG_LEN];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	log_rl(&m->rl, loop_now(m->env.loop), LOG_WARNING, "metrics: %s", msg);
}

static void metrics_timer(void *arg);

static void
metrics_run(struct metrics *m)
{
	MHD_UNSIGNED_LONG_LONG ms;

	MHD_run(m->d);
	if (MHD_get_timeout(m->d, &ms) == MHD_YES)
		loop_timer_set(m->env.loop, &m->timer,
		    ms == 0 ? 0 : METRICS_TICK_MS, metrics_timer, m);
	else
		loop_timer_cancel(m->env.loop, &m->timer);
}

static void
metrics_timer(void *arg)
{
	metrics_run(arg);
}

static void
metrics_ready(void *arg, uint32_t events)
{
	(void)events;
	metrics_run(arg);
}

struct metrics *
metrics_new(const struct metrics_env *s, const struct sockaddr_in *addr, char *err,
    size_t errlen)
{
	struct metrics *m = calloc(1, sizeof(*m));
	const union MHD_DaemonInfo *info;
	char a[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &addr->sin_addr, a, sizeof(a));
	if (m == NULL) {
		snprintf(err, errlen, "metrics: out of memory");
		return NULL;
	}
	m->env = *s;
	m->lf.fd = -1;
	m->rl = (struct ratelimit)LOG_RL_INIT;
	/* No thread flag: MHD runs only when we call MHD_run. */
	errno = 0;
	m->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG,
	    ntohs(addr->sin_port), NULL, NULL, metrics_answer, m,
	    /* first, or MHD logs to stderr until it gets there */
	    MHD_OPTION_EXTERNAL_LOGGER, metrics_log, m,
	    MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)addr,
	    MHD_OPTION_LISTENING_ADDRESS_REUSE, 1,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_CONNECTIONS,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)METRICS_TIMEOUT_S,
	    MHD_OPTION_END);
	if (m->d == NULL) {
		snprintf(err, errlen, "cannot serve metrics on %s:%u: %s", a,
		    ntohs(addr->sin_port), errno ? strerror(errno) : "libmicrohttpd failed");
		free(m);
		return NULL;
	}
	info = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_EPOLL_FD);
	if (info == NULL || loop_fd_add(s->loop, &m->lf, info->epoll_fd, EPOLLIN,
	    metrics_ready, m) < 0) {
		snprintf(err, errlen, "metrics: cannot watch libmicrohttpd's epoll "
		    "descriptor");
		metrics_free(m);
		return NULL;
	}
	log_msg(LOG_NOTICE, "metrics on http://%s:%u" METRICS_PATH, a,
	    ntohs(addr->sin_port));
	return m;
}

void
metrics_free(struct metrics *m)
{
	if (m == NULL)
		return;
	loop_timer_cancel(m->env.loop, &m->timer);
	if (m->lf.fd >= 0)
		loop_fd_del(m->env.loop, &m->lf);
	MHD_stop_daemon(m->d);
	free(m);
}
