/*
 * io: the write-everything loop and mkdir -p, once.
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
/*
 * Create the directories missing above the file path (an absolute path),
 * each with mode, as mkdir -p of its directory would.  0, or -1 with
 * errno set and the directory it could not make (or reach) in failed.
 */
int	io_mkdir_parents(const char *path, mode_t mode, char *failed,
	    size_t failedlen);

#endif
