/* The report of a run (see report.h). */
#include "client/report.h"

#include <arpa/inet.h>
#include <string.h>

#define REASONS_MAX 32

struct reason_count {
	char name[80];
	unsigned n;
};

struct totals {
	unsigned up, failed, dropped, pending;
	struct reason_count failed_by[REASONS_MAX];
	unsigned nfailed_by;
	struct reason_count dropped_by[REASONS_MAX];
	unsigned ndropped_by;
	struct hist setup;                 /* microseconds */
	struct hist step[SESSION_STEPS];   /* microseconds from the start */
};

static void count_reason(struct reason_count *t, unsigned *n, const char *name)
{
	for (unsigned i = 0; i < *n; i++)
		if (strcmp(t[i].name, name) == 0) {
			t[i].n++;
			return;
		}
	if (*n == REASONS_MAX)
		name = "other";
	else
		(*n)++;
	snprintf(t[*n - 1].name, sizeof(t[*n - 1].name), "%s", name);
	t[*n - 1].n++;
}

static void totals_add(struct totals *t, const struct session *ss, unsigned n)
{
	char buf[80];

	memset(t, 0, sizeof(*t));
	hist_init(&t->setup);
	for (unsigned i = 0; i < n; i++) {
		const struct session *s = &ss[i];
		if (s->was_up) {
			t->up++;
			hist_add(&t->setup, (s->t_up_ns - s->t_start_ns) / 1000);
			for (unsigned k = 0; k < SESSION_STEPS; k++)
				if (s->t_step_ns[k])
					hist_add(&t->step[k], (s->t_step_ns[k] -
					    s->t_start_ns) / 1000);
			if (s->lost_after_up) {
				t->dropped++;
				count_reason(t->dropped_by, &t->ndropped_by,
				    session_reason_str(s, buf, sizeof(buf)));
			}
		} else if (s->state == SS_DONE) {
			t->failed++;
			count_reason(t->failed_by, &t->nfailed_by,
			    session_reason_str(s, buf, sizeof(buf)));
		} else {
			t->pending++;
		}
	}
}

static struct stream_result spec_total(const struct report_run *r, unsigned j)
{
	struct stream_result tot, one;

	memset(&tot, 0, sizeof(tot));
	unsigned njit = 0;
	for (unsigned i = 0; i < r->n; i++) {
		if (!r->sessions[i].streams)
			continue;
		stream_result(&r->sessions[i].streams[j], &one);
		tot.sent += one.sent;
		tot.received += one.received;
		tot.lost += one.lost;
		tot.reordered += one.reordered;
		tot.duplicates += one.duplicates;
		if (one.received > 1) {
			tot.jitter_ns += one.jitter_ns;
			njit++;
		}
	}
	if (njit)
		tot.jitter_ns /= njit;   /* mean over the sessions */
	return tot;
}

void report_progress(FILE *f, const struct session *ss, unsigned n,
    uint64_t elapsed_ms)
{
	unsigned up = 0, failed = 0, pending = 0;

	for (unsigned i = 0; i < n; i++) {
		if (ss[i].was_up)
			up++;
		else if (ss[i].state == SS_DONE)
			failed++;
		else if (ss[i].state != SS_NEW)
			pending++;
	}
	fprintf(f, "\rup %u/%u  failed %u  setting up %u  %.1f up/s   ", up, n,
	    failed, pending,
	    elapsed_ms ? up * 1000.0 / (double)elapsed_ms : 0.0);
	fflush(f);
}

static double ms(uint64_t us)
{
	return (double)us / 1000.0;
}

static double cpu_s(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

void report_print(FILE *f, const struct report_run *r)
{
	struct totals t;

	totals_add(&t, r->sessions, r->n);
	fprintf(f, "pptp-load: %u sessions to %s, profile %s, mppe %s, %.1f s\n",
	    r->n, r->server, r->profile, r->mppe, (double)r->run_ms / 1000.0);
	fprintf(f, "sessions: %u up, %u failed, %u dropped after up",
	    t.up, t.failed, t.dropped);
	if (t.pending)
		fprintf(f, ", %u still setting up", t.pending);
	fprintf(f, "\n");
	for (unsigned i = 0; i < t.nfailed_by; i++)
		fprintf(f, "  failed  %-28s %u\n", t.failed_by[i].name,
		    t.failed_by[i].n);
	for (unsigned i = 0; i < t.ndropped_by; i++)
		fprintf(f, "  dropped %-28s %u\n", t.dropped_by[i].name,
		    t.dropped_by[i].n);
	if (t.up) {
		fprintf(f, "setup: p50 %.1f ms  p95 %.1f ms  max %.1f ms",
		    ms(hist_pct(&t.setup, 50)), ms(hist_pct(&t.setup, 95)),
		    ms(t.setup.max));
		if (r->all_up_ms)
			fprintf(f, "  (all up in %.1f s, %.1f sessions/s)",
			    (double)r->all_up_ms / 1000.0,
			    t.up * 1000.0 / (double)r->all_up_ms);
		fprintf(f, "\n  steps p50:");
		for (unsigned k = 0; k < SESSION_STEPS; k++)
			if (t.step[k].count)
				fprintf(f, " %s %.1f ms", session_step_name(k),
				    ms(hist_pct(&t.step[k], 50)));
		fprintf(f, "\n");
	}
	for (unsigned j = 0; j < r->nspecs; j++) {
		const struct stream_spec *sp = &r->specs[j];
		struct stream_result tot = spec_total(r, j);
		fprintf(f, "stream %u: %s %u B at %g pps for %.1f s per session\n",
		    j, stream_dir_str(sp->dir), sp->size, stream_pps(sp),
		    sp->duration_ms / 1000.0);
		fprintf(f, "  packets: sent %llu  received %llu  lost %llu (%.2f %%)"
		    "  reordered %llu  duplicated %llu\n",
		    (unsigned long long)tot.sent,
		    (unsigned long long)tot.received,
		    (unsigned long long)tot.lost,
		    tot.sent ? 100.0 * (double)tot.lost / (double)tot.sent : 0.0,
		    (unsigned long long)tot.reordered,
		    (unsigned long long)tot.duplicates);
		if (sp->dir == STREAM_ECHO && r->rtt[j].count)
			fprintf(f, "  rtt: p50 %.2f ms  p99 %.2f ms  max %.2f ms"
			    "  jitter %.3f ms\n", ms(hist_pct(&r->rtt[j], 50)),
			    ms(hist_pct(&r->rtt[j], 99)), ms(r->rtt[j].max),
			    (double)tot.jitter_ns / 1e6);
		else if (sp->dir == STREAM_DOWN)
			fprintf(f, "  jitter %.3f ms\n",
			    (double)tot.jitter_ns / 1e6);
	}
	fprintf(f, "cpu: %.2f s user  %.2f s system",
	    cpu_s(&r->ru.ru_utime), cpu_s(&r->ru.ru_stime));
	if (r->rss_idle_sessions)
		fprintf(f, "  memory: %.1f KB per idle session (RSS +%ld KB over %u)",
		    (double)r->rss_idle_kb / r->rss_idle_sessions,
		    r->rss_idle_kb, r->rss_idle_sessions);
	fprintf(f, "\n");
	size_t bytes = 0;
	for (unsigned i = 0; i < r->n; i++)
		if (r->sessions[i].was_up)
			bytes += sizeof(r->sessions[i]) + r->sessions[i].ppp_bytes;
	if (t.up)
		fprintf(f, "allocated per session: %zu bytes (session %zu + PPP %zu)\n",
		    bytes / t.up, sizeof(struct session),
		    bytes / t.up - sizeof(struct session));
}

static void json_hist(FILE *f, const char *name, const struct hist *h)
{
	fprintf(f, "\"%s\": {\"count\": %llu, \"p50_ms\": %.3f, \"p95_ms\": %.3f,"
	    " \"p99_ms\": %.3f, \"max_ms\": %.3f}", name,
	    (unsigned long long)h->count, ms(hist_pct(h, 50)),
	    ms(hist_pct(h, 95)), ms(hist_pct(h, 99)), ms(h->max));
}

static void json_reasons(FILE *f, const char *name,
    const struct reason_count *t, unsigned n)
{
	fprintf(f, "  \"%s\": {", name);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s\"%s\": %u", i ? ", " : "", t[i].name, t[i].n);
	fprintf(f, "},\n");
}

static void json_result(FILE *f, const struct stream_result *x)
{
	fprintf(f, "\"sent\": %llu, \"received\": %llu, \"lost\": %llu, "
	    "\"reordered\": %llu, \"duplicated\": %llu, \"jitter_ms\": %.3f",
	    (unsigned long long)x->sent, (unsigned long long)x->received,
	    (unsigned long long)x->lost, (unsigned long long)x->reordered,
	    (unsigned long long)x->duplicates, (double)x->jitter_ns / 1e6);
}

static void json_session(FILE *f, const struct report_run *r,
    const struct session *s)
{
	char buf[80], a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &s->src, a, sizeof(a));
	inet_ntop(AF_INET, &s->facts.local, b, sizeof(b));
	fprintf(f, "    {\"id\": %u, \"source\": \"%s\", \"up\": %s, "
	    "\"reason\": \"%s\", \"dropped\": %s", s->idx, a,
	    s->was_up ? "true" : "false", session_reason_str(s, buf, sizeof(buf)),
	    s->lost_after_up ? "true" : "false");
	if (s->was_up) {
		fprintf(f, ", \"setup_ms\": %.3f, \"address\": \"%s\", "
		    "\"mppe_bits\": %d, \"mppe_stateful\": %s",
		    (double)(s->t_up_ns - s->t_start_ns) / 1e6, b,
		    s->facts.mppe_bits, s->facts.mppe_stateful ? "true" : "false");
		if (s->facts.dns[0].s_addr) {
			inet_ntop(AF_INET, &s->facts.dns[0], b, sizeof(b));
			fprintf(f, ", \"dns\": \"%s\"", b);
		}
		if (s->have_ipv6) {
			char v6[INET6_ADDRSTRLEN];
			inet_ntop(AF_INET6, &s->ipv6, v6, sizeof(v6));
			fprintf(f, ", \"ipv6\": \"%s\"", v6);
		}
	}
	/* the control messages the server sent: SCCRP and OCRP (connected),
	 * the Call-Disconnect-Notify with its codes, StopCCRP */
	const struct ctrl *c = &s->ctrl;
	fprintf(f, ", \"ctrl\": {\"sccrp\": %s, \"ocrp\": %s, \"cdn\": %s",
	    c->seen & CTRL_SEEN_SCCRP ? "true" : "false",
	    c->seen & CTRL_SEEN_OCRP ? "true" : "false",
	    c->seen & CTRL_SEEN_CDN ? "true" : "false");
	if (c->seen & CTRL_SEEN_CDN)
		fprintf(f, ", \"cdn_result\": %u, \"cdn_error\": %u, "
		    "\"cdn_cause\": %u", c->cdn_result, c->cdn_error,
		    c->cdn_cause);
	fprintf(f, ", \"stopccrp\": %s, \"stopccrq\": %s}",
	    c->seen & CTRL_SEEN_STOPCCRP ? "true" : "false",
	    c->seen & CTRL_SEEN_STOPCCRQ ? "true" : "false");
	fprintf(f, ", \"steps_ms\": {");
	int first = 1;
	for (unsigned k = 0; k < SESSION_STEPS; k++)
		if (s->t_step_ns[k]) {
			fprintf(f, "%s\"%s\": %.3f", first ? "" : ", ",
			    session_step_name(k),
			    (double)(s->t_step_ns[k] - s->t_start_ns) / 1e6);
			first = 0;
		}
	fprintf(f, "}");
	if (s->streams) {
		fprintf(f, ", \"streams\": [");
		for (unsigned j = 0; j < r->nspecs; j++) {
			struct stream_result x;
			stream_result(&s->streams[j], &x);
			fprintf(f, "%s{", j ? ", " : "");
			json_result(f, &x);
			fprintf(f, "}");
		}
		fprintf(f, "]");
	}
	fprintf(f, "}");
}

int report_json(const char *path, const struct report_run *r)
{
	struct totals t;
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	totals_add(&t, r->sessions, r->n);
	fprintf(f, "{\n  \"server\": \"%s\", \"profile\": \"%s\", \"mppe\": \"%s\",\n",
	    r->server, r->profile, r->mppe);
	fprintf(f, "  \"sessions\": %u, \"up\": %u, \"failed\": %u, "
	    "\"dropped\": %u, \"pending\": %u,\n", r->n, t.up, t.failed,
	    t.dropped, t.pending);
	json_reasons(f, "failed_by_reason", t.failed_by, t.nfailed_by);
	json_reasons(f, "dropped_by_reason", t.dropped_by, t.ndropped_by);
	fprintf(f, "  ");
	json_hist(f, "setup", &t.setup);
	fprintf(f, ",\n  \"all_up_s\": %.3f, \"run_s\": %.3f,\n",
	    (double)r->all_up_ms / 1000.0, (double)r->run_ms / 1000.0);
	fprintf(f, "  \"cpu_user_s\": %.3f, \"cpu_system_s\": %.3f,\n",
	    cpu_s(&r->ru.ru_utime), cpu_s(&r->ru.ru_stime));
	fprintf(f, "  \"rss_idle_kb\": %ld, \"rss_idle_sessions\": %u, "
	    "\"gre_foreign\": %llu,\n", r->rss_idle_kb, r->rss_idle_sessions,
	    (unsigned long long)r->gre_foreign);
	fprintf(f, "  \"streams\": [");
	for (unsigned j = 0; j < r->nspecs; j++) {
		struct stream_result tot = spec_total(r, j);
		fprintf(f, "%s\n    {\"direction\": \"%s\", \"size\": %u, "
		    "\"pps\": %g, \"duration_ms\": %u, ", j ? "," : "",
		    stream_dir_str(r->specs[j].dir), r->specs[j].size,
		    stream_pps(&r->specs[j]), r->specs[j].duration_ms);
		json_result(f, &tot);
		fprintf(f, ", ");
		json_hist(f, "rtt", &r->rtt[j]);
		fprintf(f, "}");
	}
	fprintf(f, "],\n  \"session\": [\n");
	for (unsigned i = 0; i < r->n; i++) {
		json_session(f, r, &r->sessions[i]);
		fprintf(f, "%s\n", i + 1 < r->n ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	return fclose(f);
}
