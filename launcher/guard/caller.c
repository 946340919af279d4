/*
 * The caller as the guard sees it: its memory, read once
 * (process_vm_readv) and trusted only while it still waits
 * (guard_valid); its working directory and descriptors, through /proc
 * and pidfd_getfd; its umask, remembered per thread (struct
 * guard_caller) since /proc is read once per thread only; its
 * controlling terminal, for opening /dev/tty on its behalf.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/kcmp.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/guard/guard.h"
#include "launcher/guard/guard_int.h"

static int	guard_unreadable(struct guard_req *);
static int	guard_alive(int pidfd);
static struct guard_caller *guard_caller_find(struct guard *, pid_t);
static void	guard_caller_drop(struct guard *, struct guard_caller *);
static struct guard_caller *guard_caller_add(struct guard *, pid_t, int pidfd,
		    mode_t);
static int	guard_same_fs(pid_t, pid_t);
static int	guard_pidfd(pid_t);
static mode_t	guard_status_umask(pid_t);
static mode_t	guard_caller_umask(struct guard_req *);
static int	guard_ttynr(pid_t, pid_t *session, unsigned long *tty);

/*
 * Whether the caller still waits for the answer: then the pid named it
 * all along (a task that waits cannot have died and left its pid to
 * another), so what was read through the pid -- its memory, its cwd, its
 * descriptors -- was the caller's.  0, or -ENOENT.
 */
int
guard_valid(struct guard_req *gr)
{
	return ioctl(gr->g->notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID,
	    &gr->id) == 0 ? 0 : -ENOENT;
}

/*
 * A read of the command's memory failed: -EFAULT as the kernel would say
 * for a bad address; -EACCES when the process may not be read at all (it
 * made itself non-dumpable, or runs a program it cannot read), which is
 * said once: its creations are refused.
 */
static int
guard_unreadable(struct guard_req *gr)
{
	static int	told;

	if (errno != EPERM)
		return -EFAULT;
	if (!__atomic_exchange_n(&told, 1, __ATOMIC_SEQ_CST))
		log_warnx("the creation guard cannot read the memory of "
		    "process %ld (not dumpable): its creations and writes are "
		    "refused", (long)gr->pid);
	return -EACCES;
}

/* Read exactly len bytes from the command's memory (checked valid). */
int
guard_read_mem(struct guard_req *gr, uint64_t addr, void *buf, size_t len)
{
	struct iovec	local, remote;
	int		rc;

	local.iov_base = buf;
	local.iov_len = len;
	remote.iov_base = (void *)(uintptr_t)addr;
	remote.iov_len = len;
	if ((rc = guard_peek(gr, &local, 1, &remote, 1)) < 0)
		return rc;
	return guard_valid(gr);
}

/*
 * Read the nr pieces of the command's memory that remote names into the
 * nl buffers of local, one after the other, in one system call (at most
 * UIO_MAXIOV pieces on either side).  Not checked valid: the caller
 * calls guard_valid once it has read all it needs, and before it acts
 * on any of it.  0 when every byte of local was read, or -errno.
 */
int
guard_peek(struct guard_req *gr, const struct iovec *local, size_t nl,
    const struct iovec *remote, size_t nr)
{
	size_t	len = 0, i;
	ssize_t	got;

	for (i = 0; i < nl; i++)
		len += local[i].iov_len;
	if (len == 0)
		return 0;
	got = process_vm_readv(gr->pid, local, nl, remote, nr, 0);
	if (got == -1)
		return guard_unreadable(gr);
	/* Short: a piece ends in memory that is not mapped. */
	return (size_t)got == len ? 0 : -EFAULT;
}

/*
 * Read a NUL-terminated string from the command's memory, a page at a
 * time (the next page may not be mapped).  The caller checks the request
 * is still valid before trusting it (guard_at_str does).
 */
int
guard_read_str(struct guard_req *gr, uint64_t addr, char *buf, size_t size)
{
	struct iovec	local, remote;
	size_t		got = 0, want;
	ssize_t		n;

	if (addr == 0)
		return -EFAULT;
	while (got < size) {
		want = 4096 - ((addr + got) & 4095);
		if (want > size - got)
			want = size - got;
		local.iov_base = buf + got;
		local.iov_len = want;
		remote.iov_base = (void *)(uintptr_t)(addr + got);
		remote.iov_len = want;
		n = process_vm_readv(gr->pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			return n == 0 ? -EFAULT : guard_unreadable(gr);
		if (memchr(buf + got, '\0', (size_t)n) != NULL)
			return 0;
		got += (size_t)n;
	}
	return -ENAMETOOLONG;
}

/*
 * The directory a path of the command's is relative to, opened: its cwd
 * or its descriptor dfd (an absolute path starts at the guard's root,
 * see guard_at_str).
 */
int
guard_base(struct guard_req *gr, int dfd)
{
	char	p[64];

	if (dfd == AT_FDCWD)
		snprintf(p, sizeof(p), "/proc/%ld/cwd", (long)gr->pid);
	else if (dfd < 0)
		return -EBADF;
	else
		snprintf(p, sizeof(p), "/proc/%ld/fd/%d", (long)gr->pid, dfd);
	return open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* The caller's process id (its thread group), read once per request. */
pid_t
guard_tgid(struct guard_req *gr)
{
	char	 st[64], line[128];
	FILE	*f;
	long	 tgid = 0;

	if (gr->tgid != 0)
		return gr->tgid;
	snprintf(st, sizeof(st), "/proc/%ld/status", (long)gr->pid);
	if ((f = fopen(st, "re")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "Tgid:", 5) == 0)
				tgid = strtol(line + 5, NULL, 10);
		fclose(f);
	}
	gr->tgid = tgid > 0 ? (pid_t)tgid : gr->pid;
	return gr->tgid;
}

/* Whether the thread a pidfd names is still there. */
static int
guard_alive(int pidfd)
{
	struct pollfd	pfd;

	pfd.fd = pidfd;
	pfd.events = POLLIN;
	return poll(&pfd, 1, 0) == 0;
}

/* The caller entry of tid, or NULL (the mutex held). */
static struct guard_caller *
guard_caller_find(struct guard *g, pid_t tid)
{
	size_t	i;

	for (i = 0; i < g->ncallers; i++)
		if (g->callers[i].tid == tid)
			return &g->callers[i];
	return NULL;
}

static void
guard_caller_drop(struct guard *g, struct guard_caller *c)
{
	close(c->pidfd);
	*c = g->callers[--g->ncallers];
}

/*
 * Remember tid (its pidfd is taken over): in a free slot, else in place
 * of the least recently used -- one whose umask was not noted, if any.
 */
static struct guard_caller *
guard_caller_add(struct guard *g, pid_t tid, int pidfd, mode_t m)
{
	struct guard_caller	*c, *old = NULL;
	size_t			 i;

	if (g->ncallers == GUARD_MAXCALLERS) {
		for (i = 0; i < g->ncallers; i++) {
			c = &g->callers[i];
			if (old == NULL || (old->noted && !c->noted) ||
			    (old->noted == c->noted && c->used < old->used))
				old = c;
		}
		guard_caller_drop(g, old);
	}
	c = &g->callers[g->ncallers++];
	c->tid = tid;
	c->pidfd = pidfd;
	c->umask = m;
	c->noted = 0;
	c->used = ++g->clock;
	return c;
}

/* Whether two threads share their fs_struct (cwd, root, umask). */
static int
guard_same_fs(pid_t a, pid_t b)
{
	return a == b || syscall(SYS_kcmp, a, b, KCMP_FS, 0, 0) == 0;
}

/*
 * A pidfd of the thread tid: PIDFD_THREAD (Linux 6.9), else one of its
 * process, which only a thread-group leader has.  -1 when neither.
 */
static int
guard_pidfd(pid_t tid)
{
	int	fd;

	if ((fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD)) == -1 &&
	    errno == EINVAL)
		fd = (int)syscall(SYS_pidfd_open, tid, 0);
	return fd;
}

/* A thread's umask as /proc says it (022 when it cannot). */
static mode_t
guard_status_umask(pid_t tid)
{
	char	 p[64], line[256];
	FILE	*f;
	mode_t	 m = 022;

	snprintf(p, sizeof(p), "/proc/%ld/status", (long)tid);
	if ((f = fopen(p, "re")) == NULL)
		return m;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "Umask:", 6) == 0) {
			m = (mode_t)strtoul(line + 6, NULL, 8) & 0777;
			break;
		}
	}
	fclose(f);
	return m;
}

/*
 * The caller's umask.  Known: from its entry, while its pidfd says the
 * thread is the one it was.  Not known: /proc, once -- unless a thread
 * sharing its fs_struct called umask() since, and the guard let that
 * through: the kernel may not have applied it yet, so the noted value is
 * the one that holds.
 */
static mode_t
guard_caller_umask(struct guard_req *gr)
{
	struct guard		*g = gr->g;
	struct guard_caller	*c;
	mode_t			 m;
	size_t			 i;
	int			 pidfd;

	pthread_mutex_lock(&g->mu);
	if ((c = guard_caller_find(g, gr->pid)) != NULL) {
		if (guard_alive(c->pidfd)) {
			c->used = ++g->clock;
			m = c->umask;
			pthread_mutex_unlock(&g->mu);
			return m;
		}
		guard_caller_drop(g, c);	/* the tid was reused */
	}
	pthread_mutex_unlock(&g->mu);

	m = guard_status_umask(gr->pid);
	if (!g->kcmp || (pidfd = guard_pidfd(gr->pid)) == -1)
		return m;
	pthread_mutex_lock(&g->mu);
	for (i = 0; i < g->ncallers; i++) {
		c = &g->callers[i];
		if (c->noted && guard_alive(c->pidfd) &&
		    guard_same_fs(gr->pid, c->tid)) {
			m = c->umask;
			break;
		}
	}
	if ((c = guard_caller_find(g, gr->pid)) != NULL) {
		close(pidfd);		/* another thread of ours was quicker */
		m = c->umask;
	} else
		(void)guard_caller_add(g, gr->pid, pidfd, m);
	pthread_mutex_unlock(&g->mu);
	return m;
}

/*
 * The caller's umask(m), about to be let through: every thread known to
 * share its fs_struct has that umask from now on, and the caller's entry
 * holds the value for threads not known yet.
 */
void
guard_umask_noted(struct guard_req *gr, mode_t m)
{
	struct guard		*g = gr->g;
	struct guard_caller	*c;
	size_t			 i;
	int			 pidfd;

	if (!g->kcmp)
		return;
	pidfd = guard_pidfd(gr->pid);
	pthread_mutex_lock(&g->mu);
	for (i = 0; i < g->ncallers; i++) {
		c = &g->callers[i];
		if (c->tid != gr->pid && guard_alive(c->pidfd) &&
		    guard_same_fs(gr->pid, c->tid)) {
			c->umask = m;
			c->noted = 0;
		}
	}
	if ((c = guard_caller_find(g, gr->pid)) != NULL) {
		if (pidfd != -1)
			close(pidfd);
	} else if (pidfd != -1)
		c = guard_caller_add(g, gr->pid, pidfd, m);
	if (c != NULL) {
		c->umask = m;
		c->noted = 1;
		c->used = ++g->clock;
	}
	pthread_mutex_unlock(&g->mu);
}

/*
 * Create with the caller's umask, not ours: each guard thread has its
 * own (guard_thread), set only when it differs.
 */
void
guard_umask(struct guard_req *gr)
{
	static __thread int	 set;
	static __thread mode_t	 cur;
	mode_t			 m = guard_caller_umask(gr);

	if (!set || m != cur) {
		umask(m);
		cur = m;
		set = 1;
	}
}

/*
 * The session and controlling terminal (tty_nr of proc(5), 0 for none)
 * of pid.
 */
static int
guard_ttynr(pid_t pid, pid_t *session, unsigned long *tty)
{
	char		 p[64], line[1024], *s;
	FILE		*f;
	int		 sid, nr, rc = -1;

	snprintf(p, sizeof(p), "/proc/%ld/stat", (long)pid);
	if ((f = fopen(p, "re")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) != NULL &&
	    (s = strrchr(line, ')')) != NULL &&
	    sscanf(s + 1, " %*c %*d %*d %d %d", &sid, &nr) == 2) {
		*session = sid;
		*tty = (unsigned int)nr;
		rc = 0;
	}
	fclose(f);
	return rc;
}

/*
 * /dev/tty names the opener's controlling terminal, and the guard opens
 * it for the command: open the command's own.  None: ENXIO, as the
 * kernel says.  In the guard's session it is the guard's; in another, a
 * pty the command made (the sandbox's devpts numbers its ptys like the
 * host's, so only the session tells them apart).
 */
int
guard_tty(struct guard_req *gr, int flags, mode_t mode)
{
	unsigned long	 theirs;
	unsigned int	 maj, min;
	pid_t		 sid;
	char		 p[64];

	if (guard_ttynr(gr->pid, &sid, &theirs) == -1 || theirs == 0)
		return -ENXIO;
	maj = (theirs >> 8) & 0xfff;
	min = (theirs & 0xff) | ((theirs >> 12) & 0xfff00);
	if (sid == getsid(0))
		snprintf(p, sizeof(p), "/dev/tty");
	else if (maj >= GUARD_PTS_MAJOR && maj < GUARD_PTS_MAJOR + 8)
		snprintf(p, sizeof(p), "/dev/pts/%u",
		    (maj - GUARD_PTS_MAJOR) * 256 + min);
	else
		return -ENXIO;
	return guard_install(gr, AT_FDCWD, p, flags | O_NOCTTY, mode, 1, NULL);
}

/*
 * A copy of the command's descriptor fd: the calling thread's own table
 * (PIDFD_THREAD, Linux 6.9), else its process's.
 *
 * Each guard thread keeps the pidfd of the last thread it took a
 * descriptor from (a thread that sends in a loop is served by the same
 * guard thread): two system calls less per send.  A pidfd names one
 * task for good -- a thread that exits and leaves its number to another
 * leaves its pidfd naming nothing -- so a kept pidfd either reaches the
 * caller itself or fails; on any failure the descriptor is taken again
 * through a fresh pidfd, whose error is the answer.  The caller still
 * checks the request valid before acting on the copy, as before.
 */
int
guard_getfd(struct guard_req *gr, int fd)
{
	static __thread pid_t	 kept_tid;
	static __thread int	 kept = -1;
	int			 copy;

	if (kept != -1 && kept_tid == gr->pid &&
	    (copy = (int)syscall(SYS_pidfd_getfd, kept, fd, 0)) != -1)
		return copy;
	if (kept != -1)
		close(kept);
	kept_tid = gr->pid;
	if ((kept = guard_pidfd(gr->pid)) == -1)
		return -errno;
	copy = (int)syscall(SYS_pidfd_getfd, kept, fd, 0);
	return copy == -1 ? -errno : copy;
}
