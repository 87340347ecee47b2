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
 *   null    (-N) the floor of any userspace data path on a pty: a thread
 *           like the engine's, with the same kind of epoll loop and pty
 *           read size, that hands bytes on unparsed. Toward GRE each pty
 *           read goes out as the payload of one GRE packet with a fixed
 *           header (no HDLC decoding, FCS or sequence numbers), the peer
 *           counting frames by their flags; toward pppd the peer sends
 *           frames already HDLC-encoded (with ACCM 0, the fewest octets
 *           any data path can write) and each batch received goes to the
 *           pty in one write, each packet's payload as it came. Its CPU
 *           is that thread's, like the engine's. What it cannot avoid -
 *           the wake-ups, the pty, the socket - every userspace data path
 *           on a pty pays too.
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
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "gre/bench/bench_floor.h"
#include "gre/gre.h"
#include "gre/hdlc.h"
#include "proto/packet.h"

#define F_ENG_IP     "127.88.0.1"
#define F_PEER_IP    "127.88.0.2"
#define F_LOCAL_ID   0x2001
#define F_PEER_ID    0x3001
#define F_FRAME      1400
#define F_PEER_BATCH 8
/* Largest IPv4 datagram: the null path's packets can be that big. */
#define F_DGRAM_MAX  65535
#define F_IDLE_MS    300
#define F_POPTOP     "/usr/sbin/pptpctrl"
#define F_CTRL_PORT  17230
#define F_MAX_RUNS   120
/* An epoll wait's bound, so a data path thread sees its stop flag. */
#define F_POLL_MS    10

/* PPP and LCP values the stand-ins use */
#define PPP_LCP        0xc021
#define PPP_IPCP       0x8021
#define PPP_COMP       0x00fd  /* MPPE/CCP compressed datagram */
#define LCP_CONFREQ    1
#define LCP_CONFACK    2
#define LCP_OPT_ACCM   2
/* Async control character maps (RFC 1662 7.1): LCP itself goes out with
 * every control character escaped; data after pppd's ACCM 0 is acked. */
#define ACCM_ALL       0xffffffffu
#define ACCM_NONE      0u

/* IPv4 as a raw socket delivers it: IHL is the low nibble of the first
 * octet, in 32-bit words. */
#define IPV4_IHL_MASK  0x0f
#define IPV4_IHL_UNIT  4
#define IPV4_HDR_MAX   60

/* PPTP control messages (RFC 2637 2.1, 2.7, 2.8) */
#define PPTP_MAGIC     0x1a2b3c4d
#define PPTP_SCCRQ     1
#define PPTP_SCCRQ_LEN 156
#define PPTP_SCCRP_LEN 156
#define PPTP_OCRQ      7
#define PPTP_OCRQ_LEN  168
#define PPTP_OCRP_LEN  32

enum path { P_ENGINE, P_POPTOP, P_NULL, P__COUNT };
enum phase { PH_WAIT, PH_HANDSHAKE, PH_WRITE, PH_READ, PH_QUIT };
enum pstate { ST_NONE, ST_READY, ST_SHAKEN, ST_FAILED };

/* Shared with the "pppd" process. */
struct shm {
	atomic_int phase, state;
	uint64_t count, rate;
	atomic_uint_fast64_t sent, received;
};

static struct {
	const char *impl;       /* the data path's name in the output */
	enum path path;
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
	struct hdlc_decoder peer_dec;   /* the peer unframes the null path's */
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
	if (pppd_send(out, f, lcp_frame(f, LCP_CONFREQ, 1), ACCM_ALL) < 0)
		exit(1);
	while (!rx.got_ack && mono_ms() - t0 < 3000)
		pppd_read_some(in, &rx, 20);
	if (!rx.got_ack) {
		atomic_store(&s->state, ST_FAILED);
		return;
	}
	pppd_send(out, ipcp, sizeof(ipcp), ACCM_NONE);
	atomic_store(&s->state, ST_SHAKEN);
}

/* One write() per frame, paced: as pppd's line discipline pushes frames. */
static void pppd_write(struct shm *s, int out)
{
	uint8_t enc[HDLC_ENCODED_MAX(F_FRAME)];
	size_t n = hdlc_encode(payload, F_FRAME, ACCM_NONE, enc, sizeof(enc));
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

/* A data path thread (the engine's or the null one): one epoll set for
 * its socket and the pty, and its CPU clock for the figures. */
static void path_thread_start(int sock, void *(*fn)(void *))
{
	struct epoll_event ev = { .events = EPOLLIN };

	F.efd = epoll_create1(0);
	ev.data.fd = sock;
	epoll_ctl(F.efd, EPOLL_CTL_ADD, sock, &ev);
	ev.data.fd = F.pty;
	epoll_ctl(F.efd, EPOLL_CTL_ADD, F.pty, &ev);
	atomic_store(&F.stop_engine, 0);
	if (pthread_create(&F.eng_thread, NULL, fn, NULL))
		fdie("pthread_create");
	pthread_getcpuclockid(F.eng_thread, &F.cpu);
}

static void path_thread_stop(void)
{
	atomic_store(&F.stop_engine, 1);
	pthread_join(F.eng_thread, NULL);
	close(F.pty);
	close(F.efd);
}

static void engine_setup(const char *self)
{
	struct in_addr eng, peer;
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
	path_thread_start(gre_engine_fd(F.e), eng_main);
}

static void engine_teardown(void)
{
	path_thread_stop();
	gre_call_free(F.c);
	gre_engine_free(F.e);
}

/* ---- the null data path: bytes through, unparsed ---- */

/* The engine's pty read size (GRE_PTY_READ), less room for the IPv4 and
 * GRE headers so a full read still fits one datagram (most pty reads
 * return under 4096 octets; seen up to 13 KiB on Linux 6.18). */
#define N_PTY_READ   (F_DGRAM_MAX - IPV4_HDR_MAX - GRE_HDR_MAX)
/* Reads per readiness and datagrams per recvmmsg, as the engine's
 * GRE_PTY_READS and GRE_RX_BATCH. */
#define N_PTY_READS  4
#define N_RX_BATCH   32
/* IPv4 header with options, the peer's GRE header, an encoded frame. */
#define N_RX_BUFSZ   (IPV4_HDR_MAX + GRE_HDR_MAX + HDLC_ENCODED_MAX(F_FRAME))

static struct {
	int gre;                /* raw GRE socket, connected to the peer */
	size_t hdr;             /* GRE header of a data packet, no ack */
	uint8_t tx[GRE_HDR_MAX + N_PTY_READ];
	uint8_t rx[N_RX_BATCH][N_RX_BUFSZ];
	struct iovec rx_iov[N_RX_BATCH];
	struct mmsghdr rx_msg[N_RX_BATCH];
} N;

static size_t ipv4_hdr_len(const uint8_t *ip)
{
	return (size_t)(ip[0] & IPV4_IHL_MASK) * IPV4_IHL_UNIT;
}

static void null_pty_gone(void)
{
	epoll_ctl(F.efd, EPOLL_CTL_DEL, F.pty, NULL);
}

/* Toward GRE: what one read returns is one packet's payload, read in
 * place behind its header. The header differs from packet to packet only
 * in the payload length: the sequence number stays 0. */
static void null_pty_input(void)
{
	for (int i = 0; i < N_PTY_READS; i++) {
		ssize_t n = read(F.pty, N.tx + N.hdr, N_PTY_READ);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			null_pty_gone();
			return;
		}
		gre_packet_build(N.tx, F_PEER_ID, (uint16_t)n, 1, 0, 0, 0);
		send(N.gre, N.tx, N.hdr + (size_t)n, 0);
		if (n < N_PTY_READ)
			return;
	}
}

/* Write all of iov, waiting for room when the pty is full: no backlog to
 * keep and nothing dropped, so the floor has no bookkeeping. */
static void null_pty_write(struct iovec *iov, int n)
{
	while (n > 0 && !atomic_load(&F.stop_engine)) {
		ssize_t w = writev(F.pty, iov, n);

		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = F.pty, .events = POLLOUT };

			poll(&pfd, 1, F_POLL_MS);
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return;
		for (; n > 0 && (size_t)w >= iov->iov_len; iov++, n--)
			w -= (ssize_t)iov->iov_len;
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
}

/* Toward pppd: each payload is already the HDLC line pppd reads; a
 * batch goes to the pty in one write, as the engine writes one, straight
 * from the receive buffers. */
static void null_gre_input(void)
{
	int n;

	do {
		struct iovec iov[N_RX_BATCH];
		int k = 0;

		n = recvmmsg(N.gre, N.rx_msg, N_RX_BATCH, MSG_DONTWAIT, NULL);
		for (int i = 0; i < n; i++) {
			size_t off = ipv4_hdr_len(N.rx[i]) + N.hdr;

			if (N.rx_msg[i].msg_len > off)
				iov[k++] = (struct iovec){ N.rx[i] + off,
				    N.rx_msg[i].msg_len - off };
		}
		null_pty_write(iov, k);
	} while (n == N_RX_BATCH);
}

/* The engine's loop less its timers: there are none to keep. */
static void *null_main(void *arg)
{
	struct epoll_event ev[8];

	(void)arg;
	pthread_setname_np(pthread_self(), "null");
	while (!atomic_load(&F.stop_engine)) {
		int n = epoll_wait(F.efd, ev, 8, F_POLL_MS);

		for (int i = 0; i < n; i++) {
			if (ev[i].data.fd == N.gre)
				null_gre_input();
			else if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				null_pty_input();
		}
	}
	return NULL;
}

static void null_socket(void)
{
	struct sockaddr_in peer = { .sin_family = AF_INET };

	N.gre = raw_bound(F_ENG_IP);
	inet_pton(AF_INET, F_PEER_IP, &peer.sin_addr);
	if (connect(N.gre, (struct sockaddr *)&peer, sizeof(peer)) < 0)
		fdie("connect GRE");
	for (int i = 0; i < N_RX_BATCH; i++) {
		N.rx_iov[i] = (struct iovec){ N.rx[i], sizeof(N.rx[i]) };
		N.rx_msg[i].msg_hdr.msg_iov = &N.rx_iov[i];
		N.rx_msg[i].msg_hdr.msg_iovlen = 1;
	}
	/* the peer's data packets have the form ours have */
	N.hdr = gre_packet_build(N.tx, F_PEER_ID, 0, 1, 0, 0, 0);
}

static void null_setup(const char *self)
{
	int slave;

	if (openpty(&F.pty, &slave, NULL, NULL, NULL) < 0)
		fdie("openpty");
	F.pppd = spawn_pppd(slave, self);
	close(slave);
	fcntl(F.pty, F_SETFL, fcntl(F.pty, F_GETFL) | O_NONBLOCK);
	null_socket();
	F.gre_key = F_LOCAL_ID;
	path_thread_start(N.gre, null_main);
}

static void null_teardown(void)
{
	path_thread_stop();
	close(N.gre);
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

/* One GRE data packet carrying `len` octets as they are. */
static void peer_send_raw(const uint8_t *data, size_t len)
{
	uint8_t pkt[GRE_HDR_MAX + HDLC_ENCODED_MAX(F_FRAME)];
	struct sockaddr_in to = { .sin_family = AF_INET };
	size_t h = gre_packet_build(pkt, F.gre_key, (uint16_t)len, 1,
	    F.peer_seq++, 0, 0);

	inet_pton(AF_INET, F_ENG_IP, &to.sin_addr);
	memcpy(pkt + h, data, len);
	if (sendto(F.peer, pkt, h + len, 0, (struct sockaddr *)&to,
	    sizeof(to)) < 0)
		fdie("sendto");
}

/* The null path writes what it gets to the pty, so for it the peer sends
 * the line pppd reads: the frame HDLC-encoded. */
static size_t peer_line(const uint8_t *frame, size_t len, uint32_t accm,
    uint8_t *out)
{
	if (F.path != P_NULL) {
		memcpy(out, frame, len);
		return len;
	}
	return hdlc_encode(frame, len, accm, out, HDLC_ENCODED_MAX(F_FRAME));
}

static void peer_send(const uint8_t *frame, size_t len, uint32_t accm)
{
	uint8_t line[HDLC_ENCODED_MAX(F_FRAME)];

	peer_send_raw(line, peer_line(frame, len, accm, line));
}

struct expect {
	int (*match)(const uint8_t *, size_t);
	int found;
};

static void expect_frame(void *arg, const uint8_t *f, size_t len)
{
	struct expect *x = arg;

	if (x->match(f, len))
		x->found = 1;
}

/* The null path hands on pppd's bytes as read: the peer unframes them
 * itself, a frame possibly spanning packets. */
static int peer_payload_matches(struct expect *x, const uint8_t *p,
    size_t len)
{
	if (F.path != P_NULL)
		return x->match(p, len);
	hdlc_decode(&F.peer_dec, p, len, expect_frame, x);
	return x->found;
}

/* Wait for a GRE data packet whose payload passes `match`. */
static int peer_expect(int (*match)(const uint8_t *, size_t))
{
	uint8_t buf[4096];
	uint64_t t0 = mono_ms();
	struct expect x = { match, 0 };

	while (mono_ms() - t0 < 3000) {
		struct pollfd pfd = { .fd = F.peer, .events = POLLIN };
		struct gre_packet p;
		ssize_t n;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		n = recv(F.peer, buf, sizeof(buf), 0);
		if (n > 0 && gre_packet_parse_ip(buf, (size_t)n, &p) ==
		    GRE_PARSE_OK && p.has_seq &&
		    peer_payload_matches(&x, p.payload, p.payload_len))
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
	peer_send(f, lcp_frame(f, LCP_CONFACK, 1), ACCM_ALL);
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

/* Frames in the null path's packets, counted by their closing flag: a
 * FLAG after a non-FLAG octet (hdlc_encode opens every frame with a FLAG
 * too, so a FLAG after a FLAG opens one). `last` carries the octet before
 * `p` from packet to packet, as a frame may span two. */
static uint64_t frame_ends(const uint8_t *p, size_t len, uint8_t *last)
{
	const uint8_t *q = p, *end = p + len;
	uint64_t n = 0;

	if (!len)
		return 0;
	while ((q = memchr(q, HDLC_FLAG, (size_t)(end - q))) != NULL) {
		if ((q == p ? *last : q[-1]) != HDLC_FLAG)
			n++;
		q++;
	}
	*last = end[-1];
	return n;
}

/* Frames one received datagram delivered. */
static uint64_t peer_frames(const uint8_t *dgram, size_t len, uint8_t *last)
{
	struct gre_packet p;
	size_t off;

	if (F.path == P_NULL) {
		off = ipv4_hdr_len(dgram) + N.hdr;
		return len > off ? frame_ends(dgram + off, len - off, last) : 0;
	}
	return gre_packet_parse_ip(dgram, len, &p) == GRE_PARSE_OK &&
	    p.has_seq && p.payload_len == F_FRAME;
}

static void *peer_recv_main(void *arg)
{
	/* the null path sends a whole pty read per packet */
	static uint8_t buf[F_PEER_BATCH][F_DGRAM_MAX];
	uint8_t last = HDLC_FLAG;
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
		for (int i = 0; i < n; i++)
			atomic_fetch_add(&F.peer_received,
			    peer_frames(buf[i], msg[i].msg_len, &last));
	}
	return NULL;
}

/* The frame's line is made once: the peer's own cost is not measured,
 * but on a 2-core machine it should load it no more than it must. */
static void peer_send_loop(void)
{
	uint8_t line[HDLC_ENCODED_MAX(F_FRAME)];
	size_t len = peer_line(payload, F_FRAME, ACCM_NONE, line);
	uint64_t t0 = ns(CLOCK_MONOTONIC);

	for (uint64_t done = 0; done < F.count; done++) {
		if (done % F_PEER_BATCH == 0)
			sleep_until(t0 + done * 1000000000ull / F.rate);
		peer_send_raw(line, len);
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

static void path_setup(const char *self)
{
	switch (F.path) {
	case P_POPTOP:
		poptop_setup(self);
		break;
	case P_NULL:
		null_setup(self);
		break;
	default:
		engine_setup(self);
	}
}

static void path_teardown(void)
{
	switch (F.path) {
	case P_POPTOP:
		poptop_teardown();
		break;
	case P_NULL:
		null_teardown();
		break;
	default:
		engine_teardown();
	}
}

static struct frun frun(enum path path, const char *impl, int to_gre,
    const char *self)
{
	struct frun r = { .impl = impl, .dir = to_gre ? "toGRE" : "toPPPD" };
	pthread_t io;
	uint64_t c0, c1;

	memset(F.shm, 0, sizeof(*F.shm));
	F.impl = impl;
	F.path = path;
	F.peer = raw_bound(F_PEER_IP);
	F.peer_seq = 1;
	hdlc_decoder_init(&F.peer_dec);
	atomic_store(&F.peer_received, 0);
	atomic_store(&F.stop_io, 0);
	path_setup(self);
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
	path_teardown();
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

/* Prints the median and spread; returns the median, 0 without runs. */
static double summary(const char *impl, const char *dir, struct frun *runs,
    int n)
{
	double v[F_MAX_RUNS], loss = 0, med;
	int k = 0;

	for (int i = 0; i < n; i++)
		if (!strcmp(runs[i].impl, impl) && !strcmp(runs[i].dir, dir)) {
			v[k++] = runs[i].cpu_us;
			if (runs[i].loss > loss)
				loss = runs[i].loss;
		}
	if (!k)
		return 0;
	qsort(v, (size_t)k, sizeof(v[0]), cmp_double);
	med = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	printf("median %-8s %-7s %7.2f us/frame  spread %.2f..%.2f  "
	    "runs %d  worst loss %.2f%%\n", impl, dir, med, v[0], v[k - 1],
	    k, loss);
	return med;
}

/* Medians per data path for one direction, then each against Poptop's. */
static void summaries(const char *dir, const char *names[P__COUNT],
    const int on[P__COUNT], struct frun *runs, int n)
{
	double med[P__COUNT] = { 0 };

	for (int p = 0; p < P__COUNT; p++)
		if (on[p])
			med[p] = summary(names[p], dir, runs, n);
	for (int p = 0; p < P__COUNT; p++)
		if (p != P_POPTOP && med[p] > 0 && med[P_POPTOP] > 0)
			printf("ratio  %-8s %-7s %7.2fx Poptop\n",
			    names[p], dir, med[p] / med[P_POPTOP]);
}

static void floor_usage(void)
{
	fprintf(stderr, "usage: bench_gre -F [-n frames] [-r rate] [-k rounds] "
	    "[-t tag] [-e] [-N] [-d dir]\n"
	    "  -n  frames per run (default 40000)\n"
	    "  -r  frames/s both ways (default 10000)\n"
	    "  -k  rounds, each: engine, Poptop (and null), both directions "
	    "(default 5)\n"
	    "  -t  label of this engine in the output (default engine)\n"
	    "  -e  no Poptop\n"
	    "  -N  also the null data path: pty bytes to GRE and back\n"
	    "      unparsed, the floor of any userspace data path\n"
	    "  -d  one direction only: toGRE or toPPPD\n");
	exit(2);
}

/* Which data paths run, and under what names. */
struct paths {
	const char *name[P__COUNT];
	int on[P__COUNT];
	int dirs;               /* bit 1: toGRE, bit 0: toPPPD */
	int rounds;
};

static void floor_options(int argc, char **argv, struct paths *ps)
{
	int opt;

	optind = 1;
	while ((opt = getopt(argc, argv, "Fn:r:k:t:eNd:")) != -1) {
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
			ps->rounds = atoi(optarg);
			break;
		case 't':
			ps->name[P_ENGINE] = optarg;
			break;
		case 'e':
			ps->on[P_POPTOP] = 0;
			break;
		case 'N':
			ps->on[P_NULL] = 1;
			break;
		case 'd':
			ps->dirs = !strcmp(optarg, "toGRE") ? 2 :
			    !strcmp(optarg, "toPPPD") ? 1 : 0;
			break;
		default:
			floor_usage();
		}
	}
}

static int paths_on(const struct paths *ps)
{
	int n = 0;

	for (int p = 0; p < P__COUNT; p++)
		n += ps->on[p];
	return n;
}

/* Rounds alternate the data paths, so a shared machine's load falls on
 * all alike. */
static int floor_rounds(const struct paths *ps, struct frun *runs,
    const char *self)
{
	int nrun = 0;

	for (int k = 0; k < ps->rounds; k++)
		for (int to_gre = 1; to_gre >= 0; to_gre--)
			for (int p = 0; p < P__COUNT; p++) {
				struct frun r;

				if (!ps->on[p] || !(ps->dirs >> to_gre & 1))
					continue;
				r = frun((enum path)p, ps->name[p], to_gre,
				    self);
				runs[nrun++] = r;
				printf("run %-8s %-7s round %d  sent %" PRIu64
				    " received %" PRIu64 " loss %.2f%%  "
				    "%.2f us/frame\n", r.impl, r.dir, k + 1,
				    r.sent, r.received, r.loss, r.cpu_us);
				fflush(stdout);
			}
	return nrun;
}

int floor_main(int argc, char **argv)
{
	static struct frun runs[F_MAX_RUNS];
	struct paths ps = { { "engine", "poptop", "null" }, { 1, 1, 0 }, 3, 5 };
	char self[4096];
	int nrun;
	ssize_t sl;

	F.count = 40000;
	F.rate = 10000;
	floor_options(argc, argv, &ps);
	if (!ps.dirs || !F.count || !F.rate || ps.rounds < 1 ||
	    ps.rounds * 2 * paths_on(&ps) > F_MAX_RUNS)
		floor_usage();
	if (ps.on[P_POPTOP] && access(F_POPTOP, X_OK) < 0) {
		fprintf(stderr, "%s not found (package pptpd): no Poptop\n",
		    F_POPTOP);
		ps.on[P_POPTOP] = 0;
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
	nrun = floor_rounds(&ps, runs, self);
	summaries("toGRE", ps.name, ps.on, runs, nrun);
	summaries("toPPPD", ps.name, ps.on, runs, nrun);
	unlink(F.shm_path);
	return 0;
}
