/* Helpers shared by the fuzz harnesses.
 *
 * Stream harnesses cut their input into reads at points derived from a small
 * seed at the start of the input (a xorshift generator), so that mutating
 * the payload does not move the cut points and mutating the seed explores
 * other cuttings of the same payload. */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct fz_rng {
	uint32_t s;
};

static inline void
fz_rng_init(struct fz_rng *r, uint32_t seed)
{
	r->s = seed * 2654435761u + 0x9e3779b9u;
	if (r->s == 0)
		r->s = 1;
}

static inline uint32_t
fz_rng_next(struct fz_rng *r)
{
	uint32_t x = r->s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	r->s = x;
	return x;
}

/* Size of the next read: mostly tiny (one byte at a time, the header cut in
 * two), sometimes a whole message or more. Never 0. */
static inline size_t
fz_chunk(struct fz_rng *r, size_t left)
{
	uint32_t v = fz_rng_next(r);
	size_t n;
	switch (v & 3) {
	case 0:  n = 1; break;
	case 1:  n = 1 + (v >> 8) % 16; break;
	case 2:  n = 1 + (v >> 8) % 256; break;
	default: n = 1 + (v >> 8) % 1024; break;
	}
	return n < left ? n : left;
}

/* An exact-size heap copy, so that AddressSanitizer sees any read past the
 * bytes actually available. */
static inline uint8_t *
fz_dup(const uint8_t *p, size_t n)
{
	uint8_t *d = malloc(n ? n : 1);
	if (d == NULL)
		abort();
	if (n)
		memcpy(d, p, n);
	return d;
}

#endif
