/*
 * The caller's private files outside the home, hidden from the command:
 * in the runtime directory ($XDG_RUNTIME_DIR) and the shared temporary
 * directories, each entry the caller owns and keeps from group and
 * others, but for those the run works in; and the secret stores the
 * runtime directory and the environment name.  Run in the parent, by
 * fs_plan_build.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "policy/policy.h"
#include "launcher/fs/fs.h"
#include "launcher/fs/fs_int.h"

static int	 fs_private_sockets(int dirfd, const char *name);
static int	 fs_private_at(struct fs_set *, const char *path, int whole,
		    const char *const *keep, size_t nkeep,
		    const struct strlist *);
static int	 fs_private_secrets(struct fs_set *, const struct config *,
		    char *const *rt, size_t nrt, const char *, const char *);

/* Entries of one shared temporary directory looked through, at most. */
#define FS_TMP_MAX	4096
/* Entries of a private directory looked at for sockets only, at most. */
#define FS_SOCKDIR_MAX	16

/*
 * The caller's private entries outside the home: the runtime directory,
 * and each entry of the shared temporary directories owned by the caller,
 * not a symbolic link, and closed to group and others (mode & 077 == 0).
 * Left visible: one that is, or holds, the working directory, the
 * project, the workspace or a writable root the config names -- the run
 * works there (a project made by mktemp -d).  The run's own directory is
 * hidden with the rest and shown again below, as are the $PATH
 * directories in one and what allowRead names.  With allowAllUnixSockets
 * directories stay (the sockets the command may then reach live in
 * them); files do not.  A shared directory of more than FS_TMP_MAX
 * entries is hidden whole, the paths the run uses shown again: its
 * private entries cannot all be looked for.
 */
int
fs_private_hide(struct fs_set *set, const struct fs_plan *plan,
    const struct config *conf, const struct fs_inputs *in,
    const struct strlist *pathdirs, const char *home, const char *proj)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	const char	**keep, *env;
	char		*rt[2] = { NULL, NULL }, *p, real[PATH_MAX];
	char		 seen[PATH_MAX] = "";
	size_t		 i, n, nkeep = 0, nrt = 0;
	int		 dirs = !conf->allow_all_unix_sockets, rc = -1, r;
	uid_t		 uid = getuid();

	if ((keep = reallocarray(NULL, set->n + 3, sizeof(*keep))) == NULL)
		return -1;
	keep[nkeep++] = in->cwd;
	keep[nkeep++] = proj;
	if (plan->workspace != NULL)
		keep[nkeep++] = plan->workspace;
	for (i = 0; i < set->n; i++)
		if ((set->v[i].flags & P_ALLOW_WRITE) &&
		    strcmp(set->v[i].path, in->tmpdir) != 0)
			keep[nkeep++] = set->v[i].path;

	/* $XDG_RUNTIME_DIR, and /run/user/<uid> when it is another. */
	if ((env = getenv("XDG_RUNTIME_DIR")) != NULL && env[0] == '/' &&
	    io_realpath(env, real) != NULL) {
		if ((rt[nrt] = strdup(real)) == NULL)
			goto done;
		nrt++;
	}
	snprintf(seen, sizeof(seen), "/run/user/%u", (unsigned int)uid);
	if (io_realpath(seen, real) != NULL && (nrt == 0 ||
	    strcmp(rt[0], real) != 0)) {
		if ((rt[nrt] = strdup(real)) == NULL)
			goto done;
		nrt++;
	}
	seen[0] = '\0';
	for (i = 0; i < nrt; i++) {
		if (lstat(rt[i], &st) == -1 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != uid || (st.st_mode & 077) != 0 || !dirs)
			continue;
		if (fs_private_at(set, rt[i], 0, keep, nkeep, pathdirs) == -1)
			goto done;
	}

	/* One readdir(3) of each, and an fstatat(2) per file or directory. */
	for (i = 0; i < fs_nshared_tmp; i++) {
		if (io_realpath(fs_shared_tmp[i], real) == NULL ||
		    strcmp(real, "/") == 0 || strcmp(real, seen) == 0 ||
		    (d = opendir(real)) == NULL)
			continue;
		snprintf(seen, sizeof(seen), "%s", real);
		n = 0;
		r = 0;
		while (r == 0 && (de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			if (++n > FS_TMP_MAX)
				break;
			/*
			 * What readdir says an entry is spares the stat of
			 * every socket, link and fifo other tools leave in
			 * /tmp (hundreds on a busy machine): only a regular
			 * file or a directory can be hidden.
			 */
			if (de->d_type != DT_UNKNOWN && de->d_type != DT_REG &&
			    (de->d_type != DT_DIR || !dirs))
				continue;
			if (fstatat(dirfd(d), de->d_name, &st,
			    AT_SYMLINK_NOFOLLOW) == -1 || st.st_uid != uid ||
			    (st.st_mode & 077) != 0 ||
			    !(S_ISREG(st.st_mode) ||
			    (S_ISDIR(st.st_mode) && dirs &&
			    !fs_private_sockets(dirfd(d), de->d_name))))
				continue;
			if (asprintf(&p, "%s/%s", real, de->d_name) == -1) {
				r = -1;
				break;
			}
			r = fs_private_at(set, p, 0, keep, nkeep, pathdirs);
			free(p);
		}
		closedir(d);
		if (r == -1)
			goto done;
		if (n > FS_TMP_MAX) {
			log_warnx("%s: more than %d entries: hidden whole but "
			    "for the paths this run uses (its private files "
			    "cannot all be looked for); to show it, add \"%s\" "
			    "to filesystem.allowRead", real, FS_TMP_MAX, real);
			if (fs_private_at(set, real, 1, keep, nkeep,
			    pathdirs) == -1)
				goto done;
		}
	}
	rc = fs_private_secrets(set, conf, rt, nrt, home, proj);
done:
	free(rt[0]);
	free(rt[1]);
	free(keep);
	return rc;
}

/*
 * Whether a private directory holds sockets only, a few (tmux-<uid>, an
 * ssh-agent's ssh-XXXX), or nothing: left as it is, there is nothing to
 * read in it, and the guard decides what the command reaches (with a
 * refusal that names the key, and hostIPC's retry) rather than a hidden
 * name that is not there.
 */
static int
fs_private_sockets(int dirfd, const char *name)
{
	union {
		struct dirent64	de;
		char		b[4096];
	}		 buf;
	struct dirent64	*de;
	struct stat	 st;
	ssize_t		 len = 0, off;
	int		 fd, n = 0, only = 1;

	/*
	 * getdents64 itself: a DIR (fdopendir's fstat and fcntl, its 32 KiB
	 * buffer) for a few names, dozens of times a start, cost more than
	 * the reading.  The first name that is no socket ends it.
	 */
	if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return 0;
	while (only && (len = getdents64(fd, buf.b, sizeof(buf.b))) > 0) {
		for (off = 0; only && off < len; off += de->d_reclen) {
			de = (struct dirent64 *)(void *)(buf.b + off);
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			/* readdir's type where it gives one, else a stat. */
			only = ++n <= FS_SOCKDIR_MAX &&
			    (de->d_type == DT_UNKNOWN ? fstatat(fd, de->d_name,
			    &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISSOCK(st.st_mode) : de->d_type == DT_SOCK);
		}
	}
	/* Not read to its end: hidden. */
	if (len == -1)
		only = 0;
	close(fd);
	return only;
}

/*
 * Hide one private entry (whole: a shared directory as a whole), unless
 * the run works there or the config shows it; show the $PATH directories
 * in it again.
 */
static int
fs_private_at(struct fs_set *set, const char *path, int whole,
    const char *const *keep, size_t nkeep, const struct strlist *pathdirs)
{
	const struct fs_entry	*e;
	size_t			 i;

	for (i = 0; i < nkeep; i++)
		if (whole ? strcmp(keep[i], path) == 0 :
		    fs_under(keep[i], path))
			return 0;
	if ((e = fs_set_find(set, path, strlen(path))) != NULL &&
	    (e->flags & (P_ALLOW_READ | P_ALLOW_WRITE)))
		return 0;
	if (fs_set_add(set, path, P_DENY_READ, NULL) == -1)
		return -1;
	for (i = 0; i < pathdirs->n; i++)
		if (fs_under(pathdirs->v[i], path) &&
		    fs_set_add(set, pathdirs->v[i], P_ALLOW_READ, NULL) == -1)
			return -1;
	return 0;
}

/*
 * The known secret stores outside the home, hidden like those in it
 * (fs_secret_at) where they would still be readable: the runtime
 * directory shown (allowRead, allowAllUnixSockets), a ticket cache that
 * is not private.
 */
static int
fs_private_secrets(struct fs_set *set, const struct config *conf,
    char *const *rt, size_t nrt, const char *home, const char *proj)
{
	const char	*env;
	char		*p;
	size_t		 i, j;
	int		 rc = 0;

	for (i = 0; i < nrt && rc == 0; i++) {
		for (j = 0; j < fs_nruntime_secrets && rc == 0; j++) {
			if ((p = fs_join(rt[i], fs_runtime_secrets[j])) == NULL)
				return -1;
			rc = fs_secret_at(set, conf, home, proj, p);
			free(p);
		}
	}
	for (i = 0; i < fs_nenv_secrets && rc == 0; i++) {
		if ((env = getenv(fs_env_secrets[i])) == NULL)
			continue;
		if (strncmp(env, "FILE:", 5) == 0)
			env += 5;
		else if (strncmp(env, "DIR:", 4) == 0)
			env += 4;
		if (env[0] == '/' && strstr(env, "*") == NULL)
			rc = fs_secret_at(set, conf, home, proj, env);
	}
	if (rc == 0) {
		if (asprintf(&p, "/tmp/krb5cc_%u", (unsigned int)getuid()) ==
		    -1)
			return -1;
		rc = fs_secret_at(set, conf, home, proj, p);
		free(p);
	}
	return rc;
}
