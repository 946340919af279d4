/*
 * pisbx-supervisor's server: JSON lines on a Unix stream socket (mode
 * 0600), one request per connection, each answered by one reply line and
 * the connection closed.  Registration hands out the trusted config's
 * network policy; network and host-IPC reviews are answered by a review
 * command or the person at the TTY through approval's asynchronous
 * reviewer, on this process's event loop, so a slow reviewer holds up
 * nobody else; the worker table records who registered.
 *
 * Every request must carry the capability (compared in constant time)
 * and an id never used before with it; a worker's later requests must
 * name the cwd it registered with.  Frames over 16 KiB, malformed JSON
 * and unknown types are refused with a deny, and a misbehaving client
 * only ever loses its own connection.
 *
 * This file is the server: the listener, each client's connection and
 * request, the reviews and the session's approvals, the access log.
 * A request's parsing and checks, the worker table and the ids seen
 * are request.c's.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "common/io.h"
#include "common/log.h"
#include "common/time.h"
#include "policy/policy.h"
#include "approval/approval.h"
#include "approval/supclient.h"
#include "supervisor/supervisor.h"
#include "supervisor/supervisor_int.h"

#define CLIENTS_MAX		256	/* connections open at once */
#define REVIEWS_MAX		64	/* reviews in flight at once */
#define CLIENT_IDLE_SECS	30	/* to send one request line */
/* A registration reply without its policy fits in this. */
#define REPLY_OVERHEAD		(ID_MAX + 64)

struct client {
	TAILQ_ENTRY(client)	 entry;
	struct supervisor	*sup;
	struct bufferevent	*bev;
	pid_t			 pid;
	int			 closing;	/* reply queued */
	struct review		*review;	/* in flight, or NULL */
	char			*id;		/* its request's id */
	json_t			*req;		/* its request (logged) */
	struct review_request	 target;	/* network: what it asks */
};

static int	 client_evict(struct supervisor *);
static void	 accept_cb(struct evconnlistener *, evutil_socket_t,
		    struct sockaddr *, int, void *);
static void	 client_read_cb(struct bufferevent *, void *);
static void	 client_write_cb(struct bufferevent *, void *);
static void	 client_event_cb(struct bufferevent *, short, void *);
static void	 client_free(struct client *);
static void	 client_reply(struct client *, const char *id,
		    const char *action, const char *reason, json_t *extra);
static void	 client_handle(struct client *, const char *, size_t);
static void	 client_review(struct client *, json_t *, const char *id);
static void	 client_push(struct client *, struct supervisor_request *);
static void	 client_review_cb(enum review_result, enum review_scope,
		    const char *, void *);
static void	 sup_log(int fd, json_t *req, const char *decision,
		    const char *reason);
static int	 session_covers(const struct supervisor *,
		    const struct review_request *);
static void	 session_add(struct supervisor *,
		    const struct review_request *);
static void	 request_target(json_t *, struct review_request *);

struct supervisor *
supervisor_new(struct event_base *base, const struct supervisor_opts *o,
    char *err, size_t errlen)
{
	struct supervisor	*sup;
	struct reviewer_opts	 ro;
	struct sockaddr_un	 sun;
	struct stat		 st;
	json_error_t		 jerr;
	mode_t			 old;
	int			 fd = -1, c;

	if ((sup = calloc(1, sizeof(*sup))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	sup->base = base;
	sup->logfd = -1;
	TAILQ_INIT(&sup->workers);
	TAILQ_INIT(&sup->clients);
	if (RAND_bytes(sup->ids.key, sizeof(sup->ids.key)) != 1) {
		snprintf(err, errlen, "no random bytes");
		goto fail;
	}
	if ((sup->capability = strdup(o->capability)) == NULL ||
	    (sup->path = strdup(o->socket_path)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (o->policy_file != NULL &&
	    (sup->policy_file = strdup(o->policy_file)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if ((sup->network = json_loads(o->network_json, 0, &jerr)) == NULL ||
	    !json_is_object(sup->network)) {
		snprintf(err, errlen, "bad network policy: %s", jerr.text);
		goto fail;
	}
	/*
	 * The registration reply is one frame: a policy that cannot fit
	 * would make every registration fail, so refuse it now.
	 */
	if (strlen(o->network_json) > REVIEW_FRAME_MAX - REPLY_OVERHEAD) {
		snprintf(err, errlen, "the network policy is %zu octets; a "
		    "registration reply holds at most %d", strlen(
		    o->network_json), REVIEW_FRAME_MAX - REPLY_OVERHEAD);
		goto fail;
	}
	/* The reviews run on this loop: no process per review. */
	memset(&ro, 0, sizeof(ro));
	ro.mode = o->review_argv != NULL ? REVIEW_COMMAND : o->review_tty ?
	    REVIEW_TTY : REVIEW_NONE;
	ro.argv = o->review_argv;
	ro.timeout_ms = o->review_timeout_ms;
	ro.max_inflight = REVIEWS_MAX;
	/*
	 * A person answering many workers: each question's clock runs from
	 * its arrival (the worker waits from then), and "s" allows for the
	 * supervisor's life.
	 */
	ro.tty_clock_at_start = o->interactive;
	ro.tty_session = o->interactive;
	if ((sup->rv = reviewer_new(base, &ro)) == NULL) {
		snprintf(err, errlen, "cannot set up the reviewer");
		goto fail;
	}
	if (o->access_log != NULL) {
		if (strcmp(o->access_log, "-") == 0) {
			if ((sup->logfd = dup(STDOUT_FILENO)) == -1) {
				snprintf(err, errlen, "standard output: %s",
				    strerror(errno));
				goto fail;
			}
		} else if ((sup->logfd = io_open_write(o->access_log,
		    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600, 0, err,
		    errlen)) == -1)
			goto fail;
	}

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(sup->path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", sup->path);
		goto fail;
	}
	memcpy(sun.sun_path, sup->path, strlen(sup->path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		goto fail;
	}
	/*
	 * A stale socket file (nobody accepts on it) is replaced; a live
	 * one means another supervisor owns the path.
	 */
	c = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0 ? 0 : errno;
	if (c == 0 || c == EAGAIN) {
		snprintf(err, errlen, "%s: another process is listening there",
		    sup->path);
		goto fail;
	}
	if (c == ECONNREFUSED && lstat(sup->path, &st) == 0 &&
	    S_ISSOCK(st.st_mode))
		unlink(sup->path);
	close(fd);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		goto fail;
	}
	/* Created 0600: only the agent host's user may talk to it. */
	old = umask(0077);
	c = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (c == -1) {
		snprintf(err, errlen, "bind %s: %s", sup->path,
		    strerror(errno));
		goto fail;
	}
	if (chmod(sup->path, 0600) == -1 || listen(fd, 64) == -1) {
		snprintf(err, errlen, "%s: %s", sup->path, strerror(errno));
		unlink(sup->path);
		goto fail;
	}
	if ((sup->lis = evconnlistener_new(base, accept_cb, sup,
	    LEV_OPT_CLOSE_ON_FREE, -1, fd)) == NULL) {
		snprintf(err, errlen, "cannot listen on %s", sup->path);
		unlink(sup->path);
		goto fail;
	}
	return sup;
fail:
	/* No listener yet, so supervisor_free leaves the path alone. */
	if (fd != -1)
		close(fd);
	supervisor_free(sup);
	return NULL;
}

void
supervisor_free(struct supervisor *sup)
{
	struct worker	*w;
	struct client	*c;

	if (sup == NULL)
		return;
	if (sup->lis != NULL) {
		evconnlistener_free(sup->lis);
		if (sup->path != NULL)
			unlink(sup->path);
	}
	while ((c = TAILQ_FIRST(&sup->clients)) != NULL)
		client_free(c);		/* cancels its review */
	reviewer_free(sup->rv);
	while ((w = TAILQ_FIRST(&sup->workers)) != NULL) {
		TAILQ_REMOVE(&sup->workers, w, entry);
		free(w->cwd);
		free(w);
	}
	free(sup->ids.v);
	free(sup->session);
	if (sup->capability != NULL) {
		OPENSSL_cleanse(sup->capability, strlen(sup->capability));
		free(sup->capability);
	}
	if (sup->logfd != -1)
		close(sup->logfd);
	json_decref(sup->network);
	free(sup->policy_file);
	free(sup->path);
	free(sup);
}

void
supervisor_dump(struct supervisor *sup, int fd)
{
	struct worker	*w;
	const char	*state;
	char		 ts[32];
	size_t		 running = 0;

	TAILQ_FOREACH(w, &sup->workers, entry)
		if (w->state == WORKER_RUNNING)
			running++;
	dprintf(fd, "pisbx-supervisor: %zu workers, %zu running\n",
	    sup->nworkers, running);
	dprintf(fd, "%-36s  %-7s  %-20s  %8s  %7s  %s\n", "WORKER", "STATE",
	    "STARTED", "REQUESTS", "PID", "CWD");
	TAILQ_FOREACH(w, &sup->workers, entry) {
		state = w->state == WORKER_EXITED ? "exited" : "running";
		/* A launcher killed outright never unregisters. */
		if (w->state == WORKER_RUNNING && w->pid > 0 &&
		    kill(w->pid, 0) == -1 && errno == ESRCH)
			state = "lost";
		time_rfc3339(ts, sizeof(ts), w->started, -1);
		dprintf(fd, "%-36s  %-7s  %-20s  %8lu  %7ld  %s\n", w->id,
		    state, ts, w->requests, (long)w->pid, w->cwd);
	}
}

static void
accept_cb(struct evconnlistener *lis, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct supervisor	*sup = arg;
	struct client		*c;
	struct ucred		 cred;
	struct timeval		 tv = { CLIENT_IDLE_SECS, 0 };
	socklen_t		 clen = sizeof(cred);

	(void)lis;
	(void)sa;
	(void)salen;
	if (sup->nclients >= CLIENTS_MAX && client_evict(sup) == -1) {
		log_warnx("%zu connections open, none idle; refusing another",
		    sup->nclients);
		close(fd);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		close(fd);
		return;
	}
	c->sup = sup;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0)
		c->pid = cred.pid;
	if ((c->bev = bufferevent_socket_new(sup->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(fd);
		free(c);
		return;
	}
	bufferevent_setwatermark(c->bev, EV_READ, 0, REVIEW_FRAME_MAX + 2);
	bufferevent_setcb(c->bev, client_read_cb, NULL, client_event_cb, c);
	bufferevent_set_timeouts(c->bev, &tv, &tv);
	bufferevent_enable(c->bev, EV_READ);
	TAILQ_INSERT_TAIL(&sup->clients, c, entry);
	sup->nclients++;
}

/*
 * All slots are taken: make room by closing the oldest connection that
 * has no request in hand -- no review running, no reply queued --
 * preferring one that has sent nothing at all (no byte read, none
 * waiting in its socket).  Otherwise a process of the same user holding
 * CLIENTS_MAX idle (or half-sent) connections would lock every worker
 * out for CLIENT_IDLE_SECS; a worker sends its whole request as soon as
 * it connects, so it is not the one closed.  0, or -1 when every
 * connection is busy.
 */
static int
client_evict(struct supervisor *sup)
{
	struct client	*c, *victim = NULL;
	int		 n;

	TAILQ_FOREACH(c, &sup->clients, entry) {
		if (c->closing || c->review != NULL)
			continue;
		if (evbuffer_get_length(bufferevent_get_input(c->bev)) == 0 &&
		    ioctl(bufferevent_getfd(c->bev), FIONREAD, &n) == 0 &&
		    n == 0) {
			victim = c;
			break;
		}
		if (victim == NULL)
			victim = c;
	}
	if (victim == NULL)
		return -1;
	log_debug("client (pid %ld): closed without a request, %d "
	    "connections being open", (long)victim->pid, CLIENTS_MAX);
	client_free(victim);
	return 0;
}

static void
client_read_cb(struct bufferevent *bev, void *arg)
{
	struct client		*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_ptr	 eol;
	size_t			 eollen;
	char			*line;

	/* One request per connection: anything after it is dropped. */
	if (c->closing || c->review != NULL) {
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	}
	eol = evbuffer_search_eol(in, NULL, &eollen, EVBUFFER_EOL_LF);
	if (eol.pos == -1 ? evbuffer_get_length(in) > REVIEW_FRAME_MAX :
	    (size_t)eol.pos > REVIEW_FRAME_MAX) {
		log_warnx("client (pid %ld): request frame over %d octets",
		    (long)c->pid, REVIEW_FRAME_MAX);
		sup_log(c->sup->logfd, NULL, "deny",
		    "request frame over 16384 octets");
		client_reply(c, NULL, "deny",
		    "request frame over 16384 octets", NULL);
		return;
	}
	if (eol.pos == -1)
		return;
	if ((line = malloc((size_t)eol.pos + 1)) == NULL) {
		client_free(c);
		return;
	}
	evbuffer_remove(in, line, (size_t)eol.pos);
	evbuffer_drain(in, eollen);
	line[eol.pos] = '\0';
	client_handle(c, line, (size_t)eol.pos);
	OPENSSL_cleanse(line, (size_t)eol.pos);
	free(line);
}

/* The reply is out: the connection is done. */
static void
client_write_cb(struct bufferevent *bev, void *arg)
{
	struct client	*c = arg;

	if (c->closing && evbuffer_get_length(bufferevent_get_output(bev))
	    == 0)
		client_free(c);
}

static void
client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct client	*c = arg;

	(void)bev;
	if ((what & BEV_EVENT_TIMEOUT) && !c->closing)
		log_debug("client (pid %ld) sent no request in time",
		    (long)c->pid);
	client_free(c);
}

/* Close a client; a review it was waiting for is cancelled. */
static void
client_free(struct client *c)
{
	if (c->review != NULL)
		review_cancel(c->review);
	TAILQ_REMOVE(&c->sup->clients, c, entry);
	c->sup->nclients--;
	bufferevent_free(c->bev);
	free(c->id);
	json_decref(c->req);
	free(c);
}

/* Queue one reply line and close the connection once it is written. */
static void
client_reply(struct client *c, const char *id, const char *action,
    const char *reason, json_t *extra)
{
	json_t	*o;
	char	*s = NULL;

	o = json_pack("{s:s}", "action", action);
	if (o != NULL && id != NULL)
		json_object_set_new(o, "id", json_string(id));
	if (o != NULL && reason != NULL)
		json_object_set_new(o, "reason", json_string(reason));
	if (o != NULL && extra != NULL)
		json_object_update(o, extra);
	if (o == NULL || (s = json_dumps(o, JSON_COMPACT)) == NULL) {
		json_decref(o);
		client_free(c);
		return;
	}
	c->closing = 1;
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_setcb(c->bev, NULL, client_write_cb, client_event_cb, c);
	if (bufferevent_write(c->bev, s, strlen(s)) == -1 ||
	    bufferevent_write(c->bev, "\n", 1) == -1) {
		free(s);
		json_decref(o);
		client_free(c);
		return;
	}
	bufferevent_enable(c->bev, EV_WRITE);
	free(s);
	json_decref(o);
}

/* One request line: check it, then register, unregister or review. */
static void
client_handle(struct client *c, const char *line, size_t len)
{
	struct supervisor		*sup = c->sup;
	struct supervisor_request	 r;
	struct worker			*w;
	json_t				*extra;
	char				 reason[256];

	if (supervisor_request_parse(line, len, sup->capability, &r, reason,
	    sizeof(reason)) == -1) {
		if (r.bad_capability) {
			log_warnx("refused a request with a %s capability "
			    "(pid %ld)", r.bad_capability == 1 ? "missing" :
			    "wrong", (long)c->pid);
		} else if (r.id == NULL)
			log_warnx("client (pid %ld): %s", (long)c->pid, reason);
		/* Every request gets its line, a malformed one too. */
		sup_log(sup->logfd, r.obj, "deny", reason);
		client_reply(c, r.id, "deny", reason, NULL);
		goto done;
	}
	/*
	 * A request line seen before (a replay: the capability is in it)
	 * is refused whatever it asks; an id is good for one request.
	 */
	switch (idset_add(&sup->ids, r.id)) {
	case 0:
		break;
	case 1:
		log_warnx("refused a replayed request id (pid %ld)",
		    (long)c->pid);
		client_reply(c, r.id, "deny", "replayed request id", NULL);
		sup_log(sup->logfd, r.obj, "deny", "replayed request id");
		goto done;
	default:
		log_warnx("request id table full (%d ids); restart "
		    "pisbx-supervisor to accept more requests", IDS_MAX);
		client_reply(c, r.id, "deny", "request id table full", NULL);
		sup_log(sup->logfd, r.obj, "deny", "request id table full");
		goto done;
	}
	if (r.kind == SUPREQ_PUSH) {
		client_push(c, &r);
		goto done;
	}
	w = worker_find(sup, r.worker_id);
	switch (r.kind) {
	case SUPREQ_REGISTER:
		if (w != NULL && w->state == WORKER_RUNNING) {
			client_reply(c, r.id, "deny", "workerId already "
			    "registered", NULL);
			sup_log(sup->logfd, r.obj, "deny", "duplicate");
			goto done;
		}
		if (worker_add(sup, r.worker_id, r.cwd, c->pid, &w) == -1) {
			client_reply(c, r.id, "deny", "too many workers", NULL);
			sup_log(sup->logfd, r.obj, "deny", "table full");
			goto done;
		}
		log_info("registered worker %s (pid %ld) in %s", r.worker_id,
		    (long)c->pid, r.cwd);
		/*
		 * policyFile: the file a person edits to change this
		 * policy, which pisbx-run's refusals name.
		 */
		extra = sup->policy_file != NULL ? json_pack("{s:O, s:s}",
		    "network", sup->network, "policyFile", sup->policy_file) :
		    json_pack("{s:O}", "network", sup->network);
		client_reply(c, r.id, "allow", NULL, extra);
		json_decref(extra);
		sup_log(sup->logfd, r.obj, "allow", "registered");
		goto done;
	default:
		break;
	}
	if (w == NULL || w->state != WORKER_RUNNING) {
		/*
		 * Not a decision about the request: the worker registered
		 * with another process (this one restarted) or is gone.
		 * "error" tells a client that can register again; to any
		 * other it is the deny it always was.
		 */
		extra = json_pack("{s:s}", "error", "unknown-worker");
		client_reply(c, r.id, "deny", "unknown worker", extra);
		json_decref(extra);
		sup_log(sup->logfd, r.obj, "deny", "unknown worker");
		goto done;
	}
	/*
	 * A worker is bound to the cwd it registered with: another one
	 * cannot retire it, nor show a reviewer another directory.
	 */
	if (strcmp(r.cwd, w->cwd) != 0) {
		log_warnx("worker %s: request for cwd %s, registered with %s "
		    "(pid %ld)", r.worker_id, r.cwd, w->cwd, (long)c->pid);
		client_reply(c, r.id, "deny", "cwd does not match the "
		    "registration", NULL);
		sup_log(sup->logfd, r.obj, "deny", "cwd mismatch");
		goto done;
	}
	if (r.kind == SUPREQ_UNREGISTER) {
		w->state = WORKER_EXITED;
		log_info("unregistered worker %s", r.worker_id);
		client_reply(c, r.id, "allow", NULL, NULL);
		sup_log(sup->logfd, r.obj, "allow", "unregistered");
		goto done;
	}
	w->requests++;
	if (r.kind == SUPREQ_NETWORK) {
		request_target(r.obj, &c->target);
		/*
		 * A host past an egress budget is a question of its own: an
		 * earlier session approval of the host does not answer it.
		 */
		if (json_object_get(r.obj, "budget") == NULL &&
		    session_covers(sup, &c->target)) {
			client_reply(c, r.id, "allow", "allowed at the "
			    "terminal earlier in this session", NULL);
			sup_log(sup->logfd, r.obj, "allow", "review:session");
			goto done;
		}
	}
	client_review(c, r.obj, r.id);
done:
	supervisor_request_clear(&r);
}

/*
 * A push: the network object, checked as a worker will check it, is the
 * policy of every registration from now on and is handed to each running
 * worker in turn (each on its own run socket, a few milliseconds).  The
 * reply says how many took it and why the others did not.
 */
static void
client_push(struct client *c, struct supervisor_request *r)
{
	struct supervisor	*sup = c->sup;
	struct config_errors	 errs = { NULL, 0 };
	struct policy		*pol;
	struct worker		*w;
	json_t			*net = json_object_get(r->obj, "network");
	char			*text, why[512], reason[1024];
	size_t			 ok = 0, bad = 0, off = 0;

	if ((text = json_dumps(net, JSON_COMPACT)) == NULL) {
		client_reply(c, r->id, "deny", "out of memory", NULL);
		return;
	}
	if ((pol = config_network_policy(text, strlen(text), "push",
	    &errs)) == NULL) {
		snprintf(reason, sizeof(reason), "invalid network policy: %s",
		    errs.n > 0 ? errs.msg[0] : "unknown error");
		config_errors_clear(&errs);
		client_reply(c, r->id, "deny", reason, NULL);
		sup_log(sup->logfd, r->obj, "deny", "invalid policy");
		free(text);
		return;
	}
	policy_free(pol);
	json_decref(sup->network);
	sup->network = json_incref(net);
	reason[0] = '\0';
	TAILQ_FOREACH(w, &sup->workers, entry) {
		if (w->state != WORKER_RUNNING || w->pid <= 0)
			continue;
		if (supervisor_push_worker(w->pid, sup->capability, text, why,
		    sizeof(why)) == 0) {
			ok++;
			log_info("worker %s: new policy applied", w->id);
			continue;
		}
		bad++;
		log_warnx("worker %s: new policy not applied: %s", w->id, why);
		if (off < sizeof(reason))
			off += (size_t)snprintf(reason + off, sizeof(reason) -
			    off, "%sworker %s: %s", off > 0 ? "; " : "", w->id,
			    why);
	}
	free(text);
	if (bad == 0)
		snprintf(reason, sizeof(reason), "applied by %zu running "
		    "worker%s; new registrations get it too", ok,
		    ok == 1 ? "" : "s");
	client_reply(c, r->id, bad == 0 ? "allow" : "deny", reason,
	    NULL);
	sup_log(sup->logfd, r->obj, bad == 0 ? "allow" : "deny", "push");
}

/*
 * Ask the reviewer (asynchronously, on this loop) and answer when it
 * does.  The connection stays open meanwhile, with no idle timeout (the
 * reviewer's own applies); a client that goes away cancels its review.
 */
static void
client_review(struct client *c, json_t *req, const char *id)
{
	struct supervisor	*sup = c->sup;
	enum review_result	 now;
	const char		*detail, *why;

	c->review = review_start_request(sup->rv, req, client_review_cb, c,
	    &now, &detail);
	if (c->review == NULL) {
		why = review_result_reason(now);
		client_reply(c, id, "deny", now == REVIEW_RESULT_ERROR &&
		    detail != NULL ? detail : why, NULL);
		sup_log(sup->logfd, req, "deny", why);
		return;
	}
	if ((c->id = strdup(id)) == NULL) {
		client_free(c);
		return;
	}
	c->req = json_incref(req);
	bufferevent_set_timeouts(c->bev, NULL, NULL);
}

static void
client_review_cb(enum review_result res, enum review_scope scope,
    const char *detail, void *arg)
{
	struct client	*c = arg;
	const char	*action = res == REVIEW_RESULT_ALLOW ? "allow" : "deny";
	json_t		*extra = NULL;

	c->review = NULL;
	sup_log(c->sup->logfd, c->req, action, review_result_reason(res));
	/*
	 * A wider approval is the worker's to keep (docs/review-protocol.md);
	 * one for the session is also the supervisor's, for every worker.
	 */
	if (res == REVIEW_RESULT_ALLOW && scope == REVIEW_SCOPE_SESSION) {
		request_target(c->req, &c->target);
		session_add(c->sup, &c->target);
		scope = REVIEW_SCOPE_WORKER;
	}
	if (res == REVIEW_RESULT_ALLOW && scope != REVIEW_SCOPE_ONCE)
		extra = json_pack("{s:s}", "scope", review_scope_name(scope));
	client_reply(c, c->id, action, detail != NULL && *detail != '\0' ?
	    detail : NULL, extra);
	json_decref(extra);
}

/* The target of a network request object (borrowed from it). */
static void
request_target(json_t *req, struct review_request *t)
{
	json_int_t	 port;

	port = json_integer_value(json_object_get(req, "port"));
	t->host = json_string_value(json_object_get(req, "hostname"));
	t->protocol = json_string_value(json_object_get(req, "protocol"));
	t->port = port > 0 && port <= 65535 ? (uint16_t)port : 0;
}

/* Whether "s" at the terminal already allowed this target. */
static int
session_covers(const struct supervisor *sup, const struct review_request *t)
{
	size_t	 i;

	for (i = 0; i < sup->nsession; i++)
		if (review_grant_covers(&sup->session[i], t))
			return 1;
	return 0;
}

/*
 * Remember a session approval; past SUPERVISOR_SESSION_MAX the target is
 * asked again next time, never allowed unasked.
 */
static void
session_add(struct supervisor *sup, const struct review_request *t)
{
	struct review_grant	*v;

	if (t->host == NULL || t->protocol == NULL ||
	    session_covers(sup, t))
		return;
	if (sup->nsession >= SUPERVISOR_SESSION_MAX) {
		log_warnx("%d session approvals kept; %s:%u will be asked "
		    "again", SUPERVISOR_SESSION_MAX, t->host, t->port);
		return;
	}
	if ((v = reallocarray(sup->session, sup->nsession + 1,
	    sizeof(*v))) == NULL)
		return;
	sup->session = v;
	review_grant_set(&v[sup->nsession], t);
	sup->nsession++;
	log_info("allowed %s:%u (%s) for this session", t->host, t->port,
	    t->protocol);
}

/* One access-log line for a request and what became of it. */
static void
sup_log(int fd, json_t *req, const char *decision, const char *reason)
{
	static const char *const keys[] = { "type", "workerId", "cwd",
	    "hostname", "port", "protocol", "operation", "command", "rule",
	    NULL };
	json_t		*o, *v;
	struct timespec	 ts;
	char		 buf[64];
	char		*s;
	size_t		 i;

	if (fd == -1)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	time_rfc3339(buf, sizeof(buf), ts.tv_sec, ts.tv_nsec / 1000000);
	if ((o = json_pack("{s:s, s:s, s:s}", "ts", buf, "decision", decision,
	    "reason", reason)) == NULL)
		return;
	for (i = 0; keys[i] != NULL; i++)
		if ((v = json_object_get(req, keys[i])) != NULL)
			json_object_set(o, keys[i], v);
	if ((s = json_dumps(o, JSON_COMPACT)) != NULL) {
		size_t	 n = strlen(s);

		/* One write per line, so a line is never split. */
		s[n] = '\n';
		(void)io_write_all(fd, s, n + 1, 0);
		free(s);
	}
	json_decref(o);
}
