/* pptpd.conf reader. The syntax and the differences from Poptop are
 * described in conf.h.
 *
 * The file is read into a copy of the caller's struct, which replaces the
 * original only when the whole file (and the address pool it describes) is
 * valid: a bad edit followed by a reload must not leave half a config. */
#include "pptpd/conf.h"
#include "pptpd/dae_clients.h"
#include "pptpd/fileset.h"
#include "pptpd/radcfg.h"
#include "pptpd/pool.h"
#include "pptpd/pool6.h"
#include "common/strclean.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Longest piece of a bad token quoted in an error. */
#define CONF_QUOTE_MAX 40

enum kind {
	K_PATH,         /* any non-empty token */
	K_POOL,         /* address spec, checked by pool.c */
	K_POOL6,        /* IPv6 prefix, checked by pool6.c */
	K_PREFIX6S,     /* IPv6 prefixes, comma-separated (prefix6.h): kept as
	                 * written, and parsed into radius6 */
	K_INT,          /* decimal in [min, max] */
	K_SPEED,        /* decimal in [min, max], kept as a string */
	K_ADDR,         /* dotted IPv4 */
	K_ADDR_PORT,    /* dotted IPv4, ':', port 1..65535 (sockaddr_in) */
	K_ADDR_OPTPORT, /* the same, ":PORT" optional: CONF_DEFAULT_DAE_PORT
	                 * (radius-dae-listen is the one key of this kind) */
	K_FLAG,         /* no value */
	K_ENUM,         /* one of names[]; the index is stored as an int */
	K_MSS,          /* yes, no, or a decimal in [min, max] (an int:
	                 * CONF_MSS_FROM_MTU, CONF_MSS_OFF or the number) */
	K_IGNORED,      /* Poptop key we do not implement: one value */
	K_IGNORED_FLAG, /* same, no value */
};

struct key {
	const char *name;
	enum kind   kind;
	size_t      off;        /* field in struct conf */
	long        min, max;
	const char *note;       /* for ignored keys: what the user loses */
};

#define F(field) offsetof(struct conf, field)

/* Indexed by enum conf_datapath. */
static const char *const datapath_names[] = { "engine", "kernel", "auto", NULL };
/* privsep: off, or the monitor and its worker (monitor.h). */
static const char *const privsep_names[] = { "no", "yes", NULL };
/* Indexed by enum conf_user_limit. */
static const char *const user_limit_names[] = { "deny", "replace", NULL };

/* The values of each K_ENUM key, by its field. */
static const struct {
	size_t             off;
	const char *const *names;
} enums[] = {
	{ F(datapath), datapath_names },
	{ F(user_limit_action), user_limit_names },
	{ F(privsep), privsep_names },
};

static const struct key keys[] = {
	{ "option",      K_PATH,  F(option),      0, 0, NULL },
	{ "ppp",         K_PATH,  F(ppp),         0, 0, NULL },
	{ "pidfile",     K_PATH,  F(pidfile),     0, 0, NULL },
	{ "speed",       K_SPEED, F(speed),       1, 2147483647L, NULL },
	{ "localip",     K_POOL,  F(localip),     0, 0, NULL },
	{ "remoteip",    K_POOL,  F(remoteip),    0, 0, NULL },
	{ "ipv6-prefix-pool", K_POOL6, F(ipv6_pool), 0, 0, NULL },
	{ "ipv6-radius-prefixes", K_PREFIX6S, F(ipv6_radius_prefixes), 0, 0,
	  NULL },
	{ "listen",      K_ADDR,  F(listen),      0, 0, NULL },
	{ "connections", K_INT,   F(connections), 1, 65535, NULL },
	{ "stimeout",    K_INT,   F(stimeout),    1, 3600, NULL },
	{ "noipparam",   K_FLAG,  F(noipparam),   0, 0, NULL },
	{ "debug",       K_FLAG,  F(debug),       0, 0, NULL },
	{ "logwtmp",     K_FLAG,  F(logwtmp),     0, 0, NULL },
	{ "connections-per-client", K_INT, F(per_client), 0, 65535, NULL },
	{ "calls-per-connection", K_INT, F(calls_per_conn), 1, 65535, NULL },
	{ "calls-per-client", K_INT, F(calls_per_client), 0, 65535, NULL },
	{ "call-setups", K_INT, F(setups), 1, 65535, NULL },
	{ "call-setups-per-client", K_INT, F(setups_per_client), 1, 65535, NULL },
	{ "call-rate-per-client", K_INT, F(call_rate), 1, 10000, NULL },
	{ "call-setup-timeout", K_INT, F(setup_timeout), 1, 3600, NULL },
	{ "pool-share-per-client", K_INT, F(pool_share), 1, 100, NULL },
	{ "stop-timeout", K_INT, F(stop_timeout), 1, 3600, NULL },
	{ "sessions-per-user", K_INT, F(sessions_per_user), 0, 65535, NULL },
	{ "sessions-per-user-action", K_ENUM, F(user_limit_action), 0, 0, NULL },
	{ "plugin",      K_PATH,  F(plugin),      0, 0, NULL },
	{ "noplugin",    K_FLAG,  F(noplugin),    0, 0, NULL },
	{ "peers",       K_PATH,  F(peers),       0, 0, NULL },
	{ "metrics-listen", K_ADDR_PORT, F(metrics_listen), 1, 65535, NULL },
	{ "metrics-per-session", K_FLAG, F(metrics_per_session), 0, 0, NULL },
	{ "datapath",    K_ENUM,  F(datapath),    0, 0, NULL },
	{ "radius-dae-listen", K_ADDR_OPTPORT, F(dae_listen), 1, 65535, NULL },
	{ "radius-dae-clients", K_PATH, F(dae_clients_file), 0, 0, NULL },
	{ "radius-config-file", K_PATH, F(radius_config_file), 0, 0, NULL },
	{ "radius-dae-require-timestamp", K_FLAG, F(dae_require_timestamp), 0, 0,
	  NULL },
	{ "privsep",     K_ENUM,  F(privsep),     0, 0, NULL },
	{ "privsep-user", K_PATH, F(privsep_user), 0, 0, NULL },
	{ "tcp-mss-adjust", K_MSS, F(tcp_mss_adjust), CONF_MSS_MIN, CONF_MSS_MAX,
	  NULL },
	{ "bcrelay",     K_IGNORED, 0, 0, 0,
	  "broadcasts are not relayed to clients" },
	{ "delegate",    K_IGNORED_FLAG, 0, 0, 0,
	  "addresses come from remoteip when it is set, from pppd otherwise" },
	{ "vrf",         K_IGNORED, 0, 0, 0,
	  "pptpd listens and sends GRE in the default VRF" },
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* Through void *: the offset comes from offsetof, so the field is aligned. */
static void *
field(struct conf *c, const struct key *k)
{
	return (char *)c + k->off;
}

struct loader {
	struct conf *c;
	const char  *path;
	struct fileset *fs;          /* NULL: open the files by path */
	int          flags;         /* conf_load_fs's */
	int          line;
	int          seen[NKEYS];   /* line where each key was first set */
	char         why[CONF_ERR_LEN];
};

/* Tokens come from a file anyone may have edited; keep quotes short and
 * printable so an error message cannot garble a terminal or a log. */
static const char *
quote(char *out, size_t outlen, const char *s)
{
	return str_clean(out, outlen, s, SIZE_MAX, CONF_QUOTE_MAX);
}

static int
set_str(char **dst, const char *src)
{
	char *s = strdup(src);

	if (s == NULL)
		return -1;
	free(*dst);
	*dst = s;
	return 0;
}

static void add_warning(struct loader *ld, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
add_warning(struct loader *ld, const char *fmt, ...)
{
	struct conf *c = ld->c;
	char msg[CONF_ERR_LEN * 2], **w;
	va_list ap;
	int n;

	if (c->nwarnings >= CONF_MAX_WARNINGS)
		return;
	w = realloc(c->warnings, (c->nwarnings + 1) * sizeof(*w));
	if (w == NULL)
		return;         /* a lost warning is not worth failing for */
	c->warnings = w;
	n = snprintf(msg, sizeof(msg), "%s:%d: ", ld->path, ld->line);
	if (n < 0 || (size_t)n >= sizeof(msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	if ((w[c->nwarnings] = strdup(msg)) != NULL)
		c->nwarnings++;
}

/* Plain decimal only: no sign, no hex, no octal, no spaces. */
static int
parse_number(const char *s, long min, long max, long *out)
{
	long v = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > max)
			return -1;
	}
	if (v < min)
		return -1;
	*out = v;
	return 0;
}

static int
set_number(struct loader *ld, const struct key *k, const char *val)
{
	char q[48];
	long v;

	if (parse_number(val, k->min, k->max, &v) < 0) {
		snprintf(ld->why, sizeof(ld->why), "bad number '%s' for '%s' "
		    "(%ld..%ld)", quote(q, sizeof(q), val), k->name, k->min,
		    k->max);
		return -1;
	}
	if (k->kind == K_INT) {
		*(int *)field(ld->c, k) = (int)v;
		return 0;
	}
	/* pppd parses the speed itself: hand it a canonical number. */
	char canon[24];
	snprintf(canon, sizeof(canon), "%ld", v);
	return set_str(field(ld->c, k), canon);
}

/* "192.0.2.1:9917": both parts required, the port in [min, max]; for
 * K_ADDR_OPTPORT "192.0.2.1" alone means CONF_DEFAULT_DAE_PORT. */
static int
set_addr_port(struct loader *ld, const struct key *k, const char *val)
{
	struct sockaddr_in *sin = field(ld->c, k);
	const char *colon = strrchr(val, ':');
	char addr[INET_ADDRSTRLEN], q[48];
	long port = CONF_DEFAULT_DAE_PORT;
	size_t alen = colon != NULL ? (size_t)(colon - val) : 0;

	if (colon == NULL && k->kind == K_ADDR_OPTPORT)
		alen = strlen(val);
	if ((colon == NULL && k->kind != K_ADDR_OPTPORT) || alen == 0 ||
	    alen >= sizeof(addr) || (colon != NULL &&
	    parse_number(colon + 1, k->min, k->max, &port) < 0)) {
		snprintf(ld->why, sizeof(ld->why), "bad ADDRESS%s '%s' for "
		    "'%s' (IPv4 address, port %ld..%ld)",
		    k->kind == K_ADDR_OPTPORT ? "[:PORT]" : ":PORT",
		    quote(q, sizeof(q), val), k->name, k->min, k->max);
		return -1;
	}
	memcpy(addr, val, alen);
	addr[alen] = '\0';
	memset(sin, 0, sizeof(*sin));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1) {
		snprintf(ld->why, sizeof(ld->why), "bad IPv4 address '%s' for '%s'",
		    quote(q, sizeof(q), addr), k->name);
		return -1;
	}
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	return 0;
}

static const char *const *
enum_names(const struct key *k)
{
	for (size_t i = 0; i < sizeof(enums) / sizeof(enums[0]); i++)
		if (enums[i].off == k->off)
			return enums[i].names;
	return NULL;
}

static int
set_enum(struct loader *ld, const struct key *k, const char *val)
{
	const char *const *names = enum_names(k);
	char q[48], list[64] = "";

	for (int i = 0; names[i] != NULL; i++)
		if (strcmp(names[i], val) == 0) {
			*(int *)field(ld->c, k) = i;
			return 0;
		}
	for (int i = 0; names[i] != NULL; i++) {
		size_t n = strlen(list);
		snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
		    names[i]);
	}
	snprintf(ld->why, sizeof(ld->why), "bad value '%s' for '%s' (one of %s)",
	    quote(q, sizeof(q), val), k->name, list);
	return -1;
}

/* "yes", "no" or an MSS (tcp-mss-adjust). */
static int
set_mss(struct loader *ld, const struct key *k, const char *val)
{
	char q[48];
	long v;

	if (strcmp(val, "yes") == 0)
		v = CONF_MSS_FROM_MTU;
	else if (strcmp(val, "no") == 0)
		v = CONF_MSS_OFF;
	else if (parse_number(val, k->min, k->max, &v) < 0) {
		snprintf(ld->why, sizeof(ld->why), "bad value '%s' for '%s' (yes, "
		    "no, or an MSS %ld..%ld)", quote(q, sizeof(q), val), k->name,
		    k->min, k->max);
		return -1;
	}
	*(int *)field(ld->c, k) = (int)v;
	return 0;
}

static int
set_value(struct loader *ld, const struct key *k, const char *val)
{
	char q[48], perr[CONF_ERR_LEN - 64];

	switch (k->kind) {
	case K_INT:
	case K_SPEED:
		return set_number(ld, k, val);
	case K_ADDR:
		if (inet_pton(AF_INET, val, field(ld->c, k)) != 1) {
			snprintf(ld->why, sizeof(ld->why), "bad IPv4 address '%s' "
			    "for '%s'", quote(q, sizeof(q), val), k->name);
			return -1;
		}
		return 0;
	case K_ADDR_PORT:
	case K_ADDR_OPTPORT:
		return set_addr_port(ld, k, val);
	case K_POOL:
		if (pool_spec_count(val, perr, sizeof(perr)) < 0) {
			snprintf(ld->why, sizeof(ld->why), "%s: %s", k->name, perr);
			return -1;
		}
		if (k->off == F(localip))
			ld->c->line_localip = ld->line;
		else
			ld->c->line_remoteip = ld->line;
		return set_str(field(ld->c, k), val);
	case K_POOL6: {
		struct pool6 *p6 = pool6_new(val, perr, sizeof(perr));
		if (p6 == NULL) {
			snprintf(ld->why, sizeof(ld->why), "%s: %s", k->name, perr);
			return -1;
		}
		pool6_free(p6);
		/* pool6_new took it: it is one prefix of a set's kind */
		prefix6_set_parse(val, &ld->c->pool6_net, perr, sizeof(perr));
		return set_str(field(ld->c, k), val);
	}
	case K_PREFIX6S:
		if (prefix6_set_parse(val, &ld->c->radius6, perr, sizeof(perr)) < 0) {
			snprintf(ld->why, sizeof(ld->why), "%s: %s", k->name, perr);
			return -1;
		}
		return set_str(field(ld->c, k), val);
	case K_PATH:
		return set_str(field(ld->c, k), val);
	case K_FLAG:
		*(int *)field(ld->c, k) = 1;
		return 0;
	case K_ENUM:
		return set_enum(ld, k, val);
	case K_MSS:
		return set_mss(ld, k, val);
	case K_IGNORED:
	case K_IGNORED_FLAG:
		add_warning(ld, "'%s' not supported, ignored (%s)", k->name,
		    k->note);
		return 0;
	}
	return 0;
}

static const struct key *
find_key(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

/* Up to three tokens; the third only tells that there is one too many. */
static int
tokenize(char *s, char *tok[3])
{
	static const char sep[] = " \t\r\v\f";
	int n = 0;

	while (n < 3) {
		s += strspn(s, sep);
		if (*s == '\0' || *s == '#')
			break;
		tok[n++] = s;
		s += strcspn(s, sep);
		if (*s != '\0')
			*s++ = '\0';
	}
	return n;
}

static int
check_arity(struct loader *ld, const struct key *k, int ntok, char **tok)
{
	int flag = k->kind == K_FLAG || k->kind == K_IGNORED_FLAG;
	char q[48];

	if (flag && ntok > 1)
		snprintf(ld->why, sizeof(ld->why), "'%s' takes no value "
		    "(got '%s')", k->name, quote(q, sizeof(q), tok[1]));
	else if (!flag && ntok < 2)
		snprintf(ld->why, sizeof(ld->why), "'%s' needs a value", k->name);
	else if (ntok > 2)
		snprintf(ld->why, sizeof(ld->why), "'%s' takes one value "
		    "(extra '%s')", k->name, quote(q, sizeof(q), tok[2]));
	else
		return 0;
	return -1;
}

static int
parse_line(struct loader *ld, char *line)
{
	char *tok[3], q[48];
	int ntok = tokenize(line, tok);
	const struct key *k;
	size_t i;

	if (ntok == 0)
		return 0;
	if ((k = find_key(tok[0])) == NULL) {
		snprintf(ld->why, sizeof(ld->why), "unknown key '%s'",
		    quote(q, sizeof(q), tok[0]));
		return -1;
	}
	if (check_arity(ld, k, ntok, tok) < 0)
		return -1;
	i = (size_t)(k - keys);
	if (ld->seen[i] != 0) {
		/* Poptop takes the first occurrence; so do we. */
		add_warning(ld, "'%s' already set at line %d, this one is ignored",
		    k->name, ld->seen[i]);
		return 0;
	}
	ld->seen[i] = ld->line;
	if (set_value(ld, k, ntok > 1 ? tok[1] : NULL) < 0) {
		if (ld->why[0] == '\0')
			snprintf(ld->why, sizeof(ld->why), "out of memory");
		return -1;
	}
	return 0;
}

/* One line without its newline into buf. Returns its length, -1 at end of
 * file, -2 when too long or holding a NUL (why set). */
static long
read_line(FILE *f, char *buf, size_t size, struct loader *ld)
{
	size_t n = 0;
	int ch, bad = 0;

	while ((ch = getc(f)) != EOF && ch != '\n') {
		if (ch == '\0')
			bad = 1;
		if (n + 1 < size)
			buf[n] = (char)ch;
		n++;
	}
	if (ch == EOF && n == 0)
		return -1;
	if (n + 1 > size)
		snprintf(ld->why, sizeof(ld->why), "line too long (over %d bytes)",
		    CONF_LINE_MAX);
	else if (bad)
		snprintf(ld->why, sizeof(ld->why), "NUL byte in line");
	else {
		buf[n] = '\0';
		return (long)n;
	}
	return -2;
}

static int
read_file(struct loader *ld, FILE *f)
{
	char buf[CONF_LINE_MAX + 1];
	long n;

	while ((n = read_line(f, buf, sizeof(buf), ld)) != -1) {
		ld->line++;
		if (n == -2 || parse_line(ld, buf) < 0)
			return -1;
	}
	if (ferror(f)) {
		ld->line = 0;
		snprintf(ld->why, sizeof(ld->why), "read error: %s",
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* Each spec was checked at its own line; what is left is how the two fit
 * together, which the later of the two lines made wrong. */
static int
check_pool(struct loader *ld)
{
	const struct conf *c = ld->c;
	struct pool *p;

	if (c->remoteip == NULL)
		return 0;
	p = pool_new(c->localip, c->remoteip, ld->why, sizeof(ld->why));
	if (p == NULL) {
		ld->line = c->line_localip > c->line_remoteip ?
		    c->line_localip : c->line_remoteip;
		return -1;
	}
	pool_free(p);
	return 0;
}

static int
seen_at(const struct loader *ld, const char *name)
{
	return ld->seen[find_key(name) - keys];
}

/* 'peers' and 'logwtmp' are carried out by the plugin: with 'noplugin' they
 * would be dropped without a word (and per-peer require-128 not enforced).
 * 'datapath kernel' too: the plugin is what opens the kernel's channel
 * ('datapath auto' falls back to the engine without it); and
 * 'ipv6-prefix-pool': only the plugin's report says when IPV6CP is up. */
static int
check_plugin(struct loader *ld)
{
	static const char *const needs[] = { "peers", "logwtmp", "datapath",
		"ipv6-prefix-pool" };
	const struct conf *c = ld->c;
	int set[] = { c->peers != NULL, c->logwtmp,
		c->datapath == CONF_DATAPATH_KERNEL, c->ipv6_pool != NULL };

	if (!c->noplugin)
		return 0;
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		if (!set[i])
			continue;
		int line = seen_at(ld, needs[i]), np = seen_at(ld, "noplugin");
		char at[32] = "";
		if (np != 0)
			snprintf(at, sizeof(at), " (line %d)", np);
		ld->line = line != 0 ? line : np;
		snprintf(ld->why, sizeof(ld->why), "'%s' needs the plugin; remove "
		    "'noplugin'%s", needs[i], at);
		return -1;
	}
	return 0;
}

/* The clients file is read with the configuration, so a bad line in it
 * fails the start (exit status 2) or the reload, as a bad key would; the
 * error names the key's line and the file's. */
static int
check_dae(struct loader *ld)
{
	struct conf *c = ld->c;
	char err[CONF_ERR_LEN - sizeof("radius-dae-clients: ")];

	if (c->dae_listen.sin_port != 0 && c->dae_clients_file == NULL) {
		ld->line = seen_at(ld, "radius-dae-listen");
		snprintf(ld->why, sizeof(ld->why), "'radius-dae-listen' needs "
		    "'radius-dae-clients FILE' (who may send, with which secret)");
		return -1;
	}
	if (c->dae_clients_file == NULL)
		return 0;
	if (c->dae_clients_file[0] != '/') {
		/* Read again at every reload, when the daemon has long left
		 * the directory it was started in. */
		ld->line = seen_at(ld, "radius-dae-clients");
		snprintf(ld->why, sizeof(ld->why), "'radius-dae-clients' needs an "
		    "absolute path");
		return -1;
	}
	if (dae_clients_load(c->dae_clients_file, ld->fs, &c->dae_clients,
	    err, sizeof(err)) < 0) {
		ld->line = seen_at(ld, "radius-dae-clients");
		snprintf(ld->why, sizeof(ld->why), "radius-dae-clients: %s", err);
		return -1;
	}
	if (c->dae_listen.sin_port == 0) {
		ld->line = seen_at(ld, "radius-dae-clients");
		add_warning(ld, "'radius-dae-clients' without 'radius-dae-listen': "
		    "no Disconnect-Request is served");
	}
	return 0;
}

/* radius-config-file: the accounting server and its secret are read with
 * the configuration (radcfg.h), so that a bad one fails the start or the
 * reload with its line, as the DAE clients file does. */
static int
check_radcfg(struct loader *ld)
{
	struct conf *c = ld->c;
	char err[CONF_ERR_LEN - sizeof("radius-config-file: ")];

	if (c->radius_config_file == NULL)
		return 0;
	if (c->radius_config_file[0] != '/' ||
	    radcfg_load(c->radius_config_file, ld->fs,
	    ld->flags & CONF_LOAD_NO_RESOLVE ? RADCFG_NO_RESOLVE : 0, &c->radcfg, err,
	    sizeof(err)) < 0) {
		ld->line = seen_at(ld, "radius-config-file");
		snprintf(ld->why, sizeof(ld->why), "radius-config-file: %s",
		    c->radius_config_file[0] != '/' ? "needs an absolute path" : err);
		return -1;
	}
	c->has_radcfg = 1;
	return 0;
}

static void
free_warnings(struct conf *c)
{
	for (size_t i = 0; i < c->nwarnings; i++)
		free(c->warnings[i]);
	free(c->warnings);
	c->warnings = NULL;
	c->nwarnings = 0;
}

/* Deep copy, without the warnings (they belong to one load). */
static int
conf_copy(struct conf *dst, const struct conf *src)
{
	int rc = 0;

	*dst = *src;
	dst->warnings = NULL;
	dst->nwarnings = 0;
	dst->file = dst->option = dst->ppp = dst->pidfile = dst->speed = NULL;
	dst->localip = dst->remoteip = dst->plugin = dst->peers = NULL;
	dst->ipv6_pool = dst->ipv6_radius_prefixes = NULL;
	dst->dae_clients_file = NULL;
	dst->dae_clients = NULL;   /* read again from the file by conf_load */
	dst->radius_config_file = NULL;
	dst->privsep_user = NULL;
	rc |= src->privsep_user && set_str(&dst->privsep_user, src->privsep_user);
	rc |= src->radius_config_file &&
	    set_str(&dst->radius_config_file, src->radius_config_file);
	rc |= src->dae_clients_file &&
	    set_str(&dst->dae_clients_file, src->dae_clients_file);
	rc |= src->plugin && set_str(&dst->plugin, src->plugin);
	rc |= src->peers && set_str(&dst->peers, src->peers);
	rc |= src->file && set_str(&dst->file, src->file);
	rc |= src->option && set_str(&dst->option, src->option);
	rc |= src->ppp && set_str(&dst->ppp, src->ppp);
	rc |= src->pidfile && set_str(&dst->pidfile, src->pidfile);
	rc |= src->speed && set_str(&dst->speed, src->speed);
	rc |= src->localip && set_str(&dst->localip, src->localip);
	rc |= src->remoteip && set_str(&dst->remoteip, src->remoteip);
	rc |= src->ipv6_pool && set_str(&dst->ipv6_pool, src->ipv6_pool);
	rc |= src->ipv6_radius_prefixes && set_str(&dst->ipv6_radius_prefixes,
	    src->ipv6_radius_prefixes);
	return rc ? -1 : 0;
}

void
conf_init(struct conf *c)
{
	memset(c, 0, sizeof(*c));
	set_str(&c->option, CONF_DEFAULT_OPTIONS);
	set_str(&c->ppp, CONF_DEFAULT_PPP);
	set_str(&c->pidfile, CONF_DEFAULT_PIDFILE);
	set_str(&c->speed, CONF_DEFAULT_SPEED);
	set_str(&c->plugin, CONF_DEFAULT_PLUGIN);
	set_str(&c->privsep_user, CONF_DEFAULT_PRIVSEP_USER);
	c->privsep = CONF_DEFAULT_PRIVSEP;
	c->listen.s_addr = htonl(INADDR_ANY);
	c->connections = CONF_DEFAULT_CONNECTIONS;
	c->per_client = CONF_DEFAULT_PER_CLIENT;
	c->calls_per_conn = CONF_DEFAULT_CALLS_PER_CONN;
	c->calls_per_client = CONF_DEFAULT_CALLS_PER_CLIENT;
	c->setups = CONF_DEFAULT_SETUPS;
	c->setups_per_client = CONF_DEFAULT_SETUPS_PER_CLIENT;
	c->call_rate = CONF_DEFAULT_CALL_RATE;
	c->setup_timeout = CONF_DEFAULT_SETUP_TIMEOUT;
	c->pool_share = CONF_DEFAULT_POOL_SHARE;
	c->stop_timeout = CONF_DEFAULT_STOP_TIMEOUT;
	c->stimeout = CONF_DEFAULT_STIMEOUT;
	c->tcp_mss_adjust = CONF_MSS_FROM_MTU;
}

int
conf_load(struct conf *c, const char *path, char *err, size_t errlen)
{
	return conf_load_fs(c, path, NULL, 0, err, errlen);
}

int
conf_load_fs(struct conf *c, const char *path, struct fileset *fs, int flags,
    char *err, size_t errlen)
{
	struct conf t;
	struct loader ld = { .c = &t, .path = path, .fs = fs, .flags = flags };
	FILE *f = NULL;
	int fd, rc = -1;

	if (conf_copy(&t, c) < 0 || set_str(&t.file, path) < 0) {
		snprintf(ld.why, sizeof(ld.why), "out of memory");
		goto out;
	}
	/* Lines point into this file: values kept from before have none. */
	t.line_localip = t.line_remoteip = 0;
	if ((fd = fileset_open(fs, path, O_RDONLY)) < 0 ||
	    (f = fdopen(fd, "r")) == NULL) {
		snprintf(ld.why, sizeof(ld.why), "cannot open: %s",
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	if (read_file(&ld, f) == 0 && check_pool(&ld) == 0 &&
	    check_plugin(&ld) == 0 && check_dae(&ld) == 0 &&
	    check_radcfg(&ld) == 0)
		rc = 0;
out:
	if (f != NULL)
		fclose(f);
	if (rc == 0) {
		conf_free(c);
		*c = t;
	} else {
		conf_free(&t);
		if (ld.line > 0)
			snprintf(err, errlen, "%s:%d: %s", path, ld.line, ld.why);
		else
			snprintf(err, errlen, "%s: %s", path, ld.why);
	}
	return rc;
}

int
conf_prefix6_routable(const struct conf *c, const struct in6_addr *p)
{
	return !prefix6_is_special(p) && (prefix6_set_holds(&c->pool6_net, p) ||
	    prefix6_set_holds(&c->radius6, p));
}

void
conf_free(struct conf *c)
{
	free(c->file);
	free(c->privsep_user);
	c->privsep_user = NULL;
	free(c->option);
	free(c->ppp);
	free(c->pidfile);
	free(c->speed);
	free(c->localip);
	free(c->remoteip);
	free(c->ipv6_pool);
	free(c->ipv6_radius_prefixes);
	free(c->radius_config_file);
	explicit_bzero(&c->radcfg, sizeof(c->radcfg));
	c->has_radcfg = 0;
	c->radius_config_file = NULL;
	free(c->plugin);
	free(c->peers);
	free(c->dae_clients_file);
	dae_clients_free(c->dae_clients);
	c->dae_clients_file = NULL;
	c->dae_clients = NULL;
	free_warnings(c);
	c->file = c->option = c->ppp = c->pidfile = c->speed = NULL;
	c->localip = c->remoteip = c->plugin = c->peers = NULL;
	c->ipv6_pool = c->ipv6_radius_prefixes = NULL;
	memset(&c->radius6, 0, sizeof(c->radius6));
	memset(&c->pool6_net, 0, sizeof(c->pool6_net));
}

static int
str_differs(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a != b;
	return strcmp(a, b) != 0;
}

/* Keys whose sockets or files are set up once, or that chose something at
 * startup (noplugin and datapath: the data path): a reload that changes
 * one is refused, so what the daemon does always matches its
 * configuration.
 * (`listen` is not one: only the TCP listener is bound to it; the GRE
 * socket is bound to no address and each call's GRE leaves from its own
 * connection's local address.) */
static const char *
conf_restart_key(const struct conf *a, const struct conf *b)
{
	if (a->metrics_listen.sin_addr.s_addr != b->metrics_listen.sin_addr.s_addr ||
	    a->metrics_listen.sin_port != b->metrics_listen.sin_port)
		return "metrics-listen";
	if (a->dae_listen.sin_addr.s_addr != b->dae_listen.sin_addr.s_addr ||
	    a->dae_listen.sin_port != b->dae_listen.sin_port)
		return "radius-dae-listen";
	if (a->noplugin != b->noplugin)
		return "noplugin";
	if (a->datapath != b->datapath)   /* chosen (and logged) at startup */
		return "datapath";
	if (str_differs(a->pidfile, b->pidfile))
		return "pidfile";
	if (a->privsep != b->privsep)   /* the process's shape */
		return "privsep";
	if (str_differs(a->privsep_user, b->privsep_user))   /* the worker's */
		return "privsep-user";
	return NULL;
}

int
conf_restart_check(const struct conf *a, const struct conf *b, char *err,
    size_t errlen)
{
	const char *key = conf_restart_key(a, b);
	if (key == NULL)
		return 0;
	snprintf(err, errlen, "%s: '%s' changed: %s changes need a restart",
	    b->file, key, key);
	return -1;
}
