/* The kernel data path's GRE guard (pptpd/kguard.h): loads the embedded
 * eBPF program (pptpd/bpf/kguard.c), attaches it, keeps its map of calls.
 *
 * Why tc ingress: it runs on every packet an interface receives before the
 * IP layer, so before the kernel's PPTP channel (net/ppp/pptp.c), which
 * has no hook of its own, and it may drop and rewrite. netfilter could
 * match the length, but not compare a sequence number with the call's
 * last one, nor renumber. XDP would also do, but not on every driver, and
 * it sees no VLAN- or bridge-level view that tc does not.
 * Why libbpf: it is the kernel's own loader library, packaged everywhere
 * pptpd runs (Debian's libbpf1), and does the ELF, BTF, map and netlink
 * work (bpf_tc_hook_create/bpf_tc_attach) that would otherwise be a few
 * hundred lines of our own. */
#include "pptpd/kguard.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <linux/if_packet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "proto/packet.h"
#include "proto/seq.h"
#include "pptpd/kguard-rule.h"
#include "pptpd/log.h"

/* The program and the engine judge sequence numbers alike. */
static_assert(KGUARD_WINDOW == SEQ_REORDER_SLOTS, "window");
static_assert(KGUARD_JUMP_MAX == SEQ_JUMP_MAX, "jump");
static_assert(KGUARD_RUN_JUMP == SEQ_JUMP_CONFIRM &&
    KGUARD_RUN_JUMP == SEQ_BACK_CONFIRM, "jump and late runs");
static_assert(KGUARD_RUN_FAR == SEQ_RESYNC_COUNT, "far-off runs");
static_assert(KGUARD_QUIET_NS == SEQ_QUIET_MS * 1000000ULL, "quiet");
static_assert(KGUARD_GRE_HDR_MIN == GRE_HDR_MIN &&
    KGUARD_GRE_HDR_MAX == GRE_HDR_MAX, "GRE header");

/* The program's ELF object, from pptpd/bpf/kguard-obj.S. */
extern const unsigned char kguard_bpf_obj[], kguard_bpf_obj_end[];

#define KGUARD_PROG     "kguard_ingress"
#define KGUARD_MAP      "kguard_calls"
/* Our filter's place at each interface's ingress: fixed, so that a pptpd
 * restarted after a crash replaces its predecessor's filter
 * (BPF_TC_F_REPLACE) instead of adding a second one. 0x1723: port 1723. */
#define KGUARD_TC_HANDLE   0x1723
#define KGUARD_TC_PRIORITY 1
/* Interfaces looked at; more are left unguarded, with a warning. */
#define KGUARD_MAX_IFACES  64

struct kguard_iface {
	int ifindex;
	int attached;   /* 0: tried and failed (not tried again) */
};

struct kguard {
	struct bpf_object *obj;
	int prog_fd, map_fd;
	struct kguard_iface ifs[KGUARD_MAX_IFACES];
	int nifs;
	int warned_full;
};

/* libbpf's own messages: detail for -d, our caller logs the failure. */
static int
kguard_libbpf_print(enum libbpf_print_level level, const char *fmt,
    va_list ap)
{
	char line[512];
	size_t n;

	if (level == LIBBPF_DEBUG || !log_debug_enabled())
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n > 0 && line[n - 1] == '\n')   /* ours adds one */
		line[--n] = '\0';
	log_msg(LOG_DEBUG, "GRE guard: %s", line);
	return 0;
}

static struct kguard_iface *
kguard_iface_find(struct kguard *g, int ifindex)
{
	for (int i = 0; i < g->nifs; i++)
		if (g->ifs[i].ifindex == ifindex)
			return &g->ifs[i];
	return NULL;
}

static int
kguard_attach(struct kguard *g, int ifindex, const char *name)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
	    .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = g->prog_fd,
	    .handle = KGUARD_TC_HANDLE, .priority = KGUARD_TC_PRIORITY,
	    .flags = BPF_TC_F_REPLACE);
	int e = bpf_tc_hook_create(&hook);   /* the clsact qdisc */
	if (e < 0 && e != -EEXIST) {
		log_msg(LOG_WARNING, "GRE guard: cannot add the clsact qdisc to "
		    "%s: %s", name, strerror(-e));
		return -1;
	}
	if ((e = bpf_tc_attach(&hook, &opts)) < 0) {
		log_msg(LOG_WARNING, "GRE guard: cannot attach to %s: %s", name,
		    strerror(-e));
		return -1;
	}
	log_msg(LOG_DEBUG, "GRE guard: attached at %s ingress", name);
	return 0;
}

static void
kguard_detach(int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
	    .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = KGUARD_TC_HANDLE,
	    .priority = KGUARD_TC_PRIORITY);
	/* The qdisc stays: other filters may hang off it. An interface
	 * that has gone took our filter with it. */
	bpf_tc_detach(&hook, &opts);
}

/* The Ethernet interfaces with an IPv4 address not guarded yet (GRE for
 * us arrives where our addresses are; the program assumes a 14-octet MAC
 * header, so others, and the loopback, are left out). The number of
 * interfaces guarded now. */
static int
kguard_scan(struct kguard *g)
{
	struct ifaddrs *all, *a, *p;
	int n = 0;

	if (getifaddrs(&all) < 0) {
		log_msg(LOG_WARNING, "GRE guard: cannot list interfaces: %s",
		    strerror(errno));
		return -1;
	}
	for (p = all; p != NULL; p = p->ifa_next) {
		if (p->ifa_addr == NULL || p->ifa_addr->sa_family != AF_PACKET ||
		    (p->ifa_flags & IFF_LOOPBACK))
			continue;
		const struct sockaddr_ll *ll = (const struct sockaddr_ll *)p->ifa_addr;
		if (ll->sll_hatype != ARPHRD_ETHER)
			continue;
		int has_v4 = 0;
		size_t len = strlen(p->ifa_name);
		for (a = all; a != NULL && !has_v4; a = a->ifa_next)
			has_v4 = a->ifa_addr != NULL &&
			    a->ifa_addr->sa_family == AF_INET &&
			    strncmp(a->ifa_name, p->ifa_name, len) == 0 &&
			    (a->ifa_name[len] == '\0' || a->ifa_name[len] == ':');
		if (!has_v4)
			continue;
		struct kguard_iface *f = kguard_iface_find(g, ll->sll_ifindex);
		if (f == NULL) {
			if (g->nifs == KGUARD_MAX_IFACES) {
				if (!g->warned_full)
					log_msg(LOG_WARNING, "GRE guard: more than %d "
					    "interfaces; %s and later ones are not "
					    "guarded", KGUARD_MAX_IFACES, p->ifa_name);
				g->warned_full = 1;
				continue;
			}
			f = &g->ifs[g->nifs++];
			f->ifindex = ll->sll_ifindex;
			f->attached = kguard_attach(g, f->ifindex, p->ifa_name) == 0;
		}
		n += f->attached;
	}
	freeifaddrs(all);
	return n;
}

struct kguard *
kguard_open(char *why, size_t whylen)
{
	struct kguard *g = calloc(1, sizeof(*g));
	struct bpf_program *prog;
	struct bpf_map *map;
	int e;

	if (g == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	libbpf_set_print(kguard_libbpf_print);
	g->obj = bpf_object__open_mem(kguard_bpf_obj,
	    (size_t)(kguard_bpf_obj_end - kguard_bpf_obj), NULL);
	if (g->obj == NULL) {
		snprintf(why, whylen, "cannot read its eBPF object: %s",
		    strerror(errno));
		goto fail;
	}
	if ((e = bpf_object__load(g->obj)) < 0) {
		snprintf(why, whylen, "cannot load its eBPF program: %s%s",
		    strerror(-e), e == -EPERM ? " (needs CAP_BPF and "
		    "CAP_NET_ADMIN)" : "");
		goto fail;
	}
	prog = bpf_object__find_program_by_name(g->obj, KGUARD_PROG);
	map = bpf_object__find_map_by_name(g->obj, KGUARD_MAP);
	if (prog == NULL || map == NULL) {
		snprintf(why, whylen, "its eBPF object lacks %s",
		    prog == NULL ? KGUARD_PROG : KGUARD_MAP);
		goto fail;
	}
	g->prog_fd = bpf_program__fd(prog);
	g->map_fd = bpf_map__fd(map);
	if (kguard_scan(g) <= 0) {
		snprintf(why, whylen, "cannot attach to any Ethernet interface "
		    "with an IPv4 address (the log says why)");
		goto fail;
	}
	return g;
fail:
	kguard_close(g);
	return NULL;
}

static struct kguard_key
kguard_key_of(struct in_addr client, uint16_t call_id)
{
	struct kguard_key k;
	memset(&k, 0, sizeof(k));
	k.client = client.s_addr;
	k.call_id = htons(call_id);   /* as in the GRE header */
	return k;
}

int
kguard_add(struct kguard *g, struct in_addr client, uint16_t call_id,
    char *why, size_t whylen)
{
	struct kguard_key k = kguard_key_of(client, call_id);
	struct kguard_state st;

	kguard_scan(g);   /* interfaces that came up since */
	memset(&st, 0, sizeof(st));
	if (bpf_map_update_elem(g->map_fd, &k, &st, BPF_ANY) < 0) {
		snprintf(why, whylen, "GRE guard: cannot add the call: %s",
		    strerror(errno));
		return -1;
	}
	return 0;
}

void
kguard_del(struct kguard *g, struct in_addr client, uint16_t call_id,
    struct kguard_stats *out)
{
	struct kguard_key k = kguard_key_of(client, call_id);
	struct kguard_state st;

	memset(&st, 0, sizeof(st));
	if (bpf_map_lookup_elem(g->map_fd, &k, &st) == 0)
		bpf_map_delete_elem(g->map_fd, &k);
	if (out != NULL) {
		out->passed = st.passed;
		out->dropped_bad = st.dropped_bad;
		out->dropped_seq = st.dropped_seq;
		out->resyncs = st.resyncs;
	}
}

void
kguard_stats_log(const struct kguard_stats *st, uint16_t id,
    uint16_t peer_id, struct in_addr client)
{
	if (st->dropped_bad || st->dropped_seq || st->resyncs)
		log_msg(LOG_NOTICE, "call %u/%u %s: GRE guard: passed %u, dropped "
		    "%u malformed (flags, length) and %u out of sequence, %u resyncs",
		    id, peer_id, inet_ntoa(client), st->passed, st->dropped_bad,
		    st->dropped_seq, st->resyncs);
}

void
kguard_close(struct kguard *g)
{
	if (g == NULL)
		return;
	for (int i = 0; i < g->nifs; i++)
		if (g->ifs[i].attached)
			kguard_detach(g->ifs[i].ifindex);
	bpf_object__close(g->obj);
	free(g);
}
