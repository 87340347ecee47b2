/* The daemon: the listener, every control connection and call, the address
 * pool and the GRE engine, all served by one event loop. */
#ifndef PPTPD_SERVER_H
#define PPTPD_SERVER_H

#include <netinet/in.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "pptpd/conf.h"
#include "pptpd/ctl.h"
#include "pptpd/log.h"
#include "pptpd/loop.h"
#include "pptpd/metrics.h"
#include "pptpd/notify.h"
#include "pptpd/shed.h"

struct ctrl;
struct call;
struct pool;
struct clients;
struct gre_engine;
struct kguard;
struct mss;
struct gre_stats;
struct dae;

/* Call IDs are 16 bits: one bit each, taken until pppd is reaped. */
#define SERVER_CALL_ID_WORDS (65536 / 64)

TAILQ_HEAD(ctrl_list, ctrl);
TAILQ_HEAD(call_list, call);

struct server {
	const struct conf *conf;
	struct loop       *loop;
	struct pool       *pool;
	struct gre_engine *gre;
	struct loop_fd     gre_lf;
	struct ctl         ctl;        /* pptpctl's socket */
	uint64_t           started_ms;
	int                listen_fd;
	struct loop_fd     listen_lf;
	struct shed        listen_shed; /* its way out of EMFILE (shed.h) */
	struct ctrl_list   ctrls;
	/* Connections that hold no live call, oldest first: those that have
	 * not sent their SCCRQ, and those established without a call. When
	 * every slot is taken a newcomer takes the place of the first
	 * (ctrl_evict). */
	struct ctrl_list   ctrls_unstarted, ctrls_idle;
	struct call_list   calls;      /* every call until its pppd is reaped */
	unsigned           nctrls;
	unsigned           nsetups;    /* calls counted in call-setups */
	int                kernel_path; /* calls use the kernel's PPTP channel */
	struct kguard     *guard;      /* its GRE guard; NULL when off */
	struct mss        *mss;        /* TCP MSS clamping; NULL when off */
	struct clients    *clients;    /* per client address (client.h) */
	uint64_t           call_ids[SERVER_CALL_ID_WORDS];
	int                stopping;
	struct loop_timer  stop_timer; /* stop-timeout */
	struct ratelimit   rl_accept;  /* refused connections */
	struct ratelimit   rl_input;   /* rejected control input */
	struct ratelimit   rl_conn;    /* connections closed or stopping */
	struct ratelimit   rl_call;    /* calls started and ended */
	struct metrics_counts counts;  /* for the metrics (metrics.h) */
	struct metrics    *metrics;    /* the HTTP endpoint; NULL when off */
	struct dae        *dae;        /* RFC 5176 Disconnect-Requests; NULL when off */
	struct notify      notify;     /* systemd (notify.h) */
	/* SIGHUP and `pptpctl reload`: main.c reads the files, then calls
	 * server_reload(). 0, or -1 with err set ("file:line: reason"). */
	int              (*reload)(void *arg, char *err, size_t errlen);
	void              *reload_arg;
};

struct server *server_new(const struct conf *conf, struct loop *loop, char *err, size_t errlen);
/* SIGTERM: stop accepting, stop every connection cleanly (ctrl_stop: each
 * call hung up with a Call-Disconnect-Notify, then a
 * Stop-Control-Connection-Request), and stop the loop once every
 * connection is closed and every pppd reaped. Returns at once; the loop
 * does the work. After `stop-timeout` seconds, or when called a second
 * time, what is left is cut off: connections closed, pppd killed. */
void server_shutdown(struct server *s);
void server_free(struct server *s);
/* SIGCHLD: reap every exited pppd. */
void server_reap(struct server *s);
/* Calls live, and calls ending (their pppd not yet reaped). */
void server_count_calls(const struct server *s, unsigned *active,
    unsigned *ending);
/* SIGUSR1: one log line with connections, calls and the pool. */
void server_status(struct server *s);

/* Reload, step two: `next` has been read and checked as at startup. Check
 * what only the server can (the pool, the plugin, keys that need a
 * restart), then install the new pool, the one live calls' addresses are
 * marked taken in (an address it does not hold stays with its call and is
 * retired when the call ends), and log one line per changed key. Returns
 * -1 with `err` set and nothing changed; on 0 the caller must make `next`
 * the configuration s->conf points at. */
int server_reload(struct server *s, const struct conf *next, char *err,
    size_t errlen);

/* Bookkeeping used by ctrl.c and call.c. */
void server_ctrl_gone(struct server *s, struct ctrl *c);
void server_call_gone(struct server *s);
struct call *server_call_by_pid(struct server *s, pid_t pid);
/* By our Call ID, whatever its state (IDs are unique until reaped). */
struct call *server_call_by_id(struct server *s, uint16_t id);
unsigned server_setups(const struct server *s);
/* An Outgoing-Call-Request was answered: `refusal` is why it was refused
 * (the logged reason), NULL when the call started. */
void server_call_setup(struct server *s, const char *refusal);
/* A call ended with these GRE counters (they leave with the call). */
void server_call_ended(struct server *s, const struct gre_stats *st);
/* Calls not ended yet (active or hanging up). */
unsigned server_sessions(const struct server *s);

#endif
