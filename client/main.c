/* pptp-load: many PPTP sessions from one process and one epoll loop, each
 * with its own control connection and source address, its call's GRE on
 * one shared raw socket, a userspace PPP and fixed-rate UDP streams; a
 * report at the end. See pptp-load(1). */
#include "client/clock.h"
#include "client/report.h"
#include "client/session.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define STREAMS_MAX     4
#define EVENTS_MAX      256
#define DEFAULT_DEADLINE_S 120
#define DEFAULT_SETUP_S    30
#define DEFAULT_RATE       50
#define TUN_MTU_MPPE_OVERHEAD 4   /* MPPE's header: 1396 for MRU 1400 */
/* Time kept for teardown before the deadline. */
#define TEARDOWN_MS     (SESSION_CLOSE_MS + 500)
#define PROGRESS_MS     1000

struct user { char *name, *password; };

struct opts {
	const char *server;
	struct in_addr src_first;
	uint32_t src_count;
	unsigned sessions;
	double rate;
	unsigned max_setup;     /* 0: no limit on sessions in setup at once */
	const char *user, *password, *users_file;
	const char *profile, *mppe;
	/* --renegotiate WHEN and who to be after it */
	const char *renego, *renego_user, *renego_password, *renego_mppe;
	int stateful;
	struct stream_spec spec[STREAMS_MAX];
	unsigned nspecs;
	struct in_addr target;
	uint16_t target_port;
	double deadline_s, setup_s, hold_s;
	const char *json;
	const char *tun;
	int progress;
	const char *auth;
};

struct tag { int kind; int fd; };

struct run {
	struct opts o;
	struct session_env env;
	struct session *ss;
	struct user *users;
	unsigned nusers;
	unsigned started, settled, up;
	uint64_t t0, all_up_ms;
	struct tag gre_tag, tun_tag, sig_tag;
	struct session *tun_session;
	long rss_first;          /* RSS when the first session came up */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: pptp-load --server ADDR [--source A[-B]] [--sessions N] [--rate R]\n"
"         [--max-setup N]\n"
"         (--user U --password P | --users FILE) [--profile windows|linux]\n"
"         [--mppe 128|40|any|none|refuse] [--stateful]\n"
"         [--auth mschapv2|chap|pap] [--renegotiate auth|up\n"
"          [--renegotiate-user U --renegotiate-password P]\n"
"          [--renegotiate-mppe 128|40|any|none|refuse]]\n"
"         [--stream SIZE,RATE,DURATION,up|down|echo]... [--target IP:PORT]\n"
"         [--deadline S] [--setup-timeout S] [--hold S] [--json FILE]\n"
"         [--tun [NAME]] [--progress]\n");
}

static int die(const char *what, const char *arg)
{
	fprintf(stderr, "pptp-load: %s%s%s\n", what, arg ? ": " : "",
	    arg ? arg : "");
	exit(2);
}

static void parse_source(struct opts *o, const char *s)
{
	char a[2 * INET_ADDRSTRLEN + 2], *dash;
	struct in_addr lo, hi;

	snprintf(a, sizeof(a), "%s", s);
	dash = strchr(a, '-');
	if (dash)
		*dash = '\0';
	if (inet_pton(AF_INET, a, &lo) != 1 ||
	    (dash && inet_pton(AF_INET, dash + 1, &hi) != 1))
		die("bad --source (want A or A-B)", s);
	if (!dash)
		hi = lo;
	if (ntohl(hi.s_addr) < ntohl(lo.s_addr))
		die("--source range goes backwards", s);
	o->src_first = lo;
	o->src_count = ntohl(hi.s_addr) - ntohl(lo.s_addr) + 1;
}

static void parse_target(struct opts *o, const char *s)
{
	char a[INET_ADDRSTRLEN + 8], *colon;

	snprintf(a, sizeof(a), "%s", s);
	colon = strrchr(a, ':');
	if (!colon)
		die("bad --target (want IP:PORT)", s);
	*colon = '\0';
	long port = strtol(colon + 1, NULL, 10);
	if (inet_pton(AF_INET, a, &o->target) != 1 || port <= 0 || port > 65535)
		die("bad --target (want IP:PORT)", s);
	o->target_port = (uint16_t)port;
}

static double parse_num(const char *s, const char *what)
{
	char *e;
	double v = strtod(s, &e);

	if (e == s || *e || v < 0)
		die(what, s);
	return v;
}

static void parse_opts(struct opts *o, int argc, char **argv)
{
	enum { O_SERVER = 256, O_SOURCE, O_SESSIONS, O_RATE, O_USER, O_PASS,
		O_USERS, O_PROFILE, O_MPPE, O_STATEFUL, O_STREAM, O_TARGET,
		O_DEADLINE, O_SETUP, O_HOLD, O_JSON, O_TUN, O_PROGRESS, O_AUTH,
		O_MAX_SETUP, O_RENEGO, O_RENEGO_USER, O_RENEGO_PASS,
		O_RENEGO_MPPE, O_HELP };
	static const struct option lo[] = {
		{ "server", required_argument, NULL, O_SERVER },
		{ "source", required_argument, NULL, O_SOURCE },
		{ "sessions", required_argument, NULL, O_SESSIONS },
		{ "rate", required_argument, NULL, O_RATE },
		{ "max-setup", required_argument, NULL, O_MAX_SETUP },
		{ "user", required_argument, NULL, O_USER },
		{ "password", required_argument, NULL, O_PASS },
		{ "users", required_argument, NULL, O_USERS },
		{ "profile", required_argument, NULL, O_PROFILE },
		{ "mppe", required_argument, NULL, O_MPPE },
		{ "stateful", no_argument, NULL, O_STATEFUL },
		{ "stream", required_argument, NULL, O_STREAM },
		{ "target", required_argument, NULL, O_TARGET },
		{ "deadline", required_argument, NULL, O_DEADLINE },
		{ "setup-timeout", required_argument, NULL, O_SETUP },
		{ "hold", required_argument, NULL, O_HOLD },
		{ "json", required_argument, NULL, O_JSON },
		{ "tun", optional_argument, NULL, O_TUN },
		{ "progress", no_argument, NULL, O_PROGRESS },
		{ "auth", required_argument, NULL, O_AUTH },
		{ "renegotiate", required_argument, NULL, O_RENEGO },
		{ "renegotiate-user", required_argument, NULL, O_RENEGO_USER },
		{ "renegotiate-password", required_argument, NULL,
		    O_RENEGO_PASS },
		{ "renegotiate-mppe", required_argument, NULL, O_RENEGO_MPPE },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	const char *why;

	memset(o, 0, sizeof(*o));
	o->sessions = 1;
	o->rate = DEFAULT_RATE;
	o->profile = "windows";
	o->mppe = "128";
	o->auth = "mschapv2";
	o->deadline_s = DEFAULT_DEADLINE_S;
	o->setup_s = DEFAULT_SETUP_S;
	o->hold_s = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case O_SERVER: o->server = optarg; break;
		case O_SOURCE: parse_source(o, optarg); break;
		case O_SESSIONS:
			o->sessions = (unsigned)parse_num(optarg, "bad --sessions");
			break;
		case O_RATE: o->rate = parse_num(optarg, "bad --rate"); break;
		case O_MAX_SETUP:
			o->max_setup = (unsigned)parse_num(optarg,
			    "bad --max-setup");
			break;
		case O_USER: o->user = optarg; break;
		case O_PASS: o->password = optarg; break;
		case O_USERS: o->users_file = optarg; break;
		case O_PROFILE: o->profile = optarg; break;
		case O_MPPE: o->mppe = optarg; break;
		case O_STATEFUL: o->stateful = 1; break;
		case O_STREAM:
			if (o->nspecs == STREAMS_MAX)
				die("at most 4 --stream", NULL);
			if (stream_spec_parse(optarg, &o->spec[o->nspecs], &why) < 0)
				die(why, optarg);
			o->nspecs++;
			break;
		case O_TARGET: parse_target(o, optarg); break;
		case O_DEADLINE:
			o->deadline_s = parse_num(optarg, "bad --deadline");
			break;
		case O_SETUP:
			o->setup_s = parse_num(optarg, "bad --setup-timeout");
			break;
		case O_HOLD: o->hold_s = parse_num(optarg, "bad --hold"); break;
		case O_JSON: o->json = optarg; break;
		case O_TUN: o->tun = optarg ? optarg : "pptpload0"; break;
		case O_PROGRESS: o->progress = 1; break;
		case O_AUTH: o->auth = optarg; break;
		case O_RENEGO: o->renego = optarg; break;
		case O_RENEGO_USER: o->renego_user = optarg; break;
		case O_RENEGO_PASS: o->renego_password = optarg; break;
		case O_RENEGO_MPPE: o->renego_mppe = optarg; break;
		case O_HELP: usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc && !o->server)
		o->server = argv[optind++];
	if (optind < argc || !o->server)
		usage(stderr), exit(2);
	if (o->sessions == 0 || o->rate <= 0)
		die("--sessions and --rate must be above 0", NULL);
	if (o->nspecs && !o->target_port)
		die("--stream needs --target IP:PORT", NULL);
	if (!o->users_file && (!o->user || !o->password))
		die("give --user and --password, or --users FILE", NULL);
	if (strcmp(o->profile, "windows") && strcmp(o->profile, "linux"))
		die("--profile is windows or linux", o->profile);
	if (o->renego && strcmp(o->renego, "auth") && strcmp(o->renego, "up"))
		die("--renegotiate is auth or up", o->renego);
	if (!o->renego && (o->renego_user || o->renego_password ||
	    o->renego_mppe))
		die("--renegotiate-user, -password and -mppe need --renegotiate",
		    NULL);
	if (!o->renego_user != !o->renego_password)
		die("give --renegotiate-user and --renegotiate-password together",
		    NULL);
}

static void read_users(struct run *r)
{
	if (!r->o.users_file) {
		r->users = calloc(1, sizeof(*r->users));
		if (!r->users)
			die("out of memory", NULL);
		r->users[0].name = strdup(r->o.user);
		r->users[0].password = strdup(r->o.password);
		r->nusers = 1;
		return;
	}
	FILE *f = fopen(r->o.users_file, "r");
	char line[512];
	unsigned cap = 0, lineno = 0;

	if (!f)
		die(strerror(errno), r->o.users_file);
	while (fgets(line, sizeof(line), f)) {
		char u[256], p[256];
		lineno++;
		if (line[0] == '#' || sscanf(line, "%255s %255s", u, p) < 1)
			continue;
		if (sscanf(line, "%255s %255s", u, p) != 2) {
			fprintf(stderr, "pptp-load: %s:%u: want USER PASSWORD\n",
			    r->o.users_file, lineno);
			exit(2);
		}
		if (r->nusers == cap) {
			cap = cap ? cap * 2 : 16;
			r->users = realloc(r->users, cap * sizeof(*r->users));
			if (!r->users)
				die("out of memory", NULL);
		}
		r->users[r->nusers].name = strdup(u);
		r->users[r->nusers].password = strdup(p);
		r->nusers++;
	}
	fclose(f);
	if (r->nusers == 0)
		die("no users in", r->o.users_file);
}

static enum ppp_mppe parse_mppe(const char *s, const char *why)
{
	if (strcmp(s, "128") == 0)
		return PPP_MPPE_128;
	if (strcmp(s, "40") == 0)
		return PPP_MPPE_40;
	if (strcmp(s, "any") == 0)
		return PPP_MPPE_ANY;
	if (strcmp(s, "none") == 0)
		return PPP_MPPE_NONE;
	if (strcmp(s, "refuse") == 0)
		return PPP_MPPE_REFUSE;
	die(why, s);
	return PPP_MPPE_NONE;
}

static void ppp_config_from(struct run *r, struct ppp_config *p)
{
	int win = strcmp(r->o.profile, "windows") == 0;

	memset(p, 0, sizeof(*p));
	if (strcmp(r->o.auth, "mschapv2") == 0)
		p->auth = PPP_AUTH_MSCHAPV2;
	else if (strcmp(r->o.auth, "chap") == 0)
		p->auth = PPP_AUTH_CHAP_MD5;
	else if (strcmp(r->o.auth, "pap") == 0)
		p->auth = PPP_AUTH_PAP;
	else
		die("--auth is mschapv2, chap or pap", r->o.auth);
	p->mppe = parse_mppe(r->o.mppe,
	    "--mppe is 128, 40, any, none or refuse");
	p->mppe_stateful = r->o.stateful;
	p->mppe_required = p->mppe != PPP_MPPE_NONE &&
	    p->mppe != PPP_MPPE_REFUSE;
	if (r->o.renego) {
		p->renego = strcmp(r->o.renego, "auth") == 0 ?
		    PPP_RENEGO_AUTH : PPP_RENEGO_UP;
		p->renego_user = r->o.renego_user;
		p->renego_password = r->o.renego_password;
		p->renego_mppe = r->o.renego_mppe ? parse_mppe(r->o.renego_mppe,
		    "--renegotiate-mppe is 128, 40, any, none or refuse") :
		    p->mppe;
		p->renego_mppe_required = p->renego_mppe != PPP_MPPE_NONE &&
		    p->renego_mppe != PPP_MPPE_REFUSE;
	}
	/* Windows: MRU 1400, CBCP and Identification, DNS/WINS, IPV6CP;
	 * pppd under pptp-linux: its default MRU and none of those */
	p->mru = win ? 1400 : 1500;
	p->windows = win;
	p->want_dns = win;
	p->ipv6cp = win;
}

static long rss_kb(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = 0;
	fclose(f);
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/* ---- TUN mode: session 0's datagrams to and from a TUN interface ---- */

static int tun_ioctl_addr(int s, const char *name, unsigned long req,
    struct in_addr a)
{
	struct ifreq ifr;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = a };

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	memcpy(&ifr.ifr_addr, &sa, sizeof(sa));
	return ioctl(s, req, &ifr);
}

static int tun_open(struct run *r, const struct ppp_facts *f)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc = -1;

	if (fd < 0 || s < 0)
		goto out;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", r->o.tun);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0 ||
	    tun_ioctl_addr(s, r->o.tun, SIOCSIFADDR, f->local) < 0 ||
	    tun_ioctl_addr(s, r->o.tun, SIOCSIFDSTADDR, f->peer) < 0)
		goto out;
	ifr.ifr_mtu = (f->peer_mru ? f->peer_mru : 1500) -
	    (f->mppe_bits ? TUN_MTU_MPPE_OVERHEAD : 0);
	if (ioctl(s, SIOCSIFMTU, &ifr) < 0)
		goto out;
	ifr.ifr_flags = IFF_UP | IFF_POINTOPOINT | IFF_RUNNING | IFF_NOARP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		goto out;
	r->tun_tag.kind = EPK_TUN;
	r->tun_tag.fd = fd;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &r->tun_tag };
	if (epoll_ctl(r->env.epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		goto out;
	rc = 0;
out:
	if (s >= 0)
		close(s);
	if (rc < 0) {
		fprintf(stderr, "pptp-load: tun %s: %s\n", r->o.tun,
		    strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return rc;
}

static void tun_read(struct run *r)
{
	uint8_t buf[2048];

	for (int i = 0; i < 64; i++) {
		ssize_t n = read(r->tun_tag.fd, buf, sizeof(buf));
		if (n <= 0)
			return;
		if (r->tun_session)
			(void)session_send_ip(r->tun_session, buf, (size_t)n);
	}
}

static void tun_input(void *arg, struct session *s, const uint8_t *ip,
    size_t len)
{
	struct run *r = arg;

	(void)s;
	if (r->tun_tag.fd > 0 && write(r->tun_tag.fd, ip, len) < 0) {
		/* a full queue drops the datagram, like a real link */
	}
}

/* ---- the loop ---- */

static void on_up(void *arg, struct session *s)
{
	struct run *r = arg;
	char a[INET_ADDRSTRLEN];

	/* the first session pays the one-time costs (libcrypto's tables,
	 * the GRE socket's buffers): the per-session figure starts after it */
	if (++r->up == 1)
		r->rss_first = rss_kb();
	if (s->tun) {
		if (tun_open(r, &s->facts) == 0) {
			r->tun_session = s;
			inet_ntop(AF_INET, &s->facts.local, a, sizeof(a));
			fprintf(stderr, "pptp-load: session 0 on %s, address %s\n",
			    r->o.tun, a);
		}
	}
}

static void on_end(void *arg, struct session *s)
{
	struct run *r = arg;

	if (s == r->tun_session)
		r->tun_session = NULL;
}

static int all_settled(const struct run *r)
{
	if (r->started < r->o.sessions)
		return 0;
	for (unsigned i = 0; i < r->o.sessions; i++)
		if (r->ss[i].state < SS_UP)
			return 0;
	return 1;
}

static int all_streams_done(const struct run *r)
{
	for (unsigned i = 0; i < r->o.sessions; i++)
		if (!session_streams_done(&r->ss[i]))
			return 0;
	return 1;
}

static int all_done(const struct run *r)
{
	for (unsigned i = 0; i < r->started; i++)
		if (r->ss[i].state != SS_DONE)
			return 0;
	return 1;
}

/* Sessions started and not yet up or failed. --max-setup caps them: a
 * server that sets sessions up slower than --rate is then not buried
 * under setups that all time out; the rate follows the server. */
static unsigned setups_pending(const struct run *r)
{
	unsigned pending = 0;

	for (unsigned i = 0; i < r->started; i++)
		if (r->ss[i].state < SS_UP)
			pending++;
	return pending;
}

static int setup_full(const struct run *r, unsigned pending)
{
	return r->o.max_setup && pending >= r->o.max_setup;
}

static uint64_t next_start(const struct run *r)
{
	return r->t0 + (uint64_t)(r->started * 1000.0 / r->o.rate);
}

static void start_one(struct run *r, uint64_t now)
{
	unsigned i = r->started++;
	struct in_addr src = { 0 };
	const struct user *u = &r->users[i % r->nusers];

	if (r->o.src_count)
		src.s_addr = htonl(ntohl(r->o.src_first.s_addr) +
		    i % r->o.src_count);
	/* serial numbers from 1, as Windows counts its calls */
	session_init(&r->ss[i], &r->env, i, src, u->name, u->password,
	    (uint16_t)(i + 1));
	r->ss[i].tun = r->o.tun && i == 0;
	session_start(&r->ss[i], now);
}

static void dispatch(struct run *r, struct epoll_event *ev, uint64_t now,
    int *stop)
{
	int kind = *(int *)ev->data.ptr;

	switch (kind) {
	case EPK_SESSION:
		session_event(ev->data.ptr, ev->events, now);
		break;
	case EPK_GRE:
		grelink_input(r->env.gre, now);
		break;
	case EPK_TUN:
		tun_read(r);
		break;
	case EPK_SIGNAL: {
		struct signalfd_siginfo si;
		if (read(r->sig_tag.fd, &si, sizeof(si)) > 0)
			*stop = 1;
		break;
	}
	}
}

static int run_loop(struct run *r, long *rss_idle_kb, unsigned *rss_n)
{
	uint64_t deadline = r->t0 + (uint64_t)(r->o.deadline_s * 1000);
	uint64_t reserve = r->o.deadline_s * 1000 > 2 * TEARDOWN_MS ?
	    TEARDOWN_MS : (uint64_t)(r->o.deadline_s * 500);
	uint64_t settled_at = 0, next_progress = r->t0 + PROGRESS_MS;
	int stop = 0, closing = 0;
	struct epoll_event evs[EVENTS_MAX];

	for (;;) {
		uint64_t now = clock_ms();
		unsigned pending = r->o.max_setup ? setups_pending(r) : 0;
		while (!closing && r->started < r->o.sessions &&
		    now >= next_start(r) && !setup_full(r, pending)) {
			start_one(r, now);
			pending++;
		}
		if (!settled_at && all_settled(r)) {
			settled_at = now;
			r->all_up_ms = r->up ? now - r->t0 : 0;
			if (r->up > 1) {
				*rss_idle_kb = rss_kb() - r->rss_first;
				*rss_n = r->up - 1;
			}
		}
		if (!closing && (stop || now + reserve >= deadline ||
		    (settled_at && !r->o.tun && all_streams_done(r) &&
		    now >= settled_at + (uint64_t)(r->o.hold_s * 1000)))) {
			closing = 1;
			for (unsigned i = 0; i < r->started; i++)
				session_close(&r->ss[i], now, SR_DEADLINE);
			for (unsigned i = r->started; i < r->o.sessions; i++)
				r->ss[i].reason = SR_DEADLINE;
		}
		if (closing && all_done(r))
			return 0;
		if (now >= deadline)
			return -1;
		struct timer *t;
		while ((t = timers_pop_due(r->env.timers, now)) != NULL)
			t->fn(t->arg);
		if (r->o.progress && now >= next_progress) {
			report_progress(stderr, r->ss, r->started, now - r->t0);
			next_progress = now + PROGRESS_MS;
		}
		uint64_t wake = deadline, nt = timers_next(r->env.timers);
		if (nt && nt < wake)
			wake = nt;
		/* held back by --max-setup: a session's progress (an event)
		 * or the 100-ms tick below looks again */
		if (!closing && r->started < r->o.sessions &&
		    !setup_full(r, pending)) {
			uint64_t ns = next_start(r);
			if (ns < wake)
				wake = ns;
		}
		if (now + 100 < wake)
			wake = now + 100;    /* end conditions, progress */
		int ms = wake > now ? (int)(wake - now) : 0;
		int n = epoll_wait(r->env.epfd, evs, EVENTS_MAX, ms);
		now = clock_ms();
		for (int i = 0; i < n; i++)
			dispatch(r, &evs[i], now, &stop);
	}
}

static int setup(struct run *r)
{
	static struct timers timers;
	sigset_t set;

	timers_init(&timers);
	memset(&r->env, 0, sizeof(r->env));
	r->env.timers = &timers;
	r->env.epfd = epoll_create1(EPOLL_CLOEXEC);
	r->env.gre = grelink_open();
	if (r->env.epfd < 0 || !r->env.gre) {
		fprintf(stderr, "pptp-load: raw GRE socket: %s (needs root or "
		    "CAP_NET_RAW)\n", strerror(errno));
		return -1;
	}
	r->env.server.sin_family = AF_INET;
	r->env.server.sin_port = htons(PPTP_PORT);
	if (inet_pton(AF_INET, r->o.server, &r->env.server.sin_addr) != 1)
		die("--server must be an IPv4 address", r->o.server);
	r->env.profile = strcmp(r->o.profile, "windows") == 0 ?
	    CTRL_PROFILE_WINDOWS : CTRL_PROFILE_LINUX;
	ppp_config_from(r, &r->env.ppp);
	r->env.setup_ms = (uint32_t)(r->o.setup_s * 1000);
	r->env.specs = r->o.spec;
	r->env.nspecs = r->o.nspecs;
	r->env.rtt = calloc(STREAMS_MAX, sizeof(struct hist));
	r->env.target = r->o.target;
	r->env.target_port = r->o.target_port;
	r->env.run_tag = (uint8_t)random();
	r->env.on_up = on_up;
	r->env.on_end = on_end;
	r->env.tun_input = tun_input;
	r->env.arg = r;
	r->ss = calloc(r->o.sessions, sizeof(*r->ss));
	if (!r->ss || !r->env.rtt)
		die("out of memory", NULL);

	r->gre_tag.kind = EPK_GRE;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &r->gre_tag };
	epoll_ctl(r->env.epfd, EPOLL_CTL_ADD, grelink_fd(r->env.gre), &ev);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	r->sig_tag.kind = EPK_SIGNAL;
	r->sig_tag.fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	ev.data.ptr = &r->sig_tag;
	epoll_ctl(r->env.epfd, EPOLL_CTL_ADD, r->sig_tag.fd, &ev);
	signal(SIGPIPE, SIG_IGN);
	/* a descriptor per session, and some */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max &&
	    rl.rlim_cur < r->o.sessions + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct run r;
	struct report_run rep;
	long rss_idle = 0;
	unsigned rss_n = 0;

	parse_opts(&r.o, argc, argv);
	read_users(&r);
	srandom((unsigned)clock_ns() ^ (unsigned)getpid());
	if (setup(&r) < 0)
		return 1;
	r.t0 = clock_ms();
	int late = run_loop(&r, &rss_idle, &rss_n);
	if (r.o.progress)
		fprintf(stderr, "\n");

	memset(&rep, 0, sizeof(rep));
	rep.sessions = r.ss;
	rep.n = r.started;
	rep.specs = r.o.spec;
	rep.nspecs = r.o.nspecs;
	rep.rtt = r.env.rtt;
	rep.profile = r.o.profile;
	rep.mppe = r.o.mppe;
	rep.server = r.o.server;
	rep.run_ms = clock_ms() - r.t0;
	rep.all_up_ms = r.all_up_ms;
	getrusage(RUSAGE_SELF, &rep.ru);
	rep.rss_idle_kb = rss_idle;
	rep.rss_idle_sessions = rss_n;
	rep.gre_foreign = grelink_foreign(r.env.gre);
	report_print(stdout, &rep);
	if (late)
		printf("teardown did not finish by the deadline\n");
	if (r.o.json && report_json(r.o.json, &rep) < 0)
		fprintf(stderr, "pptp-load: %s: %s\n", r.o.json, strerror(errno));

	unsigned up = 0;
	for (unsigned i = 0; i < r.started; i++) {
		up += r.ss[i].was_up;
		session_free(&r.ss[i]);
	}
	free(r.ss);
	free(r.env.rtt);
	for (unsigned i = 0; i < r.nusers; i++) {
		free(r.users[i].name);
		free(r.users[i].password);
	}
	free(r.users);
	grelink_close(r.env.gre);
	close(r.env.epfd);
	/* exit status: 0 when every session came up */
	return up == r.o.sessions ? 0 : 1;
}
