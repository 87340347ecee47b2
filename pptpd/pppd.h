/*
 * pppd.h -- one pppd started for a call: its command line (Poptop's form)
 * and its start, the same whether pptpd runs as one process or its
 * monitor starts pppd for the worker (doc/design/privsep.md).
 */
#ifndef PPTPD_PPPD_H
#define PPTPD_PPPD_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct conf;

#define PPPD_ARGV_MAX       40
/* pppd's descriptor for the call's PPTP socket on the kernel path: the
 * first after stdin, stdout and stderr (FACTS_PPPD_FD is the next). */
#define PPPD_KERNEL_FD      3
/* In the child, descriptors are copied this high before they are put in
 * their places: above every place. */
#define PPPD_FD_SPARE       16
/* Free descriptors above PPPD_FD_SPARE a call needs before its pppd is
 * forked: the child's two copies, and a reserve so that the listener,
 * the control socket and the next call's refusal still have some once
 * the call holds its own. Short of them the call is refused in the parent
 * (an Outgoing-Call-Reply error), never answered Connected only for its
 * pppd to fail in the child. */
#define PPPD_FDS_CHILD      2
#define PPPD_FDS_RESERVE    4

/* What pppd's command line is made of. */
struct pppd_args {
	struct in_addr local, remote, client;
	uint16_t       call_id;
	int            reports;       /* the plugin reports on FACTS_PPPD_FD */
	/* The kernel path: pppd gets no pty (nor Poptop's speed), stays in
	 * the foreground, and the plugin takes the channel socket pptpd
	 * opened from these (inherited as PPPD_KERNEL_FD). */
	int            kernel;
	uint16_t       peer_call_id;
	struct in_addr self;          /* the control connection's local address */
	int            ipv6;          /* IPV6CP too (+ipv6): a /64 is held */
};

/* Build pppd's argv into argv[PPPD_ARGV_MAX] using buf for the strings;
 * returns argc, or -1 when buf is too short. */
int pppd_argv(const struct conf *conf, const struct pppd_args *in,
    char *argv[PPPD_ARGV_MAX], char *buf, size_t buflen);

/* Are PPPD_FDS_CHILD + PPPD_FDS_RESERVE descriptor numbers free above
 * PPPD_FD_SPARE? (Tried by copying `fd` there.) 0, or -1. */
int pppd_fds_spare(int fd);

/* Start pppd: on the engine path on a new pty, whose master is returned
 * in *pty (non-blocking, close-on-exec); on the kernel path (in->kernel)
 * with `sock`, the call's channel socket, as PPPD_KERNEL_FD. `report` is
 * pppd's end of the plugin's report channel (-1: none). The descriptors
 * given stay the caller's. Returns pppd's pid, or -1 with *reason set (a
 * static string). */
pid_t pppd_start(const struct conf *conf, const struct pppd_args *in,
    int sock, int report, int *pty, const char **reason);

/* Who starts and signals a call's pppd, when it is not this process
 * (pptpd/monlink.h: the monitor does, for an unprivileged worker), and
 * does for the call what needs root.
 * start: as pppd_start, with `tcp`, the call's control connection, from
 * which the monitor reads the addresses itself, and `ours`, this process's
 * end of the report channel (-1: none), which the runner holds a copy of
 * with the connection and the pty so that the session can outlive this
 * process; on the kernel path `sock` is -1: the runner opens the channel
 * (and guards it). signal: `sig` for the pppd of call `call_id` (pid
 * `pid`), `cut` when this process has closed the call's pty master (the
 * runner closes its copy first, so that pppd sees the hangup). clamp: the TCP MSS on the call's
 * interface `ifname` (mss.h), *mss the IPv4 value; 0, or -1 with why set,
 * or -2 when the runner has no clamping (not to be asked again until a
 * reload). shape: the call's rate on `ifname` (shaper.h's shaper_set:
 * `down` and `up` bits/s, 0 none that way, 0/0 takes it off); 0, or -1
 * with why set. route6: the call's /64 `prefix` routed to `ifname`
 * (route6.h), or with `prefix` NULL its route deleted; 0, or -1 with why
 * set. readdr: the call's peer has `remote` (of the pool) instead of the
 * address it was started with; 0, or -1 with why set. The runner takes
 * the interface out of its table, its rate off it
 * and its route away when pppd is reaped or the call names another one. */
/* A call whose pppd runs on after the worker that started it died: the
 * monitor hands it to the next worker (privsep.md, "Step 3"). Its
 * descriptors are the taker's: the control connection, the worker's end
 * of the report channel (-1: none) and the pty master (-1: kernel path). */
struct pppd_resumed {
	uint16_t       call_id, peer_call_id;
	int            kernel, ipv6;
	pid_t          pid;
	struct in_addr local, remote;
	int            conn, report, pty;
};

/* Close what `r` still holds (-1s are skipped; each set to -1). */
void pppd_resumed_close(struct pppd_resumed *r);

struct pppd_runner {
	pid_t (*start)(void *arg, const struct pppd_args *in, int tcp, int sock,
	    int report, int ours, int *pty, const char **reason);
	void  (*signal)(void *arg, uint16_t call_id, pid_t pid, int sig,
	    int cut);
	int   (*clamp)(void *arg, uint16_t call_id, const char *ifname,
	    unsigned *mss, char *why, size_t whylen);
	int   (*shape)(void *arg, uint16_t call_id, const char *ifname,
	    uint64_t down, uint64_t up, char *why, size_t whylen);
	int   (*route6)(void *arg, uint16_t call_id, const char *ifname,
	    const struct in6_addr *prefix, char *why, size_t whylen);
	int   (*readdr)(void *arg, uint16_t call_id, struct in_addr remote,
	    char *why, size_t whylen);
	/* A call handed back (pppd_resumed) that this worker does not take:
	 * the runner ends it on its own. */
	void  (*drop)(void *arg, uint16_t call_id);
	void  *arg;
};

#endif
