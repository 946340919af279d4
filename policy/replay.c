/*
 * Replay: every decision record of an access log re-decided under another
 * config, and the differences counted per distinct target, so a policy
 * change is tried on real traffic before it ships (docs/policy.md,
 * "Testing a policy change").  Pure functions over one log line at a
 * time; the caller reads the log.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy/policy.h"

#define REPLAY_HASH_MIN		64

/* What a record's reason says about how the old decision came about. */
enum replay_origin {
	ORIGIN_POLICY,		/* the lists, the loopback rule, no reviewer */
	ORIGIN_REVIEW,		/* review:*: a reviewer was asked */
	ORIGIN_ADDRESS,		/* non-public-address */
	ORIGIN_AFTER,		/* failed after the policy let it through */
	ORIGIN_NOT_POLICY	/* decided before or beside the policy */
};

struct replay_slot {
	uint64_t		 hash;
	struct replay_change	*c;
};

struct replay {
	struct replay_slot	*slot;
	size_t			 cap;
	size_t			 n;
	size_t			 max;
	uint64_t		 unlisted;	/* records over max */
	uint64_t		 counts[REPLAY_NCLASS];
};

static enum replay_origin replay_origin(const struct replay_record *);
static int	 replay_json_str(const json_t *, const char *, char *, size_t,
		    int, const char **);
static int	 replay_addr_refused(const struct config *,
		    const struct replay_record *);
static int	 replay_parse_request(const json_t *,
		    struct replay_record *, const char **);
static enum replay_class replay_decide_request(const struct config *,
		    const struct replay_record *, char *, size_t);
static uint64_t	 replay_hash(const char *, const char *, const char *);
static int	 replay_grow(struct replay *);
static int	 replay_cmp(const void *, const void *);

/* Which step of the proxy a reason comes from; -1 for an unknown one. */
static enum replay_origin
replay_origin(const struct replay_record *r)
{
	static const char *const after[] = {
		"dns-error", "connect-error", "out-of-descriptors",
		"parent-refused", "parent-method", "parent-auth",
		"parent-error", NULL
	};
	static const char *const review[] = {
		"review:allow", "review:deny", "review:timeout",
		"review:error", "review:busy", "review:dropped",
		"policy-changed", NULL
	};
	static const char *const beside[] = {
		"invalid-host", "max-connections", "max-client-connections",
		"sni-mismatch", "budget-connections", "budget-bytes-up", NULL
	};
	size_t i;

	if (strncmp(r->reason, "deny-list:", 10) == 0 ||
	    strncmp(r->reason, "allow-list:", 11) == 0 ||
	    strcmp(r->reason, "host-loopback") == 0 ||
	    strcmp(r->reason, "managed-ceiling") == 0 ||
	    strcmp(r->reason, "no-reviewer") == 0)
		return ORIGIN_POLICY;
	for (i = 0; review[i] != NULL; i++)
		if (strcmp(r->reason, review[i]) == 0)
			return ORIGIN_REVIEW;
	if (strcmp(r->reason, "non-public-address") == 0)
		return ORIGIN_ADDRESS;
	for (i = 0; after[i] != NULL; i++)
		if (strcmp(r->reason, after[i]) == 0)
			return ORIGIN_AFTER;
	for (i = 0; beside[i] != NULL; i++)
		if (strcmp(r->reason, beside[i]) == 0)
			return ORIGIN_NOT_POLICY;
	return (enum replay_origin)-1;
}

/*
 * Copy the string member key of o into buf: 0 done, 1 absent (an error
 * when required), -1 with *errstr when it is not a string, too long, or
 * holds a byte outside printable ASCII (the proxy never writes one, and
 * what is read here may be printed to a terminal).
 */
static int
replay_json_str(const json_t *o, const char *key, char *buf, size_t len,
    int required, const char **errstr)
{
	const json_t	*v;
	const char	*s;
	size_t		 n;

	if ((v = json_object_get(o, key)) == NULL) {
		buf[0] = '\0';
		if (required) {
			*errstr = "a field the record needs is missing";
			return -1;
		}
		return 1;
	}
	if (!json_is_string(v)) {
		*errstr = "a field is not a string";
		return -1;
	}
	n = json_string_length(v);
	s = json_string_value(v);
	if (n >= len) {
		*errstr = "a field is too long";
		return -1;
	}
	if (!config_printable(s, n)) {
		*errstr = "a field holds a byte outside printable ASCII";
		return -1;
	}
	memcpy(buf, s, n + 1);
	return 0;
}

int
replay_parse(const char *line, size_t len, struct replay_record *r,
    const char **errstr)
{
	json_t		*o;
	json_error_t	 jerr;
	const json_t	*v;
	const char	*herr;
	char		 event[16], decision[16], host[HOST_TEXT_MAX];
	json_int_t	 port;
	int		 rc = -1, origin;

	memset(r, 0, sizeof(*r));
	*errstr = NULL;
	if (len > REPLAY_LINE_MAX) {
		*errstr = "line too long for an access-log record";
		return -1;
	}
	if (len == 0 || line[0] != '{') {
		*errstr = "not a JSON record (replay reads --log-format json "
		    "logs)";
		return -1;
	}
	if ((o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL || !json_is_object(o)) {
		*errstr = "not a JSON object";
		goto fail;
	}
	if (replay_json_str(o, "event", event, sizeof(event), 1,
	    errstr) == -1)
		goto fail;
	if (strcmp(event, "close") == 0) {
		rc = 0;
		goto fail;
	}
	if (strcmp(event, "request") == 0) {
		rc = replay_parse_request(o, r, errstr);
		goto fail;
	}
	if (strcmp(event, "decision") != 0) {
		*errstr = "unknown event";
		goto fail;
	}
	if (replay_json_str(o, "proto", r->proto, sizeof(r->proto), 1,
	    errstr) == -1 ||
	    replay_json_str(o, "decision", decision, sizeof(decision), 1,
	    errstr) == -1 ||
	    replay_json_str(o, "reason", r->reason, sizeof(r->reason), 1,
	    errstr) == -1 ||
	    replay_json_str(o, "addr", r->addr, sizeof(r->addr), 0,
	    errstr) == -1 ||
	    replay_json_str(o, "host", host, sizeof(host), 0, errstr) == -1)
		goto fail;
	/* A detail for people, of any length; one fact is read from it. */
	if ((v = json_object_get(o, "error")) != NULL) {
		if (!json_is_string(v)) {
			*errstr = "a field is not a string";
			goto fail;
		}
		r->own_listener = strstr(json_string_value(v),
		    "the proxy's own listener") != NULL;
	}
	r->parent = json_object_get(o, "parent") != NULL;
	if (strcmp(decision, "allow") == 0)
		r->allow = 1;
	else if (strcmp(decision, "deny") != 0) {
		*errstr = "decision is neither allow nor deny";
		goto fail;
	}
	if ((origin = (int)replay_origin(r)) == -1) {
		*errstr = "unknown reason";
		goto fail;
	}
	/* Only the lists and a reviewer allow; everything else denies. */
	if (r->allow != (strncmp(r->reason, "allow-list:", 11) == 0 ||
	    strcmp(r->reason, "review:allow") == 0)) {
		*errstr = "the decision does not go with the reason";
		goto fail;
	}
	if (origin == ORIGIN_NOT_POLICY && host[0] == '\0') {
		rc = 1;
		goto fail;
	}
	if (host[0] == '\0') {
		*errstr = "a field the record needs is missing";
		goto fail;
	}
	if (host_canon(host, strlen(host), &r->host, &herr) == -1 ||
	    strcmp(r->host.text, host) != 0) {
		*errstr = "host is not a canonical host";
		goto fail;
	}
	r->has_host = 1;
	if ((v = json_object_get(o, "port")) == NULL || !json_is_integer(v) ||
	    (port = json_integer_value(v)) < 1 || port > 65535) {
		*errstr = "port is not a number from 1 to 65535";
		goto fail;
	}
	r->port = (uint16_t)port;
	if (strcmp(r->proto, "connect") != 0 && strcmp(r->proto, "http") != 0 &&
	    strcmp(r->proto, "socks5") != 0) {
		*errstr = "proto is not connect, http or socks5";
		goto fail;
	}
	rc = 1;
 fail:
	json_decref(o);
	return rc;
}

/*
 * A request record: what the request rules made of it.  One refused by
 * a rule has reason "request-rule" and the rule; one answered by the
 * upstream has no reason (and the allow rule that let it by, if any);
 * any other reason (host-mismatch, credential-leak, upstream-tls, ...)
 * is no rule's doing: not replayed (REPLAY_NOT_POLICY).  1, or -1.
 */
static int
replay_parse_request(const json_t *o, struct replay_record *r,
    const char **errstr)
{
	const json_t	*v;
	const char	*herr;
	char		 host[HOST_TEXT_MAX], rule[TARGET_TEXT_MAX];
	json_int_t	 port;
	int		 noreason, norule;

	r->request = 1;
	if (replay_json_str(o, "proto", r->proto, sizeof(r->proto), 1,
	    errstr) == -1 ||
	    replay_json_str(o, "host", host, sizeof(host), 1, errstr) == -1 ||
	    replay_json_str(o, "method", r->method, sizeof(r->method), 1,
	    errstr) == -1 ||
	    replay_json_str(o, "path", r->path, sizeof(r->path), 1,
	    errstr) == -1 ||
	    (noreason = replay_json_str(o, "reason", r->reason,
	    sizeof(r->reason), 0, errstr)) == -1 ||
	    (norule = replay_json_str(o, "rule", rule, sizeof(rule), 0,
	    errstr)) == -1)
		return -1;
	if (host_canon(host, strlen(host), &r->host, &herr) == -1 ||
	    strcmp(r->host.text, host) != 0) {
		*errstr = "host is not a canonical host";
		return -1;
	}
	r->has_host = 1;
	if ((v = json_object_get(o, "port")) == NULL || !json_is_integer(v) ||
	    (port = json_integer_value(v)) < 1 || port > 65535) {
		*errstr = "port is not a number from 1 to 65535";
		return -1;
	}
	r->port = (uint16_t)port;
	if (noreason) {
		r->allow = 1;
		snprintf(r->reason, sizeof(r->reason), "%s%s",
		    norule ? "no-rule" : "request-rule:", norule ? "" : rule);
	} else if (strcmp(r->reason, "request-rule") == 0) {
		r->allow = 0;
		if (!norule)
			snprintf(r->reason, sizeof(r->reason),
			    "request-rule:%s", rule);
	} else
		r->has_host = 0;	/* not the rules' doing */
	return 1;
}

/*
 * A request record under conf's request rules: its path (query keys
 * only) canonicalised as the proxy does, the rules of the host tried.
 * Where the host has rules and the path is ambiguous, the proxy would
 * refuse it (400 ambiguous-target).
 */
static enum replay_class
replay_decide_request(const struct config *conf,
    const struct replay_record *r, char *to, size_t len)
{
	const struct req_rule	*m;
	const struct req_host	*e;
	const char		*errstr;
	char			 path[REPLAY_PATH_MAX];
	int			 allow;

	if (!r->has_host) {
		snprintf(to, len, "%s %s", r->allow ? "allow" : "deny",
		    r->reason);
		return REPLAY_NOT_POLICY;
	}
	if (!config_has_request_rules(conf, &r->host, r->port)) {
		allow = 1;
		snprintf(to, len, "allow no-rule");
	} else if (request_path_canon(r->path, strlen(r->path), path,
	    sizeof(path), &errstr) == -1) {
		allow = 0;
		snprintf(to, len, "deny ambiguous-target");
	} else if (config_request_rule(conf, &r->host, r->port, r->method,
	    path, &m, &e) == REQ_DENY) {
		allow = 0;
		if (m != NULL)
			snprintf(to, len, "deny request-rule:%s", m->text);
		else
			snprintf(to, len, "deny request-rule:unmatched (%s)",
			    e != NULL && e->source != NULL ? e->source : "");
	} else {
		allow = 1;
		if (m != NULL)
			snprintf(to, len, "allow request-rule:%s", m->text);
		else
			snprintf(to, len, "allow no-rule");
	}
	if (r->allow && !allow)
		return REPLAY_NEWLY_REFUSED;
	if (!r->allow && allow)
		return REPLAY_NEWLY_ALLOWED;
	if (strcmp(to + (allow ? 6 : 5), r->reason) != 0)
		return REPLAY_OTHER_RULE;
	return REPLAY_UNCHANGED;
}

/*
 * Whether the address rule refuses the record's target under conf: a
 * literal by its own class; a name by what the old decision learnt of
 * its addresses (refused as non-public, or the address it connected to),
 * and a name never resolved is taken to pass: replay does no DNS.
 * Through an upstream proxy, addr is the upstream's: not the target's.
 */
static int
replay_addr_refused(const struct config *conf, const struct replay_record *r)
{
	struct host	 a;
	const char	*err, *colon;
	const char	*cls = NULL;
	int		 exact;

	if (strcmp(r->reason, "non-public-address") == 0 && r->own_listener)
		return 1;
	exact = policy_exact_allowed(conf->policy, &r->host, r->port);
	if (r->host.kind == HOST_IPV4)
		cls = addr_class_v4(&r->host.v4);
	else if (r->host.kind == HOST_IPV6)
		cls = addr_class_v6(&r->host.v6);
	else if (host_is_loopback_name(&r->host))
		return 0;
	else if (strcmp(r->reason, "non-public-address") == 0)
		cls = "non-public";
	else if (r->addr[0] != '\0' && !r->parent &&
	    (colon = strrchr(r->addr, ':')) != NULL &&
	    host_canon(r->addr, (size_t)(colon - r->addr), &a, &err) == 0)
		cls = a.kind == HOST_IPV4 ? addr_class_v4(&a.v4) :
		    a.kind == HOST_IPV6 ? addr_class_v6(&a.v6) : NULL;
	return cls != NULL && !exact;
}

enum replay_class
replay_decide(const struct config *conf, const struct replay_record *r,
    char *to, size_t len)
{
	const struct pattern	*m = NULL;
	enum replay_origin	 origin = replay_origin(r);
	enum verdict		 v;
	char			 reason[TARGET_TEXT_MAX + 32];
	int			 allow;

	if (r->request)
		return replay_decide_request(conf, r, to, len);
	if (origin == ORIGIN_NOT_POLICY || !r->has_host) {
		snprintf(to, len, "%s %s", r->allow ? "allow" : "deny",
		    r->reason);
		return REPLAY_NOT_POLICY;
	}
	v = policy_eval(conf->policy, &r->host, r->port, &m);
	if (v == VERDICT_DENY) {
		allow = 0;
		policy_reason(v, m, reason, sizeof(reason));
		snprintf(to, len, "deny %s", reason);
	} else if (v == VERDICT_ALLOW) {
		if (replay_addr_refused(conf, r)) {
			allow = 0;
			snprintf(to, len, "deny non-public-address");
		} else if (origin == ORIGIN_AFTER) {
			/* The same failure follows: the policy let it by. */
			allow = 0;
			snprintf(to, len, "deny %s", r->reason);
		} else {
			allow = 1;
			snprintf(to, len, "allow allow-list:%s", m->text);
		}
	} else if (replay_addr_refused(conf, r) &&
	    (r->host.kind != HOST_NAME || conf->review_mode != REVIEW_NONE)) {
		/* A literal before review; a name whatever the answer. */
		allow = 0;
		snprintf(to, len, "deny non-public-address");
	} else if (conf->review_mode == REVIEW_NONE) {
		allow = 0;
		snprintf(to, len, "deny no-reviewer");
	} else {
		snprintf(to, len, "review (%s)",
		    policy_review_mode_name(conf->review_mode));
		/*
		 * A failure after the policy does not say whether a list or a
		 * reviewer let the name by: asked again, a reviewer that
		 * allows it gets the same failure.
		 */
		if (origin == ORIGIN_REVIEW || origin == ORIGIN_AFTER)
			return REPLAY_UNCHANGED;
		return REPLAY_NOW_REVIEWED;
	}
	if (r->allow && !allow)
		return REPLAY_NEWLY_REFUSED;
	if (!r->allow && allow)
		return REPLAY_NEWLY_ALLOWED;
	if (origin == ORIGIN_REVIEW)
		return REPLAY_NO_LONGER_REVIEWED;
	if (strcmp(to + (allow ? 6 : 5), r->reason) != 0)
		return REPLAY_OTHER_RULE;
	return REPLAY_UNCHANGED;
}

const char *
replay_class_name(enum replay_class c)
{
	static const char *const names[REPLAY_NCLASS] = {
		"unchanged", "newly refused", "newly allowed", "now reviewed",
		"no longer reviewed", "other rule", "not policy decisions"
	};

	return (unsigned)c < REPLAY_NCLASS ? names[c] : "?";
}

struct replay *
replay_new(size_t max)
{
	struct replay *rp;

	if ((rp = calloc(1, sizeof(*rp))) == NULL)
		return NULL;
	rp->max = max;
	return rp;
}

void
replay_free(struct replay *rp)
{
	size_t i;

	if (rp == NULL)
		return;
	for (i = 0; i < rp->cap; i++)
		free(rp->slot[i].c);
	free(rp->slot);
	free(rp);
}

/* FNV-1a over the three strings, each with its terminating NUL. */
static uint64_t
replay_hash(const char *a, const char *b, const char *c)
{
	const char	*s[3] = { a, b, c };
	uint64_t	 h = 0xcbf29ce484222325ULL;
	size_t		 i;

	for (i = 0; i < 3; i++) {
		do {
			h ^= (unsigned char)*s[i];
			h *= 0x100000001b3ULL;
		} while (*s[i]++ != '\0');
	}
	return h;
}

/* Double the table, kept at most half full. */
static int
replay_grow(struct replay *rp)
{
	struct replay_slot	*slot;
	size_t			 cap, i, j;

	cap = rp->cap ? rp->cap * 2 : REPLAY_HASH_MIN;
	if ((slot = calloc(cap, sizeof(*slot))) == NULL)
		return -1;
	for (i = 0; i < rp->cap; i++) {
		if (rp->slot[i].c == NULL)
			continue;
		for (j = rp->slot[i].hash & (cap - 1); slot[j].c != NULL;
		    j = (j + 1) & (cap - 1))
			;
		slot[j] = rp->slot[i];
	}
	free(rp->slot);
	rp->slot = slot;
	rp->cap = cap;
	return 0;
}

int
replay_add(struct replay *rp, const struct replay_record *r,
    enum replay_class cls, const char *to)
{
	struct replay_change	*c;
	char			 target[sizeof(c->target)];
	char			 from[sizeof(r->reason) + 8];
	uint64_t		 h;
	size_t			 i;

	rp->counts[cls]++;
	if (cls == REPLAY_UNCHANGED || cls == REPLAY_NOT_POLICY)
		return 0;
	if (r->has_host) {
		target_format(target, sizeof(target), &r->host, r->port);
		snprintf(target + strlen(target), sizeof(target) -
		    strlen(target), " %s", r->proto);
		if (r->request)
			snprintf(target + strlen(target), sizeof(target) -
			    strlen(target), " %s %s", r->method, r->path);
	} else
		snprintf(target, sizeof(target), "(no target) %s", r->proto);
	snprintf(from, sizeof(from), "%s %s", r->allow ? "allow" : "deny",
	    r->reason);
	h = replay_hash(target, from, to);
	for (i = rp->cap ? h & (rp->cap - 1) : 0; rp->cap != 0 &&
	    (c = rp->slot[i].c) != NULL; i = (i + 1) & (rp->cap - 1)) {
		if (rp->slot[i].hash == h && strcmp(c->target, target) == 0 &&
		    strcmp(c->from, from) == 0 && strcmp(c->to, to) == 0) {
			c->count++;
			return 0;
		}
	}
	if (rp->n >= rp->max) {
		rp->unlisted++;
		return 0;
	}
	if ((rp->n + 1) * 2 > rp->cap && replay_grow(rp) == -1)
		return -1;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return -1;
	c->cls = cls;
	c->count = 1;
	snprintf(c->target, sizeof(c->target), "%s", target);
	snprintf(c->from, sizeof(c->from), "%s", from);
	snprintf(c->to, sizeof(c->to), "%s", to);
	for (i = h & (rp->cap - 1); rp->slot[i].c != NULL;
	    i = (i + 1) & (rp->cap - 1))
		;
	rp->slot[i].hash = h;
	rp->slot[i].c = c;
	rp->n++;
	return 0;
}

/* By class, then target, then the old and the new outcome. */
static int
replay_cmp(const void *a, const void *b)
{
	const struct replay_change *x = *(const struct replay_change *const *)a;
	const struct replay_change *y = *(const struct replay_change *const *)b;
	int d;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if ((d = strcmp(x->target, y->target)) != 0)
		return d;
	if ((d = strcmp(x->from, y->from)) != 0)
		return d;
	return strcmp(x->to, y->to);
}

const struct replay_change **
replay_changes(const struct replay *rp, size_t *n, uint64_t *unlisted,
    uint64_t counts[REPLAY_NCLASS])
{
	const struct replay_change **v;
	size_t i, k = 0;

	if ((v = calloc(rp->n + 1, sizeof(*v))) == NULL)
		return NULL;
	for (i = 0; i < rp->cap; i++)
		if (rp->slot[i].c != NULL)
			v[k++] = rp->slot[i].c;
	qsort(v, k, sizeof(*v), replay_cmp);
	*n = k;
	*unlisted = rp->unlisted;
	memcpy(counts, rp->counts, sizeof(rp->counts));
	return v;
}
