/*
 * The filters of the toolchains' own settings files (fsfilter.c writes
 * the copies), each read line by line:
 *
 *   go:   every KEY=VALUE line of go's env file but those whose value
 *         names a URL with a user or password.
 *   mise: the [tools] and [alias]/[tool_alias] tables of a TOML file,
 *         following TOML's strings and brackets so that a table header
 *         inside a value is not taken for one.
 *   ini:  npm's npmrc and pip's pip.conf: every setting but those named
 *         for a credential (_authToken, _auth, password, username,
 *         cert, key, ...) and npm's per-registry ones ("//host/:..."),
 *         with the user and password taken out of every URL, so that a
 *         private registry stays the one asked (and refuses) rather
 *         than a public one standing in for it.
 *   java: a JDK's net.properties, whole, with the sandbox's proxy
 *         appended.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "launcher/fs/fs.h"
#include "launcher/fs/fs_int.h"

#define FSF_MISE_LEFT	"all tables but [tools] [alias] [tool_alias]"
#define FSF_USERINFO	"the user and password of URLs"

/*
 * Parts of an npmrc or pip.conf key (lower case) that name a
 * credential: the setting is left out, whatever its value.
 */
static const char *const fsf_ini_secret_keys[] = {
	"auth", "token", "pass", "secret", "user", "email", "cert", "key",
	"otp", "credential", "cookie", "header",
};

/* The mise tables shown. */
static const char *const fsf_mise_tables[] = {
	"tools", "alias", "tool_alias",
};

static int	 fsf_toml_header(const char *line, size_t len, int *keep);
static int	 fsf_toml_scan(const char *line, size_t len, int *mls,
		    int *depth);
static int	 fsf_ini_drop(const char *key, size_t len);
static int	 fsf_unuser(struct fsf_buf *, const char *, size_t);

/* A JDK's net.properties with the sandbox's proxy appended (fs.h). */
int
fsfilter_javanet(const char *text, size_t len, struct fsfilter_out *out)
{
	static const char proxy[] = "\n\n# pisbx-run: the sandbox's proxy\n"
	    "http.proxyHost=127.0.0.1\nhttp.proxyPort=3128\n"
	    "https.proxyHost=127.0.0.1\nhttps.proxyPort=3128\n"
	    "http.nonProxyHosts=localhost|127.*|[::1]\n";
	struct fsf_buf		 b = { NULL, 0, 0, 1 };

	if (memchr(text, '\0', len) != NULL)
		return -1;
	fsf_add(&b, text, len);
	/* Blank lines first: a last line ending in "\" continues no key. */
	fsf_add(&b, proxy, sizeof(proxy) - 1);
	return fsf_result(out, &b, b.ok ? 0 : -1);
}

/* go's env file without the settings that name a credential. */
int
fsfilter_goenv(const char *text, size_t len, struct fsfilter_out *out)
{
	struct fsf_buf	 b = { NULL, 0, 0, 1 };
	const char	*p = text, *nl, *eq, *end = text + len;
	char		*line;
	size_t		 n;

	fsf_add(&b, "", 0);
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		if (memchr(p, '\0', n) != NULL) {
			free(b.s);
			return -1;
		}
		if ((line = strndup(p, n)) == NULL) {
			free(b.s);
			return -1;
		}
		eq = strchr(line, '=');
		if (eq != NULL && fsfilter_secret(eq + 1)) {
			if (fsf_drop(&out->dropped, line,
			    (size_t)(eq - line)) == -1)
				b.ok = 0;
		} else {
			fsf_add(&b, line, n);
			fsf_add(&b, "\n", 1);
		}
		free(line);
		p += n + (nl != NULL);
	}
	if (!b.ok) {
		free(b.s);
		return -1;
	}
	out->text = b.s;
	out->len = b.len;
	return 0;
}

/*
 * A TOML table header at the start of a statement: 1 (keep set from
 * its first key), 0 (not a header), -1 (malformed).
 */
static int
fsf_toml_header(const char *line, size_t len, int *keep)
{
	const char	*p = line, *end = line + len, *k;
	char		 key[64];
	size_t		 n;
	int		 array = 0;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || *p != '[')
		return 0;
	p++;
	if (p < end && *p == '[') {
		array = 1;
		p++;
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p < end && (*p == '"' || *p == '\'')) {
		k = ++p;
		while (p < end && *p != k[-1] && *p != '\\')
			p++;
		if (p == end || *p != k[-1])
			return -1;	/* escapes: not one of ours */
		n = (size_t)(p - k);
		p++;
	} else {
		k = p;
		while (p < end && (isalnum((unsigned char)*p) || *p == '_' ||
		    *p == '-'))
			p++;
		n = (size_t)(p - k);
	}
	if (n == 0 || n >= sizeof(key))
		return n == 0 ? -1 : (*keep = 0, 1);
	memcpy(key, k, n);
	key[n] = '\0';
	*keep = !array && fsf_in(fsf_mise_tables, sizeof(fsf_mise_tables) /
	    sizeof(*fsf_mise_tables), key);
	return 1;
}

/*
 * Follow TOML's strings, comments and brackets over one line: *mls is
 * the multi-line string still open (0, '"' or '\''), *depth the open
 * brackets of a value.  -1 on a string left open at the line's end.
 */
static int
fsf_toml_scan(const char *line, size_t len, int *mls, int *depth)
{
	const char	*p = line, *end = line + len;
	char		 q;

	while (p < end) {
		if (*mls != 0) {
			if (*mls == '"' && *p == '\\') {
				p += 2;
				continue;
			}
			if (end - p >= 3 && p[0] == *mls && p[1] == *mls &&
			    p[2] == *mls) {
				p += 3;
				*mls = 0;
				continue;
			}
			p++;
			continue;
		}
		if (*p == '#')
			return 0;
		if (*p == '"' || *p == '\'') {
			q = *p;
			if (end - p >= 3 && p[1] == q && p[2] == q) {
				*mls = q;
				p += 3;
				continue;
			}
			for (p++; p < end && *p != q; p++)
				if (q == '"' && *p == '\\')
					p++;
			if (p >= end)
				return -1;
			p++;
			continue;
		}
		if (*p == '[' || *p == '{')
			(*depth)++;
		else if ((*p == ']' || *p == '}') && --*depth < 0)
			return -1;
		p++;
	}
	return 0;
}

/* A mise config's [tools] and [alias]/[tool_alias] tables only. */
int
fsfilter_mise(const char *text, size_t len, struct fsfilter_out *out)
{
	struct fsf_buf	 b = { NULL, 0, 0, 1 };
	const char	*p = text, *nl, *end = text + len, *q;
	size_t		 n;
	int		 keep = 0, mls = 0, depth = 0, h, left = 0;

	fsf_add(&b, "", 0);
	if (memchr(text, '\0', len) != NULL)
		goto fail;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		if (mls == 0 && depth == 0) {
			if ((h = fsf_toml_header(p, n, &keep)) == -1)
				goto fail;
			if (h == 1) {
				left |= !keep;
				if (keep) {
					fsf_add(&b, p, n);
					fsf_add(&b, "\n", 1);
				}
				p += n + (nl != NULL);
				continue;
			}
		}
		if (fsf_toml_scan(p, n, &mls, &depth) == -1)
			goto fail;
		if (keep) {
			fsf_add(&b, p, n);
			fsf_add(&b, "\n", 1);
		} else {
			/* Anything but blanks and comments is left out. */
			for (q = p; q < p + n && isspace((unsigned char)*q); q++)
				;
			left |= q < p + n && *q != '#';
		}
		p += n + (nl != NULL);
	}
	if (mls != 0 || depth != 0 || !b.ok)
		goto fail;
	if (left && fsf_drop(&out->dropped, FSF_MISE_LEFT,
	    strlen(FSF_MISE_LEFT)) == -1)
		goto fail;
	out->text = b.s;
	out->len = b.len;
	return 0;
fail:
	free(b.s);
	return -1;
}

/* Whether an npmrc or pip.conf key names a credential. */
static int
fsf_ini_drop(const char *key, size_t len)
{
	char	 k[128];
	size_t	 i;

	while (len > 0 && isspace((unsigned char)key[len - 1]))
		len--;
	/* npm's per-registry settings: "//host/path/:_authToken". */
	if (len >= 2 && key[0] == '/' && key[1] == '/')
		return 1;
	if (len >= sizeof(k))
		return 1;
	for (i = 0; i < len; i++)
		k[i] = (char)tolower((unsigned char)key[i]);
	k[len] = '\0';
	for (i = 0; i < sizeof(fsf_ini_secret_keys) /
	    sizeof(*fsf_ini_secret_keys); i++)
		if (strstr(k, fsf_ini_secret_keys[i]) != NULL)
			return 1;
	return 0;
}

/*
 * Add s to b with the user and password of every URL in it taken out
 * ("https://u:p@h/" is "https://h/"): 1 when there was one, else 0.
 */
static int
fsf_unuser(struct fsf_buf *b, const char *s, size_t n)
{
	const char	*p = s, *end = s + n, *q, *at;
	int		 found = 0;

	while (p < end) {
		q = memmem(p, (size_t)(end - p), "://", 3);
		if (q == NULL) {
			fsf_add(b, p, (size_t)(end - p));
			break;
		}
		q += 3;
		fsf_add(b, p, (size_t)(q - p));
		/* The authority: up to '/', '?', '#', a blank or a quote. */
		for (at = NULL, p = q; p < end && strchr("/?#\"' \t", *p) ==
		    NULL; p++)
			if (*p == '@')
				at = p;
		if (at != NULL) {
			found = 1;
			q = at + 1;
		}
		fsf_add(b, q, (size_t)(p - q));
	}
	return found;
}

/* An npmrc or pip.conf without its credentials (fs.h). */
int
fsfilter_ini(const char *text, size_t len, struct fsfilter_out *out)
{
	struct fsf_buf	 b = { NULL, 0, 0, 1 };
	struct fsf_buf	 line = { NULL, 0, 0, 1 };
	const char	*p = text, *nl, *end = text + len, *q, *sep;
	size_t		 n, klen;
	int		 drop = 0, secdrop = 0, rc = -1, stripped;

	fsf_add(&b, "", 0);
	if (memchr(text, '\0', len) != NULL)
		goto done;
	for (; p < end; p += n + (nl != NULL)) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		for (q = p; q < p + n && (*q == ' ' || *q == '\t'); q++)
			;
		line.len = 0;
		fsf_add(&line, "", 0);
		stripped = fsf_unuser(&line, p, n);
		if (q < p + n && *q == '[') {
			/* A section: shown, unless it names a credential. */
			if ((secdrop = line.ok && fsfilter_secret(line.s)) &&
			    fsf_drop(&out->dropped, "a section", 9) == -1)
				goto done;
			drop = 0;
			if (secdrop)
				continue;
		} else if (q == p + n || *q == '#' || *q == ';') {
			/* Blank, a comment: shown, without users. */
			if (line.ok && fsfilter_secret(line.s))
				continue;
		} else if (secdrop) {
			drop = 1;
			continue;
		} else if (q > p) {
			/*
			 * A value's next line (pip.conf): with its first,
			 * on its own when it names a credential.
			 */
			if (drop)
				continue;
			if (line.ok && fsfilter_secret(line.s)) {
				if (fsf_drop(&out->dropped, "a value's line",
				    14) == -1)
					goto done;
				continue;
			}
		} else {
			/* "key = value"; pip's "key: value" too. */
			if ((sep = memchr(p, '=', n)) == NULL)
				sep = memchr(p, ':', n);
			klen = sep != NULL ? (size_t)(sep - p) : n;
			drop = fsf_ini_drop(p, klen) || (line.ok &&
			    fsfilter_secret(line.s));
			if (drop) {
				while (klen > 0 &&
				    isspace((unsigned char)p[klen - 1]))
					klen--;
				if (fsf_drop(&out->dropped, p, klen) == -1)
					goto done;
				continue;
			}
		}
		if (stripped && fsf_drop(&out->dropped,
		    FSF_USERINFO, strlen(FSF_USERINFO)) == -1)
			goto done;
		fsf_add(&b, line.s != NULL ? line.s : "", line.len);
		fsf_add(&b, "\n", 1);
	}
	if (b.ok && line.ok)
		rc = 0;
done:
	free(line.s);
	return fsf_result(out, &b, rc);
}
