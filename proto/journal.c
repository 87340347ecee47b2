/* The journal's layout and checks: see journal.h. */
#include <string.h>

#include "proto/journal.h"

_Static_assert(sizeof(struct journal_head) % 8 == 0,
    "the entries that follow the head are aligned");
_Static_assert(sizeof(struct journal_rec) % 8 == 0,
    "records are aligned in an entry");

size_t
journal_size(void)
{
	return sizeof(struct journal_head) +
	    (size_t)JOURNAL_CALLS * sizeof(struct journal_entry);
}

void
journal_init(void *map)
{
	struct journal_head *h = map;
	h->magic = JOURNAL_MAGIC;
	h->version = JOURNAL_VERSION;
	h->rec_size = sizeof(struct journal_rec);
	h->calls = JOURNAL_CALLS;
	h->reserved = 0;
}

int
journal_check(const void *map, size_t len, const char **why)
{
	const struct journal_head *h = map;

	if (map == NULL || len < journal_size())
		*why = "the journal is shorter than its layout";
	else if (h->magic != JOURNAL_MAGIC)
		*why = "not a journal (magic)";
	else if (h->version != JOURNAL_VERSION)
		*why = "a journal of another version";
	else if (h->rec_size != sizeof(struct journal_rec) ||
	    h->calls != JOURNAL_CALLS)
		*why = "a journal of another layout";
	else
		return 0;
	return -1;
}

static struct journal_entry *
journal_entry(void *map, uint16_t id)
{
	struct journal_entry *e = (struct journal_entry *)
	    ((char *)map + sizeof(struct journal_head));
	return &e[id];
}

const struct journal_rec *
journal_rec(const void *map, uint16_t id)
{
	const struct journal_entry *e = journal_entry((void *)map, id);
	return &e->rec[e->current == 1];
}

void
journal_rec_set(void *map, const struct journal_rec *r)
{
	struct journal_entry *e = journal_entry(map, r->call_id);
	uint32_t next = e->current == 1 ? 0 : 1;

	e->rec[next] = *r;
	/* The record is whole before it is current: a worker killed
	 * between the two leaves the one before (journal.h). */
	__atomic_store_n(&e->current, next, __ATOMIC_RELEASE);
}

uint32_t *
journal_tx_seq(void *map, uint16_t id)
{
	return &journal_entry(map, id)->tx_seq;
}

void
journal_rec_clear(void *map, uint16_t id)
{
	struct journal_rec r;
	memset(&r, 0, sizeof(r));
	r.state = JOURNAL_FREE;
	r.call_id = id;
	journal_rec_set(map, &r);
}

/* A NUL within `len` bytes, and only printable ASCII before it; for an
 * interface name also no '/' and no blank (what the kernel refuses). */
static int
journal_str_ok(const char *s, size_t len, int ifname)
{
	size_t n = strnlen(s, len);
	if (n == len)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x20 || ch > 0x7e)
			return 0;
		if (ifname && (ch == '/' || ch == ' ' || ch == ':'))
			return 0;
	}
	return 1;
}

int
journal_rec_check(const struct journal_rec *r, uint16_t id, const char **why)
{
	if (r->state != JOURNAL_LIVE)
		*why = "no live record";
	else if (r->call_id != id)
		*why = "the record is another call's";
	else if (r->flags & ~(uint32_t)JOURNAL_FLAGS)
		*why = "a flag not defined";
	else if (r->pid == 0 || r->pid > (uint32_t)INT32_MAX)
		*why = "no pppd in the record";
	else if (!journal_str_ok(r->user, sizeof(r->user), 0) ||
	    !journal_str_ok(r->acct_session_id, sizeof(r->acct_session_id), 0) ||
	    !journal_str_ok(r->mppe, sizeof(r->mppe), 0) ||
	    !journal_str_ok(r->rate_src, sizeof(r->rate_src), 0))
		*why = "a name not ended, or not printable";
	else if (!journal_str_ok(r->tunnel, sizeof(r->tunnel), 0))
		*why = "a tunnel address not ended, or not printable";
	else if (!journal_str_ok(r->ifname, sizeof(r->ifname), 1) ||
	    !journal_str_ok(r->ifname6, sizeof(r->ifname6), 1))
		*why = "an interface name not ended, or not one";
	else
		return 0;
	return -1;
}
