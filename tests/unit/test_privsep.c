/* The monitor (pptpd/monitor.c) against a worker that asks for what it
 * must not get: a real monitor_run in a child process, its pretend worker
 * a sleeping grandchild, and this process speaking the worker's side of
 * the socketpair. Each refusal is answered and logged, changes nothing,
 * and the monitor goes on serving; a pppd it started is signalled only by
 * its own call, and reaped with a CHILD_EXIT. Needs root (a network
 * namespace, so that a connection can be on port 1723). */
#include <arpa/inet.h>
#include <dirent.h>
#include <poll.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <linux/if_tun.h>
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
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "pptpd/conf.h"
#include "pptpd/datapath.h"
#include "pptpd/log.h"
#include "pptpd/monitor.h"
#include "proto/monitor.h"
#include "proto/msg.h"
#include "tests/unit/harness.h"

static char tmpdir[] = "/tmp/pptpd-privsep-XXXXXX";
static char logpath[PATH_MAX];
static struct conf conf;
static int sock = -1;            /* the worker's end */
static pid_t monitor_pid, worker_pid;
static int listener = -1;        /* 127.0.0.1:1723 */
static int kernel_path;          /* the next monitor's startup chose it */
static int conf_ipv6;            /* ... with IPv6 in the tunnel */
static char conf_path[PATH_MAX]; /* its pptpd.conf */
static int pppd_deaf;            /* the next stand-in pppd ignores SIGTERM */

static int
no_reload(void *arg, char *err, size_t errlen)
{
	snprintf(err, errlen, "not in this test");
	return -1;
}

/* The monitor's read of the reload's files: pptpd.conf, through the
 * recording set, as main.c's does. */
static int
files_read(void *arg, struct fileset *fs, char *err, size_t errlen)
{
	struct conf next;
	conf_init(&next);
	int rc = conf_load_fs(&next, arg, fs, CONF_LOAD_NO_RESOLVE, err, errlen);
	conf_free(&next);
	return rc;
}

static int
log_contains(const char *needle)
{
	return file_contains(logpath, needle);
}

/* A control connection as the worker would hold it: accepted on 1723. */
static int
conn_1723(int *client)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_port = htons(PPTP_PORT) };
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	*client = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(*client, (struct sockaddr *)&sin, sizeof(sin)), 0);
	int c = accept(listener, NULL, NULL);
	assert_true(c >= 0);
	return c;
}

/* A connection on another port. */
static int
conn_other(int *client, int *l)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	*l = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(bind(*l, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(*l, 1), 0);
	getsockname(*l, (struct sockaddr *)&sin, &len);
	*client = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(*client, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return accept(*l, NULL, NULL);
}

static uint32_t
ip(const char *s)
{
	struct in_addr a;
	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

/* A CALL_START with the connection, and the report channel's two ends
 * (pppd's, the worker's) if its flags name it, as its descriptors. */
static struct mon_msg
call_start(uint16_t id, const char *remote, uint16_t flags, int conn,
    int report, int ours)
{
	struct mon_msg m = { .type = MON_CALL_START };
	m.fds[m.nfds++] = conn;
	if (flags & MON_CALL_REPORTS) {
		m.fds[m.nfds++] = report;
		m.fds[m.nfds++] = ours;
	}
	m.u.call_start.call_id = id;
	m.u.call_start.peer_call_id = 7;
	m.u.call_start.flags = flags;
	m.u.call_start.local_ip = ip("198.19.0.1");
	m.u.call_start.remote_ip = ip(remote);
	return m;
}

/* Send `m` and return the answer (or event) that comes back. */
static struct mon_msg
ask(struct mon_msg *m)
{
	static uint32_t seq;
	struct mon_msg a;
	const char *why = NULL;
	m->seq = ++seq;
	assert_int_equal(mon_send(sock, m), 0);
	assert_int_equal(mon_recv(sock, &a, &why), 1);
	return a;
}

/* A pppd started for call `id` at `remote`: the answer. *conn and *c are
 * the connection's two ends, u its report channel's. */
static struct mon_msg
started(uint16_t id, const char *remote, int *conn, int *c, int u[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, u), 0);
	*conn = conn_1723(c);
	struct mon_msg m = call_start(id, remote, MON_CALL_REPORTS, *conn, u[1],
	    u[0]);
	struct mon_msg a = ask(&m);
	assert_int_equal(a.type, MON_CALL_STARTED);
	return a;
}

/* A CALL_START that must be refused with `reason`, logged. */
static void
start_refused(struct mon_msg *m, const char *reason)
{
	char want[256];
	struct mon_msg a = ask(m);
	assert_int_equal(a.type, MON_CALL_REFUSED);
	assert_string_equal(a.u.call_refused.reason, reason);
	snprintf(want, sizeof(want), "call-start from the worker (pid %d) for "
	    "call %u refused: %s", (int)worker_pid, m->u.call_start.call_id,
	    reason);
	for (int i = 0; i < 100 && !log_contains(want); i++)
		usleep(10000);
	assert_true(log_contains(want));
}

static int
setup(void **state)
{
	char path[PATH_MAX + 32], err[256];
	int sv[2], p[2];

	snprintf(path, sizeof(path), "%s/pppd", tmpdir);
	FILE *f = fopen(path, "w");
	/* Deaf: only its line's hangup (SIGHUP, to the session whose
	 * controlling terminal it is) or SIGKILL ends it. */
	fprintf(f, "#!/bin/sh\n%sexec sleep 30\n", pppd_deaf ? "trap '' TERM\n" :
	    "");
	fclose(f);
	chmod(path, 0755);
	snprintf(conf_path, sizeof(conf_path), "%s/pptpd.conf", tmpdir);
	snprintf(path, sizeof(path), "%s", conf_path);
	f = fopen(path, "w");
	fprintf(f, "ppp %s/pppd\nlocalip 198.19.0.1\nremoteip 198.19.0.10-11\n"
	    "%s", tmpdir, conf_ipv6 ? "ipv6-prefix-pool 2001:db8:100::/56\n"
	    "ipv6-radius-prefixes 2001:db8:200::/48,2001:db8:300:7::/64\n" : "");
	fclose(f);
	conf_init(&conf);
	assert_int_equal(conf_load(&conf, path, err, sizeof(err)), 0);
	snprintf(logpath, sizeof(logpath), "%s/monitor.log", tmpdir);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe(p), 0);
	monitor_pid = fork();
	if (monitor_pid == 0) {
		close(sv[1]);
		pid_t w = fork();
		if (w == 0) {
			for (;;)
				pause();
		}
		assert_int_equal(write(p[1], &w, sizeof(w)), sizeof(w));
		int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
		dup2(fd, STDERR_FILENO);
		log_open("pptpd", 1, 0);
		struct monitor_env env = { .conf = &conf, .worker = w,
			.sock = sv[0], .kernel_path = kernel_path,
			.reload = no_reload, .files = files_read,
			.reload_arg = conf_path };
		_exit(monitor_run(&env));
	}
	close(sv[0]);
	sock = sv[1];
	assert_int_equal(read(p[0], &worker_pid, sizeof(worker_pid)), sizeof(worker_pid));
	close(p[0]);
	close(p[1]);
	return 0;
}

/* The monitor of a server whose startup chose the kernel path (without
 * its guard: loading that is test_kguard's). */
static int
setup_kernel(void **state)
{
	kernel_path = 1;
	return setup(state);
}

/* The monitor of a server with IPv6 in the tunnel (a pool, and where
 * RADIUS may give /64s). */
static int
setup_ipv6(void **state)
{
	conf_ipv6 = 1;
	return setup(state);
}

/* The monitor under systemd: NOTIFY_SOCKET names our stand-in for its
 * notify socket, which passes the sender's credentials. */
static int notify_sock = -1;

static int
setup_notify(void **state)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int on = 1;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/notify", tmpdir);
	unlink(sun.sun_path);
	notify_sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(notify_sock, (struct sockaddr *)&sun,
	    sizeof(sun)), 0);
	assert_int_equal(setsockopt(notify_sock, SOL_SOCKET, SO_PASSCRED, &on,
	    sizeof(on)), 0);
	setenv("NOTIFY_SOCKET", sun.sun_path, 1);
	int rc = setup(state);
	unsetenv("NOTIFY_SOCKET");
	return rc;
}

static int
teardown(void **state)
{
	int st;
	if (notify_sock >= 0)
		close(notify_sock);
	notify_sock = -1;
	if (worker_pid > 0)
		kill(worker_pid, SIGKILL);
	if (monitor_pid > 0)
		waitpid(monitor_pid, &st, 0);
	close(sock);
	conf_free(&conf);
	kernel_path = 0;
	conf_ipv6 = 0;
	pppd_deaf = 0;
	return 0;
}

static int
setup_deaf(void **state)
{
	pppd_deaf = 1;
	return setup(state);
}

static void
test_hello(void **state)
{
	struct mon_msg m = { .type = MON_HELLO };
	struct mon_msg a = ask(&m);
	assert_int_equal(a.type, MON_WELCOME);
	assert_int_equal(a.u.welcome.generation, 1);
}

/* tmpdir/name holds `text`, with `mode`. */
static void
write_file(const char *name, const char *text, mode_t mode)
{
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	assert_int_equal(harness_write(tmpdir, name, text), 0);
	assert_int_equal(chmod(p, mode), 0);
}

static int
fd_holds(int fd, const char *text)
{
	char buf[512] = "";
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	return n >= 0 && strcmp(buf, text) == 0;
}

/* A reload's files: the monitor opens pptpd.conf and what it names (here
 * the DAE clients' 0600 file, which an unprivileged worker could not
 * open), read-only, and hands them over in order, then says OK. */
static void
test_reload_files(void **state)
{
	char dae[PATH_MAX + 16], conf_text[PATH_MAX + 128];
	const char *secrets = "198.18.0.254 s3cret\n";
	snprintf(dae, sizeof(dae), "%s/dae-clients", tmpdir);
	write_file("dae-clients", secrets, 0600);
	snprintf(conf_text, sizeof(conf_text), "localip 198.19.0.1\n"
	    "remoteip 198.19.0.10-11\nradius-dae-listen 127.0.0.1:3799\n"
	    "radius-dae-clients %s\n", dae);
	write_file("pptpd.conf", conf_text, 0644);

	struct mon_msg m = { .type = MON_RELOAD_FILES };
	struct mon_msg a = ask(&m);
	const char *want[] = { conf_path, dae };
	const char *text[] = { conf_text, secrets };
	for (int i = 0; i < 2; i++) {
		assert_int_equal(a.type, MON_FILE);
		assert_int_equal(a.seq, m.seq);
		assert_int_equal(a.u.file.index, i);
		assert_int_equal(a.u.file.count, 2);
		assert_string_equal(a.u.file.path, want[i]);
		assert_int_equal(a.nfds, 1);
		assert_int_equal(fcntl(a.fds[0], F_GETFL) & O_ACCMODE, O_RDONLY);
		assert_true(fd_holds(a.fds[0], text[i]));
		mon_close_fds(&a);
		const char *why = NULL;
		assert_int_equal(mon_recv(sock, &a, &why), 1);
	}
	assert_int_equal(a.type, MON_RESULT);
	assert_int_equal(a.u.result.status, MON_OK);

	/* A file that does not hold: no file handed, the reason said (with
	 * its line), and the monitor serves on. */
	write_file("pptpd.conf", "localip 198.19.0.1\nremoteip 198.19.0.10-11\n"
	    "no-such-key 1\n", 0644);
	a = ask(&m);
	assert_int_equal(a.type, MON_RESULT);
	assert_int_equal(a.u.result.status, MON_ERR_CONF);
	assert_non_null(strstr(a.u.result.text, "pptpd.conf:3:"));
	assert_int_equal(a.nfds, 0);
	test_hello(state);
}

/* What a subverted worker might hand the monitor instead of a client's
 * connection, a report channel or a kernel channel. */
static void
test_bad_descriptors_refused(void **state)
{
	int pp[2], c, l, u[2];
	struct mon_msg hello = { .type = MON_HELLO };
	hello = ask(&hello);   /* the monitor is in its loop: counted so */
	int fds0 = proc_fds(monitor_pid);
	assert_int_equal(pipe(pp), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, u), 0);

	struct mon_msg m = call_start(0x1234, "198.19.0.10", MON_CALL_REPORTS,
	    pp[0], u[0], u[1]);
	start_refused(&m, "the connection is not a TCP/IPv4 connection");

	int other = conn_other(&c, &l);
	m.fds[0] = other;
	start_refused(&m, "the connection is not on the PPTP port");
	close(other); close(c); close(l);

	int conn = conn_1723(&c);
	m.fds[0] = conn;
	m.fds[1] = pp[1];   /* a pipe for the report channel */
	start_refused(&m, "the report channel is not a unix seqpacket socket");
	int dg[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, dg), 0);
	m.fds[1] = dg[0];
	start_refused(&m, "the report channel is not a unix seqpacket socket");
	close(dg[0]);
	close(dg[1]);
	m = call_start(0x1234, "198.19.0.10", 0, conn, -1, -1);
	start_refused(&m, "report channel not as configured (noplugin)");
	m = call_start(0x1234, "198.19.0.10", MON_CALL_REPORTS | MON_CALL_KERNEL,
	    conn, u[0], u[1]);
	start_refused(&m, "the kernel path is not this server's");
	m = call_start(0x1234, "198.19.0.10", MON_CALL_REPORTS | MON_CALL_IPV6,
	    conn, u[0], u[1]);
	start_refused(&m, "IPv6 is not configured");
	m = call_start(0x1234, "198.19.0.99", MON_CALL_REPORTS, conn, u[0], u[1]);
	start_refused(&m, "the remote address is not the pool's, or is taken");
	m = call_start(0x1234, "0.0.0.0", MON_CALL_REPORTS, conn, u[0], u[1]);
	start_refused(&m, "no address from the pool");
	/* pppd would put the local address on its interface: only the
	 * pool's pair of the remote one will do */
	m = call_start(0x1234, "198.19.0.10", MON_CALL_REPORTS, conn, u[0], u[1]);
	m.u.call_start.local_ip = ip("8.8.8.8");
	start_refused(&m, "the local address is not the pool's pair of the remote");
	m.u.call_start.local_ip = ip("198.19.0.1");
	m.fds[2] = pp[1];   /* a pipe for the worker's end (answered only: the
	                       log's burst of 10 went to the cases above) */
	struct mon_msg r = ask(&m);
	assert_int_equal(r.type, MON_CALL_REFUSED);
	assert_string_equal(r.u.call_refused.reason,
	    "the report channel is not a unix seqpacket socket");
	m.fds[2] = u[1];

	/* None of it took anything: no descriptor kept (the monitor closes
	 * a request's just after its answer), the address and the Call ID
	 * free. */
	for (int i = 0; i < 100 && proc_fds(monitor_pid) != fds0; i++)
		usleep(10000);
	assert_int_equal(proc_fds(monitor_pid), fds0);
	m.u.call_start.local_ip = ip("198.19.0.1");
	struct mon_msg a = ask(&m);
	assert_int_equal(a.type, MON_CALL_STARTED);
	close(a.fds[0]);
	close(conn); close(c);
	close(pp[0]); close(pp[1]); close(u[0]); close(u[1]);
}

/* On the kernel path the monitor opens each call's channel itself (the
 * worker passes none), from the connection's addresses and the Call IDs;
 * a start for the other data path is refused. Where this kernel has no
 * PPTP channel the start is refused with the channel's reason and takes
 * nothing; where it has one, pppd gets it as descriptor 3 and the
 * monitor keeps no copy. */
static void
test_kernel_channel_is_the_monitors(void **state)
{
	int c, u[2];
	struct mon_msg hello = { .type = MON_HELLO };
	hello = ask(&hello);
	int fds0 = proc_fds(monitor_pid);
	int conn = conn_1723(&c);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, u), 0);

	struct mon_msg m = call_start(0x1234, "198.19.0.10", MON_CALL_REPORTS,
	    conn, u[1], u[0]);
	start_refused(&m, "the engine path is not this server's");
	m = call_start(0x1234, "198.19.0.10", MON_CALL_REPORTS |
	    MON_CALL_KERNEL, conn, u[1], u[0]);
	struct mon_msg a = ask(&m);
	if (datapath_kernel_probe() != 0) {
		assert_int_equal(a.type, MON_CALL_REFUSED);
		assert_non_null(strstr(a.u.call_refused.reason,
		    "cannot open a kernel PPTP channel"));
		/* The address went back: the same start fails the same way,
		 * not as "taken". */
		a = ask(&m);
		assert_int_equal(a.type, MON_CALL_REFUSED);
		assert_non_null(strstr(a.u.call_refused.reason,
		    "cannot open a kernel PPTP channel"));
	} else {
		char path[64], link[64] = "";
		assert_int_equal(a.type, MON_CALL_STARTED);
		assert_int_equal(a.nfds, 0);
		snprintf(path, sizeof(path), "/proc/%u/fd/3", a.u.call_started.pid);
		assert_true(readlink(path, link, sizeof(link) - 1) > 0);
		assert_int_equal(strncmp(link, "socket:", 7), 0);
		kill((pid_t)a.u.call_started.pid, SIGKILL);
	}
	for (int i = 0; i < 100 && proc_fds(monitor_pid) != fds0; i++)
		usleep(10000);
	assert_int_equal(proc_fds(monitor_pid), fds0);
	close(conn); close(c); close(u[0]); close(u[1]);
}

/* NOTIFY: the monitor words what the worker reports and sends it to
 * systemd as itself (the unit's main pid); a worker that floods gets
 * every request answered but at most MONITOR_NOTIFY_BURST (4) messages
 * a second through. */
static void
test_notify_relayed(void **state)
{
	char buf[256];
	pid_t from;
	struct mon_msg m = { .type = MON_NOTIFY }, a;

	m.u.notify.state = MON_NOTIFY_READY;
	m.u.notify.sessions = 2;
	m.u.notify.ctrls = 1;
	a = ask(&m);
	assert_int_equal(a.type, MON_RESULT);
	assert_int_equal(a.u.result.status, MON_OK);
	assert_int_equal(notify_recv_from(notify_sock, buf, sizeof(buf), 1000, &from), 0);
	assert_string_equal(buf, "READY=1\nSTATUS=2 sessions active, 1 control "
	    "connection");
	assert_int_equal(from, monitor_pid);

	m.u.notify.state = MON_NOTIFY_STATUS;
	for (int i = 0; i < 20; i++) {
		m.u.notify.sessions = (uint32_t)i;
		a = ask(&m);
		assert_int_equal(a.type, MON_RESULT);
		assert_int_equal(a.u.result.status, MON_OK);
	}
	int got = 0;
	while (notify_recv_from(notify_sock, buf, sizeof(buf), 200, &from) == 0) {
		assert_int_equal(from, monitor_pid);
		assert_int_equal(strncmp(buf, "STATUS=", 7), 0);
		got++;
	}
	/* The READY counted in the same second; 20 asked in well under it */
	assert_true(got >= 1 && got <= 3);
}

/* A pppd started: its Call ID and its address are its own until it is
 * reaped; a hang-up names a call, never a pid; its exit comes back. */
static void
test_call_lifecycle(void **state)
{
	int c, u[2], conn;
	struct mon_msg a = started(0x1234, "198.19.0.10", &conn, &c, u);
	struct mon_msg m = call_start(0x1234, "198.19.0.10", MON_CALL_REPORTS,
	    conn, u[1], u[0]);   /* the same start again, below */
	assert_int_equal(a.u.call_started.call_id, 0x1234);
	assert_int_equal(a.nfds, 1);   /* the pty master */
	pid_t pppd = (pid_t)a.u.call_started.pid;
	assert_int_equal(kill(pppd, 0), 0);
	/* Held, as the worker holds it: the last close of a pty master
	 * hangs its session up (SIGHUP). */
	int pty = a.fds[0];

	start_refused(&m, "the Call ID is a live call's");
	m.u.call_start.call_id = 0x1235;
	start_refused(&m, "the remote address is not the pool's, or is taken");

	struct mon_msg h = { .type = MON_CALL_HANGUP };
	h.u.call_hangup.call_id = 0x4321;
	h.u.call_hangup.how = MON_HANGUP_KILL;
	a = ask(&h);
	assert_int_equal(a.type, MON_RESULT);
	assert_int_equal(a.u.result.status, MON_ERR_REFUSED);
	/* not another call's: no exit follows */
	struct pollfd pf = { sock, POLLIN, 0 };
	assert_int_equal(poll(&pf, 1, 300), 0);

	h.u.call_hangup.call_id = 0x1234;
	a = ask(&h);
	assert_int_equal(a.type, MON_RESULT);
	assert_int_equal(a.u.result.status, MON_OK);
	const char *why = NULL;
	assert_int_equal(mon_recv(sock, &a, &why), 1);
	assert_int_equal(a.type, MON_CHILD_EXIT);
	assert_int_equal(a.u.child_exit.call_id, 0x1234);
	assert_int_equal((pid_t)a.u.child_exit.pid, pppd);
	assert_true(WIFSIGNALED(a.u.child_exit.status));
	assert_int_equal(WTERMSIG(a.u.child_exit.status), SIGKILL);
	close(pty);

	/* reaped: its ID and its address are free again */
	m.u.call_start.call_id = 0x1234;
	a = ask(&m);
	assert_int_equal(a.type, MON_CALL_STARTED);
	mon_close_fds(&a);
	close(conn); close(c); close(u[0]); close(u[1]);
}

/* Records the worker must not send, and bytes that are no record. */
static void
test_bad_records_refused(void **state)
{
	struct mon_msg m = { .type = MON_CHILD_EXIT };
	m.u.child_exit.call_id = 1;
	m.u.child_exit.pid = 1;
	struct mon_msg a = ask(&m);
	assert_int_equal(a.type, MON_RESULT);
	assert_int_equal(a.u.result.status, MON_ERR_REFUSED);
	assert_string_equal(a.u.result.text, "not a request");

	assert_int_equal(send(sock, "garbage", 7, 0), 7);
	char want[128];
	snprintf(want, sizeof(want), "record from the worker (pid %d) refused: "
	    "shorter than a header", (int)worker_pid);
	for (int i = 0; i < 100 && !log_contains(want); i++)
		usleep(10000);
	assert_true(log_contains(want));
	/* still serving */
	m = (struct mon_msg){ .type = MON_HELLO };
	a = ask(&m);
	assert_int_equal(a.type, MON_WELCOME);
}

/* CALL_IFACE and CALL_RATE: the MSS clamping of an interface and a rate
 * on it only for a live call of the worker's, and only on a ppp interface
 * (the worker must not have the SYNs on the server's other interfaces
 * rewritten, nor their traffic limited); refused and logged. */
/* `m` (about call `call_id`) refused with `reason`, and logged unless
 * the call is gone (a pppd reaped as the worker asked is no attack). */
static void
iface_request_refused(struct mon_msg *m, uint16_t call_id, const char *reason)
{
	char want[256];
	struct mon_msg a = ask(m);
	assert_int_equal(a.type, MON_RESULT);
	assert_int_equal(a.u.result.status, MON_ERR_REFUSED);
	assert_string_equal(a.u.result.text, reason);
	snprintf(want, sizeof(want), "%s from the worker (pid %d) for call %u "
	    "refused: %s", mon_type_name(m->type), (int)worker_pid, call_id,
	    reason);
	int gone = strcmp(reason, "no such call") == 0;
	for (int i = 0; i < 100 && !gone && !log_contains(want); i++)
		usleep(10000);
	assert_int_equal(log_contains(want), !gone);
}

static void
iface_refused(uint16_t call_id, const char *ifname, const char *reason)
{
	struct mon_msg m = { .type = MON_CALL_IFACE };
	m.u.call_iface.call_id = call_id;
	snprintf(m.u.call_iface.ifname, sizeof(m.u.call_iface.ifname), "%s",
	    ifname);
	iface_request_refused(&m, call_id, reason);
}

static void
rate_refused_at(uint16_t call_id, const char *ifname, uint64_t down,
    const char *reason)
{
	struct mon_msg m = { .type = MON_CALL_RATE };
	m.u.call_rate.call_id = call_id;
	m.u.call_rate.down = down;
	m.u.call_rate.up = 512000;
	snprintf(m.u.call_rate.ifname, sizeof(m.u.call_rate.ifname), "%s",
	    ifname);
	iface_request_refused(&m, call_id, reason);
}

static void
rate_refused(uint16_t call_id, const char *ifname, const char *reason)
{
	rate_refused_at(call_id, ifname, 2000000, reason);
}

/* A tun device of type ARPHRD_PPP named `name`, up; closed, it goes. */
static int
fake_ppp(const char *name)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	assert_int_equal(ioctl(fd, TUNSETIFF, &ifr), 0);
	assert_int_equal(ioctl(fd, TUNSETLINK, ARPHRD_PPP), 0);
	return fd;
}

static void
test_iface_refused(void **state)
{
	int c, u[2], conn;
	struct mon_msg a = started(0x2222, "198.19.0.11", &conn, &c, u);
	iface_refused(0x7777, "ppp0", "no such call");
	iface_refused(0x2222, "lo", "not a ppp interface");
	iface_refused(0x2222, "nosuch9", "not a ppp interface");
	iface_refused(0x2222, "ppp0 x", "not a ppp interface");
	/* CALL_RATE: the same, for the user's rate */
	rate_refused(0x7777, "ppp0", "no such call");
	rate_refused(0x2222, "lo", "not a ppp interface");
	/* A ppp interface that is not the call's pppd's unit (a tun typed
	 * ARPHRD_PPP stands in for a PPPoE uplink or another session's) */
	int tun = fake_ppp("ppp77");
	iface_refused(0x2222, "ppp77", "not the call's ppp interface");
	rate_refused(0x2222, "ppp77", "not the call's ppp interface");
	/* below the shaper's floor (8 kbit/s), or above its ceiling */
	rate_refused_at(0x2222, "ppp77", 100, "a rate out of bounds");
	rate_refused_at(0x2222, "ppp77", 20000000000ULL, "a rate out of bounds");
	close(tun);
	close(a.fds[0]);
	close(conn); close(c); close(u[0]); close(u[1]);
}

/* CALL_ROUTE6: a route is a claim on traffic. Only a /64 inside
 * ipv6-prefix-pool or ipv6-radius-prefixes, only to the call's own ppp
 * interface; refused and logged, and no route made. */
static void
route6_refused(uint16_t call_id, const char *prefix, const char *ifname,
    const char *reason)
{
	struct mon_msg m = { .type = MON_CALL_ROUTE6 };
	m.u.call_route6.call_id = call_id;
	m.u.call_route6.op = MON_ROUTE6_ADD;
	assert_int_equal(inet_pton(AF_INET6, prefix, m.u.call_route6.prefix), 1);
	snprintf(m.u.call_route6.ifname, sizeof(m.u.call_route6.ifname), "%s",
	    ifname);
	iface_request_refused(&m, call_id, reason);
}

static int
routed(const char *prefix)
{
	char cmd[128];
	/* no `ip`: no answer either way, not a "not routed" */
	assert_int_equal(system("ip -6 route show >/dev/null 2>&1"), 0);
	snprintf(cmd, sizeof(cmd), "ip -6 route show %s/64 | grep -q .", prefix);
	return system(cmd) == 0;
}

static void
test_route6_refused(void **state)
{
	static const char *const outside = "2001:db8:300:8::",
	    *radius = "2001:db8:200:5::", *pool = "2001:db8:100:1::";
	int c, u[2], conn;
	struct mon_msg a = started(0x2222, "198.19.0.11", &conn, &c, u);
	int tun = fake_ppp("ppp77");

	route6_refused(0x2222, outside, "ppp77",
	    "a /64 in neither ipv6-prefix-pool nor ipv6-radius-prefixes");
	route6_refused(0x2222, "2001:db8:101::", "ppp77",
	    "a /64 in neither ipv6-prefix-pool nor ipv6-radius-prefixes");
	route6_refused(0x2222, "fe80::", "ppp77",
	    "a multicast, link-local or loopback /64");
	route6_refused(0x7777, pool, "ppp0", "no such call");
	route6_refused(0x2222, pool, "lo", "not a ppp interface");
	route6_refused(0x2222, radius, "ppp77", "not the call's ppp interface");
	route6_refused(0x2222, "2001:db8:300:7::", "ppp77",
	    "not the call's ppp interface");
	assert_false(routed(outside));
	assert_false(routed(radius));
	assert_false(routed(pool));
	/* A delete names only the call: one of another worker's is no
	 * call of ours */
	struct mon_msg m = { .type = MON_CALL_ROUTE6 };
	m.u.call_route6.call_id = 0x7777;
	m.u.call_route6.op = MON_ROUTE6_DEL;
	iface_request_refused(&m, 0x7777, "no such call");
	close(tun);
	close(a.fds[0]);
	close(conn); close(c); close(u[0]); close(u[1]);
}

/* CALL_ADDR: RADIUS' Framed-IP-Address moved a call to another address
 * of the pool: the monitor's reservation moves with it (the address left
 * can start a call, the one taken cannot); one not the pool's, or another
 * call's, is refused and logged. */
static struct mon_msg
call_addr(uint16_t id, const char *addr)
{
	struct mon_msg m = { .type = MON_CALL_ADDR };
	m.u.call_addr.call_id = id;
	m.u.call_addr.remote_ip = ip(addr);
	return m;
}

static void
test_address_moves(void **state)
{
	int c1, c2, u1[2], u2[2], conn1, conn2;
	struct mon_msg a1 = started(0x2222, "198.19.0.10", &conn1, &c1, u1);

	struct mon_msg m = call_addr(0x2222, "198.19.0.99");
	iface_request_refused(&m, 0x2222, "the address is not the pool's, or is taken");
	m = call_addr(0x7777, "198.19.0.11");
	iface_request_refused(&m, 0x7777, "no such call");
	m = call_addr(0x2222, "198.19.0.11");
	struct mon_msg a = ask(&m);
	assert_int_equal(a.type, MON_RESULT);
	assert_int_equal(a.u.result.status, MON_OK);
	/* .11 is the call's now: a start there is refused; .10 is free */
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, u2), 0);
	conn2 = conn_1723(&c2);
	m = call_start(0x3333, "198.19.0.11", MON_CALL_REPORTS, conn2, u2[1],
	    u2[0]);
	m.u.call_start.local_ip = ip("198.19.0.1");
	start_refused(&m, "the remote address is not the pool's, or is taken");
	m = call_start(0x3333, "198.19.0.10", MON_CALL_REPORTS, conn2, u2[1],
	    u2[0]);
	struct mon_msg a2 = ask(&m);
	assert_int_equal(a2.type, MON_CALL_STARTED);
	/* and the first call cannot take the second's */
	m = call_addr(0x2222, "198.19.0.10");
	iface_request_refused(&m, 0x2222, "the address is not the pool's, or is taken");
	/* the ptys last: closing one hangs its pppd up (SIGHUP), whose
	 * CHILD_EXIT would come between a request and its answer */
	close(a2.fds[0]);
	close(a1.fds[0]);
	close(conn1); close(c1); close(u1[0]); close(u1[1]);
	close(conn2); close(c2); close(u2[0]); close(u2[1]);
}

/* Does process `pid` have a descriptor open on the same file as our `fd`
 * (a socket or a pty: its /proc link names the inode)? */
static int
holds_same(pid_t pid, int fd)
{
	char p[64], want[64] = "", path[320];

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	assert_true(readlink(p, want, sizeof(want) - 1) > 0);
	return proc_fd_by_link(pid, want, 1, path, sizeof(path));
}

/* The stand-in pppd `pid` has run its script (a deaf one ignores SIGTERM
 * from then on): it is `sleep` now. */
static void
stand_in_ready(pid_t pid)
{
	char comm[32];
	proc_comm(pid, comm, sizeof(comm));
	for (int i = 0; i < 200 && strcmp(comm, "sleep") != 0; i++) {
		usleep(10000);
		proc_comm(pid, comm, sizeof(comm));
	}
	assert_string_equal(comm, "sleep");
}

/* Is a byte, or the end of the stream, waiting on `fd` within `ms`? */
static int
readable(int fd, int ms)
{
	struct pollfd pf = { fd, POLLIN | POLLRDHUP, 0 };
	return poll(&pf, 1, ms) == 1;
}

/* What a session lives on is held by the monitor too, from its start to
 * its reap: the control connection, the worker's end of the report
 * channel and the pty master. The worker's copies gone, the client's TCP
 * connection stays up and pppd keeps its line (a worker can die under a
 * session); a hang-up that cuts the line reaches pppd through the
 * monitor's copy. (The stand-in pppd ignores SIGTERM: only the hangup
 * ends it.) */
static void
test_session_held_by_monitor(void **state)
{
	int c, u[2], conn;
	struct mon_msg hello = { .type = MON_HELLO };
	hello = ask(&hello);
	int fds0 = proc_fds(monitor_pid);
	struct mon_msg a = started(0x2222, "198.19.0.11", &conn, &c, u);
	pid_t pppd = (pid_t)a.u.call_started.pid;
	int pty = a.fds[0];
	stand_in_ready(pppd);

	assert_true(holds_same(monitor_pid, conn));
	assert_true(holds_same(monitor_pid, u[0]));   /* the worker's end */
	assert_true(holds_same(monitor_pid, pty));
	assert_int_equal(proc_fds(monitor_pid), fds0 + 3);

	/* the worker's copies go: nothing ends */
	close(conn);
	close(pty);
	close(u[0]);
	assert_false(readable(c, 300));
	assert_int_equal(kill(pppd, 0), 0);

	/* a clean hang-up (SIGTERM) keeps the line: this pppd ignores it */
	struct mon_msg h = { .type = MON_CALL_HANGUP };
	h.u.call_hangup.call_id = 0x2222;
	h.u.call_hangup.how = MON_HANGUP_CLEAN;
	a = ask(&h);
	assert_int_equal(a.u.result.status, MON_OK);
	struct pollfd pf = { sock, POLLIN, 0 };
	assert_int_equal(poll(&pf, 1, 300), 0);   /* no exit */

	/* cut: the monitor's copy goes, pppd's line hangs up */
	h.u.call_hangup.how = MON_HANGUP_CUT;
	a = ask(&h);
	assert_int_equal(a.u.result.status, MON_OK);
	const char *why = NULL;
	assert_int_equal(mon_recv(sock, &a, &why), 1);
	assert_int_equal(a.type, MON_CHILD_EXIT);
	assert_int_equal((pid_t)a.u.child_exit.pid, pppd);
	assert_true(WIFSIGNALED(a.u.child_exit.status));
	assert_int_equal(WTERMSIG(a.u.child_exit.status), SIGHUP);

	/* reaped: every copy closed, the client hears its connection end */
	for (int i = 0; i < 100 && proc_fds(monitor_pid) != fds0; i++)
		usleep(10000);
	assert_int_equal(proc_fds(monitor_pid), fds0);
	assert_true(readable(c, 1000));
	char b;
	assert_int_equal(read(c, &b, 1), 0);
	close(c); close(u[1]);
}

/* The worker killed: what it left of the sessions is ended, the monitor
 * exits 1 with a line that says why. The line hangs up at once (the
 * monitor's copies go): this stand-in pppd, deaf to SIGTERM, ends then,
 * not at the grace's SIGKILL 5 s later. */
static void
test_worker_killed_ends_sessions(void **state)
{
	int c, u[2], st, conn;
	struct mon_msg a = started(0x2222, "198.19.0.11", &conn, &c, u);
	pid_t pppd = (pid_t)a.u.call_started.pid;
	int pty = a.fds[0];
	stand_in_ready(pppd);
	/* its copies go with it */
	close(pty);
	close(conn);
	close(u[0]);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kill(worker_pid, SIGKILL);
	assert_int_equal(waitpid(monitor_pid, &st, 0), monitor_pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 3);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	assert_true(log_contains("was killed by signal 9: ending 1 sessions"));
	assert_int_equal(kill(pppd, 0), -1);   /* ended and reaped */
	/* the monitor's copy of the connection went too: the client hears
	 * the end */
	assert_true(readable(c, 1000));
	char b;
	assert_int_equal(read(c, &b, 1), 0);
	monitor_pid = worker_pid = -1;
	close(c); close(u[1]);
}

int
main(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "test_privsep needs root (a network namespace)\n");
		return 1;
	}
	if (unshare(CLONE_NEWNET) < 0) {
		perror("unshare(CLONE_NEWNET)");
		return 1;
	}
	lo_up();
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_port = htons(PPTP_PORT) };
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (bind(listener, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(listener, 8) < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hello, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_descriptors_refused,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_call_lifecycle, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_kernel_channel_is_the_monitors,
		    setup_kernel, teardown),
		cmocka_unit_test_setup_teardown(test_bad_records_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_iface_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_address_moves, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_route6_refused, setup_ipv6,
		    teardown),
		cmocka_unit_test_setup_teardown(test_notify_relayed, setup_notify,
		    teardown),
		cmocka_unit_test_setup_teardown(test_session_held_by_monitor,
		    setup_deaf, teardown),
		cmocka_unit_test_setup_teardown(test_worker_killed_ends_sessions,
		    setup_deaf, teardown),
		cmocka_unit_test_setup_teardown(test_reload_files, setup,
		    teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		return 1;
	return rc;
}
