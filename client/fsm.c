/* RFC 1661 section 4: the state transition table, event by event. */
#include "client/fsm.h"

#include <string.h>

#include "common/byteorder.h"

void fsm_init(struct fsm *f, uint16_t proto, const struct fsm_ops *ops,
    fsm_send_fn *send, fsm_event_fn *event, void *owner)
{
	memset(f, 0, sizeof(*f));
	f->proto = proto;
	f->ops = ops;
	f->send = send;
	f->event = event;
	f->owner = owner;
	f->state = FSM_INITIAL;
	f->id = 1;
}

int fsm_is_open(const struct fsm *f)
{
	return f->state == FSM_OPENED;
}

uint8_t fsm_next_id(struct fsm *f)
{
	return f->id++;
}

void fsm_send_code(struct fsm *f, uint8_t code, uint8_t id,
    const uint8_t *data, size_t len)
{
	uint8_t pkt[FSM_HDR_LEN + FSM_PKT_MAX];

	if (len > FSM_PKT_MAX)
		len = FSM_PKT_MAX;
	pkt[0] = code;
	pkt[1] = id;
	be16_put(pkt + 2, (uint16_t)(FSM_HDR_LEN + len));
	if (len)
		memcpy(pkt + FSM_HDR_LEN, data, len);
	f->send(f->owner, f->proto, pkt, FSM_HDR_LEN + len);
}

static void timer_arm(struct fsm *f, uint64_t now)
{
	f->deadline = now + FSM_RESTART_MS;
}

/* scr: a fresh Identifier each time (the options may have changed). */
static void send_confreq(struct fsm *f, uint64_t now)
{
	uint8_t opts[FSM_PKT_MAX];
	size_t len = f->ops->req_build(f, opts, sizeof(opts));

	f->reqid = fsm_next_id(f);
	fsm_send_code(f, FSM_CONFREQ, f->reqid, opts, len);
	if (f->restart)
		f->restart--;
	timer_arm(f, now);
}

static void send_termreq(struct fsm *f, uint64_t now)
{
	fsm_send_code(f, FSM_TERMREQ, fsm_next_id(f), NULL, 0);
	if (f->restart)
		f->restart--;
	timer_arm(f, now);
}

static void tlu(struct fsm *f)
{
	f->state = FSM_OPENED;
	if (f->ops->up)
		f->ops->up(f);
	f->event(f->owner, f->proto, FSM_EV_UP);
}

static void tld(struct fsm *f)
{
	f->event(f->owner, f->proto, FSM_EV_DOWN);
}

static void tlf(struct fsm *f, uint8_t state)
{
	f->state = state;
	f->deadline = 0;
	f->event(f->owner, f->proto, FSM_EV_FINISHED);
}

void fsm_up(struct fsm *f, uint64_t now)
{
	if (f->state == FSM_INITIAL)
		f->state = FSM_CLOSED;
	else if (f->state == FSM_STARTING) {
		f->restart = FSM_MAX_CONFIGURE;
		f->state = FSM_REQSENT;
		send_confreq(f, now);
	}
}

void fsm_down(struct fsm *f)
{
	f->deadline = 0;
	switch (f->state) {
	case FSM_CLOSED:
	case FSM_CLOSING:
		f->state = FSM_INITIAL;
		break;
	case FSM_OPENED:
		tld(f);
		/* FALLTHROUGH */
	case FSM_STOPPED:
	case FSM_STOPPING:
	case FSM_REQSENT:
	case FSM_ACKRCVD:
	case FSM_ACKSENT:
		f->state = FSM_STARTING;
		break;
	}
}

void fsm_open(struct fsm *f, uint64_t now)
{
	switch (f->state) {
	case FSM_INITIAL:
		f->state = FSM_STARTING;
		break;
	case FSM_CLOSED:
		f->restart = FSM_MAX_CONFIGURE;
		f->state = FSM_REQSENT;
		send_confreq(f, now);
		break;
	case FSM_CLOSING:
		f->state = FSM_STOPPING;
		break;
	}
}

void fsm_close(struct fsm *f, uint64_t now)
{
	switch (f->state) {
	case FSM_STARTING:
		tlf(f, FSM_INITIAL);
		break;
	case FSM_STOPPED:
		f->state = FSM_CLOSED;
		break;
	case FSM_STOPPING:
		f->state = FSM_CLOSING;
		break;
	case FSM_OPENED:
		tld(f);
		/* FALLTHROUGH */
	case FSM_REQSENT:
	case FSM_ACKRCVD:
	case FSM_ACKSENT:
		f->restart = FSM_MAX_TERMINATE;
		f->state = FSM_CLOSING;
		send_termreq(f, now);
		break;
	}
}

void fsm_rejected(struct fsm *f)
{
	switch (f->state) {
	case FSM_CLOSING:
	case FSM_CLOSED:
		tlf(f, FSM_CLOSED);
		break;
	case FSM_OPENED:
		tld(f);
		/* FALLTHROUGH */
	case FSM_STOPPING:
	case FSM_REQSENT:
	case FSM_ACKRCVD:
	case FSM_ACKSENT:
	case FSM_STOPPED:
		tlf(f, FSM_STOPPED);
		break;
	}
}

void fsm_timer(struct fsm *f, uint64_t now)
{
	if (f->deadline == 0 || now < f->deadline)
		return;
	f->deadline = 0;
	if (f->restart > 0) {   /* TO+ */
		switch (f->state) {
		case FSM_CLOSING:
		case FSM_STOPPING:
			send_termreq(f, now);
			break;
		case FSM_ACKRCVD:
			f->state = FSM_REQSENT;
			/* FALLTHROUGH */
		case FSM_REQSENT:
		case FSM_ACKSENT:
			send_confreq(f, now);
			break;
		}
		return;
	}
	switch (f->state) {     /* TO- */
	case FSM_CLOSING:
		tlf(f, FSM_CLOSED);
		break;
	case FSM_STOPPING:
	case FSM_REQSENT:
	case FSM_ACKRCVD:
	case FSM_ACKSENT:
		tlf(f, FSM_STOPPED);
		break;
	}
}

static void rcr(struct fsm *f, uint8_t id, const uint8_t *opts, size_t len,
    uint64_t now)
{
	uint8_t out[FSM_PKT_MAX];
	size_t outlen = 0;
	int code;

	switch (f->state) {
	case FSM_CLOSED:
		fsm_send_code(f, FSM_TERMACK, id, NULL, 0);
		return;
	case FSM_CLOSING:
	case FSM_STOPPING:
		return;
	}
	code = f->ops->req_check(f, opts, len, out, &outlen);
	if (code < 0)
		return;
	if (f->state == FSM_OPENED) {
		tld(f);
		f->state = FSM_REQSENT;
		send_confreq(f, now);
	} else if (f->state == FSM_STOPPED) {
		f->restart = FSM_MAX_CONFIGURE;
		f->state = FSM_REQSENT;
		send_confreq(f, now);
	}
	if (code == FSM_CONFACK) {
		fsm_send_code(f, FSM_CONFACK, id, opts, len);
		if (f->state == FSM_ACKRCVD)
			tlu(f);
		else
			f->state = FSM_ACKSENT;
	} else {
		fsm_send_code(f, (uint8_t)code, id, out, outlen);
		if (f->state == FSM_ACKSENT)
			f->state = FSM_REQSENT;
	}
}

/* An Ack must carry exactly the options we asked for. */
static int ack_matches(struct fsm *f, const uint8_t *opts, size_t len)
{
	uint8_t want[FSM_PKT_MAX];
	size_t wlen = f->ops->req_build(f, want, sizeof(want));

	return wlen == len && memcmp(want, opts, len) == 0;
}

static void rca(struct fsm *f, uint64_t now)
{
	switch (f->state) {
	case FSM_CLOSED:
	case FSM_STOPPED:
		fsm_send_code(f, FSM_TERMACK, fsm_next_id(f), NULL, 0);
		break;
	case FSM_REQSENT:
		f->restart = FSM_MAX_CONFIGURE;
		f->deadline = 0;
		f->state = FSM_ACKRCVD;
		break;
	case FSM_ACKRCVD:
		f->state = FSM_REQSENT;
		send_confreq(f, now);
		break;
	case FSM_ACKSENT:
		f->restart = FSM_MAX_CONFIGURE;
		f->deadline = 0;
		tlu(f);
		break;
	case FSM_OPENED:
		tld(f);
		f->state = FSM_REQSENT;
		send_confreq(f, now);
		break;
	}
}

static void rcn(struct fsm *f, uint64_t now)
{
	switch (f->state) {
	case FSM_CLOSED:
	case FSM_STOPPED:
		fsm_send_code(f, FSM_TERMACK, fsm_next_id(f), NULL, 0);
		break;
	case FSM_REQSENT:
	case FSM_ACKSENT:
		f->restart = FSM_MAX_CONFIGURE;
		send_confreq(f, now);
		break;
	case FSM_ACKRCVD:
		f->state = FSM_REQSENT;
		send_confreq(f, now);
		break;
	case FSM_OPENED:
		tld(f);
		f->state = FSM_REQSENT;
		send_confreq(f, now);
		break;
	}
}

static void rtr(struct fsm *f, uint8_t id, uint64_t now)
{
	switch (f->state) {
	case FSM_ACKRCVD:
	case FSM_ACKSENT:
		f->state = FSM_REQSENT;
		break;
	case FSM_OPENED:
		f->peer_terminated = 1;
		tld(f);
		f->restart = 0;
		f->state = FSM_STOPPING;
		/* RFC 1661 waits a restart period before Stopped; the Ack has
		 * left already and nothing more will come over a link the
		 * peer closed: stop at the next timer call. */
		fsm_send_code(f, FSM_TERMACK, id, NULL, 0);
		f->deadline = now ? now : 1;
		return;
	}
	fsm_send_code(f, FSM_TERMACK, id, NULL, 0);
}

static void rta(struct fsm *f, uint64_t now)
{
	switch (f->state) {
	case FSM_CLOSING:
		tlf(f, FSM_CLOSED);
		break;
	case FSM_STOPPING:
		tlf(f, FSM_STOPPED);
		break;
	case FSM_ACKRCVD:
		f->state = FSM_REQSENT;
		break;
	case FSM_OPENED:
		tld(f);
		f->state = FSM_REQSENT;
		send_confreq(f, now);
		break;
	}
}

int fsm_input(struct fsm *f, const uint8_t *pkt, size_t len, uint64_t now)
{
	uint8_t code, id;
	size_t plen;
	const uint8_t *data;

	if (len < FSM_HDR_LEN)
		return -1;
	code = pkt[0];
	id = pkt[1];
	plen = be16_get(pkt + 2);
	if (plen < FSM_HDR_LEN || plen > len)
		return -1;
	/* Octets beyond Length are padding (RFC 1661 section 5). */
	data = pkt + FSM_HDR_LEN;
	plen -= FSM_HDR_LEN;
	if (f->state == FSM_INITIAL || f->state == FSM_STARTING)
		return -1;
	switch (code) {
	case FSM_CONFREQ:
		rcr(f, id, data, plen, now);
		return 0;
	case FSM_CONFACK:
		if (id != f->reqid || !ack_matches(f, data, plen))
			return -1;
		rca(f, now);
		return 0;
	case FSM_CONFNAK:
	case FSM_CONFREJ:
		if (id != f->reqid)
			return -1;
		if (f->state == FSM_REQSENT || f->state == FSM_ACKRCVD ||
		    f->state == FSM_ACKSENT || f->state == FSM_OPENED) {
			if (f->ops->nak_recv(f, data, plen,
			    code == FSM_CONFREJ) < 0)
				return -1;
		}
		rcn(f, now);
		return 0;
	case FSM_TERMREQ:
		rtr(f, id, now);
		return 0;
	case FSM_TERMACK:
		rta(f, now);
		return 0;
	case FSM_CODEREJ:
		/* A rejected code of ours that we need (1-7) is fatal. */
		if (plen >= 1 && data[0] >= FSM_CONFREQ &&
		    data[0] <= FSM_CODEREJ)
			fsm_rejected(f);
		return 0;
	}
	if (f->ops->code_recv &&
	    f->ops->code_recv(f, code, id, data, plen, now) == 0)
		return 0;
	/* RUC: an unknown code is answered with Code-Reject carrying as
	 * much of the packet as fits. */
	fsm_send_code(f, FSM_CODEREJ, fsm_next_id(f), pkt,
	    len < FSM_PKT_MAX ? len : FSM_PKT_MAX);
	return 0;
}
