/*
 * The supervisor transport: JSON lines over a Unix stream socket.
 *
 * One connection per request: connect, send one request line, read one
 * reply line, close.  No multiplexing means no shared state for a hostile
 * or confused supervisor to poison: a reply can only ever answer the
 * request sent on its own connection, and a timed-out or cancelled
 * request is dropped by closing its connection, so its late reply is
 * never read.  The reply must carry the request's id (compared in
 * constant time); an id answered before is reported as replayed.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <jansson.h>

#include "common/log.h"
#include "policy/policy.h"
#include "approval/approval_int.h"
#include "approval/supclient.h"
#include "common/secmem.h"

#define ANSWERED_MAX	256	/* ids remembered to name replays */

struct supervisor_call {
	struct event_base	*base;
	int			 fd;
	struct sockaddr_un	 sun;
	char			*frame;		/* request line, until sent */
	size_t			 framelen;
	struct event		*retry;		/* connect: backlog was full */
	int			 retry_ms;
	struct bufferevent	*bev;
	struct event		*timer;
	char			 id[REVIEW_ID_LEN + 1];
	supervisor_cb		 cb;
	void			*arg;
};

static int	 call_connect(struct supervisor_call *, char *, size_t);
static int	 call_watch(struct supervisor_call *, char *, size_t);
static void	 call_retry_cb(evutil_socket_t, short, void *);
static void	 call_read_cb(struct bufferevent *, void *);
static void	 call_event_cb(struct bufferevent *, short, void *);
static void	 call_timeout_cb(evutil_socket_t, short, void *);
static void	 call_finish(struct supervisor_call *, enum supervisor_status,
		    json_t *, const char *);
static void	 call_free(struct supervisor_call *);
static void	 call_drop_frame(struct supervisor_call *);
static int	 call_answered(const char *, size_t);
static void	 call_remember(const char *);
static void	 socket_call_cb(enum supervisor_status, json_t *,
		    const char *, void *);
static void	 socket_reregister(struct review *);
static void	 socket_register_cb(enum supervisor_status, json_t *,
		    const char *, void *);

/* Ids of replies accepted lately, to tell a replay from a stranger. */
static char	 answered[ANSWERED_MAX][REVIEW_ID_LEN + 1];
static size_t	 answered_next;
static char	 call_err[256];

struct supervisor_call *
supervisor_call(struct event_base *base, const char *path,
    const char *capability, json_t *request, int timeout_ms,
    supervisor_cb cb, void *arg, const char **errstr)
{
	struct supervisor_call	*call = NULL;
	struct timeval		 tv;
	json_t			*o = NULL;
	int			 rc;

	*errstr = call_err;
	if (capability == NULL || *capability == '\0') {
		snprintf(call_err, sizeof(call_err), "no capability");
		return NULL;
	}
	if (path == NULL || strlen(path) >= sizeof(call->sun.sun_path)) {
		snprintf(call_err, sizeof(call_err),
		    "supervisor socket path too long");
		return NULL;
	}
	if ((call = calloc(1, sizeof(*call))) == NULL) {
		snprintf(call_err, sizeof(call_err), "out of memory");
		return NULL;
	}
	call->base = base;
	call->fd = -1;
	call->cb = cb;
	call->arg = arg;
	call->sun.sun_family = AF_UNIX;
	memcpy(call->sun.sun_path, path, strlen(path));
	if (review_id_new(call->id) == -1) {
		snprintf(call_err, sizeof(call_err), "no random bytes for an id");
		goto fail;
	}
	/* The caller's object cannot override version, capability or id. */
	o = json_pack("{s:i, s:s, s:s}", "version", 1,
	    "capability", capability, "id", call->id);
	if (o == NULL || json_object_update_missing(o, request) == -1 ||
	    (call->frame = json_dumps(o, JSON_COMPACT)) == NULL) {
		snprintf(call_err, sizeof(call_err), "cannot build the request");
		goto fail;
	}
	call->framelen = strlen(call->frame);
	if (call->framelen > REVIEW_FRAME_MAX) {
		snprintf(call_err, sizeof(call_err), "request over %d octets",
		    REVIEW_FRAME_MAX);
		goto fail;
	}
	call->frame[call->framelen++] = '\n';	/* replaces the NUL */

	call->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (call->fd == -1) {
		snprintf(call_err, sizeof(call_err), "socket: %s",
		    strerror(errno));
		goto fail;
	}
	if ((call->retry = evtimer_new(base, call_retry_cb, call)) == NULL) {
		snprintf(call_err, sizeof(call_err), "out of memory");
		goto fail;
	}
	if ((rc = call_connect(call, call_err, sizeof(call_err))) == -1)
		goto fail;
	if (rc == 0 && call_watch(call, call_err, sizeof(call_err)) == -1)
		goto fail;
	if (timeout_ms > 0) {
		tv.tv_sec = timeout_ms / 1000;
		tv.tv_usec = (timeout_ms % 1000) * 1000;
		if ((call->timer = evtimer_new(base, call_timeout_cb,
		    call)) == NULL || evtimer_add(call->timer, &tv) == -1) {
			snprintf(call_err, sizeof(call_err), "cannot arm timer");
			goto fail;
		}
	}
	json_decref(o);
	return call;
fail:
	json_decref(o);
	call_free(call);
	return NULL;
}

/*
 * Connect and send the request: 0 done, 1 try again later (the
 * supervisor's listen backlog is full: a Unix stream connect then fails
 * with EAGAIN instead of waiting, and the retry timer is armed), -1 error.
 */
static int
call_connect(struct supervisor_call *call, char *err, size_t errlen)
{
	struct timeval	 tv;
	ssize_t		 n;

	if (connect(call->fd, (struct sockaddr *)&call->sun,
	    sizeof(call->sun)) == -1) {
		if (errno == EAGAIN) {
			call->retry_ms = call->retry_ms == 0 ? 5 :
			    call->retry_ms * 2;
			if (call->retry_ms > 50)
				call->retry_ms = 50;
			tv.tv_sec = 0;
			tv.tv_usec = call->retry_ms * 1000;
			if (evtimer_add(call->retry, &tv) == -1) {
				snprintf(err, errlen, "cannot arm timer");
				return -1;
			}
			return 1;
		}
		snprintf(err, errlen, "connect %s: %s", call->sun.sun_path,
		    strerror(errno));
		return -1;
	}
	/* An empty socket buffer takes a whole frame; no SIGPIPE. */
	n = send(call->fd, call->frame, call->framelen, MSG_NOSIGNAL);
	if (n == -1 || (size_t)n != call->framelen) {
		snprintf(err, errlen, "send to %s: %s", call->sun.sun_path,
		    n == -1 ? strerror(errno) : "short write");
		return -1;
	}
	call_drop_frame(call);
	return 0;
}

/* Wait for the reply on a connected socket. */
static int
call_watch(struct supervisor_call *call, char *err, size_t errlen)
{
	if ((call->bev = bufferevent_socket_new(call->base, call->fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	call->fd = -1;		/* the bufferevent owns it */
	bufferevent_setwatermark(call->bev, EV_READ, 0, REVIEW_FRAME_MAX + 2);
	bufferevent_setcb(call->bev, call_read_cb, NULL, call_event_cb, call);
	if (bufferevent_enable(call->bev, EV_READ) == -1) {
		snprintf(err, errlen, "cannot watch the socket");
		return -1;
	}
	return 0;
}

static void
call_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct supervisor_call	*call = arg;
	char			 err[256];
	int			 rc;

	(void)fd;
	(void)what;
	if ((rc = call_connect(call, err, sizeof(err))) == 1)
		return;
	if (rc == -1 || call_watch(call, err, sizeof(err)) == -1)
		call_finish(call, SUPERVISOR_ERROR, NULL, err);
}

void
supervisor_call_cancel(struct supervisor_call *call)
{
	call_free(call);
}

const char *
supervisor_call_id(const struct supervisor_call *call)
{
	return call->id;
}

/* One reply line, or an oversized frame: either way the call ends. */
static void
call_read_cb(struct bufferevent *bev, void *arg)
{
	struct supervisor_call	*call = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_ptr	 eol;
	json_t			*o, *id;
	json_error_t		 jerr;
	size_t			 eollen, n;
	char			*line;
	char			 err[256];

	eol = evbuffer_search_eol(in, NULL, &eollen, EVBUFFER_EOL_LF);
	if (eol.pos == -1) {
		if (evbuffer_get_length(in) > REVIEW_FRAME_MAX + 1)
			call_finish(call, SUPERVISOR_ERROR, NULL,
			    "reply frame over 16384 octets");
		return;
	}
	if ((size_t)eol.pos > REVIEW_FRAME_MAX) {
		call_finish(call, SUPERVISOR_ERROR, NULL,
		    "reply frame over 16384 octets");
		return;
	}
	if ((line = (char *)evbuffer_pullup(in, eol.pos)) == NULL &&
	    eol.pos > 0) {
		call_finish(call, SUPERVISOR_ERROR, NULL, "out of memory");
		return;
	}
	o = json_loadb(line != NULL ? line : "", (size_t)eol.pos,
	    JSON_REJECT_DUPLICATES, &jerr);
	if (o == NULL) {
		snprintf(err, sizeof(err), "reply is not JSON: %s", jerr.text);
		call_finish(call, SUPERVISOR_ERROR, NULL, err);
		return;
	}
	id = json_object_get(o, "id");
	if (!json_is_object(o) || !json_is_string(id)) {
		call_finish(call, SUPERVISOR_ERROR, NULL,
		    "reply has no id string");
		goto done;
	}
	n = json_string_length(id);
	if (n != REVIEW_ID_LEN ||
	    secmem_cmp(json_string_value(id), call->id, n) != 0) {
		call_finish(call, SUPERVISOR_ERROR, NULL,
		    call_answered(json_string_value(id), n) ?
		    "reply carries a replayed id" :
		    "reply id does not match the request");
		goto done;
	}
	call_remember(call->id);
	call_finish(call, SUPERVISOR_OK, o, NULL);
done:
	json_decref(o);
}

static void
call_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct supervisor_call	*call = arg;
	char			 err[256];

	if (what & BEV_EVENT_EOF)
		snprintf(err, sizeof(err), "%s",
		    evbuffer_get_length(bufferevent_get_input(bev)) > 0 ?
		    "supervisor closed the connection mid-reply" :
		    "supervisor closed the connection without a reply");
	else
		snprintf(err, sizeof(err), "supervisor socket: %s",
		    strerror(EVUTIL_SOCKET_ERROR()));
	call_finish(call, SUPERVISOR_ERROR, NULL, err);
}

static void
call_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct supervisor_call	*call = arg;

	(void)fd;
	(void)what;
	call_finish(call, SUPERVISOR_TIMEOUT, NULL, "no reply in time");
}

/* Close the connection first, so nothing more is read, then answer. */
static void
call_finish(struct supervisor_call *call, enum supervisor_status st,
    json_t *reply, const char *error)
{
	supervisor_cb	 cb = call->cb;
	void		*arg = call->arg;

	call_free(call);
	cb(st, reply, error, arg);
}

/* The request carries the capability: wipe it once it is sent. */
static void
call_drop_frame(struct supervisor_call *call)
{
	if (call->frame != NULL) {
		secmem_wipe(call->frame, call->framelen);
		free(call->frame);
		call->frame = NULL;
	}
}

static void
call_free(struct supervisor_call *call)
{
	if (call == NULL)
		return;
	call_drop_frame(call);
	if (call->retry != NULL)
		event_free(call->retry);
	if (call->bev != NULL)
		bufferevent_free(call->bev);
	if (call->fd != -1)
		close(call->fd);
	if (call->timer != NULL)
		event_free(call->timer);
	free(call);
}

static int
call_answered(const char *id, size_t len)
{
	size_t	 i;

	if (len != REVIEW_ID_LEN)
		return 0;
	for (i = 0; i < ANSWERED_MAX; i++)
		if (secmem_cmp(answered[i], id, REVIEW_ID_LEN) == 0)
			return 1;
	return 0;
}

static void
call_remember(const char *id)
{
	memcpy(answered[answered_next], id, REVIEW_ID_LEN + 1);
	answered_next = (answered_next + 1) % ANSWERED_MAX;
}

int
socket_start(struct review *rv, char *err, size_t errlen)
{
	struct reviewer	*r = rv->r;
	const char	*errstr;

	/* The review's own timer bounds the call. */
	rv->call = supervisor_call(r->base, r->socket_path, r->capability,
	    rv->req, 0, socket_call_cb, rv, &errstr);
	if (rv->call == NULL) {
		snprintf(err, errlen, "%s", errstr);
		return -1;
	}
	memcpy(rv->id, supervisor_call_id(rv->call), sizeof(rv->id));
	return 0;
}

void
socket_abort(struct review *rv)
{
	if (rv->call != NULL) {
		supervisor_call_cancel(rv->call);
		rv->call = NULL;
	}
}

static void
socket_call_cb(enum supervisor_status st, json_t *reply, const char *error,
    void *arg)
{
	struct review		*rv = arg;
	enum review_result	 res;
	char			 detail[512];

	rv->call = NULL;
	switch (st) {
	case SUPERVISOR_OK:
		if (json_is_string(json_object_get(reply, "error")) &&
		    strcmp(json_string_value(json_object_get(reply, "error")),
		    SUPERVISOR_UNKNOWN_WORKER) == 0) {
			socket_reregister(rv);
			break;
		}
		if (review_reply_check(reply, rv->id, 1, &res, &rv->scope,
		    detail, sizeof(detail)) == -1)
			review_done(rv, REVIEW_RESULT_ERROR, detail);
		else
			review_done(rv, res, detail[0] != '\0' ? detail : NULL);
		break;
	case SUPERVISOR_TIMEOUT:
		review_done(rv, REVIEW_RESULT_TIMEOUT, error);
		break;
	case SUPERVISOR_ERROR:
		review_done(rv, REVIEW_RESULT_ERROR, error);
		break;
	}
}

/*
 * The supervisor answered that it does not know the worker: it was
 * restarted since the worker registered, and every later review would
 * be refused the same way.  Register again (the capability is the same)
 * with the request's workerId and cwd; the review itself fails as an
 * error either way -- it was never put to a reviewer.  Bounded by the
 * review's own timer, cancelled with it (rv->call).
 */
static void
socket_reregister(struct review *rv)
{
	struct reviewer	*r = rv->r;
	const char	*worker, *cwd, *errstr;
	char		 detail[512];
	json_t		*req;

	worker = json_string_value(json_object_get(rv->req, "workerId"));
	cwd = json_string_value(json_object_get(rv->req, "cwd"));
	if (worker == NULL)
		worker = r->worker_id != NULL ? r->worker_id : "";
	if (cwd == NULL)
		cwd = r->cwd != NULL ? r->cwd : "";
	req = json_pack("{s:s, s:s, s:s}", "type", "register", "workerId",
	    worker, "cwd", cwd);
	if (req == NULL) {
		review_done(rv, REVIEW_RESULT_ERROR, SUPERVISOR_LOST_DETAIL
		    "; registering again failed: out of memory");
		return;
	}
	rv->call = supervisor_call(r->base, r->socket_path, r->capability,
	    req, 0, socket_register_cb, rv, &errstr);
	json_decref(req);
	if (rv->call == NULL) {
		snprintf(detail, sizeof(detail), "%s; registering again "
		    "failed: %s", SUPERVISOR_LOST_DETAIL, errstr);
		review_done(rv, REVIEW_RESULT_ERROR, detail);
	}
}

static void
socket_register_cb(enum supervisor_status st, json_t *reply,
    const char *error, void *arg)
{
	struct review	*rv = arg;
	const char	*action = NULL, *reason = NULL;
	char		 detail[512];

	rv->call = NULL;
	if (st == SUPERVISOR_OK) {
		action = json_string_value(json_object_get(reply, "action"));
		reason = json_string_value(json_object_get(reply, "reason"));
	}
	/*
	 * Several reviews in flight each register again: the first one
	 * does, the others find the worker registered, which is as good.
	 */
	if (action != NULL && (strcmp(action, "allow") == 0 ||
	    (reason != NULL && strcmp(reason, "workerId already registered")
	    == 0))) {
		snprintf(detail, sizeof(detail), "%s; registered again, later "
		    "reviews go to it", SUPERVISOR_LOST_DETAIL);
		log_warnx("supervisor %s: it no longer knew worker %s "
		    "(restarted?); registered again", rv->r->socket_path,
		    json_string_value(json_object_get(rv->req, "workerId")) ?
		    json_string_value(json_object_get(rv->req, "workerId")) :
		    "?");
	} else
		snprintf(detail, sizeof(detail), "%s; registering again "
		    "failed: %s", SUPERVISOR_LOST_DETAIL, st != SUPERVISOR_OK ?
		    (error != NULL ? error : "no reply") : reason != NULL ?
		    reason : "refused");
	review_done(rv, REVIEW_RESULT_ERROR, detail);
}
