/*
 * Prometheus metrics (proxy.metrics): counters kept where the access log
 * records are written, so that the figures and the log agree, and an
 * HTTP endpoint on the proxy's own event loop that answers GET /metrics
 * in the text exposition format 0.0.4 and 404 to anything else.
 *
 * Labels are bounded: a decision is counted by its reason's class
 * ("deny-list", "allow-list", "review:allow", "non-public-address"), never
 * by host or pattern, and the table of classes has a fixed size beyond
 * which classes count as "other".
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "common/log.h"
#include "common/sockaddr.h"
#include "proxy/proxy_int.h"

/* At most this many distinct (proto, decision, class) triples. */
#define METRICS_DECISIONS	128
#define METRICS_CLASS_MAX	32
/* A scraper gets this long to send its request and take the answer. */
#define METRICS_TIMEOUT_S	5
#define METRICS_HEAD_MAX	8192

/* Review latency buckets, in seconds. */
static const double metrics_le[] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60
};
#define METRICS_NLE	(sizeof(metrics_le) / sizeof(metrics_le[0]))

struct metrics_decision {
	enum conn_proto	 proto;
	int		 allow;
	char		 class[METRICS_CLASS_MAX];
	uint64_t	 n;
};

struct metrics {
	struct proxy		*px;
	struct evhttp		*http;
	char			 addr[INET6_ADDRSTRLEN + 16];

	uint64_t		 accepted;
	uint64_t		 closed[PROTO_SOCKS5 + 1];
	struct metrics_decision	 dec[METRICS_DECISIONS];
	size_t			 ndec;
	uint64_t		 dec_other;	/* beyond the table */
	uint64_t		 bytes_up;
	uint64_t		 bytes_down;
	int64_t			 tunnels;
	uint64_t		 dns_errors;
	uint64_t		 connect_errors;
	uint64_t		 parent_errors;
	uint64_t		 busy_max;	/* max-connections */
	uint64_t		 busy_client;	/* max-client-connections */
	uint64_t		 busy_nofd;	/* out-of-descriptors */
	uint64_t		 busy_tls;	/* tls-tunnels-full */
	uint64_t		 budget_cut;	/* closed at a bytes budget */
	uint64_t		 review_le[METRICS_NLE];
	uint64_t		 review_count;
	double			 review_sum;
};

static void	 metrics_class(const char *, char *, size_t);
static void	 metrics_request_cb(struct evhttp_request *, void *);
static void	 metrics_render(struct metrics *, struct evbuffer *);

/*
 * Serve /metrics on conf's proxy.metrics.listen, if set: 0, or -1 when
 * the address cannot be listened on (the proxy does not start).
 */
int
metrics_open(struct proxy *px, const struct config *conf)
{
	struct metrics *m;
	struct sockaddr_storage ss;
	socklen_t sslen;
	int fd = -1, one = 1;

	if (conf->metrics_listen == NULL)
		return 0;
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		log_warnx("metrics: out of memory");
		return -1;
	}
	m->px = px;
	px->metrics = m;
	if (sockaddr_parse(conf->metrics_listen, &ss, &sslen) == -1) {
		log_warnx("metrics: invalid address %s", conf->metrics_listen);
		goto fail;
	}
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ==
	    -1 || bind(fd, (struct sockaddr *)&ss, sslen) == -1 ||
	    listen(fd, 16) == -1) {
		log_warn("metrics: cannot listen on %s (proxy.metrics.listen)",
		    conf->metrics_listen);
		goto fail;
	}
	sslen = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sslen) == -1) {
		log_warn("metrics: getsockname");
		goto fail;
	}
	sockaddr_format((struct sockaddr *)&ss, m->addr, sizeof(m->addr));
	if ((m->http = evhttp_new(px->base)) == NULL)
		goto fail;
	/* A slow or stuck scraper holds one socket for a few seconds. */
	evhttp_set_timeout(m->http, METRICS_TIMEOUT_S);
	evhttp_set_max_headers_size(m->http, METRICS_HEAD_MAX);
	evhttp_set_max_body_size(m->http, 0);
	evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD |
	    EVHTTP_REQ_POST | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH | EVHTTP_REQ_TRACE |
	    EVHTTP_REQ_CONNECT);
	evhttp_set_gencb(m->http, metrics_request_cb, m);
	if (evhttp_accept_socket_with_handle(m->http, fd) == NULL) {
		log_warnx("metrics: cannot serve %s", m->addr);
		goto fail;
	}
	fd = -1;		/* the evhttp's now: freed with it */
	log_info("metrics on http://%s/metrics", m->addr);
	return 0;
fail:
	if (fd != -1)
		close(fd);
	metrics_free(px);
	return -1;
}

void
metrics_free(struct proxy *px)
{
	struct metrics *m = px->metrics;

	if (m == NULL)
		return;
	if (m->http != NULL)
		evhttp_free(m->http);
	free(m);
	px->metrics = NULL;
}

/* The address /metrics is served on ("ip:port"), or NULL. */
const char *
metrics_addr(const struct proxy *px)
{
	return px->metrics != NULL ? px->metrics->addr : NULL;
}

/* Hooks: see proxy_int.h. */
void
metrics_accept(struct proxy *px)
{
	if (px->metrics != NULL)
		px->metrics->accepted++;
}

void
metrics_budget(struct proxy *px)
{
	if (px->metrics != NULL)
		px->metrics->budget_cut++;
}

void
metrics_tunnel(struct proxy *px, int delta)
{
	if (px->metrics != NULL)
		px->metrics->tunnels += delta;
}

void
metrics_review_begin(struct conn *c)
{
	gettimeofday(&c->review_t0, NULL);
}

/* A review answered (or failed): its time goes into the histogram. */
void
metrics_review_end(struct conn *c)
{
	struct metrics *m = c->px->metrics;
	struct timeval now, d;
	double s;
	size_t i;

	if (m == NULL || !timerisset(&c->review_t0))
		return;
	gettimeofday(&now, NULL);
	timersub(&now, &c->review_t0, &d);
	timerclear(&c->review_t0);
	s = d.tv_sec < 0 ? 0 : (double)d.tv_sec + (double)d.tv_usec / 1e6;
	for (i = 0; i < METRICS_NLE; i++)
		if (s <= metrics_le[i])
			m->review_le[i]++;
	m->review_count++;
	m->review_sum += s;
}

/*
 * The class of a reason: "deny-list:*.x.com" is "deny-list", "review:"
 * keeps its outcome ("review:allow"); at most METRICS_CLASS_MAX - 1
 * characters of [a-z0-9:-], anything else made '_'.
 */
static void
metrics_class(const char *reason, char *out, size_t len)
{
	const char *colon;
	size_t n, i;

	if (reason == NULL || reason[0] == '\0')
		reason = "none";
	colon = strchr(reason, ':');
	if (colon != NULL && strncmp(reason, "review:", 7) == 0)
		colon = strchr(colon + 1, ':');
	n = colon != NULL ? (size_t)(colon - reason) : strlen(reason);
	if (n >= len)
		n = len - 1;
	for (i = 0; i < n; i++) {
		char ch = reason[i];

		out[i] = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		    ch == ':' || ch == '-' ? ch : '_';
	}
	out[n] = '\0';
}

/* A decision record was written: count it. */
void
metrics_decision(struct proxy *px, enum conn_proto proto,
    const struct alog_rec *r)
{
	struct metrics *m = px->metrics;
	struct metrics_decision *d;
	char class[METRICS_CLASS_MAX];
	int allow;
	size_t i;

	if (m == NULL || r->decision == NULL)
		return;
	allow = strcmp(r->decision, "allow") == 0;
	metrics_class(r->reason, class, sizeof(class));
	for (i = 0; i < m->ndec; i++) {
		d = &m->dec[i];
		if (d->proto == proto && d->allow == allow &&
		    strcmp(d->class, class) == 0)
			break;
	}
	if (i == m->ndec) {
		if (m->ndec == METRICS_DECISIONS) {
			m->dec_other++;
			goto causes;
		}
		d = &m->dec[m->ndec++];
		d->proto = proto;
		d->allow = allow;
		memcpy(d->class, class, sizeof(class));
	}
	m->dec[i].n++;
causes:
	if (strcmp(class, "dns-error") == 0)
		m->dns_errors++;
	else if (strcmp(class, "connect-error") == 0)
		m->connect_errors++;
	else if (strcmp(class, "parent-error") == 0)
		m->parent_errors++;
	else if (strcmp(class, "max-connections") == 0)
		m->busy_max++;
	else if (strcmp(class, "max-client-connections") == 0)
		m->busy_client++;
	else if (strcmp(class, "out-of-descriptors") == 0)
		m->busy_nofd++;
	else if (strcmp(class, "tls-tunnels-full") == 0)
		m->busy_tls++;
}

/* A close record was written: count the connection and its bytes. */
void
metrics_close(struct proxy *px, enum conn_proto proto,
    const struct alog_rec *r)
{
	struct metrics *m = px->metrics;

	if (m == NULL)
		return;
	m->closed[proto]++;
	m->bytes_up += r->bytes_up;
	m->bytes_down += r->bytes_down;
}


/* The exposition, format 0.0.4. */
static void
metrics_render(struct metrics *m, struct evbuffer *b)
{
	struct proxy *px = m->px;
	unsigned long long lost = accesslog_lost(px->alog);
	size_t i;
	int p;

	evbuffer_add_printf(b,
	    "# HELP pisbx_decisions_total Access decisions by protocol, "
	    "decision and reason class.\n"
	    "# TYPE pisbx_decisions_total counter\n");
	for (i = 0; i < m->ndec; i++)
		evbuffer_add_printf(b, "pisbx_decisions_total{proto=\"%s\","
		    "decision=\"%s\",reason=\"%s\"} %llu\n",
		    conn_proto_name(m->dec[i].proto),
		    m->dec[i].allow ? "allow" : "deny", m->dec[i].class,
		    (unsigned long long)m->dec[i].n);
	if (m->dec_other > 0)
		evbuffer_add_printf(b, "pisbx_decisions_total{proto=\"other\","
		    "decision=\"other\",reason=\"other\"} %llu\n",
		    (unsigned long long)m->dec_other);
	evbuffer_add_printf(b,
	    "# HELP pisbx_connections_accepted_total Client connections "
	    "accepted.\n"
	    "# TYPE pisbx_connections_accepted_total counter\n"
	    "pisbx_connections_accepted_total %llu\n"
	    "# HELP pisbx_connections_closed_total Client connections closed, "
	    "by protocol (none: closed before one was known).\n"
	    "# TYPE pisbx_connections_closed_total counter\n",
	    (unsigned long long)m->accepted);
	for (p = PROTO_NONE; p <= PROTO_SOCKS5; p++)
		evbuffer_add_printf(b, "pisbx_connections_closed_total"
		    "{proto=\"%s\"} %llu\n", conn_proto_name((enum conn_proto)p),
		    (unsigned long long)m->closed[p]);
	evbuffer_add_printf(b,
	    "# HELP pisbx_connections_open Client connections open now.\n"
	    "# TYPE pisbx_connections_open gauge\n"
	    "pisbx_connections_open %zu\n"
	    "# HELP pisbx_tunnels_open CONNECT and SOCKS5 tunnels relaying "
	    "now.\n"
	    "# TYPE pisbx_tunnels_open gauge\n"
	    "pisbx_tunnels_open %lld\n"
	    "# HELP pisbx_bytes_total Bytes relayed by closed connections "
	    "(up: client to upstream).\n"
	    "# TYPE pisbx_bytes_total counter\n"
	    "pisbx_bytes_total{direction=\"up\"} %llu\n"
	    "pisbx_bytes_total{direction=\"down\"} %llu\n",
	    px->nconns, (long long)m->tunnels,
	    (unsigned long long)m->bytes_up,
	    (unsigned long long)m->bytes_down);
	evbuffer_add_printf(b,
	    "# HELP pisbx_review_duration_seconds Time from asking the "
	    "reviewer to its answer.\n"
	    "# TYPE pisbx_review_duration_seconds histogram\n");
	for (i = 0; i < METRICS_NLE; i++)
		evbuffer_add_printf(b, "pisbx_review_duration_seconds_bucket"
		    "{le=\"%g\"} %llu\n", metrics_le[i],
		    (unsigned long long)m->review_le[i]);
	evbuffer_add_printf(b,
	    "pisbx_review_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
	    "pisbx_review_duration_seconds_sum %.6f\n"
	    "pisbx_review_duration_seconds_count %llu\n",
	    (unsigned long long)m->review_count, m->review_sum,
	    (unsigned long long)m->review_count);
	evbuffer_add_printf(b,
	    "# HELP pisbx_dns_errors_total Allowed connections refused "
	    "because the name did not resolve.\n"
	    "# TYPE pisbx_dns_errors_total counter\n"
	    "pisbx_dns_errors_total %llu\n"
	    "# HELP pisbx_upstream_errors_total Allowed connections whose "
	    "upstream could not be reached.\n"
	    "# TYPE pisbx_upstream_errors_total counter\n"
	    "pisbx_upstream_errors_total{kind=\"connect\"} %llu\n"
	    "pisbx_upstream_errors_total{kind=\"parent\"} %llu\n",
	    (unsigned long long)m->dns_errors,
	    (unsigned long long)m->connect_errors,
	    (unsigned long long)m->parent_errors);
	evbuffer_add_printf(b,
	    "# HELP pisbx_busy_refusals_total Connections answered 503 "
	    "(SOCKS5 0x01) over a limit, by cause.\n"
	    "# TYPE pisbx_busy_refusals_total counter\n"
	    "pisbx_busy_refusals_total{cause=\"max-connections\"} %llu\n"
	    "pisbx_busy_refusals_total{cause=\"max-client-connections\"} "
	    "%llu\n"
	    "pisbx_busy_refusals_total{cause=\"out-of-descriptors\"} %llu\n"
	    "pisbx_busy_refusals_total{cause=\"tls-tunnels-full\"} %llu\n"
	    "# HELP pisbx_connections_dropped_total Connections closed "
	    "unanswered over the limits.\n"
	    "# TYPE pisbx_connections_dropped_total counter\n"
	    "pisbx_connections_dropped_total %llu\n"
	    "# HELP pisbx_accesslog_lost_total Access-log records that could "
	    "not be written.\n"
	    "# TYPE pisbx_accesslog_lost_total counter\n"
	    "pisbx_accesslog_lost_total %llu\n"
	    "# HELP pisbx_budget_closed_total Connections closed at the "
	    "byte that crossed network.budget.bytesUpPerHost.\n"
	    "# TYPE pisbx_budget_closed_total counter\n"
	    "pisbx_budget_closed_total %llu\n",
	    (unsigned long long)m->busy_max,
	    (unsigned long long)m->busy_client,
	    (unsigned long long)(m->busy_nofd + px->nofd_total),
	    (unsigned long long)m->busy_tls, px->dropped_total, lost, (unsigned long long)m->budget_cut);
}

/* GET /metrics: the figures; anything else: 404. */
static void
metrics_request_cb(struct evhttp_request *req, void *arg)
{
	struct metrics *m = arg;
	struct evbuffer *b;
	const char *uri = evhttp_request_get_uri(req);
	size_t n;

	if ((b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	n = strcspn(uri, "?");
	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET ||
	    n != strlen("/metrics") || strncmp(uri, "/metrics", n) != 0) {
		evbuffer_add_printf(b, "not found: only GET /metrics is "
		    "served here\n");
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Content-Type", "text/plain; charset=utf-8");
		evhttp_send_reply(req, HTTP_NOTFOUND, "Not Found", b);
		evbuffer_free(b);
		return;
	}
	metrics_render(m, b);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(req, HTTP_OK, "OK", b);
	evbuffer_free(b);
}
