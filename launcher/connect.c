/*
 * "pisbx-run --connect-proxy HOST PORT": an ssh ProxyCommand.  Opens an
 * HTTP CONNECT tunnel to HOST:PORT through the sandbox's proxy and relays
 * stdin/stdout through it, so `ssh` (and git over ssh, via
 * GIT_SSH_COMMAND) leaves the sandbox the one way there is, with the
 * decision in the access log.  No socat, no netcat.
 */
#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "common/sockaddr.h"
#include "launcher/launcher.h"

#define CONNECT_HEAD_MAX	8192
#define CONNECT_BUF		16384

static int	connect_dial(const char *proxy);

/* Connect to "ip:port" -- the proxy's listener in the sandbox. */
static int
connect_dial(const char *proxy)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sslen;
	int			 s;

	if (sockaddr_parse(proxy, &ss, &sslen) == -1) {
		errno = EINVAL;
		return -1;
	}
	if ((s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(s, (struct sockaddr *)&ss, sslen) == -1) {
		close(s);
		return -1;
	}
	return s;
}

int
connect_proxy_main(const char *proxy, const char *host, const char *port)
{
	char		 head[CONNECT_HEAD_MAX], buf[CONNECT_BUF];
	char		 req[1024], *end, *eol;
	struct pollfd	 pfd[2];
	size_t		 have = 0;
	ssize_t		 n;
	int		 s, in_open = 1, v6;

	if (host[0] == '\0' || strpbrk(host, " \r\n\t/@") != NULL ||
	    strspn(port, "0123456789") != strlen(port) || port[0] == '\0') {
		log_warnx("--connect-proxy: bad target %s %s", host, port);
		return 1;
	}
	if ((s = connect_dial(proxy)) == -1) {
		log_warn("--connect-proxy: connect to the proxy at %s", proxy);
		return 1;
	}
	v6 = strchr(host, ':') != NULL && host[0] != '[';
	snprintf(req, sizeof(req), "CONNECT %s%s%s:%s HTTP/1.1\r\n"
	    "Host: %s%s%s:%s\r\n\r\n", v6 ? "[" : "", host, v6 ? "]" : "",
	    port, v6 ? "[" : "", host, v6 ? "]" : "", port);
	if (io_write_all(s, req, strlen(req), 0) == -1) {
		log_warn("--connect-proxy: write");
		goto fail;
	}
	/* The response head, then whatever tunnel bytes came with it. */
	for (;;) {
		if (have == sizeof(head) - 1) {
			log_warnx("--connect-proxy: response head too long");
			goto fail;
		}
		n = read(s, head + have, sizeof(head) - 1 - have);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_warnx("--connect-proxy: the proxy closed the "
			    "connection");
			goto fail;
		}
		have += (size_t)n;
		head[have] = '\0';
		if ((end = strstr(head, "\r\n\r\n")) != NULL)
			break;
	}
	eol = strstr(head, "\r\n");
	*eol = '\0';
	if (strncmp(head, "HTTP/1.", 7) != 0 || strlen(head) < 12 ||
	    strncmp(head + 9, "200", 3) != 0) {
		log_warnx("--connect-proxy: the proxy refused %s:%s: %s", host,
		    port, head);
		goto fail;
	}
	end += 4;
	if (head + have > end && io_write_all(STDOUT_FILENO, end,
	    (size_t)(head + have - end), 0) == -1)
		goto fail;

	for (;;) {
		pfd[0].fd = in_open ? STDIN_FILENO : -1;
		pfd[0].events = POLLIN;
		pfd[1].fd = s;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (in_open &&
		    (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			n = read(STDIN_FILENO, buf, sizeof(buf));
			if (n > 0) {
				if (io_write_all(s, buf, (size_t)n, 0) == -1)
					goto fail;
			} else if (n == 0 || errno != EINTR) {
				in_open = 0;
				shutdown(s, SHUT_WR);
			}
		}
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(s, buf, sizeof(buf));
			if (n == 0)
				break;
			if (n < 0) {
				if (errno == EINTR)
					continue;
				goto fail;
			}
			if (io_write_all(STDOUT_FILENO, buf,
			    (size_t)n, 0) == -1)
				goto fail;
		}
	}
	close(s);
	return 0;
fail:
	close(s);
	return 1;
}
