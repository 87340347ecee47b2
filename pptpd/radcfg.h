/* What pptpd's own accounting needs of the radiusclient configuration
 * pppd's radius.so already reads (pptpd.conf `radius-config-file`, the
 * same file as pppd's option of that name): the accounting server, its
 * secret (from the `servers` file), the NAS-Identifier, the address to
 * send from, the timeout and the retries. So that the admin writes the
 * server and its secret once. Debian has no library that reads this
 * format (pppd's radiusclient is built into radius.so), and we need five
 * keys of it: read here. */
#ifndef PPTPD_RADCFG_H
#define PPTPD_RADCFG_H

#include <netinet/in.h>
#include <stddef.h>

#define RADCFG_ACCT_PORT     1813   /* RFC 2866 */
#define RADCFG_SECRET_LEN    48     /* radiusclient's MAX_SECRET_LENGTH */
#define RADCFG_SECRET_MAX    (RADCFG_SECRET_LEN + 1)
#define RADCFG_NAS_ID_MAX    64
/* When the file has no radius_timeout or radius_retries (pppd's
 * radiusclient wants both; these are its shipped file's values). A
 * request is sent radius_retries times in all, as radiusclient does. */
#define RADCFG_TIMEOUT_S     10
#define RADCFG_RETRIES       3
#define RADCFG_TIMEOUT_MAX   60
#define RADCFG_RETRIES_MAX   10

struct fileset;

struct radcfg {
	struct sockaddr_in server;       /* acctserver (the first) */
	struct in_addr     bind;         /* bindaddr; INADDR_ANY: "*" or unset */
	char               secret[RADCFG_SECRET_MAX];
	char               nas_id[RADCFG_NAS_ID_MAX];   /* "" unset */
	unsigned           timeout_s, retries;
	/* read with RADCFG_NO_RESOLVE: no name looked up, so the server's
	 * address and the secret are not filled in */
	int                unresolved;
};

/* radcfg_load's flags. RADCFG_NO_RESOLVE: open and read the files, look
 * no name up (privsep's monitor, which only opens them for its worker and
 * must not wait on DNS: its worker gives it 5 s an answer). */
#define RADCFG_NO_RESOLVE  0x1

/* Read `path` (radiusclient.conf) and the servers file it names, both
 * opened through `fs` (fileset.h; NULL: by path). 0, or
 * -1 with why set ("file:line: reason"). */
int radcfg_load(const char *path, struct fileset *fs, int flags,
    struct radcfg *out, char *why, size_t whylen);

#endif
