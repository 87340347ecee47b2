/*
 * radius-policy.h -- what pppd's radius.so learnt from the RADIUS server,
 * for the pptpd-policy plugin (same .so).
 *
 * pppd's radius.so authenticates the peer, takes the MPPE keys and sends
 * accounting, but
 *   - it reads MS-MPPE-Encryption-Policy / -Types (RFC 2548) and then does
 *     nothing with them (2.4.9: its call to set_mppe_enc_types() returns
 *     at once) or only narrows the key strengths pppd's options already
 *     require (2.5): no per-user "required" or "allowed", and
 *   - it keeps the Acct-Session-Id of its accounting to itself, and
 *   - it drops the vendor attributes it has no use for (WISPr's rate
 *     limits, which pptpd applies).
 * This module reads the reply attributes through radius.so's exported
 * radius_attributes_hook, finds the session id, and tells apart a RADIUS
 * server that refused the peer from one that did not answer.  Without
 * radius.so in the pppd every function here is a no-op.
 */
#ifndef PPTPD_PLUGIN_RADIUS_POLICY_H
#define PPTPD_PLUGIN_RADIUS_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "proto/peers.h"

/* RFC 2548 2.4.4 MS-MPPE-Encryption-Policy */
#define RADIUS_MPPE_POLICY_ALLOWED   1
#define RADIUS_MPPE_POLICY_REQUIRED  2
/* RFC 2548 2.4.5 MS-MPPE-Encryption-Types: the L and S bits */
#define RADIUS_MPPE_TYPE_40          0x2
#define RADIUS_MPPE_TYPE_128         0x4

/* The MPPE decision RADIUS asked for: a peers-file policy and the key
 * strengths (RADIUS_MPPE_TYPE_* bits) it allows. */
struct radius_mppe {
	enum peers_policy policy;
	unsigned          types;
	char              src[96];   /* for the log: the attributes seen */
};

/* Hook into radius.so if this pppd loaded it (call once, after all
 * plugins are loaded: at the first phase change). */
void radius_policy_attach(void);
/* radius.so is in this pppd. */
int  radius_policy_present(void);
/* A new link: forget the last peer's attributes. */
void radius_policy_reset(void);
/* A new authentication starts (LCP renegotiated): forget the last one's
 * attributes (policy, Framed-IP-Address, rate). */
void radius_policy_new_auth(void);

/* RADIUS sent MS-MPPE-Encryption-Policy for the authenticated peer: 1 and
 * *OUT filled; 0 when it sent none (or radius.so is not loaded); -1 when
 * what it sent cannot be honoured (required, but no type pppd can do):
 * OUT->src says why and the session must be refused. */
int  radius_policy_mppe(struct radius_mppe *out);

/* Translate RFC 2548 values; pure, exposed for the unit tests. */
int  radius_mppe_translate(uint32_t policy, int have_types, uint32_t types,
    struct radius_mppe *out);

/* After radius.so's ip-up notifier has sent Accounting-Start: the
 * Acct-Session-Id it used, or "" if it sent none. */
const char *radius_policy_session_id(void);
/* Framed-IP-Address RADIUS assigned (network order), 0 if none. */
uint32_t radius_policy_framed_ip(void);
/* Framed-IPv6-Prefix (RFC 3162) RADIUS assigned: the session's /64's 16
 * octets, or NULL if none (or not a /64). */
const uint8_t *radius_policy_prefix6(void);
/* Port-Limit (RFC 2865 5.42) RADIUS sent for this user: the sessions it
 * may hold at once (pptpd enforces it, as sessions-per-user); 0 if none. */
uint32_t radius_policy_port_limit(void);

/* WISPr-Bandwidth-Max-Down / -Up RADIUS sent for this user (bits/s; each
 * 0 when not sent, or sent outside PEERS_RATE_MIN..PEERS_RATE_MAX and
 * ignored with a warning).  Both 0: RADIUS set no rate. */
void radius_policy_rate(uint64_t *down, uint64_t *up);

/* Why the last authentication failed, or NULL if it did not fail through
 * RADIUS ("rejected by the RADIUS server", "no answer from the RADIUS
 * server"). */
const char *radius_policy_auth_failure(void);
/* The name the peer gave in that failed authentication. */
const char *radius_policy_auth_user(void);

#endif
