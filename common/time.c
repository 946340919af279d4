/*
 * time: RFC 3339 UTC timestamps.
 */
#include <string.h>
#include <time.h>

#include "common/time.h"

/*
 * The date and time of day change once a second: the access log writes
 * many records a second, so each thread keeps the last second formatted
 * and only the milliseconds are formatted for every call.
 */
void
time_rfc3339(char *buf, size_t len, time_t t, long ms)
{
	static _Thread_local time_t	 cached_t = (time_t)-1;
	static _Thread_local char	 day[TIME_RFC3339_MAX];
	static _Thread_local size_t	 daylen;
	struct tm			 tm;
	char				 out[TIME_RFC3339_MAX + 8], *p;
	size_t				 n;

	if (t != cached_t) {
		daylen = gmtime_r(&t, &tm) == NULL ? 0 : strftime(day,
		    sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
		cached_t = t;
	}
	memcpy(out, day, daylen);
	p = out + daylen;
	if (ms >= 0 && ms <= 999) {
		*p++ = '.';
		*p++ = (char)('0' + ms / 100);
		*p++ = (char)('0' + ms / 10 % 10);
		*p++ = (char)('0' + ms % 10);
	}
	*p++ = 'Z';
	if (len == 0)
		return;
	n = (size_t)(p - out) < len ? (size_t)(p - out) : len - 1;
	memcpy(buf, out, n);
	buf[n] = '\0';
}
