/*
 * The upstream proxy (network.parentProxy): after pisbx has decided, an
 * allowed connection is handed to the corporate gateway instead of being
 * dialled directly.
 *
 * Tunnels (CONNECT, SOCKS5) become a CONNECT to the upstream for the
 * canonical target; the relay and its ClientHello check start only after
 * the upstream's 2xx, exactly as after a direct connect.
 *
 * Forwarded plain-HTTP requests go the same way by default (httpForwarding
 * "tunnel"): a CONNECT to host:port, then the origin-form request inside.
 * The credentials ride on the CONNECT alone, and pisbx reads its answer
 * and never passes it on, so no answer the client reads can hold them:
 * a gateway that answers TRACE with Max-Forwards: 0 itself (RFC 9110
 * 9.3.8) or quotes the request in an error page would otherwise echo
 * Proxy-Authorization to the sandbox.  Gateways that allow CONNECT to
 * port 443 only (squid's default SSL_ports) refuse that: parent-refused,
 * with a hint naming the gateway's setting and "absolute-form", which
 * sends the request as a proxy request with the credentials on it, the
 * way clients talk to a gateway themselves.  There TRACE and TRACK are
 * refused and Max-Forwards is dropped; an error page that quotes request
 * headers remains the documented risk of that mode.
 *
 * The upstream's answer to CONNECT is read without reading a byte past
 * its head (MSG_PEEK, then exactly the head is consumed): whatever the
 * target sends first (an SSH or SMTP banner) stays in the socket for the
 * relay.  Its refusals become reasons: 407 parent-auth, any other 4xx
 * parent-refused, 5xx, garbage, a timeout or no connection parent-error.
 *
 * The credentials are only ever the Proxy-Authorization header value the
 * config loader built; request buffers that held them are wiped.  No
 * message quotes them: an answer's reason phrase is not quoted either.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/log.h"
#include "common/secmem.h"
#include "common/sockaddr.h"
#include "proxy/proxy_int.h"

#define PARENT_REQ_MAX	(TARGET_TEXT_MAX * 2 + PARENT_CRED_MAX * 2 + 128)

struct parent_conn {
	struct pgen		*gen;	/* keeps url and the credentials */
	const struct parent_url	*url;	/* NULL: direct */
	struct event		*ev;	/* the answer to CONNECT */
	char			*head;	/* its head, read so far */
	size_t			 len;
};

static void	 parent_conn_stop(struct parent_conn *);
static void	 parent_conn_release(struct parent_conn *);
static void	 parent_conn_arm(struct conn *);
static void	 parent_conn_read_cb(evutil_socket_t, short, void *);
static int	 parent_conn_read(struct conn *, int);
static void	 parent_conn_answer(struct conn *, int);
static int	 parent_line_is(const char *, const char *);
static void	 parent_conn_fail(struct conn *, const char *, enum conn_err,
		    const char *, ...) __attribute__((format(printf, 4, 5)));

/* End the CONNECT exchange; the route stays (for the records). */
static void
parent_conn_stop(struct parent_conn *pc)
{
	if (pc->ev != NULL) {
		event_free(pc->ev);
		pc->ev = NULL;
	}
	free(pc->head);
	pc->head = NULL;
	pc->len = 0;
}

/* Drop the route and the config it points into. */
static void
parent_conn_release(struct parent_conn *pc)
{
	parent_conn_stop(pc);
	if (pc->gen != NULL)
		pgen_unref(pc->gen);
	pc->gen = NULL;
	pc->url = NULL;
}

void
parent_conn_free(struct conn *c)
{
	if (c->parent == NULL)
		return;
	parent_conn_release(c->parent);
	free(c->parent);
	c->parent = NULL;
}

int
parent_conn_select(struct conn *c)
{
	struct pgen		*g = c->px->gen;
	const struct parent_url	*u;

	u = parent_route(g->conf->parent, &c->host, c->port,
	    c->proto != PROTO_HTTP && c->port == 443);
	if (c->parent != NULL)
		parent_conn_release(c->parent);
	if (u == NULL)
		return 0;
	if (c->parent == NULL && (c->parent = calloc(1,
	    sizeof(*c->parent))) == NULL)
		return -1;
	c->parent->gen = g;
	g->refs++;
	c->parent->url = u;
	return 1;
}

int
parent_conn_keeps(struct conn *c, const struct host *h, uint16_t port)
{
	const struct parent_url	*now, *was;

	now = parent_route(conn_config(c)->parent, h, port, 0);
	was = c->parent != NULL ? c->parent->url : NULL;
	if (now == NULL || was == NULL)
		return now == was;
	/*
	 * A tunnel carries requests to the origin: one that goes to the
	 * upstream as a proxy request (with the credentials) never may.
	 */
	return strcmp(now->text, was->text) == 0 &&
	    conn_config(c)->parent->http_absolute ==
	    c->parent->gen->conf->parent->http_absolute;
}

int
parent_conn_absolute(const struct conn *c)
{
	return c->proto == PROTO_HTTP && c->parent != NULL &&
	    c->parent->url != NULL && c->parent->gen->conf->parent->http_absolute;
}

const char *
parent_conn_via(const struct conn *c)
{
	return c->parent != NULL && c->parent->url != NULL ?
	    c->parent->url->text : NULL;
}

const char *
parent_conn_name(const struct conn *c)
{
	const struct parent_url	*u = c->parent->url;

	return u->host.kind == HOST_NAME ? u->host.text : NULL;
}

uint16_t
parent_conn_port(const struct conn *c)
{
	return c->parent->url->port;
}

/*
 * Refuse the connection for what the upstream proxy did (or did not
 * do): the decision record, and the client's 403/502/504 or SOCKS5 code.
 */
static void
parent_conn_fail(struct conn *c, const char *reason, enum conn_err err,
    const char *fmt, ...)
{
	char	 detail[512];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	parent_conn_stop(c->parent);
	conn_deny(c, reason, detail, err);
}

void
parent_conn_addrs(struct conn *c, const struct sockaddr_storage *addrs,
    size_t n, const char *err)
{
	const struct parent_url	*u = c->parent->url;
	struct sockaddr_in	*sin;
	struct sockaddr_in6	*sin6;
	size_t			 i;

	c->naddrs = 0;
	c->addr_i = 0;
	if (u->host.kind == HOST_IPV4) {
		sin = (struct sockaddr_in *)&c->addrs[0];
		memset(&c->addrs[0], 0, sizeof(c->addrs[0]));
		sin->sin_family = AF_INET;
		sin->sin_addr = u->host.v4;
		sin->sin_port = htons(u->port);
		c->naddrs = 1;
	} else if (u->host.kind == HOST_IPV6) {
		sin6 = (struct sockaddr_in6 *)&c->addrs[0];
		memset(&c->addrs[0], 0, sizeof(c->addrs[0]));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = u->host.v6;
		sin6->sin6_port = htons(u->port);
		c->naddrs = 1;
	} else if (n == 0) {
		parent_conn_fail(c, "parent-error", CERR_FAILURE, "cannot "
		    "resolve the upstream proxy %s: %s", u->host.text,
		    err != NULL ? err : "no addresses");
		return;
	}
	/*
	 * The upstream proxy is named by the trusted config and usually
	 * sits on a private network: only a loop back into pisbx's own
	 * listeners is refused (conn_peer_check checks where the connect
	 * went, too).
	 */
	for (i = 0; i < n && c->naddrs < CONN_MAX_ADDRS; i++) {
		if (proxy_own_addr(c->px, (const struct sockaddr *)&addrs[i]))
			continue;
		c->addrs[c->naddrs++] = addrs[i];
	}
	if (c->naddrs == 0 || proxy_own_addr(c->px,
	    (const struct sockaddr *)&c->addrs[0])) {
		parent_conn_fail(c, "parent-error", CERR_FAILURE, "the "
		    "upstream proxy %s is this proxy's own listener",
		    u->text);
		return;
	}
	conn_dial(c);
}

void
parent_conn_unreachable(struct conn *c, const char *detail, int timedout)
{
	parent_conn_fail(c, "parent-error", timedout ? CERR_TIMEOUT :
	    CERR_FAILURE, "the upstream proxy %s: %s", c->parent->url->text,
	    detail);
}

void
parent_conn_handshake(struct conn *c)
{
	struct parent_conn	*pc = c->parent;
	const char		*auth;
	char			 target[TARGET_TEXT_MAX], req[PARENT_REQ_MAX];
	int			 n;

	/* The credentials of the config the route was chosen under. */
	auth = pc->gen->conf->parent->auth;
	target_format(target, sizeof(target), &c->host, c->port);
	n = snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n"
	    "%s%s%s\r\n", target, target, auth != NULL ?
	    "Proxy-Authorization: " : "", auth != NULL ? auth : "",
	    auth != NULL ? "\r\n" : "");
	if (n < 0 || (size_t)n >= sizeof(req) ||
	    (pc->head = malloc(PARENT_HEAD_MAX)) == NULL) {
		secmem_wipe(req, sizeof(req));
		parent_conn_fail(c, "parent-error", CERR_FAILURE,
		    "out of memory");
		return;
	}
	/* A fresh connection takes this at once; what it does not is queued. */
	relay_send(c->upstream, req, (size_t)n);
	secmem_wipe(req, sizeof(req));
	if (evbuffer_get_length(bufferevent_get_output(c->upstream)) > 0)
		bufferevent_enable(c->upstream, EV_WRITE);
	pc->len = 0;
	pc->ev = event_new(c->px->base, bufferevent_getfd(c->upstream),
	    EV_READ, parent_conn_read_cb, c);
	if (pc->ev == NULL) {
		parent_conn_fail(c, "parent-error", CERR_FAILURE,
		    "out of memory");
		return;
	}
	parent_conn_arm(c);
}

/*
 * Wait for (more of) the answer.  The connect timeout covers the whole
 * way to a usable tunnel: what the TCP connect left of it is the time
 * the upstream proxy has to answer.
 */
static void
parent_conn_arm(struct conn *c)
{
	struct timeval	 now, d, tv;
	long		 left;

	event_base_gettimeofday_cached(c->px->base, &now);
	timersub(&now, &c->connect_start, &d);
	left = conn_config(c)->connect_timeout_ms - (d.tv_sec * 1000 +
	    d.tv_usec / 1000);
	if (left < 1)
		left = 1;
	tv.tv_sec = left / 1000;
	tv.tv_usec = (left % 1000) * 1000;
	if (event_add(c->parent->ev, &tv) == -1)
		parent_conn_fail(c, "parent-error", CERR_FAILURE,
		    "cannot wait for the upstream proxy");
}

static void
parent_conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	if (what & EV_TIMEOUT) {
		parent_conn_fail(c, "parent-error", CERR_TIMEOUT, "the "
		    "upstream proxy %s did not answer CONNECT within %d ms",
		    c->parent->url->text, conn_config(c)->connect_timeout_ms);
		return;
	}
	if (parent_conn_read(c, fd) == 0)
		parent_conn_arm(c);
}

/*
 * Read the answer's head, never past it.  Returns 0 to wait for more,
 * 1 when the connection moved on (answered, or refused).
 */
static int
parent_conn_read(struct conn *c, int fd)
{
	struct parent_conn	*pc = c->parent;
	const char		*via = pc->url->text;
	struct http_msg		 m;
	ssize_t			 n, h;

	for (;;) {
		n = recv(fd, pc->head + pc->len, PARENT_HEAD_MAX - pc->len,
		    MSG_PEEK | MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			parent_conn_fail(c, "parent-error", CERR_FAILURE,
			    "the upstream proxy %s %s before answering "
			    "CONNECT", via, n == 0 ? "closed the connection" :
			    strerror(errno));
			return 1;
		}
		h = http_parse_response(pc->head, pc->len + (size_t)n, &m);
		if (h < 0) {
			parent_conn_fail(c, "parent-error", CERR_FAILURE,
			    "the upstream proxy %s answered CONNECT with no "
			    "valid HTTP response (%s)", via, m.errmsg);
			return 1;
		}
		if (h == 0 && pc->len + (size_t)n == PARENT_HEAD_MAX) {
			parent_conn_fail(c, "parent-error", CERR_FAILURE,
			    "the upstream proxy %s answered CONNECT with a "
			    "head over %d bytes", via, PARENT_HEAD_MAX);
			return 1;
		}
		/* All peeked bytes are head bytes, or exactly the rest of it. */
		if (h > 0)
			n = h - (ssize_t)pc->len;
		if (recv(fd, pc->head + pc->len, (size_t)n, MSG_DONTWAIT) !=
		    n) {
			parent_conn_fail(c, "parent-error", CERR_FAILURE,
			    "the upstream proxy %s: reading its answer: %s",
			    via, strerror(errno));
			return 1;
		}
		if (h == 0) {
			pc->len += (size_t)n;
			continue;
		}
		pc->len = 0;
		if (m.status >= 100 && m.status < 200)
			continue;	/* interim: the real answer follows */
		parent_conn_answer(c, m.status);
		return 1;
	}
}

/* The upstream proxy's final answer to CONNECT. */
static void
parent_conn_answer(struct conn *c, int status)
{
	const char	*via = c->parent->url->text;
	char		 target[TARGET_TEXT_MAX];

	target_format(target, sizeof(target), &c->host, c->port);
	if (status >= 200 && status < 300) {
		parent_conn_stop(c->parent);
		conn_connected(c);
		return;
	}
	/*
	 * Nothing but the proxy can have answered a CONNECT: a 401 is its
	 * too (tinyproxy answers wrong credentials with 401, not 407).
	 */
	if (status == 407 || status == 401) {
		parent_conn_auth_refused(c, status);
		return;
	}
	if (status >= 400 && status < 500) {
		parent_conn_fail(c, "parent-refused", CERR_DENY, "the upstream "
		    "proxy %s refused CONNECT %s: %d %s%s", via, target, status,
		    http_status_text(status), c->proto == PROTO_HTTP ?
		    " (the tunnel for a plain-HTTP request)" : "");
		return;
	}
	parent_conn_fail(c, "parent-error", status == 504 ? CERR_TIMEOUT :
	    CERR_FAILURE, "the upstream proxy %s answered CONNECT %s with "
	    "%d %s", via, target, status, http_status_text(status));
}

void
parent_conn_auth_refused(struct conn *c, int status)
{
	const struct parent_proxy	*pp = c->parent->gen->conf->parent;
	char				 src[300];

	if (pp->cred_file != NULL)
		snprintf(src, sizeof(src), " to the credentials from %s",
		    pp->cred_file);
	else if (pp->cred_env != NULL)
		snprintf(src, sizeof(src), " to the credentials from $%s",
		    pp->cred_env);
	else
		snprintf(src, sizeof(src), ": it wants credentials, and none "
		    "are configured");
	parent_conn_fail(c, "parent-auth", CERR_FAILURE, "the upstream proxy "
	    "%s answered %d %s%s", c->parent->url->text, status,
	    http_status_text(status), src);
}

void
parent_conn_no_answer(struct conn *c)
{
	parent_conn_fail(c, "parent-error", CERR_FAILURE, "the upstream "
	    "proxy %s closed the connection without answering the request",
	    c->parent->url->text);
}

/* Whether a header line "Name: value" is named name (any case). */
static int
parent_line_is(const char *line, const char *name)
{
	size_t	 n = strlen(name);

	return strncasecmp(line, name, n) == 0 && line[n] == ':';
}

int
parent_conn_http_head(struct conn *c, struct evbuffer *head)
{
	const char	*auth = c->parent->gen->conf->parent->auth;
	struct evbuffer	*out;
	char		*line = NULL, *sp, cred[PARENT_CRED_MAX * 2 + 32];
	size_t		 n, mlen;
	int		 k, rc = -1;

	if ((out = evbuffer_new()) == NULL)
		return -1;
	if ((line = evbuffer_readln(head, &n, EVBUFFER_EOL_CRLF_STRICT)) ==
	    NULL || (sp = strchr(line, ' ')) == NULL)
		goto done;
	mlen = (size_t)(sp - line);
	/*
	 * The upstream proxy answers TRACE (TRACK: IIS's) with the request
	 * it got, credentials included, when Max-Forwards reaches 0 there.
	 * Methods are case-sensitive, a gateway's parser may not be.
	 */
	if ((mlen == 5 && (strncasecmp(line, "TRACE", 5) == 0 ||
	    strncasecmp(line, "TRACK", 5) == 0))) {
		parent_conn_fail(c, "parent-method", CERR_DENY, "%.*s through "
		    "the upstream proxy %s in absolute-form", (int)mlen, line,
		    c->parent->url->text);
		rc = 1;
		goto done;
	}
	/* "GET /p HTTP/1.1" -> "GET http://host[:port]/p HTTP/1.1" */
	if (evbuffer_add(out, line, mlen + 1) == -1 ||
	    evbuffer_add_printf(out, "http://%s", c->host.text) == -1 ||
	    (c->port != 80 && evbuffer_add_printf(out, ":%u",
	    (unsigned)c->port) == -1) ||
	    evbuffer_add_printf(out, "%s\r\n", sp + 1) == -1)
		goto done;
	/* The header lines http.c wrote, up to the empty one. */
	for (;;) {
		free(line);
		if ((line = evbuffer_readln(head, &n,
		    EVBUFFER_EOL_CRLF_STRICT)) == NULL)
			goto done;
		if (n == 0)
			break;
		/* Only the upstream could count it down to its own echo. */
		if (parent_line_is(line, "max-forwards"))
			continue;
		if (evbuffer_add(out, line, n) == -1 ||
		    evbuffer_add(out, "\r\n", 2) == -1)
			goto done;
	}
	if (auth != NULL) {
		k = snprintf(cred, sizeof(cred), "Proxy-Authorization: %s\r\n",
		    auth);
		if (k < 0 || (size_t)k >= sizeof(cred) ||
		    evbuffer_add(out, cred, (size_t)k) == -1) {
			secmem_wipe(cred, sizeof(cred));
			goto done;
		}
		secmem_wipe(cred, sizeof(cred));
	}
	if (evbuffer_add(out, "\r\n", 2) == -1 ||
	    evbuffer_add_buffer(out, head) == -1 ||
	    evbuffer_add_buffer(head, out) == -1)
		goto done;
	rc = 0;
done:
	free(line);
	evbuffer_free(out);
	return rc;
}
