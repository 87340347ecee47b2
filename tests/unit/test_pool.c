/* Unit tests for pptpd/pool.c: Poptop's address specs and the FIFO pool. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "pptpd/pool.h"

static const char *
ip(struct in_addr a)
{
	static char buf[4][INET_ADDRSTRLEN];
	static int k;

	k = (k + 1) % 4;
	return inet_ntop(AF_INET, &a, buf[k], sizeof(buf[k]));
}

static struct in_addr
addr(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a;
}

/* Allocate everything and compare the remote addresses, in order, with the
 * expected list; then check exhaustion. */
static void
expect_remotes(const char *spec, const char *const *want, size_t n)
{
	char err[256] = "";
	struct pool *p = pool_new(NULL, spec, err, sizeof(err));
	struct in_addr l, r;

	if (p == NULL)
		fail_msg("pool_new(%s): %s", spec, err);
	assert_int_equal(pool_size(p), n);
	assert_int_equal(pool_available(p), n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(pool_alloc(p, &l, &r), 0);
		assert_string_equal(ip(r), want[i]);
		assert_string_equal(ip(l), "0.0.0.0");
	}
	assert_int_equal(pool_alloc(p, &l, &r), -1);
	assert_int_equal(pool_available(p), 0);
	pool_free(p);
}

#define EXPECT(spec, ...) do { \
	static const char *const w_[] = { __VA_ARGS__ }; \
	expect_remotes(spec, w_, sizeof(w_) / sizeof(w_[0])); \
} while (0)

static void
test_forms(void **state)
{
	(void)state;
	EXPECT("198.19.0.10", "198.19.0.10");
	EXPECT("198.19.0.10-12", "198.19.0.10", "198.19.0.11", "198.19.0.12");
	EXPECT("198.19.0.7-7", "198.19.0.7");
	EXPECT("198.19.0.254-255", "198.19.0.254", "198.19.0.255");
	/* Poptop's range in another octet (pptpd.conf(5): 192.168.0-255.2). */
	EXPECT("198.18-19.0.2", "198.18.0.2", "198.19.0.2");
	EXPECT("198.19.0-2.5", "198.19.0.5", "198.19.1.5", "198.19.2.5");
	EXPECT("10-11.0.0.1", "10.0.0.1", "11.0.0.1");
	/* Our extension: a span across octet boundaries. */
	EXPECT("198.19.0.254-198.19.1.1", "198.19.0.254", "198.19.0.255",
	    "198.19.1.0", "198.19.1.1");
	EXPECT("198.19.0.9-198.19.0.9", "198.19.0.9");
	/* Lists keep the order written, like Poptop. */
	EXPECT("198.19.0.234,198.19.0.245-247,198.19.0.254,198.19.0.1",
	    "198.19.0.234", "198.19.0.245", "198.19.0.246", "198.19.0.247",
	    "198.19.0.254", "198.19.0.1");
	/* Octets are decimal, even with leading zeros (never octal). */
	EXPECT("198.019.000.010-012", "198.19.0.10", "198.19.0.11", "198.19.0.12");
}

static void
test_spec_count(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(pool_spec_count("198.19.0.1", err, sizeof(err)), 1);
	assert_int_equal(pool_spec_count("198.19.0.2-254", err, sizeof(err)), 253);
	assert_int_equal(pool_spec_count("198.19.0-255.2", err, sizeof(err)), 256);
	assert_int_equal(pool_spec_count("198.18.0.1-198.18.255.255", err,
	    sizeof(err)), 65535);
	assert_int_equal(pool_spec_count("1.0.0.1,1.0.0.3-5,1-3.0.0.9", err,
	    sizeof(err)), 7);
}

struct bad { const char *spec, *err; };

static void
expect_errors(const struct bad *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char err[256] = "";

		if (pool_spec_count(b[i].spec, err, sizeof(err)) != -1)
			fail_msg("'%s' accepted", b[i].spec);
		if (strcmp(err, b[i].err) != 0)
			fail_msg("'%s': got \"%s\", want \"%s\"", b[i].spec, err,
			    b[i].err);
	}
}

static void
test_err_empty(void **state)
{
	static const struct bad bad[] = {
		{ "", "empty address list" },
		{ ",", "empty item in ','" },
		{ "10.0.0.1,", "empty item in '10.0.0.1,'" },
		{ ",10.0.0.1", "empty item in ',10.0.0.1'" },
		{ "10.0.0.1,,10.0.0.2", "empty item in '10.0.0.1,,10.0.0.2'" },
	};

	(void)state;
	expect_errors(bad, sizeof(bad) / sizeof(bad[0]));
	{
		char err[256] = "";

		assert_int_equal(pool_spec_count(NULL, err, sizeof(err)), -1);
		assert_string_equal(err, "empty address list");
	}
}

static void
test_err_malformed(void **state)
{
	static const struct bad bad[] = {
		{ "10.0.0", "bad address in '10.0.0'" },
		{ "10.0.0.", "bad address in '10.0.0.'" },
		{ "10..0.1", "bad address in '10..0.1'" },
		{ "10.0.0.1.5", "bad address in '10.0.0.1.5'" },
		{ "10.0.0.256", "bad address in '10.0.0.256'" },
		{ "1000.0.0.1", "bad address in '1000.0.0.1'" },
		{ "10.0.0.0001", "bad address in '10.0.0.0001'" },
		{ "a.b.c.d", "bad address in 'a.b.c.d'" },
		{ "10.0.0.x", "bad address in '10.0.0.x'" },
		{ " 10.0.0.1", "bad address in ' 10.0.0.1'" },
		{ "10.0.0.1 ", "bad address in '10.0.0.1 '" },
		{ "10.0.0.1,10.0.0.2 ", "bad address in '10.0.0.2 '" },
		{ "+10.0.0.1", "bad address in '+10.0.0.1'" },
		{ "0x0a.0.0.1", "bad address in '0x0a.0.0.1'" },
		{ "localhost", "bad address in 'localhost'" },
		{ "10.0.0.1/24", "bad address in '10.0.0.1/24'" },
		{ "10.0.0.-5", "bad address in '10.0.0.-5'" },
		{ "10.0.0.1-", "bad address in '10.0.0.1-'" },
		{ "-10.0.0.1", "bad address in '-10.0.0.1'" },
		{ "10.0.0.1-2.3", "bad address in '10.0.0.1-2.3'" },
		{ "10.0.0-1.2.3", "bad address in '10.0.0-1.2.3'" },
		{ "10.0.300-301.1", "bad address in '10.0.300-301.1'" },
		{ "10.0.0.1-10.0.0.256", "bad address in '10.0.0.1-10.0.0.256'" },
		{ "10.0.0.1\n", "bad address in '10.0.0.1?'" },
		{ "\x1b[2J", "bad address in '?[2J'" },
		{ "1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17.18.19.20",
		  "bad address in '1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.1...'" },
	};

	(void)state;
	expect_errors(bad, sizeof(bad) / sizeof(bad[0]));
}

static void
test_err_hyphens(void **state)
{
	static const struct bad bad[] = {
		{ "10.0.0.1-5-9", "more than one '-' in '10.0.0.1-5-9'" },
		{ "10.0-1.0-1.1", "more than one '-' in '10.0-1.0-1.1'" },
	};

	(void)state;
	expect_errors(bad, sizeof(bad) / sizeof(bad[0]));
}

static void
test_err_reversed(void **state)
{
	static const struct bad bad[] = {
		{ "10.0.0.40-10", "reversed range in '10.0.0.40-10'" },
		{ "10.0.5-1.1", "reversed range in '10.0.5-1.1'" },
		{ "10.0.1.0-10.0.0.255", "reversed range in '10.0.1.0-10.0.0.255'" },
	};

	(void)state;
	expect_errors(bad, sizeof(bad) / sizeof(bad[0]));
}

static void
test_err_over255(void **state)
{
	static const struct bad bad[] = {
		{ "10.0.0.10-256", "range end over 255 in '10.0.0.10-256'" },
		{ "10.0.0.10-999", "range end over 255 in '10.0.0.10-999'" },
		{ "10.0-300.0.1", "range end over 255 in '10.0-300.0.1'" },
	};

	(void)state;
	expect_errors(bad, sizeof(bad) / sizeof(bad[0]));
}

static void
test_err_duplicates(void **state)
{
	static const struct bad bad[] = {
		{ "10.0.0.1,10.0.0.1", "duplicate address 10.0.0.1" },
		{ "10.0.0.1-5,10.0.0.3", "duplicate address 10.0.0.3" },
		{ "10.0.0.9,10.0.0.1-10", "duplicate address 10.0.0.9" },
		{ "10.0.0-1.1,10.0.1.1", "duplicate address 10.0.1.1" },
	};

	(void)state;
	expect_errors(bad, sizeof(bad) / sizeof(bad[0]));
}

static void
test_err_zero(void **state)
{
	static const struct bad bad[] = {
		{ "0.0.0.0", "0.0.0.0 is not a usable address in '0.0.0.0'" },
		{ "0.0.0.0-5", "0.0.0.0 is not a usable address in '0.0.0.0-5'" },
	};

	(void)state;
	expect_errors(bad, sizeof(bad) / sizeof(bad[0]));
}

static void
test_err_too_large(void **state)
{
	static const struct bad bad[] = {
		{ "10.0.0.0-10.1.0.0", "more than 65535 addresses in '10.0.0.0-10.1.0.0'" },
		{ "10.0.0.1-10.0.255.255,10.1.0.1",
		  "more than 65535 addresses in '10.1.0.1'" },
		{ "1.0.0.1-255.255.255.255",
		  "more than 65535 addresses in '1.0.0.1-255.255.255.255'" },
	};

	(void)state;
	expect_errors(bad, sizeof(bad) / sizeof(bad[0]));
}

/* The exact boundary of the cap, and an error buffer too small. */
static void
test_limits(void **state)
{
	char err[256], tiny[8];
	struct pool *p;
	struct in_addr l, r;

	(void)state;
	p = pool_new("198.18.0.1", "10.0.0.1-10.0.255.255", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(pool_size(p), POOL_MAX);
	for (size_t i = 0; i < POOL_MAX; i++)
		assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(r), "10.0.255.255");
	assert_int_equal(pool_alloc(p, &l, &r), -1);
	assert_int_equal(pool_release(p, addr("10.0.128.7")), 0);
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(r), "10.0.128.7");
	pool_free(p);

	memset(tiny, 'x', sizeof(tiny));
	assert_int_equal(pool_spec_count("bogus-spec-here", tiny, sizeof(tiny)), -1);
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
	assert_null(pool_new("1.1.1.1", "bogus", tiny, sizeof(tiny)));
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
}

static void
test_pair_errors(void **state)
{
	static const struct { const char *l, *r, *err; } bad[] = {
		{ "10.0.0.1", NULL, "remoteip: not set" },
		{ NULL, "", "remoteip: empty address list" },
		{ "10.0.0.1", "10.1.0.x", "remoteip: bad address in '10.1.0.x'" },
		{ "", "10.1.0.1", "localip: empty address list" },
		{ "10.0.0.1-3,10.0.0.2", "10.1.0.1",
		  "localip: duplicate address 10.0.0.2" },
		{ "10.0.0.1", "10.1.0.1,10.1.0.1",
		  "remoteip: duplicate address 10.1.0.1" },
		{ "10.0.0.1-2", "10.1.0.1-3",
		  "localip has 2 addresses but remoteip has 3: give a single "
		  "localip, or at least one per remoteip" },
		{ "10.0.0.5", "10.0.0.1-10",
		  "address 10.0.0.5 is in both localip and remoteip" },
		{ "10.0.0.1-3", "10.0.0.3-5",
		  "address 10.0.0.3 is in both localip and remoteip" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";

		assert_null(pool_new(bad[i].l, bad[i].r, err, sizeof(err)));
		assert_string_equal(err, bad[i].err);
	}
}

/* Paired mode: local[i] goes with remote[i], whatever the churn. */
static void
test_pairs(void **state)
{
	char err[256];
	struct pool *p;
	struct in_addr l, r;

	(void)state;
	/* Poptop's sample: both lists of the same shape. */
	p = pool_new("192.168.0.234-238,192.168.0.245",
	    "192.168.1.234-238,192.168.1.245", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(pool_size(p), 6);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(pool_alloc(p, &l, &r), 0);
		assert_int_equal(ntohl(l.s_addr) & 0xff, ntohl(r.s_addr) & 0xff);
		assert_int_equal(ntohl(l.s_addr) >> 8 & 0xff, 0);
		assert_int_equal(ntohl(r.s_addr) >> 8 & 0xff, 1);
	}
	assert_int_equal(pool_release(p, addr("192.168.1.236")), 0);
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(l), "192.168.0.236");
	assert_string_equal(ip(r), "192.168.1.236");
	pool_free(p);

	/* A longer local list: the extra local addresses stay unused, and
	 * may even overlap the remote list without harm. */
	p = pool_new("10.0.0.1-5", "10.0.0.2-3", err, sizeof(err));
	assert_null(p);         /* 10.0.0.2 would be both ends of a link */
	assert_string_equal(err, "address 10.0.0.2 is in both localip and remoteip");
	p = pool_new("10.0.0.1-5", "10.0.0.4-5", err, sizeof(err));
	assert_non_null(p);     /* locals .1 and .2 used, .4 and .5 never */
	pool_free(p);
	p = pool_new("10.0.0.1-9", "10.0.1.1-2", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(pool_size(p), 2);
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(l), "10.0.0.1");
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(l), "10.0.0.2");
	assert_int_equal(pool_alloc(p, &l, &r), -1);
	pool_free(p);
	p = pool_new("10.0.1.1-2,10.0.0.9", "10.0.0.8-9", err, sizeof(err));
	assert_non_null(p);
	pool_free(p);
}

static void
test_shared_local(void **state)
{
	char err[256];
	struct pool *p;
	struct in_addr l, r;

	(void)state;
	p = pool_new("198.19.0.1", "198.19.0.2-254", err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(pool_size(p), 253);
	for (int i = 0; i < 253; i++) {
		assert_int_equal(pool_alloc(p, &l, &r), 0);
		assert_string_equal(ip(l), "198.19.0.1");
		assert_int_equal(ntohl(r.s_addr) & 0xff, i + 2);
	}
	assert_int_equal(pool_alloc(p, &l, &r), -1);
	pool_free(p);
}

static void
test_fifo(void **state)
{
	char err[256];
	struct pool *p = pool_new(NULL, "10.0.0.1-4", err, sizeof(err));
	struct in_addr l, r;

	(void)state;
	assert_non_null(p);
	assert_int_equal(pool_alloc(p, &l, &r), 0);   /* .1 */
	assert_int_equal(pool_alloc(p, &l, &r), 0);   /* .2 */
	assert_int_equal(pool_alloc(p, &l, &r), 0);   /* .3 */
	assert_int_equal(pool_available(p), 1);
	assert_int_equal(pool_release(p, addr("10.0.0.2")), 0);
	assert_int_equal(pool_release(p, addr("10.0.0.1")), 0);
	assert_int_equal(pool_available(p), 3);
	/* Never-used .4 was free longest, then .2, then .1. */
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(r), "10.0.0.4");
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(r), "10.0.0.2");
	assert_int_equal(pool_release(p, addr("10.0.0.3")), 0);
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(r), "10.0.0.1");
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(r), "10.0.0.3");
	assert_int_equal(pool_alloc(p, &l, &r), -1);
	pool_free(p);
}

static void
test_release_errors(void **state)
{
	char err[256];
	struct pool *p = pool_new("10.0.0.1", "10.0.0.2-3", err, sizeof(err));
	struct in_addr l, r;

	(void)state;
	assert_non_null(p);
	assert_int_equal(pool_release(p, addr("10.0.0.2")), -1);  /* never */
	assert_int_equal(pool_release(p, addr("10.0.0.1")), -1);  /* local */
	assert_int_equal(pool_release(p, addr("10.0.0.4")), -1);  /* outside */
	assert_int_equal(pool_release(p, addr("0.0.0.0")), -1);
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_int_equal(pool_release(p, r), 0);
	assert_int_equal(pool_release(p, r), -1);                 /* twice */
	assert_int_equal(pool_available(p), 2);
	pool_free(p);

	assert_int_equal(pool_release(NULL, r), -1);
	assert_int_equal(pool_alloc(NULL, &l, &r), -1);
	assert_int_equal(pool_size(NULL), 0);
	assert_int_equal(pool_available(NULL), 0);
	pool_free(NULL);
}

/* Random churn against a simple model: counts, uniqueness, pairing and
 * FIFO order must all hold. */
static void
test_churn(void **state)
{
	enum { N = 50 };
	char err[256];
	struct pool *p = pool_new("10.1.0.1-50", "10.2.0.1-50", err, sizeof(err));
	int busy[N + 1] = { 0 };
	int queue[N * 2000], qh = 0, qt = 0;   /* model of the free FIFO */
	uint32_t x = 42;
	size_t nbusy = 0;

	(void)state;
	assert_non_null(p);
	for (int i = 1; i <= N; i++)
		queue[qt++] = i;
	for (int iter = 0; iter < 50000; iter++) {
		struct in_addr l, r;
		x = x * 1103515245u + 12345u;
		int host = (int)(x >> 16) % N + 1;

		if ((x >> 8) & 1) {
			if (nbusy == N) {
				assert_int_equal(pool_alloc(p, &l, &r), -1);
				continue;
			}
			assert_int_equal(pool_alloc(p, &l, &r), 0);
			int got = (int)(ntohl(r.s_addr) & 0xff);
			assert_int_equal(got, queue[qh++ % (N * 2000)]);
			assert_int_equal(ntohl(l.s_addr), 0x0a010000u + (uint32_t)got);
			assert_false(busy[got]);
			busy[got] = 1;
			nbusy++;
		} else {
			r.s_addr = htonl(0x0a020000u + (uint32_t)host);
			assert_int_equal(pool_release(p, r), busy[host] ? 0 : -1);
			if (busy[host]) {
				busy[host] = 0;
				nbusy--;
				queue[qt++ % (N * 2000)] = host;
			}
		}
		assert_int_equal(pool_available(p), N - nbusy);
		assert_int_equal(pool_size(p), N);
	}
	pool_free(p);
}

/* A reload's new pool: addresses live calls hold are taken, in the middle
 * of the free ring, and the others still come out in their order; an
 * address outside the pool cannot be taken, and releasing it changes
 * nothing. */
/* pool_local: the local address pool_alloc pairs with a remote one
 * (what the monitor checks a worker's request against). */
static void
test_local_of(void **state)
{
	char err[256] = "";
	struct in_addr l;
	struct pool *p = pool_new("198.19.1.1-3", "198.19.0.10-12", err, sizeof(err));
	struct pool *q = pool_new("198.19.1.1", "198.19.0.10-12", err, sizeof(err));
	struct pool *n = pool_new(NULL, "198.19.0.10-12", err, sizeof(err));

	(void)state;
	assert_non_null(p);
	assert_non_null(q);
	assert_non_null(n);
	assert_int_equal(pool_local(p, addr("198.19.0.11"), &l), 0);
	assert_string_equal(ip(l), "198.19.1.2");
	assert_int_equal(pool_local(q, addr("198.19.0.12"), &l), 0);
	assert_string_equal(ip(l), "198.19.1.1");
	assert_int_equal(pool_local(n, addr("198.19.0.10"), &l), 0);
	assert_int_equal(l.s_addr, INADDR_ANY);
	assert_int_equal(pool_local(p, addr("198.19.0.13"), &l), -1);
	assert_int_equal(pool_local(NULL, addr("198.19.0.10"), &l), -1);
	pool_free(p);
	pool_free(q);
	pool_free(n);
}

static void
test_take(void **state)
{
	char err[256] = "";
	struct pool *p = pool_new("198.19.1.1", "198.19.0.10-14", err, sizeof(err));
	struct in_addr l, r;

	(void)state;
	assert_non_null(p);
	assert_int_equal(pool_take(p, addr("198.19.0.12")), 0);
	assert_int_equal(pool_take(p, addr("198.19.0.12")), -1);
	assert_int_equal(pool_take(p, addr("198.19.0.10")), 0);
	assert_int_equal(pool_take(p, addr("198.18.0.10")), -1);
	assert_int_equal(pool_available(p), 3);
	assert_int_equal(pool_release(p, addr("198.18.0.10")), -1);
	assert_int_equal(pool_available(p), 3);
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(r), "198.19.0.11");
	assert_string_equal(ip(l), "198.19.1.1");
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(r), "198.19.0.13");
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(r), "198.19.0.14");
	assert_int_equal(pool_alloc(p, &l, &r), -1);
	/* a taken address comes back like an allocated one */
	assert_int_equal(pool_release(p, addr("198.19.0.12")), 0);
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(r), "198.19.0.12");
	/* after the ring has wrapped */
	assert_int_equal(pool_release(p, addr("198.19.0.11")), 0);
	assert_int_equal(pool_release(p, addr("198.19.0.13")), 0);
	assert_int_equal(pool_release(p, addr("198.19.0.14")), 0);
	assert_int_equal(pool_take(p, addr("198.19.0.13")), 0);
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(r), "198.19.0.11");
	assert_int_equal(pool_alloc(p, &l, &r), 0);
	assert_string_equal(ip(r), "198.19.0.14");
	assert_int_equal(pool_alloc(p, &l, &r), -1);
	pool_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_local_of),
		cmocka_unit_test(test_spec_count),
		cmocka_unit_test(test_err_empty),
		cmocka_unit_test(test_err_malformed),
		cmocka_unit_test(test_err_hyphens),
		cmocka_unit_test(test_err_reversed),
		cmocka_unit_test(test_err_over255),
		cmocka_unit_test(test_err_duplicates),
		cmocka_unit_test(test_err_zero),
		cmocka_unit_test(test_err_too_large),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_pair_errors),
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_shared_local),
		cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_release_errors),
		cmocka_unit_test(test_churn),
		cmocka_unit_test(test_take),
	};

	return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
