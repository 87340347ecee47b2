/*
 * monlink.h -- the worker's side of the monitor (`privsep yes`,
 * doc/design/privsep.md): its requests, which wait for their answer, and
 * the monitor's events (a pppd exited), which come through the loop.
 */
#ifndef PPTPD_MONLINK_H
#define PPTPD_MONLINK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pptpd/notify.h"

struct fileset;
struct loop;
struct monlink;
struct pppd_resumed;
struct pppd_runner;

/* exited: a pppd the monitor started has exited and is reaped (its
 * reports can still be read). gone: the monitor is gone, or did not
 * answer in time; the worker cannot start or end a call any more. */
struct monlink_events {
	void (*exited)(void *arg, uint16_t call_id, pid_t pid, int status);
	void (*gone)(void *arg);
	void  *arg;
};

/* Say hello on `sock` (the worker's end of the socketpair; the link owns
 * it) and watch it in `loop`. NULL with err set. */
struct monlink *monlink_new(struct loop *loop, int sock,
    const struct monlink_events *ev, char *err, size_t errlen);
void monlink_free(struct monlink *ml);
/* The calls the monitor handed back at the hello (a worker before this
 * one died), `*n` of them; the caller takes the array (free) and their
 * descriptors. NULL when none. */
struct pppd_resumed *monlink_take_resumed(struct monlink *ml, size_t *n);
/* Calls start and signal pppd through this. */
const struct pppd_runner *monlink_runner(struct monlink *ml);
/* systemd is to be told `state` (notify.h's relay): the monitor sends
 * it, as the unit's main pid. `ml` is the link. */
void monlink_notify(void *ml, enum notify_state state, unsigned sessions,
    unsigned ctrls);
/* The monitor re-reads the configuration too (pptpd.conf names pppd and
 * its options). 0, or -1 with err set. */
int monlink_reload(struct monlink *ml, char *err, size_t errlen);
/* `pptpctl upgrade`: the monitor checks the installed binary; 0 when it
 * will take over once this worker has gone, or -1 with err set. */
int monlink_upgrade(struct monlink *ml, char *err, size_t errlen);
/* RELOAD_FILES: the files a reload reads, opened by the monitor, as a
 * replaying fileset.h set (free with fileset_free); NULL with err set. */
struct fileset *monlink_files(struct monlink *ml, char *err, size_t errlen);

#endif
