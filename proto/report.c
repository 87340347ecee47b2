/*
 * report.c -- build and parse session report datagrams (see report.h for
 * the contract).  Pure C, shared by the pppd plugin and pptpd.
 */
#include "proto/report.h"

#include <stdio.h>
#include <string.h>

static int
report_key_ok(const char *k, size_t len)
{
	size_t i;

	if (len == 0 || len > REPORT_MAX_KEY)
		return 0;
	for (i = 0; i < len; i++) {
		char c = k[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return 0;
	}
	return 1;
}

static int
report_safe(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' && strchr("-._~:/@+,", c));
}

static void
report_put(struct report_builder *b, const char *s, size_t n)
{
	if (b->overflow || n > REPORT_MAX_DGRAM - b->len) {
		b->overflow = 1;
		return;
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

REPORT_API void
report_begin(struct report_builder *b, const char *event)
{
	b->len = 0;
	b->overflow = 0;
	b->buf[0] = '\0';
	report_put(b, "v=" REPORT_VERSION, strlen("v=" REPORT_VERSION));
	report_add(b, "event", event);
}

REPORT_API void
report_add(struct report_builder *b, const char *key, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t klen = key ? strlen(key) : 0, vlen, i;

	if (value == NULL)
		value = "";
	vlen = strlen(value);
	if (!report_key_ok(key, klen) || vlen > REPORT_MAX_VALUE) {
		b->overflow = 1;
		return;
	}
	report_put(b, " ", 1);
	report_put(b, key, klen);
	report_put(b, "=", 1);
	for (i = 0; i < vlen; i++) {
		unsigned char c = (unsigned char)value[i];
		if (report_safe(c))
			report_put(b, (const char *)&value[i], 1);
		else {
			char e[3] = { '%', hex[c >> 4], hex[c & 15] };
			report_put(b, e, 3);
		}
	}
}

REPORT_API void
report_add_u64(struct report_builder *b, const char *key, uint64_t v)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	report_add(b, key, num);
}

REPORT_API int
report_end(struct report_builder *b)
{
	return b->overflow ? -1 : (int)b->len;
}

static int
report_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

REPORT_API int
report_parse(struct report_msg *m, const void *data, size_t len,
    const char **why)
{
	const char *in = data;
	const char *dummy;
	size_t pos = 0, o = 0, i;

	if (why == NULL)
		why = &dummy;
	m->n = 0;
	m->event = NULL;
	if (len == 0) {
		*why = "empty datagram";
		return -1;
	}
	if (len > REPORT_MAX_DGRAM) {
		*why = "datagram too long";
		return -1;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c < 0x20 || c >= 0x7f) {
			*why = "non-printable byte";
			return -1;
		}
	}
	while (pos < len) {
		const char *f = in + pos, *sp, *eq;
		size_t flen, klen, j, vstart;
		struct report_field *fd;

		sp = memchr(f, ' ', len - pos);
		flen = sp ? (size_t)(sp - f) : len - pos;
		if (sp && (size_t)(sp - in) + 1 == len) {
			*why = "trailing space";
			return -1;
		}
		pos += flen + (sp != NULL);
		eq = memchr(f, '=', flen);
		if (eq == NULL) {
			*why = "field without '='";
			return -1;
		}
		klen = (size_t)(eq - f);
		if (!report_key_ok(f, klen)) {
			*why = "bad key";
			return -1;
		}
		if (m->n == REPORT_MAX_FIELDS) {
			*why = "too many fields";
			return -1;
		}
		fd = &m->f[m->n];
		memcpy(m->buf + o, f, klen);
		m->buf[o + klen] = '\0';
		fd->key = m->buf + o;
		o += klen + 1;
		vstart = o;
		for (j = klen + 1; j < flen; j++) {
			char c = f[j];
			if (c == '%') {
				int hi, lo;
				if (j + 2 >= flen) {
					*why = "truncated %-escape";
					return -1;
				}
				hi = report_hexval(f[j + 1]);
				lo = report_hexval(f[j + 2]);
				if (hi < 0 || lo < 0) {
					*why = "bad %-escape";
					return -1;
				}
				c = (char)(hi << 4 | lo);
				if (c == '\0') {
					*why = "NUL in value";
					return -1;
				}
				j += 2;
			} else if (c == '=') {
				*why = "'=' in value";
				return -1;
			}
			m->buf[o++] = c;
		}
		if (o - vstart > REPORT_MAX_VALUE) {
			*why = "value too long";
			return -1;
		}
		m->buf[o++] = '\0';
		fd->value = m->buf + vstart;
		for (j = 0; j < m->n; j++) {
			if (strcmp(m->f[j].key, fd->key) == 0) {
				*why = "duplicate key";
				return -1;
			}
		}
		m->n++;
	}
	if (m->n < 2 || strcmp(m->f[0].key, "v") != 0 ||
	    strcmp(m->f[1].key, "event") != 0) {
		*why = "does not start with v= and event=";
		return -1;
	}
	if (strcmp(m->f[0].value, REPORT_VERSION) != 0) {
		*why = "unsupported version";
		return -1;
	}
	if (m->f[1].value[0] == '\0') {
		*why = "empty event";
		return -1;
	}
	m->event = m->f[1].value;
	return 0;
}

REPORT_API const char *
report_get(const struct report_msg *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->f[i].key, key) == 0)
			return m->f[i].value;
	return NULL;
}

REPORT_API int
report_get_u64(const struct report_msg *m, const char *key, uint64_t *out)
{
	const char *v = report_get(m, key);
	uint64_t x = 0;

	if (v == NULL || *v == '\0' || strlen(v) > 20)
		return -1;
	for (; *v; v++) {
		unsigned d;
		if (*v < '0' || *v > '9')
			return -1;
		d = (unsigned)(*v - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

REPORT_API const char *
report_status_name(int status)
{
	/* pppd's EXIT_* values (pppd.h), stable since 2.4. */
	static const char *const names[] = {
		"ok", "fatal", "option", "not-root", "no-kernel-support",
		"user-request", "lock-failed", "open-failed", "connect-failed",
		"ptycmd-failed", "negotiation", "peer-auth-failed", "idle",
		"connect-time", "callback", "peer-dead", "hangup", "loopback",
		"init-failed", "auth-to-peer-failed", "traffic-limit",
		"cnid-auth-failed",
	};

	if (status < 0 || (size_t)status >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[status];
}

/* The tokens and the peer's texts, by enum report_cause. */
static const struct {
	const char *name, *text;
} report_causes[] = {
	[REPORT_CAUSE_ADMIN]    = { "admin",    "Administrative hang-up" },
	[REPORT_CAUSE_SHUTDOWN] = { "shutdown", "Server shutdown" },
	[REPORT_CAUSE_LIMIT]    = { "limit",    "Session limit reached" },
	[REPORT_CAUSE_REPLACED] = { "replaced", "Replaced by a newer session" },
};

#define REPORT_N_CAUSES (sizeof(report_causes) / sizeof(report_causes[0]))

REPORT_API const char *
report_cause_name(enum report_cause cause)
{
	if ((size_t)cause >= REPORT_N_CAUSES)
		return NULL;
	return report_causes[cause].name;
}

REPORT_API enum report_cause
report_cause_parse(const char *name)
{
	if (name == NULL)
		return REPORT_CAUSE_NONE;
	for (size_t i = 0; i < REPORT_N_CAUSES; i++)
		if (report_causes[i].name != NULL &&
		    strcmp(report_causes[i].name, name) == 0)
			return (enum report_cause)i;
	return REPORT_CAUSE_NONE;
}

REPORT_API const char *
report_cause_text(enum report_cause cause)
{
	if ((size_t)cause >= REPORT_N_CAUSES)
		return NULL;
	return report_causes[cause].text;
}
