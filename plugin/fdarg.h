/* A descriptor number pptpd passed to pppd on its command line (the
 * plugin's *-fd options): decimal digits only, above stderr. */
#ifndef PLUGIN_FDARG_H
#define PLUGIN_FDARG_H

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

/* The descriptor, or -1 when s is not a decimal number above 2. */
static inline int
fd_arg_parse(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s < '0' || *s > '9' || errno != 0 || *end != '\0' ||
	    v <= STDERR_FILENO || v > INT_MAX)
		return -1;
	return (int)v;
}

#endif
