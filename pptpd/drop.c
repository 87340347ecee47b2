/* The worker gives up root: see drop.h. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "pptpd/drop.h"
#include "pptpd/log.h"

int
drop_user_find(const char *name, struct drop_user *u, char *err, size_t errlen)
{
	struct passwd *pw;

	errno = 0;
	if ((pw = getpwnam(name)) == NULL) {
		/* getpwnam(3): these say "not found"; any other errno is the
		 * lookup's own failure (an LDAP server down at boot). */
		int e = errno;
		if (e != 0 && e != ENOENT && e != ESRCH && e != EBADF &&
		    e != EPERM) {
			snprintf(err, errlen, "privsep-user %s: cannot look it "
			    "up: %s", name, strerror(e));
			return DROP_LOOKUP_FAILED;
		}
		snprintf(err, errlen, "privsep-user %s: no such user (the "
		    "package and make install create it with "
		    "systemd-sysusers; or name another user)", name);
		return -1;
	}
	if (pw->pw_uid == 0 || pw->pw_gid == 0) {
		snprintf(err, errlen, "privsep-user %s: uid or gid 0: the worker "
		    "would keep root's rights: refused", name);
		return -1;
	}
	if (strlen(name) >= sizeof(u->name)) {
		snprintf(err, errlen, "privsep-user %.64s...: name too long", name);
		return -1;
	}
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	snprintf(u->name, sizeof(u->name), "%s", name);
	return 0;
}

/* Nothing of root left: the ids cannot be set back. */
static int
drop_is_final(void)
{
	uid_t r, e, s;

	if (setresuid(0, 0, 0) == 0)
		return 0;
	if (getresuid(&r, &e, &s) < 0 || r == 0 || e == 0 || s == 0)
		return 0;
	return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
}

int
drop_privileges(const struct drop_user *u, char *err, size_t errlen)
{
	const char *step = NULL;

	/* Groups first: once the uid is not root, they cannot be changed.
	 * setresuid from root to a user clears every capability (no
	 * SECBIT_KEEP_CAPS is set). */
	if (setgroups(0, NULL) < 0)
		step = "setgroups";
	else if (setresgid(u->gid, u->gid, u->gid) < 0)
		step = "setresgid";
	else if (setresuid(u->uid, u->uid, u->uid) < 0)
		step = "setresuid";
	else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		step = "PR_SET_NO_NEW_PRIVS";
	else if (!drop_is_final()) {
		snprintf(err, errlen, "worker: root could be had back after "
		    "becoming %s: stopping", u->name);
		return -1;
	}
	if (step == NULL)
		return 0;
	snprintf(err, errlen, "worker: cannot become %s (uid %u): %s: %s",
	    u->name, (unsigned)u->uid, step, strerror(errno));
	return -1;
}

int
drop_euid_begin(uid_t uid, struct drop_euid *saved)
{
	saved->was = geteuid();
	saved->changed = 0;
	if (uid == saved->was)
		return 0;   /* nothing to do: no call the worker's filter lacks */
	saved->dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	if (seteuid(uid) < 0)
		return -1;
	saved->changed = 1;
	return 0;
}

void
drop_euid_end(const struct drop_euid *saved)
{
	int err = errno;

	if (!saved->changed)
		return;
	if (seteuid(saved->was) < 0) {
		/* Cannot happen for root (the saved uid is 0); never go on
		 * as another user. */
		log_msg(LOG_CRIT, "cannot take back uid %d: %s",
		    (int)saved->was, strerror(errno));
		_exit(1);
	}
	if (saved->dumpable > 0)
		prctl(PR_SET_DUMPABLE, saved->dumpable, 0, 0, 0);
	errno = err;
}
