/* Unit tests for proto/msg.c: RFC 2637 control message framing, decoding
 * and encoding. Expected bytes are built by hand from the RFC's layouts, not
 * from msg.c's constants, so a shared mistake cannot hide. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "proto/msg.h"

static const size_t rfc_len[PPTP_TYPE_MAX + 1] = {
	0, 156, 156, 16, 16, 16, 20, 168, 32, 220, 24, 28, 16, 148, 40, 24,
};

/* One message of each type, as a test parameter. */
static const unsigned all_types[PPTP_TYPE_MAX] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
};

static void
w16(uint8_t *b, size_t off, uint16_t v)
{
	b[off] = (uint8_t)(v >> 8);
	b[off + 1] = (uint8_t)v;
}

static void
w32(uint8_t *b, size_t off, uint32_t v)
{
	w16(b, off, (uint16_t)(v >> 16));
	w16(b, off + 2, (uint16_t)v);
}

/* A valid header for `type` with an explicit length field. */
static void
hdr(uint8_t *b, uint16_t length, uint16_t type)
{
	w16(b, 0, length);
	w16(b, 2, 1);
	w32(b, 4, 0x1a2b3c4d);
	w16(b, 8, type);
	w16(b, 10, 0);
}

/* Distinctive values in every field a type carries, so a swapped or
 * truncated field shows up in the round trip. */
static void
fill(unsigned type, struct pptp_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = (uint16_t)type;
	switch (type) {
	case PPTP_SCCRQ:
	case PPTP_SCCRP:
		m->u.sccr.version = 0x0100;
		if (type == PPTP_SCCRP) {
			m->u.sccr.result = 2;
			m->u.sccr.error = 6;
		}
		m->u.sccr.framing = 0x01020304;
		m->u.sccr.bearer = 0x05060708;
		m->u.sccr.max_channels = 0x090a;
		m->u.sccr.firmware = 0x0b0c;
		strcpy(m->u.sccr.hostname, "host.example");
		memset(m->u.sccr.vendor, 'v', PPTP_VENDOR_LEN);
		break;
	case PPTP_STOPCCRQ:
		m->u.stop.reason_or_result = 3;
		break;
	case PPTP_STOPCCRP:
		m->u.stop.reason_or_result = 2;
		m->u.stop.error = 4;
		break;
	case PPTP_ECHORQ:
		m->u.echo.id = 0xdeadbeef;
		break;
	case PPTP_ECHORP:
		m->u.echo.id = 0xcafef00d;
		m->u.echo.result = 2;
		m->u.echo.error = 1;
		break;
	case PPTP_OCRQ:
		m->u.ocrq.call_id = 0x1234;
		m->u.ocrq.serial = 0x5678;
		m->u.ocrq.min_bps = 300;
		m->u.ocrq.max_bps = 100000000;
		m->u.ocrq.bearer = 3;
		m->u.ocrq.framing = 3;
		m->u.ocrq.window = 64;
		m->u.ocrq.delay = 7;
		strcpy(m->u.ocrq.phone, "5551234");
		strcpy(m->u.ocrq.subaddr, "{6F1B6F0C-0000-4C4D-9E7A-1234567890AB}");
		break;
	case PPTP_OCRP:
		m->u.ocrp.call_id = 0xa1a2;
		m->u.ocrp.peer_call_id = 0xb1b2;
		m->u.ocrp.result = 1;
		m->u.ocrp.error = 0;
		m->u.ocrp.cause = 0xc1c2;
		m->u.ocrp.speed = 0xd1d2d3d4;
		m->u.ocrp.window = 0xe1e2;
		m->u.ocrp.delay = 0xf1f2;
		m->u.ocrp.channel = 0x01020304;
		break;
	case PPTP_ICRQ:
		m->u.icrq.call_id = 0x1111;
		m->u.icrq.serial = 0x2222;
		m->u.icrq.bearer = 0x33333333;
		m->u.icrq.channel = 0x44444444;
		strcpy(m->u.icrq.dialed, "123");
		memset(m->u.icrq.dialing, '9', PPTP_PHONE_LEN);
		strcpy(m->u.icrq.subaddr, "sub");
		break;
	case PPTP_ICRP:
		m->u.icrp.call_id = 0x0102;
		m->u.icrp.peer_call_id = 0x0304;
		m->u.icrp.result = 3;
		m->u.icrp.error = 5;
		m->u.icrp.window = 0x0506;
		m->u.icrp.delay = 0x0708;
		break;
	case PPTP_ICCN:
		m->u.iccn.peer_call_id = 0x8001;
		m->u.iccn.speed = 64000;
		m->u.iccn.window = 16;
		m->u.iccn.delay = 2;
		m->u.iccn.framing = 1;
		break;
	case PPTP_CCRQ:
		m->u.ccrq.call_id = 0xfffe;
		break;
	case PPTP_CDN:
		m->u.cdn.call_id = 0x4242;
		m->u.cdn.result = 2;
		m->u.cdn.error = 4;
		m->u.cdn.cause = 0x1234;
		memset(m->u.cdn.stats, 's', PPTP_STATS_LEN);
		break;
	case PPTP_WEN:
		m->u.wen.peer_call_id = 0x7777;
		m->u.wen.crc = 1;
		m->u.wen.framing = 2;
		m->u.wen.hw_overrun = 3;
		m->u.wen.buffer_overrun = 4;
		m->u.wen.timeout = 5;
		m->u.wen.alignment = 0xffffffff;
		break;
	case PPTP_SLI:
		m->u.sli.peer_call_id = 0x9999;
		m->u.sli.send_accm = 0xffffffff;
		m->u.sli.recv_accm = 0x000a0000;
		break;
	}
}

static void
test_len_and_name(void **state)
{
	(void)state;
	for (unsigned t = 1; t <= PPTP_TYPE_MAX; t++) {
		assert_int_equal(msg_len(t), rfc_len[t]);
		assert_string_not_equal(msg_name(t), "unknown");
	}
	assert_int_equal(msg_len(0), 0);
	assert_int_equal(msg_len(16), 0);
	assert_int_equal(msg_len(0xffffffffu), 0);
	assert_string_equal(msg_name(0), "unknown");
	assert_string_equal(msg_name(16), "unknown");
	assert_string_equal(msg_name(PPTP_SCCRQ), "SCCRQ");
	assert_string_equal(msg_name(PPTP_SLI), "SLI");
}

/* Encode, check the header bytes, frame, decode: the result must equal the
 * input field by field (whole-struct compare: both were zeroed first). */
static void
test_roundtrip(void **state)
{
	unsigned type = *(const unsigned *)*state;
	struct pptp_msg in, out;
	uint8_t buf[PPTP_MAX_MSG_LEN + 8];
	const char *reason = NULL;
	size_t len;

	fill(type, &in);
	len = msg_encode(&in, buf, sizeof(buf));
	assert_int_equal(len, rfc_len[type]);
	assert_int_equal(buf[0] << 8 | buf[1], rfc_len[type]);
	assert_int_equal(buf[2] << 8 | buf[3], 1);
	assert_memory_equal(buf + 4, "\x1a\x2b\x3c\x4d", 4);
	assert_int_equal(buf[8] << 8 | buf[9], type);
	assert_int_equal(buf[10] | buf[11], 0);

	assert_int_equal(msg_frame(buf, len, &reason), (ssize_t)len);
	assert_int_equal(msg_decode(buf, len, &out, &reason), 0);
	assert_memory_equal(&in, &out, sizeof(in));
}

/* Where fill()'s values must land, per RFC 2637 section 2 (offsets from
 * the start of the message, width in octets). Every byte not listed here
 * must be zero, apart from the header and strings. */
struct field { unsigned type; size_t off, width; uint32_t value; };

static const struct field fields[] = {
	{ PPTP_SCCRQ, 12, 2, 0x0100 }, { PPTP_SCCRQ, 16, 4, 0x01020304 },
	{ PPTP_SCCRQ, 20, 4, 0x05060708 }, { PPTP_SCCRQ, 24, 2, 0x090a },
	{ PPTP_SCCRQ, 26, 2, 0x0b0c },
	{ PPTP_SCCRP, 12, 2, 0x0100 }, { PPTP_SCCRP, 14, 1, 2 },
	{ PPTP_SCCRP, 15, 1, 6 }, { PPTP_SCCRP, 16, 4, 0x01020304 },
	{ PPTP_SCCRP, 20, 4, 0x05060708 }, { PPTP_SCCRP, 24, 2, 0x090a },
	{ PPTP_SCCRP, 26, 2, 0x0b0c },
	{ PPTP_STOPCCRQ, 12, 1, 3 },
	{ PPTP_STOPCCRP, 12, 1, 2 }, { PPTP_STOPCCRP, 13, 1, 4 },
	{ PPTP_ECHORQ, 12, 4, 0xdeadbeef },
	{ PPTP_ECHORP, 12, 4, 0xcafef00d }, { PPTP_ECHORP, 16, 1, 2 },
	{ PPTP_ECHORP, 17, 1, 1 },
	{ PPTP_OCRQ, 12, 2, 0x1234 }, { PPTP_OCRQ, 14, 2, 0x5678 },
	{ PPTP_OCRQ, 16, 4, 300 }, { PPTP_OCRQ, 20, 4, 100000000 },
	{ PPTP_OCRQ, 24, 4, 3 }, { PPTP_OCRQ, 28, 4, 3 },
	{ PPTP_OCRQ, 32, 2, 64 }, { PPTP_OCRQ, 34, 2, 7 },
	{ PPTP_OCRQ, 36, 2, 7 },
	{ PPTP_OCRP, 12, 2, 0xa1a2 }, { PPTP_OCRP, 14, 2, 0xb1b2 },
	{ PPTP_OCRP, 16, 1, 1 }, { PPTP_OCRP, 18, 2, 0xc1c2 },
	{ PPTP_OCRP, 20, 4, 0xd1d2d3d4 }, { PPTP_OCRP, 24, 2, 0xe1e2 },
	{ PPTP_OCRP, 26, 2, 0xf1f2 }, { PPTP_OCRP, 28, 4, 0x01020304 },
	{ PPTP_ICRQ, 12, 2, 0x1111 }, { PPTP_ICRQ, 14, 2, 0x2222 },
	{ PPTP_ICRQ, 16, 4, 0x33333333 }, { PPTP_ICRQ, 20, 4, 0x44444444 },
	{ PPTP_ICRQ, 24, 2, 3 }, { PPTP_ICRQ, 26, 2, 64 },
	{ PPTP_ICRP, 12, 2, 0x0102 }, { PPTP_ICRP, 14, 2, 0x0304 },
	{ PPTP_ICRP, 16, 1, 3 }, { PPTP_ICRP, 17, 1, 5 },
	{ PPTP_ICRP, 18, 2, 0x0506 }, { PPTP_ICRP, 20, 2, 0x0708 },
	{ PPTP_ICCN, 12, 2, 0x8001 }, { PPTP_ICCN, 16, 4, 64000 },
	{ PPTP_ICCN, 20, 2, 16 }, { PPTP_ICCN, 22, 2, 2 },
	{ PPTP_ICCN, 24, 4, 1 },
	{ PPTP_CCRQ, 12, 2, 0xfffe },
	{ PPTP_CDN, 12, 2, 0x4242 }, { PPTP_CDN, 14, 1, 2 },
	{ PPTP_CDN, 15, 1, 4 }, { PPTP_CDN, 16, 2, 0x1234 },
	{ PPTP_WEN, 12, 2, 0x7777 }, { PPTP_WEN, 16, 4, 1 },
	{ PPTP_WEN, 20, 4, 2 }, { PPTP_WEN, 24, 4, 3 },
	{ PPTP_WEN, 28, 4, 4 }, { PPTP_WEN, 32, 4, 5 },
	{ PPTP_WEN, 36, 4, 0xffffffff },
	{ PPTP_SLI, 12, 2, 0x9999 }, { PPTP_SLI, 16, 4, 0xffffffff },
	{ PPTP_SLI, 20, 4, 0x000a0000 },
};

/* String fields: type, offset, width. */
static const struct field strings[] = {
	{ PPTP_SCCRQ, 28, 64, 0 }, { PPTP_SCCRQ, 92, 64, 0 },
	{ PPTP_SCCRP, 28, 64, 0 }, { PPTP_SCCRP, 92, 64, 0 },
	{ PPTP_OCRQ, 40, 64, 0 }, { PPTP_OCRQ, 104, 64, 0 },
	{ PPTP_ICRQ, 28, 64, 0 }, { PPTP_ICRQ, 92, 64, 0 },
	{ PPTP_ICRQ, 156, 64, 0 }, { PPTP_CDN, 20, 128, 0 },
};

static uint32_t
rd(const uint8_t *b, size_t off, size_t width)
{
	uint32_t v = 0;

	for (size_t i = 0; i < width; i++)
		v = v << 8 | b[off + i];
	return v;
}

static void
test_field_offsets(void **state)
{
	(void)state;
	for (unsigned t = 1; t <= PPTP_TYPE_MAX; t++) {
		uint8_t buf[PPTP_MAX_MSG_LEN], seen[PPTP_MAX_MSG_LEN] = { 0 };
		struct pptp_msg m;

		fill(t, &m);
		assert_int_equal(msg_encode(&m, buf, sizeof(buf)), rfc_len[t]);
		memset(seen, 1, PPTP_HDR_LEN);
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			const struct field *f = &fields[i];

			if (f->type != t)
				continue;
			assert_int_equal(rd(buf, f->off, f->width), f->value);
			memset(seen + f->off, 1, f->width);
		}
		for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
			if (strings[i].type == t)
				memset(seen + strings[i].off, 1, strings[i].width);
		for (size_t i = 0; i < rfc_len[t]; i++)
			if (!seen[i])
				assert_int_equal(buf[i], 0);    /* reserved */
	}
	/* Spot checks of the strings' positions. */
	{
		struct pptp_msg m;
		uint8_t buf[PPTP_MAX_MSG_LEN];

		fill(PPTP_ICRQ, &m);
		msg_encode(&m, buf, sizeof(buf));
		assert_memory_equal(buf + 28, "123", 4);
		assert_int_equal(buf[92], '9');
		assert_int_equal(buf[155], '9');
		assert_memory_equal(buf + 156, "sub", 4);
		fill(PPTP_SCCRQ, &m);
		msg_encode(&m, buf, sizeof(buf));
		assert_memory_equal(buf + 28, "host.example", 13);
		assert_int_equal(buf[92], 'v');
		assert_int_equal(buf[155], 'v');
		fill(PPTP_OCRQ, &m);
		msg_encode(&m, buf, sizeof(buf));
		assert_memory_equal(buf + 40, "5551234", 8);
		assert_memory_equal(buf + 104, "{6F1B", 5);
	}
}

/* SCCRP as Poptop sends it, built octet by octet from RFC 2637 2.2. */
static void
test_sccrp_bytes(void **state)
{
	uint8_t want[156] = {
		0x00, 0x9c, 0x00, 0x01, 0x1a, 0x2b, 0x3c, 0x4d,
		0x00, 0x02, 0x00, 0x00,
		0x01, 0x00,             /* version 1.0 */
		0x01, 0x00,             /* result ok, error none */
		0x00, 0x00, 0x00, 0x03, /* framing async|sync */
		0x00, 0x00, 0x00, 0x02, /* bearer digital */
		0x00, 0x01,             /* max channels */
		0x12, 0x34,             /* firmware */
		'l', 'o', 'c', 'a', 'l',
	};
	struct pptp_msg m = { .type = PPTP_SCCRP };
	uint8_t buf[200];

	(void)state;
	memcpy(want + 92, "linux", 5);
	m.u.sccr.version = PPTP_VERSION;
	m.u.sccr.result = PPTP_SCCRP_OK;
	m.u.sccr.error = PPTP_ERR_NONE;
	m.u.sccr.framing = PPTP_FRAMING_ASYNC | PPTP_FRAMING_SYNC;
	m.u.sccr.bearer = PPTP_BEARER_DIGITAL;
	m.u.sccr.max_channels = 1;
	m.u.sccr.firmware = 0x1234;
	strcpy(m.u.sccr.hostname, "local");
	strcpy(m.u.sccr.vendor, "linux");
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(msg_encode(&m, buf, sizeof(buf)), 156);
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(buf[156], 0xaa);       /* nothing written past */
}

/* OCRP, RFC 2637 2.8. */
static void
test_ocrp_bytes(void **state)
{
	static const uint8_t want[32] = {
		0x00, 0x20, 0x00, 0x01, 0x1a, 0x2b, 0x3c, 0x4d,
		0x00, 0x08, 0x00, 0x00,
		0xbe, 0xef,             /* call id */
		0x12, 0x34,             /* peer's call id */
		0x02, 0x04,             /* result general error, no-resource */
		0x00, 0x05,             /* cause */
		0x05, 0xf5, 0xe1, 0x00, /* speed 100000000 */
		0x00, 0x40,             /* window 64 */
		0x00, 0x00,             /* delay */
		0x00, 0x00, 0x00, 0x07, /* physical channel */
	};
	struct pptp_msg m = { .type = PPTP_OCRP }, d;
	uint8_t buf[32];

	(void)state;
	m.u.ocrp.call_id = 0xbeef;
	m.u.ocrp.peer_call_id = 0x1234;
	m.u.ocrp.result = PPTP_OCRP_GENERAL_ERROR;
	m.u.ocrp.error = PPTP_ERR_NO_RESOURCE;
	m.u.ocrp.cause = 5;
	m.u.ocrp.speed = 100000000;
	m.u.ocrp.window = 64;
	m.u.ocrp.channel = 7;
	assert_int_equal(msg_encode(&m, buf, sizeof(buf)), 32);
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(msg_decode(want, sizeof(want), &d, NULL), 0);
	assert_memory_equal(&m, &d, sizeof(m));
}

/* The SCCRQ a Windows client sends (REFERENCE section 3), hand-built. */
static void
test_sccrq_windows_decode(void **state)
{
	uint8_t b[156] = { 0 };
	struct pptp_msg m;
	const char *reason = "unset";

	(void)state;
	hdr(b, 156, PPTP_SCCRQ);
	w16(b, 12, 0x0100);
	w16(b, 14, 0xffff);     /* Reserved1: must be ignored */
	w32(b, 16, 1);
	w32(b, 20, 1);
	w16(b, 24, 0);
	w16(b, 26, 0);
	memcpy(b + 92, "Microsoft", 9);
	assert_int_equal(msg_decode(b, sizeof(b), &m, &reason), 0);
	assert_int_equal(m.type, PPTP_SCCRQ);
	assert_int_equal(m.u.sccr.version, PPTP_VERSION);
	assert_int_equal(m.u.sccr.result, 0);
	assert_int_equal(m.u.sccr.error, 0);
	assert_int_equal(m.u.sccr.framing, 1);
	assert_int_equal(m.u.sccr.bearer, 1);
	assert_string_equal(m.u.sccr.hostname, "");
	assert_string_equal(m.u.sccr.vendor, "Microsoft");
	assert_string_equal(reason, "unset");   /* untouched on success */
}

/* OCRQ as Windows sends it: the field offsets of RFC 2637 2.7. */
static void
test_ocrq_decode(void **state)
{
	uint8_t b[168] = { 0 };
	struct pptp_msg m;

	(void)state;
	hdr(b, 168, PPTP_OCRQ);
	w16(b, 12, 0x4321);
	w16(b, 14, 1);
	w32(b, 16, 300);
	w32(b, 20, 100000000);
	w32(b, 24, 3);
	w32(b, 28, 3);
	w16(b, 32, 64);
	w16(b, 34, 0);
	w16(b, 36, 60);         /* phone length lies: ignored */
	memcpy(b + 104, "{GUID}", 6);
	assert_int_equal(msg_decode(b, sizeof(b), &m, NULL), 0);
	assert_int_equal(m.u.ocrq.call_id, 0x4321);
	assert_int_equal(m.u.ocrq.serial, 1);
	assert_int_equal(m.u.ocrq.min_bps, 300);
	assert_int_equal(m.u.ocrq.max_bps, 100000000);
	assert_int_equal(m.u.ocrq.bearer, 3);
	assert_int_equal(m.u.ocrq.framing, 3);
	assert_int_equal(m.u.ocrq.window, 64);
	assert_string_equal(m.u.ocrq.phone, "");
	assert_string_equal(m.u.ocrq.subaddr, "{GUID}");
}

static void
test_small_bytes(void **state)
{
	static const uint8_t stop[16] = {
		0x00, 0x10, 0x00, 0x01, 0x1a, 0x2b, 0x3c, 0x4d,
		0x00, 0x04, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	};
	static const uint8_t echorp[20] = {
		0x00, 0x14, 0x00, 0x01, 0x1a, 0x2b, 0x3c, 0x4d,
		0x00, 0x06, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04,
		0x01, 0x00, 0x00, 0x00,
	};
	static const uint8_t sli[24] = {
		0x00, 0x18, 0x00, 0x01, 0x1a, 0x2b, 0x3c, 0x4d,
		0x00, 0x0f, 0x00, 0x00, 0xab, 0xcd, 0x00, 0x00,
		0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
	};
	struct pptp_msg m;
	uint8_t buf[32];

	(void)state;
	memset(&m, 0, sizeof(m));
	m.type = PPTP_STOPCCRP;
	m.u.stop.reason_or_result = PPTP_STOP_OK;
	assert_int_equal(msg_encode(&m, buf, sizeof(buf)), 16);
	assert_memory_equal(buf, stop, 16);

	memset(&m, 0, sizeof(m));
	m.type = PPTP_ECHORP;
	m.u.echo.id = 0x01020304;
	m.u.echo.result = PPTP_ECHO_OK;
	assert_int_equal(msg_encode(&m, buf, sizeof(buf)), 20);
	assert_memory_equal(buf, echorp, 20);

	assert_int_equal(msg_decode(sli, sizeof(sli), &m, NULL), 0);
	assert_int_equal(m.type, PPTP_SLI);
	assert_int_equal(m.u.sli.peer_call_id, 0xabcd);
	assert_int_equal(m.u.sli.send_accm, 0xffffffff);
	assert_int_equal(m.u.sli.recv_accm, 0);
}

/* CVE-2003-0213 was lengths 0 and 1; also every near miss of every type. */
static void
test_wrong_lengths(void **state)
{
	(void)state;
	for (unsigned t = 1; t <= PPTP_TYPE_MAX; t++) {
		const uint16_t bad[] = { 0, 1, 11, 12, (uint16_t)(rfc_len[t] - 1),
		    (uint16_t)(rfc_len[t] + 1), 220 == rfc_len[t] ? 156 : 220,
		    65535 };
		uint8_t b[PPTP_MAX_MSG_LEN + 1] = { 0 };
		struct pptp_msg m;

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			const char *reason = NULL;

			hdr(b, bad[i], (uint16_t)t);
			assert_int_equal(msg_frame(b, sizeof(b), &reason), -1);
			assert_string_equal(reason,
			    "length does not match the control message type");
			reason = NULL;
			assert_int_equal(msg_decode(b, sizeof(b), &m, &reason), -1);
			assert_non_null(reason);
			assert_int_equal(m.type, 0);
		}
		hdr(b, (uint16_t)rfc_len[t], (uint16_t)t);
		assert_int_equal(msg_frame(b, PPTP_HDR_LEN, NULL), (ssize_t)rfc_len[t]);
	}
}

static void
test_wrong_magic(void **state)
{
	uint8_t b[16];
	const char *reason = NULL;
	struct pptp_msg m;

	(void)state;
	hdr(b, 16, PPTP_ECHORQ);
	memset(b + 12, 0, 4);
	b[7] ^= 0x01;
	assert_int_equal(msg_frame(b, sizeof(b), &reason), -1);
	assert_string_equal(reason, "bad magic cookie");
	w32(b, 4, 0x4d3c2b1a);  /* byte-swapped */
	assert_int_equal(msg_frame(b, sizeof(b), &reason), -1);
	assert_string_equal(reason, "bad magic cookie");
	reason = NULL;
	assert_int_equal(msg_decode(b, sizeof(b), &m, &reason), -1);
	assert_string_equal(reason, "bad magic cookie");
}

static void
test_wrong_message_type(void **state)
{
	const uint16_t bad[] = { 0, 2, 0x0100, 0xffff };
	uint8_t b[16];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *reason = NULL;

		hdr(b, 16, PPTP_CCRQ);
		memset(b + 12, 0, 4);
		w16(b, 2, bad[i]);
		assert_int_equal(msg_frame(b, sizeof(b), &reason), -1);
		assert_string_equal(reason, "PPTP message type is not 1 (control)");
	}
}

static void
test_unknown_control_type(void **state)
{
	const uint16_t bad[] = { 0, 16, 17, 0x00ff, 0x0100, 0x8000, 0xffff };
	uint8_t b[PPTP_MAX_MSG_LEN] = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const uint16_t lens[] = { 0, 16, 156, 220 };

		for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			const char *reason = NULL;
			struct pptp_msg m;

			hdr(b, lens[j], bad[i]);
			assert_int_equal(msg_frame(b, sizeof(b), &reason), -1);
			assert_string_equal(reason, "unknown control message type");
			assert_int_equal(msg_decode(b, sizeof(b), &m, &reason), -1);
		}
	}
}

/* Fewer than 12 bytes is "need more", whatever the bytes are. */
static void
test_partial_header(void **state)
{
	uint8_t good[16], junk[12];
	const char *reason = "unset";
	struct pptp_msg m;

	(void)state;
	hdr(good, 16, PPTP_ECHORQ);
	memset(junk, 0xff, sizeof(junk));
	for (size_t n = 0; n < PPTP_HDR_LEN; n++) {
		assert_int_equal(msg_frame(good, n, &reason), 0);
		assert_int_equal(msg_frame(junk, n, &reason), 0);
		assert_string_equal(reason, "unset");
		assert_int_equal(msg_decode(good, n, &m, &reason), -1);
		assert_string_equal(reason, "truncated header");
		reason = "unset";
	}
	assert_int_equal(msg_frame(NULL, 0, NULL), 0);
	assert_int_equal(msg_frame(good, PPTP_HDR_LEN, NULL), 16);
	assert_int_equal(msg_frame(junk, PPTP_HDR_LEN, &reason), -1);
}

/* A valid header with the body not all there yet. */
static void
test_decode_truncated(void **state)
{
	uint8_t b[PPTP_MAX_MSG_LEN] = { 0 };
	const char *reason = NULL;
	struct pptp_msg m;

	(void)state;
	for (unsigned t = 1; t <= PPTP_TYPE_MAX; t++) {
		hdr(b, (uint16_t)rfc_len[t], (uint16_t)t);
		for (size_t n = PPTP_HDR_LEN; n < rfc_len[t]; n++) {
			assert_int_equal(msg_decode(b, n, &m, &reason), -1);
			assert_string_equal(reason, "truncated message");
		}
		assert_int_equal(msg_decode(b, rfc_len[t], &m, &reason), 0);
		assert_int_equal(m.type, t);
	}
}

/* Trailing bytes of the next message in the stream are not read. */
static void
test_stream_of_two(void **state)
{
	struct pptp_msg a, c, d;
	uint8_t buf[64];
	size_t n;
	ssize_t f;

	(void)state;
	fill(PPTP_ECHORQ, &a);
	fill(PPTP_SLI, &c);
	n = msg_encode(&a, buf, sizeof(buf));
	n += msg_encode(&c, buf + n, sizeof(buf) - n);
	assert_int_equal(n, 40);
	f = msg_frame(buf, n, NULL);
	assert_int_equal(f, 16);
	assert_int_equal(msg_decode(buf, n, &d, NULL), 0);
	assert_memory_equal(&a, &d, sizeof(a));
	assert_int_equal(msg_frame(buf + f, n - (size_t)f, NULL), 24);
	assert_int_equal(msg_decode(buf + f, n - (size_t)f, &d, NULL), 0);
	assert_memory_equal(&c, &d, sizeof(c));
}

static void
test_reserved_ignored(void **state)
{
	struct pptp_msg in, out;
	uint8_t buf[PPTP_MAX_MSG_LEN];

	(void)state;
	fill(PPTP_CCRQ, &in);
	assert_int_equal(msg_encode(&in, buf, sizeof(buf)), 16);
	buf[10] = buf[11] = 0xff;       /* Reserved0 */
	buf[14] = buf[15] = 0xff;       /* Reserved1 */
	assert_int_equal(msg_decode(buf, 16, &out, NULL), 0);
	assert_memory_equal(&in, &out, sizeof(in));

	fill(PPTP_ICRP, &in);
	assert_int_equal(msg_encode(&in, buf, sizeof(buf)), 24);
	buf[22] = buf[23] = 0x55;
	assert_int_equal(msg_decode(buf, 24, &out, NULL), 0);
	assert_memory_equal(&in, &out, sizeof(in));

	/* The RQ forms carry Reserved1 where the RP forms carry codes. */
	fill(PPTP_STOPCCRQ, &in);
	assert_int_equal(msg_encode(&in, buf, sizeof(buf)), 16);
	buf[13] = 0x77;
	assert_int_equal(msg_decode(buf, 16, &out, NULL), 0);
	assert_int_equal(out.u.stop.error, 0);
}

/* Fields a type does not carry are not written, even if set. */
static void
test_encode_ignores_foreign_fields(void **state)
{
	struct pptp_msg m;
	uint8_t buf[PPTP_MAX_MSG_LEN];

	(void)state;
	fill(PPTP_SCCRQ, &m);
	m.u.sccr.result = 9;
	m.u.sccr.error = 9;
	assert_int_equal(msg_encode(&m, buf, sizeof(buf)), 156);
	assert_int_equal(buf[14], 0);
	assert_int_equal(buf[15], 0);

	fill(PPTP_ECHORQ, &m);
	m.u.echo.result = 9;
	assert_int_equal(msg_encode(&m, buf, sizeof(buf)), 16);

	fill(PPTP_STOPCCRQ, &m);
	m.u.stop.error = 9;
	assert_int_equal(msg_encode(&m, buf, sizeof(buf)), 16);
	assert_int_equal(buf[13], 0);
}

static void
test_strings(void **state)
{
	uint8_t b[156] = { 0 };
	struct pptp_msg m;

	(void)state;
	hdr(b, 156, PPTP_SCCRP);
	memset(b + 28, 'h', 64);        /* full field, no NUL */
	memcpy(b + 92, "ven\0dor", 7);  /* stops at the first NUL */
	assert_int_equal(msg_decode(b, sizeof(b), &m, NULL), 0);
	assert_int_equal(strlen(m.u.sccr.hostname), 64);
	assert_string_equal(m.u.sccr.vendor, "ven");

	/* Control and high bytes are made harmless for logs. */
	memcpy(b + 28, "a\nb\rc\x1b[31m\x7f\xff", 12);
	b[40] = 0;
	assert_int_equal(msg_decode(b, sizeof(b), &m, NULL), 0);
	assert_string_equal(m.u.sccr.hostname, "a?b?c?[31m??");
}

static void
test_encode_strings(void **state)
{
	struct pptp_msg m;
	uint8_t buf[PPTP_MAX_MSG_LEN];

	(void)state;
	memset(&m, 0, sizeof(m));
	m.type = PPTP_CDN;
	/* Not terminated at all: only the field's 128 octets may be read. */
	memset(m.u.cdn.stats, 'x', sizeof(m.u.cdn.stats));
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(msg_encode(&m, buf, sizeof(buf)), 148);
	for (size_t i = 20; i < 148; i++)
		assert_int_equal(buf[i], 'x');
	assert_int_equal(buf[148], 0xaa);

	memset(&m, 0, sizeof(m));
	m.type = PPTP_OCRQ;
	strcpy(m.u.ocrq.phone, "12345");
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(msg_encode(&m, buf, sizeof(buf)), 168);
	assert_int_equal(buf[36] << 8 | buf[37], 5);    /* phone length */
	assert_memory_equal(buf + 40, "12345", 5);
	for (size_t i = 45; i < 168; i++)
		assert_int_equal(buf[i], 0);            /* zero padding */

	memset(&m, 0, sizeof(m));
	m.type = PPTP_ICRQ;
	strcpy(m.u.icrq.dialed, "1");
	strcpy(m.u.icrq.dialing, "22");
	assert_int_equal(msg_encode(&m, buf, sizeof(buf)), 220);
	assert_int_equal(buf[24] << 8 | buf[25], 1);
	assert_int_equal(buf[26] << 8 | buf[27], 2);
	assert_int_equal(buf[28], '1');
	assert_memory_equal(buf + 92, "22", 2);
}

static void
test_encode_errors(void **state)
{
	struct pptp_msg m;
	uint8_t buf[PPTP_MAX_MSG_LEN];

	(void)state;
	for (unsigned t = 1; t <= PPTP_TYPE_MAX; t++) {
		fill(t, &m);
		memset(buf, 0xaa, sizeof(buf));
		assert_int_equal(msg_encode(&m, buf, rfc_len[t] - 1), 0);
		assert_int_equal(buf[0], 0xaa);
		assert_int_equal(msg_encode(&m, buf, rfc_len[t]), rfc_len[t]);
		assert_int_equal(msg_encode(&m, NULL, 0), 0);
	}
	memset(&m, 0, sizeof(m));
	assert_int_equal(msg_encode(&m, buf, sizeof(buf)), 0);
	m.type = 16;
	assert_int_equal(msg_encode(&m, buf, sizeof(buf)), 0);
	m.type = 0xffff;
	assert_int_equal(msg_encode(&m, buf, sizeof(buf)), 0);
}

/* Random bodies behind valid headers, and random headers: decode must
 * succeed or fail cleanly, and strings must stay bounded and printable
 * (ASan/valgrind watch the reads). */
static void
test_random_bytes(void **state)
{
	uint32_t x = 0x12345678;
	uint8_t b[PPTP_MAX_MSG_LEN + 4];
	struct pptp_msg m;

	(void)state;
	for (int iter = 0; iter < 20000; iter++) {
		unsigned t = (unsigned)iter % PPTP_TYPE_MAX + 1;

		for (size_t i = 0; i < sizeof(b); i++) {
			x = x * 1103515245u + 12345u;
			b[i] = (uint8_t)(x >> 16);
		}
		if (iter & 1)
			hdr(b, (uint16_t)rfc_len[t], (uint16_t)t);
		if (msg_decode(b, rfc_len[t], &m, NULL) < 0) {
			assert_false(iter & 1);
			continue;
		}
		if (m.type == PPTP_SCCRQ || m.type == PPTP_SCCRP) {
			assert_true(strlen(m.u.sccr.hostname) <= PPTP_HOSTNAME_LEN);
			for (const char *p = m.u.sccr.vendor; *p; p++)
				assert_true(*p >= 0x20 && *p < 0x7f);
		}
	}
}

int
main(void)
{
	struct CMUnitTest tests[] = {
		cmocka_unit_test(test_len_and_name),
		cmocka_unit_test(test_field_offsets),
		cmocka_unit_test(test_sccrp_bytes),
		cmocka_unit_test(test_ocrp_bytes),
		cmocka_unit_test(test_sccrq_windows_decode),
		cmocka_unit_test(test_ocrq_decode),
		cmocka_unit_test(test_small_bytes),
		cmocka_unit_test(test_wrong_lengths),
		cmocka_unit_test(test_wrong_magic),
		cmocka_unit_test(test_wrong_message_type),
		cmocka_unit_test(test_unknown_control_type),
		cmocka_unit_test(test_partial_header),
		cmocka_unit_test(test_decode_truncated),
		cmocka_unit_test(test_stream_of_two),
		cmocka_unit_test(test_reserved_ignored),
		cmocka_unit_test(test_encode_ignores_foreign_fields),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_encode_strings),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_random_bytes),
#define RT(i, n) { "test_roundtrip_" n, test_roundtrip, NULL, NULL, \
		(void *)&all_types[i] }
		RT(0, "SCCRQ"), RT(1, "SCCRP"), RT(2, "StopCCRQ"),
		RT(3, "StopCCRP"), RT(4, "EchoRequest"), RT(5, "EchoReply"),
		RT(6, "OCRQ"), RT(7, "OCRP"), RT(8, "ICRQ"), RT(9, "ICRP"),
		RT(10, "ICCN"), RT(11, "CCRQ"), RT(12, "CDN"), RT(13, "WEN"),
		RT(14, "SLI"),
#undef RT
	};

	return cmocka_run_group_tests_name("msg", tests, NULL, NULL);
}
