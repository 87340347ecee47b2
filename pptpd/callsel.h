/* Which sessions a request means: the one lookup behind `pptpctl kill`
 * (ctl.c) and a RADIUS Disconnect-Request (dae.c). A selector names one
 * or more facts of a call; a live call (call_is_live) is selected when it
 * has every fact the selector names. */
#ifndef PPTPD_CALLSEL_H
#define PPTPD_CALLSEL_H

#include <netinet/in.h>
#include <stdint.h>

struct call;
struct calls;

struct callsel {
	int            by_id;       /* our Call ID */
	uint16_t       id;
	const char    *user;        /* as the plugin reported it; NULL: any */
	int            by_addr;     /* the client's address or the tunnel's */
	struct in_addr addr;
	int            by_tunnel;   /* the tunnel address only */
	struct in_addr tunnel;
	const char    *acct_session_id;   /* NULL: any */
};

/* Does live call `c` have every fact `sel` names? A selector that names
 * none selects nothing. */
int callsel_matches(const struct callsel *sel, const struct call *c);
/* The next selected call of `cs` after `prev` (NULL: the first), or NULL. */
struct call *callsel_next(const struct callsel *sel, const struct calls *cs,
    struct call *prev);

#endif
