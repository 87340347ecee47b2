/* A call: pppd on a pty pair, bridged to the GRE engine; or, on the kernel
 * path, pppd without a pty, its plugin holding the kernel's PPTP channel.
 *
 *   ACTIVE --(CCRQ | pppd exit | pty closed | control gone)--> ENDING --reap--> freed
 *     |                                                          ^
 *     +--(our hang-up: SIGTERM)--> HANGUP --(pppd gone | 4 s)---+
 *
 * The address pair, the Call ID and the call's place in its connection's
 * and its client's counts are given back only once pppd has been reaped, so
 * a new call never gets an address whose ppp interface still exists, nor a
 * Call ID whose old pppd may still hold it (the kernel path's channel
 * socket is bound to it).
 *
 * Ending a call hangs up pppd's pty and sends SIGTERM, then SIGKILL after
 * a grace; hanging up sends SIGTERM. Both are held back while pppd's
 * radius.so sends its Accounting-Stop (between the plugin's "down" and
 * "down_done", at most CALL_ACCT_STOP_MS): any signal would end its wait
 * for the answer. */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pptpd/acct.h"
#include "pptpd/call.h"
#include "pptpd/client.h"
#include "pptpd/conf.h"
#include "pptpd/datapath.h"
#include "pptpd/kguard.h"
#include "pptpd/log.h"
#include "pptpd/mss.h"
#include "pptpd/nd.h"
#include "gre/gre.h"
#include "proto/journal.h"
#include "proto/msg.h"
#include "pptpd/pool.h"
#include "pptpd/pool6.h"
#include "pptpd/pppd.h"
#include "pptpd/shaper.h"
#include "proto/peers.h"
#include "proto/report.h"
#include "common/strclean.h"

#define CALL_ID_TRIES  64

_Static_assert(CALL_NAME_MAX >= REPORT_MAX_VALUE,
    "a reported user name or Acct-Session-Id is kept whole");

/* Call IDs are taken until pppd is reaped, not only while GRE flows: on
 * the kernel path an ending call's pppd still holds a PPTP socket bound to
 * this ID, and on either path its reports name it. */
static int
call_id_taken(const struct calls *s, uint16_t id)
{
	return (s->ids[id / 64] >> (id % 64)) & 1;
}

static void
call_id_mark(struct calls *s, uint16_t id, int taken)
{
	if (taken)
		s->ids[id / 64] |= UINT64_C(1) << (id % 64);
	else
		s->ids[id / 64] &= ~(UINT64_C(1) << (id % 64));
}

/* Random, so an off-path sender has to guess it (0 is never used). */
static int
call_pick_id(struct calls *s, uint16_t *id)
{
	for (int i = 0; i < CALL_ID_TRIES; i++) {
		uint16_t r;
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (uint16_t)(random() & 0xffff);
		if (r != 0 && !call_id_taken(s, r)) {
			*id = r;
			return 0;
		}
	}
	/* The table is crowded: any free id will do. */
	for (uint32_t r = 1; r <= UINT16_MAX; r++)
		if (!call_id_taken(s, (uint16_t)r)) {
			*id = (uint16_t)r;
			return 0;
		}
	return -1;
}

static void call_report(void *arg, const char *data, size_t len);

/* The call's record in the journal (proto/journal.h), written whole from
 * what it holds now; nothing without a journal. */
static void
call_journal(const struct call *c)
{
	void *j = c->calls->journal;
	struct journal_rec r;

	/* (a call reaped already has its record cleared and its ID free) */
	if (j == NULL || !call_id_taken(c->calls, c->id))
		return;
	memset(&r, 0, sizeof(r));
	r.state = JOURNAL_LIVE;
	r.call_id = c->id;
	r.peer_call_id = c->peer_id;
	r.flags = (c->kernel ? JOURNAL_F_KERNEL : 0) |
	    (c->has_prefix6 ? JOURNAL_F_PREFIX6 : 0);
	r.pid = (uint32_t)c->pid;
	r.local_ip = c->local_ip.s_addr;
	r.remote_ip = c->remote_ip.s_addr;
	r.peer_window = c->peer_window;
	r.started_ms = c->started_ms;
	r.up_ms = c->up_ms;
	r.rate_down = c->rate_down;
	r.rate_up = c->rate_up;
	memcpy(r.prefix6, &c->prefix6, sizeof(r.prefix6));
	snprintf(r.mppe, sizeof(r.mppe), "%s", c->mppe);
	snprintf(r.user, sizeof(r.user), "%s", c->user);
	snprintf(r.acct_session_id, sizeof(r.acct_session_id), "%s",
	    c->acct_session_id);
	snprintf(r.ifname, sizeof(r.ifname), "%s", c->ifname);
	snprintf(r.ifname6, sizeof(r.ifname6), "%s", c->ifname6);
	snprintf(r.tunnel, sizeof(r.tunnel), "%s", c->tunnel);
	snprintf(r.rate_src, sizeof(r.rate_src), "%s", c->rate_src);
	journal_rec_set(j, &r);
}
static void call_signal(struct call *c, int sig);
static void call_signal_cut(struct call *c, int sig, int cut);

/* The plugin's report channel, when pppd is told of one (`reports`, the
 * same flag that put pptpd-report-fd on its command line): *pppd_fd is
 * pppd's end (-1: none). */
static int
call_facts_open(struct call *c, int reports, int *pppd_fd, const char **reason)
{
	static char why[96];   /* the caller logs it at once */

	*pppd_fd = -1;
	if (!reports)
		return 0;
	if (facts_open(&c->facts, c->calls->loop, call_report, c, pppd_fd) < 0) {
		snprintf(why, sizeof(why), "cannot open the plugin's report "
		    "channel: %s", strerror(errno));
		*reason = why;
		return -1;
	}
	return 0;
}

/* Start the call's pppd (a socket `sock`: the kernel path's channel):
 * here, or by the monitor when the server has one (calls->runner). */
static int
call_spawn(struct call *c, int kernel, int sock, const char **reason)
{
	const struct conf *conf = c->calls->conf;
	const struct pppd_runner *run = c->calls->runner;
	int report;
	struct pppd_args in = { .local = c->local_ip, .remote = c->remote_ip,
		.client = c->peer, .call_id = c->id, .reports = !conf->noplugin,
		.kernel = kernel, .peer_call_id = c->peer_id,
		.self = c->conn.local, .ipv6 = c->has_prefix6 };

	if (call_facts_open(c, in.reports, &report, reason) < 0)
		return -1;
	pid_t pid = run != NULL ?
	    run->start(run->arg, &in, c->conn.sock, sock, report,
	    facts_fd(&c->facts), &c->pty, reason) :
	    pppd_start(conf, &in, sock, report, &c->pty, reason);
	if (report >= 0)
		close(report);
	if (pid < 0) {
		facts_close(&c->facts);
		return -1;
	}
	c->pid = pid;
	return 0;
}

void
call_kill_now(struct call *c)
{
	call_signal(c, SIGKILL);
}

/* A signal for the call's pppd: sent here, or by the monitor, which
 * started it. */
static void
call_signal(struct call *c, int sig)
{
	call_signal_cut(c, sig, 0);
}

/* `cut`: the pty master has just been closed here (a runner holds a copy
 * of it, which goes too). */
static void
call_signal_cut(struct call *c, int sig, int cut)
{
	const struct pppd_runner *run = c->calls->runner;
	if (c->pid <= 0)
		return;
	if (run != NULL)
		run->signal(run->arg, c->id, c->pid, sig, cut);
	else
		kill(c->pid, sig);
}

static void
call_pty_ready(void *arg, uint32_t events)
{
	struct call *c = arg;
	uint64_t now = loop_now(c->calls->loop);
	if (!call_is_live(c))
		return;
	if (events & EPOLLOUT)
		gre_call_pty_output(c->gre);
	if (call_is_live(c) && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		gre_call_pty_input(c->gre, now);
}

int
call_is_live(const struct call *c)
{
	return c->state == CALL_ACTIVE || c->state == CALL_HANGUP;
}

void
calls_init(struct calls *cs)
{
	TAILQ_INIT(&cs->list);
	ratelimit_init(&cs->rl_call, CALLS_RL_BURST, LOG_RL_PERIOD_MS);
}

struct call *
calls_by_id(const struct calls *cs, uint16_t id)
{
	struct call *c;
	TAILQ_FOREACH(c, &cs->list, s_entry)
		if (c->id == id)
			return c;
	return NULL;
}

struct call *
calls_by_pid(const struct calls *cs, pid_t pid)
{
	struct call *c;
	TAILQ_FOREACH(c, &cs->list, s_entry)
		if (c->pid == pid)
			return c;
	return NULL;
}

void
calls_count(const struct calls *cs, unsigned *active, unsigned *ending)
{
	const struct call *c;
	*active = *ending = 0;
	TAILQ_FOREACH(c, &cs->list, s_entry) {
		if (call_is_live(c))
			(*active)++;
		else
			(*ending)++;
	}
}

unsigned
calls_sessions(const struct calls *cs)
{
	unsigned active, ending;
	calls_count(cs, &active, &ending);
	return active;
}

void
call_pty_want_write(struct call *c, int on)
{
	loop_fd_mod(c->calls->loop, &c->pty_lf, EPOLLIN | (on ? EPOLLOUT : 0));
}

/* The session is up, or will never be: it no longer counts as a setup. */
static void
call_setup_done(struct call *c)
{
	if (!c->in_setup)
		return;
	c->in_setup = 0;
	loop_timer_cancel(c->calls->loop, &c->setup_timer);
	client_setup_done(c->client);
	c->calls->setups--;
}

/* The session is not up after call-setup-timeout. With the plugin's
 * reports it is hung up: pppd's own negotiation and authentication have
 * given up by then, and the call holds a pool address and a root process
 * for a peer that has not authenticated. It counts as a setup until its
 * pppd is reaped, so a peer cannot start another in its place before it
 * has gone. Without the reports (noplugin) an up session cannot be told
 * from one that is not: the call only stops counting as a setup. */
static void
call_setup_timeout(void *arg)
{
	struct call *c = arg;
	struct calls *s = c->calls;

	if (s->conf->noplugin) {
		call_setup_done(c);
		return;
	}
	if (c->state != CALL_ACTIVE)
		return;   /* going already */
	log_rl(&s->rl_call, loop_now(s->loop), LOG_NOTICE, "call %u/%u %s: "
	    "session not up within %d s (call-setup-timeout): hanging up",
	    c->id, c->peer_id, c->client_str, s->conf->setup_timeout);
	call_hangup(c, PPTP_CDN_ADMIN_SHUTDOWN, REPORT_CAUSE_NONE,
	    "session not up in time (call-setup-timeout)");
}

/* pppd has not written in CALL_PTY_HOLD_MS: it waits for the peer. */
static void
call_hold_timeout(void *arg)
{
	struct call *c = arg;
	if (call_is_live(c))
		gre_call_release_pty(c->gre);
}

/* The call counts as a setup, with call-setup-timeout to come up. */
static void
call_setup_arm(struct call *c)
{
	struct calls *s = c->calls;
	client_setup_add(c->client);
	s->setups++;
	c->in_setup = 1;
	loop_timer_set(s->loop, &c->setup_timer,
	    (uint64_t)s->conf->setup_timeout * 1000, call_setup_timeout, c);
}

/* From here until call_finish the call holds its Call ID, a place in its
 * client's counts and a setup slot. */
static void
call_hold(struct call *c)
{
	call_id_mark(c->calls, c->id, 1);
	client_call_add(c->client);
	call_setup_arm(c);
}

/* The call is on the server's list from here on. */
static void
call_started(struct calls *s, struct call *c)
{
	c->started_ms = loop_now(s->loop);
	c->state = CALL_ACTIVE;
	call_journal(c);
	TAILQ_INSERT_TAIL(&s->list, c, s_entry);
	log_rl(&s->rl_call, loop_now(s->loop), LOG_INFO,
	    "call %u/%u %s: started pppd %d for %s%s", c->id, c->peer_id,
	    c->client_str, (int)c->pid, inet_ntoa(c->remote_ip),
	    c->kernel ? " (kernel data path)" : "");
}

/* The call leaves the kernel path's GRE guard; with `report`, what the
 * guard did to its packets is logged if it did anything (a dropped or
 * renumbered packet is a forger's, or a fault on the path). */
static void
call_unguard(struct call *c, int report)
{
	struct kguard_stats st;
	if (!c->guarded)
		return;
	c->guarded = 0;
	kguard_del(c->calls->guard, c->peer, c->id, &st);
	if (report)
		kguard_stats_log(&st, c->id, c->peer_id, c->peer);
}

/* The session's interface leaves the MSS clamping table, if it is in. */
static void
call_mss_del(struct call *c)
{
	if (!c->mss_on)
		return;
	c->mss_on = 0;
	/* A runner takes the interface out itself (pppd.h). */
	if (c->calls->mss != NULL)
		mss_del(c->calls->mss, c->ifname, c->id);
}

/* The session's interface (c->ifname) joins the MSS clamping table. A
 * failure costs the session its clamping, never the session. */
static void
call_mss_add(struct call *c)
{
	const struct pppd_runner *run = c->calls->runner;
	char why[256];
	int rc;

	if (c->ifname[0] == '\0')
		return;
	if (c->calls->mss != NULL)
		rc = mss_add(c->calls->mss, c->ifname, c->id, &c->mss, why,
		    sizeof(why));
	else if (c->calls->mss_by_runner && run != NULL)
		rc = run->clamp(run->arg, c->id, c->ifname, &c->mss, why,
		    sizeof(why));
	else
		return;
	if (rc == -2) {
		/* Off at the monitor, which said so once: as without a table
		 * here, not a line per session. */
		c->calls->mss_by_runner = 0;
		return;
	}
	if (rc < 0) {
		log_msg(LOG_WARNING, "call %u/%u %s: user %s: TCP MSS not clamped "
		    "on %s: %s", c->id, c->peer_id, inet_ntoa(c->peer),
		    c->user[0] ? c->user : "-", c->ifname, why);
		return;
	}
	c->mss_on = 1;
	log_msg(LOG_INFO, "call %u/%u %s: user %s: TCP MSS clamped to %u on %s",
	    c->id, c->peer_id, inet_ntoa(c->peer), c->user[0] ? c->user : "-",
	    c->mss, c->ifname);
}

void
call_mss_renew(struct call *c)
{
	c->mss_on = 0;   /* its element went with the old table */
	if (call_is_live(c))
		call_mss_add(c);
}

/* ---- per-user rate limits (shaper.h) */

/* The plugin checks a rate against the peers module's bounds before it
 * reports it; pptpd checks it again against the shaper's: one range. */
_Static_assert(SHAPER_RATE_MIN == PEERS_RATE_MIN &&
    SHAPER_RATE_MAX == PEERS_RATE_MAX, "one range of rates");

const char *
call_rate_str(const struct call *c, char *buf, size_t len)
{
	char d[16], u[16];

	if (c->rate_down == 0 && c->rate_up == 0)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "%s/%s",
		    c->rate_down ? shaper_rate_str(c->rate_down, d, sizeof(d)) : "-",
		    c->rate_up ? shaper_rate_str(c->rate_up, u, sizeof(u)) : "-");
	return buf;
}

/* call_shape when the runner (the monitor) sets the rate: it keeps the
 * interface's index; here shaped_ifindex is only "a rate is set". */
static int
call_shape_run(struct call *c, int limited, char *why, size_t whylen)
{
	const struct pppd_runner *run = c->calls->runner;
	struct shaper_stats *st = &c->calls->runner_rates;

	if (run->shape(run->arg, c->id, c->ifname, c->rate_down, c->rate_up,
	    why, whylen) < 0) {
		st->failed++;
		return -1;
	}
	st->applied++;   /* as shaper_set counts: a removal too */
	c->shaped_ifindex = limited;
	return 0;
}

/* The rate set on the session's interface (IPCP up), or taken off it
 * when it has none now. On failure what was set stays set. */
static int
call_shape(struct call *c, char *why, size_t whylen)
{
	int limited = c->rate_down != 0 || c->rate_up != 0;

	if (c->ifname[0] == '\0' || (c->shaped_ifindex == 0 && !limited))
		return 0;
	if (c->calls->shape_by_runner)
		return call_shape_run(c, limited, why, whylen);
	if (c->calls->shaper == NULL) {
		snprintf(why, whylen, "no netlink socket for traffic control");
		return -1;
	}
	unsigned ix = shaper_set(c->calls->shaper, c->ifname, c->rate_down,
	    c->rate_up, why, whylen);
	if (ix == 0)
		return -1;
	c->shaped_ifindex = limited ? ix : 0;
	return 0;
}

/* IPCP came up: the session's rate on its interface. A failure costs
 * the session its limit, never the session (as MSS clamping). */
static void
call_shape_up(struct call *c)
{
	char why[160], r[40];

	if (call_shape(c, why, sizeof(why)) < 0)
		log_msg(LOG_ERR, "call %u/%u %s: user %s: rate %s (%s) not set on "
		    "%s: %s", c->id, c->peer_id, c->client_str,
		    c->user[0] ? c->user : "-", call_rate_str(c, r, sizeof(r)),
		    c->rate_src, c->ifname, why);
}

/* Off the interface it was set on (by its index: a later session may
 * have an interface of the same name already). */
static void
call_unshape(struct call *c)
{
	const struct pppd_runner *run = c->calls->runner;
	char why[160];

	if (c->shaped_ifindex != 0 && c->calls->shaper != NULL)
		shaper_clear(c->calls->shaper, c->shaped_ifindex);
	/* A runner takes it off at the reap itself (pppd.h); before that
	 * (IPCP down, another interface) it is asked to, or a later rate of
	 * 0/0 would never reach the interface. */
	else if (c->shaped_ifindex != 0 && c->calls->shape_by_runner &&
	    run != NULL && c->ifname[0] != '\0')
		run->shape(run->arg, c->id, c->ifname, 0, 0, why, sizeof(why));
	c->shaped_ifindex = 0;
}

/* The plugin's "auth": the rate the peers file or RADIUS gave this user
 * (report.h: rate_down, rate_up, rate_src). A malformed one is ignored
 * with a line, as the report is outside input. */
static void
call_take_rate(struct call *c, const struct report_msg *m)
{
	uint64_t down = 0, up = 0;
	const char *src = report_get(m, "rate_src");

	c->rate_down = c->rate_up = 0;
	c->rate_src[0] = '\0';
	if (report_get(m, "rate_down") == NULL && report_get(m, "rate_up") == NULL)
		return;
	if ((report_get(m, "rate_down") != NULL &&
	    report_get_u64(m, "rate_down", &down) < 0) ||
	    (report_get(m, "rate_up") != NULL &&
	    report_get_u64(m, "rate_up", &up) < 0) ||
	    !shaper_rate_ok(down) || !shaper_rate_ok(up)) {
		log_rl(c->calls->rl_input, loop_now(c->calls->loop), LOG_WARNING,
		    "call %u/%u %s: the rate in pppd %d's report is not one we "
		    "take: no limit", c->id, c->peer_id, c->client_str, (int)c->pid);
		return;
	}
	c->rate_down = down;
	c->rate_up = up;
	snprintf(c->rate_src, sizeof(c->rate_src), "%s", src ? src : "plugin");
	str_clean_inplace(c->rate_src);
}

int
call_set_rate(struct call *c, int has_down, uint64_t down, int has_up,
    uint64_t up, const char *src, char *why, size_t whylen)
{
	uint64_t od = c->rate_down, ou = c->rate_up;
	char r[40];

	if (has_down)
		c->rate_down = down;
	if (has_up)
		c->rate_up = up;
	if (call_shape(c, why, whylen) < 0) {
		c->rate_down = od;
		c->rate_up = ou;
		return -1;
	}
	snprintf(c->rate_src, sizeof(c->rate_src), "%s", src);
	log_msg(LOG_NOTICE, "call %u/%u %s: user %s: rate now %s (%s)%s",
	    c->id, c->peer_id, c->client_str, c->user[0] ? c->user : "-",
	    c->rate_down || c->rate_up ? call_rate_str(c, r, sizeof(r)) :
	    "unlimited", src, c->ifname[0] ? "" : ", set when IPCP is up");
	call_journal(c);
	return 0;
}

/* A /64 for the session when there is an IPv6 pool. Without one left the
 * session is IPv4 only (pppd is not given +ipv6), not refused. */
static void
call_take_prefix6(struct call *c)
{
	if (c->calls->pool6 == NULL || c->calls->nd == NULL)
		return;
	if (pool6_alloc(c->calls->pool6, &c->prefix6) < 0) {
		log_rl(&c->calls->rl_call, loop_now(c->calls->loop), LOG_WARNING,
		    "call %u/%u %s: ipv6-prefix-pool exhausted: IPv4 only",
		    c->id, c->peer_id, c->client_str);
		return;
	}
	c->has_prefix6 = 1;
}

/* Its /64 back to the pool (a prefix the pool no longer holds after a
 * reload is retired with the call). */
static void
call_release_prefix6(struct call *c)
{
	if (c->has_prefix6 && c->calls->pool6 != NULL)
		pool6_release(c->calls->pool6, &c->prefix6);
	c->has_prefix6 = 0;
}

const char *
call_prefix6_str(const struct call *c, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	if (!c->has_prefix6 || inet_ntop(AF_INET6, &c->prefix6, a, sizeof(a)) == NULL)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "%s/64", a);
	return buf;
}

/* IPV6CP is down, or the session ends: its /64 is no longer routed or
 * advertised there. */
static void
call_ipv6_down(struct call *c)
{
	const struct pppd_runner *run = c->calls->runner;
	char why[128];

	if (c->ifname6[0] == '\0')
		return;
	nd_link_down(c->calls->nd, c->ifname6, c->id);
	/* pid 0: reaped, and the monitor took the route away at the reap */
	if (run != NULL && c->pid != 0 && run->route6(run->arg, c->id,
	    c->ifname6, NULL, why, sizeof(why)) < 0)
		log_msg(LOG_WARNING, "call %u/%u %s: user %s: IPv6 route on %s not "
		    "deleted: %s", c->id, c->peer_id, c->client_str,
		    c->user[0] ? c->user : "-", c->ifname6, why);
	c->ifname6[0] = '\0';
}

/* radius.so's accounting knows nothing of the /64 (it has no IPv6): our
 * Interim-Update under its Acct-Session-Id says it (acct.h), once the
 * /64 is routed and the Acct-Session-Id known, whichever comes last. */
static void
call_acct_prefix6(struct call *c)
{
	char who[48];
	unsigned unit;

	/* Once per /64: an IPV6CP renegotiation, which the client controls,
	 * sends nothing new. */
	if (c->calls->acct == NULL || c->ifname6[0] == '\0' ||
	    c->acct_session_id[0] == '\0' || (c->acct6_sent &&
	    memcmp(&c->acct6_prefix, &c->prefix6, sizeof(c->prefix6)) == 0))
		return;
	snprintf(who, sizeof(who), "call %u/%u", c->id, c->peer_id);
	struct acct_session as = { .session_id = c->acct_session_id,
		.user = c->user, .framed_ip = c->remote_ip, .prefix6 = c->prefix6,
		.session_time = c->up_ms != 0 ? (uint32_t)((loop_now(c->calls->loop) -
		c->up_ms) / 1000) : 0, .who = who,
		.nas_port = sscanf(c->ifname6, "ppp%u", &unit) == 1 ? (long)unit : -1 };
	if (acct_interim(c->calls->acct, &as) == 0) {
		c->acct6_sent = 1;
		c->acct6_prefix = c->prefix6;
	}
}

void
call_acct_renew(struct call *c)
{
	c->acct6_sent = 0;   /* what was pending went with the old server */
	call_acct_prefix6(c);
}

static void
call_ipv6_unrouted(const struct call *c, const char *why)
{
	log_msg(LOG_WARNING, "call %u/%u %s: user %s: IPv6 not routed: %s",
	    c->id, c->peer_id, c->client_str, c->user[0] ? c->user : "-", why);
}

/* The session's /64 routed to and advertised on `ifname` (checked). */
static void
call_ipv6_route(struct call *c, const char *ifname)
{
	const struct pppd_runner *run = c->calls->runner;
	char why[160], undo[160], p6[INET6_ADDRSTRLEN + 4];

	/* With a runner (the monitor) the route is its to add, and it adds
	 * only a /64 it allows (route6.h); nd then only advertises. */
	if (run != NULL && run->route6(run->arg, c->id, ifname, &c->prefix6,
	    why, sizeof(why)) < 0) {
		call_ipv6_unrouted(c, why);
		return;
	}
	if (nd_link_up(c->calls->nd, ifname, c->id, &c->prefix6, run == NULL,
	    why, sizeof(why)) < 0) {
		if (run != NULL)
			run->route6(run->arg, c->id, ifname, NULL, undo,
			    sizeof(undo));
		call_ipv6_unrouted(c, why);
		return;
	}
	snprintf(c->ifname6, sizeof(c->ifname6), "%s", ifname);
	log_msg(LOG_INFO, "call %u/%u %s: user %s: IPv6 up on %s: %s routed and "
	    "advertised", c->id, c->peer_id, c->client_str,
	    c->user[0] ? c->user : "-", ifname,
	    call_prefix6_str(c, p6, sizeof(p6)));
	call_acct_prefix6(c);
}

/* The plugin's "up6": route and advertise the /64 on the interface it
 * names (a report is outside input: a strict interface name only, and
 * nd.c takes only a ppp interface). */
static void
call_ipv6_up(struct call *c, const struct report_msg *m)
{
	const char *ifname = report_get(m, "ifname");

	if (!c->has_prefix6 || c->calls->nd == NULL)
		return;
	call_ipv6_down(c);
	if (ifname == NULL || strlen(ifname) >= sizeof(c->ifname6) ||
	    !mss_ifname_ok(ifname)) {
		log_msg(LOG_WARNING, "call %u/%u %s: user %s: IPv6 not routed: the "
		    "report names interface '%.32s', not one", c->id, c->peer_id,
		    c->client_str, c->user[0] ? c->user : "-", ifname ? ifname : "");
		return;
	}
	call_ipv6_route(c, ifname);
}

/* The kernel path's channel for the call, bound and connected, and its
 * entry in the GRE guard. The socket, or -1 with *reason set. */
static int
call_kernel_open(struct calls *s, struct call *c, const char **reason)
{
	static char why[160];   /* the caller logs it at once */
	int sock = datapath_kernel_open(c->id, c->conn.local, c->peer_id,
	    c->peer, why, sizeof(why));

	if (sock < 0) {
		*reason = why;
		return -1;
	}
	/* Guarded before the call is answered, like the channel above: the
	 * peer's first packets are the ones that set the guard's numbers.
	 * A call the guard cannot take is refused, not left unguarded. */
	if (s->guard != NULL) {
		if (kguard_add(s->guard, c->peer, c->id, why, sizeof(why)) < 0) {
			close(sock);
			*reason = why;
			return -1;
		}
		c->guarded = 1;
	}
	return sock;
}

/* The kernel carries the call's GRE; the engine drops what its raw socket
 * still sees of it. The channel socket is bound and connected before the
 * call is answered: the peer may send its first LCP request as soon as it
 * has our Call ID, long before pppd runs, and the kernel queues it on the
 * channel only if a socket has the Call ID by then (else it is lost, and
 * the peer waits out its restart timer). pppd inherits the socket. Under
 * privsep the monitor opens and guards it, in its own name. */
static struct call *
call_new_kernel(struct calls *s, struct call *c, const char **reason)
{
	int sock = -1, rc;

	c->kernel = 1;
	if (s->runner == NULL && (sock = call_kernel_open(s, c, reason)) < 0)
		goto fail;
	rc = call_spawn(c, 1, sock, reason);
	if (sock >= 0)
		close(sock);   /* pppd's now, or nobody's */
	if (rc < 0)
		goto fail_guard;
	call_hold(c);
	gre_engine_ignore_call(s->gre, c->id, 1);
	call_started(s, c);
	return c;
fail_guard:
	call_unguard(c, 0);
fail:
	if (s->pool != NULL)
		pool_release(s->pool, c->remote_ip);
	call_release_prefix6(c);
	free(c);
	return NULL;
}

/* A call of connection `conn` and client entry `client`, nothing taken
 * yet; NULL when out of memory. */
static struct call *
call_alloc(struct calls *s, const struct call_conn *conn,
    struct client *client)
{
	struct call *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->calls = s;
	c->conn = *conn;
	c->conn.peer_str = NULL;   /* the connection's: copied below */
	c->client = client;
	c->peer = conn->peer;
	snprintf(c->client_str, sizeof(c->client_str), "%s", conn->peer_str);
	c->stateless = -1;
	c->pty = -1;
	c->pty_lf.fd = -1;
	facts_init(&c->facts);
	return c;
}

/* The engine path's GRE set up for the call's pty (`next`: the first
 * sequence number to send, from the journal when the call is resumed),
 * the sequence numbers mirrored to the journal, the pty watched. 0, or
 * -1 with *reason set (c->gre NULL). */
static int
call_gre_watch(struct call *c, uint32_t next, const char **reason)
{
	struct calls *s = c->calls;
	uint32_t *slot = s->journal != NULL ? journal_tx_seq(s->journal,
	    c->id) : NULL;

	if (c->gre == NULL) {
		*reason = "cannot set up GRE for the call";
		return -1;
	}
	gre_call_set_local(c->gre, c->conn.local);
	gre_call_set_window(c->gre, c->peer_window);
	gre_call_set_recv_window(c->gre, PPTPD_RECV_WINDOW);
	gre_call_resume(c->gre, next);
	gre_call_mirror_seq(c->gre, slot);
	if (loop_fd_add(s->loop, &c->pty_lf, c->pty, EPOLLIN, call_pty_ready,
	    c) < 0) {
		*reason = "cannot watch the pty";
		gre_call_free(c->gre);
		c->gre = NULL;
		return -1;
	}
	return 0;
}

struct call *
call_new(struct calls *s, const struct call_conn *conn,
    struct client *client, const struct pptp_msg *ocrq, uint8_t *result,
    uint8_t *error, const char **reason)
{
	struct call *c = call_alloc(s, conn, client);
	*result = PPTP_OCRP_GENERAL_ERROR;
	*error = PPTP_ERR_NO_RESOURCE;
	if (c == NULL) {
		*reason = "out of memory";
		return NULL;
	}
	c->peer_id = ocrq->u.ocrq.call_id;
	c->peer_window = ocrq->u.ocrq.window;
	if (call_pick_id(s, &c->id) < 0) {
		*reason = "no free Call ID";
		goto fail;
	}
	if (s->pool != NULL && pool_alloc(s->pool, &c->local_ip, &c->remote_ip) < 0) {
		*reason = "address pool exhausted";
		goto fail;
	}
	call_take_prefix6(c);
	if (s->kernel_path)
		return call_new_kernel(s, c, reason);
	if (call_spawn(c, 0, -1, reason) < 0)
		goto fail_pool;
	call_hold(c);
	c->gre = gre_call_new(s->gre, c->id, c->peer_id, c->peer, c->pty, c);
	if (call_gre_watch(c, 0, reason) < 0)
		goto fail_pppd;
	/* pppd throws away what the pty holds when it takes the line: the
	 * client's first LCP request waits until pppd has written. */
	gre_call_hold_pty(c->gre);
	loop_timer_set(s->loop, &c->hold_timer, CALL_PTY_HOLD_MS,
	    call_hold_timeout, c);
	call_started(s, c);
	return c;

fail_pppd:
	/* pppd has been forked: it is reaped like any other, the call stays
	 * on the server's list until then. */
	close(c->pty);
	c->pty = -1;
	c->conn.arg = NULL;
	c->state = CALL_ENDING;
	call_signal(c, SIGKILL);
	TAILQ_INSERT_TAIL(&s->list, c, s_entry);
	return NULL;
fail_pool:
	if (s->pool != NULL)
		pool_release(s->pool, c->remote_ip);
	call_release_prefix6(c);
fail:
	free(c);
	return NULL;
}

/* A time from the journal, on the clock every process shares: never
 * later than `now` (the old worker may have written anything). */
static uint64_t
call_past(uint64_t t, uint64_t now)
{
	return t > now ? now : t;
}

/* What a journal record `rec` (checked) says of call `c`, taken; a rate
 * out of the shaper's bounds is not (the next CoA sets one). */
static void
call_take_record(struct call *c, const struct journal_rec *rec)
{
	uint64_t now = loop_now(c->calls->loop);

	c->peer_window = rec->peer_window;
	c->started_ms = call_past(rec->started_ms, now);
	c->up_ms = rec->up_ms != 0 ? call_past(rec->up_ms, now) : 0;
	if (shaper_rate_ok(rec->rate_down) && shaper_rate_ok(rec->rate_up)) {
		c->rate_down = rec->rate_down;
		c->rate_up = rec->rate_up;
	}
	/* Under a runner the monitor holds the rate; here "set" only, so
	 * that a later 0/0 takes it off there (call_shape). */
	c->shaped_ifindex = c->calls->shape_by_runner && rec->ifname[0] &&
	    (c->rate_down || c->rate_up);
	snprintf(c->ifname6, sizeof(c->ifname6), "%s", rec->ifname6);
	snprintf(c->tunnel, sizeof(c->tunnel), "%s", rec->tunnel);
	snprintf(c->mppe, sizeof(c->mppe), "%s", rec->mppe);
	snprintf(c->user, sizeof(c->user), "%s", rec->user);
	snprintf(c->acct_session_id, sizeof(c->acct_session_id), "%s",
	    rec->acct_session_id);
	snprintf(c->ifname, sizeof(c->ifname), "%s", rec->ifname);
	snprintf(c->rate_src, sizeof(c->rate_src), "%s", rec->rate_src);
}

/* Does journal record `rec` (checked) describe the call the monitor
 * handed back as `r`? NULL, or why not. */
static const char *
call_record_agrees(const struct pppd_resumed *r, const struct journal_rec *rec)
{
	if (rec->peer_call_id != r->peer_call_id)
		return "the journal names another peer Call ID";
	if (rec->pid != (uint32_t)r->pid)
		return "the journal names another pppd";
	if (rec->local_ip != r->local.s_addr || rec->remote_ip != r->remote.s_addr)
		return "the journal names other tunnel addresses";
	if (!!(rec->flags & JOURNAL_F_KERNEL) != r->kernel)
		return "the journal names the other data path";
	return NULL;
}

static struct call *call_address_holder(const struct call *c,
    struct in_addr a);

/* The addresses, /64 and Call ID a resumed call holds, taken from the
 * pools (it held them under the worker that died). 0, or -1 with
 * *reason set (nothing taken). */
static int
call_resume_take(struct call *c, const struct journal_rec *rec,
    const char **reason)
{
	struct calls *s = c->calls;

	if (call_id_taken(s, c->id)) {
		*reason = "its Call ID is taken";
		return -1;
	}
	struct in_addr local;
	/* An address the pool no longer has (retired by a reload) is kept,
	 * as the reload keeps it, when no other call holds it. */
	if (s->pool != NULL && c->remote_ip.s_addr != INADDR_ANY &&
	    (pool_local(s->pool, c->remote_ip, &local) == 0 ?
	    pool_take(s->pool, c->remote_ip) < 0 :
	    call_address_holder(c, c->remote_ip) != NULL)) {
		*reason = "its address is taken";
		return -1;
	}
	call_id_mark(s, c->id, 1);
	client_call_add(c->client);
	if ((rec->flags & JOURNAL_F_PREFIX6) && s->pool6 != NULL &&
	    s->nd != NULL) {
		/* One the pool does not have (RADIUS's, or retired) is the
		 * session's still; the monitor checks it again before it
		 * routes it. */
		memcpy(&c->prefix6, rec->prefix6, sizeof(c->prefix6));
		pool6_take(s->pool6, &c->prefix6);
		c->has_prefix6 = 1;
	}
	return 0;
}

/* The session's state outside the call, made again: a session not up
 * yet gets call-setup-timeout again; an up one its clamping and /64. */
static void
call_resume_session(struct call *c)
{
	if (c->up_ms == 0) {
		call_setup_arm(c);
		return;
	}
	call_mss_add(c);
	char ifname6[sizeof(c->ifname6)];
	snprintf(ifname6, sizeof(ifname6), "%s", c->ifname6);
	c->ifname6[0] = '\0';   /* routed again below, by the monitor's leave */
	if (c->has_prefix6 && ifname6[0] != '\0')
		call_ipv6_route(c, ifname6);
}

struct call *
call_resume(struct calls *s, const struct call_conn *conn,
    struct client *client, struct pppd_resumed *r, const char **reason)
{
	const struct journal_rec *rec;
	struct call *c;

	if (s->journal == NULL) {
		*reason = "no journal";
		return NULL;
	}
	rec = journal_rec(s->journal, r->call_id);
	if (journal_rec_check(rec, r->call_id, reason) < 0 ||
	    (*reason = call_record_agrees(r, rec)) != NULL)
		return NULL;
	if ((c = call_alloc(s, conn, client)) == NULL) {
		*reason = "out of memory";
		return NULL;
	}
	c->id = r->call_id;
	c->peer_id = r->peer_call_id;
	c->pid = r->pid;
	c->local_ip = r->local;
	c->remote_ip = r->remote;
	c->kernel = r->kernel;
	call_take_record(c, rec);
	uint32_t next = *journal_tx_seq(s->journal, c->id);
	if (call_resume_take(c, rec, reason) < 0) {
		free(c);
		return NULL;
	}
	/* From here the call is the worker's: what fails ends it, once its
	 * connection has it (call_resume_failed). */
	c->state = CALL_ACTIVE;
	TAILQ_INSERT_TAIL(&s->list, c, s_entry);
	if (r->report >= 0 && facts_adopt(&c->facts, s->loop, call_report, c,
	    r->report) < 0)
		*reason = "cannot watch the report channel";
	r->report = -1;
	c->pty = r->pty;
	r->pty = -1;
	if (c->kernel)
		gre_engine_ignore_call(s->gre, c->id, 1);
	else if (*reason == NULL) {
		c->gre = gre_call_new(s->gre, c->id, c->peer_id, c->peer, c->pty,
		    c);
		call_gre_watch(c, next, reason);
	}
	call_journal(c);
	log_msg(LOG_NOTICE, "call %u/%u %s: resumed pppd %d for %s%s%s%s",
	    c->id, c->peer_id, c->client_str, (int)c->pid,
	    inet_ntoa(c->remote_ip), c->user[0] ? ", user " : "", c->user,
	    c->kernel ? " (kernel data path)" : "");
	if (*reason == NULL)
		call_resume_session(c);
	return c;
}

void
call_resume_failed(struct call *c, const char *reason)
{
	call_end(c, PPTP_CDN_GENERAL_ERROR, reason);
}

static void
call_free(void *p)
{
	free(p);
}

static void
call_pty_close(struct call *c)
{
	if (c->pty >= 0)
		close(c->pty);
	c->pty = -1;
}

/* pppd is gone: give back everything the call held. */
static void
call_finish(struct call *c)
{
	struct calls *s = c->calls;
	loop_timer_cancel(s->loop, &c->kill_timer);
	loop_timer_cancel(s->loop, &c->end_timer);
	loop_timer_cancel(s->loop, &c->hold_timer);
	call_pty_close(c);   /* held open while radius.so sent its Stop */
	facts_close(&c->facts);
	call_setup_done(c);
	if (s->pool != NULL && c->remote_ip.s_addr != INADDR_ANY)
		pool_release(s->pool, c->remote_ip);
	call_id_mark(s, c->id, 0);
	if (s->journal != NULL)
		journal_rec_clear(s->journal, c->id);
	if (c->kernel)   /* pppd, and its channel socket, are gone */
		gre_engine_ignore_call(s->gre, c->id, 0);
	call_unguard(c, 1);
	call_mss_del(c);
	if (s->runner != NULL)
		c->shaped_ifindex = 0;   /* the monitor took it off at the reap */
	call_unshape(c);
	call_ipv6_down(c);
	call_release_prefix6(c);
	client_call_gone(c->client);
	if (c->conn.arg != NULL)
		c->conn.gone(c->conn.arg, c);
	TAILQ_REMOVE(&s->list, c, s_entry);
	loop_defer_free(s->loop, &c->defer, call_free, c);
	s->gone(s->arg);
}

void
call_detach(struct call *c)
{
	c->conn.arg = NULL;
}

void
call_destroy(struct call *c)
{
	if (c->kernel)
		gre_engine_ignore_call(c->calls->gre, c->id, 0);
	call_unguard(c, 0);
	call_mss_del(c);
	if (c->calls->runner != NULL)
		c->shaped_ifindex = 0;   /* the monitor's to take off */
	call_unshape(c);
	call_ipv6_down(c);
	gre_call_free(c->gre);
	if (c->pty >= 0)
		close(c->pty);
	facts_close(&c->facts);
	free(c);
}

static void
call_kill(void *arg)
{
	struct call *c = arg;
	log_msg(LOG_WARNING, "call %u/%u: pppd %d still running %llu ms after "
	    "SIGTERM, killing it", c->id, c->peer_id, (int)c->pid,
	    (unsigned long long)(c->kill_at_ms - c->term_ms));
	call_signal(c, SIGKILL);
}

/* SIGKILL for the ended call's pppd in `delay` ms. (Delays come from a
 * small set, CALL_ACCT_STOP_MS or call_kill_grace(): the timer lists keep
 * one queue per delay.) */
static void
call_kill_arm(struct call *c, uint64_t delay)
{
	c->kill_at_ms = loop_now(c->calls->loop) + delay;
	loop_timer_set(c->calls->loop, &c->kill_timer, delay, call_kill, c);
}

/* How long pppd gets between SIGTERM and SIGKILL (CALL_KILL_GRACE_MS). */
static uint64_t
call_kill_grace(const struct calls *s)
{
	unsigned active, ending;
	calls_count(s, &active, &ending);
	uint64_t ms = CALL_KILL_GRACE_MS +
	    (uint64_t)ending * CALL_KILL_GRACE_PER_CALL_MS;
	return ms < CALL_KILL_GRACE_MAX_MS ? ms : CALL_KILL_GRACE_MAX_MS;
}

/* The ended call's pppd: its pty hung up, SIGTERM, and SIGKILL if it has
 * not gone after the grace. */
static void
call_stop_pppd(void *arg)
{
	struct call *c = arg;
	struct calls *s = c->calls;
	int cut = c->pty >= 0;
	call_pty_close(c);
	call_signal_cut(c, SIGTERM, cut);
	c->term_ms = loop_now(s->loop);
	call_kill_arm(c, call_kill_grace(s));
}

/* pppd has reported its session's end with RADIUS accounting on, less
 * than CALL_ACCT_STOP_MS ago, not yet "down_done", and is still running:
 * radius.so is sending its Accounting-Stop. */
static int
call_acct_in_flight(const struct call *c)
{
	return c->acct_down_ms != 0 && !c->exited && c->pid > 0 &&
	    loop_now(c->calls->loop) < c->acct_down_ms + CALL_ACCT_STOP_MS;
}

uint64_t
call_acct_stop_due(const struct call *c)
{
	return call_acct_in_flight(c) ? c->acct_down_ms + CALL_ACCT_STOP_MS : 0;
}

static void call_end_pppd(struct call *c);
static void call_log_ended(struct call *c, const char *reason,
    const struct gre_stats *st);

void
call_end(struct call *c, uint8_t cdn_result, const char *reason)
{
	struct calls *s = c->calls;
	if (!call_is_live(c))
		return;
	c->state = CALL_ENDING;
	/* A "down" pppd has sent but we have not read yet counts below. */
	facts_drain(&c->facts);
	/* Withdrawn while pppd still runs: on the kernel path the client
	 * hears the last advertisement; on the engine path the pty is cut
	 * below, so it may not get through (the client then learns of the
	 * end from LCP's). */
	call_ipv6_down(c);
	loop_timer_cancel(s->loop, &c->end_timer);
	loop_timer_cancel(s->loop, &c->hold_timer);
	struct gre_stats st = { 0 };
	if (c->kernel) {
		/* The kernel's channel keeps no counters we can read: pppd's
		 * come with the plugin's "down" report (session end). */
		s->ended(s->arg, &st);
		log_rl(&s->rl_call, loop_now(s->loop), LOG_INFO,
		    "call %u/%u %s: ended after %llu s: %s (kernel data path)",
		    c->id, c->peer_id, inet_ntoa(c->peer),
		    (unsigned long long)(loop_now(s->loop) - c->started_ms) / 1000,
		    reason);
	} else {
		/* (no GRE: a resumed call whose setup failed, call_resume) */
		if (c->gre != NULL)
			gre_call_stats(c->gre, &st);
		s->ended(s->arg, &st);
		call_log_ended(c, reason, &st);
	}
	gre_call_free(c->gre);
	c->gre = NULL;
	loop_fd_del(s->loop, &c->pty_lf);
	if (c->pid <= 0) {
		if (c->conn.arg != NULL)
			c->conn.ended(c->conn.arg, c, cdn_result);
		call_pty_close(c);
		call_finish(c);
		return;
	}
	call_end_pppd(c);
	/* The peer hears of the end once pppd has been told (under privsep
	 * the monitor then knows the call is ending: a worker killed in
	 * between leaves a call the next one must not take over as live). */
	if (c->conn.arg != NULL)
		c->conn.ended(c->conn.arg, c, cdn_result);
}

/* The call is over and its pppd runs: stopped now, or once radius.so
 * has sent its Accounting-Stop. */
static void
call_end_pppd(struct call *c)
{
	struct calls *s = c->calls;

	if (call_acct_in_flight(c)) {
		/* A signal now, our SIGTERM or its pty's hangup, would end
		 * radius.so's wait for the answer (its select() fails with
		 * EINTR, and the Stop is not sent again). pppd is stopped at
		 * its "down_done" (call_acct_stopped), or CALL_ACCT_STOP_MS
		 * from now; its pty stays open, unread, until then. */
		log_msg(LOG_INFO, "call %u/%u: pppd %d is sending its "
		    "Accounting-Stop: stopped once it is done (at most %d s)",
		    c->id, c->peer_id, (int)c->pid, CALL_ACCT_STOP_MS / 1000);
		loop_timer_set(s->loop, &c->kill_timer, CALL_ACCT_STOP_MS,
		    call_stop_pppd, c);
	} else {
		call_stop_pppd(c);
	}
}

static void
call_log_ended(struct call *c, const char *reason, const struct gre_stats *st)
{
	struct calls *s = c->calls;
	log_rl(&s->rl_call, loop_now(s->loop), LOG_INFO,
	    "call %u/%u %s: ended after %llu s: %s (gre rx %llu "
	    "reordered %llu lost %llu duplicate %llu stale %llu wrong-source %llu, "
	    "tx %llu, pty drops %llu)", c->id, c->peer_id, inet_ntoa(c->peer),
	    (unsigned long long)(loop_now(s->loop) - c->started_ms) / 1000,
	    reason, (unsigned long long)st->rx_packets,
	    (unsigned long long)st->rx_reordered, (unsigned long long)st->rx_lost,
	    (unsigned long long)st->rx_duplicates, (unsigned long long)st->rx_stale,
	    (unsigned long long)st->rx_wrong_source,
	    (unsigned long long)st->tx_packets, (unsigned long long)st->pty_drops);
}

static void
call_hangup_timeout(void *arg)
{
	struct call *c = arg;
	call_end(c, c->hangup_result, c->hangup_reason);
}

/* The plugin learns why before pppd's SIGTERM, so LCP's Terminate-Request
 * says it (report.h, event=hangup). It waits on the channel, even while
 * the SIGTERM is held back: the plugin reads it when pppd ends LCP. Lost
 * (no plugin, channel full), the peer hears pppd's own reason. */
static void
call_tell_cause(struct call *c, enum report_cause cause)
{
	struct report_builder b;
	char id[8];
	int n;

	if (cause == REPORT_CAUSE_NONE || c->facts.fd < 0)
		return;
	snprintf(id, sizeof(id), "%u", c->id);
	report_begin(&b, REPORT_EVENT_HANGUP);
	report_add(&b, "call", id);
	report_add(&b, "cause", report_cause_name(cause));
	n = report_end(&b);
	if (n < 0 || facts_send(&c->facts, b.buf, (size_t)n) < 0)
		log_msg(LOG_DEBUG, "call %u/%u: hang-up cause not sent to the "
		    "plugin: %s", c->id, c->peer_id,
		    n < 0 ? "too long" : strerror(errno));
}

void
call_hangup(struct call *c, uint8_t cdn_result, enum report_cause cause,
    const char *reason)
{
	if (c->state != CALL_ACTIVE)
		return;
	c->state = CALL_HANGUP;
	c->hangup_result = cdn_result;
	snprintf(c->hangup_reason, sizeof(c->hangup_reason), "%s", reason);
	facts_drain(&c->facts);   /* a "down" not read yet counts */
	call_tell_cause(c, cause);
	/* Held back while radius.so sends its Stop (call_acct_stopped) */
	if (call_acct_in_flight(c))
		c->term_held = 1;
	else
		call_signal(c, SIGTERM);
	loop_timer_set(c->calls->loop, &c->end_timer, CALL_HANGUP_MS,
	    call_hangup_timeout, c);
}

void
call_exited(struct call *c)
{
	c->exited = 1;
	facts_drain(&c->facts);
}

void
call_reaped(struct call *c, int status)
{
	char why[160];
	c->pid = 0;
	if (c->state == CALL_HANGUP) {
		call_end(c, c->hangup_result, c->hangup_reason);
		return;   /* call_end finished it: pid is 0 */
	}
	if (c->state == CALL_ACTIVE) {
		if (WIFEXITED(status))
			snprintf(why, sizeof(why), "pppd exited with status %d%s%s%s",
			    WEXITSTATUS(status), c->exit_reason[0] ? " (" : "",
			    c->exit_reason, c->exit_reason[0] ? ")" : "");
		else
			snprintf(why, sizeof(why), "pppd killed by signal %d",
			    WTERMSIG(status));
		call_end(c, PPTP_CDN_LOST_CARRIER, why);
		return;   /* call_end finished it: pid is 0 */
	}
	call_finish(c);
}

void
call_set_accm(struct call *c, uint32_t send_accm, uint32_t recv_accm)
{
	/* The kernel's channel is synchronous: no ACCM to apply. */
	if (call_is_live(c) && c->gre != NULL)
		gre_call_set_accm(c->gre, send_accm, recv_accm);
}

static void
call_pty_gone(void *arg)
{
	struct call *c = arg;
	if (c->state == CALL_HANGUP)
		call_end(c, c->hangup_result, c->hangup_reason);
	else if (c->exit_reason[0]) {
		/* pppd told us why before it went (its exit report). */
		char why[sizeof(c->exit_reason) + 32];
		snprintf(why, sizeof(why), "pppd hung up the line (%s)", c->exit_reason);
		call_end(c, PPTP_CDN_LOST_CARRIER, why);
	} else
		call_end(c, PPTP_CDN_LOST_CARRIER, "pppd hung up the line");
}

void
call_pty_closed(struct call *c, int err)
{
	(void)err;
	if (!call_is_live(c))
		return;
	/* Stop polling a dead pty, which would report EOF forever. */
	loop_fd_del(c->calls->loop, &c->pty_lf);
	loop_timer_set(c->calls->loop, &c->end_timer, 0, call_pty_gone, c);
}

static const char *
call_fact(const struct report_msg *m, const char *key)
{
	const char *v = report_get(m, key);
	return v != NULL && *v ? v : "-";
}

/* Another call whose pppd may still hold address A for its peer. */
static struct call *
call_address_holder(const struct call *c, struct in_addr a)
{
	struct call *o;
	struct in_addr t;
	TAILQ_FOREACH(o, &c->calls->list, s_entry) {
		if (o == c)
			continue;
		if (o->remote_ip.s_addr == a.s_addr ||
		    (inet_pton(AF_INET, o->tunnel, &t) == 1 && t.s_addr == a.s_addr))
			return o;
	}
	return NULL;
}

/* pppd may give the peer another address than the pool's: RADIUS'
 * Framed-IP-Address (radius.so) wins in pppd. It must still be this
 * session's alone: taken from the pool if the pool holds it (the pool's
 * pick goes back), refused if another call holds it. Returns -1 when the
 * call is being hung up. */
static int
call_claim_address(struct call *c, const char *ip)
{
	struct calls *s = c->calls;
	struct in_addr a;
	struct call *o;
	if (inet_pton(AF_INET, ip, &a) != 1 || a.s_addr == c->remote_ip.s_addr)
		return 0;
	if ((o = call_address_holder(c, a)) != NULL) {
		log_msg(LOG_WARNING, "call %u/%u: user %s was given %s, which call "
		    "%u/%u (user %s) holds: hanging up", c->id, c->peer_id, c->user,
		    ip, o->id, o->peer_id, o->user[0] ? o->user : "-");
		call_hangup(c, PPTP_CDN_ADMIN_SHUTDOWN, REPORT_CAUSE_NONE,
		    "tunnel address in use");
		return -1;
	}
	if (s->pool != NULL && pool_take(s->pool, a) == 0) {
		char old[INET_ADDRSTRLEN], why[128];
		/* The monitor's pool moves too (privsep), or neither does. */
		if (s->runner != NULL && s->runner->readdr(s->runner->arg, c->id, a,
		    why, sizeof(why)) < 0) {
			pool_release(s->pool, a);
			log_msg(LOG_WARNING, "call %u/%u: user %s was given %s from the "
			    "pool: not reserved: %s", c->id, c->peer_id, c->user, ip, why);
			return 0;
		}
		inet_ntop(AF_INET, &c->remote_ip, old, sizeof(old));
		if (c->remote_ip.s_addr != INADDR_ANY)
			pool_release(s->pool, c->remote_ip);
		c->remote_ip = a;
		log_msg(LOG_INFO, "call %u/%u: user %s was given %s from the pool "
		    "(not %s): reserved for the session", c->id, c->peer_id, c->user,
		    ip, old);
	}
	/* Outside the pool: the call keeps the pool's pick too (unused), and
	 * c->tunnel names the address for the next session's check. */
	return 0;
}

/* RADIUS' Framed-IPv6-Prefix (a /64, "P/64" in the "auth" report): the
 * session's /64 instead of the pool's pick, as for Framed-IP-Address,
 * when the pool or ipv6-radius-prefixes holds it: taken from the pool
 * when the pool holds it (the pick goes back), the
 * call hung up when another call holds it. Without a pool of our own
 * IPv6 is off (pppd has no +ipv6): said, and ignored. -1 when hung up. */
static int
call_claim_prefix6(struct call *c, const char *text)
{
	char why[96];
	struct in6_addr p;
	struct call *o;

	if (pool6_session_prefix(text, &p, why, sizeof(why)) < 0) {
		log_msg(LOG_WARNING, "call %u/%u: user %s: Framed-IPv6-Prefix "
		    "'%.48s' in pppd %d's report: %s: ignored", c->id, c->peer_id,
		    c->user, text, (int)c->pid, why);
		return 0;
	}
	if (!c->has_prefix6) {
		log_msg(LOG_INFO, "call %u/%u: user %s: Framed-IPv6-Prefix %s "
		    "ignored: IPv6 is off (no ipv6-prefix-pool, or none free)",
		    c->id, c->peer_id, c->user, text);
		return 0;
	}
	if (memcmp(&p, &c->prefix6, sizeof(p)) == 0)
		return 0;
	/* A route is a claim on traffic: only a /64 of ours to hand out, or
	 * of the prefixes the admin gave RADIUS, is routed (prefix6.h). */
	if (!conf_prefix6_routable(c->calls->conf, &p)) {
		log_msg(LOG_WARNING, "call %u/%u: user %s: Framed-IPv6-Prefix %s "
		    "is in neither ipv6-prefix-pool nor ipv6-radius-prefixes: "
		    "ignored (the session keeps the pool's)", c->id, c->peer_id,
		    c->user, text);
		return 0;
	}
	TAILQ_FOREACH(o, &c->calls->list, s_entry)
		if (o != c && o->has_prefix6 &&
		    memcmp(&o->prefix6, &p, sizeof(p)) == 0) {
			log_msg(LOG_WARNING, "call %u/%u: user %s was given IPv6 %s, "
			    "which call %u/%u (user %s) holds: hanging up", c->id,
			    c->peer_id, c->user, text, o->id, o->peer_id,
			    o->user[0] ? o->user : "-");
			call_hangup(c, PPTP_CDN_ADMIN_SHUTDOWN, REPORT_CAUSE_NONE,
			    "IPv6 prefix in use");
			return -1;
		}
	/* A new prefix on a link whose IPV6CP is up (a re-authentication):
	 * the old one is withdrawn and unrouted before it goes back to the
	 * pool, and the new one announced in its place. */
	char ifname[sizeof(c->ifname6)];
	snprintf(ifname, sizeof(ifname), "%s", c->ifname6);
	call_ipv6_down(c);
	if (c->calls->pool6 != NULL) {
		pool6_release(c->calls->pool6, &c->prefix6);
		/* Outside the pool: the session holds it all the same; the
		 * release at its end changes nothing (pool6_release). */
		pool6_take(c->calls->pool6, &p);
	}
	c->prefix6 = p;
	log_msg(LOG_INFO, "call %u/%u: user %s: IPv6 %s from RADIUS "
	    "(Framed-IPv6-Prefix)", c->id, c->peer_id, c->user, text);
	if (ifname[0] != '\0')
		call_ipv6_route(c, ifname);
	return 0;
}

/* The plugin reports policies "require-128" and "require" (pptpd-peers(5)),
 * and the key strength "none" for a session without MPPE. */
#define CALL_POLICY_REQUIRE "require"
#define CALL_MPPE_NONE      "none"

/* A backstop behind the plugin: a session whose own policy requires MPPE
 * and that came up without it is a hole in the plugin or pppd (the plugin
 * once let a renegotiated LCP keep another user's "allow"). It is hung up,
 * never carried in the clear. 0, or -1 when hung up. */
static int
call_check_mppe(struct call *c, const struct report_msg *m, const char *peer)
{
	const char *policy = call_fact(m, "policy");

	if (strncmp(policy, CALL_POLICY_REQUIRE, strlen(CALL_POLICY_REQUIRE)) != 0 ||
	    strcmp(c->mppe, CALL_MPPE_NONE) != 0)
		return 0;
	log_msg(LOG_ERR, "call %u/%u %s: user %s is up without MPPE, which its "
	    "policy %s requires: hanging up", c->id, c->peer_id, peer, c->user,
	    policy);
	call_hangup(c, PPTP_CDN_ADMIN_SHUTDOWN, REPORT_CAUSE_NONE,
	    "MPPE required but not in use");
	return -1;
}

/* Another call of the same (reported) user. */
static int
call_same_user(const struct call *o, const struct call *c)
{
	return o != c && strcmp(o->user, c->user) == 0;
}

/* sessions-per-user, or RADIUS' Port-Limit for this user (the plugin's
 * session_limit): the sessions one user holds at once, counted when a
 * new one authenticates. At the limit the new one is hung up (deny), or
 * the user's oldest are until it fits (replace); each side's client is
 * told why (report.h's causes). Sessions already being hung up do not
 * count. 0, or -1 when this call was hung up. */
static int
call_check_user_limit(struct call *c, const struct report_msg *m,
    const char *peer)
{
	const struct conf *conf = c->calls->conf;
	const char *radius = report_get(m, "session_limit");
	const char *src = "sessions-per-user";
	uint64_t limit = (uint64_t)conf->sessions_per_user, v;
	unsigned held = 0;
	struct call *o;

	if (radius != NULL && report_get_u64(m, "session_limit", &v) == 0 &&
	    v > 0) {
		limit = v;
		src = "RADIUS Port-Limit";
	} else if (radius != NULL) {
		log_rl(c->calls->rl_input, loop_now(c->calls->loop), LOG_WARNING,
		    "call %u/%u %s: session_limit '%.32s' in pppd %d's report is "
		    "not a count: ignored", c->id, c->peer_id, peer, radius,
		    (int)c->pid);
	}
	if (limit == 0 || c->user[0] == '\0')
		return 0;
	TAILQ_FOREACH(o, &c->calls->list, s_entry)
		held += call_same_user(o, c) && o->state == CALL_ACTIVE;
	if (held < limit)
		return 0;
	if (conf->user_limit_action == CONF_USER_LIMIT_DENY) {
		log_msg(LOG_NOTICE, "call %u/%u %s: user %s already holds %u "
		    "session(s), the limit (%s): hanging up the new one", c->id,
		    c->peer_id, peer, c->user, held, src);
		call_hangup(c, PPTP_CDN_ADMIN_SHUTDOWN, REPORT_CAUSE_LIMIT,
		    "session limit");
		return -1;
	}
	/* replace: calls are listed oldest first */
	TAILQ_FOREACH(o, &c->calls->list, s_entry) {
		if (held < limit)
			break;
		if (!call_same_user(o, c) || o->state != CALL_ACTIVE)
			continue;
		log_msg(LOG_NOTICE, "call %u/%u: user %s's session replaced by "
		    "call %u/%u from %s (%s %u)", o->id, o->peer_id, c->user,
		    c->id, c->peer_id, peer, src, (unsigned)limit);
		call_hangup(o, PPTP_CDN_ADMIN_SHUTDOWN, REPORT_CAUSE_REPLACED,
		    "replaced by a newer session");
		held--;
	}
	return 0;
}

/* The "up" report names the session's ppp interface (an "up" after a
 * renegotiation may name it again, or another): c->ifname, and what is
 * bound to it, TCP MSS clamping (added here) and the rate (call_shape_up,
 * after), leave the old one first. The name is pppd's, but a report is
 * outside input to us: only a strict interface name is taken, and logs
 * cut it short. */
static void
call_take_ifname(struct call *c, const struct report_msg *m)
{
	const char *ifname = report_get(m, "ifname");

	if (ifname == NULL || *ifname == '\0')
		return;
	if (c->mss_on && strcmp(c->ifname, ifname) == 0)
		return;   /* the same interface, clamped already */
	call_mss_del(c);
	if (strcmp(c->ifname, ifname) != 0)
		call_unshape(c);
	if (strlen(ifname) >= sizeof(c->ifname) || !mss_ifname_ok(ifname)) {
		if (c->calls->mss != NULL || c->calls->mss_by_runner ||
		    c->rate_down || c->rate_up)
			log_msg(LOG_WARNING, "call %u/%u %s: user %s: no TCP MSS "
			    "clamping or rate: the report names interface '%.32s', "
			    "not one we take", c->id, c->peer_id,
			    inet_ntoa(c->peer), c->user, ifname);
		c->ifname[0] = '\0';
		return;
	}
	snprintf(c->ifname, sizeof(c->ifname), "%s", ifname);
	call_mss_add(c);
}

static void
call_log_session(struct call *c, const struct report_msg *m)
{
	char peer[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &c->peer, peer, sizeof(peer));
	if (strcmp(m->event, "auth") == 0) {
		snprintf(c->user, sizeof(c->user), "%s", call_fact(m, "user"));
		log_msg(LOG_INFO, "call %u/%u %s: user %s authenticated, MPPE policy %s "
		    "(%s)", c->id, c->peer_id, peer, c->user, call_fact(m, "policy"),
		    call_fact(m, "rule"));
		if (call_check_user_limit(c, m, peer) < 0)
			return;
		call_take_rate(c, m);
		/* RADIUS' Framed-IP-Address: claimed before IPCP gives it out. */
		if (report_get(m, "framed_ip") != NULL &&
		    call_claim_address(c, report_get(m, "framed_ip")) < 0)
			return;
		if (report_get(m, "framed_ipv6_prefix") != NULL)
			call_claim_prefix6(c, report_get(m, "framed_ipv6_prefix"));
	} else if (strcmp(m->event, "up") == 0) {
		snprintf(c->user, sizeof(c->user), "%s", call_fact(m, "user"));
		snprintf(c->mppe, sizeof(c->mppe), "%s", call_fact(m, "mppe"));
		snprintf(c->tunnel, sizeof(c->tunnel), "%s", call_fact(m, "ip"));
		c->stateless = strcmp(c->mppe, "none") == 0 ? -1 :
		    strcmp(call_fact(m, "stateless"), "1") == 0;
		c->up_ms = loop_now(c->calls->loop);
		call_setup_done(c);
		if (call_check_mppe(c, m, peer) < 0)
			return;
		if (call_claim_address(c, c->tunnel) < 0)
			return;
		call_take_ifname(c, m);
		call_shape_up(c);
		char p6[INET6_ADDRSTRLEN + 4], r[40];
		log_msg(LOG_NOTICE, "session start: call %u/%u user %s client %s "
		    "tunnel %s%s%s%s%s mppe %s%s policy %s%s%s", c->id, c->peer_id, c->user,
		    peer, c->tunnel, c->has_prefix6 ? " ipv6 " : "",
		    call_prefix6_str(c, p6, sizeof(p6)), c->shaped_ifindex ? " rate " : "",
		    c->shaped_ifindex ? call_rate_str(c, r, sizeof(r)) : "", c->mppe,
		    c->stateless < 0 ? "" : c->stateless ? " stateless" : " stateful",
		    call_fact(m, "policy"), c->acct_session_id[0] ? " acct-session-id " : "",
		    c->acct_session_id);
	} else if (strcmp(m->event, "down") == 0) {
		call_mss_del(c);
		call_unshape(c);
		c->ifname[0] = '\0';
		char p6[INET6_ADDRSTRLEN + 4];
		log_msg(LOG_NOTICE, "session end: call %u/%u user %s client %s tunnel %s%s%s "
		    "mppe %s duration %s s rx %s bytes %s packets tx %s bytes %s packets%s%s",
		    c->id, c->peer_id, c->user, peer, call_fact(m, "ip"),
		    c->has_prefix6 ? " ipv6 " : "", call_prefix6_str(c, p6, sizeof(p6)),
		    c->mppe[0] ? c->mppe : "-", call_fact(m, "duration"),
		    call_fact(m, "rx_bytes"), call_fact(m, "rx_packets"),
		    call_fact(m, "tx_bytes"), call_fact(m, "tx_packets"),
		    c->acct_session_id[0] ? " acct-session-id " : "", c->acct_session_id);
	} else if (strcmp(m->event, "up6") == 0) {
		call_ipv6_up(c, m);
	} else if (strcmp(m->event, "down6") == 0) {
		call_ipv6_down(c);
	} else if (strcmp(m->event, "exit") == 0) {
		const char *af = report_get(m, "auth_failure");
		/* Logged now: the client may clear the call before pppd is
		 * reaped, and then the exit status is never logged. */
		if (af && *af)
			log_rl(&c->calls->rl_call, loop_now(c->calls->loop), LOG_NOTICE,
			    "call %u/%u %s: authentication failed for %s: %s", c->id,
			    c->peer_id, peer, call_fact(m, "auth_user"), af);
		snprintf(c->exit_reason, sizeof(c->exit_reason), "%s%s%s",
		    call_fact(m, "reason"), af && *af ? ": " : "", af && *af ? af : "");
	}
}

/* Only an ended call's pppd that has had our SIGTERM has a SIGKILL to
 * move (not one read as it is reaped, or after the SIGKILL). */
static int
call_kill_pending(const struct call *c)
{
	return c->state == CALL_ENDING && !c->exited && c->term_ms != 0 &&
	    loop_timer_armed(&c->kill_timer);
}

/* pppd reported its session's end with accounting on: its Accounting-Stop
 * is on its way. A SIGKILL already set is put off, to CALL_ACCT_STOP_MS
 * from now at the latest. */
static void
call_acct_stopping(struct call *c)
{
	c->acct_down_ms = loop_now(c->calls->loop);
	if (!call_kill_pending(c))
		return;
	call_kill_arm(c, CALL_ACCT_STOP_MS);
	log_msg(LOG_INFO, "call %u/%u: pppd %d is sending its Accounting-Stop: "
	    "not killed before it is done (at most %d s)", c->id, c->peer_id,
	    (int)c->pid, CALL_ACCT_STOP_MS / 1000);
}

/* "down_done", "exit" or a new "up": the Accounting-Stop is sent or given
 * up on. What was held back goes ahead: call_end's stop, call_hangup's
 * SIGTERM; a SIGKILL put off is due a grace from now. */
static void
call_acct_stopped(struct call *c)
{
	if (c->acct_down_ms == 0)
		return;
	c->acct_down_ms = 0;
	if (c->exited)
		return;
	if (c->state == CALL_HANGUP && c->term_held) {
		c->term_held = 0;
		call_signal(c, SIGTERM);
	} else if (c->state == CALL_ENDING && c->term_ms == 0 &&
	    loop_timer_armed(&c->kill_timer)) {
		call_stop_pppd(c);
	} else if (call_kill_pending(c)) {
		call_kill_arm(c, call_kill_grace(c->calls));
	}
}

/* A report from the call's pppd plugin (a facts_fn). Only the call's own
 * pppd holds the other end of its channel; a report naming another call
 * is a confused plugin, and not believed. */
static void
call_report(void *arg, const char *data, size_t len)
{
	struct call *c = arg;
	struct calls *s = c->calls;
	struct report_msg m;
	const char *why = NULL;
	uint64_t id;

	if (report_parse(&m, data, len, &why) < 0)
		;
	else if (report_get_u64(&m, "call", &id) < 0)
		why = "no call id";
	else if (id != c->id)
		why = "names another call";
	if (why != NULL) {
		log_rl(s->rl_input, loop_now(s->loop), LOG_WARNING,
		    "call %u/%u: report of pppd %d dropped: %s", c->id, c->peer_id,
		    (int)c->pid, why);
		return;
	}
	/* Values are decoded: a user name may hold a newline or an escape
	 * the peer chose. They are logged, so only printable ASCII stays. */
	for (size_t i = 0; i < m.n; i++)
		str_clean_inplace((char *)m.f[i].value);
	/* Any event may carry it (the plugin knows it once radius.so has
	 * sent its Accounting-Start); a later one replaces it. */
	const char *sid = report_get(&m, "acct_session_id");
	if (sid != NULL && sid[0] != '\0') {
		snprintf(c->acct_session_id, sizeof(c->acct_session_id), "%s", sid);
		call_acct_prefix6(c);
	}
	call_log_session(c, &m);
	if (strcmp(m.event, "down") == 0 && c->acct_session_id[0] != '\0')
		call_acct_stopping(c);
	else if (strcmp(m.event, "down_done") == 0 ||
	    strcmp(m.event, "exit") == 0 || strcmp(m.event, "up") == 0)
		call_acct_stopped(c);
	call_journal(c);
}
