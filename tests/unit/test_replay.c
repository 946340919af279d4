/*
 * policy/replay.c: a table of access-log records re-decided under a
 * config without and with a reviewer (the class and the new outcome of
 * each), the parser's refusals, and the tally: one line per distinct
 * change, counted, sorted, bounded.
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

#define NETWORK \
	"\"network\":{\"allowedDomains\":[\"github.com\",\"*.github.com\"," \
	"\"10.1.2.3\",\"host.pisbx.internal:5173\"]," \
	"\"deniedDomains\":[\"uploads.github.com\",\"*:22\"]}"
#define NOREV	"{" NETWORK "}"
#define REV	"{" NETWORK ",\"review\":{\"command\":[\"/bin/reviewer\"]}}"

/* A decision record: proto http unless said, host, port, decision, reason. */
#define REC(h, p, d, r) \
	"{\"ts\":\"2026-11-30T03:12:00.123Z\",\"event\":\"decision\"," \
	"\"conn\":1,\"proto\":\"http\",\"client\":\"127.0.0.1:1\"," \
	"\"host\":\"" h "\",\"port\":" #p ",\"decision\":\"" d "\"," \
	"\"reason\":\"" r "\""
#define END	"}"

struct replay_case {
	const char		*conf;
	const char		*line;
	enum replay_class	 cls;
	const char		*to;
};

static const struct replay_case replay_cases[] = {
	{ NOREV, REC("github.com", 443, "allow", "allow-list:github.com")
	  ",\"addr\":\"140.82.121.4:443\"" END,
	  REPLAY_UNCHANGED, "allow allow-list:github.com" },
	/* a reviewer's answer, and NEW's lists */
	{ NOREV, REC("github.com", 443, "allow", "review:allow") END,
	  REPLAY_NO_LONGER_REVIEWED, "allow allow-list:github.com" },
	{ NOREV, REC("uploads.github.com", 443, "allow", "review:allow") END,
	  REPLAY_NEWLY_REFUSED, "deny deny-list:uploads.github.com" },
	{ NOREV, REC("example.com", 443, "deny", "review:deny") END,
	  REPLAY_NO_LONGER_REVIEWED, "deny no-reviewer" },
	{ NOREV, REC("example.com", 443, "allow", "review:allow") END,
	  REPLAY_NEWLY_REFUSED, "deny no-reviewer" },
	{ NOREV, REC("github.com", 443, "deny", "review:timeout") END,
	  REPLAY_NEWLY_ALLOWED, "allow allow-list:github.com" },
	{ NOREV, REC("example.com", 443, "allow", "allow-list:example.com")
	  END, REPLAY_NEWLY_REFUSED, "deny no-reviewer" },
	{ NOREV, REC("github.com", 22, "allow", "allow-list:github.com") END,
	  REPLAY_NEWLY_REFUSED, "deny deny-list:*:22" },
	{ NOREV, REC("x.github.com", 443, "deny", "deny-list:x.github.com")
	  END, REPLAY_NEWLY_ALLOWED, "allow allow-list:*.github.com" },
	{ NOREV, REC("example.com", 443, "deny", "deny-list:*") END,
	  REPLAY_OTHER_RULE, "deny no-reviewer" },
	/* with a reviewer */
	{ REV, REC("example.com", 443, "allow", "allow-list:example.com") END,
	  REPLAY_NOW_REVIEWED, "review (command)" },
	{ REV, REC("example.com", 443, "deny", "no-reviewer") END,
	  REPLAY_NOW_REVIEWED, "review (command)" },
	{ REV, REC("example.com", 443, "deny", "review:timeout") END,
	  REPLAY_UNCHANGED, "review (command)" },
	{ REV, REC("example.com", 443, "allow", "review:allow") END,
	  REPLAY_UNCHANGED, "review (command)" },
	/* failures after the policy: carried over, or asked again */
	{ REV, REC("example.com", 443, "deny", "dns-error") END,
	  REPLAY_UNCHANGED, "review (command)" },
	{ NOREV, REC("api.github.com", 443, "deny", "connect-error") END,
	  REPLAY_UNCHANGED, "deny connect-error" },
	{ NOREV, REC("example.com", 443, "deny", "dns-error") END,
	  REPLAY_OTHER_RULE, "deny no-reviewer" },
	{ NOREV, REC("uploads.github.com", 443, "deny", "parent-refused")
	  END, REPLAY_OTHER_RULE, "deny deny-list:uploads.github.com" },
	/* the address rule */
	{ NOREV, REC("api.github.com", 443, "deny", "non-public-address")
	  END, REPLAY_UNCHANGED, "deny non-public-address" },
	{ NOREV, REC("github.com", 443, "deny", "non-public-address") END,
	  REPLAY_NEWLY_ALLOWED, "allow allow-list:github.com" },
	{ NOREV, REC("api.github.com", 443, "allow",
	  "allow-list:api.github.com") ",\"addr\":\"10.0.0.5:443\"" END,
	  REPLAY_NEWLY_REFUSED, "deny non-public-address" },
	{ NOREV, REC("api.github.com", 443, "allow", "review:allow")
	  ",\"addr\":\"[2001:db8::1]:443\"" END,
	  REPLAY_NEWLY_REFUSED, "deny non-public-address" },
	{ NOREV, REC("api.github.com", 443, "allow", "review:allow")
	  ",\"addr\":\"140.82.1.1:443\"" END,
	  REPLAY_NO_LONGER_REVIEWED, "allow allow-list:*.github.com" },
	/* through an upstream proxy, addr is the upstream's */
	{ NOREV, REC("api.github.com", 443, "allow", "allow-list:*.github.com")
	  ",\"addr\":\"10.0.0.8:3128\",\"parent\":\"proxy.corp:3128\"" END,
	  REPLAY_UNCHANGED, "allow allow-list:*.github.com" },
	{ REV, REC("example.com", 443, "allow", "allow-list:example.com")
	  ",\"addr\":\"10.0.0.5:443\"" END,
	  REPLAY_NEWLY_REFUSED, "deny non-public-address" },
	{ REV, REC("10.9.9.9", 443, "deny", "no-reviewer") END,
	  REPLAY_OTHER_RULE, "deny non-public-address" },
	{ NOREV, REC("10.9.9.9", 443, "deny", "non-public-address") END,
	  REPLAY_UNCHANGED, "deny non-public-address" },
	{ NOREV, REC("10.1.2.3", 443, "deny", "non-public-address") END,
	  REPLAY_NEWLY_ALLOWED, "allow allow-list:10.1.2.3" },
	{ NOREV, REC("10.1.2.3", 3128, "deny", "non-public-address")
	  ",\"error\":\"10.1.2.3:3128 is the proxy's own listener\"" END,
	  REPLAY_UNCHANGED, "deny non-public-address" },
	{ NOREV, REC("[2001:db8::1]", 443, "deny", "no-reviewer") END,
	  REPLAY_OTHER_RULE, "deny non-public-address" },
	/* the loopback name */
	{ NOREV, REC("host.pisbx.internal", 5173, "allow",
	  "allow-list:host.pisbx.internal:5173") ",\"addr\":\"127.0.0.1:5173\""
	  END, REPLAY_UNCHANGED, "allow allow-list:host.pisbx.internal:5173" },
	{ REV, REC("host.pisbx.internal", 80, "deny", "host-loopback") END,
	  REPLAY_UNCHANGED, "deny host-loopback" },
	/* not the policy's */
	{ NOREV, "{\"event\":\"decision\",\"proto\":\"http\",\"decision\":"
	  "\"deny\",\"reason\":\"invalid-host\",\"error\":\"bad\"}",
	  REPLAY_NOT_POLICY, "deny invalid-host" },
	{ NOREV, REC("example.com", 443, "deny", "max-connections") END,
	  REPLAY_NOT_POLICY, "deny max-connections" },
	{ NOREV, REC("github.com", 443, "deny", "sni-mismatch") END,
	  REPLAY_NOT_POLICY, "deny sni-mismatch" },
};

static struct config *
replay_conf(const char *text)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*conf;

	conf = config_load_buffer(text, strlen(text), "/etc/pisbx/t.json",
	    &errs);
	config_errors_clear(&errs);
	assert_non_null(conf);
	return conf;
}

static void
test_replay_decide(void **state)
{
	struct config		*norev, *rev;
	struct replay_record	 r;
	const char		*err;
	char			 to[512];
	enum replay_class	 cls;
	size_t			 i;
	int			 failed = 0;

	(void)state;
	norev = replay_conf(NOREV);
	rev = replay_conf(REV);
	for (i = 0; i < sizeof(replay_cases) / sizeof(*replay_cases); i++) {
		const struct replay_case *c = &replay_cases[i];

		if (replay_parse(c->line, strlen(c->line), &r, &err) != 1) {
			print_error("case %zu: not parsed: %s\n", i,
			    err ? err : "(close)");
			failed++;
			continue;
		}
		cls = replay_decide(strcmp(c->conf, NOREV) == 0 ? norev : rev, &r, to,
		    sizeof(to));
		if (cls != c->cls || strcmp(to, c->to) != 0) {
			print_error("case %zu (%s):\n  got  %s, %s\n"
			    "  want %s, %s\n", i, c->line,
			    replay_class_name(cls), to,
			    replay_class_name(c->cls), c->to);
			failed++;
		}
	}
	config_free(norev);
	config_free(rev);
	assert_int_equal(failed, 0);
}

/*
 * Request records (terminated tunnels) under another config's request
 * rules: the path as logged (query keys only) canonicalised the same
 * way, a 200 now refused by a rule, a 403 rule no longer there, a
 * refusal that was not a rule's.
 */
#define RULES \
	"{\"network\":{\"allowedDomains\":[\"github.com\"]," \
	"\"tlsTerminate\":{},\"requestRules\":[{\"host\":\"github.com\"," \
	"\"deny\":[\"POST /**/git-receive-pack\"]}]}}"
#define REQ(m, p, rest) \
	"{\"event\":\"request\",\"conn\":3,\"proto\":\"connect\"," \
	"\"host\":\"github.com\",\"port\":443,\"method\":\"" m "\"," \
	"\"path\":\"" p "\"," rest ",\"tls\":\"terminated\"}"

static const struct replay_case request_cases[] = {
	{ RULES, REQ("POST", "/o/r.git/git-receive-pack?service",
	  "\"status\":200"),
	  REPLAY_NEWLY_REFUSED,
	  "deny request-rule:POST /**/git-receive-pack" },
	{ RULES, REQ("POST", "/o/r.git/%67it-receive-pack", "\"status\":200"),
	  REPLAY_NEWLY_REFUSED,
	  "deny request-rule:POST /**/git-receive-pack" },
	{ RULES, REQ("GET", "/o/r.git/info/refs?service", "\"status\":200"),
	  REPLAY_UNCHANGED, "allow no-rule" },
	{ RULES, REQ("DELETE", "/o/r", "\"status\":403,"
	  "\"reason\":\"request-rule\",\"rule\":\"DELETE /**\","
	  "\"source\":\"/x.json: $.network.requestRules[0].deny[0]\""),
	  REPLAY_NEWLY_ALLOWED, "allow no-rule" },
	{ RULES, REQ("GET", "/a/../b", "\"status\":200"),
	  REPLAY_NEWLY_REFUSED, "deny ambiguous-target" },
	{ RULES, REQ("GET", "/a", "\"status\":421,"
	  "\"reason\":\"host-mismatch\""),
	  REPLAY_NOT_POLICY, "deny host-mismatch" },
};

static void
test_replay_request(void **state)
{
	struct config		*conf;
	struct replay_record	 r;
	const char		*err;
	char			 to[512];
	enum replay_class	 cls;
	size_t			 i;
	int			 failed = 0;

	(void)state;
	conf = replay_conf(RULES);
	for (i = 0; i < sizeof(request_cases) / sizeof(*request_cases); i++) {
		const struct replay_case *c = &request_cases[i];

		if (replay_parse(c->line, strlen(c->line), &r, &err) != 1) {
			print_error("case %zu: not parsed: %s\n", i,
			    err ? err : "(close)");
			failed++;
			continue;
		}
		cls = replay_decide(conf, &r, to, sizeof(to));
		if (cls != c->cls || strcmp(to, c->to) != 0) {
			print_error("case %zu (%s):\n  got  %s, %s\n"
			    "  want %s, %s\n", i, c->line,
			    replay_class_name(cls), to,
			    replay_class_name(c->cls), c->to);
			failed++;
		}
	}
	config_free(conf);
	assert_int_equal(failed, 0);
}

struct parse_case {
	const char	*line;
	int		 rc;
	const char	*err;	/* NULL: none */
};

static const struct parse_case parse_cases[] = {
	{ "{\"event\":\"close\",\"conn\":1,\"proto\":\"none\"}", 0, NULL },
	{ "", -1, "not a JSON record (replay reads --log-format json logs)" },
	{ "2026-11-30T03:12:00.123Z conn=7 decision connect",
	  -1, "not a JSON record (replay reads --log-format json logs)" },
	{ "{\"event\":", -1, "not a JSON object" },
	{ "{\"event\":\"decision\",\"event\":\"close\"}", -1,
	  "not a JSON object" },
	{ "{\"event\":\"open\"}", -1, "unknown event" },
	{ "{\"event\":1}", -1, "a field is not a string" },
	{ REC("github.com", 443, "maybe", "no-reviewer") END, -1,
	  "decision is neither allow nor deny" },
	{ REC("github.com", 443, "deny", "whatever") END, -1,
	  "unknown reason" },
	{ REC("github.com", 443, "deny", "review:maybe") END, -1,
	  "unknown reason" },
	{ REC("github.com", 443, "deny", "deny-list:\\u001b[31m") END, -1,
	  "a field holds a byte outside printable ASCII" },
	{ REC("github.com", 443, "deny", "deny-list:\\u00e9") END, -1,
	  "a field holds a byte outside printable ASCII" },
	{ REC("github.com", 443, "deny", "dns-error") ",\"error\":3" END, -1,
	  "a field is not a string" },
	{ REC("github.com", 443, "allow", "deny-list:github.com") END, -1,
	  "the decision does not go with the reason" },
	{ REC("github.com", 443, "deny", "review:allow") END, -1,
	  "the decision does not go with the reason" },
	{ REC("GitHub.com", 443, "deny", "no-reviewer") END, -1,
	  "host is not a canonical host" },
	{ REC("127.1", 443, "deny", "no-reviewer") END, -1,
	  "host is not a canonical host" },
	{ REC("github.com", 0, "deny", "no-reviewer") END, -1,
	  "port is not a number from 1 to 65535" },
	{ REC("github.com", 65536, "deny", "no-reviewer") END, -1,
	  "port is not a number from 1 to 65535" },
	{ "{\"event\":\"decision\",\"proto\":\"http\",\"host\":\"a.com\","
	  "\"port\":\"443\",\"decision\":\"deny\",\"reason\":\"no-reviewer\"}",
	  -1, "port is not a number from 1 to 65535" },
	{ "{\"event\":\"decision\",\"proto\":\"http\",\"port\":443,"
	  "\"decision\":\"deny\",\"reason\":\"no-reviewer\"}", -1,
	  "a field the record needs is missing" },
	{ "{\"event\":\"decision\",\"proto\":\"gopher\",\"host\":\"a.com\","
	  "\"port\":443,\"decision\":\"deny\",\"reason\":\"no-reviewer\"}",
	  -1, "proto is not connect, http or socks5" },
	{ "[1,2]", -1,
	  "not a JSON record (replay reads --log-format json logs)" },
	{ REC("github.com", 443, "deny", "no-reviewer") END, 1, NULL },
};

static void
test_replay_parse(void **state)
{
	struct replay_record	 r;
	const char		*err;
	char			*big;
	size_t			 i, n;
	int			 rc, failed = 0;

	(void)state;
	for (i = 0; i < sizeof(parse_cases) / sizeof(*parse_cases); i++) {
		const struct parse_case *c = &parse_cases[i];

		rc = replay_parse(c->line, strlen(c->line), &r, &err);
		if (rc != c->rc || (c->err == NULL) != (err == NULL) ||
		    (c->err != NULL && strcmp(c->err, err) != 0)) {
			print_error("case %zu (%s): got %d %s, want %d %s\n",
			    i, c->line, rc, err ? err : "-", c->rc,
			    c->err ? c->err : "-");
			failed++;
		}
	}
	assert_int_equal(failed, 0);
	/* Over the bound: refused before any parsing. */
	assert_non_null(big = malloc(REPLAY_LINE_MAX + 2));
	memset(big, ' ', REPLAY_LINE_MAX + 1);
	big[0] = '{';
	big[REPLAY_LINE_MAX + 1] = '\0';
	assert_int_equal(replay_parse(big, REPLAY_LINE_MAX + 1, &r, &err), -1);
	assert_string_equal(err, "line too long for an access-log record");
	free(big);
	/* A long error detail is no reason to refuse a record. */
	assert_non_null(big = malloc(8192));
	n = (size_t)snprintf(big, 8192, REC("github.com", 443, "deny",
	    "non-public-address") ",\"error\":\"%04000d the proxy's own "
	    "listener\"}", 0);
	assert_int_equal(replay_parse(big, n, &r, &err), 1);
	assert_int_equal(r.own_listener, 1);
	free(big);
}

/* Add one line's record, re-decided, to the tally. */
static void
tally(struct replay *rp, const struct config *conf, const char *line)
{
	struct replay_record	 r;
	const char		*err;
	char			 to[512];

	assert_int_equal(replay_parse(line, strlen(line), &r, &err), 1);
	assert_int_equal(replay_add(rp, &r, replay_decide(conf, &r, to,
	    sizeof(to)), to), 0);
}

static void
test_replay_tally(void **state)
{
	static const char	 a[] = REC("b.com", 443, "allow",
				    "allow-list:b.com") END;
	static const char	 b[] = REC("a.com", 443, "allow",
				    "allow-list:a.com") END;
	static const char	 c[] = REC("c.com", 443, "deny",
				    "review:deny") END;
	static const char	 d[] = REC("github.com", 443, "allow",
				    "allow-list:github.com") END;
	struct config		*conf;
	struct replay		*rp;
	const struct replay_change **v;
	uint64_t		 counts[REPLAY_NCLASS], unlisted;
	size_t			 n;

	(void)state;
	conf = replay_conf(NOREV);
	assert_non_null(rp = replay_new(2));
	tally(rp, conf, a);
	tally(rp, conf, a);
	tally(rp, conf, b);
	tally(rp, conf, c);	/* a third distinct change: over the bound */
	tally(rp, conf, c);
	tally(rp, conf, d);
	assert_non_null(v = replay_changes(rp, &n, &unlisted, counts));
	assert_int_equal(n, 2);
	assert_int_equal(unlisted, 2);
	assert_string_equal(v[0]->target, "a.com:443 http");
	assert_int_equal(v[0]->count, 1);
	assert_string_equal(v[1]->target, "b.com:443 http");
	assert_string_equal(v[1]->from, "allow allow-list:b.com");
	assert_string_equal(v[1]->to, "deny no-reviewer");
	assert_int_equal(v[1]->count, 2);
	assert_int_equal(counts[REPLAY_NEWLY_REFUSED], 3);
	assert_int_equal(counts[REPLAY_NO_LONGER_REVIEWED], 2);
	assert_int_equal(counts[REPLAY_UNCHANGED], 1);
	free(v);
	replay_free(rp);
	config_free(conf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_decide),
		cmocka_unit_test(test_replay_parse),
		cmocka_unit_test(test_replay_request),
		cmocka_unit_test(test_replay_tally),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
