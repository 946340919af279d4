/*
 * The pure parts of the managed layer: pattern_within (whether a lower
 * allow entry lies wholly inside a managed deny or ceiling entry), the
 * ceiling on a policy (outside it: deny, never review; inside: the
 * lists, then review as before) and policy_reason, the access-log
 * reason of a list verdict.  The managed file itself, at its fixed
 * path, is tests/integration/managed-layer.sh's.
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

struct within_case {
	const char	*inner;
	const char	*outer;
	int		 want;
};

static const struct within_case within_cases[] = {
	{ "a.corp.test", "*.corp.test", 1 },
	{ "x.a.corp.test", "*.corp.test", 1 },
	{ "*.a.corp.test", "*.corp.test", 1 },
	{ "*.corp.test", "*.corp.test", 1 },
	{ "corp.test", "*.corp.test", 0 },		/* the apex */
	{ "*.test.other", "*.corp.test", 0 },
	{ "acorp.test", "*.corp.test", 0 },		/* not a label edge */
	{ "a.corp.test:443", "*.corp.test", 1 },
	{ "a.corp.test", "*.corp.test:443", 0 },	/* any port > one */
	{ "a.corp.test:443", "*.corp.test:443", 1 },
	{ "a.corp.test:80", "*.corp.test:443", 0 },
	{ "github.com", "github.com", 1 },
	{ "github.com:22", "github.com", 1 },
	{ "api.github.com", "github.com", 0 },
	{ "x.test:22", "*:22", 1 },
	{ "*.corp.test:22", "*:22", 1 },
	{ "x.test", "*:22", 0 },
	{ "10.0.0.1", "*", 1 },
	{ "10.0.0.1", "10.0.0.1", 1 },
	{ "10.0.0.1", "*.corp.test", 0 },		/* wildcards: names */
	{ "[::1]:80", "[::1]", 1 },
	{ "*", "*.corp.test", 0 },
	{ "*:443", "*", 1 },
};

static void
parse(const char *s, int flags, struct pattern *p)
{
	const char	*why = NULL;

	if (pattern_parse(s, strlen(s), flags, p, &why) != 0)
		fail_msg("pattern %s: %s", s, why);
}

static void
test_within(void **state)
{
	struct pattern	 in, out;
	size_t		 i, bad = 0;

	(void)state;
	for (i = 0; i < sizeof(within_cases) / sizeof(*within_cases); i++) {
		parse(within_cases[i].inner, PATTERN_DENY_LIST, &in);
		parse(within_cases[i].outer, PATTERN_DENY_LIST, &out);
		if (pattern_within(&in, &out) == within_cases[i].want)
			continue;
		fprintf(stderr, "%s within %s: got %d\n",
		    within_cases[i].inner, within_cases[i].outer,
		    !within_cases[i].want);
		bad++;
	}
	assert_int_equal(bad, 0);
}

/* A policy of allow entries and deny entries, with a ceiling. */
static struct policy *
ceiling_policy(void)
{
	static const char *allow[] = { "ok.corp.test", "github.com", NULL };
	static const char *deny[] = { "bad.corp.test", NULL };
	static const char *ceil[] = { "*.corp.test", "github.com", NULL };
	struct policy	*p, *c;
	struct pattern	 pat;
	size_t		 i;

	assert_non_null(p = policy_new());
	assert_non_null(c = policy_new());
	for (i = 0; allow[i] != NULL; i++) {
		parse(allow[i], 0, &pat);
		assert_int_equal(policy_add(p, POLICY_ALLOW, &pat), 0);
	}
	for (i = 0; deny[i] != NULL; i++) {
		parse(deny[i], PATTERN_DENY_LIST, &pat);
		assert_int_equal(policy_add(p, POLICY_DENY, &pat), 0);
	}
	for (i = 0; ceil[i] != NULL; i++) {
		parse(ceil[i], 0, &pat);
		assert_int_equal(policy_add(c, POLICY_ALLOW, &pat), 0);
	}
	assert_int_equal(policy_set_ceiling(p, c,
	    "/etc/pisbx/managed.json: $.network.allowedDomainsCeiling"), 0);
	return p;
}

struct ceiling_case {
	const char	*target;
	enum verdict	 want;
	const char	*reason;
};

static const struct ceiling_case ceiling_cases[] = {
	{ "ok.corp.test:443", VERDICT_ALLOW, "allow-list:ok.corp.test" },
	{ "bad.corp.test:443", VERDICT_DENY, "deny-list:bad.corp.test" },
	{ "new.corp.test:443", VERDICT_REVIEW, "review" },
	{ "github.com:22", VERDICT_ALLOW, "allow-list:github.com" },
	{ "example.org:443", VERDICT_DENY, "managed-ceiling" },
	{ "corp.test:443", VERDICT_DENY, "managed-ceiling" },
	{ "10.0.0.1:443", VERDICT_DENY, "managed-ceiling" },
	{ "host.pisbx.internal:80", VERDICT_DENY, "host-loopback" },
};

static void
test_ceiling(void **state)
{
	const struct pattern	*m;
	struct policy		*p = ceiling_policy();
	struct host		 h;
	const char		*why;
	char			 reason[TARGET_TEXT_MAX + 32];
	uint16_t		 port;
	enum verdict		 v;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(ceiling_cases) / sizeof(*ceiling_cases); i++) {
		const struct ceiling_case *c = &ceiling_cases[i];

		assert_int_equal(target_parse(c->target, strlen(c->target), 0,
		    &h, &port, &why), 0);
		v = policy_eval(p, &h, port, &m);
		policy_reason(v, m, reason, sizeof(reason));
		if (v != c->want || strcmp(reason, c->reason) != 0)
			fail_msg("%s: got %s %s, want %s %s", c->target,
			    verdict_name(v), reason, verdict_name(c->want),
			    c->reason);
		if (strcmp(c->reason, "managed-ceiling") == 0) {
			assert_non_null(m);
			assert_true(m->ceiling);
			assert_string_equal(m->layer, "managed");
			assert_string_equal(m->source, "/etc/pisbx/managed.json: "
			    "$.network.allowedDomainsCeiling");
		}
	}
	/* Removing the ceiling: what it refused goes to review again. */
	assert_int_equal(policy_set_ceiling(p, NULL, NULL), 0);
	assert_int_equal(target_parse("example.org", 11, 443, &h, &port,
	    &why), 0);
	assert_int_equal(policy_eval(p, &h, port, &m), VERDICT_REVIEW);
	policy_free(p);
}

/* config_walk: collect the lines. */
static void
walk_cb(const char *line, void *arg)
{
	char	*buf = arg;
	size_t	 n = strlen(buf);

	snprintf(buf + n, 4096 - n, "%s\n", line);
}

/*
 * Request entries carry their layer, and --check -v's walk lists
 * tlsTerminate and each rule with source and layer, in the order they
 * apply (the managed file's first; here, with no managed file on the
 * test machine, the run layer's own).
 */
static void
test_rules_walk(void **state)
{
	static const char json[] = "{\"network\": {\"allowedDomains\": "
	    "[\"a.test\"], \"tlsTerminate\": {}, \"requestRules\": "
	    "[{\"host\": \"a.test\", \"deny\": [\"POST /x/**\"], "
	    "\"allow\": [\"GET /**\"], \"unmatched\": \"deny\"}]}}";
	struct config_errors	 errs = { NULL, 0 };
	struct config		*conf;
	char			 out[4096] = "";

	(void)state;
	conf = config_load_buffer_layer(json, strlen(json), "t.json",
	    LAYER_RUN, &errs);
	assert_non_null(conf);
	assert_int_equal(conf->nreq_hosts, 1);
	assert_string_equal(conf->req_hosts[0].layer, "run");
	assert_int_equal(config_walk(conf, walk_cb, out), 0);
	assert_non_null(strstr(out, "tlsTerminate from t.json: "
	    "$.network.tlsTerminate (run)\n"));
	assert_non_null(strstr(out, "requestRules a.test deny POST /x/** "
	    "from t.json: $.network.requestRules[0].deny[0] (run)\n"));
	assert_non_null(strstr(out, "requestRules a.test allow GET /** "
	    "from t.json: $.network.requestRules[0].allow[0] (run)\n"));
	assert_non_null(strstr(out, "requestRules a.test unmatched deny "
	    "from t.json: $.network.requestRules[0] (run)\n"));
	/* Deny before allow, entry by entry. */
	assert_true(strstr(out, "deny POST") < strstr(out, "allow GET"));
	config_free(conf);
	config_errors_clear(&errs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_within),
		cmocka_unit_test(test_ceiling),
		cmocka_unit_test(test_rules_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
