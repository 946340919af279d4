/*
 * launcher/git/gitnew.c: which settings of a git config a fresh clone
 * has not (the allow list, names ignoring case, subsections), which lines
 * are named by number because git could read them otherwise (a key on
 * a section's line, old [a.b] sections, escapes, a NUL byte, a key
 * before any section), and the cap on what is named.  gitstate.c: which
 * lines of a stopped rebase's or cherry-pick's state would run more than
 * git on --continue (todo commands, strategies, sequencer/opts, apply
 * options, links).  gitnew_check of a linked worktree's .git file: not
 * named only when it is exactly what git worktree add writes.
 */
#include <sys/stat.h>

#include <fcntl.h>
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
#include "launcher/git/git.h"

struct conf_case {
	const char	*text;
	const char	*want;		/* what is named, "" for nothing */
};

static const struct conf_case conf_cases[] = {
	/* What git init and git clone write. */
	{ "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n"
	  "\tbare = false\n\tlogallrefupdates = true\n"
	  "[remote \"origin\"]\n\turl = https://example.invalid/r.git\n"
	  "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
	  "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n",
	  "" },
	{ "# a comment\n; another\n\n[CORE]\r\n  Bare=false ; no\r\n", "" },
	{ "[extensions]\n\tobjectFormat = sha256\n[core]\n\tsymlinks\n", "" },
	{ "[remote \"o\"]\n\tpromisor = true\n\tpartialclonefilter = blob:none\n"
	  "[submodule \"lib\"]\n\turl = ../lib\n\tactive = true\n", "" },
	{ "", "" },
	/* Keys that run code, or anything else. */
	{ "[core]\n\tfsmonitor = touch x\n", "c core.fsmonitor" },
	{ "[Core]\n\tSSHCommand = x\n", "c Core.SSHCommand" },
	{ "[core]\nhooksPath=/x\n", "c core.hooksPath" },
	{ "[remote \"origin\"]\n\tuploadpack = x\n",
	  "c remote.origin.uploadpack" },
	{ "[submodule \"x\"]\n\tupdate = !sh\n", "c submodule.x.update" },
	{ "[filter \"lfs\"]\n\tsmudge = x\n", "c filter.lfs.smudge" },
	{ "[include]\n\tpath = ../../x\n", "c include.path" },
	{ "[user]\n\tname = t\n", "c user.name" },
	/* An allowed key in the wrong place. */
	{ "[core \"x\"]\n\tbare = true\n", "c core.x.bare" },
	{ "[remote]\n\turl = x\n", "c remote.url" },
	/* Lines git may read otherwise: named by number. */
	{ "[core] fsmonitor = x\n", "c line 1" },
	{ "[core]\n[core.x]\n\tbare = true\n", "c line 2, c line 3" },
	{ "[remote \"a\\\"b\"]\n\turl = x\n", "c line 1, c line 2" },
	{ "bare = true\n", "c line 1" },
	{ "[core]\n\t-x = 1\n", "c line 2" },
	{ "[core]\n\tbare x\n", "c line 2" },
	{ "[remote \"o\"\n", "c line 1" },
	{ "[core]\n\tbare = true\n\0[core]\n\tfsmonitor = x\n", "c (a NUL byte)" },
	/* Names from the file reach the terminal escaped. */
	{ "[remote \"\x1b[2J\"]\n\tvcs = x\n", "c remote.?[2J.vcs" },
	/* At most six named, then "...". */
	{ "[a]\nb\nc\nd\ne\nf\ng\nh\n",
	  "c a.b, c a.c, c a.d, c a.e, c a.f, c a.g, ..." },
};

static void
test_gitnew_config(void **state)
{
	struct gitnew_found	 f;
	const struct conf_case	*c;
	size_t			 i, len;

	(void)state;
	for (i = 0; i < sizeof(conf_cases) / sizeof(*conf_cases); i++) {
		c = &conf_cases[i];
		len = strlen(c->text);
		/* The NUL case: the text goes on after it. */
		if (strstr(c->want, "NUL") != NULL)
			len += 1 + strlen(c->text + len + 1);
		gitnew_found_init(&f);
		gitnew_config(c->text, len, "c", &f);
		if (strcmp(f.text, c->want) != 0)
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, f.text,
			    c->want);
		assert_int_equal(f.n == 0, c->want[0] == '\0');
	}
}

static const struct conf_case todo_cases[] = {
	/* A rebase stopped on a conflict, every command that runs only git. */
	{ "pick 1a2b3c4 one\np 1a2b3c4\nreword 1 r\nr 1\nedit 1\ne 1\n"
	  "squash 1\ns 1\nfixup -C 1\nf 1\ndrop 1\nd 1\nbreak\nb\n"
	  "label onto\nl x\nreset onto\nt x\nmerge -C 1 x # m\n"
	  "m -c 1 y\nupdate-ref refs/heads/x\nu refs/heads/y\nnoop\n"
	  "revert 1\n", "" },
	{ "# comment\n\n   \t\n\tpick 1\r\n#exec x\n", "" },
	{ "", "" },
	/* What runs a program, or could. */
	{ "pick 1\nexec touch /tmp/x\n", "t line 2 \"exec touch /tmp/x\"" },
	{ "  x make\n", "t line 1 \"x make\"" },
	{ "exec\tsh\n", "t line 1 \"exec?sh\"" },
	{ "EXEC sh\n", "t line 1 \"EXEC sh\"" },
	{ "picky 1\n", "t line 1 \"picky 1\"" },
	{ "pick\x1b[2J 1\n", "t line 1 \"pick?[2J 1\"" },
};

/* gitstate_todo: the todo commands allowed, the rest named by line. */
static void
test_gitstate_todo(void **state)
{
	struct gitnew_found	 f;
	const struct conf_case	*c;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(todo_cases) / sizeof(*todo_cases); i++) {
		c = &todo_cases[i];
		gitnew_found_init(&f);
		gitstate_todo(c->text, strlen(c->text), "t", &f);
		if (strcmp(f.text, c->want) != 0)
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, f.text,
			    c->want);
	}
}

struct state_case {
	const char	*dir;
	const char	*file;
	const char	*text;		/* NULL: a symbolic link to "x" */
	const char	*want;
};

static const struct state_case state_cases[] = {
	{ "rebase-merge", "strategy", "ort\n", "" },
	{ "rebase-merge", "strategy", "octopus", "" },
	{ "rebase-merge", "strategy", "evil\n",
	  "strategy \"evil\" (git runs git-merge-evil from PATH)" },
	{ "rebase-merge", "strategy_opts", " '--theirs'", "" },
	{ "rebase-merge", "done", "exec sh\n", "" },
	{ "rebase-merge", "git-rebase-todo", NULL,
	  "git-rebase-todo (a symbolic link)" },
	{ "rebase-apply", "apply-opt", " '--whitespace=fix' '-C1'", "" },
	{ "rebase-apply", "apply-opt", " '--build-fake-ancestor=/x'",
	  "apply-opt \" '--build-fake-ancestor=/x'\"" },
	{ "rebase-apply", "strategy", "x", "strategy \"x\" (git runs "
	  "git-merge-x from PATH)" },
	{ "sequencer", "todo", "pick 1\npick 2\n", "" },
	{ "sequencer", "todo", "exec x\n", "todo line 1 \"exec x\"" },
	{ "sequencer", "opts", "[options]\n\tsigned-off = true\n",
	  "opts line 2 \"signed-off = true\"" },
	{ "sequencer", "opts", "[options]\n\tsignoff = true\n"
	  "\tstrategy = recursive\n\tstrategy-option = theirs\n", "" },
	{ "sequencer", "opts", "[options]\n\tstrategy = x\n",
	  "opts line 2 \"x\" (git runs git-merge-x from PATH)" },
	{ "sequencer", "opts", "[options]\n\tstrategy = \"x\"\n",
	  "opts line 2 \"strategy = \"x\"\"" },
	{ "sequencer", "opts", "[include]\n\tpath = /x\n",
	  "opts line 1 \"[include]\", opts line 2 \"path = /x\"" },
};

/* gitstate_check on files: each state directory's files, links. */
static void
test_gitstate_check(void **state)
{
	const struct state_case	*c;
	struct gitnew_found	 f;
	char			 top[] = "/tmp/test_gitstate.XXXXXX";
	char			 dir[256], file[300], other[300];
	FILE			*fp;
	size_t			 i;

	(void)state;
	assert_non_null(mkdtemp(top));
	for (i = 0; i < sizeof(state_cases) / sizeof(*state_cases); i++) {
		c = &state_cases[i];
		snprintf(dir, sizeof(dir), "%s/%zu", top, i);
		assert_int_equal(mkdir(dir, 0700), 0);
		snprintf(dir, sizeof(dir), "%s/%zu/%s", top, i, c->dir);
		assert_int_equal(mkdir(dir, 0700), 0);
		snprintf(file, sizeof(file), "%s/%s", dir, c->file);
		if (c->text == NULL)
			assert_int_equal(symlink("x", file), 0);
		else {
			assert_non_null(fp = fopen(file, "w"));
			fputs(c->text, fp);
			fclose(fp);
		}
		gitnew_found_init(&f);
		assert_int_equal(gitstate_check(dir, &f), c->want[0] != '\0');
		if (strcmp(f.text, c->want) != 0)
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, f.text,
			    c->want);
		unlink(file);
		rmdir(dir);
		*strrchr(dir, '/') = '\0';
		rmdir(dir);
	}
	/* A hard link's other name could change it later. */
	snprintf(dir, sizeof(dir), "%s/sequencer", top);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(file, sizeof(file), "%s/todo", dir);
	assert_non_null(fp = fopen(file, "w"));
	fclose(fp);
	snprintf(other, sizeof(other), "%s/other", top);
	assert_int_equal(link(file, other), 0);
	gitnew_found_init(&f);
	assert_int_equal(gitstate_check(dir, &f), 1);
	assert_string_equal(f.text, "todo (has other hard links)");
	/* Gone: nothing to say; a link in its place: named. */
	unlink(file);
	rmdir(dir);
	gitnew_found_init(&f);
	assert_int_equal(gitstate_check(dir, &f), 0);
	assert_int_equal(symlink(top, dir), 0);
	assert_int_equal(gitstate_check(dir, &f), 1);
	assert_string_equal(f.text, "sequencer (a symbolic link)");
	unlink(dir);
	unlink(other);
	assert_int_equal(rmdir(top), 0);
}

/* Write text to path (NULL: remove it). */
static void
put(const char *path, const char *text)
{
	FILE	*fp;

	if (text == NULL) {
		(void)unlink(path);
		return;
	}
	assert_non_null(fp = fopen(path, "w"));
	fputs(text, fp);
	fclose(fp);
}

/*
 * A worktree's .git file: "gitdir: COMMON/worktrees/W" with commondir
 * "../.." and nothing of its own is not named; any other commondir, a
 * config.worktree, hooks, a relative or linked gitdir, extra text is.
 */
static void
test_gitnew_worktree(void **state)
{
	struct gitnew_found	 f;
	char			 top[] = "/tmp/test_gitwt.XXXXXX";
	char			 p[512], wt[256], ent[256], line[600];
	const char		*named = ".git (a file naming another git directory)";
	int			 fd;

	(void)state;
	assert_non_null(mkdtemp(top));
	snprintf(p, sizeof(p), "%s/.git", top);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/.git/worktrees", top);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(ent, sizeof(ent), "%s/.git/worktrees/wt", top);
	assert_int_equal(mkdir(ent, 0700), 0);
	snprintf(wt, sizeof(wt), "%s/wt", top);
	assert_int_equal(mkdir(wt, 0700), 0);
	snprintf(p, sizeof(p), "%s/commondir", ent);
	put(p, "../..\n");
	snprintf(p, sizeof(p), "%s/.git", wt);
	snprintf(line, sizeof(line), "gitdir: %s\n", ent);
	put(p, line);
	assert_true((fd = open(wt, O_RDONLY | O_DIRECTORY)) != -1);

	gitnew_found_init(&f);
	gitnew_check(fd, 0, &f);
	assert_int_equal(f.n, 0);

	/* Another commondir. */
	snprintf(p, sizeof(p), "%s/commondir", ent);
	put(p, "/elsewhere\n");
	gitnew_found_init(&f);
	gitnew_check(fd, 0, &f);
	assert_string_equal(f.text, named);
	put(p, "../..\n");

	/* Files of its own git would read. */
	snprintf(p, sizeof(p), "%s/config.worktree", ent);
	put(p, "[core]\n\tfsmonitor = x\n");
	gitnew_found_init(&f);
	gitnew_check(fd, 0, &f);
	assert_string_equal(f.text, named);
	put(p, NULL);
	snprintf(p, sizeof(p), "%s/hooks", ent);
	assert_int_equal(mkdir(p, 0700), 0);
	gitnew_found_init(&f);
	gitnew_check(fd, 0, &f);
	assert_string_equal(f.text, named);
	assert_int_equal(rmdir(p), 0);

	/* A relative gitdir, extra text, a path through a link. */
	snprintf(p, sizeof(p), "%s/.git", wt);
	put(p, "gitdir: ../.git/worktrees/wt\n");
	gitnew_found_init(&f);
	gitnew_check(fd, 0, &f);
	assert_string_equal(f.text, named);
	snprintf(line, sizeof(line), "gitdir: %s\nx\n", ent);
	put(p, line);
	gitnew_found_init(&f);
	gitnew_check(fd, 0, &f);
	assert_string_equal(f.text, named);
	snprintf(line, sizeof(line), "%s/link", top);
	assert_int_equal(symlink(".git", line), 0);
	snprintf(line, sizeof(line), "gitdir: %s/link/worktrees/wt\n", top);
	put(p, line);
	gitnew_found_init(&f);
	gitnew_check(fd, 0, &f);
	assert_string_equal(f.text, named);
	/* Not an entry under worktrees/. */
	snprintf(line, sizeof(line), "gitdir: %s/.git\n", top);
	put(p, line);
	gitnew_found_init(&f);
	gitnew_check(fd, 0, &f);
	assert_string_equal(f.text, named);

	close(fd);
	put(p, NULL);
	snprintf(p, sizeof(p), "%s/link", top);
	put(p, NULL);
	snprintf(p, sizeof(p), "%s/commondir", ent);
	put(p, NULL);
	assert_int_equal(rmdir(ent), 0);
	assert_int_equal(rmdir(wt), 0);
	snprintf(p, sizeof(p), "%s/.git/worktrees", top);
	assert_int_equal(rmdir(p), 0);
	snprintf(p, sizeof(p), "%s/.git", top);
	assert_int_equal(rmdir(p), 0);
	assert_int_equal(rmdir(top), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gitnew_config),
		cmocka_unit_test(test_gitstate_todo),
		cmocka_unit_test(test_gitstate_check),
		cmocka_unit_test(test_gitnew_worktree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
