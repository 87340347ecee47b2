/* bench_gre -F: the data path against the pty floor, side by side with
 * Poptop's.
 *
 * What a deployment has: a data path process between pppd's pty and the
 * raw GRE socket. Here both ends are played by stand-ins so that only the
 * data path's own CPU is measured:
 *
 *   "pppd"  a separate process on the slave side of a real pty (openpty),
 *           in raw mode as pppd puts it, writing and reading HDLC frames
 *           one write() per frame as pppd's async line discipline does.
 *           It is this very binary, re-executed with BENCH_PPPD_SHM set;
 *           counters live in a shared mapping.
 *   "peer"  a PPTP client on another loopback address: a raw GRE socket
 *           in this process (and, for Poptop, a real control connection:
 *           SCCRQ, OCRQ).
 *
 * The data paths:
 *   engine  our GRE engine, in a thread of this process with the daemon's
 *           kind of event loop; its CPU is that thread's
 *           (CLOCK_THREAD_CPUTIME_ID via pthread_getcpuclockid).
 *   poptop  Poptop's pptpctrl (/usr/sbin/pptpctrl), run the way pptpd runs
 *           it (control connection on stdin), which opens the pty, starts
 *           our "pppd" as its ppp binary and a connected raw GRE socket;
 *           its CPU is its process's (clock_getcpuclockid), pppd's not
 *           included.
 *
 * Each run starts with an LCP exchange through the data path: pppd sends
 * a Configure-Request with ACCM 0 (what pppd asks by default), the peer
 * acks it, pppd sends an IPCP packet (it does only once LCP is open). A
 * data path that follows LCP may then stop escaping control characters
 * toward pppd; one that does not escapes every control character. Data
 * frames are random octets, like MPPE-encrypted traffic (1 in 8 is a
 * control character), in 1400-byte PPP frames, at a fixed rate (both data
 * paths must be lossless for CPU per frame to compare).
 *
 * Output: one line per run ("run" lines, machine-readable), then the
 * median and spread (min..max) per data path and direction. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "bench_floor.h"
#include "gre.h"
#include "hdlc.h"
#include "packet.h"

#define F_ENG_IP     "127.88.0.1"
#define F_PEER_IP    "127.88.0.2"
#define F_LOCAL_ID   0x2001
#define F_PEER_ID    0x3001
#define F_FRAME      1400
#define F_PEER_BATCH 8
#define F_IDLE_MS    300
#define F_POPTOP     "/usr/sbin/pptpctrl"
#define F_CTRL_PORT  17230
#define F_MAX_RUNS   64

/* PPP and LCP values the stand-ins use */
#define PPP_LCP        0xc021
#define PPP_IPCP       0x8021
#define PPP_COMP       0x00fd  /* MPPE/CCP compressed datagram */
#define LCP_CONFREQ    1
#define LCP_CONFACK    2
#define LCP_OPT_ACCM   2

/* PPTP control messages (RFC 2637 2.1, 2.7, 2.8) */
#define PPTP_MAGIC     0x1a2b3c4d
#define PPTP_SCCRQ     1
#define PPTP_SCCRQ_LEN 156
#define PPTP_SCCRP_LEN 156
#define PPTP_OCRQ      7
#define PPTP_OCRQ_LEN  168
#define PPTP_OCRP_LEN  32

enum phase { PH_WAIT, PH_HANDSHAKE, PH_WRITE, PH_READ, PH_QUIT };
enum pstate { ST_NONE, ST_READY, ST_SHAKEN, ST_FAILED };

/* Shared with the "pppd" process. */
struct shm {
	atomic_int phase, state;
	uint64_t count, rate;
	atomic_uint_fast64_t sent, received;
};

static struct {
	const char *impl;       /* "engine" or "poptop" */
	struct shm *shm;
	char shm_path[64];
	pid_t pppd, ctrl;       /* stand-in pppd; pptpctrl */
	int ctrl_sock;          /* peer's end of the control connection */
	int peer;               /* peer's raw GRE socket */
	uint16_t gre_key;       /* the data path's Call ID */
	uint32_t peer_seq;
	/* engine */
	struct gre_engine *e;
	struct gre_call *c;
	int pty, efd;
	pthread_t eng_thread;
	atomic_int stop_engine, stop_io;
	atomic_uint_fast64_t peer_sent, peer_received;
	uint64_t rate, count;
	clockid_t cpu;
} F;

static uint8_t payload[F_FRAME];

static uint64_t ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ms(void)
{
	return ns(CLOCK_MONOTONIC) / 1000000;
}

static void fdie(const char *what)
{
	perror(what);
	exit(1);
}

static void sleep_until(uint64_t due_ns)
{
	struct timespec ts = { (time_t)(due_ns / 1000000000ull),
	    (long)(due_ns % 1000000000ull) };

	if (ns(CLOCK_MONOTONIC) < due_ns)
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* Same pseudo-random payload in every run and process. */
static void payload_init(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < sizeof(payload); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		payload[i] = (uint8_t)x;
	}
	payload[0] = 0xff;
	payload[1] = 0x03;
	payload[2] = PPP_COMP >> 8;
	payload[3] = PPP_COMP & 0xff;
}

/* An LCP Configure-Request or -Ack with one option, ACCM 0. */
static size_t lcp_frame(uint8_t *p, int code, uint8_t id)
{
	static const uint8_t tmpl[] = {
		0xff, 0x03, PPP_LCP >> 8, PPP_LCP & 0xff,
		0, 0, 0, 10, LCP_OPT_ACCM, 6, 0, 0, 0, 0,
	};

	memcpy(p, tmpl, sizeof(tmpl));
	p[4] = (uint8_t)code;
	p[5] = id;
	return sizeof(tmpl);
}

static int is_lcp(const uint8_t *f, size_t len, int code)
{
	return len >= 8 && f[0] == 0xff && f[1] == 0x03 &&
	    f[2] == (PPP_LCP >> 8) && f[3] == (PPP_LCP & 0xff) && f[4] == code;
}

/* ---- the stand-in pppd (separate process, pty slave on stdin/out) ---- */

struct pppd_rx {
	struct hdlc_decoder d;
	int got_ack;
	uint64_t frames;
};

static void pppd_frame(void *arg, const uint8_t *f, size_t len)
{
	struct pppd_rx *rx = arg;

	if (is_lcp(f, len, LCP_CONFACK))
		rx->got_ack = 1;
	else if (len == F_FRAME && memcmp(f + 4, payload + 4, len - 4) == 0)
		rx->frames++;
}

static int pppd_write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			poll(&pfd, 1, 20);
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int pppd_send(int fd, const uint8_t *frame, size_t len, uint32_t accm)
{
	uint8_t enc[HDLC_ENCODED_MAX(F_FRAME)];
	size_t n = hdlc_encode(frame, len, accm, enc, sizeof(enc));

	return pppd_write_all(fd, enc, n);
}

static void pppd_read_some(int fd, struct pppd_rx *rx, int timeout_ms)
{
	static uint8_t buf[64 * 1024];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		hdlc_decode(&rx->d, buf, (size_t)n, pppd_frame, rx);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		exit(0);        /* the data path closed the pty */
}

static void pppd_handshake(struct shm *s, int in, int out)
{
	static const uint8_t ipcp[] = { 0xff, 0x03, PPP_IPCP >> 8,
	    PPP_IPCP & 0xff, LCP_CONFREQ, 1, 0, 4 };
	uint8_t f[32];
	struct pppd_rx rx;
	uint64_t t0 = mono_ms();

	memset(&rx, 0, sizeof(rx));
	hdlc_decoder_init(&rx.d);
	/* pppd's first LCP goes out with every control character escaped */
	if (pppd_send(out, f, lcp_frame(f, LCP_CONFREQ, 1), 0xffffffff) < 0)
		exit(1);
	while (!rx.got_ack && mono_ms() - t0 < 3000)
		pppd_read_some(in, &rx, 20);
	if (!rx.got_ack) {
		atomic_store(&s->state, ST_FAILED);
		return;
	}
	pppd_send(out, ipcp, sizeof(ipcp), 0);
	atomic_store(&s->state, ST_SHAKEN);
}

/* One write() per frame, paced: as pppd's line discipline pushes frames. */
static void pppd_write(struct shm *s, int out)
{
	uint8_t enc[HDLC_ENCODED_MAX(F_FRAME)];
	size_t n = hdlc_encode(payload, F_FRAME, 0, enc, sizeof(enc));
	uint64_t t0 = ns(CLOCK_MONOTONIC);

	for (uint64_t done = 0; done < s->count; done++) {
		if (s->rate && done % F_PEER_BATCH == 0)
			sleep_until(t0 + done * 1000000000ull / s->rate);
		if (pppd_write_all(out, enc, n) < 0)
			exit(1);
		atomic_store(&s->sent, done + 1);
	}
}

static void pppd_read(struct shm *s, int in)
{
	struct pppd_rx rx;

	memset(&rx, 0, sizeof(rx));
	hdlc_decoder_init(&rx.d);
	while (atomic_load(&s->phase) == PH_READ) {
		pppd_read_some(in, &rx, 20);
		atomic_store(&s->received, rx.frames);
	}
}

int floor_pppd_main(const char *shm_path)
{
	struct termios t;
	struct shm *s;
	int fd = open(shm_path, O_RDWR);

	if (fd < 0 || (s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
	    MAP_SHARED, fd, 0)) == MAP_FAILED)
		return 1;
	payload_init();
	if (tcgetattr(0, &t) == 0) {
		cfmakeraw(&t);
		tcsetattr(0, TCSANOW, &t);
	}
	fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
	fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK);
	atomic_store(&s->state, ST_READY);
	for (;;) {
		switch (atomic_load(&s->phase)) {
		case PH_HANDSHAKE:
			pppd_handshake(s, 0, 1);
			while (atomic_load(&s->phase) == PH_HANDSHAKE)
				usleep(1000);
			break;
		case PH_WRITE:
			pppd_write(s, 1);
			while (atomic_load(&s->phase) == PH_WRITE)
				usleep(1000);
			break;
		case PH_READ:
			pppd_read(s, 0);
			break;
		case PH_QUIT:
			return 0;
		default:
			usleep(1000);
		}
	}
}

/* ---- shared setup ---- */

static void shm_open_file(void)
{
	int fd;

	snprintf(F.shm_path, sizeof(F.shm_path), "/dev/shm/bench_floor.%d",
	    (int)getpid());
	fd = open(F.shm_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(struct shm)) < 0)
		fdie("shm file");
	F.shm = mmap(NULL, sizeof(struct shm), PROT_READ | PROT_WRITE,
	    MAP_SHARED, fd, 0);
	if (F.shm == MAP_FAILED)
		fdie("mmap");
	close(fd);
	setenv("BENCH_PPPD_SHM", F.shm_path, 1);
}

static void wait_state(int want, int ms)
{
	for (int i = 0; i < ms && atomic_load(&F.shm->state) != want; i++) {
		if (atomic_load(&F.shm->state) == ST_FAILED)
			break;
		usleep(1000);
	}
}

static int raw_bound(const char *ip)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_RAW, IPPROTO_GRE), sz = 8 << 20;

	if (fd < 0)
		fdie("raw GRE socket (run as root)");
	inet_pton(AF_INET, ip, &sa.sin_addr);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		fdie("bind");
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz));
	return fd;
}

/* ---- the engine as the data path ---- */

static void eng_want_write(void *arg, int on)
{
	struct epoll_event ev = { .events = EPOLLIN | (on ? EPOLLOUT : 0) };

	(void)arg;
	ev.data.fd = F.pty;
	epoll_ctl(F.efd, EPOLL_CTL_MOD, F.pty, &ev);
}

static void eng_closed(void *arg, int err)
{
	(void)arg;
	(void)err;
	epoll_ctl(F.efd, EPOLL_CTL_DEL, F.pty, NULL);
}

static void eng_log(void *arg, int prio, const char *msg)
{
	(void)arg;
	if (prio <= 4)
		fprintf(stderr, "engine: %s\n", msg);
}

static const struct gre_ops eng_ops = { eng_log, eng_want_write, eng_closed };

static void *eng_main(void *arg)
{
	struct epoll_event ev[8];

	(void)arg;
	pthread_setname_np(pthread_self(), "engine");
	while (!atomic_load(&F.stop_engine)) {
		uint64_t dl = gre_engine_next_deadline(F.e), t = mono_ms();
		int timeout = 10, n;

		if (dl && dl <= t)
			timeout = 0;
		else if (dl && dl - t < 10)
			timeout = (int)(dl - t);
		n = epoll_wait(F.efd, ev, 8, timeout);
		t = mono_ms();
		for (int i = 0; i < n; i++) {
			if (ev[i].data.fd == gre_engine_fd(F.e)) {
				gre_engine_input(F.e, t);
				continue;
			}
			if (ev[i].events & EPOLLOUT)
				gre_call_pty_output(F.c);
			if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				gre_call_pty_input(F.c, t);
		}
		dl = gre_engine_next_deadline(F.e);
		if (dl && dl <= t)
			gre_engine_timers(F.e, t);
	}
	return NULL;
}

static pid_t spawn_pppd(int slave, const char *self)
{
	pid_t pid = fork();

	if (pid < 0)
		fdie("fork");
	if (pid == 0) {
		dup2(slave, 0);
		dup2(slave, 1);
		if (slave > 1)
			close(slave);
		execl(self, "pppd", (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void engine_setup(const char *self)
{
	struct in_addr eng, peer;
	struct epoll_event ev = { .events = EPOLLIN };
	int slave;

	inet_pton(AF_INET, F_ENG_IP, &eng);
	inet_pton(AF_INET, F_PEER_IP, &peer);
	if (openpty(&F.pty, &slave, NULL, NULL, NULL) < 0)
		fdie("openpty");
	F.pppd = spawn_pppd(slave, self);
	close(slave);
	if (!(F.e = gre_engine_new(eng, &eng_ops, NULL)))
		fdie("gre_engine_new");
	if (!(F.c = gre_call_new(F.e, F_LOCAL_ID, F_PEER_ID, peer, F.pty, NULL)))
		fdie("gre_call_new");
	/* no Set-Link-Info: what LCP says is all there is to go by */
	F.gre_key = F_LOCAL_ID;
	F.efd = epoll_create1(0);
	ev.data.fd = gre_engine_fd(F.e);
	epoll_ctl(F.efd, EPOLL_CTL_ADD, ev.data.fd, &ev);
	ev.data.fd = F.pty;
	epoll_ctl(F.efd, EPOLL_CTL_ADD, F.pty, &ev);
	atomic_store(&F.stop_engine, 0);
	if (pthread_create(&F.eng_thread, NULL, eng_main, NULL))
		fdie("pthread_create");
	pthread_getcpuclockid(F.eng_thread, &F.cpu);
}

static void engine_teardown(void)
{
	atomic_store(&F.stop_engine, 1);
	pthread_join(F.eng_thread, NULL);
	gre_call_free(F.c);
	gre_engine_free(F.e);
	close(F.pty);
	close(F.efd);
}

/* ---- Poptop's pptpctrl as the data path ---- */

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)); put16(p + 2, (uint16_t)v); }

static void ctrl_header(uint8_t *p, uint16_t len, uint16_t type)
{
	memset(p, 0, len);
	put16(p, len);
	put16(p + 2, 1);
	put32(p + 4, PPTP_MAGIC);
	put16(p + 8, type);
}

static int read_full(int fd, uint8_t *p, size_t len)
{
	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 3000) <= 0)
			return -1;
		if ((n = read(fd, p, len)) <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* SCCRQ/SCCRP, OCRQ/OCRP: the call is up and pptpctrl has started pppd.
 * The OCRP names pptpctrl's Call ID, the key of our GRE toward it. */
static int ctrl_dial(int s)
{
	uint8_t m[PPTP_OCRQ_LEN], r[PPTP_SCCRP_LEN];

	ctrl_header(m, PPTP_SCCRQ_LEN, PPTP_SCCRQ);
	put16(m + 12, 0x0100);
	put32(m + 16, 1);
	put32(m + 20, 1);
	put16(m + 26, 1);
	if (write(s, m, PPTP_SCCRQ_LEN) != PPTP_SCCRQ_LEN ||
	    read_full(s, r, PPTP_SCCRP_LEN) < 0)
		return -1;
	ctrl_header(m, PPTP_OCRQ_LEN, PPTP_OCRQ);
	put16(m + 12, F_PEER_ID);
	put16(m + 14, 1);
	put32(m + 16, 300);
	put32(m + 20, 100000000);
	put32(m + 24, 3);
	put32(m + 28, 3);
	put16(m + 32, 64);
	if (write(s, m, PPTP_OCRQ_LEN) != PPTP_OCRQ_LEN ||
	    read_full(s, r, PPTP_OCRP_LEN) < 0)
		return -1;
	F.gre_key = (uint16_t)(r[12] << 8 | r[13]);
	return 0;
}

static void poptop_setup(const char *self)
{
	struct sockaddr_in la = { .sin_family = AF_INET,
	    .sin_port = htons(F_CTRL_PORT) };
	struct sockaddr_in pa = { .sin_family = AF_INET };
	int one = 1, l, a;

	inet_pton(AF_INET, F_ENG_IP, &la.sin_addr);
	inet_pton(AF_INET, F_PEER_IP, &pa.sin_addr);
	if ((l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		fdie("socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&la, sizeof(la)) < 0 || listen(l, 1) < 0)
		fdie("listen");
	if ((F.ctrl_sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		fdie("socket");
	if (bind(F.ctrl_sock, (struct sockaddr *)&pa, sizeof(pa)) < 0 ||
	    connect(F.ctrl_sock, (struct sockaddr *)&la, sizeof(la)) < 0)
		fdie("connect");
	if ((a = accept(l, NULL, NULL)) < 0)
		fdie("accept");
	close(l);
	if ((F.ctrl = fork()) < 0)
		fdie("fork");
	if (F.ctrl == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(a, 0);
		dup2(a, 1);
		dup2(null, 2);
		/* debug 0, noipparam 1, no options file, speed, local or
		 * remote address; Call ID, ppp binary, no wtmp */
		execl(F_POPTOP, "pptpctrl", "0", "1", "0", "0", "0", "0",
		    "8193", self, "0", (char *)NULL);
		_exit(127);
	}
	close(a);
	if (ctrl_dial(F.ctrl_sock) < 0) {
		fprintf(stderr, "poptop: control connection failed\n");
		exit(1);
	}
	if (clock_getcpuclockid(F.ctrl, &F.cpu))
		fdie("clock_getcpuclockid");
}

static void poptop_teardown(void)
{
	close(F.ctrl_sock);
	kill(F.ctrl, SIGTERM);
	waitpid(F.ctrl, NULL, 0);
}

/* ---- the peer's GRE ---- */

static void peer_send(const uint8_t *frame, size_t len)
{
	uint8_t pkt[GRE_HDR_MAX + F_FRAME];
	struct sockaddr_in to = { .sin_family = AF_INET };
	size_t h = gre_packet_build(pkt, F.gre_key, (uint16_t)len, 1,
	    F.peer_seq++, 0, 0);

	inet_pton(AF_INET, F_ENG_IP, &to.sin_addr);
	memcpy(pkt + h, frame, len);
	if (sendto(F.peer, pkt, h + len, 0, (struct sockaddr *)&to,
	    sizeof(to)) < 0)
		fdie("sendto");
}

/* Wait for a GRE data packet whose payload passes `match`. */
static int peer_expect(int (*match)(const uint8_t *, size_t))
{
	uint8_t buf[4096];
	uint64_t t0 = mono_ms();

	while (mono_ms() - t0 < 3000) {
		struct pollfd pfd = { .fd = F.peer, .events = POLLIN };
		struct gre_packet p;
		ssize_t n;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		n = recv(F.peer, buf, sizeof(buf), 0);
		if (n > 0 && gre_packet_parse_ip(buf, (size_t)n, &p) ==
		    GRE_PARSE_OK && p.has_seq && match(p.payload, p.payload_len))
			return 0;
	}
	return -1;
}

static int match_confreq(const uint8_t *f, size_t len)
{
	return is_lcp(f, len, LCP_CONFREQ);
}

static int match_ipcp(const uint8_t *f, size_t len)
{
	return len >= 4 && f[2] == (PPP_IPCP >> 8) && f[3] == (PPP_IPCP & 0xff);
}

static void handshake(void)
{
	uint8_t f[32];

	atomic_store(&F.shm->phase, PH_HANDSHAKE);
	if (peer_expect(match_confreq) < 0)
		goto fail;
	peer_send(f, lcp_frame(f, LCP_CONFACK, 1));
	if (peer_expect(match_ipcp) < 0)
		goto fail;
	wait_state(ST_SHAKEN, 3000);
	if (atomic_load(&F.shm->state) != ST_SHAKEN)
		goto fail;
	return;
fail:
	fprintf(stderr, "%s: LCP exchange through the data path failed\n",
	    F.impl);
	exit(1);
}

static void *peer_recv_main(void *arg)
{
	static uint8_t buf[F_PEER_BATCH][2048];
	struct mmsghdr msg[F_PEER_BATCH];
	struct iovec iov[F_PEER_BATCH];

	(void)arg;
	memset(msg, 0, sizeof(msg));
	for (int i = 0; i < F_PEER_BATCH; i++) {
		iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) };
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
	}
	while (!atomic_load(&F.stop_io)) {
		struct pollfd pfd = { .fd = F.peer, .events = POLLIN };
		int n = 0;

		if (poll(&pfd, 1, 20) > 0)
			n = recvmmsg(F.peer, msg, F_PEER_BATCH, MSG_DONTWAIT, NULL);
		for (int i = 0; i < n; i++) {
			struct gre_packet p;

			if (gre_packet_parse_ip(buf[i], msg[i].msg_len, &p) ==
			    GRE_PARSE_OK && p.has_seq && p.payload_len == F_FRAME)
				atomic_fetch_add(&F.peer_received, 1);
		}
	}
	return NULL;
}

static void peer_send_loop(void)
{
	uint64_t t0 = ns(CLOCK_MONOTONIC);

	for (uint64_t done = 0; done < F.count; done++) {
		if (done % F_PEER_BATCH == 0)
			sleep_until(t0 + done * 1000000000ull / F.rate);
		peer_send(payload, F_FRAME);
	}
}

/* ---- one run ---- */

struct frun {
	const char *impl, *dir;
	uint64_t sent, received;
	double cpu_us, loss;
};

static uint64_t settle(atomic_uint_fast64_t *recv, uint64_t sent)
{
	uint64_t last = atomic_load(recv), idle = 0;
	uint64_t t_last = ns(CLOCK_MONOTONIC);

	while (idle < F_IDLE_MS && atomic_load(recv) < sent) {
		usleep(1000);
		if (atomic_load(recv) == last) {
			idle++;
		} else {
			idle = 0;
			last = atomic_load(recv);
			t_last = ns(CLOCK_MONOTONIC);
		}
	}
	return t_last;
}

static struct frun frun(const char *impl, int to_gre, const char *self)
{
	struct frun r = { .impl = impl, .dir = to_gre ? "toGRE" : "toPPPD" };
	pthread_t io;
	uint64_t c0, c1;
	int poptop = strcmp(impl, "poptop") == 0;

	memset(F.shm, 0, sizeof(*F.shm));
	F.impl = impl;
	F.peer = raw_bound(F_PEER_IP);
	F.peer_seq = 1;
	atomic_store(&F.peer_received, 0);
	atomic_store(&F.stop_io, 0);
	if (poptop)
		poptop_setup(self);
	else
		engine_setup(self);
	wait_state(ST_READY, 3000);
	handshake();
	F.shm->count = F.count;
	F.shm->rate = F.rate;
	if (to_gre) {
		if (pthread_create(&io, NULL, peer_recv_main, NULL))
			fdie("pthread_create");
		c0 = ns(F.cpu);
		atomic_store(&F.shm->phase, PH_WRITE);
		while (atomic_load(&F.shm->sent) < F.count)
			usleep(1000);
		settle(&F.peer_received, F.count);
		c1 = ns(F.cpu);
		atomic_store(&F.stop_io, 1);
		pthread_join(io, NULL);
		r.received = atomic_load(&F.peer_received);
	} else {
		atomic_store(&F.shm->phase, PH_READ);
		usleep(20000);
		c0 = ns(F.cpu);
		peer_send_loop();
		settle(&F.shm->received, F.count);
		c1 = ns(F.cpu);
		r.received = atomic_load(&F.shm->received);
	}
	r.sent = F.count;
	r.cpu_us = r.received ? (double)(c1 - c0) / 1e3 / (double)r.received : 0;
	r.loss = 100.0 * (double)(r.sent - r.received) / (double)r.sent;
	atomic_store(&F.shm->phase, PH_QUIT);
	if (poptop)
		poptop_teardown();
	else
		engine_teardown();
	/* every "pppd" is gone before the next run reuses the mapping (the
	 * one pptpctrl started too: we are its subreaper) */
	while (waitpid(-1, NULL, 0) > 0)
		;
	close(F.peer);
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void summary(const char *impl, const char *dir, struct frun *runs,
    int n)
{
	double v[F_MAX_RUNS], loss = 0;
	int k = 0;

	for (int i = 0; i < n; i++)
		if (!strcmp(runs[i].impl, impl) && !strcmp(runs[i].dir, dir)) {
			v[k++] = runs[i].cpu_us;
			if (runs[i].loss > loss)
				loss = runs[i].loss;
		}
	if (!k)
		return;
	qsort(v, (size_t)k, sizeof(v[0]), cmp_double);
	printf("median %-8s %-7s %7.2f us/frame  spread %.2f..%.2f  "
	    "runs %d  worst loss %.2f%%\n", impl, dir,
	    k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2, v[0], v[k - 1],
	    k, loss);
}

static void floor_usage(void)
{
	fprintf(stderr, "usage: bench_gre -F [-n frames] [-r rate] [-k rounds] "
	    "[-t tag] [-e]\n"
	    "  -n  frames per run (default 40000)\n"
	    "  -r  frames/s both ways (default 10000)\n"
	    "  -k  rounds, each: engine and Poptop, both directions (default 5)\n"
	    "  -t  label of this engine in the output (default engine)\n"
	    "  -e  the engine only (no Poptop)\n"
	    "  -d  one direction only: toGRE or toPPPD\n");
	exit(2);
}

int floor_main(int argc, char **argv)
{
	static struct frun runs[F_MAX_RUNS];
	const char *tag = "engine";
	char self[4096];
	int rounds = 5, opt, nrun = 0, poptop = 1, dirs = 3;
	ssize_t sl;

	F.count = 40000;
	F.rate = 10000;
	optind = 1;
	while ((opt = getopt(argc, argv, "Fn:r:k:t:ed:")) != -1) {
		switch (opt) {
		case 'F':
			break;
		case 'n':
			F.count = strtoull(optarg, NULL, 10);
			break;
		case 'r':
			F.rate = strtoull(optarg, NULL, 10);
			break;
		case 'k':
			rounds = atoi(optarg);
			break;
		case 't':
			tag = optarg;
			break;
		case 'e':
			poptop = 0;
			break;
		case 'd':
			dirs = !strcmp(optarg, "toGRE") ? 2 :
			    !strcmp(optarg, "toPPPD") ? 1 : 0;
			break;
		default:
			floor_usage();
		}
	}
	if (!dirs || !F.count || !F.rate || rounds < 1 || rounds * 4 > F_MAX_RUNS)
		floor_usage();
	if (poptop && access(F_POPTOP, X_OK) < 0) {
		fprintf(stderr, "%s not found (package pptpd): engine only\n",
		    F_POPTOP);
		poptop = 0;
	}
	if ((sl = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0)
		fdie("readlink");
	self[sl] = 0;
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	payload_init();
	shm_open_file();
	printf("floor: %d-byte frames, %" PRIu64 " per run at %" PRIu64
	    "/s, real pty, CPU of the data path only\n", F_FRAME, F.count,
	    F.rate);
	for (int k = 0; k < rounds; k++)
		for (int to_gre = 1; to_gre >= 0; to_gre--)
			for (int p = 0; p <= poptop && (dirs >> to_gre & 1); p++) {
				struct frun r = frun(p ? "poptop" : "engine",
				    to_gre, self);

				if (!p)
					r.impl = tag;
				runs[nrun++] = r;
				printf("run %-8s %-7s round %d  sent %" PRIu64
				    " received %" PRIu64 " loss %.2f%%  "
				    "%.2f us/frame\n", r.impl, r.dir, k + 1,
				    r.sent, r.received, r.loss, r.cpu_us);
				fflush(stdout);
			}
	for (int d = 0; d < 2; d++) {
		summary(tag, d ? "toPPPD" : "toGRE", runs, nrun);
		if (poptop)
			summary("poptop", d ? "toPPPD" : "toGRE", runs, nrun);
	}
	unlink(F.shm_path);
	return 0;
}
