/*
 * pppd-compat.h -- the one place that knows which pppd plugin API we are
 * built against: pppd 2.4.9 (Debian 12) or pppd 2.5.x (Debian 13).
 *
 * The plugin is written against pppd 2.5's API (accessor functions and
 * ppp_add_notify); against 2.4.9's headers this file supplies the same
 * names over 2.4.9's globals.  Nothing else in the plugin tests the pppd
 * version.
 *
 * How we tell them apart: pppd 2.5's <pppd/pppd.h> includes pppdconf.h,
 * which defines PPPD_VERSION; 2.4.9's includes patchlevel.h (VERSION).
 *
 * PPPD_COMPAT_25 is 1 for the 2.5 API, 0 for 2.4.9: the test harness,
 * which has to provide pppd's own symbols, reads it.
 */
#ifndef PLUGIN_PPPD_COMPAT_H
#define PLUGIN_PPPD_COMPAT_H

#include <pppd/pppd.h>

/* The reason pppd gives lcp_close() when a signal (SIGTERM, SIGHUP) ends
 * it: main.c's kill_link, the same text in 2.4.9 and 2.5.2.  The plugin
 * replaces only this one with pptpd's cause (pptpd-policy.c). */
#define PPPD_SIGNAL_REASON "User request"

#if defined(PPPD_VERSION)
/* ---------------------------------------------------------------- 2.5 */
#define PPPD_COMPAT_25 1

#include <pppd/options.h>
#include <pppd/chap.h>
/* 2.5 declares no logwtmp for plugins; glibc's (in libc since 2.34) is
 * the one Debian's pppd 2.5.2 itself uses. */
#include <utmp.h>

/* pppd-private.h (not installed by ppp-dev) declares it; pppd 2.5 is
 * linked with -Wl,-E, so the binary still exports it to plugins. */
void continue_networks(int unit);

/* The link's counters read from the unit now: 2.5's ppp_get_link_stats
 * reads them itself. */
static inline bool
ppp_read_link_stats(ppp_link_stats_st *stats)
{
	return ppp_get_link_stats(stats);
}

#elif defined(VERSION)
/* ---------------------------------------------------------------- 2.4 */
#define PPPD_COMPAT_25 0

#include <pppd/chap-new.h>
#include <string.h>

#define PPPD_VERSION VERSION

/* Options: 2.4.9 keeps them in pppd.h under the old names.  Variadic, so
 * a macro rather than a wrapper. */
#define ppp_add_options   add_options
#define ppp_option_error  option_error

/* pptpd's channel hands pppd these as function pointers: the names must
 * be pppd's functions themselves, not wrappers of them. */
#define ppp_generic_establish    generic_establish_ppp
#define ppp_generic_disestablish generic_disestablish_ppp

typedef int (chap_verify_hook_fn)(char *name, char *ourname, int id,
    struct chap_digest_type *digest, unsigned char *challenge,
    unsigned char *response, char *message, int message_space);

typedef struct pppd_stats ppp_link_stats_st;
typedef void (ppp_notify_fn)(void *ctx, int arg);

/* The notifier lists a plugin uses, under pppd 2.5's names. */
typedef enum {
	NF_PHASE_CHANGE,
	NF_EXIT,
	NF_IP_UP,
	NF_IP_DOWN,
	NF_IPV6_UP,
	NF_IPV6_DOWN,
} ppp_notify_t;

static inline void
ppp_add_notify(ppp_notify_t type, ppp_notify_fn *func, void *ctx)
{
	struct notifier **list = NULL;

	switch (type) {
	case NF_PHASE_CHANGE: list = &phasechange; break;
	case NF_EXIT:         list = &exitnotify; break;
	case NF_IP_UP:        list = &ip_up_notifier; break;
	case NF_IP_DOWN:      list = &ip_down_notifier; break;
	case NF_IPV6_UP:      list = &ipv6_up_notifier; break;
	case NF_IPV6_DOWN:    list = &ipv6_down_notifier; break;
	}
	if (list == NULL)
		fatal("pppd-compat: no notifier list %d", (int)type);
	add_notifier(list, func, ctx);
}

static inline const char *
ppp_ifname(void)
{
	return ifname;
}

/* As 2.5's: copies into BUF when given one, else returns pppd's own. */
static inline const char *
ppp_peer_authname(char *buf, size_t bufsz)
{
	if (buf != NULL && bufsz > 0) {
		strlcpy(buf, peer_authname, bufsz);
		return buf;
	}
	return peer_authname;
}

static inline const char *
ppp_get_remote_number(void)
{
	return remote_number;
}

static inline const char *
ppp_ipparam(void)
{
	return ipparam;
}

/* 2.4.9's ipcp_down() updates link_stats just before the ip-down
 * notifiers; 2.5's ppp_get_link_stats() updates them itself. */
static inline bool
ppp_get_link_stats(ppp_link_stats_st *stats)
{
	if (!link_stats_valid)
		return 0;
	*stats = link_stats;
	return 1;
}

static inline int
ppp_get_link_uptime(void)
{
	return (int)link_connect_time;
}

/* The link's counters read from the unit now: 2.4.9 reads it only in
 * ipcp_down (update_link_stats), which a dying pppd never runs. Not valid
 * unless this read succeeds. */
static inline bool
ppp_read_link_stats(ppp_link_stats_st *stats)
{
	link_stats_valid = 0;
	update_link_stats(ifunit);
	return ppp_get_link_stats(stats);
}

static inline void
ppp_set_modem(bool on)
{
	modem = on;
}

static inline int
ppp_set_devnam(const char *name)
{
	return (int)strlcpy(devnam, name, MAXPATHLEN);
}

#else
#error "pppd-compat.h: <pppd/pppd.h> defines neither PPPD_VERSION nor VERSION"
#endif

#endif
