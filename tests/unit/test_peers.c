/*
 * test_peers.c -- unit tests of the pptpd-peers policy file parser and
 * matcher (proto/peers.c), which is pure C and included here directly
 * with its functions made static, so nothing clashes with other objects.
 */
#define PEERS_API static __attribute__((unused))
#include "proto/peers.c"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static struct peers *
parse_ok(const char *text)
{
	struct peers *p = NULL;
	char err[PEERS_ERR_MAX];
	int rc = peers_parse(text, strlen(text), "peers", &p, err, sizeof(err));

	if (rc != 0)
		fail_msg("unexpected parse error: %s", err);
	assert_non_null(p);
	return p;
}

/* Parse TEXT expecting an error whose message is exactly WANT. */
static void
expect_err(const char *text, size_t len, const char *want)
{
	struct peers *p = (struct peers *)1;
	char err[PEERS_ERR_MAX];

	assert_int_equal(peers_parse(text, len, "peers", &p, err, sizeof(err)),
	    -1);
	assert_null(p);
	assert_string_equal(err, want);
}

#define EXPECT_ERR(text, want) expect_err(text, strlen(text), want)

static void
test_good_file(void **state)
{
	struct peers *p = parse_ok(
	    "# per-peer MPPE policy\n"
	    "\n"
	    "user alice require-128\n"
	    "user\tbob\tallow   stateful   # comment after a rule\n"
	    "  user carol deny stateless\r\n"
	    "user \"DOMAIN\\\\dave smith\" require\n"
	    "address 198.18.0.0/24 require-128\n"
	    "address 198.18.7.9 deny\n"
	    "address 2001:db8::/32 allow\n"
	    "   # indented comment\n"
	    "address 0.0.0.0/0 allow");
	const struct peers_rule *r = p->rules;

	assert_string_equal(p->file, "peers");
	assert_int_equal(p->n, 8);
	assert_int_equal(r[0].kind, PEERS_RULE_USER);
	assert_string_equal(r[0].user, "alice");
	assert_int_equal(r[0].policy, PEERS_REQUIRE_128);
	assert_int_equal(r[0].mode, PEERS_MODE_DEFAULT);
	assert_int_equal(r[0].line, 3);
	assert_string_equal(r[1].user, "bob");
	assert_int_equal(r[1].policy, PEERS_ALLOW);
	assert_int_equal(r[1].mode, PEERS_STATEFUL);
	assert_string_equal(r[2].user, "carol");
	assert_int_equal(r[2].policy, PEERS_DENY);
	assert_int_equal(r[2].mode, PEERS_STATELESS);
	assert_string_equal(r[3].user, "DOMAIN\\dave smith");
	assert_int_equal(r[3].policy, PEERS_REQUIRE);
	assert_int_equal(r[3].line, 6);
	assert_int_equal(r[4].kind, PEERS_RULE_ADDRESS);
	assert_int_equal(r[4].family, AF_INET);
	assert_int_equal(r[4].prefix, 24);
	assert_memory_equal(r[4].addr, "\xc6\x12\x00\x00", 4);
	assert_int_equal(r[5].prefix, 32);
	assert_int_equal(r[6].family, AF_INET6);
	assert_int_equal(r[6].prefix, 32);
	assert_int_equal(p->rules[6].line, 9);
	peers_free(p);
}

static void
test_empty_and_comments_only(void **state)
{
	struct peers *p = parse_ok("");

	assert_int_equal(p->n, 0);
	peers_free(p);
	p = parse_ok("# nothing\n\n   \t\n#user alice deny\n");
	assert_int_equal(p->n, 0);
	peers_free(p);
}

static void
test_errors_name_file_and_line(void **state)
{
	EXPECT_ERR("user alice require-128\nuser bob alow\n",
	    "peers:2: unknown policy 'alow' (want require-128, require, "
	    "allow or deny)");
	EXPECT_ERR("\n\nusr alice deny\n",
	    "peers:3: unknown keyword 'usr' (want user or address)");
	EXPECT_ERR("user alice\n",
	    "peers:1: user rule without a policy (require-128, require, "
	    "allow or deny)");
	EXPECT_ERR("user\n", "peers:1: user rule without a name");
	EXPECT_ERR("address\n", "peers:1: address rule without an address");
	EXPECT_ERR("user alice deny stateles\n",
	    "peers:1: unknown mode 'stateles' (want stateless or stateful)");
	EXPECT_ERR("user alice deny stateless extra\n",
	    "peers:1: unexpected 'extra' after the rule");
	/* '#' starts a comment only at the start of a word. */
	EXPECT_ERR("user alice allow#comment\n",
	    "peers:1: unknown policy 'allow#comment' (want require-128, "
	    "require, allow or deny)");
	EXPECT_ERR("user \"alice deny\n", "peers:1: unterminated quote");
	EXPECT_ERR("user \"alice\"x deny\n",
	    "peers:1: no space after a closing quote");
	EXPECT_ERR("user al\"ice deny\n", "peers:1: quote inside a word");
	EXPECT_ERR("user \"\" deny\n", "peers:1: empty user name");
	EXPECT_ERR("user alice deny\nuser bob allow\nuser alice allow\n",
	    "peers:3: duplicate user rule (first at line 1)");
	EXPECT_ERR("address 198.18.0.0/16 deny\naddress 198.18.0.0/16 allow\n",
	    "peers:2: duplicate address rule (first at line 1)");
}

static void
test_address_errors(void **state)
{
	EXPECT_ERR("address 198.18.0.1/24 deny\n",
	    "peers:1: host bits set (the network is 24 bits long): "
	    "'198.18.0.1/24'");
	EXPECT_ERR("address 198.18.0.0/33 deny\n",
	    "peers:1: prefix length over 32: '198.18.0.0/33'");
	EXPECT_ERR("address 198.18.0.0/ deny\n",
	    "peers:1: missing prefix length after '/': '198.18.0.0/'");
	EXPECT_ERR("address 198.18.0.0/2x deny\n",
	    "peers:1: bad prefix length: '198.18.0.0/2x'");
	EXPECT_ERR("address 198.18.0.0/-1 deny\n",
	    "peers:1: bad prefix length: '198.18.0.0/-1'");
	EXPECT_ERR("address 198.18.0 deny\n",
	    "peers:1: bad address: '198.18.0'");
	EXPECT_ERR("address 198.18.0.256 deny\n",
	    "peers:1: bad address: '198.18.0.256'");
	EXPECT_ERR("address host.example deny\n",
	    "peers:1: bad address: 'host.example'");
	EXPECT_ERR("address /24 deny\n", "peers:1: bad address: '/24'");
	EXPECT_ERR("address 198.18.0.0/0 deny\n",
	    "peers:1: host bits set (the network is 0 bits long): "
	    "'198.18.0.0/0'");
	EXPECT_ERR("address 2001:db8::1/32 deny\n",
	    "peers:1: host bits set (the network is 32 bits long): "
	    "'2001:db8::1/32'");
	EXPECT_ERR("address 2001:db8::/129 deny\n",
	    "peers:1: prefix length over 128: '2001:db8::/129'");
	EXPECT_ERR("address 198.18.0.0/99999999999999999999 deny\n",
	    "peers:1: bad prefix length: '198.18.0.0/99999999999999999999'");
	/* found by fuzz_peers: such a rule parsed but could never match */
	EXPECT_ERR("address ::ffff:198.18.0.0/120 deny\n",
	    "peers:1: IPv4-mapped address: write it as IPv4 (198.18.0.0/24): "
	    "'::ffff:198.18.0.0/120'");
}

/* pppd reports a CHAP name with bytes above 0x7f in its "%v" form (é, UTF-8
 * C3 A9, is "M-CM-)"): a rule naming it in UTF-8 would never match, so it
 * is refused at its line, with the form to write; that form matches. */
static void
test_non_ascii_user_refused(void **state)
{
	struct peers *p;

	EXPECT_ERR("user alice deny\nuser ren\xc3\xa9 require-128\n",
	    "peers:2: user name with a byte outside ASCII: pppd reports that "
	    "peer as 'renM-CM-)'; write the name that way");
	EXPECT_ERR("user \"x\xff\x80\" allow\n",
	    "peers:1: user name with a byte outside ASCII: pppd reports that "
	    "peer as 'xM-^?M-^@'; write the name that way");
	p = parse_ok("user renM-CM-) require-128\n");
	assert_int_equal(peers_match(p, "renM-CM-)", NULL)->line, 1);
	peers_free(p);
}

static void
test_control_chars_and_long_lines(void **state)
{
	char big[PEERS_MAX_LINE + 40];
	struct peers *p;

	expect_err("user alice deny\nuser b\0b deny\n", 31,
	    "peers:2: control character 0x00");
	EXPECT_ERR("user alice\x01 deny\n", "peers:1: control character 0x01");
	EXPECT_ERR("user alice\rdeny\n", "peers:1: control character 0x0d");
	EXPECT_ERR("user alice deny\x7f\n", "peers:1: control character 0x7f");

	/* Exactly PEERS_MAX_LINE bytes is fine, one more is not. */
	memset(big, ' ', sizeof(big));
	memcpy(big, "user alice deny", 15);
	big[PEERS_MAX_LINE] = '\n';
	big[PEERS_MAX_LINE + 1] = '\0';
	p = parse_ok(big);
	assert_int_equal(p->n, 1);
	peers_free(p);
	big[PEERS_MAX_LINE] = ' ';
	big[PEERS_MAX_LINE + 1] = '\n';
	big[PEERS_MAX_LINE + 2] = '\0';
	EXPECT_ERR(big, "peers:1: line longer than 1024 bytes");
	/* With CRLF the CR does not count. */
	big[PEERS_MAX_LINE] = '\r';
	p = parse_ok(big);
	peers_free(p);
}

static void
test_long_names(void **state)
{
	char line[PEERS_MAX_NAME + 64];
	struct peers *p;

	memset(line, 0, sizeof(line));
	strcpy(line, "user ");
	memset(line + 5, 'n', PEERS_MAX_NAME);
	strcat(line, " deny\n");
	p = parse_ok(line);
	assert_int_equal(strlen(p->rules[0].user), PEERS_MAX_NAME);
	peers_free(p);
	memset(line, 0, sizeof(line));
	strcpy(line, "user ");
	memset(line + 5, 'n', PEERS_MAX_NAME + 1);
	strcat(line, " deny\n");
	EXPECT_ERR(line, "peers:1: user name over 255 bytes");
}

static void
test_too_big(void **state)
{
	struct peers *p = (struct peers *)1;
	char err[PEERS_ERR_MAX];

	assert_int_equal(peers_parse("", PEERS_MAX_FILE + 1, "big", &p, err,
	    sizeof(err)), -1);
	assert_null(p);
	assert_string_equal(err, "big: file over 1048576 bytes");
}

static void
test_match_precedence(void **state)
{
	struct peers *p = parse_ok(
	    "address 198.18.0.0/15 allow\n"
	    "user alice require-128\n"
	    "address 198.18.0.0/24 deny\n"
	    "address 198.18.0.7 require\n"
	    "user carol deny\n"
	    "address 2001:db8::/32 require-128\n"
	    "address 2001:db8:1::/48 deny\n");
	const struct peers_rule *r;

	/* A user rule wins over any address rule. */
	r = peers_match(p, "alice", "198.18.0.7");
	assert_non_null(r);
	assert_int_equal(r->line, 2);
	/* Most specific address next. */
	r = peers_match(p, "bob", "198.18.0.7");
	assert_int_equal(r->line, 4);
	r = peers_match(p, "bob", "198.18.0.8");
	assert_int_equal(r->line, 3);
	r = peers_match(p, "bob", "198.19.200.1");
	assert_int_equal(r->line, 1);
	/* Order in the file does not matter for addresses. */
	r = peers_match(p, NULL, "198.18.0.255");
	assert_int_equal(r->line, 3);
	/* Nothing matches: the caller's default. */
	assert_null(peers_match(p, "bob", "198.20.0.1"));
	assert_null(peers_match(p, "bob", NULL));
	assert_null(peers_match(p, "bob", ""));
	assert_null(peers_match(p, "bob", "not-an-address"));
	assert_null(peers_match(p, "", ""));
	/* User names are exact and case-sensitive. */
	assert_null(peers_match(p, "Alice", "198.20.0.1"));
	assert_null(peers_match(p, "alice ", "198.20.0.1"));
	assert_int_equal(peers_match(p, "carol", NULL)->line, 5);
	/* An empty name matches no user rule. */
	assert_int_equal(peers_match(p, "", "198.18.0.7")->line, 4);
	/* IPv4-mapped IPv6 is IPv4. */
	assert_int_equal(peers_match(p, NULL, "::ffff:198.18.0.7")->line, 4);
	/* IPv6. */
	assert_int_equal(peers_match(p, NULL, "2001:db8::5")->line, 6);
	assert_int_equal(peers_match(p, NULL, "2001:db8:1::5")->line, 7);
	assert_null(peers_match(p, NULL, "2001:db9::5"));
	assert_null(peers_match(NULL, "alice", "198.18.0.7"));
	peers_free(p);
}

static void
test_match_prefix_boundaries(void **state)
{
	struct peers *p = parse_ok(
	    "address 198.18.0.128/25 deny\n"
	    "address 0.0.0.0/0 allow\n"
	    "address 198.18.0.64/27 require\n");

	assert_int_equal(peers_match(p, NULL, "198.18.0.127")->line, 2);
	assert_int_equal(peers_match(p, NULL, "198.18.0.128")->line, 1);
	assert_int_equal(peers_match(p, NULL, "198.18.0.255")->line, 1);
	assert_int_equal(peers_match(p, NULL, "198.18.0.64")->line, 3);
	assert_int_equal(peers_match(p, NULL, "198.18.0.95")->line, 3);
	assert_int_equal(peers_match(p, NULL, "198.18.0.96")->line, 2);
	assert_int_equal(peers_match(p, NULL, "1.2.3.4")->line, 2);
	peers_free(p);
}

static void
test_parse_net(void **state)
{
	uint8_t a[16];
	unsigned pfx;
	int fam;
	char err[64];

	assert_int_equal(peers_parse_net("10.0.0.0/8", &fam, a, &pfx, err,
	    sizeof(err)), 0);
	assert_int_equal(fam, AF_INET);
	assert_int_equal(pfx, 8);
	assert_int_equal(peers_parse_net("::/0", &fam, a, &pfx, err,
	    sizeof(err)), 0);
	assert_int_equal(fam, AF_INET6);
	assert_int_equal(pfx, 0);
	assert_int_equal(peers_parse_net("::1", &fam, a, &pfx, err,
	    sizeof(err)), 0);
	assert_int_equal(pfx, 128);
	assert_int_equal(peers_parse_net("fe80::1%eth0", &fam, a, &pfx, err,
	    sizeof(err)), -1);
	assert_int_equal(peers_parse_net(
	    "0000:0000:0000:0000:0000:0000:0000:0000:0", &fam, a, &pfx, err,
	    sizeof(err)), -1);
}

/* One rate value: digits, an optional fraction, k/M/G (either case, powers
 * of 1000), a whole number of bits/s, 0 or 8k..10G. */
static void
test_parse_rate(void **state)
{
	static const struct { const char *s; uint64_t want; } good[] = {
		{ "0", 0 }, { "8000", 8000 }, { "8k", 8000 }, { "8K", 8000 },
		{ "512k", 512000 }, { "4M", 4000000 }, { "4m", 4000000 },
		{ "1.5M", 1500000 }, { "1.5m", 1500000 }, { "0.5G", 500000000 },
		{ "10G", 10000000000ULL }, { "10g", 10000000000ULL },
		{ "10000000000", 10000000000ULL }, { "9.999999999G", 9999999999ULL },
		{ "8.000k", 8000 }, { "0.008M", 8000 }, { "0k", 0 }, { "0.0", 0 },
		{ "008k", 8000 }, { "1.000001M", 1000001 },
		{ "000000000000000008k", 8000 },   /* 18 digits: the most */
	};
	static const char *const bad[] = {
		"", "k", "M", ".5M", "5.M", "1.5.1M", "1,5M", "-8k", "+8k", " 8k",
		"8k ", "8kb", "8kk", "8T", "8 k", "1e6", "0x2000", "7999", "7.999k",
		"10000000001", "10.000000001G", "11G", "8000.5", "1.0000001k",
		"18446744073709551616", "1234567890123456789", "0.000001k",
		"99999999999999999G", "0000000000000000008k",
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 42;
		if (peers_parse_rate(good[i].s, &v) != 0)
			fail_msg("'%s' refused", good[i].s);
		if (v != good[i].want)
			fail_msg("'%s' is %llu, want %llu", good[i].s,
			    (unsigned long long)v,
			    (unsigned long long)good[i].want);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 42;
		if (peers_parse_rate(bad[i], &v) != -1)
			fail_msg("'%s' taken as %llu", bad[i],
			    (unsigned long long)v);
		assert_int_equal(v, 42);   /* untouched */
	}
	assert_int_equal(peers_parse_rate(NULL, &v), -1);
	/* The bounds, both sides. */
	assert_int_equal(peers_parse_rate("7999", &v), -1);
	assert_int_equal(peers_parse_rate("8000", &v), 0);
	assert_int_equal(peers_parse_rate("10000000000", &v), 0);
	assert_int_equal(peers_parse_rate("10000000001", &v), -1);
}

/* `rate DOWN/UP` after POLICY [MODE]: DOWN is server to client. */
static void
test_rate_rules(void **state)
{
	struct peers *p = parse_ok(
	    "user alice require-128 stateless rate 4M/1M\n"
	    "address 198.18.5.0/24 allow rate 512k/256k\n"
	    "user bob allow rate 0/1.5M   # up only\n"
	    "user carol deny stateful rate 10G/0\n"
	    "user dave deny\n"
	    "user rate allow rate 8k/8K\n");
	const struct peers_rule *r = p->rules;

	assert_int_equal(p->n, 6);
	assert_int_equal(r[0].mode, PEERS_STATELESS);
	assert_int_equal(r[0].rate_down, 4000000);
	assert_int_equal(r[0].rate_up, 1000000);
	assert_int_equal(r[1].kind, PEERS_RULE_ADDRESS);
	assert_int_equal(r[1].policy, PEERS_ALLOW);
	assert_int_equal(r[1].mode, PEERS_MODE_DEFAULT);
	assert_int_equal(r[1].rate_down, 512000);
	assert_int_equal(r[1].rate_up, 256000);
	assert_int_equal(r[2].rate_down, 0);
	assert_int_equal(r[2].rate_up, 1500000);
	assert_int_equal(r[3].mode, PEERS_STATEFUL);
	assert_int_equal(r[3].rate_down, 10000000000ULL);
	assert_int_equal(r[3].rate_up, 0);
	/* No rate: none either way. */
	assert_int_equal(r[4].rate_down, 0);
	assert_int_equal(r[4].rate_up, 0);
	/* A user may be called "rate". */
	assert_string_equal(r[5].user, "rate");
	assert_int_equal(r[5].rate_down, 8000);
	assert_int_equal(r[5].rate_up, 8000);
	assert_int_equal(peers_match(p, "alice", NULL)->rate_down, 4000000);
	assert_int_equal(peers_match(p, "eve", "198.18.5.9")->rate_up, 256000);
	peers_free(p);
}

static void
test_rate_errors(void **state)
{
	EXPECT_ERR("user alice allow rate\n",
	    "peers:1: rate without DOWN/UP (e.g. rate 4M/1M)");
	EXPECT_ERR("user alice allow stateless rate # soon\n",
	    "peers:1: rate without DOWN/UP (e.g. rate 4M/1M)");
	EXPECT_ERR("user alice allow rate 4M\n",
	    "peers:1: rate '4M' without '/' (want rate DOWN/UP, e.g. rate "
	    "4M/1M)");
	EXPECT_ERR("user alice allow rate 0/0\n",
	    "peers:1: rate 0/0 limits nothing: omit rate");
	EXPECT_ERR("user alice allow rate 0k/0.0\n",
	    "peers:1: rate 0/0 limits nothing: omit rate");
	/* The bounds: 8k..10G each way. */
	EXPECT_ERR("user alice allow rate 7999/1M\n",
	    "peers:1: bad rate DOWN '7999': under 8k (0 is no limit)");
	EXPECT_ERR("user alice allow rate 1M/7.999k\n",
	    "peers:1: bad rate UP '7.999k': under 8k (0 is no limit)");
	EXPECT_ERR("user alice allow rate 10.000000001G/1M\n",
	    "peers:1: bad rate DOWN '10.000000001G': over 10G");
	EXPECT_ERR("user alice allow rate 1M/11G\n",
	    "peers:1: bad rate UP '11G': over 10G");
	EXPECT_ERR("user alice allow rate 99999999999999999G/1M\n",
	    "peers:1: bad rate DOWN '99999999999999999G': over 10G");
	EXPECT_ERR("user alice allow rate 1M/1234567890123456789\n",
	    "peers:1: bad rate UP '1234567890123456789': too many digits");
	/* Suffixes and junk. */
	EXPECT_ERR("user alice allow rate 4T/1M\n",
	    "peers:1: bad rate DOWN '4T': want digits, an optional fraction, "
	    "then k, M or G");
	EXPECT_ERR("user alice allow rate 4Mb/1M\n",
	    "peers:1: bad rate DOWN '4Mb': junk after the suffix");
	EXPECT_ERR("user alice allow rate 4M/1Mbit\n",
	    "peers:1: bad rate UP '1Mbit': junk after the suffix");
	EXPECT_ERR("user alice allow rate /1M\n",
	    "peers:1: bad rate DOWN '': want digits, an optional fraction, "
	    "then k, M or G");
	EXPECT_ERR("user alice allow rate 1M/\n",
	    "peers:1: bad rate UP '': want digits, an optional fraction, "
	    "then k, M or G");
	EXPECT_ERR("user alice allow rate 1M/1M/1M\n",
	    "peers:1: bad rate UP '1M/1M': junk after the suffix");
	EXPECT_ERR("user alice allow rate .5M/1M\n",
	    "peers:1: bad rate DOWN '.5M': want digits, an optional fraction, "
	    "then k, M or G");
	EXPECT_ERR("user alice allow rate 8000.5/1M\n",
	    "peers:1: bad rate DOWN '8000.5': not a whole number of bits/s");
	EXPECT_ERR("user alice allow rate -1M/1M\n",
	    "peers:1: bad rate DOWN '-1M': want digits, an optional fraction, "
	    "then k, M or G");
	/* Twice, out of order, or with more after it. */
	EXPECT_ERR("user alice allow rate 1M/1M rate 2M/2M\n",
	    "peers:1: rate given twice");
	EXPECT_ERR("user alice allow stateless rate 1M/1M rate 2M/2M\n",
	    "peers:1: rate given twice");
	EXPECT_ERR("user alice allow rate 1M/1M stateless\n",
	    "peers:1: unexpected 'stateless' after the rule");
	EXPECT_ERR("user alice allow stateless rate 1M/1M extra\n",
	    "peers:1: unexpected 'extra' after the rule");
	EXPECT_ERR("user alice allow stateless rate 1M/1M rate 2M/2M x\n",
	    "peers:1: unexpected 'x' after the rule");
	EXPECT_ERR("user alice allow rated 1M/1M\n",
	    "peers:1: unknown mode 'rated' (want stateless or stateful)");
	EXPECT_ERR("user alice rate 1M/1M\n",
	    "peers:1: unknown policy 'rate' (want require-128, require, allow "
	    "or deny)");
	/* The line is named. */
	EXPECT_ERR("user alice allow\n\naddress 198.18.0.0/24 deny rate 1/1\n",
	    "peers:3: bad rate DOWN '1': under 8k (0 is no limit)");
}

static void
test_names(void **state)
{
	assert_string_equal(peers_policy_name(PEERS_REQUIRE_128), "require-128");
	assert_string_equal(peers_policy_name(PEERS_REQUIRE), "require");
	assert_string_equal(peers_policy_name(PEERS_ALLOW), "allow");
	assert_string_equal(peers_policy_name(PEERS_DENY), "deny");
	assert_string_equal(peers_policy_name(PEERS_POLICY_NONE), "default");
	assert_string_equal(peers_mode_name(PEERS_STATELESS), "stateless");
	assert_string_equal(peers_mode_name(PEERS_STATEFUL), "stateful");
	assert_string_equal(peers_mode_name(PEERS_MODE_DEFAULT), "default");
}

static void
test_load(void **state)
{
	char path[] = "/tmp/test_peers.XXXXXX";
	char err[PEERS_ERR_MAX];
	struct peers *p = NULL;
	const char *text = "user alice require-128\nuser bob allow\n";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(peers_load(path, &p, err, sizeof(err)), 0);
	assert_int_equal(p->n, 2);
	assert_string_equal(p->file, path);
	peers_free(p);

	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "bogus\n", 6), 6);
	close(fd);
	assert_int_equal(peers_load(path, &p, err, sizeof(err)), -1);
	assert_null(p);
	assert_non_null(strstr(err, ":3: unknown keyword 'bogus'"));
	assert_int_equal(strncmp(err, path, strlen(path)), 0);
	unlink(path);

	assert_int_equal(peers_load(path, &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot open: No such file"));
	assert_int_equal(peers_load("/tmp", &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/tmp: not a regular file"));
}

/* Random and mutated input must never crash or leak (run with
 * SANITIZE=1); a deterministic generator keeps failures reproducible. */
static void
test_garbage(void **state)
{
	static const char *const seeds[] = {
		"user alice require-128 stateless\n",
		"address 198.18.0.0/24 allow\n",
		"user \"a b\\\"c\" deny # x\n",
		"address 2001:db8::/32 require stateful\r\n",
		"user alice allow stateless rate 1.5M/512k\n",
		"address 198.18.5.0/24 deny rate 0/10G\n",
	};
	const size_t nseeds = sizeof(seeds) / sizeof(seeds[0]);
	uint32_t x = 12345;
	char buf[512];
	int i;

	for (i = 0; i < 20000; i++) {
		struct peers *p = NULL;
		char err[PEERS_ERR_MAX];
		size_t len, j;

		x = x * 1103515245u + 12345u;
		if (i % 2) {
			const char *s = seeds[(x >> 8) % nseeds];
			len = strlen(s);
			memcpy(buf, s, len);
			for (j = 0; j < 3; j++) {
				x = x * 1103515245u + 12345u;
				buf[(x >> 8) % len] = (char)(x >> 20);
			}
		} else {
			len = (x >> 8) % sizeof(buf);
			for (j = 0; j < len; j++) {
				x = x * 1103515245u + 12345u;
				buf[j] = " \t\n\"#/:.0123456789aeruslowdny-kMGt"[(x >> 12) % 35];
			}
		}
		if (peers_parse(buf, len, "fuzz", &p, err, sizeof(err)) == 0) {
			(void)peers_match(p, "alice", "198.18.0.9");
			peers_free(p);
		} else {
			assert_null(p);
			assert_int_equal(strncmp(err, "fuzz:", 5), 0);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_file),
		cmocka_unit_test(test_empty_and_comments_only),
		cmocka_unit_test(test_errors_name_file_and_line),
		cmocka_unit_test(test_address_errors),
		cmocka_unit_test(test_non_ascii_user_refused),
		cmocka_unit_test(test_control_chars_and_long_lines),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_match_precedence),
		cmocka_unit_test(test_match_prefix_boundaries),
		cmocka_unit_test(test_parse_net),
		cmocka_unit_test(test_parse_rate),
		cmocka_unit_test(test_rate_rules),
		cmocka_unit_test(test_rate_errors),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_garbage),
	};

	return cmocka_run_group_tests_name("peers", tests, NULL, NULL);
}
