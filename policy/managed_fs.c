/*
 * The managed file's denied paths (filesystem.denyRead, denyWrite): no
 * lower layer's allowRead or allowWrite entry may open one -- at or
 * below it, or, for a pattern, able to match it or something below it.
 * Entries are compared as absolute paths ("~" from the home directory,
 * symbolic links resolved where the path exists); entries relative to
 * the project are checked by pisbx-run once the project is known
 * (config_managed_paths).  A check that cannot be made (a pattern that
 * does not compile) is a refusal.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy/policy.h"
#include "policy/config_int.h"

static int	 managed_fs_prepend(struct strlist *, const struct strlist *);
static void	 managed_normalise(char *);
static char	*managed_expand(const char *, const char *, const char *);
static int	 managed_walk(const char *, char *, size_t);
static int	 managed_under(const char *, const char *);
static int	 managed_path_meets(const char *, const char *, const char *,
		    const char *);
static void	 managed_paths_list(struct cfgctx *, const struct managed *,
		    const struct strlist *, const char *, int, const char *,
		    const char *);

/* Put from's entries (copies) before l's. */
static int
managed_fs_prepend(struct strlist *l, const struct strlist *from)
{
	char	**v;
	size_t	  i;

	if (from->n == 0)
		return 0;
	if ((v = calloc(l->n + from->n + 1, sizeof(*v))) == NULL)
		return -1;
	for (i = 0; i < from->n; i++)
		if ((v[i] = strdup(from->v[i])) == NULL) {
			while (i-- > 0)
				free(v[i]);
			free(v);
			return -1;
		}
	if (l->n > 0)
		memcpy(v + from->n, l->v, l->n * sizeof(*v));
	free(l->v);
	l->v = v;
	l->n += from->n;
	l->v[l->n] = NULL;
	return 0;
}

/*
 * The denied paths: a lower allow entry that would open one is an error
 * (entries relative to the project are checked by pisbx-run, which
 * knows it: config_managed_paths); then the managed entries go first in
 * the layer's lists.  Without a denyRead of its own the layer keeps its
 * default, the home directory hidden, besides them.
 */
void
managed_fs_apply(struct cfgctx *ctx, struct managed *m, struct config *conf)
{
	const char	*home = cfg_home();

	managed_paths_list(ctx, m, &conf->allow_read, "allowRead", 0, NULL,
	    home);
	managed_paths_list(ctx, m, &conf->allow_write, "allowWrite", 1, NULL,
	    home);
	if (m->deny_read.n > 0 && !conf->fs_deny_read_set) {
		char *h;

		conf->fs_deny_read_set = 1;
		if (home != NULL && strcmp(home, "/") != 0) {
			if ((h = strdup("~")) == NULL ||
			    cfg_strlist_add(&conf->deny_read, h) == -1) {
				free(h);
				cfg_nomem(ctx, "$.filesystem.denyRead");
			}
			m->home_added = 1;
		}
	}
	if (managed_fs_prepend(&conf->deny_read, &m->deny_read) == -1 ||
	    managed_fs_prepend(&conf->deny_write, &m->deny_write) == -1)
		cfg_nomem(ctx, "$.filesystem");
	m->nread = m->deny_read.n;
	m->nwrite = m->deny_write.n;
}

/* Lexically: no "//", "/./", "/x/../", trailing "/" (p absolute). */
static void
managed_normalise(char *p)
{
	char	*out = p, *in = p, *slash;
	size_t	 n;

	while (*in != '\0') {
		while (*in == '/')
			in++;
		if (*in == '\0')
			break;
		n = strcspn(in, "/");
		if (n == 1 && in[0] == '.') {
			in += n;
			continue;
		}
		if (n == 2 && in[0] == '.' && in[1] == '.') {
			*out = '\0';
			if ((slash = strrchr(p, '/')) != NULL)
				out = slash;
			in += n;
			continue;
		}
		*out++ = '/';
		memmove(out, in, n);
		out += n;
		in += n;
	}
	if (out == p)
		*out++ = '/';
	*out = '\0';
}

/*
 * An entry as an absolute path: "~" from home, relative from proj (NULL
 * when it cannot be placed), normalised, and with symbolic links
 * resolved where it exists.  malloc'ed.
 */
static char *
managed_expand(const char *e, const char *proj, const char *home)
{
	char	*p, real[PATH_MAX];
	int	 r;

	if (e[0] == '~' && (e[1] == '\0' || e[1] == '/'))
		r = home != NULL ? asprintf(&p, "%s/%s", home, e + 1) : -1;
	else if (e[0] == '/')
		r = asprintf(&p, "%s", e);
	else
		r = proj != NULL ? asprintf(&p, "%s/%s", proj, e) : -1;
	if (r == -1)
		return NULL;
	if (managed_walk(p, real, sizeof(real)) == 0) {
		free(p);
		return strdup(real);
	}
	/* Too long to walk: lexically (the plan cannot open it either). */
	managed_normalise(p);
	return p;
}

/*
 * p as the kernel walks it, into out: each component that exists
 * resolved (symbolic links followed), so that ".." goes to the real
 * parent -- "/srv/link/../secret" with link -> /srv/a/b is
 * "/srv/a/secret", not the lexical "/srv/secret" -- and lexically from
 * the first component that does not exist or holds a pattern.  0, or -1
 * when it does not fit.
 */
static int
managed_walk(const char *p, char *out, size_t outlen)
{
	char		 cur[PATH_MAX], real[PATH_MAX], comp[NAME_MAX + 1];
	char		*slash;
	const char	*in = p;
	size_t		 n, l;
	int		 walk = 1;

	if (outlen < 2)
		return -1;
	strcpy(cur, "/");
	while (*in != '\0') {
		while (*in == '/')
			in++;
		if (*in == '\0')
			break;
		n = strcspn(in, "/");
		if (n > NAME_MAX)
			return -1;
		memcpy(comp, in, n);
		comp[n] = '\0';
		in += n;
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			/* cur is real while walking: its parent is. */
			if ((slash = strrchr(cur, '/')) != NULL)
				slash[slash == cur ? 1 : 0] = '\0';
			continue;
		}
		if (glob_is_pattern(comp))
			walk = 0;
		l = strlen(cur);
		if (l + (l > 1) + n + 1 > sizeof(cur))
			return -1;
		snprintf(cur + l, sizeof(cur) - l, "%s%s", l > 1 ? "/" : "",
		    comp);
		if (walk) {
			if (realpath(cur, real) != NULL)
				memcpy(cur, real, strlen(real) + 1);
			else
				walk = 0;
		}
	}
	if (strlen(cur) + 1 > outlen)
		return -1;
	memcpy(out, cur, strlen(cur) + 1);
	return 0;
}

/* Whether path is dir or lies below it. */
static int
managed_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return 1;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' ||
	    path[n] == '/');
}

/*
 * Whether the allow entry e (expanded) opens something of the denied
 * d (expanded): e at or below d; for patterns, what they can match.
 * Two patterns meet when either's literal base lies in the other's.
 */
static int
managed_path_meets(const char *e, const char *d, const char *proj,
    const char *home)
{
	struct glob	*ge = NULL, *gd = NULL;
	const char	*why;
	char		*a, *slash;
	int		 hit = 0;

	if (!glob_is_pattern(e) && !glob_is_pattern(d))
		return managed_under(e, d);
	if (glob_is_pattern(e) &&
	    (ge = glob_compile(e, proj != NULL ? proj : "/", home, &why))
	    == NULL)
		return 1;	/* cannot be checked: refused */
	if (glob_is_pattern(d) &&
	    (gd = glob_compile(d, "/", home, &why)) == NULL) {
		glob_free(ge);
		return 1;
	}
	if (ge != NULL && gd != NULL)
		hit = managed_under(glob_base(ge), glob_base(gd)) ||
		    managed_under(glob_base(gd), glob_base(ge));
	else if (ge != NULL)
		hit = glob_match(ge, d, 0) || glob_match(ge, d, 1) ||
		    glob_match_below(ge, d);
	else if ((a = strdup(e)) == NULL)
		hit = 1;
	else {
		/* e, or a directory above it, matched by the pattern d. */
		for (;;) {
			if (glob_match(gd, a, 0) || glob_match(gd, a, 1)) {
				hit = 1;
				break;
			}
			if ((slash = strrchr(a, '/')) == NULL || slash == a)
				break;
			*slash = '\0';
		}
		free(a);
	}
	glob_free(ge);
	glob_free(gd);
	return hit;
}

/*
 * Each entry of a layer's allowRead or allowWrite (write) that would
 * open a managed denyRead (or, for writes, denyWrite) path: one error
 * naming both.  proj NULL: entries relative to the project are left.
 */
static void
managed_paths_list(struct cfgctx *ctx, const struct managed *m,
    const struct strlist *l, const char *key, int write, const char *proj,
    const char *home)
{
	const struct strlist	*deny;
	char			 jp[64], q[CONFIG_QUOTE_MAX], *e, *d;
	size_t			 i, j, k;
	int			 hit;

	snprintf(jp, sizeof(jp), "$.filesystem.%s", key);
	for (i = 0; i < l->n; i++) {
		if (l->v[i][0] != '/' && l->v[i][0] != '~' && proj == NULL)
			continue;
		if ((e = managed_expand(l->v[i], proj, home)) == NULL)
			continue;	/* "~" without a home: names nothing */
		for (k = 0, hit = 0; k < 2 && !hit; k++) {
			deny = k == 0 ? &m->deny_read : &m->deny_write;
			if (k == 1 && !write)
				break;
			for (j = 0; j < deny->n && !hit; j++) {
				if ((d = managed_expand(deny->v[j], NULL,
				    home)) == NULL)
					continue;
				hit = managed_path_meets(e, d, proj, home);
				free(d);
				if (!hit)
					continue;
				cfg_quote(q, sizeof(q), l->v[i],
				    strlen(l->v[i]));
				cfg_err(ctx, jp, "%s would open \"%s\" of "
				    "$.filesystem.%s in %s (managed layer), "
				    "which always applies: remove the entry",
				    q, deny->v[j], k == 0 ? "denyRead" :
				    "denyWrite", MANAGED_NAME);
			}
		}
		free(e);
	}
}

/* The check of managed_fs_apply again, relative entries included. */
int
config_managed_paths(const struct config *conf, const char *proj,
    const char *home, struct config_errors *errs)
{
	struct cfgctx	 ctx = { conf->path, errs, 0, NULL, 0, NULL, NULL };
	struct strlist	 read = { NULL, 0 }, write = { NULL, 0 };

	if (conf->managed == NULL)
		return 0;
	/* The layer's own entries: what follows the managed ones. */
	read = conf->allow_read;
	write = conf->allow_write;
	managed_paths_list(&ctx, conf->managed, &read, "allowRead", 0, proj,
	    home);
	managed_paths_list(&ctx, conf->managed, &write, "allowWrite", 1, proj,
	    home);
	if (ctx.nerr == 0)
		return 0;
	cfg_finish(&ctx);
	return -1;
}

/* Whether path lies in a managed denied path (policy.h). */
int
config_managed_denied(const struct config *conf, const char *path,
    const char *home, int write)
{
	const struct managed	*m = conf->managed;
	const struct strlist	*deny;
	char			*d;
	size_t			 j, k;
	int			 hit = 0;

	if (m == NULL)
		return 0;
	for (k = 0; k < 2 && !hit; k++) {
		if (k == 1 && !write)
			break;
		deny = k == 0 ? &m->deny_read : &m->deny_write;
		for (j = 0; j < deny->n && !hit; j++) {
			if ((d = managed_expand(deny->v[j], NULL, home)) == NULL)
				continue;
			hit = managed_path_meets(path, d, NULL, home);
			free(d);
		}
	}
	return hit;
}
