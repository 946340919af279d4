/*
 * The command's seccomp filter (libseccomp), installed last, after the
 * listener hand-off, with no_new_privs.  Default allow; refused:
 *
 *   socket(AF_UNIX)   a Unix socket path is a way around the network
 *                     namespace (/run/docker.sock, agent sockets), unless
 *                     network.allowAllUnixSockets; socketpair stays allowed.
 *   socket(AF_VSOCK)  reaches the hypervisor.
 *   io_uring_*        performs I/O the filter cannot see (ENOSYS, so
 *                     programs fall back to plain syscalls).
 *   mount family      the sandbox's mounts are its walls.
 *   keyctl & co.      the user's kernel keyrings are not namespaced.
 *   TIOCSTI/TIOCLINUX pushing input into the terminal the caller's shell
 *                     reads after the command ends (CVE-2017-5226).
 *   openat2           its flags sit in a struct the filter cannot read
 *                     (ENOSYS: libc falls back to openat).
 *
 * File creation (open/openat with O_CREAT, creat, mkdir, mknod, symlink,
 * link, rename) is sent to the guard (guard.c), which refuses the
 * mandatory deny set and performs the rest.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <string.h>

#include "common/log.h"
#include "launcher/launcher.h"

#ifndef AF_VSOCK
#define AF_VSOCK	40
#endif

static int	seccomp_deny(scmp_filter_ctx, int err, const char *name);

static int
seccomp_deny(scmp_filter_ctx ctx, int err, const char *name)
{
	int	nr = seccomp_syscall_resolve_name(name);

	if (nr == __NR_SCMP_ERROR)
		return 0;	/* not on this architecture */
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(err), nr, 0);
}

int
seccomp_apply(const struct sandbox *sb)
{
	static const char *const mounts[] = {
		"mount", "umount", "umount2", "pivot_root", "move_mount",
		"open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
		"mount_setattr", "keyctl", "add_key", "request_key",
	};
	static const char *const uring[] = {
		"io_uring_setup", "io_uring_enter", "io_uring_register",
		"openat2",
	};
	static const char *const creators[] = {
		"creat", "mkdir", "mkdirat", "mknod", "mknodat", "symlink",
		"symlinkat", "link", "linkat", "rename", "renameat",
		"renameat2",
	};
	scmp_filter_ctx	ctx;
	size_t		i;
	int		fd = -1, nfd = -1, rc = 0;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		log_warnx("seccomp: cannot initialise a filter");
		return -1;
	}
	if (!sb->allow_all_unix)
		rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
	    SCMP_A0(SCMP_CMP_EQ, AF_VSOCK));
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI));
	rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX));
	for (i = 0; i < sizeof(mounts) / sizeof(*mounts); i++)
		rc |= seccomp_deny(ctx, EPERM, mounts[i]);
	for (i = 0; i < sizeof(uring) / sizeof(*uring); i++)
		rc |= seccomp_deny(ctx, ENOSYS, uring[i]);

	rc |= seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(open), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT));
	rc |= seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(openat), 1,
	    SCMP_A2(SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT));
	for (i = 0; i < sizeof(creators) / sizeof(*creators); i++) {
		int nr = seccomp_syscall_resolve_name(creators[i]);

		if (nr != __NR_SCMP_ERROR)
			rc |= seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
	}
	if (rc != 0) {
		log_warnx("seccomp: cannot add rules");
		goto done;
	}
	if ((rc = seccomp_load(ctx)) != 0) {
		errno = -rc;
		log_warn("seccomp: load");
		goto done;
	}
	if ((nfd = seccomp_notify_fd(ctx)) < 0) {
		log_warnx("seccomp: no notification fd");
		goto done;
	}
	/*
	 * Our own close-on-exec copy: whether seccomp_release() closes the
	 * library's differs between versions, and the command must never
	 * inherit it (it could answer its own notifications).
	 */
	if ((fd = fcntl(nfd, F_DUPFD_CLOEXEC, 3)) == -1)
		log_warn("seccomp: dup notification fd");
done:
	seccomp_release(ctx);
	if (nfd >= 0 && fcntl(nfd, F_GETFD) != -1)
		close(nfd);
	return fd;
}
