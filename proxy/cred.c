/*
 * Masked credentials (cred.h): the run's placeholder table and the
 * byte-stream work on it.  The values live only here, in the proxy's
 * memory, and are wiped when the table is freed.
 *
 * Finding a placeholder is finding "pisbx_" (memmem, which runs at
 * memory speed on text that has none) and comparing the 32 random bytes
 * after it with the heads of the table; a stream keeps the last
 * CRED_PLACEHOLDER_MIN - 1 bytes of one piece to see a head that
 * straddles two.
 */
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/base64.h"
#include "common/log.h"
#include "common/secmem.h"
#include "policy/policy.h"
#include "proxy/cred.h"

#define CRED_PREFIX_LEN		(sizeof(CRED_PREFIX) - 1)
#define CRED_ALPHABET		"abcdefghijklmnopqrstuvwxyz0123456789"
#define CRED_ALPHABET_LEN	36
/* Random bytes at or over this are redrawn: 252 = 7 * 36, no bias. */
#define CRED_RANDOM_LIMIT	252

struct cred_table {
	struct cred	*v;
	size_t		 n;
	size_t		 maxplen;	/* longest placeholder */
	size_t		 maxvlen;	/* longest value */
};

struct cred_stream {
	const struct cred_table	*t;
	const struct config	*conf;
	const struct host	*host;
	uint16_t		 port;
	enum cred_dir		 dir;
	char			*hold;	/* bytes held back from the last feed */
	size_t			 nhold;
	unsigned char		 first[256 / 8];	/* HIDE: first bytes */
	size_t			*next;	/* HIDE: next match of each value */
	enum cred_fit		 fit;	/* INJECT: where the value goes */
	uint8_t			 used[CRED_MAX];	/* INJECT: swapped */
};

static int	 cred_random_chars(char *, size_t);
static const struct cred *cred_head(const struct cred_table *, const char *);
static const struct cred *cred_find(const struct cred_table *, const char *,
		    size_t, size_t, size_t *);
static int	 cred_append(char **, size_t *, const void *, size_t);
static int	 cred_swap_in(const struct cred_table *, const struct config *,
		    const struct host *, uint16_t, const char *, size_t,
		    enum cred_fit, char **, size_t *, const struct cred **);
static int	 cred_fits(const struct cred *, enum cred_fit);
static int	 cred_basic_at(const char *, size_t, const char *, size_t,
		    size_t *, size_t *);
static int	 cred_inject_run(struct cred_stream *, const char *, size_t,
		    int, char **, size_t *, const struct cred **);
static const struct cred *cred_hide_overlap(const struct cred_stream *,
		    const char *, size_t, size_t, size_t, int, size_t *);
static int	 cred_hide_run(struct cred_stream *, const char *, size_t,
		    int, char **, size_t *);

struct cred_table *
cred_table_new(void)
{
	return calloc(1, sizeof(struct cred_table));
}

void
cred_table_free(struct cred_table *t)
{
	size_t	i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++) {
		secmem_wipe(t->v[i].value, t->v[i].vlen);
		free(t->v[i].value);
		free(t->v[i].placeholder);
		free(t->v[i].name);
	}
	free(t->v);
	free(t);
}

/* Fill buf with len random characters of [a-z0-9]; 0 or -1. */
static int
cred_random_chars(char *buf, size_t len)
{
	unsigned char	r[64];
	size_t		i, o = 0;

	while (o < len) {
		if (secmem_random(r, sizeof(r)) == -1)
			return -1;
		for (i = 0; i < sizeof(r) && o < len; i++) {
			if (r[i] >= CRED_RANDOM_LIMIT)
				continue;
			buf[o++] = CRED_ALPHABET[r[i] % CRED_ALPHABET_LEN];
		}
	}
	secmem_wipe(r, sizeof(r));
	return 0;
}

int
cred_table_add(struct cred_table *t, const char *name, size_t entry,
    const char *value, size_t vlen, const char **placeholder)
{
	struct cred	*c, *nv;
	size_t		 i, plen;
	char		*p = NULL;

	if (vlen == 0 || vlen > CRED_VALUE_MAX)
		return -1;
	for (i = 0; i < t->n; i++) {
		c = &t->v[i];
		if (c->entry == entry && c->vlen == vlen &&
		    secmem_cmp(c->value, value, vlen) == 0) {
			*placeholder = c->placeholder;
			return 0;
		}
	}
	if (t->n >= CRED_MAX)
		return -1;
	plen = vlen > CRED_PLACEHOLDER_MIN ? vlen : CRED_PLACEHOLDER_MIN;
	if ((p = malloc(plen + 1)) == NULL)
		return -1;
	memcpy(p, CRED_PREFIX, CRED_PREFIX_LEN);
	/*
	 * A head seen twice would make two credentials one: draw again.
	 * So does a last byte that could begin "pisbx_" ('p', or the end
	 * of "pi" ... "pisbx"): the placeholder cut short by one and
	 * followed by another's would read as itself whole, and the
	 * other's head, which the scan skips with it, would go out
	 * unseen.  With '_' outside the alphabet, no head can begin
	 * anywhere else inside a placeholder.
	 */
	do {
		if (cred_random_chars(p + CRED_PREFIX_LEN,
		    plen - CRED_PREFIX_LEN) == -1)
			goto fail;
	} while (cred_head(t, p) != NULL ||
	    memchr(CRED_PREFIX, p[plen - 1], CRED_PREFIX_LEN - 1) != NULL);
	p[plen] = '\0';
	if ((nv = reallocarray(t->v, t->n + 1, sizeof(*nv))) == NULL)
		goto fail;
	t->v = nv;
	c = &t->v[t->n];
	memset(c, 0, sizeof(*c));
	if ((c->name = strdup(name)) == NULL ||
	    (c->value = malloc(vlen + 1)) == NULL) {
		free(c->name);
		goto fail;
	}
	memcpy(c->value, value, vlen);
	c->value[vlen] = '\0';
	c->vlen = vlen;
	c->entry = entry;
	c->placeholder = p;
	c->plen = plen;
	t->n++;
	if (plen > t->maxplen)
		t->maxplen = plen;
	if (vlen > t->maxvlen)
		t->maxvlen = vlen;
	*placeholder = p;
	return 0;
fail:
	free(p);
	return -1;
}

size_t
cred_table_count(const struct cred_table *t)
{
	return t == NULL ? 0 : t->n;
}

const struct cred *
cred_table_get(const struct cred_table *t, size_t i)
{
	return i < t->n ? &t->v[i] : NULL;
}

int
cred_injects(const struct config *conf, const struct cred *c,
    const struct host *h, uint16_t port)
{
	if (conf == NULL || h == NULL || c->entry >= conf->creds.n)
		return 0;
	return config_cred_injects(conf, &conf->creds.v[c->entry], h, port);
}

int
cred_injects_any(const struct cred_table *t, const struct config *conf,
    const struct host *h, uint16_t port)
{
	size_t	i;

	for (i = 0; t != NULL && i < t->n; i++)
		if (cred_injects(conf, &t->v[i], h, port))
			return 1;
	return 0;
}

/*
 * The credential whose head is at p (CRED_PLACEHOLDER_MIN bytes that
 * begin with CRED_PREFIX), or NULL.
 */
static const struct cred *
cred_head(const struct cred_table *t, const char *p)
{
	size_t	i;

	for (i = 0; i < t->n; i++)
		if (memcmp(t->v[i].placeholder + CRED_PREFIX_LEN,
		    p + CRED_PREFIX_LEN,
		    CRED_PLACEHOLDER_MIN - CRED_PREFIX_LEN) == 0)
			return &t->v[i];
	return NULL;
}

/*
 * The first head within buf[from, len) that is whole in buf; *at gets
 * its offset.  Only heads that begin before end are looked at.
 */
static const struct cred *
cred_find(const struct cred_table *t, const char *buf, size_t len,
    size_t from, size_t *at)
{
	const struct cred	*c;
	const char		*p;

	while (from + CRED_PLACEHOLDER_MIN <= len) {
		p = memmem(buf + from, len - from, CRED_PREFIX,
		    CRED_PREFIX_LEN);
		if (p == NULL || (size_t)(p - buf) + CRED_PLACEHOLDER_MIN > len)
			return NULL;
		if ((c = cred_head(t, p)) != NULL) {
			*at = (size_t)(p - buf);
			return c;
		}
		from = (size_t)(p - buf) + 1;
	}
	return NULL;
}

const struct cred *
cred_scan(const struct cred_table *t, struct cred_scan *s, const void *bufv,
    size_t len)
{
	const char		*buf = bufv;
	const struct cred	*c;
	char			 tmp[2 * (CRED_PLACEHOLDER_MIN - 1)];
	size_t			 n, at, keep;

	if (t == NULL || t->n == 0)
		return NULL;
	/* A head that begins in the carry and ends in buf. */
	if (s->ncarry > 0) {
		n = len < CRED_PLACEHOLDER_MIN - 1 ? len :
		    CRED_PLACEHOLDER_MIN - 1;
		memcpy(tmp, s->carry, s->ncarry);
		memcpy(tmp + s->ncarry, buf, n);
		if ((c = cred_find(t, tmp, s->ncarry + n, 0, &at)) != NULL &&
		    at < s->ncarry)
			return c;
	}
	if ((c = cred_find(t, buf, len, 0, &at)) != NULL)
		return c;
	/* Keep the last CRED_PLACEHOLDER_MIN - 1 bytes of carry + buf. */
	if (len >= CRED_PLACEHOLDER_MIN - 1) {
		memcpy(s->carry, buf + len - (CRED_PLACEHOLDER_MIN - 1),
		    CRED_PLACEHOLDER_MIN - 1);
		s->ncarry = CRED_PLACEHOLDER_MIN - 1;
	} else {
		keep = s->ncarry + len > CRED_PLACEHOLDER_MIN - 1 ?
		    CRED_PLACEHOLDER_MIN - 1 - len : s->ncarry;
		memmove(s->carry, s->carry + s->ncarry - keep, keep);
		memcpy(s->carry + keep, buf, len);
		s->ncarry = keep + len;
	}
	return NULL;
}

/* Append len bytes to the malloc'ed *out of *outlen; 0 or -1. */
static int
cred_append(char **out, size_t *outlen, const void *p, size_t len)
{
	char	*n;

	if ((n = realloc(*out, *outlen + len + 1)) == NULL)
		return -1;
	if (len > 0)
		memcpy(n + *outlen, p, len);
	*outlen += len;
	n[*outlen] = '\0';
	*out = n;
	return 0;
}

int
cred_swap_buf(const struct cred_table *t, const struct config *conf,
    const struct host *h, uint16_t port, const char *in, size_t len,
    char **out, size_t *outlen, const struct cred **leak)
{
	return cred_swap_in(t, conf, h, port, in, len, CRED_FIT_HEADER, out,
	    outlen, leak);
}

int
cred_swap_target(const struct cred_table *t, const struct config *conf,
    const struct host *h, uint16_t port, const char *in, size_t len,
    char **out, size_t *outlen, const struct cred **leak)
{
	return cred_swap_in(t, conf, h, port, in, len, CRED_FIT_TARGET, out,
	    outlen, leak);
}

/*
 * Whether c's value may stand as it is where fit says.  In a header or
 * the request line, a CR, LF or NUL would end the field or the head
 * where it stands: what follows, the command's own bytes, would be read
 * upstream as headers or a request of its own, past every rule.  In the
 * request target a space ends the target (the rest is read as the
 * version), and a control byte, DEL or a byte over 0x7f is no URI
 * character (RFC 3986): servers refuse the line or split it their own
 * way.  A header value may hold spaces (RFC 9110 5.5).
 */
static int
cred_fits(const struct cred *c, enum cred_fit fit)
{
	const unsigned char	*v = (const unsigned char *)c->value;
	size_t			 i;

	if (fit == CRED_FIT_ANY)
		return 1;
	for (i = 0; i < c->vlen; i++) {
		if (v[i] == '\r' || v[i] == '\n' || v[i] == '\0')
			return 0;
		if (fit == CRED_FIT_TARGET && (v[i] <= ' ' || v[i] >= 0x7f))
			return 0;
	}
	return 1;
}

const char *
cred_unfit_why(const struct config *conf, const struct cred *c,
    const struct host *h, uint16_t port, enum cred_fit fit)
{
	if (!cred_injects(conf, c, h, port))
		return NULL;
	if (!cred_fits(c, CRED_FIT_HEADER))
		return "its value has a line break (or a NUL), which would "
		    "end the request head where it stands";
	if (!cred_fits(c, fit))
		return "its value cannot be put in a request target (it has "
		    "a space, a control byte or a byte that is not ASCII)";
	return "its placeholder was cut short or altered";
}

/*
 * cred_swap_buf at fit: a value that cannot stand there as it is is
 * refused (*leak, -1).  A Basic credential's decoded text is encoded
 * again: anything goes (CRED_FIT_ANY).
 */
static int
cred_swap_in(const struct cred_table *t, const struct config *conf,
    const struct host *h, uint16_t port, const char *in, size_t len,
    enum cred_fit fit, char **out, size_t *outlen, const struct cred **leak)
{
	struct cred_stream	 s;
	int			 r;

	memset(&s, 0, sizeof(s));
	s.t = t;
	s.conf = conf;
	s.host = h;
	s.port = port;
	s.dir = CRED_INJECT;
	s.fit = fit;
	*out = NULL;
	*outlen = 0;
	if (cred_append(out, outlen, "", 0) == -1)
		return -2;
	if (t == NULL || t->n == 0) {
		if (cred_append(out, outlen, in, len) == -1)
			goto oom;
		return 0;
	}
	r = cred_inject_run(&s, in, len, 1, out, outlen, leak);
	free(s.hold);
	if (r < 0)
		goto fail;
	return r;
oom:
	r = -2;
fail:
	free(*out);
	*out = NULL;
	*outlen = 0;
	return r;
}

/*
 * Whether header name: value is an Authorization or Proxy-Authorization
 * Basic credential (RFC 7617: "Basic" 1*SP token68, the scheme
 * case-insensitive); its token68 is value[*start, *end).  0 or -1.
 */
static int
cred_basic_at(const char *name, size_t namelen, const char *value,
    size_t valuelen, size_t *start, size_t *end)
{
	size_t	 i, n;

	if (!((namelen == 13 && strncasecmp(name, "Authorization", 13) == 0) ||
	    (namelen == 19 &&
	    strncasecmp(name, "Proxy-Authorization", 19) == 0)))
		return -1;
	for (i = 0; i < valuelen && (value[i] == ' ' || value[i] == '\t'); i++)
		;
	if (valuelen - i < 6 || strncasecmp(value + i, "Basic", 5) != 0 ||
	    value[i + 5] != ' ')
		return -1;
	for (i += 5; i < valuelen && value[i] == ' '; i++)
		;
	for (n = valuelen; n > i && (value[n - 1] == ' ' ||
	    value[n - 1] == '\t'); n--)
		;
	*start = i;
	*end = n;
	return 0;
}

void
cred_mark(const struct cred_table *t, const void *buf, size_t len,
    uint8_t *used)
{
	const struct cred	*c;
	size_t			 i;

	for (i = 0; t != NULL && i < t->n && i < CRED_MAX; i++) {
		c = &t->v[i];
		if (memmem(buf, len, c->placeholder, CRED_PLACEHOLDER_MIN) !=
		    NULL)
			used[i] = 1;
	}
}

void
cred_mark_header(const struct cred_table *t, const char *name,
    size_t namelen, const char *value, size_t valuelen, uint8_t *used)
{
	char	*dec;
	size_t	 start, end, declen;

	cred_mark(t, value, valuelen, used);
	if (cred_basic_at(name, namelen, value, valuelen, &start, &end) == -1 ||
	    end == start ||
	    (dec = malloc(BASE64_DECLEN(end - start) + 1)) == NULL)
		return;
	if (base64_decode(value + start, end - start, dec, &declen) == 0) {
		cred_mark(t, dec, declen, used);
		secmem_wipe(dec, declen);
	}
	free(dec);
}

int
cred_swap_header(const struct cred_table *t, const struct config *conf,
    const struct host *h, uint16_t port, const char *name, size_t namelen,
    const char *value, size_t valuelen, char **out, size_t *outlen,
    const struct cred **leak)
{
	char		*dec = NULL, *sw = NULL, *enc = NULL;
	size_t		 start, declen, swlen, n;
	int		 r;

	if (cred_basic_at(name, namelen, value, valuelen, &start, &n) == -1)
		return cred_swap_buf(t, conf, h, port, value, valuelen, out,
		    outlen, leak);
	if ((dec = malloc(BASE64_DECLEN(n - start) + 1)) == NULL)
		return -2;
	if (n == start ||
	    base64_decode(value + start, n - start, dec, &declen) == -1) {
		/* Not base64: what it is is scanned as it is. */
		free(dec);
		return cred_swap_buf(t, conf, h, port, value, valuelen, out,
		    outlen, leak);
	}
	r = cred_swap_in(t, conf, h, port, dec, declen, CRED_FIT_ANY, &sw,
	    &swlen, leak);
	secmem_wipe(dec, declen);
	free(dec);
	if (r <= 0) {
		free(sw);
		if (r < 0)
			return r;
		/* Nothing swapped: the value as it came. */
		*out = NULL;
		*outlen = 0;
		if (cred_append(out, outlen, value, valuelen) == -1)
			return -2;
		return 0;
	}
	if ((enc = malloc(BASE64_ENCLEN(swlen) + 1)) == NULL) {
		secmem_wipe(sw, swlen);
		free(sw);
		return -2;
	}
	n = base64_encode(sw, swlen, enc);
	secmem_wipe(sw, swlen);
	free(sw);
	*out = NULL;
	*outlen = 0;
	if (cred_append(out, outlen, value, start) == -1 ||
	    cred_append(out, outlen, enc, n) == -1) {
		free(*out);
		*out = NULL;
		secmem_wipe(enc, n);
		free(enc);
		return -2;
	}
	secmem_wipe(enc, n);
	free(enc);
	return r;
}

int
cred_hide_buf(const struct cred_table *t, const char *in, size_t len,
    char **out, size_t *outlen)
{
	struct cred_stream	*s;
	const struct cred	*leak = NULL;
	int			 r;

	*out = NULL;
	*outlen = 0;
	if ((s = cred_stream_new(t, NULL, NULL, 0, CRED_HIDE)) == NULL)
		return -2;
	r = cred_stream_feed(s, in, len, 1, out, outlen, &leak);
	cred_stream_free(s);
	if (r < 0) {
		free(*out);
		*out = NULL;
		*outlen = 0;
		return -2;
	}
	return r;
}

struct cred_stream *
cred_stream_new(const struct cred_table *t, const struct config *conf,
    const struct host *h, uint16_t port, enum cred_dir dir)
{
	struct cred_stream	*s;
	size_t			 i;
	unsigned char		 b;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->t = t;
	s->conf = conf;
	s->host = h;
	s->port = port;
	s->dir = dir;
	if (dir == CRED_HIDE && t != NULL && t->n > 0) {
		if ((s->next = calloc(t->n, sizeof(*s->next))) == NULL) {
			free(s);
			return NULL;
		}
		for (i = 0; i < t->n; i++) {
			b = (unsigned char)t->v[i].value[0];
			s->first[b / 8] |= 1u << (b % 8);
		}
	}
	return s;
}

void
cred_stream_free(struct cred_stream *s)
{
	if (s == NULL)
		return;
	if (s->hold != NULL) {
		/* It may hold a value (HIDE) or part of one. */
		secmem_wipe(s->hold, s->nhold);
		free(s->hold);
	}
	free(s->next);
	free(s);
}

void
cred_stream_mark(const struct cred_stream *s, uint8_t *used)
{
	size_t	 i;

	for (i = 0; s->t != NULL && i < s->t->n && i < CRED_MAX; i++)
		if (s->used[i])
			used[i] = 1;
}

int
cred_stream_length_changes(const struct cred_stream *s)
{
	const struct cred	*c;
	size_t			 i;

	if (s->t == NULL)
		return 0;
	for (i = 0; i < s->t->n; i++) {
		c = &s->t->v[i];
		if (c->plen == c->vlen)
			continue;
		if (s->dir == CRED_HIDE ||
		    cred_injects(s->conf, c, s->host, s->port))
			return 1;
	}
	return 0;
}

/*
 * INJECT over hold + buf (buf is the held bytes and the new ones, len in
 * all): every placeholder that may go to the stream's host becomes its
 * value, any other head is a leak.  Bytes that could begin a placeholder
 * are held back unless final.
 */
static int
cred_inject_run(struct cred_stream *s, const char *buf, size_t len,
    int final, char **out, size_t *outlen, const struct cred **leak)
{
	const struct cred_table	*t = s->t;
	const struct cred	*c;
	const char		*p;
	size_t			 cur = 0, at, stop, i, k, m;
	int			 swaps = 0;
	char			*nh;

	for (;;) {
		p = memmem(buf + cur, len - cur, CRED_PREFIX, CRED_PREFIX_LEN);
		if (p == NULL)
			break;
		at = (size_t)(p - buf);
		if (at + CRED_PLACEHOLDER_MIN > len) {
			if (final)
				break;
			/* A head that may be completed by the next feed. */
			goto hold;
		}
		if ((c = cred_head(t, p)) == NULL) {
			if (cred_append(out, outlen, buf + cur,
			    at + 1 - cur) == -1)
				return -2;
			cur = at + 1;
			continue;
		}
		if (!cred_injects(s->conf, c, s->host, s->port)) {
			*leak = c;
			return -1;
		}
		if (at + c->plen > len && !final) {
			/* The padding may come with the next feed. */
			stop = at;
			goto hold_at;
		}
		if (at + c->plen > len ||
		    memcmp(p, c->placeholder, c->plen) != 0) {
			/* A head with the wrong tail: refused, not guessed. */
			*leak = c;
			return -1;
		}
		/* A value that cannot stand here as it is (cred_fits). */
		if (!cred_fits(c, s->fit)) {
			*leak = c;
			return -1;
		}
		if (cred_append(out, outlen, buf + cur, at - cur) == -1 ||
		    cred_append(out, outlen, c->value, c->vlen) == -1)
			return -2;
		s->used[c - t->v] = 1;
		swaps++;
		cur = at + c->plen;
	}
	if (final) {
		if (cred_append(out, outlen, buf + cur, len - cur) == -1)
			return -2;
		return swaps;
	}
hold:
	/*
	 * Hold back the longest tail that is a prefix of CRED_PREFIX or of
	 * a head: from the first "pisbx_" whose head is not whole, else
	 * from a partial "pisbx_" at the end.
	 */
	stop = len;
	k = len - cur < CRED_PLACEHOLDER_MIN - 1 ? len - cur :
	    CRED_PLACEHOLDER_MIN - 1;
	for (i = len - k; i < len; i++) {
		m = len - i < CRED_PREFIX_LEN ? len - i : CRED_PREFIX_LEN;
		if (memcmp(buf + i, CRED_PREFIX, m) == 0) {
			stop = i;
			break;
		}
	}
hold_at:
	if (cred_append(out, outlen, buf + cur, stop - cur) == -1)
		return -2;
	if ((nh = malloc(len - stop + 1)) == NULL)
		return -2;
	memcpy(nh, buf + stop, len - stop);
	free(s->hold);
	s->hold = nh;
	s->nhold = len - stop;
	return swaps;
}

/*
 * Of the values that begin inside buf[from, end) and go past end, the
 * one that goes furthest; *at gets where it begins.  One that goes past
 * len too counts while its bytes up to len match it (it goes furthest:
 * the bytes must wait), unless final (then it is cut, no value).  NULL:
 * none.  Each place of a run is looked at once: the caller goes on from
 * the old end, as nothing before it went past the new one.
 */
static const struct cred *
cred_hide_overlap(const struct cred_stream *s, const char *buf, size_t len,
    size_t from, size_t end, int final, size_t *at)
{
	const struct cred	*c, *best = NULL;
	size_t			 i, j, n;
	unsigned char		 b;

	for (j = from; j < end && j < len; j++) {
		b = (unsigned char)buf[j];
		if ((s->first[b / 8] & (1u << (b % 8))) == 0)
			continue;
		for (i = 0; i < s->t->n; i++) {
			c = &s->t->v[i];
			if (j + c->vlen <= end ||
			    (final && j + c->vlen > len) ||
			    (best != NULL && j + c->vlen <= *at + best->vlen))
				continue;
			n = len - j < c->vlen ? len - j : c->vlen;
			if (memcmp(buf + j, c->value, n) == 0) {
				best = c;
				*at = j;
			}
		}
	}
	return best;
}

/*
 * HIDE over buf (the held bytes and the new ones): every value becomes
 * its placeholder; a tail that is a prefix of some value is held back
 * unless final.
 */
static int
cred_hide_run(struct cred_stream *s, const char *buf, size_t len, int final,
    char **out, size_t *outlen)
{
	const struct cred_table	*t = s->t;
	const struct cred	*c;
	const char		*p;
	size_t			 cur = 0, i, best, bi, stop, k, m, end, at;
	size_t			 held = SIZE_MAX, mark;
	int			 swaps = 0, marked;
	char			*nh;
	unsigned char		 b;

	for (i = 0; i < t->n; i++) {
		p = memmem(buf, len, t->v[i].value, t->v[i].vlen);
		s->next[i] = p == NULL ? SIZE_MAX : (size_t)(p - buf);
	}
	for (;;) {
		best = SIZE_MAX;
		bi = 0;
		for (i = 0; i < t->n; i++) {
			/* The earliest match; the longest at one place. */
			if (s->next[i] < best || (s->next[i] == best &&
			    best != SIZE_MAX && t->v[i].vlen > t->v[bi].vlen)) {
				best = s->next[i];
				bi = i;
			}
		}
		if (best == SIZE_MAX)
			break;
		/*
		 * The run from best: this value, then each that begins
		 * inside the run and goes past its end (one's tail is
		 * another's head), each its placeholder, so that no byte of
		 * any goes out.  One that may go past the bytes come so far
		 * takes back what the run wrote and holds the bytes from
		 * best, to be looked at again with the next.
		 */
		if (cred_append(out, outlen, buf + cur, best - cur) == -1)
			return -2;
		mark = *outlen;
		marked = swaps;
		c = &t->v[bi];
		k = best + 1;
		for (end = best + c->vlen; c != NULL && end <= len;) {
			if (cred_append(out, outlen, c->placeholder,
			    c->plen) == -1)
				return -2;
			swaps++;
			if ((c = cred_hide_overlap(s, buf, len, k, end, final,
			    &at)) != NULL) {
				k = end;
				end = at + c->vlen;
			}
		}
		if (c != NULL) {
			/*
			 * Values that keep running into each other (a
			 * value of one byte repeated) would hold the whole
			 * response: past four values' worth, it ends.
			 */
			if (len - best > 4 * (size_t)CRED_VALUE_MAX) {
				log_warnx("credentials: the value of %s runs "
				    "into itself or another over more than "
				    "%d KiB of a response; the connection "
				    "is closed rather than the response held "
				    "(a masked value should not be one byte "
				    "repeated)", c->name,
				    4 * CRED_VALUE_MAX / 1024);
				return -2;
			}
			*outlen = mark;
			(*out)[mark] = '\0';
			swaps = marked;
			cur = held = best;
			break;
		}
		cur = end;
		for (i = 0; i < t->n; i++) {
			if (s->next[i] == SIZE_MAX || s->next[i] >= cur)
				continue;
			p = memmem(buf + cur, len - cur, t->v[i].value,
			    t->v[i].vlen);
			s->next[i] = p == NULL ? SIZE_MAX : (size_t)(p - buf);
		}
	}
	stop = held != SIZE_MAX ? held : len;
	if (!final && held == SIZE_MAX) {
		k = len - cur < t->maxvlen - 1 ? len - cur : t->maxvlen - 1;
		for (i = len - k; i < len && stop == len; i++) {
			b = (unsigned char)buf[i];
			if ((s->first[b / 8] & (1u << (b % 8))) == 0)
				continue;
			for (m = 0; m < t->n; m++) {
				c = &t->v[m];
				if (c->vlen > len - i &&
				    memcmp(buf + i, c->value, len - i) == 0) {
					stop = i;
					break;
				}
			}
		}
	}
	if (cred_append(out, outlen, buf + cur, stop - cur) == -1)
		return -2;
	if (stop < len) {
		if ((nh = malloc(len - stop)) == NULL)
			return -2;
		memcpy(nh, buf + stop, len - stop);
		s->hold = nh;
		s->nhold = len - stop;
	}
	return swaps;
}

int
cred_stream_feed(struct cred_stream *s, const void *bufv, size_t len,
    int final, char **out, size_t *outlen, const struct cred **leak)
{
	const char	*buf = bufv;
	char		*win = NULL, *oldhold;
	size_t		 wlen, oldn;
	int		 r;

	if (buf == NULL)	/* no bytes: memmem and memcpy want a pointer */
		buf = "";
	if (cred_append(out, outlen, "", 0) == -1)
		return -2;
	if (s->t == NULL || s->t->n == 0) {
		if (cred_append(out, outlen, buf, len) == -1)
			return -2;
		return 0;
	}
	/* The window: what was held back, then the new bytes. */
	oldhold = s->hold;
	oldn = s->nhold;
	s->hold = NULL;
	s->nhold = 0;
	if (oldn > 0) {
		wlen = oldn + len;
		if ((win = malloc(wlen)) == NULL) {
			s->hold = oldhold;
			s->nhold = oldn;
			return -2;
		}
		memcpy(win, oldhold, oldn);
		if (len > 0)
			memcpy(win + oldn, buf, len);
		secmem_wipe(oldhold, oldn);
		free(oldhold);
		buf = win;
		len = wlen;
	} else
		free(oldhold);
	if (s->dir == CRED_INJECT)
		r = cred_inject_run(s, buf, len, final, out, outlen, leak);
	else
		r = cred_hide_run(s, buf, len, final, out, outlen);
	if (win != NULL) {
		secmem_wipe(win, len);
		free(win);
	}
	return r;
}
