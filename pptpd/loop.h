/* The one event loop: epoll for descriptors, timers (common/timer.h: one
 * list per delay, so arming is O(1)), signals through signalfd, and a hook for the GRE engine's own timers. Objects embed
 * their loop_fd and loop_timer; freeing is deferred to the end of a dispatch
 * round so an event already fetched never touches freed memory. */
#ifndef PPTPD_LOOP_H
#define PPTPD_LOOP_H

#include <stdint.h>
#include <sys/epoll.h>

#include "common/timer.h"

struct loop;

typedef void (*loop_fd_fn)(void *arg, uint32_t events);
typedef void (*loop_timer_fn)(void *arg);
typedef void (*loop_signal_fn)(void *arg, int signo);

struct loop_fd {
	int        fd;        /* -1 once removed */
	uint32_t   events;
	loop_fd_fn fn;
	void      *arg;
};

struct loop_timer {
	struct timer t;
};

/* Embedded in an object whose freeing may be deferred (loop_defer_free):
 * queueing it allocates nothing, so it cannot fail under memory pressure
 * and free the object while the round's fetched events still point at it. */
struct loop_defer {
	void             (*fn)(void *);
	void              *p;
	struct loop_defer *next;
	int                queued;
};

/* Something with timers of its own (the GRE engine): asked for its earliest
 * deadline before every wait and run after every wake-up. */
struct loop_hook {
	uint64_t (*deadline)(void *arg);
	void     (*run)(void *arg, uint64_t now_ms);
	void      *arg;
};

struct loop *loop_new(void);
void     loop_free(struct loop *l);
uint64_t loop_now(struct loop *l);   /* monotonic ms, updated each wake-up */
uint64_t loop_clock_ms(void);        /* read the clock now */

int  loop_fd_add(struct loop *l, struct loop_fd *lf, int fd, uint32_t events,
    loop_fd_fn fn, void *arg);
int  loop_fd_mod(struct loop *l, struct loop_fd *lf, uint32_t events);
void loop_fd_del(struct loop *l, struct loop_fd *lf);

void loop_timer_set(struct loop *l, struct loop_timer *t, uint64_t after_ms,
    loop_timer_fn fn, void *arg);
void loop_timer_cancel(struct loop *l, struct loop_timer *t);
static inline int loop_timer_armed(const struct loop_timer *t) { return timer_armed(&t->t); }

/* Deliver these signals through the loop (they are blocked for the process;
 * children must unblock them: see loop_child_reset). */
int  loop_signals(struct loop *l, const int *signals, int n, loop_signal_fn fn, void *arg);
/* In a forked child before exec: restore the signal mask and dispositions. */
void loop_child_reset(void);

void loop_set_hook(struct loop *l, const struct loop_hook *h);
/* Free `p` with `fn` once the current dispatch round is over; `d` is the
 * node embedded in `p`. Queueing the same node twice queues it once. */
void loop_defer_free(struct loop *l, struct loop_defer *d,
    void (*fn)(void *), void *p);

int  loop_run(struct loop *l);   /* until loop_stop; -1 on epoll failure */
void loop_stop(struct loop *l);

#endif
