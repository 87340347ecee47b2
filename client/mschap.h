/* MS-CHAPv2 (RFC 2759) as the client computes it: the NT-Response to a
 * server's challenge, and the check of the server's authenticator
 * response ("S=<40 hex digits>"), plus the master key RFC 3079 derives
 * the MPPE keys from. Pure functions: no state, no I/O. */
#ifndef CLIENT_MSCHAP_H
#define CLIENT_MSCHAP_H

#include <stddef.h>
#include <stdint.h>

#define MSCHAP_CHALLENGE_LEN   16   /* authenticator and peer challenge */
#define MSCHAP_NT_RESPONSE_LEN 24
#define MSCHAP_HASH_LEN        16   /* MD4 password hash */
#define MSCHAP_CHASH_LEN       8    /* ChallengeHash() */
#define MSCHAP_AUTHRESP_LEN    42   /* "S=" and 40 hex digits */
#define MSCHAP_MASTER_KEY_LEN  16
/* The Response value of a CHAP Response packet (RFC 2759 section 4):
 * peer challenge, 8 reserved zero octets, NT-Response, flags. */
#define MSCHAP_RESPONSE_LEN    49

/* The user name the hashes use: RFC 2759 takes the name without a
 * leading "DOMAIN\". */
const char *mschap_user_name(const char *user);

void mschap_nt_password_hash(const char *password,
    uint8_t hash[MSCHAP_HASH_LEN]);
void mschap_challenge_hash(const uint8_t peer[MSCHAP_CHALLENGE_LEN],
    const uint8_t auth[MSCHAP_CHALLENGE_LEN], const char *user,
    uint8_t out[MSCHAP_CHASH_LEN]);
void mschap_nt_response(const uint8_t auth[MSCHAP_CHALLENGE_LEN],
    const uint8_t peer[MSCHAP_CHALLENGE_LEN], const char *user,
    const char *password, uint8_t resp[MSCHAP_NT_RESPONSE_LEN]);
/* The 42-character "S=..." string (NUL-terminated in out[42]). */
void mschap_auth_response(const char *password,
    const uint8_t nt_resp[MSCHAP_NT_RESPONSE_LEN],
    const uint8_t peer[MSCHAP_CHALLENGE_LEN],
    const uint8_t auth[MSCHAP_CHALLENGE_LEN], const char *user,
    char out[MSCHAP_AUTHRESP_LEN + 1]);
/* 0 when the Success message `msg` (not NUL-terminated) starts with the
 * expected "S=..." (hex digits in either case), -1 otherwise. */
int mschap_auth_check(const char *password,
    const uint8_t nt_resp[MSCHAP_NT_RESPONSE_LEN],
    const uint8_t peer[MSCHAP_CHALLENGE_LEN],
    const uint8_t auth[MSCHAP_CHALLENGE_LEN], const char *user,
    const uint8_t *msg, size_t len);
/* RFC 3079 GetMasterKey(). */
void mschap_master_key(const char *password,
    const uint8_t nt_resp[MSCHAP_NT_RESPONSE_LEN],
    uint8_t master[MSCHAP_MASTER_KEY_LEN]);

#endif
