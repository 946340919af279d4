/*
 * The host-IPC fallback's pure decisions: prefix matching, the stderr
 * classification (a refused socket; a listed program's socket directory
 * on a read-only file system), the retry rule, the remaining timeout, the command
 * text and the stderr tail.  Also the supervisor's capability compare and
 * the registration policy it hands out.
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
#include "approval/approval.h"
#include "approval/supclient.h"
#include "supervisor/supervisor.h"
#include "launcher/run/run.h"

struct match_case {
	const char	*text;
	const char	*want;		/* NULL: no match */
};

static void
test_match(void **state)
{
	static char p0[] = "tmux", p1[] = "docker compose", p2[] = "git";
	static char *pv[] = { p0, p1, p2 };
	static const struct strlist prefixes = { pv, 3 };
	static const struct match_case cases[] = {
		{ "tmux", "tmux" },
		{ "tmux ls", "tmux" },
		{ "  \ttmux attach -t 0", "tmux" },
		{ "tmux\tls", "tmux" },
		{ "tmux\nls", "tmux" },
		{ "tmuxinator start", NULL },
		{ "tmux-wrapper", NULL },
		{ "echo tmux", NULL },
		{ "TMUX ls", NULL },
		{ "docker compose up", "docker compose" },
		{ "docker compose", "docker compose" },
		{ "docker composer", NULL },
		{ "docker ps", NULL },
		{ "docker  compose up", NULL },
		{ "git status", "git" },
		{ "gitk", NULL },
		{ "", NULL },
		{ "   ", NULL },
		{ "/usr/bin/tmux ls", NULL },
	};
	size_t	 i;
	const char *got;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got = hostipc_match(&prefixes, cases[i].text);
		if (cases[i].want == NULL) {
			if (got != NULL)
				fail_msg("\"%s\" matched \"%s\"", cases[i].text,
				    got);
		} else {
			if (got == NULL || strcmp(got, cases[i].want) != 0)
				fail_msg("\"%s\": wanted \"%s\", got \"%s\"",
				    cases[i].text, cases[i].want,
				    got != NULL ? got : "(none)");
		}
	}
	assert_null(hostipc_match(NULL, "tmux"));
	assert_null(hostipc_match(&prefixes, NULL));
}

struct eperm_case {
	const char	*text;
	int		 want;
};

static void
test_eperm(void **state)
{
	static const struct eperm_case cases[] = {
		/* tmux */
		{ "error connecting to /tmp/tmux-0/default (Operation not "
		    "permitted)\n", 1 },
		/* docker */
		{ "Got permission denied while trying to connect to the Docker "
		    "daemon socket at unix:///var/run/docker.sock: dial unix "
		    "/var/run/docker.sock: socket: operation not permitted\n",
		    1 },
		/* socat */
		{ "2026/11/30 03:00:00 socat[12] E socket(1, 1, 0): "
		    "Operation not permitted\n", 1 },
		/* python: the call on a line before the error */
		{ "Traceback (most recent call last):\n"
		    "  File \"<string>\", line 1, in <module>\n"
		    "    s = socket.socket(socket.AF_UNIX)\n"
		    "PermissionError: [Errno 1] Operation not permitted\n", 1 },
		{ "ssh-add: Could not open a connection to your "
		    "authentication agent: Operation not permitted", 1 },
		{ "IPC failed: Operation not permitted\n", 1 },
		{ "bind: Operation not permitted\n", 1 },
		/* not about a socket */
		{ "rm: cannot remove 'x': Operation not permitted\n", 0 },
		{ "chmod: changing permissions of 'f': Operation not "
		    "permitted\n", 0 },
		{ "touch: cannot touch '.bashrc': Operation not permitted\n",
		    0 },
		/* about a socket, but not EPERM */
		{ "connect: Connection refused\n", 0 },
		{ "socket: Permission denied\n", 0 },
		{ "", 0 },
		/* the socket line too far above the error */
		{ "socket setup\nline a\nline b\nline c\n"
		    "Operation not permitted\n", 0 },
		/* no final newline */
		{ "connect(/run/x.sock): Operation not permitted", 1 },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (hostipc_eperm_ipc(cases[i].text, strlen(cases[i].text)) !=
		    cases[i].want)
			fail_msg("case %zu (\"%s\"): wanted %d", i,
			    cases[i].text, cases[i].want);
	/* Only the given length counts. */
	assert_int_equal(hostipc_eperm_ipc("connect: Operation not permitted",
	    10), 0);
}

struct erofs_case {
	const char	*tail;		/* the command's stderr */
	const char	*text;		/* the command */
	const char	*want;		/* the prefix, or NULL */
};

static void
test_erofs(void **state)
{
	static char p0[] = "tmux", p1[] = "/usr/bin/screen -x", p2[] = "gcc";
	static char *pv[] = { p0, p1, p2 };
	static const struct strlist prefixes = { pv, 3 };
	static const struct erofs_case cases[] = {
		/* tmux's first use: its socket directory */
		{ "couldn't create directory /tmp/tmux-0 (Read-only file "
		    "system)\n", "echo hi; tmux ls", "tmux" },
		{ "hi\ncouldn't create directory /tmp/tmux-1000 (Read-only "
		    "file system)", "cd x && /usr/bin/tmux new -d", "tmux" },
		/* a prefix with a directory and arguments: its program */
		{ "Cannot make directory '/run/screen': Read-only file system",
		    "make; screen -ls", "/usr/bin/screen -x" },
		/* the program is not in the command */
		{ "couldn't create directory /tmp/tmux-0 (Read-only file "
		    "system)\n", "./build.sh", NULL },
		/* the line does not name the program */
		{ "touch: cannot touch '/etc/x': Read-only file system\n",
		    "tmux ls; touch /etc/x", NULL },
		/* named, but not a read-only file system */
		{ "couldn't create directory /tmp/tmux-0 (Permission "
		    "denied)\n", "tmux ls", NULL },
		/* part of a longer name, in the line or in the command */
		{ "/tmp/tmuxinator: Read-only file system\n", "tmux ls",
		    NULL },
		{ "couldn't create directory /tmp/tmux-0 (Read-only file "
		    "system)\n", "tmuxinator start", NULL },
		{ "", "tmux ls", NULL },
	};
	size_t		 i;
	const char	*got;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got = hostipc_erofs_prog(cases[i].tail, strlen(cases[i].tail),
		    &prefixes, cases[i].text);
		if ((got == NULL) != (cases[i].want == NULL) || (got != NULL &&
		    strcmp(got, cases[i].want) != 0))
			fail_msg("case %zu (\"%s\" / \"%s\"): wanted %s, got %s",
			    i, cases[i].tail, cases[i].text, cases[i].want !=
			    NULL ? cases[i].want : "none", got != NULL ? got :
			    "none");
	}
	assert_null(hostipc_erofs_prog("tmux: Read-only file system", 27,
	    NULL, "tmux"));
}

static void
test_should_retry(void **state)
{
	static const char eperm[] = "connect: Operation not permitted\n";
	static const char other[] = "No such file or directory\n";
	static const char erofs[] = "couldn't create directory /tmp/tmux-0 "
	    "(Read-only file system)\n";
	static char p0[] = "tmux";
	static char *pv[] = { p0 };
	static const struct strlist prefixes = { pv, 1 };
	struct hostipc_outcome	 o;
	const char		*pre;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.exited = 1;
	o.status = 1;
	assert_int_equal(hostipc_should_retry(&o, eperm, strlen(eperm),
	    &prefixes, "x", &pre), HOSTIPC_RETRY_EPERM);
	assert_int_equal(hostipc_should_retry(&o, other, strlen(other),
	    &prefixes, "tmux", &pre), HOSTIPC_NO_RETRY);
	assert_null(pre);
	assert_int_equal(hostipc_should_retry(&o, erofs, strlen(erofs),
	    &prefixes, "echo; tmux ls", &pre), HOSTIPC_RETRY_EROFS);
	assert_string_equal(pre, "tmux");
	assert_int_equal(hostipc_should_retry(&o, erofs, strlen(erofs),
	    NULL, "echo; tmux ls", &pre), HOSTIPC_NO_RETRY);
	o.status = 0;		/* success */
	assert_int_equal(hostipc_should_retry(&o, eperm, strlen(eperm),
	    &prefixes, "x", &pre), HOSTIPC_NO_RETRY);
	assert_int_equal(hostipc_should_retry(&o, erofs, strlen(erofs),
	    &prefixes, "tmux", &pre), HOSTIPC_NO_RETRY);
	o.status = 1;
	o.timed_out = 1;	/* timeout */
	assert_int_equal(hostipc_should_retry(&o, eperm, strlen(eperm),
	    &prefixes, "x", &pre), HOSTIPC_NO_RETRY);
	assert_int_equal(hostipc_should_retry(&o, erofs, strlen(erofs),
	    &prefixes, "tmux", &pre), HOSTIPC_NO_RETRY);
	o.timed_out = 0;
	o.aborted = 1;		/* SIGINT/SIGTERM to pisbx-run */
	assert_int_equal(hostipc_should_retry(&o, eperm, strlen(eperm),
	    &prefixes, "x", &pre), HOSTIPC_NO_RETRY);
	o.aborted = 0;
	o.exited = 0;		/* killed by a signal */
	o.status = 0;
	assert_int_equal(hostipc_should_retry(&o, eperm, strlen(eperm),
	    &prefixes, "x", &pre), HOSTIPC_NO_RETRY);
}

static void
test_remaining(void **state)
{
	(void)state;
	assert_int_equal(hostipc_remaining_ms(0, 5000), 0);
	assert_int_equal(hostipc_remaining_ms(10000, 0), 10000);
	assert_int_equal(hostipc_remaining_ms(10000, 2500), 7500);
	assert_int_equal(hostipc_remaining_ms(10000, 9999), 1);
	assert_int_equal(hostipc_remaining_ms(10000, 10000), -1);
	assert_int_equal(hostipc_remaining_ms(10000, 12000), -1);
	assert_int_equal(hostipc_remaining_ms(10000, -5), 10000);
}

static void
test_command_text(void **state)
{
	static char a0[] = "tmux", a1[] = "new", a2[] = "-s", a3[] = "my job",
	    a4[] = "it's", a5[] = "", a6[] = "$HOME", a7[] = "a=b,c:d/e@f";
	static char *const argv[] = { a0, a1, a2, a3, a4, a5, a6, a7, NULL };
	char	*s;

	(void)state;
	s = hostipc_command_text(argv, NULL);
	assert_non_null(s);
	assert_string_equal(s, "tmux new -s 'my job' 'it'\\''s' '' '$HOME' "
	    "a=b,c:d/e@f");
	free(s);
	s = hostipc_command_text(NULL, "  tmux ls | cat ");
	assert_string_equal(s, "  tmux ls | cat ");
	free(s);
}

static void
test_tail(void **state)
{
	struct hostipc_tail	*t;
	char			*big;
	size_t			 i;

	(void)state;
	t = calloc(1, sizeof(*t));
	big = malloc(HOSTIPC_TAIL_MAX + 100);
	assert_non_null(t);
	assert_non_null(big);
	hostipc_tail_add(t, "hello ", 6);
	hostipc_tail_add(t, "world", 5);
	assert_int_equal(t->len, 11);
	assert_memory_equal(t->buf, "hello world", 11);
	/* Filling past the cap keeps exactly the last 64 KiB. */
	for (i = 0; i < HOSTIPC_TAIL_MAX + 100; i++)
		big[i] = (char)('a' + i % 26);
	hostipc_tail_add(t, big, HOSTIPC_TAIL_MAX - 5);
	assert_int_equal(t->len, HOSTIPC_TAIL_MAX);
	assert_memory_equal(t->buf, "world", 5);
	assert_memory_equal(t->buf + 5, big, HOSTIPC_TAIL_MAX - 5);
	hostipc_tail_add(t, "XYZ", 3);
	assert_int_equal(t->len, HOSTIPC_TAIL_MAX);
	assert_memory_equal(t->buf + HOSTIPC_TAIL_MAX - 3, "XYZ", 3);
	assert_memory_equal(t->buf, "ld", 2);
	hostipc_tail_add(t, big, HOSTIPC_TAIL_MAX + 100);
	assert_memory_equal(t->buf, big + 100, HOSTIPC_TAIL_MAX);
	/* The classification sees a tail whose head was cut mid-line. */
	memcpy(t->buf + HOSTIPC_TAIL_MAX - 33,
	    "connect: Operation not permitted\n", 33);
	assert_int_equal(hostipc_eperm_ipc(t->buf, t->len), 1);
	free(big);
	free(t);
}

static void
test_capability(void **state)
{
	(void)state;
	assert_true(supervisor_capability_ok("secret", "secret", 6));
	assert_false(supervisor_capability_ok("secret", "secreT", 6));
	assert_false(supervisor_capability_ok("secret", "secret2", 7));
	assert_false(supervisor_capability_ok("secret", "secret", 5));
	assert_false(supervisor_capability_ok("secret", "", 0));
	assert_false(supervisor_capability_ok("", "", 0));
	assert_false(supervisor_capability_ok(NULL, "x", 1));
	/* An embedded NUL is part of the presented octets. */
	assert_false(supervisor_capability_ok("secret", "secret\0x", 8));
}

static void
test_network_json(void **state)
{
	static const char conf[] = "{\"network\":{\"allowedDomains\":"
	    "[\"a.example\"],\"deniedDomains\":[\"*:22\"],"
	    "\"allowAllUnixSockets\":true},\"hostIPC\":{\"mode\":\"ask\"}}";
	struct config_errors	 errs = { NULL, 0 };
	struct policy		*pol;
	char			*s;

	(void)state;
	s = supervisor_network_json(conf, strlen(conf));
	assert_non_null(s);
	assert_non_null(strstr(s, "\"allowedDomains\":[\"a.example\"]"));
	assert_non_null(strstr(s, "\"deniedDomains\":[\"*:22\"]"));
	assert_null(strstr(s, "allowAllUnixSockets"));
	/* What it hands out is what a launcher accepts. */
	pol = config_network_policy(s, strlen(s), "test", &errs);
	assert_non_null(pol);
	assert_int_equal(policy_count(pol, POLICY_ALLOW), 1);
	assert_int_equal(policy_count(pol, POLICY_DENY), 1);
	policy_free(pol);
	free(s);
	s = supervisor_network_json("{}", 2);
	assert_string_equal(s, "{\"allowedDomains\":[],\"deniedDomains\":[]}");
	free(s);
	assert_null(supervisor_network_json("nope", 4));
	config_errors_clear(&errs);
}

static void
test_deny_all(void **state)
{
	struct policy	*pol;
	struct host	 h;
	const char	*errstr;

	(void)state;
	pol = supclient_deny_all();
	assert_non_null(pol);
	assert_int_equal(host_canon("example.com", 11, &h, &errstr), 0);
	assert_int_equal(policy_eval(pol, &h, 443, NULL), VERDICT_DENY);
	assert_int_equal(host_canon("127.0.0.1", 9, &h, &errstr), 0);
	assert_int_equal(policy_eval(pol, &h, 80, NULL), VERDICT_DENY);
	policy_free(pol);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_eperm),
		cmocka_unit_test(test_erofs),
		cmocka_unit_test(test_should_retry),
		cmocka_unit_test(test_remaining),
		cmocka_unit_test(test_command_text),
		cmocka_unit_test(test_tail),
		cmocka_unit_test(test_capability),
		cmocka_unit_test(test_network_json),
		cmocka_unit_test(test_deny_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
