/*
 * The filesystem policy, resolved in the parent before the sandbox starts:
 * every configured path becomes an absolute, symlink-free path, and each
 * path gets one mount rule.  Nothing here touches the filesystem beyond
 * stat(2), io_realpath and reading small files (a worktree's .git file,
 * git's config for core.hooksPath).
 *
 * Also here, as pure functions over a resolved path, the two questions
 * the creation guard asks about every name it creates, writes or
 * replaces: fs_plan_guarded() (the plan's protected paths) and
 * fs_git_rule() (what a later git reads as configuration or runs).
 */
#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "common/sha256.h"
#include "policy/policy.h"
#include "launcher/launcher.h"
#include "launcher/fs/fs.h"

#define P_DENY_READ	0x01
#define P_ALLOW_READ	0x02
#define P_ALLOW_WRITE	0x04
#define P_DENY_WRITE	0x08
#define P_PATTERN	0x10	/* covered by a pattern, not named */
#define P_SHOW_RO	0x20	/* shown read-only, in a writable root too */

#define FS_GIT_MAXDEPTH	256	/* path components fs_git_rule looks at */

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

struct fs_mandatory {
	const char	*name;		/* relative to a writable root */
	const char	*reader;	/* the program outside that acts on it */
};

/*
 * The mandatory write-deny set, applied at the top of every writable root
 * and at the home directory when it lies in one.  The rule for an entry
 * (docs/filesystem.md): a file that a program outside the sandbox reads
 * and acts on -- runs a command it names, loads code from it -- without
 * the user asking for that, when the program is started for some other
 * purpose.  Project files the user runs on purpose (Makefile,
 * package.json scripts) are not in it: see the threat model.
 */
static const struct fs_mandatory fs_mandatory[] = {
	/* Shells, at start-up or login. */
	{ ".bashrc", "bash" }, { ".bash_profile", "bash" },
	{ ".bash_login", "bash" }, { ".bash_logout", "bash" },
	{ ".bash_aliases", "bash (sourced by .bashrc)" },
	{ ".profile", "sh and bash login shells" },
	{ ".zshrc", "zsh" }, { ".zshenv", "zsh" }, { ".zprofile", "zsh" },
	{ ".zlogin", "zsh" }, { ".zlogout", "zsh" },
	{ ".oh-my-zsh", "oh-my-zsh (sourced by .zshrc)" },
	{ ".config/fish", "fish" },
	{ ".kshrc", "ksh" }, { ".mkshrc", "mksh" },
	{ ".cshrc", "csh" }, { ".tcshrc", "tcsh" }, { ".login", "csh" },
	{ ".logout", "csh" },
	{ ".inputrc", "readline (key bindings that type commands)" },
	{ ".tmux.conf", "tmux" }, { ".config/tmux", "tmux" },
	{ ".screenrc", "screen" },
	/* Git: the repository at the top of the root (any depth: guard.c). */
	{ ".gitconfig", "git" }, { ".config/git", "git" },
	{ ".gitmodules", "git" }, { ".git/hooks", "git" },
	{ ".git/commondir", "git" }, { ".git/config.worktree", "git" },
	{ ".hgrc", "Mercurial" }, { ".hg/hgrc", "Mercurial" },
	/* Login, desktop and per-user services. */
	{ ".ssh", "ssh and sshd (authorized_keys, config, rc)" },
	{ ".config/autostart", "the desktop session" },
	{ ".config/systemd/user", "systemd --user" },
	{ ".config/environment.d", "systemd --user" },
	{ ".xprofile", "the X session" }, { ".xsession", "the X session" },
	{ ".xsessionrc", "the X session" }, { ".xinitrc", "startx" },
	{ ".pam_environment", "pam_env at login" },
	{ ".forward", "the mail system (|command)" },
	{ ".local/bin", "the shell ($PATH)" },
	{ ".local/lib", "python (user site-packages, .pth files)" },
	{ ".config/direnv", "direnv" },
	/* Version managers: a tool at a path, hooks, sourced files. */
	{ ".tool-versions", "asdf and mise (python path:/dir)" },
	{ "mise.toml", "mise (hooks, [env] _.source)" },
	{ ".mise.toml", "mise (hooks, [env] _.source)" },
	{ "mise.local.toml", "mise (hooks, [env] _.source)" },
	{ ".mise.local.toml", "mise (hooks, [env] _.source)" },
	{ ".mise", "mise (hooks, [env] _.source)" },
	{ ".config/mise", "mise (hooks, [env] _.source)" },
	{ ".config/mise.toml", "mise (hooks, [env] _.source)" },
	/* Tools that run commands named in their configuration. */
	{ ".ripgreprc", "ripgrep (--pre)" },
	{ ".npmrc", "npm (script-shell, node-options)" },
	{ ".yarnrc", "yarn" }, { ".yarnrc.yml", "yarn (yarnPath)" },
	{ ".cargo/config", "cargo (rustc-wrapper, runners)" },
	{ ".cargo/config.toml", "cargo (rustc-wrapper, runners)" },
	{ "rust-toolchain", "rustup (toolchain path)" },
	{ "rust-toolchain.toml", "rustup (toolchain path)" },
	{ ".config/go/env", "go (GOFLAGS=-toolexec)" },
	{ ".mavenrc", "mvn" }, { ".gradle/init.d", "gradle" },
	{ ".gradle/init.gradle", "gradle" },
	{ ".gnupg", "gpg (pinentry-program)" },
	{ ".docker", "docker (credential helpers)" },
	{ ".kube", "kubectl (exec credential plugins)" },
	{ ".aws", "aws (credential_process)" },
	/* Interpreters and debuggers, at start-up. */
	{ ".gdbinit", "gdb" }, { ".lldbinit", "lldb" },
	{ ".pdbrc", "python -m pdb" },
	{ ".irbrc", "irb" }, { ".pryrc", "pry" }, { ".Rprofile", "R" },
	{ ".psqlrc", "psql (\\!)" }, { ".sqliterc", "sqlite3 (.shell)" },
	{ ".ghci", "ghci" }, { ".erlang", "erl" },
	{ ".julia/config", "julia" },
	/* Editors. */
	{ ".vscode", "VS Code" }, { ".idea", "JetBrains IDEs" },
	{ ".zed", "Zed" }, { ".helix", "Helix" }, { ".vimrc", "vim" },
	{ ".vim", "vim" }, { ".exrc", "vi" }, { ".config/nvim", "neovim" },
	{ ".emacs", "Emacs" }, { ".emacs.d", "Emacs" },
	/* Coding agents: settings, hooks, MCP servers. */
	{ ".claude", "Claude Code" }, { ".mcp.json", "Claude Code (MCP)" },
	{ ".pi", "pi" }, { ".codex", "Codex" }, { ".cursor", "Cursor" },
	{ ".gemini", "Gemini CLI" }, { ".continue", "Continue" },
	{ ".aider.conf.yml", "aider (lint-cmd, test-cmd)" },
	{ ".opencode", "opencode" }, { "opencode.json", "opencode" },
	{ ".kiro", "Kiro (hooks)" }, { ".roo", "Roo Code (MCP)" },
	{ ".amazonq", "Amazon Q (MCP)" },
};

/* Names git reads in a git directory as configuration. */
static const char *const fs_git_files[] = {
	"config", "config.worktree", "commondir",
};

/*
 * A git operation's state in a git directory: the next "git rebase
 * --continue", "git cherry-pick --continue" or "git am --continue" on the
 * host runs what it lists (a todo's "exec" lines).  Allowed, and followed:
 * the guard tells the parent, which reads them at exit (gitstate.c).
 */
static const char *const fs_git_state[] = {
	"rebase-merge", "rebase-apply", "sequencer",
};

/*
 * What git hook managers read at the top of a work tree, run by the
 * hooks they install: protected in every work tree older than the run,
 * like its core.hooksPath.
 */
static const struct fs_mandatory fs_hook_managers[] = {
	{ ".husky", "husky (git hooks)" },
	{ ".pre-commit-config.yaml", "pre-commit (a git hook)" },
	{ "lefthook.yml", "lefthook (a git hook)" },
	{ ".lefthook.yml", "lefthook (a git hook)" },
};

/*
 * filesystem.toolchains: where toolchains and their non-secret settings
 * live in the home directory, re-exposed read-only while the home stays
 * hidden (docs/filesystem.md gives the reason for each).  Only what is
 * there, only inside a hidden tree, never over the user's own denyRead.
 */
static const struct fs_home {
	enum fs_toolchain	 which;
	const char		*rel;		/* below the home directory */
} fs_toolchain_paths[] = {
	{ TOOLCHAIN_RUSTUP, ".rustup" },
	{ TOOLCHAIN_CARGO, ".cargo/bin" },
	{ TOOLCHAIN_PYENV, ".pyenv" },
	{ TOOLCHAIN_NVM, ".nvm" },
	{ TOOLCHAIN_VOLTA, ".volta" },
	{ TOOLCHAIN_BUN, ".bun" },
	{ TOOLCHAIN_DENO, ".deno" },
	{ TOOLCHAIN_GO, "go/bin" },
	{ TOOLCHAIN_GO, "sdk" },
	{ TOOLCHAIN_LOCAL, ".local/bin" },
	{ TOOLCHAIN_LOCAL, ".local/lib" },
	{ TOOLCHAIN_LOCAL, ".local/share/pipx" },
	{ TOOLCHAIN_LOCAL, ".local/share/uv/tools" },
	{ TOOLCHAIN_LOCAL, ".local/share/uv/python" },
	{ TOOLCHAIN_MISE, ".local/share/mise" },
	{ TOOLCHAIN_MISE, ".tool-versions" },
	{ TOOLCHAIN_ASDF, ".asdf" },
	{ TOOLCHAIN_ASDF, ".asdfrc" },
	{ TOOLCHAIN_ASDF, ".tool-versions" },
	{ TOOLCHAIN_SDKMAN, ".sdkman" },
	{ TOOLCHAIN_GIT, ".config/git/ignore" },
	{ TOOLCHAIN_GIT, ".config/git/attributes" },
};

/*
 * Settings files a toolchain needs some of, which are also where people
 * keep credentials (a token in a git URL, http.extraHeader, a GOPROXY
 * with a password, mise's [env]): shown as filtered copies
 * (fsfilter.c) wherever they would be readable -- re-exposed from the
 * hidden home by the toolchain's switch, or in a home left visible --
 * unless the config names the file itself.
 */
static const struct fs_filtered {
	enum fs_toolchain	 which;
	const char		*rel;		/* below the home directory */
	enum fs_filter		 filter;
} fs_filtered[] = {
	{ TOOLCHAIN_GIT, ".gitconfig", FS_FILTER_GIT },
	{ TOOLCHAIN_GIT, ".config/git/config", FS_FILTER_GIT },
	{ TOOLCHAIN_GO, ".config/go/env", FS_FILTER_GOENV },
	{ TOOLCHAIN_MISE, ".config/mise/config.toml", FS_FILTER_MISE },
	{ TOOLCHAIN_MISE, ".config/mise/config.local.toml", FS_FILTER_MISE },
	{ TOOLCHAIN_MISE, ".config/mise/mise.toml", FS_FILTER_MISE },
	{ TOOLCHAIN_NPM, ".npmrc", FS_FILTER_INI },
	{ TOOLCHAIN_PIP, ".config/pip/pip.conf", FS_FILTER_INI },
	{ TOOLCHAIN_PIP, ".pip/pip.conf", FS_FILTER_INI },
};

/*
 * Secret stores: hidden wherever they would be readable -- under a parent
 * the config re-exposes (allowRead "~", the home as the workspace) --
 * unless the config names the store itself, or a path inside it.
 */
static const char *const fs_secrets[] = {
	/* keys, cloud and cluster credentials */
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube",
	".docker/config.json", ".config/containers/auth.json", ".oci",
	".vault-token", ".terraform.d/credentials.tfrc.json",
	".config/rclone", ".s3cfg", ".boto", ".pgpass", ".my.cnf",
	/* forges and registries */
	".netrc", ".git-credentials", ".config/git/credentials",
	".config/gh", ".config/hub", ".config/glab-cli", ".yarnrc.yml", ".pypirc", ".cargo/credentials",
	".cargo/credentials.toml", ".gem/credentials",
	".local/share/uv/credentials", ".m2/settings.xml",
	".m2/settings-security.xml", ".gradle/gradle.properties",
	/* shell and interpreter histories */
	".bash_history", ".zsh_history", ".zhistory", ".histfile",
	".local/share/fish/fish_history", ".python_history",
	".node_repl_history", ".psql_history", ".mysql_history",
	".sqlite_history", ".irb_history", ".rediscli_history", ".lesshst",
	/* browser profiles */
	".mozilla", ".config/google-chrome", ".config/chromium",
	".config/BraveSoftware", ".config/microsoft-edge", ".config/vivaldi",
	".config/opera", ".var/app", "snap",
	/* keyrings and password stores */
	".local/share/keyrings", ".password-store", ".pki", ".config/op",
	/* agents' credentials */
	".claude/.credentials.json", ".pi/agent/auth.json",
	".codex/auth.json", ".gemini/oauth_creds.json",
	/*
	 * In the toolchains' trees ("*": every entry of a directory): a
	 * Node's global npmrc, a Python's pip.conf (index URLs with their
	 * passwords), pipx's record of the pip arguments it installed with,
	 * a Maven's global settings (server passwords).
	 */
	".nvm/versions/node/*/etc/npmrc",
	".volta/tools/image/node/*/etc/npmrc",
	".asdf/installs/nodejs/*/etc/npmrc",
	".local/share/mise/installs/node/*/etc/npmrc",
	".pyenv/versions/*/pip.conf", ".pyenv/versions/*/envs/*/pip.conf",
	".asdf/installs/python/*/pip.conf",
	".local/share/mise/installs/python/*/pip.conf",
	".local/share/uv/python/*/pip.conf",
	".local/share/pipx/venvs/*/pipx_metadata.json",
	".local/share/pipx/venvs/*/pip.conf",
	".local/share/pipx/shared/pip.conf",
	".sdkman/candidates/maven/*/conf/settings.xml",
};

/* Entries of one directory a "*" of fs_secrets looks at, at most. */
#define FS_STAR_MAX	4096

/*
 * Outside the home, the user's private files (redteam #7): the runtime
 * directory ($XDG_RUNTIME_DIR, /run/user/<uid>) holds podman's login, a
 * supervisor's capability file, agent sockets; the shared temporary
 * directories hold Kerberos ticket caches, ssh-agent and tmux
 * directories, other sessions' mktemp -d directories.  Each entry there
 * owned by the caller and closed to group and others is hidden, but for
 * those the run works in (fs_private_hide).
 */
static const char *const fs_shared_tmp[] = { "/tmp", "/var/tmp" };

/* Entries of one shared temporary directory looked through, at most. */
#define FS_TMP_MAX	4096
/* Entries of a private directory looked at for sockets only, at most. */
#define FS_SOCKDIR_MAX	16

/* Secret stores in the runtime directory (shown when it is). */
static const char *const fs_runtime_secrets[] = {
	"containers/auth.json",		/* podman, buildah, skopeo */
	"pisbx-supervisor.env",		/* supervisor.md's quick start */
	"pisbx/supervisor.env",		/* the supervisor's user unit */
};

/* Environment variables naming a secret store: "FILE:", "DIR:" or "/". */
static const char *const fs_env_secrets[] = {
	"KRB5CCNAME",			/* Kerberos ticket cache */
	"REGISTRY_AUTH_FILE",		/* podman, buildah, skopeo login */
};

/* Where JDKs live, each entry one JDK's home (fs_java). */
static const char *const fs_jdk_dirs[] = {
	"/usr/lib/jvm", "~/.sdkman/candidates/java", "~/.gradle/jdks",
	"~/.jdks", "~/.local/share/mise/installs/java",
	"~/.asdf/installs/java",
};

/* The writable caches, below the home directory. */
#define FS_CACHE_DIR	".cache/pisbx"

static int	 fs_set_add(struct fs_set *, const char *path, int flags,
		    const char *why);
static int	 fs_set_add_list(struct fs_set *, const struct strlist *,
		    int flags, const char *cwd, const char *home);
static int	 fs_set_add_resolved(struct fs_set *, const char *path,
		    int flags, const char *why, const char *cwd,
		    const char *home);
static void	 fs_set_free(struct fs_set *);
static size_t	*fs_set_slot(const struct fs_set *, const char *path,
		    size_t len);
static struct fs_entry *fs_set_find(const struct fs_set *, const char *path,
		    size_t len);
static int	 fs_set_grow(struct fs_set *);
static void	 fs_listing_clear(struct fs_listing *);
static void	 fs_listing_read(struct fs_listing *, const char *dir,
		    size_t len);
static int	 fs_listing_has(const struct fs_listing *, const char *name,
		    size_t len);
static int	 fs_name_cmp(const void *, const void *);
static int	 fs_strv_add(char ***, size_t *, const char *);
static int	 fs_strv_push(char ***, size_t *, const char *);
static int	 fs_prefix(const char *path, const char *root,
		    int (*)(const char *, const char *, size_t));
static int	 fs_depth(const char *);
static size_t	 fs_fold_hash(const char *, size_t);
static struct fs_gslot *fs_gslot(struct fs_gslot *, size_t, const char *,
		    size_t);
static int	 fs_gput(struct fs_gslot *, size_t, const char *, size_t,
		    size_t);
static void	 fs_gindex_free(struct fs_gindex *);
static const char *fs_gindex_find(const struct fs_plan *, const char *, int);
static int	 fs_rule_cmp(const void *, const void *);
static char	*fs_read_line(const char *file, const char *prefix);
static int	 fs_worktree(struct fs_set *, struct fs_plan *,
		    const char *root, const struct config *, const char *proj,
		    const char *home);
static const char *fs_worktree_why(struct fs_plan *, const struct config *,
		    const char *root, const char *common);
static char	*fs_join(const char *a, const char *b);
static int	 fs_mandatory_at(struct fs_set *, const char *dir,
		    int allow_git_config);
static const char *fs_mandatory_of(const char *path, const char *dir,
		    int allow_git_config);
static int	 fs_file_roots(const struct config *, const struct fs_plan *,
		    const char *home, const struct strlist *pathdirs);
static int	 fs_path_list(const char *path, const char *project,
		    struct strlist *out);
static int	 fs_git_dirs(const char *top, char **gitdir, char **common,
		    int *isfile);
static int	 fs_git_global(struct fs_plan *, const char *home);
static int	 fs_git_repo(struct fs_set *, const struct fs_plan *,
		    const char *root);
static int	 fs_refuse_cwd(const struct fs_set *, const struct fs_plan *,
		    const char *cwd, int deny_read_set);
static int	 fs_rundir(struct fs_set *, const char *rundir);
static int	 fs_trusted(struct fs_set *, const struct config *,
		    const struct fs_inputs *, const char *home);
static int	 fs_path_dirs(struct fs_set *, const struct fs_plan *,
		    const struct strlist *pathdirs);
static int	 fs_entry_cmp(const void *, const void *);
static int	 fs_rules(struct fs_plan *, const struct fs_set *);
static int	 fs_visible(const struct fs_set *, const char *path);
static int	 fs_list_meets(const struct strlist *, const char *path,
		    int inside, const char *proj, const char *home);
static int	 fs_toolchains(struct fs_set *, const struct config *,
		    const char *home, const char *proj);
static int	 fs_caches(struct fs_set *, struct fs_plan *,
		    const struct config *, const char *home);
static int	 fs_cache_mkdir(const char *);
static int	 fs_cache_name(const char *project, char *buf, size_t len);
static int	 fs_secrets_hide(struct fs_set *, const struct config *,
		    const char *home, const char *proj);
static int	 fs_secret_at(struct fs_set *, const struct config *,
		    const char *home, const char *proj, const char *path);
static int	 fs_private_hide(struct fs_set *, const struct fs_plan *,
		    const struct config *, const struct fs_inputs *,
		    const struct strlist *, const char *, const char *);
static int	 fs_private_at(struct fs_set *, const char *path, int whole,
		    const char *const *keep, size_t nkeep,
		    const struct strlist *);
static int	 fs_private_sockets(int dirfd, const char *name);
static int	 fs_private_secrets(struct fs_set *, const struct config *,
		    char *const *rt, size_t nrt, const char *, const char *);
static int	 fs_java(struct fs_set *, struct fs_plan *,
		    const struct fs_inputs *, const char *, const char *);
static int	 fs_java_at(struct fs_set *, struct fs_plan *, const char *,
		    const char *);
static int	 fs_filtered_show(struct fs_set *, struct fs_plan *,
		    const struct config *, const char *home, const char *proj,
		    const char *rundir);
static char	*fs_resolve_dir(const char *);
static int	 fs_flags_at(const struct fs_set *, const char *);
static int	 fs_filtered_one(struct fs_set *, struct fs_plan *,
		    const struct config *, const char *, const char *,
		    const char *, const char *, enum fs_toolchain,
		    enum fs_filter);
static int	 fs_filtered_at(struct fs_set *, const char *path,
		    const char *copy, const char *note);
static const char *fs_own(struct fs_plan *, char *);
static int	 fs_git_file(const char *name, int allow_config);
static int	 fs_git_tail(char *const *v, size_t n, int ancestors_too,
		    int allow_config);
static int	 fs_git_ask(struct fs_git_q *, size_t max, size_t *n,
		    enum fs_git_ask, int up);
static const char *fs_project_trusted(const char *, const char *, char *,
		    size_t);
static int	 fs_project(const char *cwd, const char *home, char **dir,
		    char *why, size_t whylen);
static int	 fs_workspace(const struct fs_set *, const char *project,
		    const char *cwd, char **ws, char *why, size_t whylen);
static int	 fs_glob_hit(void *, const char *path, enum fs_glob_kind,
		    const char *pattern);

/* "a" + "/" + "b", without doubling the slash after "/". */
static char *
fs_join(const char *a, const char *b)
{
	char	*s;
	size_t	 la = strlen(a);

	if (la > 0 && a[la - 1] == '/')
		la--;
	if (asprintf(&s, "%.*s/%s", (int)la, a, b) == -1)
		return NULL;
	return s;
}

/*
 * Absolute, symlink-free form of a configured path: "~" and "~/x" use
 * home, a relative path is taken against cwd, and the longest existing
 * prefix is resolved (io_realpath) so a path that does not exist yet is
 * still named the way the kernel will see it once created.
 */
char *
fs_resolve(const char *in, const char *cwd, const char *home)
{
	char	*abs = NULL, *res = NULL, *cut, real[PATH_MAX];
	char	*tail = NULL;

	if (in[0] == '~' && (in[1] == '\0' || in[1] == '/')) {
		if (home == NULL)
			return NULL;
		abs = fs_join(home, in[1] == '/' ? in + 2 : "");
	} else if (in[0] == '/')
		abs = strdup(in);
	else
		abs = fs_join(cwd, in);
	if (abs == NULL)
		return NULL;
	/* Trailing slashes mean nothing here. */
	while (strlen(abs) > 1 && abs[strlen(abs) - 1] == '/')
		abs[strlen(abs) - 1] = '\0';

	cut = abs + strlen(abs);
	for (;;) {
		char save = *cut;

		*cut = '\0';
		if (io_realpath(abs[0] != '\0' ? abs : "/", real) != NULL) {
			*cut = save;
			tail = cut;
			break;
		}
		*cut = save;
		while (cut > abs && *--cut != '/')
			;
		if (cut == abs) {
			strcpy(real, "/");
			tail = abs;
			break;
		}
	}
	while (*tail == '/')
		tail++;
	if (*tail == '\0')
		res = strdup(real);
	else
		res = fs_join(real, tail);
	free(abs);
	return res;
}

/* The slot of the first len octets of path: its entry's, or a free one. */
static size_t *
fs_set_slot(const struct fs_set *set, const char *path, size_t len)
{
	uint64_t	 h = 0xcbf29ce484222325ULL;
	size_t		 i, *sl;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)path[i]) * 0x100000001b3ULL;
	for (i = (size_t)(h ^ (h >> 29)) & (set->cap - 1);; i = (i + 1) &
	    (set->cap - 1)) {
		sl = &set->slot[i];
		if (*sl == 0 || (strncmp(set->v[*sl - 1].path, path, len) ==
		    0 && set->v[*sl - 1].path[len] == '\0'))
			return sl;
	}
}

/* The entry of the first len octets of path, or NULL. */
static struct fs_entry *
fs_set_find(const struct fs_set *set, const char *path, size_t len)
{
	size_t	*sl;

	if (set->cap == 0)
		return NULL;
	sl = fs_set_slot(set, path, len);
	return *sl == 0 ? NULL : &set->v[*sl - 1];
}

static void
fs_listing_clear(struct fs_listing *l)
{
	size_t	i;

	for (i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	memset(l, 0, sizeof(*l));
}

static int
fs_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Read the directory named by the first len octets of dir: its names, or
 * that it does not exist; FS_LIST_NONE (ask name by name) when it cannot
 * be read in full (not listable, too large, out of memory).
 */
static void
fs_listing_read(struct fs_listing *l, const char *dir, size_t len)
{
	DIR		*d;
	struct dirent	*de;
	char		**nv;

	fs_listing_clear(l);
	if (len >= sizeof(l->dir))
		return;
	memcpy(l->dir, dir, len);
	l->dir[len] = '\0';
	if ((d = opendir(len == 0 ? "/" : l->dir)) == NULL) {
		if (errno == ENOENT || errno == ENOTDIR)
			l->state = FS_LIST_MISSING;
		return;
	}
	l->state = FS_LIST_READ;
	while ((de = readdir(d)) != NULL) {
		if (l->n == FS_LIST_MAX || (nv = reallocarray(l->names,
		    l->n + 1, sizeof(*nv))) == NULL || (l->names = nv,
		    (nv[l->n] = strdup(de->d_name)) == NULL)) {
			l->state = FS_LIST_NONE;
			break;
		}
		l->n++;
	}
	closedir(d);
	if (l->state == FS_LIST_READ)
		qsort(l->names, l->n, sizeof(*l->names), fs_name_cmp);
}

/*
 * Whether the directory read holds the name (len octets): 1, 0, or -1
 * when it was not read (ask lstat).
 */
static int
fs_listing_has(const struct fs_listing *l, const char *name, size_t len)
{
	char	key[NAME_MAX + 1], *kp = key;

	if (l->state == FS_LIST_MISSING)
		return 0;
	if (l->state != FS_LIST_READ || len > NAME_MAX)
		return -1;
	memcpy(key, name, len);
	key[len] = '\0';
	return bsearch(&kp, l->names, l->n, sizeof(*l->names),
	    fs_name_cmp) != NULL;
}

/* Room for one more entry: the slots at most half full. */
static int
fs_set_grow(struct fs_set *set)
{
	size_t	*old = set->slot, ocap = set->cap, i;

	if ((set->n + 1) * 2 <= set->cap)
		return 0;
	set->cap = ocap == 0 ? 256 : ocap * 2;
	if ((set->slot = calloc(set->cap, sizeof(*set->slot))) == NULL) {
		set->slot = old;
		set->cap = ocap;
		return -1;
	}
	for (i = 0; i < set->n; i++)
		*fs_set_slot(set, set->v[i].path, strlen(set->v[i].path)) =
		    i + 1;
	free(old);
	return 0;
}

static int
fs_set_add(struct fs_set *set, const char *path, int flags, const char *why)
{
	struct fs_entry	*v, *e;
	size_t		*sl;

	if (path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	if (fs_set_grow(set) == -1)
		return -1;
	sl = fs_set_slot(set, path, strlen(path));
	if (*sl != 0) {
		e = &set->v[*sl - 1];
		e->flags |= flags;
		if (e->why == NULL)
			e->why = why;
		return 0;
	}
	v = reallocarray(set->v, set->n + 1, sizeof(*v));
	if (v == NULL)
		return -1;
	set->v = v;
	if ((v[set->n].path = strdup(path)) == NULL)
		return -1;
	v[set->n].flags = flags;
	v[set->n].why = why;
	v[set->n].source = NULL;
	v[set->n].note = NULL;
	*sl = ++set->n;
	return 0;
}

/* Resolve a path as the config would name it, and add it. */
static int
fs_set_add_resolved(struct fs_set *set, const char *path, int flags,
    const char *why, const char *cwd, const char *home)
{
	char	*p;
	int	 rc;

	if ((p = fs_resolve(path, cwd, home)) == NULL)
		return -1;
	rc = fs_set_add(set, p, flags, why);
	free(p);
	return rc;
}

static int
fs_set_add_list(struct fs_set *set, const struct strlist *l, int flags,
    const char *cwd, const char *home)
{
	struct stat	 st;
	const char	*key, *what;
	char		*p;
	size_t		 i;
	int		 rc;

	if (flags & P_DENY_READ) {
		key = "denyRead";
		what = "nothing to hide";
	} else if (flags & P_ALLOW_READ) {
		key = "allowRead";
		what = "nothing to show";
	} else if (flags & P_ALLOW_WRITE) {
		key = "allowWrite";
		what = "nothing is made writable (create it before the run "
		    "to let commands write there)";
	} else {
		key = "denyWrite";
		what = "commands cannot create it";
	}
	for (i = 0; i < l->n; i++) {
		if (glob_is_pattern(l->v[i]))
			continue;	/* fsglob.c */
		if ((p = fs_resolve(l->v[i], cwd, home)) == NULL) {
			log_warnx("filesystem path %s: cannot resolve "
			    "(no home directory?)", l->v[i]);
			return -1;
		}
		/* A path for another machine, or a tool not yet installed. */
		if (lstat(p, &st) == -1 && errno == ENOENT)
			log_info("warning: filesystem.%s[%zu]: %s (%s) does "
			    "not exist: %s", key, i, l->v[i], p, what);
		rc = fs_set_add(set, p, flags, flags & P_DENY_WRITE ?
		    "filesystem.denyWrite" : NULL);
		free(p);
		if (rc == -1)
			return -1;
	}
	return 0;
}

static void
fs_set_free(struct fs_set *set)
{
	size_t	i;

	for (i = 0; i < set->n; i++) {
		free(set->v[i].path);
		free(set->v[i].source);
	}
	free(set->v);
	free(set->slot);
	memset(set, 0, sizeof(*set));
}

static int
fs_strv_add(char ***v, size_t *n, const char *s)
{
	size_t	  i;

	for (i = 0; i < *n; i++)
		if (strcmp((*v)[i], s) == 0)
			return 0;
	return fs_strv_push(v, n, s);
}

/* Append a copy of s (fs_strv_add, when s cannot be there yet). */
static int
fs_strv_push(char ***v, size_t *n, const char *s)
{
	char	**nv;

	if ((nv = reallocarray(*v, *n + 1, sizeof(*nv))) == NULL)
		return -1;
	*v = nv;
	if ((nv[*n] = strdup(s)) == NULL)
		return -1;
	(*n)++;
	return 0;
}

/* Whether path is root or lies below it, by the given comparison. */
static int
fs_prefix(const char *path, const char *root,
    int (*cmp)(const char *, const char *, size_t))
{
	size_t	len = strlen(root);

	if (strcmp(root, "/") == 0)
		return 1;
	return cmp(path, root, len) == 0 &&
	    (path[len] == '\0' || path[len] == '/');
}

/* A hash of a file's identity, for the guard's tables. */
size_t
fs_id_hash(dev_t dev, ino_t ino)
{
	uint64_t	h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^
			    (uint64_t)dev * 0xc2b2ae3d27d4eb4fULL;

	return (size_t)(h >> 17);
}

int
fs_under(const char *path, const char *root)
{
	return fs_prefix(path, root, strncmp);
}

/*
 * fs_under, ignoring ASCII case: on a case-insensitive filesystem (vfat,
 * exfat, CIFS, a casefolded ext4 directory) ".GIT/CONFIG" is
 * ".git/config".  For protected names only: refusing a name nobody uses
 * on a case-sensitive one costs nothing.
 */
int
fs_under_ci(const char *path, const char *root)
{
	return fs_prefix(path, root, strncasecmp);
}

static int
fs_depth(const char *p)
{
	int	d = 0;

	for (; *p != '\0'; p++)
		if (*p == '/')
			d++;
	return d;
}

static int
fs_rule_cmp(const void *a, const void *b)
{
	const struct fs_rule *ra = a, *rb = b;
	int	da = fs_depth(ra->path), db = fs_depth(rb->path);

	if (da != db)
		return da < db ? -1 : 1;
	return strcmp(ra->path, rb->path);
}

/*
 * The first line of a small file, without its newline and after prefix
 * (which it must start with; NULL: any line); NULL when absent.
 */
static char *
fs_read_line(const char *file, const char *prefix)
{
	char	 line[PATH_MAX + 16], *p;
	FILE	*f;
	struct stat st;

	if (lstat(file, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (f = fopen(file, "re")) == NULL)
		return NULL;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (p == NULL)
		return NULL;
	if (prefix != NULL) {
		if (strncmp(line, prefix, strlen(prefix)) != 0)
			return NULL;
		p += strlen(prefix);
		p += strspn(p, " \t");
	}
	p[strcspn(p, "\r\n")] = '\0';
	return strdup(p);
}

/*
 * The git directory of the work tree at top (its .git, or what a .git
 * file "gitdir: DIR" names) and its common directory (DIR/commondir, or
 * DIR itself), malloc'ed; both NULL when top holds no .git.  *isfile
 * says which kind of .git it was.
 */
static int
fs_git_dirs(const char *top, char **gitdir, char **common, int *isfile)
{
	char		*dotgit, *line = NULL, *p = NULL;
	struct stat	 st;
	int		 rc = -1;

	*gitdir = *common = NULL;
	*isfile = 0;
	if ((dotgit = fs_join(top, ".git")) == NULL)
		return -1;
	if (lstat(dotgit, &st) == 0 && S_ISDIR(st.st_mode))
		*gitdir = strdup(dotgit);
	else if ((line = fs_read_line(dotgit, "gitdir:")) != NULL) {
		*isfile = 1;
		*gitdir = fs_resolve(line, top, NULL);
	} else {
		rc = 0;		/* no repository here */
		goto done;
	}
	if (*gitdir == NULL || (p = fs_join(*gitdir, "commondir")) == NULL)
		goto done;
	free(line);
	if ((line = fs_read_line(p, NULL)) != NULL)
		*common = fs_resolve(line, *gitdir, NULL);
	else
		*common = strdup(*gitdir);
	if (*common != NULL)
		rc = 0;
done:
	if (rc == -1) {
		free(*gitdir);
		*gitdir = NULL;
	}
	free(dotgit);
	free(line);
	free(p);
	return rc;
}

/*
 * A git worktree's .git is a file "gitdir: DIR"; DIR and its common
 * directory (DIR/commondir) must stay readable so git works, and must not
 * become writable through the worktree: the main repository's hooks and
 * config live there.  The .git file itself is protected: replaced, it
 * would send git elsewhere.
 */
static int
fs_worktree(struct fs_set *set, struct fs_plan *plan, const char *root,
    const struct config *conf, const char *proj, const char *home)
{
	char		*dotgit = NULL, *gitdir = NULL, *common = NULL;
	const char	*why = NULL;
	int		 isfile, rc = -1, deny;

	if (fs_git_dirs(root, &gitdir, &common, &isfile) == -1)
		return -1;
	if (!isfile) {
		rc = 0;
		goto done;
	}
	/*
	 * An allowWrite entry of the config for the main repository (its
	 * work tree, its .git, or above) lets a commit here write what a
	 * commit writes there: objects, refs, this worktree's index and
	 * HEAD.  Its config, hooks, commondir, config.worktree and the rest
	 * of git's rules stay the guard's to refuse, as in any repository
	 * older than the run.
	 */
	deny = !(conf->fs_allow_write_set && fs_list_meets(&conf->allow_write,
	    common, 0, proj, home));
	if (deny && (why = fs_worktree_why(plan, conf, root, common)) == NULL)
		goto done;
	if ((dotgit = fs_join(root, ".git")) == NULL ||
	    fs_set_add(set, dotgit, P_DENY_WRITE, "git (the .git file)") ==
	    -1 || fs_set_add(set, gitdir, P_ALLOW_READ | (deny ?
	    P_DENY_WRITE : 0), why) == -1 ||
	    (strcmp(common, gitdir) != 0 && fs_set_add(set, common,
	    P_ALLOW_READ | (deny ? P_DENY_WRITE : 0), why) == -1))
		goto done;
	rc = 0;
done:
	free(dotgit);
	free(gitdir);
	free(common);
	return rc;
}

/*
 * Who reads a worktree's git directories, and what lets a commit write
 * them: the main repository in allowWrite (kept by the plan).
 */
static const char *
fs_worktree_why(struct fs_plan *plan, const struct config *conf,
    const char *root, const char *common)
{
	char	 file[PATH_MAX + 128], *main, *why, *slash;
	size_t	 len = strlen(common);

	/* The main work tree when the common directory is its ".git". */
	if ((main = strdup(common)) == NULL)
		return NULL;
	if (len > 5 && strcmp(common + len - 5, "/.git") == 0 &&
	    (slash = strrchr(main, '/')) != NULL)
		*slash = '\0';
	policy_hint_file(conf, file, sizeof(file));
	if ((conf->fs_allow_write_set ? asprintf(&why, "git (the main "
	    "repository of the worktree %s, which a commit in it writes; to "
	    "let commands commit, add \"%s\" to filesystem.allowWrite in %s)",
	    root, main, file) : asprintf(&why, "git (the main repository of "
	    "the worktree %s, which a commit in it writes; to let commands "
	    "commit, set filesystem.allowWrite to [\".\", \"%s\"] in %s)",
	    root, main, file)) == -1)
		why = NULL;
	free(main);
	return why != NULL ? fs_own(plan, why) : NULL;
}

/* The writable root path lies in, or NULL. */
const char *
fs_root_of(const struct fs_plan *plan, const char *path)
{
	size_t	i;

	for (i = 0; i < plan->nwritable; i++)
		if (fs_under(path, plan->writable[i]))
			return plan->writable[i];
	return NULL;
}

/* Who reads a repository's config; the guard names allowGitConfig. */
const char fs_why_git_config[] = "git";

/* The mandatory set at the top of dir. */
static int
fs_mandatory_at(struct fs_set *set, const char *dir, int allow_git_config)
{
	char	*p;
	size_t	 i;
	int	 rc;

	for (i = 0; i < sizeof(fs_mandatory) / sizeof(*fs_mandatory); i++) {
		if ((p = fs_join(dir, fs_mandatory[i].name)) == NULL)
			return -1;
		rc = fs_set_add(set, p, P_DENY_WRITE, fs_mandatory[i].reader);
		free(p);
		if (rc == -1)
			return -1;
	}
	if (!allow_git_config) {
		if ((p = fs_join(dir, ".git/config")) == NULL)
			return -1;
		rc = fs_set_add(set, p, P_DENY_WRITE, fs_why_git_config);
		free(p);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/* Who reads path when it is, or lies in, the mandatory set at dir. */
static const char *
fs_mandatory_of(const char *path, const char *dir, int allow_git_config)
{
	const char	*rel;
	size_t		 i, len = strlen(dir);

	if (strcmp(dir, "/") == 0)
		rel = path + 1;
	else if (fs_under(path, dir) && path[len] == '/')
		rel = path + len + 1;
	else
		return NULL;
	for (i = 0; i < sizeof(fs_mandatory) / sizeof(*fs_mandatory); i++)
		if (fs_under_ci(rel, fs_mandatory[i].name))
			return fs_mandatory[i].reader;
	if (!allow_git_config && fs_under_ci(rel, ".git/config"))
		return "git";
	return NULL;
}

/*
 * A single file named in allowWrite is a writable root of its own, so the
 * mandatory set of the directory above it would not cover it: hold it to
 * that set (at its directory and at the home directory) and to the
 * directories of $PATH outside the project (fs_path_dirs).  Such a file
 * cannot be made writable: an error (EXIT_CONFIG, said), not a silent
 * no-op.
 */
static int
fs_file_roots(const struct config *conf, const struct fs_plan *plan,
    const char *home, const struct strlist *pathdirs)
{
	struct stat	 st;
	const char	*f, *why;
	char		*dir;
	size_t		 i, j;

	for (i = 0; i < plan->nwritable; i++) {
		f = plan->writable[i];
		if (stat(f, &st) == -1 || S_ISDIR(st.st_mode))
			continue;
		if ((dir = strdup(f)) == NULL)
			return -1;
		*strrchr(dir, '/') = '\0';
		why = fs_mandatory_of(f, dir[0] == '\0' ? "/" : dir,
		    conf->allow_git_config);
		free(dir);
		if (why == NULL && home != NULL)
			why = fs_mandatory_of(f, home, conf->allow_git_config);
		for (j = 0; why == NULL && j < pathdirs->n; j++)
			if (fs_under(f, pathdirs->v[j]))
				why = "the shell (a directory on $PATH)";
		if (why != NULL) {
			log_warnx("%s: filesystem.allowWrite names %s, which "
			    "is protected (read by %s outside the sandbox): it "
			    "cannot be writable; remove it from "
			    "filesystem.allowWrite", conf->path, f, why);
			return EXIT_CONFIG;
		}
	}
	return 0;
}

/*
 * Append every core.hooksPath value of one git config file to out.  A
 * missing file has none; include.path is not followed.
 */
int
fs_git_hookspath(const char *cfgfile, struct strlist *out)
{
	char	 line[PATH_MAX + 64], *p, *q;
	FILE	*f;
	int	 core = 0, rc = 0;
	struct stat st;

	if (lstat(cfgfile, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (f = fopen(cfgfile, "re")) == NULL)
		return 0;
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		p = line + strspn(line, " \t");
		if (*p == '[') {
			q = p + 1 + strcspn(p + 1, " \t\"]");
			core = q - p - 1 == 4 && strncasecmp(p + 1, "core", 4)
			    == 0 && *q == ']';
			if ((p = strchr(p, ']')) == NULL)
				continue;
			p++;
			p += strspn(p, " \t");
		}
		if (!core || strncasecmp(p, "hookspath", 9) != 0)
			continue;
		p += 9;
		p += strspn(p, " \t");
		if (*p++ != '=')
			continue;
		p += strspn(p, " \t\"");
		p[strcspn(p, "\"#;\r\n")] = '\0';
		q = p + strlen(p);
		while (q > p && isspace((unsigned char)q[-1]))
			*--q = '\0';
		if (*p != '\0')
			rc = fs_strv_add(&out->v, &out->n, p);
	}
	fclose(f);
	return rc;
}

/*
 * The hooks of the work tree whose top is top: each core.hooksPath (its
 * own config's, then the user's global ones), resolved as git does
 * (relative to the top), and the hook managers' files there.  Appended to
 * out; a top without a readable .git adds the managers' files only.
 */
int
fs_git_hookdirs(const char *top, const struct strlist *global,
    const char *home, struct strlist *out)
{
	struct strlist	 vals = { NULL, 0 };
	char		*gitdir = NULL, *common = NULL, *p = NULL;
	size_t		 i;
	int		 isfile, rc = -1;

	if (fs_git_dirs(top, &gitdir, &common, &isfile) == -1)
		goto done;
	if (gitdir != NULL) {
		if ((p = fs_join(common, "config")) == NULL ||
		    fs_git_hookspath(p, &vals) == -1)
			goto done;
		free(p);
		if ((p = fs_join(gitdir, "config.worktree")) == NULL ||
		    fs_git_hookspath(p, &vals) == -1)
			goto done;
		free(p);
		p = NULL;
	}
	for (i = 0; global != NULL && i < global->n; i++)
		if (fs_strv_add(&vals.v, &vals.n, global->v[i]) == -1)
			goto done;
	for (i = 0; i < vals.n; i++) {
		if ((p = fs_resolve(vals.v[i], top, home)) == NULL ||
		    fs_strv_add(&out->v, &out->n, p) == -1)
			goto done;
		free(p);
		p = NULL;
	}
	for (i = 0; i < sizeof(fs_hook_managers) / sizeof(*fs_hook_managers);
	    i++) {
		if ((p = fs_join(top, fs_hook_managers[i].name)) == NULL ||
		    fs_strv_add(&out->v, &out->n, p) == -1)
			goto done;
		free(p);
		p = NULL;
	}
	rc = 0;
done:
	strlist_free(&vals);
	free(gitdir);
	free(common);
	free(p);
	return rc;
}

/* Every core.hooksPath of the user's own git config (any repository). */
static int
fs_git_global(struct fs_plan *plan, const char *home)
{
	const char	*env;
	char		*p = NULL;
	int		 rc = -1;

	if (getenv("GIT_CONFIG_NOSYSTEM") == NULL &&
	    fs_git_hookspath("/etc/gitconfig", &plan->hookspaths) == -1)
		return -1;
	if ((env = getenv("GIT_CONFIG_GLOBAL")) != NULL && env[0] == '/' &&
	    fs_git_hookspath(env, &plan->hookspaths) == -1)
		return -1;
	if ((env = getenv("XDG_CONFIG_HOME")) != NULL && env[0] == '/') {
		if ((p = fs_join(env, "git/config")) == NULL ||
		    fs_git_hookspath(p, &plan->hookspaths) == -1)
			goto done;
		free(p);
		p = NULL;
	}
	if (home != NULL) {
		if ((p = fs_join(home, ".config/git/config")) == NULL ||
		    fs_git_hookspath(p, &plan->hookspaths) == -1)
			goto done;
		free(p);
		if ((p = fs_join(home, ".gitconfig")) == NULL ||
		    fs_git_hookspath(p, &plan->hookspaths) == -1)
			goto done;
	}
	rc = 0;
done:
	free(p);
	return rc;
}

/*
 * The git work tree the writable root lies in (its top at or above the
 * root): its hooks (core.hooksPath, hook managers' files) are protected
 * here as well as by the guard, so existing ones are bound read-only.
 */
static int
fs_git_repo(struct fs_set *set, const struct fs_plan *plan,
    const char *root)
{
	struct strlist	 dirs = { NULL, 0 };
	char		 top[PATH_MAX], *dotgit, *slash;
	struct stat	 st;
	size_t		 i;
	int		 rc = -1;

	if (strlen(root) >= sizeof(top))
		return 0;
	strcpy(top, root);
	for (;;) {
		if ((dotgit = fs_join(top, ".git")) == NULL)
			return -1;
		rc = lstat(dotgit, &st);
		free(dotgit);
		if (rc == 0)
			break;
		if ((slash = strrchr(top, '/')) == NULL || top[1] == '\0')
			return 0;
		slash[slash == top ? 1 : 0] = '\0';
	}
	rc = -1;
	if (fs_git_hookdirs(top, &plan->hookspaths, plan->home, &dirs) == -1)
		goto done;
	for (i = 0; i < dirs.n; i++)
		if (fs_set_add(set, dirs.v[i], P_DENY_WRITE,
		    "git (hooks)") == -1)
			goto done;
	rc = 0;
done:
	strlist_free(&dirs);
	return rc;
}

/*
 * Whether the work tree at top, whose .git is dotgit, is one git itself
 * would trust (safe.directory): the tree and its .git the caller's.  A
 * directory anyone can write to and others own files in (sticky and
 * world-writable, as /tmp) is never a work tree here, even with a .git
 * of ours: any user could have made that .git.  NULL, or why not.
 */
static const char *
fs_project_trusted(const char *top, const char *dotgit, char *buf,
    size_t len)
{
	struct stat	st;

	if (stat(top, &st) == -1 || !S_ISDIR(st.st_mode))
		return "it cannot be read";
	if ((st.st_mode & S_ISVTX) && (st.st_mode & S_IWOTH)) {
		snprintf(buf, len, "%s is a sticky directory every user can "
		    "write to", top);
		return buf;
	}
	if (st.st_uid != getuid()) {
		snprintf(buf, len, "%s belongs to uid %ju, not to you "
		    "(uid %ju)", top, (uintmax_t)st.st_uid,
		    (uintmax_t)getuid());
		return buf;
	}
	if (lstat(dotgit, &st) == -1)
		return "its .git cannot be read";
	if (st.st_uid != getuid()) {
		snprintf(buf, len, "%s belongs to uid %ju, not to you "
		    "(uid %ju)", dotgit, (uintmax_t)st.st_uid,
		    (uintmax_t)getuid());
		return buf;
	}
	return NULL;
}

/*
 * The project directory, where relative paths and patterns of the config
 * start -- what srt calls its working directory, the directory the agent
 * was started in: $PISBX_WORKSPACE, an existing absolute directory, when
 * set; else the top of the git work tree that contains cwd (so "**" +
 * "/.env" means the project's whatever subdirectory a command runs in),
 * unless that is the home directory or "/", or a tree git would not
 * trust (fs_project_trusted); else cwd.  why says which, for -v.
 * Returns 0 (*dir set), -1 on no memory, EXIT_SETUP (said why).
 */
static int
fs_project(const char *cwd, const char *home, char **dir, char *why,
    size_t whylen)
{
	char		*top, *dotgit = NULL, *slash, real[PATH_MAX];
	char		 buf[PATH_MAX + 80];
	const char	*env = getenv("PISBX_WORKSPACE"), *bad;
	struct stat	 st;
	int		 found;

	if (env != NULL && env[0] != '\0') {
		if (env[0] != '/') {
			log_warnx("PISBX_WORKSPACE=%s: not an absolute path",
			    env);
			return EXIT_SETUP;
		}
		if (io_realpath(env, real) == NULL ||
		    stat(real, &st) == -1 || !S_ISDIR(st.st_mode)) {
			log_warnx("PISBX_WORKSPACE=%s: not a directory", env);
			return EXIT_SETUP;
		}
		snprintf(why, whylen, "PISBX_WORKSPACE");
		return (*dir = strdup(real)) == NULL ? -1 : 0;
	}
	snprintf(why, whylen, "the working directory: no git work tree "
	    "holds it");
	if ((top = strdup(cwd)) == NULL)
		return -1;
	for (;;) {
		if ((dotgit = fs_join(top, ".git")) == NULL) {
			free(top);
			return -1;
		}
		found = lstat(dotgit, &st) == 0 && (S_ISDIR(st.st_mode) ||
		    S_ISREG(st.st_mode));
		if (found)
			break;
		free(dotgit);
		dotgit = NULL;
		if ((slash = strrchr(top, '/')) == NULL || slash == top)
			goto cwd;	/* no work tree (or "/" is one) */
		*slash = '\0';
	}
	if (strcmp(top, "/") == 0 || (home != NULL && strcmp(top, home) == 0)) {
		snprintf(why, whylen, "the working directory: the git work "
		    "tree holding it is %s", strcmp(top, "/") == 0 ? "/" :
		    "the home directory");
		goto cwd;
	}
	/*
	 * Another user's "mkdir /tmp/.git" must not make /tmp, with every
	 * project in it, the writable workspace of a run in /tmp/proj.
	 */
	if ((bad = fs_project_trusted(top, dotgit, buf, sizeof(buf))) !=
	    NULL) {
		snprintf(why, whylen, "the working directory: the git work "
		    "tree %s is not taken, as git would not trust it: %s",
		    top, bad);
		goto cwd;
	}
	free(dotgit);
	snprintf(why, whylen, "the top of the git work tree holding the "
	    "working directory");
	*dir = top;
	return 0;
cwd:
	free(dotgit);
	free(top);
	return (*dir = strdup(cwd)) == NULL ? -1 : 0;
}

/*
 * The default writable root: the project directory (fs_project), unless
 * it is a git work tree holding a hidden (denyRead) path; else cwd.
 * $PISBX_WORKSPACE is taken as it is (fs_refuse_cwd then holds it to the
 * working directory's rules).  Returns 0 (*ws set) or -1 on no memory.
 */
static int
fs_workspace(const struct fs_set *set, const char *project, const char *cwd,
    char **ws, char *why, size_t whylen)
{
	const char	*env = getenv("PISBX_WORKSPACE");
	const char	*top = project;
	size_t		 i;

	if (env == NULL || env[0] == '\0') {
		for (i = 0; i < set->n && top != cwd; i++)
			if ((set->v[i].flags & P_DENY_READ) &&
			    fs_under(set->v[i].path, project) &&
			    strcmp(project, cwd) != 0) {
				snprintf(why, whylen, "the working directory: "
				    "the git work tree %s holds a hidden path "
				    "(%s)", project, set->v[i].path);
				top = cwd;
			}
	}
	return (*ws = strdup(top)) == NULL ? -1 : 0;
}

/*
 * No sound policy for the working directory or the workspace: "/"
 * (everything writable) or a path the policy hides (the home directory by
 * default) -- both are re-exposed, which would undo the hiding.  The
 * workspace found from a git work tree is never one of these
 * (fs_workspace); $PISBX_WORKSPACE is held to the same rule as cwd.
 */
static int
fs_refuse_cwd(const struct fs_set *set, const struct fs_plan *plan,
    const char *cwd, int deny_read_set)
{
	const char	*ws = plan->workspace;
	size_t		 i;

	if (fs_root_of(plan, "/") != NULL) {
		log_warnx("refusing to run with / as a writable directory "
		    "(the working directory, PISBX_WORKSPACE, or "
		    "filesystem.allowWrite): the whole machine would be "
		    "writable; cd to a project directory, or name the "
		    "directories to write in filesystem.allowWrite");
		return EXIT_SETUP;
	}
	for (i = 0; i < set->n; i++) {
		if (!(set->v[i].flags & P_DENY_READ))
			continue;
		if (strcmp(set->v[i].path, cwd) == 0) {
			log_warnx("refusing to run in %s: the policy hides it "
			    "(filesystem.denyRead%s), and the working "
			    "directory would expose it, with every secret in "
			    "it; cd to a project directory below it, or set "
			    "filesystem.denyRead to the secrets only (e.g. "
			    "[\"~/.ssh\", \"~/.aws\"])", cwd, deny_read_set ?
			    "" : " defaults to the home directory");
			return EXIT_SETUP;
		}
		if (ws != NULL && strcmp(set->v[i].path, ws) == 0) {
			log_warnx("PISBX_WORKSPACE=%s: the policy hides it "
			    "(filesystem.denyRead%s), so it cannot be the "
			    "workspace: that would expose every secret in it; "
			    "name the project's directory, or set "
			    "filesystem.denyRead to the secrets only (e.g. "
			    "[\"~/.ssh\", \"~/.aws\"])", ws, deny_read_set ?
			    "" : " defaults to the home directory");
			return EXIT_SETUP;
		}
	}
	return 0;
}

/*
 * Files the trusted config and the command line name, which pisbx reads
 * on the host while the command runs or later: protected like the config.
 */
static int
fs_trusted(struct fs_set *set, const struct config *conf,
    const struct fs_inputs *in, const char *home)
{
	if (conf->hosts_file != NULL && fs_set_add_resolved(set,
	    conf->hosts_file, P_DENY_WRITE, "the proxy (resolver.hostsFile)",
	    in->cwd, home) == -1)
		return -1;
	if (conf->review_socket != NULL && fs_set_add_resolved(set,
	    conf->review_socket, P_DENY_WRITE, "pisbx-run (review.socket)",
	    in->cwd, home) == -1)
		return -1;
	if (in->supervisor_socket != NULL &&
	    in->supervisor_socket[0] == '/' && fs_set_add_resolved(set,
	    in->supervisor_socket, P_DENY_WRITE,
	    "pisbx-run (PISBX_SUPERVISOR_SOCKET)", in->cwd, home) == -1)
		return -1;
	if (in->access_log != NULL && strcmp(in->access_log, "-") != 0 &&
	    fs_set_add_resolved(set, in->access_log, P_DENY_WRITE,
	    "the proxy (the access log)", in->cwd, home) == -1)
		return -1;
	if (in->report != NULL && fs_set_add_resolved(set, in->report,
	    P_DENY_WRITE, "pisbx-run (--report)", in->cwd, home) == -1)
		return -1;
	/* A password: neither readable nor replaceable from the sandbox. */
	if (conf->parent != NULL && conf->parent->cred_file != NULL &&
	    fs_set_add_resolved(set, conf->parent->cred_file, P_DENY_READ |
	    P_DENY_WRITE, "the proxy (network.parentProxy.credentialsFile)",
	    in->cwd, home) == -1)
		return -1;
	return 0;
}

/*
 * The directories of $PATH outside the project (the workspace, or the
 * working directory with allowWrite), resolved: ~/.local/bin, ~/bin...;
 * the user's shell runs what is there.  Inside the project they are its
 * own (.venv/bin, node_modules/.bin), which its builds write.
 */
static int
fs_path_list(const char *path, const char *project, struct strlist *out)
{
	char	*copy, *dir, *save = NULL, *p;
	int	 rc = 0;

	if (path == NULL || (copy = strdup(path)) == NULL)
		return path == NULL ? 0 : -1;
	for (dir = strtok_r(copy, ":", &save); dir != NULL && rc == 0;
	    dir = strtok_r(NULL, ":", &save)) {
		if (dir[0] != '/')
			continue;
		if ((p = fs_resolve(dir, project, NULL)) == NULL) {
			rc = -1;
			break;
		}
		if (!fs_under(p, project))
			rc = fs_strv_add(&out->v, &out->n, p);
		free(p);
	}
	free(copy);
	return rc;
}

/* Protect the directories of $PATH outside the project in a writable root. */
static int
fs_path_dirs(struct fs_set *set, const struct fs_plan *plan,
    const struct strlist *pathdirs)
{
	size_t	i;

	for (i = 0; i < pathdirs->n; i++)
		if (fs_root_of(plan, pathdirs->v[i]) != NULL &&
		    fs_set_add(set, pathdirs->v[i], P_DENY_WRITE,
		    "the shell (a directory on $PATH)") == -1)
			return -1;
	return 0;
}

/*
 * Whether path would be readable by the set so far: the deepest entry at
 * or above it that says anything about reading says so (at one path,
 * allowing beats denying, as in fs_rules).
 */
static int
fs_visible(const struct fs_set *set, const char *path)
{
	size_t	 i, best = 0, len;
	int	 f, vis = 1;

	for (i = 0; i < set->n; i++) {
		f = set->v[i].flags;
		if (!(f & (P_DENY_READ | P_ALLOW_READ | P_ALLOW_WRITE)) ||
		    !fs_under(path, set->v[i].path))
			continue;
		len = strlen(set->v[i].path);
		if (len < best)
			continue;
		best = len;
		vis = (f & (P_ALLOW_READ | P_ALLOW_WRITE)) != 0;
	}
	return vis;
}

/*
 * Whether a config list names path itself or, with inside, a path inside
 * it (the user asked for it in particular), else a directory above it
 * (the user's entry covers it).  Relative entries start at proj; patterns
 * are fsglob.c's (what they match is in the set once expanded).
 */
static int
fs_list_meets(const struct strlist *l, const char *path, int inside,
    const char *proj, const char *home)
{
	char	*p;
	size_t	 i;
	int	 hit;

	for (i = 0; i < l->n; i++) {
		if (glob_is_pattern(l->v[i]) ||
		    (p = fs_resolve(l->v[i], proj, home)) == NULL)
			continue;
		hit = inside ? fs_under(p, path) : fs_under(path, p);
		free(p);
		if (hit)
			return 1;
	}
	return 0;
}

/* filesystem.toolchains: each existing place, read-only, where hidden. */
static int
fs_toolchains(struct fs_set *set, const struct config *conf,
    const char *home, const char *proj)
{
	struct stat	 st;
	char		*p, *r;
	size_t		 i;
	int		 rc = 0;

	for (i = 0; i < sizeof(fs_toolchain_paths) /
	    sizeof(*fs_toolchain_paths) && rc == 0; i++) {
		if (!(conf->fs_toolchains & (1U << fs_toolchain_paths[i].which)))
			continue;
		if ((p = fs_join(home, fs_toolchain_paths[i].rel)) == NULL)
			return -1;
		r = lstat(p, &st) == 0 ? fs_resolve(p, proj, NULL) : NULL;
		free(p);
		if (r == NULL)
			continue;
		/* The user's own denyRead at it or inside it wins. */
		if (!fs_visible(set, r) && !(conf->fs_deny_read_set &&
		    fs_list_meets(&conf->deny_read, r, 1, proj, home)))
			rc = fs_set_add(set, r, P_ALLOW_READ, NULL);
		free(r);
	}
	return rc;
}

/*
 * filesystem.caches: one writable directory per project,
 * ~/.cache/pisbx/<name>-<hash of the project's path>, made here when
 * missing; env.c points each tool at its own directory in it.  A tool
 * home holds code (cargo's config.toml and extracted crates, Go's
 * toolchains, npx's packages, gradle's init.d): shared, one project's
 * sandbox would plant what another project's build runs, and that
 * build's output runs on the host.  Beside it, <dir>.workspace names
 * the project (for the person pruning the caches); the sandbox cannot
 * write it.  Every directory must be a real one of ours: a link there
 * (planted by an earlier run that could write the home) would make its
 * target writable.
 */
static int
fs_caches(struct fs_set *set, struct fs_plan *plan, const struct config *conf,
    const char *home)
{
	char	*top = NULL, *dir = NULL, *rec = NULL, *line = NULL;
	char	 name[128];
	int	 rc = -1, fd;

	if (conf->fs_caches == 0)
		return 0;
	if ((top = fs_join(home, ".cache")) == NULL)
		return -1;
	if (fs_cache_mkdir(top) == -1)
		goto none;
	free(top);
	if ((top = fs_join(home, FS_CACHE_DIR)) == NULL)
		return -1;
	if (fs_cache_mkdir(top) == -1)
		goto none;
	if (fs_cache_name(plan->project, name, sizeof(name)) == -1 ||
	    asprintf(&dir, "%s/%s", top, name) == -1 ||
	    asprintf(&rec, "%s/%s.workspace", top, name) == -1) {
		dir = rec = NULL;
		goto done;
	}
	/* The record first: a directory without one is not ours. */
	if ((fd = open(rec, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) != -1) {
		if (dprintf(fd, "%s\n", plan->project) < 0) {
			close(fd);
			unlink(rec);
			goto none;
		}
		close(fd);
	} else if (errno != EEXIST ||
	    (line = fs_read_line(rec, NULL)) == NULL ||
	    strcmp(line, plan->project) != 0) {
		log_warnx("caches: %s does not name %s: no tool caches this "
		    "run (remove it and %s to start over)", rec, plan->project,
		    dir);
		goto none;
	}
	if (fs_cache_mkdir(dir) == -1)
		goto none;
	if (fs_set_add(set, dir, P_ALLOW_READ | P_ALLOW_WRITE, NULL) == -1)
		goto done;
	plan->cache_dir = dir;
	dir = NULL;
none:
	rc = 0;
done:
	free(top);
	free(dir);
	free(rec);
	free(line);
	return rc;
}

/*
 * Make a cache directory (0700) when missing; -1 (said why) when it is
 * not a real directory of ours.
 */
static int
fs_cache_mkdir(const char *p)
{
	struct stat	st;

	if ((mkdir(p, 0700) == -1 && errno != EEXIST) ||
	    lstat(p, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != getuid()) {
		log_warnx("caches: %s is not a directory of ours: no tool "
		    "caches this run", p);
		return -1;
	}
	return 0;
}

/*
 * A project's cache directory name: its last component, in letters a
 * shell needs no quotes for, and 128 bits of SHA-256 of its path.
 */
static int
fs_cache_name(const char *project, char *buf, size_t len)
{
	uint8_t		 md[SHA256_LEN];
	unsigned int	 i;
	const char	*base = strrchr(project, '/');
	char		 b[33];
	size_t		 n;

	base = base != NULL && base[1] != '\0' ? base + 1 : "root";
	for (n = 0; base[n] != '\0' && n < sizeof(b) - 1; n++)
		b[n] = isalnum((unsigned char)base[n]) || base[n] == '-' ||
		    base[n] == '_' || (base[n] == '.' && n > 0) ? base[n] : '_';
	b[n] = '\0';
	sha256(project, strlen(project), md);
	if (len < n + 1 + 32 + 1)
		return -1;
	n = (size_t)snprintf(buf, len, "%s-", b);
	for (i = 0; i < 16; i++)
		n += (size_t)snprintf(buf + n, len - n, "%02x", md[i]);
	return 0;
}

/* Secret stores: hidden where readable, unless named themselves. */
static int
fs_secrets_hide(struct fs_set *set, const struct config *conf,
    const char *home, const char *proj)
{
	struct fs_listing	 ls;
	char			*p;
	size_t			 i;
	int			 rc = 0;

	/* Most are missing: the home is read once, not asked for each. */
	memset(&ls, 0, sizeof(ls));
	fs_listing_read(&ls, home, strlen(home));
	for (i = 0; i < sizeof(fs_secrets) / sizeof(*fs_secrets) && rc == 0;
	    i++) {
		if (fs_listing_has(&ls, fs_secrets[i],
		    strcspn(fs_secrets[i], "/")) == 0)
			continue;
		if ((p = fs_join(home, fs_secrets[i])) == NULL) {
			rc = -1;
			break;
		}
		rc = fs_secret_at(set, conf, home, proj, p);
		free(p);
	}
	fs_listing_clear(&ls);
	return rc;
}

/*
 * One secret store's path (its "*" components each every entry of the
 * directory there): hidden when it exists, would be readable, and is
 * not named.  A directory of more than FS_STAR_MAX entries is hidden
 * whole rather than looked through in part.
 */
static int
fs_secret_at(struct fs_set *set, const struct config *conf,
    const char *home, const char *proj, const char *path)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	const char	*star;
	char		*dir, *r, *next;
	size_t		 n = 0;
	int		 rc = 0;

	if ((star = strstr(path, "/*/")) != NULL ||
	    ((star = strrchr(path, '/')) != NULL && strcmp(star, "/*") == 0)) {
		if ((dir = strndup(path, (size_t)(star - path))) == NULL)
			return -1;
		if ((d = opendir(dir)) == NULL) {
			free(dir);
			return 0;
		}
		while (rc == 0 && (de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			if (++n > FS_STAR_MAX) {
				log_warnx("%s: more than %d entries: hidden "
				    "whole (the secrets in them cannot all be "
				    "looked for)", dir, FS_STAR_MAX);
				rc = fs_secret_at(set, conf, home, proj, dir);
				break;
			}
			if (asprintf(&next, "%s/%s%s", dir, de->d_name,
			    star + 2) == -1)
				rc = -1;
			else {
				rc = fs_secret_at(set, conf, home, proj, next);
				free(next);
			}
		}
		closedir(d);
		free(dir);
		return rc;
	}
	if (lstat(path, &st) == -1 || (r = fs_resolve(path, proj, NULL)) ==
	    NULL)
		return 0;
	if (fs_visible(set, r) &&
	    !fs_list_meets(&conf->allow_read, r, 1, proj, home) &&
	    !fs_list_meets(&conf->allow_write, r, 1, proj, home))
		rc = fs_set_add(set, r, P_DENY_READ, NULL);
	free(r);
	return rc;
}

/*
 * The caller's private entries outside the home: the runtime directory,
 * and each entry of the shared temporary directories owned by the caller,
 * not a symbolic link, and closed to group and others (mode & 077 == 0).
 * Left visible: one that is, or holds, the working directory, the
 * project, the workspace or a writable root the config names -- the run
 * works there (a project made by mktemp -d).  The run's own directory is
 * hidden with the rest and shown again below, as are the $PATH
 * directories in one and what allowRead names.  With allowAllUnixSockets
 * directories stay (the sockets the command may then reach live in
 * them); files do not.  A shared directory of more than FS_TMP_MAX
 * entries is hidden whole, the paths the run uses shown again: its
 * private entries cannot all be looked for.
 */
static int
fs_private_hide(struct fs_set *set, const struct fs_plan *plan,
    const struct config *conf, const struct fs_inputs *in,
    const struct strlist *pathdirs, const char *home, const char *proj)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	const char	**keep, *env;
	char		*rt[2] = { NULL, NULL }, *p, real[PATH_MAX];
	char		 seen[PATH_MAX] = "";
	size_t		 i, n, nkeep = 0, nrt = 0;
	int		 dirs = !conf->allow_all_unix_sockets, rc = -1, r;
	uid_t		 uid = getuid();

	if ((keep = reallocarray(NULL, set->n + 3, sizeof(*keep))) == NULL)
		return -1;
	keep[nkeep++] = in->cwd;
	keep[nkeep++] = proj;
	if (plan->workspace != NULL)
		keep[nkeep++] = plan->workspace;
	for (i = 0; i < set->n; i++)
		if ((set->v[i].flags & P_ALLOW_WRITE) &&
		    strcmp(set->v[i].path, in->tmpdir) != 0)
			keep[nkeep++] = set->v[i].path;

	/* $XDG_RUNTIME_DIR, and /run/user/<uid> when it is another. */
	if ((env = getenv("XDG_RUNTIME_DIR")) != NULL && env[0] == '/' &&
	    io_realpath(env, real) != NULL) {
		if ((rt[nrt] = strdup(real)) == NULL)
			goto done;
		nrt++;
	}
	snprintf(seen, sizeof(seen), "/run/user/%u", (unsigned int)uid);
	if (io_realpath(seen, real) != NULL && (nrt == 0 ||
	    strcmp(rt[0], real) != 0)) {
		if ((rt[nrt] = strdup(real)) == NULL)
			goto done;
		nrt++;
	}
	seen[0] = '\0';
	for (i = 0; i < nrt; i++) {
		if (lstat(rt[i], &st) == -1 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != uid || (st.st_mode & 077) != 0 || !dirs)
			continue;
		if (fs_private_at(set, rt[i], 0, keep, nkeep, pathdirs) == -1)
			goto done;
	}

	/* One readdir(3) of each, and an fstatat(2) per file or directory. */
	for (i = 0; i < sizeof(fs_shared_tmp) / sizeof(*fs_shared_tmp); i++) {
		if (io_realpath(fs_shared_tmp[i], real) == NULL ||
		    strcmp(real, "/") == 0 || strcmp(real, seen) == 0 ||
		    (d = opendir(real)) == NULL)
			continue;
		snprintf(seen, sizeof(seen), "%s", real);
		n = 0;
		r = 0;
		while (r == 0 && (de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			if (++n > FS_TMP_MAX)
				break;
			/*
			 * What readdir says an entry is spares the stat of
			 * every socket, link and fifo other tools leave in
			 * /tmp (hundreds on a busy machine): only a regular
			 * file or a directory can be hidden.
			 */
			if (de->d_type != DT_UNKNOWN && de->d_type != DT_REG &&
			    (de->d_type != DT_DIR || !dirs))
				continue;
			if (fstatat(dirfd(d), de->d_name, &st,
			    AT_SYMLINK_NOFOLLOW) == -1 || st.st_uid != uid ||
			    (st.st_mode & 077) != 0 ||
			    !(S_ISREG(st.st_mode) ||
			    (S_ISDIR(st.st_mode) && dirs &&
			    !fs_private_sockets(dirfd(d), de->d_name))))
				continue;
			if (asprintf(&p, "%s/%s", real, de->d_name) == -1) {
				r = -1;
				break;
			}
			r = fs_private_at(set, p, 0, keep, nkeep, pathdirs);
			free(p);
		}
		closedir(d);
		if (r == -1)
			goto done;
		if (n > FS_TMP_MAX) {
			log_warnx("%s: more than %d entries: hidden whole but "
			    "for the paths this run uses (its private files "
			    "cannot all be looked for); to show it, add \"%s\" "
			    "to filesystem.allowRead", real, FS_TMP_MAX, real);
			if (fs_private_at(set, real, 1, keep, nkeep,
			    pathdirs) == -1)
				goto done;
		}
	}
	rc = fs_private_secrets(set, conf, rt, nrt, home, proj);
done:
	free(rt[0]);
	free(rt[1]);
	free(keep);
	return rc;
}

/*
 * Whether a private directory holds sockets only, a few (tmux-<uid>, an
 * ssh-agent's ssh-XXXX), or nothing: left as it is, there is nothing to
 * read in it, and the guard decides what the command reaches (with a
 * refusal that names the key, and hostIPC's retry) rather than a hidden
 * name that is not there.
 */
static int
fs_private_sockets(int dirfd, const char *name)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	int		 fd, n = 0, only = 1;

	if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return 0;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	while (only && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		/* readdir's type where it gives one, else a stat. */
		only = ++n <= FS_SOCKDIR_MAX && (de->d_type == DT_UNKNOWN ?
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISSOCK(st.st_mode) : de->d_type == DT_SOCK);
	}
	closedir(d);
	return only;
}

/*
 * Hide one private entry (whole: a shared directory as a whole), unless
 * the run works there or the config shows it; show the $PATH directories
 * in it again.
 */
static int
fs_private_at(struct fs_set *set, const char *path, int whole,
    const char *const *keep, size_t nkeep, const struct strlist *pathdirs)
{
	const struct fs_entry	*e;
	size_t			 i;

	for (i = 0; i < nkeep; i++)
		if (whole ? strcmp(keep[i], path) == 0 :
		    fs_under(keep[i], path))
			return 0;
	if ((e = fs_set_find(set, path, strlen(path))) != NULL &&
	    (e->flags & (P_ALLOW_READ | P_ALLOW_WRITE)))
		return 0;
	if (fs_set_add(set, path, P_DENY_READ, NULL) == -1)
		return -1;
	for (i = 0; i < pathdirs->n; i++)
		if (fs_under(pathdirs->v[i], path) &&
		    fs_set_add(set, pathdirs->v[i], P_ALLOW_READ, NULL) == -1)
			return -1;
	return 0;
}

/*
 * The known secret stores outside the home, hidden like those in it
 * (fs_secret_at) where they would still be readable: the runtime
 * directory shown (allowRead, allowAllUnixSockets), a ticket cache that
 * is not private.
 */
static int
fs_private_secrets(struct fs_set *set, const struct config *conf,
    char *const *rt, size_t nrt, const char *home, const char *proj)
{
	const char	*env;
	char		*p;
	size_t		 i, j;
	int		 rc = 0;

	for (i = 0; i < nrt && rc == 0; i++) {
		for (j = 0; j < sizeof(fs_runtime_secrets) /
		    sizeof(*fs_runtime_secrets) && rc == 0; j++) {
			if ((p = fs_join(rt[i], fs_runtime_secrets[j])) == NULL)
				return -1;
			rc = fs_secret_at(set, conf, home, proj, p);
			free(p);
		}
	}
	for (i = 0; i < sizeof(fs_env_secrets) / sizeof(*fs_env_secrets) &&
	    rc == 0; i++) {
		if ((env = getenv(fs_env_secrets[i])) == NULL)
			continue;
		if (strncmp(env, "FILE:", 5) == 0)
			env += 5;
		else if (strncmp(env, "DIR:", 4) == 0)
			env += 4;
		if (env[0] == '/' && strstr(env, "*") == NULL)
			rc = fs_secret_at(set, conf, home, proj, env);
	}
	if (rc == 0) {
		if (asprintf(&p, "/tmp/krb5cc_%u", (unsigned int)getuid()) ==
		    -1)
			return -1;
		rc = fs_secret_at(set, conf, home, proj, p);
		free(p);
	}
	return rc;
}

/*
 * The JDKs a command may run ($JAVA_HOME, the java on $PATH, the
 * system's and the version managers' in fs_jdk_dirs): each one's
 * net.properties shown as a copy with the sandbox's proxy added
 * (fsfilter_javanet).  The JVM reads no *_PROXY variable; it reads
 * JAVA_TOOL_OPTIONS too, but then prints "Picked up JAVA_TOOL_OPTIONS"
 * on stderr, every time (newuser B11).
 */
static int
fs_java(struct fs_set *set, struct fs_plan *plan, const struct fs_inputs *in,
    const char *home, const char *proj)
{
	struct dirent	*de;
	DIR		*d;
	const char	*env;
	char		*path, *dir, *save = NULL, *p, *bin, real[PATH_MAX];
	size_t		 i, n;
	int		 rc = 0;

	if (in->rundir == NULL)
		return 0;
	if ((env = getenv("JAVA_HOME")) != NULL && env[0] == '/')
		rc = fs_java_at(set, plan, in->rundir, env);
	/* The java on $PATH: its home is above its real bin/java. */
	if (rc == 0 && in->path != NULL) {
		if ((path = strdup(in->path)) == NULL)
			return -1;
		for (dir = strtok_r(path, ":", &save); dir != NULL && rc == 0;
		    dir = strtok_r(NULL, ":", &save)) {
			if (dir[0] != '/')
				continue;
			if (asprintf(&p, "%s/java", dir) == -1) {
				rc = -1;
				break;
			}
			if (io_realpath(p, real) != NULL &&
			    (bin = strstr(real, "/bin/java")) != NULL &&
			    strcmp(bin, "/bin/java") == 0) {
				*bin = '\0';
				rc = fs_java_at(set, plan, in->rundir, real);
			}
			free(p);
		}
		free(path);
	}
	for (i = 0; rc == 0 && i < sizeof(fs_jdk_dirs) / sizeof(*fs_jdk_dirs);
	    i++) {
		if ((fs_jdk_dirs[i][0] == '~' && home == NULL) ||
		    (p = fs_resolve(fs_jdk_dirs[i], proj, home)) == NULL)
			continue;
		if ((d = opendir(p)) == NULL) {
			free(p);
			continue;
		}
		n = 0;
		while (rc == 0 && (de = readdir(d)) != NULL &&
		    ++n <= FS_STAR_MAX) {
			if (de->d_name[0] == '.')
				continue;
			if (asprintf(&dir, "%s/%s", p, de->d_name) == -1)
				rc = -1;
			else {
				rc = fs_java_at(set, plan, in->rundir, dir);
				free(dir);
			}
		}
		closedir(d);
		free(p);
	}
	return rc;
}

/* One JDK's home (JDK 9 and later: conf/; 8: jre/lib/ or lib/). */
static int
fs_java_at(struct fs_set *set, struct fs_plan *plan, const char *rundir,
    const char *jdk)
{
	static const char *const rel[] = {
		"conf/net.properties", "jre/lib/net.properties",
		"lib/net.properties",
	};
	const struct fs_entry	*e;
	struct stat		 st;
	char			*p, *copy, *note, real[PATH_MAX];
	size_t			 i;
	int			 rc = 0;

	for (i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
		if ((p = fs_join(jdk, rel[i])) == NULL)
			return -1;
		if (stat(p, &st) == -1 || !S_ISREG(st.st_mode) ||
		    io_realpath(p, real) == NULL) {
			free(p);
			continue;
		}
		free(p);
		/* Done (a JDK named twice), or hidden (in the home). */
		if (((e = fs_set_find(set, real, strlen(real))) != NULL &&
		    (e->source != NULL || (e->flags & P_DENY_READ))) ||
		    !fs_visible(set, real))
			return 0;
		if ((copy = fsfilter_copy(FS_FILTER_JAVANET, real, rundir,
		    NULL, NULL)) == NULL)
			return 0;
		if (asprintf(&note, "a copy of %s, the sandbox's proxy added",
		    real) == -1 || fs_own(plan, note) == NULL ||
		    fs_filtered_at(set, real, copy, note) == -1)
			rc = -1;
		else
			plan->njava++;
		free(copy);
		return rc;
	}
	return 0;
}

/*
 * The settings files shown as filtered copies (fs_filtered, and git's
 * $XDG_CONFIG_HOME/git/config, which git reads instead of
 * ~/.config/git/config when XDG_CONFIG_HOME is set): each one's copy.
 */
static int
fs_filtered_show(struct fs_set *set, struct fs_plan *plan,
    const struct config *conf, const char *home, const char *proj,
    const char *rundir)
{
	const struct fs_filtered	*f;
	const char			*xdg;
	char				*p;
	size_t				 i;
	int				 rc;

	for (i = 0; i < sizeof(fs_filtered) / sizeof(*fs_filtered); i++) {
		f = &fs_filtered[i];
		if ((p = fs_join(home, f->rel)) == NULL)
			return -1;
		rc = fs_filtered_one(set, plan, conf, home, proj, rundir, p,
		    f->which, f->filter);
		free(p);
		if (rc == -1)
			return -1;
	}
	if ((xdg = getenv("XDG_CONFIG_HOME")) == NULL || xdg[0] != '/')
		return 0;
	if ((p = fs_join(xdg, "git/config")) == NULL)
		return -1;
	rc = fs_filtered_one(set, plan, conf, home, proj, rundir, p,
	    TOOLCHAIN_GIT, FS_FILTER_GIT);
	free(p);
	return rc;
}

/*
 * One settings file p: where it would be readable, or is re-exposed from
 * the hidden home, its copy (written in the run directory) is bound over
 * it.  Without a run directory no copy can be made: the file stays
 * hidden, or is hidden.  The mount point is the name itself, its
 * directory resolved: a ~/.gitconfig that links to a dotfiles repository
 * is still found at ~/.gitconfig in a hidden home.
 */
static int
fs_filtered_one(struct fs_set *set, struct fs_plan *plan,
    const struct config *conf, const char *home, const char *proj,
    const char *rundir, const char *p, enum fs_toolchain which,
    enum fs_filter filter)
{
	struct stat	 st;
	char		*r = NULL, *at = NULL, *copy = NULL, *dropped = NULL;
	char		*note;
	int		 rc = -1, vis, named;

	if (lstat(p, &st) == -1 || (r = fs_resolve(p, proj, NULL)) ==
	    NULL || (at = fs_resolve_dir(p)) == NULL) {
		rc = 0;
		goto done;
	}
	named = fs_list_meets(&conf->allow_read, r, 1, proj, home) ||
	    fs_list_meets(&conf->allow_write, r, 1, proj, home) ||
	    fs_list_meets(&conf->allow_read, at, 1, proj, home) ||
	    fs_list_meets(&conf->allow_write, at, 1, proj, home);
	vis = fs_visible(set, at) || fs_visible(set, r);
	if (named || (conf->fs_deny_read_set &&
	    fs_list_meets(&conf->deny_read, r, 1, proj, home)) ||
	    (fs_flags_at(set, at) & P_DENY_READ) ||
	    (fs_flags_at(set, r) & P_DENY_READ) ||
	    (!vis && !(conf->fs_toolchains & (1U << which)))) {
		rc = 0;
		goto done;
	}
	if (rundir == NULL || (copy = fsfilter_copy(filter, r, rundir, home,
	    &dropped)) == NULL) {
		/* No copy: nothing of it is shown. */
		if (vis && fs_set_add(set, at, P_DENY_READ, NULL) == -1)
			goto done;
		rc = 0;
		goto done;
	}
	if (asprintf(&note, "a filtered copy of %s%s%s", r, dropped != NULL ?
	    ", without " : "", dropped != NULL ? dropped : "") == -1 ||
	    fs_own(plan, note) == NULL)
		goto done;
	/*
	 * At the name, and at the file a link there points to when that is
	 * readable too (~/.gitconfig -> dotfiles/gitconfig in a home the
	 * config re-exposes).
	 */
	if (fs_filtered_at(set, at, copy, note) == -1 ||
	    (strcmp(r, at) != 0 && fs_visible(set, r) &&
	    fs_filtered_at(set, r, copy, note) == -1))
		goto done;
	rc = 0;
done:
	free(r);
	free(at);
	free(copy);
	free(dropped);
	return rc;
}

/* The set's entry at path shows the copy (a filtered settings file). */
static int
fs_filtered_at(struct fs_set *set, const char *path, const char *copy,
    const char *note)
{
	struct fs_entry	*e;
	size_t		 j;

	if (fs_set_add(set, path, P_ALLOW_READ, NULL) == -1)
		return -1;
	for (j = 0; j < set->n; j++)
		if (strcmp(set->v[j].path, path) == 0)
			break;
	e = &set->v[j];
	free(e->source);
	if ((e->source = strdup(copy)) == NULL)
		return -1;
	e->note = note;
	return 0;
}

/* The flags of the set's entry at path, 0 when none. */
static int
fs_flags_at(const struct fs_set *set, const char *path)
{
	size_t	i;

	for (i = 0; i < set->n; i++)
		if (strcmp(set->v[i].path, path) == 0)
			return set->v[i].flags;
	return 0;
}

/* path with its directory resolved, its last component as it is. */
static char *
fs_resolve_dir(const char *path)
{
	char	 real[PATH_MAX], *dir, *slash, *out;

	if ((dir = strdup(path)) == NULL)
		return NULL;
	if ((slash = strrchr(dir, '/')) == NULL || slash == dir ||
	    slash[1] == '\0') {
		free(dir);
		return NULL;
	}
	*slash = '\0';
	out = io_realpath(dir, real) != NULL ? fs_join(real, slash + 1) : NULL;
	free(dir);
	return out;
}

/* Keep a malloc'ed text for the plan's lifetime: it, or NULL (freed). */
static const char *
fs_own(struct fs_plan *plan, char *text)
{
	char	**v;

	if ((v = reallocarray(plan->owned, plan->nowned + 1,
	    sizeof(*v))) == NULL) {
		free(text);
		return NULL;
	}
	plan->owned = v;
	return plan->owned[plan->nowned++] = text;
}

/* A path a pattern covers (fs_glob_expand): one more entry of the set. */
static int
fs_glob_hit(void *arg, const char *path, enum fs_glob_kind kind,
    const char *pattern)
{
	static const int	flags[] = {
		P_DENY_READ, P_ALLOW_READ, P_DENY_WRITE
	};

	(void)pattern;
	return fs_set_add(arg, path, flags[kind] | P_PATTERN,
	    kind == FS_GLOB_DENY_WRITE ? "filesystem.denyWrite" : NULL);
}

/* Set entries by depth, shallow first: the order rules apply in. */
static int
fs_entry_cmp(const void *a, const void *b)
{
	const struct fs_entry *const *ea = a, *const *eb = b;
	int	da = fs_depth((*ea)->path), db = fs_depth((*eb)->path);

	if (da != db)
		return da < db ? -1 : 1;
	return strcmp((*ea)->path, (*eb)->path);
}

/*
 * One rule per existing path that changes what the sandbox sees, made
 * shallow first so each path knows what the deepest rule above it did:
 * below a hidden directory there is nothing to hide again (and nothing to
 * mount on), and a path a pattern write-protects stays hidden there.
 */
static int
fs_rules(struct fs_plan *plan, const struct fs_set *set)
{
	const struct fs_entry	**ord;
	struct fs_listing	  ls;
	struct stat		  st;
	size_t			  i, j, k, dl, more;
	int			  f, rc = -1;

	if ((ord = reallocarray(NULL, set->n + 1, sizeof(*ord))) == NULL)
		return -1;
	for (i = 0; i < set->n; i++)
		ord[i] = &set->v[i];
	qsort(ord, set->n, sizeof(*ord), fs_entry_cmp);
	memset(&ls, 0, sizeof(ls));
	for (k = 0; k < set->n; k++) {
		struct fs_rule	*r, *nv;
		const char	*path = ord[k]->path;
		int		 hidden_above = 0, writable_above = 0;
		int		 hidden_at = 0, wdepth = -1, writable = 0;

		f = ord[k]->flags;
		if (f & P_DENY_WRITE) {
			const char **wv;

			/* Each path of the set once: no need to look. */
			if (fs_strv_push(&plan->guarded, &plan->nguarded,
			    path) == -1)
				goto done;
			if ((wv = reallocarray(plan->guarded_why,
			    plan->nguarded, sizeof(*wv))) == NULL)
				goto done;
			plan->guarded_why = wv;
			wv[plan->nguarded - 1] = ord[k]->why != NULL ?
			    ord[k]->why : "pisbx";
		}
		/*
		 * Entries of one depth come sorted, so those of one directory
		 * together: four or more, and the directory is read once for
		 * all of them (the mandatory names of a writable root, those
		 * below its .config, .git...).
		 */
		dl = (size_t)(strrchr(path, '/') - path);
		if (k == 0 || strlen(ls.dir) != dl ||
		    strncmp(ls.dir, path, dl) != 0) {
			for (more = k + 1; more < set->n && more < k + 4 &&
			    strncmp(ord[more]->path, path, dl + 1) == 0 &&
			    strchr(ord[more]->path + dl + 1, '/') == NULL;
			    more++)
				;
			if (more == k + 4)
				fs_listing_read(&ls, path, dl);
			else {
				fs_listing_clear(&ls);
				snprintf(ls.dir, sizeof(ls.dir), "%.*s", (int)dl,
				    path);
			}
		}
		if (fs_listing_has(&ls, path + dl + 1, strlen(path + dl + 1)) ==
		    0 || lstat(path, &st) == -1)
			continue;
		/* The entries above it: "/", then each directory down. */
		for (j = 1; path[j - 1] != '\0'; j++) {
			const struct fs_entry *e;

			if (j == 1)
				e = path[1] != '\0' ? fs_set_find(set, "/", 1) :
				    NULL;
			else if (path[j] == '/')
				e = fs_set_find(set, path, j);
			else
				continue;
			if (e == NULL)
				continue;
			if (e->flags & P_DENY_READ)
				hidden_above = 1;
			if (e->flags & P_ALLOW_WRITE)
				writable_above = 1;
			/* Writing: the deepest say above, denyWrite first. */
			if ((e->flags & (P_ALLOW_WRITE | P_DENY_WRITE)) &&
			    fs_depth(e->path) > wdepth) {
				wdepth = fs_depth(e->path);
				writable = !(e->flags & P_DENY_WRITE);
			}
		}
		/* The deepest rule above: made last among them. */
		for (i = plan->nrules; i-- > 0;) {
			if (fs_under(path, plan->rules[i].path) &&
			    strcmp(path, plan->rules[i].path) != 0) {
				hidden_at = plan->rules[i].action == FS_HIDE;
				break;
			}
		}
		if ((nv = reallocarray(plan->rules, plan->nrules + 1,
		    sizeof(*nv))) == NULL)
			goto done;
		plan->rules = nv;
		r = &nv[plan->nrules];
		memset(r, 0, sizeof(*r));
		if (ord[k]->source != NULL) {
			/* A filtered copy: bound wherever it is, read-only. */
			if ((r->source = strdup(ord[k]->source)) == NULL)
				goto done;
			r->note = ord[k]->note;
			r->action = FS_EXPOSE_RO;
		} else if (f & P_DENY_WRITE) {
			if ((f & P_DENY_READ) && !(f & P_ALLOW_READ)) {
				if (hidden_at)
					continue;
				r->action = FS_HIDE;
			} else if ((f & P_PATTERN) && hidden_at)
				continue;
			else if (writable_above || hidden_above)
				r->action = FS_EXPOSE_RO;
			else
				continue;
		} else if (f & P_ALLOW_WRITE)
			r->action = FS_EXPOSE_RW;
		else if (f & P_ALLOW_READ) {
			/*
			 * Reading is one question, writing another: a path
			 * shown again (the working directory, a worktree's git
			 * directories, a socket, allowRead) needs a mount only
			 * where a hidden directory covers it, and then keeps
			 * what the writing rules above it say.  Bound
			 * read-only inside a writable root, it would take the
			 * root's writes away there (a command run in src/ of a
			 * project in the hidden home could not write src/).
			 */
			if (!hidden_at)
				continue;
			r->action = writable && !(f & P_SHOW_RO) ?
			    FS_EXPOSE_RW : FS_EXPOSE_RO;
		} else if (f & P_DENY_READ) {
			if (hidden_at)
				continue;
			r->action = FS_HIDE;
		} else
			continue;
		if ((r->path = strdup(path)) == NULL) {
			free(r->source);
			goto done;
		}
		r->is_dir = S_ISDIR(st.st_mode);
		r->mode = st.st_mode & 07777;
		plan->nrules++;
	}
	qsort(plan->rules, plan->nrules, sizeof(*plan->rules), fs_rule_cmp);
	rc = 0;
done:
	fs_listing_clear(&ls);
	free(ord);
	return rc;
}

/*
 * The base of the run directories hidden, even under an allowWrite of
 * $TMPDIR: no command sees, changes or plants anything in another run's
 * directory (rundir.c); ours seen read-only, mounted so (git-proxy,
 * ssh_config; its tmp/ is the writable TMPDIR).
 */
static int
fs_rundir(struct fs_set *set, const char *rundir)
{
	char	*base;
	int	 rc;

	if ((base = strdup(rundir)) == NULL)
		return -1;
	*strrchr(base, '/') = '\0';
	rc = base[0] == '\0' ? 0 : fs_set_add(set, base, P_DENY_READ, NULL);
	free(base);
	if (rc == -1 || fs_set_add(set, rundir, P_ALLOW_READ | P_SHOW_RO,
	    NULL) == -1)
		return -1;
	return 0;
}

int
fs_plan_build(struct fs_plan *plan, const struct config *conf,
    const struct fs_inputs *in)
{
	struct fs_set	 set = { NULL, 0, NULL, 0 };
	struct strlist	 pathdirs = { NULL, 0 };
	struct stat	 st;
	char		*p = NULL, *home_real = NULL;
	const char	*env, *cwd = in->cwd, *proj;
	size_t		 i, nroots;
	int		 rc = -1;

	memset(plan, 0, sizeof(*plan));
	if (in->home != NULL && in->home[0] == '/' &&
	    ((home_real = fs_resolve(in->home, cwd, NULL)) == NULL ||
	    (plan->home = strdup(home_real)) == NULL))
		goto fail;
	/* Read now: the sandbox will not see the home directory. */
	if (fs_git_global(plan, home_real) == -1)
		goto fail;
	if ((rc = fs_project(cwd, home_real, &plan->project,
	    plan->project_why, sizeof(plan->project_why))) != 0)
		goto fail;
	rc = -1;
	proj = plan->project;

	/* Reads. */
	if (conf->fs_deny_read_set) {
		if (fs_set_add_list(&set, &conf->deny_read, P_DENY_READ, proj,
		    home_real) == -1)
			goto fail;
	} else if (home_real != NULL && strcmp(home_real, "/") != 0) {
		if (fs_set_add(&set, home_real, P_DENY_READ, NULL) == -1)
			goto fail;
	}
	if (fs_set_add_list(&set, &conf->allow_read, P_ALLOW_READ, proj,
	    home_real) == -1)
		goto fail;
	if (fs_set_add(&set, cwd, P_ALLOW_READ, NULL) == -1 ||
	    fs_set_add(&set, in->exe_dir, P_ALLOW_READ | P_DENY_WRITE,
	    "pisbx (its executables)") == -1)
		goto fail;

	/* Writes: allowWrite, else the workspace. */
	if (conf->fs_allow_write_set) {
		if (fs_set_add_list(&set, &conf->allow_write, P_ALLOW_WRITE,
		    proj, home_real) == -1)
			goto fail;
	} else {
		if (fs_workspace(&set, proj, cwd, &plan->workspace,
		    plan->project_why, sizeof(plan->project_why)) == -1 ||
		    fs_set_add(&set, plan->workspace, P_ALLOW_READ |
		    P_ALLOW_WRITE, NULL) == -1)
			goto fail;
	}
	if (fs_set_add(&set, in->tmpdir, P_ALLOW_WRITE, NULL) == -1)
		goto fail;
	/*
	 * The run directory holds what the command runs or reads by name
	 * (git-proxy, the filtered copies a git config includes): shown
	 * wherever it lies (a TMPDIR in the hidden home); the base of all
	 * run directories hidden (fs_rundir).
	 */
	if (in->rundir != NULL && fs_rundir(&set, in->rundir) == -1)
		goto fail;
	if (fs_set_add_list(&set, &conf->deny_write, P_DENY_WRITE, proj,
	    home_real) == -1)
		goto fail;

	/* Toolchains seen, caches writable, in a home that is not "/". */
	if (home_real != NULL && strcmp(home_real, "/") != 0 &&
	    (fs_toolchains(&set, conf, home_real, proj) == -1 ||
	    fs_caches(&set, plan, conf, home_real) == -1))
		goto fail;

	/*
	 * The Unix sockets the command may reach (the guard compares real
	 * paths), visible even in a hidden directory.
	 */
	for (i = 0; i < conf->allow_unix_sockets.n; i++) {
		if ((p = fs_resolve(conf->allow_unix_sockets.v[i], cwd,
		    home_real)) == NULL ||
		    fs_strv_add(&plan->unix_sockets, &plan->nunix, p) == -1 ||
		    fs_set_add(&set, p, P_ALLOW_READ, NULL) == -1)
			goto fail;
		free(p);
		p = NULL;
	}

	/* Patterns: what they cover now becomes paths like the above. */
	if ((rc = fs_glob_compile(plan, conf, proj, home_real)) != 0 ||
	    (rc = fs_glob_expand(plan, fs_glob_hit, &set)) != 0)
		goto fail;
	rc = -1;

	/* The trusted config, and every place the next run looks for one. */
	if (in->config_path != NULL && fs_set_add_resolved(&set,
	    in->config_path, P_DENY_WRITE, "pisbx (the trusted config)", cwd,
	    home_real) == -1)
		goto fail;
	if ((env = getenv("PISBX_CONFIG")) != NULL && env[0] == '/' &&
	    fs_set_add_resolved(&set, env, P_DENY_WRITE,
	    "pisbx ($PISBX_CONFIG)", cwd, home_real) == -1)
		goto fail;
	if ((env = getenv("XDG_CONFIG_HOME")) != NULL && env[0] == '/')
		p = fs_join(env, "pisbx");
	else if (home_real != NULL)
		p = fs_join(home_real, ".config/pisbx");
	if (p != NULL) {
		rc = fs_set_add_resolved(&set, p, P_DENY_WRITE,
		    "pisbx (the config directory)", cwd, home_real);
		free(p);
		p = NULL;
		if (rc == -1)
			goto fail;
		rc = -1;
	}
	/* srt's ~/.srt-settings.json, the last place config_find looks. */
	if (home_real != NULL) {
		if ((p = fs_join(home_real, ".srt-settings.json")) == NULL ||
		    fs_set_add(&set, p, P_DENY_WRITE,
		    "pisbx (srt's config file)") == -1)
			goto fail;
		free(p);
		p = NULL;
	}
	if (fs_trusted(&set, conf, in, home_real) == -1)
		goto fail;
	/*
	 * Last: whatever re-exposed a parent, settings files are shown
	 * filtered and secret stores stay hidden.
	 */
	if (home_real != NULL && strcmp(home_real, "/") != 0 &&
	    (fs_filtered_show(&set, plan, conf, home_real, proj,
	    in->rundir) == -1 ||
	    fs_secrets_hide(&set, conf, home_real, proj) == -1))
		goto fail;
	if (fs_path_list(in->path, plan->workspace != NULL ?
	    plan->workspace : cwd, &pathdirs) == -1 ||
	    fs_private_hide(&set, plan, conf, in, &pathdirs, home_real,
	    proj) == -1 || fs_java(&set, plan, in, home_real, proj) == -1)
		goto fail;

	/* Writable roots. */
	for (i = 0; i < set.n; i++) {
		if (!(set.v[i].flags & P_ALLOW_WRITE) ||
		    (set.v[i].flags & P_DENY_WRITE))
			continue;
		/* A single file is a root too (Landlock: file rights). */
		if (stat(set.v[i].path, &st) == -1 ||
		    !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
			continue;
		if (fs_strv_add(&plan->writable, &plan->nwritable,
		    set.v[i].path) == -1)
			goto fail;
	}
	if ((rc = fs_refuse_cwd(&set, plan, cwd,
	    conf->fs_deny_read_set)) != 0 ||
	    (rc = fs_reviewer(conf, plan, home_real, in->path)) != 0 ||
	    (rc = fs_file_roots(conf, plan, home_real, &pathdirs)) != 0)
		goto fail;
	rc = -1;

	/*
	 * The mandatory set at the top of each writable root and at the home
	 * directory when it lies in one; the git work tree around each
	 * directory root.
	 */
	nroots = plan->nwritable;
	for (i = 0; i < nroots; i++) {
		const char *root = plan->writable[i];

		if (stat(root, &st) == -1 || !S_ISDIR(st.st_mode))
			continue;
		if (fs_mandatory_at(&set, root, conf->allow_git_config) ==
		    -1 || fs_worktree(&set, plan, root, conf, proj, home_real) == -1 ||
		    fs_git_repo(&set, plan, root) == -1)
			goto fail;
	}
	if (home_real != NULL && fs_root_of(plan, home_real) != NULL &&
	    fs_mandatory_at(&set, home_real, conf->allow_git_config) == -1)
		goto fail;
	/*
	 * And at the working directory inside a root (the workspace above
	 * it): an agent or editor started there reads its .claude, .vscode.
	 */
	if (fs_root_of(plan, cwd) != NULL &&
	    fs_mandatory_at(&set, cwd, conf->allow_git_config) == -1)
		goto fail;
	if (fs_worktree(&set, plan, cwd, conf, proj, home_real) == -1 ||
	    fs_path_dirs(&set, plan, &pathdirs) == -1)
		goto fail;

	if (fs_rules(plan, &set) == -1)
		goto fail;
	fs_set_free(&set);
	strlist_free(&pathdirs);
	free(home_real);
	return 0;
fail:
	free(p);
	fs_set_free(&set);
	strlist_free(&pathdirs);
	free(home_real);
	fs_plan_free(plan);
	return rc;
}

int
fs_plan_grant(struct fs_plan *plan, const char *path, int writable)
{
	struct fs_rule	*nv;
	struct stat	 st;
	size_t		 i;

	if (path[0] != '/' || lstat(path, &st) == -1 ||
	    !S_ISREG(st.st_mode) || fs_plan_guarded(plan, path, 1) != NULL ||
	    fs_glob_denied(plan, path) != NULL) {
		errno = EACCES;
		return -1;
	}
	/* The agent's own file, private in /tmp (fs_private_hide): shown. */
	for (i = 0; i < plan->nrules; i++) {
		if (plan->rules[i].action != FS_HIDE ||
		    strcmp(plan->rules[i].path, path) != 0)
			continue;
		free(plan->rules[i].path);
		free(plan->rules[i].source);
		plan->rules[i] = plan->rules[--plan->nrules];
		break;
	}
	if ((nv = reallocarray(plan->rules, plan->nrules + 1,
	    sizeof(*nv))) == NULL)
		return -1;
	plan->rules = nv;
	memset(&nv[plan->nrules], 0, sizeof(*nv));
	if ((nv[plan->nrules].path = strdup(path)) == NULL)
		return -1;
	nv[plan->nrules].action = writable ? FS_EXPOSE_RW : FS_EXPOSE_RO;
	nv[plan->nrules].is_dir = 0;
	plan->nrules++;
	if (writable && fs_strv_add(&plan->writable, &plan->nwritable,
	    path) == -1)
		return -1;
	qsort(plan->rules, plan->nrules, sizeof(*plan->rules), fs_rule_cmp);
	return 0;
}

void
fs_plan_free(struct fs_plan *plan)
{
	size_t	i;

	for (i = 0; i < plan->nrules; i++) {
		free(plan->rules[i].path);
		free(plan->rules[i].source);
	}
	for (i = 0; i < plan->nwritable; i++)
		free(plan->writable[i]);
	for (i = 0; i < plan->nguarded; i++)
		free(plan->guarded[i]);
	for (i = 0; i < plan->nunix; i++)
		free(plan->unix_sockets[i]);
	free(plan->unix_sockets);
	free(plan->rules);
	free(plan->writable);
	free(plan->guarded);
	free(plan->guarded_why);
	fs_gindex_free(plan->gindex);
	for (i = 0; i < plan->nowned; i++)
		free(plan->owned[i]);
	free(plan->owned);
	free(plan->home);
	free(plan->cache_dir);
	free(plan->workspace);
	free(plan->project);
	fs_glob_free(plan);
	strlist_free(&plan->hookspaths);
	memset(plan, 0, sizeof(*plan));
}

/*
 * Whether creating or replacing path would touch a guarded path: the path
 * itself or anything below it, and with ancestors_too also a directory on
 * the way to one (renaming a prepared directory to ".git" would otherwise
 * plant .git/hooks in one step).  Returns who reads the guarded path, or
 * NULL.
 */
const char *
fs_plan_guarded(const struct fs_plan *plan, const char *path,
    int ancestors_too)
{
	size_t	i;

	if (plan->gindex != NULL)
		return fs_gindex_find(plan, path, ancestors_too);
	for (i = 0; i < plan->nguarded; i++) {
		if (fs_under_ci(path, plan->guarded[i]) ||
		    (ancestors_too && fs_under_ci(plan->guarded[i], path)))
			return plan->guarded_why[i];
	}
	return NULL;
}

/*
 * The guarded paths indexed for the creation guard, which asks about
 * every creation: fs_plan_guarded's answer from a few hash lookups (one
 * per component of the path) instead of a pass over a few hundred names.
 * Keys are the paths with ASCII letters folded, as strncasecmp compares
 * them; each maps to the lowest index of a guarded path it stands for,
 * so the answer is the one the pass would find first.
 */
struct fs_gslot {
	char	*key;		/* NULL: free */
	size_t	 idx;
};

struct fs_gindex {
	struct fs_gslot	*at;	/* a guarded path itself */
	struct fs_gslot	*above;	/* a directory above a guarded path */
	size_t		 cap;	/* of each, a power of two */
	size_t		 root;	/* a guarded "/", or SIZE_MAX */
};

static size_t
fs_fold_hash(const char *s, size_t len)
{
	uint64_t	h = 0xcbf29ce484222325ULL;
	size_t		i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)tolower((unsigned char)s[i])) *
		    0x100000001b3ULL;
	return (size_t)(h ^ (h >> 29));
}

/* The slot of key (len octets, folded) in t: its own, or the free one. */
static struct fs_gslot *
fs_gslot(struct fs_gslot *t, size_t cap, const char *key, size_t len)
{
	size_t	i = fs_fold_hash(key, len) & (cap - 1);

	while (t[i].key != NULL && (strlen(t[i].key) != len ||
	    strncasecmp(t[i].key, key, len) != 0))
		i = (i + 1) & (cap - 1);
	return &t[i];
}

/* Map key (len octets) to idx in t, keeping the lowest index. */
static int
fs_gput(struct fs_gslot *t, size_t cap, const char *key, size_t len,
    size_t idx)
{
	struct fs_gslot	*sl = fs_gslot(t, cap, key, len);

	if (sl->key != NULL) {
		if (idx < sl->idx)
			sl->idx = idx;
		return 0;
	}
	if ((sl->key = strndup(key, len)) == NULL)
		return -1;
	sl->idx = idx;
	return 0;
}

static void
fs_gindex_free(struct fs_gindex *gi)
{
	size_t	i;

	if (gi == NULL)
		return;
	for (i = 0; i < gi->cap; i++) {
		free(gi->at[i].key);
		free(gi->above[i].key);
	}
	free(gi->at);
	free(gi->above);
	free(gi);
}

int
fs_plan_index(struct fs_plan *plan)
{
	struct fs_gindex	*gi;
	const char		*p, *sl;
	size_t			 i, n = 0;

	if (plan->gindex != NULL)
		return 0;
	for (i = 0; i < plan->nguarded; i++)
		for (p = plan->guarded[i]; *p != '\0'; p++)
			n += *p == '/';
	if ((gi = calloc(1, sizeof(*gi))) == NULL)
		return -1;
	gi->root = SIZE_MAX;
	for (gi->cap = 64; gi->cap < 2 * (n + plan->nguarded + 1);
	    gi->cap *= 2)
		;
	if ((gi->at = calloc(gi->cap, sizeof(*gi->at))) == NULL ||
	    (gi->above = calloc(gi->cap, sizeof(*gi->above))) == NULL)
		goto fail;
	for (i = 0; i < plan->nguarded; i++) {
		p = plan->guarded[i];
		if (strcmp(p, "/") == 0) {
			if (i < gi->root)
				gi->root = i;
			continue;
		}
		if (fs_gput(gi->at, gi->cap, p, strlen(p), i) == -1)
			goto fail;
		/* Every directory above it but "/" (asked apart). */
		for (sl = strchr(p + 1, '/'); sl != NULL;
		    sl = strchr(sl + 1, '/'))
			if (fs_gput(gi->above, gi->cap, p, (size_t)(sl - p),
			    i) == -1)
				goto fail;
	}
	plan->gindex = gi;
	return 0;
fail:
	fs_gindex_free(gi);
	return -1;
}

/* fs_plan_guarded, from the index. */
static const char *
fs_gindex_find(const struct fs_plan *plan, const char *path,
    int ancestors_too)
{
	const struct fs_gindex	*gi = plan->gindex;
	struct fs_gslot		*sl;
	const char		*p;
	size_t			 best = gi->root, len = strlen(path);

	/* path or a directory above it is guarded. */
	for (p = path + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			sl = fs_gslot(gi->at, gi->cap, path, (size_t)(p - path));
			if (sl->key != NULL && sl->idx < best)
				best = sl->idx;
		}
		if (*p == '\0')
			break;
	}
	if (ancestors_too) {
		if (strcmp(path, "/") == 0 && plan->nguarded > 0)
			best = 0;
		sl = fs_gslot(gi->above, gi->cap, path, len);
		if (sl->key != NULL && sl->idx < best)
			best = sl->idx;
	}
	return best == SIZE_MAX ? NULL : plan->guarded_why[best];
}

void
fs_plan_dump(const struct fs_plan *plan)
{
	static const char *const names[] = { "hide", "read-only", "writable" };
	size_t	i;

	if (plan->workspace != NULL)
		log_info("fs: workspace %s: %s", plan->workspace,
		    plan->project_why);
	for (i = 0; i < plan->nglobs; i++)
		log_info("fs: pattern   %s (%s): %zu existing path%s",
		    glob_text(plan->globs[i].g), fs_glob_key(&plan->globs[i]),
		    plan->globs[i].found, plan->globs[i].found == 1 ? "" : "s");
	for (i = 0; i < plan->nrules; i++)
		log_info("fs: %-9s %s%s%s%s", names[plan->rules[i].action],
		    plan->rules[i].path, plan->rules[i].note != NULL ? " (" :
		    "", plan->rules[i].note != NULL ? plan->rules[i].note : "",
		    plan->rules[i].note != NULL ? ")" : "");
	for (i = 0; i < plan->nguarded; i++)
		log_debug("fs: guarded %s (%s)", plan->guarded[i],
		    plan->guarded_why[i]);
}

/* A name git reads in a git directory as configuration. */
static int
fs_git_file(const char *name, int allow_config)
{
	size_t	i;

	for (i = 0; i < sizeof(fs_git_files) / sizeof(*fs_git_files); i++)
		if (strcasecmp(name, fs_git_files[i]) == 0)
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
fs_git_tail(char *const *v, size_t n, int ancestors_too, int allow_config)
{
	size_t	i, len;

	if (n == 0)
		return ancestors_too;
	if (strcasecmp(v[0], "hooks") == 0)
		return 1;
	if (n == 1 && fs_git_file(v[0], allow_config))
		return 1;
	/*
	 * config.lock and the like: git renames its lock onto the file, and
	 * a lock left behind makes the user's next "git config" fail.
	 */
	if (n == 1 && (len = strlen(v[0])) > 5 &&
	    strcasecmp(v[0] + len - 5, ".lock") == 0) {
		for (i = 0; i < sizeof(fs_git_files) / sizeof(*fs_git_files);
		    i++)
			if (len - 5 == strlen(fs_git_files[i]) &&
			    strncasecmp(v[0], fs_git_files[i], len - 5) == 0)
				return !(allow_config && i == 0);
	}
	if (strcasecmp(v[0], "worktrees") == 0)
		return n <= 2 ? ancestors_too :
		    fs_git_tail(v + 2, n - 2, ancestors_too, allow_config);
	if (strcasecmp(v[0], "modules") == 0) {
		/* Submodule names may hold slashes: any depth. */
		if (ancestors_too || fs_git_file(v[n - 1], allow_config))
			return 1;
		for (i = 2; i < n; i++)
			if (strcasecmp(v[i], "hooks") == 0)
				return 1;
	}
	return 0;
}

static int
fs_git_ask(struct fs_git_q *q, size_t max, size_t *n, enum fs_git_ask ask,
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
 * questions whose answer "yes" makes path protected (see launcher.h).
 * -1 when there are more than max (the caller refuses).
 */
ssize_t
fs_git_rule(const char *path, int ancestors_too, int allow_config,
    struct fs_git_q *q, size_t max)
{
	char	 buf[PATH_MAX], *v[FS_GIT_MAXDEPTH], *save = NULL, *c;
	size_t	 n = 0, i, nq = 0;

	if (strlen(path) >= sizeof(buf))
		return -1;
	strcpy(buf, path);
	for (c = strtok_r(buf, "/", &save); c != NULL;
	    c = strtok_r(NULL, "/", &save)) {
		if (n == FS_GIT_MAXDEPTH)
			return -1;
		v[n++] = c;
	}
	for (i = 0; i < n; i++) {
		if (strcasecmp(v[i], ".git") != 0)
			continue;
		if (i == n - 1) {
			if (fs_git_ask(q, max, &nq, FS_GIT_DOTGIT, 0) == -1)
				return -1;
		} else if (fs_git_tail(v + i + 1, n - 1 - i, ancestors_too,
		    allow_config) &&
		    fs_git_ask(q, max, &nq, FS_GIT_BELOW, (int)(n - 1 - i)) ==
		    -1)
			return -1;
	}
	/* Git directories by another name: bare, worktrees/W, modules/M. */
	for (i = 1; i < n; i++) {
		if (strcasecmp(v[i - 1], ".git") == 0)
			continue;
		if (strcasecmp(v[i], "hooks") == 0 ||
		    (i == n - 1 && fs_git_file(v[i], allow_config)) ||
		    (ancestors_too && (strcasecmp(v[i], "worktrees") == 0 ||
		    strcasecmp(v[i], "modules") == 0))) {
			if (fs_git_ask(q, max, &nq, FS_GIT_SHAPE,
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
fs_git_states(const char *path, int *lvl, size_t max)
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
		for (k = 0; k < sizeof(fs_git_state) / sizeof(*fs_git_state);
		    k++)
			if (len == strlen(fs_git_state[k]) &&
			    strncasecmp(c, fs_git_state[k], len) == 0) {
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
 * worktrees/W of a git directory it is git worktree add (or a command
 * planting a worktree's commondir), which cannot be allowed: a worktree
 * whose entry was removed and made again, by the command or while a
 * worktree is made outside, would then run the config its commondir
 * names (docs/filesystem.md, Git).
 */
void
fs_git_why(const char *path, const char *config, char *buf, size_t len)
{
	const char	*p, *wt = NULL, *name = strrchr(path, '/');
	char		 main[PATH_MAX];
	size_t		 n;

	name = name != NULL ? name + 1 : path;
	if (strcasecmp(name, ".git") == 0) {
		snprintf(buf, len, "protected path; a .git there would make "
		    "git run its config and hooks in a directory that existed "
		    "before the run (make new repositories in a new directory; "
		    "see pisbx-run(1), FILESYSTEM)");
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
	    "reads as its repository and configuration: git worktree add "
	    "cannot run in the sandbox in a repository that existed before "
	    "the run; run it outside (git -C %s worktree add PATH BRANCH), "
	    "then, to let commands commit in that worktree, add \"%s\" to "
	    "filesystem.allowWrite in %s (see pisbx-run(1), FILESYSTEM)",
	    main, main, main, config);
}
