/* Unit tests for pptpd/conf.c: the Poptop-compatible pptpd.conf reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "pptpd/conf.h"

struct fx {
	char path[64];
	struct conf c;
	char err[CONF_ERR_LEN];
};

static int
setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	int fd;

	if (fx == NULL)
		return -1;
	snprintf(fx->path, sizeof(fx->path), "/tmp/test_conf.XXXXXX");
	if ((fd = mkstemp(fx->path)) < 0)
		return -1;
	close(fd);
	conf_init(&fx->c);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *fx = *state;

	unlink(fx->path);
	conf_free(&fx->c);
	free(fx);
	return 0;
}

static void
put(struct fx *fx, const char *text, size_t len)
{
	FILE *f = fopen(fx->path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int
load(struct fx *fx, const char *text)
{
	put(fx, text, strlen(text));
	fx->err[0] = '\0';
	return conf_load(&fx->c, fx->path, fx->err, sizeof(fx->err));
}

static void
expect_ok(struct fx *fx, const char *text)
{
	if (load(fx, text) != 0)
		fail_msg("rejected: %s\n--\n%s--", fx->err, text);
}

/* `want` is the message after "path:"; line 0 means no line part. */
static void
expect_err(struct fx *fx, const char *text, int line, const char *want)
{
	char full[CONF_ERR_LEN + 64];

	if (line > 0)
		snprintf(full, sizeof(full), "%s:%d: %s", fx->path, line, want);
	else
		snprintf(full, sizeof(full), "%s: %s", fx->path, want);
	if (load(fx, text) != -1)
		fail_msg("accepted:\n%s--", text);
	if (strcmp(fx->err, full) != 0)
		fail_msg("got  \"%s\"\nwant \"%s\"", fx->err, full);
}

static void
expect_warning(struct fx *fx, size_t i, int line, const char *want)
{
	char full[CONF_ERR_LEN + 64];

	snprintf(full, sizeof(full), "%s:%d: %s", fx->path, line, want);
	assert_true(i < fx->c.nwarnings);
	assert_string_equal(fx->c.warnings[i], full);
}

static const char *
ip(struct in_addr a)
{
	static char buf[INET_ADDRSTRLEN];

	return inet_ntop(AF_INET, &a, buf, sizeof(buf));
}

static void
test_defaults(void **state)
{
	struct fx *fx = *state;

	assert_null(fx->c.file);
	assert_string_equal(fx->c.option, CONF_DEFAULT_OPTIONS);
	assert_string_equal(fx->c.ppp, CONF_DEFAULT_PPP);
	assert_string_equal(fx->c.pidfile, CONF_DEFAULT_PIDFILE);
	assert_string_equal(fx->c.speed, CONF_DEFAULT_SPEED);
	assert_null(fx->c.localip);
	assert_null(fx->c.remoteip);
	assert_string_equal(ip(fx->c.listen), "0.0.0.0");
	assert_int_equal(fx->c.connections, CONF_DEFAULT_CONNECTIONS);
	assert_int_equal(fx->c.stimeout, CONF_DEFAULT_STIMEOUT);
	assert_int_equal(fx->c.noipparam, 0);
	assert_int_equal(fx->c.debug, 0);
	assert_int_equal(fx->c.logwtmp, 0);
	assert_int_equal(fx->c.nwarnings, 0);

	/* An empty file changes nothing but the file name. */
	expect_ok(fx, "");
	assert_string_equal(fx->c.file, fx->path);
	assert_string_equal(fx->c.option, CONF_DEFAULT_OPTIONS);
	assert_int_equal(fx->c.connections, CONF_DEFAULT_CONNECTIONS);
}

static void
test_every_key(void **state)
{
	struct fx *fx = *state;

	expect_ok(fx,
	    "option /etc/ppp/pptpd-options\n"
	    "ppp /usr/local/sbin/pppd\n"
	    "pidfile /run/pptpd.pid\n"
	    "speed 921600\n"
	    "localip 198.19.0.1\n"
	    "remoteip 198.19.0.10-40,198.19.1.5\n"
	    "listen 198.18.0.1\n"
	    "connections 31\n"
	    "stimeout 15\n"
	    "noipparam\n"
	    "debug\n"
	    "logwtmp\n");
	assert_string_equal(fx->c.option, "/etc/ppp/pptpd-options");
	assert_string_equal(fx->c.ppp, "/usr/local/sbin/pppd");
	assert_string_equal(fx->c.pidfile, "/run/pptpd.pid");
	assert_string_equal(fx->c.speed, "921600");
	assert_string_equal(fx->c.localip, "198.19.0.1");
	assert_string_equal(fx->c.remoteip, "198.19.0.10-40,198.19.1.5");
	assert_int_equal(fx->c.line_localip, 5);
	assert_int_equal(fx->c.line_remoteip, 6);
	assert_string_equal(ip(fx->c.listen), "198.18.0.1");
	assert_int_equal(fx->c.connections, 31);
	assert_int_equal(fx->c.stimeout, 15);
	assert_int_equal(fx->c.noipparam, 1);
	assert_int_equal(fx->c.debug, 1);
	assert_int_equal(fx->c.logwtmp, 1);
	assert_int_equal(fx->c.nwarnings, 0);
}

static void
test_number_bounds(void **state)
{
	struct fx *fx = *state;

	expect_ok(fx, "connections 1\nstimeout 1\nspeed 1\n");
	assert_int_equal(fx->c.connections, 1);
	assert_int_equal(fx->c.stimeout, 1);
	assert_string_equal(fx->c.speed, "1");
	expect_ok(fx, "connections 65535\nstimeout 3600\nspeed 2147483647\n");
	assert_int_equal(fx->c.connections, 65535);
	assert_int_equal(fx->c.stimeout, 3600);
	assert_string_equal(fx->c.speed, "2147483647");
	/* Leading zeros are decimal; pppd gets the canonical form. */
	expect_ok(fx, "connections 0100\nspeed 0115200\n");
	assert_int_equal(fx->c.connections, 100);
	assert_string_equal(fx->c.speed, "115200");
}

static void
test_bad_numbers(void **state)
{
	static const struct { const char *text, *want; } bad[] = {
		{ "connections 0\n", "bad number '0' for 'connections' (1..65535)" },
		{ "connections 65536\n", "bad number '65536' for 'connections' (1..65535)" },
		{ "connections -1\n", "bad number '-1' for 'connections' (1..65535)" },
		{ "connections +5\n", "bad number '+5' for 'connections' (1..65535)" },
		{ "connections 0x10\n", "bad number '0x10' for 'connections' (1..65535)" },
		{ "connections 1e3\n", "bad number '1e3' for 'connections' (1..65535)" },
		{ "connections 10k\n", "bad number '10k' for 'connections' (1..65535)" },
		{ "connections 99999999999999999999999\n",
		  "bad number '99999999999999999999999' for 'connections' (1..65535)" },
		{ "stimeout 0\n", "bad number '0' for 'stimeout' (1..3600)" },
		{ "stimeout 3601\n", "bad number '3601' for 'stimeout' (1..3600)" },
		{ "stimeout ten\n", "bad number 'ten' for 'stimeout' (1..3600)" },
		{ "speed 0\n", "bad number '0' for 'speed' (1..2147483647)" },
		{ "speed 2147483648\n", "bad number '2147483648' for 'speed' (1..2147483647)" },
		{ "speed fast\n", "bad number 'fast' for 'speed' (1..2147483647)" },
	};
	struct fx *fx = *state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_err(fx, bad[i].text, 1, bad[i].want);
}

static void
test_bad_listen(void **state)
{
	static const char *const bad[] = {
		"1.2.3", "256.0.0.1", "::1", "localhost", "1.2.3.4/32",
		"0x7f.0.0.1",
	};
	struct fx *fx = *state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[64], want[96];

		snprintf(text, sizeof(text), "\n\nlisten %s\n", bad[i]);
		snprintf(want, sizeof(want), "bad IPv4 address '%s' for 'listen'",
		    bad[i]);
		expect_err(fx, text, 3, want);
	}
}

/* metrics-listen: off by default; IPv4:PORT with both parts; errors at
 * their line. */
static void
test_metrics_listen(void **state)
{
	static const char *const bad_form[] = {
		"127.0.0.1", "127.0.0.1:", ":9917", "127.0.0.1:0",
		"127.0.0.1:65536", "127.0.0.1:99x", "127.0.0.1:-1",
	};
	static const char *const bad_addr[] = { "localhost", "::1", "1.2.3" };
	struct fx *fx = *state;
	char text[96], want[160];

	expect_ok(fx, "listen 127.0.0.1\n");
	assert_int_equal(fx->c.metrics_listen.sin_port, 0);
	assert_int_equal(fx->c.metrics_per_session, 0);
	expect_ok(fx, "metrics-listen 192.0.2.7:9917\nmetrics-per-session\n");
	assert_int_equal(fx->c.metrics_listen.sin_family, AF_INET);
	assert_int_equal(ntohs(fx->c.metrics_listen.sin_port), 9917);
	assert_string_equal(ip(fx->c.metrics_listen.sin_addr), "192.0.2.7");
	assert_int_equal(fx->c.metrics_per_session, 1);
	for (size_t i = 0; i < sizeof(bad_form) / sizeof(bad_form[0]); i++) {
		snprintf(text, sizeof(text), "\nmetrics-listen %s\n", bad_form[i]);
		snprintf(want, sizeof(want), "bad ADDRESS:PORT '%s' for "
		    "'metrics-listen' (IPv4 address, port 1..65535)", bad_form[i]);
		expect_err(fx, text, 2, want);
	}
	for (size_t i = 0; i < sizeof(bad_addr) / sizeof(bad_addr[0]); i++) {
		snprintf(text, sizeof(text), "\nmetrics-listen %s:9917\n", bad_addr[i]);
		snprintf(want, sizeof(want), "bad IPv4 address '%s' for "
		    "'metrics-listen'", bad_addr[i]);
		expect_err(fx, text, 2, want);
	}
	expect_err(fx, "metrics-per-session yes\n", 1,
	    "'metrics-per-session' takes no value (got 'yes')");
}

/* privsep: on unless turned off (a Poptop file, which has no such key,
 * gets it), as user pptpd; only its two words. */
static void
test_privsep(void **state)
{
	struct fx *fx = *state;
	expect_ok(fx, "listen 127.0.0.1\n");
	assert_int_equal(fx->c.privsep, 1);
	assert_string_equal(fx->c.privsep_user, "pptpd");
	expect_ok(fx, "privsep no\n");
	assert_int_equal(fx->c.privsep, 0);
	expect_ok(fx, "privsep yes\n");
	assert_int_equal(fx->c.privsep, 1);
	expect_err(fx, "\nprivsep on\n", 2,
	    "bad value 'on' for 'privsep' (one of no, yes)");
	expect_err(fx, "privsep\n", 1, "'privsep' needs a value");
}

static void
test_datapath(void **state)
{
	static const char *const bad[] = { "Kernel", "pptp", "1", "engine,kernel" };
	struct fx *fx = *state;
	char text[96], want[160];

	assert_int_equal(fx->c.datapath, CONF_DATAPATH_ENGINE);
	expect_ok(fx, "listen 127.0.0.1\n");
	assert_int_equal(fx->c.datapath, CONF_DATAPATH_ENGINE);
	expect_ok(fx, "datapath kernel\n");
	assert_int_equal(fx->c.datapath, CONF_DATAPATH_KERNEL);
	expect_ok(fx, "datapath auto   # kernel when it can\n");
	assert_int_equal(fx->c.datapath, CONF_DATAPATH_AUTO);
	expect_ok(fx, "datapath engine\n");
	assert_int_equal(fx->c.datapath, CONF_DATAPATH_ENGINE);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "\ndatapath %s\n", bad[i]);
		snprintf(want, sizeof(want), "bad value '%s' for 'datapath' (one "
		    "of engine, kernel, auto)", bad[i]);
		expect_err(fx, text, 2, want);
		assert_int_equal(fx->c.datapath, CONF_DATAPATH_ENGINE);
	}
	expect_err(fx, "datapath\n", 1, "'datapath' needs a value");
	expect_err(fx, "datapath kernel auto\n", 1,
	    "'datapath' takes one value (extra 'auto')");
	/* The plugin opens the kernel's channel: kernel without it is an
	 * error; auto without it is the engine (server-side, at startup). */
	expect_err(fx, "noplugin\ndatapath kernel\n", 2,
	    "'datapath' needs the plugin; remove 'noplugin' (line 1)");
	assert_int_equal(fx->c.noplugin, 0);
	expect_ok(fx, "noplugin\ndatapath auto\n");
	assert_int_equal(fx->c.datapath, CONF_DATAPATH_AUTO);
}

static void
test_unknown_keys(void **state)
{
	struct fx *fx = *state;

	expect_err(fx, "# a comment\nlocalip 10.0.0.1\n\n\n\n\nremoteipp 10.0.0.2\n",
	    7, "unknown key 'remoteipp'");
	expect_err(fx, "LocalIP 10.0.0.1\n", 1, "unknown key 'LocalIP'");
	expect_err(fx, "ipxnets 1\n", 1, "unknown key 'ipxnets'");
	expect_err(fx, "localip=10.0.0.1\n", 1, "unknown key 'localip=10.0.0.1'");
	/* Garbage in the key is quoted harmlessly, and cut short. */
	expect_err(fx, "\x1b]0;owned\x07 x\n", 1, "unknown key '?]0;owned?'");
	expect_err(fx, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
	    1, "unknown key 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'");
}

static void
test_arity(void **state)
{
	struct fx *fx = *state;

	expect_err(fx, "localip\n", 1, "'localip' needs a value");
	expect_err(fx, "remoteip   # none\n", 1, "'remoteip' needs a value");
	expect_err(fx, "option\n", 1, "'option' needs a value");
	expect_err(fx, "ppp\n", 1, "'ppp' needs a value");
	expect_err(fx, "pidfile \t\n", 1, "'pidfile' needs a value");
	expect_err(fx, "speed\n", 1, "'speed' needs a value");
	expect_err(fx, "listen\n", 1, "'listen' needs a value");
	expect_err(fx, "connections\n", 1, "'connections' needs a value");
	expect_err(fx, "stimeout\n", 1, "'stimeout' needs a value");
	expect_err(fx, "bcrelay\n", 1, "'bcrelay' needs a value");
	expect_err(fx, "vrf\n", 1, "'vrf' needs a value");
	expect_err(fx, "debug yes\n", 1, "'debug' takes no value (got 'yes')");
	expect_err(fx, "logwtmp 1\n", 1, "'logwtmp' takes no value (got '1')");
	expect_err(fx, "noipparam x\n", 1, "'noipparam' takes no value (got 'x')");
	expect_err(fx, "delegate 1\n", 1, "'delegate' takes no value (got '1')");
	expect_err(fx, "listen 1.2.3.4 5.6.7.8\n", 1,
	    "'listen' takes one value (extra '5.6.7.8')");
	expect_err(fx, "remoteip 10.0.0.2-9, 10.0.0.20\n", 1,
	    "'remoteip' takes one value (extra '10.0.0.20')");
	expect_err(fx, "option /etc/ppp/my options\n", 1,
	    "'option' takes one value (extra 'options')");
}

static void
test_pool_errors(void **state)
{
	struct fx *fx = *state;

	/* A bad spec is blamed on its own line. */
	expect_err(fx, "localip 10.0.0.x\nremoteip 10.0.1.1-9\n", 1,
	    "localip: bad address in '10.0.0.x'");
	expect_err(fx, "localip 10.0.0.1\nremoteip 10.0.1.9-1\n", 2,
	    "remoteip: reversed range in '10.0.1.9-1'");
	expect_err(fx, "remoteip 10.0.1.1-300\n", 1,
	    "remoteip: range end over 255 in '10.0.1.1-300'");
	expect_err(fx, "localip 10.0.0.1,10.0.0.1\n", 1,
	    "localip: duplicate address 10.0.0.1");
	expect_err(fx, "remoteip 10.0.0.0-10.1.0.0\n", 1,
	    "remoteip: more than 65535 addresses in '10.0.0.0-10.1.0.0'");
	expect_err(fx, "remoteip 10.0.0.1,\n", 1,
	    "remoteip: empty item in '10.0.0.1,'");
	/* The pair is blamed on the later line, whichever key it is. */
	expect_err(fx, "localip 10.0.0.1-2\n\nremoteip 10.0.1.1-3\n", 3,
	    "localip has 2 addresses but remoteip has 3: give a single "
	    "localip, or at least one per remoteip");
	expect_err(fx, "remoteip 10.0.1.1-3\n\n\nlocalip 10.0.0.1-2\n", 4,
	    "localip has 2 addresses but remoteip has 3: give a single "
	    "localip, or at least one per remoteip");
	expect_err(fx, "localip 10.0.0.5\nremoteip 10.0.0.1-10\n", 2,
	    "address 10.0.0.5 is in both localip and remoteip");
	/* localip alone is checked for syntax; remoteip alone is a pool. */
	expect_ok(fx, "localip 10.0.0.1-5\n");
	assert_string_equal(fx->c.localip, "10.0.0.1-5");
}

static void
test_pool_with_previous_values(void **state)
{
	struct fx *fx = *state;

	/* A remoteip already in the struct (an earlier load) pairs with a
	 * localip from this file, and is blamed on the localip's line. */
	expect_ok(fx, "remoteip 10.0.1.1-3\n");
	expect_err(fx, "\nlocalip 10.0.0.1-2\n", 2,
	    "localip has 2 addresses but remoteip has 3: give a single "
	    "localip, or at least one per remoteip");
	expect_ok(fx, "\nlocalip 10.0.0.1-3\n");
	assert_string_equal(fx->c.remoteip, "10.0.1.1-3");
	assert_string_equal(fx->c.localip, "10.0.0.1-3");
	assert_int_equal(fx->c.line_localip, 2);
	assert_int_equal(fx->c.line_remoteip, 0);       /* not from this file */
	/* Both from before: no line to blame. */
	expect_ok(fx, "debug\n");
	assert_int_equal(fx->c.line_localip, 0);
}

static void
test_ignored_keys(void **state)
{
	struct fx *fx = *state;

	expect_ok(fx, "bcrelay eth1\n\ndelegate\nvrf blue\nlogwtmp\n");
	assert_int_equal(fx->c.nwarnings, 3);
	expect_warning(fx, 0, 1, "'bcrelay' not supported, ignored "
	    "(broadcasts are not relayed to clients)");
	expect_warning(fx, 1, 3, "'delegate' not supported, ignored "
	    "(addresses come from remoteip when it is set, from pppd otherwise)");
	expect_warning(fx, 2, 4, "'vrf' not supported, ignored "
	    "(pptpd listens and sends GRE in the default VRF)");
	assert_int_equal(fx->c.logwtmp, 1);
}

static void
test_first_wins(void **state)
{
	struct fx *fx = *state;

	expect_ok(fx, "connections 10\nlocalip 10.0.0.1\nconnections 20\n"
	    "localip 10.9.9.9\ndebug\ndebug\n");
	assert_int_equal(fx->c.connections, 10);
	assert_string_equal(fx->c.localip, "10.0.0.1");
	assert_int_equal(fx->c.line_localip, 2);
	assert_int_equal(fx->c.nwarnings, 3);
	expect_warning(fx, 0, 3, "'connections' already set at line 1, "
	    "this one is ignored");
	expect_warning(fx, 1, 4, "'localip' already set at line 2, "
	    "this one is ignored");
	expect_warning(fx, 2, 6, "'debug' already set at line 5, "
	    "this one is ignored");
	/* The ignored repeat is not even parsed: Poptop never read it. */
	expect_ok(fx, "stimeout 5\nstimeout bogus\n");
	assert_int_equal(fx->c.stimeout, 5);
}

static void
test_warning_cap(void **state)
{
	struct fx *fx = *state;
	char *text = malloc(200 * 10 + 1);

	assert_non_null(text);
	text[0] = '\0';
	for (int i = 0; i < 200; i++)
		strcat(text, "delegate\n");
	expect_ok(fx, text);
	assert_int_equal(fx->c.nwarnings, CONF_MAX_WARNINGS);
	free(text);
}

static void
test_comments(void **state)
{
	struct fx *fx = *state;

	expect_ok(fx,
	    "#\n"
	    "# full-line comment\n"
	    "   # indented comment\n"
	    "\t#tab-indented comment\n"
	    "\n"
	    "   \t  \n"
	    "  localip   198.19.0.1   \n"
	    "\tremoteip\t198.19.0.2-9\t# the clients\n"
	    "debug #\n"
	    "pidfile /run/a#b\n"
	    "connections 7 # seven\n");
	assert_string_equal(fx->c.localip, "198.19.0.1");
	assert_string_equal(fx->c.remoteip, "198.19.0.2-9");
	assert_int_equal(fx->c.debug, 1);
	assert_int_equal(fx->c.connections, 7);
	assert_string_equal(fx->c.pidfile, "/run/a#b");
	assert_int_equal(fx->c.line_remoteip, 8);
	/* '#' only starts a comment at the start of a token. */
	expect_err(fx, "logwtmp#x\n", 1, "unknown key 'logwtmp#x'");
}

static void
test_line_ends(void **state)
{
	struct fx *fx = *state;

	/* DOS line ends, and no newline after the last line. */
	expect_ok(fx, "localip 198.19.0.1\r\nremoteip 198.19.0.2-9\r\n"
	    "\r\nconnections 9");
	assert_string_equal(fx->c.localip, "198.19.0.1");
	assert_string_equal(fx->c.remoteip, "198.19.0.2-9");
	assert_int_equal(fx->c.connections, 9);
	expect_err(fx, "debug\r\nlisten 1.2.3.4\r\nbogus\r\n", 3,
	    "unknown key 'bogus'");
}

static void
test_file_errors(void **state)
{
	struct fx *fx = *state;
	char *text = malloc(CONF_LINE_MAX + 16);
	char want[CONF_ERR_LEN + 64];

	assert_non_null(text);
	/* Exactly the limit passes; one more byte does not. */
	memset(text, ' ', CONF_LINE_MAX);
	memcpy(text, "debug", 5);
	memcpy(text + CONF_LINE_MAX, "\n", 2);
	expect_ok(fx, text);
	memset(text, ' ', CONF_LINE_MAX + 1);
	memcpy(text, "debug", 5);
	memcpy(text + CONF_LINE_MAX + 1, "\n", 2);
	expect_err(fx, text, 1, "line too long (over 4096 bytes)");
	free(text);

	put(fx, "debug\nlocalip 10.0.0.1\0junk\n", 28);
	assert_int_equal(conf_load(&fx->c, fx->path, fx->err, sizeof(fx->err)), -1);
	snprintf(want, sizeof(want), "%s:2: NUL byte in line", fx->path);
	assert_string_equal(fx->err, want);

	assert_int_equal(conf_load(&fx->c, "/nonexistent/pptpd.conf", fx->err,
	    sizeof(fx->err)), -1);
	assert_string_equal(fx->err,
	    "/nonexistent/pptpd.conf: cannot open: No such file or directory");
	assert_int_equal(conf_load(&fx->c, "/tmp", fx->err, sizeof(fx->err)), -1);
	assert_string_equal(fx->err, "/tmp: read error: Is a directory");

	/* A small error buffer truncates, never overflows. */
	char small[12];
	put(fx, "bogus\n", 6);
	assert_int_equal(conf_load(&fx->c, fx->path, small, sizeof(small)), -1);
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

/* A failed load must leave the previous configuration intact. */
static void
test_failure_keeps_old(void **state)
{
	struct fx *fx = *state;
	char *old_path;

	expect_ok(fx, "localip 10.0.0.1\nremoteip 10.0.0.2-5\nconnections 4\n"
	    "bcrelay eth0\n");
	old_path = strdup(fx->c.file);
	expect_err(fx, "connections 8\nlocalip 10.9.0.1\nnonsense\n", 3,
	    "unknown key 'nonsense'");
	assert_int_equal(fx->c.connections, 4);
	assert_string_equal(fx->c.localip, "10.0.0.1");
	assert_string_equal(fx->c.file, old_path);
	assert_int_equal(fx->c.nwarnings, 1);
	expect_err(fx, "remoteip 10.0.0.1\n", 1,
	    "address 10.0.0.1 is in both localip and remoteip");
	assert_string_equal(fx->c.remoteip, "10.0.0.2-5");
	/* A good reload overrides, keeps what it does not set, and its
	 * warnings replace the old ones. */
	expect_ok(fx, "connections 2\n");
	assert_int_equal(fx->c.connections, 2);
	assert_string_equal(fx->c.localip, "10.0.0.1");
	assert_int_equal(fx->c.nwarnings, 0);
	free(old_path);

	conf_free(&fx->c);
	conf_free(&fx->c);      /* idempotent */
	conf_init(&fx->c);
}

/* The structure of Debian's shipped /etc/pptpd.conf (a banner, one block
 * of comments per TAG, most settings commented out), in our own words. */
static const char debian_like[] =
    "###########################################################\n"
    "# $Id$\n"
    "#\n"
    "# pptpd configuration, in the layout Debian ships.\n"
    "#\n"
    "# Restart pptpd to apply changes.\n"
    "###########################################################\n"
    "\n"
    "# TAG: ppp\n"
    "#\tWhich pppd to run\n"
    "#\n"
    "#ppp /usr/sbin/pppd\n"
    "\n"
    "# TAG: option\n"
    "#\tpppd options file for tunnels\n"
    "#\n"
    "option /etc/ppp/pptpd-options\n"
    "\n"
    "# TAG: debug\n"
    "#\tmore logging\n"
    "#\n"
    "#debug\n"
    "\n"
    "# TAG: stimeout\n"
    "#\tseconds to wait for the first control message\n"
    "#\n"
    "# stimeout 10\n"
    "\n"
    "# TAG: noipparam\n"
    "#       do not hand the client address to pppd\n"
    "#\n"
    "#noipparam\n"
    "\n"
    "# TAG: logwtmp\n"
    "#\trecord sessions in wtmp\n"
    "#\n"
    "logwtmp\n"
    "\n"
    "# TAG: bcrelay <if>\n"
    "#\trelay broadcasts from <if>\n"
    "#\n"
    "#bcrelay eth1\n"
    "\n"
    "# TAG: delegate\n"
    "#\tlet pppd pick addresses\n"
    "#\n"
    "#delegate\n"
    "\n"
    "# TAG: connections\n"
    "#       cap on clients\n"
    "#connections 100\n"
    "\n"
    "# TAG: localip\n"
    "# TAG: remoteip\n"
    "#\taddress ranges, e.g.\n"
    "#\n"
    "#\t\t192.168.0.234,192.168.0.245-249,192.168.0.254\n"
    "#\n"
    "#localip 192.168.0.1\n"
    "#remoteip 192.168.0.234-238,192.168.0.245\n"
    "# or\n"
    "#localip 192.168.0.234-238,192.168.0.245\n"
    "#remoteip 192.168.1.234-238,192.168.1.245\n";

static void
test_debian_default(void **state)
{
	struct fx *fx = *state;

	expect_ok(fx, debian_like);
	assert_string_equal(fx->c.option, "/etc/ppp/pptpd-options");
	assert_int_equal(fx->c.logwtmp, 1);
	assert_int_equal(fx->c.debug, 0);
	assert_null(fx->c.localip);
	assert_null(fx->c.remoteip);
	assert_int_equal(fx->c.nwarnings, 0);
}

/* The same file as an admin would edit it: every TAG switched on. */
static void
test_debian_edited(void **state)
{
	struct fx *fx = *state;
	char *text = malloc(sizeof(debian_like) + 512);

	assert_non_null(text);
	strcpy(text, debian_like);
	strcat(text,
	    "ppp /usr/sbin/pppd\n"
	    "debug\n"
	    "stimeout 10\n"
	    "noipparam\n"
	    "bcrelay eth1\n"
	    "connections 100\n"
	    "localip 192.168.0.234-238,192.168.0.245\n"
	    "remoteip 192.168.1.234-238,192.168.1.245\n");
	expect_ok(fx, text);
	assert_int_equal(fx->c.stimeout, 10);
	assert_int_equal(fx->c.noipparam, 1);
	assert_int_equal(fx->c.debug, 1);
	assert_int_equal(fx->c.connections, 100);
	assert_string_equal(fx->c.remoteip, "192.168.1.234-238,192.168.1.245");
	assert_int_equal(fx->c.nwarnings, 1);
	assert_non_null(strstr(fx->c.warnings[0], "'bcrelay' not supported, ignored"));
	free(text);
}

/* Whatever this machine ships must load (skipped when absent). */
static void
test_system_file(void **state)
{
	struct conf c;
	char err[CONF_ERR_LEN];

	(void)state;
	if (access("/etc/pptpd.conf", R_OK) != 0)
		skip();
	conf_init(&c);
	if (conf_load(&c, "/etc/pptpd.conf", err, sizeof(err)) != 0)
		fail_msg("%s", err);
	conf_free(&c);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* ipv6-prefix-pool: checked at its line by pool6.c, kept as written. */
static void
test_ipv6_pool(void **state)
{
	struct fx *fx = *state;
	expect_ok(fx, "ipv6-prefix-pool 2001:db8:100::/56\n");
	assert_string_equal(fx->c.ipv6_pool, "2001:db8:100::/56");
	expect_err(fx, "\nipv6-prefix-pool 2001:db8:100::1/56\n", 2,
	    "ipv6-prefix-pool: bits set beyond the prefix length /56");
	expect_err(fx, "ipv6-prefix-pool 198.19.0.0/24\n", 1,
	    "ipv6-prefix-pool: '198.19.0.0' is not an IPv6 address");
	expect_err(fx, "ipv6-prefix-pool 2001:db8:100::\n", 1,
	    "ipv6-prefix-pool: want PREFIX/LENGTH, e.g. 2001:db8:100::/56");
	/* Only the plugin's report says when IPV6CP is up. */
	expect_err(fx, "noplugin\nipv6-prefix-pool 2001:db8:100::/56\n", 2,
	    "'ipv6-prefix-pool' needs the plugin; remove 'noplugin' (line 1)");
}

/* ipv6-radius-prefixes: one or more prefixes, comma-separated, checked at
 * its line; kept as written and parsed. */
static void
test_ipv6_radius_prefixes(void **state)
{
	struct fx *fx = *state;
	struct in6_addr in, out;
	inet_pton(AF_INET6, "2001:db8:200:5::", &in);
	inet_pton(AF_INET6, "2001:db8:201::", &out);
	expect_ok(fx, "ipv6-radius-prefixes 2001:db8:200::/48,2001:db8:300:7::/64\n");
	assert_string_equal(fx->c.ipv6_radius_prefixes,
	    "2001:db8:200::/48,2001:db8:300:7::/64");
	assert_int_equal(fx->c.radius6.n, 2);
	assert_true(prefix6_set_holds(&fx->c.radius6, &in));
	assert_false(prefix6_set_holds(&fx->c.radius6, &out));
	/* the one rule: a /64 of the pool or of the set, nothing else */
	expect_ok(fx, "ipv6-prefix-pool 2001:db8:100::/56\n"
	    "ipv6-radius-prefixes 2001:db8:200::/48\n");
	struct in6_addr pool, past;
	inet_pton(AF_INET6, "2001:db8:100:ff::", &pool);
	inet_pton(AF_INET6, "2001:db8:101::", &past);
	assert_true(conf_prefix6_routable(&fx->c, &pool));
	assert_true(conf_prefix6_routable(&fx->c, &in));
	assert_false(conf_prefix6_routable(&fx->c, &past));
	assert_false(conf_prefix6_routable(&fx->c, &out));
	expect_err(fx, "ipv6-radius-prefixes 2001:db8:200::/48,\n", 1,
	    "ipv6-radius-prefixes: want PREFIX/LENGTH[,PREFIX/LENGTH...]");
	expect_err(fx, "ipv6-radius-prefixes 2001:db8:200::/96\n", 1,
	    "ipv6-radius-prefixes: '2001:db8:200::/96': length '/96': want 1 to 64");
	expect_err(fx, "ipv6-radius-prefixes fe80::/64\n", 1,
	    "ipv6-radius-prefixes: 'fe80::/64': not a prefix to hand out "
	    "(unspecified, loopback, link-local or multicast)");
	expect_err(fx, "ipv6-radius-prefixes 2001:db8:200::/48 2001:db8:300::/48\n",
	    1, "'ipv6-radius-prefixes' takes one value (extra '2001:db8:300::/48')");
}

/* radius-config-file: radiusclient.conf is read with pptpd.conf, so a
 * missing one fails the load at the key's line (radcfg.c's own tests are
 * test_acct's). */
static void
test_radius_config_file(void **state)
{
	struct fx *fx = *state;
	expect_err(fx, "\nradius-config-file etc/radiusclient.conf\n", 2,
	    "radius-config-file: needs an absolute path");
	expect_err(fx, "radius-config-file /nonexistent/radiusclient.conf\n", 1,
	    "radius-config-file: /nonexistent/radiusclient.conf: No such file "
	    "or directory");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_defaults),
		T(test_every_key),
		T(test_number_bounds),
		T(test_bad_numbers),
		T(test_bad_listen),
		T(test_metrics_listen),
		T(test_datapath),
		T(test_privsep),
		T(test_unknown_keys),
		T(test_arity),
		T(test_pool_errors),
		T(test_ipv6_pool),
		T(test_ipv6_radius_prefixes),
		T(test_radius_config_file),
		T(test_pool_with_previous_values),
		T(test_ignored_keys),
		T(test_first_wins),
		T(test_warning_cap),
		T(test_comments),
		T(test_line_ends),
		T(test_file_errors),
		T(test_failure_keeps_old),
		T(test_debian_default),
		T(test_debian_edited),
		T(test_system_file),
	};

	return cmocka_run_group_tests_name("conf", tests, NULL, NULL);
}
