/*
 * launcher/fs/ internals: what the files of the filesystem plan share
 * and nothing outside the folder needs -- the set of paths the plan is
 * built from, a directory read at once, the data tables (fstables.c) and
 * the helpers each file lends the others.  Prototypes grouped by file.
 */
#ifndef PISBX_LAUNCHER_FS_INT_H
#define PISBX_LAUNCHER_FS_INT_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>

#include "policy/policy.h"
#include "launcher/fs/fs.h"

/* What the config and the defaults say about one path of the set. */
#define P_DENY_READ	0x01
#define P_ALLOW_READ	0x02
#define P_ALLOW_WRITE	0x04
#define P_DENY_WRITE	0x08
#define P_PATTERN	0x10	/* covered by a pattern, not named */
#define P_SHOW_RO	0x20	/* shown read-only, in a writable root too */

struct fs_entry {
	char		*path;
	int		 flags;
	const char	*why;		/* for P_DENY_WRITE: who reads it */
	char		*source;	/* shown from this filtered copy */
	const char	*note;		/* what the copy leaves out (plan's) */
};

/*
 * The paths the config and the defaults name, each once: a few hundred
 * (the mandatory names in every writable root), so they are hashed --
 * adding and finding the entries above a path were quadratic, a
 * millisecond of every start.
 */
struct fs_set {
	struct fs_entry	*v;
	size_t		 n;
	size_t		*slot;		/* index + 1 of v, 0: free */
	size_t		 cap;		/* of slot, a power of two */
};

/*
 * The names in one directory, read at once: the start asks about a few
 * hundred names in the same few directories (the mandatory names in
 * each writable root, the secrets in the home), mostly missing ones, and
 * reading a small directory costs less than a lstat(2) of each name.
 */
#define FS_LIST_MAX	1024	/* names: a larger one is asked name by name */

enum fs_list_state {
	FS_LIST_NONE,		/* not read: ask lstat(2) */
	FS_LIST_READ,
	FS_LIST_MISSING		/* no such directory: nothing in it */
};

struct fs_listing {
	char			  dir[PATH_MAX];
	enum fs_list_state	  state;
	char			**names;	/* sorted */
	size_t			  n;
};

/* ---- fstables.c ---- */

/* A name the mandatory set protects, and who reads it. */
struct fs_mandatory {
	const char	*name;		/* relative to a writable root */
	const char	*reader;	/* the program outside that acts on it */
};

/* A toolchain's place below the home directory. */
struct fs_home {
	enum fs_toolchain	 which;
	const char		*rel;		/* below the home directory */
};

/* A settings file shown as a filtered copy. */
struct fs_filtered {
	enum fs_toolchain	 which;
	const char		*rel;		/* below the home directory */
	enum fs_filter		 filter;
};

/* Each table, and how many entries it has. */
extern const struct fs_mandatory fs_mandatory[];
extern const size_t fs_nmandatory;
extern const struct fs_mandatory fs_hook_managers[];
extern const size_t fs_nhook_managers;
extern const struct fs_home fs_toolchain_paths[];
extern const size_t fs_ntoolchain_paths;
extern const struct fs_filtered fs_filtered[];
extern const size_t fs_nfiltered;
extern const char *const fs_secrets[];
extern const size_t fs_nsecrets;
extern const char *const fs_shared_tmp[];
extern const size_t fs_nshared_tmp;
extern const char *const fs_runtime_secrets[];
extern const size_t fs_nruntime_secrets;
extern const char *const fs_env_secrets[];
extern const size_t fs_nenv_secrets;
extern const char *const fs_jdk_dirs[];
extern const size_t fs_njdk_dirs;

/* ---- fspath.c ---- */

/* "a" + "/" + "b", without doubling the slash after "/". */
char	*fs_join(const char *a, const char *b);
/* Append a copy of s to the vector, unless it is there already. */
int	 fs_strv_add(char ***, size_t *, const char *);
/* Append a copy of s (fs_strv_add, when s cannot be there yet). */
int	 fs_strv_push(char ***, size_t *, const char *);
/* How many components an absolute path has. */
int	 fs_depth(const char *);
/* Mount rules by depth, shallow first (qsort). */
int	 fs_rule_cmp(const void *, const void *);
/* The first line of a small file, after prefix; malloc'ed, or NULL. */
char	*fs_read_line(const char *file, const char *prefix);
/* path with its directory resolved, its last component as it is. */
char	*fs_resolve_dir(const char *);

/* ---- fsset.c ---- */

/* Add path with flags (or them into its entry); why: who reads it. */
int	 fs_set_add(struct fs_set *, const char *path, int flags,
	    const char *why);
/* Add each path of a config list, resolved against cwd and home. */
int	 fs_set_add_list(struct fs_set *, const struct strlist *, int flags,
	    const char *cwd, const char *home);
/* Resolve a path as the config would name it, and add it. */
int	 fs_set_add_resolved(struct fs_set *, const char *path, int flags,
	    const char *why, const char *cwd, const char *home);
/* The entry of the first len octets of path, or NULL. */
struct fs_entry *fs_set_find(const struct fs_set *, const char *path,
	    size_t len);
void	 fs_set_free(struct fs_set *);
/* The flags of the set's entry at path, 0 when none. */
int	 fs_flags_at(const struct fs_set *, const char *);
/* Read the directory of the first len octets of dir at once. */
void	 fs_listing_read(struct fs_listing *, const char *dir, size_t len);
/* Whether the directory read holds the name: 1, 0, or -1 (ask lstat). */
int	 fs_listing_has(const struct fs_listing *, const char *name,
	    size_t len);
void	 fs_listing_clear(struct fs_listing *);

/* ---- fsgit.c ---- */

/* A git worktree's directories, readable wherever root's tree is. */
int	 fs_worktree(struct fs_set *, struct fs_plan *, const char *root,
	    const struct config *, const char *proj, const char *home);
/* Every core.hooksPath of the user's own git config (any repository). */
int	 fs_git_global(struct fs_plan *, const char *home);
/* The hooks of the git work tree a writable root lies in, guarded. */
int	 fs_git_repo(struct fs_set *, const struct fs_plan *,
	    const char *root);
/* The project directory, where the config's relative paths start. */
int	 fs_project(const char *cwd, const char *home, char **dir, char *why,
	    size_t whylen);
/* The default writable root: the project directory, or cwd. */
int	 fs_workspace(const struct fs_set *, const char *project,
	    const char *cwd, char **ws, char *why, size_t whylen);

/* ---- fshome.c ---- */

/* Whether a config list names path itself or, with inside, below it. */
int	 fs_list_meets(const struct strlist *, const char *path, int inside,
	    const char *proj, const char *home);
/* filesystem.toolchains: each existing place, read-only, where hidden. */
int	 fs_toolchains(struct fs_set *, const struct config *,
	    const char *home, const char *proj);
/* filesystem.caches: one writable directory per project. */
int	 fs_caches(struct fs_set *, struct fs_plan *, const struct config *,
	    const char *home);
/* Secret stores: hidden where readable, unless named themselves. */
int	 fs_secrets_hide(struct fs_set *, const struct config *,
	    const char *home, const char *proj);
/* One secret store's path ("*": every entry there), hidden if shown. */
int	 fs_secret_at(struct fs_set *, const struct config *,
	    const char *home, const char *proj, const char *path);
/* The JDKs a command may run, shown with the proxy in net.properties. */
int	 fs_java(struct fs_set *, struct fs_plan *, const struct fs_inputs *,
	    const char *, const char *);
/* The settings files shown as filtered copies. */
int	 fs_filtered_show(struct fs_set *, struct fs_plan *,
	    const struct config *, const char *home, const char *proj,
	    struct fs_runfiles *);

/* ---- fsfilter.c ---- */

/* A growing output buffer; ok drops to 0 on no memory. */
struct fsf_buf {
	char	*s;
	size_t	 len, cap;
	int	 ok;
};

/* Append n octets of s to b, NUL-terminated. */
void	 fsf_add(struct fsf_buf *, const char *, size_t);
/* Append a printf-formatted text to b. */
void	 fsf_addf(struct fsf_buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Add a name to a list of names left out ("a, b"), once: 0 or -1. */
int	 fsf_drop(char **, const char *name, size_t len);
/* Whether s is one of the n strings of v, in any case. */
int	 fsf_in(const char *const *, size_t, const char *);
/* Hand b to out when rc is 0, else free it: rc. */
int	 fsf_result(struct fsfilter_out *, struct fsf_buf *, int rc);

/* ---- fsprivate.c ---- */

/* The caller's private entries outside the home, hidden. */
int	 fs_private_hide(struct fs_set *, const struct fs_plan *,
	    const struct config *, const struct fs_inputs *,
	    const struct strlist *, const char *, const char *);

/* ---- fsplan.c ---- */

/* Keep a malloc'ed text for the plan's lifetime: it, or NULL (freed). */
const char *fs_own(struct fs_plan *, char *);

/* ---- fslookup.c ---- */

void	 fs_gindex_free(struct fs_gindex *);

#endif
