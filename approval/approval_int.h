/*
 * approval/ internals shared by the transports: the reviewer, one review
 * in flight, and the hooks each transport (command.c, socket.c, tty.c)
 * gives review.c.
 */
#ifndef PISBX_APPROVAL_INT_H
#define PISBX_APPROVAL_INT_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <termios.h>

#include "approval/approval.h"

struct event;
struct child;

struct review {
	struct reviewer		*r;
	TAILQ_ENTRY(review)	 entry;		/* r->reviews */
	TAILQ_ENTRY(review)	 qentry;	/* r->tty_queue */
	char			 id[REVIEW_ID_LEN + 1];
	struct json_t		*req;		/* without version, id */
	char			*host;		/* review_start only, */
	uint16_t		 port;		/* for the tty question */
	char			*protocol;
	char			*client;	/* tty: who asks, or NULL */
	review_cb		 cb;
	void			*arg;
	enum review_scope	 scope;		/* the answer's, before done */
	struct event		*timer;
	long long		 deadline_ms;	/* CLOCK_MONOTONIC, when armed */
	int			 finished;	/* callback running */

	struct child		*child;		/* command */
	struct supervisor_call	*call;		/* socket */
	int			 queued;	/* tty: on r->tty_queue */
};

TAILQ_HEAD(reviewq, review);
TAILQ_HEAD(childq, child);

struct reviewer {
	struct event_base	*base;
	enum review_mode	 mode;
	char			**argv;		/* command, NULL-terminated */
	int			 timeout_ms;
	char			*socket_path;
	char			*capability;	/* NULL: none (socket fails) */
	int			 max_inflight;
	char			*worker_id;
	char			*cwd;
	char			*command;	/* the command that asks */
	int			 tty_session;	/* offer "s" */
	int			 tty_clock_at_start;

	int			 inflight;
	int			 in_callback;	/* review_done calling back */
	int			 dying;		/* freed from a callback */
	char			 detail[512];	/* review_start's *now_detail */
	struct reviewq		 reviews;	/* started, not answered */
	struct childq		 children;	/* command: not yet reaped */

	/* tty: one question at a time */
	struct reviewq		 tty_queue;	/* waiting, not yet asked */
	struct review		*tty_active;
	struct event		*tty_kick;	/* ask the next one, async */
	struct event		*tty_ev;	/* answer readable */
	struct event		*tty_tick;	/* the countdown */
	int			 tty_left_ms;
	int			 tty_fd;
	char			 tty_line[256];
	size_t			 tty_len;
	int			 tty_overlong;
	pid_t			 tty_saved_pgrp;	/* foreground to restore */
	int			 tty_saved_termios;	/* termios saved */
	struct termios		 tty_termios;
};

/* review.c */
/*
 * Answer a review: its callback runs once (with rv->scope, which the
 * transport set for an allow), then it is freed.
 */
void	 review_done(struct review *, enum review_result, const char *detail);
/* (Re)arm the review's timeout: review_timeout_ms from now. */
int	 review_arm_timer(struct review *);
/* Milliseconds left before the review's timeout (0 when past). */
int	 review_left_ms(const struct review *);
/* The request object's JSON line (with newline), malloc'ed; NULL on error. */
char	*review_request_line(const struct review *, int with_capability,
	    size_t *len);
/* review_reply_parse on an already parsed object. */
int	 review_reply_check(const struct json_t *, const char *want_id,
	    int id_required, enum review_result *, enum review_scope *,
	    char *detail, size_t detaillen);

/* command.c */
int	 command_start(struct review *, char *err, size_t errlen);
void	 command_abort(struct review *);
void	 command_reap_all(struct reviewer *);

/* socket.c */
const char *supervisor_call_id(const struct supervisor_call *);
int	 socket_start(struct review *, char *err, size_t errlen);
void	 socket_abort(struct review *);

/* tty.c */
int	 tty_start(struct review *, char *err, size_t errlen);
void	 tty_abort(struct review *);
void	 tty_free(struct reviewer *);

#endif
