/* The userspace PPP client of pptp-load: one object per session that runs
 * LCP, authentication (MS-CHAPv2, also PAP and CHAP-MD5), CCP with MPPE
 * (RFC 3078/3079), IPCP (address, DNS/WINS) and IPV6CP, and encrypts and
 * decrypts the IP datagrams the session carries.
 *
 * It does no I/O and keeps no clock of its own: the session hands it every
 * PPP frame that arrived over GRE (ppp_input) and the current time
 * (ppp_timer), and it hands back frames to send and events through the ops
 * given at creation. That keeps it testable frame by frame, and lets one
 * process carry thousands of sessions on one event loop. */
#ifndef CLIENT_PPP_H
#define CLIENT_PPP_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

struct ppp;

/* What a profile asks for; filled by the caller from --profile and the
 * command line. */
enum ppp_auth { PPP_AUTH_MSCHAPV2, PPP_AUTH_CHAP_MD5, PPP_AUTH_PAP };
enum ppp_mppe {
	PPP_MPPE_NONE,       /* refuse CCP: no encryption */
	PPP_MPPE_128,
	PPP_MPPE_40,
	PPP_MPPE_ANY,        /* offer 40 and 128, take what the server picks */
	PPP_MPPE_REFUSE,     /* run CCP without MPPE: an empty request, the
	                        server's MPPE option Configure-Rejected */
};
/* When the client renegotiates LCP of its own: a Configure-Request on an
 * open link takes it back to the Establish phase (RFC 1661 section 4.3,
 * event RCR in state Opened), and the server authenticates again. */
enum ppp_renego {
	PPP_RENEGO_NONE,
	PPP_RENEGO_AUTH,     /* as soon as the first authentication
	                        succeeds: before any CCP or IPCP */
	PPP_RENEGO_UP,       /* when IPCP (and CCP) first open, before
	                        ops->up */
};

struct ppp_config {
	const char *user;
	const char *password;
	enum ppp_auth auth;
	enum ppp_mppe mppe;
	int mppe_stateful;       /* ask for stateful MPPE (default stateless) */
	int mppe_required;       /* fail the session if CCP does not open */
	uint16_t mru;            /* 1400 for the Windows profile */
	int windows;             /* Windows' extras: CBCP option 13 in the
	                            first ConfReq, LCP Identification
	                            "MSRASV5.20", IPCP DNS/WINS, IPV6CP */
	int want_dns;            /* ask for DNS (and WINS when windows) */
	int ipv6cp;              /* run IPV6CP */
	/* One LCP renegotiation of our own, and who the client is after it:
	 * renego_user/renego_password (NULL: the same identity), and the
	 * CCP choice then (renego_mppe, renego_mppe_required). */
	enum ppp_renego renego;
	const char *renego_user, *renego_password;
	enum ppp_mppe renego_mppe;
	int renego_mppe_required;
	/* Optional: where the magic number, MS-CHAPv2 peer challenge and
	 * IPV6CP identifier come from (tests fix them); NULL: OpenSSL's
	 * RAND_bytes(). */
	void (*random)(uint8_t *buf, size_t len);
};

/* Why a session's PPP ended or failed: one word per cause, for the summary
 * ("sessions failed by reason"). */
enum ppp_reason {
	PPP_REASON_NONE = 0,
	PPP_REASON_LCP_TIMEOUT,
	PPP_REASON_LCP_REJECTED,
	PPP_REASON_AUTH_FAILED,   /* the server said CHAP/PAP Failure */
	PPP_REASON_AUTH_BAD,      /* the server's MS-CHAPv2 authenticator
	                             response did not check out */
	PPP_REASON_CCP_FAILED,    /* MPPE required but not agreed */
	PPP_REASON_IPCP_FAILED,
	PPP_REASON_PEER_TERMINATE,/* LCP Terminate-Request from the server */
	PPP_REASON_LOCAL_CLOSE,   /* ppp_close() */
	PPP_REASON_BAD_FRAME,     /* not used to end a session: counted */
	PPP_REASON__COUNT
};
const char *ppp_reason_str(enum ppp_reason r);

/* What IPCP agreed, handed to ops->up. */
struct ppp_facts {
	struct in_addr local, peer, dns[2], wins[2];
	int mppe_bits;           /* 0, 40 or 128 */
	int mppe_stateful;
	uint16_t peer_mru;
};

struct ppp_ops {
	/* A PPP frame to carry over GRE: protocol field onwards, the address
	 * and control field 0xFF 0x03 included unless ACFC was agreed (as the
	 * PPTP client sends them). Valid only during the call. */
	void (*output)(void *arg, const uint8_t *frame, size_t len);
	/* IPCP (and CCP, when MPPE is wanted) are open: data may flow. After
	 * an LCP renegotiation (either side's) the link is down until this
	 * comes again. */
	void (*up)(void *arg, const struct ppp_facts *facts);
	/* An IPv4 datagram arrived (decrypted). Valid only during the call. */
	void (*ip_input)(void *arg, const uint8_t *ip, size_t len);
	/* The link is down for `reason`; the object may be freed after. */
	void (*down)(void *arg, enum ppp_reason reason);
	/* Optional: a step of setup completed ("lcp", "auth", "ccp", "ipcp",
	 * "ipv6cp"; "renegotiate" when LCP goes back to Establish on an open
	 * link, "reauth" for every authentication after the first), for the
	 * per-step report of the e2e test. */
	void (*step)(void *arg, const char *step);
};

struct ppp *ppp_new(const struct ppp_config *cfg, const struct ppp_ops *ops,
    void *arg);
void ppp_free(struct ppp *ppp);
/* Send the first LCP Configure-Request. */
void ppp_start(struct ppp *ppp, uint64_t now_ms);
/* One PPP frame from GRE (with or without 0xFF 0x03, with a 1- or 2-byte
 * protocol field). Bad frames are counted and dropped, never fatal. */
void ppp_input(struct ppp *ppp, const uint8_t *frame, size_t len,
    uint64_t now_ms);
/* Encrypt (if MPPE is up) and send one IPv4 datagram. Returns 0, or -1
 * when the link is not up or the datagram is too big. */
int ppp_send_ip(struct ppp *ppp, const uint8_t *ip, size_t len);
/* Retransmissions and timeouts; returns the next deadline in ms (0 when
 * no timer is running). */
uint64_t ppp_timer(struct ppp *ppp, uint64_t now_ms);
/* LCP Terminate-Request; ops->down follows with PPP_REASON_LOCAL_CLOSE. */
void ppp_close(struct ppp *ppp, uint64_t now_ms);

/* The text of the server's LCP Terminate-Request ("" when none came, or it
 * had none), printable ASCII only, at most PPP_PEER_MSG_MAX - 1 bytes. */
#define PPP_PEER_MSG_MAX 48
const char *ppp_peer_message(const struct ppp *ppp);

/* The global IPv6 address formed from the server's Router Advertisement
 * (its /64, our IPV6CP identifier): 0 and *out set, or -1 when none came. */
int ppp_ipv6_address(const struct ppp *ppp, struct in6_addr *out);

/* Counters for the summary. */
struct ppp_stats {
	uint64_t bad_frames;     /* unparseable or unknown protocol */
	uint64_t mppe_resyncs;   /* flushed-bit / coherency-count resyncs */
	uint64_t mppe_dropped;   /* datagrams lost to MPPE (stateful loss) */
	uint64_t renegotiations; /* LCP renegotiations, ours and the server's */
};
void ppp_get_stats(const struct ppp *ppp, struct ppp_stats *st);

/* Bytes of memory the object holds: its own size and its allocations
 * (for the per-session memory figure). */
size_t ppp_memory(const struct ppp *ppp);
/* The largest IPv4 datagram ppp_send_ip() takes now (the server's MRU,
 * less MPPE's 4 octets when encrypting); 0 while the link is not up. */
size_t ppp_mtu(const struct ppp *ppp);

#endif
