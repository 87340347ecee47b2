/* One call's report channel from the pppd plugin (pptpd/facts.c): every
 * report pppd sent before it closed its end is handed on, whatever else
 * the queue holds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "pptpd/facts.h"
#include "pptpd/loop.h"

struct seen {
	int  n;
	char last[64];
};

static void
record(void *arg, const char *data, size_t len)
{
	struct seen *s = arg;
	s->n++;
	snprintf(s->last, sizeof(s->last), "%.*s", (int)len, data);
}

/* A channel as pptpd opens it for a call: our end in *f, pppd's returned. */
static int
channel(struct loop **l, struct facts *f, struct seen *s)
{
	int pppd;
	*l = loop_new();
	assert_non_null(*l);
	assert_int_equal(facts_open(f, *l, record, s, &pppd), 0);
	return pppd;
}

static void
send_text(int fd, const char *text)
{
	assert_int_equal(send(fd, text, strlen(text), 0), (ssize_t)strlen(text));
}

/* An empty message (recv() returns 0 for it, as for the end) queued
 * before a report, and pppd gone: the report after it still comes. */
static void
test_report_behind_empty_message(void **state)
{
	(void)state;
	struct loop *l;
	struct facts f;
	struct seen s = { 0 };
	static const char report[] = "v=1 event=down call=7";
	int pppd = channel(&l, &f, &s);

	send_text(pppd, "");
	send_text(pppd, report);
	close(pppd);
	facts_drain(&f);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.last, report);
	assert_int_equal(f.fd, -1);   /* and then the end was seen */
	facts_close(&f);
	loop_free(l);
}

/* Only empty messages, then the end: nothing handed on, the channel
 * closed, no endless loop. */
static void
test_empty_messages_then_end(void **state)
{
	(void)state;
	struct loop *l;
	struct facts f;
	struct seen s = { 0 };
	int pppd = channel(&l, &f, &s);

	for (int i = 0; i < 3; i++)
		send_text(pppd, "");
	close(pppd);
	facts_drain(&f);
	assert_int_equal(s.n, 0);
	assert_int_equal(f.fd, -1);
	loop_free(l);
}

/* pppd still there: an empty message is skipped, the channel stays
 * open, and a report after it comes. */
static void
test_empty_message_while_open(void **state)
{
	(void)state;
	struct loop *l;
	struct facts f;
	struct seen s = { 0 };
	static const char report[] = "v=1 event=up call=7";
	int pppd = channel(&l, &f, &s);

	send_text(pppd, "");
	facts_drain(&f);
	assert_int_equal(s.n, 0);
	assert_true(f.fd >= 0);
	send_text(pppd, report);
	facts_drain(&f);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.last, report);
	close(pppd);
	facts_close(&f);
	loop_free(l);
}

/* pptpd's message to the plugin (report.h, event=hangup) reaches pppd's
 * end whole, is not taken for a report of pppd's, and is refused once
 * the channel is closed. */
static void
test_send_to_plugin(void **state)
{
	(void)state;
	struct loop *l;
	struct facts f;
	struct seen s = { 0 };
	static const char msg[] = "v=1 event=hangup call=7 cause=admin";
	char got[64];
	int pppd = channel(&l, &f, &s);

	assert_int_equal(facts_send(&f, msg, strlen(msg)), 0);
	assert_int_equal(recv(pppd, got, sizeof(got), MSG_DONTWAIT),
	    (ssize_t)strlen(msg));
	assert_memory_equal(got, msg, strlen(msg));
	facts_drain(&f);
	assert_int_equal(s.n, 0);
	facts_close(&f);
	errno = 0;
	assert_int_equal(facts_send(&f, msg, strlen(msg)), -1);
	assert_int_equal(errno, EPIPE);
	close(pppd);
	loop_free(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_behind_empty_message),
		cmocka_unit_test(test_empty_messages_then_end),
		cmocka_unit_test(test_empty_message_while_open),
		cmocka_unit_test(test_send_to_plugin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
