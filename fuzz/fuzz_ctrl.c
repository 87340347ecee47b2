/* Fuzz the real control-connection state machine (pptpd/ctrl.c) with a byte
 * stream from a hostile PNS, delivered over a socketpair in reads of
 * arbitrary sizes. Calls are stand-ins (no pppd, no GRE): call_new() and
 * call_end() below keep the bookkeeping ctrl.c relies on. Between reads the
 * harness may leave our replies unread (to fill the output buffer), fire
 * the setup and echo timers, or end a call as if its pppd died.
 *
 * Checks, besides memory safety and leaks: every byte the daemon sends is a
 * well-formed control message of a kind a PAC sends; the call count matches
 * the call list; the buffers stay within their bounds.
 *
 * Input: 1 flags byte, 2 bytes of cut-point seed, then the stream.
 * Flags: 1 read replies only now and then, 2 fire the echo timer, 4 fire the
 * setup timer, 8 end calls as if pppd died, 16 the peer hangs up at the end,
 * 32 send the stream 64 times over (to get past the output buffer's bound
 * within libFuzzer's input size), 64 never read the replies. */
#include <fcntl.h>
#include <sys/socket.h>

/* The state machine itself, with its static functions in reach. */
#include "pptpd/ctrl.c"

#include "fuzz/fuzz_util.h"

/* ---- stand-ins for call.c and for the server's end of struct ctrls ---- */

static unsigned fz_live_calls;
static uint16_t fz_next_id;

struct call *
call_new(struct calls *s, const struct call_conn *conn,
    struct client *client, const struct pptp_msg *ocrq, uint8_t *result,
    uint8_t *error, const char **reason)
{
	*result = PPTP_OCRP_GENERAL_ERROR;
	*error = PPTP_ERR_NO_RESOURCE;
	/* Let the input choose failure, and cap the total like a pool. */
	if (fz_live_calls >= 24 || (ocrq->u.ocrq.serial & 0x8000)) {
		*reason = "address pool exhausted";
		return NULL;
	}
	struct call *c = calloc(1, sizeof(*c));
	if (c == NULL)
		abort();
	c->calls = s;
	c->conn = *conn;
	c->client = client;
	c->peer = conn->peer;
	c->peer_id = ocrq->u.ocrq.call_id;
	c->id = fz_next_id++;   /* 0x100, 0x101, ...: predictable for SLI */
	c->pty = -1;
	c->state = CALL_ACTIVE;
	client_call_add(client);
	TAILQ_INSERT_TAIL(&s->list, c, s_entry);
	fz_live_calls++;
	log_msg(LOG_INFO, "call %u/%u %s: started", c->id, c->peer_id,
	    conn->peer_str);
	return c;
}

int
call_is_live(const struct call *c)
{
	return c->state == CALL_ACTIVE || c->state == CALL_HANGUP;
}

/* Ends the call and, as if pppd were reaped at once, frees it. */
void
call_end(struct call *c, uint8_t cdn_result, const char *reason)
{
	(void)reason;
	if (!call_is_live(c))
		return;
	c->state = CALL_ENDING;
	if (c->conn.arg != NULL)
		c->conn.ended(c->conn.arg, c, cdn_result);
	if (c->conn.arg != NULL)
		c->conn.gone(c->conn.arg, c);
	client_call_gone(c->client);
	TAILQ_REMOVE(&c->calls->list, c, s_entry);
	fz_live_calls--;
	free(c);
}

/* pppd would end LCP: the harness ends hung-up calls with flag 8. */
void
call_hangup(struct call *c, uint8_t cdn_result, enum report_cause cause,
    const char *reason)
{
	(void)cause;
	(void)reason;
	if (c->state == CALL_ACTIVE) {
		c->state = CALL_HANGUP;
		c->hangup_result = cdn_result;
	}
}

void
call_detach(struct call *c)
{
	c->conn.arg = NULL;
}

/* A worker's resume (privsep) is not reached from the network: never
 * called here. */
struct call *
call_resume(struct calls *s, const struct call_conn *conn,
    struct client *client, struct pppd_resumed *r, const char **reason)
{
	(void)s; (void)conn; (void)client; (void)r; (void)reason;
	abort();
}

void
call_resume_failed(struct call *c, const char *reason)
{
	(void)c; (void)reason;
	abort();
}

void
call_set_accm(struct call *c, uint32_t send_accm, uint32_t recv_accm)
{
	if (!call_is_live(c))
		abort();
	(void)send_accm; (void)recv_accm;
}

static void
fz_ctrl_gone(void *arg)
{
	(void)arg;
}

static void
fz_call_setup(void *arg, const char *refusal)
{
	(void)arg;
	(void)refusal;
}

/* ---- checks ---- */

/* What the daemon wrote back, reassembled and checked message by message. */
struct fz_out {
	uint8_t buf[CTRL_OUTBUF_LEN + PPTP_MAX_MSG_LEN];
	size_t  len;
};

static void
fz_check_output(struct fz_out *o, int fd)
{
	for (;;) {
		ssize_t n = read(fd, o->buf + o->len, sizeof(o->buf) - o->len);
		if (n <= 0)
			break;
		o->len += (size_t)n;
		size_t off = 0;
		for (;;) {
			const char *reason = NULL;
			struct pptp_msg m;
			ssize_t len = msg_frame(o->buf + off, o->len - off, &reason);
			if (len < 0)
				abort();   /* the daemon sent garbage */
			if (len == 0 || (size_t)len > o->len - off)
				break;
			if (msg_decode(o->buf + off, (size_t)len, &m, &reason) < 0)
				abort();
			switch (m.type) {
			case PPTP_SCCRP: case PPTP_STOPCCRQ: case PPTP_STOPCCRP:
			case PPTP_ECHORQ: case PPTP_ECHORP: case PPTP_OCRP:
			case PPTP_ICRP: case PPTP_CDN:
				break;
			default:
				abort();   /* not something a PAC says */
			}
			off += (size_t)len;
		}
		memmove(o->buf, o->buf + off, o->len - off);
		o->len -= off;
	}
}

static void
fz_check_ctrl(const struct ctrl *c)
{
	unsigned n = 0;
	const struct call *call;
	TAILQ_FOREACH(call, &c->calls, c_entry) {
		if (call->conn.arg != c || !call_is_live(call))
			abort();
		n++;
	}
	/* (calls are reaped at once here: every listed call is live) */
	if (n != c->ncalls || n != c->nlive ||
	    n > (unsigned)c->ctrls->conf->calls_per_conn)
		abort();
	if (c->outlen > sizeof(c->out) || c->lowat < 0 ||
	    c->lowat > PPTP_MAX_MSG_LEN)
		abort();
}

static struct conf fz_conf;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_out out;
	struct fz_rng rng;
	int sv[2];

	if (size < 3)
		return 0;
	uint8_t flags = data[0];
	fz_rng_init(&rng, (uint32_t)data[1] << 8 | data[2]);
	data += 3;
	size -= 3;

	fz_conf.stimeout = 30;
	fz_conf.connections = 100;
	fz_conf.calls_per_conn = 4;
	fz_conf.calls_per_client = 8;
	fz_conf.setups = fz_conf.setups_per_client = 64;
	fz_conf.call_rate = 10000;
	fz_live_calls = 0;
	fz_next_id = 0x100;
	out.len = 0;

	struct loop *l = loop_new();
	if (l == NULL || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sv) < 0)
		abort();
	/* Small socket buffers, so that an unread peer fills ours quickly. */
	int small = 4096;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));

	struct ctrls s;
	struct calls calls;
	struct clients *clients;
	struct ratelimit rl_input = LOG_RL_INIT;
	memset(&s, 0, sizeof(s));
	memset(&calls, 0, sizeof(calls));
	TAILQ_INIT(&calls.list);
	calls.conf = &fz_conf;
	calls.loop = l;
	calls.rl_input = &rl_input;
	ctrls_init(&s);
	s.conf = &fz_conf;
	s.loop = l;
	s.calls = &calls;
	s.rl_input = &rl_input;
	s.call_setup = fz_call_setup;
	s.gone = fz_ctrl_gone;
	if ((clients = clients_new()) == NULL)
		abort();
	struct client *cl = clients_get(clients, (struct in_addr){ htonl(0xc6120002) }, 0);
	struct sockaddr_in peer = { .sin_family = AF_INET, .sin_port = htons(40000),
		.sin_addr = { htonl(0xc6120002) } };
	struct sockaddr_in local = { .sin_family = AF_INET, .sin_port = htons(PPTP_PORT),
		.sin_addr = { htonl(0xc6120001) } };

	struct ctrl *c = ctrl_new(&s, sv[0], &peer, &local, cl);
	if (c == NULL)
		abort();
	if (s.n != 1)
		abort();

	const uint8_t *stream = data;
	size_t stream_len = size;
	int reps = (flags & 32) ? 64 : 1;
again:
	while (size > 0 && c->state != CTRL_CLOSED) {
		size_t n = fz_chunk(&rng, size);
		ssize_t w = write(sv[1], data, n);
		if (w <= 0) {
			/* Our side's receive buffer is full: let the daemon read. */
			ctrl_ready(c, EPOLLIN);
			if (c->state == CTRL_CLOSED)
				break;
			if (!(flags & 64))
				fz_check_output(&out, sv[1]);
			continue;
		}
		data += w;
		size -= (size_t)w;
		ctrl_ready(c, EPOLLIN);
		if (c->state == CTRL_CLOSED)
			break;
		fz_check_ctrl(c);

		uint32_t r = fz_rng_next(&rng);
		if (!(flags & 64) && (!(flags & 1) || (r & 7) == 0)) {
			fz_check_output(&out, sv[1]);
			if (c->outlen > 0)
				ctrl_ready(c, EPOLLOUT);
			if (c->state == CTRL_CLOSED)
				break;
		}
		if ((flags & 2) && (r >> 3) % 16 == 0 && loop_timer_armed(&c->echo_timer))
			ctrl_echo_timeout(c);
		else if ((flags & 4) && (r >> 3) % 32 == 1 && loop_timer_armed(&c->setup_timer))
			ctrl_setup_timeout(c);
		else if ((flags & 4) && (r >> 3) % 32 == 3 && loop_timer_armed(&c->stop_timer))
			ctrl_stop_timeout(c);
		else if ((flags & 8) && (r >> 3) % 8 == 2 && !TAILQ_EMPTY(&c->calls))
			call_end(TAILQ_FIRST(&c->calls), PPTP_CDN_LOST_CARRIER,
			    "pppd exited with status 1");
		if (c->state == CTRL_CLOSED)
			break;
		fz_check_ctrl(c);
	}
	if (c->state != CTRL_CLOSED && --reps > 0) {
		data = stream;
		size = stream_len;
		goto again;
	}
	if (c->state != CTRL_CLOSED) {
		if (flags & 16) {
			shutdown(sv[1], SHUT_WR);   /* the peer hangs up */
			for (int i = 0; i < 64 && c->state != CTRL_CLOSED; i++) {
				ctrl_ready(c, EPOLLIN | EPOLLHUP);
				if (c->state != CTRL_CLOSED)
					fz_check_output(&out, sv[1]);
			}
			if (c->state != CTRL_CLOSED)
				abort();   /* EOF must close the connection */
		} else {
			ctrl_close(c, "end of fuzz input");
		}
	}
	if (s.n != 0 || fz_live_calls != 0 || !TAILQ_EMPTY(&calls.list))
		abort();   /* closing a connection must end all its calls */
	fz_check_output(&out, sv[1]);
	if (client_calls(cl) != 0 || client_ctrls(cl) != 0)
		abort();   /* the client's counts come back to zero */
	clients_free(clients);
	loop_free(l);
	close(sv[1]);
	return 0;
}
