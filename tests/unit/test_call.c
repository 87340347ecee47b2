/* pppd's command line must be Poptop's, so options files and ip-up scripts
 * written for Poptop see the same arguments. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pptpd/call.h"
#include "pptpd/conf.h"

static struct in_addr
ip(const char *s)
{
	struct in_addr a;
	inet_pton(AF_INET, s, &a);
	return a;
}

static void
join(char **argv, int argc, char *out, size_t len)
{
	out[0] = '\0';
	for (int i = 0; i < argc; i++) {
		if (i)
			strncat(out, " ", len - strlen(out) - 1);
		strncat(out, argv[i], len - strlen(out) - 1);
	}
}

static void
test_argv_poptop_form(void **state)
{
	struct conf c;
	char *argv[PPPD_ARGV_MAX], buf[128], line[512];
	conf_init(&c);
	free(c.option);
	c.option = strdup("/etc/ppp/options.pptpd");
	struct pppd_args in = { ip("198.19.0.1"), ip("198.19.0.10"),
		ip("198.18.0.2"), 4711, 0, 0, 0, { 0 }, 0 };
	int argc = pppd_argv(&c, &in, argv, buf, sizeof(buf));
	assert_int_not_equal(argc, -1);
	assert_null(argv[argc]);
	join(argv, argc, line, sizeof(line));
	assert_string_equal(line, "/usr/sbin/pppd local file /etc/ppp/options.pptpd "
	    "115200 198.19.0.1:198.19.0.10 ipparam 198.18.0.2 remotenumber 198.18.0.2");
	conf_free(&c);
}

static void
test_argv_noipparam_no_pool(void **state)
{
	struct conf c;
	char *argv[PPPD_ARGV_MAX], buf[128], line[512];
	conf_init(&c);
	free(c.option);
	c.option = NULL;
	c.noipparam = 1;
	struct in_addr any = { .s_addr = INADDR_ANY };
	struct pppd_args in = { any, any, ip("203.0.113.9"), 1, 0, 0, 0, { 0 }, 0 };
	int argc = pppd_argv(&c, &in, argv, buf, sizeof(buf));
	join(argv, argc, line, sizeof(line));
	assert_string_equal(line, "/usr/sbin/pppd local 115200 remotenumber 203.0.113.9");
	conf_free(&c);
}

static void
test_argv_buffer_too_small(void **state)
{
	struct conf c;
	char *argv[PPPD_ARGV_MAX], buf[8];
	conf_init(&c);
	struct pppd_args in = { ip("198.19.0.1"), ip("198.19.0.10"),
		ip("198.18.0.2"), 1, 0, 0, 0, { 0 }, 0 };
	assert_int_equal(pppd_argv(&c, &in, argv, buf, sizeof(buf)), -1);
	conf_free(&c);
}

static void
test_argv_plugin_options(void **state)
{
	struct conf c;
	char *argv[PPPD_ARGV_MAX], buf[256], line[1024];
	conf_init(&c);
	free(c.option);
	c.option = NULL;
	free(c.plugin);
	c.plugin = strdup("/lib/pptpd/pptpd-policy.so");
	c.peers = strdup("/etc/ppp/pptpd-peers");
	c.logwtmp = 1;
	struct in_addr any = { .s_addr = INADDR_ANY };
	struct pppd_args in = { any, ip("198.19.0.10"), ip("198.18.0.2"), 4711,
		1, 0, 0, { 0 }, 0 };
	int argc = pppd_argv(&c, &in, argv, buf, sizeof(buf));
	join(argv, argc, line, sizeof(line));
	assert_string_equal(line, "/usr/sbin/pppd local 115200 :198.19.0.10 "
	    "ipparam 198.18.0.2 remotenumber 198.18.0.2 plugin /lib/pptpd/pptpd-policy.so "
	    "pptpd-report-fd 4 pptpd-call 4711 pptpd-client 198.18.0.2 "
	    "pptpd-peers /etc/ppp/pptpd-peers pptpd-logwtmp");
	conf_free(&c);
}

/* The kernel path: no pty, so no speed and pppd told to stay in the
 * foreground; the plugin gets the channel socket pptpd opened, and what
 * it was opened with. */
static void
test_argv_kernel_path(void **state)
{
	struct conf c;
	char *argv[PPPD_ARGV_MAX], buf[256], line[1024];
	conf_init(&c);
	free(c.plugin);
	c.plugin = strdup("/lib/pptpd/pptpd-policy.so");
	struct pppd_args in = { ip("198.19.0.1"), ip("198.19.0.10"),
		ip("198.18.0.2"), 4711, 1, 1, 33,
		ip("198.18.0.1"), 0 };
	int argc = pppd_argv(&c, &in, argv, buf, sizeof(buf));
	assert_int_not_equal(argc, -1);
	join(argv, argc, line, sizeof(line));
	assert_string_equal(line, "/usr/sbin/pppd local file /etc/ppp/options.pptpd "
	    "nodetach 198.19.0.1:198.19.0.10 ipparam 198.18.0.2 remotenumber 198.18.0.2 "
	    "plugin /lib/pptpd/pptpd-policy.so pptpd-report-fd 4 "
	    "pptpd-call 4711 pptpd-client 198.18.0.2 "
	    "pptpd-kernel 4711,33,198.18.0.1,198.18.0.2 pptpd-kernel-fd 3");
	conf_free(&c);
}

/* With an IPv6 pool the session holds a /64: pppd is given +ipv6 (last,
 * after the kernel channel's options, which pppd then looks options up
 * in too), on either path. */
static void
test_argv_ipv6(void **state)
{
	struct conf c;
	char *argv[PPPD_ARGV_MAX], buf[256], line[1024];
	conf_init(&c);
	struct pppd_args in = { ip("198.19.0.1"), ip("198.19.0.10"),
		ip("198.18.0.2"), 4711, 1, 1, 33, ip("198.18.0.1"), 1 };
	int argc = pppd_argv(&c, &in, argv, buf, sizeof(buf));
	assert_int_not_equal(argc, -1);
	assert_string_equal(argv[argc - 1], "+ipv6");
	in.kernel = 0;
	argc = pppd_argv(&c, &in, argv, buf, sizeof(buf));
	assert_string_equal(argv[argc - 1], "+ipv6");
	in.ipv6 = 0;
	argc = pppd_argv(&c, &in, argv, buf, sizeof(buf));
	join(argv, argc, line, sizeof(line));
	assert_null(strstr(line, "ipv6"));
	conf_free(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_argv_poptop_form),
		cmocka_unit_test(test_argv_noipparam_no_pool),
		cmocka_unit_test(test_argv_buffer_too_small),
		cmocka_unit_test(test_argv_plugin_options),
		cmocka_unit_test(test_argv_kernel_path),
		cmocka_unit_test(test_argv_ipv6),
	};
	return cmocka_run_group_tests_name("call", tests, NULL, NULL);
}
