/* The worker's link to the monitor: see monlink.h. A request is sent and
 * its answer waited for (the monitor answers at once: it forks pppd or
 * sends a signal); an event that comes in meanwhile is kept and handed on
 * from the loop, never from inside the request. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pptpd/fileset.h"
#include "pptpd/log.h"
#include "pptpd/loop.h"
#include "pptpd/monlink.h"
#include "pptpd/pppd.h"
#include "proto/monitor.h"

/* The longest wait for an answer: the monitor forks, signals, or makes
 * one request to the kernel (nftables, traffic control, a BPF map), so a
 * monitor that takes this long is stuck, and the call is refused. */
#define MONLINK_ANSWER_MS  5000

struct exit_ev {
	uint16_t call_id;
	pid_t    pid;
	int      status;
};

struct monlink {
	struct loop          *loop;
	int                   sock;
	struct loop_fd        lf;
	struct loop_timer     later;     /* hands on the kept events */
	struct monlink_events ev;
	struct pppd_runner    runner;
	uint32_t              seq;
	struct exit_ev       *kept;
	size_t                nkept, cap;
	struct ratelimit      rl;
	int                   lost;      /* the monitor is gone or stuck */
	struct pppd_resumed  *resumed;   /* handed back at the hello */
	size_t                nresumed;
};

static void
monlink_keep(struct monlink *ml, const struct mon_msg *m)
{
	if (ml->nkept == ml->cap) {
		size_t cap = ml->cap ? ml->cap * 2 : 16;
		struct exit_ev *k = reallocarray(ml->kept, cap, sizeof(*k));
		if (k == NULL) {
			log_msg(LOG_CRIT, "worker: out of memory");
			exit(1);
		}
		ml->kept = k;
		ml->cap = cap;
	}
	ml->kept[ml->nkept++] = (struct exit_ev){ m->u.child_exit.call_id,
		(pid_t)m->u.child_exit.pid, m->u.child_exit.status };
}

static void
monlink_flush(void *arg)
{
	struct monlink *ml = arg;
	/* An exit handed on may make a request, which may keep more. */
	for (size_t i = 0; i < ml->nkept; i++)
		ml->ev.exited(ml->ev.arg, ml->kept[i].call_id, ml->kept[i].pid,
		    ml->kept[i].status);
	ml->nkept = 0;
}

/* The monitor is gone or stuck: the worker stops (once). */
static void
monlink_lost(struct monlink *ml)
{
	if (ml->lost)
		return;
	ml->lost = 1;
	if (ml->lf.fd >= 0)
		loop_fd_del(ml->loop, &ml->lf);
	ml->ev.gone(ml->ev.arg);
}

/* Wait for the next record that answers request `seq`, into *ans. 0, or
 * -1 with a reason. */
static int
monlink_answer(struct monlink *ml, uint32_t seq, struct mon_msg *ans,
    const char **reason)
{
	for (;;) {
		struct pollfd p = { ml->sock, POLLIN, 0 };
		int n = poll(&p, 1, MONLINK_ANSWER_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* Whatever it does with the request now, the worker
			 * no longer knows: stop, and let the monitor, which
			 * sees the worker go, end what it started. */
			*reason = "the monitor did not answer";
			monlink_lost(ml);
			return -1;
		}
		const char *why = NULL;
		if ((n = mon_recv(ml->sock, ans, &why)) < 0 && errno == EAGAIN)
			continue;
		if (n < 0) {
			*reason = why;
			return -1;
		}
		if (n == 0 && (p.revents & POLLHUP)) {
			*reason = "the monitor is gone";
			monlink_lost(ml);
			return -1;
		}
		if (n == 0)
			continue;   /* an empty datagram */
		if (ans->type == MON_CHILD_EXIT) {
			monlink_keep(ml, ans);
			loop_timer_set(ml->loop, &ml->later, 0, monlink_flush, ml);
			continue;
		}
		if (ans->seq == seq)
			return 0;
		log_rl(&ml->rl, loop_now(ml->loop), LOG_WARNING, "worker: %s "
		    "from the monitor answers no request: dropped",
		    mon_type_name(ans->type));
		mon_close_fds(ans);
	}
}

/* Send `req`, wait for its answer into *ans. 0, or -1 with a reason. */
static int
monlink_request(struct monlink *ml, struct mon_msg *req, struct mon_msg *ans,
    const char **reason)
{
	req->seq = ++ml->seq;
	if (ml->lost) {
		*reason = "the monitor is gone";
		return -1;
	}
	if (mon_send(ml->sock, req) < 0) {
		*reason = "cannot reach the monitor";
		return -1;
	}
	return monlink_answer(ml, req->seq, ans, reason);
}

static pid_t
monlink_start(void *arg, const struct pppd_args *in, int tcp, int sock,
    int report, int ours, int *pty, const char **reason)
{
	static char why[MON_TEXT + 32];   /* the caller logs it at once */
	struct monlink *ml = arg;
	struct mon_msg r = { .type = MON_CALL_START }, a;

	r.u.call_start.call_id = in->call_id;
	r.u.call_start.peer_call_id = in->peer_call_id;
	r.u.call_start.flags = (in->kernel ? MON_CALL_KERNEL : 0) |
	    (in->reports ? MON_CALL_REPORTS : 0) | (in->ipv6 ? MON_CALL_IPV6 : 0);
	r.u.call_start.local_ip = in->local.s_addr;
	r.u.call_start.remote_ip = in->remote.s_addr;
	r.fds[r.nfds++] = tcp;
	if (in->reports) {
		r.fds[r.nfds++] = report;
		r.fds[r.nfds++] = ours;
	}
	(void)sock;   /* the monitor opens the kernel path's channel itself */
	*pty = -1;
	/* The pty comes here: refused now, as in one process, rather than
	 * lost in a truncated answer. */
	if (pppd_fds_spare(tcp) < 0) {
		*reason = "out of descriptors";
		return -1;
	}
	if (monlink_request(ml, &r, &a, reason) < 0)
		return -1;
	if (a.type == MON_CALL_REFUSED) {
		snprintf(why, sizeof(why), "the monitor: %s",
		    a.u.call_refused.reason);
		*reason = why;
		return -1;
	}
	if (a.type != MON_CALL_STARTED ||
	    a.u.call_started.call_id != in->call_id ||
	    (int)a.nfds != (in->kernel ? 0 : 1)) {
		mon_close_fds(&a);
		*reason = "the monitor's answer is not a start of this call";
		return -1;
	}
	if (!in->kernel)
		*pty = a.fds[0];
	return (pid_t)a.u.call_started.pid;
}

/* CALL_HANGUP `how` (MON_HANGUP_*) for call `call_id`; a failure is
 * logged (the worker can do no more about it). */
static void
monlink_hangup(struct monlink *ml, uint16_t call_id, uint8_t how)
{
	struct mon_msg r = { .type = MON_CALL_HANGUP }, a;
	const char *why = NULL;

	r.u.call_hangup.call_id = call_id;
	r.u.call_hangup.how = how;
	if (monlink_request(ml, &r, &a, &why) < 0)
		log_rl(&ml->rl, loop_now(ml->loop), LOG_ERR, "worker: hang-up "
		    "of call %u: %s", call_id, why);
	else
		mon_close_fds(&a);
}

static void
monlink_signal(void *arg, uint16_t call_id, pid_t pid, int sig, int cut)
{
	(void)pid;   /* the monitor signals the pid it has for the call */
	monlink_hangup(arg, call_id, sig == SIGKILL ? MON_HANGUP_KILL :
	    cut ? MON_HANGUP_CUT : MON_HANGUP_CLEAN);
	/* A refusal is a pppd reaped a moment ago: its exit is on its way. */
}

/* A request about a call whose answer is `want` (RESULT: with MON_OK).
 * 0, or -1 with why set (the monitor's text for a refusal), or -2 with
 * why set when what it asks for is off at the monitor (MON_ERR_OFF). */
static void
monlink_drop(void *arg, uint16_t call_id)
{
	monlink_hangup(arg, call_id, MON_HANGUP_DROP);
}

static int
monlink_call_request(struct monlink *ml, struct mon_msg *r, struct mon_msg *a,
    enum mon_type want, char *why, size_t whylen)
{
	const char *reason = NULL;

	if (monlink_request(ml, r, a, &reason) < 0) {
		snprintf(why, whylen, "%s", reason);
		return -1;
	}
	if (a->type == want && (want != MON_RESULT || a->u.result.status == MON_OK))
		return 0;
	/* What failed is said as it is (the kernel's, nftables'); what the
	 * monitor refused, as its refusal. */
	if (a->type == MON_RESULT && (a->u.result.status == MON_ERR_FAILED ||
	    a->u.result.status == MON_ERR_OFF)) {
		snprintf(why, whylen, "%s", a->u.result.text);
		return a->u.result.status == MON_ERR_OFF ? -2 : -1;
	}
	snprintf(why, whylen, "the monitor refused it: %s",
	    a->type == MON_RESULT ? a->u.result.text : "no answer to the request");
	mon_close_fds(a);
	return -1;
}

static int
monlink_clamp(void *arg, uint16_t call_id, const char *ifname, unsigned *mss,
    char *why, size_t whylen)
{
	struct mon_msg r = { .type = MON_CALL_IFACE }, a;

	r.u.call_iface.call_id = call_id;
	snprintf(r.u.call_iface.ifname, sizeof(r.u.call_iface.ifname), "%s",
	    ifname);
	int rc = monlink_call_request(arg, &r, &a, MON_CALL_CLAMPED, why, whylen);
	if (rc < 0)
		return rc;
	if (a.u.call_clamped.call_id != call_id) {
		snprintf(why, whylen, "the monitor answered for another call");
		return -1;
	}
	*mss = a.u.call_clamped.mss;
	return 0;
}

static int
monlink_shape(void *arg, uint16_t call_id, const char *ifname, uint64_t down,
    uint64_t up, char *why, size_t whylen)
{
	struct mon_msg r = { .type = MON_CALL_RATE }, a;

	r.u.call_rate.call_id = call_id;
	r.u.call_rate.down = down;
	r.u.call_rate.up = up;
	snprintf(r.u.call_rate.ifname, sizeof(r.u.call_rate.ifname), "%s",
	    ifname);
	return monlink_call_request(arg, &r, &a, MON_RESULT, why, whylen);
}

static int
monlink_route6(void *arg, uint16_t call_id, const char *ifname,
    const struct in6_addr *prefix, char *why, size_t whylen)
{
	struct mon_msg r = { .type = MON_CALL_ROUTE6 }, a;

	_Static_assert(sizeof(prefix->s6_addr) == MON_PREFIX6, "a prefix's octets");
	r.u.call_route6.call_id = call_id;
	r.u.call_route6.op = prefix != NULL ? MON_ROUTE6_ADD : MON_ROUTE6_DEL;
	if (prefix != NULL) {
		memcpy(r.u.call_route6.prefix, prefix->s6_addr, MON_PREFIX6);
		snprintf(r.u.call_route6.ifname, sizeof(r.u.call_route6.ifname),
		    "%s", ifname);
	}
	return monlink_call_request(arg, &r, &a, MON_RESULT, why, whylen) < 0 ?
	    -1 : 0;
}

static int
monlink_readdr(void *arg, uint16_t call_id, struct in_addr remote, char *why,
    size_t whylen)
{
	struct mon_msg r = { .type = MON_CALL_ADDR }, a;

	r.u.call_addr.call_id = call_id;
	r.u.call_addr.remote_ip = remote.s_addr;
	return monlink_call_request(arg, &r, &a, MON_RESULT, why, whylen) < 0 ?
	    -1 : 0;
}

static void
monlink_ready(void *arg, uint32_t events)
{
	struct monlink *ml = arg;
	struct mon_msg m;
	const char *why = NULL;

	int n = mon_recv(ml->sock, &m, &why);
	/* A request made from an event handled before this one, in the same
	 * round of the loop, may have read what woke us: nothing is left. */
	if (n < 0 && errno == EAGAIN)
		return;
	if (n < 0) {
		log_rl(&ml->rl, loop_now(ml->loop), LOG_WARNING, "worker: record "
		    "from the monitor refused: %s", why);
		return;
	}
	if (n == 0) {
		if (events & (EPOLLHUP | EPOLLRDHUP))
			monlink_lost(ml);
		return;
	}
	if (m.type == MON_CHILD_EXIT)
		ml->ev.exited(ml->ev.arg, m.u.child_exit.call_id,
		    (pid_t)m.u.child_exit.pid, m.u.child_exit.status);
	else
		log_rl(&ml->rl, loop_now(ml->loop), LOG_WARNING, "worker: %s "
		    "from the monitor answers no request: dropped",
		    mon_type_name(m.type));
	mon_close_fds(&m);
}

/* CALL_RESUME `a` as a resumed call, its descriptors taken. */
static void
monlink_resumed(struct pppd_resumed *r, struct mon_msg *a)
{
	unsigned i = 0;

	*r = (struct pppd_resumed){ .call_id = a->u.call_resume.call_id,
		.peer_call_id = a->u.call_resume.peer_call_id,
		.kernel = !!(a->u.call_resume.flags & MON_CALL_KERNEL),
		.ipv6 = !!(a->u.call_resume.flags & MON_CALL_IPV6),
		.pid = (pid_t)a->u.call_resume.pid,
		.local.s_addr = a->u.call_resume.local_ip,
		.remote.s_addr = a->u.call_resume.remote_ip,
		.conn = -1, .report = -1, .pty = -1 };
	r->conn = a->fds[i++];
	if (a->u.call_resume.flags & MON_CALL_REPORTS)
		r->report = a->fds[i++];
	if (!r->kernel)
		r->pty = a->fds[i++];
	a->nfds = 0;
}

/* The `n` CALL_RESUME records that follow WELCOME (HELLO's `seq`). 0,
 * or -1 with *why set. */
static int
monlink_resumes(struct monlink *ml, uint32_t seq, uint32_t n,
    const char **why)
{
	struct mon_msg a;

	if (n == 0)
		return 0;
	if ((ml->resumed = calloc(n, sizeof(*ml->resumed))) == NULL) {
		*why = "out of memory for the sessions handed back";
		return -1;
	}
	while (ml->nresumed < n) {
		if (monlink_answer(ml, seq, &a, why) < 0)
			return -1;
		if (a.type != MON_CALL_RESUME) {
			mon_close_fds(&a);
			*why = "the monitor's sessions came short";
			return -1;
		}
		monlink_resumed(&ml->resumed[ml->nresumed++], &a);
	}
	return 0;
}

struct pppd_resumed *
monlink_take_resumed(struct monlink *ml, size_t *n)
{
	struct pppd_resumed *r = ml->resumed;
	*n = ml->nresumed;
	ml->resumed = NULL;
	ml->nresumed = 0;
	return r;
}

static void
monlink_ignore(void *arg)
{
	(void)arg;
}

struct monlink *
monlink_new(struct loop *loop, int sock, const struct monlink_events *ev,
    char *err, size_t errlen)
{
	struct monlink *ml = calloc(1, sizeof(*ml));
	struct mon_msg r = { .type = MON_HELLO }, a;
	const char *why = NULL;

	if (ml == NULL) {
		snprintf(err, errlen, "out of memory");
		close(sock);
		return NULL;
	}
	ml->loop = loop;
	ml->sock = sock;
	/* Never blocks: see monlink_ready. */
	fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
	ml->ev = *ev;
	ml->lf.fd = -1;
	ml->runner = (struct pppd_runner){ monlink_start, monlink_signal,
		monlink_clamp, monlink_shape, monlink_route6, monlink_readdr,
		monlink_drop, ml };
	ratelimit_init(&ml->rl, LOG_RL_BURST, LOG_RL_PERIOD_MS);
	ml->ev.gone = monlink_ignore;   /* no loop yet: the error says it */
	if (monlink_request(ml, &r, &a, &why) < 0 || a.type != MON_WELCOME) {
		snprintf(err, errlen, "no welcome from the monitor: %s",
		    why != NULL ? why : mon_type_name(a.type));
		if (why == NULL)
			mon_close_fds(&a);
		monlink_free(ml);
		return NULL;
	}
	if (monlink_resumes(ml, r.seq, a.u.welcome.calls, &why) < 0) {
		snprintf(err, errlen, "the sessions handed back: %s", why);
		monlink_free(ml);
		return NULL;
	}
	ml->ev.gone = ev->gone;
	if (loop_fd_add(loop, &ml->lf, sock, EPOLLIN, monlink_ready, ml) < 0) {
		snprintf(err, errlen, "cannot watch the monitor: %s",
		    strerror(errno));
		monlink_free(ml);
		return NULL;
	}
	return ml;
}

void
monlink_free(struct monlink *ml)
{
	if (ml == NULL)
		return;
	if (ml->lf.fd >= 0)
		loop_fd_del(ml->loop, &ml->lf);
	loop_timer_cancel(ml->loop, &ml->later);
	close(ml->sock);
	free(ml->kept);
	for (size_t i = 0; i < ml->nresumed; i++)
		pppd_resumed_close(&ml->resumed[i]);
	free(ml->resumed);
	free(ml);
}

const struct pppd_runner *
monlink_runner(struct monlink *ml)
{
	return &ml->runner;
}

void
monlink_notify(void *arg, enum notify_state state, unsigned sessions,
    unsigned ctrls)
{
	struct monlink *ml = arg;
	struct mon_msg r = { .type = MON_NOTIFY }, a;
	char why[MON_TEXT + 16];

	r.u.notify.state = (uint16_t)state;
	r.u.notify.sessions = sessions;
	r.u.notify.ctrls = ctrls;
	if (monlink_call_request(ml, &r, &a, MON_RESULT, why, sizeof(why)) < 0)
		log_rl(&ml->rl, loop_now(ml->loop), LOG_WARNING, "worker: "
		    "systemd not told: %s", why);
}

/* One FILE of RELOAD_FILES' answer, in its place, into `fs`. NULL, or why
 * not. */
static const char *
monlink_file(struct fileset *fs, struct mon_msg *a, uint16_t *count)
{
	if (a->u.file.index != fileset_count(fs) ||
	    (*count != 0 && a->u.file.count != *count))
		return "the monitor's files came out of order";
	*count = a->u.file.count;
	a->nfds = 0;   /* the set's now, or closed by it */
	if (fileset_add(fs, a->u.file.path, a->fds[0]) < 0)
		return "out of memory";
	return NULL;
}

/* Why a reload was refused, into err: the files' own reason (file:line,
 * MON_ERR_CONF) as it is, as without privsep; anything else says who
 * failed. */
static void
monlink_refusal(char *err, size_t errlen, const char *who, int status,
    const char *why)
{
	if (status == MON_ERR_CONF)
		snprintf(err, errlen, "%s", why);
	else
		snprintf(err, errlen, "%s: %s", who, why);
}

struct fileset *
monlink_files(struct monlink *ml, char *err, size_t errlen)
{
	struct mon_msg r = { .type = MON_RELOAD_FILES }, a = { .nfds = 0 };
	struct fileset *fs = fileset_new(FILESET_REPLAY);
	const char *why = NULL;
	int status = MON_ERR_FAILED;
	uint16_t count = 0;

	if (fs == NULL)
		why = "out of memory";
	else if (monlink_request(ml, &r, &a, &why) == 0)
		while (a.type == MON_FILE && (why = monlink_file(fs, &a,
		    &count)) == NULL && monlink_answer(ml, r.seq, &a, &why) == 0)
			;
	if (why == NULL && a.type != MON_RESULT)
		why = "the monitor did not answer with the files";
	else if (why == NULL && a.u.result.status != MON_OK) {
		why = a.u.result.text;
		status = a.u.result.status;
	} else if (why == NULL && fileset_count(fs) != count)
		why = "the monitor's files came short";
	if (why == NULL)
		return fs;
	monlink_refusal(err, errlen, "the monitor could not open the files",
	    status, why);
	mon_close_fds(&a);
	fileset_free(fs);
	return NULL;
}

static int monlink_admin(struct monlink *ml, uint16_t what, char *err,
    size_t errlen);

int
monlink_reload(struct monlink *ml, char *err, size_t errlen)
{
	return monlink_admin(ml, MON_ADMIN_RELOAD, err, errlen);
}

int
monlink_upgrade(struct monlink *ml, char *err, size_t errlen)
{
	return monlink_admin(ml, MON_ADMIN_UPGRADE, err, errlen);
}

/* ADMIN `what` (MON_ADMIN_*): 0, or -1 with err set. */
static int
monlink_admin(struct monlink *ml, uint16_t what, char *err, size_t errlen)
{
	struct mon_msg r = { .type = MON_ADMIN }, a;
	const char *why = NULL;

	r.u.admin.what = what;
	if (monlink_request(ml, &r, &a, &why) < 0) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	if (a.type != MON_RESULT || a.u.result.status != MON_OK) {
		monlink_refusal(err, errlen, "the monitor", a.type == MON_RESULT ?
		    a.u.result.status : MON_ERR_FAILED, a.type == MON_RESULT ?
		    a.u.result.text : "it did not answer");
		mon_close_fds(&a);
		return -1;
	}
	return 0;
}
