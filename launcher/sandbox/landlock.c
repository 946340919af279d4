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

#include <dirent.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* One place where what can be read changes (nons mode's read rules). */
struct ll_vis {
	const char	*path;
	int		 visible;
};

/* The device nodes a command without namespaces may open (mount.c's). */
static const char *const landlock_dev_nodes[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	"/dev/tty",
};

static int	landlock_allow(int ruleset, const char *path, int fd,
		    uint64_t access);
static int	landlock_visible(const struct ll_vis *, size_t,
		    const char *path);
static int	landlock_changes(const struct ll_vis *, size_t,
		    const char *dir, int visible);
static int	landlock_cover(int ruleset, const struct ll_vis *, size_t,
		    const char *dir, int depth);
static int	landlock_nons(int ruleset, const struct sandbox *);

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

/* Whether path is readable: the deepest place at or above it says. */
static int
landlock_visible(const struct ll_vis *v, size_t n, const char *path)
{
	size_t	i, best = 0, len;
	int	visible = 1;

	for (i = 0; i < n; i++) {
		len = strlen(v[i].path);
		if (len >= best && fs_under(path, v[i].path)) {
			best = len;
			visible = v[i].visible;
		}
	}
	return visible;
}

/* Whether anything strictly below dir is readable otherwise than dir. */
static int
landlock_changes(const struct ll_vis *v, size_t n, const char *dir,
    int visible)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (v[i].visible != visible && strcmp(v[i].path, dir) != 0 &&
		    fs_under(v[i].path, dir))
			return 1;
	return 0;
}

/*
 * Read rules for the tree at dir, without a mount namespace to hide
 * anything: Landlock only grants, so a readable tree with a hidden path
 * below it is granted entry by entry, down to the hidden one, which is
 * left out (and a readable path below that granted again).  Symbolic
 * links are not granted: what they name is granted, or not, where it
 * lies.  An entry made later in such a directory is not readable
 * (threat-model.md says so).  0, or -1.
 */
static int
landlock_cover(int ruleset, const struct ll_vis *v, size_t n,
    const char *dir, int depth)
{
	struct dirent	*de;
	struct stat	 st;
	char		 child[PATH_MAX];
	DIR		*d;
	int		 visible = landlock_visible(v, n, dir), rc = 0, fd;

	if (!landlock_changes(v, n, dir, visible))
		return visible ? landlock_allow(ruleset, dir, -1,
		    LL_FS_READ_FILE) : 0;
	if (depth > 64 || (d = opendir(dir)) == NULL)
		return 0;	/* unreadable: nothing granted */
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(child, sizeof(child), "%s/%s",
		    strcmp(dir, "/") == 0 ? "" : dir, de->d_name) >=
		    sizeof(child))
			continue;
		if (lstat(child, &st) == -1 || S_ISLNK(st.st_mode))
			continue;
		if (S_ISDIR(st.st_mode)) {
			rc = landlock_cover(ruleset, v, n, child, depth + 1);
			continue;
		}
		if (!landlock_visible(v, n, child))
			continue;
		if ((fd = open(child, O_PATH | O_NOFOLLOW | O_CLOEXEC)) == -1)
			continue;
		rc = landlock_allow(ruleset, NULL, fd, LL_FS_READ_FILE);
		close(fd);
	}
	closedir(d);
	return rc;
}

/*
 * Without namespaces: the plan's hidden paths and the originals of its
 * filtered copies unreadable, and in /dev
 * only the nodes a sandbox's own /dev holds -- not the host's ptys (the
 * agent's terminal) nor its /dev/shm (other processes' shared memory);
 * the command's own terminal is granted by its descriptors.  0, or -1.
 */
static int
landlock_nons(int ruleset, const struct sandbox *sb)
{
	struct ll_vis	*v;
	size_t		 i, n = 0, ndev;
	int		 rc;

	ndev = sizeof(landlock_dev_nodes) / sizeof(*landlock_dev_nodes);
	if ((v = calloc(sb->plan.nrules + ndev + 1, sizeof(*v))) == NULL)
		return -1;
	for (i = 0; i < sb->plan.nrules; i++) {
		v[n].path = sb->plan.rules[i].path;
		/*
		 * A filtered copy (source) stands in for its original with
		 * namespaces; here nothing can, and the original holds what
		 * the copy leaves out (an npmrc's token): hidden.
		 */
		v[n++].visible = sb->plan.rules[i].action != FS_HIDE &&
		    sb->plan.rules[i].source == NULL;
	}
	v[n].path = "/dev";
	v[n++].visible = 0;
	for (i = 0; i < ndev; i++) {
		v[n].path = landlock_dev_nodes[i];
		v[n++].visible = 1;
	}
	rc = landlock_cover(ruleset, v, n, "/", 0);
	free(v);
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
	/* Without a mount namespace, reads too (landlock_nons). */
	if (sb->nons)
		attr.handled_access_fs |= LL_FS_READ_FILE;
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
	if (sb->nons) {
		/*
		 * The host's /dev and /proc: the sandbox's own devices only,
		 * and nothing of /proc (its /proc/sys is the host's).
		 */
		for (i = 0; i < sizeof(landlock_dev_nodes) /
		    sizeof(*landlock_dev_nodes); i++)
			if (landlock_allow(rs, landlock_dev_nodes[i], -1,
			    file) == -1) {
				log_warn("landlock: allow %s",
				    landlock_dev_nodes[i]);
				goto fail;
			}
		if (landlock_nons(rs, sb) == -1) {
			log_warn("landlock: the read rules");
			goto fail;
		}
	} else if (landlock_allow(rs, "/dev", -1, file) == -1 ||
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
		    landlock_allow(rs, NULL, (int)i, file |
		    (sb->nons ? LL_FS_READ_FILE : 0)) == -1) {
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

int
landlock_scope_only(void)
{
	struct ll_ruleset_attr	attr;
	int			rs, rc;

	memset(&attr, 0, sizeof(attr));
	attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
	if ((rs = (int)syscall(SYS_landlock_create_ruleset, &attr,
	    sizeof(attr), 0)) == -1)
		return -1;
	rc = (int)syscall(SYS_landlock_restrict_self, rs, 0);
	close(rs);
	return rc;
}
