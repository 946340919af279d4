/*
 * The host-IPC fallback: some commands need a host Unix socket (tmux, a
 * docker CLI) that the sandbox refuses by design.  With hostIPC.mode
 * "ask", such a command -- named by a prefix, or recognised by its
 * "Operation not permitted" on a socket when retryOnUnixSocketError is on
 * -- is reviewed and, if a reviewer allows it, runs on the host outside
 * the sandbox.  The decisions are pure functions here so they can be
 * tested on their own; the review and the host run come last.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "common/io.h"
#include "common/log.h"
#include "common/shell.h"
#include "policy/policy.h"
#include "approval/approval.h"
#include "approval/supclient.h"
#include "launcher/run/run.h"

#define EXIT_TIMEOUT_STATUS	124

static const char *find_ci(const char *, size_t, const char *);
static int	 line_names_ipc(const char *, size_t);
static size_t	 prefix_prog(const char *, const char **);
static int	 names_word(const char *, size_t, const char *, size_t);
static const char *hint_prog(const char *, const char *const *, size_t);
static void	 tee_read_cb(evutil_socket_t, short, void *);
static int	 tee_copy(struct hostipc_tee *);
static long long hostipc_left(long long);

extern char **environ;

const char *
hostipc_match(const struct strlist *prefixes, const char *text)
{
	const char	*p;
	size_t		 i, n;

	if (prefixes == NULL || text == NULL)
		return NULL;
	while (*text != '\0' && isspace((unsigned char)*text))
		text++;
	for (i = 0; i < prefixes->n; i++) {
		p = prefixes->v[i];
		n = strlen(p);
		if (n == 0 || strncmp(text, p, n) != 0)
			continue;
		/* "tmux" matches "tmux ls" and "tmux", never "tmuxinator". */
		if (text[n] == '\0' || isspace((unsigned char)text[n]))
			return p;
	}
	return NULL;
}

/* Case-insensitive search for needle in the first len octets of hay. */
static const char *
find_ci(const char *hay, size_t len, const char *needle)
{
	size_t	 n = strlen(needle), i;

	if (n > len)
		return NULL;
	for (i = 0; i + n <= len; i++)
		if (strncasecmp(hay + i, needle, n) == 0)
			return hay + i;
	return NULL;
}

/*
 * Whether a stretch of stderr names a socket operation: the words tools
 * print when a Unix socket is refused ("socket", "connect", "IPC", "unix",
 * a ".sock" path, "bind", "sendmsg").
 */
static int
line_names_ipc(const char *s, size_t len)
{
	static const char *const words[] = { "socket", "connect", "ipc",
	    "unix", ".sock", "bind(", "bind:", "sendmsg", "sendto", NULL };
	size_t	 i;

	for (i = 0; words[i] != NULL; i++)
		if (find_ci(s, len, words[i]) != NULL)
			return 1;
	return 0;
}

int
hostipc_eperm_ipc(const char *buf, size_t len)
{
	const char	*p, *eol, *start, *ls[3];
	size_t		 off = 0;
	int		 k;

	ls[0] = ls[1] = ls[2] = NULL;	/* starts of the last lines */
	while (off < len) {
		start = buf + off;
		eol = memchr(start, '\n', len - off);
		if (eol == NULL)
			eol = buf + len;
		ls[0] = ls[1];
		ls[1] = ls[2];
		ls[2] = start;
		p = find_ci(start, (size_t)(eol - start),
		    "operation not permitted");
		if (p != NULL) {
			/*
			 * Python and Go print the failing call a line or two
			 * before the error itself.
			 */
			for (k = 0; k < 3; k++)
				if (ls[k] != NULL && line_names_ipc(ls[k],
				    (size_t)(eol - ls[k])))
					return 1;
		}
		off = (size_t)(eol - buf) + 1;
	}
	return 0;
}

/* The program a prefix runs: its first word after the last '/'. */
static size_t
prefix_prog(const char *prefix, const char **prog)
{
	const char	*end, *p;

	while (isspace((unsigned char)*prefix))
		prefix++;
	for (end = prefix; *end != '\0' && !isspace((unsigned char)*end);
	    end++)
		;
	for (p = *prog = prefix; p < end; p++)
		if (*p == '/')
			*prog = p + 1;
	return (size_t)(end - *prog);
}

/*
 * Whether the first len octets of s name word (any case) with no letter,
 * digit or '_' next to it: "tmux ls", "/tmp/tmux-0", never "tmuxinator".
 */
static int
names_word(const char *s, size_t len, const char *word, size_t wlen)
{
	size_t	 i;

	if (wlen == 0)
		return 0;
	for (i = 0; i + wlen <= len; i++) {
		if (strncasecmp(s + i, word, wlen) != 0)
			continue;
		if (i > 0 && (isalnum((unsigned char)s[i - 1]) ||
		    s[i - 1] == '_'))
			continue;
		if (i + wlen < len && (isalnum((unsigned char)s[i + wlen]) ||
		    s[i + wlen] == '_'))
			continue;
		return 1;
	}
	return 0;
}

const char *
hostipc_erofs_prog(const char *buf, size_t len,
    const struct strlist *prefixes, const char *text)
{
	const char	*start, *eol, *prog;
	size_t		 off = 0, i, n;

	if (prefixes == NULL || text == NULL)
		return NULL;
	while (off < len) {
		start = buf + off;
		if ((eol = memchr(start, '\n', len - off)) == NULL)
			eol = buf + len;
		off = (size_t)(eol - buf) + 1;
		if (find_ci(start, (size_t)(eol - start),
		    "read-only file system") == NULL)
			continue;
		for (i = 0; i < prefixes->n; i++) {
			n = prefix_prog(prefixes->v[i], &prog);
			if (names_word(start, (size_t)(eol - start), prog, n) &&
			    names_word(text, strlen(text), prog, n))
				return prefixes->v[i];
		}
	}
	return NULL;
}

enum hostipc_retry
hostipc_should_retry(const struct hostipc_outcome *o, const char *tail,
    size_t len, const struct strlist *prefixes, const char *text,
    const char **prefix)
{
	*prefix = NULL;
	if (!o->exited || o->status == 0 || o->timed_out || o->aborted)
		return HOSTIPC_NO_RETRY;
	if (hostipc_eperm_ipc(tail, len))
		return HOSTIPC_RETRY_EPERM;
	/*
	 * A read-only file system is what most refused writes look like,
	 * so it counts only for a program the config lists as one that
	 * needs the host, named both in the command and on that line.
	 */
	if ((*prefix = hostipc_erofs_prog(tail, len, prefixes, text)) != NULL)
		return HOSTIPC_RETRY_EROFS;
	return HOSTIPC_NO_RETRY;
}

void
hostipc_hint(const struct config *conf, char *const argv[],
    const char *shell_string, int status)
{
	/* Programs that work only through their server's host socket. */
	static const char *const progs[] = { "tmux", "screen", "docker",
	    "podman", "ssh-add", "systemctl" };
	/* Programs that gain privileges, which no_new_privs forbids. */
	static const char *const privs[] = { "sudo", "doas", "pkexec",
	    "run0" };
	const char	*p;
	char		*text;
	char		 file[PATH_MAX + 128];

	if (status == 0 || status >= 124)
		return;
	if ((text = hostipc_command_text(argv, shell_string)) == NULL)
		return;
	if ((p = hint_prog(text, privs, sizeof(privs) / sizeof(*privs))) !=
	    NULL)
		fprintf(stderr, "pisbx: %s cannot gain privileges in the "
		    "sandbox (it runs with no_new_privs and no capabilities); "
		    "run what needs root outside it (pisbx-run(1))\n", p);
	if (conf->hostipc_mode != HOSTIPC_ASK &&
	    !conf->allow_all_unix_sockets && conf->allow_unix_sockets.n == 0 &&
	    (p = hint_prog(text, progs, sizeof(progs) / sizeof(*progs))) !=
	    NULL) {
		policy_hint_file(conf, file, sizeof(file));
		fprintf(stderr, "pisbx: %s works through its server's Unix "
		    "socket on the host, which the sandbox refuses%s; to run "
		    "it on the host after a review, set \"hostIPC\": "
		    "{\"mode\": \"ask\", \"preflightCommandPrefixes\": "
		    "[\"%s\"], \"retryOnUnixSocketError\": true} and a "
		    "reviewer in %s (pisbx-run(1), HOST-IPC)\n", p,
		    strcmp(p, "tmux") == 0 ? " (a tmux started inside runs "
		    "a server of its own, in $TMUX_TMPDIR, which is the run's "
		    "TMPDIR, and ends with the run)" : "", p, file);
	}
	free(text);
}

/* The first of progs that text names as a word, or NULL. */
static const char *
hint_prog(const char *text, const char *const *progs, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (names_word(text, strlen(text), progs[i], strlen(progs[i])))
			return progs[i];
	return NULL;
}

long long
hostipc_remaining_ms(long long total_ms, long long elapsed_ms)
{
	if (total_ms <= 0)
		return 0;
	if (elapsed_ms < 0)
		elapsed_ms = 0;
	if (elapsed_ms >= total_ms)
		return -1;
	return total_ms - elapsed_ms;
}

char *
hostipc_command_text(char *const argv[], const char *shell_string)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%";
	const char	*s;
	char		*out, *p;
	size_t		 need = 1, i;

	if (shell_string != NULL)
		return strdup(shell_string);
	for (i = 0; argv[i] != NULL; i++)
		need += SHELL_QUOTE_SIZE(strlen(argv[i]));	/* and a blank */
	if ((out = malloc(need)) == NULL)
		return NULL;
	p = out;
	for (i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			*p++ = ' ';
		s = argv[i];
		if (*s != '\0' && strspn(s, safe) == strlen(s)) {
			p = stpcpy(p, s);
			continue;
		}
		p = shell_quote(p, s);
	}
	*p = '\0';
	return out;
}

void
hostipc_tail_add(struct hostipc_tail *t, const char *data, size_t n)
{
	size_t	 drop;

	if (n >= HOSTIPC_TAIL_MAX) {
		memcpy(t->buf, data + n - HOSTIPC_TAIL_MAX, HOSTIPC_TAIL_MAX);
		t->len = HOSTIPC_TAIL_MAX;
		return;
	}
	if (t->len + n > HOSTIPC_TAIL_MAX) {
		drop = t->len + n - HOSTIPC_TAIL_MAX;
		memmove(t->buf, t->buf + drop, t->len - drop);
		t->len -= drop;
	}
	memcpy(t->buf + t->len, data, n);
	t->len += n;
}

int
hostipc_review(const struct config *conf, const struct supervise *s,
    const char *text, const char *cwd, const char *rule,
    const char *warning, long long deadline_ms, char *reason,
    size_t reasonlen)
{
	struct hostipc_request	 hr;
	struct reviewer_opts	 o;
	enum review_result	 res;
	json_t			*req;
	const char		*wid;
	long long		 left;

	hr.command = text;
	hr.cwd = cwd;
	hr.rule = rule;
	hr.warning = warning;
	wid = s != NULL && s->registered ? s->worker_id : "pisbx-run";
	/*
	 * A registered run asks its supervisor, whatever the config's
	 * review says, and only with the capability it was given.
	 */
	if (s != NULL && s->registered) {
		memset(&o, 0, sizeof(o));
		o.mode = REVIEW_SOCKET;
		o.socket_path = s->socket;
		o.capability = s->capability != NULL ? s->capability : "";
		o.timeout_ms = conf->review_timeout_ms;
	} else
		reviewer_opts_config(&o, conf, NULL, NULL, NULL);
	/* The reviewer's time is the run's time: never wait past it. */
	if (deadline_ms > 0) {
		if ((left = deadline_ms - hostipc_clock_ms()) <= 0) {
			snprintf(reason, reasonlen, "the run's --timeout "
			    "passed before the review");
			return 0;
		}
		if (o.timeout_ms <= 0 || left < o.timeout_ms)
			o.timeout_ms = (int)left;
	}
	if ((req = supclient_hostipc_request(wid, &hr)) == NULL) {
		snprintf(reason, reasonlen, "cannot build the request");
		return 0;
	}
	res = review_ask(&o, req, reason, reasonlen);
	json_decref(req);
	if (res == REVIEW_RESULT_NONE)
		snprintf(reason, reasonlen, "no reviewer configured");
	else if (res != REVIEW_RESULT_ALLOW && reason[0] == '\0')
		snprintf(reason, reasonlen, "%s", review_result_reason(res));
	return res == REVIEW_RESULT_ALLOW;
}

long long
hostipc_clock_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
hostipc_run(char *const argv[], const char *shell_string, const char *cwd,
    long long timeout_ms)
{
	struct timespec	 ts;
	sigset_t	 mask, old;
	siginfo_t	 si;
	const char	*sh;
	long long	 deadline = 0, left;
	pid_t		 pid, fg = -1;
	int		 status = 0, sig, timed_out = 0, ttyfd = -1;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &mask, &old);

	if ((pid = fork()) == -1) {
		log_warn("fork");
		sigprocmask(SIG_SETMASK, &old, NULL);
		return 1;
	}
	if (pid == 0) {
		/*
		 * The command gets default signal handling: ignored signals
		 * (pisbx-run ignores SIGPIPE) would stay ignored across exec.
		 */
		for (sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				signal(sig, SIG_DFL);
		setpgid(0, 0);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (cwd != NULL && chdir(cwd) == -1) {
			fprintf(stderr, "pisbx: cd %s: %s\n", cwd,
			    strerror(errno));
			_exit(126);
		}
		if (shell_string != NULL) {
			sh = getenv("SHELL");
			if (sh == NULL || *sh != '/' || access(sh, X_OK) != 0)
				sh = "/bin/sh";
			execle(sh, sh, "-c", shell_string, (char *)NULL,
			    environ);
			fprintf(stderr, "pisbx: %s: %s\n", sh, strerror(errno));
			_exit(127);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "pisbx: %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	setpgid(pid, pid);
	/*
	 * An interactive command (tmux attach) needs the terminal's
	 * foreground; it is handed back when the command ends.
	 */
	if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp()) {
		ttyfd = STDIN_FILENO;
		fg = getpgrp();
		signal(SIGTTOU, SIG_IGN);
		tcsetpgrp(ttyfd, pid);
	}
	if (timeout_ms > 0)
		deadline = hostipc_clock_ms() + timeout_ms;
	for (;;) {
		if (timeout_ms > 0) {
			left = deadline - hostipc_clock_ms();
			if (left <= 0) {
				timed_out = 1;
				kill(-pid, SIGKILL);
				waitpid(pid, &status, 0);
				break;
			}
			ts.tv_sec = left / 1000;
			ts.tv_nsec = (left % 1000) * 1000000;
			sig = sigtimedwait(&mask, &si, &ts);
		} else
			sig = sigwaitinfo(&mask, &si);
		if (sig == -1)
			continue;	/* EAGAIN: deadline check; EINTR */
		if (sig == SIGCHLD) {
			if (waitpid(pid, &status, WNOHANG) == pid)
				break;
			continue;
		}
		kill(-pid, sig);
	}
	/* The rest of its process group goes with it. */
	kill(-pid, SIGKILL);
	if (ttyfd != -1)
		tcsetpgrp(ttyfd, fg);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (timed_out) {
		fprintf(stderr, "pisbx: timed out after %lld ms on the host\n",
		    timeout_ms);
		return EXIT_TIMEOUT_STATUS;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

struct hostipc_tee *
hostipc_tee_begin(void)
{
	struct hostipc_tee	*t;
	int			 p[2];

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->rfd = t->saved = -1;
	if (pipe2(p, O_CLOEXEC) == -1) {
		free(t);
		return NULL;
	}
	t->rfd = p[0];
	if ((t->saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3)) == -1 ||
	    dup2(p[1], STDERR_FILENO) == -1) {
		if (t->saved != -1)
			close(t->saved);
		close(p[0]);
		close(p[1]);
		free(t);
		return NULL;
	}
	close(p[1]);		/* fd 2 is the write end now */
	return t;
}

int
hostipc_tee_start(struct hostipc_tee *t, struct event_base *base)
{
	int	 fl;

	if (t->saved != -1) {
		dup2(t->saved, STDERR_FILENO);
		close(t->saved);
		t->saved = -1;
	}
	if ((fl = fcntl(t->rfd, F_GETFL)) == -1 ||
	    fcntl(t->rfd, F_SETFL, fl | O_NONBLOCK) == -1)
		return -1;
	if ((t->ev = event_new(base, t->rfd, EV_READ | EV_PERSIST,
	    tee_read_cb, t)) == NULL || event_add(t->ev, NULL) == -1)
		return -1;
	return 0;
}

/* Copy what can be read now; 1 at EOF, 0 when it would block, -1 error. */
static int
tee_copy(struct hostipc_tee *t)
{
	char	 buf[16384];
	ssize_t	 n;

	for (;;) {
		n = read(t->rfd, buf, sizeof(buf));
		if (n == 0)
			return 1;
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -1;
		}
		hostipc_tail_add(&t->tail, buf, (size_t)n);
		/* A failure means our stderr is gone: keep reading. */
		(void)io_write_all(STDERR_FILENO, buf, (size_t)n, 0);
	}
}

static void
tee_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct hostipc_tee	*t = arg;

	(void)fd;
	(void)what;
	if (tee_copy(t) != 0 && t->ev != NULL) {
		event_free(t->ev);
		t->ev = NULL;
	}
}

void
hostipc_tee_end(struct hostipc_tee *t)
{
	if (t == NULL)
		return;
	if (t->saved != -1) {
		dup2(t->saved, STDERR_FILENO);
		close(t->saved);
		t->saved = -1;
	}
	/*
	 * Every writer lived in the sandbox's PID namespace, which is gone:
	 * what they wrote is in the pipe, and reading to EAGAIN gets it all.
	 */
	if (t->rfd != -1) {
		fcntl(t->rfd, F_SETFL, fcntl(t->rfd, F_GETFL) | O_NONBLOCK);
		tee_copy(t);
	}
	if (t->ev != NULL) {
		event_free(t->ev);
		t->ev = NULL;
	}
	if (t->rfd != -1) {
		close(t->rfd);
		t->rfd = -1;
	}
}

void
hostipc_tee_free(struct hostipc_tee *t)
{
	if (t == NULL)
		return;
	hostipc_tee_end(t);
	free(t);
}

/*
 * What is left of the run's time at deadline_ms (0: no timeout): the
 * milliseconds, 0 for none set, or -1 when it has passed.
 */
static long long
hostipc_left(long long deadline_ms)
{
	long long	 left;

	if (deadline_ms <= 0)
		return 0;
	left = deadline_ms - hostipc_clock_ms();
	return left > 0 ? left : -1;
}

int
hostipc_preflight(const struct config *conf, const struct supervise *s,
    char *const argv[], const char *shell_string, const char *cwd,
    long long timeout_ms)
{
	const char	*prefix;
	char		*text, *rule = NULL;
	char		 reason[512];
	long long	 deadline = 0, left;
	int		 rc, allowed;

	if (conf->hostipc_mode != HOSTIPC_ASK)
		return -1;
	/* The run's --timeout counts from here, the review included. */
	if (timeout_ms > 0)
		deadline = hostipc_clock_ms() + timeout_ms;
	if ((text = hostipc_command_text(argv, shell_string)) == NULL) {
		fprintf(stderr, "pisbx: host-IPC execution denied: out of "
		    "memory\n");
		return HOSTIPC_EXIT_DENIED;
	}
	if ((prefix = hostipc_match(&conf->hostipc_prefixes, text)) == NULL) {
		free(text);
		return -1;
	}
	if (asprintf(&rule, "preflight-prefix:%s", prefix) == -1) {
		free(text);
		fprintf(stderr, "pisbx: host-IPC execution denied: out of "
		    "memory\n");
		return HOSTIPC_EXIT_DENIED;
	}
	allowed = hostipc_review(conf, s, text, cwd, rule, "the command runs "
	    "on the host, outside the sandbox, with the user's own access",
	    deadline, reason, sizeof(reason));
	if ((left = hostipc_left(deadline)) < 0) {
		/* Out of time while the reviewer thought: a timeout. */
		fprintf(stderr, "pisbx: host-IPC: --timeout (%lld ms) passed "
		    "while waiting for the reviewer; the command was not "
		    "started\n", timeout_ms);
		rc = EXIT_TIMEOUT_STATUS;
	} else if (!allowed) {
		fprintf(stderr, "pisbx: host-IPC execution denied: %s\n",
		    reason);
		rc = HOSTIPC_EXIT_DENIED;
	} else {
		fprintf(stderr, "pisbx: host-IPC: approved (%s); running on "
		    "the host, outside the sandbox\n", rule);
		rc = hostipc_run(argv, shell_string, cwd, left);
	}
	free(rule);
	free(text);
	return rc;
}

int
hostipc_after(const struct config *conf, const struct supervise *s,
    const struct hostipc_outcome *o, const struct hostipc_tee *t,
    char *const argv[], const char *shell_string, const char *cwd,
    long long timeout_ms, long long elapsed_ms, int status)
{
	enum hostipc_retry	 why;
	const char		*prefix;
	long long		 left, deadline = 0;
	char			*text, *rule = NULL;
	char			 reason[512], what[256], warning[512];
	int			 rc, allowed;

	if (conf->hostipc_mode != HOSTIPC_ASK || !conf->hostipc_retry ||
	    t == NULL)
		return status;
	if ((text = hostipc_command_text(argv, shell_string)) == NULL)
		return status;
	why = hostipc_should_retry(o, t->tail.buf, t->tail.len,
	    &conf->hostipc_prefixes, text, &prefix);
	/* Out of time is a timeout, never a retry. */
	if (why == HOSTIPC_NO_RETRY ||
	    (left = hostipc_remaining_ms(timeout_ms, elapsed_ms)) < 0) {
		free(text);
		return status;
	}
	if (left > 0)
		deadline = hostipc_clock_ms() + left;
	if (why == HOSTIPC_RETRY_EROFS) {
		if (asprintf(&rule, "socket-dir-erofs:%s", prefix) == -1)
			rule = NULL;
		snprintf(what, sizeof(what), "where %s could not make its "
		    "socket directory (read-only file system)", prefix);
	} else {
		rule = strdup("unix-socket-eperm");
		snprintf(what, sizeof(what), "on a refused Unix socket");
	}
	if (rule == NULL) {
		free(text);
		return status;
	}
	snprintf(warning, sizeof(warning), "the sandboxed attempt failed %s "
	    "and may already have had side effects; it would run again on "
	    "the host, outside the sandbox", what);
	allowed = hostipc_review(conf, s, text, cwd, rule, warning, deadline,
	    reason, sizeof(reason));
	free(rule);
	free(text);
	/* The review took the rest of the run's time: no retry. */
	if ((left = hostipc_left(deadline)) < 0) {
		fprintf(stderr, "pisbx: host-IPC: --timeout (%lld ms) passed "
		    "while waiting for the reviewer; no retry\n", timeout_ms);
		return status;
	}
	if (!allowed) {
		fprintf(stderr, "pisbx: host-IPC execution denied: %s\n",
		    reason);
		return status;
	}
	fprintf(stderr, "pisbx: ---- host-IPC retry: the sandboxed attempt "
	    "exited %d %s; running again on the host, outside the sandbox "
	    "----\n", o->status, what);
	rc = hostipc_run(argv, shell_string, cwd, left);
	return rc;
}
