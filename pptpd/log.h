/* Logging: syslog when daemonised, stderr in the foreground. Lines about
 * rejected input go through a rate limiter so an attacker cannot flood the
 * log. */
#ifndef PPTPD_LOG_H
#define PPTPD_LOG_H

#include <stdarg.h>
#include <stdint.h>
#include <syslog.h>

#include "common/ratelimit.h"

/* At most LOG_RL_BURST lines per LOG_RL_PERIOD_MS per limiter; the number
 * suppressed is reported with the next line that gets through. */
#define LOG_RL_BURST      10
#define LOG_RL_PERIOD_MS  1000
#define LOG_RL_INIT       RATELIMIT_INIT(LOG_RL_BURST, LOG_RL_PERIOD_MS)

void log_open(const char *ident, int to_stderr, int debug);
void log_close(void);
/* A reload turns debug logging on or off. */
void log_set_debug(int debug);
int  log_debug_enabled(void);
void log_msg(int prio, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void log_vmsg(int prio, const char *fmt, va_list ap);
/* Rate-limited log line; `now_ms` is monotonic. */
void log_rl(struct ratelimit *rl, uint64_t now_ms, int prio, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
