/*
 * network.requestRules (policy/reqrule.c): request_path_canon, the one
 * spelling rules and requests are compared in, refuses every target a
 * server could read as another path; the rules' parser and its errors;
 * recipe files by path and by name; and config_request_rule's verdicts
 * (deny rules case-insensitive, allow rules exact, "*" within a segment,
 * "**" across, every matching entry intersected).
 */

#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/policy.h"

#define NAME	"rr.json"
#define TLS	"\"tlsTerminate\": {}"

static struct config *load(const char *, struct config_errors *);
static int	 has_line(const struct config_errors *, const char *,
		    const char *);
static void	 write_file(const char *, const char *);
static enum req_verdict rule(const struct config *, const char *, uint16_t,
		    const char *, const char *, const char **);

/* One target: canonical form, or NULL and a piece of the error. */
struct canon_case {
	const char	*in;
	const char	*out;
	const char	*err;
};

static const struct canon_case canon_cases[] = {
	{ "/", "/", NULL },
	{ "/a/b", "/a/b", NULL },
	{ "/a/b/", "/a/b/", NULL },
	{ "/a/b?x=1&y=/../z", "/a/b", NULL },
	{ "/a/b?", "/a/b", NULL },
	/* unreserved decoded, the rest kept, hex in upper case */
	{ "/x/git-receive-p%61ck", "/x/git-receive-pack", NULL },
	{ "/%41%7a%30%2D%5f%7E", "/Az0-_~", NULL },
	{ "/a%20b", "/a%20b", NULL },
	{ "/a%3fb", "/a%3Fb", NULL },
	{ "/a%3Bb", "/a%3Bb", NULL },
	{ "/caf%C3%A9", "/caf%C3%A9", NULL },
	{ "/caf\xc3\xa9", "/caf\xc3\xa9", NULL },
	{ "/a/.b/c..d/...", "/a/.b/c..d/...", NULL },
	{ "/a;p=1/b", "/a;p=1/b", NULL },
	/* not origin-form */
	{ "", NULL, "origin-form" },
	{ "*", NULL, "origin-form" },
	{ "http://a.example/x", NULL, "origin-form" },
	{ "a/b", NULL, "origin-form" },
	{ "?x", NULL, "origin-form" },
	/* dot segments, literal or encoded */
	{ "/a/./b", NULL, "dot segment" },
	{ "/a/../b", NULL, "dot segment" },
	{ "/..", NULL, "dot segment" },
	{ "/a/.", NULL, "dot segment" },
	{ "/a/..", NULL, "dot segment" },
	{ "/a/..;/b", NULL, "dot segment" },
	{ "/a/.;x/b", NULL, "dot segment" },
	{ "/a/%2e%2e/b", NULL, "encoded \".\"" },
	{ "/a/%2E%2E/b", NULL, "encoded \".\"" },
	{ "/a/.%2e/b", NULL, "encoded \".\"" },
	{ "/a/%2e/b", NULL, "encoded \".\"" },
	{ "/a%2eb", NULL, "encoded \".\"" },
	/* separators */
	{ "//a", NULL, "\"//\"" },
	{ "/a//b", NULL, "\"//\"" },
	{ "/a/b//", NULL, "\"//\"" },
	{ "/a\\b", NULL, "backslash" },
	{ "/a/..\\b", NULL, "backslash" },
	{ "/a%2fb", NULL, "encoded \"/\"" },
	{ "/a%2Fb", NULL, "encoded \"/\"" },
	{ "/a%5cb", NULL, "encoded \"/\" or \"\\\"" },
	{ "/a%5C..%5Cb", NULL, "encoded \"/\" or \"\\\"" },
	/* control characters, NUL */
	{ "/a%00b", NULL, "NUL" },
	{ "/a%0ab", NULL, "control" },
	{ "/a%0Db", NULL, "control" },
	{ "/a%7fb", NULL, "control" },
	{ "/a\tb", NULL, "control" },
	{ "/a\x7f", NULL, "control" },
	{ "/a b", NULL, "space" },
	{ "/a#b", NULL, "fragment" },
	/* %-garbage */
	{ "/a%", NULL, "two hex digits" },
	{ "/a%4", NULL, "two hex digits" },
	{ "/a%g1", NULL, "two hex digits" },
	{ "/a%%41", NULL, "two hex digits" },
	{ "/a%-1", NULL, "two hex digits" },
	{ "/a% 1", NULL, "two hex digits" },
	/* not UTF-8: an overlong "/" or ".", a lone byte, a surrogate */
	{ "/a%C0%AFb", NULL, "UTF-8" },
	{ "/a%c0%ae%c0%ae/b", NULL, "UTF-8" },
	{ "/a\xc0\xaf", NULL, "UTF-8" },
	{ "/a%E0%80%AF", NULL, "UTF-8" },
	{ "/a%ff", NULL, "UTF-8" },
	{ "/a%C3", NULL, "UTF-8" },
	{ "/a%ED%A0%80", NULL, "UTF-8" },
};

static void
test_canon(void **state)
{
	char		 out[256];
	const char	*err;
	size_t		 i;
	int		 rc;

	(void)state;
	for (i = 0; i < sizeof(canon_cases) / sizeof(*canon_cases); i++) {
		const struct canon_case *c = &canon_cases[i];

		rc = request_path_canon(c->in, strlen(c->in), out,
		    sizeof(out), &err);
		if (c->out != NULL && (rc != 0 || strcmp(out, c->out) != 0))
			fail_msg("%s: want %s, got rc %d \"%s\" (%s)", c->in,
			    c->out, rc, out, err != NULL ? err : "");
		if (c->out == NULL && (rc != -1 || err == NULL ||
		    strstr(err, c->err) == NULL || out[0] != '\0'))
			fail_msg("%s: want an error with %s, got rc %d (%s)",
			    c->in, c->err, rc, err != NULL ? err : "none");
	}
	/* A NUL byte inside the given length. */
	assert_int_equal(request_path_canon("/a\0b", 4, out, sizeof(out),
	    &err), -1);
	assert_non_null(strstr(err, "NUL"));
	/* The length bounds the target, not its NUL. */
	assert_int_equal(request_path_canon("/ab/../c", 3, out, sizeof(out),
	    &err), 0);
	assert_string_equal(out, "/ab");
	/* Too long for out: refused, never cut. */
	assert_int_equal(request_path_canon("/abcdef", 7, out, 7, &err), -1);
	assert_non_null(strstr(err, "too long"));
	assert_int_equal(request_path_canon("/abcdef", 7, out, 8, &err), 0);
	assert_int_equal(request_path_canon("/a%20", 5, out, 5, &err), -1);
}

static struct config *
load(const char *json, struct config_errors *errs)
{
	return config_load_buffer(json, strlen(json), NAME, errs);
}

/* Whether some line has the path and the text (both may be NULL). */
static int
has_line(const struct config_errors *errs, const char *path,
    const char *want)
{
	size_t	 i;

	for (i = 0; i < errs->n; i++)
		if ((path == NULL || strstr(errs->msg[i], path) != NULL) &&
		    (want == NULL || strstr(errs->msg[i], want) != NULL))
			return 1;
	for (i = 0; i < errs->n; i++)
		print_message("    error: %s\n", errs->msg[i]);
	return 0;
}

/* A config that must not load: one error at path containing want. */
struct bad_case {
	const char	*json;
	const char	*path;
	const char	*want;
};

#define NET(x)	"{\"network\": {\"allowedDomains\": [\"a.example\"], " TLS \
	", \"requestRules\": " x "}}"

static const struct bad_case bad_cases[] = {
	{ NET("{}"), "$.network.requestRules",
	    "expected an array of rules objects" },
	/* A path with an escape or non-ASCII: never shown raw. */
	{ NET("[\"/tmp/\\u001b[2Jrules.json\"]"),
	    "$.network.requestRules[0]", "\"/tmp/\\u001b[2Jrules.json\": "
	    "a rules file's path is named in refusals" },
	{ NET("[\"/tmp/r\\u00e9gles.json\"]"), "$.network.requestRules[0]",
	    "must be printable ASCII" },
	{ NET("[1]"), "$.network.requestRules[0]",
	    "expected a rules object or a recipe name" },
	{ NET("[{\"deny\": [\"GET /\"]}]"), "$.network.requestRules[0].host",
	    "missing" },
	{ NET("[{\"host\": \"*\", \"deny\": [\"GET /\"]}]"),
	    "$.network.requestRules[0].host", "invalid pattern" },
	{ NET("[{\"host\": \"https://a.example\", \"deny\": [\"GET /\"]}]"),
	    "$.network.requestRules[0].host", "not a URL" },
	{ NET("[{\"host\": \"a.example\"}]"), "$.network.requestRules[0]",
	    "names no rule" },
	{ NET("[{\"host\": \"a.example\", \"nope\": 1}]"),
	    "$.network.requestRules[0].nope", "unknown key" },
	{ NET("[{\"host\": \"a.example\", \"unmatched\": \"maybe\"}]"),
	    "$.network.requestRules[0].unmatched",
	    "expected \"allow\" or \"deny\"" },
	{ NET("[{\"host\": \"a.example\", \"deny\": \"GET /\"}]"),
	    "$.network.requestRules[0].deny", "expected an array" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [1]}]"),
	    "$.network.requestRules[0].deny[0]", "expected a \"METHOD /path\"" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [\"/x\"]}]"),
	    "$.network.requestRules[0].deny[0]", "expected \"METHOD /path\"" },
	{ NET("[{\"host\": \"a.example\", \"allow\": [\"GET x\"]}]"),
	    "$.network.requestRules[0].allow[0]", "starts with \"/\"" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [\"G(T /x\"]}]"),
	    "$.network.requestRules[0].deny[0]", "the method is a token" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [\"GE* /x\"]}]"),
	    "$.network.requestRules[0].deny[0]", "\"*\" alone" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [\" /x\"]}]"),
	    "$.network.requestRules[0].deny[0]", "the method is a token" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [\"GET  /x\"]}]"),
	    "$.network.requestRules[0].deny[0]", "starts with \"/\"" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [\"GET /x y\"]}]"),
	    "$.network.requestRules[0].deny[0]", "whitespace" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [\"GET /x?a=1\"]}]"),
	    "$.network.requestRules[0].deny[0]", "without query" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [\"GET /a/../b\"]}]"),
	    "$.network.requestRules[0].deny[0]", "dot segment" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [\"GET /a//b\"]}]"),
	    "$.network.requestRules[0].deny[0]", "\"//\"" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [\"GET /p%61ck\"]}]"),
	    "$.network.requestRules[0].deny[0]", "not %-encoded" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [\"GET /a%3fb\"]}]"),
	    "$.network.requestRules[0].deny[0]", "upper case" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [\"GET /a**\"]}]"),
	    "$.network.requestRules[0].deny[0]", "whole segments" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [\"GET /***\"]}]"),
	    "$.network.requestRules[0].deny[0]", "whole segments" },
	{ NET("[{\"host\": \"a.example\", \"deny\": [\"GET /*/*/*/*/*/*/*/*/"
	    "*/*/*/*/*/*/*/*/*\"]}]"),
	    "$.network.requestRules[0].deny[0]", "too many wildcards" },
	/* recipes by name: only [A-Za-z0-9_-] */
	{ NET("[\"../etc/passwd\"]"), "$.network.requestRules[0]",
	    "recipe name" },
	{ NET("[\"a.json\"]"), "$.network.requestRules[0]", "recipe name" },
	{ NET("[\"\"]"), "$.network.requestRules[0]", "recipe name" },
	{ NET("[\"/nonexistent/recipe.json\"]"), "$.network.requestRules[0]",
	    "cannot open /nonexistent/recipe.json" },
	/* rules need termination, of that host */
	{ "{\"network\": {\"requestRules\": [{\"host\": \"a.example\", "
	    "\"deny\": [\"GET /\"]}]}}", "$.network.requestRules[0]",
	    "need network.tlsTerminate" },
	{ "{\"network\": {\"tlsTerminate\": {\"excludeDomains\": "
	    "[\"*.example.com\"]}, \"requestRules\": [{\"host\": "
	    "\"api.example.com\", \"deny\": [\"GET /\"]}]}}",
	    "$.network.requestRules[0]", "excludeDomains" },
	{ "{\"network\": {\"tlsTerminate\": {\"excludeDomains\": "
	    "[\"api.example.com\"]}, \"requestRules\": [{\"host\": "
	    "\"*.example.com\", \"deny\": [\"GET /\"]}]}}",
	    "$.network.requestRules[0]", "cannot be checked" },
};

static void
test_bad(void **state)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*c;
	size_t			 i;

	(void)state;
	policy_rules_dir("/nonexistent-rules");
	for (i = 0; i < sizeof(bad_cases) / sizeof(*bad_cases); i++) {
		c = load(bad_cases[i].json, &errs);
		if (c != NULL || !has_line(&errs, bad_cases[i].path,
		    bad_cases[i].want))
			fail_msg("%s\nwant an error at %s: %s",
			    bad_cases[i].json, bad_cases[i].path,
			    bad_cases[i].want);
		config_free(c);
		config_errors_clear(&errs);
	}
	/* A name in a folder without the recipe: the item and the file. */
	assert_null(load(NET("[\"git-readonly\"]"), &errs));
	assert_true(has_line(&errs, NAME ": $.network.requestRules[0]",
	    "recipe \"git-readonly\": cannot open "
	    "/nonexistent-rules/git-readonly.json"));
	config_errors_clear(&errs);
	policy_rules_dir(NULL);
}

static void
write_file(const char *path, const char *text)
{
	FILE	*f;

	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static enum req_verdict
rule(const struct config *c, const char *host, uint16_t port,
    const char *method, const char *path, const char **text)
{
	const struct req_rule	*m;
	const struct req_host	*e;
	struct host		 h;
	const char		*err;
	enum req_verdict	 v;

	assert_int_equal(host_canon(host, strlen(host), &h, &err), 0);
	v = config_request_rule(c, &h, port, method, path, &m, &e);
	*text = m != NULL ? m->text : NULL;
	if (v == REQ_NO_RULES)
		assert_null(e);
	else
		assert_non_null(e);
	return v;
}

/* Recipes: by absolute path and by name, their sources, their errors. */
static void
test_recipes(void **state)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*c;
	char			 dir[] = "/tmp/test_reqrule.XXXXXX";
	char			 rules[64], path[128], json[512];
	const char		*t;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(rules, sizeof(rules), "%s/rules", dir);
	assert_int_equal(mkdir(rules, 0700), 0);
	snprintf(path, sizeof(path), "%s/git-ro.json", rules);
	write_file(path, "{\"description\": \"no pushes\", \"requestRules\": "
	    "[{\"host\": \"git.example\", \"deny\": "
	    "[\"POST /*/*/git-receive-pack\"]}]}");
	policy_rules_dir(rules);

	/* By name. */
	snprintf(json, sizeof(json), NET("[\"git-ro\", {\"host\": "
	    "\"a.example\", \"deny\": [\"DELETE /**\"]}]"));
	c = load(json, &errs);
	assert_non_null(c);
	assert_int_equal(c->nreq_hosts, 2);
	assert_int_equal(c->req_hosts[0].ndeny, 1);
	snprintf(json, sizeof(json), "%s: $.requestRules[0].deny[0]", path);
	assert_string_equal(c->req_hosts[0].deny[0].source, json);
	assert_string_equal(c->req_hosts[1].deny[0].source,
	    NAME ": $.network.requestRules[1].deny[0]");
	assert_int_equal(rule(c, "git.example", 443, "POST",
	    "/o/r/git-receive-pack", &t), REQ_DENY);
	assert_string_equal(t, "POST /*/*/git-receive-pack");
	assert_int_equal(rule(c, "git.example", 443, "POST",
	    "/o/r/git-upload-pack", &t), REQ_UNMATCHED);
	config_free(c);

	/* By absolute path. */
	snprintf(json, sizeof(json), NET("[\"%s\"]"), path);
	assert_non_null(c = load(json, &errs));
	assert_int_equal(c->nreq_hosts, 1);
	config_free(c);

	/* Errors inside a recipe name the recipe's file and path. */
	snprintf(path, sizeof(path), "%s/bad.json", rules);
	write_file(path, "{\"requestRules\": [{\"host\": \"x.example\", "
	    "\"deny\": [\"GET nope\"]}, \"git-ro\"]}");
	assert_null(load(NET("[\"bad\"]"), &errs));
	snprintf(json, sizeof(json), "%s: $.requestRules[0].deny[0]", path);
	assert_true(has_line(&errs, json, "starts with \"/\""));
	snprintf(json, sizeof(json), "%s: $.requestRules[1]", path);
	assert_true(has_line(&errs, json, "names no other recipe"));
	assert_true(has_line(&errs, NAME ": $.network.requestRules[0]",
	    "recipe \"bad\""));
	config_errors_clear(&errs);
	write_file(path, "{\"rules\": []}");
	assert_null(load(NET("[\"bad\"]"), &errs));
	assert_true(has_line(&errs, "$.rules", "unknown key"));
	config_errors_clear(&errs);
	write_file(path, "{\"requestRules\": {}}");
	assert_null(load(NET("[\"bad\"]"), &errs));
	assert_true(has_line(&errs, "$.requestRules", "expected an array"));
	config_errors_clear(&errs);
	write_file(path, "not json");
	assert_null(load(NET("[\"bad\"]"), &errs));
	assert_true(has_line(&errs, path, "invalid JSON"));
	config_errors_clear(&errs);
	/* A recipe's host needs termination too. */
	snprintf(json, sizeof(json), "{\"network\": {\"requestRules\": "
	    "[\"git-ro\"]}}");
	assert_null(load(json, &errs));
	assert_true(has_line(&errs, "git-ro.json: $.requestRules[0]",
	    "need network.tlsTerminate"));
	config_errors_clear(&errs);

	unlink(path);
	snprintf(path, sizeof(path), "%s/git-ro.json", rules);
	unlink(path);
	rmdir(rules);
	rmdir(dir);
	policy_rules_dir(NULL);
}

/* A request to a host of a shipped recipe and the verdict it gets. */
struct shipped_case {
	const char	*host;
	const char	*method;
	const char	*path;
	enum req_verdict want;
	const char	*rule;		/* the deciding rule's text, or NULL */
};

static const struct shipped_case shipped_cases[] = {
	/* git-readonly: fetch and clone pass, push and LFS locks do not. */
	{ "github.com", "POST", "/o/r.git/git-receive-pack", REQ_DENY,
	    "POST /**/git-receive-pack" },
	{ "github.com", "POST", "/o/r/git-receive-pack", REQ_DENY,
	    "POST /**/git-receive-pack" },
	{ "gitlab.com", "POST", "/group/sub/r.git/git-receive-pack", REQ_DENY,
	    "POST /**/git-receive-pack" },
	{ "codeberg.org", "post", "/o/r.git/GIT-RECEIVE-PACK", REQ_DENY,
	    "POST /**/git-receive-pack" },
	{ "bitbucket.org", "POST", "/o/r.git/info/lfs/locks", REQ_DENY,
	    "POST /**/info/lfs/locks" },
	{ "github.com", "POST", "/o/r.git/info/lfs/locks/verify", REQ_DENY,
	    "POST /**/info/lfs/locks/**" },
	{ "github.com", "POST", "/o/r.git/git-upload-pack", REQ_UNMATCHED,
	    NULL },
	{ "github.com", "GET", "/o/r.git/info/refs", REQ_UNMATCHED, NULL },
	{ "github.com", "POST", "/o/r.git/info/lfs/objects/batch",
	    REQ_UNMATCHED, NULL },
	/* npm-no-publish: installs and audits, no write of any kind. */
	{ "registry.npmjs.org", "GET", "/left-pad", REQ_ALLOW, "GET /**" },
	{ "registry.npmjs.org", "GET", "/left-pad/-/left-pad-1.3.0.tgz",
	    REQ_ALLOW, "GET /**" },
	{ "registry.npmjs.org", "GET", "/@scope%2Fpkg", REQ_ALLOW,
	    "GET /**" },
	{ "registry.npmjs.org", "POST", "/-/npm/v1/security/advisories/bulk",
	    REQ_ALLOW, "POST /-/npm/v1/security/**" },
	{ "registry.npmjs.org", "PUT", "/left-pad", REQ_DENY, "PUT /**" },
	{ "registry.npmjs.org", "PUT", "/@scope%2Fpkg", REQ_DENY, "PUT /**" },
	{ "registry.npmjs.org", "DELETE", "/left-pad/-rev/3-abc", REQ_DENY,
	    "DELETE /**" },
	{ "registry.npmjs.org", "PUT", "/-/package/left-pad/dist-tags/next",
	    REQ_DENY, "PUT /**" },
	{ "registry.npmjs.org", "POST", "/-/npm/v1/tokens", REQ_DENY,
	    "POST /-/npm/v1/tokens" },
	{ "registry.npmjs.org", "POST", "/-/v1/login", REQ_DENY,
	    "POST /-/v1/login" },
	{ "registry.npmjs.org", "POST", "/-/package/left-pad/access",
	    REQ_DENY, "POST /-/package/**" },
	{ "registry.npmjs.org", "POST",
	    "/-/npm/v1/oidc/token/exchange/package/left-pad", REQ_DENY,
	    "POST /-/npm/v1/oidc/**" },
	{ "registry.npmjs.org", "POST", "/-/something/new", REQ_DENY, NULL },
	{ "registry.yarnpkg.com", "PUT", "/left-pad", REQ_DENY, "PUT /**" },
	/* pypi-no-upload: reads only. */
	{ "upload.pypi.org", "POST", "/legacy/", REQ_DENY, "POST /**" },
	{ "test.pypi.org", "POST", "/legacy/", REQ_DENY, "POST /**" },
	{ "pypi.org", "POST", "/_/oidc/mint-token", REQ_DENY, "POST /**" },
	{ "pypi.org", "GET", "/simple/requests/", REQ_UNMATCHED, NULL },
	/* registry-pull-only: the distribution API's reads only. */
	{ "ghcr.io", "POST", "/v2/o/img/blobs/uploads/", REQ_DENY,
	    "POST /v2/**" },
	{ "registry-1.docker.io", "PATCH", "/v2/library/x/blobs/uploads/u1",
	    REQ_DENY, "PATCH /v2/**" },
	{ "quay.io", "PUT", "/v2/o/img/manifests/latest", REQ_DENY,
	    "PUT /v2/**" },
	{ "europe-docker.pkg.dev", "DELETE", "/v2/p/r/img/manifests/sha256:1",
	    REQ_DENY, "DELETE /v2/**" },
	{ "ghcr.io", "GET", "/v2/o/img/manifests/latest", REQ_UNMATCHED,
	    NULL },
	{ "ghcr.io", "HEAD", "/v2/o/img/blobs/sha256:1", REQ_UNMATCHED, NULL },
	{ "ghcr.io", "GET", "/token", REQ_UNMATCHED, NULL },
};

/* The recipes shipped in conf/rules load (found from build/tests/). */
static void
test_shipped(void **state)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*c;
	const struct shipped_case *k;
	const char		*t;
	size_t			 i;

	(void)state;
	policy_rules_dir(NULL);
	c = load("{\"network\": {\"allowedDomains\": [\"github.com\"], " TLS
	    ", \"requestRules\": [\"git-readonly\", \"npm-no-publish\", "
	    "\"pypi-no-upload\", \"registry-pull-only\"]}}", &errs);
	if (c == NULL)
		has_line(&errs, NULL, "");
	assert_non_null(c);
	for (i = 0; i < sizeof(shipped_cases) / sizeof(*shipped_cases); i++) {
		k = &shipped_cases[i];
		if (rule(c, k->host, 443, k->method, k->path, &t) != k->want ||
		    (k->rule == NULL) != (t == NULL) ||
		    (k->rule != NULL && strcmp(k->rule, t) != 0))
			fail_msg("%s %s %s: verdict %d rule %s, want %d %s",
			    k->host, k->method, k->path,
			    rule(c, k->host, 443, k->method, k->path, &t),
			    t != NULL ? t : "(none)", k->want,
			    k->rule != NULL ? k->rule : "(none)");
	}
	config_free(c);
}

/* One request and the verdict the rules give it. */
struct verdict_case {
	const char	*host;
	uint16_t	 port;
	const char	*method;
	const char	*path;
	enum req_verdict want;
	const char	*rule;	/* the deciding rule's text, or NULL */
};

static const char verdict_json[] = "{\"network\": {" TLS ", "
    "\"requestRules\": ["
    /* 0: deny, with globs */
    "{\"host\": \"git.example\", \"deny\": [\"POST /*/*/git-receive-pack\", "
    "\"* /admin/**\", \"DELETE /repos/*\"]},"
    /* 1: allow-list with unmatched deny */
    "{\"host\": \"api.example\", \"allow\": [\"GET /v1/**\", "
    "\"POST /v1/items\", \"GET /a/**/z\"], \"unmatched\": \"deny\"},"
    /* 2, 3: two entries for one host: both have their say */
    "{\"host\": \"*.multi.example\", \"allow\": [\"GET /**\"], "
    "\"unmatched\": \"deny\"},"
    "{\"host\": \"x.multi.example\", \"deny\": [\"GET /secret/**\"], "
    "\"allow\": [\"POST /upload\"], \"unmatched\": \"deny\"},"
    /* 4: a port */
    "{\"host\": \"port.example:8443\", \"deny\": [\"* /**\"]},"
    /* 5: allow rules without unmatched: deny */
    "{\"host\": \"open.example\", \"allow\": [\"GET /x\"]}"
    "]}}";

static const struct verdict_case verdict_cases[] = {
	{ "other.example", 443, "GET", "/", REQ_NO_RULES, NULL },
	{ "git.example", 443, "POST", "/o/r/git-receive-pack", REQ_DENY,
	    "POST /*/*/git-receive-pack" },
	/* deny: method and path case-insensitive */
	{ "git.example", 443, "post", "/o/r/GIT-RECEIVE-PACK", REQ_DENY,
	    "POST /*/*/git-receive-pack" },
	{ "GIT.example", 443, "Post", "/O/R/git-receive-pack", REQ_DENY,
	    "POST /*/*/git-receive-pack" },
	/* "*" is one segment, not more, not none */
	{ "git.example", 443, "POST", "/o/git-receive-pack", REQ_UNMATCHED,
	    NULL },
	{ "git.example", 443, "POST", "/o/r/s/git-receive-pack",
	    REQ_UNMATCHED, NULL },
	{ "git.example", 443, "POST", "/o//git-receive-pack", REQ_DENY,
	    "POST /*/*/git-receive-pack" },
	{ "git.example", 443, "GET", "/o/r/git-receive-pack", REQ_UNMATCHED,
	    NULL },
	/* a deny rule sees past a trailing "/" and ";params" (lenient servers) */
	{ "git.example", 443, "POST", "/o/r/git-receive-pack/", REQ_DENY,
	    "POST /*/*/git-receive-pack" },
	{ "git.example", 443, "POST", "/o/r;v=1/git-receive-pack;x", REQ_DENY,
	    "POST /*/*/git-receive-pack" },
	/* "**": any run of segments, none too */
	{ "git.example", 443, "GET", "/admin", REQ_DENY, "* /admin/**" },
	{ "git.example", 443, "PUT", "/admin/", REQ_DENY, "* /admin/**" },
	{ "git.example", 443, "GET", "/admin/a/b/c", REQ_DENY, "* /admin/**" },
	{ "git.example", 443, "GET", "/administrator", REQ_UNMATCHED, NULL },
	{ "git.example", 443, "DELETE", "/repos/x", REQ_DENY,
	    "DELETE /repos/*" },
	{ "git.example", 443, "DELETE", "/repos/x/y", REQ_UNMATCHED, NULL },
	/* allow: exact; unmatched deny */
	{ "api.example", 443, "GET", "/v1/items/3", REQ_ALLOW, "GET /v1/**" },
	{ "api.example", 443, "GET", "/v1", REQ_ALLOW, "GET /v1/**" },
	{ "api.example", 443, "get", "/v1/items", REQ_DENY, NULL },
	{ "api.example", 443, "GET", "/V1/items", REQ_DENY, NULL },
	{ "api.example", 443, "POST", "/v1/items", REQ_ALLOW,
	    "POST /v1/items" },
	{ "api.example", 443, "POST", "/v1/items/1", REQ_DENY, NULL },
	{ "api.example", 443, "GET", "/a/z", REQ_ALLOW, "GET /a/**/z" },
	{ "api.example", 443, "GET", "/a/b/c/z", REQ_ALLOW, "GET /a/**/z" },
	{ "api.example", 443, "GET", "/a/b/c/z/d", REQ_DENY, NULL },
	{ "api.example", 443, "GET", "/az", REQ_DENY, NULL },
	/* every matching entry has its say */
	{ "y.multi.example", 443, "GET", "/secret/a", REQ_ALLOW, "GET /**" },
	{ "x.multi.example", 443, "GET", "/secret/a", REQ_DENY,
	    "GET /secret/**" },
	{ "x.multi.example", 443, "GET", "/public", REQ_DENY, NULL },
	{ "x.multi.example", 443, "POST", "/upload", REQ_DENY, NULL },
	{ "y.multi.example", 443, "POST", "/upload", REQ_DENY, NULL },
	/* ports */
	{ "port.example", 8443, "GET", "/", REQ_DENY, "* /**" },
	{ "port.example", 443, "GET", "/", REQ_NO_RULES, NULL },
	/* allow rules alone decide nothing else */
	{ "open.example", 443, "GET", "/x", REQ_ALLOW, "GET /x" },
	{ "open.example", 443, "GET", "/y", REQ_UNMATCHED, NULL },
};

static void
test_verdicts(void **state)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*c;
	struct host		 h;
	const char		*t, *err;
	enum req_verdict	 v;
	size_t			 i;

	(void)state;
	c = load(verdict_json, &errs);
	if (c == NULL)
		has_line(&errs, NULL, "");
	assert_non_null(c);
	for (i = 0; i < sizeof(verdict_cases) / sizeof(*verdict_cases); i++) {
		const struct verdict_case *vc = &verdict_cases[i];

		v = rule(c, vc->host, vc->port, vc->method, vc->path, &t);
		if (v != vc->want || (vc->rule == NULL) != (t == NULL) ||
		    (t != NULL && strcmp(t, vc->rule) != 0))
			fail_msg("case %zu %s:%u %s %s: verdict %d rule %s, "
			    "want %d %s", i, vc->host, vc->port, vc->method,
			    vc->path, v, t != NULL ? t : "-", vc->want,
			    vc->rule != NULL ? vc->rule : "-");
	}
	/* config_has_request_rules agrees. */
	assert_int_equal(host_canon("git.example", 11, &h, &err), 0);
	assert_true(config_has_request_rules(c, &h, 443));
	assert_int_equal(host_canon("b.example", 9, &h, &err), 0);
	assert_false(config_has_request_rules(c, &h, 443));
	assert_int_equal(host_canon("port.example", 12, &h, &err), 0);
	assert_true(config_has_request_rules(c, &h, 8443));
	assert_false(config_has_request_rules(c, &h, 443));
	/* The entries' sources. */
	assert_string_equal(c->req_hosts[1].source,
	    NAME ": $.network.requestRules[1]");
	assert_int_equal(c->req_hosts[1].unmatched, REQ_UNMATCHED_DENY);
	assert_int_equal(c->req_hosts[0].unmatched, REQ_UNMATCHED_ALLOW);
	config_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canon),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_recipes),
		cmocka_unit_test(test_shipped),
		cmocka_unit_test(test_verdicts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
