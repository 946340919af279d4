/*
 * The filesystem plan, built in the parent before the sandbox starts:
 * every configured path becomes an absolute, symlink-free path in one
 * set (fs_plan_build, in named steps), the mandatory deny set is applied
 * at every writable root, and each path that changes what the sandbox
 * sees gets one mount rule (fs_rules).  Nothing here touches the
 * filesystem beyond stat(2), io_realpath, reading directories and small
 * files.  Also the plan's later changes (fs_plan_grant), its end and its
 * dump for -v.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "policy/policy.h"
#include "launcher/launcher.h"
#include "launcher/fs/fs.h"
#include "launcher/fs/fs_int.h"

static int	 fs_mandatory_at(struct fs_set *, const char *dir,
		    int allow_git_config);
static const char *fs_mandatory_of(const char *path, const char *dir,
		    int allow_git_config);
static int	 fs_file_roots(const struct config *, const struct fs_plan *,
		    const char *home, const struct strlist *pathdirs);
static int	 fs_refuse_cwd(const struct fs_set *, const struct fs_plan *,
		    const char *cwd, int deny_read_set);
static int	 fs_trusted(struct fs_set *, const struct config *,
		    const struct fs_inputs *, const char *home);
static int	 fs_path_list(const char *path, const char *project,
		    struct strlist *out);
static int	 fs_path_dirs(struct fs_set *, const struct fs_plan *,
		    const struct strlist *pathdirs);
static int	 fs_glob_hit(void *, const char *path, enum fs_glob_kind,
		    const char *pattern);
static int	 fs_entry_cmp(const void *, const void *);
static int	 fs_guard_entry(struct fs_plan *, const struct fs_entry *);
static void	 fs_rules_listing(struct fs_listing *, const struct fs_entry **,
		    size_t, size_t);
struct fs_above;
static void	 fs_above(const struct fs_plan *, const struct fs_set *,
		    const char *, struct fs_above *);
static int	 fs_rule_action(int, const struct fs_above *, enum fs_action *);
static int	 fs_rule_add(struct fs_plan *, const struct fs_set *,
		    const struct fs_entry *, const struct stat *);
static int	 fs_rules(struct fs_plan *, const struct fs_set *);
static int	 fs_rundir(struct fs_set *, const char *rundir);
static int	 fs_refuse_runbase(struct fs_set *, const struct fs_inputs *);
static int	 fs_plan_reads(struct fs_set *, const struct config *,
		    const struct fs_inputs *, const char *, const char *);
static int	 fs_plan_writes(struct fs_set *, struct fs_plan *,
		    const struct config *, const struct fs_inputs *,
		    const char *, const char *);
static int	 fs_plan_configs(struct fs_set *, const struct config *,
		    const struct fs_inputs *, const char *);
static int	 fs_plan_roots(struct fs_plan *, const struct fs_set *);
static int	 fs_cred_at(struct fs_set *, const char *,
		    const struct fs_secret_file *);
static int	 fs_plan_secrets(struct fs_set *, const struct fs_inputs *,
		    const char *home);
static int	 fs_plan_mandatory(struct fs_set *, struct fs_plan *,
		    const struct config *, const char *, const char *,
		    const char *);

/* Who reads a repository's config; the guard names allowGitConfig. */
const char fs_why_git_config[] = "git";

/* The mandatory set at the top of dir. */
static int
fs_mandatory_at(struct fs_set *set, const char *dir, int allow_git_config)
{
	char	*p;
	size_t	 i;
	int	 rc;

	for (i = 0; i < fs_nmandatory; i++) {
		if ((p = fs_join(dir, fs_mandatory[i].name)) == NULL)
			return -1;
		rc = fs_set_add(set, p, P_DENY_WRITE, fs_mandatory[i].reader);
		free(p);
		if (rc == -1)
			return -1;
	}
	if (!allow_git_config) {
		if ((p = fs_join(dir, ".git/config")) == NULL)
			return -1;
		rc = fs_set_add(set, p, P_DENY_WRITE, fs_why_git_config);
		free(p);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/* Who reads path when it is, or lies in, the mandatory set at dir. */
static const char *
fs_mandatory_of(const char *path, const char *dir, int allow_git_config)
{
	const char	*rel;
	size_t		 i, len = strlen(dir);

	if (strcmp(dir, "/") == 0)
		rel = path + 1;
	else if (fs_under(path, dir) && path[len] == '/')
		rel = path + len + 1;
	else
		return NULL;
	for (i = 0; i < fs_nmandatory; i++)
		if (fs_under_ci(rel, fs_mandatory[i].name))
			return fs_mandatory[i].reader;
	if (!allow_git_config && fs_under_ci(rel, ".git/config"))
		return "git";
	return NULL;
}

/*
 * A single file named in allowWrite is a writable root of its own, so the
 * mandatory set of the directory above it would not cover it: hold it to
 * that set (at its directory and at the home directory) and to the
 * directories of $PATH outside the project (fs_path_dirs).  Such a file
 * cannot be made writable: an error (EXIT_CONFIG, said), not a silent
 * no-op.
 */
static int
fs_file_roots(const struct config *conf, const struct fs_plan *plan,
    const char *home, const struct strlist *pathdirs)
{
	struct stat	 st;
	const char	*f, *why;
	char		*dir;
	size_t		 i, j;

	for (i = 0; i < plan->nwritable; i++) {
		f = plan->writable[i];
		if (stat(f, &st) == -1 || S_ISDIR(st.st_mode))
			continue;
		if ((dir = strdup(f)) == NULL)
			return -1;
		*strrchr(dir, '/') = '\0';
		why = fs_mandatory_of(f, dir[0] == '\0' ? "/" : dir,
		    conf->allow_git_config);
		free(dir);
		if (why == NULL && home != NULL)
			why = fs_mandatory_of(f, home, conf->allow_git_config);
		for (j = 0; why == NULL && j < pathdirs->n; j++)
			if (fs_under(f, pathdirs->v[j]))
				why = "the shell (a directory on $PATH)";
		if (why != NULL) {
			log_warnx("%s: filesystem.allowWrite names %s, which "
			    "is protected (read by %s outside the sandbox): it "
			    "cannot be writable; remove it from "
			    "filesystem.allowWrite", conf->path, f, why);
			return EXIT_CONFIG;
		}
	}
	return 0;
}

/*
 * No sound policy for the working directory or the workspace: "/"
 * (everything writable) or a path the policy hides (the home directory by
 * default) -- both are re-exposed, which would undo the hiding.  The
 * workspace found from a git work tree is never one of these
 * (fs_workspace); $PISBX_WORKSPACE is held to the same rule as cwd.
 */
static int
fs_refuse_cwd(const struct fs_set *set, const struct fs_plan *plan,
    const char *cwd, int deny_read_set)
{
	const char	*ws = plan->workspace;
	size_t		 i;

	if (fs_root_of(plan, "/") != NULL) {
		log_warnx("refusing to run with / as a writable directory "
		    "(the working directory, PISBX_WORKSPACE, or "
		    "filesystem.allowWrite): the whole machine would be "
		    "writable; cd to a project directory, or name the "
		    "directories to write in filesystem.allowWrite");
		return EXIT_SETUP;
	}
	for (i = 0; i < set->n; i++) {
		if (!(set->v[i].flags & P_DENY_READ))
			continue;
		if (strcmp(set->v[i].path, cwd) == 0) {
			log_warnx("refusing to run in %s: the policy hides it "
			    "(filesystem.denyRead%s), and the working "
			    "directory would expose it, with every secret in "
			    "it; cd to a project directory below it, or set "
			    "filesystem.denyRead to the secrets only (e.g. "
			    "[\"~/.ssh\", \"~/.aws\"])", cwd, deny_read_set ?
			    "" : " defaults to the home directory");
			return EXIT_SETUP;
		}
		if (ws != NULL && strcmp(set->v[i].path, ws) == 0) {
			log_warnx("PISBX_WORKSPACE=%s: the policy hides it "
			    "(filesystem.denyRead%s), so it cannot be the "
			    "workspace: that would expose every secret in it; "
			    "name the project's directory, or set "
			    "filesystem.denyRead to the secrets only (e.g. "
			    "[\"~/.ssh\", \"~/.aws\"])", ws, deny_read_set ?
			    "" : " defaults to the home directory");
			return EXIT_SETUP;
		}
	}
	return 0;
}

/*
 * Files the trusted config and the command line name, which pisbx reads
 * on the host while the command runs or later: protected like the config.
 */
static int
fs_trusted(struct fs_set *set, const struct config *conf,
    const struct fs_inputs *in, const char *home)
{
	if (conf->hosts_file != NULL && fs_set_add_resolved(set,
	    conf->hosts_file, P_DENY_WRITE, "the proxy (resolver.hostsFile)",
	    in->cwd, home) == -1)
		return -1;
	if (conf->review_socket != NULL && fs_set_add_resolved(set,
	    conf->review_socket, P_DENY_WRITE, "pisbx-run (review.socket)",
	    in->cwd, home) == -1)
		return -1;
	if (in->supervisor_socket != NULL &&
	    in->supervisor_socket[0] == '/' && fs_set_add_resolved(set,
	    in->supervisor_socket, P_DENY_WRITE,
	    "pisbx-run (PISBX_SUPERVISOR_SOCKET)", in->cwd, home) == -1)
		return -1;
	if (in->access_log != NULL && strcmp(in->access_log, "-") != 0 &&
	    fs_set_add_resolved(set, in->access_log, P_DENY_WRITE,
	    "the proxy (the access log)", in->cwd, home) == -1)
		return -1;
	if (in->report != NULL && fs_set_add_resolved(set, in->report,
	    P_DENY_WRITE, "pisbx-run (--report)", in->cwd, home) == -1)
		return -1;
	/* A password: neither readable nor replaceable from the sandbox. */
	if (conf->parent != NULL && conf->parent->cred_file != NULL &&
	    fs_set_add_resolved(set, conf->parent->cred_file, P_DENY_READ |
	    P_DENY_WRITE, "the proxy (network.parentProxy.credentialsFile)",
	    in->cwd, home) == -1)
		return -1;
	return 0;
}

/*
 * The directories of $PATH outside the project (the workspace, or the
 * working directory with allowWrite), resolved: ~/.local/bin, ~/bin...;
 * the user's shell runs what is there.  Inside the project they are its
 * own (.venv/bin, node_modules/.bin), which its builds write.
 */
static int
fs_path_list(const char *path, const char *project, struct strlist *out)
{
	char	*copy, *dir, *save = NULL, *p;
	int	 rc = 0;

	if (path == NULL || (copy = strdup(path)) == NULL)
		return path == NULL ? 0 : -1;
	for (dir = strtok_r(copy, ":", &save); dir != NULL && rc == 0;
	    dir = strtok_r(NULL, ":", &save)) {
		if (dir[0] != '/')
			continue;
		if ((p = fs_resolve(dir, project, NULL)) == NULL) {
			rc = -1;
			break;
		}
		if (!fs_under(p, project))
			rc = fs_strv_add(&out->v, &out->n, p);
		free(p);
	}
	free(copy);
	return rc;
}

/* Protect the directories of $PATH outside the project in a writable root. */
static int
fs_path_dirs(struct fs_set *set, const struct fs_plan *plan,
    const struct strlist *pathdirs)
{
	size_t	i;

	for (i = 0; i < pathdirs->n; i++)
		if (fs_root_of(plan, pathdirs->v[i]) != NULL &&
		    fs_set_add(set, pathdirs->v[i], P_DENY_WRITE,
		    "the shell (a directory on $PATH)") == -1)
			return -1;
	return 0;
}

/* Keep a malloc'ed text for the plan's lifetime: it, or NULL (freed). */
const char *
fs_own(struct fs_plan *plan, char *text)
{
	char	**v;

	if ((v = reallocarray(plan->owned, plan->nowned + 1,
	    sizeof(*v))) == NULL) {
		free(text);
		return NULL;
	}
	plan->owned = v;
	return plan->owned[plan->nowned++] = text;
}

/* A path a pattern covers (fs_glob_expand): one more entry of the set. */
static int
fs_glob_hit(void *arg, const char *path, enum fs_glob_kind kind,
    const char *pattern)
{
	static const int	flags[] = {
		P_DENY_READ, P_ALLOW_READ, P_DENY_WRITE
	};

	(void)pattern;
	return fs_set_add(arg, path, flags[kind] | P_PATTERN,
	    kind == FS_GLOB_DENY_WRITE ? "filesystem.denyWrite" : NULL);
}

/* Set entries by depth, shallow first: the order rules apply in. */
static int
fs_entry_cmp(const void *a, const void *b)
{
	const struct fs_entry *const *ea = a, *const *eb = b;
	int	da = fs_depth((*ea)->path), db = fs_depth((*eb)->path);

	if (da != db)
		return da < db ? -1 : 1;
	return strcmp((*ea)->path, (*eb)->path);
}

/* A write-protected entry of the set becomes one of the plan's guarded. */
static int
fs_guard_entry(struct fs_plan *plan, const struct fs_entry *e)
{
	/* Each path of the set once: no need to look.  Room: fs_rules. */
	if ((plan->guarded[plan->nguarded] = strdup(e->path)) == NULL)
		return -1;
	plan->guarded_why[plan->nguarded++] = e->why != NULL ? e->why :
	    "pisbx";
	return 0;
}

/*
 * Entries of one depth come sorted, so those of one directory together:
 * four or more, and the directory is read once for all of them (the
 * mandatory names of a writable root, those below its .config, .git...).
 * ls: the listing of ord[k]'s directory after the call.
 */
static void
fs_rules_listing(struct fs_listing *ls, const struct fs_entry **ord,
    size_t k, size_t n)
{
	const char	*path = ord[k]->path;
	size_t		 dl, more;

	dl = (size_t)(strrchr(path, '/') - path);
	if (k != 0 && strlen(ls->dir) == dl &&
	    strncmp(ls->dir, path, dl) == 0)
		return;
	for (more = k + 1; more < n && more < k + 4 &&
	    strncmp(ord[more]->path, path, dl + 1) == 0 &&
	    strchr(ord[more]->path + dl + 1, '/') == NULL; more++)
		;
	if (more == k + 4)
		fs_listing_read(ls, path, dl);
	else {
		fs_listing_clear(ls);
		snprintf(ls->dir, sizeof(ls->dir), "%.*s", (int)dl, path);
	}
}

/* What the entries of the set above a path say about it. */
struct fs_above {
	int	hidden;		/* a denyRead above */
	int	writable_set;	/* an allowWrite above */
	int	writable;	/* the deepest say on writing: allowed */
	int	hidden_at;	/* the deepest rule above hides */
};

/* The entries above path: "/", then each directory down; the rules. */
static void
fs_above(const struct fs_plan *plan, const struct fs_set *set,
    const char *path, struct fs_above *a)
{
	const struct fs_entry	*e;
	size_t			 i, j;
	int			 wdepth = -1;

	memset(a, 0, sizeof(*a));
	for (j = 1; path[j - 1] != '\0'; j++) {
		if (j == 1)
			e = path[1] != '\0' ? fs_set_find(set, "/", 1) : NULL;
		else if (path[j] == '/')
			e = fs_set_find(set, path, j);
		else
			continue;
		if (e == NULL)
			continue;
		if (e->flags & P_DENY_READ)
			a->hidden = 1;
		if (e->flags & P_ALLOW_WRITE)
			a->writable_set = 1;
		/* Writing: the deepest say above, denyWrite first. */
		if ((e->flags & (P_ALLOW_WRITE | P_DENY_WRITE)) &&
		    fs_depth(e->path) > wdepth) {
			wdepth = fs_depth(e->path);
			a->writable = !(e->flags & P_DENY_WRITE);
		}
	}
	/* The deepest rule above: made last among them. */
	for (i = plan->nrules; i-- > 0;) {
		if (fs_under(path, plan->rules[i].path) &&
		    strcmp(path, plan->rules[i].path) != 0) {
			a->hidden_at = plan->rules[i].action == FS_HIDE;
			break;
		}
	}
}

/*
 * The action of the rule for an entry with flags f (no filtered copy),
 * given what is above it: 1 and *act, or 0: no rule needed.
 */
static int
fs_rule_action(int f, const struct fs_above *a, enum fs_action *act)
{
	if (f & P_DENY_WRITE) {
		if ((f & P_DENY_READ) && !(f & P_ALLOW_READ)) {
			if (a->hidden_at)
				return 0;
			*act = FS_HIDE;
		} else if ((f & P_PATTERN) && a->hidden_at)
			return 0;
		else if (a->writable_set || a->hidden)
			*act = FS_EXPOSE_RO;
		else
			return 0;
	} else if (f & P_ALLOW_WRITE)
		*act = FS_EXPOSE_RW;
	else if (f & P_ALLOW_READ) {
		/*
		 * Reading is one question, writing another: a path shown
		 * again (the working directory, a worktree's git directories,
		 * a socket, allowRead) needs a mount only where a hidden
		 * directory covers it, and then keeps what the writing rules
		 * above it say.  Bound read-only inside a writable root, it
		 * would take the root's writes away there (a command run in
		 * src/ of a project in the hidden home could not write src/).
		 */
		if (!a->hidden_at)
			return 0;
		*act = a->writable && !(f & P_SHOW_RO) ? FS_EXPOSE_RW :
		    FS_EXPOSE_RO;
	} else if (f & P_DENY_READ) {
		if (a->hidden_at)
			return 0;
		*act = FS_HIDE;
	} else
		return 0;
	return 1;
}

/* Append the rule for entry e, of the existing file st (when one is due). */
static int
fs_rule_add(struct fs_plan *plan, const struct fs_set *set,
    const struct fs_entry *e, const struct stat *st)
{
	struct fs_above	 a;
	struct fs_rule	*r, *nv;
	enum fs_action	 act = FS_HIDE;

	fs_above(plan, set, e->path, &a);
	/* A filtered copy: bound wherever it is, read-only. */
	if (e->source != NULL)
		act = FS_EXPOSE_RO;
	else if (!fs_rule_action(e->flags, &a, &act))
		return 0;
	if ((nv = reallocarray(plan->rules, plan->nrules + 1,
	    sizeof(*nv))) == NULL)
		return -1;
	plan->rules = nv;
	r = &nv[plan->nrules];
	memset(r, 0, sizeof(*r));
	if (e->source != NULL) {
		if ((r->source = strdup(e->source)) == NULL)
			return -1;
		r->note = e->note;
	}
	r->action = act;
	if ((r->path = strdup(e->path)) == NULL) {
		free(r->source);
		return -1;
	}
	r->is_dir = S_ISDIR(st->st_mode);
	r->mode = st->st_mode & 07777;
	plan->nrules++;
	return 0;
}

/*
 * One rule per existing path that changes what the sandbox sees, made
 * shallow first so each path knows what the deepest rule above it did:
 * below a hidden directory there is nothing to hide again (and nothing to
 * mount on), and a path a pattern write-protects stays hidden there.
 */
static int
fs_rules(struct fs_plan *plan, const struct fs_set *set)
{
	const struct fs_entry	**ord;
	struct fs_listing	  ls;
	struct stat		  st;
	const char		 *path, **wv;
	char			**gv;
	size_t			  i, k, dl, ng = plan->nguarded;
	int			  rc = -1;

	if ((ord = reallocarray(NULL, set->n + 1, sizeof(*ord))) == NULL)
		return -1;
	for (i = 0; i < set->n; i++) {
		ord[i] = &set->v[i];
		ng += (set->v[i].flags & P_DENY_WRITE) != 0;
	}
	/*
	 * Room for every guarded path at once: grown one by one, the two
	 * arrays were copied at nearly every step (each in the other's way
	 * on the heap), a few hundred times a start.
	 */
	if ((gv = reallocarray(plan->guarded, ng + 1, sizeof(*gv))) == NULL)
		goto done;
	plan->guarded = gv;
	if ((wv = reallocarray(plan->guarded_why, ng + 1,
	    sizeof(*wv))) == NULL)
		goto done;
	plan->guarded_why = wv;
	qsort(ord, set->n, sizeof(*ord), fs_entry_cmp);
	memset(&ls, 0, sizeof(ls));
	for (k = 0; k < set->n; k++) {
		path = ord[k]->path;
		if ((ord[k]->flags & P_DENY_WRITE) &&
		    fs_guard_entry(plan, ord[k]) == -1)
			goto done;
		fs_rules_listing(&ls, ord, k, set->n);
		dl = (size_t)(strrchr(path, '/') - path);
		if (fs_listing_has(&ls, path + dl + 1, strlen(path + dl + 1)) ==
		    0 || lstat(path, &st) == -1)
			continue;
		if (fs_rule_add(plan, set, ord[k], &st) == -1)
			goto done;
	}
	qsort(plan->rules, plan->nrules, sizeof(*plan->rules), fs_rule_cmp);
	rc = 0;
done:
	fs_listing_clear(&ls);
	free(ord);
	return rc;
}

/*
 * The base of the run directories hidden, even under an allowWrite of
 * $TMPDIR: no command sees, changes or plants anything in another run's
 * directory (rundir.c); ours seen read-only, mounted so (git-proxy,
 * ssh_config; its tmp/ is the writable TMPDIR).
 */
static int
fs_rundir(struct fs_set *set, const char *rundir)
{
	char	*base;
	int	 rc;

	if ((base = strdup(rundir)) == NULL)
		return -1;
	*strrchr(base, '/') = '\0';
	rc = base[0] == '\0' ? 0 : fs_set_add(set, base, P_DENY_READ, NULL);
	free(base);
	if (rc == -1 || fs_set_add(set, rundir, P_ALLOW_READ | P_SHOW_RO,
	    NULL) == -1)
		return -1;
	return 0;
}

/*
 * The base stays hidden whatever names it or a path in it: shown, it
 * holds other runs' TMPDIRs and sockets, and a writable one would make
 * this run's own files writable (its tmpfs, or the directory without
 * namespaces).  Only the run directory (read-only) and its TMPDIR are
 * the command's.  A pattern's match there is dropped, as one of other
 * runs' files; a path named (allowRead, allowWrite, allowUnixSockets,
 * the working directory) refuses the run: the command would miss it.
 * 0, or EXIT_SETUP (said).
 */
static int
fs_refuse_runbase(struct fs_set *set, const struct fs_inputs *in)
{
	struct fs_entry	*e;
	char		*base;
	size_t		 i;
	int		 rc = 0;

	if (in->rundir == NULL || in->tmpdir == NULL)
		return 0;
	if ((base = strdup(in->rundir)) == NULL)
		return -1;
	*strrchr(base, '/') = '\0';
	for (i = 0; base[0] != '\0' && i < set->n && rc == 0; i++) {
		e = &set->v[i];
		if (!(e->flags & (P_ALLOW_READ | P_ALLOW_WRITE)) ||
		    !fs_under(e->path, base) || fs_under(e->path, in->tmpdir) ||
		    (fs_under(e->path, in->rundir) &&
		    !(e->flags & P_ALLOW_WRITE)))
			continue;
		if (e->flags & P_PATTERN) {
			e->flags &= ~(P_ALLOW_READ | P_ALLOW_WRITE);
			continue;
		}
		log_warnx("refusing to run: %s lies in %s, the base of "
		    "pisbx-run's run directories, hidden in every sandbox "
		    "(other runs' TMPDIRs and sockets, this run's own files); "
		    "take it out of filesystem.allowRead, "
		    "filesystem.allowWrite and network.allowUnixSockets, or "
		    "run from another directory", e->path, base);
		rc = EXIT_SETUP;
	}
	free(base);
	return rc;
}

/*
 * What the command may read: denyRead (else the home hidden), allowRead,
 * the working directory, the pisbx executables (write-protected).
 */
static int
fs_plan_reads(struct fs_set *set, const struct config *conf,
    const struct fs_inputs *in, const char *home, const char *proj)
{
	if (conf->fs_deny_read_set) {
		if (fs_set_add_list(set, &conf->deny_read, P_DENY_READ, proj,
		    home) == -1)
			return -1;
	} else if (home != NULL && strcmp(home, "/") != 0) {
		if (fs_set_add(set, home, P_DENY_READ, NULL) == -1)
			return -1;
	}
	if (fs_set_add_list(set, &conf->allow_read, P_ALLOW_READ, proj,
	    home) == -1)
		return -1;
	if (fs_set_add(set, in->cwd, P_ALLOW_READ, NULL) == -1 ||
	    fs_set_add(set, in->exe_dir, P_ALLOW_READ | P_DENY_WRITE,
	    "pisbx (its executables)") == -1)
		return -1;
	return 0;
}

/*
 * What the command may write: allowWrite, else the workspace; the
 * private TMPDIR, the run directory, denyWrite; the toolchains seen and
 * the caches; the Unix sockets it may reach.
 */
static int
fs_plan_writes(struct fs_set *set, struct fs_plan *plan,
    const struct config *conf, const struct fs_inputs *in, const char *home,
    const char *proj)
{
	char	*p;
	size_t	 i;

	if (conf->fs_allow_write_set) {
		if (fs_set_add_list(set, &conf->allow_write, P_ALLOW_WRITE,
		    proj, home) == -1)
			return -1;
	} else {
		if (fs_workspace(set, proj, in->cwd, &plan->workspace,
		    plan->project_why, sizeof(plan->project_why)) == -1 ||
		    fs_set_add(set, plan->workspace, P_ALLOW_READ |
		    P_ALLOW_WRITE, NULL) == -1)
			return -1;
	}
	if (fs_set_add(set, in->tmpdir, P_ALLOW_WRITE, NULL) == -1)
		return -1;
	/*
	 * The run directory holds what the command runs or reads by name
	 * (git-proxy, the filtered copies a git config includes): shown
	 * wherever it lies (a TMPDIR in the hidden home); the base of all
	 * run directories hidden (fs_rundir).
	 */
	if (in->rundir != NULL && fs_rundir(set, in->rundir) == -1)
		return -1;
	if (fs_set_add_list(set, &conf->deny_write, P_DENY_WRITE, proj,
	    home) == -1)
		return -1;

	/* Toolchains seen, caches writable, in a home that is not "/". */
	if (home != NULL && strcmp(home, "/") != 0 &&
	    (fs_toolchains(set, conf, home, proj) == -1 ||
	    fs_caches(set, plan, conf, home) == -1))
		return -1;

	/*
	 * The Unix sockets the command may reach (the guard compares real
	 * paths), visible even in a hidden directory.
	 */
	for (i = 0; i < conf->allow_unix_sockets.n; i++) {
		if ((p = fs_resolve(conf->allow_unix_sockets.v[i], in->cwd,
		    home)) == NULL)
			return -1;
		if (fs_strv_add(&plan->unix_sockets, &plan->nunix, p) == -1 ||
		    fs_set_add(set, p, P_ALLOW_READ, NULL) == -1) {
			free(p);
			return -1;
		}
		free(p);
	}
	return 0;
}

/* The trusted config, and every place the next run looks for one. */
static int
fs_plan_configs(struct fs_set *set, const struct config *conf,
    const struct fs_inputs *in, const char *home)
{
	const char	*env, *cwd = in->cwd;
	char		*p = NULL;
	int		 rc;

	if (in->config_path != NULL && fs_set_add_resolved(set,
	    in->config_path, P_DENY_WRITE, "pisbx (the trusted config)", cwd,
	    home) == -1)
		return -1;
	if ((env = getenv("PISBX_CONFIG")) != NULL && env[0] == '/' &&
	    fs_set_add_resolved(set, env, P_DENY_WRITE,
	    "pisbx ($PISBX_CONFIG)", cwd, home) == -1)
		return -1;
	if ((env = getenv("XDG_CONFIG_HOME")) != NULL && env[0] == '/')
		p = fs_join(env, "pisbx");
	else if (home != NULL)
		p = fs_join(home, ".config/pisbx");
	if (p != NULL) {
		rc = fs_set_add_resolved(set, p, P_DENY_WRITE,
		    "pisbx (the config directory)", cwd, home);
		free(p);
		if (rc == -1)
			return -1;
	}
	/* srt's ~/.srt-settings.json, the last place config_find looks. */
	if (home != NULL) {
		if ((p = fs_join(home, ".srt-settings.json")) == NULL)
			return -1;
		rc = fs_set_add(set, p, P_DENY_WRITE,
		    "pisbx (srt's config file)");
		free(p);
		if (rc == -1)
			return -1;
	}
	return fs_trusted(set, conf, in, home);
}

/*
 * One path of a credentials file: hidden, or shown as its masked copy.
 * The config named the file as a secret: an allowRead or allowWrite of
 * that very path (a project's .env in the workspace is below one, which
 * needs nothing) gives way, and it is no writable root.
 */
static int
fs_cred_at(struct fs_set *set, const char *path,
    const struct fs_secret_file *sf)
{
	struct fs_entry	*e;

	if (fs_set_add(set, path, sf->source == NULL ? P_DENY_READ : 0,
	    NULL) == -1 || (e = fs_set_find(set, path, strlen(path))) == NULL)
		return -1;
	e->flags &= ~(P_ALLOW_READ | P_ALLOW_WRITE | P_SHOW_RO);
	if (sf->source == NULL) {
		/* A filtered copy of it (an npmrc) would show it still. */
		free(e->source);
		e->source = NULL;
		e->note = NULL;
		return 0;
	}
	free(e->source);
	if ((e->source = strdup(sf->source)) == NULL)
		return -1;
	e->note = sf->note;
	return 0;
}

/*
 * credentials.files and the CA's key (runsecrets.c): last of what is read,
 * so that neither a filtered copy nor a re-exposed parent shows the
 * original.  At the name, and at the file a link there points to.
 */
static int
fs_plan_secrets(struct fs_set *set, const struct fs_inputs *in,
    const char *home)
{
	char	*r, *at;
	size_t	 i;
	int	 rc = 0;

	for (i = 0; i < in->nsecrets && rc == 0; i++) {
		if ((r = fs_resolve(in->secrets[i].path, in->cwd, home)) ==
		    NULL)
			return -1;
		at = fs_resolve_dir(in->secrets[i].path);
		rc = fs_cred_at(set, r, &in->secrets[i]);
		if (rc == 0 && at != NULL && strcmp(at, r) != 0)
			rc = fs_cred_at(set, at, &in->secrets[i]);
		free(r);
		free(at);
	}
	return rc;
}

/*
 * The writable roots: the set's allowWrite paths that exist and are
 * directories or regular files (Landlock: file rights for a file).
 */
static int
fs_plan_roots(struct fs_plan *plan, const struct fs_set *set)
{
	struct stat	st;
	size_t		i;

	for (i = 0; i < set->n; i++) {
		if (!(set->v[i].flags & P_ALLOW_WRITE) ||
		    (set->v[i].flags & P_DENY_WRITE))
			continue;
		if (stat(set->v[i].path, &st) == -1 ||
		    !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
			continue;
		if (fs_strv_add(&plan->writable, &plan->nwritable,
		    set->v[i].path) == -1)
			return -1;
	}
	return 0;
}

/*
 * The mandatory set at the top of each writable root and at the home
 * directory when it lies in one; the git work tree around each
 * directory root.
 */
static int
fs_plan_mandatory(struct fs_set *set, struct fs_plan *plan,
    const struct config *conf, const char *cwd, const char *home,
    const char *proj)
{
	struct stat	st;
	size_t		i, nroots = plan->nwritable;

	for (i = 0; i < nroots; i++) {
		const char *root = plan->writable[i];

		if (stat(root, &st) == -1 || !S_ISDIR(st.st_mode))
			continue;
		if (fs_mandatory_at(set, root, conf->allow_git_config) ==
		    -1 || fs_worktree(set, plan, root, conf, proj, home) == -1 ||
		    fs_git_repo(set, plan, root) == -1)
			return -1;
	}
	if (home != NULL && fs_root_of(plan, home) != NULL &&
	    fs_mandatory_at(set, home, conf->allow_git_config) == -1)
		return -1;
	/*
	 * And at the working directory inside a root (the workspace above
	 * it): an agent or editor started there reads its .claude, .vscode.
	 */
	if (fs_root_of(plan, cwd) != NULL &&
	    fs_mandatory_at(set, cwd, conf->allow_git_config) == -1)
		return -1;
	return fs_worktree(set, plan, cwd, conf, proj, home);
}

/*
 * The plan, in steps: the home and the project; what is read, then
 * written; the patterns; the configs; the home's settings and secrets,
 * private files, JDKs; the writable roots and what refuses them; the
 * mandatory set in each; then one rule per path.
 */
int
fs_plan_build(struct fs_plan *plan, const struct config *conf,
    const struct fs_inputs *in)
{
	struct fs_set	 set = { NULL, 0, NULL, 0 };
	struct strlist	 pathdirs = { NULL, 0 };
	char		*home_real = NULL;
	const char	*cwd = in->cwd, *proj;
	int		 rc = -1;

	memset(plan, 0, sizeof(*plan));
	if (in->home != NULL && in->home[0] == '/' &&
	    ((home_real = fs_resolve(in->home, cwd, NULL)) == NULL ||
	    (plan->home = strdup(home_real)) == NULL))
		goto fail;
	/* Read now: the sandbox will not see the home directory. */
	if (fs_git_global(plan, home_real) == -1)
		goto fail;
	if ((rc = fs_project(cwd, home_real, &plan->project,
	    plan->project_why, sizeof(plan->project_why))) != 0)
		goto fail;
	rc = -1;
	proj = plan->project;

	if (fs_plan_reads(&set, conf, in, home_real, proj) == -1 ||
	    fs_plan_writes(&set, plan, conf, in, home_real, proj) == -1)
		goto fail;

	/* Patterns: what they cover now becomes paths like the above. */
	if ((rc = fs_glob_compile(plan, conf, proj, home_real)) != 0 ||
	    (rc = fs_glob_expand(plan, fs_glob_hit, &set)) != 0)
		goto fail;
	rc = -1;

	if (fs_plan_configs(&set, conf, in, home_real) == -1)
		goto fail;
	/*
	 * Last: whatever re-exposed a parent, settings files are shown
	 * filtered and secret stores stay hidden.
	 */
	if (home_real != NULL && strcmp(home_real, "/") != 0 &&
	    (fs_filtered_show(&set, plan, conf, home_real, proj,
	    in->files) == -1 ||
	    fs_secrets_hide(&set, conf, home_real, proj) == -1))
		goto fail;
	if (fs_path_list(in->path, plan->workspace != NULL ?
	    plan->workspace : cwd, &pathdirs) == -1 ||
	    fs_private_hide(&set, plan, conf, in, &pathdirs, home_real,
	    proj) == -1 || fs_java(&set, plan, in, home_real, proj) == -1 ||
	    fs_plan_secrets(&set, in, home_real) == -1)
		goto fail;

	if ((rc = fs_refuse_runbase(&set, in)) != 0)
		goto fail;
	rc = -1;
	if (fs_plan_roots(plan, &set) == -1)
		goto fail;
	if ((rc = fs_refuse_cwd(&set, plan, cwd,
	    conf->fs_deny_read_set)) != 0 ||
	    (rc = fs_reviewer(conf, plan, home_real, in->path)) != 0 ||
	    (rc = fs_file_roots(conf, plan, home_real, &pathdirs)) != 0)
		goto fail;
	rc = -1;

	if (fs_plan_mandatory(&set, plan, conf, cwd, home_real, proj) == -1 ||
	    fs_path_dirs(&set, plan, &pathdirs) == -1)
		goto fail;

	if (fs_rules(plan, &set) == -1)
		goto fail;
	fs_set_free(&set);
	strlist_free(&pathdirs);
	free(home_real);
	return 0;
fail:
	fs_set_free(&set);
	strlist_free(&pathdirs);
	free(home_real);
	fs_plan_free(plan);
	return rc;
}

int
fs_plan_grant(struct fs_plan *plan, const char *path, int writable)
{
	struct fs_rule	*nv;
	struct stat	 st;
	size_t		 i;

	if (path[0] != '/' || lstat(path, &st) == -1 ||
	    !S_ISREG(st.st_mode) || fs_plan_guarded(plan, path, 1) != NULL ||
	    fs_glob_denied(plan, path) != NULL) {
		errno = EACCES;
		return -1;
	}
	/* The agent's own file, private in /tmp (fs_private_hide): shown. */
	for (i = 0; i < plan->nrules; i++) {
		if (plan->rules[i].action != FS_HIDE ||
		    strcmp(plan->rules[i].path, path) != 0)
			continue;
		free(plan->rules[i].path);
		free(plan->rules[i].source);
		plan->rules[i] = plan->rules[--plan->nrules];
		break;
	}
	if ((nv = reallocarray(plan->rules, plan->nrules + 1,
	    sizeof(*nv))) == NULL)
		return -1;
	plan->rules = nv;
	memset(&nv[plan->nrules], 0, sizeof(*nv));
	if ((nv[plan->nrules].path = strdup(path)) == NULL)
		return -1;
	nv[plan->nrules].action = writable ? FS_EXPOSE_RW : FS_EXPOSE_RO;
	nv[plan->nrules].is_dir = 0;
	plan->nrules++;
	if (writable && fs_strv_add(&plan->writable, &plan->nwritable,
	    path) == -1)
		return -1;
	qsort(plan->rules, plan->nrules, sizeof(*plan->rules), fs_rule_cmp);
	return 0;
}

void
fs_plan_free(struct fs_plan *plan)
{
	size_t	i;

	for (i = 0; i < plan->nrules; i++) {
		free(plan->rules[i].path);
		free(plan->rules[i].source);
	}
	for (i = 0; i < plan->nwritable; i++)
		free(plan->writable[i]);
	for (i = 0; i < plan->nguarded; i++)
		free(plan->guarded[i]);
	for (i = 0; i < plan->nunix; i++)
		free(plan->unix_sockets[i]);
	free(plan->unix_sockets);
	free(plan->rules);
	free(plan->writable);
	free(plan->guarded);
	free(plan->guarded_why);
	fs_gindex_free(plan->gindex);
	for (i = 0; i < plan->nowned; i++)
		free(plan->owned[i]);
	free(plan->owned);
	free(plan->home);
	free(plan->cache_dir);
	free(plan->workspace);
	free(plan->project);
	fs_glob_free(plan);
	strlist_free(&plan->hookspaths);
	memset(plan, 0, sizeof(*plan));
}

void
fs_plan_dump(const struct fs_plan *plan)
{
	static const char *const names[] = { "hide", "read-only", "writable" };
	size_t	i;

	if (plan->workspace != NULL)
		log_info("fs: workspace %s: %s", plan->workspace,
		    plan->project_why);
	for (i = 0; i < plan->nglobs; i++)
		log_info("fs: pattern   %s (%s): %zu existing path%s",
		    glob_text(plan->globs[i].g), fs_glob_key(&plan->globs[i]),
		    plan->globs[i].found, plan->globs[i].found == 1 ? "" : "s");
	for (i = 0; i < plan->nrules; i++)
		log_info("fs: %-9s %s%s%s%s", names[plan->rules[i].action],
		    plan->rules[i].path, plan->rules[i].note != NULL ? " (" :
		    "", plan->rules[i].note != NULL ? plan->rules[i].note : "",
		    plan->rules[i].note != NULL ? ")" : "");
	for (i = 0; i < plan->nguarded; i++)
		log_debug("fs: guarded %s (%s)", plan->guarded[i],
		    plan->guarded_why[i]);
}
