/*
 * sendfast: the ways around the guard that a send or connect without
 * the guard's look could open, tried from inside the sandbox.  The
 * filter lets a send with no address (sendto with a NULL address)
 * straight through, and the guard uses any address but a Unix path as
 * given; each mode below tries to turn either into a reach outside.
 * run-sendfast.sh listens outside and asserts that nothing arrived.
 *
 *   sendfast swap UNIXDGRAM UNIXSTREAM SECONDS
 *	Three threads race for SECONDS: one dup2()s, onto one descriptor
 *	number, in turn a connected stream socketpair end, an unconnected
 *	AF_UNIX datagram socket and an AF_UNIX stream socket; one rewrites
 *	a msghdr's msg_name and a sockaddr between NULL / 127.0.0.1 and
 *	the host's socket paths; one sends on that number with send(),
 *	sendmsg() and sendto() with the address, and connect()s.  Prints
 *	"swap N calls, M reached", M counting calls that succeeded with
 *	the host's path in place (the host's listener is the judge).
 *   sendfast fastopen PORT
 *	TCP fast open from an unconnected socket: sendto(MSG_FASTOPEN)
 *	with no address, then with 127.0.0.1:PORT, then sendmsg
 *	(MSG_FASTOPEN) with it.  Prints each result.
 *   sendfast udp PORT
 *	An unconnected UDP socket: send() with no address, sendto()
 *	127.0.0.1:PORT.  Prints each result.
 *   sendfast dgram-path UNIXDGRAM
 *	An AF_UNIX datagram socket connect()ed to the host's path, then
 *	send() with no address.  Prints each result.
 *   sendfast rights UNIXSTREAM PORT
 *	Receives descriptors over SCM_RIGHTS from the allowed socket
 *	UNIXSTREAM (a host process hands over its unconnected UDP and TCP
 *	sockets) and sends on each with no address, and with MSG_FASTOPEN,
 *	to 127.0.0.1:PORT's peer; then binds the TCP one to 127.0.0.1 and
 *	listens.  Prints each result.
 *   sendfast inherited PORT
 *	The same sends on descriptor 0, a socket the caller inherited.
 *
 * A result is "ok" (the call succeeded) or the errno's name.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN	0x20000000
#endif

#define SF_FD	100		/* the number the race swaps */

static const char	*sf_res(long);
static void		 sf_in(struct sockaddr_in *, int port);
static void		 sf_un(struct sockaddr_un *, const char *);
static void		*sf_swapper(void *);
static void		*sf_writer(void *);
static int		 sf_swap(const char *, const char *, int);
static void		 sf_sends(const char *, int fd, int port);
static int		 sf_rights(const char *, int port);

static volatile int	 sf_stop;
static struct msghdr	 sf_msg;
static struct sockaddr_un sf_host;	/* the host's path */
static struct sockaddr_in sf_lo;	/* the sandbox's own loopback */
static struct sockaddr_storage sf_addr;	/* rewritten in place */

/* "ok" for a call that returned >= 0, else errno's name. */
static const char *
sf_res(long rc)
{
	const char	*n;

	if (rc >= 0)
		return "ok";
	n = strerrorname_np(errno);
	return n != NULL ? n : "unknown";
}

static void
sf_in(struct sockaddr_in *sin, int port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

static void
sf_un(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	snprintf(sun->sun_path, sizeof(sun->sun_path), "%s", path);
}

/* Swap what SF_FD is, and what the addresses say, until told to stop. */
static void *
sf_swapper(void *arg)
{
	int	*socks = arg;
	long	 i = 0;

	while (!sf_stop) {
		(void)dup2(socks[i % 3], SF_FD);
		sf_msg.msg_name = i & 1 ? (void *)&sf_host : NULL;
		sf_msg.msg_namelen = i & 1 ? sizeof(sf_host) : 0;
		if (i & 2)
			memcpy(&sf_addr, &sf_host, sizeof(sf_host));
		else
			memcpy(&sf_addr, &sf_lo, sizeof(sf_lo));
		i++;
	}
	return NULL;
}

/* Rewrite the addresses alone, faster than the swapper. */
static void *
sf_writer(void *arg)
{
	long	i = 0;

	(void)arg;
	while (!sf_stop) {
		sf_msg.msg_name = i & 1 ? (void *)&sf_host : NULL;
		sf_msg.msg_namelen = i & 1 ? sizeof(sf_host) : 0;
		i++;
	}
	return NULL;
}

/* The race of the swap mode; 0. */
static int
sf_swap(const char *dgram, const char *stream, int secs)
{
	static char	 buf[16] = "sendfast-swap";
	struct iovec	 iov = { buf, sizeof(buf) };
	struct sockaddr_un stream_addr;
	pthread_t	 t[2];
	time_t		 end = time(NULL) + secs;
	long		 calls = 0, ok = 0, rc;
	int		 socks[3], pair[2], s, k = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == -1 ||
	    (socks[1] = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1 ||
	    (socks[2] = socket(AF_UNIX, SOCK_STREAM, 0)) == -1) {
		perror("sendfast: sockets");
		return 1;
	}
	socks[0] = pair[0];
	sf_un(&sf_host, dgram);
	sf_un(&stream_addr, stream);
	sf_in(&sf_lo, 9);
	sf_msg.msg_iov = &iov;
	sf_msg.msg_iovlen = 1;
	if (pthread_create(&t[0], NULL, sf_swapper, socks) != 0 ||
	    pthread_create(&t[1], NULL, sf_writer, NULL) != 0)
		return 1;
	while (time(NULL) < end) {
		switch (k++ % 4) {
		case 0:
			rc = send(SF_FD, buf, sizeof(buf), MSG_DONTWAIT);
			break;
		case 1:
			rc = sendmsg(SF_FD, &sf_msg, MSG_DONTWAIT);
			break;
		case 2:
			rc = sendto(SF_FD, buf, sizeof(buf), MSG_DONTWAIT,
			    (struct sockaddr *)&sf_addr, sizeof(sf_host));
			break;
		default:
			/* A fresh socket of either kind, on the number. */
			s = socket(k & 4 ? AF_UNIX : AF_INET, SOCK_STREAM, 0);
			if (s != -1) {
				(void)dup2(s, SF_FD + 1);
				close(s);
			}
			memcpy(&sf_addr, k & 8 ? (void *)&stream_addr :
			    (void *)&sf_lo, k & 8 ? sizeof(stream_addr) :
			    sizeof(sf_lo));
			rc = connect(SF_FD + 1, (struct sockaddr *)&sf_addr,
			    sizeof(stream_addr));
			break;
		}
		calls++;
		if (rc >= 0)
			ok++;
		/* The pair's own peer, drained: the buffer never fills. */
		(void)recv(pair[1], buf, sizeof(buf), MSG_DONTWAIT);
	}
	sf_stop = 1;
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	printf("swap %ld calls %ld ok\n", calls, ok);
	return 0;
}

/* send, sendto(MSG_FASTOPEN) with and without 127.0.0.1:port on fd. */
static void
sf_sends(const char *what, int fd, int port)
{
	struct sockaddr_in	sin;
	struct msghdr		m;
	struct iovec		iov = { (void *)"sendfast", 8 };
	long			rc;

	sf_in(&sin, port);
	rc = send(fd, "sendfast", 8, MSG_DONTWAIT | MSG_NOSIGNAL);
	printf("%s send %s\n", what, sf_res(rc));
	rc = sendto(fd, "sendfast", 8, MSG_FASTOPEN | MSG_DONTWAIT |
	    MSG_NOSIGNAL, NULL, 0);
	printf("%s fastopen-null %s\n", what, sf_res(rc));
	rc = sendto(fd, "sendfast", 8, MSG_FASTOPEN | MSG_DONTWAIT |
	    MSG_NOSIGNAL, (struct sockaddr *)&sin, sizeof(sin));
	printf("%s fastopen-addr %s\n", what, sf_res(rc));
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_name = &sin;
	m.msg_namelen = sizeof(sin);
	rc = sendmsg(fd, &m, MSG_FASTOPEN | MSG_DONTWAIT | MSG_NOSIGNAL);
	printf("%s fastopen-msg %s\n", what, sf_res(rc));
}

/* Descriptors from the host over SCM_RIGHTS, each tried; 0 or 1. */
static int
sf_rights(const char *path, int port)
{
	struct sockaddr_un	 sun;
	struct sockaddr_in	 sin;
	struct msghdr		 m;
	struct cmsghdr		*c;
	char			 b[8], cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec		 iov = { b, sizeof(b) };
	int			 s, fds[2];

	sf_un(&sun, path);
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		printf("rights connect %s\n", sf_res(-1));
		return 1;
	}
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	if (recvmsg(s, &m, 0) <= 0 || (c = CMSG_FIRSTHDR(&m)) == NULL ||
	    c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(2 * sizeof(int))) {
		printf("rights recv failed\n");
		return 1;
	}
	memcpy(fds, CMSG_DATA(c), sizeof(fds));
	sf_sends("rights-udp", fds[0], port);
	sf_sends("rights-tcp", fds[1], port);
	/* Bound on the host, it would listen on the host's network. */
	sf_in(&sin, 0);
	printf("rights-tcp bind %s\n", sf_res(bind(fds[1],
	    (struct sockaddr *)&sin, sizeof(sin))));
	printf("rights-tcp listen %s\n", sf_res(listen(fds[1], 1)));
	return 0;
}

int
main(int argc, char *argv[])
{
	struct sockaddr_un	sun;
	struct sockaddr_in	sin;
	long			rc;
	int			s;

	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && strcmp(argv[1], "swap") == 0)
		return sf_swap(argv[2], argv[3], atoi(argv[4]));
	if (argc == 3 && strcmp(argv[1], "fastopen") == 0) {
		if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
			return 1;
		sf_sends("tcp", s, atoi(argv[2]));
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "udp") == 0) {
		if ((s = socket(AF_INET, SOCK_DGRAM, 0)) == -1)
			return 1;
		sf_in(&sin, atoi(argv[2]));
		printf("udp send %s\n", sf_res(send(s, "sendfast", 8, 0)));
		rc = sendto(s, "sendfast", 8, 0, (struct sockaddr *)&sin,
		    sizeof(sin));
		printf("udp sendto %s\n", sf_res(rc));
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "dgram-path") == 0) {
		if ((s = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1)
			return 1;
		sf_un(&sun, argv[2]);
		rc = connect(s, (struct sockaddr *)&sun, sizeof(sun));
		printf("dgram-path connect %s\n", sf_res(rc));
		printf("dgram-path send %s\n",
		    sf_res(send(s, "sendfast", 8, 0)));
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "rights") == 0)
		return sf_rights(argv[2], atoi(argv[3]));
	if (argc == 3 && strcmp(argv[1], "inherited") == 0) {
		sf_sends("inherited", 0, atoi(argv[2]));
		return 0;
	}
	fprintf(stderr, "usage: sendfast swap UNIXDGRAM UNIXSTREAM SECONDS | "
	    "fastopen PORT | udp PORT | dgram-path UNIXDGRAM | rights "
	    "UNIXSTREAM PORT | inherited PORT\n");
	return 2;
}
