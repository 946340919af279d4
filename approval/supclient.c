/*
 * The client side of the supervisor protocol as pisbx-run uses it: calls
 * that are waited for, made before the sandbox starts (register, host-IPC
 * preflight) or after it ended (unregister, host-IPC retry), when nothing
 * else runs.  Socket calls go through approval's supervisor_call on a
 * private event base; reviews without a supervisor go to the config's
 * review command or the TTY, one request, one answer.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "log.h"
#include "policy.h"
#include "approval.h"
#include "supervisor.h"

#define REVIEW_TIMEOUT_FALLBACK	30000

struct call_state {
	int		 done;
	json_t		*reply;
	char		*err;
	size_t		 errlen;
};

static void	 call_done_cb(enum supervisor_status, json_t *, const char *,
		    void *);
static enum review_result reply_result(json_t *, char *, size_t);
static enum review_result ask_command(char *const [], int, const char *,
		    const char *, char *, size_t);
static enum review_result ask_tty(json_t *, int, char *, size_t);
static void	 tty_print_field(FILE *, const char *, json_t *,
		    const char *);
static long long now_ms(void);

static char command_env_path[] = "PATH=/usr/bin:/bin";
static char command_env_lang[] = "LANG=C";
static char command_env_review[] = "PISBX_REVIEW=1";
static char *const command_env[] = {
	command_env_path,
	command_env_lang,
	command_env_review,
	NULL
};

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

int
supclient_register(const char *path, const char *capability,
    const char *worker_id, const char *cwd, int timeout_ms,
    struct policy **policy, int *fallback, char *err, size_t errlen)
{
	struct config_errors	 errs = { NULL, 0 };
	json_t			*req, *reply = NULL, *net;
	enum review_result	 res;
	char			 reason[512];
	char			*text = NULL;

	*policy = NULL;
	*fallback = 0;
	err[0] = '\0';
	req = json_pack("{s:s, s:s, s:s}", "type", "register",
	    "workerId", worker_id, "cwd", cwd);
	if (req == NULL) {
		snprintf(err, errlen, "cannot build the request");
		return -1;
	}
	reply = supclient_call(path, capability, req, timeout_ms, err, errlen);
	json_decref(req);
	if (reply == NULL)
		return -1;
	res = reply_result(reply, reason, sizeof(reason));
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
	 * anything: the run goes on with every destination denied.
	 */
	net = json_object_get(reply, "network");
	if (net == NULL) {
		snprintf(err, errlen, "registration reply has no \"network\" "
		    "policy; denying every destination");
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
	json_t			*req, *reply;
	enum review_result	 res;
	char			 reason[512];

	req = json_pack("{s:s, s:s, s:s}", "type", "unregister",
	    "workerId", worker_id, "cwd", cwd);
	if (req == NULL) {
		snprintf(err, errlen, "cannot build the request");
		return -1;
	}
	reply = supclient_call(path, capability, req, timeout_ms, err, errlen);
	json_decref(req);
	if (reply == NULL)
		return -1;
	res = reply_result(reply, reason, sizeof(reason));
	json_decref(reply);
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

/* The action of a reply whose id was already checked. */
static enum review_result
reply_result(json_t *reply, char *reason, size_t reasonlen)
{
	enum review_result	 res;
	const char		*id;
	char			*text;

	id = json_string_value(json_object_get(reply, "id"));
	if ((text = json_dumps(reply, JSON_COMPACT)) == NULL) {
		snprintf(reason, reasonlen, "out of memory");
		return REVIEW_RESULT_ERROR;
	}
	if (review_reply_parse(text, strlen(text), id, 1, &res, reason,
	    reasonlen) == -1)
		res = REVIEW_RESULT_ERROR;
	free(text);
	return res;
}

enum review_result
review_ask(const struct config *conf, const char *path,
    const char *capability, json_t *request, char *reason, size_t reasonlen)
{
	enum review_result	 res;
	json_t			*reply;
	const char		*envname;
	int			 timeout_ms;

	reason[0] = '\0';
	timeout_ms = conf != NULL && conf->review_timeout_ms > 0 ?
	    conf->review_timeout_ms : REVIEW_TIMEOUT_FALLBACK;
	if (path == NULL && conf != NULL && conf->review_mode ==
	    REVIEW_SOCKET) {
		path = conf->review_socket;
		envname = conf->review_capability_env != NULL ?
		    conf->review_capability_env : "PISBX_CAPABILITY";
		capability = getenv(envname);
	}
	if (path != NULL) {
		if (capability == NULL || *capability == '\0') {
			snprintf(reason, reasonlen, "no capability");
			return REVIEW_RESULT_ERROR;
		}
		reply = supclient_call(path, capability, request, timeout_ms,
		    reason, reasonlen);
		if (reply == NULL)
			return strcmp(reason, "no reply in time") == 0 ?
			    REVIEW_RESULT_TIMEOUT : REVIEW_RESULT_ERROR;
		res = reply_result(reply, reason, reasonlen);
		json_decref(reply);
		return res;
	}
	if (conf == NULL)
		return REVIEW_RESULT_NONE;
	switch (conf->review_mode) {
	case REVIEW_COMMAND:
		return review_ask_local(conf->review_command.v, timeout_ms,
		    request, reason, reasonlen);
	case REVIEW_TTY:
		return review_ask_local(NULL, timeout_ms, request, reason,
		    reasonlen);
	default:
		break;
	}
	return REVIEW_RESULT_NONE;
}

enum review_result
review_ask_local(char *const argv[], int timeout_ms, json_t *request,
    char *reason, size_t reasonlen)
{
	enum review_result	 res;
	json_t			*o;
	char			 id[REVIEW_ID_LEN + 1];
	char			*line = NULL;

	reason[0] = '\0';
	if (review_id_new(id) == -1) {
		snprintf(reason, reasonlen, "no random bytes for an id");
		return REVIEW_RESULT_ERROR;
	}
	if ((o = json_deep_copy(request)) == NULL ||
	    json_object_set_new(o, "version", json_integer(1)) == -1 ||
	    json_object_set_new(o, "id", json_string(id)) == -1 ||
	    (json_object_del(o, "capability"), 0) ||
	    (line = json_dumps(o, JSON_COMPACT)) == NULL) {
		json_decref(o);
		snprintf(reason, reasonlen, "cannot build the request");
		return REVIEW_RESULT_ERROR;
	}
	if (argv != NULL)
		res = ask_command(argv, timeout_ms, line, id, reason,
		    reasonlen);
	else
		res = ask_tty(o, timeout_ms, reason, reasonlen);
	free(line);
	json_decref(o);
	return res;
}

/*
 * One review command: the request line on stdin, one JSON line back on
 * stdout, a clean environment, fds 0-2 only, its own process group killed
 * at the timeout.  Anything but one well-formed answer and exit 0 is an
 * error.
 */
static enum review_result
ask_command(char *const argv[], int timeout_ms, const char *line,
    const char *id, char *reason, size_t reasonlen)
{
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 attr;
	enum review_result		 res = REVIEW_RESULT_ERROR;
	struct pollfd			 pfd;
	sigset_t			 none, all;
	pid_t				 pid = -1;
	long long			 deadline;
	size_t				 n = 0, len;
	ssize_t				 r;
	char				 buf[REVIEW_FRAME_MAX + 2];
	char				*nl;
	int				 in[2] = { -1, -1 };
	int				 out[2] = { -1, -1 };
	int				 e, status, timed_out = 0, fa_ok = 0;
	int				 attr_ok = 0;

	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1) {
		snprintf(reason, reasonlen, "pipe: %s", strerror(errno));
		goto done;
	}
	sigemptyset(&none);
	sigfillset(&all);
	if ((e = posix_spawn_file_actions_init(&fa)) != 0)
		goto spawn_fail;
	fa_ok = 1;
	if ((e = posix_spawn_file_actions_adddup2(&fa, in[0], 0)) != 0 ||
	    (e = posix_spawn_file_actions_adddup2(&fa, out[1], 1)) != 0 ||
	    (e = posix_spawn_file_actions_addclosefrom_np(&fa, 3)) != 0)
		goto spawn_fail;
	if ((e = posix_spawnattr_init(&attr)) != 0)
		goto spawn_fail;
	attr_ok = 1;
	if ((e = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) != 0 ||
	    (e = posix_spawnattr_setpgroup(&attr, 0)) != 0 ||
	    (e = posix_spawnattr_setsigmask(&attr, &none)) != 0 ||
	    (e = posix_spawnattr_setsigdefault(&attr, &all)) != 0)
		goto spawn_fail;
	if ((e = posix_spawn(&pid, argv[0], &fa, &attr, argv,
	    command_env)) != 0) {
		pid = -1;
		snprintf(reason, reasonlen, "cannot run reviewer %s: %s",
		    argv[0], strerror(e));
		goto done;
	}
	close(in[0]);
	close(out[1]);
	in[0] = out[1] = -1;

	/* A reviewer that does not read its stdin gets EPIPE, not SIGPIPE. */
	len = strlen(line);
	signal(SIGPIPE, SIG_IGN);
	if (write(in[1], line, len) != (ssize_t)len || write(in[1], "\n", 1)
	    != 1)
		log_debug("reviewer did not read the whole request");
	close(in[1]);
	in[1] = -1;

	deadline = now_ms() + timeout_ms;
	for (;;) {
		long long left = deadline - now_ms();

		if (left <= 0) {
			timed_out = 1;
			break;
		}
		pfd.fd = out[0];
		pfd.events = POLLIN;
		if (poll(&pfd, 1, (int)left) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd.revents == 0)
			continue;
		r = read(out[0], buf + n, sizeof(buf) - 1 - n);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == sizeof(buf) - 1)
			break;
	}
	buf[n] = '\0';
	kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	pid = -1;

	if (timed_out) {
		snprintf(reason, reasonlen, "no answer within %d ms",
		    timeout_ms);
		res = REVIEW_RESULT_TIMEOUT;
		goto done;
	}
	if (n > REVIEW_FRAME_MAX) {
		snprintf(reason, reasonlen, "reply over %d octets",
		    REVIEW_FRAME_MAX);
		goto done;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
			snprintf(reason, reasonlen, "reviewer killed by "
			    "signal %d", WTERMSIG(status));
		else if (WIFEXITED(status))
			snprintf(reason, reasonlen, "reviewer exited with "
			    "status %d", WEXITSTATUS(status));
		if (reason[0] != '\0')
			goto done;
	}
	if ((nl = memchr(buf, '\n', n)) != NULL) {
		if ((size_t)(nl - buf) + 1 != n) {
			snprintf(reason, reasonlen, "reply has more than one "
			    "line");
			goto done;
		}
		*nl = '\0';
		n--;
	}
	if (n == 0) {
		snprintf(reason, reasonlen, "reviewer gave no answer");
		goto done;
	}
	if (review_reply_parse(buf, n, id, 0, &res, reason, reasonlen) == -1)
		res = REVIEW_RESULT_ERROR;
	goto done;

spawn_fail:
	snprintf(reason, reasonlen, "posix_spawn setup: %s", strerror(e));
done:
	if (fa_ok)
		posix_spawn_file_actions_destroy(&fa);
	if (attr_ok)
		posix_spawnattr_destroy(&attr);
	if (pid != -1) {
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (in[0] != -1)
		close(in[0]);
	if (in[1] != -1)
		close(in[1]);
	if (out[0] != -1)
		close(out[0]);
	if (out[1] != -1)
		close(out[1]);
	return res;
}

/*
 * Ask the person at /dev/tty, default No.  Processes sharing the terminal
 * (several supervisor reviews) take turns under an exclusive lock on it.
 */
static enum review_result
ask_tty(json_t *req, int timeout_ms, char *reason, size_t reasonlen)
{
	enum review_result	 res = REVIEW_RESULT_DENY;
	struct pollfd		 pfd;
	const char		*type;
	long long		 deadline;
	FILE			*f = NULL;
	char			 ans[64];
	size_t			 n = 0;
	ssize_t			 r;
	int			 fd, tfd;

	if ((fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1) {
		snprintf(reason, reasonlen, "no terminal to ask: %s",
		    strerror(errno));
		return REVIEW_RESULT_ERROR;
	}
	if (flock(fd, LOCK_EX) == -1 || (tfd = dup(fd)) == -1 ||
	    (f = fdopen(tfd, "w")) == NULL) {
		snprintf(reason, reasonlen, "terminal: %s", strerror(errno));
		close(fd);
		return REVIEW_RESULT_ERROR;
	}
	tcflush(fd, TCIFLUSH);	/* nothing typed ahead answers */
	type = json_string_value(json_object_get(req, "type"));
	if (type != NULL && strcmp(type, "host-ipc") == 0) {
		fprintf(f, "\npisbx: WARNING: this command would run on the "
		    "host, OUTSIDE the sandbox,\n"
		    "pisbx: with your own access to files, sockets and the "
		    "network:\n");
		tty_print_field(f, "command", req, "command");
		tty_print_field(f, "in", req, "cwd");
		tty_print_field(f, "rule", req, "rule");
		tty_print_field(f, "worker", req, "workerId");
		tty_print_field(f, "note", req, "warning");
		fprintf(f, "pisbx: run it on the host? [y/N] ");
	} else {
		fprintf(f, "\npisbx: a sandboxed command wants a connection "
		    "no list allows:\n");
		tty_print_field(f, "target", req, "hostname");
		fprintf(f, "pisbx:   %-8s %lld\n", "port", (long long)
		    json_integer_value(json_object_get(req, "port")));
		tty_print_field(f, "protocol", req, "protocol");
		tty_print_field(f, "in", req, "cwd");
		tty_print_field(f, "worker", req, "workerId");
		fprintf(f, "pisbx: allow this one connection? [y/N] ");
	}
	fflush(f);

	deadline = now_ms() + timeout_ms;
	for (;;) {
		long long left = deadline - now_ms();

		if (left <= 0) {
			snprintf(reason, reasonlen, "no answer within %d ms",
			    timeout_ms);
			res = REVIEW_RESULT_TIMEOUT;
			fprintf(f, "\npisbx: no answer; denied\n");
			break;
		}
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		r = read(fd, ans + n, sizeof(ans) - 1 - n);
		if (r <= 0) {
			snprintf(reason, reasonlen, "terminal closed");
			break;
		}
		n += (size_t)r;
		ans[n] = '\0';
		if (strchr(ans, '\n') != NULL || n == sizeof(ans) - 1)
			break;
	}
	ans[n] = '\0';
	ans[strcspn(ans, "\r\n")] = '\0';
	if (res == REVIEW_RESULT_DENY) {
		if (strcmp(ans, "y") == 0 || strcmp(ans, "Y") == 0 ||
		    strcasecmp(ans, "yes") == 0) {
			res = REVIEW_RESULT_ALLOW;
			snprintf(reason, reasonlen, "allowed at the terminal");
		} else if (reason[0] == '\0')
			snprintf(reason, reasonlen, "denied at the terminal");
	}
	fclose(f);
	flock(fd, LOCK_UN);
	close(fd);
	return res;
}

/* One "pisbx:   name: value" line with the value made printable. */
static void
tty_print_field(FILE *f, const char *name, json_t *req, const char *key)
{
	const unsigned char	*s;

	s = (const unsigned char *)json_string_value(json_object_get(req,
	    key));
	if (s == NULL)
		return;
	fprintf(f, "pisbx:   %-8s ", name);
	for (; *s != '\0'; s++)
		fputc(*s < 0x20 || *s == 0x7f ? '?' : *s, f);
	fputc('\n', f);
}

static long long
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
