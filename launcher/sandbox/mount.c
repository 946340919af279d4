/*
 * The sandbox's mount namespace, built in the child before the command
 * runs:
 *
 *   1. propagation from the sandbox to the host cut (rslave), and the
 *      run directory's files written on a tmpfs of the sandbox's own
 *      over the run directory, its tmp/ (the host's) moved back in;
 *   2. every tree that will be re-exposed is cloned (open_tree) while the
 *      original is still visible -- later tmpfs mounts cover it;
 *   3. the whole tree made read-only in one call (mount_setattr,
 *      AT_RECURSIVE);
 *   4. a fresh /proc for the PID namespace (with /proc/sys and friends
 *      read-only) and a minimal /dev (null, zero, full, random, urandom,
 *      tty, a private devpts and /dev/shm): the host's /dev would hand a
 *      root-run command the raw disks.  The terminal the command
 *      inherited keeps its name: its host node is bound over the same
 *      number in the private devpts, a number held for it there
 *      (mount_tty_*);
 *   5. the plan's rules, shallow first: tmpfs over denied directories, an
 *      empty read-only file over denied files, the cloned trees moved onto
 *      re-exposed (read-only) and writable paths.  A denied directory
 *      under which no mount point is made gets a bind of one read-only
 *      tmpfs per mode (mount_hide_dir): a bind costs the kernel less
 *      than a new file system, made and torn down, per hidden entry.
 *
 * Mount points that do not exist are created only inside the sandbox's
 * own tmpfs mounts, never on a real filesystem, so nothing is ever left
 * in a workspace.
 */
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/launcher.h"
#include "launcher/sandbox/sandbox.h"

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE		1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC	O_CLOEXEC
#endif

struct mount_state {
	dev_t	*tmpfs_dev;	/* our tmpfs mounts: the only mkdir places */
	size_t	 ntmpfs;
	/* Empty read-only tmpfs, one per mode, bound over hidden dirs. */
	struct mount_empty {
		mode_t	 mode;
		int	 fd;	/* fsmount's mount, attached once moved */
		int	 placed; /* moved onto a path: may be cloned */
	}	 empty[4];
	size_t	 nempty;
	int	 nofsmount;	/* fsopen refused: a tmpfs each, as mount(2) */
};

/* A terminal among fds 0-2 on the host's devpts: /dev/pts/nr there. */
struct mount_tty {
	int		 tree;		/* its node, cloned (open_tree) */
	unsigned int	 nr;
};

/*
 * The highest pty number whose name is kept: holding it takes as many
 * ptys of the sandbox's devpts for a moment (some 30 us each: 20 ms for
 * number 600), and the ptys of all instances share one limit
 * (kernel.pty.max).
 */
#define MOUNT_TTY_MAXNR	1023

/* Room on the run directory's tmpfs beyond its files: tmp/, the root. */
#define MOUNT_RUNFILES_SLACK	(16 * 4096)

static const char *const mount_dev_nodes[] = {
	"null", "zero", "full", "random", "urandom", "tty",
};

static const char *const mount_proc_ro[] = {
	"/proc/sys", "/proc/sysrq-trigger", "/proc/bus", "/proc/fs",
	"/proc/irq", "/proc/acpi",
};

static int	 mount_clone(int dirfd, const char *path, int readonly);
static int	 mount_setro(int dirfd, const char *path, int recursive);
static int	 mount_move(int fd, const char *path);
static int	 mount_tmpfs(struct mount_state *, const char *path,
		    const char *opts);
static int	 mount_mkpoint(struct mount_state *, const char *path,
		    int is_dir);
static int	 mount_empty_fs(mode_t);
static int	 mount_hide_dir(struct mount_state *, const char *path,
		    mode_t);
static int	 mount_hide_leaf(const struct fs_plan *, size_t);
static int	 mount_proc(int userns);
static size_t	 mount_tty_find(struct mount_tty *);
static void	 mount_tty_hold(struct sandbox *, struct mount_tty *,
		    size_t);
static void	 mount_tty_show(struct sandbox *, struct mount_tty *,
		    size_t);
static int	 mount_dev(struct mount_state *, struct sandbox *);
static int	 mount_runfiles(const struct sandbox *);

/*
 * A detached copy of the tree at path, or of what dirfd is when path is
 * "" (read-only if asked), or -1.
 */
static int
mount_clone(int dirfd, const char *path, int readonly)
{
	int	fd;

	fd = (int)syscall(SYS_open_tree, dirfd, path,
	    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
	    (path[0] == '\0' ? AT_EMPTY_PATH : 0));
	if (fd == -1)
		return -1;
	if (readonly && mount_setro(fd, "", 1) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
mount_setro(int dirfd, const char *path, int recursive)
{
	struct mount_attr	attr;
	unsigned int		flags = 0;

	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_RDONLY;
	if (recursive)
		flags |= AT_RECURSIVE;
	if (path[0] == '\0')
		flags |= AT_EMPTY_PATH;
	return (int)syscall(SYS_mount_setattr, dirfd, path, flags, &attr,
	    sizeof(attr));
}

static int
mount_move(int fd, const char *path)
{
	return (int)syscall(SYS_move_mount, fd, "", AT_FDCWD, path,
	    MOVE_MOUNT_F_EMPTY_PATH);
}

static int
mount_tmpfs(struct mount_state *ms, const char *path, const char *opts)
{
	struct stat	 st;
	dev_t		*v;

	if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) == -1)
		return -1;
	if (stat(path, &st) == -1)
		return -1;
	if ((v = reallocarray(ms->tmpfs_dev, ms->ntmpfs + 1,
	    sizeof(*v))) == NULL)
		return -1;
	ms->tmpfs_dev = v;
	v[ms->ntmpfs++] = st.st_dev;
	return 0;
}

/*
 * Create a missing mount point, but only when its nearest existing
 * ancestor lies on one of the sandbox's own tmpfs mounts.
 */
static int
mount_mkpoint(struct mount_state *ms, const char *path, int is_dir)
{
	char		 buf[PATH_MAX], *slash;
	struct stat	 st;
	size_t		 i;
	int		 fd, ours = 0;

	if (lstat(path, &st) == 0)
		return 0;
	if (strlen(path) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(buf, path);
	for (;;) {
		if ((slash = strrchr(buf, '/')) == NULL)
			return -1;
		if (slash == buf)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (lstat(buf, &st) == 0)
			break;
		if (slash == buf)
			return -1;
	}
	for (i = 0; i < ms->ntmpfs; i++)
		if (ms->tmpfs_dev[i] == st.st_dev)
			ours = 1;
	if (!ours) {
		errno = ENOENT;
		return -1;
	}
	/* Create each missing component below buf. */
	strcpy(buf, path);
	for (slash = buf + 1; (slash = strchr(slash, '/')) != NULL; slash++) {
		*slash = '\0';
		if (mkdir(buf, 0755) == -1 && errno != EEXIST)
			return -1;
		*slash = '/';
	}
	if (is_dir)
		return mkdir(buf, 0755) == -1 && errno != EEXIST ? -1 : 0;
	if ((fd = open(buf, O_WRONLY | O_CREAT | O_CLOEXEC, 0444)) == -1)
		return -1;
	close(fd);
	return 0;
}

/*
 * A detached tmpfs mount of an empty directory of mode, read-only,
 * nosuid and nodev from the start, or -1.
 */
static int
mount_empty_fs(mode_t mode)
{
	char	opt[8];
	int	fsfd, mfd = -1;

	if ((fsfd = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC)) == -1)
		return -1;
	snprintf(opt, sizeof(opt), "%04o", (unsigned int)mode & 07777);
	if (syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "source",
	    "tmpfs", 0) == 0 &&
	    syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "mode", opt,
	    0) == 0 &&
	    syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "size", "1m",
	    0) == 0 &&
	    syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL,
	    0) == 0)
		mfd = (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC,
		    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	close(fsfd);
	return mfd;
}

/*
 * An empty read-only directory of mode over path: the tmpfs of that mode
 * itself where it is not placed yet, else a clone of it (it is attached
 * by then, so the clone works on every kernel).  Nothing is ever made in
 * it: mount_hide_leaf chose path.  0; 1 when every kept mode is another
 * or no tmpfs can be made so (the caller mounts a tmpfs of its own, as
 * for a directory with mount points below it); or -1 with errno (ENOENT,
 * ENOTDIR: path gone or no directory any more).
 */
static int
mount_hide_dir(struct mount_state *ms, const char *path, mode_t mode)
{
	struct mount_empty	*me = NULL;
	struct stat		 st;
	size_t			 i;
	int			 fd, saved;

	for (i = 0; i < ms->nempty; i++)
		if (ms->empty[i].mode == mode)
			me = &ms->empty[i];
	if (me == NULL) {
		if (ms->nofsmount ||
		    ms->nempty == sizeof(ms->empty) / sizeof(*ms->empty))
			return 1;
		/* A seccomp profile may refuse fsopen and allow mount. */
		if ((fd = mount_empty_fs(mode)) == -1) {
			log_debug("fsopen tmpfs: %s", strerror(errno));
			ms->nofsmount = 1;
			return 1;
		}
		me = &ms->empty[ms->nempty++];
		me->mode = mode;
		me->fd = fd;
		me->placed = 0;
	}
	if (!me->placed)
		fd = me->fd;
	else if ((fd = (int)syscall(SYS_open_tree, me->fd, "",
	    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH)) == -1)
		return -1;
	if (mount_move(fd, path) == 0) {
		if (fd == me->fd)
			me->placed = 1;
		else
			close(fd);
		return 0;
	}
	saved = errno;
	if (fd != me->fd)
		close(fd);
	/* A directory over anything else (EINVAL): what is there now? */
	if (lstat(path, &st) == -1)
		return -1;
	errno = S_ISDIR(st.st_mode) ? saved : ENOTDIR;
	return -1;
}

/*
 * Whether rule i (a hidden directory) gets no mount point below it: no
 * later rule but a hidden one lies under it.  Only such a directory may
 * share its tmpfs, where nothing is made.
 */
static int
mount_hide_leaf(const struct fs_plan *plan, size_t i)
{
	const char	*p = plan->rules[i].path;
	size_t		 j, len = strlen(p);

	for (j = i + 1; j < plan->nrules; j++)
		if (plan->rules[j].action != FS_HIDE &&
		    strncmp(plan->rules[j].path, p, len) == 0 &&
		    (plan->rules[j].path[len] == '/' || len == 1))
			return 0;
	return 1;
}

static int
mount_proc(int userns)
{
	size_t	i;

	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    NULL) == -1) {
		log_warn("mount /proc for the PID namespace");
		return -1;
	}
	/*
	 * sysctls are writable by uid 0 without any capability: a command
	 * run by root must not reach them.  In a user namespace they belong
	 * to an unmapped root and stay out of reach anyway.
	 */
	if (userns)
		return 0;
	for (i = 0; i < sizeof(mount_proc_ro) / sizeof(*mount_proc_ro); i++) {
		if (access(mount_proc_ro[i], F_OK) == -1)
			continue;
		if (mount(mount_proc_ro[i], mount_proc_ro[i], NULL,
		    MS_BIND | MS_REC, NULL) == -1 ||
		    mount_setro(AT_FDCWD, mount_proc_ro[i], 1) == -1) {
			log_warn("make %s read-only", mount_proc_ro[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * The terminals among fds 0-2 that are nodes of the devpts at /dev/pts:
 * ttyname() finds a terminal by the name /proc/self/fd/N gives, which is
 * the host's (/dev/pts/3), and the sandbox has a devpts of its own.  Each
 * is cloned while the host's /dev/pts is still visible; a name that
 * leads to another node here (a caller in another mount namespace) is
 * left alone.  The command reaches nothing it did not inherit.
 */
static size_t
mount_tty_find(struct mount_tty *t)
{
	struct stat	 fst, st;
	char		 link[32], path[64], *end;
	unsigned long	 nr;
	ssize_t		 len;
	size_t		 i, j, n = 0;

	for (i = 0; i < 3; i++) {
		if (!isatty((int)i) || fstat((int)i, &fst) == -1)
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%zu", i);
		if ((len = readlink(link, path, sizeof(path) - 1)) == -1)
			continue;
		path[len] = '\0';
		if (strncmp(path, "/dev/pts/", 9) != 0 ||
		    path[9] < '0' || path[9] > '9')
			continue;
		errno = 0;
		nr = strtoul(path + 9, &end, 10);
		if (*end != '\0' || errno != 0 || nr > MOUNT_TTY_MAXNR ||
		    (path[9] == '0' && path[10] != '\0'))
			continue;
		if (stat(path, &st) == -1 || !S_ISCHR(st.st_mode) ||
		    st.st_dev != fst.st_dev || st.st_ino != fst.st_ino ||
		    st.st_rdev != fst.st_rdev)
			continue;
		for (j = 0; j < n; j++)
			if (t[j].nr == nr)
				break;
		if (j < n)
			continue;
		if ((t[n].tree = mount_clone(AT_FDCWD, path, 0)) == -1) {
			log_debug("clone %s: %s", path, strerror(errno));
			continue;
		}
		t[n++].nr = (unsigned int)nr;
	}
	return n;
}

/*
 * Hold the inherited terminals' numbers in the sandbox's new devpts, so
 * that no pty the command makes gets one (ptsname() would name the
 * inherited terminal): devpts gives the lowest free number, so open its
 * ptmx until each is reached, keep those masters in the reaper
 * (sb->tty_hold) and close the rest.  A number not reached (the pty
 * limit, the fd limit) keeps no name: its clone is dropped.
 */
static void
mount_tty_hold(struct sandbox *sb, struct mount_tty *t, size_t n)
{
	int		 spare[MOUNT_TTY_MAXNR + 1], fd;
	unsigned int	 nr, max = 0;
	size_t		 i, nspare = 0, held = 0;

	for (i = 0; i < n; i++)
		if (t[i].nr > max)
			max = t[i].nr;
	while (held < n && nspare <= max) {
		if ((fd = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY |
		    O_CLOEXEC)) == -1) {
			log_debug("hold a pty number: %s", strerror(errno));
			break;
		}
		if (ioctl(fd, TIOCGPTN, &nr) == -1) {
			close(fd);
			break;
		}
		for (i = 0; i < n; i++)
			if (t[i].nr == nr)
				break;
		if (i < n) {
			sb->tty_hold[i] = fd;
			held++;
		} else
			spare[nspare++] = fd;
	}
	while (nspare > 0)
		close(spare[--nspare]);
	for (i = 0; i < n; i++) {
		if (sb->tty_hold[i] == -1) {
			close(t[i].tree);
			t[i].tree = -1;
		}
	}
}

/*
 * Each held number's node in the sandbox's devpts covered by the host's
 * node of that number: the inherited terminal, at the name
 * /proc/self/fd/N gives.  The masters keep those nodes in place.  A
 * terminal not shown is still the command's through its descriptors;
 * only its name is missing, as without this.
 */
static void
mount_tty_show(struct sandbox *sb, struct mount_tty *t, size_t n)
{
	char	path[64];
	size_t	i;

	mount_tty_hold(sb, t, n);
	for (i = 0; i < n; i++) {
		if (t[i].tree == -1)
			continue;
		snprintf(path, sizeof(path), "/dev/pts/%u", t[i].nr);
		if (mount_move(t[i].tree, path) == -1)
			log_debug("bind the terminal at %s: %s", path,
			    strerror(errno));
	}
}

static int
mount_dev(struct mount_state *ms, struct sandbox *sb)
{
	int		 fds[sizeof(mount_dev_nodes) / sizeof(*mount_dev_nodes)];
	struct mount_tty tty[3];
	char		 path[64];
	size_t		 i, n = sizeof(mount_dev_nodes) / sizeof(*mount_dev_nodes);
	size_t		 ntty;
	int		 rc = -1;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/dev/%s", mount_dev_nodes[i]);
		fds[i] = mount_clone(AT_FDCWD, path, 0);
	}
	ntty = mount_tty_find(tty);
	if (mount_tmpfs(ms, "/dev", "mode=0755,size=64k") == -1) {
		log_warn("mount tmpfs on /dev");
		goto done;
	}
	for (i = 0; i < n; i++) {
		if (fds[i] == -1)
			continue;
		snprintf(path, sizeof(path), "/dev/%s", mount_dev_nodes[i]);
		if (mount_mkpoint(ms, path, 0) == -1 ||
		    mount_move(fds[i], path) == -1) {
			log_warn("bind %s", path);
			goto done;
		}
	}
	if (mkdir("/dev/pts", 0755) == -1 ||
	    mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
	    "newinstance,ptmxmode=0666,mode=0620") == -1 ||
	    symlink("pts/ptmx", "/dev/ptmx") == -1) {
		log_warn("mount devpts");
		goto done;
	}
	mount_tty_show(sb, tty, ntty);
	if (mkdir("/dev/shm", 01777) == -1 ||
	    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
	    "mode=1777") == -1) {
		log_warn("mount /dev/shm");
		goto done;
	}
	if (symlink("/proc/self/fd", "/dev/fd") == -1 ||
	    symlink("/proc/self/fd/0", "/dev/stdin") == -1 ||
	    symlink("/proc/self/fd/1", "/dev/stdout") == -1 ||
	    symlink("/proc/self/fd/2", "/dev/stderr") == -1) {
		log_warn("/dev symlinks");
		goto done;
	}
	if (mount_setro(AT_FDCWD, "/dev", 0) == -1) {
		log_warn("make /dev read-only");
		goto done;
	}
	rc = 0;
done:
	for (i = 0; i < n; i++)
		if (fds[i] != -1)
			close(fds[i]);
	for (i = 0; i < ntty; i++)
		if (tty[i].tree != -1)
			close(tty[i].tree);
	return rc;
}

/*
 * The run directory's files, made in memory by the parent (fs.h), on a
 * tmpfs of the sandbox's own mounted over the run directory, sized for
 * them; the host's tmp/ (the command's TMPDIR, on the host's disk: a
 * build may write gigabytes) cloned first and moved back in.  Every path
 * the environment and the copies name (GIT_PROXY_COMMAND, SSL_CERT_FILE,
 * a git config's include.path) stays true; nothing of them is on the
 * host, nor has to be removed at exit.  First of all: the plan clones
 * from here (the run directory shown read-only, the copies bound over
 * their originals), and the whole tree, this tmpfs too, is made
 * read-only next.  Not noexec: git runs git-proxy.
 */
static int
mount_runfiles(const struct sandbox *sb)
{
	const char	*failed;
	char		 opts[96];
	int		 tmpfd, dfd = -1, rc = -1;

	if (sb->files.n == 0)
		return 0;
	if ((tmpfd = mount_clone(AT_FDCWD, sb->tmpdir, 0)) == -1) {
		log_warn("clone %s", sb->tmpdir);
		return -1;
	}
	snprintf(opts, sizeof(opts), "mode=0700,size=%zu,nr_inodes=%zu",
	    fs_runfiles_size(&sb->files) + MOUNT_RUNFILES_SLACK,
	    sb->files.n + 8);
	if (mount("tmpfs", sb->rundir, "tmpfs", MS_NOSUID | MS_NODEV,
	    opts) == -1) {
		log_warn("mount a tmpfs on %s", sb->rundir);
		goto done;
	}
	if ((dfd = open(sb->rundir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fs_runfiles_write(dfd, &sb->files,
	    &failed) == -1) {
		log_warn("%s/%s", sb->rundir, dfd == -1 ? "" : failed);
		goto done;
	}
	if (mkdirat(dfd, "tmp", 0700) == -1 ||
	    mount_move(tmpfd, sb->tmpdir) == -1) {
		log_warn("bind %s", sb->tmpdir);
		goto done;
	}
	rc = 0;
done:
	if (dfd != -1)
		close(dfd);
	close(tmpfd);
	return rc;
}

int
mount_runfiles_nons(const struct sandbox *sb)
{
	const char	*failed;
	int		 dfd, rc;

	if (sb->files.n == 0)
		return 0;
	if ((dfd = open(sb->rundir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		log_warn("%s", sb->rundir);
		return -1;
	}
	if ((rc = fs_runfiles_write(dfd, &sb->files, &failed)) == -1)
		log_warn("%s/%s", sb->rundir, failed);
	close(dfd);
	return rc;
}

int
mount_apply(struct sandbox *sb)
{
	const struct fs_plan	*plan = &sb->plan;
	struct mount_state	 ms = { .tmpfs_dev = NULL };
	int			*fds = NULL, *bfds = NULL, efd = -1, sshfd = -1;
	int			 hfd = -1;	/* the first hidden file's bind */
	int			 fd;
	char			 opts[64];
	size_t			 i;
	int			 rc = -1;
	unsigned char		*own = NULL;	/* a tmpfs of its own */

	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == -1) {
		log_warn("make / a slave mount");
		return -1;
	}
	if (mount_runfiles(sb) == -1)
		return -1;
	if ((fds = calloc(plan->nrules + 1, sizeof(*fds))) == NULL)
		return -1;
	for (i = 0; i < plan->nrules; i++)
		fds[i] = -1;
	if ((own = calloc(plan->nrules + 1, sizeof(*own))) == NULL)
		goto done;
	for (i = 0; i < plan->nrules; i++) {
		const struct fs_rule *r = &plan->rules[i];

		if (r->action == FS_HIDE)
			continue;
		if ((fds[i] = mount_clone(AT_FDCWD, r->source != NULL ?
		    r->source : r->path, r->action == FS_EXPOSE_RO)) == -1) {
			log_warn("clone mount tree %s", r->source != NULL ?
			    r->source : r->path);
			goto done;
		}
	}
	/*
	 * The files bound over others, taken now: a rule may hide the
	 * directory they are in (a private directory in /tmp above the run
	 * directory).
	 */
	if (sb->empty != NULL && (efd = open(sb->empty, O_PATH |
	    O_CLOEXEC)) == -1 && errno != ENOENT) {
		log_warn("%s", sb->empty);
		goto done;
	}
	if (sb->ssh_config != NULL && (sshfd = mount_clone(AT_FDCWD,
	    sb->ssh_config, 1)) == -1) {
		log_warn("clone %s", sb->ssh_config);
		goto done;
	}
	if ((bfds = calloc(sb->nbinds + 1, sizeof(*bfds))) == NULL)
		goto done;
	for (i = 0; i < sb->nbinds; i++)
		bfds[i] = -1;
	for (i = 0; i < sb->nbinds; i++) {
		if ((bfds[i] = mount_clone(AT_FDCWD, sb->binds[i].source,
		    1)) == -1) {
			log_warn("clone %s", sb->binds[i].source);
			goto done;
		}
	}
	if (mount_setro(AT_FDCWD, "/", 1) == -1) {
		log_warn("make / read-only");
		goto done;
	}
	if (mount_proc(sb->userns) == -1 || mount_dev(&ms, sb) == -1)
		goto done;

	for (i = 0; i < plan->nrules; i++) {
		const struct fs_rule *r = &plan->rules[i];

		if (r->action == FS_HIDE) {
			if (r->is_dir && mount_hide_leaf(plan, i)) {
				/* Shared, read-only from the start. */
				if ((fd = mount_hide_dir(&ms, r->path,
				    r->mode != 0 ? r->mode : 0755)) == 0 ||
				    (fd == -1 && (errno == ENOENT ||
				    errno == ENOTDIR)))
					continue;
				if (fd == -1) {
					log_warn("hide %s", r->path);
					goto done;
				}
			}
			if (r->is_dir) {
				/* An empty directory, with the mode it had. */
				snprintf(opts, sizeof(opts), "mode=%04o,size=1m",
				    r->mode != 0 ? (unsigned int)r->mode :
				    0755U);
				own[i] = 1;
				if (mount_tmpfs(&ms, r->path, opts) == -1) {
					/* Gone since (a private directory in
					 * /tmp): nothing to hide. */
					if (errno == ENOENT || errno == ENOTDIR)
						continue;
					log_warn("hide %s", r->path);
					goto done;
				}
				continue;
			}
			if (efd == -1) {
				errno = ENOENT;
				log_warn("hide %s: %s", r->path, sb->empty);
				goto done;
			}
			/*
			 * The first bind made read-only, the others cloned
			 * from it once it is placed (a clone keeps the flag):
			 * one mount_setattr in all, not one a file.
			 */
			if ((fd = hfd != -1 ? (int)syscall(SYS_open_tree, hfd,
			    "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
			    AT_EMPTY_PATH) : mount_clone(efd, "", 1)) == -1) {
				log_warn("hide %s", r->path);
				goto done;
			}
			if (mount_move(fd, r->path) == -1) {
				close(fd);
				/* Not there any more: nothing to hide.
				 * Anything else is fatal. */
				if (errno == ENOENT)
					continue;
				log_warn("hide %s", r->path);
				goto done;
			}
			if (hfd == -1)
				hfd = fd;
			else
				close(fd);
			continue;
		}
		if (mount_mkpoint(&ms, r->path, r->is_dir) == -1) {
			log_debug("no mount point for %s: %s", r->path,
			    strerror(errno));
			continue;
		}
		if (mount_move(fds[i], r->path) == -1) {
			log_warn("mount %s", r->path);
			goto done;
		}
	}
	/* ssh's system config, with the sandbox's ProxyCommand last. */
	if (sshfd != -1 && mount_move(sshfd, RUNDIR_SSH_CONFIG) == -1 &&
	    errno != ENOENT) {
		log_warn("bind %s", RUNDIR_SSH_CONFIG);
		goto done;
	}
	/* Where the target is hidden or gone, there is nothing to cover. */
	for (i = 0; i < sb->nbinds; i++) {
		if (mount_move(bfds[i], sb->binds[i].target) == -1 &&
		    errno != ENOENT) {
			log_warn("bind %s over %s", sb->binds[i].source,
			    sb->binds[i].target);
			goto done;
		}
	}
	/* The tmpfs mounts over denied directories end read-only. */
	for (i = 0; i < plan->nrules; i++) {
		const struct fs_rule *r = &plan->rules[i];

		if (own[i] && mount_setro(AT_FDCWD, r->path, 0) == -1 &&
		    errno != ENOENT && errno != ENOTDIR) {
			log_warn("make %s read-only", r->path);
			goto done;
		}
	}
	/* The old cwd still points into the original, uncovered mount. */
	if (chdir(sb->cwd) == -1) {
		log_warn("chdir %s", sb->cwd);
		goto done;
	}
	rc = 0;
done:
	for (i = 0; i < plan->nrules; i++)
		if (fds[i] != -1)
			close(fds[i]);
	if (efd != -1)
		close(efd);
	if (hfd != -1)
		close(hfd);
	if (sshfd != -1)
		close(sshfd);
	for (i = 0; bfds != NULL && i < sb->nbinds; i++)
		if (bfds[i] != -1)
			close(bfds[i]);
	free(bfds);
	free(fds);
	free(own);
	free(ms.tmpfs_dev);
	for (i = 0; i < ms.nempty; i++)
		close(ms.empty[i].fd);
	return rc;
}
