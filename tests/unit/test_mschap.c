/* Unit tests for client/mschap.c: every RFC 2759 section 9.2 value
 * (REFERENCE.md section 6), the RFC 3079 master key, the check of the
 * server's authenticator response, and the DOMAIN\user rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "client/mschap.h"

static const uint8_t AUTH_CHAL[16] = { 0x5B, 0x5D, 0x7C, 0x7D, 0x7B, 0x3F,
    0x2F, 0x3E, 0x3C, 0x2C, 0x60, 0x21, 0x32, 0x26, 0x26, 0x28 };
static const uint8_t PEER_CHAL[16] = { 0x21, 0x40, 0x23, 0x24, 0x25, 0x5E,
    0x26, 0x2A, 0x28, 0x29, 0x5F, 0x2B, 0x3A, 0x33, 0x7C, 0x7E };
static const uint8_t CHALLENGE[8] = { 0xD0, 0x2E, 0x43, 0x86, 0xBC, 0xE9,
    0x12, 0x26 };
static const uint8_t PW_HASH[16] = { 0x44, 0xEB, 0xBA, 0x8D, 0x53, 0x12,
    0xB8, 0xD6, 0x11, 0x47, 0x44, 0x11, 0xF5, 0x69, 0x89, 0xAE };
static const uint8_t NT_RESP[24] = { 0x82, 0x30, 0x9E, 0xCD, 0x8D, 0x70,
    0x8B, 0x5E, 0xA0, 0x8F, 0xAA, 0x39, 0x81, 0xCD, 0x83, 0x54, 0x42, 0x33,
    0x11, 0x4A, 0x3D, 0x85, 0xD6, 0xDF };
static const uint8_t MASTER[16] = { 0xFD, 0xEC, 0xE3, 0x71, 0x7A, 0x8C,
    0x83, 0x8C, 0xB3, 0x88, 0xE5, 0x27, 0xAE, 0x3C, 0xDD, 0x31 };
static const char AUTH_RESP[] = "S=407A5589115FD0D6209F510FE9C04566932CDA56";

static void test_password_hash(void **state)
{
	uint8_t h[16];

	(void)state;
	mschap_nt_password_hash("clientPass", h);
	assert_memory_equal(h, PW_HASH, 16);
}

static void test_challenge_hash(void **state)
{
	uint8_t c[8];

	(void)state;
	mschap_challenge_hash(PEER_CHAL, AUTH_CHAL, "User", c);
	assert_memory_equal(c, CHALLENGE, 8);
}

static void test_nt_response(void **state)
{
	uint8_t r[24];

	(void)state;
	mschap_nt_response(AUTH_CHAL, PEER_CHAL, "User", "clientPass", r);
	assert_memory_equal(r, NT_RESP, 24);
}

/* RFC 2759 hashes the user name without its domain. */
static void test_domain_stripped(void **state)
{
	uint8_t r[24];

	(void)state;
	assert_string_equal(mschap_user_name("CORP\\User"), "User");
	mschap_nt_response(AUTH_CHAL, PEER_CHAL, "CORP\\User", "clientPass", r);
	assert_memory_equal(r, NT_RESP, 24);
}

static void test_auth_response(void **state)
{
	char s[MSCHAP_AUTHRESP_LEN + 1];

	(void)state;
	mschap_auth_response("clientPass", NT_RESP, PEER_CHAL, AUTH_CHAL,
	    "User", s);
	assert_string_equal(s, AUTH_RESP);
}

static void test_auth_check(void **state)
{
	char msg[80];

	(void)state;
	snprintf(msg, sizeof(msg), "%s M=Access granted", AUTH_RESP);
	assert_int_equal(mschap_auth_check("clientPass", NT_RESP, PEER_CHAL,
	    AUTH_CHAL, "User", (const uint8_t *)msg, strlen(msg)), 0);
	/* Lower-case hex is the same response. */
	for (char *p = msg + 2; p < msg + MSCHAP_AUTHRESP_LEN; p++)
		if (*p >= 'A' && *p <= 'F')
			*p += 'a' - 'A';
	assert_int_equal(mschap_auth_check("clientPass", NT_RESP, PEER_CHAL,
	    AUTH_CHAL, "User", (const uint8_t *)msg, strlen(msg)), 0);
	/* One digit off, the wrong password, or cut short: rejected. */
	msg[10] = msg[10] == '0' ? '1' : '0';
	assert_int_equal(mschap_auth_check("clientPass", NT_RESP, PEER_CHAL,
	    AUTH_CHAL, "User", (const uint8_t *)msg, strlen(msg)), -1);
	assert_int_equal(mschap_auth_check("clientPasS", NT_RESP, PEER_CHAL,
	    AUTH_CHAL, "User", (const uint8_t *)AUTH_RESP,
	    strlen(AUTH_RESP)), -1);
	assert_int_equal(mschap_auth_check("clientPass", NT_RESP, PEER_CHAL,
	    AUTH_CHAL, "User", (const uint8_t *)AUTH_RESP, 41), -1);
}

static void test_master_key(void **state)
{
	uint8_t m[16];

	(void)state;
	mschap_master_key("clientPass", NT_RESP, m);
	assert_memory_equal(m, MASTER, 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_password_hash),
		cmocka_unit_test(test_challenge_hash),
		cmocka_unit_test(test_nt_response),
		cmocka_unit_test(test_domain_stripped),
		cmocka_unit_test(test_auth_response),
		cmocka_unit_test(test_auth_check),
		cmocka_unit_test(test_master_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
