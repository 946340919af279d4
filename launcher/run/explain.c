/*
 * The run's socket.  pisbx-run --explain HOST[:PORT] --run PID asks it
 * what a running pisbx-run decides for a target now -- the policy in force (after any
 * --control-fd line) and the approvals a reviewer or the person at the
 * terminal gave for the rest of that run ("run", "session").  The
 * running parent answers on a Unix socket next to its run directory,
 * "RUNDIR.sock" in the base directory that is the user's alone (0700)
 * and hidden in every sandbox, so no command can ask or answer.  One
 * question a connection: the target on one line, the answer one JSON
 * line (policy_explain's, plus "granted"), from the loop that decides
 * connections, so the answer is never older than the last decision.
 * A line that is a JSON object is a policy the supervisor pushes
 * (pisbx-supervisor --push), checked in supervise_push.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "common/log.h"
#include "common/runsock.h"
#include "common/secmem.h"
#include "policy/policy.h"
#include "approval/approval.h"
#include "proxy/proxy.h"
#include "launcher/launcher.h"
#include "launcher/run/run.h"

#define EXPLAIN_REQ_MAX		(REVIEW_FRAME_MAX + 2)	/* a line */
#define EXPLAIN_CLIENTS		8	/* questions answered at once */
#define EXPLAIN_TIMEOUT_S	2	/* to send the question */
#define EXPLAIN_GRANTS_MAX	4096

struct explain_srv {
	struct proxy	*px;
	struct supervise *sup;		/* a pushed policy's checks */
	const char	*config_path;	/* the trusted config, or NULL */
	struct event	*ev;
	int		 fd;
	int		 nclients;
	char		*path;
};

struct explain_client {
	struct explain_srv *srv;
	struct event	*ev;
	int		 fd;
	size_t		 len;
	char		 buf[EXPLAIN_REQ_MAX + 1];
};

static void	 explain_accept_cb(evutil_socket_t, short, void *);
static void	 explain_read_cb(evutil_socket_t, short, void *);
static void	 explain_answer(struct explain_client *);
static void	 explain_push(struct explain_client *);
static void	 explain_client_free(struct explain_client *);
static int	 explain_addr(struct sockaddr_un *, const char *);

/* path into a Unix address; -1 when it does not fit. */
static int
explain_addr(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path))
		return -1;
	memcpy(sun->sun_path, path, strlen(path) + 1);
	return 0;
}

/*
 * Answer questions about px at rundir + ".sock" on base.  NULL when the
 * socket cannot be made (the path is too long for sun_path, say): the
 * run goes on, --explain --run then finds no run.
 */
struct explain_srv *
explain_listen(struct event_base *base, const char *rundir, struct proxy *px,
    struct supervise *sup, const char *config_path)
{
	struct explain_srv	*es;
	struct sockaddr_un	 sun;

	if ((es = calloc(1, sizeof(*es))) == NULL)
		return NULL;
	es->px = px;
	es->sup = sup;
	es->config_path = config_path;
	es->fd = -1;
	if (asprintf(&es->path, "%s.sock", rundir) == -1) {
		es->path = NULL;
		goto fail;
	}
	if (explain_addr(&sun, es->path) == -1) {
		errno = ENAMETOOLONG;
		goto fail;
	}
	if ((es->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1 || bind(es->fd, (struct sockaddr *)&sun,
	    sizeof(sun)) == -1 || listen(es->fd, EXPLAIN_CLIENTS) == -1)
		goto fail;
	es->ev = event_new(base, es->fd, EV_READ | EV_PERSIST,
	    explain_accept_cb, es);
	if (es->ev == NULL || event_add(es->ev, NULL) == -1)
		goto fail;
	return es;
fail:
	log_debug("--explain --run: no socket at %s: %s", es->path != NULL ?
	    es->path : rundir, strerror(errno));
	explain_free(es);
	return NULL;
}

/* Stop answering; the socket file goes. */
void
explain_free(struct explain_srv *es)
{
	if (es == NULL)
		return;
	if (es->ev != NULL)
		event_free(es->ev);
	if (es->fd != -1) {
		close(es->fd);
		if (es->path != NULL)
			(void)unlink(es->path);
	}
	free(es->path);
	free(es);
}

/* A question: only from our own user, at most EXPLAIN_CLIENTS at once. */
static void
explain_accept_cb(evutil_socket_t fd, short what, void *arg)
{
	struct explain_srv	*es = arg;
	struct explain_client	*ec;
	struct ucred		 cr;
	socklen_t		 crlen = sizeof(cr);
	struct timeval		 tv = { EXPLAIN_TIMEOUT_S, 0 };
	int			 s;

	(void)what;
	if ((s = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1)
		return;
	if (es->nclients >= EXPLAIN_CLIENTS || getsockopt(s, SOL_SOCKET,
	    SO_PEERCRED, &cr, &crlen) == -1 || cr.uid != getuid() ||
	    (ec = calloc(1, sizeof(*ec))) == NULL) {
		close(s);
		return;
	}
	ec->srv = es;
	ec->fd = s;
	ec->ev = event_new(event_get_base(es->ev), s, EV_READ | EV_PERSIST,
	    explain_read_cb, ec);
	if (ec->ev == NULL || event_add(ec->ev, &tv) == -1) {
		explain_client_free(ec);
		return;
	}
	es->nclients++;
}

static void
explain_client_free(struct explain_client *ec)
{
	if (ec->ev != NULL)
		event_free(ec->ev);
	close(ec->fd);
	free(ec);
}

/* The question, up to its newline (or EOF); a timeout ends it unasked. */
static void
explain_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct explain_client	*ec = arg;
	ssize_t			 r;

	if (what & EV_TIMEOUT)
		goto done;
	r = recv(fd, ec->buf + ec->len, EXPLAIN_REQ_MAX - ec->len, 0);
	if (r == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	if (r > 0) {
		ec->len += (size_t)r;
		if (memchr(ec->buf, '\n', ec->len) == NULL &&
		    ec->len < EXPLAIN_REQ_MAX)
			return;
	}
	if (r >= 0 && ec->buf[0] == '{')
		explain_push(ec);
	else if (r >= 0)
		explain_answer(ec);
done:
	ec->srv->nclients--;
	explain_client_free(ec);
}

/*
 * One answer: policy_explain under the config in force, and, for a
 * valid target, "granted": the approvals for it that outlive one
 * connection (each protocol the proxy allows without asking again, and
 * the scope it was given with).
 */
static void
explain_answer(struct explain_client *ec)
{
	char		 grants[EXPLAIN_GRANTS_MAX], *nl, *ans, *out = NULL;
	const char	*err;
	struct host	 h;
	uint16_t	 port;
	size_t		 alen;
	int		 n = 0;

	ec->buf[ec->len] = '\0';
	if ((nl = memchr(ec->buf, '\n', ec->len)) != NULL)
		*nl = '\0';
	if ((nl = strchr(ec->buf, '\r')) != NULL)
		*nl = '\0';
	if ((ans = policy_explain(proxy_config(ec->srv->px), ec->buf)) ==
	    NULL)
		return;
	if (target_parse(ec->buf, strlen(ec->buf), 443, &h, &port,
	    &err) == 0)
		n = proxy_grants_json(ec->srv->px, h.text, port, grants,
		    sizeof(grants));
	alen = strlen(ans);
	if (n > 0 && alen > 0 && ans[alen - 1] == '}') {
		if (asprintf(&out, "%.*s,\"granted\":[%s]}", (int)(alen - 1),
		    ans, grants) == -1)
			out = NULL;
		free(ans);
	} else
		out = ans;
	if (out == NULL)
		return;
	(void)send(ec->fd, out, strlen(out), MSG_DONTWAIT | MSG_NOSIGNAL);
	(void)send(ec->fd, "\n", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	free(out);
}

/*
 * A policy the supervisor pushed (a JSON object line): applied or
 * refused by supervise_push, answered {"action":"allow"} or
 * {"action":"deny","reason":...}, and said on our stderr when refused.
 */
static void
explain_push(struct explain_client *ec)
{
	char	 err[512], *out;
	json_t	*o;
	char	*nl;

	ec->buf[ec->len] = '\0';
	if ((nl = memchr(ec->buf, '\n', ec->len)) != NULL)
		*nl = '\0';
	if (supervise_push(ec->srv->sup, ec->srv->config_path, ec->srv->px,
	    ec->buf, strlen(ec->buf), err, sizeof(err)) == 0) {
		log_info("supervisor: a new network policy applied");
		o = json_pack("{s:s}", "action", "allow");
	} else {
		log_warnx("supervisor: a pushed policy refused: %s; the "
		    "policy in force is unchanged", err);
		o = json_pack("{s:s,s:s}", "action", "deny", "reason", err);
	}
	secmem_wipe(ec->buf, ec->len);
	if (o == NULL || (out = json_dumps(o, JSON_COMPACT)) == NULL) {
		json_decref(o);
		return;
	}
	(void)send(ec->fd, out, strlen(out), MSG_DONTWAIT | MSG_NOSIGNAL);
	(void)send(ec->fd, "\n", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	free(out);
	json_decref(o);
}

/*
 * The client: ask the pisbx-run with pid (ours, on this machine) about
 * target and print its answer.  0 answered, 1 no such run or no answer
 * (said on stderr).
 */
int
explain_running(const char *pidtext, const char *target)
{
	char	 buf[65536], err[512];
	char	*end;
	long	 pid;
	int	 none;

	errno = 0;
	pid = strtol(pidtext, &end, 10);
	if (pidtext[0] < '0' || pidtext[0] > '9' || *end != '\0' ||
	    errno != 0 || pid <= 0) {
		log_warnx("--run: a process id, not %s", pidtext);
		return EXIT_USAGE;
	}
	if (strchr(target, '\n') != NULL || target[0] == '{') {
		log_warnx("--explain: not a target: %s", target);
		return EXIT_USAGE;
	}
	if (runsock_ask(pid, target, buf, sizeof(buf), &none, err,
	    sizeof(err)) == -1) {
		if (none)
			log_warnx("--run %ld: no pisbx-run of yours with that "
			    "pid is running here (its socket is looked for "
			    "next to its run directory, under $TMPDIR or "
			    "/tmp)", pid);
		else
			log_warnx("--run %ld: %s", pid, err);
		return 1;
	}
	fputs(buf, stdout);
	return 0;
}
