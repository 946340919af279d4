/*
 * guardrace: race the creation guard's handlers against another thread
 * that changes what a relative path names, from inside pisbx-run
 * (tests/integration/run-guard-race.sh).  The guard must act on exactly
 * what it checked: a call checked in one directory and performed in
 * another is a win for the command.
 *
 *   guardrace SECONDS FLIP A B SAFE NAME BAD OP...
 *	FLIP cd:   a thread chdir()s between directories A and B (the
 *		   process's cwd, which every thread shares).
 *	FLIP swap: a thread exchanges A and B (renameat2 RENAME_EXCHANGE),
 *		   e.g. a directory and a symlink to another one; an even
 *		   number of times in all.
 *	SAFE is the directory where the call may succeed (opened once at
 *	the start), NAME the relative text given to each call, BAD the
 *	absolute path where a win shows.  Each OP is raced for SECONDS;
 *	one line "OP tries=N ok=M won=K" each.
 *
 *	bind	 bind(NAME); won: a connect to BAD (a socket of the host)
 *		 then succeeds, i.e. the guard took it as the command's
 *	connect	 connect(NAME), SAFE/NAME being the helper's own listening
 *		 socket; won: the peer is BAD
 *	sendto	 a datagram "race" to NAME, SAFE/NAME the helper's own; the
 *		 scenario looks for it at BAD's server (won stays 0 here)
 *	create creat mkdir mknod symlink link rename
 *		 the call on NAME; won: BAD exists afterwards
 *	truncate write
 *		 truncate(NAME, 0), open(NAME, O_WRONLY|O_TRUNC); won: BAD
 *		 is empty afterwards (it is not, before)
 *	A file op stops at its first win (BAD cannot be cleaned).
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE	(1 << 1)
#endif

static const char	*flip_a, *flip_b;
static int		 flip_swap;
static volatile int	 flip_stop;
static unsigned long	 flip_n;

static void	*flip(void *);
static int	 unaddr(struct sockaddr_un *, const char *);
static int	 own_socket(int safe, const char *base, int type);
static int	 bad_changed(const char *op, const char *bad);
static int	 try_op(const char *op, int safe, const char *base,
		    const char *name, const char *bad, int own, int *won);
static double	 now(void);

static void *
flip(void *arg)
{
	(void)arg;
	while (!flip_stop || (flip_swap && flip_n % 2 != 0)) {
		if (flip_swap) {
			if (renameat2(AT_FDCWD, flip_a, AT_FDCWD, flip_b,
			    RENAME_EXCHANGE) == 0)
				flip_n++;
		} else
			(void)chdir(flip_n++ % 2 == 0 ? flip_a : flip_b);
	}
	return NULL;
}

static int
unaddr(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path))
		return -1;
	memcpy(sun->sun_path, path, strlen(path));
	return (int)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
}

/* The helper's own socket SAFE/base, bound before the race starts. */
static int
own_socket(int safe, const char *base, int type)
{
	struct sockaddr_un	sun;
	char			p[128];
	int			s, len;

	snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", safe, base);
	(void)unlinkat(safe, base, 0);
	if ((s = socket(AF_UNIX, type | SOCK_NONBLOCK, 0)) == -1 ||
	    (len = unaddr(&sun, p)) == -1 ||
	    bind(s, (struct sockaddr *)&sun, (socklen_t)len) == -1 ||
	    (type == SOCK_STREAM && listen(s, 64) == -1)) {
		fprintf(stderr, "guardrace: own socket %s: %s\n", base,
		    strerror(errno));
		exit(2);
	}
	return s;
}

static int
bad_changed(const char *op, const char *bad)
{
	struct stat	st;

	if (strcmp(op, "truncate") == 0 || strcmp(op, "write") == 0)
		return stat(bad, &st) == 0 && st.st_size == 0;
	return lstat(bad, &st) == 0;
}

/* One try: 1 (the call succeeded), 0 (refused or failed), -1 (bad op). */
static int
try_op(const char *op, int safe, const char *base, const char *name,
    const char *bad, int own, int *won)
{
	struct sockaddr_un	sun, peer;
	socklen_t		pl = sizeof(peer);
	char			buf[64];
	int			s, c, fd, len, rc = 0;

	if (strcmp(op, "bind") == 0) {
		if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
			return 0;
		len = unaddr(&sun, name);
		if (bind(s, (struct sockaddr *)&sun, (socklen_t)len) == 0) {
			rc = 1;
			(void)unlinkat(safe, base, 0);
			len = unaddr(&sun, bad);
			if ((c = socket(AF_UNIX, SOCK_STREAM, 0)) != -1 &&
			    connect(c, (struct sockaddr *)&sun,
			    (socklen_t)len) == 0)
				(*won)++;
			if (c != -1)
				close(c);
		}
		close(s);
		return rc;
	}
	if (strcmp(op, "connect") == 0) {
		if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
			return 0;
		len = unaddr(&sun, name);
		if (connect(s, (struct sockaddr *)&sun, (socklen_t)len) == 0) {
			rc = 1;
			memset(&peer, 0, sizeof(peer));
			if (getpeername(s, (struct sockaddr *)&peer, &pl) ==
			    0 && strcmp(peer.sun_path, bad) == 0)
				(*won)++;
		}
		close(s);
		while ((c = accept(own, NULL, NULL)) != -1)
			close(c);
		return rc;
	}
	if (strcmp(op, "sendto") == 0) {
		if ((s = socket(AF_UNIX, SOCK_DGRAM, 0)) == -1)
			return 0;
		len = unaddr(&sun, name);
		rc = sendto(s, "race", 4, 0, (struct sockaddr *)&sun,
		    (socklen_t)len) == 4;
		close(s);
		while (recv(own, buf, sizeof(buf), 0) > 0)
			;
		return rc;
	}
	if (strcmp(op, "create") == 0 || strcmp(op, "creat") == 0) {
		fd = op[5] == '\0' ? creat(name, 0644) : open(name,
		    O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd != -1) {
			close(fd);
			rc = 1;
		}
	} else if (strcmp(op, "mkdir") == 0)
		rc = mkdir(name, 0755) == 0;
	else if (strcmp(op, "mknod") == 0)
		rc = mknod(name, S_IFIFO | 0600, 0) == 0;
	else if (strcmp(op, "symlink") == 0)
		rc = symlink("race-target", name) == 0;
	else if (strcmp(op, "link") == 0)
		rc = linkat(safe, "race.src", AT_FDCWD, name, 0) == 0;
	else if (strcmp(op, "rename") == 0) {
		if ((fd = openat(safe, "race.mv", O_WRONLY | O_CREAT |
		    O_CLOEXEC, 0644)) != -1)
			close(fd);
		rc = renameat(safe, "race.mv", AT_FDCWD, name) == 0;
	} else if (strcmp(op, "truncate") == 0 || strcmp(op, "write") == 0) {
		if (op[0] == 't')
			rc = truncate(name, 0) == 0;
		else if ((fd = open(name, O_WRONLY | O_TRUNC |
		    O_CLOEXEC)) != -1) {
			close(fd);
			rc = 1;
		}
		/* Nothing to clean: the file stays, emptied. */
		if (rc)
			*won += bad_changed(op, bad);
		return rc;
	} else
		return -1;
	if (rc) {
		*won += bad_changed(op, bad);
		(void)unlinkat(safe, base, strcmp(op, "mkdir") == 0 ?
		    AT_REMOVEDIR : 0);
	}
	return rc;
}

static double
now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char *argv[])
{
	pthread_t	 t;
	const char	*name, *bad, *base, *op;
	double		 secs, end;
	unsigned long	 tries, oks;
	int		 i, safe, own, won, rc, fd;

	if (argc < 9 || (strcmp(argv[2], "cd") != 0 &&
	    strcmp(argv[2], "swap") != 0)) {
		fprintf(stderr, "usage: guardrace SECONDS cd|swap A B SAFE "
		    "NAME BAD OP...\n");
		return 2;
	}
	secs = atof(argv[1]);
	flip_swap = strcmp(argv[2], "swap") == 0;
	flip_a = argv[3];
	flip_b = argv[4];
	name = argv[6];
	bad = argv[7];
	base = strrchr(name, '/') != NULL ? strrchr(name, '/') + 1 : name;
	if ((safe = open(argv[5], O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		fprintf(stderr, "guardrace: %s: %s\n", argv[5],
		    strerror(errno));
		return 2;
	}
	if ((fd = openat(safe, "race.src", O_WRONLY | O_CREAT | O_CLOEXEC,
	    0644)) != -1)
		close(fd);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 8; i < argc; i++) {
		op = argv[i];
		own = -1;
		if (strcmp(op, "connect") == 0)
			own = own_socket(safe, base, SOCK_STREAM);
		else if (strcmp(op, "sendto") == 0)
			own = own_socket(safe, base, SOCK_DGRAM);
		flip_stop = 0;
		flip_n = 0;
		if (pthread_create(&t, NULL, flip, NULL) != 0)
			return 2;
		tries = oks = 0;
		won = 0;
		for (end = now() + secs; now() < end; tries++) {
			if ((rc = try_op(op, safe, base, name, bad, own,
			    &won)) == -1) {
				fprintf(stderr, "guardrace: unknown op %s\n",
				    op);
				return 2;
			}
			oks += (unsigned long)rc;
			if (won > 0 && strcmp(op, "bind") != 0 &&
			    strcmp(op, "connect") != 0)
				break;
		}
		flip_stop = 1;
		pthread_join(t, NULL);
		if (own != -1) {
			close(own);
			(void)unlinkat(safe, base, 0);
		}
		printf("%s tries=%lu ok=%lu won=%d\n", op, tries, oks, won);
	}
	return 0;
}
