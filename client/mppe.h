/* MPPE (RFC 3078) with the keys of RFC 3079: one object per session
 * holding both directions' keys and RC4 tables.
 *
 * Key changes: stateless, before every packet; stateful, before each
 * "flag" packet (coherency count low octet 0xFF) and after a CCP
 * Reset-Request. Like the Linux kernel's ppp_mppe (the server our client
 * meets), a stateful packet with the FLUSHED bit means one key change at
 * both ends. A stateful receiver that sees a gap drops the packet, asks
 * for a CCP Reset-Request (MPPE_RESET) and drops everything up to the
 * next FLUSHED packet (MPPE_DROP). */
#ifndef CLIENT_MPPE_H
#define CLIENT_MPPE_H

#include <stddef.h>
#include <stdint.h>

#define MPPE_HDR_LEN      2      /* A B C D bits and 12-bit count */
#define MPPE_KEY_MAX      16
#define MPPE_MASTER_LEN   16

/* CCP option 18 supported bits (RFC 3078 section 2). */
#define MPPE_OPT_STATELESS 0x01000000u  /* H */
#define MPPE_OPT_128       0x00000040u  /* S: 128-bit */
#define MPPE_OPT_56        0x00000080u  /* M: 56-bit */
#define MPPE_OPT_40        0x00000020u  /* L: 40-bit */
#define MPPE_OPT_OBSOLETE  0x00000010u  /* D */
#define MPPE_OPT_MPPC      0x00000001u  /* C: compression */

enum mppe_result {
	MPPE_OK = 0,
	MPPE_BAD,    /* malformed: not MPPE, not encrypted, too short */
	MPPE_LATE,   /* stateless: an old or duplicated count, dropped */
	MPPE_RESET,  /* stateful: a gap; dropped, send CCP Reset-Request */
	MPPE_DROP,   /* stateful: waiting for a FLUSHED packet, dropped */
};

struct mppe;

/* RFC 3079 GetAsymmetricStartKey(): the start key of one direction, of
 * keylen (8 or 16) octets. */
void mppe_start_key(const uint8_t master[MPPE_MASTER_LEN], int is_send,
    int is_server, size_t keylen, uint8_t *out);
/* RFC 3079 GetNewKeyFromSHA(). */
void mppe_key_from_sha(const uint8_t *start, const uint8_t *session,
    size_t keylen, uint8_t *out);
/* The first session key of a direction: GetNewKeyFromSHA(start, start)
 * and, for 40 bits, the 0xD1 0x26 0x9E salt. */
void mppe_initial_key(const uint8_t *start, size_t keylen, uint8_t *out);
/* One-shot RC4 (for the RFC 3079 sample messages). */
void mppe_rc4(const uint8_t *key, size_t keylen, const uint8_t *in,
    size_t len, uint8_t *out);

/* bits 40 or 128; is_server picks which magic is "send" (the client
 * sends with RFC 3079's Magic2). Returns NULL on a bad bits value or no
 * memory. */
struct mppe *mppe_new(const uint8_t master[MPPE_MASTER_LEN], int bits,
    int stateful, int is_server);
void mppe_free(struct mppe *m);
/* Header and ciphertext of `len` plaintext octets into out (len + 2
 * octets; in and out may not overlap). Returns the length written. */
size_t mppe_encrypt(struct mppe *m, const uint8_t *in, size_t len,
    uint8_t *out);
/* The MPPE header and ciphertext (the 0x00FD packet's information
 * field); on MPPE_OK the plaintext (len - 2 octets) is in out. */
enum mppe_result mppe_decrypt(struct mppe *m, const uint8_t *in, size_t len,
    uint8_t *out, size_t *outlen);
/* The peer sent a CCP Reset-Request: change the key and set FLUSHED in
 * the next packet. */
void mppe_reset_tx(struct mppe *m);
/* Stateful resynchronisations done (a FLUSHED packet after a gap). */
uint64_t mppe_resyncs(const struct mppe *m);
size_t mppe_size(void);

#endif
