/*
 * The filesystem policy, resolved in the parent before the sandbox starts:
 * every configured path becomes an absolute, symlink-free path, and each
 * path gets one mount rule.  Nothing here touches the filesystem beyond
 * stat(2), realpath(3) and reading a worktree's .git file.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "policy/policy.h"
#include "launcher/launcher.h"

#define P_DENY_READ	0x01
#define P_ALLOW_READ	0x02
#define P_ALLOW_WRITE	0x04
#define P_DENY_WRITE	0x08

struct fs_entry {
	char	*path;
	int	 flags;
};

struct fs_set {
	struct fs_entry	*v;
	size_t		 n;
};

/*
 * The mandatory write-deny set inside every writable root: files that
 * other programs later read as configuration or execute (shell rc files,
 * git hooks and config, editor and agent settings).
 */
static const char *const fs_mandatory[] = {
	".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc",
	".zprofile", ".profile", ".ripgreprc", ".mcp.json", ".vscode",
	".idea", ".claude/commands", ".claude/agents", ".pi/settings.json",
	".pi/sandbox.json", ".pi/pi-auto-review.json", ".git/hooks",
};

static char	*fs_resolve(const char *in, const char *cwd,
		    const char *home);
static int	 fs_set_add(struct fs_set *, const char *path, int flags);
static int	 fs_set_add_list(struct fs_set *, const struct strlist *,
		    int flags, const char *cwd, const char *home);
static int	 fs_strv_add(char ***, size_t *, const char *);
static int	 fs_under(const char *path, const char *root);
static int	 fs_depth(const char *);
static int	 fs_rule_cmp(const void *, const void *);
static int	 fs_worktree(struct fs_set *, const char *root);
static char	*fs_join(const char *a, const char *b);

/* "a" + "/" + "b", without doubling the slash after "/". */
static char *
fs_join(const char *a, const char *b)
{
	char	*s;
	size_t	 la = strlen(a);

	if (la > 0 && a[la - 1] == '/')
		la--;
	if (asprintf(&s, "%.*s/%s", (int)la, a, b) == -1)
		return NULL;
	return s;
}

/*
 * Absolute, symlink-free form of a configured path: "~" and "~/x" use
 * home, a relative path is taken against cwd, and the longest existing
 * prefix goes through realpath(3) so a path that does not exist yet is
 * still named the way the kernel will see it once created.
 */
static char *
fs_resolve(const char *in, const char *cwd, const char *home)
{
	char	*abs = NULL, *res = NULL, *cut, real[PATH_MAX];
	char	*tail = NULL;

	if (in[0] == '~' && (in[1] == '\0' || in[1] == '/')) {
		if (home == NULL)
			return NULL;
		abs = fs_join(home, in[1] == '/' ? in + 2 : "");
	} else if (in[0] == '/')
		abs = strdup(in);
	else
		abs = fs_join(cwd, in);
	if (abs == NULL)
		return NULL;
	/* Trailing slashes mean nothing here. */
	while (strlen(abs) > 1 && abs[strlen(abs) - 1] == '/')
		abs[strlen(abs) - 1] = '\0';

	cut = abs + strlen(abs);
	for (;;) {
		char save = *cut;

		*cut = '\0';
		if (realpath(abs[0] != '\0' ? abs : "/", real) != NULL) {
			*cut = save;
			tail = cut;
			break;
		}
		*cut = save;
		while (cut > abs && *--cut != '/')
			;
		if (cut == abs) {
			strcpy(real, "/");
			tail = abs;
			break;
		}
	}
	while (*tail == '/')
		tail++;
	if (*tail == '\0')
		res = strdup(real);
	else
		res = fs_join(real, tail);
	free(abs);
	return res;
}

static int
fs_set_add(struct fs_set *set, const char *path, int flags)
{
	struct fs_entry	*v;
	size_t		 i;

	if (path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < set->n; i++) {
		if (strcmp(set->v[i].path, path) == 0) {
			set->v[i].flags |= flags;
			return 0;
		}
	}
	v = reallocarray(set->v, set->n + 1, sizeof(*v));
	if (v == NULL)
		return -1;
	set->v = v;
	if ((v[set->n].path = strdup(path)) == NULL)
		return -1;
	v[set->n].flags = flags;
	set->n++;
	return 0;
}

static int
fs_set_add_list(struct fs_set *set, const struct strlist *l, int flags,
    const char *cwd, const char *home)
{
	char	*p;
	size_t	 i;

	for (i = 0; i < l->n; i++) {
		if ((p = fs_resolve(l->v[i], cwd, home)) == NULL) {
			log_warnx("filesystem path %s: cannot resolve "
			    "(no home directory?)", l->v[i]);
			return -1;
		}
		if (fs_set_add(set, p, flags) == -1) {
			free(p);
			return -1;
		}
		free(p);
	}
	return 0;
}

static int
fs_strv_add(char ***v, size_t *n, const char *s)
{
	char	**nv;
	size_t	  i;

	for (i = 0; i < *n; i++)
		if (strcmp((*v)[i], s) == 0)
			return 0;
	if ((nv = reallocarray(*v, *n + 1, sizeof(*nv))) == NULL)
		return -1;
	*v = nv;
	if ((nv[*n] = strdup(s)) == NULL)
		return -1;
	(*n)++;
	return 0;
}

/* Whether path is root or lies below it. */
static int
fs_under(const char *path, const char *root)
{
	size_t	len = strlen(root);

	if (strcmp(root, "/") == 0)
		return 1;
	return strncmp(path, root, len) == 0 &&
	    (path[len] == '\0' || path[len] == '/');
}

static int
fs_depth(const char *p)
{
	int	d = 0;

	for (; *p != '\0'; p++)
		if (*p == '/')
			d++;
	return d;
}

static int
fs_rule_cmp(const void *a, const void *b)
{
	const struct fs_rule *ra = a, *rb = b;
	int	da = fs_depth(ra->path), db = fs_depth(rb->path);

	if (da != db)
		return da < db ? -1 : 1;
	return strcmp(ra->path, rb->path);
}

/*
 * A git worktree's .git is a file "gitdir: DIR"; DIR and its common
 * directory (DIR/commondir) must stay readable so git works, and must not
 * become writable through the worktree: the main repository's hooks and
 * config live there.
 */
static int
fs_worktree(struct fs_set *set, const char *root)
{
	char	*dotgit = NULL, *gitdir = NULL, *common = NULL;
	char	*cdfile = NULL;
	char	 line[PATH_MAX + 16], *p;
	FILE	*f = NULL;
	struct stat st;
	int	 rc = 0;

	if ((dotgit = fs_join(root, ".git")) == NULL)
		return -1;
	if (lstat(dotgit, &st) == -1 || !S_ISREG(st.st_mode))
		goto done;
	if ((f = fopen(dotgit, "re")) == NULL)
		goto done;
	if (fgets(line, sizeof(line), f) == NULL ||
	    strncmp(line, "gitdir:", 7) != 0)
		goto done;
	p = line + 7;
	p += strspn(p, " \t");
	p[strcspn(p, "\r\n")] = '\0';
	if ((gitdir = fs_resolve(p, root, NULL)) == NULL)
		goto fail;
	if (fs_set_add(set, gitdir, P_ALLOW_READ | P_DENY_WRITE) == -1)
		goto fail;
	fclose(f);
	f = NULL;
	if ((cdfile = fs_join(gitdir, "commondir")) == NULL)
		goto fail;
	if ((f = fopen(cdfile, "re")) != NULL &&
	    fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if ((common = fs_resolve(line, gitdir, NULL)) == NULL)
			goto fail;
		if (fs_set_add(set, common, P_ALLOW_READ | P_DENY_WRITE) == -1)
			goto fail;
	}
	goto done;
fail:
	rc = -1;
done:
	if (f != NULL)
		fclose(f);
	free(dotgit);
	free(gitdir);
	free(common);
	free(cdfile);
	return rc;
}

int
fs_plan_build(struct fs_plan *plan, const struct config *conf,
    const char *cwd, const char *home, const char *tmpdir,
    const char *exe_dir, const char *config_path)
{
	struct fs_set	 set = { NULL, 0 };
	struct stat	 st;
	char		*p = NULL, *home_real = NULL;
	const char	*env;
	size_t		 i, j, nroots;
	int		 f;

	memset(plan, 0, sizeof(*plan));
	if (home != NULL && home[0] == '/' &&
	    (home_real = fs_resolve(home, cwd, NULL)) == NULL)
		goto fail;

	/* Reads. */
	if (conf->fs_deny_read_set) {
		if (fs_set_add_list(&set, &conf->deny_read, P_DENY_READ, cwd,
		    home_real) == -1)
			goto fail;
	} else if (home_real != NULL && strcmp(home_real, "/") != 0) {
		if (fs_set_add(&set, home_real, P_DENY_READ) == -1)
			goto fail;
	}
	if (fs_set_add_list(&set, &conf->allow_read, P_ALLOW_READ, cwd,
	    home_real) == -1)
		goto fail;
	if (fs_set_add(&set, cwd, P_ALLOW_READ) == -1 ||
	    fs_set_add(&set, exe_dir, P_ALLOW_READ | P_DENY_WRITE) == -1)
		goto fail;

	/* Writes. */
	if (conf->fs_allow_write_set) {
		if (fs_set_add_list(&set, &conf->allow_write, P_ALLOW_WRITE,
		    cwd, home_real) == -1)
			goto fail;
	} else if (fs_set_add(&set, cwd, P_ALLOW_WRITE) == -1)
		goto fail;
	if (fs_set_add(&set, tmpdir, P_ALLOW_WRITE) == -1)
		goto fail;
	if (fs_set_add_list(&set, &conf->deny_write, P_DENY_WRITE, cwd,
	    home_real) == -1)
		goto fail;

	/* The trusted config, and every place the next run looks for one. */
	if (config_path != NULL) {
		if ((p = fs_resolve(config_path, cwd, home_real)) == NULL ||
		    fs_set_add(&set, p, P_DENY_WRITE) == -1)
			goto fail;
		free(p);
		p = NULL;
	}
	if ((env = getenv("PISBX_CONFIG")) != NULL && env[0] != '\0') {
		if ((p = fs_resolve(env, cwd, home_real)) == NULL ||
		    fs_set_add(&set, p, P_DENY_WRITE) == -1)
			goto fail;
		free(p);
		p = NULL;
	}
	if ((env = getenv("XDG_CONFIG_HOME")) != NULL && env[0] == '/') {
		if ((p = fs_join(env, "pisbx")) == NULL)
			goto fail;
	} else if (home_real != NULL) {
		if ((p = fs_join(home_real, ".config/pisbx")) == NULL)
			goto fail;
	}
	if (p != NULL) {
		char *q = fs_resolve(p, cwd, home_real);

		free(p);
		p = NULL;
		if (q == NULL || fs_set_add(&set, q, P_DENY_WRITE) == -1) {
			free(q);
			goto fail;
		}
		free(q);
	}

	/* Writable roots, then the mandatory set inside each of them. */
	for (i = 0; i < set.n; i++) {
		if (!(set.v[i].flags & P_ALLOW_WRITE) ||
		    (set.v[i].flags & P_DENY_WRITE))
			continue;
		if (stat(set.v[i].path, &st) == -1 || !S_ISDIR(st.st_mode))
			continue;
		if (fs_strv_add(&plan->writable, &plan->nwritable,
		    set.v[i].path) == -1)
			goto fail;
	}
	nroots = plan->nwritable;
	for (i = 0; i < nroots; i++) {
		const char *root = plan->writable[i];

		for (j = 0; j < sizeof(fs_mandatory) / sizeof(*fs_mandatory);
		    j++) {
			if ((p = fs_join(root, fs_mandatory[j])) == NULL ||
			    fs_set_add(&set, p, P_DENY_WRITE) == -1)
				goto fail;
			free(p);
			p = NULL;
		}
		if (!conf->allow_git_config) {
			if ((p = fs_join(root, ".git/config")) == NULL ||
			    fs_set_add(&set, p, P_DENY_WRITE) == -1)
				goto fail;
			free(p);
			p = NULL;
		}
		if (fs_worktree(&set, root) == -1)
			goto fail;
	}
	if (fs_worktree(&set, cwd) == -1)
		goto fail;

	/* One rule per existing path that changes what the sandbox sees. */
	for (i = 0; i < set.n; i++) {
		struct fs_rule	*r, *nv;
		const char	*path = set.v[i].path;
		int		 hidden_above = 0, writable_above = 0;

		f = set.v[i].flags;
		if (f & P_DENY_WRITE) {
			if (fs_strv_add(&plan->guarded, &plan->nguarded,
			    path) == -1)
				goto fail;
		}
		if (lstat(path, &st) == -1)
			continue;
		for (j = 0; j < set.n; j++) {
			if (j == i || !fs_under(path, set.v[j].path))
				continue;
			if (set.v[j].flags & P_DENY_READ)
				hidden_above = 1;
			if (set.v[j].flags & P_ALLOW_WRITE)
				writable_above = 1;
		}
		if ((nv = reallocarray(plan->rules, plan->nrules + 1,
		    sizeof(*nv))) == NULL)
			goto fail;
		plan->rules = nv;
		r = &nv[plan->nrules];
		if (f & P_DENY_WRITE) {
			if ((f & P_DENY_READ) && !(f & P_ALLOW_READ))
				r->action = FS_HIDE;
			else if (writable_above || hidden_above)
				r->action = FS_EXPOSE_RO;
			else
				continue;
		} else if (f & P_ALLOW_WRITE)
			r->action = FS_EXPOSE_RW;
		else if (f & P_ALLOW_READ) {
			if (!hidden_above)
				continue;
			r->action = FS_EXPOSE_RO;
		} else if (f & P_DENY_READ)
			r->action = FS_HIDE;
		else
			continue;
		if ((r->path = strdup(path)) == NULL)
			goto fail;
		r->is_dir = S_ISDIR(st.st_mode);
		plan->nrules++;
	}
	qsort(plan->rules, plan->nrules, sizeof(*plan->rules), fs_rule_cmp);

	for (i = 0; i < set.n; i++)
		free(set.v[i].path);
	free(set.v);
	free(home_real);
	return 0;
fail:
	free(p);
	for (i = 0; i < set.n; i++)
		free(set.v[i].path);
	free(set.v);
	free(home_real);
	fs_plan_free(plan);
	return -1;
}

void
fs_plan_free(struct fs_plan *plan)
{
	size_t	i;

	for (i = 0; i < plan->nrules; i++)
		free(plan->rules[i].path);
	for (i = 0; i < plan->nwritable; i++)
		free(plan->writable[i]);
	for (i = 0; i < plan->nguarded; i++)
		free(plan->guarded[i]);
	free(plan->rules);
	free(plan->writable);
	free(plan->guarded);
	memset(plan, 0, sizeof(*plan));
}

/*
 * Whether creating or replacing path would touch a guarded path: the path
 * itself or anything below it, and with ancestors_too also a directory on
 * the way to one (renaming a prepared directory to ".git" would otherwise
 * plant .git/hooks in one step).
 */
int
fs_plan_guarded(const struct fs_plan *plan, const char *path,
    int ancestors_too)
{
	size_t	i;

	for (i = 0; i < plan->nguarded; i++) {
		if (fs_under(path, plan->guarded[i]))
			return 1;
		if (ancestors_too && fs_under(plan->guarded[i], path))
			return 1;
	}
	return 0;
}

void
fs_plan_dump(const struct fs_plan *plan)
{
	static const char *const names[] = { "hide", "read-only", "writable" };
	size_t	i;

	for (i = 0; i < plan->nrules; i++)
		log_info("fs: %-9s %s", names[plan->rules[i].action],
		    plan->rules[i].path);
	for (i = 0; i < plan->nguarded; i++)
		log_debug("fs: guarded %s", plan->guarded[i]);
}
