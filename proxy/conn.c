/*
 * Connections: one struct conn per client connection and the state
 * machine every protocol shares once it knows the target:
 *
 *   READ_REQUEST -> AUTHORISE -> REVIEW -> RESOLVE -> CONNECT -> RELAY
 *
 * with CLOSING for a last reply being flushed.  Everything a connection
 * owns is freed in conn_close(), which also writes its close record.
 * Asynchronous work (review, DNS, connect) is cancelled there, so a late
 * callback never finds freed memory.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <stdarg.h>
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
static void	 conn_flush_cb(struct bufferevent *, void *);
static void	 conn_flush_event_cb(struct bufferevent *, short, void *);
static void	 conn_timer_cb(evutil_socket_t, short, void *);
static void	 conn_review_late(struct conn *, struct pgen *,
		    enum review_result, const char *);
static void	 conn_review_cb(enum review_result, enum review_scope,
		    const char *, void *);
static void	 conn_watch_gone(struct conn *);
static void	 conn_gone_cb(evutil_socket_t, short, void *);
static void	 conn_review_request(const struct conn *,
		    struct review_request *);
static void	 conn_allowed(struct conn *, const char *, const char *);
static void	 conn_literal_addr(const struct conn *,
		    struct sockaddr_storage *);
static int	 conn_literal_ok(struct conn *, char *, size_t);
static void	 conn_resolve(struct conn *);
static size_t	 conn_loopback_addrs(struct conn *, char *, size_t);
static void	 conn_dns_cb(const struct sockaddr_storage *, size_t,
		    const char *, void *);
static int	 conn_addr_ok(struct conn *, const struct sockaddr *,
		    char *, size_t);
static void	 conn_connect_next(struct conn *);
static void	 conn_connect_cb(evutil_socket_t, short, void *);
static void	 conn_connect_done(struct conn *, int, int);
static int	 conn_peer_check(struct conn *, int);
static void	 conn_dial_parent(struct conn *);
static void	 conn_record(struct conn *, struct alog_rec *);

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
	metrics_accept(px);	/* metrics hook */
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
	metrics_close(px, c->proto, &r);	/* metrics hook */
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
static void
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
}

void
conn_decide(struct conn *c, int allow, const char *reason,
    const char *detail)
{
	c->decision = allow ? "allow" : "deny";
	if (reason != c->reason)
		snprintf(c->reason, sizeof(c->reason), "%s", reason);
	if (detail != NULL)
		conn_error(c, "%s", detail);
	else {
		free(c->error);
		c->error = NULL;
	}
}

void
conn_error(struct conn *c, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		s = NULL;
	va_end(ap);
	free(c->error);
	c->error = s;
}

void
conn_log_decision(struct conn *c)
{
	struct alog_rec r;

	c->decision_wait = 0;
	conn_record(c, &r);
	accesslog_write(c->px->alog, &r);
	metrics_decision(c->px, c->proto, &r);	/* metrics hook */
	log_info("conn %llu: %s %s:%u %s (%s)", (unsigned long long)c->id,
	    conn_proto_name(c->proto), c->have_target ? c->host.text : "-",
	    c->port, c->decision ? c->decision : "-", c->reason);
}

void
conn_fail(struct conn *c, enum conn_err err)
{
	switch (c->proto) {
	case PROTO_SOCKS5:
		socks5_fail(c, err);
		break;
	case PROTO_CONNECT:
	case PROTO_HTTP:
		http_fail(c, err);
		break;
	case PROTO_NONE:
		conn_close(c, "failed");
		break;
	}
}

int
conn_hint(const struct conn *c, char *buf, size_t len)
{
	/* The tunnel pisbx chose for plain HTTP, not the client's CONNECT. */
	if (c->proto == PROTO_HTTP && strcmp(c->reason, "parent-refused") ==
	    0 && parent_conn_via(c) != NULL && !parent_conn_absolute(c))
		return policy_hint_parent_tunnel(conn_config(c), c->port, buf,
		    len);
	return policy_hint(conn_config(c), &c->host, c->port, c->reason, buf,
	    len);
}

/* Deny, log, tell whoever asked to know, and answer. */
void
conn_deny(struct conn *c, const char *reason, const char *detail,
    enum conn_err err)
{
	struct proxy_refusal	 r;
	char			 hint[1400];

	conn_decide(c, 0, reason, detail);
	conn_log_decision(c);
	/*
	 * Refusals (the policy's, the upstream proxy's), and an allowed
	 * target that could not be reached, which an HTTPS client shows
	 * only as "502": not over a limit, not an invalid request.
	 */
	memset(&r, 0, sizeof(r));
	r.unreachable = strcmp(reason, "dns-error") == 0 ||
	    strcmp(reason, "connect-error") == 0 ||
	    strcmp(reason, "parent-error") == 0;
	if ((err == CERR_DENY || r.unreachable || strcmp(reason,
	    "parent-auth") == 0) && c->px->refused != NULL && c->have_target) {
		r.host = c->host.text;
		r.port = c->port;
		r.proto = conn_proto_name(c->proto);
		r.reason = c->reason;
		r.detail = c->error;
		if (conn_hint(c, hint, sizeof(hint)) == 0)
			r.hint = hint;
		c->px->refused(&r, c->px->refused_arg);
	}
	conn_fail(c, err);
}

/* The review request for the connection's current target. */
static void
conn_review_request(const struct conn *c, struct review_request *req)
{
	memset(req, 0, sizeof(*req));
	req->host = c->host.text;
	req->port = c->port;
	req->protocol = conn_proto_name(c->proto);
	req->client = c->client_name[0] != '\0' ? c->client_name : NULL;
}

/*
 * The policy step: deny list, then allow list, then the review hook.  A
 * name that is denied or not yet approved never reaches DNS; an address
 * that could never be dialled is refused before anyone is asked.
 */
void
conn_authorise(struct conn *c)
{
	struct pgen *g = c->px->gen;
	const struct pattern *pat = NULL;
	struct review_request req;
	enum review_result now;
	const char *detail = NULL;
	char reason[TARGET_TEXT_MAX + 32], why[256];
	enum verdict v;

	c->state = CONN_AUTHORISE;
	c->addr[0] = '\0';
	evtimer_del(c->timer);
	if (c->client != NULL)
		bufferevent_disable(c->client, EV_READ);
	/* Over a connection limit: the request was read only to answer it. */
	if (c->refuse != NULL) {
		conn_deny(c, c->refuse, c->error, CERR_BUSY);
		return;
	}
	free(c->error);
	c->error = NULL;
	v = policy_eval(g->conf->policy, &c->host, c->port, &pat);
	/* The deciding entry's source: the log record names it. */
	free(c->rule_source);
	c->rule_source = NULL;
	c->rule_layer = NULL;
	if (pat != NULL && pat->source != NULL &&
	    (c->rule_source = strdup(pat->source)) != NULL)
		c->rule_layer = pat->layer;
	if (v != VERDICT_REVIEW)
		policy_reason(v, pat, reason, sizeof(reason));
	switch (v) {
	case VERDICT_DENY:
		if (pat == NULL) {
			/* The loopback name, without its exact entry. */
			conn_deny(c, "host-loopback", HOST_LOOPBACK_NAME
			    " is this machine's own loopback: only an exact "
			    "allow entry with its port reaches it", CERR_DENY);
			return;
		}
		/* The entry's deniedDomainReasons text: 403 body and log. */
		conn_deny(c, reason, pat->ceiling ? "outside the managed "
		    "allowedDomainsCeiling: no reviewer may open it" :
		    pat->reason, CERR_DENY);
		return;
	case VERDICT_ALLOW:
		conn_allowed(c, reason, NULL);
		return;
	case VERDICT_REVIEW:
		break;
	}
	/*
	 * A literal the dial step would refuse whatever the answer (non-
	 * public without an exact allow entry, or one of our listeners) is
	 * refused now: no person is asked a question that does not matter.
	 */
	if (c->host.kind != HOST_NAME && !conn_literal_ok(c, why,
	    sizeof(why))) {
		conn_deny(c, "non-public-address", why, CERR_DENY);
		return;
	}
	/*
	 * An approval covers what it was asked about: this target over this
	 * protocol.  A CONNECT after an approved forwarded request on the
	 * same client connection is a new question.
	 */
	conn_review_request(c, &req);
	if (review_grant_covers(&c->grant, &req)) {
		conn_allowed(c, review_result_reason(REVIEW_RESULT_ALLOW),
		    "approved earlier on this connection");
		return;
	}
	/* An approval with the scope "run" or "worker", still in force. */
	if (proxy_grant_covers(c->px, &req)) {
		conn_allowed(c, review_result_reason(REVIEW_RESULT_ALLOW),
		    "approved earlier in this run (scope run)");
		return;
	}
	c->state = CONN_REVIEW;
	metrics_review_begin(c);	/* metrics hook */
	c->review = review_start(g->rv, &req, conn_review_cb, c, &now,
	    &detail);
	if (c->review == NULL) {
		conn_review_cb(now, REVIEW_SCOPE_ONCE, detail, c);
		return;
	}
	c->gen = g;
	g->refs++;
	conn_watch_gone(c);
}

/*
 * A review can take as long as a person does, and the client's reads are
 * off meanwhile, so its EOF would go unseen: watch the socket for the
 * peer's close (EV_CLOSED, EPOLLRDHUP) and cancel the review when the
 * client goes away.  A client that half-closes while it waits counts as
 * gone: the answer would be a deny anyway.
 */
static void
conn_watch_gone(struct conn *c)
{
	evutil_socket_t fd;

	if (c->client == NULL || (fd = bufferevent_getfd(c->client)) == -1)
		return;
	c->gone_ev = event_new(c->px->base, fd, EV_CLOSED, conn_gone_cb, c);
	if (c->gone_ev != NULL && event_add(c->gone_ev, NULL) == -1) {
		event_free(c->gone_ev);
		c->gone_ev = NULL;
	}
}

static void
conn_gone_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	conn_close(c, "client-gone");
}

static void
conn_review_cb(enum review_result res, enum review_scope scope,
    const char *detail, void *arg)
{
	struct conn *c = arg;
	struct review_request req;
	struct pgen *g = c->gen;

	metrics_review_end(c);	/* metrics hook */
	c->review = NULL;
	if (c->gone_ev != NULL) {
		event_free(c->gone_ev);
		c->gone_ev = NULL;
	}
	c->gen = NULL;
	if (g != NULL && g != c->px->gen) {
		conn_review_late(c, g, res, detail);
		pgen_unref(g);
		return;
	}
	pgen_unref(g);
	if (res == REVIEW_RESULT_ALLOW) {
		conn_review_request(c, &req);
		review_grant_set(&c->grant, &req);
		/* Wider: every later connection of this process. */
		if (scope != REVIEW_SCOPE_ONCE)
			proxy_grant_add(c->px, &req);
		conn_allowed(c, review_result_reason(res), detail);
		return;
	}
	conn_deny(c, review_result_reason(res), detail, CERR_DENY);
}

/*
 * The answer to a review that was asked under config generation g, which
 * a reload has replaced since: the new config decides.  Its lists come
 * first (a host it denies is denied whatever the answer, with the
 * deny-list reason); an answer from a reviewer the reload removed or
 * changed is not used; one from the same reviewer holds for this request
 * only -- a reload ends every wider approval, a late one included.
 */
static void
conn_review_late(struct conn *c, struct pgen *g, enum review_result res,
    const char *detail)
{
	const struct pattern *pat = NULL;

	if (policy_eval(c->px->gen->conf->policy, &c->host, c->port,
	    &pat) != VERDICT_REVIEW) {
		conn_authorise(c);
		return;
	}
	if (!review_config_same(g->conf, c->px->gen->conf)) {
		conn_deny(c, "review:dropped", "the review was dropped by a "
		    "configuration reload that changed or removed the "
		    "reviewer", CERR_DENY);
		return;
	}
	if (res == REVIEW_RESULT_ALLOW)
		conn_allowed(c, review_result_reason(res), detail);
	else
		conn_deny(c, review_result_reason(res), detail, CERR_DENY);
}

/*
 * Allowed by policy or review (detail: the reviewer's reason, or NULL):
 * the decision record waits for the address.
 */
static void
conn_allowed(struct conn *c, const char *reason, const char *detail)
{
	conn_decide(c, 1, reason, detail);
	conn_resolve(c);
}

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
static int
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

static void
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
