/*
 * unixprobe: Unix sockets by address, from inside pisbx-run, and the
 * servers they reach, outside it (tests/integration/run-unix.sh).
 *
 *   unixprobe serve DIR
 *	Outside the sandbox: stream sockets DIR/allowed.sock and
 *	DIR/blocked.sock answer every connection with "NAME\n"; datagram
 *	sockets DIR/dgram.sock and DIR/blocked-dgram.sock append "NAME DATA"
 *	lines to DIR/log.  Prints "ready" once they exist, serves until
 *	killed.
 *
 *   unixprobe serve-slow SOCK MARKER
 *	Outside: a stream socket with no backlog that accepts nothing until
 *	the file MARKER exists, then answers "slow".  Prints "ready".
 *
 *   unixprobe CASE ARG...
 *	Inside: one line "CASE ok [REPLY]" or "CASE ERRNO" per case.
 *	connect PATH		stream connect, read the server's name
 *	abstract NAME		stream connect to "@NAME"
 *	sendto PATH MSG		datagram with an address (also sendmsg,
 *	sendmmsg PATH MSG	sendmmsg: two copies of MSG)
 *	dgconnect PATH MSG	datagram connect, then send(2)
 *	pair-dgram PATH MSG	socketpair(SOCK_DGRAM), then sendto PATH
 *	pair-rights		socketpair(SOCK_STREAM): a pipe's read end
 *				passed with SCM_RIGHTS, read through it
 *	race-mem A B N		N connects to A while a thread rewrites the
 *				address between A and B: prints how many
 *				reached each server ("race-mem allowed=n
 *				blocked=m refused=k")
 *	race-path LINK N	N connects to LINK (flipped from outside):
 *				the same counts
 *	fill PATH N		N blocking connects kept open (the later
 *				ones wait for the backlog): "fill ok N"
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/helpers/errname.h"

#define NSERVE	4

static const char *const serve_names[NSERVE] = {
	"allowed", "blocked", "dgram", "blocked-dgram"
};

static volatile int	race_stop;

static int	 unaddr(struct sockaddr_un *, const char *path, int abstract);
static void	 report(const char *name, int rc, int err, const char *reply);
static int	 serve(const char *dir);
static int	 serve_slow(const char *path, const char *marker);
static void	 c_fill(const char *path, int n);
static int	 c_connect(const char *path, int abstract, char *reply,
		    size_t len);
static int	 c_send(const char *how, const char *path, const char *msg);
static int	 c_pair_dgram(const char *path, const char *msg);
static int	 c_pair_rights(void);
static void	*race_flip(void *);
static void	 c_race_mem(const char *a, const char *b, int n);
static void	 c_race_path(const char *link, int n);

static int
unaddr(struct sockaddr_un *sun, const char *path, int abstract)
{
	size_t	len = strlen(path);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (len + (abstract ? 1 : 0) >= sizeof(sun->sun_path))
		return -1;
	memcpy(sun->sun_path + (abstract ? 1 : 0), path, len);
	return (int)(offsetof(struct sockaddr_un, sun_path) + len +
	    1);
}

static void
report(const char *name, int rc, int err, const char *reply)
{
	if (rc == 0)
		printf("%s ok%s%s\n", name, reply != NULL ? " " : "",
		    reply != NULL ? reply : "");
	else
		printf("%s %s\n", name, errname(err));
	fflush(stdout);
}

/* The servers, outside the sandbox. */
static int
serve(const char *dir)
{
	struct sockaddr_un	 sun;
	struct pollfd		 pfd[NSERVE];
	char			 path[512], buf[512], line[600];
	ssize_t			 n;
	int			 i, c, len, logfd;

	snprintf(path, sizeof(path), "%s/log", dir);
	if ((logfd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644)) == -1)
		return 1;
	for (i = 0; i < NSERVE; i++) {
		snprintf(path, sizeof(path), "%s/%s.sock", dir,
		    serve_names[i]);
		unlink(path);
		pfd[i].fd = socket(AF_UNIX, i < 2 ? SOCK_STREAM : SOCK_DGRAM,
		    0);
		pfd[i].events = POLLIN;
		if (pfd[i].fd == -1 || (len = unaddr(&sun, path, 0)) == -1 ||
		    bind(pfd[i].fd, (struct sockaddr *)&sun,
		    (socklen_t)len) == -1 || chmod(path, 0777) == -1 ||
		    (i < 2 && listen(pfd[i].fd, 64) == -1)) {
			perror(path);
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		if (poll(pfd, NSERVE, -1) == -1)
			continue;
		for (i = 0; i < NSERVE; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			if (i < 2) {
				if ((c = accept(pfd[i].fd, NULL, NULL)) == -1)
					continue;
				snprintf(line, sizeof(line), "%s\n",
				    serve_names[i]);
				(void)write(c, line, strlen(line));
				close(c);
				continue;
			}
			if ((n = recv(pfd[i].fd, buf, sizeof(buf) - 1, 0)) < 0)
				continue;
			buf[n] = '\0';
			snprintf(line, sizeof(line), "%s %s\n", serve_names[i],
			    buf);
			(void)write(logfd, line, strlen(line));
		}
	}
}

/* A socket that keeps its callers waiting until marker exists. */
static int
serve_slow(const char *path, const char *marker)
{
	struct sockaddr_un	sun;
	struct stat		st;
	int			s, c, len;

	unlink(path);
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    (len = unaddr(&sun, path, 0)) == -1 ||
	    bind(s, (struct sockaddr *)&sun, (socklen_t)len) == -1 ||
	    chmod(path, 0777) == -1 || listen(s, 0) == -1) {
		perror(path);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	signal(SIGPIPE, SIG_IGN);
	while (stat(marker, &st) == -1)
		usleep(10000);
	while ((c = accept(s, NULL, NULL)) != -1) {
		(void)write(c, "slow\n", 5);
		close(c);
	}
	return 0;
}

/* n blocking connects, kept open until all are made. */
static void
c_fill(const char *path, int n)
{
	struct sockaddr_un	sun;
	int			i, s, al;

	al = unaddr(&sun, path, 0);
	for (i = 0; i < n; i++) {
		if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
		    connect(s, (struct sockaddr *)&sun, (socklen_t)al) == -1) {
			printf("fill %s\n", errname(errno));
			return;
		}
	}
	printf("fill ok %d\n", n);
}

/* A stream connect; the server's first line in reply.  0 or -1. */
static int
c_connect(const char *path, int abstract, char *reply, size_t len)
{
	struct sockaddr_un	sun;
	ssize_t			n;
	int			s, al;

	reply[0] = '\0';
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return -1;
	if ((al = unaddr(&sun, path, abstract)) == -1 ||
	    connect(s, (struct sockaddr *)&sun, (socklen_t)al) == -1) {
		int e = errno;

		close(s);
		errno = al == -1 ? EINVAL : e;
		return -1;
	}
	if ((n = read(s, reply, len - 1)) > 0) {
		reply[n] = '\0';
		reply[strcspn(reply, "\n")] = '\0';
	}
	close(s);
	return 0;
}

/* A datagram to path, by sendto, sendmsg, sendmmsg or connect + send. */
static int
c_send(const char *how, const char *path, const char *msg)
{
	struct sockaddr_un	sun;
	struct mmsghdr		mm[2];
	struct iovec		iov;
	int			s, al, rc = -1, e;

	if ((s = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1)
		return -1;
	al = unaddr(&sun, path, 0);
	iov.iov_base = (void *)msg;
	iov.iov_len = strlen(msg);
	memset(mm, 0, sizeof(mm));
	mm[0].msg_hdr.msg_name = &sun;
	mm[0].msg_hdr.msg_namelen = (socklen_t)al;
	mm[0].msg_hdr.msg_iov = &iov;
	mm[0].msg_hdr.msg_iovlen = 1;
	mm[1] = mm[0];
	if (strcmp(how, "sendto") == 0)
		rc = sendto(s, msg, strlen(msg), 0, (struct sockaddr *)&sun,
		    (socklen_t)al) == (ssize_t)strlen(msg) ? 0 : -1;
	else if (strcmp(how, "sendmsg") == 0)
		rc = sendmsg(s, &mm[0].msg_hdr, 0) == (ssize_t)strlen(msg) ?
		    0 : -1;
	else if (strcmp(how, "sendmmsg") == 0) {
		rc = sendmmsg(s, mm, 2, 0);
		if (rc == 2 && mm[0].msg_len != strlen(msg))
			rc = -1;
		else
			rc = rc == 2 ? 0 : -1;
	} else if (strcmp(how, "dgconnect") == 0) {
		if (connect(s, (struct sockaddr *)&sun, (socklen_t)al) == 0)
			rc = send(s, msg, strlen(msg), 0) ==
			    (ssize_t)strlen(msg) ? 0 : -1;
	}
	e = errno;
	close(s);
	errno = e;
	return rc;
}

/* A datagram socket pair: its socket sent to an address. */
static int
c_pair_dgram(const char *path, const char *msg)
{
	struct sockaddr_un	sun;
	int			sv[2], al, rc, e;

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == -1)
		return -1;
	al = unaddr(&sun, path, 0);
	rc = sendto(sv[0], msg, strlen(msg), 0, (struct sockaddr *)&sun,
	    (socklen_t)al) == (ssize_t)strlen(msg) ? 0 : -1;
	e = errno;
	close(sv[0]);
	close(sv[1]);
	errno = e;
	return rc;
}

/* Descriptor passing over a stream pair, as multiprocessing does it. */
static int
c_pair_rights(void)
{
	struct msghdr	 m;
	struct iovec	 iov;
	struct cmsghdr	*c;
	union {
		char		buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr	align;
	} u;
	char		 one = '1', got[16];
	int		 sv[2], p[2], fd = -1;
	ssize_t		 n;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1 || pipe(p) == -1)
		return -1;
	if (write(p[1], "through", 7) != 7)
		return -1;
	memset(&m, 0, sizeof(m));
	memset(&u, 0, sizeof(u));
	iov.iov_base = &one;
	iov.iov_len = 1;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &p[0], sizeof(int));
	if (sendmsg(sv[0], &m, 0) != 1)
		return -1;
	close(p[0]);
	memset(&u, 0, sizeof(u));
	m.msg_controllen = sizeof(u.buf);
	if (recvmsg(sv[1], &m, 0) != 1 ||
	    (c = CMSG_FIRSTHDR(&m)) == NULL || c->cmsg_type != SCM_RIGHTS) {
		errno = EPROTO;
		return -1;
	}
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	n = read(fd, got, sizeof(got) - 1);
	if (n != 7 || memcmp(got, "through", 7) != 0) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

struct race {
	struct sockaddr_un	*sun;
	const char		*a, *b;
};

/*
 * Rewrite the address between two paths of one length until told, each
 * held for a while: a filter that let the kernel read the address again
 * after the guard's check would then often read the other one.
 */
static void *
race_flip(void *arg)
{
	struct race	*r = arg;
	volatile int	 spin;

	while (!race_stop) {
		memcpy(r->sun->sun_path, r->b, strlen(r->b));
		for (spin = 0; spin < 2000; spin++)
			;
		memcpy(r->sun->sun_path, r->a, strlen(r->a));
		for (spin = 0; spin < 2000; spin++)
			;
	}
	return NULL;
}

static void
c_race_mem(const char *a, const char *b, int n)
{
	struct sockaddr_un	 sun;
	struct race		 r;
	pthread_t		 t;
	char			 reply[64];
	int			 i, s, al, na = 0, nb = 0, no = 0;

	if (strlen(a) != strlen(b) || (al = unaddr(&sun, a, 0)) == -1) {
		printf("race-mem EINVAL\n");
		return;
	}
	r.sun = &sun;
	r.a = a;
	r.b = b;
	if (pthread_create(&t, NULL, race_flip, &r) != 0) {
		printf("race-mem thread\n");
		return;
	}
	for (i = 0; i < n; i++) {
		if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
			break;
		if (connect(s, (struct sockaddr *)&sun, (socklen_t)al) == 0 &&
		    read(s, reply, sizeof(reply)) > 0) {
			if (strncmp(reply, "allowed", 7) == 0)
				na++;
			else
				nb++;
		} else
			no++;
		close(s);
	}
	race_stop = 1;
	pthread_join(t, NULL);
	printf("race-mem allowed=%d blocked=%d refused=%d\n", na, nb, no);
}

static void
c_race_path(const char *link, int n)
{
	char	reply[64];
	int	i, na = 0, nb = 0, no = 0;

	for (i = 0; i < n; i++) {
		if (c_connect(link, 0, reply, sizeof(reply)) == -1)
			no++;
		else if (strcmp(reply, "allowed") == 0)
			na++;
		else
			nb++;
	}
	printf("race-path allowed=%d blocked=%d refused=%d\n", na, nb, no);
}

int
main(int argc, char **argv)
{
	char	reply[64];
	int	rc;

	if (argc < 2)
		goto usage;
	if (strcmp(argv[1], "serve") == 0 && argc == 3)
		return serve(argv[2]);
	if (strcmp(argv[1], "serve-slow") == 0 && argc == 4)
		return serve_slow(argv[2], argv[3]);
	if ((strcmp(argv[1], "connect") == 0 ||
	    strcmp(argv[1], "abstract") == 0) && argc == 3) {
		rc = c_connect(argv[2], argv[1][0] == 'a', reply,
		    sizeof(reply));
		report(argv[1], rc, errno, reply);
	} else if ((strcmp(argv[1], "sendto") == 0 ||
	    strcmp(argv[1], "sendmsg") == 0 ||
	    strcmp(argv[1], "sendmmsg") == 0 ||
	    strcmp(argv[1], "dgconnect") == 0) && argc == 4) {
		rc = c_send(argv[1], argv[2], argv[3]);
		report(argv[1], rc, errno, NULL);
	} else if (strcmp(argv[1], "pair-dgram") == 0 && argc == 4) {
		rc = c_pair_dgram(argv[2], argv[3]);
		report(argv[1], rc, errno, NULL);
	} else if (strcmp(argv[1], "pair-rights") == 0 && argc == 2) {
		rc = c_pair_rights();
		report(argv[1], rc, errno, NULL);
	} else if (strcmp(argv[1], "race-mem") == 0 && argc == 5)
		c_race_mem(argv[2], argv[3], atoi(argv[4]));
	else if (strcmp(argv[1], "race-path") == 0 && argc == 4)
		c_race_path(argv[2], atoi(argv[3]));
	else if (strcmp(argv[1], "fill") == 0 && argc == 4)
		c_fill(argv[2], atoi(argv[3]));
	else
		goto usage;
	return 0;
usage:
	fprintf(stderr, "usage: unixprobe serve DIR | CASE ARG...\n");
	return 2;
}
