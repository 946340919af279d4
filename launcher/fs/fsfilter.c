/*
 * Filtered copies of the settings files the sandbox is shown from the
 * hidden home: a toolchain needs some of what they say (git's identity
 * and aliases, go's GOPRIVATE, mise's tool versions), while the same
 * files are where people keep registry and forge credentials
 * (url.<https://TOKEN@host/>.insteadOf, http.extraHeader, a credential
 * helper, sendemail.smtpPass, a GOPROXY with a password, mise's [env]).
 * Each filter keeps what is on its list and drops the rest; a file it
 * cannot read as its format is shown empty.  The copies are written in
 * the run directory and bound over the originals (fspolicy.c).
 *
 *   git:  sections on an allow-list (user, alias, core, ...), http with
 *         its non-secret keys only, core without the programs it names
 *         (askPass, sshCommand, fsmonitor); any entry naming a URL with
 *         a user or password, or an Authorization header, dropped;
 *         include.path and includeIf.*.path point at filtered copies of
 *         their files.
 *   go:   every KEY=VALUE line of go's env file but those whose value
 *         names a URL with a user or password.
 *   mise: the [tools] and [alias]/[tool_alias] tables of a TOML file.
 *   ini:  npm's npmrc and pip's pip.conf: every setting but those named
 *         for a credential (_authToken, _auth, password, username,
 *         cert, key, ...) and npm's per-registry ones ("//host/:..."),
 *         with the user and password taken out of every URL, so that a
 *         private registry stays the one asked (and refuses) rather
 *         than a public one standing in for it.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "launcher/fs/fs.h"

#define FSF_MAXFILE	(1024 * 1024)	/* a settings file, at most */
#define FSF_MAXDEPTH	10		/* git's own include depth */
#define FSF_MAXFILES	64		/* copies written for one file */
#define FSF_UNREAD	"everything (not read)"
#define FSF_MISE_LEFT	"all tables but [tools] [alias] [tool_alias]"
#define FSF_USERINFO	"the user and password of URLs"

/* A growing output buffer; ok drops to 0 on no memory. */
struct fsf_buf {
	char	*s;
	size_t	 len, cap;
	int	 ok;
};

/* One entry of a git config, as git reads it. */
struct fsf_git_ent {
	char	 sec[128];	/* lower case, before any '.' */
	char	 sub[1024];	/* the subsection, or the rest of [a.b] */
	int	 has_sub, dotted;
	char	 key[128];	/* lower case */
	char	*val;		/* NULL: a bare key (boolean true) */
};

/* The git reader's state over one buffer. */
struct fsf_git {
	const char	*p, *end;
	int		 eof;
	struct fsf_git_ent e;
	struct fsf_buf	 val;
};

/* What writing a file's copies needs. */
struct fsf_ctx {
	const char	*outdir;
	const char	*home;
	int		 nfiles;	/* copies written */
	int		 depth;		/* of the file being read */
	char		*dropped;	/* "sec.key, ..." of them all */
};

/* Sections of a git config shown in the sandbox, whole. */
static const char *const fsf_git_sections[] = {
	"add", "advice", "alias", "am", "apply", "blame", "branch",
	"checkout", "clean", "clone", "color", "column", "commit", "core",
	"diff", "difftool", "feature", "fetch", "filter", "format", "gc",
	"gpg", "grep", "help", "i18n", "index", "init", "interactive", "lfs",
	"log", "merge", "mergetool", "pack", "pager", "protocol", "pull",
	"push", "rebase", "rerere", "safe", "sequence", "stash", "status",
	"submodule", "tag", "trailer", "transfer", "url", "user",
	"versionsort", "worktree",
};

/*
 * Keys of core that name a program git runs for the user, set up for the
 * host: an askpass that hands out a credential, the ssh command with its
 * identity and proxy (inside, GIT_SSH_COMMAND goes through the sandbox's
 * proxy), an fsmonitor hook or daemon.  Dropped.
 */
static const char *const fsf_core_drop[] = {
	"askpass", "fsmonitor", "sshcommand",
};

/* Keys of http (and http.<url>) that carry no credential. */
static const char *const fsf_http_keys[] = {
	"sslverify", "sslcainfo", "sslcapath", "sslbackend", "sslversion",
	"sslcipherlist", "version", "postbuffer", "lowspeedlimit",
	"lowspeedtime", "maxrequests", "minsessions", "followredirects",
};

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

static void	 fsf_add(struct fsf_buf *, const char *, size_t);
static int	 fsf_drop(char **, const char *name, size_t len);
static char	 fsf_shown(char);
static void	 fsf_addf(struct fsf_buf *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static int	 fsf_in(const char *const *, size_t, const char *);
static int	 fsf_result(struct fsfilter_out *, struct fsf_buf *, int rc);
static int	 fsf_git_next(struct fsf_git *);
static int	 fsf_git_header(struct fsf_git *);
static int	 fsf_git_value(struct fsf_git *);
static int	 fsf_git_keep(const struct fsf_git_ent *);
static void	 fsf_git_emit(struct fsf_buf *, const struct fsf_git_ent *,
		    const char *val, struct fsf_git_ent *last);
static void	 fsf_quote(struct fsf_buf *, const char *, int subsection);
static int	 fsf_toml_header(const char *line, size_t len, int *keep);
static int	 fsf_toml_scan(const char *line, size_t len, int *mls,
		    int *depth);
static int	 fsf_ini_drop(const char *key, size_t len);
static int	 fsf_unuser(struct fsf_buf *, const char *, size_t);
static char	*fsf_read(const char *path, size_t *len);
static char	*fsf_write(struct fsf_ctx *, const char *name,
		    const struct fsf_buf *);
static char	*fsf_file(struct fsf_ctx *, enum fs_filter, const char *src,
		    int depth);
static char	*fsf_git_include(void *, const char *path, const char *dir);

static void
fsf_add(struct fsf_buf *b, const char *s, size_t n)
{
	char	*ns;
	size_t	 cap;

	if (!b->ok)
		return;
	if (b->len + n + 1 > b->cap) {
		for (cap = b->cap ? b->cap : 256; cap < b->len + n + 1; cap *= 2)
			;
		if ((ns = realloc(b->s, cap)) == NULL) {
			b->ok = 0;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void
fsf_addf(struct fsf_buf *b, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n == -1) {
		b->ok = 0;
		return;
	}
	fsf_add(b, s, (size_t)n);
	free(s);
}

/*
 * Add a name to a list of names left out ("a, b"), once, as fsf_shown
 * shows it.
 */
static int
fsf_drop(char **list, const char *name, size_t len)
{
	const char	*p, *q;
	char		*nl;
	size_t		 have = *list != NULL ? strlen(*list) : 0, i;

	for (p = *list; p != NULL && *p != '\0'; p = q) {
		if ((q = strstr(p, ", ")) == NULL)
			q = p + strlen(p);
		if ((size_t)(q - p) == len) {
			for (i = 0; i < len; i++)
				if (p[i] != fsf_shown(name[i]))
					break;
			if (i == len)
				return 0;
		}
		if (*q != '\0')
			q += 2;
	}
	if ((nl = realloc(*list, have + len + 3)) == NULL)
		return -1;
	if (have > 0) {
		memcpy(nl + have, ", ", 2);
		have += 2;
	}
	for (i = 0; i < len; i++)
		nl[have + i] = fsf_shown(name[i]);
	nl[have + len] = '\0';
	*list = nl;
	return 0;
}

/* An octet of a name as -v shows it: '?' outside "_.-[]()/:@ " and alnum. */
static char
fsf_shown(char c)
{
	return isalnum((unsigned char)c) || (c != '\0' &&
	    strchr("_.-[]()/:@ ", c) != NULL) ? c : '?';
}

/* Hand b to out when rc is 0, else free it: rc. */
static int
fsf_result(struct fsfilter_out *out, struct fsf_buf *b, int rc)
{
	if (rc == 0) {
		out->text = b->s;
		out->len = b->len;
	} else
		free(b->s);
	return rc;
}

static int
fsf_in(const char *const *v, size_t n, const char *s)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strcasecmp(v[i], s) == 0)
			return 1;
	return 0;
}

/*
 * Whether s names a URL with a user or a password ("scheme://u:p@h",
 * "scheme://token@h") or an Authorization header: a credential.
 */
int
fsfilter_secret(const char *s)
{
	const char	*p, *q;

	for (p = s; (p = strstr(p, "://")) != NULL; p += 3) {
		for (q = p + 3; *q != '\0' && strchr("/?#", *q) == NULL &&
		    !isspace((unsigned char)*q) && *q != '"' && *q != '\'';
		    q++)
			if (*q == '@')
				return 1;
	}
	for (p = s; *p != '\0'; p++)
		if (strncasecmp(p, "authorization", 13) == 0 ||
		    strncasecmp(p, "private-token", 13) == 0)
			return 1;
	return 0;
}

/* git's get_next_char: CRLF is LF, the end of the buffer a last LF. */
static int
fsf_git_next(struct fsf_git *g)
{
	int	c;

	if (g->p >= g->end) {
		g->eof = 1;
		return '\n';
	}
	c = (unsigned char)*g->p++;
	if (c == '\r' && g->p < g->end && *g->p == '\n')
		c = (unsigned char)*g->p++;
	return c;
}

/* After "[": the section (and subsection); -1 on a syntax error. */
static int
fsf_git_header(struct fsf_git *g)
{
	struct fsf_git_ent	*e = &g->e;
	size_t			 n = 0, m = 0;
	char			 name[sizeof(e->sec) + sizeof(e->sub)], *dot;
	int			 c;

	e->has_sub = e->dotted = 0;
	e->sub[0] = '\0';
	for (;;) {
		c = fsf_git_next(g);
		if (g->eof)
			return -1;
		if (c == ']')
			break;
		if (isspace(c)) {
			/* [section "subsection"] */
			while ((c = fsf_git_next(g)) == ' ' || c == '\t')
				;
			if (c != '"' || g->eof)
				return -1;
			for (;;) {
				c = fsf_git_next(g);
				if (c == '\n' || c == '\0')
					return -1;
				if (c == '"')
					break;
				if (c == '\\') {
					c = fsf_git_next(g);
					if (c == '\n' || c == '\0')
						return -1;
				}
				if (m + 1 >= sizeof(e->sub))
					return -1;
				e->sub[m++] = (char)c;
			}
			e->sub[m] = '\0';
			e->has_sub = 1;
			if (fsf_git_next(g) != ']')
				return -1;
			break;
		}
		if (!isalnum(c) && c != '-' && c != '.')
			return -1;
		if (n + 1 >= sizeof(name))
			return -1;
		name[n++] = (char)tolower(c);
	}
	name[n] = '\0';
	if (n == 0)
		return -1;
	/* [a.b]: git's old spelling of [a "b"] (b in lower case). */
	if (!e->has_sub && (dot = strchr(name, '.')) != NULL) {
		*dot = '\0';
		if (strlen(dot + 1) >= sizeof(e->sub))
			return -1;
		strcpy(e->sub, dot + 1);
		e->has_sub = e->dotted = 1;
	}
	if (strlen(name) >= sizeof(e->sec))
		return -1;
	strcpy(e->sec, name);
	return 0;
}

/* git's parse_value, after "=": the value in g->val; -1 on an error. */
static int
fsf_git_value(struct fsf_git *g)
{
	size_t	space = 0;
	int	quote = 0, comment = 0, c;
	char	ch;

	g->val.len = 0;
	fsf_add(&g->val, "", 0);
	for (;;) {
		c = fsf_git_next(g);
		if (c == '\n') {
			if (quote)
				return -1;
			return g->val.ok ? 0 : -1;
		}
		if (c == '\0')
			return -1;
		if (comment)
			continue;
		if (isspace(c) && !quote) {
			if (g->val.len > 0)
				space++;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = 1;
			continue;
		}
		for (; space > 0; space--)
			fsf_add(&g->val, " ", 1);
		if (c == '\\') {
			c = fsf_git_next(g);
			switch (c) {
			case '\n':
				if (g->eof)
					return -1;
				continue;
			case 't':
				c = '\t';
				break;
			case 'b':
				c = '\b';
				break;
			case 'n':
				c = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return -1;
			}
			ch = (char)c;
			fsf_add(&g->val, &ch, 1);
			continue;
		}
		if (c == '"') {
			quote = !quote;
			continue;
		}
		ch = (char)c;
		fsf_add(&g->val, &ch, 1);
	}
}

/* Whether an entry is shown in the sandbox. */
static int
fsf_git_keep(const struct fsf_git_ent *e)
{
	if ((e->has_sub && fsfilter_secret(e->sub)) ||
	    (e->val != NULL && fsfilter_secret(e->val)))
		return 0;
	if (strcmp(e->sec, "http") == 0)
		return fsf_in(fsf_http_keys, sizeof(fsf_http_keys) /
		    sizeof(*fsf_http_keys), e->key);
	if (strcmp(e->sec, "core") == 0 && fsf_in(fsf_core_drop,
	    sizeof(fsf_core_drop) / sizeof(*fsf_core_drop), e->key))
		return 0;
	return fsf_in(fsf_git_sections, sizeof(fsf_git_sections) /
	    sizeof(*fsf_git_sections), e->sec);
}

/* A value (or subsection) in double quotes, escaped for git. */
static void
fsf_quote(struct fsf_buf *b, const char *s, int subsection)
{
	const char	*esc;

	fsf_add(b, "\"", 1);
	for (; *s != '\0'; s++) {
		esc = NULL;
		if (*s == '"')
			esc = "\\\"";
		else if (*s == '\\')
			esc = "\\\\";
		else if (!subsection && *s == '\n')
			esc = "\\n";
		else if (!subsection && *s == '\t')
			esc = "\\t";
		else if (!subsection && *s == '\b')
			esc = "\\b";
		if (esc != NULL)
			fsf_add(b, esc, strlen(esc));
		else
			fsf_add(b, s, 1);
	}
	fsf_add(b, "\"", 1);
}

/* One entry, under a new section header when it changed. */
static void
fsf_git_emit(struct fsf_buf *b, const struct fsf_git_ent *e,
    const char *val, struct fsf_git_ent *last)
{
	if (last->sec[0] == '\0' || strcmp(last->sec, e->sec) != 0 ||
	    last->has_sub != e->has_sub || last->dotted != e->dotted ||
	    strcmp(last->sub, e->sub) != 0) {
		if (!e->has_sub)
			fsf_addf(b, "[%s]\n", e->sec);
		else if (e->dotted)
			fsf_addf(b, "[%s.%s]\n", e->sec, e->sub);
		else {
			fsf_addf(b, "[%s ", e->sec);
			fsf_quote(b, e->sub, 1);
			fsf_add(b, "]\n", 2);
		}
		memcpy(last->sec, e->sec, sizeof(last->sec));
		memcpy(last->sub, e->sub, sizeof(last->sub));
		last->has_sub = e->has_sub;
		last->dotted = e->dotted;
	}
	fsf_addf(b, "\t%s", e->key);
	if (val != NULL) {
		fsf_add(b, " = ", 3);
		fsf_quote(b, val, 0);
	}
	fsf_add(b, "\n", 1);
}

int
fsfilter_git(const char *text, size_t len, char *(*include)(void *,
    const char *, const char *), void *arg, const char *dir,
    struct fsfilter_out *out)
{
	struct fsf_git		 g;
	struct fsf_git_ent	 last;
	struct fsf_buf		 b = { NULL, 0, 0, 1 };
	char			*inc, name[sizeof(g.e.sec) + sizeof(g.e.key)];
	size_t			 n;
	int			 c, rc = -1;

	memset(&g, 0, sizeof(g));
	memset(&last, 0, sizeof(last));
	g.val.ok = 1;
	g.p = text;
	g.end = text + len;
	/* A UTF-8 byte order mark, as git skips it. */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		g.p += 3;
	fsf_add(&b, "", 0);
	for (;;) {
		c = fsf_git_next(&g);
		if (g.eof)
			break;
		if (c == '\n' || c == ' ' || c == '\t' || c == '\r' ||
		    c == '\f' || c == '\v')
			continue;
		if (c == '#' || c == ';') {
			while (fsf_git_next(&g) != '\n')
				;
			continue;
		}
		if (c == '[') {
			if (fsf_git_header(&g) == -1)
				goto done;
			continue;
		}
		if (!isalpha(c) || g.e.sec[0] == '\0')
			goto done;
		n = 0;
		do {
			if (n + 1 >= sizeof(g.e.key))
				goto done;
			g.e.key[n++] = (char)tolower(c);
			c = fsf_git_next(&g);
		} while (isalnum(c) || c == '-');
		g.e.key[n] = '\0';
		while (c == ' ' || c == '\t')
			c = fsf_git_next(&g);
		g.e.val = NULL;
		if (c != '\n') {
			if (c != '=' || fsf_git_value(&g) == -1)
				goto done;
			g.e.val = g.val.s;
		}
		if ((strcmp(g.e.sec, "include") == 0 ||
		    strcmp(g.e.sec, "includeif") == 0) &&
		    strcmp(g.e.key, "path") == 0 && g.e.val != NULL) {
			/* Shown as a filtered copy of the file it names. */
			if ((inc = include(arg, g.e.val, dir)) != NULL) {
				fsf_git_emit(&b, &g.e, inc, &last);
				free(inc);
			}
			continue;
		}
		if (fsf_git_keep(&g.e)) {
			fsf_git_emit(&b, &g.e, g.e.val, &last);
			continue;
		}
		/* Names only: a subsection may be the secret. */
		snprintf(name, sizeof(name), "%s.%s", g.e.sec, g.e.key);
		if (fsf_drop(&out->dropped, name, strlen(name)) == -1)
			goto done;
	}
	rc = b.ok && g.val.ok ? 0 : -1;
done:
	free(g.val.s);
	return fsf_result(out, &b, rc);
}

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

/* A regular file of at most FSF_MAXFILE octets, NUL-terminated. */
static char *
fsf_read(const char *path, size_t *len)
{
	struct stat	 st;
	char		*s = NULL;
	ssize_t		 n;
	size_t		 off = 0;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return NULL;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > FSF_MAXFILE ||
	    (s = malloc((size_t)st.st_size + 1)) == NULL)
		goto fail;
	while (off < (size_t)st.st_size &&
	    (n = read(fd, s + off, (size_t)st.st_size - off)) > 0)
		off += (size_t)n;
	close(fd);
	s[off] = '\0';
	*len = off;
	return s;
fail:
	close(fd);
	free(s);
	return NULL;
}

/* Write b as a new file in the output directory: its path, or NULL. */
static char *
fsf_write(struct fsf_ctx *c, const char *name, const struct fsf_buf *b)
{
	char	*path;
	int	 fd;

	c->nfiles++;
	if (asprintf(&path, "%s/%s.XXXXXX", c->outdir, name) == -1)
		return NULL;
	if ((fd = mkostemp(path, O_CLOEXEC)) == -1 ||
	    fchmod(fd, 0644) == -1 ||
	    io_write_all(fd, b->s != NULL ? b->s : "", b->len, 0) == -1) {
		if (fd != -1) {
			close(fd);
			unlink(path);
		}
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

/* The filtered copy of an included git config file, or NULL: none. */
static char *
fsf_git_include(void *arg, const char *path, const char *dir)
{
	struct fsf_ctx	*c = arg;
	char		*abs = NULL, *copy;
	int		 depth = c->depth;

	/* Relative to the including file; "~/" from the home. */
	if (path[0] == '~' && path[1] == '/') {
		if (c->home == NULL || asprintf(&abs, "%s/%s", c->home,
		    path + 2) == -1)
			return NULL;
	} else if (path[0] == '/')
		abs = strdup(path);
	else if (path[0] != '~' && asprintf(&abs, "%s/%s", dir, path) == -1)
		abs = NULL;
	if (abs == NULL)
		return NULL;
	copy = fsf_file(c, FS_FILTER_GIT, abs, depth + 1);
	c->depth = depth;
	free(abs);
	return copy;
}

/*
 * The filtered copy of src, written in the output directory; a file
 * that cannot be read as its format is written empty (nothing of it is
 * shown).  NULL: src cannot be read, or past the bounds.
 */
static char *
fsf_file(struct fsf_ctx *c, enum fs_filter kind, const char *src, int depth)
{
	static const char *const names[] = { "", "gitconfig", "goenv",
	    "mise", "ini", "net.properties" };
	struct fsf_buf		 b = { NULL, 0, 0, 1 };
	struct fsfilter_out	 out;
	char			*text, *dir, *slash, *path, *p, *q;
	size_t			 len;
	int			 rc;

	if (depth > FSF_MAXDEPTH || c->nfiles >= FSF_MAXFILES ||
	    (text = fsf_read(src, &len)) == NULL)
		return NULL;
	memset(&out, 0, sizeof(out));
	c->depth = depth;
	switch (kind) {
	case FS_FILTER_GIT:
		if ((dir = strdup(src)) == NULL) {
			rc = -1;
			break;
		}
		if ((slash = strrchr(dir, '/')) != NULL)
			*slash = '\0';
		rc = fsfilter_git(text, len, fsf_git_include, c, dir, &out);
		free(dir);
		break;
	case FS_FILTER_GOENV:
		rc = fsfilter_goenv(text, len, &out);
		break;
	case FS_FILTER_MISE:
		rc = fsfilter_mise(text, len, &out);
		break;
	case FS_FILTER_INI:
		rc = fsfilter_ini(text, len, &out);
		break;
	case FS_FILTER_JAVANET:
		rc = fsfilter_javanet(text, len, &out);
		break;
	default:
		rc = -1;
		break;
	}
	free(text);
	/* This file's names join those of the files it includes. */
	for (p = out.dropped; p != NULL && *p != '\0'; p = q) {
		if ((q = strstr(p, ", ")) == NULL)
			q = p + strlen(p);
		if (fsf_drop(&c->dropped, p, (size_t)(q - p)) == -1)
			rc = -1;
		if (*q != '\0')
			q += 2;
	}
	free(out.dropped);
	if (rc == -1) {
		log_warnx("%s: not read as a %s file: the sandbox sees it "
		    "empty", src, names[kind]);
		if (fsf_drop(&c->dropped, FSF_UNREAD, strlen(FSF_UNREAD)) ==
		    -1)
			return NULL;
	} else {
		b.s = out.text;
		b.len = out.len;
	}
	path = fsf_write(c, names[kind], &b);
	free(b.s);
	return path;
}

char *
fsfilter_copy(enum fs_filter kind, const char *src, const char *outdir,
    const char *home, char **dropped)
{
	struct fsf_ctx	 c;
	char		*path;

	memset(&c, 0, sizeof(c));
	c.outdir = outdir;
	c.home = home;
	path = fsf_file(&c, kind, src, 0);
	if (path != NULL && dropped != NULL) {
		*dropped = c.dropped;
		c.dropped = NULL;
	}
	free(c.dropped);
	return path;
}
