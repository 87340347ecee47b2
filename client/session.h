/* One pptp-load session: a TCP control connection from its own source
 * address (ctrl.c), its call's GRE on the shared socket (grelink.c), the
 * userspace PPP above it (ppp.h) and its streams (stream.c). Every way a
 * session can end has a reason; sessions live until the run's report,
 * their resources are released when they end. */
#ifndef CLIENT_SESSION_H
#define CLIENT_SESSION_H

#include <netinet/in.h>
#include <stdint.h>

#include "client/ctrl.h"
#include "client/grelink.h"
#include "client/ppp.h"
#include "client/stream.h"
#include "common/timer.h"

struct session;

/* Tags at the start of every object registered with epoll. */
enum epoll_kind { EPK_SESSION = 1, EPK_GRE, EPK_TUN, EPK_SIGNAL };

enum session_state {
	SS_NEW, SS_CONNECTING, SS_CTRL, SS_PPP, SS_UP, SS_CLOSING, SS_DONE,
};

enum session_reason {
	SR_NONE = 0,
	SR_CONNECT,           /* TCP connect failed */
	SR_TCP_CLOSED,        /* the server closed TCP */
	SR_TCP_ERROR,         /* a socket error */
	SR_CTRL,              /* the control connection failed: ctrl_reason */
	SR_PPP,               /* PPP failed: ppp_reason */
	SR_SETUP_TIMEOUT,     /* not up within the setup time */
	SR_CLOSE_TIMEOUT,     /* our teardown was not answered in time */
	SR_DEADLINE,          /* the run ended before it came up */
	SR_RESOURCES,         /* out of memory or descriptors */
};

/* What all sessions share: handed down by main. */
struct session_env {
	int epfd;
	struct grelink *gre;
	struct timers *timers;
	struct sockaddr_in server;
	enum ctrl_profile profile;
	struct ppp_config ppp;       /* user/password set per session */
	uint32_t setup_ms;           /* whole setup, TCP to IPCP */
	const struct stream_spec *specs;
	unsigned nspecs;
	struct hist *rtt;            /* one per spec */
	struct in_addr target;
	uint16_t target_port;
	uint8_t run_tag;             /* random per run: the streams' ids */
	/* called when a session comes up and when it ends */
	void (*on_up)(void *arg, struct session *s);
	void (*on_end)(void *arg, struct session *s);
	/* an IPv4 datagram for a session in TUN mode */
	void (*tun_input)(void *arg, struct session *s, const uint8_t *ip,
	    size_t len);
	void *arg;
};

/* Base of the UDP source ports of a session's streams (stream j: +j). */
#define SESSION_SPORT_BASE 40000
/* How long a teardown may take before the session is simply dropped. */
#define SESSION_CLOSE_MS   4000
/* The steps timed per session: lcp, auth, ccp, ipcp, ipv6cp, and after an
 * LCP renegotiation renegotiate and reauth (session_step_name()). */
#define SESSION_STEPS      8

struct session {
	int kind;                    /* EPK_SESSION */
	unsigned idx;
	struct session_env *env;
	enum session_state state;
	enum session_reason reason;
	enum ctrl_reason ctrl_reason;
	enum ppp_reason ppp_reason;
	int fd;
	int tun;                     /* datagrams go to env->tun_input */
	int was_up;
	int lost_after_up;           /* ended after up, not by us */
	struct in_addr src;
	const char *user, *password;
	struct ctrl ctrl;
	struct grecall gre;
	struct ppp *ppp;
	struct ppp_facts facts;
	/* The IPv6 address the server's Router Advertisement gave (step
	 * "ra"), kept for the report. */
	struct in6_addr ipv6;
	int have_ipv6;
	struct timer timer;
	uint64_t t_start_ns, t_up_ns, t_end_ns;
	uint64_t t_step_ns[SESSION_STEPS];   /* session_step_name() */
	uint64_t close_by;           /* teardown deadline (ms), 0: none */
	uint64_t setup_by;
	uint64_t ctrl_next, ppp_next, gre_next;
	struct stream *streams;      /* env->nspecs of them, once up */
	uint16_t txlen;
	uint8_t *txbuf;              /* control bytes the socket did not take */
	size_t ppp_bytes;            /* ppp_memory() when it came up */
	char guid[40];
	char peer_msg[PPP_PEER_MSG_MAX];  /* the server's LCP Terminate text */
};

void session_init(struct session *s, struct session_env *env, unsigned idx,
    struct in_addr src, const char *user, const char *password,
    uint16_t serial);
void session_start(struct session *s, uint64_t now_ms);
void session_event(struct session *s, uint32_t events, uint64_t now_ms);
/* Tear down (Windows: LCP Terminate, CCRQ, StopCCRQ). A session not up yet
 * ends with `reason_if_not_up`. */
void session_close(struct session *s, uint64_t now_ms,
    enum session_reason reason_if_not_up);
/* Release what the session still holds (the end of the run). */
void session_free(struct session *s);
/* Send an IPv4 datagram (TUN mode). */
int session_send_ip(struct session *s, const uint8_t *ip, size_t len);
/* All streams finished (or none). */
int session_streams_done(const struct session *s);
/* "ok", "ctrl-setup-timeout", "ppp-auth-failed", ... */
const char *session_reason_str(const struct session *s, char *buf,
    size_t len);
const char *session_step_name(unsigned i);

#endif
