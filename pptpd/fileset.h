/*
 * fileset.h -- the files a reload reads, held by descriptor.
 *
 * Under privsep the worker runs as an unprivileged user, which may not
 * open root's 0600 files (the peers file, the DAE clients' and RADIUS'
 * secrets). So at a reload the monitor reads the configuration as a
 * reload does, through a recording set that keeps a descriptor of every
 * file the loaders open; it hands them to the worker (proto/monitor.h's
 * FILE records), whose loaders then open the same paths from a replaying
 * set. Parsing stays the worker's; the monitor only opens.
 *
 * A loader opens through fileset_open(): with no set (NULL) it opens the
 * path itself, as it always did.
 */
#ifndef PPTPD_FILESET_H
#define PPTPD_FILESET_H

#include <stddef.h>

#define FILESET_MAX 16     /* pptpd.conf and what it names: a handful */

enum fileset_mode {
	FILESET_RECORD,    /* open for real, keep a copy */
	FILESET_REPLAY,    /* open only what was handed in */
};

struct fileset;

/* NULL when out of memory. */
struct fileset *fileset_new(enum fileset_mode mode);
void fileset_free(struct fileset *fs);

/* Open `path` for reading, as open(path, flags) would. A recording set
 * keeps a copy, and refuses a file that is not regular (ESPIPE: it could
 * not be read again from its start); a replaying set answers with the
 * descriptor handed in for the same path, read from its start, or ENOENT
 * when the monitor handed none. The same path twice is the same file
 * both times. Returns a descriptor the caller closes, or -1 with errno. */
int fileset_open(struct fileset *fs, const char *path, int flags);

/* Replaying: `fd` is `path`'s, and the set's from now on (closed by
 * fileset_free, or here on failure). 0, or -1 with errno (ENOMEM, or
 * E2BIG past FILESET_MAX). */
int fileset_add(struct fileset *fs, const char *path, int fd);

size_t fileset_count(const struct fileset *fs);
const char *fileset_path(const struct fileset *fs, size_t i);
int fileset_fd(const struct fileset *fs, size_t i);

#endif
