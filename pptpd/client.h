/* A client address: what the control connections and calls from one IPv4
 * address hold, so that every per-address limit is one lookup and counts
 * calls that are still ending (their pppd not yet reaped) as well as live
 * ones. Also the address's budget of call setups (a token bucket), so one
 * host cannot start pppd after pppd. */
#ifndef PPTPD_CLIENT_H
#define PPTPD_CLIENT_H

#include <netinet/in.h>
#include <stdint.h>

struct client;
struct clients;

struct clients *clients_new(void);
void clients_free(struct clients *t);
/* The entry for `addr`, created on first use; NULL when out of memory. An
 * entry nothing holds any more is freed once its setup budget has filled
 * up again, so closing and reopening connections does not refill it. */
struct client *clients_get(struct clients *t, struct in_addr addr, uint64_t now_ms);

unsigned client_ctrls(const struct client *c);
unsigned client_calls(const struct client *c);
unsigned client_setups(const struct client *c);

void client_ctrl_add(struct client *c);
void client_ctrl_gone(struct client *c);
void client_call_add(struct client *c);
void client_call_gone(struct client *c);
void client_setup_add(struct client *c);
void client_setup_done(struct client *c);

/* Take one call setup from the budget: `rate` per second, bursts of
 * `rate`. Returns 0 when the budget is spent. */
int client_setup_allow(struct client *c, uint64_t now_ms, unsigned rate);

#endif
