/*
 * Names are resolved as the caller's kernel would, never in the guard's
 * own context: there "/proc/self" (and /dev/fd, a link to it) is the
 * guard, and /proc/<pid>/fd/N opens what the guard may open.  So the
 * kernel walks a directory path only when it has no symlink (openat2
 * RESOLVE_NO_SYMLINKS, which refuses magic links too) and does not end
 * in procfs; otherwise the guard walks it one component at a time
 * (guard_walk): a symlink's text is spliced in, "self" and "thread-self"
 * become the caller's ids, and a magic link is followed only in the
 * caller's own /proc directory.  Any other name in /proc is refused
 * (guard_proc_refuse).  The process holds nothing but the report channel
 * besides (reaper_close_all), a socket no name reopens.
 *
 * Here: a path read from the caller becomes a guard_path -- the parent
 * directory open, the last component, the resolved text the checks
 * look at (guard_at, guard_resolve, guard_final).
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <linux/openat2.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/guard/guard.h"
#include "launcher/guard/guard_int.h"

static int	guard_on_proc(int fd);
static int	guard_on_proc_st(struct guard_path *, int fd);
static int	guard_proc_where(struct guard_req *, int fd, char *buf,
		    size_t size);
static int	guard_proc_refuse(struct guard_req *, const char *path);
static int	guard_walk(struct guard_req *, int base, const char *dir,
		    struct guard_path *);
static int	guard_resolve(struct guard_req *, int base, int own,
		    const char *basepath, const char *path, struct guard_path *);

void
guard_path_init(struct guard_path *gp)
{
	gp->parent = gp->magic = gp->base = -1;
	gp->name[0] = gp->full[0] = gp->last[0] = '\0';
	gp->dots = gp->proc = gp->exists = gp->lexical = 0;
	gp->onproc = -1;
	gp->pst_ok = 0;
	gp->st.st_mode = 0;
}

void
guard_path_clear(struct guard_path *gp)
{
	if (gp->parent != -1)
		close(gp->parent);
	if (gp->magic != -1)
		close(gp->magic);
	if (gp->base != -1)
		close(gp->base);
	guard_path_init(gp);
}

static int
guard_on_proc(int fd)
{
	struct statfs	sfs;

	return fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
}

/*
 * guard_on_proc for what becomes gp's parent, which is fstat'd too
 * (gp->pst): procfs, like tmpfs and every file system without a block
 * device, has an anonymous device number (major 0: get_tree_nodev), so
 * a directory on a device of another major is not in procfs, and only
 * the others need fstatfs.  One system call per resolved parent where
 * the files are on a disk, instead of fstatfs here and fstat later.
 */
static int
guard_on_proc_st(struct guard_path *gp, int fd)
{
	gp->pst_ok = fstat(fd, &gp->pst) == 0;
	if (gp->pst_ok && major(gp->pst.st_dev) != 0)
		return 0;
	return guard_on_proc(fd);
}

/*
 * The parent's fstat: kept by guard_resolve, or asked.  0, or -1 (errno).
 */
int
guard_parent_stat(const struct guard_path *gp, struct stat *st)
{
	if (gp->pst_ok) {
		*st = gp->pst;
		return 0;
	}
	return fstat(gp->parent, st);
}

/*
 * Where the procfs directory or file fd lies, by the kernel's name for it
 * (the sandbox's procfs is mounted on /proc, and nothing can mount
 * another): GUARD_PROC_ROOT for /proc itself, GUARD_PROC_CALLER within
 * /proc/<the caller's process or thread>, else GUARD_PROC_OTHER -- which
 * the guard never reaches into for the command.  buf gets the name.
 */
#define GUARD_PROC_ROOT		1
#define GUARD_PROC_CALLER	2
#define GUARD_PROC_OTHER	3
static int
guard_proc_where(struct guard_req *gr, int fd, char *buf, size_t size)
{
	char	 link[64], *end;
	ssize_t	 n;
	long	 pid;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, buf, size - 1)) <= 0 || (size_t)n == size - 1) {
		snprintf(buf, size, "(a file in /proc)");
		return GUARD_PROC_OTHER;
	}
	buf[n] = '\0';
	if (strcmp(buf, "/proc") == 0)
		return GUARD_PROC_ROOT;
	if (strncmp(buf, "/proc/", 6) != 0 || buf[6] < '1' || buf[6] > '9')
		return GUARD_PROC_OTHER;
	errno = 0;
	pid = strtol(buf + 6, &end, 10);
	if (errno != 0 || (*end != '/' && *end != '\0'))
		return GUARD_PROC_OTHER;
	return pid == (long)gr->pid || pid == (long)guard_tgid(gr) ?
	    GUARD_PROC_CALLER : GUARD_PROC_OTHER;
}

/*
 * A path through /proc to something not the caller's own: the guard
 * would open it as itself -- its own descriptors (the host's devices, the
 * report channel), its memory, other processes' files -- so it is
 * refused, and said.  -EACCES.
 */
static int
guard_proc_refuse(struct guard_req *gr, const char *path)
{
	guard_refuse(gr, path, "open", "a name in /proc that is not the "
	    "calling process's own: through /proc a command reaches only "
	    "its own descriptors, cwd and root (/proc/self/fd/N, /dev/fd/N, "
	    "/dev/stdout) when it creates or writes (see pisbx-run(1), "
	    "FILESYSTEM)");
	return -EACCES;
}

/*
 * Open the directory dir (relative to base; absolute from the root) as
 * the caller's own lookup would, without ever letting the kernel follow
 * a link in the guard's context, where "/proc/self" is the guard and
 * /proc/<pid>/fd/N opens whatever the guard may (redteam #1).  One
 * component at a time, O_NOFOLLOW: a symlink's text is spliced into what
 * is left; "self" and "thread-self" at the procfs root become the
 * caller's ids; a procfs magic link (fd/N, cwd, root...) is followed
 * only in the caller's own /proc directory, where it names the caller's
 * object.  The O_PATH fd, or -errno (a refusal said); gp->onproc:
 * whether that fd lies in procfs (gp->pst, its fstat).
 */
static int
guard_walk(struct guard_req *gr, int base, const char *dir,
    struct guard_path *gp)
{
	struct stat	 st;
	char		 rest[PATH_MAX], tmp[PATH_MAX], comp[NAME_MAX + 1];
	char		 target[PATH_MAX], where[PATH_MAX];
	const char	*p, *e;
	size_t		 n;
	ssize_t		 tl;
	int		 cur, fd, hops = 0, magic = 0, w, rc;

	if ((size_t)snprintf(rest, sizeof(rest), "%s", dir) >= sizeof(rest))
		return -ENAMETOOLONG;
	p = rest;
	cur = fcntl(*p == '/' ? gr->g->root : base, F_DUPFD_CLOEXEC, 3);
	if (cur == -1)
		return -errno;
	for (;;) {
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		e = strchrnul(p, '/');
		if ((n = (size_t)(e - p)) > NAME_MAX) {
			rc = -ENAMETOOLONG;
			goto fail;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p = e;
		if (strcmp(comp, ".") == 0)
			continue;
		w = guard_on_proc(cur) ? guard_proc_where(gr, cur, where,
		    sizeof(where)) : 0;
		if (w == GUARD_PROC_ROOT && (strcmp(comp, "self") == 0 ||
		    strcmp(comp, "thread-self") == 0)) {
			/* What the caller's kernel would read there. */
			if (comp[0] == 's')
				n = (size_t)snprintf(tmp, sizeof(tmp), "%ld%s",
				    (long)guard_tgid(gr), p);
			else
				n = (size_t)snprintf(tmp, sizeof(tmp),
				    "%ld/task/%ld%s", (long)guard_tgid(gr),
				    (long)gr->pid, p);
			if (n >= sizeof(tmp)) {
				rc = -ENAMETOOLONG;
				goto fail;
			}
			memcpy(rest, tmp, n + 1);
			p = rest;
			continue;
		}
		if ((fd = openat(cur, comp, O_PATH | O_NOFOLLOW |
		    O_CLOEXEC)) == -1 || fstat(fd, &st) == -1) {
			rc = -errno;
			if (fd != -1)
				close(fd);
			goto fail;
		}
		if (S_ISLNK(st.st_mode) && w != 0 && w != GUARD_PROC_ROOT) {
			/* A magic link: the caller's own, or nothing. */
			close(fd);
			if (w != GUARD_PROC_CALLER) {
				rc = guard_proc_refuse(gr, where);
				goto fail;
			}
			if ((fd = openat(cur, comp, O_PATH | O_CLOEXEC)) ==
			    -1 || fstat(fd, &st) == -1) {
				rc = -errno;
				if (fd != -1)
					close(fd);
				goto fail;
			}
			magic = 1;
		} else if (S_ISLNK(st.st_mode)) {
			if (++hops > GUARD_MAXLINKS) {
				close(fd);
				rc = -ELOOP;
				goto fail;
			}
			tl = readlinkat(fd, "", target, sizeof(target) - 1);
			close(fd);
			if (tl <= 0) {
				rc = -ELOOP;
				goto fail;
			}
			target[tl] = '\0';
			if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", target,
			    p) >= sizeof(tmp)) {
				rc = -ENAMETOOLONG;
				goto fail;
			}
			memcpy(rest, tmp, strlen(tmp) + 1);
			p = rest;
			if (target[0] == '/') {
				close(cur);
				if ((cur = fcntl(gr->g->root, F_DUPFD_CLOEXEC,
				    3)) == -1)
					return -errno;
			}
			continue;
		}
		close(cur);
		cur = fd;
		if (!S_ISDIR(st.st_mode)) {
			rc = -ENOTDIR;
			goto fail;
		}
	}
	/* The directory reached: the caller's, in procfs. */
	if ((gp->onproc = guard_on_proc_st(gp, cur)) &&
	    guard_proc_where(gr, cur, where, sizeof(where)) ==
	    GUARD_PROC_OTHER) {
		rc = guard_proc_refuse(gr, where);
		goto fail;
	}
	/* A magic link named the caller's object only if it still waits. */
	if (magic && (rc = guard_valid(gr)) < 0)
		goto fail;
	return cur;
fail:
	close(cur);
	gp->onproc = -1;
	gp->pst_ok = 0;
	return rc;
}

/*
 * base joined with the directory path dir, ".", ".." and empty
 * components taken away as the kernel would take them when no component
 * is a symlink (then ".." is the parent of what came before, also across
 * a mount).  0, or -ENAMETOOLONG.
 */
int
guard_lexical(const char *base, const char *dir, char *out, size_t size)
{
	const char	*p = dir, *e;
	size_t		 len, n;

	if ((len = strlen(base)) >= size)
		return -ENAMETOOLONG;
	memcpy(out, base, len + 1);
	while (len > 1 && out[len - 1] == '/')
		out[--len] = '\0';
	for (; *p != '\0'; p = e) {
		while (*p == '/')
			p++;
		if ((e = strchr(p, '/')) == NULL)
			e = p + strlen(p);
		n = (size_t)(e - p);
		if (n == 0 || (n == 1 && p[0] == '.'))
			continue;
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (len > 1 && out[len - 1] != '/')
				len--;
			if (len > 1)
				len--;
			out[len] = '\0';
			continue;
		}
		if (len + (len > 1) + n >= size)
			return -ENAMETOOLONG;
		if (len > 1)
			out[len++] = '/';
		memcpy(out + len, p, n);
		len += n;
		out[len] = '\0';
	}
	return 0;
}

/*
 * Split path into its parent directory, opened (following symlinks as
 * the kernel does for every component but the last), and the last name;
 * gp->full is the real path of that name.  When the path of base is
 * known (basepath) and no component of the directory is a symlink
 * (openat2's RESOLVE_NO_SYMLINKS proves it), that is the text of the
 * path, cleaned; otherwise the kernel names the opened directory.  With
 * own, base is the caller's to give: it becomes the parent, or is closed.
 */
static int
guard_resolve(struct guard_req *gr, int base, int own, const char *basepath,
    const char *path, struct guard_path *gp)
{
	struct open_how	 how;
	char		 dir[PATH_MAX], real[PATH_MAX];
	char		 link[64];
	const char	*slash, *d;
	size_t		 len, end;
	ssize_t		 n;
	int		 named = 0, err = 0, onproc = 0, w;

	gp->parent = -1;
	gp->onproc = -1;
	gp->pst_ok = 0;
	len = strlen(path);
	if (len == 0) {
		if (own)
			close(base);
		return -ENOENT;
	}
	end = len;
	while (end > 1 && path[end - 1] == '/')
		end--;
	slash = memrchr(path, '/', end);
	if (slash == NULL) {
		dir[0] = '\0';
		memcpy(gp->name, path, len + 1);
	} else {
		size_t dl = (size_t)(slash - path);

		if (dl == 0)
			dl = 1;		/* "/name" */
		memcpy(dir, path, dl);
		dir[dl] = '\0';
		memcpy(gp->name, slash + 1,
		    len - (size_t)(slash + 1 - path) + 1);
	}
	if (gp->name[0] == '\0' || strcmp(gp->name, "/") == 0) {
		if (own)
			close(base);
		return -EEXIST;		/* "/" itself */
	}
	d = dir;
	while (*d == '/')
		d++;
	if (*d == '\0') {
		/* "/name" or "name": in the root, or in base. */
		if (path[0] == '/') {
			gp->parent = fcntl(gr->g->root, F_DUPFD_CLOEXEC, 3);
		} else {
			gp->parent = own ? base : fcntl(base, F_DUPFD_CLOEXEC,
			    3);
			own = 0;
		}
		err = errno;
		named = basepath != NULL;
		gp->lexical = 1;
		/* A base in procfs: the caller's own, or nothing. */
		if (gp->parent != -1 &&
		    (onproc = guard_on_proc_st(gp, gp->parent))) {
			gp->lexical = 0;
			if (guard_proc_where(gr, gp->parent, real,
			    sizeof(real)) == GUARD_PROC_OTHER) {
				close(gp->parent);
				gp->parent = -1;
				err = -guard_proc_refuse(gr, real);
			}
		}
	} else {
		/*
		 * No symlink on the way (no magic link either): the kernel
		 * may walk it, and the text names it.  Else, or in procfs,
		 * the guard walks it (guard_walk).
		 */
		if (gr->g->lexical) {
			memset(&how, 0, sizeof(how));
			how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
			how.resolve = RESOLVE_NO_SYMLINKS;
			gp->parent = (int)syscall(SYS_openat2, path[0] == '/' ?
			    gr->g->root : base, dir, &how, sizeof(how));
			err = errno;
			if (gp->parent != -1 &&
			    guard_on_proc_st(gp, gp->parent)) {
				close(gp->parent);
				gp->parent = -1;
				gp->pst_ok = 0;
				err = ELOOP;
			}
			named = gp->parent != -1 && basepath != NULL;
			gp->lexical = gp->parent != -1;
		}
		if (gp->parent == -1 && (!gr->g->lexical || err == ELOOP ||
		    err == ENOSYS)) {
			if ((w = guard_walk(gr, base, dir, gp)) < 0)
				err = -w;
			else {
				gp->parent = w;
				onproc = gp->onproc;
			}
		}
	}
	if (own)
		close(base);
	if (gp->parent == -1)
		return -err;
	/*
	 * Every way here looked at the parent's filesystem: the root or
	 * base, above; openat2's result, kept only off procfs; guard_walk's,
	 * at its end (guard_on_proc_st, each time).  An open fd's
	 * filesystem, device and inode are fixed for its life (no rename,
	 * mount or swap of the command's moves it), so guard_final, the
	 * git checks and the work-tree lookup may use these answers
	 * (gp->onproc, gp->pst) instead of asking again on the same fd.
	 */
	gp->onproc = onproc;

	if (named) {
		if (guard_lexical(basepath, d, real, sizeof(real)) < 0)
			return -ENAMETOOLONG;
	} else {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", gp->parent);
		if ((n = readlink(link, real, sizeof(real) - 1)) <= 0 ||
		    real[0] != '/')
			return -EACCES;
		/* readlink(2) cuts a longer name silently: never check a prefix. */
		if ((size_t)n == sizeof(real) - 1)
			return -ENAMETOOLONG;
		real[n] = '\0';
	}
	/* Once, here: every check that looks at the last component. */
	if (guard_last(gp->name, gp->last, sizeof(gp->last), &gp->dots) < 0)
		return -ENAMETOOLONG;
	if ((size_t)snprintf(gp->full, sizeof(gp->full), "%s%s%s", real,
	    strcmp(real, "/") == 0 ? "" : "/", gp->last) >= sizeof(gp->full))
		return -ENAMETOOLONG;
	return 0;
}

/*
 * The last component without its trailing slashes (".git/" and ".git//"
 * are ".git" to the kernel) into last, of size bytes; *dots: it is "."
 * or "..", which creates nothing.  0, or -ENAMETOOLONG.
 */
int
guard_last(const char *name, char *last, size_t size, int *dots)
{
	size_t	len = strlen(name);

	while (len > 1 && name[len - 1] == '/')
		len--;
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(last, name, len);
	last[len] = '\0';
	*dots = strcmp(last, ".") == 0 || strcmp(last, "..") == 0;
	return 0;
}

/*
 * Resolve a path of the command (already read) against dfd, and make
 * sure the request still stands (guard_valid) before anything read
 * through its pid is trusted.  An absolute path starts at the guard's
 * own root: every process of the sandbox has that one, since none can
 * chroot (no capabilities, no new user namespace: seccomp.c).  With
 * keep, the directory a relative path starts from is kept (gp->base):
 * the caller's cwd or dirfd is read once, and whatever the guard does
 * with the path's text afterwards starts from that very directory.
 */
int
guard_at_keep(struct guard_req *gr, int dfd, const char *raw,
    struct guard_path *gp, int keep)
{
	const char	*path = raw;
	int		 base, rc;

	gp->parent = -1;
	if (path[0] == '/') {
		if ((rc = guard_valid(gr)) < 0)
			return rc;
		return guard_resolve(gr, gr->g->root, 0, "/", path, gp);
	}
	if ((base = guard_base(gr, dfd)) < 0)
		return base == -EBADF ? -EBADF : -errno;
	if ((rc = guard_valid(gr)) < 0) {
		close(base);
		return rc;
	}
	if (keep && (gp->base = fcntl(base, F_DUPFD_CLOEXEC, 3)) == -1) {
		rc = -errno;
		close(base);
		return rc;
	}
	/*
	 * The kernel names the directory reached (guard_resolve): its name
	 * now, never one remembered from an earlier request, which the host
	 * may have made stale by moving a directory (into .git/hooks).
	 */
	return guard_resolve(gr, base, 1, NULL, path, gp);
}

/* guard_at_keep without keeping the base. */
int
guard_at_str(struct guard_req *gr, int dfd, const char *raw,
    struct guard_path *gp)
{
	return guard_at_keep(gr, dfd, raw, gp, 0);
}

/* Resolve a (dirfd, path pointer) pair of the command. */
int
guard_at(struct guard_req *gr, int dfd, uint64_t addr, struct guard_path *gp)
{
	char	raw[PATH_MAX];
	int	rc;

	gp->parent = -1;
	if ((rc = guard_read_str(gr, addr, raw, sizeof(raw))) < 0)
		return rc;
	return guard_at_str(gr, dfd, raw, gp);
}

/*
 * The last component lies in procfs, in the caller's own directory (or
 * the procfs root, where nothing is the caller's to write).  A magic
 * link (/proc/PID/fd/N, /proc/PID/cwd) reopens a file the caller holds,
 * which the kernel finds and a readlink can only name: the guard opens
 * it (O_PATH) in the caller's directory, and checks the name of what it
 * got; the file is then opened through that very fd (gp->magic), never
 * through the link again (the caller may change its descriptor).  A
 * pipe, a socket or a deleted file has no name to protect; a procfs file
 * is itself (gp->proc), when it is the caller's.
 */
int
guard_magic(struct guard_req *gr, struct guard_path *gp, int follow)
{
	struct stat	st;
	char		link[64], real[PATH_MAX], where[PATH_MAX];
	ssize_t		n;
	int		fd, rc, w;

	w = guard_proc_where(gr, gp->parent, where, sizeof(where));
	if (w == GUARD_PROC_ROOT) {
		if ((size_t)snprintf(where, sizeof(where), "/proc/%s",
		    gp->name) >= sizeof(where))
			return -ENAMETOOLONG;
		return guard_proc_refuse(gr, where);
	}
	if (w != GUARD_PROC_CALLER)
		return guard_proc_refuse(gr, where);
	if ((fd = openat(gp->parent, gp->name, O_PATH | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(fd, &st) == -1) {
		rc = -errno;
		if (fd != -1)
			close(fd);
		return rc;
	}
	if (S_ISLNK(st.st_mode)) {
		close(fd);
		if (!follow)
			return -ELOOP;
		if ((fd = openat(gp->parent, gp->name, O_PATH | O_CLOEXEC)) ==
		    -1)
			return -errno;
		/* The link was the caller's only if it still waits. */
		if ((rc = guard_valid(gr)) < 0) {
			close(fd);
			return rc;
		}
	}
	close(gp->parent);
	gp->parent = -1;
	gp->pst_ok = 0;
	gp->magic = fd;
	gp->full[0] = '\0';
	if (guard_on_proc(fd)) {
		/* The caller's own procfs file, or a way out: refused. */
		if (guard_proc_where(gr, fd, where, sizeof(where)) ==
		    GUARD_PROC_OTHER)
			return guard_proc_refuse(gr, where);
		gp->proc = 1;
		return 0;
	}
	/*
	 * A pipe, a socket or a file with no link left has no name to
	 * protect; anything else is checked by its name, which must be
	 * whole.  A name ending in " (deleted)" is a file's name when the
	 * file still has a link: such a name is no proof of anything.
	 */
	if (fstat(fd, &st) == -1)
		return -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, real, sizeof(real) - 1)) <= 0)
		return -EACCES;
	if ((size_t)n == sizeof(real) - 1)
		return -ENAMETOOLONG;
	real[n] = '\0';
	if (real[0] != '/' || st.st_nlink == 0)
		return 0;	/* nothing named */
	/* Its directory, for the git questions (the root is the command's). */
	if ((rc = guard_resolve(gr, gr->g->root, 0, "/", real, gp)) < 0) {
		/* A name outside this mount namespace: check it alone. */
		if (gp->parent != -1)
			close(gp->parent);
		gp->parent = -1;
		gp->pst_ok = 0;
		snprintf(gp->full, sizeof(gp->full), "%s", real);
	}
	return 0;
}

/*
 * Follow a symlink as the last component, one hop at a time, as the
 * kernel would (unless told not to), so the check sees the name that
 * would really be created or written.  gp->exists and gp->st say what
 * the final name is (not followed) -- unless not to look (an exclusive
 * creation: whatever is there, the call fails).
 */
int
guard_final(struct guard_req *gr, struct guard_path *gp, int follow, int look)
{
	char		 target[PATH_MAX], dir[PATH_MAX];
	char		*slash;
	ssize_t		 n;
	int		 hops, base, rc;

	for (hops = 0;; hops++) {
		gp->exists = 0;
		memset(&gp->st, 0, sizeof(gp->st));
		/* Kept by guard_resolve for this very fd (see there). */
		if (gp->onproc == -1)
			gp->onproc = guard_on_proc_st(gp, gp->parent);
		if (gp->onproc)
			return guard_magic(gr, gp, follow);
		if (!look && !follow)
			return 0;
		if (fstatat(gp->parent, gp->name, &gp->st,
		    AT_SYMLINK_NOFOLLOW) == -1) {
			memset(&gp->st, 0, sizeof(gp->st));
			return 0;
		}
		gp->exists = 1;
		if (!follow || !S_ISLNK(gp->st.st_mode))
			return 0;
		if (hops == GUARD_MAXLINKS)
			return -ELOOP;
		if ((n = readlinkat(gp->parent, gp->name, target,
		    sizeof(target) - 1)) <= 0)
			return -ELOOP;
		target[n] = '\0';
		if (target[0] == '/') {
			close(gp->parent);
			gp->parent = -1;
			rc = guard_resolve(gr, gr->g->root, 0, "/", target, gp);
		} else {
			/* Relative to the link's directory, whose path is known. */
			snprintf(dir, sizeof(dir), "%s", gp->full);
			if ((slash = strrchr(dir, '/')) != NULL)
				slash[slash == dir ? 1 : 0] = '\0';
			base = gp->parent;
			gp->parent = -1;
			rc = guard_resolve(gr, base, 1, dir, target, gp);
		}
		if (rc < 0)
			return rc;
	}
}
