/*
 * libFuzzer target for glob_compile / glob_match / glob_match_below /
 * glob_match_all_below.
 * Input: PATTERN "\n" PATH.  Invariants: a refused pattern has a message;
 * glob_check accepts what glob_compile accepts; the NFA matcher agrees with a
 * plain recursive matcher written from the grammar (on small inputs,
 * where the recursion is cheap); every ancestor of a matching path says
 * something below it can match; a path below a directory said to match
 * whole matches; the anchored text compiles back to a pattern that
 * matches the same path.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

#define REF_MAX		48	/* bytes of pattern and path for the oracle */
#define REF_COMPS	24

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct ref_comps {
	const char	*p[REF_COMPS];
	size_t		 n[REF_COMPS];
	size_t		 count;
};

static int	 ref_split(const char *, struct ref_comps *, int);
static size_t	 ref_utf8(const unsigned char *, size_t);
static int	 ref_set(const char *, size_t, size_t *, unsigned char, int *);
static int	 ref_name(const char *, size_t, const char *, size_t);
static int	 ref_path(const struct ref_comps *, size_t,
		    const struct ref_comps *, size_t);

/*
 * Split on "/", dropping empty components and (in a pattern) "."; -1 for
 * "..", for "." in a path (not normalised), or for too many.
 */
static int
ref_split(const char *s, struct ref_comps *c, int path)
{
	const char	*e;

	c->count = 0;
	while (*s != '\0') {
		if ((e = strchr(s, '/')) == NULL)
			e = s + strlen(s);
		if (e - s == 2 && s[0] == '.' && s[1] == '.')
			return -1;
		if (path && e - s == 1 && s[0] == '.')
			return -1;
		if (e > s && !(e - s == 1 && s[0] == '.')) {
			if (c->count == REF_COMPS)
				return -1;
			c->p[c->count] = s;
			c->n[c->count] = (size_t)(e - s);
			c->count++;
		}
		s = *e == '/' ? e + 1 : e;
	}
	return 0;
}

static size_t
ref_utf8(const unsigned char *s, size_t len)
{
	size_t	 n, i;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 1;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (n > len)
		return 1;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 1;
	return n;
}

/* "[...]" at p[*i] against byte c: 1/0, -1 malformed; *i past "]". */
static int
ref_set(const char *p, size_t n, size_t *i, unsigned char c, int *in)
{
	size_t	 j = *i + 1, k = 0;
	int	 neg = 0;

	*in = 0;
	if (j < n && (p[j] == '!' || p[j] == '^')) {
		neg = 1;
		j++;
	}
	for (;; k++) {
		unsigned char lo, hi;

		if (j >= n)
			return -1;
		lo = (unsigned char)p[j];
		if (lo == ']' && k > 0)
			break;
		hi = lo;
		if (j + 2 < n && p[j + 1] == '-' && p[j + 2] != ']') {
			hi = (unsigned char)p[j + 2];
			j += 2;
		}
		if (lo >= 0x80 || hi >= 0x80 || hi < lo)
			return -1;
		if (c >= lo && c <= hi)
			*in = 1;
		j++;
	}
	if (neg)
		*in = !*in && c != '/';
	if (c >= 0x80)
		*in = 0;
	*i = j + 1;
	return 0;
}

/* One component pattern against one name, by plain recursion. */
static int
ref_name(const char *p, size_t pn, const char *s, size_t sn)
{
	size_t	 k, i;
	int	 in;

	if (pn == 0)
		return sn == 0;
	if (p[0] == '*') {
		for (k = 0; k <= sn; k++)
			if (ref_name(p + 1, pn - 1, s + k, sn - k))
				return 1;
		return 0;
	}
	if (sn == 0)
		return 0;
	if (p[0] == '?') {
		k = ref_utf8((const unsigned char *)s, sn);
		return ref_name(p + 1, pn - 1, s + k, sn - k);
	}
	if (p[0] == '[') {
		i = 0;
		if (ref_set(p, pn, &i, (unsigned char)s[0], &in) == -1)
			abort();	/* glob_compile accepted it */
		return in && ref_name(p + i, pn - i, s + 1, sn - 1);
	}
	return p[0] == s[0] && ref_name(p + 1, pn - 1, s + 1, sn - 1);
}

/* Components pi.. against path components si..; "**" last needs one. */
static int
ref_path(const struct ref_comps *pc, size_t pi, const struct ref_comps *sc,
    size_t si)
{
	size_t	 k;

	if (pi == pc->count)
		return si == sc->count;
	if (pc->n[pi] == 2 && memcmp(pc->p[pi], "**", 2) == 0) {
		k = pi + 1 == pc->count ? si + 1 : si;
		for (; k <= sc->count; k++)
			if (ref_path(pc, pi + 1, sc, k))
				return 1;
		return 0;
	}
	if (si == sc->count)
		return 0;
	return ref_name(pc->p[pi], pc->n[pi], sc->p[si], sc->n[si]) &&
	    ref_path(pc, pi + 1, sc, si + 1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ref_comps	 pc, sc;
	struct glob		*g, *again;
	const uint8_t		*nl;
	const char		*err, *err2;
	char			*pat, *path, *p, *dir, *slash;
	size_t			 plen, slen, i, o;
	int			 m, m2, dir_only, isdir;

	if ((nl = memchr(data, '\n', size)) == NULL)
		nl = data + size;
	plen = (size_t)(nl - data);
	slen = nl < data + size ? size - plen - 1 : 0;
	if (memchr(data, '\0', size) != NULL)
		return 0;
	pat = calloc(1, plen + 2);
	path = calloc(1, slen + 2);
	if (pat == NULL || path == NULL)
		abort();
	memcpy(pat, data, plen);
	/* A normalised absolute path: one "/" before each component. */
	path[0] = '/';
	for (i = 0, o = 1; i < slen; i++) {
		char c = (char)nl[1 + i];

		if (c == '/' && path[o - 1] == '/')
			continue;
		path[o++] = c;
	}
	if (o > 1 && path[o - 1] == '/')
		o--;
	path[o] = '\0';
	/* glob_match takes normalised paths only: no "." or "..". */
	if (strstr(path, "/./") != NULL || strstr(path, "/../") != NULL ||
	    (o >= 2 && strcmp(path + o - 2, "/.") == 0) ||
	    (o >= 3 && strcmp(path + o - 3, "/..") == 0))
		goto out;

	g = glob_compile(pat, "/w", "/h", &err);
	if (g == NULL && err == NULL)
		abort();
	/* The loader's check ("/" as anchor) never refuses what compiles. */
	if (g != NULL && glob_check(pat, &err2) != 0)
		abort();
	if (g == NULL)
		goto out;
	for (isdir = 0; isdir < 2; isdir++) {
		m = glob_match(g, path, isdir);
		/* The recursive oracle, on absolute patterns it can follow. */
		dir_only = plen > 1 && pat[plen - 1] == '/';
		if (pat[0] == '/' && plen <= REF_MAX && o <= REF_MAX &&
		    ref_split(pat, &pc, 0) == 0 &&
		    ref_split(path, &sc, 1) == 0) {
			m2 = ref_path(&pc, 0, &sc, 0) && (!dir_only || isdir);
			if (m != m2)
				abort();
		}
		/* Below a directory taken whole, everything matches. */
		if ((dir = strdup(path)) == NULL)
			abort();
		while (strcmp(dir, "/") != 0 &&
		    (slash = strrchr(dir, '/')) != NULL) {
			slash[slash == dir ? 1 : 0] = '\0';
			if (glob_match_all_below(g, dir) && !m)
				abort();
		}
		free(dir);
		if (!m)
			continue;
		/* Every ancestor can still lead to a match. */
		if ((dir = strdup(path)) == NULL)
			abort();
		while (strcmp(dir, "/") != 0 &&
		    (slash = strrchr(dir, '/')) != NULL) {
			slash[slash == dir ? 1 : 0] = '\0';
			if (!glob_match_below(g, dir))
				abort();
		}
		free(dir);
		/* The text is the same pattern, anchored. */
		if ((again = glob_compile(glob_text(g), NULL, NULL,
		    &err)) == NULL || !glob_match(again, path, isdir))
			abort();
		glob_free(again);
		/* Every match lies below the base. */
		p = path;
		if (strcmp(glob_base(g), "/") != 0 &&
		    (strncmp(p, glob_base(g), strlen(glob_base(g))) != 0 ||
		    p[strlen(glob_base(g))] != '/'))
			abort();
	}
	glob_free(g);
out:
	free(pat);
	free(path);
	return 0;
}
