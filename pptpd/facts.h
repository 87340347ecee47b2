/* Session facts from the pptpd-policy pppd plugin (proto/report.h is the
 * contract): one report channel per call, a SOCK_SEQPACKET socketpair.
 * pppd inherits one end as FACTS_PPPD_FD (pptpd-report-fd) and the plugin
 * sends each report on it as one message; pptpd reads the other end.
 *
 * Why a pair per call and not one socket every pppd sends to: a UNIX
 * datagram socket queues at most net.unix.max_dgram_qlen datagrams (10 by
 * default) from all its senders together, and when hundreds of pppd
 * reported their session's end at once the rest were refused with EAGAIN
 * (713 reports lost in one 600-session teardown). The two ends of a pair
 * are each other's peer, and the kernel applies no such count between
 * peers: a pppd's reports are limited only by its own send buffer. And
 * only the call's own pppd holds the other end, so whatever arrives on it
 * is that call's. */
#ifndef PPTPD_FACTS_H
#define PPTPD_FACTS_H

#include <stddef.h>

#include "pptpd/loop.h"

/* pppd's descriptor for its end: after the kernel path's channel socket
 * (CALL_KERNEL_FD, 3), the same on both data paths. */
#define FACTS_PPPD_FD 4

/* One whole report, as it arrived. */
typedef void (*facts_fn)(void *arg, const char *data, size_t len);

struct facts {
	struct loop   *loop;
	int            fd;       /* -1: closed (pppd closed its end, or never opened) */
	struct loop_fd lf;
	facts_fn       fn;
	void          *arg;
	int            draining; /* in facts_drain: a nested call returns */
};

/* Marks f closed; facts_close is then a no-op. */
void facts_init(struct facts *f);
/* Open the pair and watch our end. *pppd_fd is pppd's end, close-on-exec:
 * the child moves it to FACTS_PPPD_FD, the parent closes it after fork.
 * -1 with errno set on failure (nothing left open). */
int  facts_open(struct facts *f, struct loop *loop, facts_fn fn, void *arg,
    int *pppd_fd);
/* Watch `fd`, our end of a channel opened before (a worker that died
 * had it: privsep's resume). 0, or -1 with errno set (fd closed). */
int  facts_adopt(struct facts *f, struct loop *loop, facts_fn fn, void *arg,
    int fd);
/* Hand every report waiting on our end to fn now (pppd has exited: what it
 * sent before is all there; or the call is about to change state). Called
 * again from within fn, it returns at once: the outer call goes on. */
void facts_drain(struct facts *f);
void facts_close(struct facts *f);
/* One message to the plugin on the channel's other direction (report.h,
 * "From pptpd to the plugin"), never blocking. 0, or -1 with errno
 * (EPIPE: the channel is closed; EAGAIN: pppd has left its receive
 * buffer full). */
int  facts_send(struct facts *f, const void *data, size_t len);

/* Our end of the channel (-1: closed), for a runner to hold a copy of. */
int  facts_fd(const struct facts *f);

#endif
