/*
 * The relay: bytes both ways between the client and the upstream of a
 * CONNECT or SOCKS5 tunnel, with backpressure (RELAY_HIGH/RELAY_LOW),
 * half-close (EOF from one side is a shutdown(SHUT_WR) on the other once
 * its queued bytes are out; the connection ends when both directions are
 * done), the idle timeout and the byte counters.
 *
 * A relay is two ends of the same thing, as in relayd (ctl_relay_event
 * and its dst): each end owns its socket, reads from it, and keeps what
 * its peer could not take yet.  The relay takes the sockets over from
 * the bufferevents that set the tunnel up (with any bytes they still
 * hold) and drives them with its own events: libevent 2.1's bufferevents
 * read at most 4096 bytes per call (EVBUFFER_MAX_READ) and write from
 * the next loop turn, which holds a bulk transfer to a fraction of
 * loopback speed.  Here each readable event reads up to RELAY_READ_MAX
 * bytes, which go straight to the peer's socket when nothing is queued
 * for it; only what the peer cannot take yet is kept.  A direction that
 * has moved RELAY_SPLICE_AFTER bytes switches to splice(2) through a
 * pipe.
 *
 * The TLS peek that guards every tunnel is in relay_check.c.
 *
 * A fault ends the way it began: when one side resets (or its socket
 * fails), every byte it sent before is still delivered to the other
 * side, which then gets a reset too (SO_LINGER 0), not a clean end of
 * stream it would take for a complete transfer.
 */

#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/sockios.h>

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
#include "proxy/relay_int.h"

/* How often, and how long, to wait for the survivor's bytes to be acked. */
#define RELAY_ABORT_POLL_MS	5
#define RELAY_ABORT_WAIT_MS	5000

static struct relay *relay_begin(struct conn *);
static int	 relay_end_init(struct relay *, struct relay_end *,
		    struct relay_end *, struct bufferevent *, uint64_t *,
		    const char *, const char *);
static void	 relay_end_free(struct relay_end *);
static void	 relay_readable_cb(evutil_socket_t, short, void *);
static void	 relay_writable_cb(evutil_socket_t, short, void *);
static ssize_t	 relay_readv(struct evbuffer *, int, size_t);
static size_t	 relay_budget(struct relay_end *, size_t);
static void	 relay_budget_probe(struct relay_end *);
static int	 relay_through(struct relay_end *, const char *, size_t);
static void	 relay_pause(struct relay_end *);
static void	 relay_eof(struct relay_end *);
static void	 relay_maybe_done(struct relay *);
static void	 relay_splice_on(struct relay_end *);
static void	 relay_splice_in(struct relay_end *);
static int	 relay_splice_out(struct relay_end *);
static size_t	 relay_pending(struct relay_end *);
static void	 relay_fault(struct relay_end *, int);
static void	 relay_abort_check(struct relay *);
static void	 relay_abort_cb(evutil_socket_t, short, void *);
static void	 relay_abort_finish(struct relay *);

void
relay_tune(struct bufferevent *bev)
{
	bufferevent_set_max_single_read(bev, RELAY_READ_MAX);
	bufferevent_set_max_single_write(bev, RELAY_HIGH);
}

/*
 * Take over both sockets from the connection's bufferevents: the relay
 * owns them from here on (closes them in relay_free), with the bytes the
 * bufferevents still held -- early client bytes sent with the request,
 * and a reply the client could not take at once.  NULL when the
 * connection was closed.
 */
static struct relay *
relay_begin(struct conn *c)
{
	const struct config *conf = conn_config(c);
	struct relay *rl;

	c->state = CONN_RELAY;
	if ((rl = calloc(1, sizeof(*rl))) == NULL) {
		conn_close(c, "out-of-memory");
		return NULL;
	}
	rl->conn = c;
	c->relay = rl;
	metrics_tunnel(c->px, 1);
	rl->client.rl = rl->upstream.rl = rl;
	rl->client.pipe[0] = rl->client.pipe[1] = -1;
	rl->upstream.pipe[0] = rl->upstream.pipe[1] = -1;
	if (relay_end_init(rl, &rl->client, &rl->upstream, c->client,
	    &c->bytes_up, "client-error", "client-reset") == -1 ||
	    relay_end_init(rl, &rl->upstream, &rl->client, c->upstream,
	    &c->bytes_down, "upstream-error", "upstream-reset") == -1 ||
	    (rl->abort_ev = evtimer_new(c->px->base, relay_abort_cb,
	    rl)) == NULL) {
		conn_close(c, "out-of-memory");
		return NULL;
	}
	/*
	 * The bufferevents let go of their sockets: with fd -1 freeing one
	 * closes nothing, and its buffers are no longer frozen, so what they
	 * still hold moves over, in order -- a reply still queued for the
	 * client (a slow one) before anything from upstream, early client
	 * bytes after anything queued for upstream.
	 */
	bufferevent_setfd(c->client, -1);
	bufferevent_setfd(c->upstream, -1);
	rl->owned = 1;
	if ((rl->held = evbuffer_new()) == NULL ||
	    evbuffer_add_buffer(rl->client.buf,
	    bufferevent_get_output(c->upstream)) == -1 ||
	    evbuffer_add_buffer(rl->held,
	    bufferevent_get_input(c->client)) == -1 ||
	    evbuffer_add_buffer(rl->upstream.buf,
	    bufferevent_get_output(c->client)) == -1 ||
	    evbuffer_add_buffer(rl->upstream.buf,
	    bufferevent_get_input(c->upstream)) == -1) {
		conn_close(c, "out-of-memory");
		return NULL;
	}
	bufferevent_free(c->client);
	bufferevent_free(c->upstream);
	c->client = c->upstream = NULL;
	event_add(rl->client.rev, NULL);
	event_add(rl->upstream.rev, NULL);
	if (evbuffer_get_length(rl->upstream.buf) > 0)
		event_add(rl->client.wev, NULL);
	conn_touch(c);
	conn_timer_set(c, conf->idle_timeout_ms);
	return rl;
}

/* One end: the socket of bev, its events, its peer. */
static int
relay_end_init(struct relay *rl, struct relay_end *e, struct relay_end *dst,
    struct bufferevent *bev, uint64_t *bytes, const char *error,
    const char *reset)
{
	struct event_base *base = rl->conn->px->base;

	e->dst = dst;
	e->bytes = bytes;
	e->error = error;
	e->reset = reset;
	bufferevent_disable(bev, EV_READ | EV_WRITE);
	e->fd = bufferevent_getfd(bev);
	if ((e->buf = evbuffer_new()) == NULL ||
	    (e->rev = event_new(base, e->fd, EV_READ | EV_PERSIST,
	    relay_readable_cb, e)) == NULL ||
	    (e->wev = event_new(base, e->fd, EV_WRITE | EV_PERSIST,
	    relay_writable_cb, e)) == NULL)
		return -1;
	return 0;
}

static void
relay_end_free(struct relay_end *e)
{
	if (e->rev != NULL)
		event_free(e->rev);
	if (e->wev != NULL)
		event_free(e->wev);
	if (e->buf != NULL)
		evbuffer_free(e->buf);
	if (e->pipe[0] != -1) {
		close(e->pipe[0]);
		close(e->pipe[1]);
	}
	/* Ours once taken over from its bufferevent (relay_begin). */
	if (e->rl->owned)
		close(e->fd);
}

void
relay_free(struct conn *c)
{
	struct relay *rl = c->relay;

	if (rl == NULL)
		return;
	relay_end_free(&rl->client);
	relay_end_free(&rl->upstream);
	if (rl->held != NULL)
		evbuffer_free(rl->held);
	if (rl->abort_ev != NULL)
		event_free(rl->abort_ev);
	free(rl);
	c->relay = NULL;
	metrics_tunnel(c->px, -1);
}

void
relay_start(struct conn *c)
{
	/* network.tlsTerminate: term.c looks at the first bytes first. */
	if (term_wanted(c)) {
		term_start(c);
		return;
	}
	relay_open(c);
}

void
relay_open(struct conn *c)
{
	struct relay *rl;

	if ((rl = relay_begin(c)) == NULL)
		return;
	rl->checking = 1;
	/* Early client bytes (sent with the request) are checked, then sent. */
	if (evbuffer_get_length(rl->held) > 0)
		(void)relay_check(rl);
}

int
relay_peek_waiting(const struct conn *c)
{
	return c->relay != NULL && c->relay->peek_wait;
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
 * Hand what end e has read to its peer: straight to the peer's socket
 * unless bytes already wait for it to be writable; what it cannot take
 * stays, and e stops reading once RELAY_HIGH bytes wait.  0, or -1 when
 * the connection was closed.
 */
int
relay_push(struct relay_end *e)
{
	struct relay_end *dst = e->dst;

	if (evbuffer_get_length(e->buf) == 0)
		return 0;
	if (!event_pending(dst->wev, EV_WRITE, NULL) &&
	    relay_write_now(e->buf, dst->fd) == -1) {
		relay_fault(dst, errno);
		return -1;
	}
	if (evbuffer_get_length(e->buf) > 0) {
		event_add(dst->wev, NULL);
		if (evbuffer_get_length(e->buf) >= RELAY_HIGH)
			relay_pause(e);
	}
	return 0;
}

/* Backpressure: stop reading from e until its peer has drained. */
static void
relay_pause(struct relay_end *e)
{
	event_del(e->rev);
	e->paused = 1;
}

/*
 * Read what fd has into buf, up to max bytes.  The bytes read, 0 at EOF,
 * -1 with errno set (ENOMEM: no room in buf).
 */
static ssize_t
relay_readv(struct evbuffer *buf, int fd, size_t max)
{
	struct evbuffer_iovec v[2];
	ssize_t r;
	size_t left;
	int nv, i;

	nv = evbuffer_reserve_space(buf, (ev_ssize_t)max, v, 2);
	if (nv <= 0) {
		errno = ENOMEM;
		return -1;
	}
	/* Reserved space may be larger than asked: read no more than max. */
	left = max;
	for (i = 0; i < nv; i++) {
		if (v[i].iov_len > left)
			v[i].iov_len = left;
		left -= v[i].iov_len;
	}
	r = readv(fd, (struct iovec *)v, nv);
	left = r > 0 ? (size_t)r : 0;
	for (i = 0; i < nv; i++) {
		if (v[i].iov_len > left)
			v[i].iov_len = left;
		left -= v[i].iov_len;
	}
	evbuffer_commit_space(buf, v, r > 0 ? nv : 0);
	return r;
}

/*
 * How much end e may read now, at most want: for the client end, no
 * more than its host's bytes budget has left (network.budget), less
 * what it holds unchecked.  0 when the budget is spent.
 */
static size_t
relay_budget(struct relay_end *e, size_t want)
{
	struct relay *rl = e->rl;
	uint64_t left;
	size_t held;

	if (e != &rl->client)
		return want;
	left = budget_left(rl->conn);
	held = rl->checking ? evbuffer_get_length(rl->held) : 0;
	left = left > held ? left - held : 0;
	return left < want ? (size_t)left : want;
}

/*
 * The client's bytes budget is spent and its socket is readable: a byte
 * waiting there would cross it, so the tunnel is closed before that
 * byte goes anywhere (budget_cross); an end of stream is passed on.
 */
static void
relay_budget_probe(struct relay_end *e)
{
	char b;
	ssize_t r;

	r = recv(e->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	if (r == 1) {
		budget_cross(e->rl->conn);
		return;
	}
	if (r == 0) {
		relay_eof(e);
		return;
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		relay_fault(e, errno);
}

/*
 * Write n bytes that end e has just read straight to its peer's socket;
 * what the peer cannot take yet is kept in e's buffer.  0, or -1 when the
 * connection was closed.
 */
static int
relay_through(struct relay_end *e, const char *p, size_t n)
{
	struct relay_end *dst = e->dst;
	ssize_t w;

	w = send(dst->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (w == -1) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			relay_fault(dst, errno);
			return -1;
		}
		w = 0;
	}
	if ((size_t)w < n) {
		if (evbuffer_add(e->buf, p + w, n - (size_t)w) == -1) {
			conn_close(e->rl->conn, "out-of-memory");
			return -1;
		}
		event_add(dst->wev, NULL);
		if (evbuffer_get_length(e->buf) >= RELAY_HIGH)
			relay_pause(e);
	}
	return 0;
}

static void
relay_readable_cb(evutil_socket_t fd, short what, void *arg)
{
	/* One process, one thread: one buffer serves every relay. */
	static char rbuf[RELAY_READ_MAX];
	struct relay_end *e = arg;
	struct relay *rl = e->rl;
	ssize_t r;
	size_t want;
	int through, held, scan, cscan;

	(void)what;
	if ((want = relay_budget(e, sizeof(rbuf))) == 0) {
		relay_budget_probe(e);
		return;
	}
	if (e->spliced) {
		relay_splice_in(e);
		return;
	}
	/*
	 * With nothing of this end's waiting for the peer, what is read now
	 * goes straight on from the shared buffer: a short message costs no
	 * buffer of its own.  Bytes still waiting are added to the end's
	 * buffer, behind what is there; client bytes to be checked are held
	 * apart.  The server's bytes are read into the shared buffer while
	 * its ServerHello is looked for, and the client's while they are
	 * scanned for placeholders (a tunnel that is not TLS).
	 */
	held = e == &rl->client && rl->checking;
	scan = e == &rl->upstream && rl->scanning;
	cscan = e == &rl->client && !held && rl->cred_all;
	through = !held && evbuffer_get_length(e->buf) == 0;
	if (through || scan || cscan)
		r = read(fd, rbuf, want);
	else
		r = relay_readv(held ? rl->held : e->buf, fd, want);
	if (r == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		if (errno == ENOMEM) {
			conn_close(rl->conn, "out-of-memory");
			return;
		}
		relay_fault(e, errno);
		return;
	}
	if (r == 0) {
		relay_eof(e);
		return;
	}
	conn_touch(rl->conn);
	if (held) {
		/* Nothing goes up before it is checked. */
		(void)relay_check(rl);
		return;
	}
	*e->bytes += (uint64_t)r;
	if (e == &rl->client)
		budget_spend(rl->conn, (uint64_t)r);
	if (scan && relay_scan(rl, rbuf, (size_t)r) == -1)
		return;
	if (cscan && relay_cred_scan(rl, rbuf, (size_t)r) == -1)
		return;
	if (!through && (scan || cscan) &&
	    evbuffer_add(e->buf, rbuf, (size_t)r) == -1) {
		conn_close(rl->conn, "out-of-memory");
		return;
	}
	if (through ? relay_through(e, rbuf, (size_t)r) == -1 :
	    relay_push(e) == -1)
		return;
	/* The ServerHello came: the client's held bytes are free to go. */
	if (scan && rl->settled && rl->checking && relay_check(rl) == -1)
		return;
	/* A bulk transfer: move it through a pipe with splice(2). */
	if (!e->splice_failed && !rl->scanning && !rl->checking && !cscan &&
	    *e->bytes >= RELAY_SPLICE_AFTER &&
	    evbuffer_get_length(e->buf) == 0)
		relay_splice_on(e);
}

/* Bytes waiting to be written to end e: its peer's buffer and pipe. */
static size_t
relay_pending(struct relay_end *e)
{
	size_t n = evbuffer_get_length(e->dst->buf);

	if (e->dst->spliced)
		n += e->dst->pipelen;
	return n;
}

/*
 * Switch end e's reads to splice(2): socket to pipe to its peer's
 * socket, no copies through the proxy's memory.  Only with nothing
 * waiting in e's buffer, so the byte order holds; a pipe that cannot be
 * made (out of descriptors) leaves the direction on buffers.
 */
static void
relay_splice_on(struct relay_end *e)
{
	int p[2], sz;

	if (pipe2(p, O_NONBLOCK | O_CLOEXEC) == -1) {
		e->splice_failed = 1;
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
		e->splice_failed = 1;
		return;
	}
	e->pipe[0] = p[0];
	e->pipe[1] = p[1];
	e->pipelen = 0;
	e->pipesz = (size_t)sz;
	e->spliced = 1;
}

static void
relay_splice_in(struct relay_end *e)
{
	ssize_t n;

	n = splice(e->fd, NULL, e->pipe[1], NULL, relay_budget(e, e->pipesz),
	    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n == 0) {
		relay_eof(e);
		return;
	}
	if (n == -1) {
		if (errno == EINTR)
			return;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			/* The pipe is full: wait for the peer to drain it. */
			if (e->pipelen > 0)
				relay_pause(e);
			return;
		}
		relay_fault(e, errno);
		return;
	}
	e->pipelen += (size_t)n;
	*e->bytes += (uint64_t)n;
	if (e == &e->rl->client)
		budget_spend(e->rl->conn, (uint64_t)n);
	conn_touch(e->rl->conn);
	if (relay_splice_out(e) == -1)
		return;
	if (e->pipelen > 0) {
		event_add(e->dst->wev, NULL);
		if (e->pipelen >= RELAY_LOW)
			relay_pause(e);
	}
}

/* Drain end e's pipe into its peer's socket.  0, or -1: closed. */
static int
relay_splice_out(struct relay_end *e)
{
	ssize_t n;

	while (e->pipelen > 0) {
		n = splice(e->pipe[0], NULL, e->dst->fd, NULL, e->pipelen,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			relay_fault(e->dst, errno);
			return -1;
		}
		if (n == 0)
			break;
		e->pipelen -= (size_t)n;
	}
	return 0;
}

/*
 * End e may take more: write what its peer has for it, resume the peer
 * once it is down to RELAY_LOW, pass on the peer's EOF once all is out.
 */
static void
relay_writable_cb(evutil_socket_t fd, short what, void *arg)
{
	struct relay_end *e = arg;
	struct relay_end *src = e->dst;
	struct relay *rl = e->rl;
	size_t left;

	(void)what;
	if (relay_write_now(src->buf, fd) == -1) {
		relay_fault(e, errno);
		return;
	}
	if (src->spliced && relay_splice_out(src) == -1)
		return;
	conn_touch(rl->conn);
	left = relay_pending(e);
	if (left == 0)
		event_del(e->wev);
	if (src->paused && left <= RELAY_LOW) {
		src->paused = 0;
		event_add(src->rev, NULL);
	}
	if (rl->fault != NULL) {
		relay_abort_check(rl);
		return;
	}
	if (src->eof && left == 0 && !e->shut) {
		shutdown(fd, SHUT_WR);
		e->shut = 1;
	}
	relay_maybe_done(rl);
}

/* End e sent EOF: pass it on once its bytes are out. */
static void
relay_eof(struct relay_end *e)
{
	struct relay *rl = e->rl;
	struct conn *c = rl->conn;

	if (e == &rl->client && rl->checking) {
		/*
		 * EOF before a complete ClientHello: a partial one is
		 * refused; with nothing sent there is nothing to check and
		 * the client may still read (half-close).
		 */
		if (evbuffer_get_length(rl->held) > 0) {
			relay_peek_refuse(c, "malformed TLS ClientHello: "
			    "truncated by EOF");
			return;
		}
		/* Nothing held: nothing to scan, nothing that can fail. */
		(void)relay_check_done(rl);
	}
	event_del(e->rev);
	e->eof = 1;
	if (rl->fault != NULL) {
		relay_abort_check(rl);
		return;
	}
	if (relay_pending(e->dst) == 0 && !e->dst->shut) {
		shutdown(e->dst->fd, SHUT_WR);
		e->dst->shut = 1;
	}
	relay_maybe_done(rl);
}

/*
 * End bad reset or failed (err: the errno that said so).  What it sent
 * before is still delivered: its socket keeps what arrived before the
 * reset (reads return it, then EOF), so it is read to the end and
 * relayed as usual; what was on its way to it is dropped and its peer
 * is read no more.  Once everything has reached the peer, the peer is
 * reset too (relay_abort_check).  A second fault, or a client's while
 * its bytes are still being checked (the handshake's ClientHellos,
 * relay_check), resets at once: what is held unchecked never goes.
 */
static void
relay_fault(struct relay_end *bad, int err)
{
	struct relay *rl = bad->rl;
	struct relay_end *peer = bad->dst;

	if (rl->fault == bad) {
		/* Its reset, read after its last bytes: nothing more comes. */
		event_del(bad->rev);
		bad->eof = 1;
		relay_abort_check(rl);
		return;
	}
	if (rl->fault != NULL || (bad == &rl->client && rl->checking)) {
		if (rl->fault == NULL)
			rl->fault_end = err == ECONNRESET || err == EPIPE ?
			    bad->reset : bad->error;
		rl->fault = bad;
		relay_abort_finish(rl);
		return;
	}
	rl->fault = bad;
	rl->fault_end = err == ECONNRESET || err == EPIPE ? bad->reset :
	    bad->error;
	event_base_gettimeofday_cached(rl->conn->px->base, &rl->abort_start);
	/* Nothing more goes to the end that failed. */
	event_del(bad->wev);
	event_del(peer->rev);
	peer->paused = 0;
	evbuffer_drain(peer->buf, evbuffer_get_length(peer->buf));
	if (peer->spliced) {
		close(peer->pipe[0]);
		close(peer->pipe[1]);
		peer->pipe[0] = peer->pipe[1] = -1;
		peer->pipelen = 0;
		peer->spliced = 0;
	}
	/*
	 * A read error comes after the bytes that arrived before it; a
	 * write error leaves them in the socket, to be read on.
	 */
	if (!bad->eof && (err == ECONNRESET || err == EPIPE) &&
	    !bad->paused)
		event_add(bad->rev, NULL);
	else if (!bad->eof && err != EPIPE && err != ECONNRESET) {
		event_del(bad->rev);
		bad->eof = 1;
	}
	relay_abort_check(rl);
}

/*
 * After a fault: once the failed end has nothing more to read and all of
 * it has been written to the survivor, wait for the survivor to
 * acknowledge it (its unacknowledged bytes, SIOCOUTQ, reach 0) and reset
 * it.  A reset discards what the kernel still queues, so it must not
 * come sooner; a survivor that does not read is reset after
 * RELAY_ABORT_WAIT_MS all the same.
 */
static void
relay_abort_check(struct relay *rl)
{
	struct relay_end *bad = rl->fault;
	struct timeval now, d, tv;
	int outq = 0;

	if (!bad->eof || relay_pending(bad->dst) > 0)
		return;
	event_base_gettimeofday_cached(rl->conn->px->base, &now);
	timersub(&now, &rl->abort_start, &d);
	if (ioctl(bad->dst->fd, SIOCOUTQ, &outq) == 0 && outq > 0 &&
	    d.tv_sec * 1000 + d.tv_usec / 1000 < RELAY_ABORT_WAIT_MS) {
		tv.tv_sec = 0;
		tv.tv_usec = RELAY_ABORT_POLL_MS * 1000;
		evtimer_add(rl->abort_ev, &tv);
		return;
	}
	relay_abort_finish(rl);
}

static void
relay_abort_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	relay_abort_check(arg);
}

/* Reset the survivor of a fault (and close the connection). */
static void
relay_abort_finish(struct relay *rl)
{
	struct linger lg = { 1, 0 };

	setsockopt(rl->fault->dst->fd, SOL_SOCKET, SO_LINGER, &lg,
	    sizeof(lg));
	conn_close(rl->conn, rl->fault_end);
}

static void
relay_maybe_done(struct relay *rl)
{
	if (rl->client.eof && rl->upstream.eof && rl->client.shut &&
	    rl->upstream.shut)
		conn_close(rl->conn, "eof");
}
