/* Walking the options of a Configure packet (RFC 1661 section 6: Type,
 * Length >= 2, data), shared by the protocols on client/fsm.c. */
#ifndef CLIENT_OPT_H
#define CLIENT_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define OPT_HDR_LEN 2

/* 0 when every option of p[0..len) is whole, -1 otherwise. */
static inline int opt_valid(const uint8_t *p, size_t len)
{
	while (len) {
		if (len < OPT_HDR_LEN || p[1] < OPT_HDR_LEN || p[1] > len)
			return -1;
		len -= p[1];
		p += p[1];
	}
	return 0;
}

/* Append an option to out (bounded by cap); returns the new length. */
static inline size_t opt_put(uint8_t *out, size_t at, size_t cap,
    uint8_t type, const uint8_t *data, size_t dlen)
{
	if (at + OPT_HDR_LEN + dlen > cap || dlen > 253)
		return at;
	out[at] = type;
	out[at + 1] = (uint8_t)(OPT_HDR_LEN + dlen);
	if (dlen)
		memcpy(out + at + OPT_HDR_LEN, data, dlen);
	return at + OPT_HDR_LEN + dlen;
}

/* The answer being built for a peer's request: rejects win over naks. */
struct opt_reply {
	uint8_t *out;
	size_t cap, nak_len, rej_len;
	uint8_t nak[256], rej[256];
};

static inline void opt_reply_nak(struct opt_reply *r, uint8_t type,
    const uint8_t *data, size_t dlen)
{
	r->nak_len = opt_put(r->nak, r->nak_len, sizeof(r->nak), type, data,
	    dlen);
}

static inline void opt_reply_rej(struct opt_reply *r, const uint8_t *opt)
{
	r->rej_len = opt_put(r->rej, r->rej_len, sizeof(r->rej), opt[0],
	    opt + OPT_HDR_LEN, opt[1] - OPT_HDR_LEN);
}

/* FSM_CONFREJ/NAK/ACK (2/3/4 as in fsm.h) with the options in out. */
static inline int opt_reply_end(struct opt_reply *r, size_t *outlen)
{
	const uint8_t *src = r->rej_len ? r->rej : r->nak;
	size_t n = r->rej_len ? r->rej_len : r->nak_len;

	if (n > r->cap)
		n = r->cap;
	memcpy(r->out, src, n);
	*outlen = n;
	return r->rej_len ? 4 : r->nak_len ? 3 : 2;
}

#endif
