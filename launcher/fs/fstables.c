/*
 * The data tables of the filesystem plan: the mandatory write-deny set,
 * the files git hook managers read, where toolchains live in the home,
 * the settings files shown filtered, the secret stores hidden in the home
 * and outside it, where JDKs live.  Data only, so that what every run
 * protects can be read (and reviewed) in one place; the code that applies
 * each table is in fsplan.c, fsgit.c, fshome.c and fsprivate.c.
 */
#include <stddef.h>

#include "policy/policy.h"
#include "launcher/fs/fs.h"
#include "launcher/fs/fs_int.h"

/*
 * The mandatory write-deny set, applied at the top of every writable root
 * and at the home directory when it lies in one.  The rule for an entry
 * (docs/filesystem.md): a file that a program outside the sandbox reads
 * and acts on -- runs a command it names, loads code from it -- without
 * the user asking for that, when the program is started for some other
 * purpose.  Project files the user runs on purpose (Makefile,
 * package.json scripts) are not in it: see the threat model.
 */
const struct fs_mandatory fs_mandatory[] = {
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
const size_t fs_nmandatory = sizeof(fs_mandatory) / sizeof(*fs_mandatory);

/*
 * What git hook managers read at the top of a work tree, run by the
 * hooks they install: protected in every work tree older than the run,
 * like its core.hooksPath.
 */
const struct fs_mandatory fs_hook_managers[] = {
	{ ".husky", "husky (git hooks)" },
	{ ".pre-commit-config.yaml", "pre-commit (a git hook)" },
	{ "lefthook.yml", "lefthook (a git hook)" },
	{ ".lefthook.yml", "lefthook (a git hook)" },
};
const size_t fs_nhook_managers =
    sizeof(fs_hook_managers) / sizeof(*fs_hook_managers);

/*
 * filesystem.toolchains: where toolchains and their non-secret settings
 * live in the home directory, re-exposed read-only while the home stays
 * hidden (docs/filesystem.md gives the reason for each).  Only what is
 * there, only inside a hidden tree, never over the user's own denyRead.
 */
const struct fs_home fs_toolchain_paths[] = {
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
const size_t fs_ntoolchain_paths =
    sizeof(fs_toolchain_paths) / sizeof(*fs_toolchain_paths);

/*
 * Settings files a toolchain needs some of, which are also where people
 * keep credentials (a token in a git URL, http.extraHeader, a GOPROXY
 * with a password, mise's [env]): shown as filtered copies
 * (fsfilter.c) wherever they would be readable -- re-exposed from the
 * hidden home by the toolchain's switch, or in a home left visible --
 * unless the config names the file itself.
 */
const struct fs_filtered fs_filtered[] = {
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
const size_t fs_nfiltered = sizeof(fs_filtered) / sizeof(*fs_filtered);

/*
 * Secret stores: hidden wherever they would be readable -- under a parent
 * the config re-exposes (allowRead "~", the home as the workspace) --
 * unless the config names the store itself, or a path inside it.
 */
const char *const fs_secrets[] = {
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
const size_t fs_nsecrets = sizeof(fs_secrets) / sizeof(*fs_secrets);

/*
 * Outside the home, the user's private files (redteam #7): the runtime
 * directory ($XDG_RUNTIME_DIR, /run/user/<uid>) holds podman's login, a
 * supervisor's capability file, agent sockets; the shared temporary
 * directories hold Kerberos ticket caches, ssh-agent and tmux
 * directories, other sessions' mktemp -d directories.  Each entry there
 * owned by the caller and closed to group and others is hidden, but for
 * those the run works in (fs_private_hide).
 */
const char *const fs_shared_tmp[] = { "/tmp", "/var/tmp" };
const size_t fs_nshared_tmp = sizeof(fs_shared_tmp) / sizeof(*fs_shared_tmp);

/* Secret stores in the runtime directory (shown when it is). */
const char *const fs_runtime_secrets[] = {
	"containers/auth.json",		/* podman, buildah, skopeo */
	"pisbx-supervisor.env",		/* supervisor.md's quick start */
	"pisbx/supervisor.env",		/* the supervisor's user unit */
};
const size_t fs_nruntime_secrets =
    sizeof(fs_runtime_secrets) / sizeof(*fs_runtime_secrets);

/* Environment variables naming a secret store: "FILE:", "DIR:" or "/". */
const char *const fs_env_secrets[] = {
	"KRB5CCNAME",			/* Kerberos ticket cache */
	"REGISTRY_AUTH_FILE",		/* podman, buildah, skopeo login */
};
const size_t fs_nenv_secrets =
    sizeof(fs_env_secrets) / sizeof(*fs_env_secrets);

/* Where JDKs live, each entry one JDK's home (fs_java). */
const char *const fs_jdk_dirs[] = {
	"/usr/lib/jvm", "~/.sdkman/candidates/java", "~/.gradle/jdks",
	"~/.jdks", "~/.local/share/mise/installs/java",
	"~/.asdf/installs/java",
};
const size_t fs_njdk_dirs = sizeof(fs_jdk_dirs) / sizeof(*fs_jdk_dirs);
