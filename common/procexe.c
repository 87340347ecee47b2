#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/procexe.h"

#define PROC_DELETED " (deleted)"   /* the kernel's mark, d_path() */

int
proc_exe_path(pid_t pid, char path[PATH_MAX])
{
	char link[64];
	size_t k = strlen(PROC_DELETED);

	if (pid == 0)
		snprintf(link, sizeof(link), "/proc/self/exe");
	else
		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, path, PATH_MAX - 1);
	if (n <= 0)
		return -1;
	path[n] = '\0';
	if ((size_t)n > k && strcmp(path + n - k, PROC_DELETED) == 0)
		path[n - k] = '\0';
	return 0;
}
