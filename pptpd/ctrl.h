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

#include "proto/report.h"

struct server;
struct ctrl;
struct call;
struct client;

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

/* `client` is the entry of the peer's address (client.h); the connection
 * holds it until closed. */
struct ctrl *ctrl_new(struct server *s, int fd, const struct sockaddr_in *peer,
    const struct sockaddr_in *local, struct client *client);
/* Close now: live calls end without a word to the peer. */
void ctrl_close(struct ctrl *c, const char *reason);
/* Stop cleanly: hang up every live call (pppd ends its LCP giving the
 * peer `cause`'s text, call_hangup; the peer gets a Call-Disconnect-Notify
 * with `cdn_result`), then send a Stop-Control-Connection-Request and
 * close on its reply or after CTRL_STOP_REPLY_MS. */
void ctrl_stop(struct ctrl *c, uint8_t cdn_result, enum report_cause cause,
    const char *reason);
/* ctrl_stop() every connection of the server. */
void ctrl_stop_all(struct server *s, uint8_t cdn_result,
    enum report_cause cause, const char *reason);
/* Every slot is taken and a newcomer knocks: close the connection that
 * has held no call the longest, one that has not sent its
 * Start-Control-Connection-Request first, then one established without a
 * call (a Stop-Control-Connection-Request for the record). Returns 0 when
 * a slot was freed, -1 when every connection carries a call or is
 * stopping. */
int ctrl_evict(struct server *s);

/* A call of this connection ended (pppd may still be running): tell the
 * peer with a Call-Disconnect-Notify if `result` is non-zero. */
void ctrl_call_ended(struct ctrl *c, struct call *call, uint8_t result);
/* Its pppd was reaped: the call no longer counts against the connection. */
void ctrl_call_gone(struct ctrl *c, struct call *call);

const char *ctrl_peer_str(const struct ctrl *c);
struct in_addr ctrl_peer_addr(const struct ctrl *c);
/* Our address the peer connected to. */
struct in_addr ctrl_local_addr(const struct ctrl *c);

#endif
