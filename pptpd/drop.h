/*
 * drop.h -- privsep's worker gives up root (doc/design/privsep.md): its
 * own user's ids, no supplementary groups, no capabilities, and no way
 * to gain any again (no_new_privs). The monitor stays root.
 */
#ifndef PPTPD_DROP_H
#define PPTPD_DROP_H

#include <stddef.h>
#include <sys/types.h>

struct drop_user {
	uid_t uid;
	gid_t gid;
	char  name[64];
};

/* Look `name` up, before the fork (the monitor keeps no answer it did
 * not need): 0; -1 with err set when the setting is wrong (no such user,
 * or one with uid 0, which would keep root's rights); DROP_LOOKUP_FAILED
 * with err set when the lookup itself failed (NSS answered with an error,
 * which a later try may not). */
#define DROP_LOOKUP_FAILED  (-2)
int drop_user_find(const char *name, struct drop_user *u, char *err,
    size_t errlen);

/* In the worker, once: become `u` for good. 0, or -1 with err set; on -1
 * the caller must not go on (some of it may have happened). */
int drop_privileges(const struct drop_user *u, char *err, size_t errlen);

/* Root, for one call made as another user (a socket that must be that
 * user's, a signal to that user's process): the effective uid alone
 * becomes `uid` (real and saved stay 0, so root's rights can come back).
 * 0, or -1 with errno set and nothing changed. drop_euid_end takes root's
 * rights back and keeps the process dumpable as it was (the kernel clears
 * that flag at any change of credentials: a monitor that crashed after it
 * would leave no core). It never returns as another user: a failure to
 * take root back ends the process. */
struct drop_euid {
	uid_t was;
	int   dumpable;
	int   changed;
};
int  drop_euid_begin(uid_t uid, struct drop_euid *saved);
void drop_euid_end(const struct drop_euid *saved);

#endif
