/* pptpctl: ask a running pptpd over its control socket (pptpd/ctl.h) and
 * print the answer. The exit status says what happened, for scripts:
 * pptpctl(8). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strclean.h"
#include "ctl/talk.h"
#include "ctl/upwait.h"
#include "pptpd/version.h"
#include "proto/ctl.h"

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
	    "  upgrade [--wait]            the installed pptpd takes over; nothing is dropped\n"
	    "                              (--wait: until it has, or say why not)\n"
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

/* The request line for argv: its length, or -1 (usage error, reported).
 * *wait: upgrade --wait. */
static int
build_request(int argc, char **argv, char *req, size_t len, int *wait)
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
	else if (strcmp(cmd, "upgrade") == 0 && argc == 2 &&
	    strcmp(argv[1], "--wait") == 0) {
		*wait = 1;   /* the waiting is ours: upwait.h */
		n = snprintf(req, len, "upgrade\n");
	}
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
	int wait = 0;
	int n = build_request(argc - optind, argv + optind, req, sizeof(req),
	    &wait);
	if (n < 0)
		return EXIT_USAGE;
	int fd = talk_connect(path, 0);
	if (fd < 0)
		return -fd;
	struct upwait *w = wait ? upwait_new(fd, path) : NULL;
	if (wait && w == NULL) {
		close(fd);
		return EXIT_ERROR;
	}
	size_t len = 0;
	char *ans = talk_exchange(fd, req, (size_t)n, &len, TALK_TIMEOUT_MS, 0);
	close(fd);
	int rc = ans != NULL ? print_answer(ans, len) : EXIT_ERROR;
	free(ans);
	if (rc == 0 && w != NULL)
		rc = upwait_run(w);
	upwait_free(w);
	return rc;
}
