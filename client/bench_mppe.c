/* Micro benchmark of client/mppe.c: MPPE-128 stateless packets per
 * second on one core for 1400-byte datagrams (encrypt, and decrypt),
 * and the memory of one session's PPP object. With --evp it also times
 * what the choice in client/crypto.h avoided: RC4 through EVP and the
 * legacy provider, rekeyed per packet, and the heap an EVP_CIPHER_CTX
 * holds. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/provider.h>

#include "client/mppe.h"
#include "client/ppp.h"

#define PKT_LEN   1400
#define BENCH_SEC 1.0
#define NOBJ      1000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static double bench_encrypt(struct mppe *m, uint8_t *pt, uint8_t *ct)
{
	double t0 = now_s(), t;
	unsigned long n = 0;

	do {
		for (int i = 0; i < 1000; i++)
			mppe_encrypt(m, pt, PKT_LEN, ct);
		n += 1000;
	} while ((t = now_s() - t0) < BENCH_SEC);
	return n / t;
}

static double bench_decrypt(struct mppe *tx, struct mppe *rx, uint8_t *pt,
    uint8_t *ct)
{
	double t0, t, spent = 0;
	unsigned long n = 0;
	size_t olen;

	/* Only the decryption is timed; encryption feeds it. */
	do {
		mppe_encrypt(tx, pt, PKT_LEN, ct);
		t0 = now_s();
		if (mppe_decrypt(rx, ct, PKT_LEN + MPPE_HDR_LEN, pt, &olen) !=
		    MPPE_OK)
			abort();
		spent += now_s() - t0;
		n++;
	} while (spent < BENCH_SEC);
	t = spent;
	return n / t;
}

/* The EVP way of one stateless MPPE packet: the key change of RFC 3078
 * section 7.3 (two RC4 keyings) and the encryption. */
static int bench_evp(void)
{
	OSSL_PROVIDER *leg = OSSL_PROVIDER_load(NULL, "legacy");
	OSSL_PROVIDER *def = OSSL_PROVIDER_load(NULL, "default");
	EVP_CIPHER *rc4 = EVP_CIPHER_fetch(NULL, "RC4", NULL);
	EVP_CIPHER_CTX *ctx, *many[NOBJ];
	uint8_t key[16] = { 1 }, pt[PKT_LEN] = { 0 }, ct[PKT_LEN], tmp[16];
	double t0, t;
	unsigned long n = 0;
	size_t h0;
	int outl;

	if (leg == NULL || def == NULL || rc4 == NULL) {
		printf("evp: RC4 not available (legacy provider missing)\n");
		return -1;
	}
	ctx = EVP_CIPHER_CTX_new();
	t0 = now_s();
	do {
		for (int i = 0; i < 1000; i++) {
			mppe_key_from_sha(key, key, 16, tmp);
			EVP_EncryptInit_ex(ctx, rc4, NULL, tmp, NULL);
			EVP_EncryptUpdate(ctx, key, &outl, tmp, 16);
			EVP_EncryptInit_ex(ctx, rc4, NULL, key, NULL);
			EVP_EncryptUpdate(ctx, ct, &outl, pt, PKT_LEN);
		}
		n += 1000;
	} while ((t = now_s() - t0) < BENCH_SEC);
	printf("evp (legacy provider) MPPE-128 stateless encrypt: %.0f packets/s\n",
	    n / t);
	h0 = heap_used();
	for (int i = 0; i < NOBJ; i++) {
		many[i] = EVP_CIPHER_CTX_new();
		EVP_EncryptInit_ex(many[i], rc4, NULL, key, NULL);
	}
	printf("evp: %zu bytes of heap per keyed RC4 EVP_CIPHER_CTX "
	    "(two per session)\n", (heap_used() - h0) / NOBJ);
	for (int i = 0; i < NOBJ; i++)
		EVP_CIPHER_CTX_free(many[i]);
	EVP_CIPHER_CTX_free(ctx);
	EVP_CIPHER_free(rc4);
	OSSL_PROVIDER_unload(leg);
	OSSL_PROVIDER_unload(def);
	return 0;
}

static void nop_output(void *a, const uint8_t *f, size_t l)
{
	(void)a; (void)f; (void)l;
}
static void nop_up(void *a, const struct ppp_facts *f)
{
	(void)a; (void)f;
}
static void nop_down(void *a, enum ppp_reason r)
{
	(void)a; (void)r;
}

static void memory(void)
{
	static const uint8_t master[16] = { 7 };
	const struct ppp_ops ops = { .output = nop_output, .up = nop_up,
	    .ip_input = nop_output, .down = nop_down };
	const struct ppp_config cfg = { .user = "user0001",
	    .password = "password0001", .mppe = PPP_MPPE_128, .mru = 1400,
	    .windows = 1, .want_dns = 1, .ipv6cp = 1 };
	struct ppp **p = calloc(NOBJ, sizeof(*p));
	struct mppe **m = calloc(NOBJ, sizeof(*m));
	size_t h0;

	if (p == NULL || m == NULL)
		abort();
	h0 = heap_used();
	for (int i = 0; i < NOBJ; i++) {
		p[i] = ppp_new(&cfg, &ops, NULL);
		m[i] = mppe_new(master, 128, 0, 0);
	}
	printf("ppp object: %zu bytes (sizeof and strings), %zu with MPPE "
	    "keys; heap per session measured over %d: %zu bytes\n",
	    ppp_memory(p[0]), ppp_memory(p[0]) + mppe_size(), NOBJ,
	    (heap_used() - h0) / NOBJ);
	for (int i = 0; i < NOBJ; i++) {
		ppp_free(p[i]);
		mppe_free(m[i]);
	}
	free(p);
	free(m);
}

int main(int argc, char **argv)
{
	static const uint8_t master[16] = { 1, 2, 3 };
	struct mppe *cli = mppe_new(master, 128, 0, 0);
	struct mppe *srv = mppe_new(master, 128, 0, 1);
	static uint8_t pt[PKT_LEN + 2], ct[PKT_LEN + 2];

	if (cli == NULL || srv == NULL)
		return 1;
	memset(pt, 0xA5, sizeof(pt));
	printf("MPPE-128 stateless encrypt, %d-byte packets, one core: "
	    "%.0f packets/s\n", PKT_LEN, bench_encrypt(cli, pt, ct));
	printf("MPPE-128 stateless decrypt, %d-byte packets, one core: "
	    "%.0f packets/s\n", PKT_LEN, bench_decrypt(srv, cli, pt, ct));
	mppe_free(cli);
	mppe_free(srv);
	memory();
	if (argc > 1 && strcmp(argv[1], "--evp") == 0)
		return bench_evp() < 0;
	return 0;
}
