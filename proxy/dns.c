/*
 * Asynchronous name resolution with c-ares on the proxy's event loop.
 *
 * c-ares tells us which sockets to watch through ARES_OPT_SOCK_STATE_CB;
 * each gets a libevent event that calls ares_process_fd, and one timer
 * follows ares_timeout.  Lookups use ARES_FLAG_NOSEARCH (the name asked
 * for is the name resolved: no search domains appended) and, when the
 * config names a hosts file, CARES_HOSTS + ARES_AI_ENVHOSTS, the only way
 * c-ares 1.18 reads a hosts file other than /etc/hosts.
 *
 * Results are always delivered from a fresh event-loop turn: c-ares may
 * call back from inside ares_getaddrinfo (hosts-file hit), and a caller
 * must never be re-entered from its own dns_lookup call.
 *
 * The channel is made at the first lookup, not with the proxy: making it
 * reads resolv.conf, nsswitch.conf and the environment (about 1 ms of
 * every pisbx-run start here), and most sandboxed commands resolve
 * nothing.  The servers it is given were checked with the config.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ares.h>
#include <event2/event.h>

#include "common/log.h"
#include "proxy/proxy_int.h"

struct dns_sock {
	LIST_ENTRY(dns_sock)	 entry;
	struct dns		*d;
	ares_socket_t		 fd;
	struct event		*ev;
	short			 what;
};

struct dns {
	struct event_base	*base;
	ares_channel		 ch;
	struct event		*timer;
	LIST_HEAD(, dns_sock)	 socks;
	char			*servers;	/* as configured, for dns_differs */
	char			*hosts_file;
	int			 timeout_ms;
	int			 destroying;
};

struct dns_query {
	struct dns		*d;
	dns_cb			 cb;
	void			*arg;
	uint16_t		 port;
	int			 cancelled;
	int			 answered;	/* c-ares is done with it */
	struct event		*deliver;
	struct sockaddr_storage	 addrs[DNS_MAX_ADDRS];
	size_t			 n;
	char			 err[128];
};

static void	 dns_sock_state_cb(void *, ares_socket_t, int, int);
static void	 dns_sock_cb(evutil_socket_t, short, void *);
static void	 dns_timer_cb(evutil_socket_t, short, void *);
static void	 dns_rearm(struct dns *);
static void	 dns_ai_cb(void *, int, int, struct ares_addrinfo *);
static void	 dns_deliver_cb(evutil_socket_t, short, void *);
static char	*dns_servers_csv(const struct config *);
static int	 dns_channel(struct dns *, char *, size_t);

static int dns_lib_ready;

static char *
dns_servers_csv(const struct config *conf)
{
	size_t i, len = 1;
	char *s;

	for (i = 0; i < conf->resolver_servers.n; i++)
		len += strlen(conf->resolver_servers.v[i]) + 1;
	if ((s = calloc(1, len)) == NULL)
		return NULL;
	for (i = 0; i < conf->resolver_servers.n; i++) {
		if (i > 0)
			strcat(s, ",");
		strcat(s, conf->resolver_servers.v[i]);
	}
	return s;
}

struct dns *
dns_new(struct event_base *base, const struct config *conf, char *err,
    size_t errlen)
{
	struct dns *d;
	int rc;

	if (!dns_lib_ready) {
		if ((rc = ares_library_init(ARES_LIB_INIT_ALL)) != ARES_SUCCESS) {
			snprintf(err, errlen, "c-ares: %s", ares_strerror(rc));
			return NULL;
		}
		dns_lib_ready = 1;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	d->base = base;
	LIST_INIT(&d->socks);
	d->timeout_ms = conf->resolver_timeout_ms;
	if ((d->servers = dns_servers_csv(conf)) == NULL)
		goto nomem;
	if (conf->hosts_file != NULL &&
	    (d->hosts_file = strdup(conf->hosts_file)) == NULL)
		goto nomem;
	if ((d->timer = evtimer_new(base, dns_timer_cb, d)) == NULL)
		goto nomem;
	/*
	 * c-ares 1.18 reads a custom hosts file only from $CARES_HOSTS (with
	 * ARES_AI_ENVHOSTS on each lookup): the proxy owns its environment.
	 */
	if (d->hosts_file != NULL)
		setenv("CARES_HOSTS", d->hosts_file, 1);
	return d;
nomem:
	snprintf(err, errlen, "out of memory");
	dns_free(d);
	return NULL;
}

/* The c-ares channel, made at the first lookup (0), or why not (-1). */
static int
dns_channel(struct dns *d, char *err, size_t errlen)
{
	struct ares_options opts;
	int rc, optmask;

	if (d->ch != NULL)
		return 0;
	/*
	 * Two tries; c-ares doubles the per-try timeout, so t + 2t fits the
	 * configured total.
	 */
	memset(&opts, 0, sizeof(opts));
	opts.flags = ARES_FLAG_NOSEARCH;
	opts.timeout = d->timeout_ms / 3 > 0 ? d->timeout_ms / 3 : 1;
	opts.tries = 2;
	opts.sock_state_cb = dns_sock_state_cb;
	opts.sock_state_cb_data = d;
	opts.lookups = (char *)"fb";	/* hosts file, then DNS */
	optmask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES |
	    ARES_OPT_SOCK_STATE_CB | ARES_OPT_LOOKUPS;
	if ((rc = ares_init_options(&d->ch, &opts, optmask)) != ARES_SUCCESS) {
		snprintf(err, errlen, "c-ares: %s", ares_strerror(rc));
		d->ch = NULL;
		return -1;
	}
	if (d->servers[0] != '\0' &&
	    (rc = ares_set_servers_ports_csv(d->ch, d->servers)) !=
	    ARES_SUCCESS) {
		snprintf(err, errlen, "resolver.servers \"%s\": %s",
		    d->servers, ares_strerror(rc));
		ares_destroy(d->ch);
		d->ch = NULL;
		return -1;
	}
	return 0;
}

void
dns_free(struct dns *d)
{
	struct dns_sock *s;

	if (d == NULL)
		return;
	d->destroying = 1;
	if (d->ch != NULL)
		ares_destroy(d->ch);	/* pending lookups: ARES_EDESTRUCTION */
	while ((s = LIST_FIRST(&d->socks)) != NULL) {
		LIST_REMOVE(s, entry);
		event_free(s->ev);
		free(s);
	}
	if (d->timer != NULL)
		event_free(d->timer);
	free(d->servers);
	free(d->hosts_file);
	free(d);
}

int
dns_differs(const struct dns *d, const struct config *conf)
{
	char *csv;
	int differs;

	if ((csv = dns_servers_csv(conf)) == NULL)
		return 1;
	differs = strcmp(csv, d->servers) != 0 ||
	    d->timeout_ms != conf->resolver_timeout_ms ||
	    (d->hosts_file == NULL) != (conf->hosts_file == NULL) ||
	    (d->hosts_file != NULL &&
	    strcmp(d->hosts_file, conf->hosts_file) != 0);
	free(csv);
	return differs;
}

/* c-ares wants (or no longer wants) a socket watched. */
static void
dns_sock_state_cb(void *arg, ares_socket_t fd, int readable, int writable)
{
	struct dns *d = arg;
	struct dns_sock *s;
	short what = (readable ? EV_READ : 0) | (writable ? EV_WRITE : 0);

	LIST_FOREACH(s, &d->socks, entry)
		if (s->fd == fd)
			break;
	if (what == 0) {
		if (s != NULL) {
			LIST_REMOVE(s, entry);
			event_free(s->ev);
			free(s);
		}
		return;
	}
	if (s == NULL) {
		if ((s = calloc(1, sizeof(*s))) == NULL) {
			log_warnx("dns: out of memory");
			return;
		}
		s->d = d;
		s->fd = fd;
		LIST_INSERT_HEAD(&d->socks, s, entry);
	} else if (s->what == what)
		return;
	else {
		event_free(s->ev);
		s->ev = NULL;
	}
	s->what = what;
	s->ev = event_new(d->base, fd, what | EV_PERSIST, dns_sock_cb, s);
	if (s->ev == NULL || event_add(s->ev, NULL) == -1)
		log_warnx("dns: cannot watch socket %d", (int)fd);
}

static void
dns_sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_sock *s = arg;
	struct dns *d = s->d;

	ares_process_fd(d->ch, (what & EV_READ) ? fd : ARES_SOCKET_BAD,
	    (what & EV_WRITE) ? fd : ARES_SOCKET_BAD);
	dns_rearm(d);
}

static void
dns_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns *d = arg;

	(void)fd;
	(void)what;
	ares_process_fd(d->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	dns_rearm(d);
}

/* Follow c-ares' next timeout. */
static void
dns_rearm(struct dns *d)
{
	struct timeval tv, *tvp;

	if (d->destroying)
		return;
	tvp = ares_timeout(d->ch, NULL, &tv);
	if (tvp == NULL)
		evtimer_del(d->timer);
	else
		evtimer_add(d->timer, tvp);
}

struct dns_query *
dns_lookup(struct dns *d, const char *name, uint16_t port, dns_cb cb,
    void *arg)
{
	struct ares_addrinfo_hints hints;
	struct dns_query *q;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		return NULL;
	q->d = d;
	q->cb = cb;
	q->arg = arg;
	q->port = port;
	if ((q->deliver = evtimer_new(d->base, dns_deliver_cb, q)) == NULL) {
		free(q);
		return NULL;
	}
	/* No channel: this lookup fails, from a fresh turn; the next tries. */
	if (dns_channel(d, q->err, sizeof(q->err)) == -1) {
		struct timeval now = { 0, 0 };

		log_warnx("resolver: %s", q->err);
		q->answered = 1;
		evtimer_add(q->deliver, &now);
		return q;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = ARES_AI_NOSORT;
	if (d->hosts_file != NULL)
		hints.ai_flags |= ARES_AI_ENVHOSTS;
	ares_getaddrinfo(d->ch, name, NULL, &hints, dns_ai_cb, q);
	dns_rearm(d);
	return q;
}

void
dns_cancel(struct dns_query *q)
{
	if (q == NULL)
		return;
	if (q->answered) {
		/* The answer waits in the delivery event: drop both. */
		event_free(q->deliver);
		free(q);
		return;
	}
	q->cancelled = 1;	/* dns_ai_cb frees it */
}

static void
dns_ai_cb(void *arg, int status, int timeouts, struct ares_addrinfo *ai)
{
	struct dns_query *q = arg;
	struct ares_addrinfo_node *n;
	struct timeval now = { 0, 0 };

	(void)timeouts;
	if (q->cancelled || q->d->destroying) {
		if (!q->cancelled && q->cb != NULL)
			q->cb(NULL, 0, "resolver shut down", q->arg);
		if (ai != NULL)
			ares_freeaddrinfo(ai);
		event_free(q->deliver);
		free(q);
		return;
	}
	q->answered = 1;
	if (status != ARES_SUCCESS || ai == NULL) {
		snprintf(q->err, sizeof(q->err), "%s", ares_strerror(status));
	} else {
		for (n = ai->nodes; n != NULL && q->n < DNS_MAX_ADDRS;
		    n = n->ai_next) {
			struct sockaddr_storage *ss = &q->addrs[q->n];

			if (n->ai_family == AF_INET &&
			    n->ai_addrlen >= sizeof(struct sockaddr_in)) {
				memcpy(ss, n->ai_addr,
				    sizeof(struct sockaddr_in));
				((struct sockaddr_in *)ss)->sin_port =
				    htons(q->port);
			} else if (n->ai_family == AF_INET6 &&
			    n->ai_addrlen >= sizeof(struct sockaddr_in6)) {
				memcpy(ss, n->ai_addr,
				    sizeof(struct sockaddr_in6));
				((struct sockaddr_in6 *)ss)->sin6_port =
				    htons(q->port);
			} else
				continue;
			q->n++;
		}
		if (q->n == 0)
			snprintf(q->err, sizeof(q->err), "no addresses");
	}
	if (ai != NULL)
		ares_freeaddrinfo(ai);
	evtimer_add(q->deliver, &now);
}

static void
dns_deliver_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dns_query *q = arg;

	(void)fd;
	(void)what;
	q->cb(q->addrs, q->n, q->n > 0 ? NULL : q->err, q->arg);
	event_free(q->deliver);
	free(q);
}

/*
 * A hosts file is small; a larger one is not read (no answer, so no
 * note at a review), rather than stall the event loop.
 */
#define DNS_HOSTS_MAX	(1 << 20)

size_t
dns_hosts_addrs(const char *hosts_file, const char *name,
    struct sockaddr_storage *out, size_t max)
{
	struct sockaddr_in	*sin;
	struct sockaddr_in6	*sin6;
	struct in6_addr		 a6;
	struct in_addr		 a4;
	FILE			*f;
	char			 line[4096], *save, *tok, *addr;
	size_t			 n = 0, total = 0;
	int			 v6;

	if ((f = fopen(hosts_file != NULL ? hosts_file : "/etc/hosts",
	    "re")) == NULL)
		return 0;
	while (n < max && fgets(line, sizeof(line), f) != NULL) {
		if ((total += strlen(line)) > DNS_HOSTS_MAX)
			break;
		line[strcspn(line, "#\r\n")] = '\0';
		if ((addr = strtok_r(line, " \t", &save)) == NULL)
			continue;
		if (inet_pton(AF_INET, addr, &a4) == 1)
			v6 = 0;
		else if (inet_pton(AF_INET6, addr, &a6) == 1)
			v6 = 1;
		else
			continue;
		while ((tok = strtok_r(NULL, " \t", &save)) != NULL)
			if (strcasecmp(tok, name) == 0)
				break;
		if (tok == NULL)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		if (v6) {
			sin6 = (struct sockaddr_in6 *)&out[n];
			sin6->sin6_family = AF_INET6;
			sin6->sin6_addr = a6;
		} else {
			sin = (struct sockaddr_in *)&out[n];
			sin->sin_family = AF_INET;
			sin->sin_addr = a4;
		}
		n++;
	}
	fclose(f);
	return n;
}
