/*
 * io: write all of a buffer, whatever the fd's mode; make a file's
 * missing directories.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"

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

int
io_mkdir_parents(const char *path, mode_t mode, char *failed,
    size_t failedlen)
{
	char		 buf[PATH_MAX], *slash, *last;
	struct stat	 st;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf)) {
		snprintf(failed, failedlen, "%s", path);
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((last = strrchr(buf, '/')) == NULL || last == buf)
		return 0;
	*last = '\0';
	if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	*last = '/';
	for (slash = buf + 1; slash <= last; slash++) {
		if (*slash != '/')
			continue;
		*slash = '\0';
		if (mkdir(buf, mode) == -1 && errno != EEXIST) {
			snprintf(failed, failedlen, "%s", buf);
			return -1;
		}
		*slash = '/';
	}
	return 0;
}
