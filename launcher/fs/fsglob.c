/*
 * Filesystem patterns (policy/glob.c) in pisbx-run: denyRead, allowRead
 * and denyWrite entries such as "**" + "/.env", "*.pem" or "secrets/" +
 * "**".
 *
 * A pattern is compiled against the project directory (fspolicy.c) and
 * enforced twice:
 *
 *   at start, over the files that exist: a walk from the pattern's literal
 *       base (pruned where nothing below can match, symlinks never
 *       followed) turns every match into a plain path of the policy --
 *       hidden, re-exposed or write-protected by the mount rules like a
 *       path the config names.  A directory whose whole contents match
 *       ("secrets/" + "**") is taken as one path.  The walk is bounded
 *       (FS_GLOB_MAX_*); past a bound pisbx-run stops with a message
 *       rather than protect less.
 *
 *   during the run, by the creation guard: a name that matches a denyRead
 *       or denyWrite pattern is never created, written, renamed onto or
 *       linked (fs_glob_denied), and a directory is never renamed to where
 *       a name inside it would match (fs_glob_moved).  A denyRead file
 *       made during the run would otherwise be readable: hiding happens at
 *       start only.
 *
 * Matching is on real paths: a symlink is not followed by the walk, but a
 * matching symlink's target is covered (reading the link reads it).
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "policy/policy.h"
#include "launcher/launcher.h"
#include "launcher/fs/fs.h"

/*
 * Bounds of the walk at start, for all patterns together: a few tens of
 * milliseconds on a warm cache (docs/filesystem.md has the figures).
 */
#define FS_GLOB_MAX_ENTRIES	200000	/* directory entries looked at */
#define FS_GLOB_MAX_MATCHES	4096	/* existing paths covered (mounts) */
#define FS_GLOB_MAX_DEPTH	64	/* directories below a base */
/* Entries of a directory renamed during the run that the guard checks. */
#define FS_GLOB_MAX_MOVED	50000

enum fs_walk_next {
	FS_WALK_NEXT,		/* go on with the next entry */
	FS_WALK_DESCEND,	/* list this directory too */
	FS_WALK_STOP		/* done (found, or failed: err set) */
};

/* A depth-first walk of a tree, named by a path it may not have yet. */
struct fs_walk {
	char	 path[PATH_MAX];	/* the entry, as the walk names it */
	size_t	 base_len;		/* the walk's start within path */
	size_t	 entries;
	size_t	 max_entries;
	int	 err;			/* why it stopped, or 0 */
	enum fs_walk_next (*visit)(struct fs_walk *, int is_dir, int is_link);
	void	*arg;
};

/* The start's expansion: what fs_glob_expand's walk carries. */
struct fs_expand {
	struct fs_plan		*plan;
	int			(*add)(void *, const char *,
				    enum fs_glob_kind, const char *);
	void			*arg;
	size_t			 matches;
	const struct fs_glob	*over;	/* the pattern past a bound */
};

/* The guard's check of a renamed directory. */
struct fs_moved {
	const struct fs_plan	*plan;
	const char		*from;	/* where the tree was */
	const struct fs_glob	*hit;
};

static const char *const fs_glob_keys[] = {
	"denyRead", "allowRead", "denyWrite"
};

static int	 fs_glob_add(struct fs_plan *, const char *entry,
		    enum fs_glob_kind, const char *anchor, const char *home);
static int	 fs_walk_dir(struct fs_walk *, int fd, size_t len, int depth);
static int	 fs_walk_start(struct fs_walk *, int fd, const char *path);
static int	 fs_expand_hit(struct fs_expand *, struct fs_glob *,
		    const char *path, int is_link);
static enum fs_walk_next fs_expand_visit(struct fs_walk *, int, int);
static enum fs_walk_next fs_moved_visit(struct fs_walk *, int, int);
static int	 fs_glob_deny(const struct fs_glob *);
static const struct fs_glob *fs_glob_of(const struct fs_plan *,
		    const char *path);

static int
fs_glob_deny(const struct fs_glob *fg)
{
	return fg->kind == FS_GLOB_DENY_READ || fg->kind == FS_GLOB_DENY_WRITE;
}

const char *
fs_glob_key(const struct fs_glob *fg)
{
	return fs_glob_keys[fg->kind];
}

/*
 * Compile one entry.  Its literal base is resolved like a configured path
 * (symlinks followed), so the pattern names real paths, as the guard sees
 * them: "lib/" + "**" + "/.env" with lib a link to /src/lib becomes
 * "/src/lib/" + "**" + "/.env".
 */
static int
fs_glob_add(struct fs_plan *plan, const char *entry, enum fs_glob_kind kind,
    const char *anchor, const char *home)
{
	struct fs_glob	*nv;
	struct glob	*g, *g2;
	const char	*err, *base, *text;
	char		*real = NULL, *again = NULL;
	size_t		 i, bl;

	if ((g = glob_compile(entry, anchor, home, &err)) == NULL) {
		log_warnx("filesystem.%s: pattern %s: %s", fs_glob_keys[kind],
		    entry, err);
		return EXIT_CONFIG;
	}
	base = glob_base(g);
	text = glob_text(g);
	if ((real = fs_resolve(base, "/", NULL)) == NULL)
		goto nomem;
	if (strcmp(real, base) != 0) {
		bl = strcmp(base, "/") == 0 ? 0 : strlen(base);
		if (asprintf(&again, "%s%s", strcmp(real, "/") == 0 ? "" :
		    real, text + bl) == -1) {
			again = NULL;
			goto nomem;
		}
		if ((g2 = glob_compile(again, "/", NULL, &err)) == NULL) {
			log_warnx("filesystem.%s: pattern %s (as %s): %s",
			    fs_glob_keys[kind], entry, again, err);
			glob_free(g);
			free(real);
			free(again);
			return EXIT_CONFIG;
		}
		glob_free(g);
		g = g2;
	}
	free(real);
	free(again);
	for (i = 0; i < plan->nglobs; i++) {
		if (plan->globs[i].kind == kind &&
		    strcmp(glob_text(plan->globs[i].g), glob_text(g)) == 0) {
			glob_free(g);
			return 0;
		}
	}
	if ((nv = reallocarray(plan->globs, plan->nglobs + 1,
	    sizeof(*nv))) == NULL) {
		glob_free(g);
		return -1;
	}
	plan->globs = nv;
	nv[plan->nglobs].g = g;
	nv[plan->nglobs].kind = kind;
	nv[plan->nglobs].found = 0;
	plan->nglobs++;
	return 0;
nomem:
	glob_free(g);
	free(real);
	return -1;
}

int
fs_glob_compile(struct fs_plan *plan, const struct config *conf,
    const char *anchor, const char *home)
{
	const struct strlist	*lists[] = {
		&conf->deny_read, &conf->allow_read, &conf->deny_write
	};
	const enum fs_glob_kind	 kinds[] = {
		FS_GLOB_DENY_READ, FS_GLOB_ALLOW_READ, FS_GLOB_DENY_WRITE
	};
	size_t			 i, j;
	int			 rc;

	for (i = 0; i < sizeof(lists) / sizeof(*lists); i++) {
		for (j = 0; j < lists[i]->n; j++) {
			if (!glob_is_pattern(lists[i]->v[j]))
				continue;
			if ((rc = fs_glob_add(plan, lists[i]->v[j], kinds[i],
			    anchor, home)) != 0)
				return rc;
		}
	}
	return 0;
}

void
fs_glob_free(struct fs_plan *plan)
{
	size_t	i;

	for (i = 0; i < plan->nglobs; i++)
		glob_free(plan->globs[i].g);
	free(plan->globs);
	plan->globs = NULL;
	plan->nglobs = 0;
}

/*
 * List the directory fd (taken over) whose name fills w->path up to len:
 * each entry goes to w->visit, and the directories it asks for are listed
 * in turn.  0 when the walk may go on, -1 when it stopped (w->err: 0 when
 * the visitor stopped it, else why).
 */
static int
fs_walk_dir(struct fs_walk *w, int fd, size_t len, int depth)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	size_t		 nl, l2;
	int		 is_dir, is_link, sub, rc = 0;

	if ((d = fdopendir(fd)) == NULL) {
		w->err = errno;
		close(fd);
		return -1;
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (++w->entries > w->max_entries) {
			w->err = E2BIG;
			rc = -1;
			break;
		}
		nl = strlen(de->d_name);
		l2 = len + (len == 1 ? 0 : 1) + nl;
		if (l2 >= sizeof(w->path)) {
			w->err = ENAMETOOLONG;
			rc = -1;
			break;
		}
		if (len != 1)
			w->path[len] = '/';
		memcpy(w->path + l2 - nl, de->d_name, nl + 1);
		if (de->d_type == DT_UNKNOWN) {
			if (fstatat(dirfd(d), de->d_name, &st,
			    AT_SYMLINK_NOFOLLOW) == -1)
				continue;	/* gone */
			is_dir = S_ISDIR(st.st_mode);
			is_link = S_ISLNK(st.st_mode);
		} else {
			is_dir = de->d_type == DT_DIR;
			is_link = de->d_type == DT_LNK;
		}
		switch (w->visit(w, is_dir, is_link)) {
		case FS_WALK_NEXT:
			break;
		case FS_WALK_STOP:
			rc = -1;
			break;
		case FS_WALK_DESCEND:
			if (depth >= FS_GLOB_MAX_DEPTH) {
				w->err = ELOOP;
				rc = -1;
				break;
			}
			sub = openat(dirfd(d), de->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub == -1) {
				/*
				 * Gone, or not searchable: nothing in it can
				 * be reached.  Searchable but not listable:
				 * names in it can be opened, unseen here.
				 */
				if (errno == ENOENT || errno == ENOTDIR ||
				    faccessat(dirfd(d), de->d_name, X_OK,
				    AT_SYMLINK_NOFOLLOW) == -1)
					break;
				w->err = EACCES;
				rc = -1;
				break;
			}
			rc = fs_walk_dir(w, sub, l2, depth + 1);
			break;
		}
		if (rc == 0)	/* else path names where it stopped */
			w->path[len] = '\0';
	}
	if (rc == 0 && de == NULL && errno != 0) {
		w->err = errno;
		rc = -1;
	}
	closedir(d);
	return rc;
}

/* Walk the directory fd (taken over), named path. */
static int
fs_walk_start(struct fs_walk *w, int fd, const char *path)
{
	size_t	len = strlen(path);

	if (len >= sizeof(w->path)) {
		close(fd);
		w->err = ENAMETOOLONG;
		return -1;
	}
	memcpy(w->path, path, len + 1);
	w->base_len = len;
	w->err = 0;
	return fs_walk_dir(w, fd, len, 0);
}

/*
 * One existing path a pattern covers.  A matching symlink covers its
 * target: reading or writing the link reads or writes it.  A target that
 * is neither a file nor a directory (a device, a socket) holds nothing to
 * hide, and hiding it would break it.
 */
static int
fs_expand_hit(struct fs_expand *x, struct fs_glob *fg, const char *path,
    int is_link)
{
	struct stat	 st;
	char		 real[PATH_MAX];
	const char	*p = path;

	if (is_link) {
		if (io_realpath(path, real) == NULL || stat(real, &st) == -1 ||
		    !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			return 0;
		p = real;
	}
	if (++x->matches > FS_GLOB_MAX_MATCHES) {
		x->over = fg;
		return -1;
	}
	fg->found++;
	return x->add(x->arg, p, fg->kind, glob_text(fg->g));
}

static enum fs_walk_next
fs_expand_visit(struct fs_walk *w, int is_dir, int is_link)
{
	struct fs_expand	*x = w->arg;
	struct fs_plan		*plan = x->plan;
	const struct glob	*g;
	size_t			 i;
	int			 descend = 0;

	for (i = 0; i < plan->nglobs; i++) {
		g = plan->globs[i].g;
		if (glob_match(g, w->path, is_dir) && fs_expand_hit(x,
		    &plan->globs[i], w->path, is_link) == -1)
			return FS_WALK_STOP;
		if (!is_dir || is_link)
			continue;
		if (glob_match_all_below(g, w->path)) {
			if (fs_expand_hit(x, &plan->globs[i], w->path, 0) ==
			    -1)
				return FS_WALK_STOP;
		} else if (glob_match_below(g, w->path))
			descend = 1;
	}
	return descend ? FS_WALK_DESCEND : FS_WALK_NEXT;
}

/* The pattern a failed walk was working for: one whose base holds path. */
static const struct fs_glob *
fs_glob_of(const struct fs_plan *plan, const char *path)
{
	size_t	i;

	for (i = 0; i < plan->nglobs; i++)
		if (fs_under(path, glob_base(plan->globs[i].g)))
			return &plan->globs[i];
	return plan->nglobs > 0 ? &plan->globs[0] : NULL;
}

int
fs_glob_expand(struct fs_plan *plan, int (*add)(void *, const char *,
    enum fs_glob_kind, const char *), void *arg)
{
	struct fs_expand	 x;
	struct fs_walk		*w;
	const struct fs_glob	*fg;
	const char		*base;
	size_t			 i, j;
	int			 fd, rc = 0;

	if (plan->nglobs == 0)
		return 0;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -1;
	memset(&x, 0, sizeof(x));
	x.plan = plan;
	x.add = add;
	x.arg = arg;
	w->max_entries = FS_GLOB_MAX_ENTRIES;
	w->visit = fs_expand_visit;
	w->arg = &x;
	for (i = 0; i < plan->nglobs && rc == 0; i++) {
		base = glob_base(plan->globs[i].g);
		/* Walked already from a base above it (or the same). */
		for (j = 0; j < plan->nglobs; j++) {
			const char *b2 = glob_base(plan->globs[j].g);

			if (j != i && fs_under(base, b2) &&
			    (strcmp(base, b2) != 0 || j < i))
				break;
		}
		if (j < plan->nglobs)
			continue;
		if ((fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
		    -1) {
			if (errno == ENOENT || errno == ENOTDIR)
				continue;	/* nothing exists there */
			w->err = errno;
			snprintf(w->path, sizeof(w->path), "%s", base);
			rc = -1;
			break;
		}
		/* The base itself may be a directory taken whole. */
		for (j = 0; j < plan->nglobs && rc == 0; j++)
			if (glob_match_all_below(plan->globs[j].g, base) &&
			    fs_expand_hit(&x, &plan->globs[j], base, 0) == -1)
				rc = -1;
		if (rc == 0)
			rc = fs_walk_start(w, fd, base);
		else
			close(fd);
	}
	if (rc == 0)
		goto done;
	if (x.over != NULL) {
		log_warnx("filesystem.%s: pattern %s matches more than %d "
		    "existing paths; pisbx-run stops rather than protect less: "
		    "name a directory above them instead (\"dir/**\" takes a "
		    "directory whole)", fs_glob_key(x.over),
		    glob_text(x.over->g), FS_GLOB_MAX_MATCHES);
		rc = EXIT_CONFIG;
		goto done;
	}
	if (w->err == 0) {		/* an add failed: no memory */
		rc = -1;
		goto done;
	}
	fg = fs_glob_of(plan, w->path);
	switch (w->err) {
	case E2BIG:
		log_warnx("filesystem.%s: pattern %s: more than %d files and "
		    "directories to look at (the last %s); pisbx-run stops "
		    "rather than protect less: narrow the pattern to the "
		    "directories that hold such files (\"src/**/.env\"), or "
		    "list the paths", fs_glob_key(fg), glob_text(fg->g),
		    FS_GLOB_MAX_ENTRIES, w->path);
		break;
	case ELOOP:
		log_warnx("filesystem.%s: pattern %s: %s is more than %d "
		    "directories below %s; pisbx-run stops rather than protect "
		    "less: narrow the pattern", fs_glob_key(fg),
		    glob_text(fg->g), w->path, FS_GLOB_MAX_DEPTH,
		    glob_base(fg->g));
		break;
	default:
		log_warnx("filesystem.%s: pattern %s: cannot list %s: %s; "
		    "files in it could match, unseen: pisbx-run stops rather "
		    "than protect less (make it readable, or narrow the "
		    "pattern)", fs_glob_key(fg), glob_text(fg->g), w->path,
		    strerror(w->err));
		break;
	}
	rc = EXIT_CONFIG;
done:
	free(w);
	return rc;
}

const struct fs_glob *
fs_glob_denied(const struct fs_plan *plan, const char *path)
{
	const struct fs_glob	*fg;
	size_t			 i;

	for (i = 0; i < plan->nglobs; i++) {
		fg = &plan->globs[i];
		/* Either kind of entry: a name that is not one yet. */
		if (fs_glob_deny(fg) && (glob_match(fg->g, path, 0) ||
		    glob_match(fg->g, path, 1)))
			return fg;
	}
	return NULL;
}

/*
 * An entry of a renamed tree: a name that matches a deny pattern where it
 * lands, and did not where it was (then it is hidden or protected there
 * already, and moves with its mount).
 */
static enum fs_walk_next
fs_moved_visit(struct fs_walk *w, int is_dir, int is_link)
{
	struct fs_moved		*m = w->arg;
	const struct fs_glob	*fg;
	char			 old[PATH_MAX];
	size_t			 i;
	int			 descend = 0;

	if ((size_t)snprintf(old, sizeof(old), "%s%s", m->from,
	    w->path + w->base_len) >= sizeof(old)) {
		w->err = ENAMETOOLONG;
		return FS_WALK_STOP;
	}
	for (i = 0; i < m->plan->nglobs; i++) {
		fg = &m->plan->globs[i];
		if (!fs_glob_deny(fg))
			continue;
		if (glob_match(fg->g, w->path, is_dir) &&
		    !glob_match(fg->g, old, is_dir)) {
			m->hit = fg;
			return FS_WALK_STOP;
		}
		if (is_dir && !is_link && glob_match_below(fg->g, w->path))
			descend = 1;
	}
	return descend ? FS_WALK_DESCEND : FS_WALK_NEXT;
}

int
fs_glob_moved(const struct fs_plan *plan, int dirfd, const char *from,
    const char *to, char *hit, size_t hitlen, const struct fs_glob **fg)
{
	struct fs_moved	 m;
	struct fs_walk	*w;
	size_t		 i;
	int		 fd, rc;

	*fg = NULL;
	for (i = 0; i < plan->nglobs; i++)
		if (fs_glob_deny(&plan->globs[i]) &&
		    glob_match_below(plan->globs[i].g, to))
			break;
	if (i == plan->nglobs)
		return 0;
	if ((fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3)) == -1 ||
	    (w = calloc(1, sizeof(*w))) == NULL) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	memset(&m, 0, sizeof(m));
	m.plan = plan;
	m.from = from;
	w->max_entries = FS_GLOB_MAX_MOVED;
	w->visit = fs_moved_visit;
	w->arg = &m;
	/* A directory fd reads from its start whatever was read before. */
	(void)lseek(fd, 0, SEEK_SET);
	rc = fs_walk_start(w, fd, to);
	snprintf(hit, hitlen, "%s", w->path);
	if (m.hit != NULL) {
		*fg = m.hit;
		rc = 1;
	} else if (rc == -1)
		errno = w->err;
	free(w);
	return rc;
}
