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

/* connect.c */
/* --connect-proxy HOST PORT: relay stdio through an HTTP CONNECT tunnel. */
int	 connect_proxy_main(const char *proxy, const char *host,
	    const char *port);

#endif
