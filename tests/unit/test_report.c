/*
 * test_report.c -- unit tests of the session report datagram builder and
 * parser (proto/report.c, the contract in proto/report.h).  report.c is
 * included directly with its functions made static, so this test links
 * even if pptpd's own objects also contain report.o.
 */
#define REPORT_API static __attribute__((unused))
#include "proto/report.c"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static struct report_msg msg;

static void
parse_ok(const char *s)
{
	const char *why = NULL;

	if (report_parse(&msg, s, strlen(s), &why) != 0)
		fail_msg("parse of '%s' failed: %s", s, why);
}

static void
parse_bad(const char *s, size_t len, const char *want)
{
	const char *why = NULL;

	assert_int_equal(report_parse(&msg, s, len, &why), -1);
	assert_non_null(why);
	assert_string_equal(why, want);
}

#define PARSE_BAD(s, want) parse_bad(s, strlen(s), want)

static void
test_build_exact(void **state)
{
	struct report_builder b;

	report_begin(&b, "up");
	report_add(&b, "call", "7");
	report_add_u64(&b, "pid", 4242);
	report_add(&b, "user", "alice");
	report_add(&b, "client", "198.18.0.2");
	report_add(&b, "ifname", "ppp0");
	report_add(&b, "local", "198.19.0.1");
	report_add(&b, "ip", "198.19.0.10");
	report_add(&b, "mppe", "128");
	report_add(&b, "stateless", "1");
	report_add(&b, "policy", "require-128");
	assert_int_equal(report_end(&b), (int)strlen(b.buf));
	assert_string_equal(b.buf,
	    "v=1 event=up call=7 pid=4242 user=alice client=198.18.0.2 "
	    "ifname=ppp0 local=198.19.0.1 ip=198.19.0.10 mppe=128 "
	    "stateless=1 policy=require-128");
}

static void
test_encoding(void **state)
{
	struct report_builder b;

	report_begin(&b, "auth");
	report_add(&b, "user", "DOM\\al ice=%x\xc3\xa9");
	report_add(&b, "rule", "/etc/ppp/pptpd-peers:12");
	report_add(&b, "mppe_want", "40,128");
	report_add(&b, "empty", "");
	report_add(&b, "nul", NULL);
	assert_true(report_end(&b) > 0);
	assert_string_equal(b.buf,
	    "v=1 event=auth user=DOM%5Cal%20ice%3D%25x%C3%A9 "
	    "rule=/etc/ppp/pptpd-peers:12 mppe_want=40,128 empty= nul=");

	parse_ok(b.buf);
	assert_string_equal(msg.event, "auth");
	assert_string_equal(report_get(&msg, "user"), "DOM\\al ice=%x\xc3\xa9");
	assert_string_equal(report_get(&msg, "rule"), "/etc/ppp/pptpd-peers:12");
	assert_string_equal(report_get(&msg, "empty"), "");
	assert_string_equal(report_get(&msg, "nul"), "");
	assert_null(report_get(&msg, "absent"));
	assert_int_equal(msg.n, 7);
}

static void
test_roundtrip_all_bytes(void **state)
{
	struct report_builder b;
	char v[REPORT_MAX_VALUE + 1];
	int i;

	/* Every byte value 1..255, in chunks that fit a value. */
	for (i = 1; i < 256; i += 85) {
		int j;
		for (j = 0; j < 85 && i + j < 256; j++)
			v[j] = (char)(i + j);
		v[j] = '\0';
		report_begin(&b, "x");
		report_add(&b, "v1", v);
		assert_true(report_end(&b) > 0);
		parse_ok(b.buf);
		assert_string_equal(report_get(&msg, "v1"), v);
	}
}

static void
test_down_counters(void **state)
{
	struct report_builder b;
	uint64_t n;

	report_begin(&b, "down");
	report_add(&b, "call", "7");
	report_add_u64(&b, "rx_bytes", 4294967295u);
	report_add_u64(&b, "tx_bytes", 0);
	report_add_u64(&b, "rx_packets", 18446744073709551615ull);
	report_add_u64(&b, "duration", 61);
	assert_true(report_end(&b) > 0);
	parse_ok(b.buf);
	assert_string_equal(msg.event, "down");
	assert_int_equal(report_get_u64(&msg, "rx_bytes", &n), 0);
	assert_true(n == 4294967295u);
	assert_int_equal(report_get_u64(&msg, "tx_bytes", &n), 0);
	assert_true(n == 0);
	assert_int_equal(report_get_u64(&msg, "rx_packets", &n), 0);
	assert_true(n == UINT64_MAX);
	assert_int_equal(report_get_u64(&msg, "duration", &n), 0);
	assert_true(n == 61);
	assert_int_equal(report_get_u64(&msg, "call", &n), 0);
	assert_int_equal(report_get_u64(&msg, "absent", &n), -1);
}

static void
test_u64_malformed(void **state)
{
	uint64_t n = 99;

	parse_ok("v=1 event=down a=18446744073709551616 b=-1 c=1x d= e=+5 "
	    "f=000000000000000000001 g=0");
	assert_int_equal(report_get_u64(&msg, "a", &n), -1);
	assert_int_equal(report_get_u64(&msg, "b", &n), -1);
	assert_int_equal(report_get_u64(&msg, "c", &n), -1);
	assert_int_equal(report_get_u64(&msg, "d", &n), -1);
	assert_int_equal(report_get_u64(&msg, "e", &n), -1);
	assert_int_equal(report_get_u64(&msg, "f", &n), -1); /* over 20 digits */
	assert_true(n == 99);
	assert_int_equal(report_get_u64(&msg, "g", &n), 0);
	assert_true(n == 0);
}

static void
test_unknown_keys_and_events_are_data(void **state)
{
	parse_ok("v=1 event=future call=3 new_key=whatever");
	assert_string_equal(msg.event, "future");
	assert_string_equal(report_get(&msg, "new_key"), "whatever");
	parse_ok("v=1 event=up");
	assert_int_equal(msg.n, 2);
}

static void
test_parse_errors(void **state)
{
	char big[REPORT_MAX_DGRAM + 2];

	parse_bad("", 0, "empty datagram");
	PARSE_BAD("event=up v=1", "does not start with v= and event=");
	PARSE_BAD("v=1", "does not start with v= and event=");
	PARSE_BAD("v=1 call=3 event=up", "does not start with v= and event=");
	PARSE_BAD("v=2 event=up", "unsupported version");
	PARSE_BAD("v=1 event=", "empty event");
	PARSE_BAD("v=1 event=up ", "trailing space");
	PARSE_BAD("v=1  event=up", "field without '='");
	PARSE_BAD(" v=1 event=up", "field without '='");
	PARSE_BAD("v=1 event=up call", "field without '='");
	PARSE_BAD("v=1 event=up =3", "bad key");
	PARSE_BAD("v=1 event=up Call=3", "bad key");
	PARSE_BAD("v=1 event=up ca-ll=3", "bad key");
	PARSE_BAD("v=1 event=up abcdefghijabcdefghijabcdefghijabc=1", "bad key");
	PARSE_BAD("v=1 event=up call=3 call=4", "duplicate key");
	PARSE_BAD("v=1 event=up user=a=b", "'=' in value");
	PARSE_BAD("v=1 event=up user=%4", "truncated %-escape");
	PARSE_BAD("v=1 event=up user=%", "truncated %-escape");
	PARSE_BAD("v=1 event=up user=%zz", "bad %-escape");
	PARSE_BAD("v=1 event=up user=%00", "NUL in value");
	PARSE_BAD("v=1 event=up user=a\tb", "non-printable byte");
	PARSE_BAD("v=1 event=up\n", "non-printable byte");
	parse_bad("v=1 event=up\0", 13, "non-printable byte");
	PARSE_BAD("v=1 event=up user=\xc3\xa9", "non-printable byte");

	memset(big, 'a', sizeof(big));
	memcpy(big, "v=1 event=up x=", 15);
	parse_bad(big, REPORT_MAX_DGRAM + 1, "datagram too long");
}

static void
test_limits(void **state)
{
	struct report_builder b;
	char v[REPORT_MAX_VALUE + 2];
	char s[REPORT_MAX_DGRAM + 1];
	int i, o;

	/* Longest value: OK; one more byte: refused by the builder. */
	memset(v, 'x', sizeof(v));
	v[REPORT_MAX_VALUE] = '\0';
	report_begin(&b, "up");
	report_add(&b, "user", v);
	assert_true(report_end(&b) > 0);
	parse_ok(b.buf);
	assert_int_equal(strlen(report_get(&msg, "user")), REPORT_MAX_VALUE);
	v[REPORT_MAX_VALUE] = 'x';
	v[REPORT_MAX_VALUE + 1] = '\0';
	report_begin(&b, "up");
	report_add(&b, "user", v);
	assert_int_equal(report_end(&b), -1);
	/* ... and by the parser. */
	o = snprintf(s, sizeof(s), "v=1 event=up user=%s", v);
	parse_bad(s, (size_t)o, "value too long");

	/* Bad keys are refused by the builder. */
	report_begin(&b, "up");
	report_add(&b, "Bad Key", "1");
	assert_int_equal(report_end(&b), -1);
	report_begin(&b, "up");
	report_add(&b, "", "1");
	assert_int_equal(report_end(&b), -1);

	/* A datagram that would grow past REPORT_MAX_DGRAM is refused. */
	memset(v, '%', REPORT_MAX_VALUE);
	v[REPORT_MAX_VALUE] = '\0';
	report_begin(&b, "up");
	report_add(&b, "a", v);
	report_add(&b, "b", v);
	assert_int_equal(report_end(&b), -1);

	/* Exactly REPORT_MAX_FIELDS fields parse, one more does not. */
	o = snprintf(s, sizeof(s), "v=1 event=up");
	for (i = 2; i < REPORT_MAX_FIELDS; i++)
		o += snprintf(s + o, sizeof(s) - (size_t)o, " k%d=%d", i, i);
	parse_ok(s);
	assert_int_equal(msg.n, REPORT_MAX_FIELDS);
	o += snprintf(s + o, sizeof(s) - (size_t)o, " extra=1");
	parse_bad(s, (size_t)o, "too many fields");
}

static void
test_status_names(void **state)
{
	assert_string_equal(report_status_name(0), "ok");
	assert_string_equal(report_status_name(2), "option");
	assert_string_equal(report_status_name(10), "negotiation");
	assert_string_equal(report_status_name(11), "peer-auth-failed");
	assert_string_equal(report_status_name(15), "peer-dead");
	assert_string_equal(report_status_name(16), "hangup");
	assert_string_equal(report_status_name(21), "cnid-auth-failed");
	assert_string_equal(report_status_name(22), "unknown");
	assert_string_equal(report_status_name(-1), "unknown");
}

/* Random printable datagrams must never crash the parser (SANITIZE=1). */
static void
test_garbage(void **state)
{
	static const char alpha[] = "v=1 event=%0aZ_9 ";
	uint32_t x = 777;
	char buf[REPORT_MAX_DGRAM];
	int i;

	for (i = 0; i < 50000; i++) {
		size_t len, j;
		const char *why;

		x = x * 1103515245u + 12345u;
		len = (x >> 8) % 64;
		if (i % 3 == 0) {
			memcpy(buf, "v=1 event=", 10);
			j = 10;
		} else
			j = 0;
		if (len < j)
			len = j;
		for (; j < len; j++) {
			x = x * 1103515245u + 12345u;
			buf[j] = alpha[(x >> 12) % (sizeof(alpha) - 1)];
		}
		if (report_parse(&msg, buf, len, &why) == 0) {
			assert_non_null(msg.event);
			assert_true(msg.n >= 2);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_exact),
		cmocka_unit_test(test_encoding),
		cmocka_unit_test(test_roundtrip_all_bytes),
		cmocka_unit_test(test_down_counters),
		cmocka_unit_test(test_u64_malformed),
		cmocka_unit_test(test_unknown_keys_and_events_are_data),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_status_names),
		cmocka_unit_test(test_garbage),
	};

	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
