/* Prometheus metrics: the counters the daemon keeps for them, and the HTTP
 * endpoint (libmicrohttpd, run from our event loop: no threads) that
 * serves GET /metrics in the text exposition format when pptpd.conf sets
 * metrics-listen. */
#ifndef PPTPD_METRICS_H
#define PPTPD_METRICS_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

struct calls;
struct conf;
struct ctrls;
struct gre_engine;
struct loop;
struct gre_stats;

/* Why an Outgoing-Call-Request was refused: the `reason` label of
 * pptpd_call_failures_total. */
enum metrics_refusal {
	REFUSAL_STOPPING,           /* the connection is stopping */
	REFUSAL_CALL_ID_IN_USE,     /* the peer's Call ID taken on its connection */
	REFUSAL_CALLS_PER_CONN,     /* calls-per-connection */
	REFUSAL_CALLS_PER_CLIENT,   /* calls-per-client */
	REFUSAL_SETUPS_PER_CLIENT,  /* call-setups-per-client */
	REFUSAL_SETUPS,             /* call-setups */
	REFUSAL_CALL_RATE,          /* call-rate-per-client */
	REFUSAL_POOL_EXHAUSTED,     /* no address left in the pool */
	REFUSAL_POOL_SHARE,         /* pool-share-per-client */
	REFUSAL_NO_CALL_ID,         /* all 65535 Call IDs taken */
	REFUSAL_NO_DESCRIPTORS,     /* too few left to start pppd */
	REFUSAL_INTERNAL,           /* out of memory, pty, fork, GRE set-up */
	REFUSAL_COUNT
};

/* Counters that must never go down: kept in struct server, whether or not
 * metrics are served. GRE counters of a call leave with it; `ended` holds
 * the sum over every call that has ended. */
struct metrics_counts {
	uint64_t setups;                     /* Outgoing-Call-Requests answered */
	uint64_t failures[REFUSAL_COUNT];
	uint64_t ended_rx_packets, ended_rx_bytes, ended_tx_packets, ended_tx_bytes;
	uint64_t ended_lost, ended_reordered, ended_duplicates, ended_wrong_source;
	uint64_t ended_tx_over_window;
};

/* What the metrics are read from: the server's, handed at metrics_new. */
struct metrics_env {
	struct loop                 *loop;
	const struct conf           *conf;
	const struct calls          *calls;
	const struct ctrls          *ctrls;
	const struct metrics_counts *counts;
	struct gre_engine           *gre;
};

/* The refusal `reason` (a log text of ctrl.c or call.c) as a label. */
enum metrics_refusal metrics_refusal_of(const char *reason);
const char *metrics_refusal_label(enum metrics_refusal r);
void metrics_count_ended(struct metrics_counts *mc, const struct gre_stats *st);

/* The exposition text of server `s` (malloc'd, *len bytes, NUL-terminated),
 * or NULL when out of memory. */
char *metrics_render(const struct metrics_env *e, size_t *len);

struct metrics;
/* Serve GET /metrics on `addr`. NULL with err set on failure. */
struct metrics *metrics_new(const struct metrics_env *e,
    const struct sockaddr_in *addr, char *err, size_t errlen);
void metrics_free(struct metrics *m);

#endif
