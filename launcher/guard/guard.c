/*
 * The creation guard: the supervisor of the command's seccomp
 * notifications for creating and writing files.
 *
 * Why: the mandatory deny set must hold for names that do not exist yet
 * (creating ./.bashrc or .git/hooks/pre-commit must fail), and a bind
 * mount needs an existing target -- a stub file in the workspace, which
 * stays behind when pisbx-run is killed.  Landlock cannot express "this
 * directory except these names", and what git reads as configuration
 * lives at any depth of the workspace.  So every system call that
 * creates a name or writes a file by name (open with O_CREAT, O_WRONLY,
 * O_RDWR or O_TRUNC, creat, truncate, mkdir, mknod, symlink, link,
 * rename, bind) stops in the kernel and this process decides.  The same
 * goes for names that match a denyRead or denyWrite pattern (fsglob.c),
 * and, unless network.allowAllUnixSockets, for every connect, and either
 * every send that names an address or the making of a Unix datagram
 * socket (see "Unix sockets named by address" in unix.c).
 *
 * Where it runs: in the reaper, PID 1 of the sandbox, as a few threads
 * (guard_start: one at first, another each time every thread is busy,
 * up to one per CPU), so it is an ancestor of every process it serves --
 * which Yama's ptrace_scope=1 requires of whoever reads a process's
 * memory or borrows its descriptors.  The kernel wakes a guard thread on
 * the caller's CPU (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, Linux 6.6):
 * a wake-up across CPUs cost about as much as the rest of a creation on
 * a paravirtualised machine.  Requests run in parallel, each thread with
 * its own umask and cwd (unshare(CLONE_FS); where that is refused, one
 * thread serves them all); a rename runs alone (the
 * order lock), since checking the names of a moved tree and moving it
 * must not interleave with creations in it, and the guard's tables are
 * behind one mutex.
 *
 * What a creation costs the guard: the notification round trip, one
 * memory read, one validity check, the parent directory opened (an
 * absolute path without symlinks is named by its own text: openat2 with
 * RESOLVE_NO_SYMLINKS proves it; otherwise the kernel names the opened
 * directory), a look at the name, the checks on the resolved path, the
 * creation and the fd installed.  No file of /proc is read per request
 * but the cwd of a relative path: the caller's umask is remembered per
 * thread (guard_caller_umask) and every umask() call is noted on its way
 * through.
 *
 * The guard's files: guard.c the threads and the dispatch of a request
 * (guard_request), walk.c the path walk, check.c the checks, made.c
 * what the run made, caller.c the caller's memory, umask and terminal,
 * fileops.c the file operations, bind.c and unix.c the sockets;
 * guard_int.h holds what they share.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/kcmp.h>
#include <linux/sched.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/launcher.h"
#include "launcher/fs/fs.h"
#include "launcher/guard/guard.h"
#include "launcher/guard/guard_int.h"

/*
 * Lookups of the guarded paths answered by a pass over them before the
 * index is built: building it (a hash slot per path and per directory
 * above one, some 40 pages) costs a start more than this many passes,
 * and most commands create less than that.
 */
#define GUARD_INDEX_AFTER	32

static int	guard_request(struct guard_req *,
		    const struct seccomp_notif *, struct seccomp_notif_resp *);
static int	guard_handle(struct guard_req *, const struct seccomp_notif *,
		    struct seccomp_notif_resp *);
static void	*guard_thread(void *);
static void	 guard_more(struct guard *);

static int
guard_request(struct guard_req *gr, const struct seccomp_notif *req,
    struct seccomp_notif_resp *resp)
{
	const __u64		*a = req->data.args;
	struct guard_path	 np, op;
	struct stat		 st;
	char			 target[PATH_MAX];
	int			 nr = req->data.nr, rc, at, head;

	guard_path_init(&np);
	guard_path_init(&op);
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

	/* Unix sockets by address (allowUnixSockets): answered in full. */
	if (nr == SCMP_SYS(connect))
		return guard_connect(gr, (int)a[0], a[1], (int)a[2]);
	if (nr == SCMP_SYS(sendto))
		return guard_sendto(gr, a, resp);
	if (nr == SCMP_SYS(sendmsg))
		return guard_sendmsg(gr, a, resp);
	if (nr == SCMP_SYS(sendmmsg))
		return guard_sendmmsg(gr, a, resp);
	/* Sends to the kernel: no Unix datagram socket (unix.c). */
	if (nr == SCMP_SYS(socket) || nr == SCMP_SYS(socketpair))
		return guard_unix_dgram(gr);
	/* Without namespaces only (nons.c). */
	if (nr == SCMP_SYS(listen))
		return guard_listen(gr, (int)a[0], (int)a[1]);
	if (nr == SCMP_SYS(unlink))
		return guard_nons_unlink(gr, AT_FDCWD, a[0], 0);
	if (nr == SCMP_SYS(rmdir))
		return guard_nons_unlink(gr, AT_FDCWD, a[0], AT_REMOVEDIR);
	if (nr == SCMP_SYS(unlinkat))
		return guard_nons_unlink(gr, (int)a[0], a[1], (int)a[2]);

	if (nr == SCMP_SYS(truncate))
		rc = guard_truncate(gr, a[0], (off_t)a[1]);
	else if (nr == SCMP_SYS(bind))
		rc = guard_bind(gr, (int)a[0], a[1], (int)a[2]);
	else if (nr == SCMP_SYS(link) || nr == SCMP_SYS(linkat))
		rc = guard_link(gr, a, nr == SCMP_SYS(linkat));
	else if (nr == SCMP_SYS(mkdir) || nr == SCMP_SYS(mkdirat)) {
		at = nr == SCMP_SYS(mkdirat);
		if ((rc = guard_at(gr, at ? (int)a[0] : AT_FDCWD,
		    a[at], &np)) < 0)
			goto done;
		/*
		 * A name that is there already, a protected one too, makes
		 * nothing: EEXIST, as mkdir(2) says (`mkdir -p .git/x`
		 * goes on to be refused at x, if at all), not a refusal.
		 */
		if (np.parent != -1 && !np.dots && fstatat(np.parent, np.name,
		    &st, AT_SYMLINK_NOFOLLOW) == 0) {
			rc = -EEXIST;
			goto done;
		}
		if ((rc = guard_check(gr, &np, 0, "create")) < 0)
			goto done;
		guard_umask(gr);
		/*
		 * Made and remembered as made at once: a request that finds
		 * the directory finds it made.
		 */
		pthread_mutex_lock(&gr->g->mu);
		rc = mkdirat(np.parent, np.name, (mode_t)a[at + 1] &
		    ~(mode_t)GUARD_SETID) == -1 ? -errno : 0;
		if (rc == 0 && fstatat(np.parent, np.name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0)
			guard_made_add(gr->g, &st);
		pthread_mutex_unlock(&gr->g->mu);
		if (rc == 0)
			guard_created(gr, &np, 0);
		guard_readonly(gr, &np, "create", rc);
	} else if (nr == SCMP_SYS(mknod) || nr == SCMP_SYS(mknodat)) {
		at = nr == SCMP_SYS(mknodat);
		if ((rc = guard_at(gr, at ? (int)a[0] : AT_FDCWD,
		    a[at], &np)) < 0 ||
		    (rc = guard_check(gr, &np, 0, "create")) < 0)
			goto done;
		head = guard_head_before(gr, &np);
		guard_umask(gr);
		rc = mknodat(np.parent, np.name, (mode_t)a[at + 1] &
		    ~(mode_t)GUARD_SETID, (dev_t)a[at + 2]) == -1 ? -errno : 0;
		if (rc == 0)
			guard_created(gr, &np, head);
		guard_readonly(gr, &np, "create", rc);
	} else if (nr == SCMP_SYS(symlink) || nr == SCMP_SYS(symlinkat)) {
		at = nr == SCMP_SYS(symlinkat);
		if ((rc = guard_read_str(gr, a[0], target,
		    sizeof(target))) < 0)
			goto done;
		if ((rc = guard_at(gr, at ? (int)a[1] : AT_FDCWD,
		    a[at ? 2 : 1], &np)) < 0 ||
		    (rc = guard_check(gr, &np, 1, "create")) < 0)
			goto done;
		head = guard_head_before(gr, &np);
		rc = symlinkat(target, np.parent, np.name) == -1 ? -errno : 0;
		if (rc == 0)
			guard_created(gr, &np, head);
		guard_readonly(gr, &np, "create", rc);
	} else if (nr == SCMP_SYS(rename) || nr == SCMP_SYS(renameat) ||
	    nr == SCMP_SYS(renameat2)) {
		unsigned int	flags = nr == SCMP_SYS(renameat2) ?
				    (unsigned int)a[4] : 0;

		at = nr != SCMP_SYS(rename);
		if ((rc = guard_at(gr, at ? (int)a[0] : AT_FDCWD, a[at ? 1 : 0],
		    &op)) < 0 ||
		    (rc = guard_at(gr, at ? (int)a[2] : AT_FDCWD,
		    a[at ? 3 : 1], &np)) < 0)
			goto done;
		/* RENAME_EXCHANGE moves the target onto the source's name. */
		if ((rc = guard_check(gr, &np, 1, "replace")) < 0 ||
		    (rc = guard_check(gr, &op,
		    (flags & RENAME_EXCHANGE) != 0, "move")) < 0 ||
		    (rc = guard_hidden(gr, &op, "move")) < 0 ||
		    ((flags & RENAME_EXCHANGE) &&
		    (rc = guard_hidden(gr, &np, "move")) < 0) ||
		    (rc = guard_glob_moved(gr, &op, &np, "move")) < 0 ||
		    ((flags & RENAME_EXCHANGE) &&
		    (rc = guard_glob_moved(gr, &np, &op, "move")) < 0))
			goto done;
		head = guard_head_before(gr, &np);
		rc = renameat2(op.parent, op.name, np.parent, np.name,
		    flags) == -1 ? -errno : 0;
		if (rc == 0) {
			guard_moved(gr, &op, &np,
			    (flags & RENAME_EXCHANGE) != 0);
			guard_created(gr, &np, head);
		}
		guard_readonly(gr, &np, "replace", rc);
	} else
		rc = -ENOSYS;
done:
	guard_path_clear(&np);
	guard_path_clear(&op);
	resp->val = 0;
	resp->error = rc < 0 ? rc : 0;
	return 0;
}

/*
 * One request: umask() is noted and let through; every other call is
 * performed or refused, a rename alone, the others side by side.
 */
static int
guard_handle(struct guard_req *gr, const struct seccomp_notif *req,
    struct seccomp_notif_resp *resp)
{
	int	nr = req->data.nr, rc, alone;

	if (nr == SCMP_SYS(umask)) {
		guard_umask_noted(gr, (mode_t)req->data.args[0] & 0777);
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		return 0;
	}
	/* A bind, too: its path is walked again by the kernel (guard_bind). */
	alone = nr == SCMP_SYS(rename) || nr == SCMP_SYS(renameat) ||
	    nr == SCMP_SYS(renameat2) || nr == SCMP_SYS(bind);
	if (alone)
		pthread_rwlock_wrlock(&gr->g->order);
	else
		pthread_rwlock_rdlock(&gr->g->order);
	rc = guard_request(gr, req, resp);
	pthread_rwlock_unlock(&gr->g->order);
	return rc;
}

/* Answer a notification (the caller may be gone: nothing to do then). */
int
guard_respond(int notify_fd, struct seccomp_notif_resp *resp)
{
	return ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SEND, resp);
}

/*
 * One more guard thread, if every thread is busy and fewer than
 * maxthreads run.  The first is started with the command; a command
 * that never stops in the guard (most never do) costs one thread, not
 * one per CPU: its stack, clone and exit are a start's CPU.  One that
 * cannot be started leaves the requests to the threads there are.
 */
static void
guard_more(struct guard *g)
{
	pthread_attr_t	 attr;
	pthread_t	 t;
	int		 n;

	n = __atomic_load_n(&g->nthreads, __ATOMIC_SEQ_CST);
	do {
		if (n >= g->maxthreads)
			return;
	} while (!__atomic_compare_exchange_n(&g->nthreads, &n, n + 1, 0,
	    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	__atomic_add_fetch(&g->idle, 1, __ATOMIC_SEQ_CST);
	if (pthread_attr_init(&attr) == 0) {
		(void)pthread_attr_setdetachstate(&attr,
		    PTHREAD_CREATE_DETACHED);
		n = pthread_create(&t, &attr, guard_thread, g);
		pthread_attr_destroy(&attr);
		if (n == 0)
			return;
	}
	__atomic_sub_fetch(&g->idle, 1, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&g->nthreads, 1, __ATOMIC_SEQ_CST);
}

/*
 * A guard thread: its own umask and cwd (guard_bind changes directory),
 * then requests until every process of the command is gone.  The
 * thread that takes a request while no other waits starts another
 * (guard_more) before it answers, so requests side by side still run
 * side by side.
 */
static void *
guard_thread(void *arg)
{
	struct guard			*g = arg;
	struct seccomp_notif		 req;
	struct seccomp_notif_resp	 resp;
	struct guard_req		 gr;
	struct pollfd			 pfd;
	int				 rc;

	if (g->fs_own && unshare(CLONE_FS) == -1) {
		log_warn("guard: unshare(CLONE_FS)");
		_exit(EXIT_SETUP);	/* the whole sandbox: fail closed */
	}
	gr.g = g;
	for (;;) {
		/* The kernel refuses a receive buffer that is not zeroed. */
		memset(&req, 0, sizeof(req));
		/*
		 * ENOENT is both "the caller was interrupted before we took
		 * its call" and "every process of the command is gone": only
		 * the second hangs the listener up.
		 */
		if (ioctl(g->notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) == -1) {
			pfd.fd = g->notify_fd;
			pfd.events = POLLIN;
			if ((errno == EINTR || errno == ENOENT) &&
			    !(poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP)))
				continue;
			break;
		}
		if (__atomic_sub_fetch(&g->idle, 1, __ATOMIC_SEQ_CST) == 0)
			guard_more(g);
		gr.pid = (pid_t)req.pid;
		gr.tgid = 0;
		gr.id = req.id;
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		if ((rc = guard_handle(&gr, &req, &resp)) < 0) {
			resp.error = rc;
			resp.val = 0;
			resp.flags = 0;
		}
		if (rc != 1)
			(void)guard_respond(g->notify_fd, &resp);
		__atomic_add_fetch(&g->idle, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

/*
 * Who reads the guarded path that creating or replacing path would touch
 * (fs_plan_guarded), or NULL.  The thread whose lookup is the
 * GUARD_INDEX_AFTER-th builds the index; the others pass over the paths
 * until it is published, with the same answer.
 */
const char *
guard_guarded(struct guard *g, const char *path, int ancestors_too)
{
	if (__atomic_add_fetch(&g->asked, 1, __ATOMIC_RELAXED) ==
	    GUARD_INDEX_AFTER && fs_plan_index(g->conf.plan) == -1)
		log_warn("guard: index");
	return fs_plan_guarded(g->conf.plan, path, ancestors_too);
}

int
guard_start(const struct guard_conf *conf, int notify_fd)
{
	pthread_attr_t	 attr;
	pthread_t	 t;
	struct guard	*g;
	struct stat	 st;
	long		 ncpu;
	int		 n, rc;

	/*
	 * Zero pages from the kernel, faulted in as they are used: its
	 * tables (some 25 KiB: callers, refusals said, loopback ports told)
	 * mostly stay untouched, and calloc would clear them all.  It lives
	 * as long as PID 1.
	 */
	if ((g = mmap(NULL, sizeof(*g), PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		return -1;
	g->conf = *conf;
	g->notify_fd = notify_fd;
	if ((g->root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    pthread_attr_init(&attr) != 0) {
		munmap(g, sizeof(*g));
		return -1;
	}
	pthread_mutex_init(&g->mu, NULL);
	pthread_rwlock_init(&g->order, NULL);
	/* Probes: each missing feature costs speed, never correctness. */
	g->lexical = syscall(SYS_openat2, -1, "", NULL, 0) == -1 &&
	    errno != ENOSYS;
	g->kcmp = syscall(SYS_kcmp, getpid(), getpid(), KCMP_FS, 0, 0) == 0;
	/*
	 * The sandbox's network namespace, by its cookie: the guard uses an
	 * address as given only on a socket of this namespace (unix.c).
	 * Without one (Linux before 5.14) no such address is used at all.
	 */
	{
		socklen_t	sl = sizeof(g->netns);
		int		s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (s == -1 || getsockopt(s, SOL_SOCKET, SO_NETNS_COOKIE,
		    &g->netns, &sl) == -1) {
			g->netns = 0;
			log_warnx("guard: the kernel does not tell a socket's "
			    "network namespace (SO_NETNS_COOKIE, Linux 5.14): "
			    "connects and sends to an address other than a "
			    "Unix socket path are refused");
		}
		if (s != -1)
			close(s);
	}
	if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
	    SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) == -1)
		log_debug("guard: no same-CPU wake-up: %s", strerror(errno));
	/* The private TMPDIR is the run's own: new repositories may go there. */
	if (stat(conf->tmpdir, &st) == 0)
		guard_made_add(g, &st);
	/* So may one at the project directory, when it has none. */
	g->init_ok = guard_init_top(conf->plan, &g->init_top);
	/* Without it every write is refused (guard_check): said once. */
	if ((g->work = gitwork_new(conf->plan)) == NULL)
		log_warn("guard: out of memory; every write will be refused");
	/*
	 * Up to one thread per CPU: a parallel install need not queue on
	 * one.  One is started now, the others as requests find every
	 * thread busy (guard_more).  Each needs a cwd and umask of its own;
	 * where unshare(CLONE_FS) is refused (a container's seccomp profile
	 * refuses unshare to a process without CAP_SYS_ADMIN), one thread
	 * serves every request.
	 */
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	n = ncpu < 2 ? 2 : ncpu > GUARD_MAXTHREADS ? GUARD_MAXTHREADS :
	    (int)ncpu;
	g->fs_own = unshare(CLONE_FS) == 0;
	if (!g->fs_own) {
		log_debug("guard: one thread: unshare(CLONE_FS): %s",
		    strerror(errno));
		n = 1;
	}
	g->maxthreads = n;
	g->nthreads = 1;
	g->idle = 1;
	(void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, guard_thread, g);
	pthread_attr_destroy(&attr);
	return rc == 0 ? 0 : -1;
}
