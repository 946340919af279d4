/*
 * bind(2) of a Unix socket path, performed for the command: the path is
 * a new file, checked like any other, and the guard binds the command's
 * own socket (borrowed with pidfd_getfd) from the very directory it
 * checked, then verifies where the socket landed (guard_bound).  The
 * sockets bound are remembered by identity (guard_sock_id): unix.c lets
 * the command connect to what it bound during the run.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/guard/guard.h"
#include "launcher/guard/guard_int.h"

static int	guard_sock_id(int dirfd, const char *name, struct guard_sock *);
static void	guard_sock_add(struct guard *, const struct guard_sock *);
static int	guard_sock_vfs(int sock, dev_t *, ino_t *);
static int	guard_bound(struct guard_req *, int sock,
		    const struct guard_path *, struct guard_sock *);
static void	guard_sock_spoil(struct guard_req *, int sockfd, int sock);

/*
 * The identity of a socket file: device, inode and, where the filesystem
 * keeps one, birth time (an inode number freed and reused for another
 * socket is then told apart).  0, or -1.
 */
static int
guard_sock_id(int dirfd, const char *name, struct guard_sock *id)
{
	struct statx	stx;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | (name[0] == '\0' ?
	    AT_EMPTY_PATH : 0), STATX_INO | STATX_TYPE | STATX_BTIME,
	    &stx) == -1 || !S_ISSOCK(stx.stx_mode))
		return -1;
	memset(id, 0, sizeof(*id));
	id->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	id->ino = stx.stx_ino;
	if (stx.stx_mask & STATX_BTIME) {
		id->btime_sec = stx.stx_btime.tv_sec;
		id->btime_nsec = stx.stx_btime.tv_nsec;
	}
	return 0;
}

/*
 * Remember a socket the command bound (id: its file, verified by
 * guard_bound): the sandbox serves it, so it is reachable like a listed
 * one.  Past GUARD_MAXSOCKS it is not remembered, and not reachable.
 * Binds run alone (guard_handle): nothing reads the table meanwhile.
 */
static void
guard_sock_add(struct guard *g, const struct guard_sock *id)
{
	struct guard_sock	*nv;

	if (g->nsocks >= GUARD_MAXSOCKS ||
	    (nv = reallocarray(g->socks, g->nsocks + 1, sizeof(*nv))) == NULL)
		return;
	g->socks = nv;
	g->socks[g->nsocks++] = *id;
}

/* Whether the socket file fd is one the command bound. */
int
guard_sock_ours(const struct guard *g, int fd)
{
	struct guard_sock	id;
	size_t			i;

	if (guard_sock_id(fd, "", &id) == -1)
		return 0;
	for (i = 0; i < g->nsocks; i++)
		if (memcmp(&g->socks[i], &id, sizeof(id)) == 0)
			return 1;
	return 0;
}

/*
 * The file the Unix socket sock is bound to, by the kernel's own account:
 * sock_diag's UNIX_DIAG_VFS, asked for the socket's inode, which needs
 * no privilege (SIOCUNIXFILE needs CAP_NET_ADMIN, which the guard never
 * has).  0, or -errno: -ENOENT when it is bound to no file.
 */
static int
guard_sock_vfs(int sock, dev_t *dev, ino_t *ino)
{
	struct {
		struct nlmsghdr		h;
		struct unix_diag_req	r;
	}			 req;
	union {
		struct nlmsghdr	h;
		char		b[8192];
	}			 buf;
	struct unix_diag_msg	*m;
	struct unix_diag_vfs	 v;
	struct nlmsgerr		*e;
	struct rtattr		*rta;
	struct stat		 st;
	ssize_t			 n;
	int			 nl, len, rc = -ENOENT;

	if (fstat(sock, &st) == -1)
		return -errno;
	if ((nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
	    NETLINK_SOCK_DIAG)) == -1)
		return -errno;
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_family = AF_UNIX;
	req.r.udiag_states = ~0U;
	req.r.udiag_ino = (uint32_t)st.st_ino;
	req.r.udiag_show = UDIAG_SHOW_VFS;
	req.r.udiag_cookie[0] = req.r.udiag_cookie[1] = ~0U;
	if (send(nl, &req, sizeof(req), 0) != (ssize_t)sizeof(req) ||
	    (n = recv(nl, &buf, sizeof(buf), 0)) == -1) {
		rc = -errno;
		goto done;
	}
	if (!NLMSG_OK(&buf.h, (size_t)n)) {
		rc = -EBADMSG;
		goto done;
	}
	if (buf.h.nlmsg_type == NLMSG_ERROR) {
		e = NLMSG_DATA(&buf.h);
		rc = buf.h.nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) &&
		    e->error < 0 ? e->error : -EBADMSG;
		goto done;
	}
	if (buf.h.nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    buf.h.nlmsg_len < NLMSG_LENGTH(sizeof(*m))) {
		rc = -EBADMSG;
		goto done;
	}
	m = NLMSG_DATA(&buf.h);
	if (m->udiag_ino != (uint32_t)st.st_ino) {
		rc = -EBADMSG;
		goto done;
	}
	len = (int)(buf.h.nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
	for (rta = (struct rtattr *)(m + 1); RTA_OK(rta, len);
	    rta = RTA_NEXT(rta, len)) {
		if (rta->rta_type != UNIX_DIAG_VFS ||
		    RTA_PAYLOAD(rta) < sizeof(v))
			continue;
		memcpy(&v, RTA_DATA(rta), sizeof(v));
		/* The kernel's dev_t: major above bit 20. */
		*dev = makedev(v.udiag_vfs_dev >> 20, v.udiag_vfs_dev & 0xfffff);
		*ino = v.udiag_vfs_ino;
		rc = 0;
	}
done:
	close(nl);
	return rc;
}

/*
 * After a bind: whether the socket's file is the name the guard checked
 * (gp), by its device and inode.  0 with its identity in id, or -EACCES
 * (said): a bind that cannot be verified is refused.
 */
static int
guard_bound(struct guard_req *gr, int sock, const struct guard_path *gp,
    struct guard_sock *id)
{
	dev_t	dev = 0;
	ino_t	ino = 0;
	int	rc;

	if ((rc = guard_sock_vfs(sock, &dev, &ino)) < 0) {
		guard_refuse(gr, gp->full, "bind", "where the socket was bound "
		    "cannot be verified (sock_diag: %s), and a bind that "
		    "cannot be verified is refused; the kernel's unix_diag "
		    "answers it (as root on the host: modprobe unix_diag)",
		    strerror(-rc));
		return -EACCES;
	}
	if (gp->parent == -1 || guard_sock_id(gp->parent, gp->name,
	    id) == -1 || id->dev != dev || id->ino != ino) {
		guard_refuse(gr, gp->full, "bind", "the socket was not bound "
		    "where its path was checked (a directory on the way "
		    "changed meanwhile); its descriptor was replaced by an "
		    "unbound socket");
		return -EACCES;
	}
	return 0;
}

/* The flags of the command's descriptor fd (its fdinfo), or 0. */
unsigned long
guard_fd_flags(struct guard_req *gr, int fd)
{
	char		 p[64], line[128];
	FILE		*f;
	unsigned long	 fl = 0;

	snprintf(p, sizeof(p), "/proc/%ld/fdinfo/%d", (long)gr->pid, fd);
	if ((f = fopen(p, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "flags:", 6) == 0)
			fl = strtoul(line + 6, NULL, 8);
	fclose(f);
	return fl;
}

/*
 * The command's socket sockfd (sock, the guard's copy) was bound where
 * the guard did not check, or where it cannot tell: it is replaced in
 * the command by a fresh unbound socket of the same kind
 * (SECCOMP_ADDFD_FLAG_SETFD), so nothing listens there through it.  When
 * that cannot be done, the calling process is killed: fail closed.
 */
static void
guard_sock_spoil(struct guard_req *gr, int sockfd, int sock)
{
	struct seccomp_notif_addfd	add;
	socklen_t			sl = sizeof(int);
	int				domain, type, proto, fl, fresh = -1;

	if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &sl) == -1 ||
	    getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &sl) == -1 ||
	    getsockopt(sock, SOL_SOCKET, SO_PROTOCOL, &proto, &sl) == -1 ||
	    (fl = fcntl(sock, F_GETFL)) == -1 ||
	    (fresh = socket(domain, type | SOCK_CLOEXEC |
	    ((fl & O_NONBLOCK) ? SOCK_NONBLOCK : 0), proto)) == -1)
		goto fail;
	memset(&add, 0, sizeof(add));
	add.id = gr->id;
	add.flags = SECCOMP_ADDFD_FLAG_SETFD;
	add.srcfd = (uint32_t)fresh;
	add.newfd = (uint32_t)sockfd;
	add.newfd_flags = (guard_fd_flags(gr, sockfd) & O_CLOEXEC) ?
	    O_CLOEXEC : 0;
	if (ioctl(gr->g->notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) == -1 &&
	    errno != ENOENT)
		goto fail;
	close(fresh);
	return;
fail:
	log_warn("guard: cannot replace the socket of process %ld bound "
	    "where it was not checked; killing it", (long)gr->pid);
	if (fresh != -1)
		close(fresh);
	(void)kill(guard_tgid(gr), SIGKILL);
}

/*
 * bind(2): a Unix socket path is a new file, checked like any other; the
 * guard binds the command's socket itself (borrowed with pidfd_getfd),
 * so the address is read once.  Any other address is bound as given.
 */
int
guard_bind(struct guard_req *gr, int sockfd, uint64_t addr, int len)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_un	*sun = (struct sockaddr_un *)&ss, local;
	struct guard_path	 gp;
	struct guard_sock	 id;
	char			 path[sizeof(sun->sun_path) + 1];
	const char		*text;
	size_t			 off = offsetof(struct sockaddr_un, sun_path);
	int			 sock, rc, dir = -1;

	guard_path_init(&gp);
	if (len < 0 || (size_t)len > sizeof(ss))
		return -EINVAL;
	memset(&ss, 0, sizeof(ss));
	if (len > 0 && guard_read_mem(gr, addr, &ss, (size_t)len) < 0)
		return -EFAULT;
	if ((sock = guard_getfd(gr, sockfd)) < 0)
		return sock == -EPERM && gr->g->conf.nons ?
		    guard_nons_nobind(gr, sockfd, &ss, (socklen_t)len) :
		    sock;
	if (gr->g->conf.nons && (rc = guard_nons_local(gr, sock,
	    "bind")) < 0)
		goto done;
	/*
	 * Any other address names no file: bound as given, on a socket of
	 * the sandbox's network namespace only (a host socket handed to
	 * the command would listen on the host's network: guard_netns).
	 */
	if (ss.ss_family != AF_UNIX || (size_t)len <= off ||
	    sun->sun_path[0] == '\0') {
		if ((rc = guard_netns(gr, sock, "bind")) == 0)
			rc = bind(sock, (struct sockaddr *)&ss,
			    (socklen_t)len) == -1 ? -errno : 0;
		goto done;
	}
	/* Longer than a sockaddr_un: EINVAL, as the kernel says. */
	if ((size_t)len > sizeof(*sun)) {
		rc = -EINVAL;
		goto done;
	}
	memcpy(path, sun->sun_path, (size_t)len - off);
	path[(size_t)len - off] = '\0';
	if ((rc = guard_at_keep(gr, AT_FDCWD, path, &gp, 1)) < 0 ||
	    (rc = guard_check(gr, &gp, 0, "create")) < 0)
		goto done;
	/*
	 * bind(2) takes no directory fd, and the kernel records the text it
	 * is given as the socket's name (getsockname(2), the address a
	 * Python Manager hands its clients).  So the guard binds the
	 * caller's own text when the kernel may walk it as checked (no
	 * symlink, nothing in procfs: gp.lexical), from the very directory
	 * the check started from (gp.base: the caller's cwd as it was read
	 * once -- never read again, which another thread of the command can
	 * change meanwhile); else the real path; else the name in its
	 * directory.  Binds run alone (guard_handle): no creation -- a
	 * symlink, a directory moved in -- changes the walk meanwhile; only
	 * a removal could, which fails the bind.  What the host does is
	 * beyond that: so the socket's file is verified afterwards
	 * (guard_bound), and only a verified one is remembered.
	 */
	memset(&local, 0, sizeof(local));
	local.sun_family = AF_UNIX;
	if (gp.lexical && strlen(path) < sizeof(local.sun_path) &&
	    (path[0] == '/' || gp.base != -1)) {
		text = path;
		dir = path[0] == '/' ? -1 : gp.base;
	} else if (strlen(gp.full) < sizeof(local.sun_path) &&
	    gp.full[0] == '/')
		text = gp.full;
	else {
		text = gp.name;
		dir = gp.parent;
	}
	if (strlen(text) >= sizeof(local.sun_path)) {
		rc = -ENAMETOOLONG;
		goto done;
	}
	memcpy(local.sun_path, text, strlen(text));
	if (dir != -1 && fchdir(dir) == -1) {
		rc = -errno;
		goto done;
	}
	guard_umask(gr);
	rc = bind(sock, (struct sockaddr *)&local, (socklen_t)(off +
	    strlen(text) + 1)) == -1 ? -errno : 0;
	if (rc == 0 && (rc = guard_bound(gr, sock, &gp, &id)) < 0)
		guard_sock_spoil(gr, sockfd, sock);
	else if (rc == 0) {
		guard_created(gr, &gp, 0);
		guard_sock_add(gr->g, &id);
	}
done:
	close(sock);
	guard_path_clear(&gp);
	return rc;
}
