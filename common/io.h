/*
 * io: the write-everything loop, once.
 */
#ifndef PISBX_IO_H
#define PISBX_IO_H

#include <stddef.h>

/*
 * Write all len bytes of buf to fd, again after EINTR.  On a non-blocking
 * fd that is full, wait up to stall_ms for room each time (0: fail at
 * once, with EAGAIN).  0, or -1 with errno set (ETIMEDOUT after a stall).
 */
int	io_write_all(int fd, const void *buf, size_t len, int stall_ms);

#endif
