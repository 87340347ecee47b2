/* fuzz_journal: what a new worker reads from the journal the old one left
 * (proto/journal.h), which that worker may have been made to write
 * anything into: journal_rec picks the entry's current record, whatever
 * its index says, and journal_rec_check accepts only a record whose every
 * string ends inside its field and is printable, of its own Call ID.
 * Input: u16 Call ID (its low byte used), then the bytes of its entry
 * (short: zero-filled). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "proto/journal.h"

static void *map;

static void
fz_printable(const char *s, size_t len)
{
	size_t n = strnlen(s, len);
	if (n == len)
		abort();   /* accepted without its NUL */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why = NULL;

	if (map == NULL) {
		/* the whole journal, as a worker maps it: only the pages of
		 * the entries written are ever touched */
		map = mmap(NULL, journal_size(), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (map == MAP_FAILED)
			abort();
		journal_init(map);
	}
	if (size < 2)
		return 0;
	/* The first 256 Call IDs: an entry's place is plain arithmetic, and
	 * every page touched stays in the sanitizers' view (the whole
	 * journal's would pass the run's memory limit). */
	uint16_t id = (uint16_t)(data[0] << 8 | data[1]) & 0xff;
	struct journal_entry *e = (struct journal_entry *)
	    ((char *)map + sizeof(struct journal_head)) + id;
	size_t n = size - 2 < sizeof(*e) ? size - 2 : sizeof(*e);
	memset(e, 0, sizeof(*e));
	memcpy(e, data + 2, n);
	const struct journal_rec *r = journal_rec(map, id);
	if (r != &e->rec[0] && r != &e->rec[1])
		abort();   /* outside its entry */
	if (journal_rec_check(r, id, &why) == 0) {
		if (r->state != JOURNAL_LIVE || r->call_id != id)
			abort();
		fz_printable(r->user, sizeof(r->user));
		fz_printable(r->acct_session_id, sizeof(r->acct_session_id));
		fz_printable(r->mppe, sizeof(r->mppe));
		fz_printable(r->ifname, sizeof(r->ifname));
		fz_printable(r->rate_src, sizeof(r->rate_src));
	} else if (why == NULL) {
		abort();   /* refused without a reason */
	}
	memset(e, 0, sizeof(*e));
	return 0;
}
