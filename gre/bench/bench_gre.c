/* Benchmark of the GRE engine's data path without pppd.
 *
 * The engine runs in its own thread with a small epoll loop, between a raw
 * GRE socket on loopback and a pty (or, with -s, a socketpair standing in
 * for pppd's pty: pppd's kernel line discipline takes data faster than a
 * user-space reader of an N_TTY pty, which is a bench artifact). A "peer"
 * thread plays the PPTP client on another loopback address; a "ppp" thread
 * plays pppd on the other side of the pty. 1400-byte frames.
 *
 *   pty->GRE: pppd writes HDLC frames as fast as the pty takes them; the peer
 *             counts the GRE packets that arrive.
 *   GRE->pty: the peer sends GRE data packets at a fixed rate (or flat out);
 *             pppd's side decodes and counts the frames.
 *
 * CPU is the engine thread's own (user+system, CLOCK_THREAD_CPUTIME_ID, the
 * per-thread figure getrusage(RUSAGE_THREAD) reports), so the load
 * generators do not count. Loopback delivery of what the engine sends is
 * charged to the engine, as it would be on a real interface. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <pty.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "gre/bench/bench_floor.h"
#include "gre/gre.h"
#include "gre/hdlc.h"
#include "proto/packet.h"

#define ENG_IP     "127.88.0.1"
#define PEER_IP    "127.88.0.2"
#define LOCAL_ID   0x2001
#define PEER_ID    0x3001
#define FRAME      1400
#define BATCH      32
#define IDLE_MS    300

static struct {
	struct gre_engine *e;
	struct gre_call *c;
	int pty;        /* engine side */
	int ppp;        /* pppd side */
	int peer;       /* raw socket of the client */
	int efd;
	pthread_t eng_thread;
	atomic_int stop_engine, stop_io;
	atomic_uint_fast64_t sent, received;
	uint64_t rate;          /* frames/s, 0 = flat out */
	uint64_t count;
	int socketpair_mode;
	int verify;
	uint64_t flags;
} B;

/* -p: run the bench's threads SCHED_FIFO, so that other load on a shared
 * machine does not decide the loss figures (the kernel's RT throttling
 * still leaves the rest of the system 5%). */
static int rt_prio;

static void maybe_realtime(void)
{
	struct sched_param sp = { .sched_priority = rt_prio };

	if (rt_prio && pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		fprintf(stderr, "SCHED_FIFO: %s\n", strerror(errno));
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ms(void)
{
	return now_ns(CLOCK_MONOTONIC) / 1000000;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* ---- the engine thread: what the daemon's event loop does ---- */

static void on_log(void *arg, int prio, const char *msg)
{
	(void)arg;
	if (prio <= 4)
		fprintf(stderr, "engine: %s\n", msg);
}

static void on_want_write(void *arg, int on)
{
	struct epoll_event ev = { .events = EPOLLIN | (on ? EPOLLOUT : 0) };

	(void)arg;
	ev.data.fd = B.pty;
	epoll_ctl(B.efd, EPOLL_CTL_MOD, B.pty, &ev);
}

static void on_closed(void *arg, int err)
{
	(void)arg;
	fprintf(stderr, "pty closed: %s\n", strerror(err));
	epoll_ctl(B.efd, EPOLL_CTL_DEL, B.pty, NULL);
}

static const struct gre_ops ops = { on_log, on_want_write, on_closed };

static void *engine_main(void *arg)
{
	struct epoll_event ev[8];

	(void)arg;
	pthread_setname_np(pthread_self(), "engine");
	maybe_realtime();
	while (!atomic_load(&B.stop_engine)) {
		uint64_t dl = gre_engine_next_deadline(B.e), t = now_ms();
		int timeout = 10, n;

		if (dl && dl <= t)
			timeout = 0;
		else if (dl && dl - t < 10)
			timeout = (int)(dl - t);
		n = epoll_wait(B.efd, ev, 8, timeout);
		t = now_ms();
		for (int i = 0; i < n; i++) {
			if (ev[i].data.fd == gre_engine_fd(B.e)) {
				gre_engine_input(B.e, t);
				continue;
			}
			if (ev[i].events & EPOLLOUT)
				gre_call_pty_output(B.c);
			if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				gre_call_pty_input(B.c, t);
		}
		dl = gre_engine_next_deadline(B.e);
		if (dl && dl <= t)
			gre_engine_timers(B.e, t);
	}
	return NULL;
}

/* ---- the peer: a PPTP client's GRE ---- */

static void peer_send_loop(void)
{
	static uint8_t pkt[BATCH][GRE_HDR_MAX + FRAME];
	struct mmsghdr msg[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_in to = { .sin_family = AF_INET };
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	uint32_t seq = 1;

	inet_pton(AF_INET, ENG_IP, &to.sin_addr);
	memset(msg, 0, sizeof(msg));
	for (int i = 0; i < BATCH; i++) {
		memset(pkt[i], 0x5a, sizeof(pkt[i]));
		iov[i] = (struct iovec){ pkt[i], 0 };
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
		msg[i].msg_hdr.msg_name = &to;
		msg[i].msg_hdr.msg_namelen = sizeof(to);
	}
	for (uint64_t done = 0; done < B.count;) {
		int n = (int)(B.count - done < BATCH ? B.count - done : BATCH), r;

		for (int i = 0; i < n; i++) {
			size_t h = gre_packet_build(pkt[i], LOCAL_ID, FRAME, 1,
			    seq++, 0, 0);
			/* a PPP frame: address, control, protocol (IP) */
			pkt[i][h] = 0xff;
			pkt[i][h + 1] = 0x03;
			pkt[i][h + 2] = 0x00;
			pkt[i][h + 3] = 0x21;
			iov[i].iov_len = h + FRAME;
		}
		r = sendmmsg(B.peer, msg, (unsigned)n, 0);
		if (r < 0)
			die("sendmmsg");
		/* what the kernel did not take counts as offered and lost */
		done += (uint64_t)n;
		atomic_store(&B.sent, done);
		if (B.rate) {
			uint64_t due = t0 + done * 1000000000ull / B.rate;
			struct timespec ts = { (time_t)(due / 1000000000ull),
			    (long)(due % 1000000000ull) };

			if (now_ns(CLOCK_MONOTONIC) < due)
				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
				    &ts, NULL);
		}
	}
}

static void *peer_recv_main(void *arg)
{
	static uint8_t buf[BATCH][2048];
	struct mmsghdr msg[BATCH];
	struct iovec iov[BATCH];

	(void)arg;
	pthread_setname_np(pthread_self(), "peer");
	maybe_realtime();
	memset(msg, 0, sizeof(msg));
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) };
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
	}
	while (!atomic_load(&B.stop_io)) {
		struct pollfd pfd = { .fd = B.peer, .events = POLLIN };
		int n = 0;

		/* recvmmsg's own timeout only runs once a datagram came */
		if (poll(&pfd, 1, 20) > 0)
			n = recvmmsg(B.peer, msg, BATCH, MSG_DONTWAIT, NULL);

		for (int i = 0; i < n; i++) {
			struct gre_packet p;

			if (gre_packet_parse_ip(buf[i], msg[i].msg_len, &p) ==
			    GRE_PARSE_OK && p.has_seq)
				atomic_fetch_add(&B.received, 1);
		}
	}
	return NULL;
}

/* ---- pppd's side of the pty ---- */

static void ppp_write_loop(void)
{
	static uint8_t frame[FRAME], enc[64 * 1024];
	size_t one, per = 0;

	memset(frame, 0x5a, sizeof(frame));
	frame[0] = 0xff;
	frame[1] = 0x03;
	one = hdlc_encode(frame, FRAME, 0, enc, sizeof(enc));
	/* pppd writes frame by frame; several at once here to keep the
	 * writer from being the bottleneck */
	while ((per + 1) * one <= sizeof(enc) && per < 32) {
		memcpy(enc + per * one, enc, one);
		per++;
	}
	for (uint64_t done = 0; done < B.count;) {
		uint64_t n = B.count - done < per ? B.count - done : per;
		size_t len = n * one, off = 0;

		while (off < len) {
			ssize_t w = write(B.ppp, enc + off, len - off);

			if (w < 0 && errno == EAGAIN) {
				struct pollfd pfd = { .fd = B.ppp, .events = POLLOUT };

				poll(&pfd, 1, 20);
				continue;
			}
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				die("write pty");
			off += (size_t)w;
		}
		done += n;
		atomic_store(&B.sent, done);
	}
}

static void count_frame(void *arg, const uint8_t *f, size_t len)
{
	(void)arg;
	(void)f;
	if (len == FRAME)
		atomic_fetch_add(&B.received, 1);
}

/* Every frame the engine writes is FLAG ... FLAG with no FLAG inside, so
 * counting flags counts frames at a fraction of the cost of decoding them
 * (the unit tests check the frames themselves; -v decodes here too). The
 * sink must not be what limits the measurement. */
static void count_flags(const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n;

	while ((p = memchr(p, HDLC_FLAG, (size_t)(end - p))) != NULL) {
		if (++B.flags % 2 == 0)
			atomic_fetch_add(&B.received, 1);
		p++;
	}
}

static void *ppp_read_main(void *arg)
{
	static uint8_t buf[256 * 1024];
	static struct hdlc_decoder d;

	(void)arg;
	pthread_setname_np(pthread_self(), "pppd");
	maybe_realtime();
	hdlc_decoder_init(&d);
	while (!atomic_load(&B.stop_io)) {
		struct pollfd pfd = { .fd = B.ppp, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 20) <= 0)
			continue;
		n = read(B.ppp, buf, sizeof(buf));
		if (n > 0 && B.verify)
			hdlc_decode(&d, buf, (size_t)n, count_frame, NULL);
		else if (n > 0)
			count_flags(buf, (size_t)n);
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			break;
	}
	return NULL;
}

/* ---- setup ---- */

static int raw_at(const char *ip)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_RAW, IPPROTO_GRE), sz = 8 << 20;

	if (fd < 0)
		die("raw GRE socket (run as root)");
	inet_pton(AF_INET, ip, &sa.sin_addr);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind");
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz));
	return fd;
}

static void open_pty_pair(void)
{
	int sp[2];

	if (B.socketpair_mode) {
		int sz = 4 << 20;

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0)
			die("socketpair");
		for (int i = 0; i < 2; i++) {
			setsockopt(sp[i], SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz));
			setsockopt(sp[i], SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
		}
		B.pty = sp[0];
		B.ppp = sp[1];
		return;
	}
	struct termios t;

	if (openpty(&B.pty, &B.ppp, NULL, NULL, NULL) < 0)
		die("openpty");
	tcgetattr(B.ppp, &t);
	cfmakeraw(&t);
	tcsetattr(B.ppp, TCSANOW, &t);
}

static void setup(void)
{
	struct in_addr eng, peer;
	struct epoll_event ev = { .events = EPOLLIN };

	inet_pton(AF_INET, ENG_IP, &eng);
	inet_pton(AF_INET, PEER_IP, &peer);
	B.peer = raw_at(PEER_IP);
	B.e = gre_engine_new(eng, &ops, NULL);
	if (!B.e)
		die("gre_engine_new");
	open_pty_pair();
	B.c = gre_call_new(B.e, LOCAL_ID, PEER_ID, peer, B.pty, NULL);
	if (!B.c)
		die("gre_call_new");
	gre_call_set_accm(B.c, 0, 0);
	B.efd = epoll_create1(0);
	ev.data.fd = gre_engine_fd(B.e);
	epoll_ctl(B.efd, EPOLL_CTL_ADD, ev.data.fd, &ev);
	ev.data.fd = B.pty;
	epoll_ctl(B.efd, EPOLL_CTL_ADD, B.pty, &ev);
	fcntl(B.ppp, F_SETFL, O_NONBLOCK);
	if (pthread_create(&B.eng_thread, NULL, engine_main, NULL))
		die("pthread_create");
}

static void teardown(void)
{
	atomic_store(&B.stop_engine, 1);
	pthread_join(B.eng_thread, NULL);
	gre_call_free(B.c);
	gre_engine_free(B.e);
	close(B.pty);
	close(B.ppp);
	close(B.peer);
	close(B.efd);
	memset(&B, 0, sizeof(B));
}

/* Wait until the receiver has everything or stops making progress; the
 * time of the last progress ends the measurement, so a lossy run is not
 * charged the idle wait. */
static uint64_t settle(void)
{
	uint64_t last = atomic_load(&B.received), idle = 0;
	uint64_t t_last = now_ns(CLOCK_MONOTONIC);

	while (idle < IDLE_MS && atomic_load(&B.received) < atomic_load(&B.sent)) {
		usleep(1000);
		if (atomic_load(&B.received) == last) {
			idle += 1;
		} else {
			idle = 0;
			last = atomic_load(&B.received);
			t_last = now_ns(CLOCK_MONOTONIC);
		}
	}
	return idle ? t_last : now_ns(CLOCK_MONOTONIC);
}

struct result {
	double fps, cpu_us, loss;
	uint64_t sent, received;
	struct gre_stats st;
	struct gre_engine_stats es;
};

static struct result run(int to_gre, uint64_t rate, uint64_t count)
{
	pthread_t io;
	clockid_t cpu;
	uint64_t c0, c1, t0, t1;
	struct result r = { 0 };

	setup();
	B.rate = rate;
	B.count = count;
	pthread_getcpuclockid(B.eng_thread, &cpu);
	if (pthread_create(&io, NULL, to_gre ? peer_recv_main : ppp_read_main, NULL))
		die("pthread_create");
	c0 = now_ns(cpu);
	t0 = now_ns(CLOCK_MONOTONIC);
	if (to_gre)
		ppp_write_loop();
	else
		peer_send_loop();
	t1 = settle();
	c1 = now_ns(cpu);
	atomic_store(&B.stop_io, 1);
	pthread_join(io, NULL);
	r.sent = atomic_load(&B.sent);
	r.received = atomic_load(&B.received);
	r.fps = (double)r.received * 1e9 / (double)(t1 - t0);
	r.cpu_us = r.received ? (double)(c1 - c0) / 1e3 / (double)r.received : 0;
	r.loss = r.sent ? 100.0 * (double)(r.sent - r.received) / (double)r.sent : 0;
	gre_call_stats(B.c, &r.st);
	gre_engine_stats(B.e, &r.es);
	if (getenv("BENCH_DEBUG"))
		fprintf(stderr, "  engine: rx %" PRIu64 " in %" PRIu64 " batches, "
		    "tx %" PRIu64 " in %" PRIu64 " sendmmsg, pty %" PRIu64
		    " writes %" PRIu64 " reads; delivered %" PRIu64 "\n",
		    r.es.rx_datagrams, r.es.rx_batches, r.es.tx_datagrams,
		    r.es.tx_batches, r.es.pty_writes, r.es.pty_reads,
		    r.st.rx_delivered);
	teardown();
	return r;
}

static void row(const char *dir, const char *rate, const struct result *r)
{
	printf("%-9s %-6s %9s %9" PRIu64 " %9" PRIu64 " %7.2f%% %10.0f %9.2f  %6" PRIu64 " %6" PRIu64 "\n",
	    dir, B.socketpair_mode ? "sockpr" : "pty", rate, r->sent,
	    r->received, r->loss, r->fps, r->cpu_us, r->st.pty_drops,
	    r->st.tx_acks_only);
	fflush(stdout);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_gre [-n frames] [-s] [-r rate,...] [-k runs]\n"
	    "  -n  frames per run (default 200000)\n"
	    "  -s  socketpair instead of a pty for pppd's side\n"
	    "  -r  GRE->pty offered rates in frames/s, 0 = flat out\n"
	    "      (default 40000,80000,160000,0)\n"
	    "  -k  runs of each measurement (the machine may be shared)\n"
	    "  -v  pppd's side decodes and checks every frame (slower sink)\n"
	    "  -p  real-time priority for the bench's threads (root)\n"
	    "  -F  the data path against a real pty, side by side with\n"
	    "      Poptop's pptpctrl (bench_gre -F -h for its options)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t count = 200000, rates[16] = { 40000, 80000, 160000, 0 };
	int nrates = 4, opt, sockpair = 0, both = 1, repeat = 1, verify = 0;
	struct result r;
	char label[32];

	if (getenv("BENCH_PPPD_SHM"))
		return floor_pppd_main(getenv("BENCH_PPPD_SHM"));
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-F"))
			return floor_main(argc, argv);
	while ((opt = getopt(argc, argv, "n:sr:k:vp")) != -1) {
		switch (opt) {
		case 'p':
			rt_prio = 10;
			break;
		case 'v':
			verify = 1;
			break;
		case 'k':
			repeat = atoi(optarg) > 0 ? atoi(optarg) : 1;
			break;
		case 'n':
			both = 0;
			count = strtoull(optarg, NULL, 10);
			break;
		case 's':
			sockpair = 1;
			both = 0;
			break;
		case 'r':
			nrates = 0;
			for (char *s = strtok(optarg, ","); s && nrates < 16;
			    s = strtok(NULL, ","))
				rates[nrates++] = strtoull(s, NULL, 10);
			break;
		default:
			usage();
		}
	}
	maybe_realtime();
	printf("GRE engine benchmark: %d-byte frames, %" PRIu64 " per run, "
	    "CPU = engine thread only\n", FRAME, count);
	printf("%-9s %-6s %9s %9s %9s %8s %10s %9s  %6s %6s\n", "direction",
	    "pppd", "offered", "sent", "received", "loss", "frames/s",
	    "us/frame", "ptydrp", "acks");
	for (int pass = 0; pass < 2; pass++) {
		int mode = pass ? !sockpair : sockpair;

		if (pass && !both)
			break;
		for (int k = 0; k < repeat; k++) {
			B.socketpair_mode = mode;
			r = run(1, 0, count);
			B.socketpair_mode = mode;
			row("pty->GRE", "max", &r);
		}
		for (int i = 0; i < nrates; i++)
			for (int k = 0; k < repeat; k++) {
				B.socketpair_mode = mode;
				B.verify = verify;
				if (rates[i])
					snprintf(label, sizeof(label), "%" PRIu64,
					    rates[i]);
				else
					snprintf(label, sizeof(label), "max");
				r = run(0, rates[i], count);
				B.socketpair_mode = mode;
				row("GRE->pty", label, &r);
			}
	}
	return 0;
}
