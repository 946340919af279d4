/*
 * The private per-run directory on the host, outside any workspace:
 * "$TMPDIR/pisbx-run.<pid>.XXXXXX" (or /tmp) holding the command's TMPDIR
 * and, when the policy hides a file, the empty file bound over it.
 * Removed at exit; a run that was killed with SIGKILL leaves one behind,
 * which the next run removes once that pid is gone.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "common/shell.h"
#include "launcher/launcher.h"

#define RUNDIR_PREFIX	"pisbx-run."

/* The files pisbx-run writes in the run directory besides tmp/. */
static const char *const rundir_files[] = {
	"empty", "git-proxy", "ssh_config",
};
#define RUNDIR_SSH_CONFIG_MAX	(256 * 1024)

static const char *rundir_base(void);
static char	*rundir_file(const struct sandbox *, const char *, mode_t,
		    const char *, size_t, const char *, const char *,
		    const char *);
static int	 rundir_chmod_cb(const char *, const struct stat *, int,
		    struct FTW *);
static int	 rundir_rm_cb(const char *, const struct stat *, int,
		    struct FTW *);

static const char *
rundir_base(void)
{
	const char	*t = getenv("TMPDIR");
	struct stat	 st;

	if (t != NULL && t[0] == '/' && stat(t, &st) == 0 &&
	    S_ISDIR(st.st_mode))
		return t;
	return "/tmp";
}

int
rundir_create(struct sandbox *sb)
{
	char	 tmpl[PATH_MAX];

	if ((size_t)snprintf(tmpl, sizeof(tmpl), "%s/%s%ld.XXXXXX",
	    rundir_base(), RUNDIR_PREFIX, (long)getpid()) >= sizeof(tmpl)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdtemp(tmpl) == NULL)
		return -1;
	if ((sb->rundir = realpath(tmpl, NULL)) == NULL)
		goto fail;
	if (asprintf(&sb->tmpdir, "%s/tmp", sb->rundir) == -1 ||
	    asprintf(&sb->empty, "%s/empty", sb->rundir) == -1)
		goto fail;
	if (mkdir(sb->tmpdir, 0700) == -1)
		goto fail;
	return 0;
fail:
	rundir_remove(tmpl);
	return -1;
}

int
rundir_empty(const struct sandbox *sb)
{
	int	fd;

	if ((fd = open(sb->empty, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0444)) == -1)
		return -1;
	close(fd);
	return 0;
}

/*
 * Write rundir/NAME (mode): head (hlen octets, may be 0), then before,
 * self_exe shell-quoted, after.  Its path, malloc'ed, or NULL.
 */
static char *
rundir_file(const struct sandbox *sb, const char *name, mode_t mode,
    const char *head, size_t hlen, const char *before, const char *self_exe,
    const char *after)
{
	char	*path = NULL, *q = NULL;
	int	 fd = -1;

	if (asprintf(&path, "%s/%s", sb->rundir, name) == -1) {
		path = NULL;
		goto fail;
	}
	if ((q = malloc(SHELL_QUOTE_SIZE(strlen(self_exe)))) == NULL)
		goto fail;
	shell_quote(q, self_exe);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    mode)) == -1 || io_write_all(fd, head, hlen, 0) == -1 ||
	    io_write_all(fd, before, strlen(before), 0) == -1 ||
	    io_write_all(fd, q, strlen(q), 0) == -1 ||
	    io_write_all(fd, after, strlen(after), 0) == -1)
		goto fail;
	close(fd);
	free(q);
	return path;
fail:
	if (fd != -1)
		close(fd);
	free(q);
	free(path);
	return NULL;
}

/*
 * The system's ssh_config with a last block that sends every connection
 * through the sandbox's proxy: plain ssh, scp, sftp and rsync -e ssh read
 * no variable for it.  ssh takes the first value it finds for an option,
 * so a ProxyCommand or ProxyJump of the command line or of a user config
 * still wins (and GIT_SSH_COMMAND's is the same one).
 */
char *
rundir_ssh_config(const struct sandbox *sb, const char *self_exe)
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
 * sees it read-only.
 */
char *
rundir_git_proxy(const struct sandbox *sb, const char *self_exe)
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
rundir_login(const struct sandbox *sb, const char *path,
    const char *bash_env)
{
	FILE	*m;
	char	*buf = NULL, *file = NULL, *q = NULL;
	size_t	 len = 0, qlen;
	int	 fd = -1, rc;

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
	if (rc == EOF || asprintf(&file, "%s/login", sb->rundir) == -1) {
		file = NULL;
		goto fail;
	}
	if ((fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0444)) == -1 || io_write_all(fd, buf, len, 0) == -1)
		goto fail;
	close(fd);
	free(buf);
	free(q);
	return file;
fail:
	if (fd != -1)
		close(fd);
	free(buf);
	free(q);
	free(file);
	return NULL;
}

/* Make every directory searchable and writable so its entries go. */
static int
rundir_chmod_cb(const char *path, const struct stat *st, int type,
    struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_D || type == FTW_DNR)
		chmod(path, (st->st_mode & 07777) | S_IRWXU);
	return 0;
}

static int
rundir_rm_cb(const char *path, const struct stat *st, int type,
    struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/*
 * Remove the per-run dir.  The sandbox is gone by now (its PID namespace
 * died with its init), so nothing inside can race the walk; FTW_PHYS
 * keeps symlinks the command left from leading the walk elsewhere and
 * FTW_MOUNT keeps it on this filesystem.
 */
void
rundir_remove(const char *dir)
{
	char	 path[PATH_MAX];
	size_t	 i;

	if (dir == NULL)
		return;
	/*
	 * The common case first: the command left its TMPDIR empty, so a
	 * call for each file pisbx-run made does it.  Anything left over
	 * (or a failure) takes the walks below.
	 */
	if ((size_t)snprintf(path, sizeof(path), "%s/tmp", dir) <
	    sizeof(path) && rmdir(path) == 0) {
		for (i = 0; i < sizeof(rundir_files) / sizeof(*rundir_files);
		    i++) {
			snprintf(path, sizeof(path), "%s/%s", dir,
			    rundir_files[i]);
			(void)unlink(path);
		}
		if (rmdir(dir) == 0)
			return;
	}
	nftw(dir, rundir_chmod_cb, 16, FTW_PHYS | FTW_MOUNT);
	nftw(dir, rundir_rm_cb, 16, FTW_PHYS | FTW_MOUNT | FTW_DEPTH);
}

void
rundir_sweep(void)
{
	const char	*base = rundir_base();
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	char		 path[PATH_MAX], *end;
	long		 pid;

	if ((d = opendir(base)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, RUNDIR_PREFIX,
		    strlen(RUNDIR_PREFIX)) != 0)
			continue;
		pid = strtol(de->d_name + strlen(RUNDIR_PREFIX), &end, 10);
		if (pid <= 0 || *end != '.' || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", base,
		    de->d_name) >= sizeof(path))
			continue;
		if (lstat(path, &st) == -1 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != geteuid())
			continue;
		log_debug("removing stale %s", path);
		rundir_remove(path);
	}
	closedir(d);
}
