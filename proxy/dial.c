/*
 * The way from an allowed connection to its target: the target's
 * addresses (a literal, or c-ares through dns.c), each checked against
 * the policy's address rules and the proxy's own listeners, then dialled
 * in turn, directly or through network.parentProxy; the connected socket
 * checked once more before the relay starts.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/sockaddr.h"
#include "policy/policy.h"
#include "proxy/proxy_int.h"

static void	 conn_literal_addr(const struct conn *,
		    struct sockaddr_storage *);
static int	 conn_addr_ok(struct conn *, const struct sockaddr *,
		    char *, size_t);
static size_t	 conn_loopback_addrs(struct conn *, char *, size_t);
static void	 conn_dns_cb(const struct sockaddr_storage *, size_t,
		    const char *, void *);
static void	 conn_dial_parent(struct conn *);
static void	 conn_connect_next(struct conn *);
static void	 conn_connect_cb(evutil_socket_t, short, void *);
static void	 conn_connect_done(struct conn *, int, int);
static int	 conn_peer_check(struct conn *, int);

/* The one address of a literal target, for dialling. */
static void
conn_literal_addr(const struct conn *c, struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin;
	struct sockaddr_in6 *sin6;

	memset(ss, 0, sizeof(*ss));
	if (c->host.kind == HOST_IPV4) {
		sin = (struct sockaddr_in *)ss;
		sin->sin_family = AF_INET;
		sin->sin_addr = c->host.v4;
		sin->sin_port = htons(c->port);
	} else {
		sin6 = (struct sockaddr_in6 *)ss;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = c->host.v6;
		sin6->sin6_port = htons(c->port);
	}
}

/* conn_addr_ok for a literal target's one address. */
int
conn_literal_ok(struct conn *c, char *why, size_t whylen)
{
	struct sockaddr_storage ss;

	conn_literal_addr(c, &ss);
	return conn_addr_ok(c, (struct sockaddr *)&ss, why, whylen);
}

/*
 * Whether one address may be dialled: never the proxy's own listeners;
 * a non-public address only when an exact allow entry names the host.
 */
static int
conn_addr_ok(struct conn *c, const struct sockaddr *sa, char *why,
    size_t whylen)
{
	const char *cls;
	char a[64];

	/* The address is written out only for a refusal: it costs. */
	if (proxy_own_addr(c->px, sa)) {
		sockaddr_format(sa, a, sizeof(a));
		snprintf(why, whylen, "%s is the proxy's own listener", a);
		return 0;
	}
	if ((cls = addr_class(sa)) != NULL &&
	    !policy_exact_allowed(conn_config(c)->policy, &c->host, c->port)) {
		sockaddr_format(sa, a, sizeof(a));
		snprintf(why, whylen, "%s is %s (non-public; only an exact "
		    "allowedDomains entry permits it)", a, cls);
		return 0;
	}
	return 1;
}

/*
 * An allowed target: its addresses, a literal one checked at once or a
 * name resolved (or left to network.parentProxy), then dialled.
 */
void
conn_resolve(struct conn *c)
{
	char why[256];
	int via;

	c->state = CONN_RESOLVE;
	if ((via = parent_conn_select(c)) == -1) {
		conn_deny(c, "connect-error", "out of memory", CERR_FAILURE);
		return;
	}
	/*
	 * A forwarded request sent to the upstream proxy as a proxy request:
	 * its answer decides.  In a tunnel, the answer to CONNECT does.
	 */
	c->decision_wait = via && parent_conn_absolute(c);

	/* HTTP keep-alive: the same checked target on a live upstream. */
	if (c->upstream != NULL && c->proto == PROTO_HTTP) {
		snprintf(c->addr, sizeof(c->addr), "%s", http_reuse_addr(c));
		conn_connected(c);
		return;
	}
	c->naddrs = 0;
	c->addr_i = 0;
	c->connect_errno = 0;
	c->connect_timedout = 0;
	if (host_is_loopback_name(&c->host)) {
		if (conn_loopback_addrs(c, why, sizeof(why)) == 0) {
			conn_deny(c, "non-public-address", why, CERR_DENY);
			return;
		}
		conn_connect_next(c);
		return;
	}
	/*
	 * An address target is checked whatever the route: the upstream
	 * proxy would reach a non-public address as readily as we would.
	 */
	if (via && c->host.kind != HOST_NAME && !conn_literal_ok(c, why,
	    sizeof(why))) {
		conn_deny(c, "non-public-address", why, CERR_DENY);
		return;
	}
	if (via) {
		conn_dial_parent(c);
		return;
	}
	if (c->host.kind == HOST_NAME) {
		/* Names go to c-ares; literals never do (it mishandles them). */
		c->dnsq = dns_lookup(c->px->dns, c->host.text, c->port,
		    conn_dns_cb, c);
		if (c->dnsq == NULL) {
			conn_deny(c, "dns-error", "out of memory", CERR_DNS);
			return;
		}
		return;
	}
	conn_literal_addr(c, &c->addrs[0]);
	if (!conn_addr_ok(c, (struct sockaddr *)&c->addrs[0], why,
	    sizeof(why))) {
		conn_deny(c, "non-public-address", why, CERR_DENY);
		return;
	}
	c->naddrs = 1;
	conn_connect_next(c);
}

/*
 * HOST_LOOPBACK_NAME is never looked up: it is the proxy's own loopback,
 * 127.0.0.1 then [::1].  policy_eval let it through only with its exact
 * entry, which is also what conn_addr_ok asks; the proxy's own listeners
 * stay refused there.  Returns how many addresses are left to dial.
 */
static size_t
conn_loopback_addrs(struct conn *c, char *why, size_t whylen)
{
	struct sockaddr_in	*sin;
	struct sockaddr_in6	*sin6;

	memset(&c->addrs[0], 0, sizeof(c->addrs[0]) * 2);
	sin = (struct sockaddr_in *)&c->addrs[0];
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin->sin_port = htons(c->port);
	sin6 = (struct sockaddr_in6 *)&c->addrs[1];
	sin6->sin6_family = AF_INET6;
	sin6->sin6_addr = in6addr_loopback;
	sin6->sin6_port = htons(c->port);
	c->naddrs = 0;
	if (conn_addr_ok(c, (struct sockaddr *)&c->addrs[0], why, whylen))
		c->naddrs++;
	if (conn_addr_ok(c, (struct sockaddr *)&c->addrs[1], why, whylen))
		c->addrs[c->naddrs++] = c->addrs[1];
	return c->naddrs;
}

/* DNS answered: keep the addresses that may be dialled (or the parent's). */
static void
conn_dns_cb(const struct sockaddr_storage *addrs, size_t n, const char *err,
    void *arg)
{
	struct conn *c = arg;
	char why[256] = "", detail[300];
	size_t i;

	c->dnsq = NULL;
	if (c->parent_dial) {
		parent_conn_addrs(c, addrs, n, err);
		return;
	}
	if (n == 0) {
		snprintf(detail, sizeof(detail), "%s: %s", c->host.text,
		    err != NULL ? err : "no addresses");
		conn_deny(c, "dns-error", detail, CERR_DNS);
		return;
	}
	c->naddrs = 0;
	for (i = 0; i < n && c->naddrs < CONN_MAX_ADDRS; i++) {
		if (!conn_addr_ok(c, (const struct sockaddr *)&addrs[i], why,
		    sizeof(why)))
			continue;
		c->addrs[c->naddrs++] = addrs[i];
	}
	if (c->naddrs == 0) {
		snprintf(detail, sizeof(detail), "%s resolves only to "
		    "refused addresses: %s", c->host.text, why);
		conn_deny(c, "non-public-address", detail, CERR_DENY);
		return;
	}
	conn_connect_next(c);
}

/*
 * The target goes through the upstream proxy: pisbx resolves the proxy's
 * name, never the target's (the gateway does; behind one, this machine
 * often cannot).
 */
static void
conn_dial_parent(struct conn *c)
{
	c->parent_dial = 1;
	if (parent_conn_name(c) == NULL) {
		parent_conn_addrs(c, NULL, 0, NULL);
		return;
	}
	c->dnsq = dns_lookup(c->px->dns, parent_conn_name(c),
	    parent_conn_port(c), conn_dns_cb, c);
	if (c->dnsq == NULL)
		conn_deny(c, "parent-error", "out of memory", CERR_FAILURE);
}

void
conn_dial(struct conn *c)
{
	conn_connect_next(c);
}

/* Dial the next checked address; never re-resolve. */
static void
conn_connect_next(struct conn *c)
{
	const struct config *conf = conn_config(c);
	struct sockaddr *sa;
	struct timeval tv;
	socklen_t len;
	int fd, one = 1, ms;
	enum conn_err err;
	char detail[128];

	c->state = CONN_CONNECT;
	ms = conf->connect_timeout_ms;
	while (c->addr_i < c->naddrs) {
		sa = (struct sockaddr *)&c->addrs[c->addr_i++];
		len = sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
		    sizeof(struct sockaddr_in6);
		sockaddr_format(sa, c->addr, sizeof(c->addr));
		fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0);
		if (fd == -1 && (errno == EMFILE || errno == ENFILE)) {
			/* Our shortage, not the destination's: "not now". */
			conn_deny(c, "out-of-descriptors", "the proxy is out "
			    "of file descriptors (RLIMIT_NOFILE); try again "
			    "later", CERR_BUSY);
			return;
		}
		if (fd == -1) {
			c->connect_errno = errno;
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		event_base_gettimeofday_cached(c->px->base, &c->connect_start);
		if (connect(fd, sa, len) == -1 && errno != EINPROGRESS) {
			c->connect_errno = errno;
			c->connect_timedout = 0;
			close(fd);
			continue;
		}
		c->connect_fd = fd;
		/*
		 * On loopback and fast links the handshake is often done by
		 * now: finish without another event-loop turn.
		 */
		{
			struct pollfd pfd = { fd, POLLOUT, 0 };

			if (poll(&pfd, 1, 0) == 1) {
				/*
				 * Writable and no error or hang-up: connected,
				 * and SO_ERROR has nothing to say.
				 */
				if (pfd.revents == POLLOUT)
					conn_connect_done(c, fd, 0);
				else
					conn_connect_cb(fd, EV_WRITE, c);
				return;
			}
		}
		c->connect_ev = event_new(c->px->base, fd, EV_WRITE,
		    conn_connect_cb, c);
		tv.tv_sec = ms / 1000;
		tv.tv_usec = (ms % 1000) * 1000;
		if (c->connect_ev == NULL ||
		    event_add(c->connect_ev, &tv) == -1) {
			conn_deny(c, "connect-error", "out of memory",
			    CERR_FAILURE);
			return;
		}
		return;
	}
	if (c->connect_timedout) {
		err = CERR_TIMEOUT;
		snprintf(detail, sizeof(detail), "connect to %s timed out",
		    c->addr);
	} else {
		switch (c->connect_errno) {
		case ECONNREFUSED:
			err = CERR_REFUSED;
			break;
		case ENETUNREACH:
			err = CERR_NET_UNREACH;
			break;
		case EHOSTUNREACH:
			err = CERR_HOST_UNREACH;
			break;
		default:
			err = CERR_FAILURE;
			break;
		}
		snprintf(detail, sizeof(detail), "connect to %s: %s", c->addr,
		    strerror(c->connect_errno));
	}
	if (c->parent_dial) {
		parent_conn_unreachable(c, detail, err == CERR_TIMEOUT);
		return;
	}
	conn_deny(c, "connect-error", detail, err);
}

/* A non-blocking connect finished, or timed out. */
static void
conn_connect_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	socklen_t len = sizeof(int);
	int soerr = 0;

	if (c->connect_ev != NULL)
		event_free(c->connect_ev);
	c->connect_ev = NULL;
	if (what & EV_TIMEOUT) {
		c->connect_timedout = 1;
		c->connect_errno = ETIMEDOUT;
		close(fd);
		c->connect_fd = -1;
		conn_connect_next(c);
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == -1)
		soerr = errno;
	conn_connect_done(c, fd, soerr);
}

/* The handshake on fd is over: soerr 0 (connected) or why it failed. */
static void
conn_connect_done(struct conn *c, int fd, int soerr)
{
	if (soerr != 0) {
		c->connect_timedout = 0;
		c->connect_errno = soerr;
		close(fd);
		c->connect_fd = -1;
		conn_connect_next(c);
		return;
	}
	if (conn_peer_check(c, fd) == -1)
		return;
	c->connect_fd = -1;
	c->upstream = bufferevent_socket_new(c->px->base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	if (c->upstream == NULL) {
		close(fd);
		conn_deny(c, "connect-error", "out of memory", CERR_FAILURE);
		return;
	}
	relay_tune(c->upstream);
	/* A tunnel through the upstream proxy: its CONNECT comes first. */
	if (c->parent_dial && !parent_conn_absolute(c)) {
		parent_conn_handshake(c);
		return;
	}
	conn_connected(c);
}

/*
 * The connect completed: check where it went, not only what was dialled.
 * The peer the kernel connected us to must not be one of the proxy's own
 * listeners, however the address was spelt (conn_addr_ok checked the
 * spelling before).  Returns 0, or -1 when fd was closed and the
 * connection moved on (the next address, or a deny).
 */
static int
conn_peer_check(struct conn *c, int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char peer[SOCKADDR_TEXT_MAX], detail[SOCKADDR_TEXT_MAX * 2 + 64];

	if (getpeername(fd, (struct sockaddr *)&ss, &len) == -1) {
		/* Reset already: as if the connect had failed. */
		c->connect_timedout = 0;
		c->connect_errno = errno;
		close(fd);
		c->connect_fd = -1;
		conn_connect_next(c);
		return -1;
	}
	if (!proxy_own_addr(c->px, (struct sockaddr *)&ss))
		return 0;
	close(fd);
	c->connect_fd = -1;
	sockaddr_format((struct sockaddr *)&ss, peer, sizeof(peer));
	snprintf(detail, sizeof(detail), "%s (dialled as %s) is the proxy's "
	    "own listener", peer, c->addr);
	conn_deny(c, "non-public-address", detail, CERR_DENY);
	return -1;
}

/*
 * Dial the checked addresses of the current target again (an HTTP
 * request retried after its kept-alive upstream closed); the decision
 * stands and is not logged twice.
 */
void
conn_redial(struct conn *c)
{
	c->addr_i = 0;
	c->connect_errno = 0;
	c->connect_timedout = 0;
	c->redial = 1;
	c->parent_dial = parent_conn_via(c) != NULL;
	conn_connect_next(c);
}

void
conn_connected(struct conn *c)
{
	c->parent_dial = 0;
	if (!c->redial && !c->decision_wait)
		conn_log_decision(c);
	c->redial = 0;
	c->state = CONN_RELAY;
	conn_touch(c);
	switch (c->proto) {
	case PROTO_SOCKS5:
		socks5_connected(c);
		break;
	case PROTO_CONNECT:
	case PROTO_HTTP:
		http_connected(c);
		break;
	case PROTO_NONE:
		conn_close(c, "failed");
		break;
	}
}
