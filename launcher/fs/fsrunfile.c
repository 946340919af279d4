/*
 * The run directory's files, in memory until the sandbox writes them
 * (fs.h).  Made on the host's disk, each run would create and remove
 * some ten inodes there; on the sandbox's own tmpfs they cost a page
 * each and vanish with its mount namespace.
 *
 * Their contents go into one memfd as they are made, not into buffers
 * kept on the heap: the kernel copies them (write, sendfile) and no page
 * of ours is touched for them.  A page fault costs more than the copy,
 * on a VM above all, and a heap kept larger faults in the parent, in the
 * sandbox's copy of it, and in every allocation after.
 */
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"
#include "launcher/fs/fs.h"

#define FS_RUNFILE_PAGE	4096	/* tmpfs charges whole pages */

static char	*fs_runfile_new(struct fs_runfiles *, const char *, int,
		    mode_t, off_t, size_t);
static int	 fs_runfile_copy(int in, off_t off, int out, size_t len);
static int	 fs_runfile_mem(struct fs_runfiles *);

/* Record a file of len octets at off in the memfd: its path, or NULL. */
static char *
fs_runfile_new(struct fs_runfiles *f, const char *name, int unique,
    mode_t mode, off_t off, size_t len)
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
	if (rc == -1)
		return NULL;
	if (asprintf(&path, "%s/%s", f->dir, e->name) == -1) {
		free(e->name);
		return NULL;
	}
	e->off = off;
	e->len = len;
	e->mode = mode;
	f->n++;
	f->end = off + (off_t)len;
	return path;
}

/* len octets of in from off to out's offset, by the kernel.  0, or -1. */
static int
fs_runfile_copy(int in, off_t off, int out, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		if ((n = sendfile(out, in, &off, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		len -= (size_t)n;
	}
	return 0;
}

/* The memfd, made with the first file, at the end of what it holds. */
static int
fs_runfile_mem(struct fs_runfiles *f)
{
	if (!f->mem) {
		if ((f->fd = memfd_create("pisbx-rundir", MFD_CLOEXEC)) == -1)
			return -1;
		f->mem = 1;
	}
	return lseek(f->fd, f->end, SEEK_SET) == -1 ? -1 : 0;
}

char *
fs_runfile_add(struct fs_runfiles *f, const char *name, int unique,
    mode_t mode, const void *data, size_t len)
{
	if (fs_runfile_mem(f) == -1 ||
	    (len > 0 && io_write_all(f->fd, data, len, 0) == -1))
		return NULL;
	return fs_runfile_new(f, name, unique, mode, f->end, len);
}

/* A memfd takes a whole writev: no short count to go on from. */
char *
fs_runfile_addv(struct fs_runfiles *f, const char *name, mode_t mode,
    const struct iovec *iov, int n)
{
	ssize_t	w;
	size_t	len = 0;
	int	i;

	for (i = 0; i < n; i++)
		len += iov[i].iov_len;
	if (fs_runfile_mem(f) == -1)
		return NULL;
	while ((w = writev(f->fd, iov, n)) == -1 && errno == EINTR)
		;
	if (w == -1)
		return NULL;
	if ((size_t)w != len) {
		errno = EIO;
		return NULL;
	}
	return fs_runfile_new(f, name, 0, mode, f->end, len);
}

char *
fs_runfile_add_fd(struct fs_runfiles *f, const char *name, mode_t mode,
    int fd)
{
	struct stat	st;

	if (fstat(fd, &st) == -1 || fs_runfile_mem(f) == -1 ||
	    fs_runfile_copy(fd, 0, f->fd, (size_t)st.st_size) == -1)
		return NULL;
	return fs_runfile_new(f, name, 0, mode, f->end, (size_t)st.st_size);
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
		if (fs_runfile_copy(f->fd, e->off, fd, e->len) == -1 ||
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

	for (i = 0; i < f->n; i++)
		free(f->v[i].name);
	free(f->v);
	f->v = NULL;
	f->n = 0;
	if (f->mem)
		close(f->fd);
	f->mem = 0;
	f->end = 0;
}
