/* Unit tests for pptpd/pool6.c: each session's /64 out of a configured
 * prefix, never one to two live sessions. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pptpd/pool6.h"
#include "pptpd/prefix6.h"

static struct in6_addr
a6(const char *s)
{
	struct in6_addr a;
	assert_int_equal(inet_pton(AF_INET6, s, &a), 1);
	return a;
}

static void
assert_addr(const struct in6_addr *got, const char *want)
{
	char buf[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, got, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void
test_bad_specs_refused(void **state)
{
	char err[128];
	const char *bad[] = {
		"2001:db8::", "2001:db8::/", "2001:db8::/47", "2001:db8::/65",
		"2001:db8::/56x", "2001:zz8::/56", "2001:db8:0:1::/56",
		"fe80::/56", "ff02::/56", "::/56", "::1/64",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_null(pool6_new(bad[i], err, sizeof(err)));
		assert_true(err[0] != '\0');
	}
	assert_null(pool6_new("2001:db8:0:1::/56", err, sizeof(err)));
	assert_non_null(strstr(err, "beyond the prefix length"));
}

static void
test_slash56_holds_256_in_order(void **state)
{
	char err[128];
	struct in6_addr got;
	struct pool6 *p = pool6_new("2001:db8:100::/56", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(pool6_size(p), 256);
	assert_int_equal(pool6_alloc(p, &got), 0);
	assert_addr(&got, "2001:db8:100::");
	assert_int_equal(pool6_alloc(p, &got), 0);
	assert_addr(&got, "2001:db8:100:1::");
	for (int i = 2; i < 256; i++)
		assert_int_equal(pool6_alloc(p, &got), 0);
	assert_addr(&got, "2001:db8:100:ff::");
	assert_int_equal(pool6_available(p), 0);
	assert_int_equal(pool6_alloc(p, &got), -1);
	pool6_free(p);
}

static void
test_never_twice_while_live(void **state)
{
	char err[128];
	struct in6_addr got[16], again;
	struct pool6 *p = pool6_new("2001:db8:200::/60", err, sizeof(err));
	assert_non_null(p);
	for (int i = 0; i < 16; i++)
		assert_int_equal(pool6_alloc(p, &got[i]), 0);
	for (int i = 0; i < 16; i++)
		for (int j = i + 1; j < 16; j++)
			assert_memory_not_equal(&got[i], &got[j], sizeof(got[i]));
	/* Freed ones come back oldest first; a double free changes nothing. */
	assert_int_equal(pool6_release(p, &got[5]), 0);
	assert_int_equal(pool6_release(p, &got[5]), -1);
	assert_int_equal(pool6_release(p, &got[9]), 0);
	assert_int_equal(pool6_alloc(p, &again), 0);
	assert_memory_equal(&again, &got[5], sizeof(again));
	assert_int_equal(pool6_alloc(p, &again), 0);
	assert_memory_equal(&again, &got[9], sizeof(again));
	assert_int_equal(pool6_alloc(p, &again), -1);
	pool6_free(p);
}

static void
test_take_and_foreign(void **state)
{
	char err[128];
	struct in6_addr got;
	struct pool6 *p = pool6_new("2001:db8:300::/62", err, sizeof(err));
	assert_non_null(p);
	struct in6_addr two = a6("2001:db8:300:2::");
	assert_int_equal(pool6_take(p, &two), 0);
	assert_int_equal(pool6_take(p, &two), -1);
	struct in6_addr out = a6("2001:db8:300:4::");    /* past the /62 */
	assert_int_equal(pool6_take(p, &out), -1);
	assert_int_equal(pool6_release(p, &out), -1);
	struct in6_addr host = a6("2001:db8:300:1::1");  /* not a /64 */
	assert_int_equal(pool6_take(p, &host), -1);
	struct in6_addr other = a6("2001:db8:301::");
	assert_int_equal(pool6_take(p, &other), -1);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(pool6_alloc(p, &got), 0);
		assert_memory_not_equal(&got, &two, sizeof(got));
	}
	assert_int_equal(pool6_alloc(p, &got), -1);
	assert_int_equal(pool6_release(p, &two), 0);
	assert_int_equal(pool6_alloc(p, &got), 0);
	assert_memory_equal(&got, &two, sizeof(got));
	pool6_free(p);
}

static void
test_slash64_and_slash48(void **state)
{
	char err[128];
	struct in6_addr got;
	struct pool6 *p = pool6_new("2001:db8:400:7::/64", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(pool6_size(p), 1);
	assert_int_equal(pool6_alloc(p, &got), 0);
	assert_addr(&got, "2001:db8:400:7::");
	pool6_free(p);
	p = pool6_new("2001:db8:500::/48", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(pool6_size(p), 65536);
	struct in6_addr last = a6("2001:db8:500:ffff::");
	assert_int_equal(pool6_take(p, &last), 0);
	assert_int_equal(pool6_available(p), 65535);
	pool6_free(p);
}

/* RADIUS' Framed-IPv6-Prefix is checked as a pool is: a /64 to hand out. */
static void
test_session_prefix(void **state)
{
	struct in6_addr a, want;
	char err[128];
	assert_int_equal(pool6_session_prefix("2001:db8:200:5::/64", &a, err,
	    sizeof(err)), 0);
	inet_pton(AF_INET6, "2001:db8:200:5::", &want);
	assert_memory_equal(&a, &want, sizeof(a));
	assert_int_equal(pool6_session_prefix("2001:db8:200::/56", &a, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "length /56: a session's prefix is a /64");
	assert_int_equal(pool6_session_prefix("fe80::/64", &a, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "link-local"));
	assert_int_equal(pool6_session_prefix("2001:db8:200:5::1/64", &a, err,
	    sizeof(err)), -1);
	assert_int_equal(pool6_session_prefix("2001:db8:200:5::", &a, err,
	    sizeof(err)), -1);
}

/* The set ipv6-radius-prefixes names: a /64 inside any of them, to the
 * bit, and nothing else; at most PREFIX6_SET_MAX. */
static void
test_prefix6_set(void **state)
{
	struct prefix6_set set;
	struct in6_addr a;
	char err[128], many[1024] = "";
	(void)state;

	assert_int_equal(prefix6_set_parse("2001:db8:200::/47,2001:db8:300:7::/64",
	    &set, err, sizeof(err)), 0);
	assert_int_equal(set.n, 2);
	inet_pton(AF_INET6, "2001:db8:201:ffff::", &a);   /* last /64 of the /47 */
	assert_true(prefix6_set_holds(&set, &a));
	inet_pton(AF_INET6, "2001:db8:202::", &a);        /* first past it */
	assert_false(prefix6_set_holds(&set, &a));
	inet_pton(AF_INET6, "2001:db8:300:7::", &a);
	assert_true(prefix6_set_holds(&set, &a));
	inet_pton(AF_INET6, "2001:db8:300:6::", &a);
	assert_false(prefix6_set_holds(&set, &a));
	for (int i = 0; i <= PREFIX6_SET_MAX; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
		    "%s2001:db8:%x::/48", i ? "," : "", i);
	assert_int_equal(prefix6_set_parse(many, &set, err, sizeof(err)), -1);
	assert_int_equal(set.n, 0);
	assert_int_equal(prefix6_set_parse("2001:db8::/48,,2001:db9::/48", &set,
	    err, sizeof(err)), -1);
	/* a short prefix whose first address is fine but which holds
	 * link-local or multicast addresses */
	assert_int_equal(prefix6_set_parse("fe00::/7", &set, err, sizeof(err)), -1);
	assert_string_equal(err, "'fe00::/7': holds multicast, link-local or "
	    "loopback addresses");
	assert_int_equal(prefix6_set_parse("8000::/1", &set, err, sizeof(err)), -1);
	assert_int_equal(prefix6_set_parse("2001:db8::1/48", &set, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "'2001:db8::1/48': bits set beyond the prefix "
	    "length /48");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_specs_refused),
		cmocka_unit_test(test_prefix6_set),
		cmocka_unit_test(test_slash56_holds_256_in_order),
		cmocka_unit_test(test_never_twice_while_live),
		cmocka_unit_test(test_take_and_foreign),
		cmocka_unit_test(test_session_prefix),
		cmocka_unit_test(test_slash64_and_slash48),
	};
	return cmocka_run_group_tests_name("pool6", tests, NULL, NULL);
}
