/* A call: one pppd, its address pair and its data path: a pty bridged to
 * our GRE engine, or (datapath kernel) the kernel's PPTP channel, whose
 * socket pptpd connects and pppd's plugin takes over (plugin/channel.c). */
#ifndef PPTPD_CALL_H
#define PPTPD_CALL_H

#include <netinet/in.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "common/ratelimit.h"
#include "pptpd/facts.h"
#include "pptpd/pppd.h"
#include "pptpd/loop.h"
#include "pptpd/mss.h"
#include "pptpd/shaper.h"
#include "proto/seq.h"
#include "proto/report.h"

struct call;
struct client;
struct gre_call;
struct gre_engine;
struct gre_stats;
struct kguard;
struct nd;
struct acct;
struct pool;
struct pool6;
struct pptp_msg;
struct shaper;
struct conf;

/* Our receive window (OCRP): what the reorder buffer can hold. */
#define PPTPD_RECV_WINDOW   SEQ_REORDER_SLOTS
/* SIGTERM, then SIGKILL after CALL_KILL_GRACE_MS, and
 * CALL_KILL_GRACE_PER_CALL_MS more for every call ending at that moment (at
 * most CALL_KILL_GRACE_MAX_MS in all): when a thousand sessions end at
 * once, every pppd waits its turn for the CPU, the kernel's interface
 * removal and radius.so's Accounting-Stop, and one killed before it is
 * done loses its session-end report and its accounting. In a 1000-session
 * teardown in the test VM, 878 pppd were still running after a flat 5 s. */
#define CALL_KILL_GRACE_MS           5000
#define CALL_KILL_GRACE_PER_CALL_MS  50
#define CALL_KILL_GRACE_MAX_MS       60000
/* A pppd that has reported its session's end ("down") while RADIUS
 * accounting is on is sending its Accounting-Stop: radius.so's ip-down
 * notifier runs right after the plugin's, and waits radius_timeout for
 * each of radius_retries tries; any signal cuts that wait short. Until
 * the plugin's "down_done", and at most this long (radiusclient's own
 * defaults: 10 s, 3 tries), pptpd sends it no signal and does not hang up
 * its pty. */
#define CALL_ACCT_STOP_MS            30000
/* A hang-up of ours lets pppd end LCP (its Terminate-Request still goes
 * out over GRE) for this long before the line is cut. */
#define CALL_HANGUP_MS      4000
/* Frames toward pppd wait until it has taken the line (gre_call_hold_pty):
 * at most this long, for a pppd that waits for the peer to speak first. */
#define CALL_PTY_HOLD_MS    2000
/* The longest user name or Acct-Session-Id kept whole: the most a report
 * value may hold (REPORT_MAX_VALUE, pppd's own names are shorter), more
 * than RADIUS carries (253 octets). A Disconnect-Request and `pptpctl
 * kill` compare whole names: a name cut short could match another's. */
#define CALL_NAME_MAX       255

/* Call IDs are 16 bits: one bit each, taken until pppd is reaped. */
#define CALLS_ID_WORDS      (65536 / 64)
/* Lines per second about calls starting or ending: plenty for real
 * dial-in, a ceiling for a flood. */
#define CALLS_RL_BURST      50

TAILQ_HEAD(call_list, call);

/* Every call until its pppd is reaped, and what all of them use. The
 * server owns one: it fills in the handles, keeps them current across a
 * reload (pool, mss), and hands it to each new call (call_new). A call
 * joins `list` once its pppd runs and leaves it when pppd is reaped; then
 * it says so through `ended` and `gone`, so the server learns what
 * happened without being asked and without a call knowing the server. */
struct calls {
	struct call_list   list;      /* oldest first */
	uint64_t           ids[CALLS_ID_WORDS];   /* Call IDs taken */
	unsigned           setups;    /* calls counted in call-setups */
	struct loop       *loop;
	const struct conf *conf;
	struct pool       *pool;      /* NULL: pppd picks the addresses */
	struct gre_engine *gre;
	int                kernel_path;   /* calls use the kernel's PPTP channel */
	struct kguard     *guard;     /* its GRE guard; NULL when off */
	struct mss        *mss;       /* TCP MSS clamping; NULL when off */
	int                mss_by_runner;   /* on, and the runner clamps */
	int                guard_by_runner; /* the runner guards (kernel path) */
	struct pool6      *pool6;     /* ipv6-prefix-pool; NULL: no IPv6 */
	struct nd         *nd;        /* its routes and advertisements */
	struct acct       *acct;      /* our own accounting; NULL: none (acct.h) */
	struct shaper     *shaper;    /* per-user rates; NULL: none can be set */
	int                shape_by_runner;   /* ... but the runner sets them */
	struct shaper_stats runner_rates;     /* what it set (metrics) */
	/* Who starts and signals pppd: NULL, this process; else the
	 * monitor, through its link (monlink.h, privsep). */
	const struct pppd_runner *runner;
	/* Under privsep, the journal the next worker reads (proto/journal.h):
	 * each call's record is written when its facts change. NULL: none. */
	void              *journal;
	struct ratelimit   rl_call;   /* calls started and ended */
	struct ratelimit  *rl_input;  /* rejected control input (ctrl.c's too) */
	/* A call ended with these GRE counters (they leave with the call). */
	void             (*ended)(void *arg, const struct gre_stats *st);
	/* A call's pppd was reaped: the call is off `list`. */
	void             (*gone)(void *arg);
	void              *arg;
};

/* What a call's control connection hands it: the connection's addresses,
 * and where the call's events go while the connection is there
 * (call_detach ends that). */
struct call_conn {
	void          *arg;
	struct in_addr peer, local;
	const char    *peer_str;      /* "a.b.c.d:port" */
	int            sock;          /* the connection's TCP socket (the
	                               * monitor reads its addresses) */
	/* The call ended (pppd may still run): tell the peer with a
	 * Call-Disconnect-Notify if `result` is non-zero. */
	void         (*ended)(void *arg, struct call *c, uint8_t result);
	/* Its pppd was reaped: the call no longer counts against the
	 * connection. */
	void         (*gone)(void *arg, struct call *c);
};

enum call_state {
	CALL_ACTIVE,     /* pppd running, frames flowing */
	CALL_HANGUP,     /* we hang up: pppd ends LCP, frames still flow */
	CALL_ENDING,     /* over: waiting for pppd to be reaped */
};

struct call {
	TAILQ_ENTRY(call) s_entry;     /* server's list */
	TAILQ_ENTRY(call) c_entry;     /* its control connection's list */
	struct calls     *calls;       /* the server's, handed at call_new */
	struct call_conn  conn;        /* .arg NULL once detached */
	struct client    *client;      /* its address's entry, until reaped */
	enum call_state   state;
	/* Counted in call-setups until its session is up or its pppd is
	 * reaped; a session not up in call-setup-timeout is hung up. */
	int               in_setup;
	uint16_t          id;          /* ours, in the peer's GRE key */
	uint16_t          peer_id;     /* the peer's */
	uint16_t          peer_window; /* its receive window (OCRQ) */
	struct in_addr    peer;
	char              client_str[24];   /* "a.b.c.d:port" of its connection */
	struct in_addr    local_ip, remote_ip;   /* the tunnel's */
	int               kernel;      /* the kernel's PPTP channel carries it */
	int               guarded;     /* in the kernel path's GRE guard */
	int               pty;         /* -1 on the kernel path */
	pid_t             pid;
	struct loop_fd    pty_lf;
	struct loop_defer defer;       /* its freeing, after the round */
	struct loop_timer kill_timer;
	uint64_t          term_ms;     /* our SIGTERM at its end; 0 not sent */
	uint64_t          kill_at_ms;  /* then SIGKILL due (call_kill_arm) */
	int               term_held;   /* call_hangup's SIGTERM held back */
	/* Its "down" with accounting on, until "down_done": radius.so is
	 * sending the Accounting-Stop. 0: not now. */
	uint64_t          acct_down_ms;
	int               exited;      /* pppd has exited, is not reaped yet */
	struct loop_timer end_timer;   /* ends the call outside engine callbacks */
	struct loop_timer setup_timer;
	struct loop_timer hold_timer;  /* CALL_PTY_HOLD_MS */
	uint8_t           hangup_result;   /* CDN result of our hang-up */
	char              hangup_reason[64];
	struct gre_call  *gre;         /* NULL on the kernel path */
	uint64_t          started_ms;
	struct facts      facts;       /* the plugin's reports (facts.h) */
	/* What the pppd plugin reported, for the session log. */
	char              user[CALL_NAME_MAX + 1];
	char              mppe[8];      /* "none", "40", "128"; "" unknown */
	int               stateless;    /* MPPE stateless: 1, stateful: 0, -1 unknown */
	char              tunnel[16];   /* the peer's tunnel address pppd reported */
	char              exit_reason[96];
	/* The Acct-Session-Id pppd's radius.so sends for this session, when
	 * the plugin reports one (key acct_session_id): a Disconnect-Request
	 * may name the session by it (dae.c). "" unknown. */
	char              acct_session_id[CALL_NAME_MAX + 1];
	uint64_t          up_ms;
	/* TCP MSS clamping (mss.h): the session's ppp interface from the
	 * plugin's "up" ("" before, and after its "down"), whether the
	 * server's table clamps it now, and to what (IPv4). */
	char              ifname[MSS_IFNAME_MAX + 1];
	int               mss_on;
	unsigned          mss;
	/* IPv6 (ipv6-prefix-pool): the session's /64 from the pool, held
	 * until reaped; the interface IPV6CP is up on ("" when not, nd.h). */
	int               has_prefix6;
	struct in6_addr   prefix6;
	char              ifname6[MSS_IFNAME_MAX + 1];
	int               acct6_sent;   /* acct6_prefix is in an Interim-Update */
	struct in6_addr   acct6_prefix;
	/* Its rate limit (bits/s, 0: none that way; shaper.h) and where it
	 * came from: the peers file's rule ("FILE:LINE"), "radius" or "coa";
	 * the interface it is set on now (its index: shaper_clear's key),
	 * 0 when it is not. */
	uint64_t          rate_down, rate_up;
	char              rate_src[REPORT_MAX_VALUE + 1];
	unsigned          shaped_ifindex;
};

/* Answer an OCRQ: allocate addresses and a Call ID, start pppd. On failure
 * returns NULL with the OCRP result and error codes set and a reason for
 * the log. The call counts against `client` until its pppd is reaped. */
/* Call `r` that the monitor handed back after the worker that had it
 * died (privsep), rebuilt from its journal record, which must agree with
 * `r`: IDs, pppd, addresses, data path. Takes r's report and pty ends.
 * NULL with *reason set when it is not ours to take (the caller lets the
 * monitor end it). Else the call, live; with *reason set when what it
 * runs on could not be set up again: once its connection counts it, the
 * caller ends it with call_resume_failed. */
struct call *call_resume(struct calls *s, const struct call_conn *conn,
    struct client *client, struct pppd_resumed *r, const char **reason);
void call_resume_failed(struct call *c, const char *reason);
struct call *call_new(struct calls *cs, const struct call_conn *conn,
    struct client *client, const struct pptp_msg *ocrq, uint8_t *result,
    uint8_t *error, const char **reason);

void calls_init(struct calls *cs);
/* By our Call ID, whatever its state (IDs are unique until reaped). */
struct call *calls_by_id(const struct calls *cs, uint16_t id);
struct call *calls_by_pid(const struct calls *cs, pid_t pid);
/* SIGKILL for the call's pppd now (a stop that cannot wait). */
void call_kill_now(struct call *c);
/* Calls live, and calls ending (their pppd not yet reaped). */
void calls_count(const struct calls *cs, unsigned *active, unsigned *ending);
/* Calls not ended yet (active or hanging up). */
unsigned calls_sessions(const struct calls *cs);

/* The server's MSS clamping table was made anew (a reload changed
 * tcp-mss-adjust): the session's interface, if it has one, is added to it
 * (mss.h), or forgotten when there is no table now. */
void call_mss_renew(struct call *c);
/* The accounting server changed (a reload): the session's /64 is sent
 * to the new one (acct.h), what was pending having gone with the old. */
void call_acct_renew(struct call *c);

/* End the call: tell the peer (if cdn_result is non-zero and the control
 * connection is still there), stop GRE, stop pppd. Idempotent. */
void call_end(struct call *c, uint8_t cdn_result, const char *reason);
/* Hang up cleanly: pppd is told to stop and ends its LCP over the still
 * running data path; the call ends (with a CDN of `cdn_result`) when pppd
 * has gone, or CALL_HANGUP_MS later. With a `cause` other than
 * REPORT_CAUSE_NONE the plugin is told it first, and the peer hears its
 * text in LCP's Terminate-Request (report.h); with NONE, pppd's own. */
void call_hangup(struct call *c, uint8_t cdn_result, enum report_cause cause,
    const char *reason);
/* Its control connection is gone: nothing more is said to the peer. */
void call_detach(struct call *c);
/* The engine wants to write to the call's pty (on), or is done (off). */
void call_pty_want_write(struct call *c, int on);
/* Not ended yet (ACTIVE or HANGUP). */
int  call_is_live(const struct call *c);
/* While its pppd sends the Accounting-Stop (its "down" with accounting on,
 * no "down_done" yet, at most CALL_ACCT_STOP_MS): when that hold-back ends
 * (loop ms). 0: not now. A clean stop waits for it (server.c). */
uint64_t call_acct_stop_due(const struct call *c);
/* At exit: free a call whatever its state (pppd is not waited for). */
void call_destroy(struct call *c);

/* pppd has exited and is not reaped yet (its pid is still taken): read
 * what it reported before it went ("down" with the session's counters,
 * "exit"), which may still wait behind the SIGCHLD. */
void call_exited(struct call *c);
/* pppd was reaped with wait status `status`. */
void call_reaped(struct call *c, int status);

/* The engine saw EOF or an error on the pty: end the call soon (not from
 * inside the engine's callback, which still uses the GRE call). */
void call_pty_closed(struct call *c, int err);

void call_set_accm(struct call *c, uint32_t send_accm, uint32_t recv_accm);

/* A new rate for the session (a CoA-Request): `down`, `up` in bits/s
 * (0: none that way; the caller has checked them with shaper_rate_ok, at
 * its entry, to answer a bad one as such), each only when its has_ flag
 * is set; set on its
 * interface at once if IPCP is up, else when it comes up. 0, or -1 with
 * `why` (the shaper could not set it: the session keeps its old one). */
int  call_set_rate(struct call *c, int has_down, uint64_t down, int has_up,
    uint64_t up, const char *src, char *why, size_t whylen);
/* "4M/1M" (down/up, "-" for none that way) into buf; "" without a rate. */
const char *call_rate_str(const struct call *c, char *buf, size_t len);
/* The session's /64 as "2001:db8:1:2::/64" into buf; "" without one. */
const char *call_prefix6_str(const struct call *c, char *buf, size_t len);

#endif
