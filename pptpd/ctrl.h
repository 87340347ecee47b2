/* A control connection (RFC 2637 section 2): one TCP connection from a PNS
 * and its state machine. */
#ifndef PPTPD_CTRL_H
#define PPTPD_CTRL_H

#include <netinet/in.h>
#include <stdint.h>

struct server;
struct ctrl;
struct call;

#define CTRL_ECHO_IDLE_MS     60000   /* idle this long -> Echo-Request */
#define CTRL_ECHO_REPLY_MS    60000   /* no reply this long -> close */
#define CTRL_OCRQ_TIMEOUT_MS  60000   /* SCCRP sent, no call yet -> close */
#define CTRL_INBUF_LEN        1024    /* > 4 of the longest message */
#define CTRL_OUTBUF_LEN       8192
/* Calls on one connection: every known client (Windows, pptp-linux) places
 * one call per control connection, and a bound here is what makes
 * connections-per-client also bound the addresses one client can take. */
#define CTRL_MAX_CALLS        1

struct ctrl *ctrl_new(struct server *s, int fd, const struct sockaddr_in *peer,
    const struct sockaddr_in *local);
void ctrl_close(struct ctrl *c, const char *reason);

/* A call of this connection ended: tell the peer (Call-Disconnect-Notify)
 * and forget the call. */
void ctrl_call_ended(struct ctrl *c, struct call *call, uint8_t result,
    uint8_t error, const char *stats);

/* Control connections open from this address. */
unsigned ctrl_count_from(struct server *s, struct in_addr addr);

const char *ctrl_peer_str(const struct ctrl *c);
struct in_addr ctrl_peer_addr(const struct ctrl *c);

#endif
