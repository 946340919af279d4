/*
 * The tty transport: ask the person at /dev/tty, one question at a time.
 *
 * Questions wait in r->tty_queue (counted in the in-flight cap) and are
 * asked in order; a question's timeout starts when it is shown.  When the
 * sandboxed command shares the terminal it may own the terminal's
 * foreground, so, as a job-control shell does, we take the foreground
 * for our own process group for the question (tcsetpgrp with SIGTTOU
 * ignored), switch the line discipline to canonical mode with echo,
 * discard typed-ahead input, and afterwards restore the modes, hand the
 * foreground back and SIGCONT that group (it may have stopped on SIGTTIN
 * while we held the terminal).  A question whose foreground was taken
 * from us while it was open is an error, never an answer.  Processes
 * sharing the terminal (a supervisor's reviews, each in a child) take
 * turns under an exclusive flock on it: a question whose terminal is
 * locked elsewhere waits at the head of the queue and is tried again.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/queue.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <termios.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "common/io.h"
#include "common/log.h"
#include "common/text.h"
#include "policy/policy.h"
#include "approval/approval_int.h"

#define TTY_LOCK_RETRY_MS	50	/* terminal locked by another process */
#define TTY_STALL_MS		1000	/* the question waits this long for room */
#define TTY_TICK_MS		1000	/* the countdown's step */

static void	 tty_kick(struct reviewer *);
static void	 tty_kick_cb(evutil_socket_t, short, void *);
static int	 tty_open(char *, size_t);
static int	 tty_ask(struct reviewer *, struct review *, int, char *,
		    size_t);
static char	*tty_question(const struct reviewer *, const struct review *);
static void	 tty_budget(FILE *, const json_t *, const char *);
static void	 tty_field(FILE *, const char *, const json_t *,
		    const char *);
static void	 tty_note(FILE *, const char *, const json_t *);
static void	 tty_read_cb(evutil_socket_t, short, void *);
static void	 tty_tick_cb(evutil_socket_t, short, void *);
static void	 tty_countdown(struct reviewer *);
static int	 tty_net_request(const struct review *);
static void	 tty_waiting(const struct reviewer *, char *, size_t);
static void	 tty_answer(struct reviewer *, enum review_result,
		    const char *);
static void	 tty_end(struct reviewer *, const char *note);
static void	 tty_write(int, const char *);

int
tty_start(struct review *rv, char *err, size_t errlen)
{
	struct reviewer	*r = rv->r;

	if (r->tty_kick == NULL &&
	    (r->tty_kick = evtimer_new(r->base, tty_kick_cb, r)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	TAILQ_INSERT_TAIL(&r->tty_queue, rv, qentry);
	rv->queued = 1;
	if (r->tty_active == NULL)
		tty_kick(r);
	return 0;
}

void
tty_abort(struct review *rv)
{
	struct reviewer	*r = rv->r;

	if (rv->queued) {
		TAILQ_REMOVE(&r->tty_queue, rv, qentry);
		rv->queued = 0;
	} else if (r->tty_active == rv) {
		tty_end(r, "\r\n(pisbx: question withdrawn; not allowed)\r\n");
		tty_kick(r);
	}
}

void
tty_free(struct reviewer *r)
{
	if (r->tty_active != NULL)
		tty_end(r, "\r\n");
	if (r->tty_kick != NULL)
		event_free(r->tty_kick);
	r->tty_kick = NULL;
}

/* Ask the next question from the loop, never from review_start itself. */
static void
tty_kick(struct reviewer *r)
{
	struct timeval	 tv = { 0, 0 };

	if (!TAILQ_EMPTY(&r->tty_queue))
		evtimer_add(r->tty_kick, &tv);
}

static void
tty_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct reviewer	*r = arg;
	struct review	*rv;
	struct timeval	 tv = { 0, TTY_LOCK_RETRY_MS * 1000 };
	char		 err[256];
	int		 tfd;

	(void)fd;
	(void)what;
	while (r->tty_active == NULL &&
	    (rv = TAILQ_FIRST(&r->tty_queue)) != NULL) {
		if ((tfd = tty_open(err, sizeof(err))) == -2) {
			evtimer_add(r->tty_kick, &tv);
			return;
		}
		TAILQ_REMOVE(&r->tty_queue, rv, qentry);
		rv->queued = 0;
		if (tfd == -1 || tty_ask(r, rv, tfd, err, sizeof(err)) == -1)
			review_done(rv, REVIEW_RESULT_ERROR, err);
	}
}

/*
 * Open /dev/tty and lock it for one question: the fd, -2 when another
 * process holds the lock, -1 with err set on failure.
 */
static int
tty_open(char *err, size_t errlen)
{
	int	 fd;

	fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (fd == -1) {
		snprintf(err, errlen, "no terminal: %s", strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		if (errno == EWOULDBLOCK || errno == EINTR) {
			close(fd);
			return -2;
		}
		snprintf(err, errlen, "terminal: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Take the terminal's foreground and show the question on fd (now ours). */
static int
tty_ask(struct reviewer *r, struct review *rv, int fd, char *err,
    size_t errlen)
{
	struct sigaction	 ign, old;
	struct termios		 t;
	pid_t			 fg, me = getpgrp();
	char			*q = NULL;

	r->tty_saved_pgrp = 0;
	r->tty_saved_termios = 0;
	r->tty_len = 0;
	r->tty_overlong = 0;
	r->tty_fd = fd;
	r->tty_active = rv;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGTTOU, &ign, &old);
	if ((fg = tcgetpgrp(fd)) == -1) {
		snprintf(err, errlen, "terminal: %s", strerror(errno));
		goto fail;
	}
	if (fg != me) {
		if (tcsetpgrp(fd, me) == -1) {
			snprintf(err, errlen,
			    "cannot take the terminal's foreground: %s",
			    strerror(errno));
			goto fail;
		}
		r->tty_saved_pgrp = fg;
	}
	if (tcgetattr(fd, &r->tty_termios) == 0) {
		r->tty_saved_termios = 1;
		t = r->tty_termios;
		t.c_lflag |= ICANON | ECHO | ECHOE | ECHOK;
		t.c_iflag |= ICRNL;
		t.c_oflag |= OPOST | ONLCR;
		/* TCSAFLUSH also drops whatever was typed ahead. */
		if (tcsetattr(fd, TCSAFLUSH, &t) == -1) {
			snprintf(err, errlen, "terminal modes: %s",
			    strerror(errno));
			goto fail;
		}
	}
	tcflush(fd, TCIFLUSH);
	sigaction(SIGTTOU, &old, NULL);

	/* Its clock starts now, unless it started when it was asked for. */
	if (!r->tty_clock_at_start && review_arm_timer(rv) == -1) {
		snprintf(err, errlen, "cannot arm the question's timer");
		goto fail_restore;
	}
	if ((q = tty_question(r, rv)) == NULL ||
	    io_write_all(fd, q, strlen(q), TTY_STALL_MS) == -1) {
		snprintf(err, errlen, "cannot write to the terminal");
		goto fail_restore;
	}
	free(q);
	q = NULL;
	if ((r->tty_ev = event_new(r->base, fd, EV_READ | EV_PERSIST,
	    tty_read_cb, r)) == NULL || event_add(r->tty_ev, NULL) == -1) {
		snprintf(err, errlen, "cannot wait for the terminal");
		goto fail_restore;
	}
	/* A network question counts down above the prompt. */
	if (rv->host != NULL || tty_net_request(rv)) {
		r->tty_left_ms = review_left_ms(rv);
		if ((r->tty_tick = event_new(r->base, -1, EV_PERSIST,
		    tty_tick_cb, r)) != NULL) {
			struct timeval	 tv = { TTY_TICK_MS / 1000,
			    (TTY_TICK_MS % 1000) * 1000 };

			event_add(r->tty_tick, &tv);
		}
	}
	return 0;
fail:
	sigaction(SIGTTOU, &old, NULL);
fail_restore:
	free(q);
	tty_end(r, NULL);
	return -1;
}

/*
 * The question's text, malloc'ed: the proxy's own network review in its
 * words, else the request object by its type -- a host-IPC command under
 * the warning that it would run outside the sandbox.
 */
static char *
tty_question(const struct reviewer *r, const struct review *rv)
{
	FILE		*f;
	const char	*type;
	char		*q = NULL, *cmd, worker[256], cwd[1024], wait[160];
	size_t		 len;

	if ((f = open_memstream(&q, &len)) == NULL)
		return NULL;
	type = json_string_value(json_object_get(rv->req, "type"));
	if (rv->host != NULL) {
		/*
		 * Who wants it: the worker (a sandbox's id, the proxy's
		 * --label), else the client's address, else this proxy.
		 */
		if (r->worker_id[0] != '\0')
			text_clean(worker, sizeof(worker), r->worker_id, 0);
		else if (rv->client != NULL && rv->client[0] != '\0') {
			snprintf(worker, sizeof(worker), "the client at ");
			text_clean(worker + strlen(worker), sizeof(worker) -
			    strlen(worker), rv->client, 0);
		} else
			snprintf(worker, sizeof(worker), "a client of this "
			    "proxy (pid %ld)", (long)getpid());
		text_clean(cwd, sizeof(cwd), r->cwd, 0);
		fprintf(f, "\r\npisbx: %s wants a network connection\r\n",
		    worker);
		if (r->command[0] != '\0') {
			if ((cmd = malloc(strlen(r->command) + 1)) != NULL)
				text_clean(cmd, strlen(r->command) + 1,
				    r->command, 0);
			fprintf(f, "  command:  %s\r\n", cmd != NULL ? cmd :
			    "?");
			free(cmd);
		}
		tty_budget(f, rv->req, "  budget:   ");
		fprintf(f, "  host:     %s\r\n"
		    "  port:     %u\r\n"
		    "  protocol: %s\r\n"
		    "  cwd:      %s\r\n"
		    "  time:     %d s to answer (no answer: no)\r\n",
		    rv->host, rv->port, rv->protocol, cwd,
		    (r->timeout_ms + 999) / 1000);
		/* Said before the answer: an allow that would not help. */
		tty_note(f, "  note:     ", rv->req);
		fprintf(f, "Allow this connection once? y = once, r = for the "
		    "rest of this run, N = no [y/r/N] ");
	} else if (type != NULL && strcmp(type, "host-ipc") == 0) {
		fprintf(f, "\r\npisbx: WARNING: this command would run on the "
		    "host, OUTSIDE the sandbox,\r\n"
		    "pisbx: with your own access to files, sockets and the "
		    "network:\r\n");
		tty_field(f, "command", rv->req, "command");
		tty_field(f, "in", rv->req, "cwd");
		tty_field(f, "rule", rv->req, "rule");
		tty_field(f, "worker", rv->req, "workerId");
		tty_field(f, "note", rv->req, "warning");
		fprintf(f, "pisbx: run it on the host? [y/N] ");
	} else {
		/* A supervisor's worker: its command line, then the target. */
		fprintf(f, "\r\npisbx: a sandboxed command wants a connection "
		    "no list allows:\r\n");
		tty_field(f, "command", rv->req, "command");
		tty_field(f, "target", rv->req, "hostname");
		fprintf(f, "pisbx:   %-8s %lld\r\n", "port", (long long)
		    json_integer_value(json_object_get(rv->req, "port")));
		tty_field(f, "protocol", rv->req, "protocol");
		tty_field(f, "in", rv->req, "cwd");
		tty_field(f, "worker", rv->req, "workerId");
		tty_field(f, "note", rv->req, "warning");
		tty_budget(f, rv->req, "pisbx:   budget   ");
		tty_waiting(r, wait, sizeof(wait));
		fprintf(f, "pisbx:   %-8s %s\r\n"
		    "pisbx:   %-8s %d s to answer (no answer: no)\r\n",
		    "waiting", wait, "time", (review_left_ms(rv) + 999) / 1000);
		if (r->tty_session)
			fprintf(f, "pisbx: allow it? y = once, r = for this "
			    "command's run, s = for this session, N = no "
			    "[y/r/s/N] ");
		else
			fprintf(f, "pisbx: allow it? y = once, r = for this "
			    "command's run, N = no [y/r/N] ");
	}
	if (ferror(f)) {
		fclose(f);
		free(q);
		return NULL;
	}
	if (fclose(f) != 0) {
		free(q);
		return NULL;
	}
	return q;
}

/*
 * A host past an egress budget (the request's "budget"): one line after
 * prefix naming the budget, what was used, and what each answer does.
 */
static void
tty_budget(FILE *f, const json_t *req, const char *prefix)
{
	const json_t	*b = json_object_get(req, "budget");
	const char	*name;
	char		 clean[64];

	if (!json_is_object(b))
		return;
	name = json_string_value(json_object_get(b, "name"));
	text_clean(clean, sizeof(clean), name != NULL ? name : "?", 0);
	fprintf(f, "%spast network.budget.%s (%lld, used %lld): y allows one "
	    "budget more, r lifts it for this host for the rest of the run\r\n",
	    prefix, clean, (long long)json_integer_value(json_object_get(b,
	    "limit")), (long long)json_integer_value(json_object_get(b,
	    "used")));
}

/*
 * The proxy's question's "note:" line: the request's warning, made
 * printable; none if unset.
 */
static void
tty_note(FILE *f, const char *label, const json_t *req)
{
	const char	*s;
	char		*p;
	size_t		 n;

	if ((s = json_string_value(json_object_get(req, "warning"))) == NULL)
		return;
	n = strlen(s) + 1;
	if ((p = malloc(n)) != NULL)
		text_clean(p, n, s, 0);
	fprintf(f, "%s%s\r\n", label, p != NULL ? p : "?");
	free(p);
}

/* One "pisbx:   name value" line, the value made printable; none if unset. */
static void
tty_field(FILE *f, const char *name, const json_t *req, const char *key)
{
	const char	*s;
	char		*p;
	size_t		 n;

	if ((s = json_string_value(json_object_get(req, key))) == NULL)
		return;
	n = strlen(s) + 1;
	if ((p = malloc(n)) == NULL) {
		fprintf(f, "pisbx:   %-8s ?\r\n", name);
		return;
	}
	text_clean(p, n, s, 0);
	fprintf(f, "pisbx:   %-8s %s\r\n", name, p);
	free(p);
}

static void
tty_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct reviewer	*r = arg;
	char		 buf[256], *s, *e;
	ssize_t		 n, i;

	(void)what;
	n = read(fd, buf, sizeof(buf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		tty_answer(r, REVIEW_RESULT_ERROR, n == 0 ?
		    "end of input at the terminal" : "terminal read error");
		return;
	}
	for (i = 0; i < n; i++) {
		if (buf[i] == '\n' || buf[i] == '\r')
			break;
		if (r->tty_len < sizeof(r->tty_line) - 1)
			r->tty_line[r->tty_len++] = buf[i];
		else
			r->tty_overlong = 1;
	}
	if (i == n)
		return;		/* no end of line yet */
	r->tty_line[r->tty_len] = '\0';
	/* Someone else held the terminal meanwhile: not a person's answer. */
	if (tcgetpgrp(fd) != getpgrp()) {
		tty_answer(r, REVIEW_RESULT_ERROR,
		    "lost the terminal's foreground during the question");
		return;
	}
	s = r->tty_line;
	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	if (!r->tty_overlong &&
	    (strcasecmp(s, "y") == 0 || strcasecmp(s, "yes") == 0))
		tty_answer(r, REVIEW_RESULT_ALLOW, "allowed at the terminal");
	else if (!r->tty_overlong && (r->tty_active->host != NULL ||
	    tty_net_request(r->tty_active)) &&
	    (strcasecmp(s, "r") == 0 || strcasecmp(s, "run") == 0)) {
		/* Network questions only: a host-IPC answer is one command. */
		r->tty_active->scope = REVIEW_SCOPE_RUN;
		tty_answer(r, REVIEW_RESULT_ALLOW,
		    "allowed at the terminal for this run");
	} else if (!r->tty_overlong && r->tty_session &&
	    tty_net_request(r->tty_active) &&
	    (strcasecmp(s, "s") == 0 || strcasecmp(s, "session") == 0)) {
		r->tty_active->scope = REVIEW_SCOPE_SESSION;
		tty_answer(r, REVIEW_RESULT_ALLOW,
		    "allowed at the terminal for this session");
	} else
		tty_answer(r, REVIEW_RESULT_DENY, "denied at the terminal");
}

/* One second less: say so on the question's "time" line. */
static void
tty_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct reviewer	*r = arg;

	(void)fd;
	(void)what;
	if (r->tty_active != NULL)
		r->tty_left_ms = review_left_ms(r->tty_active);
	tty_countdown(r);
}

/*
 * Rewrite the lines above the prompt in place: save the cursor (where the
 * person is typing), go up, write, come back (DECSC, CUU, EL, DECRC:
 * every terminal pisbx meets has them).  The proxy's question has its
 * time there; a supervisor's has the waiting questions, then the time.
 */
static void
tty_countdown(struct reviewer *r)
{
	char	buf[384], wait[160];

	if (r->tty_fd == -1 || r->tty_active == NULL)
		return;
	if (r->tty_active->host != NULL)
		snprintf(buf, sizeof(buf), "\0337\033[1A\r  time:     %d s to "
		    "answer (no answer: no)\033[K\0338",
		    (r->tty_left_ms + 999) / 1000);
	else {
		tty_waiting(r, wait, sizeof(wait));
		snprintf(buf, sizeof(buf), "\0337\033[2A\rpisbx:   %-8s %s"
		    "\033[K\r\npisbx:   %-8s %d s to answer (no answer: no)"
		    "\033[K\0338", "waiting", wait, "time",
		    (r->tty_left_ms + 999) / 1000);
	}
	tty_write(r->tty_fd, buf);
}

/* Whether a request object (a supervisor's) asks about a connection. */
static int
tty_net_request(const struct review *rv)
{
	const char	*type;

	type = json_string_value(json_object_get(rv->req, "type"));
	return rv->host == NULL && type != NULL &&
	    strcmp(type, "network") == 0;
}

/*
 * The questions waiting behind the one shown: how many, and the next
 * one's target and time left -- with the supervisor's clock, each runs
 * out while it waits, and unanswered it is a no.
 */
static void
tty_waiting(const struct reviewer *r, char *buf, size_t len)
{
	struct review	*rv, *next;
	const char	*host;
	char		 h[96];
	size_t		 n = 0;

	next = TAILQ_FIRST(&r->tty_queue);
	TAILQ_FOREACH(rv, &r->tty_queue, qentry)
		n++;
	if (n == 0) {
		snprintf(buf, len, "no other question");
		return;
	}
	host = json_string_value(json_object_get(next->req, "hostname"));
	if (host == NULL)
		host = next->host;
	text_clean(h, sizeof(h), host != NULL ? host : "a host-IPC command",
	    0);
	if (r->tty_clock_at_start)
		snprintf(buf, len, "%zu more; next: %s, %d s left", n, h,
		    (review_left_ms(next) + 999) / 1000);
	else
		snprintf(buf, len, "%zu more; next: %s", n, h);
}

/* Answer the active question, then ask the next one. */
static void
tty_answer(struct reviewer *r, enum review_result res, const char *detail)
{
	struct review	*rv = r->tty_active;

	tty_end(r, res == REVIEW_RESULT_ALLOW ? NULL :
	    res == REVIEW_RESULT_DENY ? "(not allowed)\r\n" :
	    "\r\n(not allowed)\r\n");
	tty_kick(r);
	review_done(rv, res, detail);
}

/*
 * Close the active question: note on the terminal, modes restored,
 * foreground handed back (and its group continued), fd closed.
 */
static void
tty_end(struct reviewer *r, const char *note)
{
	struct sigaction	 ign, old;

	if (r->tty_ev != NULL) {
		event_free(r->tty_ev);
		r->tty_ev = NULL;
	}
	if (r->tty_tick != NULL) {
		event_free(r->tty_tick);
		r->tty_tick = NULL;
	}
	if (r->tty_fd != -1) {
		memset(&ign, 0, sizeof(ign));
		ign.sa_handler = SIG_IGN;
		sigemptyset(&ign.sa_mask);
		sigaction(SIGTTOU, &ign, &old);
		if (note != NULL)
			tty_write(r->tty_fd, note);
		if (r->tty_saved_termios)
			tcsetattr(r->tty_fd, TCSADRAIN, &r->tty_termios);
		if (r->tty_saved_pgrp > 0 &&
		    tcgetpgrp(r->tty_fd) == getpgrp()) {
			if (tcsetpgrp(r->tty_fd, r->tty_saved_pgrp) == -1)
				log_warn("tty: cannot hand the foreground "
				    "back to process group %d",
				    (int)r->tty_saved_pgrp);
			else
				kill(-r->tty_saved_pgrp, SIGCONT);
		}
		sigaction(SIGTTOU, &old, NULL);
		close(r->tty_fd);
		r->tty_fd = -1;
	}
	r->tty_saved_pgrp = 0;
	r->tty_saved_termios = 0;
	r->tty_active = NULL;
}

static void
tty_write(int fd, const char *s)
{
	ssize_t	 n;

	n = write(fd, s, strlen(s));
	(void)n;
}
