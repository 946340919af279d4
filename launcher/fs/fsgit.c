/*
 * Git discovery for the plan, run in the parent before the sandbox
 * starts: the project directory around the working directory (where the
 * config's relative paths start) and the default workspace, the
 * directories of a linked worktree, the hooks of each work tree a
 * writable root lies in (core.hooksPath, hook managers) and the user's
 * global core.hooksPath.  What git's own files mean is launcher/git/.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "policy/policy.h"
#include "launcher/launcher.h"
#include "launcher/fs/fs.h"
#include "launcher/fs/fs_int.h"

static int	 fs_git_dirs(const char *top, char **gitdir, char **common,
		    int *isfile);
static const char *fs_worktree_why(struct fs_plan *, const struct config *,
		    const char *root, const char *common);
static const char *fs_project_trusted(const char *, const char *, char *,
		    size_t);

/*
 * The git directory of the work tree at top (its .git, or what a .git
 * file "gitdir: DIR" names) and its common directory (DIR/commondir, or
 * DIR itself), malloc'ed; both NULL when top holds no .git.  *isfile
 * says which kind of .git it was.
 */
static int
fs_git_dirs(const char *top, char **gitdir, char **common, int *isfile)
{
	char		*dotgit, *line = NULL, *p = NULL;
	struct stat	 st;
	int		 rc = -1;

	*gitdir = *common = NULL;
	*isfile = 0;
	if ((dotgit = fs_join(top, ".git")) == NULL)
		return -1;
	if (lstat(dotgit, &st) == 0 && S_ISDIR(st.st_mode))
		*gitdir = strdup(dotgit);
	else if ((line = fs_read_line(dotgit, "gitdir:")) != NULL) {
		*isfile = 1;
		*gitdir = fs_resolve(line, top, NULL);
	} else {
		rc = 0;		/* no repository here */
		goto done;
	}
	if (*gitdir == NULL || (p = fs_join(*gitdir, "commondir")) == NULL)
		goto done;
	free(line);
	if ((line = fs_read_line(p, NULL)) != NULL)
		*common = fs_resolve(line, *gitdir, NULL);
	else
		*common = strdup(*gitdir);
	if (*common != NULL)
		rc = 0;
done:
	if (rc == -1) {
		free(*gitdir);
		*gitdir = NULL;
	}
	free(dotgit);
	free(line);
	free(p);
	return rc;
}

/*
 * A git worktree's .git is a file "gitdir: DIR"; DIR and its common
 * directory (DIR/commondir) must stay readable so git works, and must not
 * become writable through the worktree: the main repository's hooks and
 * config live there.  The .git file itself is protected: replaced, it
 * would send git elsewhere.
 */
int
fs_worktree(struct fs_set *set, struct fs_plan *plan, const char *root,
    const struct config *conf, const char *proj, const char *home)
{
	char		*dotgit = NULL, *gitdir = NULL, *common = NULL;
	const char	*why = NULL;
	int		 isfile, rc = -1, deny;

	if (fs_git_dirs(root, &gitdir, &common, &isfile) == -1)
		return -1;
	if (!isfile) {
		rc = 0;
		goto done;
	}
	/*
	 * An allowWrite entry of the config for the main repository (its
	 * work tree, its .git, or above) lets a commit here write what a
	 * commit writes there: objects, refs, this worktree's index and
	 * HEAD.  Its config, hooks, commondir, config.worktree and the rest
	 * of git's rules stay the guard's to refuse, as in any repository
	 * older than the run.
	 */
	deny = !(conf->fs_allow_write_set && fs_list_meets(&conf->allow_write,
	    common, 0, proj, home));
	if (deny && (why = fs_worktree_why(plan, conf, root, common)) == NULL)
		goto done;
	if ((dotgit = fs_join(root, ".git")) == NULL ||
	    fs_set_add(set, dotgit, P_DENY_WRITE, "git (the .git file)") ==
	    -1 || fs_set_add(set, gitdir, P_ALLOW_READ | (deny ?
	    P_DENY_WRITE : 0), why) == -1 ||
	    (strcmp(common, gitdir) != 0 && fs_set_add(set, common,
	    P_ALLOW_READ | (deny ? P_DENY_WRITE : 0), why) == -1))
		goto done;
	rc = 0;
done:
	free(dotgit);
	free(gitdir);
	free(common);
	return rc;
}

/*
 * Who reads a worktree's git directories, and what lets a commit write
 * them: the main repository in allowWrite (kept by the plan).
 */
static const char *
fs_worktree_why(struct fs_plan *plan, const struct config *conf,
    const char *root, const char *common)
{
	char	 file[PATH_MAX + 128], *main, *why, *slash;
	size_t	 len = strlen(common);

	/* The main work tree when the common directory is its ".git". */
	if ((main = strdup(common)) == NULL)
		return NULL;
	if (len > 5 && strcmp(common + len - 5, "/.git") == 0 &&
	    (slash = strrchr(main, '/')) != NULL)
		*slash = '\0';
	policy_hint_file(conf, file, sizeof(file));
	if ((conf->fs_allow_write_set ? asprintf(&why, "git (the main "
	    "repository of the worktree %s, which a commit in it writes; to "
	    "let commands commit, add \"%s\" to filesystem.allowWrite in %s)",
	    root, main, file) : asprintf(&why, "git (the main repository of "
	    "the worktree %s, which a commit in it writes; to let commands "
	    "commit, set filesystem.allowWrite to [\".\", \"%s\"] in %s)",
	    root, main, file)) == -1)
		why = NULL;
	free(main);
	return why != NULL ? fs_own(plan, why) : NULL;
}

/*
 * Append every core.hooksPath value of one git config file to out.  A
 * missing file has none; include.path is not followed.
 */
int
fs_git_hookspath(const char *cfgfile, struct strlist *out)
{
	char	 line[PATH_MAX + 64], *p, *q;
	FILE	*f;
	int	 core = 0, rc = 0;
	struct stat st;

	if (lstat(cfgfile, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (f = fopen(cfgfile, "re")) == NULL)
		return 0;
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		p = line + strspn(line, " \t");
		if (*p == '[') {
			q = p + 1 + strcspn(p + 1, " \t\"]");
			core = q - p - 1 == 4 && strncasecmp(p + 1, "core", 4)
			    == 0 && *q == ']';
			if ((p = strchr(p, ']')) == NULL)
				continue;
			p++;
			p += strspn(p, " \t");
		}
		if (!core || strncasecmp(p, "hookspath", 9) != 0)
			continue;
		p += 9;
		p += strspn(p, " \t");
		if (*p++ != '=')
			continue;
		p += strspn(p, " \t\"");
		p[strcspn(p, "\"#;\r\n")] = '\0';
		q = p + strlen(p);
		while (q > p && isspace((unsigned char)q[-1]))
			*--q = '\0';
		if (*p != '\0')
			rc = fs_strv_add(&out->v, &out->n, p);
	}
	fclose(f);
	return rc;
}

/*
 * The hooks of the work tree whose top is top: each core.hooksPath (its
 * own config's, then the user's global ones), resolved as git does
 * (relative to the top), and the hook managers' files there.  Appended to
 * out; a top without a readable .git adds the managers' files only.
 */
int
fs_git_hookdirs(const char *top, const struct strlist *global,
    const char *home, struct strlist *out)
{
	struct strlist	 vals = { NULL, 0 };
	char		*gitdir = NULL, *common = NULL, *p = NULL;
	size_t		 i;
	int		 isfile, rc = -1;

	if (fs_git_dirs(top, &gitdir, &common, &isfile) == -1)
		goto done;
	if (gitdir != NULL) {
		if ((p = fs_join(common, "config")) == NULL ||
		    fs_git_hookspath(p, &vals) == -1)
			goto done;
		free(p);
		if ((p = fs_join(gitdir, "config.worktree")) == NULL ||
		    fs_git_hookspath(p, &vals) == -1)
			goto done;
		free(p);
		p = NULL;
	}
	for (i = 0; global != NULL && i < global->n; i++)
		if (fs_strv_add(&vals.v, &vals.n, global->v[i]) == -1)
			goto done;
	for (i = 0; i < vals.n; i++) {
		if ((p = fs_resolve(vals.v[i], top, home)) == NULL ||
		    fs_strv_add(&out->v, &out->n, p) == -1)
			goto done;
		free(p);
		p = NULL;
	}
	for (i = 0; i < fs_nhook_managers; i++) {
		if ((p = fs_join(top, fs_hook_managers[i].name)) == NULL ||
		    fs_strv_add(&out->v, &out->n, p) == -1)
			goto done;
		free(p);
		p = NULL;
	}
	rc = 0;
done:
	strlist_free(&vals);
	free(gitdir);
	free(common);
	free(p);
	return rc;
}

/* Every core.hooksPath of the user's own git config (any repository). */
int
fs_git_global(struct fs_plan *plan, const char *home)
{
	const char	*env;
	char		*p = NULL;
	int		 rc = -1;

	if (getenv("GIT_CONFIG_NOSYSTEM") == NULL &&
	    fs_git_hookspath("/etc/gitconfig", &plan->hookspaths) == -1)
		return -1;
	if ((env = getenv("GIT_CONFIG_GLOBAL")) != NULL && env[0] == '/' &&
	    fs_git_hookspath(env, &plan->hookspaths) == -1)
		return -1;
	if ((env = getenv("XDG_CONFIG_HOME")) != NULL && env[0] == '/') {
		if ((p = fs_join(env, "git/config")) == NULL ||
		    fs_git_hookspath(p, &plan->hookspaths) == -1)
			goto done;
		free(p);
		p = NULL;
	}
	if (home != NULL) {
		if ((p = fs_join(home, ".config/git/config")) == NULL ||
		    fs_git_hookspath(p, &plan->hookspaths) == -1)
			goto done;
		free(p);
		if ((p = fs_join(home, ".gitconfig")) == NULL ||
		    fs_git_hookspath(p, &plan->hookspaths) == -1)
			goto done;
	}
	rc = 0;
done:
	free(p);
	return rc;
}

/*
 * The git work tree the writable root lies in (its top at or above the
 * root): its hooks (core.hooksPath, hook managers' files) are protected
 * here as well as by the guard, so existing ones are bound read-only.
 */
int
fs_git_repo(struct fs_set *set, const struct fs_plan *plan,
    const char *root)
{
	struct strlist	 dirs = { NULL, 0 };
	char		 top[PATH_MAX], *dotgit, *slash;
	struct stat	 st;
	size_t		 i;
	int		 rc = -1;

	if (strlen(root) >= sizeof(top))
		return 0;
	strcpy(top, root);
	for (;;) {
		if ((dotgit = fs_join(top, ".git")) == NULL)
			return -1;
		rc = lstat(dotgit, &st);
		free(dotgit);
		if (rc == 0)
			break;
		if ((slash = strrchr(top, '/')) == NULL || top[1] == '\0')
			return 0;
		slash[slash == top ? 1 : 0] = '\0';
	}
	rc = -1;
	if (fs_git_hookdirs(top, &plan->hookspaths, plan->home, &dirs) == -1)
		goto done;
	for (i = 0; i < dirs.n; i++)
		if (fs_set_add(set, dirs.v[i], P_DENY_WRITE,
		    "git (hooks)") == -1)
			goto done;
	rc = 0;
done:
	strlist_free(&dirs);
	return rc;
}

/*
 * Whether the work tree at top, whose .git is dotgit, is one git itself
 * would trust (safe.directory): the tree and its .git the caller's.  A
 * directory anyone can write to and others own files in (sticky and
 * world-writable, as /tmp) is never a work tree here, even with a .git
 * of ours: any user could have made that .git.  NULL, or why not.
 */
static const char *
fs_project_trusted(const char *top, const char *dotgit, char *buf,
    size_t len)
{
	struct stat	st;

	if (stat(top, &st) == -1 || !S_ISDIR(st.st_mode))
		return "it cannot be read";
	if ((st.st_mode & S_ISVTX) && (st.st_mode & S_IWOTH)) {
		snprintf(buf, len, "%s is a sticky directory every user can "
		    "write to", top);
		return buf;
	}
	if (st.st_uid != getuid()) {
		snprintf(buf, len, "%s belongs to uid %ju, not to you "
		    "(uid %ju)", top, (uintmax_t)st.st_uid,
		    (uintmax_t)getuid());
		return buf;
	}
	if (lstat(dotgit, &st) == -1)
		return "its .git cannot be read";
	if (st.st_uid != getuid()) {
		snprintf(buf, len, "%s belongs to uid %ju, not to you "
		    "(uid %ju)", dotgit, (uintmax_t)st.st_uid,
		    (uintmax_t)getuid());
		return buf;
	}
	return NULL;
}

/*
 * The project directory, where relative paths and patterns of the config
 * start -- what srt calls its working directory, the directory the agent
 * was started in: $PISBX_WORKSPACE, an existing absolute directory, when
 * set; else the top of the git work tree that contains cwd (so "**" +
 * "/.env" means the project's whatever subdirectory a command runs in),
 * unless that is the home directory or "/", or a tree git would not
 * trust (fs_project_trusted); else cwd.  why says which, for -v.
 * Returns 0 (*dir set), -1 on no memory, EXIT_SETUP (said why).
 */
int
fs_project(const char *cwd, const char *home, char **dir, char *why,
    size_t whylen)
{
	char		*top, *dotgit = NULL, *slash, real[PATH_MAX];
	char		 buf[PATH_MAX + 80];
	const char	*env = getenv("PISBX_WORKSPACE"), *bad;
	struct stat	 st;
	int		 found;

	if (env != NULL && env[0] != '\0') {
		if (env[0] != '/') {
			log_warnx("PISBX_WORKSPACE=%s: not an absolute path",
			    env);
			return EXIT_SETUP;
		}
		if (io_realpath(env, real) == NULL ||
		    stat(real, &st) == -1 || !S_ISDIR(st.st_mode)) {
			log_warnx("PISBX_WORKSPACE=%s: not a directory", env);
			return EXIT_SETUP;
		}
		snprintf(why, whylen, "PISBX_WORKSPACE");
		return (*dir = strdup(real)) == NULL ? -1 : 0;
	}
	snprintf(why, whylen, "the working directory: no git work tree "
	    "holds it");
	if ((top = strdup(cwd)) == NULL)
		return -1;
	for (;;) {
		if ((dotgit = fs_join(top, ".git")) == NULL) {
			free(top);
			return -1;
		}
		found = lstat(dotgit, &st) == 0 && (S_ISDIR(st.st_mode) ||
		    S_ISREG(st.st_mode));
		if (found)
			break;
		free(dotgit);
		dotgit = NULL;
		if ((slash = strrchr(top, '/')) == NULL || slash == top)
			goto cwd;	/* no work tree (or "/" is one) */
		*slash = '\0';
	}
	if (strcmp(top, "/") == 0 || (home != NULL && strcmp(top, home) == 0)) {
		snprintf(why, whylen, "the working directory: the git work "
		    "tree holding it is %s", strcmp(top, "/") == 0 ? "/" :
		    "the home directory");
		goto cwd;
	}
	/*
	 * Another user's "mkdir /tmp/.git" must not make /tmp, with every
	 * project in it, the writable workspace of a run in /tmp/proj.
	 */
	if ((bad = fs_project_trusted(top, dotgit, buf, sizeof(buf))) !=
	    NULL) {
		snprintf(why, whylen, "the working directory: the git work "
		    "tree %s is not taken, as git would not trust it: %s",
		    top, bad);
		goto cwd;
	}
	free(dotgit);
	snprintf(why, whylen, "the top of the git work tree holding the "
	    "working directory");
	*dir = top;
	return 0;
cwd:
	free(dotgit);
	free(top);
	return (*dir = strdup(cwd)) == NULL ? -1 : 0;
}

/*
 * The default writable root: the project directory (fs_project), unless
 * it is a git work tree holding a hidden (denyRead) path; else cwd.
 * $PISBX_WORKSPACE is taken as it is (fs_refuse_cwd then holds it to the
 * working directory's rules).  Returns 0 (*ws set) or -1 on no memory.
 */
int
fs_workspace(const struct fs_set *set, const char *project, const char *cwd,
    char **ws, char *why, size_t whylen)
{
	const char	*env = getenv("PISBX_WORKSPACE");
	const char	*top = project;
	size_t		 i;

	if (env == NULL || env[0] == '\0') {
		for (i = 0; i < set->n && top != cwd; i++)
			if ((set->v[i].flags & P_DENY_READ) &&
			    fs_under(set->v[i].path, project) &&
			    strcmp(project, cwd) != 0) {
				snprintf(why, whylen, "the working directory: "
				    "the git work tree %s holds a hidden path "
				    "(%s)", project, set->v[i].path);
				top = cwd;
			}
	}
	return (*ws = strdup(top)) == NULL ? -1 : 0;
}
