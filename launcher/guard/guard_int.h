/*
 * launcher/guard/'s own: what guard.c asks of gitwork.c, the cache of
 * the git work trees' hooks (core.hooksPath, hook managers' files)
 * around the paths the command creates.  Not for the reaper.
 */
#ifndef PISBX_LAUNCHER_GUARD_INT_H
#define PISBX_LAUNCHER_GUARD_INT_H

#include <sys/stat.h>

struct fs_plan;

/* gitwork.c */
/* The hooks of the git work tree around a path, for the guard. */
struct gitwork;
struct gitwork *gitwork_new(const struct fs_plan *);
/* Forget every answer (a directory moved, a .git appeared). */
void	 gitwork_flush(struct gitwork *);
/* Forget the answer for an inode number (a new directory has it). */
void	 gitwork_forget(struct gitwork *, const struct stat *);
void	 gitwork_free(struct gitwork *);
/*
 * Whether path (its directory: dirfd) is, or with ancestors_too holds, a
 * hook of the work tree around it -- core.hooksPath, a hook manager's
 * file -- when that work tree is older than the run (made(arg, st) says
 * whether its .git was made during the run).  Unsure: 1.
 */
int	 gitwork_hooked(struct gitwork *, int dirfd, const char *path,
	    int ancestors_too, int (*made)(void *, const struct stat *),
	    void *arg);

#endif
