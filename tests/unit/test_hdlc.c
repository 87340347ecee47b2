/* Unit tests for gre/hdlc.c: FCS-16, the escaping encoder and the stream
 * decoder (RFC 1662). Expected bytes are written out by hand or produced by
 * a deliberately naive reference encoder in this file, never by hdlc.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gre/hdlc.h"

#define MAXF 64

struct sink {
	size_t n;
	size_t len[MAXF];
	uint8_t data[MAXF][HDLC_MAX_FRAME];
};

static struct sink sink;

static void collect(void *arg, const uint8_t *f, size_t len)
{
	struct sink *s = arg;

	assert_true(s->n < MAXF);
	assert_true(len <= HDLC_MAX_FRAME);
	memcpy(s->data[s->n], f, len);
	s->len[s->n++] = len;
}

static int setup(void **state)
{
	(void)state;
	memset(&sink, 0, sizeof(sink));
	return 0;
}

/* Bit-at-a-time FCS straight from the definition, to check the table. */
static uint16_t fcs_slow(uint16_t fcs, const uint8_t *p, size_t len)
{
	while (len--) {
		fcs ^= *p++;
		for (int i = 0; i < 8; i++)
			fcs = (fcs & 1) ? (uint16_t)((fcs >> 1) ^ 0x8408) : (uint16_t)(fcs >> 1);
	}
	return fcs;
}

/* The obvious encoder, byte by byte. */
static size_t encode_ref(const uint8_t *f, size_t len, uint32_t accm, uint8_t *out)
{
	uint16_t fcs = fcs_slow(0xffff, f, len) ^ 0xffff;
	uint8_t all[HDLC_MAX_FRAME * 2];
	size_t n = 0, o = 0;

	memcpy(all, f, len);
	all[len] = (uint8_t)fcs;
	all[len + 1] = (uint8_t)(fcs >> 8);
	out[o++] = 0x7e;
	for (n = 0; n < len + 2; n++) {
		uint8_t c = all[n];
		if (c == 0x7e || c == 0x7d || (c < 0x20 && (accm & (1u << c)))) {
			out[o++] = 0x7d;
			out[o++] = c ^ 0x20;
		} else {
			out[o++] = c;
		}
	}
	out[o++] = 0x7e;
	return o;
}

static void fill_random(uint8_t *p, size_t len, unsigned *seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(rand_r(seed) >> 7);
}

static void test_fcs_check_value(void **state)
{
	const uint8_t msg[] = "123456789";

	(void)state;
	/* CRC-16/X.25 (the PPP FCS) check value of "123456789" is 0x906E. */
	assert_int_equal(hdlc_fcs16(HDLC_FCS_INIT, msg, 9) ^ 0xffff, 0x906e);
	assert_int_equal(hdlc_fcs16(HDLC_FCS_INIT, NULL, 0), 0xffff);
}

static void test_fcs_table_matches_definition(void **state)
{
	uint8_t b[3000];
	unsigned seed = 1;

	(void)state;
	for (unsigned c = 0; c < 256; c++) {
		uint8_t x = (uint8_t)c;
		assert_int_equal(hdlc_fcs16(0, &x, 1), fcs_slow(0, &x, 1));
	}
	fill_random(b, sizeof(b), &seed);
	for (size_t len = 0; len < sizeof(b); len += 97)
		assert_int_equal(hdlc_fcs16(0xffff, b, len), fcs_slow(0xffff, b, len));
}

static void test_fcs_good_residue(void **state)
{
	uint8_t f[40] = { 0xff, 0x03, 0xc0, 0x21, 0x01, 0x01, 0x00, 0x04 };
	uint16_t fcs;

	(void)state;
	fcs = hdlc_fcs16(0xffff, f, 8) ^ 0xffff;
	f[8] = (uint8_t)fcs;
	f[9] = (uint8_t)(fcs >> 8);
	assert_int_equal(hdlc_fcs16(0xffff, f, 10), HDLC_FCS_GOOD);
}

static void test_encode_plain(void **state)
{
	/* An LCP Configure-Request with nothing to escape under ACCM 0. */
	const uint8_t f[] = { 0xff, 0x03, 0xc0, 0x21, 0x01, 0x01, 0x00, 0x04 };
	uint8_t out[HDLC_ENCODED_MAX(sizeof(f))], ref[64];
	size_t n, rn;

	(void)state;
	n = hdlc_encode(f, sizeof(f), 0, out, sizeof(out));
	rn = encode_ref(f, sizeof(f), 0, ref);
	assert_int_equal(n, rn);
	assert_memory_equal(out, ref, n);
	assert_int_equal(out[0], 0x7e);
	assert_int_equal(out[n - 1], 0x7e);
	assert_memory_equal(out + 1, f, sizeof(f));
	/* ACCM all ones: 0x03, 0x01, 0x01, 0x00, 0x04 are escaped. */
	n = hdlc_encode(f, sizeof(f), 0xffffffff, out, sizeof(out));
	rn = encode_ref(f, sizeof(f), 0xffffffff, ref);
	assert_int_equal(n, rn);
	assert_memory_equal(out, ref, n);
	assert_int_equal(out[2], 0x7d);
	assert_int_equal(out[3], 0x23);
}

static void test_encode_escapes_flag_and_escape(void **state)
{
	const uint8_t f[] = { 0x7e, 0x41, 0x7d, 0x11, 0x13, 0x91 };
	const uint8_t want_body[] = { 0x7d, 0x5e, 0x41, 0x7d, 0x5d, 0x7d, 0x31,
	    0x13, 0x91 };
	uint8_t out[HDLC_ENCODED_MAX(sizeof(f))];
	size_t n;

	(void)state;
	/* Only XON (0x11) in the ACCM: 0x13 and 0x91 pass as they are. */
	n = hdlc_encode(f, sizeof(f), 1u << 0x11, out, sizeof(out));
	assert_true(n >= 2 + sizeof(want_body) + 2);
	assert_memory_equal(out + 1, want_body, sizeof(want_body));
}

static void test_encode_fcs_escaped(void **state)
{
	uint8_t f[2] = { 0, 0 };
	uint8_t out[HDLC_ENCODED_MAX(2)], ref[16];
	int found = 0;

	(void)state;
	/* Find a two-octet frame whose FCS contains a FLAG octet, and check the
	 * encoder escapes inside the FCS too. */
	for (unsigned v = 0; v < 65536 && !found; v++) {
		uint16_t fcs;
		f[0] = (uint8_t)v;
		f[1] = (uint8_t)(v >> 8);
		fcs = fcs_slow(0xffff, f, 2) ^ 0xffff;
		if ((fcs & 0xff) == 0x7e || (fcs >> 8) == 0x7e) {
			size_t n = hdlc_encode(f, 2, 0, out, sizeof(out));
			size_t rn = encode_ref(f, 2, 0, ref);
			assert_int_equal(n, rn);
			assert_memory_equal(out, ref, n);
			found = 1;
		}
	}
	assert_true(found);
}

static void test_encode_out_too_small(void **state)
{
	uint8_t f[10] = { 0 }, out[HDLC_ENCODED_MAX(10)];

	(void)state;
	assert_int_equal(hdlc_encode(f, 10, 0, out, sizeof(out) - 1), 0);
	assert_true(hdlc_encode(f, 10, 0, out, sizeof(out)) > 0);
}

static void test_encode_matches_reference_random(void **state)
{
	static uint8_t f[HDLC_MAX_FRAME], out[HDLC_ENCODED_MAX(HDLC_MAX_FRAME)];
	static uint8_t ref[HDLC_ENCODED_MAX(HDLC_MAX_FRAME)];
	const uint32_t accms[] = { 0, 0xffffffff, 0x000a0000, 0x80000001 };
	unsigned seed = 7;

	(void)state;
	for (int i = 0; i < 400; i++) {
		size_t len = (size_t)rand_r(&seed) % (HDLC_MAX_FRAME - 2);
		uint32_t accm = accms[i % 4];
		size_t n, rn;

		fill_random(f, len, &seed);
		if (i % 5 == 0) /* dense in specials */
			for (size_t k = 0; k < len; k++)
				f[k] = (uint8_t)(0x7c + (f[k] & 3)) ^ (uint8_t)((f[k] & 4) ? 0x7c : 0);
		n = hdlc_encode(f, len, accm, out, sizeof(out));
		rn = encode_ref(f, len, accm, ref);
		assert_int_equal(n, rn);
		assert_memory_equal(out, ref, n);
	}
}

static void test_roundtrip_all_octets(void **state)
{
	uint8_t f[256], out[HDLC_ENCODED_MAX(256)];
	size_t n;

	(void)state;
	for (int i = 0; i < 256; i++)
		f[i] = (uint8_t)i;
	n = hdlc_encode(f, sizeof(f), 0xffffffff, out, sizeof(out));
	/* Nothing but the two flags may be a raw FLAG octet. */
	for (size_t i = 1; i + 1 < n; i++)
		assert_int_not_equal(out[i], 0x7e);
	struct hdlc_decoder d;
	hdlc_decoder_init(&d);
	hdlc_decode(&d, out, n, collect, &sink);
	assert_int_equal(sink.n, 1);
	assert_int_equal(sink.len[0], 256);
	assert_memory_equal(sink.data[0], f, 256);
}

/* Encode `count` random frames back to back into buf; frames kept in fr. */
static size_t make_stream(uint8_t *buf, uint8_t fr[][HDLC_MAX_FRAME], size_t *lens,
    int count, uint32_t accm, unsigned *seed)
{
	size_t n = 0;

	for (int i = 0; i < count; i++) {
		lens[i] = 4 + (size_t)rand_r(seed) % 1500;
		fill_random(fr[i], lens[i], seed);
		n += hdlc_encode(fr[i], lens[i], accm, buf + n, HDLC_ENCODED_MAX(lens[i]));
	}
	return n;
}

static void test_decode_several_frames_one_read(void **state)
{
	static uint8_t buf[8 * HDLC_ENCODED_MAX(1600)], fr[8][HDLC_MAX_FRAME];
	size_t lens[8], n;
	unsigned seed = 3;
	struct hdlc_decoder d;

	(void)state;
	n = make_stream(buf, fr, lens, 8, 0, &seed);
	hdlc_decoder_init(&d);
	hdlc_decode(&d, buf, n, collect, &sink);
	assert_int_equal(sink.n, 8);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(sink.len[i], lens[i]);
		assert_memory_equal(sink.data[i], fr[i], lens[i]);
	}
	assert_int_equal(d.frames, 8);
	assert_int_equal(d.bad_fcs + d.runts + d.too_long + d.aborts, 0);
}

static void test_decode_split_every_position(void **state)
{
	static uint8_t buf[3 * HDLC_ENCODED_MAX(1600)], fr[3][HDLC_MAX_FRAME];
	size_t lens[3], n;
	unsigned seed = 11;

	(void)state;
	n = make_stream(buf, fr, lens, 3, 0xffffffff, &seed);
	for (size_t cut = 0; cut <= n; cut += (cut < 64 || n - cut < 64) ? 1 : 37) {
		struct hdlc_decoder d;

		memset(&sink, 0, sizeof(sink));
		hdlc_decoder_init(&d);
		hdlc_decode(&d, buf, cut, collect, &sink);
		hdlc_decode(&d, buf + cut, n - cut, collect, &sink);
		assert_int_equal(sink.n, 3);
		for (int i = 0; i < 3; i++)
			assert_memory_equal(sink.data[i], fr[i], lens[i]);
	}
}

static void test_decode_byte_by_byte(void **state)
{
	static uint8_t buf[4 * HDLC_ENCODED_MAX(1600)], fr[4][HDLC_MAX_FRAME];
	size_t lens[4], n;
	unsigned seed = 5;
	struct hdlc_decoder d;

	(void)state;
	n = make_stream(buf, fr, lens, 4, 0xffffffff, &seed);
	hdlc_decoder_init(&d);
	for (size_t i = 0; i < n; i++)
		hdlc_decode(&d, buf + i, 1, collect, &sink);
	assert_int_equal(sink.n, 4);
	for (int i = 0; i < 4; i++)
		assert_memory_equal(sink.data[i], fr[i], lens[i]);
}

static void test_decode_escape_at_end_of_read(void **state)
{
	const uint8_t f[] = { 0xff, 0x03, 0x7e, 0x7d, 0x00, 0x21 };
	uint8_t out[HDLC_ENCODED_MAX(sizeof(f))];
	size_t n, cut = 0;
	struct hdlc_decoder d;

	(void)state;
	n = hdlc_encode(f, sizeof(f), 0, out, sizeof(out));
	for (size_t i = 1; i < n; i++)
		if (out[i] == 0x7d) {
			cut = i + 1; /* the read ends right after the ESCAPE */
			break;
		}
	assert_true(cut > 0);
	hdlc_decoder_init(&d);
	hdlc_decode(&d, out, cut, collect, &sink);
	assert_int_equal(sink.n, 0);
	assert_true(d.escaped);
	hdlc_decode(&d, out + cut, n - cut, collect, &sink);
	assert_int_equal(sink.n, 1);
	assert_memory_equal(sink.data[0], f, sizeof(f));
}

static void test_decode_consecutive_flags(void **state)
{
	const uint8_t f[] = { 0xff, 0x03, 0xc0, 0x21, 0x09 };
	uint8_t out[4 + HDLC_ENCODED_MAX(sizeof(f)) + 4];
	size_t n;
	struct hdlc_decoder d;

	(void)state;
	memset(out, 0x7e, 4);
	n = 4 + hdlc_encode(f, sizeof(f), 0, out + 4, HDLC_ENCODED_MAX(sizeof(f)));
	memset(out + n, 0x7e, 4);
	n += 4;
	hdlc_decoder_init(&d);
	hdlc_decode(&d, out, n, collect, &sink);
	assert_int_equal(sink.n, 1);
	/* Empty frames are fill, not errors. */
	assert_int_equal(d.bad_fcs + d.runts + d.too_long + d.aborts, 0);
}

static void test_decode_garbage_between_frames(void **state)
{
	const uint8_t f[] = { 0xc0, 0x21, 0x05, 0x07, 0x00, 0x04 };
	const uint8_t junk[] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde };
	uint8_t buf[256];
	size_t n = 0;
	struct hdlc_decoder d;

	(void)state;
	/* junk before the first flag, then frame, junk, flag, frame */
	memcpy(buf, junk, sizeof(junk));
	n += sizeof(junk);
	n += hdlc_encode(f, sizeof(f), 0, buf + n, HDLC_ENCODED_MAX(sizeof(f)));
	memcpy(buf + n, junk, sizeof(junk));
	n += sizeof(junk);
	n += hdlc_encode(f, sizeof(f), 0, buf + n, HDLC_ENCODED_MAX(sizeof(f)));
	hdlc_decoder_init(&d);
	hdlc_decode(&d, buf, n, collect, &sink);
	assert_int_equal(sink.n, 2);
	assert_memory_equal(sink.data[1], f, sizeof(f));
	/* the junk between two flags is a bad frame; before the first flag
	 * it is no frame at all */
	assert_int_equal(d.bad_fcs, 1);
	assert_int_equal(d.preamble, sizeof(junk));
}

/* What pppd writes to a fresh pty when its options do not say nologfd:
 * its log lines, on stdout (our pty) until it has taken the line, then
 * its first LCP Configure-Request with every control character escaped
 * (the text as pppd 2.4.9 wrote it on a raw pty). Not a bad frame: the
 * text lies before the first flag. A '}' in the text (0x7d, ESCAPE)
 * escapes nothing there. */
static void test_decode_pppd_log_lines_before_first_frame(void **state)
{
	static const char text[] =
	    "Plugin /usr/local/lib/pptpd/pptpd-policy.so loaded.\n"
	    "pptpd-policy: plugin for pppd 2.4.9 loaded {x}\n";
	const uint8_t confreq[] = { 0xff, 0x03, 0xc0, 0x21, 0x01, 0x01, 0x00,
	    0x0e, 0x05, 0x06, 0x12, 0x34, 0x56, 0x78, 0x07, 0x02, 0x08, 0x02 };
	uint8_t buf[256];
	size_t n = strlen(text), cut;
	struct hdlc_decoder d;

	(void)state;
	memcpy(buf, text, n);
	n += hdlc_encode(confreq, sizeof(confreq), 0xffffffff, buf + n,
	    sizeof(buf) - n);
	/* whole, and cut at every place: the same */
	for (cut = 0; cut <= n; cut++) {
		sink.n = 0;
		hdlc_decoder_init(&d);
		hdlc_decode(&d, buf, cut, collect, &sink);
		hdlc_decode(&d, buf + cut, n - cut, collect, &sink);
		assert_int_equal(sink.n, 1);
		assert_int_equal(sink.len[0], sizeof(confreq));
		assert_memory_equal(sink.data[0], confreq, sizeof(confreq));
		assert_int_equal(d.bad_fcs + d.runts + d.too_long + d.aborts, 0);
		assert_int_equal(d.preamble, strlen(text));
	}
	/* a bad frame after the first flag is still one */
	buf[n - 4] ^= 0x01;
	sink.n = 0;
	hdlc_decoder_init(&d);
	hdlc_decode(&d, buf, n, collect, &sink);
	assert_int_equal(sink.n, 0);
	assert_int_equal(d.bad_fcs, 1);
}

static void test_decode_bad_fcs(void **state)
{
	const uint8_t f[] = { 0xff, 0x03, 0x00, 0x21, 0x45, 0x00 };
	uint8_t buf[2 * HDLC_ENCODED_MAX(sizeof(f))];
	size_t n, m;
	struct hdlc_decoder d;

	(void)state;
	n = hdlc_encode(f, sizeof(f), 0, buf, sizeof(buf));
	buf[3] ^= 0x01; /* flip one bit of the payload */
	m = hdlc_encode(f, sizeof(f), 0, buf + n, sizeof(buf) - n);
	hdlc_decoder_init(&d);
	hdlc_decode(&d, buf, n + m, collect, &sink);
	assert_int_equal(sink.n, 1);
	assert_int_equal(d.bad_fcs, 1);
	assert_int_equal(d.frames, 1);
}

static void test_decode_runts(void **state)
{
	const uint8_t buf[] = { 0x7e, 0x01, 0x7e, 0x01, 0x02, 0x7e, 0x01, 0x02,
	    0x03, 0x7e, 0x7d, 0x5e, 0x7e };
	struct hdlc_decoder d;

	(void)state;
	hdlc_decoder_init(&d);
	hdlc_decode(&d, buf, sizeof(buf), collect, &sink);
	assert_int_equal(sink.n, 0);
	assert_int_equal(d.runts, 4);
	assert_int_equal(d.bad_fcs, 0);
}

static void test_decode_minimum_frame(void **state)
{
	/* Two octets of data plus the FCS: the smallest frame accepted. */
	const uint8_t f[] = { 0xc0, 0x21 };
	uint8_t buf[HDLC_ENCODED_MAX(2)];
	size_t n;
	struct hdlc_decoder d;

	(void)state;
	n = hdlc_encode(f, 2, 0, buf, sizeof(buf));
	hdlc_decoder_init(&d);
	hdlc_decode(&d, buf, n, collect, &sink);
	assert_int_equal(sink.n, 1);
	assert_int_equal(sink.len[0], 2);
}

static void test_decode_too_long(void **state)
{
	static uint8_t f[HDLC_MAX_FRAME + 1];
	static uint8_t buf[3 * HDLC_ENCODED_MAX(HDLC_MAX_FRAME + 1)];
	size_t n = 0;
	unsigned seed = 9;
	struct hdlc_decoder d;

	(void)state;
	fill_random(f, sizeof(f), &seed);
	/* the longest accepted frame, one octet too many, then a good one */
	n += hdlc_encode(f, HDLC_MAX_FRAME - HDLC_FCS_LEN, 0, buf + n, sizeof(buf) - n);
	n += hdlc_encode(f, HDLC_MAX_FRAME - HDLC_FCS_LEN + 1, 0, buf + n, sizeof(buf) - n);
	n += hdlc_encode(f, 100, 0, buf + n, sizeof(buf) - n);
	hdlc_decoder_init(&d);
	hdlc_decode(&d, buf, n, collect, &sink);
	assert_int_equal(sink.n, 2);
	assert_int_equal(sink.len[0], HDLC_MAX_FRAME - HDLC_FCS_LEN);
	assert_int_equal(sink.len[1], 100);
	assert_int_equal(d.too_long, 1);
	assert_int_equal(d.bad_fcs, 0);
}

static void test_decode_abort_sequence(void **state)
{
	const uint8_t f[] = { 0xff, 0x03, 0xc0, 0x21, 0x01 };
	uint8_t buf[64] = { 0x7e, 0xff, 0x03, 0xc0, 0x21, 0x7d, 0x7e };
	size_t n = 7;
	struct hdlc_decoder d;

	(void)state;
	n += hdlc_encode(f, sizeof(f), 0, buf + n, sizeof(buf) - n);
	hdlc_decoder_init(&d);
	hdlc_decode(&d, buf, n, collect, &sink);
	assert_int_equal(sink.n, 1);
	assert_int_equal(d.aborts, 1);
	assert_int_equal(d.bad_fcs, 0);
}

static void test_decode_escaped_escape(void **state)
{
	/* 7d 7d decodes to 0x5d; the frame is then checked as usual. */
	uint8_t f[] = { 0x5d, 0x01, 0x02 };
	uint8_t buf[32];
	size_t n = 0;
	uint16_t fcs = hdlc_fcs16(0xffff, f, 3) ^ 0xffff;
	struct hdlc_decoder d;

	(void)state;
	buf[n++] = 0x7e;
	buf[n++] = 0x7d;
	buf[n++] = 0x7d;
	buf[n++] = 0x01;
	buf[n++] = 0x02;
	buf[n++] = (uint8_t)fcs;
	buf[n++] = (uint8_t)(fcs >> 8);
	buf[n++] = 0x7e;
	for (size_t i = 5; i < 7; i++)
		assert_true(buf[i] != 0x7e && buf[i] != 0x7d);
	hdlc_decoder_init(&d);
	hdlc_decode(&d, buf, n, collect, &sink);
	assert_int_equal(sink.n, 1);
	assert_memory_equal(sink.data[0], f, 3);
}

static void test_decode_unescaped_control_kept(void **state)
{
	const uint8_t f[] = { 0x00, 0x01, 0x11, 0x13, 0x1f };
	uint8_t buf[HDLC_ENCODED_MAX(sizeof(f))];
	size_t n;
	struct hdlc_decoder d;

	(void)state;
	n = hdlc_encode(f, sizeof(f), 0, buf, sizeof(buf));
	hdlc_decoder_init(&d);
	hdlc_decode(&d, buf, n, collect, &sink);
	assert_int_equal(sink.n, 1);
	assert_memory_equal(sink.data[0], f, sizeof(f));
}

/* Output moved to the caller's buffer mid-frame and from the callback:
 * every frame is whole, delivered from where it was put. */
static uint8_t ext[2][HDLC_MAX_FRAME];
static int flip;

static void collect_and_move(void *arg, const uint8_t *f, size_t len)
{
	struct hdlc_decoder *d = arg;

	assert_ptr_equal(f, ext[flip]);
	memcpy(sink.data[sink.n], f, len);
	sink.len[sink.n++] = len;
	flip ^= 1;
	hdlc_decoder_set_output(d, ext[flip]);
}

static void test_decode_set_output(void **state)
{
	uint8_t fr[300], enc[3 * HDLC_ENCODED_MAX(300)];
	struct hdlc_decoder d;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(fr); i++)
		fr[i] = (uint8_t)(i * 13);
	for (int i = 0; i < 3; i++)
		n += hdlc_encode(fr, sizeof(fr), 0xffffffff, enc + n,
		    HDLC_ENCODED_MAX(sizeof(fr)));
	hdlc_decoder_init(&d);
	hdlc_decode(&d, enc, 100, collect_and_move, &d);
	flip = 0;
	hdlc_decoder_set_output(&d, ext[0]);   /* partial frame moves */
	hdlc_decode(&d, enc + 100, n - 100 - 50, collect_and_move, &d);
	hdlc_decoder_set_output(&d, NULL);     /* and home again */
	hdlc_decode(&d, enc + n - 50, 50, collect, &sink);
	assert_int_equal(sink.n, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(sink.len[i], sizeof(fr));
		assert_memory_equal(sink.data[i], fr, sizeof(fr));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_fcs_check_value, setup),
		cmocka_unit_test_setup(test_fcs_table_matches_definition, setup),
		cmocka_unit_test_setup(test_fcs_good_residue, setup),
		cmocka_unit_test_setup(test_encode_plain, setup),
		cmocka_unit_test_setup(test_encode_escapes_flag_and_escape, setup),
		cmocka_unit_test_setup(test_encode_fcs_escaped, setup),
		cmocka_unit_test_setup(test_encode_out_too_small, setup),
		cmocka_unit_test_setup(test_encode_matches_reference_random, setup),
		cmocka_unit_test_setup(test_roundtrip_all_octets, setup),
		cmocka_unit_test_setup(test_decode_several_frames_one_read, setup),
		cmocka_unit_test_setup(test_decode_split_every_position, setup),
		cmocka_unit_test_setup(test_decode_byte_by_byte, setup),
		cmocka_unit_test_setup(test_decode_escape_at_end_of_read, setup),
		cmocka_unit_test_setup(test_decode_consecutive_flags, setup),
		cmocka_unit_test_setup(test_decode_garbage_between_frames, setup),
		cmocka_unit_test_setup(test_decode_pppd_log_lines_before_first_frame,
		    setup),
		cmocka_unit_test_setup(test_decode_bad_fcs, setup),
		cmocka_unit_test_setup(test_decode_runts, setup),
		cmocka_unit_test_setup(test_decode_minimum_frame, setup),
		cmocka_unit_test_setup(test_decode_too_long, setup),
		cmocka_unit_test_setup(test_decode_abort_sequence, setup),
		cmocka_unit_test_setup(test_decode_escaped_escape, setup),
		cmocka_unit_test_setup(test_decode_unescaped_control_kept, setup),
		cmocka_unit_test_setup(test_decode_set_output, setup),
	};

	return cmocka_run_group_tests_name("hdlc", tests, NULL, NULL);
}
