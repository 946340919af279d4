/*
 * pisbx-supervisor's server (docs/supervisor.md): the socket it serves,
 * the worker table, and the request checks its tests and fuzzer drive.
 * The client end is approval/supclient.h.
 */
#ifndef PISBX_SUPERVISOR_H
#define PISBX_SUPERVISOR_H

#include <stddef.h>

struct event_base;
struct json_t;

/* The workers kept. */
#define SUPERVISOR_WORKERS_MAX		4096
/* Approvals for the session (host, port, protocol) kept. */
#define SUPERVISOR_SESSION_MAX		1024

struct supervisor;

struct supervisor_opts {
	const char	*socket_path;
	const char	*capability;
	const char	*network_json;	/* {"allowedDomains":..,...} */
	const char	*policy_file;	/* where those lists are written
					   (absolute), or NULL */
	char *const	*review_argv;	/* review command, or NULL */
	int		 review_tty;	/* else: ask at /dev/tty */
	int		 interactive;	/* tty: clock from arrival, "s" */
	int		 review_timeout_ms;	/* 0: 30000 */
	const char	*access_log;	/* path, "-", or NULL */
};

/* Listen on opts->socket_path (mode 0600) and serve the protocol. */
struct supervisor *supervisor_new(struct event_base *,
		    const struct supervisor_opts *, char *err, size_t errlen);
/* Print the worker table (id, cwd, state, started, requests). */
void		 supervisor_dump(struct supervisor *, int fd);
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
	SUPREQ_HOSTIPC,
	SUPREQ_PUSH		/* a new policy for the running workers */
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
/* push.c */
/*
 * Hand network (the JSON text of a "network" object) to the running
 * pisbx-run with pid, on its run socket, with capability: 0 applied, -1
 * refused or unreachable, with the reason in err.
 */
int		 supervisor_push_worker(long pid, const char *capability,
		    const char *network, char *err, size_t errlen);
/*
 * pisbx-supervisor --push FILE: the network lists of the config FILE
 * (checked like the supervisor's own) sent to the supervisor at socket,
 * which hands them to every running worker.  Its reply on stdout; 0 when
 * every worker took it, 1 otherwise.
 */
int		 supervisor_push_main(const char *file, const char *socket,
		    const char *capability);

/*
 * Whether a presented capability equals the expected one, in time that
 * depends on neither content nor length (SHA-256 of both compared).
 */
int		 supervisor_capability_ok(const char *expected,
		    const char *presented, size_t presented_len);

#endif
