/*
 * launcher/guard/: the creation guard, threads of the reaper (PID 1 of
 * the sandbox) that serve the command's seccomp notifications: they
 * read each path from the caller's memory once, walk it as the caller's
 * kernel would, check it against the filesystem plan and git's rules,
 * and perform the creation, write or Unix-socket call themselves
 * (guard.c).  guard_start is all the reaper needs; the parent reads
 * the records the guard sends it (run/guard_report.c) by the format
 * below.
 */
#ifndef PISBX_LAUNCHER_GUARD_H
#define PISBX_LAUNCHER_GUARD_H

#include <netinet/in.h>

struct fs_plan;
struct stat;

/* guard.c */
/* What the guard reads of the sandbox the reaper runs. */
struct guard_conf {
	struct fs_plan	*plan;		/* indexed after GUARD_INDEX_AFTER asks */
	const char	*tmpdir;	/* the run's TMPDIR: new repositories
					   may be made there */
	const char	*config_file;	/* to name in refusals, or NULL */
	int		 allow_git_config;
	int		 report_fd;	/* guard -> parent: repositories made,
					   refusals (SOCK_SEQPACKET), or -1 */
	int		 allow_all_unix; /* allowAllUnixSockets */
	int		 nons;		/* no namespaces: TCP only to the
					   proxy (nons.c) */
	struct sockaddr_in proxy_http;	/* nons: where 127.0.0.1:3128 goes */
	struct sockaddr_in proxy_socks;	/* ... and 127.0.0.1:1080 */
};
/*
 * Serve the notifications of fd from threads of this process (the
 * reaper): refuse guarded paths, perform every other creation and write
 * on the command's behalf, and tell the parent (report_fd) about git
 * repositories made during the run.  0, or -1 when no thread started.
 */
int	 guard_start(const struct guard_conf *, int notify_fd);
/* Whether dirfd looks like a git directory to git's discovery. */
int	 guard_shape(int dirfd);
/*
 * Whether a git init may make a repository at the project directory of
 * plan (it has no .git, is writable, is neither / nor holds the home
 * directory); st: that directory.  The guard allows it; the parent
 * looks at what is there at exit (run/gitinit.c).
 */
int	 guard_init_top(const struct fs_plan *, struct stat *st);

/*
 * The records on report_fd, one a message (SOCK_SEQPACKET): a tag, then
 * its fields, each NUL-terminated (run/guard_report.c reads them).
 * R path, M old new (renamed), F (too many).
 */
#define REPORT_REPO	'R'
#define REPORT_MOVED	'M'
#define REPORT_FULL	'F'
#define REPORT_REFUSED	'X'	/* verb, path, why */
#define REPORT_REFUSED_MORE 'Y'	/* past GUARD_MAXREFUSED */
#define REPORT_STATE	'S'	/* a git operation's state directory */
#define REPORT_STATE_LOST 'L'	/* past GUARD_MAXSTATESENT */
#define REPORT_LOOPBACK	'H'	/* address, port: a TCP connect to the
				   sandbox's loopback that nothing there
				   answered (once per port) */

/* The guard's bounds on what it tells, which bound the reader too. */
#define GUARD_MAXREPOS	256		/* repositories followed */
#define GUARD_MAXREFUSED 256		/* refusals told the parent */
#define GUARD_MAXSTATESENT 1024		/* their records, moves counted */

#endif
