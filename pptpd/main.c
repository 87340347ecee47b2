/* pptpd: command line, configuration, daemonising and the event loop. The
 * command line is Poptop's, so existing init scripts keep working. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fds.h"
#include "common/procexe.h"
#include "pptpd/conf.h"
#include "pptpd/drop.h"
#include "pptpd/fileset.h"
#include "pptpd/log.h"
#include "pptpd/loop.h"
#include "pptpd/monitor.h"
#include "pptpd/monlink.h"
#include "proto/ctl.h"
#include "proto/journal.h"
#include "proto/peers.h"
#include "pptpd/pool.h"
#include "pptpd/sandbox.h"
#include "pptpd/server.h"
#include "pptpd/upgrade.h"
#include "proto/handover.h"
#include "pptpd/version.h"

/* Exit statuses (pptpd(8)): 1 the daemon could not start or failed (cannot
 * listen, another pptpd holds the pid file, /run/pptpd refused, ...), 2 the
 * command line or the configuration (pptpd.conf, the peers file) is wrong. */
#define EXIT_FAIL   1
#define EXIT_CONFIG 2
_Static_assert(UPGRADE_EXIT_CONF == EXIT_CONFIG, "the exit status "
    "upgrade.c reads as a configuration refused");

/* Descriptors: every control connection holds its socket, and each call
 * a pty and a report channel (the kernel path: the channel, and its
 * socket while pppd starts). A connection may carry calls-per-connection
 * calls, and every call holds a pool address, so the calls are bounded
 * by both. The rest is a fixed set (stdio, epoll, signalfd, the GRE
 * socket, the listener and the control socket with a spare each, the pid
 * file, syslog, the pty slave and pppd's end of the report channel while
 * pppd is being started; metrics and RADIUS Disconnect-Requests when set
 * up). When the limit holds less, connections are fitted with one call
 * each (as Windows makes them); whatever the count, a call that finds too
 * few descriptors free is refused (call.c), and the listener and the
 * control socket shed clients rather than spin (shed.h). (Kept at 16:
 * valgrind keeps some of a 32-descriptor limit for itself, and the test of
 * that limit must still start.) */
#define FDS_PER_CONNECTION 1
#define FDS_PER_CALL       2
#define FDS_FIXED          16
/* Under privsep the monitor holds a copy of each call's connection, pty
 * master and the worker's report end (monitor.c), under the same limit:
 * three per call, even on a connection's second call. */
#define FDS_PER_CALL_MONITOR 3

#define PIDFILE_MAX 32      /* bytes of a pid file worth reading */

struct opts {
	const char *conf_file;
	const char *option, *listen, *pidfile, *ppp, *speed;
	int         connections, stimeout, foreground, debug, noipparam, logwtmp;
	int         handover_version;   /* --handover-version: print, exit */
	int         resume_fd;          /* --resume FD: an upgrade's; -1 */
	char *const *argv;              /* as started: an upgrade runs it again */
	char        exe[PATH_MAX];      /* ... this binary, as installed */
};

/* Long options only: what an upgrade asks of the installed binary and
 * hands it (upgrade.h); not for people. */
enum { OPT_HANDOVER_VERSION = 256, OPT_RESUME };
static const struct option long_opts[] = {
	{ "handover-version", no_argument, NULL, OPT_HANDOVER_VERSION },
	{ "resume", required_argument, NULL, OPT_RESUME },
	{ NULL, 0, NULL, 0 },
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: pptpd [-dfhivw] [-c config] [-o options] [-l listen] [-C connections]\n"
	    "             [-p pidfile] [-e ppp] [-s speed] [-t stimeout]\n"
	    "  -c FILE  configuration file (default %s)\n"
	    "  -o FILE  pppd options file (overrides 'option')\n"
	    "  -l ADDR  IPv4 address to listen on (overrides 'listen')\n"
	    "  -C N     maximum control connections (overrides 'connections')\n"
	    "  -p FILE  pid file (overrides 'pidfile')\n"
	    "  -e PATH  pppd to run (overrides 'ppp')\n"
	    "  -s N     speed passed to pppd (overrides 'speed')\n"
	    "  -t N     seconds to wait for a client's first message ('stimeout')\n"
	    "  -i       do not pass ipparam to pppd ('noipparam')\n"
	    "  -w       write wtmp records ('logwtmp')\n"
	    "  -f       stay in the foreground, log to stderr\n"
	    "  -d       debug logging\n"
	    "  -v       print the version and exit\n"
	    "  -h       this help\n"
	    "  --handover-version  the hand-over this binary reads (pptpctl upgrade)\n",
	    CONF_DEFAULT_FILE);
}

static int
parse_int(const char *s, int min, int max, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *s == '\0' || *end != '\0' || v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

static int
parse_args(int argc, char **argv, struct opts *o)
{
	int ch;
	while ((ch = getopt_long(argc, argv, "bc:dDe:fhil:o:p:s:t:vwC:",
	    long_opts, NULL)) != -1) {
		switch (ch) {
		case OPT_HANDOVER_VERSION: o->handover_version = 1; break;
		case OPT_RESUME:
			if (parse_int(optarg, 3, INT_MAX, &o->resume_fd) < 0) {
				fprintf(stderr, "pptpd: --resume: bad descriptor "
				    "'%s'\n", optarg);
				return -1;
			}
			break;
		case 'c': o->conf_file = optarg; break;
		case 'o': o->option = optarg; break;
		case 'l': o->listen = optarg; break;
		case 'p': o->pidfile = optarg; break;
		case 'e': o->ppp = optarg; break;
		case 's': o->speed = optarg; break;
		case 'f': o->foreground = 1; break;
		case 'd': o->debug = 1; break;
		case 'i': o->noipparam = 1; break;
		case 'w': o->logwtmp = 1; break;
		case 'C':
			if (parse_int(optarg, 1, 65535, &o->connections) < 0) {
				fprintf(stderr, "pptpd: -C: bad number '%s'\n", optarg);
				return -1;
			}
			break;
		case 't':
			if (parse_int(optarg, 1, 3600, &o->stimeout) < 0) {
				fprintf(stderr, "pptpd: -t: bad number '%s'\n", optarg);
				return -1;
			}
			break;
		case 'b': case 'D':
			fprintf(stderr, "pptpd: -%c is not supported, ignored\n", ch);
			break;
		case 'v':
			printf("pptpd %s\n", PPTPD_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "pptpd: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

static int
replace_str(char **dst, const char *src)
{
	char *s = strdup(src);
	if (s == NULL)
		return -1;
	free(*dst);
	*dst = s;
	return 0;
}

/* The command line wins over the file, as with Poptop. */
static int
apply_args(struct conf *c, const struct opts *o)
{
	if (o->listen != NULL && inet_pton(AF_INET, o->listen, &c->listen) != 1) {
		fprintf(stderr, "pptpd: -l: bad IPv4 address '%s'\n", o->listen);
		return -1;
	}
	if ((o->option && replace_str(&c->option, o->option) < 0) ||
	    (o->pidfile && replace_str(&c->pidfile, o->pidfile) < 0) ||
	    (o->ppp && replace_str(&c->ppp, o->ppp) < 0) ||
	    (o->speed && replace_str(&c->speed, o->speed) < 0))
		return -1;
	if (o->connections)
		c->connections = o->connections;
	if (o->stimeout)
		c->stimeout = o->stimeout;
	c->debug |= o->debug;
	c->noipparam |= o->noipparam;
	c->logwtmp |= o->logwtmp;
	return 0;
}

/* -w is the command line's logwtmp; the file's was checked by conf_load. */
static int
check_args(const struct conf *c, const struct opts *o, char *err, size_t errlen)
{
	if (o->logwtmp && c->noplugin) {
		snprintf(err, errlen, "-w (logwtmp) needs the plugin; remove "
		    "'noplugin' from %s", c->file);
		return -1;
	}
	return 0;
}

/* The plugin reads the peers file in every pppd, where a mistake would
 * fail each call; read it once here so it fails the start (or the reload)
 * instead. */
static int
check_peers(const struct conf *c, struct fileset *fs, char *err, size_t errlen)
{
	struct peers *p;
	int fd, rc;

	if (c->peers == NULL || c->noplugin)
		return 0;
	if ((fd = fileset_open(fs, c->peers, O_RDONLY | O_NOCTTY)) < 0) {
		snprintf(err, errlen, "%s: cannot open: %s", c->peers,
		    strerror(errno));
		return -1;
	}
	rc = peers_load_fd(fd, c->peers, &p, err, errlen);
	close(fd);
	peers_free(p);
	return rc;
}

/* The plugin must be there, or every call would fail: opened through
 * `fs`, as root (the monitor's recording) or from what it opened (the
 * worker), so an unprivileged worker's view does not decide. Every time,
 * not only when it changed: the monitor's and the worker's running
 * configurations may differ (a reload the monitor refused). */
static int
check_plugin_file(const struct conf *c, struct fileset *fs, char *err,
    size_t errlen)
{
	int fd;

	if (c->noplugin)
		return 0;
	if ((fd = fileset_open(fs, c->plugin, O_RDONLY)) < 0) {
		snprintf(err, errlen, "pppd plugin %s: %s", c->plugin,
		    strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

/* The most calls `c` lets exist at once. */
static rlim_t
nofile_calls(const struct conf *c)
{
	char ignored[CONF_ERR_LEN];
	rlim_t calls = (rlim_t)c->connections * (rlim_t)c->calls_per_conn;
	long pool = c->remoteip == NULL ? -1 :
	    pool_spec_count(c->remoteip, ignored, sizeof(ignored));
	return pool >= 0 && (rlim_t)pool < calls ? (rlim_t)pool : calls;
}

/* At EMFILE the listener cannot take a client off its backlog, and a
 * call's pppd cannot be started; make sure the limit holds 'connections'
 * and their calls. Raise the soft limit up to the hard one; if that is
 * still short, serve as many connections as fit with one call each (with
 * a warning) rather than fail at accept time. */
static int
nofile_fit(struct conf *c, char *err, size_t errlen)
{
	const rlim_t per_conn = FDS_PER_CONNECTION + FDS_PER_CALL;
	rlim_t need = FDS_FIXED + (rlim_t)c->connections * FDS_PER_CONNECTION +
	    nofile_calls(c) * FDS_PER_CALL;
	rlim_t monitor = FDS_FIXED + nofile_calls(c) * FDS_PER_CALL_MONITOR;
	struct rlimit rl;

	_Static_assert(FDS_PER_CALL_MONITOR <= FDS_PER_CONNECTION + FDS_PER_CALL,
	    "a connection with one call fits the monitor too");
	if (c->privsep && monitor > need)
		need = monitor;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		snprintf(err, errlen, "getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
		return -1;
	}
	if (rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
		struct rlimit up = { rl.rlim_max < need ? rl.rlim_max : need, rl.rlim_max };
		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl = up;
	}
	if (rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_cur < FDS_FIXED + per_conn) {
		snprintf(err, errlen, "RLIMIT_NOFILE %llu is too low: one connection "
		    "needs %d descriptors", (unsigned long long)rl.rlim_cur,
		    (int)(FDS_FIXED + per_conn));
		return -1;
	}
	int fit = (int)((rl.rlim_cur - FDS_FIXED) / per_conn);
	if (fit >= c->connections) {
		log_msg(LOG_WARNING, "RLIMIT_NOFILE %llu (hard limit) holds %d "
		    "connections with one call each, not every call they may "
		    "carry (%llu descriptors): a call that finds none free is "
		    "refused", (unsigned long long)rl.rlim_cur, c->connections,
		    (unsigned long long)need);
		return 0;
	}
	log_msg(LOG_WARNING, "RLIMIT_NOFILE %llu (hard limit) holds %d connections, "
	    "not the %d of 'connections' (%llu descriptors): serving at most %d",
	    (unsigned long long)rl.rlim_cur, fit, c->connections,
	    (unsigned long long)need, fit);
	c->connections = fit;
	return 0;
}

/* Before daemon(), so a second pptpd fails in the foreground with a clear
 * message: the flock belongs to the open file description, which the
 * daemon's child shares and keeps once the parent has exited. */
static int
pidfile_lock(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
	    0644);

	if (fd < 0) {
		if (errno == ELOOP)
			snprintf(err, errlen, "pid file %s is a symbolic link: refused "
			    "(remove it)", path);
		else
			snprintf(err, errlen, "cannot open pid file %s: %s", path,
			    strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		snprintf(err, errlen, "pid file %s is not a regular file: refused", path);
	else if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	else if (errno == EWOULDBLOCK) {
		char buf[PIDFILE_MAX] = "";
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		long pid = n > 0 ? strtol(buf, NULL, 10) : 0;
		char who[32] = "";
		/* still starting: it has not written its pid yet */
		if (pid > 0)
			snprintf(who, sizeof(who), " (pid %ld)", pid);
		snprintf(err, errlen, "another pptpd%s is running: pid file %s is "
		    "locked", who, path);
	} else
		snprintf(err, errlen, "cannot lock pid file %s: %s", path,
		    strerror(errno));
	close(fd);
	return -1;
}

/* After daemon(): the pid is final now. */
static int
pidfile_write(int fd)
{
	char buf[PIDFILE_MAX];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		return -1;
	return 0;
}

/* The signals the daemon acts on: held from start to end, read through a
 * signalfd (the loop's; under privsep the monitor's too). */
static const int daemon_sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1,
	SIGUSR2 };
#define DAEMON_NSIGS ((int)(sizeof(daemon_sigs) / sizeof(daemon_sigs[0])))

/* At the end: only the holder of the lock removes the file (`owner`).
 * (conf->pidfile, not the path the start used: a reload replaced the
 * string, never its value.) */
static void
pidfile_release(int fd, const char *path, int owner)
{
	if (fd < 0)
		return;
	if (owner)
		unlink(path);
	close(fd);
}

/* What a reload needs: the configuration in force and the command line. */
struct reloader {
	struct conf       *conf;
	const struct opts *o;
	struct server     *s;
	struct monlink    *ml;     /* privsep: the worker's monitor */
	struct drop_user   user;   /* privsep: the worker's (privsep-user) */
	struct server_facts facts; /* privsep: what the first startup learnt */
	int                journal;   /* privsep, in the monitor: the memfd */
	int                upgrade_bin;  /* the installed binary, checked */
	/* After an upgrade's execve (--resume): what the monitor before
	 * handed over; journal -1 otherwise. */
	struct {
		int                   journal;
		struct handover_call *calls;
		size_t                n;
		uint32_t              generation;
	} resumed;
	struct loop_timer  leave;     /* the worker's exit for an upgrade */
	int                monitor_lost;
	/* -c made absolute before daemon() leaves the working directory */
	char               path[PATH_MAX];
};

/* The files read and checked as a start reads them, into `next`; each
 * opened through `fs` (fileset.h; NULL: by path); `flags` conf_load_fs's
 * (the monitor looks no name up). */
static int
reload_read(const struct reloader *r, struct conf *next, struct fileset *fs,
    int flags, char *err, size_t errlen)
{
	conf_init(next);
	if (conf_load_fs(next, r->path, fs, flags, err, errlen) < 0)
		return -1;
	if (apply_args(next, r->o) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (check_args(next, r->o, err, errlen) < 0 ||
	    check_peers(next, fs, err, errlen) < 0 ||
	    check_plugin_file(next, fs, err, errlen) < 0)
		return -1;
	return 0;
}

/* Under privsep the worker may not open root's files: it reads the ones
 * the monitor opened for this reload (monlink_files). */
static int
reload_read_worker(const struct reloader *r, struct conf *next, char *err,
    size_t errlen)
{
	struct fileset *fs = NULL;
	int rc;

	if (r->ml != NULL && (fs = monlink_files(r->ml, err, errlen)) == NULL) {
		conf_init(next);
		return -1;
	}
	rc = reload_read(r, next, fs, 0, err, errlen);
	fileset_free(fs);
	return rc;
}

/* Read and check everything as a start does, into a new configuration;
 * only when all of it holds does the server take it. */
static int
reload(void *arg, char *err, size_t errlen)
{
	struct reloader *r = arg;
	struct conf next, old;

	if (reload_read_worker(r, &next, err, errlen) < 0 ||
	    nofile_fit(&next, err, errlen) < 0)
		goto refuse;
	if (server_reload(r->s, &next, err, errlen) < 0)
		goto refuse;
	/* The monitor starts pppd from its own copy of the files: it reads
	 * them once the server has taken them, with the same checks, so it
	 * refuses only a file changed again in between. */
	if (r->ml != NULL) {
		if (monlink_reload(r->ml, err, errlen) < 0)
			log_msg(LOG_ERR, "reload: the monitor kept its "
			    "configuration (%s): pppd may start with the one "
			    "before", err);
		server_monitor_reloaded(r->s);
	}
	for (size_t i = 0; i < next.nwarnings; i++)
		log_msg(LOG_WARNING, "%s", next.warnings[i]);
	/* s->conf points at *r->conf: it now holds the new settings. */
	old = *r->conf;
	*r->conf = next;
	conf_free(&old);
	log_msg(LOG_NOTICE, "reloaded %s", r->conf->file);
	return 0;
refuse:
	log_msg(LOG_ERR, "%s: reload refused, the running configuration stays",
	    err);
	conf_free(&next);
	return -1;
}

/* RELOAD_FILES: the files a reload reads, opened by the monitor for the
 * worker (the configuration read is thrown away: the worker's own read
 * of the same files decides). */
static int
monitor_files(void *arg, struct fileset *fs, char *err, size_t errlen)
{
	struct reloader *r = arg;
	struct conf next;
	int rc = reload_read(r, &next, fs, CONF_LOAD_NO_RESOLVE, err, errlen);

	conf_free(&next);
	return rc;
}

/* The monitor's reload: the files only (the server is the worker's). */
static int
monitor_reload(void *arg, char *err, size_t errlen)
{
	struct reloader *r = arg;
	struct conf next, old;

	if (reload_read(r, &next, NULL, CONF_LOAD_NO_RESOLVE, err, errlen) < 0 ||
	    conf_restart_check(r->conf, &next, err, errlen) < 0)
		goto refuse;
	log_set_debug(next.debug);
	old = *r->conf;
	*r->conf = next;
	conf_free(&old);
	return 0;
refuse:
	conf_free(&next);
	return -1;
}

/* The worker, after answering `pptpctl upgrade`: it goes, without a word
 * to any session (they are the next worker's), once its answers are out. */
#define WORKER_LEAVE_MS 300
static void
worker_leave(void *arg)
{
	(void)arg;
	log_msg(LOG_NOTICE, "worker: leaving for the upgrade");
	log_close();
	_exit(0);
}

/* `pptpctl upgrade`, in the worker. */
static int
worker_upgrade(void *arg, char *err, size_t errlen)
{
	struct reloader *r = arg;

	if (r->ml == NULL) {
		snprintf(err, errlen, "an upgrade needs privsep yes (the "
		    "monitor holds the sessions across it)");
		return -1;
	}
	if (monlink_upgrade(r->ml, err, errlen) < 0)
		return -1;
	loop_timer_set(r->s->loop, &r->leave, WORKER_LEAVE_MS, worker_leave, r);
	return 0;
}

static void
worker_pppd_exited(void *arg, uint16_t call_id, pid_t pid, int status)
{
	struct reloader *r = arg;
	server_child_exited(r->s, call_id, pid, status);
}

/* Without its monitor the worker can neither start nor end a call. */
static void
worker_monitor_gone(void *arg)
{
	struct reloader *r = arg;
	log_msg(LOG_ERR, "worker: the monitor is gone or stuck: stopping");
	r->monitor_lost = 1;
	loop_stop(r->s->loop);
}

/* The monitor keeps stdio, its socket to the worker, the pid file and
 * the journal: the sockets the server opened are the worker's (a
 * listener a reload moved must stop accepting when the worker closes
 * it), and syslog's is opened again, so that its number can never come
 * to name another file. */
/* `resumed`: the monitor's own, after an upgrade: the descriptors of the
 * calls handed over stay too. */
static void
monitor_close_others(int sock, int pid_fd, int journal,
    const struct reloader *r, int resumed)
{
	size_t n = 3 + (resumed ? 3 * r->resumed.n : 0), k = 3;
	int fixed[3] = { sock, pid_fd, journal };
	int *keep = n > 3 ? calloc(n, sizeof(*keep)) : fixed;

	if (keep == NULL) {   /* nothing is closed: better than a session */
		log_msg(LOG_WARNING, "monitor: out of memory: descriptors of "
		    "the server kept");
		return;
	}
	if (keep != fixed) {
		memcpy(keep, fixed, sizeof(fixed));
		for (size_t i = 0; i < r->resumed.n; i++) {
			keep[k++] = r->resumed.calls[i].conn;
			keep[k++] = r->resumed.calls[i].report;
			keep[k++] = r->resumed.calls[i].pty;
		}
	}
	log_close();
	fds_close_except(keep, n);
	if (keep != fixed)
		free(keep);
	log_open("pptpd", r->o->foreground, r->conf->debug);
}

/* The journal (proto/journal.h): a memfd mapped shared at *map, made
 * before the first worker is forked, which inherits the mapping. Its
 * descriptor, or -1 with err set. */
static int
privsep_journal(const struct reloader *r, void **map, char *err,
    size_t errlen)
{
	const char *why = NULL;

	if (r->resumed.journal >= 0) {
		/* the monitor before the upgrade's: the old worker's records */
		*map = mmap(NULL, journal_size(), PROT_READ | PROT_WRITE,
		    MAP_SHARED, r->resumed.journal, 0);
		if (*map == MAP_FAILED)
			why = strerror(errno);
		else if (journal_check(*map, journal_size(), &why) < 0)
			munmap(*map, journal_size());
		if (why == NULL)
			return r->resumed.journal;
		snprintf(err, errlen, "the journal handed over: %s", why);
		return -1;
	}
	int fd = memfd_create("pptpd-journal", MFD_CLOEXEC);

	*map = MAP_FAILED;
	if (fd >= 0 && ftruncate(fd, (off_t)journal_size()) == 0)
		*map = mmap(NULL, journal_size(), PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
	if (*map == MAP_FAILED) {
		snprintf(err, errlen, "cannot make the sessions' journal: %s",
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	journal_init(*map);
	return fd;
}

/* The worker, still root, its server made: name it, drop to the
 * worker's user under seccomp, and hand the server its monitor (on
 * `sock`) and the journal. 0, or -1 with err set. */
static int
worker_begin(struct reloader *r, struct loop *loop, int sock, void *jmap,
    char *err, size_t errlen)
{
	/* `ps -C pptpd-worker`; the monitor keeps the name systemd knows. */
	prctl(PR_SET_NAME, "pptpd-worker");
	/* Everything root had to open is open: the sockets (listener, raw
	 * GRE and ICMPv6, DAE, metrics, pptpctl's). */
	if (drop_privileges(&r->user, err, errlen) < 0 ||
	    sandbox_enter(err, errlen) < 0)
		return -1;
	const struct monlink_events ev = { worker_pppd_exited,
		worker_monitor_gone, r };
	if ((r->ml = monlink_new(loop, sock, &ev, err, errlen)) == NULL)
		return -1;
	server_set_runner(r->s, monlink_runner(r->ml), monlink_notify, r->ml);
	server_set_journal(r->s, jmap);
	size_t n;
	struct pppd_resumed *resumed = monlink_take_resumed(r->ml, &n);
	server_resume(r->s, resumed, n);
	free(resumed);
	return 0;
}

static int serve(struct reloader *r, struct loop *loop);

/* The monitor's copy of the configuration, made the worker's: the
 * monitor reads radius-config-file without looking its names up (it must
 * not wait on DNS), so it is read again here, in the child, as a start
 * reads it; and nofile_fit's cut of `connections` is made again. 0, or
 * -1 with err set. */
static int
worker_conf(struct conf *c, char *err, size_t errlen)
{
	char why[CONF_ERR_LEN];

	if (c->has_radcfg && c->radcfg.unresolved &&
	    radcfg_load(c->radius_config_file, NULL, 0, &c->radcfg, why,
	    sizeof(why)) < 0) {
		snprintf(err, errlen, "radius-config-file: %s", why);
		return -1;
	}
	return nofile_fit(c, err, errlen);
}

/* In the monitor's child: a worker after the first, made as the first
 * was but with what the first startup learnt (server_new's `given`) and
 * the configuration the monitor holds (the last one the worker took).
 * Returns its exit status. */
static int
worker_again(struct reloader *r, int sock)
{
	char err[CONF_ERR_LEN + PATH_MAX];
	struct loop *loop = NULL;
	void *jmap;
	int rc = EXIT_FAIL, started = 0;

	/* Not the worker's: the monitor's signalfd, the pid file, the
	 * sessions' copies. */
	monitor_close_others(sock, -1, r->journal, r, 0);
	jmap = mmap(NULL, journal_size(), PROT_READ | PROT_WRITE, MAP_SHARED,
	    r->journal, 0);
	close(r->journal);
	if (jmap == MAP_FAILED)
		snprintf(err, sizeof(err), "cannot map the sessions' journal: %s",
		    strerror(errno));
	else if ((loop = loop_new()) == NULL)
		snprintf(err, sizeof(err), "cannot create the event loop: %s",
		    strerror(errno));
	else if (worker_conf(r->conf, err, sizeof(err)) < 0)
		;
	else if ((r->s = server_new(r->conf, loop, r->user.uid, &r->facts, err,
	    sizeof(err))) == NULL)
		;
	else if (worker_begin(r, loop, sock, jmap, err, sizeof(err)) < 0)
		;
	else {
		r->s->reload = reload;
		r->s->upgrade = worker_upgrade;
		r->s->reload_arg = r;
		started = 1;
		rc = serve(r, loop);
	}
	if (!started)
		log_msg(LOG_ERR, "worker: %s", err);
	monlink_free(r->ml);
	server_free(r->s);
	if (loop != NULL)
		loop_free(loop);
	return rc;
}

/* The monitor's respawn (monitor.h): fork a worker on a new socketpair. */
static pid_t
worker_respawn(void *arg, int *sock)
{
	struct reloader *r = arg;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	pid_t w = fork();
	if (w != 0) {
		close(sv[1]);
		if (w < 0)
			close(sv[0]);
		else
			*sock = sv[0];
		return w;
	}
	close(sv[0]);
	r->ml = NULL;
	r->s = NULL;
	_exit(worker_again(r, sv[1]));
}

/* privsep yes: fork the worker, which returns 0 to run the server with
 * the link in r->ml; the monitor returns 1 with *rc its exit status. -1
 * with err set: neither could start. */
/* ADMIN upgrade, in the monitor: may the installed binary take over? */
static int
monitor_upgrade_check(void *arg, char *err, size_t errlen)
{
	struct reloader *r = arg;

	if (r->upgrade_bin >= 0)   /* an upgrade given up before its exec */
		close(r->upgrade_bin);
	return upgrade_check(r->o->exe, r->o->argv, r->path, &r->upgrade_bin,
	    err, errlen);
}

/* ... it may, and the worker has left: this process becomes it. */
static void
monitor_upgrade_exec(void *arg, const struct handover_call *calls, size_t n,
    uint32_t generation)
{
	struct reloader *r = arg;
	int err;

	log_msg(LOG_NOTICE, "monitor: upgrade: executing %s with %zu sessions",
	    r->o->exe, n);
	log_close();
	upgrade_exec(r->upgrade_bin, r->o->argv, r->path, r->journal, calls, n,
	    generation);
	err = errno;
	close(r->upgrade_bin);
	r->upgrade_bin = -1;
	log_open("pptpd", r->o->foreground, r->conf->debug);
	errno = err;
}

static int
privsep_split(struct reloader *r, struct loop *loop, int *pid_fd, int *rc,
    char *err, size_t errlen)
{
	sigset_t set;
	int sv[2], journal;
	void *jmap;

	if ((journal = privsep_journal(r, &jmap, err, errlen)) < 0)
		return -1;
	/* Held from here, so that neither side dies of a signal before it
	 * reads them (the monitor's signalfd, the worker's loop). */
	sigemptyset(&set);
	for (int i = 0; i < DAEMON_NSIGS; i++)
		sigaddset(&set, daemon_sigs[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "cannot make the monitor's socket: %s",
		    strerror(errno));
		munmap(jmap, journal_size());
		close(journal);
		return -1;
	}
	pid_t w = fork();
	if (w < 0) {
		snprintf(err, errlen, "cannot fork the worker: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		munmap(jmap, journal_size());
		close(journal);
		return -1;
	}
	if (w > 0) {
		struct monitor_env env = { .conf = r->conf, .worker = w,
			.worker_uid = r->user.uid, .sock = sv[0],
			.reload = monitor_reload, .files = monitor_files,
			.reload_arg = r, .respawn = worker_respawn,
			.upgrade_check = monitor_upgrade_check,
			.upgrade_exec = monitor_upgrade_exec,
			.resumed = r->resumed.calls, .nresumed = r->resumed.n,
			.generation = r->resumed.generation };
		/* The monitor never reads the journal; it keeps the memfd for
		 * a worker after this one (doc/design/privsep.md, step 3). */
		munmap(jmap, journal_size());
		server_facts(r->s, &r->facts);
		env.kernel_path = r->facts.kernel_path;
		env.guarded = r->facts.guarded;
		env.clamping = r->facts.clamping;
		env.shaping = r->facts.shaping;
		r->journal = journal;
		monitor_close_others(sv[0], *pid_fd, journal, r, 1);
		log_msg(LOG_NOTICE, "monitor: the worker is pid %d", (int)w);
		*rc = monitor_run(&env);   /* closes sv[0], or its successor */
		close(journal);
		return 1;
	}
	close(sv[0]);
	close(journal);   /* the mapping stays */
	/* What the monitor before an upgrade handed over is the monitor's:
	 * this worker gets its own copies with CALL_RESUME. */
	for (size_t i = 0; i < r->resumed.n; i++) {
		struct handover_call *c = &r->resumed.calls[i];
		int fds[] = { c->conn, c->report, c->pty };
		for (size_t k = 0; k < 3; k++)
			if (fds[k] >= 0)
				close(fds[k]);
	}
	/* The pid file is root's and the monitor's (its lock stays with the
	 * monitor's copy): a worker that could write it could name the pid
	 * root's tools signal. */
	if (*pid_fd >= 0) {
		close(*pid_fd);
		*pid_fd = -1;
	}
	return worker_begin(r, loop, sv[1], jmap, err, errlen);
}

static void
on_signal(void *arg, int signo)
{
	struct server *s = arg;
	switch (signo) {
	case SIGCHLD:
		server_reap(s);
		break;
	case SIGUSR1:
		server_status(s);
		break;
	case SIGHUP: {
		char err[CONF_ERR_LEN + PATH_MAX];
		log_msg(LOG_NOTICE, "SIGHUP: reloading");
		server_reload_files(s, err, sizeof(err));
		break;
	}
	case SIGUSR2: {
		/* `pptpctl upgrade` as a signal: the unit's way to ask
		 * (systemctl kill -s USR2 --kill-whom=main) */
		char err[512];
		log_msg(LOG_NOTICE, "SIGUSR2: upgrading");
		if (s->upgrade(s->reload_arg, err, sizeof(err)) < 0)
			log_msg(LOG_WARNING, "SIGUSR2: upgrade refused: %s", err);
		break;
	}
	default:
		server_shutdown(s);
		break;
	}
}

/* Run r->s until SIGTERM (the worker's or the only process's loop).
 * Returns the exit status. */
static int
serve(struct reloader *r, struct loop *loop)
{
	const struct conf *conf = r->conf;
	int rc;

	if (loop_signals(loop, daemon_sigs, DAEMON_NSIGS, on_signal, r->s) < 0) {
		log_msg(LOG_ERR, "cannot set up signals: %s", strerror(errno));
		return EXIT_FAIL;
	}
	log_msg(LOG_NOTICE, "pptpd %s listening on %s:1723 (pool %s, max %d "
	    "connections)", PPTPD_VERSION, inet_ntoa(conf->listen),
	    conf->remoteip ? conf->remoteip : "none", conf->connections);
	if (!conf->privsep)
		log_msg(LOG_WARNING, "privsep no: one root process parses "
		    "what the network sends; for debugging only "
		    "(pptpd.conf(5))");
	/* Listening, and a SIGTERM now stops us cleanly. */
	server_ready(r->s);
	rc = loop_run(loop) < 0 || r->monitor_lost ? EXIT_FAIL : 0;
	log_msg(LOG_NOTICE, "pptpd stopped");
	return rc;
}

/* Start the server, run it until SIGTERM, stop it. Returns the exit status. */
static int
run(struct conf *conf, const struct opts *o)
{
	char err[CONF_ERR_LEN + PATH_MAX];
	const char *pidfile = (!o->foreground || o->pidfile) ? conf->pidfile : NULL;
	const char *reason = NULL;
	struct server *s = NULL;
	struct reloader reloader = { .conf = conf, .o = o,
		.resumed.journal = -1, .upgrade_bin = -1 };
	struct loop *loop = NULL;
	int rc = EXIT_FAIL, pid_fd = -1, split = 0, found = 0;

	if (realpath(o->conf_file, reloader.path) == NULL)
		snprintf(reloader.path, sizeof(reloader.path), "%s", o->conf_file);

	if (o->resume_fd >= 0 && upgrade_take(o->resume_fd,
	    &reloader.resumed.journal, &reloader.resumed.calls,
	    &reloader.resumed.n, &reloader.resumed.generation, err,
	    sizeof(err)) < 0) {
		reason = err;
	} else if (o->resume_fd >= 0 && !conf->privsep) {
		snprintf(err, sizeof(err), "an upgrade's sessions need privsep "
		    "yes (the configuration now says no)");
		reason = err;
	} else if ((loop = loop_new()) == NULL) {
		snprintf(err, sizeof(err), "cannot create the event loop: %s", strerror(errno));
		reason = err;
	} else if (conf->privsep && (found = drop_user_find(conf->privsep_user,
	    &reloader.user, err, sizeof(err))) < 0) {
		/* A setting to fix, as a bad line is: systemd does not restart
		 * (RestartPreventExitStatus=2) into the same refusal. A lookup
		 * that failed may work next time: 1, restarted. */
		reason = err;
		rc = found == DROP_LOOKUP_FAILED ? EXIT_FAIL : EXIT_CONFIG;
	} else if (pidfile != NULL &&
	    (pid_fd = pidfile_lock(pidfile, err, sizeof(err))) < 0) {
		reason = err;
	} else if ((s = server_new(conf, loop, conf->privsep ?
	    reloader.user.uid : geteuid(), NULL, err, sizeof(err))) == NULL) {
		reason = err;
	} else if (!o->foreground && o->resume_fd < 0 && daemon(0, 0) < 0) {
		/* (after an upgrade's execve the process stays: its pid is
		 * the one pppd, systemd and the pid file know) */
		snprintf(err, sizeof(err), "cannot daemonise: %s", strerror(errno));
		reason = err;
	}
	if (reason == NULL) {
		if (!o->foreground && o->resume_fd < 0)
			server_daemonised(s);
		reloader.s = s;
		s->reload = reload;
		s->upgrade = worker_upgrade;
		s->reload_arg = &reloader;
		if (!o->foreground)
			log_open("pptpd", 0, conf->debug);
		if (pid_fd >= 0 && pidfile_write(pid_fd) < 0)
			log_msg(LOG_WARNING, "cannot write pid file %s: %s", pidfile,
			    strerror(errno));
		if (conf->privsep &&
		    (split = privsep_split(&reloader, loop, &pid_fd, &rc, err,
		    sizeof(err))) < 0)
			reason = err;
	}
	if (split == 1) {
		/* The monitor: the server's objects are the worker's, which
		 * has ended them; only the pid file is the monitor's. Their
		 * copy here from before the fork is left, not freed:
		 * server_free would end them a second time (the MSS table,
		 * the GRE guard), so the monitor leaves by _exit. */
		log_msg(LOG_NOTICE, "pptpd stopped");
		/* pptpctl's socket is the worker's, in root's directory, where
		 * the worker, no longer root, cannot remove it; before the pid
		 * file's lock goes, so it is never a next pptpd's. */
		unlink(CTL_SOCK_PATH);
		pidfile_release(pid_fd, conf->pidfile, 1);
		log_close();
		_exit(rc);
	}
	if (reason == NULL)
		rc = serve(&reloader, loop);
	else
		log_msg(LOG_ERR, "%s", reason);
	monlink_free(reloader.ml);
	server_free(s);
	loop_free(loop);
	free(reloader.resumed.calls);
	/* The worker's copy of the lock: the monitor's to remove. */
	pidfile_release(pid_fd, conf->pidfile, reloader.ml == NULL);
	return rc;
}

int
main(int argc, char **argv)
{
	struct opts o = { .conf_file = CONF_DEFAULT_FILE, .resume_fd = -1,
		.argv = argv };
	struct conf conf;
	char err[CONF_ERR_LEN > PEERS_ERR_MAX ? CONF_ERR_LEN : PEERS_ERR_MAX];
	int rc = EXIT_CONFIG;

	if (parse_args(argc, argv, &o) < 0)
		return EXIT_CONFIG;
	if (proc_exe_path(0, o.exe) < 0)   /* the installed path */
		snprintf(o.exe, sizeof(o.exe), "%s", argv[0]);
	if (o.resume_fd >= 0)
		upgrade_name(o.exe);
	conf_init(&conf);
	if (conf_load(&conf, o.conf_file, err, sizeof(err)) < 0)
		fprintf(stderr, "pptpd: %s\n", err);
	else if (apply_args(&conf, &o) < 0)
		;
	else if (check_args(&conf, &o, err, sizeof(err)) < 0 ||
	    check_peers(&conf, NULL, err, sizeof(err)) < 0)
		fprintf(stderr, "pptpd: %s\n", err);
	else if (o.handover_version && !conf.privsep)
		fprintf(stderr, "pptpd: privsep no: no hand-over (an upgrade's "
		    "sessions are held by the monitor)\n");
	else if (o.handover_version) {
		/* the configuration it would start with is good */
		printf("%d\n", HANDOVER_VERSION);
		rc = 0;
	} else {
		log_open("pptpd", 1, conf.debug);
		for (size_t i = 0; i < conf.nwarnings; i++)
			log_msg(LOG_WARNING, "%s", conf.warnings[i]);
		signal(SIGPIPE, SIG_IGN);
		if (nofile_fit(&conf, err, sizeof(err)) < 0) {
			log_msg(LOG_ERR, "%s", err);
			rc = EXIT_FAIL;
		} else
			rc = run(&conf, &o);
		log_close();
	}
	conf_free(&conf);
	return rc;
}
