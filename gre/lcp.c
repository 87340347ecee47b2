/* LCP snooping for the async map toward pppd (see lcp.h for the rules). */
#include "gre/lcp.h"

#include <string.h>

/* PPP framing (RFC 1661 2, RFC 1662 3.1) and LCP (RFC 1661 5, 6) */
#define PPP_ALLSTATIONS   0xff
#define PPP_UI            0x03
#define PPP_PROTO_LCP     0xc021
#define LCP_HDR_LEN       4
#define LCP_CONF_REQ      1
#define LCP_CONF_ACK      2
#define LCP_TERM_REQ      5
#define LCP_TERM_ACK      6
#define LCP_OPT_HDR_LEN   2
#define LCP_OPT_ACCM      2     /* RFC 1662 7.1 */
#define LCP_OPT_ACCM_LEN  6

struct lcp_pkt {
	uint8_t code, id;
	const uint8_t *opts;
	size_t optlen;
};

void lcp_snoop_init(struct lcp_snoop *s)
{
	memset(s, 0, sizeof(*s));
}

/* Is this frame LCP? Fills `p` if so. Address and control may be
 * compressed away on other protocols, never on LCP (RFC 1661 6.6), but a
 * frame without them is still recognised: what matters is not to miss
 * one. A protocol field with its low bit set is a compressed one-octet
 * protocol (RFC 1661 6.5), never LCP. */
static int lcp_parse(const uint8_t *f, size_t len, struct lcp_pkt *p)
{
	size_t n;

	if (len >= 2 && f[0] == PPP_ALLSTATIONS && f[1] == PPP_UI) {
		f += 2;
		len -= 2;
	}
	if (len < 2 || (f[0] & 1) || (f[0] << 8 | f[1]) != PPP_PROTO_LCP)
		return 0;
	f += 2;
	len -= 2;
	if (len < LCP_HDR_LEN)
		return 0;
	n = (size_t)(f[2] << 8 | f[3]);
	if (n < LCP_HDR_LEN || n > len)
		return 0;
	p->code = f[0];
	p->id = f[1];
	p->opts = f + LCP_HDR_LEN;
	p->optlen = n - LCP_HDR_LEN;
	return 1;
}

/* The ACCM a Configure-Request (or the Ack repeating it) asks for; -1 if
 * the options do not parse, which is never agreed on. */
static int64_t lcp_accm(const struct lcp_pkt *p)
{
	const uint8_t *o = p->opts, *end = p->opts + p->optlen;
	int64_t accm = LCP_ACCM_DEFAULT;

	while (o < end) {
		size_t olen;

		if (end - o < LCP_OPT_HDR_LEN)
			return -1;
		olen = o[1];
		if (olen < LCP_OPT_HDR_LEN || olen > (size_t)(end - o))
			return -1;
		if (o[0] == LCP_OPT_ACCM) {
			if (olen != LCP_OPT_ACCM_LEN)
				return -1;
			accm = (int64_t)((uint32_t)o[2] << 24 | (uint32_t)o[3] << 16 |
			    (uint32_t)o[4] << 8 | o[5]);
		}
		o += olen;
	}
	return accm;
}

void lcp_snoop_from_pppd(struct lcp_snoop *s, const uint8_t *f, size_t len)
{
	struct lcp_pkt p;
	int64_t accm;

	if (!lcp_parse(f, len, &p)) {
		/* pppd sends other protocols only with LCP open */
		if (s->state == LCP_SNOOP_AGREED) {
			s->state = LCP_SNOOP_OPEN;
			s->opens++;
		}
		return;
	}
	switch (p.code) {
	case LCP_CONF_REQ:
		accm = lcp_accm(&p);
		s->state = accm < 0 ? LCP_SNOOP_NONE : LCP_SNOOP_REQ;
		s->req_id = p.id;
		s->req_accm = (uint32_t)accm;
		break;
	case LCP_TERM_REQ:
	case LCP_TERM_ACK:
		s->state = LCP_SNOOP_NONE;
		break;
	default:        /* Echo, Identification, Nak, Reject...: no change */
		break;
	}
}

void lcp_snoop_to_pppd(struct lcp_snoop *s, const uint8_t *f, size_t len)
{
	struct lcp_pkt p;

	if (!lcp_parse(f, len, &p))
		return;
	switch (p.code) {
	case LCP_CONF_ACK:
		if (s->state == LCP_SNOOP_REQ && p.id == s->req_id &&
		    lcp_accm(&p) == (int64_t)s->req_accm) {
			s->agreed = s->req_accm;
			s->state = LCP_SNOOP_AGREED;
		}
		break;
	case LCP_CONF_REQ:
		/* once open, the peer renegotiating takes pppd's LCP down */
		if (s->state == LCP_SNOOP_OPEN)
			s->state = LCP_SNOOP_NONE;
		break;
	case LCP_TERM_REQ:
	case LCP_TERM_ACK:
		s->state = LCP_SNOOP_NONE;
		break;
	default:
		break;
	}
}
