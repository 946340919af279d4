/*
 * sysraw: issue filtered system calls raw, as an attacker would, and
 * print one line per case: "NAME ok" or "NAME ERRNO" (EPERM, ENOSYS...).
 * Run inside pisbx-run by tests/integration/run-escape-sys.sh, which
 * holds the expected answers.
 *
 * The kernel reads an int argument as its low 32 bits; a filter that
 * compares all 64 lets "AF_UNIX | 1 << 32" through.  So every refused
 * value is also tried with garbage in the upper half (HI) and as a
 * negative 64-bit number whose low half is the refused value (NEG).
 *
 *   sysraw [DIR]   run every case; names to create go in DIR (default .)
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/netlink.h>
#include <linux/sched.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "tests/helpers/errname.h"

#define HI(v)	((uint64_t)(uint32_t)(v) | 0xdead000000000000ULL)
#define NEG(v)	((uint64_t)(uint32_t)(v) | 0xffffffff00000000ULL)

#ifndef AF_VSOCK
#define AF_VSOCK	40
#endif
#ifndef AF_ALG
#define AF_ALG		38
#endif
#ifndef SYS_fchmodat2
#define SYS_fchmodat2	452	/* Linux 6.6 */
#endif
#ifndef SYS_listmount
#define SYS_listmount	458	/* Linux 6.8; unknown to libseccomp 2.5 */
#endif

static const char	*dir = ".";

static void		 report(const char *name, long rc, int err);
static long		 sys_socket(uint64_t, uint64_t, uint64_t);
static long		 sys_child(long nr, uint64_t a0);
static void		 sockets(void);
static void		 namespaces(void);
static void		 kernel(void);
static void		 creation(void);

static void
report(const char *name, long rc, int err)
{
	printf("%s %s\n", name, rc >= 0 ? "ok" : errname(err));
	fflush(stdout);
}

/* socket(2) raw; a socket that was made is closed again. */
static long
sys_socket(uint64_t domain, uint64_t type, uint64_t protocol)
{
	long	rc = syscall(SYS_socket, domain, type, protocol);

	if (rc >= 0)
		close((int)rc);
	return rc;
}

/*
 * A call that would change the caller for good if it passed (a new user
 * namespace): made in a child, whose answer comes back as its exit code.
 */
static long
sys_child(long nr, uint64_t a0)
{
	pid_t	pid;
	int	st;
	long	rc;

	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if (nr == SYS_clone) {
			rc = syscall(SYS_clone, a0, 0, 0, 0, 0);
			if (rc == 0)
				_exit(0);	/* the new child: gone */
			if (rc > 0)
				waitpid((pid_t)rc, NULL, __WALL);
		} else
			rc = syscall(nr, a0, 0, 0, 0, 0);
		_exit(rc >= 0 ? 0 : errno);
	}
	if (waitpid(pid, &st, 0) == -1 || !WIFEXITED(st))
		return -1;
	errno = WEXITSTATUS(st);
	return errno == 0 ? 0 : -1;
}

static void
sockets(void)
{
	long	rc;
	int	sv[2];

	rc = sys_socket(AF_UNIX, SOCK_STREAM, 0);
	report("socket.unix", rc, errno);
	rc = sys_socket(HI(AF_UNIX), SOCK_STREAM, 0);
	report("socket.unix.hi", rc, errno);
	rc = sys_socket(NEG(AF_UNIX), SOCK_STREAM, 0);
	report("socket.unix.neg", rc, errno);
	rc = sys_socket(HI(AF_VSOCK), SOCK_STREAM, 0);
	report("socket.vsock.hi", rc, errno);
	rc = sys_socket(NEG(AF_VSOCK), SOCK_STREAM, 0);
	report("socket.vsock.neg", rc, errno);
	rc = sys_socket(AF_PACKET, SOCK_DGRAM, 0);
	report("socket.packet", rc, errno);
	rc = sys_socket(AF_ALG, SOCK_SEQPACKET, 0);
	report("socket.alg", rc, errno);
	rc = sys_socket(0x10000 | AF_INET, SOCK_STREAM, 0);
	report("socket.inet.low32junk", rc, errno);
	rc = sys_socket(HI(AF_INET), SOCK_STREAM, 0);
	report("socket.inet.hi", rc, errno);
	rc = sys_socket(AF_INET6, SOCK_STREAM, 0);
	report("socket.inet6", rc, errno);
	rc = sys_socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	report("socket.netlink.route", rc, errno);
	rc = sys_socket(AF_NETLINK, SOCK_RAW, HI(NETLINK_AUDIT));
	report("socket.netlink.audit.hi", rc, errno);
	rc = sys_socket(HI(AF_NETLINK), SOCK_RAW, NEG(NETLINK_KOBJECT_UEVENT));
	report("socket.netlink.uevent.neg", rc, errno);
	rc = syscall(SYS_socketpair, HI(AF_UNIX), SOCK_STREAM, 0, sv);
	if (rc == 0) {
		close(sv[0]);
		close(sv[1]);
	}
	report("socketpair.unix.hi", rc, errno);
	rc = syscall(SYS_socketpair, NEG(AF_INET), SOCK_STREAM, 0, sv);
	report("socketpair.inet.neg", rc, errno);
}

static void
namespaces(void)
{
	long	rc;

	rc = sys_child(SYS_unshare, CLONE_NEWUSER);
	report("unshare.newuser", rc, errno);
	rc = sys_child(SYS_unshare, HI(CLONE_NEWUSER));
	report("unshare.newuser.hi", rc, errno);
	rc = sys_child(SYS_clone, CLONE_NEWUSER | SIGCHLD);
	report("clone.newuser", rc, errno);
	rc = sys_child(SYS_clone, HI(CLONE_NEWUSER | SIGCHLD));
	report("clone.newuser.hi", rc, errno);
	rc = sys_child(SYS_clone, SIGCHLD);
	report("clone.plain", rc, errno);
	rc = syscall(SYS_clone3, NULL, 0);
	report("clone3", rc, errno);
	rc = syscall(SYS_setns, -1, 0);
	report("setns", rc, errno);
}

static void
kernel(void)
{
	char	c = 'x';
	long	rc;
	int	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	rc = syscall(SYS_ioctl, fd, HI(TIOCSTI), &c);
	report("ioctl.tiocsti.hi", rc, errno);
	rc = syscall(SYS_ioctl, fd, NEG(TIOCSTI), &c);
	report("ioctl.tiocsti.neg", rc, errno);
	close(fd);
	rc = syscall(SYS_userfaultfd, 0);
	report("userfaultfd", rc, errno);
	rc = syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0);
	report("perf_event_open", rc, errno);
	rc = syscall(SYS_bpf, 0, NULL, 0);
	report("bpf", rc, errno);
	rc = syscall(SYS_kexec_load, 0, 0, NULL, 0);
	report("kexec_load", rc, errno);
	rc = syscall(SYS_finit_module, -1, "", 0);
	report("finit_module", rc, errno);
	rc = syscall(SYS_open_by_handle_at, -1, NULL, 0);
	report("open_by_handle_at", rc, errno);
	rc = syscall(SYS_io_uring_setup, 4, NULL);
	report("io_uring_setup", rc, errno);
	rc = syscall(SYS_mount, "none", "/", "tmpfs", 0, NULL);
	report("mount", rc, errno);
	rc = syscall(SYS_keyctl, 0, 0, 0, 0, 0);
	report("keyctl", rc, errno);
	rc = syscall(SYS_syslog, 3, NULL, 0);
	report("syslog", rc, errno);
	rc = syscall(SYS_listmount, NULL, NULL, 0, 0);
	report("unknown.listmount", rc, errno);
}

/* "NAME setid=NNNN": the set-ID bits of what path's mode is now. */
static void
setid_bits(const char *name, const char *path)
{
	struct stat	st;

	if (lstat(path, &st) == -1)
		printf("%s %s\n", name, errname(errno));
	else
		printf("%s setid=%04o\n", name, (unsigned)(st.st_mode & 06000));
}

/*
 * Nothing made in the sandbox carries a set-user-ID or set-group-ID bit:
 * chmod and its kin refuse them (whatever the upper half of the mode
 * says), what the guard creates has them stripped.
 */
static void
setid(void)
{
	char	path[4096], other[4096];
	long	rc;
	int	fd;

	snprintf(path, sizeof(path), "%s/setid.f", dir);
	fd = (int)syscall(SYS_open, path, O_CREAT | O_WRONLY | O_CLOEXEC,
	    04755);
	report("open.creat.setuid", fd, errno);
	setid_bits("open.creat.setuid.mode", path);
	rc = syscall(SYS_chmod, path, 04755);
	report("chmod.setuid", rc, errno);
	rc = syscall(SYS_chmod, path, HI(04755));
	report("chmod.setuid.hi", rc, errno);
	rc = syscall(SYS_chmod, path, NEG(02755));
	report("chmod.setgid.neg", rc, errno);
	rc = syscall(SYS_fchmod, fd, HI(04700));
	report("fchmod.setuid.hi", rc, errno);
	rc = syscall(SYS_fchmod, fd, 02700);
	report("fchmod.setgid", rc, errno);
	rc = syscall(SYS_fchmodat, AT_FDCWD, path, HI(06755));
	report("fchmodat.setid.hi", rc, errno);
	rc = syscall(SYS_fchmodat2, AT_FDCWD, path, 04755, 0);
	report("fchmodat2.setuid", rc, errno);
	rc = syscall(SYS_chmod, path, HI(0700));
	report("chmod.plain.hi", rc, errno);
	rc = syscall(SYS_fchmod, fd, 0755);
	report("fchmod.plain", rc, errno);
	setid_bits("chmod.setid.mode", path);
	if (fd >= 0)
		close(fd);
	snprintf(other, sizeof(other), "%s/setid.d", dir);
	rc = syscall(SYS_mkdir, other, 06755);
	report("mkdir.setid", rc, errno);
	setid_bits("mkdir.setid.mode", other);
	snprintf(other, sizeof(other), "%s/setid.n", dir);
	rc = syscall(SYS_mknod, other, S_IFREG | 06755, 0);
	report("mknod.setid", rc, errno);
	setid_bits("mknod.setid.mode", other);
}

static void
creation(void)
{
	struct sockaddr_un	sun;
	char			path[4096];
	long			rc;
	int			sv[2], s;

	snprintf(path, sizeof(path), "%s/.bashrc", dir);
	rc = syscall(SYS_open, path, HI(O_CREAT | O_WRONLY), 0644);
	report("open.creat.hi", rc, errno);
	rc = syscall(SYS_openat, HI(AT_FDCWD), path,
	    NEG(O_CREAT | O_WRONLY | O_TRUNC), 0644);
	report("openat.creat.neg", rc, errno);
	snprintf(path, sizeof(path), "%s/sub/.git/config", dir);
	rc = syscall(SYS_open, path, HI(O_WRONLY | O_APPEND));
	report("open.write.nested.hi", rc, errno);
	rc = syscall(SYS_openat, AT_FDCWD, path, NEG(O_RDONLY | O_TRUNC));
	report("openat.trunc.nested.neg", rc, errno);
	rc = syscall(SYS_truncate, path, 0);
	report("truncate.nested", rc, errno);

	/* A socketpair's socket can still be bound to a path: an inode. */
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/.zshenv", dir);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
		rc = syscall(SYS_bind, sv[0], &sun, HI(sizeof(sun)));
		report("bind.socketpair.protected", rc, errno);
		close(sv[0]);
		close(sv[1]);
	}
	/* With allowAllUnixSockets: a plain socket. */
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0) {
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/.bash_login",
		    dir);
		rc = syscall(SYS_bind, s, &sun, sizeof(sun));
		report("bind.unix.protected", rc, errno);
		close(s);
		s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/plain.sock",
		    dir);
		rc = syscall(SYS_bind, s, &sun, sizeof(sun));
		report("bind.unix.plain", rc, errno);
		close(s);
	} else
		printf("bind.unix.protected skipped\nbind.unix.plain skipped\n");
}

int
main(int argc, char *argv[])
{
	if (argc > 1)
		dir = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	sockets();
	namespaces();
	kernel();
	setid();
	creation();
	return 0;
}
