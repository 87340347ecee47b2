/* Test datagram payloads (see probe.h). */
#include "client/probe.h"

#include "common/byteorder.h"

#include <string.h>

enum { P_MAGIC = 0, P_TYPE = 4, P_MODE = 5, P_STREAM = 8, P_SEQ = 12,
	P_TS = 20, P_SIZE = 28, P_PPS = 32, P_DURATION = 36,
	P_RECEIVED = 28, P_REORDERED = 36, P_DUPLICATES = 44, P_MAXSEQ = 52 };

static size_t type_len(unsigned type)
{
	switch (type) {
	case PROBE_DATA:
	case PROBE_REPORT_REQ:
		return PROBE_HDR_LEN;
	case PROBE_START_DOWN:
		return PROBE_START_LEN;
	case PROBE_REPORT:
		return PROBE_REPORT_LEN;
	}
	return 0;
}

size_t probe_encode(const struct probe *p, uint8_t *buf, size_t buflen,
    size_t len)
{
	size_t need = type_len(p->type);

	if (need == 0)
		return 0;
	if (len < need)
		len = need;
	if (len > buflen)
		return 0;
	memset(buf, 0, len);
	be32_put(buf + P_MAGIC, PROBE_MAGIC);
	buf[P_TYPE] = p->type;
	buf[P_MODE] = p->mode;
	be32_put(buf + P_STREAM, p->stream);
	be64_put(buf + P_SEQ, p->seq);
	be64_put(buf + P_TS, p->ts_ns);
	if (p->type == PROBE_START_DOWN) {
		be32_put(buf + P_SIZE, p->size);
		be32_put(buf + P_PPS, p->pps);
		be32_put(buf + P_DURATION, p->duration_ms);
	} else if (p->type == PROBE_REPORT) {
		be64_put(buf + P_RECEIVED, p->received);
		be64_put(buf + P_REORDERED, p->reordered);
		be64_put(buf + P_DUPLICATES, p->duplicates);
		be64_put(buf + P_MAXSEQ, p->max_seq);
	}
	return len;
}

int probe_decode(const uint8_t *buf, size_t len, struct probe *p)
{
	memset(p, 0, sizeof(*p));
	if (len < PROBE_HDR_LEN || be32_get(buf + P_MAGIC) != PROBE_MAGIC)
		return -1;
	p->type = buf[P_TYPE];
	p->mode = buf[P_MODE];
	size_t need = type_len(p->type);
	if (need == 0 || len < need)
		return -1;
	if (p->type == PROBE_DATA && (p->mode < PROBE_MODE_ECHO ||
	    p->mode > PROBE_MODE_DOWN))
		return -1;
	p->stream = be32_get(buf + P_STREAM);
	p->seq = be64_get(buf + P_SEQ);
	p->ts_ns = be64_get(buf + P_TS);
	if (p->type == PROBE_START_DOWN) {
		p->size = be32_get(buf + P_SIZE);
		p->pps = be32_get(buf + P_PPS);
		p->duration_ms = be32_get(buf + P_DURATION);
	} else if (p->type == PROBE_REPORT) {
		p->received = be64_get(buf + P_RECEIVED);
		p->reordered = be64_get(buf + P_REORDERED);
		p->duplicates = be64_get(buf + P_DUPLICATES);
		p->max_seq = be64_get(buf + P_MAXSEQ);
	}
	return 0;
}
