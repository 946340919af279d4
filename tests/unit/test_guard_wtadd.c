/*
 * launcher/guard/wtadd.c: guard_wtadd_path, which reads the command
 * line of the "git worktree add" whose "git branch" child the guard may
 * refuse.  It must find PATH through the options git worktree add takes
 * (-b NAME, -bNAME, --reason TEXT, --detach, --lock, -q, --), follow -C
 * like git does, and read nothing else: any other command, an unknown
 * option, --force or an alias is NULL, which leaves the call to git.
 */
#include <sys/types.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "launcher/guard/guard_int.h"

struct wt_case {
	const char	*line;	/* arguments, separated by spaces */
	const char	*path;	/* PATH, or NULL */
	const char	*dir;	/* the directory after -C options */
};

static const struct wt_case wt_cases[] = {
	{ "git worktree add wt", "wt", "/w" },
	{ "git worktree add wt -b feature", "wt", "/w" },
	{ "git worktree add -b feature ../x", "../x", "/w" },
	{ "git worktree add -bfeature ../x main", "../x", "/w" },
	{ "/usr/bin/git worktree add -B f x", "x", "/w" },
	{ "git worktree add --detach -q --lock --reason why x", "x", "/w" },
	{ "git worktree add --reason=why --no-checkout x", "x", "/w" },
	{ "git worktree add -- -odd", "-odd", "/w" },
	{ "git -C sub worktree add x", "x", "/w/sub" },
	{ "git -C /abs -C rel worktree add x", "x", "/abs/rel" },
	{ "git -c a.b=c --no-pager worktree add x", "x", "/w" },
	/* Not read: left to git. */
	{ "git worktree add -f x", NULL, "/w" },
	{ "git worktree add --force x", NULL, "/w" },
	{ "git worktree add --unknown x", NULL, "/w" },
	{ "git worktree add", NULL, "/w" },
	{ "git worktree add -b", NULL, "/w" },
	{ "git worktree list", NULL, "/w" },
	{ "git wt add x", NULL, "/w" },
	{ "git --git-dir=/r worktree add x", NULL, "/w" },
	{ "gitx worktree add x", NULL, "/w" },
	{ "sh worktree add x", NULL, "/w" },
};

/* Each command line of the table, split, and what it names. */
static void
test_wtadd_path(void **state)
{
	const struct wt_case	*c;
	const char		*got;
	char			 buf[256], dir[256], *argv[32], *tok, *save;
	size_t			 i;
	int			 argc;

	(void)state;
	for (i = 0; i < sizeof(wt_cases) / sizeof(*wt_cases); i++) {
		c = &wt_cases[i];
		snprintf(buf, sizeof(buf), "%s", c->line);
		argc = 0;
		for (tok = strtok_r(buf, " ", &save); tok != NULL && argc < 32;
		    tok = strtok_r(NULL, " ", &save))
			argv[argc++] = tok;
		snprintf(dir, sizeof(dir), "/w");
		got = guard_wtadd_path(argv, argc, dir, sizeof(dir));
		if (c->path == NULL ? got != NULL : got == NULL ||
		    strcmp(got, c->path) != 0)
			fail_msg("case %zu (%s): got %s, want %s", i, c->line,
			    got != NULL ? got : "NULL",
			    c->path != NULL ? c->path : "NULL");
		if (c->path != NULL && strcmp(dir, c->dir) != 0)
			fail_msg("case %zu (%s): directory %s, want %s", i,
			    c->line, dir, c->dir);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wtadd_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
