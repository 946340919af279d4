/*
 * sock_calls: the socket calls a sandbox's seccomp filter may stop, timed
 * where they run -- on the host, inside pisbx-run (its guard performs
 * connect, sendmsg and sendto with an address), inside the same sandbox
 * with the guard off (allowAllUnixSockets), inside bubblewrap -- so that
 * make bench can put the four side by side.  Everything stays inside the
 * process: its own loopback listener, its own socketpair.
 *
 *   sock_calls connect [--count N]
 *	N blocking TCP connect()s to a listener on 127.0.0.1 of this
 *	process (a thread accepts and closes); us per connect() call.
 *   sock_calls sendmsg [--count N]
 *	N sendmsg()s of 256 bytes, no address, on a connected AF_UNIX
 *	stream socketpair (a thread reads); us per call.
 *   sock_calls send [--count N]
 *	The same with send() (sendto without an address); us per call.
 *   sock_calls bulk [--mib M]
 *	M MiB in sendmsg()s of 64 KiB on an AF_UNIX stream socketpair (a
 *	thread reads); MB/s.
 *   sock_calls udp [--count N]
 *	N sendto()s of 256 bytes to a UDP socket on 127.0.0.1 of this
 *	process, with its address (a thread reads); us per call.
 *
 * Prints "MODE N us_per_call X" or "bulk M MBps X".
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <netinet/in.h>

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SC_SMALL	256
#define SC_BULK		65536

static double	 sc_now(void);
static void	*sc_accept(void *);
static void	*sc_drain(void *);
static int	 sc_listen(int type, struct sockaddr_in *);
static double	 sc_connect(long);
static double	 sc_sendmsg(long, int);
static double	 sc_bulk(long);
static double	 sc_udp(long);
static void	 sc_usage(void) __attribute__((noreturn));

static void
sc_usage(void)
{
	fprintf(stderr, "usage: sock_calls connect|sendmsg|send|udp "
	    "[--count N]\n       sock_calls bulk [--mib M]\n");
	exit(2);
}

/* Microseconds of the monotonic clock. */
static double
sc_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Accept and close connections on the listener arg until it fails. */
static void *
sc_accept(void *arg)
{
	int	l = *(int *)arg, c;

	while ((c = accept(l, NULL, NULL)) != -1)
		close(c);
	return NULL;
}

/* Read and drop what arrives on the socket arg until EOF or error. */
static void *
sc_drain(void *arg)
{
	static char	buf[SC_BULK];
	int		s = *(int *)arg;

	while (recv(s, buf, sizeof(buf), 0) > 0)
		;
	return NULL;
}

/* A socket of type bound to 127.0.0.1 (a port of the kernel's choice). */
static int
sc_listen(int type, struct sockaddr_in *sin)
{
	socklen_t	sl = sizeof(*sin);
	int		s;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((s = socket(AF_INET, type | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(s, (struct sockaddr *)sin, sizeof(*sin)) == -1 ||
	    (type == SOCK_STREAM && listen(s, 4096) == -1) ||
	    getsockname(s, (struct sockaddr *)sin, &sl) == -1) {
		perror("sock_calls: listener");
		exit(1);
	}
	return s;
}

/* n blocking connects; us per connect() call (the call alone). */
static double
sc_connect(long n)
{
	struct sockaddr_in	sin;
	pthread_t		t;
	double			spent = 0, t0;
	long			i;
	int			l, s;

	l = sc_listen(SOCK_STREAM, &sin);
	if (pthread_create(&t, NULL, sc_accept, &l) != 0)
		exit(1);
	for (i = 0; i < n; i++) {
		if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) ==
		    -1) {
			perror("sock_calls: socket");
			exit(1);
		}
		t0 = sc_now();
		if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
			perror("sock_calls: connect");
			exit(1);
		}
		spent += sc_now() - t0;
		close(s);
	}
	return spent / (double)n;
}

/* n small sends with no address (sendmsg, or send when plain). */
static double
sc_sendmsg(long n, int plain)
{
	static char	buf[SC_SMALL];
	struct msghdr	m;
	struct iovec	iov = { buf, sizeof(buf) };
	pthread_t	t;
	double		t0;
	long		i;
	int		sv[2];
	ssize_t		k;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1 ||
	    pthread_create(&t, NULL, sc_drain, &sv[1]) != 0)
		exit(1);
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	t0 = sc_now();
	for (i = 0; i < n; i++) {
		k = plain ? send(sv[0], buf, sizeof(buf), 0) :
		    sendmsg(sv[0], &m, 0);
		if (k != (ssize_t)sizeof(buf)) {
			perror("sock_calls: send");
			exit(1);
		}
	}
	t0 = (sc_now() - t0) / (double)n;
	shutdown(sv[0], SHUT_WR);
	pthread_join(t, NULL);
	return t0;
}

/* mib MiB in sendmsg()s of 64 KiB; MB/s. */
static double
sc_bulk(long mib)
{
	static char	buf[SC_BULK];
	struct msghdr	m;
	struct iovec	iov;
	pthread_t	t;
	double		t0;
	size_t		left = (size_t)mib << 20;
	ssize_t		k;
	int		sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1 ||
	    pthread_create(&t, NULL, sc_drain, &sv[1]) != 0)
		exit(1);
	memset(buf, 'x', sizeof(buf));
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	t0 = sc_now();
	while (left > 0) {
		iov.iov_base = buf;
		iov.iov_len = left < sizeof(buf) ? left : sizeof(buf);
		if ((k = sendmsg(sv[0], &m, 0)) <= 0) {
			perror("sock_calls: sendmsg");
			exit(1);
		}
		left -= (size_t)k;
	}
	shutdown(sv[0], SHUT_WR);
	pthread_join(t, NULL);
	return (double)((size_t)mib << 20) / (sc_now() - t0);
}

/* n UDP sendto()s with an address; us per call. */
static double
sc_udp(long n)
{
	static char		buf[SC_SMALL];
	struct sockaddr_in	sin;
	pthread_t		t;
	double			t0;
	long			i;
	int			r, s;

	r = sc_listen(SOCK_DGRAM, &sin);
	if (pthread_create(&t, NULL, sc_drain, &r) != 0 ||
	    (s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		exit(1);
	t0 = sc_now();
	for (i = 0; i < n; i++)
		if (sendto(s, buf, sizeof(buf), 0, (struct sockaddr *)&sin,
		    sizeof(sin)) != (ssize_t)sizeof(buf) && errno != ENOBUFS) {
			perror("sock_calls: sendto");
			exit(1);
		}
	return (sc_now() - t0) / (double)n;
}

int
main(int argc, char *argv[])
{
	const char	*mode;
	long		 n = 0;
	int		 i;

	if (argc < 2)
		sc_usage();
	mode = argv[1];
	for (i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--count") == 0 ||
		    strcmp(argv[i], "--mib") == 0)
			n = strtol(argv[i + 1], NULL, 10);
		else
			sc_usage();
	}
	if (i != argc)
		sc_usage();
	if (strcmp(mode, "bulk") == 0) {
		n = n > 0 ? n : 1024;
		printf("bulk %ld MBps %.0f\n", n, sc_bulk(n));
		return 0;
	}
	n = n > 0 ? n : 2000;
	if (strcmp(mode, "connect") == 0)
		printf("connect %ld us_per_call %.2f\n", n, sc_connect(n));
	else if (strcmp(mode, "sendmsg") == 0 || strcmp(mode, "send") == 0)
		printf("%s %ld us_per_call %.2f\n", mode, n,
		    sc_sendmsg(n, strcmp(mode, "send") == 0));
	else if (strcmp(mode, "udp") == 0)
		printf("udp %ld us_per_call %.2f\n", n, sc_udp(n));
	else
		sc_usage();
	return 0;
}
