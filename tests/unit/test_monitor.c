/* Unit tests for proto/monitor.c: the monitor-worker records. Every type
 * round-trips; a record the contract does not allow is refused whole, and
 * over a real socketpair the descriptors that came with it are closed. */
#include <arpa/inet.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/byteorder.h"
#include "proto/monitor.h"
#include "proto/report.h"
#include "tests/unit/harness.h"

/* One valid record of each type. */
static struct mon_msg
sample(enum mon_type t)
{
	struct mon_msg m;
	memset(&m, 0, sizeof(m));
	m.type = t;
	m.seq = 0x01020304u + t;
	switch (t) {
	case MON_WELCOME:
		m.u.welcome.generation = 7;
		m.u.welcome.calls = 70000;
		break;
	case MON_CONN_HELD:
	case MON_CONN_DROP: m.u.conn.conn = 42; break;
	case MON_CALL_START:
		m.u.call_start.call_id = 0x1234;
		m.u.call_start.peer_call_id = 0xbeef;
		m.u.call_start.flags = MON_CALL_KERNEL | MON_CALL_REPORTS;
		m.u.call_start.local_ip = htonl(0xc6130001);
		m.u.call_start.remote_ip = htonl(0xc613000a);
		break;
	case MON_CALL_STARTED:
		m.u.call_started.call_id = 0x1234;
		m.u.call_started.pid = 31337;
		m.u.call_started.local_ip = htonl(0xc6130001);
		m.u.call_started.remote_ip = htonl(0xc613000a);
		break;
	case MON_CALL_REFUSED:
		m.u.call_refused.result = 2;
		m.u.call_refused.error = 4;
		snprintf(m.u.call_refused.reason, MON_TEXT, "address pool exhausted");
		break;
	case MON_CALL_HANGUP:
		m.u.call_hangup.call_id = 0x1234;
		m.u.call_hangup.cause = REPORT_CAUSE_ADMIN;
		m.u.call_hangup.how = MON_HANGUP_CLEAN;
		break;
	case MON_CALL_IFACE:
		m.u.call_iface.call_id = 0x1234;
		snprintf(m.u.call_iface.ifname, MON_IFNAME, "ppp7");
		break;
	case MON_CHILD_EXIT:
		m.u.child_exit.call_id = 0x1234;
		m.u.child_exit.pid = 31337;
		m.u.child_exit.status = -1;
		break;
	case MON_CALL_REAP: m.u.call_reap.call_id = 0x1234; break;
	case MON_ADMIN: m.u.admin.what = MON_ADMIN_UPGRADE; break;
	case MON_RESULT:
		m.u.result.status = MON_ERR_REFUSED;
		snprintf(m.u.result.text, MON_TEXT, "call 4660 is not yours");
		break;
	case MON_CALL_CLAMPED:
		m.u.call_clamped.call_id = 0x1234;
		m.u.call_clamped.mss = 1360;
		break;
	case MON_CALL_RATE:
		m.u.call_rate.call_id = 0x1234;
		m.u.call_rate.down = 10000000000ULL;   /* above 32 bits */
		m.u.call_rate.up = 512000;
		snprintf(m.u.call_rate.ifname, MON_IFNAME, "ppp7");
		break;
	case MON_NOTIFY:
		m.u.notify.state = MON_NOTIFY_RELOADING;
		m.u.notify.sessions = 70000;
		m.u.notify.ctrls = 3;
		break;
	case MON_CALL_ADDR:
		m.u.call_addr.call_id = 0x1234;
		m.u.call_addr.remote_ip = htonl(0xc613000c);
		break;
	case MON_CALL_RESUME:
		m.u.call_resume.call_id = 0x1234;
		m.u.call_resume.peer_call_id = 0x4321;
		m.u.call_resume.flags = MON_CALL_REPORTS | MON_CALL_IPV6;
		m.u.call_resume.pid = 31337;
		m.u.call_resume.local_ip = htonl(0xc6130001);
		m.u.call_resume.remote_ip = htonl(0xc613000c);
		break;
	case MON_FILE:
		m.u.file.index = 1;
		m.u.file.count = 3;
		snprintf(m.u.file.path, MON_PATH, "/etc/ppp/chap-secrets");
		break;
	case MON_CALL_ROUTE6:
		m.u.call_route6.call_id = 0x1234;
		m.u.call_route6.op = MON_ROUTE6_ADD;
		m.u.call_route6.prefix[0] = 0x20;   /* 2001:db8:100:7::/64 */
		m.u.call_route6.prefix[1] = 0x01;
		m.u.call_route6.prefix[2] = 0x0d;
		m.u.call_route6.prefix[3] = 0xb8;
		m.u.call_route6.prefix[4] = 0x01;
		m.u.call_route6.prefix[7] = 0x07;
		snprintf(m.u.call_route6.ifname, MON_IFNAME, "ppp7");
		break;
	default: break;
	}
	m.nfds = (unsigned)mon_fds_of(&m);
	for (unsigned i = 0; i < m.nfds; i++)
		m.fds[i] = 100 + (int)i;
	return m;
}

static void
test_every_type_round_trips(void **state)
{
	for (unsigned t = MON_HELLO; t <= MON_TYPE_MAX; t++) {
		struct mon_msg m = sample(t), back;
		uint8_t buf[MON_MAX_LEN];
		const char *why = NULL;
		size_t n = mon_encode(&m, buf, sizeof(buf));
		assert_true(n >= MON_HDR_LEN);
		assert_int_equal(mon_decode(buf, n, m.fds, m.nfds, &back, &why), 0);
		assert_memory_equal(&back, &m, sizeof(m));
		assert_string_not_equal(mon_type_name(t), "?");
	}
	assert_string_equal(mon_type_name(0), "?");
	assert_string_equal(mon_type_name(MON_TYPE_MAX + 1), "?");
}

static void
test_header_on_the_wire(void **state)
{
	struct mon_msg m = sample(MON_CALL_HANGUP);
	uint8_t buf[MON_MAX_LEN];
	const uint8_t want[] = {
		'P', 'P', 'T', 'M', 0, MON_VERSION, 0, MON_CALL_HANGUP,
		0x01, 0x02, 0x03, 0x04 + MON_CALL_HANGUP, 0, 0, 0, 4,
		0x12, 0x34, REPORT_CAUSE_ADMIN, MON_HANGUP_CLEAN,
	};
	assert_int_equal(mon_encode(&m, buf, sizeof(buf)), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
}

/* Decode `buf` after `edit` changed it; must be refused with `reason`. */
static void
refused(uint8_t *buf, size_t len, const int *fds, unsigned nfds,
    const char *reason)
{
	struct mon_msg m;
	const char *why = NULL;
	assert_int_equal(mon_decode(buf, len, fds, nfds, &m, &why), -1);
	assert_non_null(why);
	assert_string_equal(why, reason);
	assert_int_equal(m.nfds, 0);
}

static size_t
encoded(enum mon_type t, uint8_t *buf)
{
	struct mon_msg m = sample(t);
	return mon_encode(&m, buf, MON_MAX_LEN);
}

static void
test_bad_headers_refused(void **state)
{
	uint8_t buf[MON_MAX_LEN + 4];
	size_t n = encoded(MON_CALL_REAP, buf);
	refused(buf, MON_HDR_LEN - 1, NULL, 0, "shorter than a header");
	buf[0] ^= 1;
	refused(buf, n, NULL, 0, "bad magic");
	n = encoded(MON_CALL_REAP, buf);
	be16_put(buf + 4, MON_VERSION + 1);
	refused(buf, n, NULL, 0, "another version of the protocol");
	n = encoded(MON_CALL_REAP, buf);
	be16_put(buf + 6, MON_TYPE_MAX + 1);
	refused(buf, n, NULL, 0, "unknown type");
	be16_put(buf + 6, 0);
	refused(buf, n, NULL, 0, "unknown type");
	n = encoded(MON_CALL_REAP, buf);
	refused(buf, n - 1, NULL, 0, "length not the type's");
	refused(buf, n + 1, NULL, 0, "length not the type's");
	be32_put(buf + 12, 8);
	refused(buf, n, NULL, 0, "length not the type's");
}

/* CALL_ROUTE6: a /64 and an interface to add, neither to delete. */
static void
test_bad_route6_refused(void)
{
	uint8_t buf[MON_MAX_LEN];
	uint8_t *op = buf + MON_HDR_LEN + 2, *prefix = buf + MON_HDR_LEN + 4;
	uint8_t *name = prefix + MON_PREFIX6;
	size_t n = encoded(MON_CALL_ROUTE6, buf);

	be16_put(op, MON_ROUTE6_DEL + 1);
	refused(buf, n, NULL, 0, "unknown route op");
	n = encoded(MON_CALL_ROUTE6, buf);
	prefix[15] = 1;   /* 2001:db8:100:7::1/64 */
	refused(buf, n, NULL, 0, "not a /64");
	n = encoded(MON_CALL_ROUTE6, buf);
	memset(name, 0, MON_IFNAME);
	refused(buf, n, NULL, 0, "no interface name");
	n = encoded(MON_CALL_ROUTE6, buf);
	be16_put(op, MON_ROUTE6_DEL);   /* naming the prefix and interface */
	refused(buf, n, NULL, 0, "a delete names no prefix or interface");
	memset(name, 0, MON_IFNAME);
	refused(buf, n, NULL, 0, "a delete names no prefix or interface");
	memset(prefix, 0, MON_PREFIX6);
	struct mon_msg m;
	const char *why = NULL;
	assert_int_equal(mon_decode(buf, n, NULL, 0, &m, &why), 0);
	assert_int_equal(m.u.call_route6.op, MON_ROUTE6_DEL);
}

/* FILE: its place among the reload's files, and an absolute path. */
static void
test_bad_file_refused(void)
{
	uint8_t buf[MON_MAX_LEN];
	int fd = 100;
	const char *why = "file index or count out of range";
	size_t n = encoded(MON_FILE, buf);
	be16_put(buf + MON_HDR_LEN, 3);   /* index == count */
	refused(buf, n, &fd, 1, why);
	n = encoded(MON_FILE, buf);
	be16_put(buf + MON_HDR_LEN + 2, 0);
	refused(buf, n, &fd, 1, why);
	n = encoded(MON_FILE, buf);
	be16_put(buf + MON_HDR_LEN + 2, MON_FILES_MAX + 1);
	refused(buf, n, &fd, 1, why);
	n = encoded(MON_FILE, buf);
	memcpy(buf + MON_HDR_LEN + 4, "etc/ppp", 7);   /* relative */
	refused(buf, n, &fd, 1, "path not an absolute printable string");
	n = encoded(MON_FILE, buf);
	buf[MON_HDR_LEN + 6] = '\n';
	refused(buf, n, &fd, 1, "path not an absolute printable string");
	n = encoded(MON_FILE, buf);
	refused(buf, n, NULL, 0, "descriptors not the type's");
}

static void
test_bad_fields_refused(void **state)
{
	uint8_t buf[MON_MAX_LEN];
	size_t n = encoded(MON_CALL_REAP, buf);
	buf[MON_HDR_LEN + 3] = 1;   /* reserved */
	refused(buf, n, NULL, 0, "reserved field not zero");
	n = encoded(MON_CALL_REAP, buf);
	be16_put(buf + MON_HDR_LEN, 0);
	refused(buf, n, NULL, 0, "call ID 0");
	n = encoded(MON_CALL_START, buf);
	be16_put(buf + MON_HDR_LEN + 6, 1);   /* reserved */
	refused(buf, n, NULL, 0, "reserved field not zero");
	n = encoded(MON_CALL_START, buf);
	be16_put(buf + MON_HDR_LEN, 0);
	refused(buf, n, NULL, 0, "call ID 0");
	n = encoded(MON_CALL_START, buf);
	be16_put(buf + MON_HDR_LEN + 4, 0x8000);
	refused(buf, n, NULL, 0, "unknown call flags");
	n = encoded(MON_CALL_RESUME, buf);
	be16_put(buf + MON_HDR_LEN + 6, 1);
	refused(buf, n, (int[]){ 100, 101 }, 2, "reserved field not zero");
	n = encoded(MON_CALL_HANGUP, buf);
	buf[MON_HDR_LEN + 3] = MON_HANGUP_DROP + 1;
	refused(buf, n, NULL, 0, "unknown hang-up");
	n = encoded(MON_CALL_HANGUP, buf);
	buf[MON_HDR_LEN + 2] = REPORT_CAUSE_REPLACED + 1;
	refused(buf, n, NULL, 0, "unknown cause");
	n = encoded(MON_ADMIN, buf);
	be16_put(buf + MON_HDR_LEN, MON_ADMIN_UPGRADE + 1);
	refused(buf, n, NULL, 0, "unknown admin request");
	n = encoded(MON_RESULT, buf);
	be32_put(buf + MON_HDR_LEN, MON_ERR_CONF + 1);
	refused(buf, n, NULL, 0, "unknown status");
	n = encoded(MON_CALL_CLAMPED, buf);
	be16_put(buf + MON_HDR_LEN + 2, 0);
	refused(buf, n, NULL, 0, "call ID or MSS 0");
	n = encoded(MON_NOTIFY, buf);
	be16_put(buf + MON_HDR_LEN, MON_NOTIFY_STOPPING + 1);
	refused(buf, n, NULL, 0, "unknown notify state");
	test_bad_route6_refused();
	n = encoded(MON_CALL_ADDR, buf);
	be32_put(buf + MON_HDR_LEN + 4, 0);
	refused(buf, n, NULL, 0, "call ID or address 0");
	n = encoded(MON_CALL_ADDR, buf);
	buf[MON_HDR_LEN + 3] = 1;   /* reserved */
	refused(buf, n, NULL, 0, "reserved field not zero");
	n = encoded(MON_RELOAD_FILES, buf);
	buf[MON_HDR_LEN] = 1;   /* reserved */
	refused(buf, n, NULL, 0, "reserved field not zero");
	test_bad_file_refused();
}

static void
test_bad_strings_refused(void **state)
{
	uint8_t buf[MON_MAX_LEN];
	size_t n = encoded(MON_CALL_IFACE, buf);
	uint8_t *name = buf + MON_HDR_LEN + 4;
	memset(name, 'p', MON_IFNAME);   /* no NUL */
	refused(buf, n, NULL, 0, "interface name not a printable string");
	n = encoded(MON_CALL_IFACE, buf);
	name[1] = '\n';
	refused(buf, n, NULL, 0, "interface name not a printable string");
	n = encoded(MON_CALL_IFACE, buf);
	name[MON_IFNAME - 1] = 'x';   /* after the NUL: one encoding only */
	refused(buf, n, NULL, 0, "interface name not a printable string");
	n = encoded(MON_CALL_IFACE, buf);
	memset(name, 0, MON_IFNAME);
	refused(buf, n, NULL, 0, "interface name not a printable string");
	n = encoded(MON_RESULT, buf);
	buf[MON_HDR_LEN + 4] = 0x80;
	refused(buf, n, NULL, 0, "text not a printable string");
}

static void
test_descriptor_count_is_the_types(void **state)
{
	uint8_t buf[MON_MAX_LEN];
	int fds[MON_MAX_FDS + 1] = { 100, 101, 102, 103 };   /* one too many too */
	size_t n = encoded(MON_CONN_HOLD, buf);
	refused(buf, n, fds, 0, "descriptors not the type's");
	refused(buf, n, fds, 2, "descriptors not the type's");
	n = encoded(MON_CALL_REAP, buf);
	refused(buf, n, fds, 1, "descriptors not the type's");
	/* CALL_STARTED: the pty on the engine path, none on the kernel
	 * path. */
	struct mon_msg m = sample(MON_CALL_STARTED);
	assert_int_equal(mon_fds_of(&m), 1);
	n = mon_encode(&m, buf, sizeof(buf));
	refused(buf, n, fds, 0, "descriptors not the type's");
	m.u.call_started.flags = MON_CALL_KERNEL;
	assert_int_equal(mon_fds_of(&m), 0);
	n = mon_encode(&m, buf, sizeof(buf));
	refused(buf, n, fds, 1, "descriptors not the type's");
	/* CALL_START: the connection, then the report channel's two ends as
	 * its flags say; the kernel channel is the monitor's to open, never
	 * passed. */
	m = sample(MON_CALL_START);
	assert_int_equal(mon_fds_of(&m), 3);
	n = mon_encode(&m, buf, sizeof(buf));
	refused(buf, n, fds, 1, "descriptors not the type's");
	refused(buf, n, fds, 2, "descriptors not the type's");
	refused(buf, n, fds, 4, "descriptors not the type's");
	m.u.call_start.flags = 0;
	assert_int_equal(mon_fds_of(&m), 1);
	n = mon_encode(&m, buf, sizeof(buf));
	refused(buf, n, fds, 0, "descriptors not the type's");
	refused(buf, n, fds, 2, "descriptors not the type's");
}

static void
test_encode_refuses_what_decode_would(void **state)
{
	uint8_t buf[MON_MAX_LEN];
	struct mon_msg m = sample(MON_CALL_IFACE);
	memset(m.u.call_iface.ifname, 'x', MON_IFNAME);
	assert_int_equal(mon_encode(&m, buf, sizeof(buf)), 0);
	m = sample(MON_CALL_HANGUP);
	m.u.call_hangup.call_id = 0;
	assert_int_equal(mon_encode(&m, buf, sizeof(buf)), 0);
	m = sample(MON_RESULT);
	assert_int_equal(mon_encode(&m, buf, MON_HDR_LEN + 4), 0);   /* room */
	m.type = (enum mon_type)0;
	assert_int_equal(mon_encode(&m, buf, sizeof(buf)), 0);
}

static void
test_who_sends_what(void **state)
{
	assert_true(mon_from_worker(MON_HELLO));
	assert_true(mon_from_worker(MON_CALL_START));
	assert_true(mon_from_worker(MON_CALL_HANGUP));
	assert_true(mon_from_worker(MON_ADMIN));
	assert_false(mon_from_worker(MON_CALL_STARTED));
	assert_false(mon_from_worker(MON_CHILD_EXIT));
	assert_false(mon_from_worker(MON_RESULT));
	assert_true(mon_from_worker(MON_RELOAD_FILES));
	assert_false(mon_from_worker(MON_FILE));
	assert_false(mon_from_worker(0));
}

static void
test_socketpair_carries_descriptors(void **state)
{
	int sv[2], p1[2], p2[2], p3[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	assert_int_equal(pipe(p1), 0);
	assert_int_equal(pipe(p2), 0);
	assert_int_equal(pipe(p3), 0);
	struct mon_msg m = sample(MON_CALL_START), back;
	m.u.call_start.flags = MON_CALL_REPORTS;   /* conn, report's ends */
	m.nfds = 3;
	m.fds[0] = p1[1];
	m.fds[1] = p2[1];
	m.fds[2] = p3[1];
	assert_int_equal(mon_send(sv[0], &m), 0);
	const char *why = NULL;
	assert_int_equal(mon_recv(sv[1], &back, &why), 1);
	assert_int_equal(back.nfds, 3);
	assert_int_equal(back.u.call_start.call_id, 0x1234);
	/* The copies work and are close-on-exec. */
	assert_true(fcntl(back.fds[0], F_GETFD) & FD_CLOEXEC);
	assert_int_equal(write(back.fds[1], "x", 1), 1);
	char c;
	assert_int_equal(read(p2[0], &c, 1), 1);
	assert_int_equal(c, 'x');
	mon_close_fds(&back);
	assert_int_equal(back.nfds, 0);
	/* End of file: 0. */
	close(sv[0]);
	assert_int_equal(mon_recv(sv[1], &back, &why), 0);
	close(sv[1]);
	close(p1[0]); close(p1[1]); close(p2[0]); close(p2[1]);
	close(p3[0]); close(p3[1]);
}

/* A record with a descriptor it must not carry, sent by hand: refused,
 * and the descriptor closed on the receiving side. */
static void
test_refused_record_leaks_no_descriptor(void **state)
{
	int sv[2], p[2];
	uint8_t buf[MON_MAX_LEN];
	union { struct cmsghdr a; char b[CMSG_SPACE(sizeof(int) * 3)]; } ctl;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	assert_int_equal(pipe(p), 0);
	size_t n = encoded(MON_CALL_REAP, buf);
	int fds[3] = { p[0], p[1], p[0] };
	struct iovec iov = { buf, n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.b, .msg_controllen = sizeof(ctl.b) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	assert_int_equal(sendmsg(sv[0], &mh, 0), (ssize_t)n);
	int before = proc_fds(0);
	struct mon_msg m;
	const char *why = NULL;
	/* errno says refused, not a stale EAGAIN (which a caller takes for
	 * "nothing to read" and would log nothing) */
	errno = EAGAIN;
	assert_int_equal(mon_recv(sv[1], &m, &why), -1);
	assert_int_equal(errno, EPROTO);
	assert_string_equal(why, "descriptors not the type's");
	assert_int_equal(proc_fds(0), before);
	/* The same for a record longer than any. */
	memset(buf, 0, sizeof(buf));
	uint8_t big[MON_MAX_LEN + 8] = { 0 };
	iov = (struct iovec){ big, sizeof(big) };
	mh.msg_controllen = CMSG_SPACE(sizeof(int));
	c->cmsg_len = CMSG_LEN(sizeof(int));
	assert_int_equal(sendmsg(sv[0], &mh, 0), (ssize_t)sizeof(big));
	assert_int_equal(mon_recv(sv[1], &m, &why), -1);
	assert_string_equal(why, "longer than any record");
	assert_int_equal(proc_fds(0), before);
	/* mon_send refuses a record with the wrong descriptors. */
	struct mon_msg s = sample(MON_CALL_REAP);
	s.nfds = 1;
	s.fds[0] = p[0];
	assert_int_equal(mon_send(sv[0], &s), -1);
	close(sv[0]); close(sv[1]); close(p[0]); close(p[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_round_trips),
		cmocka_unit_test(test_header_on_the_wire),
		cmocka_unit_test(test_bad_headers_refused),
		cmocka_unit_test(test_bad_fields_refused),
		cmocka_unit_test(test_bad_strings_refused),
		cmocka_unit_test(test_descriptor_count_is_the_types),
		cmocka_unit_test(test_encode_refuses_what_decode_would),
		cmocka_unit_test(test_who_sends_what),
		cmocka_unit_test(test_socketpair_carries_descriptors),
		cmocka_unit_test(test_refused_record_leaks_no_descriptor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
