/*
 * network.tlsTerminate and credentials (policy/secrets.c): the defaults,
 * every error with its JSON path and message (srt's checks, and the keys
 * pisbx refuses: decode, maskClaims, awsPairs, sigv4, a masked AWS
 * secret), injectHosts within allowedDomains and outside excludeDomains,
 * and the runtime questions: config_tls_terminates and
 * config_cred_injects (which also asks the policy in force).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"

#define NAME	"s.json"

static struct config *load(const char *, struct config_errors *);
static int	 has_line(const struct config_errors *, const char *,
		    const char *);
static struct host hostof(const char *);

static struct config *
load(const char *json, struct config_errors *errs)
{
	return config_load_buffer(json, strlen(json), NAME, errs);
}

static int
has_line(const struct config_errors *errs, const char *path,
    const char *want)
{
	size_t	 i;

	for (i = 0; i < errs->n; i++)
		if ((path == NULL || strstr(errs->msg[i], path) != NULL) &&
		    strstr(errs->msg[i], want) != NULL)
			return 1;
	for (i = 0; i < errs->n; i++)
		print_message("    error: %s\n", errs->msg[i]);
	return 0;
}

static struct host
hostof(const char *s)
{
	struct host	 h;
	const char	*err;

	assert_int_equal(host_canon(s, strlen(s), &h, &err), 0);
	return h;
}

/* tlsTerminate {} and a masked variable: every default. */
static void
test_defaults(void **state)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*c;
	const struct cred_entry	*e;

	(void)state;
	assert_non_null(c = load("{}", &errs));
	assert_null(c->tls);
	assert_int_equal(c->creds.n, 0);
	assert_int_equal(c->nreq_hosts, 0);
	config_free(c);

	c = load("{\"network\": {\"allowedDomains\": [\"api.example.com\"], "
	    "\"tlsTerminate\": {}}, \"credentials\": {\"envVars\": [{\"name\": "
	    "\"TOK\", \"mode\": \"mask\"}], \"files\": [{\"path\": "
	    "\"/etc/tok\", \"mode\": \"deny\"}]}}", &errs);
	if (c == NULL)
		has_line(&errs, NULL, "");
	assert_non_null(c);
	assert_non_null(c->tls);
	assert_null(c->tls->ca_cert_path);
	assert_null(c->tls->ca_key_path);
	assert_int_equal(c->tls->nexclude, 0);
	assert_int_equal(c->tls->extra_ca.n, 0);
	assert_int_equal(c->tls->max_tunnels, TLS_MAX_TUNNELS_DEFAULT);
	assert_int_equal(c->tls->handshake_timeout_ms,
	    TLS_HANDSHAKE_TIMEOUT_DEFAULT);
	assert_string_equal(c->tls->source, NAME ": $.network.tlsTerminate");
	assert_int_equal(c->creds.n, 2);
	assert_int_equal(c->creds.allow_plaintext_inject, 0);
	e = &c->creds.v[0];
	assert_int_equal(e->kind, CRED_ENV);
	assert_string_equal(e->name, "TOK");
	assert_int_equal(e->mode, CRED_MASK);
	assert_null(e->extract);
	/* pisbx's default; srt's is warn */
	assert_int_equal(e->on_nomatch, CRED_NOMATCH_DENY);
	assert_int_equal(e->inject_set, 0);
	assert_int_equal(e->mask_duplicates, 0);
	assert_string_equal(e->source, NAME ": $.credentials.envVars[0]");
	e = &c->creds.v[1];
	assert_int_equal(e->kind, CRED_FILE);
	assert_string_equal(e->name, "/etc/tok");
	assert_int_equal(e->mode, CRED_DENY);
	assert_string_equal(e->source, NAME ": $.credentials.files[0]");
	config_free(c);
}

/* Every key given: stored as written (paths expanded). */
static void
test_full(void **state)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*c;
	const struct cred_entry	*e;
	char			 want[512];
	const char		*home;

	(void)state;
	setenv("HOME", "/home/tester", 1);
	home = "/home/tester";
	c = load("{\"network\": {\"allowedDomains\": [\"*.example.com:443\", "
	    "\"mtls.example.net\"], \"tlsTerminate\": {\"caCertPath\": "
	    "\"~/ca/cert.pem\", \"caKeyPath\": \"/etc/ca/key.pem\", "
	    "\"excludeDomains\": [\"mtls.example.net\"], \"extraCaCertPaths\": "
	    "[\"/etc/r1.pem\", \"~/r2.pem\"], \"maxTunnels\": 8, "
	    "\"handshakeTimeoutMs\": 100}}, \"credentials\": {"
	    "\"allowPlaintextInject\": true, \"envVars\": [{\"name\": \"DB\", "
	    "\"mode\": \"mask\", \"extract\": \"://[^:]+:([^@]+)@\", "
	    "\"onExtractNoMatch\": \"warn\", \"injectHosts\": "
	    "[\"db.example.com\", \"*.api.example.com\"]}, {\"name\": "
	    "\"AWS_SECRET_ACCESS_KEY\", \"mode\": \"deny\"}], \"files\": "
	    "[{\"path\": \"~/.netrc\", \"mode\": \"mask\", \"extract\": "
	    "\"password (\\\\S+)\", \"onExtractNoMatch\": \"error\", "
	    "\"maskDuplicates\": true}, {\"path\": \"~/.aws/**\", \"mode\": "
	    "\"deny\"}]}}", &errs);
	if (c == NULL)
		has_line(&errs, NULL, "");
	assert_non_null(c);
	snprintf(want, sizeof(want), "%s/ca/cert.pem", home);
	assert_string_equal(c->tls->ca_cert_path, want);
	assert_string_equal(c->tls->ca_key_path, "/etc/ca/key.pem");
	assert_int_equal(c->tls->nexclude, 1);
	assert_string_equal(c->tls->exclude[0].text, "mtls.example.net");
	assert_string_equal(c->tls->exclude[0].source,
	    NAME ": $.network.tlsTerminate.excludeDomains[0]");
	assert_int_equal(c->tls->extra_ca.n, 2);
	assert_string_equal(c->tls->extra_ca.v[0], "/etc/r1.pem");
	snprintf(want, sizeof(want), "%s/r2.pem", home);
	assert_string_equal(c->tls->extra_ca.v[1], want);
	assert_int_equal(c->tls->max_tunnels, 8);
	assert_int_equal(c->tls->handshake_timeout_ms, 100);
	assert_int_equal(c->creds.allow_plaintext_inject, 1);
	assert_int_equal(c->creds.n, 4);
	e = &c->creds.v[0];
	assert_string_equal(e->extract, "://[^:]+:([^@]+)@");
	assert_int_equal(e->on_nomatch, CRED_NOMATCH_WARN);
	assert_int_equal(e->inject_set, 1);
	assert_int_equal(e->ninject, 2);
	assert_string_equal(e->inject[1].text, "*.api.example.com");
	assert_int_equal(c->creds.v[1].mode, CRED_DENY);
	e = &c->creds.v[2];
	snprintf(want, sizeof(want), "%s/.netrc", home);
	assert_string_equal(e->name, want);
	assert_string_equal(e->extract, "password (\\S+)");
	assert_int_equal(e->on_nomatch, CRED_NOMATCH_ERROR);
	assert_int_equal(e->mask_duplicates, 1);
	snprintf(want, sizeof(want), "%s/.aws/**", home);
	assert_string_equal(c->creds.v[3].name, want);
	config_free(c);
}

struct bad_case {
	const char	*json;
	const char	*path;
	const char	*want;
};

#define ALLOW	"\"allowedDomains\": [\"api.example.com\", \"*.gh.example\"]"
#define T	"{\"network\": {" ALLOW ", \"tlsTerminate\": "
#define C(x)	"{\"network\": {" ALLOW ", \"tlsTerminate\": {}}, " \
	"\"credentials\": " x "}"
#define ENV(x)	C("{\"envVars\": [" x "]}")
#define FILE_(x) C("{\"files\": [" x "]}")

static const struct bad_case bad_cases[] = {
	/* tlsTerminate */
	{ T "true}}", "$.network.tlsTerminate", "expected an object" },
	{ T "{\"ca\": \"/x\"}}}", "$.network.tlsTerminate.ca",
	    "unknown key" },
	{ T "{\"caCertPath\": \"/c.pem\"}}}", "$.network.tlsTerminate",
	    "caCertPath and caKeyPath must be provided together" },
	{ T "{\"caKeyPath\": \"/k.pem\"}}}", "$.network.tlsTerminate",
	    "caCertPath and caKeyPath must be provided together" },
	{ T "{\"caCertPath\": \"c.pem\", \"caKeyPath\": \"/k\"}}}",
	    "$.network.tlsTerminate.caCertPath",
	    "expected an absolute path or one starting with \"~/\"" },
	{ T "{\"caCertPath\": \"\", \"caKeyPath\": \"/k\"}}}",
	    "$.network.tlsTerminate.caCertPath", "expected an absolute path" },
	{ T "{\"caCertPath\": \"/c\", \"caKeyPath\": 1}}}",
	    "$.network.tlsTerminate.caKeyPath", "expected a string" },
	{ T "{\"caCertPath\": \"~user/c\", \"caKeyPath\": \"/k\"}}}",
	    "$.network.tlsTerminate.caCertPath", "expected an absolute path" },
	{ T "{\"excludeDomains\": \"a.example\"}}}",
	    "$.network.tlsTerminate.excludeDomains",
	    "expected an array of patterns" },
	{ T "{\"excludeDomains\": [\"*\"]}}}",
	    "$.network.tlsTerminate.excludeDomains[0]", "invalid pattern" },
	{ T "{\"excludeDomains\": [3]}}}",
	    "$.network.tlsTerminate.excludeDomains[0]",
	    "expected a pattern string" },
	{ T "{\"extraCaCertPaths\": \"/x\"}}}",
	    "$.network.tlsTerminate.extraCaCertPaths",
	    "expected an array of paths" },
	{ T "{\"extraCaCertPaths\": [\"rel.pem\"]}}}",
	    "$.network.tlsTerminate.extraCaCertPaths[0]",
	    "expected an absolute path" },
	{ T "{\"extraCaCertPaths\": [null]}}}",
	    "$.network.tlsTerminate.extraCaCertPaths[0]",
	    "expected a path string" },
	{ T "{\"maxTunnels\": 0}}}", "$.network.tlsTerminate.maxTunnels",
	    "from 1 to 65536" },
	{ T "{\"maxTunnels\": 65537}}}", "$.network.tlsTerminate.maxTunnels",
	    "from 1 to 65536" },
	{ T "{\"handshakeTimeoutMs\": 99}}}",
	    "$.network.tlsTerminate.handshakeTimeoutMs", "from 100 to 600000" },
	{ T "{\"handshakeTimeoutMs\": 600001}}}",
	    "$.network.tlsTerminate.handshakeTimeoutMs", "from 100 to 600000" },
	/* credentials: the object */
	{ C("[]"), "$.credentials", "expected an object" },
	{ C("{\"injectHosts\": []}"), "$.credentials.injectHosts",
	    "unknown key" },
	{ C("{\"envVars\": {}}"), "$.credentials.envVars",
	    "expected an array of objects" },
	{ C("{\"files\": [\"/x\"]}"), "$.credentials.files[0]",
	    "expected an object" },
	{ C("{\"allowPlaintextInject\": 1}"),
	    "$.credentials.allowPlaintextInject", "expected true or false" },
	{ C("{\"awsPairs\": [{\"accessKeyIdVar\": \"A\", "
	    "\"secretAccessKeyVar\": \"B\"}]}"), "$.credentials.awsPairs",
	    "not supported: pisbx does not re-sign AWS SigV4" },
	{ C("{\"sigv4\": {\"presigned\": \"deny\"}}"), "$.credentials.sigv4",
	    "not supported: pisbx does not re-sign AWS SigV4" },
	/* envVars[] */
	{ ENV("{\"mode\": \"deny\"}"), "$.credentials.envVars[0].name",
	    "missing" },
	{ ENV("{\"name\": \"1X\", \"mode\": \"deny\"}"),
	    "$.credentials.envVars[0].name",
	    "expected an environment variable name" },
	{ ENV("{\"name\": \"-u\", \"mode\": \"deny\"}"),
	    "$.credentials.envVars[0].name",
	    "expected an environment variable name" },
	{ ENV("{\"name\": \"A=B\", \"mode\": \"deny\"}"),
	    "$.credentials.envVars[0].name",
	    "expected an environment variable name" },
	{ ENV("{\"name\": \"X\"}"), "$.credentials.envVars[0].mode",
	    "missing: \"deny\" or \"mask\"" },
	{ ENV("{\"name\": \"X\", \"mode\": \"hide\"}"),
	    "$.credentials.envVars[0].mode", "expected \"deny\" or \"mask\"" },
	{ ENV("{\"name\": \"X\", \"mode\": \"deny\"}, {\"name\": \"X\", "
	    "\"mode\": \"mask\"}"), "$.credentials.envVars[1].name",
	    "declared already (" NAME ": $.credentials.envVars[0])" },
	{ ENV("{\"name\": \"X\", \"mode\": \"mask\", \"extract\": \"\"}"),
	    "$.credentials.envVars[0].extract", "capturing group" },
	{ ENV("{\"name\": \"X\", \"mode\": \"mask\", \"extract\": 1}"),
	    "$.credentials.envVars[0].extract", "expected a string" },
	{ ENV("{\"name\": \"X\", \"mode\": \"mask\", \"onExtractNoMatch\": "
	    "\"ignore\"}"), "$.credentials.envVars[0].onExtractNoMatch",
	    "expected \"warn\", \"deny\" or \"error\"" },
	{ ENV("{\"name\": \"X\", \"mode\": \"mask\", \"decode\": \"jwt\"}"),
	    "$.credentials.envVars[0].decode",
	    "pisbx does not decode JWTs: mask the whole value (drop decode) "
	    "or deny it" },
	{ ENV("{\"name\": \"X\", \"mode\": \"mask\", \"maskClaims\": "
	    "[\"sub\"]}"), "$.credentials.envVars[0].maskClaims",
	    "pisbx does not decode JWTs" },
	{ ENV("{\"name\": \"X\", \"mode\": \"mask\", \"maskDuplicates\": "
	    "true}"), "$.credentials.envVars[0].maskDuplicates",
	    "unknown key" },
	{ ENV("{\"name\": \"AWS_SECRET_ACCESS_KEY\", \"mode\": \"mask\"}"),
	    "$.credentials.envVars[0].mode",
	    "AWS_SECRET_ACCESS_KEY is part of an AWS SigV4 signature" },
	{ ENV("{\"name\": \"AWS_SESSION_TOKEN\", \"mode\": \"mask\"}"),
	    "$.credentials.envVars[0].mode", "use mode \"deny\"" },
	/* injectHosts */
	{ ENV("{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": []}"),
	    "$.credentials.envVars[0].injectHosts", "explicitly empty" },
	{ ENV("{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": "
	    "[\"evil.example\"]}"), "$.credentials.envVars[0].injectHosts[0]",
	    "injectHosts entry \"evil.example\" is not reachable via "
	    "network.allowedDomains" },
	{ ENV("{\"name\": \"X\", \"mode\": \"deny\", \"injectHosts\": "
	    "[\"evil.example\"]}"), "$.credentials.envVars[0].injectHosts[0]",
	    "not reachable via network.allowedDomains" },
	/* a wildcard is not within a narrower wildcard */
	{ ENV("{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": "
	    "[\"*.example.com\"]}"), "$.credentials.envVars[0].injectHosts[0]",
	    "not reachable" },
	{ ENV("{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": "
	    "[\"gh.example\"]}"), "$.credentials.envVars[0].injectHosts[0]",
	    "not reachable" },
	{ ENV("{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": "
	    "[\"*\"]}"), "$.credentials.envVars[0].injectHosts[0]",
	    "invalid pattern" },
	{ ENV("{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": "
	    "\"api.example.com\"}"), "$.credentials.envVars[0].injectHosts",
	    "expected an array of patterns" },
	{ "{\"network\": {" ALLOW ", \"tlsTerminate\": {\"excludeDomains\": "
	    "[\"*.gh.example\"]}}, \"credentials\": {\"envVars\": [{\"name\": "
	    "\"X\", \"mode\": \"mask\", \"injectHosts\": [\"a.gh.example\"]}]}}",
	    "$.credentials.envVars[0].injectHosts[0]",
	    "entirely covered by network.tlsTerminate.excludeDomains" },
	{ "{\"network\": {" ALLOW ", \"tlsTerminate\": {\"excludeDomains\": "
	    "[\"*.gh.example\", \"api.example.com\"]}}, \"credentials\": "
	    "{\"envVars\": [{\"name\": \"X\", \"mode\": \"mask\"}]}}",
	    "$.credentials.envVars[0]", "could never be injected anywhere" },
	/* masking needs TLS termination */
	{ "{\"network\": {" ALLOW "}, \"credentials\": {\"files\": "
	    "[{\"path\": \"/t\", \"mode\": \"mask\"}]}}", "$.credentials",
	    "masking requires network.tlsTerminate" },
	{ "{\"network\": {" ALLOW "}, \"credentials\": {\"files\": "
	    "[{\"path\": \"/t\", \"mode\": \"mask\"}], "
	    "\"allowPlaintextInject\": false}}", "$.credentials",
	    "allowPlaintextInject" },
	/* files[] */
	{ FILE_("{\"mode\": \"deny\"}"), "$.credentials.files[0].path",
	    "missing" },
	{ FILE_("{\"path\": \"rel/tok\", \"mode\": \"deny\"}"),
	    "$.credentials.files[0].path",
	    "expected an absolute path or one starting with \"~/\"" },
	{ FILE_("{\"path\": \"/d/\", \"mode\": \"mask\"}"),
	    "$.credentials.files[0].path",
	    "mode \"mask\" applies to one file, not a directory" },
	{ FILE_("{\"path\": \"/d/*.json\", \"mode\": \"mask\"}"),
	    "$.credentials.files[0].path", "not a pattern" },
	{ FILE_("{\"path\": \"/d/[x\", \"mode\": \"deny\"}"),
	    "$.credentials.files[0].path", "invalid pattern" },
	{ FILE_("{\"path\": \"/t\", \"mode\": \"deny\"}, {\"path\": \"/t\", "
	    "\"mode\": \"deny\"}"), "$.credentials.files[1].path",
	    "declared already" },
	{ FILE_("{\"path\": \"/t\", \"mode\": \"mask\", \"maskDuplicates\": "
	    "\"yes\"}"), "$.credentials.files[0].maskDuplicates",
	    "expected true or false" },
	{ FILE_("{\"path\": \"/t\", \"mode\": \"mask\", \"decode\": \"jwt\"}"),
	    "$.credentials.files[0].decode", "does not decode JWTs" },
	{ FILE_("{\"path\": \"/t\", \"mode\": \"mask\", \"maskClaims\": []}"),
	    "$.credentials.files[0].maskClaims", "does not decode JWTs" },
	{ FILE_("{\"path\": \"/t\", \"mode\": \"mask\", \"name\": \"X\"}"),
	    "$.credentials.files[0].name", "unknown key" },
};

static void
test_bad(void **state)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*c;
	size_t			 i;

	(void)state;
	setenv("HOME", "/home/tester", 1);
	for (i = 0; i < sizeof(bad_cases) / sizeof(*bad_cases); i++) {
		c = load(bad_cases[i].json, &errs);
		if (c != NULL || !has_line(&errs, bad_cases[i].path,
		    bad_cases[i].want))
			fail_msg("case %zu: %s\nwant an error at %s: %s", i,
			    bad_cases[i].json, bad_cases[i].path,
			    bad_cases[i].want);
		config_free(c);
		config_errors_clear(&errs);
	}
}

/* What srt accepts, pisbx too. */
static const char *const good_cases[] = {
	/* injectHosts within a wildcard, and an allow entry's port dropped */
	"{\"network\": {\"allowedDomains\": [\"*.gh.example:443\"], "
	    "\"tlsTerminate\": {}}, \"credentials\": {\"envVars\": "
	    "[{\"name\": \"X\", \"mode\": \"mask\", \"injectHosts\": "
	    "[\"api.gh.example\", \"*.api.gh.example\"]}]}}",
	/* a partial overlap with excludeDomains is fine */
	"{\"network\": {\"allowedDomains\": [\"a.example\", \"b.example\"], "
	    "\"tlsTerminate\": {\"excludeDomains\": [\"b.example\"]}}, "
	    "\"credentials\": {\"envVars\": [{\"name\": \"X\", \"mode\": "
	    "\"mask\"}]}}",
	/* deny needs no termination; deny with injectHosts [] is moot */
	"{\"credentials\": {\"envVars\": [{\"name\": \"X\", \"mode\": "
	    "\"deny\", \"injectHosts\": []}], \"files\": [{\"path\": "
	    "\"/d/\", \"mode\": \"deny\"}]}}",
	/* plaintext injection by request */
	"{\"network\": {\"allowedDomains\": [\"a.example\"]}, "
	    "\"credentials\": {\"allowPlaintextInject\": true, \"envVars\": "
	    "[{\"name\": \"X\", \"mode\": \"mask\"}]}}",
	/* the AWS key id alone is no signature secret */
	"{\"network\": {\"tlsTerminate\": {}}, \"credentials\": {\"envVars\": "
	    "[{\"name\": \"AWS_ACCESS_KEY_ID\", \"mode\": \"mask\"}, "
	    "{\"name\": \"AWS_SECRET_ACCESS_KEY\", \"mode\": \"deny\"}]}}",
	/* no allowedDomains, no injectHosts: accepted, as srt does */
	"{\"network\": {\"tlsTerminate\": {}}, \"credentials\": {\"envVars\": "
	    "[{\"name\": \"X\", \"mode\": \"mask\"}]}}",
	/* an empty credentials object */
	"{\"credentials\": {}}",
};

static void
test_good(void **state)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*c;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(good_cases) / sizeof(*good_cases); i++) {
		c = load(good_cases[i], &errs);
		if (c == NULL) {
			has_line(&errs, NULL, "");
			fail_msg("case %zu does not load: %s", i,
			    good_cases[i]);
		}
		config_free(c);
	}
}

static void
test_terminates(void **state)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*c;
	struct host		 h;

	(void)state;
	assert_non_null(c = load("{\"network\": {\"allowedDomains\": "
	    "[\"*.example.com\"]}}", &errs));
	h = hostof("api.example.com");
	assert_false(config_tls_terminates(c, &h, 443));
	config_free(c);

	assert_non_null(c = load("{\"network\": {\"tlsTerminate\": "
	    "{\"excludeDomains\": [\"*.mtls.example\", \"pin.example:443\"]}}}",
	    &errs));
	h = hostof("api.example.com");
	assert_true(config_tls_terminates(c, &h, 443));
	assert_true(config_tls_terminates(c, &h, 8443));
	h = hostof("a.mtls.example");
	assert_false(config_tls_terminates(c, &h, 443));
	h = hostof("mtls.example");
	assert_true(config_tls_terminates(c, &h, 443));
	h = hostof("pin.example");
	assert_false(config_tls_terminates(c, &h, 443));
	assert_true(config_tls_terminates(c, &h, 8443));
	h = hostof("10.0.0.1");
	assert_true(config_tls_terminates(c, &h, 443));
	config_free(c);
}

static void
test_injects(void **state)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*c;
	struct host		 h;
	const struct cred_entry	*all, *narrow, *denied;

	(void)state;
	c = load("{\"network\": {\"allowedDomains\": [\"*.gh.example\", "
	    "\"api.example.com:443\"], \"deniedDomains\": "
	    "[\"evil.gh.example\"], \"tlsTerminate\": {}}, \"credentials\": "
	    "{\"envVars\": [{\"name\": \"ALL\", \"mode\": \"mask\"}, "
	    "{\"name\": \"NARROW\", \"mode\": \"mask\", \"injectHosts\": "
	    "[\"api.gh.example\", \"api.example.com\"]}, {\"name\": \"DENIED\", "
	    "\"mode\": \"deny\"}]}}", &errs);
	if (c == NULL)
		has_line(&errs, NULL, "");
	assert_non_null(c);
	all = &c->creds.v[0];
	narrow = &c->creds.v[1];
	denied = &c->creds.v[2];

	/* no injectHosts: wherever allowedDomains allow */
	h = hostof("x.gh.example");
	assert_true(config_cred_injects(c, all, &h, 443));
	assert_false(config_cred_injects(c, narrow, &h, 443));
	assert_false(config_cred_injects(c, denied, &h, 443));
	h = hostof("api.gh.example");
	assert_true(config_cred_injects(c, all, &h, 443));
	assert_true(config_cred_injects(c, narrow, &h, 443));
	/* the deny list wins over both */
	h = hostof("evil.gh.example");
	assert_false(config_cred_injects(c, all, &h, 443));
	/* the allow entry's port holds for injection too */
	h = hostof("api.example.com");
	assert_true(config_cred_injects(c, all, &h, 443));
	assert_true(config_cred_injects(c, narrow, &h, 443));
	assert_false(config_cred_injects(c, all, &h, 80));
	assert_false(config_cred_injects(c, narrow, &h, 80));
	/* unlisted: a reviewer may let it through, no credential goes */
	h = hostof("other.example");
	assert_false(config_cred_injects(c, all, &h, 443));
	h = hostof("gh.example");
	assert_false(config_cred_injects(c, all, &h, 443));
	config_free(c);
}

/*
 * What --control-fd compares (config_tls_same, config_creds_same), and a
 * reload (config_tls_ca_same).
 */
static void
test_same(void **state)
{
	static const char *const v[] = {
		"{\"network\": {\"tlsTerminate\": {}}}",
		"{\"network\": {\"tlsTerminate\": {\"maxTunnels\": 2}}}",
		"{\"network\": {\"tlsTerminate\": {\"excludeDomains\": "
		    "[\"a.example\"]}}}",
		"{\"network\": {\"tlsTerminate\": {\"extraCaCertPaths\": "
		    "[\"/x\"]}}}",
		"{\"network\": {\"tlsTerminate\": {}}, \"credentials\": "
		    "{\"envVars\": [{\"name\": \"X\", \"mode\": \"deny\"}]}}",
		"{\"network\": {\"tlsTerminate\": {}}, \"credentials\": "
		    "{\"envVars\": [{\"name\": \"X\", \"mode\": \"mask\"}]}}",
		"{\"network\": {\"tlsTerminate\": {}}, \"credentials\": "
		    "{\"envVars\": [{\"name\": \"X\", \"mode\": \"mask\", "
		    "\"onExtractNoMatch\": \"warn\"}]}}",
		"{}",
	};
	/* which pairs agree on tlsTerminate (bit i*8+j) */
	struct config_errors	 errs = { NULL, 0 };
	struct config		*c[8];
	size_t			 i, j;
	int			 tls_same, creds_same, ca_same;

	(void)state;
	for (i = 0; i < 8; i++)
		assert_non_null(c[i] = load(v[i], &errs));
	for (i = 0; i < 8; i++)
		for (j = 0; j < 8; j++) {
			/* tls: 0, 4, 5, 6 carry {} */
			tls_same = i == j || ((i == 0 || i >= 4) && i != 7 &&
			    (j == 0 || j >= 4) && j != 7);
			/* creds: 0-3 and 7 have none */
			creds_same = i == j || ((i <= 3 || i == 7) &&
			    (j <= 3 || j == 7));
			/*
			 * ca: only 3 (extraCaCertPaths) and 7 (none) differ
			 * from {}; maxTunnels, excludeDomains are live.
			 */
			ca_same = i == j || (i != 3 && i != 7 && j != 3 &&
			    j != 7);
			if (config_tls_ca_same(c[i], c[j]) != ca_same)
				fail_msg("%zu vs %zu: ca %d", i, j,
				    config_tls_ca_same(c[i], c[j]));
			if (config_tls_same(c[i], c[j]) != tls_same ||
			    config_creds_same(c[i], c[j]) != creds_same)
				fail_msg("%zu vs %zu: tls %d creds %d", i, j,
				    config_tls_same(c[i], c[j]),
				    config_creds_same(c[i], c[j]));
		}
	for (i = 0; i < 8; i++)
		config_free(c[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_terminates),
		cmocka_unit_test(test_injects),
		cmocka_unit_test(test_same),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
