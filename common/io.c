/*
 * io: write all of a buffer, whatever the fd's mode.
 */
#include <errno.h>
#include <poll.h>
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
