/*
 * The review hook client.  Until a transport is configured, every review
 * is answered at once with REVIEW_RESULT_NONE ("no-reviewer"): the
 * fail-closed behaviour the architecture asks for without a reviewer.
 */
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "approval.h"

struct reviewer {
	struct event_base	*base;
	enum review_mode	 mode;
};

struct reviewer *
reviewer_new(struct event_base *base, const struct config *conf,
    const char *worker_id, const char *cwd, const char *capability)
{
	struct reviewer *r;

	(void)worker_id;
	(void)cwd;
	(void)capability;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->base = base;
	r->mode = conf != NULL ? conf->review_mode : REVIEW_NONE;
	return r;
}

void
reviewer_free(struct reviewer *r)
{
	free(r);
}

int
reviewer_enabled(const struct reviewer *r)
{
	return r != NULL && r->mode != REVIEW_NONE;
}

struct review *
review_start(struct reviewer *r, const struct review_request *req,
    review_cb cb, void *arg, enum review_result *now, const char **detail)
{
	(void)r;
	(void)req;
	(void)cb;
	(void)arg;
	*now = REVIEW_RESULT_NONE;
	*detail = NULL;
	return NULL;
}

void
review_cancel(struct review *rv)
{
	(void)rv;
}

const char *
review_result_reason(enum review_result res)
{
	switch (res) {
	case REVIEW_RESULT_ALLOW:
		return "review:allow";
	case REVIEW_RESULT_DENY:
		return "review:deny";
	case REVIEW_RESULT_TIMEOUT:
		return "review:timeout";
	case REVIEW_RESULT_ERROR:
		return "review:error";
	case REVIEW_RESULT_BUSY:
		return "review:busy";
	case REVIEW_RESULT_NONE:
		break;
	}
	return "no-reviewer";
}
