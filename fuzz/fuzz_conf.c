/* Fuzz the pptpd.conf reader (pptpd/conf.c) and the address pool specs it
 * validates (pptpd/pool.c): the file is written to a memfd and read through
 * /proc/self/fd, as conf_load() reads any path.
 *
 * Checks: the error message is NUL-terminated within the caller's buffer
 * (whose size the input chooses); a failed load leaves the configuration
 * untouched; a successful one has values in range and a pool that the
 * daemon can build and use (every address allocated once, then released);
 * loading the same file again over the result works too; no leaks.
 *
 * Input: 1 byte choosing the error buffer size, then the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pptpd/conf.h"
#include "pptpd/pool.h"

static void
check_err(const char *err, size_t errlen)
{
	if (memchr(err, '\0', errlen) == NULL)
		abort();
}

static int
same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static void
check_loaded(const struct conf *c)
{
	if (c->connections < 1 || c->connections > 65535)
		abort();
	if (c->stimeout < 1 || c->stimeout > 3600)
		abort();
	if (c->nwarnings > CONF_MAX_WARNINGS)
		abort();
	for (size_t i = 0; i < c->nwarnings; i++)
		if (c->warnings[i] == NULL || strlen(c->warnings[i]) > 4 * CONF_ERR_LEN)
			abort();
	if (c->speed == NULL || c->speed[0] == '\0' ||
	    strspn(c->speed, "0123456789") != strlen(c->speed))
		abort();
	if (c->ppp == NULL || c->ppp[0] == '\0')
		abort();
	if (c->remoteip != NULL) {
		char perr[CONF_ERR_LEN];
		struct pool *p = pool_new(c->localip, c->remoteip, perr, sizeof(perr));
		if (p == NULL)
			abort();   /* accepted by conf_load, refused by the daemon */
		size_t n = pool_size(p), got = 0;
		if (n == 0 || pool_available(p) != n)
			abort();
		/* Hand out (a bounded number of) addresses, then take them back. */
		size_t want = n < 4096 ? n : 4096;
		struct in_addr *r = malloc(want * sizeof(*r));
		for (; got < want; got++) {
			struct in_addr l;
			if (pool_alloc(p, &l, &r[got]) < 0)
				abort();
			if (r[got].s_addr == INADDR_ANY)
				abort();
		}
		if (want == n) {
			struct in_addr l, x;
			if (pool_alloc(p, &l, &x) == 0)
				abort();   /* more addresses than its size */
		}
		for (size_t i = 0; i < got; i++)
			if (pool_release(p, r[i]) < 0)
				abort();
		if (pool_available(p) != n)
			abort();
		free(r);
		pool_free(p);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t errlen = 1 + data[0];
	data++;
	size--;

	int fd = memfd_create("pptpd.conf", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	struct conf c, before;
	char *err = malloc(errlen);
	memset(err, 'x', errlen);
	conf_init(&c);
	before = c;
	if (conf_load(&c, path, err, errlen) == 0) {
		check_loaded(&c);
		/* Again over the result (a reload of an unchanged file). */
		memset(err, 'x', errlen);
		if (conf_load(&c, path, err, errlen) != 0)
			abort();   /* the same file cannot go bad */
		check_loaded(&c);
	} else {
		check_err(err, errlen);
		/* untouched: same pointers, same values */
		if (c.option != before.option || c.ppp != before.ppp ||
		    c.speed != before.speed || c.localip != NULL ||
		    c.remoteip != NULL || c.connections != before.connections ||
		    c.stimeout != before.stimeout || c.nwarnings != 0 ||
		    !same_str(c.pidfile, CONF_DEFAULT_PIDFILE))
			abort();
	}
	conf_free(&c);
	free(err);
	close(fd);
	return 0;
}
