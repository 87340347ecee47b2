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
#include <sys/mount.h>
#include <sys/resource.h>
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

#define RUN_DIR     "/run/pptpd"

static char tmpdir[] = "/tmp/pptpd-test-XXXXXX";
static char logpath[PATH_MAX];
static pid_t daemon_pid;
/* For the next daemon_start: RLIMIT_NOFILE (soft and hard, 0: inherited)
 * and a pid file (-p, NULL: none). */
static rlim_t daemon_nofile;
static const char *daemon_pidfile;

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

static int
file_contains(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int found = 0;
	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

static int
log_contains(const char *needle)
{
	return file_contains(logpath, needle);
}

/* The test configuration plus `extra` lines, as tmpdir/pptpd.conf. */
static void
write_conf(const char *extra)
{
	char conf[2 * PATH_MAX + 256], cwd[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(conf, sizeof(conf),
	    "ppp %s/" FAKE_PPPD "\noption %s/options\nlocalip 198.19.0.1\n"
	    "remoteip 198.19.0.10-11\nlisten 127.0.0.1\nplugin %s/" PLUGIN "\n%s",
	    cwd, tmpdir, cwd, extra);
	write_file("pptpd.conf", conf);
	write_file("options", "# nothing\n");
}

static int
can_connect(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(PPTP_PORT) };
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	int ok = connect(s, (struct sockaddr *)&sin, sizeof(sin)) == 0;
	close(s);
	return ok;
}

/* Start the daemon with `extra` config lines; returns when it listens. */
static void
daemon_start(const char *extra)
{
	char path[PATH_MAX];
	write_conf(extra);
	snprintf(logpath, sizeof(logpath), "%s/pptpd.log", tmpdir);
	daemon_pid = fork();
	assert_true(daemon_pid >= 0);
	if (daemon_pid == 0) {
		snprintf(path, sizeof(path), "%s/pptpd.conf", tmpdir);
		int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, STDERR_FILENO);
		if (daemon_nofile != 0) {
			struct rlimit rl = { daemon_nofile, daemon_nofile };
			if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
				_exit(126);
		}
		const char *p = daemon_pidfile ? "-p" : NULL, *pf = daemon_pidfile;
		setenv("FAKE_PPPD_DIR", tmpdir, 1);
		/* PPTPD_VALGRIND=1: the daemon runs under valgrind, and any
		 * error or leak turns its exit status (checked at teardown)
		 * non-zero. */
		if (getenv("PPTPD_VALGRIND") != NULL)
			execlp("valgrind", "valgrind", "-q", "--leak-check=full",
			    "--show-leak-kinds=definite,indirect",
			    "--errors-for-leak-kinds=definite,indirect",
			    "--error-exitcode=99", "--trace-children=no", DAEMON,
			    "-f", "-d", "-c", path, p, pf, (char *)NULL);
		execl(DAEMON, "pptpd", "-f", "-d", "-c", path, p, pf, (char *)NULL);
		_exit(127);
	}
	/* Listening comes before the signals are set up: a SIGTERM in
	 * between would kill it without its clean-up. */
	for (int i = 0; i < 1000; i++) {
		if (can_connect() && log_contains(" listening on "))
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

/* A new client is served (gets its SCCRP) within `ms`: the daemon may be
 * closing the connections it held for a moment still. */
static int
pns_served(int ms)
{
	for (int i = 0; i < ms / 100; i++) {
		int s = pns_connect();
		struct pptp_msg m = { .type = PPTP_SCCRQ }, r;
		m.u.sccr.version = PPTP_VERSION;
		pns_send(s, &m);
		int ok = pns_recv(s, &r, 100) == 0 && r.type == PPTP_SCCRP;
		close(s);
		if (ok)
			return 1;
		usleep(100000);
	}
	return 0;
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
	daemon_nofile = 0;
	daemon_pidfile = NULL;
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


/* The daemon's CPU time (user + system) in ms, from /proc/PID/stat. */
static long
daemon_cpu_ms(pid_t pid)
{
	char p[64], buf[1024];
	unsigned long utime, stime;
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after "pid (comm) ": state is field 3, utime 14, stime 15 */
	char *t = strrchr(buf, ')');
	assert_non_null(t);
	assert_int_equal(sscanf(t + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
	    "%*u %lu %lu", &utime, &stime), 2);
	return (long)((utime + stime) * 1000 / (unsigned long)sysconf(_SC_CLK_TCK));
}

#define IDLE_CLIENTS 60
#define SPIN_WINDOW_MS 3000
#define SPIN_MAX_CPU_MS 300

/* Clients the daemon holds or has yet to take off its backlog, while the
 * daemon's CPU time over SPIN_WINDOW_MS is measured. */
static long
idle_clients_cpu_ms(int *s, int n)
{
	for (int i = 0; i < n; i++)
		s[i] = pns_connect();
	usleep(200000);
	long before = daemon_cpu_ms(daemon_pid);
	usleep(SPIN_WINDOW_MS * 1000);
	return daemon_cpu_ms(daemon_pid) - before;
}

/* RLIMIT_NOFILE 32, hard too: the daemon cannot raise it, serves the
 * connections that fit, refuses the rest, and does not spin at EMFILE. */
static void
test_nofile_limit_no_accept_spin(void **state)
{
	int s[IDLE_CLIENTS];
	daemon_stop();
	daemon_nofile = 32;
	daemon_start("");
	long cpu = idle_clients_cpu_ms(s, IDLE_CLIENTS);
	print_message("daemon CPU with %d idle clients: %ld ms in %d ms\n",
	    IDLE_CLIENTS, cpu, SPIN_WINDOW_MS);
	assert_true(cpu < SPIN_MAX_CPU_MS);
	/* 8 connections fit in 32; under valgrind, which keeps some of the
	 * process's descriptors for itself, fewer */
	assert_true(log_contains("(hard limit) holds "));
	assert_true(log_contains("connections, not the 100 of 'connections'"));
	assert_true(log_contains("refused: connection limit reached"));
	for (int i = 0; i < IDLE_CLIENTS; i++)
		close(s[i]);
	assert_true(pns_served(3000));
}

/* Descriptors run out below 'connections' (the limit lowered under a
 * running daemon): the spare descriptor takes each client off the backlog
 * and refuses it instead of the listener waking forever. */
static void
test_emfile_sheds_clients(void **state)
{
	int s[IDLE_CLIENTS], low = 0;
	char p[64];
	struct stat st;
	/* A new descriptor takes the lowest free number: leave room for two. */
	do
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)daemon_pid, ++low);
	while (stat(p, &st) == 0);
	struct rlimit rl = { (rlim_t)low + 2, (rlim_t)low + 2 };
	assert_int_equal(prlimit(daemon_pid, RLIMIT_NOFILE, &rl, NULL), 0);
	long cpu = idle_clients_cpu_ms(s, IDLE_CLIENTS);
	print_message("daemon CPU at EMFILE with %d clients: %ld ms in %d ms\n",
	    IDLE_CLIENTS, cpu, SPIN_WINDOW_MS);
	assert_true(cpu < SPIN_MAX_CPU_MS);
	assert_true(log_contains("refused: out of descriptors"));
	assert_true(pns_closed(s[IDLE_CLIENTS - 1], REPLY_MS));
	for (int i = 0; i < IDLE_CLIENTS; i++)
		close(s[i]);
	assert_true(pns_served(3000));
}

/* One daemon run with `args`, stderr to tmpdir/err; its exit status. The
 * timeout turns a daemon that starts when it should not into a failure. */
static int
daemon_once(const char *args)
{
	char cmd[PATH_MAX * 2 + 256];
	snprintf(cmd, sizeof(cmd), "timeout 10 " DAEMON " -f -c %s/pptpd.conf %s "
	    "2>%s/err", tmpdir, args, tmpdir);
	int st = system(cmd);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static int
err_contains(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
err_contains(const char *fmt, ...)
{
	char path[PATH_MAX], needle[PATH_MAX * 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(needle, sizeof(needle), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/err", tmpdir);
	int found = file_contains(path, needle);
	if (!found)
		print_message("stderr lacks '%s'\n", needle);
	return found;
}

/* 'peers' and 'logwtmp' are carried out by the plugin: with 'noplugin'
 * they would be dropped, so the start is refused at the line. */
static void
test_noplugin_with_peers_or_logwtmp_refused(void **state)
{
	write_file("peers", "user alice require-128\n");
	char extra[PATH_MAX + 64];
	snprintf(extra, sizeof(extra), "noplugin\npeers %s/peers\n", tmpdir);
	write_conf(extra);
	assert_int_equal(daemon_once(""), 2);
	/* the conf has 6 lines before `extra` */
	assert_true(err_contains("%s/pptpd.conf:8: 'peers' needs the plugin; "
	    "remove 'noplugin' (line 7)", tmpdir));

	write_conf("logwtmp\nnoplugin\n");
	assert_int_equal(daemon_once(""), 2);
	assert_true(err_contains("%s/pptpd.conf:7: 'logwtmp' needs the plugin; "
	    "remove 'noplugin' (line 8)", tmpdir));

	write_conf("noplugin\n");
	assert_int_equal(daemon_once("-w"), 2);
	assert_true(err_contains("-w (logwtmp) needs the plugin; remove "
	    "'noplugin' from %s/pptpd.conf", tmpdir));
}

/* The peers file is read at startup, not only by each pppd: a bad line
 * fails the start with the plugin's file:line; a good file starts. */
static void
test_peers_file_checked_at_startup(void **state)
{
	char extra[PATH_MAX + 64];
	write_file("peers", "user alice require-128\nuser bob require-129\n");
	snprintf(extra, sizeof(extra), "peers %s/peers\n", tmpdir);
	write_conf(extra);
	assert_int_equal(daemon_once(""), 2);
	assert_true(err_contains("%s/peers:2: ", tmpdir));

	write_file("peers", "user alice require-128\nuser bob require\n");
	daemon_nofile = 0;
	daemon_pidfile = NULL;
	daemon_start(extra);
	int st = daemon_stop();
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static int
pidfile_pid(const char *path)
{
	FILE *f = fopen(path, "r");
	int pid = 0;
	if (f == NULL)
		return 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid;
}

/* The pid file is locked: a second pptpd refuses to start and says who
 * holds it; the first one goes on serving. */
static void
test_pidfile_locked_second_instance_refused(void **state)
{
	char pidfile[PATH_MAX], args[PATH_MAX + 8];
	snprintf(pidfile, sizeof(pidfile), "%s/pptpd.pid", tmpdir);
	daemon_stop();
	daemon_pidfile = pidfile;
	daemon_start("");
	/* under valgrind the pid in the file is valgrind's: the same process */
	assert_int_equal(pidfile_pid(pidfile), daemon_pid);
	snprintf(args, sizeof(args), "-p %s", pidfile);
	assert_int_equal(daemon_once(args), 1);
	assert_true(err_contains("another pptpd (pid %d) is running: pid file %s "
	    "is locked", (int)daemon_pid, pidfile));
	assert_int_equal(kill(daemon_pid, 0), 0);
	assert_int_equal(pidfile_pid(pidfile), daemon_pid);
	close(pns_start());
}

/* A symbolic link at the pid file's path is refused, its target untouched. */
static void
test_pidfile_symlink_refused(void **state)
{
	char link[PATH_MAX], target[PATH_MAX], args[PATH_MAX + 8];
	snprintf(link, sizeof(link), "%s/link.pid", tmpdir);
	snprintf(target, sizeof(target), "%s/target", tmpdir);
	write_file("target", "keep me\n");
	unlink(link);
	assert_int_equal(symlink(target, link), 0);
	write_conf("");
	snprintf(args, sizeof(args), "-p %s", link);
	assert_int_equal(daemon_once(args), 1);
	assert_true(err_contains("pid file %s is a symbolic link: refused", link));
	assert_true(file_contains(target, "keep me"));
	unlink(link);
}

/* Daemonised, the report socket is named after the daemon's own pid (the
 * one in the pid file), not the parent's that exited in daemon(). */
static void
test_report_socket_named_after_daemon_pid(void **state)
{
	char pidfile[PATH_MAX], cmd[PATH_MAX * 3], sock[PATH_MAX];
	struct stat st;
	snprintf(pidfile, sizeof(pidfile), "%s/daemon.pid", tmpdir);
	write_conf("");
	snprintf(cmd, sizeof(cmd), DAEMON " -c %s/pptpd.conf -p %s", tmpdir, pidfile);
	assert_int_equal(system(cmd), 0);
	int pid = 0;
	for (int i = 0; i < 300 && (pid = pidfile_pid(pidfile)) == 0; i++)
		usleep(10000);
	assert_true(pid > 0);
	for (int i = 0; i < 300 && !can_connect(); i++)
		usleep(10000);
	snprintf(sock, sizeof(sock), RUN_DIR "/report.%d.sock", pid);
	int found = stat(sock, &st) == 0 && S_ISSOCK(st.st_mode);
	assert_int_equal(kill(pid, SIGTERM), 0);
	for (int i = 0; i < 300 && kill(pid, 0) == 0; i++)
		usleep(10000);
	assert_true(found);
	assert_int_not_equal(kill(pid, 0), 0);
	assert_int_not_equal(access(pidfile, F_OK), 0);
	assert_int_not_equal(access(sock, F_OK), 0);
}

/* /run/pptpd that others may enter, or that is a symbolic link, is refused.
 * /run is a tmpfs of this test's own mount namespace (see main). */
static void
test_run_dir_checked(void **state)
{
	char target[PATH_MAX];
	write_conf("");
	mkdir(RUN_DIR, 0700);
	assert_int_equal(chmod(RUN_DIR, 0777), 0);
	int st = daemon_once("");
	chmod(RUN_DIR, 0700);
	assert_int_equal(st, 1);
	assert_true(err_contains(RUN_DIR " has mode 0777: refused"));

	snprintf(target, sizeof(target), "%s/rundir", tmpdir);
	mkdir(target, 0700);
	assert_int_equal(rename(RUN_DIR, RUN_DIR ".saved"), 0);
	assert_int_equal(symlink(target, RUN_DIR), 0);
	st = daemon_once("");
	unlink(RUN_DIR);
	assert_int_equal(rename(RUN_DIR ".saved", RUN_DIR), 0);
	assert_int_equal(st, 1);
	assert_true(err_contains(RUN_DIR " is not a directory"));
	assert_int_equal(count_in_dir(target, ".sock"), 0);
}

int
main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test_daemon needs root (raw GRE socket, network namespace)\n");
		return 1;
	}
	if (unshare(CLONE_NEWNET | CLONE_NEWNS) < 0) {
		perror("unshare(CLONE_NEWNET | CLONE_NEWNS)");
		return 1;
	}
	/* Our own /run: the tests change /run/pptpd without touching the
	 * host's. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") < 0) {
		perror("mount /run");
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
		cmocka_unit_test_setup_teardown(test_nofile_limit_no_accept_spin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_emfile_sheds_clients, setup, teardown),
		cmocka_unit_test(test_noplugin_with_peers_or_logwtmp_refused),
		cmocka_unit_test(test_peers_file_checked_at_startup),
		cmocka_unit_test_setup_teardown(test_pidfile_locked_second_instance_refused, setup, teardown),
		cmocka_unit_test(test_pidfile_symlink_refused),
		cmocka_unit_test(test_report_socket_named_after_daemon_pid),
		cmocka_unit_test(test_run_dir_checked),
	};
	int rc = cmocka_run_group_tests_name("daemon", tests, NULL, NULL);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		return 1;
	return rc;
}
