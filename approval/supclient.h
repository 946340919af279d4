/*
 * The client end of the supervisor protocol (docs/supervisor.md): the
 * synchronous calls pisbx-run makes before and after its sandbox runs --
 * register, unregister, and host-IPC reviews waited for.  The reference
 * server, pisbx-supervisor, is in supervisor/.
 */
#ifndef PISBX_SUPCLIENT_H
#define PISBX_SUPCLIENT_H

#include <stddef.h>

#include "policy/policy.h"
#include "approval/approval.h"

struct json_t;

#define SUPERVISOR_SOCKET_ENV		"PISBX_SUPERVISOR_SOCKET"
#define SUPERVISOR_CAPABILITY_ENV	"PISBX_SUPERVISOR_CAPABILITY"
#define SUPERVISOR_TIMEOUT_ENV		"PISBX_SUPERVISOR_TIMEOUT_MS"
/*
 * Where a running supervisor is found when the variables are unset:
 * $XDG_RUNTIME_DIR/SUPERVISOR_ENV_FILE, mode 0600, lines NAME=VALUE for
 * the socket and the capability (pisbx-supervisor --interactive and the
 * user unit write it; the runtime directory is hidden from sandboxes).
 */
#define SUPERVISOR_DIR			"pisbx"
#define SUPERVISOR_ENV_FILE		"pisbx/supervisor.env"
#define SUPERVISOR_SOCKET_FILE		"pisbx/supervisor.sock"
/*
 * A supervisor's reply to a request from a worker it does not know
 * carries "error":"unknown-worker" (docs/review-protocol.md): it was
 * restarted since the worker registered.  The review then fails with a
 * detail that starts with SUPERVISOR_LOST_DETAIL (pisbx-run's summary
 * looks for it), after the worker registered again.
 */
#define SUPERVISOR_UNKNOWN_WORKER	"unknown-worker"
#define SUPERVISOR_LOST_DETAIL	\
	"the supervisor no longer knew this worker (restarted?)"
/* Registration and unregistration, in ms. */
#define SUPERVISOR_TIMEOUT_DEFAULT	10000

/*
 * One call over the supervisor socket, waited for: request gets version,
 * capability and a fresh id (approval's supervisor_call).  Returns the
 * reply object (a new reference) or NULL with err set.
 */
struct json_t	*supclient_call(const char *path, const char *capability,
		    struct json_t *request, int timeout_ms, char *err,
		    size_t errlen);
/*
 * Register worker_id (with cwd).  Returns 0 and the policy handed out
 * (a deny-all one, with *fallback set and a warning in err, when the
 * reply's "network" is missing or invalid), or -1 with err set when the
 * supervisor refused or could not be asked: then nothing may start.
 * *policy_file: the reply's policyFile (malloc'ed), the file a person
 * edits to change that policy, or NULL (none, or not an absolute path
 * of printable characters: then a warning says so).
 */
int		 supclient_register(const char *path, const char *capability,
		    const char *worker_id, const char *cwd, int timeout_ms,
		    struct policy **policy, char **policy_file, int *fallback,
		    char *err, size_t errlen);
/* Unregister worker_id; -1 with err set when it was not acknowledged. */
int		 supclient_unregister(const char *path,
		    const char *capability,
		    const char *worker_id, const char *cwd, int timeout_ms,
		    char *err, size_t errlen);
/* A policy that denies every destination ("*" in deniedDomains). */
struct policy	*supclient_deny_all(void);

/* What a host-IPC request asks (type "host-ipc"). */
struct hostipc_request {
	const char	*command;	/* the full command text */
	const char	*cwd;
	const char	*rule;		/* "preflight-prefix:tmux" */
	const char	*warning;	/* NULL, or shown with the request */
};

/* The request object of a host-IPC review (no version/id/capability). */
struct json_t	*supclient_hostipc_request(const char *worker_id,
		    const struct hostipc_request *);
/*
 * Ask one review and wait for it, through the reviewer o describes: the
 * supervisor's socket (a registered run, whatever its config says) or
 * the config's review (reviewer_opts_config).  approval's reviewer runs
 * it (review_start_request) on a private event base, for at most
 * o->timeout_ms.  The request object is sent as it is, plus version and
 * id.  No reviewer, a socket reviewer without a capability, and every
 * failure are denies; returns the result with the reason or error in
 * reason.
 */
enum review_result review_ask(const struct reviewer_opts *o,
		    struct json_t *request, char *reason, size_t reasonlen);

#endif
