/* PPTP control messages (RFC 2637 section 2): framing, validation, decode
 * and encode. The wire layout stays private to msg.c. */
#ifndef PROTO_MSG_H
#define PROTO_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PPTP_PORT            1723
#define PPTP_MAGIC           0x1a2b3c4dU
#define PPTP_MSG_CONTROL     1
#define PPTP_VERSION         0x0100
#define PPTP_HDR_LEN         12
#define PPTP_MAX_MSG_LEN     220     /* ICRQ, the longest */
#define PPTP_HOSTNAME_LEN    64
#define PPTP_VENDOR_LEN      64
#define PPTP_PHONE_LEN       64
#define PPTP_SUBADDR_LEN     64
#define PPTP_STATS_LEN       128

enum pptp_type {
	PPTP_SCCRQ = 1, PPTP_SCCRP, PPTP_STOPCCRQ, PPTP_STOPCCRP,
	PPTP_ECHORQ, PPTP_ECHORP, PPTP_OCRQ, PPTP_OCRP, PPTP_ICRQ, PPTP_ICRP,
	PPTP_ICCN, PPTP_CCRQ, PPTP_CDN, PPTP_WEN, PPTP_SLI,
	PPTP_TYPE_MAX = PPTP_SLI,
};

/* Result codes */
#define PPTP_SCCRP_OK             1
#define PPTP_SCCRP_GENERAL_ERROR  2
#define PPTP_SCCRP_CHANNEL_EXISTS 3
#define PPTP_SCCRP_NOT_AUTHORIZED 4
#define PPTP_SCCRP_BAD_VERSION    5
#define PPTP_STOP_OK              1
#define PPTP_STOP_GENERAL_ERROR   2
#define PPTP_STOP_REASON_NONE     1
#define PPTP_STOP_REASON_VERSION  2
#define PPTP_STOP_REASON_LOCAL    3
#define PPTP_ECHO_OK              1
#define PPTP_ECHO_GENERAL_ERROR   2
#define PPTP_OCRP_CONNECTED       1
#define PPTP_OCRP_GENERAL_ERROR   2
#define PPTP_OCRP_NO_CARRIER      3
#define PPTP_OCRP_BUSY            4
#define PPTP_OCRP_NO_DIAL_TONE    5
#define PPTP_OCRP_TIMEOUT         6
#define PPTP_OCRP_DO_NOT_ACCEPT   7
#define PPTP_ICRP_GENERAL_ERROR   2
#define PPTP_ICRP_DO_NOT_ACCEPT   3
#define PPTP_CDN_LOST_CARRIER     1
#define PPTP_CDN_GENERAL_ERROR    2
#define PPTP_CDN_ADMIN_SHUTDOWN   3
#define PPTP_CDN_REQUEST          4
#define PPTP_ERR_NONE             0
#define PPTP_ERR_NOT_CONNECTED    1
#define PPTP_ERR_BAD_FORMAT       2
#define PPTP_ERR_BAD_VALUE        3
#define PPTP_ERR_NO_RESOURCE      4
#define PPTP_ERR_BAD_CALL_ID      5
#define PPTP_ERR_PAC_ERROR        6
#define PPTP_FRAMING_ASYNC        1
#define PPTP_FRAMING_SYNC         2
#define PPTP_BEARER_ANALOG        1
#define PPTP_BEARER_DIGITAL       2

struct pptp_msg {
	uint16_t type;
	union {
		struct { uint16_t version; uint8_t result, error; /* SCCRP only */
			uint32_t framing, bearer; uint16_t max_channels, firmware;
			char hostname[PPTP_HOSTNAME_LEN + 1], vendor[PPTP_VENDOR_LEN + 1]; } sccr; /* SCCRQ and SCCRP */
		struct { uint8_t reason_or_result, error; } stop;   /* StopCCRQ/RP */
		struct { uint32_t id; uint8_t result, error; } echo; /* Echo-Req/Reply */
		struct { uint16_t call_id, serial; uint32_t min_bps, max_bps,
			bearer, framing; uint16_t window, delay;
			char phone[PPTP_PHONE_LEN + 1], subaddr[PPTP_SUBADDR_LEN + 1]; } ocrq;
		struct { uint16_t call_id, peer_call_id; uint8_t result, error;
			uint16_t cause; uint32_t speed; uint16_t window, delay;
			uint32_t channel; } ocrp;
		struct { uint16_t call_id, serial; uint32_t bearer, channel;
			char dialed[PPTP_PHONE_LEN + 1], dialing[PPTP_PHONE_LEN + 1],
			subaddr[PPTP_SUBADDR_LEN + 1]; } icrq;
		struct { uint16_t call_id, peer_call_id; uint8_t result, error;
			uint16_t window, delay; } icrp;
		struct { uint16_t peer_call_id; uint32_t speed; uint16_t window,
			delay; uint32_t framing; } iccn;
		struct { uint16_t call_id; } ccrq;
		struct { uint16_t call_id; uint8_t result, error; uint16_t cause;
			char stats[PPTP_STATS_LEN + 1]; } cdn;
		struct { uint16_t peer_call_id; uint32_t crc, framing, hw_overrun,
			buffer_overrun, timeout, alignment; } wen;
		struct { uint16_t peer_call_id; uint32_t send_accm, recv_accm; } sli;
	} u;
};

/* Strings: msg_decode() stops a string at its first NUL or at the end of its
 * field, and replaces every byte outside printable ASCII (0x20..0x7e) with
 * '?', because these strings come from the network and end up in logs.
 * msg_encode() writes at most the field's length (no terminator needed when
 * the field is full) and pads with zeros. The length fields of OCRQ/ICRQ
 * (phone, dialed, dialing) are ignored on decode and computed on encode.
 * Fields a message type does not carry (e.g. sccr.result in an SCCRQ, or the
 * Reserved1 octets) decode as 0 and are not written. */

/* Exact total length of a message of this type, or 0 for an unknown type. */
size_t msg_len(unsigned type);
/* Short name for logs ("SCCRQ", "Echo-Request", ...); "unknown" otherwise. */
const char *msg_name(unsigned type);

/* Look at the first bytes of a stream. Returns the length of the whole
 * message when the header is valid, 0 when fewer than PPTP_HDR_LEN bytes are
 * there yet, and -1 with *reason set when the header is bad (wrong magic,
 * wrong message type, unknown control type, length not the type's). */
ssize_t msg_frame(const uint8_t *buf, size_t len, const char **reason);

/* Decode one complete message (as framed by msg_frame). The header is checked
 * again here, so a buffer that did not go through msg_frame is safe too; only
 * the first msg_len(type) bytes are read, and `len` must cover them. Returns
 * 0, or -1 with *reason set (m is then zeroed). reason may be NULL. */
int msg_decode(const uint8_t *buf, size_t len, struct pptp_msg *m, const char **reason);

/* Encode `m` (m->type chooses the layout) into buf; returns the length
 * written, or 0 if buflen is too small or the type unknown. */
size_t msg_encode(const struct pptp_msg *m, uint8_t *buf, size_t buflen);

#endif
