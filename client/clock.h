/* The monotonic clock of pptp-load, in the two units it uses: ms for
 * timers and the PPP state machines, ns for timestamps in probes. */
#ifndef CLIENT_CLOCK_H
#define CLIENT_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Never 0, so 0 can mean "no deadline". */
static inline uint64_t clock_ms(void)
{
	return clock_ns() / 1000000u + 1;
}

#endif
