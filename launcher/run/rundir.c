/*
 * The private per-run directory on the host, outside any workspace:
 * "$TMPDIR/pisbx-UID/pisbx-run.<pid>.XXXXXX" ($TMPDIR, else /tmp) holding
 * the command's TMPDIR, tmp/, alone.  Its other files (git-proxy,
 * ssh_config, the empty file bound over hidden ones, the login file;
 * runsecrets.c's and the filtered copies) are made here in memory, and
 * the sandbox writes them on a tmpfs of its own mounted over the
 * directory (mount.c): seen at their paths inside, never on the host's
 * disk.  Without namespaces they are written into the directory itself.
 * Removed at exit; a run that was killed with SIGKILL leaves one behind,
 * which the next run removes once that pid is gone.
 *
 * The base "pisbx-UID" is ours alone (0700, checked) and hidden in every
 * sandbox (fspolicy.c), even one whose allowWrite covers $TMPDIR: no
 * command reaches another run's directory, nor plants a tree for the
 * removal below.  Which still goes by descriptors only, never by path: a
 * directory swapped for a symlink under the walk leads nowhere.
 */
#include <sys/stat.h>
#include <sys/uio.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "common/runsock.h"
#include "common/shell.h"
#include "launcher/launcher.h"
#include "launcher/fs/fs.h"
#include "launcher/sandbox/sandbox.h"
#include "launcher/run/run.h"

#define RUNDIR_PREFIX	RUNSOCK_PREFIX
#define RUNDIR_DEPTH_MAX	128	/* deeper is left to the next sweep */

#define RUNDIR_SSH_CONFIG_MAX	(256 * 1024)

static int	 rundir_base(char *, size_t);
static char	*rundir_file(struct sandbox *, const char *, mode_t,
		    const char *, size_t, const char *, const char *,
		    const char *);
static int	 rundir_opendir(int, const char *);
static void	 rundir_rm(int, const char *, dev_t, int);

/*
 * The base of our run directories, "$TMPDIR/pisbx-UID" (else under
 * /tmp), made if need be: its path in path, an fd on it, or -1 (said why
 * when it is not ours).
 */
static int
rundir_base(char *path, size_t len)
{
	struct stat	 st;
	int		 fd;

	if (runsock_base(path, len) == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdir(path, 0700) == -1 && errno != EEXIST)
		return -1;
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(fd, &st) == -1)
		goto fail;
	if (st.st_uid != geteuid()) {
		log_warnx("%s belongs to uid %lu, not to you: remove it, or "
		    "set TMPDIR to a directory of yours", path,
		    (unsigned long)st.st_uid);
		errno = EPERM;
		goto fail;
	}
	if ((st.st_mode & 077) != 0 && fchmod(fd, 0700) == -1)
		goto fail;
	return fd;
fail:
	if (fd != -1)
		close(fd);
	return -1;
}

int
rundir_create(struct sandbox *sb)
{
	char	 base[PATH_MAX], tmpl[PATH_MAX];
	int	 fd;

	if ((fd = rundir_base(base, sizeof(base))) == -1)
		return -1;
	close(fd);
	if ((size_t)snprintf(tmpl, sizeof(tmpl), "%s/%s%ld.XXXXXX", base,
	    RUNDIR_PREFIX, (long)getpid()) >= sizeof(tmpl)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdtemp(tmpl) == NULL)
		return -1;
	if ((sb->rundir = realpath(tmpl, NULL)) == NULL)
		goto fail;
	if (asprintf(&sb->tmpdir, "%s/tmp", sb->rundir) == -1)
		goto fail;
	sb->files.dir = sb->rundir;
	if (mkdir(sb->tmpdir, 0700) == -1)
		goto fail;
	return 0;
fail:
	rundir_remove(tmpl);
	return -1;
}

int
rundir_empty(struct sandbox *sb)
{
	if (sb->empty != NULL)
		return 0;
	return (sb->empty = fs_runfile_add(&sb->files, "empty", 0, 0444,
	    "", 0)) == NULL ? -1 : 0;
}

/*
 * Make rundir/NAME (mode): head (hlen octets, may be 0), then before,
 * self_exe shell-quoted, after.  Its path, malloc'ed, or NULL.
 */
static char *
rundir_file(struct sandbox *sb, const char *name, mode_t mode,
    const char *head, size_t hlen, const char *before, const char *self_exe,
    const char *after)
{
	struct iovec	 iov[4];
	char		*q, *path;

	if ((q = malloc(SHELL_QUOTE_SIZE(strlen(self_exe)))) == NULL)
		return NULL;
	shell_quote(q, self_exe);
	iov[0].iov_base = (void *)head;
	iov[0].iov_len = hlen;
	iov[1].iov_base = (void *)before;
	iov[1].iov_len = strlen(before);
	iov[2].iov_base = q;
	iov[2].iov_len = strlen(q);
	iov[3].iov_base = (void *)after;
	iov[3].iov_len = strlen(after);
	path = fs_runfile_addv(&sb->files, name, mode, iov, 4);
	free(q);
	return path;
}

/*
 * The system's ssh_config with a last block that sends every connection
 * through the sandbox's proxy: plain ssh, scp, sftp and rsync -e ssh read
 * no variable for it.  ssh takes the first value it finds for an option,
 * so a ProxyCommand or ProxyJump of the command line or of a user config
 * still wins (and GIT_SSH_COMMAND's is the same one).
 */
char *
rundir_ssh_config(struct sandbox *sb, const char *self_exe)
{
	struct stat	 st;
	char		*path = NULL, *buf = NULL, *exe;
	ssize_t		 n;
	int		 in;

	/* ssh expands %-tokens in ProxyCommand before its shell runs it. */
	if ((exe = env_ssh_percent(self_exe)) == NULL)
		return NULL;
	if ((in = open(RUNDIR_SSH_CONFIG, O_RDONLY | O_CLOEXEC |
	    O_NONBLOCK)) == -1) {
		free(exe);
		return NULL;
	}
	if (fstat(in, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > RUNDIR_SSH_CONFIG_MAX)
		errno = EINVAL;
	else if ((buf = malloc((size_t)st.st_size + 1)) != NULL &&
	    (n = read(in, buf, (size_t)st.st_size)) != -1)
		path = rundir_file(sb, "ssh_config", 0444, buf, (size_t)n,
		    "\n# pisbx-run: the sandbox's only way out\n"
		    "Match all\n\tProxyCommand ", exe,
		    " --connect-proxy %h %p\n");
	close(in);
	free(buf);
	free(exe);
	return path;
}

/*
 * git runs GIT_PROXY_COMMAND as one program with HOST PORT, never through
 * a shell, so "pisbx-run --connect-proxy" needs a script of its own.  It
 * lies in the run directory, outside the command's TMPDIR: the sandbox
 * sees it read-only, and runs it (the sandbox's tmpfs is not noexec).
 */
char *
rundir_git_proxy(struct sandbox *sb, const char *self_exe)
{
	return rundir_file(sb, "git-proxy", 0555, "", 0, "#!/bin/sh\n"
	    "# git:// through the sandbox's proxy (GIT_PROXY_COMMAND)\n"
	    "exec ", self_exe, " --connect-proxy \"$1\" \"$2\"\n");
}

/*
 * A login shell runs the system profile, which sets PATH anew (Debian's
 * /etc/profile does), and then the user's own, which puts the toolchains
 * back (~/.cargo/bin, pyenv) but is hidden in the sandbox.  bash reads
 * BASH_ENV after both in "bash -l -c"; this file, read there, puts the
 * caller's PATH first again and appends what the system profile added.
 * For "bash -i" it is the rcfile and runs the system profile itself.
 * Our own lines are not traced under -x.
 */
char *
rundir_login(struct sandbox *sb, const char *path, const char *bash_env)
{
	FILE	*m;
	char	*buf = NULL, *file = NULL, *q = NULL;
	size_t	 len = 0, qlen;
	int	 rc;

	qlen = SHELL_QUOTE_SIZE(strlen(path != NULL ? path : "") +
	    strlen(bash_env != NULL ? bash_env : ""));
	if ((q = malloc(qlen)) == NULL || (m = open_memstream(&buf, &len)) ==
	    NULL)
		goto fail;
	fputs("# pisbx-sh -l (pisbx-sh(1)): the system profile, then the "
	    "caller's PATH\n"
	    "{ __pisbx_f=$-; set +x; } 2>/dev/null\n"
	    "shopt -q login_shell || { [ -r /etc/profile ] && "
	    ". /etc/profile; }\n", m);
	if (path != NULL) {
		shell_quote(q, path);
		fprintf(m, "__pisbx_rest=$PATH:\n"
		    "PATH=%s\n"
		    "while [ -n \"$__pisbx_rest\" ]; do\n"
		    "\t__pisbx_d=${__pisbx_rest%%%%:*}\n"
		    "\t__pisbx_rest=${__pisbx_rest#*:}\n"
		    "\tcase :$PATH: in\n"
		    "\t*:\"$__pisbx_d\":*) ;;\n"
		    "\t*) [ -z \"$__pisbx_d\" ] || PATH=$PATH:$__pisbx_d ;;\n"
		    "\tesac\n"
		    "done\n"
		    "export PATH\n"
		    "unset __pisbx_rest __pisbx_d\n", q);
	}
	if (bash_env != NULL) {
		shell_quote(q, bash_env);
		fprintf(m, "BASH_ENV=%s\nexport BASH_ENV\n", q);
	} else
		fputs("unset BASH_ENV\n", m);
	fputs("{ case $__pisbx_f in *x*) set -x ;; esac; "
	    "unset __pisbx_f; } 2>/dev/null\n"
	    "case $- in\n"
	    "*i*) ;;\n"
	    "*) [ -z \"${BASH_ENV-}\" ] || [ ! -r \"$BASH_ENV\" ] || "
	    ". \"$BASH_ENV\" ;;\n"
	    "esac\n", m);
	rc = fclose(m);
	if (rc != EOF)
		file = fs_runfile_add(&sb->files, "login", 0, 0444, buf, len);
fail:
	free(buf);
	free(q);
	return file;
}

/*
 * Open dfd/name, a directory of ours (never through a symlink), for
 * reading, searchable and writable so its entries go: chmod'ed through
 * the descriptor, or for one we may not read, through an O_PATH one.
 */
static int
rundir_opendir(int dfd, const char *name)
{
	struct stat	 st;
	char		 proc[64];
	int		 fd, pfd;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1 && errno == EACCES) {
		if ((pfd = openat(dfd, name, O_PATH | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) == -1)
			return -1;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
		/* The magic link names this very directory. */
		if (fstat(pfd, &st) == 0 && st.st_uid == geteuid() &&
		    chmod(proc, (st.st_mode & 07777) | S_IRWXU) == 0)
			fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY |
			    O_CLOEXEC);
		close(pfd);
	}
	if (fd == -1)
		return -1;
	if (fstat(fd, &st) == -1 || st.st_uid != geteuid() ||
	    ((st.st_mode & S_IRWXU) != S_IRWXU &&
	    fchmod(fd, (st.st_mode & 07777) | S_IRWXU) == -1)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Remove dfd/name and everything below it, by descriptors only: each
 * directory is opened with O_NOFOLLOW and its entries removed relative to
 * that descriptor, so a name swapped for a symlink mid-walk leads nowhere
 * (unlinkat removes the symlink, or fails on a directory that moved in).
 * Only our own directories, on the run directory's filesystem (dev).
 */
static void
rundir_rm(int dfd, const char *name, dev_t dev, int depth)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	int		 fd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return;
	if (!S_ISDIR(st.st_mode)) {
		(void)unlinkat(dfd, name, 0);
		return;
	}
	if (depth >= RUNDIR_DEPTH_MAX || st.st_dev != dev ||
	    st.st_uid != geteuid())
		return;
	/*
	 * An empty directory (a run's tmp/ mostly is) goes at once: no
	 * descriptor, DIR or reads for nothing in it.
	 */
	if (unlinkat(dfd, name, AT_REMOVEDIR) == 0 ||
	    (fd = rundir_opendir(dfd, name)) == -1)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		rundir_rm(fd, de->d_name, dev, depth + 1);
	}
	closedir(d);
	(void)unlinkat(dfd, name, AT_REMOVEDIR);
}

/* Remove the per-run dir (after the sandbox is gone). */
void
rundir_remove(const char *dir)
{
	struct stat	 st;
	char		*parent;
	const char	*name;
	int		 fd;

	if (dir == NULL || (name = strrchr(dir, '/')) == NULL ||
	    (parent = strndup(dir, (size_t)(name - dir))) == NULL)
		return;
	fd = open(parent[0] != '\0' ? parent : "/", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC);
	free(parent);
	if (fd == -1)
		return;
	if (fstat(fd, &st) == 0)
		rundir_rm(fd, name + 1, st.st_dev, 0);
	close(fd);
}

void
rundir_sweep(void)
{
	union {
		struct dirent64	de;
		char		b[4096];
	}		 buf;
	struct dirent64	*de;
	struct stat	 st;
	char		 base[PATH_MAX], *end;
	ssize_t		 len, off;
	long		 pid;
	int		 fd;

	if ((fd = rundir_base(base, sizeof(base))) == -1)
		return;
	if (fstat(fd, &st) == -1) {
		close(fd);
		return;
	}
	/*
	 * getdents64 into the stack, not a DIR: fdopendir's fstat and
	 * fcntl and its 32 KiB buffer (page faults in the parent while the
	 * command runs) for the few names of one user's runs.
	 */
	while ((len = getdents64(fd, buf.b, sizeof(buf.b))) > 0) {
		for (off = 0; off < len; off += de->d_reclen) {
			de = (struct dirent64 *)(void *)(buf.b + off);
			if (strncmp(de->d_name, RUNDIR_PREFIX,
			    strlen(RUNDIR_PREFIX)) != 0)
				continue;
			pid = strtol(de->d_name + strlen(RUNDIR_PREFIX), &end,
			    10);
			if (pid <= 0 || *end != '.' || pid == (long)getpid())
				continue;
			if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
				continue;
			log_debug("removing stale %s/%s", base, de->d_name);
			rundir_rm(fd, de->d_name, st.st_dev, 0);
		}
	}
	close(fd);
}
