/* IPv6 prefixes as pptpd.conf writes them; see prefix6.h. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pptpd/prefix6.h"

static int prefix6_match(const struct in6_addr *a, const struct in6_addr *b,
    unsigned len);

/* "2001:db8:100::/56,..." : the longest list item worth reading */
#define PREFIX6_TEXT_MAX  (INET6_ADDRSTRLEN + 4)

static int
prefix6_bits_clear(const struct in6_addr *a, unsigned len)
{
	for (unsigned bit = len; bit < 128; bit++)
		if (a->s6_addr[bit / 8] & (0x80 >> (bit % 8)))
			return 0;
	return 1;
}

int
prefix6_parse(const char *text, unsigned minlen, unsigned maxlen,
    struct in6_addr *addr, unsigned *len, char *err, size_t errlen)
{
	char a[INET6_ADDRSTRLEN];
	const char *slash = strchr(text, '/');
	char *end;

	if (slash == NULL || (size_t)(slash - text) >= sizeof(a)) {
		snprintf(err, errlen, "want PREFIX/LENGTH, e.g. 2001:db8:100::/56");
		return -1;
	}
	memcpy(a, text, (size_t)(slash - text));
	a[slash - text] = '\0';
	if (inet_pton(AF_INET6, a, addr) != 1) {
		snprintf(err, errlen, "'%s' is not an IPv6 address", a);
		return -1;
	}
	unsigned long l = strtoul(slash + 1, &end, 10);
	if (slash[1] < '0' || slash[1] > '9' || *end != '\0' || l < minlen ||
	    l > maxlen) {
		snprintf(err, errlen, "length '/%.8s': want %u to %u", slash + 1,
		    minlen, maxlen);
		return -1;
	}
	*len = (unsigned)l;
	if (!prefix6_bits_clear(addr, *len)) {
		snprintf(err, errlen, "bits set beyond the prefix length /%u", *len);
		return -1;
	}
	if (prefix6_is_special(addr)) {
		snprintf(err, errlen, "not a prefix to hand out (unspecified, "
		    "loopback, link-local or multicast)");
		return -1;
	}
	return 0;
}

/* Does addr/len overlap what is never a session's: multicast
 * (ff00::/8), link-local (fe80::/10), or :: and ::1 (::/127)? A short
 * prefix such as 8000::/1 holds them though its first address is none. */
static int
prefix6_special(const struct in6_addr *addr, unsigned len)
{
	static const struct {
		struct in6_addr a;
		unsigned        len;
	} special[] = {
		{ { .s6_addr = { 0xff } }, 8 },
		{ { .s6_addr = { 0xfe, 0x80 } }, 10 },
		{ { .s6_addr = { 0 } }, 127 },
	};

	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
		unsigned l = len < special[i].len ? len : special[i].len;
		if (prefix6_match(addr, &special[i].a, l))
			return 1;
	}
	return 0;
}

int
prefix6_set_parse(const char *text, struct prefix6_set *out, char *err,
    size_t errlen)
{
	char item[PREFIX6_TEXT_MAX], why[96];
	const char *s = text;

	memset(out, 0, sizeof(*out));
	for (;;) {
		size_t n = strcspn(s, ",");
		if (out->n == PREFIX6_SET_MAX) {
			snprintf(err, errlen, "more than %d prefixes", PREFIX6_SET_MAX);
			goto fail;
		}
		if (n == 0 || n >= sizeof(item)) {
			snprintf(err, errlen, "want PREFIX/LENGTH[,PREFIX/LENGTH...]");
			goto fail;
		}
		memcpy(item, s, n);
		item[n] = '\0';
		if (prefix6_parse(item, 1, PREFIX6_LEN_SESSION, &out->p[out->n].addr,
		    &out->p[out->n].len, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "'%s': %s", item, why);
			goto fail;
		}
		if (prefix6_special(&out->p[out->n].addr, out->p[out->n].len)) {
			snprintf(err, errlen, "'%s': holds multicast, link-local or "
			    "loopback addresses", item);
			goto fail;
		}
		out->n++;
		if (s[n] == '\0')
			return 0;
		s += n + 1;
	}
fail:
	memset(out, 0, sizeof(*out));
	return -1;
}

/* The first `len` bits of a and b are the same. */
static int
prefix6_match(const struct in6_addr *a, const struct in6_addr *b, unsigned len)
{
	unsigned whole = len / 8, rest = len % 8;

	if (memcmp(a->s6_addr, b->s6_addr, whole) != 0)
		return 0;
	if (rest == 0)
		return 1;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a->s6_addr[whole] & mask) == (b->s6_addr[whole] & mask);
}

int
prefix6_is_special(const struct in6_addr *a)
{
	return IN6_IS_ADDR_UNSPECIFIED(a) || IN6_IS_ADDR_MULTICAST(a) ||
	    IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_LOOPBACK(a);
}

int
prefix6_set_holds(const struct prefix6_set *s, const struct in6_addr *p64)
{
	for (unsigned i = 0; i < s->n; i++)
		if (prefix6_match(p64, &s->p[i].addr, s->p[i].len))
			return 1;
	return 0;
}
