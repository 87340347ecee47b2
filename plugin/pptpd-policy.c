/*
 * pptpd-policy.c -- pppd plugin for pptpd: per-peer MPPE policy, session
 * reports to pptpd, and wtmp records.
 *
 * Built against pppd 2.4.9's or 2.5's plugin API (Debian's ppp-dev), through
 * pppd-compat.h.  Options:
 *
 *   pptpd-peers FILE    per-peer MPPE policy (pptpd-peers(5)); loaded and
 *                       checked when the option is parsed: an error makes
 *                       pppd exit before the link is set up
 *   pptpd-client ADDR   the client's real (outer) address; if not given,
 *                       pppd's remotenumber, then ipparam, are used
 *   pptpd-report-fd N   the call's report channel pptpd passed as
 *                       descriptor N (a SOCK_SEQPACKET socket): one message
 *                       per session report (report.h is the contract)
 *   pptpd-report PATH   a UNIX datagram socket for the reports instead, for
 *                       use without pptpd (Poptop, tests); N wins if both
 *   pptpd-call ID       session key copied into every report
 *   pptpd-logwtmp       write wtmp records at IP up/down (line = ppp
 *                       interface, user = authenticated name, host = client)
 *   pptpd-radius-lowers-mppe
 *                       a RADIUS MPPE policy weaker than pppd's options
 *                       (allowed where they require, 40-bit where they
 *                       say 128) applies; without it it is ignored
 *   pptpd-kernel SPEC   carry the call on the kernel's PPTP channel
 *                       instead of a tty (channel.c, channel.h)
 *
 * How the policy is enforced (pppd 2.4.9 facts, the same in 2.5.2):
 *
 * - CCP is opened only after the peer has authenticated, in
 *   start_networks(), right after new_phase(PHASE_NETWORK).  Our phase
 *   notifier runs there, so setting ccp_wantoptions[0].mppe /
 *   ccp_allowoptions[0].mppe at that moment decides what ccp_resetci()
 *   (called from ccp_open) will negotiate for this peer.
 * - pppd (2.4.9 and 2.5) knows only "MPPE required" (wantoptions.mppe
 *   != 0: request it, refuse a peer that rejects it, hold IPCP until CCP
 *   is up) and "no MPPE" (both zero: reject a peer's MPPE request; a peer
 *   that requires it gives up).  require-128/require/deny map onto
 *   these directly.
 * - "allow" (MPPE if the client wants it, plaintext otherwise) does not
 *   exist in pppd.  We start as "required" and watch the client's CCP
 *   packets with snoop_recv_hook (called before pppd dispatches a received
 *   packet): a client Configure-Request without the MPPE option, or a
 *   Configure-Reject of our MPPE option, means the client does not do MPPE.
 *   Then we drop MPPE from want/got/allow options, remove the MPPE option
 *   from that Configure-Reject before ccp_input sees it (otherwise
 *   ccp_rejci would close the link), and start IP with continue_networks()
 *   because start_networks() held it back for CCP.  When the client asks
 *   for MPPE, pppd's normal "required" path encrypts both directions.
 * - Stateful mode: the per-peer mode sets pppd's refuse_mppe_stateful,
 *   found through CCP's own option table ("mppe-stateful").
 * - Keys come from pppd's own MS-CHAPv2 code; we do not replace any
 *   authentication hook.
 *
 * Why the peer is told the session ended (pppd 2.4.9 and 2.5.2 alike):
 *
 * - lcp_close(unit, reason) enters PHASE_TERMINATE (our notifier runs),
 *   then fsm_close sets LCP's term_reason and terminate_layer calls LCP's
 *   down callback before it sends the Terminate-Request; the timer resends
 *   it with the same term_reason.  The down callback takes the upper
 *   layers down: ccp_down, when MPPE was negotiated and LCP is still
 *   OPENED (it is, inside terminate_layer), calls lcp_close(unit, "MPPE
 *   disabled") again, which overwrites term_reason.  So every hang-up of
 *   an encrypted session told the peer "MPPE disabled".  At
 *   PHASE_TERMINATE LCP is already closing, so we clear
 *   ccp_gotoptions[0].mppe there and ccp_down does not close it a second
 *   time: pppd's own reason ("Connect time expired", "Link inactive")
 *   reaches the peer.  MPPE dropping while LCP stays up still closes LCP
 *   with "MPPE disabled": that lcp_close comes from ccp_down itself.
 * - pppd takes pptpd's SIGTERM as "User request".  pptpd sends a hangup
 *   message with the cause first (report.h); the down callback's
 *   link_down enters PHASE_ESTABLISH after term_reason is set and before
 *   the Terminate-Request goes out, and there, if term_reason is still
 *   pppd's signal reason, we read the message and point term_reason at
 *   the cause's text: the first Terminate-Request and every resend carry
 *   it.  No lcp_close of ours, so nothing recurses.  A session whose LCP
 *   is not yet open has no down callback to run: its peer hears pppd's
 *   own text.
 */
#include "plugin/pppd-compat.h"
#include <pppd/fsm.h>
#include <pppd/ccp.h>
#include <pppd/ipcp.h>
#include <pppd/lcp.h>
#include <pppd/mppe.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "plugin/channel.h"
#include "plugin/fdarg.h"
#include "proto/peers.h"
#include "plugin/radius-policy.h"
#include "proto/report.h"

#define PLUGIN "pptpd-policy"

#ifndef PPP_CCP
#define PPP_CCP 0x80fd
#endif
#define CCP_CI_MPPE 18
#define CCP_CI_MPPE_LEN 6
#define CCP_CONFREQ 1
#define CCP_CONFREJ 4
#ifndef PPP_LCP
#define PPP_LCP 0xc021
#endif
#define LCP_PROTREJ 8

/* Only these two are exported (the Makefile builds with
 * -fvisibility=hidden): nothing of ours can clash with pppd or another
 * plugin. */
#define PLUGIN_EXPORT __attribute__((visibility("default")))

PLUGIN_EXPORT char pppd_version[] = PPPD_VERSION;

/* ---- options ---- */

static struct peers *peers;
static char *peers_path;
static char *opt_client;
static char *opt_report;
static int opt_report_fd = -1;
static char *opt_call;
static bool opt_logwtmp;
static bool opt_radius_lowers;     /* RADIUS may relax pppd's MPPE options */

static int set_peers(char **argv);
static int set_report(char **argv);
static int set_report_fd(char **argv);

#define PLUGIN_OPT(n, t, a, d, f) \
	{ .name = (n), .type = (t), .addr = (a), .description = (d), \
	  .flags = (f) }

static option_t plugin_options[] = {
	PLUGIN_OPT("pptpd-peers", o_special, (void *)set_peers,
	    "pptpd per-peer MPPE policy file", OPT_PRIV),
	PLUGIN_OPT("pptpd-client", o_string, &opt_client,
	    "pptpd: the client's real address", OPT_PRIV),
	PLUGIN_OPT("pptpd-report", o_special, (void *)set_report,
	    "pptpd: UNIX datagram socket for session reports", OPT_PRIV),
	PLUGIN_OPT("pptpd-report-fd", o_special, (void *)set_report_fd,
	    "pptpd: the call's report channel (a descriptor)", OPT_PRIV),
	PLUGIN_OPT("pptpd-call", o_string, &opt_call,
	    "pptpd: session key for reports", OPT_PRIV),
	PLUGIN_OPT("pptpd-logwtmp", o_bool, &opt_logwtmp,
	    "pptpd: write wtmp records for sessions", OPT_PRIV | 1),
	PLUGIN_OPT("pptpd-radius-lowers-mppe", o_bool, &opt_radius_lowers,
	    "pptpd: a RADIUS MPPE policy may be weaker than pppd's options",
	    OPT_PRIV | 1),
	{ .name = NULL }
};

static int
set_peers(char **argv)
{
	char err[PEERS_ERR_MAX];
	struct peers *p;

	if (peers_load(*argv, &p, err, sizeof(err)) < 0) {
		/* pppd prints this and exits: no session with a broken
		 * policy file. */
		ppp_option_error(PLUGIN ": %s", err);
		return 0;
	}
	peers_free(peers);
	peers = p;
	free(peers_path);
	peers_path = strdup(*argv);
	if (peers_path == NULL)
		novm("pptpd-peers path");
	return 1;
}

static int
set_report(char **argv)
{
	if (strlen(*argv) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		ppp_option_error(PLUGIN ": pptpd-report path too long: %s",
		    *argv);
		return 0;
	}
	free(opt_report);
	opt_report = strdup(*argv);
	if (opt_report == NULL)
		novm("pptpd-report path");
	return 1;
}

/* pptpd's end of the call's report channel: a UNIX SOCK_SEQPACKET socket
 * (anything else would take our reports as a byte stream, or nowhere),
 * which pppd's scripts must not inherit. Checked here, when pppd reads its
 * options: a wrong one stops pppd before the call goes any further. */
static int
set_report_fd(char **argv)
{
	int fd = fd_arg_parse(*argv), type = 0, domain = 0;
	socklen_t tl = sizeof(type), dl = sizeof(domain);
	const char *why = NULL;

	if (fd < 0)
		why = "not a descriptor above 2";
	else if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		why = "no such descriptor";
	else if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) < 0 ||
	    type != SOCK_SEQPACKET || domain != AF_UNIX)
		why = "not a UNIX seqpacket socket";
	if (why != NULL) {
		ppp_option_error(PLUGIN ": pptpd-report-fd %s: %s", *argv, why);
		return 0;
	}
	opt_report_fd = fd;
	return 1;
}

/* ---- per-session state (one pppd = one session) ---- */

enum allow_state {
	ALLOW_OFF = 0,  /* policy is not "allow", or already settled */
	ALLOW_PENDING,  /* MPPE offered, the client's stance unknown */
	ALLOW_PLAIN,    /* client does no MPPE: running without it */
};

static bool *refuse_stateful;      /* pppd's refuse_mppe_stateful */
static int defaults_saved;
static ccp_options def_want, def_allow;
static bool def_refuse_stateful;
static int modified;               /* we changed pppd's CCP options */

static const struct peers_rule *rule;
static enum peers_policy policy;   /* PEERS_POLICY_NONE: pppd's options */
static char rule_src[300];         /* "FILE:LINE" or "default" */
static enum allow_state allow_state;
static ccp_options allow_saved;    /* allowoptions before MPPE took over */
static int networks_started;       /* we called continue_networks */
static int told_denied;
static char client[64];            /* client address text */
static int auth_reported, up_reported, down_reported, down_done_reported, wtmp_in;

static void (*prev_snoop_recv)(unsigned char *p, int len);
static int cur_phase;              /* pppd's phase, from our notifier */
static int terminating;            /* LCP is being closed (PHASE_TERMINATE) */

/* The name the peer authenticated with ("" before it has). */
static const char *
peer_name(void)
{
	return ppp_peer_authname(NULL, 0);
}

/* ---- report channel ---- */

static int report_fd = -1;

static void
report_common(struct report_builder *b)
{
	report_add(b, "call", opt_call ? opt_call : "");
	report_add_u64(b, "pid", (uint64_t)getpid());
	report_add(b, "user", peer_name());
	report_add(b, "client", client);
}

/* Never blocks pppd: a report pptpd cannot take now is lost, and said so
 * in pppd's log. On the channel that needs pptpd to leave a whole send
 * buffer unread. */
static void
report_send(struct report_builder *b)
{
	struct sockaddr_un sa;
	int n;

	if (opt_report == NULL && opt_report_fd < 0)
		return;
	n = report_end(b);
	if (n < 0) {
		warn(PLUGIN ": report too long, not sent");
		return;
	}
	if (opt_report_fd >= 0) {
		if (send(opt_report_fd, b->buf, (size_t)n,
		    MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			warn(PLUGIN ": report on descriptor %d: %m", opt_report_fd);
		return;
	}
	if (report_fd < 0) {
		report_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, 0);
		if (report_fd < 0) {
			warn(PLUGIN ": report socket: %m");
			return;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strncpy(sa.sun_path, opt_report, sizeof(sa.sun_path) - 1);
	if (sendto(report_fd, b->buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL,
	    (struct sockaddr *)&sa, sizeof(sa)) < 0)
		warn(PLUGIN ": report to %s: %m", opt_report);
}

/* ---- helpers ---- */

static const char *
mppe_bits_name(int mppe)
{
	switch (mppe & (MPPE_OPT_40 | MPPE_OPT_128)) {
	case MPPE_OPT_128: return "128";
	case MPPE_OPT_40: return "40";
	case MPPE_OPT_40 | MPPE_OPT_128: return "40,128";
	}
	return "none";
}

static const char *
policy_name(void)
{
	return peers_policy_name(policy);
}

/* The client's address: pptpd-client, else remotenumber, else ipparam. */
static void
find_client(void)
{
	const char *c = NULL, *number = ppp_get_remote_number(),
	    *param = ppp_ipparam();

	if (opt_client && *opt_client)
		c = opt_client;
	else if (number && *number)
		c = number;
	else if (param && *param)
		c = param;
	strlcpy(client, c ? c : "", sizeof(client));
}

static void
save_defaults(void)
{
	if (defaults_saved)
		return;
	def_want = ccp_wantoptions[0];
	def_allow = ccp_allowoptions[0];
	if (refuse_stateful)
		def_refuse_stateful = *refuse_stateful;
	defaults_saved = 1;
}

static void
restore_defaults(void)
{
	if (!modified)
		return;
	ccp_wantoptions[0] = def_want;
	ccp_allowoptions[0] = def_allow;
	if (refuse_stateful)
		*refuse_stateful = def_refuse_stateful;
	modified = 0;
}

/* The decision belongs to one authentication, not to the link: when LCP
 * renegotiates, whoever authenticates next starts from pppd's options with
 * nothing pending (an "allow" left pending would let a later require-128
 * user fall back to plaintext), and may need IP started again (pppd's
 * start_networks holds it back for CCP once more). */
static void
reset_decision(void)
{
	restore_defaults();
	rule = NULL;
	policy = PEERS_POLICY_NONE;
	strlcpy(rule_src, "default", sizeof(rule_src));
	allow_state = ALLOW_OFF;
	networks_started = 0;
	told_denied = 0;
	radius_policy_new_auth();
}

static void
reset_session(void)
{
	reset_decision();
	auth_reported = up_reported = down_reported = down_done_reported = 0;
	radius_policy_reset();
}

/* ---- the decision, before CCP opens ---- */

/* pppd's MPPE options for POLICY, with the key strengths BITS (MPPE_OPT_*)
 * allowed by it. */
static void
apply_policy(int bits, enum peers_mode mode)
{
	ccp_options *want = &ccp_wantoptions[0], *allow = &ccp_allowoptions[0];

	allow_saved = *allow;
	modified = 1;
	switch (policy) {
	case PEERS_REQUIRE_128:
	case PEERS_REQUIRE:
	case PEERS_ALLOW:
		want->mppe = bits;
		allow->mppe = bits;
		break;
	case PEERS_DENY:
	case PEERS_POLICY_NONE:
		want->mppe = 0;
		allow->mppe = 0;
		break;
	}
	if (refuse_stateful && mode == PEERS_STATELESS)
		*refuse_stateful = 1;
	else if (refuse_stateful && mode == PEERS_STATEFUL)
		*refuse_stateful = 0;
	if (policy == PEERS_ALLOW)
		allow_state = ALLOW_PENDING;
}

static int
peers_bits(enum peers_policy p)
{
	return p == PEERS_REQUIRE_128 ? MPPE_OPT_128 : MPPE_OPT_128 | MPPE_OPT_40;
}

static int
radius_bits(unsigned types)
{
	return ((types & RADIUS_MPPE_TYPE_128) ? MPPE_OPT_128 : 0) |
	    ((types & RADIUS_MPPE_TYPE_40) ? MPPE_OPT_40 : 0);
}

/* RADIUS' policy RM is weaker than what pppd's options file requires:
 * plaintext allowed where the file requires MPPE, or a key strength the
 * file does not allow.  FreeRADIUS sends Encryption-Allowed for every user
 * by default, so adding RADIUS to a server whose options say
 * require-mppe-128 would otherwise let every client choose plaintext. */
static int
radius_weaker(const struct radius_mppe *rm)
{
	int required = def_want.mppe & (MPPE_OPT_40 | MPPE_OPT_128);

	if (required == 0)
		return 0;
	return rm->policy == PEERS_ALLOW || rm->policy == PEERS_DENY ||
	    (radius_bits(rm->types) & ~required) != 0;
}

/* radius_policy_mppe's answer, unless it would lower pppd's options and
 * pptpd-radius-lowers-mppe does not allow that: then 0, pppd's options
 * apply, and the first such session of this pppd says so. */
static int
radius_decision(struct radius_mppe *rm)
{
	static int told;
	int r = radius_policy_mppe(rm);

	if (r <= 0 || opt_radius_lowers || !radius_weaker(rm))
		return r;
	if (!told) {
		told = 1;
		notice(PLUGIN ": %s (policy %s) is weaker than pppd's options "
		    "(MPPE %s required): ignored, pppd's options apply "
		    "(pptpd-radius-lowers-mppe lets RADIUS lower them)",
		    rm->src, peers_policy_name(rm->policy),
		    mppe_bits_name(def_want.mppe));
	}
	return 0;
}

/* The session's rate limit into the auth report (report.h: rate_down,
 * rate_up, rate_src), which pptpd applies to its ppp interface: RADIUS'
 * WISPr-Bandwidth-Max-Down/-Up for the user if it sent either (the other
 * way then unlimited), else the matched pptpd-peers rule's `rate`, else
 * none.  RADIUS wins here, unlike for MPPE: a rate is the user's plan,
 * which the RADIUS server holds (and a CoA-Request changes), while the
 * file's MPPE rule is this server's floor of security. */
static void
report_rate(struct report_builder *b, const char *who)
{
	uint64_t down = 0, up = 0;
	char src[sizeof(rule_src)], d[24], u[24];

	radius_policy_rate(&down, &up);
	if (down != 0 || up != 0)
		strlcpy(src, "radius", sizeof(src));
	else if (rule != NULL && (rule->rate_down != 0 || rule->rate_up != 0)) {
		down = rule->rate_down;
		up = rule->rate_up;
		slprintf(src, sizeof(src), "%s:%u", peers->file, rule->line);
	} else
		return;
	report_add_u64(b, "rate_down", down);
	report_add_u64(b, "rate_up", up);
	report_add(b, "rate_src", src);
	/* pppd's formatter has no 64-bit conversion: the numbers as text. */
	snprintf(d, sizeof(d), "%llu", (unsigned long long)down);
	snprintf(u, sizeof(u), "%llu", (unsigned long long)up);
	info(PLUGIN ": %q: rate down %s up %s bits/s, 0 = no limit (%s)", who,
	    d, u, src);
}

/* Precedence: a pptpd-peers rule (the operator of this server named the
 * user or the address), then RADIUS' MS-MPPE-Encryption-Policy/-Types
 * for the user (no weaker than pppd's options, unless
 * pptpd-radius-lowers-mppe), then pppd's own options. */
static void
decide(void)
{
	struct report_builder b;
	struct radius_mppe rm;
	ccp_options *want = &ccp_wantoptions[0];
	const char *who = peer_name()[0] ? peer_name() : "(no name)";
	int r = 0;

	find_client();
	rule = peers ? peers_match(peers, peer_name(), client) : NULL;
	if (rule == NULL)
		r = radius_decision(&rm);
	if (r < 0) {
		policy = PEERS_REQUIRE;
		strlcpy(rule_src, rm.src, sizeof(rule_src));
		error(PLUGIN ": %q from %s: %s: encryption required but no "
		    "type pppd can do (40 or 128-bit): refusing the session",
		    who, client[0] ? client : "?", rule_src);
		lcp_close(0, "MPPE required by RADIUS, no usable type");
	} else if (rule == NULL && r == 0) {
		policy = PEERS_POLICY_NONE;
		strlcpy(rule_src, "default", sizeof(rule_src));
		info(PLUGIN ": %q from %s: no rule, pppd's options apply "
		    "(MPPE %s)", who, client[0] ? client : "?",
		    want->mppe ? "required" : "off");
	} else {
		int bits;
		enum peers_mode mode = PEERS_MODE_DEFAULT;

		if (rule != NULL) {
			policy = rule->policy;
			mode = rule->mode;
			bits = peers_bits(policy);
			slprintf(rule_src, sizeof(rule_src), "%s:%u", peers->file,
			    rule->line);
		} else {
			policy = rm.policy;
			bits = radius_bits(rm.types);
			strlcpy(rule_src, rm.src, sizeof(rule_src));
		}
		apply_policy(bits, mode);
		notice(PLUGIN ": %q from %s: MPPE %s%s%s%s (%s)", who,
		    client[0] ? client : "?", policy_name(),
		    mode ? " " : "", mode ? peers_mode_name(mode) : "",
		    rule == NULL && policy != PEERS_DENY &&
		    bits != (MPPE_OPT_128 | MPPE_OPT_40) ?
		    (bits == MPPE_OPT_128 ? " 128-bit" : " 40-bit") : "",
		    rule_src);
		if (want->mppe && !ccp_protent.enabled_flag) {
			/* noccp: pppd would never negotiate MPPE and IP would
			 * run in the clear. */
			error(PLUGIN ": MPPE %s for %q but CCP is disabled "
			    "(noccp): refusing the session", policy_name(), who);
			lcp_close(0, "MPPE required by policy but CCP disabled");
		}
	}

	report_begin(&b, "auth");
	report_common(&b);
	report_add(&b, "policy", policy_name());
	report_add(&b, "rule", rule_src);
	report_add(&b, "mppe_want", mppe_bits_name(want->mppe));
	report_add(&b, "stateful", refuse_stateful && !*refuse_stateful ?
	    "1" : "0");
	if (radius_policy_framed_ip()) {
		/* pppd will give the peer this address (radius.so's
		 * ip_choose_hook): pptpd checks it is nobody else's first. */
		char ip[INET_ADDRSTRLEN];
		struct in_addr a = { .s_addr = radius_policy_framed_ip() };
		inet_ntop(AF_INET, &a, ip, sizeof(ip));
		report_add(&b, "framed_ip", ip);
	}
	if (radius_policy_prefix6() != NULL) {
		/* pptpd routes and advertises this /64 instead of its pool's,
		 * once it has checked it is nobody else's. */
		char p6[INET6_ADDRSTRLEN + 4];
		inet_ntop(AF_INET6, radius_policy_prefix6(), p6, INET6_ADDRSTRLEN);
		strcat(p6, "/64");
		report_add(&b, "framed_ipv6_prefix", p6);
	}
	if (radius_policy_port_limit()) {
		char n[16];
		snprintf(n, sizeof(n), "%u", (unsigned)radius_policy_port_limit());
		report_add(&b, "session_limit", n);
	}
	report_rate(&b, who);
	report_send(&b);
	auth_reported = 1;
}

/* ---- watching the client's CCP packets ("allow", and clear logs) ---- */

/* Find the MPPE option in a CCP option list; its offset or -1. */
static int
find_mppe(const unsigned char *o, int len)
{
	int off = 0;

	while (len - off >= 2) {
		int t = o[off], l = o[off + 1];
		if (l < 2 || l > len - off)
			return -1;
		if (t == CCP_CI_MPPE && l == CCP_CI_MPPE_LEN)
			return off;
		off += l;
	}
	return -1;
}

static void
fall_back(const char *why)
{
	const char *who = peer_name()[0] ? peer_name() : "(no name)";
	ccp_options *allow = &ccp_allowoptions[0];

	allow_state = ALLOW_PLAIN;
	ccp_wantoptions[0].mppe = 0;
	ccp_gotoptions[0].mppe = 0;
	/* The compressors pppd's options allowed, without MPPE. */
	*allow = allow_saved;
	allow->mppe = 0;
	notice(PLUGIN ": %q: %s; policy allow (%s): continuing without MPPE",
	    who, why, rule_src);
	/* start_networks() held IP back waiting for CCP with MPPE. */
	if (!networks_started && lcp_fsm[0].state == OPENED &&
	    cur_phase == PHASE_NETWORK) {
		networks_started = 1;
		continue_networks(0);
	}
}

static void
snoop_recv(unsigned char *p, int len)
{
	int proto, code, clen, off;
	unsigned char *opts;

	if (len >= 8 && policy != PEERS_POLICY_NONE) {
		proto = p[2] << 8 | p[3];
		code = p[4];
		clen = p[6] << 8 | p[7];
		if (clen < 4 || clen > len - 4)
			goto out;
		if (proto == PPP_LCP && code == LCP_PROTREJ && clen >= 6 &&
		    (p[8] << 8 | p[9]) == PPP_CCP) {
			/* The client does not speak CCP at all: pppd's
			 * ccp_protrej closes the link if MPPE is wanted. */
			if (allow_state == ALLOW_PENDING)
				fall_back("client rejected the CCP protocol");
			else if (ccp_gotoptions[0].mppe)
				error(PLUGIN ": client does not do CCP, MPPE "
				    "required by %s (policy %s): "
				    "disconnecting", rule_src, policy_name());
			goto out;
		}
		if (proto != PPP_CCP)
			goto out;
		opts = p + 8;
		off = find_mppe(opts, clen - 4);
		if (code == CCP_CONFREQ) {
			if (allow_state == ALLOW_PENDING) {
				if (off >= 0) {
					allow_state = ALLOW_OFF;
					info(PLUGIN ": client asks for MPPE: "
					    "encrypting (policy allow, %s)",
					    rule_src);
				} else
					fall_back("client's CCP request has "
					    "no MPPE");
			} else if (policy == PEERS_DENY && off >= 0 &&
			    !told_denied) {
				told_denied = 1;
				notice(PLUGIN ": client asks for MPPE, denied "
				    "by %s: it will disconnect if it "
				    "requires MPPE", rule_src);
			}
		} else if (code == CCP_CONFREJ && off >= 0) {
			if (allow_state == ALLOW_PENDING)
				fall_back("client rejected MPPE");
			if (allow_state == ALLOW_PLAIN &&
			    !ccp_gotoptions[0].mppe) {
				/* We no longer ask for MPPE: take it out of
				 * the reject so ccp_rejci accepts the rest. */
				memmove(opts + off, opts + off + CCP_CI_MPPE_LEN,
				    (size_t)(clen - 4 - off - CCP_CI_MPPE_LEN));
				clen -= CCP_CI_MPPE_LEN;
				p[6] = (unsigned char)(clen >> 8);
				p[7] = (unsigned char)clen;
			} else if (policy == PEERS_REQUIRE ||
			    policy == PEERS_REQUIRE_128) {
				error(PLUGIN ": client refused MPPE, which %s "
				    "requires (policy %s): disconnecting",
				    rule_src, policy_name());
			}
		}
	}
out:
	if (prev_snoop_recv)
		prev_snoop_recv(p, len);
}

/* ---- why the peer is told the session ended ---- */

/* The cause of pptpd's last hangup message waiting on the channel
 * (report.h, "From pptpd to the plugin"); REPORT_CAUSE_NONE if none. Never
 * blocks: pptpd sent it before its SIGTERM, so it is there if at all. */
static enum report_cause
hangup_cause(void)
{
	char buf[REPORT_MAX_DGRAM + 1];
	struct report_msg m;
	enum report_cause cause = REPORT_CAUSE_NONE, c;
	const char *why;
	ssize_t n;

	if (opt_report_fd < 0)
		return REPORT_CAUSE_NONE;
	while ((n = recv(opt_report_fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		if (report_parse(&m, buf, (size_t)n, &why) < 0) {
			warn(PLUGIN ": message from pptpd dropped: %s", why);
			continue;
		}
		if (strcmp(m.event, REPORT_EVENT_HANGUP) != 0)
			continue;
		c = report_cause_parse(report_get(&m, "cause"));
		if (c != REPORT_CAUSE_NONE)
			cause = c;
	}
	return cause;
}

/* PHASE_TERMINATE: LCP is closing, so CCP's "MPPE disabled" close would
 * only overwrite the reason (see the top of this file). */
static void
terminate_begins(void)
{
	terminating = 1;
	ccp_gotoptions[0].mppe = 0;
}

/* PHASE_ESTABLISH while LCP closes: inside terminate_layer, after
 * fsm_close set term_reason, before the Terminate-Request is sent. */
static void
terminate_reason(void)
{
	fsm *f = &lcp_fsm[0];
	/* Read in any case: a message that came too late for this close is
	 * not taken for the reason of a later one. */
	enum report_cause cause = hangup_cause();
	const char *text = report_cause_text(cause);

	if (text == NULL || f->state != OPENED || f->term_reason == NULL ||
	    strcmp(f->term_reason, PPPD_SIGNAL_REASON) != 0)
		return;   /* pppd's own reason stands */
	/* A string constant: it outlives every resend. */
	f->term_reason = (char *)text;
	f->term_reason_len = (int)strlen(text);
	notice(PLUGIN ": pptpd hung up (%s): telling the peer \"%s\"",
	    report_cause_name(cause), text);
}

/* ---- notifiers ---- */

static int need_decision;

/* The first phase change after "down" (np_down's PHASE_NETWORK, or
 * link_down's PHASE_ESTABLISH) comes once every ip-down notifier has
 * returned, radius.so's among them: its Accounting-Stop has been answered
 * or given up on. pptpd sends pppd no signal in between (a signal would
 * cut radius.so's wait for the answer short). */
static void
report_down_done(void)
{
	struct report_builder b;
	report_begin(&b, "down_done");
	report_common(&b);
	report_send(&b);
	down_done_reported = 1;
}

static void
on_phase(void *arg, int ph)
{
	(void)arg;
	/* pppd 2.5 keeps its phase to itself: ours is what it told us. */
	cur_phase = ph;
	/* Every plugin is loaded by now: find radius.so's hooks. */
	radius_policy_attach();
	save_defaults();
	if (down_reported && !down_done_reported)
		report_down_done();
	switch (ph) {
	case PHASE_SERIALCONN:
		/* A new link (pppd may run several with `persist`). */
		terminating = 0;
		reset_session();
		break;
	case PHASE_TERMINATE:
		terminate_begins();
		break;
	case PHASE_ESTABLISH:
		if (terminating)
			terminate_reason();
		/* LCP (re)starts (pppd's link_down, then a new
		 * authentication, both in 2.4.9 and 2.5): whoever
		 * authenticates next gets a fresh decision.  (pppd also
		 * enters this phase when LCP goes down before it exits: the
		 * reports' facts are kept.) */
		reset_decision();
		need_decision = 1;
		break;
	case PHASE_NETWORK:
		/* Reached from start_networks() after authentication, and
		 * again from np_down() when IP goes down: decide once. */
		if (need_decision) {
			need_decision = 0;
			restore_defaults();
			decide();
		}
		break;
	}
}

/* pppd's ip_up_hook runs after every ip-up notifier: radius.so has sent
 * its Accounting-Start (and made its Acct-Session-Id) by then. */
static void (*prev_ip_up_hook)(void);

static void
ip_up_report(void)
{
	struct report_builder b;
	int mppe = 0, stateless = 1;
	char local[INET_ADDRSTRLEN], remote[INET_ADDRSTRLEN];
	struct in_addr a;
	const char *sid = radius_policy_session_id();

	/* IPCP came back without a phase change (IPV6CP stayed up, so
	 * np_down never entered PHASE_NETWORK): every ip-down notifier has
	 * long returned, and pptpd waits for this. */
	if (down_reported && !down_done_reported)
		report_down_done();
	if (ccp_fsm[0].state == OPENED) {
		mppe = ccp_gotoptions[0].mppe;
		if (mppe & MPPE_OPT_STATEFUL)
			stateless = 0;
	}
	a.s_addr = ipcp_gotoptions[0].ouraddr;
	inet_ntop(AF_INET, &a, local, sizeof(local));
	a.s_addr = ipcp_hisoptions[0].hisaddr;
	inet_ntop(AF_INET, &a, remote, sizeof(remote));

	report_begin(&b, "up");
	report_common(&b);
	report_add(&b, "ifname", ppp_ifname());
	report_add(&b, "local", local);
	report_add(&b, "ip", remote);
	report_add(&b, "mppe", mppe_bits_name(mppe));
	report_add(&b, "stateless", stateless ? "1" : "0");
	report_add(&b, "policy", policy_name());
	if (sid[0])
		report_add(&b, "acct_session_id", sid);
	report_send(&b);
	up_reported = 1;
	down_reported = down_done_reported = 0;
	if (prev_ip_up_hook)
		prev_ip_up_hook();
}

/* The counters of a link whose IPCP is still up when pppd dies: die()
 * runs cleanup(), whose disestablish_ppp closes the ppp unit, before the
 * exit notifiers (2.4.9 and 2.5.2 alike), and ipcp_down never ran to read
 * them, so on_exit_notify could only report zeros. They are read here,
 * while the unit still exists. */
static ppp_link_stats_st gone_stats;
static int gone_stats_valid, gone_uptime;
static void (*channel_disestablish)(int fd);

static void
disestablish_counted(int fd)
{
	if (up_reported && !down_reported) {
		gone_stats_valid = ppp_read_link_stats(&gone_stats);
		gone_uptime = ppp_get_link_uptime();
	}
	if (channel_disestablish)
		channel_disestablish(fd);
}

/* By IP up the channel is pppd's for good (the tty's, or ours with
 * pptpd-kernel): put disestablish_counted in front of its disestablish. */
static void
watch_disestablish(void)
{
	gone_stats_valid = 0;
	if (the_channel == NULL ||
	    the_channel->disestablish_ppp == disestablish_counted)
		return;
	channel_disestablish = the_channel->disestablish_ppp;
	the_channel->disestablish_ppp = disestablish_counted;
}

static void
on_ip_up(void *arg, int unused)
{
	(void)arg;
	(void)unused;
	watch_disestablish();
	if (opt_logwtmp) {
		logwtmp(ppp_ifname(), peer_name(), client);
		wtmp_in = 1;
	}
}

static void
report_down(void)
{
	struct report_builder b;
	char remote[INET_ADDRSTRLEN];
	struct in_addr a;
	ppp_link_stats_st st;
	int valid, uptime;

	if (gone_stats_valid) {
		/* pppd is dying: the unit is gone, its last counts were kept */
		st = gone_stats;
		valid = 1;
		uptime = gone_uptime;
	} else {
		valid = ppp_get_link_stats(&st);
		uptime = ppp_get_link_uptime();
	}
	a.s_addr = ipcp_hisoptions[0].hisaddr;
	inet_ntop(AF_INET, &a, remote, sizeof(remote));
	report_begin(&b, "down");
	report_common(&b);
	report_add(&b, "ifname", ppp_ifname());
	report_add(&b, "ip", remote);
	report_add_u64(&b, "rx_bytes", valid ? st.bytes_in : 0);
	report_add_u64(&b, "tx_bytes", valid ? st.bytes_out : 0);
	report_add_u64(&b, "rx_packets", valid ? st.pkts_in : 0);
	report_add_u64(&b, "tx_packets", valid ? st.pkts_out : 0);
	report_add_u64(&b, "duration", valid ? (uint64_t)uptime : 0);
	report_send(&b);
	down_reported = 1;
}

static void
on_ip_down(void *arg, int unused)
{
	(void)arg;
	(void)unused;
	/* The counts are this link's: 2.4.9's ipcp_down() updated them just
	 * before notifying, 2.5's ppp_get_link_stats() updates them. */
	if (up_reported && !down_reported)
		report_down();
	if (wtmp_in) {
		logwtmp(ppp_ifname(), "", "");
		wtmp_in = 0;
	}
}

/* IPV6CP up or down on the unit: pptpd routes and advertises the
 * session's /64 (pptpd.conf ipv6-prefix-pool) while it is up. */
static void
report_ipv6(const char *event)
{
	struct report_builder b;

	report_begin(&b, event);
	report_common(&b);
	report_add(&b, "ifname", ppp_ifname());
	report_send(&b);
}

static void
on_ipv6_up(void *arg, int unused)
{
	(void)arg;
	(void)unused;
	report_ipv6("up6");
}

static void
on_ipv6_down(void *arg, int unused)
{
	(void)arg;
	(void)unused;
	report_ipv6("down6");
}

static void
on_exit_notify(void *arg, int st)
{
	struct report_builder b;

	(void)arg;
	if (client[0] == '\0')
		find_client();
	if (up_reported && !down_reported)
		report_down();
	if (wtmp_in) {
		logwtmp(ppp_ifname(), "", "");
		wtmp_in = 0;
	}
	report_begin(&b, "exit");
	report_common(&b);
	report_add_u64(&b, "status", (uint64_t)(st < 0 ? 0 : st));
	report_add(&b, "reason", report_status_name(st));
	report_add(&b, "up", up_reported ? "1" : "0");
	if (radius_policy_auth_failure()) {
		report_add(&b, "auth_failure", radius_policy_auth_failure());
		report_add(&b, "auth_user", radius_policy_auth_user());
	}
	report_send(&b);
}

/* ---- init ---- */

/* pppd checks our pppd_version[] before calling us; we also check that its
 * CCP layer looks like the one we were built against, since we write into
 * its option structures. */
static bool *
find_refuse_stateful(void)
{
	option_t *o;

	if (ccp_protent.protocol != PPP_CCP || ccp_protent.options == NULL)
		return NULL;
	for (o = ccp_protent.options; o->name != NULL; o++)
		if (strcmp(o->name, "mppe-stateful") == 0 && o->type == o_bool)
			return (bool *)o->addr;
	return NULL;
}

PLUGIN_EXPORT void
plugin_init(void)
{
	static int initialized;

	/* Named twice (pptpd passes `plugin` and the options file has it
	 * too): pppd's dlopen returns the same copy and calls us again.
	 * Registering twice would double every report and make our snoop
	 * hook call itself. */
	if (initialized) {
		info(PLUGIN ": already loaded");
		return;
	}
	initialized = 1;
	refuse_stateful = find_refuse_stateful();
	if (refuse_stateful == NULL)
		fatal(PLUGIN ": this pppd's CCP has no MPPE support or is not "
		    "pppd %s (the version this plugin was built for)",
		    PPPD_VERSION);
	ppp_add_options(plugin_options);
	channel_init();
	ppp_add_notify(NF_PHASE_CHANGE, on_phase, NULL);
	ppp_add_notify(NF_IP_UP, on_ip_up, NULL);
	ppp_add_notify(NF_IP_DOWN, on_ip_down, NULL);
	ppp_add_notify(NF_IPV6_UP, on_ipv6_up, NULL);
	ppp_add_notify(NF_IPV6_DOWN, on_ipv6_down, NULL);
	ppp_add_notify(NF_EXIT, on_exit_notify, NULL);
	prev_ip_up_hook = ip_up_hook;
	ip_up_hook = ip_up_report;
	prev_snoop_recv = snoop_recv_hook;
	snoop_recv_hook = snoop_recv;
	strlcpy(rule_src, "default", sizeof(rule_src));
	info(PLUGIN ": plugin for pppd %s loaded", PPPD_VERSION);
}
