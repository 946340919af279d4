/*
 * launcher/sandbox/: the child.  sandbox_start clones it into new
 * namespaces, where it becomes PID 1 (reaper.c): it maps its ids and
 * brings lo up (netns.c), hands its loopback listeners to the parent,
 * builds the mount namespace from the plan (mount.c), restricts itself
 * with Landlock (landlock.c), starts the guard's threads, and runs the
 * command, which loads the seccomp filter compiled at build time
 * (seccomp.c's rules, seccomp_gen.c, seccomp_load.c) before its exec.
 * timing.c's page is shared by all the run's processes for -v.
 */
#ifndef PISBX_LAUNCHER_SANDBOX_H
#define PISBX_LAUNCHER_SANDBOX_H

#include <sys/types.h>
#include <netinet/in.h>

#include <signal.h>

#include "launcher/fs/fs.h"

/*
 * The steps of a run, timed for -v (timing.c), in the order they happen
 * on the way to the command and back.
 */
enum timing_mark {
	TIMING_START,		/* parent: run() begins */
	TIMING_CONFIG,		/* parent: the config is loaded */
	TIMING_POLICY,		/* parent: policy, environment, run dir ready */
	TIMING_CLONE,		/* reaper: in its new namespaces */
	TIMING_NETNS,		/* reaper: ids mapped, lo up, listeners sent */
	TIMING_MOUNTS,		/* reaper: the mount namespace is built */
	TIMING_LOCKED,		/* Landlock, no capabilities, no_new_privs */
	TIMING_PROXY,		/* parent: the proxy serves; "go" sent */
	TIMING_EXEC,		/* command: seccomp filter loaded; exec */
	TIMING_EXITED,		/* reaper: the command ended */
	TIMING_REAPED,		/* parent: the sandbox is gone */
	TIMING_DONE,		/* parent: cleaned up */
	TIMING_N
};
struct timing;

/*
 * A file of the run directory bound read-only over another (the run's
 * CA bundle over the system's), with namespaces only: without them the
 * original stays, and the environment alone points at ours.
 */
struct sandbox_bind {
	char		*source;
	char		*target;	/* absolute, resolved */
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
	int		 sends_kernel;	/* sends go to the kernel, Unix datagram
					   sockets refused (seccomp_sends) */
	char		 sends_why[160]; /* -v: why that way */
	int		 allow_userns;	/* allowNestedUserNamespaces */
	int		 require_ns;	/* requireNamespaces: never nons */
	int		 nons;		/* no namespaces could be made: the
					   command shares the host's (nons.c) */
	struct sockaddr_in proxy_http;	/* nons: where the proxy listens */
	struct sockaddr_in proxy_socks;
	struct fs_plan	 plan;
	int		 allow_git_config;
	const char	*config_file;	/* to name in refusals (policy_hint_file) */
	int		 report_fd;	/* guard -> parent: repositories made,
					   refusals (SOCK_SEQPACKET) */
	char		*rundir;	/* private per-run dir on the host */
	char		*tmpdir;	/* rundir/tmp: the command's TMPDIR */
	struct fs_runfiles files;	/* the rest of rundir, in memory */
	char		*empty;		/* rundir/empty: hides denied files */
	char		*ssh_config;	/* rundir/ssh_config, or NULL */
	const struct sandbox_bind *binds;	/* the caller's */
	size_t		 nbinds;
	sigset_t	 sigmask;	/* the caller's, for the command */
	int		 tty;		/* the controlling terminal, or -1 */
	int		 tty_give;	/* the command starts in its foreground */
	int		 tty_none;	/* ... which none of its stdio is */
	int		 tty_hold[3];	/* reaper: masters keeping the numbers
					   of the inherited terminals in the
					   sandbox's devpts, or -1 (mount.c) */
	int		 verbose;
	struct timing	*times;		/* -v: shared with the sandbox */
};

/* A started sandbox, seen from the parent. */
struct sandbox_run {
	pid_t		 pid;		/* PID-namespace init (the reaper) */
	int		 sock;		/* control socket to the reaper */
	int		 listen_http;	/* listeners inside the sandbox's netns */
	int		 listen_socks;
};

/* mount.c */
/* Build the mount namespace's view (runs in the sandbox child). */
int	 mount_apply(struct sandbox *);
/*
 * Without a mount namespace: the run directory's files written into it
 * on the host (the parent removes it at exit).
 */
int	 mount_runfiles_nons(const struct sandbox *);

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
/*
 * A Landlock domain nested in the current one that scopes signals and
 * abstract Unix sockets only: the command cannot signal its reaper.
 */
int	 landlock_scope_only(void);

/* seccomp.c, seccomp_load.c */
/*
 * The filter comes in one variant per way Unix sockets are allowed, each
 * with and without new user namespaces: SECCOMP_USERNS is a bit.
 */
enum seccomp_variant {
	SECCOMP_UNIX_LISTED = 0,	/* default: through the guard (those
					   bound during the run,
					   allowUnixSockets) */
	SECCOMP_UNIX_ALL = 1,		/* allowAllUnixSockets */
	SECCOMP_USERNS = 2,		/* allowNestedUserNamespaces */
	/*
	 * No namespaces (a container that refuses them): the command shares
	 * the host's network, so every connect and send with an address
	 * goes to the guard whatever else the variant says, socket(2) makes
	 * only TCP and Unix sockets, and listen(2) is the guard's.  A rule
	 * that lets such a call pass the guard because a network namespace
	 * makes it safe must exclude this bit.
	 */
	SECCOMP_NONS = 4,
	/*
	 * With namespaces and Unix sockets through the guard: sendmsg,
	 * sendmmsg and sendto go straight to the kernel, and socket(2) and
	 * socketpair(2) of an AF_UNIX socket other than a stream or
	 * seqpacket one go to the guard, which refuses them (the run has
	 * no socket on which an address could leave the sandbox).  No
	 * effect with SECCOMP_UNIX_ALL or SECCOMP_NONS.
	 */
	SECCOMP_SENDS_KERNEL = 8,
	SECCOMP_NVARIANTS = 16
};
struct sock_filter;
/* A BPF program compiled at build time (seccomp_gen.c). */
struct seccomp_prog {
	const struct sock_filter	*insns;
	unsigned short			 len;
};
/* The build's programs, by variant (generated). */
extern const struct seccomp_prog seccomp_progs[SECCOMP_NVARIANTS];
/*
 * The command's filter as libseccomp rules (a scmp_filter_ctx, for
 * seccomp_gen and the tests): socket families outside an allow-list, new
 * user namespaces, io_uring, mounts, keyrings, TIOCSTI and kernel attack
 * surface refused; creating and writing files, bind, and umask sent to
 * the guard.  NULL on failure.
 */
void	*seccomp_filter_build(enum seccomp_variant);
/* The variant the sandbox's config asks for. */
enum seccomp_variant seccomp_variant(const struct sandbox *);
/*
 * Whether the command's sends may go straight to the kernel (sets
 * sb->sends_kernel and sb->sends_why): not when nlisted sockets are in
 * network.allowUnixSockets, datagram (network.allowUnixDatagramSockets)
 * is set, or one of the descriptors 0-2 it inherits is a socket other
 * than an AF_UNIX stream or seqpacket one.  Before the clone.
 */
void	 seccomp_sends(struct sandbox *, size_t nlisted, int datagram);
/* -v: the one line saying where the command's sends go, and why. */
void	 seccomp_sends_say(const struct sandbox *);
/*
 * Install the compiled filter of the sandbox's variant (no_new_privs is
 * set).  Returns the notification fd (close-on-exec), or -1.
 */
int	 seccomp_apply(const struct sandbox *);

/* nons.c */
/* Whether the kernel can confine a command without namespaces (why not). */
int	 nons_possible(char *why, size_t len);
/* The one line at start naming the mode and what is weaker. */
void	 nons_line(const char *reason);
/* The proxy's listeners on loopback ports (sb->proxy_*); subreaper. */
int	 nons_listeners(struct sandbox *, int fds[2]);
/* Kill and reap every process the command left (the reaper's). */
void	 nons_kill_all(void);

/* sandbox.c */
/* Clone the sandbox; the child never returns. */
int	 sandbox_start(struct sandbox *, struct sandbox_run *);
/* Explain why namespaces are unavailable, with a fix. */
const char *sandbox_ns_hint(int err);
/*
 * End the sandbox at once (a timeout, a failed start): with namespaces
 * its init dies, without them the reaper kills what the command left.
 */
void	 sandbox_kill(const struct sandbox *, const struct sandbox_run *);

/* reaper.c */
__attribute__((noreturn)) void reaper_main(struct sandbox *, int ctl);

/* timing.c */
/* A page shared with the processes the run starts; NULL on failure. */
struct timing *timing_new(void);
/* Record now as mark m (nothing when tm is NULL). */
void	 timing_mark(struct timing *, enum timing_mark);
/* Say what each step cost (-v), after marking TIMING_DONE. */
void	 timing_print(const struct timing *);
void	 timing_free(struct timing *);

#endif
