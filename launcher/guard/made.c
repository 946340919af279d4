/*
 * What the command made during the run, and what the parent is told of
 * it: the directories the guard made (guard_made_*), the repositories
 * and operation states that appeared (guard_repo, guard_created,
 * guard_moved), sent as records on the report channel (guard_send).
 *
 * Git (gitrule_check): the configuration and hooks of every repository
 * that existed when the run started, at any depth, are protected; a
 * repository the command makes during the run (git clone) stays usable.
 * "Made during the run" is known exactly: the guard performs every
 * mkdir, so it keeps the (device, inode) of each directory it made.  A
 * new ".git" may appear only in such a directory, or at the project
 * directory when it had none (guard_init_top), and the parent is told
 * about each one, to warn at exit.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "launcher/fs/fs.h"
#include "launcher/guard/guard.h"
#include "launcher/guard/guard_int.h"

static int	guard_made_has(const struct guard *, const struct stat *);
static void	guard_made_at(struct guard *, int dirfd, const char *name);
static int	guard_dotgit_in(const char *path);
static void	guard_repo(struct guard *, const char *dir);

static int
guard_made_has(const struct guard *g, const struct stat *st)
{
	size_t	i;

	if (g->made_cap == 0)
		return 0;
	for (i = fs_id_hash(st->st_dev, st->st_ino) & (g->made_cap - 1);
	    g->made[i].used; i = (i + 1) & (g->made_cap - 1))
		if (g->made[i].dev == st->st_dev && g->made[i].ino == st->st_ino)
			return 1;
	return 0;
}

/* guard_made_has, taking the guard's mutex. */
int
guard_made_known(struct guard *g, const struct stat *st)
{
	int	rc;

	pthread_mutex_lock(&g->mu);
	rc = guard_made_has(g, st);
	pthread_mutex_unlock(&g->mu);
	return rc;
}

/* For gitwork, which is asked with the mutex held. */
int
guard_made_cb(void *arg, const struct stat *st)
{
	return guard_made_has(arg, st);
}

/*
 * Remember a directory (or ".git") the guard made (the mutex held).
 * Past GUARD_MAXMADE, or out of memory, it is not remembered: treated as
 * older than the run, which protects more, never less.  The work-tree
 * answers of an older inode of that number are forgotten.
 */
void
guard_made_add(struct guard *g, const struct stat *st)
{
	struct guard_id	*nv;
	size_t		 i, ncap;

	if (g->work != NULL)
		gitwork_forget(g->work, st);
	if (guard_made_has(g, st) || g->nmade >= GUARD_MAXMADE)
		return;
	if ((g->nmade + 1) * 2 > g->made_cap) {
		ncap = g->made_cap == 0 ? 64 : g->made_cap * 2;
		if ((nv = calloc(ncap, sizeof(*nv))) == NULL)
			return;
		for (i = 0; i < g->made_cap; i++) {
			size_t j;

			if (!g->made[i].used)
				continue;
			for (j = fs_id_hash(g->made[i].dev, g->made[i].ino) &
			    (ncap - 1); nv[j].used; j = (j + 1) & (ncap - 1))
				;
			nv[j] = g->made[i];
		}
		free(g->made);
		g->made = nv;
		g->made_cap = ncap;
	}
	for (i = fs_id_hash(st->st_dev, st->st_ino) & (g->made_cap - 1);
	    g->made[i].used; i = (i + 1) & (g->made_cap - 1))
		;
	g->made[i].dev = st->st_dev;
	g->made[i].ino = st->st_ino;
	g->made[i].used = 1;
	g->nmade++;
}

/* Remember dirfd/name as made (takes the mutex). */
static void
guard_made_at(struct guard *g, int dirfd, const char *name)
{
	struct stat	st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		pthread_mutex_lock(&g->mu);
		guard_made_add(g, &st);
		pthread_mutex_unlock(&g->mu);
	}
}

/* One record to the parent; a parent that is gone is no reason to stop. */
void
guard_send(struct guard *g, char tag, const char *a, const char *b,
    const char *c)
{
	char		 buf[4 * PATH_MAX + 4];
	const char	*v[3] = { a, b, c };
	size_t		 len = 0, off = 0, i, l;
	ssize_t		 n;

	if (g->conf.report_fd == -1)
		return;
	buf[len++] = tag;
	for (i = 0; i < 3; i++) {
		if (v[i] == NULL)
			continue;
		l = strnlen(v[i], PATH_MAX + 512);
		memcpy(buf + len, v[i], l);
		len += l;
		buf[len++] = '\0';
	}
	while (off < len) {
		n = write(g->conf.report_fd, buf + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		off += (size_t)n;
	}
}

/* Whether a component of path is ".git". */
static int
guard_dotgit_in(const char *path)
{
	const char	*p = path;

	while ((p = strcasestr(p, "/.git")) != NULL) {
		if (p[5] == '/' || p[5] == '\0')
			return 1;
		p += 5;
	}
	return 0;
}

/*
 * The project directory is where an agent's first "git init" goes.  A
 * .git made there is allowed when there was none: the repository is
 * checked at exit like any made during the run, and held aside when it
 * has more than git init makes (run/gitinit.c), since the user's git,
 * shell prompt and editor all run there.  Never at / or at a directory
 * holding the home directory: a repository there would take over git in
 * every directory below that has none of its own.
 */
int
guard_init_top(const struct fs_plan *plan, struct stat *st)
{
	struct stat	dst;
	int		fd, ok;

	if (plan->project == NULL || strcmp(plan->project, "/") == 0 ||
	    (plan->home != NULL && fs_under(plan->home, plan->project)) ||
	    fs_root_of(plan, plan->project) == NULL)
		return 0;
	if ((fd = open(plan->project, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return 0;
	ok = fstatat(fd, ".git", &dst, AT_SYMLINK_NOFOLLOW) == -1 &&
	    errno == ENOENT && fstat(fd, st) == 0;
	close(fd);
	return ok;
}

/* A repository may have been made at dir: tell the parent, once. */
static void
guard_repo(struct guard *g, const char *dir)
{
	size_t	i;

	pthread_mutex_lock(&g->mu);
	for (i = 0; i < g->nrepos; i++)
		if (strcmp(g->repos[i], dir) == 0)
			goto done;
	if (g->nrepos == GUARD_MAXREPOS) {
		if (!g->repos_full)
			guard_send(g, REPORT_FULL, NULL, NULL, NULL);
		g->repos_full = 1;
		goto done;
	}
	if ((g->repos[g->nrepos] = strdup(dir)) == NULL)
		goto done;
	g->nrepos++;
	guard_send(g, REPORT_REPO, dir, NULL, NULL);
done:
	pthread_mutex_unlock(&g->mu);
}

/*
 * Whether gp's directory was a git directory before HEAD was created in
 * it (then it is no new repository), when gp is a "HEAD".
 */
int
guard_head_before(struct guard_req *gr, const struct guard_path *gp)
{
	struct stat	st;

	if (strcasecmp(gp->last, "HEAD") != 0 || gp->parent == -1)
		return 0;
	return guard_parent_stat(gp, &st) == 0 &&
	    !guard_made_known(gr->g, &st) &&
	    guard_shape(gp->parent);
}

/*
 * After gp was created: a ".git" is remembered as made (so git can write
 * its config), and its directory is a repository made during the run; so
 * is the directory of a new HEAD outside any .git (a bare repository),
 * unless that was a git directory already.
 */
void
guard_created(struct guard_req *gr, const struct guard_path *gp,
    int head_before)
{
	char	dir[PATH_MAX], *slash;

	if (gp->parent == -1 || (strcasecmp(gp->last, ".git") != 0 &&
	    strcasecmp(gp->last, "HEAD") != 0))
		return;
	snprintf(dir, sizeof(dir), "%s", gp->full);
	if ((slash = strrchr(dir, '/')) == NULL)
		return;
	slash[slash == dir ? 1 : 0] = '\0';
	if (gp->last[0] == '.') {
		guard_made_at(gr->g, gp->parent, gp->last);
		pthread_mutex_lock(&gr->g->mu);
		if (gr->g->work != NULL)
			gitwork_flush(gr->g->work);
		pthread_mutex_unlock(&gr->g->mu);
		guard_repo(gr->g, dir);
	} else if (!head_before && !guard_dotgit_in(dir))
		guard_repo(gr->g, dir);
}

/*
 * After op was renamed to np (or exchanged with it): repositories told to
 * the parent move with their directory, and a directory moved into place
 * may be one.  A directory moved changes the work tree of everything in
 * it and the path of every directory below: what is remembered of either
 * is forgotten.
 */
void
guard_moved(struct guard_req *gr, const struct guard_path *op,
    const struct guard_path *np, int exchange)
{
	struct guard	*g = gr->g;
	struct stat	 st;
	char		 buf[PATH_MAX], *s;
	size_t		 i, ol = strlen(op->full);
	int		 fd;

	pthread_mutex_lock(&g->mu);
	for (i = 0; i < g->nrepos; i++) {
		if (strncmp(g->repos[i], op->full, ol) != 0 ||
		    (g->repos[i][ol] != '\0' && g->repos[i][ol] != '/'))
			continue;
		if ((size_t)snprintf(buf, sizeof(buf), "%s%s", np->full,
		    g->repos[i] + ol) >= sizeof(buf) ||
		    (s = strdup(buf)) == NULL)
			continue;
		guard_send(g, REPORT_MOVED, g->repos[i], s, NULL);
		free(g->repos[i]);
		g->repos[i] = s;
	}
	pthread_mutex_unlock(&g->mu);
	guard_state_moved(g, op->full, np->full, exchange);
	if (exchange && fstatat(op->parent, op->name, &st,
	    AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
		pthread_mutex_lock(&g->mu);
		if (g->work != NULL)
			gitwork_flush(g->work);
		pthread_mutex_unlock(&g->mu);
	}
	if (fstatat(np->parent, np->name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
	    !S_ISDIR(st.st_mode))
		return;
	pthread_mutex_lock(&g->mu);
	if (g->work != NULL)
		gitwork_flush(g->work);
	pthread_mutex_unlock(&g->mu);
	if ((fd = openat(np->parent, np->name, O_PATH | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1)
		return;
	if (fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
	    (!guard_dotgit_in(np->full) && guard_shape(fd)))
		guard_repo(g, np->full);
	close(fd);
}
