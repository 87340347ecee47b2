/* Async HDLC-like framing (RFC 1662) for the pty side of the engine. Both
 * directions are on the hot path, so the byte loops are built around runs:
 * find the next octet that needs attention a word at a time, then memcpy
 * the run before it. */
#include "hdlc.h"

#include <string.h>

/* FCS-16 table for the reflected polynomial 0x8408 (RFC 1662 appendix C),
 * fixed at compile time so there is no init ordering to get wrong. */
static const uint16_t fcs_tab[256] = {
	0x0000, 0x1189, 0x2312, 0x329b, 0x4624, 0x57ad, 0x6536, 0x74bf,
	0x8c48, 0x9dc1, 0xaf5a, 0xbed3, 0xca6c, 0xdbe5, 0xe97e, 0xf8f7,
	0x1081, 0x0108, 0x3393, 0x221a, 0x56a5, 0x472c, 0x75b7, 0x643e,
	0x9cc9, 0x8d40, 0xbfdb, 0xae52, 0xdaed, 0xcb64, 0xf9ff, 0xe876,
	0x2102, 0x308b, 0x0210, 0x1399, 0x6726, 0x76af, 0x4434, 0x55bd,
	0xad4a, 0xbcc3, 0x8e58, 0x9fd1, 0xeb6e, 0xfae7, 0xc87c, 0xd9f5,
	0x3183, 0x200a, 0x1291, 0x0318, 0x77a7, 0x662e, 0x54b5, 0x453c,
	0xbdcb, 0xac42, 0x9ed9, 0x8f50, 0xfbef, 0xea66, 0xd8fd, 0xc974,
	0x4204, 0x538d, 0x6116, 0x709f, 0x0420, 0x15a9, 0x2732, 0x36bb,
	0xce4c, 0xdfc5, 0xed5e, 0xfcd7, 0x8868, 0x99e1, 0xab7a, 0xbaf3,
	0x5285, 0x430c, 0x7197, 0x601e, 0x14a1, 0x0528, 0x37b3, 0x263a,
	0xdecd, 0xcf44, 0xfddf, 0xec56, 0x98e9, 0x8960, 0xbbfb, 0xaa72,
	0x6306, 0x728f, 0x4014, 0x519d, 0x2522, 0x34ab, 0x0630, 0x17b9,
	0xef4e, 0xfec7, 0xcc5c, 0xddd5, 0xa96a, 0xb8e3, 0x8a78, 0x9bf1,
	0x7387, 0x620e, 0x5095, 0x411c, 0x35a3, 0x242a, 0x16b1, 0x0738,
	0xffcf, 0xee46, 0xdcdd, 0xcd54, 0xb9eb, 0xa862, 0x9af9, 0x8b70,
	0x8408, 0x9581, 0xa71a, 0xb693, 0xc22c, 0xd3a5, 0xe13e, 0xf0b7,
	0x0840, 0x19c9, 0x2b52, 0x3adb, 0x4e64, 0x5fed, 0x6d76, 0x7cff,
	0x9489, 0x8500, 0xb79b, 0xa612, 0xd2ad, 0xc324, 0xf1bf, 0xe036,
	0x18c1, 0x0948, 0x3bd3, 0x2a5a, 0x5ee5, 0x4f6c, 0x7df7, 0x6c7e,
	0xa50a, 0xb483, 0x8618, 0x9791, 0xe32e, 0xf2a7, 0xc03c, 0xd1b5,
	0x2942, 0x38cb, 0x0a50, 0x1bd9, 0x6f66, 0x7eef, 0x4c74, 0x5dfd,
	0xb58b, 0xa402, 0x9699, 0x8710, 0xf3af, 0xe226, 0xd0bd, 0xc134,
	0x39c3, 0x284a, 0x1ad1, 0x0b58, 0x7fe7, 0x6e6e, 0x5cf5, 0x4d7c,
	0xc60c, 0xd785, 0xe51e, 0xf497, 0x8028, 0x91a1, 0xa33a, 0xb2b3,
	0x4a44, 0x5bcd, 0x6956, 0x78df, 0x0c60, 0x1de9, 0x2f72, 0x3efb,
	0xd68d, 0xc704, 0xf59f, 0xe416, 0x90a9, 0x8120, 0xb3bb, 0xa232,
	0x5ac5, 0x4b4c, 0x79d7, 0x685e, 0x1ce1, 0x0d68, 0x3ff3, 0x2e7a,
	0xe70e, 0xf687, 0xc41c, 0xd595, 0xa12a, 0xb0a3, 0x8238, 0x93b1,
	0x6b46, 0x7acf, 0x4854, 0x59dd, 0x2d62, 0x3ceb, 0x0e70, 0x1ff9,
	0xf78f, 0xe606, 0xd49d, 0xc514, 0xb1ab, 0xa022, 0x92b9, 0x8330,
	0x7bc7, 0x6a4e, 0x58d5, 0x495c, 0x3de3, 0x2c6a, 0x1ef1, 0x0f78,
};

#define ONES  0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

uint16_t hdlc_fcs16(uint16_t fcs, const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;

	while (p < end)
		fcs = (fcs >> 8) ^ fcs_tab[(fcs ^ *p++) & 0xff];
	return fcs;
}

/* Octets equal to `c` in the word, marked by their high bit. Borrows only
 * travel upward, so the lowest marked octet is always a true match, which is
 * all the scanners need. */
static inline uint64_t word_eq(uint64_t w, uint8_t c)
{
	uint64_t x = w ^ (ONES * c);

	return (x - ONES) & ~x & HIGHS;
}

/* Octets below 0x20 (control characters), same convention. */
static inline uint64_t word_ctl(uint64_t w)
{
	return (w - ONES * 0x20) & ~w & HIGHS;
}

static inline size_t first_marked(uint64_t m)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return (size_t)__builtin_clzll(m) >> 3;
#else
	return (size_t)__builtin_ctzll(m) >> 3;
#endif
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

/* First FLAG or ESCAPE in [p, end), or end. */
static const uint8_t *scan_special(const uint8_t *p, const uint8_t *end)
{
	while (end - p >= 8) {
		uint64_t w = load64(p);
		uint64_t m = word_eq(w, HDLC_FLAG) | word_eq(w, HDLC_ESCAPE);

		if (m)
			return p + first_marked(m);
		p += 8;
	}
	while (p < end && *p != HDLC_FLAG && *p != HDLC_ESCAPE)
		p++;
	return p;
}

/* First FLAG, ESCAPE or control character in [p, end), or end: candidates
 * for escaping when the ACCM is not empty. */
static const uint8_t *scan_candidate(const uint8_t *p, const uint8_t *end)
{
	while (end - p >= 8) {
		uint64_t w = load64(p);
		uint64_t m = word_eq(w, HDLC_FLAG) | word_eq(w, HDLC_ESCAPE) |
		    word_ctl(w);

		if (m)
			return p + first_marked(m);
		p += 8;
	}
	while (p < end && *p != HDLC_FLAG && *p != HDLC_ESCAPE && *p >= 0x20)
		p++;
	return p;
}

static inline int needs_escape(uint8_t c, uint32_t accm)
{
	if (c < 0x20)
		return (accm >> c) & 1;
	return c == HDLC_FLAG || c == HDLC_ESCAPE;
}

/* Escape [p, p+len) into out. Runs of ordinary octets are copied whole;
 * with an empty ACCM (what pppd negotiates by default) only FLAG and ESCAPE
 * stop a run, so random data moves in runs of ~128 octets. */
static uint8_t *escape_into(uint8_t *out, const uint8_t *p, size_t len,
    uint32_t accm)
{
	const uint8_t *end = p + len;

	while (p < end) {
		const uint8_t *q = accm ? scan_candidate(p, end) :
		    scan_special(p, end);

		memcpy(out, p, (size_t)(q - p));
		out += q - p;
		if (q == end)
			break;
		if (needs_escape(*q, accm)) {
			*out++ = HDLC_ESCAPE;
			*out++ = *q ^ HDLC_TRANS;
		} else {
			*out++ = *q;
		}
		p = q + 1;
	}
	return out;
}

size_t hdlc_encode(const uint8_t *frame, size_t len, uint32_t accm,
    uint8_t *out, size_t outlen)
{
	uint16_t fcs;
	uint8_t fcsb[HDLC_FCS_LEN];
	uint8_t *o = out;

	if (outlen < HDLC_ENCODED_MAX(len))
		return 0;
	/* The FCS goes out least significant octet first (RFC 1662 3.1). */
	fcs = hdlc_fcs16(HDLC_FCS_INIT, frame, len) ^ 0xffff;
	fcsb[0] = (uint8_t)(fcs & 0xff);
	fcsb[1] = (uint8_t)(fcs >> 8);
	*o++ = HDLC_FLAG;
	o = escape_into(o, frame, len, accm);
	o = escape_into(o, fcsb, sizeof(fcsb), accm);
	*o++ = HDLC_FLAG;
	return (size_t)(o - out);
}

void hdlc_decoder_init(struct hdlc_decoder *d)
{
	memset(d, 0, sizeof(*d));
}

static void frame_reset(struct hdlc_decoder *d)
{
	d->len = 0;
	d->escaped = 0;
	d->overflow = 0;
}

/* A flag closed the current frame: classify it and deliver it if good.
 * Two flags in a row make an empty frame, which is just inter-frame fill. */
static void frame_end(struct hdlc_decoder *d, hdlc_frame_fn fn, void *arg)
{
	if (d->escaped)
		d->aborts++;
	else if (d->overflow)
		d->too_long++;
	else if (d->len == 0)
		;
	else if (d->len < HDLC_MIN_FRAME)
		d->runts++;
	else if (hdlc_fcs16(HDLC_FCS_INIT, d->buf, d->len) != HDLC_FCS_GOOD)
		d->bad_fcs++;
	else {
		d->frames++;
		fn(arg, d->buf, d->len - HDLC_FCS_LEN);
	}
	frame_reset(d);
}

static void frame_append(struct hdlc_decoder *d, const uint8_t *p, size_t n)
{
	if (d->overflow)
		return;
	if (n > sizeof(d->buf) - d->len) {
		d->overflow = 1;
		return;
	}
	memcpy(d->buf + d->len, p, n);
	d->len += n;
}

void hdlc_decode(struct hdlc_decoder *d, const uint8_t *p, size_t len,
    hdlc_frame_fn fn, void *arg)
{
	const uint8_t *end = p + len;

	while (p < end) {
		const uint8_t *q;
		uint8_t c;

		if (d->escaped && *p != HDLC_FLAG) {
			c = *p++ ^ HDLC_TRANS;
			d->escaped = 0;
			frame_append(d, &c, 1);
			continue;
		}
		q = scan_special(p, end);
		frame_append(d, p, (size_t)(q - p));
		if (q == end)
			break;
		p = q + 1;
		if (*q == HDLC_FLAG)
			frame_end(d, fn, arg);
		else
			d->escaped = 1;
	}
}
