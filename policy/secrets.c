/*
 * network.tlsTerminate and credentials: srt's keys, with srt's shapes and
 * checks (sandbox-config.js), and pisbx's stricter ones where srt fails
 * open.
 *
 * What pisbx does not do is refused naming the key, never accepted and
 * left undone: JWT decoding (decode, maskClaims) and SigV4 re-signing
 * (awsPairs, sigv4, and masking the secret half of an AWS key pair,
 * which srt re-signs automatically).  onExtractNoMatch defaults to "deny"
 * where srt's default is "warn": a declared secret the pattern cannot
 * find is withheld rather than shown.  docs/credentials.md, and the key
 * table in docs/config.md.
 */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy/policy.h"
#include "policy/config_int.h"

static const char *const keys_tls[] = {
	"caCertPath", "caKeyPath", "excludeDomains", "extraCaCertPaths",
	"maxTunnels", "handshakeTimeoutMs", NULL
};
static const char *const keys_creds[] = {
	"files", "envVars", "allowPlaintextInject", "awsPairs", "sigv4", NULL
};
static const char *const keys_env[] = {
	"name", "mode", "extract", "onExtractNoMatch", "decode", "maskClaims",
	"injectHosts", NULL
};
static const char *const keys_file[] = {
	"path", "mode", "extract", "onExtractNoMatch", "decode", "maskClaims",
	"maskDuplicates", "injectHosts", NULL
};

/* The allow entries of a policy, collected by policy_walk. */
struct allow_set {
	const struct pattern	**v;
	size_t			  n;
	int			  nomem;
};

static char	*tls_path(struct cfgctx *, const char *, const json_t *,
		    const char *);
static char	*path_expand(struct cfgctx *, const char *, const char *,
		    size_t);
static int	 pattern_array(struct cfgctx *, const char *, const json_t *,
		    const char *, struct pattern **, size_t *);
static void	 patterns_free(struct pattern *, size_t);
static char	*source_of(struct cfgctx *, const char *);
static void	 cred_entry(struct cfgctx *, const char *, const json_t *,
		    enum cred_kind, struct config *, const struct allow_set *);
static void	 cred_inject_check(struct cfgctx *, const char *,
		    const struct cred_entry *, const struct config *,
		    const struct allow_set *);
static int	 covered(const struct pattern *, const struct pattern *,
		    size_t);
static int	 covered_allow(const struct pattern *,
		    const struct allow_set *);
static void	 allow_collect(enum policy_list, const struct pattern *,
		    void *);
static void	 cred_entry_free(struct cred_entry *);
static int	 str_same(const char *, const char *);
static int	 patterns_same(const struct pattern *, size_t,
		    const struct pattern *, size_t);
static void	 tls_free(struct tls_terminate *);
static void	 tls_merge(struct cfgctx *, const char *, const json_t *,
		    struct tls_terminate *, struct tls_terminate *);

/* "FILE: JPATH", malloc'ed; NULL after reporting out of memory. */
static char *
source_of(struct cfgctx *ctx, const char *jpath)
{
	char	*s;

	if (asprintf(&s, "%s: %s", ctx->source != NULL ? ctx->source :
	    ctx->name, jpath) == -1) {
		cfg_nomem(ctx, jpath);
		return NULL;
	}
	return s;
}

/*
 * A configured path: absolute, or "~" / "~/..." from the home directory
 * (as srt expands them).  malloc'ed, or NULL after an error.
 */
static char *
path_expand(struct cfgctx *ctx, const char *jpath, const char *s,
    size_t len)
{
	char		 q[CONFIG_QUOTE_MAX], *out;
	const char	*home;

	cfg_quote(q, sizeof(q), s, len);
	if (strlen(s) != len) {
		cfg_err(ctx, jpath, "path contains a NUL byte: %s", q);
		return NULL;
	}
	if (len > 0 && s[0] == '~' && (len == 1 || s[1] == '/')) {
		if ((home = cfg_home()) == NULL) {
			cfg_err(ctx, jpath, "%s starts at the home directory, "
			    "and there is none (HOME is not absolute, no "
			    "password entry)", q);
			return NULL;
		}
		if (asprintf(&out, "%s%s", home, s + 1) == -1) {
			cfg_nomem(ctx, jpath);
			return NULL;
		}
	} else if (len > 0 && s[0] == '/') {
		if ((out = strdup(s)) == NULL) {
			cfg_nomem(ctx, jpath);
			return NULL;
		}
	} else {
		cfg_err(ctx, jpath, "expected an absolute path or one "
		    "starting with \"~/\", got %s", q);
		return NULL;
	}
	if (strlen(out) >= PATH_MAX) {
		cfg_err(ctx, jpath, "path longer than %d bytes: %s",
		    PATH_MAX - 1, q);
		free(out);
		return NULL;
	}
	return out;
}

/* One path key of tlsTerminate, expanded, or NULL (absent or bad). */
static char *
tls_path(struct cfgctx *ctx, const char *base, const json_t *obj,
    const char *key)
{
	char		 p[CONFIG_JPATH_MAX];
	const char	*s;
	size_t		 len;

	if ((s = cfg_string(ctx, base, obj, key, &len)) == NULL)
		return NULL;
	cfg_jpath_key(p, sizeof(p), base, key);
	return path_expand(ctx, p, s, len);
}

/*
 * An optional array of host patterns (as allowedDomains: no bare "*"),
 * each with its source.  1 when the key is present (*v may then be NULL
 * for an empty array), 0 when absent; errors are reported.
 */
static int
pattern_array(struct cfgctx *ctx, const char *base, const json_t *obj,
    const char *key, struct pattern **vp, size_t *np)
{
	char		 p[CONFIG_JPATH_MAX], ip[CONFIG_JPATH_MAX];
	char		 got[CONFIG_QUOTE_MAX];
	const json_t	*v, *item;
	const char	*why;
	struct pattern	*pv;
	size_t		 i;

	*vp = NULL;
	*np = 0;
	if ((v = json_object_get(obj, key)) == NULL)
		return 0;
	cfg_jpath_key(p, sizeof(p), base, key);
	if (!json_is_array(v)) {
		cfg_describe(got, sizeof(got), v);
		cfg_err(ctx, p, "expected an array of patterns, got %s", got);
		return 1;
	}
	if (json_array_size(v) == 0)
		return 1;
	if ((pv = calloc(json_array_size(v), sizeof(*pv))) == NULL) {
		cfg_nomem(ctx, p);
		return 1;
	}
	json_array_foreach(v, i, item) {
		cfg_jpath_index(ip, sizeof(ip), p, i);
		cfg_describe(got, sizeof(got), item);
		if (!json_is_string(item)) {
			cfg_err(ctx, ip, "expected a pattern string, got %s",
			    got);
			continue;
		}
		why = "invalid pattern";
		if (strlen(json_string_value(item)) !=
		    json_string_length(item) ||
		    pattern_parse(json_string_value(item),
		    json_string_length(item), 0, &pv[*np], &why) == -1) {
			cfg_err(ctx, ip, "invalid pattern %s: %s", got, why);
			continue;
		}
		pv[*np].layer = ctx->layer;
		if ((pv[*np].source = source_of(ctx, ip)) == NULL)
			continue;
		(*np)++;
	}
	*vp = pv;
	return 1;
}

static void
patterns_free(struct pattern *v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free(v[i].source);
	free(v);
}

void
secrets_tls(struct cfgctx *ctx, const char *base, const json_t *obj,
    struct config *conf)
{
	char			 p[CONFIG_JPATH_MAX], ip[CONFIG_JPATH_MAX];
	char			 ap[CONFIG_JPATH_MAX], got[CONFIG_QUOTE_MAX];
	char			*path;
	const json_t		*v, *a, *item;
	struct tls_terminate	*t, *prev = conf->tls;
	size_t			 i;

	if ((v = json_object_get(obj, "tlsTerminate")) == NULL)
		return;
	cfg_jpath_key(p, sizeof(p), base, "tlsTerminate");
	if (cfg_obj_check(ctx, p, v, keys_tls) == -1)
		return;
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		cfg_nomem(ctx, p);
		return;
	}
	conf->tls = t;
	t->max_tunnels = TLS_MAX_TUNNELS_DEFAULT;
	t->handshake_timeout_ms = TLS_HANDSHAKE_TIMEOUT_DEFAULT;
	t->source = source_of(ctx, p);
	t->ca_cert_path = tls_path(ctx, p, v, "caCertPath");
	t->ca_key_path = tls_path(ctx, p, v, "caKeyPath");
	/* srt's refine: a certificate without its key signs nothing. */
	if ((json_object_get(v, "caCertPath") == NULL) !=
	    (json_object_get(v, "caKeyPath") == NULL))
		cfg_err(ctx, p, "caCertPath and caKeyPath must be provided "
		    "together (or neither, for a CA made for each run)");
	pattern_array(ctx, p, v, "excludeDomains", &t->exclude, &t->nexclude);
	if ((a = json_object_get(v, "extraCaCertPaths")) != NULL) {
		cfg_jpath_key(ap, sizeof(ap), p, "extraCaCertPaths");
		if (!json_is_array(a)) {
			cfg_describe(got, sizeof(got), a);
			cfg_err(ctx, ap, "expected an array of paths, got %s",
			    got);
			a = NULL;
		}
		json_array_foreach(a, i, item) {
			cfg_jpath_index(ip, sizeof(ip), ap, i);
			if (!json_is_string(item)) {
				cfg_describe(got, sizeof(got), item);
				cfg_err(ctx, ip, "expected a path string, got "
				    "%s", got);
				continue;
			}
			if ((path = path_expand(ctx, ip,
			    json_string_value(item), json_string_length(item)))
			    == NULL)
				continue;
			if (cfg_strlist_add(&t->extra_ca, path) == -1) {
				free(path);
				cfg_nomem(ctx, ip);
			}
		}
	}
	cfg_int(ctx, p, v, "maxTunnels", 1, 65536, &t->max_tunnels);
	cfg_int(ctx, p, v, "handshakeTimeoutMs", 100, 600000,
	    &t->handshake_timeout_ms);
	/* The managed file's, taken in first (managed_seed_rules). */
	if (prev != NULL) {
		tls_merge(ctx, p, v, prev, t);
		tls_free(prev);
	}
}

/*
 * A lower layer's tlsTerminate t (JSON v at p) over the managed file's
 * prev: the layer tunes termination, it cannot turn it off (there is no
 * key for that).  The managed CA stays the one that signs (the layer may
 * repeat it, not name another: a team's CA is the one its machines
 * trust), the managed extraCaCertPaths stay trusted before the layer's,
 * and the managed maxTunnels and handshakeTimeoutMs hold unless the layer
 * sets its own (neither lets a tunnel past the rules: a tunnel over
 * maxTunnels is refused, not relayed).  excludeDomains is the layer's
 * alone (the managed file has none); managed_check keeps it off the
 * managed rules' hosts.
 */
static void
tls_merge(struct cfgctx *ctx, const char *p, const json_t *v,
    struct tls_terminate *prev, struct tls_terminate *t)
{
	struct strlist	 extra = { NULL, 0 };
	char		 jp[CONFIG_JPATH_MAX], *s;
	size_t		 i;

	if (prev->ca_cert_path != NULL && t->ca_cert_path != NULL &&
	    (!str_same(prev->ca_cert_path, t->ca_cert_path) ||
	    !str_same(prev->ca_key_path, t->ca_key_path))) {
		cfg_jpath_key(jp, sizeof(jp), p, "caCertPath");
		cfg_err(ctx, jp, "%s is not the CA of %s (managed layer), "
		    "%s: a lower layer cannot sign with another CA; remove "
		    "caCertPath and caKeyPath", t->ca_cert_path, prev->source,
		    prev->ca_cert_path);
	} else if (prev->ca_cert_path != NULL && t->ca_cert_path == NULL) {
		t->ca_cert_path = prev->ca_cert_path;
		t->ca_key_path = prev->ca_key_path;
		prev->ca_cert_path = prev->ca_key_path = NULL;
	}
	for (i = 0; i < prev->extra_ca.n + t->extra_ca.n; i++) {
		s = i < prev->extra_ca.n ? prev->extra_ca.v[i] :
		    t->extra_ca.v[i - prev->extra_ca.n];
		if (cfg_strlist_add(&extra, s) == -1) {
			cfg_nomem(ctx, p);
			free(extra.v);
			return;
		}
	}
	/* The strings moved to extra; the old arrays go. */
	free(prev->extra_ca.v);
	free(t->extra_ca.v);
	prev->extra_ca.v = NULL;
	prev->extra_ca.n = 0;
	t->extra_ca = extra;
	if (json_object_get(v, "maxTunnels") == NULL)
		t->max_tunnels = prev->max_tunnels;
	if (json_object_get(v, "handshakeTimeoutMs") == NULL)
		t->handshake_timeout_ms = prev->handshake_timeout_ms;
}

static void
tls_free(struct tls_terminate *t)
{
	if (t == NULL)
		return;
	free(t->ca_cert_path);
	free(t->ca_key_path);
	patterns_free(t->exclude, t->nexclude);
	strlist_free(&t->extra_ca);
	free(t->source);
	free(t);
}

/* policy_walk callback: keep the allow entries. */
static void
allow_collect(enum policy_list list, const struct pattern *pat, void *arg)
{
	struct allow_set	 *a = arg;
	const struct pattern	**nv;

	if (list != POLICY_ALLOW || a->nomem)
		return;
	if ((nv = reallocarray(a->v, a->n + 1, sizeof(*nv))) == NULL) {
		a->nomem = 1;
		return;
	}
	a->v = nv;
	a->v[a->n++] = pat;
}

/* Whether every host pat matches, one of v matches too. */
static int
covered(const struct pattern *pat, const struct pattern *v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (pattern_within(pat, &v[i]))
			return 1;
	return 0;
}

/*
 * Whether an allow entry covers every host pat names.  Injection is per
 * host, not per port (srt strips the allow entries' ports for this
 * check): the port of each connection is decided by the policy itself,
 * which config_cred_injects asks too.
 */
static int
covered_allow(const struct pattern *pat, const struct allow_set *a)
{
	struct pattern	 inner, outer;
	size_t		 i;

	inner = *pat;
	inner.port = 0;
	for (i = 0; i < a->n; i++) {
		outer = *a->v[i];
		outer.port = 0;
		if (pattern_within(&inner, &outer))
			return 1;
	}
	return 0;
}

/* srt's injectHosts checks, against allowedDomains and excludeDomains. */
static void
cred_inject_check(struct cfgctx *ctx, const char *base,
    const struct cred_entry *e, const struct config *conf,
    const struct allow_set *allow)
{
	char			 p[CONFIG_JPATH_MAX], ip[CONFIG_JPATH_MAX];
	const struct tls_terminate *t = conf->tls;
	size_t			 i;

	cfg_jpath_key(p, sizeof(p), base, "injectHosts");
	for (i = 0; i < e->ninject; i++) {
		cfg_jpath_index(ip, sizeof(ip), p, i);
		if (!covered_allow(&e->inject[i], allow))
			cfg_err(ctx, ip, "injectHosts entry \"%s\" is not "
			    "reachable via network.allowedDomains: add \"%s\" "
			    "(or a covering wildcard) to allowedDomains, or "
			    "remove it from injectHosts", e->inject[i].text,
			    e->inject[i].text);
		else if (e->mode == CRED_MASK && t != NULL &&
		    covered(&e->inject[i], t->exclude, t->nexclude))
			cfg_err(ctx, ip, "injectHosts entry \"%s\" is entirely "
			    "covered by network.tlsTerminate.excludeDomains: "
			    "credentials are injected on TLS-terminated "
			    "connections only, so this host would receive the "
			    "placeholder instead of the credential; remove it "
			    "from one of the two lists", e->inject[i].text);
	}
	if (e->mode != CRED_MASK)
		return;
	if (e->inject_set && e->ninject == 0)
		cfg_err(ctx, p, "explicitly empty: the credential would be "
		    "masked but never injected; omit injectHosts to default "
		    "to network.allowedDomains, or list the intended hosts");
	if (!e->inject_set && t != NULL && t->nexclude > 0 && allow->n > 0) {
		for (i = 0; i < allow->n; i++) {
			struct pattern	 h = *allow->v[i];

			h.port = 0;
			if (!covered(&h, t->exclude, t->nexclude))
				break;
		}
		if (i == allow->n)
			cfg_err(ctx, base, "this masked credential has no "
			    "injectHosts, so it defaults to "
			    "network.allowedDomains, but "
			    "network.tlsTerminate.excludeDomains covers every "
			    "allowed domain: it could never be injected "
			    "anywhere (injection runs on TLS-terminated "
			    "connections only)");
	}
}

/* One envVars[] or files[] entry at jpath. */
static void
cred_entry(struct cfgctx *ctx, const char *jpath, const json_t *v,
    enum cred_kind kind, struct config *conf, const struct allow_set *allow)
{
	char			 p[CONFIG_JPATH_MAX], q[CONFIG_QUOTE_MAX];
	struct cred_entry	*e, *nv;
	const char		*s, *key;
	size_t			 len, i;

	if (cfg_obj_check(ctx, jpath, v, kind == CRED_ENV ? keys_env :
	    keys_file) == -1)
		return;
	if ((nv = reallocarray(conf->creds.v, conf->creds.n + 1,
	    sizeof(*nv))) == NULL) {
		cfg_nomem(ctx, jpath);
		return;
	}
	conf->creds.v = nv;
	e = &conf->creds.v[conf->creds.n++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->on_nomatch = CRED_NOMATCH_DENY;
	e->source = source_of(ctx, jpath);

	key = kind == CRED_ENV ? "name" : "path";
	cfg_jpath_key(p, sizeof(p), jpath, key);
	if ((s = cfg_string(ctx, jpath, v, key, &len)) == NULL) {
		if (len == 0)
			cfg_err(ctx, p, "missing: %s", kind == CRED_ENV ?
			    "the environment variable's name (\"GH_TOKEN\")" :
			    "the file's path (\"~/.netrc\")");
	} else if (kind == CRED_ENV) {
		cfg_quote(q, sizeof(q), s, len);
		if (!cfg_env_name_valid(s, len))
			cfg_err(ctx, p, "expected an environment variable "
			    "name ([A-Za-z_][A-Za-z0-9_]*), got %s", q);
		else if ((e->name = strdup(s)) == NULL)
			cfg_nomem(ctx, p);
	} else
		e->name = path_expand(ctx, p, s, len);
	/* Two entries for one name: which mode holds? */
	for (i = 0; e->name != NULL && i + 1 < conf->creds.n; i++)
		if (conf->creds.v[i].kind == kind &&
		    conf->creds.v[i].name != NULL &&
		    strcmp(conf->creds.v[i].name, e->name) == 0)
			cfg_err(ctx, p, "\"%s\" is declared already (%s): one "
			    "entry per %s", e->name, conf->creds.v[i].source,
			    kind == CRED_ENV ? "variable" : "file");

	cfg_jpath_key(p, sizeof(p), jpath, "mode");
	if ((s = cfg_string(ctx, jpath, v, "mode", &len)) == NULL) {
		if (len == 0)
			cfg_err(ctx, p, "missing: \"deny\" or \"mask\"");
	} else if (strlen(s) == len && strcmp(s, "deny") == 0)
		e->mode = CRED_DENY;
	else if (strlen(s) == len && strcmp(s, "mask") == 0)
		e->mode = CRED_MASK;
	else {
		cfg_quote(q, sizeof(q), s, len);
		cfg_err(ctx, p, "expected \"deny\" or \"mask\", got %s", q);
	}

	cfg_jpath_key(p, sizeof(p), jpath, "extract");
	if ((s = cfg_string(ctx, jpath, v, "extract", &len)) != NULL) {
		/* Compiled (and its group 1 checked) by the TLS module. */
		if (len == 0 || strlen(s) != len)
			cfg_err(ctx, p, "expected a regular expression with a "
			    "capturing group (group 1 is the value masked), "
			    "got \"\"");
		else if ((e->extract = strdup(s)) == NULL)
			cfg_nomem(ctx, p);
	}
	cfg_jpath_key(p, sizeof(p), jpath, "onExtractNoMatch");
	if ((s = cfg_string(ctx, jpath, v, "onExtractNoMatch", &len)) !=
	    NULL) {
		if (strlen(s) == len && strcmp(s, "warn") == 0)
			e->on_nomatch = CRED_NOMATCH_WARN;
		else if (strlen(s) == len && strcmp(s, "deny") == 0)
			e->on_nomatch = CRED_NOMATCH_DENY;
		else if (strlen(s) == len && strcmp(s, "error") == 0)
			e->on_nomatch = CRED_NOMATCH_ERROR;
		else {
			cfg_quote(q, sizeof(q), s, len);
			cfg_err(ctx, p, "expected \"warn\", \"deny\" or "
			    "\"error\", got %s", q);
		}
	}
	if (json_object_get(v, "decode") != NULL) {
		cfg_jpath_key(p, sizeof(p), jpath, "decode");
		cfg_err(ctx, p, "not supported: pisbx does not decode JWTs: "
		    "mask the whole value (drop decode) or deny it");
	}
	if (json_object_get(v, "maskClaims") != NULL) {
		cfg_jpath_key(p, sizeof(p), jpath, "maskClaims");
		cfg_err(ctx, p, "not supported: pisbx does not decode JWTs, "
		    "so it masks no claim inside one: mask the whole value "
		    "(drop decode and maskClaims) or deny it");
	}
	if (kind == CRED_FILE)
		cfg_bool(ctx, jpath, v, "maskDuplicates", &e->mask_duplicates);

	e->inject_set = pattern_array(ctx, jpath, v, "injectHosts",
	    &e->inject, &e->ninject);
	if (e->mode == CRED_MASK && kind == CRED_FILE && e->name != NULL) {
		cfg_jpath_key(p, sizeof(p), jpath, "path");
		len = strlen(e->name);
		if (e->name[len - 1] == '/')
			cfg_err(ctx, p, "mode \"mask\" applies to one file, not "
			    "a directory: use mode \"deny\" for \"%s\", or "
			    "name the credential file inside it", e->name);
		else if (glob_is_pattern(e->name))
			cfg_err(ctx, p, "mode \"mask\" applies to one file, "
			    "not a pattern: name the file, or use mode "
			    "\"deny\" for \"%s\"", e->name);
	}
	if (e->mode == CRED_DENY && kind == CRED_FILE && e->name != NULL &&
	    glob_is_pattern(e->name) && glob_check(e->name, &s) == -1) {
		cfg_jpath_key(p, sizeof(p), jpath, "path");
		cfg_err(ctx, p, "invalid pattern \"%s\": %s", e->name, s);
	}
	/*
	 * srt re-signs AWS SigV4 requests with the real secret when this
	 * trio is masked; pisbx does not, so a masked secret would yield
	 * requests every AWS endpoint rejects.  Refused, not accepted and
	 * broken.
	 */
	if (kind == CRED_ENV && e->mode == CRED_MASK && e->name != NULL &&
	    (strcmp(e->name, "AWS_SECRET_ACCESS_KEY") == 0 ||
	    strcmp(e->name, "AWS_SESSION_TOKEN") == 0)) {
		cfg_jpath_key(p, sizeof(p), jpath, "mode");
		cfg_err(ctx, p, "not supported: %s is part of an AWS SigV4 "
		    "signature, which a placeholder breaks and pisbx does "
		    "not re-sign: use mode \"deny\"", e->name);
	}
	cred_inject_check(ctx, jpath, e, conf, allow);
}

void
secrets_creds(struct cfgctx *ctx, const json_t *root, struct config *conf)
{
	static const char	 jp[] = "$.credentials";
	char			 p[CONFIG_JPATH_MAX], ip[CONFIG_JPATH_MAX];
	char			 got[CONFIG_QUOTE_MAX];
	const json_t		*v, *a, *item;
	struct allow_set	 allow = { NULL, 0, 0 };
	size_t			 i, j;
	int			 masked = 0;
	static const struct {
		const char	*key;
		enum cred_kind	 kind;
	} lists[] = { { "envVars", CRED_ENV }, { "files", CRED_FILE } };

	if ((v = json_object_get(root, "credentials")) == NULL)
		return;
	if (cfg_obj_check(ctx, jp, v, keys_creds) == -1)
		return;
	if (policy_walk(conf->policy, allow_collect, &allow) == -1 ||
	    allow.nomem) {
		cfg_nomem(ctx, jp);
		goto done;
	}
	cfg_bool(ctx, jp, v, "allowPlaintextInject",
	    &conf->creds.allow_plaintext_inject);
	if (json_object_get(v, "awsPairs") != NULL)
		cfg_err(ctx, "$.credentials.awsPairs", "not supported: pisbx "
		    "does not re-sign AWS SigV4 requests, so a masked AWS key "
		    "pair cannot work: remove the key, and deny the "
		    "variables (mode \"deny\")");
	if (json_object_get(v, "sigv4") != NULL)
		cfg_err(ctx, "$.credentials.sigv4", "not supported: pisbx "
		    "does not re-sign AWS SigV4 requests: remove the key");
	for (j = 0; j < sizeof(lists) / sizeof(*lists); j++) {
		if ((a = json_object_get(v, lists[j].key)) == NULL)
			continue;
		cfg_jpath_key(p, sizeof(p), jp, lists[j].key);
		if (!json_is_array(a)) {
			cfg_describe(got, sizeof(got), a);
			cfg_err(ctx, p, "expected an array of objects, got %s",
			    got);
			continue;
		}
		json_array_foreach(a, i, item) {
			cfg_jpath_index(ip, sizeof(ip), p, i);
			cred_entry(ctx, ip, item, lists[j].kind, conf, &allow);
		}
	}
	for (i = 0; i < conf->creds.n; i++)
		if (conf->creds.v[i].mode == CRED_MASK)
			masked = 1;
	if (masked && conf->tls == NULL && !conf->creds.allow_plaintext_inject)
		cfg_err(ctx, jp, "masking requires network.tlsTerminate, so "
		    "that the value is injected over a verified TLS "
		    "connection only: add \"tlsTerminate\": {} to network, "
		    "or set credentials.allowPlaintextInject (not "
		    "recommended: the value then travels in cleartext)");
done:
	free(allow.v);
}

int
config_tls_terminates(const struct config *conf, const struct host *h,
    uint16_t port)
{
	size_t	 i;

	if (conf == NULL || conf->tls == NULL)
		return 0;
	for (i = 0; i < conf->tls->nexclude; i++)
		if (pattern_match(&conf->tls->exclude[i], h, port))
			return 0;
	return 1;
}

int
config_cred_injects(const struct config *conf, const struct cred_entry *e,
    const struct host *h, uint16_t port)
{
	const struct pattern	*matched = NULL;
	size_t			 i;

	if (conf == NULL || e == NULL || e->mode != CRED_MASK)
		return 0;
	/*
	 * The policy in force first: a host the deny list (or the managed
	 * ceiling) refuses, or that only a reviewer let through, gets no
	 * credential, whatever injectHosts says.
	 */
	if (policy_eval(conf->policy, h, port, &matched) != VERDICT_ALLOW)
		return 0;
	if (!e->inject_set)
		return 1;
	for (i = 0; i < e->ninject; i++)
		if (pattern_match(&e->inject[i], h, port))
			return 1;
	return 0;
}

static void
cred_entry_free(struct cred_entry *e)
{
	free(e->name);
	free(e->source);
	free(e->extract);
	patterns_free(e->inject, e->ninject);
}

void
secrets_free(struct config *conf)
{
	size_t	 i;

	tls_free(conf->tls);
	conf->tls = NULL;
	for (i = 0; i < conf->creds.n; i++)
		cred_entry_free(&conf->creds.v[i]);
	free(conf->creds.v);
	memset(&conf->creds, 0, sizeof(conf->creds));
}

static int
str_same(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int
patterns_same(const struct pattern *a, size_t na, const struct pattern *b,
    size_t nb)
{
	size_t	 i;

	if (na != nb)
		return 0;
	for (i = 0; i < na; i++)
		if (strcmp(a[i].text, b[i].text) != 0)
			return 0;
	return 1;
}

int
config_tls_ca_same(const struct config *a, const struct config *b)
{
	const struct tls_terminate *x = a->tls, *y = b->tls;
	size_t	 i;

	if (x == NULL || y == NULL)
		return x == y;
	if (!str_same(x->ca_cert_path, y->ca_cert_path) ||
	    !str_same(x->ca_key_path, y->ca_key_path) ||
	    x->extra_ca.n != y->extra_ca.n)
		return 0;
	for (i = 0; i < x->extra_ca.n; i++)
		if (strcmp(x->extra_ca.v[i], y->extra_ca.v[i]) != 0)
			return 0;
	return 1;
}

int
config_tls_same(const struct config *a, const struct config *b)
{
	const struct tls_terminate *x = a->tls, *y = b->tls;

	if (!config_tls_ca_same(a, b))
		return 0;
	if (x == NULL)
		return 1;
	return patterns_same(x->exclude, x->nexclude, y->exclude,
	    y->nexclude) && x->max_tunnels == y->max_tunnels &&
	    x->handshake_timeout_ms == y->handshake_timeout_ms;
}

int
config_creds_same(const struct config *a, const struct config *b)
{
	const struct cred_entry	*x, *y;
	size_t			 i;

	if (a->creds.n != b->creds.n || a->creds.allow_plaintext_inject !=
	    b->creds.allow_plaintext_inject)
		return 0;
	for (i = 0; i < a->creds.n; i++) {
		x = &a->creds.v[i];
		y = &b->creds.v[i];
		if (x->kind != y->kind || !str_same(x->name, y->name) ||
		    x->mode != y->mode || !str_same(x->extract, y->extract) ||
		    x->on_nomatch != y->on_nomatch ||
		    x->mask_duplicates != y->mask_duplicates ||
		    x->inject_set != y->inject_set ||
		    !patterns_same(x->inject, x->ninject, y->inject,
		    y->ninject))
			return 0;
	}
	return 1;
}
