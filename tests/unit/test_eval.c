/*
 * policy_eval precedence: deny beats allow, the most specific pattern is
 * reported, wildcards never match the apex or IP literals, port-restricted
 * entries, "*" forms in the deny list, duplicates, and a policy large
 * enough to exercise table growth.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"

static const char *allow_list[] = {
	"github.com",
	"*.github.com",
	"registry.npmjs.org:443",
	"*.internal.example:8443",
	"*.example.org",
	"api.example.org:80",
	"127.0.0.1:8080",
	"[::1]:9000",
	"[2001:db8::5]",
	"10.1.2.3",
	"both.example.com",
	"deep.a.b.example.net",
	"*.b.example.net",
	"host.pisbx.internal:5173",
	"*.pisbx.internal",
	NULL
};

static const char *deny_list[] = {
	"uploads.github.com",
	"*:22",
	"both.example.com",
	"*.evil.github.com",
	"secret.example.org:443",
	"*.b.example.net:25",
	"*.a.b.example.net:25",
	NULL
};

struct eval_case {
	const char	*target;
	enum verdict	 want;
	const char	*matched;	/* NULL for review */
};

static const struct eval_case eval_cases[] = {
	/* exact and wildcard allow */
	{ "github.com:443", VERDICT_ALLOW, "github.com" },
	{ "GitHub.com.:80", VERDICT_ALLOW, "github.com" },
	{ "api.github.com:443", VERDICT_ALLOW, "*.github.com" },
	{ "a.b.c.github.com:443", VERDICT_ALLOW, "*.github.com" },
	{ "xgithub.com:443", VERDICT_REVIEW, NULL },
	{ "github.com.evil.com:443", VERDICT_REVIEW, NULL },
	{ "com:443", VERDICT_REVIEW, NULL },
	/* deny beats allow */
	{ "uploads.github.com:443", VERDICT_DENY, "uploads.github.com" },
	{ "x.uploads.github.com:443", VERDICT_ALLOW, "*.github.com" },
	{ "both.example.com:443", VERDICT_DENY, "both.example.com" },
	{ "evil.github.com:443", VERDICT_ALLOW, "*.github.com" },
	{ "x.evil.github.com:443", VERDICT_DENY, "*.evil.github.com" },
	{ "github.com:22", VERDICT_DENY, "*:22" },
	{ "10.1.2.3:22", VERDICT_DENY, "*:22" },
	{ "[::1]:22", VERDICT_DENY, "*:22" },
	{ "unknown.test:22", VERDICT_DENY, "*:22" },
	/* wildcard does not match the apex */
	{ "example.org:443", VERDICT_REVIEW, NULL },
	{ "www.example.org:443", VERDICT_ALLOW, "*.example.org" },
	/* port-restricted entries */
	{ "registry.npmjs.org:443", VERDICT_ALLOW, "registry.npmjs.org:443" },
	{ "registry.npmjs.org:80", VERDICT_REVIEW, NULL },
	{ "x.registry.npmjs.org:443", VERDICT_REVIEW, NULL },
	{ "svc.internal.example:8443", VERDICT_ALLOW,
	    "*.internal.example:8443" },
	{ "svc.internal.example:443", VERDICT_REVIEW, NULL },
	{ "internal.example:8443", VERDICT_REVIEW, NULL },
	{ "api.example.org:80", VERDICT_ALLOW, "api.example.org:80" },
	{ "api.example.org:443", VERDICT_ALLOW, "*.example.org" },
	{ "secret.example.org:443", VERDICT_DENY, "secret.example.org:443" },
	{ "secret.example.org:80", VERDICT_ALLOW, "*.example.org" },
	/* most specific wildcard: longest suffix, port before any port */
	{ "x.deep.a.b.example.net:25", VERDICT_DENY, "*.a.b.example.net:25" },
	{ "x.b.example.net:25", VERDICT_DENY, "*.b.example.net:25" },
	{ "deep.a.b.example.net:443", VERDICT_ALLOW, "deep.a.b.example.net" },
	{ "deep.a.b.example.net:25", VERDICT_DENY, "*.a.b.example.net:25" },
	{ "z.a.b.example.net:443", VERDICT_ALLOW, "*.b.example.net" },
	/* literals: any spelling, never matched by wildcards */
	{ "127.1:8080", VERDICT_ALLOW, "127.0.0.1:8080" },
	{ "0x7f000001:8080", VERDICT_ALLOW, "127.0.0.1:8080" },
	{ "[::ffff:127.0.0.1]:8080", VERDICT_ALLOW, "127.0.0.1:8080" },
	{ "127.0.0.1:8081", VERDICT_REVIEW, NULL },
	{ "[::1]:9000", VERDICT_ALLOW, "[::1]:9000" },
	{ "[0::1]:9000", VERDICT_ALLOW, "[::1]:9000" },
	{ "[::1]:9001", VERDICT_REVIEW, NULL },
	{ "[2001:DB8:0::5]:443", VERDICT_ALLOW, "[2001:db8::5]" },
	{ "012.1.2.3:443", VERDICT_ALLOW, "10.1.2.3" },
	{ "10.1.2.4:443", VERDICT_REVIEW, NULL },
	/* the loopback name: its exact entry with its port, else deny */
	{ "host.pisbx.internal:5173", VERDICT_ALLOW,
	    "host.pisbx.internal:5173" },
	{ "HOST.pisbx.internal.:5173", VERDICT_ALLOW,
	    "host.pisbx.internal:5173" },
	{ "host.pisbx.internal:5174", VERDICT_DENY, NULL },
	{ "host.pisbx.internal:22", VERDICT_DENY, "*:22" },
	{ "x.pisbx.internal:5174", VERDICT_ALLOW, "*.pisbx.internal" },
};

static struct policy *
build_policy(void)
{
	struct policy	*pol;
	struct pattern	 p;
	const char	*err;
	size_t		 i;

	pol = policy_new();
	assert_non_null(pol);
	for (i = 0; allow_list[i] != NULL; i++) {
		if (pattern_parse(allow_list[i], strlen(allow_list[i]), 0, &p,
		    &err) != 0)
			fail_msg("allow \"%s\": %s", allow_list[i], err);
		assert_int_equal(policy_add(pol, POLICY_ALLOW, &p), 0);
	}
	for (i = 0; deny_list[i] != NULL; i++) {
		if (pattern_parse(deny_list[i], strlen(deny_list[i]), 1, &p,
		    &err) != 0)
			fail_msg("deny \"%s\": %s", deny_list[i], err);
		assert_int_equal(policy_add(pol, POLICY_DENY, &p), 0);
	}
	return pol;
}

static void
test_eval_table(void **state)
{
	const struct eval_case	*c;
	const struct pattern	*m;
	struct policy		*pol;
	struct host		 h;
	const char		*err;
	uint16_t		 port;
	enum verdict		 v;
	size_t			 i;
	int			 failed = 0;

	(void)state;
	pol = build_policy();
	for (i = 0; i < sizeof(eval_cases) / sizeof(eval_cases[0]); i++) {
		c = &eval_cases[i];
		if (target_parse(c->target, strlen(c->target), 0, &h, &port,
		    &err) != 0)
			fail_msg("target \"%s\": %s", c->target, err);
		m = (const struct pattern *)1;
		v = policy_eval(pol, &h, port, &m);
		if (v != c->want || (c->matched == NULL ? m != NULL :
		    (m == NULL || strcmp(m->text, c->matched) != 0))) {
			print_error("\"%s\": %s by \"%s\", want %s by \"%s\"\n",
			    c->target, verdict_name(v), m ? m->text : "(none)",
			    verdict_name(c->want),
			    c->matched ? c->matched : "(none)");
			failed++;
		}
		/* matched may be NULL */
		if (policy_eval(pol, &h, port, NULL) != v)
			failed++;
	}
	policy_free(pol);
	assert_int_equal(failed, 0);
}

/* A bare "*" denies everything; "*:port" before "*" is reported. */
static void
test_eval_any(void **state)
{
	struct policy		*pol;
	struct pattern		 p;
	const struct pattern	*m;
	struct host		 h;
	const char		*err;

	(void)state;
	pol = policy_new();
	assert_int_equal(pattern_parse("example.com", 11, 0, &p, &err), 0);
	assert_int_equal(policy_add(pol, POLICY_ALLOW, &p), 0);
	assert_int_equal(host_canon("example.com", 11, &h, &err), 0);
	assert_int_equal(policy_eval(pol, &h, 443, &m), VERDICT_ALLOW);

	assert_int_equal(pattern_parse("*", 1, 1, &p, &err), 0);
	assert_int_equal(policy_add(pol, POLICY_DENY, &p), 0);
	assert_int_equal(pattern_parse("*:22", 4, 1, &p, &err), 0);
	assert_int_equal(policy_add(pol, POLICY_DENY, &p), 0);
	assert_int_equal(policy_eval(pol, &h, 443, &m), VERDICT_DENY);
	assert_string_equal(m->text, "*");
	assert_int_equal(policy_eval(pol, &h, 22, &m), VERDICT_DENY);
	assert_string_equal(m->text, "*:22");
	assert_int_equal(host_canon("[::1]", 5, &h, &err), 0);
	assert_int_equal(policy_eval(pol, &h, 1, &m), VERDICT_DENY);
	assert_string_equal(m->text, "*");
	policy_free(pol);
}

/* Same kind/host/port twice is a duplicate; other ports are not. */
static void
test_eval_duplicates(void **state)
{
	static const struct {
		const char	*in;
		int		 deny;
		enum policy_list list;
		int		 rc;
	} adds[] = {
		{ "github.com", 0, POLICY_ALLOW, 0 },
		{ "GITHUB.com.", 0, POLICY_ALLOW, 1 },
		{ " github.com ", 0, POLICY_ALLOW, 1 },
		{ "github.com:443", 0, POLICY_ALLOW, 0 },
		{ "github.com:443", 0, POLICY_ALLOW, 1 },
		{ "github.com:80", 0, POLICY_ALLOW, 0 },
		{ "*.github.com", 0, POLICY_ALLOW, 0 },
		{ "*.GitHub.com", 0, POLICY_ALLOW, 1 },
		{ "github.com", 1, POLICY_DENY, 0 },
		{ "127.1", 0, POLICY_ALLOW, 0 },
		{ "0x7f000001", 0, POLICY_ALLOW, 1 },
		{ "[::ffff:127.0.0.1]", 0, POLICY_ALLOW, 1 },
		{ "[::1]", 0, POLICY_ALLOW, 0 },
		{ "[0:0::1]", 0, POLICY_ALLOW, 1 },
		{ "*", 1, POLICY_DENY, 0 },
		{ "*", 1, POLICY_DENY, 1 },
		{ "*:22", 1, POLICY_DENY, 0 },
		{ "*:22", 1, POLICY_DENY, 1 },
	};
	struct policy	*pol;
	struct pattern	 p;
	const char	*err;
	size_t		 i;

	(void)state;
	pol = policy_new();
	for (i = 0; i < sizeof(adds) / sizeof(adds[0]); i++) {
		assert_int_equal(pattern_parse(adds[i].in, strlen(adds[i].in),
		    adds[i].deny, &p, &err), 0);
		if (policy_add(pol, adds[i].list, &p) != adds[i].rc)
			fail_msg("add \"%s\": want %d", adds[i].in, adds[i].rc);
	}
	assert_int_equal(policy_count(pol, POLICY_ALLOW), 6);
	assert_int_equal(policy_count(pol, POLICY_DENY), 3);
	policy_free(pol);
}

static void
test_exact_allowed(void **state)
{
	struct policy	*pol;
	struct host	 h;
	const char	*err;

	(void)state;
	pol = build_policy();
	assert_int_equal(host_canon("github.com", 10, &h, &err), 0);
	assert_true(policy_exact_allowed(pol, &h, 443));
	assert_true(policy_exact_allowed(pol, &h, 1));
	assert_int_equal(host_canon("api.github.com", 14, &h, &err), 0);
	assert_false(policy_exact_allowed(pol, &h, 443));
	assert_int_equal(host_canon("registry.npmjs.org", 18, &h, &err), 0);
	assert_true(policy_exact_allowed(pol, &h, 443));
	assert_false(policy_exact_allowed(pol, &h, 80));
	/* deny entries are not its concern: the allow entry still exists */
	assert_int_equal(host_canon("both.example.com", 16, &h, &err), 0);
	assert_true(policy_exact_allowed(pol, &h, 443));
	assert_int_equal(host_canon("uploads.github.com", 18, &h, &err), 0);
	assert_false(policy_exact_allowed(pol, &h, 443));
	assert_int_equal(host_canon("127.0.0.1", 9, &h, &err), 0);
	assert_true(policy_exact_allowed(pol, &h, 8080));
	assert_false(policy_exact_allowed(pol, &h, 80));
	policy_free(pol);
}

/* An empty policy reviews everything; names of verdicts. */
static void
test_eval_empty(void **state)
{
	struct policy		*pol;
	const struct pattern	*m = (const struct pattern *)1;
	struct host		 h;
	const char		*err;

	(void)state;
	pol = policy_new();
	assert_int_equal(host_canon("example.com", 11, &h, &err), 0);
	assert_int_equal(policy_eval(pol, &h, 443, &m), VERDICT_REVIEW);
	assert_null(m);
	assert_false(policy_exact_allowed(pol, &h, 443));
	assert_int_equal(policy_count(pol, POLICY_ALLOW), 0);
	policy_free(pol);
	policy_free(NULL);
	assert_string_equal(verdict_name(VERDICT_ALLOW), "allow");
	assert_string_equal(verdict_name(VERDICT_DENY), "deny");
	assert_string_equal(verdict_name(VERDICT_REVIEW), "review");
}

/* Many entries: every one is found after the table has grown. */
static void
test_eval_many(void **state)
{
	struct policy		*pol;
	struct pattern		 p;
	const struct pattern	*m;
	struct host		 h;
	const char		*err;
	char			 buf[64];
	int			 i;

	(void)state;
	pol = policy_new();
	for (i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "host%d.example.com", i);
		assert_int_equal(pattern_parse(buf, strlen(buf), 0, &p, &err),
		    0);
		assert_int_equal(policy_add(pol, POLICY_ALLOW, &p), 0);
		snprintf(buf, sizeof(buf), "*.zone%d.example.com:%d", i,
		    1 + i % 3);
		assert_int_equal(pattern_parse(buf, strlen(buf), 0, &p, &err),
		    0);
		assert_int_equal(policy_add(pol, POLICY_ALLOW, &p), 0);
	}
	assert_int_equal(policy_count(pol, POLICY_ALLOW), 10000);
	for (i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "host%d.example.com", i);
		assert_int_equal(host_canon(buf, strlen(buf), &h, &err), 0);
		assert_int_equal(policy_eval(pol, &h, 443, &m), VERDICT_ALLOW);
		assert_string_equal(m->text, buf);
		snprintf(buf, sizeof(buf), "a.b.zone%d.example.com", i);
		assert_int_equal(host_canon(buf, strlen(buf), &h, &err), 0);
		assert_int_equal(policy_eval(pol, &h, (uint16_t)(1 + i % 3),
		    &m), VERDICT_ALLOW);
		assert_int_equal(policy_eval(pol, &h, 443, &m),
		    VERDICT_REVIEW);
		snprintf(buf, sizeof(buf), "host%d.example.net", i);
		assert_int_equal(host_canon(buf, strlen(buf), &h, &err), 0);
		assert_int_equal(policy_eval(pol, &h, 443, &m),
		    VERDICT_REVIEW);
	}
	policy_free(pol);
}

/*
 * The loopback name through an entry the config loader refuses (no
 * port): policy_eval and the dial step's check both still say no.
 */
static void
test_loopback_name_any_port(void **state)
{
	const struct pattern	*m = NULL;
	struct policy		*pol;
	struct pattern		 p;
	struct host		 h;
	const char		*err;
	uint16_t		 port;

	(void)state;
	pol = policy_new();
	assert_non_null(pol);
	assert_int_equal(pattern_parse("host.pisbx.internal", 19, 0, &p,
	    &err), 0);
	assert_int_equal(policy_add(pol, POLICY_ALLOW, &p), 0);
	assert_int_equal(target_parse("host.pisbx.internal:80", 22, 0, &h,
	    &port, &err), 0);
	assert_int_equal(policy_eval(pol, &h, port, &m), VERDICT_DENY);
	assert_null(m);
	assert_int_equal(policy_exact_allowed(pol, &h, port), 0);
	policy_free(pol);
}

/* policy_walk: what it was given, the list and source of each. */
static void
walk_cb(enum policy_list list, const struct pattern *pat, void *arg)
{
	char	*out = arg;
	size_t	 len = strlen(out);

	snprintf(out + len, 512 - len, "%s %s %s;",
	    list == POLICY_DENY ? "deny" : "allow", pat->text,
	    pat->source != NULL ? pat->source : "-");
}

static void
test_eval_walk(void **state)
{
	static const struct {
		const char	*text;
		enum policy_list list;
		const char	*source;
	} add[] = {
		{ "b.com", POLICY_ALLOW, "f: $.a[0]" },
		{ "*:22", POLICY_DENY, "f: $.d[0]" },
		{ "a.com:8080", POLICY_ALLOW, "f: $.a[1]" },
		{ "B.com.", POLICY_ALLOW, "f: $.a[2]" },	/* duplicate */
		{ "a.com", POLICY_ALLOW, NULL },
	};
	struct policy		*p;
	struct pattern		 pat;
	const struct pattern	*m;
	struct host		 h;
	const char		*err;
	char			 out[512] = "", src[32];
	size_t			 i;

	(void)state;
	assert_non_null(p = policy_new());
	for (i = 0; i < sizeof(add) / sizeof(*add); i++) {
		assert_int_equal(pattern_parse(add[i].text,
		    strlen(add[i].text), add[i].list == POLICY_DENY, &pat,
		    &err), 0);
		/* The policy keeps its own copy of the source. */
		pat.source = NULL;
		if (add[i].source != NULL) {
			snprintf(src, sizeof(src), "%s", add[i].source);
			pat.source = src;
		}
		assert_int_equal(policy_add(p, add[i].list, &pat),
		    i == 3 ? 1 : 0);
		memset(src, 'x', sizeof(src) - 1);
	}
	assert_int_equal(policy_walk(p, walk_cb, out), 0);
	assert_string_equal(out, "allow b.com f: $.a[0];deny *:22 f: $.d[0];"
	    "allow a.com:8080 f: $.a[1];allow a.com -;");
	assert_int_equal(host_canon("a.com", 5, &h, &err), 0);
	assert_int_equal(policy_eval(p, &h, 8080, &m), VERDICT_ALLOW);
	assert_string_equal(m->source, "f: $.a[1]");
	policy_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eval_table),
		cmocka_unit_test(test_loopback_name_any_port),
		cmocka_unit_test(test_eval_any),
		cmocka_unit_test(test_eval_duplicates),
		cmocka_unit_test(test_exact_allowed),
		cmocka_unit_test(test_eval_empty),
		cmocka_unit_test(test_eval_many),
		cmocka_unit_test(test_eval_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
