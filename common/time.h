/*
 * time: RFC 3339 timestamps, as the access log and the supervisor write
 * them.
 */
#ifndef PISBX_TIME_H
#define PISBX_TIME_H

#include <stddef.h>
#include <time.h>

/* Room for the longest timestamp time_rfc3339 writes. */
#define TIME_RFC3339_MAX	32

/*
 * t in UTC, RFC 3339: "2026-11-30T03:12:00Z", or with milliseconds
 * (ms 0..999) "2026-11-30T03:12:00.123Z"; ms < 0 leaves them out.
 */
void	time_rfc3339(char *buf, size_t len, time_t t, long ms);

#endif
