/*
 * SOCKS5 messages (RFC 1928) and username/password sub-negotiation (RFC
 * 1929) as pure functions over bytes: they see untrusted input and are
 * fuzzed.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <stdint.h>
#include <string.h>

#include "proxy/parse.h"

ssize_t
socks5_parse_greeting(const uint8_t *buf, size_t len,
    struct socks5_greeting *g)
{
	size_t i, n;

	memset(g, 0, sizeof(*g));
	if (len < 2)
		return 0;
	if (buf[0] != SOCKS5_VERSION || buf[1] == 0)
		return -1;
	n = buf[1];
	if (len < 2 + n)
		return 0;
	for (i = 0; i < n; i++) {
		if (buf[2 + i] == SOCKS5_AUTH_NONE)
			g->offers_none = 1;
		else if (buf[2 + i] == SOCKS5_AUTH_USERPASS)
			g->offers_userpass = 1;
	}
	return (ssize_t)(2 + n);
}

ssize_t
socks5_parse_auth(const uint8_t *buf, size_t len, struct socks5_auth *a)
{
	size_t ulen, plen;

	memset(a, 0, sizeof(*a));
	if (len < 2)
		return 0;
	if (buf[0] != 0x01)
		return -1;
	ulen = buf[1];
	if (len < 2 + ulen + 1)
		return 0;
	plen = buf[2 + ulen];
	if (len < 3 + ulen + plen)
		return 0;
	memcpy(a->user, buf + 2, ulen);
	a->user[ulen] = '\0';
	memcpy(a->pass, buf + 3 + ulen, plen);
	a->pass[plen] = '\0';
	return (ssize_t)(3 + ulen + plen);
}

ssize_t
socks5_parse_request(const uint8_t *buf, size_t len,
    struct socks5_request *r)
{
	size_t need;

	memset(r, 0, sizeof(*r));
	if (len < 4)
		return 0;
	if (buf[0] != SOCKS5_VERSION || buf[2] != 0x00)
		return -1;
	r->cmd = buf[1];
	r->atyp = buf[3];
	switch (r->atyp) {
	case SOCKS5_ATYP_IPV4:
		need = 4 + 4 + 2;
		if (len < need)
			return 0;
		memcpy(r->v4, buf + 4, 4);
		break;
	case SOCKS5_ATYP_IPV6:
		need = 4 + 16 + 2;
		if (len < need)
			return 0;
		memcpy(r->v6, buf + 4, 16);
		break;
	case SOCKS5_ATYP_DOMAIN:
		if (len < 5)
			return 0;
		if (buf[4] == 0)
			return -1;
		need = 5 + buf[4] + 2;
		if (len < need)
			return 0;
		memcpy(r->domain, buf + 5, buf[4]);
		r->domain[buf[4]] = '\0';
		r->domainlen = buf[4];
		break;
	default:
		return 4;	/* the caller answers 0x08 */
	}
	r->port = (uint16_t)(buf[need - 2] << 8 | buf[need - 1]);
	return (ssize_t)need;
}

size_t
socks5_build_reply(uint8_t *out, uint8_t rep, const struct sockaddr *bound)
{
	size_t n = 0;

	out[n++] = SOCKS5_VERSION;
	out[n++] = rep;
	out[n++] = 0x00;
	if (bound != NULL && bound->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)bound;

		out[n++] = SOCKS5_ATYP_IPV6;
		memcpy(out + n, &s6->sin6_addr, 16);
		n += 16;
		memcpy(out + n, &s6->sin6_port, 2);
		n += 2;
	} else {
		out[n++] = SOCKS5_ATYP_IPV4;
		if (bound != NULL && bound->sa_family == AF_INET) {
			const struct sockaddr_in *s4 = (const void *)bound;

			memcpy(out + n, &s4->sin_addr, 4);
			memcpy(out + n + 4, &s4->sin_port, 2);
		} else
			memset(out + n, 0, 6);
		n += 6;
	}
	return n;
}
