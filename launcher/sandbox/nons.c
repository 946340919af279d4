/*
 * The sandbox without namespaces.  Inside a container whose seccomp
 * profile refuses new namespaces (Docker's, podman's, Kubernetes'
 * defaults, with no capability), clone(2) with namespace flags fails;
 * unless requireNamespaces says to refuse, pisbx-run then runs the
 * command in the namespaces it is in, confined as strictly as the kernel
 * allows without them:
 *
 *   network: the seccomp filter's SECCOMP_NONS variant makes only TCP and
 *   Unix sockets and sends every connect, send with an address, bind and
 *   listen to the guard, which connects 127.0.0.1:3128 and :1080 to the
 *   proxy's real listeners -- loopback ports chosen here -- and refuses
 *   every other address (guard/nons.c);
 *
 *   filesystem: Landlock grants writes beneath the writable roots and
 *   reads everywhere but the plan's hidden paths (landlock.c), the guard
 *   checks every creation as always;
 *
 *   processes: the command runs in a Landlock domain nested in the
 *   reaper's, scoped for signals and abstract Unix sockets, so it can
 *   neither signal nor ptrace the reaper, the agent or any process
 *   outside (Landlock refuses ptrace across domains since ABI 1; the
 *   scopes need ABI 6, without which nothing is run); the reaper is its
 *   subreaper and kills what is left when the command ends.
 *
 * What stays weaker than with namespaces is said at start (nons_line)
 * and in docs/threat-model.md.
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/launcher.h"
#include "launcher/sandbox/sandbox.h"

#define NONS_MIN_LANDLOCK	6	/* signal and abstract socket scopes */

static int	nons_listen(struct sockaddr_in *);
static int	nons_kill_pass(void);

int
nons_possible(char *why, size_t len)
{
	int	abi = landlock_abi();

	if (abi >= NONS_MIN_LANDLOCK)
		return 0;
	snprintf(why, len, "without namespaces pisbx-run needs Landlock ABI "
	    "%d (Linux 6.12: signals and abstract Unix sockets scoped to the "
	    "sandbox), and this kernel has %s%d", NONS_MIN_LANDLOCK,
	    abi == 0 ? "none, ABI " : "ABI ", abi);
	return -1;
}

void
nons_line(const char *reason)
{
	log_warnx("no namespaces here (%s): the command runs in this "
	    "system's namespaces, confined by seccomp, Landlock and the "
	    "guard; weaker than with namespaces: it reaches nothing but the "
	    "proxy (127.0.0.1:%d, :%d), no UDP, no local TCP port; /proc and "
	    "ps show this system's processes; hidden paths are unreadable, "
	    "not empty, and filtered copies of settings files are not shown; "
	    "no /dev/shm; set requireNamespaces (or --require-namespaces) to "
	    "refuse instead", reason, SANDBOX_HTTP_PORT, SANDBOX_SOCKS_PORT);
}

/* A listener on a loopback port the kernel picks; its address in *sin. */
static int
nons_listen(struct sockaddr_in *sin)
{
	socklen_t	sl = sizeof(*sin);
	int		s;

	if ((s = net_listen_loopback(0)) == -1)
		return -1;
	if (getsockname(s, (struct sockaddr *)sin, &sl) == -1 ||
	    sin->sin_family != AF_INET) {
		close(s);
		return -1;
	}
	return s;
}

int
nons_listeners(struct sandbox *sb, int fds[2])
{
	if ((fds[0] = nons_listen(&sb->proxy_http)) == -1)
		return -1;
	if ((fds[1] = nons_listen(&sb->proxy_socks)) == -1) {
		close(fds[0]);
		return -1;
	}
	/* Orphans of the command come to the reaper, which ends them. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	return 0;
}

/*
 * SIGKILL every child of the reaper (the command's orphans come here:
 * it is their subreaper) and reap it: how many there were.
 */
static int
nons_kill_pass(void)
{
	struct dirent	*de;
	DIR		*d;
	FILE		*f;
	char		 p[64], line[256];
	long		 ppid;
	pid_t		 self = getpid(), pid;
	int		 n = 0;

	if ((d = opendir("/proc")) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if ((pid = (pid_t)strtol(de->d_name, NULL, 10)) <= 0)
			continue;
		snprintf(p, sizeof(p), "/proc/%ld/status", (long)pid);
		if ((f = fopen(p, "re")) == NULL)
			continue;
		ppid = -1;
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "PPid:", 5) == 0)
				ppid = strtol(line + 5, NULL, 10);
		fclose(f);
		if (ppid == (long)self && kill(pid, SIGKILL) == 0)
			n++;
	}
	closedir(d);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	return n;
}

void
nons_kill_all(void)
{
	int	i;

	/*
	 * A killed process's children come to the reaper in turn; a
	 * process SIGKILLed forks no more.  Bounded: a pass that finds
	 * nobody ends it.
	 */
	for (i = 0; i < 1000 && nons_kill_pass() > 0; i++)
		usleep(1000);
}
