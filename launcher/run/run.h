/*
 * launcher/run/: the parent, on the host, around the libevent loop that
 * serves the proxy: the run itself, from config to exit status (run.c),
 * supervisor mode (supervise.c) and the host-IPC fallback (hostipc.c)
 * before the sandbox starts and after it ended, the per-run directory
 * (rundir.c), the command's environment (env.c) and its shell line
 * (shell.c), the command as a job
 * of the caller's terminal (jobs.c), the reader of the guard's records
 * (guard_report.c), the repository a git init made at the project
 * directory (gitinit.c), the summary of what was refused (summary.c),
 * policy updates while the command runs (control.c), the run's socket
 * (explain.c) and the managed layer's word on the run (managed.c).
 * None of it runs inside the sandbox.
 */
#ifndef PISBX_LAUNCHER_RUN_H
#define PISBX_LAUNCHER_RUN_H

#include <sys/types.h>
#include <sys/stat.h>

#include <stddef.h>
#include <stdio.h>

#include "policy/policy.h"
#include "approval/approval.h"
#include "proxy/proxy.h"

struct event;
struct event_base;
struct sandbox;

/* run.c */
/* What to run and how: from pisbx-run's options, or pisbx-sh's. */
struct run_opts {
	const char	*cli_config;
	const char	*access_log;	/* NULL: the config's */
	enum log_format	 fmt;
	int		 fmt_set;	/* --log-format given */
	double		 timeout;
	int		 verbose;
	char		*const *argv;	/* the command, or NULL with line */
	const char	*line;		/* a command line for bash -c */
	char		*const *line_args; /* bash's $0, $1... after line */
	char		**shopts;	/* bash's own options (-e, -o pipefail) */
	int		 login;		/* bash -l, the caller's PATH kept */
	int		 interactive;	/* bash -i */
	int		 noprofile;	/* bash --noprofile */
	int		 agent;		/* pisbx-sh: an agent's bookkeeping */
	int		 quiet;		/* no refusal summary at exit */
	const char	*report;	/* --report FILE, or NULL */
	int		 control_fd;	/* --control-fd N, or -1 */
	int		 require_ns;	/* --require-namespaces */
};

/* One command in a sandbox; returns pisbx-run's exit status. */
int	 run_command(const struct run_opts *);

/* control.c: --control-fd, policy updates while the command runs */
#define CONTROL_LINE_MAX	(1024 * 1024)	/* octets of one line */
struct control;
/*
 * Whether fd can be the control descriptor: open, readable, a pipe or a
 * socket; made close-on-exec.  0, or -1 with err set.
 */
int	 control_check_fd(int fd, char *err, size_t errlen);
/* Apply each line read from fd on base to px's config from now on. */
struct control *control_start(struct event_base *, int fd, struct proxy *);
void	 control_free(struct control *);
/*
 * How many keys line (a new config) changes that the running command
 * fixed at start (run: the config in force); each is said on stderr,
 * prefixed with name.
 */
int	 control_fixed(const struct config *run, const struct config *line,
	    const char *name);

/* explain.c: --explain HOST[:PORT] --run PID, asked of a running run */
struct explain_srv;
/*
 * The run's socket, at rundir + ".sock": --explain questions about px's
 * policy and approvals, and (in supervisor mode, sup registered) the
 * supervisor's pushed policies (supervise_push).  NULL when it cannot be
 * made (the run goes on).
 */
struct supervise;
struct explain_srv *explain_listen(struct event_base *, const char *rundir,
	    struct proxy *, struct supervise *, const char *config_path);
void	 explain_free(struct explain_srv *);
/* The client: print the answer of the run with that pid.  0, 1 or 2. */
int	 explain_running(const char *pid, const char *target);

/* managed.c */
struct fs_plan;
/*
 * What the managed file says of a run once its project is known:
 * entries relative to it, and the working directory (always readable)
 * and workspace (writable), neither of which may lie in a path it
 * denies.  0 to go on, else EXIT_CONFIG after saying why.
 */
int	 managed_run_check(const struct config *, const struct fs_plan *,
	    const char *cwd);

/* supervise.c */
struct supervise {
	char		*socket;	/* PISBX_SUPERVISOR_SOCKET */
	char		*capability;	/* ..._CAPABILITY */
	char		 worker_id[REVIEW_ID_LEN + 1];
	char		*cwd;
	char		*policy_file;	/* the registration's policyFile */
	int		 timeout_ms;
	int		 registered;
};

/*
 * Take the supervisor variables out of the environment (they never reach
 * the sandbox).  Returns 0 when they are absent (no supervisor mode), 1
 * when set, -1 with a message in err when pisbx-run must refuse to run:
 * only one of them set, or inside a sandbox (depth > 0), where the
 * supervisor's socket cannot be reached.
 */
int	 supervise_init(struct supervise *, int depth, char *err,
	    size_t errlen);
/*
 * Register with the supervisor and make its policy the run's whole
 * network policy, its socket the reviewer (conf is changed; the caller
 * passes s->capability and s->worker_id to the proxy).  A registration
 * that allows without a usable policy denies every destination and
 * warns.  Returns -1 with err set when the command must not start.
 */
int	 supervise_register(struct supervise *, struct config *,
	    const char *cwd, char *err, size_t errlen);
/*
 * A policy the supervisor pushed to this run on its socket (one JSON
 * line: type "policy", the capability, a network object): checked like
 * the registration's, put into the trusted config loaded again
 * (config_path), held to the keys fixed at start against px's config in
 * force, then px's config.  0, or -1 with err set (nothing changed).
 */
int	 supervise_push(struct supervise *, const char *config_path,
	    struct proxy *px, const char *line, size_t len, char *err,
	    size_t errlen);
/* Unregister once (a no-op unless registered); warns on failure. */
void	 supervise_unregister(struct supervise *);
void	 supervise_clear(struct supervise *);

/* hostipc.c */
#define HOSTIPC_TAIL_MAX	(64 * 1024)	/* stderr kept */
#define HOSTIPC_EXIT_DENIED	1

/* The last HOSTIPC_TAIL_MAX octets of what the command wrote to stderr. */
struct hostipc_tail {
	char	 buf[HOSTIPC_TAIL_MAX];
	size_t	 len;
};

/* How a sandboxed run ended, for the retry decision. */
struct hostipc_outcome {
	int	 exited;	/* ended by exit(), not a signal */
	int	 status;	/* exit status when exited */
	int	 timed_out;	/* --timeout fired */
	int	 aborted;	/* pisbx-run was told to stop (signal) */
};

/*
 * The prefix the trimmed command text starts with, where the prefix must
 * end at whitespace or the end of the text; NULL when none matches.
 */
const char *hostipc_match(const struct strlist *prefixes, const char *text);
/*
 * Whether stderr text reports "Operation not permitted" about a socket,
 * connect or IPC operation (on the same line or the two before it).
 */
int	 hostipc_eperm_ipc(const char *buf, size_t len);
/*
 * The prefix whose program (its first word, without a directory) both
 * runs in the command text and is named on a stderr line saying "Read-only
 * file system": tmux's first use, which makes its socket directory
 * (/tmp/tmux-UID) before it connects.  NULL when none.
 */
const char *hostipc_erofs_prog(const char *buf, size_t len,
	    const struct strlist *prefixes, const char *text);

/* Why a sandboxed run may be retried on the host. */
enum hostipc_retry {
	HOSTIPC_NO_RETRY,
	HOSTIPC_RETRY_EPERM,	/* a refused socket operation */
	HOSTIPC_RETRY_EROFS	/* a listed program's socket directory */
};
/*
 * Whether a finished sandboxed run may be reviewed for a host retry:
 * non-zero exit (not a signal), not timed out, not aborted, and stderr
 * naming a refused socket operation (hostipc_eperm_ipc), or a listed
 * program that could not make its socket directory (hostipc_erofs_prog,
 * whose prefix is put in *prefix).
 */
enum hostipc_retry hostipc_should_retry(const struct hostipc_outcome *,
	    const char *stderr_tail, size_t len, const struct strlist *prefixes,
	    const char *text, const char **prefix);
/*
 * After a failed run whose text runs sudo (doas, pkexec, run0): one line
 * on stderr saying no privileges are gained in the sandbox.  With
 * hostIPC off and no Unix socket allowed, when it runs a program that
 * lives on a host socket (tmux, docker...): one line saying which
 * settings let it work.
 */
void	 hostipc_hint(const struct config *, char *const argv[],
	    const char *shell_string, int status);
/*
 * What is left of a timeout of total_ms after elapsed_ms: total_ms 0 (no
 * timeout) gives 0; nothing left gives -1.
 */
long long hostipc_remaining_ms(long long total_ms, long long elapsed_ms);
/*
 * The command text a reviewer is shown and prefixes are matched against:
 * the -c string as given, else the words joined by spaces, each word that
 * a shell would split or expand single-quoted.  malloc'ed.
 */
char	*hostipc_command_text(char *const argv[], const char *shell_string);
/* A monotonic clock in milliseconds, for the remaining timeout. */
long long hostipc_clock_ms(void);
/* Keep the last HOSTIPC_TAIL_MAX octets. */
void	 hostipc_tail_add(struct hostipc_tail *, const char *, size_t);

struct supervise;
/*
 * Review one host execution (type "host-ipc"): over the supervisor's
 * socket when s is registered, else through the config's reviewer, for
 * no longer than until deadline_ms (hostipc_clock_ms; 0: none).  Returns
 * 1 when allowed, 0 when denied, with the reason in reason.
 */
int	 hostipc_review(const struct config *, const struct supervise *,
	    const char *text, const char *cwd, const char *rule,
	    const char *warning, long long deadline_ms, char *reason,
	    size_t reasonlen);
/*
 * Run the command on the host, outside any sandbox, in cwd, with
 * timeout_ms (0: none); signals are forwarded.  Returns the exit status
 * as pisbx-run reports it (128+N for a signal, 124 on timeout).
 */
int	 hostipc_run(char *const argv[], const char *shell_string,
	    const char *cwd, long long timeout_ms);

/* The command's stderr passed through to ours, its tail kept. */
struct hostipc_tee {
	int			 rfd;		/* pipe, read end */
	int			 saved;		/* our own stderr */
	struct event		*ev;
	struct hostipc_tail	 tail;
};

/*
 * Before the sandbox starts: fd 2 becomes a pipe that the sandbox
 * inherits as the command's stderr.  NULL on failure (fd 2 unchanged).
 */
struct hostipc_tee *hostipc_tee_begin(void);
/* Once the sandbox started: our fd 2 back, the pipe copied to it. */
int	 hostipc_tee_start(struct hostipc_tee *, struct event_base *);
/* After the command ended: copy what is left; fd 2 restored. */
void	 hostipc_tee_end(struct hostipc_tee *);
void	 hostipc_tee_free(struct hostipc_tee *);
/*
 * The preflight: -1 when no prefix matches (run sandboxed), else the
 * exit status of the host run, HOSTIPC_EXIT_DENIED after printing
 * "pisbx: host-IPC execution denied: REASON", or 124 when timeout_ms ran
 * out while the reviewer was asked (the review counts against it; the
 * command is then not started).
 */
int	 hostipc_preflight(const struct config *, const struct supervise *,
	    char *const argv[], const char *shell_string, const char *cwd,
	    long long timeout_ms);
/*
 * After a sandboxed run: status itself, or -- when the retry applies and
 * a reviewer allows it in time -- the status of a host run with what is
 * left of the timeout after the review, after a separator line.
 */
int	 hostipc_after(const struct config *, const struct supervise *,
	    const struct hostipc_outcome *, const struct hostipc_tee *,
	    char *const argv[], const char *shell_string, const char *cwd,
	    long long timeout_ms, long long elapsed_ms, int status);

/* jobs.c: the command as a job of the caller's terminal */
struct jobs;
/*
 * The controlling terminal (sb->tty) and whether the command starts in
 * its foreground (sb->tty_give): when our process group holds it and
 * stdin and stdout are that terminal.  NULL on failure.
 */
struct jobs *jobs_new(struct sandbox *, struct event_base *);
/* The reaper is started: its pid and our end of the control socket. */
int	 jobs_start(struct jobs *, pid_t reaper, int sock);
/* A signal of ours for the command: to the reaper, which passes it on. */
void	 jobs_forward(struct jobs *, int sig, int from_tty);
/* The command has ended: the terminal back to our group.  Frees. */
void	 jobs_free(struct jobs *);

/* summary.c */
enum summary_kind {
	SUMMARY_NET,		/* a destination the proxy refused */
	SUMMARY_FILE,		/* a path the creation guard refused */
	SUMMARY_UNREACH,	/* an allowed destination that failed */
	SUMMARY_KINDS
};
struct summary;
struct proxy_refusal;
struct summary *summary_new(void);
void	 summary_free(struct summary *);
/*
 * The proxy's proxy_opts.refused callback (arg: the summary): a refused
 * destination, or an allowed one that could not be reached.
 */
void	 summary_proxy_cb(const struct proxy_refusal *, void *);
/*
 * The proxy's proxy_opts.injected callback (arg: the summary): a masked
 * credential put into one request to host:port, counted per name and
 * host:port; no refusal (summary_count, summary_print never see it).
 */
void	 summary_injected_cb(const char *name, const char *host,
	    unsigned port, void *arg);
/*
 * -v: one line per credential and host:port put in on the way
 * ("pisbx-run: put in on the way: $GH_TOKEN -> api.test:443 (3
 * requests)"), masked for the terminal.
 */
void	 summary_print_injected(const struct summary *, FILE *);
/*
 * A refused destination (SUMMARY_NET) or an allowed one that could not
 * be reached (SUMMARY_UNREACH: DNS, connect, the upstream proxy).
 */
void	 summary_net(struct summary *, enum summary_kind, const char *host,
	    unsigned int port, const char *proto, const char *reason,
	    const char *detail, const char *hint);
/* A refused creation or write: verb ("create"), path, who reads it. */
void	 summary_file(struct summary *, const char *verb, const char *path,
	    const char *why);
/*
 * A TCP connect to the sandbox's own loopback (addr, "127.0.0.1" or
 * "[::1]") that nothing there answered: an item that names
 * host.pisbx.internal:port and what conf says of it.
 */
void	 summary_loopback(struct summary *, const char *addr,
	    unsigned int port, const struct config *conf);
/* Some refusals were not reported (the guard's bound). */
void	 summary_more(struct summary *);
/* Distinct refusals and failures (those past the bound too). */
size_t	 summary_count(const struct summary *);
/*
 * The stderr summary, deduplicated and capped, every line masked for
 * the terminal; nothing when nothing was refused or failed.  report: the
 * --report file to point at, or NULL; status: the command's exit status
 * (0 says that what was refused did not fail it); agent: pisbx-sh's
 * reader is a model, which has no --quiet or --report to pass.  The
 * lines are signed with the program's name (log_getname).
 */
void	 summary_print(const struct summary *, FILE *, const char *report,
	    int status, int agent);
/*
 * Every item as a JSON array, one object per line, the credentials put
 * in ("kind":"injected") last.  0 or -1.
 */
int	 summary_json(const struct summary *, FILE *);

/* shell.c */
/* The shell for a command line: bash, or sh where there is none. */
const char *run_bash(void);
/* bash [OPTION...] [-l] -c LINE [$0 $1...], or NULL on no memory. */
char	**run_shell_argv(const struct run_opts *, const char *login_rc);
/* The command as a person would type it (malloc'ed), or NULL. */
char	*run_cmdline(const struct run_opts *);

/* env.c */
struct env_inputs {
	const char	*tmpdir;	/* the run's private TMPDIR */
	const char	*self_exe;	/* pisbx-run, for --connect-proxy */
	const char	*git_proxy;	/* GIT_PROXY_COMMAND, or NULL */
	const char	*capability_env;	/* never passed on, or NULL */
	const char	*cache_dir;	/* the project's caches, or NULL: none */
	unsigned int	 caches;	/* 1 << enum fs_cache: wired */
	int		 depth;		/* PISBX_DEPTH of the caller */
	const char	*bash_env;	/* BASH_ENV over the caller's, or NULL */
	int		 java_quiet;	/* JDKs have the proxy in net.properties:
					 * no JAVA_TOOL_OPTIONS of ours */
	/* TMUX_TMPDIR is TMPDIR: no host socket reachable, no host-IPC. */
	int		 tmux_private;
	/*
	 * TLS termination: the run's CA bundle for every client family's
	 * variable, the JVM's trust store; or NULL.
	 */
	const char	*ca_bundle;
	const char	*truststore;
	/* "NAME=VALUE" over the caller's (masked credentials), or NULL. */
	char *const	*extra;
};
/*
 * The command's environment: the caller's minus capabilities, plus the
 * proxy variables every client family reads, TMPDIR, PISBX_SANDBOX and
 * PISBX_DEPTH.
 */
char	**env_build(char **environ_in, const struct env_inputs *);
/*
 * Append s (malloc'ed, taken over; NULL fails) to the NULL-terminated
 * vector *v of *n entries.  0, or -1 out of memory (s freed).
 */
int	 env_push(char ***, size_t *, char *);
void	 env_free(char **);
/* s with every '%' doubled, for ssh's %-expansion (malloc'ed, or NULL). */
char	*env_ssh_percent(const char *s);

/* runsecrets.c: network.tlsTerminate and credentials, the launcher's side */
struct runsecrets;
struct fs_inputs;
struct fs_runfiles;
/*
 * Before the plan and the environment: the TLS module loaded (a run
 * with tlsTerminate or a masked credential), the run's CA (its key in
 * this process only), each credential's placeholders, the masked copies
 * (rundir/masked.N), the CA bundle and trust store (rundir/ca-bundle.pem,
 * truststore.p12), made among files (in memory); every credentials
 * variable taken out of our environment.  0 with *out (NULL when the
 * config has neither), or EXIT_SETUP after saying why (a module that
 * does not load, an extract without a group, mask of a directory,
 * onExtractNoMatch "error").
 */
int	 runsecrets_prepare(const struct config *, struct fs_runfiles *files,
	    const char *home, struct runsecrets **out);
/* What the plan, the environment, the sandbox and the proxy get. */
void	 runsecrets_fs(const struct runsecrets *, struct fs_inputs *);
void	 runsecrets_env(const struct runsecrets *, struct env_inputs *);
void	 runsecrets_sandbox(const struct runsecrets *, struct sandbox *);
void	 runsecrets_proxy(const struct runsecrets *, struct proxy_opts *);
/*
 * The sandbox started (nons: without namespaces): this process made
 * undumpable, and what no namespaces take away said.
 */
void	 runsecrets_started(const struct runsecrets *, int nons);
/* The caller's variables back, for a command run on the host. */
void	 runsecrets_restore_env(const struct runsecrets *);
/* The CA and every value wiped and freed (after the proxy's end). */
void	 runsecrets_free(struct runsecrets *);

/* rundir.c */
/*
 * Create the private per-run dir (rundir, rundir/tmp) on the host; its
 * other files are made in memory (sb->files) by the functions below.
 */
int	 rundir_create(struct sandbox *);
/* Make rundir/empty (sb->empty), bound over denied files. */
int	 rundir_empty(struct sandbox *);
/*
 * Make rundir/git-proxy, git's GIT_PROXY_COMMAND (git:// URLs): a
 * script that runs "self_exe --connect-proxy HOST PORT".  Its path,
 * malloc'ed, or NULL.
 */
char	*rundir_git_proxy(struct sandbox *, const char *self_exe);
/*
 * Make rundir/ssh_config: RUNDIR_SSH_CONFIG and a last block with
 * "ProxyCommand self_exe --connect-proxy %h %p", bound over it in the
 * sandbox.  Its path, malloc'ed, or NULL (errno ENOENT: no ssh here).
 */
char	*rundir_ssh_config(struct sandbox *, const char *self_exe);
/*
 * Make rundir/login, what pisbx-sh -l's bash reads after the profile:
 * the caller's PATH first again (path, or NULL to keep the profile's),
 * BASH_ENV the caller's (bash_env, or NULL: unset) and read as bash
 * would have.  Its path (malloc'ed), or NULL.
 */
char	*rundir_login(struct sandbox *, const char *path,
	    const char *bash_env);
/* Remove it and everything the command left in it. */
void	 rundir_remove(const char *);
/* Remove per-run dirs of pisbx-run processes that no longer exist. */
void	 rundir_sweep(void);

/* guard_report.c */
/*
 * The parent's side of report_fd: collect what the guard says (call with
 * the readable end until EOF), then warn about every git repository made
 * during the run that still exists, and hand its refusals to a summary.
 */
struct guard_report;
struct summary;
struct guard_report *guard_report_new(void);
int	 guard_report_read(struct guard_report *, int fd);
void	 guard_report_warn(struct guard_report *, struct summary *);
/*
 * Hand the guard's loopback records (REPORT_LOOPBACK) to the summary,
 * with what conf says of host.pisbx.internal on each port; while the
 * config is still there (the proxy's).
 */
void	 guard_report_loopback(const struct guard_report *,
	    struct summary *, const struct config *);
void	 guard_report_free(struct guard_report *);

/* gitinit.c */
/* Whether a git init may make the project directory a repository. */
struct fs_plan;
struct gitinit {
	int		 ok;	/* the guard allows a .git there */
	const char	*path;	/* the project directory (the plan's) */
	struct stat	 top;	/* that directory when the run started */
};
void	 gitinit_start(const struct fs_plan *, struct gitinit *);
/*
 * Once the sandbox is gone: a repository made there that git would run
 * more of than git init makes is moved aside (.git.pisbx-held-XXXXXX),
 * said.  Once: a second call does nothing.
 */
void	 gitinit_finish(struct gitinit *);

#endif
