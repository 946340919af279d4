/*
 * A connection's decision, once its protocol has named the target:
 * policy (deny list, allow list), then the review hook (its request
 * warning when the hosts file already shows an allow would not help),
 * with the grant a reviewer may give and what happens when the client goes away or the
 * answer comes late; the decision's record, the refusal and what would
 * allow it.  An allowed target goes on to dial.c.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/log.h"
#include "policy/policy.h"
#include "approval/approval.h"
#include "proxy/cred.h"
#include "proxy/proxy_int.h"

static void	 conn_review_request(const struct conn *,
		    struct review_request *);
static int	 conn_review_warning(const struct conn *, char *, size_t);
static int	 conn_local_name(const char *);
static void	 conn_watch_gone(struct conn *);
static void	 conn_gone_cb(evutil_socket_t, short, void *);
static void	 conn_review_cb(enum review_result, enum review_scope,
		    const char *, void *);
static void	 conn_review_late(struct conn *, struct pgen *,
		    enum review_result, const char *);
static void	 conn_allowed(struct conn *, const char *, const char *);
static int	 conn_budget(struct conn *, struct pgen *);
static void	 conn_ask(struct conn *, struct pgen *);

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
	metrics_decision(c->px, c->proto, &r);
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
	if (strcmp(c->reason, "request-rules-opaque") == 0)
		return term_opaque(c, buf, len) ? 0 : -1;
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

void
conn_cred_leak(struct conn *c, const struct cred *cr, const char *where)
{
	conn_cred_refuse(c, cr, where, NULL);
}

void
conn_cred_refuse(struct conn *c, const struct cred *cr, const char *where,
    const char *why)
{
	const struct config	*conf = conn_config(c);
	struct proxy_refusal	 r;
	const char		*source = NULL;
	char			 detail[512], hint[768];

	if (cr->entry < conf->creds.n)
		source = conf->creds.v[cr->entry].source;
	/* The name only: the placeholder is no secret, but it says nothing. */
	if (why != NULL) {
		snprintf(detail, sizeof(detail), "the placeholder of %s %s: "
		    "%s may go to %s:%u, but %s", cr->name, where, cr->name,
		    c->host.text, c->port, why);
		snprintf(hint, sizeof(hint), "a value goes into a request "
		    "only where it can stand as it is: a request target takes "
		    "URI characters only, a header value no line break; put "
		    "the placeholder in a header or the body, or mask only "
		    "the token (extract) in %s", source != NULL ? source :
		    "credentials");
	} else {
		snprintf(detail, sizeof(detail), "the placeholder of %s %s: "
		    "%s may not be sent to %s:%u", cr->name, where, cr->name,
		    c->have_target ? c->host.text : "-", c->port);
		snprintf(hint, sizeof(hint), "%s is sent only as its value, "
		    "in HTTP requests to its injectHosts (%s): through "
		    "network.tlsTerminate, or plain HTTP with "
		    "credentials.allowPlaintextInject; never in a tunnel "
		    "pisbx does not terminate", cr->name, source != NULL ?
		    source : "credentials");
	}
	c->credential = cr->name;
	conn_decide(c, 0, "credential-leak", detail);
	conn_log_decision(c);
	log_info("conn %llu: %s", (unsigned long long)c->id, detail);
	if (c->px->refused != NULL && c->have_target) {
		memset(&r, 0, sizeof(r));
		r.host = c->host.text;
		r.port = c->port;
		r.proto = conn_proto_name(c->proto);
		r.reason = c->reason;
		r.detail = c->error;
		r.hint = hint;
		r.credential = cr->name;
		c->px->refused(&r, c->px->refused_arg);
	}
}

void
conn_cred_injected(struct conn *c, const uint8_t *used)
{
	size_t	 i, n = cred_table_count(c->px->creds);

	if (c->px->injected == NULL || !c->have_target)
		return;
	for (i = 0; i < n && i < CRED_MAX; i++)
		if (used[i])
			c->px->injected(cred_table_get(c->px->creds, i)->name,
			    c->host.text, c->port, c->px->injected_arg);
}

/*
 * Names that belong to a private network, never to public DNS: one
 * label, or a suffix set aside for local use (RFC 6762 .local, RFC 8375
 * .home.arpa, .internal, and the customary .lan, .home, .corp).
 */
static int
conn_local_name(const char *name)
{
	static const char *const suffixes[] = { ".local", ".localhost",
	    ".internal", ".lan", ".home", ".corp", ".intranet", ".private",
	    ".home.arpa" };
	size_t	 i, n = strlen(name), l;

	if (strchr(name, '.') == NULL)
		return 1;
	for (i = 0; i < sizeof(suffixes) / sizeof(*suffixes); i++) {
		l = strlen(suffixes[i]);
		if (n > l && strcmp(name + n - l, suffixes[i]) == 0)
			return 1;
	}
	return 0;
}

/*
 * What a person should know before answering about a name: that an
 * allow would still be refused when the dial step finds a non-public
 * address (it takes an exact allow entry, never an approval).  Known
 * only from the hosts file, which is read here -- a local file: the
 * name reaches no DNS before it is approved -- or guessed from a name
 * that is local by its form.  0 with the text in buf, -1 for none.
 */
static int
conn_review_warning(const struct conn *c, char *buf, size_t len)
{
	const struct config	*conf = conn_config(c);
	struct sockaddr_storage	 ss[8];
	const char		*cls = NULL;
	char			 a[64], hint[1536];
	size_t			 i, n;
	int			 off;

	if (c->host.kind != HOST_NAME ||
	    policy_hint(conf, &c->host, c->port, "non-public-address", hint,
	    sizeof(hint)) == -1)
		return -1;
	n = dns_hosts_addrs(conf->hosts_file, c->host.text, ss, 8);
	for (i = 0; i < n; i++)
		if ((cls = addr_class((struct sockaddr *)&ss[i])) != NULL)
			break;
	if (cls != NULL) {
		if (inet_ntop(ss[i].ss_family, ss[i].ss_family == AF_INET ?
		    (const void *)&((struct sockaddr_in *)&ss[i])->sin_addr :
		    (const void *)&((struct sockaddr_in6 *)&ss[i])->sin6_addr,
		    a, sizeof(a)) == NULL)
			return -1;
		off = snprintf(buf, len, "%s is %s (%s) in %s: refused even "
		    "when allowed here (non-public-address); ", c->host.text,
		    a, cls, conf->hosts_file != NULL ? conf->hosts_file :
		    "/etc/hosts");
	} else if (n == 0 && conn_local_name(c->host.text))
		off = snprintf(buf, len, "%s is a local name: if it resolves "
		    "to a non-public address, that is refused even when "
		    "allowed here (non-public-address); ", c->host.text);
	else
		return -1;
	if (off < 0 || (size_t)off >= len)
		return -1;
	snprintf(buf + off, len - (size_t)off, "%s", hint);
	return 0;
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
	req->budget = c->budget_key;
	req->budget_limit = c->budget_limit;
	req->budget_used = c->budget_used;
}

/*
 * network.budget: the account this decision counts against, and whether
 * the host is past a budget (c->budget_key).  Past one, a reviewer is
 * asked (1 is returned) or, without one, the connection is refused (-1,
 * answered); 0 goes on.  An account that cannot be made is a refusal.
 */
static int
conn_budget(struct conn *c, struct pgen *g)
{
	char detail[HOST_TEXT_MAX + 512], key[96];
	int conns;

	c->budget_ask = NULL;
	c->budget_key = NULL;
	if (!budget_enabled(g->conf))
		return 0;
	if ((c->budget_ask = budget_acct_get(c->px, g->conf, c->slot,
	    c->host.text)) == NULL) {
		conn_deny(c, "budget-connections", "out of memory for the "
		    "network.budget accounts", CERR_DENY);
		return -1;
	}
	c->budget_key = budget_over(g->conf, c->budget_ask, &c->budget_limit,
	    &c->budget_used);
	if (c->budget_key == NULL)
		return 0;
	if (reviewer_enabled(g->rv))
		return 1;
	conns = strcmp(c->budget_key, "connectionsPerHost") == 0;
	config_budget_key(g->conf, c->host.text, !conns, key, sizeof(key));
	snprintf(detail, sizeof(detail), "%s (%llu%s) used up for %s by this "
	    "client: %llu%s; no reviewer to ask", key,
	    (unsigned long long)c->budget_limit, conns ? "" :
	    " bytes", c->host.text, (unsigned long long)c->budget_used,
	    conns ? " connections" : " bytes");
	conn_deny(c, budget_reason(c->budget_key), detail, CERR_DENY);
	return -1;
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
	const struct cred *cr;
	struct cred_scan cs = { .ncarry = 0 };
	struct review_request req;
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
	if (c->cred_auth != NULL) {
		conn_cred_leak(c, c->cred_auth, "in the SOCKS5 user name or "
		    "password");
		conn_fail(c, CERR_DENY);
		return;
	}
	/* A name is sent to DNS and upstream: it must carry no placeholder. */
	if ((cr = cred_scan(c->px->creds, &cs, c->host.text,
	    strlen(c->host.text))) != NULL) {
		conn_cred_leak(c, cr, "in the target host name");
		conn_fail(c, CERR_DENY);
		return;
	}
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
		switch (conn_budget(c, g)) {
		case -1:
			return;
		case 1:
			conn_ask(c, g);
			return;
		}
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
	/* Without a reviewer it is no-reviewer, budget or not. */
	if (reviewer_enabled(g->rv) && conn_budget(c, g) == -1)
		return;
	/*
	 * An approval covers what it was asked about: this target over this
	 * protocol.  A CONNECT after an approved forwarded request on the
	 * same client connection is a new question.  Past a budget, every
	 * connection is a new question.
	 */
	conn_review_request(c, &req);
	if (c->budget_key == NULL && review_grant_covers(&c->grant, &req)) {
		conn_allowed(c, review_result_reason(REVIEW_RESULT_ALLOW),
		    "approved earlier on this connection");
		return;
	}
	/* An approval with the scope "run" or "worker", still in force. */
	if (c->budget_key == NULL && proxy_grant_covers(c->px, &req)) {
		conn_allowed(c, review_result_reason(REVIEW_RESULT_ALLOW),
		    "approved earlier in this run (scope run)");
		return;
	}
	conn_ask(c, g);
}

/* Ask the reviewer about the connection's target (and its budget). */
static void
conn_ask(struct conn *c, struct pgen *g)
{
	struct review_request req;
	enum review_result now;
	const char *detail = NULL;
	char warning[2048];

	conn_review_request(c, &req);
	c->state = CONN_REVIEW;
	metrics_review_begin(c);
	if (conn_review_warning(c, warning, sizeof(warning)) == 0)
		req.warning = warning;
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

/* The client closed while its review was pending. */
static void
conn_gone_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	conn_close(c, "client-gone");
}

/* The reviewer's answer: allow (with its grant) or deny; late, re-decided. */
static void
conn_review_cb(enum review_result res, enum review_scope scope,
    const char *detail, void *arg)
{
	struct conn *c = arg;
	struct review_request req;
	struct pgen *g = c->gen;

	metrics_review_end(c);
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
		/* Past a budget: one budget more, or none for the run. */
		if (c->budget_key != NULL)
			budget_raise(c->budget_ask, scope != REVIEW_SCOPE_ONCE);
		/* Wider: every later connection of this process. */
		if (scope != REVIEW_SCOPE_ONCE)
			proxy_grant_add(c->px, &req, scope);
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
	char why[600];

	/*
	 * Request rules are enforced only inside a terminated tunnel: a
	 * target they name that would not be terminated is refused now,
	 * whatever allowed it.
	 */
	if (term_opaque(c, why, sizeof(why))) {
		conn_deny(c, "request-rules-opaque", why, CERR_DENY);
		return;
	}
	budget_take(c, c->budget_ask);
	c->budget_key = NULL;
	conn_decide(c, 1, reason, detail);
	conn_resolve(c);
}
