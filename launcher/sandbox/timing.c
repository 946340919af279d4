/*
 * Where pisbx-run's start-up and teardown go, for -v: each process of the
 * run (the parent, the reaper, the command before its exec) writes the
 * CLOCK_MONOTONIC time of its steps into one shared page, and the parent
 * prints what each step cost when it is done.  Without -v nothing is
 * mapped and every mark is a no-op.
 */
#include <sys/mman.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "launcher/sandbox/sandbox.h"

struct timing {
	double	t[TIMING_N];	/* ms, CLOCK_MONOTONIC; 0: not reached */
};

static double	timing_now(void);
static double	timing_since(const struct timing *, enum timing_mark,
		    enum timing_mark);

static double
timing_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct timing *
timing_new(void)
{
	struct timing	*tm;

	tm = mmap(NULL, sizeof(*tm), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tm == MAP_FAILED)
		return NULL;
	memset(tm, 0, sizeof(*tm));
	tm->t[TIMING_START] = timing_now();
	return tm;
}

void
timing_mark(struct timing *tm, enum timing_mark m)
{
	if (tm != NULL)
		tm->t[m] = timing_now();
}

/* The time from mark a to mark b, or 0 when either was not reached. */
static double
timing_since(const struct timing *tm, enum timing_mark a, enum timing_mark b)
{
	if (tm->t[a] == 0 || tm->t[b] == 0 || tm->t[b] < tm->t[a])
		return 0;
	return tm->t[b] - tm->t[a];
}

void
timing_print(const struct timing *tm)
{
	enum timing_mark	ready;

	if (tm == NULL)
		return;
	timing_mark((struct timing *)tm, TIMING_DONE);
	/* The command starts once the reaper is locked in and the proxy serves. */
	ready = tm->t[TIMING_PROXY] > tm->t[TIMING_LOCKED] ? TIMING_PROXY :
	    TIMING_LOCKED;
	log_info("timing (ms): config %.2f, policy %.2f, clone %.2f, "
	    "network %.2f, mounts %.2f, landlock %.2f, proxy %.2f "
	    "(waited for: %.2f), command start %.2f, command %.2f, "
	    "sandbox exit %.2f, cleanup %.2f; total %.2f",
	    timing_since(tm, TIMING_START, TIMING_CONFIG),
	    timing_since(tm, TIMING_CONFIG, TIMING_POLICY),
	    timing_since(tm, TIMING_POLICY, TIMING_CLONE),
	    timing_since(tm, TIMING_CLONE, TIMING_NETNS),
	    timing_since(tm, TIMING_NETNS, TIMING_MOUNTS),
	    timing_since(tm, TIMING_MOUNTS, TIMING_LOCKED),
	    timing_since(tm, TIMING_NETNS, TIMING_PROXY),
	    timing_since(tm, TIMING_LOCKED, TIMING_PROXY),
	    timing_since(tm, ready, TIMING_EXEC),
	    timing_since(tm, TIMING_EXEC, TIMING_EXITED),
	    timing_since(tm, TIMING_EXITED, TIMING_REAPED),
	    timing_since(tm, TIMING_REAPED, TIMING_DONE),
	    timing_since(tm, TIMING_START, TIMING_DONE));
}

void
timing_free(struct timing *tm)
{
	if (tm != NULL)
		munmap(tm, sizeof(*tm));
}
