/*
 * Listeners: TCP ("ip:port", "[v6]:port") and Unix-socket listeners, or
 * a socket handed over by the launcher; accepting (with a pause when out
 * of descriptors, and proxy.maxConnections); and the proxy's own
 * addresses, which no connection may dial.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>

#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "common/log.h"
#include "common/sockaddr.h"
#include "policy/policy.h"
#include "proxy/proxy_int.h"

#define ACCEPT_RETRY_MS		200

static int	 listener_add(struct proxy *, int, const char *);
static void	 listener_accept_cb(struct evconnlistener *, evutil_socket_t,
		    struct sockaddr *, int, void *);
static void	 listener_error_cb(struct evconnlistener *, void *);
static void	 listener_retry_cb(evutil_socket_t, short, void *);
static int	 addr_is_local(const struct sockaddr *);

int
proxy_listen(struct proxy *px, const char *addr, char *bound,
    size_t boundlen)
{
	struct sockaddr_storage ss;
	struct sockaddr_un sun;
	socklen_t sslen;
	int fd = -1, one = 1;
	const char *created = NULL;

	if (addr[0] == '/') {
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		if (strlen(addr) >= sizeof(sun.sun_path)) {
			log_warnx("listen %s: path too long", addr);
			return -1;
		}
		strcpy(sun.sun_path, addr);
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) ==
		    -1)
			goto fail_errno;
		/* A stale socket file from an earlier run: replace it. */
		{
			struct stat st;

			if (lstat(addr, &st) == 0 && S_ISSOCK(st.st_mode))
				unlink(addr);
		}
		if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
			goto fail_errno;
		created = addr;
	} else {
		if (sockaddr_parse(addr, &ss, &sslen) == -1) {
			log_warnx("listen %s: not an address: write "
			    "127.0.0.1:PORT, [::1]:PORT or /path/to.sock",
			    addr);
			return -1;
		}
		if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC,
		    0)) == -1)
			goto fail_errno;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ss.ss_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
			    sizeof(one));
		if (bind(fd, (struct sockaddr *)&ss, sslen) == -1)
			goto fail_errno;
	}
	if (listen(fd, 511) == -1)
		goto fail_errno;
	if (listener_add(px, fd, created) == -1) {
		fd = -1;	/* closed by listener_add */
		return -1;
	}
	if (bound != NULL)
		snprintf(bound, boundlen, "%s",
		    TAILQ_LAST(&px->listeners, listener_head)->name);
	return 0;
fail_errno:
	log_warn("listen %s", addr);
	if (fd != -1)
		close(fd);
	return -1;
}

int
proxy_listen_fd(struct proxy *px, int fd)
{
	return listener_add(px, fd, NULL);
}

/* Serve a listening socket; on failure the fd is closed. */
static int
listener_add(struct proxy *px, int fd, const char *created)
{
	struct listener *l;

	if ((l = calloc(1, sizeof(*l))) == NULL) {
		close(fd);
		return -1;
	}
	l->px = px;
	l->sslen = sizeof(l->ss);
	if (getsockname(fd, (struct sockaddr *)&l->ss, &l->sslen) == -1) {
		log_warn("listener getsockname");
		goto fail;
	}
	sockaddr_format((struct sockaddr *)&l->ss, l->name, sizeof(l->name));
	{
		int acc = 0;
		socklen_t alen = sizeof(acc);

		/* A handed-over socket that is bound but not listening yet. */
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &alen) ==
		    0 && !acc && listen(fd, 511) == -1) {
			log_warn("listen on %s", l->name);
			goto fail;
		}
	}
	if (created != NULL && (l->unlink_path = strdup(created)) == NULL)
		goto fail;
	evutil_make_socket_nonblocking(fd);
	evutil_make_socket_closeonexec(fd);
	l->lev = evconnlistener_new(px->base, listener_accept_cb, l,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (l->lev == NULL) {
		log_warnx("cannot serve listener %s", l->name);
		goto fail;
	}
	evconnlistener_set_error_cb(l->lev, listener_error_cb);
	if ((l->retry = evtimer_new(px->base, listener_retry_cb, l)) == NULL) {
		evconnlistener_free(l->lev);
		free(l->unlink_path);
		free(l);
		return -1;
	}
	TAILQ_INSERT_TAIL(&px->listeners, l, entry);
	log_debug("serving %s", l->name);
	return 0;
fail:
	close(fd);
	free(l->unlink_path);
	free(l);
	return -1;
}

void
listener_free(struct listener *l)
{
	if (l->lev != NULL)
		evconnlistener_free(l->lev);
	if (l->retry != NULL)
		event_free(l->retry);
	if (l->unlink_path != NULL) {
		unlink(l->unlink_path);
		free(l->unlink_path);
	}
	free(l);
}

/*
 * Out of descriptors (EMFILE/ENFILE) or similar: stop accepting for a
 * moment instead of spinning on a listener that stays readable.
 */
static void
listener_error_cb(struct evconnlistener *lev, void *arg)
{
	struct listener *l = arg;
	struct timeval tv = { 0, ACCEPT_RETRY_MS * 1000 };
	int e = EVUTIL_SOCKET_ERROR();

	log_warnx("accept on %s: %s; pausing the listener for %d ms",
	    l->name, strerror(e), ACCEPT_RETRY_MS);
	evconnlistener_disable(lev);
	evtimer_add(l->retry, &tv);
}

static void
listener_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct listener *l = arg;

	(void)fd;
	(void)what;
	if (!l->px->stopping)
		evconnlistener_enable(l->lev);
}

static void
listener_accept_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct listener *l = arg;
	struct proxy *px = l->px;
	const struct config *conf = px->gen->conf;
	char peer[128];

	(void)lev;
	if (px->stopping) {
		close(fd);
		return;
	}
	if (conf->max_connections > 0 &&
	    px->nconns >= (size_t)conf->max_connections) {
		sockaddr_format(sa, peer, sizeof(peer));
		log_warnx("refusing %s on %s: proxy.maxConnections (%d) "
		    "reached", peer, l->name, conf->max_connections);
		close(fd);
		return;
	}
	conn_new(l, fd, sa, (socklen_t)salen);
}

/* Whether sa is a local address of this host (for wildcard listeners). */
static int
addr_is_local(const struct sockaddr *sa)
{
	struct ifaddrs *ifa, *i;
	int local = 0;

	if (sa->sa_family == AF_INET &&
	    (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) ==
	    127)
		return 1;
	if (sa->sa_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(
	    &((const struct sockaddr_in6 *)sa)->sin6_addr))
		return 1;
	if (getifaddrs(&ifa) == -1)
		return 1;	/* cannot tell: fail closed */
	for (i = ifa; i != NULL && !local; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family !=
		    sa->sa_family)
			continue;
		if (sa->sa_family == AF_INET)
			local = ((struct sockaddr_in *)i->ifa_addr)->
			    sin_addr.s_addr == ((const struct sockaddr_in *)
			    sa)->sin_addr.s_addr;
		else
			local = memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->
			    sin6_addr, &((const struct sockaddr_in6 *)sa)->
			    sin6_addr, sizeof(struct in6_addr)) == 0;
	}
	freeifaddrs(ifa);
	return local;
}

/*
 * The proxy's own listening addresses are always refused: a loop through
 * the proxy would bypass nothing but costs two connections per round.
 */
int
proxy_own_addr(struct proxy *px, const struct sockaddr *sa)
{
	struct listener *l;
	uint16_t port;

	port = sa->sa_family == AF_INET ?
	    ((const struct sockaddr_in *)sa)->sin_port :
	    ((const struct sockaddr_in6 *)sa)->sin6_port;
	TAILQ_FOREACH(l, &px->listeners, entry) {
		if (l->ss.ss_family == AF_INET) {
			struct sockaddr_in *ls = (struct sockaddr_in *)&l->ss;

			if (ls->sin_port != port)
				continue;
			if (ls->sin_addr.s_addr == htonl(INADDR_ANY)) {
				if (addr_is_local(sa))
					return 1;
			} else if (sa->sa_family == AF_INET &&
			    ((const struct sockaddr_in *)sa)->sin_addr.s_addr
			    == ls->sin_addr.s_addr)
				return 1;
		} else if (l->ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *ls = (struct sockaddr_in6 *)&l->ss;

			if (ls->sin6_port != port)
				continue;
			if (IN6_IS_ADDR_UNSPECIFIED(&ls->sin6_addr)) {
				if (addr_is_local(sa))
					return 1;
			} else if (sa->sa_family == AF_INET6 &&
			    memcmp(&((const struct sockaddr_in6 *)sa)->
			    sin6_addr, &ls->sin6_addr,
			    sizeof(struct in6_addr)) == 0)
				return 1;
		}
	}
	return 0;
}
