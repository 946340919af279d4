/*
 * Starting the sandbox: one clone(2) into new network, mount, PID and IPC
 * namespaces (and a user namespace when not root).  The child is PID 1
 * of the new PID namespace (reaper.c); the parent receives the proxy
 * listeners it created inside.  When the kernel refuses the namespaces
 * (a container), the command is confined without them (nons.c), or with
 * requireNamespaces the caller gets the reason and the fix -- never an
 * unsandboxed run.
 */
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/sched.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/launcher.h"
#include "launcher/sandbox/sandbox.h"

static int	sandbox_sysctl(const char *path, char *buf, size_t len);
static int	sandbox_yama(void);
static int	sandbox_nons(struct sandbox *, int err);

static int
sandbox_sysctl(const char *path, char *buf, size_t len)
{
	ssize_t	n;
	int	fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * The creation guard reads the command's memory and borrows its
 * descriptors (process_vm_readv, pidfd_getfd: ptrace access).  Yama's
 * ptrace_scope 1 (Ubuntu's default) allows that to an ancestor, which
 * the guard is (it runs in the reaper, PID 1 of the sandbox); 2 and 3
 * allow it to no unprivileged process: then nothing is run.  0, or -1
 * (said why).
 */
static int
sandbox_yama(void)
{
	char	v[32];

	if (sandbox_sysctl("/proc/sys/kernel/yama/ptrace_scope", v,
	    sizeof(v)) == -1 || strcmp(v, "0") == 0 || strcmp(v, "1") == 0)
		return 0;
	log_warnx("cannot create the sandbox: Yama's ptrace_scope is %s, "
	    "which lets no unprivileged process read another's memory, and "
	    "the creation guard must read the command's; run 'sysctl -w "
	    "kernel.yama.ptrace_scope=1' as root (1 is Ubuntu's default: "
	    "the guard is the command's ancestor)", v);
	return -1;
}

const char *
sandbox_ns_hint(int err)
{
	char	v[32];

	if (geteuid() != 0) {
		if (sandbox_sysctl("/proc/sys/kernel/unprivileged_userns_clone",
		    v, sizeof(v)) == 0 && strcmp(v, "0") == 0)
			return "unprivileged user namespaces are disabled; run "
			    "'sysctl -w kernel.unprivileged_userns_clone=1' as "
			    "root, or run pisbx-run as root";
		if (sandbox_sysctl(
		    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
		    v, sizeof(v)) == 0 && strcmp(v, "1") == 0)
			return "AppArmor restricts unprivileged user namespaces; "
			    "run 'sysctl -w kernel.apparmor_restrict_"
			    "unprivileged_userns=0' as root, or give pisbx-run "
			    "an AppArmor profile with the 'userns' permission";
		if (sandbox_sysctl("/proc/sys/user/max_user_namespaces", v,
		    sizeof(v)) == 0 && strcmp(v, "0") == 0)
			return "user namespaces are disabled "
			    "(user.max_user_namespaces=0); run 'sysctl -w "
			    "user.max_user_namespaces=15000' as root";
	}
	if (err == ENOSPC || err == EUSERS)
		return "the namespace limit is reached (sysctl user.max_*_"
		    "namespaces); raise it or end other sandboxes";
	if (err == EINVAL)
		return "this kernel lacks network, mount, PID, IPC or user "
		    "namespaces (CONFIG_*_NS); pisbx-run needs all of them";
	return "namespaces are not permitted here (inside a container? give "
	    "it a seccomp profile that allows clone/unshare with namespace "
	    "flags, or run it with --privileged)";
}

/*
 * clone(2) refused the namespaces with err: whether to run without them
 * (0, sb->nons set, the mode's line said) or not at all (-1, said why).
 * Only a refusal falls back -- a container's seccomp profile (EPERM),
 * a kernel or sysctl without them -- never a lack of memory or
 * processes; requireNamespaces, and a kernel whose Landlock cannot
 * confine the command without them, refuse.
 */
static int
sandbox_nons(struct sandbox *sb, int err)
{
	char	why[256];

	if (err != EPERM && err != EACCES && err != EINVAL && err != ENOSPC &&
	    err != EUSERS) {
		log_warnx("cannot create the sandbox's namespaces: %s",
		    strerror(err));
		return -1;
	}
	if (sb->require_ns) {
		log_warnx("cannot create the sandbox's namespaces: %s; %s; "
		    "requireNamespaces is set, so nothing was run (without "
		    "it, pisbx-run confines the command without namespaces)",
		    strerror(err), sandbox_ns_hint(err));
		return -1;
	}
	if (nons_possible(why, sizeof(why)) == -1) {
		log_warnx("cannot create the sandbox's namespaces: %s; %s; "
		    "and %s, so nothing was run", strerror(err),
		    sandbox_ns_hint(err), why);
		return -1;
	}
	snprintf(why, sizeof(why), "clone: %s", strerror(err));
	nons_line(why);
	sb->nons = 1;
	return 0;
}

void
sandbox_kill(const struct sandbox *sb, const struct sandbox_run *run)
{
	union sigval	v;

	if (run->pid <= 0)
		return;
	/*
	 * Without a PID namespace the reaper ends the command's processes
	 * (nons_kill_all), asked with a queued SIGTERM; SIGKILL follows
	 * when the parent reaps it, for a reaper that did not answer.
	 */
	if (sb->nons) {
		v.sival_int = JOBS_KILL;
		if (sigqueue(run->pid, SIGTERM, v) == 0)
			return;
	}
	kill(run->pid, SIGKILL);
}

int
sandbox_start(struct sandbox *sb, struct sandbox_run *run)
{
	unsigned long	flags;
	int		sv[2], fds[2], n, status;
	char		tag;
	pid_t		pid;

	run->pid = -1;
	run->sock = run->listen_http = run->listen_socks = -1;
	if (sandbox_yama() == -1)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("socketpair");
		return -1;
	}
	flags = CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC;
	if (sb->userns)
		flags |= CLONE_NEWUSER;
	fflush(stdout);
	fflush(stderr);
	sb->nons = 0;
	pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL,
	    NULL);
	if (pid == -1 && sandbox_nons(sb, errno) == 0)
		pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL,
		    NULL);
	if (pid == -1) {
		int err = errno;

		close(sv[0]);
		close(sv[1]);
		errno = err;
		return -1;
	}
	if (pid == 0) {
		close(sv[0]);
		reaper_main(sb, sv[1]);
	}
	if (!sb->nons)
		log_info("namespaces: %snetwork, mount, PID and IPC made; the "
		    "command's only way out is the proxy", sb->userns ?
		    "user, " : "");
	close(sv[1]);
	run->pid = pid;
	run->sock = sv[0];

	n = net_recv_fds(sv[0], &tag, fds, 2);
	if (n != 2 || tag != CTL_LISTENERS) {
		/* The child said why on stderr; collect it. */
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			;
		run->pid = -1;
		close(sv[0]);
		run->sock = -1;
		return -1;
	}
	run->listen_http = fds[0];
	run->listen_socks = fds[1];
	return 0;
}
