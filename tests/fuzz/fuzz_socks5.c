/*
 * libFuzzer target: a SOCKS5 client's bytes through the greeting, the
 * username/password sub-negotiation and the request parser, in order,
 * as the proxy reads them.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "policy/policy.h"
#include "proxy/parse.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct socks5_greeting g;
	struct socks5_auth a;
	struct socks5_request r;
	struct host h;
	const char *err;
	uint8_t out[32];
	size_t off = 0;
	ssize_t n;

	if ((n = socks5_parse_greeting(data, size, &g)) <= 0)
		return 0;
	off += (size_t)n;
	if (g.offers_userpass) {
		if ((n = socks5_parse_auth(data + off, size - off, &a)) <= 0)
			return 0;
		off += (size_t)n;
	}
	if ((n = socks5_parse_request(data + off, size - off, &r)) <= 0)
		return 0;
	if (r.atyp == SOCKS5_ATYP_DOMAIN)
		(void)host_canon(r.domain, r.domainlen, &h, &err);
	(void)socks5_build_reply(out, SOCKS5_REP_OK, NULL);
	return 0;
}
