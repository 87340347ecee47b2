/*
 * journal.h -- what a worker leaves for the next one (privsep,
 * doc/design/privsep.md, "Step 3"). THIS FILE IS THE CONTRACT between
 * one worker and the worker the monitor starts after it; journal.c
 * checks it. Pure C, nothing of either side.
 *
 * Where
 *   A memfd the monitor makes before it forks its first worker, mapped
 *   shared by every worker (inherited across fork, close-on-exec so
 *   that no pppd gets it). It never leaves the host: the fields are in
 *   the host's byte order (addresses in network order, as the sockets
 *   keep them). The monitor does not read it.
 *
 * Layout
 *   struct journal_head at offset 0, then JOURNAL_CALLS entries of
 *   struct journal_entry, the one of Call ID n at index n. The memfd is
 *   sparse: only the pages of live calls' entries are ever touched. An
 *   entry holds two records and the index of the current one.
 *
 * Who believes what
 *   A new worker reads only the records of the calls the monitor hands
 *   back (their Call IDs come from the monitor, which started them), and
 *   believes none of a record before journal_rec_check has passed: the
 *   old worker parsed what the network sent and may have been made to
 *   write anything. A record that fails ends its call, with the reason.
 *
 * Writing
 *   The worker writes a call's record whole when its facts change, into
 *   the record that is not current, then makes it current (one aligned
 *   32-bit store); when pppd has been reaped it makes a FREE record
 *   current. A worker killed in the middle of a write leaves the record
 *   before it current, whole: the next worker may miss the last change,
 *   never read half of one. A dead worker's records stay LIVE after the
 *   monitor has reaped their pppd (no one frees them): a record is read
 *   only for a Call ID the monitor hands back, which it does only for a
 *   pppd it still has; a new call with that ID writes it anew.
 */
#ifndef PROTO_JOURNAL_H
#define PROTO_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#define JOURNAL_MAGIC      0x50504a4eU   /* "PPJN" */
#define JOURNAL_VERSION    2
#define JOURNAL_CALLS      65536         /* every Call ID */
#define JOURNAL_NAME       256           /* user, Acct-Session-Id: NUL
                                            included (report.h's 255) */
#define JOURNAL_IFNAME     16            /* IFNAMSIZ, NUL included */
#define JOURNAL_MPPE       8             /* "none", "40", "128", "" */
#define JOURNAL_TUNNEL     16            /* a dotted quad, NUL included */

/* A record's state */
#define JOURNAL_FREE       0             /* no call (never written, or
                                            its pppd reaped) */
#define JOURNAL_LIVE       0x4c495645U   /* "LIVE": the call runs */

/* Its flags */
#define JOURNAL_F_KERNEL   0x0001        /* the kernel's PPTP channel */
#define JOURNAL_F_PREFIX6  0x0002        /* prefix6 is the call's /64 */
#define JOURNAL_FLAGS      (JOURNAL_F_KERNEL | JOURNAL_F_PREFIX6)

struct journal_head {
	uint32_t magic;
	uint16_t version;
	uint16_t rec_size;       /* sizeof(struct journal_rec) */
	uint32_t calls;          /* JOURNAL_CALLS */
	uint32_t reserved;
};

struct journal_rec {
	uint32_t state;          /* JOURNAL_FREE or JOURNAL_LIVE */
	uint16_t call_id;        /* its index */
	uint16_t peer_call_id;
	uint32_t flags;          /* JOURNAL_F_* */
	uint32_t pid;            /* its pppd */
	uint32_t local_ip;       /* network order */
	uint32_t remote_ip;      /* network order; 0: pppd picked */
	uint64_t started_ms;     /* CLOCK_MONOTONIC, which every process
	                            of the host shares */
	uint64_t up_ms;          /* the session up (the plugin said so);
	                            0: not yet */
	uint16_t peer_window;    /* the peer's receive window (OCRQ) */
	uint16_t reserved16;
	uint32_t reserved32;
	uint64_t rate_down;      /* bits/s; 0: no limit that way */
	uint64_t rate_up;
	uint8_t  prefix6[16];    /* with JOURNAL_F_PREFIX6 */
	char     mppe[JOURNAL_MPPE];
	char     user[JOURNAL_NAME];
	char     acct_session_id[JOURNAL_NAME];
	char     ifname[JOURNAL_IFNAME];
	char     ifname6[JOURNAL_IFNAME];  /* where its /64 is routed; "":
	                                      IPV6CP not up */
	char     tunnel[JOURNAL_TUNNEL];   /* the peer's address pppd reported
	                                      (dotted quad; "" not yet) */
	char     rate_src[JOURNAL_NAME];   /* where the rate came from */
};

struct journal_entry {
	uint32_t           current;   /* 0 or 1: which record holds */
	/* The engine path's next GRE sequence number to send, stored by the
	 * engine after each data packet (one aligned store, outside the
	 * records: the hot path pays no record copy). Zeroed when a call
	 * starts. A next worker starts there, past every number the peer has
	 * seen; a dead worker cannot have sent one it had not stored yet,
	 * since the store follows the number's use in the same packet's
	 * build, before the send. */
	uint32_t           tx_seq;
	struct journal_rec rec[2];
};

/* Bytes of the whole journal (head and every entry). */
size_t journal_size(void);

/* Write the head of a new, zeroed journal at `map`. */
void journal_init(void *map);

/* Is `map` (`len` bytes) a journal of this version? 0, or -1 with *why
 * set (a static string). */
int journal_check(const void *map, size_t len, const char **why);

/* Call ID `id`'s current record (a `current` out of range reads as
 * record 0, which the check then judges). */
const struct journal_rec *journal_rec(const void *map, uint16_t id);

/* Make `r` Call ID r->call_id's record (see Writing). */
void journal_rec_set(void *map, const struct journal_rec *r);

/* Where the engine stores Call ID `id`'s next sequence number; zero it
 * when the call starts. */
uint32_t *journal_tx_seq(void *map, uint16_t id);

/* Make Call ID `id`'s record a FREE one. */
void journal_rec_clear(void *map, uint16_t id);

/* Is `r` a live record of Call ID `id` that a worker may believe: state
 * LIVE, its own Call ID, no flag not defined, every string ended and
 * printable (ifname also free of '/' and blanks)? 0, or -1 with *why
 * set. */
int journal_rec_check(const struct journal_rec *r, uint16_t id,
    const char **why);

#endif
