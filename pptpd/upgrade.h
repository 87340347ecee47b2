/*
 * upgrade.h -- `pptpctl upgrade`: the monitor re-executes the installed
 * binary in its own process (its pid, so its pppd children and systemd's
 * MAINPID stay), handing it the sessions (proto/handover.h;
 * doc/design/privsep.md, "Upgrade").
 */
#ifndef PPTPD_UPGRADE_H
#define PPTPD_UPGRADE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct handover_call;

/* The binary this process runs, as installed: /proc/self/exe without the
 * " (deleted)" a package upgrade leaves on it. 0, or -1. */
int upgrade_exe(char path[PATH_MAX]);

/* May `exe` take over? It is run with --handover-version and must print
 * HANDOVER_VERSION. 0, or -1 with err set (what it said, or why it could
 * not be asked). */
int upgrade_check(const char *exe, char *err, size_t errlen);

/* Execute `exe` with `argv` (NULL-terminated; "--resume N" is added) in
 * this process, handing it `calls` and the journal's memfd. Returns only
 * when that failed (errno; every descriptor as it was). */
void upgrade_exec(const char *exe, char *const argv[], int journal,
    const struct handover_call *calls, size_t n, uint32_t generation);

/* What the monitor before handed this one (--resume FD): the journal's
 * descriptor and the calls (free *calls), every descriptor close-on-exec
 * again. 0, or -1 with err set (FD closed either way). */
int upgrade_take(int fd, int *journal, struct handover_call **calls,
    size_t *n, uint32_t *generation, char *err, size_t errlen);

#endif
