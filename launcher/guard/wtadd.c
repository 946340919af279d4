/*
 * A git worktree add that cannot succeed, stopped before it leaves a
 * branch behind.  git worktree add -b NAME PATH (and PATH alone, which
 * makes a branch named after it) first runs "git branch NAME", then
 * makes the worktree; when that fails -- PATH outside the writable
 * directories (read-only in the sandbox), PATH already there and not
 * empty -- git stops and the new branch stays.  So when "git branch"
 * creates a branch's lock (refs/heads/NAME.lock) and its parent is a
 * "git worktree add" whose PATH is such a one, the guard refuses the
 * lock: git branch fails, and so does git worktree add, with nothing
 * made and a line that says what to do.
 *
 * This only ever refuses more, in a case that fails anyway: a command
 * line it does not read fully (an option it does not know, an alias, a
 * path through "..") is left to git.
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

#include "launcher/fs/fs.h"
#include "launcher/guard/guard.h"
#include "launcher/guard/guard_int.h"

#define WTADD_ARGS	64	/* arguments read of git's command line */

static pid_t	wtadd_ppid(pid_t);
static int	wtadd_argv(pid_t, char *buf, size_t len, char **argv);
static int	wtadd_resolve(const char *path, char *out, size_t len);
static int	wtadd_empty(const char *dir);

/* The parent process of pid, or 0. */
static pid_t
wtadd_ppid(pid_t pid)
{
	char	 p[64], line[128];
	FILE	*f;
	long	 ppid = 0;

	snprintf(p, sizeof(p), "/proc/%ld/status", (long)pid);
	if ((f = fopen(p, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "PPid:", 5) == 0) {
			ppid = strtol(line + 5, NULL, 10);
			break;
		}
	fclose(f);
	return ppid > 1 ? (pid_t)ppid : 0;
}

/* pid's arguments, split at their NULs into argv: their count, or -1. */
static int
wtadd_argv(pid_t pid, char *buf, size_t len, char **argv)
{
	char	 p[64];
	ssize_t	 n;
	size_t	 off = 0;
	int	 fd, argc = 0;

	snprintf(p, sizeof(p), "/proc/%ld/cmdline", (long)pid);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	/* A command line longer than the buffer is not read at all. */
	if (n <= 0 || (size_t)n == len - 1 || buf[n - 1] != '\0')
		return -1;
	while (off < (size_t)n && argc < WTADD_ARGS) {
		argv[argc++] = buf + off;
		off += strlen(buf + off) + 1;
	}
	return off == (size_t)n ? argc : -1;
}

/*
 * The PATH of "git [globals] worktree add [options] PATH ...", with the
 * directory given by -C options appended to dir; NULL when argv is not
 * that, or has what this does not read (--force: git may then reuse the
 * path).
 */
const char *
guard_wtadd_path(char **argv, int argc, char *dir, size_t dirlen)
{
	static const char *const	 flags[] = { "-d", "--detach",
		"--checkout", "--no-checkout", "--lock", "--orphan", "--track",
		"--no-track", "--guess-remote", "--no-guess-remote", "-q",
		"--quiet", NULL };
	const char			*a, *base;
	size_t				 i;
	int				 k = 1;

	base = strrchr(argv[0], '/');
	if (strcmp(base != NULL ? base + 1 : argv[0], "git") != 0)
		return NULL;
	for (; k < argc && argv[k][0] == '-'; k++) {
		a = argv[k];
		if (strcmp(a, "-C") == 0 && k + 1 < argc) {
			k++;
			if (argv[k][0] == '/')
				snprintf(dir, dirlen, "%s", argv[k]);
			else if (strlen(dir) + strlen(argv[k]) + 2 < dirlen)
				strcat(strcat(dir, "/"), argv[k]);
			else
				return NULL;
		} else if (strcmp(a, "-c") == 0 && k + 1 < argc)
			k++;
		else if (strcmp(a, "--no-pager") != 0 &&
		    strcmp(a, "--no-optional-locks") != 0 &&
		    strcmp(a, "--no-replace-objects") != 0)
			return NULL;
	}
	if (k + 1 >= argc || strcmp(argv[k], "worktree") != 0 ||
	    strcmp(argv[k + 1], "add") != 0)
		return NULL;
	for (k += 2; k < argc; k++) {
		a = argv[k];
		if (strcmp(a, "--") == 0)
			return k + 1 < argc ? argv[k + 1] : NULL;
		if (a[0] != '-')
			return a;
		if ((strcmp(a, "-b") == 0 || strcmp(a, "-B") == 0 ||
		    strcmp(a, "--reason") == 0) && k + 1 < argc) {
			k++;
			continue;
		}
		if (strncmp(a, "-b", 2) == 0 || strncmp(a, "-B", 2) == 0 ||
		    strncmp(a, "--reason=", 9) == 0)
			continue;
		for (i = 0; flags[i] != NULL; i++)
			if (strcmp(a, flags[i]) == 0)
				break;
		if (flags[i] == NULL)
			return NULL;
	}
	return NULL;
}

/*
 * path with its longest existing prefix resolved: -1 when the rest
 * holds "." or ".." (git may read them otherwise than this would).
 */
static int
wtadd_resolve(const char *path, char *out, size_t len)
{
	char	 head[PATH_MAX], *slash, *real;
	size_t	 cut;

	if (snprintf(head, sizeof(head), "%s", path) >= (int)sizeof(head))
		return -1;
	while ((real = realpath(head, NULL)) == NULL) {
		if (errno != ENOENT || (slash = strrchr(head, '/')) == NULL ||
		    slash == head)
			return -1;
		*slash = '\0';
	}
	cut = strlen(head);
	if (strstr(path + cut, "/./") != NULL ||
	    strstr(path + cut, "/../") != NULL ||
	    (strlen(path + cut) >= 2 && (strcmp(path + strlen(path) - 2,
	    "/.") == 0 || strcmp(path + strlen(path) - 3, "/..") == 0))) {
		free(real);
		return -1;
	}
	if (snprintf(out, len, "%s%s", strcmp(real, "/") == 0 ? "" : real,
	    path + cut) >= (int)len) {
		free(real);
		return -1;
	}
	free(real);
	return 0;
}

/* Whether dir is a directory with nothing in it. */
static int
wtadd_empty(const char *dir)
{
	struct dirent	*de;
	DIR		*d;
	int		 empty = 1;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0) {
			empty = 0;
			break;
		}
	closedir(d);
	return empty;
}

/*
 * Whether to refuse gp, a branch's lock git branch creates for a git
 * worktree add that will fail: -EACCES (said) or 0.
 */
int
guard_wtadd(struct guard_req *gr, const struct guard_path *gp)
{
	char		 buf[8192], *argv[WTADD_ARGS], dir[PATH_MAX];
	char		 full[PATH_MAX], real[PATH_MAX], p[64];
	const char	*path, *why;
	struct stat	 st;
	size_t		 l = strlen(gp->last);
	ssize_t		 n;
	pid_t		 ppid;
	int		 argc;

	if (l < 6 || strcmp(gp->last + l - 5, ".lock") != 0 ||
	    strstr(gp->full, "/refs/heads/") == NULL)
		return 0;
	/* The caller is the "git branch NAME BASE" git worktree add runs. */
	if ((argc = wtadd_argv(guard_tgid(gr), buf, sizeof(buf), argv)) < 2 ||
	    strcmp(argv[1], "branch") != 0)
		return 0;
	if ((ppid = wtadd_ppid(guard_tgid(gr))) == 0 ||
	    (argc = wtadd_argv(ppid, buf, sizeof(buf), argv)) < 3)
		return 0;
	snprintf(p, sizeof(p), "/proc/%ld/cwd", (long)ppid);
	if ((n = readlink(p, dir, sizeof(dir) - 1)) <= 0)
		return 0;
	dir[n] = '\0';
	if ((path = guard_wtadd_path(argv, argc, dir, sizeof(dir))) == NULL ||
	    path[0] == '\0')
		return 0;
	if (path[0] == '/')
		snprintf(full, sizeof(full), "%s", path);
	else if (snprintf(full, sizeof(full), "%s/%s", dir, path) >=
	    (int)sizeof(full))
		return 0;
	if (wtadd_resolve(full, real, sizeof(real)) == -1)
		return 0;
	if (stat(real, &st) == 0)
		why = S_ISDIR(st.st_mode) && wtadd_empty(real) ? NULL :
		    "is there already and not an empty directory (git would "
		    "stop there)";
	else
		why = fs_root_of(gr->g->conf.plan, real) == NULL ?
		    "is outside the writable directories, read-only in the "
		    "sandbox" : NULL;
	if (why == NULL)
		return 0;
	guard_refuse(gr, gp->full, "create", "the branch of a git worktree "
	    "add that cannot succeed, refused before git makes it: the "
	    "worktree %s %s; give it a new path in the workspace (git "
	    "worktree add wt -b NAME), or run it outside the sandbox (see "
	    "pisbx-run(1), FILESYSTEM)", real, why);
	return -EACCES;
}
