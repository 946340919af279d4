/*
 * Filesystem path patterns for denyRead, allowRead, allowWrite and
 * denyWrite, with the meaning srt (Anthropic's sandbox-runtime) and
 * pi-sandbox users write them in: "**" + "/.env", "*.pem", ".env.*",
 * "secrets/" + "**".
 *
 * A pattern is anchored, then matched against whole absolute paths one
 * component at a time:
 *
 *   anchor    "~" or "~/..." from the home directory, "/..." from the
 *             root, anything else from the working directory (as srt
 *             resolves it: a pattern without a slash, "*.pem", names
 *             entries of the working directory itself, not of every
 *             directory below -- write "**" + "/" + "*.pem" for that).
 *   *         any run of characters inside one component, the empty one
 *             and a leading dot included; never "/".
 *   ?         one character (a UTF-8 sequence, or one byte that is not
 *             part of one); never "/".
 *   [...]     one ASCII character of the set: "[abc]", "[a-z0-9]",
 *             negated "[!abc]" or "[^abc]"; a "]" first in the set is
 *             literal.  "[*]", "[?]", "[[]" name a literal metacharacter.
 *   **        as a whole component: zero or more components ("**" + "/x"
 *             is x at the anchor and below it); as the last component,
 *             one or more ("dir/" + "**" is everything inside dir, not dir
 *             itself).  Anywhere else it is an error.
 *   a/        a trailing slash matches directories only.
 *
 * Everything else is literal, byte for byte and case-sensitive (there is
 * no escape character: "\" is an ordinary byte, as in a Linux file name).
 * "." components are dropped; ".." is allowed only before the first
 * wildcard component.  A string without "*", "?" or "[" is no pattern but
 * a literal path.
 *
 * Matching runs the pattern as an NFA over the path's components: a set
 * of pattern positions (a bitset) advanced by each component, so the cost
 * is bounded by components x pattern length whatever the input.  Pure
 * functions, no I/O.
 */

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

#define GLOB_WORDS	((GLOB_MAX_COMPONENTS + 1 + 63) / 64)

enum glob_comp_kind {
	GC_LITERAL,	/* text compared byte for byte */
	GC_WILD,	/* tokens below */
	GC_GLOBSTAR	/* "**": zero or more components */
};

enum glob_tok_kind {
	GT_BYTE,	/* one literal byte */
	GT_ANY,		/* "?" */
	GT_STAR,	/* "*" */
	GT_SET		/* "[...]" */
};

struct glob_tok {
	enum glob_tok_kind	 kind;
	unsigned char		 byte;		/* GT_BYTE */
	uint64_t		 set[2];	/* GT_SET: ASCII bitmap */
};

struct glob_comp {
	enum glob_comp_kind	 kind;
	char			*text;		/* the component as written */
	size_t			 len;
	struct glob_tok		*tok;		/* GC_WILD */
	size_t			 ntok;
};

struct glob {
	struct glob_comp	*comp;
	size_t			 ncomp;
	int			 dir_only;	/* trailing "/" */
	char			*base;		/* literal directory prefix */
	char			*text;		/* anchored pattern */
};

struct glob_set {
	uint64_t	w[GLOB_WORDS];
};

static int	 glob_comp_parse(struct glob_comp *, const char *, size_t,
		    const char **);
static int	 glob_set_parse(struct glob_tok *, const char *, size_t,
		    size_t *, const char **);
static struct glob_comp *glob_comp_slot(struct glob *, const char **);
static int	 glob_comp_add(struct glob *, const char *, size_t,
		    const char **);
static int	 glob_comp_match(const struct glob_comp *, const char *,
		    size_t);
static size_t	 glob_utf8_len(const unsigned char *, size_t);
static int	 glob_tok_match(const struct glob_tok *, const unsigned char *,
		    size_t, size_t *);
static void	 glob_closure(const struct glob *, struct glob_set *);
static void	 glob_step(const struct glob *, const struct glob_set *,
		    struct glob_set *, const char *, size_t);
static int	 glob_run(const struct glob *, const char *,
		    struct glob_set *);
static char	*glob_build_text(const struct glob *, size_t);
static int	 glob_lit_add(struct glob *, const char *, size_t,
		    const char **);
static int	 glob_trailing_star(struct glob *, const char **);
static int	 glob_comp_star(const struct glob_comp *);

static inline void
set_add(struct glob_set *s, size_t i)
{
	s->w[i / 64] |= 1ULL << (i % 64);
}

static inline int
set_has(const struct glob_set *s, size_t i)
{
	return (s->w[i / 64] >> (i % 64)) & 1;
}

int
glob_is_pattern(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/*
 * One "[...]" starting at in[*pos] (the "["); on success *pos is just past
 * the "]".  Only ASCII members: a class is a byte set, and a multi-byte
 * character in it would be matched one byte at a time.  The component
 * holds no "/" (it was split there), so neither does a set.
 */
static int
glob_set_parse(struct glob_tok *t, const char *in, size_t len, size_t *pos,
    const char **errstr)
{
	size_t		 i = *pos + 1, n = 0;
	int		 neg = 0;
	unsigned char	 lo, hi, c;

	memset(t->set, 0, sizeof(t->set));
	t->kind = GT_SET;
	if (i < len && (in[i] == '!' || in[i] == '^')) {
		neg = 1;
		i++;
	}
	for (;; n++) {
		if (i >= len) {
			*errstr = "unclosed '[' in a path component (a set "
			    "never holds '/'; write \"[[]\" for a literal "
			    "'[')";
			return -1;
		}
		lo = (unsigned char)in[i];
		if (lo == ']' && n > 0)
			break;
		if (lo >= 0x80) {
			*errstr = "only ASCII characters in '[...]'";
			return -1;
		}
		hi = lo;
		if (i + 2 < len && in[i + 1] == '-' && in[i + 2] != ']') {
			hi = (unsigned char)in[i + 2];
			if (hi >= 0x80) {
				*errstr = "only ASCII characters in '[...]'";
				return -1;
			}
			if (hi < lo) {
				*errstr = "reversed range in '[...]' (write "
				    "'[a-z]', not '[z-a]')";
				return -1;
			}
			i += 2;
		}
		for (c = lo; ; c++) {
			t->set[c / 64] |= 1ULL << (c % 64);
			if (c == hi)
				break;
		}
		i++;
	}
	if (neg) {
		t->set[0] = ~t->set[0];
		t->set[1] = ~t->set[1];
		t->set['/' / 64] &= ~(1ULL << ('/' % 64));
	}
	*pos = i + 1;
	return 0;
}

/* Parse one component (no "/" in it) into literal, "**" or tokens. */
static int
glob_comp_parse(struct glob_comp *c, const char *in, size_t len,
    const char **errstr)
{
	struct glob_tok	*tok;
	size_t		 i = 0, n = 0;
	int		 wild = 0;

	memset(c, 0, sizeof(*c));
	if ((c->text = strndup(in, len)) == NULL) {
		*errstr = "out of memory";
		return -1;
	}
	c->len = len;
	if (len == 2 && in[0] == '*' && in[1] == '*') {
		c->kind = GC_GLOBSTAR;
		return 0;
	}
	if (memmem(in, len, "**", 2) != NULL) {
		*errstr = "'**' only as a whole path component (\"dir/**\", "
		    "\"**/name\"); '*' never crosses '/'";
		return -1;
	}
	if ((tok = calloc(len, sizeof(*tok))) == NULL) {
		*errstr = "out of memory";
		return -1;
	}
	c->tok = tok;
	while (i < len) {
		switch (in[i]) {
		case '*':
			tok[n].kind = GT_STAR;
			wild = 1;
			i++;
			break;
		case '?':
			tok[n].kind = GT_ANY;
			wild = 1;
			i++;
			break;
		case '[':
			if (glob_set_parse(&tok[n], in, len, &i, errstr) == -1)
				return -1;
			wild = 1;
			break;
		default:
			tok[n].kind = GT_BYTE;
			tok[n].byte = (unsigned char)in[i];
			i++;
			break;
		}
		n++;
	}
	c->ntok = n;
	c->kind = wild ? GC_WILD : GC_LITERAL;
	return 0;
}

/*
 * Room for one more component: the new, zeroed slot past the last, not
 * counted until the caller has filled it.
 */
static struct glob_comp *
glob_comp_slot(struct glob *g, const char **errstr)
{
	struct glob_comp	*v;

	if (g->ncomp >= GLOB_MAX_COMPONENTS) {
		*errstr = "pattern has too many components";
		return NULL;
	}
	if ((v = reallocarray(g->comp, g->ncomp + 1, sizeof(*v))) == NULL) {
		*errstr = "out of memory";
		return NULL;
	}
	g->comp = v;
	memset(&v[g->ncomp], 0, sizeof(*v));
	return &v[g->ncomp];
}

/*
 * Append one component.  "." is dropped; ".." removes the previous
 * literal component (never the root) and is an error after a wildcard,
 * where it would have to be resolved against names not known yet.
 */
static int
glob_comp_add(struct glob *g, const char *in, size_t len,
    const char **errstr)
{
	struct glob_comp	*c;
	size_t			 i;

	if (len == 0 || (len == 1 && in[0] == '.'))
		return 0;
	if (len == 2 && in[0] == '.' && in[1] == '.') {
		for (i = 0; i < g->ncomp; i++) {
			if (g->comp[i].kind != GC_LITERAL) {
				*errstr = "'..' after a wildcard component";
				return -1;
			}
		}
		if (g->ncomp > 0) {
			g->ncomp--;
			free(g->comp[g->ncomp].text);
			free(g->comp[g->ncomp].tok);
		}
		return 0;
	}
	if ((c = glob_comp_slot(g, errstr)) == NULL)
		return -1;
	if (glob_comp_parse(c, in, len, errstr) == -1) {
		free(c->text);
		free(c->tok);
		return -1;
	}
	/* "**" + "/" + "**" is one "**". */
	if (c->kind == GC_GLOBSTAR && g->ncomp > 0 &&
	    g->comp[g->ncomp - 1].kind == GC_GLOBSTAR) {
		free(c->text);
		return 0;
	}
	g->ncomp++;
	return 0;
}

/* "/" and the first n components joined by "/": "/a/b", or "/". */
static char *
glob_build_text(const struct glob *g, size_t n)
{
	size_t	 i, len = 1, o = 0;
	char	*s;

	for (i = 0; i < n; i++)
		len += g->comp[i].len + 1;
	if ((s = malloc(len + 1)) == NULL)
		return NULL;
	if (n == 0)
		s[o++] = '/';
	for (i = 0; i < n; i++) {
		s[o++] = '/';
		memcpy(s + o, g->comp[i].text, g->comp[i].len);
		o += g->comp[i].len;
	}
	s[o] = '\0';
	return s;
}

/* Append one literal component (of the anchor): never a pattern. */
static int
glob_lit_add(struct glob *g, const char *in, size_t len, const char **errstr)
{
	struct glob_comp	*c;

	if (len == 0 || (len == 1 && in[0] == '.'))
		return 0;
	if (len == 2 && in[0] == '.' && in[1] == '.') {
		*errstr = "the anchor directory is not normalised";
		return -1;
	}
	if ((c = glob_comp_slot(g, errstr)) == NULL)
		return -1;
	if ((c->text = strndup(in, len)) == NULL) {
		*errstr = "out of memory";
		return -1;
	}
	c->len = len;
	c->kind = GC_LITERAL;
	g->ncomp++;
	return 0;
}

/*
 * A trailing "**" becomes "*" + "**": one component or more, so
 * "dir/" + "**" names what is inside dir, not dir itself.
 */
static int
glob_trailing_star(struct glob *g, const char **errstr)
{
	struct glob_comp	*v;

	if (g->ncomp == 0 || g->comp[g->ncomp - 1].kind != GC_GLOBSTAR)
		return 0;
	if (glob_comp_slot(g, errstr) == NULL)
		return -1;
	v = g->comp;
	v[g->ncomp] = v[g->ncomp - 1];		/* the "**" moves last */
	g->ncomp++;
	if (glob_comp_parse(&v[g->ncomp - 2], "*", 1, errstr) == -1) {
		v[g->ncomp - 2].tok = NULL;
		v[g->ncomp - 2].text = NULL;
		return -1;
	}
	return 0;
}

struct glob *
glob_compile(const char *pattern, const char *cwd, const char *home,
    const char **errstr)
{
	struct glob	*g;
	const char	*anchor = NULL, *p, *e, *rest = pattern;
	size_t		 len = strlen(pattern), nlit, tl;

	*errstr = NULL;
	if (len == 0) {
		*errstr = "empty pattern";
		return NULL;
	}
	if (len >= PATH_MAX) {
		*errstr = "pattern too long";
		return NULL;
	}
	if ((g = calloc(1, sizeof(*g))) == NULL) {
		*errstr = "out of memory";
		return NULL;
	}
	if (pattern[0] == '~' && (pattern[1] == '\0' || pattern[1] == '/')) {
		if (home == NULL || home[0] != '/') {
			*errstr = "'~' without an absolute home directory";
			goto fail;
		}
		anchor = home;
		rest = pattern + 1;
	} else if (pattern[0] != '/') {
		if (cwd == NULL || cwd[0] != '/') {
			*errstr = "a relative pattern without an absolute "
			    "working directory";
			goto fail;
		}
		anchor = cwd;
	}
	for (p = anchor; p != NULL && *p != '\0'; p = *e == '/' ? e + 1 : e) {
		if ((e = strchr(p, '/')) == NULL)
			e = p + strlen(p);
		if (glob_lit_add(g, p, (size_t)(e - p), errstr) == -1)
			goto fail;
	}
	for (p = rest; *p != '\0'; p = *e == '/' ? e + 1 : e) {
		if ((e = strchr(p, '/')) == NULL)
			e = p + strlen(p);
		if (glob_comp_add(g, p, (size_t)(e - p), errstr) == -1)
			goto fail;
	}
	g->dir_only = len > 1 && pattern[len - 1] == '/';

	for (nlit = 0; nlit < g->ncomp && g->comp[nlit].kind == GC_LITERAL;
	    nlit++)
		;
	/* The base is a directory: never the last component itself. */
	if (nlit == g->ncomp && nlit > 0)
		nlit--;
	if ((g->base = glob_build_text(g, nlit)) == NULL ||
	    (g->text = glob_build_text(g, g->ncomp)) == NULL) {
		*errstr = "out of memory";
		goto fail;
	}
	if (g->dir_only && g->ncomp > 0) {
		char	*t;

		tl = strlen(g->text);
		if ((t = realloc(g->text, tl + 2)) == NULL) {
			*errstr = "out of memory";
			goto fail;
		}
		g->text = t;
		memcpy(t + tl, "/", 2);
	}
	if (glob_trailing_star(g, errstr) == -1)
		goto fail;
	return g;
fail:
	glob_free(g);
	return NULL;
}

int
glob_check(const char *pattern, const char **errstr)
{
	struct glob	*g;

	if ((g = glob_compile(pattern, "/", "/", errstr)) == NULL)
		return -1;
	glob_free(g);
	return 0;
}

void
glob_free(struct glob *g)
{
	size_t	 i;

	if (g == NULL)
		return;
	for (i = 0; i < g->ncomp; i++) {
		free(g->comp[i].text);
		free(g->comp[i].tok);
	}
	free(g->comp);
	free(g->base);
	free(g->text);
	free(g);
}

const char *
glob_base(const struct glob *g)
{
	return g->base;
}

const char *
glob_text(const struct glob *g)
{
	return g->text;
}

/*
 * Length of the character at s: a well-formed UTF-8 sequence, or one
 * byte when s does not start one.
 */
static size_t
glob_utf8_len(const unsigned char *s, size_t len)
{
	size_t		 n, i;
	unsigned char	 c = s[0];

	if (c < 0xc2 || c > 0xf4)
		return 1;
	n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (n > len)
		return 1;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 1;
	return n;
}

/* One non-star token at s (len > 0): its length in *used, or 0. */
static int
glob_tok_match(const struct glob_tok *t, const unsigned char *s, size_t len,
    size_t *used)
{
	switch (t->kind) {
	case GT_BYTE:
		*used = 1;
		return s[0] == t->byte;
	case GT_ANY:
		*used = glob_utf8_len(s, len);
		return 1;
	case GT_SET:
		*used = 1;
		return s[0] < 0x80 && ((t->set[s[0] / 64] >> (s[0] % 64)) & 1);
	case GT_STAR:
		break;
	}
	return 0;
}

/*
 * One component against one name: the classic wildcard walk that, on a
 * mismatch, lets the last "*" take one byte more.  Every other token
 * consumes a fixed span at a given position, so this is exact and
 * O(len(pattern) x len(name)).
 */
static int
glob_comp_match(const struct glob_comp *c, const char *name, size_t len)
{
	const unsigned char	*s = (const unsigned char *)name;
	size_t			 ti = 0, si = 0, used, star_t = SIZE_MAX;
	size_t			 star_s = 0;

	switch (c->kind) {
	case GC_LITERAL:
		return c->len == len && memcmp(c->text, name, len) == 0;
	case GC_GLOBSTAR:
		return 1;
	case GC_WILD:
		break;
	}
	while (si < len) {
		if (ti < c->ntok && c->tok[ti].kind == GT_STAR) {
			star_t = ti++;
			star_s = si;
			continue;
		}
		if (ti < c->ntok && glob_tok_match(&c->tok[ti], s + si,
		    len - si, &used)) {
			ti++;
			si += used;
			continue;
		}
		if (star_t == SIZE_MAX)
			return 0;
		ti = star_t + 1;
		si = ++star_s;
	}
	while (ti < c->ntok && c->tok[ti].kind == GT_STAR)
		ti++;
	return ti == c->ntok;
}

/* Add the positions reachable without consuming: past every "**". */
static void
glob_closure(const struct glob *g, struct glob_set *s)
{
	size_t	 i;

	for (i = 0; i < g->ncomp; i++)
		if (set_has(s, i) && g->comp[i].kind == GC_GLOBSTAR)
			set_add(s, i + 1);
}

/* Advance the position set by one path component. */
static void
glob_step(const struct glob *g, const struct glob_set *in,
    struct glob_set *out, const char *name, size_t len)
{
	size_t	 i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < g->ncomp; i++) {
		if (!set_has(in, i))
			continue;
		if (g->comp[i].kind == GC_GLOBSTAR)
			set_add(out, i);
		else if (glob_comp_match(&g->comp[i], name, len))
			set_add(out, i + 1);
	}
	glob_closure(g, out);
}

/*
 * Run the pattern over an absolute path; the positions reached are left
 * in *s.  -1 for a path that is not absolute.
 */
static int
glob_run(const struct glob *g, const char *path, struct glob_set *s)
{
	struct glob_set	 next;
	const char	*p = path, *e;

	if (path[0] != '/')
		return -1;
	memset(s, 0, sizeof(*s));
	set_add(s, 0);
	glob_closure(g, s);
	while (*p != '\0') {
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		if ((e = strchr(p, '/')) == NULL)
			e = p + strlen(p);
		glob_step(g, s, &next, p, (size_t)(e - p));
		*s = next;
		p = e;
	}
	return 0;
}

int
glob_match(const struct glob *g, const char *path, int is_dir)
{
	struct glob_set	 s;

	if (glob_run(g, path, &s) == -1)
		return 0;
	if (g->dir_only && !is_dir)
		return 0;
	return set_has(&s, g->ncomp);
}

int
glob_match_below(const struct glob *g, const char *dir)
{
	struct glob_set	 s;
	size_t		 i;

	if (glob_run(g, dir, &s) == -1)
		return 0;
	for (i = 0; i < g->ncomp; i++)
		if (set_has(&s, i))
			return 1;
	return 0;
}

/* A component that is one "*" and nothing else. */
static int
glob_comp_star(const struct glob_comp *c)
{
	return c->kind == GC_WILD && c->ntok == 1 &&
	    c->tok[0].kind == GT_STAR;
}

/*
 * Whether every path strictly below the directory dir matches: a position
 * reached from which the rest of the pattern is "**" at least once and "*"
 * at most once ("dir/" + "**", "**" + "/secrets/" + "**" past a secrets
 * directory); two "*" would need two components.
 * The walk then takes dir as a whole instead of each entry in it.
 */
int
glob_match_all_below(const struct glob *g, const char *dir)
{
	struct glob_set	 s;
	size_t		 i, j, stars, globstars;

	if (g->dir_only || glob_run(g, dir, &s) == -1)
		return 0;
	for (i = 0; i < g->ncomp; i++) {
		if (!set_has(&s, i))
			continue;
		stars = globstars = 0;
		for (j = i; j < g->ncomp; j++) {
			if (g->comp[j].kind == GC_GLOBSTAR)
				globstars++;
			else if (glob_comp_star(&g->comp[j]))
				stars++;
			else
				break;
		}
		if (j == g->ncomp && stars <= 1 && globstars > 0)
			return 1;
	}
	return 0;
}
