/*
 * pxtool: a fast loopback load tool for the proxy scenarios and the bench.
 *
 *   pxtool serve --mode echo|sink --port-file F [--no-hash]
 *	An epoll server on 127.0.0.1:0.  echo: every byte back.  sink: read
 *	to EOF, then answer "bytes N sha256 HEX\n" and close; the same line
 *	goes to stdout.
 *   pxtool send --target HOST:PORT [--proxy IP:PORT] --bytes N [--no-hash]
 *	Connect (through a CONNECT tunnel when --proxy is given), send N
 *	bytes of a seeded xorshift stream, half-close, read the sink's line.
 *	Prints "sent N sha256 HEX ms T MBps R" and "sink <line>".
 *   pxtool reqs --target HOST:PORT [--proxy IP:PORT] --count N
 *	N sequential short exchanges with an echo server, a new connection
 *	each.  Prints "reqs N us_total T us_per_conn P".
 *   pxtool idle --target HOST:PORT --proxy IP:PORT --count N
 *	    --ready-file F [--hold-seconds S]
 *	Open N tunnels to an echo server, check each with one byte, write N
 *	to F, then hold them until SIGTERM/SIGINT or S seconds (default 120).
 *
 * Only IP literals are dialled (loopback by the tests' design); names are
 * only ever sent to the proxy in the CONNECT line.
 */
#include <sys/epoll.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/io.h"
#include "common/sockaddr.h"

#define CHUNK		(256 * 1024)
#define MAXEVENTS	64

struct opts {
	const char	*mode;
	const char	*port_file;
	const char	*target;
	const char	*proxy;
	const char	*ready_file;
	unsigned long long bytes;
	long		 count;
	long		 hold_seconds;
	int		 no_hash;
};

struct sconn {
	int		 fd;
	unsigned long long bytes;
	EVP_MD_CTX	*md;
	char		*pend;		/* echo: bytes not yet written back */
	size_t		 pend_off;
	size_t		 pend_len;
};

static void	 usage(void) __attribute__((noreturn));
static int	 dial(const char *);
static int	 tunnel_open(const struct opts *);
static double	 now_ms(void);
static void	 hex(const unsigned char *, unsigned int, char *);
static int	 cmd_serve(const struct opts *);
static int	 cmd_send(const struct opts *);
static int	 cmd_reqs(const struct opts *);
static int	 cmd_idle(const struct opts *);
static void	 sconn_close(int, struct sconn *);

static void
usage(void)
{
	fprintf(stderr, "usage: pxtool serve --mode echo|sink --port-file F "
	    "[--no-hash]\n"
	    "       pxtool send --target H:P [--proxy IP:P] --bytes N "
	    "[--no-hash]\n"
	    "       pxtool reqs --target H:P [--proxy IP:P] --count N\n"
	    "       pxtool idle --target H:P --proxy IP:P --count N "
	    "--ready-file F [--hold-seconds S]\n");
	exit(2);
}

/* A connected, blocking TCP socket with TCP_NODELAY, or -1. */
static int
dial(const char *addr)
{
	struct sockaddr_storage	ss;
	socklen_t		len;
	int			fd, one = 1;

	if (sockaddr_parse(addr, &ss, &len) == -1) {
		fprintf(stderr, "pxtool: bad address %s (IP:PORT only)\n",
		    addr);
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&ss, len) == -1) {
		fprintf(stderr, "pxtool: connect %s: %s\n", addr,
		    strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A connection to the target: direct, or through "CONNECT target" at the
 * proxy.  The tool's servers never speak first, so any byte after the
 * proxy's response head is an error.
 */
static int
tunnel_open(const struct opts *o)
{
	char	 req[600], resp[4096];
	size_t	 got = 0;
	ssize_t	 n;
	int	 fd, len;

	if (o->proxy == NULL)
		return dial(o->target);
	if ((fd = dial(o->proxy)) == -1)
		return -1;
	len = snprintf(req, sizeof(req),
	    "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", o->target, o->target);
	if (len < 0 || (size_t)len >= sizeof(req) ||
	    io_write_all(fd, req, (size_t)len, 0) == -1)
		goto fail;
	for (;;) {
		if (got == sizeof(resp) - 1)
			goto fail;
		n = recv(fd, resp + got, sizeof(resp) - 1 - got, 0);
		if (n <= 0)
			goto fail;
		got += (size_t)n;
		resp[got] = '\0';
		if (strstr(resp, "\r\n\r\n") != NULL)
			break;
	}
	if (strncmp(resp, "HTTP/1.1 200", 12) != 0 &&
	    strncmp(resp, "HTTP/1.0 200", 12) != 0) {
		fprintf(stderr, "pxtool: proxy answered: %.*s\n",
		    (int)strcspn(resp, "\r\n"), resp);
		goto fail;
	}
	if (strstr(resp, "\r\n\r\n") + 4 != resp + got) {
		fprintf(stderr, "pxtool: bytes after the CONNECT response\n");
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

static double
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
hex(const unsigned char *md, unsigned int n, char *out)
{
	unsigned int	i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
	out[2 * n] = '\0';
}

static void
sconn_close(int ep, struct sconn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->md != NULL)
		EVP_MD_CTX_free(c->md);
	free(c->pend);
	free(c);
}

/* The epoll echo/sink server; runs until killed. */
static int
cmd_serve(const struct opts *o)
{
	struct sockaddr_in	 sin;
	struct epoll_event	 ev, evs[MAXEVENTS];
	socklen_t		 slen = sizeof(sin);
	FILE			*pf;
	char			*buf;
	int			 ls, ep, n, i, one = 1, echo;

	if (o->mode == NULL || o->port_file == NULL)
		usage();
	echo = strcmp(o->mode, "echo") == 0;
	if (!echo && strcmp(o->mode, "sink") != 0)
		usage();
	if ((buf = malloc(CHUNK)) == NULL)
		return 1;
	ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(ls, 4096) == -1 ||
	    getsockname(ls, (struct sockaddr *)&sin, &slen) == -1) {
		perror("pxtool: listen");
		return 1;
	}
	if ((pf = fopen(o->port_file, "w")) == NULL) {
		perror(o->port_file);
		return 1;
	}
	fprintf(pf, "%u\n", ntohs(sin.sin_port));
	fclose(pf);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
	for (;;) {
		n = epoll_wait(ep, evs, MAXEVENTS, -1);
		if (n == -1 && errno == EINTR)
			continue;
		for (i = 0; i < n; i++) {
			struct sconn	*c = evs[i].data.ptr;
			ssize_t		 r;

			if (c == NULL) {
				int	 fd;

				while ((fd = accept4(ls, NULL, NULL,
				    SOCK_NONBLOCK | SOCK_CLOEXEC)) != -1) {
					c = calloc(1, sizeof(*c));
					c->fd = fd;
					setsockopt(fd, IPPROTO_TCP, TCP_NODELAY,
					    &one, sizeof(one));
					if (!echo && !o->no_hash) {
						c->md = EVP_MD_CTX_new();
						EVP_DigestInit_ex(c->md,
						    EVP_sha256(), NULL);
					}
					ev.events = EPOLLIN;
					ev.data.ptr = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
				}
				continue;
			}
			if (c->pend_len > 0) {
				/* echo: finish the pending write first. */
				r = write(c->fd, c->pend + c->pend_off,
				    c->pend_len);
				if (r == -1 && errno != EAGAIN) {
					sconn_close(ep, c);
					continue;
				}
				if (r > 0) {
					c->pend_off += (size_t)r;
					c->pend_len -= (size_t)r;
				}
				if (c->pend_len == 0) {
					ev.events = EPOLLIN;
					ev.data.ptr = c;
					epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
				}
				continue;
			}
			r = read(c->fd, buf, CHUNK);
			if (r == -1 && errno == EAGAIN)
				continue;
			if (r <= 0) {
				if (!echo) {
					unsigned char	md[EVP_MAX_MD_SIZE];
					unsigned int	mdlen = 0;
					char		line[200], h[130] = "-";
					int		flags;

					if (c->md != NULL) {
						EVP_DigestFinal_ex(c->md, md,
						    &mdlen);
						hex(md, mdlen, h);
					}
					snprintf(line, sizeof(line),
					    "bytes %llu sha256 %s\n",
					    c->bytes, h);
					flags = fcntl(c->fd, F_GETFL);
					fcntl(c->fd, F_SETFL,
					    flags & ~O_NONBLOCK);
					io_write_all(c->fd, line, strlen(line), 0);
					fputs(line, stdout);
					fflush(stdout);
				}
				sconn_close(ep, c);
				continue;
			}
			c->bytes += (unsigned long long)r;
			if (!echo) {
				if (c->md != NULL)
					EVP_DigestUpdate(c->md, buf, (size_t)r);
				continue;
			}
			{
				ssize_t	w = write(c->fd, buf, (size_t)r);

				if (w == -1 && errno != EAGAIN) {
					sconn_close(ep, c);
					continue;
				}
				if (w == -1)
					w = 0;
				if (w < r) {
					free(c->pend);
					c->pend = malloc((size_t)(r - w));
					memcpy(c->pend, buf + w, (size_t)(r - w));
					c->pend_off = 0;
					c->pend_len = (size_t)(r - w);
					ev.events = EPOLLOUT;
					ev.data.ptr = c;
					epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
				}
			}
		}
	}
}

/* Send o->bytes of a seeded xorshift stream, half-close, read the answer. */
static int
cmd_send(const struct opts *o)
{
	unsigned char		 md[EVP_MAX_MD_SIZE];
	unsigned int		 mdlen = 0;
	char			 h[130] = "-", answer[512];
	EVP_MD_CTX		*ctx = NULL;
	uint64_t		*buf, x = 0x9e3779b97f4a7c15ULL;
	unsigned long long	 left = o->bytes;
	double			 t0, ms;
	size_t			 got = 0, i, k;
	ssize_t			 n;
	int			 fd;

	if (o->target == NULL || o->bytes == 0)
		usage();
	if ((buf = malloc(CHUNK)) == NULL)
		return 1;
	if ((fd = tunnel_open(o)) == -1)
		return 1;
	if (!o->no_hash) {
		ctx = EVP_MD_CTX_new();
		EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	}
	t0 = now_ms();
	while (left > 0) {
		k = left < CHUNK ? (size_t)left : CHUNK;
		/* Without a hash (bench) one chunk is generated and resent. */
		for (i = 0; (ctx != NULL || left == o->bytes) &&
		    i < CHUNK / 8; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = x;
		}
		if (ctx != NULL)
			EVP_DigestUpdate(ctx, buf, k);
		if (io_write_all(fd, buf, k, 0) == -1) {
			fprintf(stderr, "pxtool: write: %s after %llu bytes\n",
			    strerror(errno), o->bytes - left);
			return 1;
		}
		left -= k;
	}
	shutdown(fd, SHUT_WR);
	while (got < sizeof(answer) - 1 &&
	    (n = read(fd, answer + got, sizeof(answer) - 1 - got)) > 0)
		got += (size_t)n;
	answer[got] = '\0';
	ms = now_ms() - t0;
	close(fd);
	if (ctx != NULL) {
		EVP_DigestFinal_ex(ctx, md, &mdlen);
		EVP_MD_CTX_free(ctx);
		hex(md, mdlen, h);
	}
	answer[strcspn(answer, "\n")] = '\0';
	printf("sent %llu sha256 %s ms %.1f MBps %.1f\nsink %s\n", o->bytes, h,
	    ms, (double)o->bytes / 1e3 / ms, answer);
	free(buf);
	return got > 0 ? 0 : 1;
}

/* Sequential short exchanges, one connection each. */
static int
cmd_reqs(const struct opts *o)
{
	char	 b[8];
	double	 t0, us;
	long	 i;
	size_t	 got;
	ssize_t	 n;
	int	 fd;

	if (o->target == NULL || o->count <= 0)
		usage();
	t0 = now_ms();
	for (i = 0; i < o->count; i++) {
		if ((fd = tunnel_open(o)) == -1)
			return 1;
		if (io_write_all(fd, "ping\n", 5, 0) == -1)
			return 1;
		for (got = 0; got < 5; got += (size_t)n)
			if ((n = read(fd, b + got, 5 - got)) <= 0) {
				fprintf(stderr, "pxtool: short echo\n");
				return 1;
			}
		if (memcmp(b, "ping\n", 5) != 0)
			return 1;
		close(fd);
	}
	us = (now_ms() - t0) * 1e3;
	printf("reqs %ld us_total %.0f us_per_conn %.1f\n", o->count, us,
	    us / (double)o->count);
	return 0;
}

/* Open count tunnels, check each, report, hold until a signal. */
static int
cmd_idle(const struct opts *o)
{
	struct timespec	 ts;
	sigset_t	 set;
	FILE		*rf;
	char		 b;
	long		 i;
	int		*fds;

	if (o->target == NULL || o->proxy == NULL || o->count <= 0 ||
	    o->ready_file == NULL)
		usage();
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((fds = calloc((size_t)o->count, sizeof(int))) == NULL)
		return 1;
	for (i = 0; i < o->count; i++) {
		if ((fds[i] = tunnel_open(o)) == -1) {
			fprintf(stderr, "pxtool: tunnel %ld failed\n", i);
			return 1;
		}
		if (io_write_all(fds[i], "x", 1, 0) == -1 ||
		    read(fds[i], &b, 1) != 1 || b != 'x') {
			fprintf(stderr, "pxtool: tunnel %ld: no echo\n", i);
			return 1;
		}
	}
	if ((rf = fopen(o->ready_file, "w")) == NULL)
		return 1;
	fprintf(rf, "%ld\n", o->count);
	fclose(rf);
	ts.tv_sec = o->hold_seconds;
	ts.tv_nsec = 0;
	sigtimedwait(&set, NULL, &ts);
	for (i = 0; i < o->count; i++)
		close(fds[i]);
	free(fds);
	return 0;
}

int
main(int argc, char *argv[])
{
	struct opts	 o;
	const char	*cmd;
	int		 i;

	memset(&o, 0, sizeof(o));
	o.hold_seconds = 120;
	if (argc < 2)
		usage();
	cmd = argv[1];
	for (i = 2; i < argc; i++) {
		const char	*a = argv[i];
		const char	*v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--no-hash") == 0) {
			o.no_hash = 1;
			continue;
		}
		if (v == NULL)
			usage();
		i++;
		if (strcmp(a, "--mode") == 0)
			o.mode = v;
		else if (strcmp(a, "--port-file") == 0)
			o.port_file = v;
		else if (strcmp(a, "--target") == 0)
			o.target = v;
		else if (strcmp(a, "--proxy") == 0)
			o.proxy = v;
		else if (strcmp(a, "--ready-file") == 0)
			o.ready_file = v;
		else if (strcmp(a, "--bytes") == 0)
			o.bytes = strtoull(v, NULL, 10);
		else if (strcmp(a, "--count") == 0)
			o.count = strtol(v, NULL, 10);
		else if (strcmp(a, "--hold-seconds") == 0)
			o.hold_seconds = strtol(v, NULL, 10);
		else
			usage();
	}
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(cmd, "serve") == 0)
		return cmd_serve(&o);
	if (strcmp(cmd, "send") == 0)
		return cmd_send(&o);
	if (strcmp(cmd, "reqs") == 0)
		return cmd_reqs(&o);
	if (strcmp(cmd, "idle") == 0)
		return cmd_idle(&o);
	usage();
}
