/* PPTP control messages (RFC 2637 section 2).
 *
 * Every field is read and written at an explicit byte offset with explicit
 * big-endian helpers: no packed structs, no casts of the input buffer, so
 * the code is independent of host alignment and endianness, and every read
 * is visibly inside the type's fixed length (checked once, up front). */
#include "proto/msg.h"

#include "common/byteorder.h"
#include "common/strclean.h"

#include <string.h>

/* Header, common to every control message. */
enum {
	HDR_LENGTH = 0, HDR_MSGTYPE = 2, HDR_MAGIC = 4, HDR_CTRLTYPE = 8,
	HDR_RESERVED0 = 10,
};

/* Start-Control-Connection-Request/Reply (RQ has Reserved1 where RP has
 * the result and error codes). */
enum {
	SCCR_VERSION = 12, SCCR_RESULT = 14, SCCR_ERROR = 15, SCCR_FRAMING = 16,
	SCCR_BEARER = 20, SCCR_MAXCHAN = 24, SCCR_FIRMWARE = 26, SCCR_HOST = 28,
	SCCR_VENDOR = SCCR_HOST + PPTP_HOSTNAME_LEN,
	SCCR_END = SCCR_VENDOR + PPTP_VENDOR_LEN,
};

/* Stop-Control-Connection-Request (reason) / -Reply (result, error). */
enum { STOP_REASON = 12, STOP_ERROR = 13, STOP_END = 16 };

/* Echo-Request (id) / Echo-Reply (id, result, error). */
enum { ECHO_ID = 12, ECHORQ_END = 16, ECHO_RESULT = 16, ECHO_ERROR = 17,
	ECHORP_END = 20 };

enum {
	OCRQ_CALLID = 12, OCRQ_SERIAL = 14, OCRQ_MINBPS = 16, OCRQ_MAXBPS = 20,
	OCRQ_BEARER = 24, OCRQ_FRAMING = 28, OCRQ_WINDOW = 32, OCRQ_DELAY = 34,
	OCRQ_PHONELEN = 36, OCRQ_PHONE = 40,
	OCRQ_SUBADDR = OCRQ_PHONE + PPTP_PHONE_LEN,
	OCRQ_END = OCRQ_SUBADDR + PPTP_SUBADDR_LEN,
};

enum {
	OCRP_CALLID = 12, OCRP_PEERID = 14, OCRP_RESULT = 16, OCRP_ERROR = 17,
	OCRP_CAUSE = 18, OCRP_SPEED = 20, OCRP_WINDOW = 24, OCRP_DELAY = 26,
	OCRP_CHANNEL = 28, OCRP_END = 32,
};

enum {
	ICRQ_CALLID = 12, ICRQ_SERIAL = 14, ICRQ_BEARER = 16, ICRQ_CHANNEL = 20,
	ICRQ_DIALEDLEN = 24, ICRQ_DIALINGLEN = 26, ICRQ_DIALED = 28,
	ICRQ_DIALING = ICRQ_DIALED + PPTP_PHONE_LEN,
	ICRQ_SUBADDR = ICRQ_DIALING + PPTP_PHONE_LEN,
	ICRQ_END = ICRQ_SUBADDR + PPTP_SUBADDR_LEN,
};

enum {
	ICRP_CALLID = 12, ICRP_PEERID = 14, ICRP_RESULT = 16, ICRP_ERROR = 17,
	ICRP_WINDOW = 18, ICRP_DELAY = 20, ICRP_END = 24,
};

enum {
	ICCN_PEERID = 12, ICCN_SPEED = 16, ICCN_WINDOW = 20, ICCN_DELAY = 22,
	ICCN_FRAMING = 24, ICCN_END = 28,
};

enum { CCRQ_CALLID = 12, CCRQ_END = 16 };

enum {
	CDN_CALLID = 12, CDN_RESULT = 14, CDN_ERROR = 15, CDN_CAUSE = 16,
	CDN_STATS = 20, CDN_END = CDN_STATS + PPTP_STATS_LEN,
};

enum {
	WEN_PEERID = 12, WEN_CRC = 16, WEN_FRAMING = 20, WEN_HWOVERRUN = 24,
	WEN_BUFOVERRUN = 28, WEN_TIMEOUT = 32, WEN_ALIGNMENT = 36, WEN_END = 40,
};

enum { SLI_PEERID = 12, SLI_SENDACCM = 16, SLI_RECVACCM = 20, SLI_END = 24 };

/* The RFC's lengths, restated from the layouts above: if a layout constant
 * is mistyped, the build fails rather than a message going out malformed. */
_Static_assert(SCCR_END == 156, "SCCRQ/SCCRP length");
_Static_assert(OCRQ_END == 168, "OCRQ length");
_Static_assert(ICRQ_END == 220 && ICRQ_END == PPTP_MAX_MSG_LEN, "ICRQ length");
_Static_assert(CDN_END == 148, "CDN length");

static const struct {
	const char *name;
	size_t len;
} msg_types[PPTP_TYPE_MAX + 1] = {
	[PPTP_SCCRQ]    = { "SCCRQ",        SCCR_END },
	[PPTP_SCCRP]    = { "SCCRP",        SCCR_END },
	[PPTP_STOPCCRQ] = { "StopCCRQ",     STOP_END },
	[PPTP_STOPCCRP] = { "StopCCRP",     STOP_END },
	[PPTP_ECHORQ]   = { "Echo-Request", ECHORQ_END },
	[PPTP_ECHORP]   = { "Echo-Reply",   ECHORP_END },
	[PPTP_OCRQ]     = { "OCRQ",         OCRQ_END },
	[PPTP_OCRP]     = { "OCRP",         OCRP_END },
	[PPTP_ICRQ]     = { "ICRQ",         ICRQ_END },
	[PPTP_ICRP]     = { "ICRP",         ICRP_END },
	[PPTP_ICCN]     = { "ICCN",         ICCN_END },
	[PPTP_CCRQ]     = { "CCRQ",         CCRQ_END },
	[PPTP_CDN]      = { "CDN",          CDN_END },
	[PPTP_WEN]      = { "WEN",          WEN_END },
	[PPTP_SLI]      = { "SLI",          SLI_END },
};

size_t
msg_len(unsigned type)
{
	if (type == 0 || type > PPTP_TYPE_MAX)
		return 0;
	return msg_types[type].len;
}

const char *
msg_name(unsigned type)
{
	if (type == 0 || type > PPTP_TYPE_MAX)
		return "unknown";
	return msg_types[type].name;
}

/* `dst` holds field + 1 bytes. Peer strings reach logs, so anything that is
 * not printable ASCII (newlines, escapes) is neutralised here, once. */
static void
get_str(char *dst, const uint8_t *b, size_t off, size_t field)
{
	str_clean(dst, field + 1, (const char *)b + off, field, 0);
}

/* The buffer was zeroed, so a short string is already padded. */
static void
put_str(uint8_t *b, size_t off, size_t field, const char *src)
{
	memcpy(b + off, src, strnlen(src, field));
}

ssize_t
msg_frame(const uint8_t *buf, size_t len, const char **reason)
{
	const char *why = NULL;
	size_t want;

	if (len < PPTP_HDR_LEN)
		return 0;
	want = msg_len(be16_get(buf + HDR_CTRLTYPE));
	if (be32_get(buf + HDR_MAGIC) != PPTP_MAGIC)
		why = "bad magic cookie";
	else if (be16_get(buf + HDR_MSGTYPE) != PPTP_MSG_CONTROL)
		why = "PPTP message type is not 1 (control)";
	else if (want == 0)
		why = "unknown control message type";
	else if (be16_get(buf + HDR_LENGTH) != want)
		why = "length does not match the control message type";

	if (why != NULL) {
		if (reason != NULL)
			*reason = why;
		return -1;
	}
	return (ssize_t)want;
}

/* Decoders: called only once the whole fixed-length message is in `b`. */

static void
dec_sccr(const uint8_t *b, struct pptp_msg *m)
{
	m->u.sccr.version = be16_get(b + SCCR_VERSION);
	if (m->type == PPTP_SCCRP) {
		m->u.sccr.result = b[SCCR_RESULT];
		m->u.sccr.error = b[SCCR_ERROR];
	}
	m->u.sccr.framing = be32_get(b + SCCR_FRAMING);
	m->u.sccr.bearer = be32_get(b + SCCR_BEARER);
	m->u.sccr.max_channels = be16_get(b + SCCR_MAXCHAN);
	m->u.sccr.firmware = be16_get(b + SCCR_FIRMWARE);
	get_str(m->u.sccr.hostname, b, SCCR_HOST, PPTP_HOSTNAME_LEN);
	get_str(m->u.sccr.vendor, b, SCCR_VENDOR, PPTP_VENDOR_LEN);
}

static void
dec_stop(const uint8_t *b, struct pptp_msg *m)
{
	m->u.stop.reason_or_result = b[STOP_REASON];
	if (m->type == PPTP_STOPCCRP)
		m->u.stop.error = b[STOP_ERROR];
}

static void
dec_echo(const uint8_t *b, struct pptp_msg *m)
{
	m->u.echo.id = be32_get(b + ECHO_ID);
	if (m->type == PPTP_ECHORP) {
		m->u.echo.result = b[ECHO_RESULT];
		m->u.echo.error = b[ECHO_ERROR];
	}
}

static void
dec_ocrq(const uint8_t *b, struct pptp_msg *m)
{
	m->u.ocrq.call_id = be16_get(b + OCRQ_CALLID);
	m->u.ocrq.serial = be16_get(b + OCRQ_SERIAL);
	m->u.ocrq.min_bps = be32_get(b + OCRQ_MINBPS);
	m->u.ocrq.max_bps = be32_get(b + OCRQ_MAXBPS);
	m->u.ocrq.bearer = be32_get(b + OCRQ_BEARER);
	m->u.ocrq.framing = be32_get(b + OCRQ_FRAMING);
	m->u.ocrq.window = be16_get(b + OCRQ_WINDOW);
	m->u.ocrq.delay = be16_get(b + OCRQ_DELAY);
	get_str(m->u.ocrq.phone, b, OCRQ_PHONE, PPTP_PHONE_LEN);
	get_str(m->u.ocrq.subaddr, b, OCRQ_SUBADDR, PPTP_SUBADDR_LEN);
}

static void
dec_ocrp(const uint8_t *b, struct pptp_msg *m)
{
	m->u.ocrp.call_id = be16_get(b + OCRP_CALLID);
	m->u.ocrp.peer_call_id = be16_get(b + OCRP_PEERID);
	m->u.ocrp.result = b[OCRP_RESULT];
	m->u.ocrp.error = b[OCRP_ERROR];
	m->u.ocrp.cause = be16_get(b + OCRP_CAUSE);
	m->u.ocrp.speed = be32_get(b + OCRP_SPEED);
	m->u.ocrp.window = be16_get(b + OCRP_WINDOW);
	m->u.ocrp.delay = be16_get(b + OCRP_DELAY);
	m->u.ocrp.channel = be32_get(b + OCRP_CHANNEL);
}

static void
dec_icrq(const uint8_t *b, struct pptp_msg *m)
{
	m->u.icrq.call_id = be16_get(b + ICRQ_CALLID);
	m->u.icrq.serial = be16_get(b + ICRQ_SERIAL);
	m->u.icrq.bearer = be32_get(b + ICRQ_BEARER);
	m->u.icrq.channel = be32_get(b + ICRQ_CHANNEL);
	get_str(m->u.icrq.dialed, b, ICRQ_DIALED, PPTP_PHONE_LEN);
	get_str(m->u.icrq.dialing, b, ICRQ_DIALING, PPTP_PHONE_LEN);
	get_str(m->u.icrq.subaddr, b, ICRQ_SUBADDR, PPTP_SUBADDR_LEN);
}

static void
dec_icrp(const uint8_t *b, struct pptp_msg *m)
{
	m->u.icrp.call_id = be16_get(b + ICRP_CALLID);
	m->u.icrp.peer_call_id = be16_get(b + ICRP_PEERID);
	m->u.icrp.result = b[ICRP_RESULT];
	m->u.icrp.error = b[ICRP_ERROR];
	m->u.icrp.window = be16_get(b + ICRP_WINDOW);
	m->u.icrp.delay = be16_get(b + ICRP_DELAY);
}

static void
dec_iccn(const uint8_t *b, struct pptp_msg *m)
{
	m->u.iccn.peer_call_id = be16_get(b + ICCN_PEERID);
	m->u.iccn.speed = be32_get(b + ICCN_SPEED);
	m->u.iccn.window = be16_get(b + ICCN_WINDOW);
	m->u.iccn.delay = be16_get(b + ICCN_DELAY);
	m->u.iccn.framing = be32_get(b + ICCN_FRAMING);
}

static void
dec_ccrq(const uint8_t *b, struct pptp_msg *m)
{
	m->u.ccrq.call_id = be16_get(b + CCRQ_CALLID);
}

static void
dec_cdn(const uint8_t *b, struct pptp_msg *m)
{
	m->u.cdn.call_id = be16_get(b + CDN_CALLID);
	m->u.cdn.result = b[CDN_RESULT];
	m->u.cdn.error = b[CDN_ERROR];
	m->u.cdn.cause = be16_get(b + CDN_CAUSE);
	get_str(m->u.cdn.stats, b, CDN_STATS, PPTP_STATS_LEN);
}

static void
dec_wen(const uint8_t *b, struct pptp_msg *m)
{
	m->u.wen.peer_call_id = be16_get(b + WEN_PEERID);
	m->u.wen.crc = be32_get(b + WEN_CRC);
	m->u.wen.framing = be32_get(b + WEN_FRAMING);
	m->u.wen.hw_overrun = be32_get(b + WEN_HWOVERRUN);
	m->u.wen.buffer_overrun = be32_get(b + WEN_BUFOVERRUN);
	m->u.wen.timeout = be32_get(b + WEN_TIMEOUT);
	m->u.wen.alignment = be32_get(b + WEN_ALIGNMENT);
}

static void
dec_sli(const uint8_t *b, struct pptp_msg *m)
{
	m->u.sli.peer_call_id = be16_get(b + SLI_PEERID);
	m->u.sli.send_accm = be32_get(b + SLI_SENDACCM);
	m->u.sli.recv_accm = be32_get(b + SLI_RECVACCM);
}

typedef void (*decoder)(const uint8_t *, struct pptp_msg *);

static const decoder decoders[PPTP_TYPE_MAX + 1] = {
	[PPTP_SCCRQ] = dec_sccr, [PPTP_SCCRP] = dec_sccr,
	[PPTP_STOPCCRQ] = dec_stop, [PPTP_STOPCCRP] = dec_stop,
	[PPTP_ECHORQ] = dec_echo, [PPTP_ECHORP] = dec_echo,
	[PPTP_OCRQ] = dec_ocrq, [PPTP_OCRP] = dec_ocrp,
	[PPTP_ICRQ] = dec_icrq, [PPTP_ICRP] = dec_icrp,
	[PPTP_ICCN] = dec_iccn, [PPTP_CCRQ] = dec_ccrq,
	[PPTP_CDN] = dec_cdn, [PPTP_WEN] = dec_wen, [PPTP_SLI] = dec_sli,
};

int
msg_decode(const uint8_t *buf, size_t len, struct pptp_msg *m, const char **reason)
{
	const char *why = NULL;
	ssize_t want = msg_frame(buf, len, &why);

	memset(m, 0, sizeof(*m));
	if (want == 0)
		why = "truncated header";
	else if (want > 0 && (size_t)want > len)
		why = "truncated message";

	if (why != NULL) {
		if (reason != NULL)
			*reason = why;
		return -1;
	}
	m->type = be16_get(buf + HDR_CTRLTYPE);
	decoders[m->type](buf, m);
	return 0;
}

/* Encoders: the buffer is zeroed beforehand, so reserved fields and the
 * fields a message type does not carry stay zero. */

static void
enc_sccr(const struct pptp_msg *m, uint8_t *b)
{
	be16_put(b + SCCR_VERSION, m->u.sccr.version);
	if (m->type == PPTP_SCCRP) {
		b[SCCR_RESULT] = m->u.sccr.result;
		b[SCCR_ERROR] = m->u.sccr.error;
	}
	be32_put(b + SCCR_FRAMING, m->u.sccr.framing);
	be32_put(b + SCCR_BEARER, m->u.sccr.bearer);
	be16_put(b + SCCR_MAXCHAN, m->u.sccr.max_channels);
	be16_put(b + SCCR_FIRMWARE, m->u.sccr.firmware);
	put_str(b, SCCR_HOST, PPTP_HOSTNAME_LEN, m->u.sccr.hostname);
	put_str(b, SCCR_VENDOR, PPTP_VENDOR_LEN, m->u.sccr.vendor);
}

static void
enc_stop(const struct pptp_msg *m, uint8_t *b)
{
	b[STOP_REASON] = m->u.stop.reason_or_result;
	if (m->type == PPTP_STOPCCRP)
		b[STOP_ERROR] = m->u.stop.error;
}

static void
enc_echo(const struct pptp_msg *m, uint8_t *b)
{
	be32_put(b + ECHO_ID, m->u.echo.id);
	if (m->type == PPTP_ECHORP) {
		b[ECHO_RESULT] = m->u.echo.result;
		b[ECHO_ERROR] = m->u.echo.error;
	}
}

static void
enc_ocrq(const struct pptp_msg *m, uint8_t *b)
{
	be16_put(b + OCRQ_CALLID, m->u.ocrq.call_id);
	be16_put(b + OCRQ_SERIAL, m->u.ocrq.serial);
	be32_put(b + OCRQ_MINBPS, m->u.ocrq.min_bps);
	be32_put(b + OCRQ_MAXBPS, m->u.ocrq.max_bps);
	be32_put(b + OCRQ_BEARER, m->u.ocrq.bearer);
	be32_put(b + OCRQ_FRAMING, m->u.ocrq.framing);
	be16_put(b + OCRQ_WINDOW, m->u.ocrq.window);
	be16_put(b + OCRQ_DELAY, m->u.ocrq.delay);
	be16_put(b + OCRQ_PHONELEN,
	    (uint16_t)strnlen(m->u.ocrq.phone, PPTP_PHONE_LEN));
	put_str(b, OCRQ_PHONE, PPTP_PHONE_LEN, m->u.ocrq.phone);
	put_str(b, OCRQ_SUBADDR, PPTP_SUBADDR_LEN, m->u.ocrq.subaddr);
}

static void
enc_ocrp(const struct pptp_msg *m, uint8_t *b)
{
	be16_put(b + OCRP_CALLID, m->u.ocrp.call_id);
	be16_put(b + OCRP_PEERID, m->u.ocrp.peer_call_id);
	b[OCRP_RESULT] = m->u.ocrp.result;
	b[OCRP_ERROR] = m->u.ocrp.error;
	be16_put(b + OCRP_CAUSE, m->u.ocrp.cause);
	be32_put(b + OCRP_SPEED, m->u.ocrp.speed);
	be16_put(b + OCRP_WINDOW, m->u.ocrp.window);
	be16_put(b + OCRP_DELAY, m->u.ocrp.delay);
	be32_put(b + OCRP_CHANNEL, m->u.ocrp.channel);
}

static void
enc_icrq(const struct pptp_msg *m, uint8_t *b)
{
	be16_put(b + ICRQ_CALLID, m->u.icrq.call_id);
	be16_put(b + ICRQ_SERIAL, m->u.icrq.serial);
	be32_put(b + ICRQ_BEARER, m->u.icrq.bearer);
	be32_put(b + ICRQ_CHANNEL, m->u.icrq.channel);
	be16_put(b + ICRQ_DIALEDLEN,
	    (uint16_t)strnlen(m->u.icrq.dialed, PPTP_PHONE_LEN));
	be16_put(b + ICRQ_DIALINGLEN,
	    (uint16_t)strnlen(m->u.icrq.dialing, PPTP_PHONE_LEN));
	put_str(b, ICRQ_DIALED, PPTP_PHONE_LEN, m->u.icrq.dialed);
	put_str(b, ICRQ_DIALING, PPTP_PHONE_LEN, m->u.icrq.dialing);
	put_str(b, ICRQ_SUBADDR, PPTP_SUBADDR_LEN, m->u.icrq.subaddr);
}

static void
enc_icrp(const struct pptp_msg *m, uint8_t *b)
{
	be16_put(b + ICRP_CALLID, m->u.icrp.call_id);
	be16_put(b + ICRP_PEERID, m->u.icrp.peer_call_id);
	b[ICRP_RESULT] = m->u.icrp.result;
	b[ICRP_ERROR] = m->u.icrp.error;
	be16_put(b + ICRP_WINDOW, m->u.icrp.window);
	be16_put(b + ICRP_DELAY, m->u.icrp.delay);
}

static void
enc_iccn(const struct pptp_msg *m, uint8_t *b)
{
	be16_put(b + ICCN_PEERID, m->u.iccn.peer_call_id);
	be32_put(b + ICCN_SPEED, m->u.iccn.speed);
	be16_put(b + ICCN_WINDOW, m->u.iccn.window);
	be16_put(b + ICCN_DELAY, m->u.iccn.delay);
	be32_put(b + ICCN_FRAMING, m->u.iccn.framing);
}

static void
enc_ccrq(const struct pptp_msg *m, uint8_t *b)
{
	be16_put(b + CCRQ_CALLID, m->u.ccrq.call_id);
}

static void
enc_cdn(const struct pptp_msg *m, uint8_t *b)
{
	be16_put(b + CDN_CALLID, m->u.cdn.call_id);
	b[CDN_RESULT] = m->u.cdn.result;
	b[CDN_ERROR] = m->u.cdn.error;
	be16_put(b + CDN_CAUSE, m->u.cdn.cause);
	put_str(b, CDN_STATS, PPTP_STATS_LEN, m->u.cdn.stats);
}

static void
enc_wen(const struct pptp_msg *m, uint8_t *b)
{
	be16_put(b + WEN_PEERID, m->u.wen.peer_call_id);
	be32_put(b + WEN_CRC, m->u.wen.crc);
	be32_put(b + WEN_FRAMING, m->u.wen.framing);
	be32_put(b + WEN_HWOVERRUN, m->u.wen.hw_overrun);
	be32_put(b + WEN_BUFOVERRUN, m->u.wen.buffer_overrun);
	be32_put(b + WEN_TIMEOUT, m->u.wen.timeout);
	be32_put(b + WEN_ALIGNMENT, m->u.wen.alignment);
}

static void
enc_sli(const struct pptp_msg *m, uint8_t *b)
{
	be16_put(b + SLI_PEERID, m->u.sli.peer_call_id);
	be32_put(b + SLI_SENDACCM, m->u.sli.send_accm);
	be32_put(b + SLI_RECVACCM, m->u.sli.recv_accm);
}

typedef void (*encoder)(const struct pptp_msg *, uint8_t *);

static const encoder encoders[PPTP_TYPE_MAX + 1] = {
	[PPTP_SCCRQ] = enc_sccr, [PPTP_SCCRP] = enc_sccr,
	[PPTP_STOPCCRQ] = enc_stop, [PPTP_STOPCCRP] = enc_stop,
	[PPTP_ECHORQ] = enc_echo, [PPTP_ECHORP] = enc_echo,
	[PPTP_OCRQ] = enc_ocrq, [PPTP_OCRP] = enc_ocrp,
	[PPTP_ICRQ] = enc_icrq, [PPTP_ICRP] = enc_icrp,
	[PPTP_ICCN] = enc_iccn, [PPTP_CCRQ] = enc_ccrq,
	[PPTP_CDN] = enc_cdn, [PPTP_WEN] = enc_wen, [PPTP_SLI] = enc_sli,
};

size_t
msg_encode(const struct pptp_msg *m, uint8_t *buf, size_t buflen)
{
	size_t len = msg_len(m->type);

	if (len == 0 || buf == NULL || buflen < len)
		return 0;
	memset(buf, 0, len);
	be16_put(buf + HDR_LENGTH, (uint16_t)len);
	be16_put(buf + HDR_MSGTYPE, PPTP_MSG_CONTROL);
	be32_put(buf + HDR_MAGIC, PPTP_MAGIC);
	be16_put(buf + HDR_CTRLTYPE, m->type);
	encoders[m->type](m, buf);
	return len;
}
