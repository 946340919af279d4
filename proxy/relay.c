/*
 * The relay: bytes both ways between the client and the upstream, with
 * backpressure (RELAY_HIGH/RELAY_LOW), half-close (EOF from one side is a
 * shutdown(SHUT_WR) on the other once its output is flushed; the
 * connection ends when both directions are done), the idle timeout and
 * the byte counters.  Chains move between evbuffers without copying.
 *
 * A CONNECT tunnel first peeks at the client's first bytes: a TLS
 * ClientHello whose SNI names another host than the authorised target is
 * refused (sni-mismatch), so a tunnel to an allowed address cannot be
 * used to reach a denied name through the same front.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "log.h"
#include "proxy_int.h"

#define DEFAULT_IDLE_MS	300000

static void	 relay_read_cb(struct bufferevent *, void *);
static void	 relay_write_cb(struct bufferevent *, void *);
static void	 relay_event_cb(struct bufferevent *, short, void *);
static void	 relay_move(struct conn *, struct bufferevent *);
static int	 relay_peek(struct conn *);
static void	 relay_maybe_done(struct conn *);

void
relay_tune(struct bufferevent *bev)
{
	bufferevent_set_max_single_read(bev, RELAY_READ_MAX);
	bufferevent_set_max_single_write(bev, RELAY_HIGH);
}

static void
relay_begin(struct conn *c)
{
	const struct config *conf = conn_config(c);
	int idle;

	c->state = CONN_RELAY;
	relay_tune(c->client);
	bufferevent_setcb(c->client, relay_read_cb, relay_write_cb,
	    relay_event_cb, c);
	bufferevent_setcb(c->upstream, relay_read_cb, relay_write_cb,
	    relay_event_cb, c);
	bufferevent_setwatermark(c->client, EV_WRITE, RELAY_LOW, 0);
	bufferevent_setwatermark(c->upstream, EV_WRITE, RELAY_LOW, 0);
	bufferevent_enable(c->client, EV_READ | EV_WRITE);
	bufferevent_enable(c->upstream, EV_READ | EV_WRITE);
	idle = conf->idle_timeout_ms > 0 ? conf->idle_timeout_ms :
	    DEFAULT_IDLE_MS;
	conn_touch(c);
	conn_timer_set(c, idle);
}

void
relay_start(struct conn *c)
{
	relay_begin(c);
	/* Early client bytes (sent with the request) go up first. */
	if (evbuffer_get_length(bufferevent_get_input(c->client)) > 0)
		relay_move(c, c->client);
}

void
relay_start_peek(struct conn *c)
{
	relay_begin(c);
	c->peeking = 1;
	if (evbuffer_get_length(bufferevent_get_input(c->client)) > 0)
		relay_read_cb(c->client, c);
}

void
relay_backpressure(struct conn *c, struct bufferevent *src,
    struct bufferevent *dst)
{
	if (evbuffer_get_length(bufferevent_get_output(dst)) >= RELAY_HIGH) {
		bufferevent_disable(src, EV_READ);
		if (src == c->client)
			c->client_paused = 1;
		else
			c->upstream_paused = 1;
	}
}

/* Move everything src has read to the other side. */
static void
relay_move(struct conn *c, struct bufferevent *src)
{
	struct bufferevent *dst = src == c->client ? c->upstream : c->client;
	struct evbuffer *in = bufferevent_get_input(src);
	size_t n = evbuffer_get_length(in);

	if (n == 0)
		return;
	if (src == c->client)
		c->bytes_up += n;
	else
		c->bytes_down += n;
	evbuffer_add_buffer(bufferevent_get_output(dst), in);
	conn_touch(c);
	relay_backpressure(c, src, dst);
}

/*
 * Decide on the client's first bytes.  Returns 1 to relay them, 0 to wait
 * for more, -1 when the connection was closed.
 */
static int
relay_peek(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->client);
	size_t len = evbuffer_get_length(in);
	const uint8_t *p;
	char sni[HOST_TEXT_MAX], detail[HOST_TEXT_MAX * 2 + 64];
	const char *why = NULL, *errstr;
	struct host h;
	enum tls_peek_result res;

	if (len > TLS_PEEK_MAX)
		len = TLS_PEEK_MAX;
	if ((p = evbuffer_pullup(in, len)) == NULL)
		return 0;
	res = tls_peek_clienthello(p, len, sni, sizeof(sni), &why);
	switch (res) {
	case TLS_PEEK_MORE:
		if (len < TLS_PEEK_MAX)
			return 0;
		why = "ClientHello larger than the peek limit";
		/* FALLTHROUGH */
	case TLS_PEEK_INVALID:
		snprintf(detail, sizeof(detail), "malformed TLS ClientHello: "
		    "%s", why != NULL ? why : "?");
		break;
	case TLS_PEEK_NOT_TLS:
	case TLS_PEEK_NO_SNI:
		c->peeking = 0;
		return 1;
	case TLS_PEEK_SNI:
		if (c->host.kind == HOST_NAME &&
		    host_canon(sni, strlen(sni), &h, &errstr) == 0 &&
		    strcmp(h.text, c->host.text) == 0) {
			c->peeking = 0;
			return 1;
		}
		snprintf(detail, sizeof(detail), "TLS SNI \"%s\" does not "
		    "name the target %s", sni, c->host.text);
		break;
	}
	/* Fail closed: the tunnel was for another name than the TLS one. */
	conn_decide(c, 0, "sni-mismatch", detail);
	conn_log_decision(c);
	conn_close(c, "sni-mismatch");
	return -1;
}

static void
relay_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (bev == c->client && c->peeking) {
		switch (relay_peek(c)) {
		case -1:
			return;
		case 0:
			conn_touch(c);
			return;
		default:
			break;
		}
	}
	relay_move(c, bev);
}

/* Output drained below the low mark: resume the paused side, half-close. */
static void
relay_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	size_t left = evbuffer_get_length(bufferevent_get_output(bev));

	if (bev == c->client) {
		if (c->upstream_paused && left <= RELAY_LOW) {
			c->upstream_paused = 0;
			bufferevent_enable(c->upstream, EV_READ);
		}
		if (c->upstream_eof && left == 0 && !c->client_shut) {
			shutdown(bufferevent_getfd(c->client), SHUT_WR);
			c->client_shut = 1;
		}
	} else {
		if (c->client_paused && left <= RELAY_LOW) {
			c->client_paused = 0;
			bufferevent_enable(c->client, EV_READ);
		}
		if (c->client_eof && left == 0 && !c->upstream_shut) {
			shutdown(bufferevent_getfd(c->upstream), SHUT_WR);
			c->upstream_shut = 1;
		}
	}
	relay_maybe_done(c);
}

static void
relay_maybe_done(struct conn *c)
{
	if (c->client_eof && c->upstream_eof && c->client_shut &&
	    c->upstream_shut)
		conn_close(c, "eof");
}

static void
relay_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	struct bufferevent *other;

	if (what & BEV_EVENT_ERROR) {
		conn_close(c, bev == c->client ? "client-error" :
		    "upstream-error");
		return;
	}
	if (!(what & BEV_EVENT_EOF))
		return;
	if (bev == c->client) {
		if (c->peeking) {
			/*
			 * EOF before a complete ClientHello: a partial one is
			 * refused; with nothing sent there is nothing to check
			 * and the client may still read (half-close).
			 */
			if (evbuffer_get_length(bufferevent_get_input(bev)) >
			    0) {
				conn_decide(c, 0, "sni-mismatch", "malformed TLS "
				    "ClientHello: truncated by EOF");
				conn_log_decision(c);
				conn_close(c, "sni-mismatch");
				return;
			}
			c->peeking = 0;
		}
		c->client_eof = 1;
		other = c->upstream;
		if (evbuffer_get_length(bufferevent_get_output(other)) == 0 &&
		    !c->upstream_shut) {
			shutdown(bufferevent_getfd(other), SHUT_WR);
			c->upstream_shut = 1;
		}
	} else {
		c->upstream_eof = 1;
		other = c->client;
		if (evbuffer_get_length(bufferevent_get_output(other)) == 0 &&
		    !c->client_shut) {
			shutdown(bufferevent_getfd(other), SHUT_WR);
			c->client_shut = 1;
		}
	}
	relay_maybe_done(c);
}
