/*
 * Which paths git reads as configuration or runs, as pure functions of a
 * resolved path: the questions the creation guard asks before it lets a
 * name be created, written or replaced (gitrule_check), where a git
 * operation's state may lie (gitrule_states), and the refusal text
 * (gitrule_why).  Git knowledge only: no plan, no filesystem.
 */
#include <sys/types.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "launcher/git/git.h"

static int	 gitrule_file(const char *name, int allow_config);
static int	 gitrule_tail(char *const *v, size_t n, int ancestors_too,
		    int allow_config);
static int	 gitrule_ask(struct gitrule_q *, size_t max, size_t *n,
		    enum gitrule_ask, int up);

#define GITRULE_MAXDEPTH	256	/* path components gitrule_check looks at */

/* Names git reads in a git directory as configuration. */
static const char *const gitrule_files[] = {
	"config", "config.worktree", "commondir",
};

/*
 * A git operation's state in a git directory: the next "git rebase
 * --continue", "git cherry-pick --continue" or "git am --continue" on the
 * host runs what it lists (a todo's "exec" lines).  Allowed, and followed:
 * the guard tells the parent, which reads them at exit (gitstate.c).
 */
static const char *const gitrule_ops[] = {
	"rebase-merge", "rebase-apply", "sequencer",
};

/* A name git reads in a git directory as configuration. */
static int
gitrule_file(const char *name, int allow_config)
{
	size_t	i;

	for (i = 0; i < sizeof(gitrule_files) / sizeof(*gitrule_files); i++)
		if (strcasecmp(name, gitrule_files[i]) == 0)
			return !(allow_config && i == 0);
	return 0;
}

/*
 * Whether the components v[0..n) below a git directory name something git
 * reads as configuration or runs: config, config.worktree, commondir,
 * hooks/..., and the same in a linked worktree's (worktrees/W/) and a
 * submodule's (modules/NAME.../) git directory.  With ancestors_too also
 * a directory that would hold one (renaming onto worktrees/W, modules/..).
 */
static int
gitrule_tail(char *const *v, size_t n, int ancestors_too, int allow_config)
{
	size_t	i, len;

	if (n == 0)
		return ancestors_too;
	if (strcasecmp(v[0], "hooks") == 0)
		return 1;
	if (n == 1 && gitrule_file(v[0], allow_config))
		return 1;
	/*
	 * config.lock and the like: git renames its lock onto the file, and
	 * a lock left behind makes the user's next "git config" fail.
	 */
	if (n == 1 && (len = strlen(v[0])) > 5 &&
	    strcasecmp(v[0] + len - 5, ".lock") == 0) {
		for (i = 0; i < sizeof(gitrule_files) / sizeof(*gitrule_files);
		    i++)
			if (len - 5 == strlen(gitrule_files[i]) &&
			    strncasecmp(v[0], gitrule_files[i], len - 5) == 0)
				return !(allow_config && i == 0);
	}
	if (strcasecmp(v[0], "worktrees") == 0)
		return n <= 2 ? ancestors_too :
		    gitrule_tail(v + 2, n - 2, ancestors_too, allow_config);
	if (strcasecmp(v[0], "modules") == 0) {
		/* Submodule names may hold slashes: any depth. */
		if (ancestors_too || gitrule_file(v[n - 1], allow_config))
			return 1;
		for (i = 2; i < n; i++)
			if (strcasecmp(v[i], "hooks") == 0)
				return 1;
	}
	return 0;
}

/* Add one question to q (n of max so far): 0, or -1 when q is full. */
static int
gitrule_ask(struct gitrule_q *q, size_t max, size_t *n, enum gitrule_ask ask,
    int up)
{
	if (*n == max)
		return -1;
	q[*n].ask = ask;
	q[*n].up = up;
	(*n)++;
	return 0;
}

/*
 * The git part of the protected-name decision, on the path alone: the
 * questions whose answer "yes" makes path protected (see git.h).
 * -1 when there are more than max (the caller refuses).
 */
ssize_t
gitrule_check(const char *path, int ancestors_too, int allow_config,
    struct gitrule_q *q, size_t max)
{
	char	 buf[PATH_MAX], *v[GITRULE_MAXDEPTH], *save = NULL, *c;
	size_t	 n = 0, i, nq = 0;

	if (strlen(path) >= sizeof(buf))
		return -1;
	strcpy(buf, path);
	for (c = strtok_r(buf, "/", &save); c != NULL;
	    c = strtok_r(NULL, "/", &save)) {
		if (n == GITRULE_MAXDEPTH)
			return -1;
		v[n++] = c;
	}
	for (i = 0; i < n; i++) {
		if (strcasecmp(v[i], ".git") != 0)
			continue;
		if (i == n - 1) {
			if (gitrule_ask(q, max, &nq, GITRULE_DOTGIT, 0) == -1)
				return -1;
		} else if (gitrule_tail(v + i + 1, n - 1 - i, ancestors_too,
		    allow_config) &&
		    gitrule_ask(q, max, &nq, GITRULE_BELOW, (int)(n - 1 - i)) ==
		    -1)
			return -1;
	}
	/* Git directories by another name: bare, worktrees/W, modules/M. */
	for (i = 1; i < n; i++) {
		if (strcasecmp(v[i - 1], ".git") == 0)
			continue;
		if (strcasecmp(v[i], "hooks") == 0 ||
		    (i == n - 1 && gitrule_file(v[i], allow_config)) ||
		    (ancestors_too && (strcasecmp(v[i], "worktrees") == 0 ||
		    strcasecmp(v[i], "modules") == 0))) {
			if (gitrule_ask(q, max, &nq, GITRULE_SHAPE,
			    (int)(n - i)) == -1)
				return -1;
		}
	}
	return (ssize_t)nq;
}

/*
 * Where path may lie in a git operation's state directory: for each
 * component named like one (deepest first, at most max), how many
 * components follow it.  The guard asks whether the directory holding
 * it is a git directory.
 */
size_t
gitrule_states(const char *path, int *lvl, size_t max)
{
	const char	*end = path + strlen(path), *c;
	size_t		 k, len, found = 0;
	int		 after = 0;

	/* Each component from the last, c..end; the first has no parent. */
	while (found < max && end > path) {
		for (c = end; c > path && c[-1] != '/'; c--)
			;
		len = (size_t)(end - c);
		if (c - 1 <= path)
			break;
		for (k = 0; k < sizeof(gitrule_ops) / sizeof(*gitrule_ops);
		    k++)
			if (len == strlen(gitrule_ops[k]) &&
			    strncasecmp(c, gitrule_ops[k], len) == 0) {
				lvl[found++] = after;
				break;
			}
		after++;
		end = c - 1;
	}
	return found;
}

/*
 * The refusal text for a path the git rules protect.  Below
 * worktrees/W of a git directory it is a command planting a worktree's
 * commondir or config.worktree: a worktree whose entry was removed and
 * made again would then run the config its commondir names.  git
 * worktree add's own commondir, in an entry made during the run, is
 * made by the guard with git's content (guard_commondir).
 */
void
gitrule_why(const char *path, const char *config, char *buf, size_t len)
{
	const char	*p, *wt = NULL, *name = strrchr(path, '/');
	char		 main[PATH_MAX];
	size_t		 n;

	name = name != NULL ? name + 1 : path;
	if (strcasecmp(name, ".git") == 0) {
		snprintf(buf, len, "protected path; a .git there would make "
		    "git run its config and hooks in a directory that existed "
		    "before the run (make new repositories at the project "
		    "directory or in a new directory; see pisbx-run(1), "
		    "FILESYSTEM)");
		return;
	}
	/* The last "/worktrees/W/" with something below W. */
	for (p = path; (p = strchr(p, '/')) != NULL; p++)
		if (strncasecmp(p, "/worktrees/", 11) == 0 &&
		    strchr(p + 11, '/') != NULL)
			wt = p;
	if (wt == NULL || (n = (size_t)(wt - path)) >= sizeof(main)) {
		snprintf(buf, len, "protected path, git configuration or hooks "
		    "of a repository that existed before the run (see "
		    "pisbx-run(1), FILESYSTEM)");
		return;
	}
	memcpy(main, path, n);
	main[n] = '\0';
	if (n > 5 && strcasecmp(main + n - 5, "/.git") == 0)
		main[n - 5] = '\0';
	snprintf(buf, len, "protected path, what a linked worktree of %s "
	    "reads as its repository and configuration: in a repository "
	    "that existed before the run only git worktree add makes it, in "
	    "a new worktree entry (git -C %s worktree add PATH BRANCH, PATH "
	    "in a writable directory); to let commands commit in a worktree "
	    "made outside, add \"%s\" to filesystem.allowWrite in %s (see "
	    "pisbx-run(1), FILESYSTEM)", main, main, main, config);
}
