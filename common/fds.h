/* fds.h -- closing every descriptor but a few: what the monitor keeps
 * after its fork, and what a program started by an upgrade keeps of the
 * one before it. */
#ifndef COMMON_FDS_H
#define COMMON_FDS_H

#include <stddef.h>

/* Close every descriptor from 3 up except the `n` in `keep` (-1s are
 * skipped; `keep` is sorted in place). */
void fds_close_except(int *keep, size_t n);

#endif
