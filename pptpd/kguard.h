/* The kernel data path's GRE guard: an eBPF program at tc ingress that
 * checks GRE for the calls on the kernel path before Linux's PPTP channel
 * sees it (the rules: pptpd/kguard-rule.h; the program:
 * pptpd/bpf/kguard.c, embedded in pptpd). */
#ifndef PPTPD_KGUARD_H
#define PPTPD_KGUARD_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

struct kguard;

/* What the guard did to one call's packets. */
struct kguard_stats {
	uint32_t passed, dropped_bad, dropped_seq, resyncs;
};

/* Loads the program and attaches it at ingress of this network
 * namespace's Ethernet interfaces that have an IPv4 address; NULL with
 * why set if the kernel, libbpf or our privileges do not allow it, or no
 * interface could be guarded. */
struct kguard *kguard_open(char *why, size_t whylen);

/* Watch the call with our Call ID `call_id` (host order) from `client`.
 * Interfaces that came up since are guarded first. -1 with why set if the
 * call could not be added (the map is full). */
int kguard_add(struct kguard *g, struct in_addr client, uint16_t call_id,
    char *why, size_t whylen);

/* Stop watching it; *st (if not NULL) gets what was done to it. */
void kguard_del(struct kguard *g, struct in_addr client, uint16_t call_id,
    struct kguard_stats *st);

/* Log what the guard did to call `id`/`peer_id` from `client`, if it did
 * anything (a dropped or renumbered packet is a forger's, or a fault on
 * the path): one line, the same whichever process held the guard. */
void kguard_stats_log(const struct kguard_stats *st, uint16_t id,
    uint16_t peer_id, struct in_addr client);

/* Detach the program from every interface and unload it. NULL is fine. */
void kguard_close(struct kguard *g);

#endif
