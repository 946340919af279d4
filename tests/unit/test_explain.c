/*
 * policy_explain: the exact JSON line for allow, deny, review and
 * invalid targets, with and without a reviewer, and the hint of each
 * refusal (policy/hint.c), which names a shipped domain list holding the
 * host among others.
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

#define CONF_NAME	"/etc/pisbx/t.json"
#define SOURCE(l, i) \
			",\"source\":\"" CONF_NAME ": $.network." l "[" #i "]\"" \
			",\"layer\":\"user\""
#define HINT_ADD(e)	"\"hint\":\"to allow it, add \\\"" e "\\\" to " \
			"network.allowedDomains in " CONF_NAME "\""

/* The lists of every case; the reviewer (or none) is the table's. */
#define NETWORK \
	"\"network\":{\"allowedDomains\":[\"github.com\",\"*.github.com\"," \
	"\"registry.npmjs.org:443\",\"127.0.0.1:8080\",\"[::1]\"," \
	"\"host.pisbx.internal:5173\",\"*.pisbx.internal\"]," \
	"\"deniedDomains\":[\"uploads.github.com\",\"*:22\"]}"

struct explain_case {
	const char	*target;
	const char	*json;
};

/* Both tables: what the lists decide, whoever reviews. */
static const struct explain_case explain_common[] = {
	{ "github.com",
	  "{\"host\":\"github.com\",\"port\":443,\"decision\":\"allow\","
	  "\"reason\":\"allow-list:github.com\"" SOURCE("allowedDomains", 0)
	  "}" },
	{ "API.GitHub.com.:8443",
	  "{\"host\":\"api.github.com\",\"port\":8443,\"decision\":\"allow\","
	  "\"reason\":\"allow-list:*.github.com\""
	  SOURCE("allowedDomains", 1) "}" },
	{ "uploads.github.com",
	  "{\"host\":\"uploads.github.com\",\"port\":443,\"decision\":\"deny\","
	  "\"reason\":\"deny-list:uploads.github.com\",\"hint\":\"\\\""
	  "uploads.github.com\\\" in network.deniedDomains of " CONF_NAME
	  " refuses it, whatever network.allowedDomains says\""
	  SOURCE("deniedDomains", 0) "}" },
	{ "github.com:22",
	  "{\"host\":\"github.com\",\"port\":22,\"decision\":\"deny\","
	  "\"reason\":\"deny-list:*:22\",\"hint\":\"\\\"*:22\\\" in "
	  "network.deniedDomains of " CONF_NAME " refuses it, whatever "
	  "network.allowedDomains says\"" SOURCE("deniedDomains", 1) "}" },
	{ "0x7f.1:8080",
	  "{\"host\":\"127.0.0.1\",\"port\":8080,\"decision\":\"allow\","
	  "\"reason\":\"allow-list:127.0.0.1:8080\""
	  SOURCE("allowedDomains", 3) "}" },
	{ "[0:0::1]:80",
	  "{\"host\":\"[::1]\",\"port\":80,\"decision\":\"allow\","
	  "\"reason\":\"allow-list:[::1]\"" SOURCE("allowedDomains", 4) "}" },
	/* a literal non-public address without an exact entry: never asked */
	{ "[::ffff:127.0.0.1]",
	  "{\"host\":\"127.0.0.1\",\"port\":443,\"decision\":\"deny\","
	  "\"reason\":\"non-public-address\",\"hint\":\"to reach this "
	  "machine's own services, add \\\"host.pisbx.internal:443\\\" to "
	  "network.allowedDomains in " CONF_NAME " and use the name "
	  "host.pisbx.internal\"}" },
	{ "10.1.2.3:80",
	  "{\"host\":\"10.1.2.3\",\"port\":80,\"decision\":\"deny\","
	  "\"reason\":\"non-public-address\",\"hint\":\"to allow it, add the "
	  "exact entry \\\"10.1.2.3\\\" to network.allowedDomains in "
	  CONF_NAME " (only an exact entry reaches a non-public address)\"}" },
	/* the loopback name: its exact entry with the port, nothing else */
	{ "host.pisbx.internal:5173",
	  "{\"host\":\"host.pisbx.internal\",\"port\":5173,\"decision\":"
	  "\"allow\",\"reason\":\"allow-list:host.pisbx.internal:5173\""
	  SOURCE("allowedDomains", 5) "}" },
	{ "Host.Pisbx.Internal.:5174",
	  "{\"host\":\"host.pisbx.internal\",\"port\":5174,\"decision\":"
	  "\"deny\",\"reason\":\"host-loopback\","
	  HINT_ADD("host.pisbx.internal:5174") "}" },
	{ "other.pisbx.internal",
	  "{\"host\":\"other.pisbx.internal\",\"port\":443,\"decision\":"
	  "\"allow\",\"reason\":\"allow-list:*.pisbx.internal\""
	  SOURCE("allowedDomains", 6) "}" },
	/* invalid targets: the raw input, deny, invalid-host, the error */
	{ "",
	  "{\"host\":\"\",\"port\":0,\"decision\":\"deny\","
	  "\"reason\":\"invalid-host\",\"error\":\"empty target\"}" },
	{ "github.com:0",
	  "{\"host\":\"github.com:0\",\"port\":0,\"decision\":\"deny\","
	  "\"reason\":\"invalid-host\",\"error\":\"invalid port: must be "
	  "1-65535, decimal, without sign or leading zero\"}" },
	{ "github.com:65536",
	  "{\"host\":\"github.com:65536\",\"port\":0,\"decision\":\"deny\","
	  "\"reason\":\"invalid-host\",\"error\":\"invalid port: must be "
	  "1-65535, decimal, without sign or leading zero\"}" },
	{ "1.2.3.4.5:80",
	  "{\"host\":\"1.2.3.4.5:80\",\"port\":80,\"decision\":\"deny\","
	  "\"reason\":\"invalid-host\",\"error\":\"invalid IPv4 address: "
	  "more than four parts (a name may not end in a number)\"}" },
	{ ":443",
	  "{\"host\":\":443\",\"port\":443,\"decision\":\"deny\","
	  "\"reason\":\"invalid-host\",\"error\":\"empty host\"}" },
	{ "a\"b",
	  "{\"host\":\"a\\\"b\",\"port\":443,\"decision\":\"deny\","
	  "\"reason\":\"invalid-host\",\"error\":\"invalid character in host "
	  "name (allowed: a-z 0-9 - _ .)\"}" },
	{ "b\xc3\xbc" "cher.de",
	  "{\"host\":\"b\xc3\xbc" "cher.de\",\"port\":443,\"decision\":"
	  "\"deny\",\"reason\":\"invalid-host\",\"error\":\"non-ASCII host: "
	  "write the punycode (xn--...) form of an internationalised name\"}" },
	{ "bad\xff\x01host",
	  "{\"host\":\"bad\\\\xff\\\\x01host\",\"port\":443,\"decision\":"
	  "\"deny\",\"reason\":\"invalid-host\",\"error\":\"non-ASCII host: "
	  "write the punycode (xn--...) form of an internationalised name\"}" },
	{ "a\nb",
	  "{\"host\":\"a\\nb\",\"port\":443,\"decision\":\"deny\","
	  "\"reason\":\"invalid-host\",\"error\":\"CR or LF in host\"}" },
};

/* No reviewer: what no list matches is denied, as the proxy would. */
static const struct explain_case explain_noreview[] = {
	{ "registry.npmjs.org:80",
	  "{\"host\":\"registry.npmjs.org\",\"port\":80,\"decision\":\"deny\","
	  "\"reason\":\"no-reviewer\"," HINT_ADD("registry.npmjs.org") "}" },
	{ "example.com",
	  "{\"host\":\"example.com\",\"port\":443,\"decision\":\"deny\","
	  "\"reason\":\"no-reviewer\"," HINT_ADD("example.com") "}" },
	{ "example.com:5432",
	  "{\"host\":\"example.com\",\"port\":5432,\"decision\":\"deny\","
	  "\"reason\":\"no-reviewer\"," HINT_ADD("example.com:5432") "}" },
};

/* A reviewer: it is asked, and the hint says how not to be. */
static const struct explain_case explain_review[] = {
	{ "registry.npmjs.org:80",
	  "{\"host\":\"registry.npmjs.org\",\"port\":80,\"decision\":"
	  "\"review\",\"reason\":\"review\",\"reviewer\":\"command\","
	  HINT_ADD("registry.npmjs.org") "}" },
	{ "example.com",
	  "{\"host\":\"example.com\",\"port\":443,\"decision\":\"review\","
	  "\"reason\":\"review\",\"reviewer\":\"command\","
	  HINT_ADD("example.com") "}" },
};

static int
explain_run(const char *text, const struct explain_case *cases, size_t n)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*conf;
	char			*out;
	size_t			 i;
	int			 failed = 0;

	conf = config_load_buffer(text, strlen(text), CONF_NAME, &errs);
	if (conf == NULL) {
		for (i = 0; i < errs.n; i++)
			print_error("%s\n", errs.msg[i]);
		config_errors_clear(&errs);
		return 1;
	}
	for (i = 0; i < n; i++) {
		out = policy_explain(conf, cases[i].target);
		if (out == NULL || strcmp(out, cases[i].json) != 0) {
			print_error("target \"%s\":\n  got  %s\n  want %s\n",
			    cases[i].target, out ? out : "NULL",
			    cases[i].json);
			failed++;
		}
		free(out);
	}
	config_free(conf);
	return failed;
}

static void
test_explain_noreview(void **state)
{
	static const char text[] = "{" NETWORK "}";

	(void)state;
	assert_int_equal(explain_run(text, explain_common,
	    sizeof(explain_common) / sizeof(explain_common[0])), 0);
	assert_int_equal(explain_run(text, explain_noreview,
	    sizeof(explain_noreview) / sizeof(explain_noreview[0])), 0);
}

static void
test_explain_review(void **state)
{
	static const char text[] = "{" NETWORK ",\"review\":{\"command\":"
	    "[\"/usr/local/bin/reviewer\"]}}";

	(void)state;
	assert_int_equal(explain_run(text, explain_common,
	    sizeof(explain_common) / sizeof(explain_common[0])), 0);
	assert_int_equal(explain_run(text, explain_review,
	    sizeof(explain_review) / sizeof(explain_review[0])), 0);
}

/* The hint of one target under a config with no lists and no reviewer. */
static char *
explain_hint(const char *target)
{
	static const char	 text[] = "{}";
	struct config_errors	 errs = { NULL, 0 };
	struct config		*conf;
	char			*out;

	conf = config_load_buffer(text, strlen(text), CONF_NAME, &errs);
	assert_non_null(conf);
	out = policy_explain(conf, target);
	assert_non_null(out);
	config_free(conf);
	return out;
}

static void
write_file(const char *path, const char *text)
{
	FILE	*f;

	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/*
 * A package manager needs more hosts than its registry: the hint names
 * the shipped list that has the refused host:port among others, where
 * it is, and all it holds.  Not for a one-entry list, another port, or
 * a host no list has; a list that is not one is left out.
 */
static void
test_explain_lists(void **state)
{
	char	 dir[] = "/tmp/pisbx-test-lists.XXXXXX", path[256], *out;

	(void)state;
	/* The lists shipped in conf/domains (next to this build). */
	policy_hint_lists_dir(NULL);
	out = explain_hint("static.crates.io");
	assert_non_null(strstr(out, "to allow it, add \\\"static.crates.io\\\" "
	    "to network.allowedDomains in " CONF_NAME "; it is in pisbx's "
	    "list for cargo, /"));
	assert_non_null(strstr(out, "/conf/domains/cargo.json, with the other "
	    "hosts that ecosystem needs: add them all (index.crates.io:443, "
	    "static.crates.io:443)\"}"));
	free(out);
	out = explain_hint("files.pythonhosted.org");
	assert_non_null(strstr(out, "list for pypi, /"));
	assert_non_null(strstr(out, "(pypi.org:443, files.pythonhosted.org:443)"));
	free(out);
	/* One entry: the host is all it needs. */
	out = explain_hint("static.rust-lang.org");
	assert_null(strstr(out, "pisbx's list"));
	free(out);
	/* Another port than the list's. */
	out = explain_hint("registry.npmjs.org:80");
	assert_null(strstr(out, "pisbx's list"));
	free(out);

	/* A folder of our own: a wildcard list, and files that are not. */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/corp.json", dir);
	write_file(path, "{\"network\": {\"allowedDomains\": "
	    "[\"*.corp.example:443\", \"Pkgs.Corp.Example:8443\"]}}");
	snprintf(path, sizeof(path), "%s/broken.json", dir);
	write_file(path, "{\"network\": {\"allowedDomains\": [\"a.b:443\", ");
	snprintf(path, sizeof(path), "%s/bad.json", dir);
	write_file(path, "{\"network\": {\"allowedDomains\": "
	    "[\"a.b:443\", \"not a pattern\"]}}");
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	write_file(path, "{\"network\": {\"allowedDomains\": "
	    "[\"a.b:443\", \"c.d:443\"]}}");
	policy_hint_lists_dir(dir);
	out = explain_hint("git.corp.example");
	snprintf(path, sizeof(path), "list for corp, %s/corp.json, with the "
	    "other hosts that ecosystem needs: add them all "
	    "(*.corp.example:443, pkgs.corp.example:8443)\"}", dir);
	assert_non_null(strstr(out, path));
	free(out);
	out = explain_hint("a.b");
	assert_null(strstr(out, "pisbx's list"));
	free(out);
	/* Refused by the deny list: a list would not help. */
	{
		static const char text[] = "{\"network\": {\"deniedDomains\": "
		    "[\"git.corp.example\"]}}";
		struct config_errors	 errs = { NULL, 0 };
		struct config		*conf;

		conf = config_load_buffer(text, strlen(text), CONF_NAME,
		    &errs);
		assert_non_null(conf);
		out = policy_explain(conf, "git.corp.example");
		assert_null(strstr(out, "pisbx's list"));
		free(out);
		config_free(conf);
	}
	/* No such folder: no list named. */
	snprintf(path, sizeof(path), "%s/none", dir);
	policy_hint_lists_dir(path);
	out = explain_hint("static.crates.io");
	assert_null(strstr(out, "pisbx's list"));
	free(out);
	policy_hint_lists_dir(NULL);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

/*
 * What happens inside a tunnel: "tls" (terminated or excluded), the
 * host's request rules with their sources, the masked credentials put
 * in there -- and none of it for a host the lists refuse.
 */
static const struct explain_case explain_secrets[] = {
	{ "api.test",
	  "{\"host\":\"api.test\",\"port\":443,\"decision\":\"allow\","
	  "\"reason\":\"allow-list:api.test\"" SOURCE("allowedDomains", 0)
	  ",\"tls\":\"terminated\",\"requestRules\":["
	  "{\"rule\":\"POST /**/git-receive-pack\",\"action\":\"deny\","
	  "\"source\":\"" CONF_NAME ": $.network.requestRules[0].deny[0]\"},"
	  "{\"rule\":\"GET /x/*\",\"action\":\"allow\",\"source\":\""
	  CONF_NAME ": $.network.requestRules[0].allow[0]\"},"
	  "{\"unmatched\":\"deny\",\"action\":\"deny\",\"source\":\""
	  CONF_NAME ": $.network.requestRules[0]\"}],"
	  "\"inject\":[\"$GH_TOKEN\",\"$ANY\"]}" },
	{ "other.test",
	  "{\"host\":\"other.test\",\"port\":443,\"decision\":\"allow\","
	  "\"reason\":\"allow-list:other.test\"" SOURCE("allowedDomains", 1)
	  ",\"tls\":\"terminated\",\"inject\":[\"$ANY\"]}" },
	{ "ex.test",
	  "{\"host\":\"ex.test\",\"port\":443,\"decision\":\"allow\","
	  "\"reason\":\"allow-list:ex.test\"" SOURCE("allowedDomains", 2)
	  ",\"tls\":\"excluded\"}" },
	{ "no.test",
	  "{\"host\":\"no.test\",\"port\":443,\"decision\":\"deny\","
	  "\"reason\":\"no-reviewer\"," HINT_ADD("no.test") "}" },
};

static void
test_explain_secrets(void **state)
{
	const char *text = "{\"network\":{\"allowedDomains\":[\"api.test\","
	    "\"other.test\",\"ex.test\"],\"tlsTerminate\":"
	    "{\"excludeDomains\":[\"ex.test\"]},\"requestRules\":["
	    "{\"host\":\"api.test\",\"deny\":[\"POST /**/git-receive-pack\"],"
	    "\"allow\":[\"GET /x/*\"],\"unmatched\":\"deny\"}]},"
	    "\"credentials\":{\"envVars\":[{\"name\":\"GH_TOKEN\","
	    "\"mode\":\"mask\",\"injectHosts\":[\"api.test\"]},"
	    "{\"name\":\"ANY\",\"mode\":\"mask\"},"
	    "{\"name\":\"GONE\",\"mode\":\"deny\"}]}}";

	(void)state;
	assert_int_equal(explain_run(text, explain_secrets,
	    sizeof(explain_secrets) / sizeof(explain_secrets[0])), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explain_noreview),
		cmocka_unit_test(test_explain_review),
		cmocka_unit_test(test_explain_lists),
		cmocka_unit_test(test_explain_secrets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
