/*
 * pisbx-supervisor's server: JSON lines on a Unix stream socket (mode
 * 0600), one request per connection, each answered by one reply line and
 * the connection closed.  Registration hands out the trusted config's
 * network policy; network and host-IPC reviews are answered by a review
 * command or the person at the TTY in a child process, so a slow reviewer
 * holds up nobody else; the worker table records who registered.
 *
 * Every request must carry the capability (compared in constant time);
 * frames over 16 KiB, malformed JSON and unknown types are refused with a
 * deny, and a misbehaving client only ever loses its own connection.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

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

#include "common/io.h"
#include "common/log.h"
#include "common/time.h"
#include "policy/policy.h"
#include "approval/approval.h"
#include "approval/supclient.h"
#include "supervisor/supervisor.h"

#define CLIENTS_MAX		256	/* connections open at once */
#define REVIEWERS_MAX		64	/* reviewer processes at once */
#define CLIENT_IDLE_SECS	30	/* to send one request line */
#define WORKER_ID_MAX		64
#define ID_MAX			128
#define CWD_MAX			4096
/* A registration reply without its policy fits in this. */
#define REPLY_OVERHEAD		(ID_MAX + 64)

enum worker_state {
	WORKER_RUNNING,
	WORKER_EXITED
};

struct worker {
	TAILQ_ENTRY(worker)	 entry;
	char			 id[WORKER_ID_MAX + 1];
	char			*cwd;
	enum worker_state	 state;
	time_t			 started;
	unsigned long		 requests;
	pid_t			 pid;		/* SO_PEERCRED */
};

struct client {
	TAILQ_ENTRY(client)	 entry;
	struct supervisor	*sup;
	struct bufferevent	*bev;
	pid_t			 pid;
	int			 closing;	/* reply queued */
};

TAILQ_HEAD(workerq, worker);
TAILQ_HEAD(clientq, client);

struct supervisor {
	struct event_base	*base;
	struct evconnlistener	*lis;
	char			*path;
	char			*capability;
	json_t			*network;
	char			**argv;		/* or NULL */
	int			 tty;
	int			 timeout_ms;
	int			 logfd;		/* access log or -1 */
	struct workerq		 workers;
	size_t			 nworkers;
	struct clientq		 clients;
	size_t			 nclients;
	int			 reviewers;	/* children running */
};

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
static struct worker *worker_find(struct supervisor *, const char *);
static int	 worker_add(struct supervisor *, const char *, const char *,
		    pid_t, struct worker **);
static int	 text_ok(const char *, size_t, size_t);
static int	 worker_id_ok(const char *);
static void	 sup_log(int fd, json_t *req, const char *decision,
		    const char *reason);
static void	 closefrom_except(int, int);

struct supervisor *
supervisor_new(struct event_base *base, const struct supervisor_opts *o,
    char *err, size_t errlen)
{
	struct supervisor	*sup;
	struct sockaddr_un	 sun;
	struct stat		 st;
	json_error_t		 jerr;
	mode_t			 old;
	size_t			 i, n;
	int			 fd = -1, c;

	if ((sup = calloc(1, sizeof(*sup))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	sup->base = base;
	sup->logfd = -1;
	TAILQ_INIT(&sup->workers);
	TAILQ_INIT(&sup->clients);
	sup->tty = o->review_tty;
	sup->timeout_ms = o->review_timeout_ms > 0 ? o->review_timeout_ms :
	    30000;
	if ((sup->capability = strdup(o->capability)) == NULL ||
	    (sup->path = strdup(o->socket_path)) == NULL) {
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
	if (o->review_argv != NULL) {
		for (n = 0; o->review_argv[n] != NULL; n++)
			;
		if ((sup->argv = calloc(n + 1, sizeof(char *))) == NULL) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		for (i = 0; i < n; i++)
			if ((sup->argv[i] = strdup(o->review_argv[i])) ==
			    NULL) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
	}
	if (o->access_log != NULL) {
		if (strcmp(o->access_log, "-") == 0)
			sup->logfd = dup(STDOUT_FILENO);
		else
			sup->logfd = open(o->access_log, O_WRONLY | O_CREAT |
			    O_APPEND | O_CLOEXEC, 0600);
		if (sup->logfd == -1) {
			snprintf(err, errlen, "%s: %s", o->access_log,
			    strerror(errno));
			goto fail;
		}
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
	char		**a;

	if (sup == NULL)
		return;
	if (sup->lis != NULL) {
		evconnlistener_free(sup->lis);
		if (sup->path != NULL)
			unlink(sup->path);
	}
	while ((c = TAILQ_FIRST(&sup->clients)) != NULL)
		client_free(c);
	while ((w = TAILQ_FIRST(&sup->workers)) != NULL) {
		TAILQ_REMOVE(&sup->workers, w, entry);
		free(w->cwd);
		free(w);
	}
	if (sup->argv != NULL) {
		for (a = sup->argv; *a != NULL; a++)
			free(*a);
		free(sup->argv);
	}
	if (sup->capability != NULL) {
		OPENSSL_cleanse(sup->capability, strlen(sup->capability));
		free(sup->capability);
	}
	if (sup->logfd != -1)
		close(sup->logfd);
	json_decref(sup->network);
	free(sup->path);
	free(sup);
}

void
supervisor_reap(struct supervisor *sup)
{
	int	 status;

	while (waitpid(-1, &status, WNOHANG) > 0)
		if (sup->reviewers > 0)
			sup->reviewers--;
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
	if (sup->nclients >= CLIENTS_MAX) {
		log_warnx("%zu connections open; refusing another",
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

static void
client_read_cb(struct bufferevent *bev, void *arg)
{
	struct client		*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_ptr	 eol;
	size_t			 eollen;
	char			*line;

	if (c->closing)
		return;
	eol = evbuffer_search_eol(in, NULL, &eollen, EVBUFFER_EOL_LF);
	if (eol.pos == -1 ? evbuffer_get_length(in) > REVIEW_FRAME_MAX :
	    (size_t)eol.pos > REVIEW_FRAME_MAX) {
		log_warnx("client (pid %ld): request frame over %d octets",
		    (long)c->pid, REVIEW_FRAME_MAX);
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

static void
client_free(struct client *c)
{
	TAILQ_REMOVE(&c->sup->clients, c, entry);
	c->sup->nclients--;
	bufferevent_free(c->bev);
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

int
supervisor_request_parse(const char *line, size_t len, const char *capability,
    struct supervisor_request *r, char *reason, size_t reasonlen)
{
	json_t		*o, *v;
	json_error_t	 jerr;
	const char	*s;
	json_int_t	 port;

	memset(r, 0, sizeof(*r));
	reason[0] = '\0';
	if (len > REVIEW_FRAME_MAX) {
		snprintf(reason, reasonlen, "request frame over %d octets",
		    REVIEW_FRAME_MAX);
		return -1;
	}
	if ((o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL || !json_is_object(o)) {
		snprintf(reason, reasonlen, "request is not a JSON object%s%s",
		    o == NULL ? ": " : "", o == NULL ? jerr.text : "");
		json_decref(o);
		return -1;
	}
	r->obj = o;
	v = json_object_get(o, "id");
	if ((s = json_string_value(v)) == NULL ||
	    !text_ok(s, json_string_length(v), ID_MAX)) {
		snprintf(reason, reasonlen, "request has no usable id");
		return -1;
	}
	r->id = s;
	v = json_object_get(o, "version");
	if (!json_is_integer(v) || json_integer_value(v) != 1) {
		snprintf(reason, reasonlen, "unsupported protocol version");
		return -1;
	}
	v = json_object_get(o, "capability");
	if (!json_is_string(v) || !supervisor_capability_ok(capability,
	    json_string_value(v), json_string_length(v))) {
		r->bad_capability = v == NULL ? 1 : 2;
		snprintf(reason, reasonlen, "bad capability");
		return -1;
	}
	/* Nothing downstream (reviewers, logs) ever sees it. */
	json_object_del(o, "capability");

	if ((r->type = json_string_value(json_object_get(o, "type"))) ==
	    NULL) {
		snprintf(reason, reasonlen, "request has no type");
		return -1;
	}
	r->worker_id = json_string_value(json_object_get(o, "workerId"));
	if (r->worker_id == NULL || !worker_id_ok(r->worker_id)) {
		snprintf(reason, reasonlen, "request has no usable workerId");
		return -1;
	}
	r->cwd = json_string_value(json_object_get(o, "cwd"));
	if (r->cwd == NULL || r->cwd[0] != '/' || !text_ok(r->cwd,
	    strlen(r->cwd), CWD_MAX)) {
		snprintf(reason, reasonlen, "request has no absolute cwd");
		return -1;
	}
	if (strcmp(r->type, "register") == 0)
		r->kind = SUPREQ_REGISTER;
	else if (strcmp(r->type, "unregister") == 0)
		r->kind = SUPREQ_UNREGISTER;
	else if (strcmp(r->type, "network") == 0) {
		r->kind = SUPREQ_NETWORK;
		v = json_object_get(o, "port");
		port = json_is_integer(v) ? json_integer_value(v) : 0;
		s = json_string_value(json_object_get(o, "hostname"));
		if (s == NULL || !text_ok(s, strlen(s), HOST_TEXT_MAX) ||
		    port < 1 || port > 65535 ||
		    !json_is_string(json_object_get(o, "protocol"))) {
			snprintf(reason, reasonlen,
			    "malformed network request");
			return -1;
		}
	} else if (strcmp(r->type, "host-ipc") == 0) {
		r->kind = SUPREQ_HOSTIPC;
		s = json_string_value(json_object_get(o, "operation"));
		if (s == NULL || strcmp(s, "execute-host") != 0 ||
		    !json_is_string(json_object_get(o, "command")) ||
		    !json_is_string(json_object_get(o, "rule"))) {
			snprintf(reason, reasonlen,
			    "malformed host-ipc request");
			return -1;
		}
	} else {
		snprintf(reason, reasonlen, "unknown request type");
		return -1;
	}
	return 0;
}

void
supervisor_request_clear(struct supervisor_request *r)
{
	json_decref(r->obj);
	memset(r, 0, sizeof(*r));
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
			sup_log(sup->logfd, r.obj, "deny", reason);
		} else if (r.id == NULL)
			log_warnx("client (pid %ld): %s", (long)c->pid, reason);
		client_reply(c, r.id, "deny", reason, NULL);
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
		extra = json_pack("{s:O}", "network", sup->network);
		client_reply(c, r.id, "allow", NULL, extra);
		json_decref(extra);
		sup_log(sup->logfd, r.obj, "allow", "registered");
		goto done;
	default:
		break;
	}
	if (w == NULL || w->state != WORKER_RUNNING) {
		client_reply(c, r.id, "deny", "unknown worker", NULL);
		sup_log(sup->logfd, r.obj, "deny", "unknown worker");
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
	client_review(c, r.obj, r.id);
done:
	supervisor_request_clear(&r);
}

/*
 * Answer a review in a child process: it asks the reviewer, writes the
 * reply on the client's connection and exits.  The parent drops its copy
 * of the connection at once.
 */
static void
client_review(struct client *c, json_t *req, const char *id)
{
	struct supervisor	*sup = c->sup;
	enum review_result	 res;
	json_t			*o;
	char			 reason[512];
	char			*s;
	pid_t			 pid;
	size_t			 len;
	int			 fd, fl;

	if (sup->argv == NULL && !sup->tty) {
		client_reply(c, id, "deny", "no-reviewer", NULL);
		sup_log(sup->logfd, req, "deny", "no-reviewer");
		return;
	}
	if (sup->reviewers >= REVIEWERS_MAX) {
		client_reply(c, id, "deny", "review:busy", NULL);
		sup_log(sup->logfd, req, "deny", "review:busy");
		return;
	}
	fd = bufferevent_getfd(c->bev);
	if ((pid = fork()) == -1) {
		log_warn("fork");
		client_reply(c, id, "deny", "review:error", NULL);
		return;
	}
	if (pid == 0) {
		signal(SIGCHLD, SIG_DFL);
		signal(SIGUSR1, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_IGN);
		closefrom_except(fd, sup->logfd);
		res = review_ask_local(sup->argv, sup->timeout_ms, req, reason,
		    sizeof(reason));
		o = json_pack("{s:s, s:s}", "id", id, "action",
		    res == REVIEW_RESULT_ALLOW ? "allow" : "deny");
		if (o != NULL && reason[0] != '\0')
			json_object_set_new(o, "reason", json_string(reason));
		if (o != NULL && (s = json_dumps(o, JSON_COMPACT)) != NULL) {
			len = strlen(s);
			if ((fl = fcntl(fd, F_GETFL)) != -1)
				fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
			if (io_write_all(fd, s, len, 0) == 0)
				(void)io_write_all(fd, "\n", 1, 0);
		}
		sup_log(sup->logfd, req, res == REVIEW_RESULT_ALLOW ?
		    "allow" : "deny", review_result_reason(res));
		_exit(0);
	}
	sup->reviewers++;
	client_free(c);
}

static struct worker *
worker_find(struct supervisor *sup, const char *id)
{
	struct worker	*w;

	TAILQ_FOREACH(w, &sup->workers, entry)
		if (strcmp(w->id, id) == 0)
			return w;
	return NULL;
}

/* A new running entry; the oldest exited one makes room when full. */
static int
worker_add(struct supervisor *sup, const char *id, const char *cwd,
    pid_t pid, struct worker **out)
{
	struct worker	*w;

	if ((w = worker_find(sup, id)) != NULL) {
		TAILQ_REMOVE(&sup->workers, w, entry);
		sup->nworkers--;
		free(w->cwd);
		free(w);
	}
	if (sup->nworkers >= SUPERVISOR_WORKERS_MAX) {
		TAILQ_FOREACH(w, &sup->workers, entry)
			if (w->state == WORKER_EXITED)
				break;
		if (w == NULL)
			return -1;
		TAILQ_REMOVE(&sup->workers, w, entry);
		sup->nworkers--;
		free(w->cwd);
		free(w);
	}
	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    (w->cwd = strdup(cwd)) == NULL) {
		free(w);
		return -1;
	}
	snprintf(w->id, sizeof(w->id), "%s", id);
	w->state = WORKER_RUNNING;
	w->started = time(NULL);
	w->pid = pid;
	TAILQ_INSERT_TAIL(&sup->workers, w, entry);
	sup->nworkers++;
	*out = w;
	return 0;
}

/* Non-empty, at most max octets, no NUL and no control characters. */
static int
text_ok(const char *s, size_t len, size_t max)
{
	size_t	 i;

	if (len == 0 || len > max || strlen(s) != len)
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

/* Worker ids are short tokens: letters, digits, '-', '_', '.'. */
static int
worker_id_ok(const char *s)
{
	size_t	 n = strlen(s);

	if (n == 0 || n > WORKER_ID_MAX)
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789-_.") == n;
}

int
supervisor_capability_ok(const char *expected, const char *presented,
    size_t presented_len)
{
	unsigned char	 a[EVP_MAX_MD_SIZE], b[EVP_MAX_MD_SIZE];
	unsigned int	 alen = 0, blen = 0;
	int		 ok;

	/*
	 * Comparing digests keeps the time independent of where the strings
	 * differ and of the presented length.
	 */
	if (expected == NULL || presented == NULL)
		return 0;
	if (EVP_Digest(expected, strlen(expected), a, &alen, EVP_sha256(),
	    NULL) != 1 || EVP_Digest(presented, presented_len, b, &blen,
	    EVP_sha256(), NULL) != 1 || alen != blen)
		return 0;
	ok = CRYPTO_memcmp(a, b, alen) == 0;
	return ok && *expected != '\0';
}

char *
supervisor_network_json(const char *text, size_t len)
{
	json_t		*root, *net, *out = NULL, *v;
	json_error_t	 jerr;
	char		*s = NULL;

	if ((root = json_loadb(text, len, 0, &jerr)) == NULL)
		return NULL;
	net = json_object_get(root, "network");
	if ((out = json_object()) == NULL)
		goto done;
	v = net != NULL ? json_object_get(net, "allowedDomains") : NULL;
	json_object_set_new(out, "allowedDomains", v != NULL ?
	    json_deep_copy(v) : json_array());
	v = net != NULL ? json_object_get(net, "deniedDomains") : NULL;
	json_object_set_new(out, "deniedDomains", v != NULL ?
	    json_deep_copy(v) : json_array());
	s = json_dumps(out, JSON_COMPACT);
done:
	json_decref(out);
	json_decref(root);
	return s;
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

		/* One write, so lines from reviewers never mix. */
		s[n] = '\n';
		(void)io_write_all(fd, s, n + 1, 0);
		free(s);
	}
	json_decref(o);
}

/* Close every fd from 3 up except a and b (-1 for none). */
static void
closefrom_except(int a, int b)
{
	int	 lo, hi;

	lo = a < b ? a : b;
	hi = a < b ? b : a;
	if (lo < 3)
		lo = hi;
	if (hi < 3) {
		close_range(3, ~0U, 0);
		return;
	}
	if (lo > 3)
		close_range(3, (unsigned)lo - 1, 0);
	if (hi > lo + 1)
		close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
	close_range((unsigned)hi + 1, ~0U, 0);
}
