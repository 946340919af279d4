/*
 * Unit tests for approval/review.c: the reply parser (a table of good
 * and hostile replies), request ids, the access-log reasons, the
 * printable filter and the answers review_start gives at once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>

#include "policy/policy.h"
#include "approval/approval.h"

#define ID	"3f0c2a9e-5b1d-4c7e-9a2b-0123456789ab"

struct reply_case {
	const char		*in;
	int			 id_required;
	int			 rc;
	enum review_result	 res;
	const char		*detail;	/* prefix */
};

static const struct reply_case reply_cases[] = {
	{ "{\"action\":\"allow\"}", 0, 0, REVIEW_RESULT_ALLOW, "" },
	{ "{\"action\":\"deny\"}", 0, 0, REVIEW_RESULT_DENY, "" },
	{ "{\"action\":\"deny\",\"reason\":\"no\"}", 0, 0,
	    REVIEW_RESULT_DENY, "no" },
	{ "{\"action\":\"allow\",\"id\":\"" ID "\",\"reason\":\"ok\"}", 1, 0,
	    REVIEW_RESULT_ALLOW, "ok" },
	{ " {\"action\":\"allow\",\"extra\":[1,{\"x\":null}]} ", 0, 0,
	    REVIEW_RESULT_ALLOW, "" },
	{ "{\"action\":\"deny\",\"reason\":\"a\\u001b[2Jb\\nc\"}", 0, 0,
	    REVIEW_RESULT_DENY, "a?[2Jb?c" },
	{ "{\"action\":\"deny\",\"reason\":\"\\u009b1m\"}", 0, 0,
	    REVIEW_RESULT_DENY, "??1m" },
	/* hostile */
	{ "", 0, -1, REVIEW_RESULT_ERROR, "reply is not JSON" },
	{ "yes", 0, -1, REVIEW_RESULT_ERROR, "reply is not JSON" },
	{ "{\"action\":\"allow\"", 0, -1, REVIEW_RESULT_ERROR,
	    "reply is not JSON" },
	{ "{\"action\":\"allow\"}{\"action\":\"allow\"}", 0, -1,
	    REVIEW_RESULT_ERROR, "reply is not JSON" },
	{ "{\"action\":\"deny\",\"action\":\"allow\"}", 0, -1,
	    REVIEW_RESULT_ERROR, "reply is not JSON" },
	{ "[\"allow\"]", 0, -1, REVIEW_RESULT_ERROR,
	    "reply is not a JSON object" },
	{ "\"allow\"", 0, -1, REVIEW_RESULT_ERROR, "reply is not JSON" },
	{ "{}", 0, -1, REVIEW_RESULT_ERROR, "reply has no action string" },
	{ "{\"action\":true}", 0, -1, REVIEW_RESULT_ERROR,
	    "reply has no action string" },
	{ "{\"action\":\"ALLOW\"}", 0, -1, REVIEW_RESULT_ERROR,
	    "reply action is not allow or deny" },
	{ "{\"action\":\"allow \"}", 0, -1, REVIEW_RESULT_ERROR,
	    "reply action is not allow or deny" },
	{ "{\"action\":\"allow\\u0000x\"}", 0, -1, REVIEW_RESULT_ERROR,
	    "reply is not JSON" },
	{ "{\"action\":\"allow\"}", 1, -1, REVIEW_RESULT_ERROR,
	    "reply has no id" },
	{ "{\"action\":\"allow\",\"id\":\"" ID "x\"}", 0, -1,
	    REVIEW_RESULT_ERROR, "reply id does not match" },
	{ "{\"action\":\"allow\",\"id\":\"3f0c2a9e\"}", 0, -1,
	    REVIEW_RESULT_ERROR, "reply id does not match" },
	{ "{\"action\":\"allow\",\"id\":7}", 0, -1, REVIEW_RESULT_ERROR,
	    "reply id is not a string" },
	{ "{\"action\":\"allow\",\"reason\":1}", 0, -1, REVIEW_RESULT_ERROR,
	    "reply reason is not a string" },
};

/* The reply's scope: once (also when absent), run, worker. */
struct scope_case {
	const char		*in;
	int			 id_required;
	int			 rc;
	enum review_scope	 scope;		/* when rc is 0 */
	const char		*detail;	/* prefix, when rc is -1 */
};

static const struct scope_case scope_cases[] = {
	{ "{\"action\":\"allow\"}", 0, 0, REVIEW_SCOPE_ONCE, "" },
	{ "{\"action\":\"allow\",\"scope\":\"once\"}", 0, 0,
	    REVIEW_SCOPE_ONCE, "" },
	{ "{\"action\":\"allow\",\"scope\":\"run\",\"reason\":\"ok\"}", 0, 0,
	    REVIEW_SCOPE_RUN, "" },
	{ "{\"action\":\"allow\",\"id\":\"" ID "\",\"scope\":\"worker\"}", 1,
	    0, REVIEW_SCOPE_WORKER, "" },
	{ "{\"action\":\"allow\",\"id\":\"" ID "\",\"scope\":\"run\"}", 1,
	    0, REVIEW_SCOPE_RUN, "" },
	{ "{\"action\":\"deny\",\"scope\":\"run\"}", 0, 0, REVIEW_SCOPE_RUN,
	    "" },
	/* a malformed scope is a deny, never a wider allow */
	{ "{\"action\":\"allow\",\"scope\":\"worker\"}", 0, -1,
	    REVIEW_SCOPE_ONCE, "reply scope is not once or run" },
	{ "{\"action\":\"allow\",\"scope\":\"Run\"}", 0, -1,
	    REVIEW_SCOPE_ONCE, "reply scope is not once or run" },
	{ "{\"action\":\"allow\",\"scope\":\"forever\"}", 0, -1,
	    REVIEW_SCOPE_ONCE, "reply scope" },
	{ "{\"action\":\"allow\",\"scope\":\"run \"}", 0, -1,
	    REVIEW_SCOPE_ONCE, "reply scope" },
	{ "{\"action\":\"allow\",\"scope\":\"\"}", 0, -1, REVIEW_SCOPE_ONCE,
	    "reply scope" },
	{ "{\"action\":\"allow\",\"scope\":1}", 0, -1, REVIEW_SCOPE_ONCE,
	    "reply scope" },
	{ "{\"action\":\"allow\",\"scope\":[\"run\"]}", 0, -1,
	    REVIEW_SCOPE_ONCE, "reply scope" },
	{ "{\"action\":\"allow\",\"scope\":null}", 0, -1, REVIEW_SCOPE_ONCE,
	    "reply scope" },
	{ "{\"action\":\"allow\",\"scope\":\"run\\u0000\"}", 0, -1,
	    REVIEW_SCOPE_ONCE, "reply is not JSON" },
	{ "{\"action\":\"allow\",\"id\":\"" ID "\",\"scope\":\"all\"}", 1,
	    -1, REVIEW_SCOPE_ONCE, "reply scope is not once, run or worker" },
};

static void
test_reply_table(void **state)
{
	const struct reply_case	*c;
	enum review_result	 res;
	enum review_scope	 scope;
	char			 detail[256];
	size_t			 i;
	int			 rc;

	(void)state;
	for (i = 0; i < sizeof(reply_cases) / sizeof(reply_cases[0]); i++) {
		c = &reply_cases[i];
		rc = review_reply_parse(c->in, strlen(c->in), ID,
		    c->id_required, &res, &scope, detail, sizeof(detail));
		if (rc != c->rc || res != c->res ||
		    strncmp(detail, c->detail, strlen(c->detail)) != 0 ||
		    (c->rc == 0 && strcmp(detail, c->detail) != 0))
			fail_msg("case %zu (%s): rc %d res %d detail \"%s\"",
			    i, c->in, rc, (int)res, detail);
	}
}

static void
test_reply_scope(void **state)
{
	const struct scope_case	*c;
	enum review_result	 res;
	enum review_scope	 scope;
	char			 detail[256];
	size_t			 i;
	int			 rc;

	(void)state;
	for (i = 0; i < sizeof(scope_cases) / sizeof(scope_cases[0]); i++) {
		c = &scope_cases[i];
		scope = (enum review_scope)-1;
		rc = review_reply_parse(c->in, strlen(c->in), ID,
		    c->id_required, &res, &scope, detail, sizeof(detail));
		if (rc != c->rc || (rc == 0 && scope != c->scope) ||
		    (rc == -1 && (res != REVIEW_RESULT_ERROR ||
		    strncmp(detail, c->detail, strlen(c->detail)) != 0)))
			fail_msg("scope case %zu (%s): rc %d res %d scope %d "
			    "detail \"%s\"", i, c->in, rc, (int)res,
			    (int)scope, detail);
	}
}

/* Over 16 KiB is refused before parsing; exactly 16 KiB is a frame. */
static void
test_reply_size(void **state)
{
	enum review_result	 res;
	char			 detail[256];
	char			*buf;
	const char		*head = "{\"action\":\"deny\",\"reason\":\"";
	size_t			 len = REVIEW_FRAME_MAX;

	(void)state;
	buf = malloc(len + 2);
	assert_non_null(buf);
	memset(buf, 'r', len + 1);
	memcpy(buf, head, strlen(head));
	memcpy(buf + len - 2, "\"}", 2);
	assert_int_equal(review_reply_parse(buf, len, ID, 0, &res, NULL,
	    detail, sizeof(detail)), 0);
	assert_int_equal(res, REVIEW_RESULT_DENY);
	memcpy(buf + len - 2, "r\"}", 3);
	assert_int_equal(review_reply_parse(buf, len + 1, ID, 0, &res, NULL,
	    detail, sizeof(detail)), -1);
	assert_int_equal(res, REVIEW_RESULT_ERROR);
	assert_string_equal(detail, "reply over 16384 octets");
	free(buf);
}

static void
test_ids(void **state)
{
	char	 a[REVIEW_ID_LEN + 1], b[REVIEW_ID_LEN + 1];
	size_t	 i;

	(void)state;
	assert_int_equal(review_id_new(a), 0);
	assert_int_equal(review_id_new(b), 0);
	assert_int_equal(strlen(a), REVIEW_ID_LEN);
	assert_string_not_equal(a, b);
	for (i = 0; i < REVIEW_ID_LEN; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23)
			assert_int_equal(a[i], '-');
		else
			assert_non_null(strchr("0123456789abcdef", a[i]));
	}
	assert_int_equal(a[14], '4');
	assert_non_null(strchr("89ab", a[19]));
}

static void
test_reasons(void **state)
{
	(void)state;
	assert_string_equal(review_result_reason(REVIEW_RESULT_ALLOW),
	    "review:allow");
	assert_string_equal(review_result_reason(REVIEW_RESULT_DENY),
	    "review:deny");
	assert_string_equal(review_result_reason(REVIEW_RESULT_TIMEOUT),
	    "review:timeout");
	assert_string_equal(review_result_reason(REVIEW_RESULT_ERROR),
	    "review:error");
	assert_string_equal(review_result_reason(REVIEW_RESULT_BUSY),
	    "review:busy");
	assert_string_equal(review_result_reason(REVIEW_RESULT_NONE),
	    "no-reviewer");
}

static void
never_cb(enum review_result res, enum review_scope scope,
    const char *detail, void *arg)
{
	(void)res;
	(void)scope;
	(void)detail;
	(void)arg;
	fail_msg("callback for an immediate answer");
}

/* No reviewer, and a socket reviewer without a capability: at once. */
static void
test_immediate(void **state)
{
	struct event_base	*base;
	struct reviewer		*r;
	struct config		 conf;
	struct reviewer_opts	 o;
	struct review_request	 req = { .host = "example.com", .port = 443,
	    .protocol = "connect" };
	enum review_result	 now;
	const char		*detail;

	(void)state;
	base = event_base_new();
	assert_non_null(base);
	memset(&conf, 0, sizeof(conf));
	conf.review_mode = REVIEW_NONE;
	reviewer_opts_config(&o, &conf, "w", "/", NULL);
	r = reviewer_new(base, &o);
	assert_non_null(r);
	assert_false(reviewer_enabled(r));
	assert_null(review_start(r, &req, never_cb, NULL, &now, &detail));
	assert_int_equal(now, REVIEW_RESULT_NONE);
	reviewer_free(r);

	conf.review_mode = REVIEW_SOCKET;
	conf.review_socket = (char *)"/nonexistent/pisbx.sock";
	conf.review_capability_env = (char *)"PISBX_TEST_NO_SUCH_CAPABILITY";
	unsetenv("PISBX_TEST_NO_SUCH_CAPABILITY");
	reviewer_opts_config(&o, &conf, "w", "/", NULL);
	r = reviewer_new(base, &o);
	assert_non_null(r);
	assert_true(reviewer_enabled(r));
	assert_null(review_start(r, &req, never_cb, NULL, &now, &detail));
	assert_int_equal(now, REVIEW_RESULT_ERROR);
	assert_string_equal(detail, "no capability");
	reviewer_free(r);

	/* With a capability, a missing socket is an immediate error too. */
	reviewer_opts_config(&o, &conf, "w", "/", "cap");
	r = reviewer_new(base, &o);
	assert_non_null(r);
	assert_null(review_start(r, &req, never_cb, NULL, &now, &detail));
	assert_int_equal(now, REVIEW_RESULT_ERROR);
	assert_non_null(strstr(detail, "No such file or directory"));
	reviewer_free(r);
	event_base_free(base);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reply_table),
		cmocka_unit_test(test_reply_scope),
		cmocka_unit_test(test_reply_size),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_reasons),
		cmocka_unit_test(test_immediate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
