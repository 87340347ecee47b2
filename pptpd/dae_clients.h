/* The clients allowed to send Dynamic Authorization requests (RFC 5176)
 * and their shared secrets: the file named by `radius-dae-clients` in
 * pptpd.conf. Kept out of pptpd.conf so the secrets are not in a file
 * that may be world-readable; the file itself must be a regular file of
 * ours that group and others cannot read or write.
 *
 * Syntax: one `ADDRESS SECRET` per line (an IPv4 address, the secret one
 * token of 1..DAE_SECRET_MAX printable non-blank characters, '#' allowed
 * inside it); blank lines and lines whose first non-blank character is '#'
 * are comments; no trailing comments. An address may appear only once. */
#ifndef PPTPD_DAE_CLIENTS_H
#define PPTPD_DAE_CLIENTS_H

#include <netinet/in.h>
#include <stddef.h>

#define DAE_SECRET_MAX   128
#define DAE_CLIENTS_MAX  1024

struct fileset;

struct dae_client {
	struct in_addr addr;
	size_t         slen;
	char           secret[DAE_SECRET_MAX + 1];
};

struct dae_clients {
	size_t            n;
	struct dae_client v[];
};

/* Read `path` (opened through `fs`, fileset.h; NULL: by path). Returns 0 with *out set (free with dae_clients_free), or -1
 * with err holding "path:line: reason" ("path: reason" when no line is
 * to blame). A file with no client is an error: nobody could be served. */
int dae_clients_load(const char *path, struct fileset *fs,
    struct dae_clients **out, char *err, size_t errlen);
/* The client at `addr`, or NULL. */
const struct dae_client *dae_clients_find(const struct dae_clients *c,
    struct in_addr addr);
void dae_clients_free(struct dae_clients *c);

#endif
