/*
 * The guard's network rules without namespaces.  Where a container
 * refuses new namespaces, pisbx-run runs the command in the host's
 * network namespace (sandbox.c), and the seccomp filter's SECCOMP_NONS
 * variant sends every connect, send with an address, bind and listen
 * here.  The one destination outside the command's own Unix sockets is
 * the proxy: the command dials 127.0.0.1:3128 and 127.0.0.1:1080 as in
 * every sandbox (its environment, ssh_config and git-proxy say so), and
 * the guard connects its socket to the port the proxy really listens
 * on, a loopback port pisbx-run chose.  Every other address of every
 * family -- another loopback port or address, 0.0.0.0, ::1, an
 * IPv4-mapped IPv6 address, a public address, TCP fast open's address
 * in sendto/sendmsg -- is refused (EPERM) and said.  A TCP socket
 * never binds nor listens: that would open a port of the host.
 *
 * A container's seccomp profile (Docker's, containerd's, podman's)
 * refuses pidfd_getfd to a process without CAP_SYS_PTRACE, and with it
 * the guard's way to act on the command's own socket.  There a connect
 * is performed on a socket of the guard's, made like the command's and
 * connected to the checked destination, which then takes the place of
 * the command's descriptor (SECCOMP_ADDFD_FLAG_SETFD, as dup2 would):
 * options set on the socket before the connect are lost, nothing else.
 * A send that names an address, a bind and a listen need the command's
 * own socket: there they are refused, and said (guard_nons_nofd).
 *
 * And removals: without a mount namespace nothing binds a protected name
 * read-only, so unlink, unlinkat and rmdir come here too
 * (guard_nons_unlink).
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/launcher.h"
#include "launcher/guard/guard.h"
#include "launcher/guard/guard_int.h"

#define GUARD_NONS_CONNECT_MS	10000	/* a connect on the guard's socket */

static void	guard_nons_show(const struct sockaddr_storage *, socklen_t,
		    char *, size_t);
static int	guard_nons_unix_type(struct guard_req *, int sockfd);
static int	guard_nons_dial(int sock, const struct sockaddr *, socklen_t);

/* An address as the refusal names it: "127.0.0.1:22", "[::1]:80". */
static void
guard_nons_show(const struct sockaddr_storage *ss, socklen_t len, char *buf,
    size_t size)
{
	const struct sockaddr_in	*sin = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6	*sin6 = (const struct sockaddr_in6 *)ss;
	char				 a[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET && len >= sizeof(*sin) &&
	    inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a)) != NULL)
		snprintf(buf, size, "%s:%u", a, ntohs(sin->sin_port));
	else if (ss->ss_family == AF_INET6 && len >= sizeof(*sin6) &&
	    inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a)) != NULL)
		snprintf(buf, size, "[%s]:%u", a, ntohs(sin6->sin6_port));
	else
		snprintf(buf, size, "an address of family %d",
		    (int)ss->ss_family);
}

/*
 * The address of a connect or send on a socket of family domain (not
 * AF_UNIX): the proxy's address becomes the port it listens on, AF_UNSPEC
 * (a connect that dissolves an association) is kept, anything else is
 * refused.  0, or -errno.
 */
int
guard_nons_addr(struct guard_req *gr, int domain, struct sockaddr_storage *ss,
    socklen_t *len, const char *verb)
{
	const struct guard_conf	*gc = &gr->g->conf;
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	char			 shown[INET6_ADDRSTRLEN + 16];

	if (*len >= sizeof(sa_family_t) && ss->ss_family == AF_UNSPEC)
		return 0;
	if (domain == AF_INET && ss->ss_family == AF_INET &&
	    *len >= sizeof(*sin) &&
	    sin->sin_addr.s_addr == htonl(INADDR_LOOPBACK)) {
		if (sin->sin_port == htons(SANDBOX_HTTP_PORT)) {
			memcpy(ss, &gc->proxy_http, sizeof(gc->proxy_http));
			*len = sizeof(gc->proxy_http);
			return 0;
		}
		if (sin->sin_port == htons(SANDBOX_SOCKS_PORT)) {
			memcpy(ss, &gc->proxy_socks, sizeof(gc->proxy_socks));
			*len = sizeof(gc->proxy_socks);
			return 0;
		}
	}
	guard_nons_show(ss, *len, shown, sizeof(shown));
	guard_refuse(gr, shown, verb, "without namespaces the command "
	    "shares the host's network, and its one way out is the proxy at "
	    "127.0.0.1:%d (HTTP) or 127.0.0.1:%d (SOCKS5): name the host to "
	    "the proxy (its policy decides), or run pisbx-run where it can "
	    "create namespaces", SANDBOX_HTTP_PORT, SANDBOX_SOCKS_PORT);
	return -EPERM;
}

/* Whether sock (the guard's copy) may bind or listen: Unix sockets only. */
int
guard_nons_local(struct guard_req *gr, int sock, const char *verb)
{
	socklen_t	sl = sizeof(int);
	int		domain;

	if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &sl) == -1)
		return -errno;
	if (domain == AF_UNIX)
		return 0;
	guard_refuse(gr, domain == AF_INET6 ? "a TCP/IPv6 socket" :
	    "a TCP socket", verb, "without namespaces a port the command "
	    "opened would be a port of the host's network; serve on a Unix "
	    "socket, or run pisbx-run where it can create namespaces");
	return -EPERM;
}

/* listen(2) without namespaces: performed for Unix sockets only. */
int
guard_listen(struct guard_req *gr, int sockfd, int backlog)
{
	int	sock, rc;

	if ((sock = guard_getfd(gr, sockfd)) < 0)
		return sock == -EPERM ? guard_nons_nofd(gr, sockfd,
		    "listen on") : sock;
	if ((rc = guard_nons_local(gr, sock, "listen on")) == 0)
		rc = listen(sock, backlog) == -1 ? -errno : 0;
	close(sock);
	return rc;
}

/*
 * Without the command's socket (pidfd_getfd refused): a send with an
 * address, a bind or a listen is refused, and said once.  -EPERM.
 */
int
guard_nons_nofd(struct guard_req *gr, int sockfd, const char *verb)
{
	char	what[32];

	snprintf(what, sizeof(what), "socket %d", sockfd);
	guard_refuse(gr, what, verb, "this container's seccomp profile "
	    "refuses pidfd_getfd (it needs CAP_SYS_PTRACE), so the guard "
	    "cannot act on the command's own socket: connect it and use "
	    "send(2) or write(2), or give the container CAP_SYS_PTRACE");
	return -EPERM;
}

/*
 * bind(2) without the command's socket: a protected path is refused as
 * a creation (EACCES, with its reason), any other bind as guard_nons_nofd
 * says.  -errno.
 */
int
guard_nons_nobind(struct guard_req *gr, int sockfd,
    const struct sockaddr_storage *ss, socklen_t len)
{
	const struct sockaddr_un	*sun = (const struct sockaddr_un *)ss;
	struct guard_path		 gp;
	char				 path[sizeof(sun->sun_path) + 1];
	size_t				 off = offsetof(struct sockaddr_un,
					    sun_path);
	int				 rc;

	if (ss->ss_family != AF_UNIX || len <= off ||
	    sun->sun_path[0] == '\0')
		return guard_nons_nofd(gr, sockfd, "bind");
	if (len > sizeof(*sun))
		return -EINVAL;	/* as the kernel says */
	memcpy(path, sun->sun_path, len - off);
	path[len - off] = '\0';
	guard_path_init(&gp);
	if ((rc = guard_at_keep(gr, AT_FDCWD, path, &gp, 0)) == 0 &&
	    (rc = guard_check(gr, &gp, 0, "create")) == 0)
		rc = guard_nons_nofd(gr, sockfd, "bind");
	guard_path_clear(&gp);
	return rc;
}

/*
 * The type of the command's Unix socket sockfd (SOCK_STREAM...), by its
 * inode in the command's /proc/net/unix; -errno when it is not a Unix
 * socket (or not found).
 */
static int
guard_nons_unix_type(struct guard_req *gr, int sockfd)
{
	char		 p[64], link[64], line[512];
	unsigned long	 ino, want;
	unsigned int	 type;
	ssize_t		 n;
	FILE		*f;
	int		 rc = -ENOTSOCK;

	snprintf(p, sizeof(p), "/proc/%ld/fd/%d", (long)gr->pid, sockfd);
	if ((n = readlink(p, link, sizeof(link) - 1)) <= 0)
		return -EBADF;
	link[n] = '\0';
	if (sscanf(link, "socket:[%lu]", &want) != 1)
		return -ENOTSOCK;
	snprintf(p, sizeof(p), "/proc/%ld/net/unix", (long)gr->pid);
	if ((f = fopen(p, "re")) == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%*s %*s %*s %*s %x %*s %lu", &type,
		    &ino) == 2 && ino == want) {
			rc = (int)type;
			break;
		}
	fclose(f);
	return rc;
}

/* connect(2) on the guard's socket, waiting a bounded time.  0, -errno. */
static int
guard_nons_dial(int sock, const struct sockaddr *to, socklen_t len)
{
	struct pollfd	pfd;
	socklen_t	sl = sizeof(int);
	int		err, n;

	if (connect(sock, to, len) == 0)
		return 0;
	if (errno != EINPROGRESS && errno != EAGAIN)
		return -errno;
	pfd.fd = sock;
	pfd.events = POLLOUT;
	while ((n = poll(&pfd, 1, GUARD_NONS_CONNECT_MS)) == -1 &&
	    errno == EINTR)
		;
	if (n == 0)
		return -ETIMEDOUT;
	if (n == -1 || getsockopt(sock, SOL_SOCKET, SO_ERROR, &err,
	    &sl) == -1)
		return -errno;
	return -err;
}

/*
 * connect(2) where the command's socket cannot be borrowed: the address
 * (len bytes in ss, read once) is checked as ever -- the proxy's for
 * TCP, a Unix path by allowUnixSockets and the sockets bound during the
 * run -- a socket of the same kind is connected there, and it replaces
 * the command's descriptor.  0, or -errno.
 */
int
guard_nons_connect(struct guard_req *gr, int sockfd,
    const struct sockaddr_storage *ss, socklen_t len)
{
	struct seccomp_notif_addfd	 add;
	struct sockaddr_storage		 to;
	struct sockaddr_un		*sun = (struct sockaddr_un *)&to;
	const struct sockaddr_un	*from = (const struct sockaddr_un *)ss;
	char				 path[sizeof(sun->sun_path) + 1];
	size_t				 off = offsetof(struct sockaddr_un,
					    sun_path);
	unsigned long			 fl = guard_fd_flags(gr, sockfd);
	int				 type = SOCK_STREAM, sock = -1;
	int				 target = -1, rc;

	memcpy(&to, ss, len);
	if (ss->ss_family == AF_UNIX && len > sizeof(*from))
		return -EINVAL;	/* as the kernel says */
	if (ss->ss_family == AF_UNIX && len > off &&
	    from->sun_path[0] != '\0') {
		if ((type = guard_nons_unix_type(gr, sockfd)) < 0)
			return type;
		memcpy(path, from->sun_path, len - off);
		path[len - off] = '\0';
		if ((target = guard_unix_target(gr, path, "connect to")) < 0)
			return target;
		memset(sun, 0, sizeof(*sun));
		sun->sun_family = AF_UNIX;
		snprintf(sun->sun_path, sizeof(sun->sun_path),
		    "/proc/self/fd/%d", target);
		len = (socklen_t)(off + strlen(sun->sun_path) + 1);
	} else if (ss->ss_family == AF_UNIX) {
		/* An abstract name: Landlock's scope decides (ABI 6). */
		if ((type = guard_nons_unix_type(gr, sockfd)) < 0)
			return type;
	} else if ((rc = guard_nons_addr(gr, AF_INET, &to, &len,
	    "connect to")) < 0)
		return rc;
	if ((sock = socket(to.ss_family, type | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1) {
		rc = -errno;
		goto done;
	}
	if ((rc = guard_nons_dial(sock, (struct sockaddr *)&to, len)) < 0)
		goto done;
	if (!(fl & O_NONBLOCK) && fcntl(sock, F_SETFL, O_RDWR) == -1) {
		rc = -errno;
		goto done;
	}
	memset(&add, 0, sizeof(add));
	add.id = gr->id;
	add.flags = SECCOMP_ADDFD_FLAG_SETFD;
	add.srcfd = (uint32_t)sock;
	add.newfd = (uint32_t)sockfd;
	add.newfd_flags = (fl & O_CLOEXEC) ? O_CLOEXEC : 0;
	rc = ioctl(gr->g->notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) == -1 ?
	    -errno : 0;
done:
	if (sock != -1)
		close(sock);
	if (target != -1)
		close(target);
	return rc;
}

/*
 * unlink(2), unlinkat(2), rmdir(2) without a mount namespace: a protected
 * name (the mandatory set, denyWrite, git's) is a read-only bind with
 * namespaces, which nothing removes; Landlock grants removal per
 * directory, so the guard checks the name and removes it itself, from
 * the very directory it checked.  0, or -errno.
 */
int
guard_nons_unlink(struct guard_req *gr, int dfd, uint64_t addr, int flags)
{
	struct guard_path	gp;
	int			rc;

	guard_path_init(&gp);
	if ((flags & ~AT_REMOVEDIR) != 0) {
		rc = -EINVAL;
		goto done;
	}
	if ((rc = guard_at(gr, dfd, addr, &gp)) < 0 ||
	    (rc = guard_final(gr, &gp, 0, 1)) < 0 ||
	    (rc = guard_check(gr, &gp, 0, "remove")) < 0 ||
	    (rc = guard_hidden(gr, &gp, "remove")) < 0)
		goto done;
	if (gp.parent == -1) {
		rc = gp.magic != -1 ? -EPERM : -ENOENT;
		goto done;
	}
	rc = unlinkat(gp.parent, gp.name, flags) == -1 ? -errno : 0;
done:
	guard_path_clear(&gp);
	return rc;
}
