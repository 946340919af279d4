/*
 * review_driver: run reviews through approval/ on a libevent loop and
 * print each answer, for tests that do not need the proxy.
 *
 *   review_driver [-n N] [-M max] [-t ms] [-w worker] [-c client]
 *       [-b name:limit:used] [-d cwd]
 *       [-k capability] [-e env] [-x cancel-ms] [-g] [-s] [-F]
 *       MODE HOST PORT PROTO [ARGV...]
 *
 * MODE is none, command (ARGV is the reviewer), socket:PATH or tty.  N
 * reviews start at once; -x cancels those still open after cancel-ms;
 * -g first hands the terminal's foreground to a child process group, as
 * an interactive sandboxed command would hold it; -s prints "ready" and
 * stops itself (SIGSTOP) before the reviewer exists; -F frees the
 * reviewer from inside the first callback.  Output lines:
 *   fds-before N
 *   review I now|async REASON DETAIL      (REASON: review:allow, ...)
 *   cancelled I
 *   children N            processes whose parent is this one, after the loop
 *   fds-after-loop N
 *   fds-after-free N
 *   fg-after child|other  (-g)
 * The loop runs until every review is answered and every reviewer
 * process reaped; nothing else keeps it alive.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <err.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "policy/policy.h"
#include "approval/approval.h"

struct slot {
	int		 index;
	struct review	*rv;
	int		 open;
	int		 cancelled;
};

static void	 usage(void) __attribute__((noreturn));
static int	 count_fds(void);
static int	 count_children(pid_t);
static void	 answer_cb(enum review_result, enum review_scope, const char *,
		    void *);
static void	 cancel_cb(evutil_socket_t, short, void *);

static struct slot	*slots;
static int		 nslots;
static struct reviewer	*reviewer;
static int		 free_in_cb;

int
main(int argc, char *argv[])
{
	struct config		 conf;
	struct reviewer_opts	 ropts;
	struct event_base	*base;
	struct reviewer		*r;
	struct review_request	 req;
	struct event		*cancel_ev = NULL;
	struct timeval		 tv;
	enum review_result	 now;
	const char		*detail, *mode, *worker = "test-worker";
	const char		*cwd = "/work/test", *capability = NULL;
	const char		*client = NULL;
	char			*p;
	const char		*errstr;
	int			 ch, n = 1, i, cancel_ms = -1, fg = 0, tfd = -1;
	int			 stop = 0;
	pid_t			 fgchild = -1;
	long			 l;

	memset(&conf, 0, sizeof(conf));
	memset(&req, 0, sizeof(req));
	conf.review_timeout_ms = 30000;
	conf.review_max_inflight = 16;
	conf.review_capability_env = (char *)"PISBX_CAPABILITY";
	while ((ch = getopt(argc, argv, "+n:M:t:w:c:b:d:k:e:x:gsF")) != -1) {
		switch (ch) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'M':
			conf.review_max_inflight = atoi(optarg);
			break;
		case 't':
			conf.review_timeout_ms = atoi(optarg);
			break;
		case 'w':
			worker = optarg;
			break;
		case 'c':
			client = optarg;
			break;
		case 'b':
			/* -b NAME:LIMIT:USED: a host past an egress budget */
			req.budget = strtok(optarg, ":");
			if ((p = strtok(NULL, ":")) != NULL)
				req.budget_limit = strtoull(p, NULL, 10);
			if ((p = strtok(NULL, ":")) != NULL)
				req.budget_used = strtoull(p, NULL, 10);
			break;
		case 'd':
			cwd = optarg;
			break;
		case 'k':
			capability = optarg;
			break;
		case 'e':
			conf.review_capability_env = optarg;
			break;
		case 'x':
			cancel_ms = atoi(optarg);
			break;
		case 'g':
			fg = 1;
			break;
		case 's':
			stop = 1;
			break;
		case 'F':
			free_in_cb = 1;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 4 || n < 1)
		usage();
	mode = argv[0];
	if (strcmp(mode, "none") == 0)
		conf.review_mode = REVIEW_NONE;
	else if (strcmp(mode, "command") == 0) {
		conf.review_mode = REVIEW_COMMAND;
		conf.review_command.v = argv + 4;
		conf.review_command.n = (size_t)(argc - 4);
	} else if (strncmp(mode, "socket:", 7) == 0) {
		conf.review_mode = REVIEW_SOCKET;
		conf.review_socket = (char *)mode + 7;
	} else if (strcmp(mode, "tty") == 0)
		conf.review_mode = REVIEW_TTY;
	else
		usage();
	req.host = argv[1];
	l = strtol(argv[2], NULL, 10);
	if (l < 1 || l > 65535)
		usage();
	req.port = (uint16_t)l;
	req.protocol = argv[3];
	req.client = client;
	(void)errstr;

	log_init("review_driver", 0);
	if ((base = event_base_new()) == NULL)
		errx(1, "event_base_new");

	if (fg) {
		struct sigaction ign;

		/* A child group in the terminal's foreground, as a shell. */
		if ((tfd = open("/dev/tty", O_RDWR | O_CLOEXEC)) == -1)
			err(1, "/dev/tty");
		if ((fgchild = fork()) == -1)
			err(1, "fork");
		if (fgchild == 0) {
			setpgid(0, 0);
			for (;;)
				pause();
		}
		setpgid(fgchild, fgchild);
		memset(&ign, 0, sizeof(ign));
		ign.sa_handler = SIG_IGN;
		sigaction(SIGTTOU, &ign, NULL);
		if (tcsetpgrp(tfd, fgchild) == -1)
			err(1, "tcsetpgrp");
		signal(SIGTTOU, SIG_DFL);
		printf("fg-before %s\n",
		    tcgetpgrp(tfd) == fgchild ? "child" : "other");
		fflush(stdout);
	}

	if (stop) {
		/* Let a test type ahead before any question exists. */
		printf("ready\n");
		fflush(stdout);
		raise(SIGSTOP);
	}
	printf("fds-before %d\n", count_fds());
	fflush(stdout);
	reviewer_opts_config(&ropts, &conf, worker, cwd, capability);
	if ((r = reviewer_new(base, &ropts)) == NULL)
		errx(1, "reviewer_new");
	reviewer = r;
	if ((slots = calloc((size_t)n, sizeof(*slots))) == NULL)
		err(1, "calloc");
	nslots = n;
	for (i = 0; i < n; i++) {
		slots[i].index = i;
		slots[i].rv = review_start(r, &req, answer_cb, &slots[i], &now,
		    &detail);
		if (slots[i].rv == NULL) {
			printf("review %d now %s %s\n", i,
			    review_result_reason(now),
			    detail != NULL ? detail : "-");
			continue;
		}
		slots[i].open = 1;
	}
	fflush(stdout);
	if (cancel_ms >= 0) {
		tv.tv_sec = cancel_ms / 1000;
		tv.tv_usec = (cancel_ms % 1000) * 1000;
		if ((cancel_ev = evtimer_new(base, cancel_cb, r)) == NULL ||
		    evtimer_add(cancel_ev, &tv) == -1)
			errx(1, "cancel timer");
	}
	event_base_dispatch(base);

	printf("children %d\n", count_children(fgchild));
	printf("fds-after-loop %d\n", count_fds());
	reviewer_free(reviewer);
	if (cancel_ev != NULL)
		event_free(cancel_ev);
	printf("fds-after-free %d\n", count_fds());
	if (fg) {
		printf("fg-after %s\n",
		    tcgetpgrp(tfd) == fgchild ? "child" : "other");
		kill(fgchild, SIGKILL);
		waitpid(fgchild, NULL, 0);
		close(tfd);
	}
	free(slots);
	event_base_free(base);
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: review_driver [-n N] [-M max] [-t ms] "
	    "[-w worker] [-c client] [-b name:limit:used] [-d cwd] [-k cap] [-e env] [-x cancel-ms] [-g] [-s] [-F] "
	    "none|command|socket:PATH|tty HOST PORT PROTO [ARGV...]\n");
	exit(2);
}

static void
answer_cb(enum review_result res, enum review_scope scope,
    const char *detail, void *arg)
{
	struct slot	*s = arg;

	printf("review %d async %s %s%s%s%s\n", s->index,
	    review_result_reason(res), detail != NULL ? detail : "-",
	    scope != REVIEW_SCOPE_ONCE ? " scope=" : "",
	    scope != REVIEW_SCOPE_ONCE ? review_scope_name(scope) : "",
	    s->cancelled ? " AFTER-CANCEL" : "");
	if (!s->open)
		printf("review %d answered twice\n", s->index);
	s->open = 0;
	fflush(stdout);
	if (free_in_cb && reviewer != NULL) {
		/* As a proxy dropping its last reference to an old config. */
		reviewer_free(reviewer);
		reviewer = NULL;
		printf("freed in callback\n");
	}
}

static void
cancel_cb(evutil_socket_t fd, short what, void *arg)
{
	int	 i;

	(void)fd;
	(void)what;
	(void)arg;
	for (i = 0; i < nslots; i++) {
		if (!slots[i].open)
			continue;
		review_cancel(slots[i].rv);
		slots[i].open = 0;
		slots[i].cancelled = 1;
		printf("cancelled %d\n", i);
	}
	fflush(stdout);
}

static int
count_fds(void)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own fd */
}

/* Processes (zombies included) whose parent is this process. */
static int
count_children(pid_t except)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[300], buf[512], *p;
	FILE		*f;
	int		 n = 0, ppid;
	pid_t		 me = getpid();

	if ((d = opendir("/proc")) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (atoi(de->d_name) == except)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) != NULL &&
		    (p = strrchr(buf, ')')) != NULL &&
		    sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == me)
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}
