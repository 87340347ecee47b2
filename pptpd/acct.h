/* pptpd's own RADIUS accounting (RFC 2866): what pptpd knows of a
 * session and radius.so does not, sent to the same accounting server
 * under radius.so's Acct-Session-Id. Today one thing: the session's IPv6
 * /64, which pptpd hands out after radius.so's Accounting-Start has gone
 * (radius.so has no IPv6 of its own), as an Interim-Update carrying
 * Framed-IPv6-Prefix (RFC 3162). Sent on the event loop, radius_retries
 * times at most, radius_timeout apart (radcfg.h), its answer checked;
 * each outcome logged once, with the session's identity. */
#ifndef PPTPD_ACCT_H
#define PPTPD_ACCT_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "pptpd/radcfg.h"

struct loop;
struct acct;

/* What one Interim-Update says of a session. */
struct acct_session {
	const char     *session_id;    /* radius.so's Acct-Session-Id */
	const char     *user;
	struct in_addr  framed_ip;     /* INADDR_ANY: not sent */
	struct in6_addr prefix6;       /* a /64 */
	uint32_t        session_time;  /* seconds since it came up */
	long            nas_port;      /* its ppp unit; -1: not sent */
	const char     *who;           /* "call 3/4" for the log */
};

/* The socket toward cfg's server. NULL with why set. */
struct acct *acct_open(struct loop *loop, const struct radcfg *cfg, char *why,
    size_t whylen);
/* What is still unanswered is dropped (logged). */
void acct_close(struct acct *a);

/* Send an Interim-Update for `s`; -1 (logged) when it cannot be sent. */
int acct_interim(struct acct *a, const struct acct_session *s);

struct acct_stats {
	uint64_t sent, answered, unanswered, bad_answers;
};
void acct_stats(const struct acct *a, struct acct_stats *st);

#endif
