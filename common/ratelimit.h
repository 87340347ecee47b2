/* A rate limiter for log lines that outside input can cause: at most
 * `burst` lines per `period_ms`; the lines held back are counted so the
 * next window can say how many were suppressed. Pure bookkeeping: the
 * caller owns the clock and the log. */
#ifndef COMMON_RATELIMIT_H
#define COMMON_RATELIMIT_H

#include <stdint.h>

struct ratelimit {
	uint32_t burst;
	uint32_t period_ms;
	uint64_t since;        /* start of the current window */
	uint32_t lines;        /* let through in this window */
	uint32_t suppressed;   /* held back in this window */
};

#define RATELIMIT_INIT(burst, period_ms) { (burst), (period_ms), 0, 0, 0 }

void ratelimit_init(struct ratelimit *rl, uint32_t burst, uint32_t period_ms);

/* May a line go out at `now_ms` (monotonic)? When a new window opens,
 * `*suppressed` is set to the number held back in the previous one (the
 * caller reports it), otherwise to 0. */
int ratelimit_allow(struct ratelimit *rl, uint64_t now_ms, uint32_t *suppressed);

#endif
