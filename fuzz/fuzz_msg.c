/* Fuzz the control-message parser as the daemon uses it: a TCP byte stream
 * arriving in reads of arbitrary sizes, framed by msg_frame() and decoded by
 * msg_decode(). Besides memory safety it checks the parser's contract:
 *  - msg_frame() returns 0 below a header, else -1 or exactly msg_len(type);
 *  - msg_decode() of a framed message succeeds, and fails (without reading
 *    past the end) on the same message cut short by one byte;
 *  - decoded strings are NUL-terminated within their field and printable;
 *  - decode(encode(decode(x))) == decode(x).
 *
 * Input: 2 bytes of cut-point seed, then the stream. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_util.h"
#include "proto/msg.h"

#define STREAM_BUF 1024   /* as the daemon's CTRL_INBUF_LEN */

static void
check_str(const char *s, size_t field)
{
	size_t n = strnlen(s, field + 1);
	if (n > field)
		abort();   /* not terminated within the field */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			abort();   /* unprintable byte reached a log string */
}

static void
check_strings(const struct pptp_msg *m)
{
	switch (m->type) {
	case PPTP_SCCRQ: case PPTP_SCCRP:
		check_str(m->u.sccr.hostname, PPTP_HOSTNAME_LEN);
		check_str(m->u.sccr.vendor, PPTP_VENDOR_LEN);
		break;
	case PPTP_OCRQ:
		check_str(m->u.ocrq.phone, PPTP_PHONE_LEN);
		check_str(m->u.ocrq.subaddr, PPTP_SUBADDR_LEN);
		break;
	case PPTP_ICRQ:
		check_str(m->u.icrq.dialed, PPTP_PHONE_LEN);
		check_str(m->u.icrq.dialing, PPTP_PHONE_LEN);
		check_str(m->u.icrq.subaddr, PPTP_SUBADDR_LEN);
		break;
	case PPTP_CDN:
		check_str(m->u.cdn.stats, PPTP_STATS_LEN);
		break;
	}
}

static void
one_message(const uint8_t *p, size_t len)
{
	struct pptp_msg m, m2;
	const char *reason = NULL;
	uint8_t *exact = fz_dup(p, len);

	memset(&m, 0, sizeof(m));
	if (msg_decode(exact, len, &m, &reason) != 0)
		abort();   /* msg_frame accepted it, msg_decode must too */
	if (m.type < 1 || m.type > PPTP_TYPE_MAX || msg_len(m.type) != len)
		abort();
	if (msg_name(m.type) == NULL)
		abort();
	check_strings(&m);

	/* Cut short by one byte: must fail cleanly, reading nothing beyond. */
	uint8_t *shorter = fz_dup(p, len - 1);
	reason = NULL;
	if (msg_decode(shorter, len - 1, &m2, &reason) != -1 || reason == NULL)
		abort();
	free(shorter);

	/* Round trip. */
	uint8_t out[PPTP_MAX_MSG_LEN];
	size_t olen = msg_encode(&m, out, sizeof(out));
	if (olen != len)
		abort();
	if (msg_encode(&m, out, len - 1) != 0)
		abort();   /* a buffer too small must be refused */
	memset(&m2, 0, sizeof(m2));
	if (msg_decode(out, olen, &m2, NULL) != 0)
		abort();
	if (memcmp(&m, &m2, sizeof(m)) != 0)
		abort();
	free(exact);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_rng rng;
	uint8_t buf[STREAM_BUF];
	size_t have = 0;

	if (size < 2)
		return 0;
	fz_rng_init(&rng, (uint32_t)data[0] << 8 | data[1]);
	data += 2;
	size -= 2;

	/* Whole input at once, no framing: decode must never misbehave. */
	{
		struct pptp_msg m;
		uint8_t *exact = fz_dup(data, size);
		const char *reason = NULL;
		if (msg_decode(exact, size, &m, &reason) < 0 && reason == NULL)
			abort();
		free(exact);
	}

	while (size > 0) {
		size_t n = fz_chunk(&rng, size);
		if (n > sizeof(buf) - have)
			n = sizeof(buf) - have;
		memcpy(buf + have, data, n);
		have += n;
		data += n;
		size -= n;

		size_t off = 0;
		for (;;) {
			const char *reason = NULL;
			size_t avail = have - off;
			uint8_t *exact = fz_dup(buf + off, avail);
			ssize_t len = msg_frame(exact, avail, &reason);
			free(exact);
			if (len < 0) {
				if (reason == NULL || avail < PPTP_HDR_LEN)
					abort();
				return 0;   /* the daemon closes the connection */
			}
			if (len == 0) {
				if (avail >= PPTP_HDR_LEN)
					abort();
				break;
			}
			if (len < PPTP_HDR_LEN || len > PPTP_MAX_MSG_LEN)
				abort();
			if ((size_t)len > avail)
				break;   /* wait for more */
			one_message(buf + off, (size_t)len);
			off += (size_t)len;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
		if (have >= PPTP_MAX_MSG_LEN)
			abort();   /* a framed message never needs more than this */
	}
	return 0;
}
