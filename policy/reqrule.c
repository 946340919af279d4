/*
 * network.requestRules: which methods and paths the proxy lets through
 * on the hosts whose TLS it terminates.
 *
 * An entry names a host pattern and its rules, "METHOD /path/glob"
 * ("*" within one segment, "**" any run of segments, no query), or
 * names a recipe file holding such entries: an absolute path, or NAME
 * for <datadir>/rules/NAME.json, found next to the program as the
 * shipped domain lists are.  Every entry whose host matches has its say
 * (entries are intersected, never one chosen): a deny rule of any of
 * them refuses, an entry with "unmatched": "deny" refuses what none of
 * its allow rules names.  Deny rules match method and path case-
 * insensitively (a server may not care about case, and a deny must not
 * be dodged by spelling); allow rules exactly.
 *
 * Paths are compared in one spelling: request_path_canon's, which
 * refuses every target a server could read as another path than the
 * rule saw (dot segments, "//", "\", encoded "/", "\" or ".").
 */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "policy/policy.h"
#include "policy/config_int.h"

#define RULE_TEXT_MAX		1024	/* octets of one "METHOD /path" */
#define RULE_METHOD_MAX		32
#define RULE_WILDCARDS_MAX	16	/* "*" and "**" in one rule */
#define RECIPE_NAME_MAX		64
#define REQ_PATH_MAX		8192	/* request_path_canon's own bound */

static const char *const keys_entry[] = {
	"host", "deny", "allow", "unmatched", NULL
};
static const char *const keys_recipe[] = {
	"$schema", "description", "requestRules", NULL
};

/* policy_rules_dir's, or NULL: look next to the program. */
static char	*rules_dir;

static void	 req_entry(struct cfgctx *, const char *, const json_t *,
		    struct config *);
static void	 req_recipe(struct cfgctx *, const char *, const char *,
		    size_t, struct config *);
static char	*recipe_path(struct cfgctx *, const char *, const char *,
		    size_t);
static int	 req_rules(struct cfgctx *, const char *, const json_t *,
		    const char *, struct req_rule **, size_t *);
static int	 rule_parse(const char *, size_t, struct req_rule *,
		    const char **);
static int	 rule_path_check(const char *, const char **);
static int	 method_char(int);
static char	*path_loose(const char *);
static void	 rules_free(struct req_rule *, size_t);
static int	 glob_path(const char *, const char *, int);
static int	 glob_seg(const char *, size_t, const char *, size_t, int);
static int	 rule_matches(const struct req_rule *, const char *,
		    const char *, int);
static int	 hexval(int);
static int	 unreserved(int);
static int	 utf8_valid(const unsigned char *, size_t);

void
policy_rules_dir(const char *dir)
{
	free(rules_dir);
	rules_dir = dir != NULL ? strdup(dir) : NULL;
}

/*
 * The file a recipe item names: itself when absolute, DIR/NAME.json for
 * a bare NAME ([A-Za-z0-9_-], the recipes' folder).  NULL after an error.
 */
static char *
recipe_path(struct cfgctx *ctx, const char *jpath, const char *s, size_t len)
{
	char	 q[CONFIG_QUOTE_MAX], *dir, *p;
	size_t	 i;

	cfg_quote(q, sizeof(q), s, len);
	if (len > 0 && s[0] == '/') {
		if (cfg_abs_path(ctx, jpath, s, len, PATH_MAX) == -1)
			return NULL;
		/*
		 * The file's path names its rules in refusals, messages and
		 * the access log: printable ASCII only, so that a config
		 * cannot put terminal escapes on the user's screen.
		 */
		if (!config_printable(s, len)) {
			cfg_err(ctx, jpath, "recipe %s: a rules file's path "
			    "is named in refusals and the access log, so it "
			    "must be printable ASCII: rename the file or link "
			    "it from such a path", q);
			return NULL;
		}
		if ((p = strdup(s)) == NULL)
			cfg_nomem(ctx, jpath);
		return p;
	}
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_')
			break;
	if (len == 0 || i < len || len > RECIPE_NAME_MAX) {
		cfg_err(ctx, jpath, "expected a rules object, an absolute "
		    "path or a recipe name ([A-Za-z0-9_-], at most %d "
		    "characters: \"git-readonly\"), got %s", RECIPE_NAME_MAX,
		    q);
		return NULL;
	}
	dir = rules_dir != NULL ? strdup(rules_dir) : policy_data_dir("rules");
	if (dir == NULL) {
		cfg_err(ctx, jpath, "recipe %s: no rules folder (looked for "
		    "share/pisbx/rules next to the program): name the recipe "
		    "file by its absolute path", q);
		return NULL;
	}
	if (asprintf(&p, "%s/%s.json", dir, s) == -1) {
		p = NULL;
		cfg_nomem(ctx, jpath);
	}
	free(dir);
	return p;
}

/*
 * A recipe: {"requestRules": [entries]} read from a file, its entries
 * appended with sources naming the file.  Errors inside it name the
 * file and its JSON path; one it cannot be read names the config item.
 */
static void
req_recipe(struct cfgctx *ctx, const char *jpath, const char *s, size_t len,
    struct config *conf)
{
	struct cfgctx	 sub;
	char		 ip[CONFIG_JPATH_MAX], got[CONFIG_QUOTE_MAX];
	char		 q[CONFIG_QUOTE_MAX], *path, *buf = NULL, *via = NULL;
	const json_t	*a, *item;
	json_t		*root = NULL;
	size_t		 blen, i;
	int		 fd;

	if ((path = recipe_path(ctx, jpath, s, len)) == NULL)
		return;
	cfg_quote(q, sizeof(q), s, len);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) ==
	    -1) {
		cfg_err(ctx, jpath, "recipe %s: cannot open %s: %s", q, path,
		    strerror(errno));
		goto done;
	}
	sub = *ctx;
	sub.name = path;
	sub.source = path;
	/*
	 * A recipe the managed file names: its rules' sources name the
	 * managed file's item too, so a refusal says who imposed it.
	 */
	if (ctx->layer != NULL && strcmp(ctx->layer, "managed") == 0) {
		if (asprintf(&via, "%s: %s, recipe %s", ctx->source != NULL ?
		    ctx->source : ctx->name, jpath, path) == -1) {
			via = NULL;
			close(fd);
			cfg_nomem(ctx, jpath);
			goto done;
		}
		sub.source = via;
	}
	sub.nerr = 0;
	sub.paths = 0;
	if ((buf = cfg_file_read(&sub, fd, &blen)) == NULL ||
	    (root = cfg_json_parse(&sub, buf, blen)) == NULL)
		goto sub_done;
	if (cfg_obj_check(&sub, "$", root, keys_recipe) == -1)
		goto sub_done;
	cfg_string(&sub, "$", root, "$schema", &blen);
	cfg_string(&sub, "$", root, "description", &blen);
	a = json_object_get(root, "requestRules");
	if (!json_is_array(a)) {
		if (a != NULL)
			cfg_describe(got, sizeof(got), a);
		cfg_err(&sub, "$.requestRules", "expected an array of rules "
		    "objects, got %s", a == NULL ? "nothing" : got);
		goto sub_done;
	}
	json_array_foreach(a, i, item) {
		cfg_jpath_index(ip, sizeof(ip), "$.requestRules", i);
		if (!json_is_object(item)) {
			cfg_describe(got, sizeof(got), item);
			cfg_err(&sub, ip, "expected a rules object (a recipe "
			    "names no other recipe), got %s", got);
			continue;
		}
		req_entry(&sub, ip, item, conf);
	}
sub_done:
	if (sub.nerr > 0)
		cfg_err(ctx, jpath, "recipe %s (%s) is not valid: %zu error%s "
		    "above", q, path, sub.nerr, sub.nerr == 1 ? "" : "s");
	ctx->nerr += sub.nerr;
done:
	json_decref(root);
	free(buf);
	free(via);
	free(path);
}

static int
method_char(int c)
{
	/* RFC 9110 tchar */
	return isalnum(c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) !=
	    NULL);
}

/*
 * A rule's path: origin-form, in request_path_canon's spelling, "*" and
 * "**" as globs ("**" a whole segment), no query.
 */
static int
rule_path_check(const char *path, const char **errstr)
{
	char		 canon[RULE_TEXT_MAX];
	const char	*seg, *e;
	size_t		 n, stars = 0;

	if (strchr(path, '?') != NULL || strchr(path, '#') != NULL) {
		*errstr = "a rule names a path, without query or fragment";
		return -1;
	}
	if (request_path_canon(path, strlen(path), canon, sizeof(canon),
	    errstr) == -1)
		return -1;
	if (strcmp(canon, path) != 0) {
		*errstr = "write the path as requests are compared: "
		    "unreserved characters (letters, digits, \"-._~\") not "
		    "%-encoded, other %-escapes in upper case";
		return -1;
	}
	for (seg = path + 1;; seg = e + 1) {
		e = strchr(seg, '/');
		n = e != NULL ? (size_t)(e - seg) : strlen(seg);
		if (memmem(seg, n, "**", 2) != NULL &&
		    !(n == 2 && seg[0] == '*' && seg[1] == '*')) {
			*errstr = "\"**\" stands for whole segments: write "
			    "\"/a/**\" or \"/a/**/b\", and \"*\" within "
			    "one segment";
			return -1;
		}
		stars += (size_t)(memchr(seg, '*', n) != NULL) +
		    (n > 0 ? (size_t)(memchr(seg + 1, '*', n - 1) != NULL) :
		    0);
		if (e == NULL)
			break;
	}
	if (stars > RULE_WILDCARDS_MAX) {
		*errstr = "too many wildcards in one rule (at most 16)";
		return -1;
	}
	return 0;
}

/* "METHOD /path" into r (text and source are the caller's). */
static int
rule_parse(const char *s, size_t len, struct req_rule *r, const char **errstr)
{
	const char	*sp, *path;
	size_t		 mlen, i;

	if (strlen(s) != len || len == 0 || len >= RULE_TEXT_MAX) {
		*errstr = "expected \"METHOD /path\" of at most 1023 bytes";
		return -1;
	}
	if ((sp = strchr(s, ' ')) == NULL) {
		*errstr = "expected \"METHOD /path\" (\"POST /repos/*/*/"
		    "git-receive-pack\", \"* /admin/**\")";
		return -1;
	}
	mlen = (size_t)(sp - s);
	path = sp + 1;
	if (mlen == 0 || mlen > RULE_METHOD_MAX) {
		*errstr = "the method is a token of 1 to 32 characters, or "
		    "\"*\"";
		return -1;
	}
	for (i = 0; i < mlen; i++)
		if (!method_char((unsigned char)s[i]) ||
		    (s[i] == '*' && mlen != 1)) {
			*errstr = "the method is a token (\"GET\", \"POST\"), "
			    "or \"*\" alone for any method";
			return -1;
		}
	if (path[0] != '/') {
		*errstr = "the path starts with \"/\" (one space after the "
		    "method)";
		return -1;
	}
	for (i = 0; path[i] != '\0'; i++)
		if (isspace((unsigned char)path[i])) {
			*errstr = "whitespace in the path";
			return -1;
		}
	if (rule_path_check(path, errstr) == -1)
		return -1;
	if ((r->method = strndup(s, mlen)) == NULL ||
	    (r->path = strdup(path)) == NULL) {
		free(r->method);
		r->method = NULL;
		*errstr = "out of memory";
		return -1;
	}
	return 0;
}

/* The "deny" or "allow" list of an entry; 1 when present. */
static int
req_rules(struct cfgctx *ctx, const char *base, const json_t *obj,
    const char *key, struct req_rule **vp, size_t *np)
{
	char		 p[CONFIG_JPATH_MAX], ip[CONFIG_JPATH_MAX];
	char		 got[CONFIG_QUOTE_MAX];
	const json_t	*v, *item;
	const char	*why;
	struct req_rule	*r;
	size_t		 i;

	if ((v = json_object_get(obj, key)) == NULL)
		return 0;
	cfg_jpath_key(p, sizeof(p), base, key);
	if (!json_is_array(v)) {
		cfg_describe(got, sizeof(got), v);
		cfg_err(ctx, p, "expected an array of \"METHOD /path\" "
		    "strings, got %s", got);
		return 1;
	}
	if (json_array_size(v) == 0)
		return 1;
	if ((*vp = calloc(json_array_size(v), sizeof(**vp))) == NULL) {
		cfg_nomem(ctx, p);
		return 1;
	}
	json_array_foreach(v, i, item) {
		cfg_jpath_index(ip, sizeof(ip), p, i);
		cfg_describe(got, sizeof(got), item);
		if (!json_is_string(item)) {
			cfg_err(ctx, ip, "expected a \"METHOD /path\" string, "
			    "got %s", got);
			continue;
		}
		r = &(*vp)[*np];
		if (rule_parse(json_string_value(item),
		    json_string_length(item), r, &why) == -1) {
			cfg_err(ctx, ip, "invalid rule %s: %s", got, why);
			continue;
		}
		if ((r->text = strdup(json_string_value(item))) == NULL ||
		    asprintf(&r->source, "%s: %s", ctx->source != NULL ?
		    ctx->source : ctx->name, ip) == -1) {
			r->source = NULL;
			rules_free(r, 1);
			memset(r, 0, sizeof(*r));
			cfg_nomem(ctx, ip);
			continue;
		}
		(*np)++;
	}
	return 1;
}

/* One rules object at jpath. */
static void
req_entry(struct cfgctx *ctx, const char *jpath, const json_t *v,
    struct config *conf)
{
	char		 p[CONFIG_JPATH_MAX], q[CONFIG_QUOTE_MAX];
	struct req_host	*h, *nv;
	const char	*s, *why;
	size_t		 len, i;
	int		 host_ok = 0;

	if (cfg_obj_check(ctx, jpath, v, keys_entry) == -1)
		return;
	if ((nv = reallocarray(conf->req_hosts, conf->nreq_hosts + 1,
	    sizeof(*nv))) == NULL) {
		cfg_nomem(ctx, jpath);
		return;
	}
	conf->req_hosts = nv;
	h = &conf->req_hosts[conf->nreq_hosts++];
	memset(h, 0, sizeof(*h));
	h->unmatched = REQ_UNMATCHED_ALLOW;
	h->layer = ctx->layer;
	if (asprintf(&h->source, "%s: %s", ctx->source != NULL ?
	    ctx->source : ctx->name, jpath) == -1) {
		h->source = NULL;
		cfg_nomem(ctx, jpath);
	}

	cfg_jpath_key(p, sizeof(p), jpath, "host");
	if ((s = cfg_string(ctx, jpath, v, "host", &len)) == NULL) {
		if (len == 0)
			cfg_err(ctx, p, "missing: the host the rules are for "
			    "(\"github.com\", \"*.example.com\")");
	} else {
		cfg_quote(q, sizeof(q), s, len);
		why = "invalid pattern";
		if (strlen(s) != len || pattern_parse(s, len, 0, &h->host,
		    &why) == -1)
			cfg_err(ctx, p, "invalid pattern %s: %s", q, why);
		else
			host_ok = 1;
	}
	req_rules(ctx, jpath, v, "deny", &h->deny, &h->ndeny);
	req_rules(ctx, jpath, v, "allow", &h->allow, &h->nallow);
	cfg_jpath_key(p, sizeof(p), jpath, "unmatched");
	if ((s = cfg_string(ctx, jpath, v, "unmatched", &len)) != NULL) {
		if (strlen(s) == len && strcmp(s, "allow") == 0)
			h->unmatched = REQ_UNMATCHED_ALLOW;
		else if (strlen(s) == len && strcmp(s, "deny") == 0)
			h->unmatched = REQ_UNMATCHED_DENY;
		else {
			cfg_quote(q, sizeof(q), s, len);
			cfg_err(ctx, p, "expected \"allow\" or \"deny\", got "
			    "%s", q);
		}
	}
	if (json_object_get(v, "deny") == NULL &&
	    json_object_get(v, "allow") == NULL &&
	    json_object_get(v, "unmatched") == NULL)
		cfg_err(ctx, jpath, "names no rule: give \"deny\", \"allow\" "
		    "and/or \"unmatched\"");
	if (!host_ok)
		return;
	/*
	 * Rules are read inside terminated TLS only: a host the proxy does
	 * not terminate would carry its requests past them.
	 */
	if (conf->tls == NULL) {
		cfg_err(ctx, jpath, "request rules for %s need "
		    "network.tlsTerminate: the proxy reads requests only on "
		    "connections whose TLS it terminates (add \"tlsTerminate\": "
		    "{} to network)", h->host.text);
		return;
	}
	for (i = 0; i < conf->tls->nexclude; i++)
		if (pattern_within(&h->host, &conf->tls->exclude[i]) ||
		    pattern_within(&conf->tls->exclude[i], &h->host))
			cfg_err(ctx, jpath, "request rules for %s, and %s in "
			    "network.tlsTerminate.excludeDomains (%s): an "
			    "excluded host is not terminated, so its requests "
			    "cannot be checked; remove one", h->host.text,
			    conf->tls->exclude[i].text,
			    conf->tls->exclude[i].source);
}

void
reqrule_parse(struct cfgctx *ctx, const char *base, const json_t *obj,
    struct config *conf)
{
	char		 p[CONFIG_JPATH_MAX], ip[CONFIG_JPATH_MAX];
	char		 got[CONFIG_QUOTE_MAX];
	const json_t	*v, *item;
	size_t		 i;

	if ((v = json_object_get(obj, "requestRules")) == NULL)
		return;
	cfg_jpath_key(p, sizeof(p), base, "requestRules");
	if (!json_is_array(v)) {
		cfg_describe(got, sizeof(got), v);
		cfg_err(ctx, p, "expected an array of rules objects and "
		    "recipe names, got %s", got);
		return;
	}
	json_array_foreach(v, i, item) {
		cfg_jpath_index(ip, sizeof(ip), p, i);
		if (json_is_string(item))
			req_recipe(ctx, ip, json_string_value(item),
			    json_string_length(item), conf);
		else if (json_is_object(item))
			req_entry(ctx, ip, item, conf);
		else {
			cfg_describe(got, sizeof(got), item);
			cfg_err(ctx, ip, "expected a rules object or a recipe "
			    "name, got %s", got);
		}
	}
}

static void
rules_free(struct req_rule *v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		free(v[i].method);
		free(v[i].path);
		free(v[i].text);
		free(v[i].source);
	}
}

void
reqrule_free(struct config *conf)
{
	size_t	 i;

	for (i = 0; i < conf->nreq_hosts; i++) {
		rules_free(conf->req_hosts[i].deny, conf->req_hosts[i].ndeny);
		free(conf->req_hosts[i].deny);
		rules_free(conf->req_hosts[i].allow,
		    conf->req_hosts[i].nallow);
		free(conf->req_hosts[i].allow);
		free(conf->req_hosts[i].source);
	}
	free(conf->req_hosts);
	conf->req_hosts = NULL;
	conf->nreq_hosts = 0;
}

int
config_has_request_rules(const struct config *conf, const struct host *h,
    uint16_t port)
{
	size_t	 i;

	for (i = 0; conf != NULL && i < conf->nreq_hosts; i++)
		if (pattern_match(&conf->req_hosts[i].host, h, port))
			return 1;
	return 0;
}

/*
 * One segment of a glob (no "/" in either), "*" any run of characters:
 * the classic walk that backs up to the last "*" only, linear enough.
 */
static int
glob_seg(const char *g, size_t gl, const char *s, size_t sl, int icase)
{
	size_t	 gi = 0, si = 0, star = (size_t)-1, mark = 0;
	int	 a, b;

	while (si < sl) {
		if (gi < gl && g[gi] == '*') {
			star = gi++;
			mark = si;
			continue;
		}
		if (gi < gl) {
			a = (unsigned char)g[gi];
			b = (unsigned char)s[si];
			if (icase) {
				a = tolower(a);
				b = tolower(b);
			}
			if (a == b) {
				gi++;
				si++;
				continue;
			}
		}
		if (star == (size_t)-1)
			return 0;
		gi = star + 1;
		si = ++mark;
	}
	while (gi < gl && g[gi] == '*')
		gi++;
	return gi == gl;
}

/*
 * Whether an absolute path matches an absolute glob, segment by segment:
 * a "**" segment takes any run of segments (none too), any other
 * segment one.  A row of booleans per glob segment (which path prefixes
 * the glob's first segments match) keeps it O(segments squared) however
 * many "**" there are.
 */
static int
glob_path(const char *glob, const char *path, int icase)
{
	const char	*gs[RULE_WILDCARDS_MAX + RULE_TEXT_MAX / 2], *ps, *e;
	size_t		 gl[sizeof(gs) / sizeof(*gs)], ng = 0, np = 0, i, j;
	const char	**pv = NULL;
	size_t		 *pl = NULL;
	unsigned char	*cur = NULL, *next = NULL;
	int		 any, rc = 0;

	for (ps = glob + 1;; ps = e + 1) {
		if (ng == sizeof(gs) / sizeof(*gs))
			return 0;
		e = strchr(ps, '/');
		gs[ng] = ps;
		gl[ng++] = e != NULL ? (size_t)(e - ps) : strlen(ps);
		if (e == NULL)
			break;
	}
	for (ps = path, np = 0; *ps != '\0'; ps++)
		np += *ps == '/';
	if ((pv = calloc(np, sizeof(*pv))) == NULL ||
	    (pl = calloc(np, sizeof(*pl))) == NULL ||
	    (cur = calloc(np + 1, 1)) == NULL ||
	    (next = calloc(np + 1, 1)) == NULL)
		goto done;
	for (ps = path + 1, i = 0; i < np; ps = e + 1, i++) {
		e = strchr(ps, '/');
		pv[i] = ps;
		pl[i] = e != NULL ? (size_t)(e - ps) : strlen(ps);
		if (e == NULL)
			break;
	}
	/* cur[j]: the glob's first i segments match the path's first j */
	cur[0] = 1;
	for (i = 0; i < ng; i++) {
		memset(next, 0, np + 1);
		if (gl[i] == 2 && gs[i][0] == '*' && gs[i][1] == '*') {
			for (any = 0, j = 0; j <= np; j++) {
				any |= cur[j];
				next[j] = (unsigned char)any;
			}
		} else {
			for (j = 0; j < np; j++)
				if (cur[j] && glob_seg(gs[i], gl[i], pv[j],
				    pl[j], icase))
					next[j + 1] = 1;
		}
		memcpy(cur, next, np + 1);
	}
	rc = cur[np];
done:
	free(pv);
	free(pl);
	free(cur);
	free(next);
	return rc;
}

/*
 * path without each segment's ";params" and without a trailing "/"
 * (the root stays "/"): malloc'ed, NULL out of memory.
 */
static char *
path_loose(const char *path)
{
	char *out;
	size_t i, o = 0;
	int param = 0;

	if ((out = malloc(strlen(path) + 1)) == NULL)
		return NULL;
	for (i = 0; path[i] != '\0'; i++) {
		if (path[i] == '/')
			param = 0;
		else if (path[i] == ';')
			param = 1;
		if (!param)
			out[o++] = path[i];
	}
	while (o > 1 && out[o - 1] == '/')
		o--;
	out[o] = '\0';
	return out;
}

/* Whether rule r names method and path (icase: a deny rule). */
static int
rule_matches(const struct req_rule *r, const char *method, const char *path,
    int icase)
{
	if (!(r->method[0] == '*' && r->method[1] == '\0') &&
	    (icase ? strcasecmp(r->method, method) : strcmp(r->method,
	    method)) != 0)
		return 0;
	return glob_path(r->path, path, icase);
}

enum req_verdict
config_request_rule(const struct config *conf, const struct host *h,
    uint16_t port, const char *method, const char *path,
    const struct req_rule **matched, const struct req_host **entry)
{
	const struct req_host	*e, *first = NULL, *allowed_by = NULL;
	const struct req_host	*unmatched_deny = NULL;
	const struct req_rule	*allow_rule = NULL;
	size_t			 i, j;
	int			 allowed;
	char			*loose;

	*matched = NULL;
	*entry = NULL;
	/*
	 * A deny rule also matches the path as a lenient server reads it:
	 * without ";params" (servlet containers drop them) and without a
	 * trailing "/" (routers that are not strict about it).  Out of
	 * memory: the request is refused.
	 */
	if ((loose = path_loose(path)) == NULL)
		return REQ_DENY;
	/*
	 * Every entry for the host has its say: a deny anywhere refuses, and
	 * each entry that denies the unmatched must have allowed the
	 * request by a rule of its own.
	 */
	for (i = 0; conf != NULL && i < conf->nreq_hosts; i++) {
		e = &conf->req_hosts[i];
		if (!pattern_match(&e->host, h, port))
			continue;
		if (first == NULL)
			first = e;
		for (j = 0; j < e->ndeny; j++)
			if (rule_matches(&e->deny[j], method, path, 1) ||
			    rule_matches(&e->deny[j], method, loose, 1)) {
				*matched = &e->deny[j];
				*entry = e;
				free(loose);
				return REQ_DENY;
			}
		allowed = 0;
		for (j = 0; j < e->nallow && !allowed; j++)
			if (rule_matches(&e->allow[j], method, path, 0)) {
				allowed = 1;
				if (allow_rule == NULL) {
					allow_rule = &e->allow[j];
					allowed_by = e;
				}
			}
		if (!allowed && e->unmatched == REQ_UNMATCHED_DENY &&
		    unmatched_deny == NULL)
			unmatched_deny = e;
	}
	free(loose);
	if (first == NULL)
		return REQ_NO_RULES;
	if (unmatched_deny != NULL) {
		*entry = unmatched_deny;
		return REQ_DENY;
	}
	if (allow_rule != NULL) {
		*matched = allow_rule;
		*entry = allowed_by;
		return REQ_ALLOW;
	}
	*entry = first;
	return REQ_UNMATCHED;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~" */
static int
unreserved(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	    c == '~';
}

/*
 * Strict UTF-8 (RFC 3629): no overlong forms, surrogates or values past
 * U+10FFFF.  An overlong "/" (C0 AF) is a path separator to decoders
 * that are not strict.
 */
static int
utf8_valid(const unsigned char *s, size_t n)
{
	size_t	 i = 0, k, need;
	unsigned c;

	while (i < n) {
		c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3;
		else
			return 0;
		if (i + need >= n)
			return 0;
		for (k = 1; k <= need; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
		if ((c == 0xe0 && s[i + 1] < 0xa0) ||
		    (c == 0xed && s[i + 1] > 0x9f) ||
		    (c == 0xf0 && s[i + 1] < 0x90) ||
		    (c == 0xf4 && s[i + 1] > 0x8f))
			return 0;
		i += need + 1;
	}
	return 1;
}

int
request_path_canon(const char *target, size_t len, char *out, size_t outlen,
    const char **errstr)
{
	static const char	 hex[] = "0123456789ABCDEF";
	unsigned char		*raw = NULL;
	size_t			 i, o = 0, r = 0, seg, n;
	int			 c, hi, lo, rc = -1;

	*errstr = NULL;
	if (outlen > 0)
		out[0] = '\0';
	if (outlen == 0 || len > REQ_PATH_MAX) {
		*errstr = "request target too long";
		return -1;
	}
	if (len == 0 || target[0] != '/') {
		*errstr = "not an origin-form request target (it does not "
		    "start with \"/\")";
		return -1;
	}
	/* The fully decoded bytes, for the UTF-8 check. */
	if ((raw = malloc(len + 1)) == NULL) {
		*errstr = "out of memory";
		return -1;
	}
	for (i = 0; i < len && target[i] != '?'; i++) {
		c = (unsigned char)target[i];
		if (c == '\0') {
			*errstr = "a NUL byte in the request target";
			goto done;
		}
		if (c < 0x20 || c == 0x7f) {
			*errstr = "a control character in the request target";
			goto done;
		}
		if (c == '\\') {
			*errstr = "a backslash in the path (some servers read "
			    "it as \"/\")";
			goto done;
		}
		if (c == '#') {
			*errstr = "a fragment (\"#\") in the request target";
			goto done;
		}
		if (c == ' ') {
			*errstr = "a space in the request target";
			goto done;
		}
		if (c != '%') {
			if (o + 1 >= outlen)
				goto toolong;
			out[o++] = (char)c;
			raw[r++] = (unsigned char)c;
			continue;
		}
		if (i + 2 >= len) {
			*errstr = "a \"%\" not followed by two hex digits";
			goto done;
		}
		if ((hi = hexval((unsigned char)target[i + 1])) == -1 ||
		    (lo = hexval((unsigned char)target[i + 2])) == -1) {
			*errstr = "a \"%\" not followed by two hex digits";
			goto done;
		}
		c = hi << 4 | lo;
		i += 2;
		if (c == 0) {
			*errstr = "an encoded NUL (%00) in the path";
			goto done;
		}
		if (c < 0x20 || c == 0x7f) {
			*errstr = "an encoded control character in the path";
			goto done;
		}
		if (c == '/' || c == '\\') {
			*errstr = "an encoded \"/\" or \"\\\" in the path "
			    "(servers differ on whether it separates "
			    "segments)";
			goto done;
		}
		if (c == '.') {
			*errstr = "an encoded \".\" in the path (\"%2e%2e\" is "
			    "\"..\" to some servers)";
			goto done;
		}
		raw[r++] = (unsigned char)c;
		if (unreserved(c)) {
			if (o + 1 >= outlen)
				goto toolong;
			out[o++] = (char)c;
		} else {
			if (o + 3 >= outlen)
				goto toolong;
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	if (!utf8_valid(raw, r)) {
		*errstr = "the path is not valid UTF-8 (raw or %-encoded)";
		goto done;
	}
	/*
	 * Segments: none empty but the last ("//" is "/" to many servers),
	 * none "." or "..", also with ";params" after them ("..;" is ".." to
	 * Tomcat, which drops the parameters).
	 */
	for (seg = 1; seg <= o; seg += n + 1) {
		n = strcspn(out + seg, "/");
		if (n == 0 && seg + n < o) {
			*errstr = "an empty segment (\"//\") in the path";
			goto done;
		}
		c = (int)strcspn(out + seg, ";/");
		if ((c == 1 && out[seg] == '.') ||
		    (c == 2 && out[seg] == '.' && out[seg + 1] == '.')) {
			*errstr = "a dot segment (\".\" or \"..\") in the path";
			goto done;
		}
	}
	rc = 0;
	goto done;
toolong:
	*errstr = "request target too long";
done:
	if (rc == -1 && outlen > 0)
		out[0] = '\0';
	free(raw);
	return rc;
}
