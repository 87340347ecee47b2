/* The event loop's timers decide every protocol deadline (SCCRQ, echo, pppd
 * kill): they must fire in order, once, and never after being cancelled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include <unistd.h>

#include "pptpd/loop.h"

struct rec {
	struct loop *l;
	int order[8];
	int n;
	int stop_after;
};

struct tmr {
	struct loop_timer t;
	struct rec *r;
	int id;
};

static void
fire(void *arg)
{
	struct tmr *t = arg;
	t->r->order[t->r->n++] = t->id;
	if (t->r->n == t->r->stop_after)
		loop_stop(t->r->l);
}

static void
test_timers_fire_in_deadline_order(void **state)
{
	struct rec r = { .l = loop_new(), .stop_after = 3 };
	struct tmr a = { .r = &r, .id = 1 }, b = { .r = &r, .id = 2 },
	    c = { .r = &r, .id = 3 }, d = { .r = &r, .id = 4 };
	loop_timer_set(r.l, &a.t, 30, fire, &a);
	loop_timer_set(r.l, &b.t, 10, fire, &b);
	loop_timer_set(r.l, &c.t, 20, fire, &c);
	loop_timer_set(r.l, &d.t, 15, fire, &d);
	loop_timer_cancel(r.l, &d.t);
	assert_false(loop_timer_armed(&d.t));
	assert_int_equal(loop_run(r.l), 0);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.order[0], 2);
	assert_int_equal(r.order[1], 3);
	assert_int_equal(r.order[2], 1);
	loop_free(r.l);
}

static void
test_timer_rearm_moves_it(void **state)
{
	struct rec r = { .l = loop_new(), .stop_after = 2 };
	struct tmr a = { .r = &r, .id = 1 }, b = { .r = &r, .id = 2 };
	loop_timer_set(r.l, &a.t, 5, fire, &a);
	loop_timer_set(r.l, &b.t, 20, fire, &b);
	loop_timer_set(r.l, &a.t, 40, fire, &a);   /* re-armed later: fires last */
	assert_int_equal(loop_run(r.l), 0);
	assert_int_equal(r.order[0], 2);
	assert_int_equal(r.order[1], 1);
	loop_free(r.l);
}

struct fdrec {
	struct loop *l;
	struct loop_fd lf;
	int calls;
};

static void
readable(void *arg, uint32_t ev)
{
	struct fdrec *f = arg;
	char c;
	(void)ev;
	f->calls++;
	(void)!read(f->lf.fd, &c, 1);
	loop_fd_del(f->l, &f->lf);
	loop_stop(f->l);
}

static void
test_fd_event_dispatch(void **state)
{
	int p[2];
	struct fdrec f = { .l = loop_new() };
	assert_int_equal(pipe(p), 0);
	assert_int_equal(loop_fd_add(f.l, &f.lf, p[0], EPOLLIN, readable, &f), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(loop_run(f.l), 0);
	assert_int_equal(f.calls, 1);
	assert_int_equal(f.lf.fd, -1);
	close(p[0]);
	close(p[1]);
	loop_free(f.l);
}

/* Two descriptors ready in one round: the first event ends the object, and
 * the loop still reads the second's loop_fd, which lives in the object. So
 * the object must outlive the round. pair_free does not give the memory
 * back at once but scribbles on it as a new owner would (a live loop_fd):
 * freed too early, the second event would reach pair_event again. A second
 * deferral must not free it twice. Counted outside the object, so that the
 * checks do not read what they check. */
static int pair_handled, pair_freed;

struct pair {
	struct loop      *l;
	struct loop_fd    a, b;
	struct loop_defer defer;
	int               live_fd;
};

static void pair_event(void *arg, uint32_t ev);

static void
pair_free(void *arg)
{
	struct pair *p = arg;
	pair_freed++;
	p->b = (struct loop_fd){ .fd = p->live_fd, .fn = pair_event, .arg = p };
}

static void
pair_event(void *arg, uint32_t ev)
{
	struct pair *p = arg;
	(void)ev;
	assert_int_equal(pair_freed, 0);
	pair_handled++;
	loop_fd_del(p->l, &p->a);
	loop_fd_del(p->l, &p->b);
	loop_defer_free(p->l, &p->defer, pair_free, p);
	loop_defer_free(p->l, &p->defer, pair_free, p);
	loop_stop(p->l);
}

static void
test_deferred_free_after_round(void **state)
{
	int pa[2], pb[2];
	struct loop *l = loop_new();
	struct pair *p = calloc(1, sizeof(*p));
	(void)state;
	assert_non_null(p);
	p->l = l;
	assert_int_equal(pipe(pa), 0);
	assert_int_equal(pipe(pb), 0);
	p->live_fd = pb[0];
	assert_int_equal(loop_fd_add(l, &p->a, pa[0], EPOLLIN, pair_event, p), 0);
	assert_int_equal(loop_fd_add(l, &p->b, pb[0], EPOLLIN, pair_event, p), 0);
	assert_int_equal(write(pa[1], "x", 1), 1);
	assert_int_equal(write(pb[1], "x", 1), 1);
	assert_int_equal(loop_run(l), 0);
	assert_int_equal(pair_handled, 1);
	assert_int_equal(pair_freed, 1);
	loop_free(l);
	assert_int_equal(pair_freed, 1);
	for (int i = 0; i < 2; i++) {
		close(pa[i]);
		close(pb[i]);
	}
	free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timers_fire_in_deadline_order),
		cmocka_unit_test(test_timer_rearm_moves_it),
		cmocka_unit_test(test_fd_event_dispatch),
		cmocka_unit_test(test_deferred_free_after_round),
	};
	return cmocka_run_group_tests_name("loop", tests, NULL, NULL);
}
