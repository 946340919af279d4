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
#include <sys/stat.h>

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "policy/policy.h"
#include "launcher/fs/fs.h"
#include "launcher/sandbox/sandbox.h"

#define RUNDIR_SSH_CONFIG	"/etc/ssh/ssh_config"
#define SANDBOX_HTTP_PORT	3128
#define SANDBOX_SOCKS_PORT	1080

/* Exit statuses of pisbx-run itself (the command's own pass through). */
#define EXIT_USAGE		2
#define EXIT_CONFIG		78	/* EX_CONFIG */
#define EXIT_TIMEOUT		124	/* as timeout(1) */
#define EXIT_SETUP		125	/* the sandbox could not be built */
#define EXIT_NOEXEC		126
#define EXIT_NOTFOUND		127

/* Control messages on the socketpairs. */
#define CTL_LISTENERS	'L'	/* reaper -> parent: two fds, HTTP, SOCKS */
#define CTL_GO		'G'	/* parent -> reaper: the proxy serves; run */
#define CTL_NOTIFY	'N'	/* command -> guard: the seccomp listener */
#define CTL_STOPPED	'S'	/* reaper -> parent: the command stopped */
#define CTL_CONTINUED	'C'	/* reaper -> parent: the command goes on */

/*
 * A signal the parent passes to the reaper with sigqueue(3) carries these
 * in its value: send it to the command's process group (it came from the
 * terminal), and for SIGCONT, give that group the terminal first.
 */
#define JOBS_GROUP	0x1
#define JOBS_GIVE	0x2

/* guard.c */
/*
 * Serve the notifications of fd from threads of this process (the
 * reaper): refuse guarded paths, perform every other creation and write
 * on the command's behalf, and tell the parent (report_fd) about git
 * repositories made during the run.  0, or -1 when no thread started.
 */
int	 guard_start(struct sandbox *, int notify_fd);
/*
 * The parent's side of report_fd: collect what the guard says (call with
 * the readable end until EOF), then warn about every git repository made
 * during the run that still exists, and hand its refusals to a summary.
 */
struct guard_report;
struct summary;
struct guard_report *guard_report_new(void);
int	 guard_report_read(struct guard_report *, int fd);
void	 guard_report_warn(struct guard_report *, struct summary *);
void	 guard_report_free(struct guard_report *);

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

/* jobs.c: the command as a job of the caller's terminal, seen from the parent */
struct event_base;
struct jobs;
/*
 * The controlling terminal (sb->tty) and whether the command starts in
 * its foreground (sb->tty_give): when our process group holds it and
 * stdin and stdout are that terminal.  NULL on failure.
 */
struct jobs *jobs_new(struct sandbox *, struct event_base *);
/* The reaper is started: its pid and our end of the control socket. */
int	 jobs_start(struct jobs *, pid_t reaper, int sock);
/* A signal of ours for the command: to the reaper, which passes it on. */
void	 jobs_forward(struct jobs *, int sig, int from_tty);
/* The command has ended: the terminal back to our group.  Frees. */
void	 jobs_free(struct jobs *);

/* summary.c */
enum summary_kind {
	SUMMARY_NET,		/* a destination the proxy refused */
	SUMMARY_FILE,		/* a path the creation guard refused */
	SUMMARY_UNREACH,	/* an allowed destination that failed */
	SUMMARY_KINDS
};
struct summary;
struct proxy_refusal;
struct summary *summary_new(void);
void	 summary_free(struct summary *);
/*
 * The proxy's proxy_opts.refused callback (arg: the summary): a refused
 * destination, or an allowed one that could not be reached.
 */
void	 summary_proxy_cb(const struct proxy_refusal *, void *);
/*
 * A refused destination (SUMMARY_NET) or an allowed one that could not
 * be reached (SUMMARY_UNREACH: DNS, connect, the upstream proxy).
 */
void	 summary_net(struct summary *, enum summary_kind, const char *host,
	    unsigned int port, const char *proto, const char *reason,
	    const char *detail, const char *hint);
/* A refused creation or write: verb ("create"), path, who reads it. */
void	 summary_file(struct summary *, const char *verb, const char *path,
	    const char *why);
/* Some refusals were not reported (the guard's bound). */
void	 summary_more(struct summary *);
/* Distinct refusals and failures (those past the bound too). */
size_t	 summary_count(const struct summary *);
/*
 * The stderr summary, deduplicated and capped, every line masked for
 * the terminal; nothing when nothing was refused or failed.  report: the
 * --report file to point at, or NULL; status: the command's exit status
 * (0 says that what was refused did not fail it).
 */
void	 summary_print(const struct summary *, FILE *, const char *report,
	    int status);
/* Every item as a JSON array, one object per line.  0 or -1. */
int	 summary_json(const struct summary *, FILE *);

/* env.c */
struct env_inputs {
	const char	*tmpdir;	/* the run's private TMPDIR */
	const char	*self_exe;	/* pisbx-run, for --connect-proxy */
	const char	*git_proxy;	/* GIT_PROXY_COMMAND, or NULL */
	const char	*capability_env;	/* never passed on, or NULL */
	const char	*cache_dir;	/* the project's caches, or NULL: none */
	unsigned int	 caches;	/* 1 << enum fs_cache: wired */
	int		 depth;		/* PISBX_DEPTH of the caller */
	const char	*bash_env;	/* BASH_ENV over the caller's, or NULL */
	int		 java_quiet;	/* JDKs have the proxy in net.properties:
					 * no JAVA_TOOL_OPTIONS of ours */
};
/*
 * The command's environment: the caller's minus capabilities, plus the
 * proxy variables every client family reads, TMPDIR, PISBX_SANDBOX and
 * PISBX_DEPTH.
 */
char	**env_build(char **environ_in, const struct env_inputs *);
void	 env_free(char **);
/* s with every '%' doubled, for ssh's %-expansion (malloc'ed, or NULL). */
char	*env_ssh_percent(const char *s);

/* connect.c */
/* --connect-proxy HOST PORT: relay stdio through an HTTP CONNECT tunnel. */
int	 connect_proxy_main(const char *proxy, const char *host,
	    const char *port);

/* rundir.c */
/* Create the private per-run dir (rundir, rundir/tmp). */
int	 rundir_create(struct sandbox *);
/* Create rundir/empty, bound over denied files. */
int	 rundir_empty(const struct sandbox *);
/*
 * Create rundir/git-proxy, git's GIT_PROXY_COMMAND (git:// URLs): a
 * script that runs "self_exe --connect-proxy HOST PORT".  Its path,
 * malloc'ed, or NULL.
 */
char	*rundir_git_proxy(const struct sandbox *, const char *self_exe);
/*
 * Create rundir/ssh_config: RUNDIR_SSH_CONFIG and a last block with
 * "ProxyCommand self_exe --connect-proxy %h %p", bound over it in the
 * sandbox.  Its path, malloc'ed, or NULL (errno ENOENT: no ssh here).
 */
char	*rundir_ssh_config(const struct sandbox *, const char *self_exe);
/*
 * Create rundir/login, what pisbx-sh -l's bash reads after the profile:
 * the caller's PATH first again (path, or NULL to keep the profile's),
 * BASH_ENV the caller's (bash_env, or NULL: unset) and read as bash
 * would have.  Its path (malloc'ed), or NULL.
 */
char	*rundir_login(const struct sandbox *, const char *path,
	    const char *bash_env);
/* Remove it and everything the command left in it. */
void	 rundir_remove(const char *);
/* Remove per-run dirs of pisbx-run processes that no longer exist. */
void	 rundir_sweep(void);

#endif
