/* The file a process runs, as /proc names it: readlink of /proc/PID/exe
 * without the " (deleted)" the kernel appends once the file was replaced
 * (a package renames a new file over it). The daemon asks it of itself for
 * an upgrade; pptpctl of the daemon, to see the upgrade happen. */
#ifndef COMMON_PROCEXE_H
#define COMMON_PROCEXE_H

#include <limits.h>
#include <sys/types.h>

/* pid 0: this process. 0, or -1 with errno set. */
int proc_exe_path(pid_t pid, char path[PATH_MAX]);

#endif
