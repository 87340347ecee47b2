#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pptpd/log.h"

/* The log destination is process-wide configuration, set once at start. */
static int log_to_stderr = 1;
static int log_debug;

void
log_open(const char *ident, int to_stderr, int debug)
{
	log_to_stderr = to_stderr;
	log_debug = debug;
	if (!to_stderr)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void
log_close(void)
{
	if (!log_to_stderr)
		closelog();
}

void
log_set_debug(int debug)
{
	log_debug = debug;
}

int
log_debug_enabled(void)
{
	return log_debug;
}

static const char *
log_prio_name(int prio)
{
	switch (prio) {
	case LOG_EMERG: case LOG_ALERT: case LOG_CRIT: return "crit";
	case LOG_ERR: return "error";
	case LOG_WARNING: return "warning";
	case LOG_NOTICE: return "notice";
	case LOG_INFO: return "info";
	default: return "debug";
	}
}

void
log_vmsg(int prio, const char *fmt, va_list ap)
{
	if (prio == LOG_DEBUG && !log_debug)
		return;
	if (!log_to_stderr) {
		vsyslog(prio, fmt, ap);
		return;
	}
	struct timespec ts;
	struct tm tm;
	char stamp[32];
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ld pptpd %s: ", stamp, ts.tv_nsec / 1000000,
	    log_prio_name(prio));
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	fflush(stderr);
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
	uint32_t suppressed;
	int allow = ratelimit_allow(rl, now_ms, &suppressed);

	if (suppressed)
		log_msg(prio, "(%u similar lines suppressed)", suppressed);
	if (!allow)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(prio, fmt, ap);
	va_end(ap);
}
