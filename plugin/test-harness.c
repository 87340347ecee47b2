/*
 * test-harness.c -- exercise the real pptpd-policy.so outside pppd.
 *
 * This host may have no PPP in its kernel, so pppd cannot run a session.
 * Instead this program plays pppd: it defines the pppd globals and
 * functions the plugin uses (with pppd's own headers, 2.4.9's or 2.5's, so
 * the types are the real ones), dlopen()s the plugin, feeds it options,
 * phase changes and CCP packets the way pppd would, and checks what the
 * plugin did to the CCP options, the packets, the log and the report
 * socket.  It also plays radius.so's exported symbols, to check what the
 * plugin reads from an Access-Accept.  What pppd itself then does with
 * those options is covered by the VM end-to-end test
 * (tests/e2e/test_plugin_policy.sh).
 *
 * The two pppd APIs differ in how a plugin reaches pppd's state (2.4.9:
 * globals; 2.5: functions), so the fake pppd has one section for each,
 * chosen by pppd-compat.h; the tests below drive both through the fake_*
 * functions.
 *
 *   test-harness PLUGIN.so
 */
#include "plugin/pppd-compat.h"
#include <pppd/fsm.h>
#include <pppd/ccp.h>
#include <pppd/ipcp.h>
#include <pppd/lcp.h>
#include <pppd/mppe.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/report.h"

/* ------------------------------------------------------------------ */
/* The fake pppd: what both versions share.                            */

ccp_options ccp_wantoptions[NUM_PPP], ccp_gotoptions[NUM_PPP];
ccp_options ccp_allowoptions[NUM_PPP], ccp_hisoptions[NUM_PPP];
fsm ccp_fsm[NUM_PPP], lcp_fsm[NUM_PPP];
ipcp_options ipcp_gotoptions[NUM_PPP], ipcp_hisoptions[NUM_PPP];
bool refuse_mppe_stateful = 1;
static option_t fake_ccp_options[] = {
	{ .name = "require-mppe", .type = o_bool,
	  .addr = &ccp_wantoptions[0].mppe },
	{ .name = "mppe-stateful", .type = o_bool,
	  .addr = &refuse_mppe_stateful },
	{ .name = NULL },
};
struct protent ccp_protent = { .protocol = 0x80fd, .enabled_flag = 1,
    .name = "CCP", .options = fake_ccp_options };
void (*snoop_recv_hook)(unsigned char *p, int len);
/* pppd runs ip_up_hook right after the ip-up notifiers; the plugin wraps
 * chap_verify_hook when radius.so is loaded (the fake one below). */
void (*ip_up_hook)(void);
chap_verify_hook_fn *chap_verify_hook;
/* The channel (channel.c) is handed to pppd; the harness only checks that
 * the option made it pppd's. */
struct channel *the_channel;

#define FAKE_IFNAME_MAX 32
#define FAKE_DEVNAM_MAX 4096

static char logbuf[65536];
static int n_continue, n_lcp_close, n_wtmp;
static char last_wtmp[3][300];

static void
logit(const char *level, const char *fmt, va_list ap)
{
	char f[512], line[1024];
	const char *s;
	size_t o = 0;

	/* pppd's %q (quoted string) is %s here; %m needs errno. */
	for (s = fmt; *s && o + 3 < sizeof(f); s++) {
		if (s[0] == '%' && s[1] == 'q') {
			f[o++] = '%';
			f[o++] = 's';
			s++;
		} else if (s[0] == '%' && s[1] == 'm') {
			o += (size_t)snprintf(f + o, sizeof(f) - o, "%s",
			    strerror(errno));
			s++;
		} else
			f[o++] = *s;
	}
	f[o] = '\0';
	vsnprintf(line, sizeof(line), f, ap);
	fprintf(stderr, "    [%s] %s\n", level, line);
	strncat(logbuf, line, sizeof(logbuf) - strlen(logbuf) - 2);
	strcat(logbuf, "\n");
}

/* pppd 2.5 made the format arguments const; 2.4.9's are not. */
#if PPPD_COMPAT_25
typedef const char *fake_fmt;
#else
typedef char *fake_fmt;
#endif

#define LOGFN(name) \
	void name(fake_fmt fmt, ...) \
	{ va_list ap; va_start(ap, fmt); logit(#name, fmt, ap); va_end(ap); }
LOGFN(dbglog)
LOGFN(info)
LOGFN(notice)
LOGFN(warn)
LOGFN(error)

/* Non-const in both versions (ppp_option_error is option_error in 2.4.9,
 * by pppd-compat.h). */
void
ppp_option_error(char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	logit("option_error", fmt, ap);
	va_end(ap);
}

void
fatal(fake_fmt fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	logit("fatal", fmt, ap);
	va_end(ap);
	exit(1);
}

void
novm(fake_fmt msg)
{
	fprintf(stderr, "novm: %s\n", msg);
	abort();
}

int
slprintf(char *buf, int len, fake_fmt fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, (size_t)len, fmt, ap);
	va_end(ap);
	return n;
}

size_t
strlcpy(char *dst, const char *src, size_t len)
{
	size_t n = strlen(src);

	if (len) {
		size_t c = n < len - 1 ? n : len - 1;
		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return n;
}

/* The plugin registers more than one list (channel.c has its own). */
#define MAX_OPT_LISTS 4
static option_t *opt_lists[MAX_OPT_LISTS];
static int n_opt_lists;

void
ppp_add_options(option_t *opt)
{
	if (n_opt_lists < MAX_OPT_LISTS)
		opt_lists[n_opt_lists++] = opt;
}

int
ppp_generic_establish(int fd)
{
	return fd;
}

void
ppp_generic_disestablish(int fd)
{
	(void)fd;
}

void
lcp_close(int unit, char *reason)
{
	(void)unit;
	n_lcp_close++;
	strncat(logbuf, "lcp_close: ", sizeof(logbuf) - strlen(logbuf) - 1);
	strncat(logbuf, reason, sizeof(logbuf) - strlen(logbuf) - 2);
	strcat(logbuf, "\n");
}

void
continue_networks(int unit)
{
	(void)unit;
	n_continue++;
}

void
logwtmp(const char *line, const char *name, const char *host)
{
	n_wtmp++;
	snprintf(last_wtmp[0], sizeof(last_wtmp[0]), "%s", line);
	snprintf(last_wtmp[1], sizeof(last_wtmp[1]), "%s", name);
	snprintf(last_wtmp[2], sizeof(last_wtmp[2]), "%s", host);
}

/* pppd's state the tests set and read, under 2.4.9's names: pppd's
 * globals there, our own behind 2.5's functions. */
#if PPPD_COMPAT_25
#define FAKE_STATE static
#else
#define FAKE_STATE
#endif
FAKE_STATE char peer_authname[MAXNAMELEN], remote_number[MAXNAMELEN];
FAKE_STATE char *ipparam;
FAKE_STATE char ifname[FAKE_IFNAME_MAX], devnam[FAKE_DEVNAM_MAX];
FAKE_STATE bool modem = 1;
FAKE_STATE struct pppd_stats link_stats;
FAKE_STATE int link_stats_valid;
FAKE_STATE unsigned link_connect_time;

/* The ppp unit in the kernel: its counters can be read while it exists
 * (pppd holds it open), not once the channel's disestablish_ppp has
 * closed it, as cleanup() does in die() before the exit notifiers. */
static struct {
	int open;
	struct pppd_stats counts;
	unsigned secs;
} fake_unit;

/* update_link_stats: the counters from the unit, when it is there. */
static void
fake_unit_read(void)
{
	if (!fake_unit.open)
		return;
	link_stats = fake_unit.counts;
	link_connect_time = fake_unit.secs;
	link_stats_valid = 1;
}

static void
fake_unit_close(int fd)
{
	(void)fd;
	fake_unit.open = 0;
}

/* pppd's default channel (tty.c): the_channel from before the plugins
 * load until an option (pptpd-kernel) replaces it. */
static struct channel fake_tty_channel = {
	.disestablish_ppp = fake_unit_close,
};

#if PPPD_COMPAT_25
/* ---- pppd 2.5: the state behind functions, notifiers by type ---- */

struct fake_notifier {
	ppp_notify_fn        *func;
	void                 *ctx;
	struct fake_notifier *next;
};
static struct fake_notifier *notifiers[NF_MAX_NOTIFY];

void
ppp_add_notify(ppp_notify_t type, ppp_notify_fn *func, void *ctx)
{
	struct fake_notifier *n = calloc(1, sizeof(*n));

	n->func = func;
	n->ctx = ctx;
	n->next = notifiers[type];
	notifiers[type] = n;
}

static void
fake_notify(ppp_notify_t type, int val)
{
	for (struct fake_notifier *n = notifiers[type]; n; n = n->next)
		n->func(n->ctx, val);
}

static const void *
fake_notifiers(ppp_notify_t type)
{
	return notifiers[type];
}

const char *
ppp_peer_authname(char *buf, size_t bufsz)
{
	if (buf && bufsz > 0) {
		strlcpy(buf, peer_authname, bufsz);
		return buf;
	}
	return peer_authname;
}

/* pppd 2.5.2 returns its (possibly empty) array, never NULL. */
const char *ppp_get_remote_number(void) { return remote_number; }
const char *ppp_ipparam(void) { return ipparam; }
const char *ppp_ifname(void) { return ifname; }
void ppp_set_modem(bool on) { modem = on; }
int ppp_get_link_uptime(void) { return (int)link_connect_time; }

int
ppp_set_devnam(const char *name)
{
	return (int)strlcpy(devnam, name, sizeof(devnam));
}

bool
ppp_get_link_stats(ppp_link_stats_st *stats)
{
	fake_unit_read();          /* 2.5 calls update_link_stats(0) first */
	if (stats == NULL || !link_stats_valid)
		return 0;
	*stats = link_stats;
	return 1;
}

#else
/* ---- pppd 2.4.9: the state in globals, notifiers in lists ---- */

struct notifier *phasechange, *ip_up_notifier, *ip_down_notifier, *exitnotify;
struct notifier *ipv6_up_notifier, *ipv6_down_notifier;
int ifunit;

void
update_link_stats(int u)
{
	(void)u;
	fake_unit_read();
}

void
add_notifier(struct notifier **list, notify_func fn, void *arg)
{
	struct notifier *n = calloc(1, sizeof(*n));

	n->func = fn;
	n->arg = arg;
	n->next = *list;
	*list = n;
}

static struct notifier **
list_of(ppp_notify_t type)
{
	switch (type) {
	case NF_PHASE_CHANGE: return &phasechange;
	case NF_EXIT:         return &exitnotify;
	case NF_IP_UP:        return &ip_up_notifier;
	case NF_IP_DOWN:      return &ip_down_notifier;
	case NF_IPV6_UP:      return &ipv6_up_notifier;
	case NF_IPV6_DOWN:    return &ipv6_down_notifier;
	}
	abort();
}

static void
fake_notify(ppp_notify_t type, int val)
{
	for (struct notifier *n = *list_of(type); n; n = n->next)
		n->func(n->arg, val);
}

static const void *
fake_notifiers(ppp_notify_t type)
{
	return *list_of(type);
}

#endif

static void
fake_set_peer(const char *user, const char *client)
{
	strlcpy(peer_authname, user, sizeof(peer_authname));
	strlcpy(remote_number, client, sizeof(remote_number));
}

static void
fake_set_link_stats(uint64_t in, uint64_t out, unsigned pin, unsigned pout,
    unsigned secs)
{
	link_stats = (struct pppd_stats){ .bytes_in = in, .bytes_out = out,
	    .pkts_in = pin, .pkts_out = pout };
	link_stats_valid = 1;
	link_connect_time = secs;
}

/* The unit's counters from now on (IPCP up, traffic passed). */
static void
fake_unit_counts(uint64_t in, uint64_t out, unsigned pin, unsigned pout,
    unsigned secs)
{
	fake_unit.open = 1;
	fake_unit.counts = (struct pppd_stats){ .bytes_in = in,
	    .bytes_out = out, .pkts_in = pin, .pkts_out = pout };
	fake_unit.secs = secs;
}

/* pppd's die(status): print_link_stats (2.4.9 clears link_stats_valid
 * there), cleanup() (the channel's disestablish_ppp closes the unit),
 * then the exit notifiers. IPCP stays up: ipcp_down never runs. */
static void
fake_die(int status)
{
	if (!PPPD_COMPAT_25)
		link_stats_valid = 0;
	the_channel->disestablish_ppp(-1);
	fake_notify(NF_EXIT, status);
}

static void
fake_set_ifname(const char *name)
{
	strlcpy(ifname, name, sizeof(ifname));
}

static int
fake_modem(void)
{
	return modem;
}

static const char *
fake_devnam(void)
{
	return devnam;
}

/* ------------------------------------------------------------------ */
/* The fake radius.so: the symbols the plugin looks up with dlsym.      */

/* radiusclient's VALUE_PAIR, as radius-policy.c reads it. */
#define RAD_NAME_LENGTH     32
#define RAD_AUTH_STRING_LEN 253
#define RAD_MICROSOFT       311
#define RAD_WISPR           14122   /* WISPr-Bandwidth-Max-Up 7, -Down 8 */
#define RAD_WISPR_UP        7
#define RAD_WISPR_DOWN      8
#define RAD_NONE            (-1)
struct rad_vp {
	char           name[RAD_NAME_LENGTH + 1];
	int            attribute, vendorcode, type;
	uint32_t       lvalue;
	unsigned char  strvalue[RAD_AUTH_STRING_LEN + 1];
	struct rad_vp *next;
};

/* The radius_timeout the fake radiusclient.conf says, in seconds. */
#define FAKE_RADIUS_TIMEOUT 1

void (*radius_attributes_hook)(struct rad_vp *);
static char fake_sid[32];          /* rc_mksid's static buffer */
static struct rad_vp *fake_reply;  /* the next Access-Accept, or NULL */
static int fake_verify_wait;       /* seconds the fake server takes */
/* radius.so 2.4.9: only the first Accept of a pppd goes through the hook
 * (radius_setparams, done_chap_once). */
static int fake_parse_first_only, fake_parsed;

char *
rc_mksid(void)
{
	return fake_sid;
}

int
rc_conf_int(char *name)
{
	return strcmp(name, "radius_timeout") == 0 ? FAKE_RADIUS_TIMEOUT : 0;
}

char *
radius_logged_in_user(void)
{
	return fake_sid;
}

/* radius.so's chap_verify_hook: an Access-Accept goes through
 * radius_attributes_hook before radius.so parses it; no reply is a
 * failure (a reject, or after the wait, no answer). */
static int
fake_radius_verify(char *name, char *ourname, int id,
    struct chap_digest_type *digest, unsigned char *challenge,
    unsigned char *response, char *message, int message_space)
{
	(void)name; (void)ourname; (void)id; (void)digest; (void)challenge;
	(void)response; (void)message; (void)message_space;
	if (fake_verify_wait)
		sleep((unsigned)fake_verify_wait);
	if (fake_reply == NULL)
		return 0;
	if (radius_attributes_hook && !(fake_parse_first_only && fake_parsed))
		radius_attributes_hook(fake_reply);
	fake_parsed = 1;
	return 1;
}

/* A reply of N attributes (vendor, attribute, value), linked. */
struct rad_attr { int vendor, attribute; uint32_t value; };
static struct rad_vp reply_vp[8];
static struct rad_vp *
fake_reply_of(const struct rad_attr *a, int n)
{
	memset(reply_vp, 0, sizeof(reply_vp));
	for (int i = 0; i < n; i++) {
		reply_vp[i].vendorcode = a[i].vendor;
		reply_vp[i].attribute = a[i].attribute;
		reply_vp[i].lvalue = a[i].value;
		reply_vp[i].next = i + 1 < n ? &reply_vp[i + 1] : NULL;
	}
	return reply_vp;
}

/* ------------------------------------------------------------------ */
/* Test plumbing.                                                      */

static int failures, checks;
static int rep_fd = -1;      /* pptpd's end of the report channel */
static int path_fd = -1;     /* the pptpd-report socket */
static int chan[2];
static char num[32];
static char rep_path[108];

#define CHECK(cond) do { \
	checks++; \
	if (!(cond)) { \
		failures++; \
		fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
	} \
} while (0)

static option_t *
opt(const char *name)
{
	option_t *o;

	for (int i = 0; i < n_opt_lists; i++)
		for (o = opt_lists[i]; o && o->name; o++)
			if (strcmp(o->name, name) == 0)
				return o;
	fprintf(stderr, "no option %s\n", name);
	exit(2);
}

/* Apply one option the way pppd's options.c does for these types. */
static int
set_opt(const char *name, const char *value)
{
	option_t *o = opt(name);
	char *argv[2] = { (char *)value, NULL };

	switch (o->type) {
	case o_special:
		return ((int (*)(char **))o->addr)(argv);
	case o_string:
		*(char **)o->addr = strdup(value);
		return 1;
	case o_bool:
		*(bool *)o->addr = (bool)(o->flags & OPT_VALUE);
		return 1;
	default:
		return 0;
	}
}

static void
set_phase(int p)
{
	fake_notify(NF_PHASE_CHANGE, p);
}

/* What pppd's options file said: require-mppe-128 (wantoptions gets 128,
 * allowoptions the "junk" 128), deflate/bsd as after ccp_init. */
static void
options_file_require_128(void)
{
	memset(ccp_wantoptions, 0, sizeof(ccp_wantoptions));
	memset(ccp_allowoptions, 0, sizeof(ccp_allowoptions));
	ccp_wantoptions[0].mppe = MPPE_OPT_128;
	ccp_allowoptions[0].mppe = MPPE_OPT_128;
	ccp_wantoptions[0].deflate = 1;
	ccp_allowoptions[0].deflate = 1;
	ccp_allowoptions[0].bsd_compress = 1;
	refuse_mppe_stateful = 1;
}

/* ccp_open -> ccp_resetci, the part that matters here. */
static void
ccp_open_sim(void)
{
	ccp_gotoptions[0] = ccp_wantoptions[0];
	if (ccp_gotoptions[0].mppe) {
		ccp_allowoptions[0].mppe = ccp_gotoptions[0].mppe;
		ccp_allowoptions[0].deflate = ccp_gotoptions[0].deflate = 0;
		ccp_allowoptions[0].bsd_compress = 0;
		ccp_gotoptions[0].bsd_compress = 0;
	}
	ccp_fsm[0].state = REQSENT;
}

/* A new session up to the peer's authentication. */
static void
session_auth(const char *user, const char *client)
{
	set_phase(PHASE_SERIALCONN);
	set_phase(PHASE_ESTABLISH);
	lcp_fsm[0].state = OPENED;
	ccp_fsm[0].state = INITIAL;
	memset(ccp_gotoptions, 0, sizeof(ccp_gotoptions));
	fake_set_peer(user, client);
	n_continue = n_lcp_close = 0;
	logbuf[0] = '\0';
	set_phase(PHASE_AUTHENTICATE);
}

/* Authenticated: pppd enters the network phase and opens CCP. */
static void
session_network(void)
{
	set_phase(PHASE_NETWORK);
	ccp_open_sim();
}

/* A new session up to the point where pppd opens CCP. */
static void
session(const char *user, const char *client)
{
	session_auth(user, client);
	session_network();
}

/* The client renegotiates LCP and authenticates again, as USER: pppd's
 * link_down (CCP goes down with LCP) enters PHASE_ESTABLISH, LCP opens
 * again, the peer authenticates, and start_networks opens CCP. */
static void
renegotiate_auth(const char *user)
{
	set_phase(PHASE_ESTABLISH);
	ccp_fsm[0].state = INITIAL;
	memset(ccp_gotoptions, 0, sizeof(ccp_gotoptions));
	lcp_fsm[0].state = OPENED;
	fake_set_peer(user, remote_number);
	n_continue = n_lcp_close = 0;
	logbuf[0] = '\0';
	set_phase(PHASE_AUTHENTICATE);
}

static void
renegotiate(const char *user)
{
	renegotiate_auth(user);
	session_network();
}

/* radius.so verifies USER, its server answering with REPLY (NULL: no
 * Access-Accept): what chap_verify_hook said; on success pppd goes on to
 * the network phase. */
static int
radius_verify_as(const char *user, struct rad_vp *reply)
{
	unsigned char challenge[1] = { 0 }, response[1] = { 0 };
	char message[64];
	int ok;

	fake_reply = reply;
	ok = chap_verify_hook((char *)user, "pptpd", 1, NULL, challenge,
	    response, message, sizeof(message));
	if (ok)
		session_network();
	return ok;
}

/* A new session radius.so authenticates; as radius_verify_as. */
static int
radius_session(const char *user, const char *client, struct rad_vp *reply)
{
	session_auth(user, client);
	return radius_verify_as(user, reply);
}

/* LCP renegotiated on the same link, and radius.so authenticates USER
 * again; as radius_session. */
static int
radius_renegotiate(const char *user, struct rad_vp *reply)
{
	renegotiate_auth(user);
	return radius_verify_as(user, reply);
}

/* A received CCP packet as pppd's get_input hands it to the hook:
 * FF 03, protocol, code, id, length, options. */
static int
ccp_packet(unsigned char *buf, int code, const unsigned char *opts, int olen)
{
	int len = 4 + olen;

	buf[0] = 0xff;
	buf[1] = 0x03;
	buf[2] = 0x80;
	buf[3] = 0xfd;
	buf[4] = (unsigned char)code;
	buf[5] = 1;
	buf[6] = (unsigned char)(len >> 8);
	buf[7] = (unsigned char)len;
	if (olen)
		memcpy(buf + 8, opts, (size_t)olen);
	return 8 + olen;
}

static const unsigned char MPPE_128_STATELESS[] = { 18, 6, 0x01, 0, 0, 0x40 };
static const unsigned char DEFLATE[] = { 26, 4, 0x78, 0x00 };

static void
feed(int code, const unsigned char *o1, int l1, const unsigned char *o2,
    int l2, unsigned char *out, int *outlen)
{
	unsigned char opts[64];
	int n;

	if (o1)
		memcpy(opts, o1, (size_t)l1);
	if (o2)
		memcpy(opts + l1, o2, (size_t)l2);
	n = ccp_packet(out, code, opts, l1 + l2);
	snoop_recv_hook(out, n);
	*outlen = n;
}

static int
ccp_len(const unsigned char *pkt)
{
	return pkt[6] << 8 | pkt[7];
}

/* The next report datagram, parsed; NULL if none arrives. */
static struct report_msg rmsg;
static struct report_msg *
next_report(void)
{
	char buf[REPORT_MAX_DGRAM + 1];
	const char *why;
	ssize_t n = recv(rep_fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n < 0)
		return NULL;
	fprintf(stderr, "    report: %.*s\n", (int)n, buf);
	if (report_parse(&rmsg, buf, (size_t)n, &why) < 0) {
		fprintf(stderr, "FAIL: bad report (%s)\n", why);
		failures++;
		return NULL;
	}
	return &rmsg;
}

static void
drain_reports(void)
{
	while (next_report())
		;
}

static int
field_is(struct report_msg *m, const char *k, const char *v)
{
	const char *x = m ? report_get(m, k) : NULL;

	if (x == NULL || strcmp(x, v) != 0) {
		fprintf(stderr, "    field %s is '%s', want '%s'\n", k,
		    x ? x : "(absent)", v);
		return 0;
	}
	return 1;
}

/* ------------------------------------------------------------------ */
/* pppd ending LCP, as 2.4.9 and 2.5.2 do it (fsm.c, lcp.c, auth.c,
 * ccp.c): the order of these steps is what the plugin relies on to give
 * the peer the right reason.                                           */

#define SIM_MAX_TERMREQ 4
static char termreq[SIM_MAX_TERMREQ][64];  /* the reasons sent, in order */
static int n_termreq;

/* fsm_sdata(TERMREQ): the reason is term_reason, whatever it is now. */
static void
sim_send_termreq(void)
{
	fsm *f = &lcp_fsm[0];

	if (n_termreq < SIM_MAX_TERMREQ)
		snprintf(termreq[n_termreq], sizeof(termreq[0]), "%.*s",
		    f->term_reason_len, f->term_reason ? f->term_reason : "");
	n_termreq++;
}

static void sim_lcp_close(const char *reason);

/* ccp_down: a link that had MPPE must not run on without it. */
static void
sim_ccp_down(void)
{
	if (ccp_gotoptions[0].mppe) {
		ccp_gotoptions[0].mppe = 0;
		if (lcp_fsm[0].state == OPENED)
			sim_lcp_close("MPPE disabled");
	}
	ccp_fsm[0].state = INITIAL;
}

/* lcp_close -> fsm_close -> terminate_layer; the down callback is
 * lcp_down -> link_down: upper layers down (CCP among them), then
 * new_phase(PHASE_ESTABLISH). */
static void
sim_lcp_close(const char *reason)
{
	fsm *f = &lcp_fsm[0];

	set_phase(PHASE_TERMINATE);
	f->term_reason = (char *)reason;
	f->term_reason_len = (int)strlen(reason);
	if (f->state == OPENED) {
		sim_ccp_down();
		set_phase(PHASE_ESTABLISH);
	}
	sim_send_termreq();
	f->state = CLOSING;
}

/* fsm_timeout in CLOSING: the Terminate-Request again. */
static void
sim_lcp_resend(void)
{
	sim_send_termreq();
}

/* An encrypted session up, then pptpd's message (cause token CAUSE, NULL:
 * none) and pppd ending LCP with REASON, one resend. */
static void
sim_session_ends(const char *cause, const char *reason)
{
	options_file_require_128();
	session("dave", "198.18.0.9");
	ccp_fsm[0].state = OPENED;
	CHECK(ccp_gotoptions[0].mppe == MPPE_OPT_128);
	drain_reports();
	if (cause != NULL) {
		struct report_builder b;
		report_begin(&b, REPORT_EVENT_HANGUP);
		report_add(&b, "call", "7");
		report_add(&b, "cause", cause);
		CHECK(report_end(&b) > 0 &&
		    send(rep_fd, b.buf, b.len, 0) == (ssize_t)b.len);
	}
	n_termreq = 0;
	logbuf[0] = '\0';
	sim_lcp_close(reason);
	sim_lcp_resend();
}

static int
termreqs_say(const char *text)
{
	int ok = n_termreq == 2;

	for (int i = 0; i < n_termreq && i < SIM_MAX_TERMREQ; i++) {
		fprintf(stderr, "    TermReq %d: \"%s\"\n", i, termreq[i]);
		ok = ok && strcmp(termreq[i], text) == 0;
	}
	return ok;
}

static void
test_term_reason(void)
{
	fprintf(stderr, "== hang-up reasons: pptpctl kill / RADIUS DR\n");
	sim_session_ends("admin", PPPD_SIGNAL_REASON);
	CHECK(termreqs_say("Administrative hang-up"));
	CHECK(strstr(logbuf, "MPPE disabled") == NULL);
	CHECK(strstr(logbuf, "pptpd hung up (admin)") != NULL);

	fprintf(stderr, "== hang-up reasons: pptpd stopping\n");
	sim_session_ends("shutdown", PPPD_SIGNAL_REASON);
	CHECK(termreqs_say("Server shutdown"));

	fprintf(stderr, "== hang-up reasons: SIGTERM from elsewhere\n");
	sim_session_ends(NULL, PPPD_SIGNAL_REASON);
	CHECK(termreqs_say(PPPD_SIGNAL_REASON));

	fprintf(stderr, "== hang-up reasons: a cause we do not know\n");
	sim_session_ends("reboot", PPPD_SIGNAL_REASON);
	CHECK(termreqs_say(PPPD_SIGNAL_REASON));

	fprintf(stderr, "== hang-up reasons: pppd's own (maxconnect, idle)\n");
	sim_session_ends(NULL, "Connect time expired");
	CHECK(termreqs_say("Connect time expired"));
	/* pptpd's message came, but pppd was ending for its own reason. */
	sim_session_ends("admin", "Link inactive");
	CHECK(termreqs_say("Link inactive"));
	/* ...and it was taken off the channel: the next session's SIGTERM
	 * from elsewhere is not called pptpd's. */
	sim_session_ends(NULL, PPPD_SIGNAL_REASON);
	CHECK(termreqs_say(PPPD_SIGNAL_REASON));

	fprintf(stderr, "== hang-up reasons: MPPE lost, LCP up: still "
	    "closed, \"MPPE disabled\"\n");
	options_file_require_128();
	session("dave", "198.18.0.9");
	ccp_fsm[0].state = OPENED;
	n_termreq = 0;
	sim_ccp_down();
	sim_lcp_resend();
	CHECK(lcp_fsm[0].state == CLOSING);
	CHECK(termreqs_say("MPPE disabled"));

	fprintf(stderr, "== hang-up reasons: the tokens and texts\n");
	CHECK(report_cause_parse("admin") == REPORT_CAUSE_ADMIN);
	CHECK(report_cause_parse("shutdown") == REPORT_CAUSE_SHUTDOWN);
	CHECK(report_cause_parse("") == REPORT_CAUSE_NONE);
	CHECK(report_cause_parse(NULL) == REPORT_CAUSE_NONE);
	CHECK(report_cause_name(REPORT_CAUSE_NONE) == NULL);
	CHECK(report_cause_text(REPORT_CAUSE_NONE) == NULL);
	CHECK(strcmp(report_cause_name(REPORT_CAUSE_SHUTDOWN), "shutdown") == 0);
	drain_reports();
}

/* ------------------------------------------------------------------ */
/* Rate limits in the auth report: RADIUS' WISPr attributes, else the
 * peers rule's `rate` (henry: line 7, 4M/1M; ivan: line 8, 0/256k).     */

/* M is an auth report with exactly this rate and source. */
static int
rate_is(struct report_msg *m, const char *down, const char *up,
    const char *src)
{
	return m != NULL && strcmp(m->event, "auth") == 0 &&
	    field_is(m, "rate_down", down) && field_is(m, "rate_up", up) &&
	    field_is(m, "rate_src", src);
}

/* M is an auth report without a rate. */
static int
no_rate(struct report_msg *m)
{
	return m != NULL && strcmp(m->event, "auth") == 0 &&
	    report_get(m, "rate_down") == NULL &&
	    report_get(m, "rate_up") == NULL &&
	    report_get(m, "rate_src") == NULL;
}

static void
test_rates(const char *peers_file)
{
	static const struct rad_attr both[] = {
		{ RAD_WISPR, RAD_WISPR_DOWN, 2000000 },
		{ RAD_WISPR, RAD_WISPR_UP, 500000 },
	};
	static const struct rad_attr down_only[] = {
		{ RAD_WISPR, RAD_WISPR_DOWN, 3000000 },
	};
	/* Microsoft's 7 and 8 are MPPE, not rates: the vendor counts. */
	static const struct rad_attr mppe[] = {
		{ RAD_MICROSOFT, 7, 2 }, { RAD_MICROSOFT, 8, 4 },
	};
	static const struct rad_attr low[] = {
		{ RAD_WISPR, RAD_WISPR_DOWN, 7999 },
		{ RAD_WISPR, RAD_WISPR_UP, 8000 },
	};
	static const struct rad_attr repeated[] = {
		{ RAD_WISPR, RAD_WISPR_UP, 64000 },
		{ RAD_WISPR, RAD_WISPR_UP, 128000 },
	};
	char henry[128], ivan[128];
	struct report_msg *m;

	snprintf(henry, sizeof(henry), "%s:7", peers_file);
	snprintf(ivan, sizeof(ivan), "%s:8", peers_file);

	fprintf(stderr, "== rate: a peers rule's rate, in bits/s\n");
	drain_reports();
	session("henry", "198.18.0.7");
	m = next_report();
	CHECK(rate_is(m, "4000000", "1000000", henry));
	CHECK(field_is(m, "policy", "allow"));
	CHECK(strstr(logbuf, "henry: rate down 4000000 up 1000000 bits/s") !=
	    NULL);
	session("ivan", "198.18.0.7");
	m = next_report();
	CHECK(rate_is(m, "0", "256000", ivan));
	session("alice", "198.18.0.2");     /* a rule without a rate */
	CHECK(no_rate(next_report()));
	session("nobody", "198.18.9.9");    /* no rule at all */
	CHECK(no_rate(next_report()));
	CHECK(strstr(logbuf, "rate down") == NULL);

	fprintf(stderr, "== rate: RADIUS' WISPr attributes win over the rule\n");
	drain_reports();
	CHECK(radius_session("henry", "198.18.0.7",
	    fake_reply_of(both, 2)) == 1);
	m = next_report();
	CHECK(rate_is(m, "2000000", "500000", "radius"));
	CHECK(field_is(m, "rule", henry));  /* MPPE: the rule still wins */
	CHECK(strstr(logbuf, "rate down 2000000 up 500000 bits/s, 0 = no "
	    "limit (radius)") != NULL);
	/* One way sent: the other is unlimited, not the rule's. */
	CHECK(radius_session("henry", "198.18.0.7",
	    fake_reply_of(down_only, 1)) == 1);
	CHECK(rate_is(next_report(), "3000000", "0", "radius"));
	/* None sent: the rule's. */
	CHECK(radius_session("henry", "198.18.0.7",
	    fake_reply_of(mppe, 2)) == 1);
	CHECK(rate_is(next_report(), "4000000", "1000000", henry));
	CHECK(radius_session("frank", "198.18.7.1",
	    fake_reply_of(mppe, 2)) == 1);
	CHECK(no_rate(next_report()));

	fprintf(stderr, "== rate: a WISPr value under 8k is ignored, said\n");
	CHECK(radius_session("frank", "198.18.7.1",
	    fake_reply_of(low, 2)) == 1);
	CHECK(rate_is(next_report(), "0", "8000", "radius"));
	CHECK(strstr(logbuf, "WISPr-Bandwidth-Max-Down 7999 bits/s: "
	    "ignored") != NULL);
	CHECK(strstr(logbuf, "WISPr-Bandwidth-Max-Up 8000") == NULL);
	/* Repeated: the first counts. */
	CHECK(radius_session("frank", "198.18.7.1",
	    fake_reply_of(repeated, 2)) == 1);
	CHECK(rate_is(next_report(), "0", "64000", "radius"));

	fprintf(stderr, "== rate: LCP renegotiated: the first "
	    "authentication's RADIUS rate is not kept\n");
	CHECK(radius_session("frank", "198.18.7.1",
	    fake_reply_of(both, 2)) == 1);
	CHECK(rate_is(next_report(), "2000000", "500000", "radius"));
	CHECK(radius_renegotiate("grace", fake_reply_of(mppe, 2)) == 1);
	m = next_report();
	CHECK(field_is(m, "user", "grace") && no_rate(m));
	/* ...and a rule's rate applies again once RADIUS sends none. */
	CHECK(radius_renegotiate("henry", fake_reply_of(both, 2)) == 1);
	CHECK(rate_is(next_report(), "2000000", "500000", "radius"));
	CHECK(radius_renegotiate("henry", fake_reply_of(mppe, 2)) == 1);
	CHECK(rate_is(next_report(), "4000000", "1000000", henry));
	/* A renegotiation without RADIUS (pppd's own secrets) neither. */
	CHECK(radius_session("frank", "198.18.7.1",
	    fake_reply_of(both, 2)) == 1);
	drain_reports();
	renegotiate("ivan");
	CHECK(rate_is(next_report(), "0", "256000", ivan));
	drain_reports();
}

/* ------------------------------------------------------------------ */

int
main(int argc, char **argv)
{
	char peers_file[] = "/tmp/pptpd-policy-test.XXXXXX";
	const char *peers_text =
	    "# test policy\n"
	    "user alice require-128\n"
	    "user bob allow\n"
	    "user carol deny\n"
	    "user erin require stateful\n"
	    "address 198.18.5.0/24 deny stateless\n"
	    "user henry allow rate 4M/1M\n"
	    "user ivan deny stateless rate 0/256k\n";
	struct sockaddr_un sa;
	unsigned char pkt[256];
	int fd, n, plen;
	void *h;
	void (*init)(void);
	const char *ver;
	struct report_msg *m;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
		return 2;
	}
	the_channel = &fake_tty_channel;   /* pppd's tty_init() */
	h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (h == NULL) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	ver = dlsym(h, "pppd_version");
	init = (void (*)(void))dlsym(h, "plugin_init");
	/* radius.so, loaded before us, took pppd's CHAP verification. */
	chap_verify_hook = fake_radius_verify;
	CHECK(ver != NULL && strcmp(ver, PPPD_VERSION) == 0);
	CHECK(init != NULL);
	if (!init)
		return 1;
	init();
	CHECK(n_opt_lists > 0);
	{
		void (*hook)(unsigned char *, int) = snoop_recv_hook;
		const void *pc = fake_notifiers(NF_PHASE_CHANGE);
		init(); /* loaded twice: no second registration */
		CHECK(snoop_recv_hook == hook &&
		    fake_notifiers(NF_PHASE_CHANGE) == pc);
		CHECK(strstr(logbuf, "already loaded") != NULL);
	}
	CHECK(snoop_recv_hook != NULL);
	CHECK(strstr(logbuf, "plugin for pppd " PPPD_VERSION " loaded") != NULL);

	/* A report socket for pptpd-report (without pptpd), and the call's
	 * report channel as pptpd passes it (pptpd-report-fd), which wins:
	 * the reports below arrive on the channel. */
	snprintf(rep_path, sizeof(rep_path), "/tmp/pptpd-policy-rep.%d",
	    (int)getpid());
	unlink(rep_path);
	path_fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, rep_path);
	CHECK(bind(path_fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, chan) == 0);
	rep_fd = chan[0];

	/* Options. */
	fd = mkstemp(peers_file);
	CHECK(fd >= 0 && write(fd, "user x alow\n", 12) == 12);
	close(fd);
	logbuf[0] = '\0';
	CHECK(set_opt("pptpd-peers", peers_file) == 0);
	CHECK(strstr(logbuf, ":1: unknown policy 'alow'") != NULL);
	{
		static const char utf8[] = "user ren\xc3\xa9 deny\n";
		fd = open(peers_file, O_WRONLY | O_TRUNC);
		CHECK(write(fd, utf8, strlen(utf8)) == (ssize_t)strlen(utf8));
		close(fd);
	}
	CHECK(set_opt("pptpd-peers", peers_file) == 0);   /* pppd says M-CM-) */
	CHECK(strstr(logbuf, ":1: user name with a byte outside ASCII: pppd "
	    "reports that peer as 'renM-CM-)'") != NULL);
	CHECK(set_opt("pptpd-peers", "/nonexistent/peers") == 0);
	CHECK(strstr(logbuf, "/nonexistent/peers: cannot open") != NULL);
	fd = open(peers_file, O_WRONLY | O_TRUNC);
	CHECK(write(fd, peers_text, strlen(peers_text)) ==
	    (ssize_t)strlen(peers_text));
	close(fd);
	CHECK(set_opt("pptpd-peers", peers_file) == 1);
	CHECK(set_opt("pptpd-report", "/tmp/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxx") == 0);
	CHECK(set_opt("pptpd-report", rep_path) == 1);
	fprintf(stderr, "== pptpd-report-fd: pptpd's channel, checked\n");
	logbuf[0] = '\0';
	CHECK(set_opt("pptpd-report-fd", "2") == 0);
	CHECK(strstr(logbuf, "pptpd-report-fd 2: not a descriptor above 2"));
	CHECK(set_opt("pptpd-report-fd", "4x") == 0);
	snprintf(num, sizeof(num), "%d", path_fd);   /* a datagram socket */
	CHECK(set_opt("pptpd-report-fd", num) == 0);
	CHECK(strstr(logbuf, "not a UNIX seqpacket socket"));
	fd = open("/dev/null", O_RDONLY);
	snprintf(num, sizeof(num), "%d", fd);
	close(fd);
	CHECK(set_opt("pptpd-report-fd", num) == 0);
	CHECK(strstr(logbuf, "no such descriptor"));
	snprintf(num, sizeof(num), "%d", chan[1]);
	CHECK(set_opt("pptpd-report-fd", num) == 1);
	CHECK(fcntl(chan[1], F_GETFD) == FD_CLOEXEC);   /* not for scripts */
	CHECK(set_opt("pptpd-call", "42") == 1);
	CHECK(set_opt("pptpd-logwtmp", NULL) == 1);
	fake_set_ifname("ppp7");

	options_file_require_128();

	fprintf(stderr, "== alice: require-128, client refuses MPPE\n");
	session("alice", "198.18.0.2");
	CHECK(ccp_wantoptions[0].mppe == MPPE_OPT_128);
	CHECK(ccp_allowoptions[0].mppe == MPPE_OPT_128);
	m = next_report();
	CHECK(m && strcmp(m->event, "auth") == 0);
	CHECK(field_is(m, "call", "42") && field_is(m, "user", "alice") &&
	    field_is(m, "client", "198.18.0.2") &&
	    field_is(m, "policy", "require-128") &&
	    field_is(m, "mppe_want", "128") && field_is(m, "stateful", "0"));
	CHECK(m && strstr(report_get(m, "rule"), ":2") != NULL);
	feed(1, NULL, 0, NULL, 0, pkt, &plen);
	feed(4, MPPE_128_STATELESS, 6, NULL, 0, pkt, &plen);
	CHECK(ccp_len(pkt) == 10); /* untouched: pppd closes the link */
	CHECK(n_continue == 0);
	CHECK(strstr(logbuf, "client refused MPPE, which") != NULL);

	fprintf(stderr, "== bob: allow, client asks for MPPE\n");
	session("bob", "198.18.0.3");
	CHECK(ccp_wantoptions[0].mppe == (MPPE_OPT_128 | MPPE_OPT_40));
	CHECK(ccp_allowoptions[0].mppe == (MPPE_OPT_128 | MPPE_OPT_40));
	m = next_report();
	CHECK(field_is(m, "policy", "allow") && field_is(m, "mppe_want", "40,128"));
	feed(1, MPPE_128_STATELESS, 6, NULL, 0, pkt, &plen);
	CHECK(ccp_len(pkt) == 10);
	CHECK(ccp_gotoptions[0].mppe != 0);
	CHECK(n_continue == 0); /* ccp_up will start IP */
	CHECK(strstr(logbuf, "client asks for MPPE: encrypting") != NULL);
	/* A later reject is pppd's business again (stays "required"). */
	feed(4, MPPE_128_STATELESS, 6, NULL, 0, pkt, &plen);
	CHECK(ccp_len(pkt) == 10);

	fprintf(stderr, "== bob: allow, client's request has no MPPE\n");
	session("bob", "198.18.0.3");
	drain_reports();
	feed(1, DEFLATE, 4, NULL, 0, pkt, &plen);
	CHECK(ccp_len(pkt) == 8);
	CHECK(ccp_wantoptions[0].mppe == 0);
	CHECK(ccp_gotoptions[0].mppe == 0);
	CHECK(ccp_allowoptions[0].mppe == 0);
	CHECK(ccp_allowoptions[0].deflate == 1); /* options file's compressors */
	CHECK(n_continue == 1);
	CHECK(strstr(logbuf, "continuing without MPPE") != NULL);
	/* Its reject of our (old) MPPE request loses the MPPE option. */
	feed(4, MPPE_128_STATELESS, 6, DEFLATE, 4, pkt, &plen);
	CHECK(ccp_len(pkt) == 8);
	CHECK(pkt[8] == 26 && pkt[9] == 4);
	feed(4, MPPE_128_STATELESS, 6, NULL, 0, pkt, &plen);
	CHECK(ccp_len(pkt) == 4);
	CHECK(n_continue == 1);

	fprintf(stderr, "== bob: allow, client rejects MPPE first\n");
	session("bob", "198.18.0.3");
	drain_reports();
	feed(4, MPPE_128_STATELESS, 6, NULL, 0, pkt, &plen);
	CHECK(ccp_len(pkt) == 4);
	CHECK(ccp_gotoptions[0].mppe == 0 && ccp_wantoptions[0].mppe == 0);
	CHECK(n_continue == 1);
	/* An empty client request afterwards changes nothing. */
	feed(1, NULL, 0, NULL, 0, pkt, &plen);
	CHECK(n_continue == 1);
	CHECK(n_lcp_close == 0);

	fprintf(stderr, "== bob: allow, client protocol-rejects CCP\n");
	session("bob", "198.18.0.3");
	drain_reports();
	{
		static const unsigned char protrej[] = { 0xff, 0x03, 0xc0, 0x21,
		    8, 3, 0, 10, 0x80, 0xfd, 1, 1, 0, 4 };
		memcpy(pkt, protrej, sizeof(protrej));
		snoop_recv_hook(pkt, sizeof(protrej));
	}
	CHECK(ccp_gotoptions[0].mppe == 0 && ccp_wantoptions[0].mppe == 0);
	CHECK(n_continue == 1);
	CHECK(strstr(logbuf, "client rejected the CCP protocol") != NULL);

	fprintf(stderr, "== LCP renegotiation: bob (allow, no CCP yet), then "
	    "alice (require-128) sends CCP without MPPE\n");
	session("bob", "198.18.0.3");
	drain_reports();
	renegotiate("alice");
	m = next_report();
	CHECK(field_is(m, "user", "alice") &&
	    field_is(m, "policy", "require-128"));
	CHECK(ccp_wantoptions[0].mppe == MPPE_OPT_128);
	feed(1, DEFLATE, 4, NULL, 0, pkt, &plen);
	CHECK(ccp_gotoptions[0].mppe == MPPE_OPT_128);  /* still required */
	CHECK(ccp_wantoptions[0].mppe == MPPE_OPT_128);
	CHECK(n_continue == 0);                         /* no IP in the clear */
	CHECK(strstr(logbuf, "continuing without MPPE") == NULL);
	/* Its reject of MPPE is pppd's to act on: the link closes. */
	feed(4, MPPE_128_STATELESS, 6, NULL, 0, pkt, &plen);
	CHECK(ccp_len(pkt) == 10);
	CHECK(strstr(logbuf, "client refused MPPE, which") != NULL);

	fprintf(stderr, "== LCP renegotiation: bob fell back to plaintext, "
	    "renegotiates, falls back again: IP starts again\n");
	session("bob", "198.18.0.3");
	drain_reports();
	feed(1, DEFLATE, 4, NULL, 0, pkt, &plen);
	CHECK(n_continue == 1);
	renegotiate("bob");
	m = next_report();
	CHECK(field_is(m, "policy", "allow"));
	CHECK(ccp_wantoptions[0].mppe == (MPPE_OPT_128 | MPPE_OPT_40));
	feed(1, DEFLATE, 4, NULL, 0, pkt, &plen);
	CHECK(ccp_wantoptions[0].mppe == 0 && ccp_gotoptions[0].mppe == 0);
	CHECK(n_continue == 1);   /* start_networks held IP back again */

	fprintf(stderr, "== LCP renegotiation: carol (deny) was told, then "
	    "carol again asks for MPPE: told again\n");
	session("carol", "198.18.0.4");
	drain_reports();
	feed(1, MPPE_128_STATELESS, 6, NULL, 0, pkt, &plen);
	renegotiate("carol");
	drain_reports();
	feed(1, MPPE_128_STATELESS, 6, NULL, 0, pkt, &plen);
	CHECK(strstr(logbuf, "client asks for MPPE, denied") != NULL);

	fprintf(stderr, "== carol: deny (options file says require-mppe-128)\n");
	session("carol", "198.18.0.4");
	CHECK(ccp_wantoptions[0].mppe == 0);
	CHECK(ccp_allowoptions[0].mppe == 0);
	CHECK(ccp_gotoptions[0].mppe == 0);
	m = next_report();
	CHECK(field_is(m, "policy", "deny") && field_is(m, "mppe_want", "none"));
	feed(1, MPPE_128_STATELESS, 6, NULL, 0, pkt, &plen);
	CHECK(ccp_len(pkt) == 10);
	CHECK(strstr(logbuf, "client asks for MPPE, denied") != NULL);

	fprintf(stderr, "== erin: require, stateful\n");
	session("erin", "198.18.0.5");
	CHECK(ccp_wantoptions[0].mppe == (MPPE_OPT_128 | MPPE_OPT_40));
	CHECK(refuse_mppe_stateful == 0);
	m = next_report();
	CHECK(field_is(m, "stateful", "1"));

	fprintf(stderr, "== dave from 198.18.5.9: address rule deny\n");
	session("dave", "198.18.5.9");
	CHECK(refuse_mppe_stateful == 1); /* restored, then stateless */
	CHECK(ccp_wantoptions[0].mppe == 0);
	m = next_report();
	CHECK(field_is(m, "policy", "deny") && field_is(m, "user", "dave"));
	CHECK(m && strstr(report_get(m, "rule"), ":6") != NULL);

	fprintf(stderr, "== dave from 198.18.6.9: no rule, options file\n");
	session("dave", "198.18.6.9");
	CHECK(ccp_wantoptions[0].mppe == MPPE_OPT_128);
	CHECK(ccp_allowoptions[0].mppe == MPPE_OPT_128);
	CHECK(ccp_wantoptions[0].deflate == 1);
	m = next_report();
	CHECK(field_is(m, "policy", "default") && field_is(m, "rule", "default")
	    && field_is(m, "mppe_want", "128"));
	/* Policy default: packets are pppd's business. */
	feed(4, MPPE_128_STATELESS, 6, NULL, 0, pkt, &plen);
	CHECK(ccp_len(pkt) == 10);

	fprintf(stderr, "== pptpd-client wins over remotenumber\n");
	set_opt("pptpd-client", "198.18.5.1");
	session("dave", "203.0.113.1");
	m = next_report();
	CHECK(field_is(m, "client", "198.18.5.1") && field_is(m, "policy", "deny"));

	fprintf(stderr, "== alice: up, down, exit reports and wtmp\n");
	session("alice", "198.18.0.2");
	drain_reports();
	ccp_gotoptions[0].mppe = MPPE_OPT_128;
	ccp_fsm[0].state = OPENED;
	inet_pton(AF_INET, "198.19.0.1", &ipcp_gotoptions[0].ouraddr);
	inet_pton(AF_INET, "198.19.0.10", &ipcp_hisoptions[0].hisaddr);
	n_wtmp = 0;
	fake_notify(NF_IP_UP, 0);
	if (ip_up_hook)
		ip_up_hook();
	m = next_report();
	CHECK(m && strcmp(m->event, "up") == 0);
	CHECK(field_is(m, "call", "42") && field_is(m, "user", "alice") &&
	    field_is(m, "ifname", "ppp7") && field_is(m, "local", "198.19.0.1")
	    && field_is(m, "ip", "198.19.0.10") && field_is(m, "mppe", "128") &&
	    field_is(m, "stateless", "1") && field_is(m, "policy", "require-128")
	    && field_is(m, "client", "198.18.5.1"));
	CHECK(n_wtmp == 1 && strcmp(last_wtmp[0], "ppp7") == 0 &&
	    strcmp(last_wtmp[1], "alice") == 0 &&
	    strcmp(last_wtmp[2], "198.18.5.1") == 0);
	/* IPV6CP up and down: pptpd routes and advertises the /64. */
	fake_notify(NF_IPV6_UP, 0);
	m = next_report();
	CHECK(m && strcmp(m->event, "up6") == 0);
	CHECK(field_is(m, "call", "42") && field_is(m, "user", "alice") &&
	    field_is(m, "ifname", "ppp7") && field_is(m, "client", "198.18.5.1"));
	fake_notify(NF_IPV6_DOWN, 0);
	m = next_report();
	CHECK(m && strcmp(m->event, "down6") == 0 && field_is(m, "ifname", "ppp7"));
	fake_set_link_stats(1000, 2000, 10, 20, 61);
	fake_notify(NF_IP_DOWN, 0);
	m = next_report();
	CHECK(m && strcmp(m->event, "down") == 0);
	CHECK(field_is(m, "rx_bytes", "1000") && field_is(m, "tx_bytes", "2000")
	    && field_is(m, "rx_packets", "10") &&
	    field_is(m, "tx_packets", "20") && field_is(m, "duration", "61") &&
	    field_is(m, "ip", "198.19.0.10"));
	CHECK(n_wtmp == 2 && last_wtmp[1][0] == '\0');
	/* pppd then: np_down -> PHASE_NETWORK, link_down -> PHASE_ESTABLISH,
	 * link_terminated -> PHASE_DEAD, die -> exitnotify. */
	set_phase(PHASE_NETWORK);
	/* every ip-down notifier has returned: radius.so's Stop is done */
	m = next_report();
	CHECK(m && strcmp(m->event, "down_done") == 0 &&
	    field_is(m, "call", "42"));
	CHECK(next_report() == NULL); /* no second decision */
	set_phase(PHASE_ESTABLISH);
	CHECK(next_report() == NULL); /* down_done once */
	set_phase(PHASE_TERMINATE);
	set_phase(PHASE_DEAD);
	fake_notify(NF_EXIT, EXIT_HANGUP);
	m = next_report();
	CHECK(m && strcmp(m->event, "exit") == 0);
	CHECK(field_is(m, "status", "16") && field_is(m, "reason", "hangup") &&
	    field_is(m, "up", "1"));
	CHECK(next_report() == NULL); /* no second down */
	CHECK(n_wtmp == 2);

	fprintf(stderr, "== exit while up: down first, then exit\n");
	session("bob", "198.18.0.3");
	drain_reports();
	ccp_fsm[0].state = REQSENT;
	fake_notify(NF_IP_UP, 0);
	if (ip_up_hook)
		ip_up_hook();
	m = next_report();
	CHECK(field_is(m, "mppe", "none") && field_is(m, "stateless", "1"));
	fake_notify(NF_EXIT, EXIT_PEER_DEAD);
	m = next_report();
	CHECK(m && strcmp(m->event, "down") == 0);
	m = next_report();
	CHECK(m && field_is(m, "reason", "peer-dead"));

	fprintf(stderr, "== die() with IPCP up: the counters read before the "
	    "unit goes\n");
	session("bob", "198.18.0.3");
	drain_reports();
	ccp_fsm[0].state = OPENED;
	link_stats_valid = 0;    /* no earlier link of this pppd was counted */
	fake_notify(NF_IP_UP, 0);
	ip_up_hook();
	m = next_report();
	CHECK(m && strcmp(m->event, "up") == 0);
	fake_unit_counts(3000, 4000, 30, 40, 12);
	fake_die(EXIT_FATAL_ERROR);
	m = next_report();
	CHECK(m && strcmp(m->event, "down") == 0);
	CHECK(m && field_is(m, "rx_bytes", "3000") &&
	    field_is(m, "tx_bytes", "4000") && field_is(m, "rx_packets", "30")
	    && field_is(m, "tx_packets", "40") && field_is(m, "duration", "12"));
	m = next_report();
	CHECK(m && strcmp(m->event, "exit") == 0 &&
	    field_is(m, "reason", "fatal"));
	CHECK(fake_unit.open == 0);   /* pppd's own disestablish still ran */

	fprintf(stderr, "== IPCP down and up again while IPV6CP stays up: "
	    "down_done before the next up\n");
	session("bob", "198.18.0.3");
	drain_reports();
	ccp_fsm[0].state = OPENED;
	fake_notify(NF_IP_UP, 0);
	ip_up_hook();
	fake_notify(NF_IP_DOWN, 0);   /* np_down: IPV6CP is up, no phase */
	m = next_report();
	CHECK(m && strcmp(m->event, "up") == 0);
	m = next_report();
	CHECK(m && strcmp(m->event, "down") == 0);
	fake_notify(NF_IP_UP, 0);
	ip_up_hook();
	m = next_report();
	CHECK(m && strcmp(m->event, "down_done") == 0);
	m = next_report();
	CHECK(m && strcmp(m->event, "up") == 0);
	fake_notify(NF_EXIT, EXIT_HANGUP);
	drain_reports();

	fprintf(stderr, "== require with noccp: refused\n");
	ccp_protent.enabled_flag = 0;
	session("alice", "198.18.0.2");
	CHECK(n_lcp_close == 1);
	CHECK(strstr(logbuf, "CCP is disabled") != NULL);
	ccp_protent.enabled_flag = 1;

	fprintf(stderr, "== RADIUS: policy 2, types 0x4, Framed-IP-Address\n");
	CHECK(chap_verify_hook != fake_radius_verify);   /* wrapped */
	set_opt("pptpd-client", "");                     /* remotenumber again */
	{
		static const struct rad_attr a[] = {
			{ RAD_MICROSOFT, 7, 2 }, { RAD_MICROSOFT, 8, 4 },
			{ RAD_NONE, 8, 0xc6130014 },             /* 198.19.0.20 */
		};
		drain_reports();
		CHECK(radius_session("frank", "198.18.7.1",
		    fake_reply_of(a, 3)) == 1);
		CHECK(ccp_wantoptions[0].mppe == MPPE_OPT_128);
		CHECK(reply_vp[2].next == NULL);  /* a policy: nothing added */
		m = next_report();
		CHECK(field_is(m, "policy", "require-128") &&
		    field_is(m, "framed_ip", "198.19.0.20") &&
		    field_is(m, "client", "198.18.7.1"));
		CHECK(m && strstr(report_get(m, "rule"),
		    "RADIUS MS-MPPE-Encryption-Policy 2 Types 0x4") != NULL);
		CHECK(m && report_get(m, "session_limit") == NULL);
	}

	fprintf(stderr, "== RADIUS: Port-Limit is the user's session limit\n");
	{
		static const struct rad_attr a[] = {
			{ RAD_MICROSOFT, 7, 2 }, { RAD_MICROSOFT, 8, 4 },
			{ RAD_NONE, 62, 2 },
		};
		drain_reports();
		CHECK(radius_session("frank", "198.18.7.1",
		    fake_reply_of(a, 3)) == 1);
		m = next_report();
		CHECK(field_is(m, "event", "auth") &&
		    field_is(m, "session_limit", "2"));
	}

	fprintf(stderr, "== RADIUS: Framed-IPv6-Prefix, a /64 and not one\n");
	{
		static const struct rad_attr a[] = {
			{ RAD_MICROSOFT, 7, 2 }, { RAD_MICROSOFT, 8, 4 },
			{ RAD_NONE, 97, 10 },
		};
		static const unsigned char p64[] = { 0, 64, 0x20, 0x01, 0x0d,
			0xb8, 0x02, 0x00, 0x00, 0x05 };
		static const unsigned char p56[] = { 0, 56, 0x20, 0x01, 0x0d,
			0xb8, 0x02, 0x00, 0x00 };
		struct rad_vp *r;
		drain_reports();
		r = fake_reply_of(a, 3);
		memcpy(r[2].strvalue, p64, sizeof(p64));
		CHECK(radius_session("frank", "198.18.7.1", r) == 1);
		m = next_report();
		CHECK(field_is(m, "event", "auth") &&
		    field_is(m, "framed_ipv6_prefix", "2001:db8:200:5::/64"));
		drain_reports();
		r = fake_reply_of(a, 3);
		r[2].lvalue = sizeof(p56);
		memcpy(r[2].strvalue, p56, sizeof(p56));
		CHECK(radius_session("frank", "198.18.7.1", r) == 1);
		m = next_report();
		CHECK(m && report_get(m, "framed_ipv6_prefix") == NULL);
		CHECK(strstr(logbuf, "Framed-IPv6-Prefix of 9 octets, length /56: "
		    "ignored") != NULL);
	}

	fprintf(stderr, "== RADIUS: a pptpd-peers rule wins\n");
	{
		static const struct rad_attr a[] = { { RAD_MICROSOFT, 7, 1 } };
		drain_reports();
		CHECK(radius_session("carol", "198.18.0.4",
		    fake_reply_of(a, 1)) == 1);
		m = next_report();
		CHECK(field_is(m, "policy", "deny"));
		CHECK(m && strstr(report_get(m, "rule"), ":4") != NULL);
	}

	fprintf(stderr, "== RADIUS: policy 1 (FreeRADIUS' default) does not "
	    "lower the options file's require-mppe-128\n");
	{
		static const struct rad_attr a[] = { { RAD_MICROSOFT, 7, 1 } };
		static const struct rad_attr t40[] = {
			{ RAD_MICROSOFT, 7, 2 }, { RAD_MICROSOFT, 8, 2 },
		};
		drain_reports();
		CHECK(radius_session("frank", "198.18.7.1",
		    fake_reply_of(a, 1)) == 1);
		CHECK(ccp_wantoptions[0].mppe == MPPE_OPT_128);
		m = next_report();
		CHECK(field_is(m, "policy", "default") &&
		    field_is(m, "mppe_want", "128"));
		CHECK(strstr(logbuf, "RADIUS MS-MPPE-Encryption-Policy 1 (policy "
		    "allow) is weaker than pppd's options (MPPE 128 required): "
		    "ignored") != NULL);
		feed(1, DEFLATE, 4, NULL, 0, pkt, &plen);
		CHECK(n_continue == 0 && ccp_gotoptions[0].mppe == MPPE_OPT_128);
		/* Required, but 40-bit only: weaker too; told once a pppd. */
		CHECK(radius_session("frank", "198.18.7.1",
		    fake_reply_of(t40, 2)) == 1);
		CHECK(ccp_wantoptions[0].mppe == MPPE_OPT_128);
		CHECK(strstr(logbuf, "weaker") == NULL);
		drain_reports();
		/* The operator lets RADIUS decide. */
		CHECK(set_opt("pptpd-radius-lowers-mppe", NULL) == 1);
		CHECK(radius_session("frank", "198.18.7.1",
		    fake_reply_of(a, 1)) == 1);
		m = next_report();
		CHECK(field_is(m, "policy", "allow"));
		*(bool *)opt("pptpd-radius-lowers-mppe")->addr = 0;
	}

	fprintf(stderr, "== RADIUS: LCP renegotiated, another user: the first "
	    "one's policy and Framed-IP-Address are not inherited\n");
	{
		static const struct rad_attr a[] = {
			{ RAD_MICROSOFT, 7, 2 }, { RAD_MICROSOFT, 8, 4 },
			{ RAD_NONE, 8, 0xc6130014 },             /* 198.19.0.20 */
		};
		static const struct rad_attr none[] = {
			{ RAD_NONE, 1, 0 },                      /* a User-Name */
		};
		drain_reports();
		CHECK(radius_session("frank", "198.18.7.1",
		    fake_reply_of(a, 3)) == 1);
		m = next_report();
		CHECK(field_is(m, "policy", "require-128"));
		CHECK(radius_renegotiate("grace", fake_reply_of(none, 1)) == 1);
		m = next_report();
		CHECK(field_is(m, "user", "grace") &&
		    field_is(m, "policy", "default"));
		CHECK(m && report_get(m, "framed_ip") == NULL);
	}

	fprintf(stderr, "== RADIUS 2.4.9: a later Accept radius.so does not "
	    "read: the same user keeps its attributes, another is refused\n");
	{
		static const struct rad_attr a[] = {
			{ RAD_MICROSOFT, 7, 2 }, { RAD_MICROSOFT, 8, 4 },
			{ RAD_NONE, 8, 0xc6130014 },             /* 198.19.0.20 */
		};
		drain_reports();
		fake_parse_first_only = 1;
		fake_parsed = 0;
		CHECK(radius_session("frank", "198.18.7.1",
		    fake_reply_of(a, 3)) == 1);
		drain_reports();
		CHECK(radius_renegotiate("frank", fake_reply_of(a, 3)) == 1);
		m = next_report();
		CHECK(field_is(m, "policy", "require-128") &&
		    field_is(m, "framed_ip", "198.19.0.20"));
		CHECK(radius_renegotiate("grace", fake_reply_of(a, 3)) == 0);
		CHECK(strstr(logbuf, "keeps frank's address and MPPE keys: "
		    "refusing") != NULL);
		CHECK(next_report() == NULL);             /* no decision */
		fake_parse_first_only = 0;
	}

	test_rates(peers_file);

	fprintf(stderr, "== RADIUS: MPPE keys without a policy are kept\n");
	{
		static const struct rad_attr a[] = {
			{ RAD_MICROSOFT, 16, 0 }, { RAD_MICROSOFT, 17, 0 },
		};
		struct rad_vp *added;

		drain_reports();
		CHECK(radius_session("frank", "198.18.7.1",
		    fake_reply_of(a, 2)) == 1);
		/* A policy radius.so sees as non-zero and applies nowhere. */
		added = reply_vp[1].next;
		CHECK(added != NULL && added->vendorcode == RAD_MICROSOFT &&
		    added->attribute == 7 && added->lvalue != 0 &&
		    added->lvalue != 1 && added->lvalue != 2 &&
		    added->next == NULL);
		free(added);
		m = next_report();
		CHECK(field_is(m, "policy", "default"));
	}

	fprintf(stderr, "== RADIUS: Acct-Session-Id in the up report\n");
	/* radius.so's ip-up notifier made it for its Accounting-Start. */
	strcpy(fake_sid, "692E8D5B12A401");
	ccp_fsm[0].state = OPENED;
	fake_notify(NF_IP_UP, 0);
	if (ip_up_hook)
		ip_up_hook();
	m = next_report();
	CHECK(m && strcmp(m->event, "up") == 0 &&
	    field_is(m, "acct_session_id", "692E8D5B12A401"));
	fake_notify(NF_IP_DOWN, 0);
	drain_reports();

	fprintf(stderr, "== RADIUS: a reject and no answer, told apart\n");
	CHECK(radius_session("mallory", "198.18.7.2", NULL) == 0);
	drain_reports();   /* the last session's down_done */
	fake_notify(NF_EXIT, EXIT_PEER_AUTH_FAILED);
	m = next_report();
	CHECK(field_is(m, "auth_failure", "rejected by the RADIUS server") &&
	    field_is(m, "auth_user", "mallory"));
	fake_verify_wait = FAKE_RADIUS_TIMEOUT;
	CHECK(radius_session("mallory", "198.18.7.2", NULL) == 0);
	fake_verify_wait = 0;
	fake_notify(NF_EXIT, EXIT_PEER_AUTH_FAILED);
	m = next_report();
	CHECK(field_is(m, "auth_failure", "no answer from the RADIUS server"));

	test_term_reason();

	fprintf(stderr, "== reports on the channel only, none to the path\n");
	CHECK(recv(path_fd, num, sizeof(num), MSG_DONTWAIT) < 0);

	fprintf(stderr, "== pptpd's end unread: pppd is not blocked\n");
	drain_reports();
	int sent = 0;
	for (; sent < 5000 && strstr(logbuf, "report on descriptor") == NULL; sent++)
		session("alice", "198.18.0.2");
	fprintf(stderr, "    channel full after %d reports\n", sent);
	CHECK(strstr(logbuf, "Resource temporarily unavailable") != NULL);
	while (recv(rep_fd, num, sizeof(num), MSG_DONTWAIT | MSG_TRUNC) > 0)
		;

	fprintf(stderr, "== pptpd's end gone: pppd is not blocked\n");
	close(rep_fd);
	close(path_fd);
	unlink(rep_path);
	logbuf[0] = '\0';
	session("alice", "198.18.0.2");
	CHECK(strstr(logbuf, "report on descriptor") != NULL);

	fprintf(stderr, "== pptpd-kernel: the channel becomes pppd's\n");
	CHECK(the_channel == &fake_tty_channel);
	CHECK(set_opt("pptpd-kernel", "4711,0,198.18.0.1") == 0);
	CHECK(set_opt("pptpd-kernel", "0,33,198.18.0.1,198.18.0.2") == 0);
	CHECK(set_opt("pptpd-kernel", "4711,65536,198.18.0.1,198.18.0.2") == 0);
	CHECK(set_opt("pptpd-kernel", "4711,33,198.18.0.1,0.0.0.0") == 0);
	CHECK(set_opt("pptpd-kernel", "4711,33,198.18.0.1,198.18.0.2,1") == 0);
	CHECK(set_opt("pptpd-kernel", "4711,-3,198.18.0.1,198.18.0.2") == 0);
	CHECK(the_channel == &fake_tty_channel && fake_modem() == 1);
	CHECK(set_opt("pptpd-kernel", "4711,33,198.18.0.1,198.18.0.2") == 1);
	CHECK(the_channel != NULL && the_channel->connect != NULL &&
	    fake_modem() == 0);
	CHECK(the_channel && the_channel->establish_ppp == ppp_generic_establish);
	CHECK(strcmp(fake_devnam(), "pptp-call-4711") == 0);
	/* pppd looks later options (+ipv6) up in the channel's list. */
	CHECK(the_channel && the_channel->options != NULL &&
	    the_channel->options[0].name == NULL);

	fprintf(stderr, "== pptpd-kernel-fd: pptpd's socket, checked\n");
	CHECK(set_opt("pptpd-kernel-fd", "2") == 0);
	CHECK(set_opt("pptpd-kernel-fd", "-5") == 0);
	CHECK(set_opt("pptpd-kernel-fd", "3x") == 0);
	CHECK(set_opt("pptpd-kernel-fd", "99999999999") == 0);
	CHECK(strstr(logbuf, "pptpd-kernel-fd 3x: not a descriptor above 2"));
	/* A descriptor that is not the call's PPTP socket is refused, and
	 * closed: pppd must not carry the call on something else. */
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	char num[16];
	snprintf(num, sizeof(num), "%d", sv[0]);
	CHECK(fcntl(sv[0], F_GETFD) == 0);
	CHECK(set_opt("pptpd-kernel-fd", num) == 1);
	/* Close-on-exec from the option on: pppd's scripts never get it,
	 * whether or not connect adopts it. */
	CHECK(fcntl(sv[0], F_GETFD) == FD_CLOEXEC);
	logbuf[0] = '\0';
	CHECK(the_channel && the_channel->connect() == -1);
	CHECK(strstr(logbuf, "call 4711: pptpd-kernel-fd: not the PPTP "
	    "socket of this call") != NULL);
	CHECK(fcntl(sv[0], F_GETFD) == -1 && errno == EBADF);
	close(sv[1]);
	/* Nor one that is not open. */
	CHECK(set_opt("pptpd-kernel-fd", num) == 1);
	logbuf[0] = '\0';
	CHECK(the_channel && the_channel->connect() == -1);
	CHECK(strstr(logbuf, "pptpd-kernel-fd: no such descriptor") != NULL);
	/* persist or demand: a later link's connect has no call of pptpd's,
	 * and opens no socket of its own from the ended call's spec. */
	logbuf[0] = '\0';
	CHECK(the_channel && the_channel->connect() == -1);
	CHECK(strstr(logbuf, "pptpd-kernel-fd: the call's socket was used by "
	    "an earlier link") != NULL);

	unlink(peers_file);
	n = failures;
	printf("plugin harness: %d passed, %d failed\n", checks - n, n);
	return n ? 1 : 0;
}
