/*
 * network.parentProxy: the upstream HTTP proxy (a corporate egress
 * gateway) that allowed connections are handed to after pisbx decided.
 * Pure functions: the upstream's URL, the noProxy list (pisbx's pattern
 * language, or srt's NO_PROXY string), which connection goes where, and
 * the Basic credentials as the header value they become.
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/policy.h"

#define PARENT_SCHEME	"http://"
#define PARENT_BASIC	"Basic "

static int	 parent_cidr_parse(const char *, size_t, struct parent_cidr *,
		    const char **);
static int	 parent_cidr_match(const struct parent_cidr *,
		    const struct host *);
static int	 parent_add_pattern(struct parent_proxy *,
		    const struct pattern *, const char **);
static void	 parent_base64(const unsigned char *, size_t, char *);

struct parent_proxy *
parent_new(void)
{
	struct parent_proxy	*pp;

	if ((pp = calloc(1, sizeof(*pp))) == NULL)
		return NULL;
	if ((pp->direct = policy_new()) == NULL) {
		free(pp);
		return NULL;
	}
	return pp;
}

void
parent_free(struct parent_proxy *pp)
{
	if (pp == NULL)
		return;
	if (pp->auth != NULL) {
		explicit_bzero(pp->auth, pp->authlen);
		free(pp->auth);
	}
	if (pp->direct != NULL)
		policy_free(pp->direct);
	free(pp->cidr);
	free(pp->cred_file);
	free(pp->cred_env);
	free(pp);
}

int
parent_url_parse(const char *in, size_t len, struct parent_url *out,
    const char **errstr)
{
	const char	*auth, *end, *portp;
	size_t		 authlen, hostlen, portlen, slen = strlen(PARENT_SCHEME);
	uint16_t	 port = 80;

	memset(out, 0, sizeof(*out));
	if (memchr(in, '\0', len) != NULL) {
		*errstr = "NUL byte in the URL";
		return -1;
	}
	if (len >= 8 && strncasecmp(in, "https://", 8) == 0) {
		*errstr = "https:// (TLS to the upstream proxy) is not "
		    "supported: write http://HOST:PORT (tunnels through it "
		    "still carry the client's TLS end to end)";
		return -1;
	}
	if (len < slen || strncasecmp(in, PARENT_SCHEME, slen) != 0) {
		*errstr = memmem(in, len, "://", 3) != NULL ? "only http:// "
		    "upstream proxies are supported (an HTTP proxy that "
		    "answers CONNECT, such as squid)" : "expected "
		    "http://HOST:PORT";
		return -1;
	}
	auth = in + slen;
	for (end = auth; end < in + len && *end != '/' && *end != '?' &&
	    *end != '#'; end++)
		;
	authlen = (size_t)(end - auth);
	if (memchr(auth, '@', authlen) != NULL) {
		/*
		 * The config is readable in the sandbox and shown in
		 * messages: a password in it would reach both.
		 */
		*errstr = "credentials in the URL are refused (the config is "
		    "readable inside the sandbox and quoted in messages): "
		    "put USER:PASSWORD in the file named by "
		    "network.parentProxy.credentialsFile or in the "
		    "environment variable named by "
		    "network.parentProxy.credentialsEnv";
		return -1;
	}
	if (end < in + len && !(end + 1 == in + len && *end == '/')) {
		*errstr = "no path, query or fragment: expected "
		    "http://HOST:PORT";
		return -1;
	}
	if (authlen == 0) {
		*errstr = "no host: expected http://HOST:PORT";
		return -1;
	}
	if (target_split(auth, authlen, &hostlen, &portp, &portlen,
	    errstr) == -1)
		return -1;
	if (portp != NULL && port_parse(portp, portlen, &port) == -1) {
		*errstr = "invalid port: must be 1-65535, decimal, without "
		    "sign or leading zero";
		return -1;
	}
	if (host_canon(auth, hostlen, &out->host, errstr) == -1)
		return -1;
	out->port = port;
	target_format(out->text, sizeof(out->text), &out->host, port);
	out->set = 1;
	return 0;
}

/* "a.b.c.d/N", "[v6]/N" or "v6/N"; no port. */
static int
parent_cidr_parse(const char *in, size_t len, struct parent_cidr *out,
    const char **errstr)
{
	char		 addr[INET6_ADDRSTRLEN + 1];
	const char	*slash = memchr(in, '/', len), *a = in;
	size_t		 alen, blen, i;
	unsigned	 bits = 0, max;

	memset(out, 0, sizeof(*out));
	*errstr = "invalid address range: expected ADDRESS/BITS "
	    "(10.0.0.0/8, [fd00::]/8)";
	if (slash == NULL)
		return -1;
	alen = (size_t)(slash - in);
	blen = len - alen - 1;
	if (alen >= 2 && a[0] == '[' && a[alen - 1] == ']') {
		a++;
		alen -= 2;
	}
	if (alen == 0 || alen >= sizeof(addr) || blen == 0 || blen > 3 ||
	    (blen > 1 && slash[1] == '0'))
		return -1;
	memcpy(addr, a, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET, addr, out->addr) == 1) {
		out->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, addr, out->addr) == 1) {
		out->family = AF_INET6;
		max = 128;
	} else
		return -1;
	for (i = 0; i < blen; i++) {
		if (slash[1 + i] < '0' || slash[1 + i] > '9')
			return -1;
		bits = bits * 10 + (unsigned)(slash[1 + i] - '0');
	}
	if (bits > max) {
		*errstr = "invalid address range: more prefix bits than the "
		    "address has";
		return -1;
	}
	out->bits = bits;
	return 0;
}

static int
parent_cidr_match(const struct parent_cidr *r, const struct host *h)
{
	const uint8_t	*a;
	unsigned	 full, rest;

	if (h->kind == HOST_IPV4 && r->family == AF_INET)
		a = (const uint8_t *)&h->v4;
	else if (h->kind == HOST_IPV6 && r->family == AF_INET6)
		a = h->v6.s6_addr;
	else
		return 0;
	full = r->bits / 8;
	rest = r->bits % 8;
	if (memcmp(a, r->addr, full) != 0)
		return 0;
	return rest == 0 || ((a[full] ^ r->addr[full]) &
	    (uint8_t)(0xff << (8 - rest))) == 0;
}

static int
parent_add_pattern(struct parent_proxy *pp, const struct pattern *pat,
    const char **errstr)
{
	if (policy_add(pp->direct, POLICY_ALLOW, pat) == -1) {
		*errstr = "out of memory";
		return -1;
	}
	return 0;
}

int
parent_noproxy_add(struct parent_proxy *pp, const char *in, size_t len,
    int srt_form, const char **errstr)
{
	struct parent_cidr	 r, *nv;
	struct pattern		 pat;
	char			 buf[TARGET_TEXT_MAX + 4];
	size_t			 i, colons;
	int			 n;

	while (len > 0 && (in[0] == ' ' || in[0] == '\t')) {
		in++;
		len--;
	}
	while (len > 0 && (in[len - 1] == ' ' || in[len - 1] == '\t'))
		len--;
	if (len == 0) {
		*errstr = "empty entry";
		return -1;
	}
	if (memchr(in, '\0', len) != NULL) {
		*errstr = "NUL byte in the entry";
		return -1;
	}
	if (len == 1 && in[0] == '*') {
		pp->direct_all = 1;
		return 0;
	}
	if (memchr(in, '/', len) != NULL && memmem(in, len, "://", 3) ==
	    NULL) {
		if (parent_cidr_parse(in, len, &r, errstr) == -1)
			return -1;
		if ((nv = reallocarray(pp->cidr, pp->ncidr + 1,
		    sizeof(*nv))) == NULL) {
			*errstr = "out of memory";
			return -1;
		}
		pp->cidr = nv;
		pp->cidr[pp->ncidr++] = r;
		return 0;
	}
	if (!srt_form)
		return pattern_parse(in, len, PATTERN_SHORT_SUFFIX, &pat,
		    errstr) == -1 ? -1 : parent_add_pattern(pp, &pat, errstr);

	/*
	 * NO_PROXY as srt (and Go, curl) read it: ".example.com",
	 * "*.example.com" and "example.com" all mean the name and every
	 * name below it; an address means itself.
	 */
	if (in[0] == '.') {
		in++;
		len--;
	} else if (len >= 2 && in[0] == '*' && in[1] == '.') {
		in += 2;
		len -= 2;
	}
	if (len == 0 || len > TARGET_TEXT_MAX) {
		*errstr = len == 0 ? "empty name" : "entry too long";
		return -1;
	}
	/* NO_PROXY writes IPv6 addresses without brackets ("::1"). */
	for (i = 0, colons = 0; i < len; i++)
		colons += in[i] == ':';
	if (in[0] != '[' && colons >= 2) {
		n = snprintf(buf, sizeof(buf), "[%.*s]", (int)len, in);
		if (n < 0 || (size_t)n >= sizeof(buf)) {
			*errstr = "entry too long";
			return -1;
		}
		return pattern_parse(buf, (size_t)n, 0, &pat, errstr) == -1 ?
		    -1 : parent_add_pattern(pp, &pat, errstr);
	}
	if (pattern_parse(in, len, 0, &pat, errstr) == -1 ||
	    parent_add_pattern(pp, &pat, errstr) == -1)
		return -1;
	if (pat.kind != PATTERN_EXACT || pat.host.kind != HOST_NAME)
		return 0;
	n = snprintf(buf, sizeof(buf), "*.%.*s", (int)len, in);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		*errstr = "entry too long";
		return -1;
	}
	if (pattern_parse(buf, (size_t)n, PATTERN_SHORT_SUFFIX, &pat,
	    errstr) == -1)
		return -1;
	return parent_add_pattern(pp, &pat, errstr);
}

static void
parent_base64(const unsigned char *in, size_t len, char *out)
{
	static const char	 tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	uint32_t		 v;
	size_t			 i, o = 0;

	for (i = 0; i + 2 < len; i += 3) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = tab[v >> 6 & 63];
		out[o++] = tab[v & 63];
	}
	if (i < len) {
		v = (uint32_t)in[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		out[o++] = tab[v >> 18 & 63];
		out[o++] = tab[v >> 12 & 63];
		out[o++] = i + 1 < len ? tab[v >> 6 & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
}

int
parent_auth_set(struct parent_proxy *pp, const char *cred, size_t len,
    const char **errstr)
{
	const char	*colon;
	size_t		 i, n;
	char		*a;

	if (len == 0 || len > PARENT_CRED_MAX) {
		*errstr = len == 0 ? "empty credentials: expected "
		    "USER:PASSWORD" : "credentials longer than 1024 bytes";
		return -1;
	}
	/* RFC 7617: no control characters; a CR or LF would split headers. */
	for (i = 0; i < len; i++) {
		if ((unsigned char)cred[i] < 0x20 || cred[i] == 0x7f) {
			*errstr = "the credentials contain a control character "
			    "(a line break inside?): expected one line "
			    "USER:PASSWORD";
			return -1;
		}
	}
	if ((colon = memchr(cred, ':', len)) == NULL || colon == cred) {
		*errstr = colon == NULL ? "expected USER:PASSWORD (no ':' "
		    "found)" : "expected USER:PASSWORD (the user is empty)";
		return -1;
	}
	n = strlen(PARENT_BASIC) + (len + 2) / 3 * 4;
	if ((a = malloc(n + 1)) == NULL) {
		*errstr = "out of memory";
		return -1;
	}
	memcpy(a, PARENT_BASIC, strlen(PARENT_BASIC));
	parent_base64((const unsigned char *)cred, len,
	    a + strlen(PARENT_BASIC));
	if (pp->auth != NULL) {
		explicit_bzero(pp->auth, pp->authlen);
		free(pp->auth);
	}
	pp->auth = a;
	pp->authlen = n;
	return 0;
}


const struct parent_url *
parent_route(const struct parent_proxy *pp, const struct host *h,
    uint16_t port, int tls)
{
	const struct parent_url	*first, *second;
	size_t			 i;

	/*
	 * The loopback is this machine's, never the gateway's: its
	 * addresses, "localhost" and the names below it (RFC 6761), and
	 * host.pisbx.internal are dialled directly.
	 */
	if (pp == NULL || pp->direct_all || host_is_loopback(h) ||
	    host_is_loopback_name(h))
		return NULL;
	if (policy_eval(pp->direct, h, port, NULL) == VERDICT_ALLOW)
		return NULL;
	for (i = 0; i < pp->ncidr; i++)
		if (parent_cidr_match(&pp->cidr[i], h))
			return NULL;
	first = tls ? &pp->https : &pp->http;
	second = tls ? &pp->http : &pp->https;
	return first->set ? first : second->set ? second : NULL;
}
