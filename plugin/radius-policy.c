/*
 * radius-policy.c -- what pppd's radius.so learnt from the RADIUS server
 * (see radius-policy.h).
 *
 * Facts about pppd's radius.so this relies on, the same in 2.4.9 and 2.5.2
 * unless said otherwise (checked against Debian's binaries,
 * /usr/lib/pppd/2.4.9/radius.so and /usr/lib/pppd/2.5.2/radius.so, and the
 * ppp project's sources of both):
 *
 * - It exports `void (*radius_attributes_hook)(VALUE_PAIR *)` and calls it
 *   with the Access-Accept's attributes, before it parses them itself.
 *   VALUE_PAIR is radiusclient's struct (radiusclient.h, not installed by
 *   ppp-dev): declared below, its size checked at build time against the
 *   offset of `next` the binary uses (0x138).  radius.so frees the list
 *   with free() after parsing it.
 * - Integer attributes are in host order in `lvalue`; Framed-IP-Address
 *   too (radius.so itself applies htonl).
 * - The Acct-Session-Id comes from rc_mksid(), which it exports: it
 *   formats "%08lX%04X%02hX" (time, pid, a counter) into one static buffer
 *   and returns it.  2.4.9 formats with pppd's slprintf, which knows no
 *   %lX or %hX: the id comes out as "%lX" + the time in hex + "%hX", the
 *   same for every session started in the same second.  2.5 uses
 *   snprintf: 14 hex digits (or more for a pid above 0xffff), unique per
 *   pppd.  radius.so calls it only from its ip-up notifier, just before
 *   Accounting-Start, and keeps its copy; so we learn the buffer's address
 *   once (our call bumps the counter, nothing else), empty it when a link
 *   starts and read it after ip-up: pppd runs ip_up_hook after every ip-up
 *   notifier, whatever the plugin order.
 * - radius.so keeps MS-MPPE-Send/Recv-Key only when the reply also has a
 *   non-zero MS-MPPE-Encryption-Policy (2.4.9 then leaves the keys unused,
 *   2.5 clears them).
 * - With a policy and MS-MPPE-Encryption-Types, 2.5's radius.so narrows
 *   ccp_wantoptions[0].mppe to those types (mppe_set_enc_types; 2.4.9's
 *   set_mppe_enc_types returns at once).  It never widens it; our decision
 *   at the network phase comes after it and sets the options whole.
 * - radius.so replaces chap_verify_hook with its own, which blocks pppd
 *   until the server answers or radius_retries * radius_timeout seconds
 *   have passed; success or not is all it returns.  We wrap it: a failure
 *   that took at least radius_timeout seconds (rc_conf_int, exported) was
 *   an unanswered server; a quicker one a refusal (Access-Reject, or an
 *   answer radius.so would not accept, which it logs itself).
 */
#include "plugin/pppd-compat.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin/radius-policy.h"

#define PLUGIN "pptpd-policy"

/* radiusclient's attribute numbers (RFC 2865) and the Microsoft vendor
 * attributes (RFC 2548). */
#define RAD_VENDOR_NONE           (-1)
#define RAD_VENDOR_MICROSOFT      311
#define RAD_FRAMED_IP_ADDRESS     8
#define RAD_PORT_LIMIT            62      /* RFC 2865 5.42 */
/* RFC 3162 2.3: reserved octet, prefix length, then the prefix's octets
 * (as radius.so keeps an ipv6prefix: the raw value in strvalue, its
 * length in lvalue). Only a /64 is taken: a session's prefix is one. */
#define RAD_FRAMED_IPV6_PREFIX    97
#define RAD_IPV6_PREFIX_HDR       2
#define RAD_IPV6_SESSION_LEN      64
#define RAD_MS_MPPE_ENC_POLICY    7
#define RAD_MS_MPPE_ENC_TYPES     8
#define RAD_MS_MPPE_SEND_KEY      16
#define RAD_MS_MPPE_RECV_KEY      17
/* The Wi-Fi Alliance's WISPr attributes (FreeRADIUS' dictionary.wispr):
 * the user's rate limits, integers in bits/s. */
#define RAD_VENDOR_WISPR          14122
#define RAD_WISPR_BW_MAX_UP       7
#define RAD_WISPR_BW_MAX_DOWN     8
/* Framed-IP-Address values that are not an address (RFC 2865 5.8). */
#define RAD_IP_USER_CHOOSES       0xffffffffu
#define RAD_IP_NAS_CHOOSES        0xfffffffeu

#define RAD_NAME_LENGTH           32
#define RAD_AUTH_STRING_LEN       253
#define RAD_VP_NEXT_OFFSET        0x138   /* seen in rc_avpair_free */
#define RAD_TYPE_INTEGER          1
/* The MS-MPPE-Encryption-Policy we add to a reply that has the keys and no
 * policy (keep_mppe_keys): neither 1 nor 2 (RFC 2548), so radius.so keeps
 * the keys (it only asks for a non-zero policy) and applies no policy
 * (2.5's mppe_set_enc_types ignores other values; 2.4.9's does nothing). */
#define RAD_MPPE_POLICY_KEYS_ONLY 0xffffffffu

struct rad_value_pair {
	char                   name[RAD_NAME_LENGTH + 1];
	int                    attribute;
	int                    vendorcode;
	int                    type;
	uint32_t               lvalue;
	unsigned char          strvalue[RAD_AUTH_STRING_LEN + 1];
	struct rad_value_pair *next;
};
_Static_assert(offsetof(struct rad_value_pair, next) == RAD_VP_NEXT_OFFSET,
    "VALUE_PAIR layout differs from pppd's radius.so");

typedef void rad_hook_fn(struct rad_value_pair *);
typedef char *rad_mksid_fn(void);
typedef int rad_conf_int_fn(char *);

static int attached, present;
static rad_hook_fn **hook_slot;
static rad_hook_fn *prev_hook;
static rad_conf_int_fn *conf_int;
static chap_verify_hook_fn *radius_verify;
static char *sid_buf;              /* rc_mksid's static buffer */
static char session_id[48];

/* An Access-Accept's attributes. */
struct rad_got {
	int      have_policy, have_types;
	uint32_t policy, types;
	uint32_t framed_ip;            /* network order, 0: none */
	uint32_t port_limit;           /* Port-Limit, 0: none */
	uint64_t rate_down, rate_up;   /* WISPr-Bandwidth-Max-*, 0: none */
	int      have_down, have_up;   /* seen (valid or not) */
	int      have_prefix6;         /* Framed-IPv6-Prefix, a /64 */
	uint8_t  prefix6[16];
	int      send_key, recv_key;
	char     user[MAXNAMELEN];     /* the name it accepted */
};
/* This authentication's: emptied when a new one starts (LCP renegotiated:
 * the next user must not inherit the last one's policy or address). */
static struct rad_got got;
/* The last Accept radius.so handed us, whenever it was: what radius.so
 * itself still applies (its address, its MPPE keys) when it skips
 * radius_setparams on a later CHAP (2.4.9's done_chap_once). */
static struct rad_got accepted;
static int hook_seen;              /* this verification's Accept seen */
static const char *auth_failure;
static char auth_user[MAXNAMELEN];   /* the name that failed */

/* radius.so keeps the MPPE keys only with a non-zero policy; without one
 * it would drop them and no MPPE could start, whatever pptpd-peers or
 * pppd's options say.  So we add a policy that means nothing else to the
 * end of the list it is about to parse (and then free: ours is malloc'd
 * like its own).  It decrypts the keys after this hook and fails the
 * authentication if it cannot, so keys we vouch for here are valid
 * whenever the peer gets in. */
static void
keep_mppe_keys(struct rad_value_pair *list)
{
	struct rad_value_pair *vp = calloc(1, sizeof(*vp)), *last = list;

	if (vp == NULL) {
		error(PLUGIN ": no memory to keep RADIUS' MPPE keys");
		return;
	}
	strlcpy(vp->name, "MS-MPPE-Encryption-Policy", sizeof(vp->name));
	vp->attribute = RAD_MS_MPPE_ENC_POLICY;
	vp->vendorcode = RAD_VENDOR_MICROSOFT;
	vp->type = RAD_TYPE_INTEGER;
	vp->lvalue = RAD_MPPE_POLICY_KEYS_ONLY;
	while (last->next != NULL)
		last = last->next;
	last->next = vp;
}

/* Framed-IPv6-Prefix: a /64 whose octets all came (8 or more; the rest of
 * the 16 are zero). Anything else is not a session's prefix: ignored,
 * said in pppd's log. */
static void
take_prefix6(const struct rad_value_pair *vp)
{
	size_t n = vp->lvalue;

	if (n < RAD_IPV6_PREFIX_HDR + 8 || n > RAD_IPV6_PREFIX_HDR + 16 ||
	    vp->strvalue[1] != RAD_IPV6_SESSION_LEN) {
		warn(PLUGIN ": Framed-IPv6-Prefix of %u octets, length /%u: "
		    "ignored (a session's prefix is a /64)", (unsigned)n,
		    n >= RAD_IPV6_PREFIX_HDR ? vp->strvalue[1] : 0);
		return;
	}
	memset(got.prefix6, 0, sizeof(got.prefix6));
	memcpy(got.prefix6, vp->strvalue + RAD_IPV6_PREFIX_HDR,
	    n - RAD_IPV6_PREFIX_HDR);
	memset(got.prefix6 + 8, 0, 8);   /* a /64: no host bits */
	got.have_prefix6 = 1;
}

/* A WISPr-Bandwidth-Max-* value: bits/s within the bounds pptpd shapes
 * to (the peers file's too), else ignored, said in pppd's log.  The first
 * of a repeated one counts, valid or not, as for the other attributes. */
static void
take_rate(const struct rad_value_pair *vp, const char *name, int *have,
    uint64_t *rate)
{
	if (*have)
		return;
	*have = 1;
	/* RADIUS' integer is 32 bits: only the lower bound can be missed. */
	_Static_assert(PEERS_RATE_MAX > UINT32_MAX,
	    "a WISPr value could exceed the rate's upper bound");
	if (vp->lvalue < PEERS_RATE_MIN) {
		warn(PLUGIN ": %s %u bits/s: ignored (not within 8k..10G)",
		    name, (unsigned)vp->lvalue);
		return;
	}
	*rate = vp->lvalue;
}

/* WISPr's vendor attributes: the user's rate each way. */
static void
take_wispr(const struct rad_value_pair *vp)
{
	if (vp->attribute == RAD_WISPR_BW_MAX_DOWN)
		take_rate(vp, "WISPr-Bandwidth-Max-Down", &got.have_down,
		    &got.rate_down);
	else if (vp->attribute == RAD_WISPR_BW_MAX_UP)
		take_rate(vp, "WISPr-Bandwidth-Max-Up", &got.have_up,
		    &got.rate_up);
}

static void
attributes_hook(struct rad_value_pair *list)
{
	struct rad_value_pair *vp;

	memset(&got, 0, sizeof(got));
	for (vp = list; vp != NULL; vp = vp->next) {
		/* The first of a repeated attribute counts: FreeRADIUS puts
		 * the users file's before the ones its mschap module adds as
		 * defaults. */
		if (vp->vendorcode == RAD_VENDOR_MICROSOFT &&
		    vp->attribute == RAD_MS_MPPE_ENC_POLICY) {
			if (!got.have_policy)
				got.policy = vp->lvalue;
			got.have_policy = 1;
		} else if (vp->vendorcode == RAD_VENDOR_MICROSOFT &&
		    vp->attribute == RAD_MS_MPPE_ENC_TYPES) {
			if (!got.have_types)
				got.types = vp->lvalue;
			got.have_types = 1;
		} else if (vp->vendorcode == RAD_VENDOR_MICROSOFT &&
		    vp->attribute == RAD_MS_MPPE_SEND_KEY) {
			got.send_key = 1;
		} else if (vp->vendorcode == RAD_VENDOR_MICROSOFT &&
		    vp->attribute == RAD_MS_MPPE_RECV_KEY) {
			got.recv_key = 1;
		} else if (vp->vendorcode == RAD_VENDOR_NONE &&
		    vp->attribute == RAD_FRAMED_IP_ADDRESS &&
		    vp->lvalue != RAD_IP_USER_CHOOSES &&
		    vp->lvalue != RAD_IP_NAS_CHOOSES)
			got.framed_ip = htonl(vp->lvalue);
		else if (vp->vendorcode == RAD_VENDOR_NONE &&
		    vp->attribute == RAD_PORT_LIMIT && got.port_limit == 0)
			got.port_limit = vp->lvalue;
		else if (vp->vendorcode == RAD_VENDOR_NONE &&
		    vp->attribute == RAD_FRAMED_IPV6_PREFIX && !got.have_prefix6)
			take_prefix6(vp);
		else if (vp->vendorcode == RAD_VENDOR_WISPR)
			take_wispr(vp);
	}
	if (got.send_key && got.recv_key && !got.have_policy)
		keep_mppe_keys(list);
	strlcpy(got.user, auth_user, sizeof(got.user));
	accepted = got;
	hook_seen = 1;
	if (prev_hook)
		prev_hook(list);
}

/* radius.so accepted NAME without parsing the reply (2.4.9 parses only
 * its first CHAP's, done_chap_once): it goes on applying the last Accept's
 * address and MPPE keys. Right for the same user, so that Accept's
 * attributes are this authentication's too; another user would get the
 * first one's address and keys, and is refused. 1 or 0, as verify. */
static int
accept_unparsed(const char *name)
{
	if (strcmp(accepted.user, name) == 0) {
		got = accepted;
		return 1;
	}
	auth_failure = "radius.so kept another user's attributes";
	error(PLUGIN ": %q: radius.so did not read this Access-Accept (it "
	    "reads only the first of a pppd) and keeps %q's address and MPPE "
	    "keys: refusing", name, accepted.user);
	return 0;
}

static int
verify_wrapper(char *name, char *ourname, int id,
    struct chap_digest_type *digest, unsigned char *challenge,
    unsigned char *response, char *message, int message_space)
{
	struct timespec t0, t1;
	int ok, timeout;

	auth_failure = NULL;
	hook_seen = 0;
	strlcpy(auth_user, name ? name : "", sizeof(auth_user));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ok = radius_verify(name, ourname, id, digest, challenge, response,
	    message, message_space);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ok && !hook_seen)
		return accept_unparsed(auth_user);
	if (ok)
		return ok;
	timeout = conf_int ? conf_int("radius_timeout") : 0;
	if (timeout > 0 && t1.tv_sec - t0.tv_sec >= timeout)
		auth_failure = "no answer from the RADIUS server";
	else
		auth_failure = "rejected by the RADIUS server";
	error(PLUGIN ": %q: authentication failed: %s", name, auth_failure);
	return ok;
}

void
radius_policy_attach(void)
{
	rad_mksid_fn *mksid;

	if (attached)
		return;
	attached = 1;
	hook_slot = dlsym(RTLD_DEFAULT, "radius_attributes_hook");
	if (hook_slot == NULL)
		return;
	present = 1;
	prev_hook = *hook_slot;
	*hook_slot = attributes_hook;
	conf_int = (rad_conf_int_fn *)dlsym(RTLD_DEFAULT, "rc_conf_int");
	mksid = (rad_mksid_fn *)dlsym(RTLD_DEFAULT, "rc_mksid");
	if (mksid != NULL)
		sid_buf = mksid();
	/* radius.so set chap_verify_hook in its plugin_init; a plugin loaded
	 * after us may have replaced it since: then it is not radius.so's
	 * and we leave it alone. */
	if (chap_verify_hook != NULL &&
	    dlsym(RTLD_DEFAULT, "radius_logged_in_user") != NULL) {
		radius_verify = chap_verify_hook;
		chap_verify_hook = verify_wrapper;
	}
	info(PLUGIN ": radius.so found: reading its attributes%s",
	    sid_buf ? " and Acct-Session-Id" : "");
}

int
radius_policy_present(void)
{
	return present;
}

void
radius_policy_new_auth(void)
{
	memset(&got, 0, sizeof(got));
}

void
radius_policy_reset(void)
{
	radius_policy_new_auth();
	session_id[0] = '\0';
	auth_failure = NULL;
	/* Emptied: whatever is in it after ip-up is this link's id. */
	if (sid_buf)
		sid_buf[0] = '\0';
}

int
radius_mppe_translate(uint32_t policy, int have_types, uint32_t types,
    struct radius_mppe *out)
{
	unsigned usable;

	memset(out, 0, sizeof(*out));
	/* Absent types: any strength pppd can do (RFC 2548 gives no default;
	 * the policy alone still says whether encryption is required). */
	usable = have_types ? types & (RADIUS_MPPE_TYPE_40 | RADIUS_MPPE_TYPE_128) :
	    RADIUS_MPPE_TYPE_40 | RADIUS_MPPE_TYPE_128;
	out->types = usable;
	slprintf(out->src, sizeof(out->src),
	    "RADIUS MS-MPPE-Encryption-Policy %u", (unsigned)policy);
	if (have_types) {
		size_t n = strlen(out->src);
		slprintf(out->src + n, sizeof(out->src) - n,
		    " Types 0x%x", (unsigned)types);
	}
	switch (policy) {
	case RADIUS_MPPE_POLICY_REQUIRED:
		if (usable == 0)
			return -1;   /* required, with nothing we can do */
		out->policy = usable == RADIUS_MPPE_TYPE_128 ? PEERS_REQUIRE_128 :
		    PEERS_REQUIRE;
		return 1;
	case RADIUS_MPPE_POLICY_ALLOWED:
		out->policy = usable ? PEERS_ALLOW : PEERS_DENY;
		return 1;
	}
	return 0;        /* not an RFC 2548 value: as if absent */
}

int
radius_policy_mppe(struct radius_mppe *out)
{
	int r;

	if (!present || !got.have_policy)
		return 0;
	r = radius_mppe_translate(got.policy, got.have_types, got.types, out);
	if (r == 0)
		warn(PLUGIN ": ignoring MS-MPPE-Encryption-Policy %u (not 1 or 2)",
		    (unsigned)got.policy);
	return r;
}

const char *
radius_policy_session_id(void)
{
	/* Filled since the link began: radius.so made the id of its
	 * Accounting-Start. */
	if (sid_buf && session_id[0] == '\0' && sid_buf[0] != '\0')
		strlcpy(session_id, sid_buf, sizeof(session_id));
	return session_id;
}

uint32_t
radius_policy_framed_ip(void)
{
	return got.framed_ip;
}

const uint8_t *
radius_policy_prefix6(void)
{
	return got.have_prefix6 ? got.prefix6 : NULL;
}

uint32_t
radius_policy_port_limit(void)
{
	return got.port_limit;
}

void
radius_policy_rate(uint64_t *down, uint64_t *up)
{
	*down = got.rate_down;
	*up = got.rate_up;
}

const char *
radius_policy_auth_failure(void)
{
	return auth_failure;
}

const char *
radius_policy_auth_user(void)
{
	return auth_user;
}
