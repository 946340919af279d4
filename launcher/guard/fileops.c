/*
 * The file operations the guard performs for the command: open (the
 * opened file installed in the command), truncate and link here; mkdir,
 * mknod, symlink and rename are a few lines each in guard_request.
 *
 * To be free of time-of-check/time-of-use races, the guard never lets
 * the kernel re-read the command's arguments: it reads each path once
 * (process_vm_readv, then checks that the caller still waits, so the
 * memory read was the caller's), resolves the parent directory to an fd,
 * checks the resulting path, and performs the operation itself on that
 * fd (the opened file is installed in the command with
 * SECCOMP_IOCTL_NOTIF_ADDFD; a socket to bind is borrowed with
 * pidfd_getfd).  What it reads of the caller -- the path, its cwd, a
 * dirfd -- it reads once, and acts from what it checked, never from a
 * second read another thread could have changed (a chdir between the
 * two made a bind land elsewhere): a bind, which takes no directory fd,
 * is made from the very cwd it was checked against, and where the
 * socket landed is verified (guard_bound).  A check that cannot be made
 * is a refusal.  It runs with the command's uid, no capabilities, the
 * same Landlock domain and the same mount namespace, so it can do
 * nothing the command could not -- except create or write a protected
 * name.  Renames, links and symlinks onto a directory on the way to a
 * protected name are refused too, so a prepared tree cannot be moved
 * into place.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "launcher/fs/fs.h"
#include "launcher/guard/guard.h"
#include "launcher/guard/guard_int.h"

static int	guard_install_now(struct guard_req *, int parent,
		    const char *name, int flags, mode_t mode);
static int	guard_is_commondir(struct guard_req *,
		    const struct guard_path *);
static int	guard_commondir(struct guard_req *, const struct guard_path *,
		    int flags, mode_t mode);

/*
 * Open, and install the file in the command, close-on-exec only if it
 * asked so (the guard's own copy always is): 1 (answered) or -errno.
 */
static int
guard_install_now(struct guard_req *gr, int parent, const char *name,
    int flags, mode_t mode)
{
	struct seccomp_notif_addfd	add;
	int				fd, rc;

	if ((fd = openat(parent, name, flags | O_CLOEXEC, mode)) == -1)
		return -errno;
	memset(&add, 0, sizeof(add));
	add.id = gr->id;
	add.flags = SECCOMP_ADDFD_FLAG_SEND;
	add.srcfd = (uint32_t)fd;
	add.newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
	rc = ioctl(gr->g->notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	close(fd);
	/* Answered, or the command is gone: nothing more to send. */
	return rc >= 0 || errno == ENOENT ? 1 : -errno;
}

/*
 * A FIFO's writer waits for a reader, and the reader may first need a
 * creation of its own (`cat fifo >out`): opened in a child, so the guard
 * goes on answering.  st: what name is, when known already (not
 * followed), or NULL.
 */
int
guard_install(struct guard_req *gr, int parent, const char *name, int flags,
    mode_t mode, int follow, const struct stat *st)
{
	struct seccomp_notif_resp	resp;
	struct stat			sb;
	pid_t				pid;
	int				rc;

	if (st == NULL && !(flags & O_NONBLOCK) && fstatat(parent, name, &sb,
	    follow ? 0 : AT_SYMLINK_NOFOLLOW) == 0)
		st = &sb;
	if ((flags & O_NONBLOCK) || st == NULL || !S_ISFIFO(st->st_mode))
		return guard_install_now(gr, parent, name, flags, mode);
	if ((pid = fork()) == -1)
		return -errno;
	if (pid == 0) {
		if ((rc = guard_install_now(gr, parent, name, flags,
		    mode)) < 0) {
			memset(&resp, 0, sizeof(resp));
			resp.id = gr->id;
			resp.error = rc;
			(void)guard_respond(gr->g->notify_fd, &resp);
		}
		_exit(0);
	}
	return 1;
}

/*
 * open(2) that can create, write or truncate.  The file is opened by the
 * guard on the checked directory fd, with O_NOFOLLOW: a symlink planted
 * since the check is not followed.
 */
int
guard_open(struct guard_req *gr, int dfd, uint64_t addr, int flags,
    mode_t mode)
{
	struct guard_path	 gp;
	char			 link[64];
	int			 rc, head, excl;

	guard_path_init(&gp);
	flags |= O_NOCTTY;
	mode &= ~(mode_t)GUARD_SETID;
	excl = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	if ((rc = guard_at(gr, dfd, addr, &gp)) < 0 ||
	    (rc = guard_final(gr, &gp, !(flags & (O_NOFOLLOW | O_EXCL)),
	    !excl)) < 0)
		goto done;
	if ((flags & O_CREAT) && guard_is_commondir(gr, &gp)) {
		rc = guard_commondir(gr, &gp, flags, mode);
		goto done;
	}
	if ((rc = guard_check(gr, &gp, 0, excl ? NULL : (flags & O_CREAT) &&
	    (gp.parent == -1 || !gp.exists) ? "create" : "write")) < 0)
		goto done;
	if ((flags & O_CREAT) && !gp.exists && gp.magic == -1 &&
	    (rc = guard_wtadd(gr, &gp)) < 0)
		goto done;
	if (gp.magic != -1) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", gp.magic);
		rc = guard_install(gr, AT_FDCWD, link, flags, mode, 1, NULL);
		goto done;
	}
	if (gp.exists && S_ISCHR(gp.st.st_mode) &&
	    gp.st.st_rdev == makedev(GUARD_TTY_MAJOR, 0)) {
		rc = guard_tty(gr, flags, mode);
		goto done;
	}
	head = (flags & O_CREAT) && guard_head_before(gr, &gp);
	/*
	 * Told before the open answers the command (ADDFD_FLAG_SEND): a
	 * command that exits at once ends the guard with the sandbox, and
	 * a .git or HEAD told after could be never told.  Told for an open
	 * that then fails, the parent finds no repository there.
	 */
	if (flags & O_CREAT)
		guard_created(gr, &gp, head);
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		guard_umask(gr);
	rc = guard_install(gr, gp.parent, gp.name, flags | O_NOFOLLOW, mode,
	    0, &gp.st);
	if (rc == 1 && (flags & O_CREAT))
		guard_created(gr, &gp, head);
	guard_readonly(gr, &gp, (flags & O_CREAT) && !gp.exists ? "create" :
	    "write", rc);
done:
	guard_path_clear(&gp);
	return rc;
}

/*
 * Whether gp is the commondir "git worktree add" creates in a linked
 * worktree's entry, worktrees/W/, of a git directory older than the
 * run, W made during the run: the one file of that entry git's rules
 * protect that git worktree add must write.  Nothing else may stand in
 * the way (a protected name, a pattern).
 */
static int
guard_is_commondir(struct guard_req *gr, const struct guard_path *gp)
{
	struct stat	 st;
	const char	*p;
	size_t		 len = strlen(gp->full);
	int		 wt, gd, made;

	if (gp->parent == -1 || gp->exists || gp->magic != -1 ||
	    strcmp(gp->last, "commondir") != 0 || len < 21)
		return 0;
	/* .../worktrees/W/commondir */
	for (p = gp->full + len - 11; p > gp->full && p[-1] != '/'; p--)
		;
	if (p - gp->full < 11 || strncmp(p - 11, "/worktrees/", 11) != 0)
		return 0;
	if (guard_parent_stat(gp, &st) == -1 ||
	    !guard_made_known(gr->g, &st))
		return 0;
	if ((wt = openat(gp->parent, "..", O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return 0;
	gd = openat(wt, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	close(wt);
	if (gd == -1)
		return 0;
	made = fstat(gd, &st) == -1 || guard_made_known(gr->g, &st) ||
	    !guard_shape(gd);
	close(gd);
	if (made)
		return 0;
	return guard_guarded(gr->g, gp->full, 0) == NULL &&
	    fs_glob_denied(gr->g->conf.plan, gp->full) == NULL;
}

/*
 * Create that commondir with what git worktree add writes, "../..": the
 * worktree then reads the configuration and hooks of its own
 * repository, which are protected.  The command's own bytes go to
 * /dev/null: a commondir naming another directory would have git in
 * that worktree (one made outside, whose entry the command removed and
 * made again, too) run a planted configuration, even while the command
 * still runs.  1 (answered) or -errno.
 */
static int
guard_commondir(struct guard_req *gr, const struct guard_path *gp,
    int flags, mode_t mode)
{
	static const char	 text[] = "../..\n";
	int			 fd;
	ssize_t			 n;

	guard_umask(gr);
	if ((fd = openat(gp->parent, gp->name, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, mode)) == -1)
		return -errno;
	n = write(fd, text, sizeof(text) - 1);
	if (close(fd) == -1 || n != (ssize_t)sizeof(text) - 1) {
		(void)unlinkat(gp->parent, gp->name, 0);
		return -EIO;
	}
	return guard_install(gr, AT_FDCWD, "/dev/null", (flags & (O_ACCMODE |
	    O_APPEND | O_CLOEXEC)) | O_NOCTTY, 0, 1, NULL);
}

/* truncate(2) by name: checked like an open for writing. */
int
guard_truncate(struct guard_req *gr, uint64_t addr, off_t len)
{
	struct guard_path	 gp;
	struct stat		 st;
	char			 link[64];
	int			 fd = -1, w, rc;

	guard_path_init(&gp);
	if ((rc = guard_at(gr, AT_FDCWD, addr, &gp)) < 0 ||
	    (rc = guard_final(gr, &gp, 1, 1)) < 0 ||
	    (rc = guard_check(gr, &gp, 0, "truncate")) < 0)
		goto done;
	if (gp.magic != -1)
		fd = fcntl(gp.magic, F_DUPFD_CLOEXEC, 3);
	else
		fd = openat(gp.parent, gp.name, O_PATH | O_CLOEXEC |
		    O_NOFOLLOW);
	if (fd == -1 || fstat(fd, &st) == -1) {
		rc = -errno;
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto done;
	}
	/* Reopened for writing through the very file checked. */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	w = open(link, O_WRONLY | O_CLOEXEC);
	close(fd);
	if ((fd = w) == -1 || ftruncate(fd, len) == -1)
		rc = -errno;
	guard_readonly(gr, &gp, "truncate", rc);
done:
	if (fd != -1)
		close(fd);
	guard_path_clear(&gp);
	return rc;
}

/*
 * link(2), linkat(2): the new name is checked like a creation, and the
 * file linked like a write (a second name for a protected file would be
 * a writable one).
 */
int
guard_link(struct guard_req *gr, const __u64 *a, int at)
{
	struct guard_path	 np, op;
	char			 src[PATH_MAX], link[64];
	int			 flags = at ? (int)a[4] : 0, rc;

	guard_path_init(&np);
	guard_path_init(&op);
	if ((rc = guard_at(gr, at ? (int)a[2] : AT_FDCWD, a[at ? 3 : 1],
	    &np)) < 0 || (rc = guard_check(gr, &np, 1, "create")) < 0 ||
	    (rc = guard_read_str(gr, a[at ? 1 : 0], src, sizeof(src))) < 0)
		goto done;
	if (src[0] == '\0' && (flags & AT_EMPTY_PATH)) {
		/* An O_TMPFILE (or any) fd of the command. */
		snprintf(src, sizeof(src), "/proc/%ld/fd/%d", (long)gr->pid,
		    (int)a[0]);
		if ((rc = guard_at_str(gr, AT_FDCWD, src, &op)) < 0 ||
		    (rc = guard_magic(gr, &op, 1)) < 0)
			goto done;
	} else if ((rc = guard_at_str(gr, at ? (int)a[0] : AT_FDCWD, src,
	    &op)) < 0 || (rc = guard_final(gr, &op,
	    (flags & AT_SYMLINK_FOLLOW) != 0, 1)) < 0)
		goto done;
	if ((rc = guard_check(gr, &op, 0, "link")) < 0 ||
	    (rc = guard_hidden(gr, &op, "link")) < 0)
		goto done;
	if (op.magic != -1) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", op.magic);
		rc = linkat(AT_FDCWD, link, np.parent, np.name,
		    AT_SYMLINK_FOLLOW) == -1 ? -errno : 0;
	} else
		rc = linkat(op.parent, op.name, np.parent, np.name, 0) == -1 ?
		    -errno : 0;
	if (rc == 0)
		guard_created(gr, &np, 0);
	guard_readonly(gr, &np, "create", rc);
done:
	guard_path_clear(&np);
	guard_path_clear(&op);
	return rc;
}
