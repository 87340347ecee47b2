/* The daemon: the listener, every control connection and call, the address
 * pool and the GRE engine, all served by one event loop. */
#ifndef PPTPD_SERVER_H
#define PPTPD_SERVER_H

#include <netinet/in.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "pptpd/call.h"
#include "pptpd/conf.h"
#include "pptpd/ctl.h"
#include "pptpd/ctrl.h"
#include "pptpd/log.h"
#include "pptpd/loop.h"
#include "pptpd/metrics.h"
#include "pptpd/notify.h"
#include "pptpd/shed.h"

struct clients;
struct gre_engine;
struct dae;

struct server {
	const struct conf *conf;
	struct loop       *loop;
	struct gre_engine *gre;
	struct loop_fd     gre_lf;
	struct ctl         ctl;        /* pptpctl's socket */
	uint64_t           started_ms;
	int                listen_fd;
	uid_t              listen_owner; /* whose every listener is (below) */
	struct loop_fd     listen_lf;
	struct shed        listen_shed; /* its way out of EMFILE (shed.h) */
	struct ctrls       ctrls;      /* every control connection (ctrl.h) */
	struct calls       calls;      /* every call until its pppd is reaped
	                                * (call.h): the pool, the MSS table and
	                                * the GRE guard are its handles */
	struct clients    *clients;    /* per client address (client.h) */
	int                stopping;
	int                mss_renew;  /* put the sessions back into the
	                                * monitor's table at its reload */
	struct loop_timer  stop_timer; /* stop-timeout */
	struct ratelimit   rl_accept;  /* refused connections */
	struct ratelimit   rl_input;   /* rejected control input (ctrl.c, call.c) */
	struct metrics_counts counts;  /* for the metrics (metrics.h) */
	struct metrics    *metrics;    /* the HTTP endpoint; NULL when off */
	struct dae        *dae;        /* RFC 5176 Disconnect-Requests; NULL when off */
	struct notify      notify;     /* systemd (notify.h) */
	/* SIGHUP and `pptpctl reload`: main.c reads the files, then calls
	 * server_reload(). 0, or -1 with err set ("file:line: reason"). */
	int              (*reload)(void *arg, char *err, size_t errlen);
	/* `pptpctl upgrade`: main.c asks the monitor (privsep). 0, or -1
	 * with err set. NULL: none. */
	int              (*upgrade)(void *arg, char *err, size_t errlen);
	void              *reload_arg;   /* both's */
};

/* What the first startup learnt by opening them, under privsep handed
 * to the monitor, which keeps its own (and to every later worker): the
 * kernel's PPTP channel chosen, with its GRE guard; the TCP MSS clamping
 * table made; the rates' netlink socket opened. */
struct server_facts {
	int kernel_path, guarded, clamping, shaping;
};

/* `listen_owner`: the user who will bind `listen`'s next addresses at a
 * reload (the worker's under privsep, else ours). The first listener is
 * made as that user too, so the two can share port 1723 for the moment
 * of a move (SO_REUSEPORT shares only between one user's sockets).
 * `given`: NULL at startup, which opens the guard, the table and the
 * socket to learn the facts; a worker the monitor starts after the first
 * is given them instead (opening them again would make the monitor's
 * anew, under its live sessions). */
struct server *server_new(const struct conf *conf, struct loop *loop,
    uid_t listen_owner, const struct server_facts *given, char *err,
    size_t errlen);
/* SIGTERM: stop accepting, stop every connection cleanly (ctrl_stop: each
 * call hung up with a Call-Disconnect-Notify, then a
 * Stop-Control-Connection-Request), and stop the loop once every
 * connection is closed and every pppd reaped. Returns at once; the loop
 * does the work. After `stop-timeout` seconds, or when called a second
 * time, what is left is cut off: connections closed, pppd killed. */
void server_shutdown(struct server *s);
/* Now in the process daemon() left: the control socket's (ctl_relisten). */
void server_daemonised(struct server *s);
void server_free(struct server *s);
/* SIGCHLD: reap every exited pppd. */
void server_reap(struct server *s);
/* Under privsep: the monitor reaped the pppd `pid` of call `call_id` (its
 * reports can still be read). */
void server_child_exited(struct server *s, uint16_t call_id, pid_t pid,
    int status);
/* Under privsep: calls start and signal pppd through the monitor, which
 * also opens the kernel path's channels, keeps the GRE guard and the MSS
 * table and sets the rates (the server closed its own at startup, when
 * it learnt they can be had), and systemd is told through `relay` (the
 * monitor is the unit's main pid). */
struct pppd_resumed;
struct pppd_runner;
/* What startup learnt (the monitor makes its own guard, table and
 * socket from it). */
void server_facts(const struct server *s, struct server_facts *f);
/* Under privsep: the monitor has reloaded too (or tried): the sessions'
 * interfaces go back into its clamping table if tcp-mss-adjust changed. */
void server_monitor_reloaded(struct server *s);
void server_set_runner(struct server *s, const struct pppd_runner *runner,
    notify_relay_fn relay, void *relay_arg);
/* Under privsep: the journal mapped shared (proto/journal.h), where the
 * calls leave their facts for the worker after this one. */
void server_set_journal(struct server *s, void *journal);
/* The `n` calls the monitor handed back at a new worker's hello (after
 * server_set_runner and server_set_journal): each rebuilt with its
 * control connection from the journal, or hung up with the reason
 * logged. Takes their descriptors; the array stays the caller's. */
void server_resume(struct server *s, struct pppd_resumed *r, size_t n);
/* SIGUSR1: one log line with connections, calls and the pool. */
void server_status(struct server *s);
/* Listening and serving: systemd is told (notify.h). */
void server_ready(struct server *s);
/* SIGHUP and `pptpctl reload`: systemd is told while s->reload reads the
 * files and calls server_reload(). 0, or -1 with err set. */
int server_reload_files(void *arg, char *err, size_t errlen);

/* Reload, step two: `next` has been read and checked as at startup. Check
 * what only the server can (the pool, the plugin, keys that need a
 * restart), then install the new pool, the one live calls' addresses are
 * marked taken in (an address it does not hold stays with its call and is
 * retired when the call ends), and log one line per changed key. Returns
 * -1 with `err` set and nothing changed; on 0 the caller must make `next`
 * the configuration s->conf points at. */
int server_reload(struct server *s, const struct conf *next, char *err,
    size_t errlen);

#endif
