/* Unit tests for client/mppe.c: the RFC 3079 section 3.5 sample keys and
 * messages (40 and 128 bits, REFERENCE.md section 6), the RFC 3078 key
 * change of the first stateless packet computed apart, round trips
 * between a client and a server object over the 12-bit count wrap, and
 * stateless/stateful loss: late packets, and a stateful gap that drops
 * until the sender (told by a CCP Reset-Request) sends FLUSHED. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "client/mppe.h"

static const uint8_t MASTER[16] = { 0xFD, 0xEC, 0xE3, 0x71, 0x7A, 0x8C,
    0x83, 0x8C, 0xB3, 0x88, 0xE5, 0x27, 0xAE, 0x3C, 0xDD, 0x31 };
static const uint8_t SRV_SEND_START[16] = { 0x8B, 0x7C, 0xDC, 0x14, 0x9B,
    0x99, 0x3A, 0x1B, 0xA1, 0x18, 0xCB, 0x15, 0x3F, 0x56, 0xDC, 0xCB };
static const uint8_t SRV_SEND_SESSION128[16] = { 0x40, 0x5C, 0xB2, 0x24,
    0x7A, 0x79, 0x56, 0xE6, 0xE2, 0x11, 0x00, 0x7A, 0xE2, 0x7B, 0x22, 0xD4 };
static const uint8_t SRV_SEND_SESSION40[8] = { 0xD1, 0x26, 0x9E, 0xC4, 0x9F,
    0xA6, 0x2E, 0x3E };
static const uint8_t CLI_SEND_START[16] = { 0xD5, 0xF0, 0xE9, 0x52, 0x1E,
    0x3E, 0xA9, 0x58, 0x96, 0x45, 0xE8, 0x60, 0x51, 0xC8, 0x22, 0x26 };
static const uint8_t MSG_RC4_128[12] = { 0x81, 0x84, 0x83, 0x17, 0xDF, 0x68,
    0x84, 0x62, 0x72, 0xFB, 0x5A, 0xBE };
static const uint8_t MSG_RC4_40[12] = { 0x92, 0x91, 0x37, 0x91, 0x7E, 0x58,
    0x03, 0xD6, 0x68, 0xD7, 0x58, 0x98 };
static const char MSG[] = "test message";

static void test_start_keys(void **state)
{
	uint8_t k[16];

	(void)state;
	mppe_start_key(MASTER, 1, 1, 16, k);
	assert_memory_equal(k, SRV_SEND_START, 16);
	/* The client receives with the server's send key ... */
	mppe_start_key(MASTER, 0, 0, 16, k);
	assert_memory_equal(k, SRV_SEND_START, 16);
	/* ... and sends with the server's receive key. */
	mppe_start_key(MASTER, 1, 0, 16, k);
	assert_memory_equal(k, CLI_SEND_START, 16);
	mppe_start_key(MASTER, 0, 1, 16, k);
	assert_memory_equal(k, CLI_SEND_START, 16);
	/* SendStartKey40 is the first 8 octets. */
	memset(k, 0, sizeof(k));
	mppe_start_key(MASTER, 1, 1, 8, k);
	assert_memory_equal(k, SRV_SEND_START, 8);
}

static void test_session_keys_and_messages(void **state)
{
	uint8_t k[16], c[12];

	(void)state;
	mppe_initial_key(SRV_SEND_START, 16, k);
	assert_memory_equal(k, SRV_SEND_SESSION128, 16);
	mppe_rc4(k, 16, (const uint8_t *)MSG, 12, c);
	assert_memory_equal(c, MSG_RC4_128, 12);
	mppe_initial_key(SRV_SEND_START, 8, k);
	assert_memory_equal(k, SRV_SEND_SESSION40, 8);
	mppe_rc4(k, 8, (const uint8_t *)MSG, 12, c);
	assert_memory_equal(c, MSG_RC4_40, 12);
}

/* The first stateless packet from the server: count 0, FLUSHED and
 * encrypted bits, and a key changed once from SendSessionKey by the
 * RFC 3078 section 7.3 steps done here by hand. */
static void check_first_packet(int bits, const uint8_t *session0)
{
	size_t kl = bits == 40 ? 8 : 16;
	uint8_t interim[16], key[16], want[12], out[14];
	struct mppe *srv = mppe_new(MASTER, bits, 0, 1);

	assert_non_null(srv);
	mppe_key_from_sha(SRV_SEND_START, session0, kl, interim);
	mppe_rc4(interim, kl, interim, kl, key);
	if (kl == 8)
		memcpy(key, "\xD1\x26\x9E", 3);
	mppe_rc4(key, kl, (const uint8_t *)MSG, 12, want);
	assert_int_equal(mppe_encrypt(srv, (const uint8_t *)MSG, 12, out), 14);
	assert_int_equal(out[0], 0x90);
	assert_int_equal(out[1], 0x00);
	assert_memory_equal(out + 2, want, 12);
	mppe_free(srv);
}

static void test_first_stateless_packet(void **state)
{
	(void)state;
	check_first_packet(128, SRV_SEND_SESSION128);
	check_first_packet(40, SRV_SEND_SESSION40);
}

/* A payload that names its packet. */
static size_t payload(uint8_t *p, unsigned n)
{
	size_t len = 20 + n % 1380;

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(n * 7 + i);
	return len;
}

struct pair {
	struct mppe *cli, *srv;
};

static void pair_new(struct pair *p, int bits, int stateful)
{
	p->cli = mppe_new(MASTER, bits, stateful, 0);
	p->srv = mppe_new(MASTER, bits, stateful, 1);
	assert_non_null(p->cli);
	assert_non_null(p->srv);
}

static void pair_free(struct pair *p)
{
	mppe_free(p->cli);
	mppe_free(p->srv);
}

/* n from `from` to `to` (encrypted by tx), delivered to rx unless drop()
 * says so; every delivered one must decrypt to its payload. */
static void send_one(struct mppe *tx, struct mppe *rx, unsigned n,
    int deliver, enum mppe_result expect)
{
	uint8_t pt[1400], ct[1402], out[1402];
	size_t len = payload(pt, n), olen = 0;
	size_t clen = mppe_encrypt(tx, pt, len, ct);

	assert_int_equal(clen, len + 2);
	if (!deliver)
		return;
	assert_int_equal(mppe_decrypt(rx, ct, clen, out, &olen), expect);
	if (expect == MPPE_OK) {
		assert_int_equal(olen, len);
		assert_memory_equal(out, pt, len);
	}
}

static void round_trip(int bits, int stateful)
{
	struct pair p;

	pair_new(&p, bits, stateful);
	/* Past the 12-bit wrap, both ways interleaved. */
	for (unsigned n = 0; n < 5000; n++) {
		send_one(p.srv, p.cli, n, 1, MPPE_OK);
		send_one(p.cli, p.srv, n + 1, 1, MPPE_OK);
	}
	pair_free(&p);
}

static void test_round_trips(void **state)
{
	(void)state;
	round_trip(128, 0);
	round_trip(40, 0);
	round_trip(128, 1);
	round_trip(40, 1);
}

/* Stateless: any loss is caught up by key changes; a repeated or older
 * packet is dropped without disturbing what follows. */
static void test_stateless_loss(void **state)
{
	struct pair p;
	uint8_t pt[100], ct[102], out[102];
	size_t olen;

	(void)state;
	pair_new(&p, 128, 0);
	for (unsigned n = 0; n < 6000; n++)
		send_one(p.srv, p.cli, n, n % 3 == 0 || (n > 3000 && n < 4500)
		    ? 0 : 1, MPPE_OK);
	/* A duplicate of the last packet. */
	memset(pt, 1, sizeof(pt));
	mppe_encrypt(p.srv, pt, sizeof(pt), ct);
	assert_int_equal(mppe_decrypt(p.cli, ct, sizeof(ct), out, &olen),
	    MPPE_OK);
	assert_int_equal(mppe_decrypt(p.cli, ct, sizeof(ct), out, &olen),
	    MPPE_LATE);
	send_one(p.srv, p.cli, 7, 1, MPPE_OK);
	/* Without FLUSHED, or unencrypted, or empty: malformed. */
	mppe_encrypt(p.srv, pt, sizeof(pt), ct);
	ct[0] &= 0x7F;
	assert_int_equal(mppe_decrypt(p.cli, ct, sizeof(ct), out, &olen),
	    MPPE_BAD);
	ct[0] = 0x80;
	assert_int_equal(mppe_decrypt(p.cli, ct, sizeof(ct), out, &olen),
	    MPPE_BAD);
	assert_int_equal(mppe_decrypt(p.cli, ct, 2, out, &olen), MPPE_BAD);
	send_one(p.srv, p.cli, 8, 1, MPPE_OK);
	pair_free(&p);
}

/* Stateful: after the gap, RESET once, DROP until the sender has handled
 * the Reset-Request, then packets decrypt again. */
static void stateful_gap(unsigned first_lost, unsigned nlost)
{
	struct pair p;
	unsigned n = 0;

	pair_new(&p, 128, 1);
	for (; n < first_lost; n++)
		send_one(p.srv, p.cli, n, 1, MPPE_OK);
	for (; n < first_lost + nlost; n++)
		send_one(p.srv, p.cli, n, 0, MPPE_OK);
	send_one(p.srv, p.cli, n++, 1, MPPE_RESET);
	send_one(p.srv, p.cli, n++, 1, MPPE_DROP);
	send_one(p.srv, p.cli, n++, 1, MPPE_DROP);
	/* The client's CCP Reset-Request reached the server. */
	mppe_reset_tx(p.srv);
	for (unsigned end = n + 600; n < end; n++)
		send_one(p.srv, p.cli, n, 1, MPPE_OK);
	assert_int_equal(mppe_resyncs(p.cli), 1);
	/* The other direction never lost a packet. */
	send_one(p.cli, p.srv, 1, 1, MPPE_OK);
	pair_free(&p);
}

static void test_stateful_loss_resync(void **state)
{
	(void)state;
	stateful_gap(10, 1);        /* one packet */
	stateful_gap(250, 300);     /* over the flag packets 255 and 511 */
	stateful_gap(100, 1000);    /* 256 and more */
	stateful_gap(4000, 200);    /* across the count wrap */
}

/* A flag packet (count xxFF) is FLUSHED: it ends a gap by itself, and a
 * Reset-Request that arrives at the sender after that is one more key
 * change both sides make. */
static void test_stateful_gap_at_flag(void **state)
{
	struct pair p;
	unsigned n = 0;

	(void)state;
	pair_new(&p, 128, 1);
	for (; n < 251; n++)
		send_one(p.srv, p.cli, n, 1, MPPE_OK);
	for (; n < 255; n++)
		send_one(p.srv, p.cli, n, 0, MPPE_OK);
	send_one(p.srv, p.cli, n++, 1, MPPE_OK);          /* 255 */
	assert_int_equal(mppe_resyncs(p.cli), 1);
	pair_free(&p);

	pair_new(&p, 128, 1);
	for (n = 0; n < 250; n++)
		send_one(p.srv, p.cli, n, 1, MPPE_OK);
	for (; n < 254; n++)
		send_one(p.srv, p.cli, n, 0, MPPE_OK);
	send_one(p.srv, p.cli, n++, 1, MPPE_RESET);       /* 254 */
	send_one(p.srv, p.cli, n++, 1, MPPE_OK);          /* 255 */
	mppe_reset_tx(p.srv);
	for (unsigned end = n + 300; n < end; n++)
		send_one(p.srv, p.cli, n, 1, MPPE_OK);
	assert_int_equal(mppe_resyncs(p.cli), 1);
	pair_free(&p);
}

/* A gap that ends on a FLUSHED packet (the sender rekeyed after an
 * earlier Reset-Request) needs no Reset-Request of its own. */
static void test_stateful_gap_on_flushed(void **state)
{
	struct pair p;
	unsigned n = 0;

	(void)state;
	pair_new(&p, 128, 1);
	for (; n < 20; n++)
		send_one(p.srv, p.cli, n, 1, MPPE_OK);
	send_one(p.srv, p.cli, n++, 0, MPPE_OK);
	mppe_reset_tx(p.srv);
	for (unsigned end = n + 300; n < end; n++)
		send_one(p.srv, p.cli, n, 1, MPPE_OK);
	assert_int_equal(mppe_resyncs(p.cli), 1);
	pair_free(&p);
}

static void test_bad_bits(void **state)
{
	(void)state;
	assert_null(mppe_new(MASTER, 56, 0, 0));
	assert_null(mppe_new(MASTER, 0, 0, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_keys),
		cmocka_unit_test(test_session_keys_and_messages),
		cmocka_unit_test(test_first_stateless_packet),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_stateless_loss),
		cmocka_unit_test(test_stateful_loss_resync),
		cmocka_unit_test(test_stateful_gap_at_flag),
		cmocka_unit_test(test_stateful_gap_on_flushed),
		cmocka_unit_test(test_bad_bits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
