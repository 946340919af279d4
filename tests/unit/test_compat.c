/*
 * srt settings files and pi-sandbox configs, as they are: the JSON
 * examples of srt's README, a pi-sandbox config with every key, and each
 * srt and pi-sandbox key honoured, mapped, accepted with a note or refused
 * with the pisbx way -- never ignored.  Also deniedDomainReasons carried
 * to the deciding pattern, and filesystem patterns: well formed in
 * denyRead, allowRead and denyWrite (pisbx-run enforces them), a
 * directory's contents ("dir/" + "**") the only one in allowWrite.
 */

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"

#define NAME	"srt.json"

/* What one key does: loads with a note, loads silently, or is refused. */
enum outcome {
	QUIET,		/* loads, no note */
	NOTE,		/* loads, one note at path containing want */
	ERROR		/* refused, one error at path containing want */
};

struct key_case {
	const char	*json;
	enum outcome	 outcome;
	const char	*path;
	const char	*want;
};

static struct config *load(const char *, struct config_errors *);
static int	 has_line(const struct config_errors *, const char *,
		    const char *);
static void	 dump(const char *, const struct config_errors *);
static int	 has_str(const struct strlist *, const char *);
static enum verdict eval(const struct policy *, const char *, uint16_t,
		    const struct pattern **);

/* srt's README, "Complete Configuration Example", verbatim. */
static const char srt_full[] =
"{\n"
"  \"network\": {\n"
"    \"allowedDomains\": [\n"
"      \"github.com\",\n"
"      \"*.github.com\",\n"
"      \"lfs.github.com\",\n"
"      \"api.github.com\",\n"
"      \"npmjs.org\",\n"
"      \"*.npmjs.org\"\n"
"    ],\n"
"    \"deniedDomains\": [\"malicious.com\"],\n"
"    \"allowUnixSockets\": [\"/var/run/docker.sock\"],\n"
"    \"allowLocalBinding\": false\n"
"  },\n"
"  \"filesystem\": {\n"
"    \"denyRead\": [\"~/.ssh\"],\n"
"    \"allowRead\": [],\n"
"    \"allowWrite\": [\".\", \"src/\", \"test/\", \"/tmp\"],\n"
"    \"denyWrite\": [\".env\", \"config/production.json\"]\n"
"  },\n"
"  \"ignoreViolations\": {\n"
"    \"*\": [\"/usr/bin\", \"/System\"],\n"
"    \"git push\": [\"/usr/bin/nc\"],\n"
"    \"npm\": [\"/private/tmp\"]\n"
"  },\n"
"  \"enableWeakerNestedSandbox\": false,\n"
"  \"enableWeakerNetworkIsolation\": false,\n"
"  \"allowAppleEvents\": false\n"
"}\n";

/* srt's other README examples that are whole JSON settings files. */
static const char *const srt_examples_ok[] = {
	/* ~/.srt-settings.json for an MCP server */
	"{\"filesystem\": {\"denyRead\": [], \"allowWrite\": [\".\"], "
	    "\"denyWrite\": [\"~/sensitive-folder\"]}, \"network\": "
	    "{\"allowedDomains\": [], \"deniedDomains\": []}}",
	/* Allow GitHub access */
	"{\"network\": {\"allowedDomains\": [\"github.com\", \"*.github.com\", "
	    "\"lfs.github.com\", \"api.github.com\"], \"deniedDomains\": []}, "
	    "\"filesystem\": {\"denyRead\": [], \"allowWrite\": [\".\"], "
	    "\"denyWrite\": []}}",
	/* Restrict to specific directories */
	"{\"network\": {\"allowedDomains\": [], \"deniedDomains\": []}, "
	    "\"filesystem\": {\"denyRead\": [\"~/.ssh\"], \"allowWrite\": "
	    "[\".\", \"src/\", \"test/\"], \"denyWrite\": [\".env\", "
	    "\"secrets/\"]}}",
	/* Workspace-only filesystem access */
	"{\"network\": {\"allowedDomains\": [], \"deniedDomains\": []}, "
	    "\"filesystem\": {\"denyRead\": [\"/Users\"], \"allowRead\": "
	    "[\".\"], \"allowWrite\": [\".\"], \"denyWrite\": []}}",
	/* Path syntax: a pattern in denyRead */
	"{\"filesystem\": {\"denyRead\": [\"**/build/**\"]}}",
	/* TLS termination */
	"{\"network\": {\"allowedDomains\": [\"*.example.com\", "
	    "\"internal-mtls.example.net\"], \"deniedDomains\": [], "
	    "\"tlsTerminate\": {\"excludeDomains\": "
	    "[\"internal-mtls.example.net\"], \"extraCaCertPaths\": "
	    "[\"/etc/internal-mtls-roots.pem\"]}}}",
};

/* srt README examples pisbx refuses, each with the way it says so. */
static const struct key_case srt_examples_refused[] = {
	/* Linux search depth */
	{ "{\"mandatoryDenySearchDepth\": 5, \"filesystem\": "
	    "{\"allowWrite\": [\".\"]}}", ERROR, "$.mandatoryDenySearchDepth",
	    "add deeper files to filesystem.denyWrite" },
	/* Path syntax: a pattern in allowWrite */
	{ "{\"filesystem\": {\"allowWrite\": [\"src/**/*.ts\"]}}", ERROR,
	    "$.filesystem.allowWrite[0]", "allowWrite takes directories" },
};

/* Every srt and pi-sandbox key that is not pisbx's own. */
static const struct key_case key_cases[] = {
	/* honoured or mapped */
	{ "{\"network\": {\"strictAllowlist\": true}}", QUIET, NULL, NULL },
	{ "{\"network\": {\"strictAllowlist\": false}, \"review\": "
	    "{\"mode\": \"tty\"}}", QUIET, NULL, NULL },
	{ "{\"network\": {\"strictAllowlist\": true}, \"review\": "
	    "{\"mode\": \"tty\"}}", ERROR, "$.network.strictAllowlist",
	    "contradicts \"review\"" },
	{ "{\"network\": {\"strictAllowlist\": 1}}", ERROR,
	    "$.network.strictAllowlist", "expected true or false" },
	{ "{\"network\": {\"deniedDomains\": [\"a.com\"], "
	    "\"deniedDomainReasons\": {\"a.com\": \"no\"}}}", QUIET, NULL,
	    NULL },
	{ "{\"filesystem\": {\"additionalAllowRead\": [\"/opt/x\"]}}", QUIET,
	    NULL, NULL },
	{ "{\"filesystem\": {\"disabled\": false}}", QUIET, NULL, NULL },
	{ "{\"enableWeakerNestedSandbox\": false}", QUIET, NULL, NULL },
	{ "{\"requireNamespaces\": true}", QUIET, NULL, NULL },
	{ "{\"requireNamespaces\": true, \"enableWeakerNestedSandbox\": "
	    "false}", QUIET, NULL, NULL },
	{ "{\"requireNamespaces\": true, \"enableWeakerNestedSandbox\": "
	    "true}", ERROR, "$.enableWeakerNestedSandbox", "contradicts" },
	{ "{\"requireNamespaces\": \"yes\"}", ERROR, "$.requireNamespaces",
	    "expected true or false" },
	{ "{\"network\": {\"allowUnixSockets\": [\"/var/run/docker.sock\"]}}",
	    QUIET, NULL, NULL },
	{ "{\"network\": {\"allowUnixSockets\": []}}", QUIET, NULL, NULL },
	/* accepted without effect, with a note */
	{ "{\"network\": {\"allowAllUnixSockets\": true, \"allowUnixSockets\": "
	    "[\"/var/run/docker.sock\"]}}", NOTE, "$.network.allowUnixSockets",
	    "no effect here: allowAllUnixSockets is true" },
	{ "{\"network\": {\"allowLocalBinding\": true}}", NOTE,
	    "$.network.allowLocalBinding", "own network namespace" },
	{ "{\"network\": {\"allowMachLookup\": [\"com.x.*\"]}}", NOTE,
	    "$.network.allowMachLookup", "macOS only" },
	{ "{\"ignoreViolations\": {\"*\": [\"/usr/bin\"]}}", NOTE,
	    "$.ignoreViolations", "silences nothing" },
	{ "{\"enableWeakerNestedSandbox\": true}", NOTE,
	    "$.enableWeakerNestedSandbox", "confines the command without them" },
	{ "{\"enableWeakerNetworkIsolation\": true}", NOTE,
	    "$.enableWeakerNetworkIsolation", "macOS only" },
	{ "{\"allowAppleEvents\": true}", NOTE, "$.allowAppleEvents",
	    "macOS only" },
	{ "{\"allowPty\": true}", NOTE, "$.allowPty", "macOS only" },
	{ "{\"ripgrep\": {\"command\": \"rg\"}}", NOTE, "$.ripgrep",
	    "runs no ripgrep" },
	{ "{\"seccomp\": {\"applyPath\": \"/x\"}}", NOTE, "$.seccomp",
	    "builds its seccomp filter itself" },
	{ "{\"bwrapPath\": \"/usr/bin/bwrap\"}", NOTE, "$.bwrapPath",
	    "bubblewrap" },
	{ "{\"socatPath\": \"/usr/bin/socat\"}", NOTE, "$.socatPath",
	    "socat" },
	{ "{\"javaAgentJarPath\": \"/opt/a.jar\"}", NOTE,
	    "$.javaAgentJarPath", "JAVA_TOOL_OPTIONS" },
	{ "{\"windows\": {\"proxyPortRange\": [1, 2]}}", NOTE, "$.windows",
	    "Windows only" },
	{ "{\"git\": {\"safeDirectories\": [\"/w\"]}}", NOTE, "$.git",
	    "safe.directory" },
	{ "{\"subagents\": {\"provider\": \"pi-subagents\"}}", NOTE,
	    "$.subagents.provider", "a subagent's included" },
	{ "{\"subagents\": {\"externalWorkerIsolation\": \"off\"}}", NOTE,
	    "$.subagents.externalWorkerIsolation", "starts no workers" },
	/* refused, naming the pisbx way */
	{ "{\"credentials\": {\"files\": []}}", QUIET, NULL, NULL },
	{ "{\"credentials\": {\"awsPairs\": []}}", ERROR,
	    "$.credentials.awsPairs", "does not re-sign AWS SigV4" },
	{ "{\"credentials\": {\"sigv4\": {\"streaming\": \"deny\"}}}",
	    ERROR, "$.credentials.sigv4", "does not re-sign AWS SigV4" },
	{ "{\"network\": {\"allowPlaintextHeaderSet\": true}}", ERROR,
	    "$.network.allowPlaintextHeaderSet", "sets no header" },
	{ "{\"network\": {\"allowPlaintextHeaderSet\": false}}", QUIET,
	    NULL, NULL },
	{ "{\"network\": {\"stripResponseHeaders\": [\"set-cookie\"]}}",
	    ERROR, "$.network.stripResponseHeaders", "as the upstream sent" },
	{ "{\"network\": {\"refuseOpaqueTunnels\": true}}", ERROR,
	    "$.network.refuseOpaqueTunnels", "requestRules" },
	{ "{\"network\": {\"refuseOpaqueTunnels\": false}}", QUIET, NULL,
	    NULL },
	{ "{\"network\": {\"requireHostMatch\": true}}", NOTE,
	    "$.network.requireHostMatch", "always answers 421" },
	{ "{\"network\": {\"ambiguousRequestTarget\": \"refuse\"}}",
	    NOTE, "$.network.ambiguousRequestTarget", "always refuses (400)" },
	{ "{\"network\": {\"ambiguousRequestTarget\": \"asSpelled\"}}",
	    ERROR, "$.network.ambiguousRequestTarget",
	    "\"asSpelled\" is not supported" },
	{ "{\"network\": {\"ambiguousRequestTarget\": \"normalize\"}}",
	    ERROR, "$.network.ambiguousRequestTarget", "write \"refuse\"" },
	{ "{\"network\": {\"ambiguousRequestTarget\": \"drop\"}}",
	    ERROR, "$.network.ambiguousRequestTarget", "expected \"refuse\"" },
	{ "{\"mandatoryDenySearchDepth\": 3}", ERROR,
	    "$.mandatoryDenySearchDepth", "filesystem.denyWrite" },
	{ "{\"network\": {\"httpProxyPort\": 8080}}", ERROR,
	    "$.network.httpProxyPort", "pisbx-proxy --listen" },
	{ "{\"network\": {\"socksProxyPort\": 1080}}", ERROR,
	    "$.network.socksProxyPort", "pisbx-proxy --listen" },
	{ "{\"network\": {\"mitmProxy\": {\"socketPath\": \"/s\", "
	    "\"domains\": [\"a.com\"]}}}", ERROR, "$.network.mitmProxy",
	    "TLS-intercepting" },
	{ "{\"network\": {\"filterRequest\": \"x\"}}", ERROR,
	    "$.network.filterRequest", "review.command" },
	{ "{\"network\": {\"tlsTerminate\": {}}}", QUIET, NULL, NULL },
	{ "{\"network\": {\"parentProxy\": {\"http\": \"http://p:3128\"}}}",
	    QUIET, NULL, NULL },
	{ "{\"filesystem\": {\"disabled\": true}}", ERROR,
	    "$.filesystem.disabled", "widen the policy instead" },
	{ "{\"subagents\": {\"externalWorkerIsolation\": \"enforce\"}}",
	    ERROR, "$.subagents.externalWorkerIsolation", "under pisbx-run" },
	/* wrong types and values are errors like pisbx's own */
	{ "{\"allowAppleEvents\": \"no\"}", ERROR, "$.allowAppleEvents",
	    "expected true or false, got \"no\"" },
	{ "{\"ignoreViolations\": []}", ERROR, "$.ignoreViolations",
	    "expected an object" },
	{ "{\"bwrapPath\": \"bwrap\"}", ERROR, "$.bwrapPath",
	    "expected an absolute path" },
	{ "{\"network\": {\"allowMachLookup\": [1]}}", ERROR,
	    "$.network.allowMachLookup", "expected an array of strings" },
	{ "{\"network\": {\"allowUnixSockets\": [\"docker.sock\"]}}", ERROR,
	    "$.network.allowUnixSockets[0]", "expected an absolute path" },
	{ "{\"network\": {\"allowUnixSockets\": [\"/tmp/"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "x.sock\"]}}", ERROR, "$.network.allowUnixSockets[0]",
	    "longer than 107 bytes" },
	{ "{\"subagents\": {\"provider\": \"all\"}}", ERROR,
	    "$.subagents.provider", "expected \"builtin\", \"pi-subagents\"" },
	{ "{\"subagents\": {\"externalWorkerIsolation\": true}}", ERROR,
	    "$.subagents.externalWorkerIsolation", "expected a string" },
	{ "{\"subagents\": {\"protection\": \"x\"}}", ERROR,
	    "$.subagents.protection", "unknown key" },
	{ "{\"subagents\": []}", ERROR, "$.subagents", "expected an object" },
	{ "{\"filesystem\": {\"additionalAllowRead\": [\"rel/bin\"]}}", ERROR,
	    "$.filesystem.additionalAllowRead[0]",
	    "expected an absolute path" },
	{ "{\"filesystem\": {\"additionalAllowRead\": [\"~/pi-extra\", "
	    "\"~\"]}}", QUIET, NULL, NULL },
	{ "{\"filesystem\": {\"additionalAllowRead\": [\"~user/x\"]}}",
	    ERROR, "$.filesystem.additionalAllowRead[0]",
	    "expected an absolute path" },
	{ "{\"allowNestedUserNamespaces\": true}", QUIET, NULL, NULL },
	{ "{\"allowNestedUserNamespaces\": false}", QUIET, NULL, NULL },
	{ "{\"allowNestedUserNamespaces\": \"yes\"}", ERROR,
	    "$.allowNestedUserNamespaces", "expected true or false" },
	{ "{\"network\": {\"deniedResolvedAddresses\": [\"10.0.0.0/8\"]}}",
	    ERROR, "$.network.deniedResolvedAddresses",
	    "already refuses every non-public address" },
	{ "{\"seccomp\": {\"applyPath\": \"/x\", \"argv0\": \"a\"}}", NOTE,
	    "$.seccomp", "builds its seccomp filter itself" },
	{ "{\"credentials\": {\"envVars\": [{\"name\": \"T\", "
	    "\"mode\": \"mask\"}]}}", ERROR, "$.credentials",
	    "requires network.tlsTerminate" },
	{ "{\"network\": {\"tlsTerminate\": {\"caCertPath\": \"/c\"}}}",
	    ERROR, "$.network.tlsTerminate", "provided together" },
	{ "{\"filesystem\": {\"additionalAllowRead\": [\"/opt/*\"]}}", QUIET,
	    NULL, NULL },
	{ "{\"filesystem\": {\"additionalAllowRead\": [\"/opt/[\"]}}", ERROR,
	    "$.filesystem.additionalAllowRead[0]", "invalid pattern" },
	{ "{\"filesystem\": {\"disabled\": 0}}", ERROR,
	    "$.filesystem.disabled", "expected true or false" },
};

/* deniedDomainReasons that are refused. */
static const struct key_case reason_cases[] = {
	{ "{\"network\": {\"deniedDomains\": [\"a.com\"], "
	    "\"deniedDomainReasons\": {\"b.com\": \"x\"}}}", ERROR,
	    "$.network.deniedDomainReasons[\"b.com\"]",
	    "no deniedDomains entry is \"b.com\"" },
	{ "{\"network\": {\"deniedDomains\": [\"a.com:22\"], "
	    "\"deniedDomainReasons\": {\"a.com\": \"x\"}}}", ERROR,
	    "$.network.deniedDomainReasons[\"a.com\"]", "no deniedDomains" },
	{ "{\"network\": {\"allowedDomains\": [\"a.com\"], "
	    "\"deniedDomainReasons\": {\"a.com\": \"x\"}}}", ERROR,
	    "$.network.deniedDomainReasons[\"a.com\"]", "no deniedDomains" },
	{ "{\"network\": {\"deniedDomains\": [\"a.com\"], "
	    "\"deniedDomainReasons\": {\"a.com\": \"x\", \"A.COM.\": \"y\"}}}",
	    ERROR, "$.network.deniedDomainReasons[\"A.COM.\"]",
	    "the entry a.com has a reason already" },
	{ "{\"network\": {\"deniedDomains\": [\"a.com\"], "
	    "\"deniedDomainReasons\": {\"a.com\": \"\"}}}", ERROR,
	    "$.network.deniedDomainReasons[\"a.com\"]", "an empty reason" },
	{ "{\"network\": {\"deniedDomains\": [\"a.com\"], "
	    "\"deniedDomainReasons\": {\"a.com\": \"x\\u001b[2J\"}}}", ERROR,
	    "$.network.deniedDomainReasons[\"a.com\"]", "control character" },
	{ "{\"network\": {\"deniedDomains\": [\"a.com\"], "
	    "\"deniedDomainReasons\": {\"a.com\": \"a\\nb\"}}}", ERROR,
	    "$.network.deniedDomainReasons[\"a.com\"]", "control character" },
	{ "{\"network\": {\"deniedDomains\": [\"a.com\"], "
	    "\"deniedDomainReasons\": {\"a.com\": \"a\\u009bb\"}}}", ERROR,
	    "$.network.deniedDomainReasons[\"a.com\"]", "control character" },
	{ "{\"network\": {\"deniedDomains\": [\"a.com\"], "
	    "\"deniedDomainReasons\": {\"a.com\": 5}}}", ERROR,
	    "$.network.deniedDomainReasons[\"a.com\"]",
	    "expected a reason string, got 5" },
	{ "{\"network\": {\"deniedDomains\": [\"a.com\"], "
	    "\"deniedDomainReasons\": [\"a.com\"]}}", ERROR,
	    "$.network.deniedDomainReasons", "expected an object" },
	{ "{\"network\": {\"deniedDomains\": [\"a.com\"], "
	    "\"deniedDomainReasons\": {\"https://a.com\": \"x\"}}}", ERROR,
	    "$.network.deniedDomainReasons[\"https://a.com\"]",
	    "not a deniedDomains pattern" },
};

/*
 * Filesystem patterns: accepted when well formed in denyRead, allowRead
 * and denyWrite; in allowWrite only a directory's contents ("dir/" +
 * "**", stored as the directory), since a file created under a matching
 * name would need its whole directory writable.
 */
static const struct key_case glob_cases[] = {
	{ "{\"filesystem\": {\"denyRead\": [\"**/.env\"]}}", QUIET, NULL,
	    NULL },
	{ "{\"filesystem\": {\"denyRead\": [\".\", \"*.pem\"]}}", QUIET,
	    NULL, NULL },
	{ "{\"filesystem\": {\"denyWrite\": [\".env.*\"]}}", QUIET, NULL,
	    NULL },
	{ "{\"filesystem\": {\"allowRead\": [\"~/.config/?\"]}}", QUIET,
	    NULL, NULL },
	{ "{\"filesystem\": {\"allowWrite\": [\"build/**\", \"**\"]}}",
	    QUIET, NULL, NULL },
	{ "{\"filesystem\": {\"allowWrite\": [\"build[0-9]\"]}}", ERROR,
	    "$.filesystem.allowWrite[0]", "\"build[0-9]\": allowWrite takes "
	    "directories, not patterns" },
	{ "{\"filesystem\": {\"allowWrite\": [\"*/**\"]}}", ERROR,
	    "$.filesystem.allowWrite[0]", "allowWrite takes directories" },
	{ "{\"filesystem\": {\"allowWrite\": [\"/**\"]}}", ERROR,
	    "$.filesystem.allowWrite[0]", "allowWrite takes directories" },
	{ "{\"filesystem\": {\"denyRead\": [\"a**b\"]}}", ERROR,
	    "$.filesystem.denyRead[0]", "invalid pattern \"a**b\": '**' only" },
	{ "{\"filesystem\": {\"denyWrite\": [\"[x\"]}}", ERROR,
	    "$.filesystem.denyWrite[0]", "unclosed '['" },
	{ "{\"filesystem\": {\"allowWrite\": [\"a/[x/**\"]}}", ERROR,
	    "$.filesystem.allowWrite[0]", "unclosed '['" },
	/* "]" alone is no pattern: a literal path */
	{ "{\"filesystem\": {\"denyWrite\": [\"a]b\"]}}", QUIET, NULL, NULL },
};

static struct config *
load(const char *json, struct config_errors *errs)
{
	return config_load_buffer(json, strlen(json), NAME, errs);
}

/* A line "srt.json: PATH: ..." containing want. */
static int
has_line(const struct config_errors *e, const char *path, const char *want)
{
	char	 prefix[256];
	size_t	 i;

	snprintf(prefix, sizeof(prefix), "%s: %s: ", NAME, path);
	for (i = 0; i < e->n; i++)
		if (strncmp(e->msg[i], prefix, strlen(prefix)) == 0 &&
		    strstr(e->msg[i], want) != NULL)
			return 1;
	return 0;
}

static void
dump(const char *what, const struct config_errors *e)
{
	size_t	 i;

	for (i = 0; i < e->n; i++)
		print_error("    %s: %s\n", what, e->msg[i]);
}

static int
has_str(const struct strlist *l, const char *s)
{
	size_t	 i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

static enum verdict
eval(const struct policy *p, const char *host, uint16_t port,
    const struct pattern **m)
{
	struct host	 h;
	const char	*err;

	assert_int_equal(host_canon(host, strlen(host), &h, &err), 0);
	return policy_eval(p, &h, port, m);
}

/* One key case: exactly the outcome it names, nothing more. */
static int
run_case(const struct key_case *c)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*conf;
	int			 ok;

	conf = load(c->json, &errs);
	switch (c->outcome) {
	case QUIET:
		ok = conf != NULL && errs.n == 0 && conf->notes.n == 0;
		break;
	case NOTE:
		ok = conf != NULL && errs.n == 0 && conf->notes.n == 1 &&
		    has_line(&conf->notes, c->path, c->want);
		break;
	case ERROR:
	default:
		ok = conf == NULL && errs.n == 1 &&
		    has_line(&errs, c->path, c->want);
		break;
	}
	if (!ok) {
		print_error("%s\nwant %s at %s: %s\n", c->json,
		    c->outcome == QUIET ? "no remark" : c->outcome == NOTE ?
		    "one note" : "one error", c->path != NULL ? c->path : "-",
		    c->want != NULL ? c->want : "");
		dump("error", &errs);
		if (conf != NULL)
			dump("note", &conf->notes);
	}
	config_free(conf);
	config_errors_clear(&errs);
	return ok;
}

static int
run_cases(const struct key_case *c, size_t n)
{
	size_t	 i;
	int	 bad = 0;

	for (i = 0; i < n; i++)
		bad += !run_case(&c[i]);
	return bad;
}

static void
test_srt_full(void **state)
{
	static const char *const noted[] = {
		"$.network.allowLocalBinding",
		"$.ignoreViolations", "$.enableWeakerNetworkIsolation",
		"$.allowAppleEvents",
	};
	struct config_errors	 errs = { NULL, 0 };
	const struct pattern	*m;
	struct config		*conf;
	size_t			 i;

	(void)state;
	conf = load(srt_full, &errs);
	dump("error", &errs);
	assert_non_null(conf);
	assert_int_equal(errs.n, 0);
	/* Every key that changes nothing here is said to. */
	if (conf->notes.n != sizeof(noted) / sizeof(*noted))
		dump("note", &conf->notes);
	assert_int_equal(conf->notes.n, sizeof(noted) / sizeof(*noted));
	for (i = 0; i < sizeof(noted) / sizeof(*noted); i++)
		assert_true(has_line(&conf->notes, noted[i], "no effect here"));
	/* The policy is srt's. */
	assert_int_equal(eval(conf->policy, "github.com", 443, &m),
	    VERDICT_ALLOW);
	assert_int_equal(eval(conf->policy, "lfs.github.com", 443, &m),
	    VERDICT_ALLOW);
	assert_int_equal(eval(conf->policy, "registry.npmjs.org", 443, &m),
	    VERDICT_ALLOW);
	assert_string_equal(m->text, "*.npmjs.org");
	assert_int_equal(eval(conf->policy, "malicious.com", 443, &m),
	    VERDICT_DENY);
	assert_null(m->reason);
	assert_int_equal(eval(conf->policy, "example.com", 443, &m),
	    VERDICT_REVIEW);
	assert_true(conf->fs_deny_read_set);
	assert_int_equal(conf->deny_read.n, 1);
	assert_string_equal(conf->deny_read.v[0], "~/.ssh");
	assert_true(conf->fs_allow_write_set);
	assert_int_equal(conf->allow_write.n, 4);
	assert_true(has_str(&conf->allow_write, "/tmp"));
	assert_true(has_str(&conf->deny_write, "config/production.json"));
	assert_int_equal(conf->allow_read.n, 0);
	assert_int_equal(conf->allow_all_unix_sockets, 0);
	assert_int_equal(conf->allow_unix_sockets.n, 1);
	assert_string_equal(conf->allow_unix_sockets.v[0],
	    "/var/run/docker.sock");
	assert_int_equal(conf->review_mode, REVIEW_NONE);
	config_free(conf);
}

static void
test_srt_examples(void **state)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*conf;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(srt_examples_ok) / sizeof(*srt_examples_ok);
	    i++) {
		conf = load(srt_examples_ok[i], &errs);
		if (conf == NULL || conf->notes.n != 0) {
			print_error("%s\n", srt_examples_ok[i]);
			dump("error", &errs);
		}
		assert_non_null(conf);
		assert_int_equal(conf->notes.n, 0);
		config_free(conf);
	}
	assert_int_equal(run_cases(srt_examples_refused,
	    sizeof(srt_examples_refused) / sizeof(*srt_examples_refused)), 0);
}

/* pi-sandbox 0.8.0's config with every key it knows. */
static void
test_pi_sandbox(void **state)
{
	static const char pi[] =
	    "{\n"
	    "  \"subagents\": {\n"
	    "    \"provider\": \"builtin\",\n"
	    "    \"externalWorkerIsolation\": \"off\"\n"
	    "  },\n"
	    "  \"filesystem\": {\n"
	    "    \"additionalAllowRead\": [\n"
	    "      \"/home/user/.local/bin/rtk\", \"/opt/tools/helper\",\n"
	    "      \"/home/user/.local/bin/rtk\"\n"
	    "    ]\n"
	    "  },\n"
	    "  \"network\": {\n"
	    "    \"allowedDomains\": [\"github.com\", \"*.github.com\",\n"
	    "      \"registry.npmjs.org:443\"],\n"
	    "    \"deniedDomains\": [\"uploads.github.com\", \"*:22\"]\n"
	    "  },\n"
	    "  \"hostIPC\": {\n"
	    "    \"mode\": \"ask\",\n"
	    "    \"preflightCommandPrefixes\": [\"tmux\", \"/usr/bin/tmux\"],\n"
	    "    \"retryOnUnixSocketError\": true\n"
	    "  }\n"
	    "}\n";
	struct config_errors	 errs = { NULL, 0 };
	const struct pattern	*m;
	struct config		*conf;

	(void)state;
	conf = load(pi, &errs);
	dump("error", &errs);
	assert_non_null(conf);
	assert_int_equal(conf->notes.n, 2);
	assert_true(has_line(&conf->notes, "$.subagents.provider",
	    "no effect here"));
	assert_true(has_line(&conf->notes,
	    "$.subagents.externalWorkerIsolation", "no effect here"));
	/* additionalAllowRead extends allowRead; the home stays hidden. */
	assert_int_equal(conf->allow_read.n, 2);
	assert_string_equal(conf->allow_read.v[0], "/home/user/.local/bin/rtk");
	assert_string_equal(conf->allow_read.v[1], "/opt/tools/helper");
	assert_false(conf->fs_deny_read_set);
	assert_int_equal(eval(conf->policy, "api.github.com", 443, &m),
	    VERDICT_ALLOW);
	assert_int_equal(eval(conf->policy, "uploads.github.com", 443, &m),
	    VERDICT_DENY);
	assert_int_equal(eval(conf->policy, "github.com", 22, &m),
	    VERDICT_DENY);
	assert_int_equal(eval(conf->policy, "registry.npmjs.org", 80, &m),
	    VERDICT_REVIEW);
	assert_int_equal(conf->hostipc_mode, HOSTIPC_ASK);
	assert_int_equal(conf->hostipc_prefixes.n, 2);
	assert_true(conf->hostipc_retry);
	config_free(conf);

	/* Merged with allowRead: listed once. */
	conf = load("{\"filesystem\": {\"allowRead\": [\"/opt/x\"], "
	    "\"additionalAllowRead\": [\"/opt/x\", \"/opt/y\"]}}", &errs);
	assert_non_null(conf);
	assert_int_equal(conf->allow_read.n, 2);
	assert_string_equal(conf->allow_read.v[1], "/opt/y");
	config_free(conf);

	/* "~" kept for pisbx-run to expand, as in allowRead. */
	conf = load("{\"filesystem\": {\"additionalAllowRead\": "
	    "[\"~/pi-extra\"]}}", &errs);
	dump("error", &errs);
	assert_non_null(conf);
	assert_int_equal(conf->allow_read.n, 1);
	assert_string_equal(conf->allow_read.v[0], "~/pi-extra");
	config_free(conf);

	/* allowNestedUserNamespaces reaches the config; off by default. */
	conf = load("{\"allowNestedUserNamespaces\": true}", &errs);
	assert_non_null(conf);
	assert_true(conf->allow_nested_userns);
	config_free(conf);
	conf = load("{}", &errs);
	assert_non_null(conf);
	assert_false(conf->allow_nested_userns);
	config_free(conf);
}

static void
test_keys(void **state)
{
	(void)state;
	assert_int_equal(run_cases(key_cases,
	    sizeof(key_cases) / sizeof(*key_cases)), 0);
}

/* The reason goes with the deny entry that decides. */
static void
test_reasons(void **state)
{
	static const char json[] =
	    "{\"network\": {\"deniedDomains\": [\"github.com:22\", "
	    "\"*.evil.example\", \"*:25\", \"uploads.github.com\"], "
	    "\"allowedDomains\": [\"*.github.com\"], "
	    "\"deniedDomainReasons\": {"
	    "\"GitHub.com.:22\": \"SSH pushes to GitHub are blocked; use an "
	    "https:// remote\", "
	    "\"*.evil.example\": \"Malware host; nothing to do here\", "
	    "\"*:25\": \"No mail from the sandbox \\u2014 ask a person\"}}}";
	struct config_errors	 errs = { NULL, 0 };
	const struct pattern	*m;
	struct config		*conf;
	char			*line;

	(void)state;
	conf = load(json, &errs);
	dump("error", &errs);
	assert_non_null(conf);
	assert_int_equal(conf->notes.n, 0);
	assert_int_equal(eval(conf->policy, "github.com", 22, &m),
	    VERDICT_DENY);
	assert_string_equal(m->reason,
	    "SSH pushes to GitHub are blocked; use an https:// remote");
	assert_int_equal(eval(conf->policy, "a.b.evil.example", 443, &m),
	    VERDICT_DENY);
	assert_string_equal(m->reason, "Malware host; nothing to do here");
	assert_int_equal(eval(conf->policy, "mail.example.org", 25, &m),
	    VERDICT_DENY);
	assert_string_equal(m->reason,
	    "No mail from the sandbox \xe2\x80\x94 ask a person");
	/* An entry without a reason, and allow entries, carry none. */
	assert_int_equal(eval(conf->policy, "uploads.github.com", 443, &m),
	    VERDICT_DENY);
	assert_null(m->reason);
	assert_int_equal(eval(conf->policy, "api.github.com", 443, &m),
	    VERDICT_ALLOW);
	assert_null(m->reason);
	/* --explain shows it. */
	line = policy_explain(conf, "github.com:22");
	assert_non_null(line);
	assert_non_null(strstr(line, "{\"host\":\"github.com\",\"port\":22,"
	    "\"decision\":\"deny\",\"reason\":\"deny-list:github.com:22\","
	    "\"message\":\"SSH pushes to GitHub are blocked; use an https:// "
	    "remote\""));
	free(line);
	config_free(conf);

	assert_int_equal(run_cases(reason_cases,
	    sizeof(reason_cases) / sizeof(*reason_cases)), 0);
}

static void
test_globs(void **state)
{
	static const char json[] = "{\"filesystem\": {\"allowWrite\": "
	    "[\"build/**\", \"**\", \"~/**\", \"lit\"], \"denyRead\": "
	    "[\"**/.env\"]}}";
	struct config_errors	 errs = { NULL, 0 };
	struct config		*conf;

	(void)state;
	assert_int_equal(run_cases(glob_cases,
	    sizeof(glob_cases) / sizeof(*glob_cases)), 0);
	/* A directory's contents is the directory; patterns stay as written. */
	assert_non_null(conf = load(json, &errs));
	assert_int_equal(conf->allow_write.n, 4);
	assert_string_equal(conf->allow_write.v[0], "build");
	assert_string_equal(conf->allow_write.v[1], ".");
	assert_string_equal(conf->allow_write.v[2], "~");
	assert_string_equal(conf->allow_write.v[3], "lit");
	assert_string_equal(conf->deny_read.v[0], "**/.env");
	config_free(conf);
}

/* Errors and notes of a file with many keys are all reported at once. */
static void
test_all_at_once(void **state)
{
	static const char json[] =
	    "{\"network\": {\"httpProxyPort\": 1, \"tlsTerminate\": "
	    "{\"caKeyPath\": \"/k\"}, \"allowLocalBinding\": true}, "
	    "\"credentials\": {\"sigv4\": {}}, "
	    "\"allowPty\": false, \"filesystem\": {\"allowWrite\": "
	    "[\"**/*.log\"]}}";
	struct config_errors	 errs = { NULL, 0 };

	(void)state;
	assert_null(load(json, &errs));
	assert_int_equal(errs.n, 4);
	assert_true(has_line(&errs, "$.network.httpProxyPort",
	    "not supported"));
	assert_true(has_line(&errs, "$.network.tlsTerminate",
	    "provided together"));
	assert_true(has_line(&errs, "$.credentials.sigv4", "not supported"));
	assert_true(has_line(&errs, "$.filesystem.allowWrite[0]", "pattern"));
	config_errors_clear(&errs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_srt_full),
		cmocka_unit_test(test_srt_examples),
		cmocka_unit_test(test_pi_sandbox),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_reasons),
		cmocka_unit_test(test_globs),
		cmocka_unit_test(test_all_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
