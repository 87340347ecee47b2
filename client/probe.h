/* The payload of pptp-load's test datagrams, spoken with pptp-echo: every
 * UDP payload starts with this header (big-endian), data packets are padded
 * to the stream's size after it.
 *
 *   0  magic   u32  PROBE_MAGIC
 *   4  type    u8   PROBE_DATA, PROBE_START_DOWN, PROBE_REPORT_REQ,
 *                   PROBE_REPORT
 *   5  mode    u8   DATA: PROBE_MODE_ECHO (send it back), PROBE_MODE_SINK
 *                   (count it), PROBE_MODE_DOWN (from pptp-echo's source)
 *   6  reserved u16
 *   8  stream  u32  the sender's stream id
 *  12  seq     u64  0, 1, 2, ... per stream
 *  20  ts      u64  the sender's clock, ns (an echo returns it unchanged)
 *  28  START_DOWN: size u32, pps u32, duration_ms u32
 *      REPORT: received, reordered, duplicates, max_seq (u64 each)
 */
#ifndef CLIENT_PROBE_H
#define CLIENT_PROBE_H

#include <stddef.h>
#include <stdint.h>

#define PROBE_MAGIC      0x504c4431U   /* "PLD1" */
#define PROBE_HDR_LEN    28
#define PROBE_START_LEN  (PROBE_HDR_LEN + 12)
#define PROBE_REPORT_LEN (PROBE_HDR_LEN + 32)
#define PROBE_MAX_LEN    1472          /* a full Ethernet frame of UDP */

enum probe_type {
	PROBE_DATA = 1, PROBE_START_DOWN = 2, PROBE_REPORT_REQ = 3,
	PROBE_REPORT = 4,
};
enum probe_mode { PROBE_MODE_ECHO = 1, PROBE_MODE_SINK = 2, PROBE_MODE_DOWN = 3 };

struct probe {
	uint8_t type, mode;
	uint32_t stream;
	uint64_t seq, ts_ns;
	/* START_DOWN */
	uint32_t size, pps, duration_ms;
	/* REPORT */
	uint64_t received, reordered, duplicates, max_seq;
};

/* Write `p` into buf and pad with zeros to `len` (at least the type's
 * length); returns the length written, 0 if buflen is too small. */
size_t probe_encode(const struct probe *p, uint8_t *buf, size_t buflen,
    size_t len);
/* 0, or -1 for anything that is not a well-formed probe. */
int probe_decode(const uint8_t *buf, size_t len, struct probe *p);

#endif
