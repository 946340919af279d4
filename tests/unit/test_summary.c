/*
 * pisbx-run's refusal summary (launcher/summary.c): repeats counted once,
 * the stderr text capped with a pointer to the report, the report every
 * refusal as one JSON object per line, nothing at all when nothing was
 * refused.
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

#include "policy/policy.h"
#include "launcher/launcher.h"

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
	summary_print(s, f, NULL);
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
		summary_net(s, "registry.npmjs.org", 443, "connect",
		    "no-reviewer", NULL, HINT);
	summary_net(s, "registry.npmjs.org", 443, "connect", "review:deny",
	    "the person said no", HINT);
	summary_net(s, "[2001:db8::1]", 8443, "socks5", "non-public-address",
	    "[2001:db8::1]:8443 is documentation", NULL);
	summary_file(s, "create", "/w/.bashrc",
	    "protected path, read by bash outside the sandbox");
	summary_file(s, "create", "/w/.bashrc",
	    "protected path, read by bash outside the sandbox");
	assert_int_equal(summary_count(s), 4);

	assert_non_null(f = tmpfile());
	summary_print(s, f, NULL);
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
		summary_net(s, host, 443, "connect", "no-reviewer", NULL, NULL);
	}
	summary_more(s);
	assert_non_null(f = tmpfile());
	summary_print(s, f, "/tmp/r.json");
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_empty),
		cmocka_unit_test(test_summary_dedup),
		cmocka_unit_test(test_summary_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
