/*
 * pisbx-run --control-fd N: policy updates for the command while it
 * runs, in srt's format -- one JSON config a line, the whole config each
 * time (a key the line leaves out is back at its default).  A line is
 * built by the same loader as the config file (config_load_buffer_layer,
 * the run layer: every check of the loader holds for it too, the managed
 * file's rules among them), then held against what
 * the running sandbox fixed at start: the filesystem policy (mounts,
 * Landlock and the guard's plan are made once), the Unix sockets and
 * nested namespaces the seccomp filter and the guard allow, and the
 * files the plan protects because pisbx reads them (the reviewer, the
 * hosts file, the access log).  A line that changes one of those, or is
 * not a valid config, is refused with its errors on stderr and changes
 * nothing; an accepted one is the proxy's new config at once
 * (proxy_reload, which also decides every open connection again).
 * docs/config.md ("Updating a running command") is the contract.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "policy/policy.h"
#include "proxy/proxy.h"
#include "launcher/run/run.h"

#define CONTROL_READ	65536

struct control {
	int		 fd;
	struct event	*ev;
	struct proxy	*px;
	char		*buf;		/* the line being read */
	size_t		 len, cap;
	size_t		 lines;		/* lines read, blank ones too */
	int		 skipping;	/* a line over CONTROL_LINE_MAX */
};

static void	 control_read_cb(evutil_socket_t, short, void *);
static void	 control_line(struct control *, char *, size_t);
static int	 control_strlist_same(const struct strlist *,
		    const struct strlist *);
static int	 control_str_same(const char *, const char *);
static void	 control_fixed_say(const char *, const char *, int *);

/*
 * Check N before anything starts: open, readable, a pipe, FIFO or
 * socket (what the event loop can wait on); close-on-exec from here on
 * (the sandbox's PID 1 closes it anyway).  0, or -1 with err set.
 */
int
control_check_fd(int fd, char *err, size_t errlen)
{
	struct stat	 st;
	socklen_t	 sl = sizeof(int);
	int		 fl, listening = 0;

	if ((fl = fcntl(fd, F_GETFL)) == -1) {
		snprintf(err, errlen, "descriptor %d is not open", fd);
		return -1;
	}
	if ((fl & O_ACCMODE) == O_WRONLY) {
		snprintf(err, errlen, "descriptor %d is open for writing "
		    "only; give pisbx-run the read end", fd);
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "descriptor %d: %s", fd,
		    strerror(errno));
		return -1;
	}
	if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "descriptor %d is not a pipe or a "
		    "socket; give pisbx-run the read end of a pipe", fd);
		return -1;
	}
	/* A listening socket never has a line to read: every update lost. */
	if (S_ISSOCK(st.st_mode) && getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN,
	    &listening, &sl) == 0 && listening) {
		snprintf(err, errlen, "descriptor %d is a listening socket, "
		    "which has no lines to read; give pisbx-run a connected "
		    "socket or the read end of a pipe", fd);
		return -1;
	}
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) == -1) {
		snprintf(err, errlen, "descriptor %d: %s", fd,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* Read fd's lines on base from now on, each a new config for px. */
struct control *
control_start(struct event_base *base, int fd, struct proxy *px)
{
	struct control	*ct;

	if ((ct = calloc(1, sizeof(*ct))) == NULL)
		return NULL;
	ct->fd = fd;
	ct->px = px;
	ct->ev = event_new(base, fd, EV_READ | EV_PERSIST, control_read_cb, ct);
	if (ct->ev == NULL || event_add(ct->ev, NULL) == -1) {
		control_free(ct);
		return NULL;
	}
	return ct;
}

void
control_free(struct control *ct)
{
	if (ct == NULL)
		return;
	if (ct->ev != NULL)
		event_free(ct->ev);
	free(ct->buf);
	free(ct);
}

/*
 * What came on the descriptor: complete lines applied in order, the rest
 * kept for the next read.  One read a call, without O_NONBLOCK on a
 * description the caller may share: the loop said it is readable.  At
 * the end a last line without its newline counts too; the config last
 * applied stays in force for the rest of the run.
 */
static void
control_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct control	*ct = arg;
	char		 tmp[CONTROL_READ], *nl, *p, *nb;
	ssize_t		 r;
	size_t		 n, take;

	(void)what;
	if ((r = read(fd, tmp, sizeof(tmp))) == -1 && (errno == EINTR ||
	    errno == EAGAIN))
		return;
	if (r <= 0) {
		if (r == -1)
			log_warn("--control-fd %d: read; no further updates "
			    "are applied", ct->fd);
		else
			log_info("--control-fd %d: closed by the writer; the "
			    "policy last applied stays", ct->fd);
		if (r == 0 && ct->len > 0 && !ct->skipping) {
			ct->lines++;
			control_line(ct, ct->buf, ct->len);
		}
		ct->len = 0;
		event_del(ct->ev);
		return;
	}
	for (p = tmp, n = (size_t)r; n > 0; p += take, n -= take) {
		nl = memchr(p, '\n', n);
		take = nl != NULL ? (size_t)(nl - p) + 1 : n;
		if (!ct->skipping && ct->len + take > CONTROL_LINE_MAX + 1) {
			log_warnx("--control-fd %d, line %zu: longer than %d "
			    "octets: refused; the policy in force is "
			    "unchanged", ct->fd, ct->lines + 1,
			    CONTROL_LINE_MAX);
			ct->skipping = 1;
			ct->len = 0;
		}
		if (!ct->skipping && ct->len + take > ct->cap) {
			if ((nb = realloc(ct->buf, ct->len + take)) == NULL) {
				log_warn("--control-fd %d, line %zu: refused",
				    ct->fd, ct->lines + 1);
				ct->skipping = 1;
				ct->len = 0;
			} else {
				ct->buf = nb;
				ct->cap = ct->len + take;
			}
		}
		if (!ct->skipping) {
			memcpy(ct->buf + ct->len, p, take);
			ct->len += take;
		}
		if (nl == NULL)
			continue;
		ct->lines++;
		if (!ct->skipping)
			control_line(ct, ct->buf, ct->len - 1);
		ct->skipping = 0;
		ct->len = 0;
	}
}

/*
 * One line: blank lines are skipped; anything else is a whole config
 * that must load, leave the fixed keys as they are, and set up (its
 * resolver, its reviewer) -- or it changes nothing and says why.
 */
static void
control_line(struct control *ct, char *line, size_t len)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*conf;
	char			 name[64];
	size_t			 i, nallow, ndeny;
	int			 nfixed;

	for (i = 0; i < len && strchr(" \t\r\f\v", line[i]) != NULL; i++)
		;
	if (i == len)
		return;
	snprintf(name, sizeof(name), "--control-fd %d, line %zu", ct->fd,
	    ct->lines);
	/* The one loader of configs: the file's checks hold for a line. */
	if ((conf = config_load_buffer_layer(line, len, name, LAYER_RUN,
	    &errs)) == NULL) {
		for (i = 0; i < errs.n; i++)
			log_warnx("%s", errs.msg[i]);
		if (errs.n == 0)
			log_warnx("%s: not a valid config", name);
		log_warnx("%s: refused (%zu error%s); the policy in force is "
		    "unchanged", name, errs.n, errs.n == 1 ? "" : "s");
		config_errors_clear(&errs);
		return;
	}
	for (i = 0; i < conf->notes.n; i++)
		log_info("%s", conf->notes.msg[i]);
	if ((nfixed = control_fixed(proxy_config(ct->px), conf, name)) > 0) {
		log_warnx("%s: refused (%d key%s fixed while the command "
		    "runs); the policy in force is unchanged", name, nfixed,
		    nfixed == 1 ? "" : "s");
		config_free(conf);
		return;
	}
	nallow = policy_count(conf->policy, POLICY_ALLOW);
	ndeny = policy_count(conf->policy, POLICY_DENY);
	if (proxy_reload(ct->px, conf) == -1) {
		log_warnx("%s: refused; the policy in force is unchanged",
		    name);
		return;
	}
	log_info("%s: applied: %zu allow and %zu deny entries", name, nallow,
	    ndeny);
}

/* Whether two lists hold the same entries (each list is deduplicated). */
static int
control_strlist_same(const struct strlist *a, const struct strlist *b)
{
	size_t	 i, j;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++) {
		for (j = 0; j < b->n; j++)
			if (strcmp(a->v[i], b->v[j]) == 0)
				break;
		if (j == b->n)
			return 0;
	}
	return 1;
}

static int
control_str_same(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* One fixed key the line would change: said, and counted. */
static void
control_fixed_say(const char *name, const char *key, int *n)
{
	log_warnx("%s: %s cannot change while the command runs: write "
	    "the running value in the line, or start a new command with "
	    "the new one", name, key);
	(*n)++;
}

/*
 * Count (and say) the keys in which line differs from run, the config
 * in force, where the running sandbox cannot follow: the filesystem
 * policy and the sandbox's Unix-socket and namespace switches must be
 * equal; the files pisbx reads while the command runs (the reviewer's
 * command or socket, the hosts file, the access log, host-IPC) may be
 * left out -- that only asks for less -- but not named otherwise, since
 * the plan protects the running ones only.
 */
int
control_fixed(const struct config *run, const struct config *line,
    const char *name)
{
	int	 n = 0;

	if (run->fs_deny_read_set != line->fs_deny_read_set ||
	    !control_strlist_same(&run->deny_read, &line->deny_read))
		control_fixed_say(name, "filesystem.denyRead", &n);
	if (!control_strlist_same(&run->allow_read, &line->allow_read))
		control_fixed_say(name, "filesystem.allowRead (with "
		    "additionalAllowRead)", &n);
	if (run->fs_allow_write_set != line->fs_allow_write_set ||
	    !control_strlist_same(&run->allow_write, &line->allow_write))
		control_fixed_say(name, "filesystem.allowWrite", &n);
	if (!control_strlist_same(&run->deny_write, &line->deny_write))
		control_fixed_say(name, "filesystem.denyWrite", &n);
	if (run->allow_git_config != line->allow_git_config)
		control_fixed_say(name, "filesystem.allowGitConfig", &n);
	if (run->fs_toolchains != line->fs_toolchains)
		control_fixed_say(name, "filesystem.toolchains", &n);
	if (run->fs_caches != line->fs_caches)
		control_fixed_say(name, "filesystem.caches", &n);
	if (run->allow_all_unix_sockets != line->allow_all_unix_sockets)
		control_fixed_say(name, "network.allowAllUnixSockets", &n);
	if (run->allow_unix_datagram_sockets !=
	    line->allow_unix_datagram_sockets)
		control_fixed_say(name, "network.allowUnixDatagramSockets",
		    &n);
	if (!control_strlist_same(&run->allow_unix_sockets,
	    &line->allow_unix_sockets))
		control_fixed_say(name, "network.allowUnixSockets", &n);
	if (run->allow_nested_userns != line->allow_nested_userns)
		control_fixed_say(name, "allowNestedUserNamespaces", &n);
	if (line->review_command.n > 0 &&
	    !control_strlist_same(&run->review_command, &line->review_command))
		control_fixed_say(name, "review.command", &n);
	if (line->review_socket != NULL && (!control_str_same(
	    run->review_socket, line->review_socket) || !control_str_same(
	    run->review_capability_env, line->review_capability_env)))
		control_fixed_say(name, "review.socket (with capabilityEnv)",
		    &n);
	if (line->hosts_file != NULL && !control_str_same(run->hosts_file,
	    line->hosts_file))
		control_fixed_say(name, "resolver.hostsFile", &n);
	if (line->access_log != NULL && (!control_str_same(run->access_log,
	    line->access_log) || run->access_log_text !=
	    line->access_log_text))
		control_fixed_say(name, "proxy.accessLog (with "
		    "accessLogFormat)", &n);
	if (line->syslog_address != NULL && !control_str_same(
	    run->syslog_address, line->syslog_address))
		control_fixed_say(name, "proxy.accessLogSyslog", &n);
	if (line->metrics_listen != NULL && !control_str_same(
	    run->metrics_listen, line->metrics_listen))
		control_fixed_say(name, "proxy.metrics", &n);
	if (line->hostipc_mode != HOSTIPC_OFF &&
	    (run->hostipc_mode != line->hostipc_mode ||
	    run->hostipc_retry != line->hostipc_retry ||
	    !control_strlist_same(&run->hostipc_prefixes,
	    &line->hostipc_prefixes)))
		control_fixed_say(name, "hostIPC", &n);
	/* The CA, the trust bundle and the placeholders are made at start. */
	if (!config_tls_same(run, line))
		control_fixed_say(name, "network.tlsTerminate", &n);
	if (!config_creds_same(run, line))
		control_fixed_say(name, "credentials", &n);
	return n;
}
