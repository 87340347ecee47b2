/* Unit tests for TCP MSS clamping (pptpd/mss.c): the interface-name check
 * (the name comes from a report, and goes into an nftables command), the
 * values, the exact command text, tcp-mss-adjust in pptpd.conf, and the
 * table itself against this kernel's nf_tables in a network namespace of
 * the test's own (skipped, and reported so, where that cannot be had). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <cmocka.h>

#include <nftables/libnftables.h>

#include "pptpd/conf.h"
#include "pptpd/mss.h"

static void
test_ifname(void **state)
{
	(void)state;
	assert_true(mss_ifname_ok("ppp0"));
	assert_true(mss_ifname_ok("ppp65535"));
	assert_true(mss_ifname_ok("a.b-c_D9"));
	assert_true(mss_ifname_ok("ppp456789012345"));    /* 15 */
	assert_false(mss_ifname_ok("ppp4567890123456"));  /* 16 */
	assert_false(mss_ifname_ok(""));
	assert_false(mss_ifname_ok(NULL));
	assert_false(mss_ifname_ok("."));
	assert_false(mss_ifname_ok(".."));
	/* What would break out of the quoted name in a command. */
	assert_false(mss_ifname_ok("p\"; flush"));
	assert_false(mss_ifname_ok("ppp0\""));
	assert_false(mss_ifname_ok("ppp 0"));
	assert_false(mss_ifname_ok("ppp0\n"));
	assert_false(mss_ifname_ok("ppp0;"));
	assert_false(mss_ifname_ok("ppp0}"));
	assert_false(mss_ifname_ok("ppp/0"));
	assert_false(mss_ifname_ok("ppp\xc3\xa9"));
}

static void
test_value(void **state)
{
	(void)state;
	assert_int_equal(mss_value(1400, 0, MSS_HDR_IPV4), 1360);
	assert_int_equal(mss_value(1400, 0, MSS_HDR_IPV6), 1340);
	assert_int_equal(mss_value(1500, 0, MSS_HDR_IPV4), 1460);
	assert_int_equal(mss_value(0, 1300, MSS_HDR_IPV4), 1300);
	assert_int_equal(mss_value(1400, 1300, MSS_HDR_IPV6), 1280);
	/* A tiny MTU clamps to the floor, never below. */
	assert_int_equal(mss_value(296, 0, MSS_HDR_IPV4), MSS_MIN);
	assert_int_equal(mss_value(296, 0, MSS_HDR_IPV6), MSS_MIN - 20);
	assert_int_equal(mss_value(576, 0, MSS_HDR_IPV4), 536);
}

static void
test_cmd_text(void **state)
{
	char b[MSS_CMD_MAX], small[40];
	(void)state;

	int n = mss_cmd_add(b, sizeof(b), "ppp0", 1360, 1340, 0);
	assert_int_equal(n, strlen(b));
	assert_string_equal(b,
	    "add element inet pptpd mss4 { \"ppp0\" : 1360 }\n"
	    "add element inet pptpd mss6 { \"ppp0\" : 1340 }\n");
	assert_true(mss_cmd_add(b, sizeof(b), "ppp7", 1300, 1280, 1) > 0);
	assert_string_equal(b,
	    "delete element inet pptpd mss4 { \"ppp7\" }\n"
	    "delete element inet pptpd mss6 { \"ppp7\" }\n"
	    "add element inet pptpd mss4 { \"ppp7\" : 1300 }\n"
	    "add element inet pptpd mss6 { \"ppp7\" : 1280 }\n");
	assert_true(mss_cmd_del(b, sizeof(b), "ppp12") > 0);
	assert_string_equal(b,
	    "delete element inet pptpd mss4 { \"ppp12\" }\n"
	    "delete element inet pptpd mss6 { \"ppp12\" }\n");
	assert_true(mss_cmd_close(b, sizeof(b)) > 0);
	assert_string_equal(b, "delete table inet pptpd\n");
	/* A name refused, a buffer too small: nothing to run. */
	assert_int_equal(mss_cmd_add(b, sizeof(b), "p\" }; flush ruleset", 1, 1,
	    0), -1);
	assert_int_equal(mss_cmd_del(b, sizeof(b), "a b"), -1);
	assert_int_equal(mss_cmd_add(small, sizeof(small), "ppp0", 1360, 1340,
	    0), -1);
	assert_int_equal(mss_cmd_open(small, sizeof(small)), -1);

	assert_true(mss_cmd_open(b, sizeof(b)) > 0);
	/* A leftover table is replaced, in the same transaction. */
	assert_non_null(strstr(b, "add table inet pptpd\ndelete table inet "
	    "pptpd\ntable inet pptpd {\n"));
	assert_non_null(strstr(b, "type filter hook forward priority mangle; "
	    "policy accept;"));
	/* Both ways, both families, SYNs (and SYN-ACKs) only. */
	static const char *const rules[] = {
		"meta nfproto ipv4 tcp flags & (syn | rst) == syn tcp option "
		"maxseg size set iifname map @mss4\n",
		"meta nfproto ipv4 tcp flags & (syn | rst) == syn tcp option "
		"maxseg size set oifname map @mss4\n",
		"meta nfproto ipv6 tcp flags & (syn | rst) == syn tcp option "
		"maxseg size set iifname map @mss6\n",
		"meta nfproto ipv6 tcp flags & (syn | rst) == syn tcp option "
		"maxseg size set oifname map @mss6\n",
	};
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		assert_non_null(strstr(b, rules[i]));
}

/* tcp-mss-adjust in pptpd.conf: yes (the default), no, or N. */
static int
load(const char *text, struct conf *c, char *err, size_t errlen)
{
	char path[] = "/tmp/test_mss.XXXXXX";
	int fd = mkstemp(path), rc;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	conf_init(c);
	rc = conf_load(c, path, err, errlen);
	unlink(path);
	return rc;
}

static void
test_conf(void **state)
{
	struct conf c;
	char err[CONF_ERR_LEN];
	(void)state;

	assert_int_equal(load("# nothing\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.tcp_mss_adjust, CONF_MSS_FROM_MTU);
	conf_free(&c);
	assert_int_equal(load("tcp-mss-adjust no\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.tcp_mss_adjust, CONF_MSS_OFF);
	conf_free(&c);
	assert_int_equal(load("tcp-mss-adjust yes\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.tcp_mss_adjust, CONF_MSS_FROM_MTU);
	conf_free(&c);
	assert_int_equal(load("tcp-mss-adjust 1360\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.tcp_mss_adjust, 1360);
	conf_free(&c);
	assert_int_equal(load("tcp-mss-adjust 536\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.tcp_mss_adjust, 536);
	conf_free(&c);
	static const char *const bad[] = { "535", "65496", "1", "0", "-1",
	    "Yes", "on", "0x500", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[64];
		snprintf(line, sizeof(line), "\ntcp-mss-adjust %s\n", bad[i]);
		assert_int_equal(load(line, &c, err, sizeof(err)), -1);
		assert_non_null(strstr(err, ":2: "));
		assert_non_null(strstr(err, "tcp-mss-adjust"));
		conf_free(&c);
	}
	assert_int_equal(load("tcp-mss-adjust maybe\n", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bad value 'maybe' for 'tcp-mss-adjust' "
	    "(yes, no, or an MSS 536..65495)"));
	conf_free(&c);
}

/* What table inet pptpd's map `map` holds, as nft lists it. */
static char *
list_map(const char *map)
{
	struct nft_ctx *n = nft_ctx_new(NFT_CTX_DEFAULT);
	char cmd[64];
	char *out;

	assert_non_null(n);
	nft_ctx_buffer_output(n);
	nft_ctx_buffer_error(n);
	snprintf(cmd, sizeof(cmd), "list map inet pptpd %s", map);
	if (nft_run_cmd_from_buffer(n, cmd) != 0)
		out = NULL;
	else
		out = strdup(nft_ctx_get_output_buffer(n));
	nft_ctx_free(n);
	return out;
}

static int
table_exists(void)
{
	struct nft_ctx *n = nft_ctx_new(NFT_CTX_DEFAULT);
	int rc;

	assert_non_null(n);
	nft_ctx_buffer_output(n);
	nft_ctx_buffer_error(n);
	rc = nft_run_cmd_from_buffer(n, "list table inet pptpd") == 0;
	nft_ctx_free(n);
	return rc;
}

/* The table in this kernel: made, one element per interface, replaced
 * by a name's new owner, kept from its old one, gone at close. */
static void
test_kernel_table(void **state)
{
	char why[256];
	unsigned v;
	struct mss *m;
	char *l;
	(void)state;

	if (unshare(CLONE_NEWNET) < 0) {
		print_message("no network namespace of our own (not root?): "
		    "the kernel's table is not tested here\n");
		skip();
	}
	if ((m = mss_open(0, why, sizeof(why))) == NULL) {
		print_message("no nf_tables here (%s): the kernel's table is not "
		    "tested here\n", why);
		skip();
	}
	assert_true(table_exists());
	/* The loopback's MTU is 65536: 65496 for IPv4, 65476 for IPv6. */
	assert_int_equal(mss_add(m, "lo", 7, &v, why, sizeof(why)), 0);
	assert_int_equal(v, 65496);
	assert_non_null(l = list_map("mss4"));
	assert_non_null(strstr(l, "\"lo\" : 65496"));
	free(l);
	assert_non_null(l = list_map("mss6"));
	assert_non_null(strstr(l, "\"lo\" : 65476"));
	free(l);
	/* A new session on the same name takes the element over. */
	assert_int_equal(mss_add(m, "lo", 9, &v, why, sizeof(why)), 0);
	mss_del(m, "lo", 7);   /* the old owner: not its element any more */
	assert_non_null(l = list_map("mss4"));
	assert_non_null(strstr(l, "\"lo\""));
	free(l);
	mss_del(m, "lo", 9);
	assert_non_null(l = list_map("mss4"));
	assert_null(strstr(l, "\"lo\""));
	free(l);
	/* No such interface, a name refused: an error, no element. */
	assert_int_equal(mss_add(m, "nosuch0", 3, &v, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "cannot read the MTU of nosuch0"));
	assert_int_equal(mss_add(m, "lo\"}", 3, &v, why, sizeof(why)), -1);
	/* A pptpd killed before its exit left its table: the next replaces
	 * it (with its elements). */
	assert_int_equal(mss_add(m, "lo", 4, &v, why, sizeof(why)), 0);
	struct mss *m2 = mss_open(1300, why, sizeof(why));
	assert_non_null(m2);
	assert_non_null(l = list_map("mss4"));
	assert_null(strstr(l, "\"lo\""));
	free(l);
	assert_int_equal(mss_add(m2, "lo", 5, &v, why, sizeof(why)), 0);
	assert_int_equal(v, 1300);
	mss_close(m2);
	assert_false(table_exists());
	/* m's table is gone too: its close says so, and frees. */
	mss_close(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ifname),
		cmocka_unit_test(test_value),
		cmocka_unit_test(test_cmd_text),
		cmocka_unit_test(test_conf),
		cmocka_unit_test(test_kernel_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
