/* The kernel path's GRE guard: what it decides for one packet of a call
 * it watches. Pure logic on one call's state, no I/O, compiled twice: into
 * the eBPF program (pptpd/bpf/kguard.c, clang -target bpf) and into the
 * host's unit test (tests/unit/test_kguard.c). So it includes only the
 * kernel's type header, which both compilations have, and no libc.
 *
 * Why a guard at all: Linux's PPTP channel (net/ppp/pptp.c) delivers any
 * packet whose sequence number is above the last one it took, and adopts
 * that number. One forged packet from the client's address with the
 * call's ID and a number far ahead therefore moves it past the real
 * stream, which it then drops as old: the session is dead, while LCP
 * echoes (exempt from the check) keep pppd from noticing. It also trusts
 * a payload length shorter than the datagram. The rules below are the
 * engine's (proto/seq.h), cut down to what needs no buffer: the kernel
 * reorders nothing, so "held" becomes "delivered at once".
 *
 * Relative to `last`, the wire number of the last packet passed:
 *   1 <= d <= WINDOW          passed, last = seq
 *   anything else, the stream flowing (something passed less than
 *   QUIET ago)                dropped: a replay, a forged jump, far off
 *   anything else, quiet      counted as a run (each packet at most WINDOW
 *                             after the one before): believed at the
 *                             RUN_JUMP-th packet if it is within JUMP_MAX
 *                             of last either way, at the RUN_FAR-th if
 *                             further. Believed behind last (the real
 *                             stream back after forged in-window numbers
 *                             took its place), the kernel is shown the
 *                             packet renumbered as last's successor: it
 *                             would drop any number it has taken already.
 *                             The offset stays until the next such resync.
 *                             Never back before `floor` (where the last
 *                             backward resync came from), so replays get
 *                             nothing delivered a third time; the floor
 *                             is forgotten once last is JUMP_MAX past it
 *                             or a far-off run is believed, as the
 *                             engine's.
 * The first packet of a call is taken as it comes (there is no stream yet
 * to protect; the call was answered a moment ago).
 */
#ifndef PPTPD_KGUARD_RULE_H
#define PPTPD_KGUARD_RULE_H

#include <linux/types.h>

/* Inlined into the eBPF program, which then needs no calls between
 * functions (each would be verified apart); harmless on the host. */
#define KGUARD_INLINE static inline __attribute__((always_inline))

/* The engine's constants (proto/seq.h, checked equal in pptpd/kguard.c). */
#define KGUARD_WINDOW       64      /* SEQ_REORDER_SLOTS */
#define KGUARD_JUMP_MAX     4096    /* SEQ_JUMP_MAX */
#define KGUARD_RUN_JUMP     2       /* SEQ_JUMP_CONFIRM, SEQ_BACK_CONFIRM */
#define KGUARD_RUN_FAR      8       /* SEQ_RESYNC_COUNT */
#define KGUARD_QUIET_NS     500000000ULL   /* SEQ_QUIET_MS */

/* Enhanced GRE (RFC 2637 4.1), as proto/packet.c reads it (its names are
 * private there; checked equal in pptpd/kguard.c where they are shared). */
#define KGUARD_GRE_F_KEY    0x20    /* first octet: K */
#define KGUARD_GRE_F_SEQ    0x10    /* first octet: S */
#define KGUARD_GRE_F_BAD0   0xcf    /* first octet: C R s Recur, none set */
#define KGUARD_GRE_F_ACK    0x80    /* second octet: A */
#define KGUARD_GRE_F_BAD1   0x78    /* second octet: flags, none set */
#define KGUARD_GRE_VER_MASK 0x07
#define KGUARD_GRE_VERSION  1
#define KGUARD_GRE_PROTO    0x880b  /* PPP */
#define KGUARD_GRE_HDR_MIN  8       /* GRE_HDR_MIN: up to the Call ID */
#define KGUARD_GRE_HDR_MAX  16      /* GRE_HDR_MAX: with seq and ack */
#define KGUARD_GRE_OPT_LEN  4       /* a sequence number or an ack */
#define KGUARD_IPPROTO_GRE  47
#define KGUARD_IP_MF        0x2000  /* more fragments */
#define KGUARD_IP_OFFMASK   0x1fff  /* fragment offset */

/* One watched call: the client's IPv4 address and our Call ID, both as
 * they are on the wire (network order), as the program reads them. */
struct kguard_key {
	__u32 client;
	__u16 call_id;
	__u16 pad;      /* zero: keys are compared as bytes */
};

struct kguard_state {
	__u64 last_ns;      /* when a packet was last passed */
	__u32 last;         /* its wire number */
	__u32 offset;       /* added to wire numbers for the kernel */
	__u32 run_seq;      /* the last packet of the current run */
	__u32 floor;        /* no backward resync before this */
	__u8  have_last, run_len, have_floor, pad;
	/* What the guard did, for the call's end line. */
	__u32 passed, dropped_bad, dropped_seq, resyncs;
};

enum kguard_verdict {
	KGUARD_PASS,        /* to the kernel, with the number it returns */
	KGUARD_DROP_SEQ,    /* out of the window, the stream flowing */
	KGUARD_DROP_RUN,    /* out of the window, a run not (yet) believed */
};

KGUARD_INLINE __s32
kguard_diff(__u32 a, __u32 b)
{
	return (__s32)(a - b);
}

/* A packet's sequence number `seq` at `now_ns`: the verdict, and on
 * KGUARD_PASS in *kseq the number to show the kernel. */
KGUARD_INLINE enum kguard_verdict
kguard_rule_seq(struct kguard_state *st, __u32 seq, __u64 now_ns, __u32 *kseq)
{
	__s32 d;

	if (!st->have_last) {
		st->have_last = 1;
		goto pass;
	}
	d = kguard_diff(seq, st->last);
	if (d >= 1 && d <= KGUARD_WINDOW)
		goto pass;
	if (now_ns - st->last_ns < KGUARD_QUIET_NS) {
		st->run_len = 0;
		return KGUARD_DROP_SEQ;
	}
	if (st->run_len > 0 && kguard_diff(seq, st->run_seq) >= 1 &&
	    kguard_diff(seq, st->run_seq) <= KGUARD_WINDOW)
		st->run_len++;
	else
		st->run_len = 1;
	st->run_seq = seq;
	if (d >= -KGUARD_JUMP_MAX && d <= KGUARD_JUMP_MAX) {
		if (st->run_len < KGUARD_RUN_JUMP)
			return KGUARD_DROP_RUN;
		if (d <= 0) {
			/* Back: not before where the last backward resync came
			 * from. */
			if (st->have_floor && kguard_diff(seq, st->floor) <= 0) {
				st->run_len = 0;
				return KGUARD_DROP_RUN;
			}
			st->floor = st->last;
			st->have_floor = 1;
		}
	} else {
		if (st->run_len < KGUARD_RUN_FAR)
			return KGUARD_DROP_RUN;
		st->have_floor = 0;   /* a new stream: the old floor is moot */
	}
	/* Shown to the kernel as last's successor when it is behind. */
	if (d <= 0)
		st->offset = st->last + st->offset + 1 - seq;
	st->resyncs++;
pass:
	st->run_len = 0;
	/* The floor matters only within reach of a backward run. */
	if (st->have_floor && kguard_diff(seq, st->floor) > KGUARD_JUMP_MAX)
		st->have_floor = 0;
	st->last = seq;
	st->last_ns = now_ns;
	st->passed++;
	*kseq = seq + st->offset;
	return KGUARD_PASS;
}

/* The header's flags as the engine takes them (proto/packet.c): K set,
 * none of C, R, s, the recursion count or the reserved flags: 1 if so.
 * The kernel's channel is laxer, and whatever it takes consumes a
 * sequence number the real packet needs. */
KGUARD_INLINE int
kguard_rule_flags(__u8 flags0, __u8 flags1)
{
	return (flags0 & KGUARD_GRE_F_KEY) && !(flags0 & KGUARD_GRE_F_BAD0) &&
	    !(flags1 & KGUARD_GRE_F_BAD1);
}

/* The payload length field against what the IPv4 datagram carries after
 * the GRE header, and against the S bit (a payload has a sequence number,
 * an ack-only packet has no payload): 1 if they agree. (The kernel takes a
 * shorter field as the payload and drops the rest, so a forged short
 * packet with the next number takes the real one's place.) First
 * fragments are not judged here: the datagram's length is not known yet;
 * pass ip_total 0 to check the S bit alone. */
KGUARD_INLINE int
kguard_rule_length(__u32 ip_total, __u32 ip_hdr, __u32 gre_hdr, __u32 plen,
    int has_seq)
{
	if (has_seq ? plen == 0 : plen != 0)
		return 0;
	if (ip_total == 0)
		return 1;
	return ip_total >= ip_hdr + gre_hdr && ip_total - ip_hdr - gre_hdr == plen;
}

#endif
