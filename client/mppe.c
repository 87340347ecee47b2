/* MPPE encryption and its key schedule (RFC 3078 sections 3, 7, 8;
 * RFC 3079 section 3). */
#include "client/mppe.h"

#include <stdlib.h>
#include <string.h>

#include "client/crypto.h"

#define MPPE_BIT_FLUSHED   0x80
#define MPPE_BIT_COMPRESS  0x40
#define MPPE_BIT_FRONT     0x20
#define MPPE_BIT_ENCRYPTED 0x10
#define MPPE_CCOUNT_MASK   0x0FFF
#define MPPE_CCOUNT_SPACE  0x1000
#define MPPE_FLAG_OCTET    0xFF     /* stateful key change at count xxFF */
#define MPPE_KEYLEN_40     8
#define MPPE_KEYLEN_128    16

/* RFC 3079 section 3.4 constants. */
static const uint8_t SHA_PAD1[40] = { 0 };
static const uint8_t SHA_PAD2[40] = {
	0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2,
	0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2,
	0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2,
	0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2,
};
static const char MAGIC_CLIENT_SEND[] = "On the client side, this is the "
    "send key; on the server side, it is the receive key.";
static const char MAGIC_CLIENT_RECV[] = "On the client side, this is the "
    "receive key; on the server side, it is the send key.";
_Static_assert(sizeof(MAGIC_CLIENT_SEND) - 1 == 84, "RFC 3079 Magic2");
_Static_assert(sizeof(MAGIC_CLIENT_RECV) - 1 == 84, "RFC 3079 Magic3");
/* RFC 3078 section 7.3: the salt of 40-bit session keys. */
static const uint8_t SALT_40[3] = { 0xD1, 0x26, 0x9E };

struct mppe_dir {
	RC4_KEY rc4;
	uint8_t start[MPPE_KEY_MAX];
	uint8_t session[MPPE_KEY_MAX];
	uint16_t ccount;
	uint8_t flush;       /* tx: FLUSHED in the next packet */
	uint8_t discard;     /* rx: stateful, waiting for FLUSHED */
};

struct mppe {
	struct mppe_dir tx, rx;
	uint64_t resyncs;
	uint8_t keylen;
	uint8_t stateful;
};

void mppe_start_key(const uint8_t master[MPPE_MASTER_LEN], int is_send,
    int is_server, size_t keylen, uint8_t *out)
{
	const char *magic = (is_send != is_server) ? MAGIC_CLIENT_SEND :
	    MAGIC_CLIENT_RECV;
	uint8_t d[SHA_DIGEST_LENGTH];
	SHA_CTX c;

	SHA1_Init(&c);
	SHA1_Update(&c, master, MPPE_MASTER_LEN);
	SHA1_Update(&c, SHA_PAD1, sizeof(SHA_PAD1));
	SHA1_Update(&c, magic, sizeof(MAGIC_CLIENT_SEND) - 1);
	SHA1_Update(&c, SHA_PAD2, sizeof(SHA_PAD2));
	SHA1_Final(d, &c);
	memcpy(out, d, keylen);
}

void mppe_key_from_sha(const uint8_t *start, const uint8_t *session,
    size_t keylen, uint8_t *out)
{
	uint8_t d[SHA_DIGEST_LENGTH];
	SHA_CTX c;

	SHA1_Init(&c);
	SHA1_Update(&c, start, keylen);
	SHA1_Update(&c, SHA_PAD1, sizeof(SHA_PAD1));
	SHA1_Update(&c, session, keylen);
	SHA1_Update(&c, SHA_PAD2, sizeof(SHA_PAD2));
	SHA1_Final(d, &c);
	memcpy(out, d, keylen);
}

static void salt(uint8_t *key, size_t keylen)
{
	if (keylen == MPPE_KEYLEN_40)
		memcpy(key, SALT_40, sizeof(SALT_40));
}

void mppe_initial_key(const uint8_t *start, size_t keylen, uint8_t *out)
{
	mppe_key_from_sha(start, start, keylen, out);
	salt(out, keylen);
}

void mppe_rc4(const uint8_t *key, size_t keylen, const uint8_t *in,
    size_t len, uint8_t *out)
{
	RC4_KEY k;

	RC4_set_key(&k, (int)keylen, key);
	RC4(&k, len, in, out);
	OPENSSL_cleanse(&k, sizeof(k));
}

/* RFC 3078 section 7.3: interim key from SHA-1, the tables keyed with
 * it, the interim key encrypted with them into the new session key, and
 * the tables keyed again with that. */
static void dir_rekey(struct mppe_dir *d, size_t keylen)
{
	uint8_t interim[MPPE_KEY_MAX];

	mppe_key_from_sha(d->start, d->session, keylen, interim);
	RC4_set_key(&d->rc4, (int)keylen, interim);
	RC4(&d->rc4, keylen, interim, d->session);
	salt(d->session, keylen);
	RC4_set_key(&d->rc4, (int)keylen, d->session);
}

static void dir_init(struct mppe_dir *d, const uint8_t master[MPPE_MASTER_LEN],
    int is_send, int is_server, size_t keylen)
{
	mppe_start_key(master, is_send, is_server, keylen, d->start);
	mppe_initial_key(d->start, keylen, d->session);
	RC4_set_key(&d->rc4, (int)keylen, d->session);
	/* The first packet carries count 0: "the one before" is the last. */
	d->ccount = MPPE_CCOUNT_SPACE - 1;
}

struct mppe *mppe_new(const uint8_t master[MPPE_MASTER_LEN], int bits,
    int stateful, int is_server)
{
	struct mppe *m;
	size_t keylen;

	if (bits == 40)
		keylen = MPPE_KEYLEN_40;
	else if (bits == 128)
		keylen = MPPE_KEYLEN_128;
	else
		return NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	m->keylen = (uint8_t)keylen;
	m->stateful = stateful ? 1 : 0;
	dir_init(&m->tx, master, 1, is_server, keylen);
	dir_init(&m->rx, master, 0, is_server, keylen);
	return m;
}

void mppe_free(struct mppe *m)
{
	if (m == NULL)
		return;
	OPENSSL_cleanse(m, sizeof(*m));
	free(m);
}

uint64_t mppe_resyncs(const struct mppe *m)
{
	return m->resyncs;
}

size_t mppe_size(void)
{
	return sizeof(struct mppe);
}

void mppe_reset_tx(struct mppe *m)
{
	m->tx.flush = 1;
}

size_t mppe_encrypt(struct mppe *m, const uint8_t *in, size_t len,
    uint8_t *out)
{
	struct mppe_dir *d = &m->tx;
	uint8_t bits = MPPE_BIT_ENCRYPTED;

	d->ccount = (d->ccount + 1) & MPPE_CCOUNT_MASK;
	if (!m->stateful || (d->ccount & 0xFF) == MPPE_FLAG_OCTET || d->flush) {
		dir_rekey(d, m->keylen);
		bits |= MPPE_BIT_FLUSHED;
		d->flush = 0;
	}
	out[0] = (uint8_t)(bits | (d->ccount >> 8));
	out[1] = (uint8_t)(d->ccount & 0xFF);
	RC4(&d->rc4, len, in, out + MPPE_HDR_LEN);
	return len + MPPE_HDR_LEN;
}

/* RFC 3078 section 8.1: one key change per count advanced; a count that
 * went back (by the half space or more) is a late packet. */
static enum mppe_result rx_stateless(struct mppe *m, uint16_t cc, int flushed)
{
	struct mppe_dir *d = &m->rx;
	uint16_t n = (cc - d->ccount) & MPPE_CCOUNT_MASK;

	if (!flushed)
		return MPPE_BAD;
	if (n == 0 || n > MPPE_CCOUNT_SPACE / 2)
		return MPPE_LATE;
	while (n--)
		dir_rekey(d, m->keylen);
	d->ccount = cc;
	return MPPE_OK;
}

/* RFC 3078 section 8.2, as ppp_mppe on Linux does it: a gap starts the
 * discard state; the next FLUSHED packet ends it after one key change
 * per flag packet missed; every FLUSHED packet is one key change. A gap
 * that ends on a FLUSHED packet resynchronises at once (the sender has
 * just changed its key: there is nothing to ask for). */
static enum mppe_result rx_stateful(struct mppe *m, uint16_t cc, int flushed)
{
	struct mppe_dir *d = &m->rx;

	if (!d->discard) {
		d->ccount = (d->ccount + 1) & MPPE_CCOUNT_MASK;
		if (cc != d->ccount) {
			d->discard = 1;
			if (!flushed)
				return MPPE_RESET;
		}
	}
	if (d->discard) {
		if (!flushed)
			return MPPE_DROP;
		while ((cc & ~0xFF) != (d->ccount & ~0xFF)) {
			dir_rekey(d, m->keylen);
			d->ccount = (d->ccount + 0x100) & MPPE_CCOUNT_MASK;
		}
		d->discard = 0;
		d->ccount = cc;
		m->resyncs++;
	}
	if (flushed)
		dir_rekey(d, m->keylen);
	return MPPE_OK;
}

enum mppe_result mppe_decrypt(struct mppe *m, const uint8_t *in, size_t len,
    uint8_t *out, size_t *outlen)
{
	enum mppe_result r;
	uint16_t cc;
	int flushed;

	if (len <= MPPE_HDR_LEN || !(in[0] & MPPE_BIT_ENCRYPTED) ||
	    (in[0] & MPPE_BIT_COMPRESS))
		return MPPE_BAD;
	cc = (uint16_t)(((in[0] & 0x0F) << 8) | in[1]);
	flushed = (in[0] & MPPE_BIT_FLUSHED) != 0;
	r = m->stateful ? rx_stateful(m, cc, flushed) :
	    rx_stateless(m, cc, flushed);
	if (r != MPPE_OK)
		return r;
	RC4(&m->rx.rc4, len - MPPE_HDR_LEN, in + MPPE_HDR_LEN, out);
	*outlen = len - MPPE_HDR_LEN;
	return MPPE_OK;
}
