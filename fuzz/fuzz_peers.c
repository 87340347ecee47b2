/* Fuzz the per-peer MPPE policy file parser of the pppd plugin
 * (proto/peers.c): peers_parse() on the raw text, without a terminating
 * NUL (an exact-size copy, so a read past the end is caught).
 *
 * Checks: on failure *out stays NULL and the message is NUL-terminated
 * within the caller's buffer; on success every rule is well formed (names
 * non-empty and bounded, prefixes in range, no host bits set, rates 0 or
 * within bounds, written in decimal a value peers_parse_rate takes back),
 * the rules
 * written back as text parse to the same rules, and peers_match() finds,
 * for each rule, that rule (user) or one at least as specific (address).
 *
 * Input: 1 byte choosing the error buffer size, then the file. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_util.h"
#include "proto/peers.h"

/* A rule's rate: none, or within the bounds, and its decimal form parses
 * back to it. */
static void
check_rate(uint64_t v)
{
	char text[32];
	uint64_t back = 1;

	if (v != 0 && (v < PEERS_RATE_MIN || v > PEERS_RATE_MAX))
		abort();
	snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
	if (peers_parse_rate(text, &back) != 0 || back != v)
		abort();
}

static void
check_rule(const struct peers_rule *r)
{
	if (r->policy < PEERS_REQUIRE_128 || r->policy > PEERS_DENY)
		abort();
	if (r->mode < PEERS_MODE_DEFAULT || r->mode > PEERS_STATEFUL)
		abort();
	if (r->line == 0)
		abort();
	if (peers_policy_name(r->policy) == NULL || peers_mode_name(r->mode) == NULL)
		abort();
	check_rate(r->rate_down);
	check_rate(r->rate_up);
	if (r->kind == PEERS_RULE_USER) {
		size_t n = strlen(r->user);
		if (n == 0 || n > PEERS_MAX_NAME)
			abort();
	} else if (r->kind == PEERS_RULE_ADDRESS) {
		unsigned bits = r->family == AF_INET ? 32 : r->family == AF_INET6 ? 128 : 0;
		if (bits == 0 || r->prefix > bits)
			abort();
		for (unsigned b = r->prefix; b < bits; b++)
			if (r->addr[b / 8] & (0x80 >> (b % 8)))
				abort();   /* host bits set */
	} else {
		abort();
	}
}

/* Write the rules back in the file's syntax. */
static char *
serialize(const struct peers *p, size_t *len)
{
	size_t cap = 64 + p->n * (2 * PEERS_MAX_NAME + 96), o = 0;
	char *t = malloc(cap);
	for (size_t i = 0; i < p->n; i++) {
		const struct peers_rule *r = &p->rules[i];
		if (r->kind == PEERS_RULE_USER) {
			o += (size_t)snprintf(t + o, cap - o, "user \"");
			for (const char *s = r->user; *s; s++) {
				if (*s == '"' || *s == '\\')
					t[o++] = '\\';
				t[o++] = *s;
			}
			o += (size_t)snprintf(t + o, cap - o, "\"");
		} else {
			char a[INET6_ADDRSTRLEN];
			inet_ntop(r->family, r->addr, a, sizeof(a));
			o += (size_t)snprintf(t + o, cap - o, "address %s/%u", a, r->prefix);
		}
		o += (size_t)snprintf(t + o, cap - o, " %s", peers_policy_name(r->policy));
		if (r->mode != PEERS_MODE_DEFAULT)
			o += (size_t)snprintf(t + o, cap - o, " %s", peers_mode_name(r->mode));
		if (r->rate_down != 0 || r->rate_up != 0)
			o += (size_t)snprintf(t + o, cap - o, " rate %llu/%llu",
			    (unsigned long long)r->rate_down,
			    (unsigned long long)r->rate_up);
		t[o++] = '\n';
	}
	*len = o;
	return t;
}

static int
same_rule(const struct peers_rule *a, const struct peers_rule *b)
{
	if (a->kind != b->kind || a->policy != b->policy || a->mode != b->mode ||
	    a->rate_down != b->rate_down || a->rate_up != b->rate_up)
		return 0;
	if (a->kind == PEERS_RULE_USER)
		return strcmp(a->user, b->user) == 0;
	return a->family == b->family && a->prefix == b->prefix &&
	    memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16) == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t errlen = 1 + data[0];
	data++;
	size--;

	char *text = (char *)fz_dup(data, size);
	char *err = malloc(errlen);
	struct peers *p = (struct peers *)&p;   /* must be overwritten */
	memset(err, 'x', errlen);
	if (peers_parse(text, size, "peers", &p, err, errlen) != 0) {
		if (p != NULL || memchr(err, '\0', errlen) == NULL)
			abort();
		free(text);
		free(err);
		return 0;
	}
	if (p == NULL || p->n > PEERS_MAX_RULES)
		abort();
	for (size_t i = 0; i < p->n; i++)
		check_rule(&p->rules[i]);

	/* Round trip through the text form. */
	size_t tlen;
	char *again = serialize(p, &tlen);
	struct peers *q = NULL;
	char err2[PEERS_ERR_MAX];
	if (peers_parse(again, tlen, "again", &q, err2, sizeof(err2)) != 0)
		abort();   /* our own rendering of accepted rules is refused */
	if (q->n != p->n)
		abort();
	for (size_t i = 0; i < p->n; i++)
		if (!same_rule(&p->rules[i], &q->rules[i]))
			abort();

	/* Every rule is reachable by a lookup. */
	for (size_t i = 0; i < p->n; i++) {
		const struct peers_rule *r = &p->rules[i], *m;
		if (r->kind == PEERS_RULE_USER) {
			m = peers_match(p, r->user, "not-an-address");
			if (m == NULL || m->kind != PEERS_RULE_USER ||
			    strcmp(m->user, r->user) != 0)
				abort();
		} else {
			static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0,
			    0, 0, 0, 0, 0xff, 0xff };
			char a[INET6_ADDRSTRLEN];
			/* A rule inside ::ffff:0:0/96 could never match (the
			 * lookup turns such clients into IPv4 ones): it must
			 * be refused (found by this harness, fixed in 85d2695;
			 * corpus/peers/regress-v4mapped-rule). */
			if (r->family == AF_INET6 && r->prefix >= 96 &&
			    memcmp(r->addr, mapped, sizeof(mapped)) == 0)
				abort();
			inet_ntop(r->family, r->addr, a, sizeof(a));
			m = peers_match(p, NULL, a);
			if (m == NULL || m->kind != PEERS_RULE_ADDRESS ||
			    m->family != r->family || m->prefix < r->prefix)
				abort();
		}
	}
	peers_free(q);
	peers_free(p);
	free(again);
	free(text);
	free(err);
	return 0;
}
