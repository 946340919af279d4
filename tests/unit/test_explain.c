/*
 * policy_explain: the exact JSON line for allow, deny, review and
 * invalid targets.
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

static const char *allow_list[] = {
	"github.com", "*.github.com", "registry.npmjs.org:443", "127.0.0.1:8080",
	"[::1]", NULL
};
static const char *deny_list[] = {
	"uploads.github.com", "*:22", NULL
};

struct explain_case {
	const char	*target;
	const char	*json;
};

static const struct explain_case explain_cases[] = {
	{ "github.com",
	  "{\"host\":\"github.com\",\"port\":443,\"decision\":\"allow\","
	  "\"reason\":\"allow-list:github.com\"}" },
	{ "API.GitHub.com.:8443",
	  "{\"host\":\"api.github.com\",\"port\":8443,\"decision\":\"allow\","
	  "\"reason\":\"allow-list:*.github.com\"}" },
	{ "uploads.github.com",
	  "{\"host\":\"uploads.github.com\",\"port\":443,\"decision\":\"deny\","
	  "\"reason\":\"deny-list:uploads.github.com\"}" },
	{ "github.com:22",
	  "{\"host\":\"github.com\",\"port\":22,\"decision\":\"deny\","
	  "\"reason\":\"deny-list:*:22\"}" },
	{ "registry.npmjs.org:80",
	  "{\"host\":\"registry.npmjs.org\",\"port\":80,\"decision\":"
	  "\"review\",\"reason\":\"review\"}" },
	{ "example.com",
	  "{\"host\":\"example.com\",\"port\":443,\"decision\":\"review\","
	  "\"reason\":\"review\"}" },
	{ "0x7f.1:8080",
	  "{\"host\":\"127.0.0.1\",\"port\":8080,\"decision\":\"allow\","
	  "\"reason\":\"allow-list:127.0.0.1:8080\"}" },
	{ "[0:0::1]:80",
	  "{\"host\":\"[::1]\",\"port\":80,\"decision\":\"allow\","
	  "\"reason\":\"allow-list:[::1]\"}" },
	{ "[::ffff:127.0.0.1]",
	  "{\"host\":\"127.0.0.1\",\"port\":443,\"decision\":\"review\","
	  "\"reason\":\"review\"}" },
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

static void
test_explain_table(void **state)
{
	struct policy	*pol;
	struct pattern	 p;
	const char	*err;
	char		*out;
	size_t		 i;
	int		 failed = 0;

	(void)state;
	pol = policy_new();
	assert_non_null(pol);
	for (i = 0; allow_list[i] != NULL; i++) {
		assert_int_equal(pattern_parse(allow_list[i],
		    strlen(allow_list[i]), 0, &p, &err), 0);
		assert_int_equal(policy_add(pol, POLICY_ALLOW, &p), 0);
	}
	for (i = 0; deny_list[i] != NULL; i++) {
		assert_int_equal(pattern_parse(deny_list[i],
		    strlen(deny_list[i]), 1, &p, &err), 0);
		assert_int_equal(policy_add(pol, POLICY_DENY, &p), 0);
	}
	for (i = 0; i < sizeof(explain_cases) / sizeof(explain_cases[0]);
	    i++) {
		out = policy_explain(pol, explain_cases[i].target);
		if (out == NULL || strcmp(out, explain_cases[i].json) != 0) {
			print_error("target \"%s\":\n  got  %s\n  want %s\n",
			    explain_cases[i].target, out ? out : "NULL",
			    explain_cases[i].json);
			failed++;
		}
		free(out);
	}
	policy_free(pol);
	assert_int_equal(failed, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explain_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
