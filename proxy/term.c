/*
 * A terminated tunnel (network.tlsTerminate): the proxy is the TLS
 * server of the client, with a leaf for the CONNECT host that the run's
 * CA signs, and the TLS client of the upstream, which it verifies.  In
 * between it reads HTTP/1.1 and enforces what a tunnel hides: the Host
 * must be the CONNECT host (a tunnel to an allowed name must not carry
 * requests for another one behind the same front end), network.
 * requestRules decide on method and path, masked credentials are
 * swapped for their values on the way to the hosts they belong to and
 * back on the way out, and every request has its access-log record.
 *
 * The tunnel starts as a plain one: after the 200 (or SOCKS5 reply) the
 * client's first bytes are peeked at (MSG_PEEK, so that they are still
 * in the socket for the TLS module): a ClientHello for the target is
 * terminated; anything else goes to the plain relay (relay.c, with its
 * checks), except for a host with request rules, whose tunnel must be
 * readable (request-rules-opaque).
 *
 * Both TLS endpoints are driven from our events (the module answers
 * "want read", "want write"); both handshakes start at once.  One pass
 * (term_run) moves what it can: each end's TLS writes and reads, then
 * the HTTP exchange from one end's plaintext to the other's, until
 * nothing moves.  Each end holds at most TERM_HIGH bytes of plaintext
 * read and not yet passed on: past that it is read no more
 * (backpressure both ways, bounded memory).
 *
 * One request at a time: the next request head is read once the
 * response to the last one is complete (pipelined requests wait in the
 * client's buffer).  A request body whose length can change under a
 * swap (a value shorter or longer than its placeholder) is re-framed
 * chunked; so is a response body for an HTTP/1.1 client (an HTTP/1.0
 * one gets a body delimited by our close).  A Content-Encoding'd body
 * is passed as it is, neither swapped nor searched: its bytes are
 * compressed (docs/credentials.md).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/base64.h"
#include "common/log.h"
#include "policy/policy.h"
#include "proxy/cred.h"
#include "proxy/proxy_int.h"
#include "proxy/relay_int.h"
#include "proxy/term_int.h"
#include "proxy/tlsmod.h"

#define TERM_BODY_STEP	(64 * 1024)	/* body bytes per step */
#define TERM_WRITE_MIN	(4 * 1024)	/* a chain written without pullup */
#define TERM_PEEK_AGAIN_MS	10	/* a split ClientHello: look again */

static void	 term_peek_cb(evutil_socket_t, short, void *);
static void	 term_peek_again_cb(evutil_socket_t, short, void *);
static void	 term_peek_up_cb(evutil_socket_t, short, void *);
static void	 term_peek_end(struct term *);
static void	 term_flush_cb(evutil_socket_t, short, void *);
static void	 term_flush_later(struct term *);
static void	 term_fallback(struct term *, int);
static void	 term_begin(struct term *);
static int	 term_end_init(struct term *, struct term_end *,
		    struct term_end *, int, uint64_t *);
static void	 term_end_free(struct term *, struct term_end *);
static void	 term_event_cb(evutil_socket_t, short, void *);
static void	 term_run(struct term *);
static int	 term_io(struct term *, struct term_end *);
static int	 term_want(struct term_end *, ssize_t);
static int	 term_step(struct term *);
static int	 term_move(struct term_body *, struct evbuffer *,
		    struct evbuffer *, size_t);
static int	 term_http(struct term *);
static int	 term_raw(struct term *);
static int	 term_raw_hide(struct term *, size_t);
static int	 term_read_request(struct term *);
static int	 term_request(struct term *, struct http_msg *, size_t);
static int	 term_read_response(struct term *);
static int	 term_body(struct term *, struct term_body *,
		    struct term_end *);
static int	 term_emit(struct term *, struct term_body *, const char *,
		    size_t, int, struct evbuffer *);
static void	 term_body_reset(struct term_body *);
static int	 term_hop(const struct http_msg *, const struct http_header *,
		    int);
static int	 term_encoded(const struct http_msg *);
static void	 term_log_path(struct term *, const char *, size_t);
static void	 term_log_request(struct term *, int, const char *,
		    const char *, const char *, const char *);
static int	 term_refuse(struct term *, int, const char *, const char *,
		    const char *, const char *);
static int	 term_leak(struct term *, const struct cred *, enum cred_fit);
static void	 term_tell(struct term *, const char *, const char *,
		    const char *);
static void	 term_client_tls(struct term *);
static int	 term_upstream_tls(struct term *);
static int	 term_has_creds(const struct term *);
static int	 term_injects_here(const struct term *);
static int	 term_same_host(const struct conn *, const struct host *,
		    uint16_t);

int
term_wanted(const struct conn *c)
{
	const struct proxy *px = c->px;

	return px->tls != NULL && px->tls_ca != NULL && c->have_target &&
	    (c->proto == PROTO_CONNECT || c->proto == PROTO_SOCKS5) &&
	    config_tls_terminates(conn_config(c), &c->host, c->port);
}

int
term_full(const struct conn *c)
{
	const struct config *conf = conn_config(c);

	return term_wanted(c) && conf->tls != NULL &&
	    c->px->nterm >= (size_t)conf->tls->max_tunnels;
}

int
term_opaque(const struct conn *c, char *buf, size_t len)
{
	const struct config *conf = conn_config(c);
	const char *what;

	if (!c->have_target || !config_has_request_rules(conf, &c->host,
	    c->port))
		return 0;
	if (c->proto != PROTO_HTTP && term_wanted(c))
		return 0;
	if (c->proto == PROTO_HTTP)
		what = "send it over https (a CONNECT tunnel pisbx "
		    "terminates)";
	else if (conf->tls == NULL)
		what = "set network.tlsTerminate";
	else if (!config_tls_terminates(conf, &c->host, c->port))
		what = "take the host out of network.tlsTerminate."
		    "excludeDomains";
	else
		what = "give pisbx the TLS module and CA "
		    "(network.tlsTerminate)";
	snprintf(buf, len, "network.requestRules apply to %s, and pisbx "
	    "can enforce them only inside a terminated TLS tunnel: %s",
	    c->host.text, what);
	return 1;
}

/*
 * The tunnel is set up: wait for the client's first bytes.  Bytes that
 * came before the reply (read with the request already) or a server
 * that speaks first cannot be terminated: the plain relay takes them.
 */
void
term_start(struct conn *c)
{
	struct term *t;
	int fd;

	if (evbuffer_get_length(bufferevent_get_input(c->client)) > 0 ||
	    evbuffer_get_length(bufferevent_get_input(c->upstream)) > 0) {
		if ((t = calloc(1, sizeof(*t))) == NULL) {
			conn_close(c, "out-of-memory");
			return;
		}
		t->c = c;
		c->term = t;
		term_fallback(t, 1);
		return;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		conn_close(c, "out-of-memory");
		return;
	}
	t->c = c;
	t->client.fd = t->upstream.fd = -1;
	c->term = t;
	c->state = CONN_RELAY;
	c->px->nterm++;
	t->counted = 1;
	t->phase = TERM_PEEK;
	fd = bufferevent_getfd(c->client);
	bufferevent_disable(c->client, EV_READ);
	bufferevent_disable(c->upstream, EV_READ);
	if ((t->peek_ev = event_new(c->px->base, fd, EV_READ | EV_PERSIST,
	    term_peek_cb, t)) == NULL ||
	    (t->peek_again = evtimer_new(c->px->base, term_peek_again_cb,
	    t)) == NULL || (t->peek_up = event_new(c->px->base,
	    bufferevent_getfd(c->upstream), EV_READ, term_peek_up_cb,
	    t)) == NULL || event_add(t->peek_ev, NULL) == -1 ||
	    event_add(t->peek_up, NULL) == -1) {
		conn_close(c, "out-of-memory");
		return;
	}
	conn_touch(c);
	/*
	 * The ClientHello is the handshake's start: a tunnel counts against
	 * maxTunnels from here, so a client that sends nothing or only part
	 * of one keeps its slot no longer than handshakeTimeoutMs.
	 */
	conn_timer_set(c, conn_config(c)->tls != NULL ?
	    conn_config(c)->tls->handshake_timeout_ms :
	    TLS_HANDSHAKE_TIMEOUT_DEFAULT);
}

/* The client's first bytes: a ClientHello for the target is ours. */
static void
term_peek_cb(evutil_socket_t fd, short what, void *arg)
{
	static uint8_t buf[TLS_PEEK_MAX];
	static const struct timeval again = { 0, TERM_PEEK_AGAIN_MS * 1000 };
	struct term *t = arg;
	struct conn *c = t->c;
	char sni[HOST_TEXT_MAX];
	const char *why = NULL, *errstr;
	struct host h;
	size_t used;
	ssize_t r;

	(void)what;
	r = recv(fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	if (r <= 0) {
		/* EOF or an error: the relay reads and reports it. */
		term_fallback(t, 0);
		return;
	}
	switch (tls_peek_clienthello(buf, (size_t)r, sni, sizeof(sni), &used,
	    &why)) {
	case TLS_PEEK_MORE:
		if ((size_t)r < sizeof(buf)) {
			/*
			 * A split ClientHello: wait, not for ever.  Its start
			 * stays in the socket (it is only peeked at), which
			 * stays readable: look again a little later rather
			 * than at every loop turn.  (Edge-triggered would
			 * do, but libevent refuses to mix it with the
			 * bufferevent's events on the same socket.)
			 */
			t->peek_waiting = 1;
			event_del(t->peek_ev);
			evtimer_add(t->peek_again, &again);
			return;
		}
		term_fallback(t, 0);
		return;
	case TLS_PEEK_NOT_TLS:
		term_fallback(t, 1);
		return;
	case TLS_PEEK_INVALID:
		term_fallback(t, 0);	/* the relay refuses it, and says why */
		return;
	case TLS_PEEK_SNI:
		if (host_canon(sni, strlen(sni), &h, &errstr) == -1 ||
		    h.kind != c->host.kind || strcmp(h.text,
		    c->host.text) != 0) {
			term_fallback(t, 0);	/* sni-mismatch, the relay's */
			return;
		}
		break;
	case TLS_PEEK_NO_SNI:
		break;
	}
	term_begin(t);
}

/*
 * The server spoke before the client (SMTP, FTP, a database): not TLS
 * the client starts, so the plain relay takes the tunnel at once rather
 * than after handshakeTimeoutMs.
 */
static void
term_peek_up_cb(evutil_socket_t fd, short what, void *arg)
{
	struct term *t = arg;

	(void)fd;
	(void)what;
	term_fallback(t, 1);
}

/* The wait for the first bytes is over: its events go. */
static void
term_peek_end(struct term *t)
{
	if (t->peek_ev != NULL)
		event_free(t->peek_ev);
	if (t->peek_again != NULL)
		event_free(t->peek_again);
	if (t->peek_up != NULL)
		event_free(t->peek_up);
	t->peek_ev = t->peek_again = t->peek_up = NULL;
}

/* Look at a split ClientHello again: its socket is watched again. */
static void
term_peek_again_cb(evutil_socket_t fd, short what, void *arg)
{
	struct term *t = arg;

	(void)fd;
	(void)what;
	event_add(t->peek_ev, NULL);
}

/*
 * Not terminated after all: the plain relay takes the tunnel.  not_tls:
 * the client's bytes are not TLS, which a host with request rules
 * refuses (its requests would go unread).
 */
static void
term_fallback(struct term *t, int not_tls)
{
	struct conn *c = t->c;
	char why[600];

	if (not_tls && config_has_request_rules(conn_config(c), &c->host,
	    c->port)) {
		snprintf(why, sizeof(why), "the tunnel to %s does not carry "
		    "TLS (or the client sent bytes before the tunnel was set "
		    "up), and network.requestRules apply to it: its requests "
		    "could not be read", c->host.text);
		conn_decide(c, 0, "request-rules-opaque", why);
		conn_log_decision(c);
		conn_close(c, "request-rules-opaque");
		return;
	}
	term_free(c);
	relay_open(c);
}

/* A ClientHello for the target: take both sockets, start both TLS ends. */
static void
term_begin(struct term *t)
{
	struct conn *c = t->c;
	struct proxy *px = c->px;
	const struct config *conf = conn_config(c);
	struct evbuffer *out = bufferevent_get_output(c->client);
	char err[512];
	int cfd, ufd;

	term_peek_end(t);
	cfd = bufferevent_getfd(c->client);
	ufd = bufferevent_getfd(c->upstream);
	/* The client answered the reply, so it has it; a rest goes now. */
	if (evbuffer_get_length(out) > 0 && relay_write_now(out, cfd) == -1) {
		conn_close(c, "client-error");
		return;
	}
	if (evbuffer_get_length(out) > 0 ||
	    evbuffer_get_length(bufferevent_get_output(c->upstream)) > 0) {
		term_fallback(t, 0);
		return;
	}
	bufferevent_disable(c->client, EV_READ | EV_WRITE);
	bufferevent_disable(c->upstream, EV_READ | EV_WRITE);
	bufferevent_setfd(c->client, -1);
	bufferevent_setfd(c->upstream, -1);
	bufferevent_free(c->client);
	bufferevent_free(c->upstream);
	c->client = c->upstream = NULL;
	t->client.fd = cfd;
	t->upstream.fd = ufd;
	metrics_tunnel(px, 1);
	t->phase = TERM_HANDSHAKE;
	c->terminated = 1;
	if (term_end_init(t, &t->client, &t->upstream, cfd,
	    &c->bytes_up) == -1 || term_end_init(t, &t->upstream, &t->client,
	    ufd, &c->bytes_down) == -1 || (t->flush_ev = evtimer_new(px->base,
	    term_flush_cb, t)) == NULL) {
		conn_close(c, "out-of-memory");
		return;
	}
	if ((t->client.tls = px->tls->server_new(px->tls_ca, cfd,
	    c->host.text, err, sizeof(err))) == NULL) {
		conn_error(c, "%s", err);
		conn_close(c, "tls-error");
		return;
	}
	if ((t->upstream.tls = px->tls->client_new(px->tls_ca, ufd,
	    c->host.text, err, sizeof(err))) == NULL) {
		conn_error(c, "%s", err);
		conn_close(c, "tls-error");
		return;
	}
	conn_touch(c);
	conn_timer_set(c, conf->tls != NULL ?
	    conf->tls->handshake_timeout_ms : TLS_HANDSHAKE_TIMEOUT_DEFAULT);
	term_run(t);
}

static int
term_end_init(struct term *t, struct term_end *e, struct term_end *dst,
    int fd, uint64_t *bytes)
{
	struct event_base *base = t->c->px->base;

	e->t = t;
	e->dst = dst;
	e->fd = fd;
	e->bytes = bytes;
	if ((e->in = evbuffer_new()) == NULL ||
	    (e->out = evbuffer_new()) == NULL ||
	    (e->rev = event_new(base, fd, EV_READ | EV_PERSIST,
	    term_event_cb, t)) == NULL ||
	    (e->wev = event_new(base, fd, EV_WRITE | EV_PERSIST,
	    term_event_cb, t)) == NULL)
		return -1;
	return 0;
}

static void
term_end_free(struct term *t, struct term_end *e)
{
	if (e->rev != NULL)
		event_free(e->rev);
	if (e->wev != NULL)
		event_free(e->wev);
	if (e->tls != NULL)
		t->c->px->tls->conn_free(e->tls);
	if (e->in != NULL)
		evbuffer_free(e->in);
	if (e->out != NULL)
		evbuffer_free(e->out);
	if (e->fd != -1)
		close(e->fd);
}

void
term_free(struct conn *c)
{
	struct term *t = c->term;

	if (t == NULL)
		return;
	term_peek_end(t);
	if (t->flush_ev != NULL)
		event_free(t->flush_ev);
	/* The sockets are ours once taken (term_begin), else still bev's. */
	if (t->client.t != NULL) {
		term_end_free(t, &t->client);
		term_end_free(t, &t->upstream);
		metrics_tunnel(c->px, -1);
	}
	term_body_reset(&t->req);
	term_body_reset(&t->resp);
	if (t->counted)
		c->px->nterm--;
	free(t);
	c->term = NULL;
}

void
term_timeout(struct conn *c)
{
	struct term *t = c->term;
	const struct config *conf = conn_config(c);
	struct timeval now, d;
	long idle, elapsed;
	char detail[160];

	switch (t->phase) {
	case TERM_PEEK:
		if (t->peek_waiting) {
			snprintf(detail, sizeof(detail), "incomplete TLS "
			    "ClientHello: not complete within network."
			    "tlsTerminate.handshakeTimeoutMs (%d ms)",
			    conf->tls != NULL ?
			    conf->tls->handshake_timeout_ms : 0);
			relay_peek_refuse(c, detail);
			return;
		}
		/*
		 * Nothing from the client: not terminated, and the slot is
		 * free again; the plain relay (its own timeouts) takes it.
		 */
		term_fallback(t, 1);
		return;
	case TERM_HANDSHAKE:
		if (!t->client.hs_done) {
			conn_error(c, "the client's TLS handshake was not done "
			    "within network.tlsTerminate.handshakeTimeoutMs "
			    "(%d ms)", conf->tls != NULL ?
			    conf->tls->handshake_timeout_ms : 0);
			term_client_tls(t);
			return;
		}
		/* The upstream's: the client is told (term_upstream_tls). */
		t->upstream.failed = 2;
		term_run(t);
		return;
	case TERM_HTTP:
	case TERM_RAW:
		break;
	}
	idle = conf->idle_timeout_ms;
	event_base_gettimeofday_cached(c->px->base, &now);
	timersub(&now, &c->last_active, &d);
	elapsed = d.tv_sec * 1000 + d.tv_usec / 1000;
	if (elapsed >= idle)
		conn_close(c, t->closing != NULL ? "flush-timeout" :
		    "idle-timeout");
	else
		conn_timer_set(c, (int)(idle - elapsed));
}

static void
term_event_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	term_run(arg);
}

/*
 * One pass: TLS writes and reads on both ends, then the exchange
 * between them, again while anything moved; then wait for what the
 * ends want.
 */
static void
term_run(struct term *t)
{
	struct term_end *e;
	int i;

	do {
		t->moved = 0;
		if (term_io(t, &t->client) == -2 ||
		    term_io(t, &t->upstream) == -2)
			return;
		if (term_step(t) == -1)
			return;
	} while (t->moved);
	for (i = 0; i < 2; i++) {
		e = i == 0 ? &t->client : &t->upstream;
		if (e->want_r)
			event_add(e->rev, NULL);
		else
			event_del(e->rev);
		if (e->want_w)
			event_add(e->wev, NULL);
		else
			event_del(e->wev);
	}
}

/* What a module call answered: wait for it, or note the end's fate. */
static int
term_want(struct term_end *e, ssize_t r)
{
	switch (r) {
	case TLSMOD_WANT_READ:
		e->want_r = 1;
		return 0;
	case TLSMOD_WANT_WRITE:
		e->want_w = 1;
		return 0;
	case TLSMOD_CLOSED:
		if (!e->hs_done) {
			e->failed = 1;
			return -1;
		}
		e->eof = 1;
		e->t->moved = 1;
		return 0;
	default:
		e->failed = 1;
		return -1;
	}
}

/*
 * End e's TLS: its handshake, then writing what waits for it and
 * reading while it holds less than TERM_HIGH.  0; -1 when it failed
 * (e->failed); -2 when the connection was closed.
 */
static int
term_io(struct term *t, struct term_end *e)
{
	const struct tlsmod_ops *ops = t->c->px->tls;
	struct conn *c = t->c;
	struct evbuffer_iovec v;
	unsigned char *p;
	uint64_t left;
	size_t n, max;
	ssize_t r;

	e->want_r = e->want_w = 0;
	if (e->failed || e->tls == NULL)
		return e->failed ? -1 : 0;
	if (!e->hs_done) {
		r = ops->handshake(e->tls);
		if (r != 0)
			return term_want(e, r);
		e->hs_done = 1;
		t->moved = 1;
	}
	while ((n = evbuffer_get_length(e->out)) > 0) {
		if (n > TERM_READ)
			n = TERM_READ;
		/*
		 * The first chain as it is when it holds a record's worth
		 * (or all there is): a pullup across chains would copy
		 * every byte once more, into memory allocated for it.
		 */
		if (evbuffer_peek(e->out, -1, NULL, &v, 1) == 1 &&
		    (v.iov_len >= n || v.iov_len >= TERM_WRITE_MIN)) {
			p = v.iov_base;
			if (v.iov_len < n)
				n = v.iov_len;
		} else if ((p = evbuffer_pullup(e->out,
		    (ev_ssize_t)n)) == NULL) {
			conn_close(c, "out-of-memory");
			return -2;
		}
		r = ops->write(e->tls, p, n);
		if (r <= 0) {
			if (term_want(e, r) == -1)
				return -1;
			break;
		}
		evbuffer_drain(e->out, (size_t)r);
		t->moved = 1;
		conn_touch(c);
	}
	while (!e->eof && evbuffer_get_length(e->in) < TERM_HIGH) {
		max = TERM_READ;
		if (e == &t->client) {
			/* network.budget: no byte past the host's bytes up. */
			left = budget_left(c);
			if (left == 0) {
				unsigned char b;

				r = ops->read(e->tls, &b, 1);
				if (r > 0) {
					budget_cross(c);
					return -2;
				}
				if (term_want(e, r) == -1)
					return -1;
				break;
			}
			if (left < max)
				max = (size_t)left;
		}
		if (evbuffer_reserve_space(e->in, (ev_ssize_t)max, &v, 1) < 1) {
			conn_close(c, "out-of-memory");
			return -2;
		}
		if (v.iov_len > max)
			v.iov_len = max;
		r = ops->read(e->tls, v.iov_base, v.iov_len);
		if (r <= 0) {
			v.iov_len = 0;
			evbuffer_commit_space(e->in, &v, 0);
			if (term_want(e, r) == -1)
				return -1;
			break;
		}
		v.iov_len = (size_t)r;
		evbuffer_commit_space(e->in, &v, 1);
		*e->bytes += (uint64_t)r;
		if (e == &t->client)
			budget_spend(c, (uint64_t)r);
		t->moved = 1;
		conn_touch(c);
	}
	return 0;
}

/* After the ends' I/O: the handshakes' outcome, or the exchange. */
static int
term_step(struct term *t)
{
	struct conn *c = t->c;
	const struct tlsmod_ops *ops = c->px->tls;

	if (t->phase == TERM_HANDSHAKE) {
		if (t->client.failed) {
			conn_error(c, "%s", ops->error(t->client.tls));
			term_client_tls(t);
			return -1;
		}
		if (!t->client.hs_done)
			return 0;
		if (!t->upstream.hs_done && !t->upstream.failed)
			return 0;
		t->phase = TERM_HTTP;
		t->moved = 1;
		conn_timer_set(c, conn_config(c)->idle_timeout_ms);
	}
	if (t->closing != NULL) {
		if (evbuffer_get_length(t->client.out) > 0 &&
		    !t->client.failed && !t->client.eof)
			return 0;
		if (!t->client.failed)
			(void)ops->shutdown(t->client.tls);
		conn_close(c, t->closing);
		return -1;
	}
	if (t->client.failed) {
		conn_error(c, "%s", ops->error(t->client.tls));
		conn_close(c, "client-error");
		return -1;
	}
	if (t->upstream.failed && t->upstream.hs_done) {
		conn_error(c, "%s", ops->error(t->upstream.tls));
		conn_close(c, "upstream-error");
		return -1;
	}
	return t->phase == TERM_RAW ? term_raw(t) : term_http(t);
}

/* The exchange: the next request, its body, its response. */
static int
term_http(struct term *t)
{
	struct term_end *cl = &t->client, *up = &t->upstream;
	char body[600];

	if (t->rq == TRQ_HEAD && t->rs == TRS_IDLE &&
	    evbuffer_get_length(cl->in) > 0 && term_read_request(t) == -1)
		return -1;
	if (t->closing != NULL || t->phase != TERM_HTTP)
		return 0;
	if (t->rq == TRQ_BODY) {
		if (term_body(t, &t->req, cl) == -1)
			return -1;
		if (t->closing != NULL)
			return 0;
		if (t->req.done) {
			t->rq = TRQ_WAIT;
			t->moved = 1;
		}
	}
	if (t->rs == TRS_HEAD && evbuffer_get_length(up->in) > 0 &&
	    term_read_response(t) == -1)
		return -1;
	if (t->closing != NULL || t->phase != TERM_HTTP)
		return 0;
	if (t->rs == TRS_BODY) {
		if (term_body(t, &t->resp, up) == -1)
			return -1;
		if (t->closing != NULL)
			return 0;
		if (t->resp.done) {
			/* The response is whole: the next request, or the end. */
			term_body_reset(&t->resp);
			t->rs = TRS_IDLE;
			t->moved = 1;
			if (t->close_after || t->rq != TRQ_WAIT) {
				t->closing = "eof";
				return 0;
			}
			term_body_reset(&t->req);
			t->rq = TRQ_HEAD;
			t->nreq++;
		}
	}
	/* Ends of stream, where they fall. */
	if (cl->eof && evbuffer_get_length(cl->in) == 0) {
		if (t->rq == TRQ_HEAD && t->rs == TRS_IDLE) {
			t->closing = "eof";
			t->moved = 1;
		} else if (t->rq == TRQ_BODY) {
			conn_close(t->c, "client-eof");
			return -1;
		} else
			t->close_after = 1;
	} else if (cl->eof && t->rq == TRQ_HEAD && t->rs == TRS_IDLE &&
	    !t->moved) {
		/* A partial request head, and no more will come. */
		conn_close(t->c, "client-eof");
		return -1;
	}
	if (up->eof && evbuffer_get_length(up->in) == 0) {
		if (t->rs == TRS_HEAD) {
			snprintf(body, sizeof(body), "pisbx: %s:%u closed the "
			    "connection without answering\n", t->c->host.text,
			    t->c->port);
			return term_refuse(t, 502, "upstream-eof", NULL, NULL,
			    body);
		}
		if (t->rs == TRS_BODY && !t->resp.done) {
			conn_close(t->c, "upstream-eof");
			return -1;
		}
		if (t->rs == TRS_IDLE && t->closing == NULL) {
			/* The server ended its keep-alive: so does the client. */
			t->closing = "upstream-eof";
			t->moved = 1;
		}
	}
	return 0;
}

/*
 * After 101 Switching Protocols: bytes both ways as they are, the
 * client's still searched for placeholders (a leak closes the tunnel).
 */
static int
term_raw(struct term *t)
{
	struct term_end *e;
	const struct cred *leak;
	struct evbuffer_iovec v[16];
	size_t n;
	int i, j;

	for (i = 0; i < 2; i++) {
		e = i == 0 ? &t->client : &t->upstream;
		if ((n = evbuffer_get_length(e->in)) == 0)
			continue;
		if (e == &t->client && term_has_creds(t)) {
			int nv = evbuffer_peek(e->in, -1, NULL, v, 16);

			for (j = 0; j < nv && j < 16; j++) {
				leak = cred_scan(t->c->px->creds, &t->scan,
				    v[j].iov_base, v[j].iov_len);
				if (leak != NULL) {
					conn_cred_leak(t->c, leak, "in an "
					    "upgraded connection's bytes");
					conn_close(t->c, "credential-leak");
					return -1;
				}
			}
			n = 0;
			for (j = 0; j < nv && j < 16; j++)
				n += v[j].iov_len;
		}
		if (e == &t->upstream && t->resp.cs != NULL) {
			if (term_raw_hide(t, n) == -1)
				return -1;
			term_flush_later(t);
			t->moved = 1;
			continue;
		}
		evbuffer_remove_buffer(e->in, e->dst->out, n);
		t->moved = 1;
	}
	/* The hide stream holds back a possible start: out at the end. */
	if (t->upstream.eof && t->resp.cs != NULL &&
	    evbuffer_get_length(t->upstream.in) == 0 && !t->resp.done) {
		if (term_raw_hide(t, 0) == -1)
			return -1;
		t->resp.done = 1;
	}
	for (i = 0; i < 2; i++) {
		e = i == 0 ? &t->client : &t->upstream;
		if (e->eof && evbuffer_get_length(e->in) == 0 &&
		    evbuffer_get_length(e->dst->out) == 0 && !e->dst->shut &&
		    !e->dst->failed) {
			(void)t->c->px->tls->shutdown(e->dst->tls);
			e->dst->shut = 1;
		}
	}
	if (t->client.eof && t->upstream.eof &&
	    evbuffer_get_length(t->client.out) == 0 &&
	    evbuffer_get_length(t->upstream.out) == 0) {
		conn_close(t->c, "eof");
		return -1;
	}
	return 0;
}

/*
 * n of the server's raw bytes (after 101) to the client, each value in
 * them as its placeholder; n 0 at its end of stream flushes what the
 * stream held back.  0, or -1: closed.
 */
static int
term_raw_hide(struct term *t, size_t n)
{
	const struct cred *leak = NULL;
	const char *p = "";	/* the end's feed: no bytes, but not NULL */
	char *out = NULL;
	size_t olen = 0;

	if (n > 0 && (p = (const char *)evbuffer_pullup(t->upstream.in,
	    (ev_ssize_t)n)) == NULL)
		goto oom;
	if (cred_stream_feed(t->resp.cs, p, n, n == 0, &out, &olen,
	    &leak) < 0)
		goto oom;
	if (olen > 0 && evbuffer_add(t->client.out, out, olen) == -1)
		goto oom;
	free(out);
	evbuffer_drain(t->upstream.in, n);
	return 0;
oom:
	free(out);
	conn_close(t->c, "out-of-memory");
	return -1;
}

/* A request head, if a whole one is there.  0, or -1: closed. */
static int
term_read_request(struct term *t)
{
	struct evbuffer *in = t->client.in;
	struct http_msg m;
	size_t len = evbuffer_get_length(in);
	const char *p;
	ssize_t n;
	char body[300];

	if (len > HTTP_HEAD_MAX + 1)
		len = HTTP_HEAD_MAX + 1;
	if ((p = (const char *)evbuffer_pullup(in, (ev_ssize_t)len)) ==
	    NULL) {
		conn_close(t->c, "out-of-memory");
		return -1;
	}
	n = http_parse_request(p, len, &m);
	if (n == 0)
		return 0;
	t->moved = 1;
	if (n > 0 && t->upstream.failed) {
		snprintf(t->method, sizeof(t->method), "%.*s",
		    (int)(m.methodlen < sizeof(t->method) ? m.methodlen :
		    sizeof(t->method) - 1), m.method);
		term_log_path(t, m.target, m.targetlen);
		return term_upstream_tls(t);
	}
	if (n < 0) {
		snprintf(t->method, sizeof(t->method), "-");
		snprintf(t->path, sizeof(t->path), "-");
		snprintf(body, sizeof(body), "pisbx: %s\n", m.errmsg);
		return term_refuse(t, m.error, "bad-request", NULL, NULL, body);
	}
	return term_request(t, &m, (size_t)n);
}

/* Whether host:port is the tunnel's target. */
static int
term_same_host(const struct conn *c, const struct host *h, uint16_t port)
{
	return h->kind == c->host.kind && strcmp(h->text, c->host.text) == 0 &&
	    port == c->port;
}

/*
 * A request head m of headlen bytes: checked (target, Host, rules),
 * credentials swapped, and sent on.  0, or -1: closed.
 */
static int
term_request(struct term *t, struct http_msg *m, size_t headlen)
{
	struct conn *c = t->c;
	struct proxy *px = c->px;
	const struct config *conf = conn_config(c);
	const struct cred_table *tbl = px->creds;
	const struct req_rule *rule = NULL;
	const struct req_host *entry = NULL;
	const struct cred *leak = NULL;
	const struct http_header *hd, *host_hd = NULL;
	const char *path, *errstr = NULL, *auth;
	char body[2048], *canon = NULL, *out = NULL;
	struct evbuffer *head = NULL;
	struct host h;
	uint16_t port;
	size_t pathlen, authlen, olen, i, nhost = 0;
	int creds = term_has_creds(t), identity, r, ret = -1;

	memset(t->used, 0, sizeof(t->used));
	t->rule = NULL;
	t->rule_source = NULL;
	t->rule_layer = NULL;
	snprintf(t->method, sizeof(t->method), "%.*s", (int)(m->methodlen <
	    sizeof(t->method) ? m->methodlen : sizeof(t->method) - 1),
	    m->method);
	term_log_path(t, m->target, m->targetlen);
	t->head_req = http_token_eq(m->method, m->methodlen, "HEAD");
	t->client_minor = m->minor;
	t->close_after = m->conn_close || (m->minor == 0 &&
	    !m->conn_keepalive);
	t->upgrade = 0;

	/* The target: origin-form, or absolute-form naming the tunnel's host. */
	path = m->target;
	pathlen = m->targetlen;
	if (pathlen > 8 && strncasecmp(path, "https://", 8) == 0) {
		auth = path + 8;
		for (authlen = 0; authlen < pathlen - 8 && auth[authlen] !=
		    '/' && auth[authlen] != '?'; authlen++)
			;
		if (target_parse(auth, authlen, 443, &h, &port, &errstr) ==
		    -1 || !term_same_host(c, &h, port)) {
			snprintf(body, sizeof(body), "pisbx: the request's "
			    "target \"%.*s\" names another host than the "
			    "tunnel's, %s:%u\n", (int)(authlen > 300 ? 300 :
			    authlen), auth, c->host.text, c->port);
			return term_refuse(t, 421, "host-mismatch", NULL, NULL,
			    body);
		}
		path = auth + authlen;
		pathlen = m->targetlen - 8 - authlen;
	} else if (!(pathlen > 0 && path[0] == '/') && !(pathlen == 1 &&
	    path[0] == '*' && http_token_eq(m->method, m->methodlen,
	    "OPTIONS"))) {
		return term_refuse(t, 400, "bad-request", NULL, NULL,
		    "pisbx: the request target must be a path (origin-form)\n");
	}

	/* Host: the tunnel's host (the port may go unsaid when 443). */
	for (i = 0; i < m->nh; i++)
		if (http_token_eq(m->h[i].name, m->h[i].namelen, "host")) {
			host_hd = &m->h[i];
			nhost++;
		}
	if (nhost > 1 || (nhost == 0 && m->minor == 1))
		return term_refuse(t, 400, "bad-request", NULL, NULL,
		    nhost > 1 ? "pisbx: several Host header fields\n" :
		    "pisbx: an HTTP/1.1 request needs a Host header field\n");
	if (host_hd != NULL && (target_parse(host_hd->value, host_hd->valuelen,
	    443, &h, &port, &errstr) == -1 || !term_same_host(c, &h, port))) {
		snprintf(body, sizeof(body), "pisbx: the request's Host "
		    "\"%.*s\" is not the tunnel's host %s:%u: a tunnel carries "
		    "requests for the host it was opened to\n",
		    (int)(host_hd->valuelen > 300 ? 300 : host_hd->valuelen),
		    host_hd->value, c->host.text, c->port);
		return term_refuse(t, 421, "host-mismatch", NULL, NULL, body);
	}

	/* network.requestRules on method and path. */
	if (config_has_request_rules(conf, &c->host, c->port)) {
		if ((canon = malloc(pathlen + 2)) == NULL)
			goto oom;
		if (request_path_canon(path, pathlen, canon, pathlen + 2,
		    &errstr) == -1) {
			free(canon);
			snprintf(body, sizeof(body), "pisbx: the request target "
			    "could name another path to the server than as "
			    "spelled (%s): refused where network.requestRules "
			    "apply\n", errstr != NULL ? errstr : "?");
			term_tell(t, "ambiguous-target", body, "send the "
			    "path as the server reads it (no dot segments, "
			    "\"//\" or encoded \"/\")");
			return term_refuse(t, 400, "ambiguous-target", NULL,
			    NULL, body);
		}
		if (config_request_rule(conf, &c->host, c->port, t->method,
		    canon, &rule, &entry) == REQ_DENY) {
			free(canon);
			t->rule_layer = entry != NULL ? entry->layer : NULL;
			if (rule != NULL)
				snprintf(body, sizeof(body), "pisbx: %s %s is "
				    "refused by the request rule \"%s\" (%s)\n",
				    t->method, t->path, rule->text,
				    rule->source);
			else
				snprintf(body, sizeof(body), "pisbx: %s %s "
				    "matches no request rule of %s, and its "
				    "\"unmatched\" is \"deny\" (%s)\n",
				    t->method, t->path, c->host.text,
				    entry != NULL ? entry->source : "?");
			term_tell(t, "request-rule", body, "change or remove "
			    "the rule in network.requestRules if the request "
			    "is one the command should make");
			return term_refuse(t, 403, "request-rule",
			    rule != NULL ? rule->text : "unmatched",
			    rule != NULL ? rule->source : entry != NULL ?
			    entry->source : NULL, body);
		}
		free(canon);
		t->rule = rule;
		t->rule_source = rule != NULL ? rule->source : NULL;
		t->rule_layer = rule != NULL && entry != NULL ? entry->layer :
		    NULL;
	}

	/*
	 * A placeholder is swapped in a target, a header value or a body
	 * only: in the method or a header name it goes nowhere (conf NULL:
	 * no credential may be injected there).
	 */
	if (creds) {
		r = cred_swap_buf(tbl, NULL, NULL, 0, m->method, m->methodlen,
		    &out, &olen, &leak);
		for (i = 0; r >= 0 && i < m->nh; i++) {
			free(out);
			r = cred_swap_buf(tbl, NULL, NULL, 0, m->h[i].name,
			    m->h[i].namelen, &out, &olen, &leak);
		}
		free(out);
		out = NULL;
		if (r == -1)
			return term_leak(t, leak, CRED_FIT_ANY);
		if (r < 0)
			goto oom;
	}

	/* The upstream's head: origin-form, the checked Host, no hops. */
	if ((head = evbuffer_new()) == NULL)
		goto oom;
	evbuffer_add(head, m->method, m->methodlen);
	evbuffer_add(head, " ", 1);
	if (pathlen == 0 || path[0] == '?')
		evbuffer_add(head, "/", 1);
	if (creds && pathlen > 0) {
		r = cred_swap_target(tbl, conf, &c->host, c->port, path,
		    pathlen, &out, &olen, &leak);
		if (r == -1) {
			evbuffer_free(head);
			return term_leak(t, leak, CRED_FIT_TARGET);
		}
		if (r < 0)
			goto oom;
		if (r > 0)
			cred_mark(tbl, path, pathlen, t->used);
		evbuffer_add(head, out, olen);
		free(out);
		out = NULL;
	} else
		evbuffer_add(head, path, pathlen);
	evbuffer_add_printf(head, " HTTP/1.1\r\nHost: %s", c->host.text);
	if (c->port != 443)
		evbuffer_add_printf(head, ":%u", c->port);
	evbuffer_add(head, "\r\n", 2);
	/*
	 * Where a value may go, what comes back must be readable to be
	 * hidden: the server is asked for no compression.
	 */
	identity = creds && term_injects_here(t);
	if (identity)
		evbuffer_add_printf(head, "Accept-Encoding: identity\r\n");
	for (i = 0; i < m->nh; i++) {
		hd = &m->h[i];
		if (term_hop(m, hd, 1) || (identity && http_token_eq(hd->name,
		    hd->namelen, "accept-encoding")))
			continue;
		evbuffer_add(head, hd->name, hd->namelen);
		evbuffer_add(head, ": ", 2);
		if (!creds) {
			evbuffer_add(head, hd->value, hd->valuelen);
			evbuffer_add(head, "\r\n", 2);
			continue;
		}
		r = cred_swap_header(tbl, conf, &c->host, c->port, hd->name,
		    hd->namelen, hd->value, hd->valuelen, &out, &olen, &leak);
		if (r == -1) {
			evbuffer_free(head);
			return term_leak(t, leak, CRED_FIT_HEADER);
		}
		if (r < 0)
			goto oom;
		if (r > 0)
			cred_mark_header(tbl, hd->name, hd->namelen, hd->value,
			    hd->valuelen, t->used);
		evbuffer_add(head, out, olen);
		evbuffer_add(head, "\r\n", 2);
		free(out);
		out = NULL;
	}
	/* Upgrade (websocket): the one hop-by-hop pair that goes on. */
	for (i = 0; i < m->nh; i++)
		if (http_token_eq(m->h[i].name, m->h[i].namelen, "upgrade")) {
			evbuffer_add_printf(head, "Connection: Upgrade\r\n"
			    "Upgrade: %.*s\r\n", (int)m->h[i].valuelen,
			    m->h[i].value);
			t->upgrade = 1;
			break;
		}
	if (!t->upgrade && t->close_after)
		evbuffer_add_printf(head, "Connection: close\r\n");

	/* The body: swapped unless encoded; re-framed if lengths change. */
	term_body_reset(&t->req);
	if (creds && (m->chunked || (m->has_length && m->length > 0)) &&
	    !term_encoded(m) && (t->req.cs = cred_stream_new(tbl, conf,
	    &c->host, c->port, CRED_INJECT)) == NULL)
		goto oom;
	if (m->chunked) {
		t->req.in = TIN_CHUNKED;
		t->req.out = TOUT_CHUNKED;
		evbuffer_add_printf(head, "Transfer-Encoding: chunked\r\n");
	} else if (m->has_length && m->length > 0) {
		t->req.in = TIN_LENGTH;
		t->req.remaining = m->length;
		if (t->req.cs != NULL &&
		    cred_stream_length_changes(t->req.cs)) {
			t->req.out = TOUT_CHUNKED;
			evbuffer_add_printf(head,
			    "Transfer-Encoding: chunked\r\n");
		} else {
			t->req.out = TOUT_SAME;
			evbuffer_add_printf(head, "Content-Length: %llu\r\n",
			    (unsigned long long)m->length);
		}
	} else {
		t->req.in = TIN_NONE;
		t->req.done = 1;
		if (m->has_length)
			evbuffer_add_printf(head, "Content-Length: 0\r\n");
	}
	evbuffer_add(head, "\r\n", 2);
	evbuffer_drain(t->client.in, headlen);
	if (evbuffer_add_buffer(t->upstream.out, head) == -1)
		goto oom;
	evbuffer_free(head);
	head = NULL;
	t->rq = t->req.done ? TRQ_WAIT : TRQ_BODY;
	t->rs = TRS_HEAD;
	return 0;
oom:
	free(out);
	if (head != NULL)
		evbuffer_free(head);
	conn_close(c, "out-of-memory");
	return ret;
}

/* A response head, if a whole one is there.  0, or -1: closed. */
static int
term_read_response(struct term *t)
{
	struct conn *c = t->c;
	struct evbuffer *in = t->upstream.in, *head = NULL;
	struct term_body *b = &t->resp;
	const struct http_header *hd;
	struct http_msg m;
	size_t len = evbuffer_get_length(in), i, olen = 0;
	const char *p;
	char *out = NULL, body[600];
	ssize_t n;
	int nobody, info, keep_len = 0;

	if (len > HTTP_HEAD_MAX + 1)
		len = HTTP_HEAD_MAX + 1;
	if ((p = (const char *)evbuffer_pullup(in, (ev_ssize_t)len)) ==
	    NULL)
		goto oom;
	n = http_parse_response(p, len, &m);
	if (n == 0)
		return 0;
	t->moved = 1;
	if (n < 0) {
		snprintf(body, sizeof(body), "pisbx: %s:%u sent a malformed "
		    "response (%s)\n", c->host.text, c->port, m.errmsg);
		return term_refuse(t, 502, "bad-response", NULL, NULL, body);
	}
	info = m.status >= 100 && m.status < 200;
	if (m.status == 101 && !t->upgrade)
		return term_refuse(t, 502, "bad-response", NULL, NULL,
		    "pisbx: the server switched protocols unasked\n");
	nobody = info || m.status == 204 || m.status == 304 || t->head_req;
	if ((head = evbuffer_new()) == NULL)
		goto oom;
	evbuffer_add(head, m.statusline, m.statuslinelen);
	evbuffer_add(head, "\r\n", 2);
	term_body_reset(b);
	/*
	 * Hidden whatever its Content-Encoding says: the label is the
	 * server's, the bytes may well be plain (a compressed value does
	 * not come back: term_request asks for identity).
	 */
	if (!nobody && term_has_creds(t) &&
	    (b->cs = cred_stream_new(c->px->creds, conn_config(c), &c->host,
	    c->port, CRED_HIDE)) == NULL)
		goto oom;
	if (nobody) {
		b->in = TIN_NONE;
		/*
		 * A HEAD's or 304's length is the entity's; a 1xx or 204 has
		 * none (RFC 9110 8.6): a client that took one as a length
		 * would read the next response as this one's body.
		 */
		keep_len = !info && m.status != 204;
	} else if (m.chunked) {
		b->in = TIN_CHUNKED;
		b->out = t->client_minor == 1 ? TOUT_CHUNKED : TOUT_EOF;
	} else if (m.has_length && !m.te_other) {
		b->in = m.length > 0 ? TIN_LENGTH : TIN_NONE;
		b->remaining = m.length;
		b->out = TOUT_SAME;
		if (b->cs != NULL && cred_stream_length_changes(b->cs))
			b->out = t->client_minor == 1 ? TOUT_CHUNKED :
			    TOUT_EOF;
	} else {
		b->in = TIN_EOF;
		b->out = TOUT_EOF;
	}
	if (m.conn_close || b->out == TOUT_EOF)
		t->close_after = 1;
	for (i = 0; i < m.nh; i++) {
		hd = &m.h[i];
		if (m.status != 101 && term_hop(&m, hd, 0) &&
		    !(keep_len && http_token_eq(hd->name, hd->namelen,
		    "content-length")))
			continue;
		evbuffer_add(head, hd->name, hd->namelen);
		evbuffer_add(head, ": ", 2);
		evbuffer_add(head, hd->value, hd->valuelen);
		evbuffer_add(head, "\r\n", 2);
	}
	if (!info) {
		if (b->out == TOUT_CHUNKED && b->in != TIN_NONE)
			evbuffer_add_printf(head,
			    "Transfer-Encoding: chunked\r\n");
		else if (b->out == TOUT_SAME && !nobody)
			evbuffer_add_printf(head, "Content-Length: %llu\r\n",
			    (unsigned long long)m.length);
		if (t->close_after)
			evbuffer_add_printf(head, "Connection: close\r\n");
	}
	evbuffer_add(head, "\r\n", 2);
	evbuffer_drain(in, (size_t)n);
	/* What comes back says placeholders, never a value. */
	if (term_has_creds(t)) {
		len = evbuffer_get_length(head);
		if ((p = (const char *)evbuffer_pullup(head,
		    (ev_ssize_t)len)) == NULL ||
		    cred_hide_buf(c->px->creds, p, len, &out, &olen) < 0)
			goto oom;
		evbuffer_add(t->client.out, out, olen);
		free(out);
		out = NULL;
	} else
		evbuffer_add_buffer(t->client.out, head);
	evbuffer_free(head);
	head = NULL;
	if (info && m.status != 101)
		return 0;	/* 100 Continue and the like: the final follows */
	term_log_request(t, m.status, NULL, NULL, NULL, NULL);
	if (m.status == 101) {
		/* The server's raw bytes are hidden as a body's are. */
		if (term_has_creds(t) && (b->cs = cred_stream_new(c->px->creds,
		    conn_config(c), &c->host, c->port, CRED_HIDE)) == NULL)
			goto oom;
		t->phase = TERM_RAW;
		return 0;
	}
	t->rs = TRS_BODY;
	if (b->in == TIN_NONE)
		b->done = 1;
	return 0;
oom:
	free(out);
	if (head != NULL)
		evbuffer_free(head);
	conn_close(c, "out-of-memory");
	return -1;
}

/*
 * Move what from's plaintext holds of body b to its peer, framed as
 * b->out, while the peer holds less than TERM_HIGH.  0, or -1: closed.
 */
static int
term_body(struct term *t, struct term_body *b, struct term_end *from)
{
	struct evbuffer *src = from->in, *dst = from->dst->out;
	const char *p, *data;
	size_t len, n, dlen;
	uint64_t hdr;
	ssize_t used;
	int mv;

	while (!b->done && evbuffer_get_length(dst) < TERM_HIGH) {
		len = evbuffer_get_length(src);
		switch (b->in) {
		case TIN_NONE:
			b->done = 1;
			break;
		case TIN_LENGTH:
			if (len == 0)
				return 0;
			n = len < TERM_BODY_STEP ? len : TERM_BODY_STEP;
			if (n > b->remaining)
				n = (size_t)b->remaining;
			if ((mv = term_move(b, src, dst, n)) == -1)
				goto oom;
			if (mv == 1) {
				if ((p = (const char *)evbuffer_pullup(src,
				    (ev_ssize_t)n)) == NULL)
					goto oom;
				if (term_emit(t, b, p, n, n == b->remaining,
				    dst) == -1)
					return -1;
				if (t->closing != NULL)
					return 0;
				evbuffer_drain(src, n);
			}
			b->remaining -= n;
			if (b->remaining == 0)
				b->done = 1;
			break;
		case TIN_CHUNKED:
			if (len == 0)
				return 0;
			n = len < TERM_BODY_STEP ? len : TERM_BODY_STEP;
			if ((p = (const char *)evbuffer_pullup(src,
			    (ev_ssize_t)n)) == NULL)
				goto oom;
			used = chunk_step(&b->dec, p, n, &data, &dlen, &hdr);
			if (used < 0) {
				conn_error(t->c, "malformed chunked body from "
				    "the %s", from == &t->client ? "client" :
				    "server");
				conn_close(t->c, "bad-chunk");
				return -1;
			}
			if (used == 0)
				return 0;
			if (dlen > 0 && term_emit(t, b, data, dlen, 0,
			    dst) == -1)
				return -1;
			if (t->closing != NULL)
				return 0;
			evbuffer_drain(src, (size_t)used);
			if (b->dec.state == CHUNK_DONE) {
				if (term_emit(t, b, NULL, 0, 1, dst) == -1)
					return -1;
				b->done = 1;
			}
			break;
		case TIN_EOF:
			if (len == 0 && !from->eof)
				return 0;
			if (len == 0) {
				if (term_emit(t, b, NULL, 0, 1, dst) == -1)
					return -1;
				b->done = 1;
				break;
			}
			n = len < TERM_BODY_STEP ? len : TERM_BODY_STEP;
			if ((mv = term_move(b, src, dst, n)) == -1)
				goto oom;
			if (mv == 0)
				break;
			if ((p = (const char *)evbuffer_pullup(src,
			    (ev_ssize_t)n)) == NULL)
				goto oom;
			if (term_emit(t, b, p, n, 0, dst) == -1)
				return -1;
			if (t->closing != NULL)
				return 0;
			evbuffer_drain(src, n);
			break;
		}
		t->moved = 1;
	}
	return 0;
oom:
	conn_close(t->c, "out-of-memory");
	return -1;
}

/*
 * n body bytes from src to dst when nothing is to be done to them (no
 * credential stream, no re-framing): libevent moves the chains, no byte
 * is copied.  0 when moved, 1 when term_emit must see them, -1 when
 * out of memory (not moved).
 */
static int
term_move(struct term_body *b, struct evbuffer *src, struct evbuffer *dst,
    size_t n)
{
	if (b->cs != NULL || b->out == TOUT_CHUNKED)
		return 1;
	return evbuffer_remove_buffer(src, dst, n) == (int)n ? 0 : -1;
}

/*
 * n body bytes (final: the body's last) to dst: through the body's
 * credential stream, then framed.  0; -1: closed.  A leak leaves the
 * tunnel closing (t->closing).
 */
static int
term_emit(struct term *t, struct term_body *b, const char *data, size_t n,
    int final, struct evbuffer *dst)
{
	const struct cred *leak = NULL;
	char *out = NULL, join[2 * CRED_PLACEHOLDER_MIN];
	size_t olen = 0, k;
	int r;

	if (b->cs != NULL) {
		/* The last feed of a chunked body has no bytes: not NULL. */
		r = cred_stream_feed(b->cs, data != NULL ? data : "", n, final,
		    &out, &olen, &leak);
		if (r == -1) {
			free(out);
			return term_leak(t, leak, CRED_FIT_ANY);
		}
		if (r < 0) {
			free(out);
			conn_close(t->c, "out-of-memory");
			return -1;
		}
		if (b == &t->resp && !final)
			term_flush_later(t);
		if (r > 0 && b == &t->req) {
			/* Which ones: this piece, and across the last one's end. */
			cred_mark(t->c->px->creds, data, n, t->used);
			k = n < CRED_PLACEHOLDER_MIN - 1 ? n :
			    CRED_PLACEHOLDER_MIN - 1;
			memcpy(join, b->tail, b->ntail);
			if (k > 0)
				memcpy(join + b->ntail, data, k);
			cred_mark(t->c->px->creds, join, b->ntail + k,
			    t->used);
		}
		if (b == &t->req && n > 0) {
			k = n < CRED_PLACEHOLDER_MIN - 1 ? n :
			    CRED_PLACEHOLDER_MIN - 1;
			memcpy(b->tail, data + n - k, k);
			b->ntail = k;
		}
		data = out;
		n = olen;
	}
	if (b->out == TOUT_CHUNKED) {
		if (n > 0) {
			evbuffer_add_printf(dst, "%zx\r\n", n);
			evbuffer_add(dst, data, n);
			evbuffer_add(dst, "\r\n", 2);
		}
		if (final)
			evbuffer_add(dst, "0\r\n\r\n", 5);
	} else if (n > 0)
		evbuffer_add(dst, data, n);
	free(out);
	return 0;
}

/* Let what the response's hide stream holds go in TERM_FLUSH_MS. */
static void
term_flush_later(struct term *t)
{
	static const struct timeval tv = { 0, TERM_FLUSH_MS * 1000 };

	evtimer_add(t->flush_ev, &tv);
}

/*
 * Nothing more came from the server for TERM_FLUSH_MS: the bytes its
 * hide stream held back (they could have begun a value) go to the
 * client.  A value the server splits with a pause goes out unhidden;
 * the server has the value anyway, and the client must not wait on it.
 */
static void
term_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct term *t = arg;
	struct term_body *b = &t->resp;
	const struct cred *leak = NULL;
	char *out = NULL;
	size_t olen = 0;

	(void)fd;
	(void)what;
	if (b->cs == NULL || b->done || t->closing != NULL)
		return;
	if (t->phase == TERM_RAW) {
		if (term_raw_hide(t, 0) == -1)
			return;
	} else if (t->phase == TERM_HTTP && t->rs == TRS_BODY) {
		if (cred_stream_feed(b->cs, "", 0, 1, &out, &olen,
		    &leak) < 0) {
			free(out);
			conn_close(t->c, "out-of-memory");
			return;
		}
		if (olen > 0 && b->out == TOUT_CHUNKED)
			evbuffer_add_printf(t->client.out, "%zx\r\n", olen);
		if (olen > 0)
			evbuffer_add(t->client.out, out, olen);
		if (olen > 0 && b->out == TOUT_CHUNKED)
			evbuffer_add(t->client.out, "\r\n", 2);
		free(out);
	} else
		return;
	term_run(t);
}

static void
term_body_reset(struct term_body *b)
{
	if (b->cs != NULL)
		cred_stream_free(b->cs);
	memset(b, 0, sizeof(*b));
}

/*
 * Whether header hd of m stays on this hop: the fixed hop-by-hop list,
 * what Connection names, and (ours to write) Host, Content-Length.
 */
static int
term_hop(const struct http_msg *m, const struct http_header *hd,
    int request)
{
	static const char *const hop[] = {
		"connection", "keep-alive", "proxy-connection",
		"proxy-authorization", "proxy-authenticate", "te", "trailer",
		"transfer-encoding", "upgrade", "content-length", NULL
	};
	char name[128];
	size_t i;

	for (i = 0; hop[i] != NULL; i++)
		if (http_token_eq(hd->name, hd->namelen, hop[i]))
			return 1;
	if (request && http_token_eq(hd->name, hd->namelen, "host"))
		return 1;
	if (hd->namelen >= sizeof(name))
		return 0;
	memcpy(name, hd->name, hd->namelen);
	name[hd->namelen] = '\0';
	for (i = 0; i < m->nh; i++)
		if (http_token_eq(m->h[i].name, m->h[i].namelen,
		    "connection") && http_list_has(m->h[i].value,
		    m->h[i].valuelen, name))
			return 1;
	return 0;
}

/* Whether m's body has a Content-Encoding other than identity. */
static int
term_encoded(const struct http_msg *m)
{
	size_t i;

	for (i = 0; i < m->nh; i++)
		if (http_token_eq(m->h[i].name, m->h[i].namelen,
		    "content-encoding") && !http_token_eq(m->h[i].value,
		    m->h[i].valuelen, "identity"))
			return 1;
	return 0;
}

/* Whether some credential's value may be injected in this tunnel. */
static int
term_injects_here(const struct term *t)
{
	const struct conn *c = t->c;

	return cred_injects_any(c->px->creds, conn_config(c), &c->host,
	    c->port);
}

static int
term_has_creds(const struct term *t)
{
	return t->c->px->creds != NULL &&
	    cred_table_count(t->c->px->creds) > 0;
}

/*
 * The request's path as logged: the path, and of the query its keys
 * only ("/p?key1&key2") -- a query value may be a token.
 */
static void
term_log_path(struct term *t, const char *p, size_t len)
{
	size_t i, o = 0, max = sizeof(t->path) - 1;
	int in_value = 0, in_query = 0;

	for (i = 0; i < len && o < max; i++) {
		if (!in_query && p[i] == '?')
			in_query = 1;
		else if (in_query && p[i] == '&')
			in_value = 0;
		else if (in_query && p[i] == '=') {
			in_value = 1;
			continue;
		} else if (in_value)
			continue;
		t->path[o++] = p[i];
	}
	t->path[o] = '\0';
}

/* The request's access-log record. */
static void
term_log_request(struct term *t, int status, const char *reason,
    const char *rule, const char *source, const char *error)
{
	struct conn *c = t->c;
	struct alog_rec r;
	const char *names[CRED_MAX];
	size_t i, n = 0, count;

	memset(&r, 0, sizeof(r));
	r.request = 1;
	r.conn = c->id;
	r.proto = conn_proto_name(c->proto);
	r.client = c->client_name;
	r.user = c->user;
	r.host = c->host.text;
	r.port = c->port;
	r.method = t->method;
	r.path = t->path;
	r.status = status;
	r.reason = reason;
	if (rule == NULL && reason == NULL && t->rule != NULL) {
		rule = t->rule->text;
		source = t->rule_source;
	}
	r.rule = rule;
	r.source = source;
	/* The layer of a request rule's entry (not of a credential). */
	if (reason == NULL || strcmp(reason, "request-rule") == 0)
		r.layer = t->rule_layer;
	r.error = error;
	r.tls = "terminated";
	count = term_has_creds(t) ? cred_table_count(c->px->creds) : 0;
	for (i = 0; i < count && i < CRED_MAX; i++)
		if (t->used[i])
			names[n++] = cred_table_get(c->px->creds, i)->name;
	r.injected = names;
	r.ninjected = n;
	accesslog_write(c->px->alog, &r);
	/* pisbx-run's summary: what went in, for requests that went. */
	if (reason == NULL && n > 0)
		conn_cred_injected(c, t->used);
	log_info("conn %llu: %s %s:%u %s %s %d%s%s",
	    (unsigned long long)c->id, conn_proto_name(c->proto),
	    c->host.text, c->port, t->method, t->path, status,
	    reason != NULL ? " " : "", reason != NULL ? reason : "");
}

/*
 * Answer the request ourselves (status, X-Pisbx-Reason: reason, body),
 * log it, and close the tunnel once the answer is out: what the client
 * sent after it is not read.  0, or -1: closed.
 */
static int
term_refuse(struct term *t, int status, const char *reason,
    const char *rule, const char *source, const char *body)
{
	struct conn *c = t->c;
	char error[700];
	size_t n;

	n = strlen(body);
	snprintf(error, sizeof(error), "%.*s", (int)(n > 0 && body[n - 1] ==
	    '\n' ? n - 1 : n), body);
	term_log_request(t, status, reason, rule, source, error);
	evbuffer_add_printf(t->client.out, "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n"
	    "X-Pisbx-Reason: %s\r\n\r\n%s", status, http_status_text(status),
	    n, reason, body);
	conn_error(c, "%s", error);
	t->closing = reason;
	t->moved = 1;
	/* A half-sent request (a body leak) must not complete upstream. */
	if (t->rq == TRQ_BODY) {
		struct linger lg = { 1, 0 };

		setsockopt(t->upstream.fd, SOL_SOCKET, SO_LINGER, &lg,
		    sizeof(lg));
	}
	return 0;
}

/*
 * Tell pisbx-run's summary (proxy_opts.refused) of a refused request:
 * detail is the 403/400 body, which the summary's line shows before
 * what to change.
 */
static void
term_tell(struct term *t, const char *reason, const char *detail,
    const char *hint)
{
	struct conn *c = t->c;
	struct proxy_refusal r;
	char d[700], h[1000];
	size_t n;

	if (c->px->refused == NULL)
		return;
	if (strncmp(detail, "pisbx: ", 7) == 0)
		detail += 7;
	n = strlen(detail);
	snprintf(d, sizeof(d), "%.*s", (int)(n > 0 && detail[n - 1] == '\n' ?
	    n - 1 : n), detail);
	snprintf(h, sizeof(h), "%s: %s", d, hint);
	memset(&r, 0, sizeof(r));
	r.host = c->host.text;
	r.port = c->port;
	r.proto = conn_proto_name(c->proto);
	r.reason = reason;
	r.detail = d;
	r.hint = h;
	c->px->refused(&r, c->px->refused_arg);
}

/*
 * A placeholder on its way to a host that is not its credential's, or
 * whose value cannot stand where fit says (cred_unfit_why).
 */
static int
term_leak(struct term *t, const struct cred *leak, enum cred_fit fit)
{
	struct conn *c = t->c;
	const char *why;
	char body[700];
	int cut = t->rq == TRQ_BODY;

	why = cred_unfit_why(conn_config(c), leak, &c->host, c->port, fit);
	conn_cred_refuse(c, leak, cut ? "in a request body" :
	    "in a request head", why);
	if (why != NULL)
		snprintf(body, sizeof(body), "pisbx: the request %s carries "
		    "the placeholder of %s, which may go to %s:%u, but %s: %s\n",
		    cut ? "body" : "head", leak->name, c->host.text, c->port,
		    why, cut ? "the request was cut off" :
		    "nothing of it was sent");
	else
		snprintf(body, sizeof(body), "pisbx: the request %s carries "
		    "the placeholder of %s, which may not go to %s:%u (not one "
		    "of its injectHosts): %s\n", cut ? "body" : "head",
		    leak->name, c->host.text, c->port, cut ?
		    "the request was cut off" : "nothing of it was sent");
	/* Nothing of a response has gone to the client: it is told. */
	if (t->rs != TRS_BODY)
		return term_refuse(t, 403, "credential-leak", NULL, NULL, body);
	term_log_request(t, 0, "credential-leak", NULL, NULL, body);
	conn_close(c, "credential-leak");
	return -1;
}

/* The client's TLS handshake failed (conn's error says why). */
static void
term_client_tls(struct term *t)
{
	struct conn *c = t->c;
	struct proxy_refusal r;
	char hint[1024];

	if (c->px->refused != NULL) {
		snprintf(hint, sizeof(hint), "pisbx terminates TLS for %s; a "
		    "client that pins certificates, does not trust the run's "
		    "CA, or speaks only h2 cannot use that: add %s to "
		    "network.tlsTerminate.excludeDomains", c->host.text,
		    c->host.text);
		memset(&r, 0, sizeof(r));
		r.host = c->host.text;
		r.port = c->port;
		r.proto = conn_proto_name(c->proto);
		r.reason = "client-tls";
		r.detail = c->error;
		r.hint = hint;
		c->px->refused(&r, c->px->refused_arg);
	}
	conn_close(c, "client-tls");
}

/*
 * The upstream's certificate did not verify (or its handshake failed):
 * the client, whose handshake with us is done, reads why as a 502.
 */
static int
term_upstream_tls(struct term *t)
{
	struct conn *c = t->c;
	struct proxy_refusal r;
	char body[1200];
	const char *why;

	why = t->upstream.failed == 2 ? "no TLS handshake within network."
	    "tlsTerminate.handshakeTimeoutMs" :
	    c->px->tls->error(t->upstream.tls);
	if (t->upstream.failed == 2)
		snprintf(body, sizeof(body), "pisbx: %s:%u did not complete "
		    "a TLS handshake within network.tlsTerminate."
		    "handshakeTimeoutMs: add the host to excludeDomains if "
		    "it does not speak TLS\n", c->host.text, c->port);
	else
		snprintf(body, sizeof(body), "pisbx: %s:%u's certificate did "
		    "not verify (%s): add its CA to network.tlsTerminate."
		    "extraCaCertPaths, or the host to excludeDomains\n",
		    c->host.text, c->port, why);
	if (c->px->refused != NULL) {
		memset(&r, 0, sizeof(r));
		r.host = c->host.text;
		r.port = c->port;
		r.proto = conn_proto_name(c->proto);
		r.reason = "upstream-tls";
		r.detail = why;
		r.hint = "add its CA to network.tlsTerminate.extraCaCertPaths, "
		    "or the host to excludeDomains";
		r.unreachable = 1;
		c->px->refused(&r, c->px->refused_arg);
	}
	return term_refuse(t, 502, "upstream-tls", NULL, NULL, body);
}
