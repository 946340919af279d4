/*
 * The creation guard: the supervisor of the command's seccomp
 * notifications for file creation.
 *
 * Why: the mandatory deny set must hold for names that do not exist yet
 * (creating ./.bashrc or .git/hooks/pre-commit must fail), and a bind
 * mount needs an existing target -- a stub file in the workspace, which
 * stays behind when pisbx-run is killed.  Landlock cannot express "this
 * directory except these names".  So every creating syscall (open with
 * O_CREAT, creat, mkdir, mknod, symlink, link, rename) stops in the
 * kernel and this process decides.
 *
 * To be free of time-of-check/time-of-use races, the guard never lets
 * the kernel re-read the command's arguments: it reads each path once
 * from /proc/PID/mem, resolves the parent directory to an fd, checks the
 * resulting path, and performs the operation itself on that fd (the
 * opened file is installed in the command with SECCOMP_IOCTL_NOTIF_ADDFD).
 * It runs with the command's uid, no capabilities, the same Landlock
 * domain and the same mount namespace, so it can do nothing the command
 * could not -- except create a protected name.  Renames, links and
 * symlinks onto a directory on the way to a protected name are refused
 * too, so a prepared tree cannot be moved into place.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/launcher.h"

#define GUARD_MAXLINKS	40
#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

struct guard_path {
	int	parent;		/* O_PATH fd of the parent directory */
	char	name[PATH_MAX];	/* last component, as given */
	char	full[PATH_MAX];	/* resolved path, for the check */
	int	dots;		/* "." or "..": creates nothing */
};

struct guard_req {
	const struct sandbox	*sb;
	pid_t			 pid;
	int			 mem;
	int			 notify_fd;
	uint64_t		 id;
};

static int	guard_read_str(struct guard_req *, uint64_t addr, char *buf,
		    size_t size);
static int	guard_base(struct guard_req *, int dfd, const char *path);
static const char *guard_self(struct guard_req *, const char *path,
		    char *buf, size_t size);
static int	guard_on_proc(int fd);
static int	guard_resolve(struct guard_req *, int base, const char *path,
		    struct guard_path *);
static int	guard_at(struct guard_req *, int dfd, uint64_t addr,
		    struct guard_path *);
static int	guard_check(struct guard_req *, const struct guard_path *,
		    int ancestors_too);
static void	guard_umask(struct guard_req *);
static int	guard_open(struct guard_req *, int dfd, uint64_t path,
		    int flags, mode_t mode);
static int	guard_install(struct guard_req *, int parent,
		    const char *name, int flags, mode_t mode, int follow);
static int	guard_install_now(struct guard_req *, int parent,
		    const char *name, int flags, mode_t mode);
static int	guard_handle(struct guard_req *, const struct seccomp_notif *,
		    struct seccomp_notif_resp *);

/* Read a NUL-terminated string from the command's memory. */
static int
guard_read_str(struct guard_req *gr, uint64_t addr, char *buf, size_t size)
{
	size_t	got = 0;
	ssize_t	n;

	if (addr == 0)
		return -EFAULT;
	while (got < size) {
		size_t want = 4096 - ((addr + got) & 4095);

		if (want > size - got)
			want = size - got;
		n = pread(gr->mem, buf + got, want, (off_t)(addr + got));
		if (n <= 0)
			return -EFAULT;
		if (memchr(buf + got, '\0', (size_t)n) != NULL)
			return 0;
		got += (size_t)n;
	}
	return -ENAMETOOLONG;
}

/* The directory a path is relative to, as the command sees it. */
static int
guard_base(struct guard_req *gr, int dfd, const char *path)
{
	char	p[64];

	if (path[0] == '/')
		snprintf(p, sizeof(p), "/proc/%ld/root", (long)gr->pid);
	else if (dfd == AT_FDCWD)
		snprintf(p, sizeof(p), "/proc/%ld/cwd", (long)gr->pid);
	else if (dfd < 0)
		return -EBADF;
	else
		snprintf(p, sizeof(p), "/proc/%ld/fd/%d", (long)gr->pid, dfd);
	return open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/*
 * "/proc/self" and "/proc/thread-self" name the guard when the guard
 * resolves them: rewrite them to the command's pid ("/dev/stdout" is a
 * link to /proc/self/fd/1).
 */
static const char *
guard_self(struct guard_req *gr, const char *path, char *buf, size_t size)
{
	const char	*p = path, *rest;
	char		 st[64], line[128];
	FILE		*f;
	long		 tgid = gr->pid;

	while (*p == '/')
		p++;
	if (p == path || strncmp(p, "proc/", 5) != 0)
		return path;
	p += 5;
	if (strncmp(p, "self", 4) == 0 && (p[4] == '/' || p[4] == '\0'))
		rest = p + 4;
	else if (strncmp(p, "thread-self", 11) == 0 &&
	    (p[11] == '/' || p[11] == '\0'))
		rest = p + 11;
	else
		return path;
	snprintf(st, sizeof(st), "/proc/%ld/status", (long)gr->pid);
	if ((f = fopen(st, "re")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "Tgid:", 5) == 0)
				tgid = strtol(line + 5, NULL, 10);
		fclose(f);
	}
	if (p[0] == 's')
		snprintf(buf, size, "/proc/%ld%s", tgid, rest);
	else
		snprintf(buf, size, "/proc/%ld/task/%ld%s", tgid,
		    (long)gr->pid, rest);
	return buf;
}

static int
guard_on_proc(int fd)
{
	struct statfs	sfs;

	return fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
}

/*
 * Split path into its parent directory, opened (following symlinks as
 * the kernel does for every component but the last), and the last name.
 */
static int
guard_resolve(struct guard_req *gr, int base, const char *path,
    struct guard_path *gp)
{
	char		 dir[PATH_MAX], clean[PATH_MAX], real[PATH_MAX];
	char		 link[64];
	const char	*slash, *d;
	size_t		 len, end;
	ssize_t		 n;

	(void)gr;
	gp->parent = -1;
	len = strlen(path);
	if (len == 0)
		return -ENOENT;
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
	if (gp->name[0] == '\0' || strcmp(gp->name, "/") == 0)
		return -EEXIST;		/* "/" itself */
	d = dir;
	while (*d == '/')
		d++;
	if (*d == '\0')
		gp->parent = fcntl(base, F_DUPFD_CLOEXEC, 3);
	else
		gp->parent = openat(base, d, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (gp->parent == -1)
		return -errno;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", gp->parent);
	if ((n = readlink(link, real, sizeof(real) - 1)) <= 0 ||
	    real[0] != '/')
		return -EACCES;
	real[n] = '\0';
	snprintf(clean, sizeof(clean), "%s", gp->name);
	while (strlen(clean) > 1 && clean[strlen(clean) - 1] == '/')
		clean[strlen(clean) - 1] = '\0';
	gp->dots = strcmp(clean, ".") == 0 || strcmp(clean, "..") == 0;
	if ((size_t)snprintf(gp->full, sizeof(gp->full), "%s%s%s", real,
	    strcmp(real, "/") == 0 ? "" : "/", clean) >= sizeof(gp->full))
		return -ENAMETOOLONG;
	return 0;
}

/* Resolve a (dirfd, path pointer) pair of the command. */
static int
guard_at(struct guard_req *gr, int dfd, uint64_t addr, struct guard_path *gp)
{
	char		 raw[PATH_MAX], buf[PATH_MAX];
	const char	*path;
	int		 base, rc;

	gp->parent = -1;
	if ((rc = guard_read_str(gr, addr, raw, sizeof(raw))) < 0)
		return rc;
	path = guard_self(gr, raw, buf, sizeof(buf));
	if ((base = guard_base(gr, dfd, path)) < 0)
		return base == -EBADF ? -EBADF : -errno;
	rc = guard_resolve(gr, base, path, gp);
	close(base);
	return rc;
}

static int
guard_check(struct guard_req *gr, const struct guard_path *gp,
    int ancestors_too)
{
	if (gp->dots)
		return 0;
	if (fs_plan_guarded(&gr->sb->plan, gp->full, ancestors_too)) {
		log_warnx("refused to create %s: protected path (see "
		    "pisbx-run(1), FILESYSTEM)", gp->full);
		return -EACCES;
	}
	return 0;
}

/* Create with the command's umask, not ours. */
static void
guard_umask(struct guard_req *gr)
{
	char	 p[64], line[256];
	FILE	*f;
	mode_t	 m = 022;

	snprintf(p, sizeof(p), "/proc/%ld/status", (long)gr->pid);
	if ((f = fopen(p, "re")) == NULL)
		goto done;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "Umask:", 6) == 0) {
			m = (mode_t)strtoul(line + 6, NULL, 8);
			break;
		}
	}
	fclose(f);
done:
	umask(m & 0777);
}

/* Open, and install the file in the command: 1 (answered) or -errno. */
static int
guard_install_now(struct guard_req *gr, int parent, const char *name,
    int flags, mode_t mode)
{
	struct seccomp_notif_addfd	add;
	int				fd, rc;

	if ((fd = openat(parent, name, flags, mode)) == -1)
		return -errno;
	memset(&add, 0, sizeof(add));
	add.id = gr->id;
	add.flags = SECCOMP_ADDFD_FLAG_SEND;
	add.srcfd = (uint32_t)fd;
	add.newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
	rc = ioctl(gr->notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	close(fd);
	/* Answered, or the command is gone: nothing more to send. */
	return rc >= 0 || errno == ENOENT ? 1 : -errno;
}

/*
 * A FIFO's writer waits for a reader, and the reader may first need a
 * creation of its own (`cat fifo >out`): opened in a child, so the guard
 * goes on answering.
 */
static int
guard_install(struct guard_req *gr, int parent, const char *name, int flags,
    mode_t mode, int follow)
{
	struct seccomp_notif_resp	resp;
	struct stat			st;
	pid_t				pid;
	int				rc;

	if ((flags & O_NONBLOCK) || fstatat(parent, name, &st,
	    follow ? 0 : AT_SYMLINK_NOFOLLOW) == -1 || !S_ISFIFO(st.st_mode))
		return guard_install_now(gr, parent, name, flags, mode);
	if ((pid = fork()) == -1)
		return -errno;
	if (pid == 0) {
		if ((rc = guard_install_now(gr, parent, name, flags,
		    mode)) < 0) {
			memset(&resp, 0, sizeof(resp));
			resp.id = gr->id;
			resp.error = rc;
			(void)seccomp_notify_respond(gr->notify_fd, &resp);
		}
		_exit(0);
	}
	return 1;
}

/*
 * open(O_CREAT): a symlink as the last component is followed here, one
 * hop at a time, so the check sees the name that would really be created.
 */
static int
guard_open(struct guard_req *gr, int dfd, uint64_t addr, int flags,
    mode_t mode)
{
	struct guard_path	 gp;
	struct stat		 st;
	char			 target[PATH_MAX], selfbuf[PATH_MAX];
	char			 selfbuf2[PATH_MAX];
	ssize_t			 n;
	int			 rc, hops, base;

	if ((rc = guard_at(gr, dfd, addr, &gp)) < 0)
		goto done;
	for (hops = 0;; hops++) {
		/*
		 * procfs: nothing can be created there, and its magic links
		 * (/proc/PID/fd/N) only reopen files the command holds; the
		 * kernel follows them, a readlink could not.
		 */
		if (guard_on_proc(gp.parent)) {
			rc = guard_install(gr, gp.parent, gp.name, flags |
			    O_CLOEXEC | O_NOCTTY, mode, 1);
			goto done;
		}
		if ((flags & (O_NOFOLLOW | O_EXCL)) != 0 ||
		    fstatat(gp.parent, gp.name, &st,
		    AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISLNK(st.st_mode))
			break;
		if (hops == GUARD_MAXLINKS) {
			rc = -ELOOP;
			goto done;
		}
		if ((n = readlinkat(gp.parent, gp.name, target,
		    sizeof(target) - 1)) <= 0) {
			rc = -ELOOP;
			goto done;
		}
		target[n] = '\0';
		if (target[0] == '/') {
			snprintf(selfbuf, sizeof(selfbuf), "%s",
			    guard_self(gr, target, selfbuf2, sizeof(selfbuf2)));
			snprintf(target, sizeof(target), "%s", selfbuf);
			if ((base = guard_base(gr, AT_FDCWD, target)) < 0) {
				rc = -errno;
				goto done;
			}
		} else
			base = gp.parent;
		if (base == gp.parent)
			gp.parent = -1;
		if (gp.parent != -1)
			close(gp.parent);
		rc = guard_resolve(gr, base, target, &gp);
		close(base);
		if (rc < 0)
			goto done;
	}
	if ((rc = guard_check(gr, &gp, 0)) < 0)
		goto done;
	guard_umask(gr);
	/* O_NOFOLLOW: a symlink planted since the check is not followed. */
	rc = guard_install(gr, gp.parent, gp.name, flags | O_NOFOLLOW |
	    O_CLOEXEC | O_NOCTTY, mode, 0);
done:
	if (gp.parent != -1)
		close(gp.parent);
	return rc;
}

static int
guard_handle(struct guard_req *gr, const struct seccomp_notif *req,
    struct seccomp_notif_resp *resp)
{
	const __u64		*a = req->data.args;
	struct guard_path	 np = { .parent = -1 }, op = { .parent = -1 };
	char			 target[PATH_MAX], link[64];
	int			 nr = req->data.nr, rc;

	if (nr == SCMP_SYS(open) || nr == SCMP_SYS(openat) ||
	    nr == SCMP_SYS(creat)) {
		int		dfd, flags;
		uint64_t	path;
		mode_t		mode;

		if (nr == SCMP_SYS(openat)) {
			dfd = (int)a[0]; path = a[1]; flags = (int)a[2];
			mode = (mode_t)a[3];
		} else if (nr == SCMP_SYS(open)) {
			dfd = AT_FDCWD; path = a[0]; flags = (int)a[1];
			mode = (mode_t)a[2];
		} else {
			dfd = AT_FDCWD; path = a[0];
			flags = O_CREAT | O_WRONLY | O_TRUNC;
			mode = (mode_t)a[1];
		}
		return guard_open(gr, dfd, path, flags, mode);
	}

	if (nr == SCMP_SYS(mkdir) || nr == SCMP_SYS(mkdirat)) {
		int	at = nr == SCMP_SYS(mkdirat);

		if ((rc = guard_at(gr, at ? (int)a[0] : AT_FDCWD,
		    a[at], &np)) < 0 || (rc = guard_check(gr, &np, 0)) < 0)
			goto done;
		guard_umask(gr);
		rc = mkdirat(np.parent, np.name, (mode_t)a[at + 1]) == -1 ?
		    -errno : 0;
	} else if (nr == SCMP_SYS(mknod) || nr == SCMP_SYS(mknodat)) {
		int	at = nr == SCMP_SYS(mknodat);

		if ((rc = guard_at(gr, at ? (int)a[0] : AT_FDCWD,
		    a[at], &np)) < 0 || (rc = guard_check(gr, &np, 0)) < 0)
			goto done;
		guard_umask(gr);
		rc = mknodat(np.parent, np.name, (mode_t)a[at + 1],
		    (dev_t)a[at + 2]) == -1 ? -errno : 0;
	} else if (nr == SCMP_SYS(symlink) || nr == SCMP_SYS(symlinkat)) {
		int	at = nr == SCMP_SYS(symlinkat);

		if ((rc = guard_read_str(gr, a[0], target,
		    sizeof(target))) < 0)
			goto done;
		if ((rc = guard_at(gr, at ? (int)a[1] : AT_FDCWD,
		    a[at ? 2 : 1], &np)) < 0 ||
		    (rc = guard_check(gr, &np, 1)) < 0)
			goto done;
		rc = symlinkat(target, np.parent, np.name) == -1 ? -errno : 0;
	} else if (nr == SCMP_SYS(link) || nr == SCMP_SYS(linkat)) {
		int	at = nr == SCMP_SYS(linkat);
		int	flags = at ? (int)a[4] : 0;
		char	src[PATH_MAX];

		if ((rc = guard_at(gr, at ? (int)a[2] : AT_FDCWD,
		    a[at ? 3 : 1], &np)) < 0 ||
		    (rc = guard_check(gr, &np, 1)) < 0)
			goto done;
		if ((rc = guard_read_str(gr, a[at ? 1 : 0], src,
		    sizeof(src))) < 0)
			goto done;
		if (src[0] == '\0' && (flags & AT_EMPTY_PATH)) {
			/* An O_TMPFILE (or any) fd of the command. */
			snprintf(link, sizeof(link), "/proc/%ld/fd/%d",
			    (long)gr->pid, (int)a[0]);
			rc = linkat(AT_FDCWD, link, np.parent, np.name,
			    AT_SYMLINK_FOLLOW) == -1 ? -errno : 0;
			goto done;
		}
		if ((rc = guard_at(gr, at ? (int)a[0] : AT_FDCWD,
		    a[at ? 1 : 0], &op)) < 0)
			goto done;
		rc = linkat(op.parent, op.name, np.parent, np.name,
		    flags & AT_SYMLINK_FOLLOW) == -1 ? -errno : 0;
	} else if (nr == SCMP_SYS(rename) || nr == SCMP_SYS(renameat) ||
	    nr == SCMP_SYS(renameat2)) {
		int		at = nr != SCMP_SYS(rename);
		unsigned int	flags = nr == SCMP_SYS(renameat2) ?
				    (unsigned int)a[4] : 0;

		if ((rc = guard_at(gr, at ? (int)a[0] : AT_FDCWD, a[at ? 1 : 0],
		    &op)) < 0 ||
		    (rc = guard_at(gr, at ? (int)a[2] : AT_FDCWD,
		    a[at ? 3 : 1], &np)) < 0)
			goto done;
		/* RENAME_EXCHANGE moves the target onto the source's name. */
		if ((rc = guard_check(gr, &np, 1)) < 0 ||
		    (rc = guard_check(gr, &op, (flags & RENAME_EXCHANGE) != 0))
		    < 0)
			goto done;
		rc = renameat2(op.parent, op.name, np.parent, np.name,
		    flags) == -1 ? -errno : 0;
	} else
		rc = -ENOSYS;
done:
	if (np.parent != -1)
		close(np.parent);
	if (op.parent != -1)
		close(op.parent);
	resp->val = 0;
	resp->error = rc < 0 ? rc : 0;
	return 0;
}

void
guard_serve(const struct sandbox *sb, int notify_fd)
{
	struct seccomp_notif		*req = NULL;
	struct seccomp_notif_resp	*resp = NULL;
	struct guard_req		 gr;
	char				 p[64];
	int				 rc;

	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	signal(SIGPIPE, SIG_IGN);
	if (seccomp_notify_alloc(&req, &resp) != 0) {
		log_warnx("guard: out of memory");
		return;
	}
	gr.sb = sb;
	gr.notify_fd = notify_fd;
	signal(SIGCHLD, SIG_IGN);	/* FIFO openers reap themselves */
	for (;;) {
		/* The kernel refuses a receive buffer that is not zeroed. */
		memset(req, 0, sizeof(*req));
		if ((rc = seccomp_notify_receive(notify_fd, req)) != 0) {
			if (rc == -EINTR)
				continue;
			break;	/* every process of the command is gone */
		}
		gr.pid = (pid_t)req->pid;
		gr.id = req->id;
		memset(resp, 0, sizeof(*resp));
		resp->id = req->id;
		snprintf(p, sizeof(p), "/proc/%ld/mem", (long)gr.pid);
		gr.mem = open(p, O_RDONLY | O_CLOEXEC);
		/* The pid still names the thread that made the call. */
		if (gr.mem == -1 ||
		    seccomp_notify_id_valid(notify_fd, req->id) != 0) {
			resp->error = -EACCES;
			rc = 0;
		} else
			rc = guard_handle(&gr, req, resp);
		if (gr.mem != -1)
			close(gr.mem);
		if (rc < 0) {
			resp->error = rc;
			resp->val = 0;
		}
		if (rc != 1)
			(void)seccomp_notify_respond(notify_fd, resp);
	}
	seccomp_notify_free(req, resp);
}
