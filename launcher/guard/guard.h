/*
 * launcher/guard/: the creation guard, threads of the reaper (PID 1 of
 * the sandbox) that serve the command's seccomp notifications: they
 * read each path from the caller's memory once, walk it as the caller's
 * kernel would, check it against the filesystem plan and git's rules,
 * and perform the creation, write or Unix-socket call themselves
 * (guard.c).  guard_start is all the reaper needs.
 */
#ifndef PISBX_LAUNCHER_GUARD_H
#define PISBX_LAUNCHER_GUARD_H

struct fs_plan;

/* guard.c */
/* What the guard reads of the sandbox the reaper runs. */
struct guard_conf {
	struct fs_plan	*plan;		/* indexed by guard_start */
	const char	*tmpdir;	/* the run's TMPDIR: new repositories
					   may be made there */
	const char	*config_file;	/* to name in refusals, or NULL */
	int		 allow_git_config;
	int		 report_fd;	/* guard -> parent: repositories made,
					   refusals (SOCK_SEQPACKET), or -1 */
};
/*
 * Serve the notifications of fd from threads of this process (the
 * reaper): refuse guarded paths, perform every other creation and write
 * on the command's behalf, and tell the parent (report_fd) about git
 * repositories made during the run.  0, or -1 when no thread started.
 */
int	 guard_start(const struct guard_conf *, int notify_fd);
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

#endif
