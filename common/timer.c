#include "common/timer.h"

#include <stddef.h>

void
timer_list_init(struct timer_list *l)
{
	l->head.prev = l->head.next = &l->head;
	l->head.at = 0;
}

void
timer_del(struct timer *t)
{
	if (!timer_armed(t))
		return;
	t->prev->next = t->next;
	t->next->prev = t->prev;
	t->prev = t->next = NULL;
	t->at = 0;
}

unsigned
timer_list_add(struct timer_list *l, struct timer *t, uint64_t at)
{
	struct timer *pos;
	unsigned walked = 0;

	timer_del(t);          /* first: `t` may be this list's tail */
	pos = l->head.prev;
	t->at = at ? at : 1;
	for (; pos != &l->head && pos->at > t->at; pos = pos->prev)
		walked++;
	t->prev = pos;
	t->next = pos->next;
	pos->next->prev = t;
	pos->next = t;
	return walked;
}

struct timer *
timer_list_first(const struct timer_list *l)
{
	return l->head.next != &l->head ? l->head.next : NULL;
}

struct timer *
timer_list_pop_due(struct timer_list *l, uint64_t now)
{
	struct timer *t = timer_list_first(l);

	if (t == NULL || t->at > now)
		return NULL;
	timer_del(t);
	return t;
}

void
timers_init(struct timers *ts)
{
	ts->nq = 0;
	timer_list_init(&ts->other);
}

static struct timer_list *
timers_list_for(struct timers *ts, uint64_t delay)
{
	for (unsigned i = 0; i < ts->nq; i++)
		if (ts->q[i].delay == delay)
			return &ts->q[i].list;
	if (ts->nq == TIMERS_QUEUES)
		return &ts->other;
	ts->q[ts->nq].delay = delay;
	timer_list_init(&ts->q[ts->nq].list);
	return &ts->q[ts->nq++].list;
}

unsigned
timers_arm(struct timers *ts, struct timer *t, uint64_t now, uint64_t delay,
    void (*fn)(void *), void *arg)
{
	t->fn = fn;
	t->arg = arg;
	return timer_list_add(timers_list_for(ts, delay), t, now + delay);
}

/* The list whose first timer is the earliest, or NULL. */
static struct timer_list *
timers_earliest(const struct timers *ts)
{
	const struct timer_list *best = NULL;
	const struct timer *bt = timer_list_first(&ts->other), *t;

	if (bt != NULL)
		best = &ts->other;
	for (unsigned i = 0; i < ts->nq; i++) {
		t = timer_list_first(&ts->q[i].list);
		if (t != NULL && (bt == NULL || t->at < bt->at)) {
			bt = t;
			best = &ts->q[i].list;
		}
	}
	return (struct timer_list *)best;
}

uint64_t
timers_next(const struct timers *ts)
{
	const struct timer_list *l = timers_earliest(ts);

	return l != NULL ? timer_list_first(l)->at : 0;
}

struct timer *
timers_pop_due(struct timers *ts, uint64_t now)
{
	struct timer_list *l = timers_earliest(ts);

	return l != NULL ? timer_list_pop_due(l, now) : NULL;
}
