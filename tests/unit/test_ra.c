/* Unit tests for proto/ra.c: the Router Advertisement a session's client
 * gets for its /64, octet by octet against RFC 4861, and Solicitations. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "proto/ra.h"

static struct ra_info
info(const char *prefix, unsigned mtu, int withdraw)
{
	struct ra_info ri = { .prefix_len = 64, .mtu = mtu, .withdraw = withdraw };
	assert_int_equal(inet_pton(AF_INET6, prefix, &ri.prefix), 1);
	return ri;
}

static void
test_advertisement_octets(void **state)
{
	uint8_t buf[RA_LEN];
	struct ra_info ri = info("2001:db8:100:2a::", 1396, 0);
	assert_int_equal(ra_build(&ri, buf, sizeof(buf)), 56);
	const uint8_t want[56] = {
		134, 0, 0, 0,             /* type RA, code, checksum (kernel's) */
		64, 0, 0x07, 0x08,        /* cur hop limit, M/O 0, lifetime 1800 */
		0, 0, 0, 0, 0, 0, 0, 0,   /* reachable, retrans: unspecified */
		3, 4, 64, 0xc0,           /* prefix option, 32 octets, /64, L A */
		0, 0x01, 0x51, 0x80,      /* valid 86400 */
		0, 0, 0x38, 0x40,         /* preferred 14400 */
		0, 0, 0, 0,               /* reserved */
		0x20, 0x01, 0x0d, 0xb8, 0x01, 0x00, 0x00, 0x2a,
		0, 0, 0, 0, 0, 0, 0, 0,
		5, 1, 0, 0,               /* MTU option, 8 octets */
		0, 0, 0x05, 0x74,         /* 1396 */
	};
	assert_memory_equal(buf, want, sizeof(want));
}

static void
test_withdrawal_and_no_mtu(void **state)
{
	uint8_t buf[RA_LEN];
	struct ra_info ri = info("2001:db8:100:2a::", 0, 1), back;
	unsigned life;
	uint32_t valid, preferred;
	int n = ra_build(&ri, buf, sizeof(buf));
	assert_int_equal(n, RA_HDR_LEN + RA_PREFIX_OPT_LEN);
	assert_int_equal(ra_parse(buf, (size_t)n, &back, &life, &valid,
	    &preferred), 0);
	assert_int_equal(life, 0);
	assert_int_equal(preferred, 0);
	/* Valid 0: RFC 4862 5.5.3 e) cuts the client's to two hours; a day
	 * sent again would renew it. */
	assert_int_equal(valid, 0);
	assert_int_equal(back.mtu, 0);
	assert_true(back.withdraw);
	assert_memory_equal(&back.prefix, &ri.prefix, sizeof(ri.prefix));
}

static void
test_unsendable_refused(void **state)
{
	uint8_t buf[RA_LEN];
	struct ra_info ri = info("2001:db8::", 1279, 0);
	assert_int_equal(ra_build(&ri, buf, sizeof(buf)), -1);
	ri.mtu = 1500;
	ri.prefix_len = 56;   /* SLAAC needs a /64 */
	assert_int_equal(ra_build(&ri, buf, sizeof(buf)), -1);
	ri.prefix_len = 64;
	assert_int_equal(ra_build(&ri, buf, RA_LEN - 1), -1);
	assert_int_equal(ra_build(&ri, buf, RA_LEN), RA_LEN);
}

static void
test_solicitations(void **state)
{
	const uint8_t plain[8] = { 133, 0, 0x12, 0x34, 0, 0, 0, 0 };
	assert_int_equal(ra_rs_valid(plain, sizeof(plain)), 0);
	/* With an option of 8 octets (a source link-layer address). */
	const uint8_t opt[16] = { 133, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 3, 4, 5, 6 };
	assert_int_equal(ra_rs_valid(opt, sizeof(opt)), 0);
	const uint8_t zero_len[16] = { 133, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	assert_int_equal(ra_rs_valid(zero_len, sizeof(zero_len)), -1);
	const uint8_t past_end[16] = { 133, 0, 0, 0, 0, 0, 0, 0, 1, 2 };
	assert_int_equal(ra_rs_valid(past_end, sizeof(past_end)), -1);
	const uint8_t code1[8] = { 133, 1 };
	assert_int_equal(ra_rs_valid(code1, sizeof(code1)), -1);
	const uint8_t ra[8] = { 134, 0 };
	assert_int_equal(ra_rs_valid(ra, sizeof(ra)), -1);
	assert_int_equal(ra_rs_valid(plain, 7), -1);
	const uint8_t odd_tail[9] = { 133, 0, 0, 0, 0, 0, 0, 0, 1 };
	assert_int_equal(ra_rs_valid(odd_tail, sizeof(odd_tail)), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_advertisement_octets),
		cmocka_unit_test(test_withdrawal_and_no_mtu),
		cmocka_unit_test(test_unsendable_refused),
		cmocka_unit_test(test_solicitations),
	};
	return cmocka_run_group_tests_name("ra", tests, NULL, NULL);
}
