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
	const struct run_opts	*o;
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
	struct control		*control;	/* --control-fd, or NULL */
	struct explain_srv	*explain;	/* --explain --run answers */

	/* What run_prepare builds, and run_finish frees. */
	struct sandbox		 sb;
	struct config		*conf;		/* the proxy's once started */
	const struct config	*hconf;		/* borrowed for host-IPC */
	struct proxy_opts	 popts;
	struct proxy		*proxy;
	struct event		*sigev, *tmev;
	struct agent_files	 af;
	struct summary		*sum;
	char			*config_path, *home, *access_log, *git_proxy;
	char			*report_path, *cmdline, *login_rc, **shargv;
	char			 config_file[PATH_MAX + 128];
	char			 cwd[PATH_MAX], exe[PATH_MAX];
	char			 exe_dir[PATH_MAX];
	char			 label[64];
	int			 depth, sfd, report_fd;
	int			 report_sock[2]; /* the guard's records */
	enum log_format		 fmt;
	/* Supervisor mode and the host-IPC fallback (supervise.h). */
	struct supervise	 sup;
	int			 supervised;
	struct hostipc_tee	*tee;
	long long		 timeout_ms, started_ms;
	struct gitinit		 gitinit;	/* a git init at the project */
	struct runsecrets		*secrets;	/* tlsTerminate, credentials */
};

/* Where a step of run_command leaves the run. */
enum run_step {
	RUN_NEXT,	/* on to the next step */
	RUN_FAIL,	/* the sandbox could not be built: kill, then finish */
	RUN_DONE,	/* finish with rs->status */
	RUN_RETURN	/* return rs->status, nothing to finish */
};

static void	run_signal_cb(evutil_socket_t, short, void *);
static void	run_timeout_cb(evutil_socket_t, short, void *);
static void	run_report_cb(evutil_socket_t, short, void *);
static char	*run_home(void);
static void	run_report_write(const struct summary *, int, const char *);
static int	run_agent_files(struct sandbox *, const struct run_opts *,
		    struct agent_files *);
static int	run_access_log(const char *, const char *, const char *);
static int	run_config(struct run_state *);
static enum run_step run_paths(struct run_state *);
static enum run_step run_prepare(struct run_state *);
static enum run_step run_start(struct run_state *);
static enum run_step run_serve(struct run_state *);
static void	run_finish(struct run_state *);

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
	sandbox_kill(&rs->sb, &rs->run);
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

/*
 * Run one command in a sandbox; returns pisbx-run's exit status, which
 * the caller exits with (the plan is not freed: run_finish).
 */
int
run_command(const struct run_opts *o)
{
	struct run_state	 rs;
	enum run_step		 step;
	int			 status;

	memset(&rs, 0, sizeof(rs));
	rs.o = o;
	rs.status = EXIT_SETUP;
	rs.timeout = o->timeout;
	rs.fmt = o->fmt;
	rs.run.pid = -1;
	rs.run.sock = rs.run.listen_http = rs.run.listen_socks = -1;
	rs.sfd = rs.report_fd = -1;
	rs.report_sock[0] = rs.report_sock[1] = -1;
	rs.sb.report_fd = rs.sb.tty = -1;
	rs.sb.tty_hold[0] = rs.sb.tty_hold[1] = rs.sb.tty_hold[2] = -1;
	log_init(NULL, o->verbose);
	if (o->verbose)
		rs.sb.times = timing_new();

	if ((status = run_config(&rs)) != -1)
		return status;
	step = run_paths(&rs);
	if (step == RUN_NEXT)
		step = run_prepare(&rs);
	if (step == RUN_NEXT)
		step = run_start(&rs);
	if (step == RUN_NEXT)
		step = run_serve(&rs);
	if (step == RUN_RETURN)
		return rs.status;
	if (step == RUN_FAIL) {
		rs.status = EXIT_SETUP;
		if (rs.run.pid > 0) {
			/* Before "go": the command never started. */
			kill(rs.run.pid, SIGKILL);
			while (waitpid(rs.run.pid, NULL, 0) == -1 &&
			    errno == EINTR)
				;
		}
	}
	run_finish(&rs);
	return rs.status;
}

/*
 * 1. Before anything starts: not inside a sandbox already, supervisor
 * mode, the trusted config.  -1 to go on, else the exit status (nothing
 * was made that needs undoing).
 */
static int
run_config(struct run_state *rs)
{
	const struct run_opts	*o = rs->o;
	struct config_errors	 errs = { NULL, 0 };
	const char		*env;
	char			 serr[512];
	size_t			 i;

	/*
	 * Inside a sandbox there is no way out but the outer proxy, and the
	 * seccomp filter refuses the mounts a nested sandbox would need.
	 */
	if ((env = getenv("PISBX_DEPTH")) != NULL)
		rs->depth = atoi(env);
	/* The supervisor's variables leave the environment here. */
	if ((rs->supervised = supervise_init(&rs->sup, rs->depth, serr,
	    sizeof(serr))) == -1) {
		log_warnx("%s; nothing was run", serr);
		return 1;
	}
	/*
	 * A control channel that cannot be read would drop every update,
	 * the tightening ones too: refuse to run instead.  In supervisor
	 * mode the supervisor's registration is the network policy.
	 */
	if (o->control_fd != -1 && (rs->supervised ||
	    control_check_fd(o->control_fd, serr, sizeof(serr)) == -1)) {
		if (rs->supervised)
			snprintf(serr, sizeof(serr), "the supervisor "
			    "(PISBX_SUPERVISOR_SOCKET) sets this run's network "
			    "policy; run without --control-fd");
		log_warnx("--control-fd %d: %s; nothing was run",
		    o->control_fd, serr);
		supervise_clear(&rs->sup);
		return EXIT_USAGE;
	}
	rs->timeout_ms = (long long)(rs->timeout * 1000);
	if (rs->depth > 0 || ((env = getenv("PISBX_SANDBOX")) != NULL &&
	    strcmp(env, "1") == 0)) {
		log_warnx("already inside a pisbx sandbox (PISBX_DEPTH=%d): "
		    "nested sandboxes are not supported; run the command "
		    "directly, it is sandboxed already", rs->depth);
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
		supervise_clear(&rs->sup);
		return EXIT_CONFIG;
	}
	rs->config_path = config_find(o->cli_config);
	if ((rs->conf = config_load_layer(rs->config_path,
	    o->cli_config != NULL ? LAYER_RUN : LAYER_USER, &errs)) == NULL) {
		for (i = 0; i < errs.n; i++)
			log_warnx("%s", errs.msg[i]);
		if (errs.n == 0)
			log_warnx("%s: cannot load the config",
			    rs->config_path != NULL ? rs->config_path :
			    "(default)");
		log_warnx("%zu error%s in the config; nothing was run",
		    errs.n, errs.n == 1 ? "" : "s");
		config_errors_clear(&errs);
		free(rs->config_path);
		return EXIT_CONFIG;
	}
	timing_mark(rs->sb.times, TIMING_CONFIG);
	for (i = 0; i < rs->conf->notes.n; i++)
		log_info("%s", rs->conf->notes.msg[i]);
	/*
	 * The upstream proxy's password left the environment as the config
	 * was read; the review socket's capability leaves it now, before the
	 * sandbox's processes are forked: nothing this run starts inherits
	 * either, or can read them in /proc/PID/environ.
	 */
	(void)review_capability(rs->conf);

	/* Valid but unable to do what they seem to: with -v. */
	for (i = 0; o->verbose && i < rs->conf->warnings.n; i++)
		log_warnx("warning: %s", rs->conf->warnings.v[i]);
	return -1;
}

/*
 * 2. The sandbox's description, first where things are: the working
 * directory, the access log, the report and the config as absolute
 * paths; our own executable; the supervisor's registration and the
 * host-IPC preflight, both of which may end the run here.
 */
static enum run_step
run_paths(struct run_state *rs)
{
	const struct run_opts	*o = rs->o;
	char			*end, serr[512];
	int			 ch;

	/* 2. The sandbox's description. */
	if (getcwd(rs->exe, sizeof(rs->exe)) == NULL ||
	    realpath(rs->exe, rs->cwd) == NULL) {
		log_warn("getcwd");
		return RUN_FAIL;
	}
	/*
	 * The access log: the command line's, else the config's (absolute:
	 * the loader says so).  Known now, so the policy protects it.
	 */
	if (o->access_log != NULL) {
		if (strcmp(o->access_log, "-") == 0 ||
		    o->access_log[0] == '/')
			rs->access_log = strdup(o->access_log);
		else if (asprintf(&rs->access_log, "%s/%s", rs->cwd,
		    o->access_log) == -1)
			rs->access_log = NULL;
		if (rs->access_log == NULL) {
			log_warn("--access-log");
			return RUN_FAIL;
		}
	} else if (rs->conf->access_log != NULL) {
		if ((rs->access_log = strdup(rs->conf->access_log)) == NULL) {
			log_warn("proxy.accessLog");
			return RUN_FAIL;
		}
		if (!o->fmt_set)
			rs->fmt = rs->conf->access_log_text ? LOG_FORMAT_TEXT :
			    LOG_FORMAT_JSON;
	}
	/*
	 * What pisbx-run starts on the host (the reviewer) runs in /, never
	 * in the workspace: a relative file name in review.command must not
	 * find a file a sandboxed command wrote.  Everything below names
	 * paths absolutely.
	 */
	if (o->report != NULL && (o->report[0] == '/' ?
	    (rs->report_path = strdup(o->report)) == NULL :
	    asprintf(&rs->report_path, "%s/%s", rs->cwd, o->report) == -1)) {
		rs->report_path = NULL;
		log_warn("--report");
		return RUN_FAIL;
	}
	if (rs->config_path != NULL && rs->config_path[0] != '/') {
		if (asprintf(&end, "%s/%s", rs->cwd, rs->config_path) == -1) {
			log_warn("--config");
			return RUN_FAIL;
		}
		free(rs->config_path);
		rs->config_path = end;
	}
	if (chdir("/") == -1) {
		log_warn("chdir /");
		return RUN_FAIL;
	}
	if (realpath("/proc/self/exe", rs->exe) == NULL) {
		log_warn("/proc/self/exe");
		return RUN_FAIL;
	}
	/* Registered before anything starts; refused: nothing runs. */
	if (rs->supervised && supervise_register(&rs->sup, rs->conf,
	    rs->cwd, serr, sizeof(serr)) == -1) {
		log_warnx("supervisor %s: %s; nothing was run", rs->sup.socket,
		    serr);
		config_free(rs->conf);
		free(rs->config_path);
		supervise_clear(&rs->sup);
		rs->status = 1;
		return RUN_RETURN;
	}
	ch = hostipc_preflight(rs->conf, &rs->sup, o->argv, o->line, rs->cwd,
	    rs->timeout_ms);
	if (ch != -1) {
		rs->status = ch;
		return RUN_DONE;
	}
	return RUN_NEXT;
}

/*
 * 2, continued: the run directory, the shell's arguments, the access
 * log and the report opened, the filesystem plan, the environment.
 */
static enum run_step
run_prepare(struct run_state *rs)
{
	const struct run_opts	*o = rs->o;
	struct fs_inputs	 fin;
	struct env_inputs	 ein;
	char			*end, why[PATH_MAX + 256];
	size_t			 i;
	int			 ch;

	snprintf(rs->exe_dir, sizeof(rs->exe_dir), "%s", rs->exe);
	if ((end = strrchr(rs->exe_dir, '/')) != NULL)
		end[end == rs->exe_dir ? 1 : 0] = '\0';
	rs->home = run_home();
	rs->sb.cwd = rs->cwd;
	rs->sb.uid = getuid();
	rs->sb.gid = getgid();
	rs->sb.userns = geteuid() != 0;
	rs->sb.allow_all_unix = rs->conf->allow_all_unix_sockets;
	seccomp_sends(&rs->sb, rs->conf->allow_unix_sockets.n,
	    rs->conf->allow_unix_datagram_sockets);
	rs->sb.allow_userns = rs->conf->allow_nested_userns;
	rs->sb.require_ns = rs->conf->require_namespaces || o->require_ns;
	rs->sb.allow_git_config = rs->conf->allow_git_config;
	policy_hint_file(rs->conf, rs->config_file, sizeof(rs->config_file));
	rs->sb.config_file = rs->config_file;
	rs->sb.verbose = o->verbose;
	if (rundir_create(&rs->sb) == -1) {
		log_warn("cannot create the private run directory");
		return RUN_FAIL;
	}
	/*
	 * pisbx-sh -l: the profile resets PATH and the user's own, which
	 * builds it, is hidden; a file bash reads after them puts the
	 * caller's back (rundir_login).  bash only: sh has no such hook.
	 */
	if (o->line != NULL && o->login && !o->noprofile &&
	    strcmp(run_bash(), "/bin/sh") != 0 && (rs->login_rc =
	    rundir_login(&rs->sb, getenv("PATH"), getenv("BASH_ENV"))) ==
	    NULL) {
		log_warn("cannot create %s/login", rs->sb.rundir);
		return RUN_FAIL;
	}
	if (o->line != NULL) {
		if ((rs->shargv = run_shell_argv(o, rs->login_rc)) == NULL) {
			log_warn("shell arguments");
			return RUN_FAIL;
		}
		rs->sb.argv = rs->shargv;
	} else
		rs->sb.argv = o->argv;
	/*
	 * The access log exists before the policy is built, so the sandbox
	 * sees it bound read-only: it can neither write nor remove it.
	 */
	if (rs->access_log != NULL && strcmp(rs->access_log, "-") != 0 &&
	    run_access_log(rs->access_log, o->access_log != NULL ?
	    "--access-log" : "proxy.accessLog", rs->config_file) == -1)
		return RUN_FAIL;
	/*
	 * The report too, and it is written through this descriptor: a
	 * name the command could replace later (a link to ~/.bashrc) is
	 * never opened again, and what an earlier command left at the path
	 * (a link, in the file's name or a directory's, a FIFO) is refused.
	 */
	if (rs->report_path != NULL && (rs->report_fd =
	    io_open_write(rs->report_path, O_WRONLY | O_CREAT | O_TRUNC |
	    O_CLOEXEC, 0644, 0, why, sizeof(why))) == -1) {
		log_warnx("--report: %s; nothing was run", why);
		return RUN_FAIL;
	}
	if ((rs->sum = summary_new()) == NULL) {
		log_warn("summary");
		return RUN_FAIL;
	}
	/*
	 * TLS termination and credentials: the placeholders, masked copies
	 * and CA bundle before the plan that shows them and the environment
	 * that names them.
	 */
	if ((ch = runsecrets_prepare(rs->conf, &rs->sb.files, rs->home,
	    &rs->secrets)) != 0) {
		rs->status = ch;
		return RUN_DONE;
	}
	memset(&fin, 0, sizeof(fin));
	fin.cwd = rs->cwd;
	fin.report = rs->report_path;
	fin.home = rs->home;
	fin.tmpdir = rs->sb.tmpdir;
	fin.rundir = rs->sb.rundir;
	fin.files = &rs->sb.files;
	fin.exe_dir = rs->exe_dir;
	fin.config_path = rs->config_path;
	fin.access_log = rs->access_log;
	fin.supervisor_socket = rs->sup.socket;
	fin.path = getenv("PATH");
	runsecrets_fs(rs->secrets, &fin);
	if ((ch = fs_plan_build(&rs->sb.plan, rs->conf, &fin)) != 0) {
		if (ch > 0) {
			rs->status = ch;
			return RUN_DONE;
		}
		log_warnx("cannot resolve the filesystem policy");
		return RUN_FAIL;
	}
	if ((ch = managed_run_check(rs->conf, &rs->sb.plan, rs->cwd)) != 0) {
		rs->status = ch;
		return RUN_DONE;
	}
	if (run_agent_files(&rs->sb, o, &rs->af) == -1) {
		log_warn("the agent's files");
		return RUN_FAIL;
	}
	if (o->verbose)
		fs_plan_dump(&rs->sb.plan);
	for (i = 0; i < rs->sb.plan.nrules; i++) {
		if (rs->sb.plan.rules[i].action == FS_HIDE &&
		    !rs->sb.plan.rules[i].is_dir) {
			if (rundir_empty(&rs->sb) == -1) {
				log_warn("cannot create %s/empty",
				    rs->sb.rundir);
				return RUN_FAIL;
			}
			break;
		}
	}
	memset(&ein, 0, sizeof(ein));
	ein.tmpdir = rs->sb.tmpdir;
	ein.self_exe = rs->exe;
	ein.capability_env = rs->conf->review_capability_env;
	ein.cache_dir = rs->sb.plan.cache_dir;
	ein.caches = rs->conf->fs_caches;
	ein.depth = rs->depth;
	ein.bash_env = rs->login_rc;
	ein.java_quiet = rs->sb.plan.njava > 0;
	/* A host tmux reachable, or run there by host-IPC: the caller's. */
	ein.tmux_private = !rs->conf->allow_all_unix_sockets &&
	    rs->conf->allow_unix_sockets.n == 0 &&
	    rs->conf->hostipc_mode != HOSTIPC_ASK;
	if ((rs->git_proxy = rundir_git_proxy(&rs->sb, rs->exe)) == NULL) {
		log_warn("cannot create %s/git-proxy", rs->sb.rundir);
		return RUN_FAIL;
	}
	ein.git_proxy = rs->git_proxy;
	runsecrets_env(rs->secrets, &ein);
	runsecrets_sandbox(rs->secrets, &rs->sb);
	if ((rs->sb.ssh_config = rundir_ssh_config(&rs->sb, rs->exe)) == NULL &&
	    errno != ENOENT) {
		log_warn("cannot create %s/ssh_config", rs->sb.rundir);
		return RUN_FAIL;
	}
	if ((rs->sb.envp = env_build(environ, &ein)) == NULL) {
		log_warn("environment");
		return RUN_FAIL;
	}
	return RUN_NEXT;
}

/*
 * 3 and 4: the proxy's options, then the sandbox, the proxy on its
 * listeners, and the "go".
 */
static enum run_step
run_start(struct run_state *rs)
{
	const struct run_opts	*o = rs->o;
	sigset_t		 mask;
	int			 ch;

	/*
	 * 3. The proxy's options (it owns the config once started).  The
	 * loop batches its epoll changes (proxy_base_new): safe here too,
	 * since no descriptor registered on it is ever dup()ed -- the
	 * signalfd, the guard's report pipe, the stderr copy's read end
	 * (hostipc.c dups fd 2, never registered) and the proxy's own.
	 */
	if ((rs->base = proxy_base_new()) == NULL) {
		log_warnx("cannot create the event loop");
		return RUN_FAIL;
	}
	snprintf(rs->label, sizeof(rs->label), "pisbx-run-%ld", (long)getpid());
	memset(&rs->popts, 0, sizeof(rs->popts));
	rs->popts.access_log = rs->access_log;
	rs->popts.log_format = rs->fmt;
	rs->popts.label = rs->label;
	rs->popts.cwd = rs->cwd;
	rs->popts.refused = summary_proxy_cb;
	rs->popts.refused_arg = rs->sum;
	rs->popts.injected = summary_injected_cb;
	rs->popts.injected_arg = rs->sum;
	rs->popts.one_client = 1;	/* the run, whatever its address */
	runsecrets_proxy(rs->secrets, &rs->popts);
	if ((rs->cmdline = run_cmdline(o)) == NULL) {
		log_warn("command line");
		return RUN_FAIL;
	}
	rs->popts.command = rs->cmdline;
	if (rs->sup.registered) {
		rs->popts.label = rs->sup.worker_id;
		rs->popts.capability = rs->sup.capability;
	}
	/* Borrowed for the host-IPC retry; the proxy frees it. */
	rs->hconf = rs->conf;
	if (rs->conf->hostipc_mode == HOSTIPC_ASK && rs->conf->hostipc_retry &&
	    (rs->tee = hostipc_tee_begin()) == NULL) {
		log_warn("cannot watch the command's stderr");
		return RUN_FAIL;
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
	sigprocmask(SIG_BLOCK, &mask, &rs->sb.sigmask);
	sigdelset(&mask, SIGTTOU);
	if ((rs->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) == -1) {
		log_warn("signalfd");
		return RUN_FAIL;
	}
	if ((rs->jobs = jobs_new(&rs->sb, rs->base)) == NULL) {
		log_warn("job control");
		return RUN_FAIL;
	}
	/*
	 * The guard's reports of repositories made during the run: one
	 * record a message, on a socket (a pipe could be reopened for
	 * writing through /proc/PID/fd).
	 */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    rs->report_sock) == -1 ||
	    fcntl(rs->report_sock[0], F_SETFL, O_NONBLOCK) == -1 ||
	    shutdown(rs->report_sock[0], SHUT_WR) == -1 ||
	    (rs->report = guard_report_new()) == NULL) {
		log_warn("socketpair");
		return RUN_FAIL;
	}
	rs->sb.report_fd = rs->report_sock[1];
	rs->started_ms = hostipc_clock_ms();
	gitinit_start(&rs->sb.plan, &rs->gitinit);
	timing_mark(rs->sb.times, TIMING_POLICY);
	ch = sandbox_start(&rs->sb, &rs->run);
	close(rs->report_sock[1]);
	rs->sb.report_fd = rs->report_sock[1] = -1;
	if (ch == -1)
		return RUN_FAIL;
	runsecrets_started(rs->secrets, rs->sb.nons);
	if (o->verbose)
		seccomp_sends_say(&rs->sb);
	if (jobs_start(rs->jobs, rs->run.pid, rs->run.sock) == -1) {
		log_warnx("cannot watch the command's job control");
		return RUN_FAIL;
	}
	rs->proxy = proxy_new(rs->base, rs->conf, &rs->popts);
	rs->conf = NULL;
	if (rs->proxy == NULL) {
		log_warnx("cannot start the proxy");
		return RUN_FAIL;
	}
	if (rs->tee != NULL && hostipc_tee_start(rs->tee, rs->base) == -1) {
		log_warn("cannot copy the command's stderr");
		return RUN_FAIL;
	}
	signal(SIGPIPE, SIG_IGN);
	if (proxy_listen_fd(rs->proxy, rs->run.listen_http) == -1 ||
	    proxy_listen_fd(rs->proxy, rs->run.listen_socks) == -1) {
		log_warnx("the proxy cannot serve the sandbox's listeners");
		return RUN_FAIL;
	}
	/* The proxy's now. */
	rs->run.listen_http = rs->run.listen_socks = -1;
	/* Updates written before the command starts apply before it reads. */
	if (o->control_fd != -1 && (rs->control = control_start(rs->base,
	    o->control_fd, rs->proxy)) == NULL) {
		log_warnx("--control-fd %d: cannot watch it", o->control_fd);
		return RUN_FAIL;
	}
	rs->explain = explain_listen(rs->base, rs->sb.rundir, rs->proxy,
	    &rs->sup, rs->config_path);
	/* EPIPE: the sandbox died already and said why; collect its status. */
	if (net_send_fds(rs->run.sock, CTL_GO, NULL, 0) == -1 &&
	    errno != EPIPE) {
		log_warn("cannot start the command");
		return RUN_FAIL;
	}
	timing_mark(rs->sb.times, TIMING_PROXY);
	return RUN_NEXT;
}

/*
 * The loop, until the sandbox's PID 1 is reaped (or the timeout killed
 * it); then what the host-IPC fallback makes of the status.
 */
static enum run_step
run_serve(struct run_state *rs)
{
	const struct run_opts	*o = rs->o;
	struct hostipc_outcome	 outcome;
	struct timeval		 tv;

	/* Stale run directories of killed runs: while the command runs. */
	rundir_sweep();

	rs->sigev = event_new(rs->base, rs->sfd, EV_READ | EV_PERSIST,
	    run_signal_cb, rs);
	if (rs->sigev == NULL || event_add(rs->sigev, NULL) == -1)
		return RUN_FAIL;
	rs->repev = event_new(rs->base, rs->report_sock[0],
	    EV_READ | EV_PERSIST, run_report_cb, rs);
	if (rs->repev == NULL || event_add(rs->repev, NULL) == -1)
		return RUN_FAIL;
	if (rs->timeout > 0) {
		tv.tv_sec = (time_t)rs->timeout;
		tv.tv_usec = (suseconds_t)((rs->timeout - (double)tv.tv_sec) *
		    1e6);
		rs->tmev = evtimer_new(rs->base, run_timeout_cb, rs);
		if (rs->tmev == NULL || evtimer_add(rs->tmev, &tv) == -1)
			return RUN_FAIL;
	}
	/* A SIGCHLD that came before the event was added. */
	run_signal_cb(rs->sfd, EV_READ, rs);
	if (!rs->done)
		event_base_dispatch(rs->base);
	timing_mark(rs->sb.times, TIMING_REAPED);
	/*
	 * The sandbox is gone: read the project's new repository now, before
	 * host-IPC may run the command again on the host, whose own git init
	 * is the user's.
	 */
	gitinit_finish(&rs->gitinit);
	/* The config in force: a --control-fd line may have replaced it. */
	rs->hconf = proxy_config(rs->proxy);
	if (rs->tee != NULL) {
		hostipc_tee_end(rs->tee);
		/* A retry on the host runs with the caller's credentials. */
		runsecrets_restore_env(rs->secrets);
		/* 125: the sandbox itself failed; that is never retried. */
		outcome.exited = rs->status < 128 && rs->status != EXIT_SETUP;
		outcome.status = rs->status;
		outcome.timed_out = rs->timed_out;
		outcome.aborted = rs->aborted;
		rs->status = hostipc_after(rs->hconf, &rs->sup, &outcome,
		    rs->tee, o->argv, o->line, rs->cwd, rs->timeout_ms,
		    hostipc_clock_ms() - rs->started_ms, rs->status);
	} else if (!rs->timed_out && !rs->aborted)
		hostipc_hint(rs->hconf, o->argv, o->line, rs->status);
	return RUN_DONE;
}

/*
 * Everything the run made, undone in order: the terminal, the proxy
 * (close records written), the loop, the run directory; then the
 * guard's records and the refusal summary.
 */
static void
run_finish(struct run_state *rs)
{
	const struct run_opts	*o = rs->o;

	/* The terminal back to our group before anything more is said. */
	jobs_free(rs->jobs);
	rs->jobs = NULL;
	hostipc_tee_free(rs->tee);
	/*
	 * The guard's loopback records need the config, which goes with
	 * the proxy: read them first (the command is gone, so they are all
	 * there, and the other records stay for guard_report_warn).
	 */
	if (rs->report != NULL && rs->report_sock[0] != -1) {
		(void)guard_report_read(rs->report, rs->report_sock[0]);
		guard_report_loopback(rs->report, rs->sum, rs->proxy != NULL ?
		    rs->hconf : rs->conf);
	}
	control_free(rs->control);
	explain_free(rs->explain);
	/* Stop the proxy: close records written, the access log flushed. */
	if (rs->proxy != NULL) {
		proxy_stop(rs->proxy);
		proxy_free(rs->proxy);
	}
	/* The proxy used them to its end: the CA and values go now. */
	runsecrets_free(rs->secrets);
	rs->secrets = NULL;
	if (rs->run.listen_http != -1)
		close(rs->run.listen_http);
	if (rs->run.listen_socks != -1)
		close(rs->run.listen_socks);
	if (rs->run.sock != -1)
		close(rs->run.sock);
	if (rs->sigev != NULL)
		event_free(rs->sigev);
	if (rs->repev != NULL)
		event_free(rs->repev);
	if (rs->tmev != NULL)
		event_free(rs->tmev);
	if (rs->base != NULL)
		event_base_free(rs->base);
	if (rs->sfd != -1)
		close(rs->sfd);
	rundir_remove(rs->sb.rundir);
	/* When the run failed before run_serve read it (else a no-op). */
	gitinit_finish(&rs->gitinit);
	/* After the private TMPDIR went: repositories there are gone too. */
	if (rs->report_sock[0] != -1) {
		/* Every writer went with the sandbox: the rest is there. */
		if (rs->report != NULL) {
			(void)guard_report_read(rs->report, rs->report_sock[0]);
			guard_report_warn(rs->report, rs->sum);
		}
		close(rs->report_sock[0]);
	}
	if (rs->report_sock[1] != -1)
		close(rs->report_sock[1]);
	guard_report_free(rs->report);
	/*
	 * What was refused and what would allow it: the command has exited,
	 * the proxy has stopped and the guard has said all, and our stderr
	 * is the command's, so an agent hands this to its model with the
	 * command's output.
	 */
	if (rs->sum != NULL && !o->quiet)
		summary_print(rs->sum, stderr, rs->report_path, rs->status,
		    o->agent);
	if (rs->sum != NULL && !o->quiet && o->verbose)
		summary_print_injected(rs->sum, stderr);
	if (rs->sum != NULL && rs->report_fd != -1)
		run_report_write(rs->sum, rs->report_fd, rs->report_path);
	if (rs->report_fd != -1)
		close(rs->report_fd);
	summary_free(rs->sum);
	free(rs->report_path);
	free(rs->cmdline);
	free(rs->git_proxy);
	free(rs->login_rc);
	free(rs->sb.ssh_config);
	config_free(rs->conf);
#ifdef __SANITIZE_ADDRESS__
	/*
	 * The process ends next: freeing the plan's thousands of paths only
	 * writes its pages again (some 15 page faults a start).  Under
	 * AddressSanitizer it is freed, so that a leak is still seen.
	 */
	fs_plan_free(&rs->sb.plan);
#endif
	env_free(rs->sb.envp);
	free(rs->sb.rundir);
	free(rs->sb.tmpdir);
	free(rs->sb.empty);
	fs_runfiles_clear(&rs->sb.files);
	free(rs->home);
	free(rs->config_path);
	free(rs->access_log);
	free(rs->shargv);
	agent_files_done(&rs->af);
	supervise_unregister(&rs->sup);
	supervise_clear(&rs->sup);
	timing_print(rs->sb.times);
	timing_free(rs->sb.times);
}
