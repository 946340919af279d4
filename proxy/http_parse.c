/*
 * HTTP/1.x message heads and chunked framing (RFC 9112), parsed strictly
 * enough to close the request-smuggling doors a forwarding proxy opens:
 * conflicting Content-Length values, Content-Length with
 * Transfer-Encoding, unknown transfer codings, obsolete line folding,
 * whitespace before the colon and control bytes are all refused.  Pure
 * functions over byte buffers; fuzzed.
 */
#include <sys/types.h>

#include <stdint.h>
#include <string.h>

#include "proxy/parse.h"

#define CHUNK_LINE_MAX	4096

static int	 is_tchar(unsigned char);
static const char *find_eol(const char *, const char *, size_t *);
static ssize_t	 parse_head(const char *, size_t, struct http_msg *, int);
static int	 parse_headers(const char *, const char *, struct http_msg *,
		    int);
static ssize_t	 fail(struct http_msg *, int, const char *);

static int
is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return 1;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static ssize_t
fail(struct http_msg *m, int status, const char *msg)
{
	m->error = status;
	m->errmsg = msg;
	return -1;
}

/*
 * The end of the line starting at p: returns the position of its LF (or
 * NULL when there is none before end) and the line length without the
 * CR LF / LF in *linelen.
 */
static const char *
find_eol(const char *p, const char *end, size_t *linelen)
{
	const char *lf;

	if ((lf = memchr(p, '\n', end - p)) == NULL)
		return NULL;
	*linelen = lf - p;
	if (*linelen > 0 && p[*linelen - 1] == '\r')
		(*linelen)--;
	return lf;
}

int
http_token_eq(const char *s, size_t len, const char *lit)
{
	return strlen(lit) == len && strncasecmp(s, lit, len) == 0;
}

int
http_list_has(const char *v, size_t len, const char *token)
{
	const char *end = v + len, *tok;
	size_t tlen;

	while (v < end) {
		while (v < end && (*v == ' ' || *v == '\t' || *v == ','))
			v++;
		tok = v;
		while (v < end && *v != ',')
			v++;
		tlen = v - tok;
		while (tlen > 0 && (tok[tlen - 1] == ' ' ||
		    tok[tlen - 1] == '\t'))
			tlen--;
		if (tlen > 0 && http_token_eq(tok, tlen, token))
			return 1;
	}
	return 0;
}

/* Header fields between p and end (the blank line excluded). */
static int
parse_headers(const char *p, const char *end, struct http_msg *m,
    int request)
{
	const char *lf, *colon, *v, *ve;
	size_t linelen;
	int te_seen = 0;
	uint64_t cl;

	while (p < end) {
		lf = find_eol(p, end, &linelen);
		if (lf == NULL)
			return (int)fail(m, 400, "malformed header line");
		if (linelen == 0)
			break;
		if (p[0] == ' ' || p[0] == '\t')
			return (int)fail(m, 400, "obsolete header line folding");
		if ((colon = memchr(p, ':', linelen)) == NULL || colon == p)
			return (int)fail(m, 400, "header line without a name");
		for (v = p; v < colon; v++)
			if (!is_tchar((unsigned char)*v))
				return (int)fail(m, 400,
				    "bad character in a header name");
		v = colon + 1;
		ve = p + linelen;
		for (const char *q = v; q < ve; q++) {
			unsigned char ch = (unsigned char)*q;

			if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
				return (int)fail(m, 400,
				    "control character in a header value");
		}
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		if (m->nh == HTTP_MAX_HEADERS)
			return (int)fail(m, 431, "too many header fields");
		m->h[m->nh].name = p;
		m->h[m->nh].namelen = colon - p;
		m->h[m->nh].value = v;
		m->h[m->nh].valuelen = ve - v;
		m->nh++;

		if (http_token_eq(p, colon - p, "content-length")) {
			if (ve == v || ve - v > 18)
				return (int)fail(m, 400, "bad Content-Length");
			cl = 0;
			for (const char *q = v; q < ve; q++) {
				if (*q < '0' || *q > '9')
					return (int)fail(m, 400,
					    "bad Content-Length");
				cl = cl * 10 + (uint64_t)(*q - '0');
			}
			if (m->has_length && m->length != cl)
				return (int)fail(m, 400,
				    "conflicting Content-Length values");
			m->has_length = 1;
			m->length = cl;
		} else if (http_token_eq(p, colon - p, "transfer-encoding")) {
			if (te_seen++)
				return (int)fail(m, 400,
				    "repeated Transfer-Encoding");
			if (http_token_eq(v, ve - v, "chunked"))
				m->chunked = 1;
			else if (request)
				return (int)fail(m, 501,
				    "unsupported transfer coding");
			else
				m->te_other = 1;
		} else if (http_token_eq(p, colon - p, "connection") ||
		    http_token_eq(p, colon - p, "proxy-connection")) {
			if (http_list_has(v, ve - v, "close"))
				m->conn_close = 1;
			if (http_list_has(v, ve - v, "keep-alive"))
				m->conn_keepalive = 1;
		}
		p = lf + 1;
	}
	if (m->has_length && (m->chunked || m->te_other)) {
		if (request)
			return (int)fail(m, 400, "both Content-Length and "
			    "Transfer-Encoding");
		/* RFC 9112 6.3: the coding wins; do not reuse. */
		m->has_length = 0;
		m->conn_close = 1;
	}
	return 0;
}

static ssize_t
parse_head(const char *buf, size_t len, struct http_msg *m, int request)
{
	const char *p = buf, *end, *lf, *sp1, *sp2, *line, *blank = NULL;
	size_t linelen, lead = 0, headlen;

	memset(m, 0, sizeof(*m));
	/* RFC 9112 2.2: ignore empty lines before a request line. */
	if (request) {
		while (lead < len && (buf[lead] == '\r' || buf[lead] == '\n')) {
			if (buf[lead] == '\r' && (lead + 1 >= len ||
			    buf[lead + 1] != '\n'))
				break;
			lead++;
		}
		if (lead > 4)
			return fail(m, 400, "empty lines before the request");
		p = buf + lead;
	}
	end = buf + (len > HTTP_HEAD_MAX ? HTTP_HEAD_MAX : len);

	/* Find the blank line that ends the head. */
	for (line = p; line < end; line = lf + 1) {
		if ((lf = find_eol(line, end, &linelen)) == NULL)
			break;
		if (linelen == 0 && line != p) {
			blank = line;
			break;
		}
	}
	if (blank == NULL) {
		if (len >= HTTP_HEAD_MAX)
			return fail(m, 431, "header section too large");
		return 0;
	}
	headlen = (lf + 1) - buf;

	/* The first line. */
	lf = find_eol(p, end, &linelen);
	for (line = p; line < p + linelen; line++) {
		unsigned char ch = (unsigned char)*line;

		/* Bytes >= 0x80 reach the host check, which explains them. */
		if (ch < 0x20 || ch == 0x7f)
			return fail(m, 400, "control byte in the first line");
	}
	if (request) {
		if ((sp1 = memchr(p, ' ', linelen)) == NULL || sp1 == p)
			return fail(m, 400, "malformed request line");
		for (line = p; line < sp1; line++)
			if (!is_tchar((unsigned char)*line))
				return fail(m, 400, "bad method");
		if ((sp2 = memchr(sp1 + 1, ' ', p + linelen - sp1 - 1)) ==
		    NULL || sp2 == sp1 + 1)
			return fail(m, 400, "malformed request line");
		m->method = p;
		m->methodlen = sp1 - p;
		m->target = sp1 + 1;
		m->targetlen = sp2 - sp1 - 1;
		if ((size_t)(p + linelen - sp2 - 1) != 8 ||
		    strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
			if (p + linelen - sp2 - 1 > 5 &&
			    strncmp(sp2 + 1, "HTTP/", 5) == 0)
				return fail(m, 505, "HTTP version not "
				    "supported");
			return fail(m, 400, "malformed request line");
		}
		if (sp2[8] == '0')
			m->minor = 0;
		else if (sp2[8] == '1')
			m->minor = 1;
		else
			return fail(m, 505, "HTTP version not supported");
	} else {
		if (linelen < 12 || strncmp(p, "HTTP/1.", 7) != 0 ||
		    (p[7] != '0' && p[7] != '1') || p[8] != ' ' ||
		    p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' ||
		    p[11] < '0' || p[11] > '9' ||
		    (linelen > 12 && p[12] != ' '))
			return fail(m, 502, "malformed status line");
		m->minor = p[7] - '0';
		m->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 +
		    (p[11] - '0');
		m->statusline = p;
		m->statuslinelen = linelen;
	}
	if (parse_headers(lf + 1, blank, m, request) == -1)
		return -1;
	return (ssize_t)headlen;
}

ssize_t
http_parse_request(const char *buf, size_t len, struct http_msg *m)
{
	return parse_head(buf, len, m, 1);
}

ssize_t
http_parse_response(const char *buf, size_t len, struct http_msg *m)
{
	return parse_head(buf, len, m, 0);
}

int
http_split_uri(const char *uri, size_t len, const char **auth,
    size_t *authlen, const char **path, size_t *pathlen,
    const char **errstr)
{
	const char *p, *end = uri + len, *a;

	if (len >= 8 && strncasecmp(uri, "https://", 8) == 0) {
		*errstr = "https:// URLs go through the proxy with CONNECT "
		    "(use an HTTPS proxy client), not as absolute-URI "
		    "requests";
		return -1;
	}
	if (len < 7 || strncasecmp(uri, "http://", 7) != 0) {
		*errstr = "only http:// absolute-URI requests and CONNECT "
		    "are served";
		return -1;
	}
	a = uri + 7;
	for (p = a; p < end && *p != '/' && *p != '?' && *p != '#'; p++)
		if (*p == '@') {
			*errstr = "user information in the URL is refused";
			return -1;
		}
	if (p == a) {
		*errstr = "no host in the URL";
		return -1;
	}
	*auth = a;
	*authlen = p - a;
	*path = p;
	*pathlen = end - p;
	if (*pathlen > 0 && *p == '#')
		*pathlen = 0;
	return 0;
}

ssize_t
chunk_step(struct chunk_decoder *d, const char *buf, size_t len,
    const char **data, size_t *datalen, uint64_t *hdr)
{
	const char *lf;
	size_t linelen, i, n;
	uint64_t size = 0;
	int digits = 0;

	*data = NULL;
	*datalen = 0;
	*hdr = UINT64_MAX;
	if (len == 0)
		return 0;
	switch (d->state) {
	case CHUNK_SIZE:
		if ((lf = find_eol(buf, buf + len, &linelen)) == NULL)
			return len > CHUNK_LINE_MAX ? -1 : 0;
		if (linelen > CHUNK_LINE_MAX)
			return -1;
		for (i = 0; i < linelen; i++) {
			char ch = buf[i];
			int v;

			if (ch >= '0' && ch <= '9')
				v = ch - '0';
			else if (ch >= 'a' && ch <= 'f')
				v = ch - 'a' + 10;
			else if (ch >= 'A' && ch <= 'F')
				v = ch - 'A' + 10;
			else
				break;
			if (++digits > 15)
				return -1;
			size = size * 16 + (uint64_t)v;
		}
		if (digits == 0)
			return -1;
		/* Only extensions (";...") or blanks may follow. */
		while (i < linelen && (buf[i] == ' ' || buf[i] == '\t'))
			i++;
		if (i < linelen && buf[i] != ';')
			return -1;
		for (; i < linelen; i++)
			if ((unsigned char)buf[i] < 0x20 && buf[i] != '\t')
				return -1;
		*hdr = size;
		if (size == 0)
			d->state = CHUNK_TRAILER;
		else {
			d->state = CHUNK_DATA;
			d->remaining = size;
		}
		return (lf - buf) + 1;
	case CHUNK_DATA:
		n = len < d->remaining ? len : (size_t)d->remaining;
		*data = buf;
		*datalen = n;
		d->remaining -= n;
		if (d->remaining == 0)
			d->state = CHUNK_DATA_CRLF;
		return (ssize_t)n;
	case CHUNK_DATA_CRLF:
		if (buf[0] == '\n') {
			d->state = CHUNK_SIZE;
			return 1;
		}
		if (buf[0] != '\r')
			return -1;
		if (len < 2)
			return 0;
		if (buf[1] != '\n')
			return -1;
		d->state = CHUNK_SIZE;
		return 2;
	case CHUNK_TRAILER:
		if ((lf = find_eol(buf, buf + len, &linelen)) == NULL)
			return len > CHUNK_LINE_MAX ? -1 : 0;
		if (linelen > CHUNK_LINE_MAX)
			return -1;
		if (linelen == 0)
			d->state = CHUNK_DONE;
		return (lf - buf) + 1;
	case CHUNK_DONE:
		return 0;
	}
	return -1;
}
