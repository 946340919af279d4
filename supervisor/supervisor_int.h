/*
 * supervisor/ internals: what supervisor.c (the server: connections,
 * requests, reviews) and request.c (a request checked, the worker table
 * and the ids seen) share, and nothing outside the folder needs.
 */
#ifndef PISBX_SUPERVISOR_INT_H
#define PISBX_SUPERVISOR_INT_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stdint.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

/* Request ids remembered to refuse replays (8 octets each). */
#define IDS_MAX			(1 << 20)
#define WORKER_ID_MAX		64
#define ID_MAX			128
#define CWD_MAX			4096

enum worker_state {
	WORKER_RUNNING,
	WORKER_EXITED
};

struct worker {
	TAILQ_ENTRY(worker)	 entry;
	char			 id[WORKER_ID_MAX + 1];
	char			*cwd;
	enum worker_state	 state;
	time_t			 started;
	unsigned long		 requests;
	pid_t			 pid;		/* SO_PEERCRED */
};

/*
 * The ids of the requests accepted so far, as keyed 64-bit digests in an
 * open-addressing table (0 marks a free slot).
 */
struct idset {
	uint64_t		*v;
	size_t			 size;		/* a power of two */
	size_t			 n;
	unsigned char		 key[32];	/* random, per process */
};

TAILQ_HEAD(workerq, worker);
TAILQ_HEAD(clientq, client);

struct supervisor {
	struct event_base	*base;
	struct evconnlistener	*lis;
	char			*path;
	char			*capability;
	json_t			*network;
	char			*policy_file;	/* or NULL */
	struct reviewer		*rv;
	int			 logfd;		/* access log or -1 */
	struct workerq		 workers;
	size_t			 nworkers;
	struct clientq		 clients;
	size_t			 nclients;
	struct idset		 ids;
	/* Answered "s" at the terminal: allowed for every worker. */
	struct review_grant	*session;
	size_t			 nsession;
};

/* ---- request.c ---- */

struct worker	*worker_find(struct supervisor *, const char *);
int		 worker_add(struct supervisor *, const char *, const char *,
		    pid_t, struct worker **);
int		 idset_add(struct idset *, const char *);

#endif
