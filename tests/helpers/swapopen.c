/*
 * swapopen: make a path-based tree walk lose its way, deterministically
 * (tests/integration/run-jobs.sh).  Every time a process opens the
 * directory DIR/NAME, the opener is held (fanotify FAN_OPEN_PERM) while
 * DIR/NAME and OTHER (a path on the same filesystem) trade places
 * (renameat2 RENAME_EXCHANGE), then let go.  OTHER is typically a symlink
 * to a victim: a walker that opened NAME and then goes on by path
 * ("DIR/NAME/entry") ends up in the victim; one that goes on from the
 * descriptor it opened does not.  Needs root (fanotify).
 *
 *   swapopen DIR NAME OTHER -- PROGRAM [ARG...]
 *	Prints "swapped N" on stderr at the end; exits with PROGRAM's
 *	status.
 */
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE	(1 << 1)
#endif

int
main(int argc, char *argv[])
{
	struct fanotify_event_metadata	 buf[64], *ev;
	struct fanotify_response	 resp;
	struct pollfd			 pfd;
	struct stat			 st, got;
	char				 path[4096];
	ssize_t				 n;
	pid_t				 pid;
	int				 fan, status, swaps = 0, done = 0;

	if (argc < 6 || strcmp(argv[4], "--") != 0) {
		fprintf(stderr, "usage: swapopen DIR NAME OTHER -- PROGRAM "
		    "[ARG...]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/%s", argv[1], argv[2]);
	if (stat(path, &st) == -1) {
		perror(path);
		return 1;
	}
	if ((fan = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC,
	    O_RDONLY)) == -1 || fanotify_mark(fan, FAN_MARK_ADD,
	    FAN_OPEN_PERM | FAN_ONDIR, AT_FDCWD, path) == -1) {
		perror("fanotify");
		return 77;
	}
	if ((pid = fork()) == -1)
		return 1;
	if (pid == 0) {
		execvp(argv[5], argv + 5);
		perror(argv[5]);
		_exit(127);
	}
	pfd.fd = fan;
	pfd.events = POLLIN;
	while (!done) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			done = 1;
		if (poll(&pfd, 1, done ? 0 : 100) <= 0)
			continue;
		if ((n = read(fan, buf, sizeof(buf))) <= 0)
			continue;
		for (ev = buf; FAN_EVENT_OK(ev, n); ev = FAN_EVENT_NEXT(ev, n)) {
			if (ev->fd < 0)
				continue;
			/* The marked directory, wherever it now is. */
			if (fstat(ev->fd, &got) == 0 && got.st_ino ==
			    st.st_ino && got.st_dev == st.st_dev &&
			    renameat2(AT_FDCWD, path, AT_FDCWD, argv[3],
			    RENAME_EXCHANGE) == 0)
				swaps++;
			resp.fd = ev->fd;
			resp.response = FAN_ALLOW;
			(void)!write(fan, &resp, sizeof(resp));
			close(ev->fd);
		}
	}
	fprintf(stderr, "swapped %d\n", swaps);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 +
	    WTERMSIG(status);
}
