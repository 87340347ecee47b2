/* A fixed-rate UDP stream of one session: up (pptp-echo counts and reports
 * at the end), down (pptp-echo sends at the rate, asked by a start probe)
 * or echo (pptp-echo sends each datagram back; RTT from our timestamps).
 * The stream builds probes; the session wraps them in IPv4/UDP and PPP. */
#ifndef CLIENT_STREAM_H
#define CLIENT_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "client/acct.h"
#include "client/probe.h"

enum stream_dir { STREAM_UP, STREAM_DOWN, STREAM_ECHO };

struct stream_spec {
	enum stream_dir dir;
	uint32_t size;          /* UDP payload bytes */
	uint64_t mpps;          /* rate in packets per 1000 s: 0.2 pps is 200 */
	uint32_t duration_ms;
};

/* Parse "SIZE,RATE,DURATION,DIRECTION": RATE in bit/s (k/M/G suffixes,
 * counting the whole IPv4 datagram) or packets/s ("100pps", "0.2pps": rates
 * below one packet a second let thousands of sessions share a fixed total;
 * a down stream's is whole packets/s, what pptp-echo is asked for),
 * DURATION in
 * seconds ("10", "0.5") or with "ms". Returns 0, or -1 with *why set. */
int stream_spec_parse(const char *s, struct stream_spec *spec,
    const char **why);
const char *stream_dir_str(enum stream_dir d);
/* The spec's rate in packets/s. */
double stream_pps(const struct stream_spec *spec);

/* Time after the last packet (or the end of a down stream) for the last
 * ones to arrive, and the retry period of start and report probes. */
#define STREAM_GRACE_MS   1000
#define STREAM_RETRY_MS   300
#define STREAM_RETRIES    5
/* At most this many packets per tick: a stalled loop catches up in
 * bursts no larger than this. */
#define STREAM_BURST      64

/* Up and echo streams first ask pptp-echo for a report every
 * STREAM_CHECK_MS until one comes back (at most STREAM_RETRIES times): the
 * client calls its link up when IPCP opens on its side, the server's pppd
 * a moment later, and datagrams sent in between are dropped by the
 * server's ppp unit. Counting starts once the path has answered, so that
 * window is not reported as loss of the tunnel. */
#define STREAM_CHECK_MS   100

enum stream_phase { STREAM_IDLE, STREAM_CHECKING, STREAM_SENDING,
	STREAM_DRAINING, STREAM_REPORTING, STREAM_DONE };

struct stream {
	const struct stream_spec *spec;
	uint32_t id;
	enum stream_phase phase;
	uint64_t t0_ms, end_ms, next_ms, retry_ms;
	unsigned retries;
	uint64_t sent;
	int reported;           /* up: pptp-echo's REPORT arrived */
	int path_ok;            /* checking: a REPORT came back */
	struct probe report;
	struct acct acct;       /* what came back (echo) or down */
	uint64_t rtt_min_ns, rtt_max_ns;
	struct hist *rtt;       /* shared by all streams of one spec */
};

/* Where a probe goes: the session puts it into a datagram. */
typedef int (*stream_send_fn)(void *arg, const uint8_t *payload, size_t len);

void stream_init(struct stream *s, const struct stream_spec *spec,
    uint32_t id, struct hist *rtt);
void stream_start(struct stream *s, uint64_t now_ms);
/* Send what is due; returns the next deadline (0: done). */
uint64_t stream_tick(struct stream *s, uint64_t now_ms, uint64_t now_ns,
    stream_send_fn send, void *arg);
/* A probe for this stream arrived at now_ns. */
void stream_input(struct stream *s, const struct probe *p, uint64_t now_ns);
int stream_done(const struct stream *s);

/* What the stream measured. */
struct stream_result {
	uint64_t sent, received, lost, reordered, duplicates, jitter_ns;
};
void stream_result(const struct stream *s, struct stream_result *r);

#endif
