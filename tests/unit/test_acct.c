/* Unit tests for pptpd's own RADIUS accounting: radcfg.c reads what
 * radius.so's radiusclient.conf says (the accounting server, its secret
 * from the servers file), acct.c sends an Interim-Update with the
 * session's Framed-IPv6-Prefix, believes only an answer whose Response
 * Authenticator holds, and retries as radius_timeout/radius_retries say.
 * The server is a UDP socket of the test on 127.0.0.1. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/byteorder.h"
#include "pptpd/acct.h"
#include "pptpd/loop.h"
#include "pptpd/radcfg.h"
#include "pptpd/radius.h"
#include "tests/unit/harness.h"

#define SECRET "s3cr3t-acct"

static char dir[] = "/tmp/pptpd-acct-XXXXXX";

static void
write_file(const char *name, const char *text)
{
	assert_int_equal(harness_write(dir, name, text), 0);
}

/* radiusclient.conf naming 127.0.0.1:port and our servers file. */
static void
write_conf(unsigned port, const char *extra)
{
	char text[512];
	snprintf(text, sizeof(text), "# as examples/radius\nauthserver\t127.0.0.1:1812\n"
	    "acctserver\t127.0.0.1:%u\nservers\t\t%s/servers\nnas_identifier\tpptpd-1\n"
	    "bindaddr\t127.0.0.1\nradius_timeout\t1\nradius_retries\t2\n%s",
	    port, dir, extra);
	write_file("radiusclient.conf", text);
	write_file("servers", "# host secret\n198.18.0.250\tother\nlocalhost\t"
	    SECRET " a comment\n");
}

static int
load(struct radcfg *c, char *why)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/radiusclient.conf", dir);
	return radcfg_load(path, NULL, 0, c, why, 256);
}

static void
test_radcfg(void **state)
{
	struct radcfg c;
	char why[256];

	write_conf(1813, "");
	assert_int_equal(load(&c, why), 0);
	assert_string_equal(c.secret, SECRET);
	assert_string_equal(c.nas_id, "pptpd-1");
	assert_int_equal(ntohs(c.server.sin_port), 1813);
	assert_int_equal(c.server.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	assert_int_equal(c.bind.s_addr, htonl(INADDR_LOOPBACK));
	assert_int_equal(c.timeout_s, 1);
	assert_int_equal(c.retries, 2);
	/* '#' starts a comment only at a line's start, as radiusclient reads */
	write_file("servers", "127.0.0.1 ab#cd\n");
	assert_int_equal(load(&c, why), 0);
	assert_string_equal(c.secret, "ab#cd");
	/* what is wrong is said, with the file and line */
	write_file("servers", "127.0.0.1 0123456789012345678901234567890123456789"
	    "0123456789\n");
	assert_int_equal(load(&c, why), -1);
	assert_non_null(strstr(why, "servers:1: the secret of 127.0.0.1: longer "
	    "than radiusclient's 48 characters"));
	write_file("servers", "198.18.0.250 other\n");
	assert_int_equal(load(&c, why), -1);
	assert_non_null(strstr(why, "servers: no secret for 127.0.0.1"));
	/* privsep's monitor reads with RADCFG_NO_RESOLVE: a name that does
	 * not resolve (.invalid never does) is not looked up, and what it
	 * needs, the servers file opened, holds */
	char path[128];
	snprintf(path, sizeof(path), "%s/radiusclient.conf", dir);
	write_file("radiusclient.conf", "acctserver radius.invalid\nservers /nonexistent\n");
	assert_int_equal(radcfg_load(path, NULL, RADCFG_NO_RESOLVE, &c, why, 256), -1);
	assert_non_null(strstr(why, "/nonexistent"));
	write_conf(1813, "");
	snprintf(why, 256, "servers %s/servers\nacctserver radius.invalid\n", dir);
	write_file("radiusclient.conf", why);
	assert_int_equal(radcfg_load(path, NULL, RADCFG_NO_RESOLVE, &c, why, 256), 0);
	assert_true(c.unresolved);
	assert_int_equal(load(&c, why), -1);   /* the worker does look it up */
	write_file("radiusclient.conf", "authserver 127.0.0.1\n");
	assert_int_equal(load(&c, why), -1);
	assert_non_null(strstr(why, "radiusclient.conf: no acctserver"));
	write_file("radiusclient.conf", "acctserver 127.0.0.1\n\nbindaddr x.y\n");
	assert_int_equal(load(&c, why), -1);
	assert_non_null(strstr(why, "radiusclient.conf:3: bindaddr 'x.y': not "
	    "an IPv4 address or *"));
	write_file("radiusclient.conf", "acctserver 127.0.0.1:0\n");
	assert_int_equal(load(&c, why), -1);
	assert_non_null(strstr(why, ":1: acctserver '127.0.0.1:0'"));
	/* pppd's radiusclient takes no secret here: refused, not misread */
	write_file("radiusclient.conf", "acctserver 127.0.0.1:1813:inline\n");
	assert_int_equal(load(&c, why), -1);
	write_file("radiusclient.conf", "acctserver 127.0.0.1\nradius_timeout abc\n");
	assert_int_equal(load(&c, why), -1);
	assert_non_null(strstr(why, ":2: radius_timeout 'abc': want 1 to 60"));
	/* only regular files: a device or a FIFO would block or never end */
	write_file("radiusclient.conf", "acctserver 127.0.0.1\nservers /dev/zero\n");
	assert_int_equal(load(&c, why), -1);
	assert_non_null(strstr(why, "/dev/zero: Invalid argument"));
	write_file("radiusclient.conf", "acctserver 127.0.0.1\nradius_retries 0\n");
	assert_int_equal(load(&c, why), -1);
	assert_non_null(strstr(why, ":2: radius_retries '0': want 1 to 10"));
}

#define ANSWER_NONE    0
#define ANSWER_FORGED  1   /* one with another secret's authenticator */
#define ANSWER_BOTH    2   /* that, then the genuine one */

struct server {
	int             fd;
	struct loop    *loop;
	struct loop_timer t;
	int             got;        /* datagrams received */
	int             answer;     /* ANSWER_* */
	uint8_t         last[RADIUS_MAX_LEN];
	size_t          last_len;
};

static int
server_open(struct server *sv, unsigned *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	sv->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	assert_true(sv->fd >= 0);
	assert_int_equal(bind(sv->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(sv->fd, (struct sockaddr *)&a, &al), 0);
	*port = ntohs(a.sin_port);
	return 0;
}

/* An answer to `req`, as sv->answer says. */
static void
server_answer(struct server *sv, const uint8_t *req, size_t len,
    struct sockaddr_in *to)
{
	struct radius_pkt p;
	struct radius_builder b;
	const char *why;
	assert_int_equal(radius_parse(&p, req, len, &why), 0);
	radius_begin(&b, RADIUS_ACCOUNTING_RESPONSE, p.id);
	int n = radius_finish(&b, p.auth, "wrong", 5);
	sendto(sv->fd, b.buf, (size_t)n, 0, (struct sockaddr *)to, sizeof(*to));
	if (sv->answer != ANSWER_BOTH)
		return;
	radius_begin(&b, RADIUS_ACCOUNTING_RESPONSE, p.id);
	n = radius_finish(&b, p.auth, SECRET, strlen(SECRET));
	sendto(sv->fd, b.buf, (size_t)n, 0, (struct sockaddr *)to, sizeof(*to));
}

static void
server_tick(void *arg)
{
	struct server *sv = arg;
	struct sockaddr_in from;
	socklen_t fl = sizeof(from);
	ssize_t n;
	while ((n = recvfrom(sv->fd, sv->last, sizeof(sv->last), 0,
	    (struct sockaddr *)&from, &fl)) > 0) {
		sv->got++;
		sv->last_len = (size_t)n;
		if (sv->answer)
			server_answer(sv, sv->last, sv->last_len, &from);
	}
	loop_timer_set(sv->loop, &sv->t, 50, server_tick, sv);
}

static void
stop(void *arg)
{
	loop_stop(arg);
}

/* The attribute `type` of the request the server got last. */
static int
last_attr(struct server *sv, uint8_t type, struct radius_attr *out)
{
	struct radius_pkt p;
	const char *why;
	size_t off = 0;
	assert_int_equal(radius_parse(&p, sv->last, sv->last_len, &why), 0);
	while (radius_attr_next(&p, &off, out))
		if (out->type == type)
			return 1;
	return 0;
}

static void
run_for(struct loop *loop, uint64_t ms)
{
	struct loop_timer t = { 0 };
	loop_timer_set(loop, &t, ms, stop, loop);
	loop_run(loop);
}

static void
test_interim(void **state)
{
	struct loop *loop = loop_new();
	struct server sv = { .loop = loop, .answer = ANSWER_FORGED };
	struct radcfg c;
	struct acct_stats st;
	struct radius_attr a;
	struct radius_pkt p;
	char why[256] = "";
	unsigned port;
	const char *pwhy;

	server_open(&sv, &port);
	write_conf(port, "");
	assert_int_equal(load(&c, why), 0);
	struct acct *ac = acct_open(loop, &c, why, sizeof(why));
	assert_non_null(ac);
	struct acct_session s = { .session_id = "692E8D5B12A401", .user = "ivan",
		.session_time = 7, .who = "call 1/2", .nas_port = 3 };
	inet_pton(AF_INET, "198.19.0.10", &s.framed_ip);
	inet_pton(AF_INET6, "2001:db8:200:5::", &s.prefix6);
	assert_int_equal(acct_interim(ac, &s), 0);
	server_tick(&sv);
	/* A forged answer (another secret) is dropped: not answered, the
	 * request still waits and goes again after radius_timeout (1 s) */
	run_for(loop, 400);
	acct_stats(ac, &st);
	assert_int_equal(sv.got, 1);
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.answered, 0);
	assert_int_equal(st.bad_answers, 1);
	sv.answer = ANSWER_BOTH;
	run_for(loop, 900);
	acct_stats(ac, &st);
	assert_int_equal(sv.got, 2);
	assert_int_equal(st.answered, 1);
	assert_int_equal(st.bad_answers, 2);
	/* What the server got: an Accounting-Request whose authenticator
	 * holds for the secret, saying Interim-Update, the session and its
	 * /64 as RFC 3162 writes it. */
	assert_int_equal(radius_parse(&p, sv.last, sv.last_len, &pwhy), 0);
	assert_int_equal(p.code, RADIUS_ACCOUNTING_REQUEST);
	assert_int_equal(radius_request_verify(&p, SECRET, strlen(SECRET)), 1);
	assert_int_equal(radius_request_verify(&p, "other", 5), 0);
	assert_true(last_attr(&sv, RADIUS_ACCT_STATUS_TYPE, &a));
	assert_int_equal(be32_get(a.value), RADIUS_STATUS_INTERIM_UPDATE);
	assert_true(last_attr(&sv, RADIUS_ACCT_SESSION_ID, &a));
	assert_int_equal(a.len, 14);
	assert_memory_equal(a.value, "692E8D5B12A401", 14);
	assert_true(last_attr(&sv, RADIUS_FRAMED_IPV6_PREFIX, &a));
	const uint8_t want6[] = { 0, 64, 0x20, 0x01, 0x0d, 0xb8, 0x02, 0, 0, 5 };
	assert_int_equal(a.len, sizeof(want6));
	assert_memory_equal(a.value, want6, sizeof(want6));
	assert_true(last_attr(&sv, RADIUS_NAS_IDENTIFIER, &a));
	assert_memory_equal(a.value, "pptpd-1", 7);
	assert_true(last_attr(&sv, RADIUS_NAS_IP_ADDRESS, &a));
	assert_int_equal(be32_get(a.value), INADDR_LOOPBACK);
	assert_true(last_attr(&sv, RADIUS_FRAMED_IP_ADDRESS, &a));
	assert_true(last_attr(&sv, RADIUS_USER_NAME, &a));
	assert_true(last_attr(&sv, RADIUS_ACCT_SESSION_TIME, &a));
	assert_int_equal(be32_get(a.value), 7);
	assert_true(last_attr(&sv, RADIUS_NAS_PORT, &a));
	assert_int_equal(be32_get(a.value), 3);

	/* A server that does not answer: sent radius_retries (2) times,
	 * radius_timeout apart, then given up. */
	sv.answer = ANSWER_NONE;
	sv.got = 0;
	assert_int_equal(acct_interim(ac, &s), 0);
	run_for(loop, 2600);
	acct_stats(ac, &st);
	assert_int_equal(sv.got, 2);
	assert_int_equal(st.unanswered, 1);
	loop_timer_cancel(loop, &sv.t);
	acct_close(ac);
	close(sv.fd);
	loop_free(loop);
}

int
main(void)
{
	if (mkdtemp(dir) == NULL)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_radcfg),
		cmocka_unit_test(test_interim),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
