/*
 * launcher/git/: what the launcher knows of git's files, no more: which
 * settings, hooks and files a repository made during the run has beyond
 * a fresh clone (gitnew.c), and what a git operation's state written
 * during the run would run on --continue (gitstate.c).  Pure readers of
 * files, used after the run by the parent's warning; no sandbox, no
 * policy plan.
 */
#ifndef PISBX_LAUNCHER_GIT_H
#define PISBX_LAUNCHER_GIT_H

#include <stddef.h>

/* gitnew.c */
/* What a repository made during the run has beyond a fresh clone. */
struct gitnew_found {
	char	 text[512];	/* ".git/config core.fsmonitor, ..." */
	size_t	 n;		/* items found (more than text names) */
};
void	 gitnew_found_init(struct gitnew_found *);
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

#endif
