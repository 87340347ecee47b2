/* The control socket: pptpctl(8) asks a running daemon for its status and
 * sessions, or to hang up a session. A UNIX stream socket in CTL_DIR
 * (root only: the directory is 0700, the socket 0600, and the peer's
 * SO_PEERCRED uid must be 0). One exchange per connection:
 *
 *   request:  one line, at most CTL_REQ_MAX bytes, ended by '\n'
 *   answer:   "ok\n" and the text, or "error CODE message\n"; then close
 *
 * Shared by the daemon (pptpd/ctl.c) and ctl/pptpctl.c. */
#ifndef PROTO_CTL_H
#define PROTO_CTL_H

/* pptpd's run-time directory: root's alone (0700), created if missing. */
#define CTL_DIR        "/run/pptpd"
#define CTL_SOCK_PATH  CTL_DIR "/ctl.sock"
#define CTL_REQ_MAX    512   /* "kill user " and a 255-octet name */

/* The CODE of an error answer; pptpctl maps each to its exit status. */
#define CTL_ERR_NOMATCH      "no-such-session"   /* nothing matched */
#define CTL_ERR_USAGE        "bad-request"       /* unknown or malformed */
#define CTL_ERR_UNSUPPORTED  "not-supported"     /* known, not there yet */
#define CTL_ERR_DENIED       "denied"            /* not root */
#define CTL_ERR_BUSY         "busy"              /* too many at once */
#define CTL_ERR_INTERNAL     "internal"          /* out of memory */
#define CTL_ERR_REFUSED      "refused"           /* reload: bad configuration */

#endif
