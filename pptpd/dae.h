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
 *    the request the same way (a replay); so does a request without one
 *    when `radius-dae-require-timestamp` is set.
 *  - A retransmission or a replay (same client address, Identifier and
 *    Request Authenticator within DAE_CACHE_MS, which covers the whole
 *    Event-Timestamp window) gets the first answer again and acts on
 *    nothing. Without an Event-Timestamp this cache is the only bound.
 *    When every one of its DAE_CACHE_SLOTS entries is that recent, a new
 *    request is answered NAK 506 and acts on nothing: no entry is given
 *    up while its request could still be replayed.
 *  - CoA-Request: answered CoA-NAK, Error-Cause 405 Unsupported Service, so
 *    the server knows at once rather than after its retries.
 *  - Disconnect-Request: the live session that has every fact named by
 *    User-Name, Framed-IP-Address and Acct-Session-Id (whole names) is hung
 *    up and Disconnect-ACK answered; none: Disconnect-NAK 503; more than
 *    one: Disconnect-NAK 508 (Multiple Session Selection Unsupported), and
 *    none is hung up (radius.so of pppd 2.4.9 makes Acct-Session-Id of the
 *    time alone, so two sessions may share it); what radius_dm_decode()
 *    refuses: Disconnect-NAK with its Error-Cause; a NAS-IP-Address that is
 *    neither the address the request was sent to nor `listen`: NAK 403.
 *    Proxy-State is echoed; a Message-Authenticator is added to the answer
 *    when the request had one. */
#ifndef PPTPD_DAE_H
#define PPTPD_DAE_H

#include <netinet/in.h>

struct calls;
struct conf;
struct dae;
struct loop;

#define DAE_WINDOW_S   300      /* Event-Timestamp: +-5 minutes */
/* A request is remembered for as long as its Event-Timestamp is inside the
 * window: first seen up to DAE_WINDOW_S before that time, it is still in
 * the window DAE_WINDOW_S after it. */
#define DAE_CACHE_MS   (2 * DAE_WINDOW_S * 1000)
/* Requests answered in DAE_CACHE_MS before NAK 506: about 7 a second,
 * sustained. */
#define DAE_CACHE_SLOTS 4096

/* Bind `addr` and serve it on `loop`; the clients are read from
 * conf->dae_clients at each request, so a reload changes them (the server
 * keeps *conf current). The sessions a request names are `calls`'. NULL
 * with err set on failure. */
struct dae *dae_new(struct loop *loop, const struct conf *conf,
    struct calls *calls, const struct sockaddr_in *addr, char *err,
    size_t errlen);
void dae_free(struct dae *d);

#endif
