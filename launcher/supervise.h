/*
 * launcher/: supervisor mode (supervise.c) and the host-IPC fallback
 * (hostipc.c) of pisbx-run.  Kept apart from launcher.h's sandbox
 * machinery: these run before the sandbox starts and after it ended.
 */
#ifndef PISBX_SUPERVISE_H
#define PISBX_SUPERVISE_H

#include <stddef.h>

#include "policy/policy.h"
#include "approval/approval.h"

struct event;
struct event_base;

/* supervise.c */
struct supervise {
	char		*socket;	/* PISBX_SUPERVISOR_SOCKET */
	char		*capability;	/* ..._CAPABILITY */
	char		 worker_id[REVIEW_ID_LEN + 1];
	char		*cwd;
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

#endif
