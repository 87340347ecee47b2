/* MS-CHAPv2 client computations (RFC 2759 sections 8.1-8.7) and the
 * RFC 3079 master key. */
#include "client/mschap.h"

#include <string.h>

#include "client/crypto.h"

/* RFC 2759 section 8.7 and RFC 3079 section 3.4 constants. */
static const char MAGIC_SIGN[] = "Magic server to client signing constant";
static const char MAGIC_PAD[] = "Pad to make it do more than one iteration";
static const char MAGIC_MASTER[] = "This is the MPPE Master Key";
_Static_assert(sizeof(MAGIC_SIGN) - 1 == 39, "RFC 2759 Magic1 is 39 octets");
_Static_assert(sizeof(MAGIC_PAD) - 1 == 41, "RFC 2759 Magic2 is 41 octets");
_Static_assert(sizeof(MAGIC_MASTER) - 1 == 27, "RFC 3079 Magic1 is 27 octets");

/* RFC 2759 caps passwords at 256 Unicode characters. */
#define PASSWORD_MAX_CHARS 256

const char *mschap_user_name(const char *user)
{
	const char *bs = strrchr(user, '\\');

	return bs ? bs + 1 : user;
}

/* The password as UTF-16LE: UTF-8 sequences of the Basic Multilingual
 * Plane are decoded, anything malformed is taken byte by byte (so a
 * Latin-1 password still hashes as Windows would hash it). */
static size_t password_utf16(const char *pw, uint8_t *out)
{
	const unsigned char *p = (const unsigned char *)pw;
	size_t n = 0;

	while (*p && n < PASSWORD_MAX_CHARS) {
		unsigned c = *p;

		if ((c & 0xE0) == 0xC0 && (p[1] & 0xC0) == 0x80) {
			c = ((c & 0x1F) << 6) | (p[1] & 0x3F);
			p += 2;
		} else if ((c & 0xF0) == 0xE0 && (p[1] & 0xC0) == 0x80 &&
		    (p[2] & 0xC0) == 0x80) {
			c = ((c & 0x0F) << 12) | ((p[1] & 0x3F) << 6) |
			    (p[2] & 0x3F);
			p += 3;
		} else
			p++;
		out[2 * n] = c & 0xFF;
		out[2 * n + 1] = c >> 8;
		n++;
	}
	return 2 * n;
}

void mschap_nt_password_hash(const char *password,
    uint8_t hash[MSCHAP_HASH_LEN])
{
	uint8_t u[2 * PASSWORD_MAX_CHARS];
	size_t len = password_utf16(password, u);

	MD4(u, len, hash);
	OPENSSL_cleanse(u, sizeof(u));
}

void mschap_challenge_hash(const uint8_t peer[MSCHAP_CHALLENGE_LEN],
    const uint8_t auth[MSCHAP_CHALLENGE_LEN], const char *user,
    uint8_t out[MSCHAP_CHASH_LEN])
{
	SHA_CTX c;
	uint8_t d[SHA_DIGEST_LENGTH];

	user = mschap_user_name(user);
	SHA1_Init(&c);
	SHA1_Update(&c, peer, MSCHAP_CHALLENGE_LEN);
	SHA1_Update(&c, auth, MSCHAP_CHALLENGE_LEN);
	SHA1_Update(&c, user, strlen(user));
	SHA1_Final(d, &c);
	memcpy(out, d, MSCHAP_CHASH_LEN);
}

/* DesEncrypt(): 7 key octets spread over the 8 DES key bytes (the parity
 * bits are left clear: DES_set_key_unchecked ignores them). */
static void des_encrypt(const uint8_t clear[8], const uint8_t k7[7],
    uint8_t cipher[8])
{
	DES_cblock key;
	DES_key_schedule ks;

	key[0] = k7[0];
	for (int i = 1; i < 7; i++)
		key[i] = (uint8_t)((k7[i - 1] << (8 - i)) | (k7[i] >> i));
	key[7] = (uint8_t)(k7[6] << 1);
	DES_set_key_unchecked(&key, &ks);
	DES_ecb_encrypt((const_DES_cblock *)clear, (DES_cblock *)cipher, &ks,
	    DES_ENCRYPT);
	OPENSSL_cleanse(&ks, sizeof(ks));
}

void mschap_nt_response(const uint8_t auth[MSCHAP_CHALLENGE_LEN],
    const uint8_t peer[MSCHAP_CHALLENGE_LEN], const char *user,
    const char *password, uint8_t resp[MSCHAP_NT_RESPONSE_LEN])
{
	uint8_t ch[MSCHAP_CHASH_LEN], z[21] = { 0 };

	mschap_challenge_hash(peer, auth, user, ch);
	mschap_nt_password_hash(password, z);
	for (int i = 0; i < 3; i++)
		des_encrypt(ch, z + 7 * i, resp + 8 * i);
	OPENSSL_cleanse(z, sizeof(z));
}

static void password_hash_hash(const char *password,
    uint8_t hh[MSCHAP_HASH_LEN])
{
	uint8_t h[MSCHAP_HASH_LEN];

	mschap_nt_password_hash(password, h);
	MD4(h, sizeof(h), hh);
	OPENSSL_cleanse(h, sizeof(h));
}

void mschap_auth_response(const char *password,
    const uint8_t nt_resp[MSCHAP_NT_RESPONSE_LEN],
    const uint8_t peer[MSCHAP_CHALLENGE_LEN],
    const uint8_t auth[MSCHAP_CHALLENGE_LEN], const char *user,
    char out[MSCHAP_AUTHRESP_LEN + 1])
{
	static const char hex[] = "0123456789ABCDEF";
	uint8_t hh[MSCHAP_HASH_LEN], d[SHA_DIGEST_LENGTH], ch[MSCHAP_CHASH_LEN];
	SHA_CTX c;

	password_hash_hash(password, hh);
	SHA1_Init(&c);
	SHA1_Update(&c, hh, sizeof(hh));
	SHA1_Update(&c, nt_resp, MSCHAP_NT_RESPONSE_LEN);
	SHA1_Update(&c, MAGIC_SIGN, sizeof(MAGIC_SIGN) - 1);
	SHA1_Final(d, &c);
	mschap_challenge_hash(peer, auth, user, ch);
	SHA1_Init(&c);
	SHA1_Update(&c, d, sizeof(d));
	SHA1_Update(&c, ch, sizeof(ch));
	SHA1_Update(&c, MAGIC_PAD, sizeof(MAGIC_PAD) - 1);
	SHA1_Final(d, &c);
	out[0] = 'S';
	out[1] = '=';
	for (int i = 0; i < SHA_DIGEST_LENGTH; i++) {
		out[2 + 2 * i] = hex[d[i] >> 4];
		out[3 + 2 * i] = hex[d[i] & 15];
	}
	out[MSCHAP_AUTHRESP_LEN] = '\0';
	OPENSSL_cleanse(hh, sizeof(hh));
}

int mschap_auth_check(const char *password,
    const uint8_t nt_resp[MSCHAP_NT_RESPONSE_LEN],
    const uint8_t peer[MSCHAP_CHALLENGE_LEN],
    const uint8_t auth[MSCHAP_CHALLENGE_LEN], const char *user,
    const uint8_t *msg, size_t len)
{
	char want[MSCHAP_AUTHRESP_LEN + 1];
	unsigned diff = 0;

	if (len < MSCHAP_AUTHRESP_LEN)
		return -1;
	mschap_auth_response(password, nt_resp, peer, auth, user, want);
	for (int i = 0; i < MSCHAP_AUTHRESP_LEN; i++) {
		unsigned c = msg[i];

		if (c >= 'a' && c <= 'f')
			c -= 'a' - 'A';
		diff |= c ^ (unsigned char)want[i];
	}
	return diff ? -1 : 0;
}

void mschap_master_key(const char *password,
    const uint8_t nt_resp[MSCHAP_NT_RESPONSE_LEN],
    uint8_t master[MSCHAP_MASTER_KEY_LEN])
{
	uint8_t hh[MSCHAP_HASH_LEN], d[SHA_DIGEST_LENGTH];
	SHA_CTX c;

	password_hash_hash(password, hh);
	SHA1_Init(&c);
	SHA1_Update(&c, hh, sizeof(hh));
	SHA1_Update(&c, nt_resp, MSCHAP_NT_RESPONSE_LEN);
	SHA1_Update(&c, MAGIC_MASTER, sizeof(MAGIC_MASTER) - 1);
	SHA1_Final(d, &c);
	memcpy(master, d, MSCHAP_MASTER_KEY_LEN);
	OPENSSL_cleanse(hh, sizeof(hh));
}
