/*
 * launcher/guard/'s own header, not for the reaper (guard.h is): the
 * guard's state (struct guard), a request, a resolved path and the
 * functions its files share, grouped by file -- guard.c (threads,
 * dispatch), unix.c, bind.c, fileops.c, caller.c, made.c, check.c,
 * walk.c, nons.c -- and what they ask of gitwork.c, the cache of the git work
 * trees' hooks.
 */
#ifndef PISBX_LAUNCHER_GUARD_INT_H
#define PISBX_LAUNCHER_GUARD_INT_H

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <linux/types.h>

#include <limits.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdint.h>

#include "launcher/guard/guard.h"

struct fs_glob;
struct fs_plan;

#define GUARD_MAXLINKS	40
#define GUARD_MAXQ	16		/* git questions per path */
#define GUARD_MAXSTATES	256		/* git operation states followed */
#define GUARD_MAXTOLD	1024		/* refusals said once on stderr */
#define GUARD_MAXMADE	(1U << 22)	/* directories remembered */
#define GUARD_MAXSOCKS	4096		/* Unix sockets bound, remembered */
#define GUARD_MAXCALLERS 256		/* callers' umasks remembered */
#define GUARD_MAXTHREADS 4		/* threads answering requests */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS	SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP	(1UL << 0)
#endif
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE	71
#endif
#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL
#endif
/* Never on what the guard creates: seccomp.c refuses them to chmod. */
#define GUARD_SETID	(S_ISUID | S_ISGID)
#define GUARD_TTY_MAJOR	5		/* /dev/tty is 5:0 */
#define GUARD_PTS_MAJOR	136		/* Unix98 ptys: 136..143 */

struct guard_id {
	dev_t	dev;
	ino_t	ino;
	int	used;
};

/* A Unix socket file the command bound: its identity (see guard_sock_id). */
struct guard_sock {
	dev_t		dev;
	ino_t		ino;
	int64_t		btime_sec;	/* birth time, where there is one */
	uint32_t	btime_nsec;
};

/*
 * A thread of the command, as the guard knows it: its umask, which the
 * kernel keeps in the fs_struct the thread shares with the others it was
 * cloned with CLONE_FS (a process's threads; kcmp(KCMP_FS) tells).  Read
 * from /proc once per thread; after that every umask() of its fs group
 * is seen on its way to the kernel.
 */
struct guard_caller {
	pid_t		tid;
	int		pidfd;		/* PIDFD_THREAD: a reused tid is seen */
	mode_t		umask;
	int		noted;		/* its group's last umask() was its */
	unsigned long	used;		/* least recently used goes first */
};

/* The guard's state across notifications. */
struct guard {
	struct guard_conf	 conf;
	int			 notify_fd;
	int			 root;		/* O_PATH "/", every process's */
	int			 lexical;	/* openat2 RESOLVE_NO_SYMLINKS */
	int			 kcmp;		/* kcmp(KCMP_FS) answers */
	int			 fs_own;	/* threads unshare(CLONE_FS) */
	int			 maxthreads;	/* threads it may start */
	int			 nthreads;	/* started (atomic) */
	int			 idle;		/* waiting for a request */
	uint64_t		 netns;		/* the sandbox's netns cookie */
	/* Shared by every request; held alone by a rename. */
	pthread_rwlock_t	 order;
	/* The tables below, the reports and the diagnostics. */
	pthread_mutex_t		 mu;
	struct guard_caller	 callers[GUARD_MAXCALLERS];
	size_t			 ncallers;
	unsigned long		 clock;
	struct guard_id		*made;		/* directories made, hashed */
	size_t			 made_cap;
	size_t			 nmade;
	struct gitwork		*work;		/* work trees' hooks */
	char			*repos[GUARD_MAXREPOS];	/* told the parent */
	size_t			 nrepos;
	int			 repos_full;
	char			*states[GUARD_MAXSTATES]; /* told too */
	size_t			 nstates;
	size_t			 nstatesent;
	size_t			 nrefused;	/* told the parent */
	uint64_t		 told[GUARD_MAXTOLD];	/* said: hashes */
	size_t			 ntold;
	struct guard_sock	*socks;		/* Unix sockets bound */
	size_t			 nsocks;
	/* Ports told the parent (REPORT_LOOPBACK), a bit each. */
	uint8_t			 loopback_told[65536 / 8];
	int			 init_ok;	/* a .git may be made at */
	struct stat		 init_top;	/* the project directory */
	unsigned long		 asked;		/* guarded paths looked up */
};

struct guard_path {
	int		parent;		/* O_PATH fd of the parent directory */
	int		base;		/* O_PATH fd of the directory a relative
					   path started from, when kept
					   (guard_at_keep), or -1 */
	char		name[PATH_MAX];	/* last component, as given: acted on */
	char		last[NAME_MAX + 1]; /* name without trailing slashes:
					   every check that looks at it */
	char		full[PATH_MAX];	/* resolved path, for the check */
	int		dots;		/* "." or "..": creates nothing */
	int		lexical;	/* no symlink before name, not in
					   procfs: the kernel may walk it */
	int		proc;		/* a procfs file itself */
	int		onproc;		/* parent lies in procfs (its fstatfs,
					   by guard_resolve), 0, or -1: not
					   known */
	int		pst_ok;		/* pst is parent's (guard_resolve) */
	struct stat	pst;		/* fstat of parent: an open fd's
					   device and inode never change */
	int		magic;		/* O_PATH fd of a file reached through a
					   procfs magic link, or -1 */
	int		exists;		/* guard_final: st is the name's */
	struct stat	st;		/* (not followed) */
};

struct guard_req {
	struct guard	*g;
	pid_t		 pid;		/* the calling thread */
	pid_t		 tgid;		/* its process (0: not read yet) */
	uint64_t	 id;
};

/* guard.c */
int	 guard_respond(int notify_fd, struct seccomp_notif_resp *);
const char *guard_guarded(struct guard *, const char *path,
	    int ancestors_too);

/* unix.c */
int	 guard_netns(struct guard_req *, int sock, const char *verb);
int	 guard_connect(struct guard_req *, int sockfd, uint64_t addr,
	    int len);
int	 guard_sendto(struct guard_req *, const __u64 *,
	    struct seccomp_notif_resp *);
int	 guard_sendmsg(struct guard_req *, const __u64 *,
	    struct seccomp_notif_resp *);
int	 guard_sendmmsg(struct guard_req *, const __u64 *,
	    struct seccomp_notif_resp *);
int	 guard_unix_dgram(struct guard_req *);

/* nons.c */
int	 guard_nons_addr(struct guard_req *, int domain,
	    struct sockaddr_storage *, socklen_t *, const char *verb);
int	 guard_nons_local(struct guard_req *, int sock, const char *verb);
int	 guard_listen(struct guard_req *, int sockfd, int backlog);
int	 guard_nons_connect(struct guard_req *, int sockfd,
	    const struct sockaddr_storage *, socklen_t);
int	 guard_nons_nofd(struct guard_req *, int sockfd, const char *verb);
int	 guard_nons_nobind(struct guard_req *, int sockfd,
	    const struct sockaddr_storage *, socklen_t);
int	 guard_nons_unlink(struct guard_req *, int dfd, uint64_t addr,
	    int flags);

/* unix.c */
int	 guard_unix_target(struct guard_req *, const char *path,
	    const char *verb);

/* bind.c */
unsigned long guard_fd_flags(struct guard_req *, int fd);
int	 guard_sock_ours(const struct guard *, int fd);
int	 guard_bind(struct guard_req *, int sockfd, uint64_t addr,
	    int len);

/* fileops.c */
struct guard_op;
int	 guard_open(struct guard_req *, int dfd, uint64_t path,
	    int flags, mode_t mode);
int	 guard_truncate(struct guard_req *, uint64_t path, off_t len);
int	 guard_link(struct guard_req *, const __u64 *a, int at);
int	 guard_install(struct guard_req *, int parent,
	    const char *name, int flags, mode_t mode, int follow,
	    const struct stat *);

/* caller.c */
int	 guard_read_mem(struct guard_req *, uint64_t addr, void *buf,
	    size_t len);
int	 guard_read_str(struct guard_req *, uint64_t addr, char *buf,
	    size_t size);
int	 guard_valid(struct guard_req *);
int	 guard_peek(struct guard_req *, const struct iovec *local, size_t nl,
	    const struct iovec *remote, size_t nr);
int	 guard_base(struct guard_req *, int dfd);
pid_t	 guard_tgid(struct guard_req *);
void	 guard_umask_noted(struct guard_req *, mode_t);
void	 guard_umask(struct guard_req *);
int	 guard_tty(struct guard_req *, int flags, mode_t mode);
int	 guard_getfd(struct guard_req *, int fd);

/* made.c */
int	 guard_made_known(struct guard *, const struct stat *);
int	 guard_made_cb(void *, const struct stat *);
void	 guard_made_add(struct guard *, const struct stat *);
void	 guard_send(struct guard *, char tag, const char *a,
	    const char *b, const char *c);
void	 guard_created(struct guard_req *, const struct guard_path *,
	    int head_before);
void	 guard_moved(struct guard_req *, const struct guard_path *op,
	    const struct guard_path *np, int exchange);
int	 guard_head_before(struct guard_req *, const struct guard_path *);

/* check.c */
void	 guard_refuse(struct guard_req *, const char *path,
	    const char *verb, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));
void	 guard_readonly(struct guard_req *, const struct guard_path *,
	    const char *verb, int rc);

/* wtadd.c */
/*
 * Refuse the branch lock git branch takes for a git worktree add whose
 * path cannot be made (outside the writable directories, or there and
 * not empty): -EACCES (said), or 0.
 */
int	 guard_wtadd(struct guard_req *, const struct guard_path *);
/*
 * The PATH of "git [-C DIR] [-c K=V] worktree add [options] PATH", the
 * -C directories appended to dir; NULL for any other command line, or
 * one with what it does not read (an unknown option, --force).
 */
const char *guard_wtadd_path(char **argv, int argc, char *dir,
	    size_t dirlen);
int	 guard_hidden(struct guard_req *, const struct guard_path *,
	    const char *verb);
int	 guard_glob_moved(struct guard_req *, const struct guard_path *,
	    const struct guard_path *, const char *verb);
int	 guard_check(struct guard_req *, const struct guard_path *,
	    int ancestors_too, const char *verb);
void	 guard_state_moved(struct guard *, const char *from,
	    const char *to, int exchange);

/* walk.c */
int	 guard_last(const char *name, char *last, size_t size,
	    int *dots);
int	 guard_lexical(const char *base, const char *dir, char *out,
	    size_t size);
void	 guard_path_init(struct guard_path *);
void	 guard_path_clear(struct guard_path *);
int	 guard_at_keep(struct guard_req *, int dfd, const char *raw,
	    struct guard_path *, int keep);
int	 guard_at_str(struct guard_req *, int dfd, const char *raw,
	    struct guard_path *);
int	 guard_at(struct guard_req *, int dfd, uint64_t addr,
	    struct guard_path *);
int	 guard_magic(struct guard_req *, struct guard_path *,
	    int follow);
int	 guard_final(struct guard_req *, struct guard_path *,
	    int follow, int look);
int	 guard_parent_stat(const struct guard_path *, struct stat *);

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
 * Whether path (its directory: dirfd, whose fstat is dirst, or NULL when
 * not known yet) is, or with ancestors_too holds, a hook of the work
 * tree around it -- core.hooksPath, a hook manager's file -- when that
 * work tree is older than the run (made(arg, st) says whether its .git
 * was made during the run).  Unsure: 1.
 */
int	 gitwork_hooked(struct gitwork *, int dirfd, const struct stat *dirst,
	    const char *path, int ancestors_too,
	    int (*made)(void *, const struct stat *), void *arg);

#endif
