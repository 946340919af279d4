/*
 * The filter of a git config (fsfilter.c writes the copies): git's own
 * reader (config.c's get_next_char, get_base_var, parse_value) run over
 * the file, and each entry kept or left out.  Kept: the sections on an
 * allow-list (user, alias, core, ...), http with its non-secret keys
 * only, core without the programs it names (askPass, sshCommand,
 * fsmonitor).  Left out: any entry naming a URL with a user or password,
 * or an Authorization header, in its subsection or its value.
 * include.path and includeIf.*.path are shown pointing at the filtered
 * copies of their files, which the caller's include callback writes.
 * What git would refuse to read is not a git config: shown empty.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "launcher/fs/fs.h"
#include "launcher/fs/fs_int.h"

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

static int	 fsf_git_next(struct fsf_git *);
static int	 fsf_git_header(struct fsf_git *);
static int	 fsf_git_value(struct fsf_git *);
static int	 fsf_git_keep(const struct fsf_git_ent *);
static void	 fsf_git_emit(struct fsf_buf *, const struct fsf_git_ent *,
		    const char *val, struct fsf_git_ent *last);
static void	 fsf_quote(struct fsf_buf *, const char *, int subsection);

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

/* A git config without what may be a credential (fs.h). */
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
