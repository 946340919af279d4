/*
 * Landlock, the second layer under the mount namespace: writes are
 * allowed only beneath the writable roots (and the devices and /proc
 * files a command needs), abstract Unix sockets and signals are scoped to
 * the sandbox.  The system headers are older than the kernel, so the
 * constants are defined here and the ABI is probed at run time; every
 * right the kernel does not know is left out rather than failing.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/sandbox/sandbox.h"

#define LL_CREATE_RULESET_VERSION	(1U << 0)
#define LL_RULE_PATH_BENEATH		1

#define LL_FS_EXECUTE		(1ULL << 0)
#define LL_FS_WRITE_FILE	(1ULL << 1)
#define LL_FS_READ_FILE		(1ULL << 2)
#define LL_FS_READ_DIR		(1ULL << 3)
#define LL_FS_REMOVE_DIR	(1ULL << 4)
#define LL_FS_REMOVE_FILE	(1ULL << 5)
#define LL_FS_MAKE_CHAR		(1ULL << 6)
#define LL_FS_MAKE_DIR		(1ULL << 7)
#define LL_FS_MAKE_REG		(1ULL << 8)
#define LL_FS_MAKE_SOCK		(1ULL << 9)
#define LL_FS_MAKE_FIFO		(1ULL << 10)
#define LL_FS_MAKE_BLOCK	(1ULL << 11)
#define LL_FS_MAKE_SYM		(1ULL << 12)
#define LL_FS_REFER		(1ULL << 13)	/* ABI 2 */
#define LL_FS_TRUNCATE		(1ULL << 14)	/* ABI 3 */
#define LL_FS_IOCTL_DEV		(1ULL << 15)	/* ABI 5 */
/* The only rights a rule on a file (not a directory) may carry. */
#define LL_FS_FILE_RIGHTS	(LL_FS_EXECUTE | LL_FS_WRITE_FILE | \
				 LL_FS_READ_FILE | LL_FS_TRUNCATE | \
				 LL_FS_IOCTL_DEV)

#define LL_SCOPE_ABSTRACT_UNIX_SOCKET	(1ULL << 0)	/* ABI 6 */
#define LL_SCOPE_SIGNAL			(1ULL << 1)	/* ABI 6 */

struct ll_ruleset_attr {
	uint64_t	handled_access_fs;
	uint64_t	handled_access_net;	/* ABI 4 */
	uint64_t	scoped;			/* ABI 6 */
};

struct ll_path_beneath_attr {
	uint64_t	allowed_access;
	int32_t		parent_fd;
} __attribute__((packed));

static int	landlock_allow(int ruleset, const char *path, int fd,
		    uint64_t access);

int
landlock_abi(void)
{
	long	abi;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LL_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : (int)abi;
}

/*
 * Allow access beneath path (or beneath the O_PATH fd when path is NULL).
 * A rule on anything but a directory may carry only the rights that act
 * on an open file (the kernel refuses the rule otherwise): a writable
 * single file gets write and truncate, never create or remove.
 */
static int
landlock_allow(int ruleset, const char *path, int fd, uint64_t access)
{
	struct ll_path_beneath_attr	pb;
	struct stat			st;
	int				own = -1, rc;

	if (path != NULL) {
		if ((own = open(path, O_PATH | O_CLOEXEC)) == -1)
			return errno == ENOENT ? 0 : -1;
		fd = own;
	}
	if (fstat(fd, &st) == -1) {
		rc = -1;
		goto done;
	}
	if (!S_ISDIR(st.st_mode))
		access &= LL_FS_FILE_RIGHTS;
	if (access == 0) {
		rc = 0;
		goto done;
	}
	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = access;
	pb.parent_fd = fd;
	rc = (int)syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH,
	    &pb, 0);
done:
	if (own != -1)
		close(own);
	return rc;
}

int
landlock_apply(const struct sandbox *sb)
{
	struct ll_ruleset_attr	attr;
	uint64_t		write, file, dirs;
	size_t			attr_size, i;
	int			abi, rs;

	if ((abi = landlock_abi()) < 1) {
		log_debug("landlock: not available");
		return 0;
	}
	file = LL_FS_WRITE_FILE;
	dirs = LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR |
	    LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK |
	    LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM;
	if (abi >= 2)
		dirs |= LL_FS_REFER;
	if (abi >= 3)
		file |= LL_FS_TRUNCATE;
	write = file | dirs;

	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = write;
	attr_size = sizeof(attr.handled_access_fs);
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		attr_size = sizeof(attr);
	}
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
	if (rs == -1) {
		log_warn("landlock: create ruleset");
		return -1;
	}
	for (i = 0; i < sb->plan.nwritable; i++) {
		if (landlock_allow(rs, sb->plan.writable[i], -1, write) == -1) {
			log_warn("landlock: allow %s", sb->plan.writable[i]);
			goto fail;
		}
	}
	/*
	 * Device files (/dev/null, /dev/tty) and /proc/self files are
	 * written, not created.
	 */
	if (landlock_allow(rs, "/dev", -1, file) == -1 ||
	    landlock_allow(rs, "/dev/shm", -1, write) == -1 ||
	    landlock_allow(rs, "/proc", -1, LL_FS_WRITE_FILE) == -1) {
		log_warn("landlock: allow devices");
		goto fail;
	}
	/*
	 * Standard input, output or error -- a file outside the writable
	 * roots, the terminal the command inherited (on the host's devpts),
	 * the host's /dev/null -- stays writable when reopened
	 * (/dev/stdout): that file alone, never the host's /dev or devpts
	 * beside it (redteam #1: every other device of the host).
	 */
	for (i = 0; i <= 2; i++) {
		struct stat st;

		if (fstat((int)i, &st) == 0 && (S_ISREG(st.st_mode) ||
		    S_ISCHR(st.st_mode)) &&
		    landlock_allow(rs, NULL, (int)i, file) == -1) {
			log_warn("landlock: allow fd %zu", i);
			goto fail;
		}
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    syscall(SYS_landlock_restrict_self, rs, 0) == -1) {
		log_warn("landlock: restrict");
		goto fail;
	}
	close(rs);
	log_debug("landlock: ABI %d applied", abi);
	return 0;
fail:
	close(rs);
	return -1;
}
