/*
 * io: the write-everything loop and the safe open of a file to write,
 * once.
 */
#ifndef PISBX_IO_H
#define PISBX_IO_H

#include <sys/types.h>

#include <stddef.h>

/*
 * Write all len bytes of buf to fd, again after EINTR.  On a non-blocking
 * fd that is full, wait up to stall_ms for room each time (0: fail at
 * once, with EAGAIN).  0, or -1 with errno set (ETIMEDOUT after a stall).
 */
int	io_write_all(int fd, const void *buf, size_t len, int stall_ms);
/* io_open_write: make the directories missing above the file (0700). */
#define IO_MKDIRS	0x1

/*
 * Open the regular file at path (relative to the working directory when
 * not absolute) for writing, as a file a sandboxed command could have
 * prepared: no symbolic link in any component, never a FIFO, device or
 * socket (and never blocked on one), never a file with more than one
 * link, nor one another user owns in a sticky directory others can write
 * to; missing directories made only through directories (IO_MKDIRS).
 * flags as open(2)'s; O_TRUNC truncates only after every check.  The fd,
 * or -1 with errno set and a sentence naming the path in why.
 */
int	io_open_write(const char *path, int flags, mode_t mode,
	    unsigned int how, char *why, size_t whylen);

/*
 * realpath(3) of path into real (PATH_MAX octets) in three system calls
 * whatever its depth: the kernel resolves it once (an O_PATH open) and
 * names what it reached (/proc/self/fd), where realpath(3) asks for
 * every component's link.  Falls back to realpath(3) when /proc cannot
 * say.  real, or NULL with errno set.
 */
char	*io_realpath(const char *path, char *real);

#endif
