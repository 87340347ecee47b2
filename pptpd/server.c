/* The daemon object: accepts control connections, owns the pool and the
 * GRE engine, reaps pppd children. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pptpd/acct.h"
#include "pptpd/call.h"
#include "pptpd/client.h"
#include "pptpd/ctrl.h"
#include "pptpd/datapath.h"
#include "pptpd/drop.h"
#include "pptpd/dae.h"
#include "gre/gre.h"
#include "pptpd/kguard.h"
#include "pptpd/mss.h"
#include "pptpd/nd.h"
#include "proto/msg.h"
#include "pptpd/pool.h"
#include "pptpd/pool6.h"
#include "pptpd/server.h"
#include "pptpd/shaper.h"
#include "pptpd/shed.h"

#define SERVER_BACKLOG 128

static void
server_gre_log(void *arg, int prio, const char *msg)
{
	(void)arg;
	log_msg(prio, "gre: %s", msg);
}

static void
server_gre_want_write(void *call_arg, int on)
{
	call_pty_want_write(call_arg, on);
}

static void
server_gre_pty_closed(void *call_arg, int err)
{
	call_pty_closed(call_arg, err);
}

static const struct gre_ops server_gre_ops = {
	.log = server_gre_log,
	.pty_want_write = server_gre_want_write,
	.pty_closed = server_gre_pty_closed,
};

static void
server_gre_ready(void *arg, uint32_t events)
{
	struct server *s = arg;
	(void)events;
	gre_engine_input(s->gre, loop_now(s->loop));
}

static uint64_t
server_gre_deadline(void *arg)
{
	struct server *s = arg;
	return gre_engine_next_deadline(s->gre);
}

static void
server_gre_timers(void *arg, uint64_t now)
{
	struct server *s = arg;
	gre_engine_timers(s->gre, now);
}

static void
server_accept_one(struct server *s, int fd, const struct sockaddr_in *peer)
{
	const char *reason = NULL;
	struct sockaddr_in local;
	socklen_t len = sizeof(local);
	struct client *cl = NULL;
	int one = 1;

	/* The per-client limit first: an address at its limit does not get
	 * to push out anybody else's connection. */
	if (s->stopping)
		reason = "shutting down";
	else if ((cl = clients_get(s->clients, peer->sin_addr,
	    loop_now(s->loop))) == NULL)
		reason = "out of memory";
	else if (s->conf->per_client &&
	    client_ctrls(cl) >= (unsigned)s->conf->per_client)
		reason = "per-client connection limit reached";
	else if (s->ctrls.n >= (unsigned)s->conf->connections && ctrl_evict(&s->ctrls) < 0)
		reason = "connection limit reached";
	else if (getsockname(fd, (struct sockaddr *)&local, &len) < 0)
		reason = strerror(errno);
	if (reason == NULL) {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (ctrl_new(&s->ctrls, fd, peer, &local, cl) != NULL)
			return;
		reason = "out of resources";
	}
	log_rl(&s->rl_accept, loop_now(s->loop), LOG_WARNING,
	    "connection from %s:%u refused: %s", inet_ntoa(peer->sin_addr),
	    ntohs(peer->sin_port), reason);
	close(fd);
}

/* accept() failed with EMFILE or ENFILE (err): shed the client (shed.h).
 * Returns 1 when a client was shed (try the next), 0 when the backlog is
 * empty, -1 when paused. */
static int
server_accept_shed(struct server *s, int err)
{
	struct sockaddr_in peer;
	socklen_t len = sizeof(peer);

	switch (shed_accept(&s->listen_shed, (struct sockaddr *)&peer, &len)) {
	case SHED_DROPPED:
		log_rl(&s->rl_accept, loop_now(s->loop), LOG_WARNING,
		    "connection from %s:%u refused: out of descriptors",
		    inet_ntoa(peer.sin_addr), ntohs(peer.sin_port));
		return 1;
	case SHED_EMPTY:
		return 0;
	case SHED_PAUSED:
		break;
	}
	log_rl(&s->rl_accept, loop_now(s->loop), LOG_ERR, "accept: %s: not "
	    "listening for %d ms", strerror(err), SHED_PAUSE_MS);
	return -1;
}

static void
server_accept(void *arg, uint32_t events)
{
	struct server *s = arg;
	(void)events;
	/* Never blocks: a silent client costs one descriptor and a timer,
	 * not everybody else's service. */
	for (;;) {
		struct sockaddr_in peer;
		socklen_t len = sizeof(peer);
		int fd = accept4(s->listen_fd, (struct sockaddr *)&peer, &len,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			if (server_accept_shed(s, errno) <= 0)
				return;
			continue;
		}
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				log_rl(&s->rl_accept, loop_now(s->loop), LOG_ERR,
				    "accept: %s", strerror(errno));
			return;
		}
		server_accept_one(s, fd, &peer);
	}
}

/* A TCP socket owned by `owner`: the kernel records the user who made a
 * socket, and SO_REUSEPORT compares that. Root (the monitor before the
 * split) makes it as that user for the one call. -1, errno set. */
static int
server_socket_as(uid_t owner)
{
	struct drop_euid saved;
	int fd;

	if (drop_euid_begin(owner, &saved) < 0)
		return -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	drop_euid_end(&saved);   /* keeps errno */
	return fd;
}

/* The TCP listener on `addr`: a descriptor, or -1 with err set.
 * SO_REUSEPORT lets a reload bind the new address while the old listener
 * still listens, a wildcard beside a specific address of the same port
 * (server_relisten); only a socket of the same user that sets it too can
 * share the port, and a second pptpd is refused before it listens (its
 * control socket, its pid file). */
static int
server_listen_fd(struct in_addr addr, uid_t owner, char *err, size_t errlen)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(PPTP_PORT),
		.sin_addr = addr };
	int one = 1;
	int fd = server_socket_as(owner);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(fd, SERVER_BACKLOG) < 0) {
		snprintf(err, errlen, "cannot listen on %s:%d: %s",
		    inet_ntoa(sin.sin_addr), PPTP_PORT, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Reload: the listener moves to `addr`. The new one is bound first, and
 * if that fails the old one stays as it is: a failed reload never leaves
 * nothing listening. Then the clients already waiting on the old one are
 * taken (unless it is paused, out of descriptors) and the new one takes
 * its place. Live connections are not touched. */
static int
server_relisten(struct server *s, struct in_addr addr, char *err, size_t errlen)
{
	int fd = server_listen_fd(addr, s->listen_owner, err, errlen);
	int old = s->listen_fd;

	if (fd < 0)
		return -1;
	if (s->listen_lf.events != 0)
		server_accept(s, EPOLLIN);
	uint32_t events = s->listen_lf.events;   /* 0: paused */
	loop_fd_del(s->loop, &s->listen_lf);
	if (loop_fd_add(s->loop, &s->listen_lf, fd, events, server_accept, s) < 0) {
		snprintf(err, errlen, "cannot watch the listener on the new "
		    "address: %s", strerror(errno));
		close(fd);
		if (loop_fd_add(s->loop, &s->listen_lf, old, events, server_accept,
		    s) < 0)
			log_msg(LOG_ERR, "reload: %s; and the old listener: %s", err,
			    strerror(errno));
		return -1;
	}
	s->listen_fd = fd;
	close(old);
	return 0;
}

static int
server_listen(struct server *s, char *err, size_t errlen)
{
	int fd = server_listen_fd(s->conf->listen, s->listen_owner, err, errlen);
	if (fd < 0)
		return -1;
	s->listen_fd = fd;
	if (shed_open(&s->listen_shed, s->loop, &s->listen_lf) < 0) {
		snprintf(err, errlen, "cannot open /dev/null: %s", strerror(errno));
		return -1;
	}
	return loop_fd_add(s->loop, &s->listen_lf, fd, EPOLLIN, server_accept, s);
}

/* privsep: the GRE guard, the MSS clamping table and the rates' netlink
 * socket are the monitor's, which makes its own after the fork (the
 * runner asks it per call). What startup learnt from opening them here
 * is kept; they go now, before the server opens more, so that the
 * worker's descriptor table has no holes where they were (a full table
 * is one without a free number below the limit: test_daemon's
 * test_ctl_full_table_no_spin). */
static void
server_hand_over(struct server *s)
{
	s->calls.guard_by_runner = s->calls.guard != NULL;
	kguard_close(s->calls.guard);   /* no call is guarded yet */
	s->calls.guard = NULL;
	s->calls.mss_by_runner = s->calls.mss != NULL;
	mss_close(s->calls.mss);
	s->calls.mss = NULL;
	s->calls.shape_by_runner = s->calls.shaper != NULL;
	shaper_close(s->calls.shaper);   /* no link is shaped yet */
	s->calls.shaper = NULL;
}

/* tcp-mss-adjust: the clamping table, made as the configuration says.
 * Without nftables (no nf_tables in the kernel, no CAP_NET_ADMIN) pptpd
 * says so once and serves without clamping: a missing clamp costs some
 * paths their large TCP segments, a refusal to start costs every user. */
static void
server_mss_open(struct server *s, const struct conf *conf)
{
	char why[256];

	if (conf->tcp_mss_adjust == CONF_MSS_OFF)
		return;
	if (conf->noplugin) {
		/* Sessions' interfaces come from the plugin's reports. */
		log_msg(LOG_INFO, "TCP MSS clamping off: it needs the plugin "
		    "(noplugin)");
		return;
	}
	s->calls.mss = mss_open(conf->tcp_mss_adjust == CONF_MSS_FROM_MTU ? 0 :
	    conf->tcp_mss_adjust, why, sizeof(why));
	if (s->calls.mss == NULL)
		log_msg(LOG_WARNING, "TCP MSS clamping off: cannot make nftables "
		    "table inet %s: %s (set 'tcp-mss-adjust no' if this kernel "
		    "has no nf_tables)", MSS_TABLE, why);
	else
		log_msg(LOG_INFO, "TCP MSS clamping on: nftables table inet %s",
		    MSS_TABLE);
}

/* Startup: open the clamping table and the rates' socket, to keep them
 * or (privsep) to learn that they can be had. */
static void
server_learn(struct server *s, const struct conf *conf)
{
	char why[128];

	server_mss_open(s, conf);
	/* Per-user rates (the plugin's): without the socket a session with
	 * one is logged unlimited, the server still serves. */
	if ((s->calls.shaper = shaper_open(why, sizeof(why))) == NULL)
		log_msg(LOG_WARNING, "rate limits cannot be set: %s", why);
	if (conf->privsep)
		server_hand_over(s);
}

static void server_check_stopped(struct server *s);

/* systemd hears the counts as they are now (notify.h). */
static void
server_notify(struct server *s,
    void (*say)(struct notify *n, unsigned sessions, unsigned ctrls))
{
	say(&s->notify, calls_sessions(&s->calls), s->ctrls.n);
}

/* ---- what calls and connections tell the server (call.h, ctrl.h) */

static void
server_on_call_ended(void *arg, const struct gre_stats *st)
{
	struct server *s = arg;
	metrics_count_ended(&s->counts, st);
	server_notify(s, notify_sessions_changed);
}

static void
server_on_call_gone(void *arg)
{
	server_check_stopped(arg);
}

static void
server_on_call_setup(void *arg, const char *refusal)
{
	struct server *s = arg;
	s->counts.setups++;
	if (refusal != NULL)
		s->counts.failures[metrics_refusal_of(refusal)]++;
	else
		server_notify(s, notify_sessions_changed);
}

static void
server_on_ctrl_gone(void *arg)
{
	server_check_stopped(arg);
}

static void
server_calls_init(struct server *s)
{
	calls_init(&s->calls);
	s->calls.loop = s->loop;
	s->calls.conf = s->conf;
	s->calls.rl_input = &s->rl_input;
	s->calls.ended = server_on_call_ended;
	s->calls.gone = server_on_call_gone;
	s->calls.arg = s;
}

static void
server_ctrls_init(struct server *s)
{
	ctrls_init(&s->ctrls);
	s->ctrls.loop = s->loop;
	s->ctrls.conf = s->conf;
	s->ctrls.calls = &s->calls;
	s->ctrls.rl_input = &s->rl_input;
	s->ctrls.call_setup = server_on_call_setup;
	s->ctrls.gone = server_on_ctrl_gone;
	s->ctrls.arg = s;
}

/* `pptpctl upgrade` */
static int
server_upgrade(void *arg, char *err, size_t errlen)
{
	struct server *s = arg;
	if (s->upgrade == NULL) {
		snprintf(err, errlen, "no upgrade in this mode");
		return -1;
	}
	return s->upgrade(s->reload_arg, err, errlen);
}

static int
server_ctl_open(struct server *s, char *err, size_t errlen)
{
	const struct ctl_env env = {
		.loop = s->loop, .conf = s->conf, .calls = &s->calls,
		.ctrls = &s->ctrls, .gre = s->gre, .started_ms = s->started_ms,
		.reload = server_reload_files, .upgrade = server_upgrade,
		.arg = s,
	};
	return ctl_open(&s->ctl, &env, err, errlen);
}

void
server_daemonised(struct server *s)
{
	ctl_relisten(&s->ctl);
}

static struct metrics *
server_metrics_new(struct server *s, char *err, size_t errlen)
{
	const struct metrics_env env = {
		.loop = s->loop, .conf = s->conf, .calls = &s->calls,
		.ctrls = &s->ctrls, .counts = &s->counts, .gre = s->gre,
	};
	return metrics_new(&env, &s->conf->metrics_listen, err, errlen);
}

void
server_ready(struct server *s)
{
	server_notify(s, notify_ready);
}

int
server_reload_files(void *arg, char *err, size_t errlen)
{
	struct server *s = arg;
	/* systemd holds other jobs while we say we reload. */
	server_notify(s, notify_reloading);
	int rc = s->reload(s->reload_arg, err, errlen);
	server_notify(s, notify_ready);
	return rc;
}

/* IPv6 in the tunnel (ipv6-prefix-pool): the routes and advertisements
 * (nd.h), made once. Without IPv6 or the privilege for it pptpd says so
 * and serves IPv4: pppd is then not given +ipv6. */
static void
server_nd_open(struct server *s, int quiet)
{
	char why[256];

	if (s->calls.nd != NULL)
		return;
	/* Under privsep the monitor routes the /64s. */
	if ((s->calls.nd = nd_open(s->loop, !s->conf->privsep, why,
	    sizeof(why))) == NULL && !quiet)
		log_msg(LOG_WARNING, "IPv6 in the tunnel off: %s", why);
}

/* The pool of `spec`, or NULL for none; -1 with err set when it is not
 * one (conf.c checked it already: only memory can fail). */
static int
server_pool6_new(const char *spec, struct pool6 **out, char *err,
    size_t errlen)
{
	*out = NULL;
	if (spec == NULL)
		return 0;
	if ((*out = pool6_new(spec, err, errlen)) == NULL)
		return -1;
	return 0;
}

/* The new IPv6 pool, with every /64 a call holds marked taken; those it
 * does not hold stay with their calls and are retired when they end. */
static void
server_pool6_adopt(struct server *s, struct pool6 *p6)
{
	unsigned retired = 0;
	struct call *c;

	TAILQ_FOREACH(c, &s->calls.list, s_entry)
		if (c->has_prefix6 && (p6 == NULL || pool6_take(p6, &c->prefix6) < 0))
			retired++;
	if (retired > 0)
		log_msg(LOG_NOTICE, "reload: %u live calls keep IPv6 prefixes the "
		    "new ipv6-prefix-pool does not hold; each is retired when its "
		    "call ends", retired);
	pool6_free(s->calls.pool6);
	s->calls.pool6 = p6;
	if (p6 != NULL)
		server_nd_open(s, 0);
}

/* pptpd's own accounting toward radius-config-file's server (acct.h);
 * *out NULL when it is not set. */
static int
server_acct_new(struct server *s, const struct conf *conf, struct acct **out,
    char *err, size_t errlen)
{
	char why[200] = "";

	*out = NULL;
	if (!conf->has_radcfg)
		return 0;
	if ((*out = acct_open(s->loop, &conf->radcfg, why, sizeof(why))) == NULL) {
		snprintf(err, errlen, "radius-config-file: %s", why);
		return -1;
	}
	return 0;
}

/* Under privsep: does `c` ask the monitor to clamp? (It answers "off"
 * when it has no table, and is not asked again.) */
static int
server_mss_by_runner(const struct conf *c)
{
	return c->tcp_mss_adjust != CONF_MSS_OFF && !c->noplugin;
}

/* A later worker's: the facts as the first startup learnt them, nothing
 * opened (see server_new); clamping as the configuration now says, as a
 * reload does. */
static void
server_take_facts(struct server *s, const struct server_facts *f)
{
	s->calls.kernel_path = f->kernel_path;
	s->calls.guard_by_runner = f->guarded;
	s->calls.mss_by_runner = server_mss_by_runner(s->conf);
	s->calls.shape_by_runner = f->shaping;
}

struct server *
server_new(const struct conf *conf, struct loop *loop, uid_t listen_owner,
    const struct server_facts *given, char *err, size_t errlen)
{
	struct server *s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->conf = conf;
	s->loop = loop;
	s->listen_fd = -1;
	s->listen_owner = listen_owner;
	s->listen_lf.fd = -1;
	s->ctl.fd = -1;
	s->started_ms = loop_now(loop);
	s->gre_lf.fd = -1;
	s->rl_accept = (struct ratelimit)LOG_RL_INIT;
	s->rl_input = (struct ratelimit)LOG_RL_INIT;
	server_calls_init(s);
	server_ctrls_init(s);
	notify_init(&s->notify, loop);
	if ((s->clients = clients_new()) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (conf->remoteip != NULL) {
		char perr[CONF_ERR_LEN];
		s->calls.pool = pool_new(conf->localip, conf->remoteip, perr, sizeof(perr));
		if (s->calls.pool == NULL) {
			snprintf(err, errlen, "%s: address pool: %s", conf->file, perr);
			goto fail;
		}
	}
	/* Bound to no address: `listen` may change at reload, and each call's
	 * GRE is sent from its control connection's local address anyway. */
	s->gre = gre_engine_new((struct in_addr){ INADDR_ANY }, &server_gre_ops, s);
	if (s->gre == NULL) {
		snprintf(err, errlen, "cannot open the GRE socket: %s", strerror(errno));
		goto fail;
	}
	s->calls.gre = s->gre;
	if (loop_fd_add(loop, &s->gre_lf, gre_engine_fd(s->gre), EPOLLIN,
	    server_gre_ready, s) < 0) {
		snprintf(err, errlen, "cannot watch the GRE socket");
		goto fail;
	}
	struct loop_hook hook = { server_gre_deadline, server_gre_timers, s };
	loop_set_hook(loop, &hook);
	if (given != NULL)
		server_take_facts(s, given);
	else if ((s->calls.kernel_path = datapath_choose(conf->datapath,
	    conf->noplugin, &s->calls.guard, err, errlen)) < 0)
		goto fail;
	/* On the kernel path (fixed until restart) every call's GRE is the
	 * kernel's, and the raw socket would wake us for a copy of each packet
	 * only to drop it: it receives nothing. Without the filter the copies
	 * are still dropped, per call (gre_engine_ignore_call), at a cost. */
	if (s->calls.kernel_path && gre_engine_receive_none(s->gre) < 0)
		log_msg(LOG_WARNING, "gre: cannot filter the raw socket on the "
		    "kernel data path (%s): it drops the kernel's copies itself",
		    strerror(errno));
	if (given == NULL)
		server_learn(s, conf);
	if (server_pool6_new(conf->ipv6_pool, &s->calls.pool6, err, errlen) < 0)
		goto fail;
	/* Under privsep the worker, unprivileged, cannot open the raw ICMPv6
	 * socket later: it is opened now (quietly without a pool), so a
	 * reload can add ipv6-prefix-pool. */
	if (s->calls.pool6 != NULL || conf->privsep)
		server_nd_open(s, s->calls.pool6 == NULL);
	/* Fail now, not at every call: pppd would refuse to start. */
	if (!conf->noplugin && access(conf->plugin, R_OK) < 0) {
		snprintf(err, errlen, "pppd plugin %s: %s (set 'plugin PATH', or "
		    "'noplugin' to run pppd without it)", conf->plugin,
		    strerror(errno));
		goto fail;
	}
	if (server_ctl_open(s, err, errlen) < 0)
		goto fail;
	if (server_listen(s, err, errlen) < 0)
		goto fail;
	if (conf->metrics_listen.sin_port != 0 &&
	    (s->metrics = server_metrics_new(s, err, errlen)) == NULL)
		goto fail;
	if (conf->dae_listen.sin_port != 0 &&
	    (s->dae = dae_new(loop, conf, &s->calls, &conf->dae_listen, err,
	    errlen)) == NULL)
		goto fail;
	if (server_acct_new(s, conf, &s->calls.acct, err, errlen) < 0)
		goto fail;
	return s;
fail:
	server_free(s);
	return NULL;
}

/* Stopping, and nothing left to wait for. */
static void
server_check_stopped(struct server *s)
{
	if (s->stopping && TAILQ_EMPTY(&s->calls.list) && s->ctrls.n == 0)
		loop_stop(s->loop);
}

void
server_child_exited(struct server *s, uint16_t call_id, pid_t pid, int status)
{
	struct call *c = calls_by_id(&s->calls, call_id);
	if (c == NULL || c->pid != pid)
		return;
	call_exited(c);
	call_reaped(c, status);
}

void
server_reap(struct server *s)
{
	int status;
	siginfo_t si;
	/* pppd sends its last reports ("down" with the session's counters,
	 * "exit") before it exits, but the SIGCHLD can be handled before its
	 * report channel: reaping frees the call. So each exited child is
	 * only looked at first (WNOWAIT) and its reports are read while it is
	 * a zombie: a report may still make us signal that pid (a hang-up),
	 * which must not reach a new process that got the pid. Then it is
	 * reaped. (Under privsep the monitor reaps, and its CHILD_EXIT comes
	 * to server_child_exited: the pid is gone by then, so the monitor
	 * signals only pids it has not reaped.) */
	for (;;) {
		si.si_pid = 0;
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
			if (errno != ECHILD)
				log_msg(LOG_ERR, "waitid: %s", strerror(errno));
			return;
		}
		if (si.si_pid == 0)
			return;
		struct call *c = calls_by_pid(&s->calls, si.si_pid);
		if (c != NULL)
			call_exited(c);
		if (waitpid(si.si_pid, &status, 0) < 0) {
			log_msg(LOG_ERR, "waitpid %d: %s", (int)si.si_pid,
			    strerror(errno));
			return;
		}
		if (c != NULL)
			call_reaped(c, status);
	}
}

void
server_facts(const struct server *s, struct server_facts *f)
{
	f->kernel_path = s->calls.kernel_path;
	f->guarded = s->calls.guard_by_runner;
	f->clamping = s->calls.mss_by_runner;
	f->shaping = s->calls.shape_by_runner;
}


void
server_monitor_reloaded(struct server *s)
{
	struct call *c;
	if (!s->mss_renew)
		return;
	s->mss_renew = 0;
	TAILQ_FOREACH(c, &s->calls.list, s_entry)
		call_mss_renew(c);
}

void
server_set_runner(struct server *s, const struct pppd_runner *runner,
    notify_relay_fn relay, void *relay_arg)
{
	s->calls.runner = runner;
	notify_relay(&s->notify, relay, relay_arg);
}

void
server_set_journal(struct server *s, void *journal)
{
	s->calls.journal = journal;
}

/* The connections of the calls being resumed, by their socket's inode
 * (calls that share a connection share it; the monitor holds a copy per
 * call). */
struct resumed_conn {
	ino_t        ino;
	struct ctrl *ctrl;
};

/* The connection call `r` runs on: one taken over already, or a new one
 * on r->conn (then taken, else closed as a copy). NULL with *reason. */
static struct ctrl *
server_resume_conn(struct server *s, struct pppd_resumed *r,
    struct resumed_conn *rc, size_t *nrc, const char **reason)
{
	struct sockaddr_in peer, local;
	socklen_t plen = sizeof(peer), llen = sizeof(local);
	struct client *cl;
	struct stat st;

	if (fstat(r->conn, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		*reason = "its connection is not a socket";
		return NULL;
	}
	for (size_t i = 0; i < *nrc; i++)
		if (rc[i].ino == st.st_ino) {
			close(r->conn);   /* the monitor's copy of the same */
			r->conn = -1;
			return rc[i].ctrl;
		}
	if (getpeername(r->conn, (struct sockaddr *)&peer, &plen) < 0 ||
	    getsockname(r->conn, (struct sockaddr *)&local, &llen) < 0 ||
	    peer.sin_family != AF_INET) {
		*reason = "its connection has no IPv4 peer";
		return NULL;
	}
	if ((cl = clients_get(s->clients, peer.sin_addr, loop_now(s->loop))) ==
	    NULL || (rc[*nrc].ctrl = ctrl_resume(&s->ctrls, r->conn, &peer,
	    &local, cl)) == NULL) {
		*reason = "out of memory";
		return NULL;
	}
	r->conn = -1;
	rc[*nrc].ino = st.st_ino;
	return rc[(*nrc)++].ctrl;
}

void
server_resume(struct server *s, struct pppd_resumed *r, size_t n)
{
	const struct pppd_runner *run = s->calls.runner;
	struct resumed_conn *rc = calloc(n ? n : 1, sizeof(*rc));
	size_t nrc = 0, taken = 0;

	for (size_t i = 0; i < n; i++) {
		const char *reason = NULL;
		struct ctrl *c = rc == NULL ? (reason = "out of memory", NULL) :
		    server_resume_conn(s, &r[i], rc, &nrc, &reason);
		if (c != NULL && ctrl_resume_call(c, &r[i], &reason) != NULL) {
			taken += reason == NULL;   /* else ended at once */
			continue;
		}
		/* Not ours to carry on: the monitor ends it (its copies
		 * closed, SIGTERM, SIGKILL after a grace). */
		log_msg(LOG_WARNING, "call %u/%u: pppd %d not resumed: %s: "
		    "hanging up", r[i].call_id, r[i].peer_call_id,
		    (int)r[i].pid, reason);
		pppd_resumed_close(&r[i]);
		if (run != NULL)
			run->drop(run->arg, r[i].call_id);
	}
	free(rc);
	if (n > 0)
		log_msg(LOG_NOTICE, "%zu of %zu sessions taken over from the "
		    "worker before", taken, n);
}

/* Cut off what a clean stop has not finished: pppd is killed, not
 * waited for (we exit; init reaps it). */
static void
server_force_stop(struct server *s, const char *why)
{
	struct ctrl *c;
	struct call *call;

	log_msg(LOG_WARNING, "stop: %s: closing %u connections, killing %s pppd",
	    why, s->ctrls.n, TAILQ_EMPTY(&s->calls.list) ? "no" : "every");
	while ((c = TAILQ_FIRST(&s->ctrls.list)) != NULL)
		ctrl_close(c, "server stopping");
	TAILQ_FOREACH(call, &s->calls.list, s_entry)
		call_kill_now(call);
	loop_stop(s->loop);
}

static void
server_acct_wait_over(void *arg)
{
	server_force_stop(arg, "the wait for Accounting-Stops is over");
}

/* The latest end of a hold-back for an Accounting-Stop (0: none under
 * way); *n: how many pppd are sending one. */
static uint64_t
server_acct_stops_due(const struct server *s, unsigned *n)
{
	const struct call *c;
	uint64_t due = 0;

	*n = 0;
	TAILQ_FOREACH(c, &s->calls.list, s_entry) {
		uint64_t d = call_acct_stop_due(c);
		*n += d != 0;
		due = d > due ? d : due;
	}
	return due;
}

/* stop-timeout: what is still running is cut off, except the pppd that are
 * sending their Accounting-Stop (a signal would lose it): the stop waits
 * for those until each is done, CALL_ACCT_STOP_MS after its "down" at the
 * latest, so a clean stop takes at most stop-timeout + CALL_ACCT_STOP_MS. */
static void
server_stop_timeout(void *arg)
{
	struct server *s = arg;
	uint64_t now = loop_now(s->loop);
	unsigned n;
	uint64_t due = server_acct_stops_due(s, &n);
	struct call *c;

	if (due <= now) {
		server_force_stop(s, "stop-timeout reached");
		return;
	}
	log_msg(LOG_WARNING, "stop: stop-timeout reached: waiting for %u pppd "
	    "sending their Accounting-Stop (at most %llu ms more), killing the "
	    "others", n, (unsigned long long)(due - now));
	TAILQ_FOREACH(c, &s->calls.list, s_entry)
		if (call_acct_stop_due(c) == 0)
			call_kill_now(c);
	loop_timer_set(s->loop, &s->stop_timer, due - now, server_acct_wait_over, s);
}

void
server_shutdown(struct server *s)
{
	if (s->stopping) {
		server_force_stop(s, "second stop signal");
		return;
	}
	s->stopping = 1;
	server_notify(s, notify_stopping);
	log_msg(LOG_NOTICE, "shutting down: %u connections: hanging up every "
	    "call (at most %d s, %d s more for an Accounting-Stop)", s->ctrls.n,
	    s->conf->stop_timeout, CALL_ACCT_STOP_MS / 1000);
	if (s->listen_fd >= 0) {
		loop_fd_del(s->loop, &s->listen_lf);
		close(s->listen_fd);
		s->listen_fd = -1;
	}
	loop_timer_set(s->loop, &s->stop_timer,
	    (uint64_t)s->conf->stop_timeout * 1000, server_stop_timeout, s);
	ctrl_stop_all(&s->ctrls, PPTP_CDN_ADMIN_SHUTDOWN, REPORT_CAUSE_SHUTDOWN,
	    "server shutting down");
	server_check_stopped(s);
}

void
server_free(struct server *s)
{
	if (s == NULL)
		return;
	metrics_free(s->metrics);
	dae_free(s->dae);
	acct_close(s->calls.acct);
	notify_free(&s->notify);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	shed_close(&s->listen_shed);
	ctl_close(&s->ctl);
	/* Left after a forced stop: their pppd was killed, not reaped. */
	struct call *call;
	while ((call = TAILQ_FIRST(&s->calls.list)) != NULL) {
		TAILQ_REMOVE(&s->calls.list, call, s_entry);
		call_destroy(call);
	}
	if (s->gre != NULL) {
		loop_fd_del(s->loop, &s->gre_lf);
		gre_engine_free(s->gre);
	}
	kguard_close(s->calls.guard);
	mss_close(s->calls.mss);   /* after the calls: their elements go with it */
	nd_close(s->calls.nd);     /* after the calls, for the same reason */
	shaper_close(s->calls.shaper);
	pool6_free(s->calls.pool6);
	loop_timer_cancel(s->loop, &s->stop_timer);
	clients_free(s->clients);
	pool_free(s->calls.pool);
	free(s);
}

void
server_status(struct server *s)
{
	unsigned active, ending;
	struct gre_engine_stats gs;
	calls_count(&s->calls, &active, &ending);
	gre_engine_stats(s->gre, &gs);
	log_msg(LOG_NOTICE, "status: %u connections, %u calls active, %u ending, "
	    "pool %zu of %zu free, gre rx %llu tx %llu malformed %llu unknown-call %llu",
	    s->ctrls.n, active, ending, s->calls.pool ? pool_available(s->calls.pool) : 0,
	    s->calls.pool ? pool_size(s->calls.pool) : 0, (unsigned long long)gs.rx_datagrams,
	    (unsigned long long)gs.tx_datagrams, (unsigned long long)gs.rx_malformed,
	    (unsigned long long)gs.rx_unknown_call);
}

/* ---- reload */

static int
str_differs(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a != b;
	return strcmp(a, b) != 0;
}

static void
log_change_str(const char *key, const char *a, const char *b, int *n)
{
	if (!str_differs(a, b))
		return;
	log_msg(LOG_NOTICE, "reload: %s %s -> %s", key, a ? a : "(unset)",
	    b ? b : "(unset)");
	(*n)++;
}

static void
log_change_int(const char *key, int a, int b, int *n)
{
	if (a == b)
		return;
	log_msg(LOG_NOTICE, "reload: %s %d -> %d", key, a, b);
	(*n)++;
}

/* tcp-mss-adjust as pptpd.conf spells it. */
static const char *
server_mss_str(char *buf, size_t len, int v)
{
	if (v == CONF_MSS_OFF)
		return "no";
	if (v == CONF_MSS_FROM_MTU)
		return "yes";
	snprintf(buf, len, "%d", v);
	return buf;
}

/* A reload that changes tcp-mss-adjust: the table is made anew with the
 * new setting (or deleted), and every live session's interface put back
 * in it, so sessions up before the reload are clamped as new ones are. */
static void
server_mss_reload(struct server *s, const struct conf *next)
{
	struct call *c;

	if (s->conf->tcp_mss_adjust == next->tcp_mss_adjust)
		return;
	if (s->calls.runner != NULL) {
		/* The runner's table is made anew at the monitor's reload,
		 * which comes after this one: the sessions are put back in
		 * it then (server_monitor_reloaded). */
		s->calls.mss_by_runner = server_mss_by_runner(next);
		s->mss_renew = 1;
		return;
	}
	mss_close(s->calls.mss);
	s->calls.mss = NULL;
	server_mss_open(s, next);
	TAILQ_FOREACH(c, &s->calls.list, s_entry)
		call_mss_renew(c);
}

/* The keys a reload can change, one line each. */
static void
server_log_changes(const struct conf *a, const struct conf *b)
{
	int n = 0;
	char la[INET_ADDRSTRLEN], lb[INET_ADDRSTRLEN], ma[16], mb[16];

	inet_ntop(AF_INET, &a->listen, la, sizeof(la));
	inet_ntop(AF_INET, &b->listen, lb, sizeof(lb));
	log_change_str("listen", la, lb, &n);
	log_change_str("localip", a->localip, b->localip, &n);
	log_change_str("remoteip", a->remoteip, b->remoteip, &n);
	log_change_str("ipv6-prefix-pool", a->ipv6_pool, b->ipv6_pool, &n);
	log_change_str("ipv6-radius-prefixes", a->ipv6_radius_prefixes,
	    b->ipv6_radius_prefixes, &n);
	log_change_int("connections", a->connections, b->connections, &n);
	log_change_int("connections-per-client", a->per_client, b->per_client, &n);
	log_change_int("calls-per-connection", a->calls_per_conn,
	    b->calls_per_conn, &n);
	log_change_int("calls-per-client", a->calls_per_client,
	    b->calls_per_client, &n);
	log_change_int("call-setups", a->setups, b->setups, &n);
	log_change_int("call-setups-per-client", a->setups_per_client,
	    b->setups_per_client, &n);
	log_change_int("call-rate-per-client", a->call_rate, b->call_rate, &n);
	log_change_int("call-setup-timeout", a->setup_timeout, b->setup_timeout,
	    &n);
	log_change_int("pool-share-per-client", a->pool_share, b->pool_share, &n);
	log_change_int("stimeout", a->stimeout, b->stimeout, &n);
	log_change_int("stop-timeout", a->stop_timeout, b->stop_timeout, &n);
	log_change_int("sessions-per-user", a->sessions_per_user,
	    b->sessions_per_user, &n);
	log_change_int("sessions-per-user-action", a->user_limit_action,
	    b->user_limit_action, &n);
	log_change_int("debug", a->debug, b->debug, &n);
	log_change_str("option", a->option, b->option, &n);
	log_change_str("ppp", a->ppp, b->ppp, &n);
	log_change_str("speed", a->speed, b->speed, &n);
	log_change_int("noipparam", a->noipparam, b->noipparam, &n);
	log_change_int("logwtmp", a->logwtmp, b->logwtmp, &n);
	log_change_str("plugin", a->plugin, b->plugin, &n);
	log_change_str("peers", a->peers, b->peers, &n);
	log_change_str("radius-dae-clients", a->dae_clients_file,
	    b->dae_clients_file, &n);
	log_change_int("radius-dae-require-timestamp", a->dae_require_timestamp,
	    b->dae_require_timestamp, &n);
	log_change_int("metrics-per-session", a->metrics_per_session,
	    b->metrics_per_session, &n);
	log_change_str("tcp-mss-adjust", server_mss_str(ma, sizeof(ma),
	    a->tcp_mss_adjust), server_mss_str(mb, sizeof(mb), b->tcp_mss_adjust),
	    &n);
	if (n == 0)
		log_msg(LOG_NOTICE, "reload: nothing changed");
}

/* The new pool, with every address a call holds marked taken. Returns the
 * number of addresses the calls keep that the new pool does not hold. */
static unsigned
server_pool_adopt(struct server *s, struct pool *p)
{
	unsigned retired = 0;
	struct call *c;

	TAILQ_FOREACH(c, &s->calls.list, s_entry) {
		if (c->remote_ip.s_addr == INADDR_ANY)
			continue;
		if (p == NULL || pool_take(p, c->remote_ip) < 0)
			retired++;
	}
	return retired;
}

int
server_reload(struct server *s, const struct conf *next, char *err,
    size_t errlen)
{
	struct pool *p = NULL;
	char perr[CONF_ERR_LEN];

	if (s->stopping) {
		snprintf(err, errlen, "shutting down");
		return -1;
	}
	if (conf_restart_check(s->conf, next, err, errlen) < 0)
		return -1;
	int same_pool = !str_differs(s->conf->localip, next->localip) &&
	    !str_differs(s->conf->remoteip, next->remoteip);
	if (!same_pool && next->remoteip != NULL &&
	    (p = pool_new(next->localip, next->remoteip, perr, sizeof(perr))) == NULL) {
		snprintf(err, errlen, "%s:%d: address pool: %s", next->file,
		    next->line_remoteip > next->line_localip ? next->line_remoteip :
		    next->line_localip, perr);
		return -1;
	}
	int same_pool6 = !str_differs(s->conf->ipv6_pool, next->ipv6_pool);
	struct pool6 *p6 = NULL;
	if (!same_pool6 && server_pool6_new(next->ipv6_pool, &p6, perr,
	    sizeof(perr)) < 0) {
		snprintf(err, errlen, "%s: ipv6-prefix-pool: %s", next->file, perr);
		pool_free(p);
		return -1;
	}
	int same_acct = s->conf->has_radcfg == next->has_radcfg &&
	    memcmp(&s->conf->radcfg, &next->radcfg, sizeof(next->radcfg)) == 0;
	struct acct *na = NULL;
	if (!same_acct && server_acct_new(s, next, &na, err, errlen) < 0) {
		pool_free(p);
		pool6_free(p6);
		return -1;
	}
	/* The last step that can fail, so nothing is applied before it. */
	if (s->conf->listen.s_addr != next->listen.s_addr &&
	    server_relisten(s, next->listen, err, errlen) < 0) {
		pool_free(p);
		pool6_free(p6);
		acct_close(na);
		return -1;
	}
	if (!same_acct) {
		struct call *c;
		log_msg(LOG_NOTICE, "reload: radius-config-file %s: accounting %s",
		    next->radius_config_file ? next->radius_config_file : "(unset)",
		    na != NULL ? "to its acctserver, as read now" : "off");
		acct_close(s->calls.acct);
		s->calls.acct = na;
		TAILQ_FOREACH(c, &s->calls.list, s_entry)
			call_acct_renew(c);
	}
	if (!same_pool6)
		server_pool6_adopt(s, p6);
	if (same_pool) {
		/* Keep the pool, and the order its free addresses are in. */
		server_log_changes(s->conf, next);
		server_mss_reload(s, next);
		log_set_debug(next->debug);
		return 0;
	}
	server_log_changes(s->conf, next);
	server_mss_reload(s, next);
	unsigned retired = server_pool_adopt(s, p);
	if (retired > 0)
		log_msg(LOG_NOTICE, "reload: %u live calls keep addresses the new "
		    "pool does not hold; each is retired when its call ends",
		    retired);
	pool_free(s->calls.pool);
	s->calls.pool = p;
	log_set_debug(next->debug);
	return 0;
}
