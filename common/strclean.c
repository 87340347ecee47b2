#include "common/strclean.h"

#include <string.h>

char *
str_clean(char *dst, size_t dstlen, const char *src, size_t srclen,
    size_t maxshow)
{
	size_t more = sizeof(STRCLEAN_MORE) - 1;
	size_t i = 0, o = 0;

	/* room for the marker and the NUL */
	if (maxshow == 0 || maxshow > dstlen - 1)
		maxshow = dstlen - 1;
	for (; i < srclen && src[i] != '\0' && o < maxshow; i++)
		dst[o++] = str_printable((unsigned char)src[i]) ?
		    src[i] : STRCLEAN_SUBST;
	if (i < srclen && src[i] != '\0' && o + more < dstlen) {
		memcpy(dst + o, STRCLEAN_MORE, more);
		o += more;
	}
	dst[o] = '\0';
	return dst;
}

void
str_clean_inplace(char *s)
{
	for (; *s != '\0'; s++)
		if (!str_printable((unsigned char)*s))
			*s = STRCLEAN_SUBST;
}
