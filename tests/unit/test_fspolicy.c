/*
 * The launcher's filesystem plan (launcher/fspolicy.c): defaults, "~" and
 * relative paths, symlinks resolved, precedence at one path, rules only
 * for existing paths and sorted shallow-first, the mandatory set in every
 * writable root (allowGitConfig), git worktrees, and the guard's
 * fs_plan_guarded table.  Real files in a temporary directory.
 */
#include <sys/stat.h>

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

struct guard_case {
	const char	*rel;		/* below the workspace */
	int		 ancestors_too;
	int		 want;
};

/* Short, so every path built from them fits a PATH_MAX buffer. */
static char	 top[128], ws[256], home[256], tmp[256], bin[256];

static void	 mk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void	 touch(const char *fmt, ...)
		    __attribute__((format(printf, 1, 2)));
static struct config *conf_of(const char *json);
static void	 build(struct fs_plan *, const char *json);
static const struct fs_rule *rule_at(const struct fs_plan *, const char *);
static int	 has(char *const *v, size_t n, const char *);
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
	{ ".claude", 0, 0 },
	{ ".claude", 1, 1 },
	{ ".claude/commands/x.md", 0, 1 },
	{ ".claude/settings.json", 0, 0 },
	{ ".pi/settings.json", 0, 1 },
	{ ".pi/other.json", 0, 0 },
	{ ".vscode/settings.json", 0, 1 },
	{ ".mcp.json", 0, 1 },
	{ "README.md", 0, 0 },
	{ "README.md", 1, 0 },
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

static void
touch(const char *fmt, ...)
{
	char	 p[PATH_MAX];
	FILE	*f;
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(p, sizeof(p), fmt, ap);
	va_end(ap);
	f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
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

/* The plan for a config text, with the test's cwd, home, TMPDIR, bin. */
static void
build(struct fs_plan *plan, const char *json)
{
	struct config	*c = conf_of(json);

	assert_int_equal(fs_plan_build(plan, c, ws, home, tmp, bin,
	    NULL), 0);
	config_free(c);
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
	snprintf(tmp, sizeof(tmp), "%s/run/tmp", top);
	snprintf(bin, sizeof(bin), "%s/bin", top);
	mk("%s", ws);
	mk("%s", tmp);
	mk("%s", bin);
	unsetenv("PISBX_CONFIG");
	unsetenv("XDG_CONFIG_HOME");
	return 0;
}

static int
teardown(void **state)
{
	char	cmd[PATH_MAX + 16];

	(void)state;
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
	assert_int_equal(plan.nwritable, 2);
	/* Shallow first: the home before the workspace inside it. */
	assert_true(rule_at(&plan, home) < rule_at(&plan, ws));
	/* The mandatory set in both roots, existing or not. */
	snprintf(p, sizeof(p), "%s/.bashrc", ws);
	assert_true(has(plan.guarded, plan.nguarded, p));
	snprintf(p, sizeof(p), "%s/.git/config", tmp);
	assert_true(has(plan.guarded, plan.nguarded, p));
	snprintf(p, sizeof(p), "%s/.config/pisbx", home);
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
	touch("%s/.git/config", ws);
	touch("%s/.bashrc", ws);
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
	const struct fs_rule	*r;
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
	snprintf(p, sizeof(p), "{\"filesystem\": {\"allowWrite\": [\"%s\"]}}",
	    top);
	build(&plan, p);
	snprintf(p, sizeof(p), "%s/main/.git", top);
	assert_non_null(r = rule_at(&plan, p));
	assert_int_equal(r->action, FS_EXPOSE_RO);
	assert_true(fs_plan_guarded(&plan, p, 0));
	snprintf(p, sizeof(p), "%s/main/.git/worktrees/proj", top);
	assert_true(has(plan.guarded, plan.nguarded, p));
	fs_plan_free(&plan);
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
		if (fs_plan_guarded(&plan, p, guard_cases[i].ancestors_too) !=
		    guard_cases[i].want)
			fail_msg("%s (ancestors %d): want %d", guard_cases[i].rel,
			    guard_cases[i].ancestors_too, guard_cases[i].want);
	}
	/* The executables' directory and what is below it. */
	snprintf(p, sizeof(p), "%s/pisbx-run", bin);
	assert_true(fs_plan_guarded(&plan, p, 0));
	/* Outside every root and the set: not guarded. */
	assert_false(fs_plan_guarded(&plan, "/nonexistent/x", 0));
	fs_plan_free(&plan);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_existing_names, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worktree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guarded, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
