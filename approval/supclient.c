/*
 * The client side of the supervisor protocol as pisbx-run uses it: calls
 * that are waited for, made before the sandbox starts (register, host-IPC
 * preflight) or after it ended (unregister, host-IPC retry), when nothing
 * else runs.  Socket calls go through approval's supervisor_call on a
 * private event base; reviews go through approval's reviewer (any
 * transport), on a private event base too.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "common/log.h"
#include "policy/policy.h"
#include "approval/approval.h"
#include "approval/supclient.h"

struct call_state {
	int		 done;
	json_t		*reply;
	char		*err;
	size_t		 errlen;
};

struct ask_state {
	int			 done;
	enum review_result	 res;
	char			*reason;
	size_t			 reasonlen;
};

static void	 call_done_cb(enum supervisor_status, json_t *, const char *,
		    void *);
static json_t	*worker_call(const char *, const char *, const char *,
		    const char *, const char *, int, enum review_result *,
		    char *, size_t, char *, size_t);
static char	*supclient_policy_file(const json_t *);
static void	 ask_done_cb(enum review_result, enum review_scope,
		    const char *, void *);

json_t *
supclient_call(const char *path, const char *capability, json_t *request,
    int timeout_ms, char *err, size_t errlen)
{
	struct event_base	*base;
	struct supervisor_call	*call;
	struct call_state	 st = { 0, NULL, err, errlen };
	const char		*errstr;

	if ((base = event_base_new()) == NULL) {
		snprintf(err, errlen, "cannot create an event base");
		return NULL;
	}
	call = supervisor_call(base, path, capability, request,
	    timeout_ms > 0 ? timeout_ms : SUPERVISOR_TIMEOUT_DEFAULT,
	    call_done_cb, &st, &errstr);
	if (call == NULL) {
		snprintf(err, errlen, "%s", errstr);
		event_base_free(base);
		return NULL;
	}
	while (!st.done)
		if (event_base_loop(base, EVLOOP_ONCE) == -1) {
			supervisor_call_cancel(call);
			snprintf(err, errlen, "event loop failed");
			break;
		}
	event_base_free(base);
	return st.reply;
}

static void
call_done_cb(enum supervisor_status status, json_t *reply, const char *error,
    void *arg)
{
	struct call_state	*st = arg;

	st->done = 1;
	switch (status) {
	case SUPERVISOR_OK:
		st->reply = json_incref(reply);
		break;
	case SUPERVISOR_TIMEOUT:
		snprintf(st->err, st->errlen, "no reply in time");
		break;
	case SUPERVISOR_ERROR:
		snprintf(st->err, st->errlen, "%s",
		    error != NULL ? error : "error");
		break;
	}
}

struct policy *
supclient_deny_all(void)
{
	struct policy	*pol;
	struct pattern	 p;
	const char	*errstr;

	if ((pol = policy_new()) == NULL)
		return NULL;
	if (pattern_parse("*", 1, 1, &p, &errstr) == -1 ||
	    policy_add(pol, POLICY_DENY, &p) == -1) {
		policy_free(pol);
		return NULL;
	}
	return pol;
}

/*
 * The registration reply's policyFile, copied, when it is an absolute
 * path of printable characters (it is shown in every refusal); else
 * NULL, and a warning when there was one.  A hint only: the policy is
 * the reply's "network" either way.
 */
static char *
supclient_policy_file(const json_t *reply)
{
	const json_t	*v = json_object_get(reply, "policyFile");
	const char	*s;
	size_t		 i, n;

	if (v == NULL)
		return NULL;
	s = json_string_value(v);
	n = json_is_string(v) ? json_string_length(v) : 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			break;
	if (n == 0 || s[0] != '/' || n >= PATH_MAX || i < n) {
		log_warnx("warning: supervisor: the registration reply's "
		    "policyFile is not an absolute path of printable "
		    "characters; refusals name the supervisor's socket "
		    "instead");
		return NULL;
	}
	return strdup(s);
}

int
supclient_register(const char *path, const char *capability,
    const char *worker_id, const char *cwd, int timeout_ms,
    struct policy **policy, char **policy_file, int *fallback, char *err,
    size_t errlen)
{
	struct config_errors	 errs = { NULL, 0 };
	json_t			*reply, *net;
	enum review_result	 res;
	const char		*missing;
	char			 reason[512];
	char			*text = NULL;

	*policy = NULL;
	*policy_file = NULL;
	*fallback = 0;
	err[0] = '\0';
	if ((reply = worker_call("register", path, capability, worker_id,
	    cwd, timeout_ms, &res, reason, sizeof(reason), err, errlen)) ==
	    NULL)
		return -1;
	if (res != REVIEW_RESULT_ALLOW) {
		if (res == REVIEW_RESULT_DENY)
			snprintf(err, errlen, "registration refused%s%s",
			    reason[0] != '\0' ? ": " : "", reason);
		else
			snprintf(err, errlen, "bad registration reply: %s",
			    reason);
		goto fail;
	}

	/*
	 * A reply that allows but carries no usable policy must not widen
	 * anything: the run goes on with every destination denied.  As in
	 * pi-sandbox 0.8.0, any missing, extra or malformed key makes it
	 * unusable -- a policy without its deny list is not an empty one.
	 */
	net = json_object_get(reply, "network");
	if (net == NULL) {
		snprintf(err, errlen, "registration reply has no \"network\" "
		    "policy; denying every destination");
	} else if (!json_is_object(net)) {
		snprintf(err, errlen, "registration policy is not a JSON "
		    "object; denying every destination");
	} else if ((missing = json_object_get(net, "allowedDomains") == NULL ?
	    "allowedDomains" : json_object_get(net, "deniedDomains") == NULL ?
	    "deniedDomains" : NULL) != NULL) {
		snprintf(err, errlen, "registration policy has no \"%s\"; "
		    "denying every destination", missing);
	} else if ((text = json_dumps(net, JSON_COMPACT | JSON_ENCODE_ANY))
	    == NULL) {
		snprintf(err, errlen, "cannot read the registration policy; "
		    "denying every destination");
	} else if ((*policy = config_network_policy(text, strlen(text),
	    "supervisor registration reply", &errs)) == NULL) {
		snprintf(err, errlen, "invalid registration policy (%s); "
		    "denying every destination", errs.n > 0 ? errs.msg[0] :
		    "invalid");
	}
	config_errors_clear(&errs);
	free(text);
	*policy_file = supclient_policy_file(reply);
	if (*policy == NULL) {
		*fallback = 1;
		if ((*policy = supclient_deny_all()) == NULL) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	json_decref(reply);
	return 0;
fail:
	json_decref(reply);
	return -1;
}

int
supclient_unregister(const char *path, const char *capability,
    const char *worker_id, const char *cwd, int timeout_ms, char *err,
    size_t errlen)
{
	json_t			*reply;
	enum review_result	 res;
	char			 reason[512];
	int			 lost;

	if ((reply = worker_call("unregister", path, capability, worker_id,
	    cwd, timeout_ms, &res, reason, sizeof(reason), err, errlen)) ==
	    NULL)
		return -1;
	lost = json_is_string(json_object_get(reply, "error")) &&
	    strcmp(json_string_value(json_object_get(reply, "error")),
	    SUPERVISOR_UNKNOWN_WORKER) == 0;
	json_decref(reply);
	if (lost) {
		snprintf(err, errlen, "%s; nothing to unregister",
		    SUPERVISOR_LOST_DETAIL);
		return -1;
	}
	if (res != REVIEW_RESULT_ALLOW) {
		snprintf(err, errlen, "unregister not acknowledged: %s",
		    reason[0] != '\0' ? reason : "denied");
		return -1;
	}
	return 0;
}

json_t *
supclient_hostipc_request(const char *worker_id,
    const struct hostipc_request *hr)
{
	json_t	*o;

	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", "host-ipc",
	    "operation", "execute-host", "workerId",
	    worker_id != NULL ? worker_id : "", "cwd", hr->cwd,
	    "command", hr->command, "rule", hr->rule);
	if (o != NULL && hr->warning != NULL &&
	    json_object_set_new(o, "warning", json_string(hr->warning)) == -1) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/*
 * One register or unregister call for worker_id: the reply (a new
 * reference) with its action in *res and its reason (or what is wrong
 * with it) in reason, or NULL with err set when there was none.
 */
static json_t *
worker_call(const char *type, const char *path, const char *capability,
    const char *worker_id, const char *cwd, int timeout_ms,
    enum review_result *res, char *reason, size_t reasonlen, char *err,
    size_t errlen)
{
	json_t		*req, *reply;
	const char	*id;
	char		*text;

	req = json_pack("{s:s, s:s, s:s}", "type", type, "workerId",
	    worker_id, "cwd", cwd);
	if (req == NULL) {
		snprintf(err, errlen, "cannot build the request");
		return NULL;
	}
	reply = supclient_call(path, capability, req, timeout_ms, err, errlen);
	json_decref(req);
	if (reply == NULL)
		return NULL;
	/* supervisor_call already matched the id. */
	id = json_string_value(json_object_get(reply, "id"));
	if ((text = json_dumps(reply, JSON_COMPACT)) == NULL) {
		snprintf(reason, reasonlen, "out of memory");
		*res = REVIEW_RESULT_ERROR;
	} else if (review_reply_parse(text, strlen(text), id, 1, res, NULL,
	    reason, reasonlen) == -1)
		*res = REVIEW_RESULT_ERROR;
	free(text);
	return reply;
}

/*
 * One review through the reviewer o describes (approval's asynchronous
 * transports), run on a private event base until answered.
 */
enum review_result
review_ask(const struct reviewer_opts *o, json_t *request, char *reason,
    size_t reasonlen)
{
	struct event_base	*base;
	struct reviewer		*r = NULL;
	struct review		*rv;
	struct ask_state	 st = { 0, REVIEW_RESULT_ERROR, reason,
				    reasonlen };
	const char		*detail;

	reason[0] = '\0';
	if ((base = event_base_new()) == NULL) {
		snprintf(reason, reasonlen, "cannot create an event base");
		return REVIEW_RESULT_ERROR;
	}
	if ((r = reviewer_new(base, o)) == NULL) {
		snprintf(reason, reasonlen, "cannot set up the reviewer");
		goto done;
	}
	rv = review_start_request(r, request, ask_done_cb, &st, &st.res,
	    &detail);
	if (rv == NULL) {
		if (detail != NULL)
			snprintf(reason, reasonlen, "%s", detail);
		goto done;
	}
	while (!st.done)
		if (event_base_loop(base, EVLOOP_ONCE) != 0) {
			review_cancel(rv);
			st.res = REVIEW_RESULT_ERROR;
			snprintf(reason, reasonlen, "event loop failed");
			break;
		}
done:
	reviewer_free(r);
	event_base_free(base);
	return st.res;
}

static void
ask_done_cb(enum review_result res, enum review_scope scope,
    const char *detail, void *arg)
{
	struct ask_state	*st = arg;

	/* A host-IPC answer covers one command: its scope means nothing. */
	(void)scope;
	st->done = 1;
	st->res = res;
	snprintf(st->reason, st->reasonlen, "%s", detail != NULL ? detail :
	    "");
}
