/* The daemon: the listener, every control connection and call, the address
 * pool and the GRE engine, all served by one event loop. */
#ifndef PPTPD_SERVER_H
#define PPTPD_SERVER_H

#include <netinet/in.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "conf.h"
#include "facts.h"
#include "log.h"
#include "loop.h"

struct ctrl;
struct call;
struct pool;
struct gre_engine;

TAILQ_HEAD(ctrl_list, ctrl);
TAILQ_HEAD(call_list, call);

struct server {
	const struct conf *conf;
	struct loop       *loop;
	struct pool       *pool;
	struct gre_engine *gre;
	struct loop_fd     gre_lf;
	struct facts       facts;      /* reports of the pppd plugin */
	int                listen_fd;
	struct loop_fd     listen_lf;
	int                spare_fd;   /* /dev/null, given up to shed a client at EMFILE */
	struct loop_timer  listen_pause; /* listener off while out of descriptors */
	struct ctrl_list   ctrls;
	struct call_list   calls;      /* every call until its pppd is reaped */
	unsigned           nctrls;
	int                stopping;
	struct log_rl      rl_accept;  /* refused connections */
	struct log_rl      rl_input;   /* rejected control input */
};

struct server *server_new(const struct conf *conf, struct loop *loop, char *err, size_t errlen);
/* Hang up every call and close every connection; returns once all pppd
 * children are reaped (or killed after a grace period). */
void server_shutdown(struct server *s);
void server_free(struct server *s);
/* SIGCHLD: reap every exited pppd. */
void server_reap(struct server *s);
/* SIGUSR1: one log line with connections, calls and the pool. */
void server_status(struct server *s);

/* Bookkeeping used by ctrl.c and call.c. */
void server_ctrl_gone(struct server *s, struct ctrl *c);
struct call *server_call_by_pid(struct server *s, pid_t pid);

#endif
