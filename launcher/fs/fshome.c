/*
 * What the plan shows of the home directory while it stays hidden:
 * toolchains re-exposed read-only (filesystem.toolchains), the writable
 * caches (filesystem.caches), the secret stores kept hidden whatever
 * re-exposes their parent, the settings files shown as filtered copies,
 * and the JDKs shown with the proxy in their net.properties.  Run in the
 * parent, by fs_plan_build.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "common/sha256.h"
#include "policy/policy.h"
#include "launcher/fs/fs.h"
#include "launcher/fs/fs_int.h"

static int	 fs_visible(const struct fs_set *, const char *path);
static int	 fs_cache_mkdir(const char *);
static int	 fs_cache_name(const char *project, char *buf, size_t len);
static int	 fs_java_at(struct fs_set *, struct fs_plan *,
		    struct fs_runfiles *, const char *);
static int	 fs_filtered_one(struct fs_set *, struct fs_plan *,
		    const struct config *, const char *, const char *,
		    struct fs_runfiles *, const char *, enum fs_toolchain,
		    enum fs_filter);
static int	 fs_filtered_at(struct fs_set *, const char *path,
		    const char *copy, const char *note);

/* Entries of one directory a "*" of fs_secrets looks at, at most. */
#define FS_STAR_MAX	4096

/* The writable caches, below the home directory. */
#define FS_CACHE_DIR	".cache/pisbx"

/*
 * Whether path would be readable by the set so far: the deepest entry at
 * or above it that says anything about reading says so (at one path,
 * allowing beats denying, as in fs_rules).
 */
static int
fs_visible(const struct fs_set *set, const char *path)
{
	size_t	 i, best = 0, len;
	int	 f, vis = 1;

	for (i = 0; i < set->n; i++) {
		f = set->v[i].flags;
		if (!(f & (P_DENY_READ | P_ALLOW_READ | P_ALLOW_WRITE)) ||
		    !fs_under(path, set->v[i].path))
			continue;
		len = strlen(set->v[i].path);
		if (len < best)
			continue;
		best = len;
		vis = (f & (P_ALLOW_READ | P_ALLOW_WRITE)) != 0;
	}
	return vis;
}

/*
 * Whether a config list names path itself or, with inside, a path inside
 * it (the user asked for it in particular), else a directory above it
 * (the user's entry covers it).  Relative entries start at proj; patterns
 * are fsglob.c's (what they match is in the set once expanded).
 */
int
fs_list_meets(const struct strlist *l, const char *path, int inside,
    const char *proj, const char *home)
{
	char	*p;
	size_t	 i;
	int	 hit;

	for (i = 0; i < l->n; i++) {
		if (glob_is_pattern(l->v[i]) ||
		    (p = fs_resolve(l->v[i], proj, home)) == NULL)
			continue;
		hit = inside ? fs_under(p, path) : fs_under(path, p);
		free(p);
		if (hit)
			return 1;
	}
	return 0;
}

/* filesystem.toolchains: each existing place, read-only, where hidden. */
int
fs_toolchains(struct fs_set *set, const struct config *conf,
    const char *home, const char *proj)
{
	struct stat	 st;
	char		*p, *r;
	size_t		 i;
	int		 rc = 0;

	for (i = 0; i < fs_ntoolchain_paths && rc == 0; i++) {
		if (!(conf->fs_toolchains & (1U << fs_toolchain_paths[i].which)))
			continue;
		if ((p = fs_join(home, fs_toolchain_paths[i].rel)) == NULL)
			return -1;
		r = lstat(p, &st) == 0 ? fs_resolve(p, proj, NULL) : NULL;
		free(p);
		if (r == NULL)
			continue;
		/*
		 * The user's own denyRead at it or inside it wins; a managed
		 * one at it or above it too.
		 */
		if (!fs_visible(set, r) && !(conf->fs_deny_read_set &&
		    fs_list_meets(&conf->deny_read, r, 1, proj, home)) &&
		    !config_managed_denied(conf, r, home, 0))
			rc = fs_set_add(set, r, P_ALLOW_READ, NULL);
		free(r);
	}
	return rc;
}

/*
 * filesystem.caches: one writable directory per project,
 * ~/.cache/pisbx/<name>-<hash of the project's path>, made here when
 * missing; env.c points each tool at its own directory in it.  A tool
 * home holds code (cargo's config.toml and extracted crates, Go's
 * toolchains, npx's packages, gradle's init.d): shared, one project's
 * sandbox would plant what another project's build runs, and that
 * build's output runs on the host.  Beside it, <dir>.workspace names
 * the project (for the person pruning the caches); the sandbox cannot
 * write it.  Every directory must be a real one of ours: a link there
 * (planted by an earlier run that could write the home) would make its
 * target writable.
 */
int
fs_caches(struct fs_set *set, struct fs_plan *plan, const struct config *conf,
    const char *home)
{
	char	*top = NULL, *dir = NULL, *rec = NULL, *line = NULL;
	char	 name[128];
	int	 rc = -1, fd;

	if (conf->fs_caches == 0)
		return 0;
	if ((top = fs_join(home, ".cache")) == NULL)
		return -1;
	if (fs_cache_mkdir(top) == -1)
		goto none;
	free(top);
	if ((top = fs_join(home, FS_CACHE_DIR)) == NULL)
		return -1;
	/* Under a managed denied path: no caches. */
	if (config_managed_denied(conf, top, home, 1))
		goto none;
	if (fs_cache_mkdir(top) == -1)
		goto none;
	if (fs_cache_name(plan->project, name, sizeof(name)) == -1 ||
	    asprintf(&dir, "%s/%s", top, name) == -1 ||
	    asprintf(&rec, "%s/%s.workspace", top, name) == -1) {
		dir = rec = NULL;
		goto done;
	}
	/* The record first: a directory without one is not ours. */
	if ((fd = open(rec, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) != -1) {
		if (dprintf(fd, "%s\n", plan->project) < 0) {
			close(fd);
			unlink(rec);
			goto none;
		}
		close(fd);
	} else if (errno != EEXIST ||
	    (line = fs_read_line(rec, NULL)) == NULL ||
	    strcmp(line, plan->project) != 0) {
		log_warnx("caches: %s does not name %s: no tool caches this "
		    "run (remove it and %s to start over)", rec, plan->project,
		    dir);
		goto none;
	}
	if (fs_cache_mkdir(dir) == -1)
		goto none;
	if (fs_set_add(set, dir, P_ALLOW_READ | P_ALLOW_WRITE, NULL) == -1)
		goto done;
	plan->cache_dir = dir;
	dir = NULL;
none:
	rc = 0;
done:
	free(top);
	free(dir);
	free(rec);
	free(line);
	return rc;
}

/*
 * Make a cache directory (0700) when missing; -1 (said why) when it is
 * not a real directory of ours.
 */
static int
fs_cache_mkdir(const char *p)
{
	struct stat	st;

	if ((mkdir(p, 0700) == -1 && errno != EEXIST) ||
	    lstat(p, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != getuid()) {
		log_warnx("caches: %s is not a directory of ours: no tool "
		    "caches this run", p);
		return -1;
	}
	return 0;
}

/*
 * A project's cache directory name: its last component, in letters a
 * shell needs no quotes for, and 128 bits of SHA-256 of its path.
 */
static int
fs_cache_name(const char *project, char *buf, size_t len)
{
	uint8_t		 md[SHA256_LEN];
	unsigned int	 i;
	const char	*base = strrchr(project, '/');
	char		 b[33];
	size_t		 n;

	base = base != NULL && base[1] != '\0' ? base + 1 : "root";
	for (n = 0; base[n] != '\0' && n < sizeof(b) - 1; n++)
		b[n] = isalnum((unsigned char)base[n]) || base[n] == '-' ||
		    base[n] == '_' || (base[n] == '.' && n > 0) ? base[n] : '_';
	b[n] = '\0';
	sha256(project, strlen(project), md);
	if (len < n + 1 + 32 + 1)
		return -1;
	n = (size_t)snprintf(buf, len, "%s-", b);
	for (i = 0; i < 16; i++)
		n += (size_t)snprintf(buf + n, len - n, "%02x", md[i]);
	return 0;
}

/* Secret stores: hidden where readable, unless named themselves. */
int
fs_secrets_hide(struct fs_set *set, const struct config *conf,
    const char *home, const char *proj)
{
	struct fs_listing	 ls;
	char			*p;
	size_t			 i;
	int			 rc = 0;

	/* Most are missing: the home is read once, not asked for each. */
	memset(&ls, 0, sizeof(ls));
	fs_listing_read(&ls, home, strlen(home));
	for (i = 0; i < fs_nsecrets && rc == 0; i++) {
		if (fs_listing_has(&ls, fs_secrets[i],
		    strcspn(fs_secrets[i], "/")) == 0)
			continue;
		if ((p = fs_join(home, fs_secrets[i])) == NULL) {
			rc = -1;
			break;
		}
		rc = fs_secret_at(set, conf, home, proj, p);
		free(p);
	}
	fs_listing_clear(&ls);
	return rc;
}

/*
 * One secret store's path (its "*" components each every entry of the
 * directory there): hidden when it exists, would be readable, and is
 * not named.  A directory of more than FS_STAR_MAX entries is hidden
 * whole rather than looked through in part.
 */
int
fs_secret_at(struct fs_set *set, const struct config *conf,
    const char *home, const char *proj, const char *path)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	const char	*star;
	char		*dir, *r, *next;
	size_t		 n = 0;
	int		 rc = 0;

	if ((star = strstr(path, "/*/")) != NULL ||
	    ((star = strrchr(path, '/')) != NULL && strcmp(star, "/*") == 0)) {
		if ((dir = strndup(path, (size_t)(star - path))) == NULL)
			return -1;
		if ((d = opendir(dir)) == NULL) {
			free(dir);
			return 0;
		}
		while (rc == 0 && (de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			if (++n > FS_STAR_MAX) {
				log_warnx("%s: more than %d entries: hidden "
				    "whole (the secrets in them cannot all be "
				    "looked for)", dir, FS_STAR_MAX);
				rc = fs_secret_at(set, conf, home, proj, dir);
				break;
			}
			if (asprintf(&next, "%s/%s%s", dir, de->d_name,
			    star + 2) == -1)
				rc = -1;
			else {
				rc = fs_secret_at(set, conf, home, proj, next);
				free(next);
			}
		}
		closedir(d);
		free(dir);
		return rc;
	}
	if (lstat(path, &st) == -1 || (r = fs_resolve(path, proj, NULL)) ==
	    NULL)
		return 0;
	if (fs_visible(set, r) &&
	    !fs_list_meets(&conf->allow_read, r, 1, proj, home) &&
	    !fs_list_meets(&conf->allow_write, r, 1, proj, home))
		rc = fs_set_add(set, r, P_DENY_READ, NULL);
	free(r);
	return rc;
}

/*
 * The JDKs a command may run ($JAVA_HOME, the java on $PATH, the
 * system's and the version managers' in fs_jdk_dirs): each one's
 * net.properties shown as a copy with the sandbox's proxy added
 * (fsfilter_javanet).  The JVM reads no *_PROXY variable; it reads
 * JAVA_TOOL_OPTIONS too, but then prints "Picked up JAVA_TOOL_OPTIONS"
 * on stderr, every time (newuser B11).
 */
int
fs_java(struct fs_set *set, struct fs_plan *plan, const struct fs_inputs *in,
    const char *home, const char *proj)
{
	struct dirent	*de;
	DIR		*d;
	const char	*env;
	char		*path, *dir, *save = NULL, *p, *bin, real[PATH_MAX];
	size_t		 i, n;
	int		 rc = 0;

	if (in->files == NULL)
		return 0;
	if ((env = getenv("JAVA_HOME")) != NULL && env[0] == '/')
		rc = fs_java_at(set, plan, in->files, env);
	/* The java on $PATH: its home is above its real bin/java. */
	if (rc == 0 && in->path != NULL) {
		if ((path = strdup(in->path)) == NULL)
			return -1;
		for (dir = strtok_r(path, ":", &save); dir != NULL && rc == 0;
		    dir = strtok_r(NULL, ":", &save)) {
			if (dir[0] != '/')
				continue;
			if (asprintf(&p, "%s/java", dir) == -1) {
				rc = -1;
				break;
			}
			if (io_realpath(p, real) != NULL &&
			    (bin = strstr(real, "/bin/java")) != NULL &&
			    strcmp(bin, "/bin/java") == 0) {
				*bin = '\0';
				rc = fs_java_at(set, plan, in->files, real);
			}
			free(p);
		}
		free(path);
	}
	for (i = 0; rc == 0 && i < fs_njdk_dirs; i++) {
		if ((fs_jdk_dirs[i][0] == '~' && home == NULL) ||
		    (p = fs_resolve(fs_jdk_dirs[i], proj, home)) == NULL)
			continue;
		if ((d = opendir(p)) == NULL) {
			free(p);
			continue;
		}
		n = 0;
		while (rc == 0 && (de = readdir(d)) != NULL &&
		    ++n <= FS_STAR_MAX) {
			if (de->d_name[0] == '.')
				continue;
			if (asprintf(&dir, "%s/%s", p, de->d_name) == -1)
				rc = -1;
			else {
				rc = fs_java_at(set, plan, in->files, dir);
				free(dir);
			}
		}
		closedir(d);
		free(p);
	}
	return rc;
}

/* One JDK's home (JDK 9 and later: conf/; 8: jre/lib/ or lib/). */
static int
fs_java_at(struct fs_set *set, struct fs_plan *plan,
    struct fs_runfiles *files, const char *jdk)
{
	static const char *const rel[] = {
		"conf/net.properties", "jre/lib/net.properties",
		"lib/net.properties",
	};
	const struct fs_entry	*e;
	struct stat		 st;
	char			*p, *copy, *note, real[PATH_MAX];
	size_t			 i;
	int			 rc = 0;

	for (i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
		if ((p = fs_join(jdk, rel[i])) == NULL)
			return -1;
		if (stat(p, &st) == -1 || !S_ISREG(st.st_mode) ||
		    io_realpath(p, real) == NULL) {
			free(p);
			continue;
		}
		free(p);
		/* Done (a JDK named twice), or hidden (in the home). */
		if (((e = fs_set_find(set, real, strlen(real))) != NULL &&
		    (e->source != NULL || (e->flags & P_DENY_READ))) ||
		    !fs_visible(set, real))
			return 0;
		if ((copy = fsfilter_copy(FS_FILTER_JAVANET, real, files,
		    NULL, NULL)) == NULL)
			return 0;
		if (asprintf(&note, "a copy of %s, the sandbox's proxy added",
		    real) == -1 || fs_own(plan, note) == NULL ||
		    fs_filtered_at(set, real, copy, note) == -1)
			rc = -1;
		else
			plan->njava++;
		free(copy);
		return rc;
	}
	return 0;
}

/*
 * The settings files shown as filtered copies (fs_filtered, and git's
 * $XDG_CONFIG_HOME/git/config, which git reads instead of
 * ~/.config/git/config when XDG_CONFIG_HOME is set): each one's copy.
 */
int
fs_filtered_show(struct fs_set *set, struct fs_plan *plan,
    const struct config *conf, const char *home, const char *proj,
    struct fs_runfiles *files)
{
	const struct fs_filtered	*f;
	const char			*xdg;
	char				*p;
	size_t				 i;
	int				 rc;

	for (i = 0; i < fs_nfiltered; i++) {
		f = &fs_filtered[i];
		if ((p = fs_join(home, f->rel)) == NULL)
			return -1;
		rc = fs_filtered_one(set, plan, conf, home, proj, files, p,
		    f->which, f->filter);
		free(p);
		if (rc == -1)
			return -1;
	}
	if ((xdg = getenv("XDG_CONFIG_HOME")) == NULL || xdg[0] != '/')
		return 0;
	if ((p = fs_join(xdg, "git/config")) == NULL)
		return -1;
	rc = fs_filtered_one(set, plan, conf, home, proj, files, p,
	    TOOLCHAIN_GIT, FS_FILTER_GIT);
	free(p);
	return rc;
}

/*
 * One settings file p: where it would be readable, or is re-exposed from
 * the hidden home, its copy (a file of the run directory) is bound over
 * it.  Without a run directory no copy can be made: the file stays
 * hidden, or is hidden.  The mount point is the name itself, its
 * directory resolved: a ~/.gitconfig that links to a dotfiles repository
 * is still found at ~/.gitconfig in a hidden home.
 */
static int
fs_filtered_one(struct fs_set *set, struct fs_plan *plan,
    const struct config *conf, const char *home, const char *proj,
    struct fs_runfiles *files, const char *p, enum fs_toolchain which,
    enum fs_filter filter)
{
	struct stat	 st;
	char		*r = NULL, *at = NULL, *copy = NULL, *dropped = NULL;
	char		*note;
	int		 rc = -1, vis, named;

	if (lstat(p, &st) == -1 || (r = fs_resolve(p, proj, NULL)) ==
	    NULL || (at = fs_resolve_dir(p)) == NULL) {
		rc = 0;
		goto done;
	}
	named = fs_list_meets(&conf->allow_read, r, 1, proj, home) ||
	    fs_list_meets(&conf->allow_write, r, 1, proj, home) ||
	    fs_list_meets(&conf->allow_read, at, 1, proj, home) ||
	    fs_list_meets(&conf->allow_write, at, 1, proj, home);
	vis = fs_visible(set, at) || fs_visible(set, r);
	if (named || (conf->fs_deny_read_set &&
	    fs_list_meets(&conf->deny_read, r, 1, proj, home)) ||
	    (fs_flags_at(set, at) & P_DENY_READ) ||
	    (fs_flags_at(set, r) & P_DENY_READ) ||
	    (!vis && !(conf->fs_toolchains & (1U << which)))) {
		rc = 0;
		goto done;
	}
	if (files == NULL || (copy = fsfilter_copy(filter, r, files, home,
	    &dropped)) == NULL) {
		/* No copy: nothing of it is shown. */
		if (vis && fs_set_add(set, at, P_DENY_READ, NULL) == -1)
			goto done;
		rc = 0;
		goto done;
	}
	if (asprintf(&note, "a filtered copy of %s%s%s", r, dropped != NULL ?
	    ", without " : "", dropped != NULL ? dropped : "") == -1 ||
	    fs_own(plan, note) == NULL)
		goto done;
	/*
	 * At the name, and at the file a link there points to when that is
	 * readable too (~/.gitconfig -> dotfiles/gitconfig in a home the
	 * config re-exposes).
	 */
	if (fs_filtered_at(set, at, copy, note) == -1 ||
	    (strcmp(r, at) != 0 && fs_visible(set, r) &&
	    fs_filtered_at(set, r, copy, note) == -1))
		goto done;
	rc = 0;
done:
	free(r);
	free(at);
	free(copy);
	free(dropped);
	return rc;
}

/* The set's entry at path shows the copy (a filtered settings file). */
static int
fs_filtered_at(struct fs_set *set, const char *path, const char *copy,
    const char *note)
{
	struct fs_entry	*e;
	size_t		 j;

	if (fs_set_add(set, path, P_ALLOW_READ, NULL) == -1)
		return -1;
	for (j = 0; j < set->n; j++)
		if (strcmp(set->v[j].path, path) == 0)
			break;
	e = &set->v[j];
	free(e->source);
	if ((e->source = strdup(copy)) == NULL)
		return -1;
	e->note = note;
	return 0;
}
