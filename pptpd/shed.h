/* A listening socket out of descriptors (EMFILE, ENFILE): accept() cannot
 * take the next client off the backlog, and a level-triggered listener
 * would wake again at once, for ever. A spare descriptor (/dev/null) is
 * given up to take the client off and drop it; with no spare to give, the
 * listener is switched off for SHED_PAUSE_MS and then tried again. Used
 * by the TCP listener (server.c) and the control socket (ctl.c); each says
 * in its own log what was refused. */
#ifndef PPTPD_SHED_H
#define PPTPD_SHED_H

#include <sys/socket.h>

#include "pptpd/loop.h"

/* How long a listener with no spare descriptor stays off. */
#define SHED_PAUSE_MS 100

struct shed {
	struct loop      *loop;
	struct loop_fd   *lf;       /* the listener's; its fn is run on resume */
	int               spare;    /* -1 while given up, or not opened */
	struct loop_timer pause;
};

enum shed_result {
	SHED_DROPPED,   /* a client was taken off and closed: try the next */
	SHED_EMPTY,     /* nobody was waiting after all */
	SHED_PAUSED,    /* no spare: the listener is off for SHED_PAUSE_MS */
};

/* Open the spare for the listener `lf` (which may be added to the loop
 * later, or again). -1 with errno when /dev/null cannot be opened. */
int  shed_open(struct shed *sh, struct loop *l, struct loop_fd *lf);
void shed_close(struct shed *sh);
/* accept() on the listener failed with EMFILE or ENFILE: take one client
 * off (its address in peer/len, as accept() gives it) or pause. */
enum shed_result shed_accept(struct shed *sh, struct sockaddr *peer,
    socklen_t *len);

#endif
