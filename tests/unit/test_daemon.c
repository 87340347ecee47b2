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
	    "remoteip 198.19.0.10-11\nlisten 127.0.0.1\nplugin %s/" PLUGIN "\n%s",
	    cwd, tmpdir, cwd, extra);
	write_file("pptpd.conf", conf);
	write_file("options", "# nothing\n");
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

static int
log_contains(const char *needle)
{
	FILE *f = fopen(logpath, "r");
	char line[1024];
	int found = 0;
	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
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
	int s1 = pns_start(), s2 = pns_start(), s3 = pns_start();
	struct pptp_msg r;
	pns_call(s1, 1, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	/* one call per control connection, as every real client does */
	pns_call(s1, 2, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_GENERAL_ERROR);
	assert_true(log_contains("too many calls on this connection"));
	pns_call(s2, 3, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	pns_call(s3, 4, &r);   /* pool of two */
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_GENERAL_ERROR);
	assert_int_equal(r.u.ocrp.error, PPTP_ERR_NO_RESOURCE);
	assert_true(log_contains("address pool exhausted"));
	/* the clients leaving hang up both calls and free both addresses */
	close(s1);
	close(s2);
	wait_for(daemon_children, 0, 3000);
	s1 = pns_start();
	pns_call(s1, 5, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	pns_call(s3, 6, &r);
	assert_int_equal(r.u.ocrp.result, PPTP_OCRP_CONNECTED);
	close(s1);
	close(s3);
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
	};
	int rc = cmocka_run_group_tests_name("daemon", tests, NULL, NULL);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		return 1;
	return rc;
}
