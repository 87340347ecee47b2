/* The worker's seccomp allow-list: see sandbox.h. */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#include "pptpd/sandbox.h"

/* By name, so one list serves every architecture libseccomp knows; a name
 * an architecture lacks (e.g. an old call) is skipped. */
static const char *const sandbox_calls[] = {
	/* descriptors and their I/O; getdents64: the metrics count the open
	 * descriptors in /proc/self/fd */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "lseek",
	"close", "close_range", "dup", "dup2", "dup3", "fcntl", "ioctl",
	"fstat", "newfstatat", "statx", "openat", "getdents64", "pipe2",
	"eventfd2",
	/* pptpctl's socket at the end (the directory is root's: refused,
	 * and the monitor removes it) */
	"unlink", "unlinkat",
	/* the event loop (libmicrohttpd's too: external epoll, no thread) */
	"epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
	"epoll_pwait2", "poll", "ppoll",
	"timerfd_create", "timerfd_settime", "timerfd_gettime",
	"signalfd4", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn",
	"restart_syscall",
	/* sockets (socket() itself by family, below) */
	"connect", "bind", "listen", "accept", "accept4", "getsockname",
	"getpeername", "getsockopt", "setsockopt", "shutdown", "socketpair",
	"recvfrom", "recvmsg", "recvmmsg", "sendto", "sendmsg", "sendmmsg",
	/* memory, time, randomness */
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "futex",
	"clock_gettime", "clock_nanosleep", "nanosleep", "gettimeofday",
	"getrandom",
	/* the process: its ids, limits (a reload's RLIMIT_NOFILE), its CPU
	 * time (the metrics), its end (abort() signals itself) */
	"getpid", "gettid", "getuid", "geteuid", "getgid", "getegid",
	"getrlimit", "setrlimit", "prlimit64", "getrusage", "uname",
	"tgkill", "exit", "exit_group",
	/* glibc's own: qsort asks sysconf(_SC_PHYS_PAGES) (sysinfo) once it
	 * sorts a kilobyte (a reload's pool or peers file); time() without
	 * a vDSO; the reap a stray SIGCHLD asks for (no child: ECHILD) */
	"sysinfo", "time", "wait4", "waitid",
};

/* A build with AddressSanitizer (SANITIZE=1, tests only) also runs its
 * runtime in the worker: signal stacks, and at exit LeakSanitizer, which
 * stops the process's threads from a tracer thread of its own. */
#if defined(__SANITIZE_ADDRESS__)
static const char *const sandbox_sanitizer_calls[] = {
	"sigaltstack", "clone", "clone3", "ptrace", "wait4", "waitid",
	"prctl", "getppid", "sched_getaffinity", "sched_yield", "readlink",
	"readlinkat", "set_robust_list", "rseq", "kill", "open", "stat", "getdents", NULL,
};
#else
static const char *const sandbox_sanitizer_calls[] = { NULL };
#endif

static const int sandbox_families[] = { AF_UNIX, AF_INET, AF_INET6 };

/* getaddrinfo (radius-config-file's servers, at a reload) sorts two
 * answers or more by the host's addresses, which glibc reads over a
 * NETLINK_ROUTE socket. One the worker opens has its rights, none: the
 * kernel checks a request that changes anything against the socket
 * opener's capabilities. No other netlink family. */

static int
sandbox_allow(scmp_filter_ctx ctx, const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return 0;   /* not on this architecture */
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
}

static int
sandbox_rules(scmp_filter_ctx ctx, const char **what)
{
	for (size_t i = 0; i < sizeof(sandbox_calls) / sizeof(sandbox_calls[0]);
	    i++)
		if (sandbox_allow(ctx, sandbox_calls[i]) < 0) {
			*what = sandbox_calls[i];
			return -1;
		}
	for (size_t i = 0; sandbox_sanitizer_calls[i] != NULL; i++)
		if (sandbox_allow(ctx, sandbox_sanitizer_calls[i]) < 0) {
			*what = sandbox_sanitizer_calls[i];
			return -1;
		}
	for (size_t i = 0; i < sizeof(sandbox_families) /
	    sizeof(sandbox_families[0]); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
		    SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)sandbox_families[i])) < 0) {
			*what = "socket";
			return -1;
		}
	if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2,
	    SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)AF_NETLINK),
	    SCMP_A2(SCMP_CMP_EQ, (scmp_datum_t)NETLINK_ROUTE)) < 0) {
		*what = "socket";
		return -1;
	}
	return 0;
}

int
sandbox_enter(char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	const char *what = "seccomp_init";
	int rc = -1;

	if (ctx != NULL && sandbox_rules(ctx, &what) == 0) {
		what = "seccomp_load";
		rc = seccomp_load(ctx);
	}
	if (ctx != NULL)
		seccomp_release(ctx);
	if (rc == 0)
		return 0;
	snprintf(err, errlen, "worker: the seccomp filter: %s failed%s%s", what,
	    rc < 0 ? ": " : "", rc < 0 ? strerror(-rc) : "");
	return -1;
}
