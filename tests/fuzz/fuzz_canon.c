/*
 * libFuzzer target for host_canon and target_parse: any bytes in, and
 * whatever comes out must be canonical (a fixed point), consistent with
 * its binary address, free of bytes a name may not hold, and -- where
 * glibc's inet_aton would read the input as an IPv4 address -- never a
 * DNS name.
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void	 check_host(const struct host *);

/* Invariants of every canonical host. */
static void
check_host(const struct host *h)
{
	struct host	 again;
	struct in_addr	 a4;
	struct in6_addr	 a6;
	const char	*err;
	char		 inner[HOST_TEXT_MAX];
	size_t		 len = strlen(h->text), i;

	if (len == 0 || len > HOST_NAME_MAXLEN)
		abort();
	if (host_canon(h->text, len, &again, &err) != 0 ||
	    again.kind != h->kind || strcmp(again.text, h->text) != 0)
		abort();
	switch (h->kind) {
	case HOST_NAME:
		for (i = 0; i < len; i++) {
			char c = h->text[i];

			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			    c == '-' || c == '_' || c == '.'))
				abort();
		}
		if (h->text[0] == '.' || h->text[len - 1] == '.' ||
		    strstr(h->text, "..") != NULL)
			abort();
		/* A name is never something inet_aton reads as IPv4. */
		if (inet_aton(h->text, &a4) != 0)
			abort();
		break;
	case HOST_IPV4:
		if (inet_pton(AF_INET, h->text, &a4) != 1 ||
		    a4.s_addr != h->v4.s_addr)
			abort();
		break;
	case HOST_IPV6:
		if (h->text[0] != '[' || h->text[len - 1] != ']')
			abort();
		memcpy(inner, h->text + 1, len - 2);
		inner[len - 2] = '\0';
		if (inet_pton(AF_INET6, inner, &a6) != 1 ||
		    memcmp(&a6, &h->v6, sizeof(a6)) != 0)
			abort();
		/* Mapped forms are unwrapped. */
		if (IN6_IS_ADDR_V4MAPPED(&a6))
			abort();
		break;
	default:
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct host	 h, h2;
	struct in_addr	 a4;
	const char	*err;
	char		 buf[TARGET_TEXT_MAX], *s;
	uint16_t	 port, port2;
	size_t		 i;
	int		 digitsonly = 1;

	if (host_canon((const char *)data, size, &h, &err) == 0)
		check_host(&h);
	else if (err == NULL)
		abort();

	/*
	 * Differential check against glibc: input made only of the bytes
	 * an IPv4 number uses, which inet_aton accepts, must never become
	 * a DNS name (it may be an error: WHATWG is stricter), and when
	 * both read it as IPv4 they agree.
	 */
	for (i = 0; i < size; i++) {
		uint8_t c = data[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		    (c >= 'A' && c <= 'F') || c == 'x' || c == 'X' ||
		    c == '.'))
			digitsonly = 0;
	}
	if (digitsonly && size > 0 && (s = malloc(size + 1)) != NULL) {
		memcpy(s, data, size);
		s[size] = '\0';
		if (inet_aton(s, &a4) != 0 &&
		    host_canon(s, size, &h, &err) == 0) {
			if (h.kind != HOST_IPV4 || h.v4.s_addr != a4.s_addr)
				abort();
		}
		free(s);
	}

	if (target_parse((const char *)data, size, 443, &h, &port, &err) ==
	    0) {
		check_host(&h);
		if (port == 0)
			abort();
		i = (size_t)target_format(buf, sizeof(buf), &h, port);
		if (i >= sizeof(buf))
			abort();
		if (target_parse(buf, i, 0, &h2, &port2, &err) != 0 ||
		    port2 != port || strcmp(h2.text, h.text) != 0)
			abort();
	} else if (err == NULL)
		abort();
	return 0;
}
