/*
 * launcher/fs/: the filesystem plan.  The parent builds it before the
 * sandbox starts, from the config and the places around the command
 * (fsplan.c: the plan, in steps; fstables.c: the tables of what is
 * hidden and protected; fspath.c, fsset.c: paths and the set of them;
 * fsgit.c: the project and git discovery; fshome.c, fsprivate.c: what is
 * shown and hidden of the home and the caller's private files; fsglob.c:
 * the config's patterns; fsfilter*.c: the filtered copies of settings
 * files; fsreview.c: the reviewer's files); the sandbox child mounts it
 * and Landlock restricts to it; the guard asks it on every creation
 * (fslookup.c: fs_plan_guarded, fs_root_of; fs_glob_denied; and
 * gitrule_check of launcher/git/).  What the files share: fs_int.h.
 */
#ifndef PISBX_LAUNCHER_FS_H
#define PISBX_LAUNCHER_FS_H

#include <sys/types.h>
#include <sys/stat.h>

#include <limits.h>
#include <stddef.h>

#include "policy/policy.h"

/* What happens at one path of the mount namespace. */
enum fs_action {
	FS_HIDE,		/* denyRead: empty tmpfs, or an empty file */
	FS_EXPOSE_RO,		/* the original tree, read-only */
	FS_EXPOSE_RW		/* the original tree, writable */
};

struct fs_rule {
	char		*path;		/* absolute, symlinks resolved */
	enum fs_action	 action;
	int		 is_dir;
	mode_t		 mode;		/* FS_HIDE of a directory: its mode */
	char		*source;	/* shown from this file (a filtered
					 * copy) instead, or NULL */
	const char	*note;		/* for -v (owned by the plan), or NULL */
};

/* The filtered copies of settings files (fsfilter*.c). */
enum fs_filter {
	FS_FILTER_NONE,
	FS_FILTER_GIT,		/* a git config */
	FS_FILTER_GOENV,	/* go's env file */
	FS_FILTER_MISE,		/* a mise config (TOML) */
	FS_FILTER_INI,		/* npm's npmrc, pip's pip.conf */
	FS_FILTER_JAVANET	/* a JDK's net.properties, the proxy added */
};

/*
 * The run directory's files (git-proxy, ssh_config, the filtered and the
 * masked copies, the run's CA bundle...), made in memory by the parent
 * (fsrunfile.c): their contents one after another in a memfd.  The
 * sandbox writes them on a tmpfs of its own mounted over the run
 * directory (mount.c), or, without namespaces, into the directory
 * itself: a file is named by its path there either way.
 */
struct fs_runfile {
	char	*name;		/* in the run directory, one component */
	off_t	 off;		/* its contents in the memfd */
	size_t	 len;
	mode_t	 mode;
};

struct fs_runfiles {
	const char		*dir;	/* the run directory */
	int			 fd;	/* the memfd, when mem is set */
	int			 mem;
	off_t			 end;	/* of what it holds */
	struct fs_runfile	*v;
	size_t			 n;
};

/* The config's filesystem patterns, compiled (fsglob.c). */
enum fs_glob_kind {
	FS_GLOB_DENY_READ,
	FS_GLOB_ALLOW_READ,
	FS_GLOB_DENY_WRITE
};

struct fs_glob {
	struct glob		*g;	/* anchored, on real paths */
	enum fs_glob_kind	 kind;
	size_t			 found;	/* existing paths it covered */
};

/*
 * The resolved filesystem policy: mount rules applied shallow-first, the
 * writable roots (Landlock), and the paths whose creation is refused
 * (the mandatory deny set in every writable root, denyWrite, the trusted
 * config, the pisbx executables).
 */
struct fs_plan {
	struct fs_rule	*rules;
	size_t		 nrules;
	char		**writable;	/* allowWrite roots that exist */
	size_t		 nwritable;
	char		**guarded;	/* never created, written or replaced */
	const char	**guarded_why;	/* who reads each (static, or owned) */
	size_t		 nguarded;
	char		**owned;	/* guarded_why texts made for this plan */
	size_t		 nowned;
	char		*workspace;	/* the default writable root, or NULL */
	char		*project;	/* relative config paths start here */
	char		 project_why[2 * PATH_MAX + 256]; /* why, for -v */
	struct fs_glob	*globs;		/* denyRead/allowRead/denyWrite */
	size_t		 nglobs;
	size_t		 njava;		/* JDKs with the proxy in net.properties */
	char		**unix_sockets;	/* allowUnixSockets, resolved */
	size_t		 nunix;
	char		*home;		/* resolved, or NULL */
	char		*cache_dir;	/* the project's, in ~/.cache/pisbx, or NULL */
	struct strlist	 hookspaths;	/* the user's global core.hooksPath */
	struct fs_gindex *gindex;	/* guarded, indexed (fs_plan_index) */
};

/*
 * A credentials.files entry (or the CA's key) for the plan: hidden as a
 * denyRead path is (source NULL), or shown as the masked copy at source,
 * read-only, whatever the rules around it say.
 */
struct fs_secret_file {
	const char	*path;		/* absolute, as the config names it */
	const char	*source;	/* the masked copy, or NULL: hidden */
	const char	*note;		/* for -v; the caller's */
};

/* What fs_plan_build needs besides the config. */
struct fs_inputs {
	const char	*cwd;		/* absolute, symlinks resolved */
	const char	*home;		/* $HOME, or NULL */
	const char	*tmpdir;	/* the run's private TMPDIR */
	const char	*rundir;	/* the run directory (filtered copies,
					 * git-proxy), or NULL: none made */
	struct fs_runfiles *files;	/* its files: the copies join them */
	const char	*exe_dir;	/* where the pisbx executables are */
	const char	*config_path;	/* the trusted config, or NULL */
	const char	*access_log;	/* the access log, or NULL */
	const char	*report;	/* --report, or NULL */
	const char	*supervisor_socket;	/* or NULL */
	const char	*path;		/* the command's $PATH, or NULL */
	const struct fs_secret_file *secrets;	/* credentials (runsecrets.c) */
	size_t		 nsecrets;
};

/* fspath.c */
/*
 * Absolute, symlink-free form of a configured path: "~" from home, a
 * relative path from dir; the longest existing prefix resolved.
 */
char	*fs_resolve(const char *in, const char *dir, const char *home);
/* Whether path is root or lies below it (both absolute, clean). */
int	 fs_under(const char *path, const char *root);
/* The same, ignoring ASCII case (for protected names). */
int	 fs_under_ci(const char *path, const char *root);
/*
 * The host's shared temporary directory ("/tmp", "/var/tmp") that a
 * resolved path is or lies in, or NULL.
 */
const char *fs_shared_tmp_of(const char *path);

/* fsplan.c */
/*
 * Resolve the config's filesystem section into a plan: ~ expanded,
 * relative paths against cwd, symlinks resolved; adds the working
 * directory, the private TMPDIR, the mandatory write-deny set, git
 * worktree directories and hooks, the trusted config and the files it
 * names, the executables' dir.  Returns 0; -1 on error; EXIT_SETUP or
 * EXIT_CONFIG when no sound policy can be built (said why).
 */
int	 fs_plan_build(struct fs_plan *, const struct config *,
	    const struct fs_inputs *);
void	 fs_plan_free(struct fs_plan *);
/*
 * One more regular file seen from the sandbox, read-only or writable (an
 * agent's bookkeeping file); never a guarded path.
 */
int	 fs_plan_grant(struct fs_plan *, const char *path, int writable);
void	 fs_plan_dump(const struct fs_plan *);
/*
 * The reader fs_plan_guarded names for a repository's .git/config (the
 * same text as git's other files; compared by address): the one refusal
 * filesystem.allowGitConfig lifts.
 */
extern const char fs_why_git_config[];

/* fslookup.c */
/*
 * Whether path is, or is below, one of the plan's guarded paths (with
 * ancestors_too also above one): who reads it, or NULL.
 */
const char *fs_plan_guarded(const struct fs_plan *, const char *path,
	    int ancestors_too);
/*
 * The hidden path (denyRead, what the plan hides by itself, a settings
 * file shown as a filtered copy) that is
 * path, lies below it, or holds it (the most specific rule above path
 * hides: not a tree re-exposed or a writable root inside), or NULL;
 * letters compared as fs_plan_guarded does.
 */
const char *fs_plan_hides(const struct fs_plan *, const char *path);
/*
 * Index the guarded paths, so that fs_plan_guarded answers in a few
 * lookups (the creation guard asks on every creation).  0, or -1.
 */
int	 fs_plan_index(struct fs_plan *);
/* The writable root of the plan that path (resolved) lies in, or NULL. */
const char *fs_root_of(const struct fs_plan *, const char *path);
/* A hash of a file's identity (device, inode), for the guard's tables. */
size_t	 fs_id_hash(dev_t, ino_t);

/* fsgit.c */
/* Append the core.hooksPath values of one git config file. */
int	 fs_git_hookspath(const char *cfgfile, struct strlist *out);
/*
 * Append the hooks of the work tree at top, resolved: its core.hooksPath
 * and global's, and the files git hook managers read there.
 */
int	 fs_git_hookdirs(const char *top, const struct strlist *global,
	    const char *home, struct strlist *out);

/* fsglob.c */
/* Compile the patterns of the lists, anchored at dir ("~": home). */
int	 fs_glob_compile(struct fs_plan *, const struct config *,
	    const char *dir, const char *home);
/*
 * Walk the files that exist, bounded, and hand every path a pattern
 * covers to add(arg, path, kind, pattern).  0; -1 on error; EXIT_CONFIG
 * past a bound (said why).
 */
int	 fs_glob_expand(struct fs_plan *, int (*add)(void *, const char *,
	    enum fs_glob_kind, const char *), void *arg);
/* The denyRead or denyWrite pattern a name matches, or NULL. */
const struct fs_glob *fs_glob_denied(const struct fs_plan *,
	    const char *path);
/*
 * Whether renaming the directory dirfd from "from" to "to" puts a name
 * matching a deny pattern in place: 1 (hit and *fg set), 0, or -1 (not
 * checked: errno; E2BIG past the bound).
 */
int	 fs_glob_moved(const struct fs_plan *, int dirfd, const char *from,
	    const char *to, char *hit, size_t hitlen,
	    const struct fs_glob **fg);
/* "denyRead", "allowRead" or "denyWrite". */
const char *fs_glob_key(const struct fs_glob *);
void	 fs_glob_free(struct fs_plan *);

/* fsfilter.c (the copies), fsfilter_git.c, fsfilter_tools.c (formats) */
/* What a filter made: the text to show, the names it left out. */
struct fsfilter_out {
	char	*text;		/* malloc'ed */
	size_t	 len;
	char	*dropped;	/* "a.b, c.d": appended to, malloc'ed */
};
/*
 * A git config without what may be a credential: the sections on an
 * allow-list, http's harmless keys, no URL with a user or password;
 * include(arg, path, dir) names the copy to include instead of path (a
 * path relative to dir), or NULL to leave the include out.  0, or -1
 * when text is not a git config (or no memory).
 */
int	 fsfilter_git(const char *text, size_t len,
	    char *(*include)(void *, const char *, const char *), void *arg,
	    const char *dir, struct fsfilter_out *);
/* go's env file without the settings that name a credential. */
int	 fsfilter_goenv(const char *text, size_t len, struct fsfilter_out *);
/* A mise config's [tools] and [alias]/[tool_alias] tables only. */
int	 fsfilter_mise(const char *text, size_t len, struct fsfilter_out *);
/*
 * An npmrc or pip.conf without the settings named for a credential and
 * without the user and password of any URL.
 */
int	 fsfilter_ini(const char *text, size_t len, struct fsfilter_out *);
/*
 * A JDK's net.properties with the sandbox's proxy appended (the later
 * key wins): every JVM of that JDK uses it without a word on stderr.
 */
int	 fsfilter_javanet(const char *text, size_t len,
	    struct fsfilter_out *);
/* Whether s holds a URL with a user or password, or an Authorization. */
int	 fsfilter_secret(const char *s);
/*
 * Make the filtered copy of src (and of the files it includes) among the
 * run directory's files: its path, malloc'ed, or NULL (src unreadable).
 * *dropped: the names left out, or NULL.
 */
char	*fsfilter_copy(enum fs_filter, const char *src, struct fs_runfiles *,
	    const char *home, char **dropped);

/* fsrunfile.c */
/*
 * One more file of the run directory, a copy of len octets of data:
 * named name, or with unique, "name.N" (N its number among them).  Its
 * path in the run directory, malloc'ed, or NULL.
 */
char	*fs_runfile_add(struct fs_runfiles *, const char *name, int unique,
	    mode_t, const void *data, size_t len);
/* The same with the n pieces of iov one after another. */
struct iovec;
char	*fs_runfile_addv(struct fs_runfiles *, const char *name, mode_t,
	    const struct iovec *iov, int n);
/* The same with a copy of what the file at fd holds. */
char	*fs_runfile_add_fd(struct fs_runfiles *, const char *name, mode_t,
	    int fd);
/* Octets the files take on a tmpfs (whole pages each). */
size_t	 fs_runfiles_size(const struct fs_runfiles *);
/*
 * Write every file into the directory dfd (new files only, never
 * through a link), each with its mode.  0, or -1 (the file in *failed).
 */
int	 fs_runfiles_write(int dfd, const struct fs_runfiles *,
	    const char **failed);
void	 fs_runfiles_clear(struct fs_runfiles *);

/* fsreview.c */
/*
 * Refuse a review.command that could run or read a file the sandboxed
 * command can write (its words, $PATH): 0, -1 on no memory, EXIT_CONFIG
 * said with the key and the file.
 */
int	 fs_reviewer(const struct config *, const struct fs_plan *,
	    const char *home, const char *path);

#endif
