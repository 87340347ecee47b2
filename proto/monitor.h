/*
 * monitor.h -- the requests between pptpd's privileged monitor and its
 * unprivileged worker (doc/design/privsep.md). THIS FILE IS THE CONTRACT;
 * monitor.c encodes and decodes both directions and moves them, with
 * their descriptors, over the socket. Pure C, nothing of either side.
 *
 * Transport
 *   One SOCK_SEQPACKET socketpair per worker: one record per datagram,
 *   descriptors beside it as SCM_RIGHTS. Both ends run from one install,
 *   but not always one build (an upgrade starts the new monitor's worker
 *   while the old one is still ours for a moment): the header carries
 *   MON_VERSION and a record of another version is refused.
 *
 * Record
 *   header, MON_HDR_LEN bytes, big-endian:
 *       u32 magic MON_MAGIC   u16 version MON_VERSION   u16 type
 *       u32 seq               (a request's; its answer carries the same)
 *       u32 body length       (exactly the type's, below)
 *   then the body, fixed per type, and exactly the type's descriptors.
 *   Anything else (unknown type, a length or a descriptor count not the
 *   type's, a string without its NUL, a flag not defined) is refused
 *   whole: the receiver closes every descriptor that came with it.
 *
 *   The monitor believes none of it: every call ID, connection and pid a
 *   request names is checked against what the monitor itself handed out
 *   to this worker. No path, argv or environment ever crosses.
 *
 * Types (W: worker -> monitor, M: monitor -> worker)
 *   HELLO          W  u32 0 (reserved; the header says the version) fds 0
 *   WELCOME        M  u32 generation (workers started)  u32 calls fds 0:
 *                     `calls` CALL_RESUME records follow at once (a new
 *                     worker takes over its predecessor's sessions; 0 for
 *                     the first)
 *   CALL_RESUME    M  u16 call id  u16 peer call id  u16 flags (MON_CALL_*
 *                     as CALL_START had them)  u16 0  u32 pid
 *                     u32 local ip  u32 remote ip (network order)
 *                     fds: the call's control connection, then with
 *                     MON_CALL_REPORTS the worker's report end, then
 *                     without MON_CALL_KERNEL the pty master: a live call
 *                     the dead worker left, handed back (the new worker
 *                     checks it against its journal record; calls that
 *                     share a connection share its socket's inode)
 *   CONN_HOLD      W  u32 0 (reserved)                fds 1: the TCP socket
 *                     of a control connection the worker accepted; the
 *                     monitor keeps a copy so the connection outlives a
 *                     worker
 *   CONN_HELD      M  u32 conn                        fds 0
 *   CONN_DROP      W  u32 conn                        fds 0
 *   CALL_START     W  u16 call id  u16 peer call id  u16 flags (MON_CALL_*)
 *                     u16 0  u32 local ip  u32 remote ip (network order;
 *                     0: pppd picks)  fds: the call's control connection
 *                     (TCP: the monitor reads the client's and our
 *                     address from it), then with MON_CALL_REPORTS the
 *                     report channel's two ends, pppd's and the worker's:
 *                     start pppd for an Outgoing-Call-Request. The
 *                     monitor keeps a copy of the connection, of the
 *                     worker's report end and of the pty master until
 *                     pppd is reaped, so that a session can outlive its
 *                     worker (the worker shuts the connection down before
 *                     it closes it: the peer still hears the end of the
 *                     stream). With MON_CALL_KERNEL the
 *                     monitor opens the kernel's PPTP channel itself
 *                     (from the connection's addresses and the Call IDs)
 *                     and adds the call to the GRE guard
 *   CALL_STARTED   M  u16 call id  u16 flags  u32 pid
 *                     u32 local ip  u32 remote ip (as asked)
 *                     fds 1 (the pty master) on the engine path, 0 with
 *                     MON_CALL_KERNEL
 *   CALL_REFUSED   M  u8 OCRP result  u8 error  u16 0  char reason[MON_TEXT]
 *                     fds 0
 *   CALL_HANGUP    W  u16 call id  u8 cause (report.h's REPORT_CAUSE_*)
 *                     u8 how (MON_HANGUP_*)          fds 0; with
 *                     MON_HANGUP_CUT the worker has closed its pty master
 *                     and the monitor closes its own before SIGTERM, so
 *                     that pppd sees the line hang up
 *   CALL_IFACE     W  u16 call id  u16 0  char ifname[MON_IFNAME]: the
 *                     plugin reported the session's interface: clamp the
 *                     TCP MSS of SYNs crossing it (pptpd.conf's
 *                     tcp-mss-adjust); answered CALL_CLAMPED, or RESULT
 *                     with an error
 *   CHILD_EXIT     M  u16 call id  u16 0  u32 pid  i32 wait status: pppd
 *                     exited, not reaped yet; its reports can still be
 *                     read                           fds 0
 *   CALL_REAP      W  u16 call id: its reports are read; reap it, free
 *                     its ID and addresses            fds 0
 *   ADMIN          W  u16 what (MON_ADMIN_*)  u16 0   fds 0: pptpctl's
 *                     reload, shutdown or upgrade, asked through the worker
 *   RESULT         M  i32 status (0 ok, else a MON_ERR_*)  char text[MON_TEXT]
 *                     fds 0: the answer to CONN_DROP, CALL_HANGUP,
 *                     CALL_REAP and ADMIN, and a refused CALL_IFACE
 *   CALL_CLAMPED   M  u16 call id  u16 mss (the IPv4 value, not 0): the
 *                     interface is in the clamping table  fds 0
 *   CALL_RATE      W  u16 call id  u16 0  u64 down  u64 up (bits/s; 0: no
 *                     limit that way)  char ifname[MON_IFNAME]: set the
 *                     user's rate on the session's interface (IPCP up, or
 *                     a CoA-Request); answered RESULT  fds 0
 *   NOTIFY         W  u16 state (MON_NOTIFY_*)  u16 0  u32 sessions
 *                     u32 control connections: what systemd is to be told
 *                     (sd_notify); the monitor, the unit's main pid, words
 *                     and sends it. Answered RESULT  fds 0
 *   CALL_ROUTE6    W  u16 call id  u16 op (MON_ROUTE6_*)  u8 prefix[16]
 *                     (a /64: its last 8 bytes zero; all zero with DEL)
 *                     char ifname[MON_IFNAME] (empty with DEL): IPV6CP is
 *                     up, route the session's /64 to its interface (a
 *                     former route of the call's goes first), or take its
 *                     route away. Answered RESULT  fds 0
 *   CALL_ADDR      W  u16 call id  u16 0  u32 remote ip (network order):
 *                     pppd gave the peer this address of the pool instead
 *                     of the one it was started with (RADIUS'
 *                     Framed-IP-Address): the pool's reservation moves to
 *                     it. Answered RESULT  fds 0
 *   RELOAD_FILES   W  u32 0 (reserved)                fds 0: a reload is
 *                     asked (SIGHUP, pptpctl): open the files it reads.
 *                     Answered by one FILE per file, then RESULT (not OK:
 *                     the monitor's own read of them failed, its text why)
 *   FILE           M  u16 index  u16 count (1..MON_FILES_MAX)
 *                     char path[MON_PATH] (absolute)  fds 1: a file the
 *                     reload reads, opened read-only by the monitor (the
 *                     worker may not open root's 0600 files; it parses
 *                     them). The one direction a path crosses: the
 *                     worker's loaders ask for files by the names they
 *                     read, and find their descriptors by them.
 */
#ifndef PROTO_MONITOR_H
#define PROTO_MONITOR_H

#include <stddef.h>
#include <stdint.h>

#define MON_MAGIC        0x5050544dU   /* "PPTM" */
#define MON_VERSION      8
#define MON_HDR_LEN      16
#define MON_TEXT         512           /* reasons and results, NUL included:
                                          a reload's reason whole */
#define MON_IFNAME       16            /* IFNAMSIZ, NUL included */
#define MON_PATH         512           /* FILE's path, NUL included */
#define MON_FILES_MAX    16            /* files of one reload */
#define MON_MAX_FDS      3
#define MON_MAX_BODY     (4 + MON_PATH)   /* the longest: FILE's, RESULT's */
#define MON_MAX_LEN      (MON_HDR_LEN + MON_MAX_BODY)

enum mon_type {
	MON_HELLO = 1,
	MON_WELCOME,
	MON_CONN_HOLD,
	MON_CONN_HELD,
	MON_CONN_DROP,
	MON_CALL_START,
	MON_CALL_STARTED,
	MON_CALL_REFUSED,
	MON_CALL_HANGUP,
	MON_CALL_IFACE,
	MON_CHILD_EXIT,
	MON_CALL_REAP,
	MON_ADMIN,
	MON_RESULT,
	MON_CALL_CLAMPED,
	MON_CALL_RATE,
	MON_NOTIFY,
	MON_CALL_ROUTE6,
	MON_CALL_ADDR,
	MON_RELOAD_FILES,
	MON_FILE,
	MON_CALL_RESUME,
	MON_TYPE_MAX = MON_CALL_RESUME,
};

/* CALL_START and CALL_STARTED flags */
#define MON_CALL_KERNEL   0x0001       /* the kernel's PPTP channel */
#define MON_CALL_REPORTS  0x0002       /* the plugin reports (pptpd-report-fd) */
#define MON_CALL_IPV6     0x0004       /* IPV6CP too (+ipv6) */
#define MON_CALL_FLAGS    (MON_CALL_KERNEL | MON_CALL_REPORTS | MON_CALL_IPV6)

/* CALL_HANGUP's how */
#define MON_HANGUP_CLEAN  1            /* SIGTERM: pppd ends LCP */
#define MON_HANGUP_CUT    2            /* the pty hung up, then SIGTERM */
#define MON_HANGUP_KILL   3            /* SIGKILL */
#define MON_HANGUP_DROP   4            /* not the worker's any more (a
                                          call handed back that it does
                                          not take): the monitor ends it
                                          itself, its copies closed,
                                          SIGTERM, SIGKILL after a grace,
                                          no CHILD_EXIT */

/* ADMIN's what */
#define MON_ADMIN_RELOAD   1
#define MON_ADMIN_SHUTDOWN 2
#define MON_ADMIN_UPGRADE  3

/* NOTIFY's state: a STATUS line alone, or with READY=1, RELOADING=1 or
 * STOPPING=1 */
#define MON_NOTIFY_STATUS    1
#define MON_NOTIFY_READY     2
#define MON_NOTIFY_RELOADING 3
#define MON_NOTIFY_STOPPING  4

/* CALL_ROUTE6's op */
#define MON_ROUTE6_ADD     1
#define MON_ROUTE6_DEL     2
#define MON_PREFIX6        16          /* an IPv6 address's octets */

/* RESULT's status */
#define MON_OK             0
#define MON_ERR_REFUSED    1           /* the request named what is not ours */
#define MON_ERR_FAILED     2           /* allowed, but it did not work */
#define MON_ERR_OFF        3           /* what it asks for is off (not
                                          configured, or not to be had) */
#define MON_ERR_CONF       4           /* a reload's files say no: the text
                                          is their reason (file:line) */

struct mon_msg {
	enum mon_type type;
	uint32_t      seq;
	union {
		struct { uint32_t generation, calls; } welcome;
		struct { uint32_t conn; } conn;            /* HELD, DROP */
		struct {
			uint16_t call_id, peer_call_id, flags;
			uint32_t local_ip, remote_ip;      /* network order */
		} call_start;
		struct {
			uint16_t call_id, flags;
			uint32_t pid;
			uint32_t local_ip, remote_ip;      /* network order */
		} call_started;
		struct {
			uint8_t result, error;
			char    reason[MON_TEXT];
		} call_refused;
		struct {
			uint16_t call_id, peer_call_id, flags;
			uint32_t pid;
			uint32_t local_ip, remote_ip;      /* network order */
		} call_resume;
		struct {
			uint16_t call_id;
			uint8_t  cause, how;
		} call_hangup;
		struct {
			uint16_t call_id;
			char     ifname[MON_IFNAME];
		} call_iface;
		struct {
			uint16_t call_id;
			uint32_t pid;
			int32_t  status;
		} child_exit;
		struct { uint16_t call_id; } call_reap;
		struct { uint16_t what; } admin;
		struct {
			int32_t status;
			char    text[MON_TEXT];
		} result;
		struct { uint16_t call_id, mss; } call_clamped;
		struct {
			uint16_t call_id;
			uint64_t down, up;
			char     ifname[MON_IFNAME];
		} call_rate;
		struct {
			uint16_t state;
			uint32_t sessions, ctrls;
		} notify;
		struct {
			uint16_t call_id, op;
			uint8_t  prefix[MON_PREFIX6];
			char     ifname[MON_IFNAME];
		} call_route6;
		struct {
			uint16_t call_id;
			uint32_t remote_ip;                /* network order */
		} call_addr;
		struct {
			uint16_t index, count;
			char     path[MON_PATH];
		} file;
	} u;
	int           fds[MON_MAX_FDS];
	unsigned      nfds;
};

/* The descriptors a record of this type carries (CALL_STARTED: by its
 * flags); -1 for a type that does not exist. */
int mon_fds_of(const struct mon_msg *m);

/* A path FILE can carry: absolute, printable ASCII, under MON_PATH bytes. */
int mon_path_ok(const char *path);

/* Encode into buf (MON_MAX_LEN is enough). Returns the length, or 0 when
 * `m` is not a record this contract allows (its descriptors are not
 * looked at). */
size_t mon_encode(const struct mon_msg *m, uint8_t *buf, size_t len);

/* Decode one record of `len` bytes that arrived with `nfds` descriptors
 * (their numbers in `fds`, copied into m->fds). 0, or -1 with *reason set
 * (a static string); on -1 nothing in `m` is to be used and the caller
 * still owns (and must close) the descriptors. */
int mon_decode(const uint8_t *buf, size_t len, const int *fds, unsigned nfds,
    struct mon_msg *m, const char **reason);

/* Send `m` with its descriptors (m->fds, m->nfds) on a SOCK_SEQPACKET
 * socket. The descriptors stay the caller's. 0, or -1 with errno set
 * (EINVAL: not a valid record). */
int mon_send(int sock, const struct mon_msg *m);

/* Receive one record. 1 with `m` filled (its descriptors are now the
 * caller's, close-on-exec); 0 at end of file, or for an empty datagram,
 * which SOCK_SEQPACKET cannot tell apart from it by this read alone (the
 * caller decides the peer is gone by the socket's EPOLLHUP/EPOLLRDHUP, not
 * by a 0); -1 with *reason set when a
 * record was refused (errno EPROTO) or the socket failed (its errno;
 * every descriptor that came with it is closed, so a bad record leaks
 * none). */
int mon_recv(int sock, struct mon_msg *m, const char **reason);

/* Close m->fds and forget them. */
void mon_close_fds(struct mon_msg *m);

/* Is it a type the worker sends (a request)? The monitor refuses the
 * others. */
int mon_from_worker(unsigned type);

/* A printable name of a type, for logs ("?" when unknown). */
const char *mon_type_name(unsigned type);

#endif
