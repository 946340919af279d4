/*
 * The hooks of the git work tree around a path, for the creation guard.
 * git runs the hooks of a repository from core.hooksPath when it is set
 * (husky, lefthook and pre-commit set it, or install hooks that read
 * their own files at the top of the work tree), and those live in the
 * work tree, where the command writes.  For a work tree that existed
 * before the run they are protected like .git/hooks, at any depth.
 *
 * Finding the work tree means walking up from the path's directory to
 * the first one holding a ".git"; each directory on the way is
 * remembered (by device and inode), so the next path nearby is answered
 * from memory.  Renaming a directory, or making a ".git", can change the
 * answers: the guard then forgets them all (gitwork_flush).  A directory
 * removed (rmdir is not the guard's) leaves its inode number free for a
 * new one elsewhere, whose answer may differ: the guard makes every new
 * directory and forgets what was known of its number (gitwork_forget).
 * The host may move a directory too, from one work tree into another:
 * each answer holds a hash of the path the directory had, and one given
 * for another path is no answer.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/fs/fs.h"
#include "launcher/guard/guard_int.h"

#define GITWORK_DIRS	16384	/* directories remembered */
#define GITWORK_TREES	1024	/* work trees remembered */
#define GITWORK_UP	256	/* levels walked at most */

/*
 * A directory's answer: the index in trees plus GITWORK_BIAS, so that -1
 * (no work tree) is 1 and a zeroed slot is free: a new table costs no
 * page until used.
 */
#define GITWORK_BIAS	2

struct gitwork_dir {
	dev_t		dev;
	ino_t		ino;
	uint64_t	path;	/* gitwork_hash of its path then */
	int		val;	/* tree + GITWORK_BIAS; 0: free slot */
};

struct gitwork_tree {
	char		*top;
	struct strlist	 hooks;	/* resolved hook directories and files */
};

struct gitwork {
	const struct fs_plan	*plan;
	struct gitwork_dir	 dirs[GITWORK_DIRS];
	size_t			 ndirs;
	struct gitwork_tree	 trees[GITWORK_TREES];
	size_t			 ntrees;
};

static size_t	gitwork_slot(const struct gitwork *, dev_t, ino_t);
static uint64_t	gitwork_hash(const char *);
static void	gitwork_remember(struct gitwork *, const struct stat *,
		    uint64_t path, int tree);
static int	gitwork_tree(struct gitwork *, const char *top);
static int	gitwork_find(struct gitwork *, int dirfd,
		    const struct stat *dirst, const char *dir,
		    int (*made)(void *, const struct stat *), void *arg);

struct gitwork *
gitwork_new(const struct fs_plan *plan)
{
	struct gitwork	*w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->plan = plan;
	return w;
}

void
gitwork_flush(struct gitwork *w)
{
	size_t	i;

	if (w->ndirs > 0)
		memset(w->dirs, 0, sizeof(w->dirs));
	w->ndirs = 0;
	for (i = 0; i < w->ntrees; i++) {
		free(w->trees[i].top);
		strlist_free(&w->trees[i].hooks);
	}
	w->ntrees = 0;
}

void
gitwork_forget(struct gitwork *w, const struct stat *st)
{
	size_t	i = gitwork_slot(w, st->st_dev, st->st_ino);

	/*
	 * Open addressing: an entry cannot just be emptied, or those placed
	 * past it would be lost; start over instead (a new directory whose
	 * number was known is rare).
	 */
	if (w->dirs[i].val != 0)
		gitwork_flush(w);
}

void
gitwork_free(struct gitwork *w)
{
	if (w == NULL)
		return;
	gitwork_flush(w);
	free(w);
}

/* The slot of (dev, ino): its entry, or the free slot to fill. */
static size_t
gitwork_slot(const struct gitwork *w, dev_t dev, ino_t ino)
{
	size_t	i = fs_id_hash(dev, ino) & (GITWORK_DIRS - 1);

	while (w->dirs[i].val != 0 &&
	    (w->dirs[i].dev != dev || w->dirs[i].ino != ino))
		i = (i + 1) & (GITWORK_DIRS - 1);
	return i;
}

/* FNV-1a of a directory's path. */
static uint64_t
gitwork_hash(const char *path)
{
	uint64_t	h = 14695981039346656037ULL;

	for (; *path != '\0'; path++)
		h = (h ^ (unsigned char)*path) * 1099511628211ULL;
	return h;
}

static void
gitwork_remember(struct gitwork *w, const struct stat *st, uint64_t path,
    int tree)
{
	size_t	i;

	if (w->ndirs * 2 >= GITWORK_DIRS)
		return;		/* full: answered by walking */
	i = gitwork_slot(w, st->st_dev, st->st_ino);
	if (w->dirs[i].val == 0)
		w->ndirs++;
	w->dirs[i].dev = st->st_dev;
	w->dirs[i].ino = st->st_ino;
	w->dirs[i].path = path;
	w->dirs[i].val = tree + GITWORK_BIAS;
}

/* The work tree at top, learnt once: its index, or -1. */
static int
gitwork_tree(struct gitwork *w, const char *top)
{
	struct gitwork_tree	*t;

	if (w->ntrees == GITWORK_TREES)
		gitwork_flush(w);
	t = &w->trees[w->ntrees];
	memset(t, 0, sizeof(*t));
	if ((t->top = strdup(top)) == NULL ||
	    fs_git_hookdirs(top, &w->plan->hookspaths, w->plan->home,
	    &t->hooks) == -1) {
		free(t->top);
		strlist_free(&t->hooks);
		return -1;
	}
	return (int)w->ntrees++;
}

/*
 * The work tree around directory dirfd (named dir): the index of an old
 * one, -1 for none or one made during the run, -2 when it cannot be told
 * (the caller protects).
 */
static int
gitwork_find(struct gitwork *w, int dirfd, const struct stat *dirst,
    const char *dir, int (*made)(void *, const struct stat *), void *arg)
{
	struct stat	 seen[GITWORK_UP], st, up;
	uint64_t	 hash[GITWORK_UP], h;
	char		 top[PATH_MAX], *slash;
	size_t		 n = 0, i;
	int		 cur, next, tree = -1;

	if (strlen(dir) >= sizeof(top))
		return -2;
	if (dirst != NULL)
		st = *dirst;
	else if (fstat(dirfd, &st) == -1)
		return -2;
	/*
	 * Most paths are answered here, from the directory itself, when it
	 * was where it is now.
	 */
	h = gitwork_hash(dir);
	i = gitwork_slot(w, st.st_dev, st.st_ino);
	if (w->dirs[i].val != 0 && w->dirs[i].path == h)
		return w->dirs[i].val - GITWORK_BIAS;
	if ((cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3)) == -1)
		return -2;
	strcpy(top, dir);
	for (;;) {
		if (n > 0 && fstat(cur, &st) == -1) {
			tree = -2;
			break;
		}
		h = gitwork_hash(top);
		i = gitwork_slot(w, st.st_dev, st.st_ino);
		if (w->dirs[i].val != 0 && w->dirs[i].path == h) {
			tree = w->dirs[i].val - GITWORK_BIAS;
			break;
		}
		if (n == GITWORK_UP) {
			tree = -2;
			break;
		}
		hash[n] = h;
		seen[n++] = st;
		if (fstatat(cur, ".git", &up, AT_SYMLINK_NOFOLLOW) == 0) {
			if (made(arg, &up))
				tree = -1;
			else if ((tree = gitwork_tree(w, top)) == -1)
				tree = -2;
			break;
		}
		next = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (next == -1 || fstat(next, &up) == -1) {
			if (next != -1)
				close(next);
			tree = -2;
			break;
		}
		if (up.st_dev == st.st_dev && up.st_ino == st.st_ino) {
			close(next);
			break;		/* "/": no work tree */
		}
		close(cur);
		cur = next;
		if ((slash = strrchr(top, '/')) != NULL)
			slash[slash == top ? 1 : 0] = '\0';
	}
	close(cur);
	if (tree != -2)
		for (i = 0; i < n; i++)
			gitwork_remember(w, &seen[i], hash[i], tree);
	return tree;
}

/*
 * Whether path, whose directory is dirfd, is a hook (or, with
 * ancestors_too, holds one) of the git work tree around it, when that
 * work tree is older than the run (made says which are not).  1: yes or
 * cannot tell; 0: no.
 */
int
gitwork_hooked(struct gitwork *w, int dirfd, const struct stat *dirst,
    const char *path, int ancestors_too,
    int (*made)(void *, const struct stat *), void *arg)
{
	char	 dir[PATH_MAX], *slash;
	size_t	 i;
	int	 tree;

	if (strlen(path) >= sizeof(dir) || (slash = strrchr(path, '/')) ==
	    NULL)
		return 1;
	if (slash == path)
		strcpy(dir, "/");
	else {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
	}
	if ((tree = gitwork_find(w, dirfd, dirst, dir, made, arg)) == -2)
		return 1;
	if (tree == -1)
		return 0;
	for (i = 0; i < w->trees[tree].hooks.n; i++) {
		const char *h = w->trees[tree].hooks.v[i];

		if (fs_under_ci(path, h) ||
		    (ancestors_too && fs_under_ci(h, path)))
			return 1;
	}
	return 0;
}
