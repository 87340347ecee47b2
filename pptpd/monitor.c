/* The privileged monitor: see monitor.h. One poll loop over the worker's
 * socket and a signalfd; no parse of anything but proto/monitor.h's
 * records, which mon_recv has already checked for shape. */
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/ppp-ioctl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "pptpd/conf.h"
#include "pptpd/datapath.h"
#include "pptpd/drop.h"
#include "pptpd/fileset.h"
#include "pptpd/kguard.h"
#include "pptpd/log.h"
#include "pptpd/monitor.h"
#include "pptpd/mss.h"
#include "pptpd/notify.h"
#include "pptpd/pool.h"
#include "pptpd/pppd.h"
#include "pptpd/pppif.h"
#include "pptpd/prefix6.h"
#include "pptpd/route6.h"
#include "pptpd/shaper.h"
#include "proto/handover.h"
#include "proto/monitor.h"
#include "proto/msg.h"
#include "common/strclean.h"

/* After the worker is gone, the sessions it left get SIGTERM (pppd ends
 * LCP with the peer, runs ip-down and RADIUS' Accounting-Stop) and
 * stop-timeout, as a clean stop gives them, before SIGKILL: with its
 * control connection gone with the worker the client often no longer
 * answers LCP's Terminate-Request, and pppd waits out its retries (3 s
 * each, twice) before it exits; a bound of 5 s SIGKILLed it first on the
 * kernel path (Debian 13, the systemd test). At least this long: */
#define MONITOR_GRACE_MIN_MS  5000
#define MONITOR_NOTIFY_BURST  4

/* A pppd the monitor started and has not reaped. A list scanned whole:
 * each request names one call, and a server carries thousands, not
 * millions (pool and Call IDs bound it). */
struct mcall {
	uint16_t       id, peer_id;
	pid_t          pid;
	struct in_addr local;        /* ours in the tunnel (INADDR_ANY: pppd's) */
	struct in_addr remote;       /* INADDR_ANY: pppd picks */
	struct in_addr client;       /* read from the control connection */
	int            guarded;      /* in the GRE guard's map */
	char           ifname[MON_IFNAME];   /* in the MSS table, when clamped */
	int            clamped;
	unsigned       shaped;       /* the interface index with its rate */
	unsigned       routed6;      /* the interface index its /64 is routed to */
	struct in6_addr prefix6;     /* ... that /64 */
	/* Copies of what the session lives on, kept until pppd is reaped so
	 * that it can outlive the worker (-1: none): the control connection,
	 * the worker's end of the report channel, the pty master. */
	int            conn, report, pty;
	uint16_t       flags;        /* CALL_START's MON_CALL_* */
	int            handed;       /* the running worker has it (started it,
	                              * or had it back with CALL_RESUME) */
	int            hung;         /* the worker hung it up: it ends, and is
	                              * not handed back */
	int            orphan;       /* its worker died: it is being ended */
	uint64_t       kill_at;      /* ... SIGKILL then (ms) */
};

struct monitor {
	const struct conf *conf;
	pid_t              worker;
	uid_t              worker_uid;
	int                worker_status;   /* -1 while it runs */
	int                sock;
	int                sigfd;
	struct pool       *pool;     /* remote addresses taken by live calls */
	int                kernel_path;
	struct kguard     *guard;    /* NULL: engine path, or unguarded */
	struct mss        *mss;      /* NULL: no TCP MSS clamping */
	struct shaper     *shaper;   /* NULL: no rate can be set */
	struct route6     *route6;   /* NULL: no /64 routed yet */
	int                mss_setting;   /* the tcp-mss-adjust it was made for */
	struct mcall      *calls;
	size_t             ncalls, cap;
	uint64_t           grace_end;   /* the next orphan's SIGKILL; 0: none */
	int                sock_gone;   /* the worker's end hung up */
	int                stopping;    /* told to stop: no new worker */
	uint32_t           generation;  /* workers started */
	uint64_t           respawned[MONITOR_RESPAWNS];   /* when (ms), a ring */
	monitor_respawn_fn respawn;
	monitor_upgrade_check_fn upgrade_check;
	monitor_upgrade_exec_fn  upgrade_exec;
	int                upgrading;   /* the worker is leaving for an upgrade */
	int                draining;    /* reading what a dead worker sent */
	uint64_t           upgrade_at;  /* ... SIGKILLed then if it has not (ms) */
	struct ratelimit   rl;
	struct ratelimit   rl_notify;   /* what goes to systemd, whatever the
	                                 * worker asks (notify.h's promise) */
	monitor_reload_fn  reload;
	monitor_files_fn   files;
	void              *reload_arg;
};

static uint64_t
monitor_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct mcall *
monitor_call(struct monitor *m, uint16_t id)
{
	for (size_t i = 0; i < m->ncalls; i++)
		if (m->calls[i].id == id)
			return &m->calls[i];
	return NULL;
}

static void
monitor_pool_build(struct monitor *m)
{
	char err[256];
	pool_free(m->pool);
	m->pool = NULL;
	if (m->conf->remoteip == NULL)
		return;
	m->pool = pool_new(m->conf->localip, m->conf->remoteip, err, sizeof(err));
	if (m->pool == NULL) {
		log_msg(LOG_ERR, "monitor: %s", err);
		return;
	}
	/* What live calls hold stays taken (a retired address: not in it). */
	for (size_t i = 0; i < m->ncalls; i++)
		if (m->calls[i].remote.s_addr != INADDR_ANY)
			pool_take(m->pool, m->calls[i].remote);
}

/* Signal the worker. Once it has dropped root it is another user's
 * process, and the unit's bounding set under systemd has no CAP_KILL
 * (pppd, root in the unit, need not kill any process it likes): refused
 * as root, the signal goes again as the worker's user, the monitor's
 * effective uid alone changed for the one call, which the kernel allows
 * without the capability (kill(2): the sender's effective uid is the
 * target's real one). Root's rights come back at once: the real and saved
 * uids stayed 0. (As root first: a worker that has not dropped yet is
 * still root's.) */
static void
monitor_kill_worker(struct monitor *m, int sig)
{
	int rc = kill(m->worker, sig), err = errno;
	struct drop_euid saved;

	if (rc < 0 && err == EPERM && m->worker_uid != 0 &&
	    drop_euid_begin(m->worker_uid, &saved) == 0) {
		rc = kill(m->worker, sig);
		err = errno;
		drop_euid_end(&saved);
	}
	if (rc < 0 && err != ESRCH)
		log_msg(LOG_ERR, "monitor: cannot send signal %d to the worker "
		    "(pid %d): %s", sig, (int)m->worker, strerror(err));
}

/* The socket does not block (monitor_run): a worker that stops reading
 * must not stop the monitor's reaping and signals. One that lets its
 * socket fill up is broken, and is killed: its sessions then end as
 * after any death of the worker. */
static int
monitor_send(struct monitor *m, struct mon_msg *a)
{
	if (m->draining)
		return -1;   /* a dead worker's last requests: not answered */
	if (mon_send(m->sock, a) < 0) {
		log_rl(&m->rl, monitor_now(), LOG_ERR, "monitor: cannot send %s "
		    "to the worker (pid %d): %s%s", mon_type_name(a->type),
		    (int)m->worker, strerror(errno), errno == EAGAIN ?
		    ": it does not read, killing it" : "");
		if (errno == EAGAIN && m->worker_status < 0)
			monitor_kill_worker(m, SIGKILL);
		return -1;
	}
	return 0;
}

static void
monitor_result(struct monitor *m, uint32_t seq, int status, const char *text)
{
	struct mon_msg a = { .type = MON_RESULT, .seq = seq };
	a.u.result.status = status;
	/* A longer reason (the kernel's, nftables') is cut to the record's. */
	snprintf(a.u.result.text, sizeof(a.u.result.text), "%.*s",
	    (int)sizeof(a.u.result.text) - 1, text);
	monitor_send(m, &a);
}

static int
monitor_sockopt(int fd, int opt)
{
	int v = -1;
	socklen_t len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, opt, &v, &len) < 0)
		return -1;
	return v;
}

/* The control connection: a connected TCP/IPv4 socket on the PPTP port;
 * the client's and our address are read from it. */
static const char *
monitor_conn_check(int fd, struct in_addr *client, struct in_addr *self)
{
	struct sockaddr_in peer, local;
	socklen_t pl = sizeof(peer), ll = sizeof(local);

	if (monitor_sockopt(fd, SO_DOMAIN) != AF_INET ||
	    monitor_sockopt(fd, SO_TYPE) != SOCK_STREAM ||
	    monitor_sockopt(fd, SO_PROTOCOL) != IPPROTO_TCP ||
	    monitor_sockopt(fd, SO_ACCEPTCONN) != 0)
		return "the connection is not a TCP/IPv4 connection";
	if (getpeername(fd, (struct sockaddr *)&peer, &pl) < 0 ||
	    getsockname(fd, (struct sockaddr *)&local, &ll) < 0)
		return "the connection has no peer";
	if (ntohs(local.sin_port) != PPTP_PORT)
		return "the connection is not on the PPTP port";
	*client = peer.sin_addr;
	*self = local.sin_addr;
	return NULL;
}

/* Why CALL_START may not be done; NULL when it may. Fills *in. */
static const char *
monitor_start_check(struct monitor *m, const struct mon_msg *r,
    struct pppd_args *in, int *report)
{
	const struct conf *conf = m->conf;
	uint16_t flags = r->u.call_start.flags;
	unsigned i = 1;
	const char *why;

	memset(in, 0, sizeof(*in));
	*report = -1;
	if ((why = monitor_conn_check(r->fds[0], &in->client, &in->self)) != NULL)
		return why;
	in->reports = !!(flags & MON_CALL_REPORTS);
	in->kernel = !!(flags & MON_CALL_KERNEL);
	in->ipv6 = !!(flags & MON_CALL_IPV6);
	if (in->reports != !conf->noplugin)
		return "report channel not as configured (noplugin)";
	if (in->reports) {
		/* pppd's end, then the worker's, which the monitor only holds */
		*report = r->fds[i++];
		for (unsigned end = i - 1; end <= i; end++)
			if (monitor_sockopt(r->fds[end], SO_DOMAIN) != AF_UNIX ||
			    monitor_sockopt(r->fds[end], SO_TYPE) != SOCK_SEQPACKET)
				return "the report channel is not a unix "
				    "seqpacket socket";
	}
	if (in->kernel != m->kernel_path)
		return in->kernel ? "the kernel path is not this server's" :
		    "the engine path is not this server's";
	if (in->ipv6 && conf->ipv6_pool == NULL)
		return "IPv6 is not configured";
	in->call_id = r->u.call_start.call_id;
	in->peer_call_id = r->u.call_start.peer_call_id;
	in->local.s_addr = r->u.call_start.local_ip;
	in->remote.s_addr = r->u.call_start.remote_ip;
	if (monitor_call(m, in->call_id) != NULL)
		return "the Call ID is a live call's";
	if ((m->pool == NULL) != (in->remote.s_addr == INADDR_ANY))
		return m->pool == NULL ? "an address without a pool" :
		    "no address from the pool";
	/* The local address is the pool's pair of the remote one: pppd puts
	 * it on the ppp interface, so it must never be one the worker chose. */
	struct in_addr local = { INADDR_ANY };
	if (m->pool != NULL && pool_local(m->pool, in->remote, &local) < 0)
		return "the remote address is not the pool's, or is taken";
	if (in->local.s_addr != local.s_addr)
		return "the local address is not the pool's pair of the remote";
	if (m->pool != NULL && pool_take(m->pool, in->remote) < 0)
		return "the remote address is not the pool's, or is taken";
	return NULL;
}

/* The kernel path: the call's channel, bound and connected from the
 * connection's addresses and the Call IDs (checked), and its entry in the
 * GRE guard, both before pppd runs (datapath_kernel_open says why). The
 * socket, or -1 with *why set. */
static int
monitor_kernel_open(struct monitor *m, const struct pppd_args *in,
    int *guarded, const char **why)
{
	static char err[160];   /* the caller logs it at once */
	int sock = datapath_kernel_open(in->call_id, in->self, in->peer_call_id,
	    in->client, err, sizeof(err));

	*guarded = 0;
	if (sock < 0) {
		*why = err;
		return -1;
	}
	/* A call the guard cannot take is refused, not left unguarded. */
	if (m->guard != NULL) {
		if (kguard_add(m->guard, in->client, in->call_id, err,
		    sizeof(err)) < 0) {
			close(sock);
			*why = err;
			return -1;
		}
		*guarded = 1;
	}
	return sock;
}

/* The call leaves the GRE guard; what the guard did to its packets is
 * logged if it did anything (a dropped or renumbered packet is a
 * forger's, or a fault on the path). */
static void
monitor_unguard(struct monitor *m, const struct mcall *c, int report)
{
	struct kguard_stats st;
	if (!c->guarded)
		return;
	kguard_del(m->guard, c->client, c->id, &st);
	if (report)
		kguard_stats_log(&st, c->id, c->peer_id, c->client);
}

/* Close a held copy (-1: none). */
static void
monitor_unhold(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Close every copy held for call `c`. */
static void
monitor_release(struct mcall *c)
{
	monitor_unhold(&c->pty);
	monitor_unhold(&c->conn);
	monitor_unhold(&c->report);
}

/* Copies of the call's connection and of the worker's report end (the
 * record's own are closed with it); 0, or -1 with *why set. */
static int
monitor_hold(struct mcall *c, const struct mon_msg *r, const char **why)
{
	c->conn = fcntl(r->fds[0], F_DUPFD_CLOEXEC, 0);
	if (c->conn >= 0 && r->nfds == 3)
		c->report = fcntl(r->fds[2], F_DUPFD_CLOEXEC, 0);
	if (c->conn < 0 || (r->nfds == 3 && c->report < 0)) {
		monitor_release(c);
		*why = "out of descriptors";
		return -1;
	}
	return 0;
}

/* Room for one more call; -1 (nothing changed) when there is none. */
static int
monitor_grow(struct monitor *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct mcall *c = reallocarray(m->calls, cap, sizeof(*c));
	if (c == NULL)
		return -1;
	m->calls = c;
	m->cap = cap;
	return 0;
}

static void
monitor_call_start(struct monitor *m, struct mon_msg *r)
{
	struct mon_msg a = { .type = MON_CALL_STARTED, .seq = r->seq };
	struct pppd_args in;
	const char *why;
	int report, ksock = -1, pty = -1, guarded = 0;
	pid_t pid = -1;
	int refused = 0;
	struct mcall c = { .conn = -1, .report = -1, .pty = -1 };

	if (m->draining)
		return;   /* its worker is dead: no pppd for nobody */
	if ((why = monitor_start_check(m, r, &in, &report)) != NULL)
		refused = 1;
	else if (m->ncalls == m->cap && monitor_grow(m) < 0)
		why = "out of memory";
	else if (monitor_hold(&c, r, &why) < 0)
		;
	else if (!in.kernel || (ksock = monitor_kernel_open(m, &in, &guarded,
	    &why)) >= 0)
		pid = pppd_start(m->conf, &in, ksock, report, &pty, &why);
	if (ksock >= 0)
		close(ksock);   /* pppd's now, or nobody's */
	c.id = in.call_id;
	c.peer_id = in.peer_call_id;
	c.pid = pid;
	c.remote = in.remote;
	c.client = in.client;
	c.local = in.local;
	c.guarded = guarded;
	c.flags = r->u.call_start.flags & MON_CALL_FLAGS;
	c.handed = 1;
	if (pid < 0) {
		monitor_release(&c);
		monitor_unguard(m, &c, 0);
		if (!refused && m->pool != NULL)
			pool_release(m->pool, in.remote);
		if (refused)
			log_rl(&m->rl, monitor_now(), LOG_WARNING, "monitor: "
			    "call-start from the worker (pid %d) for call %u "
			    "refused: %s", (int)m->worker,
			    r->u.call_start.call_id, why);
		struct mon_msg n = { .type = MON_CALL_REFUSED, .seq = r->seq };
		n.u.call_refused.result = PPTP_OCRP_GENERAL_ERROR;
		n.u.call_refused.error = PPTP_ERR_NO_RESOURCE;
		snprintf(n.u.call_refused.reason, MON_TEXT, "%s", why);
		monitor_send(m, &n);
		return;
	}
	c.pty = pty;   /* the worker gets a copy; this one is held */
	m->calls[m->ncalls++] = c;
	a.u.call_started.call_id = in.call_id;
	a.u.call_started.flags = r->u.call_start.flags & MON_CALL_KERNEL;
	a.u.call_started.pid = (uint32_t)pid;
	a.u.call_started.local_ip = in.local.s_addr;
	a.u.call_started.remote_ip = in.remote.s_addr;
	if (pty >= 0)
		a.fds[a.nfds++] = pty;
	monitor_send(m, &a);
}

static uint64_t monitor_grace_ms(const struct monitor *m);

/* Call `c` is no worker's: it ends here. Its copies close (the line
 * hangs up, the client's connection ends unless another call holds it),
 * SIGTERM now, SIGKILL at its grace's end (monitor_grace_over); no
 * CHILD_EXIT at its reap. An earlier orphan keeps its grace. */
static void
monitor_orphan(struct monitor *m, struct mcall *c, uint64_t kill_at)
{
	monitor_release(c);
	if (!c->orphan)
		c->kill_at = kill_at;
	c->orphan = 1;
	kill(c->pid, SIGTERM);
	if (m->grace_end == 0 || c->kill_at < m->grace_end)
		m->grace_end = c->kill_at;
}

static void
monitor_call_hangup(struct monitor *m, const struct mon_msg *r)
{
	struct mcall *c = monitor_call(m, r->u.call_hangup.call_id);
	if (c == NULL) {
		/* Reaped a moment ago (its CHILD_EXIT is on its way), or never
		 * ours: nothing is signalled. */
		monitor_result(m, r->seq, MON_ERR_REFUSED, "no such call");
		return;
	}
	c->hung = 1;
	if (r->u.call_hangup.how == MON_HANGUP_DROP)
		monitor_orphan(m, c, monitor_now() + monitor_grace_ms(m));
	/* pppd sees its line hang up only at the last close of the master */
	else if (r->u.call_hangup.how == MON_HANGUP_CUT)
		monitor_unhold(&c->pty);
	if (r->u.call_hangup.how != MON_HANGUP_DROP)
		kill(c->pid, r->u.call_hangup.how == MON_HANGUP_KILL ? SIGKILL :
		    SIGTERM);
	monitor_result(m, r->seq, MON_OK, "");
}

/* The table of tcp-mss-adjust, made as the configuration says (as the
 * server did at startup: `clamping` says it could). */
static void
monitor_mss_open(struct monitor *m, int clamping)
{
	const struct conf *conf = m->conf;
	char why[256];

	m->mss_setting = conf->tcp_mss_adjust;
	if (!clamping || conf->tcp_mss_adjust == CONF_MSS_OFF || conf->noplugin)
		return;
	m->mss = mss_open(conf->tcp_mss_adjust == CONF_MSS_FROM_MTU ? 0 :
	    conf->tcp_mss_adjust, why, sizeof(why));
	if (m->mss == NULL)
		log_msg(LOG_WARNING, "monitor: TCP MSS clamping off: cannot make "
		    "nftables table inet %s: %s", MSS_TABLE, why);
	else
		log_msg(LOG_INFO, "monitor: TCP MSS clamping on: nftables table "
		    "inet %s", MSS_TABLE);
}

/* The netlink socket for per-user rates (the server opened one at
 * startup: `shaping` says it could). */
static void
monitor_shaper_open(struct monitor *m, int shaping)
{
	char why[128];
	if (shaping && (m->shaper = shaper_open(why, sizeof(why))) == NULL)
		log_msg(LOG_WARNING, "monitor: rate limits cannot be set: %s", why);
}

/* A reload changed tcp-mss-adjust: the table is made anew and the
 * sessions' interfaces put back in it by the monitor itself, whatever
 * the worker learnt; the worker then asks again for each, to learn the
 * new MSS (server_monitor_reloaded). */
static void
monitor_mss_reload(struct monitor *m)
{
	unsigned mss4;
	char why[256];

	if (m->conf->tcp_mss_adjust == m->mss_setting)
		return;
	mss_close(m->mss);
	m->mss = NULL;
	monitor_mss_open(m, 1);
	for (size_t i = 0; i < m->ncalls; i++) {
		struct mcall *c = &m->calls[i];
		if (c->clamped && (m->mss == NULL || mss_add(m->mss, c->ifname,
		    c->id, &mss4, why, sizeof(why)) < 0))
			c->clamped = 0;
	}
}

/* The ppp unit pppd `pid` runs: the one of its /dev/ppp descriptors
 * that is a unit, copied here by pidfd_getfd (pppd is our child; we are
 * root). -1 when it has none (yet), or it is gone. */
static int
monitor_ppp_unit(pid_t pid)
{
	char dir[32], path[300], link[16];
	int unit = -1, pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct dirent *e;
	DIR *d;

	if (pfd < 0)
		return -1;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	if ((d = opendir(dir)) == NULL) {
		close(pfd);
		return -1;
	}
	while (unit < 0 && (e = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		ssize_t n = readlink(path, link, sizeof(link));
		if (n != 8 || memcmp(link, "/dev/ppp", 8) != 0)
			continue;
		int fd = (int)syscall(SYS_pidfd_getfd, pfd, atoi(e->d_name), 0);
		if (fd < 0)
			continue;
		/* a channel's descriptor answers EINVAL: only a unit's has one */
		if (ioctl(fd, PPPIOCGUNIT, &unit) < 0)
			unit = -1;
		close(fd);
	}
	closedir(d);
	close(pfd);
	return unit;
}

/* `ifname` is call c's: the name pppd gives its unit (pppN; an `ifname`
 * option in the admin's options is not followed: refused, said why). A
 * worker that could name another interface could limit or clamp a PPPoE
 * uplink or another session's. */
static int
monitor_is_calls(const struct mcall *c, const char *ifname)
{
	char want[IF_NAMESIZE];
	int unit = monitor_ppp_unit(c->pid);

	if (unit < 0)
		return 0;
	snprintf(want, sizeof(want), "ppp%d", unit);
	return strcmp(want, ifname) == 0;
}


/* The two numbers for one state: the worker's record names notify.h's. */
_Static_assert(MON_NOTIFY_STATUS == NOTIFY_STATUS &&
    MON_NOTIFY_READY == NOTIFY_READY &&
    MON_NOTIFY_RELOADING == NOTIFY_RELOADING &&
    MON_NOTIFY_STOPPING == NOTIFY_STOPPING, "one numbering of states");

/* NOTIFY: what the worker would tell systemd, worded and sent by the
 * monitor, the unit's main pid. Only numbers come from the worker, and
 * at most MONITOR_NOTIFY_BURST messages a NOTIFY_STATUS_MS (a worker
 * sends two or three at a reload): more are answered and dropped. */
static void
monitor_notify(struct monitor *m, const struct mon_msg *r)
{
	char msg[NOTIFY_MSG_LEN];
	uint32_t dropped;
	int rc;

	if (getenv("NOTIFY_SOCKET") != NULL &&
	    ratelimit_allow(&m->rl_notify, monitor_now(), &dropped)) {
		notify_message(msg, sizeof(msg), (enum notify_state)r->u.notify.state,
		    r->u.notify.sessions, r->u.notify.ctrls);
		if ((rc = sd_notify(0, msg)) < 0)
			log_rl(&m->rl, monitor_now(), LOG_WARNING, "monitor: "
			    "sd_notify: %s", strerror(-rc));
	}
	monitor_result(m, r->seq, MON_OK, "");
}

/* A request about a call's interface refused: answered, logged. */
static void
monitor_iface_refuse(struct monitor *m, const struct mon_msg *r,
    uint16_t id, const char *why)
{
	log_rl(&m->rl, monitor_now(), LOG_WARNING, "monitor: %s from the "
	    "worker (pid %d) for call %u refused: %s", mon_type_name(r->type),
	    (int)m->worker, id, why);
	monitor_result(m, r->seq, MON_ERR_REFUSED, why);
}

/* The live call a CALL_IFACE, CALL_RATE or CALL_ROUTE6 names, when
 * `name` is its ppp interface; else NULL, refused. */
static struct mcall *
monitor_iface_call(struct monitor *m, const struct mon_msg *r, uint16_t id,
    const char *name)
{
	struct mcall *c = monitor_call(m, id);

	if (c == NULL)   /* reaped a moment ago (its CHILD_EXIT is on its
	                  * way), as a hang-up may be: answered, not logged */
		monitor_result(m, r->seq, MON_ERR_REFUSED, "no such call");
	else if (!mss_ifname_ok(name) || !pppif_is_ppp(-1, name)) {
		monitor_iface_refuse(m, r, id, "not a ppp interface");
		c = NULL;
	} else if (!monitor_is_calls(c, name)) {
		monitor_iface_refuse(m, r, id, "not the call's ppp interface");
		c = NULL;
	}
	return c;
}

/* CALL_IFACE: the call's interface into the clamping table (its former
 * one out). Answered CALL_CLAMPED, or RESULT with why not. */
static void
monitor_call_iface(struct monitor *m, const struct mon_msg *r)
{
	const char *name = r->u.call_iface.ifname;
	struct mcall *c = monitor_iface_call(m, r, r->u.call_iface.call_id, name);
	struct mon_msg a = { .type = MON_CALL_CLAMPED, .seq = r->seq };
	char why[256];
	unsigned mss4 = 0;

	if (c == NULL)
		return;
	if (m->mss == NULL) {
		monitor_result(m, r->seq, MON_ERR_OFF, "TCP MSS clamping is off");
		return;
	}
	if (c->clamped && strcmp(c->ifname, name) != 0) {
		mss_del(m->mss, c->ifname, c->id);
		c->clamped = 0;
	}
	/* The same name again: its element is replaced, or kept on failure,
	 * and still removed at the reap. */
	if (mss_add(m->mss, name, c->id, &mss4, why, sizeof(why)) < 0) {
		monitor_result(m, r->seq, MON_ERR_FAILED, why);
		return;
	}
	snprintf(c->ifname, sizeof(c->ifname), "%s", name);
	c->clamped = 1;
	a.u.call_clamped.call_id = c->id;
	a.u.call_clamped.mss = (uint16_t)mss4;
	monitor_send(m, &a);
}

/* CALL_RATE: the user's rate on the call's interface (a change replaces
 * it, 0/0 takes it off; an interface the call no longer names is freed
 * of it first). Answered RESULT. */
static void
monitor_call_rate(struct monitor *m, const struct mon_msg *r)
{
	const char *name = r->u.call_rate.ifname;
	uint64_t down = r->u.call_rate.down, up = r->u.call_rate.up;
	struct mcall *c;
	char why[160];
	unsigned ix;

	/* The numbers first: no interface is looked at for a rate refused */
	if (!shaper_rate_ok(down) || !shaper_rate_ok(up)) {
		monitor_iface_refuse(m, r, r->u.call_rate.call_id,
		    "a rate out of bounds");
		return;
	}
	if ((c = monitor_iface_call(m, r, r->u.call_rate.call_id, name)) == NULL)
		return;
	if (m->shaper == NULL) {
		monitor_result(m, r->seq, MON_ERR_OFF, "no netlink socket for "
		    "traffic control");
		return;
	}
	ix = if_nametoindex(name);
	if (c->shaped != 0 && c->shaped != ix) {
		shaper_clear(m->shaper, c->shaped);
		c->shaped = 0;
	}
	if ((ix = shaper_set(m->shaper, name, down, up, why, sizeof(why))) == 0) {
		monitor_result(m, r->seq, MON_ERR_FAILED, why);
		return;
	}
	c->shaped = down != 0 || up != 0 ? ix : 0;
	monitor_result(m, r->seq, MON_OK, "");
}

/* A route is a claim on traffic: a /64 of the pool, or of the prefixes
 * the admin gave RADIUS (prefix6.h), and no other live call's. NULL, or
 * why not. */
static const char *
monitor_prefix6_check(struct monitor *m, uint16_t id, const struct in6_addr *p)
{
	if (!conf_prefix6_routable(m->conf, p))
		return prefix6_is_special(p) ? "a multicast, link-local or "
		    "loopback /64" : "a /64 in neither ipv6-prefix-pool nor "
		    "ipv6-radius-prefixes";
	for (size_t i = 0; i < m->ncalls; i++)
		if (m->calls[i].id != id && m->calls[i].routed6 != 0 &&
		    memcmp(&m->calls[i].prefix6, p, sizeof(*p)) == 0)
			return "another call's /64";
	return NULL;
}

/* The call's route away (IPV6CP down, a new one, the reap). Gone with
 * its interface already is not worth a line. */
static void
monitor_unroute6(struct monitor *m, struct mcall *c)
{
	char a[INET6_ADDRSTRLEN];

	if (c->routed6 == 0)
		return;
	if (route6_del(m->route6, c->routed6, &c->prefix6) < 0 &&
	    errno != ESRCH && errno != ENODEV)
		log_rl(&m->rl, monitor_now(), LOG_WARNING, "monitor: call %u: "
		    "deleting the route to %s/64: %s", c->id, inet_ntop(AF_INET6,
		    &c->prefix6, a, sizeof(a)), strerror(errno));
	c->routed6 = 0;
}

/* CALL_ROUTE6: the call's /64 routed to its own ppp interface, or its
 * route taken away. Answered RESULT. */
static void
monitor_call_route6(struct monitor *m, const struct mon_msg *r)
{
	const char *name = r->u.call_route6.ifname, *why;
	uint16_t id = r->u.call_route6.call_id;
	struct in6_addr p;
	struct mcall *c;
	char err[128];

	if (r->u.call_route6.op == MON_ROUTE6_DEL) {
		if ((c = monitor_call(m, id)) != NULL)
			monitor_unroute6(m, c);
		monitor_result(m, r->seq, c != NULL ? MON_OK : MON_ERR_REFUSED,
		    c != NULL ? "" : "no such call");
		return;
	}
	/* The prefix first: no interface is looked at for a /64 refused */
	memcpy(p.s6_addr, r->u.call_route6.prefix, sizeof(p.s6_addr));
	if ((why = monitor_prefix6_check(m, id, &p)) != NULL) {
		monitor_iface_refuse(m, r, id, why);
		return;
	}
	if ((c = monitor_iface_call(m, r, id, name)) == NULL)
		return;
	if (m->route6 == NULL && (m->route6 = route6_open(err,
	    sizeof(err))) == NULL) {
		monitor_result(m, r->seq, MON_ERR_OFF, err);
		return;
	}
	monitor_unroute6(m, c);
	unsigned ix = if_nametoindex(name);
	if (ix == 0 || route6_add(m->route6, ix, &p) < 0) {
		snprintf(err, sizeof(err), "route to %s: %s", name,
		    route6_strerror(errno));
		monitor_result(m, r->seq, MON_ERR_FAILED, err);
		return;
	}
	c->routed6 = ix;
	c->prefix6 = p;
	monitor_result(m, r->seq, MON_OK, "");
}

/* CALL_ADDR: RADIUS gave the call's peer another address of the pool
 * (pppd's radius.so set it): the reservation moves, so that the address
 * the call left can start another call and the one it took cannot. An
 * address not the pool's, or another call's, is refused. */
static void
monitor_call_addr(struct monitor *m, const struct mon_msg *r)
{
	struct mcall *c = monitor_call(m, r->u.call_addr.call_id);
	struct in_addr a = { r->u.call_addr.remote_ip };

	if (c == NULL) {
		monitor_result(m, r->seq, MON_ERR_REFUSED, "no such call");
		return;
	}
	if (m->pool == NULL || pool_take(m->pool, a) < 0) {
		monitor_iface_refuse(m, r, c->id, "the address is not the pool's, "
		    "or is taken");
		return;
	}
	if (c->remote.s_addr != INADDR_ANY)
		pool_release(m->pool, c->remote);
	c->remote = a;
	monitor_result(m, r->seq, MON_OK, "");
}

/* A reason for RESULT's text: it may quote a file's bytes, and the
 * record takes printable ASCII only; one too long for it ends in "...". */
static const char *
monitor_text(char text[MON_TEXT], const char *reason)
{
	return str_clean(text, MON_TEXT, reason, strlen(reason),
	    MON_TEXT - sizeof(STRCLEAN_MORE));
}

/* How long a worker told to leave for an upgrade has to exit. */
#define MONITOR_UPGRADE_MS  5000

/* ADMIN upgrade: the installed binary is asked whether it can take over;
 * if so the worker is told (RESULT OK: it answers pptpctl and exits) and
 * the monitor re-executes once it has gone (monitor_upgrade). */
static void
monitor_admin_upgrade(struct monitor *m, const struct mon_msg *r)
{
	char err[MON_TEXT] = "", text[MON_TEXT];

	if (m->upgrade_check == NULL)
		snprintf(err, sizeof(err), "no upgrade in this mode");
	else if (m->stopping)
		snprintf(err, sizeof(err), "pptpd is stopping");
	else if (m->upgrading)
		snprintf(err, sizeof(err), "an upgrade is under way");
	else if (m->upgrade_check(m->reload_arg, err, sizeof(err)) == 0) {
		log_msg(LOG_NOTICE, "monitor: upgrade: the worker (pid %d) "
		    "leaves, %zu sessions are handed over", (int)m->worker,
		    m->ncalls);
		m->upgrading = 1;
		m->upgrade_at = monitor_now() + MONITOR_UPGRADE_MS;
		monitor_result(m, r->seq, MON_OK, "");
		return;
	}
	log_msg(LOG_WARNING, "monitor: upgrade refused: %s", err);
	monitor_result(m, r->seq, MON_ERR_REFUSED, monitor_text(text, err));
}

static void
monitor_admin(struct monitor *m, const struct mon_msg *r)
{
	char err[MON_TEXT] = "", text[MON_TEXT];
	if (r->u.admin.what == MON_ADMIN_UPGRADE) {
		monitor_admin_upgrade(m, r);
		return;
	}
	if (r->u.admin.what != MON_ADMIN_RELOAD) {
		monitor_result(m, r->seq, MON_ERR_REFUSED, "not in this version");
		return;
	}
	if (m->reload(m->reload_arg, err, sizeof(err)) < 0) {
		/* The worker logs it, with its own refusal. */
		monitor_result(m, r->seq, MON_ERR_CONF, monitor_text(text, err));
		return;
	}
	monitor_pool_build(m);
	monitor_mss_reload(m);
	monitor_result(m, r->seq, MON_OK, "");
}

/* The paths the worker can be sent: FILE's field holds them. */
static int
monitor_files_sendable(const struct fileset *fs)
{
	size_t n = fileset_count(fs);

	if (n > MON_FILES_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!mon_path_ok(fileset_path(fs, i)))
			return 0;
	return 1;
}

/* RELOAD_FILES: read the files as a reload does, through a recording set,
 * and hand the worker each one that was opened (FILE), then the outcome
 * (RESULT). The worker parses them again: the monitor's read is only
 * what tells it which files a reload reads. */
static void
monitor_reload_files(struct monitor *m, const struct mon_msg *r)
{
	struct fileset *fs = fileset_new(FILESET_RECORD);
	char err[MON_TEXT] = "", text[MON_TEXT];
	int status = MON_ERR_FAILED;

	if (fs == NULL)
		snprintf(err, sizeof(err), "out of memory");
	else if (m->files(m->reload_arg, fs, err, sizeof(err)) < 0)
		status = MON_ERR_CONF;   /* the worker logs it, with its refusal */
	else if (!monitor_files_sendable(fs))
		snprintf(err, sizeof(err), "a file's path is not absolute "
		    "printable ASCII under %d bytes, or more than %d files: "
		    "reloading needs a restart", MON_PATH, MON_FILES_MAX);
	else
		status = MON_OK;
	for (size_t i = 0; status == MON_OK && i < fileset_count(fs); i++) {
		struct mon_msg f = { .type = MON_FILE, .seq = r->seq, .nfds = 1 };
		f.u.file.index = (uint16_t)i;
		f.u.file.count = (uint16_t)fileset_count(fs);
		snprintf(f.u.file.path, sizeof(f.u.file.path), "%s",
		    fileset_path(fs, i));
		f.fds[0] = fileset_fd(fs, i);
		if (monitor_send(m, &f) < 0) {
			snprintf(err, sizeof(err), "the files could not be sent");
			status = MON_ERR_FAILED;
		}
	}
	fileset_free(fs);
	monitor_result(m, r->seq, status, monitor_text(text, err));
}

/* The hand-back is the one burst of records the monitor sends: a unix
 * socket's send buffer holds about 200 of them, fewer than a server's
 * calls, and the monitor's socket does not block (a worker that does not
 * read is killed, monitor_send). The new worker reads them one by one as
 * they come, before anything else (monlink_resumes), so for the burst the
 * socket blocks, for at most MONITOR_HANDBACK_S per record. `on`: the
 * burst begins (1) or is over (0). */
#define MONITOR_HANDBACK_S  5
static void
monitor_burst(struct monitor *m, int on)
{
	struct timeval tv = { on ? MONITOR_HANDBACK_S : 0, 0 };
	int fl = fcntl(m->sock, F_GETFL);

	setsockopt(m->sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	fcntl(m->sock, F_SETFL, on ? fl & ~O_NONBLOCK : fl | O_NONBLOCK);
}

/* Call `c` handed back to a new worker (HELLO's `seq`): its IDs and
 * addresses with copies of what it lives on. */
static int
monitor_resume(struct monitor *m, struct mcall *c, uint32_t seq)
{
	struct mon_msg a = { .type = MON_CALL_RESUME, .seq = seq };

	a.u.call_resume.call_id = c->id;
	a.u.call_resume.peer_call_id = c->peer_id;
	a.u.call_resume.flags = c->flags & (c->report >= 0 ? MON_CALL_FLAGS :
	    (uint16_t)~MON_CALL_REPORTS);
	a.u.call_resume.pid = (uint32_t)c->pid;
	a.u.call_resume.local_ip = c->local.s_addr;
	a.u.call_resume.remote_ip = c->remote.s_addr;
	a.fds[a.nfds++] = c->conn;
	if (a.u.call_resume.flags & MON_CALL_REPORTS)
		a.fds[a.nfds++] = c->report;
	if (!(c->flags & MON_CALL_KERNEL))
		a.fds[a.nfds++] = c->pty;
	c->handed = 1;
	return monitor_send(m, &a);
}

/* The answer to HELLO: the generation, and the calls a worker that died
 * left, each handed back (privsep.md, "Step 3": the new worker checks
 * each against its journal). */
static void
monitor_welcome(struct monitor *m, uint32_t seq)
{
	struct mon_msg a = { .type = MON_WELCOME, .seq = seq };
	size_t n = 0;

	for (size_t i = 0; i < m->ncalls; i++)
		n += !m->calls[i].handed && !m->calls[i].orphan;
	a.u.welcome.generation = m->generation;
	a.u.welcome.calls = (uint32_t)n;
	monitor_burst(m, 1);
	int rc = monitor_send(m, &a);
	for (size_t i = 0; i < m->ncalls && rc == 0; i++) {
		struct mcall *c = &m->calls[i];
		if (!c->handed && !c->orphan)
			rc = monitor_resume(m, c, seq);
	}
	monitor_burst(m, 0);
	if (rc < 0)   /* a worker that does not read: a new one tries again */
		monitor_kill_worker(m, SIGKILL);
	else if (n > 0)
		log_msg(LOG_NOTICE, "monitor: %zu sessions handed to the worker "
		    "(pid %d)", n, (int)m->worker);
}

/* One record from the worker, answered. Returns mon_recv's: 0 may be
 * the end of the worker's socket. */
static int
monitor_request(struct monitor *m)
{
	struct mon_msg r;
	const char *why = NULL;
	int n = mon_recv(m->sock, &r, &why);

	if (n <= 0) {
		if (n < 0 && errno != EAGAIN)
			log_rl(&m->rl, monitor_now(), LOG_WARNING, "monitor: "
			    "record from the worker (pid %d) refused: %s",
			    (int)m->worker, why);
		return n;
	}
	if (!mon_from_worker(r.type)) {
		log_rl(&m->rl, monitor_now(), LOG_WARNING, "monitor: the worker "
		    "(pid %d) sent %s, which only the monitor sends: refused",
		    (int)m->worker, mon_type_name(r.type));
		monitor_result(m, r.seq, MON_ERR_REFUSED, "not a request");
	} else if (r.type == MON_HELLO) {
		monitor_welcome(m, r.seq);
	} else if (r.type == MON_CALL_START) {
		monitor_call_start(m, &r);
	} else if (r.type == MON_CALL_HANGUP) {
		monitor_call_hangup(m, &r);
	} else if (r.type == MON_CALL_IFACE) {
		monitor_call_iface(m, &r);
	} else if (r.type == MON_CALL_RATE) {
		monitor_call_rate(m, &r);
	} else if (r.type == MON_CALL_ROUTE6) {
		monitor_call_route6(m, &r);
	} else if (r.type == MON_CALL_ADDR) {
		monitor_call_addr(m, &r);
	} else if (r.type == MON_NOTIFY) {
		monitor_notify(m, &r);
	} else if (r.type == MON_ADMIN) {
		monitor_admin(m, &r);
	} else if (r.type == MON_RELOAD_FILES) {
		monitor_reload_files(m, &r);
	} else {
		monitor_result(m, r.seq, MON_ERR_REFUSED, "not in this version");
	}
	mon_close_fds(&r);
	return n;
}

static void
monitor_pppd_exited(struct monitor *m, pid_t pid, int status)
{
	for (size_t i = 0; i < m->ncalls; i++) {
		struct mcall *c = &m->calls[i];
		if (c->pid != pid)
			continue;
		if (m->pool != NULL && c->remote.s_addr != INADDR_ANY)
			pool_release(m->pool, c->remote);
		monitor_unguard(m, c, 1);   /* pppd, and its channel, are gone */
		if (c->clamped)
			mss_del(m->mss, c->ifname, c->id);
		if (c->shaped)
			shaper_clear(m->shaper, c->shaped);
		monitor_unroute6(m, c);
		monitor_release(c);
		/* One the running worker has not had back (it died or came
		 * in between) ends unannounced: the copies closed above were
		 * its connection's last. */
		if (m->worker_status < 0 && c->handed && !c->orphan) {
			struct mon_msg e = { .type = MON_CHILD_EXIT };
			e.u.child_exit.call_id = c->id;
			e.u.child_exit.pid = (uint32_t)pid;
			e.u.child_exit.status = status;
			monitor_send(m, &e);
		}
		/* in order: a new worker gets its calls back oldest first */
		memmove(c, c + 1, (size_t)(&m->calls[--m->ncalls] - c) *
		    sizeof(*c));
		return;
	}
}

static uint64_t
monitor_grace_ms(const struct monitor *m)
{
	uint64_t ms = (uint64_t)m->conf->stop_timeout * 1000;
	return ms > MONITOR_GRACE_MIN_MS ? ms : MONITOR_GRACE_MIN_MS;
}

/* May a new worker replace the one that exited with `status`? Not when
 * it stopped as told, and not more than MONITOR_RESPAWNS times in
 * MONITOR_RESPAWN_S seconds (a worker that dies at once would loop). */
static int
monitor_may_respawn(struct monitor *m, int status)
{
	uint64_t now = monitor_now(), *oldest = &m->respawned[m->generation %
	    MONITOR_RESPAWNS];

	if (m->respawn == NULL || m->stopping ||
	    (WIFEXITED(status) && WEXITSTATUS(status) == 0))
		return 0;
	if (*oldest != 0 && now - *oldest < MONITOR_RESPAWN_S * 1000ULL) {
		log_msg(LOG_ERR, "monitor: the worker died %d times in %d s: "
		    "stopping", MONITOR_RESPAWNS + 1, MONITOR_RESPAWN_S);
		return 0;
	}
	*oldest = now;
	return 1;
}

/* A new worker on a new socket; the old socket goes. 0, or -1 (logged). */
static int
monitor_respawn(struct monitor *m)
{
	int sock;
	pid_t w = m->respawn(m->reload_arg, &sock);

	if (w < 0) {
		log_msg(LOG_ERR, "monitor: cannot start a new worker: %s",
		    strerror(errno));
		return -1;
	}
	close(m->sock);
	m->sock = sock;
	fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
	m->worker = w;
	m->worker_status = -1;
	m->sock_gone = 0;
	m->generation++;
	log_msg(LOG_NOTICE, "monitor: the worker is pid %d (worker %u)",
	    (int)w, m->generation);
	return 0;
}

/* The sessions no worker will take over end (monitor_orphan): every
 * one, or with `hung_only` those the worker was hanging up. */
static void
monitor_orphan_all(struct monitor *m, int hung_only)
{
	uint64_t kill_at = monitor_now() + monitor_grace_ms(m);
	for (size_t i = 0; i < m->ncalls; i++)
		if (!hung_only || m->calls[i].hung)
			monitor_orphan(m, &m->calls[i], kill_at);
}

/* The sessions a worker that exited had: `n` (not ended yet). */
static size_t
monitor_live(const struct monitor *m)
{
	size_t n = 0;
	for (size_t i = 0; i < m->ncalls; i++)
		n += !m->calls[i].orphan;
	return n;
}

/* What a worker sent before it died is applied first (a hang-up it
 * asked for must not be lost: the call would be handed back as live);
 * its answers go nowhere. */
static void
monitor_drain(struct monitor *m)
{
	m->draining = 1;
	while (!m->sock_gone && monitor_request(m) > 0)
		;
	m->draining = 0;
}

/* The worker is gone: a new one starts if it may, or the installed
 * binary if it left for an upgrade (monitor_upgrade, from the loop), and
 * takes over what the old one left (handed back at its HELLO); what it
 * was hanging up ends here. If none may start, or none can, every
 * session ends. */
static void
monitor_worker_exited(struct monitor *m, int status)
{
	monitor_drain(m);
	m->worker_status = status;
	for (size_t i = 0; i < m->ncalls; i++)
		m->calls[i].handed = 0;
	if (m->upgrading && m->stopping) {
		/* told to stop meanwhile: a stop it is */
		log_msg(LOG_NOTICE, "monitor: upgrade given up: stopping");
		m->upgrading = 0;
	}
	if (m->upgrading) {
		monitor_orphan_all(m, 1);
		return;
	}
	size_t n = monitor_live(m);
	int respawn = monitor_may_respawn(m, status);
	const char *fate = respawn ? "a new worker takes over" : "ending";

	if (WIFSIGNALED(status))
		log_msg(LOG_ERR, "monitor: the worker (pid %d) was killed by "
		    "signal %d: %s %zu sessions", (int)m->worker,
		    WTERMSIG(status), fate, n);
	else if (WEXITSTATUS(status) != 0 || n > 0)
		log_msg(LOG_ERR, "monitor: the worker (pid %d) exited with "
		    "status %d: %s %zu sessions", (int)m->worker,
		    WEXITSTATUS(status), fate, n);
	/* A call the worker was hanging up is not handed back: it ends as
	 * it was going to (its line may be cut already). */
	monitor_orphan_all(m, respawn && monitor_respawn(m) == 0);
}

/* Call `c` as the next monitor gets it (handover.h). */
static void
monitor_handover_call(const struct monitor *m, const struct mcall *c,
    struct handover_call *h)
{
	struct shaper_link_state st;

	*h = (struct handover_call){ .id = c->id, .peer_id = c->peer_id,
		.flags = c->flags | (c->guarded ? HANDOVER_F_GUARDED : 0) |
		(c->orphan ? HANDOVER_F_ORPHAN : 0),
		.pid = c->pid, .local = c->local.s_addr,
		.remote = c->remote.s_addr, .client = c->client.s_addr,
		.conn = c->conn, .report = c->report, .pty = c->pty,
		.routed6 = c->routed6 };
	memcpy(h->prefix6, &c->prefix6, sizeof(h->prefix6));
	if (c->shaped && shaper_link_get(m->shaper, c->shaped, &st) == 0) {
		h->shaped = c->shaped;
		h->shaped_down = st.down;
		h->shaped_prio = st.prio;
		h->shaped_ingress_ours = st.ingress_ours;
	}
}

/* The worker has left for an upgrade: the installed binary takes over
 * this process (upgrade_exec). If that fails, a new worker of this
 * binary takes the sessions over instead. */
static void
monitor_upgrade(struct monitor *m)
{
	struct handover_call *h = calloc(m->ncalls ? m->ncalls : 1, sizeof(*h));

	m->upgrading = 0;
	if (h != NULL) {
		for (size_t i = 0; i < m->ncalls; i++)
			monitor_handover_call(m, &m->calls[i], &h[i]);
		m->upgrade_exec(m->reload_arg, h, m->ncalls, m->generation);
		log_msg(LOG_ERR, "monitor: upgrade failed: %s; this binary "
		    "carries on", strerror(errno));
		free(h);
	} else
		log_msg(LOG_ERR, "monitor: upgrade failed: out of memory");
	if (m->stopping || monitor_respawn(m) < 0)
		monitor_orphan_all(m, 0);
}

/* What the monitor before had set up in the kernel for call `h`, taken
 * over: its rate (the shaper's record of the link) and its /64's route,
 * which the worker routes again (the old route deleted first). */
static void
monitor_take_links(struct monitor *m, struct mcall *c,
    const struct handover_call *h)
{
	char why[128];
	const struct shaper_link_state st = { .down = h->shaped_down,
		.prio = h->shaped_prio, .ingress_ours = h->shaped_ingress_ours };

	if (h->shaped != 0 && m->shaper != NULL &&
	    shaper_link_adopt(m->shaper, h->shaped, &st) == 0)
		c->shaped = h->shaped;
	if (h->routed6 != 0 && (m->route6 != NULL ||
	    (m->route6 = route6_open(why, sizeof(why))) != NULL)) {
		c->routed6 = h->routed6;
		memcpy(&c->prefix6, h->prefix6, sizeof(c->prefix6));
	}
}

/* After an upgrade's execve: the calls the monitor before had, ours
 * again, for the first worker to take over; a call in the GRE guard is
 * put in this monitor's guard (a new one, empty). Clamping is made
 * again when the worker names each interface; the /64 routes stay in
 * the kernel (routed again by the worker). */
static void
monitor_take_over(struct monitor *m, const struct handover_call *h, size_t n)
{
	char why[256];
	uint64_t kill_at = monitor_now() + monitor_grace_ms(m);

	for (size_t i = 0; i < n; i++) {
		if (m->ncalls == m->cap && monitor_grow(m) < 0) {
			log_msg(LOG_CRIT, "monitor: out of memory taking over "
			    "call %u", h[i].id);
			continue;
		}
		struct mcall c = { .id = h[i].id, .peer_id = h[i].peer_id,
			.pid = h[i].pid, .local.s_addr = h[i].local,
			.remote.s_addr = h[i].remote, .client.s_addr = h[i].client,
			.conn = h[i].conn, .report = h[i].report, .pty = h[i].pty,
			.flags = (uint16_t)(h[i].flags & MON_CALL_FLAGS) };
		monitor_take_links(m, &c, &h[i]);
		if ((h[i].flags & HANDOVER_F_GUARDED) && m->guard != NULL) {
			if (kguard_add(m->guard, c.client, c.id, why,
			    sizeof(why)) == 0)
				c.guarded = 1;
			else
				log_msg(LOG_WARNING, "monitor: call %u not guarded "
				    "after the upgrade: %s", c.id, why);
		}
		m->calls[m->ncalls++] = c;
		if (h[i].flags & HANDOVER_F_ORPHAN)
			monitor_orphan(m, &m->calls[m->ncalls - 1], kill_at);
	}
	if (n > 0)
		log_msg(LOG_NOTICE, "monitor: %zu sessions taken over from the "
		    "monitor before the upgrade", n);
}

/* A grace is over: the orphans whose grace it was get SIGKILL (and
 * another grace, should SIGKILL not be enough before the reap); the next
 * deadline is the soonest left. */
static void
monitor_grace_over(struct monitor *m, uint64_t now)
{
	m->grace_end = 0;
	for (size_t i = 0; i < m->ncalls; i++) {
		struct mcall *c = &m->calls[i];
		if (!c->orphan)
			continue;
		if (c->kill_at <= now) {
			kill(c->pid, SIGKILL);
			c->kill_at = now + monitor_grace_ms(m);
		}
		if (m->grace_end == 0 || c->kill_at < m->grace_end)
			m->grace_end = c->kill_at;
	}
}

static void
monitor_reap(struct monitor *m)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == m->worker)
			monitor_worker_exited(m, status);
		else
			monitor_pppd_exited(m, pid, status);
	}
}

static void
monitor_signal(struct monitor *m)
{
	struct signalfd_siginfo si;
	while (read(m->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			monitor_reap(m);
			continue;
		}
		/* SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2: the worker's to
		 * act on (a reload or an upgrade reaches the monitor from it,
		 * as ADMIN). */
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			m->stopping = 1;
		if (m->worker_status < 0)
			monitor_kill_worker(m, (int)si.ssi_signo);
	}
}

static int
monitor_status(const struct monitor *m)
{
	if (WIFEXITED(m->worker_status))
		return WEXITSTATUS(m->worker_status);
	return 1;
}

/* The guard the server loaded (and unloaded) before the fork to choose
 * the data path is loaded again here, as the monitor's, before its first
 * request: no call is up before then. It goes when the monitor does. 0,
 * or -1 when it cannot be had: the data path was chosen for it. */
static int
monitor_guard_open(struct monitor *m, int guarded)
{
	char why[256];
	if (!guarded)
		return 0;
	if ((m->guard = kguard_open(why, sizeof(why))) == NULL) {
		log_msg(LOG_ERR, "monitor: GRE guard: %s; stopping", why);
		return -1;
	}
	return 0;
}

int
monitor_run(const struct monitor_env *env)
{
	static const int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1,
		SIGUSR2 };
	pid_t worker = env->worker;
	int sock = env->sock;
	struct monitor m = { .conf = env->conf, .worker = worker,
		.worker_uid = env->worker_uid, .worker_status = -1,
		.sock = sock, .reload = env->reload, .files = env->files,
		.reload_arg = env->reload_arg, .kernel_path = env->kernel_path,
		.respawn = env->respawn, .upgrade_check = env->upgrade_check,
		.upgrade_exec = env->upgrade_exec,
		.generation = env->generation + 1 };
	sigset_t set;

	ratelimit_init(&m.rl, LOG_RL_BURST, LOG_RL_PERIOD_MS);
	ratelimit_init(&m.rl_notify, MONITOR_NOTIFY_BURST, NOTIFY_STATUS_MS);
	fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	m.sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (m.sigfd < 0 || monitor_guard_open(&m, env->guarded) < 0) {
		/* Nothing is set up yet that outlives us (no guard, no call)
		 * but the calls an upgrade handed over: their pppd are told
		 * to end (nobody would reap them). */
		if (m.sigfd < 0)
			log_msg(LOG_ERR, "monitor: cannot set up signals: %s",
			    strerror(errno));
		for (size_t i = 0; i < env->nresumed; i++)
			kill(env->resumed[i].pid, SIGTERM);
		monitor_kill_worker(&m, SIGKILL);
		waitpid(worker, NULL, 0);
		if (m.sigfd >= 0)
			close(m.sigfd);
		close(sock);
		return 1;
	}
	monitor_mss_open(&m, env->clamping);
	monitor_shaper_open(&m, env->shaping);
	monitor_take_over(&m, env->resumed, env->nresumed);
	monitor_pool_build(&m);
	monitor_reap(&m);   /* a SIGCHLD before the signalfd */
	while (m.worker_status < 0 || m.ncalls > 0 || m.upgrading) {
		if (m.upgrading && m.worker_status >= 0)
			monitor_upgrade(&m);
		struct pollfd p[2] = { { m.sigfd, POLLIN, 0 },
			{ m.worker_status < 0 && !m.sock_gone ? m.sock : -1,
			  POLLIN, 0 } };
		int timeout = -1;
		uint64_t now = monitor_now();
		if (m.grace_end != 0) {
			if (now >= m.grace_end)
				monitor_grace_over(&m, now);
			timeout = m.grace_end != 0 ? (int)(m.grace_end - now) : -1;
		}
		if (m.upgrading && m.worker_status < 0) {
			if (now >= m.upgrade_at) {
				log_msg(LOG_WARNING, "monitor: upgrade: the worker "
				    "(pid %d) has not left: killing it",
				    (int)m.worker);
				monitor_kill_worker(&m, SIGKILL);
				m.upgrade_at = now + MONITOR_UPGRADE_MS;
			}
			int left = (int)(m.upgrade_at - now);
			timeout = timeout < 0 || left < timeout ? left : timeout;
		}
		if (poll(p, 2, timeout) < 0 && errno != EINTR)
			break;
		uint32_t generation = m.generation;
		if (p[0].revents & POLLIN)
			monitor_signal(&m);
		if (m.generation != generation)
			continue;   /* p[1] was the old worker's socket */
		/* What the worker sent before it hung up is answered first;
		 * then its exit follows (SIGCHLD). */
		if ((p[1].revents & POLLIN) && monitor_request(&m) != 0)
			continue;
		if (p[1].revents & (POLLHUP | POLLERR))
			m.sock_gone = 1;
	}
	close(m.sigfd);
	close(m.sock);
	kguard_close(m.guard);
	mss_close(m.mss);   /* after the calls: their elements go with it */
	shaper_close(m.shaper);
	route6_close(m.route6);
	pool_free(m.pool);
	free(m.calls);
	return monitor_status(&m);
}
