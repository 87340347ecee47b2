/* The control socket: pptpctl(8) asks a running daemon for its status and
 * sessions, or to hang up a session. A UNIX stream socket in CTL_DIR
 * (root only: the directory is 0700, the socket 0600, and the peer's
 * SO_PEERCRED uid must be 0). One exchange per connection:
 *
 *   request:  one line, at most CTL_REQ_MAX bytes, ended by '\n'
 *   answer:   "ok\n" and the text, or "error CODE message\n"; then close
 *
 * The protocol part of this header is shared with ctl/pptpctl.c. */
#ifndef PPTPD_CTL_H
#define PPTPD_CTL_H

/* pptpd's run-time directory: root's alone (0700), created if missing. */
#define CTL_DIR        "/run/pptpd"
#define CTL_SOCK_PATH  CTL_DIR "/ctl.sock"
#define CTL_REQ_MAX    512   /* "kill user " and a 255-octet name */

/* The CODE of an error answer; pptpctl maps each to its exit status. */
#define CTL_ERR_NOMATCH      "no-such-session"   /* nothing matched */
#define CTL_ERR_USAGE        "bad-request"       /* unknown or malformed */
#define CTL_ERR_UNSUPPORTED  "not-supported"     /* known, not there yet */
#define CTL_ERR_DENIED       "denied"            /* not root */
#define CTL_ERR_BUSY         "busy"              /* too many at once */
#define CTL_ERR_INTERNAL     "internal"          /* out of memory */
#define CTL_ERR_REFUSED      "refused"           /* reload: bad configuration */

#ifndef CTL_CLIENT_ONLY

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
#endif
