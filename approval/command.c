/*
 * The command transport: one reviewer process per request.
 *
 * The request line is written into the stdin pipe before the process
 * exists (it always fits in an empty pipe), so the proxy never blocks on
 * a reviewer that does not read and never takes SIGPIPE from one that
 * exits early.  The process gets a clean environment, fds 0-2 only, its
 * own process group (so a timeout kills its children too) and default
 * signal dispositions.  Exit is watched through a pidfd on the event
 * loop: no SIGCHLD handler, and no waitpid(-1) that could steal another
 * part of the program's children.  Every process is reaped; a review
 * that ends early (timeout, cancel, oversized reply) leaves the killed
 * process on r->children until its pidfd fires.
 */
#include <sys/types.h>
#include <sys/pidfd.h>
#include <sys/queue.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "common/text.h"
#include "policy/policy.h"
#include "approval/approval_int.h"

#define ERR_LINE_MAX	512	/* stderr: longer lines are cut */
#define ERR_LINES_MAX	64	/* stderr: lines logged per process */

struct child {
	TAILQ_ENTRY(child)	 entry;
	struct reviewer		*r;
	struct review		*rv;		/* NULL once answered */
	pid_t			 pid;
	int			 pidfd;
	int			 outfd;
	int			 errfd;
	struct event		*ev_exit;
	struct event		*ev_out;
	struct event		*ev_err;
	char			 out[REVIEW_FRAME_MAX + 2];
	size_t			 outlen;
	char			 errline[ERR_LINE_MAX];
	size_t			 errlen;
	int			 errlines;
};

static int	 command_fd_high(int *);
static void	 command_exit_cb(evutil_socket_t, short, void *);
static void	 command_out_cb(evutil_socket_t, short, void *);
static void	 command_err_cb(evutil_socket_t, short, void *);
static int	 command_read_out(struct child *);
static void	 command_read_err(struct child *);
static void	 command_err_flush(struct child *);
static void	 command_decide(struct child *, const siginfo_t *);
static void	 command_kill(struct child *);
static void	 command_free(struct child *);

static char command_env_path[] = "PATH=/usr/bin:/bin";
static char command_env_lang[] = "LANG=C";
static char command_env_review[] = "PISBX_REVIEW=1";
static char *const command_env[] = {
	command_env_path,
	command_env_lang,
	command_env_review,
	NULL
};

int
command_start(struct review *rv, char *err, size_t errlen)
{
	struct reviewer			*r = rv->r;
	struct child			*c = NULL;
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 attr;
	sigset_t			 none, all;
	int				 in[2] = { -1, -1 };
	int				 out[2] = { -1, -1 };
	int				 errp[2] = { -1, -1 };
	int				 fa_ok = 0, attr_ok = 0, e;
	char				*line = NULL;
	size_t				 len;
	ssize_t				 n;

	if (r->argv == NULL || r->argv[0] == NULL) {
		snprintf(err, errlen, "no review command");
		return -1;
	}
	if ((line = review_request_line(rv, 0, &len)) == NULL) {
		snprintf(err, errlen, "cannot build the request");
		return -1;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	c->pid = -1;
	c->pidfd = c->outfd = c->errfd = -1;

	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1 ||
	    pipe2(errp, O_CLOEXEC) == -1 || command_fd_high(&in[0]) == -1 ||
	    command_fd_high(&in[1]) == -1 || command_fd_high(&out[0]) == -1 ||
	    command_fd_high(&out[1]) == -1 ||
	    command_fd_high(&errp[0]) == -1 ||
	    command_fd_high(&errp[1]) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	if (fcntl(in[1], F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(out[0], F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(errp[0], F_SETFL, O_NONBLOCK) == -1) {
		snprintf(err, errlen, "fcntl: %s", strerror(errno));
		goto fail;
	}
	n = write(in[1], line, len);
	if (n == -1 || (size_t)n != len) {
		snprintf(err, errlen, "cannot queue the request on stdin");
		goto fail;
	}
	close(in[1]);
	in[1] = -1;

	if ((e = posix_spawn_file_actions_init(&fa)) != 0)
		goto spawn_fail;
	fa_ok = 1;
	if ((e = posix_spawn_file_actions_adddup2(&fa, in[0], 0)) != 0 ||
	    (e = posix_spawn_file_actions_adddup2(&fa, out[1], 1)) != 0 ||
	    (e = posix_spawn_file_actions_adddup2(&fa, errp[1], 2)) != 0 ||
	    (e = posix_spawn_file_actions_addclosefrom_np(&fa, 3)) != 0)
		goto spawn_fail;
	if ((e = posix_spawnattr_init(&attr)) != 0)
		goto spawn_fail;
	attr_ok = 1;
	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	if ((e = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) != 0 ||
	    (e = posix_spawnattr_setpgroup(&attr, 0)) != 0 ||
	    (e = posix_spawnattr_setsigmask(&attr, &none)) != 0 ||
	    (e = posix_spawnattr_setsigdefault(&attr, &all)) != 0)
		goto spawn_fail;
	/*
	 * glibc reports a failed exec (missing program, not executable)
	 * here and reaps that child itself.
	 */
	if ((e = posix_spawn(&c->pid, r->argv[0], &fa, &attr, r->argv,
	    command_env)) != 0) {
		c->pid = -1;
		snprintf(err, errlen, "cannot run %s: %s", r->argv[0],
		    strerror(e));
		goto fail;
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	fa_ok = attr_ok = 0;
	close(in[0]);
	close(out[1]);
	close(errp[1]);
	in[0] = out[1] = errp[1] = -1;
	c->outfd = out[0];
	c->errfd = errp[0];
	out[0] = errp[0] = -1;
	c->r = r;
	c->rv = rv;

	if ((c->pidfd = pidfd_open(c->pid, 0)) == -1) {
		snprintf(err, errlen, "pidfd_open: %s", strerror(errno));
		goto fail;
	}
	if ((c->ev_exit = event_new(r->base, c->pidfd, EV_READ | EV_PERSIST,
	    command_exit_cb, c)) == NULL ||
	    (c->ev_out = event_new(r->base, c->outfd, EV_READ | EV_PERSIST,
	    command_out_cb, c)) == NULL ||
	    (c->ev_err = event_new(r->base, c->errfd, EV_READ | EV_PERSIST,
	    command_err_cb, c)) == NULL ||
	    event_add(c->ev_exit, NULL) == -1 ||
	    event_add(c->ev_out, NULL) == -1 ||
	    event_add(c->ev_err, NULL) == -1) {
		snprintf(err, errlen, "cannot watch the reviewer process");
		goto fail;
	}
	TAILQ_INSERT_TAIL(&r->children, c, entry);
	rv->child = c;
	if (rv->host != NULL)
		log_debug("reviewer[%d]: started for %s:%u", (int)c->pid,
		    rv->host, rv->port);
	else
		log_debug("reviewer[%d]: started for a request object",
		    (int)c->pid);
	free(line);
	return 0;

spawn_fail:
	snprintf(err, errlen, "posix_spawn setup: %s", strerror(e));
fail:
	if (fa_ok)
		posix_spawn_file_actions_destroy(&fa);
	if (attr_ok)
		posix_spawnattr_destroy(&attr);
	if (in[0] != -1)
		close(in[0]);
	if (in[1] != -1)
		close(in[1]);
	if (out[1] != -1)
		close(out[1]);
	if (errp[1] != -1)
		close(errp[1]);
	if (out[0] != -1)
		close(out[0]);
	if (errp[0] != -1)
		close(errp[0]);
	if (c != NULL) {
		if (c->pid != -1) {
			/* Started but cannot be watched: end it now. */
			kill(-c->pid, SIGKILL);
			while (waitpid(c->pid, NULL, 0) == -1 && errno == EINTR)
				;
		}
		c->pid = -1;
		c->rv = NULL;
		command_free(c);
	}
	free(line);
	return -1;
}

void
command_abort(struct review *rv)
{
	struct child	*c = rv->child;

	if (c == NULL)
		return;
	rv->child = NULL;
	c->rv = NULL;
	command_kill(c);
}

void
command_reap_all(struct reviewer *r)
{
	struct child	*c;

	while ((c = TAILQ_FIRST(&r->children)) != NULL) {
		command_kill(c);
		while (waitpid(c->pid, NULL, 0) == -1 && errno == EINTR)
			;
		c->pid = -1;
		TAILQ_REMOVE(&r->children, c, entry);
		c->r = NULL;
		command_free(c);
	}
}

/* Move a pipe end above the standard fds so the dup2s cannot collide. */
static int
command_fd_high(int *fd)
{
	int	 nfd;

	if (*fd > 2)
		return 0;
	if ((nfd = fcntl(*fd, F_DUPFD_CLOEXEC, 3)) == -1)
		return -1;
	close(*fd);
	*fd = nfd;
	return 0;
}

/*
 * The process ended (the pidfd is readable): kill what it left behind in
 * its group while the group id is still held by the zombie, reap it,
 * take the rest of its output and answer.
 */
static void
command_exit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct child	*c = arg;
	siginfo_t	 si;

	(void)fd;
	(void)what;
	kill(-c->pid, SIGKILL);
	memset(&si, 0, sizeof(si));
	if (waitid(P_PIDFD, c->pidfd, &si, WEXITED | WNOHANG) == -1) {
		if (errno == EINTR)
			return;
		/* Someone else reaped it: the status is unknown. */
		log_warn("reviewer[%d]: waitid", (int)c->pid);
		si.si_pid = c->pid;
		si.si_code = 0;
	} else if (si.si_pid == 0)
		return;		/* not yet */
	if (c->rv != NULL)
		while (c->outfd != -1 && command_read_out(c) == 1)
			;
	command_read_err(c);
	command_err_flush(c);
	if (c->rv != NULL)
		command_decide(c, &si);
	c->pid = -1;
	TAILQ_REMOVE(&c->r->children, c, entry);
	command_free(c);
}

static void
command_out_cb(evutil_socket_t fd, short what, void *arg)
{
	struct child	*c = arg;

	(void)fd;
	(void)what;
	command_read_out(c);
}

static void
command_err_cb(evutil_socket_t fd, short what, void *arg)
{
	struct child	*c = arg;

	(void)fd;
	(void)what;
	command_read_err(c);
}

/*
 * Read what stdout has: 1 when more may follow, 0 at EOF, would-block or
 * error.  Past REVIEW_FRAME_MAX the review is an error and the process is
 * killed.
 */
static int
command_read_out(struct child *c)
{
	struct review	*rv;
	ssize_t		 n;
	size_t		 room;
	char		 sink[4096];

	room = sizeof(c->out) - c->outlen;
	if (room > 0)
		n = read(c->outfd, c->out + c->outlen, room);
	else
		n = read(c->outfd, sink, sizeof(sink));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		event_del(c->ev_out);
		close(c->outfd);
		c->outfd = -1;
		return 0;
	}
	if (room == 0)
		return 1;	/* already answered; draining */
	c->outlen += (size_t)n;
	if (c->outlen > REVIEW_FRAME_MAX + 1 && (rv = c->rv) != NULL) {
		rv->child = NULL;
		c->rv = NULL;
		command_kill(c);
		review_done(rv, REVIEW_RESULT_ERROR, "reply over 16384 octets");
	}
	return 1;
}

/* Copy the process's stderr lines to the diagnostic log, bounded. */
static void
command_read_err(struct child *c)
{
	char	 buf[1024];
	ssize_t	 n, i;
	int	 rounds = 0;

	/* Bounded per call so a chatty process cannot hold the loop. */
	while (c->errfd != -1 && rounds++ < 64) {
		n = read(c->errfd, buf, sizeof(buf));
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			command_err_flush(c);
			event_del(c->ev_err);
			close(c->errfd);
			c->errfd = -1;
			return;
		}
		for (i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				command_err_flush(c);
				continue;
			}
			if (c->errlen < sizeof(c->errline) - 1)
				c->errline[c->errlen++] = buf[i];
		}
	}
}

static void
command_err_flush(struct child *c)
{
	char	 text[ERR_LINE_MAX];

	if (c->errlen == 0)
		return;
	c->errline[c->errlen] = '\0';
	c->errlen = 0;
	if (c->errlines > ERR_LINES_MAX)
		return;
	if (c->errlines++ == ERR_LINES_MAX) {
		log_warnx("reviewer[%d]: (further stderr not logged)",
		    (int)c->pid);
		return;
	}
	text_clean(text, sizeof(text), c->errline, 0);
	log_warnx("reviewer[%d]: %s", (int)c->pid, text);
}

/*
 * The answer of a process that ended: it must have exited 0 and written
 * exactly one line, a reply object; anything else is an error.
 */
static void
command_decide(struct child *c, const siginfo_t *si)
{
	struct review		*rv = c->rv;
	enum review_result	 res;
	char			 detail[512];
	char			*nl;
	size_t			 len = c->outlen;

	rv->child = NULL;
	c->rv = NULL;
	if (si->si_code == CLD_KILLED || si->si_code == CLD_DUMPED) {
		snprintf(detail, sizeof(detail),
		    "reviewer killed by signal %d", si->si_status);
		goto error;
	}
	if (si->si_code != CLD_EXITED) {
		snprintf(detail, sizeof(detail), "reviewer exit status lost");
		goto error;
	}
	if (si->si_status != 0) {
		snprintf(detail, sizeof(detail),
		    "reviewer exited with status %d", si->si_status);
		goto error;
	}
	if (len == 0) {
		snprintf(detail, sizeof(detail), "reviewer wrote no reply");
		goto error;
	}
	if (c->out[len - 1] == '\n')
		len--;
	if ((nl = memchr(c->out, '\n', len)) != NULL) {
		snprintf(detail, sizeof(detail),
		    "reviewer wrote more than one line");
		goto error;
	}
	if (len > 0 && c->out[len - 1] == '\r')
		len--;
	if (len == 0) {
		snprintf(detail, sizeof(detail), "reviewer wrote an empty line");
		goto error;
	}
	if (review_reply_parse(c->out, len, rv->id, 0, &res, &rv->scope,
	    detail, sizeof(detail)) == -1)
		goto error;
	review_done(rv, res, detail[0] != '\0' ? detail : NULL);
	return;
error:
	review_done(rv, REVIEW_RESULT_ERROR, detail);
}

/* SIGKILL the process group; the leader is unreaped so the id is ours. */
static void
command_kill(struct child *c)
{
	if (c->pid > 0)
		kill(-c->pid, SIGKILL);
}

static void
command_free(struct child *c)
{
	if (c->ev_exit != NULL)
		event_free(c->ev_exit);
	if (c->ev_out != NULL)
		event_free(c->ev_out);
	if (c->ev_err != NULL)
		event_free(c->ev_err);
	if (c->pidfd != -1)
		close(c->pidfd);
	if (c->outfd != -1)
		close(c->outfd);
	if (c->errfd != -1)
		close(c->errfd);
	free(c);
}
