/*
 * Unix sockets named by address.  Unless network.allowAllUnixSockets,
 * every connect stops here, and so does every sendmsg, sendmmsg and
 * sendto with an address when network.allowUnixDatagramSockets (or
 * something else the parent saw, seccomp_sends) keeps sends checked:
 * seccomp sees neither the socket's family behind an fd number nor the
 * address behind a pointer, and letting the kernel continue would have
 * it read both again, after another thread changed them.  So the guard
 * performs each call itself, on a copy of the command's socket
 * (pidfd_getfd: the same open socket), with the address and data it
 * read once:
 *
 *   an AF_UNIX path is resolved as the kernel would (symlinks followed,
 *   one hop at a time), the socket file opened O_PATH, and the call made
 *   to "/proc/self/fd/N" -- that very file, whatever the name is by then
 *   -- when the command bound it during the run, or its real path is in
 *   network.allowUnixSockets; any other path is refused with EPERM
 *   (hostIPC's retry knows it), and said on stderr;
 *
 *   any other address (TCP to the proxy, a UDP send, a netlink request,
 *   an abstract Unix name) is used as given on a socket of the sandbox's
 *   own network namespace, whose only interface is its loopback and
 *   whose abstract names are its own (Landlock ABI 6 scopes them too);
 *   on a socket of another namespace (inherited, or handed over
 *   SCM_RIGHTS) it is refused (guard_netns; bind.c too).
 *
 * Why sendmsg comes here even without an address, and connect always:
 * both name where the data goes in memory (msg_name, the sockaddr) that
 * another thread can rewrite, on a descriptor number another thread can
 * dup2() a different socket onto, between any check and the kernel's
 * own reading; only the guard performing the call on what it read is
 * race-free.  A send whose address is a register (sendto with NULL) is
 * the filter's to let through (seccomp.c).
 *
 * By default, with namespaces, no send comes here: the command cannot
 * make a Unix datagram socket (guard_unix_dgram refuses it), the only
 * kind of its own on which an address leaves the sandbox, so whatever
 * address a send names is harmless, and the kernel may read it when it
 * likes (seccomp.c, seccomp_unix_types).  docs/performance.md, "Socket
 * calls", weighs the other ways.
 *
 * A call that would block (a blocking socket, a full buffer or backlog)
 * is finished by a worker thread, which answers the notification itself,
 * so the guard goes on serving.  What differs from the kernel doing it:
 * the peer sees the guard's process id (SO_PEERCRED, SCM_CREDENTIALS;
 * same user, same sandbox), a send is at most GUARD_SEND_MAX bytes, and a
 * call the kernel restarts after a signal may have been performed once
 * already.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/fs/fs.h"
#include "launcher/guard/guard.h"
#include "launcher/guard/guard_int.h"

struct guard_op;
static void	guard_op_free(struct guard_op *);
static int	guard_op_new(struct guard_req *, int sockfd,
		    struct guard_op **);
static int	guard_op_stream(struct guard_op *);
static int	guard_op_name(struct guard_req *, struct guard_op *,
		    const void *name, socklen_t, const char *verb);
static ssize_t	guard_op_send(struct guard_op *, int extra);
static void	guard_sigpipe(const struct guard_op *, int err);
static int	guard_op_lenout(const struct guard_op *, unsigned int);
static void	*guard_worker(void *);
static int	guard_spawn(struct guard_op *);
static int	guard_op_finish(struct guard_op *,
		    struct seccomp_notif_resp *);
static int	guard_connected(struct guard_op *, int ms);
static int	guard_op_control(struct guard_req *, struct guard_op *);
static int	guard_op_msg(struct guard_req *, int sockfd,
		    const struct msghdr *, int flags, struct guard_op **);
static int	guard_read_msghdr(struct guard_req *, uint64_t addr,
		    struct msghdr *, struct iovec **);
static int	guard_loopback_port(struct guard_op *, char *, size_t);
static void	guard_loopback_refused(struct guard_op *, int rc);

#define GUARD_SEND_MAX		(1U << 20)	/* bytes per send */
#define GUARD_CONTROL_MAX	65536		/* ancillary data per send */
#define GUARD_MAXWORKERS	64		/* blocking calls at once */

/* One connect or send the guard performs for the command. */
struct guard_op {
	struct guard		*g;
	uint64_t		 id;
	pid_t			 tid;		/* the caller */
	int			 is_connect;	/* else a send */
	int			 inprogress;	/* connect: under way already */
	int			 type;		/* SO_TYPE, 0 until asked */
	int			 sock;		/* the command's socket */
	int			 target;	/* O_PATH: the allowed socket */
	struct sockaddr_storage	 addr;
	socklen_t		 alen;
	char			*data;
	size_t			 len;
	size_t			 sent;		/* before a worker took over */
	char			*control;
	size_t			 controllen;
	int			*fds;		/* SCM_RIGHTS copies */
	size_t			 nfds;
	int			 flags;
	uint64_t		 lenaddr;	/* sendmmsg: its msg_len */
};

static int	guard_workers;	/* running, counted atomically */

static void
guard_op_free(struct guard_op *op)
{
	size_t	i;

	if (op == NULL)
		return;
	if (op->sock != -1)
		close(op->sock);
	if (op->target != -1)
		close(op->target);
	for (i = 0; i < op->nfds; i++)
		close(op->fds[i]);
	free(op->fds);
	free(op->data);
	free(op->control);
	free(op);
}

/*
 * A copy of the command's socket sockfd, as a new operation.  What kind
 * of socket it is, is asked only when an answer depends on it
 * (guard_op_stream, guard_op_name): a send without an address that goes
 * out whole needs neither its family nor its type.
 */
static int
guard_op_new(struct guard_req *gr, int sockfd, struct guard_op **out)
{
	struct guard_op	*op;

	if ((op = calloc(1, sizeof(*op))) == NULL)
		return -ENOMEM;
	op->g = gr->g;
	op->id = gr->id;
	op->tid = gr->pid;
	op->target = -1;
	if ((op->sock = guard_getfd(gr, sockfd)) < 0) {
		int rc = op->sock;

		op->sock = -1;
		guard_op_free(op);
		return rc;
	}
	*out = op;
	return 0;
}

/*
 * Whether the socket is a stream, whose partial send goes on (asked once;
 * a socket whose type cannot be read is taken for a datagram one, whose
 * send is all or nothing).
 */
static int
guard_op_stream(struct guard_op *op)
{
	socklen_t	sl = sizeof(op->type);

	if (op->type == 0 && getsockopt(op->sock, SOL_SOCKET, SO_TYPE,
	    &op->type, &sl) == -1)
		op->type = -1;
	return op->type == SOCK_STREAM;
}

/*
 * The Unix socket a path names, as the kernel would find it, opened
 * O_PATH: its fd when its real path is one of allowUnixSockets, else
 * -errno (a refusal is said on stderr).
 */
int
guard_unix_target(struct guard_req *gr, const char *path, const char *verb)
{
	const struct fs_plan	*plan = gr->g->conf.plan;
	struct guard_path	 gp;
	struct stat		 st;
	char			 link[64], real[PATH_MAX];
	ssize_t			 n;
	size_t			 i;
	int			 fd = -1, rc;

	guard_path_init(&gp);
	if ((rc = guard_at_str(gr, AT_FDCWD, path, &gp)) < 0 ||
	    (rc = guard_final(gr, &gp, 1, 1)) < 0)
		goto done;
	if (gp.magic != -1)
		fd = fcntl(gp.magic, F_DUPFD_CLOEXEC, 3);
	else if (gp.parent != -1)
		fd = openat(gp.parent, gp.name, O_PATH | O_NOFOLLOW |
		    O_CLOEXEC);
	else
		errno = ENOENT;
	if (fd == -1 || fstat(fd, &st) == -1) {
		rc = -errno;
		goto done;
	}
	/* Not a socket (a symlink planted since): what the kernel says. */
	if (!S_ISSOCK(st.st_mode)) {
		rc = -ECONNREFUSED;
		goto done;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, real, sizeof(real) - 1)) <= 0 ||
	    (size_t)n == sizeof(real) - 1) {
		rc = -EACCES;
		goto done;
	}
	real[n] = '\0';
	for (i = 0; i < plan->nunix; i++)
		if (strcmp(real, plan->unix_sockets[i]) == 0)
			break;
	/*
	 * A socket in a hidden place (the home, denyRead, another run's
	 * directory and its --explain/push socket) is out of reach with
	 * namespaces, whatever allowAllUnixSockets says: the mount hides
	 * it.  Without namespaces only this check hides it.
	 */
	if (i == plan->nunix && fs_plan_hides(plan, real) != NULL &&
	    !guard_sock_ours(gr->g, fd)) {
		guard_refuse(gr, real, verb, "a Unix socket in a hidden path "
		    "(denyRead, the home, or another run's directory), out "
		    "of reach even with network.allowAllUnixSockets; to let "
		    "commands reach it, add \"%s\" to "
		    "network.allowUnixSockets in %s", real,
		    gr->g->conf.config_file);
		rc = -EPERM;
		goto done;
	}
	if (i == plan->nunix && !gr->g->conf.allow_all_unix &&
	    !guard_sock_ours(gr->g, fd)) {
		guard_refuse(gr, real, verb, "a Unix socket the command did "
		    "not bind during this run, and not in "
		    "network.allowUnixSockets; to let commands reach it, add "
		    "\"%s\" to network.allowUnixSockets in %s (a host service "
		    "like tmux or docker: see hostIPC)", real,
		    gr->g->conf.config_file);
		rc = -EPERM;
		goto done;
	}
	rc = fd;
	fd = -1;
done:
	if (fd != -1)
		close(fd);
	guard_path_clear(&gp);
	return rc;
}

/*
 * An address used as given (connect, send, bind) reaches the socket's
 * own network namespace: the sandbox's, whose only interface is its
 * loopback -- unless the socket came from outside (a descriptor the
 * command inherited, or one a listed Unix socket handed it with
 * SCM_RIGHTS), whose namespace may be the host's.  The guard acts only
 * on a socket of the sandbox's namespace (its cookie, which the kernel
 * gives without privilege); on any other, or when the cookie cannot be
 * read, the call is refused.  0, or -EPERM.
 */
int
guard_netns(struct guard_req *gr, int sock, const char *verb)
{
	uint64_t	cookie = 0;
	socklen_t	sl = sizeof(cookie);

	if (gr->g->netns != 0 && getsockopt(sock, SOL_SOCKET,
	    SO_NETNS_COOKIE, &cookie, &sl) == 0 && cookie == gr->g->netns)
		return 0;
	guard_refuse(gr, "a socket from outside the sandbox", verb,
	    "an address through a socket of another network namespace (one "
	    "the command inherited or was handed): only its own peer, with "
	    "no address, is reachable through it");
	return -EPERM;
}

/*
 * The address of a connect or send, as the command wrote it (len bytes at
 * name): a Unix socket path becomes the allowed socket's own file, any
 * other address is kept.  0, or -errno.
 */
static int
guard_op_name(struct guard_req *gr, struct guard_op *op, const void *name,
    socklen_t len, const char *verb)
{
	const struct sockaddr_un	*sun = name;
	struct sockaddr_un		*to;
	char				 path[sizeof(sun->sun_path) + 1];
	size_t				 off = offsetof(struct sockaddr_un,
					    sun_path);
	socklen_t			 sl = sizeof(int);
	int				 fd, domain = -1;

	memcpy(&op->addr, name, len);
	op->alen = len;
	/*
	 * Without namespaces every address is decided, whatever the
	 * socket: a TCP socket goes to the proxy only (nons.c).
	 */
	if (gr->g->conf.nons) {
		if (getsockopt(op->sock, SOL_SOCKET, SO_DOMAIN, &domain,
		    &sl) == -1)
			return -errno;
		if (domain != AF_UNIX)
			return guard_nons_addr(gr, domain, &op->addr,
			    &op->alen, verb);
	}
	/*
	 * Only an AF_UNIX socket looks a path up; any other refuses an
	 * AF_UNIX address before that, and a short one is EINVAL.  An
	 * abstract name is the sandbox's network namespace's own.  So the
	 * socket's family is asked only for an AF_UNIX path.
	 *
	 * Any other address is used as given: valid only because the
	 * command's sockets live in the sandbox's own network namespace,
	 * whose only interface is its loopback (a mode without one must
	 * decide here on every address, whatever the socket).
	 */
	if (len <= off || sun->sun_family != AF_UNIX ||
	    sun->sun_path[0] == '\0')
		return guard_netns(gr, op->sock, verb);
	if (domain == -1 && getsockopt(op->sock, SOL_SOCKET, SO_DOMAIN,
	    &domain, &sl) == -1)
		return -errno;
	if (domain != AF_UNIX)
		return guard_netns(gr, op->sock, verb);
	/* Longer than a sockaddr_un: EINVAL, as the kernel says. */
	if (len > sizeof(*sun))
		return -EINVAL;
	memcpy(path, sun->sun_path, len - off);
	path[len - off] = '\0';
	if ((fd = guard_unix_target(gr, path, verb)) < 0)
		return fd;
	op->target = fd;
	to = (struct sockaddr_un *)&op->addr;
	memset(to, 0, sizeof(*to));
	to->sun_family = AF_UNIX;
	snprintf(to->sun_path, sizeof(to->sun_path), "/proc/self/fd/%d", fd);
	op->alen = (socklen_t)(off + strlen(to->sun_path) + 1);
	return 0;
}

/* One sendmsg(2) of what is left, with extra flags. */
static ssize_t
guard_op_send(struct guard_op *op, int extra)
{
	struct msghdr	m;
	struct iovec	iov;

	memset(&m, 0, sizeof(m));
	iov.iov_base = op->data + op->sent;
	iov.iov_len = op->len - op->sent;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	if (op->alen > 0) {
		m.msg_name = &op->addr;
		m.msg_namelen = op->alen;
	}
	/* The ancillary data goes with the first byte only. */
	if (op->sent == 0 && op->control != NULL) {
		m.msg_control = op->control;
		m.msg_controllen = op->controllen;
	}
	return sendmsg(op->sock, &m, op->flags | extra | MSG_NOSIGNAL);
}

/* The SIGPIPE the kernel would have sent the caller of a failed send. */
static void
guard_sigpipe(const struct guard_op *op, int err)
{
	char	 p[64], line[128];
	FILE	*f;
	long	 tgid = op->tid;

	if (err != EPIPE || (op->flags & MSG_NOSIGNAL) || op->is_connect)
		return;
	snprintf(p, sizeof(p), "/proc/%ld/status", (long)op->tid);
	if ((f = fopen(p, "re")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "Tgid:", 5) == 0)
				tgid = strtol(line + 5, NULL, 10);
		fclose(f);
	}
	(void)syscall(SYS_tgkill, tgid, (long)op->tid, SIGPIPE);
}

/*
 * Write a sendmmsg's msg_len into the command's memory: process_vm_writev
 * (ptrace access, as the reads), which needs no file of /proc -- where
 * Landlock grants no write to /proc (a sandbox without namespaces).
 */
static int
guard_op_lenout(const struct guard_op *op, unsigned int n)
{
	struct iovec	local, remote;

	local.iov_base = &n;
	local.iov_len = sizeof(n);
	remote.iov_base = (void *)(uintptr_t)op->lenaddr;
	remote.iov_len = sizeof(n);
	return process_vm_writev(op->tid, &local, 1, &remote, 1, 0) ==
	    (ssize_t)sizeof(n) ? 0 : -1;
}

/*
 * Finish a call that waits (a blocking connect, a send into a full
 * buffer) and answer the notification.  Run by a worker thread.
 */
static void *
guard_worker(void *arg)
{
	struct guard_op			*op = arg;
	struct seccomp_notif_resp	 resp;
	ssize_t				 n;

	memset(&resp, 0, sizeof(resp));
	resp.id = op->id;
	if (op->inprogress)
		resp.error = guard_connected(op, -1);
	else if (op->is_connect) {
		if (connect(op->sock, (struct sockaddr *)&op->addr,
		    op->alen) == -1)
			resp.error = -errno;
	} else {
		do {
			if ((n = guard_op_send(op, 0)) == -1)
				break;
			op->sent += (size_t)n;
		} while (op->sent < op->len && guard_op_stream(op));
		if (n == -1 && op->sent == 0) {
			resp.error = -errno;
			guard_sigpipe(op, errno);
		} else if (op->lenaddr != 0) {
			resp.val = guard_op_lenout(op,
			    (unsigned int)op->sent) == -1 ? 0 : 1;
			if (resp.val == 0)
				resp.error = -EFAULT;
		} else
			resp.val = (int64_t)op->sent;
	}
	(void)guard_respond(op->g->notify_fd, &resp);
	guard_op_free(op);
	__atomic_sub_fetch(&guard_workers, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * Hand a call that waits to a worker thread, which answers: 1.  Past
 * GUARD_MAXWORKERS the guard waits for it itself.
 */
static int
guard_spawn(struct guard_op *op)
{
	pthread_attr_t	attr;
	pthread_t	t;
	int		rc = -1;

	if (__atomic_add_fetch(&guard_workers, 1, __ATOMIC_SEQ_CST) <=
	    GUARD_MAXWORKERS && pthread_attr_init(&attr) == 0) {
		(void)pthread_attr_setdetachstate(&attr,
		    PTHREAD_CREATE_DETACHED);
		(void)pthread_attr_setstacksize(&attr, 256 * 1024);
		rc = pthread_create(&t, &attr, guard_worker, op);
		pthread_attr_destroy(&attr);
	}
	if (rc != 0)
		guard_worker(op);
	return 1;
}

/*
 * A send, read and resolved: tried at once without waiting; when the
 * caller would wait (a blocking socket, a full buffer), a worker
 * finishes it.  Whether the caller waits is asked only when the send
 * did not go out whole.  0 with resp->val set, 1 (a worker answers), or
 * -errno.
 */
static int
guard_op_finish(struct guard_op *op, struct seccomp_notif_resp *resp)
{
	ssize_t	n;
	int	fl, err;

	if ((n = guard_op_send(op, MSG_DONTWAIT)) >= 0 &&
	    (size_t)n >= op->len) {
		resp->val = n;
		guard_op_free(op);
		return 0;
	}
	err = errno;
	fl = fcntl(op->sock, F_GETFL);
	if (!(op->flags & MSG_DONTWAIT) && fl != -1 && !(fl & O_NONBLOCK) &&
	    (n >= 0 ? guard_op_stream(op) : err == EAGAIN ||
	    err == EWOULDBLOCK)) {
		op->sent = n >= 0 ? (size_t)n : 0;
		return guard_spawn(op);
	}
	if (n >= 0) {
		resp->val = n;
		guard_op_free(op);
		return 0;
	}
	guard_sigpipe(op, err);
	guard_op_free(op);
	return -err;
}

/* connect(2) through the guard. */
int
guard_connect(struct guard_req *gr, int sockfd, uint64_t addr, int len)
{
	struct sockaddr_storage	 ss;
	struct guard_op		*op;
	struct iovec		 local, remote;
	int			 fl, rc;

	if (len < 0 || (size_t)len > sizeof(ss))
		return -EINVAL;
	memset(&ss, 0, sizeof(ss));
	local.iov_base = &ss;
	local.iov_len = (size_t)len;
	remote.iov_base = (void *)(uintptr_t)addr;
	remote.iov_len = (size_t)len;
	if (guard_peek(gr, &local, 1, &remote, 1) < 0)
		return -EFAULT;
	if ((rc = guard_op_new(gr, sockfd, &op)) < 0) {
		/* A container that refuses pidfd_getfd (nons.c). */
		if (rc == -EPERM && gr->g->conf.nons)
			return guard_nons_connect(gr, sockfd, &ss,
			    (socklen_t)len);
		return rc;
	}
	op->is_connect = 1;
	/* The address and the socket were the caller's: it still waits. */
	if ((rc = guard_valid(gr)) < 0 ||
	    (rc = guard_op_name(gr, op, &ss, (socklen_t)len,
	    "connect to")) < 0)
		goto done;
	fl = fcntl(op->sock, F_GETFL);
	if (fl == -1 || (fl & O_NONBLOCK)) {
		rc = connect(op->sock, (struct sockaddr *)&op->addr,
		    op->alen) == -1 ? -errno : 0;
		goto done;
	}
	/*
	 * A blocking connect, tried without waiting first: O_NONBLOCK for
	 * this one call (the socket is not connected yet, so nothing else of
	 * the command's uses it).  A Unix socket connects at once, a TCP
	 * handshake on loopback is done by the time the call returns; only
	 * a full backlog or a slow handshake goes to a worker.  A datagram
	 * socket never waits: the same path, which spares asking its type.
	 */
	(void)fcntl(op->sock, F_SETFL, fl | O_NONBLOCK);
	rc = connect(op->sock, (struct sockaddr *)&op->addr, op->alen) ==
	    -1 ? -errno : 0;
	(void)fcntl(op->sock, F_SETFL, fl);
	if (rc == -EINPROGRESS) {
		op->inprogress = 1;
		if ((rc = guard_connected(op, 0)) == -EINPROGRESS)
			return guard_spawn(op);
	} else if (rc == -EAGAIN)
		return guard_spawn(op);
done:
	guard_loopback_refused(op, rc);
	guard_op_free(op);
	return rc;
}

/*
 * The port of a TCP connect to a loopback address (127.0.0.0/8, ::1,
 * ::ffff:127.0.0.0/104), its address as text in buf; else 0.  The
 * kernel took the address, so its family is the socket's; the type is
 * asked last, for a loopback address only.
 */
static int
guard_loopback_port(struct guard_op *op, char *buf, size_t len)
{
	const struct sockaddr_in	*sin = (const void *)&op->addr;
	const struct sockaddr_in6	*sin6 = (const void *)&op->addr;
	const uint8_t			*b = sin6->sin6_addr.s6_addr;
	char				 a[INET6_ADDRSTRLEN];

	if (op->alen >= sizeof(*sin) && sin->sin_family == AF_INET &&
	    (ntohl(sin->sin_addr.s_addr) >> 24) == 127) {
		if (inet_ntop(AF_INET, &sin->sin_addr, buf, len) == NULL ||
		    !guard_op_stream(op))
			return 0;
		return ntohs(sin->sin_port);
	}
	if (op->alen < sizeof(*sin6) || sin6->sin6_family != AF_INET6)
		return 0;
	if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr) && b[12] == 127) {
		if (inet_ntop(AF_INET, b + 12, buf, len) == NULL)
			return 0;
	} else if (IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr)) {
		if (inet_ntop(AF_INET6, b, a, sizeof(a)) == NULL ||
		    (size_t)snprintf(buf, len, "[%s]", a) >= len)
			return 0;
	} else
		return 0;
	return guard_op_stream(op) ? ntohs(sin6->sin6_port) : 0;
}

/*
 * A TCP connect to the sandbox's loopback that nothing there answered.
 * The command most likely meant a server on the host (a dev server on
 * 127.0.0.1:PORT), which the sandbox's own loopback is not: the parent
 * is told once per port, and its summary names host.pisbx.internal.
 * A non-blocking connect says EINPROGRESS, but on loopback the refusal
 * is in by then: a socket closed again (TCP_INFO, which, unlike
 * SO_ERROR, leaves the error for the command to read).  Only a hint:
 * the call's result is the kernel's, unchanged.
 */
static void
guard_loopback_refused(struct guard_op *op, int rc)
{
	struct guard	*g = op->g;
	struct tcp_info	 ti;
	struct pollfd	 pfd;
	socklen_t	 sl = sizeof(ti);
	char		 addr[INET6_ADDRSTRLEN + 2], port[8];
	int		 p;

	if ((rc != -ECONNREFUSED && rc != -EINPROGRESS) ||
	    (p = guard_loopback_port(op, addr, sizeof(addr))) == 0)
		return;
	if (rc == -EINPROGRESS) {
		pfd.fd = op->sock;
		pfd.events = POLLOUT;
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLERR) ||
		    getsockopt(op->sock, IPPROTO_TCP, TCP_INFO, &ti,
		    &sl) == -1 || ti.tcpi_state != TCP_CLOSE)
			return;
	}
	snprintf(port, sizeof(port), "%d", p);
	pthread_mutex_lock(&g->mu);
	if (!(g->loopback_told[p / 8] & (1U << (p % 8)))) {
		g->loopback_told[p / 8] |= (uint8_t)(1U << (p % 8));
		guard_send(g, REPORT_LOOPBACK, addr, port, NULL);
	}
	pthread_mutex_unlock(&g->mu);
}

/*
 * How a connect under way ended, waiting up to ms (-1: as long as it
 * takes): 0, -errno, or -EINPROGRESS when it has not yet.
 */
static int
guard_connected(struct guard_op *op, int ms)
{
	struct pollfd	pfd;
	socklen_t	sl = sizeof(int);
	int		err, n;

	pfd.fd = op->sock;
	pfd.events = POLLOUT;
	while ((n = poll(&pfd, 1, ms)) == -1 && errno == EINTR)
		;
	if (n == 0)
		return -EINPROGRESS;
	/* Writable with no error: connected, nothing to ask. */
	if (n == 1 && !(pfd.revents & (POLLERR | POLLHUP)))
		return 0;
	if (n == -1 || getsockopt(op->sock, SOL_SOCKET, SO_ERROR, &err,
	    &sl) == -1)
		return -errno;
	return -err;
}

/*
 * Copy the command's SCM_RIGHTS descriptors (the guard sends its own
 * copies of the same files) and put the guard's pid in SCM_CREDENTIALS
 * (the kernel takes no other from it).  0, or -errno.
 */
static int
guard_op_control(struct guard_req *gr, struct guard_op *op)
{
	struct msghdr	 m;
	struct cmsghdr	*c;
	struct ucred	 cr;
	size_t		 i, n;
	int		 fd, *nv;

	memset(&m, 0, sizeof(m));
	m.msg_control = op->control;
	m.msg_controllen = op->controllen;
	for (c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_len < CMSG_LEN(0) || c->cmsg_len >
		    op->controllen - (size_t)((char *)c - op->control))
			return -EINVAL;
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(cr))) {
			memcpy(&cr, CMSG_DATA(c), sizeof(cr));
			cr.pid = getpid();
			memcpy(CMSG_DATA(c), &cr, sizeof(cr));
			continue;
		}
		if (c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int),
			    sizeof(fd));
			if ((nv = reallocarray(op->fds, op->nfds + 1,
			    sizeof(*nv))) == NULL)
				return -ENOMEM;
			op->fds = nv;
			if ((fd = guard_getfd(gr, fd)) < 0)
				return fd;
			op->fds[op->nfds++] = fd;
			memcpy(CMSG_DATA(c) + i * sizeof(int), &fd,
			    sizeof(fd));
		}
	}
	return 0;
}

/*
 * A send of the command's: um as it wrote it, except that um->msg_iov is
 * the guard's copy of its iovec array (the buffers are still the
 * command's).  The data (at most GUARD_SEND_MAX bytes: a stream takes
 * what fits, a larger datagram is EMSGSIZE), the address and the
 * ancillary data are read once, in one read when their pieces fit in
 * one (UIO_MAXIOV); the request is checked valid once, after the last
 * read and before the guard acts.
 */
static int
guard_op_msg(struct guard_req *gr, int sockfd, const struct msghdr *um,
    int flags, struct guard_op **out)
{
	struct sockaddr_storage	 ss;
	struct guard_op		*op;
	struct iovec		*remote = NULL, local[3];
	socklen_t		 nl = 0;
	size_t			 i, total = 0, nr = 0, nx = 1, split;
	int			 rc;

	*out = NULL;
	if ((rc = guard_op_new(gr, sockfd, &op)) < 0)
		return rc == -EPERM && gr->g->conf.nons ?
		    guard_nons_nofd(gr, sockfd, "send on") : rc;
	op->flags = flags;
	for (i = 0; i < um->msg_iovlen; i++) {
		if (um->msg_iov[i].iov_len > SSIZE_MAX - total) {
			rc = -EINVAL;
			goto fail;
		}
		total += um->msg_iov[i].iov_len;
	}
	if (total > GUARD_SEND_MAX) {
		if (!guard_op_stream(op)) {
			rc = -EMSGSIZE;
			goto fail;
		}
		total = GUARD_SEND_MAX;
	}
	if (um->msg_control != NULL && um->msg_controllen > GUARD_CONTROL_MAX) {
		rc = -ENOBUFS;
		goto fail;
	}
	if ((op->data = malloc(total > 0 ? total : 1)) == NULL ||
	    (remote = calloc(um->msg_iovlen + 2, sizeof(*remote))) == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	/* The data's pieces, as many as fill total; then the others. */
	for (i = 0; i < um->msg_iovlen && op->len < total; i++) {
		remote[nr] = um->msg_iov[i];
		if (remote[nr].iov_len > total - op->len)
			remote[nr].iov_len = total - op->len;
		op->len += remote[nr++].iov_len;
	}
	split = nr;
	local[0].iov_base = op->data;
	local[0].iov_len = op->len;
	if (um->msg_name != NULL && um->msg_namelen > 0) {
		nl = um->msg_namelen > sizeof(ss) ? sizeof(ss) :
		    um->msg_namelen;	/* as the kernel does */
		memset(&ss, 0, sizeof(ss));
		local[nx].iov_base = &ss;
		local[nx++].iov_len = nl;
		remote[nr].iov_base = um->msg_name;
		remote[nr++].iov_len = nl;
	}
	if (um->msg_control != NULL && um->msg_controllen > 0) {
		op->controllen = um->msg_controllen;
		if ((op->control = malloc(op->controllen)) == NULL) {
			rc = -ENOMEM;
			goto fail;
		}
		local[nx].iov_base = op->control;
		local[nx++].iov_len = op->controllen;
		remote[nr].iov_base = um->msg_control;
		remote[nr++].iov_len = op->controllen;
	}
	if (nr <= UIO_MAXIOV)
		rc = guard_peek(gr, local, nx, remote, nr);
	else if ((rc = guard_peek(gr, local, 1, remote, split)) == 0)
		rc = guard_peek(gr, local + 1, nx - 1, remote + split,
		    nr - split);
	if (rc < 0) {
		rc = -EFAULT;
		goto fail;
	}
	if ((op->control != NULL && (rc = guard_op_control(gr, op)) < 0) ||
	    (rc = guard_valid(gr)) < 0 ||
	    (nl > 0 && (rc = guard_op_name(gr, op, &ss, nl, "send to")) < 0))
		goto fail;
	free(remote);
	*out = op;
	return 0;
fail:
	free(remote);
	guard_op_free(op);
	return rc;
}

/*
 * A struct msghdr of the command's at addr, with its iovec array copied
 * into *iov (malloc'ed, the caller frees).  Not checked valid yet (the
 * send is, guard_op_msg).  0, or -errno.
 */
static int
guard_read_msghdr(struct guard_req *gr, uint64_t addr, struct msghdr *um,
    struct iovec **iov)
{
	struct iovec	local, remote;

	*iov = NULL;
	local.iov_base = um;
	local.iov_len = sizeof(*um);
	remote.iov_base = (void *)(uintptr_t)addr;
	remote.iov_len = sizeof(*um);
	if (guard_peek(gr, &local, 1, &remote, 1) < 0)
		return -EFAULT;
	if (um->msg_iovlen > UIO_MAXIOV)
		return -EMSGSIZE;
	if (um->msg_iovlen == 0)
		return 0;
	if ((*iov = calloc(um->msg_iovlen, sizeof(**iov))) == NULL)
		return -ENOMEM;
	local.iov_base = *iov;
	local.iov_len = um->msg_iovlen * sizeof(**iov);
	remote.iov_base = um->msg_iov;
	remote.iov_len = local.iov_len;
	if (guard_peek(gr, &local, 1, &remote, 1) < 0)
		return -EFAULT;
	um->msg_iov = *iov;
	return 0;
}

/* sendto(2) with an address: one sendmsg. */
int
guard_sendto(struct guard_req *gr, const __u64 *a,
    struct seccomp_notif_resp *resp)
{
	struct msghdr	 um;
	struct iovec	 iov;
	struct guard_op	*op;
	int		 rc;

	if ((int)a[5] < 0 || (size_t)(int)a[5] >
	    sizeof(struct sockaddr_storage))
		return -EINVAL;
	memset(&um, 0, sizeof(um));
	iov.iov_base = (void *)(uintptr_t)a[1];
	iov.iov_len = (size_t)a[2];
	um.msg_iov = &iov;
	um.msg_iovlen = 1;
	um.msg_name = (void *)(uintptr_t)a[4];
	um.msg_namelen = (socklen_t)(int)a[5];
	if ((rc = guard_op_msg(gr, (int)a[0], &um, (int)a[3], &op)) < 0)
		return rc;
	return guard_op_finish(op, resp);
}

/* sendmsg(2). */
int
guard_sendmsg(struct guard_req *gr, const __u64 *a,
    struct seccomp_notif_resp *resp)
{
	struct msghdr	 um;
	struct iovec	*iov;
	struct guard_op	*op;
	int		 rc;

	if ((rc = guard_read_msghdr(gr, a[1], &um, &iov)) == 0)
		rc = guard_op_msg(gr, (int)a[0], &um, (int)a[2], &op);
	free(iov);
	if (rc < 0)
		return rc;
	return guard_op_finish(op, resp);
}

/*
 * sendmmsg(2): each message as a sendmsg that does not wait, its msg_len
 * written back; the count sent, or the first message's error.  When the
 * first would wait on a blocking socket, a worker sends it and answers 1.
 */
int
guard_sendmmsg(struct guard_req *gr, const __u64 *a,
    struct seccomp_notif_resp *resp)
{
	struct mmsghdr	 mm;
	struct iovec	*iov;
	struct guard_op	*op;
	unsigned int	 vlen = (unsigned int)a[2], i, sent;
	uint64_t	 at;
	ssize_t		 n;
	int		 flags = (int)a[3], fl, rc = 0, err;

	if (vlen > UIO_MAXIOV)
		vlen = UIO_MAXIOV;	/* as the kernel does */
	for (i = 0; i < vlen; i++) {
		at = a[1] + (uint64_t)i * sizeof(mm);
		if ((rc = guard_read_msghdr(gr, at, &mm.msg_hdr, &iov)) == 0)
			rc = guard_op_msg(gr, (int)a[0], &mm.msg_hdr, flags,
			    &op);
		free(iov);
		if (rc < 0)
			break;
		op->lenaddr = at + offsetof(struct mmsghdr, msg_len);
		if ((n = guard_op_send(op, MSG_DONTWAIT)) == -1) {
			err = errno;
			fl = fcntl(op->sock, F_GETFL);
			if (i == 0 && (err == EAGAIN || err == EWOULDBLOCK) &&
			    !(flags & MSG_DONTWAIT) && fl != -1 &&
			    !(fl & O_NONBLOCK))
				return guard_spawn(op);
			guard_sigpipe(op, err);
			guard_op_free(op);
			rc = -err;
			break;
		}
		sent = (unsigned int)n;
		rc = guard_op_lenout(op, sent) == -1 ? -EFAULT : 0;
		guard_op_free(op);
		if (rc < 0)
			break;
	}
	if (i == 0)
		return rc;
	resp->val = i;
	return 0;
}

/*
 * socket(2) or socketpair(2) of an AF_UNIX socket that is not a stream
 * or seqpacket one, which the filter sends here when sends go straight
 * to the kernel (SECCOMP_SENDS_KERNEL): refused, said once on stderr
 * whatever the call and type (glibc's syslog() makes one at each call),
 * counted in the summary.
 */
int
guard_unix_dgram(struct guard_req *gr)
{
	guard_refuse(gr, "a Unix datagram socket", "make", "Unix datagram "
	    "sockets are off in this sandbox (syslog(3) makes one for "
	    "/dev/log, which the sandbox refuses anyway: only the log line "
	    "is lost); if the command needs one for itself, set "
	    "\"allowUnixDatagramSockets\": true under \"network\" in %s "
	    "(every send is then checked by the guard)",
	    gr->g->conf.config_file != NULL ? gr->g->conf.config_file :
	    "the config");
	return -EPERM;
}
