/*
 * The floor of a creation guard built on seccomp user notification, and
 * the bare cost it adds to.
 *
 *   guard_floor bare   [--count N] [--dir D]
 *	N creates (openat O_CREAT|O_EXCL, close) of fresh files in D.
 *   guard_floor notify [--count N] [--dir D] [--same-cpu]
 *	The same creates by a child whose openat(O_CREAT) stops in the
 *	kernel (SECCOMP_RET_USER_NOTIF); this process, its supervisor, does
 *	the least a race-free guard must: receive the notification, read the
 *	path from the child's memory (process_vm_readv), check that the
 *	notification is still valid, create the file itself and install the
 *	fd in the child with SECCOMP_IOCTL_NOTIF_ADDFD (ADDFD_FLAG_SEND
 *	answers the call with it).  --same-cpu pins both to the CPU this
 *	process started on: a wake-up then needs no cross-CPU interrupt,
 *	which costs much of the round trip on a paravirtualised machine.
 *	--sync asks the kernel for the same (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
 *	Linux 6.6): the caller and its supervisor hand the CPU to each other
 *	instead of waking one another across CPUs; unpinned.
 *
 * Prints "MODE N us_per_create X".  Run `bare` inside a sandbox to see
 * what its guard costs per create against this floor (make bench does).
 */
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND	(1UL << 1)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS	SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP	(1UL << 0)
#endif

#if defined(__x86_64__)
#define FLOOR_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FLOOR_ARCH	AUDIT_ARCH_AARCH64
#else
#error "guard_floor: unknown architecture"
#endif

static double	 floor_now(void);
static double	 floor_creates(long);
static int	 floor_filter(void);
static int	 floor_send_fd(int, int);
static int	 floor_recv_fd(int);
static int	 floor_supervise(int, long);
static void	 floor_usage(void) __attribute__((noreturn));

static void
floor_usage(void)
{
	fprintf(stderr, "usage: guard_floor bare|notify [--count N] "
	    "[--dir D] [--same-cpu] [--sync]\n");
	exit(2);
}

static double
floor_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* n creates of f0..fn-1 in the current directory; us per create. */
static double
floor_creates(long n)
{
	char	 name[32];
	double	 t0;
	long	 i;
	int	 fd;

	t0 = floor_now();
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%ld", i);
		fd = openat(AT_FDCWD, name, O_WRONLY | O_CREAT | O_EXCL |
		    O_CLOEXEC, 0644);
		if (fd == -1) {
			fprintf(stderr, "guard_floor: create %s: %s\n", name,
			    strerror(errno));
			return -1;
		}
		close(fd);
	}
	return (floor_now() - t0) / (double)n;
}

/* openat(..., O_CREAT ...) to the supervisor, everything else allowed. */
static int
floor_filter(void)
{
	struct sock_filter	 f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FLOOR_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog	 prog = {
		.len = sizeof(f) / sizeof(f[0]),
		.filter = f,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	    SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

static int
floor_send_fd(int sock, int fd)
{
	char		 c = 0, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec	 iov = { &c, 1 };
	struct msghdr	 msg;
	struct cmsghdr	*cm;

	memset(&msg, 0, sizeof(msg));
	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int
floor_recv_fd(int sock)
{
	char		 c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec	 iov = { &c, 1 };
	struct msghdr	 msg;
	struct cmsghdr	*cm;
	int		 fd;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	if (recvmsg(sock, &msg, 0) != 1 || (cm = CMSG_FIRSTHDR(&msg)) == NULL ||
	    cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* Serve n create notifications on the listener; 0, or -1. */
static int
floor_supervise(int lfd, long n)
{
	struct seccomp_notif		 req;
	struct seccomp_notif_resp	 resp;
	struct seccomp_notif_addfd	 add;
	struct iovec			 local, remote;
	char				 path[PATH_MAX];
	long				 i;
	ssize_t				 got;
	int				 fd;

	for (i = 0; i < n; i++) {
		memset(&req, 0, sizeof(req));
		if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		local.iov_base = path;
		local.iov_len = sizeof(path) - 1;
		remote.iov_base = (void *)(uintptr_t)req.data.args[1];
		remote.iov_len = sizeof(path) - 1;
		got = process_vm_readv(req.pid, &local, 1, &remote, 1, 0);
		if (got <= 0)
			goto deny;
		path[got] = '\0';
		if (strnlen(path, (size_t)got) == (size_t)got)
			goto deny;
		/* The path is trusted only if the caller still waits. */
		if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) == -1)
			continue;
		fd = openat(AT_FDCWD, path, (int)req.data.args[2] & ~O_CLOEXEC,
		    (mode_t)req.data.args[3]);
		if (fd == -1) {
			memset(&resp, 0, sizeof(resp));
			resp.id = req.id;
			resp.error = -errno;
			ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
			continue;
		}
		memset(&add, 0, sizeof(add));
		add.id = req.id;
		add.flags = SECCOMP_ADDFD_FLAG_SEND;
		add.srcfd = (unsigned)fd;
		add.newfd_flags = (unsigned)req.data.args[2] & O_CLOEXEC;
		if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) == -1 &&
		    errno != ENOENT) {
			close(fd);
			return -1;
		}
		close(fd);
		continue;
deny:
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.error = -EACCES;
		ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	const char	*mode, *dir = ".";
	double		 us;
	long		 count = 10000;
	cpu_set_t	 set;
	pid_t		 pid;
	int		 i, sv[2], lfd, status, same = 0, sync = 0;

	if (argc < 2)
		floor_usage();
	mode = argv[1];
	for (i = 2; i + 1 < argc || (i < argc && (strcmp(argv[i],
	    "--same-cpu") == 0 || strcmp(argv[i], "--sync") == 0)); i += 2) {
		if (strcmp(argv[i], "--same-cpu") == 0) {
			same = 1;
			i--;
		} else if (strcmp(argv[i], "--sync") == 0) {
			sync = 1;
			i--;
		} else if (strcmp(argv[i], "--count") == 0)
			count = strtol(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--dir") == 0)
			dir = argv[i + 1];
		else
			floor_usage();
	}
	if (i != argc || count <= 0)
		floor_usage();
	if (chdir(dir) == -1) {
		fprintf(stderr, "guard_floor: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	if (strcmp(mode, "bare") == 0) {
		if ((us = floor_creates(count)) < 0)
			return 1;
		printf("bare %ld us_per_create %.2f\n", count, us);
		return 0;
	}
	if (strcmp(mode, "notify") != 0)
		floor_usage();
	if (same) {
		CPU_ZERO(&set);
		CPU_SET(sched_getcpu(), &set);
		if (sched_setaffinity(0, sizeof(set), &set) == -1)
			return 1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return 1;
	if ((pid = fork()) == -1)
		return 1;
	if (pid == 0) {
		close(sv[0]);
		if ((lfd = floor_filter()) == -1) {
			fprintf(stderr, "guard_floor: seccomp: %s\n",
			    strerror(errno));
			_exit(1);
		}
		if (floor_send_fd(sv[1], lfd) == -1)
			_exit(1);
		close(lfd);
		if ((us = floor_creates(count)) < 0)
			_exit(1);
		printf("notify %ld us_per_create %.2f\n", count, us);
		fflush(stdout);
		_exit(0);
	}
	close(sv[1]);
	if ((lfd = floor_recv_fd(sv[0])) == -1 || (sync && ioctl(lfd,
	    SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	    == -1) || floor_supervise(lfd, count) == -1) {
		fprintf(stderr, "guard_floor: supervisor: %s\n",
		    strerror(errno));
		kill(pid, SIGKILL);
	}
	if (waitpid(pid, &status, 0) == -1 || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}
