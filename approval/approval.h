/*
 * approval/: the one-shot review hook client.  The proxy asks for a review
 * of a public destination that no list matched; an allow covers that one
 * target over that one protocol (struct review_grant).  Transports: a command per request, a Unix-socket supervisor,
 * or the person at /dev/tty.  Every failure is a deny with a reason.
 */
#ifndef PISBX_APPROVAL_H
#define PISBX_APPROVAL_H

#include <stdint.h>

#include "policy/policy.h"

struct event_base;

enum review_result {
	REVIEW_RESULT_ALLOW,
	REVIEW_RESULT_DENY,
	REVIEW_RESULT_TIMEOUT,
	REVIEW_RESULT_ERROR,
	REVIEW_RESULT_BUSY,
	REVIEW_RESULT_NONE	/* no reviewer configured */
};

/*
 * How far an approval reaches (the reply's "scope"): this connection
 * only; the rest of this pisbx-run or pisbx-proxy process; the rest of
 * the worker (a supervisor's review: the worker is its pisbx-run); the
 * rest of the supervisor's life, for every worker (a person's answer at
 * pisbx-supervisor's terminal, never read from a reply).  The lists are
 * checked first, always.
 */
enum review_scope {
	REVIEW_SCOPE_ONCE,
	REVIEW_SCOPE_RUN,
	REVIEW_SCOPE_WORKER,
	REVIEW_SCOPE_SESSION	/* a supervisor's life, across workers */
};

struct review_request {
	const char	*host;		/* canonical host text */
	uint16_t	 port;
	const char	*protocol;	/* "connect", "http", "socks5" */
	const char	*client;	/* who asks: its address, or NULL */
	const char	*warning;	/* what a person should know before
					   answering (an allow that would
					   still be refused), or NULL */
	/*
	 * An allowed host past an egress budget: its key ("bytesUpPerHost",
	 * "connectionsPerHost"), the budget and what was used; NULL when
	 * the question is the host itself.
	 */
	const char	*budget;
	unsigned long long budget_limit;
	unsigned long long budget_used;
};

/*
 * What one approval covers: the target it was asked about (canonical
 * host and port) over the protocol it was asked about -- a forwarded
 * request and a raw tunnel to the same host:port are two decisions.  An
 * empty host covers nothing.  Whoever keeps grants (a connection now; a
 * cache of wider scope later) compares them with review_grant_covers.
 */
#define REVIEW_GRANT_HOST_MAX	256
#define REVIEW_GRANT_PROTO_MAX	16

struct review_grant {
	char		 host[REVIEW_GRANT_HOST_MAX];
	uint16_t	 port;
	char		 protocol[REVIEW_GRANT_PROTO_MAX];
};

/* Record that req was approved. */
void		 review_grant_set(struct review_grant *,
		    const struct review_request *req);
/* Whether the approval g covers req: same host, port and protocol. */
int		 review_grant_covers(const struct review_grant *g,
		    const struct review_request *req);

/*
 * Called once per started review, never synchronously from review_start
 * and never after review_cancel.  detail is the reviewer's reason (allow
 * or deny) or the error text, printable, valid during the call; it may be
 * NULL.  The callback may cancel other reviews but must not free the
 * reviewer.
 */
typedef void (*review_cb)(enum review_result, enum review_scope,
	    const char *detail, void *arg);

struct reviewer;
struct review;

/* What a reviewer asks through, and how long it waits. */
struct reviewer_opts {
	enum review_mode	 mode;		/* REVIEW_NONE: no reviewer */
	char *const		*argv;		/* command: NULL-terminated */
	const char		*socket_path;	/* socket */
	const char		*capability;	/* socket: NULL or "": none */
	int			 timeout_ms;	/* per review; 0: 30000 */
	int			 max_inflight;	/* 0: 16 */
	const char		*worker_id;	/* in every network request */
	const char		*cwd;		/* in every network request */
	const char		*command;	/* the command that asks */
	int			 tty_session;	/* tty: offer "s" (session) */
	/*
	 * tty: a question's clock starts when it is asked for, not shown (a
	 * supervisor's worker waits from then), and the question shows the
	 * questions waiting behind it with their time left.
	 */
	int			 tty_clock_at_start;
};

/*
 * The options of a config's "review" section.  worker_id and cwd go in
 * every network request (the launcher's sandbox id and working
 * directory, or the standalone proxy's --label and its cwd).  capability
 * is the supervisor capability (socket transport), or NULL to read the
 * config's capabilityEnv from the environment.  o borrows from conf.
 */
void		 reviewer_opts_config(struct reviewer_opts *o,
		    const struct config *conf, const char *worker_id,
		    const char *cwd, const char *capability);
/*
 * The socket transport's capability from the config's capabilityEnv
 * (PISBX_CAPABILITY by default), taken out of the environment (policy_env_take):
 * NULL when the config has no review.socket or the variable is unset.
 */
const char	*review_capability(const struct config *);
/* A reviewer; everything in o is copied. */
struct reviewer	*reviewer_new(struct event_base *,
		    const struct reviewer_opts *o);
void		 reviewer_free(struct reviewer *);
/* Whether any reviewer is configured (else every review is NONE). */
int		 reviewer_enabled(const struct reviewer *);
/*
 * Start a review.  Returns a handle, or NULL when the answer is immediate
 * (no reviewer, too many in flight, spawn failure): then *now holds it,
 * *now_detail the error text (valid until the next review_start, may be
 * NULL) and cb is not called.
 */
struct review	*review_start(struct reviewer *, const struct review_request *,
		    review_cb, void *arg, enum review_result *now,
		    const char **now_detail);
/*
 * review_start for a request object the caller built, of any type (a
 * "host-ipc" review: type, operation, rule, command, cwd, workerId,
 * warning).  The transports send it as it is, adding "version" and "id"
 * (and "capability" on the socket); the tty shows it by its type.  The
 * object is copied.
 */
struct json_t;
struct review	*review_start_request(struct reviewer *,
		    struct json_t *request, review_cb, void *arg,
		    enum review_result *now, const char **now_detail);
/* Cancel a review in flight; its callback will not run. */
void		 review_cancel(struct review *);
/* Access-log reason for a result: "review:allow", "no-reviewer", ... */
const char	*review_result_reason(enum review_result);
/*
 * Whether two configs ask the same reviewer (mode, command, socket,
 * capability variable): an answer asked under one stands under the other.
 */
int		 review_config_same(const struct config *,
		    const struct config *);
/* "once", "run", "worker", "session". */
const char	*review_scope_name(enum review_scope);

/* Largest reply (or request) frame, in octets, newline excluded. */
#define REVIEW_FRAME_MAX	(16 * 1024)
/* Length of a request id: a UUID v4 in text form. */
#define REVIEW_ID_LEN		36

/*
 * Parse one reply frame (a JSON object, no newline).  want_id is the
 * request's id; id_required makes a missing "id" an error, and allows the
 * scope "worker" (a supervisor's reply).  On success *res is ALLOW or
 * DENY, *scope (may be NULL) the reply's "scope" (absent: once), and
 * detail holds the printable reason ("" when none); returns -1 with the
 * error text in detail otherwise -- a malformed scope too.
 */
int		 review_reply_parse(const char *buf, size_t len,
		    const char *want_id, int id_required,
		    enum review_result *res, enum review_scope *scope,
		    char *detail, size_t detaillen);
/* A fresh random request id (UUID v4 from getrandom(2)); -1 on failure. */
int		 review_id_new(char id[REVIEW_ID_LEN + 1]);

/* socket.c: the supervisor's Unix-socket protocol, for any request type. */
struct supervisor_call;

enum supervisor_status {
	SUPERVISOR_OK,		/* reply is the matching object */
	SUPERVISOR_TIMEOUT,
	SUPERVISOR_ERROR	/* error says what went wrong */
};

/*
 * Called once per started call, never synchronously and never after
 * supervisor_call_cancel; reply is borrowed for the call's duration.
 */
typedef void (*supervisor_cb)(enum supervisor_status,
		    struct json_t *reply, const char *error, void *arg);

/*
 * Send one request object over a new connection to the supervisor's Unix
 * socket at path, adding "version", "capability" and a fresh "id", and
 * wait for the one reply line that carries the same id.  Returns NULL
 * with *errstr set (static or thread-local text) when it cannot start.
 */
struct supervisor_call *supervisor_call(struct event_base *,
		    const char *path, const char *capability,
		    struct json_t *request, int timeout_ms, supervisor_cb,
		    void *arg, const char **errstr);
/* Drop a call in flight: its connection is closed, its callback never runs. */
void		 supervisor_call_cancel(struct supervisor_call *);

#endif
