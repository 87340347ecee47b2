/* Strings that come from outside (a peer's host name, a user name from a
 * plugin report, a token of a config file) end up in logs and on
 * terminals: only printable ASCII goes through, so a newline cannot forge
 * a log line and an escape sequence cannot drive a terminal. */
#ifndef COMMON_STRCLEAN_H
#define COMMON_STRCLEAN_H

#include <stddef.h>

#define STRCLEAN_SUBST '?'   /* stands in for every byte not printable */
#define STRCLEAN_MORE  "..." /* marks a quote cut at `maxshow` */

/* Is `c` printable ASCII (0x20..0x7e)? */
static inline int
str_printable(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

/* Copy at most `srclen` bytes of `src` (stopping at a NUL) into `dst` of
 * `dstlen` (> 0) bytes, NUL-terminated, each non-printable byte replaced by
 * STRCLEAN_SUBST. With `maxshow` > 0, at most that many characters are
 * shown and a longer input ends in STRCLEAN_MORE. Returns `dst`. */
char *str_clean(char *dst, size_t dstlen, const char *src, size_t srclen,
    size_t maxshow);

/* The same in place, up to the NUL: for a value already in our buffer. */
void str_clean_inplace(char *s);

#endif
