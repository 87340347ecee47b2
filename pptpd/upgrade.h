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

/* After upgrade_exec: the process's name (comm: ps, pidof, systemctl
 * status) is the file's, `exe`'s last part. fexecve (execveat with
 * AT_EMPTY_PATH) has named it after the descriptor's number on some
 * kernels; the test VM's Debian 6.1.0-57 names it after the file
 * already, so this is for the others. */
void upgrade_name(const char *exe);

/* `pptpd --handover-version` with a configuration it refuses exits so
 * (after the reason on standard error). */
#define UPGRADE_EXIT_CONF 2

/* May `exe` take over? It is opened, and the file run with the arguments
 * this process was started with, `-c conf` (absolute) and
 * --handover-version: it reads and checks the configuration as a start
 * would and must print HANDOVER_VERSION, within 2 s. 0 with *bin the
 * file open (close-on-exec; for upgrade_exec: a package that puts
 * another file at `exe` meanwhile changes nothing), or -1 with err set
 * (the refusal: another hand-over, none, the configuration's reason, no
 * answer, no file) and *bin -1. */
int upgrade_check(const char *exe, char *const argv[], const char *conf,
    int *bin, char *err, size_t errlen);

/* Execute the file open on `bin` (upgrade_check's) with `argv`
 * (NULL-terminated; `-c conf` and "--resume N" are added) in this
 * process, handing it `calls` and the journal's memfd. Returns only when
 * that failed (errno; every descriptor as it was). */
void upgrade_exec(int bin, char *const argv[], const char *conf,
    int journal, const struct handover_call *calls, size_t n,
    uint32_t generation);

/* What the monitor before handed this one (--resume FD): the journal's
 * descriptor and the calls (free *calls), every descriptor close-on-exec
 * again, every other one above stdio closed (call it first). 0, or -1
 * with err set (FD closed either way). */
int upgrade_take(int fd, int *journal, struct handover_call **calls,
    size_t *n, uint32_t *generation, char *err, size_t errlen);

#endif
