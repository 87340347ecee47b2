/* Dynamic Authorization (RFC 5176): a UDP server on the event loop that
 * takes Disconnect-Requests from the RADIUS clients of
 * `radius-dae-clients` and hangs up the sessions they name, as `pptpctl
 * kill` does (pppd ends LCP, the client gets a Call-Disconnect-Notify).
 *
 *  - A datagram from an address not in the clients file, malformed (RFC
 *    2865 section 3), of another code, or whose Request Authenticator (or
 *    Message-Authenticator) does not hold for the client's secret is
 *    dropped without an answer, with a rate-limited log line.
 *  - An Event-Timestamp more than DAE_WINDOW_S away from our clock drops
 *    the request the same way (a replay); without one, only the duplicate
 *    cache guards against replays.
 *  - A retransmission (same client address, Identifier and Request
 *    Authenticator within DAE_CACHE_MS) gets the first answer again and
 *    acts on nothing.
 *  - CoA-Request: answered CoA-NAK, Error-Cause 405 Unsupported Service, so
 *    the server knows at once rather than after its retries.
 *  - Disconnect-Request: the live sessions that have every fact named by
 *    User-Name, Framed-IP-Address and Acct-Session-Id are hung up and
 *    Disconnect-ACK answered; none: Disconnect-NAK 503; what
 *    radius_dm_decode() refuses: Disconnect-NAK with its Error-Cause; a
 *    NAS-IP-Address that is neither the address the request was sent to
 *    nor `listen`: NAK 403. Proxy-State is echoed; a Message-Authenticator
 *    is added to the answer when the request had one. */
#ifndef PPTPD_DAE_H
#define PPTPD_DAE_H

#include <netinet/in.h>

struct server;
struct dae;

#define DAE_WINDOW_S   300      /* Event-Timestamp: +-5 minutes */
#define DAE_CACHE_MS   30000    /* radclient retries for 3 x 3 s by default */
#define DAE_CACHE_SLOTS 64

/* Bind `addr` and serve it on s->loop; the clients are read from
 * s->conf->dae_clients at each request, so a reload changes them. NULL
 * with err set on failure. */
struct dae *dae_new(struct server *s, const struct sockaddr_in *addr,
    char *err, size_t errlen);
void dae_free(struct dae *d);

#endif
