/* The client side of PPP authentication: MS-CHAPv2 (RFC 2759), CHAP-MD5
 * (RFC 1994) and PAP (RFC 1334). It answers the server's challenges,
 * checks MS-CHAPv2's authenticator response and keeps the MPPE master
 * key of RFC 3079. */
#ifndef CLIENT_AUTH_H
#define CLIENT_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "client/mschap.h"

#define AUTH_PAP_RESTART_MS 3000
#define AUTH_PAP_MAX_TRIES  10

enum auth_result {
	AUTH_PENDING,
	AUTH_OK,
	AUTH_FAIL,      /* Failure / Nak from the server, or no answer */
	AUTH_BAD,       /* MS-CHAPv2 authenticator response wrong */
};

typedef void auth_send_fn(void *owner, uint16_t proto, const uint8_t *pkt,
    size_t len);
typedef void auth_random_fn(uint8_t *buf, size_t len);

struct auth {
	const char *user, *password;
	auth_send_fn *send;
	auth_random_fn *random;
	void *owner;
	uint64_t deadline;      /* PAP retransmission */
	uint16_t proto;         /* PPP_CHAP or PPP_PAP */
	uint8_t alg;
	uint8_t id;             /* of the challenge answered / our request */
	uint8_t tries;
	uint8_t answered;       /* a Response (or PAP request) went out */
	uint8_t result;         /* enum auth_result */
	uint8_t auth_chal[MSCHAP_CHALLENGE_LEN];
	uint8_t peer_chal[MSCHAP_CHALLENGE_LEN];
	uint8_t nt_resp[MSCHAP_NT_RESPONSE_LEN];
};

void auth_init(struct auth *a, const char *user, const char *password,
    auth_send_fn *send, auth_random_fn *random, void *owner);
/* LCP agreed on proto/alg: PAP sends its request now, CHAP waits for
 * the challenge. */
void auth_start(struct auth *a, uint16_t proto, uint8_t alg, uint64_t now);
/* A CHAP or PAP packet (code onwards). Returns the result so far; -1 for
 * a malformed packet (dropped). */
int auth_input(struct auth *a, uint16_t proto, const uint8_t *pkt,
    size_t len, uint64_t now);
enum auth_result auth_timer(struct auth *a, uint64_t now);
/* RFC 3079 master key; 0, or -1 unless MS-CHAPv2 succeeded. */
int auth_master_key(const struct auth *a, uint8_t out[MSCHAP_MASTER_KEY_LEN]);

#endif
