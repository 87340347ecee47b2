/* Unit tests for proto/packet.c (enhanced GRE build and parse, RFC 2637 4.1)
 * and gre/gre.c (the engine, driven through a raw GRE socket on loopback
 * and a socketpair or pty standing in for pppd). Wire bytes are written out
 * by hand from the RFC layout. Engine tests need CAP_NET_RAW and are
 * skipped without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pty.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include "gre/gre.h"
#include "gre/hdlc.h"
#include "proto/packet.h"
#include "proto/seq.h"

/* ---------------- packet build ---------------- */

static void test_build_data_ack(void **state)
{
	uint8_t b[GRE_HDR_MAX];
	const uint8_t want[] = { 0x30, 0x81, 0x88, 0x0b, 0x05, 0xdc, 0xbe, 0xef,
	    0x00, 0x00, 0x00, 0x07, 0xff, 0xff, 0xff, 0xfe };

	(void)state;
	assert_int_equal(gre_packet_build(b, 0xbeef, 1500, 1, 7, 1, 0xfffffffe), 16);
	assert_memory_equal(b, want, 16);
}

static void test_build_data_only(void **state)
{
	uint8_t b[GRE_HDR_MAX];
	const uint8_t want[] = { 0x30, 0x01, 0x88, 0x0b, 0x00, 0x04, 0x12, 0x34,
	    0x80, 0x00, 0x00, 0x01 };

	(void)state;
	assert_int_equal(gre_packet_build(b, 0x1234, 4, 1, 0x80000001, 0, 0), 12);
	assert_memory_equal(b, want, 12);
}

static void test_build_ack_only(void **state)
{
	uint8_t b[GRE_HDR_MAX];
	const uint8_t want[] = { 0x20, 0x81, 0x88, 0x0b, 0x00, 0x00, 0x00, 0x2a,
	    0x00, 0x00, 0x01, 0x00 };

	(void)state;
	assert_int_equal(gre_packet_build(b, 42, 0, 0, 0, 1, 256), 12);
	assert_memory_equal(b, want, 12);
}

/* ---------------- packet parse ---------------- */

static const uint8_t pkt_data_ack[] = { 0x30, 0x81, 0x88, 0x0b, 0x00, 0x03,
    0x00, 0x2a, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x09, 0xaa, 0xbb,
    0xcc };

static void test_parse_data_ack(void **state)
{
	struct gre_packet p;

	(void)state;
	assert_int_equal(gre_packet_parse(pkt_data_ack, sizeof(pkt_data_ack), &p),
	    GRE_PARSE_OK);
	assert_int_equal(p.call_id, 42);
	assert_true(p.has_seq && p.has_ack);
	assert_int_equal(p.seq, 5);
	assert_int_equal(p.ack, 9);
	assert_int_equal(p.payload_len, 3);
	assert_ptr_equal(p.payload, pkt_data_ack + 16);
}

static void test_parse_data_only(void **state)
{
	const uint8_t b[] = { 0x30, 0x01, 0x88, 0x0b, 0x00, 0x02, 0xff, 0xff,
	    0xff, 0xff, 0xff, 0xff, 0x01, 0x02 };
	struct gre_packet p;

	(void)state;
	assert_int_equal(gre_packet_parse(b, sizeof(b), &p), GRE_PARSE_OK);
	assert_true(p.has_seq && !p.has_ack);
	assert_int_equal(p.seq, 0xffffffffu);
	assert_int_equal(p.call_id, 0xffff);
	assert_ptr_equal(p.payload, b + 12);
}

static void test_parse_ack_only(void **state)
{
	const uint8_t b[] = { 0x20, 0x81, 0x88, 0x0b, 0x00, 0x00, 0x00, 0x07,
	    0x12, 0x34, 0x56, 0x78 };
	struct gre_packet p;

	(void)state;
	assert_int_equal(gre_packet_parse(b, sizeof(b), &p), GRE_PARSE_OK);
	assert_true(!p.has_seq && p.has_ack);
	assert_int_equal(p.ack, 0x12345678);
	assert_int_equal(p.payload_len, 0);
}

static void test_parse_roundtrip(void **state)
{
	uint8_t b[GRE_HDR_MAX + 8];
	struct gre_packet p;

	(void)state;
	for (int s = 0; s < 2; s++)
		for (int a = 0; a < 2; a++) {
			size_t h;

			if (!s && !a)
				continue;
			h = gre_packet_build(b, 77, s ? 8 : 0, s, 1000, a, 999);
			memset(b + h, 0x55, 8);
			assert_int_equal(gre_packet_parse(b, h + (s ? 8 : 0), &p),
			    GRE_PARSE_OK);
			assert_int_equal(p.has_seq, s);
			assert_int_equal(p.has_ack, a);
			assert_int_equal(p.call_id, 77);
			if (s)
				assert_int_equal(p.seq, 1000);
			if (a)
				assert_int_equal(p.ack, 999);
		}
}

/* Flip something in a valid data+ack packet and expect `want`. */
static void expect_bad(size_t off, uint8_t val, size_t len,
    enum gre_parse_result want)
{
	uint8_t b[sizeof(pkt_data_ack)];
	struct gre_packet p;

	memcpy(b, pkt_data_ack, sizeof(b));
	if (off < sizeof(b))
		b[off] = val;
	assert_int_equal(gre_packet_parse(b, len, &p), want);
}

static void test_parse_malformed(void **state)
{
	const size_t n = sizeof(pkt_data_ack);

	(void)state;
	expect_bad(99, 0, 7, GRE_PARSE_SHORT);
	expect_bad(99, 0, 15, GRE_PARSE_SHORT);            /* cut in the ack */
	expect_bad(1, 0x80, n, GRE_PARSE_VERSION);         /* version 0 */
	expect_bad(1, 0x82, n, GRE_PARSE_VERSION);         /* version 2 */
	expect_bad(2, 0x08, n, GRE_PARSE_PROTOCOL);        /* 0x080b */
	expect_bad(3, 0x00, n, GRE_PARSE_PROTOCOL);
	expect_bad(0, 0xb0, n, GRE_PARSE_FLAGS);           /* C */
	expect_bad(0, 0x70, n, GRE_PARSE_FLAGS);           /* R */
	expect_bad(0, 0x38, n, GRE_PARSE_FLAGS);           /* s */
	expect_bad(0, 0x31, n, GRE_PARSE_FLAGS);           /* recursion */
	expect_bad(1, 0x89, n, GRE_PARSE_FLAGS);           /* reserved flag */
	expect_bad(1, 0xc1, n, GRE_PARSE_FLAGS);
	expect_bad(0, 0x10, n, GRE_PARSE_NO_KEY);          /* K clear */
	expect_bad(5, 0x04, n, GRE_PARSE_LENGTH);          /* 4 > 3 present */
	expect_bad(4, 0xff, n, GRE_PARSE_LENGTH);
	expect_bad(5, 0x00, n, GRE_PARSE_NO_PAYLOAD);      /* S=1, length 0 */
	expect_bad(0, 0x20, n, GRE_PARSE_ACK_PAYLOAD);     /* S=0 with payload */
	expect_bad(99, 0, n - 1, GRE_PARSE_LENGTH);        /* payload cut short */
	expect_bad(99, 0, n, GRE_PARSE_OK);
	expect_bad(5, 0x02, n, GRE_PARSE_LENGTH_MISMATCH); /* 2 < 3 present */
	expect_bad(5, 0x01, n, GRE_PARSE_LENGTH_MISMATCH);
}

static void test_parse_malformed_more(void **state)
{
	uint8_t b[GRE_HDR_MAX + GRE_MAX_PAYLOAD + 2];
	struct gre_packet p;
	size_t h;

	(void)state;
	/* neither S nor A */
	h = gre_packet_build(b, 1, 0, 0, 0, 0, 0);
	assert_int_equal(h, 8);
	assert_int_equal(gre_packet_parse(b, h, &p), GRE_PARSE_EMPTY);
	/* payload over the limit */
	h = gre_packet_build(b, 1, GRE_MAX_PAYLOAD + 1, 1, 0, 0, 0);
	assert_int_equal(gre_packet_parse(b, h + GRE_MAX_PAYLOAD + 1, &p),
	    GRE_PARSE_TOO_BIG);
	h = gre_packet_build(b, 1, GRE_MAX_PAYLOAD, 1, 0, 0, 0);
	assert_int_equal(gre_packet_parse(b, h + GRE_MAX_PAYLOAD, &p), GRE_PARSE_OK);
	/* octets past the payload length are refused, not taken as padding */
	h = gre_packet_build(b, 1, 10, 1, 0, 0, 0);
	assert_int_equal(gre_packet_parse(b, h + 11, &p),
	    GRE_PARSE_LENGTH_MISMATCH);
	assert_int_equal(gre_packet_parse(b, h + 12, &p),
	    GRE_PARSE_LENGTH_MISMATCH);
	assert_int_equal(gre_packet_parse(b, h + 10, &p), GRE_PARSE_OK);
	/* ack-only: any octet after the header disagrees with length 0 */
	h = gre_packet_build(b, 1, 0, 0, 0, 1, 5);
	assert_int_equal(gre_packet_parse(b, h + 1, &p),
	    GRE_PARSE_LENGTH_MISMATCH);
	assert_string_equal(gre_packet_strerror(GRE_PARSE_LENGTH_MISMATCH),
	    "payload length disagrees with datagram");
	for (int r = 0; r <= GRE_PARSE__COUNT; r++)
		assert_non_null(gre_packet_strerror((enum gre_parse_result)r));
}

static size_t ip_wrap(uint8_t *out, const uint8_t *gre, size_t len, int ihl,
    uint32_t src)
{
	size_t total = (size_t)ihl * 4 + len;

	memset(out, 0, (size_t)ihl * 4);
	out[0] = (uint8_t)(0x40 | ihl);
	out[2] = (uint8_t)(total >> 8);
	out[3] = (uint8_t)total;
	out[9] = 47;
	memcpy(out + 12, &src, 4);
	memcpy(out + ihl * 4, gre, len);
	return total;
}

static void test_parse_ip(void **state)
{
	uint8_t b[128];
	struct gre_packet p;
	size_t n;
	uint32_t src = htonl(0xc6120001);

	(void)state;
	n = ip_wrap(b, pkt_data_ack, sizeof(pkt_data_ack), 5, src);
	assert_int_equal(gre_packet_parse_ip(b, n, &p), GRE_PARSE_OK);
	assert_int_equal(p.src.s_addr, src);
	assert_int_equal(p.seq, 5);
	/* IP options: IHL 7 */
	n = ip_wrap(b, pkt_data_ack, sizeof(pkt_data_ack), 7, src);
	assert_int_equal(gre_packet_parse_ip(b, n, &p), GRE_PARSE_OK);
	assert_int_equal(p.payload_len, 3);
	assert_ptr_equal(p.payload, b + 28 + 16);
	assert_int_equal(gre_packet_parse_ip(b, 19, &p), GRE_PARSE_IP_SHORT);
	b[0] = 0x67;
	assert_int_equal(gre_packet_parse_ip(b, n, &p), GRE_PARSE_IP_VERSION);
	b[0] = 0x44;
	assert_int_equal(gre_packet_parse_ip(b, n, &p), GRE_PARSE_IP_HDRLEN);
	b[0] = 0x4f;    /* 60 octets of header in a 47 octet datagram */
	assert_int_equal(gre_packet_parse_ip(b, n, &p), GRE_PARSE_IP_HDRLEN);
	b[0] = 0x47;
	b[9] = 17;
	assert_int_equal(gre_packet_parse_ip(b, n, &p), GRE_PARSE_IP_PROTO);
	b[9] = 47;
	/* the IPv4 total length must be the datagram's */
	assert_int_equal(gre_packet_parse_ip(b, 28 + 10, &p), GRE_PARSE_IP_LENGTH);
	assert_int_equal(gre_packet_parse_ip(b, n - 1, &p), GRE_PARSE_IP_LENGTH);
	b[3]++;
	assert_int_equal(gre_packet_parse_ip(b, n, &p), GRE_PARSE_IP_LENGTH);
	b[3] = 28 + 10;
	assert_int_equal(gre_packet_parse_ip(b, 28 + 10, &p), GRE_PARSE_SHORT);
	b[3] = (uint8_t)n;
	assert_int_equal(gre_packet_parse_ip(b, n, &p), GRE_PARSE_OK);
}

/* ---------------- engine ---------------- */

#define ENG_IP   "127.77.0.1"
#define PEER_IP  "127.77.0.2"
#define OTHER_IP "127.77.0.3"
#define LOCAL_ID 0x1234
#define PEER_ID  0x4321

struct fixture {
	struct gre_engine *e;
	struct gre_call *c;
	int peer;               /* raw socket standing in for the client */
	int other;              /* raw socket at another address */
	int ppp;                /* our end of the pty stand-in (pppd's side) */
	int pty;                /* the engine's end */
	int want_write, closed, close_err, logs, notices;
	char last_log[256];
};

static void t_log(void *arg, int prio, const char *msg)
{
	struct fixture *f = arg;

	f->logs++;
	if (prio <= LOG_NOTICE)
		f->notices++;
	snprintf(f->last_log, sizeof(f->last_log), "%s", msg);
}

static void t_want_write(void *arg, int on)
{
	((struct fixture *)arg)->want_write = on;
}

static void t_closed(void *arg, int err)
{
	struct fixture *f = arg;

	f->closed++;
	f->close_err = err;
}

static const struct gre_ops t_ops = { t_log, t_want_write, t_closed };

static struct in_addr addr(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a;
}

static int raw_at(const char *ip)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = addr(ip) };
	int fd = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK, IPPROTO_GRE);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int setup_engine(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int sp[2];

	f->e = gre_engine_new(addr(ENG_IP), &t_ops, f);
	if (!f->e) {
		free(f);
		*state = NULL;
		return 0;
	}
	f->peer = raw_at(PEER_IP);
	f->other = raw_at(OTHER_IP);
	assert_true(f->peer >= 0 && f->other >= 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	f->ppp = sp[0];
	f->pty = sp[1];
	fcntl(f->ppp, F_SETFL, O_NONBLOCK);
	f->c = gre_call_new(f->e, LOCAL_ID, PEER_ID, addr(PEER_IP), f->pty, f);
	assert_non_null(f->c);
	*state = f;
	return 0;
}

static int teardown_engine(void **state)
{
	struct fixture *f = *state;

	if (!f)
		return 0;
	if (f->c)
		gre_call_free(f->c);
	gre_engine_free(f->e);
	close(f->peer);
	close(f->other);
	close(f->ppp);
	close(f->pty);
	free(f);
	return 0;
}

#define NEED_ENGINE(f) do { if (!(f)) { skip(); } } while (0)

static void wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	poll(&p, 1, 200);
}

/* Send a GRE packet from `fd` to the engine. */
static void peer_send(int fd, uint16_t call_id, int has_seq, uint32_t seq,
    int has_ack, uint32_t ack, const uint8_t *payload, size_t len)
{
	uint8_t b[GRE_HDR_MAX + GRE_MAX_PAYLOAD];
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = addr(ENG_IP) };
	size_t h = gre_packet_build(b, call_id, (uint16_t)len, has_seq, seq,
	    has_ack, ack);

	if (len)
		memcpy(b + h, payload, len);
	assert_int_equal(sendto(fd, b, h + len, 0, (struct sockaddr *)&sa,
	    sizeof(sa)), (ssize_t)(h + len));
}

static void peer_data(struct fixture *f, uint32_t seq, uint8_t fill, size_t len)
{
	uint8_t p[GRE_MAX_PAYLOAD];

	memset(p, fill, len);
	p[0] = 0xff;
	p[1] = 0x03;
	peer_send(f->peer, LOCAL_ID, 1, seq, 0, 0, p, len);
}

static void engine_in(struct fixture *f, uint64_t now)
{
	wait_readable(gre_engine_fd(f->e));
	gre_engine_input(f->e, now);
}

/* Receive one GRE packet at the peer; 0 if none within 200 ms. */
static int peer_recv(struct fixture *f, struct gre_packet *p, uint8_t *buf,
    size_t cap)
{
	ssize_t n;

	wait_readable(f->peer);
	n = recv(f->peer, buf, cap, MSG_DONTWAIT);
	if (n <= 0)
		return 0;
	assert_int_equal(gre_packet_parse_ip(buf, (size_t)n, p), GRE_PARSE_OK);
	return 1;
}

struct frames {
	size_t n;
	size_t len[64];
	uint8_t data[64][HDLC_MAX_FRAME];
};

static void collect(void *arg, const uint8_t *fr, size_t len)
{
	struct frames *fs = arg;

	if (fs->n < 64) {
		memcpy(fs->data[fs->n], fr, len);
		fs->len[fs->n++] = len;
	}
}

/* Read and decode everything pppd's side of the pty has. */
static void ppp_read(struct fixture *f, struct frames *fs)
{
	static struct hdlc_decoder d;
	static uint8_t buf[256 * 1024];
	ssize_t n;

	hdlc_decoder_init(&d);
	memset(fs, 0, sizeof(*fs));
	while ((n = read(f->ppp, buf, sizeof(buf))) > 0)
		hdlc_decode(&d, buf, (size_t)n, collect, fs);
}

static void ppp_write_frame(struct fixture *f, const uint8_t *fr, size_t len)
{
	uint8_t b[HDLC_ENCODED_MAX(HDLC_MAX_FRAME)];
	size_t n = hdlc_encode(fr, len, 0xffffffff, b, sizeof(b));

	assert_int_equal(write(f->ppp, b, n), (ssize_t)n);
}

/* A fresh pppd whose options let it log to stdout writes its log lines
 * to the pty before its first frame: dropped without a notice (pptpd logs
 * notices for real faults only), the frame after them carried. A frame
 * pppd garbles is still a notice. */
static void test_engine_pppd_log_lines_no_notice(void **state)
{
	struct fixture *f = *state;
	static const char text[] =
	    "Plugin /usr/local/lib/pptpd/pptpd-policy.so loaded.\n";
	const uint8_t fr[] = { 0xff, 0x03, 0xc0, 0x21, 0x01, 0x01, 0x00, 0x04 };
	uint8_t b[HDLC_ENCODED_MAX(sizeof(fr))], buf[256];
	struct gre_packet p;
	size_t n;

	NEED_ENGINE(f);
	assert_int_equal(write(f->ppp, text, strlen(text)),
	    (ssize_t)strlen(text));
	ppp_write_frame(f, fr, sizeof(fr));
	gre_call_pty_input(f->c, 1000);
	assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	assert_int_equal(p.payload_len, sizeof(fr));
	assert_int_equal(f->notices, 0);
	n = hdlc_encode(fr, sizeof(fr), 0xffffffff, b, sizeof(b));
	b[n - 2] ^= 0x01;    /* the FCS */
	assert_int_equal(write(f->ppp, b, n), (ssize_t)n);
	gre_call_pty_input(f->c, 1010);
	assert_int_equal(f->notices, 1);
	assert_non_null(strstr(f->last_log, "bad frame from pppd dropped"));
}

static void test_engine_call_ids(void **state)
{
	struct fixture *f = *state;
	int sp[2];

	NEED_ENGINE(f);
	assert_true(gre_engine_has_call(f->e, LOCAL_ID));
	assert_false(gre_engine_has_call(f->e, LOCAL_ID + 1));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	errno = 0;
	assert_null(gre_call_new(f->e, LOCAL_ID, 1, addr(PEER_IP), sp[0], f));
	assert_int_equal(errno, EEXIST);
	assert_null(gre_call_new(f->e, 7, 1, addr(PEER_IP), -1, f));
	assert_int_equal(errno, EINVAL);
	struct gre_call *c2 = gre_call_new(f->e, 0, 1, addr(PEER_IP), sp[0], f);
	assert_non_null(c2);
	assert_true(gre_engine_has_call(f->e, 0));
	gre_call_free(c2);
	assert_false(gre_engine_has_call(f->e, 0));
	close(sp[0]);
	close(sp[1]);
	assert_int_equal(gre_engine_next_deadline(f->e), 0);
}

static void test_engine_gre_to_pty(void **state)
{
	struct fixture *f = *state;
	struct frames fs;
	struct gre_stats st;

	NEED_ENGINE(f);
	for (uint32_t s = 0; s < 10; s++)
		peer_data(f, 100 + s, (uint8_t)(0x70 + s), 200 + s);
	engine_in(f, 1000);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 10);
	for (size_t i = 0; i < 10; i++) {
		assert_int_equal(fs.len[i], 200 + i);
		assert_int_equal(fs.data[i][0], 0xff);
		assert_int_equal(fs.data[i][5], 0x70 + i);
	}
	gre_call_stats(f->c, &st);
	assert_int_equal(st.rx_packets, 10);
	assert_int_equal(st.rx_delivered, 10);
	/* nothing went back yet: an ack is due after the delay */
	assert_int_equal(gre_engine_next_deadline(f->e), 1000 + GRE_ACK_DELAY_MS);
}

static void test_engine_delayed_ack(void **state)
{
	struct fixture *f = *state;
	struct gre_packet p;
	uint8_t buf[4096];
	struct gre_stats st;

	NEED_ENGINE(f);
	peer_data(f, 5, 1, 50);
	peer_data(f, 6, 1, 50);
	engine_in(f, 1000);
	gre_engine_timers(f->e, 1000 + GRE_ACK_DELAY_MS - 1);
	assert_false(peer_recv(f, &p, buf, sizeof(buf)));
	gre_engine_timers(f->e, 1000 + GRE_ACK_DELAY_MS);
	assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	assert_true(!p.has_seq && p.has_ack);
	assert_int_equal(p.ack, 6);
	assert_int_equal(p.call_id, PEER_ID);
	assert_int_equal(buf[20], 0x20);
	assert_int_equal(buf[21], 0x81);
	gre_call_stats(f->c, &st);
	assert_int_equal(st.tx_acks_only, 1);
	assert_int_equal(gre_engine_next_deadline(f->e), 0);
	/* nothing new: no second ack */
	gre_engine_timers(f->e, 5000);
	assert_false(peer_recv(f, &p, buf, sizeof(buf)));
}

/* A steady stream below half a window: the ack rides the wakeup of the
 * first packet at or past the delay after the first unacked one; the
 * timer only follows the last packet, so a stream that stops is acked
 * GRE_ACK_DELAY_MS after it. */
static void test_engine_ack_with_stream(void **state)
{
	struct fixture *f = *state;
	struct gre_packet p;
	uint8_t buf[4096];
	uint64_t t = 1000;
	const uint64_t gap = GRE_ACK_DELAY_MS * 2 / 5;

	NEED_ENGINE(f);
	for (uint32_t s = 5; s <= 7; s++, t += gap) {
		peer_data(f, s, 1, 50);
		engine_in(f, t);
		assert_false(peer_recv(f, &p, buf, sizeof(buf)));
		/* the timer follows the last packet */
		assert_int_equal(gre_engine_next_deadline(f->e),
		    t + GRE_ACK_DELAY_MS);
	}
	peer_data(f, 8, 1, 50);          /* 1000 + 3 gaps >= the delay */
	engine_in(f, t);
	assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	assert_true(!p.has_seq && p.has_ack);
	assert_int_equal(p.ack, 8);
	assert_int_equal(gre_engine_next_deadline(f->e), 0);
	/* the stream stops after one more: acked the delay after it */
	t += gap;
	peer_data(f, 9, 1, 50);
	engine_in(f, t);
	gre_engine_timers(f->e, t + GRE_ACK_DELAY_MS - 1);
	assert_false(peer_recv(f, &p, buf, sizeof(buf)));
	gre_engine_timers(f->e, t + GRE_ACK_DELAY_MS);
	assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	assert_int_equal(p.ack, 9);
}

/* Any packet of the call is a wakeup the ack may ride, a duplicate that
 * delivers nothing too: it pushes the timer, and at the delay (>=) it
 * carries the ack, so no delivery waits longer than twice the delay. */
static void test_engine_ack_on_any_packet(void **state)
{
	struct fixture *f = *state;
	struct gre_packet p;
	uint8_t buf[4096];

	NEED_ENGINE(f);
	peer_data(f, 5, 1, 50);
	engine_in(f, 1000);
	peer_data(f, 5, 1, 50);          /* a duplicate: nothing delivered */
	engine_in(f, 1000 + GRE_ACK_DELAY_MS - 1);
	assert_false(peer_recv(f, &p, buf, sizeof(buf)));
	assert_int_equal(gre_engine_next_deadline(f->e),
	    1000 + 2 * GRE_ACK_DELAY_MS - 1);
	peer_data(f, 5, 1, 50);
	engine_in(f, 1000 + GRE_ACK_DELAY_MS);
	assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	assert_true(!p.has_seq && p.has_ack);
	assert_int_equal(p.ack, 5);
	assert_int_equal(gre_engine_next_deadline(f->e), 0);
}

static void test_engine_ack_threshold(void **state)
{
	struct fixture *f = *state;
	struct gre_packet p;
	uint8_t buf[4096];

	NEED_ENGINE(f);
	gre_call_set_recv_window(f->c, 4);
	peer_data(f, 0, 1, 50);
	engine_in(f, 1000);
	assert_false(peer_recv(f, &p, buf, sizeof(buf)));
	peer_data(f, 1, 1, 50);
	engine_in(f, 1001);
	assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	assert_true(!p.has_seq && p.has_ack);
	assert_int_equal(p.ack, 1);
	assert_int_equal(gre_engine_next_deadline(f->e), 0);
}

static void test_engine_pty_to_gre_with_piggyback(void **state)
{
	struct fixture *f = *state;
	struct gre_packet p;
	uint8_t buf[4096], fr[300];
	struct gre_stats st;

	NEED_ENGINE(f);
	for (size_t i = 0; i < sizeof(fr); i++)
		fr[i] = (uint8_t)i;     /* every control char, FLAG, ESCAPE */
	ppp_write_frame(f, fr, 10);
	ppp_write_frame(f, fr, sizeof(fr));
	gre_call_pty_input(f->c, 1000);
	assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	assert_true(p.has_seq && !p.has_ack);
	assert_int_equal(p.seq, 0);
	assert_int_equal(p.call_id, PEER_ID);
	assert_int_equal(p.payload_len, 10);
	assert_int_equal(buf[20], 0x30);
	assert_int_equal(buf[21], 0x01);
	assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	assert_int_equal(p.seq, 1);
	assert_int_equal(p.payload_len, sizeof(fr));
	assert_memory_equal(p.payload, fr, sizeof(fr));
	/* receive something: the next data packet carries the ack */
	peer_data(f, 77, 1, 40);
	engine_in(f, 1000);
	assert_int_not_equal(gre_engine_next_deadline(f->e), 0);
	ppp_write_frame(f, fr, 20);
	gre_call_pty_input(f->c, 1010);
	assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	assert_true(p.has_seq && p.has_ack);
	assert_int_equal(p.seq, 2);
	assert_int_equal(p.ack, 77);
	assert_int_equal(buf[20], 0x30);
	assert_int_equal(buf[21], 0x81);
	/* the ack went with the data: no ack-only timer left */
	assert_int_equal(gre_engine_next_deadline(f->e), 0);
	gre_call_stats(f->c, &st);
	assert_int_equal(st.tx_packets, 3);
	assert_int_equal(st.tx_unacked, 3);
}

static void test_engine_peer_acks(void **state)
{
	struct fixture *f = *state;
	struct gre_packet p;
	uint8_t buf[4096], fr[20] = { 0xff, 0x03 };
	struct gre_stats st;

	NEED_ENGINE(f);
	/* an ack before we sent anything is bogus */
	peer_send(f->peer, LOCAL_ID, 0, 0, 1, 0, NULL, 0);
	engine_in(f, 1000);
	for (int i = 0; i < 3; i++)
		ppp_write_frame(f, fr, sizeof(fr));
	gre_call_pty_input(f->c, 1000);
	for (int i = 0; i < 3; i++)
		assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	peer_send(f->peer, LOCAL_ID, 0, 0, 1, 1, NULL, 0);
	engine_in(f, 1000);
	gre_call_stats(f->c, &st);
	assert_int_equal(st.tx_unacked, 1);
	peer_send(f->peer, LOCAL_ID, 0, 0, 1, 2, NULL, 0);
	peer_send(f->peer, LOCAL_ID, 0, 0, 1, 1, NULL, 0);  /* reordered old */
	peer_send(f->peer, LOCAL_ID, 0, 0, 1, 50, NULL, 0); /* not sent yet */
	engine_in(f, 1000);
	gre_call_stats(f->c, &st);
	assert_int_equal(st.tx_unacked, 0);
	assert_int_equal(st.rx_acks, 2);
	assert_int_equal(st.rx_bad_acks, 2);
}

/* A call taken over after its worker died (privsep): the engine stores
 * each next sequence number where it is told (the journal); a call
 * resumed from that number sends it next, counts nothing unacked, and
 * believes the peer's ack of the number before it but not of one it has
 * not sent. */
static void test_engine_resume_continues_sequence(void **state)
{
	struct fixture *f = *state;
	struct gre_packet p;
	uint8_t buf[4096], fr[20] = { 0xff, 0x03 };
	struct gre_stats st;
	uint32_t mirror = 0xdeadbeef;

	NEED_ENGINE(f);
	gre_call_mirror_seq(f->c, &mirror);
	assert_int_equal(mirror, 0);   /* an old call's number is not left */
	for (int i = 0; i < 3; i++)
		ppp_write_frame(f, fr, sizeof(fr));
	gre_call_pty_input(f->c, 1000);
	for (int i = 0; i < 3; i++)
		assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	assert_int_equal(p.seq, 2);
	assert_int_equal(mirror, 3);

	/* the next worker's call, from the stored number */
	gre_call_free(f->c);
	f->c = gre_call_new(f->e, LOCAL_ID, PEER_ID, addr(PEER_IP), f->pty, f);
	assert_non_null(f->c);
	gre_call_resume(f->c, mirror);
	gre_call_mirror_seq(f->c, &mirror);
	gre_call_stats(f->c, &st);
	assert_int_equal(st.tx_unacked, 0);
	ppp_write_frame(f, fr, sizeof(fr));
	gre_call_pty_input(f->c, 2000);
	assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	assert_int_equal(p.seq, 3);
	assert_int_equal(mirror, 4);
	peer_send(f->peer, LOCAL_ID, 0, 0, 1, 2, NULL, 0);   /* old: ignored */
	peer_send(f->peer, LOCAL_ID, 0, 0, 1, 3, NULL, 0);
	peer_send(f->peer, LOCAL_ID, 0, 0, 1, 9, NULL, 0);   /* not sent */
	engine_in(f, 2000);
	gre_call_stats(f->c, &st);
	assert_int_equal(st.tx_unacked, 0);
	assert_int_equal(st.rx_acks, 1);
	assert_int_equal(st.rx_bad_acks, 1);
}

/* Issue 19, item 11: the peer's window is not honoured (gre.h says why),
 * but what is sent beyond it is counted. pptp-linux advertises 3. */
static void test_engine_peer_window_counted(void **state)
{
	struct fixture *f = *state;
	struct gre_packet p;
	uint8_t buf[4096], fr[20] = { 0xff, 0x03 };
	struct gre_stats st;

	NEED_ENGINE(f);
	gre_call_set_window(f->c, 3);
	for (int i = 0; i < 5; i++)
		ppp_write_frame(f, fr, sizeof(fr));
	gre_call_pty_input(f->c, 1000);
	for (int i = 0; i < 5; i++)       /* nothing held back */
		assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	gre_call_stats(f->c, &st);
	assert_int_equal(st.tx_unacked, 5);
	assert_int_equal(st.tx_over_window, 2);  /* the 4th and the 5th */
	/* the peer acks 0..3: one outstanding, two more fit */
	peer_send(f->peer, LOCAL_ID, 0, 0, 1, 3, NULL, 0);
	engine_in(f, 1000);
	ppp_write_frame(f, fr, sizeof(fr));
	ppp_write_frame(f, fr, sizeof(fr));
	gre_call_pty_input(f->c, 1001);
	gre_call_stats(f->c, &st);
	assert_int_equal(st.tx_unacked, 3);
	assert_int_equal(st.tx_over_window, 2);
}

/* Issue 19, item 8: an idle call, and a forger who knows its Call ID and
 * sends 8 far-off numbers in a row after 700 ms of quiet. Its LCP
 * Terminate-Request must not reach pppd; the real peer, acking what it
 * got from us, still gets back in after an outage. */
static void test_engine_far_run_needs_agreeing_ack(void **state)
{
	struct fixture *f = *state;
	static const uint8_t term[] = { 0xff, 0x03, 0xc0, 0x21, 5, 1, 0, 4 };
	uint8_t buf[4096], fr[20] = { 0xff, 0x03 };
	struct gre_packet p;
	struct frames fs;
	uint32_t far = 0x40000000u, k;

	NEED_ENGINE(f);
	for (uint32_t s = 0; s < 10; s++)
		peer_data(f, s, 1, 40);
	engine_in(f, 1000);
	for (int i = 0; i < 3; i++)           /* pppd answers: seq 0..2 */
		ppp_write_frame(f, fr, sizeof(fr));
	gre_call_pty_input(f->c, 1000);
	for (int i = 0; i < 3; i++)
		assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	peer_send(f->peer, LOCAL_ID, 0, 0, 1, 2, NULL, 0);  /* acked */
	engine_in(f, 1000);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 10);
	/* 700 ms of quiet; the forger's runs: no ack, wrong acks, old acks */
	for (k = 0; k < 2 * SEQ_RESYNC_COUNT; k++)
		peer_send(f->peer, LOCAL_ID, 1, far + k, 0, 0, term, sizeof(term));
	engine_in(f, 1700);
	for (k = 0; k < 2 * SEQ_RESYNC_COUNT; k++)
		peer_send(f->peer, LOCAL_ID, 1, far + 100 + k, 1, 1000 + k,
		    term, sizeof(term));
	engine_in(f, 1700);
	for (k = 0; k < 2 * SEQ_RESYNC_COUNT; k++)    /* old acks: below 2 */
		peer_send(f->peer, LOCAL_ID, 1, far + 200 + k, k % 2, k % 2,
		    term, sizeof(term));
	engine_in(f, 1700);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 0);
	/* the real peer after a long outage: it acks our last packet */
	for (k = 0; k < SEQ_RESYNC_COUNT; k++)
		peer_send(f->peer, LOCAL_ID, 1, far + 500 + k, 1, 2, fr,
		    sizeof(fr));
	engine_in(f, 1800);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 1);
	assert_int_equal(fs.len[0], sizeof(fr));
}

static void test_engine_reorder_and_gap_timer(void **state)
{
	struct fixture *f = *state;
	struct frames fs;
	struct gre_stats st;

	NEED_ENGINE(f);
	peer_data(f, 0, 0xa0, 30);
	peer_data(f, 2, 0xa2, 30);
	peer_data(f, 3, 0xa3, 30);
	engine_in(f, 1000);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 1);
	assert_int_equal(gre_engine_next_deadline(f->e),
	    1000 + SEQ_REORDER_TIMEOUT_MS);
	gre_engine_timers(f->e, 1000 + SEQ_REORDER_TIMEOUT_MS);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 2);
	assert_int_equal(fs.data[0][5], 0xa2);
	assert_int_equal(fs.data[1][5], 0xa3);
	gre_call_stats(f->c, &st);
	assert_int_equal(st.rx_lost, 1);
	assert_int_equal(st.rx_reordered, 2);
	/* the late one is stale; a replay is a duplicate */
	peer_data(f, 1, 0xa1, 30);
	peer_data(f, 3, 0xa3, 30);
	engine_in(f, 1100);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 0);
	gre_call_stats(f->c, &st);
	assert_int_equal(st.rx_stale, 1);
	assert_int_equal(st.rx_duplicates, 1);
}

static void test_engine_wrong_source_and_unknown_call(void **state)
{
	struct fixture *f = *state;
	struct frames fs;
	struct gre_stats st;
	struct gre_engine_stats es;
	uint8_t p[40] = { 0xff, 0x03 };

	NEED_ENGINE(f);
	peer_send(f->other, LOCAL_ID, 1, 0, 0, 0, p, sizeof(p));
	peer_send(f->peer, LOCAL_ID + 1, 1, 0, 0, 0, p, sizeof(p));
	engine_in(f, 1000);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 0);
	gre_call_stats(f->c, &st);
	assert_int_equal(st.rx_wrong_source, 1);
	assert_int_equal(st.rx_packets, 0);
	gre_engine_stats(f->e, &es);
	assert_int_equal(es.rx_unknown_call, 1);
	/* the forged packet did not start the sequence: seq 500 is first */
	peer_data(f, 500, 1, 40);
	engine_in(f, 1000);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 1);
}

/* `datapath kernel`: the raw socket takes nothing in (the kernel's copies
 * of every call's GRE would each cost a wake-up), and still sends. */
static void test_engine_receive_none(void **state)
{
	struct fixture *f = *state;
	struct frames fs;
	struct gre_stats st;
	struct gre_engine_stats es;
	struct gre_packet p;
	uint8_t buf[4096], fr[40] = { 0xff, 0x03 };

	NEED_ENGINE(f);
	assert_int_equal(gre_engine_receive_none(f->e), 0);
	peer_data(f, 1, 1, 40);
	peer_send(f->peer, LOCAL_ID + 1, 1, 0, 0, 0, fr, sizeof(fr));
	engine_in(f, 1000);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 0);
	gre_call_stats(f->c, &st);
	assert_int_equal(st.rx_packets, 0);
	gre_engine_stats(f->e, &es);
	assert_int_equal(es.rx_datagrams, 0);
	assert_int_equal(es.rx_unknown_call, 0);
	ppp_write_frame(f, fr, sizeof(fr));
	gre_call_pty_input(f->c, 1000);
	assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	assert_int_equal(p.call_id, PEER_ID);
}

static void test_engine_malformed_counted_and_log_limited(void **state)
{
	struct fixture *f = *state;
	struct gre_engine_stats es;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = addr(ENG_IP) };
	uint8_t b[16];

	NEED_ENGINE(f);
	memcpy(b, pkt_data_ack, sizeof(b));
	b[1] = 0x80;    /* GRE version 0 */
	for (int i = 0; i < 100; i++)
		sendto(f->peer, b, sizeof(b), 0, (struct sockaddr *)&sa, sizeof(sa));
	engine_in(f, 1000);
	gre_engine_input(f->e, 1000);
	gre_engine_input(f->e, 1000);
	gre_engine_input(f->e, 1000);
	gre_engine_stats(f->e, &es);
	assert_int_equal(es.rx_malformed, 100);
	assert_true(f->logs >= 1 && f->logs <= 5);
	assert_non_null(strstr(f->last_log, "127.77.0.2"));
	/* a second later the suppressed count is reported */
	sendto(f->peer, b, sizeof(b), 0, (struct sockaddr *)&sa, sizeof(sa));
	engine_in(f, 2000);
	assert_true(f->logs <= 7);
}

/* A packet whose payload length is shorter than what it carries, with the
 * next expected number, from the right address: refused as malformed
 * before the sequencer sees it, so the real packet with that number is the
 * one delivered. */
static void test_engine_length_mismatch_keeps_sequence(void **state)
{
	struct fixture *f = *state;
	struct frames fs;
	struct gre_stats st;
	struct gre_engine_stats es;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = addr(ENG_IP) };
	uint8_t b[GRE_HDR_MAX + 40];
	size_t h;

	NEED_ENGINE(f);
	peer_data(f, 7, 0xa7, 30);
	engine_in(f, 1000);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 1);
	/* seq 8 saying 10 octets of payload in a 30-octet payload */
	h = gre_packet_build(b, LOCAL_ID, 10, 1, 8, 0, 0);
	memset(b + h, 0xee, 30);
	b[h] = 0xff;
	b[h + 1] = 0x03;
	assert_int_equal(sendto(f->peer, b, h + 30, 0, (struct sockaddr *)&sa,
	    sizeof(sa)), (ssize_t)(h + 30));
	peer_data(f, 8, 0xa8, 30);
	peer_data(f, 9, 0xa9, 30);
	engine_in(f, 1010);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 2);
	assert_int_equal(fs.len[0], 30);
	assert_int_equal(fs.data[0][5], 0xa8);
	assert_int_equal(fs.data[1][5], 0xa9);
	gre_engine_stats(f->e, &es);
	assert_int_equal(es.rx_malformed, 1);
	gre_call_stats(f->c, &st);
	assert_int_equal(st.rx_packets, 3);
	assert_int_equal(st.rx_duplicates, 0);
	assert_int_equal(st.rx_delivered, 3);
	assert_non_null(strstr(f->last_log,
	    "payload length disagrees with datagram"));
}

static void test_engine_pty_backpressure(void **state)
{
	struct fixture *f = *state;
	struct gre_stats st;
	uint8_t sink[65536];
	int sz = 4096;
	size_t got = 0;
	ssize_t n;

	NEED_ENGINE(f);
	setsockopt(f->pty, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(f->ppp, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	/* far more than the socket and the backlog can hold */
	uint32_t count = 2 * GRE_PTY_BACKLOG / 1400 + 40;
	for (uint32_t s = 0; s < count; s++) {
		peer_data(f, s, 0x11, 1400);
		if (s % 20 == 19)
			engine_in(f, 1000);
	}
	engine_in(f, 1000);
	assert_int_equal(f->want_write, 1);
	gre_call_stats(f->c, &st);
	assert_true(st.pty_drops > 0);
	assert_true(st.pty_backlog > 0 && st.pty_backlog <= GRE_PTY_BACKLOG);
	/* pppd reads; the engine drains its backlog on write readiness */
	for (int i = 0; i < 1000 && f->want_write; i++) {
		while ((n = read(f->ppp, sink, sizeof(sink))) > 0)
			got += (size_t)n;
		gre_call_pty_output(f->c);
	}
	while ((n = read(f->ppp, sink, sizeof(sink))) > 0)
		got += (size_t)n;
	assert_int_equal(f->want_write, 0);
	gre_call_stats(f->c, &st);
	assert_int_equal(st.pty_backlog, 0);
	/* whole frames only: what arrived decodes without errors */
	assert_true(got > GRE_PTY_BACKLOG);
	assert_int_equal(st.rx_delivered, count);
}

/* pppd throws away what the pty holds when it takes the line: frames from
 * the peer wait until pppd has written (its own first LCP request). */
static void test_engine_pty_hold_until_pppd_writes(void **state)
{
	struct fixture *f = *state;
	struct frames fs;
	struct gre_stats st;
	struct gre_packet p;
	uint8_t buf[4096], fr[12] = { 0xff, 0x03, 0xc0, 0x21, 0x01, 0x01 };

	NEED_ENGINE(f);
	gre_call_hold_pty(f->c);
	for (uint32_t s = 0; s < 3; s++)
		peer_data(f, s, (uint8_t)(0x40 + s), 60 + s);
	engine_in(f, 1000);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 0);
	assert_int_equal(f->want_write, 0);
	gre_call_stats(f->c, &st);
	assert_int_equal(st.rx_delivered, 3);
	assert_int_equal(st.pty_drops, 0);
	assert_true(st.pty_backlog > 0);
	/* pppd speaks: its frame goes out, the held ones come in, in order */
	ppp_write_frame(f, fr, sizeof(fr));
	gre_call_pty_input(f->c, 1010);
	assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	assert_int_equal(p.payload_len, sizeof(fr));
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(fs.len[i], 60 + i);
		assert_int_equal(fs.data[i][5], 0x40 + i);
	}
	gre_call_stats(f->c, &st);
	assert_int_equal(st.pty_backlog, 0);
	/* no longer held: the next frame goes straight through */
	peer_data(f, 3, 0x50, 70);
	engine_in(f, 1020);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 1);
}

/* A pppd that waits for the peer to speak first: the daemon releases. */
static void test_engine_pty_hold_released(void **state)
{
	struct fixture *f = *state;
	struct frames fs;

	NEED_ENGINE(f);
	gre_call_hold_pty(f->c);
	peer_data(f, 0, 0x61, 80);
	peer_data(f, 1, 0x62, 81);
	engine_in(f, 1000);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 0);
	gre_call_release_pty(f->c);
	ppp_read(f, &fs);
	assert_int_equal(fs.n, 2);
	assert_int_equal(fs.len[0], 80);
	assert_int_equal(fs.len[1], 81);
	assert_int_equal(f->want_write, 0);
}

static void test_engine_backpressure_frames_intact(void **state)
{
	struct fixture *f = *state;
	struct hdlc_decoder d;
	struct frames fs;
	uint8_t sink[4096];
	int sz = 4096;
	ssize_t n;

	NEED_ENGINE(f);
	setsockopt(f->pty, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(f->ppp, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	hdlc_decoder_init(&d);
	memset(&fs, 0, sizeof(fs));
	for (uint32_t s = 0; s < 60; s++)
		peer_data(f, s, (uint8_t)s, 1000);
	engine_in(f, 1000);
	engine_in(f, 1000);
	for (int i = 0; i < 1000; i++) {
		while ((n = read(f->ppp, sink, sizeof(sink))) > 0)
			hdlc_decode(&d, sink, (size_t)n, collect, &fs);
		if (!f->want_write)
			break;
		gre_call_pty_output(f->c);
	}
	assert_int_equal(d.bad_fcs + d.runts + d.too_long + d.aborts, 0);
	assert_true(fs.n > 10);
	for (size_t i = 1; i < fs.n; i++)
		assert_true(fs.data[i][5] > fs.data[i - 1][5]);
}

static void test_engine_pty_eof(void **state)
{
	struct fixture *f = *state;

	NEED_ENGINE(f);
	close(f->ppp);
	f->ppp = -1;
	gre_call_pty_input(f->c, 1000);
	assert_int_equal(f->closed, 1);
	assert_int_equal(f->close_err, 0);
	gre_call_pty_input(f->c, 1000);
	peer_data(f, 0, 1, 40);
	engine_in(f, 1000);
	assert_int_equal(f->closed, 1);
	assert_int_equal(gre_engine_next_deadline(f->e), 0);
}

static void test_engine_real_pty_eio(void **state)
{
	struct fixture *f = *state;
	int m, s;

	NEED_ENGINE(f);
	assert_int_equal(openpty(&m, &s, NULL, NULL, NULL), 0);
	struct gre_call *c = gre_call_new(f->e, 9, 9, addr(PEER_IP), m, f);
	assert_non_null(c);
	close(s);
	gre_call_pty_input(c, 1000);
	assert_int_equal(f->closed, 1);
	assert_int_equal(f->close_err, EIO);
	gre_call_free(c);
	close(m);
}

static void test_engine_accm(void **state)
{
	struct fixture *f = *state;
	uint8_t p[40], buf[512];
	ssize_t n;

	NEED_ENGINE(f);
	memset(p, 0x01, sizeof(p));
	/* default: everything below 0x20 escaped */
	peer_send(f->peer, LOCAL_ID, 1, 0, 0, 0, p, sizeof(p));
	engine_in(f, 1000);
	n = read(f->ppp, buf, sizeof(buf));
	assert_true(n >= 2 * 40);
	/* a Set-Link-Info does not change it: only pppd's LCP does */
	gre_call_set_accm(f->c, 0, 0);
	peer_send(f->peer, LOCAL_ID, 1, 1, 0, 0, p, sizeof(p));
	engine_in(f, 1000);
	n = read(f->ppp, buf, sizeof(buf));
	assert_true(n >= 2 * 40);
}

/* Issue 19, item 10: a Set-Link-Info with Send ACCM 0 before LCP is open
 * must not let the peer's Configure-Request reach pppd with bare control
 * octets (pppd's line discipline drops them until its LCP is open). */
static void test_engine_sli_before_lcp_open(void **state)
{
	struct fixture *f = *state;
	/* Configure-Request: ACCM 0, magic 0x01020304, PFC, ACFC */
	static const uint8_t req[] = { 0xff, 0x03, 0xc0, 0x21, 1, 1, 0, 18,
	    2, 6, 0, 0, 0, 0, 5, 6, 1, 2, 3, 4, 7, 2, 8, 2 };
	uint8_t buf[512];
	ssize_t n;

	NEED_ENGINE(f);
	gre_call_set_accm(f->c, 0, 0);
	peer_send(f->peer, LOCAL_ID, 1, 0, 0, 0, req, sizeof(req));
	engine_in(f, 1000);
	n = read(f->ppp, buf, sizeof(buf));
	assert_true(n > (ssize_t)sizeof(req));
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] < 0x20)
			fail_msg("control octet 0x%02x unescaped at %zd", buf[i], i);
}

/* LCP as pppd and the peer exchange it, through the engine. */
static void lcp_conf(uint8_t *p, uint8_t code, uint8_t id, uint32_t accm)
{
	static const uint8_t t[] = { 0xff, 0x03, 0xc0, 0x21, 0, 0, 0, 10,
	    2, 6, 0, 0, 0, 0 };

	memcpy(p, t, sizeof(t));
	p[4] = code;
	p[5] = id;
	p[10] = (uint8_t)(accm >> 24);
	p[11] = (uint8_t)(accm >> 16);
	p[12] = (uint8_t)(accm >> 8);
	p[13] = (uint8_t)accm;
}

/* pppd's frame through the engine to the peer. */
static void lcp_from_pppd(struct fixture *f, const uint8_t *fr, size_t len)
{
	struct gre_packet p;
	uint8_t buf[4096];

	ppp_write_frame(f, fr, len);
	gre_call_pty_input(f->c, 1000);
	assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	assert_int_equal(p.payload_len, len);
}

/* 40 control characters from the peer: the octets pppd's side reads. */
static ssize_t ctl_to_pppd(struct fixture *f, uint32_t *seq)
{
	uint8_t p[44], buf[512];

	memset(p, 0x01, sizeof(p));
	p[0] = 0xff;
	p[1] = 0x03;
	p[2] = 0x00;
	p[3] = 0xfd;
	peer_send(f->peer, LOCAL_ID, 1, (*seq)++, 0, 0, p, sizeof(p));
	engine_in(f, 1000);
	return read(f->ppp, buf, sizeof(buf));
}

static void test_engine_lcp_accm(void **state)
{
	struct fixture *f = *state;
	static const uint8_t ipcp[] = { 0xff, 0x03, 0x80, 0x21, 1, 1, 0, 4 };
	uint8_t fr[16];
	uint32_t seq = 0;

	NEED_ENGINE(f);
	/* before LCP: the RFC 1662 default, every control char escaped */
	assert_true(ctl_to_pppd(f, &seq) >= 2 * 40);
	/* pppd asks for ACCM 0, the peer acks another request: no change */
	lcp_conf(fr, 1, 7, 0);
	lcp_from_pppd(f, fr, 14);
	lcp_conf(fr, 2, 8, 0);
	peer_send(f->peer, LOCAL_ID, 1, seq++, 0, 0, fr, 14);
	engine_in(f, 1000);
	assert_true(ctl_to_pppd(f, &seq) >= 2 * 40);
	/* the right ack: agreed, but pppd may not have set its map yet */
	lcp_conf(fr, 2, 7, 0);
	peer_send(f->peer, LOCAL_ID, 1, seq++, 0, 0, fr, 14);
	engine_in(f, 1000);
	assert_true(ctl_to_pppd(f, &seq) >= 2 * 40);
	/* pppd sends IPCP: its LCP is open, it receives with ACCM 0 */
	lcp_from_pppd(f, ipcp, sizeof(ipcp));
	assert_true(ctl_to_pppd(f, &seq) < 2 * 40);
	/* a Set-Link-Info with the default map does not undo what LCP says */
	gre_call_set_accm(f->c, 0xffffffff, 0xffffffff);
	assert_true(ctl_to_pppd(f, &seq) < 2 * 40);
	/* the peer renegotiates: back to escaping until LCP opens again */
	lcp_conf(fr, 1, 1, 0);
	peer_send(f->peer, LOCAL_ID, 1, seq++, 0, 0, fr, 14);
	engine_in(f, 1000);
	assert_true(ctl_to_pppd(f, &seq) >= 2 * 40);
	lcp_conf(fr, 1, 9, 0x000a0000);
	lcp_from_pppd(f, fr, 14);
	lcp_conf(fr, 2, 9, 0x000a0000);
	peer_send(f->peer, LOCAL_ID, 1, seq++, 0, 0, fr, 14);
	engine_in(f, 1000);
	lcp_from_pppd(f, ipcp, sizeof(ipcp));
	/* 0x01 is not in 0x000a0000: sent as is */
	assert_true(ctl_to_pppd(f, &seq) < 2 * 40);
	/* pppd terminates: the default again */
	fr[4] = 5;
	lcp_from_pppd(f, fr, 14);
	assert_true(ctl_to_pppd(f, &seq) >= 2 * 40);
}

/* Frames pppd writes across reads reach the peer whole (the decoder
 * writes into transmit slots and takes a frame in progress home). */
static void test_engine_frame_split_across_reads(void **state)
{
	struct fixture *f = *state;
	uint8_t fr[1400], b[3 * HDLC_ENCODED_MAX(1400)], buf[4096];
	struct gre_packet p;
	size_t n = 0, cut;
	int got = 0;

	NEED_ENGINE(f);
	for (size_t i = 0; i < sizeof(fr); i++)
		fr[i] = (uint8_t)(i * 7 + 3);
	fr[0] = 0xff;
	fr[1] = 0x03;
	for (int i = 0; i < 3; i++)
		n += hdlc_encode(fr, sizeof(fr), 0xffffffff, b + n,
		    HDLC_ENCODED_MAX(sizeof(fr)));
	cut = n / 2;
	assert_int_equal(write(f->ppp, b, cut), (ssize_t)cut);
	gre_call_pty_input(f->c, 1000);
	/* traffic the other way reuses the slots in between */
	peer_data(f, 0, 0x11, 100);
	engine_in(f, 1000);
	assert_int_equal(write(f->ppp, b + cut, n - cut), (ssize_t)(n - cut));
	gre_call_pty_input(f->c, 1000);
	while (peer_recv(f, &p, buf, sizeof(buf))) {
		if (!p.has_seq)
			continue;
		assert_int_equal(p.payload_len, sizeof(fr));
		assert_memory_equal(p.payload, fr, sizeof(fr));
		got++;
	}
	assert_int_equal(got, 3);
}

static void test_engine_many_frames_one_read(void **state)
{
	struct fixture *f = *state;
	uint8_t fr[1400], b[64 * 1500];
	size_t n = 0;
	struct gre_packet p;
	uint8_t buf[4096];
	int got = 0;

	NEED_ENGINE(f);
	int sz = 1 << 20;
	setsockopt(f->peer, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	memset(fr, 0x42, sizeof(fr));
	for (int i = 0; i < 60; i++)
		n += hdlc_encode(fr, sizeof(fr), 0, b + n, HDLC_ENCODED_MAX(sizeof(fr)));
	assert_int_equal(write(f->ppp, b, n), (ssize_t)n);
	gre_call_pty_input(f->c, 1000);
	while (peer_recv(f, &p, buf, sizeof(buf))) {
		assert_int_equal(p.seq, (uint32_t)got);
		got++;
	}
	assert_int_equal(got, 60);
}

/* A peer that answers GRE with ICMP protocol-unreachable (nothing listens
 * for GRE at its address, so the kernel does): the error lands on the
 * shared raw socket, and must cost neither this call nor any other. */
static void test_engine_icmp_error_keeps_calls(void **state)
{
	struct fixture *f = *state;
	struct gre_call *dead_end;
	struct gre_packet p;
	struct frames fs;
	uint8_t buf[4096], fr[64] = { 0xff, 0x03 };
	int sp[2];

	NEED_ENGINE(f);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	dead_end = gre_call_new(f->e, 77, 78, addr("127.77.0.9"), sp[1], f);
	assert_non_null(dead_end);
	for (int round = 0; round < 3; round++) {
		uint8_t b[HDLC_ENCODED_MAX(sizeof(fr))];
		size_t n = hdlc_encode(fr, sizeof(fr), 0, b, sizeof(b));

		assert_int_equal(write(sp[0], b, n), (ssize_t)n);
		gre_call_pty_input(dead_end, 1000);
		usleep(2000);
		/* the other call still works both ways */
		peer_data(f, (uint32_t)round, 0x33, 100);
		engine_in(f, 1000);
		ppp_read(f, &fs);
		assert_int_equal(fs.n, 1);
		ppp_write_frame(f, fr, sizeof(fr));
		gre_call_pty_input(f->c, 1000);
		assert_true(peer_recv(f, &p, buf, sizeof(buf)));
	}
	assert_int_equal(f->closed, 0);
	gre_call_free(dead_end);
	close(sp[0]);
	close(sp[1]);
}

#define E(t) cmocka_unit_test_setup_teardown(t, setup_engine, teardown_engine)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_data_ack),
		cmocka_unit_test(test_build_data_only),
		cmocka_unit_test(test_build_ack_only),
		cmocka_unit_test(test_parse_data_ack),
		cmocka_unit_test(test_parse_data_only),
		cmocka_unit_test(test_parse_ack_only),
		cmocka_unit_test(test_parse_roundtrip),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_parse_malformed_more),
		cmocka_unit_test(test_parse_ip),
		E(test_engine_call_ids),
		E(test_engine_gre_to_pty),
		E(test_engine_delayed_ack),
		E(test_engine_resume_continues_sequence),
		E(test_engine_ack_with_stream),
		E(test_engine_ack_on_any_packet),
		E(test_engine_ack_threshold),
		E(test_engine_pty_to_gre_with_piggyback),
		E(test_engine_pppd_log_lines_no_notice),
		E(test_engine_peer_acks),
		E(test_engine_reorder_and_gap_timer),
		E(test_engine_wrong_source_and_unknown_call),
		E(test_engine_receive_none),
		E(test_engine_malformed_counted_and_log_limited),
		E(test_engine_length_mismatch_keeps_sequence),
		E(test_engine_pty_backpressure),
		E(test_engine_backpressure_frames_intact),
		E(test_engine_pty_hold_until_pppd_writes),
		E(test_engine_pty_hold_released),
		E(test_engine_pty_eof),
		E(test_engine_real_pty_eio),
		E(test_engine_accm),
		E(test_engine_peer_window_counted),
		E(test_engine_far_run_needs_agreeing_ack),
		E(test_engine_sli_before_lcp_open),
		E(test_engine_lcp_accm),
		E(test_engine_frame_split_across_reads),
		E(test_engine_many_frames_one_read),
		E(test_engine_icmp_error_keeps_calls),
	};

	return cmocka_run_group_tests_name("gre", tests, NULL, NULL);
}
