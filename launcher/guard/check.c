/*
 * The checks a resolved path goes through before the guard creates or
 * writes it (guard_check): the plan's protected names, git's
 * configuration and hooks (guard_git asks gitrule_check's questions of
 * the disk), the denyRead and denyWrite patterns, and the state files
 * of a git operation in a repository older than the run (guard_state).
 * A refusal is said once on stderr and counted for the parent
 * (guard_refuse, guard_told).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/log.h"
#include "common/text.h"
#include "launcher/fs/fs.h"
#include "launcher/git/git.h"
#include "launcher/guard/guard.h"
#include "launcher/guard/guard_int.h"

static int	guard_up(int fd, int levels);
static int	guard_git(struct guard_req *, const struct guard_path *,
		    int ancestors_too);
static void	guard_glob_refused(struct guard_req *, const char *verb,
		    const char *path, const char *inside,
		    const struct fs_glob *);
static const char *guard_verb(const struct guard_path *, const char *);
static int	guard_told(struct guard *, const char *verb, const char *path,
		    const char *why);
static int	guard_state(struct guard_req *, const struct guard_path *,
		    const char *verb);
static void	guard_state_send(struct guard *, const char *path);
static int	guard_init_inside(struct guard *, const char *path);

/* An O_PATH fd of the directory levels above fd (0: a copy of fd). */
static int
guard_up(int fd, int levels)
{
	int	cur, next;

	if ((cur = fcntl(fd, F_DUPFD_CLOEXEC, 3)) == -1)
		return -1;
	while (levels-- > 0) {
		next = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		if ((cur = next) == -1)
			return -1;
	}
	return cur;
}

/* Whether dirfd looks like a git directory to git's discovery. */
int
guard_shape(int dirfd)
{
	struct stat	st;

	if (fstatat(dirfd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == -1 ||
	    !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
		return 0;
	if (fstatat(dirfd, "commondir", &st, 0) == 0 && S_ISREG(st.st_mode))
		return 1;
	return fstatat(dirfd, "objects", &st, 0) == 0 &&
	    S_ISDIR(st.st_mode) && fstatat(dirfd, "refs", &st, 0) == 0 &&
	    S_ISDIR(st.st_mode);
}

/*
 * Answer gitrule_check's questions about a resolved path.  1: protected.
 * Every failure to answer protects.
 */
static int
guard_git(struct guard_req *gr, const struct guard_path *gp,
    int ancestors_too)
{
	struct gitrule_q	 q[GUARD_MAXQ];
	struct stat	 st;
	ssize_t		 n, i;
	int		 fd, old, none;

	n = gitrule_check(gp->full, ancestors_too, gr->g->conf.allow_git_config,
	    q, GUARD_MAXQ);
	if (n <= 0)
		return n < 0;
	if (gp->parent == -1)
		return 1;
	for (i = 0; i < n; i++) {
		if (q[i].ask == GITRULE_DOTGIT) {
			none = fstatat(gp->parent, gp->name, &st,
			    AT_SYMLINK_NOFOLLOW) == -1;
			if (none && (errno != ENOENT ||
			    guard_parent_stat(gp, &st) == -1))
				return 1;
			/* A new .git at the project directory (guard_init_top). */
			if (none && q[i].up == 0 && gr->g->init_ok &&
			    st.st_dev == gr->g->init_top.st_dev &&
			    st.st_ino == gr->g->init_top.st_ino)
				continue;
			if (!guard_made_known(gr->g, &st))
				return 1;
			continue;
		}
		if ((fd = guard_up(gp->parent, q[i].up - 1)) == -1)
			return 1;
		old = fstat(fd, &st) == -1 || !guard_made_known(gr->g, &st);
		if (old && (q[i].ask == GITRULE_BELOW || guard_shape(fd))) {
			close(fd);
			return 1;
		}
		close(fd);
	}
	return 0;
}

/*
 * Say a refusal on stderr, where the command's output goes (the agent
 * sees it at once), and tell the parent for the summary at exit.
 */
void
guard_refuse(struct guard_req *gr, const char *path, const char *verb,
    const char *fmt, ...)
{
	struct guard	*g = gr->g;
	va_list		 ap;
	char		 raw[PATH_MAX + 512], why[PATH_MAX + 512];
	char		 name[PATH_MAX];

	/*
	 * The names are the command's: shown masked (a newline and an
	 * escape sequence in a file name would shape pisbx-run's own
	 * lines, the summary's too).
	 */
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	(void)text_clean(why, sizeof(why), raw, 0);
	(void)text_clean(name, sizeof(name), path, 0);
	pthread_mutex_lock(&g->mu);
	if (!guard_told(g, verb, name, why))
		log_warnx("refused to %s %s: %s", verb, name, why);
	if (g->nrefused < GUARD_MAXREFUSED)
		guard_send(g, REPORT_REFUSED, verb, name, why);
	else if (g->nrefused == GUARD_MAXREFUSED)
		guard_send(g, REPORT_REFUSED_MORE, NULL, NULL, NULL);
	if (g->nrefused <= GUARD_MAXREFUSED)
		g->nrefused++;
	pthread_mutex_unlock(&g->mu);
}

/*
 * A creation or write the kernel refused (rc -EROFS) in the host's /tmp
 * or /var/tmp, read-only in the sandbox: the program ignores TMPDIR, and
 * a bare "Read-only file system" says nothing of where it could write.
 * Said as a refusal, with the command's TMPDIR and the config line that
 * would make the directory writable.  The result stays the kernel's.
 */
void
guard_readonly(struct guard_req *gr, const struct guard_path *gp,
    const char *verb, int rc)
{
	const struct guard_conf	*c = &gr->g->conf;
	const char		*tmp;

	if (rc != -EROFS || gp->full[0] != '/' ||
	    (tmp = fs_shared_tmp_of(gp->full)) == NULL)
		return;
	guard_refuse(gr, gp->full, verb, "%s is read-only in the sandbox; "
	    "write under $TMPDIR (%s), the command's own, or add \"%s\" to "
	    "filesystem.allowWrite in %s", tmp, c->tmpdir != NULL ?
	    c->tmpdir : "?", tmp, c->config_file != NULL ? c->config_file :
	    "the config");
}

/*
 * Whether this refusal was said on stderr already (noted if not): the
 * same refusal again (git retries a lock file, a build loops) is counted
 * in the summary at exit, not said again (newuser C8).  The mutex held.
 */
static int
guard_told(struct guard *g, const char *verb, const char *path,
    const char *why)
{
	const char	*v[3] = { verb, path, why }, *p;
	uint64_t	 h = 14695981039346656037ULL;	/* FNV-1a */
	size_t		 i;

	for (i = 0; i < 3; i++) {
		for (p = v[i]; *p != '\0'; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		h = (h ^ 0xff) * 1099511628211ULL;
	}
	for (i = 0; i < g->ntold; i++)
		if (g->told[i] == h)
			return 1;
	if (g->ntold < GUARD_MAXTOLD)
		g->told[g->ntold++] = h;
	return 0;
}

/*
 * Say why a name matching a denyRead or denyWrite pattern was refused:
 * path itself, or (inside, for a renamed directory) a name in it.
 */
static void
guard_glob_refused(struct guard_req *gr, const char *verb, const char *path,
    const char *inside, const struct fs_glob *fg)
{
	int	read = fg->kind == FS_GLOB_DENY_READ;

	guard_refuse(gr, path, verb, "%s%s matches filesystem.%s pattern %s "
	    "of %s (%s; see pisbx-run(1), FILESYSTEM)",
	    inside != NULL ? inside : "the name",
	    inside != NULL ? " would be there and" : "", fs_glob_key(fg),
	    glob_text(fg->g), gr->g->conf.config_file, read ? "what is made "
	    "there would be readable: pisbx-run hides matching files when it "
	    "starts, and refuses new ones" : "such files are "
	    "write-protected, new ones included");
}

/*
 * A rename, hard link, removal, write or creation of gp: refused
 * (-EACCES, said) when gp is a hidden path, a directory above one, or
 * inside a hidden tree (and not in a tree re-exposed or writable
 * there).  A hidden path is found by its name when a run starts: under
 * a new name (".env" renamed "env", or linked, or its directory renamed)
 * the next run would read it.  With namespaces the hidden path itself
 * is an empty stand-in mounted over it (EBUSY, EXDEV, EROFS) but a
 * directory above it moves with it; without them (guard/nons.c) it is
 * the real file, which Landlock leaves writable beneath a writable root:
 * guard_check asks here for every write and creation too.
 */
int
guard_hidden(struct guard_req *gr, const struct guard_path *gp,
    const char *verb)
{
	const char	*h;

	if (gp->dots || gp->full[0] == '\0' ||
	    (h = fs_plan_hides(gr->g->conf.plan, gp->full)) == NULL)
		return 0;
	guard_refuse(gr, gp->full, guard_verb(gp, verb), "%s%s is hidden "
	    "(filesystem.denyRead, or a secret pisbx-run hides; see "
	    "pisbx-run(1), FILESYSTEM): it keeps its name and its contents, "
	    "or the next run could read it under another name",
	    strcmp(h, gp->full) == 0 ? "it" : h,
	    strcmp(h, gp->full) == 0 ? "" : fs_under_ci(h, gp->full) ?
	    ", below it," : ", which holds it,");
	return -EACCES;
}

/*
 * A directory renamed from op to np: refused (-EACCES, said) when a name
 * in it would match a deny pattern where it lands, or when there are too
 * many names to check.
 */
int
guard_glob_moved(struct guard_req *gr, const struct guard_path *op,
    const struct guard_path *np, const char *verb)
{
	const struct fs_glob	*fg;
	struct stat		 st;
	char			 hit[PATH_MAX];
	int			 fd, rc;

	if (gr->g->conf.plan->nglobs == 0 || op->parent == -1 ||
	    fstatat(op->parent, op->name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
	    !S_ISDIR(st.st_mode))
		return 0;
	if ((fd = openat(op->parent, op->name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -errno;
	rc = fs_glob_moved(gr->g->conf.plan, fd, op->full, np->full, hit,
	    sizeof(hit), &fg);
	close(fd);
	if (rc == 1) {
		guard_glob_refused(gr, verb, op->full, hit, fg);
		return -EACCES;
	}
	if (rc == -1) {
		guard_refuse(gr, op->full, verb, "the names in it cannot all "
		    "be checked against the filesystem patterns (%s; at %s); "
		    "move fewer files at once", errno == E2BIG ? "too many" :
		    strerror(errno), hit);
		return -EACCES;
	}
	return 0;
}

/*
 * What a refusal calls the call: verb, or for an O_CREAT|O_EXCL open
 * (NULL: the name was not looked at) "write" when the name is there.
 */
static const char *
guard_verb(const struct guard_path *gp, const char *verb)
{
	struct stat	st;

	if (verb != NULL)
		return verb;
	return gp->parent != -1 && fstatat(gp->parent, gp->name, &st,
	    AT_SYMLINK_NOFOLLOW) == 0 ? "write" : "create";
}

/*
 * Whether path lies in the .git the command made at the project
 * directory (guard_init_top): the mandatory set's git names there
 * (.git/hooks, .git/config; the caller asks only for those) are then
 * those of a repository made during the run, which git's rules allow
 * and the parent checks at exit.  A denyWrite path still refuses.
 */
static int
guard_init_inside(struct guard *g, const char *path)
{
	const struct fs_plan	*plan = g->conf.plan;
	const char		*top = plan->project;
	struct stat		 st;
	char			 dotgit[PATH_MAX];
	size_t			 len, i;

	if (!g->init_ok || top == NULL)
		return 0;
	len = strlen(top);
	if (strncmp(path, top, len) != 0 || strncasecmp(path + len, "/.git/",
	    6) != 0)
		return 0;
	/* A denyWrite entry of the config there still stands. */
	for (i = 0; i < plan->nguarded; i++)
		if (strcmp(plan->guarded_why[i], "filesystem.denyWrite") == 0 &&
		    fs_under_ci(path, plan->guarded[i]))
			return 0;
	if (stat(top, &st) == -1 || st.st_dev != g->init_top.st_dev ||
	    st.st_ino != g->init_top.st_ino)
		return 0;
	if ((size_t)snprintf(dotgit, sizeof(dotgit), "%.*s", (int)len + 5,
	    path) >= sizeof(dotgit) || lstat(dotgit, &st) == -1 ||
	    !S_ISDIR(st.st_mode))
		return 0;
	return guard_made_known(g, &st);
}

/*
 * Whether to refuse creating, writing or replacing gp: -EACCES (said on
 * stderr, with who reads the name: verb, see guard_verb) or 0.
 */
int
guard_check(struct guard_req *gr, const struct guard_path *gp,
    int ancestors_too, const char *verb)
{
	const struct fs_glob	*fg;
	struct gitrule_q		 q[1];
	const char		*why;
	char			 text[3 * PATH_MAX];
	int			 git, hooked = 0;

	if (gp->dots || gp->proc || gp->full[0] == '\0')
		return 0;
	why = guard_guarded(gr->g, gp->full, ancestors_too);
	if (why != NULL && (why == fs_why_git_config ||
	    strcmp(why, "git") == 0) && guard_init_inside(gr->g, gp->full))
		why = NULL;
	git = why == NULL && guard_git(gr, gp, ancestors_too);
	if (why == fs_why_git_config || (git &&
	    strcasecmp(gp->last, ".git") != 0 &&
	    !gr->g->conf.allow_git_config &&
	    gitrule_check(gp->full, ancestors_too, 1, q, 1) == 0)) {
		/* Only allowGitConfig stands in the way: the one key. */
		guard_refuse(gr, gp->full, guard_verb(gp, verb), "protected path, the git "
		    "configuration of a repository that existed before the "
		    "run (git runs the commands it names); to let commands "
		    "change it, set filesystem.allowGitConfig to true in %s",
		    gr->g->conf.config_file);
		return -EACCES;
	}
	if (why != NULL) {
		guard_refuse(gr, gp->full, guard_verb(gp, verb), "protected path, read by %s "
		    "outside the sandbox (see pisbx-run(1), FILESYSTEM)", why);
		return -EACCES;
	}
	if ((fg = fs_glob_denied(gr->g->conf.plan, gp->full)) != NULL) {
		guard_glob_refused(gr, guard_verb(gp, verb), gp->full, NULL, fg);
		return -EACCES;
	}
	/*
	 * Without namespaces no mount hides a hidden path, and Landlock's
	 * write rules cover all of an allowWrite root -- /tmp, say, over
	 * the base of the run directories: another run's TMPDIR, a socket
	 * planted under a run's name.  What the plan hides is not written.
	 */
	if (gr->g->conf.nons && guard_hidden(gr, gp, verb) < 0)
		return -EACCES;
	if (git) {
		gitrule_why(gp->full, gr->g->conf.config_file, text,
		    sizeof(text));
		guard_refuse(gr, gp->full, guard_verb(gp, verb), "%s", text);
		return -EACCES;
	}
	if (gp->parent != -1) {
		pthread_mutex_lock(&gr->g->mu);
		hooked = gr->g->work == NULL || gitwork_hooked(gr->g->work,
		    gp->parent, gp->pst_ok ? &gp->pst : NULL, gp->full,
		    ancestors_too, guard_made_cb, gr->g);
		pthread_mutex_unlock(&gr->g->mu);
	}
	if (hooked) {
		guard_refuse(gr, gp->full, guard_verb(gp, verb), "protected path, a git hook "
		    "(core.hooksPath, or a hook manager's file) of a work tree "
		    "that existed before the run (see pisbx-run(1), "
		    "FILESYSTEM)");
		return -EACCES;
	}
	return guard_state(gr, gp, verb);
}

/*
 * A name in (or of) a git operation's state directory -- rebase-merge/,
 * rebase-apply/, sequencer/ -- in a git directory older than the run:
 * the next --continue on the host runs what its todo lists.  Allowed
 * (git rebase, pull --rebase, cherry-pick A B and am need it), and the
 * directory told to the parent, which reads it at exit and names what
 * would run (gitstate.c).  One the parent would not hear of (too many)
 * is refused.  Repositories made during the run are gitnew.c's.
 */
static int
guard_state(struct guard_req *gr, const struct guard_path *gp,
    const char *verb)
{
	struct guard	*g = gr->g;
	struct stat	 st;
	char		 dir[PATH_MAX], *slash;
	int		 lvl[4], fd, git, k;
	size_t		 n, i, j;

	if ((n = gitrule_states(gp->full, lvl, 4)) == 0)
		return 0;
	for (i = 0; i < n; i++) {
		/* The directory holding the state directory. */
		if (gp->parent == -1 || (fd = guard_up(gp->parent, lvl[i])) ==
		    -1)
			git = 1;
		else {
			git = guard_shape(fd) && (fstat(fd, &st) == -1 ||
			    !guard_made_known(g, &st));
			close(fd);
		}
		if (!git)
			continue;
		snprintf(dir, sizeof(dir), "%s", gp->full);
		for (k = 0; k < lvl[i]; k++)
			if ((slash = strrchr(dir, '/')) != NULL)
				*slash = '\0';
		pthread_mutex_lock(&g->mu);
		for (j = 0; j < g->nstates; j++)
			if (strcmp(g->states[j], dir) == 0)
				break;
		if (j == g->nstates && (g->nstates == GUARD_MAXSTATES ||
		    (g->states[j] = strdup(dir)) == NULL)) {
			pthread_mutex_unlock(&g->mu);
			guard_refuse(gr, gp->full, guard_verb(gp, verb),
			    "the state of a git rebase, cherry-pick, revert or "
			    "am in a repository that existed before the run, "
			    "and more of them than pisbx-run follows to check "
			    "at exit (%d); run that git command outside the "
			    "sandbox (see pisbx-run(1), FILESYSTEM)",
			    GUARD_MAXSTATES);
			return -EACCES;
		}
		if (j == g->nstates) {
			g->nstates++;
			guard_state_send(g, dir);
		}
		pthread_mutex_unlock(&g->mu);
	}
	return 0;
}

/*
 * Tell the parent of a state directory's path (the mutex held); past
 * GUARD_MAXSTATESENT records, that some were not told.
 */
static void
guard_state_send(struct guard *g, const char *path)
{
	if (g->nstatesent < GUARD_MAXSTATESENT)
		guard_send(g, REPORT_STATE, path, NULL, NULL);
	else if (g->nstatesent == GUARD_MAXSTATESENT)
		guard_send(g, REPORT_STATE_LOST, NULL, NULL, NULL);
	if (g->nstatesent <= GUARD_MAXSTATESENT)
		g->nstatesent++;
}

/*
 * A directory was renamed from "from" to "to" (or exchanged with it):
 * the state directories below either now have other paths, told to the
 * parent (which checks the old ones too: whatever is there now).
 */
void
guard_state_moved(struct guard *g, const char *from, const char *to,
    int exchange)
{
	char	 buf[PATH_MAX], *s, *was[GUARD_MAXSTATES];
	size_t	 i, fl = strlen(from), tl = strlen(to);
	int	 n;

	pthread_mutex_lock(&g->mu);
	for (i = 0; i < g->nstates; i++) {
		s = g->states[i];
		was[i] = NULL;
		if (strncmp(s, from, fl) == 0 && (s[fl] == '\0' ||
		    s[fl] == '/'))
			n = snprintf(buf, sizeof(buf), "%s%s", to, s + fl);
		else if (exchange && strncmp(s, to, tl) == 0 &&
		    (s[tl] == '\0' || s[tl] == '/'))
			n = snprintf(buf, sizeof(buf), "%s%s", from, s + tl);
		else
			continue;
		if (n < 0 || (size_t)n >= sizeof(buf) ||
		    (was[i] = strdup(buf)) == NULL) {
			/* Not followed: the parent says so. */
			g->nstatesent = GUARD_MAXSTATESENT;
			guard_state_send(g, NULL);
		}
	}
	for (i = 0; i < g->nstates; i++) {
		if (was[i] == NULL)
			continue;
		free(g->states[i]);
		g->states[i] = was[i];
		guard_state_send(g, g->states[i]);
	}
	pthread_mutex_unlock(&g->mu);
}
