/*
 * supervisor_request_parse: the checks pisbx-supervisor makes on every
 * request line before it looks at its worker table, as a table of lines
 * and the reason each is refused for (or the kind it is accepted as).
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
#include "approval/approval.h"
#include "supervisor/supervisor.h"

#define CAP	"s3cret"
#define HEAD	"\"version\":1,\"capability\":\"" CAP "\",\"id\":\"r1\","
#define WC	"\"workerId\":\"w-1\",\"cwd\":\"/work\""

struct req_case {
	const char	*line;
	int		 ok;
	int		 kind;		/* ok */
	const char	*reason;	/* !ok: the reason, exactly */
	int		 has_id;	/* !ok: the reply can carry the id */
};

static const struct req_case cases[] = {
	{ "{" HEAD "\"type\":\"register\"," WC "}", 1, SUPREQ_REGISTER,
	    NULL, 1 },
	{ "{" HEAD "\"type\":\"unregister\"," WC "}", 1, SUPREQ_UNREGISTER,
	    NULL, 1 },
	{ "{" HEAD "\"type\":\"network\"," WC ",\"hostname\":\"a.example\","
	    "\"port\":443,\"protocol\":\"connect\"}", 1, SUPREQ_NETWORK,
	    NULL, 1 },
	{ "{" HEAD "\"type\":\"host-ipc\"," WC ",\"operation\":"
	    "\"execute-host\",\"command\":\"tmux ls\",\"rule\":\"r\"}", 1,
	    SUPREQ_HOSTIPC, NULL, 1 },
	/* unknown fields are ignored */
	{ "{" HEAD "\"type\":\"register\"," WC ",\"future\":[1,2]}", 1,
	    SUPREQ_REGISTER, NULL, 1 },

	{ "", 0, 0, NULL, 0 },
	{ "garbage", 0, 0, NULL, 0 },
	{ "[1,2]", 0, 0, "request is not a JSON object", 0 },
	{ "{\"id\":\"a\",\"id\":\"b\"}", 0, 0, NULL, 0 },
	{ "{\"version\":1}", 0, 0, "request has no usable id", 0 },
	{ "{\"id\":7}", 0, 0, "request has no usable id", 0 },
	{ "{\"id\":\"\"}", 0, 0, "request has no usable id", 0 },
	{ "{\"id\":\"a\\nb\"}", 0, 0, "request has no usable id", 0 },
	{ "{\"id\":\"a\\u0000b\"}", 0, 0, "request is not a JSON object", 0 },
	{ "{\"id\":\"r\",\"version\":2}", 0, 0,
	    "unsupported protocol version", 1 },
	{ "{\"id\":\"r\",\"version\":\"1\"}", 0, 0,
	    "unsupported protocol version", 1 },
	{ "{\"id\":\"r\",\"version\":1,\"type\":\"register\"," WC "}", 0, 0,
	    "bad capability", 1 },
	{ "{\"id\":\"r\",\"version\":1,\"capability\":\"s3cre\","
	    "\"type\":\"register\"," WC "}", 0, 0, "bad capability", 1 },
	{ "{\"id\":\"r\",\"version\":1,\"capability\":\"s3cret!\","
	    "\"type\":\"register\"," WC "}", 0, 0, "bad capability", 1 },
	{ "{\"id\":\"r\",\"version\":1,\"capability\":7,"
	    "\"type\":\"register\"," WC "}", 0, 0, "bad capability", 1 },
	{ "{" HEAD WC "}", 0, 0, "request has no type", 1 },
	{ "{" HEAD "\"type\":\"register\",\"cwd\":\"/w\"}", 0, 0,
	    "request has no usable workerId", 1 },
	{ "{" HEAD "\"type\":\"register\",\"workerId\":\"../x\","
	    "\"cwd\":\"/w\"}", 0, 0, "request has no usable workerId", 1 },
	{ "{" HEAD "\"type\":\"register\",\"workerId\":\"w\"}", 0, 0,
	    "request has no absolute cwd", 1 },
	{ "{" HEAD "\"type\":\"register\",\"workerId\":\"w\","
	    "\"cwd\":\"rel\"}", 0, 0, "request has no absolute cwd", 1 },
	{ "{" HEAD "\"type\":\"register\",\"workerId\":\"w\","
	    "\"cwd\":\"/a\\u001b[2J\"}", 0, 0,
	    "request has no absolute cwd", 1 },
	{ "{" HEAD "\"type\":\"network\"," WC ",\"hostname\":\"a.example\","
	    "\"port\":0,\"protocol\":\"http\"}", 0, 0,
	    "malformed network request", 1 },
	{ "{" HEAD "\"type\":\"network\"," WC ",\"port\":80,"
	    "\"protocol\":\"http\"}", 0, 0, "malformed network request", 1 },
	{ "{" HEAD "\"type\":\"host-ipc\"," WC ",\"operation\":\"x\","
	    "\"command\":\"c\",\"rule\":\"r\"}", 0, 0,
	    "malformed host-ipc request", 1 },
	{ "{" HEAD "\"type\":\"host-ipc\"," WC ",\"operation\":"
	    "\"execute-host\",\"rule\":\"r\"}", 0, 0,
	    "malformed host-ipc request", 1 },
	{ "{" HEAD "\"type\":\"teleport\"," WC "}", 0, 0,
	    "unknown request type", 1 },
};

static void
test_request_table(void **state)
{
	struct supervisor_request	 r;
	char				 reason[256];
	size_t				 i;
	int				 rc;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rc = supervisor_request_parse(cases[i].line,
		    strlen(cases[i].line), CAP, &r, reason, sizeof(reason));
		if (cases[i].ok) {
			if (rc != 0 || (int)r.kind != cases[i].kind)
				fail_msg("case %zu: wanted kind %d, got rc %d "
				    "(%s)", i, cases[i].kind, rc, reason);
			assert_string_equal(r.id, "r1");
			assert_string_equal(r.worker_id, "w-1");
			assert_string_equal(r.cwd, "/work");
			assert_null(json_object_get(r.obj, "capability"));
		} else {
			if (rc != -1)
				fail_msg("case %zu accepted: %s", i,
				    cases[i].line);
			if (reason[0] == '\0')
				fail_msg("case %zu: no reason", i);
			if (cases[i].reason != NULL &&
			    strncmp(reason, cases[i].reason,
			    strlen(cases[i].reason)) != 0)
				fail_msg("case %zu: wanted \"%s\", got \"%s\"",
				    i, cases[i].reason, reason);
			if ((r.id != NULL) != cases[i].has_id)
				fail_msg("case %zu: id %s", i,
				    r.id != NULL ? r.id : "(none)");
		}
		supervisor_request_clear(&r);
	}
}

static void
test_request_limits(void **state)
{
	struct supervisor_request	 r;
	char				 reason[256];
	char				*big;
	size_t				 n = REVIEW_FRAME_MAX + 1;

	(void)state;
	big = malloc(n);
	assert_non_null(big);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	assert_int_equal(supervisor_request_parse(big, n, CAP, &r, reason,
	    sizeof(reason)), -1);
	assert_string_equal(reason, "request frame over 16384 octets");
	supervisor_request_clear(&r);
	/* The line's own length counts, not a NUL in it. */
	assert_int_equal(supervisor_request_parse("{\"id\":\"r\"}\0junk", 15,
	    CAP, &r, reason, sizeof(reason)), -1);
	supervisor_request_clear(&r);
	/* No capability configured accepts nothing. */
	assert_int_equal(supervisor_request_parse("{\"version\":1,"
	    "\"capability\":\"\",\"id\":\"r\",\"type\":\"register\"," WC "}",
	    strlen("{\"version\":1,\"capability\":\"\",\"id\":\"r\","
	    "\"type\":\"register\"," WC "}"), "", &r, reason,
	    sizeof(reason)), -1);
	assert_string_equal(reason, "bad capability");
	supervisor_request_clear(&r);
	free(big);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_table),
		cmocka_unit_test(test_request_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
