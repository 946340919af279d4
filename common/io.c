/*
 * io: write all of a buffer, whatever the fd's mode; open a file to write
 * at a path a sandboxed command could have prepared; a path's real name.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"

static int	io_openat(int, const char *, int, mode_t);
static void	io_refuse(int, const char *, const char *, size_t, int, int,
		    char *, size_t);
static int	io_parent(const char *, unsigned int, size_t *, char *,
		    size_t);

int
io_write_all(int fd, const void *buf, size_t len, int stall_ms)
{
	const char	*p = buf;
	struct pollfd	 pfd;
	ssize_t		 n;
	int		 r;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			if ((errno != EAGAIN && errno != EWOULDBLOCK) ||
			    stall_ms == 0)
				return -1;
			pfd.fd = fd;
			pfd.events = POLLOUT;
			while ((r = poll(&pfd, 1, stall_ms)) == -1 &&
			    errno == EINTR)
				;
			if (r == -1)
				return -1;
			if (r == 0) {
				errno = ETIMEDOUT;
				return -1;
			}
			continue;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * One component opened without following a link: openat2's
 * RESOLVE_NO_SYMLINKS where the kernel has it, else O_NOFOLLOW (which
 * lets O_PATH open a link itself: the callers fstat what they got).
 */
static int
io_openat(int dfd, const char *name, int flags, mode_t mode)
{
	static int	 noopenat2;
	struct open_how	 how;
	int		 fd;

	if (!noopenat2) {
		memset(&how, 0, sizeof(how));
		how.flags = (uint64_t)(unsigned int)flags;
		how.mode = (flags & O_CREAT) ? mode : 0;
		how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
		if ((fd = (int)syscall(SYS_openat2, dfd, name, &how,
		    sizeof(how))) != -1 || errno != ENOSYS)
			return fd;
		noopenat2 = 1;
	}
	return openat(dfd, name, flags | O_NOFOLLOW, mode);
}

/*
 * Say in why why the component name of dfd (the first plen bytes of path)
 * was refused, err being what opening it said; errno set to the reason.
 */
static void
io_refuse(int dfd, const char *name, const char *path, size_t plen,
    int final, int err, char *why, size_t whylen)
{
	struct stat	st;
	int		len = plen > INT_MAX ? INT_MAX : (int)plen, found;

	found = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (found && S_ISLNK(st.st_mode)) {
		snprintf(why, whylen, "%.*s is a symbolic link, and pisbx "
		    "writes through none (the command could have planted "
		    "it): give the real path, as realpath(1) prints it",
		    len, path);
		err = ELOOP;
	} else if (final && (err == ENXIO || (found &&
	    !S_ISREG(st.st_mode)))) {
		snprintf(why, whylen, "%.*s is not a regular file (but a "
		    "directory, FIFO, device or socket): name a regular "
		    "file", len, path);
		err = EINVAL;
	} else if (!final && err == ENOTDIR)
		snprintf(why, whylen, "%.*s is not a directory", len, path);
	else
		snprintf(why, whylen, "%.*s: %s", len, path, strerror(err));
	errno = err;
}

/*
 * The directory path's last component is in, opened (O_PATH) one
 * component at a time from "/" or the working directory, none a link;
 * with IO_MKDIRS a missing one is made, 0700.  *base set to the offset of
 * the last component.  The fd, or -1 (errno and why set).
 */
static int
io_parent(const char *path, unsigned int how, size_t *base, char *why,
    size_t whylen)
{
	char		 comp[NAME_MAX + 1];
	const char	*p, *end, *last;
	struct stat	 st;
	size_t		 n;
	int		 dfd, nfd, err;

	last = strrchr(path, '/');
	if ((dfd = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) == -1) {
		err = errno;
		snprintf(why, whylen, "%s: %s", path[0] == '/' ? "/" :
		    "the working directory", strerror(err));
		errno = err;
		return -1;
	}
	for (p = path; last != NULL && p < last; p = end) {
		while (*p == '/')
			p++;
		if (p >= last)
			break;
		end = strchr(p, '/');
		if ((n = (size_t)(end - p)) > NAME_MAX) {
			err = ENAMETOOLONG;
			io_refuse(dfd, "", path, (size_t)(end - path), 0, err,
			    why, whylen);
			goto fail;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (strcmp(comp, ".") == 0)
			continue;
		nfd = io_openat(dfd, comp, O_PATH | O_DIRECTORY | O_CLOEXEC,
		    0);
		if (nfd == -1 && errno == ENOENT && (how & IO_MKDIRS)) {
			if (mkdirat(dfd, comp, 0700) == -1 && errno != EEXIST) {
				err = errno;
				snprintf(why, whylen, "cannot create the "
				    "directory %.*s: %s", (int)(end - path),
				    path, strerror(err));
				goto fail;
			}
			nfd = io_openat(dfd, comp, O_PATH | O_DIRECTORY |
			    O_CLOEXEC, 0);
		}
		err = nfd == -1 ? errno : 0;
		if (nfd != -1 && (fstat(nfd, &st) == -1 ||
		    !S_ISDIR(st.st_mode)))
			err = ENOTDIR;
		if (err != 0) {
			if (nfd != -1)
				close(nfd);
			io_refuse(dfd, comp, path, (size_t)(end - path), 0,
			    err, why, whylen);
			err = errno;
			goto fail;
		}
		close(dfd);
		dfd = nfd;
	}
	*base = last == NULL ? 0 : (size_t)(last - path) + 1;
	return dfd;
fail:
	close(dfd);
	errno = err;
	return -1;
}

/*
 * A file pisbx writes on the host at a path the command could reach is
 * opened as if the command had prepared the path: a link (final or in a
 * directory), a FIFO that would block the open until a reader comes, a
 * hard link to a file elsewhere, or another user's file in a sticky
 * directory like /tmp (what fs.protected_regular refuses, when it is on)
 * would each make pisbx write where the command chose.  The checks run
 * before anything is written or truncated.
 */
int
io_open_write(const char *path, int flags, mode_t mode, unsigned int how,
    char *why, size_t whylen)
{
	struct stat	 st, dst;
	const char	*base;
	size_t		 off;
	int		 dfd, fd = -1, fl, err;

	if ((dfd = io_parent(path, how, &off, why, whylen)) == -1)
		return -1;
	base = path + off;
	if (base[0] == '\0' || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0) {
		err = EISDIR;
		snprintf(why, whylen, "%s names a directory, not a file", path);
		goto fail;
	}
	/* Not even opened when it is not a file: a device's open acts. */
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISREG(st.st_mode)) {
		io_refuse(dfd, base, path, strlen(path), 1, EINVAL, why,
		    whylen);
		err = errno;
		goto fail;
	}
	if ((fd = io_openat(dfd, base, (flags & ~O_TRUNC) | O_NONBLOCK |
	    O_NOCTTY, mode)) == -1) {
		io_refuse(dfd, base, path, strlen(path), 1, errno, why, whylen);
		err = errno;
		goto fail;
	}
	if (fstat(fd, &st) == -1 || fstat(dfd, &dst) == -1) {
		err = errno;
		snprintf(why, whylen, "%s: %s", path, strerror(err));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = EINVAL;
		snprintf(why, whylen, "%s is not a regular file (but a "
		    "directory, FIFO, device or socket): name a regular "
		    "file", path);
		goto fail;
	}
	if (st.st_nlink > 1) {
		err = EMLINK;
		snprintf(why, whylen, "%s has %ju hard links: what pisbx "
		    "writes there would change another name's file too; "
		    "name a file with one link", path, (uintmax_t)st.st_nlink);
		goto fail;
	}
	if ((dst.st_mode & S_ISVTX) && (dst.st_mode & (S_IWGRP | S_IWOTH)) &&
	    st.st_uid != geteuid() && st.st_uid != dst.st_uid) {
		err = EACCES;
		snprintf(why, whylen, "%s belongs to uid %ju, in a sticky "
		    "directory others can write to: anyone could have put it "
		    "there; remove it, or name a file in a directory of your "
		    "own", path, (uintmax_t)st.st_uid);
		goto fail;
	}
	if ((flags & O_TRUNC) && ftruncate(fd, 0) == -1) {
		err = errno;
		snprintf(why, whylen, "%s: %s", path, strerror(err));
		goto fail;
	}
	if (!(flags & O_NONBLOCK) && ((fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1)) {
		err = errno;
		snprintf(why, whylen, "%s: %s", path, strerror(err));
		goto fail;
	}
	close(dfd);
	return fd;
fail:
	if (fd != -1)
		close(fd);
	close(dfd);
	errno = err;
	return -1;
}

char *
io_realpath(const char *path, char *real)
{
	char	 link[32];
	ssize_t	 n;
	int	 fd;

	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, real, PATH_MAX);
	close(fd);
	/*
	 * Not a path from the root (/proc missing, a file deleted meanwhile
	 * says " (deleted)", one outside our root is not absolute): the
	 * slow way, which says what is wrong.
	 */
	if (n <= 0 || n >= PATH_MAX || real[0] != '/' ||
	    (n > 10 && memcmp(real + n - 10, " (deleted)", 10) == 0))
		return realpath(path, real);
	real[n] = '\0';
	return real;
}
