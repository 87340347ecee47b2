/* pptp-load's report: a progress line while sessions come up, a summary a
 * person reads at a glance, and the same numbers as JSON. */
#ifndef CLIENT_REPORT_H
#define CLIENT_REPORT_H

#include <stdio.h>
#include <sys/resource.h>

#include "client/session.h"

struct report_run {
	const struct session *sessions;
	unsigned n;
	const struct stream_spec *specs;
	unsigned nspecs;
	const struct hist *rtt;          /* one per spec, microseconds */
	const char *profile, *mppe;
	const char *server;
	uint64_t run_ms;                 /* start to the end of teardown */
	uint64_t all_up_ms;              /* start to the last session up, 0 */
	struct rusage ru;                /* our own CPU */
	long rss_idle_kb;                /* RSS delta over the idle sessions */
	unsigned rss_idle_sessions;
	uint64_t gre_foreign;
};

/* "up 120/1000  failed 3  connecting 877  49.8/s" on one line (\r). */
void report_progress(FILE *f, const struct session *ss, unsigned n,
    uint64_t elapsed_ms);
void report_print(FILE *f, const struct report_run *r);
/* 0, or -1 with errno. */
int report_json(const char *path, const struct report_run *r);

#endif
