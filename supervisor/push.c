/*
 * A new network policy for the workers that are running: a person runs
 * `pisbx-supervisor --push FILE`, which sends the lists of the config
 * FILE to the supervisor ("type":"push", with the capability); the
 * supervisor keeps them for the registrations to come and hands them to
 * each running worker on that pisbx-run's own socket (common/runsock.h:
 * the user's alone, hidden in every sandbox), where the worker checks
 * the capability and the policy as at registration and answers.
 * docs/supervisor.md ("A new policy for running workers").
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "common/log.h"
#include "common/runsock.h"
#include "policy/policy.h"
#include "approval/approval.h"
#include "approval/supclient.h"
#include "supervisor/supervisor.h"

#define PUSH_ANSWER_MAX		2048

static int	 push_read_file(const char *, char **, size_t *);

int
supervisor_push_worker(long pid, const char *capability, const char *network,
    char *err, size_t errlen)
{
	json_t	*o, *a;
	char	 ans[PUSH_ANSWER_MAX], *msg;
	int	 none, rc = -1;

	if ((o = json_pack("{s:s,s:s,s:o}", "type", "policy", "capability",
	    capability, "network", json_loads(network, 0, NULL))) == NULL ||
	    (msg = json_dumps(o, JSON_COMPACT)) == NULL) {
		json_decref(o);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	json_decref(o);
	rc = runsock_ask(pid, msg, ans, sizeof(ans), &none, err, errlen);
	OPENSSL_cleanse(msg, strlen(msg));
	free(msg);
	if (rc == -1)
		return -1;
	rc = -1;
	if ((o = json_loads(ans, 0, NULL)) == NULL ||
	    !json_is_string(a = json_object_get(o, "action")))
		snprintf(err, errlen, "no answer from pisbx-run pid %ld", pid);
	else if (strcmp(json_string_value(a), "allow") == 0)
		rc = 0;
	else
		snprintf(err, errlen, "%s", json_is_string(json_object_get(o,
		    "reason")) ? json_string_value(json_object_get(o,
		    "reason")) : "refused");
	json_decref(o);
	return rc;
}

/* The whole file (at most 4 MiB, as the config loader reads). */
static int
push_read_file(const char *path, char **buf, size_t *len)
{
	FILE	*f;
	size_t	 cap = 0;
	ssize_t	 n;

	*buf = NULL;
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	n = getdelim(buf, &cap, '\0', f);
	fclose(f);
	if (n < 0) {
		free(*buf);
		*buf = NULL;
		return -1;
	}
	*len = (size_t)n;
	return 0;
}

int
supervisor_push_main(const char *file, const char *socket,
    const char *capability)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*conf;
	json_t			*req, *rep, *v;
	char			 err[512], *text, *net;
	size_t			 i, len;
	int			 ok;

	if ((conf = config_load(file, &errs)) == NULL) {
		for (i = 0; i < errs.n; i++)
			fprintf(stderr, "pisbx-supervisor: %s\n", errs.msg[i]);
		fprintf(stderr, "pisbx-supervisor: --push %s: %zu error(s); "
		    "nothing was sent\n", file, errs.n);
		config_errors_clear(&errs);
		return 1;
	}
	config_free(conf);
	if (push_read_file(file, &text, &len) == -1 ||
	    (net = supervisor_network_json(text, len)) == NULL) {
		fprintf(stderr, "pisbx-supervisor: --push %s: cannot read its "
		    "network policy; nothing was sent\n", file);
		free(text);
		return 1;
	}
	free(text);
	req = json_pack("{s:s,s:o}", "type", "push", "network",
	    json_loads(net, 0, NULL));
	free(net);
	if (req == NULL)
		return 1;
	rep = supclient_call(socket, capability, req, SUPERVISOR_TIMEOUT_DEFAULT,
	    err, sizeof(err));
	json_decref(req);
	if (rep == NULL) {
		fprintf(stderr, "pisbx-supervisor: --push: %s: %s\n", socket,
		    err);
		return 1;
	}
	ok = json_is_string(v = json_object_get(rep, "action")) &&
	    strcmp(json_string_value(v), "allow") == 0;
	v = json_object_get(rep, "reason");
	printf("pisbx-supervisor: --push %s: %s%s\n", file,
	    ok ? "" : "not applied everywhere: ", json_is_string(v) ?
	    json_string_value(v) : "(no reason given)");
	json_decref(rep);
	return ok ? 0 : 1;
}
