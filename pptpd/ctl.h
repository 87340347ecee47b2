/* The control socket's server side: the exchanges with pptpctl(8) under
 * way, on pptpd's event loop. The protocol itself is proto/ctl.h. */
#ifndef PPTPD_CTL_H
#define PPTPD_CTL_H

#include "proto/ctl.h"

#include <sys/queue.h>

#include "pptpd/loop.h"
#include "common/ratelimit.h"
#include "pptpd/shed.h"

struct calls;
struct conf;
struct ctl_conn;
struct ctrls;
struct gre_engine;

/* Exchanges served at once; the next connections are refused ("busy"). */
#define CTL_CONNS_MAX  8
/* A whole exchange (request in, answer out) must fit in this. */
#define CTL_TIMEOUT_MS 5000

/* What the control socket reports on and acts on: the server's, handed
 * at ctl_open. */
struct ctl_env {
	struct loop        *loop;
	const struct conf  *conf;
	struct calls       *calls;
	const struct ctrls *ctrls;
	struct gre_engine  *gre;
	uint64_t            started_ms;
	/* `pptpctl reload`: the same as SIGHUP's; 0, or -1 with `err` set
	 * ("file:line: reason"). */
	int               (*reload)(void *arg, char *err, size_t errlen);
	/* `pptpctl upgrade`: the installed binary takes over (privsep);
	 * 0 (the worker leaves once it has answered), or -1 with `err`. */
	int               (*upgrade)(void *arg, char *err, size_t errlen);
	void               *arg;
};

struct ctl {
	struct ctl_env   env;    /* .loop NULL: never opened */
	int              fd;
	struct loop_fd   lf;
	struct shed      shed;   /* its way out of EMFILE (shed.h) */
	TAILQ_HEAD(, ctl_conn) conns;   /* exchanges under way */
	unsigned         nconns;
	struct ratelimit rl;     /* refused or bad requests */
	struct ratelimit rl_kill;
};

/* Bind CTL_SOCK_PATH (CTL_DIR created or checked first). Refused when
 * another daemon answers on it: two would take each other's socket. */
int  ctl_open(struct ctl *c, const struct ctl_env *env, char *err,
    size_t errlen);
/* After daemon(): listen again, so that SO_PEERCRED, which names the
 * process that last listened, names this one and not the parent that
 * opened the socket and has exited (pptpctl upgrade --wait finds the
 * monitor by it). */
void ctl_relisten(struct ctl *c);
/* Also ends every exchange under way. */
void ctl_close(struct ctl *c);

#endif
