/*
 * HTTP: CONNECT tunnels and forwarding of absolute-URI requests.
 *
 * A forwarded request is decided on its own authority, every time, also
 * on a kept-alive client connection; an upstream connection is reused
 * only for the same checked host:port.  The upstream sees origin-form,
 * a Host header rebuilt from the checked authority and no hop-by-hop or
 * proxy headers; bodies are streamed with their framing re-checked
 * (Content-Length counted, chunked re-serialised) in both directions.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/log.h"
#include "proxy/cred.h"
#include "proxy/proxy_int.h"

#define CHUNK_PULL		(4096 + 2)

enum http_state {
	H_HEAD,			/* reading a request head */
	H_WAIT,			/* authorising / connecting */
	H_FORWARD		/* request body up, response down */
};

enum body_kind {
	BODY_NONE,
	BODY_LENGTH,
	BODY_CHUNKED,
	BODY_EOF		/* response delimited by the upstream's close */
};

struct body {
	enum body_kind		 kind;
	uint64_t		 remaining;
	struct chunk_decoder	 dec;
	int			 raw;	/* chunked in, plain out (HTTP/1.0) */
	int			 done;
	int			 paused;	/* reads off: the receiver is behind */
};

enum resp_state {
	R_HEAD,
	R_BODY,
	R_DONE
};

struct http_conn {
	enum http_state	 state;
	struct evbuffer	*req_head;	/* the request for upstream */
	struct body	 req;
	int		 head_request;
	int		 client_minor;
	int		 client_keep;
	enum resp_state	 rstate;
	struct body	 resp;
	int		 resp_started;
	int		 up_reusable;
	char		 up_target[TARGET_TEXT_MAX];
	char		 up_addr[64];
	unsigned	 requests;
	struct bufferevent *reuse_bev;	/* the kept upstream at request time */
	int		 reused;	/* this request went on a kept upstream */
	int		 retried;
	struct evbuffer	*retry_head;	/* its head, to send again once */
	/*
	 * Masked credentials: the request body's placeholders swapped (or
	 * only looked for) through cstream, from the plain body in cplain;
	 * cchunked: sent on chunked (a length that may change).
	 */
	struct cred_stream *cstream;
	struct evbuffer	*cplain;
	int		 cchunked;
	/*
	 * The response of a request to a host where a value may be injected
	 * (allowPlaintextInject): values hidden (placeholders again) in its
	 * head and, through rstream from the plain body in rplain, in its
	 * body; rchunked: re-framed chunked for the client.
	 */
	int		 hide;
	struct cred_stream *rstream;
	/* The credentials put into this request (told at its response). */
	uint8_t		 used[CRED_MAX];
	struct evbuffer	*rplain;
	int		 rchunked;
};

/* The swapped pieces of one request head (http_cred_head). */
struct http_cred_swaps {
	char		*v[HTTP_MAX_HEADERS + 1];
	size_t		 n;
};

static void	 http_client_read_cb(struct bufferevent *, void *);
static void	 http_client_write_cb(struct bufferevent *, void *);
static void	 http_client_event_cb(struct bufferevent *, short, void *);
static void	 http_up_read_cb(struct bufferevent *, void *);
static void	 http_up_write_cb(struct bufferevent *, void *);
static void	 http_up_event_cb(struct bufferevent *, short, void *);
static void	 http_read_head(struct conn *);
static void	 http_request(struct conn *, struct http_msg *, size_t);
static void	 http_forward_request(struct conn *);
static void	 http_response_done(struct conn *);
static void	 http_error(struct conn *, int, const char *, const char *,
		    const char *);
static int	 http_hop_header(const struct http_msg *,
		    const struct http_header *, int);
static void	 http_put_headers(struct evbuffer *, const struct http_msg *,
		    int, const char *);
static int	 body_forward(struct body *, struct evbuffer *,
		    struct evbuffer *, uint64_t *);
static void	 http_drop_upstream(struct conn *);
static int	 http_cred_head(struct conn *, struct http_msg *,
		    const struct host *, uint16_t, const char **, size_t *,
		    struct http_cred_swaps *);
static void	 http_cred_leak(struct conn *, const struct cred *,
		    const char *, const char *);
static int	 http_cred_forward(struct conn *);
static int	 http_cred_body(struct body *, struct cred_stream *,
		    struct evbuffer *, int, struct evbuffer *, struct evbuffer *,
		    uint64_t *, const struct cred **);
static int	 http_response_head(struct conn *);
static int	 http_response_head1(struct conn *, struct evbuffer *);
static int	 http_hide_head(struct conn *, struct evbuffer *,
		    struct evbuffer *);
static int	 http_resp_body(struct conn *, int);
static void	 http_backpressure(struct bufferevent *, struct bufferevent *,
		    struct body *);

const char *
http_status_text(int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 407:
		return "Proxy Authentication Required";
	case 408:
		return "Request Timeout";
	case 429:
		return "Too Many Requests";
	case 421:
		return "Misdirected Request";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	}
	return "Error";
}

void
http_conn_free(struct http_conn *h)
{
	if (h == NULL)
		return;
	if (h->req_head != NULL)
		evbuffer_free(h->req_head);
	if (h->retry_head != NULL)
		evbuffer_free(h->retry_head);
	cred_stream_free(h->cstream);
	if (h->cplain != NULL)
		evbuffer_free(h->cplain);
	cred_stream_free(h->rstream);
	if (h->rplain != NULL)
		evbuffer_free(h->rplain);
	free(h);
}

void
http_start(struct conn *c)
{
	if ((c->http = calloc(1, sizeof(*c->http))) == NULL ||
	    (c->http->req_head = evbuffer_new()) == NULL) {
		conn_close(c, "out-of-memory");
		return;
	}
	c->proto = PROTO_HTTP;
	c->state = CONN_READ_REQUEST;
	bufferevent_setcb(c->client, http_client_read_cb, http_client_write_cb,
	    http_client_event_cb, c);
	http_read_head(c);
}

/*
 * Answer with an error and close.  xreason goes in X-Pisbx-Reason; the
 * body is one line of text for people.
 */
static void
http_error(struct conn *c, int status, const char *xreason,
    const char *text, const char *end)
{
	struct evbuffer *out = bufferevent_get_output(c->client);
	char body[2560];
	int n;

	n = snprintf(body, sizeof(body), "pisbx: %s\n", text);
	if (n < 0 || (size_t)n >= sizeof(body))
		n = (int)strlen(body);
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "Content-Length: %d\r\n"
	    "Connection: close\r\n", status, http_status_text(status), n);
	if (xreason != NULL)
		evbuffer_add_printf(out, "X-Pisbx-Reason: %s\r\n", xreason);
	evbuffer_add(out, "\r\n", 2);
	evbuffer_add(out, body, n);
	conn_close_after_flush(c, end);
}

void
http_timeout(struct conn *c)
{
	if (c->error == NULL)
		conn_error(c, "no complete request head in time");
	http_error(c, 408, NULL, "no complete request in time",
	    "header-timeout");
}

void
http_fail(struct conn *c, enum conn_err err)
{
	char target[TARGET_TEXT_MAX], text[2400], hint[1400];
	int status;

	target_format(target, sizeof(target), &c->host, c->port);
	switch (err) {
	case CERR_DENY:
		/*
		 * One line a person or an agent can act on: what was refused,
		 * why, and the config change that would allow it.
		 */
		status = 403;
		(void)conn_hint(c, hint, sizeof(hint));
		snprintf(text, sizeof(text), "%s to %s denied: %s%s%s%s%s%s",
		    c->proto == PROTO_CONNECT ? "CONNECT" : "request", target,
		    c->reason, c->error ? " (" : "", c->error ? c->error :
		    "", c->error ? ")" : "", hint[0] != '\0' ? "; " : "", hint);
		break;
	case CERR_INVALID:
		status = 400;
		snprintf(text, sizeof(text), "invalid target: %s",
		    c->error ? c->error : c->reason);
		break;
	case CERR_BUSY:
		status = 503;
		snprintf(text, sizeof(text), "%s to %s not served now: %s (%s)",
		    c->proto == PROTO_CONNECT ? "CONNECT" : "request", target,
		    c->reason, c->error ? c->error : "over a connection limit");
		break;
	case CERR_TIMEOUT:
		status = 504;
		(void)conn_hint(c, hint, sizeof(hint));
		snprintf(text, sizeof(text), "cannot reach %s: %s%s%s", target,
		    c->error ? c->error : "connect timed out",
		    hint[0] != '\0' ? "; " : "", hint);
		break;
	case CERR_DNS:
	case CERR_REFUSED:
	case CERR_NET_UNREACH:
	case CERR_HOST_UNREACH:
	case CERR_FAILURE:
	default:
		status = 502;
		(void)conn_hint(c, hint, sizeof(hint));
		snprintf(text, sizeof(text), "cannot reach %s: %s%s%s%s%s",
		    target, c->reason, c->error ? ": " : "",
		    c->error ? c->error : "", hint[0] != '\0' ? "; " : "",
		    hint);
		break;
	}
	http_error(c, status, c->reason, text, c->reason);
}

static void
http_client_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct http_conn *h = c->http;

	(void)bev;
	conn_touch(c);
	switch (h->state) {
	case H_HEAD:
		http_read_head(c);
		break;
	case H_WAIT:
		break;
	case H_FORWARD:
		if (!h->req.done)
			http_forward_request(c);
		else
			bufferevent_disable(c->client, EV_READ);
		break;
	}
}

static void
http_client_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (c->http->resp.paused && c->upstream != NULL &&
	    evbuffer_get_length(bufferevent_get_output(bev)) <= RELAY_LOW) {
		c->http->resp.paused = 0;
		bufferevent_enable(c->upstream, EV_READ);
	}
}

static void
http_client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	struct http_conn *h = c->http;

	if ((what & BEV_EVENT_EOF) && h->state == H_FORWARD && h->req.done) {
		/* The client half-closed after its request: answer, close. */
		h->client_keep = 0;
		bufferevent_disable(bev, EV_READ);
		return;
	}
	if (h->state == H_HEAD &&
	    evbuffer_get_length(bufferevent_get_input(bev)) == 0)
		conn_close(c, (what & BEV_EVENT_ERROR) ? "client-error" :
		    "eof");
	else
		conn_close(c, (what & BEV_EVENT_ERROR) ? "client-error" :
		    "client-eof");
}

static void
http_read_head(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->client);
	struct http_msg m;
	size_t len = evbuffer_get_length(in);
	const char *p;
	ssize_t n;

	if (len == 0)
		return;
	if (len > HTTP_HEAD_MAX + 1)
		len = HTTP_HEAD_MAX + 1;
	if ((p = (const char *)evbuffer_pullup(in, len)) == NULL) {
		conn_close(c, "out-of-memory");
		return;
	}
	n = http_parse_request(p, len, &m);
	if (n == 0)
		return;
	if (n < 0) {
		conn_error(c, "%s", m.errmsg);
		http_error(c, m.error, NULL, m.errmsg, "bad-request");
		return;
	}
	http_request(c, &m, (size_t)n);
}

/* Deny an unusable target: decision record, 400. */
static void
http_invalid_host(struct conn *c, const char *raw, size_t rawlen,
    const char *why)
{
	char detail[600];

	snprintf(detail, sizeof(detail), "\"%.*s\": %s",
	    (int)(rawlen > 300 ? 300 : rawlen), raw, why);
	c->have_target = 0;
	conn_decide(c, 0, "invalid-host", detail);
	conn_log_decision(c);
	http_error(c, 400, "invalid-host", detail, "invalid-host");
}

/*
 * Whether hd is hop-by-hop: a fixed list, those the message's Connection
 * (or Proxy-Connection) names, and in a request Host and Content-Length.
 */
static int
http_hop_header(const struct http_msg *m, const struct http_header *hd,
    int request)
{
	static const char *const hop[] = {
		"connection", "keep-alive", "proxy-connection",
		"proxy-authorization", "proxy-authenticate", "te", "trailer",
		"transfer-encoding", "upgrade", NULL
	};
	char name[128];
	size_t i;

	for (i = 0; hop[i] != NULL; i++)
		if (http_token_eq(hd->name, hd->namelen, hop[i]))
			return 1;
	if (request && (http_token_eq(hd->name, hd->namelen, "host") ||
	    http_token_eq(hd->name, hd->namelen, "content-length")))
		return 1;
	if (hd->namelen >= sizeof(name))
		return 0;
	memcpy(name, hd->name, hd->namelen);
	name[hd->namelen] = '\0';
	for (i = 0; i < m->nh; i++) {
		if ((http_token_eq(m->h[i].name, m->h[i].namelen,
		    "connection") || http_token_eq(m->h[i].name,
		    m->h[i].namelen, "proxy-connection")) &&
		    http_list_has(m->h[i].value, m->h[i].valuelen, name))
			return 1;
	}
	return 0;
}

/*
 * Copy m's end-to-end header fields to out: hop-by-hop ones dropped (in
 * a request also Host and Content-Length, which the proxy writes itself),
 * and the field named drop, if any.
 */
static void
http_put_headers(struct evbuffer *out, const struct http_msg *m,
    int request, const char *drop)
{
	const struct http_header *hd;
	size_t i;

	for (i = 0; i < m->nh; i++) {
		hd = &m->h[i];
		if (http_hop_header(m, hd, request) || (drop != NULL &&
		    http_token_eq(hd->name, hd->namelen, drop)))
			continue;
		evbuffer_add(out, hd->name, hd->namelen);
		evbuffer_add(out, ": ", 2);
		evbuffer_add(out, hd->value, hd->valuelen);
		evbuffer_add(out, "\r\n", 2);
	}
}

/* A complete request head of length headlen is at the input's start. */
static void
http_request(struct conn *c, struct http_msg *m, size_t headlen)
{
	struct http_conn *h = c->http;
	struct evbuffer *in = bufferevent_get_input(c->client);
	const char *auth, *path, *errstr = NULL;
	size_t authlen, pathlen, i;
	char target[TARGET_TEXT_MAX];
	struct host host;
	uint16_t port;
	struct http_cred_swaps sw;
	struct http_msg *cm = NULL;
	int r;

	h->requests++;
	if (http_token_eq(m->method, m->methodlen, "CONNECT")) {
		c->proto = PROTO_CONNECT;
		if (target_parse(m->target, m->targetlen, 0, &host, &port,
		    &errstr) == -1) {
			http_invalid_host(c, m->target, m->targetlen,
			    errstr != NULL ? errstr : "bad target");
			return;
		}
		http_drop_upstream(c);
		evbuffer_drain(in, headlen);	/* early bytes stay */
		c->host = host;
		c->port = port;
		c->have_target = 1;
		h->state = H_WAIT;
		conn_authorise(c);
		return;
	}
	if (m->targetlen > 0 && (m->target[0] == '/' || m->target[0] == '*')) {
		conn_error(c, "origin-form request to the proxy");
		http_error(c, 400, NULL, "this is a proxy: send absolute-URI "
		    "requests (http://host/path) or CONNECT", "bad-request");
		return;
	}
	if (http_split_uri(m->target, m->targetlen, &auth, &authlen, &path,
	    &pathlen, &errstr) == -1) {
		conn_error(c, "%s", errstr);
		http_error(c, 400, NULL, errstr, "bad-request");
		return;
	}
	if (target_parse(auth, authlen, 80, &host, &port, &errstr) == -1) {
		c->proto = PROTO_HTTP;
		http_invalid_host(c, auth, authlen, errstr != NULL ? errstr :
		    "bad host");
		return;
	}
	c->proto = PROTO_HTTP;
	cred_stream_free(h->cstream);
	h->cstream = NULL;
	h->cchunked = 0;
	h->hide = 0;
	memset(h->used, 0, sizeof(h->used));
	sw.n = 0;
	if (cred_table_count(c->px->creds) > 0) {
		/* Placeholders: swapped for an injectHost, else refused. */
		if ((cm = malloc(sizeof(*cm))) == NULL) {
			conn_close(c, "out-of-memory");
			return;
		}
		*cm = *m;
		r = http_cred_head(c, cm, &host, port, &path, &pathlen, &sw);
		if (r == -1) {
			free(cm);
			return;
		}
		m = cm;
	}
	target_format(target, sizeof(target), &host, port);
	if (c->upstream != NULL && (strcmp(target, h->up_target) != 0 ||
	    !parent_conn_keeps(c, &host, port)))
		http_drop_upstream(c);

	memset(&h->req, 0, sizeof(h->req));
	if (m->chunked)
		h->req.kind = BODY_CHUNKED;
	else if (m->has_length) {
		h->req.kind = m->length > 0 ? BODY_LENGTH : BODY_NONE;
		h->req.remaining = m->length;
	} else
		h->req.kind = BODY_NONE;
	if (cm != NULL && h->req.kind != BODY_NONE) {
		/*
		 * The body goes through the swap: dechunked, swapped, and
		 * sent chunked when a swap can change its length.
		 */
		if ((h->cplain == NULL &&
		    (h->cplain = evbuffer_new()) == NULL) ||
		    (h->cstream = cred_stream_new(c->px->creds,
		    conn_config(c), conn_config(c)->creds.allow_plaintext_inject ?
		    &host : NULL, port, CRED_INJECT)) == NULL) {
			for (i = 0; i < sw.n; i++)
				free(sw.v[i]);
			free(cm);
			conn_close(c, "out-of-memory");
			return;
		}
		h->req.raw = 1;
		h->cchunked = m->chunked ||
		    cred_stream_length_changes(h->cstream);
	} else
		h->cchunked = m->chunked;
	/*
	 * What comes back from a host a value may go to is hidden, so it
	 * must come back readable: identity, whatever the client accepts.
	 */
	h->hide = cm != NULL && conn_config(c)->creds.allow_plaintext_inject &&
	    cred_injects_any(c->px->creds, conn_config(c), &host, port);

	/*
	 * The request for upstream: origin-form, checked Host, no hops.
	 * A body sent chunked goes as HTTP/1.1 also for an HTTP/1.0
	 * client: chunked is no HTTP/1.0 framing (RFC 9112 6.1).
	 */
	evbuffer_drain(h->req_head, evbuffer_get_length(h->req_head));
	evbuffer_add(h->req_head, m->method, m->methodlen);
	evbuffer_add(h->req_head, " ", 1);
	if (pathlen == 0)
		evbuffer_add(h->req_head, "/", 1);
	else {
		if (path[0] == '?')
			evbuffer_add(h->req_head, "/", 1);
		evbuffer_add(h->req_head, path, pathlen);
	}
	evbuffer_add_printf(h->req_head, " HTTP/1.%d\r\nHost: %s",
	    h->cchunked ? 1 : m->minor, host.text);
	if (port != 80)
		evbuffer_add_printf(h->req_head, ":%u", port);
	evbuffer_add(h->req_head, "\r\n", 2);
	http_put_headers(h->req_head, m, 1, h->hide ? "accept-encoding" :
	    NULL);
	if (h->hide)
		evbuffer_add_printf(h->req_head,
		    "Accept-Encoding: identity\r\n");
	if (h->cchunked)
		evbuffer_add_printf(h->req_head,
		    "Transfer-Encoding: chunked\r\n");
	else if (m->has_length)
		evbuffer_add_printf(h->req_head, "Content-Length: %llu\r\n",
		    (unsigned long long)m->length);
	evbuffer_add(h->req_head, "\r\n", 2);
	for (i = 0; i < sw.n; i++) {
		/* They may hold a credential's value. */
		explicit_bzero(sw.v[i], strlen(sw.v[i]));
		free(sw.v[i]);
	}

	h->reuse_bev = c->upstream;
	h->retried = 0;
	h->head_request = http_token_eq(m->method, m->methodlen, "HEAD");
	h->client_minor = m->minor;
	h->client_keep = m->minor == 1 && !m->conn_close;
	free(cm);		/* m, when it was the swapped copy */
	evbuffer_drain(in, headlen);
	c->host = host;
	c->port = port;
	c->have_target = 1;
	h->state = H_WAIT;
	conn_authorise(c);
}

/*
 * Backpressure: stop reading from src while dst's output holds more than
 * RELAY_HIGH bytes; the write callbacks resume it at RELAY_LOW.
 */
static void
http_backpressure(struct bufferevent *src, struct bufferevent *dst,
    struct body *b)
{
	if (evbuffer_get_length(bufferevent_get_output(dst)) >= RELAY_HIGH) {
		bufferevent_disable(src, EV_READ);
		b->paused = 1;
	}
}

/* Forget the upstream of an earlier request (another target now). */
static void
http_drop_upstream(struct conn *c)
{
	if (c->upstream != NULL) {
		bufferevent_free(c->upstream);
		c->upstream = NULL;
	}
	c->http->up_target[0] = '\0';
	c->http->resp.paused = 0;
	c->http->req.paused = 0;
}

void
http_connected(struct conn *c)
{
	struct http_conn *h = c->http;
	const struct config *conf = conn_config(c);
	size_t n;
	int r;

	if (c->proto == PROTO_CONNECT) {
		static const char ok[] =
		    "HTTP/1.1 200 Connection established\r\n\r\n";

		if (term_full(c)) {
			conn_deny(c, "tls-tunnels-full", "network.tlsTerminate."
			    "maxTunnels terminated tunnels are open",
			    CERR_BUSY);
			return;
		}
		relay_send(c->client, ok, sizeof(ok) - 1);
		relay_start(c);
		return;
	}
	target_format(h->up_target, sizeof(h->up_target), &c->host, c->port);
	snprintf(h->up_addr, sizeof(h->up_addr), "%s", c->addr);
	h->state = H_FORWARD;
	h->rstate = R_HEAD;
	h->resp_started = 0;
	memset(&h->resp, 0, sizeof(h->resp));
	relay_tune(c->client);
	bufferevent_setcb(c->upstream, http_up_read_cb, http_up_write_cb,
	    http_up_event_cb, c);
	bufferevent_setcb(c->client, http_client_read_cb, http_client_write_cb,
	    http_client_event_cb, c);
	bufferevent_setwatermark(c->client, EV_WRITE, RELAY_LOW, 0);
	bufferevent_setwatermark(c->upstream, EV_WRITE, RELAY_LOW, 0);
	n = evbuffer_get_length(h->req_head);
	/* network.budget: a head that would cross it is not sent. */
	if ((uint64_t)n > budget_left(c)) {
		budget_cross(c);
		return;
	}
	budget_spend(c, n);
	c->bytes_up += n;
	/*
	 * A kept-alive upstream may have closed just as this request went
	 * out; a request without a body is then sent once more on a fresh
	 * connection to the same checked addresses (RFC 9112 9.3.1).
	 */
	h->reused = h->reuse_bev != NULL && c->upstream == h->reuse_bev;
	if (h->retry_head != NULL)
		evbuffer_drain(h->retry_head,
		    evbuffer_get_length(h->retry_head));
	if (h->reused && h->req.kind == BODY_NONE && !h->retried &&
	    (h->retry_head != NULL || (h->retry_head = evbuffer_new()) !=
	    NULL))
		evbuffer_add(h->retry_head, evbuffer_pullup(h->req_head, -1),
		    n);
	/*
	 * To the upstream proxy as a proxy request: absolute-form, its
	 * credentials (in a tunnel, the request goes as to the origin).
	 */
	if (parent_conn_absolute(c) && (r = parent_conn_http_head(c,
	    h->req_head)) != 0) {
		if (r == -1) {
			conn_error(c, "cannot write the request for the "
			    "upstream proxy");
			conn_close(c, "out-of-memory");
		}
		return;
	}
	evbuffer_add_buffer(bufferevent_get_output(c->upstream), h->req_head);
	bufferevent_enable(c->upstream, EV_READ | EV_WRITE);
	bufferevent_enable(c->client, EV_READ | EV_WRITE);
	conn_timer_set(c, conf->idle_timeout_ms);
	if (h->req.kind == BODY_NONE)
		h->req.done = 1;
	else
		http_forward_request(c);
	/* A response may already wait (a reused upstream cannot have one). */
}

static void
http_forward_request(struct conn *c)
{
	struct http_conn *h = c->http;
	uint64_t left, sent;
	int r;

	if (c->upstream == NULL || h->req.done)
		return;
	if (h->req.kind != BODY_NONE)
		relay_read_more(c->client);
	left = budget_left(c);
	sent = c->bytes_up;
	if (h->cstream != NULL) {
		if ((r = http_cred_forward(c)) == -2)
			return;
	} else
		r = body_forward(&h->req, bufferevent_get_input(c->client),
		    bufferevent_get_output(c->upstream), &c->bytes_up);
	/*
	 * network.budget: body bytes that would cross it are still in the
	 * upstream's output (written from the loop, never here): closing
	 * now sends none of them.
	 */
	if (c->bytes_up - sent > left) {
		c->bytes_up = sent;
		budget_cross(c);
		return;
	}
	budget_spend(c, c->bytes_up - sent);
	if (r == -1) {
		conn_error(c, "malformed chunked request body");
		conn_close(c, "bad-request-body");
		return;
	}
	if (r == 1) {
		h->req.done = 1;
		/* Pipelined requests wait until this response is done. */
		bufferevent_disable(c->client, EV_READ);
		return;
	}
	http_backpressure(c->client, c->upstream, &c->http->req);
}

static void
http_up_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (c->http->req.paused && !c->http->req.done &&
	    evbuffer_get_length(bufferevent_get_output(bev)) <= RELAY_LOW) {
		c->http->req.paused = 0;
		bufferevent_enable(c->client, EV_READ);
	}
}

/* Parse and pass on a response head; 1 when done with heads, 0 more, -1 closed. */
static int
http_response_head(struct conn *c)
{
	struct evbuffer *head;
	int r;

	/* Each head is written here first, to be hidden as a whole. */
	if ((head = evbuffer_new()) == NULL) {
		conn_close(c, "out-of-memory");
		return -1;
	}
	r = http_response_head1(c, head);
	evbuffer_free(head);
	return r;
}

/* As http_response_head, each head written to head first. */
static int
http_response_head1(struct conn *c, struct evbuffer *head)
{
	struct http_conn *h = c->http;
	struct evbuffer *in = bufferevent_get_input(c->upstream);
	struct evbuffer *out = bufferevent_get_output(c->client);
	struct http_msg m;
	size_t len, before;
	const char *p;
	ssize_t n;
	int rechunk, drop_length;

	for (;;) {
		len = evbuffer_get_length(in);
		if (len == 0)
			return 0;
		if (len > HTTP_HEAD_MAX + 1)
			len = HTTP_HEAD_MAX + 1;
		p = (const char *)evbuffer_pullup(in, len);
		n = http_parse_response(p, len, &m);
		if (n == 0)
			return 0;
		if (n < 0 || m.status == 101) {
			conn_error(c, "%s", n < 0 ? m.errmsg :
			    "unexpected 101 Switching Protocols");
			http_error(c, 502, NULL, "bad response from the "
			    "upstream server", "bad-response");
			return -1;
		}
		before = evbuffer_get_length(out);
		if (m.status >= 100 && m.status < 200) {
			/* Interim responses: pass on to HTTP/1.1 clients. */
			if (h->client_minor == 1) {
				evbuffer_add(head, m.statusline,
				    m.statuslinelen);
				evbuffer_add(head, "\r\n", 2);
				http_put_headers(head, &m, 0, NULL);
				evbuffer_add(head, "\r\n", 2);
				if (http_hide_head(c, head, out) == -1)
					return -1;
			}
			c->bytes_down += evbuffer_get_length(out) - before;
			evbuffer_drain(in, (size_t)n);
			continue;
		}
		/*
		 * Through the upstream proxy the decision record waits for
		 * its answer: a 407 is the proxy's (an origin has no use for
		 * it) and refuses the request; any other answer is passed on
		 * as it came, since pisbx cannot tell the gateway's from the
		 * origin's.
		 */
		if (c->decision_wait) {
			if (m.status == 407) {
				parent_conn_auth_refused(c, 407);
				return -1;
			}
			conn_log_decision(c);
		}
		memset(&h->resp, 0, sizeof(h->resp));
		if (h->head_request || m.status == 204 || m.status == 304)
			h->resp.kind = BODY_NONE;
		else if (m.chunked)
			h->resp.kind = BODY_CHUNKED;
		else if (m.te_other)
			h->resp.kind = BODY_EOF;
		else if (m.has_length) {
			h->resp.kind = m.length > 0 ? BODY_LENGTH : BODY_NONE;
			h->resp.remaining = m.length;
		} else
			h->resp.kind = BODY_EOF;
		if (h->resp.kind == BODY_CHUNKED && h->client_minor == 0)
			h->resp.raw = 1;
		rechunk = h->resp.kind == BODY_CHUNKED && !h->resp.raw;
		drop_length = h->resp.kind == BODY_CHUNKED;
		cred_stream_free(h->rstream);
		h->rstream = NULL;
		if (h->hide && h->resp.kind != BODY_NONE) {
			/*
			 * The body through the hide stream: plain in (a
			 * chunked one decoded), and out chunked to an
			 * HTTP/1.1 client when it was chunked or its length
			 * may change, else as it came, or to an HTTP/1.0
			 * client delimited by our close.
			 */
			if ((h->rplain == NULL &&
			    (h->rplain = evbuffer_new()) == NULL) ||
			    (h->rstream = cred_stream_new(c->px->creds,
			    conn_config(c), &c->host, c->port, CRED_HIDE)) ==
			    NULL) {
				conn_close(c, "out-of-memory");
				return -1;
			}
			if (h->resp.kind == BODY_CHUNKED)
				h->resp.raw = 1;
			else if (h->resp.kind == BODY_LENGTH &&
			    cred_stream_length_changes(h->rstream)) {
				drop_length = 1;
				rechunk = h->client_minor == 1;
				if (!rechunk)
					h->client_keep = 0;
			}
		}
		h->rchunked = rechunk;
		h->up_reusable = !m.conn_close && h->resp.kind != BODY_EOF &&
		    (m.minor == 1 || m.conn_keepalive);
		if (h->resp.kind == BODY_EOF || h->resp.raw)
			h->client_keep = 0;

		evbuffer_add(head, m.statusline, m.statuslinelen);
		evbuffer_add(head, "\r\n", 2);
		/* Re-chunked: a Content-Length would contradict the framing. */
		http_put_headers(head, &m, 0, drop_length ?
		    "content-length" : NULL);
		if (rechunk)
			evbuffer_add_printf(head,
			    "Transfer-Encoding: chunked\r\n");
		if (!h->client_keep)
			evbuffer_add_printf(head, "Connection: close\r\n");
		else if (h->client_minor == 0)
			evbuffer_add_printf(head, "Connection: keep-alive\r\n");
		evbuffer_add(head, "\r\n", 2);
		if (http_hide_head(c, head, out) == -1)
			return -1;
		c->bytes_down += evbuffer_get_length(out) - before;
		evbuffer_drain(in, (size_t)n);
		h->resp_started = 1;
		/* The request went: pisbx-run's summary hears what went in. */
		if (h->cstream != NULL)
			cred_stream_mark(h->cstream, h->used);
		conn_cred_injected(c, h->used);
		memset(h->used, 0, sizeof(h->used));
		return 1;
	}
}

static void
http_up_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct http_conn *h = c->http;
	int r;

	(void)bev;
	conn_touch(c);
	switch (h->rstate) {
	case R_HEAD:
		if ((r = http_response_head(c)) <= 0)
			return;
		h->rstate = R_BODY;
		/* FALLTHROUGH */
	case R_BODY:
		if (h->resp.kind != BODY_NONE)
			relay_read_more(c->upstream);
		if (h->rstream != NULL) {
			if ((r = http_resp_body(c, 0)) == -2)
				return;
		} else
			r = body_forward(&h->resp,
			    bufferevent_get_input(c->upstream),
			    bufferevent_get_output(c->client), &c->bytes_down);
		if (r == -1) {
			conn_error(c, "malformed chunked response body");
			conn_close_after_flush(c, "bad-response");
			return;
		}
		if (r == 0) {
			http_backpressure(c->upstream, c->client, &h->resp);
			return;
		}
		h->rstate = R_DONE;
		http_response_done(c);
		return;
	case R_DONE:
		/* Bytes after a complete response: not reusable. */
		http_drop_upstream(c);
		return;
	}
}

static void
http_up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	struct http_conn *h = c->http;

	(void)bev;
	if (h->rstate == R_DONE || h->state != H_FORWARD) {
		/* An idle kept-alive upstream went away. */
		http_drop_upstream(c);
		return;
	}
	if (h->rstate == R_BODY && h->resp.kind == BODY_EOF &&
	    (what & BEV_EVENT_EOF)) {
		/* The end of the body: what the hide stream holds goes. */
		if (h->rstream != NULL && http_resp_body(c, 1) == -2)
			return;
		h->client_keep = 0;
		conn_close_after_flush(c, "eof");
		return;
	}
	if (h->rstate == R_HEAD && !h->resp_started && h->reused &&
	    !h->retried && h->retry_head != NULL &&
	    evbuffer_get_length(h->retry_head) > 0 &&
	    evbuffer_get_length(bufferevent_get_input(c->upstream)) == 0) {
		h->retried = 1;
		h->reused = 0;
		h->reuse_bev = NULL;
		http_drop_upstream(c);
		evbuffer_drain(h->req_head, evbuffer_get_length(h->req_head));
		evbuffer_add_buffer(h->req_head, h->retry_head);
		h->state = H_WAIT;
		bufferevent_disable(c->client, EV_READ);
		conn_redial(c);
		return;
	}
	if (h->rstate == R_HEAD && !h->resp_started && c->decision_wait) {
		parent_conn_no_answer(c);
		return;
	}
	if (h->rstate == R_HEAD && !h->resp_started) {
		conn_error(c, "%s", (what & BEV_EVENT_EOF) ?
		    "upstream closed without a response" :
		    "upstream connection failed");
		http_error(c, 502, NULL, "the upstream server closed the "
		    "connection without a response", "upstream-eof");
		return;
	}
	/*
	 * A truncated response: deliver what came, then end the client's
	 * connection so it sees the truncation.
	 */
	conn_error(c, "the upstream closed in the middle of a response");
	conn_close_after_flush(c, (what & BEV_EVENT_EOF) ? "upstream-eof" :
	    "upstream-error");
}

/* One exchange finished: keep the client for the next one, or close. */
static void
http_response_done(struct conn *c)
{
	struct http_conn *h = c->http;
	const struct config *conf = conn_config(c);

	if (!h->up_reusable)
		http_drop_upstream(c);
	if (!h->client_keep || !h->req.done) {
		conn_close_after_flush(c, "eof");
		return;
	}
	h->state = H_HEAD;
	h->rstate = R_DONE;
	c->state = CONN_READ_REQUEST;
	memset(&h->req, 0, sizeof(h->req));
	bufferevent_enable(c->client, EV_READ);
	conn_timer_set(c, conf->header_timeout_ms);
	if (evbuffer_get_length(bufferevent_get_input(c->client)) > 0)
		http_read_head(c);
}

/* The dialled address of the kept upstream (for its decision record). */
const char *
http_reuse_addr(const struct conn *c)
{
	return c->http != NULL ? c->http->up_addr : "";
}

/*
 * Look for the run's placeholders in a plain HTTP request head m (its
 * method, the path of its target at *path, its header names and values)
 * and, for a credential that may be injected at host:port under
 * credentials.allowPlaintextInject, swap them for the values: m's
 * header values and *path are pointed at the swapped copies in sw (the
 * caller frees them).  Any other placeholder refuses the request before
 * anything goes upstream: 403 credential-leak.  0, or -1 when the
 * connection was answered or closed.
 */
static int
http_cred_head(struct conn *c, struct http_msg *m, const struct host *host,
    uint16_t port, const char **path, size_t *pathlen,
    struct http_cred_swaps *sw)
{
	const struct config *conf = conn_config(c);
	const struct cred_table *t = c->px->creds;
	const struct host *ih = conf->creds.allow_plaintext_inject ? host :
	    NULL;
	struct http_conn *h = c->http;
	const struct cred *leak = NULL;
	const char *where = NULL, *why = NULL;
	char *out;
	size_t outlen, i;
	int r;

	sw->n = 0;
	r = cred_swap_buf(t, NULL, NULL, 0, m->method, m->methodlen, &out,
	    &outlen, &leak);
	free(out);
	if (r == -1) {
		where = "in the request method";
		goto refuse;
	}
	if (r == -2)
		goto oom;
	r = cred_swap_target(t, conf, ih, port, *path, *pathlen, &out, &outlen,
	    &leak);
	if (r == -1) {
		where = "in the request target";
		why = cred_unfit_why(conf, leak, ih, port, CRED_FIT_TARGET);
		goto refuse;
	}
	if (r == -2)
		goto oom;
	if (r > 0)
		cred_mark(t, *path, *pathlen, h->used);
	sw->v[sw->n++] = out;
	*path = out;
	*pathlen = outlen;
	for (i = 0; i < m->nh; i++) {
		/* A header name is no place for a value: a leak anywhere. */
		r = cred_swap_buf(t, NULL, NULL, 0, m->h[i].name,
		    m->h[i].namelen, &out, &outlen, &leak);
		free(out);
		if (r == -1) {
			where = "in a request header name";
			goto refuse;
		}
		if (r == -2)
			goto oom;
		r = cred_swap_header(t, conf, ih, port, m->h[i].name,
		    m->h[i].namelen, m->h[i].value, m->h[i].valuelen, &out,
		    &outlen, &leak);
		if (r == -1) {
			where = "in the request headers";
			why = cred_unfit_why(conf, leak, ih, port,
			    CRED_FIT_HEADER);
			goto refuse;
		}
		if (r == -2)
			goto oom;
		if (r > 0)
			cred_mark_header(t, m->h[i].name, m->h[i].namelen,
			    m->h[i].value, m->h[i].valuelen, h->used);
		sw->v[sw->n++] = out;
		m->h[i].value = out;
		m->h[i].valuelen = outlen;
	}
	return 0;
refuse:
	for (i = 0; i < sw->n; i++)
		free(sw->v[i]);
	sw->n = 0;
	c->host = *host;
	c->port = port;
	c->have_target = 1;
	http_cred_leak(c, leak, where, why);
	return -1;
oom:
	for (i = 0; i < sw->n; i++)
		free(sw->v[i]);
	sw->n = 0;
	conn_close(c, "out-of-memory");
	return -1;
}

/*
 * A placeholder where it may not go in a plain HTTP request: refused
 * with 403 when no response began (an upstream that got part of the
 * body is reset, so that it cannot take what it got for a whole
 * request), else the connection is closed.
 */
static void
http_cred_leak(struct conn *c, const struct cred *cr, const char *where,
    const char *why)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int fd;

	conn_cred_refuse(c, cr, where, why);
	if (c->upstream != NULL) {
		if ((fd = bufferevent_getfd(c->upstream)) != -1)
			(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg,
			    sizeof(lg));
		http_drop_upstream(c);
	}
	if (c->http->resp_started) {
		conn_close(c, "credential-leak");
		return;
	}
	http_fail(c, CERR_DENY);
}

/*
 * Forward the request body through the credential swap (http_cred_body):
 * as body_forward, or -2 when the connection was answered or closed (a
 * leak, out of memory).
 */
static int
http_cred_forward(struct conn *c)
{
	struct http_conn *h = c->http;
	const struct cred *leak = NULL;
	int r;

	r = http_cred_body(&h->req, h->cstream, h->cplain, h->cchunked,
	    bufferevent_get_input(c->client),
	    bufferevent_get_output(c->upstream), &c->bytes_up, &leak);
	if (r == -3)
		http_cred_leak(c, leak, "in the request body", NULL);
	else if (r == -2)
		conn_close(c, "out-of-memory");
	return r < -1 ? -2 : r;
}

/*
 * Pass the response body on through its hide stream (http_cred_body);
 * eof: the upstream closed, the end of a body delimited by it.  As
 * body_forward, or -2 when the connection was closed.
 */
static int
http_resp_body(struct conn *c, int eof)
{
	struct http_conn *h = c->http;
	struct evbuffer *dst = bufferevent_get_output(c->client);
	const struct cred *leak = NULL;
	char *out = NULL;
	size_t outlen = 0;
	int r;

	r = http_cred_body(&h->resp, h->rstream, h->rplain, h->rchunked,
	    bufferevent_get_input(c->upstream), dst, &c->bytes_down, &leak);
	if (r == 0 && eof) {
		if (cred_stream_feed(h->rstream, "", 0, 1, &out, &outlen,
		    &leak) < 0)
			r = -2;
		else if (outlen > 0) {
			evbuffer_add(dst, out, outlen);
			c->bytes_down += outlen;
		}
		free(out);
	}
	if (r < -1) {
		conn_close(c, "out-of-memory");
		return -2;
	}
	return r;
}

/*
 * Move body b from src to dst through the credential stream cs: b is
 * taken plain into plain (body_forward, a chunked body decoded), the
 * stream swaps or hides, and what comes out goes on as it is or, when
 * chunked, re-framed.  Returns as body_forward, or -2 out of memory,
 * -3 a placeholder that may not go there (*leak).  *count grows by
 * the bytes added to dst.
 */
static int
http_cred_body(struct body *b, struct cred_stream *cs, struct evbuffer *plain,
    int chunked, struct evbuffer *src, struct evbuffer *dst, uint64_t *count,
    const struct cred **leak)
{
	uint64_t taken = 0;
	size_t n, before, outlen = 0;
	char *out = NULL;
	const void *p;
	int r, s;

	r = body_forward(b, src, plain, &taken);
	if (r == -1)
		return -1;
	n = evbuffer_get_length(plain);
	if (n == 0 && r == 0)
		return 0;
	if (n == 0)
		p = "";
	else if ((p = evbuffer_pullup(plain, -1)) == NULL)
		return -2;
	s = cred_stream_feed(cs, p, n, r == 1, &out, &outlen, leak);
	evbuffer_drain(plain, n);
	if (s < 0) {
		if (out != NULL)
			explicit_bzero(out, outlen);
		free(out);
		return s == -1 ? -3 : -2;
	}
	before = evbuffer_get_length(dst);
	if (chunked) {
		if (outlen > 0) {
			evbuffer_add_printf(dst, "%zx\r\n", outlen);
			evbuffer_add(dst, out, outlen);
			evbuffer_add(dst, "\r\n", 2);
		}
		if (r == 1)
			evbuffer_add(dst, "0\r\n\r\n", 5);
	} else if (outlen > 0)
		evbuffer_add(dst, out, outlen);
	*count += evbuffer_get_length(dst) - before;
	if (out != NULL)
		explicit_bzero(out, outlen);
	free(out);
	return r;
}

/*
 * The head in head to out: with its values hidden (placeholders again)
 * when the request went to a host a value may go to.  0, or -1 when the
 * connection was closed (out of memory).
 */
static int
http_hide_head(struct conn *c, struct evbuffer *head, struct evbuffer *out)
{
	const char *p;
	char *hid = NULL;
	size_t len = evbuffer_get_length(head), hidlen = 0;

	if (!c->http->hide) {
		evbuffer_add_buffer(out, head);
		return 0;
	}
	if ((p = (const char *)evbuffer_pullup(head, -1)) == NULL ||
	    cred_hide_buf(c->px->creds, p, len, &hid, &hidlen) < 0) {
		conn_close(c, "out-of-memory");
		return -1;
	}
	evbuffer_add(out, hid, hidlen);
	evbuffer_drain(head, len);
	free(hid);
	return 0;
}

/*
 * Move body bytes from src to dst under the framing in b.  Returns 1 when
 * the body is complete, 0 when more is to come, -1 on a framing error.
 * *count grows by the bytes added to dst.
 */
static int
body_forward(struct body *b, struct evbuffer *src, struct evbuffer *dst,
    uint64_t *count)
{
	size_t before = evbuffer_get_length(dst), len, n, want;
	const char *p, *data;
	size_t datalen;
	uint64_t hdr;
	enum chunk_state prev;
	ssize_t r;
	int ret = 0;

	switch (b->kind) {
	case BODY_NONE:
		ret = 1;
		break;
	case BODY_EOF:
		evbuffer_add_buffer(dst, src);
		break;
	case BODY_LENGTH:
		len = evbuffer_get_length(src);
		n = len < b->remaining ? len : (size_t)b->remaining;
		if (n > 0)
			evbuffer_remove_buffer(src, dst, n);
		b->remaining -= n;
		ret = b->remaining == 0;
		break;
	case BODY_CHUNKED:
		for (;;) {
			if (b->dec.state == CHUNK_DONE) {
				ret = 1;
				break;
			}
			if ((len = evbuffer_get_length(src)) == 0)
				break;
			if (b->dec.state == CHUNK_DATA) {
				n = len < b->dec.remaining ? len :
				    (size_t)b->dec.remaining;
				evbuffer_remove_buffer(src, dst, n);
				b->dec.remaining -= n;
				if (b->dec.remaining == 0)
					b->dec.state = CHUNK_DATA_CRLF;
				continue;
			}
			want = len < CHUNK_PULL ? len : CHUNK_PULL;
			p = (const char *)evbuffer_pullup(src, want);
			prev = b->dec.state;
			r = chunk_step(&b->dec, p, want, &data, &datalen, &hdr);
			if (r < 0) {
				ret = -1;
				break;
			}
			if (r == 0) {
				if (want >= CHUNK_PULL)
					ret = -1;
				break;
			}
			if (!b->raw) {
				if (hdr != UINT64_MAX && hdr > 0)
					evbuffer_add_printf(dst, "%llx\r\n",
					    (unsigned long long)hdr);
				if (prev == CHUNK_DATA_CRLF)
					evbuffer_add(dst, "\r\n", 2);
				if (b->dec.state == CHUNK_DONE)
					evbuffer_add(dst, "0\r\n\r\n", 5);
			}
			evbuffer_drain(src, (size_t)r);
		}
		break;
	}
	*count += evbuffer_get_length(dst) - before;
	if (ret == 1)
		b->done = 1;
	return ret;
}
