/* The radiusclient configuration, as far as accounting needs it
 * (radcfg.h), read as pppd's radiusclient reads it: a comment is a line
 * that starts with '#', a value the rest of its line, a servers line
 * "HOST[:PORT] SECRET" (the secret its second word), matched by the
 * host's address. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pptpd/fileset.h"
#include "pptpd/radcfg.h"

#define RADCFG_LINE_MAX  512
#define RADCFG_HOST_MAX  256
#define RADCFG_PATH_MAX  1024

/* `path` opened for reading, if it is a regular file (a FIFO or a
 * device named by mistake would block the start, or never end). NULL
 * with errno set. */
static FILE *
radcfg_open(struct fileset *fs, const char *path)
{
	struct stat st;
	int fd = fileset_open(fs, path, O_RDONLY);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "r");

	if (f == NULL && fd >= 0)
		close(fd);
	if (f != NULL && (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode))) {
		fclose(f);
		errno = EINVAL;   /* "Invalid argument": said with the path */
		return NULL;
	}
	return f;
}

/* One file, read a line at a time. */
struct radcfg_file {
	const char *path;
	FILE       *f;
	int         line;
	char        buf[RADCFG_LINE_MAX];
};

/* The next line, its end trimmed: 1, 0 at the end, -1 with why set when
 * it is longer than RADCFG_LINE_MAX (a tail read as a line of its own
 * would be misread). */
static int
radcfg_next(struct radcfg_file *rf, char *why, size_t whylen)
{
	if (fgets(rf->buf, sizeof(rf->buf), rf->f) == NULL)
		return 0;
	rf->line++;
	size_t n = strlen(rf->buf);
	if (n == sizeof(rf->buf) - 1 && rf->buf[n - 1] != '\n' && !feof(rf->f)) {
		snprintf(why, whylen, "%s:%d: line longer than %d", rf->path,
		    rf->line, RADCFG_LINE_MAX - 2);
		return -1;
	}
	while (n > 0 && isspace((unsigned char)rf->buf[n - 1]))
		rf->buf[--n] = '\0';
	return 1;
}

/* "KEY VALUE": NULL key for a comment or a blank line. */
static void
radcfg_split(char *line, char **key, char **val)
{
	*key = line + strspn(line, " \t");
	if (**key == '\0' || **key == '#') {
		*key = NULL;
		return;
	}
	char *p = *key + strcspn(*key, " \t");
	if (*p != '\0')
		*p++ = '\0';
	*val = p + strspn(p, " \t");
}

/* "HOST[:PORT]" into host and port (pppd's radiusclient has no third
 * part: the secret is the servers file's). */
static int
radcfg_hostport(const char *val, char *host, unsigned *port)
{
	char *end;

	if (strlen(val) >= RADCFG_HOST_MAX || val[0] == '\0' || val[0] == ':')
		return -1;
	snprintf(host, RADCFG_HOST_MAX, "%s", val);
	*port = RADCFG_ACCT_PORT;
	char *c = strchr(host, ':');
	if (c == NULL)
		return 0;
	*c++ = '\0';
	unsigned long p = strtoul(c, &end, 10);
	if (*c < '0' || *c > '9' || *end != '\0' || p == 0 || p > 65535)
		return -1;
	*port = (unsigned)p;
	return 0;
}

static int
radcfg_resolve(const char *host, struct in_addr *out)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM },
	    *res = NULL;

	if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL)
		return -1;
	*out = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
	freeaddrinfo(res);
	return 0;
}

/* A decimal in [min, max]. */
static int
radcfg_uint(const char *val, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(val, &end, 10);
	if (*val < '0' || *val > '9' || *end != '\0' || v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* One servers line: is it the server's, and then its secret. */
static int
radcfg_server_line(struct radcfg *c, char *key, char *val, int *found,
    char *why, size_t whylen, const struct radcfg_file *rf)
{
	char host[RADCFG_HOST_MAX];
	struct in_addr a;
	unsigned port;

	val[strcspn(val, " \t")] = '\0';
	if (radcfg_hostport(key, host, &port) < 0 || radcfg_resolve(host, &a) < 0 ||
	    a.s_addr != c->server.sin_addr.s_addr)
		return 0;
	if (val[0] == '\0' || strlen(val) > RADCFG_SECRET_LEN) {
		snprintf(why, whylen, "%s:%d: the secret of %s: %s", rf->path,
		    rf->line, host, val[0] == '\0' ? "none" :
		    "longer than radiusclient's 48 characters");
		return -1;
	}
	snprintf(c->secret, sizeof(c->secret), "%s", val);
	*found = 1;
	return 0;
}

/* The secret of the acctserver in the servers file. */
static int
radcfg_secret(struct radcfg *c, struct fileset *fs, const char *path, char *why,
    size_t whylen)
{
	struct radcfg_file rf = { .path = path, .f = radcfg_open(fs, path) };
	char *key, *val;
	int rc, found = 0;

	if (rf.f == NULL) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	found = c->unresolved;   /* opened is all that is asked */
	rc = 0;
	while (!found && (rc = radcfg_next(&rf, why, whylen)) > 0) {
		radcfg_split(rf.buf, &key, &val);
		if (key != NULL && radcfg_server_line(c, key, val, &found, why,
		    whylen, &rf) < 0)
			rc = -1;
		if (rc < 0)
			break;
	}
	fclose(rf.f);
	if (rc < 0)
		return -1;
	if (!found) {
		snprintf(why, whylen, "%s: no secret for %s", path,
		    inet_ntoa(c->server.sin_addr));
		return -1;
	}
	return 0;
}

/* One key of radiusclient.conf; NULL, or what is wrong with its value. */
static const char *
radcfg_key(struct radcfg *c, const char *key, const char *val, int *has_acct,
    char *servers)
{
	char host[RADCFG_HOST_MAX];
	unsigned port;

	if (strcmp(key, "acctserver") == 0) {
		if (radcfg_hostport(val, host, &port) < 0 || (!c->unresolved &&
		    radcfg_resolve(host, &c->server.sin_addr) < 0))
			return "not HOST[:PORT] of an IPv4 server";
		c->server.sin_family = AF_INET;
		c->server.sin_port = htons((uint16_t)port);
		*has_acct = 1;
	} else if (strcmp(key, "servers") == 0) {
		snprintf(servers, RADCFG_PATH_MAX, "%s", val);
	} else if (strcmp(key, "nas_identifier") == 0) {
		if (strlen(val) >= sizeof(c->nas_id))
			return "too long";
		snprintf(c->nas_id, sizeof(c->nas_id), "%s", val);
	} else if (strcmp(key, "bindaddr") == 0) {
		if (strcmp(val, "*") != 0 && inet_pton(AF_INET, val, &c->bind) != 1)
			return "not an IPv4 address or *";
	} else if (strcmp(key, "radius_timeout") == 0) {
		if (radcfg_uint(val, 1, RADCFG_TIMEOUT_MAX, &c->timeout_s) < 0)
			return "want 1 to 60 (seconds)";
	} else if (strcmp(key, "radius_retries") == 0) {
		if (radcfg_uint(val, 1, RADCFG_RETRIES_MAX, &c->retries) < 0)
			return "want 1 to 10 (sends in all)";
	}
	return NULL;
}

int
radcfg_load(const char *path, struct fileset *fs, int flags, struct radcfg *c,
    char *why, size_t whylen)
{
	struct radcfg_file rf = { .path = path, .f = radcfg_open(fs, path) };
	char servers[RADCFG_PATH_MAX] = "", *key, *val;
	const char *bad = NULL;
	int rc, has_acct = 0;

	memset(c, 0, sizeof(*c));
	c->unresolved = !!(flags & RADCFG_NO_RESOLVE);
	c->timeout_s = RADCFG_TIMEOUT_S;
	c->retries = RADCFG_RETRIES;
	if (rf.f == NULL) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while ((rc = radcfg_next(&rf, why, whylen)) > 0) {
		radcfg_split(rf.buf, &key, &val);
		if (key != NULL && (bad = radcfg_key(c, key, val, &has_acct,
		    servers)) != NULL) {
			snprintf(why, whylen, "%s:%d: %s '%.64s': %s", path, rf.line,
			    key, val, bad);
			rc = -1;
			break;
		}
	}
	fclose(rf.f);
	if (rc < 0)
		return -1;
	if (!has_acct || servers[0] == '\0') {
		snprintf(why, whylen, "%s: no %s", path, !has_acct ? "acctserver" :
		    "servers file (where the secret is)");
		return -1;
	}
	return radcfg_secret(c, fs, servers, why, whylen);
}
