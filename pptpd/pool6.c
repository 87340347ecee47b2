/* IPv6 prefix pool; see pool6.h. The pool is the slice of /64s between
 * the configured prefix and its end, numbered 0..n-1 by bits 48..63 of
 * the address; a free list in the order the /64s were freed, so that a
 * reconnecting client rarely gets a prefix whose routes or neighbours
 * are still around elsewhere. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pptpd/pool6.h"
#include "pptpd/prefix6.h"

#define POOL6_FREE_END  UINT32_MAX

struct pool6 {
	struct in6_addr base;    /* the configured prefix, host bits zero */
	uint32_t n;              /* /64s in the pool */
	uint32_t nfree;
	uint32_t head, tail;     /* free list, oldest freed first */
	uint32_t *next;          /* per /64: next free, or POOL6_FREE_END */
	unsigned char *taken;    /* per /64: 1 when handed out */
};

/* The /64's number inside the pool: bits 48..63 (the 16 bits below a
 * /48), as far as the pool's length leaves them free. */
static int
pool6_index(const struct pool6 *p, const struct in6_addr *a, uint32_t *idx)
{
	if (memcmp(a->s6_addr, p->base.s6_addr, 6) != 0)
		return -1;
	for (int i = 8; i < 16; i++)
		if (a->s6_addr[i] != 0)
			return -1;   /* not a /64's network address */
	uint32_t v = (uint32_t)a->s6_addr[6] << 8 | a->s6_addr[7];
	uint32_t b = (uint32_t)p->base.s6_addr[6] << 8 | p->base.s6_addr[7];
	if (v < b || v - b >= p->n)
		return -1;
	*idx = v - b;
	return 0;
}

static void
pool6_addr(const struct pool6 *p, uint32_t idx, struct in6_addr *out)
{
	uint32_t v = ((uint32_t)p->base.s6_addr[6] << 8 | p->base.s6_addr[7]) + idx;
	*out = p->base;
	out->s6_addr[6] = (uint8_t)(v >> 8);
	out->s6_addr[7] = (uint8_t)v;
}

static void
pool6_push(struct pool6 *p, uint32_t idx)
{
	p->next[idx] = POOL6_FREE_END;
	if (p->nfree == 0)
		p->head = idx;
	else
		p->next[p->tail] = idx;
	p->tail = idx;
	p->nfree++;
}

int
pool6_session_prefix(const char *text, struct in6_addr *out, char *err,
    size_t errlen)
{
	unsigned len;

	if (prefix6_parse(text, 1, 128, out, &len, err, errlen) < 0)
		return -1;
	if (len != POOL6_SESSION_LEN) {
		snprintf(err, errlen, "length /%u: a session's prefix is a /%d",
		    len, POOL6_SESSION_LEN);
		return -1;
	}
	return 0;
}

struct pool6 *
pool6_new(const char *spec, char *err, size_t errlen)
{
	struct in6_addr base;
	unsigned len;
	struct pool6 *p;

	if (prefix6_parse(spec, POOL6_LEN_MIN, POOL6_SESSION_LEN, &base, &len,
	    err, errlen) < 0)
		return NULL;
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->base = base;
	p->n = 1u << (POOL6_SESSION_LEN - len);
	p->next = calloc(p->n, sizeof(*p->next));
	p->taken = calloc(p->n, 1);
	if (p->next == NULL || p->taken == NULL) {
		pool6_free(p);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (uint32_t i = 0; i < p->n; i++)
		pool6_push(p, i);
	return p;
}

void
pool6_free(struct pool6 *p)
{
	if (p == NULL)
		return;
	free(p->next);
	free(p->taken);
	free(p);
}

int
pool6_alloc(struct pool6 *p, struct in6_addr *out)
{
	if (p->nfree == 0)
		return -1;
	uint32_t idx = p->head;
	p->head = p->next[idx];
	p->nfree--;
	p->taken[idx] = 1;
	pool6_addr(p, idx, out);
	return 0;
}

/* Unlink idx from the free list (a take out of order). */
static void
pool6_unlink(struct pool6 *p, uint32_t idx)
{
	uint32_t prev = POOL6_FREE_END, cur = p->head;

	for (uint32_t k = 0; k < p->nfree; k++) {
		if (cur == idx) {
			if (prev == POOL6_FREE_END)
				p->head = p->next[cur];
			else
				p->next[prev] = p->next[cur];
			if (p->tail == cur)
				p->tail = prev;
			p->nfree--;
			return;
		}
		prev = cur;
		cur = p->next[cur];
	}
}

int
pool6_take(struct pool6 *p, const struct in6_addr *prefix)
{
	uint32_t idx;

	if (pool6_index(p, prefix, &idx) < 0 || p->taken[idx])
		return -1;
	pool6_unlink(p, idx);
	p->taken[idx] = 1;
	return 0;
}

int
pool6_release(struct pool6 *p, const struct in6_addr *prefix)
{
	uint32_t idx;

	if (pool6_index(p, prefix, &idx) < 0 || !p->taken[idx])
		return -1;
	p->taken[idx] = 0;
	pool6_push(p, idx);
	return 0;
}

size_t
pool6_size(const struct pool6 *p)
{
	return p->n;
}

size_t
pool6_available(const struct pool6 *p)
{
	return p->nfree;
}
