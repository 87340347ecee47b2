/* Address pool: Poptop's localip/remoteip, ranges and lists such as
 * "198.19.0.10-40,198.19.1.5". A single localip is shared by every call;
 * otherwise local and remote addresses are handed out in pairs.
 *
 * Spec syntax: items separated by commas, no spaces, none empty. An item is
 *   a.b.c.d            one address (decimal octets 0..255)
 *   a.b.c.d-e          Poptop's range in the last octet: d..e
 *   a.b.c-e.d          Poptop's range in any one octet, here the third:
 *                      a.b.c.d, a.b.(c+1).d, ... a.b.e.d
 *   a.b.c.d-e.f.g.h    (our extension) every address from the first to the
 *                      second, across octet boundaries
 * At most one '-' per item. Addresses keep the order written, so the first
 * call gets the first address, as with Poptop. 0.0.0.0 is refused (it means
 * "no address" to the daemon). A reversed range, a range end over 255, a
 * duplicate inside one list or between the two lists, and more than
 * POOL_MAX addresses in one list are errors.
 *
 * localip may be NULL: then every call's local address is 0.0.0.0, meaning
 * "let pppd choose" (Poptop's proxyarp setup leaves localip unset). When
 * localip has more addresses than remoteip, the extra ones are unused. */
#ifndef PPTPD_POOL_H
#define PPTPD_POOL_H

#include <netinet/in.h>
#include <stddef.h>

#define POOL_MAX 65535      /* addresses in one list */

struct pool;

/* Check one spec alone. Returns the number of addresses it holds, or -1
 * with `err` set ("reason", without naming the key). Lets a caller blame
 * the right line before pool_new() looks at the pair. */
long   pool_spec_count(const char *spec, char *err, size_t errlen);

/* Parse both specs. Returns NULL with `err` set ("localip: reason",
 * "remoteip: reason", or a reason about the pair) on a malformed spec, an
 * empty or missing remoteip, or a localip list shorter than remoteip when it
 * is not a single address. Duplicates are an error. */
struct pool *pool_new(const char *localip, const char *remoteip,
    char *err, size_t errlen);
void   pool_free(struct pool *p);
/* Take a free pair; -1 when exhausted. Allocation hands out the address
 * freed longest ago, so a reconnecting client rarely gets a stale route. */
int    pool_alloc(struct pool *p, struct in_addr *local, struct in_addr *remote);
/* Mark `remote` taken, as if allocated: a reload's new pool learns the
 * addresses live calls hold. -1 when the pool does not hold it (the call
 * keeps it as a retired address) or it is already taken. */
int    pool_take(struct pool *p, struct in_addr remote);
/* The local address paired with `remote` (what pool_alloc hands out with
 * it; INADDR_ANY without localip). -1 when the pool does not hold it. */
int    pool_local(const struct pool *p, struct in_addr remote,
    struct in_addr *local);
/* Return `remote` to the pool; -1, changing nothing, if it was not
 * allocated, or is not in this pool at all (an address retired by a
 * reload: it is simply never handed out again). */
int    pool_release(struct pool *p, struct in_addr remote);
size_t pool_size(const struct pool *p);
size_t pool_available(const struct pool *p);

#endif
