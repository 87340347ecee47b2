/*
 * monitor.h -- pptpd's privileged monitor (`privsep yes`,
 * doc/design/privsep.md). pptpd forks its worker, which runs the server,
 * and stays the monitor: root, the process systemd knows, the parent of
 * every pppd. It reads only proto/monitor.h's records from the worker,
 * and believes none of their fields: a call's addresses are taken from its
 * control connection's socket, its Call ID and remote address must be free
 * among the pppd it started, its descriptors must be what the type says.
 *
 * This step of the design: the monitor starts, signals and reaps pppd, on
 * the kernel data path opens each call's PPTP channel and keeps the GRE
 * guard, keeps the TCP MSS clamping table, sets the per-user rates and
 * routes the sessions' /64s (only inside ipv6-prefix-pool or
 * ipv6-radius-prefixes) on the interface the worker names, which must be
 * the call's own ppp interface; the
 * worker still runs as root and does the rest. When the worker
 * exits, the monitor ends the sessions it has left (SIGTERM, then SIGKILL
 * after a grace). A worker that died (killed, or a non-zero exit) while
 * the monitor was not stopping is replaced by a new one (`respawn`), at
 * most MONITOR_RESPAWNS times in MONITOR_RESPAWN_S seconds; otherwise the
 * monitor exits with the worker's status (1 when it was killed) once the
 * sessions are reaped.
 */
#define MONITOR_RESPAWNS    5
#define MONITOR_RESPAWN_S   60
#ifndef PPTPD_MONITOR_H
#define PPTPD_MONITOR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct conf;
struct fileset;

/* Re-read the configuration into *conf as a start does, without the
 * server (main.c's); 0, or -1 with err set and *conf unchanged. */
typedef int (*monitor_reload_fn)(void *arg, char *err, size_t errlen);
/* Read the files a reload reads, as it does, each opened through `fs`
 * (a recording fileset.h set), the configuration itself thrown away; 0,
 * or -1 with err set. */
typedef int (*monitor_files_fn)(void *arg, struct fileset *fs, char *err,
    size_t errlen);

/* Fork a new worker (the last one died): its pid, with *sock the
 * monitor's end of its socketpair; -1 when it cannot be forked. The child
 * never returns. */
typedef pid_t (*monitor_respawn_fn)(void *arg, int *sock);

struct handover_call;

/* `pptpctl upgrade` (ADMIN upgrade): may the installed binary take over?
 * 0, or -1 with err set (it speaks another hand-over, or is not there). */
typedef int (*monitor_upgrade_check_fn)(void *arg, char *err, size_t errlen);
/* Re-execute the installed binary with these calls (`n`, oldest first;
 * their descriptors stay open across the execve) and the generation of
 * workers so far. Returns only when that failed (errno). */
typedef void (*monitor_upgrade_exec_fn)(void *arg,
    const struct handover_call *calls, size_t n, uint32_t generation);

/* What the monitor is handed when the worker is forked. */
struct monitor_env {
	const struct conf *conf;    /* read at each request (a reload changes
	                               it in place) */
	pid_t              worker;
	uid_t              worker_uid;   /* what it runs as (privsep-user):
	                                    the monitor signals it as that
	                                    user (monitor.c) */
	int                sock;    /* to the worker: one end of a
	                               SOCK_SEQPACKET socketpair; the
	                               monitor's from here (it closes it) */
	int                kernel_path;   /* startup chose the kernel's PPTP
	                                     channel (datapath.h) */
	int                guarded;       /* ... with its GRE guard, which
	                                     the monitor loads again, as its
	                                     own, before its first request */
	int                clamping;      /* startup made the TCP MSS table,
	                                     which the monitor makes again */
	int                shaping;       /* startup could open traffic
	                                     control's netlink socket */
	monitor_reload_fn  reload;
	monitor_files_fn   files;      /* RELOAD_FILES */
	void              *reload_arg; /* both's, and respawn's */
	/* NULL: a dead worker ends the monitor (after its sessions) */
	monitor_respawn_fn respawn;
	/* NULL: no upgrade (ADMIN upgrade refused) */
	monitor_upgrade_check_fn upgrade_check;
	monitor_upgrade_exec_fn  upgrade_exec;
	/* After an upgrade's execve: the calls the monitor before had (their
	 * descriptors ours now), handed to the first worker, and the
	 * generation of workers started before it. */
	const struct handover_call *resumed;
	size_t             nresumed;
	uint32_t           generation;
};

/* Run the monitor until its worker has exited and every pppd is reaped.
 * Returns the exit status for pptpd. */
int monitor_run(const struct monitor_env *env);

#endif
