/*
 * The launcher's filesystem plan (launcher/fs/, launcher/git/gitrule.c):
 * defaults, "~" and relative paths, symlinks resolved, precedence at one
 * path, rules only for existing paths and sorted shallow-first, the
 * mandatory set in every writable root and at a writable home
 * (allowGitConfig), git worktrees and hooks (core.hooksPath), the files
 * the config names, $PATH, the working directories no sound policy
 * exists for, the workspace (git top, PISBX_WORKSPACE), single writable
 * files, path patterns (what they cover at start, anchored at the
 * project, and fs_glob_denied / fs_glob_moved for the guard), nested
 * hidden directories, and the guard's two questions: fs_plan_guarded and
 * gitrule_check, as tables.  Real files in a temporary directory.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/policy.h"
#include "launcher/launcher.h"
#include "launcher/fs/fs.h"
#include "launcher/git/git.h"

struct guard_case {
	const char	*rel;		/* below the workspace */
	int		 ancestors_too;
	int		 want;
};

/* gitrule_check: the questions, as "D0 B2 S1" (ask and levels up). */
struct git_case {
	const char	*path;
	int		 ancestors_too;
	int		 allow_config;
	const char	*want;
};

/* Short, so every path built from them fits a PATH_MAX buffer. */
static char	 top[128], ws[256], home[256], tmp[256], bin[256], rdir[256];
static struct fs_runfiles rfiles = { .dir = rdir };	/* the copies */

static void	 mk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static struct config *conf_of(const char *json);
static void	 build(struct fs_plan *, const char *json);
static int	 build_in(struct fs_plan *, const char *json,
		    const struct fs_inputs *);
static void	 defaults(struct fs_inputs *);
static int	 guarded(const struct fs_plan *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
static void	 write_file(const char *text, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
static const struct fs_rule *rule_at(const struct fs_plan *, const char *);
static int	 has(char *const *v, size_t n, const char *);
static void	 cache_check(const struct fs_plan *, const char *project);
static int	 setup(void **);
static int	 teardown(void **);

static const struct guard_case guard_cases[] = {
	{ ".bashrc", 0, 1 },
	{ ".bashrc2", 0, 0 },
	{ "x.bashrc", 0, 0 },
	{ "src/.bashrc", 0, 0 },
	{ ".git/hooks", 0, 1 },
	{ ".git/hooks/pre-commit", 0, 1 },
	{ ".git/hooksx", 0, 0 },
	{ ".git/config", 0, 1 },
	{ ".git/config.lock", 0, 0 },
	{ ".git/HEAD", 0, 0 },
	{ ".git", 0, 0 },
	{ ".git", 1, 1 },	/* renaming a prepared tree to .git */
	{ ".claude", 0, 1 },
	{ ".claude", 1, 1 },
	{ ".claude/commands/x.md", 0, 1 },
	{ ".claude/settings.json", 0, 1 },
	{ ".claude/settings.local.json", 0, 1 },
	{ ".claude/hooks/x.sh", 0, 1 },
	{ ".claudex", 0, 0 },
	{ ".pi/settings.json", 0, 1 },
	{ ".pi/other.json", 0, 1 },
	{ ".git/commondir", 0, 1 },
	{ ".git/config.worktree", 0, 1 },
	{ ".zshenv", 0, 1 },
	{ ".zlogin", 0, 1 },
	{ ".bash_login", 0, 1 },
	{ ".bash_logout", 0, 1 },
	{ ".config/git/config", 0, 1 },
	{ ".config/fish/config.fish", 0, 1 },
	{ ".config/systemd/user/x.service", 0, 1 },
	{ ".config/other", 0, 0 },
	{ ".ssh/authorized_keys", 0, 1 },
	{ ".cursor/mcp.json", 0, 1 },
	{ ".codex/config.toml", 0, 1 },
	{ ".local/bin/ls", 0, 1 },
	{ ".local/share/x", 0, 0 },
	{ ".husky/pre-commit", 0, 0 },	/* not a work tree: gitwork.c */
	{ ".vscode/settings.json", 0, 1 },
	{ ".mcp.json", 0, 1 },
	{ "README.md", 0, 0 },
	{ "README.md", 1, 0 },
	{ ".BASHRC", 0, 1 },	/* case-insensitive filesystems */
	{ ".Claude/Settings.json", 0, 1 },
};

static const struct git_case git_cases[] = {
	{ "/w/src/main.c", 0, 0, "" },
	{ "/w/src/main.c", 1, 0, "" },
	/* A ".git" entry itself: creating, replacing, moving it. */
	{ "/w/.git", 0, 0, "D0" },
	{ "/w/a/b/.git", 1, 0, "D0" },
	{ "/w/.gitignore", 0, 0, "" },
	{ "/w/x.git", 0, 0, "" },
	/* Below a ".git": what git reads as config, or runs. */
	{ "/w/.git/config", 0, 0, "B1" },
	{ "/w/.git/config", 0, 1, "" },
	{ "/w/.git/config.worktree", 0, 1, "B1" },
	{ "/w/.git/commondir", 0, 0, "B1" },
	{ "/w/.git/hooks", 0, 0, "B1" },
	{ "/w/.git/hooks/pre-commit", 0, 0, "B2" },
	{ "/w/.git/hooks/a/b", 0, 0, "B3" },
	{ "/w/.git/HEAD", 0, 0, "" },
	{ "/w/.git/index.lock", 0, 0, "" },
	{ "/w/.git/objects/ab/cdef", 0, 0, "" },
	{ "/w/.git/refs/heads/main", 0, 0, "" },
	{ "/w/.git/config.lock", 0, 0, "B1" },
	{ "/w/.git/config.lock", 0, 1, "" },
	{ "/w/.git/commondir.lock", 0, 1, "B1" },
	{ "/w/.git/HEAD.lock", 0, 0, "" },
	/*
	 * A rebase's, cherry-pick's or am's state: allowed, followed by the
	 * guard (gitrule_states) and checked at exit.
	 */
	{ "/w/.git/rebase-merge", 1, 0, "" },
	{ "/w/.git/rebase-merge/git-rebase-todo", 0, 0, "" },
	{ "/w/.git/rebase-apply/0001", 0, 0, "" },
	{ "/w/.git/sequencer", 1, 0, "" },
	{ "/w/.git/worktrees/t/rebase-merge", 1, 0, "" },
	{ "/w/.git/info/exclude", 0, 0, "" },
	/* A linked worktree's git directory. */
	{ "/w/.git/worktrees/t/config.worktree", 0, 0, "B3 S1" },
	{ "/w/.git/worktrees/t/commondir", 0, 0, "B3 S1" },
	{ "/w/.git/worktrees/t/hooks/x", 0, 0, "B4 S2" },
	{ "/w/.git/worktrees/t/HEAD", 0, 0, "" },
	{ "/w/.git/worktrees/t/index", 0, 0, "" },
	{ "/w/.git/worktrees/t", 0, 0, "" },
	{ "/w/.git/worktrees/t", 1, 0, "B2" },
	{ "/w/.git/worktrees", 1, 0, "B1" },
	/* A submodule's: names may hold slashes, and nest. */
	{ "/w/.git/modules/m/config", 0, 0, "B3 S1" },
	{ "/w/.git/modules/a/b/config", 0, 0, "B4 S1" },
	{ "/w/.git/modules/m/hooks/post-checkout", 0, 0, "B4 S2" },
	{ "/w/.git/modules/m/modules/n/config", 0, 0, "B5 S1" },
	{ "/w/.git/modules/m/objects/x", 0, 0, "" },
	{ "/w/.git/modules/m/HEAD", 0, 0, "" },
	{ "/w/.git/modules/m", 1, 0, "B2" },
	{ "/w/.git/modules", 1, 0, "B1" },
	/* Git directories by another name (bare, separate): their shape. */
	{ "/w/store.git/config", 0, 0, "S1" },
	{ "/w/store.git/hooks/update", 0, 0, "S2" },
	{ "/w/store.git/hooks", 1, 0, "S1" },
	{ "/w/store.git/objects/x", 0, 0, "" },
	{ "/w/src/config", 0, 0, "S1" },
	{ "/w/src/config", 0, 1, "" },
	{ "/w/src/config/db.yml", 0, 0, "" },
	{ "/w/src/hooks/useThing.js", 0, 0, "S2" },
	{ "/w/bare/worktrees", 1, 0, "S1" },
	/* Another spelling on a case-insensitive filesystem. */
	{ "/w/.GIT", 0, 0, "D0" },
	{ "/w/.Git/CONFIG", 0, 0, "B1" },
	{ "/w/sub/.GIT/Hooks/pre-commit", 0, 0, "B2" },
	{ "/w/store.git/HOOKS/update", 0, 0, "S2" },
	/* Several at once: nested repositories. */
	{ "/w/.git/modules/x/.git", 0, 0, "D0" },
	{ "/w/sub/.git/config", 0, 0, "B1" },
	{ "/w/.git/x/.git/hooks", 0, 0, "B1" },
};

static void
mk(const char *fmt, ...)
{
	char	p[PATH_MAX], *s;
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(p, sizeof(p), fmt, ap);
	va_end(ap);
	for (s = p + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

static struct config *
conf_of(const char *json)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*c;

	c = config_load_buffer(json, strlen(json), "t.json", &errs);
	if (c == NULL && errs.n > 0)
		fprintf(stderr, "%s\n", errs.msg[0]);
	config_errors_clear(&errs);
	assert_non_null(c);
	return c;
}

/* fs_plan_build for a config text and inputs (NULL: the defaults). */
static int
build_in(struct fs_plan *plan, const char *json, const struct fs_inputs *inp)
{
	struct config	*c = conf_of(json);
	struct fs_inputs in;
	int		 rc;

	if (inp != NULL)
		in = *inp;
	else
		defaults(&in);
	rc = fs_plan_build(plan, c, &in);
	config_free(c);
	return rc;
}

/* The plan for a config text, with the test's cwd, home, TMPDIR, bin. */
static void
build(struct fs_plan *plan, const char *json)
{
	assert_int_equal(build_in(plan, json, NULL), 0);
}

static void
defaults(struct fs_inputs *in)
{
	memset(in, 0, sizeof(*in));
	in->cwd = ws;
	in->home = home;
	in->tmpdir = tmp;
	in->rundir = rdir;
	in->files = &rfiles;
	in->exe_dir = bin;
}

static const struct fs_rule *
rule_at(const struct fs_plan *plan, const char *path)
{
	size_t	i;

	for (i = 0; i < plan->nrules; i++)
		if (strcmp(plan->rules[i].path, path) == 0)
			return &plan->rules[i];
	return NULL;
}

/* Whether the plan protects the path (printf-style). */
static int
guarded(const struct fs_plan *plan, const char *fmt, ...)
{
	char	p[PATH_MAX];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(p, sizeof(p), fmt, ap);
	va_end(ap);
	return fs_plan_guarded(plan, p, 0) != NULL;
}

static void
write_file(const char *text, const char *fmt, ...)
{
	char	 p[PATH_MAX];
	FILE	*f;
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(p, sizeof(p), fmt, ap);
	va_end(ap);
	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

static int
has(char *const *v, size_t n, const char *s)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

static int
setup(void **state)
{
	char	tmpl[] = "/tmp/pisbx-fsplan.XXXXXX", real[PATH_MAX];

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, real));
	assert_true(strlen(real) < sizeof(top));
	memcpy(top, real, strlen(real) + 1);
	snprintf(ws, sizeof(ws), "%s/home/proj", top);
	snprintf(home, sizeof(home), "%s/home", top);
	/* As rundir.c lays them out: the runs' private base, ours in it. */
	snprintf(tmp, sizeof(tmp), "%s/runs/run/tmp", top);
	snprintf(rdir, sizeof(rdir), "%s/runs/run", top);
	snprintf(bin, sizeof(bin), "%s/bin", top);
	mk("%s", ws);
	mk("%s", tmp);
	mk("%s", bin);
	unsetenv("PISBX_CONFIG");
	unsetenv("PISBX_WORKSPACE");
	unsetenv("XDG_CONFIG_HOME");
	return 0;
}

static int
teardown(void **state)
{
	char	cmd[PATH_MAX + 16];

	(void)state;
	fs_runfiles_clear(&rfiles);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* Defaults: home hidden, cwd re-exposed writable, TMPDIR writable. */
static void
test_defaults(void **state)
{
	struct fs_plan		 plan;
	const struct fs_rule	*r;
	char			 p[PATH_MAX];

	(void)state;
	build(&plan, "{}");
	assert_non_null(r = rule_at(&plan, home));
	assert_int_equal(r->action, FS_HIDE);
	assert_non_null(r = rule_at(&plan, ws));
	assert_int_equal(r->action, FS_EXPOSE_RW);
	assert_non_null(r = rule_at(&plan, tmp));
	assert_int_equal(r->action, FS_EXPOSE_RW);
	/* The executables: outside every writable root, nothing to do. */
	assert_null(rule_at(&plan, bin));
	assert_true(has(plan.writable, plan.nwritable, ws));
	assert_true(has(plan.writable, plan.nwritable, tmp));
	/* And the project's tool caches (filesystem.caches), made. */
	cache_check(&plan, ws);
	assert_true(has(plan.writable, plan.nwritable, plan.cache_dir));
	assert_int_equal(plan.nwritable, 3);
	/* Shallow first: the home before the workspace inside it. */
	assert_true(rule_at(&plan, home) < rule_at(&plan, ws));
	/* The mandatory set in both roots, existing or not. */
	snprintf(p, sizeof(p), "%s/.bashrc", ws);
	assert_true(has(plan.guarded, plan.nguarded, p));
	snprintf(p, sizeof(p), "%s/.git/config", tmp);
	assert_true(has(plan.guarded, plan.nguarded, p));
	snprintf(p, sizeof(p), "%s/.config/pisbx", home);
	assert_true(has(plan.guarded, plan.nguarded, p));
	snprintf(p, sizeof(p), "%s/.srt-settings.json", home);
	assert_true(has(plan.guarded, plan.nguarded, p));
	assert_true(has(plan.guarded, plan.nguarded, bin));
	/* Nothing exists yet: no rule for the mandatory names. */
	snprintf(p, sizeof(p), "%s/.bashrc", ws);
	assert_null(rule_at(&plan, p));
	fs_plan_free(&plan);
}

/* Existing protected names get read-only rules; allowGitConfig. */
static void
test_existing_names(void **state)
{
	struct fs_plan		 plan;
	const struct fs_rule	*r;
	char			 p[PATH_MAX];

	(void)state;
	mk("%s/.git/hooks", ws);
	write_file("", "%s/.git/config", ws);
	write_file("", "%s/.bashrc", ws);
	build(&plan, "{}");
	snprintf(p, sizeof(p), "%s/.bashrc", ws);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_EXPOSE_RO);
	assert_false(r->is_dir);
	snprintf(p, sizeof(p), "%s/.git/hooks", ws);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_EXPOSE_RO);
	assert_true(r->is_dir);
	snprintf(p, sizeof(p), "%s/.git/config", ws);
	assert_non_null(rule_at(&plan, p));
	fs_plan_free(&plan);

	build(&plan, "{\"filesystem\": {\"allowGitConfig\": true}}");
	assert_null(rule_at(&plan, p));
	assert_false(has(plan.guarded, plan.nguarded, p));
	snprintf(p, sizeof(p), "%s/.git/hooks", ws);
	assert_non_null(rule_at(&plan, p));
	fs_plan_free(&plan);
}

/* "~", relative paths, symlinks, and precedence at one path. */
static void
test_paths(void **state)
{
	struct fs_plan		 plan;
	const struct fs_rule	*r;
	char			 json[4 * PATH_MAX], p[PATH_MAX], l[PATH_MAX];

	(void)state;
	mk("%s/.npm", home);
	mk("%s/locked", ws);
	mk("%s/real", top);
	mk("%s/secret/pub", top);
	snprintf(l, sizeof(l), "%s/link", top);
	snprintf(p, sizeof(p), "%s/real", top);
	assert_int_equal(symlink(p, l), 0);
	snprintf(json, sizeof(json), "{\"filesystem\": {"
	    "\"denyRead\": [\"~\", \"%s/secret\"], "
	    "\"allowRead\": [\"~/.npm\", \"%s/secret/pub\"], "
	    "\"allowWrite\": [\".\", \"%s\"], "
	    "\"denyWrite\": [\"locked\", \"notyet\"]}}", top, top, l);
	build(&plan, json);
	snprintf(p, sizeof(p), "%s/.npm", home);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_EXPOSE_RO);
	snprintf(p, sizeof(p), "%s/secret/pub", top);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_EXPOSE_RO);
	snprintf(p, sizeof(p), "%s/secret", top);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_HIDE);
	/* The symlink's target is the writable root, not the link. */
	snprintf(p, sizeof(p), "%s/real", top);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_EXPOSE_RW);
	assert_true(has(plan.writable, plan.nwritable, p));
	assert_null(rule_at(&plan, l));
	/* denyWrite (relative) beats allowWrite above it. */
	snprintf(p, sizeof(p), "%s/locked", ws);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_EXPOSE_RO);
	/* A denyWrite path that does not exist: guarded, no rule. */
	snprintf(p, sizeof(p), "%s/notyet", ws);
	assert_null(rule_at(&plan, p));
	assert_true(has(plan.guarded, plan.nguarded, p));
	fs_plan_free(&plan);

	/* Same path in allowWrite and denyWrite: read-only, not a root. */
	snprintf(json, sizeof(json), "{\"filesystem\": {\"allowWrite\": "
	    "[\"%s/real\"], \"denyWrite\": [\"%s/real\"]}}", top, top);
	build(&plan, json);
	snprintf(p, sizeof(p), "%s/real", top);
	r = rule_at(&plan, p);
	assert_true(r == NULL || r->action == FS_EXPOSE_RO);
	assert_false(has(plan.writable, plan.nwritable, p));
	fs_plan_free(&plan);

	/* denyRead [] lifts the home default. */
	build(&plan, "{\"filesystem\": {\"denyRead\": []}}");
	assert_null(rule_at(&plan, home));
	fs_plan_free(&plan);
}

/* A worktree's git dir and common dir: read-only, never writable. */
static void
test_worktree(void **state)
{
	struct fs_plan		 plan;
	struct gitrule_q		 q[4];
	char			 p[PATH_MAX];
	FILE			*f;

	(void)state;
	mk("%s/main/.git/worktrees/proj", top);
	snprintf(p, sizeof(p), "%s/.git", ws);
	assert_non_null(f = fopen(p, "w"));
	fprintf(f, "gitdir: %s/main/.git/worktrees/proj\n", top);
	fclose(f);
	snprintf(p, sizeof(p), "%s/main/.git/worktrees/proj/commondir", top);
	assert_non_null(f = fopen(p, "w"));
	fprintf(f, "../..\n");
	fclose(f);
	/*
	 * allowWrite above the main repository, but naming the worktree
	 * only: the main repository read-only (bound so, in the root).
	 */
	snprintf(p, sizeof(p), "{\"filesystem\": {\"allowWrite\": [\"%s\", "
	    "\"%s/main/.git/worktrees\"]}}", ws, top);
	build(&plan, p);
	snprintf(p, sizeof(p), "%s/main/.git", top);
	assert_true(fs_plan_guarded(&plan, p, 0));
	fs_plan_free(&plan);
	/* Writable roots beside it: the main repository read-only. */
	build(&plan, "{\"filesystem\": {\"allowWrite\": [\".\", \"..\"]}}");
	snprintf(p, sizeof(p), "%s/main/.git", top);
	assert_true(fs_plan_guarded(&plan, p, 0));
	snprintf(p, sizeof(p), "%s/main/.git/worktrees/proj", top);
	assert_true(has(plan.guarded, plan.nguarded, p));
	fs_plan_free(&plan);
	/*
	 * An allowWrite entry covering the main repository: a commit in the
	 * worktree may write it (objects, refs, the worktree's index); its
	 * config and hooks are git's rules, the guard's to refuse.
	 */
	snprintf(p, sizeof(p), "{\"filesystem\": {\"allowWrite\": [\"%s\"]}}",
	    top);
	build(&plan, p);
	snprintf(p, sizeof(p), "%s/main/.git", top);
	assert_false(fs_plan_guarded(&plan, p, 0));
	snprintf(p, sizeof(p), "%s/main/.git/worktrees/proj/index", top);
	assert_false(fs_plan_guarded(&plan, p, 0));
	snprintf(p, sizeof(p), "%s/main/.git/config", top);
	assert_true(gitrule_check(p, 0, 0, q, 4) != 0);
	snprintf(p, sizeof(p), "%s/home/proj/.git", top);
	assert_true(fs_plan_guarded(&plan, p, 0));
	fs_plan_free(&plan);
}

/*
 * What is shown again inside a writable root under a hidden directory --
 * the working directory, a worktree's git directories, a Unix socket,
 * an allowRead entry -- stays writable: no read-only mount there.
 */
static void
test_reexpose_in_root(void **state)
{
	struct fs_plan		 plan;
	struct fs_inputs	 in;
	const struct fs_rule	*r;
	const char		*why;
	char			 p[PATH_MAX], json[2 * PATH_MAX], cwd[PATH_MAX];
	FILE			*f;

	(void)state;
	mk("%s/.git", ws);
	mk("%s/src/gen", ws);
	write_file("", "%s/src/s.sock", ws);
	defaults(&in);
	snprintf(cwd, sizeof(cwd), "%s/src", ws);
	in.cwd = cwd;
	snprintf(json, sizeof(json), "{\"filesystem\": {\"allowRead\": "
	    "[\"src/gen\"]}, \"network\": {\"allowUnixSockets\": "
	    "[\"%s/src/s.sock\"]}}", ws);
	assert_int_equal(build_in(&plan, json, &in), 0);
	assert_string_equal(plan.workspace, ws);
	assert_int_equal(rule_at(&plan, home)->action, FS_HIDE);
	assert_int_equal(rule_at(&plan, ws)->action, FS_EXPOSE_RW);
	assert_null(rule_at(&plan, cwd));
	snprintf(p, sizeof(p), "%s/src/gen", ws);
	assert_null(rule_at(&plan, p));
	snprintf(p, sizeof(p), "%s/src/s.sock", ws);
	assert_null(rule_at(&plan, p));
	/* The mandatory set still applies at the working directory. */
	assert_true(guarded(&plan, "%s/.claude/settings.json", cwd));
	fs_plan_free(&plan);

	/*
	 * A linked worktree in the hidden home, its main repository there
	 * too: with the main repository in allowWrite, both git directories
	 * are writable (objects, refs, the worktree's index) and git's own
	 * rules stay the guard's.
	 */
	snprintf(p, sizeof(p), "%s/.git", ws);
	assert_int_equal(rmdir(p), 0);
	mk("%s/main/.git/worktrees/proj/logs", home);
	write_file("", "%s/main/.git/HEAD", home);
	snprintf(p, sizeof(p), "%s/.git", ws);
	assert_non_null(f = fopen(p, "w"));
	fprintf(f, "gitdir: %s/main/.git/worktrees/proj\n", home);
	fclose(f);
	write_file("../..\n", "%s/main/.git/worktrees/proj/commondir", home);
	build(&plan, "{\"filesystem\": {\"allowWrite\": [\".\", "
	    "\"~/main\"]}}");
	snprintf(p, sizeof(p), "%s/main", home);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_EXPOSE_RW);
	snprintf(p, sizeof(p), "%s/main/.git/worktrees/proj", home);
	assert_null(rule_at(&plan, p));
	assert_false(guarded(&plan, "%s/main/.git/worktrees/proj/index.lock",
	    home));
	snprintf(p, sizeof(p), "%s/main/.git", home);
	assert_null(rule_at(&plan, p));
	fs_plan_free(&plan);

	/*
	 * Without it: read-only, and the refusal names the entry to add and
	 * the file to add it in.
	 */
	build(&plan, "{}");
	snprintf(p, sizeof(p), "%s/main/.git/worktrees/proj", home);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_EXPOSE_RO);
	snprintf(p, sizeof(p), "%s/main/.git/worktrees/proj/index.lock", home);
	assert_non_null(why = fs_plan_guarded(&plan, p, 0));
	snprintf(p, sizeof(p), "set filesystem.allowWrite to [\".\", "
	    "\"%s/main\"] in ", home);
	assert_non_null(strstr(why, p));
	fs_plan_free(&plan);
	build(&plan, "{\"filesystem\": {\"allowWrite\": [\".\"]}}");
	snprintf(p, sizeof(p), "%s/main/.git/objects/x", home);
	assert_non_null(why = fs_plan_guarded(&plan, p, 0));
	snprintf(p, sizeof(p), "add \"%s/main\" to filesystem.allowWrite in "
	    "t.json", home);
	assert_non_null(strstr(why, p));
	fs_plan_free(&plan);
}

/* The refusal text of the git rules names what to do instead. */
static void
test_git_why(void **state)
{
	char	buf[2048];

	(void)state;
	gitrule_why("/w/a/.git", "c.json", buf, sizeof(buf));
	assert_non_null(strstr(buf, "a .git there"));
	gitrule_why("/w/.git/hooks/pre-commit", "c.json", buf, sizeof(buf));
	assert_non_null(strstr(buf, "git configuration or hooks"));
	gitrule_why("/w/.git/worktrees/feat/commondir", "c.json", buf,
	    sizeof(buf));
	assert_non_null(strstr(buf, "only git worktree add makes it, in a "
	    "new worktree entry"));
	assert_non_null(strstr(buf, "git -C /w worktree add PATH BRANCH"));
	assert_non_null(strstr(buf, "add \"/w\" to filesystem.allowWrite in "
	    "c.json"));
	/* A bare repository: the git directory itself. */
	gitrule_why("/srv/r.git/worktrees/feat/config.worktree", "c.json", buf,
	    sizeof(buf));
	assert_non_null(strstr(buf, "git -C /srv/r.git worktree add"));
}

/* The guard's question, as a table. */
static void
test_guarded(void **state)
{
	struct fs_plan	plan;
	char		p[PATH_MAX];
	size_t		i;

	(void)state;
	build(&plan, "{}");
	for (i = 0; i < sizeof(guard_cases) / sizeof(*guard_cases); i++) {
		snprintf(p, sizeof(p), "%s/%s", ws, guard_cases[i].rel);
		if ((fs_plan_guarded(&plan, p, guard_cases[i].ancestors_too) !=
		    NULL) != guard_cases[i].want)
			fail_msg("%s (ancestors %d): want %d", guard_cases[i].rel,
			    guard_cases[i].ancestors_too, guard_cases[i].want);
	}
	/* The executables' directory and what is below it. */
	snprintf(p, sizeof(p), "%s/pisbx-run", bin);
	assert_true(fs_plan_guarded(&plan, p, 0));
	/* Outside every root and the set: not guarded. */
	assert_false(fs_plan_guarded(&plan, "/nonexistent/x", 0));
	/* The same table through the guard's index. */
	assert_int_equal(fs_plan_index(&plan), 0);
	for (i = 0; i < sizeof(guard_cases) / sizeof(*guard_cases); i++) {
		snprintf(p, sizeof(p), "%s/%s", ws, guard_cases[i].rel);
		if ((fs_plan_guarded(&plan, p, guard_cases[i].ancestors_too) !=
		    NULL) != guard_cases[i].want)
			fail_msg("indexed: %s (ancestors %d): want %d",
			    guard_cases[i].rel, guard_cases[i].ancestors_too,
			    guard_cases[i].want);
	}
	fs_plan_free(&plan);
}

/*
 * What the index answers is what the scan answers -- the same reader, so
 * the first guarded path that matches -- for every guarded path, the
 * directories above it, names beside it, below it, sharing a prefix that
 * is no directory of it, in other letter cases, and "/".
 */
static void
test_guarded_index(void **state)
{
	static const char *const json[] = {
		"{}",
		"{\"filesystem\": {\"denyWrite\": [\"/\"]}}",
		"{\"filesystem\": {\"denyWrite\": [\"sub/Mixed\", \"sub\"]}}",
	};
	static const char *const tails[] = {
		"", "/x", "/x/y", "2", "x", "/..", "/.",
	};
	struct fs_plan	 plan;
	struct fs_gindex *gi;
	const char	*lin, *idx;
	char		 p[PATH_MAX], *sl;
	size_t		 j, i, t, c;
	int		 anc;

	(void)state;
	mk("%s/sub/Mixed", ws);
	for (j = 0; j < sizeof(json) / sizeof(*json); j++) {
		build(&plan, json[j]);
		assert_true(plan.nguarded > 0);
		assert_int_equal(fs_plan_index(&plan), 0);
		gi = plan.gindex;
		for (i = 0; i <= plan.nguarded; i++)
		for (t = 0; t < sizeof(tails) / sizeof(*tails); t++)
		for (c = 0; c < 3; c++)
		for (anc = 0; anc < 2; anc++) {
			snprintf(p, sizeof(p), "%s%s", i < plan.nguarded ?
			    plan.guarded[i] : "/", tails[t]);
			if (c == 1)	/* the directory above */
				if ((sl = strrchr(p, '/')) != NULL)
					sl[sl == p ? 1 : 0] = '\0';
			if (c == 2)	/* other letter cases */
				for (sl = p; *sl != '\0'; sl++)
					*sl = (char)(*sl >= 'a' && *sl <= 'z' ?
					    *sl - 32 : *sl >= 'A' && *sl <= 'Z' ?
					    *sl + 32 : *sl);
			idx = fs_plan_guarded(&plan, p, anc);
			plan.gindex = NULL;
			lin = fs_plan_guarded(&plan, p, anc);
			plan.gindex = gi;
			if (idx != lin)
				fail_msg("%s (ancestors %d): scan says %s, "
				    "index %s", p, anc, lin != NULL ? lin :
				    "nothing", idx != NULL ? idx : "nothing");
		}
		fs_plan_free(&plan);
	}
}

/* gitrule_check: the questions for each path, as a table. */
static void
test_git_rule(void **state)
{
	struct gitrule_q	q[16];
	char		got[128];
	ssize_t		n, j;
	size_t		i;

	(void)state;
	for (i = 0; i < sizeof(git_cases) / sizeof(*git_cases); i++) {
		const struct git_case *c = &git_cases[i];

		n = gitrule_check(c->path, c->ancestors_too, c->allow_config, q,
		    16);
		assert_true(n >= 0);
		got[0] = '\0';
		for (j = 0; j < n; j++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
			    "%s%c%d", j > 0 ? " " : "", "DBS"[q[j].ask],
			    q[j].up);
		if (strcmp(got, c->want) != 0)
			fail_msg("%s (ancestors %d, allow config %d): got "
			    "\"%s\", want \"%s\"", c->path, c->ancestors_too,
			    c->allow_config, got, c->want);
	}
	/* More questions than room: -1, which the guard refuses. */
	assert_int_equal(gitrule_check("/a/hooks/hooks/hooks", 0, 0, q, 2), -1);
}

/* gitrule_states: each component named like a state, deepest first. */
static void
test_git_states(void **state)
{
	static const struct {
		const char	*path;
		const char	*want;	/* the levels, as "0 2" */
	} cases[] = {
		{ "/w/.git/rebase-merge", "0" },
		{ "/w/.git/rebase-merge/git-rebase-todo", "1" },
		{ "/w/.git/REBASE-APPLY/0001", "1" },
		{ "/w/.git/worktrees/t/sequencer/todo", "1" },
		{ "/w/sequencer/.git/sequencer", "0 2" },
		{ "/w/.git/rebase-mergex/todo", "" },
		{ "/sequencer", "" },
		{ "/w/.git/HEAD", "" },
	};
	char	got[64];
	int	lvl[4];
	size_t	i, n, j;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		n = gitrule_states(cases[i].path, lvl, 4);
		got[0] = '\0';
		for (j = 0; j < n; j++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
			    "%s%d", j > 0 ? " " : "", lvl[j]);
		if (strcmp(got, cases[i].want) != 0)
			fail_msg("%s: got \"%s\", want \"%s\"", cases[i].path,
			    got, cases[i].want);
	}
	assert_int_equal(gitrule_states("/a/sequencer/sequencer/sequencer",
	    lvl, 2), 2);
}

/* core.hooksPath: every spelling git accepts, nothing else. */
static void
test_hookspath(void **state)
{
	struct strlist	l = { NULL, 0 };
	char		p[PATH_MAX];

	(void)state;
	snprintf(p, sizeof(p), "%s/cfg", top);
	write_file("[user]\n\thooksPath = not-core\n"
	    "[core]\n\tbare = false\n\thooksPath = one\n"
	    "[Core]\n  HooksPath=\"two\"  \n"
	    "\thooksPathX = no\n"
	    "[core] hookspath = three # comment\n"
	    "[remote \"core\"]\n\thooksPath = no\n", "%s", p);
	assert_int_equal(fs_git_hookspath(p, &l), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[0], "one");
	assert_string_equal(l.v[1], "two");
	assert_string_equal(l.v[2], "three");
	strlist_free(&l);
	snprintf(p, sizeof(p), "%s/missing", top);
	assert_int_equal(fs_git_hookspath(p, &l), 0);
	assert_int_equal(l.n, 0);
}

/*
 * The work tree around the working directory (even above it): its
 * core.hooksPath and hook managers' files are protected, existing ones
 * bound read-only.
 */
static void
test_git_hooks(void **state)
{
	struct fs_plan		 plan;
	struct fs_inputs	 in;
	const struct fs_rule	*r;
	char			 p[PATH_MAX];

	(void)state;
	mk("%s/.git/hooks", ws);
	mk("%s/githooks", ws);
	mk("%s/sub", ws);
	write_file("[core]\n\thooksPath = githooks\n", "%s/.git/config", ws);
	build(&plan, "{}");
	assert_true(guarded(&plan, "%s/githooks/pre-commit", ws));
	assert_true(guarded(&plan, "%s/.husky/pre-commit", ws));
	assert_true(guarded(&plan, "%s/.pre-commit-config.yaml", ws));
	assert_false(guarded(&plan, "%s/src/x.c", ws));
	snprintf(p, sizeof(p), "%s/githooks", ws);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_EXPOSE_RO);
	fs_plan_free(&plan);

	/* Run from a subdirectory: the work tree's top is above it. */
	snprintf(p, sizeof(p), "%s/sub", ws);
	defaults(&in);
	in.cwd = p;
	assert_int_equal(build_in(&plan, "{}", &in), 0);
	assert_true(guarded(&plan, "%s/githooks/x", ws));
	fs_plan_free(&plan);
}

/* A home directory inside a writable root gets the mandatory set too. */
static void
test_home_in_root(void **state)
{
	struct fs_plan		 plan;
	struct fs_inputs	 in;
	const struct fs_rule	*r;
	char			 json[PATH_MAX];

	(void)state;
	snprintf(json, sizeof(json), "{\"filesystem\": {\"denyRead\": "
	    "[\"~/.ssh\"], \"allowWrite\": [\"%s\"]}}", top);
	build(&plan, json);
	assert_true(guarded(&plan, "%s/.bashrc", home));
	assert_true(guarded(&plan, "%s/.ssh/authorized_keys", home));
	assert_true(guarded(&plan, "%s/.config/systemd/user/x.service", home));
	assert_true(guarded(&plan, "%s/.local/bin/ls", home));
	assert_true(guarded(&plan, "%s/.bashrc", top));
	assert_false(guarded(&plan, "%s/notes.txt", home));
	fs_plan_free(&plan);

	/* Working in the home itself, with the secrets hidden: sound. */
	mk("%s/.ssh", home);
	defaults(&in);
	in.cwd = home;
	assert_int_equal(build_in(&plan, "{\"filesystem\": "
	    "{\"denyRead\": [\"~/.ssh\"]}}", &in), 0);
	snprintf(json, sizeof(json), "%s/.ssh", home);
	assert_non_null(r = rule_at(&plan, json));
	assert_int_equal(r->action, FS_HIDE);
	assert_true(has(plan.writable, plan.nwritable, home));
	assert_true(guarded(&plan, "%s/.zshenv", home));
	fs_plan_free(&plan);
}

/* Working directories no sound policy exists for: refused, said why. */
static void
test_refuse_cwd(void **state)
{
	struct fs_plan		 plan;
	struct fs_inputs	 in;
	char			 json[PATH_MAX];

	(void)state;
	defaults(&in);
	in.cwd = home;		/* hidden by default */
	assert_int_equal(build_in(&plan, "{}", &in), EXIT_SETUP);
	in.cwd = "/";
	assert_int_equal(build_in(&plan, "{}", &in), EXIT_SETUP);
	assert_int_equal(build_in(&plan, "{\"filesystem\": {\"allowWrite\": "
	    "[\"/\"]}}", NULL), EXIT_SETUP);
	snprintf(json, sizeof(json), "{\"filesystem\": {\"denyRead\": "
	    "[\"%s\"]}}", ws);
	assert_int_equal(build_in(&plan, json, NULL), EXIT_SETUP);
	/* / as the working directory, written elsewhere: sound. */
	snprintf(json, sizeof(json), "{\"filesystem\": {\"allowWrite\": "
	    "[\"%s\"]}}", ws);
	in.cwd = "/";
	assert_int_equal(build_in(&plan, json, &in), 0);
	fs_plan_free(&plan);
}

/*
 * The files the config and the command line name: protected; a reviewer
 * inside a writable root: refused.
 */
static void
test_trusted(void **state)
{
	struct fs_plan		 plan;
	struct fs_inputs	 in;
	const struct fs_rule	*r;
	char			 json[4 * PATH_MAX], p[PATH_MAX];

	(void)state;
	write_file("", "%s/hosts", ws);
	write_file("", "%s/reviewer.sh", bin);
	snprintf(json, sizeof(json), "{\"resolver\": {\"hostsFile\": "
	    "\"%s/hosts\"}, \"review\": {\"command\": [\"%s/reviewer.sh\", "
	    "\"-v\", \"relative.txt\"]}}", ws, bin);
	defaults(&in);
	snprintf(p, sizeof(p), "%s/access.log", ws);
	in.access_log = p;
	in.supervisor_socket = "/nonexistent/sup.sock";
	assert_int_equal(build_in(&plan, json, &in), 0);
	assert_true(guarded(&plan, "%s/hosts", ws));
	assert_true(guarded(&plan, "%s/access.log", ws));
	assert_true(guarded(&plan, "/nonexistent/sup.sock"));
	snprintf(p, sizeof(p), "%s/hosts", ws);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_EXPOSE_RO);
	fs_plan_free(&plan);

	snprintf(json, sizeof(json), "{\"review\": {\"socket\": "
	    "\"%s/sup.sock\"}}", ws);
	assert_int_equal(build_in(&plan, json, NULL), 0);
	assert_true(guarded(&plan, "%s/sup.sock", ws));
	fs_plan_free(&plan);

	/*
	 * The upstream proxy's credentials: hidden and guarded, in the
	 * workspace as much as in the (hidden) home.
	 */
	write_file("alice:hunter2\n", "%s/parent.cred", ws);
	snprintf(p, sizeof(p), "%s/parent.cred", ws);
	assert_int_equal(chmod(p, 0600), 0);
	snprintf(json, sizeof(json), "{\"network\": {\"parentProxy\": "
	    "{\"http\": \"http://p:3128\", \"credentialsFile\": \"%s\"}}}",
	    p);
	assert_int_equal(build_in(&plan, json, NULL), 0);
	assert_true(guarded(&plan, "%s/parent.cred", ws));
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_HIDE);
	assert_false(r->is_dir);
	fs_plan_free(&plan);

	/* The reviewer, or a file it is given, in a writable root. */
	snprintf(json, sizeof(json), "{\"review\": {\"command\": "
	    "[\"%s/r.sh\"]}}", ws);
	assert_int_equal(build_in(&plan, json, NULL), EXIT_CONFIG);
	snprintf(json, sizeof(json), "{\"review\": {\"command\": "
	    "[\"/usr/bin/python3\", \"%s/r.py\"]}}", ws);
	assert_int_equal(build_in(&plan, json, NULL), EXIT_CONFIG);
	snprintf(json, sizeof(json), "{\"review\": {\"command\": "
	    "[\"/bin/sh\", \"--rules=%s/rules\"]}}", tmp);
	assert_int_equal(build_in(&plan, json, NULL), EXIT_CONFIG);
}

/* $PATH directories in a writable root, outside the working directory. */
static void
test_path_dirs(void **state)
{
	struct fs_plan		 plan;
	struct fs_inputs	 in;
	char			 json[PATH_MAX], path[4 * PATH_MAX];

	(void)state;
	snprintf(json, sizeof(json), "{\"filesystem\": {\"allowWrite\": "
	    "[\"%s\"]}}", top);
	snprintf(path, sizeof(path), "%s/mybin:%s/.venv/bin:relative:"
	    "/usr/bin", home, ws);
	defaults(&in);
	in.path = path;
	assert_int_equal(build_in(&plan, json, &in), 0);
	assert_true(guarded(&plan, "%s/mybin/ls", home));
	assert_false(guarded(&plan, "%s/.venv/bin/python", ws));
	fs_plan_free(&plan);
}

/*
 * The workspace: the git work tree's top above cwd, with the mandatory
 * set at both; PISBX_WORKSPACE held to cwd's rules; $PATH inside it is
 * the project's.
 */
static void
test_workspace(void **state)
{
	struct fs_plan		 plan;
	struct fs_inputs	 in;
	char			 cwd[PATH_MAX], path[PATH_MAX];

	(void)state;
	mk("%s/.git", ws);
	mk("%s/src", ws);
	snprintf(cwd, sizeof(cwd), "%s/src", ws);
	snprintf(path, sizeof(path), "%s/.venv/bin:%s/.local/bin", ws, home);
	defaults(&in);
	in.cwd = cwd;
	in.path = path;
	assert_int_equal(build_in(&plan, "{}", &in), 0);
	assert_string_equal(plan.workspace, ws);
	assert_true(has(plan.writable, plan.nwritable, ws));
	assert_true(guarded(&plan, "%s/.bashrc", ws));
	assert_true(guarded(&plan, "%s/src/.claude/settings.json", ws));
	assert_true(guarded(&plan, "%s/src/.vscode", ws));
	assert_false(guarded(&plan, "%s/src/main.c", ws));
	assert_false(guarded(&plan, "%s/.venv/bin/python", ws));
	fs_plan_free(&plan);

	/* PISBX_WORKSPACE: like a working directory. */
	setenv("PISBX_WORKSPACE", home, 1);
	assert_int_equal(build_in(&plan, "{}", &in), EXIT_SETUP);
	setenv("PISBX_WORKSPACE", "/", 1);
	assert_int_equal(build_in(&plan, "{}", &in), EXIT_SETUP);
	setenv("PISBX_WORKSPACE", "home", 1);
	assert_int_equal(build_in(&plan, "{}", &in), EXIT_SETUP);
	setenv("PISBX_WORKSPACE", home, 1);
	snprintf(path, sizeof(path), "{\"filesystem\": {\"denyRead\": "
	    "[\"%s/.ssh\"]}}", home);
	assert_int_equal(build_in(&plan, path, &in), 0);
	assert_string_equal(plan.workspace, home);
	assert_true(guarded(&plan, "%s/.zshenv", home));
	fs_plan_free(&plan);
	unsetenv("PISBX_WORKSPACE");

	/* The home as the work tree's top: the working directory. */
	snprintf(path, sizeof(path), "%s/.git", ws);
	assert_int_equal(rmdir(path), 0);
	mk("%s/.git", home);
	assert_int_equal(build_in(&plan, "{}", &in), 0);
	assert_string_equal(plan.workspace, cwd);
	fs_plan_free(&plan);
}

/*
 * A single file in allowWrite: a writable root, unless the mandatory set
 * (at its directory, at the home directory) or $PATH protects it.
 */
static void
test_file_roots(void **state)
{
	struct fs_plan		 plan;
	struct fs_inputs	 in;
	char			 json[2 * PATH_MAX], p[PATH_MAX];
	static const char *const refused[] = {	/* below the home */
		".npmrc", ".config/git/config", "mybin/tool", "proj/.bashrc",
	};
	size_t			 i;

	(void)state;
	mk("%s/.config/git", home);
	mk("%s/mybin", home);
	write_file("", "%s/notes.md", home);
	snprintf(json, sizeof(json), "{\"filesystem\": {\"allowWrite\": "
	    "[\".\", \"%s/notes.md\"]}}", home);
	assert_int_equal(build_in(&plan, json, NULL), 0);
	snprintf(p, sizeof(p), "%s/notes.md", home);
	assert_true(has(plan.writable, plan.nwritable, p));
	fs_plan_free(&plan);

	snprintf(p, sizeof(p), "%s/mybin", home);
	defaults(&in);
	in.path = p;
	for (i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
		snprintf(p, sizeof(p), "%s/%s", home, refused[i]);
		write_file("", "%s", p);
		snprintf(json, sizeof(json), "{\"filesystem\": "
		    "{\"allowWrite\": [\".\", \"%s\"]}}", p);
		snprintf(p, sizeof(p), "%s/mybin", home);
		assert_int_equal(build_in(&plan, json, &in), EXIT_CONFIG);
	}
}

/* What one home path becomes under one config (home_cases). */
struct home_case {
	const char	*conf;
	const char	*rel;		/* below the home directory */
	int		 action;	/* FS_HIDE, FS_EXPOSE_RO, or -1: no rule */
	int		 filtered;	/* shown from a filtered copy */
};

/*
 * Hidden home, toolchains re-exposed read-only, secret stores hidden
 * where a parent is re-exposed, unless named themselves; every switch.
 */
static const struct home_case home_cases[] = {
	/* the default: each toolchain place, read-only; secrets unseen */
	{ "{}", ".cargo/bin", FS_EXPOSE_RO, 0 },
	{ "{}", ".rustup", FS_EXPOSE_RO, 0 },
	{ "{}", ".pyenv", FS_EXPOSE_RO, 0 },
	{ "{}", ".nvm", FS_EXPOSE_RO, 0 },
	{ "{}", ".local/bin", FS_EXPOSE_RO, 0 },
	{ "{}", ".local/share/mise", FS_EXPOSE_RO, 0 },
	/* settings files that hold credentials too: filtered copies */
	{ "{}", ".gitconfig", FS_EXPOSE_RO, 1 },
	{ "{}", ".config/git/config", FS_EXPOSE_RO, 1 },
	{ "{}", ".npmrc", FS_EXPOSE_RO, 1 },
	{ "{}", ".config/pip/pip.conf", FS_EXPOSE_RO, 1 },
	{ "{\"filesystem\": {\"allowRead\": [\"~\"]}}", ".npmrc",
	    FS_EXPOSE_RO, 1 },
	{ "{\"filesystem\": {\"allowRead\": [\"~/.config\"]}}",
	    ".config/git/config", FS_EXPOSE_RO, 1 },
	{ "{\"filesystem\": {\"toolchains\": {\"npm\": false}}}", ".npmrc",
	    -1, 0 },
	{ "{\"filesystem\": {\"toolchains\": {\"npm\": false}, "
	    "\"allowRead\": [\"~\"]}}", ".npmrc", FS_EXPOSE_RO, 1 },
	/* ... the file itself named: shown as it is */
	{ "{\"filesystem\": {\"allowRead\": [\"~/.npmrc\"]}}", ".npmrc",
	    FS_EXPOSE_RO, 0 },
	{ "{}", ".cargo", -1, 0 },			/* only its bin */
	{ "{}", ".cargo/credentials.toml", -1, 0 },
	{ "{}", ".config/git/credentials", -1, 0 },
	{ "{}", ".git-credentials", -1, 0 },	/* hidden with the home */
	{ "{}", ".ssh", -1, 0 },
	{ "{}", ".local/share/keyrings", -1, 0 },
	/* switched off: one, or all */
	{ "{\"filesystem\": {\"toolchains\": {\"pyenv\": false}}}", ".pyenv",
	    -1, 0 },
	{ "{\"filesystem\": {\"toolchains\": {\"pyenv\": false}}}", ".nvm",
	    FS_EXPOSE_RO, 0 },
	{ "{\"filesystem\": {\"toolchains\": false}}", ".cargo/bin", -1, 0 },
	{ "{\"filesystem\": {\"toolchains\": false}}", ".gitconfig", -1, 0 },
	/*
	 * the user's own denyRead at a place wins over the default: not
	 * re-exposed, hidden with the home (no rule of its own: nothing to
	 * mount on inside the home's empty tmpfs)
	 */
	{ "{\"filesystem\": {\"denyRead\": [\"~\", \"~/.pyenv\"]}}", ".pyenv",
	    -1, 0 },
	{ "{\"filesystem\": {\"denyRead\": [\"~\", \"~/.pyenv\"]}}", ".nvm",
	    FS_EXPOSE_RO, 0 },
	/* a parent re-exposed: every secret store hidden again */
	{ "{\"filesystem\": {\"allowRead\": [\"~\"]}}", ".ssh", FS_HIDE, 0 },
	{ "{\"filesystem\": {\"allowRead\": [\"~\"]}}", ".git-credentials",
	    FS_HIDE, 0 },
	{ "{\"filesystem\": {\"allowRead\": [\"~\"]}}",
	    ".claude/.credentials.json", FS_HIDE, 0 },
	{ "{\"filesystem\": {\"allowRead\": [\"~\"]}}", ".bash_history",
	    FS_HIDE, 0 },
	{ "{\"filesystem\": {\"allowRead\": [\"~\"]}}",
	    ".local/share/keyrings", FS_HIDE, 0 },
	{ "{\"filesystem\": {\"allowRead\": [\"~/.config\"]}}",
	    ".config/gh", FS_HIDE, 0 },
	{ "{\"filesystem\": {\"allowRead\": [\"~/.config\"]}}",
	    ".config/git/credentials", FS_HIDE, 0 },
	{ "{\"filesystem\": {\"allowRead\": [\"~/.cargo\"]}}",
	    ".cargo/credentials.toml", FS_HIDE, 0 },
	{ "{\"filesystem\": {\"denyRead\": [\"/nonexistent\"]}}", ".aws",
	    FS_HIDE, 0 },
	/* ... unless the config names the store itself, or inside it */
	{ "{\"filesystem\": {\"allowRead\": [\"~\", \"~/.ssh\"]}}", ".ssh",
	    -1, 0 },	/* shown with the home: no mount of its own */
	{ "{\"filesystem\": {\"allowRead\": [\"~/.ssh/known_hosts\"]}}",
	    ".ssh", -1, 0 },
	{ "{\"filesystem\": {\"allowRead\": [\"~\", \"~/.ssh\"]}}", ".aws",
	    FS_HIDE, 0 },
};

/* The home's places for home_cases: toolchains, secrets, one file each. */
static void
home_layout(void)
{
	static const char *const dirs[] = {
		".cargo/bin", ".rustup/toolchains", ".pyenv/shims", ".nvm",
		".local/bin", ".local/share/mise", ".local/share/keyrings",
		".config/git", ".config/gh", ".ssh", ".aws",
	};
	static const char *const files[] = {
		".gitconfig", ".config/git/config", ".config/git/credentials",
		".git-credentials", ".cargo/credentials.toml", ".bash_history",
		".ssh/known_hosts", ".claude/.credentials.json", ".npmrc",
		".config/pip/pip.conf",
	};
	char	 p[PATH_MAX], *s;
	size_t	 i;
	FILE	*f;

	for (i = 0; i < sizeof(dirs) / sizeof(*dirs); i++)
		mk("%s/%s", home, dirs[i]);
	for (i = 0; i < sizeof(files) / sizeof(*files); i++) {
		snprintf(p, sizeof(p), "%s/%s", home, files[i]);
		s = strrchr(p, '/');
		*s = '\0';
		mk("%s", p);
		*s = '/';
		assert_non_null(f = fopen(p, "w"));
		fclose(f);
	}
}

static void
test_home_defaults(void **state)
{
	const struct home_case	*c;
	const struct fs_rule	*r;
	struct fs_plan		 plan;
	char			 p[PATH_MAX];
	size_t			 i;
	int			 failed = 0, got;

	(void)state;
	home_layout();
	for (i = 0; i < sizeof(home_cases) / sizeof(*home_cases); i++) {
		c = &home_cases[i];
		build(&plan, c->conf);
		snprintf(p, sizeof(p), "%s/%s", home, c->rel);
		r = rule_at(&plan, p);
		got = r != NULL ? (int)r->action : -1;
		if (got != c->action) {
			print_error("%s, ~/%s: rule %d, want %d\n", c->conf,
			    c->rel, got, c->action);
			failed++;
		} else if (r != NULL && (r->source != NULL) != c->filtered) {
			print_error("%s, ~/%s: %s, want %s\n", c->conf, c->rel,
			    r->source != NULL ? "a copy" : "the file",
			    c->filtered ? "a copy" : "the file");
			failed++;
		}
		fs_plan_free(&plan);
	}
	assert_int_equal(failed, 0);
}

/*
 * That the plan's cache directory is the project's own:
 * ~/.cache/pisbx/<its name>-<32 hex digits>, 0700, with a record beside
 * it naming the project.
 */
static void
cache_check(const struct fs_plan *plan, const char *project)
{
	struct stat	 st;
	char		 p[PATH_MAX], line[PATH_MAX];
	const char	*base = strrchr(project, '/') + 1, *h;
	FILE		*f;
	size_t		 i;

	assert_non_null(plan->cache_dir);
	snprintf(p, sizeof(p), "%s/.cache/pisbx/%s-", home, base);
	assert_int_equal(strncmp(plan->cache_dir, p, strlen(p)), 0);
	h = plan->cache_dir + strlen(p);
	assert_int_equal(strlen(h), 32);
	for (i = 0; i < 32; i++)
		assert_non_null(strchr("0123456789abcdef", h[i]));
	assert_int_equal(lstat(plan->cache_dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(p, sizeof(p), "%s.workspace", plan->cache_dir);
	assert_non_null(f = fopen(p, "r"));
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	assert_string_equal(line, project);
}

/*
 * filesystem.caches: one writable directory per project, made, named by
 * a record beside it; none when off, when the record names another
 * project, or when a link stands in for a directory.
 */
static void
test_caches(void **state)
{
	struct fs_plan		 plan;
	struct fs_inputs	 in;
	struct stat		 st;
	char			 p[PATH_MAX], other[PATH_MAX], *first;

	(void)state;
	snprintf(p, sizeof(p), "%s/.cache/pisbx", home);
	build(&plan, "{\"filesystem\": {\"caches\": false}}");
	assert_null(plan.cache_dir);
	assert_int_equal(stat(p, &st), -1);
	fs_plan_free(&plan);
	build(&plan, "{\"filesystem\": {\"caches\": {\"cargo\": false}}}");
	cache_check(&plan, ws);
	assert_true(has(plan.writable, plan.nwritable, plan.cache_dir));
	/* Not the caches of every project: their directory stays as is. */
	assert_false(has(plan.writable, plan.nwritable, p));
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	/* Its top is a root like any: the mandatory set applies. */
	assert_true(guarded(&plan, "%s/.bashrc", plan.cache_dir));
	assert_non_null(first = strdup(plan.cache_dir));
	fs_plan_free(&plan);

	/* The same project from a subdirectory of its work tree: the same. */
	mk("%s/.git", ws);
	mk("%s/src", ws);
	defaults(&in);
	snprintf(other, sizeof(other), "%s/src", ws);
	in.cwd = other;
	assert_int_equal(build_in(&plan, "{}", &in), 0);
	assert_string_equal(plan.cache_dir, first);
	fs_plan_free(&plan);

	/* Another project, even of the same name: another directory. */
	snprintf(other, sizeof(other), "%s/elsewhere/proj", top);
	mk("%s", other);
	in.cwd = other;
	assert_int_equal(build_in(&plan, "{}", &in), 0);
	cache_check(&plan, other);
	assert_string_not_equal(plan.cache_dir, first);
	fs_plan_free(&plan);

	/* A record that names another project: no caches. */
	snprintf(other, sizeof(other), "%s.workspace", first);
	write_file("/somewhere/else\n", "%s", other);
	build(&plan, "{}");
	assert_null(plan.cache_dir);
	fs_plan_free(&plan);
	write_file("", "%s", other);
	build(&plan, "{}");
	assert_null(plan.cache_dir);
	fs_plan_free(&plan);
	assert_int_equal(unlink(other), 0);

	/* A link planted in a directory's place: no caches, target as is. */
	assert_int_equal(rmdir(first), 0);
	assert_int_equal(symlink(home, first), 0);
	build(&plan, "{}");
	assert_null(plan.cache_dir);
	assert_false(has(plan.writable, plan.nwritable, home));
	fs_plan_free(&plan);
	assert_int_equal(unlink(first), 0);
	snprintf(other, sizeof(other), "%s.workspace", first);
	unlink(other);
	snprintf(other, sizeof(other), "%s/.cache/moved", home);
	assert_int_equal(rename(p, other), 0);
	assert_int_equal(symlink(other, p), 0);
	build(&plan, "{}");
	assert_null(plan.cache_dir);
	fs_plan_free(&plan);
	assert_int_equal(unlink(p), 0);
	free(first);
}

/*
 * Patterns: anchored at the project (the git top, from a subdirectory),
 * what matches at start hidden or write-protected -- a directory whose
 * contents all match taken whole, a matching symlink's target --, and
 * what the guard asks later.
 */
static void
test_patterns(void **state)
{
	struct fs_plan		 plan;
	struct fs_inputs	 in;
	const struct fs_rule	*r;
	const struct fs_glob	*fg;
	char			 cwd[PATH_MAX], p[PATH_MAX], q[PATH_MAX];
	char			 hit[PATH_MAX];
	size_t			 i;
	int			 fd;

	(void)state;
	mk("%s/.git", ws);
	mk("%s/sub/deep", ws);
	mk("%s/vault/inner", ws);
	mk("%s/outside", ws);
	write_file("s", "%s/.env", ws);
	write_file("s", "%s/sub/deep/.env", ws);
	write_file("s", "%s/vault/inner/x", ws);
	write_file("s", "%s/outside/real", ws);
	write_file("s", "%s/secret.txt", ws);
	write_file("s", "%s/run.sh", ws);
	write_file("s", "%s/sub/ok.txt", ws);
	snprintf(p, sizeof(p), "%s/outside/real", ws);
	snprintf(q, sizeof(q), "%s/sub/linked.key", ws);
	assert_int_equal(symlink(p, q), 0);
	snprintf(cwd, sizeof(cwd), "%s/sub", ws);
	defaults(&in);
	in.cwd = cwd;
	assert_int_equal(build_in(&plan, "{\"filesystem\": {\"denyRead\": "
	    "[\"**/.env\", \"vault/**\", \"**/*.key\"], "
	    "\"denyWrite\": [\"*.sh\"]}}", &in), 0);
	assert_string_equal(plan.project, ws);
	assert_string_equal(plan.workspace, ws);
	assert_int_equal(plan.nglobs, 4);
	snprintf(p, sizeof(p), "%s/**/.env", ws);
	assert_string_equal(glob_text(plan.globs[0].g), p);
	assert_int_equal(plan.globs[0].found, 2);
	for (i = 0; i < 3; i++) {
		static const char *const hidden[] = {
			".env", "sub/deep/.env", "outside/real"
		};

		snprintf(p, sizeof(p), "%s/%s", ws, hidden[i]);
		assert_non_null(r = rule_at(&plan, p));
		assert_int_equal(r->action, FS_HIDE);
		assert_false(r->is_dir);
	}
	snprintf(p, sizeof(p), "%s/vault", ws);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_HIDE);
	assert_true(r->is_dir);
	snprintf(p, sizeof(p), "%s/vault/inner/x", ws);
	assert_null(rule_at(&plan, p));		/* the directory covers it */
	snprintf(p, sizeof(p), "%s/run.sh", ws);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_EXPOSE_RO);
	assert_true(guarded(&plan, "%s/run.sh", ws));
	snprintf(p, sizeof(p), "%s/sub/ok.txt", ws);
	assert_null(rule_at(&plan, p));

	/* What the guard asks about names made later. */
	snprintf(p, sizeof(p), "%s/new/dir/.env", ws);
	assert_non_null(fg = fs_glob_denied(&plan, p));
	assert_int_equal(fg->kind, FS_GLOB_DENY_READ);
	snprintf(p, sizeof(p), "%s/vault/new", ws);
	assert_non_null(fs_glob_denied(&plan, p));
	snprintf(p, sizeof(p), "%s/sub/new.sh", ws);	/* "*.sh": the top's */
	assert_null(fs_glob_denied(&plan, p));
	snprintf(p, sizeof(p), "%s/new.sh", ws);
	assert_non_null(fg = fs_glob_denied(&plan, p));
	assert_int_equal(fg->kind, FS_GLOB_DENY_WRITE);
	snprintf(p, sizeof(p), "%s/vault", ws);		/* not inside it */
	assert_null(fs_glob_denied(&plan, p));

	/* A directory renamed: what lands in vault/ matches there. */
	mk("%s/m/n", ws);
	write_file("k", "%s/m/n/key", ws);
	snprintf(p, sizeof(p), "%s/m", ws);
	assert_true((fd = open(p, O_RDONLY | O_DIRECTORY)) != -1);
	snprintf(q, sizeof(q), "%s/vault/m", ws);
	assert_int_equal(fs_glob_moved(&plan, fd, p, q, hit, sizeof(hit),
	    &fg), 1);
	snprintf(q, sizeof(q), "%s/vault/m/n", ws);
	assert_string_equal(hit, q);
	snprintf(q, sizeof(q), "%s/elsewhere", ws);
	assert_int_equal(fs_glob_moved(&plan, fd, p, q, hit, sizeof(hit),
	    &fg), 0);
	close(fd);
	fs_plan_free(&plan);

	/* A relative path starts at the project too, not at cwd. */
	assert_int_equal(build_in(&plan, "{\"filesystem\": {\"denyRead\": "
	    "[\"secret.txt\"]}}", &in), 0);
	snprintf(p, sizeof(p), "%s/secret.txt", ws);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_HIDE);
	fs_plan_free(&plan);
}

/*
 * Hidden directories inside hidden directories: the inner one has
 * nothing to hide any more (it failed: a mount point inside the empty
 * tmpfs); re-exposed in between, it is hidden again.
 */
static void
test_nested_hide(void **state)
{
	struct fs_plan	 plan;
	char		 json[3 * PATH_MAX], p[PATH_MAX];

	(void)state;
	mk("%s/a/b/c/d", ws);
	snprintf(json, sizeof(json), "{\"filesystem\": {\"denyRead\": "
	    "[\"%s/a\", \"%s/a/b\", \"%s/a/b/c/d\"], \"allowRead\": "
	    "[\"%s/a/b/c\"]}}", ws, ws, ws, ws);
	build(&plan, json);
	snprintf(p, sizeof(p), "%s/a", ws);
	assert_int_equal(rule_at(&plan, p)->action, FS_HIDE);
	snprintf(p, sizeof(p), "%s/a/b", ws);
	assert_null(rule_at(&plan, p));
	/* In the workspace: shown again, and writable like it. */
	snprintf(p, sizeof(p), "%s/a/b/c", ws);
	assert_int_equal(rule_at(&plan, p)->action, FS_EXPOSE_RW);
	snprintf(p, sizeof(p), "%s/a/b/c/d", ws);
	assert_int_equal(rule_at(&plan, p)->action, FS_HIDE);
	fs_plan_free(&plan);
	/* Outside every writable root: read-only. */
	snprintf(json, sizeof(json), "{\"filesystem\": {\"denyRead\": "
	    "[\"%s/a\", \"%s/a/b\", \"%s/a/b/c/d\"], \"allowRead\": "
	    "[\"%s/a/b/c\"], \"allowWrite\": [\"%s/run\"]}}", ws, ws, ws, ws,
	    top);
	build(&plan, json);
	snprintf(p, sizeof(p), "%s/a/b/c", ws);
	assert_int_equal(rule_at(&plan, p)->action, FS_EXPOSE_RO);
	fs_plan_free(&plan);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_home_defaults, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_caches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_patterns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nested_hide, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_existing_names, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worktree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reexpose_in_root, setup,
		    teardown),
		cmocka_unit_test(test_git_why),
		cmocka_unit_test_setup_teardown(test_guarded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guarded_index, setup,
		    teardown),
		cmocka_unit_test(test_git_rule),
		cmocka_unit_test(test_git_states),
		cmocka_unit_test_setup_teardown(test_hookspath, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_git_hooks, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_home_in_root, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_refuse_cwd, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_trusted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_dirs, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_workspace, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_file_roots, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
