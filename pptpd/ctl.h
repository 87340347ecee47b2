/* The control socket's server side: the exchanges with pptpctl(8) under
 * way, on pptpd's event loop. The protocol itself is proto/ctl.h. */
#ifndef PPTPD_CTL_H
#define PPTPD_CTL_H

#include "proto/ctl.h"

#include <sys/queue.h>

#include "pptpd/loop.h"
#include "common/ratelimit.h"
#include "pptpd/shed.h"

struct server;
struct ctl_conn;

/* Exchanges served at once; the next connections are refused ("busy"). */
#define CTL_CONNS_MAX  8
/* A whole exchange (request in, answer out) must fit in this. */
#define CTL_TIMEOUT_MS 5000

struct ctl {
	struct server   *srv;
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
int  ctl_open(struct ctl *c, struct server *s, char *err, size_t errlen);
/* Also ends every exchange under way. */
void ctl_close(struct ctl *c);

#endif
