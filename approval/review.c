/*
 * The review hook client: one reviewer per proxy, one review per
 * connection that no list matched.  This file holds what the transports
 * share -- the in-flight cap, request ids, the request object, reply
 * parsing, timeouts and the exactly-once callback -- and dispatches to
 * command.c, socket.c and tty.c.  Every failure is an answer other than
 * REVIEW_RESULT_ALLOW.
 */
#include <sys/queue.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "common/log.h"
#include "policy/policy.h"
#include "approval/approval_int.h"
#include "common/secmem.h"
#include "common/text.h"

#define REVIEW_TIMEOUT_DEFAULT	30000
#define REVIEW_INFLIGHT_DEFAULT	16

static void	 reviewer_free_cb(evutil_socket_t, short, void *);
static void	 reviewer_destroy(struct reviewer *);
static void	 review_timeout_cb(evutil_socket_t, short, void *);
static void	 review_abort(struct review *);
static void	 review_free(struct review *);
static void	 review_release(struct review *);
static struct review *review_begin(struct reviewer *, json_t *,
		    const struct review_request *, review_cb, void *,
		    enum review_result *, const char **);
static char	*review_strdup0(const char *);

void
reviewer_opts_config(struct reviewer_opts *o, const struct config *conf,
    const char *worker_id, const char *cwd, const char *capability)
{
	memset(o, 0, sizeof(*o));
	o->worker_id = worker_id;
	o->cwd = cwd;
	if (conf == NULL)
		return;
	o->mode = conf->review_mode;
	o->argv = conf->review_command.v;
	o->socket_path = conf->review_socket;
	o->timeout_ms = conf->review_timeout_ms;
	o->max_inflight = conf->review_max_inflight;
	/*
	 * The capability is the launcher's (or the standalone proxy's) own
	 * secret; an unset or empty variable means there is none and every
	 * review is an error.
	 */
	if (capability == NULL)
		capability = review_capability(conf);
	o->capability = capability;
}

const char *
review_capability(const struct config *conf)
{
	if (conf == NULL || conf->review_mode != REVIEW_SOCKET)
		return NULL;
	return policy_env_take(conf->review_capability_env != NULL ?
	    conf->review_capability_env : "PISBX_CAPABILITY");
}

struct reviewer *
reviewer_new(struct event_base *base, const struct reviewer_opts *o)
{
	struct reviewer	*r;
	size_t		 i, n;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->base = base;
	r->tty_fd = -1;
	TAILQ_INIT(&r->reviews);
	TAILQ_INIT(&r->children);
	TAILQ_INIT(&r->tty_queue);
	r->mode = o->mode;
	r->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms :
	    REVIEW_TIMEOUT_DEFAULT;
	r->max_inflight = o->max_inflight > 0 ? o->max_inflight :
	    REVIEW_INFLIGHT_DEFAULT;
	if ((r->worker_id = review_strdup0(o->worker_id)) == NULL ||
	    (r->cwd = review_strdup0(o->cwd)) == NULL ||
	    (r->command = review_strdup0(o->command)) == NULL)
		goto fail;
	r->tty_session = o->tty_session;
	r->tty_clock_at_start = o->tty_clock_at_start;

	switch (r->mode) {
	case REVIEW_COMMAND:
		for (n = 0; o->argv != NULL && o->argv[n] != NULL; n++)
			;
		if (n == 0 || (r->argv = calloc(n + 1, sizeof(char *))) ==
		    NULL)
			goto fail;
		for (i = 0; i < n; i++)
			if ((r->argv[i] = strdup(o->argv[i])) == NULL)
				goto fail;
		break;
	case REVIEW_SOCKET:
		if (o->socket_path == NULL ||
		    (r->socket_path = strdup(o->socket_path)) == NULL)
			goto fail;
		if (o->capability != NULL && *o->capability != '\0' &&
		    (r->capability = strdup(o->capability)) == NULL)
			goto fail;
		break;
	case REVIEW_TTY:
	case REVIEW_NONE:
		break;
	}
	return r;
fail:
	reviewer_destroy(r);
	return NULL;
}

/*
 * Free a reviewer; reviews in flight are cancelled.  From inside a review
 * callback (a caller dropping its last reference to an old config) the
 * transport that is calling back still uses the reviewer, so only the
 * reviews are cancelled now and the rest is freed from the loop.
 */
void
reviewer_free(struct reviewer *r)
{
	struct review	*rv;
	struct timeval	 tv = { 0, 0 };

	if (r == NULL || r->dying)
		return;
	while ((rv = TAILQ_FIRST(&r->reviews)) != NULL) {
		review_abort(rv);
		review_free(rv);
	}
	if (r->in_callback > 0) {
		r->dying = 1;
		if (event_base_once(r->base, -1, EV_TIMEOUT, reviewer_free_cb,
		    r, &tv) == 0)
			return;
		log_warnx("reviewer: cannot defer its release");
		return;		/* a leak rather than a use after free */
	}
	reviewer_destroy(r);
}

static void
reviewer_free_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	reviewer_destroy(arg);
}

static void
reviewer_destroy(struct reviewer *r)
{
	struct review	*rv;
	char		**a;

	while ((rv = TAILQ_FIRST(&r->reviews)) != NULL) {
		review_abort(rv);
		review_free(rv);
	}
	command_reap_all(r);
	tty_free(r);
	if (r->argv != NULL) {
		for (a = r->argv; *a != NULL; a++)
			free(*a);
		free(r->argv);
	}
	free(r->socket_path);
	if (r->capability != NULL) {
		secmem_wipe(r->capability, strlen(r->capability));
		free(r->capability);
	}
	free(r->worker_id);
	free(r->command);
	free(r->cwd);
	free(r);
}

int
reviewer_enabled(const struct reviewer *r)
{
	return r != NULL && r->mode != REVIEW_NONE;
}

struct review *
review_start(struct reviewer *r, const struct review_request *req,
    review_cb cb, void *arg, enum review_result *now, const char **detail)
{
	struct review	*rv;
	json_t		*o;

	o = json_pack("{s:s, s:s, s:i, s:s, s:s, s:s}", "type", "network",
	    "hostname", req->host, "port", (int)req->port,
	    "protocol", req->protocol,
	    "workerId", r != NULL ? r->worker_id : "",
	    "cwd", r != NULL ? r->cwd : "");
	/* The command line, for a reviewer that shows it to a person. */
	if (o != NULL && r != NULL && r->command[0] != '\0')
		json_object_set_new(o, "command", json_string(r->command));
	if (o != NULL && req->warning != NULL)
		json_object_set_new(o, "warning", json_string(req->warning));
	/* A host past its egress budget: which, and how far. */
	if (o != NULL && req->budget != NULL)
		json_object_set_new(o, "budget", json_pack("{s:s, s:I, s:I}",
		    "name", req->budget, "limit",
		    (json_int_t)req->budget_limit, "used",
		    (json_int_t)req->budget_used));
	rv = review_begin(r, o, req, cb, arg, now, detail);
	json_decref(o);
	return rv;
}

struct review *
review_start_request(struct reviewer *r, json_t *request, review_cb cb,
    void *arg, enum review_result *now, const char **detail)
{
	json_t		*o;
	struct review	*rv;

	o = json_is_object(request) ? json_deep_copy(request) : NULL;
	rv = review_begin(r, o, NULL, cb, arg, now, detail);
	json_decref(o);
	return rv;
}

/*
 * Start a review of the request object o (its own reference is taken);
 * nreq, when set, is the network request it was built from, which the
 * tty shows in its own words.
 */
static struct review *
review_begin(struct reviewer *r, json_t *o, const struct review_request *nreq,
    review_cb cb, void *arg, enum review_result *now, const char **detail)
{
	struct review	*rv = NULL;
	char		 err[256];
	int		 rc;

	*detail = NULL;
	if (!reviewer_enabled(r) || r->dying) {
		*now = REVIEW_RESULT_NONE;
		return NULL;
	}
	*now = REVIEW_RESULT_ERROR;
	*detail = r->detail;
	if (r->mode == REVIEW_SOCKET && r->capability == NULL) {
		snprintf(r->detail, sizeof(r->detail), "no capability");
		return NULL;
	}
	if (r->inflight >= r->max_inflight) {
		*now = REVIEW_RESULT_BUSY;
		snprintf(r->detail, sizeof(r->detail),
		    "too many reviews in flight (max %d)", r->max_inflight);
		return NULL;
	}
	if (o == NULL || (rv = calloc(1, sizeof(*rv))) == NULL ||
	    (nreq != NULL && ((rv->host = strdup(nreq->host)) == NULL ||
	    (rv->protocol = strdup(nreq->protocol)) == NULL ||
	    (nreq->client != NULL && (rv->client = strdup(nreq->client)) ==
	    NULL))) ||
	    (rv->timer = evtimer_new(r->base, review_timeout_cb, rv)) ==
	    NULL) {
		snprintf(r->detail, sizeof(r->detail), o == NULL ?
		    "cannot build the request" : "out of memory");
		goto fail;
	}
	rv->req = json_incref(o);
	if (review_id_new(rv->id) == -1) {
		snprintf(r->detail, sizeof(r->detail),
		    "no random bytes for a request id");
		goto fail;
	}
	rv->r = r;
	rv->port = nreq != NULL ? nreq->port : 0;
	rv->cb = cb;
	rv->arg = arg;

	err[0] = '\0';
	switch (r->mode) {
	case REVIEW_COMMAND:
		rc = command_start(rv, err, sizeof(err));
		break;
	case REVIEW_SOCKET:
		rc = socket_start(rv, err, sizeof(err));
		break;
	case REVIEW_TTY:
		rc = tty_start(rv, err, sizeof(err));
		break;
	default:
		snprintf(err, sizeof(err), "unknown review mode");
		rc = -1;
		break;
	}
	if (rc == -1) {
		snprintf(r->detail, sizeof(r->detail), "%s", err);
		goto fail;
	}
	/* A tty question's clock starts when it is shown, unless told. */
	if ((r->mode != REVIEW_TTY || r->tty_clock_at_start) &&
	    review_arm_timer(rv) == -1) {
		review_abort(rv);
		snprintf(r->detail, sizeof(r->detail), "cannot arm timer");
		goto fail;
	}
	TAILQ_INSERT_TAIL(&r->reviews, rv, entry);
	r->inflight++;
	return rv;
fail:
	if (rv != NULL)
		review_release(rv);
	return NULL;
}

void
review_cancel(struct review *rv)
{
	if (rv == NULL || rv->finished)
		return;
	review_abort(rv);
	review_free(rv);
}

void
review_done(struct review *rv, enum review_result res, const char *detail)
{
	struct reviewer	*r = rv->r;
	char		 copy[512];

	/* The transport's buffers may go away with the review. */
	if (detail != NULL) {
		snprintf(copy, sizeof(copy), "%s", detail);
		detail = copy;
	}
	rv->finished = 1;
	TAILQ_REMOVE(&r->reviews, rv, entry);
	r->inflight--;
	r->in_callback++;
	rv->cb(res, res == REVIEW_RESULT_ALLOW ? rv->scope :
	    REVIEW_SCOPE_ONCE, detail, rv->arg);
	r->in_callback--;
	review_release(rv);
}

int
review_arm_timer(struct review *rv)
{
	struct timeval	 tv;

	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	rv->deadline_ms = (long long)now.tv_sec * 1000 + now.tv_nsec /
	    1000000 + rv->r->timeout_ms;
	tv.tv_sec = rv->r->timeout_ms / 1000;
	tv.tv_usec = (rv->r->timeout_ms % 1000) * 1000;
	return evtimer_add(rv->timer, &tv);
}

int
review_left_ms(const struct review *rv)
{
	struct timespec	 now;
	long long	 left;

	clock_gettime(CLOCK_MONOTONIC, &now);
	left = rv->deadline_ms - ((long long)now.tv_sec * 1000 +
	    now.tv_nsec / 1000000);
	return left < 0 ? 0 : left > rv->r->timeout_ms ? rv->r->timeout_ms :
	    (int)left;
}

/* The review's time is up: stop the transport and answer TIMEOUT. */
static void
review_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct review	*rv = arg;
	char		 detail[64];

	(void)fd;
	(void)what;
	review_abort(rv);
	snprintf(detail, sizeof(detail), "no answer within %d ms",
	    rv->r->timeout_ms);
	review_done(rv, REVIEW_RESULT_TIMEOUT, detail);
}

/* Stop the transport's work for a review; late answers are dropped. */
static void
review_abort(struct review *rv)
{
	switch (rv->r->mode) {
	case REVIEW_COMMAND:
		command_abort(rv);
		break;
	case REVIEW_SOCKET:
		socket_abort(rv);
		break;
	case REVIEW_TTY:
		tty_abort(rv);
		break;
	case REVIEW_NONE:
		break;
	}
}

/* Unlink and free a review whose transport state is already gone. */
static void
review_free(struct review *rv)
{
	struct reviewer	*r = rv->r;

	TAILQ_REMOVE(&r->reviews, rv, entry);
	r->inflight--;
	review_release(rv);
}

/* Free the memory of an unlinked review. */
static void
review_release(struct review *rv)
{
	if (rv->timer != NULL)
		event_free(rv->timer);
	json_decref(rv->req);
	free(rv->host);
	free(rv->protocol);
	free(rv->client);
	free(rv);
}

void
review_grant_set(struct review_grant *g, const struct review_request *req)
{
	memset(g, 0, sizeof(*g));
	if (req->host == NULL || req->protocol == NULL ||
	    strlen(req->host) >= sizeof(g->host) ||
	    strlen(req->protocol) >= sizeof(g->protocol))
		return;		/* covers nothing */
	snprintf(g->host, sizeof(g->host), "%s", req->host);
	snprintf(g->protocol, sizeof(g->protocol), "%s", req->protocol);
	g->port = req->port;
}

int
review_grant_covers(const struct review_grant *g,
    const struct review_request *req)
{
	return g->host[0] != '\0' && req->host != NULL &&
	    req->protocol != NULL && g->port == req->port &&
	    strcmp(g->host, req->host) == 0 &&
	    strcmp(g->protocol, req->protocol) == 0;
}

const char *
review_result_reason(enum review_result res)
{
	switch (res) {
	case REVIEW_RESULT_ALLOW:
		return "review:allow";
	case REVIEW_RESULT_DENY:
		return "review:deny";
	case REVIEW_RESULT_TIMEOUT:
		return "review:timeout";
	case REVIEW_RESULT_ERROR:
		return "review:error";
	case REVIEW_RESULT_BUSY:
		return "review:busy";
	case REVIEW_RESULT_NONE:
		break;
	}
	return "no-reviewer";
}

/* NULL-safe string equality. */
static int
review_str_same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

int
review_config_same(const struct config *a, const struct config *b)
{
	size_t	 i;

	if (a->review_mode != b->review_mode ||
	    a->review_command.n != b->review_command.n ||
	    !review_str_same(a->review_socket, b->review_socket) ||
	    !review_str_same(a->review_capability_env,
	    b->review_capability_env))
		return 0;
	for (i = 0; i < a->review_command.n; i++)
		if (!review_str_same(a->review_command.v[i],
		    b->review_command.v[i]))
			return 0;
	return 1;
}

int
review_id_new(char id[REVIEW_ID_LEN + 1])
{
	unsigned char	 b[16];

	if (secmem_random(b, sizeof(b)) == -1)
		return -1;
	b[6] = (b[6] & 0x0f) | 0x40;	/* version 4 */
	b[8] = (b[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
	snprintf(id, REVIEW_ID_LEN + 1,
	    "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x",
	    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
	    b[10], b[11], b[12], b[13], b[14], b[15]);
	return 0;
}

char *
review_request_line(const struct review *rv, int with_capability,
    size_t *len)
{
	json_t	*o;
	char	*s = NULL, *line = NULL;
	size_t	 n;

	/* The request object cannot override version, id or capability. */
	o = json_pack("{s:i, s:s}", "version", 1, "id", rv->id);
	if (o == NULL || json_object_update_missing(o, rv->req) == -1)
		goto fail;
	json_object_del(o, "capability");
	if (with_capability && json_object_set_new(o, "capability",
	    json_string(rv->r->capability)) == -1)
		goto fail;
	if ((s = json_dumps(o, JSON_COMPACT)) == NULL)
		goto fail;
	n = strlen(s);
	if (n > REVIEW_FRAME_MAX || (line = malloc(n + 2)) == NULL)
		goto fail;
	memcpy(line, s, n);
	line[n] = '\n';
	line[n + 1] = '\0';
	*len = n + 1;
fail:
	free(s);
	json_decref(o);
	return line;
}

int
review_reply_parse(const char *buf, size_t len, const char *want_id,
    int id_required, enum review_result *res, enum review_scope *scope,
    char *detail, size_t detaillen)
{
	json_t		*o;
	json_error_t	 jerr;
	int		 rc;

	*res = REVIEW_RESULT_ERROR;
	if (len > REVIEW_FRAME_MAX) {
		snprintf(detail, detaillen, "reply over %d octets",
		    REVIEW_FRAME_MAX);
		return -1;
	}
	o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (o == NULL) {
		snprintf(detail, detaillen, "reply is not JSON: %s",
		    jerr.text);
		return -1;
	}
	rc = review_reply_check(o, want_id, id_required, res, scope, detail,
	    detaillen);
	json_decref(o);
	return rc;
}

int
review_reply_check(const json_t *o, const char *want_id, int id_required,
    enum review_result *res, enum review_scope *scope, char *detail,
    size_t detaillen)
{
	const json_t	*v;
	const char	*s, *w;
	size_t		 n;
	enum review_scope sc = REVIEW_SCOPE_ONCE;

	*res = REVIEW_RESULT_ERROR;
	if (scope != NULL)
		*scope = REVIEW_SCOPE_ONCE;
	if (!json_is_object(o)) {
		snprintf(detail, detaillen, "reply is not a JSON object");
		return -1;
	}
	v = json_object_get(o, "id");
	if (v == NULL && id_required) {
		snprintf(detail, detaillen, "reply has no id");
		return -1;
	}
	if (v != NULL) {
		if (!json_is_string(v)) {
			snprintf(detail, detaillen, "reply id is not a string");
			return -1;
		}
		n = json_string_length(v);
		if (want_id == NULL || n != strlen(want_id) ||
		    secmem_cmp(json_string_value(v), want_id, n) != 0) {
			snprintf(detail, detaillen,
			    "reply id does not match the request");
			return -1;
		}
	}
	v = json_object_get(o, "reason");
	if (v != NULL && !json_is_string(v)) {
		snprintf(detail, detaillen, "reply reason is not a string");
		return -1;
	}
	s = v != NULL ? json_string_value(v) : "";
	v = json_object_get(o, "action");
	if (v == NULL || !json_is_string(v)) {
		snprintf(detail, detaillen, "reply has no action string");
		return -1;
	}
	if (json_string_length(v) == 5 &&
	    strcmp(json_string_value(v), "allow") == 0)
		*res = REVIEW_RESULT_ALLOW;
	else if (json_string_length(v) == 4 &&
	    strcmp(json_string_value(v), "deny") == 0)
		*res = REVIEW_RESULT_DENY;
	else {
		snprintf(detail, detaillen, "reply action is not allow or deny");
		return -1;
	}
	/*
	 * How far an allow reaches.  Anything but the three words is a
	 * malformed reply, a deny: a reviewer that meant "once" and wrote
	 * "Once" must not be read as wider.
	 */
	if ((v = json_object_get(o, "scope")) != NULL) {
		n = json_is_string(v) ? json_string_length(v) : 0;
		w = json_is_string(v) ? json_string_value(v) : "";
		if (n == 4 && strcmp(w, "once") == 0)
			sc = REVIEW_SCOPE_ONCE;
		else if (n == 3 && strcmp(w, "run") == 0)
			sc = REVIEW_SCOPE_RUN;
		else if (n == 6 && strcmp(w, "worker") == 0 && id_required)
			sc = REVIEW_SCOPE_WORKER;
		else {
			*res = REVIEW_RESULT_ERROR;
			snprintf(detail, detaillen, "reply scope is not %s",
			    id_required ? "once, run or worker" :
			    "once or run (worker is for a supervisor's reply)");
			return -1;
		}
	}
	if (scope != NULL)
		*scope = sc;
	text_clean(detail, detaillen, s, 0);
	return 0;
}

const char *
review_scope_name(enum review_scope sc)
{
	switch (sc) {
	case REVIEW_SCOPE_RUN:
		return "run";
	case REVIEW_SCOPE_WORKER:
		return "worker";
	case REVIEW_SCOPE_SESSION:
		return "session";
	case REVIEW_SCOPE_ONCE:
		break;
	}
	return "once";
}

static char *
review_strdup0(const char *s)
{
	return strdup(s != NULL ? s : "");
}
