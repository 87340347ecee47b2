/* A control connection (RFC 2637 section 2): one TCP connection from a PNS
 * and its state machine. It carries up to `calls-per-connection` calls
 * (pptp-linux puts every tunnel from one host on one connection); a call
 * counts against its connection, and against its client address, until
 * its pppd has been reaped, so hanging up and dialling again in a loop
 * cannot pile up pppd processes or pool addresses. */
#ifndef PPTPD_CTRL_H
#define PPTPD_CTRL_H

#include <netinet/in.h>
#include <stdint.h>
#include <sys/queue.h>

#include "common/ratelimit.h"
#include "proto/report.h"

struct ctrl;
struct call;
struct calls;
struct client;
struct conf;
struct loop;
struct pppd_resumed;

#define CTRL_ECHO_IDLE_MS     60000   /* idle this long -> Echo-Request */
#define CTRL_ECHO_REPLY_MS    60000   /* no reply this long -> close */
/* After our Stop-Control-Connection-Request: the peer's reply, or close. */
#define CTRL_STOP_REPLY_MS    3000
#define CTRL_INBUF_LEN        1024    /* > 4 of the longest message */
#define CTRL_OUTBUF_LEN       8192
/* The peer's Call IDs of this connection's last calls to end: a
 * Call-Clear-Request for one of them crossed our Call-Disconnect-Notify
 * (a client hanging up as pppd does), which is no fault of the peer's. */
#define CTRL_ENDED_IDS        8
/* Lines per second about connections closing or stopping: plenty for
 * real dial-in, a ceiling for a flood. */
#define CTRLS_RL_BURST        20

TAILQ_HEAD(ctrl_list, ctrl);

/* Every control connection, and what all of them use. The server owns
 * one and fills in the handles; a connection joins `list` in ctrl_new and
 * leaves it when closed, then says so through `gone`. `unstarted` and
 * `idle` hold the connections that hold no live call, oldest first: those
 * that have not sent their SCCRQ, and those established without a call.
 * When every slot is taken a newcomer takes the place of the first
 * (ctrl_evict). */
struct ctrls {
	struct ctrl_list   list, unstarted, idle;
	unsigned           n;          /* on `list` */
	struct loop       *loop;
	const struct conf *conf;
	struct calls      *calls;      /* where a connection's calls go */
	struct ratelimit   rl_conn;    /* connections closed or stopping */
	struct ratelimit  *rl_input;   /* rejected control input */
	/* An Outgoing-Call-Request was answered: `refusal` is why it was
	 * refused (the logged reason), NULL when the call started. */
	void             (*call_setup)(void *arg, const char *refusal);
	/* A connection closed: it is off `list`. */
	void             (*gone)(void *arg);
	void              *arg;
};

void ctrls_init(struct ctrls *cs);

/* `client` is the entry of the peer's address (client.h); the connection
 * holds it until closed. */
struct ctrl *ctrl_new(struct ctrls *cs, int fd, const struct sockaddr_in *peer,
    const struct sockaddr_in *local, struct client *client);
/* A connection a worker before this one had established, handed back
 * by the monitor with its calls (privsep): established, calls to follow
 * with ctrl_resume_call. NULL: out of memory (fd not closed). */
struct ctrl *ctrl_resume(struct ctrls *cs, int fd,
    const struct sockaddr_in *peer, const struct sockaddr_in *local,
    struct client *client);
/* Call `r` of connection `c`, handed back (call_resume). NULL with
 * *reason set when it is not taken (the monitor is to end it); the call
 * with *reason set when it was taken and ended at once (which may have
 * closed `c`: do not use it again). */
struct call *ctrl_resume_call(struct ctrl *c, struct pppd_resumed *r,
    const char **reason);
/* Close now: live calls end without a word to the peer. */
void ctrl_close(struct ctrl *c, const char *reason);
/* Stop cleanly: hang up every live call (pppd ends its LCP giving the
 * peer `cause`'s text, call_hangup; the peer gets a Call-Disconnect-Notify
 * with `cdn_result`), then send a Stop-Control-Connection-Request and
 * close on its reply or after CTRL_STOP_REPLY_MS. */
void ctrl_stop(struct ctrl *c, uint8_t cdn_result, enum report_cause cause,
    const char *reason);
/* ctrl_stop() every connection. */
void ctrl_stop_all(struct ctrls *cs, uint8_t cdn_result,
    enum report_cause cause, const char *reason);
/* Every slot is taken and a newcomer knocks: close the connection that
 * has held no call the longest, one that has not sent its
 * Start-Control-Connection-Request first, then one established without a
 * call (a Stop-Control-Connection-Request for the record). Returns 0 when
 * a slot was freed, -1 when every connection carries a call or is
 * stopping. */
int ctrl_evict(struct ctrls *cs);


#endif
