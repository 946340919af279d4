/*
 * launcher/git/: what the launcher knows of git's files, no more: which
 * settings, hooks and files a repository made during the run has beyond
 * a fresh clone (gitnew.c), and what a git operation's state written
 * during the run would run on --continue (gitstate.c): pure readers of
 * files, used after the run by the parent's warning.  And which paths
 * git reads as configuration or runs (gitrule.c): pure functions of a
 * path, asked by the guard on every creation.  No sandbox, no policy
 * plan.
 */
#ifndef PISBX_LAUNCHER_GIT_H
#define PISBX_LAUNCHER_GIT_H

#include <sys/types.h>

#include <stddef.h>

/* gitnew.c */
/* What a repository made during the run has beyond a fresh clone. */
struct gitnew_found {
	char	 text[512];	/* ".git/config core.fsmonitor, ..." */
	size_t	 n;		/* items found (more than text names) */
};
void	 gitnew_found_init(struct gitnew_found *);
/*
 * Now is when the run started: a linked worktree's common directory
 * whose config and hooks are older is the user's (before the sandbox).
 */
void	 gitnew_run_started(void);
/*
 * Name what git would use in the repository at repofd (its .git, or
 * repofd itself when bare) that git init and clone do not make.
 */
void	 gitnew_check(int repofd, int bare, struct gitnew_found *);
/* The same for one config text: keys not allowed, lines not parsed. */
void	 gitnew_config(const char *text, size_t len, const char *label,
	    struct gitnew_found *);
/* Name one item (masked), at most a few, then "...". */
void	 gitnew_add(struct gitnew_found *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* dirfd/name's content when it is a plain file of at most max bytes. */
char	*gitnew_read(int dirfd, const char *name, const char *label,
	    size_t max, size_t *len, struct gitnew_found *);

/* gitstate.c */
/*
 * Name what in the git operation state directory at path (rebase-merge,
 * rebase-apply or sequencer) the next --continue would run beyond
 * applying commits: a todo's exec lines, a merge strategy from PATH.
 * 0: nothing there (gone, or nothing named); 1: f names something.
 */
int	 gitstate_check(const char *path, struct gitnew_found *f);
/* The same for a todo list's text (label: the file, for the names). */
void	 gitstate_todo(const char *text, size_t len, const char *label,
	    struct gitnew_found *f);

/* gitrule.c */
/*
 * The questions gitrule_check leaves to the guard, about a directory "up"
 * levels above the path's last component (0: the path itself).  A "yes"
 * to any makes the path protected.
 */
enum gitrule_ask {
	/*
	 * The path is a ".git" entry: yes when it exists and was not made
	 * during the run, or does not exist and its directory was not made
	 * during the run (a new repository would take over git there) --
	 * unless that directory is the project directory, which had none
	 * (the guard's guard_init_top: git init; checked at exit).
	 */
	GITRULE_DOTGIT,
	/* That ".git" directory was not made during the run. */
	GITRULE_BELOW,
	/*
	 * That directory was not made during the run and is a git
	 * directory: HEAD, and objects/ and refs/ or a commondir file.
	 */
	GITRULE_SHAPE
};

struct gitrule_q {
	enum gitrule_ask	ask;
	int			up;
};

/*
 * The git part of the protected-name decision, on a resolved path alone:
 * fills q with the questions (at most max) that decide it; 0: not a git
 * path; -1: more than max (protected).
 */
ssize_t	 gitrule_check(const char *path, int ancestors_too, int allow_config,
	    struct gitrule_q *q, size_t max);
/*
 * Where a resolved path may lie in a git operation's state directory
 * (rebase-merge, rebase-apply, sequencer): for each component so named,
 * deepest first (at most max), in lvl how many components follow it.
 * The count.
 */
size_t	 gitrule_states(const char *path, int *lvl, size_t max);
/*
 * Why the git rules refuse path (gitrule_check said so), and what to do
 * instead, for the refusal line; config: the file to name.
 */
void	 gitrule_why(const char *path, const char *config, char *buf,
	    size_t len);

#endif
