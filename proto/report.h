/*
 * report.h -- the session report channel between the pptpd-policy pppd
 * plugin and pptpd.  THIS FILE IS THE CONTRACT; report.c implements both
 * sides (builder for the plugin, parser for pptpd), pure C, no pppd headers.
 *
 * Transport
 *   pptpd opens a UNIX SOCK_SEQPACKET socketpair for each call and pppd
 *   inherits one end; pptpd names it with the plugin option
 *   `pptpd-report-fd N`, plus `pptpd-call ID` to tag every report of that
 *   session.  The plugin sends one message per event with send(2),
 *   non-blocking: if pptpd leaves a whole socket buffer unread, reports are
 *   dropped (and pppd logs a warning), pppd never waits.  Only that call's
 *   pppd holds the other end, so pptpd needs no credentials to know who
 *   sent a report; it still refuses one whose call= is not the call's.
 *   A pair, not one socket shared by every pppd: a UNIX datagram socket
 *   queues at most net.unix.max_dgram_qlen (10 by default) datagrams from
 *   all its senders together, and at a mass teardown the rest were lost.
 *   Without pptpd (Poptop, tests), `pptpd-report PATH` sends the same text
 *   as one datagram per event to a UNIX datagram socket at PATH instead.
 *
 * Datagram
 *   At most REPORT_MAX_DGRAM bytes of printable ASCII, no NUL, no newline:
 *
 *       v=1 event=EVENT key=value key=value ...
 *
 *   Fields are separated by exactly one space.  A key is 1..32 characters of
 *   [a-z0-9_].  A value is 0..REPORT_MAX_VALUE characters after decoding;
 *   bytes other than [A-Za-z0-9] and "-._~:/@+," are sent as %XX (two
 *   uppercase hex digits; the parser accepts either case, rejects %00).
 *   "v=1" comes first, "event=" second; no key appears twice.  Receivers
 *   MUST ignore keys and events they do not know (later versions add some)
 *   and MUST reject a datagram whose v is not 1.
 *
 * Events (keys always present unless marked "opt"):
 *
 *   event=auth   the peer authenticated and the MPPE policy was chosen
 *       call=ID pid=PPPD_PID user=NAME client=ADDR
 *       policy=require-128|require|allow|deny|default
 *       rule=FILE:LINE | rule=default
 *       mppe_want=none|40|128|40,128   what pppd will request after the rule
 *       stateful=0|1                     stateful mode accepted if asked
 *       framed_ip=ADDR   (opt) RADIUS' Framed-IP-Address: pppd will give
 *                        the peer this address, not the one pptpd put on
 *                        its command line
 *       framed_ipv6_prefix=P/64  (opt) RADIUS' Framed-IPv6-Prefix: pptpd
 *                        routes and advertises this /64 (ipv6-prefix-pool
 *                        on) instead of its pool's
 *       session_limit=N  (opt) RADIUS' Port-Limit: the sessions this user
 *                        may hold at once; pptpd applies it instead of
 *                        sessions-per-user
 *       rate_down=BITS   (opt) the session's rate limit server to client,
 *                        decimal bits/s, 0 = none that way; pptpd shapes
 *                        the ppp interface's egress to it
 *       rate_up=BITS     (opt) client to server, the same; pptpd polices
 *                        the interface's ingress to it. rate_down,
 *                        rate_up and rate_src come together or not at
 *                        all, each rate 0 or 8000..10000000000, not both 0
 *       rate_src=radius|FILE:LINE  (opt) where the rate came from: RADIUS'
 *                        WISPr-Bandwidth-Max-Down/-Up (either sent: the
 *                        other way is 0), else the matched pptpd-peers
 *                        rule's `rate`
 *
 *   event=up     IPCP is up: the session carries traffic
 *       call pid user client
 *       ifname=ppp0 local=OUR_TUNNEL_IP ip=PEER_TUNNEL_IP
 *       mppe=none|40|128   the strength negotiated (none = plaintext)
 *       stateless=0|1      (1 when mppe=none)
 *       policy=...
 *       acct_session_id=ID (opt) the Acct-Session-Id pppd's radius.so sent
 *                          in its Accounting-Start (and sends in its Stop)
 *
 *   event=down   IPCP went down (session over or renegotiating)
 *       call pid user client ifname ip
 *       rx_bytes= tx_bytes= rx_packets= tx_packets=   PPP-level counts
 *                                            since IPCP came up; rx = from
 *                                            the client
 *       duration=SECONDS   since IPCP came up
 *
 *   event=up6    IPV6CP is up (pptpd adds +ipv6 with ipv6-prefix-pool):
 *       call pid user client ifname   pptpd routes the session's /64 to
 *                          ifname and advertises it (Router Advertisements)
 *
 *   event=down6  IPV6CP went down (session over or renegotiating)
 *       call pid user client ifname
 *
 *   event=down_done   every ip-down notifier has returned since "down"
 *       call pid user client   (radius.so's Accounting-Stop among them: it
 *                          was answered or given up on). Between "down"
 *                          and this, a signal to pppd would cut that
 *                          wait short: pptpd holds its signals back
 *                          (for at most 30 s).
 *
 *   event=exit   pppd is exiting (always the last datagram of a pppd)
 *       call pid user(opt: empty if never authenticated) client
 *       status=N           pppd's exit status (see pppd(8) EXIT STATUS)
 *       reason=TEXT        short name of the status: ok, fatal, option,
 *                          negotiation, peer-auth-failed, hangup,
 *                          peer-dead, idle, connect-time, ... (see report.c)
 *       up=0|1             whether an `up` was ever reported
 *       auth_failure=TEXT  (opt) why RADIUS authentication failed:
 *                          "rejected by the RADIUS server" or "no answer
 *                          from the RADIUS server"
 *       auth_user=NAME     (opt, with auth_failure) the name the peer gave
 *
 *   Any event may also carry (opt) acct_session_id=ID: the Acct-Session-Id
 *   pppd's radius.so sent for this session, exactly as sent; pptpd keeps
 *   the last non-empty one and finds the session by it when a RADIUS
 *   Disconnect-Request names it (pptpd/dae.c).
 *
 *   Counters are unsigned decimal (32-bit in pppd 2.4.9: they wrap after
 *   4 GiB; receivers should parse them as 64-bit).
 *
 * From pptpd to the plugin (the report-fd channel only, its other
 * direction; same datagram format)
 *
 *   event=hangup  pptpd is about to end this session: SIGTERM follows
 *       call=ID
 *       cause=admin|shutdown|limit|replaced   REPORT_CAUSE_*,
 *                          report_cause_name(): admin = pptpctl kill or a
 *                          RADIUS Disconnect-Request; shutdown = pptpd
 *                          stopping; limit = the user already holds the
 *                          sessions sessions-per-user allows; replaced = a
 *                          newer session of the user took this one's place
 *
 *   pppd takes SIGTERM as "User request" and ends LCP with that reason;
 *   the plugin reads this message when pppd starts to end LCP and gives
 *   the peer report_cause_text(cause) instead, in the Terminate-Request
 *   and its retransmissions (pptpd-policy.c, "Why the peer is told").
 *   pppd never waits for it: the plugin reads it without blocking, and
 *   a pppd that ends LCP for a reason of its own (idle, connect time)
 *   keeps that reason.  The plugin ignores causes it does not know.
 *
 * Example
 *   v=1 event=up call=7 pid=4242 user=alice client=198.18.0.2 ifname=ppp0
 *       local=198.19.0.1 ip=198.19.0.10 mppe=128 stateless=1 policy=require-128
 *   (one line on the wire)
 *
 * REPORT_API is empty by default; a test may define it before including
 * report.c directly.
 */
#ifndef PROTO_REPORT_H
#define PROTO_REPORT_H

#include <stddef.h>
#include <stdint.h>

#ifndef REPORT_API
#define REPORT_API
#endif

#define REPORT_VERSION     "1"
#define REPORT_MAX_DGRAM   1024  /* bytes on the wire */
#define REPORT_MAX_FIELDS  32
#define REPORT_MAX_KEY     32
#define REPORT_MAX_VALUE   255   /* decoded bytes */

/* ---- building (the plugin) ---- */

struct report_builder {
	char buf[REPORT_MAX_DGRAM + 1];
	size_t len;
	int overflow;       /* a field did not fit or was invalid */
};

/* Start a datagram: "v=1 event=EVENT". */
REPORT_API void report_begin(struct report_builder *b, const char *event);
/* Append " key=value", encoding the value.  A NULL value is sent empty.
 * An invalid key or a value over REPORT_MAX_VALUE bytes marks overflow. */
REPORT_API void report_add(struct report_builder *b, const char *key,
    const char *value);
REPORT_API void report_add_u64(struct report_builder *b, const char *key,
    uint64_t v);
/* The datagram's length, or -1 if anything overflowed (send nothing). */
REPORT_API int report_end(struct report_builder *b);

/* ---- parsing (pptpd) ---- */

struct report_field {
	const char *key;    /* point into report_msg.buf, NUL-terminated */
	const char *value;  /* decoded; may be "" */
};

struct report_msg {
	char buf[2 * REPORT_MAX_DGRAM + 2];
	struct report_field f[REPORT_MAX_FIELDS];
	size_t n;
	const char *event;  /* == value of "event" */
};

/* Parse one datagram.  Returns 0, or -1 with a short reason in *WHY (a
 * static string) when the datagram breaks the contract above. */
REPORT_API int report_parse(struct report_msg *m, const void *data, size_t len,
    const char **why);
/* A field's decoded value, or NULL if absent. */
REPORT_API const char *report_get(const struct report_msg *m, const char *key);
/* A decimal unsigned field: 0 on success, -1 if absent or malformed. */
REPORT_API int report_get_u64(const struct report_msg *m, const char *key,
    uint64_t *out);

/* Short name of a pppd exit status for reason= ("ok", "hangup", ...). */
REPORT_API const char *report_status_name(int status);

/* ---- pptpd to the plugin ---- */

#define REPORT_EVENT_HANGUP "hangup"

/* Why pptpd hangs a session up (cause= of event=hangup). */
enum report_cause {
	REPORT_CAUSE_NONE = 0,   /* no message: pppd's own reason stands */
	REPORT_CAUSE_ADMIN,      /* pptpctl kill, RADIUS Disconnect-Request */
	REPORT_CAUSE_SHUTDOWN,   /* pptpd is stopping */
	REPORT_CAUSE_LIMIT,      /* sessions-per-user deny: this one refused */
	REPORT_CAUSE_REPLACED,   /* sessions-per-user replace: an older one */
};

/* The cause= token ("admin", "shutdown"), NULL for REPORT_CAUSE_NONE. */
REPORT_API const char *report_cause_name(enum report_cause cause);
/* The cause a token names; REPORT_CAUSE_NONE for NULL or an unknown one. */
REPORT_API enum report_cause report_cause_parse(const char *name);
/* What the peer is told: the reason in LCP's Terminate-Request, which
 * the peer's pppd logs as "LCP terminated by peer (TEXT)". NULL for
 * REPORT_CAUSE_NONE. */
REPORT_API const char *report_cause_text(enum report_cause cause);

#endif
