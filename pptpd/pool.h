/* Address pool: Poptop's localip/remoteip, ranges and lists such as
 * "198.19.0.10-40,198.19.1.5". A single localip is shared by every call;
 * otherwise local and remote addresses are handed out in pairs. */
#ifndef PPTPD_POOL_H
#define PPTPD_POOL_H

#include <netinet/in.h>
#include <stddef.h>

struct pool;

/* Parse both specs. Returns NULL with `err` set ("reason") on a malformed
 * spec, an empty pool, or a localip list shorter than remoteip when it is not
 * a single address. Duplicates are an error. */
struct pool *pool_new(const char *localip, const char *remoteip,
    char *err, size_t errlen);
void   pool_free(struct pool *p);
/* Take a free pair; -1 when exhausted. Allocation hands out the address
 * freed longest ago, so a reconnecting client rarely gets a stale route. */
int    pool_alloc(struct pool *p, struct in_addr *local, struct in_addr *remote);
/* Return `remote` to the pool; -1 if it was not allocated. */
int    pool_release(struct pool *p, struct in_addr remote);
size_t pool_size(const struct pool *p);
size_t pool_available(const struct pool *p);

#endif
