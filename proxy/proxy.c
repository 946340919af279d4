/*
 * The proxy object: its config generations (a reload swaps in a new one;
 * a review started under the old one keeps it alive), the resolver, the
 * access log, and stopping and freeing it all.  Listeners are in
 * listen.c, connections in conn.c.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "policy/policy.h"
#include "approval/approval.h"
#include "proxy/proxy_int.h"
#include "proxy/tlsmod.h"

#define PROXY_TLS_TRIM	(4 << 20)	/* M_TRIM_THRESHOLD, terminating */

static struct pgen *pgen_new(struct proxy *, struct config *);
static int	 proxy_tls(struct proxy *, const struct config *);
static const char *proxy_recheck_why(const struct conn *,
		    const struct config *, const struct config *, char *,
		    size_t);
static size_t	 proxy_recheck(struct proxy *, const struct config *,
		    size_t *);

/*
 * With epoll's changelist, the event changes made during one loop turn
 * are applied together before the next wait, and a change undone in the
 * same turn costs nothing: a connection whose request arrived with its
 * accept used to register its socket for reading and remove it again
 * straight away, and a tunnel's sockets change hands from the
 * bufferevents to the relay -- an epoll_ctl(2) each, on every new
 * connection's critical path.  (The changelist's one hazard is a
 * registered descriptor dup()ed elsewhere; the proxy dups none.)
 */
struct event_base *
proxy_base_new(void)
{
	struct event_config *cfg;
	struct event_base *base;

	if ((cfg = event_config_new()) == NULL)
		return NULL;
	event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	return base;
}

static struct pgen *
pgen_new(struct proxy *px, struct config *conf)
{
	struct pgen *g;
	struct reviewer_opts o;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	g->conf = conf;
	g->refs = 1;
	reviewer_opts_config(&o, conf, px->label, px->cwd, px->capability);
	o.command = px->command;
	g->rv = reviewer_new(px->base, &o);
	if (g->rv == NULL) {
		free(g);
		return NULL;
	}
	return g;
}

/*
 * Keep an approval for the rest of the process.  Past PROXY_GRANTS the
 * rest are not kept: they are asked again, never allowed unasked.
 */
void
proxy_grant_add(struct proxy *px, const struct review_request *req,
    enum review_scope scope)
{
	struct review_grant	*nv;
	enum review_scope	*ns;

	if (proxy_grant_covers(px, req) || px->ngrants >= PROXY_GRANTS)
		return;
	if ((nv = reallocarray(px->grants, px->ngrants + 1,
	    sizeof(*nv))) == NULL)
		return;
	px->grants = nv;
	if ((ns = reallocarray(px->grant_scope, px->ngrants + 1,
	    sizeof(*ns))) == NULL)
		return;
	px->grant_scope = ns;
	ns[px->ngrants] = scope;
	review_grant_set(&px->grants[px->ngrants++], req);
}

int
proxy_grants_json(const struct proxy *px, const char *host, uint16_t port,
    char *buf, size_t len)
{
	size_t	 i, off = 0;
	int	 n = 0, r;

	if (len == 0)
		return -1;
	buf[0] = '\0';
	for (i = 0; i < px->ngrants; i++) {
		if (px->grants[i].port != port ||
		    strcmp(px->grants[i].host, host) != 0)
			continue;
		/* Canonical hosts and protocol names: nothing to escape. */
		r = snprintf(buf + off, len - off, "%s{\"protocol\":\"%s\","
		    "\"scope\":\"%s\"}", n > 0 ? "," : "",
		    px->grants[i].protocol,
		    review_scope_name(px->grant_scope[i]));
		if (r < 0 || (size_t)r >= len - off)
			return -1;
		off += (size_t)r;
		n++;
	}
	return n;
}

int
proxy_grant_covers(const struct proxy *px, const struct review_request *req)
{
	size_t	 i;

	for (i = 0; i < px->ngrants; i++)
		if (review_grant_covers(&px->grants[i], req))
			return 1;
	return 0;
}

void
pgen_unref(struct pgen *g)
{
	if (g == NULL || --g->refs > 0)
		return;
	reviewer_free(g->rv);
	config_free(g->conf);
	free(g);
}

struct proxy *
proxy_new(struct event_base *base, struct config *conf,
    const struct proxy_opts *opts)
{
	struct proxy *px;
	char err[256];

	if ((px = calloc(1, sizeof(*px))) == NULL)
		goto fail;
	px->base = base;
	px->spare_fd = -1;
	TAILQ_INIT(&px->listeners);
	TAILQ_INIT(&px->conns);
	px->log_format = opts != NULL ? opts->log_format : LOG_FORMAT_JSON;
	if (opts != NULL) {
		px->refused = opts->refused;
		px->refused_arg = opts->refused_arg;
		px->injected = opts->injected;
		px->injected_arg = opts->injected_arg;
		px->reload_said = opts->reload_said;
		px->one_client = opts->one_client;
		px->tls = opts->tls;
		px->tls_ca = opts->tls_ca;
		px->creds = opts->creds;
	}
	if (opts != NULL && opts->access_log != NULL &&
	    (px->access_log = strdup(opts->access_log)) == NULL)
		goto fail;
	if (opts != NULL && opts->label != NULL &&
	    (px->label = strdup(opts->label)) == NULL)
		goto fail;
	if (opts != NULL && opts->cwd != NULL &&
	    (px->cwd = strdup(opts->cwd)) == NULL)
		goto fail;
	if (opts != NULL && opts->command != NULL &&
	    (px->command = strdup(opts->command)) == NULL)
		goto fail;
	if (opts != NULL && opts->capability != NULL &&
	    (px->capability = strdup(opts->capability)) == NULL)
		goto fail;
	if ((px->access_log != NULL || conf->syslog_address != NULL) &&
	    (px->alog = accesslog_open(px->access_log, px->log_format)) ==
	    NULL) {
		log_warnx("cannot open access log %s", px->access_log != NULL ?
		    px->access_log : "(syslog)");
		goto fail;
	}
	if (px->alog != NULL && accesslog_syslog(px->alog, base, conf) == -1)
		goto fail;
	if ((px->dns = dns_new(base, conf, err, sizeof(err))) == NULL) {
		log_warnx("resolver: %s", err);
		goto fail;
	}
	if ((px->gen = pgen_new(px, conf)) == NULL) {
		log_warnx("cannot set up the reviewer");
		goto fail;
	}
	if (metrics_open(px, conf) == -1)
		goto fail;
	if (proxy_tls(px, conf) == -1)
		goto fail;
	return px;
fail:
	if (px == NULL || px->gen == NULL)
		config_free(conf);
	proxy_free(px);
	return NULL;
}

int
proxy_reload(struct proxy *px, struct config *conf)
{
	struct pgen *g, *old;
	struct dns *d;
	struct conn *c;
	char err[256];
	size_t nkept, nclosed;

	/*
	 * The CA and the upstream roots were loaded at start, and the
	 * clients were told to trust that CA: a reload cannot swap them
	 * under connections, and taking the rest of the config while the
	 * old CA goes on would be a change half made.
	 */
	if (!config_tls_ca_same(px->gen->conf, conf)) {
		log_warnx("reload: keeping the old config: "
		    "network.tlsTerminate's CA and roots change only at a "
		    "restart");
		config_free(conf);
		return -1;
	}
	if (dns_differs(px->dns, conf)) {
		if ((d = dns_new(px->base, conf, err, sizeof(err))) == NULL) {
			log_warnx("reload: resolver: %s; keeping the old "
			    "config", err);
			config_free(conf);
			return -1;
		}
		dns_free(px->dns);	/* lookups in flight fail: dns-error */
		px->dns = d;
	}
	if (proxy_tls(px, conf) == -1) {
		log_warnx("reload: keeping the old config");
		config_free(conf);
		return -1;
	}
	if ((g = pgen_new(px, conf)) == NULL) {
		log_warnx("reload: cannot set up the reviewer; keeping the "
		    "old config");
		config_free(conf);
		return -1;
	}
	/* The endpoint stays where it was opened: a scraper points at it. */
	if ((px->gen->conf->metrics_listen == NULL) !=
	    (conf->metrics_listen == NULL) || (conf->metrics_listen != NULL &&
	    strcmp(px->gen->conf->metrics_listen, conf->metrics_listen) != 0))
		log_warnx("reload: proxy.metrics changes take effect when the "
		    "proxy is restarted");
	if ((px->gen->conf->syslog_address == NULL) !=
	    (conf->syslog_address == NULL) || (conf->syslog_address != NULL &&
	    strcmp(px->gen->conf->syslog_address, conf->syslog_address) != 0))
		log_warnx("reload: proxy.accessLogSyslog changes take effect "
		    "when the proxy is restarted");
	old = px->gen;
	px->gen = g;
	/*
	 * A new config: what a reviewer approved for the old one ends -- the
	 * process's approvals and each kept-alive connection's own.
	 */
	free(px->grants);
	free(px->grant_scope);
	px->grants = NULL;
	px->grant_scope = NULL;
	px->ngrants = 0;
	TAILQ_FOREACH(c, &px->conns, entry)
		memset(&c->grant, 0, sizeof(c->grant));
	budget_reload(px);
	nclosed = proxy_recheck(px, old->conf, &nkept);
	pgen_unref(old);
	(px->reload_said ? log_notice : log_info)("configuration reloaded "
	    "from %s: %zu open connection%s decided again, %zu closed",
	    conf->path != NULL ? conf->path : "(embedded default)",
	    nkept + nclosed, nkept + nclosed == 1 ? "" : "s", nclosed);
	return 0;
}

/*
 * network.tlsTerminate without the module and CA of proxy_opts (pisbx-
 * proxy, or a reload that sets it): load the module, read the CA from
 * caCertPath/caKeyPath.  A per-run CA is pisbx-run's: standalone, the
 * clients must already trust the CA, so its files are required.  Made
 * once; a reload keeps it.  0, or -1 said.
 */
static int
proxy_tls(struct proxy *px, const struct config *conf)
{
	const struct tls_terminate *t = conf->tls;
	struct tlsmod_ca_opts o;
	char err[1024];

	if (t == NULL)
		return 0;
	/*
	 * A terminated tunnel's plaintext passes through evbuffer chains
	 * of a TLS record each, freed once written: with malloc's default
	 * 128 KiB the freed top of the heap went back to the kernel and
	 * was faulted in again at every few records (two thirds of the
	 * proxy's CPU per GiB).  conn.c's malloc_trim after a burst still
	 * gives it all back.
	 */
	(void)mallopt(M_TRIM_THRESHOLD, PROXY_TLS_TRIM);
	if (px->tls_ca != NULL)
		return 0;
	if (t->ca_cert_path == NULL || t->ca_key_path == NULL) {
		log_warnx("%s.caCertPath: pisbx-proxy needs the CA's "
		    "certificate and key (caCertPath and caKeyPath) to "
		    "terminate TLS: its clients must trust that CA",
		    t->source != NULL ? t->source :
		    "$.network.tlsTerminate");
		return -1;
	}
	if (px->tls == NULL && (px->tls = tlsmod_load(err,
	    sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	memset(&o, 0, sizeof(o));
	o.cert_path = t->ca_cert_path;
	o.key_path = t->ca_key_path;
	o.extra_ca = (const char *const *)t->extra_ca.v;
	o.nextra = t->extra_ca.n;
	if ((px->tls_ca = px->tls->ca_new(&o, err, sizeof(err))) == NULL) {
		log_warnx("%s: %s", t->source != NULL ? t->source :
		    "$.network.tlsTerminate", err);
		return -1;
	}
	px->tls_ca_ours = 1;
	return 0;
}

const struct config *
proxy_config(const struct proxy *px)
{
	return px->gen->conf;
}

/*
 * Why the new config (conf) refuses a connection that the old one (old)
 * allowed, or NULL when it still allows it: its lists first (a deny
 * entry, the loopback name without its exact entry); an allow entry
 * still needs an exact one for a non-public address already dialled;
 * a reviewer's approval stands only while the same reviewer is
 * configured and no list decides otherwise.
 */
static const char *
proxy_recheck_why(const struct conn *c, const struct config *old,
    const struct config *conf, char *buf, size_t len)
{
	const struct pattern	*pat = NULL;
	struct host		 a;
	uint16_t		 port;
	const char		*err, *cls = NULL;

	switch (policy_eval(conf->policy, &c->host, c->port, &pat)) {
	case VERDICT_DENY:
		if (pat == NULL)
			return "host-loopback";
		snprintf(buf, len, "deny-list:%s", pat->text);
		return buf;
	case VERDICT_REVIEW:
		if (strcmp(c->reason, review_result_reason(
		    REVIEW_RESULT_ALLOW)) != 0)
			return conf->review_mode == REVIEW_NONE ?
			    "no-reviewer" : "policy-changed";
		if (!review_config_same(old, conf))
			return "review:dropped";
		return NULL;
	case VERDICT_ALLOW:
		break;
	}
	/* Through the upstream proxy, addr is the upstream's address. */
	if (c->addr[0] == '\0' || parent_conn_via(c) != NULL ||
	    target_parse(c->addr, strlen(c->addr), 0, &a, &port, &err) == -1)
		return NULL;
	if (a.kind == HOST_IPV4)
		cls = addr_class_v4(&a.v4);
	else if (a.kind == HOST_IPV6)
		cls = addr_class_v6(&a.v6);
	if (cls != NULL && !policy_exact_allowed(conf->policy, &c->host,
	    c->port))
		return "non-public-address";
	return NULL;
}

/*
 * After a reload, every connection the old config allowed is decided
 * again under the new one: a tunnel or a response it refuses is closed
 * (end "policy-changed", the new reason in its error); one still being
 * resolved or dialled gets a deny record with the new reason and is
 * closed the same way.  Returns how many were closed; *kept: how many
 * stay.  Nothing a
 * new config refuses goes on because it started before.
 */
static size_t
proxy_recheck(struct proxy *px, const struct config *old, size_t *kept)
{
	struct conn	*c, *next;
	const char	*why;
	char		 buf[TARGET_TEXT_MAX + 32];
	size_t		 closed = 0;

	*kept = 0;
	for (c = TAILQ_FIRST(&px->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (!c->have_target || c->decision == NULL ||
		    strcmp(c->decision, "allow") != 0 ||
		    (c->state != CONN_RESOLVE && c->state != CONN_CONNECT &&
		    c->state != CONN_RELAY))
			continue;
		if ((why = proxy_recheck_why(c, old, px->gen->conf, buf,
		    sizeof(buf))) == NULL) {
			(*kept)++;
			continue;
		}
		closed++;
		/*
		 * Not connected yet: its allow was not logged (that waits for
		 * the address); the refusal is, and the client is closed on
		 * -- a lookup or dial in flight ends with the connection.
		 */
		if (c->state != CONN_RELAY) {
			conn_decide(c, 0, why, "the policy changed before the "
			    "connection was made");
			conn_log_decision(c);
			conn_close(c, "policy-changed");
			continue;
		}
		conn_error(c, "refused by the new policy: %s", why);
		log_info("conn %llu: %s:%u closed: refused by the new "
		    "policy (%s)", (unsigned long long)c->id, c->host.text,
		    c->port, why);
		conn_close(c, "policy-changed");
	}
	return closed;
}

int
proxy_reopen_log(struct proxy *px)
{
	if (px->alog == NULL)
		return 0;
	return accesslog_reopen(px->alog);
}

void
proxy_stop(struct proxy *px)
{
	struct listener *l;
	struct conn *c;

	if (px == NULL)
		return;
	px->stopping = 1;
	while ((l = TAILQ_FIRST(&px->listeners)) != NULL) {
		TAILQ_REMOVE(&px->listeners, l, entry);
		listener_free(l);
	}
	while ((c = TAILQ_FIRST(&px->conns)) != NULL)
		conn_close(c, "shutdown");
}

void
proxy_free(struct proxy *px)
{
	if (px == NULL)
		return;
	proxy_stop(px);
	listener_report_total(px);
	if (px->report_ev != NULL)
		event_free(px->report_ev);
	if (px->spare_fd != -1)
		close(px->spare_fd);
	metrics_free(px);
	budget_free(px);
	if (px->tls_ca_ours)
		px->tls->ca_free(px->tls_ca);
	dns_free(px->dns);
	pgen_unref(px->gen);
	accesslog_free(px->alog);
	free(px->access_log);
	free(px->label);
	free(px->cwd);
	free(px->capability);
	free(px->command);
	free(px->grants);
	free(px->grant_scope);
	free(px);
}
