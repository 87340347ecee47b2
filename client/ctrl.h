/* The client side of one PPTP control connection (RFC 2637 section 2) and
 * its one outgoing call: SCCRQ, OCRQ, Set-Link-Info, Echo both ways, and
 * teardown with CCRQ and StopCCRQ. No I/O and no clock of its own: the
 * session hands it the bytes read from TCP and the time, and it writes
 * messages through ops->send. */
#ifndef CLIENT_CTRL_H
#define CLIENT_CTRL_H

#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"

enum ctrl_profile { CTRL_PROFILE_WINDOWS, CTRL_PROFILE_LINUX };

/* Why the control connection ended. CTRL_OK: a teardown we asked for
 * completed. */
enum ctrl_reason {
	CTRL_OK = 0,
	CTRL_GARBAGE,          /* a message that does not frame or decode */
	CTRL_UNEXPECTED,       /* a message the state does not allow */
	CTRL_SCCRP_REFUSED,    /* SCCRP result other than 1 */
	CTRL_OCRP_REFUSED,     /* OCRP result other than 1 */
	CTRL_BAD_CALL_ID,      /* OCRP for a call we did not place */
	CTRL_SETUP_TIMEOUT,    /* SCCRP or OCRP did not come in time */
	CTRL_ECHO_TIMEOUT,     /* our Echo-Request went unanswered */
	CTRL_CLEARED,          /* Call-Disconnect-Notify from the server */
	CTRL_STOPPED,          /* StopCCRQ from the server */
	CTRL_CLOSE_TIMEOUT,    /* our teardown went unanswered */
	CTRL_SEND_FAILED,      /* ops->send could not write */
	CTRL__COUNT
};
const char *ctrl_reason_str(enum ctrl_reason r);

enum ctrl_state {
	CTRL_ST_IDLE, CTRL_ST_WAIT_SCCRP, CTRL_ST_OCRQ_DELAY, CTRL_ST_WAIT_OCRP,
	CTRL_ST_UP, CTRL_ST_WAIT_CDN, CTRL_ST_WAIT_STOPRP, CTRL_ST_DONE,
};

struct ctrl_config {
	enum ctrl_profile profile;
	uint16_t call_id;        /* ours: the low half of the GRE key we get */
	uint16_t serial;         /* call serial number */
	const char *subaddr;     /* Windows: the session's GUID; may be NULL */
	uint32_t setup_ms;       /* SCCRP and OCRP must come within this */
};

struct ctrl_ops {
	/* Write one message; returns 0, or -1 when it could not be queued. */
	int (*send)(void *arg, const uint8_t *msg, size_t len);
	/* OCRP said connected: GRE may flow to `peer_call_id`. */
	void (*call_up)(void *arg, uint16_t peer_call_id);
	/* The connection is over (ops are not called again). */
	void (*done)(void *arg, enum ctrl_reason reason);
};

struct ctrl {
	enum ctrl_state state;
	struct ctrl_config cfg;
	const struct ctrl_ops *ops;
	void *arg;
	uint16_t peer_call_id;
	uint32_t echo_id;        /* id of our outstanding Echo-Request */
	uint64_t deadline;       /* of the current wait, 0: none */
	uint64_t idle_since;     /* last message from the server */
	uint64_t echo_sent;      /* 0: no Echo-Request outstanding */
	/* What the server said, for the report: the messages seen
	 * (CTRL_SEEN_*), the codes of a refusal (SCCRP or OCRP result, error
	 * and, for OCRP, cause), and the Call-Disconnect-Notify's. */
	unsigned seen;
	uint8_t refused_result, refused_error;
	uint16_t refused_cause;
	uint8_t cdn_result, cdn_error;
	uint16_t cdn_cause;
	uint16_t rx_len;
	uint8_t rx[PPTP_MAX_MSG_LEN];
};

#define CTRL_SEEN_SCCRP    0x01u
#define CTRL_SEEN_OCRP     0x02u   /* connected */
#define CTRL_SEEN_CDN      0x04u
#define CTRL_SEEN_STOPCCRP 0x08u
#define CTRL_SEEN_STOPCCRQ 0x10u

/* Wire values of the two profiles (REFERENCE.md section 3 for Windows; the
 * Linux values were captured from pptp-linux 1.10 against a listener). */
#define CTRL_WIN_SCCRQ_FRAMING  PPTP_FRAMING_ASYNC
#define CTRL_WIN_SCCRQ_BEARER   PPTP_BEARER_ANALOG
#define CTRL_WIN_MAX_CHANNELS   0
#define CTRL_WIN_FIRMWARE       0
#define CTRL_WIN_VENDOR         "Microsoft"
#define CTRL_WIN_MIN_BPS        300
#define CTRL_WIN_MAX_BPS        100000000
#define CTRL_WIN_OCRQ_BEARER    (PPTP_BEARER_ANALOG | PPTP_BEARER_DIGITAL)
#define CTRL_WIN_OCRQ_FRAMING   (PPTP_FRAMING_ASYNC | PPTP_FRAMING_SYNC)
#define CTRL_WIN_WINDOW         64
#define CTRL_WIN_SETUP_MS       30000    /* Windows gives up after 30 s */

#define CTRL_LNX_SCCRQ_FRAMING  (PPTP_FRAMING_ASYNC | PPTP_FRAMING_SYNC)
#define CTRL_LNX_SCCRQ_BEARER   (PPTP_BEARER_ANALOG | PPTP_BEARER_DIGITAL)
#define CTRL_LNX_MAX_CHANNELS   0xffff
#define CTRL_LNX_FIRMWARE       1
#define CTRL_LNX_HOSTNAME       "local"
#define CTRL_LNX_VENDOR         "cananian"
#define CTRL_LNX_MIN_BPS        2400
#define CTRL_LNX_MAX_BPS        10000000
#define CTRL_LNX_OCRQ_BEARER    (PPTP_BEARER_ANALOG | PPTP_BEARER_DIGITAL)
#define CTRL_LNX_OCRQ_FRAMING   (PPTP_FRAMING_ASYNC | PPTP_FRAMING_SYNC)
#define CTRL_LNX_WINDOW         3
/* pptp-linux sent its OCRQ 1 s after its SCCRQ, though the SCCRP came at
 * once (seen in every capture). */
#define CTRL_LNX_OCRQ_DELAY_MS  1000
#define CTRL_LNX_SETUP_MS       60000

/* RFC 2637: Echo-Request after 60 s of silence, give up 60 s later. */
#define CTRL_ECHO_IDLE_MS       60000
#define CTRL_ECHO_WAIT_MS       60000
/* How long our CCRQ and StopCCRQ wait for their answer. */
#define CTRL_CLOSE_WAIT_MS      5000

void ctrl_init(struct ctrl *c, const struct ctrl_config *cfg,
    const struct ctrl_ops *ops, void *arg);
/* TCP is connected: send the SCCRQ. */
void ctrl_start(struct ctrl *c, uint64_t now_ms);
/* Bytes read from TCP (any split). */
void ctrl_input(struct ctrl *c, const uint8_t *buf, size_t len, uint64_t now_ms);
/* Set-Link-Info with both ACCMs 0xFFFFFFFF (Windows sends it before LCP and
 * again after authentication). */
void ctrl_send_sli(struct ctrl *c);
/* Tear down: CCRQ (while a call is up), then StopCCRQ (Windows) or the
 * close of TCP (Linux, which sends no StopCCRQ). ops->done follows. */
void ctrl_close(struct ctrl *c, uint64_t now_ms);
/* Why it ended, with the server's codes where it refused
 * ("ocrp-refused(result 2, error 0, cause 0)"): into buf, returned. */
const char *ctrl_reason_format(const struct ctrl *c, enum ctrl_reason r,
    char *buf, size_t len);
/* Timeouts and our Echo-Request; returns the next deadline (0: none). */
uint64_t ctrl_timer(struct ctrl *c, uint64_t now_ms);

#endif
