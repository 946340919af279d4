/*
 * The relay: bytes both ways between the client and the upstream of a
 * CONNECT or SOCKS5 tunnel, with backpressure (RELAY_HIGH/RELAY_LOW),
 * half-close (EOF from one side is a shutdown(SHUT_WR) on the other once
 * its queued bytes are out; the connection ends when both directions are
 * done), the idle timeout and the byte counters.
 *
 * The bufferevents keep owning the sockets and their buffers, but the
 * relay drives the sockets with its own events: libevent 2.1's
 * bufferevents read at most 4096 bytes per call (EVBUFFER_MAX_READ) and
 * write from the next loop turn, which holds a bulk transfer to a
 * fraction of loopback speed.  Here each readable event reads up to
 * RELAY_READ_MAX bytes, which go straight to the other socket when
 * nothing is queued there; only what the peer cannot take yet is queued.
 *
 * A CONNECT tunnel first peeks at the client's first bytes: a TLS
 * ClientHello whose SNI names another host than the authorised target is
 * refused (sni-mismatch), so a tunnel to an allowed name cannot carry a
 * TLS session for a different one.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/log.h"
#include "proxy/proxy_int.h"

static void	 relay_begin(struct conn *);
static void	 relay_readable_cb(evutil_socket_t, short, void *);
static void	 relay_writable_cb(evutil_socket_t, short, void *);
static int	 relay_move(struct conn *, int);
static int	 relay_peek(struct conn *);
static void	 relay_eof(struct conn *, int);
static void	 relay_maybe_done(struct conn *);
static void	 relay_splice_on(struct conn *, int);
static void	 relay_splice_in(struct conn *, int);
static int	 relay_splice_out(struct conn *, int);
static size_t	 relay_pending(struct conn *, int);

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
	struct event_base *base = c->px->base;
	int cfd = bufferevent_getfd(c->client);
	int ufd = bufferevent_getfd(c->upstream);

	c->state = CONN_RELAY;
	bufferevent_disable(c->client, EV_READ | EV_WRITE);
	bufferevent_disable(c->upstream, EV_READ | EV_WRITE);
	bufferevent_setcb(c->client, NULL, NULL, NULL, NULL);
	bufferevent_setcb(c->upstream, NULL, NULL, NULL, NULL);
	/*
	 * A socket bufferevent freezes the end of its input and the start of
	 * its output (only it may fill or drain them); the relay does both
	 * now, with the bufferevent disabled.
	 */
	evbuffer_unfreeze(bufferevent_get_input(c->client), 0);
	evbuffer_unfreeze(bufferevent_get_output(c->client), 1);
	evbuffer_unfreeze(bufferevent_get_input(c->upstream), 0);
	evbuffer_unfreeze(bufferevent_get_output(c->upstream), 1);
	c->rev[0] = event_new(base, cfd, EV_READ | EV_PERSIST,
	    relay_readable_cb, c);
	c->wev[0] = event_new(base, cfd, EV_WRITE | EV_PERSIST,
	    relay_writable_cb, c);
	c->rev[1] = event_new(base, ufd, EV_READ | EV_PERSIST,
	    relay_readable_cb, c);
	c->wev[1] = event_new(base, ufd, EV_WRITE | EV_PERSIST,
	    relay_writable_cb, c);
	if (c->rev[0] == NULL || c->wev[0] == NULL || c->rev[1] == NULL ||
	    c->wev[1] == NULL) {
		conn_close(c, "out-of-memory");
		return;
	}
	event_add(c->rev[0], NULL);
	event_add(c->rev[1], NULL);
	/* A reply still queued for the client (a slow one) goes first. */
	if (evbuffer_get_length(bufferevent_get_output(c->client)) > 0)
		event_add(c->wev[0], NULL);
	conn_touch(c);
	conn_timer_set(c, conf->idle_timeout_ms);
}

void
relay_free(struct conn *c)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (c->rev[i] != NULL)
			event_free(c->rev[i]);
		if (c->wev[i] != NULL)
			event_free(c->wev[i]);
		c->rev[i] = c->wev[i] = NULL;
		if (c->spliced[i]) {
			close(c->pipefd[i][0]);
			close(c->pipefd[i][1]);
			c->spliced[i] = 0;
		}
	}
}

void
relay_start(struct conn *c)
{
	relay_begin(c);
	if (c->rev[0] == NULL)
		return;
	/* Early client bytes (sent with the request) go up first. */
	if (evbuffer_get_length(bufferevent_get_input(c->client)) > 0)
		(void)relay_move(c, 0);
}

void
relay_start_peek(struct conn *c)
{
	relay_begin(c);
	if (c->rev[0] == NULL)
		return;
	c->peeking = 1;
	if (evbuffer_get_length(bufferevent_get_input(c->client)) > 0 &&
	    relay_peek(c) == 1)
		(void)relay_move(c, 0);
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

/*
 * Write what buf holds straight to fd (no signal on a closed peer),
 * draining what was written.  Returns the bytes written, or -1 with errno
 * set on an error other than EAGAIN.
 */
ssize_t
relay_write_now(struct evbuffer *buf, int fd)
{
	struct evbuffer_iovec v[64];
	struct msghdr msg;
	ssize_t w, total = 0;
	int n;

	while (evbuffer_get_length(buf) > 0) {
		n = evbuffer_peek(buf, -1, NULL, v, 64);
		if (n > 64)
			n = 64;
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = (struct iovec *)v;
		msg.msg_iovlen = (size_t)n;
		w = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -1;
		}
		if (evbuffer_drain(buf, (size_t)w) == -1) {
			errno = EINVAL;	/* a frozen buffer: never resend */
			return -1;
		}
		total += w;
		if (w == 0)
			break;
	}
	return total;
}

/*
 * After a bufferevent's own read (at most 4096 bytes in libevent 2.1),
 * read up to RELAY_READ_MAX more bytes into its input if the socket has
 * them.  EOF and errors are left for the bufferevent's next read, which
 * sees them again and reports them.
 */
void
relay_read_more(struct bufferevent *bev)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	struct evbuffer_iovec v[2];
	ssize_t r;
	size_t left;
	int nv, i;

	evbuffer_unfreeze(in, 0);
	nv = evbuffer_reserve_space(in, RELAY_READ_MAX, v, 2);
	if (nv > 0) {
		r = readv(bufferevent_getfd(bev), (struct iovec *)v, nv);
		left = r > 0 ? (size_t)r : 0;
		for (i = 0; i < nv; i++) {
			if (v[i].iov_len > left)
				v[i].iov_len = left;
			left -= v[i].iov_len;
		}
		evbuffer_commit_space(in, v, r > 0 ? nv : 0);
	}
	evbuffer_freeze(in, 0);
}

/* Send a short reply now when nothing is queued before it; queue the rest. */
void
relay_send(struct bufferevent *bev, const void *p, size_t n)
{
	ssize_t w = 0;

	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0) {
		w = send(bufferevent_getfd(bev), p, n, MSG_NOSIGNAL |
		    MSG_DONTWAIT);
		if (w < 0)
			w = 0;
	}
	if ((size_t)w < n)
		bufferevent_write(bev, (const char *)p + w, n - (size_t)w);
}

/*
 * Move everything side s (0 client, 1 upstream) has read to the other
 * side: straight to its socket when nothing is queued there, the rest
 * queued.  Returns 0, or -1 when the connection was closed.
 */
static int
relay_move(struct conn *c, int s)
{
	struct bufferevent *src = s == 0 ? c->client : c->upstream;
	struct bufferevent *dst = s == 0 ? c->upstream : c->client;
	struct evbuffer *in = bufferevent_get_input(src);
	struct evbuffer *out = bufferevent_get_output(dst);
	size_t n = evbuffer_get_length(in);

	if (n == 0)
		return 0;
	if (s == 0)
		c->bytes_up += n;
	else
		c->bytes_down += n;
	if (evbuffer_get_length(out) == 0 &&
	    relay_write_now(in, bufferevent_getfd(dst)) == -1) {
		conn_close(c, s == 0 ? "upstream-error" : "client-error");
		return -1;
	}
	if (evbuffer_get_length(in) > 0) {
		evbuffer_add_buffer(out, in);
		event_add(c->wev[1 - s], NULL);
		if (evbuffer_get_length(out) >= RELAY_HIGH) {
			/* Backpressure: stop reading until the peer drains. */
			event_del(c->rev[s]);
			if (s == 0)
				c->client_paused = 1;
			else
				c->upstream_paused = 1;
		}
	}
	return 0;
}

static void
relay_readable_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	int s = fd == bufferevent_getfd(c->client) ? 0 : 1;
	struct evbuffer *in = bufferevent_get_input(s == 0 ? c->client :
	    c->upstream);
	struct evbuffer_iovec v[2];
	ssize_t r;
	size_t left;
	int nv, i;

	(void)what;
	if (c->spliced[s]) {
		relay_splice_in(c, s);
		return;
	}
	nv = evbuffer_reserve_space(in, RELAY_READ_MAX, v, 2);
	if (nv <= 0) {
		conn_close(c, "out-of-memory");
		return;
	}
	r = readv(fd, (struct iovec *)v, nv);
	if (r == -1) {
		evbuffer_commit_space(in, v, 0);
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		conn_close(c, s == 0 ? "client-error" : "upstream-error");
		return;
	}
	left = (size_t)r;
	for (i = 0; i < nv; i++) {
		if (v[i].iov_len > left)
			v[i].iov_len = left;
		left -= v[i].iov_len;
	}
	evbuffer_commit_space(in, v, nv);
	if (r == 0) {
		relay_eof(c, s);
		return;
	}
	conn_touch(c);
	if (s == 0 && c->peeking) {
		switch (relay_peek(c)) {
		case -1:
		case 0:
			return;
		default:
			break;
		}
	}
	if (relay_move(c, s) == -1)
		return;
	/* A bulk transfer: move it through a pipe with splice(2). */
	if (!c->peeking && !c->splice_failed[s] &&
	    (s == 0 ? c->bytes_up : c->bytes_down) >= RELAY_SPLICE_AFTER &&
	    evbuffer_get_length(in) == 0 &&
	    evbuffer_get_length(bufferevent_get_output(s == 0 ? c->upstream :
	    c->client)) == 0)
		relay_splice_on(c, s);
}

/* Bytes queued toward side d's socket: its output buffer and the pipe. */
static size_t
relay_pending(struct conn *c, int d)
{
	size_t n = evbuffer_get_length(bufferevent_get_output(d == 0 ?
	    c->client : c->upstream));

	if (c->spliced[1 - d])
		n += c->pipelen[1 - d];
	return n;
}

/*
 * Switch direction s to splice(2): socket to pipe to socket, no copies
 * through the proxy's memory.  Only with nothing queued in the buffers,
 * so the byte order holds; a pipe that cannot be made (out of
 * descriptors) leaves the direction on buffers.
 */
static void
relay_splice_on(struct conn *c, int s)
{
	int p[2], sz;

	if (pipe2(p, O_NONBLOCK | O_CLOEXEC) == -1) {
		c->splice_failed[s] = 1;
		return;
	}
	/*
	 * A large pipe moves more per splice(2) call and per wakeup.  Its
	 * pages count against the user's pipe-user-pages-soft allowance;
	 * once that is spent a pipe cannot grow (and starts at two pages,
	 * which would crawl), so the direction stays on buffers then.
	 */
	if ((sz = fcntl(p[1], F_SETPIPE_SZ, RELAY_PIPE_MAX)) == -1 &&
	    (sz = fcntl(p[1], F_SETPIPE_SZ, RELAY_HIGH)) == -1) {
		close(p[0]);
		close(p[1]);
		c->splice_failed[s] = 1;
		return;
	}
	c->pipefd[s][0] = p[0];
	c->pipefd[s][1] = p[1];
	c->pipelen[s] = 0;
	c->pipesz[s] = (size_t)sz;
	c->spliced[s] = 1;
}

static void
relay_splice_in(struct conn *c, int s)
{
	int srcfd = bufferevent_getfd(s == 0 ? c->client : c->upstream);
	ssize_t n;

	n = splice(srcfd, NULL, c->pipefd[s][1], NULL, c->pipesz[s],
	    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n == 0) {
		relay_eof(c, s);
		return;
	}
	if (n == -1) {
		if (errno == EINTR)
			return;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			/* The pipe is full: wait for the peer to drain it. */
			if (c->pipelen[s] > 0) {
				event_del(c->rev[s]);
				if (s == 0)
					c->client_paused = 1;
				else
					c->upstream_paused = 1;
			}
			return;
		}
		conn_close(c, s == 0 ? "client-error" : "upstream-error");
		return;
	}
	c->pipelen[s] += (size_t)n;
	if (s == 0)
		c->bytes_up += (uint64_t)n;
	else
		c->bytes_down += (uint64_t)n;
	conn_touch(c);
	if (relay_splice_out(c, s) == -1)
		return;
	if (c->pipelen[s] > 0) {
		event_add(c->wev[1 - s], NULL);
		if (c->pipelen[s] >= RELAY_LOW) {
			event_del(c->rev[s]);
			if (s == 0)
				c->client_paused = 1;
			else
				c->upstream_paused = 1;
		}
	}
}

/* Drain direction s's pipe into the other socket.  0, or -1: closed. */
static int
relay_splice_out(struct conn *c, int s)
{
	int dstfd = bufferevent_getfd(s == 0 ? c->upstream : c->client);
	ssize_t n;

	while (c->pipelen[s] > 0) {
		n = splice(c->pipefd[s][0], NULL, dstfd, NULL, c->pipelen[s],
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			conn_close(c, s == 0 ? "upstream-error" :
			    "client-error");
			return -1;
		}
		if (n == 0)
			break;
		c->pipelen[s] -= (size_t)n;
	}
	return 0;
}

/* Side s may take more: flush its queue, resume the paused peer, half-close. */
static void
relay_writable_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	int s = fd == bufferevent_getfd(c->client) ? 0 : 1;
	struct evbuffer *out = bufferevent_get_output(s == 0 ? c->client :
	    c->upstream);
	int *peer_paused = s == 0 ? &c->upstream_paused : &c->client_paused;
	int peer_eof = s == 0 ? c->upstream_eof : c->client_eof;
	int *shut = s == 0 ? &c->client_shut : &c->upstream_shut;
	size_t left;

	(void)what;
	if (relay_write_now(out, fd) == -1) {
		conn_close(c, s == 0 ? "client-error" : "upstream-error");
		return;
	}
	if (c->spliced[1 - s] && relay_splice_out(c, 1 - s) == -1)
		return;
	conn_touch(c);
	left = relay_pending(c, s);
	if (left == 0)
		event_del(c->wev[s]);
	if (*peer_paused && left <= RELAY_LOW) {
		*peer_paused = 0;
		event_add(c->rev[1 - s], NULL);
	}
	if (peer_eof && left == 0 && !*shut) {
		shutdown(fd, SHUT_WR);
		*shut = 1;
	}
	relay_maybe_done(c);
}

/* Side s sent EOF: pass it on once its bytes are out. */
static void
relay_eof(struct conn *c, int s)
{
	struct bufferevent *dst = s == 0 ? c->upstream : c->client;
	int *shut = s == 0 ? &c->upstream_shut : &c->client_shut;

	if (s == 0 && c->peeking) {
		/*
		 * EOF before a complete ClientHello: a partial one is
		 * refused; with nothing sent there is nothing to check and
		 * the client may still read (half-close).
		 */
		if (evbuffer_get_length(bufferevent_get_input(c->client)) >
		    0) {
			conn_decide(c, 0, "sni-mismatch", "malformed TLS "
			    "ClientHello: truncated by EOF");
			conn_log_decision(c);
			conn_close(c, "sni-mismatch");
			return;
		}
		c->peeking = 0;
	}
	event_del(c->rev[s]);
	if (s == 0)
		c->client_eof = 1;
	else
		c->upstream_eof = 1;
	if (relay_pending(c, 1 - s) == 0 && !*shut) {
		shutdown(bufferevent_getfd(dst), SHUT_WR);
		*shut = 1;
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
