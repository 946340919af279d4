/*
 * The supervisor protocol's two ends (docs/supervisor.md): the reference
 * server, pisbx-supervisor (supervisor.c), and the synchronous client
 * calls pisbx-run makes before and after its sandbox runs (supclient.c):
 * register, unregister, and host-IPC reviews waited for.
 */
#ifndef PISBX_SUPERVISOR_H
#define PISBX_SUPERVISOR_H

#include <stddef.h>

#include "policy/policy.h"
#include "approval/approval.h"

struct event_base;
struct json_t;

#define SUPERVISOR_SOCKET_ENV		"PISBX_SUPERVISOR_SOCKET"
#define SUPERVISOR_CAPABILITY_ENV	"PISBX_SUPERVISOR_CAPABILITY"
#define SUPERVISOR_TIMEOUT_ENV		"PISBX_SUPERVISOR_TIMEOUT_MS"
/* Registration and unregistration, in ms; the workers kept. */
#define SUPERVISOR_TIMEOUT_DEFAULT	10000
#define SUPERVISOR_WORKERS_MAX		4096

/* supclient.c */
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
 */
int		 supclient_register(const char *path, const char *capability,
		    const char *worker_id, const char *cwd, int timeout_ms,
		    struct policy **policy, int *fallback, char *err,
		    size_t errlen);
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
 * Ask one review and wait for it: over the supervisor socket (path and
 * capability set), else through the config's review (command, TTY or
 * socket).  approval's reviewer runs it (review_start_request) on a
 * private event base.  The request object is sent as it is, plus version
 * and id.  No reviewer, a socket reviewer without a capability, and every
 * failure are denies; returns the result with the reason or error in
 * reason.
 */
enum review_result review_ask(const struct config *, const char *path,
		    const char *capability, struct json_t *request,
		    char *reason, size_t reasonlen);
/* The same with an explicit command (argv) or, argv NULL, the TTY. */
enum review_result review_ask_local(char *const argv[], int timeout_ms,
		    struct json_t *request, char *reason, size_t reasonlen);

/* supervisor.c */
struct supervisor;

struct supervisor_opts {
	const char	*socket_path;
	const char	*capability;
	const char	*network_json;	/* {"allowedDomains":..,...} */
	char *const	*review_argv;	/* review command, or NULL */
	int		 review_tty;	/* else: ask at /dev/tty */
	int		 review_timeout_ms;
	const char	*access_log;	/* path, "-", or NULL */
};

/* Listen on opts->socket_path (mode 0600) and serve the protocol. */
struct supervisor *supervisor_new(struct event_base *,
		    const struct supervisor_opts *, char *err, size_t errlen);
/* Print the worker table (id, cwd, state, started, requests). */
void		 supervisor_dump(struct supervisor *, int fd);
/* Reap finished reviewer processes (SIGCHLD). */
void		 supervisor_reap(struct supervisor *);
/* Stop listening, remove the socket, free everything. */
void		 supervisor_free(struct supervisor *);
/*
 * The "network" object handed out at registration, from a config file's
 * JSON text (already validated by config_load): its allowedDomains and
 * deniedDomains, nothing else.  malloc'ed JSON text, or NULL.
 */
char		*supervisor_network_json(const char *config_text,
		    size_t len);
enum supervisor_request_kind {
	SUPREQ_REGISTER,
	SUPREQ_UNREGISTER,
	SUPREQ_NETWORK,
	SUPREQ_HOSTIPC
};

/* One checked request; the strings point into obj. */
struct supervisor_request {
	struct json_t			*obj;	/* no capability */
	enum supervisor_request_kind	 kind;
	const char			*id;	/* NULL until known */
	const char			*type;
	const char			*worker_id;
	const char			*cwd;
	int				 bad_capability; /* 1 none, 2 bad */
};

/*
 * Parse and check one request line (no newline) from a client: JSON
 * object, id, version 1, the capability, type, workerId, absolute cwd and
 * the fields of its type.  -1 with the reason for the reply (r->id is set
 * once known, r->obj when it parsed); clear r either way.
 */
int		 supervisor_request_parse(const char *line, size_t len,
		    const char *capability, struct supervisor_request *r,
		    char *reason, size_t reasonlen);
void		 supervisor_request_clear(struct supervisor_request *);
/*
 * Whether a presented capability equals the expected one, in time that
 * depends on neither content nor length (SHA-256 of both compared).
 */
int		 supervisor_capability_ok(const char *expected,
		    const char *presented, size_t presented_len);

#endif
