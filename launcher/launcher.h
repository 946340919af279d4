/*
 * launcher/: pisbx-run and pisbx-sh.  The parent stays in the host's
 * network namespace and serves the proxy (run/); the child becomes PID 1
 * of a new PID namespace (with its own network, mount and IPC namespaces,
 * and a user namespace when not root), hands its loopback listeners to
 * the parent, applies the filesystem plan (fs/) and runs the command
 * under a reaper (sandbox/), whose guard threads (guard/) perform the
 * command's creations.  docs/internals.md maps the processes.
 *
 * This header holds only what crosses between them -- exit statuses,
 * control messages, the loopback ports, the job signal bits -- and the
 * entry points of connect.c and sh.c; each subfolder has its own header.
 */
#ifndef PISBX_LAUNCHER_H
#define PISBX_LAUNCHER_H

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
#define CTL_STOPPED	'S'	/* reaper -> parent: the command stopped */
#define CTL_CONTINUED	'C'	/* reaper -> parent: the command goes on */

/*
 * A signal the parent passes to the reaper with sigqueue(3) carries these
 * in its value: send it to the command's process group (it came from the
 * terminal), and for SIGCONT, give that group the terminal first.
 */
#define JOBS_GROUP	0x1
#define JOBS_GIVE	0x2
#define JOBS_KILL	0x4	/* nons: end every process of the sandbox */

/* connect.c */
/* --connect-proxy HOST PORT: relay stdio through an HTTP CONNECT tunnel. */
int	 connect_proxy_main(const char *proxy, const char *host,
	    const char *port);

/* sh.c */
/* pisbx-sh: bash's options and a line or a program, run sandboxed. */
int	 sh_main(int, char *[]);

#endif
