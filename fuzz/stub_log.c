/* Log functions for the harnesses: every line is formatted (so format
 * strings meet the attacker's strings) but goes nowhere, which keeps the
 * fuzzers fast and their output readable. Set FUZZ_LOG=1 to see the lines. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "pptpd/log.h"

static int fz_log_show = -1;

void log_open(const char *ident, int to_stderr, int debug)
{
	(void)ident; (void)to_stderr; (void)debug;
}

void log_close(void) {}

int log_debug_enabled(void) { return 1; }

void
log_vmsg(int prio, const char *fmt, va_list ap)
{
	char line[1024];
	if (fz_log_show < 0)
		fz_log_show = getenv("FUZZ_LOG") != NULL;
	vsnprintf(line, sizeof(line), fmt, ap);
	if (fz_log_show)
		fprintf(stderr, "log<%d>: %s\n", prio, line);
}

void
log_msg(int prio, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(prio, fmt, ap);
	va_end(ap);
}

void
log_rl(struct ratelimit *rl, uint64_t now_ms, int prio, const char *fmt, ...)
{
	va_list ap;
	(void)rl; (void)now_ms;
	va_start(ap, fmt);
	log_vmsg(prio, fmt, ap);
	va_end(ap);
}
