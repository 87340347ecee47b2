/* Selecting sessions by what an operator or a RADIUS server knows of
 * them (callsel.h). */
#include <arpa/inet.h>
#include <string.h>

#include "pptpd/call.h"
#include "pptpd/callsel.h"

/* The tunnel address: what pppd reported once the session was up, and
 * the one we gave it from the pool (pppd may have been given another). */
static int
callsel_tunnel_is(const struct call *c, struct in_addr a)
{
	struct in_addr tun;
	if (c->remote_ip.s_addr != INADDR_ANY && c->remote_ip.s_addr == a.s_addr)
		return 1;
	return inet_pton(AF_INET, c->tunnel, &tun) == 1 && tun.s_addr == a.s_addr;
}

int
callsel_matches(const struct callsel *sel, const struct call *c)
{
	if (!call_is_live(c))
		return 0;
	if (!sel->by_id && sel->user == NULL && !sel->by_addr && !sel->by_tunnel &&
	    sel->acct_session_id == NULL)
		return 0;
	if (sel->by_id && c->id != sel->id)
		return 0;
	if (sel->user != NULL && strcmp(c->user, sel->user) != 0)
		return 0;
	if (sel->by_addr && c->peer.s_addr != sel->addr.s_addr &&
	    !callsel_tunnel_is(c, sel->addr))
		return 0;
	if (sel->by_tunnel && !callsel_tunnel_is(c, sel->tunnel))
		return 0;
	if (sel->acct_session_id != NULL && (c->acct_session_id[0] == '\0' ||
	    strcmp(c->acct_session_id, sel->acct_session_id) != 0))
		return 0;
	return 1;
}

struct call *
callsel_next(const struct callsel *sel, const struct calls *cs,
    struct call *prev)
{
	struct call *c = prev ? TAILQ_NEXT(prev, s_entry) : TAILQ_FIRST(&cs->list);
	while (c != NULL && !callsel_matches(sel, c))
		c = TAILQ_NEXT(c, s_entry);
	return c;
}
