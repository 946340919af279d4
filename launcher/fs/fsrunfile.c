/*
 * The run directory's files, in memory until the sandbox writes them
 * (fs.h).  Made on the host's disk, each run would create and remove
 * some ten inodes there; on the sandbox's own tmpfs they cost a page
 * each and vanish with its mount namespace.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"
#include "launcher/fs/fs.h"

#define FS_RUNFILE_PAGE	4096	/* tmpfs charges whole pages */

char *
fs_runfile_add(struct fs_runfiles *f, const char *name, int unique,
    mode_t mode, const void *data, size_t len)
{
	struct fs_runfile	*nv, *e;
	char			*path = NULL;
	int			 rc;

	if ((nv = reallocarray(f->v, f->n + 1, sizeof(*nv))) == NULL)
		return NULL;
	f->v = nv;
	e = &nv[f->n];
	memset(e, 0, sizeof(*e));
	rc = unique ? asprintf(&e->name, "%s.%zu", name, f->n) :
	    asprintf(&e->name, "%s", name);
	if (rc == -1) {
		e->name = NULL;
		return NULL;
	}
	if ((e->data = malloc(len + 1)) == NULL ||
	    asprintf(&path, "%s/%s", f->dir, e->name) == -1) {
		free(e->data);
		free(e->name);
		return NULL;
	}
	if (len > 0)
		memcpy(e->data, data, len);
	e->len = len;
	e->mode = mode;
	f->n++;
	return path;
}

size_t
fs_runfiles_size(const struct fs_runfiles *f)
{
	size_t	i, size = 0;

	for (i = 0; i < f->n; i++)
		size += (f->v[i].len + FS_RUNFILE_PAGE - 1) / FS_RUNFILE_PAGE *
		    FS_RUNFILE_PAGE;
	return size;
}

/*
 * The mode is set on the descriptor: the caller's umask would take the
 * execute bits of git-proxy, or the read bits every client needs.
 */
int
fs_runfiles_write(int dfd, const struct fs_runfiles *f, const char **failed)
{
	const struct fs_runfile	*e;
	size_t			 i;
	int			 fd;

	for (i = 0; i < f->n; i++) {
		e = &f->v[i];
		*failed = e->name;
		if ((fd = openat(dfd, e->name, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0600)) == -1)
			return -1;
		if (io_write_all(fd, e->data, e->len, 0) == -1 ||
		    fchmod(fd, e->mode) == -1) {
			close(fd);
			return -1;
		}
		if (close(fd) == -1)
			return -1;
	}
	*failed = NULL;
	return 0;
}

void
fs_runfiles_clear(struct fs_runfiles *f)
{
	size_t	i;

	for (i = 0; i < f->n; i++) {
		free(f->v[i].name);
		free(f->v[i].data);
	}
	free(f->v);
	f->v = NULL;
	f->n = 0;
}
