/*
 * sockaddr: IP socket addresses to and from their "ip:port" text.
 */
#ifndef PISBX_SOCKADDR_H
#define PISBX_SOCKADDR_H

#include <sys/socket.h>

#include <stddef.h>

/* Room for any text sockaddr_format writes for an IP address. */
#define SOCKADDR_TEXT_MAX	64

/*
 * Parse "a.b.c.d:port" or "[v6]:port" into ss and its length: IP
 * literals only, as inet_pton reads them (no names, no zone ids), the
 * port in decimal digits, 0..65535.  0, or -1 when s is not one.
 */
int	sockaddr_parse(const char *s, struct sockaddr_storage *ss,
	    socklen_t *len);
/*
 * "a.b.c.d:port", "[v6]:port", a Unix socket's path ("unix" when it has
 * none), or "?" for another family.
 */
void	sockaddr_format(const struct sockaddr *sa, char *buf, size_t len);

#endif
