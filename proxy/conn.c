/*
 * Connections: one struct conn per client connection and the state
 * machine every protocol shares once it knows the target:
 *
 *   READ_REQUEST -> AUTHORISE -> REVIEW -> RESOLVE -> CONNECT -> RELAY
 *
 * with CLOSING for a last reply being flushed.  This file is a
 * connection's life: made (conn_new), its first bytes sniffed, its
 * timers, its end (conn_close, which frees everything it owns and writes
 * its close record).  Asynchronous work (review, DNS, connect) is
 * cancelled there, so a late callback never finds freed memory.  The
 * decision is authorise.c, the way to the target dial.c.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/log.h"
#include "common/sockaddr.h"
#include "policy/policy.h"
#include "approval/approval.h"
#include "proxy/proxy_int.h"

#define CONN_FLUSH_TIMEOUT_MS	5000
/* A burst this large gives its memory back once it is over. */
#define CONN_TRIM_AFTER		64
#define CONN_EARLY_READ		4096

static int	 conn_read_early(struct conn *);
static void	 conn_sniff_cb(struct bufferevent *, void *);
static void	 conn_event_cb(struct bufferevent *, short, void *);
static void	 conn_timer_cb(evutil_socket_t, short, void *);
static void	 conn_flush_cb(struct bufferevent *, void *);
static void	 conn_flush_event_cb(struct bufferevent *, short, void *);

/* The protocol's name, as logged and shown to reviewers. */
const char *
conn_proto_name(enum conn_proto p)
{
	switch (p) {
	case PROTO_CONNECT:
		return "connect";
	case PROTO_HTTP:
		return "http";
	case PROTO_SOCKS5:
		return "socks5";
	case PROTO_NONE:
		break;
	}
	return "none";
}

const struct config *
conn_config(const struct conn *c)
{
	return c->px->gen->conf;
}

void
conn_new(struct listener *l, int fd, struct sockaddr *sa, socklen_t salen,
    struct client_slot *slot, const char *refuse, const char *detail)
{
	struct proxy *px = l->px;
	struct conn *c;
	int one = 1, ms;

	(void)salen;
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (detail != NULL && (c->error = strdup(detail)) == NULL)) {
		log_warnx("accept: out of memory");
		free(c);
		client_slot_put(px, slot);
		close(fd);
		return;
	}
	c->slot = slot;
	c->refuse = refuse;
	c->px = px;
	c->id = ++px->next_id;
	metrics_accept(px);
	c->state = CONN_SNIFF;
	c->connect_fd = -1;
	event_base_gettimeofday_cached(px->base, &c->start);
	c->last_active = c->start;
	if (px->label != NULL)
		snprintf(c->client_name, sizeof(c->client_name), "%s",
		    px->label);
	else if (sa->sa_family == AF_UNIX)
		/* Unix peers are unnamed: name the socket they came in on. */
		snprintf(c->client_name, sizeof(c->client_name), "unix:%s",
		    l->name);
	else
		sockaddr_format(sa, c->client_name, sizeof(c->client_name));
	if (sa->sa_family != AF_UNIX)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->client = bufferevent_socket_new(px->base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	if (c->client == NULL) {
		close(fd);
		goto fail;
	}
	if ((c->timer = evtimer_new(px->base, conn_timer_cb, c)) == NULL) {
		bufferevent_free(c->client);
		goto fail;
	}
	TAILQ_INSERT_TAIL(&px->conns, c, entry);
	px->nconns++;
	if (px->nconns > px->npeak)
		px->npeak = px->nconns;
	if (c->refuse != NULL)
		px->nrefusing++;
	bufferevent_setcb(c->client, conn_sniff_cb, NULL, conn_event_cb, c);
	bufferevent_enable(c->client, EV_READ);
	/* A client only held to be refused gets little time to ask. */
	ms = conn_header_deadline(px);
	if (c->refuse != NULL && ms > CONN_REFUSE_TIMEOUT_MS)
		ms = CONN_REFUSE_TIMEOUT_MS;
	conn_timer_set(c, ms);
	switch (conn_read_early(c)) {
	case 1:
		conn_sniff_cb(c->client, c);	/* may close c */
		break;
	case -1:
		conn_close(c, "client-eof");
		break;
	}
	return;
fail:
	client_slot_put(px, c->slot);
	free(c->error);
	free(c);
}

int
conn_header_deadline(const struct proxy *px)
{
	const struct config *conf = px->gen->conf;
	unsigned long long used, max, ms;

	used = px->nconns - px->nrefusing;
	max = (unsigned long long)conf->max_connections;
	ms = (unsigned long long)conf->header_timeout_ms;
	if (used * 2 <= max)
		return conf->header_timeout_ms;
	/* Half full to full: the whole timeout down to the floor. */
	ms = used >= max ? 0 : ms * (max - used) * 2 / max;
	if (ms < CONN_HEADER_MIN_MS)
		ms = CONN_HEADER_MIN_MS;
	if (ms > (unsigned long long)conf->header_timeout_ms)
		ms = (unsigned long long)conf->header_timeout_ms;
	return (int)ms;
}

/*
 * Slow headers from many addresses (each under maxClientConnections)
 * could hold every slot for the whole header timeout while a client
 * with a complete request is refused: when full, the oldest incomplete
 * head gives its slot up, as HAProxy and Envoy shed them.  The list is
 * in the order of accept, so the first match is the oldest.
 */
int
conn_shed_oldest(struct proxy *px)
{
	struct conn *c;

	TAILQ_FOREACH(c, &px->conns, entry) {
		if (c->refuse != NULL || c->slot == NULL)
			continue;
		if (c->state != CONN_SNIFF && c->state != CONN_READ_REQUEST)
			continue;
		conn_error(c, "no complete request head while the proxy was "
		    "full (proxy.maxConnections %d): the oldest incomplete "
		    "one gave its slot up", conn_config(c)->max_connections);
		conn_close(c, "header-shed");
		return 1;
	}
	return 0;
}

/*
 * Clients speak first, and their request has usually arrived by the time
 * the connection is accepted: read it now instead of after another loop
 * turn.  At most a small chunk; nothing read (EAGAIN, an error) is left
 * for the bufferevent's own read, which sees it again.  Returns 1 when
 * bytes were read, -1 at EOF: a client gone before it said anything
 * (one of a burst left in the backlog) frees its slot at once.
 */
static int
conn_read_early(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->client);
	struct evbuffer_iovec v;
	ssize_t r;

	evbuffer_unfreeze(in, 0);
	if (evbuffer_reserve_space(in, CONN_EARLY_READ, &v, 1) != 1) {
		evbuffer_freeze(in, 0);
		return 0;
	}
	r = recv(bufferevent_getfd(c->client), v.iov_base, v.iov_len,
	    MSG_DONTWAIT);
	if (r > 0)
		v.iov_len = (size_t)r;
	evbuffer_commit_space(in, &v, r > 0 ? 1 : 0);
	evbuffer_freeze(in, 0);
	return r > 0 ? 1 : r == 0 ? -1 : 0;
}

/* The first byte says which protocol the client speaks. */
static void
conn_sniff_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	unsigned char b;
	static const unsigned char socks4_reject[8] = { 0x00, 0x5b };

	if (evbuffer_copyout(in, &b, 1) != 1)
		return;
	if (b == 0x05) {
		socks5_start(c);
	} else if (b == 0x04) {
		/* SOCKS4: "request rejected or failed", then close. */
		conn_error(c, "SOCKS4 is not supported; use SOCKS5");
		evbuffer_drain(in, evbuffer_get_length(in));
		bufferevent_write(bev, socks4_reject, sizeof(socks4_reject));
		conn_close_after_flush(c, "socks4-refused");
	} else if (b >= 'A' && b <= 'Z') {
		http_start(c);
	} else if (b == '\r' || b == '\n') {
		http_start(c);	/* stray CRLF before a request line */
	} else {
		char msg[64];

		snprintf(msg, sizeof(msg), "unknown protocol (first byte "
		    "0x%02x)", b);
		conn_error(c, "%s", msg);
		log_info("conn %llu: %s", (unsigned long long)c->id, msg);
		conn_close(c, "unknown-protocol");
	}
}

/* Client events before a protocol handler took over. */
static void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	if (what & BEV_EVENT_EOF)
		conn_close(c, "client-eof");
	else if (what & BEV_EVENT_ERROR)
		conn_close(c, "client-error");
}

void
conn_touch(struct conn *c)
{
	event_base_gettimeofday_cached(c->px->base, &c->last_active);
}

void
conn_timer_set(struct conn *c, int ms)
{
	struct timeval tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(c->timer, &tv);
}

/* The connection timer: header, idle or flush timeout, by state. */
static void
conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	const struct config *conf = conn_config(c);
	struct timeval now, d;
	long idle, elapsed;

	(void)fd;
	(void)what;
	switch (c->state) {
	case CONN_SNIFF:
		conn_close(c, "header-timeout");
		break;
	case CONN_READ_REQUEST:
		if (c->proto == PROTO_HTTP || c->proto == PROTO_CONNECT)
			http_timeout(c);
		else
			conn_close(c, "header-timeout");
		break;
	case CONN_RELAY:
		if (c->term != NULL) {
			term_timeout(c);
			break;
		}
		if (relay_peek_waiting(c)) {
			relay_peek_timeout(c);
			break;
		}
		idle = conf->idle_timeout_ms;
		event_base_gettimeofday_cached(c->px->base, &now);
		timersub(&now, &c->last_active, &d);
		elapsed = d.tv_sec * 1000 + d.tv_usec / 1000;
		if (elapsed >= idle)
			conn_close(c, "idle-timeout");
		else
			conn_timer_set(c, (int)(idle - elapsed));
		break;
	case CONN_CLOSING:
		conn_close(c, "flush-timeout");
		break;
	case CONN_AUTHORISE:
	case CONN_REVIEW:
	case CONN_RESOLVE:
	case CONN_CONNECT:
		/* review, DNS and connect have timeouts of their own */
		break;
	}
}

/* Writes to the client drained: the last reply is out, close. */
static void
conn_flush_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		conn_close(c, c->closing_end);
}

/* The client went away while its last reply was flushed. */
static void
conn_flush_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	(void)what;
	conn_close(c, "client-gone");
}

void
conn_close_after_flush(struct conn *c, const char *end)
{
	c->state = CONN_CLOSING;
	c->closing_end = end;
	relay_free(c);
	term_free(c);
	if (c->upstream != NULL) {
		bufferevent_free(c->upstream);
		c->upstream = NULL;
	}
	bufferevent_disable(c->client, EV_READ);
	bufferevent_setwatermark(c->client, EV_WRITE, 0, 0);
	bufferevent_setcb(c->client, NULL, conn_flush_cb, conn_flush_event_cb,
	    c);
	conn_timer_set(c, CONN_FLUSH_TIMEOUT_MS);
	if (evbuffer_get_length(bufferevent_get_output(c->client)) == 0)
		conn_close(c, end);
	else
		bufferevent_enable(c->client, EV_WRITE);
}

void
conn_close(struct conn *c, const char *end)
{
	struct proxy *px = c->px;
	struct alog_rec r;
	struct timeval now, d;

	/* Over a limit, whatever it sent: the refusal is on record. */
	if (c->refuse != NULL && c->decision == NULL) {
		conn_decide(c, 0, c->refuse, c->error);
		conn_log_decision(c);
	}
	/* A request sent to the upstream proxy, gone before its answer. */
	if (c->decision_wait) {
		c->decision_wait = 0;
		conn_log_decision(c);
	}
	event_base_gettimeofday_cached(px->base, &now);
	timersub(&now, &c->start, &d);
	conn_record(c, &r);
	r.close = 1;
	r.end = end;
	r.bytes_up = c->bytes_up;
	r.bytes_down = c->bytes_down;
	r.ms = (uint64_t)d.tv_sec * 1000 + (uint64_t)d.tv_usec / 1000;
	accesslog_write(px->alog, &r);
	metrics_close(px, c->proto, &r);
	log_debug("conn %llu closed: %s", (unsigned long long)c->id, end);

	if (c->review != NULL)
		review_cancel(c->review);
	if (c->gone_ev != NULL)
		event_free(c->gone_ev);
	pgen_unref(c->gen);
	dns_cancel(c->dnsq);
	if (c->connect_ev != NULL)
		event_free(c->connect_ev);
	if (c->connect_fd != -1)
		close(c->connect_fd);
	parent_conn_free(c);
	relay_free(c);
	term_free(c);
	if (c->upstream != NULL)
		bufferevent_free(c->upstream);
	if (c->client != NULL)
		bufferevent_free(c->client);
	event_free(c->timer);
	http_conn_free(c->http);
	free(c->rule_source);
	free(c->error);
	free(c->user);
	client_slot_put(px, c->slot);
	TAILQ_REMOVE(&px->conns, c, entry);
	px->nconns--;
	if (c->refuse != NULL)
		px->nrefusing--;
	free(c);
	/*
	 * The load is gone: give back what a burst left in malloc's free
	 * lists (10,000 tunnels left 58 MiB resident, 2.5 MiB idle).  Only
	 * after a burst, so a connection at a time costs no trim each.
	 */
	if (px->nconns == 0 && px->npeak >= CONN_TRIM_AFTER) {
		px->npeak = 0;
		malloc_trim(0);
	}
}

/* The fields a connection's decision and close records share. */
void
conn_record(struct conn *c, struct alog_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->conn = c->id;
	r->proto = conn_proto_name(c->proto);
	r->client = c->client_name;
	r->user = c->user;
	if (c->have_target) {
		r->host = c->host.text;
		r->port = c->port;
	}
	r->decision = c->decision;
	r->reason = c->reason;
	r->source = c->rule_source;
	r->layer = c->rule_layer;
	r->addr = c->addr;
	r->parent = parent_conn_via(c);
	r->error = c->error;
	if (c->terminated)
		r->tls = "terminated";
	r->credential = c->credential;
}
