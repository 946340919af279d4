/*
 * Config loader tests: every key with its parsed value and default, a
 * table of invalid configs (each with its JSON path and message), error
 * collection, the trust order of config_find, the supervisor's network
 * policy, the embedded default and conf/example.json.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "policy/policy.h"

#define NAME	"t.json"

/* One invalid config: its text, the JSON path named, a message part. */
struct bad_case {
	const char	*json;
	const char	*path;	/* "$.x.y" or "line L, column C" */
	const char	*want;	/* substring of the message */
};

static struct config *load(const char *, struct config_errors *);
static int	 has_error(const struct config_errors *, const char *,
		    const char *);
static void	 dump_errors(const struct config_errors *);
static void	 check_printable(const struct config_errors *);
static char	*tmpdir_make(void);
static void	 rm_rf(const char *);
static void	 write_file(const char *, const char *, size_t);
static void	 write_str(const char *, const char *);
static void	 env_save(void);
static void	 env_restore(void);
static void	 path_fmt(char *, size_t, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
static void	 top_path(char *, size_t, const char *);
static void	 schema_keys_check(const json_t *, const char *);
static struct config *load_cred(const char *, const char *,
		    struct config_errors *);
static void	 no_secret(const struct config_errors *, const char *);

static const struct bad_case bad_cases[] = {
	/* shape */
	{ "[]", "$", "expected an object, got an array" },
	{ "\"x\"", "line 1, column 3", "invalid JSON" },
	{ "{\"foo\": 1}", "$.foo", "unknown key (known keys here: $schema, "
	    "network, filesystem, proxy, resolver, review, hostIPC, "
	    "requireNamespaces, credentials, " },
	{ "{\"Network\": {}}", "$.Network", "unknown key" },
	{ "{\"a\\u001bb\": 1}", "$[\"a\\u001bb\"]", "unknown key" },
	{ "{\"$schema\": 5}", "$.$schema", "expected a string, got 5" },
	/* the host's loopback name: only with the one port to open */
	{ "{\"network\": {\"allowedDomains\": [\"Host.Pisbx.Internal.\"]}}",
	    "$.network.allowedDomains[0]", "\"Host.Pisbx.Internal.\" reaches "
	    "this machine's own services: name the one port to open "
	    "(\"host.pisbx.internal:PORT\")" },
	/* malformed JSON, duplicates, NUL */
	{ "", "line 1, column 0", "invalid JSON" },
	{ "{\"network\": }", "line 1, column 13", "invalid JSON" },
	{ "{\n  \"network\": {\n    \"allowedDomains\": [\"a.com\",]\n  }\n}",
	    "line 3, column 32", "invalid JSON: unexpected token near ']'" },
	{ "{} x", "line 1, column 4", "end of file expected" },
	{ "{\"network\": {}, \"network\": {}}", "line 1, column 25",
	    "duplicate object key" },
	{ "{\"network\": {\"deniedDomains\": [], \"deniedDomains\": []}}",
	    "line 1, column 49", "duplicate object key" },
	{ "{\"$schema\": \"a\\u0000b\"}", "line 1, column 22",
	    "\\u0000 is not allowed" },
	{ "{\"proxy\": {\"maxConnections\": 99999999999999999999}}",
	    "line 1, column 49", "too big integer" },
	{ "{\"network\": \"\xff\"}", "line 1, column 13",
	    "unable to decode byte 0xff" },
	/* network */
	{ "{\"network\": []}", "$.network", "expected an object, got an array" },
	{ "{\"network\": {\"allowDomains\": []}}", "$.network.allowDomains",
	    "unknown key" },
	{ "{\"network\": {\"allowedDomains\": \"github.com\"}}",
	    "$.network.allowedDomains",
	    "expected an array of patterns, got \"github.com\"" },
	{ "{\"network\": {\"allowedDomains\": [1]}}",
	    "$.network.allowedDomains[0]", "expected a pattern string, got 1" },
	{ "{\"network\": {\"allowedDomains\": [null]}}",
	    "$.network.allowedDomains[0]",
	    "expected a pattern string, got null" },
	{ "{\"network\": {\"allowedDomains\": "
	    "[\"a.com\", \"b.com\", \"c.com\", \"*.com\"]}}",
	    "$.network.allowedDomains[3]", "invalid pattern \"*.com\": " },
	{ "{\"network\": {\"allowedDomains\": [\"*\"]}}",
	    "$.network.allowedDomains[0]", "invalid pattern \"*\": " },
	{ "{\"network\": {\"allowedDomains\": [\"*:22\"]}}",
	    "$.network.allowedDomains[0]", "invalid pattern \"*:22\": " },
	{ "{\"network\": {\"deniedDomains\": [\"https://x.com\"]}}",
	    "$.network.deniedDomains[0]", "invalid pattern \"https://x.com\": " },
	{ "{\"network\": {\"deniedDomains\": [\"*x.com\"]}}",
	    "$.network.deniedDomains[0]", "invalid pattern \"*x.com\": " },
	{ "{\"network\": {\"allowedDomains\": [\"-bad.example.com\"]}}",
	    "$.network.allowedDomains[0]", "may not start or end with '-'" },
	{ "{\"network\": {\"deniedDomains\": [\"*.x-.example.com:22\"]}}",
	    "$.network.deniedDomains[0]", "may not start or end with '-'" },
	{ "{\"network\": {\"deniedDomains\": [\"a..b\"]}}",
	    "$.network.deniedDomains[0]", "invalid pattern \"a..b\": " },
	{ "{\"network\": {\"deniedDomains\": [\"a.com:65536\"]}}",
	    "$.network.deniedDomains[0]", "invalid pattern \"a.com:65536\": " },
	{ "{\"network\": {\"deniedDomains\": [\"\"]}}",
	    "$.network.deniedDomains[0]", "invalid pattern \"\": " },
	{ "{\"network\": {\"allowedDomains\": [\"b\\u00fccher.de\"]}}",
	    "$.network.allowedDomains[0]",
	    "invalid pattern \"b\\u00fccher.de\": " },
	{ "{\"network\": {\"allowAllUnixSockets\": 1}}",
	    "$.network.allowAllUnixSockets", "expected true or false, got 1" },
	{ "{\"network\": {\"allowAllUnixSockets\": \"true\"}}",
	    "$.network.allowAllUnixSockets",
	    "expected true or false, got \"true\"" },
	{ "{\"network\": {\"allowUnixDatagramSockets\": \"yes\"}}",
	    "$.network.allowUnixDatagramSockets",
	    "expected true or false, got \"yes\"" },
	/* network.parentProxy */
#define PP(x)	"{\"network\": {\"parentProxy\": " x "}}"
	{ PP("\"http://p:3128\""), "$.network.parentProxy",
	    "expected an object, got \"http://p:3128\"" },
	{ PP("{}"), "$.network.parentProxy", "names no upstream" },
	{ PP("{\"noProxy\": \"a.com\"}"), "$.network.parentProxy",
	    "does not take one from HTTP_PROXY" },
	{ PP("{\"http\": \"http://p:3128\", \"user\": \"u\"}"),
	    "$.network.parentProxy.user", "unknown key (known keys here: http, "
	    "https, noProxy, credentialsFile, credentialsEnv, "
	    "httpForwarding)" },
	{ PP("{\"http\": \"http://p:3128\", \"httpForwarding\": \"absolute\"}"),
	    "$.network.parentProxy.httpForwarding",
	    "expected \"tunnel\" or \"absolute-form\", got \"absolute\"" },
	{ PP("{\"http\": \"http://p:3128\", \"httpForwarding\": \"Tunnel\"}"),
	    "$.network.parentProxy.httpForwarding",
	    "expected \"tunnel\" or \"absolute-form\", got \"Tunnel\"" },
	{ PP("{\"http\": \"http://p:3128\", \"httpForwarding\": true}"),
	    "$.network.parentProxy.httpForwarding",
	    "expected a string, got true" },
	{ PP("{\"http\": 3128}"), "$.network.parentProxy.http",
	    "expected a string, got 3128" },
	{ PP("{\"https\": \"https://p:3128\"}"), "$.network.parentProxy.https",
	    "invalid upstream proxy \"https://p:3128\": https:// (TLS" },
	{ PP("{\"http\": \"socks5h://p:1080\"}"),
	    "$.network.parentProxy.http", "only http:// upstream proxies" },
	{ PP("{\"http\": \"p:3128\"}"), "$.network.parentProxy.http",
	    "invalid upstream proxy \"p:3128\": expected http://HOST:PORT" },
	{ PP("{\"http\": \"http://u:hunter2@p:3128\"}"),
	    "$.network.parentProxy.http", "credentials in the URL are refused" },
	{ PP("{\"http\": \"http://p:3128/proxy\"}"),
	    "$.network.parentProxy.http", "no path, query or fragment" },
	{ PP("{\"http\": \"http://p:99999\"}"), "$.network.parentProxy.http",
	    "invalid port" },
	{ PP("{\"http\": \"http://p:3128\", \"noProxy\": 5}"),
	    "$.network.parentProxy.noProxy", "expected an array of patterns "
	    "(or srt's comma-separated string), got 5" },
	{ PP("{\"http\": \"http://p:3128\", \"noProxy\": [\"ok.com\", 1]}"),
	    "$.network.parentProxy.noProxy[1]", "expected a pattern string" },
	{ PP("{\"http\": \"http://p:3128\", \"noProxy\": [\"https://x\"]}"),
	    "$.network.parentProxy.noProxy[0]", "invalid pattern \"https://x\"" },
	{ PP("{\"http\": \"http://p:3128\", \"noProxy\": [\"10.0.0.0/40\"]}"),
	    "$.network.parentProxy.noProxy[0]", "more prefix bits" },
	{ PP("{\"http\": \"http://p:3128\", \"noProxy\": \"a.com,,b..c\"}"),
	    "$.network.parentProxy.noProxy", "entry 2 \"b..c\"" },
	{ PP("{\"http\": \"http://p:3128\", \"credentialsFile\": \"c\"}"),
	    "$.network.parentProxy.credentialsFile",
	    "expected an absolute path, got \"c\"" },
	{ PP("{\"http\": \"http://p:3128\", \"credentialsFile\": "
	    "\"/nonexistent/pisbx.cred\"}"),
	    "$.network.parentProxy.credentialsFile",
	    "cannot open \"/nonexistent/pisbx.cred\": No such file" },
	{ PP("{\"http\": \"http://p:3128\", \"credentialsFile\": \"/\"}"),
	    "$.network.parentProxy.credentialsFile", "\"/\" is not a regular file" },
	{ PP("{\"http\": \"http://p:3128\", \"credentialsEnv\": \"A-B\"}"),
	    "$.network.parentProxy.credentialsEnv",
	    "expected an environment variable name" },
	{ PP("{\"http\": \"http://p:3128\", \"credentialsEnv\": "
	    "\"PISBX_TEST_UNSET_CREDENTIALS\"}"),
	    "$.network.parentProxy.credentialsEnv",
	    "PISBX_TEST_UNSET_CREDENTIALS is not set" },
	{ PP("{\"http\": \"http://p:3128\", \"credentialsEnv\": \"X\", "
	    "\"credentialsFile\": \"/c\"}"), "$.network.parentProxy",
	    "give \"credentialsFile\" or \"credentialsEnv\", not both" },
#undef PP
	/* filesystem */
	{ "{\"filesystem\": \"x\"}", "$.filesystem",
	    "expected an object, got \"x\"" },
	{ "{\"filesystem\": {\"denyRead\": [\"\"]}}", "$.filesystem.denyRead[0]",
	    "expected a non-empty path" },
	{ "{\"filesystem\": {\"allowWrite\": [3]}}",
	    "$.filesystem.allowWrite[0]", "expected a string, got 3" },
	{ "{\"filesystem\": {\"allowRead\": {}}}", "$.filesystem.allowRead",
	    "expected an array of strings, got an object" },
	{ "{\"filesystem\": {\"denyWrite\": \"/etc\"}}",
	    "$.filesystem.denyWrite",
	    "expected an array of strings, got \"/etc\"" },
	{ "{\"filesystem\": {\"allowGitConfig\": \"yes\"}}",
	    "$.filesystem.allowGitConfig", "expected true or false" },
	{ "{\"filesystem\": {\"allowgitconfig\": true}}",
	    "$.filesystem.allowgitconfig", "unknown key" },
	/* network.budget */
	{ "{\"network\": {\"budget\": []}}", "$.network.budget",
	    "expected an object, got an array" },
	{ "{\"network\": {\"budget\": {\"bytesUpPerHost\": 0}}}",
	    "$.network.budget.bytesUpPerHost",
	    "expected an integer from 1 to 1099511627776, got 0" },
	{ "{\"network\": {\"budget\": {\"bytesUpPerHost\": -1}}}",
	    "$.network.budget.bytesUpPerHost",
	    "expected an integer from 1 to 1099511627776, got -1" },
	{ "{\"network\": {\"budget\": {\"bytesUpPerHost\": 1e6}}}",
	    "$.network.budget.bytesUpPerHost",
	    "expected an integer from 1 to 1099511627776, got 1000000.0" },
	{ "{\"network\": {\"budget\": {\"connectionsPerHost\": 1000001}}}",
	    "$.network.budget.connectionsPerHost",
	    "expected an integer from 1 to 1000000, got 1000001" },
	{ "{\"network\": {\"budget\": {\"connectionsPerHost\": true}}}",
	    "$.network.budget.connectionsPerHost",
	    "expected an integer from 1 to 1000000, got true" },
	{ "{\"network\": {\"budget\": {\"perHost\": []}}}",
	    "$.network.budget.perHost", "unknown key (known keys here: "
	    "bytesUpPerHost, connectionsPerHost, hosts)" },
	{ "{\"network\": {\"budget\": {\"hosts\": {}}}}",
	    "$.network.budget.hosts",
	    "expected an array of at most 256 objects, got an object" },
	{ "{\"network\": {\"budget\": {\"hosts\": [{\"bytesUp\": 5}]}}}",
	    "$.network.budget.hosts[0].host", "missing: the host this budget "
	    "is for" },
	{ "{\"network\": {\"budget\": {\"hosts\": [{\"host\": "
	    "\"*.a.com\"}]}}}", "$.network.budget.hosts[0].host",
	    "invalid host \"*.a.com\": " },
	{ "{\"network\": {\"budget\": {\"hosts\": [{\"host\": "
	    "\"a.com:443\"}]}}}", "$.network.budget.hosts[0].host",
	    "invalid host \"a.com:443\": " },
	{ "{\"network\": {\"budget\": {\"hosts\": [{\"host\": \"A.com\"}, "
	    "{\"host\": \"a.com.\"}]}}}", "$.network.budget.hosts[1].host",
	    "\"a.com\" has a budget already (entry 0)" },
	{ "{\"network\": {\"budget\": {\"hosts\": [{\"host\": \"a.com\", "
	    "\"bytes\": 1}]}}}", "$.network.budget.hosts[0].bytes",
	    "unknown key (known keys here: host, bytesUp, connections)" },
	{ "{\"network\": {\"budget\": {\"hosts\": [{\"host\": \"a.com\", "
	    "\"connections\": 0}]}}}", "$.network.budget.hosts[0].connections",
	    "expected an integer from 1 to 1000000, got 0" },
	/* proxy */
	{ "{\"proxy\": {\"maxConnections\": 0}}", "$.proxy.maxConnections",
	    "expected an integer from 1 to 1000000, got 0" },
	{ "{\"proxy\": {\"maxConnections\": 1000001}}",
	    "$.proxy.maxConnections", "got 1000001" },
	{ "{\"proxy\": {\"maxConnections\": 1.5}}", "$.proxy.maxConnections",
	    "expected an integer from 1 to 1000000, got 1.5" },
	{ "{\"proxy\": {\"maxClientConnections\": 0}}",
	    "$.proxy.maxClientConnections",
	    "expected an integer from 1 to 1000000, got 0" },
	{ "{\"proxy\": {\"maxClientConnections\": \"all\"}}",
	    "$.proxy.maxClientConnections", "expected an integer" },
	{ "{\"proxy\": {\"maxConnections\": 1.0}}", "$.proxy.maxConnections",
	    "got 1.0" },
	{ "{\"proxy\": {\"maxConnections\": 1e3}}", "$.proxy.maxConnections",
	    "got 1000.0" },
	{ "{\"proxy\": {\"maxConnections\": true}}", "$.proxy.maxConnections",
	    "got true" },
	{ "{\"proxy\": {\"maxConnections\": \"5\"}}", "$.proxy.maxConnections",
	    "got \"5\"" },
	{ "{\"proxy\": {\"maxConnections\": -1}}", "$.proxy.maxConnections",
	    "got -1" },
	{ "{\"proxy\": {\"connectTimeoutMs\": 600001}}",
	    "$.proxy.connectTimeoutMs",
	    "expected an integer from 1 to 600000, got 600001" },
	{ "{\"proxy\": {\"idleTimeoutMs\": 86400001}}", "$.proxy.idleTimeoutMs",
	    "expected an integer from 1 to 86400000" },
	{ "{\"proxy\": {\"headerTimeoutMs\": 0}}", "$.proxy.headerTimeoutMs",
	    "expected an integer from 1 to 600000, got 0" },
	{ "{\"proxy\": {\"listen\": \"127.0.0.1:3128\"}}", "$.proxy.listen",
	    "expected an array of strings" },
	{ "{\"proxy\": {\"listen\": [\"localhost:3128\"]}}",
	    "$.proxy.listen[0]", "invalid listen address \"localhost:3128\"" },
	{ "{\"proxy\": {\"listen\": [\"127.0.0.1\"]}}", "$.proxy.listen[0]",
	    "missing :PORT" },
	{ "{\"proxy\": {\"listen\": [\"::1:80\"]}}", "$.proxy.listen[0]",
	    "needs brackets" },
	{ "{\"proxy\": {\"listen\": [\"[::1]\"]}}", "$.proxy.listen[0]",
	    "missing :PORT" },
	{ "{\"proxy\": {\"listen\": [\"127.0.0.1:65536\"]}}",
	    "$.proxy.listen[0]", "port must be 0..65535" },
	{ "{\"proxy\": {\"listen\": [\"127.0.0.1:03128\"]}}",
	    "$.proxy.listen[0]", "without leading zeros" },
	{ "{\"proxy\": {\"listen\": [\"127.1:3128\"]}}", "$.proxy.listen[0]",
	    "not an IP address" },
	{ "{\"proxy\": {\"listen\": [\"relative.sock\"]}}",
	    "$.proxy.listen[0]", "invalid listen address \"relative.sock\"" },
	{ "{\"proxy\": {\"listen\": [\"/tmp/"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "x.sock\"]}}", "$.proxy.listen[0]", "path longer than 107 bytes" },
	/* resolver */
	{ "{\"resolver\": {\"servers\": [\"dns.google\"]}}",
	    "$.resolver.servers[0]", "invalid resolver address \"dns.google\"" },
	{ "{\"resolver\": {\"servers\": [\"1.2.3.4:0\"]}}",
	    "$.resolver.servers[0]", "port must be 1..65535" },
	{ "{\"resolver\": {\"servers\": [\"[::1\"]}}", "$.resolver.servers[0]",
	    "missing ']'" },
	{ "{\"resolver\": {\"servers\": [\"[::1]x\"]}}",
	    "$.resolver.servers[0]", "unexpected text after ']'" },
	{ "{\"resolver\": {\"servers\": [\"fe80::1%eth0\"]}}",
	    "$.resolver.servers[0]", "not an IP address" },
	{ "{\"resolver\": {\"servers\": [\"1.2.3.4:\"]}}",
	    "$.resolver.servers[0]", "port must be" },
	{ "{\"resolver\": {\"servers\": [\"\"]}}", "$.resolver.servers[0]",
	    "empty" },
	{ "{\"resolver\": {\"hostsFile\": \"hosts\"}}", "$.resolver.hostsFile",
	    "expected an absolute path, got \"hosts\"" },
	{ "{\"resolver\": {\"hostsFile\": 5}}", "$.resolver.hostsFile",
	    "expected a string, got 5" },
	{ "{\"proxy\": {\"accessLog\": \"access.log\"}}",
	    "$.proxy.accessLog", "expected an absolute path, got \"access.log\"" },
	{ "{\"proxy\": {\"accessLog\": true}}", "$.proxy.accessLog",
	    "expected a string, got true" },
	{ "{\"proxy\": {\"accessLogFormat\": \"csv\"}}",
	    "$.proxy.accessLogFormat", "must be \"json\" or \"text\" (\"csv\")" },
	{ "{\"resolver\": {\"timeoutMs\": 600001}}", "$.resolver.timeoutMs",
	    "expected an integer from 1 to 600000" },
	{ "{\"resolver\": {\"server\": []}}", "$.resolver.server",
	    "unknown key" },
	/* review */
	{ "{\"review\": {}}", "$.review",
	    "needs exactly one of \"command\", \"socket\" or \"mode\", got none" },
	{ "{\"review\": {\"timeoutMs\": 5}}", "$.review", "got none" },
	{ "{\"review\": {\"command\": [\"/r\"], \"mode\": \"tty\"}}",
	    "$.review", "got several" },
	{ "{\"review\": {\"command\": []}}", "$.review.command",
	    "got an empty array" },
	{ "{\"review\": {\"command\": [\"reviewer\"]}}", "$.review.command[0]",
	    "expected an absolute path, got \"reviewer\"" },
	{ "{\"review\": {\"command\": \"/bin/r\"}}", "$.review.command",
	    "expected an array of strings" },
	{ "{\"review\": {\"socket\": \"rel.sock\"}}", "$.review.socket",
	    "expected an absolute path" },
	{ "{\"review\": {\"socket\": [\"/a.sock\"]}}", "$.review.socket",
	    "expected a string, got an array" },
	{ "{\"review\": {\"mode\": \"gui\"}}", "$.review.mode",
	    "expected \"tty\", got \"gui\"" },
	{ "{\"review\": {\"command\": [\"/r\"], \"capabilityEnv\": \"X\"}}",
	    "$.review.capabilityEnv", "only applies with \"socket\"" },
	{ "{\"review\": {\"socket\": \"/s\", \"capabilityEnv\": \"1BAD\"}}",
	    "$.review.capabilityEnv", "expected an environment variable name" },
	{ "{\"review\": {\"socket\": \"/s\", \"capabilityEnv\": \"A-B\"}}",
	    "$.review.capabilityEnv", "got \"A-B\"" },
	{ "{\"review\": {\"socket\": \"/s\", \"capabilityEnv\": \"\"}}",
	    "$.review.capabilityEnv", "got \"\"" },
	{ "{\"review\": {\"mode\": \"tty\", \"timeoutMs\": 3600001}}",
	    "$.review.timeoutMs", "expected an integer from 1 to 3600000" },
	{ "{\"review\": {\"mode\": \"tty\", \"maxInFlight\": 1025}}",
	    "$.review.maxInFlight", "expected an integer from 1 to 1024" },
	{ "{\"review\": {\"mode\": \"tty\", \"maxInFlight\": 0}}",
	    "$.review.maxInFlight", "got 0" },
	/* hostIPC */
	{ "{\"hostIPC\": {\"mode\": \"on\"}}", "$.hostIPC.mode",
	    "expected \"off\" or \"ask\", got \"on\"" },
	{ "{\"hostIPC\": {\"mode\": true}}", "$.hostIPC.mode",
	    "expected a string, got true" },
	{ "{\"hostIPC\": {\"preflightCommandPrefixes\": [\" \\t \"]}}",
	    "$.hostIPC.preflightCommandPrefixes[0]",
	    "empty command prefix \" \\u0009 \"" },
	{ "{\"hostIPC\": {\"preflightCommandPrefixes\": [\"\"]}}",
	    "$.hostIPC.preflightCommandPrefixes[0]", "empty command prefix" },
	{ "{\"hostIPC\": {\"preflightCommandPrefixes\": \"tmux\"}}",
	    "$.hostIPC.preflightCommandPrefixes",
	    "expected an array of strings" },
	{ "{\"hostIPC\": {\"retryOnUnixSocketError\": 1}}",
	    "$.hostIPC.retryOnUnixSocketError", "expected true or false" },
	{ "{\"hostIPC\": {\"preflight\": []}}", "$.hostIPC.preflight",
	    "unknown key" },
};

static struct config *
load(const char *json, struct config_errors *errs)
{
	return config_load_buffer(json, strlen(json), NAME, errs);
}

/* Whether some message starts with "t.json: PATH: " and contains want. */
static int
has_error(const struct config_errors *errs, const char *path,
    const char *want)
{
	char prefix[512];
	size_t i;

	snprintf(prefix, sizeof(prefix), "%s: %s: ", NAME, path);
	for (i = 0; i < errs->n; i++)
		if (strncmp(errs->msg[i], prefix, strlen(prefix)) == 0 &&
		    strstr(errs->msg[i], want) != NULL)
			return 1;
	return 0;
}

static void
dump_errors(const struct config_errors *errs)
{
	size_t i;

	for (i = 0; i < errs->n; i++)
		print_error("    error: %s\n", errs->msg[i]);
}

/* No message may carry control bytes or non-ASCII to the terminal. */
static void
check_printable(const struct config_errors *errs)
{
	const unsigned char *p;
	size_t i;

	for (i = 0; i < errs->n; i++)
		for (p = (const unsigned char *)errs->msg[i]; *p; p++)
			assert_true(*p >= 0x20 && *p < 0x7f);
}

static void
test_invalid_case(void **state)
{
	const struct bad_case *c = *state;
	struct config_errors errs = { NULL, 0 };
	struct config *conf;

	conf = load(c->json, &errs);
	if (conf != NULL || errs.n != 1 || !has_error(&errs, c->path, c->want)) {
		print_error("config: %s\nwant exactly one error at %s "
		    "containing: %s\ngot %s with %zu errors\n", c->json, c->path,
		    c->want, conf != NULL ? "a config" : "NULL", errs.n);
		dump_errors(&errs);
		config_free(conf);
		config_errors_clear(&errs);
		fail();
	}
	check_printable(&errs);
	config_errors_clear(&errs);
}

static void
test_defaults(void **state)
{
	struct config_errors errs = { NULL, 0 };
	struct config *conf;

	(void)state;
	conf = load("{}", &errs);
	assert_non_null(conf);
	assert_int_equal(errs.n, 0);
	assert_string_equal(conf->path, NAME);
	assert_non_null(conf->policy);
	assert_int_equal(policy_count(conf->policy, POLICY_ALLOW), 0);
	assert_int_equal(policy_count(conf->policy, POLICY_DENY), 0);
	assert_int_equal(conf->allow_all_unix_sockets, 0);
	assert_int_equal(conf->allow_unix_datagram_sockets, 0);
	assert_int_equal(conf->listen.n, 0);
	assert_int_equal(conf->max_connections, 1024);
	assert_int_equal(conf->max_client_connections, 0);	/* default */
	assert_int_equal(conf->connect_timeout_ms, 10000);
	assert_int_equal(conf->idle_timeout_ms, 300000);
	assert_int_equal(conf->header_timeout_ms, 30000);
	assert_int_equal(conf->resolver_servers.n, 0);
	assert_null(conf->hosts_file);
	assert_int_equal(conf->resolver_timeout_ms, 5000);
	assert_int_equal(conf->review_mode, REVIEW_NONE);
	assert_int_equal(conf->review_command.n, 0);
	assert_int_equal(conf->review_timeout_ms, 30000);
	assert_null(conf->review_socket);
	assert_string_equal(conf->review_capability_env, "PISBX_CAPABILITY");
	assert_int_equal(conf->review_max_inflight, 16);
	assert_int_equal(conf->deny_read.n, 0);
	assert_int_equal(conf->allow_read.n, 0);
	assert_int_equal(conf->allow_write.n, 0);
	assert_int_equal(conf->deny_write.n, 0);
	assert_int_equal(conf->allow_git_config, 0);
	assert_int_equal(conf->fs_deny_read_set, 0);
	assert_int_equal(conf->fs_allow_write_set, 0);
	assert_int_equal(conf->hostipc_mode, HOSTIPC_OFF);
	assert_int_equal(conf->hostipc_prefixes.n, 0);
	assert_int_equal(conf->hostipc_retry, 0);
	config_free(conf);

	/* Empty sections keep the defaults too. */
	conf = load("{\"network\":{},\"filesystem\":{},\"proxy\":{},"
	    "\"resolver\":{},\"hostIPC\":{}}", &errs);
	assert_non_null(conf);
	assert_int_equal(conf->max_connections, 1024);
	assert_int_equal(conf->fs_deny_read_set, 0);
	config_free(conf);
}

static const char full_config[] =
    "{\n"
    "  \"$schema\": \"https://example.invalid/pisbx.schema.json\",\n"
    "  \"network\": {\n"
    "    \"allowedDomains\": [\"github.com\", \"*.github.com\",\n"
    "      \"registry.npmjs.org:443\", \" GitHub.COM. \", \"[::1]:8080\"],\n"
    "    \"deniedDomains\": [\"uploads.github.com\", \"*:22\", \"*:22\",\n"
    "      \"10.0.0.1\"],\n"
    "    \"allowAllUnixSockets\": true,\n"
    "    \"allowUnixDatagramSockets\": true\n"
    "  },\n"
    "  \"filesystem\": {\n"
    "    \"denyRead\": [\"~\", \"/etc/ssl/private\"],\n"
    "    \"allowRead\": [\"~/.cargo\"],\n"
    "    \"allowWrite\": [\".\", \"/tmp/build\", \".\"],\n"
    "    \"denyWrite\": [\"secrets\"],\n"
    "    \"allowGitConfig\": true\n"
    "  },\n"
    "  \"proxy\": {\n"
    "    \"listen\": [\"127.0.0.1:3128\", \"[::1]:0\", \"/run/pisbx.sock\",\n"
    "      \"[0:0:0:0:0:0:0:1]:0\"],\n"
    "    \"maxConnections\": 1000000,\n"
    "    \"maxClientConnections\": 9,\n"
    "    \"connectTimeoutMs\": 1,\n"
    "    \"idleTimeoutMs\": 86400000,\n"
    "    \"headerTimeoutMs\": 600000,\n"
    "    \"accessLog\": \"/var/log/pisbx/access.log\",\n"
    "    \"accessLogFormat\": \"text\"\n"
    "  },\n"
    "  \"resolver\": {\n"
    "    \"servers\": [\"127.0.0.1:5353\", \"::1\", \"[::1]:53\",\n"
    "      \"9.9.9.9\", \"[2001:DB8::0:1]:5300\"],\n"
    "    \"hostsFile\": \"/etc/pisbx/hosts\",\n"
    "    \"timeoutMs\": 600000\n"
    "  },\n"
    "  \"review\": {\n"
    "    \"command\": [\"/usr/local/bin/reviewer\", \"--strict\", \"\"],\n"
    "    \"timeoutMs\": 3600000,\n"
    "    \"maxInFlight\": 1024\n"
    "  },\n"
    "  \"hostIPC\": {\n"
    "    \"mode\": \"ask\",\n"
    "    \"preflightCommandPrefixes\": [\" tmux \", \"docker\", \"tmux\",\n"
    "      \"git  push\"],\n"
    "    \"retryOnUnixSocketError\": true\n"
    "  }\n"
    "}\n";

static void
test_full(void **state)
{
	struct config_errors errs = { NULL, 0 };
	const struct pattern *m;
	struct config *conf;
	struct host h;
	const char *why;

	(void)state;
	conf = load(full_config, &errs);
	dump_errors(&errs);
	assert_non_null(conf);
	assert_int_equal(errs.n, 0);

	/* " GitHub.COM. " is github.com again; "*:22" twice is one entry. */
	assert_int_equal(policy_count(conf->policy, POLICY_ALLOW), 4);
	assert_int_equal(policy_count(conf->policy, POLICY_DENY), 3);
	assert_int_equal(host_canon("uploads.github.com", 18, &h, &why), 0);
	assert_int_equal(policy_eval(conf->policy, &h, 443, &m), VERDICT_DENY);
	assert_int_equal(host_canon("api.github.com", 14, &h, &why), 0);
	assert_int_equal(policy_eval(conf->policy, &h, 443, &m), VERDICT_ALLOW);
	assert_int_equal(policy_eval(conf->policy, &h, 22, &m), VERDICT_DENY);
	assert_int_equal(host_canon("example.org", 11, &h, &why), 0);
	assert_int_equal(policy_eval(conf->policy, &h, 443, &m),
	    VERDICT_REVIEW);
	assert_int_equal(conf->allow_all_unix_sockets, 1);
	assert_int_equal(conf->allow_unix_datagram_sockets, 1);

	assert_int_equal(conf->deny_read.n, 2);
	assert_string_equal(conf->deny_read.v[0], "~");
	assert_string_equal(conf->deny_read.v[1], "/etc/ssl/private");
	assert_int_equal(conf->allow_read.n, 1);
	assert_string_equal(conf->allow_read.v[0], "~/.cargo");
	assert_int_equal(conf->allow_write.n, 2);
	assert_string_equal(conf->allow_write.v[0], ".");
	assert_string_equal(conf->allow_write.v[1], "/tmp/build");
	assert_int_equal(conf->deny_write.n, 1);
	assert_string_equal(conf->deny_write.v[0], "secrets");
	assert_int_equal(conf->allow_git_config, 1);
	assert_int_equal(conf->fs_deny_read_set, 1);
	assert_int_equal(conf->fs_allow_write_set, 1);

	assert_int_equal(conf->listen.n, 3);
	assert_string_equal(conf->listen.v[0], "127.0.0.1:3128");
	assert_string_equal(conf->listen.v[1], "[::1]:0");
	assert_string_equal(conf->listen.v[2], "/run/pisbx.sock");
	assert_null(conf->listen.v[3]);
	assert_int_equal(conf->max_connections, 1000000);
	assert_int_equal(conf->max_client_connections, 9);
	assert_int_equal(conf->connect_timeout_ms, 1);
	assert_int_equal(conf->idle_timeout_ms, 86400000);
	assert_int_equal(conf->header_timeout_ms, 600000);
	assert_string_equal(conf->access_log, "/var/log/pisbx/access.log");
	assert_int_equal(conf->access_log_text, 1);

	assert_int_equal(conf->resolver_servers.n, 4);
	assert_string_equal(conf->resolver_servers.v[0], "127.0.0.1:5353");
	assert_string_equal(conf->resolver_servers.v[1], "[::1]:53");
	assert_string_equal(conf->resolver_servers.v[2], "9.9.9.9:53");
	assert_string_equal(conf->resolver_servers.v[3],
	    "[2001:db8::1]:5300");
	assert_string_equal(conf->hosts_file, "/etc/pisbx/hosts");
	assert_int_equal(conf->resolver_timeout_ms, 600000);

	assert_int_equal(conf->review_mode, REVIEW_COMMAND);
	assert_int_equal(conf->review_command.n, 3);
	assert_string_equal(conf->review_command.v[0],
	    "/usr/local/bin/reviewer");
	assert_string_equal(conf->review_command.v[1], "--strict");
	assert_string_equal(conf->review_command.v[2], "");
	assert_null(conf->review_command.v[3]);	/* ready for execv */
	assert_int_equal(conf->review_timeout_ms, 3600000);
	assert_int_equal(conf->review_max_inflight, 1024);
	assert_null(conf->review_socket);

	assert_int_equal(conf->hostipc_mode, HOSTIPC_ASK);
	assert_int_equal(conf->hostipc_prefixes.n, 3);
	assert_string_equal(conf->hostipc_prefixes.v[0], "tmux");
	assert_string_equal(conf->hostipc_prefixes.v[1], "docker");
	assert_string_equal(conf->hostipc_prefixes.v[2], "git  push");
	assert_int_equal(conf->hostipc_retry, 1);
	config_free(conf);
}

static void
test_review_modes(void **state)
{
	struct config_errors errs = { NULL, 0 };
	struct config *conf;

	(void)state;
	conf = load("{\"review\": {\"socket\": \"/run/sup.sock\"}}", &errs);
	assert_non_null(conf);
	assert_int_equal(conf->review_mode, REVIEW_SOCKET);
	assert_string_equal(conf->review_socket, "/run/sup.sock");
	assert_string_equal(conf->review_capability_env, "PISBX_CAPABILITY");
	config_free(conf);

	conf = load("{\"review\": {\"socket\": \"/run/sup.sock\", "
	    "\"capabilityEnv\": \"_My_CAP2\", \"maxInFlight\": 1, "
	    "\"timeoutMs\": 1}}", &errs);
	assert_non_null(conf);
	assert_int_equal(conf->review_mode, REVIEW_SOCKET);
	assert_string_equal(conf->review_capability_env, "_My_CAP2");
	assert_int_equal(conf->review_max_inflight, 1);
	assert_int_equal(conf->review_timeout_ms, 1);
	config_free(conf);

	conf = load("{\"review\": {\"mode\": \"tty\"}}", &errs);
	assert_non_null(conf);
	assert_int_equal(conf->review_mode, REVIEW_TTY);
	config_free(conf);

	conf = load("{\"hostIPC\": {\"mode\": \"off\"}}", &errs);
	assert_non_null(conf);
	assert_int_equal(conf->hostipc_mode, HOSTIPC_OFF);
	config_free(conf);

	/* An empty list given still counts as given. */
	conf = load("{\"filesystem\": {\"denyRead\": [], \"allowWrite\": []}}",
	    &errs);
	assert_non_null(conf);
	assert_int_equal(conf->fs_deny_read_set, 1);
	assert_int_equal(conf->fs_allow_write_set, 1);
	assert_int_equal(conf->deny_read.n, 0);
	config_free(conf);
	assert_int_equal(errs.n, 0);
}

/* Three independent errors in one file: three messages, one failure. */
static void
test_all_errors(void **state)
{
	struct config_errors errs = { NULL, 0 };
	struct config *conf;

	(void)state;
	conf = load("{\"network\": {\"allowedDomains\": [\"ok.com\", \"*.com\"]},"
	    "\"proxy\": {\"maxConnections\": 1.5},"
	    "\"bogus\": true}", &errs);
	assert_null(conf);
	if (errs.n != 3)
		dump_errors(&errs);
	assert_int_equal(errs.n, 3);
	assert_true(has_error(&errs, "$.network.allowedDomains[1]",
	    "invalid pattern \"*.com\""));
	assert_true(has_error(&errs, "$.proxy.maxConnections", "got 1.5"));
	assert_true(has_error(&errs, "$.bogus", "unknown key"));
	config_errors_clear(&errs);
	assert_int_equal(errs.n, 0);
	assert_null(errs.msg);

	/* Errors append: the caller clears between loads. */
	assert_null(load("{\"a\": 1, \"b\": 2}", &errs));
	assert_null(load("{\"c\": 3}", &errs));
	assert_int_equal(errs.n, 3);
	config_errors_clear(&errs);

	/* A NULL error list is allowed; the load still fails. */
	assert_null(load("{\"a\": 1}", NULL));
}

/* Thousands of errors: the first 100 are kept and the rest counted. */
static void
test_error_cap(void **state)
{
	struct config_errors errs = { NULL, 0 };
	char *json, *p;
	size_t i;

	(void)state;
	json = malloc(16 + 250 * 4);
	assert_non_null(json);
	p = json + sprintf(json, "{\"network\":{\"allowedDomains\":[");
	for (i = 0; i < 250; i++)
		p += sprintf(p, "%s1", i > 0 ? "," : "");
	strcpy(p, "]}}");
	assert_null(load(json, &errs));
	assert_int_equal(errs.n, 101);
	assert_true(has_error(&errs, "$.network.allowedDomains[99]",
	    "got 1"));
	assert_string_equal(errs.msg[100], NAME ": 150 more errors not shown");
	config_errors_clear(&errs);
	free(json);
}

static void
test_embedded_default(void **state)
{
	struct config_errors errs = { NULL, 0 };
	struct config *conf;

	(void)state;
	conf = config_load(NULL, &errs);
	dump_errors(&errs);
	assert_non_null(conf);
	assert_int_equal(errs.n, 0);
	assert_string_equal(conf->path, "(embedded default)");
	assert_non_null(conf->policy);
	assert_int_equal(conf->review_mode, REVIEW_NONE);
	config_free(conf);
}

/* top/rel, from $PISBX_TOP (tests/run.sh), else relative to the build. */
static void
top_path(char *out, size_t len, const char *rel)
{
	const char *top = getenv("PISBX_TOP");

	path_fmt(out, len, "%s/%s", top != NULL ? top : ".", rel);
	if (access(out, R_OK) == -1)
		path_fmt(out, len, "../../%s", rel);
}

/*
 * The loader's key lists (read back from its "unknown key" message) are
 * exactly the schema's properties, section by section.
 */
static void
schema_keys_check(const json_t *props, const char *section)
{
	struct config_errors errs = { NULL, 0 };
	char json[128], known[1024], *p;
	const char *key;
	json_t *val;
	size_t o = 0;

	/* The review section needs its transport to say only one thing. */
	if (section != NULL)
		snprintf(json, sizeof(json), "{\"%s\": {%s\"zzz\": 1}}",
		    section, strcmp(section, "review") == 0 ?
		    "\"mode\": \"tty\", " : "");
	else
		snprintf(json, sizeof(json), "{\"zzz\": 1}");
	assert_null(load(json, &errs));
	assert_int_equal(errs.n, 1);
	assert_non_null(p = strstr(errs.msg[0], "(known keys here: "));
	p += strlen("(known keys here: ");
	known[0] = '\0';
	json_object_foreach((json_t *)props, key, val)
		o += (size_t)snprintf(known + o, sizeof(known) - o, "%s%s",
		    o > 0 ? ", " : "", key);
	strcat(known, ")");
	if (strcmp(p, known) != 0)
		print_error("section %s: loader knows (%s, schema has %s\n",
		    section != NULL ? section : "$", p, known);
	assert_string_equal(p, known);
	config_errors_clear(&errs);
}

static void
test_schema(void **state)
{
	json_error_t jerr;
	json_t *schema, *props, *sec;
	const char *key;
	char path[PATH_MAX];

	(void)state;
	top_path(path, sizeof(path), "conf/schema.json");
	schema = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (schema == NULL)
		print_error("%s:%d: %s\n", path, jerr.line, jerr.text);
	assert_non_null(schema);
	assert_string_equal(json_string_value(json_object_get(schema,
	    "$schema")), "https://json-schema.org/draft/2020-12/schema");
	assert_true(json_is_false(json_object_get(schema,
	    "additionalProperties")));
	props = json_object_get(schema, "properties");
	assert_non_null(props);
	schema_keys_check(props, NULL);
	json_object_foreach(props, key, sec) {
		assert_non_null(json_object_get(sec, "description"));
		/* Sections with keys of their own; srt's others are leaves. */
		if (json_object_get(sec, "properties") == NULL)
			continue;
		assert_true(json_is_false(json_object_get(sec,
		    "additionalProperties")));
		schema_keys_check(json_object_get(sec, "properties"), key);
	}
	json_decref(schema);
}

static void
test_example(void **state)
{
	struct config_errors errs = { NULL, 0 };
	struct config *conf;
	char path[PATH_MAX];
	size_t i;

	(void)state;
	top_path(path, sizeof(path), "conf/example.json");
	conf = config_load(path, &errs);
	dump_errors(&errs);
	assert_non_null(conf);
	/* Named absolutely, however it was given (hints name the file). */
	assert_true(conf->path[0] == '/');
	assert_non_null(strstr(conf->path, path[0] == '/' ? path :
	    "conf/example.json"));
	assert_true(policy_count(conf->policy, POLICY_ALLOW) >= 2);
	assert_true(policy_count(conf->policy, POLICY_DENY) >= 2);
	/*
	 * It is copied as it is: its reviewer is one pisbx ships (a
	 * reviewer that cannot run would refuse every review), so it loads
	 * without a warning, and it re-exposes no secret store of the home
	 * (~/.npmrc holds registry tokens).
	 */
	assert_int_equal(conf->review_mode, REVIEW_TTY);
	for (i = 0; i < conf->warnings.n; i++)
		fail_msg("warning: %s", conf->warnings.v[i]);
	for (i = 0; i < conf->allow_read.n; i++)
		if (strstr(conf->allow_read.v[i], ".npmrc") != NULL)
			fail_msg("allowRead %s", conf->allow_read.v[i]);
	assert_int_not_equal(conf->resolver_timeout_ms, 5000);
	config_free(conf);
}

/* snprintf that must fit. */
static void
path_fmt(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	assert_true(r >= 0 && (size_t)r < len);
}

static char *
tmpdir_make(void)
{
	char *d;

	assert_true(asprintf(&d, "%s/pisbx-config.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp") != -1);
	assert_non_null(mkdtemp(d));
	return d;
}

static void
rm_rf(const char *dir)
{
	char *cmd;

	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) != -1);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

static void
write_file(const char *path, const char *data, size_t len)
{
	FILE *f;

	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void
write_str(const char *path, const char *s)
{
	write_file(path, s, strlen(s));
}

/* Files: errors name the file; only regular files of at most 4 MiB. */
static void
test_files(void **state)
{
	struct config_errors errs = { NULL, 0 };
	struct config *conf;
	char *dir, path[PATH_MAX], want[PATH_MAX + 64], *big;
	size_t bigsz = 4 * 1024 * 1024 + 1;

	(void)state;
	dir = tmpdir_make();

	path_fmt(path, sizeof(path), "%s/ok.json", dir);
	write_str(path, "{\"proxy\": {\"maxConnections\": 7}}");
	conf = config_load(path, &errs);
	assert_non_null(conf);
	assert_string_equal(conf->path, path);
	assert_int_equal(conf->max_connections, 7);
	config_free(conf);

	path_fmt(path, sizeof(path), "%s/bad.json", dir);
	write_str(path, "{\n\"proxy\": {\"maxConnections\": 0}}");
	assert_null(config_load(path, &errs));
	assert_int_equal(errs.n, 1);
	path_fmt(want, sizeof(want), "%s: $.proxy.maxConnections: ", path);
	assert_memory_equal(errs.msg[0], want, strlen(want));
	config_errors_clear(&errs);

	path_fmt(path, sizeof(path), "%s/syntax.json", dir);
	write_str(path, "{\n  \"proxy\": {\n    \"listen\": [,]\n}");
	assert_null(config_load(path, &errs));
	assert_int_equal(errs.n, 1);
	path_fmt(want, sizeof(want), "%s: line 3, column ", path);
	assert_memory_equal(errs.msg[0], want, strlen(want));
	config_errors_clear(&errs);

	path_fmt(path, sizeof(path), "%s/missing.json", dir);
	assert_null(config_load(path, &errs));
	assert_int_equal(errs.n, 1);
	path_fmt(want, sizeof(want), "%s: cannot open: %s", path,
	    strerror(ENOENT));
	assert_string_equal(errs.msg[0], want);
	config_errors_clear(&errs);

	assert_null(config_load(dir, &errs));
	assert_int_equal(errs.n, 1);
	path_fmt(want, sizeof(want), "%s: not a regular file", dir);
	assert_string_equal(errs.msg[0], want);
	config_errors_clear(&errs);

	/* A FIFO must neither hang the open nor be read. */
	path_fmt(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_null(config_load(path, &errs));
	assert_int_equal(errs.n, 1);
	assert_non_null(strstr(errs.msg[0], "not a regular file"));
	config_errors_clear(&errs);

	assert_null(config_load("", &errs));
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.msg[0], "\"\": empty config file name");
	config_errors_clear(&errs);

	assert_null(config_load("/dev/null", &errs));
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.msg[0], "/dev/null: not a regular file");
	config_errors_clear(&errs);

	/* 4 MiB + 1 of valid JSON (spaces) is still refused. */
	assert_non_null(big = malloc(bigsz));
	memset(big, ' ', bigsz);
	big[0] = '{';
	big[bigsz - 1] = '}';
	path_fmt(path, sizeof(path), "%s/big.json", dir);
	write_file(path, big, bigsz);
	assert_null(config_load(path, &errs));
	assert_int_equal(errs.n, 1);
	assert_non_null(strstr(errs.msg[0], "larger than 4 MiB"));
	config_errors_clear(&errs);
	/* Exactly 4 MiB is fine. */
	big[bigsz - 2] = '}';
	write_file(path, big, bigsz - 1);
	conf = config_load(path, &errs);
	assert_non_null(conf);
	config_free(conf);
	free(big);

	rm_rf(dir);
	free(dir);
}

static char *saved_env[4];
static const char *const env_names[4] = {
	"PISBX_CONFIG", "XDG_CONFIG_HOME", "HOME", NULL
};

static void
env_save(void)
{
	size_t i;

	for (i = 0; env_names[i] != NULL; i++)
		saved_env[i] = getenv(env_names[i]) != NULL ?
		    strdup(getenv(env_names[i])) : NULL;
}

static void
env_restore(void)
{
	size_t i;

	for (i = 0; env_names[i] != NULL; i++) {
		if (saved_env[i] != NULL)
			setenv(env_names[i], saved_env[i], 1);
		else
			unsetenv(env_names[i]);
		free(saved_env[i]);
		saved_env[i] = NULL;
	}
}

/*
 * --config, then $PISBX_CONFIG, then the XDG file, then srt's
 * ~/.srt-settings.json, then the default.
 */
static void
test_find(void **state)
{
	char *dir, *p, xdg[PATH_MAX], home[PATH_MAX], f[PATH_MAX],
	    cwd[PATH_MAX], want[PATH_MAX];
	struct config_errors errs = { NULL, 0 };

	(void)state;
	env_save();
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	dir = tmpdir_make();
	path_fmt(xdg, sizeof(xdg), "%s/xdg", dir);
	path_fmt(home, sizeof(home), "%s/home", dir);
	assert_int_equal(mkdir(xdg, 0700), 0);
	assert_int_equal(mkdir(home, 0700), 0);

	/* Nothing anywhere: the embedded default. */
	unsetenv("PISBX_CONFIG");
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", home, 1);
	assert_null(config_find(NULL));

	/* Never the current directory, whatever it holds. */
	assert_int_equal(chdir(dir), 0);
	path_fmt(f, sizeof(f), "%s/config.json", dir);
	write_str(f, "{}");
	assert_int_equal(mkdir("pisbx", 0700), 0);
	write_str("pisbx/config.json", "{}");
	assert_int_equal(mkdir(".config", 0700), 0);
	assert_int_equal(mkdir(".config/pisbx", 0700), 0);
	write_str(".config/pisbx/config.json", "{}");
	assert_null(config_find(NULL));
	setenv("XDG_CONFIG_HOME", ".", 1);	/* relative: ignored */
	setenv("HOME", ".", 1);			/* relative: ignored */
	p = config_find(NULL);
	if (p != NULL)
		assert_true(p[0] == '/' && strncmp(p, dir, strlen(dir)) != 0);
	free(p);
	setenv("HOME", home, 1);
	assert_null(config_find(NULL));
	assert_int_equal(chdir(cwd), 0);

	/* ~/.config/pisbx/config.json when it exists. */
	unsetenv("XDG_CONFIG_HOME");
	path_fmt(f, sizeof(f), "%s/.config", home);
	assert_int_equal(mkdir(f, 0700), 0);
	path_fmt(f, sizeof(f), "%s/.config/pisbx", home);
	assert_int_equal(mkdir(f, 0700), 0);
	path_fmt(f, sizeof(f), "%s/.config/pisbx/config.json", home);
	write_str(f, "{}");
	p = config_find(NULL);
	assert_non_null(p);
	assert_string_equal(p, f);
	free(p);
	setenv("XDG_CONFIG_HOME", "", 1);	/* empty: as if unset */
	p = config_find(NULL);
	assert_non_null(p);
	assert_string_equal(p, f);
	free(p);

	/* XDG_CONFIG_HOME set: only there, no fallback to ~/.config. */
	setenv("XDG_CONFIG_HOME", xdg, 1);
	assert_null(config_find(NULL));
	path_fmt(f, sizeof(f), "%s/pisbx", xdg);
	assert_int_equal(mkdir(f, 0700), 0);
	path_fmt(f, sizeof(f), "%s/pisbx/config.json", xdg);
	write_str(f, "{}");
	p = config_find(NULL);
	assert_non_null(p);
	assert_string_equal(p, f);
	free(p);

	/* Something that is not a file there is returned, then refused. */
	assert_int_equal(unlink(f), 0);
	assert_int_equal(mkdir(f, 0700), 0);
	p = config_find(NULL);
	assert_non_null(p);
	assert_string_equal(p, f);
	assert_null(config_load(p, &errs));
	assert_int_equal(errs.n, 1);
	path_fmt(want, sizeof(want), "%s: not a regular file", f);
	assert_string_equal(errs.msg[0], want);
	config_errors_clear(&errs);
	free(p);

	/* $PISBX_CONFIG wins, even when missing: never a silent fallback. */
	path_fmt(f, sizeof(f), "%s/nope.json", dir);
	setenv("PISBX_CONFIG", f, 1);
	p = config_find(NULL);
	assert_non_null(p);
	assert_string_equal(p, f);
	assert_null(config_load(p, &errs));
	assert_int_equal(errs.n, 1);
	assert_non_null(strstr(errs.msg[0], "cannot open"));
	config_errors_clear(&errs);
	free(p);
	setenv("PISBX_CONFIG", "", 1);		/* empty: as if unset */
	p = config_find(NULL);
	assert_non_null(p);
	assert_string_equal(p + strlen(p) - 18, "/pisbx/config.json");
	assert_memory_equal(p, xdg, strlen(xdg));
	free(p);

	/* --config wins over everything. */
	setenv("PISBX_CONFIG", f, 1);
	p = config_find("/etc/pisbx/cli.json");
	assert_non_null(p);
	assert_string_equal(p, "/etc/pisbx/cli.json");
	free(p);

	/* srt's ~/.srt-settings.json: last, and only when it exists. */
	unsetenv("PISBX_CONFIG");
	unsetenv("XDG_CONFIG_HOME");
	path_fmt(home, sizeof(home), "%s/home2", dir);
	assert_int_equal(mkdir(home, 0700), 0);
	setenv("HOME", home, 1);
	assert_null(config_find(NULL));
	path_fmt(f, sizeof(f), "%s/.srt-settings.json", home);
	write_str(f, "{\"network\": {\"allowLocalBinding\": false}}");
	p = config_find(NULL);
	assert_non_null(p);
	assert_string_equal(p, f);
	free(p);
	/* ... also with XDG_CONFIG_HOME set, when pisbx's own is missing */
	setenv("XDG_CONFIG_HOME", xdg, 1);
	path_fmt(want, sizeof(want), "%s/pisbx/config.json", xdg);
	assert_int_equal(rmdir(want), 0);
	p = config_find(NULL);
	assert_non_null(p);
	assert_string_equal(p, f);
	free(p);
	/* pisbx's own file wins over srt's. */
	write_str(want, "{}");
	p = config_find(NULL);
	assert_non_null(p);
	assert_string_equal(p, want);
	free(p);
	/* Never a relative HOME: the working directory's is not read. */
	unsetenv("XDG_CONFIG_HOME");
	assert_int_equal(chdir(home), 0);
	setenv("HOME", ".", 1);
	p = config_find(NULL);
	if (p != NULL)
		assert_true(strncmp(p, home, strlen(home)) != 0);
	free(p);
	assert_int_equal(chdir(cwd), 0);

	rm_rf(dir);
	free(dir);
	env_restore();
}

static void
test_network_policy(void **state)
{
	struct config_errors errs = { NULL, 0 };
	struct policy *pol;
	const char *j;

	(void)state;
	j = "{\"allowedDomains\": [\"github.com\", \"GITHUB.com\", "
	    "\"*.npmjs.org\"], \"deniedDomains\": [\"*\"]}";
	pol = config_network_policy(j, strlen(j), "reply", &errs);
	assert_non_null(pol);
	assert_int_equal(errs.n, 0);
	assert_int_equal(policy_count(pol, POLICY_ALLOW), 2);
	assert_int_equal(policy_count(pol, POLICY_DENY), 1);
	policy_free(pol);

	j = "{}";
	pol = config_network_policy(j, strlen(j), "reply", &errs);
	assert_non_null(pol);
	assert_int_equal(policy_count(pol, POLICY_ALLOW), 0);
	policy_free(pol);

	j = "{\"allowedDomains\": [\"*.com\"], \"deniedDomains\": 3}";
	assert_null(config_network_policy(j, strlen(j), "reply", &errs));
	assert_int_equal(errs.n, 2);
	assert_memory_equal(errs.msg[0],
	    "reply: $.network.allowedDomains[0]: invalid pattern \"*.com\": ",
	    60);
	assert_string_equal(errs.msg[1], "reply: $.network.deniedDomains: "
	    "expected an array of patterns, got 3");
	config_errors_clear(&errs);

	/* Only the two lists: a config-file key is an extra field here. */
	j = "{\"allowedDomains\": [], \"allowAllUnixSockets\": true}";
	assert_null(config_network_policy(j, strlen(j), "reply", &errs));
	assert_int_equal(errs.n, 1);
	assert_non_null(strstr(errs.msg[0],
	    "reply: $.network.allowAllUnixSockets: unknown key"));
	config_errors_clear(&errs);

	j = "{\"network\": {\"allowedDomains\": []}}";
	assert_null(config_network_policy(j, strlen(j), "reply", &errs));
	assert_int_equal(errs.n, 1);
	config_errors_clear(&errs);

	j = "[\"github.com\"]";
	assert_null(config_network_policy(j, strlen(j), "reply", &errs));
	assert_string_equal(errs.msg[0],
	    "reply: $.network: expected an object, got an array");
	config_errors_clear(&errs);

	j = "{\"allowedDomains\": [], \"allowedDomains\": [\"x.com\"]}";
	assert_null(config_network_policy(j, strlen(j), "reply", &errs));
	assert_non_null(strstr(errs.msg[0], "duplicate object key"));
	config_errors_clear(&errs);

	j = "{\"allowedDomains\": [";
	assert_null(config_network_policy(j, strlen(j), "reply", &errs));
	assert_non_null(strstr(errs.msg[0], "reply: line 1, column"));
	config_errors_clear(&errs);

	/* The text need not be NUL-terminated: only len bytes count. */
	j = "{}garbage";
	pol = config_network_policy(j, 2, NULL, &errs);
	assert_non_null(pol);
	policy_free(pol);
}

/* Values in messages are quoted, escaped and cut short. */
/*
 * An allow entry for the loopback loads, with a warning naming it and
 * the loopback name to use instead; deny entries and look-alikes do not.
 */
/* network.budget: both keys read, the largest byte count whole. */
static void
test_budget(void **state)
{
	struct config_errors errs = { NULL, 0 };
	struct config *conf;
	uint64_t bytes;
	int conns;
	char key[96];

	(void)state;
	conf = load("{\"network\": {\"budget\": {\"bytesUpPerHost\": "
	    "1099511627776, \"connectionsPerHost\": 7}}}", &errs);
	assert_non_null(conf);
	assert_true(conf->budget_bytes_up == 1099511627776ULL);
	assert_int_equal(conf->budget_connections, 7);
	config_free(conf);
	conf = load("{\"network\": {\"budget\": {\"bytesUpPerHost\": 10, "
	    "\"hosts\": [{\"host\": \"API.Example.COM.\", \"connections\": 3},"
	    " {\"host\": \"b.example\", \"bytesUp\": 99}]}}}", &errs);
	assert_non_null(conf);
	config_budget(conf, "api.example.com", &bytes, &conns);
	assert_true(bytes == 10);
	assert_int_equal(conns, 3);
	config_budget(conf, "b.example", &bytes, &conns);
	assert_true(bytes == 99);
	assert_int_equal(conns, 0);
	config_budget(conf, "c.example", &bytes, &conns);
	assert_true(bytes == 10);
	config_budget_key(conf, "b.example", 1, key, sizeof(key));
	assert_string_equal(key, "network.budget.hosts[1].bytesUp");
	config_budget_key(conf, "b.example", 0, key, sizeof(key));
	assert_string_equal(key, "network.budget.connectionsPerHost");
	config_free(conf);
	conf = load("{\"network\": {\"budget\": {}}}", &errs);
	assert_non_null(conf);
	assert_true(conf->budget_bytes_up == 0);
	assert_int_equal(conf->budget_connections, 0);
	config_free(conf);
	config_errors_clear(&errs);
}

static void
test_loopback_warnings(void **state)
{
	static const char json[] = "{\"network\": {\"allowedDomains\": ["
	    "\"localhost:3000\", \"127.0.0.2\", \"[::1]:8080\", "
	    "\"api.localhost\", \"*.b.localhost\", \"localhost.example\", "
	    "\"mylocalhost\", \"host.pisbx.internal:3000\", \"128.0.0.1\"], "
	    "\"deniedDomains\": [\"localhost\", \"127.0.0.1\"]}}";
	static const char *const want[] = {
		"$.network.allowedDomains[0]: \"localhost:3000\" names the "
		    "loopback",
		"$.network.allowedDomains[1]: \"127.0.0.2\" names the loopback",
		"$.network.allowedDomains[2]: \"[::1]:8080\" names the "
		    "loopback",
		"$.network.allowedDomains[3]: \"api.localhost\" names the "
		    "loopback",
		"$.network.allowedDomains[4]: \"*.b.localhost\" names the "
		    "loopback",
	};
	struct config_errors errs = { NULL, 0 };
	struct config *conf;
	size_t i;

	(void)state;
	conf = load(json, &errs);
	if (conf == NULL)
		dump_errors(&errs);
	assert_non_null(conf);
	assert_int_equal(conf->warnings.n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < conf->warnings.n; i++) {
		if (strstr(conf->warnings.v[i], want[i]) == NULL)
			fail_msg("warning %zu: %s\nwant: %s", i,
			    conf->warnings.v[i], want[i]);
	}
	assert_non_null(strstr(conf->warnings.v[0],
	    "allow \"host.pisbx.internal:3000\" and use that name"));
	assert_non_null(strstr(conf->warnings.v[1],
	    "allow \"host.pisbx.internal:PORT\""));
	config_free(conf);
	config_errors_clear(&errs);
}

/*
 * A review.command that cannot run (missing, not a file, not executable)
 * loads -- every review is then a deny -- with a warning naming the key
 * and the program; one that can run says nothing.
 */
static void
test_review_command_warn(void **state)
{
	static const struct {
		const char	*prog;	/* NULL: the temporary file */
		const char	*want;	/* NULL: no warning */
	} t[] = {
		{ "/nonexistent/pisbx-reviewer", "t.json: $.review.command[0]: "
		    "the reviewer \"/nonexistent/pisbx-reviewer\" cannot be "
		    "run: No such file or directory: every destination no "
		    "list matches will be refused (review:error) until it can" },
		{ "/", "the reviewer \"/\" is not a regular file" },
		{ NULL, "is not executable (Permission denied)" },
		{ "/bin/sh", NULL },
	};
	struct config_errors errs = { NULL, 0 };
	struct config *conf;
	char path[] = "/tmp/pisbx-test-reviewer.XXXXXX", json[256];
	size_t i;
	int fd;

	(void)state;
	assert_true((fd = mkstemp(path)) != -1);
	assert_int_equal(fchmod(fd, 0644), 0);
	close(fd);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(json, sizeof(json), "{\"review\": {\"command\": "
		    "[\"%s\", \"--x\"]}}", t[i].prog != NULL ? t[i].prog :
		    path);
		conf = load(json, &errs);
		if (conf == NULL)
			dump_errors(&errs);
		assert_non_null(conf);
		if (t[i].want == NULL)
			assert_int_equal(conf->warnings.n, 0);
		else {
			assert_int_equal(conf->warnings.n, 1);
			if (strstr(conf->warnings.v[0], t[i].want) == NULL)
				fail_msg("row %zu: %s\nwant: %s", i,
				    conf->warnings.v[0], t[i].want);
		}
		config_free(conf);
	}
	unlink(path);
}

static void
test_message_values(void **state)
{
	struct config_errors errs = { NULL, 0 };
	char json[512];
	size_t i;

	(void)state;
	assert_null(load("{\"review\": {\"mode\": \"\\u001b[31mred\\u202e\"}}",
	    &errs));
	assert_int_equal(errs.n, 1);
	assert_non_null(strstr(errs.msg[0],
	    "got \"\\u001b[31mred\\u202e\""));
	check_printable(&errs);
	config_errors_clear(&errs);

	assert_null(load("{\"review\": {\"mode\": \"\\ud83d\\ude00\\\"\\\\\"}}",
	    &errs));
	assert_non_null(strstr(errs.msg[0], "got \"\\U0001f600\\\"\\\\\""));
	config_errors_clear(&errs);

	strcpy(json, "{\"review\":{\"mode\":\"");
	i = strlen(json);
	memset(json + i, 'a', 200);
	strcpy(json + i + 200, "\"}}");
	assert_null(load(json, &errs));
	assert_non_null(strstr(errs.msg[0], "aaaa...\""));
	assert_true(strlen(errs.msg[0]) < 180);
	config_errors_clear(&errs);
}

/* A config whose upstream takes its credentials from file (or env). */
static struct config *
load_cred(const char *file, const char *env, struct config_errors *errs)
{
	char json[PATH_MAX + 256];

	path_fmt(json, sizeof(json), "{\"network\": {\"parentProxy\": "
	    "{\"http\": \"http://p.corp:3128\", \"%s\": \"%s\"}}}",
	    file != NULL ? "credentialsFile" : "credentialsEnv",
	    file != NULL ? file : env);
	return load(json, errs);
}

/* No message quotes the password. */
static void
no_secret(const struct config_errors *errs, const char *secret)
{
	size_t i;

	for (i = 0; i < errs->n; i++)
		if (strstr(errs->msg[i], secret) != NULL)
			fail_msg("a message quotes the password: %s",
			    errs->msg[i]);
}

/*
 * network.parentProxy: both noProxy forms, the credentials from a file
 * (its mode, owner, shape) and from the environment, as the header value
 * they become; no message ever quotes them.
 */
static void
test_parent(void **state)
{
	static const struct {
		const char	*data;
		mode_t		 mode;
		const char	*want;	/* NULL: accepted */
	} files[] = {
		{ "alice:hunter2\n", 0600, NULL },
		{ "alice:hunter2", 0400, NULL },
		{ "alice:hunter2\r\n", 0640, NULL },
		{ "alice:hunter2\n", 0644, "is open to others (mode 0644): it "
		    "holds a password (chmod 600 the file)" },
		{ "alice:hunter2\n", 0604, "is open to others (mode 0604)" },
		{ "alice:hunter2\n", 0620, "is open to others (mode 0620)" },
		{ "alice:hunter2\n", 0602, "is open to others" },
		{ "", 0600, "is empty" },
		{ "\n", 0600, "is empty" },
		{ "alice:hunter2\nbob:hunter2\n", 0600, "control character" },
		{ "alice:hunter2\n\n", 0600, "control character" },
		{ "alicehunter2\n", 0600, "expected USER:PASSWORD (no ':'" },
	};
	struct config_errors errs = { NULL, 0 };
	struct config *conf;
	const char *json;
	char *dir, path[PATH_MAX], big[PARENT_CRED_MAX + 8];
	size_t i;

	(void)state;
	/* Both noProxy forms, and where each target goes. */
	conf = load("{\"network\": {\"parentProxy\": {\"http\": "
	    "\"http://10.9.9.9:3128/\", \"https\": \"HTTP://Gw.Corp:8443\", "
	    "\"noProxy\": \" corp.example , .internal,10.0.0.0/8,\"}}}", &errs);
	dump_errors(&errs);
	assert_non_null(conf);
	assert_non_null(conf->parent);
	assert_string_equal(conf->parent->http.text, "10.9.9.9:3128");
	assert_string_equal(conf->parent->https.text, "gw.corp:8443");
	assert_null(conf->parent->auth);
	assert_int_equal(conf->parent->ncidr, 1);
	assert_int_equal(policy_count(conf->parent->direct, POLICY_ALLOW), 4);
	config_free(conf);
	conf = load("{\"network\": {\"parentProxy\": {\"http\": "
	    "\"http://p:3128\", \"noProxy\": [\"corp.example\", "
	    "\"*.internal\", \"[fd00::]/8\", \"*\"]}}}", &errs);
	dump_errors(&errs);
	assert_non_null(conf);
	assert_false(conf->parent->https.set);
	assert_int_equal(policy_count(conf->parent->direct, POLICY_ALLOW), 2);
	assert_int_equal(conf->parent->ncidr, 1);
	assert_true(conf->parent->direct_all);
	/* Plain HTTP goes inside a tunnel unless the config says otherwise. */
	assert_false(conf->parent->http_absolute);
	config_free(conf);
	conf = load("{\"network\": {\"parentProxy\": {\"http\": "
	    "\"http://p:3128\", \"httpForwarding\": \"absolute-form\"}}}",
	    &errs);
	dump_errors(&errs);
	assert_non_null(conf);
	assert_true(conf->parent->http_absolute);
	config_free(conf);
	conf = load("{\"network\": {\"parentProxy\": {\"http\": "
	    "\"http://p:3128\", \"httpForwarding\": \"tunnel\"}}}", &errs);
	dump_errors(&errs);
	assert_non_null(conf);
	assert_false(conf->parent->http_absolute);
	config_free(conf);
	/* Not for a supervisor's policy, which carries the lists only. */
	json = "{\"parentProxy\": {\"http\": \"http://p:1\"}}";
	assert_null(config_network_policy(json, strlen(json), NAME, &errs));
	assert_true(has_error(&errs, "$.network.parentProxy", "unknown key"));
	config_errors_clear(&errs);
	/* The password never in a message, even inside a bad URL. */
	assert_null(load("{\"network\": {\"parentProxy\": {\"https\": "
	    "\"http://alice:hunter2@p:3128\"}}}", &errs));
	no_secret(&errs, "hunter2");
	config_errors_clear(&errs);

	dir = tmpdir_make();
	path_fmt(path, sizeof(path), "%s/parent.cred", dir);
	for (i = 0; i < sizeof(files) / sizeof(*files); i++) {
		unlink(path);
		write_str(path, files[i].data);
		assert_int_equal(chmod(path, files[i].mode), 0);
		conf = load_cred(path, NULL, &errs);
		if (files[i].want == NULL) {
			dump_errors(&errs);
			assert_non_null(conf);
			/* base64("alice:hunter2") */
			assert_string_equal(conf->parent->auth,
			    "Basic YWxpY2U6aHVudGVyMg==");
			assert_string_equal(conf->parent->cred_file, path);
		} else if (conf != NULL || errs.n != 1 || !has_error(&errs,
		    "$.network.parentProxy.credentialsFile", files[i].want)) {
			print_error("credentials file %zu: want \"%s\"\n", i,
			    files[i].want);
			dump_errors(&errs);
			fail();
		}
		no_secret(&errs, "hunter2");
		config_free(conf);
		config_errors_clear(&errs);
	}
	/* Longer than a line of credentials can be. */
	memset(big, 'x', sizeof(big));
	big[1] = ':';
	write_file(path, big, sizeof(big));
	assert_int_equal(chmod(path, 0600), 0);
	assert_null(load_cred(path, NULL, &errs));
	assert_true(has_error(&errs, "$.network.parentProxy.credentialsFile",
	    "is longer than 1024 bytes"));
	config_errors_clear(&errs);
	/* Someone else's file is not trusted (as root: give it away). */
	if (geteuid() == 0) {
		write_str(path, "alice:hunter2\n");
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_null(load_cred(path, NULL, &errs));
		assert_true(has_error(&errs,
		    "$.network.parentProxy.credentialsFile",
		    "belongs to uid 65534"));
		config_errors_clear(&errs);
	}
	unlink(path);
	rm_rf(dir);
	free(dir);

	/* From the environment. */
	setenv("PISBX_TEST_PARENT_CRED", "bob:s3cr3t:with:colons", 1);
	conf = load_cred(NULL, "PISBX_TEST_PARENT_CRED", &errs);
	dump_errors(&errs);
	assert_non_null(conf);
	assert_string_equal(conf->parent->auth,
	    "Basic Ym9iOnMzY3IzdDp3aXRoOmNvbG9ucw==");
	assert_string_equal(conf->parent->cred_env, "PISBX_TEST_PARENT_CRED");
	config_free(conf);
	setenv("PISBX_TEST_PARENT_CRED", "", 1);
	assert_null(load_cred(NULL, "PISBX_TEST_PARENT_CRED", &errs));
	assert_true(has_error(&errs, "$.network.parentProxy.credentialsEnv",
	    "PISBX_TEST_PARENT_CRED is empty"));
	config_errors_clear(&errs);
	setenv("PISBX_TEST_PARENT_CRED", "bob:s3cr3t\r\nX: y", 1);
	assert_null(load_cred(NULL, "PISBX_TEST_PARENT_CRED", &errs));
	assert_true(has_error(&errs, "$.network.parentProxy.credentialsEnv",
	    "the variable \"PISBX_TEST_PARENT_CRED\": the credentials contain a "
	    "control character"));
	no_secret(&errs, "s3cr3t");
	config_errors_clear(&errs);
	unsetenv("PISBX_TEST_PARENT_CRED");
}

int
main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_review_modes),
		cmocka_unit_test(test_all_errors),
		cmocka_unit_test(test_error_cap),
		cmocka_unit_test(test_embedded_default),
		cmocka_unit_test(test_example),
		cmocka_unit_test(test_schema),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_network_policy),
		cmocka_unit_test(test_message_values),
		cmocka_unit_test(test_parent),
		cmocka_unit_test(test_loopback_warnings),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_review_command_warn),
	};
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);
	size_t nbad = sizeof(bad_cases) / sizeof(bad_cases[0]);
	struct CMUnitTest *tests;
	char **names;
	size_t i;
	int rc;

	/* One group, so the runner sees one summary: one test per case. */
	tests = calloc(nfixed + nbad, sizeof(*tests));
	names = calloc(nbad, sizeof(*names));
	if (tests == NULL || names == NULL)
		return 1;
	memcpy(tests, fixed, sizeof(fixed));
	for (i = 0; i < nbad; i++) {
		if (asprintf(&names[i], "invalid %zu %s", i, bad_cases[i].path)
		    == -1)
			return 1;
		tests[nfixed + i].name = names[i];
		tests[nfixed + i].test_func = test_invalid_case;
		tests[nfixed + i].initial_state = (void *)&bad_cases[i];
	}
	rc = _cmocka_run_group_tests("config", tests, nfixed + nbad, NULL,
	    NULL);
	for (i = 0; i < nbad; i++)
		free(names[i]);
	free(names);
	free(tests);
	return rc;
}
