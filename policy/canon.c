/*
 * Host canonicalisation: the one function that turns whatever a client or
 * a config wrote into the text the policy sees, the reviewer is shown, the
 * log records and -- for literals -- the proxy dials.
 *
 * Names: ASCII only, lower-case, one trailing dot dropped, RFC 1035 length
 * limits, [a-z0-9-_.] only.  IPv4: every spelling the WHATWG URL host
 * parser accepts ("127.1", "0x7f.0.0.1", "0177.0.0.1", "2130706433")
 * becomes its dotted quad, because that is what a browser, curl or Python
 * would connect to; a host whose last label is a number but which is not a
 * valid IPv4 address is an error, never a name, so "1.2.3.4.5" can never
 * slip past an IP pattern as a DNS name.  IPv6: only in brackets, printed
 * in RFC 5952 form, IPv4-mapped and IPv4-compatible forms unwrapped.
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"

#define IPV6_LITERAL_MAX	45	/* "ffff:...:255.255.255.255" */

static int	 canon_ipv6(const char *, size_t, struct host *,
		    const char **);
static int	 canon_bad_char(const char *, size_t, const char **);
static int	 canon_ends_in_number(const char *, size_t);
static int	 canon_ipv4_number(const char *, size_t, uint64_t *);
static int	 canon_ipv4(const char *, size_t, struct host *,
		    const char **);
static int	 canon_name(const char *, size_t, struct host *,
		    const char **);
static void	 canon_format_v6(char *, size_t, const struct in6_addr *);
static int	 canon_v6_embeds_v4(const struct in6_addr *);

int
host_canon(const char *in, size_t len, struct host *out, const char **errstr)
{
	char	 buf[HOST_NAME_MAXLEN + 2];
	size_t	 i;

	*errstr = NULL;
	memset(out, 0, sizeof(*out));
	if (len == 0) {
		*errstr = "empty host";
		return -1;
	}
	if (in[0] == '[') {
		if (in[len - 1] != ']') {
			*errstr = "unterminated '[' in IPv6 literal";
			return -1;
		}
		return canon_ipv6(in + 1, len - 2, out, errstr);
	}
	if (canon_bad_char(in, len, errstr) == -1)
		return -1;

	/* One trailing dot is the DNS root; drop it.  A second one is an
	 * empty label and is caught below. */
	if (in[len - 1] == '.')
		len--;
	if (len == 0) {
		*errstr = "empty host";
		return -1;
	}
	if (len > HOST_NAME_MAXLEN) {
		*errstr = "host name longer than 253 octets";
		return -1;
	}
	for (i = 0; i < len; i++) {
		char c = in[i];

		buf[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
	}
	buf[len] = '\0';

	if (canon_ends_in_number(buf, len))
		return canon_ipv4(buf, len, out, errstr);
	return canon_name(buf, len, out, errstr);
}

/*
 * Reject bytes that can never be part of a host, with a message naming
 * the byte's likely intent (smuggling, URL pieces, an unbracketed IPv6).
 */
static int
canon_bad_char(const char *in, size_t len, const char **errstr)
{
	size_t	 i, colons = 0;
	int	 v6ish = 1;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c == ':')
			colons++;
		else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		    (c >= 'A' && c <= 'F') || c == '.'))
			v6ish = 0;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.')
			continue;
		if (c >= 0x80)
			*errstr = "non-ASCII host: write the punycode "
			    "(xn--...) form of an internationalised name";
		else if (c == '\0')
			*errstr = "NUL byte in host";
		else if (c == '\r' || c == '\n')
			*errstr = "CR or LF in host";
		else if (c == ' ' || c == '\t' || c == '\v' || c == '\f')
			*errstr = "whitespace in host";
		else if (c < 0x20 || c == 0x7f)
			*errstr = "control character in host";
		else if (c == '%')
			*errstr = "'%' in host: percent-encoding and zone IDs "
			    "are not allowed";
		else if (c == '@')
			*errstr = "'@' in host: user information is not "
			    "allowed";
		else if (c == '/' || c == '\\')
			*errstr = "'/' or '\\' in host: write a host name, "
			    "not a URL";
		else if (c == ':' && colons >= 2 && v6ish)
			*errstr = "write IPv6 in brackets, e.g. [::1]";
		else if (c == ':')
			*errstr = "':' in host: a port is not part of the host";
		else if (c == '[' || c == ']')
			*errstr = "misplaced '[' or ']': brackets must enclose "
			    "the whole IPv6 literal";
		else if (c == '*')
			*errstr = "'*' in host: wildcards are only allowed as "
			    "'*.suffix' patterns";
		else
			*errstr = "invalid character in host name (allowed: "
			    "a-z 0-9 - _ .)";
		return -1;
	}
	return 0;
}

/*
 * The WHATWG "ends in a number" checker: the last label (trailing dot
 * already dropped) is all digits, or parses as an IPv4 number (0x hex,
 * including a bare "0x").
 */
static int
canon_ends_in_number(const char *s, size_t len)
{
	const char	*last;
	size_t		 n, i;
	uint64_t	 v;

	last = memrchr(s, '.', len);
	last = last ? last + 1 : s;
	n = len - (size_t)(last - s);
	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (last[i] < '0' || last[i] > '9')
			break;
	if (i == n)
		return 1;
	return canon_ipv4_number(last, n, &v) == 0;
}

/*
 * The WHATWG IPv4 number parser: decimal, 0x/0X hex, or leading-zero
 * octal; an empty remainder after the prefix is 0.  Values above 2^32 are
 * clamped so the caller's range check fails without overflowing.
 */
static int
canon_ipv4_number(const char *s, size_t len, uint64_t *out)
{
	unsigned	 radix = 10;
	uint64_t	 v = 0;
	size_t		 i;

	if (len == 0)
		return -1;
	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		len -= 2;
		radix = 16;
	} else if (len >= 2 && s[0] == '0') {
		s++;
		len--;
		radix = 8;
	}
	for (i = 0; i < len; i++) {
		unsigned c = (unsigned char)s[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		if (d >= radix)
			return -1;
		v = v * radix + d;
		if (v > UINT32_MAX)
			v = (uint64_t)UINT32_MAX + 1;
	}
	*out = v;
	return 0;
}

/* The WHATWG IPv4 parser over a lower-cased host without a trailing dot. */
static int
canon_ipv4(const char *s, size_t len, struct host *out, const char **errstr)
{
	uint64_t	 part[4], v;
	size_t		 nparts = 0, i, start = 0;
	struct in_addr	 a;

	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		if (nparts == 4) {
			*errstr = "invalid IPv4 address: more than four parts "
			    "(a name may not end in a number)";
			return -1;
		}
		if (canon_ipv4_number(s + start, i - start, &v) == -1) {
			*errstr = "invalid IPv4 address: each part must be "
			    "decimal, 0x hex or 0 octal (a name may not end "
			    "in a number)";
			return -1;
		}
		part[nparts++] = v;
		start = i + 1;
	}
	for (i = 0; i + 1 < nparts; i++) {
		if (part[i] > 255) {
			*errstr = "invalid IPv4 address: part out of range";
			return -1;
		}
	}
	if (part[nparts - 1] >= ((uint64_t)1 << (8 * (5 - nparts)))) {
		*errstr = "invalid IPv4 address: part out of range";
		return -1;
	}
	v = part[nparts - 1];
	for (i = 0; i + 1 < nparts; i++)
		v += part[i] << (8 * (3 - i));
	a.s_addr = htonl((uint32_t)v);
	host_from_in(out, &a);
	return 0;
}

/* Check a lower-cased DNS name's labels and lengths and store it. */
static int
canon_name(const char *s, size_t len, struct host *out, const char **errstr)
{
	size_t	 i, label = 0;

	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != '.') {
			label++;
			continue;
		}
		if (label == 0) {
			*errstr = "empty label in host name ('..' or a "
			    "leading or doubled trailing dot)";
			return -1;
		}
		if (label > HOST_LABEL_MAXLEN) {
			*errstr = "label longer than 63 octets in host name";
			return -1;
		}
		label = 0;
	}
	out->kind = HOST_NAME;
	memcpy(out->text, s, len);
	out->text[len] = '\0';
	return 0;
}

/* Parse the inside of "[...]" as an IPv6 address. */
static int
canon_ipv6(const char *in, size_t len, struct host *out, const char **errstr)
{
	char		 buf[IPV6_LITERAL_MAX + 1];
	struct in6_addr	 a;
	size_t		 i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];

		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		    (c >= 'A' && c <= 'F') || c == ':' || c == '.')
			continue;
		if (c == '%')
			*errstr = "zone IDs ('%') are not allowed in IPv6 "
			    "literals";
		else
			*errstr = "invalid character in IPv6 literal";
		return -1;
	}
	if (len == 0) {
		*errstr = "empty IPv6 literal";
		return -1;
	}
	if (len > IPV6_LITERAL_MAX) {
		*errstr = "IPv6 literal too long";
		return -1;
	}
	memcpy(buf, in, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET6, buf, &a) != 1) {
		*errstr = "invalid IPv6 address";
		return -1;
	}
	host_from_in6(out, &a);
	return 0;
}

int
port_parse(const char *in, size_t len, uint16_t *out)
{
	unsigned long	 v = 0;
	size_t		 i;

	if (len == 0 || len > 5 || in[0] == '0')
		return -1;
	for (i = 0; i < len; i++) {
		if (in[i] < '0' || in[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(in[i] - '0');
	}
	if (v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

int
target_split(const char *in, size_t len, size_t *hostlen,
    const char **port, size_t *portlen, const char **errstr)
{
	const char	*colon, *close;

	*port = NULL;
	*portlen = 0;
	if (len > 0 && in[0] == '[') {
		close = memchr(in, ']', len);
		if (close == NULL) {
			*errstr = "unterminated '[' in IPv6 literal";
			return -1;
		}
		*hostlen = (size_t)(close - in) + 1;
		if (*hostlen < len && in[*hostlen] != ':') {
			*errstr = "unexpected characters after ']' (expected "
			    "':port')";
			return -1;
		}
		colon = *hostlen < len ? in + *hostlen : NULL;
	} else {
		colon = memchr(in, ':', len);
		/* Several colons: an unbracketed IPv6; host_canon says so. */
		if (colon != NULL && memchr(colon + 1, ':',
		    len - (size_t)(colon - in) - 1) != NULL)
			colon = NULL;
		*hostlen = colon != NULL ? (size_t)(colon - in) : len;
	}
	if (colon != NULL) {
		*port = colon + 1;
		*portlen = len - (size_t)(colon - in) - 1;
		if (*portlen == 0) {
			*errstr = "missing port after ':'";
			return -1;
		}
	}
	return 0;
}

int
target_parse(const char *in, size_t len, uint16_t default_port,
    struct host *out, uint16_t *port, const char **errstr)
{
	const char	*portp;
	size_t		 hostlen, portlen;

	*port = 0;
	*errstr = NULL;
	memset(out, 0, sizeof(*out));
	if (len == 0) {
		*errstr = "empty target";
		return -1;
	}
	if (target_split(in, len, &hostlen, &portp, &portlen, errstr) == -1)
		return -1;
	if (portp != NULL) {
		if (port_parse(portp, portlen, port) == -1) {
			*errstr = "invalid port: must be 1-65535, decimal, "
			    "without sign or leading zero";
			return -1;
		}
	} else if (default_port == 0) {
		if (memchr(in, ':', len) == NULL) {
			*errstr = "missing ':port'";
			return -1;
		}
	} else
		*port = default_port;
	if (host_canon(in, hostlen, out, errstr) == -1)
		return -1;
	if (*port == 0) {
		/* Unreachable: a multi-colon host always fails above. */
		*errstr = "missing ':port'";
		return -1;
	}
	return 0;
}

void
host_from_in(struct host *h, const struct in_addr *a)
{
	const uint8_t	*b = (const uint8_t *)&a->s_addr;

	memset(h, 0, sizeof(*h));
	h->kind = HOST_IPV4;
	h->v4 = *a;
	snprintf(h->text, sizeof(h->text), "%u.%u.%u.%u",
	    b[0], b[1], b[2], b[3]);
}

/*
 * IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d (but not the
 * unspecified :: and loopback ::1, which are IPv6 addresses in their own
 * right).
 */
static int
canon_v6_embeds_v4(const struct in6_addr *a)
{
	const uint8_t	*b = a->s6_addr;
	size_t		 i;

	for (i = 0; i < 10; i++)
		if (b[i] != 0)
			return 0;
	if (b[10] == 0xff && b[11] == 0xff)
		return 1;
	if (b[10] != 0 || b[11] != 0)
		return 0;
	if (b[12] == 0 && b[13] == 0 && b[14] == 0 && b[15] <= 1)
		return 0;
	return 1;
}

void
host_from_in6(struct host *h, const struct in6_addr *a)
{
	struct in_addr	 v4;

	if (canon_v6_embeds_v4(a)) {
		memcpy(&v4.s_addr, a->s6_addr + 12, 4);
		host_from_in(h, &v4);
		return;
	}
	memset(h, 0, sizeof(*h));
	h->kind = HOST_IPV6;
	h->v6 = *a;
	canon_format_v6(h->text, sizeof(h->text), a);
}

/*
 * RFC 5952 section 4: lower-case hex without leading zeros, the longest
 * run of two or more zero groups shortened to "::" (the first on a tie),
 * a single zero group never shortened.  Written here rather than trusting
 * inet_ntop, whose choices differ between libcs.
 */
static void
canon_format_v6(char *buf, size_t len, const struct in6_addr *a)
{
	unsigned	 g[8];
	int		 best = -1, bestlen = 0, cur = -1, curlen = 0, i;
	size_t		 off = 0;

	for (i = 0; i < 8; i++)
		g[i] = (unsigned)a->s6_addr[2 * i] << 8 | a->s6_addr[2 * i + 1];
	for (i = 0; i < 8; i++) {
		if (g[i] == 0) {
			if (cur == -1) {
				cur = i;
				curlen = 0;
			}
			curlen++;
			if (curlen > bestlen) {
				best = cur;
				bestlen = curlen;
			}
		} else
			cur = -1;
	}
	if (bestlen < 2)
		best = -1;

	off += (size_t)snprintf(buf + off, len - off, "[");
	for (i = 0; i < 8; i++) {
		if (i == best) {
			off += (size_t)snprintf(buf + off, len - off, "::");
			i += bestlen - 1;
			continue;
		}
		if (i > 0 && i != best + bestlen)
			off += (size_t)snprintf(buf + off, len - off, ":");
		off += (size_t)snprintf(buf + off, len - off, "%x", g[i]);
	}
	snprintf(buf + off, len - off, "]");
}

int
target_format(char *buf, size_t len, const struct host *h, uint16_t port)
{
	return snprintf(buf, len, "%s:%u", h->text, (unsigned)port);
}
