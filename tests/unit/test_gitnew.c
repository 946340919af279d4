/*
 * launcher/gitnew.c: which settings of a git config a fresh clone has
 * not (the allow list, names ignoring case, subsections), which lines
 * are named by number because git could read them otherwise (a key on
 * a section's line, old [a.b] sections, escapes, a NUL byte, a key
 * before any section), and the cap on what is named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"
#include "launcher/launcher.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gitnew_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
