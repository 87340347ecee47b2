/* The control socket (ctl.h): one request line in, one answer out, close.
 * Every connection is served by the event loop like any other descriptor,
 * so a pptpctl that connects and says nothing holds a slot for at most
 * CTL_TIMEOUT_MS and never the daemon. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "pptpd/call.h"
#include "pptpd/callsel.h"
#include "pptpd/conf.h"
#include "pptpd/ctl.h"
#include "pptpd/ctrl.h"
#include "gre/gre.h"
#include "pptpd/log.h"
#include "proto/msg.h"
#include "pptpd/pool.h"
#include "pptpd/pool6.h"
#include "common/strclean.h"
#include "pptpd/version.h"

#define CTL_BACKLOG      16
#define CTL_OUT_MIN      1024
/* Lines about refused or bad requests, and kill lines, per second: a
 * script gone wrong in a loop does not fill the log. */
#define CTL_RL_BURST     10
#define CTL_RL_KILL      50
#define CTL_JSON_SUFFIX  " json"

/* The answer, grown as it is written; `oom` once memory ran out. */
struct ctl_out {
	char  *p;
	size_t len, cap;
	int    oom;
};

struct ctl_conn {
	TAILQ_ENTRY(ctl_conn) entry;
	struct ctl       *ctl;
	int               fd;
	struct loop_fd    lf;
	struct loop_defer defer;
	struct loop_timer timer;
	uid_t             uid;
	pid_t             pid;
	char              req[CTL_REQ_MAX + 1];
	size_t            reqlen;
	struct ctl_out    out;
	size_t            sent;
};

static void out_printf(struct ctl_out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
out_printf(struct ctl_out *o, const char *fmt, ...)
{
	va_list ap;
	if (o->oom)
		return;
	for (;;) {
		size_t room = o->cap - o->len;
		va_start(ap, fmt);
		int n = vsnprintf(o->p ? o->p + o->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->oom = 1;
			return;
		}
		if ((size_t)n < room) {
			o->len += (size_t)n;
			return;
		}
		size_t cap = o->cap ? o->cap : CTL_OUT_MIN;
		while (cap - o->len <= (size_t)n)
			cap *= 2;
		char *p = realloc(o->p, cap);
		if (p == NULL) {
			o->oom = 1;
			return;
		}
		o->p = p;
		o->cap = cap;
	}
}

/* A JSON string: quotes, backslashes and anything not printable ASCII
 * escaped (our strings are cleaned already; this does not rely on it). */
static void
out_json_str(struct ctl_out *o, const char *s)
{
	out_printf(o, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			out_printf(o, "\\%c", *p);
		else if (str_printable(*p))
			out_printf(o, "%c", *p);
		else
			out_printf(o, "\\u%04x", *p);
	}
	out_printf(o, "\"");
}

static void
out_json_str_or_null(struct ctl_out *o, const char *s)
{
	if (s != NULL)
		out_json_str(o, s);
	else
		out_printf(o, "null");
}

/* ---- what a session looks like from here */

struct ctl_session {
	const char      *state;
	const char      *user;      /* NULL: not authenticated yet */
	const char      *mppe;      /* NULL: unknown */
	int              stateless; /* -1 unknown or no MPPE */
	char             tunnel[INET_ADDRSTRLEN];   /* "" unknown */
	char             client_addr[INET_ADDRSTRLEN];
	uint64_t         uptime_s;
	struct gre_stats gre;
};

static const char *
ctl_call_state(const struct call *c)
{
	switch (c->state) {
	case CALL_ACTIVE: return c->up_ms ? "up" : "setup";
	case CALL_HANGUP: return "hangup";
	case CALL_ENDING: return "ending";
	}
	return "?";
}

/* The tunnel address: what pppd reported once the session was up, else
 * the one we gave it from the pool. */
static void
ctl_call_tunnel(const struct call *c, char *buf, size_t len)
{
	struct in_addr a;
	buf[0] = '\0';
	if (inet_pton(AF_INET, c->tunnel, &a) == 1)
		inet_ntop(AF_INET, &a, buf, (socklen_t)len);
	else if (c->remote_ip.s_addr != INADDR_ANY)
		inet_ntop(AF_INET, &c->remote_ip, buf, (socklen_t)len);
}

static void
ctl_session_get(const struct call *c, uint64_t now, struct ctl_session *f)
{
	memset(f, 0, sizeof(*f));
	f->state = ctl_call_state(c);
	f->user = c->user[0] && strcmp(c->user, "-") != 0 ? c->user : NULL;
	f->mppe = c->mppe[0] && strcmp(c->mppe, "-") != 0 ? c->mppe : NULL;
	f->stateless = f->mppe ? c->stateless : -1;
	ctl_call_tunnel(c, f->tunnel, sizeof(f->tunnel));
	inet_ntop(AF_INET, &c->peer, f->client_addr, sizeof(f->client_addr));
	f->uptime_s = (now - c->started_ms) / 1000;
	if (c->gre != NULL)   /* ending: the engine has let go of it */
		gre_call_stats(c->gre, &f->gre);
}

static const char *
ctl_mppe_str(const struct ctl_session *f, char *buf, size_t len)
{
	if (f->mppe == NULL)
		return "-";
	snprintf(buf, len, "%s%s", f->mppe, f->stateless < 0 ? "" :
	    f->stateless ? "/stateless" : "/stateful");
	return buf;
}

static void
ctl_session_line(struct ctl_out *o, const struct call *c, uint64_t now)
{
	struct ctl_session f;
	char mppe[24];
	ctl_session_get(c, now, &f);
	char p6[INET6_ADDRSTRLEN + 4], r[40];
	out_printf(o, "%u/%u user %s client %s tunnel %s%s%s%s%s mppe %s state %s "
	    "uptime %llus rx %llu bytes %llu packets tx %llu bytes %llu packets "
	    "lost %llu reordered %llu\n", c->id, c->peer_id, f.user ? f.user : "-",
	    c->client_str, f.tunnel[0] ? f.tunnel : "-",
	    c->ifname6[0] ? " " : "", c->ifname6[0] ?
	    call_prefix6_str(c, p6, sizeof(p6)) : "",
	    c->rate_down || c->rate_up ? " rate " : "",
	    call_rate_str(c, r, sizeof(r)),
	    ctl_mppe_str(&f, mppe, sizeof(mppe)), f.state,
	    (unsigned long long)f.uptime_s, (unsigned long long)f.gre.rx_bytes,
	    (unsigned long long)f.gre.rx_packets, (unsigned long long)f.gre.tx_bytes,
	    (unsigned long long)f.gre.tx_packets, (unsigned long long)f.gre.rx_lost,
	    (unsigned long long)f.gre.rx_reordered);
}

/* A rate in bits/s, null for none that way. */
static void
ctl_json_rate(struct ctl_out *o, const char *key, uint64_t bps)
{
	if (bps)
		out_printf(o, ",\"%s\":%llu", key, (unsigned long long)bps);
	else
		out_printf(o, ",\"%s\":null", key);
}

static void
ctl_session_json(struct ctl_out *o, const struct call *c, uint64_t now)
{
	struct ctl_session f;
	ctl_session_get(c, now, &f);
	out_printf(o, "{\"id\":%u,\"peer_id\":%u,\"user\":", c->id, c->peer_id);
	out_json_str_or_null(o, f.user);
	out_printf(o, ",\"client\":");
	out_json_str(o, c->client_str);
	out_printf(o, ",\"client_address\":");
	out_json_str(o, f.client_addr);
	out_printf(o, ",\"tunnel\":");
	out_json_str_or_null(o, f.tunnel[0] ? f.tunnel : NULL);
	out_printf(o, ",\"mppe\":");
	out_json_str_or_null(o, f.mppe);
	out_printf(o, ",\"acct_session_id\":");
	out_json_str_or_null(o, c->acct_session_id[0] ? c->acct_session_id : NULL);
	out_printf(o, ",\"ifname\":");
	out_json_str_or_null(o, c->ifname[0] ? c->ifname : NULL);
	/* The session's /64 (ipv6-prefix-pool), and whether it is routed
	 * and advertised now (IPV6CP up). */
	char p6[INET6_ADDRSTRLEN + 4];
	out_printf(o, ",\"ipv6_prefix\":");
	out_json_str_or_null(o, c->has_prefix6 ?
	    call_prefix6_str(c, p6, sizeof(p6)) : NULL);
	out_printf(o, ",\"ipv6_up\":%s", c->ifname6[0] ? "true" : "false");
	/* Its rate limit (bits/s, null: none that way), where it came from
	 * and whether it is set on its interface now. */
	ctl_json_rate(o, "rate_down", c->rate_down);
	ctl_json_rate(o, "rate_up", c->rate_up);
	out_printf(o, ",\"rate_source\":");
	out_json_str_or_null(o, c->rate_src[0] ? c->rate_src : NULL);
	out_printf(o, ",\"rate_set\":%s", c->shaped_ifindex ? "true" : "false");
	/* What its SYNs are clamped to (IPv4), null when they are not. */
	if (c->mss_on)
		out_printf(o, ",\"tcp_mss\":%u", c->mss);
	else
		out_printf(o, ",\"tcp_mss\":null");
	out_printf(o, ",\"mppe_stateless\":%s,\"state\":",
	    f.stateless < 0 ? "null" : f.stateless ? "true" : "false");
	out_json_str(o, f.state);
	out_printf(o, ",\"pid\":%d,\"uptime_s\":%llu,\"rx_bytes\":%llu,"
	    "\"tx_bytes\":%llu,\"rx_packets\":%llu,\"tx_packets\":%llu,"
	    "\"gre_lost\":%llu,\"gre_reordered\":%llu}", (int)c->pid,
	    (unsigned long long)f.uptime_s, (unsigned long long)f.gre.rx_bytes,
	    (unsigned long long)f.gre.tx_bytes, (unsigned long long)f.gre.rx_packets,
	    (unsigned long long)f.gre.tx_packets, (unsigned long long)f.gre.rx_lost,
	    (unsigned long long)f.gre.rx_reordered);
}

static void
ctl_session_show(struct ctl_out *o, const struct call *c, uint64_t now)
{
	struct ctl_session f;
	char mppe[24];
	ctl_session_get(c, now, &f);
	out_printf(o, "call:        %u (peer's %u)\nuser:        %s\n"
	    "client:      %s\ntunnel:      %s\nmppe:        %s\nstate:       %s\n"
	    "pppd:        %d\nuptime:      %llu s\n", c->id, c->peer_id,
	    f.user ? f.user : "-", c->client_str, f.tunnel[0] ? f.tunnel : "-",
	    ctl_mppe_str(&f, mppe, sizeof(mppe)), f.state, (int)c->pid,
	    (unsigned long long)f.uptime_s);
	if (c->acct_session_id[0])
		out_printf(o, "acct session: %s\n", c->acct_session_id);
	if (c->ifname[0])
		out_printf(o, "interface:   %s\n", c->ifname);
	if (c->mss_on)
		out_printf(o, "tcp mss:     clamped to %u (IPv4)\n", c->mss);
	if (c->rate_down || c->rate_up) {
		char r[40];
		out_printf(o, "rate:        %s down/up (%s)%s\n", call_rate_str(c,
		    r, sizeof(r)), c->rate_src, c->shaped_ifindex ? "" : " not set");
	}
	if (c->has_prefix6) {
		char p6[INET6_ADDRSTRLEN + 4];
		out_printf(o, "ipv6:        %s %s\n", call_prefix6_str(c, p6,
		    sizeof(p6)), c->ifname6[0] ? "(routed and advertised)" :
		    "(IPV6CP not up)");
	}
	out_printf(o, "rx:          %llu bytes %llu packets\n"
	    "tx:          %llu bytes %llu packets\n"
	    "gre rx:      lost %llu reordered %llu duplicate %llu stale %llu "
	    "wrong-source %llu\ngre tx:      drops %llu unacked %u "
	    "over-window %llu\n"
	    "pty:         drops %llu backlog %u bytes\n",
	    (unsigned long long)f.gre.rx_bytes, (unsigned long long)f.gre.rx_packets,
	    (unsigned long long)f.gre.tx_bytes, (unsigned long long)f.gre.tx_packets,
	    (unsigned long long)f.gre.rx_lost, (unsigned long long)f.gre.rx_reordered,
	    (unsigned long long)f.gre.rx_duplicates, (unsigned long long)f.gre.rx_stale,
	    (unsigned long long)f.gre.rx_wrong_source,
	    (unsigned long long)f.gre.tx_drops, f.gre.tx_unacked,
	    (unsigned long long)f.gre.tx_over_window,
	    (unsigned long long)f.gre.pty_drops, f.gre.pty_backlog);
}

/* ---- the commands; each returns NULL or the error CODE, with `msg` */

static const char *
ctl_cmd_status(struct ctl_conn *cc, struct ctl_out *o)
{
	const struct ctl_env *s = &cc->ctl->env;
	const struct conf *cf = s->conf;
	unsigned setup = 0, up = 0, hangup = 0, ending = 0;
	struct gre_engine_stats gs;
	struct call *c;

	TAILQ_FOREACH(c, &s->calls->list, s_entry) {
		const char *st = ctl_call_state(c);
		setup += strcmp(st, "setup") == 0;
		up += strcmp(st, "up") == 0;
		hangup += strcmp(st, "hangup") == 0;
		ending += strcmp(st, "ending") == 0;
	}
	gre_engine_stats(s->gre, &gs);
	out_printf(o, "version:     pptpd %s\nuptime:      %llu s\n"
	    "connections: %u\ncalls:       %u (setup %u, up %u, hangup %u, "
	    "ending %u)\n", PPTPD_VERSION,
	    (unsigned long long)(loop_now(s->loop) - s->started_ms) / 1000,
	    s->ctrls->n, setup + up + hangup + ending, setup, up, hangup, ending);
	if (s->calls->pool != NULL)
		out_printf(o, "pool:        %zu of %zu free\n", pool_available(s->calls->pool),
		    pool_size(s->calls->pool));
	else
		out_printf(o, "pool:        none (pppd picks the addresses)\n");
	if (s->calls->pool6 != NULL)
		out_printf(o, "ipv6 pool:   %zu of %zu /64s free\n",
		    pool6_available(s->calls->pool6), pool6_size(s->calls->pool6));
	out_printf(o, "gre:         rx %llu tx %llu malformed %llu unknown-call "
	    "%llu rx-errors %llu tx-errors %llu\n",
	    (unsigned long long)gs.rx_datagrams, (unsigned long long)gs.tx_datagrams,
	    (unsigned long long)gs.rx_malformed,
	    (unsigned long long)gs.rx_unknown_call,
	    (unsigned long long)gs.rx_errors, (unsigned long long)gs.tx_errors);
	out_printf(o, "limits:      connections %d, connections-per-client %d, "
	    "calls-per-connection %d, calls-per-client %d, call-setups %d, "
	    "call-setups-per-client %d, call-rate-per-client %d, "
	    "call-setup-timeout %d, pool-share-per-client %d%%, "
	    "stimeout %d, stop-timeout %d\n",
	    cf->connections, cf->per_client, cf->calls_per_conn,
	    cf->calls_per_client, cf->setups, cf->setups_per_client, cf->call_rate,
	    cf->setup_timeout, cf->pool_share, cf->stimeout, cf->stop_timeout);
	return NULL;
}

static const char *
ctl_cmd_sessions(struct ctl_conn *cc, struct ctl_out *o, int json)
{
	const struct ctl_env *s = &cc->ctl->env;
	uint64_t now = loop_now(s->loop);
	struct call *c;
	int first = 1;

	if (json)
		out_printf(o, "[");
	TAILQ_FOREACH(c, &s->calls->list, s_entry) {
		if (json) {
			out_printf(o, first ? "\n" : ",\n");
			ctl_session_json(o, c, now);
		} else {
			ctl_session_line(o, c, now);
		}
		first = 0;
	}
	if (json)
		out_printf(o, "\n]\n");
	return NULL;
}

/* A Call ID of ours: decimal, 1..65535, nothing else. */
static int
ctl_parse_id(const char *s, uint16_t *id)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end != '\0' || v == 0 || v > UINT16_MAX)
		return -1;
	*id = (uint16_t)v;
	return 0;
}

static const char *
ctl_cmd_show(struct ctl_conn *cc, struct ctl_out *o, const char *arg,
    int json, const char **msg)
{
	uint16_t id;
	struct call *c;

	if (ctl_parse_id(arg, &id) < 0) {
		*msg = "show: a Call ID is a number from 1 to 65535";
		return CTL_ERR_USAGE;
	}
	if ((c = calls_by_id(cc->ctl->env.calls, id)) == NULL) {
		*msg = "no such session";
		return CTL_ERR_NOMATCH;
	}
	if (json) {
		ctl_session_json(o, c, loop_now(cc->ctl->env.loop));
		out_printf(o, "\n");
	} else {
		ctl_session_show(o, c, loop_now(cc->ctl->env.loop));
	}
	return NULL;
}

enum ctl_kill_by { CTL_KILL_ID, CTL_KILL_USER, CTL_KILL_ADDRESS };

struct ctl_kill {
	enum ctl_kill_by by;
	const char      *what;   /* as asked, for the log */
	struct callsel   sel;    /* "address" is the client's or the tunnel's */
};

static const char *
ctl_kill_parse(const char *arg, struct ctl_kill *k, const char **msg)
{
	static const char *const by[] = { "id ", "user ", "address " };
	size_t i;
	for (i = 0; i < sizeof(by) / sizeof(by[0]); i++)
		if (strncmp(arg, by[i], strlen(by[i])) == 0)
			break;
	memset(&k->sel, 0, sizeof(k->sel));
	k->by = (enum ctl_kill_by)i;
	k->what = arg + (i < 3 ? strlen(by[i]) : 0);
	if (i == 3)
		*msg = "kill: say 'id ID', 'user NAME' or 'address ADDR'";
	else if (k->by == CTL_KILL_ID && ctl_parse_id(k->what, &k->sel.id) < 0)
		*msg = "kill: a Call ID is a number from 1 to 65535";
	else if (k->by == CTL_KILL_USER && (k->what[0] == '\0' ||
	    strcmp(k->what, "-") == 0))
		*msg = "kill: no user name";
	else if (k->by == CTL_KILL_ADDRESS &&
	    inet_pton(AF_INET, k->what, &k->sel.addr) != 1)
		*msg = "kill: not an IPv4 address";
	else {
		k->sel.by_id = k->by == CTL_KILL_ID;
		k->sel.user = k->by == CTL_KILL_USER ? k->what : NULL;
		k->sel.by_addr = k->by == CTL_KILL_ADDRESS;
		return NULL;
	}
	return CTL_ERR_USAGE;
}

/* A clean hang-up of every live call that matches: pppd ends LCP, the
 * client gets a Call-Disconnect-Notify, the address goes back to the pool
 * once pppd is reaped. */
static const char *
ctl_cmd_kill(struct ctl_conn *cc, struct ctl_out *o, const char *arg,
    const char **msg)
{
	static const char *const byname[] = { "id", "user", "address" };
	const struct ctl_env *s = &cc->ctl->env;
	struct ctl_kill k;
	struct call *c;
	char reason[sizeof(c->hangup_reason)];
	unsigned n = 0;
	const char *code = ctl_kill_parse(arg, &k, msg);

	if (code != NULL)
		return code;
	snprintf(reason, sizeof(reason), "hung up by pptpctl (uid %u pid %d)",
	    (unsigned)cc->uid, (int)cc->pid);
	for (c = NULL; (c = callsel_next(&k.sel, s->calls, c)) != NULL; ) {
		n++;
		if (c->state == CALL_HANGUP) {
			out_printf(o, "%u/%u user %s: already hanging up\n", c->id,
			    c->peer_id, c->user[0] ? c->user : "-");
			continue;
		}
		call_hangup(c, PPTP_CDN_ADMIN_SHUTDOWN, REPORT_CAUSE_ADMIN,
		    reason);
		log_rl(&cc->ctl->rl_kill, loop_now(s->loop), LOG_NOTICE,
		    "ctl: kill %s %s: call %u/%u %s user %s hung up (asked by uid "
		    "%u pid %d)", byname[k.by], k.what, c->id, c->peer_id,
		    c->client_str, c->user[0] ? c->user : "-", (unsigned)cc->uid,
		    (int)cc->pid);
		out_printf(o, "%u/%u user %s: hanging up\n", c->id, c->peer_id,
		    c->user[0] ? c->user : "-");
	}
	if (n == 0) {
		*msg = "no such session";
		return CTL_ERR_NOMATCH;
	}
	return NULL;
}

/* The same reload as SIGHUP's; the answer carries the refusal's
 * "file:line: reason". */
static const char *
ctl_cmd_reload(struct ctl_conn *cc, struct ctl_out *o, const char **msg)
{
	static char err[CONF_ERR_LEN + PATH_MAX];
	const struct ctl_env *s = &cc->ctl->env;

	log_msg(LOG_NOTICE, "ctl: reload asked by uid %u pid %d",
	    (unsigned)cc->uid, (int)cc->pid);
	int rc = s->reload(s->arg, err, sizeof(err));
	if (rc < 0) {
		*msg = err;
		return CTL_ERR_REFUSED;
	}
	out_printf(o, "reloaded %s\n", s->conf->file);
	return NULL;
}

/* The installed binary takes over (upgrade.h): the answer goes out
 * before the worker leaves. */
static const char *
ctl_cmd_upgrade(struct ctl_conn *cc, struct ctl_out *o, const char **msg)
{
	static char err[512];
	const struct ctl_env *s = &cc->ctl->env;

	log_msg(LOG_NOTICE, "ctl: upgrade asked by uid %u pid %d",
	    (unsigned)cc->uid, (int)cc->pid);
	if (s->upgrade(s->arg, err, sizeof(err)) < 0) {
		*msg = err;
		return CTL_ERR_REFUSED;
	}
	out_printf(o, "upgrading: the installed pptpd takes over the "
	    "sessions\n");
	return NULL;
}

/* `rest` is what follows `word`: "" when the request is the word alone. */
static int
ctl_word(const char *req, const char *word, const char **rest)
{
	size_t n = strlen(word);
	if (strncmp(req, word, n) != 0 || (req[n] != '\0' && req[n] != ' '))
		return 0;
	*rest = req[n] ? req + n + 1 : req + n;
	return 1;
}

/* " json" at the end of `arg`: cut off, and say so. */
static int
ctl_json_flag(char *arg)
{
	size_t n = strlen(arg), k = strlen(CTL_JSON_SUFFIX);
	if (strcmp(arg, CTL_JSON_SUFFIX + 1) == 0) {
		arg[0] = '\0';
		return 1;
	}
	if (n > k && strcmp(arg + n - k, CTL_JSON_SUFFIX) == 0) {
		arg[n - k] = '\0';
		return 1;
	}
	return 0;
}

static const char *
ctl_dispatch(struct ctl_conn *cc, char *req, struct ctl_out *body,
    const char **msg)
{
	const char *rest;
	char *arg;

	if (ctl_word(req, "status", &rest) && *rest == '\0')
		return ctl_cmd_status(cc, body);
	if (ctl_word(req, "sessions", &rest)) {
		if (*rest == '\0' || strcmp(rest, CTL_JSON_SUFFIX + 1) == 0)
			return ctl_cmd_sessions(cc, body, *rest != '\0');
	} else if (ctl_word(req, "show", &rest)) {
		arg = (char *)rest;
		int json = ctl_json_flag(arg);
		return ctl_cmd_show(cc, body, arg, json, msg);
	} else if (ctl_word(req, "kill", &rest)) {
		return ctl_cmd_kill(cc, body, rest, msg);
	} else if (ctl_word(req, "reload", &rest) && *rest == '\0') {
		return ctl_cmd_reload(cc, body, msg);
	} else if (ctl_word(req, "upgrade", &rest) && *rest == '\0') {
		return ctl_cmd_upgrade(cc, body, msg);
	} else if (ctl_word(req, "metrics", &rest) && *rest == '\0') {
		*msg = "not supported yet";
		return CTL_ERR_UNSUPPORTED;
	}
	*msg = "unknown request";
	return CTL_ERR_USAGE;
}

/* ---- one exchange */

static void
ctl_conn_free(void *p)
{
	struct ctl_conn *cc = p;
	free(cc->out.p);
	free(cc);
}

static void
ctl_conn_close(struct ctl_conn *cc)
{
	struct loop *l = cc->ctl->env.loop;
	loop_timer_cancel(l, &cc->timer);
	loop_fd_del(l, &cc->lf);
	close(cc->fd);
	TAILQ_REMOVE(&cc->ctl->conns, cc, entry);
	cc->ctl->nconns--;
	loop_defer_free(l, &cc->defer, ctl_conn_free, cc);
}

static void
ctl_conn_refuse(struct ctl_conn *cc, const char *code, const char *msg)
{
	struct ctl *ctl = cc->ctl;
	log_rl(&ctl->rl, loop_now(ctl->env.loop), LOG_WARNING,
	    "ctl: request from uid %u pid %d refused: %s", (unsigned)cc->uid,
	    (int)cc->pid, msg);
	cc->out.len = 0;
	out_printf(&cc->out, "error %s %s\n", code, msg);
}

/* The answer is complete in cc->out: send it as the socket takes it. */
static void
ctl_conn_answer(struct ctl_conn *cc)
{
	if (cc->out.oom) {
		/* (a short, static answer: no allocation needed) */
		static const char oom[] = "error " CTL_ERR_INTERNAL " out of memory\n";
		free(cc->out.p);
		cc->out = (struct ctl_out){ .p = strdup(oom), .len = sizeof(oom) - 1,
			.cap = sizeof(oom) };
		if (cc->out.p == NULL) {
			ctl_conn_close(cc);
			return;
		}
	}
	cc->sent = 0;
	loop_fd_mod(cc->ctl->env.loop, &cc->lf, EPOLLOUT);
}

static void
ctl_conn_request(struct ctl_conn *cc)
{
	struct ctl_out body = { 0 };
	const char *msg = NULL, *code = NULL;

	for (size_t i = 0; i < cc->reqlen && code == NULL; i++)
		if (!str_printable((unsigned char)cc->req[i]))
			code = CTL_ERR_USAGE, msg = "request is not printable text";
	if (code == NULL)
		code = ctl_dispatch(cc, cc->req, &body, &msg);
	if (code != NULL) {
		if (strcmp(code, CTL_ERR_NOMATCH) != 0)
			log_rl(&cc->ctl->rl, loop_now(cc->ctl->env.loop), LOG_WARNING,
			    "ctl: request from uid %u pid %d: %s",
			    (unsigned)cc->uid, (int)cc->pid, msg);
		out_printf(&cc->out, "error %s %s\n", code, msg);
	} else {
		out_printf(&cc->out, "ok\n");
		if (body.oom)
			cc->out.oom = 1;
		else if (body.len)
			out_printf(&cc->out, "%.*s", (int)body.len, body.p);
	}
	free(body.p);
	ctl_conn_answer(cc);
}

static void
ctl_conn_read(struct ctl_conn *cc)
{
	ssize_t n = recv(cc->fd, cc->req + cc->reqlen, CTL_REQ_MAX - cc->reqlen,
	    MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {   /* gone before its request was complete */
		ctl_conn_close(cc);
		return;
	}
	cc->reqlen += (size_t)n;
	char *nl = memchr(cc->req, '\n', cc->reqlen);
	if (nl != NULL) {
		cc->reqlen = (size_t)(nl - cc->req);
		cc->req[cc->reqlen] = '\0';
		ctl_conn_request(cc);
	} else if (cc->reqlen == CTL_REQ_MAX) {
		ctl_conn_refuse(cc, CTL_ERR_USAGE, "request too long");
		ctl_conn_answer(cc);
	}
}

static void
ctl_conn_write(struct ctl_conn *cc)
{
	while (cc->sent < cc->out.len) {
		ssize_t n = send(cc->fd, cc->out.p + cc->sent, cc->out.len - cc->sent,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		if (n <= 0)
			break;
		cc->sent += (size_t)n;
	}
	ctl_conn_close(cc);   /* all said (or the reader went away) */
}

static void
ctl_conn_ready(void *arg, uint32_t events)
{
	struct ctl_conn *cc = arg;
	if (cc->lf.events & EPOLLOUT)
		ctl_conn_write(cc);
	else if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		ctl_conn_read(cc);
}

static void
ctl_conn_timeout(void *arg)
{
	struct ctl_conn *cc = arg;
	log_rl(&cc->ctl->rl, loop_now(cc->ctl->env.loop), LOG_WARNING,
	    "ctl: request from uid %u pid %d: no exchange within %d ms, closed",
	    (unsigned)cc->uid, (int)cc->pid, CTL_TIMEOUT_MS);
	ctl_conn_close(cc);
}

static void
ctl_accept_one(struct ctl *ctl, int fd)
{
	const struct ctl_env *s = &ctl->env;
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1 };
	socklen_t len = sizeof(cred);
	struct ctl_conn *cc = calloc(1, sizeof(*cc));

	if (cc == NULL || loop_fd_add(s->loop, &cc->lf, fd, EPOLLIN,
	    ctl_conn_ready, cc) < 0) {
		log_rl(&ctl->rl, loop_now(s->loop), LOG_WARNING,
		    "ctl: request refused: out of resources");
		free(cc);
		close(fd);
		return;
	}
	cc->ctl = ctl;
	cc->fd = fd;
	TAILQ_INSERT_TAIL(&ctl->conns, cc, entry);
	ctl->nconns++;
	loop_timer_set(s->loop, &cc->timer, CTL_TIMEOUT_MS, ctl_conn_timeout, cc);
	/* The directory and the mode keep others out already; this holds even
	 * if somebody loosened them. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		cred.uid = (uid_t)-1;
	cc->uid = cred.uid;
	cc->pid = cred.pid;
	if (cred.uid != 0) {
		ctl_conn_refuse(cc, CTL_ERR_DENIED, "only root may use the control socket");
		ctl_conn_answer(cc);
	} else if (ctl->nconns > CTL_CONNS_MAX) {
		ctl_conn_refuse(cc, CTL_ERR_BUSY, "too many requests at once");
		ctl_conn_answer(cc);
	}
}

/* accept() failed with EMFILE or ENFILE (err): the request is shed
 * (shed.h) rather than the loop woken again at once, for ever. Returns 1
 * when a request was shed (try the next), 0 when none waits, -1 when
 * paused. */
static int
ctl_accept_shed(struct ctl *ctl, int err)
{
	struct sockaddr_un peer;
	socklen_t len = sizeof(peer);

	switch (shed_accept(&ctl->shed, (struct sockaddr *)&peer, &len)) {
	case SHED_DROPPED:
		log_rl(&ctl->rl, loop_now(ctl->env.loop), LOG_WARNING,
		    "ctl: request refused: out of descriptors");
		return 1;
	case SHED_EMPTY:
		return 0;
	case SHED_PAUSED:
		break;
	}
	log_rl(&ctl->rl, loop_now(ctl->env.loop), LOG_ERR, "ctl: accept: %s: "
	    "not accepting for %d ms", strerror(err), SHED_PAUSE_MS);
	return -1;
}

static void
ctl_accept(void *arg, uint32_t events)
{
	struct ctl *ctl = arg;
	(void)events;
	for (;;) {
		int fd = accept4(ctl->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			if (ctl_accept_shed(ctl, errno) <= 0)
				return;
			continue;
		}
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				log_rl(&ctl->rl, loop_now(ctl->env.loop), LOG_ERR,
				    "ctl: accept: %s", strerror(errno));
			return;
		}
		ctl_accept_one(ctl, fd);
	}
}

/* Somebody listens on `path` (another pptpd): a connection is taken, or
 * would be once its backlog drains. */
static int
ctl_path_live(const struct sockaddr_un *sun)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	int live = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0 ||
	    errno == EAGAIN || errno == EINPROGRESS;
	close(fd);
	return live;
}

/* Only root may enter the directory: nobody else can even try to reach the
 * control socket, or replace it. One that anybody else could enter or that
 * is not ours (or not a directory: a symbolic link) is refused, not
 * repaired: we did not make it so and cannot tell what was done in it. */
static int
ctl_dir_check(char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(CTL_DIR, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", CTL_DIR, strerror(errno));
		return -1;
	}
	if (lstat(CTL_DIR, &st) < 0)
		snprintf(err, errlen, "%s: %s", CTL_DIR, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		snprintf(err, errlen, "%s is not a directory (a symbolic link?): "
		    "refused; remove it", CTL_DIR);
	else if (st.st_uid != geteuid())
		snprintf(err, errlen, "%s is owned by uid %u, not %u: refused",
		    CTL_DIR, (unsigned)st.st_uid, (unsigned)geteuid());
	else if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
		snprintf(err, errlen, "%s has mode %04o: refused; group and others "
		    "must have no access (chmod 0700 %s)", CTL_DIR,
		    (unsigned)(st.st_mode & 07777), CTL_DIR);
	else
		return 0;
	return -1;
}

int
ctl_open(struct ctl *c, const struct ctl_env *env, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	c->env = *env;
	c->fd = -1;
	c->lf.fd = -1;
	c->nconns = 0;
	TAILQ_INIT(&c->conns);
	ratelimit_init(&c->rl, CTL_RL_BURST, LOG_RL_PERIOD_MS);
	ratelimit_init(&c->rl_kill, CTL_RL_KILL, LOG_RL_PERIOD_MS);
	if (ctl_dir_check(err, errlen) < 0)
		return -1;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", CTL_SOCK_PATH);
	if (ctl_path_live(&sun)) {
		snprintf(err, errlen, "another pptpd answers on %s: refused (stop it "
		    "first)", CTL_SOCK_PATH);
		return -1;
	}
	unlink(CTL_SOCK_PATH);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	/* 0600 from the start: there is no moment when others could connect. */
	mode_t old = umask(0177);
	int bound = c->fd >= 0 &&
	    bind(c->fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	umask(old);
	if (!bound || listen(c->fd, CTL_BACKLOG) < 0 ||
	    shed_open(&c->shed, env->loop, &c->lf) < 0 ||
	    loop_fd_add(env->loop, &c->lf, c->fd, EPOLLIN, ctl_accept, c) < 0) {
		snprintf(err, errlen, "cannot open the control socket %s: %s",
		    CTL_SOCK_PATH, strerror(errno));
		if (c->fd >= 0) {
			close(c->fd);
			if (bound)
				unlink(CTL_SOCK_PATH);
		}
		c->fd = -1;
		return -1;
	}
	return 0;
}

void
ctl_relisten(struct ctl *c)
{
	if (c->fd >= 0 && listen(c->fd, CTL_BACKLOG) < 0)
		log_msg(LOG_WARNING, "ctl: cannot listen again on %s after "
		    "daemonising: %s", CTL_SOCK_PATH, strerror(errno));
}

void
ctl_close(struct ctl *c)
{
	struct ctl_conn *cc;
	if (c->env.loop == NULL)
		return;   /* never opened */
	while ((cc = TAILQ_FIRST(&c->conns)) != NULL)
		ctl_conn_close(cc);
	shed_close(&c->shed);
	if (c->fd < 0)
		return;
	loop_fd_del(c->env.loop, &c->lf);
	close(c->fd);
	unlink(CTL_SOCK_PATH);
	c->fd = -1;
}
