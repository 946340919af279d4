/*
 * launcher/: pisbx-run.  The parent stays in the host's network namespace
 * and serves the proxy; the child becomes PID 1 of a new PID namespace
 * (with its own network, mount and IPC namespaces, and a user namespace
 * when not root), hands its loopback listeners to the parent, applies the
 * filesystem policy, and runs the command under a reaper.
 */
#ifndef PISBX_LAUNCHER_H
#define PISBX_LAUNCHER_H

#include <sys/types.h>

#include <signal.h>
#include <stddef.h>

struct config;

#define SANDBOX_HTTP_PORT	3128
#define SANDBOX_SOCKS_PORT	1080

/* Exit statuses of pisbx-run itself (the command's own pass through). */
#define EXIT_USAGE		2
#define EXIT_CONFIG		78	/* EX_CONFIG */
#define EXIT_TIMEOUT		124	/* as timeout(1) */
#define EXIT_SETUP		125	/* the sandbox could not be built */
#define EXIT_NOEXEC		126
#define EXIT_NOTFOUND		127

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
	size_t		 nguarded;
	char		*workspace;	/* the default writable root, or NULL */
};

/* Everything the sandbox child needs, prepared by the parent. */
struct sandbox {
	char		*const *argv;	/* the command */
	char		**envp;		/* its environment */
	char		*cwd;
	uid_t		 uid;
	gid_t		 gid;
	int		 userns;	/* create a user namespace (not root) */
	int		 allow_all_unix;
	struct fs_plan	 plan;
	char		*rundir;	/* private per-run dir on the host */
	char		*tmpdir;	/* rundir/tmp: the command's TMPDIR */
	char		*empty;		/* rundir/empty: hides denied files */
	int		 host_dev_fd;	/* O_PATH: the host's /dev and devpts, */
	int		 host_pts_fd;	/* where inherited terminals live */
	sigset_t	 sigmask;	/* the caller's, for the command */
	int		 verbose;
};

/* A started sandbox, seen from the parent. */
struct sandbox_run {
	pid_t		 pid;		/* PID-namespace init (the reaper) */
	int		 sock;		/* control socket to the reaper */
	int		 listen_http;	/* listeners inside the sandbox's netns */
	int		 listen_socks;
};

/* Control messages on the socketpairs. */
#define CTL_LISTENERS	'L'	/* reaper -> parent: two fds, HTTP, SOCKS */
#define CTL_GO		'G'	/* parent -> reaper: the proxy serves; run */
#define CTL_NOTIFY	'N'	/* command -> guard: the seccomp listener */

/* fspolicy.c */
/*
 * Resolve the config's filesystem section into a plan: ~ expanded,
 * relative paths against cwd, symlinks resolved; adds the working
 * directory, the private TMPDIR, the mandatory write-deny set, git
 * worktree directories, the trusted config and the executables' dir.
 */
int	 fs_plan_build(struct fs_plan *, const struct config *,
	    const char *cwd, const char *home, const char *tmpdir,
	    const char *exe_dir, const char *config_path);
void	 fs_plan_free(struct fs_plan *);
/*
 * One more regular file seen from the sandbox, read-only or writable (an
 * agent's bookkeeping file); never a guarded path.
 */
int	 fs_plan_grant(struct fs_plan *, const char *path, int writable);
/* Whether path is path or below one of the plan's guarded paths. */
int	 fs_plan_guarded(const struct fs_plan *, const char *path,
	    int ancestors_too);
void	 fs_plan_dump(const struct fs_plan *);

/* mount.c */
/* Build the mount namespace's view (runs in the sandbox child). */
int	 mount_apply(struct sandbox *);

/* netns.c */
int	 net_lo_up(void);
int	 net_listen_loopback(int port);
int	 net_send_fds(int sock, char tag, const int *fds, int nfds);
int	 net_recv_fds(int sock, char *tag, int *fds, int maxfds);

/* landlock.c */
/* The kernel's Landlock ABI version, 0 when unavailable. */
int	 landlock_abi(void);
/* Restrict writes to the writable roots; scope sockets and signals. */
int	 landlock_apply(const struct sandbox *);

/* seccomp.c */
/*
 * Install the command's filter: AF_UNIX/AF_VSOCK sockets, io_uring,
 * mounts, keyrings and TIOCSTI refused; file creation sent to the guard.
 * Returns the notification fd (for the guard), or -1.
 */
int	 seccomp_apply(const struct sandbox *);

/* guard.c */
/*
 * Serve the creation notifications of fd: refuse guarded paths, perform
 * every other creation on the command's behalf.  Returns at EOF.
 */
void	 guard_serve(const struct sandbox *, int notify_fd);

/* sandbox.c */
/* Clone the sandbox; the child never returns. */
int	 sandbox_start(struct sandbox *, struct sandbox_run *);
/* Explain why namespaces are unavailable, with a fix. */
const char *sandbox_ns_hint(int err);

/* reaper.c */
__attribute__((noreturn)) void reaper_main(struct sandbox *, int ctl);

/* env.c */
/*
 * The command's environment: the caller's minus capabilities, plus the
 * proxy variables, TMPDIR, PISBX_SANDBOX and PISBX_DEPTH.
 */
char	**env_build(char **environ_in, const char *tmpdir,
	    const char *self_exe, const char *capability_env, int depth);
void	 env_free(char **);

/* connect.c */
/* --connect-proxy HOST PORT: relay stdio through an HTTP CONNECT tunnel. */
int	 connect_proxy_main(const char *proxy, const char *host,
	    const char *port);

/* agent.c */
/*
 * What Claude Code's wrapper around a command needs from outside the
 * sandbox: its shell snapshot (read-only) and its cwd file (writable).
 */
struct agent_files {
	char		*snapshot;	/* absolute, or NULL */
	char		*cwd_file;	/* absolute, or NULL */
	int		 cwd_created;	/* we made it: removed if still empty */
};
/*
 * Recognise Claude Code's wrapper in line: a snapshot exactly in
 * claude_dir/shell-snapshots, a cwd file exactly in tmp_dir (either
 * directory may be NULL: nothing recognised there).  -1 on no memory.
 */
int	 agent_line_parse(const char *line, const char *claude_dir,
	    const char *tmp_dir, struct agent_files *);
/* Claude Code's config dir ($CLAUDE_CONFIG_DIR, ~/.claude), or NULL. */
const char *agent_claude_dir(char *buf, size_t len);
/* Claude Code's temp dir ($CLAUDE_CODE_TMPDIR, $TMPDIR, ...), or NULL. */
const char *agent_tmp_dir(void);
/*
 * Check both files on the host (creating the cwd file empty when it does
 * not exist); drop what cannot be granted safely, saying why.  The paths
 * become real paths.  -1 on no memory.
 */
int	 agent_files_prepare(struct agent_files *, uid_t);
/* After the run: remove a cwd file we made that is still empty; free. */
void	 agent_files_done(struct agent_files *);
void	 agent_files_free(struct agent_files *);

/* hook.c */
/*
 * pisbx-run --hook AGENT: answer a PreToolUse hook (JSON on stdin) with
 * the Bash command wrapped in pisbx-sh from exe_dir.  Returns the exit
 * status (0, or 2: the command is blocked, stderr says why).
 */
int	 hook_main(const char *agent, const char *exe_dir);

/* rundir.c */
/* Create the private per-run dir (rundir, rundir/tmp). */
int	 rundir_create(struct sandbox *);
/* Create rundir/empty, bound over denied files. */
int	 rundir_empty(const struct sandbox *);
/* Remove it and everything the command left in it. */
void	 rundir_remove(const char *);
/* Remove per-run dirs of pisbx-run processes that no longer exist. */
void	 rundir_sweep(void);

#endif
