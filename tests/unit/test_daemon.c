/* The control plane of the real pptpd binary, end to end on this host: a PNS
 * written with our own message codec talks to the daemon over TCP, with a
 * stand-in for pppd (tests/fixtures/fake-pppd), in a private network
 * namespace so nothing else on the machine is touched. Needs root (raw GRE
 * socket, unshare). The data path with the real pppd is tested in the VM. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "msg.h"

#define DAEMON      "pptpd/pptpd"
#define FAKE_PPPD   "tests/fixtures/fake-pppd"
#define PLUGIN      "plugin/pptpd-policy.so"
#define REPLY_MS    3000

static char tmpdir[] = "/tmp/pptpd-test-XXXXXX";
/* The pool of the next daemon_start (tests that need more addresses). */
static const char *pool = "198.19.0.10-11";
static char logpath[PATH_MAX];
static pid_t daemon_pid;

static void
lo_up(void)
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	strcpy(ifr.ifr_name, "lo");
	ioctl(s, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	ioctl(s, SIOCSIFFLAGS, &ifr);
	close(s);
}

static void
write_file(const char *name, const char *text)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Start the daemon with `extra` config lines; returns when it listens. */
static void
daemon_start(const char *extra)
{
	char conf[2 * PATH_MAX + 256], cwd[PATH_MAX], path[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(conf, sizeof(conf),
	    "ppp %s/" FAKE_PPPD "\noption %s/options\nlocalip 198.19.0.1\n"
	    "remoteip %s\nlisten 127.0.0.1\nplugin %s/" PLUGIN "\n%s",
	    cwd, tmpdir, pool, cwd, extra);
	write_file("pptpd.conf", conf);
	write_file("options", "# nothing\n");
	snprintf(path, sizeof(path), "rm -f %s/*.args", tmpdir);
	assert_int_equal(system(path), 0);   /* the last daemon's pppd */
	snprintf(logpath, sizeof(logpath), "%s/pptpd.log", tmpdir);
	daemon_pid = fork();
	assert_true(daemon_pid >= 0);
	if (daemon_pid == 0) {
		snprintf(path, sizeof(path), "%s/pptpd.conf", tmpdir);
		int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, STDERR_FILENO);
		setenv("FAKE_PPPD_DIR", tmpdir, 1);
		/* PPTPD_VALGRIND=1: the daemon runs under valgrind, and any
		 * error or leak turns its exit status (checked at teardown)
		 * non-zero. */
		if (getenv("PPTPD_VALGRIND") != NULL)
			execlp("valgrind", "valgrind", "-q", "--leak-check=full",
			    "--show-leak-kinds=definite,indirect",
			    "--errors-for-leak-kinds=definite,indirect",
			    "--error-exitcode=99", "--trace-children=no", DAEMON,
			    "-f", "-d", "-c", path, (char *)NULL);
		execl(DAEMON, "pptpd", "-f", "-d", "-c", path, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 1000; i++) {
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(PPTP_PORT) };
		inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
		int s = socket(AF_INET, SOCK_STREAM, 0);
		int ok = connect(s, (struct sockaddr *)&sin, sizeof(sin)) == 0;
		close(s);
		if (ok)
			return;
		usleep(10000);
	}
	fail_msg("daemon did not start listening");
}

static int
daemon_stop(void)
{
	int status;
	kill(daemon_pid, SIGTERM);
	assert_int_equal(waitpid(daemon_pid, &status, 0), daemon_pid);
	return status;
}

static int
pns_connect(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(PPTP_PORT) };
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return s;
}

static void
pns_send(int s, const struct pptp_msg *m)
{
	uint8_t b[PPTP_MAX_MSG_LEN];
	size_t n = msg_encode(m, b, sizeof(b));
	assert_true(n > 0);
	assert_int_equal(send(s, b, n, 0), (ssize_t)n);
}

/* Read one message; returns 0, or -1 on EOF (connection closed) or timeout. */
static int
pns_recv(int s, struct pptp_msg *m, int timeout_ms)
{
	uint8_t b[PPTP_MAX_MSG_LEN];
	size_t have = 0, want = PPTP_HDR_LEN;
	while (have < want) {
		struct pollfd p = { .fd = s, .events = POLLIN };
		if (poll(&p, 1, timeout_ms) <= 0)
			return -1;
		ssize_t n = recv(s, b + have, want - have, 0);
		if (n <= 0)
			return -1;
		have += (size_t)n;
		if (have == PPTP_HDR_LEN) {
			const char *why;
			ssize_t len = msg_frame(b, have, &why);
			assert_true(len >= PPTP_HDR_LEN);
			want = (size_t)len;
		}
	}
	assert_int_equal(msg_decode(b, have, m, NULL), 0);
	return 0;
}

static int
pns_closed(int s, int timeout_ms)
{
	struct pptp_msg m;
	return pns_recv(s, &m, timeout_ms) < 0;
}

static int
pns_start(void)
{
	int s = pns_connect();
	struct pptp_msg m = { .type = PPTP_SCCRQ }, r;
	m.u.sccr.version = PPTP_VERSION;
	m.u.sccr.framing = PPTP_FRAMING_SYNC;
	m.u.sccr.bearer = PPTP_BEARER_ANALOG;
	strcpy(m.u.sccr.vendor, "test");
	pns_send(s, &m);
	assert_int_equal(pns_recv(s, &r, REPLY_MS), 0);
	assert_int_equal(r.type, PPTP_SCCRP);
	assert_int_equal(r.u.sccr.result, PPTP_SCCRP_OK);
	assert_int_equal(r.u.sccr.version, PPTP_VERSION);
	return s;
}

static void
pns_call(int s, uint16_t peer_id, struct pptp_msg *r)
{
	struct pptp_msg m = { .type = PPTP_OCRQ };
	m.u.ocrq.call_id = peer_id;
	m.u.ocrq.serial = 1;
	m.u.ocrq.min_bps = 300;
	m.u.ocrq.max_bps = 100000000;
	m.u.ocrq.bearer = 3;
	m.u.ocrq.framing = 3;
	m.u.ocrq.window = 64;
	pns_send(s, &m);
	assert_int_equal(pns_recv(s, r, REPLY_MS), 0);
	assert_int_equal(r->type, PPTP_OCRP);
	assert_int_equal(r->u.ocrp.peer_call_id, peer_id);
}

static int
count_in_dir(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name), sl = strlen(suffix);
		if (e->d_name[0] != '.' && l >= sl && strcmp(e->d_name + l - sl, suffix) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* The daemon's descriptors. Under valgrind only those below 1024 count:
 * valgrind keeps its own above the client's limit and opens them lazily. */
static int
daemon_fds(void)
{
	char p[64];
	struct dirent *e;
	int n = 0;
	snprintf(p, sizeof(p), "/proc/%d/fd", (int)daemon_pid);
	DIR *d = opendir(p);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && atoi(e->d_name) < 1024)
			n++;
	closedir(d);
	return n;
}

/* Children of the daemon still alive (running or zombie). */
static int
daemon_children(void)
{
	char p[64], buf[256];
	snprintf(p, sizeof(p), "/proc/%d/task/%d/children", (int)daemon_pid, (int)daemon_pid);
	FILE *f = fopen(p, "r");
	int n = 0;
	if (f == NULL)
		return -1;
	if (fgets(buf, sizeof(buf), f) != NULL)
		for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
			n++;
	fclose(f);
	return n;
}

static int log_count(const char *needle);

static int
log_contains(const char *needle)
{
	return log_count(needle) > 0;
}

static void
wait_for(int (*cond)(void), int want, int ms)
{
	for (int i = 0; i < ms / 10 && cond() != want; i++)
		usleep(10000);
	assert_int_equal(cond(), want);
}

static int
args_files(void)
{
	return count_in_dir(tmpdir, ".args");
}

static int
setup(void **state)
{
	char cmd[PATH_MAX + 32];
	snprintf(cmd, sizeof(cmd), "rm -f %s/*.args", tmpdir);
	assert_int_equal(system(cmd), 0);
	daemon_start("");
	return 0;
}
static int teardown(void **state)
{
	int st = daemon_stop();
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	return 0;
}

static void
test_call_setup_and_clear(void **state)
{
	/* Baseline once the daemon has served one connection and settled
	 * (under valgrind its descriptors move for a while after start). */
	close(pns_start());
	int fds = daemon_fds(), settled = 0;
	for (int i = 0; i < 300 && settled < 30; i++) {
		usleep(10000);
		int now = daemon_fds();
		settled = now == fds ? settled + 1 : 0;
		fds = now;
	}
	int s = pns_start();
	struct pptp_msg r, m;
	pns_call(s, 0x1234, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	assert_int_not_equal(r.u.ocrp.call_id, 0);
	wait_for(daemon_children, 1, 2000);
	wait_for(args_files, 1, 2000);

	/* pppd got Poptop's argument list */
	char cmd[PATH_MAX * 2 + 256];
	snprintf(cmd, sizeof(cmd), "grep -q '^local file %s/options 115200 "
	    "198.19.0.1:198.19.0.10 ipparam 127.0.0.1 remotenumber 127.0.0.1 "
	    "plugin .*/" PLUGIN " pptpd-report /run/pptpd/report.[0-9]*.sock "
	    "pptpd-call %u pptpd-client 127.0.0.1$' %s/*.args",
	    tmpdir, r.u.ocrp.call_id, tmpdir);
	assert_int_equal(system(cmd), 0);

	/* Echo and Set-Link-Info on a live call */
	m = (struct pptp_msg){ .type = PPTP_SLI };
	m.u.sli.peer_call_id = r.u.ocrp.call_id;
	m.u.sli.send_accm = m.u.sli.recv_accm = 0xffffffff;
	pns_send(s, &m);
	m = (struct pptp_msg){ .type = PPTP_ECHORQ };
	m.u.echo.id = 77;
	pns_send(s, &m);
	assert_int_equal(pns_recv(s, &m, REPLY_MS), 0);
	assert_int_equal(m.type, PPTP_ECHORP);
	assert_int_equal(m.u.echo.id, 77);
	assert_int_equal(m.u.echo.result, PPTP_ECHO_OK);

	/* CCRQ -> CDN (request), pppd stopped and reaped */
	m = (struct pptp_msg){ .type = PPTP_CCRQ };
	m.u.ccrq.call_id = 0x1234;
	pns_send(s, &m);
	assert_int_equal(pns_recv(s, &m, REPLY_MS), 0);
	assert_int_equal(m.type, PPTP_CDN);
	assert_int_equal(m.u.cdn.call_id, r.u.ocrp.call_id);
	assert_int_equal(m.u.cdn.result, PPTP_CDN_REQUEST);
	wait_for(daemon_children, 0, 3000);

	/* StopCCRQ -> StopCCRP, then the daemon closes */
	m = (struct pptp_msg){ .type = PPTP_STOPCCRQ };
	m.u.stop.reason_or_result = PPTP_STOP_REASON_NONE;
	pns_send(s, &m);
	assert_int_equal(pns_recv(s, &m, REPLY_MS), 0);
	assert_int_equal(m.type, PPTP_STOPCCRP);
	assert_true(pns_closed(s, REPLY_MS));
	close(s);
	wait_for(daemon_fds, fds, 3000);
}

static void
test_pppd_exit_sends_cdn(void **state)
{
	int s = pns_start();
	struct pptp_msg r, m;
	pns_call(s, 7, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	wait_for(args_files, 1, 2000);
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "for f in %s/*.args; do p=${f##*/}; "
	    "kill ${p%%.args}; done", tmpdir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(pns_recv(s, &m, REPLY_MS), 0);
	assert_int_equal(m.type, PPTP_CDN);
	assert_int_equal(m.u.cdn.call_id, r.u.ocrp.call_id);
	assert_int_equal(m.u.cdn.result, PPTP_CDN_LOST_CARRIER);
	wait_for(daemon_children, 0, 3000);
	close(s);
}

static void
test_pool_exhausted_and_returned(void **state)
{
	int s1 = pns_start(), s2 = pns_start();
	struct pptp_msg r;
	pns_call(s1, 1, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	pns_call(s1, 2, &r);   /* a second call on the same connection */
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	pns_call(s2, 3, &r);   /* pool of two */
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_GENERAL_ERROR);
	assert_int_equal(r.u.ocrp.error, PPTP_ERR_NO_RESOURCE);
	assert_true(log_contains("address pool exhausted"));
	/* the client leaving hangs up both calls and frees both addresses */
	close(s1);
	wait_for(daemon_children, 0, 3000);
	s1 = pns_start();
	pns_call(s1, 5, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	pns_call(s2, 6, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	close(s1);
	close(s2);
	wait_for(daemon_children, 0, 3000);
}

static void
test_bad_header_closes_only_that_connection(void **state)
{
	int good = pns_start();
	int bad = pns_connect();
	uint8_t junk[PPTP_HDR_LEN] = { 0, 156, 0, 1, 0xde, 0xad, 0xbe, 0xef, 0, 1, 0, 0 };
	assert_int_equal(send(bad, junk, sizeof(junk), 0), (ssize_t)sizeof(junk));
	assert_true(pns_closed(bad, REPLY_MS));
	close(bad);
	/* a zero length is the CVE-2003-0213 case */
	bad = pns_connect();
	uint8_t zero[PPTP_HDR_LEN] = { 0, 0, 0, 1, 0x1a, 0x2b, 0x3c, 0x4d, 0, 1, 0, 0 };
	assert_int_equal(send(bad, zero, sizeof(zero), 0), (ssize_t)sizeof(zero));
	assert_true(pns_closed(bad, REPLY_MS));
	close(bad);
	struct pptp_msg m = { .type = PPTP_ECHORQ };
	m.u.echo.id = 5;
	pns_send(good, &m);
	assert_int_equal(pns_recv(good, &m, REPLY_MS), 0);
	assert_int_equal(m.type, PPTP_ECHORP);
	close(good);
}

static void
test_order_abuse(void **state)
{
	/* OCRQ before SCCRQ: closed, no pppd */
	int s = pns_connect();
	struct pptp_msg m = { .type = PPTP_OCRQ };
	m.u.ocrq.call_id = 9;
	pns_send(s, &m);
	assert_true(pns_closed(s, REPLY_MS));
	close(s);
	assert_int_equal(daemon_children(), 0);

	/* SCCRQ twice, CCRQ for a call that is not ours: dropped, still alive */
	s = pns_start();
	m = (struct pptp_msg){ .type = PPTP_SCCRQ };
	m.u.sccr.version = PPTP_VERSION;
	pns_send(s, &m);
	m = (struct pptp_msg){ .type = PPTP_CCRQ };
	m.u.ccrq.call_id = 4242;
	pns_send(s, &m);
	/* ICRQ: refused with ICRP */
	m = (struct pptp_msg){ .type = PPTP_ICRQ };
	m.u.icrq.call_id = 31;
	pns_send(s, &m);
	assert_int_equal(pns_recv(s, &m, REPLY_MS), 0);
	assert_int_equal(m.type, PPTP_ICRP);
	assert_int_equal(m.u.icrp.peer_call_id, 31);
	assert_int_equal(m.u.icrp.result, PPTP_ICRP_DO_NOT_ACCEPT);
	m = (struct pptp_msg){ .type = PPTP_ECHORQ };
	m.u.echo.id = 6;
	pns_send(s, &m);
	assert_int_equal(pns_recv(s, &m, REPLY_MS), 0);
	assert_int_equal(m.type, PPTP_ECHORP);
	close(s);
}

static void
test_silent_connection_closed_at_stimeout(void **state)
{
	daemon_stop();
	daemon_start("stimeout 1\n");
	int s = pns_connect();
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_true(pns_closed(s, 3000));
	clock_gettime(CLOCK_MONOTONIC, &b);
	long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	assert_true(ms >= 900);
	close(s);
	assert_true(log_contains("no Start-Control-Connection-Request in time"));
}

static void
test_config_error_exit_status(void **state)
{
	char path[PATH_MAX];
	write_file("bad.conf", "# comment\nlocalip 198.19.0.1\nremoteipp 198.19.0.2\n");
	snprintf(path, sizeof(path), "%s/bad.conf", tmpdir);
	char cmd[PATH_MAX * 2];
	snprintf(cmd, sizeof(cmd), DAEMON " -f -c %s 2>%s/err", path, tmpdir);
	int st = system(cmd);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 2);
	snprintf(cmd, sizeof(cmd), "grep -q '%s:3:' %s/err", path, tmpdir);
	assert_int_equal(system(cmd), 0);
}

/* ---- issue 12: several calls per connection, bounded setups, clean stops */

static void
pns_send_simple(int s, unsigned type, uint16_t id)
{
	struct pptp_msg m = { .type = type };
	switch (type) {
	case PPTP_CCRQ: m.u.ccrq.call_id = id; break;
	case PPTP_SLI: m.u.sli.peer_call_id = id; break;
	case PPTP_WEN: m.u.wen.peer_call_id = id; break;
	case PPTP_STOPCCRP: m.u.stop.reason_or_result = PPTP_STOP_OK; break;
	default: break;
	}
	pns_send(s, &m);
}

/* Read until a message of `type` arrives; -1 on close or timeout. */
static int
pns_expect(int s, unsigned type, struct pptp_msg *m, int timeout_ms)
{
	while (pns_recv(s, m, timeout_ms) == 0)
		if (m->type == type)
			return 0;
	return -1;
}

/* Lines above debug level: -d asks for every message, the rest must be
 * rate-limited. */
static int
log_lines(void)
{
	FILE *f = fopen(logpath, "r");
	char line[1024];
	int n = 0;
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strstr(line, " pptpd debug: ") == NULL;
	fclose(f);
	return n;
}

static int
log_count(const char *needle)
{
	FILE *f = fopen(logpath, "r");
	char line[1024];
	int n = 0;
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

static long
ms_since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

static int
teardown_quiet(void **state)
{
	pool = "198.19.0.10-11";
	unsetenv("FAKE_PPPD_IGNORE_TERM");
	unsetenv("FAKE_PPPD_UP_USER");
	return teardown(state);
}

/* pptp-linux carries every tunnel from one host on one connection. */
static void
test_several_calls_per_connection(void **state)
{
	int s = pns_start();
	struct pptp_msg r[3], m;
	for (uint16_t i = 0; i < 2; i++) {
		pns_call(s, (uint16_t)(100 + i), &r[i]);
		assert_int_equal(r[i].u.ocrp.result, PPTP_OCRP_CONNECTED);
	}
	assert_int_not_equal(r[0].u.ocrp.call_id, r[1].u.ocrp.call_id);
	wait_for(daemon_children, 2, 2000);
	/* a peer Call ID already in use on this connection is refused */
	pns_call(s, 100, &r[2]);
	assert_int_equal(r[2].u.ocrp.result, PPTP_OCRP_GENERAL_ERROR);
	assert_int_equal(r[2].u.ocrp.error, PPTP_ERR_BAD_CALL_ID);
	/* clearing one call ends that one only */
	pns_send_simple(s, PPTP_CCRQ, 101);
	assert_int_equal(pns_expect(s, PPTP_CDN, &m, REPLY_MS), 0);
	assert_int_equal(m.u.cdn.call_id, r[1].u.ocrp.call_id);
	wait_for(daemon_children, 1, 3000);
	m = (struct pptp_msg){ .type = PPTP_ECHORQ };
	m.u.echo.id = 5;
	pns_send(s, &m);
	assert_int_equal(pns_expect(s, PPTP_ECHORP, &m, REPLY_MS), 0);
	close(s);
	wait_for(daemon_children, 0, 3000);
}

/* A call counts against its connection until its pppd is reaped: clearing
 * calls whose pppd is slow to die does not make room for more. */
static void
test_ending_calls_count(void **state)
{
	struct pptp_msg r, m;
	pool = "198.19.0.10-20";
	setenv("FAKE_PPPD_IGNORE_TERM", "1", 1);
	daemon_start("calls-per-connection 3\n");
	int s = pns_start();
	for (uint16_t i = 1; i <= 3; i++) {
		pns_call(s, i, &r);
		assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
		wait_for(args_files, i, 2000);   /* its SIGTERM trap is set */
		pns_send_simple(s, PPTP_CCRQ, i);
		assert_int_equal(pns_expect(s, PPTP_CDN, &m, REPLY_MS), 0);
	}
	assert_int_equal(daemon_children(), 3);   /* all three still ending */
	pns_call(s, 4, &r);
	assert_int_not_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	assert_true(log_contains("too many calls on this connection"));
	/* once SIGKILL has reaped them (5 s grace), calls are possible again */
	wait_for(daemon_children, 0, 8000);
	pns_call(s, 5, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	close(s);
}

/* OCRQ then CCRQ in a loop: the review saw 1000 root pppd started in
 * 0.85 s. Now call-rate-per-client bounds the starts, and the refusals do
 * not flood the log. */
static void
test_call_loop_rate_limited(void **state)
{
	struct pptp_msg r, m;
	struct timespec t0;
	int connected = 0, busy = 0;
	pool = "198.19.0.10-90";
	daemon_start("calls-per-connection 1000\ncall-rate-per-client 5\n");
	int s = pns_start();
	int lines0 = log_lines();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint16_t i = 1; i <= 300; i++) {
		pns_call(s, i, &r);
		if (r.u.ocrp.result == PPTP_OCRP_CONNECTED) {
			connected++;
			pns_send_simple(s, PPTP_CCRQ, i);
			assert_int_equal(pns_expect(s, PPTP_CDN, &m, REPLY_MS), 0);
		} else {
			busy += r.u.ocrp.result == PPTP_OCRP_BUSY;
		}
	}
	long ms = ms_since(&t0);
	print_message("call loop: 300 OCRQ in %ld ms: %d connected, %d busy, "
	    "%d pppd started, %d log lines\n", ms, connected, busy,
	    args_files(), log_lines() - lines0);
	/* a burst of 5, then 5 per second */
	assert_true(connected >= 5);
	assert_true(connected <= 5 + 5 * (ms / 1000 + 1));
	assert_int_equal(connected + busy, 300);
	/* (a stand-in killed at once may not have written its file yet) */
	assert_true(args_files() <= connected);
	assert_true(log_contains("call-rate-per-client"));
	assert_true(log_lines() - lines0 < 150);
	close(s);
}

/* Every line remote input can cause goes through a rate limiter. */
static void
test_log_flood_rate_limited(void **state)
{
	int s = pns_start();
	struct timespec t0;
	int lines0 = log_lines();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 1000; i++) {
		pns_send_simple(s, PPTP_WEN, (uint16_t)i);
		pns_send_simple(s, PPTP_CCRQ, (uint16_t)i);
		pns_send_simple(s, PPTP_SLI, (uint16_t)i);
	}
	for (int i = 0; i < 200; i++)
		close(pns_start());
	/* the daemon has read it all once an echo comes back */
	struct pptp_msg m = { .type = PPTP_ECHORQ };
	m.u.echo.id = 9;
	pns_send(s, &m);
	assert_int_equal(pns_expect(s, PPTP_ECHORP, &m, 5000), 0);
	long ms = ms_since(&t0);
	int lines = log_lines() - lines0;
	print_message("log flood: 3000 bad messages and 200 connections in "
	    "%ld ms gave %d log lines\n", ms, lines);
	/* each limiter: 10 or 20 lines a second, and one line for the rest */
	assert_true(lines <= 80 * (ms / 1000 + 1));
	close(s);
}

/* A connection whose last call has ended is stopped after stimeout, with
 * a Stop-Control-Connection-Request, even if it keeps answering. */
static void
test_connection_without_call_stopped(void **state)
{
	struct pptp_msg r, m;
	struct timespec t0;
	daemon_start("stimeout 1\n");
	int s = pns_start();
	pns_call(s, 1, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	pns_send_simple(s, PPTP_CCRQ, 1);
	assert_int_equal(pns_expect(s, PPTP_CDN, &m, REPLY_MS), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(pns_expect(s, PPTP_STOPCCRQ, &m, 4000), 0);
	assert_true(ms_since(&t0) >= 800);
	pns_send_simple(s, PPTP_STOPCCRP, 0);
	assert_true(pns_closed(s, REPLY_MS));
	close(s);
	assert_true(log_contains("no call in time"));
}

/* SIGTERM: the peer hears of it (CDN, then StopCCRQ), and the daemon exits
 * once it has answered. */
static void
test_shutdown_tells_the_peer(void **state)
{
	struct pptp_msg r, m;
	int st;
	daemon_start("");
	int s = pns_start();
	pns_call(s, 42, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	wait_for(daemon_children, 1, 2000);
	kill(daemon_pid, SIGTERM);
	assert_int_equal(pns_expect(s, PPTP_CDN, &m, REPLY_MS), 0);
	assert_int_equal(m.u.cdn.call_id, r.u.ocrp.call_id);
	assert_int_equal(m.u.cdn.result, PPTP_CDN_ADMIN_SHUTDOWN);
	assert_int_equal(pns_recv(s, &m, REPLY_MS), 0);
	assert_int_equal(m.type, PPTP_STOPCCRQ);
	pns_send_simple(s, PPTP_STOPCCRP, 0);
	assert_true(pns_closed(s, REPLY_MS));
	close(s);
	assert_int_equal(waitpid(daemon_pid, &st, 0), daemon_pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* A peer that never answers the StopCCRQ does not hold the exit up past
 * stop-timeout, and a second SIGTERM cuts it short. */
static void
test_shutdown_bounded(void **state)
{
	struct pptp_msg r;
	struct timespec t0;
	int st;
	setenv("FAKE_PPPD_IGNORE_TERM", "1", 1);
	daemon_start("stop-timeout 2\n");
	int s = pns_start();
	pns_call(s, 1, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	wait_for(args_files, 1, 2000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kill(daemon_pid, SIGTERM);
	assert_int_equal(waitpid(daemon_pid, &st, 0), daemon_pid);
	long ms = ms_since(&t0);
	assert_true(ms >= 1500 && ms < 4000);
	assert_true(WIFEXITED(st));
	assert_true(log_contains("stop-timeout reached"));
	close(s);
	unsetenv("FAKE_PPPD_IGNORE_TERM");
	/* second signal */
	setenv("FAKE_PPPD_IGNORE_TERM", "1", 1);
	daemon_start("stop-timeout 30\n");
	s = pns_start();
	pns_call(s, 1, &r);
	wait_for(args_files, 1, 2000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kill(daemon_pid, SIGTERM);
	usleep(200000);
	kill(daemon_pid, SIGTERM);
	assert_int_equal(waitpid(daemon_pid, &st, 0), daemon_pid);
	assert_true(ms_since(&t0) < 2000);
	assert_true(log_contains("second stop signal"));
	close(s);
	unsetenv("FAKE_PPPD_IGNORE_TERM");
}

/* The CDN goes to a peer that may not have authenticated: no internals. */
static void
test_cdn_text_is_neutral(void **state)
{
	int s = pns_start();
	struct pptp_msg r, m;
	pns_call(s, 7, &r);
	wait_for(args_files, 1, 2000);
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "for f in %s/*.args; do p=${f##*/}; "
	    "kill ${p%%.args}; done", tmpdir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(pns_expect(s, PPTP_CDN, &m, REPLY_MS), 0);
	assert_string_equal(m.u.cdn.stats, "lost carrier");
	/* the detail stays in our log */
	assert_true(log_contains("pppd killed by signal") ||
	    log_contains("pppd hung up the line"));
	close(s);
}

/* A user name is the peer's choice: a newline in it must not forge a log
 * line, an escape must not reach a terminal. */
static void
test_report_user_cleaned(void **state)
{
	struct pptp_msg r;
	setenv("FAKE_PPPD_UP_USER",
	    "evil%0A12:00:00.000%20pptpd%20notice:%20forged%1B%5B2J", 1);
	daemon_start("");
	int s = pns_start();
	pns_call(s, 1, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	for (int i = 0; i < 200 && !log_contains("session start"); i++)
		usleep(10000);
	assert_true(log_contains("session start: call"));
	assert_true(log_contains("user evil?12:00:00.000 pptpd notice: forged?[2J "));
	assert_int_equal(log_count("\x1b"), 0);
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "grep -q '^12:00:00.000' %s", logpath);
	assert_int_not_equal(system(cmd), 0);
	close(s);
}

int
main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test_daemon needs root (raw GRE socket, network namespace)\n");
		return 1;
	}
	if (unshare(CLONE_NEWNET) < 0) {
		perror("unshare(CLONE_NEWNET)");
		return 1;
	}
	lo_up();
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_call_setup_and_clear, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pppd_exit_sends_cdn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_exhausted_and_returned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_header_closes_only_that_connection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_order_abuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_silent_connection_closed_at_stimeout, setup, teardown),
		cmocka_unit_test(test_config_error_exit_status),
		cmocka_unit_test_setup_teardown(test_several_calls_per_connection, setup, teardown),
		cmocka_unit_test_teardown(test_ending_calls_count, teardown_quiet),
		cmocka_unit_test_teardown(test_call_loop_rate_limited, teardown_quiet),
		cmocka_unit_test_setup_teardown(test_log_flood_rate_limited, setup, teardown),
		cmocka_unit_test_teardown(test_connection_without_call_stopped, teardown_quiet),
		cmocka_unit_test(test_shutdown_tells_the_peer),
		cmocka_unit_test(test_shutdown_bounded),
		cmocka_unit_test_setup_teardown(test_cdn_text_is_neutral, setup, teardown),
		cmocka_unit_test_teardown(test_report_user_cleaned, teardown_quiet),
	};
	int rc = cmocka_run_group_tests_name("daemon", tests, NULL, NULL);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		return 1;
	return rc;
}
