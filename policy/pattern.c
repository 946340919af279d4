/*
 * allowedDomains / deniedDomains entries: exact host, "*.suffix", IPv4 or
 * bracketed IPv6 literal, each with an optional ":port"; a bare "*" or
 * "*:port" in the deny list only.  Hosts go through host_canon, the same
 * function requests go through, so a pattern and a request can only ever
 * be compared in one spelling.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"

static int	 pattern_space(char);
static int	 pattern_host(const char *, size_t, int, struct pattern *,
		    const char **);

static int
pattern_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	    c == '\v' || c == '\f';
}

int
pattern_parse(const char *in, size_t len, int flags, struct pattern *out,
    const char **errstr)
{
	const char	*portp;
	size_t		 hostlen, portlen, i;
	uint16_t	 port = 0;

	*errstr = NULL;
	memset(out, 0, sizeof(*out));
	while (len > 0 && pattern_space(in[0])) {
		in++;
		len--;
	}
	while (len > 0 && pattern_space(in[len - 1]))
		len--;
	if (len == 0) {
		*errstr = "empty pattern";
		return -1;
	}
	for (i = 0; i < len; i++) {
		if (in[i] == '\0') {
			*errstr = "NUL byte in pattern";
			return -1;
		}
		if (pattern_space(in[i])) {
			*errstr = "whitespace inside pattern";
			return -1;
		}
	}
	if (memmem(in, len, "://", 3) != NULL) {
		*errstr = "a pattern is a host, not a URL: remove the scheme "
		    "(write 'example.com', not 'https://example.com')";
		return -1;
	}
	if (memchr(in, '/', len) != NULL) {
		*errstr = "a pattern is a host, not a URL: remove the path";
		return -1;
	}

	if (target_split(in, len, &hostlen, &portp, &portlen, errstr) == -1)
		return -1;
	if (portp != NULL && port_parse(portp, portlen, &port) == -1) {
		*errstr = "invalid port: must be 1-65535, decimal, without "
		    "sign or leading zero";
		return -1;
	}
	if (pattern_host(in, hostlen, flags, out, errstr) == -1)
		return -1;
	out->port = port;

	switch (out->kind) {
	case PATTERN_ANY:
		snprintf(out->text, sizeof(out->text), "*");
		break;
	case PATTERN_WILDCARD:
		snprintf(out->text, sizeof(out->text), "*.%s", out->host.text);
		break;
	case PATTERN_EXACT:
		snprintf(out->text, sizeof(out->text), "%s", out->host.text);
		break;
	}
	if (port != 0) {
		i = strlen(out->text);
		snprintf(out->text + i, sizeof(out->text) - i, ":%u",
		    (unsigned)port);
	}
	return 0;
}

/* The host part of a pattern: "*", "*.suffix" or one host. */
static int
pattern_host(const char *in, size_t len, int flags, struct pattern *out,
    const char **errstr)
{
	if (len == 0) {
		*errstr = "empty host in pattern";
		return -1;
	}
	if (len == 1 && in[0] == '*') {
		if (!(flags & PATTERN_DENY_LIST)) {
			*errstr = "a bare '*' is only allowed in deniedDomains";
			return -1;
		}
		out->kind = PATTERN_ANY;
		return 0;
	}
	if (len >= 2 && in[0] == '*' && in[1] == '.') {
		if (memchr(in + 2, '*', len - 2) != NULL) {
			*errstr = "'*' is only allowed once, as the whole "
			    "first label ('*.example.com')";
			return -1;
		}
		if (host_canon(in + 2, len - 2, &out->host, errstr) == -1)
			return -1;
		if (out->host.kind != HOST_NAME) {
			*errstr = "a wildcard suffix must be a DNS name, not "
			    "an IP address";
			return -1;
		}
		if (strchr(out->host.text, '.') == NULL &&
		    !(flags & PATTERN_SHORT_SUFFIX)) {
			*errstr = "wildcard too broad: '*.' must be followed "
			    "by at least two labels ('*.example.com', not "
			    "'*.com')";
			return -1;
		}
		out->kind = PATTERN_WILDCARD;
		return 0;
	}
	if (memchr(in, '*', len) != NULL) {
		*errstr = "'*' is only allowed as the whole first label "
		    "('*.example.com') or, in deniedDomains, alone";
		return -1;
	}
	if (host_canon(in, len, &out->host, errstr) == -1)
		return -1;
	out->kind = PATTERN_EXACT;
	return 0;
}

int
pattern_match(const struct pattern *pat, const struct host *h, uint16_t port)
{
	struct pattern	 one;

	memset(&one, 0, sizeof(one));
	one.kind = PATTERN_EXACT;
	one.host = *h;
	one.port = port;
	return pattern_within(&one, pat);
}
