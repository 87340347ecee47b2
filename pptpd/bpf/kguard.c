/* The kernel path's GRE guard, as an eBPF program at tc ingress (loaded
 * and attached by pptpd/kguard.c, which says why tc and why libbpf).
 * Compiled with clang -target bpf and embedded in pptpd; not a host
 * object, hence its own directory.
 *
 * For IPv4 GRE version 1 (enhanced GRE, PPP) to a call in `kguard_calls`
 * (the client's address and our Call ID, put there by pptpd while the
 * call is on the kernel path) it drops flags the engine refuses, a payload
 * length that does not match the datagram (or the S bit), and a sequence
 * number the rules of
 * pptpd/kguard-rule.h refuse, and renumbers what they take back after a
 * forged burst. Everything else is passed untouched: other calls, other
 * protocols, non-first fragments (the kernel reassembles them before the
 * PPTP channel sees them; the first fragment, with the GRE header, is
 * judged by its number), packets without a sequence number (acks).
 *
 * The interfaces it is attached to are Ethernet (the loader checks): the
 * IPv4 header follows a 14-octet MAC header. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "pptpd/kguard-rule.h"

/* Calls on the kernel path: a few thousand at most (16-bit Call IDs per
 * client address; pptpd's own limits are far lower). */
#define KGUARD_MAX_CALLS 65536

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KGUARD_MAX_CALLS);
	__type(key, struct kguard_key);
	__type(value, struct kguard_state);
} kguard_calls SEC(".maps");

union kguard_key_raw {
	struct kguard_key k;
	__u64 raw;
};

static __always_inline void
kguard_key_set(union kguard_key_raw *key, __u32 client, __u16 call_id)
{
	_Static_assert(sizeof(struct kguard_key) == sizeof(__u64), "key");
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	key->raw = (__u64)client | (__u64)call_id << 32;
#else
	key->raw = (__u64)client << 32 | (__u64)call_id << 16;
#endif
}

struct gre_head {
	__u8  flags0, flags1;
	__u16 proto, plen, call_id;
	__u32 seq;      /* present when KGUARD_GRE_F_SEQ */
};

SEC("tc")
int
kguard_ingress(struct __sk_buff *skb)
{
	struct iphdr ip;
	struct gre_head g;
	/* Written in one 8-octet store (kguard_key_set): without CAP_PERFMON
	 * the verifier (6.1) takes a narrow store of a known scalar as a
	 * register spill and refuses a second narrow store into the same 8
	 * octets ("attempt to corrupt spilled pointer on stack"). */
	union kguard_key_raw key;
	struct kguard_state *st;
	__u32 ihl, hdr, off, kseq;
	__u16 frag;

	if (skb->protocol != bpf_htons(ETH_P_IP))
		return TC_ACT_OK;
	if (bpf_skb_load_bytes(skb, ETH_HLEN, &ip, sizeof(ip)) < 0)
		return TC_ACT_OK;
	if (ip.version != 4 || ip.protocol != KGUARD_IPPROTO_GRE)
		return TC_ACT_OK;
	frag = bpf_ntohs(ip.frag_off);
	if (frag & KGUARD_IP_OFFMASK)
		return TC_ACT_OK;
	ihl = (__u32)ip.ihl * 4;
	if (ihl < sizeof(ip))
		return TC_ACT_OK;   /* the IP layer drops it */
	off = ETH_HLEN + ihl;
	if (bpf_skb_load_bytes(skb, off, &g, KGUARD_GRE_HDR_MIN) < 0)
		return TC_ACT_OK;
	if ((g.flags1 & KGUARD_GRE_VER_MASK) != KGUARD_GRE_VERSION ||
	    g.proto != bpf_htons(KGUARD_GRE_PROTO))
		return TC_ACT_OK;   /* not PPTP's: the PPTP channel drops it */
	kguard_key_set(&key, ip.saddr, g.call_id);
	st = bpf_map_lookup_elem(&kguard_calls, &key.k);
	if (st == NULL)
		return TC_ACT_OK;
	if (!kguard_rule_flags(g.flags0, g.flags1)) {
		__sync_fetch_and_add(&st->dropped_bad, 1);
		return TC_ACT_SHOT;
	}
	hdr = KGUARD_GRE_HDR_MIN;
	if (g.flags0 & KGUARD_GRE_F_SEQ)
		hdr += KGUARD_GRE_OPT_LEN;
	if (g.flags1 & KGUARD_GRE_F_ACK)
		hdr += KGUARD_GRE_OPT_LEN;
	if (!kguard_rule_length(frag & KGUARD_IP_MF ? 0 : bpf_ntohs(ip.tot_len),
	    ihl, hdr, bpf_ntohs(g.plen), g.flags0 & KGUARD_GRE_F_SEQ)) {
		__sync_fetch_and_add(&st->dropped_bad, 1);
		return TC_ACT_SHOT;
	}
	if (!(g.flags0 & KGUARD_GRE_F_SEQ))
		return TC_ACT_OK;
	if (bpf_skb_load_bytes(skb, off + KGUARD_GRE_HDR_MIN, &g.seq,
	    sizeof(g.seq)) < 0)
		return TC_ACT_SHOT;   /* shorter than its own flags say */
	/* Calls are few per CPU and their packets serialised per flow by the
	 * NIC's queue; a race between two CPUs on one call costs at worst one
	 * misjudged packet, not worth a lock on every packet. */
	if (kguard_rule_seq(st, bpf_ntohl(g.seq), bpf_ktime_get_ns(), &kseq) !=
	    KGUARD_PASS) {
		__sync_fetch_and_add(&st->dropped_seq, 1);
		return TC_ACT_SHOT;
	}
	if (kseq != bpf_ntohl(g.seq)) {
		/* GRE here has no checksum (PPTP sets no C bit), so the number
		 * is rewritten alone. */
		kseq = bpf_htonl(kseq);
		if (bpf_skb_store_bytes(skb, off + KGUARD_GRE_HDR_MIN, &kseq,
		    sizeof(kseq), 0) < 0)
			return TC_ACT_SHOT;
	}
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
