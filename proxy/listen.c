/*
 * Listeners: TCP ("ip:port", "[v6]:port") and Unix-socket listeners, or
 * a socket handed over by the launcher; accepting (with a pause when out
 * of descriptors, and proxy.maxConnections); and the proxy's own
 * addresses, which no connection may dial by any spelling.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "common/log.h"
#include "common/sockaddr.h"
#include "policy/policy.h"
#include "proxy/proxy_int.h"

#define ACCEPT_RETRY_MS		200
/* Clients answered 503 at once per accept error, out of descriptors. */
#define ACCEPT_NOFD_MAX		64
/* Descriptors besides the connections': listeners, DNS, log, stdio. */
#define NOFILE_RESERVE		32
/* Descriptor numbers given their libevent record at start, at most. */
#define NOFILE_PREMAP_MAX	65536
/* maxClientConnections when the config does not set it (or maxConnections). */
#define CLIENT_LIMIT_DEFAULT	256

static int	 listener_add(struct proxy *, int, const char *);
static void	 listener_accept_cb(struct evconnlistener *, evutil_socket_t,
		    struct sockaddr *, int, void *);
static void	 listener_error_cb(struct evconnlistener *, void *);
static void	 listener_retry_cb(evutil_socket_t, short, void *);
static int	 listener_refuse_nofd(struct listener *);
static void	 listener_answer_nofd(int);
static void	 listener_report_cb(evutil_socket_t, short, void *);
static void	 listener_noop_cb(evutil_socket_t, short, void *);
static void	 listener_premap(struct proxy *, unsigned long long);
static unsigned	 client_key(int, const struct sockaddr *,
		    struct client_slot *);
static struct client_slot *client_slot_get(struct proxy *, int,
		    const struct sockaddr *);
static void	 client_slot_text(const struct client_slot *, char *,
		    size_t);
struct own_addr;
static void	 own_addr_of(const struct sockaddr *, struct own_addr *);
static int	 own_addr_unspecified(const struct own_addr *);
static int	 own_addr_equal(const struct own_addr *, const struct own_addr *);
static int	 addr_is_local(const struct own_addr *);
static int	 listener_reached(const struct listener *,
		    const struct own_addr *);

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
	if (l->ss.ss_family == AF_INET6) {
		int v6only = 0;
		socklen_t vlen = sizeof(v6only);

		/* Unknown: dual-stack, so IPv4 counts too (fail closed). */
		if (getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only,
		    &vlen) == 0)
			l->v6only = v6only;
	}
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
 * Out of descriptors (EMFILE/ENFILE): the clients waiting to be accepted
 * are told 503 at once with the spare descriptor (listener_refuse_nofd)
 * rather than left in the accept queue with no answer.  Without a spare
 * (or on another error), stop accepting for a moment instead of
 * spinning on a listener that stays readable.
 */
static void
listener_error_cb(struct evconnlistener *lev, void *arg)
{
	struct listener *l = arg;
	struct timeval tv = { 0, ACCEPT_RETRY_MS * 1000 };
	int e = EVUTIL_SOCKET_ERROR();

	if ((e == EMFILE || e == ENFILE) && l->px->spare_fd != -1 &&
	    listener_refuse_nofd(l) == 0)
		return;
	log_warnx("accept on %s: %s; pausing the listener for %d ms",
	    l->name, strerror(e), ACCEPT_RETRY_MS);
	evconnlistener_disable(lev);
	evtimer_add(l->retry, &tv);
}

void
listener_spare(struct proxy *px)
{
	if (px->spare_fd == -1)
		px->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/*
 * The classic reserve: give up the spare descriptor, accept the next
 * waiting client with it, answer 503 and close, take the spare again;
 * for each client waiting (at most ACCEPT_NOFD_MAX at a time).  0 when
 * the queue was emptied with the spare kept, -1 when the spare could
 * not be taken again (the listener must pause).
 */
static int
listener_refuse_nofd(struct listener *l)
{
	struct proxy *px = l->px;
	int lfd = evconnlistener_get_fd(l->lev), fd, i;

	for (i = 0; i < ACCEPT_NOFD_MAX; i++) {
		close(px->spare_fd);
		px->spare_fd = -1;
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd != -1) {
			listener_answer_nofd(fd);
			close(fd);
			px->nofd++;
			px->nofd_total++;
		}
		listener_spare(px);
		if (px->spare_fd == -1)
			break;
		if (fd == -1)
			break;		/* none left waiting */
	}
	if (px->nofd > 0)
		listener_report(px);
	return px->spare_fd != -1 ? 0 : -1;
}

/*
 * Tell one client "not now" in its protocol, from what it sent so far
 * (read, so that closing does not turn the answer into a reset): an
 * HTTP 503, or for SOCKS5 "no authentication" then "general failure"
 * (0x01), which a client that sent only its greeting reads after it
 * sends its request.
 */
static void
listener_answer_nofd(int fd)
{
	static const char http[] = "HTTP/1.1 503 Service Unavailable\r\n"
	    "Content-Type: text/plain\r\nContent-Length: 64\r\n"
	    "Connection: close\r\nX-Pisbx-Reason: out-of-descriptors\r\n"
	    "\r\n"
	    "pisbx-proxy: out of file descriptors (RLIMIT_NOFILE); try again\n";
	static const unsigned char socks[] = { 0x05, 0x00, 0x05, 0x01, 0x00,
	    0x01, 0, 0, 0, 0, 0, 0 };
	char buf[4096];
	ssize_t n;

	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n > 0 && buf[0] == 0x05)
		(void)send(fd, socks, sizeof(socks), MSG_NOSIGNAL |
		    MSG_DONTWAIT);
	else
		(void)send(fd, http, sizeof(http) - 1, MSG_NOSIGNAL |
		    MSG_DONTWAIT);
	shutdown(fd, SHUT_WR);
}

void
listener_report(struct proxy *px)
{
	struct timeval tv = { 1, 0 };

	if (px->report_ev == NULL &&
	    (px->report_ev = evtimer_new(px->base, listener_report_cb,
	    px)) == NULL)
		return;
	/* Within the second after a report: counted, said at its end. */
	if (evtimer_pending(px->report_ev, NULL))
		return;
	if (px->dropped == 0 && px->nofd == 0)
		return;
	if (px->dropped > 0)
		log_warnx("%s: %llu connection(s) closed without an answer "
		    "(%d already waiting for theirs)", px->dropped_why != NULL ?
		    px->dropped_why : "over a limit", px->dropped,
		    CONN_REFUSING_MAX);
	if (px->nofd > 0)
		log_warnx("out of file descriptors: %llu client(s) answered "
		    "503 at once (raise the open-file limit or lower "
		    "proxy.maxConnections)", px->nofd);
	px->dropped = px->nofd = 0;
	evtimer_add(px->report_ev, &tv);
}

/* A second after a report: say what came since, if anything did. */
static void
listener_report_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	listener_report(arg);
}

void
listener_report_total(struct proxy *px)
{
	if (px->dropped_total > 0)
		log_warnx("%llu connection(s) closed without an answer in all "
		    "(over a connection limit)", px->dropped_total);
	if (px->nofd_total > 0)
		log_warnx("%llu client(s) answered 503 in all for lack of file "
		    "descriptors", px->nofd_total);
	px->dropped_total = px->nofd_total = 0;
}

void
proxy_nofile_prepare(struct proxy *px)
{
	const struct config *conf = px->gen->conf;
	struct rlimit rl;
	unsigned long long need;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	need = (unsigned long long)conf->max_connections * 2 +
	    CONN_REFUSING_MAX + NOFILE_RESERVE;
	if (rl.rlim_cur != RLIM_INFINITY && need > rl.rlim_cur)
		log_warnx("proxy.maxConnections (%d) needs about %llu file "
		    "descriptors (2 per connection, %d for refusals, %d "
		    "more), but the open-file limit is %llu: past it clients "
		    "are answered 503; raise the limit (ulimit -n, "
		    "LimitNOFILE=) or lower proxy.maxConnections",
		    conf->max_connections, need, CONN_REFUSING_MAX,
		    NOFILE_RESERVE, (unsigned long long)rl.rlim_cur);
	listener_spare(px);
	listener_premap(px, need < rl.rlim_cur ? need : rl.rlim_cur);
}

/* Never called: the events of listener_premap are never dispatched. */
static void
listener_noop_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

/*
 * libevent keeps a small per-descriptor record (its evmap) from the first
 * time a descriptor number is watched until the event loop is freed.
 * Made during a burst, those records end up between the connections'
 * allocations and keep the heap from shrinking once the connections are
 * gone (malloc_trim can only give back whole free pages): 1,000 tunnels
 * left 5.9 MB of a heap that held 0.2 MB.  Made here, before any
 * connection, for every descriptor number the connections can use, they
 * sit below them.  With epoll's changelist an add undone in the same
 * loop turn never reaches the kernel.
 */
static void
listener_premap(struct proxy *px, unsigned long long n)
{
	struct event *ev;
	unsigned long long fd;

	if (n > NOFILE_PREMAP_MAX)
		n = NOFILE_PREMAP_MAX;
	if ((ev = event_new(px->base, -1, EV_READ, listener_noop_cb,
	    NULL)) == NULL)
		return;
	for (fd = 0; fd < n; fd++) {
		event_free(ev);
		if ((ev = event_new(px->base, (evutil_socket_t)fd, EV_READ,
		    listener_noop_cb, NULL)) == NULL)
			return;
		if (event_add(ev, NULL) == 0)
			event_del(ev);
	}
	event_free(ev);
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

/*
 * Accept a client, or -- over a limit -- accept it only to answer "not
 * now" (503, SOCKS5 0x01) once its request is read, with a record that
 * names the limit.  A client address holds at most maxClientConnections
 * of the maxConnections served, so one slow client cannot take them all.
 * Connections held to be refused are capped too (CONN_REFUSING_MAX, each
 * for at most CONN_REFUSE_TIMEOUT_MS); past that a client is closed at
 * once, counted in a warning at most once a second.
 */
static void
listener_accept_cb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct listener *l = arg;
	struct proxy *px = l->px;
	const struct config *conf = px->gen->conf;
	struct client_slot *slot;
	char detail[160], who[SOCKADDR_TEXT_MAX + 16];
	const char *refuse = NULL;
	int per_client;

	(void)lev;
	if (px->stopping) {
		close(fd);
		return;
	}
	/* The spare went to a client at EMFILE: take it back first. */
	if (px->spare_fd == -1)
		listener_spare(px);
	if ((slot = client_slot_get(px, fd, sa)) == NULL) {
		log_warnx("accept on %s: out of memory", l->name);
		close(fd);
		return;
	}
	per_client = proxy_client_limit(conf);
	if (px->nconns - px->nrefusing >= (size_t)conf->max_connections &&
	    !conn_shed_oldest(px)) {
		refuse = "max-connections";
		snprintf(detail, sizeof(detail), "proxy.maxConnections (%d) "
		    "reached; try again later", conf->max_connections);
	} else if (slot->n > per_client) {	/* counting this one */
		refuse = "max-client-connections";
		client_slot_text(slot, who, sizeof(who));
		snprintf(detail, sizeof(detail), "proxy.maxClientConnections "
		    "(%d) reached for %s; try again later", per_client, who);
	}
	if (refuse != NULL && px->nrefusing >= CONN_REFUSING_MAX) {
		/*
		 * Too many to even answer: close, counted; said at once,
		 * then once a second while it goes on, so that the end of
		 * a burst is said too.
		 */
		client_slot_put(px, slot);
		close(fd);
		px->dropped++;
		px->dropped_total++;
		px->dropped_why = refuse;
		listener_report(px);
		return;
	}
	if (refuse != NULL) {
		client_slot_put(px, slot);
		slot = NULL;
	}
	conn_new(l, fd, sa, (socklen_t)salen, slot, refuse,
	    refuse != NULL ? detail : NULL);
}

int
proxy_client_limit(const struct config *conf)
{
	if (conf->max_client_connections > 0)
		return conf->max_client_connections;
	return conf->max_connections < CLIENT_LIMIT_DEFAULT ?
	    conf->max_connections : CLIENT_LIMIT_DEFAULT;
}

/*
 * Who a client is, for maxClientConnections: its IPv4 address; for IPv6
 * its /64 (one host is usually given a whole /64, so counting addresses
 * would let it take every slot), ::1 and IPv4-mapped addresses as
 * themselves; for a Unix-socket peer its user id.  Returns the bucket.
 */
static unsigned
client_key(int fd, const struct sockaddr *sa, struct client_slot *k)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	uint32_t h = 2166136261u;
	size_t i;

	memset(k->key, 0, sizeof(k->key));
	k->family = sa->sa_family;
	switch (sa->sa_family) {
	case AF_INET:
		memcpy(k->key, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		break;
	case AF_INET6:
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			k->family = AF_INET;
			memcpy(k->key, &sin6->sin6_addr.s6_addr[12], 4);
		} else if (IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr))
			memcpy(k->key, &sin6->sin6_addr, 16);
		else
			memcpy(k->key, &sin6->sin6_addr, 8);
		break;
	default:
		k->family = AF_UNIX;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0)
			memcpy(k->key, &cred.uid, sizeof(cred.uid));
		else
			memset(k->key, 0xff, 4);
		break;
	}
	h = (h ^ (uint32_t)k->family) * 16777619u;
	for (i = 0; i < sizeof(k->key); i++)
		h = (h ^ k->key[i]) * 16777619u;
	return h % CLIENT_BUCKETS;
}

/* The client's slot, made when new; its count is taken.  NULL: no memory. */
static struct client_slot *
client_slot_get(struct proxy *px, int fd, const struct sockaddr *sa)
{
	struct client_slot k, *cs;
	unsigned b;

	if (px->one_client) {
		/* The run is the one client, whatever its source address. */
		memset(&k, 0, sizeof(k));
		k.family = AF_UNSPEC;
		b = 0;
	} else
		b = client_key(fd, sa, &k);
	LIST_FOREACH(cs, &px->clients[b], entry)
		if (cs->family == k.family &&
		    memcmp(cs->key, k.key, sizeof(k.key)) == 0)
			break;
	if (cs == NULL) {
		if ((cs = calloc(1, sizeof(*cs))) == NULL)
			return NULL;
		cs->family = k.family;
		memcpy(cs->key, k.key, sizeof(k.key));
		LIST_INSERT_HEAD(&px->clients[b], cs, entry);
	}
	cs->n++;
	return cs;
}

void
client_slot_put(struct proxy *px, struct client_slot *cs)
{
	(void)px;
	if (cs == NULL || --cs->n > 0)
		return;
	LIST_REMOVE(cs, entry);
	free(cs);
}

/* The client as the refusal names it: "192.0.2.7", "2001:db8::/64". */
static void
client_slot_text(const struct client_slot *cs, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	uint32_t uid;

	switch (cs->family) {
	case AF_INET:
		inet_ntop(AF_INET, cs->key, a, sizeof(a));
		snprintf(buf, len, "%s", a);
		break;
	case AF_INET6:
		inet_ntop(AF_INET6, cs->key, a, sizeof(a));
		snprintf(buf, len, "%s%s", a, IN6_IS_ADDR_LOOPBACK(
		    (const struct in6_addr *)cs->key) ? "" : "/64");
		break;
	case AF_UNSPEC:
		snprintf(buf, len, "this run");
		break;
	default:
		memcpy(&uid, cs->key, sizeof(uid));
		snprintf(buf, len, "uid %ld", uid == UINT32_MAX ? -1L :
		    (long)uid);
		break;
	}
}

/*
 * An IP address with IPv4-mapped IPv6 (::ffff:a.b.c.d) unwrapped: a
 * socket of either family reaches an IPv4 listener by it.
 */
struct own_addr {
	int		 family;	/* AF_INET, AF_INET6, or 0: not IP */
	struct in_addr	 v4;
	struct in6_addr	 v6;
	uint16_t	 port;		/* network order */
};

static void
own_addr_of(const struct sockaddr *sa, struct own_addr *a)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

	memset(a, 0, sizeof(*a));
	if (sa->sa_family == AF_INET) {
		a->family = AF_INET;
		a->v4 = sin->sin_addr;
		a->port = sin->sin_port;
	} else if (sa->sa_family == AF_INET6) {
		a->port = sin6->sin6_port;
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			a->family = AF_INET;
			memcpy(&a->v4, &sin6->sin6_addr.s6_addr[12], 4);
		} else {
			a->family = AF_INET6;
			a->v6 = sin6->sin6_addr;
		}
	}
}

static int
own_addr_unspecified(const struct own_addr *a)
{
	return (a->family == AF_INET && a->v4.s_addr == htonl(INADDR_ANY)) ||
	    (a->family == AF_INET6 && IN6_IS_ADDR_UNSPECIFIED(&a->v6));
}

static int
own_addr_equal(const struct own_addr *a, const struct own_addr *b)
{
	if (a->family != b->family)
		return 0;
	if (a->family == AF_INET)
		return a->v4.s_addr == b->v4.s_addr;
	return memcmp(&a->v6, &b->v6, sizeof(a->v6)) == 0;
}

/*
 * Whether a is an address of this host: the unspecified address (a
 * connect to it goes to loopback), all of 127.0.0.0/8, ::1, or any
 * address the kernel's routing delivers locally -- the interfaces'
 * addresses and every address of a local route ("ip route add local
 * 11.0.0.0/24 dev lo" makes all 256 local without an interface address
 * for any of them).  The kernel is asked (RTM_GETROUTE): when it cannot
 * be, the address counts as local (fail closed).
 */
static int
addr_is_local(const struct own_addr *a)
{
	struct {
		struct nlmsghdr	 nh;
		struct rtmsg	 rt;
		char		 attr[RTA_SPACE(sizeof(struct in6_addr))];
	} req;
	union {
		struct nlmsghdr	 nh;
		char		 buf[8192];
	} resp;
	struct sockaddr_nl snl;
	struct rtattr *rta;
	struct rtmsg *rt;
	struct nlmsgerr *ne;
	size_t alen;
	ssize_t n;
	int fd, local = 1;

	if (own_addr_unspecified(a))
		return 1;
	if (a->family == AF_INET && (ntohl(a->v4.s_addr) >> 24) == 127)
		return 1;
	if (a->family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&a->v6))
		return 1;

	alen = a->family == AF_INET ? sizeof(a->v4) : sizeof(a->v6);
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.rt)) + RTA_SPACE(alen);
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = 1;
	req.rt.rtm_family = (unsigned char)a->family;
	req.rt.rtm_dst_len = (unsigned char)(alen * 8);
	rta = (struct rtattr *)req.attr;
	rta->rta_type = RTA_DST;
	rta->rta_len = (unsigned short)RTA_LENGTH(alen);
	memcpy(RTA_DATA(rta), a->family == AF_INET ? (const void *)&a->v4 :
	    (const void *)&a->v6, alen);
	memset(&snl, 0, sizeof(snl));
	snl.nl_family = AF_NETLINK;
	if ((fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
	    NETLINK_ROUTE)) == -1)
		return 1;
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&snl,
	    sizeof(snl)) == -1)
		goto done;
	do
		n = recv(fd, &resp, sizeof(resp), 0);
	while (n == -1 && errno == EINTR);
	if (n < (ssize_t)sizeof(struct nlmsghdr) || !NLMSG_OK(&resp.nh,
	    (size_t)n))
		goto done;
	if (resp.nh.nlmsg_type == NLMSG_ERROR) {
		ne = NLMSG_DATA(&resp.nh);
		/* No route at all: nothing here answers to it. */
		if (resp.nh.nlmsg_len >= NLMSG_LENGTH(sizeof(*ne)) &&
		    (ne->error == -ENETUNREACH || ne->error == -EHOSTUNREACH))
			local = 0;
	} else if (resp.nh.nlmsg_type == RTM_NEWROUTE &&
	    resp.nh.nlmsg_len >= NLMSG_LENGTH(sizeof(*rt))) {
		rt = NLMSG_DATA(&resp.nh);
		local = rt->rtm_type == RTN_LOCAL;
	}
done:
	close(fd);
	return local;
}

/*
 * Whether a connection to t would reach listener l.  The address the
 * kernel would connect to is what counts, not its spelling:
 *
 *  - the unspecified address (0.0.0.0, ::, ::ffff:0.0.0.0) is a connect
 *    to this host: it reaches a listener on that port whatever it is
 *    bound to (fail closed; Linux goes to loopback);
 *  - a wildcard listener is reached by every local address: 127.0.0.0/8,
 *    ::1, the interfaces' addresses -- of both families when an IPv6
 *    wildcard listener is not IPV6_V6ONLY;
 *  - a listener bound to one address by that address, IPv4 also through
 *    its IPv4-mapped IPv6 form.
 *
 * conn.c checks the connected peer again once a connect completes, so an
 * address this misses (a route of the host's own) is still caught.
 */
static int
listener_reached(const struct listener *l, const struct own_addr *t)
{
	struct own_addr la;

	own_addr_of((const struct sockaddr *)&l->ss, &la);
	if (la.family == 0 || t->family == 0 || la.port != t->port)
		return 0;
	if (own_addr_unspecified(t))
		return 1;
	if (own_addr_unspecified(&la)) {
		if (la.family != t->family && (la.family == AF_INET ||
		    l->v6only))
			return 0;
		return addr_is_local(t);
	}
	return own_addr_equal(&la, t);
}

/*
 * The proxy's own listening addresses are always refused: a loop through
 * the proxy would bypass nothing but costs two connections per round, and
 * each round could be reviewed and logged as something else.
 */
int
proxy_own_addr(struct proxy *px, const struct sockaddr *sa)
{
	struct listener *l;
	struct own_addr t;

	own_addr_of(sa, &t);
	TAILQ_FOREACH(l, &px->listeners, entry)
		if (listener_reached(l, &t))
			return 1;
	return 0;
}
