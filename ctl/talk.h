/* pptpctl's side of one exchange with pptpd over its control socket
 * (proto/ctl.h): connect, send the request line, read the answer until
 * pptpd closes. Shared by pptpctl.c and upwait.c. */
#ifndef CTL_TALK_H
#define CTL_TALK_H

#include <stddef.h>
#include <stdint.h>

/* pptpctl's exit statuses (pptpctl(8)), for scripts. */
#define EXIT_NOMATCH      1   /* no such session, nothing matched */
#define EXIT_USAGE        2
#define EXIT_NOT_RUNNING  3   /* no socket, nobody listening on it, or
                               * pptpd exited during upgrade --wait */
#define EXIT_ERROR        4   /* anything else (a reload refused, ...) */
#define EXIT_UNSUPPORTED  5   /* the daemon knows the request, cannot yet */

#define TALK_TIMEOUT_MS   10000   /* for an answer */

/* CLOCK_MONOTONIC in ms, for deadlines. */
int64_t talk_now_ms(void);

/* Connected to `path`: the descriptor, or minus an exit status. `quiet`:
 * no message at all, for polling. */
int talk_connect(const char *path, int quiet);

/* Send `req` (`n` bytes) and read the whole answer within `timeout_ms`:
 * the answer, NUL-terminated, its length in *lenp; NULL on error
 * (reported unless `quiet`). */
char *talk_exchange(int fd, const char *req, size_t n, size_t *lenp,
    int timeout_ms, int quiet);

#endif
