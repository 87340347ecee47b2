/*
 * peers.c -- parser and matcher for the pptpd-peers policy file.
 * See peers.h for the API and pptpd-peers(5) for the format.
 *
 * The parser is strict on purpose: the file decides whether a session is
 * encrypted, so anything it does not understand is an error naming the file
 * and line, never a rule silently skipped.
 */
#include "proto/peers.h"
#include "common/strclean.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* Longest piece of a bad token quoted in an error. */
#define PEERS_QUOTE_MAX 40

/* keyword subject policy [mode] [rate DOWN/UP] is 6 words; two more so
 * that a repeated "rate DOWN/UP" is read and named as such, not as a word
 * past the end. */
#define PEERS_MAX_TOKENS 8
#define PEERS_POLICY_TOKEN 2  /* the index of the policy word */

/* `rate DOWN/UP` (pptpd-peers(5)): the keyword, the separator, and the
 * suffixes of a value with the power of ten each stands for. */
#define PEERS_RATE_KEYWORD "rate"
#define PEERS_RATE_SEP     '/'
#define PEERS_RATE_KILO    3
#define PEERS_RATE_MEGA    6
#define PEERS_RATE_GIGA    9
/* Digits in a value (integer and fraction): its mantissa then fits a
 * uint64_t, and no valid rate needs more. */
#define PEERS_RATE_DIGITS  18

/* pppd's "%v" (see peers_pppd_name): a byte turns into at most four
 * ("M-^A"). */
#define PEERS_PPPD_EXPANSION  4
#define PEERS_HIGH_BIT        0x80
#define PEERS_FIRST_PRINTABLE 0x20
#define PEERS_DEL             0x7f
#define PEERS_CTRL_FLIP       0x40
/* Most of such a name shown in the error (the message fits PEERS_ERR_MAX
 * with the file name). */
#define PEERS_MSG_NAME_MAX    300

struct peers_token {
	char *s;          /* decoded, NUL-terminated (points into a line copy) */
	size_t len;
};

static void
peers_err(char *err, size_t errlen, const char *name, unsigned line,
    const char *fmt, ...)
{
	va_list ap;
	int n;

	if (err == NULL || errlen == 0)
		return;
	if (line > 0)
		n = snprintf(err, errlen, "%s:%u: ", name, line);
	else
		n = snprintf(err, errlen, "%s: ", name);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

/* A token quoted for a message: printable ASCII only, bounded. */
static const char *
peers_show(const char *s, size_t len, char *buf, size_t buflen)
{
	return str_clean(buf, buflen, s, len, PEERS_QUOTE_MAX);
}

PEERS_API const char *
peers_policy_name(enum peers_policy p)
{
	switch (p) {
	case PEERS_REQUIRE_128: return "require-128";
	case PEERS_REQUIRE: return "require";
	case PEERS_ALLOW: return "allow";
	case PEERS_DENY: return "deny";
	case PEERS_POLICY_NONE: break;
	}
	return "default";
}

PEERS_API const char *
peers_mode_name(enum peers_mode m)
{
	switch (m) {
	case PEERS_STATELESS: return "stateless";
	case PEERS_STATEFUL: return "stateful";
	case PEERS_MODE_DEFAULT: break;
	}
	return "default";
}

static int
peers_policy_parse(const char *s, enum peers_policy *p)
{
	if (strcmp(s, "require-128") == 0)
		*p = PEERS_REQUIRE_128;
	else if (strcmp(s, "require") == 0)
		*p = PEERS_REQUIRE;
	else if (strcmp(s, "allow") == 0)
		*p = PEERS_ALLOW;
	else if (strcmp(s, "deny") == 0)
		*p = PEERS_DENY;
	else
		return -1;
	return 0;
}

static int
peers_mode_parse(const char *s, enum peers_mode *m)
{
	if (strcmp(s, "stateless") == 0)
		*m = PEERS_STATELESS;
	else if (strcmp(s, "stateful") == 0)
		*m = PEERS_STATEFUL;
	else
		return -1;
	return 0;
}

static uint64_t
peers_pow10(unsigned n)
{
	uint64_t v = 1;

	while (n-- > 0)
		v *= 10;
	return v;
}

/* The power of ten a rate's suffix stands for, or -1 if C is none. */
static int
peers_rate_suffix(char c)
{
	switch (c) {
	case 'k': case 'K': return PEERS_RATE_KILO;
	case 'm': case 'M': return PEERS_RATE_MEGA;
	case 'g': case 'G': return PEERS_RATE_GIGA;
	}
	return -1;
}

/* One rate value (see peers_parse_rate) into *BPS: NULL, or why it is not
 * one (for the line's "bad rate DOWN 'VALUE': WHY").  Exact integer
 * arithmetic: 1.5M is 1500000, and a value that is not a whole number of
 * bits/s is refused rather than rounded. */
static const char *
peers_rate_scan(const char *s, uint64_t *bps)
{
	uint64_t mant = 0, scale, v;
	unsigned digits = 0, frac = 0;
	int dot = 0, exp = 0;
	const char *p;

	for (p = s; *p != '\0'; p++) {
		if (*p >= '0' && *p <= '9') {
			if (++digits > PEERS_RATE_DIGITS)
				return "too many digits";
			mant = mant * 10 + (uint64_t)(*p - '0');
			if (dot)
				frac++;
		} else if (*p == '.' && !dot && digits > 0)
			dot = 1;
		else
			break;
	}
	if (digits == 0 || (dot && frac == 0))
		return "want digits, an optional fraction, then k, M or G";
	if (*p != '\0') {
		exp = peers_rate_suffix(*p++);
		if (exp < 0)
			return "want digits, an optional fraction, then k, M "
			    "or G";
		if (*p != '\0')
			return "junk after the suffix";
	}
	if (frac > (unsigned)exp) {
		scale = peers_pow10(frac - (unsigned)exp);
		if (mant % scale != 0)
			return "not a whole number of bits/s";
		v = mant / scale;
	} else {
		scale = peers_pow10((unsigned)exp - frac);
		if (mant > PEERS_RATE_MAX / scale)
			return "over 10G";
		v = mant * scale;
	}
	if (v != 0 && v < PEERS_RATE_MIN)
		return "under 8k (0 is no limit)";
	if (v > PEERS_RATE_MAX)
		return "over 10G";
	*bps = v;
	return NULL;
}

PEERS_API int
peers_parse_rate(const char *s, uint64_t *bps)
{
	uint64_t v;

	if (s == NULL || peers_rate_scan(s, &v) != NULL)
		return -1;
	*bps = v;
	return 0;
}

PEERS_API int
peers_parse_net(const char *s, int *family, uint8_t addr[16], unsigned *prefix,
    char *err, size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t hlen = slash ? (size_t)(slash - s) : strlen(s);
	unsigned max, pfx, i;
	uint8_t buf[16];

	if (hlen == 0 || hlen >= sizeof(host)) {
		snprintf(err, errlen, "bad address");
		return -1;
	}
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	memset(buf, 0, sizeof(buf));
	if (inet_pton(AF_INET, host, buf) == 1) {
		*family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, host, buf) == 1) {
		*family = AF_INET6;
		max = 128;
	} else {
		snprintf(err, errlen, "bad address");
		return -1;
	}
	pfx = max;
	if (slash) {
		const char *p = slash + 1;
		if (*p == '\0') {
			snprintf(err, errlen, "missing prefix length after '/'");
			return -1;
		}
		pfx = 0;
		for (; *p; p++) {
			if (*p < '0' || *p > '9' || pfx > max) {
				snprintf(err, errlen, "bad prefix length");
				return -1;
			}
			pfx = pfx * 10 + (unsigned)(*p - '0');
		}
		if (pfx > max) {
			snprintf(err, errlen, "prefix length over %u", max);
			return -1;
		}
	}
	/* Clients with IPv4-mapped addresses are matched as IPv4, so a rule
	 * written in the mapped form would silently never apply. */
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xff };
	if (*family == AF_INET6 && pfx >= 96 &&
	    memcmp(buf, v4mapped, sizeof(v4mapped)) == 0) {
		snprintf(err, errlen, "IPv4-mapped address: write it as IPv4 "
		    "(%u.%u.%u.%u/%u)", buf[12], buf[13], buf[14], buf[15], pfx - 96);
		return -1;
	}
	/* Host bits must be zero: 198.18.0.1/24 is more likely a typo than a
	 * network. */
	for (i = 0; i < max / 8; i++) {
		unsigned bits = pfx > i * 8 ? pfx - i * 8 : 0;
		uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff00u >> bits);
		if (buf[i] & (uint8_t)~mask) {
			snprintf(err, errlen, "host bits set (the network is "
			    "%u bits long)", pfx);
			return -1;
		}
	}
	memcpy(addr, buf, 16);
	*prefix = pfx;
	return 0;
}

/* Split one line (no newline) into tokens, decoding "quoted" ones in place.
 * Returns the count, or -1 with a message in MSG. */
static int
peers_tokenize(char *line, size_t len, struct peers_token *tok, char *msg,
    size_t msglen)
{
	size_t i = 0;
	int n = 0;

	while (i < len) {
		char *out;
		size_t start;

		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i >= len || line[i] == '#')
			break;
		if (n == PEERS_MAX_TOKENS) {
			char show[64];
			size_t e = i;
			while (e < len && line[e] != ' ' && line[e] != '\t')
				e++;
			snprintf(msg, msglen, "unexpected '%s' after the rule",
			    peers_show(line + i, e - i, show, sizeof(show)));
			return -1;
		}
		start = i;
		out = line + i;
		if (line[i] == '"') {
			size_t o = 0;
			i++;
			for (;;) {
				if (i >= len) {
					snprintf(msg, msglen, "unterminated quote");
					return -1;
				}
				if (line[i] == '"')
					break;
				if (line[i] == '\\') {
					if (i + 1 >= len) {
						snprintf(msg, msglen,
						    "unterminated quote");
						return -1;
					}
					i++;
				}
				out[o++] = line[i++];
			}
			i++; /* closing quote */
			if (i < len && line[i] != ' ' && line[i] != '\t') {
				snprintf(msg, msglen,
				    "no space after a closing quote");
				return -1;
			}
			tok[n].s = out;
			tok[n].len = o;
			/* The closing quote (or what we shifted over) is free
			 * for the terminator. */
			out[o] = '\0';
		} else {
			while (i < len && line[i] != ' ' && line[i] != '\t') {
				if (line[i] == '"') {
					snprintf(msg, msglen,
					    "quote inside a word");
					return -1;
				}
				i++;
			}
			tok[n].s = out;
			tok[n].len = i - start;
			if (i < len)
				line[i++] = '\0';
			else
				line[i] = '\0'; /* the line copy has room */
		}
		n++;
	}
	return n;
}

static int
peers_cmp_rule(const void *a, const void *b)
{
	const struct peers_rule *x = *(const struct peers_rule *const *)a;
	const struct peers_rule *y = *(const struct peers_rule *const *)b;
	int c;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->kind == PEERS_RULE_USER)
		c = strcmp(x->user, y->user);
	else {
		if (x->family != y->family)
			return x->family < y->family ? -1 : 1;
		if (x->prefix != y->prefix)
			return x->prefix < y->prefix ? -1 : 1;
		c = memcmp(x->addr, y->addr, sizeof(x->addr));
	}
	if (c != 0)
		return c;
	return x->line < y->line ? -1 : (x->line > y->line);
}

/* pppd hands the plugin the CHAP name formatted with its "%.*v": a byte
 * of 0x80 or above becomes "M-" and the byte less 0x80, and a control
 * byte then "^" and the byte xor 0x40 (a tab stays).  A rule written with
 * such bytes (UTF-8 é) would never match, and the session would fall back
 * to a weaker rule without a word: such rules are refused, the message
 * saying the name pppd reports. */
static int
peers_has_non_ascii(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] >= PEERS_HIGH_BIT)
			return 1;
	return 0;
}

static void
peers_pppd_name(const char *s, size_t len, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + PEERS_PPPD_EXPANSION < outlen; i++) {
		unsigned c = (unsigned char)s[i];
		if (c >= PEERS_HIGH_BIT) {
			out[o++] = 'M';
			out[o++] = '-';
			c -= PEERS_HIGH_BIT;
		}
		if ((c < PEERS_FIRST_PRINTABLE && c != '\t') || c == PEERS_DEL) {
			out[o++] = '^';
			c ^= PEERS_CTRL_FLIP;
		}
		out[o++] = (char)c;
	}
	out[o] = '\0';
}

/* Two rules for the same user or the same network are an error: which one
 * wins would depend on the order of lines, easy to get wrong. */
static int
peers_check_dups(struct peers *p, char *err, size_t errlen)
{
	const struct peers_rule **v;
	size_t i;
	int rc = 0;

	if (p->n < 2)
		return 0;
	v = malloc(p->n * sizeof(*v));
	if (v == NULL) {
		peers_err(err, errlen, p->file, 0, "out of memory");
		return -1;
	}
	for (i = 0; i < p->n; i++)
		v[i] = &p->rules[i];
	qsort(v, p->n, sizeof(*v), peers_cmp_rule);
	for (i = 1; i < p->n; i++) {
		const struct peers_rule *a = v[i - 1], *b = v[i];
		int same;
		if (a->kind != b->kind)
			continue;
		if (a->kind == PEERS_RULE_USER)
			same = strcmp(a->user, b->user) == 0;
		else
			same = a->family == b->family && a->prefix == b->prefix &&
			    memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
		if (same) {
			const struct peers_rule *later = b;
			peers_err(err, errlen, p->file, later->line,
			    "duplicate %s rule (first at line %u)",
			    a->kind == PEERS_RULE_USER ? "user" : "address",
			    a->line);
			rc = -1;
			break;
		}
	}
	free(v);
	return rc;
}

PEERS_API void
peers_free(struct peers *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++)
		free(p->rules[i].user);
	free(p->rules);
	free(p->file);
	free(p);
}

/* "DOWN/UP" into R's rates.  Returns 0, or -1 with a message in MSG. */
static int
peers_rate_pair(const struct peers_token *t, struct peers_rule *r, char *msg,
    size_t msglen)
{
	char show[64], *sep = memchr(t->s, PEERS_RATE_SEP, t->len);
	const char *why, *dir = "DOWN", *bad = t->s;
	size_t badlen;

	if (sep == NULL) {
		snprintf(msg, msglen, "rate '%s' without '/' (want rate DOWN/UP, "
		    "e.g. rate 4M/1M)", peers_show(t->s, t->len, show,
		    sizeof(show)));
		return -1;
	}
	/* DOWN ends at the separator: the token is a line copy, ours. */
	*sep = '\0';
	badlen = (size_t)(sep - t->s);
	why = peers_rate_scan(t->s, &r->rate_down);
	*sep = PEERS_RATE_SEP;
	if (why == NULL) {
		dir = "UP";
		bad = sep + 1;
		badlen = t->len - (size_t)(bad - t->s);
		why = peers_rate_scan(bad, &r->rate_up);
	}
	if (why != NULL) {
		snprintf(msg, msglen, "bad rate %s '%s': %s", dir,
		    peers_show(bad, badlen, show, sizeof(show)), why);
		return -1;
	}
	if (r->rate_down == 0 && r->rate_up == 0) {
		snprintf(msg, msglen, "rate 0/0 limits nothing: omit rate");
		return -1;
	}
	return 0;
}

/* What follows the policy: [MODE] [rate DOWN/UP], in that order, into R.
 * Returns 0, or -1 with a message in MSG. */
static int
peers_rule_tail(const struct peers_token *tok, int n, struct peers_rule *r,
    char *msg, size_t msglen)
{
	char show[64];
	int i = PEERS_POLICY_TOKEN + 1;

	if (i < n && strcmp(tok[i].s, PEERS_RATE_KEYWORD) != 0) {
		if (peers_mode_parse(tok[i].s, &r->mode) < 0) {
			snprintf(msg, msglen, "unknown mode '%s' (want stateless "
			    "or stateful)", peers_show(tok[i].s, tok[i].len,
			    show, sizeof(show)));
			return -1;
		}
		i++;
	}
	if (i < n && strcmp(tok[i].s, PEERS_RATE_KEYWORD) == 0) {
		if (i + 1 >= n) {
			snprintf(msg, msglen, "rate without DOWN/UP (e.g. rate "
			    "4M/1M)");
			return -1;
		}
		if (peers_rate_pair(&tok[i + 1], r, msg, msglen) < 0)
			return -1;
		i += 2;
	}
	if (i >= n)
		return 0;
	if (strcmp(tok[i].s, PEERS_RATE_KEYWORD) == 0)
		snprintf(msg, msglen, "rate given twice");
	else
		snprintf(msg, msglen, "unexpected '%s' after the rule",
		    peers_show(tok[i].s, tok[i].len, show, sizeof(show)));
	return -1;
}

/* Parse one line's tokens into a rule appended to P.  Returns 0, or -1 with
 * a message (no location) in MSG. */
static int
peers_rule_add(struct peers *p, size_t *cap, struct peers_token *tok, int n,
    unsigned lineno, char *msg, size_t msglen)
{
	struct peers_rule r;
	char show[64], why[128];

	memset(&r, 0, sizeof(r));
	r.line = lineno;
	if (strcmp(tok[0].s, "user") == 0)
		r.kind = PEERS_RULE_USER;
	else if (strcmp(tok[0].s, "address") == 0)
		r.kind = PEERS_RULE_ADDRESS;
	else {
		snprintf(msg, msglen, "unknown keyword '%s' (want user or "
		    "address)", peers_show(tok[0].s, tok[0].len, show,
		    sizeof(show)));
		return -1;
	}
	if (n < 2) {
		snprintf(msg, msglen, "%s rule without %s", tok[0].s,
		    r.kind == PEERS_RULE_USER ? "a name" : "an address");
		return -1;
	}
	if (n <= PEERS_POLICY_TOKEN) {
		snprintf(msg, msglen, "%s rule without a policy (require-128, "
		    "require, allow or deny)", tok[0].s);
		return -1;
	}
	if (r.kind == PEERS_RULE_USER) {
		if (tok[1].len == 0) {
			snprintf(msg, msglen, "empty user name");
			return -1;
		}
		if (tok[1].len > PEERS_MAX_NAME) {
			snprintf(msg, msglen, "user name over %d bytes",
			    PEERS_MAX_NAME);
			return -1;
		}
		if (memchr(tok[1].s, '\0', tok[1].len) != NULL) {
			snprintf(msg, msglen, "NUL byte in user name");
			return -1;
		}
		if (peers_has_non_ascii(tok[1].s, tok[1].len)) {
			char as_pppd[PEERS_MAX_NAME * PEERS_PPPD_EXPANSION + 1];
			peers_pppd_name(tok[1].s, tok[1].len, as_pppd,
			    sizeof(as_pppd));
			snprintf(msg, msglen, "user name with a byte outside "
			    "ASCII: pppd reports that peer as '%.*s'; write the "
			    "name that way", PEERS_MSG_NAME_MAX, as_pppd);
			return -1;
		}
	} else {
		if (peers_parse_net(tok[1].s, &r.family, r.addr, &r.prefix, why,
		    sizeof(why)) < 0) {
			snprintf(msg, msglen, "%s: '%s'", why,
			    peers_show(tok[1].s, tok[1].len, show, sizeof(show)));
			return -1;
		}
	}
	if (peers_policy_parse(tok[PEERS_POLICY_TOKEN].s, &r.policy) < 0) {
		snprintf(msg, msglen, "unknown policy '%s' (want require-128, "
		    "require, allow or deny)", peers_show(tok[PEERS_POLICY_TOKEN].s,
		    tok[PEERS_POLICY_TOKEN].len, show, sizeof(show)));
		return -1;
	}
	if (peers_rule_tail(tok, n, &r, msg, msglen) < 0)
		return -1;
	if (p->n >= PEERS_MAX_RULES) {
		snprintf(msg, msglen, "more than %d rules", PEERS_MAX_RULES);
		return -1;
	}
	if (r.kind == PEERS_RULE_USER) {
		r.user = malloc(tok[1].len + 1);
		if (r.user == NULL) {
			snprintf(msg, msglen, "out of memory");
			return -1;
		}
		memcpy(r.user, tok[1].s, tok[1].len);
		r.user[tok[1].len] = '\0';
	}
	if (p->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct peers_rule *nr = realloc(p->rules, ncap * sizeof(*nr));
		if (nr == NULL) {
			free(r.user);
			snprintf(msg, msglen, "out of memory");
			return -1;
		}
		p->rules = nr;
		*cap = ncap;
	}
	p->rules[p->n++] = r;
	return 0;
}

PEERS_API int
peers_parse(const char *text, size_t len, const char *name, struct peers **out,
    char *err, size_t errlen)
{
	struct peers *p;
	size_t cap = 0, pos = 0;
	unsigned lineno = 0;
	char *line;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (name == NULL)
		name = "(peers)";
	if (len > PEERS_MAX_FILE) {
		peers_err(err, errlen, name, 0, "file over %d bytes",
		    PEERS_MAX_FILE);
		return -1;
	}
	p = calloc(1, sizeof(*p));
	line = malloc(PEERS_MAX_LINE + 2);
	if (p == NULL || line == NULL || (p->file = strdup(name)) == NULL) {
		free(line);
		peers_free(p);
		peers_err(err, errlen, name, 0, "out of memory");
		return -1;
	}
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		const char *start;
		size_t llen = nl ? (size_t)(nl - (text + pos)) : len - pos;
		struct peers_token tok[PEERS_MAX_TOKENS];
		char msg[PEERS_ERR_MAX];
		size_t i;
		int n;

		lineno++;
		start = text + pos;
		pos += llen + (nl != NULL);
		if (llen > 0 && start[llen - 1] == '\r')
			llen--; /* CRLF line end */
		if (llen > PEERS_MAX_LINE) {
			peers_err(err, errlen, name, lineno,
			    "line longer than %d bytes", PEERS_MAX_LINE);
			goto fail;
		}
		memcpy(line, start, llen);
		for (i = 0; i < llen; i++) {
			unsigned char c = (unsigned char)line[i];
			if ((c < 0x20 && c != '\t') || c == 0x7f) {
				peers_err(err, errlen, name, lineno,
				    "control character 0x%02x", c);
				goto fail;
			}
		}
		n = peers_tokenize(line, llen, tok, msg, sizeof(msg));
		if (n < 0) {
			peers_err(err, errlen, name, lineno, "%s", msg);
			goto fail;
		}
		if (n == 0)
			continue;
		if (peers_rule_add(p, &cap, tok, n, lineno, msg,
		    sizeof(msg)) < 0) {
			peers_err(err, errlen, name, lineno, "%s", msg);
			goto fail;
		}
	}
	free(line);
	if (peers_check_dups(p, err, errlen) < 0) {
		peers_free(p);
		return -1;
	}
	*out = p;
	return 0;
fail:
	free(line);
	peers_free(p);
	return -1;
}

PEERS_API int
peers_load(const char *path, struct peers **out, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), rc;

	*out = NULL;
	if (fd < 0) {
		peers_err(err, errlen, path, 0, "cannot open: %s",
		    strerror(errno));
		return -1;
	}
	rc = peers_load_fd(fd, path, out, err, errlen);
	close(fd);
	return rc;
}

PEERS_API int
peers_load_fd(int fd, const char *path, struct peers **out, char *err,
    size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		peers_err(err, errlen, path, 0, "not a regular file");
		return -1;
	}
	if (st.st_size > PEERS_MAX_FILE) {
		peers_err(err, errlen, path, 0, "file over %d bytes",
		    PEERS_MAX_FILE);
		return -1;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		peers_err(err, errlen, path, 0, "out of memory");
		return -1;
	}
	/* Read up to one byte more than expected to see a file that grew. */
	while (len <= (size_t)st.st_size) {
		ssize_t r = read(fd, buf + len, (size_t)st.st_size + 1 - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			peers_err(err, errlen, path, 0, "read error: %s",
			    strerror(errno));
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len > (size_t)st.st_size) {
		peers_err(err, errlen, path, 0, "file changed while read");
		free(buf);
		return -1;
	}
	rc = peers_parse(buf, len, path, out, err, errlen);
	free(buf);
	return rc;
}

/* Does ADDR (of FAMILY) fall in rule R's network? */
static int
peers_net_contains(const struct peers_rule *r, int family, const uint8_t *addr)
{
	unsigned full = r->prefix / 8, rest = r->prefix % 8;

	if (r->family != family)
		return 0;
	if (memcmp(r->addr, addr, full) != 0)
		return 0;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff00u >> rest);
		if ((addr[full] & mask) != r->addr[full])
			return 0;
	}
	return 1;
}

PEERS_API const struct peers_rule *
peers_match(const struct peers *p, const char *user, const char *client)
{
	const struct peers_rule *best = NULL;
	uint8_t addr[16];
	int family = 0;
	size_t i;

	if (p == NULL)
		return NULL;
	if (user != NULL && user[0] != '\0') {
		for (i = 0; i < p->n; i++) {
			const struct peers_rule *r = &p->rules[i];
			if (r->kind == PEERS_RULE_USER && strcmp(r->user, user) == 0)
				return r;
		}
	}
	if (client == NULL || client[0] == '\0')
		return NULL;
	memset(addr, 0, sizeof(addr));
	if (inet_pton(AF_INET, client, addr) == 1)
		family = AF_INET;
	else if (inet_pton(AF_INET6, client, addr) == 1) {
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0,
		    0, 0xff, 0xff };
		family = AF_INET6;
		if (memcmp(addr, mapped, sizeof(mapped)) == 0) {
			/* ::ffff:a.b.c.d is an IPv4 client. */
			memmove(addr, addr + 12, 4);
			memset(addr + 4, 0, 12);
			family = AF_INET;
		}
	} else
		return NULL;
	for (i = 0; i < p->n; i++) {
		const struct peers_rule *r = &p->rules[i];
		if (r->kind != PEERS_RULE_ADDRESS)
			continue;
		if (!peers_net_contains(r, family, addr))
			continue;
		if (best == NULL || r->prefix > best->prefix)
			best = r;
	}
	return best;
}
