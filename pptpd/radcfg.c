/* The radiusclient configuration, as far as accounting needs it
 * (radcfg.h). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pptpd/radcfg.h"

#define RADCFG_LINE_MAX  512
#define RADCFG_HOST_MAX  256
#define PATH_MAX_RADCFG  1024

/* One "KEY VALUE" line: comments and blank lines are NULL keys. */
static void
radcfg_split(char *line, char **key, char **val)
{
	char *p = line + strcspn(line, "#\r\n");
	*p = '\0';
	*key = line + strspn(line, " \t");
	p = *key + strcspn(*key, " \t");
	if (*p != '\0')
		*p++ = '\0';
	*val = p + strspn(p, " \t");
	for (p = *val + strlen(*val); p > *val && isspace((unsigned char)p[-1]); )
		*--p = '\0';
	if (**key == '\0')
		*key = NULL;
}

/* "host[:port]" (the first of a comma-separated list) into host and
 * port; a third ":secret" part, which radiusclient also allows, is
 * returned in *secret ("" when none). */
static int
radcfg_hostport(const char *val, char *host, unsigned *port, char *secret)
{
	char buf[RADCFG_HOST_MAX];
	size_t n = strcspn(val, ",");

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, val, n);
	buf[n] = '\0';
	char *c = strchr(buf, ':'), *c2 = NULL;
	*port = RADCFG_ACCT_PORT;
	secret[0] = '\0';
	if (c != NULL) {
		*c++ = '\0';
		if ((c2 = strchr(c, ':')) != NULL) {
			*c2++ = '\0';
			snprintf(secret, RADCFG_SECRET_MAX, "%s", c2);
		}
		char *end;
		unsigned long p = strtoul(c, &end, 10);
		if (*c == '\0' || *end != '\0' || p == 0 || p > 65535)
			return -1;
		*port = (unsigned)p;
	}
	snprintf(host, RADCFG_HOST_MAX, "%s", buf);
	return host[0] != '\0' ? 0 : -1;
}

static int
radcfg_resolve(const char *host, unsigned port, struct sockaddr_in *out)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM },
	    *res = NULL;

	if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL)
		return -1;
	memcpy(out, res->ai_addr, sizeof(*out));
	out->sin_port = htons((uint16_t)port);
	freeaddrinfo(res);
	return 0;
}

/* The secret of `host` in the servers file: "HOST[:PORT] SECRET" lines. */
static int
radcfg_secret(const char *path, const char *host, char *secret, char *why,
    size_t whylen)
{
	char line[RADCFG_LINE_MAX], *key, *val;
	FILE *f = fopen(path, "re");

	if (f == NULL) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		radcfg_split(line, &key, &val);
		if (key == NULL || *val == '\0')
			continue;
		key[strcspn(key, ":")] = '\0';
		if (strcmp(key, host) == 0 && strlen(val) < RADCFG_SECRET_MAX) {
			snprintf(secret, RADCFG_SECRET_MAX, "%s", val);
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	snprintf(why, whylen, "%s: no secret for %s", path, host);
	return -1;
}

/* One key of radiusclient.conf; 0, or -1 with why set. */
static int
radcfg_key(struct radcfg *c, const char *key, const char *val, char *host,
    char *servers, char *why, size_t whylen)
{
	unsigned port;

	if (strcmp(key, "acctserver") == 0 && host[0] == '\0') {
		if (radcfg_hostport(val, host, &port, c->secret) < 0 ||
		    radcfg_resolve(host, port, &c->server) < 0) {
			snprintf(why, whylen, "acctserver '%.64s': not HOST[:PORT] "
			    "of an IPv4 server", val);
			return -1;
		}
	} else if (strcmp(key, "servers") == 0) {
		snprintf(servers, PATH_MAX_RADCFG, "%s", val);
	} else if (strcmp(key, "nas_identifier") == 0) {
		snprintf(c->nas_id, sizeof(c->nas_id), "%s", val);
	} else if (strcmp(key, "bindaddr") == 0 && strcmp(val, "*") != 0 &&
	    inet_pton(AF_INET, val, &c->bind) != 1) {
		snprintf(why, whylen, "bindaddr '%.64s': not an IPv4 address", val);
		return -1;
	} else if (strcmp(key, "radius_timeout") == 0) {
		c->timeout_s = (unsigned)strtoul(val, NULL, 10);
	} else if (strcmp(key, "radius_retries") == 0) {
		c->retries = (unsigned)strtoul(val, NULL, 10);
	}
	return 0;
}

int
radcfg_load(const char *path, struct radcfg *c, char *why, size_t whylen)
{
	char line[RADCFG_LINE_MAX], host[RADCFG_HOST_MAX] = "",
	    servers[PATH_MAX_RADCFG] = "", err[200] = "", *key, *val;
	FILE *f = fopen(path, "re");
	int n = 0;

	memset(c, 0, sizeof(*c));
	c->timeout_s = RADCFG_TIMEOUT_S;
	c->retries = RADCFG_RETRIES;
	if (f == NULL) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (err[0] == '\0' && fgets(line, sizeof(line), f) != NULL) {
		n++;
		radcfg_split(line, &key, &val);
		if (key != NULL)
			radcfg_key(c, key, val, host, servers, err, sizeof(err));
	}
	fclose(f);
	if (err[0] != '\0') {
		snprintf(why, whylen, "%s:%d: %s", path, n, err);
		return -1;
	}
	if (host[0] == '\0') {
		snprintf(why, whylen, "%s: no acctserver", path);
		return -1;
	}
	if (c->timeout_s == 0 || c->timeout_s > 60)
		c->timeout_s = RADCFG_TIMEOUT_S;
	if (c->retries > 10)
		c->retries = RADCFG_RETRIES;
	if (c->secret[0] != '\0')
		return 0;
	if (servers[0] == '\0') {
		snprintf(why, whylen, "%s: no servers file for the secret", path);
		return -1;
	}
	return radcfg_secret(servers, host, c->secret, why, whylen);
}
