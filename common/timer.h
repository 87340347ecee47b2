/* Timers for the event loop and the GRE engine: intrusive nodes in lists
 * sorted by deadline (monotonic ms).
 *
 * A list is searched from its tail, so a deadline no earlier than every
 * other one in the list is placed in O(1). `struct timers` makes that the
 * common case: it keeps one list per delay, and timers armed with the same
 * delay from a clock that never goes back arrive in deadline order. A
 * daemon with thousands of connections, each holding a 60-s echo timer,
 * arms a 100-ms timer without walking past any of them. */
#ifndef COMMON_TIMER_H
#define COMMON_TIMER_H

#include <stdint.h>

struct timer {
	uint64_t      at;            /* deadline; 0: not armed */
	struct timer *prev, *next;
	void        (*fn)(void *arg);
	void         *arg;
};

struct timer_list {
	struct timer head;           /* sentinel */
};

void timer_list_init(struct timer_list *l);
/* Arm `t` (disarming it first) at deadline `at` (> 0), sorted. Returns
 * how many timers it had to walk past: 0 in the common case. */
unsigned timer_list_add(struct timer_list *l, struct timer *t, uint64_t at);
/* Earliest timer, or NULL. */
struct timer *timer_list_first(const struct timer_list *l);
/* Disarm and return the earliest timer if it is due at `now`, else NULL. */
struct timer *timer_list_pop_due(struct timer_list *l, uint64_t now);

/* Disarm; harmless when not armed. */
void timer_del(struct timer *t);
static inline int timer_armed(const struct timer *t) { return t->at != 0; }

/* Delays with a list of their own; a daemon has a handful (echo, setup,
 * kill grace, ...). Any further delay shares one list. */
#define TIMERS_QUEUES 16

struct timers {
	unsigned nq;
	struct {
		uint64_t          delay;
		struct timer_list list;
	} q[TIMERS_QUEUES];
	struct timer_list other;
};

void timers_init(struct timers *ts);
/* Arm `t` to fire `delay` ms after `now`, calling fn(arg). Returns what
 * timer_list_add() returns. */
unsigned timers_arm(struct timers *ts, struct timer *t, uint64_t now,
    uint64_t delay, void (*fn)(void *), void *arg);
/* Earliest deadline of all, or 0 when nothing is armed. */
uint64_t timers_next(const struct timers *ts);
/* Disarm and return a timer due at `now` (earliest first), or NULL. */
struct timer *timers_pop_due(struct timers *ts, uint64_t now);

#endif
