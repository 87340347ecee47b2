/*
 * peers.h -- the per-peer MPPE policy file of the pptpd-policy pppd plugin.
 *
 * Pure C (libc only, no pppd headers) so that it can be unit-tested and
 * fuzzed on its own.  The file format is documented in pptpd-peers(5):
 *
 *     # comment
 *     user    NAME            POLICY [MODE] [rate DOWN/UP]
 *     address ADDR[/PREFIX]   POLICY [MODE] [rate DOWN/UP]
 *
 * POLICY is one of require-128, require, allow, deny; MODE is stateless or
 * stateful; DOWN (server to client) and UP (client to server) are the
 * session's rate limits (see peers_parse_rate).  Precedence when looking
 * up a session: a user rule for the authenticated name first, then the
 * address rule with the longest prefix containing the client's address;
 * with no match the caller applies its default (for the plugin: pppd's
 * own MPPE options, as parsed, and no rate limit).
 *
 * Every function that can fail writes "FILE:LINE: reason" (or "FILE: reason"
 * for errors about the file as a whole) into the caller's error buffer.
 *
 * PEERS_API is empty by default; a test may define it (e.g. to "static")
 * before including peers.c directly.
 */
#ifndef PROTO_PEERS_H
#define PROTO_PEERS_H

#include <stddef.h>
#include <stdint.h>

#ifndef PEERS_API
#define PEERS_API
#endif

#define PEERS_MAX_FILE     (1024 * 1024) /* bytes; a larger file is an error */
#define PEERS_MAX_LINE     1024          /* bytes per line, newline excluded */
#define PEERS_MAX_NAME     255           /* bytes in a user name (pppd: 256-1) */
#define PEERS_MAX_RULES    65536
#define PEERS_ERR_MAX      512           /* a good size for error buffers */
/* A rule's rate, bits/s each way: 0 (no limit that way) or within these.
 * Below 8k a full-sized packet would wait over a second; above 10G is no
 * limit on any link pptpd serves.  pptpd's shaper takes the same bounds. */
#define PEERS_RATE_MIN     8000ULL
#define PEERS_RATE_MAX     10000000000ULL

enum peers_policy {
	PEERS_POLICY_NONE = 0,   /* no rule matched: caller's default */
	PEERS_REQUIRE_128,       /* MPPE 128-bit or no session */
	PEERS_REQUIRE,           /* MPPE of any strength (40 or 128) or no session */
	PEERS_ALLOW,             /* MPPE if the client asks for it, else none */
	PEERS_DENY,              /* never MPPE: a client insisting on it fails */
};

enum peers_mode {
	PEERS_MODE_DEFAULT = 0,  /* as pppd's options say (mppe-stateful) */
	PEERS_STATELESS,         /* refuse MPPE stateful mode */
	PEERS_STATEFUL,          /* accept stateful mode if the client asks */
};

enum peers_kind {
	PEERS_RULE_USER = 1,
	PEERS_RULE_ADDRESS,
};

struct peers_rule {
	enum peers_kind kind;
	enum peers_policy policy;
	enum peers_mode mode;
	unsigned line;            /* 1-based line in the file */
	char *user;               /* PEERS_RULE_USER: NUL-terminated, not empty */
	int family;               /* PEERS_RULE_ADDRESS: AF_INET or AF_INET6 */
	uint8_t addr[16];         /* network address, host bits zero */
	unsigned prefix;          /* 0..32 or 0..128 */
	uint64_t rate_down;       /* bits/s server to client, 0: no limit */
	uint64_t rate_up;         /* bits/s client to server, 0: no limit */
};

struct peers {
	char *file;               /* the name used in messages */
	struct peers_rule *rules;
	size_t n;
};

/* Parse LEN bytes of file text.  NAME is used in messages.  On success
 * returns 0 and *OUT (free with peers_free); on error returns -1, leaves *OUT
 * NULL and writes "NAME:LINE: reason" into ERR. */
PEERS_API int peers_parse(const char *text, size_t len, const char *name,
    struct peers **out, char *err, size_t errlen);

/* Read and parse the file at PATH (messages name PATH). */
PEERS_API int peers_load(const char *path, struct peers **out, char *err,
    size_t errlen);
/* The same from FD, open on it (at its start; left open): a file the
 * caller could open but not name to us (pptpd/fileset.h). */
PEERS_API int peers_load_fd(int fd, const char *path, struct peers **out,
    char *err, size_t errlen);

PEERS_API void peers_free(struct peers *p);

/* The rule that applies to a session, or NULL for "use the default".
 * USER may be NULL or empty (no authenticated name); CLIENT is the client's
 * address as text (IPv4 dotted quad or IPv6), NULL/empty/unparsable meaning
 * unknown: then only user rules can match. */
PEERS_API const struct peers_rule *peers_match(const struct peers *p,
    const char *user, const char *client);

/* Parse "ADDR" or "ADDR/PREFIX" (strict: no host bits set).  Returns 0 or
 * -1 with a reason in ERR (no file/line prefix). */
PEERS_API int peers_parse_net(const char *s, int *family, uint8_t addr[16],
    unsigned *prefix, char *err, size_t errlen);

/* Parse one rate: decimal digits, an optional fraction, an optional
 * suffix k, M or G (either case; powers of 1000), in bits/s: "512k",
 * "1.5M", "10G", "8000".  Returns 0 with *BPS set when it is a whole
 * number of bits/s that is 0 or within PEERS_RATE_MIN..PEERS_RATE_MAX,
 * else -1. */
PEERS_API int peers_parse_rate(const char *s, uint64_t *bps);

/* Keyword of a policy / mode ("require-128", "stateless", ...);
 * "default" for the NONE/DEFAULT values. */
PEERS_API const char *peers_policy_name(enum peers_policy p);
PEERS_API const char *peers_mode_name(enum peers_mode m);

#endif
