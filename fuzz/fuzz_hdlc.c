/* Fuzz the async HDLC stream decoder (gre/hdlc.c), which sees whatever pppd
 * (or anything else holding the pty) writes, and its encoder.
 *
 *  1. Differential: the input decoded in one call and decoded in reads cut
 *     at arbitrary points must give the same frames and the same counters.
 *  2. Round trip: the input cut into frames of arbitrary sizes, encoded
 *     with an arbitrary ACCM and decoded again (in arbitrary reads), must
 *     give back exactly those frames (the ones of 2..HDLC_MAX_FRAME-2
 *     octets; shorter ones are runts), and the encoded bytes must carry no
 *     FLAG inside a frame and no raw control character the ACCM escapes.
 *
 * Input: 2 bytes of cut-point seed, 4 bytes of ACCM, then the data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_util.h"
#include "gre/hdlc.h"

#define MAX_FRAMES 4096

struct sink {
	uint8_t *data;     /* frames concatenated */
	size_t   len, cap;
	size_t   lens[MAX_FRAMES];
	size_t   n;
	int      overflowed;
};

static void
sink_fn(void *arg, const uint8_t *frame, size_t len)
{
	struct sink *s = arg;
	if (len + HDLC_FCS_LEN < HDLC_MIN_FRAME || len > HDLC_MAX_FRAME - HDLC_FCS_LEN)
		abort();   /* delivered a runt or an over-long frame */
	/* Touch every byte: ASan checks the pointer range is real. */
	uint8_t *copy = fz_dup(frame, len);
	if (s->n == MAX_FRAMES) {
		s->overflowed = 1;
		free(copy);
		return;
	}
	if (s->len + len > s->cap) {
		s->cap = (s->len + len) * 2 + 64;
		s->data = realloc(s->data, s->cap);
		if (s->data == NULL)
			abort();
	}
	memcpy(s->data + s->len, copy, len);
	free(copy);
	s->len += len;
	s->lens[s->n++] = len;
}

static void
decode_cut(struct hdlc_decoder *d, const uint8_t *p, size_t len, uint32_t seed,
    struct sink *s)
{
	struct fz_rng rng;
	fz_rng_init(&rng, seed);
	hdlc_decoder_init(d);
	while (len > 0) {
		size_t n = fz_chunk(&rng, len);
		uint8_t *exact = fz_dup(p, n);
		hdlc_decode(d, exact, n, sink_fn, s);
		free(exact);
		p += n;
		len -= n;
	}
}

static int
same_sink(const struct sink *a, const struct sink *b)
{
	return a->n == b->n && a->len == b->len &&
	    memcmp(a->lens, b->lens, a->n * sizeof(a->lens[0])) == 0 &&
	    (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static struct sink s1, s2, s3;
static struct hdlc_decoder d1, d2;

static void
sink_reset(struct sink *s)
{
	s->len = 0;
	s->n = 0;
	s->overflowed = 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 6)
		return 0;
	uint32_t seed = (uint32_t)data[0] << 8 | data[1];
	uint32_t accm = (uint32_t)data[2] << 24 | (uint32_t)data[3] << 16 |
	    (uint32_t)data[4] << 8 | data[5];
	data += 6;
	size -= 6;

	/* 1. Whole versus cut. */
	sink_reset(&s1);
	sink_reset(&s2);
	{
		uint8_t *exact = fz_dup(data, size);
		hdlc_decoder_init(&d1);
		hdlc_decode(&d1, exact, size, sink_fn, &s1);
		free(exact);
	}
	decode_cut(&d2, data, size, seed, &s2);
	if (!same_sink(&s1, &s2))
		abort();
	/* A discarded frame that is both over-long and ends in ESCAPE FLAG is
	 * counted as an abort or as too long depending on where the reads
	 * were cut (the ESCAPE is seen, or skipped as part of the over-long
	 * frame); either way it is dropped, so only the sum must agree, and
	 * once a frame is over-long its length and escape state are moot. */
	if (d1.frames != d2.frames || d1.bad_fcs != d2.bad_fcs ||
	    d1.too_long + d1.aborts != d2.too_long + d2.aborts ||
	    d1.runts != d2.runts || d1.overflow != d2.overflow ||
	    (!d1.overflow && (d1.len != d2.len || d1.escaped != d2.escaped)))
		abort();
	if (d1.len > HDLC_MAX_FRAME)
		abort();

	/* 2. Round trip. Frame sizes come from the seed; frames are the data. */
	struct fz_rng rng;
	fz_rng_init(&rng, seed ^ 0x5555);
	size_t enc_cap = 2 * size + 4 * (size / 2 + 2) + 64;   /* generous */
	uint8_t *enc = malloc(enc_cap);
	size_t enc_len = 0, off = 0;
	struct sink expect = { 0 };
	sink_reset(&s3);
	while (off < size && expect.n < MAX_FRAMES) {
		uint32_t r = fz_rng_next(&rng);
		size_t flen;
		switch (r & 3) {
		case 0:  flen = (r >> 2) % 4; break;          /* runts and tiny */
		case 1:  flen = (r >> 2) % 64; break;
		case 2:  flen = (r >> 2) % 1600; break;
		default: flen = HDLC_MAX_FRAME - 4 + (r >> 2) % 8; break; /* edge */
		}
		if (flen > size - off)
			flen = size - off;
		const uint8_t *frame = data + off;
		off += flen;
		size_t need = HDLC_ENCODED_MAX(flen);
		if (enc_len + need > enc_cap) {
			enc_cap = (enc_len + need) * 2;
			enc = realloc(enc, enc_cap);
			if (enc == NULL)
				abort();
		}
		/* Too small a buffer: nothing written. */
		if (need > 0 && hdlc_encode(frame, flen, accm, enc + enc_len, need - 1) != 0)
			abort();
		size_t n = hdlc_encode(frame, flen, accm, enc + enc_len, need);
		if (n < flen + 4 || n > need)
			abort();
		const uint8_t *e = enc + enc_len;
		if (e[0] != HDLC_FLAG || e[n - 1] != HDLC_FLAG)
			abort();
		for (size_t i = 1; i + 1 < n; i++) {
			if (e[i] == HDLC_FLAG)
				abort();   /* a flag inside the frame */
			if (e[i] < 0x20 && ((accm >> e[i]) & 1))
				abort();   /* a control character the ACCM escapes */
		}
		enc_len += n;
		if (flen + HDLC_FCS_LEN >= HDLC_MIN_FRAME &&
		    flen <= HDLC_MAX_FRAME - HDLC_FCS_LEN)
			sink_fn(&expect, frame, flen);
	}
	struct hdlc_decoder d3;
	decode_cut(&d3, enc, enc_len, seed, &s3);
	if (!same_sink(&expect, &s3) || d3.bad_fcs != 0 || d3.aborts != 0)
		abort();
	free(expect.data);
	free(enc);
	return 0;
}
