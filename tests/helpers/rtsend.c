/*
 * rtsend: try, from inside pisbx-run, every way this file knows to get a
 * Unix datagram socket or a socket of another network namespace into the
 * command's hands, or to get bytes to a host listener, now that sends go
 * straight to the kernel.  One line per case: "NAME RESULT", RESULT "ok"
 * or an errno name, or "ok:TYPE" for a socket that was made (its
 * SO_TYPE), "sig:N" for a child killed by signal N.  Run by
 * tests/integration/redteam-sends.sh, which holds the expected answers
 * and checks what the host listeners received.
 *
 *   rtsend types                every AF_UNIX type nibble, flags, junk
 *   rtsend compat               i386 (int 0x80) and x32 spellings
 *   rtsend steal                pidfd_getfd, ptrace, /proc/1/fd of PID 1
 *   rtsend sends DIR PORT       sends to the host's listeners: DIR/host.dgram,
 *                               DIR/host.stream, 127.0.0.1:PORT (UDP, TCP)
 *   rtsend race DIR             dup2 flips between a stream and a UDP
 *                               socket under connect and sendto
 *   rtsend hostile              socket()/socketpair() with bad pointers
 */
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <linux/netlink.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/helpers/errname.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open	434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd	438
#endif
#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN	0x20000000
#endif
#define X32_BIT		0x40000000L

static void		 say(const char *, long, int);
static void		 say_sock(const char *, long, int);
static void		 types(void);
static long		 in_child(int mode);
static void		 compat(void);
static void		 steal(void);
static void		 sends(const char *, int);
static void		 race(const char *);
static void		 hostile(void);
static void		*flipper(void *);

static void
say(const char *name, long rc, int err)
{
	printf("%s %s\n", name, rc >= 0 ? "ok" : errname(err));
	fflush(stdout);
}

/* A call that made socket rc: its type, and closed again. */
static void
say_sock(const char *name, long rc, int err)
{
	socklen_t	sl = sizeof(int);
	int		type = -1;

	if (rc < 0) {
		say(name, rc, err);
		return;
	}
	(void)getsockopt((int)rc, SOL_SOCKET, SO_TYPE, &type, &sl);
	printf("%s ok:%d\n", name, type);
	fflush(stdout);
	close((int)rc);
}

/*
 * Every low nibble of the type with each flag combination, junk above 32
 * bits, a negative 64-bit spelling, AF_UNIX spelled with junk above, and
 * protocols.  Only types 1 (stream) and 5 (seqpacket) may give a socket.
 */
static void
types(void)
{
	static const uint64_t	flags[] = {
		0, SOCK_NONBLOCK, SOCK_CLOEXEC, SOCK_NONBLOCK | SOCK_CLOEXEC,
		0xdead000000000000ULL, 0xffffffff00000000ULL
	};
	static const uint64_t	protos[] = { 0, 1, 0xffffffff00000000ULL };
	char			name[96];
	uint64_t		t, f, p;
	int			sv[2];
	long			rc;

	for (t = 0; t < 16; t++)
		for (f = 0; f < sizeof(flags) / sizeof(*flags); f++)
			for (p = 0; p < sizeof(protos) / sizeof(*protos); p++) {
				snprintf(name, sizeof(name),
				    "socket.t%llu.f%llu.p%llu",
				    (unsigned long long)t,
				    (unsigned long long)f,
				    (unsigned long long)p);
				rc = syscall(SYS_socket, AF_UNIX,
				    t | flags[f], protos[p]);
				say_sock(name, rc, errno);
				snprintf(name, sizeof(name),
				    "pair.t%llu.f%llu.p%llu",
				    (unsigned long long)t,
				    (unsigned long long)f,
				    (unsigned long long)p);
				rc = syscall(SYS_socketpair, AF_UNIX,
				    t | flags[f], protos[p], sv);
				if (rc == 0) {
					close(sv[1]);
					rc = sv[0];
				}
				say_sock(name, rc, errno);
			}
	/* AF_UNIX with junk above the int, and AF_LOCAL (the same). */
	rc = syscall(SYS_socket, 0x1234567800000000ULL | AF_UNIX,
	    SOCK_DGRAM, 0);
	say_sock("socket.dgram.domainhi", rc, errno);
	rc = syscall(SYS_socket, AF_LOCAL, SOCK_DGRAM | 0x100000000ULL, 0);
	say_sock("socket.local.dgram.typehi", rc, errno);
	rc = syscall(SYS_socketpair, 0xffffffff00000000ULL | AF_UNIX,
	    SOCK_RAW, 0, sv);
	if (rc == 0) {
		close(sv[1]);
		rc = sv[0];
	}
	say_sock("pair.raw.domainneg", rc, errno);
	/* SOCK_PACKET (10) and an unknown flag bit on a dgram type. */
	rc = syscall(SYS_socket, AF_UNIX, 10, 0);
	say_sock("socket.packet10", rc, errno);
	rc = syscall(SYS_socket, AF_UNIX, SOCK_DGRAM | 0x1000, 0);
	say_sock("socket.dgram.badflag", rc, errno);
}

/*
 * The i386 and x32 spellings of socket(AF_UNIX, SOCK_DGRAM), in a child:
 * the filter must kill it (or refuse), never give a socket.  The child's
 * exit code is 0 for a socket of type SOCK_DGRAM, else the errno; a
 * signal is reported as such.
 */
static long
in_child(int mode)
{
	pid_t	pid;
	int	st;
	long	rc = -1;

	fflush(stdout);
	if ((pid = fork()) == -1)
		return -1000;
	if (pid == 0) {
		/*
		 * The kernel's own answer: a sanitizer's SIGSEGV handler
		 * would turn a fault into its exit status.
		 */
		signal(SIGSEGV, SIG_DFL);
		if (mode == 0) {
			/* socketcall(SYS_SOCKET, args) through int 0x80. */
			uint32_t *args = mmap(NULL, 4096, PROT_READ |
			    PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
			    -1, 0);

			if (args == MAP_FAILED)
				_exit(200);
			args[0] = AF_UNIX;
			args[1] = SOCK_DGRAM;
			args[2] = 0;
#if defined(__x86_64__)
			__asm__ volatile ("int $0x80" : "=a"(rc) :
			    "0"(102L), "b"(1L), "c"((long)(uintptr_t)args) :
			    "memory");
#endif
		} else if (mode == 1) {
			/* i386 socket (359) through int 0x80. */
#if defined(__x86_64__)
			__asm__ volatile ("int $0x80" : "=a"(rc) :
			    "0"(359L), "b"((long)AF_UNIX),
			    "c"((long)SOCK_DGRAM), "d"(0L) : "memory");
#endif
		} else if (mode == 2) {
			/* x32 socket. */
			rc = syscall(X32_BIT | SYS_socket, AF_UNIX,
			    SOCK_DGRAM, 0);
			rc = rc < 0 ? -errno : rc;
		} else {
			/* x32 socketpair. */
			int sv[2];

			rc = syscall(X32_BIT | SYS_socketpair, AF_UNIX,
			    SOCK_DGRAM, 0, sv);
			rc = rc < 0 ? -errno : sv[0];
		}
		if (rc >= 0) {
			socklen_t sl = sizeof(int);
			int type = -1;

			(void)getsockopt((int)rc, SOL_SOCKET, SO_TYPE, &type,
			    &sl);
			_exit(type == SOCK_DGRAM ? 0 : 201);
		}
		_exit((int)-rc);
	}
	if (waitpid(pid, &st, 0) == -1)
		return -1000;
	if (WIFSIGNALED(st))
		return -2000 - WTERMSIG(st);
	return WEXITSTATUS(st);
}

static void
compat(void)
{
	static const char *const names[] = {
		"compat.i386.socketcall", "compat.i386.socket",
		"compat.x32.socket", "compat.x32.socketpair"
	};
	void	*params;
	long	 r;
	int	 i;

	for (i = 0; i < 4; i++) {
		r = in_child(i);
		if (r <= -2000)
			printf("%s sig:%ld\n", names[i], -(r + 2000));
		else if (r == 0)
			printf("%s ok:dgram\n", names[i]);
		else
			printf("%s %s\n", names[i], errname((int)r));
		fflush(stdout);
	}
	/* io_uring could make a socket (IORING_OP_SOCKET) unseen. */
	if ((params = calloc(1, 256)) == NULL)
		err(1, "calloc");
	r = syscall(SYS_io_uring_setup, 8, params);
	say("io_uring.setup", r, errno);
	free(params);
}

/*
 * PID 1 (the reaper and guard) holds sockets: the control socket to the
 * parent, copies of the command's while the guard works.  None may come
 * over.
 */
static void
steal(void)
{
	char	name[64], path[64];
	long	pidfd, rc, got = 0, fd;
	int	err = 0;
	char	buf[8];
	struct iovec	l, r;

	pidfd = syscall(SYS_pidfd_open, 1, 0);
	say("steal.pidfd_open", pidfd, errno);
	if (pidfd >= 0) {
		for (fd = 0; fd < 64; fd++) {
			if ((rc = syscall(SYS_pidfd_getfd, pidfd, fd, 0)) >= 0) {
				got++;
				close((int)rc);
			} else if (err == 0 || errno != EBADF)
				err = errno;
		}
		printf("steal.pidfd_getfd %s\n", got > 0 ? "ok" :
		    errname(err));
	}
	rc = ptrace(PTRACE_ATTACH, 1, 0, 0);
	say("steal.ptrace_attach", rc, errno);
	rc = ptrace(PTRACE_SEIZE, 1, 0, 0);
	say("steal.ptrace_seize", rc, errno);
	l.iov_base = buf;
	l.iov_len = sizeof(buf);
	r.iov_base = (void *)0x400000;
	r.iov_len = sizeof(buf);
	rc = process_vm_readv(1, &l, 1, &r, 1, 0);
	say("steal.process_vm_readv", rc, errno);
	/* /proc/1/fd: a socket cannot be opened, the directory not read. */
	got = 0;
	err = 0;
	for (fd = 0; fd < 16; fd++) {
		snprintf(path, sizeof(path), "/proc/1/fd/%ld", fd);
		if ((rc = open(path, O_RDWR)) >= 0) {
			got++;
			close((int)rc);
		} else if (err == 0 || errno != ENOENT)
			err = errno;
	}
	printf("steal.proc1fd %s\n", got > 0 ? "ok" : errname(err));
	snprintf(name, sizeof(name), "/proc/1/fd");
	rc = open(name, O_RDONLY | O_DIRECTORY);
	say("steal.proc1fd.dir", rc, errno);
	fflush(stdout);
}

static struct sockaddr_un
unaddr(const char *dir, const char *name, socklen_t *len)
{
	struct sockaddr_un	sun;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (dir == NULL)	/* abstract */
		snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1, "%s",
		    name);
	else
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s", dir,
		    name);
	*len = dir == NULL ? (socklen_t)(offsetof(struct sockaddr_un,
	    sun_path) + 1 + strlen(name)) : sizeof(sun);
	return sun;
}

/*
 * Sends with an address, straight to the kernel, on every socket the
 * command can make: each must fail or stay in the sandbox.  Every payload
 * names its case, so the host's log says which one got through.
 */
static void
sends(const char *dir, int port)
{
	struct sockaddr_un	dg, st, ab;
	struct sockaddr_in	lo;
	struct msghdr		m;
	struct iovec		iov;
	socklen_t		dgl, stl, abl;
	char			msg[64];
	int			s, sv[2];
	long			rc;

	dg = unaddr(dir, "host.dgram", &dgl);
	st = unaddr(dir, "host.stream", &stl);
	ab = unaddr(NULL, "rtsend-host-abstract", &abl);
	memset(&lo, 0, sizeof(lo));
	lo.sin_family = AF_INET;
	lo.sin_port = htons((uint16_t)port);
	lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

#define SEND(label, fd, addr, alen, fl) do {				\
	snprintf(msg, sizeof(msg), "%s", label);			\
	rc = sendto(fd, msg, strlen(msg), (fl) | MSG_NOSIGNAL,		\
	    (const struct sockaddr *)(addr), alen);			\
	say(label, rc, errno);						\
} while (0)

	/* The socket that would carry it: refused at socket(). */
	s = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (s >= 0)
		SEND("send.dgram.host", s, &dg, dgl, 0);
	else
		say("send.dgram.host", s, errno);
	if (s >= 0)
		close(s);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	SEND("send.stream.unconnected", s, &dg, dgl, 0);
	close(s);
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	SEND("send.stream.pair", sv[0], &dg, dgl, 0);
	close(sv[0]);
	close(sv[1]);
	s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	SEND("send.seqpacket.unconnected", s, &dg, dgl, 0);
	close(s);
	socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv);
	SEND("send.seqpacket.pair", sv[0], &dg, dgl, 0);
	close(sv[0]);
	close(sv[1]);
	s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	SEND("send.seqpacket.abstract", s, &ab, abl, 0);
	close(s);
	/* sendmsg and sendmmsg spell the same: msg_name on a stream. */
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(&m, 0, sizeof(m));
	snprintf(msg, sizeof(msg), "sendmsg.stream");
	iov.iov_base = msg;
	iov.iov_len = strlen(msg);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_name = &dg;
	m.msg_namelen = dgl;
	rc = sendmsg(s, &m, MSG_NOSIGNAL);
	say("sendmsg.stream", rc, errno);
	close(s);
	/* Connects still go to the guard: a host stream socket. */
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	rc = connect(s, (struct sockaddr *)&st, stl);
	say("connect.stream.host", rc, errno);
	if (rc == 0)
		SEND("connect.stream.host.sent", s, NULL, 0, 0);
	close(s);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	rc = connect(s, (struct sockaddr *)&ab, abl);
	say("connect.stream.abstract", rc, errno);
	close(s);
	/* The host's 127.0.0.1 is not the sandbox's. */
	s = socket(AF_INET, SOCK_DGRAM, 0);
	SEND("send.udp.loopback", s, &lo, sizeof(lo), 0);
	close(s);
	s = socket(AF_INET, SOCK_STREAM, 0);
	SEND("send.tcp.fastopen", s, &lo, sizeof(lo), MSG_FASTOPEN);
	close(s);
	s = socket(AF_INET, SOCK_STREAM, 0);
	rc = connect(s, (struct sockaddr *)&lo, sizeof(lo));
	say("connect.tcp.loopback", rc, errno);
	close(s);
	/* An IPv4-mapped ::1 spelling of the same. */
	{
		struct sockaddr_in6	l6;

		memset(&l6, 0, sizeof(l6));
		l6.sin6_family = AF_INET6;
		l6.sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, "::ffff:127.0.0.1", &l6.sin6_addr);
		s = socket(AF_INET6, SOCK_DGRAM, 0);
		SEND("send.udp6.mapped", s, &l6, sizeof(l6), 0);
		close(s);
	}
	/* Netlink unicast to the host's pid 1 (its audit/udev listeners). */
	{
		struct sockaddr_nl	nl;
		struct nlmsghdr		h;

		memset(&nl, 0, sizeof(nl));
		nl.nl_family = AF_NETLINK;
		nl.nl_pid = 1;
		memset(&h, 0, sizeof(h));
		h.nlmsg_len = sizeof(h);
		h.nlmsg_type = NLMSG_NOOP;
		s = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
		rc = sendto(s, &h, sizeof(h), 0, (struct sockaddr *)&nl,
		    sizeof(nl));
		say("send.netlink.pid1", rc, errno);
		close(s);
	}
#undef SEND
}

struct flip {
	int	fd;
	int	a, b;
	volatile int stop;
};

static void *
flipper(void *arg)
{
	struct flip	*f = arg;

	while (!f->stop) {
		dup2(f->a, f->fd);
		dup2(f->b, f->fd);
	}
	return NULL;
}

/*
 * A descriptor number flipped between a Unix stream socket and a UDP
 * socket while the main thread connects it to the host's stream socket
 * and sends to the host's datagram socket with it: nothing may arrive,
 * whichever socket the kernel or the guard finds there.
 */
static void
race(const char *dir)
{
	struct sockaddr_un	dg, st;
	socklen_t		dgl, stl;
	struct flip		f;
	pthread_t		t;
	struct timespec		t0, t1;
	long			connected = 0, sent = 0;
	int			s;

	dg = unaddr(dir, "host.dgram", &dgl);
	st = unaddr(dir, "host.stream", &stl);
	f.fd = 100;
	f.stop = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		f.a = socket(AF_UNIX, SOCK_STREAM, 0);
		f.b = socket(AF_INET, SOCK_DGRAM, 0);
		dup2(f.a, f.fd);
		f.stop = 0;
		pthread_create(&t, NULL, flipper, &f);
		for (s = 0; s < 20; s++) {
			if (connect(f.fd, (struct sockaddr *)&st, stl) == 0)
				connected++;
			if (sendto(f.fd, "race", 4, MSG_NOSIGNAL,
			    (struct sockaddr *)&dg, dgl) >= 0)
				sent++;
		}
		f.stop = 1;
		pthread_join(t, NULL);
		close(f.a);
		close(f.b);
		close(f.fd);
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (t1.tv_sec - t0.tv_sec < 2);
	printf("race.connect %s\n", connected ? "ok" : "none");
	/* A UDP send to an AF_UNIX address: EAFNOSUPPORT, nothing goes. */
	printf("race.sendto %s\n", sent ? "ok" : "none");
	fflush(stdout);
}

/* The guard reads no argument of these; it must answer, not hang. */
static void
hostile(void)
{
	long	rc;

	rc = syscall(SYS_socketpair, AF_UNIX, SOCK_DGRAM, 0, (void *)1);
	say("hostile.pair.badptr", rc, errno);
	rc = syscall(SYS_socketpair, AF_UNIX, SOCK_DGRAM, 0, NULL);
	say("hostile.pair.null", rc, errno);
	rc = syscall(SYS_socketpair, AF_UNIX, 0xffffffffffffffffULL, ~0ULL,
	    (void *)~0ULL);
	say("hostile.pair.allones", rc, errno);
	rc = syscall(SYS_socket, AF_UNIX, 0xffffffffffffffffULL, ~0ULL);
	say("hostile.socket.allones", rc, errno);
	rc = syscall(SYS_socket, AF_UNIX, 0x7ffffff2, 0x7fffffff);
	say("hostile.socket.bigtype", rc, errno);
}

int
main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "types") == 0)
		types();
	else if (strcmp(argv[1], "compat") == 0)
		compat();
	else if (strcmp(argv[1], "steal") == 0)
		steal();
	else if (strcmp(argv[1], "sends") == 0 && argc == 4)
		sends(argv[2], atoi(argv[3]));
	else if (strcmp(argv[1], "race") == 0 && argc == 3)
		race(argv[2]);
	else if (strcmp(argv[1], "hostile") == 0)
		hostile();
	else
		return 2;
	printf("end %s\n", argv[1]);
	return 0;
}
