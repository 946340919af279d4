/*
 * The --explain answer: what the proxy would do with one "host[:port]"
 * target before any DNS -- the lists, then the reviewer, or a deny when
 * there is none -- as one JSON line a person or a script can read; and
 * --check -v's listing of the merged policy, each entry with its source
 * and layer (config_walk).
 */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy/policy.h"
#include "policy/config_int.h"

#define EXPLAIN_DEFAULT_PORT	443

struct managed_walk;

static json_t	*explain_raw_string(const char *);
static void	 managed_walk_list(struct managed_walk *,
		    const struct config *, const struct strlist *,
		    const char *, size_t, int);
static void	 managed_line(struct managed_walk *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static void	 managed_walk_rules(struct managed_walk *,
		    const struct config *);
static void	 managed_walk_cb(enum policy_list, const struct pattern *,
		    void *);
static int	 explain_secrets(json_t *, const struct config *,
		    const struct host *, uint16_t);
static int	 explain_rules(json_t *, const struct req_rule *, size_t,
		    const char *);
static enum verdict explain_decide(const struct config *, const struct host *,
		    uint16_t, char *, size_t, const struct pattern **);

/*
 * The raw target as a JSON string: as written when it is valid UTF-8,
 * otherwise with every byte outside printable ASCII shown as \xNN.
 */
static json_t *
explain_raw_string(const char *s)
{
	json_t		*j;
	char		*buf;
	size_t		 i, off = 0, len = strlen(s);

	if ((j = json_string(s)) != NULL)
		return j;
	if ((buf = malloc(len * 4 + 1)) == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f)
			buf[off++] = (char)c;
		else
			off += (size_t)snprintf(buf + off, len * 4 + 1 - off,
			    "\\x%02x", c);
	}
	buf[off] = '\0';
	j = json_string(buf);
	free(buf);
	return j;
}

/*
 * What the proxy would do before any DNS: the lists; the loopback name;
 * a literal non-public address that no exact entry names (refused before
 * anyone is asked); the reviewer, or a deny when there is none.  *mp is
 * the deciding list entry, or NULL.
 */
static enum verdict
explain_decide(const struct config *conf, const struct host *h,
    uint16_t port, char *reason, size_t len, const struct pattern **mp)
{
	const struct pattern	*m = NULL;
	enum verdict		 v;

	v = policy_eval(conf->policy, h, port, &m);
	*mp = m;
	if (v != VERDICT_REVIEW) {
		policy_reason(v, m, reason, len);
		return v;
	}
	if (h->kind != HOST_NAME && (h->kind == HOST_IPV4 ?
	    addr_class_v4(&h->v4) : addr_class_v6(&h->v6)) != NULL) {
		snprintf(reason, len, "non-public-address");
		return VERDICT_DENY;
	}
	if (conf->review_mode == REVIEW_NONE) {
		snprintf(reason, len, "no-reviewer");
		return VERDICT_DENY;
	}
	snprintf(reason, len, "review");
	return VERDICT_REVIEW;
}

/* A review mode's name: command, socket, tty or none. */
const char *
policy_review_mode_name(enum review_mode m)
{
	switch (m) {
	case REVIEW_COMMAND:
		return "command";
	case REVIEW_SOCKET:
		return "socket";
	case REVIEW_TTY:
		return "tty";
	case REVIEW_NONE:
		break;
	}
	return "none";
}

char *
policy_explain(const struct config *conf, const char *target)
{
	struct host		 h;
	const struct pattern	*m;
	json_t			*o = NULL;
	const char		*err = NULL;
	char			*out = NULL, reason[TARGET_TEXT_MAX + 16];
	char			 hint[2048];
	uint16_t		 port = 0;
	enum verdict		 v;

	if ((o = json_object()) == NULL)
		goto fail;
	if (target_parse(target, strlen(target), EXPLAIN_DEFAULT_PORT, &h,
	    &port, &err) == -1) {
		if (json_object_set_new(o, "host",
		    explain_raw_string(target)) == -1 ||
		    json_object_set_new(o, "port", json_integer(port)) == -1 ||
		    json_object_set_new(o, "decision",
		    json_string(verdict_name(VERDICT_DENY))) == -1 ||
		    json_object_set_new(o, "reason",
		    json_string("invalid-host")) == -1 ||
		    json_object_set_new(o, "error", json_string(err)) == -1)
			goto fail;
	} else {
		v = explain_decide(conf, &h, port, reason, sizeof(reason), &m);
		if (json_object_set_new(o, "host", json_string(h.text)) == -1 ||
		    json_object_set_new(o, "port", json_integer(port)) == -1 ||
		    json_object_set_new(o, "decision",
		    json_string(verdict_name(v))) == -1 ||
		    json_object_set_new(o, "reason", json_string(reason)) == -1)
			goto fail;
		if (v == VERDICT_DENY && m != NULL && m->reason != NULL &&
		    json_object_set_new(o, "message",
		    json_string(m->reason)) == -1)
			goto fail;
		if (v == VERDICT_REVIEW && json_object_set_new(o, "reviewer",
		    json_string(policy_review_mode_name(conf->review_mode))) == -1)
			goto fail;
		if (v != VERDICT_ALLOW && policy_hint(conf, &h, port,
		    v == VERDICT_REVIEW ? "review:deny" : reason, hint,
		    sizeof(hint)) == 0 &&
		    json_object_set_new(o, "hint", json_string(hint)) == -1)
			goto fail;
		if (m != NULL && m->source != NULL &&
		    json_object_set_new(o, "source",
		    json_string(m->source)) == -1)
			goto fail;
		if (m != NULL && m->source != NULL && m->layer != NULL &&
		    json_object_set_new(o, "layer",
		    json_string(m->layer)) == -1)
			goto fail;
		if (v != VERDICT_DENY &&
		    explain_secrets(o, conf, &h, port) == -1)
			goto fail;
	}
	out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
 fail:
	json_decref(o);
	return out;
}

/*
 * What happens inside a tunnel the policy does not refuse, when the
 * config says anything about it: "tls" (terminated or excluded), the host's
 * "requestRules" (each rule with its action and source, in the order
 * they are tried: deny rules first), and the masked credentials put in
 * on the way there ("inject", names only).  0, or -1 out of memory.
 */
static int
explain_secrets(json_t *o, const struct config *conf, const struct host *h,
    uint16_t port)
{
	const struct req_host	*e;
	const struct cred_entry	*c;
	json_t			*a;
	char			*name;
	size_t			 i;
	int			 r;

	if (conf->tls != NULL && json_object_set_new(o, "tls",
	    json_string(config_tls_terminates(conf, h, port) ? "terminated" :
	    "excluded")) == -1)
		return -1;
	if (config_has_request_rules(conf, h, port)) {
		if ((a = json_array()) == NULL ||
		    json_object_set_new(o, "requestRules", a) == -1)
			return -1;
		for (i = 0; i < conf->nreq_hosts; i++) {
			e = &conf->req_hosts[i];
			if (pattern_match(&e->host, h, port) &&
			    explain_rules(a, e->deny, e->ndeny, "deny") == -1)
				return -1;
		}
		for (i = 0; i < conf->nreq_hosts; i++) {
			e = &conf->req_hosts[i];
			if (!pattern_match(&e->host, h, port))
				continue;
			if (explain_rules(a, e->allow, e->nallow,
			    "allow") == -1)
				return -1;
			if (e->unmatched == REQ_UNMATCHED_DENY &&
			    json_array_append_new(a, json_pack("{s:s,s:s,s:s}",
			    "unmatched", "deny", "action", "deny", "source",
			    e->source != NULL ? e->source : "")) == -1)
				return -1;
		}
	}
	/* Put in through a terminated tunnel, or plain HTTP if allowed. */
	if (!config_tls_terminates(conf, h, port) &&
	    !conf->creds.allow_plaintext_inject)
		return 0;
	a = NULL;
	for (i = 0; i < conf->creds.n; i++) {
		c = &conf->creds.v[i];
		if (!config_cred_injects(conf, c, h, port))
			continue;
		if (a == NULL && ((a = json_array()) == NULL ||
		    json_object_set_new(o, "inject", a) == -1))
			return -1;
		if (c->kind == CRED_ENV) {
			if (asprintf(&name, "$%s", c->name) == -1)
				return -1;
			r = json_array_append_new(a, json_string(name));
			free(name);
		} else
			r = json_array_append_new(a, json_string(c->name));
		if (r == -1)
			return -1;
	}
	return 0;
}

/* Append each of n rules as {"rule":TEXT,"action":ACTION,"source":...}. */
static int
explain_rules(json_t *a, const struct req_rule *v, size_t n,
    const char *action)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "rule",
		    v[i].text, "action", action, "source", v[i].source != NULL ?
		    v[i].source : "")) == -1)
			return -1;
	return 0;
}

/* config_walk's state: the callback, and a failure to report. */
struct managed_walk {
	void		(*cb)(const char *, void *);
	void		 *arg;
	const char	 *what;		/* "allow", "deny", "ceiling" */
	int		  nomem;
};

/* One line through the callback (printf-like); nomem on failure. */
static void
managed_line(struct managed_walk *w, const char *fmt, ...)
{
	va_list	 ap;
	char	*line;
	int	 r;

	va_start(ap, fmt);
	r = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (r == -1) {
		w->nomem = 1;
		return;
	}
	w->cb(line, w->arg);
	free(line);
}

/* One list entry: "allow|deny|ceiling TEXT from SOURCE (LAYER)". */
static void
managed_walk_cb(enum policy_list list, const struct pattern *pat, void *arg)
{
	struct managed_walk *w = arg;

	managed_line(w, "%s %s from %s (%s)", w->what != NULL ? w->what :
	    list == POLICY_DENY ? "deny" : "allow", pat->text,
	    pat->source != NULL ? pat->source : "(unknown)",
	    pat->layer != NULL ? pat->layer : "user");
}

/*
 * Entries [from, to) of a filesystem list: managed ones (before
 * nmanaged) named by the managed file, the others by the layer's.
 */
static void
managed_walk_list(struct managed_walk *w, const struct config *conf,
    const struct strlist *l, const char *key, size_t nmanaged, int home)
{
	size_t	 i;

	for (i = 0; i < l->n; i++) {
		if (i < nmanaged)
			managed_line(w, "%s %s from %s: $.filesystem.%s "
			    "(managed)", key, l->v[i], MANAGED_PATH, key);
		else if (home && i == nmanaged)
			managed_line(w, "%s %s from the default (the home "
			    "directory, hidden without a denyRead of %s's "
			    "own; %s)", key, l->v[i], conf->path,
			    config_layer_name(conf->layer));
		else
			managed_line(w, "%s %s from %s: $.filesystem.%s (%s)",
			    key, l->v[i], conf->path, key,
			    config_layer_name(conf->layer));
	}
}

/*
 * tlsTerminate and the request rules, entry by entry in the order they
 * apply (the managed file's first): "requestRules HOST deny|allow RULE
 * from SOURCE (LAYER)", and the entries that refuse what they do not
 * name.
 */
static void
managed_walk_rules(struct managed_walk *w, const struct config *conf)
{
	const char		*mp = MANAGED_PATH ": ";
	const struct req_host	*h;
	size_t			 i, j;

	/* Both when a layer tunes the managed termination. */
	if (conf->managed != NULL && conf->managed->net != NULL &&
	    json_object_get(conf->managed->net, "tlsTerminate") != NULL)
		managed_line(w, "tlsTerminate from %s$.network.tlsTerminate "
		    "(managed)", mp);
	if (conf->tls != NULL && conf->tls->source != NULL &&
	    strncmp(conf->tls->source, mp, strlen(mp)) != 0)
		managed_line(w, "tlsTerminate from %s (%s)", conf->tls->source,
		    config_layer_name(conf->layer));
	for (i = 0; i < conf->nreq_hosts; i++) {
		h = &conf->req_hosts[i];
		for (j = 0; j < h->ndeny; j++)
			managed_line(w, "requestRules %s deny %s from %s (%s)",
			    h->host.text, h->deny[j].text, h->deny[j].source,
			    h->layer != NULL ? h->layer : "user");
		for (j = 0; j < h->nallow; j++)
			managed_line(w, "requestRules %s allow %s from %s (%s)",
			    h->host.text, h->allow[j].text, h->allow[j].source,
			    h->layer != NULL ? h->layer : "user");
		if (h->unmatched == REQ_UNMATCHED_DENY)
			managed_line(w, "requestRules %s unmatched deny from "
			    "%s (%s)", h->host.text, h->source,
			    h->layer != NULL ? h->layer : "user");
	}
}

/*
 * The merged policy, a line per entry: the lists (in the order they were
 * added: the managed deny entries first), the ceiling, the filesystem
 * lists, the managed limits and refusals.
 */
int
config_walk(const struct config *conf, void (*cb)(const char *, void *),
    void *arg)
{
	const struct managed	*m = conf->managed;
	struct managed_walk	 w = { cb, arg, NULL, 0 };
	size_t			 i, k, o = 0;
	char			 modes[64];

	if (policy_walk(conf->policy, managed_walk_cb, &w) == -1)
		return -1;
	w.what = "ceiling";
	if (m != NULL && m->ceiling != NULL &&
	    policy_walk(m->ceiling, managed_walk_cb, &w) == -1)
		return -1;
	managed_walk_rules(&w, conf);
	managed_walk_list(&w, conf, &conf->deny_read, "denyRead",
	    m != NULL ? m->nread : 0, m != NULL && m->home_added);
	managed_walk_list(&w, conf, &conf->allow_read, "allowRead", 0, 0);
	managed_walk_list(&w, conf, &conf->allow_write, "allowWrite", 0, 0);
	managed_walk_list(&w, conf, &conf->deny_write, "denyWrite",
	    m != NULL ? m->nwrite : 0, 0);
	for (i = 0; m != NULL && i < MANAGED_NLIMITS; i++)
		if (m->limit[i] != 0)
			managed_line(&w, "limit %s.%s at most %d from %s: "
			    "$.%s.%s (managed)", managed_limits[i].section,
			    managed_limits[i].key, m->limit[i], MANAGED_PATH,
			    managed_limits[i].section, managed_limits[i].key);
	if (m != NULL && m->modes != 0) {
		modes[0] = '\0';
		for (k = 0; managed_modes[k] != NULL && o < sizeof(modes); k++)
			if (m->modes & (1U << k))
				o += (size_t)snprintf(modes + o,
				    sizeof(modes) - o, "%s%s", o > 0 ? "," : "",
				    managed_modes[k]);
		managed_line(&w, "review.modes %s from %s: $.review.modes "
		    "(managed)", o > 0 ? modes : "none", MANAGED_PATH);
	}
	if (m != NULL && m->no_all_unix)
		managed_line(&w, "forbid network.allowAllUnixSockets from %s: "
		    "$.network.allowAllUnixSockets (managed)", MANAGED_PATH);
	if (m != NULL && m->no_git_config)
		managed_line(&w, "forbid filesystem.allowGitConfig from %s: "
		    "$.filesystem.allowGitConfig (managed)", MANAGED_PATH);
	if (m != NULL && m->no_nested_userns)
		managed_line(&w, "forbid allowNestedUserNamespaces from %s: "
		    "$.allowNestedUserNamespaces (managed)", MANAGED_PATH);
	if (m != NULL && m->require_ns)
		managed_line(&w, "require requireNamespaces from %s: "
		    "$.requireNamespaces (managed)", MANAGED_PATH);
	if (m != NULL && m->no_hostipc)
		managed_line(&w, "forbid hostIPC.mode ask from %s: "
		    "$.hostIPC.mode (managed)", MANAGED_PATH);
	return w.nomem ? -1 : 0;
}
