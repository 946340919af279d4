/*
 * The sandbox child: PID 1 of the new PID namespace.  It finishes the
 * namespaces (uid/gid maps, lo, the proxy listeners handed to the parent),
 * builds the mount namespace, then starts the command and stays behind as
 * its reaper: it forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT/SIGUSR1/SIGUSR2
 * (and SIGWINCH, SIGTSTP, SIGCONT),
 * reaps every orphan, and exits with the command's status the moment the
 * command ends -- which kills everything the command left running, since
 * a PID namespace dies with its init.  The reaper and the command each
 * lead a process group of their own, outside the caller's: the command's
 * is the job jobs.c gives the terminal to, and the reaper tells the
 * parent when the command stops or goes on.
 *
 * Before the command starts, the reaper drops every capability (root
 * included: it keeps uid 0 for file ownership but no privilege), sets
 * no_new_privs and enters the Landlock domain -- all while the parent
 * still starts the proxy -- and then waits for the parent's "go".  The
 * command is started with clone(CLONE_VM | CLONE_VFORK | CLONE_FILES):
 * the child loads the seccomp filter, whose notification fd lands in the
 * descriptor table it still shares with the reaper, and executes the
 * command (execve gives it a table of its own, without that close-on-exec
 * fd).  The reaper then serves the notifications itself, from guard
 * threads (guard.c): the creation guard is PID 1, an ancestor of every
 * process in the sandbox, in the same domain without privilege.  One
 * fork less than a separate guard, no descriptor handed over, and no
 * copy of the reaper's memory for a command that executes at once.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/sched.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/launcher.h"
#include "launcher/sandbox/sandbox.h"
#include "launcher/guard/guard.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC	(1U << 2)
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT			47
#define PR_CAP_AMBIENT_CLEAR_ALL	4
#endif

static const int reaper_forward[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH,
	SIGTSTP, SIGCONT,
};

static struct sigaction reaper_saved[sizeof(reaper_forward) /
    sizeof(*reaper_forward)];

/* What the command's child shares with the reaper until its exec. */
struct reaper_child {
	struct sandbox	*sb;
	int		 nfd;		/* the notification fd, or -1 */
};

static int	 reaper_write(const char *path, const char *text);
static int	 reaper_userns(const struct sandbox *);
static int	 reaper_drop_caps(void);
static int	 reaper_close_all(struct sandbox *, int *ctl);
static void	 reaper_nop_cb(int);
static int	 reaper_exec(void *);
static void	 reaper_pass(const struct sandbox *, pid_t, const siginfo_t *);
static void	 reaper_tell(const struct sandbox *, int ctl, int status);
static pid_t	 reaper_spawn(struct sandbox *, int *nfd);
__attribute__((noreturn)) static void reaper_fail(const char *what);

__attribute__((noreturn)) static void
reaper_fail(const char *what)
{
	log_warnx("cannot build the sandbox: %s", what);
	_exit(EXIT_SETUP);
}

static int
reaper_write(const char *path, const char *text)
{
	int	fd;
	ssize_t	n, len = (ssize_t)strlen(text);

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	n = write(fd, text, (size_t)len);
	close(fd);
	return n == len ? 0 : -1;
}

/* Map our own uid and gid into the new user namespace (nothing else). */
static int
reaper_userns(const struct sandbox *sb)
{
	char	map[64];

	if (reaper_write("/proc/self/setgroups", "deny") == -1 &&
	    errno != ENOENT) {
		log_warn("write /proc/self/setgroups");
		return -1;
	}
	snprintf(map, sizeof(map), "%lu %lu 1\n", (unsigned long)sb->uid,
	    (unsigned long)sb->uid);
	if (reaper_write("/proc/self/uid_map", map) == -1) {
		log_warn("write /proc/self/uid_map");
		return -1;
	}
	snprintf(map, sizeof(map), "%lu %lu 1\n", (unsigned long)sb->gid,
	    (unsigned long)sb->gid);
	if (reaper_write("/proc/self/gid_map", map) == -1) {
		log_warn("write /proc/self/gid_map");
		return -1;
	}
	return 0;
}

/* Drop every capability for good: bounding set, ambient, and the sets. */
static int
reaper_drop_caps(void)
{
	struct __user_cap_header_struct	hdr;
	struct __user_cap_data_struct	data[2];
	int				cap;

	for (cap = 0; cap < 64; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1 &&
		    errno == EINVAL)
			break;
	}
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capset, &hdr, data) == -1)
		return -1;
	if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) == 1)
		return -1;
	return 0;
}

/*
 * PID 1 holds nothing but the standard descriptors, the report channel
 * (moved to 3), the control socket (4: the command's stops go to the
 * parent on it) and the terminal (5, when job control has one) once the
 * command may run: the guard opens files for the command in this
 * process, and whatever else it held -- descriptors pisbx-run inherited
 * from its caller, libevent's -- would be one spelling away from the
 * command (redteam #1).  A socket cannot be reopened through /proc, and
 * the terminal is the command's own.
 */
static int
reaper_close_all(struct sandbox *sb, int *ctl)
{
	int	*keep[6], tmp[6], i, n = 0, first = 3;

	if (sb->report_fd != -1)
		keep[n++] = &sb->report_fd;
	keep[n++] = ctl;
	if (sb->tty != -1)
		keep[n++] = &sb->tty;
	for (i = 0; i < 3; i++)
		if (sb->tty_hold[i] != -1)
			keep[n++] = &sb->tty_hold[i];
	/* Out of the way first: a kept one may sit where another goes. */
	for (i = 0; i < n; i++)
		if ((tmp[i] = fcntl(*keep[i], F_DUPFD_CLOEXEC, 64)) == -1)
			return -1;
	for (i = 0; i < n; i++) {
		if (dup3(tmp[i], first, O_CLOEXEC) == -1)
			return -1;
		*keep[i] = first++;
	}
	if (sb->report_fd == 3)
		(void)shutdown(3, SHUT_RD);
	if (syscall(SYS_close_range, first, ~0U, 0) == 0)
		return 0;
	for (; first < sysconf(_SC_OPEN_MAX); first++)
		(void)close(first);
	return 0;
}

static void
reaper_nop_cb(int sig)
{
	(void)sig;
}

/*
 * The command's child, on its own stack in the reaper's memory, the
 * reaper waiting (CLONE_VFORK): the caller's signal dispositions and
 * mask, the seccomp filter, exec.  Only system calls and the stack here:
 * nothing that takes a lock the reaper might hold.
 */
static int
reaper_exec(void *arg)
{
	struct reaper_child	*rc = arg;
	struct sandbox		*sb = rc->sb;
	char			 msg[256];
	size_t			 i;
	int			 err;

	/* The caller's dispositions (an ignored SIGHUP stays ignored). */
	for (i = 0; i < sizeof(reaper_forward) / sizeof(*reaper_forward); i++)
		sigaction(reaper_forward[i], &reaper_saved[i], NULL);
	signal(SIGCHLD, SIG_DFL);
	/*
	 * A process group of its own, the terminal's foreground when the
	 * caller's group held it (jobs.c); SIGTTOU is still blocked.
	 */
	setpgid(0, 0);
	if (sb->tty_give)
		tcsetpgrp(sb->tty, getpid());
	/* A terminal the command may not take: reading it fails (EIO). */
	if (sb->tty_none) {
		signal(SIGTTIN, SIG_IGN);
		signal(SIGTTOU, SIG_IGN);
	}
	/*
	 * Without a PID namespace: a Landlock domain of the command's own,
	 * nested in the reaper's, so that it signals nothing outside it --
	 * not the reaper, not the agent -- and dies with the reaper.
	 */
	if (sb->nons && (landlock_scope_only() == -1 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)) {
		err = errno;
		snprintf(msg, sizeof(msg), "pisbx-run: cannot build the "
		    "sandbox: landlock scope: %s\n", strerror(err));
		(void)!write(STDERR_FILENO, msg, strlen(msg));
		_exit(EXIT_SETUP);
	}
	if ((rc->nfd = seccomp_apply(sb)) == -1) {
		err = errno;
		snprintf(msg, sizeof(msg), "%s: cannot build the sandbox: "
		    "seccomp: %s\n", log_getname(), strerror(err));
		(void)!write(STDERR_FILENO, msg, strlen(msg));
		_exit(EXIT_SETUP);
	}
	timing_mark(sb->times, TIMING_EXEC);
	/*
	 * Every signal was blocked until now, so one forwarded meanwhile is
	 * delivered with the caller's dispositions.
	 */
	sigprocmask(SIG_SETMASK, &sb->sigmask, NULL);
	execvpe(sb->argv[0], sb->argv, sb->envp);
	err = errno;
	snprintf(msg, sizeof(msg), "%s: %s: %s\n", log_getname(),
	    sb->argv[0], strerror(err));
	(void)!write(STDERR_FILENO, msg, strlen(msg));
	_exit(err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

/*
 * Pass a signal on to the command.  One the parent sent with sigqueue(3)
 * (from outside the namespace: si_pid 0) says where: the command's group
 * (a terminal's signal), and for SIGCONT whether that group gets the
 * terminal first.  SIGCONT continues the whole group, as "fg" does.
 */
static void
reaper_pass(const struct sandbox *sb, pid_t cmd, const siginfo_t *si)
{
	size_t	i;
	int	how = 0;

	for (i = 0; i < sizeof(reaper_forward) / sizeof(*reaper_forward); i++)
		if (reaper_forward[i] == si->si_signo)
			break;
	if (i == sizeof(reaper_forward) / sizeof(*reaper_forward))
		return;
	/* The parent is outside the PID namespace (si_pid 0), or without
	 * one, our parent. */
	if (si->si_code == SI_QUEUE && (si->si_pid == 0 ||
	    (sb->nons && si->si_pid == getppid())))
		how = si->si_value.sival_int;
	if (sb->nons && (how & JOBS_KILL)) {
		nons_kill_all();
		_exit(128 + SIGKILL);
	}
	if (si->si_signo == SIGCONT && (how & JOBS_GIVE) && sb->tty != -1)
		tcsetpgrp(sb->tty, cmd);
	if (si->si_signo == SIGCONT || (how & JOBS_GROUP))
		kill(-cmd, si->si_signo);
	else
		kill(cmd, si->si_signo);
}

/*
 * Tell the parent the command stopped (with the signal, and whether a
 * group of the sandbox held the terminal: only those are visible here)
 * or goes on.
 */
static void
reaper_tell(const struct sandbox *sb, int ctl, int status)
{
	unsigned char	m[3];

	m[0] = WIFSTOPPED(status) ? CTL_STOPPED : CTL_CONTINUED;
	m[1] = WIFSTOPPED(status) ? (unsigned char)WSTOPSIG(status) : 0;
	m[2] = sb->tty != -1 && tcgetpgrp(sb->tty) > 0;
	(void)send(ctl, m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * Start the command: its pid, and in *nfd the seccomp notification fd
 * (-1 when the filter could not be loaded: the child said why and
 * exits).
 */
static pid_t
reaper_spawn(struct sandbox *sb, int *nfd)
{
	struct reaper_child	 rc;
	size_t			 argc = 0, size;
	char			*stack;
	pid_t			 pid;

	/* execvpe keeps the PATH it tries and a script's argv on the stack. */
	while (sb->argv[argc] != NULL)
		argc++;
	size = 256 * 1024 + (argc + 2) * sizeof(char *) + PATH_MAX;
	size = (size + 4095) & ~(size_t)4095;
	stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	rc.sb = sb;
	rc.nfd = -1;
	pid = clone(reaper_exec, stack + size, CLONE_VM | CLONE_VFORK |
	    CLONE_FILES | SIGCHLD, &rc);
	/*
	 * Not unmapped: PID 1 starts one command and the few pages the
	 * child touched stay until it exits, where an munmap would flush
	 * the TLB of every CPU the child ran on (an exit to the hypervisor
	 * each on a paravirtualised machine).
	 */
	*nfd = rc.nfd;
	return pid;
}

void
reaper_main(struct sandbox *sb, int ctl)
{
	struct guard_conf gc;
	sigset_t	 all;
	siginfo_t	 si;
	pid_t		 cmd, pid;
	int		 fds[2], status, code = EXIT_SETUP, nfd, none;
	size_t		 i;
	char		 tag;

	/*
	 * Die with the parent.  The parent may already be gone: then its end
	 * of ctl is closed and the send below fails, so nothing runs.
	 */
	timing_mark(sb->times, TIMING_CLONE);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
		reaper_fail("PR_SET_PDEATHSIG");
	/* No descriptor of the caller reaches the command. */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) == -1) {
		for (i = 3; i < 1024; i++)
			if ((int)i != ctl)
				(void)fcntl((int)i, F_SETFD, FD_CLOEXEC);
	}
	if (sb->nons) {
		if (nons_listeners(sb, fds) == -1) {
			log_warn("listen on 127.0.0.1");
			reaper_fail("proxy listeners");
		}
	} else {
		if (sb->userns && reaper_userns(sb) == -1)
			reaper_fail("user namespace maps");
		if (net_lo_up() == -1) {
			log_warn("bring up lo");
			reaper_fail("network namespace");
		}
		if ((fds[0] = net_listen_loopback(SANDBOX_HTTP_PORT)) == -1 ||
		    (fds[1] = net_listen_loopback(SANDBOX_SOCKS_PORT)) == -1) {
			log_warn("listen on 127.0.0.1 in the sandbox");
			reaper_fail("proxy listeners");
		}
	}
	if (net_send_fds(ctl, CTL_LISTENERS, fds, 2) == -1)
		_exit(EXIT_SETUP);	/* the parent is gone */
	close(fds[0]);
	close(fds[1]);
	timing_mark(sb->times, TIMING_NETNS);

	/*
	 * Without a mount namespace, Landlock alone (landlock_nons), and
	 * the run directory's files on the host's disk.
	 */
	if (!sb->nons && mount_apply(sb) == -1)
		reaper_fail("filesystem policy (see above)");
	if (sb->nons && mount_runfiles_nons(sb) == -1)
		reaper_fail("the run directory's files");
	if (sb->nons && chdir(sb->cwd) == -1) {
		log_warn("chdir %s", sb->cwd);
		reaper_fail("the working directory");
	}
	timing_mark(sb->times, TIMING_MOUNTS);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

	/*
	 * PID 1 gets a signal from outside its namespace only when it has a
	 * handler; blocked and collected with sigwaitinfo below.
	 */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	for (i = 0; i < sizeof(reaper_forward) / sizeof(*reaper_forward); i++) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = reaper_nop_cb;
		sigaction(reaper_forward[i], &sa, &reaper_saved[i]);
		if (reaper_saved[i].sa_handler != SIG_IGN)
			reaper_saved[i].sa_handler = SIG_DFL;
	}
	signal(SIGCHLD, reaper_nop_cb);

	/* Out of the caller's process group: see jobs.c. */
	if (setpgid(0, 0) == -1)
		reaper_fail("setpgid");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		reaper_fail("no_new_privs");
	if (landlock_apply(sb) == -1)
		reaper_fail("landlock");
	if (reaper_drop_caps() == -1)
		reaper_fail("cannot drop capabilities");
	timing_mark(sb->times, TIMING_LOCKED);

	/* The command runs only once the proxy serves its listeners. */
	if (net_recv_fds(ctl, &tag, &none, 0) != 0 || tag != CTL_GO)
		_exit(EXIT_SETUP);
	if (reaper_close_all(sb, &ctl) == -1)
		reaper_fail("cannot close inherited descriptors");
	if ((cmd = reaper_spawn(sb, &nfd)) == -1)
		reaper_fail("cannot start the command");
	/* The command has its own dispositions now; the guard writes pipes. */
	signal(SIGPIPE, SIG_IGN);
	gc.plan = &sb->plan;
	gc.tmpdir = sb->tmpdir;
	gc.config_file = sb->config_file;
	gc.allow_git_config = sb->allow_git_config;
	gc.report_fd = sb->report_fd;
	gc.allow_all_unix = sb->allow_all_unix;
	gc.nons = sb->nons;
	gc.proxy_http = sb->proxy_http;
	gc.proxy_socks = sb->proxy_socks;
	if (nfd != -1 && guard_start(&gc, nfd) == -1)
		reaper_fail("cannot start the creation guard");

	for (;;) {
		if (sigwaitinfo(&all, &si) == -1)
			continue;
		if (si.si_signo != SIGCHLD) {
			reaper_pass(sb, cmd, &si);
			continue;
		}
		while ((pid = waitpid(-1, &status, WNOHANG | WUNTRACED |
		    WCONTINUED)) > 0) {
			if (pid != cmd)
				continue;
			if (WIFSTOPPED(status) || WIFCONTINUED(status)) {
				reaper_tell(sb, ctl, status);
				continue;
			}
			if (WIFEXITED(status))
				code = WEXITSTATUS(status);
			else if (WIFSIGNALED(status))
				code = 128 + WTERMSIG(status);
			/*
			 * Everything else in the namespace dies with us;
			 * without one, we end it.
			 */
			if (sb->nons)
				nons_kill_all();
			timing_mark(sb->times, TIMING_EXITED);
			_exit(code);
		}
	}
}
