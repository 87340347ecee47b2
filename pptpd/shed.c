/* Shedding clients at EMFILE (shed.h). */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "pptpd/shed.h"

static int
shed_spare_open(struct shed *sh)
{
	sh->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return sh->spare;
}

int
shed_open(struct shed *sh, struct loop *l, struct loop_fd *lf)
{
	sh->loop = l;
	sh->lf = lf;
	return shed_spare_open(sh);
}

void
shed_close(struct shed *sh)
{
	if (sh->loop == NULL)
		return;   /* never opened */
	loop_timer_cancel(sh->loop, &sh->pause);
	if (sh->spare >= 0)
		close(sh->spare);
	sh->spare = -1;
}

/* The pause is over: listen again, and take what waits at once (the
 * listener would otherwise wait for the next client to knock). */
static void
shed_resume(void *arg)
{
	struct shed *sh = arg;
	struct loop_fd *lf = sh->lf;

	if (lf->fd < 0)
		return;   /* the listener was closed meanwhile */
	if (sh->spare < 0)
		shed_spare_open(sh);
	loop_fd_mod(sh->loop, lf, EPOLLIN);
	lf->fn(lf->arg, EPOLLIN);
}

enum shed_result
shed_accept(struct shed *sh, struct sockaddr *peer, socklen_t *len)
{
	if (sh->spare >= 0) {
		close(sh->spare);
		sh->spare = -1;
		int fd = accept4(sh->lf->fd, peer, len, SOCK_CLOEXEC);
		int again = fd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
		if (fd >= 0)
			close(fd);
		if (shed_spare_open(sh) >= 0 && (fd >= 0 || again))
			return fd >= 0 ? SHED_DROPPED : SHED_EMPTY;
	}
	loop_fd_mod(sh->loop, sh->lf, 0);
	loop_timer_set(sh->loop, &sh->pause, SHED_PAUSE_MS, shed_resume, sh);
	return SHED_PAUSED;
}
