/* Unit tests for client/ctrl.c, pptp-load's side of the PPTP control
 * connection: what each profile sends (field by field, decoded with the
 * server's codec), the order of setup and teardown, Echo both ways, and a
 * reason for every way a server can fail it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "client/ctrl.h"

#define MAXSENT 16

static struct pptp_msg sent[MAXSENT];
static unsigned nsent;
static int call_up_id = -1;
static int done_reason = -1;
static int fail_send;

static int t_send(void *arg, const uint8_t *msg, size_t len)
{
	(void)arg;
	if (fail_send)
		return -1;
	assert_int_equal(msg_len(msg[9]), len);
	assert_true(nsent < MAXSENT);
	assert_int_equal(msg_decode(msg, len, &sent[nsent], NULL), 0);
	nsent++;
	return 0;
}

static void t_call_up(void *arg, uint16_t id) { (void)arg; call_up_id = id; }
static void t_done(void *arg, enum ctrl_reason r) { (void)arg; done_reason = (int)r; }

static const struct ctrl_ops ops = { t_send, t_call_up, t_done };
static struct ctrl c;

static void start(enum ctrl_profile p)
{
	struct ctrl_config cfg = { .profile = p, .call_id = 0x4242,
		.serial = 1, .subaddr = p == CTRL_PROFILE_WINDOWS ?
		    "{GUID}" : NULL };
	nsent = 0;
	call_up_id = -1;
	done_reason = -1;
	fail_send = 0;
	ctrl_init(&c, &cfg, &ops, NULL);
	ctrl_start(&c, 1000);
}

/* The server's message, encoded and fed in (split in two, as TCP may). */
static void feed(const struct pptp_msg *m, uint64_t now)
{
	uint8_t buf[PPTP_MAX_MSG_LEN];
	size_t n = msg_encode(m, buf, sizeof(buf));
	assert_true(n > 0);
	ctrl_input(&c, buf, 5, now);
	ctrl_input(&c, buf + 5, n - 5, now);
}

static void feed_sccrp(uint8_t result)
{
	struct pptp_msg m = { .type = PPTP_SCCRP };
	m.u.sccr.version = PPTP_VERSION;
	m.u.sccr.result = result;
	feed(&m, 1010);
}

static void feed_ocrp(uint16_t peer_call_id, uint8_t result)
{
	struct pptp_msg m = { .type = PPTP_OCRP };
	m.u.ocrp.call_id = 777;
	m.u.ocrp.peer_call_id = peer_call_id;
	m.u.ocrp.result = result;
	feed(&m, 1020);
}

static void feed_type(uint16_t type, uint64_t now)
{
	struct pptp_msg m = { .type = type };
	if (type == PPTP_CDN)
		m.u.cdn.call_id = 777;
	if (type == PPTP_STOPCCRP || type == PPTP_STOPCCRQ)
		m.u.stop.reason_or_result = 1;
	feed(&m, now);
}

static void windows_sccrq_and_ocrq(void **state)
{
	(void)state;
	start(CTRL_PROFILE_WINDOWS);
	assert_int_equal(nsent, 1);
	assert_int_equal(sent[0].type, PPTP_SCCRQ);
	assert_int_equal(sent[0].u.sccr.version, 0x0100);
	assert_int_equal(sent[0].u.sccr.framing, 1);
	assert_int_equal(sent[0].u.sccr.bearer, 1);
	assert_int_equal(sent[0].u.sccr.max_channels, 0);
	assert_int_equal(sent[0].u.sccr.firmware, 0);
	assert_string_equal(sent[0].u.sccr.hostname, "");
	assert_string_equal(sent[0].u.sccr.vendor, "Microsoft");
	feed_sccrp(PPTP_SCCRP_OK);
	assert_int_equal(nsent, 2);
	assert_int_equal(sent[1].type, PPTP_OCRQ);
	assert_int_equal(sent[1].u.ocrq.call_id, 0x4242);
	assert_int_equal(sent[1].u.ocrq.serial, 1);
	assert_int_equal(sent[1].u.ocrq.min_bps, 300);
	assert_int_equal(sent[1].u.ocrq.max_bps, 100000000);
	assert_int_equal(sent[1].u.ocrq.bearer, 3);
	assert_int_equal(sent[1].u.ocrq.framing, 3);
	assert_int_equal(sent[1].u.ocrq.window, 64);
	assert_int_equal(sent[1].u.ocrq.delay, 0);
	assert_string_equal(sent[1].u.ocrq.phone, "");
	assert_string_equal(sent[1].u.ocrq.subaddr, "{GUID}");
	/* OCRP: Set-Link-Info before anything else (LCP comes after) */
	feed_ocrp(0x4242, PPTP_OCRP_CONNECTED);
	assert_int_equal(call_up_id, 777);
	assert_int_equal(nsent, 3);
	assert_int_equal(sent[2].type, PPTP_SLI);
	assert_int_equal(sent[2].u.sli.peer_call_id, 777);
	assert_int_equal(sent[2].u.sli.send_accm, 0xffffffffU);
	assert_int_equal(sent[2].u.sli.recv_accm, 0xffffffffU);
	/* after authentication the session asks for it again */
	ctrl_send_sli(&c);
	assert_int_equal(sent[3].type, PPTP_SLI);
	assert_int_equal(done_reason, -1);
}

static void windows_teardown_ccrq_then_stopccrq(void **state)
{
	(void)state;
	start(CTRL_PROFILE_WINDOWS);
	feed_sccrp(PPTP_SCCRP_OK);
	feed_ocrp(0x4242, PPTP_OCRP_CONNECTED);
	nsent = 0;
	ctrl_close(&c, 2000);
	assert_int_equal(nsent, 1);
	assert_int_equal(sent[0].type, PPTP_CCRQ);
	assert_int_equal(sent[0].u.ccrq.call_id, 0x4242);
	feed_type(PPTP_CDN, 2010);
	assert_int_equal(nsent, 2);
	assert_int_equal(sent[1].type, PPTP_STOPCCRQ);
	assert_int_equal(done_reason, -1);
	feed_type(PPTP_STOPCCRP, 2020);
	assert_int_equal(done_reason, CTRL_OK);
}

static void linux_profile(void **state)
{
	(void)state;
	start(CTRL_PROFILE_LINUX);
	assert_int_equal(sent[0].type, PPTP_SCCRQ);
	assert_int_equal(sent[0].u.sccr.framing, 3);
	assert_int_equal(sent[0].u.sccr.bearer, 3);
	assert_int_equal(sent[0].u.sccr.max_channels, 0xffff);
	assert_int_equal(sent[0].u.sccr.firmware, 1);
	assert_string_equal(sent[0].u.sccr.hostname, "local");
	assert_string_equal(sent[0].u.sccr.vendor, "cananian");
	feed_sccrp(PPTP_SCCRP_OK);
	/* pptp-linux waits a second before its OCRQ */
	assert_int_equal(nsent, 1);
	assert_int_equal(ctrl_timer(&c, 1500), 1010 + CTRL_LNX_OCRQ_DELAY_MS);
	assert_int_equal(nsent, 1);
	ctrl_timer(&c, 1010 + CTRL_LNX_OCRQ_DELAY_MS);
	assert_int_equal(nsent, 2);
	assert_int_equal(sent[1].type, PPTP_OCRQ);
	assert_int_equal(sent[1].u.ocrq.min_bps, 2400);
	assert_int_equal(sent[1].u.ocrq.max_bps, 10000000);
	assert_int_equal(sent[1].u.ocrq.window, 3);
	feed_ocrp(0x4242, PPTP_OCRP_CONNECTED);
	/* no Set-Link-Info from pptp-linux */
	assert_int_equal(nsent, 2);
	assert_int_equal(call_up_id, 777);
	/* teardown: CCRQ, and after the CDN no StopCCRQ */
	ctrl_close(&c, 5000);
	assert_int_equal(sent[2].type, PPTP_CCRQ);
	feed_type(PPTP_CDN, 5010);
	assert_int_equal(nsent, 3);
	assert_int_equal(done_reason, CTRL_OK);
}

static void echo_both_ways(void **state)
{
	(void)state;
	start(CTRL_PROFILE_WINDOWS);
	feed_sccrp(PPTP_SCCRP_OK);
	feed_ocrp(0x4242, PPTP_OCRP_CONNECTED);
	nsent = 0;
	struct pptp_msg m = { .type = PPTP_ECHORQ };
	m.u.echo.id = 0xabcdef01;
	feed(&m, 3000);
	assert_int_equal(nsent, 1);
	assert_int_equal(sent[0].type, PPTP_ECHORP);
	assert_int_equal(sent[0].u.echo.id, 0xabcdef01);
	assert_int_equal(sent[0].u.echo.result, PPTP_ECHO_OK);
	/* 60 s of silence: our Echo-Request */
	uint64_t at = ctrl_timer(&c, 3001);
	assert_int_equal(at, 3000 + CTRL_ECHO_IDLE_MS);
	ctrl_timer(&c, at);
	assert_int_equal(nsent, 2);
	assert_int_equal(sent[1].type, PPTP_ECHORQ);
	/* answered: still up, and the next one is 60 s after the answer */
	m.type = PPTP_ECHORP;
	m.u.echo.id = sent[1].u.echo.id;
	m.u.echo.result = PPTP_ECHO_OK;
	feed(&m, at + 10);
	assert_int_equal(ctrl_timer(&c, at + 11), at + 10 + CTRL_ECHO_IDLE_MS);
	/* unanswered: the connection is given up */
	ctrl_timer(&c, at + 10 + CTRL_ECHO_IDLE_MS);
	ctrl_timer(&c, at + 10 + CTRL_ECHO_IDLE_MS + CTRL_ECHO_WAIT_MS);
	assert_int_equal(done_reason, CTRL_ECHO_TIMEOUT);
}

static void refusals_have_reasons(void **state)
{
	(void)state;
	start(CTRL_PROFILE_WINDOWS);
	feed_sccrp(PPTP_SCCRP_NOT_AUTHORIZED);
	assert_int_equal(done_reason, CTRL_SCCRP_REFUSED);

	start(CTRL_PROFILE_WINDOWS);
	feed_sccrp(PPTP_SCCRP_OK);
	feed_ocrp(0x4242, PPTP_OCRP_BUSY);
	assert_int_equal(done_reason, CTRL_OCRP_REFUSED);
	assert_int_equal(call_up_id, -1);

	start(CTRL_PROFILE_WINDOWS);
	feed_sccrp(PPTP_SCCRP_OK);
	feed_ocrp(0x1111, PPTP_OCRP_CONNECTED);
	assert_int_equal(done_reason, CTRL_BAD_CALL_ID);

	/* CDN while the call is up: cleared by the server */
	start(CTRL_PROFILE_WINDOWS);
	feed_sccrp(PPTP_SCCRP_OK);
	feed_ocrp(0x4242, PPTP_OCRP_CONNECTED);
	feed_type(PPTP_CDN, 4000);
	assert_int_equal(done_reason, CTRL_CLEARED);

	/* StopCCRQ from the server: answered, then over */
	start(CTRL_PROFILE_WINDOWS);
	feed_sccrp(PPTP_SCCRP_OK);
	nsent = 0;
	feed_type(PPTP_STOPCCRQ, 4000);
	assert_int_equal(sent[0].type, PPTP_STOPCCRP);
	assert_int_equal(done_reason, CTRL_STOPPED);

	/* a second SCCRP: not what a server sends now */
	start(CTRL_PROFILE_WINDOWS);
	feed_sccrp(PPTP_SCCRP_OK);
	feed_sccrp(PPTP_SCCRP_OK);
	assert_int_equal(done_reason, CTRL_UNEXPECTED);

	/* the socket refuses our message */
	start(CTRL_PROFILE_WINDOWS);
	fail_send = 1;
	feed_sccrp(PPTP_SCCRP_OK);
	assert_int_equal(done_reason, CTRL_SEND_FAILED);
}

static void garbage_and_timeouts(void **state)
{
	(void)state;
	static const uint8_t junk[16] = { 0, 16, 0, 1, 0xde, 0xad, 0xbe, 0xef };
	start(CTRL_PROFILE_WINDOWS);
	ctrl_input(&c, junk, sizeof(junk), 1001);
	assert_int_equal(done_reason, CTRL_GARBAGE);
	/* nothing more is called after the end */
	done_reason = -1;
	ctrl_input(&c, junk, sizeof(junk), 1002);
	assert_int_equal(done_reason, -1);

	/* a length that is not the type's */
	uint8_t bad[PPTP_MAX_MSG_LEN];
	struct pptp_msg m = { .type = PPTP_SCCRP };
	size_t n = msg_encode(&m, bad, sizeof(bad));
	bad[1] = (uint8_t)(n - 1);
	start(CTRL_PROFILE_WINDOWS);
	ctrl_input(&c, bad, n, 1001);
	assert_int_equal(done_reason, CTRL_GARBAGE);

	/* a silent server: Windows gives up after 30 s */
	start(CTRL_PROFILE_WINDOWS);
	assert_int_equal(ctrl_timer(&c, 1001), 1000 + CTRL_WIN_SETUP_MS);
	ctrl_timer(&c, 1000 + CTRL_WIN_SETUP_MS - 1);
	assert_int_equal(done_reason, -1);
	ctrl_timer(&c, 1000 + CTRL_WIN_SETUP_MS);
	assert_int_equal(done_reason, CTRL_SETUP_TIMEOUT);

	/* no OCRP */
	start(CTRL_PROFILE_WINDOWS);
	feed_sccrp(PPTP_SCCRP_OK);
	ctrl_timer(&c, 1010 + CTRL_WIN_SETUP_MS);
	assert_int_equal(done_reason, CTRL_SETUP_TIMEOUT);

	/* teardown unanswered */
	start(CTRL_PROFILE_WINDOWS);
	feed_sccrp(PPTP_SCCRP_OK);
	feed_ocrp(0x4242, PPTP_OCRP_CONNECTED);
	ctrl_close(&c, 2000);
	ctrl_timer(&c, 2000 + CTRL_CLOSE_WAIT_MS);
	assert_int_equal(done_reason, CTRL_CLOSE_TIMEOUT);
}

/* Every byte split, a whole exchange still decodes the same. */
static void byte_by_byte(void **state)
{
	(void)state;
	uint8_t buf[PPTP_MAX_MSG_LEN * 2];
	struct pptp_msg a = { .type = PPTP_SCCRP }, b = { .type = PPTP_OCRP };
	a.u.sccr.result = 1;
	b.u.ocrp.peer_call_id = 0x4242;
	b.u.ocrp.call_id = 99;
	b.u.ocrp.result = 1;
	size_t n = msg_encode(&a, buf, sizeof(buf));
	n += msg_encode(&b, buf + n, sizeof(buf) - n);
	start(CTRL_PROFILE_WINDOWS);
	for (size_t i = 0; i < n; i++)
		ctrl_input(&c, buf + i, 1, 1001);
	assert_int_equal(call_up_id, 99);
	assert_int_equal(done_reason, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(windows_sccrq_and_ocrq),
		cmocka_unit_test(windows_teardown_ccrq_then_stopccrq),
		cmocka_unit_test(linux_profile),
		cmocka_unit_test(echo_both_ways),
		cmocka_unit_test(refusals_have_reasons),
		cmocka_unit_test(garbage_and_timeouts),
		cmocka_unit_test(byte_by_byte),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
