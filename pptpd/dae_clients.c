/* The Dynamic Authorization clients file (dae_clients.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pptpd/dae_clients.h"
#include "pptpd/fileset.h"
#include "common/strclean.h"

#define DAE_LINE_MAX   512
#define DAE_QUOTE_MAX  40

struct dae_loader {
	const char         *path;
	int                 line;
	char                why[160];
	struct dae_clients *c;
	size_t              cap;
};

static int
dae_clients_add(struct dae_loader *ld, struct in_addr addr, const char *secret)
{
	if (ld->c->n == ld->cap) {
		size_t cap = ld->cap ? ld->cap * 2 : 8;
		struct dae_clients *c = realloc(ld->c, sizeof(*c) + cap * sizeof(c->v[0]));
		if (c == NULL) {
			snprintf(ld->why, sizeof(ld->why), "out of memory");
			return -1;
		}
		ld->c = c;
		ld->cap = cap;
	}
	struct dae_client *e = &ld->c->v[ld->c->n++];
	e->addr = addr;
	e->slen = strlen(secret);
	memcpy(e->secret, secret, e->slen + 1);
	return 0;
}

static int
dae_clients_line(struct dae_loader *ld, char *s)
{
	static const char sep[] = " \t\r\v\f";
	char *tok[3], q[DAE_QUOTE_MAX + 8];
	int n = 0;
	struct in_addr addr;

	while (n < 3) {
		s += strspn(s, sep);
		if (*s == '\0' || (n == 0 && *s == '#'))
			break;
		tok[n++] = s;
		s += strcspn(s, sep);
		if (*s != '\0')
			*s++ = '\0';
	}
	if (n == 0)
		return 0;
	if (inet_pton(AF_INET, tok[0], &addr) != 1) {
		snprintf(ld->why, sizeof(ld->why), "bad IPv4 address '%s'",
		    str_clean(q, sizeof(q), tok[0], SIZE_MAX, DAE_QUOTE_MAX));
		return -1;
	}
	if (n == 1) {
		snprintf(ld->why, sizeof(ld->why), "no secret for %s", tok[0]);
		return -1;
	}
	if (n == 3) {
		/* The secret is not quoted back: it is the secret. */
		snprintf(ld->why, sizeof(ld->why), "more than ADDRESS SECRET "
		    "(a secret has no blanks; no trailing comments)");
		return -1;
	}
	size_t slen = strlen(tok[1]);
	if (slen > DAE_SECRET_MAX) {
		snprintf(ld->why, sizeof(ld->why), "secret longer than %d characters",
		    DAE_SECRET_MAX);
		return -1;
	}
	for (size_t i = 0; i < slen; i++)
		if (!str_printable((unsigned char)tok[1][i])) {
			snprintf(ld->why, sizeof(ld->why), "secret holds a byte "
			    "that is not printable ASCII");
			return -1;
		}
	if (dae_clients_find(ld->c, addr) != NULL) {
		snprintf(ld->why, sizeof(ld->why), "%s listed twice", tok[0]);
		return -1;
	}
	if (ld->c->n >= DAE_CLIENTS_MAX) {
		snprintf(ld->why, sizeof(ld->why), "more than %d clients",
		    DAE_CLIENTS_MAX);
		return -1;
	}
	return dae_clients_add(ld, addr, tok[1]);
}

/* The secrets are the keys to hang up any session: refuse a file anybody
 * but us could read or replace, rather than use it. "Us" is root too:
 * under privsep the monitor, root, opens it for the unprivileged worker
 * (fileset.h), and root could replace any file anyway. */
static int
dae_clients_check_file(struct dae_loader *ld, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		snprintf(ld->why, sizeof(ld->why), "%s", strerror(errno));
	else if (!S_ISREG(st.st_mode))
		snprintf(ld->why, sizeof(ld->why), "not a regular file");
	else if (st.st_uid != 0 && st.st_uid != geteuid())
		snprintf(ld->why, sizeof(ld->why), "owned by uid %u, not root or "
		    "%u: refused", (unsigned)st.st_uid, (unsigned)geteuid());
	else if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
		snprintf(ld->why, sizeof(ld->why), "mode %04o: refused; it holds "
		    "secrets, group and others must have no access (chmod 0600 %s)",
		    (unsigned)(st.st_mode & 07777), ld->path);
	else
		return 0;
	return -1;
}

static int
dae_clients_read(struct dae_loader *ld, FILE *f)
{
	char buf[DAE_LINE_MAX + 2];

	while (fgets(buf, sizeof(buf), f) != NULL) {
		size_t n = strlen(buf);
		ld->line++;
		if (n > 0 && buf[n - 1] == '\n')
			buf[--n] = '\0';
		else if (!feof(f)) {
			snprintf(ld->why, sizeof(ld->why), "line too long (over %d "
			    "bytes)", DAE_LINE_MAX);
			return -1;
		}
		if (memchr(buf, '\0', n) != NULL) {
			snprintf(ld->why, sizeof(ld->why), "NUL byte in line");
			return -1;
		}
		if (dae_clients_line(ld, buf) < 0)
			return -1;
	}
	if (ferror(f)) {
		ld->line = 0;
		snprintf(ld->why, sizeof(ld->why), "read error: %s", strerror(errno));
		return -1;
	}
	if (ld->c->n == 0) {
		ld->line = 0;
		snprintf(ld->why, sizeof(ld->why), "no client listed");
		return -1;
	}
	return 0;
}

int
dae_clients_load(const char *path, struct fileset *fs, struct dae_clients **out,
    char *err, size_t errlen)
{
	struct dae_loader ld = { .path = path };
	FILE *f = NULL;
	int fd, rc = -1;

	ld.c = calloc(1, sizeof(*ld.c));
	if (ld.c == NULL)
		snprintf(ld.why, sizeof(ld.why), "out of memory");
	else if ((fd = fileset_open(fs, path, O_RDONLY | O_NOFOLLOW)) < 0)
		snprintf(ld.why, sizeof(ld.why), "cannot open: %s", strerror(errno));
	else if (dae_clients_check_file(&ld, fd) < 0)
		close(fd);
	else if ((f = fdopen(fd, "r")) == NULL) {
		snprintf(ld.why, sizeof(ld.why), "%s", strerror(errno));
		close(fd);
	} else
		rc = dae_clients_read(&ld, f);
	if (f != NULL)
		fclose(f);
	if (rc == 0) {
		*out = ld.c;
		return 0;
	}
	dae_clients_free(ld.c);
	if (ld.line > 0)
		snprintf(err, errlen, "%s:%d: %s", path, ld.line, ld.why);
	else
		snprintf(err, errlen, "%s: %s", path, ld.why);
	return -1;
}

const struct dae_client *
dae_clients_find(const struct dae_clients *c, struct in_addr addr)
{
	if (c == NULL)
		return NULL;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].addr.s_addr == addr.s_addr)
			return &c->v[i];
	return NULL;
}

void
dae_clients_free(struct dae_clients *c)
{
	if (c == NULL)
		return;
	/* Secrets do not linger in freed memory. */
	for (size_t i = 0; i < c->n; i++)
		explicit_bzero(c->v[i].secret, sizeof(c->v[i].secret));
	free(c);
}
