/*
 * pisbx-run's refusal summary (launcher/run/summary.c): repeats counted once,
 * the stderr text capped with a pointer to the report, the report every
 * refusal as one JSON object per line, nothing at all when nothing was
 * refused; allowed destinations that could not be reached in a part of
 * their own; a heading that says so when the command exited 0; every
 * line masked for the terminal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/log.h"
#include "policy/policy.h"
#include "launcher/run/run.h"

#define HINT	"to allow it, add \"registry.npmjs.org\" to " \
		"network.allowedDomains in /home/u/.config/pisbx/config.json"

/* What f holds, NUL-terminated (the test frees it). */
static char *
slurp(FILE *f)
{
	long	 n;
	char	*buf;

	fflush(f);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	return buf;
}

static void
test_summary_empty(void **state)
{
	struct summary	*s;
	FILE		*f;
	char		*out;

	(void)state;
	assert_non_null(s = summary_new());
	assert_non_null(f = tmpfile());
	summary_print(s, f, NULL, 1, 0);
	out = slurp(f);
	assert_string_equal(out, "");
	free(out);
	fclose(f);
	assert_non_null(f = tmpfile());
	assert_int_equal(summary_json(s, f), 0);
	out = slurp(f);
	assert_string_equal(out, "[\n]\n");
	free(out);
	fclose(f);
	summary_free(s);
}

static void
test_summary_dedup(void **state)
{
	struct summary	*s;
	FILE		*f;
	char		*out;
	json_t		*j, *o;
	json_error_t	 jerr;
	int		 i;

	(void)state;
	assert_non_null(s = summary_new());
	for (i = 0; i < 3; i++)
		summary_net(s, SUMMARY_NET, "registry.npmjs.org", 443,
		    "connect", "no-reviewer", NULL, HINT);
	summary_net(s, SUMMARY_NET, "registry.npmjs.org", 443, "connect",
	    "review:deny", "the person said no", HINT);
	summary_net(s, SUMMARY_NET, "[2001:db8::1]", 8443, "socks5",
	    "non-public-address", "[2001:db8::1]:8443 is documentation", NULL);
	summary_file(s, "create", "/w/.bashrc",
	    "protected path, read by bash outside the sandbox");
	summary_file(s, "create", "/w/.bashrc",
	    "protected path, read by bash outside the sandbox");
	assert_int_equal(summary_count(s), 4);

	assert_non_null(f = tmpfile());
	summary_print(s, f, NULL, 1, 0);
	out = slurp(f);
	assert_string_equal(out,
	    "pisbx-run: refused during this run (--quiet hides "
	    "this):\n"
	    "  connect registry.npmjs.org:443 (no-reviewer, 3 times): " HINT
	    "\n"
	    "  connect registry.npmjs.org:443 (review:deny): " HINT "\n"
	    "  socks5 [2001:db8::1]:8443 (non-public-address)\n"
	    "  create /w/.bashrc (2 times): protected path, read by bash "
	    "outside the sandbox\n");
	free(out);
	fclose(f);

	assert_non_null(f = tmpfile());
	assert_int_equal(summary_json(s, f), 0);
	out = slurp(f);
	/* One object per line inside one array. */
	assert_non_null(strstr(out, "[\n{\"kind\":\"network\",\"host\":"
	    "\"registry.npmjs.org\",\"port\":443,\"proto\":\"connect\","
	    "\"reason\":\"no-reviewer\",\"count\":3,\"hint\":"));
	assert_non_null(strstr(out, ",\n{\"kind\":\"file\",\"op\":\"create\","
	    "\"path\":\"/w/.bashrc\",\"count\":2,\"why\":\"protected path, "
	    "read by bash outside the sandbox\"}\n]\n"));
	assert_non_null(j = json_loads(out, 0, &jerr));
	assert_int_equal(json_array_size(j), 4);
	o = json_array_get(j, 2);
	assert_string_equal(json_string_value(json_object_get(o, "host")),
	    "[2001:db8::1]");
	assert_string_equal(json_string_value(json_object_get(o, "detail")),
	    "[2001:db8::1]:8443 is documentation");
	assert_null(json_object_get(o, "hint"));
	json_decref(j);
	free(out);
	fclose(f);
	summary_free(s);
}

/* Past ten lines the text stops and says where the rest is. */
static void
test_summary_cap(void **state)
{
	struct summary	*s;
	FILE		*f;
	char		*out, host[32], *p;
	json_t		*j;
	json_error_t	 jerr;
	int		 i, lines = 0;

	(void)state;
	assert_non_null(s = summary_new());
	for (i = 0; i < 25; i++) {
		snprintf(host, sizeof(host), "h%d.test", i);
		summary_net(s, SUMMARY_NET, host, 443, "connect",
		    "no-reviewer", NULL, NULL);
	}
	summary_more(s);
	assert_non_null(f = tmpfile());
	summary_print(s, f, "/tmp/r.json", 1, 0);
	out = slurp(f);
	for (p = out; (p = strchr(p, '\n')) != NULL; p++)
		lines++;
	assert_int_equal(lines, 12);
	assert_non_null(strstr(out, "  connect h9.test:443 (no-reviewer)\n"));
	assert_null(strstr(out, "h10.test"));
	assert_non_null(strstr(out, "  ... and more; all of them in "
	    "/tmp/r.json\n"));
	free(out);
	fclose(f);
	assert_non_null(f = tmpfile());
	assert_int_equal(summary_json(s, f), 0);
	out = slurp(f);
	assert_non_null(j = json_loads(out, 0, &jerr));
	/* 25 refusals and one "more" (the guard stopped telling). */
	assert_int_equal(json_array_size(j), 26);
	json_decref(j);
	free(out);
	fclose(f);
	summary_free(s);
}

/*
 * An allowed destination that could not be reached has its own part,
 * with the error (an HTTPS client saw only "502"), deduplicated and
 * capped like the refusals; alone it still says how to hide it.
 */
static void
test_summary_unreachable(void **state)
{
	struct summary	*s;
	FILE		*f;
	char		*out, host[32];
	json_t		*j, *o;
	json_error_t	 jerr;
	int		 i;

	(void)state;
	assert_non_null(s = summary_new());
	for (i = 0; i < 3; i++)
		summary_net(s, SUMMARY_UNREACH, "index.crates.io", 443,
		    "connect", "dns-error", "index.crates.io: Domain name not "
		    "found", NULL);
	summary_net(s, SUMMARY_UNREACH, "gw.test", 443, "connect",
	    "parent-error", "the upstream proxy gw:3128: connect to "
	    "10.0.0.1:3128: Connection refused", "check that the upstream "
	    "proxy is up");
	assert_non_null(f = tmpfile());
	summary_print(s, f, NULL, 101, 0);
	out = slurp(f);
	assert_string_equal(out,
	    "pisbx-run: allowed, but could not be reached (--quiet hides "
	    "this):\n"
	    "  connect index.crates.io:443 (dns-error, 3 times): "
	    "index.crates.io: Domain name not found\n"
	    "  connect gw.test:443 (parent-error): the upstream proxy "
	    "gw:3128: connect to 10.0.0.1:3128: Connection refused; check "
	    "that the upstream proxy is up\n");
	free(out);
	fclose(f);

	/* With refusals: those first, then the failures, each capped. */
	summary_net(s, SUMMARY_NET, "registry.npmjs.org", 443, "connect",
	    "no-reviewer", NULL, HINT);
	for (i = 0; i < 8; i++) {
		snprintf(host, sizeof(host), "down%d.test", i);
		summary_net(s, SUMMARY_UNREACH, host, 80, "http",
		    "connect-error", "connect to 192.0.2.1:80: Connection "
		    "refused", NULL);
	}
	assert_non_null(f = tmpfile());
	summary_print(s, f, NULL, 1, 0);
	out = slurp(f);
	assert_string_equal(out,
	    "pisbx-run: refused during this run (--quiet hides this):\n"
	    "  connect registry.npmjs.org:443 (no-reviewer): " HINT "\n"
	    "pisbx-run: allowed, but could not be reached:\n"
	    "  connect index.crates.io:443 (dns-error, 3 times): "
	    "index.crates.io: Domain name not found\n"
	    "  connect gw.test:443 (parent-error): the upstream proxy "
	    "gw:3128: connect to 10.0.0.1:3128: Connection refused; check "
	    "that the upstream proxy is up\n"
	    "  http down0.test:80 (connect-error): connect to 192.0.2.1:80: "
	    "Connection refused\n"
	    "  http down1.test:80 (connect-error): connect to 192.0.2.1:80: "
	    "Connection refused\n"
	    "  http down2.test:80 (connect-error): connect to 192.0.2.1:80: "
	    "Connection refused\n"
	    "  ... and more (--report FILE lists them all)\n");
	free(out);
	fclose(f);

	assert_non_null(f = tmpfile());
	assert_int_equal(summary_json(s, f), 0);
	out = slurp(f);
	assert_non_null(j = json_loads(out, 0, &jerr));
	assert_int_equal(json_array_size(j), 11);
	o = json_array_get(j, 0);
	assert_string_equal(json_string_value(json_object_get(o, "kind")),
	    "unreachable");
	assert_string_equal(json_string_value(json_object_get(o, "reason")),
	    "dns-error");
	assert_int_equal(json_integer_value(json_object_get(o, "count")), 3);
	assert_string_equal(json_string_value(json_object_get(o, "detail")),
	    "index.crates.io: Domain name not found");
	json_decref(j);
	free(out);
	fclose(f);
	summary_free(s);
}

/*
 * A command that exited 0 did without what was refused: the heading
 * says so (npm's audit and update check), the lines stay.
 */
static void
test_summary_succeeded(void **state)
{
	struct summary	*s;
	FILE		*f;
	char		*out;

	(void)state;
	assert_non_null(s = summary_new());
	summary_net(s, SUMMARY_NET, "registry.npmjs.org", 443, "connect",
	    "no-reviewer", NULL, HINT);
	assert_non_null(f = tmpfile());
	summary_print(s, f, NULL, 0, 0);
	out = slurp(f);
	assert_string_equal(out,
	    "pisbx-run: the command exited 0; refused on the way (allow "
	    "these only if something is missing; --quiet hides this):\n"
	    "  connect registry.npmjs.org:443 (no-reviewer): " HINT "\n");
	free(out);
	fclose(f);
	summary_free(s);
}

/*
 * A path the command chose, and an error text a peer sent, cannot write
 * pisbx-run's last words: newlines, escape sequences and bidi controls
 * are masked on the terminal; the report keeps the exact text, escaped.
 */
static void
test_summary_masked(void **state)
{
	static const char path[] = "/w/.git/hooks/x\n\033[31mpisbx-run: all "
	    "clear\xe2\x80\xae";
	struct summary	*s;
	FILE		*f;
	char		*out;
	json_t		*j;
	json_error_t	 jerr;

	(void)state;
	assert_non_null(s = summary_new());
	summary_file(s, "create", path, "protected path\r\033[2K");
	summary_net(s, SUMMARY_UNREACH, "a.test", 443, "connect",
	    "parent-error", "the upstream answered \033]0;owned\007", NULL);
	assert_non_null(f = tmpfile());
	summary_print(s, f, NULL, 1, 0);
	out = slurp(f);
	assert_string_equal(out,
	    "pisbx-run: refused during this run (--quiet hides this):\n"
	    "  create /w/.git/hooks/x??[31mpisbx-run: all clear???: "
	    "protected path??[2K\n"
	    "pisbx-run: allowed, but could not be reached:\n"
	    "  connect a.test:443 (parent-error): the upstream answered "
	    "?]0;owned?\n");
	free(out);
	fclose(f);
	assert_non_null(f = tmpfile());
	assert_int_equal(summary_json(s, f), 0);
	out = slurp(f);
	assert_non_null(j = json_loads(out, 0, &jerr));
	assert_string_equal(json_string_value(json_object_get(
	    json_array_get(j, 0), "path")), path);
	json_decref(j);
	free(out);
	fclose(f);
	summary_free(s);
}

/*
 * Under pisbx-sh the reader is a model: the lines are signed as the
 * program's other lines are (pisbx-sh), and name no option it cannot
 * pass (--quiet, --report).
 */
static void
test_summary_agent(void **state)
{
	struct summary	*s;
	FILE		*f;
	char		*out, path[32];
	size_t		 i;

	(void)state;
	log_init("pisbx-sh", 0);
	assert_non_null(s = summary_new());
	for (i = 0; i < 12; i++) {
		snprintf(path, sizeof(path), "/w/.bashrc%zu", i);
		summary_file(s, "create", path, "protected path");
	}
	summary_net(s, SUMMARY_UNREACH, "a.test", 443, "connect",
	    "dns-error", "no such name", NULL);
	assert_non_null(f = tmpfile());
	summary_print(s, f, NULL, 1, 1);
	out = slurp(f);
	assert_non_null(strstr(out, "pisbx-sh: refused during this run:\n"
	    "  create /w/.bashrc0: protected path\n"));
	assert_non_null(strstr(out, "  ... and more\n"
	    "pisbx-sh: allowed, but could not be reached:\n"));
	assert_null(strstr(out, "pisbx-run"));
	assert_null(strstr(out, "--quiet"));
	assert_null(strstr(out, "--report"));
	free(out);
	fclose(f);
	summary_free(s);
	s = summary_new();
	summary_file(s, "create", "/w/.bashrc", "protected path");
	assert_non_null(f = tmpfile());
	summary_print(s, f, NULL, 0, 1);
	out = slurp(f);
	assert_string_equal(out, "pisbx-sh: the command exited 0; refused on "
	    "the way (allow these only if something is missing):\n"
	    "  create /w/.bashrc: protected path\n");
	free(out);
	fclose(f);
	summary_free(s);
	log_init("pisbx-run", 0);
}

/*
 * Credentials put in on the way: counted per name and host:port, in the
 * report as "injected" items after the refusals, on stderr only through
 * summary_print_injected (-v); never a refusal: with nothing refused,
 * summary_print says nothing and summary_count is 0.
 */
static void
test_summary_injected(void **state)
{
	struct summary	*s;
	FILE		*f;
	json_t		*j;
	char		*out;

	(void)state;
	log_init("pisbx-run", 0);
	assert_non_null(s = summary_new());
	summary_injected_cb("$GH_TOKEN", "api.test", 443, s);
	summary_injected_cb("$GH_TOKEN", "api.test", 443, s);
	summary_injected_cb("$GH_TOKEN", "api.test", 443, s);
	summary_injected_cb("$GH_TOKEN", "api.test", 8443, s);
	summary_injected_cb("$API_KEY", "api.test", 443, s);
	assert_int_equal(summary_count(s), 0);
	assert_non_null(f = tmpfile());
	summary_print(s, f, NULL, 0, 0);
	summary_print(s, f, NULL, 1, 0);
	out = slurp(f);
	assert_string_equal(out, "");
	free(out);
	fclose(f);
	assert_non_null(f = tmpfile());
	summary_print_injected(s, f);
	out = slurp(f);
	assert_string_equal(out,
	    "pisbx-run: put in on the way: $GH_TOKEN \u2192 api.test:443 "
	    "(3 requests)\n"
	    "pisbx-run: put in on the way: $GH_TOKEN \u2192 api.test:8443 "
	    "(1 request)\n"
	    "pisbx-run: put in on the way: $API_KEY \u2192 api.test:443 "
	    "(1 request)\n");
	free(out);
	fclose(f);
	assert_non_null(f = tmpfile());
	assert_int_equal(summary_json(s, f), 0);
	out = slurp(f);
	assert_string_equal(out, "[\n"
	    "{\"kind\":\"injected\",\"credential\":\"$GH_TOKEN\","
	    "\"host\":\"api.test\",\"port\":443,\"requests\":3},\n"
	    "{\"kind\":\"injected\",\"credential\":\"$GH_TOKEN\","
	    "\"host\":\"api.test\",\"port\":8443,\"requests\":1},\n"
	    "{\"kind\":\"injected\",\"credential\":\"$API_KEY\","
	    "\"host\":\"api.test\",\"port\":443,\"requests\":1}\n]\n");
	free(out);
	fclose(f);
	/* After a refusal: a comma between the two kinds, refusals first. */
	summary_net(s, SUMMARY_NET, "evil.test", 443, "connect",
	    "not-allowed", NULL, NULL);
	assert_int_equal(summary_count(s), 1);
	assert_non_null(f = tmpfile());
	assert_int_equal(summary_json(s, f), 0);
	out = slurp(f);
	assert_non_null(strstr(out, "[\n{\"kind\":\"network\""));
	assert_non_null(strstr(out, "\"count\":1},\n{\"kind\":"
	    "\"injected\""));
	assert_non_null(j = json_loads(out, 0, NULL));
	assert_int_equal(json_array_size(j), 4);
	json_decref(j);
	free(out);
	fclose(f);
	summary_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_empty),
		cmocka_unit_test(test_summary_dedup),
		cmocka_unit_test(test_summary_cap),
		cmocka_unit_test(test_summary_unreachable),
		cmocka_unit_test(test_summary_succeeded),
		cmocka_unit_test(test_summary_masked),
		cmocka_unit_test(test_summary_agent),
		cmocka_unit_test(test_summary_injected),
	};

	log_init("pisbx-run", 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
