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

#endif
