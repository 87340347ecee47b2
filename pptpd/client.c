/* Client addresses, hashed by address. */
#include <stdlib.h>
#include <sys/queue.h>

#include "pptpd/client.h"

#define CLIENTS_BUCKETS  1024           /* power of two */
#define CLIENT_TOKEN     1000           /* one setup, in milli-setups */

struct client {
	LIST_ENTRY(client) entry;
	struct in_addr addr;
	unsigned       nctrls, ncalls, nsetups;
	/* Setup budget: milli-setups at `refilled_ms`, at most rate * 1000. */
	uint64_t       tokens, refilled_ms;
	unsigned       rate;            /* of the last client_setup_allow */
};

LIST_HEAD(client_list, client);

struct clients {
	struct client_list bucket[CLIENTS_BUCKETS];
};

struct clients *
clients_new(void)
{
	struct clients *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	for (size_t i = 0; i < CLIENTS_BUCKETS; i++)
		LIST_INIT(&t->bucket[i]);
	return t;
}

void
clients_free(struct clients *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < CLIENTS_BUCKETS; i++) {
		struct client *c;
		while ((c = LIST_FIRST(&t->bucket[i])) != NULL) {
			LIST_REMOVE(c, entry);
			free(c);
		}
	}
	free(t);
}

static struct client_list *
clients_bucket(struct clients *t, struct in_addr addr)
{
	/* Fibonacci hashing: addresses of one subnet spread out. */
	uint32_t h = (uint32_t)addr.s_addr * 2654435761u;
	return &t->bucket[h >> 22];
}

static void
client_refill(struct client *c, uint64_t now_ms)
{
	uint64_t cap = (uint64_t)c->rate * CLIENT_TOKEN;
	/* rate milli-setups per ms is rate setups per second */
	if (c->tokens < cap && now_ms > c->refilled_ms)
		c->tokens += (now_ms - c->refilled_ms) * c->rate;
	c->refilled_ms = now_ms;
	if (c->tokens > cap)
		c->tokens = cap;
}

/* Held by nothing, and freeing it would not refill its budget early. */
static int
client_idle(struct client *c, uint64_t now_ms)
{
	if (c->nctrls || c->ncalls || c->nsetups)
		return 0;
	client_refill(c, now_ms);
	return c->tokens >= (uint64_t)c->rate * CLIENT_TOKEN;
}

struct client *
clients_get(struct clients *t, struct in_addr addr, uint64_t now_ms)
{
	struct client_list *b = clients_bucket(t, addr);
	struct client *c, *next, *found = NULL;

	/* Sweep this bucket's idle entries on the way: the table stays as
	 * big as the set of addresses seen in the last few seconds. */
	for (c = LIST_FIRST(b); c != NULL; c = next) {
		next = LIST_NEXT(c, entry);
		if (c->addr.s_addr == addr.s_addr)
			found = c;
		else if (client_idle(c, now_ms)) {
			LIST_REMOVE(c, entry);
			free(c);
		}
	}
	if (found != NULL)
		return found;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->addr = addr;
	c->refilled_ms = now_ms;
	c->tokens = UINT64_MAX;     /* full: clamped at the first refill */
	LIST_INSERT_HEAD(b, c, entry);
	return c;
}

unsigned client_ctrls(const struct client *c) { return c->nctrls; }
unsigned client_calls(const struct client *c) { return c->ncalls; }
unsigned client_setups(const struct client *c) { return c->nsetups; }

void client_ctrl_add(struct client *c) { c->nctrls++; }
void client_ctrl_gone(struct client *c) { c->nctrls--; }
void client_call_add(struct client *c) { c->ncalls++; }
void client_call_gone(struct client *c) { c->ncalls--; }
void client_setup_add(struct client *c) { c->nsetups++; }
void client_setup_done(struct client *c) { c->nsetups--; }

int
client_setup_allow(struct client *c, uint64_t now_ms, unsigned rate)
{
	c->rate = rate;
	client_refill(c, now_ms);
	if (c->tokens < CLIENT_TOKEN)
		return 0;
	c->tokens -= CLIENT_TOKEN;
	return 1;
}
