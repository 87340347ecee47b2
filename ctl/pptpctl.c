/* pptpctl: ask a running pptpd over its control socket (pptpd/ctl.h) and
 * print the answer. The exit status says what happened, for scripts:
 * pptpctl(8). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/ctl.h"
#include "common/strclean.h"
#include "pptpd/version.h"

#define EXIT_NOMATCH      1   /* no such session, nothing matched */
#define EXIT_USAGE        2
#define EXIT_NOT_RUNNING  3   /* no socket, or nobody listening on it */
#define EXIT_ERROR        4   /* anything else (a reload refused, ...) */
#define EXIT_UNSUPPORTED  5   /* the daemon knows the request, cannot yet */

#define PPTPCTL_TIMEOUT_MS 10000

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: pptpctl [-s socket] command\n"
	    "  status                      version, uptime, connections, calls, pool, limits\n"
	    "  sessions [--json]           every session, one line (or JSON object) each\n"
	    "  show ID [--json]            one session in detail (ID: our Call ID)\n"
	    "  kill ID                     hang up that session cleanly\n"
	    "  kill user NAME              hang up every session of that user\n"
	    "  kill address ADDR           ... of that client or tunnel address\n"
	    "  reload                      re-read pptpd.conf; nothing is dropped\n"
	    "  upgrade                     the installed pptpd takes over; nothing is dropped\n"
	    "  metrics                     (not supported yet)\n"
	    "  -s PATH  the daemon's control socket (default %s)\n"
	    "exit: 0 ok, 1 no such session, 2 usage, 3 pptpd not running, 4 error,\n"
	    "      5 not supported by this pptpd\n", CTL_SOCK_PATH);
}

/* An argument goes on the request line as it is: one line of printable
 * text, so it can neither end the request nor add to it. */
static int
arg_ok(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s; s++)
		if (!str_printable((unsigned char)*s))
			return 0;
	return 1;
}

static int
is_json(const char *s)
{
	return strcmp(s, "--json") == 0 || strcmp(s, "-j") == 0;
}

/* The request line for argv, or NULL (usage error, reported). */
static int
build_request(int argc, char **argv, char *req, size_t len)
{
	const char *cmd = argc > 0 ? argv[0] : "";
	int n = -1;

	for (int i = 0; i < argc; i++)
		if (!arg_ok(argv[i])) {
			fprintf(stderr, "pptpctl: argument %d: empty or not printable "
			    "text\n", i + 1);
			return -1;
		}
	if ((strcmp(cmd, "status") == 0 || strcmp(cmd, "reload") == 0 ||
	    strcmp(cmd, "upgrade") == 0 || strcmp(cmd, "metrics") == 0) &&
	    argc == 1)
		n = snprintf(req, len, "%s\n", cmd);
	else if (strcmp(cmd, "sessions") == 0 && argc == 1)
		n = snprintf(req, len, "sessions\n");
	else if (strcmp(cmd, "sessions") == 0 && argc == 2 && is_json(argv[1]))
		n = snprintf(req, len, "sessions json\n");
	else if (strcmp(cmd, "show") == 0 && argc == 2)
		n = snprintf(req, len, "show %s\n", argv[1]);
	else if (strcmp(cmd, "show") == 0 && argc == 3 && is_json(argv[2]))
		n = snprintf(req, len, "show %s json\n", argv[1]);
	else if (strcmp(cmd, "kill") == 0 && argc == 2)
		n = snprintf(req, len, "kill id %s\n", argv[1]);
	else if (strcmp(cmd, "kill") == 0 && argc == 3 &&
	    (strcmp(argv[1], "user") == 0 || strcmp(argv[1], "address") == 0 ||
	    strcmp(argv[1], "id") == 0))
		n = snprintf(req, len, "kill %s %s\n", argv[1], argv[2]);
	else {
		usage(stderr);
		return -1;
	}
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "pptpctl: request too long\n");
		return -1;
	}
	return n;
}

static int
connect_daemon(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "pptpctl: %s: path too long\n", path);
		return -EXIT_USAGE;
	}
	strcpy(sun.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "pptpctl: socket: %s\n", strerror(errno));
		return -EXIT_ERROR;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0)
		return fd;
	int e = errno;
	close(fd);
	if (e == ENOENT || e == ECONNREFUSED) {
		fprintf(stderr, "pptpctl: pptpd is not running (%s: %s)\n", path,
		    strerror(e));
		return -EXIT_NOT_RUNNING;
	}
	if (e == EACCES || e == EPERM)
		fprintf(stderr, "pptpctl: %s: %s (only root may ask pptpd)\n", path,
		    strerror(e));
	else
		fprintf(stderr, "pptpctl: %s: %s\n", path, strerror(e));
	return -EXIT_ERROR;
}

/* Everything the daemon says until it closes; NULL on error (reported). */
static char *
read_answer(int fd, size_t *lenp)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	while (buf != NULL) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, PPTPCTL_TIMEOUT_MS);
		if (r == 0) {
			fprintf(stderr, "pptpctl: no answer from pptpd within %d s\n",
			    PPTPCTL_TIMEOUT_MS / 1000);
			break;
		}
		ssize_t n = r < 0 ? -1 : read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "pptpctl: read: %s\n", strerror(errno));
			break;
		}
		if (n == 0) {
			buf[len] = '\0';
			*lenp = len;
			return buf;
		}
		len += (size_t)n;
		if (cap - len < 2) {
			char *nb = realloc(buf, cap * 2);
			if (nb == NULL)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	if (buf == NULL)
		fprintf(stderr, "pptpctl: out of memory\n");
	free(buf);
	return NULL;
}

static int
exit_for(const char *code)
{
	if (strcmp(code, CTL_ERR_NOMATCH) == 0)
		return EXIT_NOMATCH;
	if (strcmp(code, CTL_ERR_USAGE) == 0)
		return EXIT_USAGE;
	if (strcmp(code, CTL_ERR_UNSUPPORTED) == 0)
		return EXIT_UNSUPPORTED;
	return EXIT_ERROR;
}

/* "ok\n" and the body, or "error CODE message\n". */
static int
print_answer(const char *ans, size_t len)
{
	const char *nl = memchr(ans, '\n', len);
	if (nl == NULL) {
		fprintf(stderr, "pptpctl: pptpd gave no complete answer\n");
		return EXIT_ERROR;
	}
	if (nl - ans == 2 && strncmp(ans, "ok", 2) == 0) {
		fwrite(nl + 1, 1, len - (size_t)(nl + 1 - ans), stdout);
		return fflush(stdout) == 0 ? 0 : EXIT_ERROR;
	}
	if (strncmp(ans, "error ", 6) == 0) {
		char code[32];
		const char *p = ans + 6, *sp = memchr(p, ' ', (size_t)(nl - p));
		size_t n = (size_t)((sp ? sp : nl) - p);
		snprintf(code, sizeof(code), "%.*s", (int)n, p);
		fprintf(stderr, "pptpctl: %.*s\n", (int)(nl - (sp ? sp + 1 : p)),
		    sp ? sp + 1 : p);
		return exit_for(code);
	}
	fprintf(stderr, "pptpctl: pptpd gave an answer not understood\n");
	return EXIT_ERROR;
}

int
main(int argc, char **argv)
{
	const char *path = CTL_SOCK_PATH;
	char req[CTL_REQ_MAX + 1];
	int ch;

	while ((ch = getopt(argc, argv, "+hs:V")) != -1) {
		switch (ch) {
		case 's': path = optarg; break;
		case 'V':
			printf("pptpctl %s\n", PPTPD_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	int n = build_request(argc - optind, argv + optind, req, sizeof(req));
	if (n < 0)
		return EXIT_USAGE;
	int fd = connect_daemon(path);
	if (fd < 0)
		return -fd;
	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
		fprintf(stderr, "pptpctl: send: %s\n", strerror(errno));
		close(fd);
		return EXIT_ERROR;
	}
	size_t len = 0;
	char *ans = read_answer(fd, &len);
	close(fd);
	if (ans == NULL)
		return EXIT_ERROR;
	int rc = print_answer(ans, len);
	free(ans);
	return rc;
}
