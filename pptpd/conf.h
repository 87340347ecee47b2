/* pptpd.conf: Poptop-compatible configuration.
 *
 * Syntax: one `key value` or `key` per line; blank lines and lines whose
 * first non-blank character is '#' are comments; a token starting with '#'
 * starts a trailing comment; spaces, tabs and a CR (DOS line ends) separate
 * tokens. Keys are case-sensitive, as in Poptop.
 *
 * Keys: option FILE, ppp PATH, pidfile PATH, speed N (1..2147483647),
 * localip SPEC, remoteip SPEC (see pool.h), listen IPV4, connections N
 * (1..65535), stimeout SECONDS (1..3600), noipparam, debug, logwtmp.
 * Our own: connections-per-client N (0..65535, 0 = no limit, default 32)
 * caps control connections from one client address; calls-per-connection N (1..65535)
 * caps the calls one control connection carries (pptp-linux puts every
 * tunnel from one host on one connection); calls-per-client N (0..65535,
 * 0 = no limit) caps the calls, live or still ending, from one address,
 * which is what bounds the pool addresses one client can hold;
 * call-setups N and call-setups-per-client N (1..65535) cap the pppd
 * starts in progress (started, session not up yet, or ending before it
 * was) overall and from one address; call-rate-per-client N (1..10000)
 * is how many calls per second one address may start (a burst of N);
 * call-setup-timeout SECONDS (1..3600) hangs up a call whose session is
 * not up by then (with the plugin's reports; without them the call only
 * stops counting as a setup); pool-share-per-client PERCENT (1..100) is
 * the share of the pool's addresses one address may hold (at least one);
 * stop-timeout SECONDS (1..3600) bounds a graceful stop; plugin PATH is the pptpd-policy pppd
 * plugin given to every pppd; noplugin leaves it out; peers FILE is the
 * per-peer MPPE policy file the plugin reads (pptpd-peers(5)). 'peers' or
 * 'logwtmp' with 'noplugin' is an error (at the line of 'peers'/'logwtmp'):
 * the plugin is what carries them out.
 * metrics-listen IPV4:PORT serves Prometheus metrics over HTTP on that
 * address (GET /metrics; off when not set); metrics-per-session adds the
 * per-call GRE series to it (off by default: one series per call).
 * datapath engine|kernel|auto: who carries a call's GRE (our engine, with
 * pppd on a pty; or the kernel's PPTP channel, which the plugin hands to
 * pppd; or the kernel's when its pptp module can be had, else the engine);
 * 'datapath kernel' with 'noplugin' is an error, like 'peers'.
 * radius-dae-listen IPV4[:PORT] serves RFC 5176 Disconnect-Requests on
 * that UDP address (port 3799 by default; off when not set) from the
 * clients of radius-dae-clients FILE (dae_clients.h), which it needs;
 * that file is read and checked with pptpd.conf;
 * radius-dae-require-timestamp drops a request without an Event-Timestamp.
 * tcp-mss-adjust yes|no|N (default yes): the SYNs crossing a session's ppp
 * interface get an MSS of at most its MTU less 40 (yes), or N
 * (CONF_MSS_MIN..CONF_MSS_MAX), or are left alone (no) (pptpd/mss.h).
 * Poptop keys accepted with a warning and otherwise ignored: bcrelay IF,
 * delegate, vrf NAME.
 *
 * Where we differ from Poptop, on purpose: an unknown key, a missing value,
 * a second value (other than a trailing comment), a bad number, address or
 * pool is an error instead of being silently skipped. Like Poptop, the
 * first occurrence of a key counts; a repeat is ignored with a warning. */
#ifndef PPTPD_CONF_H
#define PPTPD_CONF_H

#include <netinet/in.h>
#include <stddef.h>

#include "pptpd/prefix6.h"
#include "pptpd/radcfg.h"

#define CONF_DEFAULT_FILE        "/etc/pptpd.conf"
#define CONF_DEFAULT_OPTIONS     "/etc/ppp/options.pptpd"
#define CONF_DEFAULT_PPP         "/usr/sbin/pppd"
#define CONF_DEFAULT_PIDFILE     "/var/run/pptpd.pid"
#define CONF_DEFAULT_PRIVSEP      1         /* privsep yes */
#define CONF_DEFAULT_PRIVSEP_USER "pptpd"   /* privsep-user */
#define CONF_DEFAULT_SPEED       "115200"
#define CONF_DEFAULT_CONNECTIONS 100
#define CONF_DEFAULT_STIMEOUT    30     /* seconds; what Windows waits */
/* Control connections from one address: as many as the calls it may
 * place (Windows opens one connection per call), so a NAT with a few
 * dozen users fits, while one host cannot take every slot of the
 * default `connections` (the slots of connections that hold no call can
 * also be taken over when all are taken: ctrl_evictable). */
#define CONF_DEFAULT_PER_CLIENT        32
/* pptp-linux carries every tunnel from one host on one connection; a host
 * with more than 16 tunnels to one server is unusual, and it can open a
 * second connection. */
#define CONF_DEFAULT_CALLS_PER_CONN    16
/* Calls from one address: a NAT with a few dozen PPTP users behind it
 * still fits; one host cannot drain a pool of hundreds. */
#define CONF_DEFAULT_CALLS_PER_CLIENT  32
/* pppd starts in progress: each is a root process doing LCP and
 * authentication; more than this at once is a flood, not dial-in. */
#define CONF_DEFAULT_SETUPS            64
#define CONF_DEFAULT_SETUPS_PER_CLIENT 8
#define CONF_DEFAULT_CALL_RATE         10     /* calls/s from one address */
/* A call whose session is not up this long is hung up: pppd's own LCP
 * and authentication give up well before (radius.so: 3 tries of 10 s),
 * and until then it holds a pool address and a root process for somebody
 * who has not authenticated. */
#define CONF_DEFAULT_SETUP_TIMEOUT     60     /* seconds */
/* The share of the pool (percent) one address may hold: never all of it,
 * so another address can always get a call. */
#define CONF_DEFAULT_POOL_SHARE        50
#define CONF_DEFAULT_STOP_TIMEOUT      10     /* seconds */
#define CONF_DEFAULT_DAE_PORT          3799   /* RFC 5176 */
/* tcp-mss-adjust: no (CONF_MSS_OFF), yes (CONF_MSS_FROM_MTU: each
 * interface's MTU less the headers), or a fixed MSS in
 * [CONF_MSS_MIN, CONF_MSS_MAX]: RFC 879's 536, up to what an IPv4 packet
 * of 65535 octets holds. The three never overlap. */
#define CONF_MSS_OFF                   0
#define CONF_MSS_FROM_MTU              1
#define CONF_MSS_MIN                   536
#define CONF_MSS_MAX                   65495
#define CONF_ERR_LEN             256
#define CONF_LINE_MAX            4096   /* bytes per line, without newline */
#define CONF_MAX_WARNINGS        32     /* further warnings are dropped */
#ifndef CONF_DEFAULT_PLUGIN
#define CONF_DEFAULT_PLUGIN      "/usr/local/lib/pptpd/pptpd-policy.so"
#endif

/* Values of `sessions-per-user-action`, in the order conf.c names them:
 * at the limit, a new session is refused (the default: a stolen password
 * cannot push the owner off), or it ends the user's oldest. */
enum conf_user_limit {
	CONF_USER_LIMIT_DENY,
	CONF_USER_LIMIT_REPLACE,
};

/* Values of `datapath`, in the order conf.c names them. */
enum conf_datapath {
	CONF_DATAPATH_ENGINE,   /* the default */
	CONF_DATAPATH_KERNEL,
	CONF_DATAPATH_AUTO,
};
struct dae_clients;
struct fileset;

struct conf {
	char          *file;          /* path it was read from */
	char          *option;        /* pppd options file */
	char          *ppp;           /* path of pppd */
	char          *pidfile;
	char          *speed;
	char          *localip;       /* pool specs, parsed by pool_new() */
	char          *remoteip;
	/* ipv6-prefix-pool: a /64 per session out of it (pool6.h), routed and
	 * advertised to the session (nd.h); NULL: no IPv6 in the tunnel. */
	char          *ipv6_pool;
	struct prefix6_set pool6_net;      /* ipv6_pool, parsed; empty: none */
	/* ipv6-radius-prefixes: where else a RADIUS Framed-IPv6-Prefix may
	 * be (prefix6.h), as written, and parsed; NULL: none. */
	char          *ipv6_radius_prefixes;
	struct prefix6_set radius6;
	struct in_addr listen;        /* INADDR_ANY by default */
	int            connections;
	int            stimeout;
	int            noipparam;
	int            debug;
	int            logwtmp;
	int            per_client;    /* connections from one address, 0: any */
	int            calls_per_conn;
	int            calls_per_client;   /* 0: any */
	int            setups, setups_per_client;
	int            call_rate;          /* call setups/s from one address */
	int            setup_timeout;      /* seconds for a session to come up */
	int            pool_share;         /* percent of the pool per address */
	int            stop_timeout;       /* seconds */
	int            sessions_per_user;  /* 0: any (RADIUS' Port-Limit wins) */
	int            user_limit_action;  /* enum conf_user_limit */
	char          *plugin;        /* pptpd-policy.so */
	int            noplugin;
	char          *peers;         /* per-peer MPPE policy file */
	/* metrics-listen: sin_port 0 when not set (no metrics served). */
	struct sockaddr_in metrics_listen;
	int            metrics_per_session;
	int            datapath;      /* enum conf_datapath */
	/* privsep yes (the default): a root monitor starts, signals and
	 * reaps pppd for an unprivileged worker that runs the rest
	 * (monitor.h); no, for debugging: one root process. A reload cannot
	 * change it. */
	int            privsep;
	/* privsep-user: the worker's user (CONF_DEFAULT_PRIVSEP_USER, which
	 * the package creates); never NULL after conf_init. */
	char          *privsep_user;
	/* radius-dae-listen: sin_port 0 when not set (no RFC 5176 server). */
	struct sockaddr_in dae_listen;
	char          *dae_clients_file;
	struct dae_clients *dae_clients;   /* read from it; NULL when not set */
	/* radius-config-file: radiusclient.conf, as pppd's radius.so reads
	 * it; pptpd's own accounting (acct.h) goes to its acctserver. */
	char          *radius_config_file;
	int            has_radcfg;
	struct radcfg  radcfg;             /* read from it when set */
	/* radius-dae-require-timestamp: a Disconnect-Request without an
	 * Event-Timestamp is dropped (replays are bounded by its window). */
	int            dae_require_timestamp;
	/* tcp-mss-adjust: CONF_MSS_OFF, CONF_MSS_FROM_MTU (the default) or
	 * a fixed MSS. */
	int            tcp_mss_adjust;
	/* Where each key was set (line number, 0 = default): lets a later
	 * semantic error (e.g. the pool) point at file:line. */
	int            line_localip, line_remoteip;
	/* Non-fatal findings of the last successful conf_load(), each
	 * "file:line: message" (e.g. "'bcrelay' not supported, ignored"), for
	 * the caller to log once logging is set up. */
	char         **warnings;
	size_t         nwarnings;
};

/* Fill `c` with the defaults. String fields are malloc'd copies, so a caller
 * may free() and replace them (NULL only if memory ran out). */
void conf_init(struct conf *c);
/* Read `path` into `c` (keys override what is already there). Returns 0, or
 * -1 with err holding "file:line: reason" ("file: reason" when no line is to
 * blame); on failure `c` is left unchanged, so a reload can keep running on
 * the old settings. A missing file is an error. The pool specs are checked
 * here, each at its own line, and as a pair (pool_new) at the later line. */
int  conf_load(struct conf *c, const char *path, char *err, size_t errlen);
/* The same, opening every file through `fs` (fileset.h; NULL: by path).
 * CONF_LOAD_NO_RESOLVE: look no name up (radius-config-file's servers):
 * privsep's monitor, which only opens the files for its worker, reads so,
 * and its configuration has no RADIUS server address or secret. */
#define CONF_LOAD_NO_RESOLVE 0x1
int  conf_load_fs(struct conf *c, const char *path, struct fileset *fs,
    int flags, char *err, size_t errlen);
void conf_free(struct conf *c);

/* May a session's /64 `p` be routed? Inside ipv6-prefix-pool or
 * ipv6-radius-prefixes, and not multicast, link-local or loopback: a
 * route is a claim on traffic. The one rule both the worker (a RADIUS
 * Framed-IPv6-Prefix) and the monitor (CALL_ROUTE6) apply. */
int conf_prefix6_routable(const struct conf *c, const struct in6_addr *p);

/* Does `b` change a key of `a` that only a restart may change (sockets
 * and files set up once, the data path, privsep)? 0, or -1 with err set
 * ("FILE: 'KEY' changed: KEY changes need a restart"). Both reloads, the
 * worker's server and the monitor's, ask it. */
int conf_restart_check(const struct conf *a, const struct conf *b, char *err,
    size_t errlen);

#endif
