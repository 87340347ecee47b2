/* The files a reload reads, held by descriptor: see fileset.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pptpd/fileset.h"

struct fileset_file {
	char *path;
	int   fd;
};

struct fileset {
	enum fileset_mode   mode;
	struct fileset_file v[FILESET_MAX];
	size_t              n;
};

struct fileset *
fileset_new(enum fileset_mode mode)
{
	struct fileset *fs = calloc(1, sizeof(*fs));
	if (fs != NULL)
		fs->mode = mode;
	return fs;
}

void
fileset_free(struct fileset *fs)
{
	if (fs == NULL)
		return;
	for (size_t i = 0; i < fs->n; i++) {
		free(fs->v[i].path);
		close(fs->v[i].fd);
	}
	free(fs);
}

static const struct fileset_file *
fileset_find(const struct fileset *fs, const char *path)
{
	for (size_t i = 0; i < fs->n; i++)
		if (strcmp(fs->v[i].path, path) == 0)
			return &fs->v[i];
	return NULL;
}

int
fileset_add(struct fileset *fs, const char *path, int fd)
{
	char *p = NULL;

	if (fs->n == FILESET_MAX)
		errno = E2BIG;
	else if ((p = strdup(path)) != NULL) {
		fs->v[fs->n++] = (struct fileset_file){ p, fd };
		return 0;
	}
	close(fd);
	return -1;
}

/* A copy of the held file, from its start (the copy shares the offset
 * with every other, and a loader reads one file at a time). */
static int
fileset_dup(const struct fileset_file *f)
{
	int fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	if (fd >= 0 && lseek(fd, 0, SEEK_SET) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int
fileset_record(struct fileset *fs, const char *path, int flags)
{
	struct stat st;
	int fd = open(path, flags | O_CLOEXEC), keep;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = ESPIPE;
		return -1;
	}
	if ((keep = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0 ||
	    fileset_add(fs, path, keep) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int
fileset_open(struct fileset *fs, const char *path, int flags)
{
	const struct fileset_file *f;

	if (fs == NULL)
		return open(path, flags | O_CLOEXEC);
	if ((f = fileset_find(fs, path)) != NULL)
		return fileset_dup(f);
	if (fs->mode == FILESET_RECORD)
		return fileset_record(fs, path, flags);
	errno = ENOENT;
	return -1;
}

size_t
fileset_count(const struct fileset *fs)
{
	return fs == NULL ? 0 : fs->n;
}

const char *
fileset_path(const struct fileset *fs, size_t i)
{
	return fs->v[i].path;
}

int
fileset_fd(const struct fileset *fs, size_t i)
{
	return fs->v[i].fd;
}
