#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "pptpd/log.h"
#include "pptpd/loop.h"

#define LOOP_MAX_EVENTS  64
#define LOOP_SIGNALS_MAX 8

struct loop {
	int                   epfd;
	int                   running;
	uint64_t              now;
	struct timers         timers;
	struct loop_hook      hook;
	struct loop_defer    *deferred;
	struct loop_fd        sig_lf;
	loop_signal_fn        sig_fn;
	void                 *sig_arg;
	sigset_t              sig_old;
};

uint64_t
loop_clock_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct loop *
loop_new(void)
{
	struct loop *l = calloc(1, sizeof(*l));
	if (l == NULL)
		return NULL;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		free(l);
		return NULL;
	}
	timers_init(&l->timers);
	l->sig_lf.fd = -1;
	l->now = loop_clock_ms();
	return l;
}

static void
loop_run_deferred(struct loop *l)
{
	while (l->deferred != NULL) {
		struct loop_defer *d = l->deferred;
		l->deferred = d->next;
		d->queued = 0;
		d->fn(d->p);   /* frees the object, and `d` with it */
	}
}

void
loop_free(struct loop *l)
{
	if (l == NULL)
		return;
	loop_run_deferred(l);
	if (l->sig_lf.fd >= 0) {
		close(l->sig_lf.fd);
		sigprocmask(SIG_SETMASK, &l->sig_old, NULL);
	}
	close(l->epfd);
	free(l);
}

uint64_t
loop_now(struct loop *l)
{
	return l->now;
}

int
loop_fd_add(struct loop *l, struct loop_fd *lf, int fd, uint32_t events,
    loop_fd_fn fn, void *arg)
{
	struct epoll_event ev = { .events = events, .data.ptr = lf };
	lf->fd = fd;
	lf->events = events;
	lf->fn = fn;
	lf->arg = arg;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		lf->fd = -1;
		return -1;
	}
	return 0;
}

int
loop_fd_mod(struct loop *l, struct loop_fd *lf, uint32_t events)
{
	if (lf->fd < 0 || lf->events == events)
		return 0;
	struct epoll_event ev = { .events = events, .data.ptr = lf };
	if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, lf->fd, &ev) < 0)
		return -1;
	lf->events = events;
	return 0;
}

void
loop_fd_del(struct loop *l, struct loop_fd *lf)
{
	if (lf->fd < 0)
		return;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, lf->fd, NULL);
	lf->fd = -1;
}

void
loop_timer_cancel(struct loop *l, struct loop_timer *t)
{
	(void)l;
	timer_del(&t->t);
}

void
loop_timer_set(struct loop *l, struct loop_timer *t, uint64_t after_ms,
    loop_timer_fn fn, void *arg)
{
	/* A fresh clock reading: arming after a long callback must not put
	 * the deadline in the past. */
	timers_arm(&l->timers, &t->t, loop_clock_ms(), after_ms, fn, arg);
}

static void
loop_signal_ready(void *arg, uint32_t events)
{
	struct loop *l = arg;
	struct signalfd_siginfo si;
	(void)events;
	while (read(l->sig_lf.fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		l->sig_fn(l->sig_arg, (int)si.ssi_signo);
}

int
loop_signals(struct loop *l, const int *signals, int n, loop_signal_fn fn, void *arg)
{
	sigset_t set;
	sigemptyset(&set);
	for (int i = 0; i < n; i++)
		sigaddset(&set, signals[i]);
	if (sigprocmask(SIG_BLOCK, &set, &l->sig_old) < 0)
		return -1;
	int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		return -1;
	l->sig_fn = fn;
	l->sig_arg = arg;
	return loop_fd_add(l, &l->sig_lf, fd, EPOLLIN, loop_signal_ready, l);
}

void
loop_child_reset(void)
{
	sigset_t none;
	sigemptyset(&none);
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

void
loop_set_hook(struct loop *l, const struct loop_hook *h)
{
	l->hook = *h;
}

void
loop_defer_free(struct loop *l, struct loop_defer *d, void (*fn)(void *),
    void *p)
{
	if (d->queued)
		return;
	d->queued = 1;
	d->fn = fn;
	d->p = p;
	d->next = l->deferred;
	l->deferred = d;
}

static int
loop_timeout(struct loop *l)
{
	uint64_t next = timers_next(&l->timers);
	if (l->hook.deadline != NULL) {
		uint64_t h = l->hook.deadline(l->hook.arg);
		if (h && (!next || h < next))
			next = h;
	}
	if (!next)
		return -1;
	uint64_t now = loop_clock_ms();
	return next <= now ? 0 : (int)(next - now);
}

static void
loop_run_timers(struct loop *l)
{
	struct timer *t;
	while ((t = timers_pop_due(&l->timers, l->now)) != NULL)
		t->fn(t->arg);
	if (l->hook.run != NULL)
		l->hook.run(l->hook.arg, l->now);
}

int
loop_run(struct loop *l)
{
	struct epoll_event ev[LOOP_MAX_EVENTS];
	l->running = 1;
	while (l->running) {
		int n = epoll_wait(l->epfd, ev, LOOP_MAX_EVENTS, loop_timeout(l));
		if (n < 0 && errno != EINTR) {
			log_msg(LOG_ERR, "epoll_wait: %s", strerror(errno));
			return -1;
		}
		l->now = loop_clock_ms();
		for (int i = 0; i < n; i++) {
			struct loop_fd *lf = ev[i].data.ptr;
			if (lf->fd >= 0)
				lf->fn(lf->arg, ev[i].events);
		}
		loop_run_timers(l);
		loop_run_deferred(l);
	}
	return 0;
}

void
loop_stop(struct loop *l)
{
	l->running = 0;
}
