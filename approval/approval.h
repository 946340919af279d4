/*
 * approval/: the one-shot review hook client.  The proxy asks for a review
 * of a public destination that no list matched; the answer covers that one
 * connection.  Transports: a command per request, a Unix-socket supervisor,
 * or the person at /dev/tty.  Every failure is a deny with a reason.
 */
#ifndef PISBX_APPROVAL_H
#define PISBX_APPROVAL_H

#include <stdint.h>

struct event_base;
struct config;

enum review_result {
	REVIEW_RESULT_ALLOW,
	REVIEW_RESULT_DENY,
	REVIEW_RESULT_TIMEOUT,
	REVIEW_RESULT_ERROR,
	REVIEW_RESULT_BUSY,
	REVIEW_RESULT_NONE	/* no reviewer configured */
};

struct review_request {
	const char	*host;		/* canonical host text */
	uint16_t	 port;
	const char	*protocol;	/* "connect", "http", "socks5" */
};

/*
 * Called once per started review, never synchronously from review_start
 * and never after review_cancel.  detail is the reviewer's reason (allow
 * or deny) or the error text; it may be NULL.
 */
typedef void (*review_cb)(enum review_result, const char *detail, void *arg);

struct reviewer;
struct review;

/*
 * A reviewer for the config's "review" section.  worker_id and cwd go in
 * every request (the launcher's sandbox id and working directory, or the
 * standalone proxy's --label and its cwd).  capability is the supervisor
 * capability (socket transport), or NULL to read the config's
 * capabilityEnv from the environment.
 */
struct reviewer	*reviewer_new(struct event_base *, const struct config *,
		    const char *worker_id, const char *cwd,
		    const char *capability);
void		 reviewer_free(struct reviewer *);
/* Whether any reviewer is configured (else every review is NONE). */
int		 reviewer_enabled(const struct reviewer *);
/*
 * Start a review.  Returns a handle, or NULL when the answer is immediate
 * (no reviewer, too many in flight, spawn failure): then *now holds it and
 * cb is not called.
 */
struct review	*review_start(struct reviewer *, const struct review_request *,
		    review_cb, void *arg, enum review_result *now,
		    const char **now_detail);
/* Cancel a review in flight; its callback will not run. */
void		 review_cancel(struct review *);
/* Access-log reason for a result: "review:allow", "no-reviewer", ... */
const char	*review_result_reason(enum review_result);

#endif
