/* Fuzz what a GRE packet from anywhere on the Internet reaches before it is
 * known to belong to a call: the enhanced-GRE parser (proto/packet.c, with
 * and without the IPv4 header the raw socket delivers) and the receive
 * sequencing (proto/seq.c) that decides what is delivered to pppd.
 *
 * Parser checks: the payload ends exactly where the datagram does (no octet
 * the length field disowns is accepted); a parsed header built again with
 * gre_packet_build() parses to the same fields.
 * Sequencing checks, on a stream of packets from the parser and of
 * structured (delta, length) records, with time moving forward and gap
 * timers firing: delivered numbers only move forward (except across a
 * counted resync, forward or backward), nothing is delivered twice except
 * across such a resync, payloads come back intact,
 * the held count matches the slots in use and stays within the window.
 *
 * Input: a sequence of records, each starting with an op byte:
 *   op & 0x80  raw datagram: 2 bytes length, then the bytes (IPv4 + GRE
 *              when op & 0x40, GRE alone otherwise)
 *   else       structured packet: 2 bytes signed delta from the previous
 *              number, 1 byte length unit (length = unit * 9, 0 = ack-only)
 *   op & 0x3f  milliseconds * 2 to advance the clock before the record
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_util.h"
#include "proto/packet.h"
#include "proto/seq.h"

#define OUR_CALL_ID 0x4242

struct state {
	struct seq_rx rx;
	uint64_t now;
	int      any_delivered;
	uint32_t last_delivered;
	uint64_t resyncs_seen;
	uint64_t delivered;
};

/* A packet's bytes are a function of its number and length, so whatever
 * comes out of the reorder buffer can be checked. */
static void
fill(uint8_t *p, size_t len, uint32_t seq)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seq * 131u + i * 7u + (seq >> 8));
}

static void
check_payload(const uint8_t *p, size_t len, uint32_t seq)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seq * 131u + i * 7u + (seq >> 8)))
			abort();   /* a held packet came back corrupted */
}

static void
delivered(struct state *st, uint32_t seq)
{
	if (st->any_delivered && !seq_before(st->last_delivered, seq)) {
		/* Backwards or repeated: only across a resync, once each. */
		if (st->rx.resyncs == st->resyncs_seen)
			abort();
		st->resyncs_seen = st->rx.resyncs;
	}
	st->any_delivered = 1;
	st->last_delivered = seq;
	st->delivered++;
}

static void
check_rx(const struct state *st)
{
	const struct seq_rx *rx = &st->rx;
	uint32_t used = 0, storage = 0;
	for (size_t i = 0; i < SEQ_REORDER_SLOTS; i++) {
		if (rx->slot[i].used) {
			used++;
			if (rx->slot[i].seq % SEQ_REORDER_SLOTS != i)
				abort();
			/* held packets are ahead of next, within the window */
			uint32_t d = rx->slot[i].seq - rx->next;
			if (d == 0 || d > SEQ_REORDER_SLOTS)
				abort();
			if (rx->slot[i].data == NULL)
				abort();
		}
		if (rx->slot[i].data)
			storage++;
	}
	if (rx->pend.data)
		storage++;
	if (used != rx->held || rx->held > SEQ_REORDER_SLOTS)
		abort();
	if (storage != rx->storage)
		abort();
	if (rx->held && seq_rx_deadline(rx) == 0)
		abort();
	if (rx->delivered != st->delivered)
		abort();
}

static void
drain(struct state *st)
{
	const struct seq_slot *s;
	int guard = 0;
	while ((s = seq_rx_next(&st->rx)) != NULL) {
		check_payload(s->data, s->len, s->seq);
		delivered(st, s->seq);
		if (++guard > 2 * SEQ_REORDER_SLOTS + 2)
			abort();   /* draining never ends */
	}
}

static void
feed(struct state *st, uint32_t seq, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);
	fill(p, len, seq);
	enum seq_verdict v = seq_rx_input(&st->rx, seq, p, len, st->now);
	free(p);   /* a held packet must have been copied */
	if (v == SEQ_DELIVER)
		delivered(st, seq);
	drain(st);
	check_rx(st);
}

static void
tick(struct state *st, unsigned ms)
{
	st->now += ms;
	int guard = 0;
	while (seq_rx_expire(&st->rx, st->now)) {
		drain(st);
		if (++guard > SEQ_REORDER_SLOTS + 1)
			abort();
	}
	check_rx(st);
	if (st->rx.held && seq_rx_deadline(&st->rx) <= st->now)
		abort();   /* a due gap was not given up */
}

static void
parsed(struct state *st, const uint8_t *buf, size_t len, const struct gre_packet *pkt)
{
	if (pkt->payload_len > GRE_MAX_PAYLOAD)
		abort();
	if (pkt->payload + pkt->payload_len != buf + len)
		abort();   /* trailing octets taken as padding */
	if (pkt->payload_len) {
		if (pkt->payload < buf || pkt->payload + pkt->payload_len > buf + len)
			abort();
		/* touch it */
		volatile uint8_t x = pkt->payload[pkt->payload_len - 1];
		(void)x;
	}
	if (pkt->has_seq != (pkt->payload_len != 0))
		abort();
	/* Build the same header again: it must parse to the same fields. */
	uint8_t out[GRE_HDR_MAX + 4];
	size_t h = gre_packet_build(out, pkt->call_id, pkt->payload_len,
	    pkt->has_seq, pkt->seq, pkt->has_ack, pkt->ack);
	if (h < GRE_HDR_MIN || h > GRE_HDR_MAX)
		abort();
	uint8_t *again = malloc(h + pkt->payload_len);
	memcpy(again, out, h);
	if (pkt->payload_len)
		memcpy(again + h, pkt->payload, pkt->payload_len);
	struct gre_packet p2;
	if (gre_packet_parse(again, h + pkt->payload_len, &p2) != GRE_PARSE_OK)
		abort();
	if (p2.call_id != pkt->call_id || p2.payload_len != pkt->payload_len ||
	    p2.has_seq != pkt->has_seq || p2.has_ack != pkt->has_ack ||
	    (pkt->has_seq && p2.seq != pkt->seq) ||
	    (pkt->has_ack && p2.ack != pkt->ack))
		abort();
	free(again);
	if (pkt->call_id == OUR_CALL_ID && pkt->has_seq)
		feed(st, pkt->seq, pkt->payload_len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct state st;
	memset(&st, 0, sizeof(st));
	seq_rx_init(&st.rx);
	st.now = 1000;
	uint32_t last = 0;

	while (size > 0) {
		uint8_t op = *data++;
		size--;
		tick(&st, (op & 0x3f) * 2u);
		if (op & 0x80) {
			if (size < 2)
				break;
			size_t len = (size_t)data[0] << 8 | data[1];
			data += 2;
			size -= 2;
			if (len > size)
				len = size;
			uint8_t *exact = fz_dup(data, len);
			struct gre_packet pkt;
			memset(&pkt, 0xa5, sizeof(pkt));
			enum gre_parse_result r = (op & 0x40) ?
			    gre_packet_parse_ip(exact, len, &pkt) :
			    gre_packet_parse(exact, len, &pkt);
			if (r >= GRE_PARSE__COUNT)
				abort();
			if (gre_packet_strerror(r) == NULL)
				abort();
			if (r == GRE_PARSE_OK)
				parsed(&st, exact, len, &pkt);
			free(exact);
			data += len;
			size -= len;
		} else {
			if (size < 3)
				break;
			int16_t delta = (int16_t)(data[0] << 8 | data[1]);
			size_t len = (size_t)data[2] * 9;
			data += 3;
			size -= 3;
			last += (uint32_t)(int32_t)delta;
			if (len)
				feed(&st, last, len);
		}
	}
	tick(&st, 10 * SEQ_REORDER_TIMEOUT_MS);
	if (st.rx.held != 0)
		abort();   /* every gap is given up in the end */
	seq_rx_free(&st.rx);
	if (st.rx.storage != 0)
		abort();
	return 0;
}
