/*
 * sockaddr: parse and print the "ip:port" spelling of socket addresses
 * (listeners, dial targets, the launcher's proxy address).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>

#include "common/sockaddr.h"

static char	*sockaddr_decimal(char *, unsigned);

/* v in decimal at p; the end of the digits. */
static char *
sockaddr_decimal(char *p, unsigned v)
{
	char	 d[8];
	int	 n = 0;

	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	while (n > 0)
		*p++ = d[--n];
	return p;
}

int
sockaddr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;
	char			 host[INET6_ADDRSTRLEN];
	const char		*h = s, *hend, *p;
	unsigned long		 port = 0;
	size_t			 hl;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		h = s + 1;
		if ((hend = strchr(h, ']')) == NULL || hend[1] != ':')
			return -1;
		p = hend + 2;
	} else {
		if ((hend = strrchr(s, ':')) == NULL)
			return -1;
		p = hend + 1;
	}
	hl = (size_t)(hend - h);
	if (hl == 0 || hl >= sizeof(host))
		return -1;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (*p == '\0' || strlen(p) > 5)
		return -1;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		port = port * 10 + (unsigned long)(*p - '0');
	}
	if (port > 65535)
		return -1;
	if (s[0] != '[' && inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*len = sizeof(*sin);
		return 0;
	}
	if (s[0] == '[' && inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*sin6);
		return 0;
	}
	return -1;
}

void
sockaddr_format(const struct sockaddr *sa, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;
		const unsigned char *a = (const void *)&sin->sin_addr;
		char *p = ip;
		int i;

		/*
		 * By hand: every new connection prints two of these, and
		 * inet_ntop and snprintf take thousands of instructions.
		 */
		for (i = 0; i < 4; i++) {
			p = sockaddr_decimal(p, a[i]);
			*p++ = i < 3 ? '.' : ':';
		}
		p = sockaddr_decimal(p, ntohs(sin->sin_port));
		*p = '\0';
		if (len > 0) {
			if ((size_t)(p - ip) >= len)
				ip[len - 1] = '\0';
			memcpy(buf, ip, strlen(ip) + 1);
		}
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, ntohs(sin6->sin6_port));
	} else if (sa->sa_family == AF_UNIX) {
		const struct sockaddr_un *sun = (const void *)sa;

		if (sun->sun_path[0] != '\0')
			snprintf(buf, len, "%.*s", (int)sizeof(sun->sun_path),
			    sun->sun_path);
		else
			snprintf(buf, len, "unix");
	} else
		snprintf(buf, len, "?");
}
