/*
 * pxtool: a fast loopback load tool for the proxy scenarios and the bench.
 *
 *   pxtool serve --mode echo|sink|http --port-file F [--no-hash]
 *	An epoll server on 127.0.0.1:0.  echo: every byte back.  sink: read
 *	to EOF, then answer "bytes N sha256 HEX\n" and close; the same line
 *	goes to stdout.  http: HTTP/1.1 with keep-alive; every request is
 *	answered "200" after its Content-Length body, with the body
 *	"bytes N\n" (N the request body's length).
 *   pxtool send --target HOST:PORT [--proxy IP:PORT] --bytes N [--no-hash]
 *	Connect (through a tunnel when --proxy is given), send N bytes of a
 *	seeded xorshift stream, half-close, read the sink's line.  Prints
 *	"sent N sha256 HEX ms T MBps R" and "sink <line>".  With --http (or
 *	--via http) the bytes are the body of one POST to an http server
 *	instead, and "sink" shows its answer.
 *   pxtool reqs --target HOST:PORT [--proxy IP:PORT] --count N
 *	N sequential short exchanges with an echo server, a new connection
 *	each (--http or --via http: one GET each, to an http server).  Prints
 *	"reqs N us_total T us_per_conn P".
 *   pxtool idle --target HOST:PORT --proxy IP:PORT --count N
 *	    --ready-file F [--hold-seconds S]
 *	Open N tunnels to an echo server, check each with one byte, write N
 *	to F, then hold them until SIGTERM/SIGINT or S seconds (default 120).
 *
 * With --proxy, --via connect (the default), socks5 or http picks how the
 * proxy is asked, and --proxy-auth USER:PASS adds Basic credentials (or
 * the SOCKS5 username/password method).  Only IP literals are dialled
 * (loopback by the tests' design); names are only ever sent to the proxy.
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
	const char	*via;		/* "connect", "socks5" or "http" */
	const char	*auth;		/* "user:pass" or NULL */
	unsigned long long bytes;
	long		 count;
	long		 hold_seconds;
	int		 no_hash;
	int		 http;		/* --http: talk HTTP to the target */
};

struct sconn {
	int		 fd;
	unsigned long long bytes;
	EVP_MD_CTX	*md;
	char		*pend;		/* echo: bytes not yet written back */
	size_t		 pend_off;
	size_t		 pend_len;
	char		*head;		/* http: the request head so far */
	size_t		 head_len;
	unsigned long long body_left;	/* http: body bytes still to come */
	int		 in_body;
	int		 close_after;	/* http: "Connection: close" seen */
};

static void	 usage(void) __attribute__((noreturn));
static int	 dial(const char *);
static int	 tunnel_open(const struct opts *);
static int	 socks5_open(const struct opts *, int);
static int	 http_open(const struct opts *, const char *,
		    unsigned long long);
static int	 http_head(const struct opts *, char *, size_t, const char *,
		    unsigned long long);
static int	 http_response(int, char *, size_t);
static void	 b64(const char *, char *, size_t);
static int	 read_all(int, void *, size_t);
static int	 http_feed(struct sconn *, const char *, size_t, char *,
		    size_t, size_t *);
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
	fprintf(stderr, "usage: pxtool serve --mode echo|sink|http --port-file F "
	    "[--no-hash]\n"
	    "       pxtool send --target H:P [--proxy IP:P] --bytes N "
	    "[--no-hash] [--http]\n"
	    "       pxtool reqs --target H:P [--proxy IP:P] --count N "
	    "[--http]\n"
	    "       pxtool idle --target H:P --proxy IP:P --count N "
	    "--ready-file F [--hold-seconds S]\n"
	    "       (with --proxy: [--via connect|socks5|http] "
	    "[--proxy-auth USER:PASS])\n");
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
 * A connection to the target: direct, or through a CONNECT or SOCKS5
 * tunnel at the proxy.  The tool's servers never speak first, so any byte
 * after the proxy's answer is an error.
 */
static int
tunnel_open(const struct opts *o)
{
	char	 req[1200], resp[4096];
	int	 fd, len;

	if (o->proxy == NULL)
		return dial(o->target);
	if ((fd = dial(o->proxy)) == -1)
		return -1;
	if (strcmp(o->via, "socks5") == 0)
		return socks5_open(o, fd);
	if (strcmp(o->via, "connect") != 0) {
		fprintf(stderr, "pxtool: --via %s makes no tunnel\n", o->via);
		goto fail;
	}
	len = http_head(o, req, sizeof(req), "CONNECT", 0);
	if (len == -1 || io_write_all(fd, req, (size_t)len, 0) == -1)
		goto fail;
	if ((len = http_response(fd, resp, sizeof(resp))) == -1)
		goto fail;
	if (strncmp(resp, "HTTP/1.1 200", 12) != 0 &&
	    strncmp(resp, "HTTP/1.0 200", 12) != 0) {
		fprintf(stderr, "pxtool: proxy answered: %.*s\n",
		    (int)strcspn(resp, "\r\n"), resp);
		goto fail;
	}
	if (len != 0) {
		fprintf(stderr, "pxtool: bytes after the CONNECT response\n");
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/*
 * A connection with a GET or POST head sent: to the forwarding proxy with
 * --via http, else direct or through a tunnel.
 */
static int
http_open(const struct opts *o, const char *method, unsigned long long body)
{
	char	 req[1200];
	int	 fd, len;

	if (o->proxy != NULL && strcmp(o->via, "http") == 0)
		fd = dial(o->proxy);
	else
		fd = tunnel_open(o);
	if (fd == -1)
		return -1;
	len = http_head(o, req, sizeof(req), method, body);
	if (len == -1 || io_write_all(fd, req, (size_t)len, 0) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* RFC 1928 CONNECT on fd (RFC 1929 credentials with --proxy-auth). */
static int
socks5_open(const struct opts *o, int fd)
{
	struct in_addr	 a4;
	unsigned char	 m[600], r[300];
	const char	*colon = strrchr(o->target, ':');
	size_t		 hl, n = 0, ul, pl;
	long		 port;

	if (colon == NULL || (hl = (size_t)(colon - o->target)) == 0 ||
	    hl > 255 || (port = strtol(colon + 1, NULL, 10)) < 1 ||
	    port > 65535)
		goto fail;
	m[0] = 5;
	m[1] = 1;
	m[2] = o->auth != NULL ? 2 : 0;
	if (io_write_all(fd, m, 3, 0) == -1 || read_all(fd, r, 2) == -1 ||
	    r[0] != 5 || r[1] != m[2])
		goto fail;
	if (o->auth != NULL) {
		const char	*c = strchr(o->auth, ':');

		if (c == NULL || (ul = (size_t)(c - o->auth)) > 255 ||
		    (pl = strlen(c + 1)) > 255)
			goto fail;
		m[n++] = 1;
		m[n++] = (unsigned char)ul;
		memcpy(m + n, o->auth, ul);
		n += ul;
		m[n++] = (unsigned char)pl;
		memcpy(m + n, c + 1, pl);
		n += pl;
		if (io_write_all(fd, m, n, 0) == -1 || read_all(fd, r, 2) == -1 ||
		    r[1] != 0)
			goto fail;
		n = 0;
	}
	m[n++] = 5;
	m[n++] = 1;
	m[n++] = 0;
	memcpy(r, o->target, hl);
	r[hl] = '\0';
	if (inet_pton(AF_INET, (char *)r, &a4) == 1) {
		m[n++] = 1;
		memcpy(m + n, &a4, 4);
		n += 4;
	} else {
		m[n++] = 3;
		m[n++] = (unsigned char)hl;
		memcpy(m + n, o->target, hl);
		n += hl;
	}
	m[n++] = (unsigned char)(port >> 8);
	m[n++] = (unsigned char)port;
	if (io_write_all(fd, m, n, 0) == -1 || read_all(fd, r, 4) == -1)
		goto fail;
	if (r[1] != 0) {
		fprintf(stderr, "pxtool: SOCKS5 reply %u\n", r[1]);
		goto fail;
	}
	switch (r[3]) {
	case 1: n = 4 + 2; break;
	case 4: n = 16 + 2; break;
	case 3:
		if (read_all(fd, r, 1) == -1)
			goto fail;
		n = (size_t)r[0] + 2;
		break;
	default: goto fail;
	}
	if (read_all(fd, r, n) == -1)
		goto fail;
	return fd;
fail:
	fprintf(stderr, "pxtool: SOCKS5 handshake with %s failed\n", o->proxy);
	close(fd);
	return -1;
}

/*
 * A request head for the target into buf: "CONNECT host:port" or, for
 * method GET/POST, the absolute URI when asking a forwarding proxy and
 * the path alone when talking to the server (directly or through a
 * tunnel).  Its length, or -1.
 */
static int
http_head(const struct opts *o, char *buf, size_t size, const char *method,
    unsigned long long body)
{
	char	 auth[400] = "", cred[300], len[64] = "";
	int	 n, absolute;

	/* Absolute URI and credentials only for a forwarding proxy. */
	absolute = o->proxy != NULL && strcmp(o->via, "http") == 0;
	if ((absolute || strcmp(method, "CONNECT") == 0) && o->auth != NULL) {
		b64(o->auth, cred, sizeof(cred));
		snprintf(auth, sizeof(auth), "Proxy-Authorization: Basic %s\r\n",
		    cred);
	}
	if (strcmp(method, "CONNECT") == 0)
		n = snprintf(buf, size, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n"
		    "%s\r\n", o->target, o->target, auth);
	else {
		if (strcmp(method, "POST") == 0)
			snprintf(len, sizeof(len), "Content-Length: %llu\r\n",
			    body);
		n = snprintf(buf, size, "%s %s%s/ HTTP/1.1\r\nHost: %s\r\n"
		    "%s%s\r\n", method, absolute ? "http://" : "",
		    absolute ? o->target : "", o->target, len, auth);
	}
	if (n < 0 || (size_t)n >= size)
		return -1;
	return n;
}

/*
 * Read a response into buf (NUL-terminated): its head and, when the head
 * has a Content-Length, that much body.  The number of bytes past the
 * head, or -1 on error.
 */
static int
http_response(int fd, char *buf, size_t size)
{
	const char	*end, *cl;
	size_t		 got = 0, head = 0, want = 0;
	ssize_t		 n;

	for (;;) {
		if (got == size - 1)
			return -1;
		n = recv(fd, buf + got, size - 1 - got, 0);
		if (n <= 0)
			return -1;
		got += (size_t)n;
		buf[got] = '\0';
		if (head == 0 && (end = strstr(buf, "\r\n\r\n")) != NULL) {
			head = (size_t)(end + 4 - buf);
			if ((cl = strcasestr(buf, "\r\nContent-Length:")) !=
			    NULL && cl < end)
				want = strtoul(cl + 17, NULL, 10);
		}
		if (head != 0 && got - head >= want)
			return (int)(got - head);
	}
}

/* Base64 of s into out (RFC 4648, with padding). */
static void
b64(const char *s, char *out, size_t size)
{
	static const char	 a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t			 n = strlen(s), i, o = 0;
	unsigned		 v;

	for (i = 0; i < n && o + 5 < size; i += 3) {
		v = (unsigned char)s[i] << 16;
		if (i + 1 < n)
			v |= (unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		out[o++] = a[v >> 18 & 63];
		out[o++] = a[v >> 12 & 63];
		out[o++] = i + 1 < n ? a[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? a[v & 63] : '=';
	}
	out[o] = '\0';
}

/* Read exactly len bytes; 0, or -1 on error or early EOF. */
static int
read_all(int fd, void *buf, size_t len)
{
	char	*p = buf;
	ssize_t	 n;

	while (len > 0) {
		n = read(fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
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
	free(c->head);
	free(c);
}

#define HEADMAX	16384

/*
 * http mode: consume len request bytes, appending the response to every
 * request they complete to out (*outlen bytes so far).  0, or -1 for a
 * request the server cannot take (a head over HEADMAX, no room left).
 */
static int
http_feed(struct sconn *c, const char *p, size_t len, char *out,
    size_t size, size_t *outlen)
{
	const char	*cl;
	size_t		 k;
	int		 n;

	if (c->head == NULL && (c->head = malloc(HEADMAX + 1)) == NULL)
		return -1;
	while (len > 0) {
		if (!c->in_body) {
			if (c->head_len == HEADMAX)
				return -1;
			c->head[c->head_len++] = *p++;
			len--;
			if (c->head_len < 4 || memcmp(c->head + c->head_len - 4,
			    "\r\n\r\n", 4) != 0)
				continue;
			c->head[c->head_len] = '\0';
			c->body_left = 0;
			if ((cl = strcasestr(c->head, "\r\nContent-Length:")) !=
			    NULL)
				c->body_left = strtoull(cl + 17, NULL, 10);
			c->close_after = strcasestr(c->head,
			    "\r\nConnection: close\r\n") != NULL;
			c->head_len = 0;
			c->bytes = 0;
			c->in_body = 1;
		} else {
			k = len < c->body_left ? len : (size_t)c->body_left;
			c->body_left -= k;
			c->bytes += k;
			p += k;
			len -= k;
		}
		if (c->in_body && c->body_left == 0) {
			char	body[64];

			snprintf(body, sizeof(body), "bytes %llu\n", c->bytes);
			n = snprintf(out + *outlen, size - *outlen,
			    "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n%s\r\n%s",
			    strlen(body), c->close_after ?
			    "Connection: close\r\n" : "", body);
			if (n < 0 || (size_t)n >= size - *outlen)
				return -1;
			*outlen += (size_t)n;
			c->in_body = 0;
		}
	}
	return 0;
}

/* The epoll echo/sink/http server; runs until killed. */
static int
cmd_serve(const struct opts *o)
{
	struct sockaddr_in	 sin;
	struct epoll_event	 ev, evs[MAXEVENTS];
	socklen_t		 slen = sizeof(sin);
	FILE			*pf;
	char			*buf;
	static char		 out[65536];
	int			 ls, ep, n, i, one = 1, echo, http;

	if (o->mode == NULL || o->port_file == NULL)
		usage();
	echo = strcmp(o->mode, "echo") == 0;
	http = strcmp(o->mode, "http") == 0;
	if (!echo && !http && strcmp(o->mode, "sink") != 0)
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
				if (c->pend_len == 0 && c->close_after) {
					sconn_close(ep, c);
					continue;
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
				if (!echo && !http) {
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
			if (http) {
				size_t	outlen = 0;

				/* Responses are small: one read's worth fits. */
				if (http_feed(c, buf, (size_t)r, out, sizeof(out),
				    &outlen) == -1) {
					sconn_close(ep, c);
					continue;
				}
				if (outlen == 0)
					continue;
				memcpy(buf, out, outlen);
				r = (ssize_t)outlen;
			} else
				c->bytes += (unsigned long long)r;
			if (!echo && !http) {
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
				} else if (http && c->close_after)
					sconn_close(ep, c);
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
	int			 fd, http;

	if (o->target == NULL || o->bytes == 0)
		usage();
	if ((buf = malloc(CHUNK)) == NULL)
		return 1;
	http = o->http || strcmp(o->via, "http") == 0;
	if (http)
		fd = http_open(o, "POST", o->bytes);
	else
		fd = tunnel_open(o);
	if (fd == -1)
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
	if (http) {
		/* The answer is the response's body; the head is dropped. */
		if ((n = http_response(fd, (char *)buf, CHUNK)) > 0) {
			got = (size_t)n < sizeof(answer) - 1 ? (size_t)n :
			    sizeof(answer) - 1;
			memcpy(answer, strstr((char *)buf, "\r\n\r\n") + 4, got);
		}
	} else {
		shutdown(fd, SHUT_WR);
		while (got < sizeof(answer) - 1 && (n = read(fd, answer + got,
		    sizeof(answer) - 1 - got)) > 0)
			got += (size_t)n;
	}
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
	char	 b[512];
	double	 t0, us;
	long	 i;
	size_t	 got;
	ssize_t	 n;
	int	 fd, http;

	if (o->target == NULL || o->count <= 0)
		usage();
	http = o->http || strcmp(o->via, "http") == 0;
	t0 = now_ms();
	for (i = 0; i < o->count; i++) {
		if (http) {
			if ((fd = http_open(o, "GET", 0)) == -1)
				return 1;
			if (http_response(fd, b, sizeof(b)) == -1 ||
			    strncmp(b, "HTTP/1.1 200", 12) != 0) {
				fprintf(stderr, "pxtool: no 200 answer\n");
				return 1;
			}
			close(fd);
			continue;
		}
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
	o.via = "connect";
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
		if (strcmp(a, "--http") == 0) {
			o.http = 1;
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
		else if (strcmp(a, "--via") == 0)
			o.via = v;
		else if (strcmp(a, "--proxy-auth") == 0)
			o.auth = v;
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
