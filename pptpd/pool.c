/* Address pool: parsing of Poptop's localip/remoteip specs, and a FIFO of
 * free address pairs.
 *
 * Addresses are kept in host order internally, so ranges are plain integer
 * arithmetic; they are converted at the API boundary only. */
#include "pptpd/pool.h"
#include "common/strclean.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest piece of a bad item quoted in an error. */
#define POOL_QUOTE_MAX 40

struct slot {
	uint32_t addr;
	uint32_t idx;
};

struct pool {
	size_t         n;        /* pairs */
	uint32_t      *local;    /* n entries, or 1 when shared */
	int            shared;   /* one local address for every call */
	uint32_t      *remote;   /* n entries, in the order written */
	struct slot   *by_addr;  /* remote sorted by address, for release */
	uint32_t      *fifo;     /* ring of free indexes, oldest first */
	size_t         head, nfree;
	unsigned char *busy;
};

/* One item of a spec: count addresses, base + i * step. */
struct item {
	uint32_t base, step;
	uint64_t count;
};

/* Items are quoted in errors; they come from a config file or a command
 * line, so keep the quote short and printable. */
static void
quote(char *out, size_t outlen, const char *s, const char *e)
{
	str_clean(out, outlen, s, (size_t)(e - s), POOL_QUOTE_MAX);
}

/* Up to `max` dot-separated decimal numbers of 1..3 digits filling [s, e)
 * exactly. Values up to 999 pass here so the caller can tell "range end
 * over 255" from a malformed octet. Returns the count, or 0 if malformed. */
static int
octets(const char *s, const char *e, unsigned *out, int max)
{
	int n = 0;

	while (n < max) {
		unsigned v = 0;
		int digits = 0;

		while (s < e && *s >= '0' && *s <= '9' && digits < 4) {
			v = v * 10 + (unsigned)(*s++ - '0');
			digits++;
		}
		if (digits == 0 || digits > 3)
			return 0;
		out[n++] = v;
		if (s == e)
			return n;
		if (*s++ != '.')
			return 0;
	}
	return 0;
}

static uint32_t
join(const unsigned *o)
{
	return (uint32_t)o[0] << 24 | (uint32_t)o[1] << 16 |
	    (uint32_t)o[2] << 8 | (uint32_t)o[3];
}

static int
all_octets_ok(const unsigned *o, int n)
{
	for (int i = 0; i < n; i++)
		if (o[i] > 255)
			return 0;
	return 1;
}

/* "a.b.c.d-e.f.g.h": every address between two full addresses. */
static const char *
item_span(const unsigned *lo, const unsigned *hi, struct item *it)
{
	if (!all_octets_ok(lo, 4) || !all_octets_ok(hi, 4))
		return "bad address";
	if (join(hi) < join(lo))
		return "reversed range";
	it->base = join(lo);
	it->step = 1;
	it->count = (uint64_t)join(hi) - join(lo) + 1;
	return NULL;
}

/* Poptop's form: `left` ends with the range start of octet nl-1, `right`
 * starts with its end and carries the remaining octets. */
static const char *
item_octet_range(const unsigned *left, int nl, const unsigned *right,
    struct item *it)
{
	unsigned o[4];
	int k = nl - 1;

	memcpy(o, left, (size_t)nl * sizeof(*o));
	memcpy(o + nl, right + 1, (size_t)(3 - k) * sizeof(*o));
	if (!all_octets_ok(o, 4))
		return "bad address";
	if (right[0] > 255)
		return "range end over 255";
	if (right[0] < o[k])
		return "reversed range";
	it->base = join(o);
	it->step = 1u << (8 * (3 - k));
	it->count = right[0] - o[k] + 1;
	return NULL;
}

static const char *
item_parse(const char *s, const char *e, struct item *it)
{
	const char *dash = memchr(s, '-', (size_t)(e - s));
	unsigned left[4], right[4];
	int nl, nr;

	if (s == e)
		return "empty item";
	if (dash == NULL) {
		if (octets(s, e, left, 4) != 4 || !all_octets_ok(left, 4))
			return "bad address";
		it->base = join(left);
		it->step = 1;
		it->count = 1;
		return NULL;
	}
	if (memchr(dash + 1, '-', (size_t)(e - dash - 1)) != NULL)
		return "more than one '-'";
	nl = octets(s, dash, left, 4);
	nr = octets(dash + 1, e, right, 4);
	if (nl == 4 && nr == 4)
		return item_span(left, right, it);
	if (nl == 0 || nr == 0 || nl + nr != 5)
		return "bad address";
	return item_octet_range(left, nl, right, it);
}

#define STR_(x) #x
#define STR(x) STR_(x)

/* Walk the items of `spec`; with `out`, also write the addresses. The cap
 * is checked before anything is expanded, so a hostile "0-255" in three
 * octets costs nothing. Returns the count, or -1 with err set. */
static long
spec_walk(const char *spec, uint32_t *out, char *err, size_t errlen)
{
	const char *s = spec, *e = spec, *why = NULL;
	uint64_t total = 0;
	struct item it;
	char q[48];

	if (spec == NULL || *spec == '\0')
		why = "empty address list";
	while (why == NULL) {
		e = strchr(s, ',');
		if (e == NULL)
			e = s + strlen(s);
		if ((why = item_parse(s, e, &it)) != NULL)
			break;
		if (it.base == 0)
			why = "0.0.0.0 is not a usable address";
		else if (total + it.count > POOL_MAX)
			why = "more than " STR(POOL_MAX) " addresses";
		if (why != NULL)
			break;
		for (uint64_t i = 0; out != NULL && i < it.count; i++)
			out[total + i] = it.base + (uint32_t)i * it.step;
		total += it.count;
		if (*e == '\0')
			return (long)total;
		s = e + 1;
	}
	if (s == e) {
		/* An empty item: show the whole list, the stray comma is in it. */
		s = spec ? spec : "";
		e = s + strlen(s);
	}
	quote(q, sizeof(q), s, e);
	if (q[0] != '\0')
		snprintf(err, errlen, "%s in '%s'", why, q);
	else
		snprintf(err, errlen, "%s", why);
	return -1;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static void
addr_str(uint32_t a, char *buf, size_t len)
{
	struct in_addr in = { .s_addr = htonl(a) };

	inet_ntop(AF_INET, &in, buf, (socklen_t)len);
}

/* Reports the lowest duplicate, so the message does not depend on order. */
static int
find_duplicate(const uint32_t *list, size_t n, char *err, size_t errlen)
{
	uint32_t *sorted = malloc(n * sizeof(*sorted));
	int rc = 0;

	if (sorted == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(sorted, list, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u32);
	for (size_t i = 1; i < n && rc == 0; i++) {
		if (sorted[i] == sorted[i - 1]) {
			char a[INET_ADDRSTRLEN];

			addr_str(sorted[i], a, sizeof(a));
			snprintf(err, errlen, "duplicate address %s", a);
			rc = -1;
		}
	}
	free(sorted);
	return rc;
}

/* Parse, expand and check one spec; returns a malloc'd list. */
static uint32_t *
spec_load(const char *spec, size_t *n, char *err, size_t errlen)
{
	long count = spec_walk(spec, NULL, err, errlen);
	uint32_t *list;

	if (count < 0)
		return NULL;
	list = malloc((size_t)count * sizeof(*list));
	if (list == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	spec_walk(spec, list, err, errlen);
	if (find_duplicate(list, (size_t)count, err, errlen) < 0) {
		free(list);
		return NULL;
	}
	*n = (size_t)count;
	return list;
}

long
pool_spec_count(const char *spec, char *err, size_t errlen)
{
	size_t n = 0;
	uint32_t *list = spec_load(spec, &n, err, errlen);

	if (list == NULL)
		return -1;
	free(list);
	return (long)n;
}

static int
cmp_slot(const void *a, const void *b)
{
	return cmp_u32(&((const struct slot *)a)->addr,
	    &((const struct slot *)b)->addr);
}

static struct slot *
slot_find(const struct pool *p, uint32_t addr)
{
	struct slot key = { .addr = addr };

	return bsearch(&key, p->by_addr, p->n, sizeof(key), cmp_slot);
}

/* A remote address that is also a local one would collide in routing. */
static int
find_overlap(const struct pool *p, const uint32_t *local, size_t nlocal,
    char *err, size_t errlen)
{
	for (size_t i = 0; i < nlocal; i++) {
		if (slot_find(p, local[i]) != NULL) {
			char a[INET_ADDRSTRLEN];

			addr_str(local[i], a, sizeof(a));
			snprintf(err, errlen,
			    "address %s is in both localip and remoteip", a);
			return -1;
		}
	}
	return 0;
}

static int
pool_index(struct pool *p)
{
	p->by_addr = malloc(p->n * sizeof(*p->by_addr));
	p->fifo = malloc(p->n * sizeof(*p->fifo));
	p->busy = calloc(p->n, 1);
	if (p->by_addr == NULL || p->fifo == NULL || p->busy == NULL)
		return -1;
	for (size_t i = 0; i < p->n; i++) {
		p->by_addr[i].addr = p->remote[i];
		p->by_addr[i].idx = (uint32_t)i;
		p->fifo[i] = (uint32_t)i;
	}
	qsort(p->by_addr, p->n, sizeof(*p->by_addr), cmp_slot);
	p->head = 0;
	p->nfree = p->n;
	return 0;
}

/* The local side: none (0.0.0.0, pppd chooses), one shared address, or one
 * per remote. Takes ownership of `local`. */
static int
pool_set_local(struct pool *p, uint32_t *local, size_t nlocal, char *err,
    size_t errlen)
{
	if (local == NULL) {
		p->local = calloc(1, sizeof(*p->local));
		p->shared = 1;
		if (p->local == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		return 0;
	}
	p->local = local;
	p->shared = nlocal == 1;
	if (nlocal > 1 && nlocal < p->n) {
		snprintf(err, errlen, "localip has %zu addresses but remoteip has "
		    "%zu: give a single localip, or at least one per remoteip",
		    nlocal, p->n);
		return -1;
	}
	/* Only the local addresses that will be used can collide. */
	return find_overlap(p, local, p->shared ? 1 : p->n, err, errlen);
}

struct pool *
pool_new(const char *localip, const char *remoteip, char *err, size_t errlen)
{
	struct pool *p = calloc(1, sizeof(*p));
	uint32_t *local = NULL;
	size_t nlocal = 0;
	char why[192];

	if (p == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (remoteip == NULL) {
		snprintf(err, errlen, "remoteip: not set");
		goto fail;
	}
	p->remote = spec_load(remoteip, &p->n, why, sizeof(why));
	if (p->remote == NULL) {
		snprintf(err, errlen, "remoteip: %s", why);
		goto fail;
	}
	if (localip != NULL &&
	    (local = spec_load(localip, &nlocal, why, sizeof(why))) == NULL) {
		snprintf(err, errlen, "localip: %s", why);
		goto fail;
	}
	if (pool_index(p) < 0) {
		free(local);
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (pool_set_local(p, local, nlocal, err, errlen) < 0)
		goto fail;
	return p;
fail:
	pool_free(p);
	return NULL;
}

void
pool_free(struct pool *p)
{
	if (p == NULL)
		return;
	free(p->local);
	free(p->remote);
	free(p->by_addr);
	free(p->fifo);
	free(p->busy);
	free(p);
}

int
pool_alloc(struct pool *p, struct in_addr *local, struct in_addr *remote)
{
	uint32_t i;

	if (p == NULL || p->nfree == 0)
		return -1;
	i = p->fifo[p->head];
	p->head = (p->head + 1) % p->n;
	p->nfree--;
	p->busy[i] = 1;
	local->s_addr = htonl(p->shared ? p->local[0] : p->local[i]);
	remote->s_addr = htonl(p->remote[i]);
	return 0;
}

/* The free ring holds each free index once: remove `idx` from it, keeping
 * the order of the others. */
static void
fifo_remove(struct pool *p, uint32_t idx)
{
	size_t k = 0;

	while (k < p->nfree && p->fifo[(p->head + k) % p->n] != idx)
		k++;
	for (; k + 1 < p->nfree; k++)
		p->fifo[(p->head + k) % p->n] = p->fifo[(p->head + k + 1) % p->n];
	p->nfree--;
}

int
pool_take(struct pool *p, struct in_addr remote)
{
	const struct slot *s;

	if (p == NULL)
		return -1;
	s = slot_find(p, ntohl(remote.s_addr));
	if (s == NULL || p->busy[s->idx])
		return -1;
	fifo_remove(p, s->idx);
	p->busy[s->idx] = 1;
	return 0;
}

int
pool_local(const struct pool *p, struct in_addr remote, struct in_addr *local)
{
	const struct slot *s;

	if (p == NULL || (s = slot_find(p, ntohl(remote.s_addr))) == NULL)
		return -1;
	local->s_addr = htonl(p->shared ? p->local[0] : p->local[s->idx]);
	return 0;
}

int
pool_release(struct pool *p, struct in_addr remote)
{
	const struct slot *s;

	if (p == NULL)
		return -1;
	s = slot_find(p, ntohl(remote.s_addr));
	if (s == NULL || !p->busy[s->idx])
		return -1;
	p->busy[s->idx] = 0;
	p->fifo[(p->head + p->nfree) % p->n] = s->idx;
	p->nfree++;
	return 0;
}

size_t
pool_size(const struct pool *p)
{
	return p == NULL ? 0 : p->n;
}

size_t
pool_available(const struct pool *p)
{
	return p == NULL ? 0 : p->nfree;
}
