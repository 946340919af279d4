/*
 * run_command: one command in its own network sandbox, from the parent's
 * side.  The proxy runs here, in the host's network namespace, on a
 * libevent loop; the command runs in fresh namespaces whose only way out
 * is that proxy.  pisbx-run and pisbx-sh (launcher/main.c, launcher/sh.c)
 * only turn their options into a struct run_opts and call it.
 */
#include <sys/socket.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/io.h"
#include "common/log.h"
#include "common/shell.h"
#include "policy/policy.h"
#include "proxy/proxy.h"
#include "launcher/launcher.h"
#include "launcher/agent/agent.h"
#include "launcher/fs/fs.h"
#include "launcher/sandbox/sandbox.h"
#include "launcher/guard/guard.h"
#include "launcher/run/run.h"

extern char **environ;


struct run_state {
	struct event_base	*base;
	struct sandbox_run	 run;
	int			 status;	/* our exit status, once known */
	int			 done;
	int			 timed_out;
	int			 aborted;	/* a stop signal was passed on */
	double			 timeout;
	struct guard_report	*report;	/* from the creation guard */
	struct event		*repev;
	struct jobs		*jobs;		/* the terminal's job control */
};

static void	run_signal_cb(evutil_socket_t, short, void *);
static void	run_timeout_cb(evutil_socket_t, short, void *);
static void	run_report_cb(evutil_socket_t, short, void *);
static char	*run_home(void);
static char	*run_cmdline(const struct run_opts *);
static void	run_report_write(const struct summary *, int, const char *);
static const char *run_bash(void);
static char	**run_shell_argv(const struct run_opts *, const char *);
static int	run_agent_files(struct sandbox *, const struct run_opts *,
		    struct agent_files *);
static int	run_access_log(const char *, const char *, const char *);

/* --report: every refusal as JSON, through the descriptor opened first. */
static void
run_report_write(const struct summary *sum, int fd, const char *path)
{
	FILE	*f;
	int	 dfd;

	if ((dfd = dup(fd)) == -1 || ftruncate(dfd, 0) == -1 ||
	    lseek(dfd, 0, SEEK_SET) == -1 || (f = fdopen(dfd, "w")) == NULL) {
		log_warn("--report %s", path);
		if (dfd != -1)
			close(dfd);
		return;
	}
	if (summary_json(sum, f) == -1 || fclose(f) == EOF)
		log_warnx("--report %s: cannot write every refusal", path);
}

/*
 * The command as a person would type it, for the terminal's question: the
 * -c line, or the words, each quoted only when the shell would need it.
 */
static char *
run_cmdline(const struct run_opts *o)
{
	char	*s = NULL, *p, *q;
	size_t	 i, len = 1;

	if (o->line != NULL)
		return strdup(o->line);
	for (i = 0; o->argv[i] != NULL; i++)
		len += SHELL_QUOTE_SIZE(strlen(o->argv[i])) + 1;
	if ((s = calloc(1, len)) == NULL)
		return NULL;
	for (i = 0, p = s; o->argv[i] != NULL; i++) {
		if (i > 0)
			*p++ = ' ';
		q = o->argv[i];
		if (q[0] != '\0' && q[strspn(q, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%")] == '\0') {
			memcpy(p, q, strlen(q) + 1);
			p += strlen(q);
		} else
			p = shell_quote(p, q);
	}
	return s;
}

static char *
run_home(void)
{
	const char	*h = getenv("HOME");
	struct passwd	*pw;

	if (h != NULL && h[0] == '/')
		return strdup(h);
	if ((pw = getpwuid(getuid())) != NULL && pw->pw_dir[0] == '/')
		return strdup(pw->pw_dir);
	return NULL;
}

/*
 * The shell for a command line: bash, whatever $SHELL says (agents write
 * bash: "[[", arrays, "source"); sh only where there is no bash.
 */
static const char *
run_bash(void)
{
	static const char *const shells[] = { "/bin/bash", "/usr/bin/bash" };
	size_t	i;

	for (i = 0; i < sizeof(shells) / sizeof(*shells); i++)
		if (access(shells[i], X_OK) == 0)
			return shells[i];
	return "/bin/sh";
}

/*
 * bash [OPTION...] [-l] -c LINE [$0 $1...], or NULL on no memory.  With
 * login_rc (rundir_login) an interactive login shell reads it as its
 * rcfile instead of being one: bash reads nothing after the profile of
 * an interactive login shell.
 */
static char **
run_shell_argv(const struct run_opts *o, const char *login_rc)
{
	char	**v;
	size_t	  n = 0, i, nargs = 0, nopts = 0;

	while (o->line_args != NULL && o->line_args[nargs] != NULL)
		nargs++;
	while (o->shopts != NULL && o->shopts[nopts] != NULL)
		nopts++;
	if ((v = calloc(nargs + nopts + 7, sizeof(*v))) == NULL)
		return NULL;
	v[n++] = (char *)run_bash();
	if (o->login && login_rc != NULL && o->interactive) {
		v[n++] = (char *)"--rcfile";
		v[n++] = (char *)login_rc;
	}
	for (i = 0; i < nopts; i++)
		v[n++] = o->shopts[i];
	if (o->login && (login_rc == NULL || !o->interactive))
		v[n++] = (char *)"-l";
	v[n++] = (char *)"-c";
	v[n++] = (char *)o->line;
	for (i = 0; i < nargs; i++)
		v[n++] = o->line_args[i];
	v[n] = NULL;
	return v;
}

/*
 * Open (create) the access log before the policy is built.  Its missing
 * directories are made, private: the trusted config named the file, and
 * a state directory that does not exist yet (~/.local/state/pisbx) must
 * not turn every command into a failure.  The path may lie where an
 * earlier command wrote (the workspace), so it is opened as
 * io_open_write does: no link, no FIFO.  A failure says what to do.
 */
static int
run_access_log(const char *path, const char *key, const char *config_file)
{
	char	 why[PATH_MAX + 256], where[PATH_MAX + 160];
	int	 fd;

	/* --access-log is on the command line; the key is in the config. */
	snprintf(where, sizeof(where), "%s%s%s", key, key[0] == '-' ? "" :
	    " in ", key[0] == '-' ? "" : config_file);
	if ((fd = io_open_write(path, O_WRONLY | O_APPEND | O_CREAT |
	    O_CLOEXEC, 0640, IO_MKDIRS, why, sizeof(why))) == -1) {
		log_warnx("access log (%s): %s; nothing was run", where, why);
		return -1;
	}
	close(fd);
	return 0;
}

/*
 * pisbx-sh: Claude Code's snapshot and cwd file around the line, seen
 * from the sandbox (read-only and writable) when they are exactly what
 * Claude Code writes; see agent.c.
 */
static int
run_agent_files(struct sandbox *sb, const struct run_opts *o,
    struct agent_files *af)
{
	char	buf[PATH_MAX];

	if (!o->agent || o->line == NULL)
		return 0;
	if (agent_line_parse(o->line, agent_claude_dir(buf, sizeof(buf)),
	    agent_tmp_dir(), af) == -1 || agent_files_prepare(af, sb->uid) ==
	    -1)
		return -1;
	if (af->snapshot != NULL && fs_plan_grant(&sb->plan, af->snapshot,
	    0) == -1)
		log_warn("not exposing %s", af->snapshot);
	if (af->cwd_file != NULL && fs_plan_grant(&sb->plan, af->cwd_file,
	    1) == -1)
		log_warn("not letting the command write %s", af->cwd_file);
	return 0;
}

/*
 * Signals of the parent, through a signalfd: the reaper's exit, and the
 * signals to pass on.  The command is in a process group of its own, so
 * one the terminal sent (SI_KERNEL) reached our group instead of the
 * command's and goes on to that whole group (jobs.c).
 */
static void
run_signal_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct run_state		*rs = arg;
	struct signalfd_siginfo		 si;
	int				 status;
	pid_t				 pid;

	(void)ev;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo != SIGCHLD) {
			if (si.ssi_signo != SIGTSTP && si.ssi_signo != SIGWINCH)
				rs->aborted = 1;
			if (rs->run.pid > 0)
				jobs_forward(rs->jobs, (int)si.ssi_signo,
				    si.ssi_code == SI_KERNEL);
			continue;
		}
		/*
		 * Only the sandbox's PID 1, by its pid: a reviewer is reaped
		 * through its pidfd by approval/, and a waitpid(-1) here
		 * would take its exit status first and turn an approval into
		 * an error.
		 */
		if (rs->run.pid > 0 &&
		    (pid = waitpid(rs->run.pid, &status, WNOHANG)) > 0) {
			if (rs->timed_out)
				rs->status = EXIT_TIMEOUT;
			else if (WIFEXITED(status))
				rs->status = WEXITSTATUS(status);
			else if (WIFSIGNALED(status))
				rs->status = 128 + WTERMSIG(status);
			rs->run.pid = -1;
			rs->done = 1;
			event_base_loopbreak(rs->base);
		}
	}
}

static void
run_timeout_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct run_state	*rs = arg;

	(void)fd;
	(void)ev;
	if (rs->run.pid <= 0)
		return;
	log_warnx("timed out after %g seconds; killing the sandbox",
	    rs->timeout);
	rs->timed_out = 1;
	/* The PID namespace's init: every process in it dies with it. */
	kill(rs->run.pid, SIGKILL);
}

/* The guard said something: keep it for the warnings at exit. */
static void
run_report_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct run_state	*rs = arg;

	(void)ev;
	/* At EOF the guard is gone; what is left is read at exit. */
	if (guard_report_read(rs->report, fd) != 1)
		event_del(rs->repev);
}

/* Run one command in a sandbox; returns pisbx-run's exit status. */
int
run_command(const struct run_opts *o)
{
	struct run_state	 rs;
	struct sandbox		 sb;
	struct proxy_opts	 popts;
	struct config_errors	 errs = { NULL, 0 };
	struct config		*conf = NULL;
	struct proxy		*proxy = NULL;
	struct event		*sigev = NULL, *tmev = NULL;
	struct agent_files	 af;
	struct fs_inputs	 fin;
	struct env_inputs	 ein;
	struct summary		*sum = NULL;
	const char		*env;
	char			*config_path = NULL, *home = NULL;
	char			*access_log = NULL, *git_proxy = NULL;
	char			*report_path = NULL, *cmdline = NULL;
	char			*login_rc = NULL;
	char			 config_file[PATH_MAX + 128];
	char			 cwd[PATH_MAX], exe[PATH_MAX], exe_dir[PATH_MAX];
	char			 label[64], **shargv = NULL, *end;
	sigset_t		 mask;
	struct timeval		 tv;
	size_t			 i;
	int			 ch, depth = 0, sfd = -1;
	int			 report[2] = { -1, -1 }, report_fd = -1;
	enum log_format		 fmt = o->fmt;
	/* Supervisor mode and the host-IPC fallback (supervise.h). */
	struct supervise	 sup;
	struct hostipc_tee	*tee = NULL;
	struct hostipc_outcome	 outcome;
	const struct config	*hconf = NULL;
	long long		 timeout_ms, started_ms = 0;
	char			 serr[512], why[PATH_MAX + 256];
	int			 supervised;

	memset(&rs, 0, sizeof(rs));
	memset(&sb, 0, sizeof(sb));
	memset(&af, 0, sizeof(af));
	rs.status = EXIT_SETUP;
	rs.timeout = o->timeout;
	rs.run.pid = -1;
	rs.run.sock = rs.run.listen_http = rs.run.listen_socks = -1;
	sb.report_fd = sb.tty = -1;
	sb.tty_hold[0] = sb.tty_hold[1] = sb.tty_hold[2] = -1;
	log_init(NULL, o->verbose);
	if (o->verbose)
		sb.times = timing_new();

	/*
	 * Inside a sandbox there is no way out but the outer proxy, and the
	 * seccomp filter refuses the mounts a nested sandbox would need.
	 */
	if ((env = getenv("PISBX_DEPTH")) != NULL)
		depth = atoi(env);
	/* The supervisor's variables leave the environment here. */
	if ((supervised = supervise_init(&sup, depth, serr, sizeof(serr))) ==
	    -1) {
		log_warnx("%s; nothing was run", serr);
		return 1;
	}
	timeout_ms = (long long)(rs.timeout * 1000);
	if (depth > 0 || ((env = getenv("PISBX_SANDBOX")) != NULL &&
	    strcmp(env, "1") == 0)) {
		log_warnx("already inside a pisbx sandbox (PISBX_DEPTH=%d): "
		    "nested sandboxes are not supported; run the command "
		    "directly, it is sandboxed already", depth);
		return EXIT_SETUP;
	}

	/*
	 * 1. The trusted config: fail before anything starts.  An environment
	 * variable outlives the directory it was set in: relative, it would
	 * name a file in each run's working directory, which earlier
	 * sandboxed commands could write.
	 */
	if (o->cli_config == NULL && (env = getenv("PISBX_CONFIG")) != NULL &&
	    env[0] != '\0' && env[0] != '/') {
		log_warnx("PISBX_CONFIG=%s: not an absolute path; a relative "
		    "one is looked up in each run's working directory, which "
		    "sandboxed commands can write; set it to an absolute path "
		    "(nothing was run)", env);
		supervise_clear(&sup);
		return EXIT_CONFIG;
	}
	config_path = config_find(o->cli_config);
	if ((conf = config_load(config_path, &errs)) == NULL) {
		for (i = 0; i < errs.n; i++)
			log_warnx("%s", errs.msg[i]);
		if (errs.n == 0)
			log_warnx("%s: cannot load the config",
			    config_path != NULL ? config_path : "(default)");
		log_warnx("%zu error%s in the config; nothing was run",
		    errs.n, errs.n == 1 ? "" : "s");
		config_errors_clear(&errs);
		free(config_path);
		return EXIT_CONFIG;
	}
	timing_mark(sb.times, TIMING_CONFIG);
	for (i = 0; i < conf->notes.n; i++)
		log_info("%s", conf->notes.msg[i]);
	/*
	 * The upstream proxy's password left the environment as the config
	 * was read; the review socket's capability leaves it now, before the
	 * sandbox's processes are forked: nothing this run starts inherits
	 * either, or can read them in /proc/PID/environ.
	 */
	(void)review_capability(conf);

	/* Valid but unable to do what they seem to: with -v. */
	for (i = 0; o->verbose && i < conf->warnings.n; i++)
		log_warnx("warning: %s", conf->warnings.v[i]);

	/* 2. The sandbox's description. */
	if (getcwd(exe, sizeof(exe)) == NULL || realpath(exe, cwd) == NULL) {
		log_warn("getcwd");
		goto fail;
	}
	/*
	 * The access log: the command line's, else the config's (absolute:
	 * the loader says so).  Known now, so the policy protects it.
	 */
	if (o->access_log != NULL) {
		if (strcmp(o->access_log, "-") == 0 ||
		    o->access_log[0] == '/')
			access_log = strdup(o->access_log);
		else if (asprintf(&access_log, "%s/%s", cwd,
		    o->access_log) == -1)
			access_log = NULL;
		if (access_log == NULL) {
			log_warn("--access-log");
			goto fail;
		}
	} else if (conf->access_log != NULL) {
		if ((access_log = strdup(conf->access_log)) == NULL) {
			log_warn("proxy.accessLog");
			goto fail;
		}
		if (!o->fmt_set)
			fmt = conf->access_log_text ? LOG_FORMAT_TEXT :
			    LOG_FORMAT_JSON;
	}
	/*
	 * What pisbx-run starts on the host (the reviewer) runs in /, never
	 * in the workspace: a relative file name in review.command must not
	 * find a file a sandboxed command wrote.  Everything below names
	 * paths absolutely.
	 */
	if (o->report != NULL && (o->report[0] == '/' ?
	    (report_path = strdup(o->report)) == NULL :
	    asprintf(&report_path, "%s/%s", cwd, o->report) == -1)) {
		report_path = NULL;
		log_warn("--report");
		goto fail;
	}
	if (config_path != NULL && config_path[0] != '/') {
		if (asprintf(&end, "%s/%s", cwd, config_path) == -1) {
			log_warn("--config");
			goto fail;
		}
		free(config_path);
		config_path = end;
	}
	if (chdir("/") == -1) {
		log_warn("chdir /");
		goto fail;
	}
	if (realpath("/proc/self/exe", exe) == NULL) {
		log_warn("/proc/self/exe");
		goto fail;
	}
	/* Registered before anything starts; refused: nothing runs. */
	if (supervised && supervise_register(&sup, conf, cwd, serr,
	    sizeof(serr)) == -1) {
		log_warnx("supervisor %s: %s; nothing was run", sup.socket,
		    serr);
		config_free(conf);
		free(config_path);
		supervise_clear(&sup);
		return 1;
	}
	ch = hostipc_preflight(conf, &sup, o->argv, o->line, cwd, timeout_ms);
	if (ch != -1) {
		rs.status = ch;
		goto done;
	}
	snprintf(exe_dir, sizeof(exe_dir), "%s", exe);
	if ((end = strrchr(exe_dir, '/')) != NULL)
		end[end == exe_dir ? 1 : 0] = '\0';
	home = run_home();
	sb.cwd = cwd;
	sb.uid = getuid();
	sb.gid = getgid();
	sb.userns = geteuid() != 0;
	sb.allow_all_unix = conf->allow_all_unix_sockets;
	sb.allow_userns = conf->allow_nested_userns;
	sb.allow_git_config = conf->allow_git_config;
	policy_hint_file(conf, config_file, sizeof(config_file));
	sb.config_file = config_file;
	sb.verbose = o->verbose;
	if (rundir_create(&sb) == -1) {
		log_warn("cannot create the private run directory");
		goto fail;
	}
	/*
	 * pisbx-sh -l: the profile resets PATH and the user's own, which
	 * builds it, is hidden; a file bash reads after them puts the
	 * caller's back (rundir_login).  bash only: sh has no such hook.
	 */
	if (o->line != NULL && o->login && !o->noprofile &&
	    strcmp(run_bash(), "/bin/sh") != 0 && (login_rc =
	    rundir_login(&sb, getenv("PATH"), getenv("BASH_ENV"))) == NULL) {
		log_warn("cannot create %s/login", sb.rundir);
		goto fail;
	}
	if (o->line != NULL) {
		if ((shargv = run_shell_argv(o, login_rc)) == NULL) {
			log_warn("shell arguments");
			goto fail;
		}
		sb.argv = shargv;
	} else
		sb.argv = o->argv;
	/*
	 * The access log exists before the policy is built, so the sandbox
	 * sees it bound read-only: it can neither write nor remove it.
	 */
	if (access_log != NULL && strcmp(access_log, "-") != 0 &&
	    run_access_log(access_log, o->access_log != NULL ?
	    "--access-log" : "proxy.accessLog", config_file) == -1)
		goto fail;
	/*
	 * The report too, and it is written through this descriptor: a
	 * name the command could replace later (a link to ~/.bashrc) is
	 * never opened again, and what an earlier command left at the path
	 * (a link, in the file's name or a directory's, a FIFO) is refused.
	 */
	if (report_path != NULL && (report_fd = io_open_write(report_path,
	    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644, 0, why,
	    sizeof(why))) == -1) {
		log_warnx("--report: %s; nothing was run", why);
		goto fail;
	}
	if ((sum = summary_new()) == NULL) {
		log_warn("summary");
		goto fail;
	}
	memset(&fin, 0, sizeof(fin));
	fin.cwd = cwd;
	fin.report = report_path;
	fin.home = home;
	fin.tmpdir = sb.tmpdir;
	fin.rundir = sb.rundir;
	fin.exe_dir = exe_dir;
	fin.config_path = config_path;
	fin.access_log = access_log;
	fin.supervisor_socket = sup.socket;
	fin.path = getenv("PATH");
	if ((ch = fs_plan_build(&sb.plan, conf, &fin)) != 0) {
		if (ch > 0) {
			rs.status = ch;
			goto done;
		}
		log_warnx("cannot resolve the filesystem policy");
		goto fail;
	}
	if (run_agent_files(&sb, o, &af) == -1) {
		log_warn("the agent's files");
		goto fail;
	}
	if (o->verbose)
		fs_plan_dump(&sb.plan);
	for (i = 0; i < sb.plan.nrules; i++) {
		if (sb.plan.rules[i].action == FS_HIDE &&
		    !sb.plan.rules[i].is_dir) {
			if (rundir_empty(&sb) == -1) {
				log_warn("cannot create %s", sb.empty);
				goto fail;
			}
			break;
		}
	}
	memset(&ein, 0, sizeof(ein));
	ein.tmpdir = sb.tmpdir;
	ein.self_exe = exe;
	ein.capability_env = conf->review_capability_env;
	ein.cache_dir = sb.plan.cache_dir;
	ein.caches = conf->fs_caches;
	ein.depth = depth;
	ein.bash_env = login_rc;
	ein.java_quiet = sb.plan.njava > 0;
	if ((git_proxy = rundir_git_proxy(&sb, exe)) == NULL) {
		log_warn("cannot create %s/git-proxy", sb.rundir);
		goto fail;
	}
	ein.git_proxy = git_proxy;
	if ((sb.ssh_config = rundir_ssh_config(&sb, exe)) == NULL &&
	    errno != ENOENT) {
		log_warn("cannot create %s/ssh_config", sb.rundir);
		goto fail;
	}
	if ((sb.envp = env_build(environ, &ein)) == NULL) {
		log_warn("environment");
		goto fail;
	}

	/*
	 * 3. The proxy's options (it owns the config once started).  The
	 * loop batches its epoll changes (proxy_base_new): safe here too,
	 * since no descriptor registered on it is ever dup()ed -- the
	 * signalfd, the guard's report pipe, the stderr copy's read end
	 * (hostipc.c dups fd 2, never registered) and the proxy's own.
	 */
	if ((rs.base = proxy_base_new()) == NULL) {
		log_warnx("cannot create the event loop");
		goto fail;
	}
	snprintf(label, sizeof(label), "pisbx-run-%ld", (long)getpid());
	memset(&popts, 0, sizeof(popts));
	popts.access_log = access_log;
	popts.log_format = fmt;
	popts.label = label;
	popts.cwd = cwd;
	popts.refused = summary_proxy_cb;
	popts.refused_arg = sum;
	if ((cmdline = run_cmdline(o)) == NULL) {
		log_warn("command line");
		goto fail;
	}
	popts.command = cmdline;
	if (sup.registered) {
		popts.label = sup.worker_id;
		popts.capability = sup.capability;
	}
	/* Borrowed for the host-IPC retry; the proxy frees it. */
	hconf = conf;
	if (conf->hostipc_mode == HOSTIPC_ASK && conf->hostipc_retry &&
	    (tee = hostipc_tee_begin()) == NULL) {
		log_warn("cannot watch the command's stderr");
		goto fail;
	}

	/*
	 * 4. The sandbox.  It builds its namespaces and mounts while the
	 * proxy starts here, and runs the command only after our "go".
	 */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGTSTP);
	sigaddset(&mask, SIGWINCH);
	/*
	 * Blocked, not read: we write to the terminal while the command's
	 * group holds it (tostop), and take it back (tcsetpgrp).
	 */
	sigaddset(&mask, SIGTTOU);
	sigprocmask(SIG_BLOCK, &mask, &sb.sigmask);
	sigdelset(&mask, SIGTTOU);
	if ((sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) == -1) {
		log_warn("signalfd");
		goto fail;
	}
	if ((rs.jobs = jobs_new(&sb, rs.base)) == NULL) {
		log_warn("job control");
		goto fail;
	}
	/*
	 * The guard's reports of repositories made during the run: one
	 * record a message, on a socket (a pipe could be reopened for
	 * writing through /proc/PID/fd).
	 */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    report) == -1 || fcntl(report[0], F_SETFL, O_NONBLOCK) == -1 ||
	    shutdown(report[0], SHUT_WR) == -1 ||
	    (rs.report = guard_report_new()) == NULL) {
		log_warn("socketpair");
		goto fail;
	}
	sb.report_fd = report[1];
	started_ms = hostipc_clock_ms();
	timing_mark(sb.times, TIMING_POLICY);
	ch = sandbox_start(&sb, &rs.run);
	close(report[1]);
	sb.report_fd = report[1] = -1;
	if (ch == -1)
		goto fail;
	if (jobs_start(rs.jobs, rs.run.pid, rs.run.sock) == -1) {
		log_warnx("cannot watch the command's job control");
		goto fail;
	}
	proxy = proxy_new(rs.base, conf, &popts);
	conf = NULL;
	if (proxy == NULL) {
		log_warnx("cannot start the proxy");
		goto fail;
	}
	if (tee != NULL && hostipc_tee_start(tee, rs.base) == -1) {
		log_warn("cannot copy the command's stderr");
		goto fail;
	}
	signal(SIGPIPE, SIG_IGN);
	if (proxy_listen_fd(proxy, rs.run.listen_http) == -1 ||
	    proxy_listen_fd(proxy, rs.run.listen_socks) == -1) {
		log_warnx("the proxy cannot serve the sandbox's listeners");
		goto fail;
	}
	rs.run.listen_http = rs.run.listen_socks = -1;	/* the proxy's now */
	/* EPIPE: the sandbox died already and said why; collect its status. */
	if (net_send_fds(rs.run.sock, CTL_GO, NULL, 0) == -1 && errno != EPIPE) {
		log_warn("cannot start the command");
		goto fail;
	}
	timing_mark(sb.times, TIMING_PROXY);

	/* Stale run directories of killed runs: while the command runs. */
	rundir_sweep();

	sigev = event_new(rs.base, sfd, EV_READ | EV_PERSIST, run_signal_cb,
	    &rs);
	if (sigev == NULL || event_add(sigev, NULL) == -1)
		goto fail;
	rs.repev = event_new(rs.base, report[0], EV_READ | EV_PERSIST,
	    run_report_cb, &rs);
	if (rs.repev == NULL || event_add(rs.repev, NULL) == -1)
		goto fail;
	if (rs.timeout > 0) {
		tv.tv_sec = (time_t)rs.timeout;
		tv.tv_usec = (suseconds_t)((rs.timeout - (double)tv.tv_sec) *
		    1e6);
		tmev = evtimer_new(rs.base, run_timeout_cb, &rs);
		if (tmev == NULL || evtimer_add(tmev, &tv) == -1)
			goto fail;
	}
	/* A SIGCHLD that came before the event was added. */
	run_signal_cb(sfd, EV_READ, &rs);
	if (!rs.done)
		event_base_dispatch(rs.base);
	timing_mark(sb.times, TIMING_REAPED);
	if (tee != NULL) {
		hostipc_tee_end(tee);
		/* 125: the sandbox itself failed; that is never retried. */
		outcome.exited = rs.status < 128 && rs.status != EXIT_SETUP;
		outcome.status = rs.status;
		outcome.timed_out = rs.timed_out;
		outcome.aborted = rs.aborted;
		rs.status = hostipc_after(hconf, &sup, &outcome, tee,
		    o->argv, o->line, cwd, timeout_ms,
		    hostipc_clock_ms() - started_ms, rs.status);
	} else if (!rs.timed_out && !rs.aborted)
		hostipc_hint(hconf, o->argv, o->line, rs.status);
	goto done;
fail:
	rs.status = EXIT_SETUP;
	if (rs.run.pid > 0) {
		kill(rs.run.pid, SIGKILL);
		while (waitpid(rs.run.pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
done:
	/* The terminal back to our group before anything more is said. */
	jobs_free(rs.jobs);
	rs.jobs = NULL;
	hostipc_tee_free(tee);
	/* Stop the proxy: close records written, the access log flushed. */
	if (proxy != NULL) {
		proxy_stop(proxy);
		proxy_free(proxy);
	}
	if (rs.run.listen_http != -1)
		close(rs.run.listen_http);
	if (rs.run.listen_socks != -1)
		close(rs.run.listen_socks);
	if (rs.run.sock != -1)
		close(rs.run.sock);
	if (sigev != NULL)
		event_free(sigev);
	if (rs.repev != NULL)
		event_free(rs.repev);
	if (tmev != NULL)
		event_free(tmev);
	if (rs.base != NULL)
		event_base_free(rs.base);
	if (sfd != -1)
		close(sfd);
	rundir_remove(sb.rundir);
	/* After the private TMPDIR went: repositories there are gone too. */
	if (report[0] != -1) {
		/* Every writer went with the sandbox: the rest is there. */
		if (rs.report != NULL) {
			(void)guard_report_read(rs.report, report[0]);
			guard_report_warn(rs.report, sum);
		}
		close(report[0]);
	}
	if (report[1] != -1)
		close(report[1]);
	guard_report_free(rs.report);
	/*
	 * What was refused and what would allow it: the command has exited,
	 * the proxy has stopped and the guard has said all, and our stderr
	 * is the command's, so an agent hands this to its model with the
	 * command's output.
	 */
	if (sum != NULL && !o->quiet)
		summary_print(sum, stderr, report_path, rs.status);
	if (sum != NULL && report_fd != -1)
		run_report_write(sum, report_fd, report_path);
	if (report_fd != -1)
		close(report_fd);
	summary_free(sum);
	free(report_path);
	free(cmdline);
	free(git_proxy);
	free(login_rc);
	free(sb.ssh_config);
	config_free(conf);
	fs_plan_free(&sb.plan);
	env_free(sb.envp);
	free(sb.rundir);
	free(sb.tmpdir);
	free(sb.empty);
	free(home);
	free(config_path);
	free(access_log);
	free(shargv);
	agent_files_done(&af);
	supervise_unregister(&sup);
	supervise_clear(&sup);
	timing_print(sb.times);
	timing_free(sb.times);
	return rs.status;
}
