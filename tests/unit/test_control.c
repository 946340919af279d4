/*
 * control_fixed (launcher/run/control.c): which keys of a --control-fd
 * line (or a supervisor's push) a running command cannot follow.  A
 * table of a running config and a line, each loaded by the config
 * loader, and how many keys the line may not change: the network lists
 * and the reviewer's mode change freely; the filesystem policy, Unix
 * sockets and nested namespaces must be equal; the files pisbx reads
 * while the command runs may be left out but not named otherwise.
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
#include "launcher/run/run.h"

#define RUNNING \
	"{\"network\":{\"allowedDomains\":[\"a.example\"]," \
	"\"allowUnixSockets\":[\"/run/a.sock\"]}," \
	"\"filesystem\":{\"denyRead\":[\"~/.ssh\"],\"allowWrite\":[\"/srv\"]}," \
	"\"resolver\":{\"hostsFile\":\"/etc/hosts\"}," \
	"\"review\":{\"command\":[\"/usr/bin/rv\"]}," \
	"\"proxy\":{\"accessLog\":\"/var/log/p.log\"}}"
#define FS	"\"filesystem\":{\"denyRead\":[\"~/.ssh\"],\"allowWrite\":[\"/srv\"]}"
#define UNIX	"\"allowUnixSockets\":[\"/run/a.sock\"]"

struct fixed_case {
	const char	*line;
	int		 fixed;	/* keys the line may not change */
};

static const struct fixed_case fixed_cases[] = {
	/* The running config itself. */
	{ RUNNING, 0 },
	/* Other lists, the reviewer, resolver and log left out: fine. */
	{ "{\"network\":{\"allowedDomains\":[\"b.example\"],"
	    "\"deniedDomains\":[\"a.example\"]," UNIX "}," FS "}", 0 },
	/* The same lists in another order are the same. */
	{ "{\"network\":{" UNIX "},\"filesystem\":{\"allowWrite\":[\"/srv\"],"
	    "\"denyRead\":[\"~/.ssh\"]}}", 0 },
	/* srt's shape without the running filesystem: denyRead, allowWrite. */
	{ "{\"network\":{\"allowedDomains\":[]," UNIX "},\"filesystem\":"
	    "{\"denyRead\":[],\"allowWrite\":[],\"denyWrite\":[]}}", 2 },
	/* No filesystem at all: the defaults are not the running values. */
	{ "{\"network\":{" UNIX "}}", 2 },
	{ "{\"network\":{" UNIX "}," "\"filesystem\":{\"denyRead\":"
	    "[\"~/.ssh\"],\"allowWrite\":[\"/srv\"],\"allowGitConfig\":true}}",
	    1 },
	{ "{\"network\":{" UNIX "}," "\"filesystem\":{\"denyRead\":"
	    "[\"~/.ssh\"],\"allowWrite\":[\"/srv\"],\"denyWrite\":[\"/x\"]}}",
	    1 },
	{ "{\"network\":{" UNIX "}," "\"filesystem\":{\"denyRead\":"
	    "[\"~/.ssh\"],\"allowWrite\":[\"/srv\"],\"caches\":false}}", 1 },
	/* The sandbox's switches. */
	{ "{\"network\":{}," FS "}", 1 },
	{ "{\"network\":{\"allowAllUnixSockets\":true," UNIX "}," FS "}", 1 },
	{ "{\"network\":{" UNIX "},\"allowNestedUserNamespaces\":true," FS
	    "}", 1 },
	/* Files pisbx reads: another one is refused, each counted. */
	{ "{\"network\":{" UNIX "}," FS ",\"review\":{\"command\":"
	    "[\"/tmp/rv\"]}}", 1 },
	{ "{\"network\":{" UNIX "}," FS ",\"review\":{\"socket\":"
	    "\"/tmp/s.sock\"}}", 1 },
	{ "{\"network\":{" UNIX "}," FS ",\"resolver\":{\"hostsFile\":"
	    "\"/tmp/hosts\"},\"proxy\":{\"accessLog\":\"/tmp/l\"}}", 2 },
	{ "{\"network\":{" UNIX "}," FS ",\"hostIPC\":{\"mode\":\"ask\"}}",
	    1 },
	/* The reviewer's own mode and timeouts are free. */
	{ "{\"network\":{" UNIX "}," FS ",\"review\":{\"mode\":\"tty\","
	    "\"timeoutMs\":5000}}", 0 },
};

static struct config *
load(const char *text)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*c;
	size_t			 i;

	c = config_load_buffer(text, strlen(text), "t", &errs);
	for (i = 0; i < errs.n; i++)
		print_message("%s\n", errs.msg[i]);
	config_errors_clear(&errs);
	return c;
}

static void
test_fixed(void **state)
{
	struct config	*run, *line;
	size_t		 i;

	(void)state;
	assert_non_null(run = load(RUNNING));
	for (i = 0; i < sizeof(fixed_cases) / sizeof(*fixed_cases); i++) {
		line = load(fixed_cases[i].line);
		if (line == NULL)
			fail_msg("case %zu does not load", i);
		if (control_fixed(run, line, "t") != fixed_cases[i].fixed)
			fail_msg("case %zu: %d fixed keys, not %d", i,
			    control_fixed(run, line, "t"),
			    fixed_cases[i].fixed);
		config_free(line);
	}
	config_free(run);
}

/*
 * TLS termination and credentials are made at start (the CA, the trust
 * bundle, the placeholders): fixed.  Request rules are policy: free.
 */
#define SECRETS_NET \
	"\"allowedDomains\":[\"api.example.com\"]," UNIX
#define SECRETS_TLS	"\"tlsTerminate\":{\"excludeDomains\":[\"x.example\"]}"
#define SECRETS_CREDS \
	"\"credentials\":{\"envVars\":[{\"name\":\"TOK\",\"mode\":\"mask\"}]}"
#define SECRETS_RUNNING \
	"{\"network\":{" SECRETS_NET "," SECRETS_TLS "," \
	"\"requestRules\":[{\"host\":\"api.example.com\",\"deny\":" \
	"[\"POST /admin/**\"]}]}," SECRETS_CREDS "," FS "}"

static const struct fixed_case secrets_cases[] = {
	{ SECRETS_RUNNING, 0 },
	/* Other request rules, or none: the policy changes freely. */
	{ "{\"network\":{" SECRETS_NET "," SECRETS_TLS "}," SECRETS_CREDS ","
	    FS "}", 0 },
	{ "{\"network\":{" SECRETS_NET "," SECRETS_TLS ",\"requestRules\":"
	    "[{\"host\":\"api.example.com\",\"unmatched\":\"deny\"}]},"
	    SECRETS_CREDS "," FS "}", 0 },
	/* Another tlsTerminate value. */
	{ "{\"network\":{" SECRETS_NET ",\"tlsTerminate\":{}}," SECRETS_CREDS
	    "," FS "}", 1 },
	{ "{\"network\":{" SECRETS_NET ",\"tlsTerminate\":{\"excludeDomains\":"
	    "[\"x.example\"],\"maxTunnels\":8}}," SECRETS_CREDS "," FS "}", 1 },
	/* Other credentials, or none. */
	{ "{\"network\":{" SECRETS_NET "," SECRETS_TLS "}," FS "}", 1 },
	{ "{\"network\":{" SECRETS_NET "," SECRETS_TLS "},\"credentials\":"
	    "{\"envVars\":[{\"name\":\"TOK\",\"mode\":\"deny\"}]}," FS "}",
	    1 },
	{ "{\"network\":{" SECRETS_NET "," SECRETS_TLS "},\"credentials\":"
	    "{\"envVars\":[{\"name\":\"TOK\",\"mode\":\"mask\","
	    "\"injectHosts\":[\"api.example.com\"]}]}," FS "}", 1 },
	/* Neither: both said. */
	{ "{\"network\":{" SECRETS_NET "}," FS "}", 2 },
};

static void
test_fixed_secrets(void **state)
{
	struct config	*run, *line;
	size_t		 i;

	(void)state;
	assert_non_null(run = load(SECRETS_RUNNING));
	for (i = 0; i < sizeof(secrets_cases) / sizeof(*secrets_cases); i++) {
		line = load(secrets_cases[i].line);
		if (line == NULL)
			fail_msg("case %zu does not load", i);
		if (control_fixed(run, line, "t") != secrets_cases[i].fixed)
			fail_msg("case %zu: %d fixed keys, not %d", i,
			    control_fixed(run, line, "t"),
			    secrets_cases[i].fixed);
		config_free(line);
	}
	config_free(run);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_fixed_secrets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
