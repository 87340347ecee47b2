/* See fds.h. */
#include <stdlib.h>
#include <unistd.h>

#include "common/fds.h"

static int
fds_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

void
fds_close_except(int *keep, size_t n)
{
	unsigned from = 3;

	qsort(keep, n, sizeof(*keep), fds_cmp);   /* closed between, in order */
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < 0 || (unsigned)keep[i] < from)
			continue;
		if ((unsigned)keep[i] > from)
			close_range(from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	close_range(from, ~0U, 0);
}
