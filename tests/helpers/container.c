/*
 * container: run a command as a container runtime would confine it, on a
 * machine without one -- every capability dropped (effective, permitted,
 * inheritable, ambient and the bounding set), no_new_privs, and the
 * seccomp filter of Docker's default profile for a process without
 * capabilities.  tests/integration/run-container.sh runs pisbx-run under
 * it, to prove the mode pisbx-run falls back to where namespaces cannot
 * be made.
 *
 *   container [--ptrace-calls] --check | COMMAND [ARG...]
 *
 * --check prints what the confinement refuses (unshare, clone with
 * namespace flags, mount, setns, pidfd_getfd) and exits 0 when all of it
 * is refused.  --ptrace-calls adds the profile's entry for a container
 * granted CAP_SYS_PTRACE (pidfd_getfd, kcmp, ptrace...), the capability
 * itself still dropped: a profile that lets pisbx-run's guard borrow the
 * command's sockets.
 *
 * The rules are moby's profiles/seccomp/default.json as it applies to a
 * container granted no capability, written out by hand from that file
 * (x86-64 and arm64 entries; the s390 clone rule and the per-capability
 * allowances do not apply): default action ERRNO(EPERM); the plain
 * allow-list below; ptrace and process_vm_readv/writev allowed (its
 * "minKernel 4.8" entry); socket allowed unless the family is AF_VSOCK;
 * personality with the five listed values; arch_prctl and modify_ldt on
 * x86; clone allowed only when no namespace flag (CLONE_NEWNS,
 * NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: mask 0x7e020000)
 * is set; clone3 ERRNO(ENOSYS).  Everything the profile grants only with
 * a capability (mount, unshare, setns, bpf, perf_event_open,
 * pidfd_getfd, kcmp, chroot, ...) falls to the default: EPERM.  A name
 * this libseccomp does not know is skipped, as runc skips it.
 */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/mount.h>
#include <linux/capability.h>
#include <linux/sched.h>

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT			47
#define PR_CAP_AMBIENT_CLEAR_ALL	4
#endif

/* The profile's unconditional SCMP_ACT_ALLOW names, in its order. */
static const char *const allowed[] = {
	"accept", "accept4", "access", "adjtimex", "alarm", "bind", "brk",
	"capget", "capset", "chdir", "chmod", "chown", "chown32",
	"clock_adjtime", "clock_adjtime64", "clock_getres",
	"clock_getres_time64", "clock_gettime", "clock_gettime64",
	"clock_nanosleep", "clock_nanosleep_time64", "close", "close_range",
	"connect", "copy_file_range", "creat", "dup", "dup2", "dup3",
	"epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old",
	"epoll_pwait", "epoll_pwait2", "epoll_wait", "epoll_wait_old",
	"eventfd", "eventfd2", "execve", "execveat", "exit", "exit_group",
	"faccessat", "faccessat2", "fadvise64", "fadvise64_64", "fallocate",
	"fanotify_mark", "fchdir", "fchmod", "fchmodat", "fchown", "fchown32",
	"fchownat", "fcntl", "fcntl64", "fdatasync", "fgetxattr",
	"flistxattr", "flock", "fork", "fremovexattr", "fsetxattr", "fstat",
	"fstat64", "fstatat64", "fstatfs", "fstatfs64", "fsync", "ftruncate",
	"ftruncate64", "futex", "futex_time64", "futex_waitv", "futimesat",
	"getcpu", "getcwd", "getdents", "getdents64", "getegid", "getegid32",
	"geteuid", "geteuid32", "getgid", "getgid32", "getgroups",
	"getgroups32", "getitimer", "getpeername", "getpgid", "getpgrp",
	"getpid", "getppid", "getpriority", "getrandom", "getresgid",
	"getresgid32", "getresuid", "getresuid32", "getrlimit",
	"get_robust_list", "getrusage", "getsid", "getsockname",
	"getsockopt", "get_thread_area", "gettid", "gettimeofday", "getuid",
	"getuid32", "getxattr", "inotify_add_watch", "inotify_init",
	"inotify_init1", "inotify_rm_watch", "io_cancel", "ioctl",
	"io_destroy", "io_getevents", "io_pgetevents", "io_pgetevents_time64",
	"ioprio_get", "ioprio_set", "io_setup", "io_submit", "io_uring_enter",
	"io_uring_register", "io_uring_setup", "ipc", "kill",
	"landlock_add_rule", "landlock_create_ruleset",
	"landlock_restrict_self", "lchown", "lchown32", "lgetxattr", "link",
	"linkat", "listen", "listxattr", "llistxattr", "_llseek",
	"lremovexattr", "lseek", "lsetxattr", "lstat", "lstat64", "madvise",
	"membarrier", "memfd_create", "memfd_secret", "mincore", "mkdir",
	"mkdirat", "mknod", "mknodat", "mlock", "mlock2", "mlockall", "mmap",
	"mmap2", "mprotect", "mq_getsetattr", "mq_notify", "mq_open",
	"mq_timedreceive", "mq_timedreceive_time64", "mq_timedsend",
	"mq_timedsend_time64", "mq_unlink", "mremap", "msgctl", "msgget",
	"msgrcv", "msgsnd", "msync", "munlock", "munlockall", "munmap",
	"name_to_handle_at", "nanosleep", "newfstatat", "_newselect", "open",
	"openat", "openat2", "pause", "pidfd_open", "pidfd_send_signal",
	"pipe", "pipe2", "pkey_alloc", "pkey_free", "pkey_mprotect", "poll",
	"ppoll", "ppoll_time64", "prctl", "pread64", "preadv", "preadv2",
	"prlimit64", "process_mrelease", "pselect6", "pselect6_time64",
	"pwrite64", "pwritev", "pwritev2", "read", "readahead", "readlink",
	"readlinkat", "readv", "recv", "recvfrom", "recvmmsg",
	"recvmmsg_time64", "recvmsg", "remap_file_pages", "removexattr",
	"rename", "renameat", "renameat2", "restart_syscall", "rmdir", "rseq",
	"rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo",
	"rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait",
	"rt_sigtimedwait_time64", "rt_tgsigqueueinfo", "sched_getaffinity",
	"sched_getattr", "sched_getparam", "sched_get_priority_max",
	"sched_get_priority_min", "sched_getscheduler",
	"sched_rr_get_interval", "sched_rr_get_interval_time64",
	"sched_setaffinity", "sched_setattr", "sched_setparam",
	"sched_setscheduler", "sched_yield", "seccomp", "select", "semctl",
	"semget", "semop", "semtimedop", "semtimedop_time64", "send",
	"sendfile", "sendfile64", "sendmmsg", "sendmsg", "sendto",
	"setfsgid", "setfsgid32", "setfsuid", "setfsuid32", "setgid",
	"setgid32", "setgroups", "setgroups32", "setitimer", "setpgid",
	"setpriority", "setregid", "setregid32", "setresgid", "setresgid32",
	"setresuid", "setresuid32", "setreuid", "setreuid32", "setrlimit",
	"set_robust_list", "setsid", "setsockopt", "set_thread_area",
	"set_tid_address", "setuid", "setuid32", "setxattr", "shmat",
	"shmctl", "shmdt", "shmget", "shutdown", "sigaltstack", "signalfd",
	"signalfd4", "sigprocmask", "sigreturn", "socketcall", "socketpair",
	"splice", "stat", "stat64", "statfs", "statfs64", "statx", "symlink",
	"symlinkat", "sync", "sync_file_range", "syncfs", "sysinfo", "tee",
	"tgkill", "time", "timer_create", "timer_delete", "timer_getoverrun",
	"timer_gettime", "timer_gettime64", "timer_settime",
	"timer_settime64", "timerfd_create", "timerfd_gettime",
	"timerfd_gettime64", "timerfd_settime", "timerfd_settime64", "times",
	"tkill", "truncate", "truncate64", "ugetrlimit", "umask", "uname",
	"unlink", "unlinkat", "utime", "utimensat", "utimensat_time64",
	"utimes", "vfork", "vmsplice", "wait4", "waitid", "waitpid", "write",
	"writev",
	/* "minKernel": "4.8" */
	"process_vm_readv", "process_vm_writev", "ptrace",
	/* amd64, x32 (arch_prctl); amd64, x32, x86 (modify_ldt) */
#if defined(__x86_64__) || defined(__i386__)
	"arch_prctl", "modify_ldt",
#endif
};

/* The profile's entry for a container granted CAP_SYS_PTRACE. */
static const char *const allowed_ptrace[] = {
	"kcmp", "pidfd_getfd", "process_madvise", "process_vm_readv",
	"process_vm_writev", "ptrace",
};

/* personality(2) values the profile allows. */
static const unsigned long personalities[] = {
	0, 8, 131072, 131080, 4294967295UL,
};

#define CLONE_NS_MASK	0x7e020000UL	/* the profile's 2114060288 */
#define AF_VSOCK_NR	40

static int	container_caps(void);
static int	container_seccomp(int ptrace_calls);
static int	container_check(int ptrace_calls);

/* Drop every capability: bounding set, ambient, then the three sets. */
static int
container_caps(void)
{
	struct __user_cap_header_struct	hdr;
	struct __user_cap_data_struct	data[2];
	int				cap;

	for (cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1 &&
		    errno == EINVAL)
			break;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1 &&
	    errno != EINVAL)
		return -1;
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capset, &hdr, data) == -1)
		return -1;
	return prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) == 0 ? 0 : -1;
}

/* Docker's default profile for a container without capabilities. */
static int
container_seccomp(int ptrace_calls)
{
	scmp_filter_ctx	ctx;
	size_t		i;
	int		nr, rc = -1;

	if ((ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM))) == NULL)
		return -1;
	for (i = 0; ptrace_calls && i < sizeof(allowed_ptrace) /
	    sizeof(*allowed_ptrace); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW,
		    seccomp_syscall_resolve_name(allowed_ptrace[i]), 0) != 0)
			goto done;
	for (i = 0; i < sizeof(allowed) / sizeof(*allowed); i++) {
		if ((nr = seccomp_syscall_resolve_name(allowed[i])) ==
		    __NR_SCMP_ERROR)
			continue;	/* not on this architecture */
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) != 0)
			goto done;
	}
	if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
	    SCMP_A0(SCMP_CMP_NE, AF_VSOCK_NR)) != 0)
		goto done;
	for (i = 0; i < sizeof(personalities) / sizeof(*personalities); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality),
		    1, SCMP_A0(SCMP_CMP_EQ, personalities[i])) != 0)
			goto done;
	if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NS_MASK, 0)) != 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3),
	    0) != 0)
		goto done;
	/* seccomp_load sets no_new_privs (SCMP_FLTATR_CTL_NNP). */
	rc = seccomp_load(ctx);
done:
	seccomp_release(ctx);
	return rc;
}

/* Say what the confinement refuses; 0 when all of it is. */
static int
container_check(int ptrace_calls)
{
	long	r;
	int	bad = 0;

	r = syscall(SYS_unshare, CLONE_NEWUSER);
	printf("unshare(CLONE_NEWUSER) %s\n", r == -1 ? strerror(errno) : "ok");
	bad += r != -1;
	r = syscall(SYS_unshare, CLONE_NEWNET);
	printf("unshare(CLONE_NEWNET) %s\n", r == -1 ? strerror(errno) : "ok");
	bad += r != -1;
	r = syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNET | SIGCHLD, NULL,
	    NULL, NULL, NULL);
	if (r == 0)
		_exit(0);
	printf("clone(CLONE_NEWUSER|CLONE_NEWNET) %s\n", r == -1 ?
	    strerror(errno) : "ok");
	bad += r != -1;
	r = syscall(SYS_mount, "none", "/", NULL, MS_REMOUNT, NULL);
	printf("mount %s\n", r == -1 ? strerror(errno) : "ok");
	bad += r != -1;
	r = syscall(SYS_setns, 0, 0);
	printf("setns %s\n", r == -1 && errno == EPERM ? strerror(errno) :
	    "not refused");
	bad += !(r == -1 && errno == EPERM);
	r = syscall(SYS_pidfd_getfd, 0, 0, 0);
	printf("pidfd_getfd %s\n", r == -1 && errno == EPERM ?
	    strerror(errno) : "not refused");
	bad += !ptrace_calls && !(r == -1 && errno == EPERM);
	printf("no_new_privs %d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	return bad == 0 ? 0 : 1;
}

int
main(int argc, char *argv[])
{
	int	check, ptrace_calls = 0;

	if (argc > 1 && strcmp(argv[1], "--ptrace-calls") == 0) {
		ptrace_calls = 1;
		argc--;
		argv++;
	}
	check = argc > 1 && strcmp(argv[1], "--check") == 0;
	if (argc < 2) {
		fprintf(stderr, "usage: container [--ptrace-calls] --check | COMMAND [ARG...]\n");
		return 2;
	}
	if (container_caps() == -1) {
		perror("container: drop capabilities");
		return 125;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    container_seccomp(ptrace_calls) != 0) {
		fprintf(stderr, "container: cannot load the seccomp profile\n");
		return 125;
	}
	if (check) {
		fflush(stdout);
		return container_check(ptrace_calls);
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "container: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
