/*
 * The command as a job of the caller's terminal, seen from the parent.
 *
 * The command runs in a process group of its own (reaper.c), never in
 * ours: a "kill(0, sig)" inside must not reach the caller's group (the
 * agent), and Landlock scopes signals only from ABI 6 (Linux 6.12).  So,
 * as a job-control shell does, we give that group the terminal's
 * foreground when we hold it (and stdin and stdout are the terminal: in
 * a pipeline "pisbx-run cmd | less", less keeps it), and take it back
 * when the command stops or ends.  A signal the terminal sends reaches
 * one group: the command's when it holds the foreground (we get
 * nothing), ours otherwise (we pass it on to the command's group).
 *
 * When the command stops (^Z, or vim and less stopping themselves), we
 * take the terminal back and stop ourselves with the same signal, as
 * sudo and su do, so the caller's shell sees the job stopped; once
 * continued ("fg"), we give the terminal back and continue the command.
 * A command stopped for wanting the terminal (SIGTTIN, SIGTTOU) while our
 * group holds it gets it lent, as sudo does.  The reaper reports stops
 * and continues on the control socket; we answer with sigqueue(3).
 *
 * All of that only when one of our standard streams is the terminal: a
 * person runs us there.  An agent whose own interface holds the terminal
 * runs us with pipes: then the command may not take the terminal (its
 * reads fail with EIO: SIGTTIN and SIGTTOU ignored) and we never stop
 * ourselves -- nobody would continue us, and --timeout would not fire.
 */
#include <sys/file.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "launcher/launcher.h"
#include "launcher/sandbox/sandbox.h"
#include "launcher/run/run.h"

#define JOBS_RETRY_MS	50	/* a terminal question holds the terminal */

struct jobs {
	struct event_base	*base;
	struct event		*ctlev;
	struct event		*retry;
	pid_t			 reaper;
	int			 tty;		/* /dev/tty, or -1 */
	int			 std;		/* one of our stdio is the tty */
	int			 handed;	/* we gave the command the tty */
	int			 stopped;	/* its stop signal; 0: running */
	int			 held;		/* it held the tty then */
};

static int	jobs_may_give(void);
static void	jobs_setfg(const struct jobs *, pid_t);
static void	jobs_continue(struct jobs *, int give);
static void	jobs_suspend(int sig);
static void	jobs_stopped(struct jobs *, int retry);
static void	jobs_ctl_cb(evutil_socket_t, short, void *);
static void	jobs_retry_cb(evutil_socket_t, short, void *);

/* Our group holds the terminal, and stdin and stdout are that terminal. */
static int
jobs_may_give(void)
{
	pid_t	me = getpgrp();

	return tcgetpgrp(STDIN_FILENO) == me && tcgetpgrp(STDOUT_FILENO) == me;
}

/* The terminal's foreground to pgrp, without a SIGTTOU stopping us. */
static void
jobs_setfg(const struct jobs *j, pid_t pgrp)
{
	sigset_t	set, old;

	sigemptyset(&set);
	sigaddset(&set, SIGTTOU);
	sigprocmask(SIG_BLOCK, &set, &old);
	if (tcsetpgrp(j->tty, pgrp) == -1)
		log_debug("tcsetpgrp: %s", strerror(errno));
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Continue the command's group; give it the terminal first (give). */
static void
jobs_continue(struct jobs *j, int give)
{
	union sigval	v;

	v.sival_int = give ? JOBS_GIVE : 0;
	if (sigqueue(j->reaper, SIGCONT, v) == 0 && give)
		j->handed = 1;
}

/*
 * Stop ourselves with sig, whatever its disposition was; returns once
 * continued -- or at once when the kernel discards the stop (an
 * orphaned process group: nobody would continue us).
 */
static void
jobs_suspend(int sig)
{
	struct sigaction	 dfl, old;
	sigset_t		 set, omask;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	if (sig != SIGSTOP)
		sigaction(sig, &dfl, &old);
	sigemptyset(&set);
	sigaddset(&set, sig);
	kill(getpid(), sig);
	/* Pending while blocked (our signalfd's): taken here. */
	sigprocmask(SIG_UNBLOCK, &set, &omask);
	sigprocmask(SIG_SETMASK, &omask, NULL);
	if (sig != SIGSTOP)
		sigaction(sig, &old, NULL);
}

/*
 * The command stopped with j->stopped.  retry: called again because a
 * terminal question held the terminal then.
 */
static void
jobs_stopped(struct jobs *j, int retry)
{
	struct timeval	tv = { 0, JOBS_RETRY_MS * 1000 };
	pid_t		me = getpgrp();
	int		sig = j->stopped;

	if (sig == 0 || !j->std)
		return;
	if (!j->held && (sig == SIGTTIN || sig == SIGTTOU) &&
	    tcgetpgrp(j->tty) == me) {
		/*
		 * It wants the terminal, which our group holds: lend it.
		 * Unless a question at the terminal (approval/tty.c, under
		 * an flock of /dev/tty) has it for a moment: that hands it
		 * back and continues the command when answered.
		 */
		if (flock(j->tty, LOCK_EX | LOCK_NB) == -1) {
			evtimer_add(j->retry, &tv);
			return;
		}
		flock(j->tty, LOCK_UN);
		jobs_continue(j, 1);
		return;
	}
	/* The terminal moved meanwhile: whoever moved it continues it. */
	if (retry)
		return;
	if (j->held)
		jobs_setfg(j, me);
	j->handed = 0;
	jobs_suspend(sig);
	/* Continued: "fg" gave our group the terminal, "bg" did not. */
	jobs_continue(j, tcgetpgrp(j->tty) == me && (j->held ||
	    jobs_may_give()));
}

/* A report of the reaper: the command stopped, or goes on. */
static void
jobs_ctl_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct jobs	*j = arg;
	unsigned char	 m[3];
	ssize_t		 n;

	(void)ev;
	n = recv(fd, m, sizeof(m), MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* The reaper is gone. */
		event_del(j->ctlev);
		return;
	}
	if (m[0] == CTL_STOPPED && n == 3) {
		j->stopped = m[1];
		j->held = m[2];
		jobs_stopped(j, 0);
	} else if (m[0] == CTL_CONTINUED) {
		j->stopped = 0;
		evtimer_del(j->retry);
	}
}

static void
jobs_retry_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	jobs_stopped(arg, 1);
}

struct jobs *
jobs_new(struct sandbox *sb, struct event_base *base)
{
	struct jobs	*j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return NULL;
	j->base = base;
	j->reaper = -1;
	j->tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (j->tty != -1 && tcgetpgrp(j->tty) == -1) {
		close(j->tty);
		j->tty = -1;
	}
	j->std = j->tty != -1 && (tcgetpgrp(STDIN_FILENO) != -1 ||
	    tcgetpgrp(STDOUT_FILENO) != -1 || tcgetpgrp(STDERR_FILENO) != -1);
	sb->tty = j->tty;
	sb->tty_give = j->handed = j->std && jobs_may_give();
	sb->tty_none = j->tty != -1 && !j->std;
	if ((j->retry = evtimer_new(base, jobs_retry_cb, j)) == NULL) {
		jobs_free(j);
		return NULL;
	}
	return j;
}

int
jobs_start(struct jobs *j, pid_t reaper, int sock)
{
	j->reaper = reaper;
	if ((j->ctlev = event_new(j->base, sock, EV_READ | EV_PERSIST,
	    jobs_ctl_cb, j)) == NULL || event_add(j->ctlev, NULL) == -1)
		return -1;
	return 0;
}

void
jobs_forward(struct jobs *j, int sig, int from_tty)
{
	union sigval	v;

	if (j->reaper <= 0)
		return;
	if (from_tty) {
		v.sival_int = JOBS_GROUP;
		sigqueue(j->reaper, sig, v);
	} else
		kill(j->reaper, sig);
}

void
jobs_free(struct jobs *j)
{
	if (j == NULL)
		return;
	/* Its group is gone with the sandbox: the terminal is ours again. */
	if (j->tty != -1) {
		if (j->handed && tcgetpgrp(j->tty) != getpgrp())
			jobs_setfg(j, getpgrp());
		close(j->tty);
	}
	if (j->ctlev != NULL)
		event_free(j->ctlev);
	if (j->retry != NULL)
		event_free(j->retry);
	free(j);
}
