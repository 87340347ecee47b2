/* Fixed-rate streams (see stream.h). */
#include "client/stream.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/ipudp.h"

static const char *const dirs[] = { "up", "down", "echo" };

const char *stream_dir_str(enum stream_dir d)
{
	return (unsigned)d < 3 ? dirs[d] : "?";
}

/* Rates are kept in packets per 1000 s (STREAM_MPPS_PER_PPS per packet a
 * second), so a session can send one datagram every few seconds. */
#define STREAM_MPPS_PER_PPS 1000
#define STREAM_MPPS_MAX     (10000000ull * STREAM_MPPS_PER_PPS)

static int parse_rate(const char *s, const char *end, uint32_t size,
    uint64_t *mpps)
{
	char *e;
	double v = strtod(s, &e);
	size_t rest = (size_t)(end - e);

	if (e == s || v <= 0)
		return -1;
	double pps;
	if (rest == 3 && strncasecmp(e, "pps", 3) == 0) {
		pps = v;
	} else {
		if (rest == 1) {
			switch (*e) {
			case 'k': case 'K': v *= 1e3; break;
			case 'm': case 'M': v *= 1e6; break;
			case 'g': case 'G': v *= 1e9; break;
			default: return -1;
			}
		} else if (rest != 0) {
			return -1;
		}
		pps = v / (8.0 * (size + IPUDP_HDR_LEN));
	}
	double m = pps * STREAM_MPPS_PER_PPS;
	if (m < 1 || m > (double)STREAM_MPPS_MAX)
		return -1;
	*mpps = (uint64_t)(m + 0.5);
	return 0;
}

double stream_pps(const struct stream_spec *spec)
{
	return (double)spec->mpps / STREAM_MPPS_PER_PPS;
}

static int parse_duration(const char *s, const char *end, uint32_t *ms)
{
	char *e;
	double v = strtod(s, &e);
	size_t rest = (size_t)(end - e);

	if (e == s || v <= 0)
		return -1;
	if (rest == 2 && strncmp(e, "ms", 2) == 0)
		*ms = (uint32_t)v;
	else if (rest == 0 || (rest == 1 && *e == 's'))
		*ms = (uint32_t)(v * 1000);
	else
		return -1;
	return *ms ? 0 : -1;
}

/* pptp-echo sends a down stream at whole packets/s (its start probe
 * carries a u32 pps): round to that, so what we count as sent is what it
 * sends. */
static int stream_spec_down_rate(struct stream_spec *spec, const char **why)
{
	if (spec->dir != STREAM_DOWN)
		return 0;
	uint64_t pps = (spec->mpps + STREAM_MPPS_PER_PPS / 2) /
	    STREAM_MPPS_PER_PPS;
	if (pps == 0) {
		*why = "a down stream needs at least 1 packet/s";
		return -1;
	}
	spec->mpps = pps * STREAM_MPPS_PER_PPS;
	return 0;
}

int stream_spec_parse(const char *str, struct stream_spec *spec,
    const char **why)
{
	const char *f[4], *fe[4], *p = str;

	for (int i = 0; i < 4; i++) {
		f[i] = p;
		const char *c = strchr(p, ',');
		fe[i] = c ? c : p + strlen(p);
		if (!c && i < 3) {
			*why = "want SIZE,RATE,DURATION,DIRECTION";
			return -1;
		}
		p = c ? c + 1 : fe[i];
	}
	if (*fe[3] != '\0') {
		*why = "want SIZE,RATE,DURATION,DIRECTION";
		return -1;
	}
	char *e;
	unsigned long size = strtoul(f[0], &e, 10);
	if (e != fe[0] || size < PROBE_HDR_LEN || size > PROBE_MAX_LEN) {
		*why = "size must be 28..1472 bytes of UDP payload";
		return -1;
	}
	spec->size = (uint32_t)size;
	if (parse_rate(f[1], fe[1], spec->size, &spec->mpps) < 0) {
		*why = "bad rate (bit/s with k/M/G, or N pps)";
		return -1;
	}
	if (parse_duration(f[2], fe[2], &spec->duration_ms) < 0) {
		*why = "bad duration (seconds, or N ms)";
		return -1;
	}
	size_t dl = (size_t)(fe[3] - f[3]);
	for (int d = 0; d < 3; d++)
		if (dl == strlen(dirs[d]) && strncmp(f[3], dirs[d], dl) == 0) {
			spec->dir = (enum stream_dir)d;
			return stream_spec_down_rate(spec, why);
		}
	*why = "direction must be up, down or echo";
	return -1;
}

void stream_init(struct stream *s, const struct stream_spec *spec,
    uint32_t id, struct hist *rtt)
{
	memset(s, 0, sizeof(*s));
	s->spec = spec;
	s->id = id;
	s->rtt = rtt;
	acct_init(&s->acct);
}

static void stream_begin(struct stream *s, uint64_t now)
{
	s->t0_ms = now;
	s->end_ms = now + s->spec->duration_ms;
	s->next_ms = now;
	s->retries = 0;
	s->phase = STREAM_SENDING;
}

void stream_start(struct stream *s, uint64_t now)
{
	if (s->spec->dir == STREAM_DOWN) {
		/* its start probe already waits for the path (down_tick) */
		stream_begin(s, now);
		return;
	}
	s->phase = STREAM_CHECKING;
	s->retries = 0;
	s->retry_ms = now;
}

static int send_probe(struct stream *s, struct probe *p, size_t len,
    stream_send_fn send, void *arg)
{
	uint8_t buf[PROBE_MAX_LEN];
	size_t n;

	p->stream = s->id;
	n = probe_encode(p, buf, sizeof(buf), len);
	return n ? send(arg, buf, n) : -1;
}

/* Up and echo: packet i is due at t0 + i / pps (ms times mpps: packets
 * times 10^6). */
#define STREAM_MS_MPPS (1000ull * STREAM_MPPS_PER_PPS)

static uint64_t send_due(struct stream *s, uint64_t now, uint64_t now_ns,
    stream_send_fn send, void *arg)
{
	uint64_t mpps = s->spec->mpps;
	uint64_t total = mpps * s->spec->duration_ms / STREAM_MS_MPPS;
	uint64_t due = (now - s->t0_ms) * mpps / STREAM_MS_MPPS + 1;
	unsigned burst = 0;

	if (total == 0)
		total = 1;
	if (due > total)
		due = total;
	while (s->sent < due && burst++ < STREAM_BURST) {
		/* counted before it goes, so an echo can never come back
		 * faster than the count; a send that fails (queue full)
		 * counts as sent and lost */
		struct probe p = { .type = PROBE_DATA, .seq = s->sent++,
			.ts_ns = now_ns, .mode = s->spec->dir == STREAM_ECHO ?
			    PROBE_MODE_ECHO : PROBE_MODE_SINK };
		(void)send_probe(s, &p, s->spec->size, send, arg);
	}
	if (s->sent >= total) {
		s->phase = STREAM_DRAINING;
		s->end_ms = now;
		return now + STREAM_GRACE_MS;
	}
	if (s->sent < due)
		return now;   /* behind: go on at once */
	return s->t0_ms + (s->sent * STREAM_MS_MPPS + mpps - 1) / mpps;
}

static uint64_t down_tick(struct stream *s, uint64_t now, stream_send_fn send,
    void *arg)
{
	/* the start probe until the first datagram shows it arrived */
	if (!s->acct.started && s->retries < STREAM_RETRIES &&
	    now >= s->retry_ms) {
		struct probe p = { .type = PROBE_START_DOWN,
			.size = s->spec->size,
			.pps = (uint32_t)(s->spec->mpps / STREAM_MPPS_PER_PPS),
			.duration_ms = s->spec->duration_ms };
		(void)send_probe(s, &p, 0, send, arg);
		s->retries++;
		s->retry_ms = now + STREAM_RETRY_MS;
	}
	uint64_t stop = s->end_ms + STREAM_GRACE_MS +
	    (uint64_t)s->retries * STREAM_RETRY_MS;
	if (now >= stop) {
		s->phase = STREAM_DONE;
		return 0;
	}
	if (!s->acct.started && s->retries < STREAM_RETRIES)
		return s->retry_ms < stop ? s->retry_ms : stop;
	return stop;
}

uint64_t stream_tick(struct stream *s, uint64_t now, uint64_t now_ns,
    stream_send_fn send, void *arg)
{
	switch (s->phase) {
	case STREAM_CHECKING:
		if (s->path_ok || s->retries >= STREAM_RETRIES) {
			stream_begin(s, now);
			return now;
		}
		if (now >= s->retry_ms) {
			struct probe p = { .type = PROBE_REPORT_REQ };
			(void)send_probe(s, &p, 0, send, arg);
			s->retries++;
			s->retry_ms = now + STREAM_CHECK_MS;
		}
		return s->retry_ms;
	case STREAM_SENDING:
		if (s->spec->dir == STREAM_DOWN)
			return down_tick(s, now, send, arg);
		return send_due(s, now, now_ns, send, arg);
	case STREAM_DRAINING:
		if (now < s->end_ms + STREAM_GRACE_MS)
			return s->end_ms + STREAM_GRACE_MS;
		if (s->spec->dir != STREAM_UP) {
			s->phase = STREAM_DONE;
			return 0;
		}
		s->phase = STREAM_REPORTING;
		s->retries = 0;
		s->retry_ms = now;
		/* fall through */
	case STREAM_REPORTING:
		if (s->reported || s->retries >= STREAM_RETRIES) {
			s->phase = STREAM_DONE;
			return 0;
		}
		if (now >= s->retry_ms) {
			struct probe p = { .type = PROBE_REPORT_REQ };
			(void)send_probe(s, &p, 0, send, arg);
			s->retries++;
			s->retry_ms = now + STREAM_RETRY_MS;
		}
		return s->retry_ms;
	default:
		return 0;
	}
}

void stream_input(struct stream *s, const struct probe *p, uint64_t now_ns)
{
	if (s->phase == STREAM_IDLE || s->phase == STREAM_DONE)
		return;
	if (p->type == PROBE_REPORT && s->phase == STREAM_CHECKING) {
		s->path_ok = 1;
		return;
	}
	if (p->type == PROBE_REPORT) {
		if (s->spec->dir == STREAM_UP && s->phase == STREAM_REPORTING) {
			s->report = *p;
			s->reported = 1;
		}
		return;
	}
	if (p->type != PROBE_DATA)
		return;
	if (s->spec->dir == STREAM_ECHO && p->mode == PROBE_MODE_ECHO) {
		if (p->seq >= s->sent)
			return;   /* never sent: not an echo of ours */
		enum acct_verdict v = acct_input(&s->acct, p->seq, p->ts_ns,
		    now_ns);
		if (v == ACCT_NEW || v == ACCT_REORDERED) {
			uint64_t rtt = now_ns - p->ts_ns;
			if (s->acct.received == 1 || rtt < s->rtt_min_ns)
				s->rtt_min_ns = rtt;
			if (rtt > s->rtt_max_ns)
				s->rtt_max_ns = rtt;
			if (s->rtt)
				hist_add(s->rtt, rtt / 1000);
		}
	} else if (s->spec->dir == STREAM_DOWN && p->mode == PROBE_MODE_DOWN) {
		acct_input(&s->acct, p->seq, p->ts_ns, now_ns);
	}
}

int stream_done(const struct stream *s)
{
	return s->phase == STREAM_DONE;
}

void stream_result(const struct stream *s, struct stream_result *r)
{
	memset(r, 0, sizeof(*r));
	switch (s->spec->dir) {
	case STREAM_UP:
		r->sent = s->sent;
		if (s->reported) {
			r->received = s->report.received;
			r->reordered = s->report.reordered;
			r->duplicates = s->report.duplicates;
			r->lost = r->sent > r->received ? r->sent - r->received : 0;
		}
		break;
	case STREAM_ECHO:
		r->sent = s->sent;
		r->received = s->acct.received;
		r->reordered = s->acct.reordered;
		r->duplicates = s->acct.duplicates;
		r->lost = acct_lost(&s->acct, s->sent);
		r->jitter_ns = acct_jitter_ns(&s->acct);
		break;
	case STREAM_DOWN:
		r->sent = s->acct.started ? s->acct.max_seq + 1 : 0;
		r->received = s->acct.received;
		r->reordered = s->acct.reordered;
		r->duplicates = s->acct.duplicates;
		r->lost = acct_lost(&s->acct, 0);
		r->jitter_ns = acct_jitter_ns(&s->acct);
		break;
	}
}
