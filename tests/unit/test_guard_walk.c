/*
 * The guard's pure parts (launcher/guard/walk.c), which the end-to-end
 * scenarios (run-guard*) reach only through a sandboxed command:
 * guard_lexical, the path the kernel would walk to when no component is
 * a symlink, and guard_last, the last component as every check reads it
 * (trailing slashes gone).  Tables of cases; no caller process needed.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "launcher/guard/guard_int.h"

struct lexical_case {
	const char	*base;
	const char	*dir;
	size_t		 size;		/* of out; 0: PATH_MAX */
	int		 rc;
	const char	*want;		/* with rc 0 */
};

struct last_case {
	const char	*name;
	int		 rc;
	const char	*want;		/* with rc 0 */
	int		 dots;
};

static void	 test_lexical(void **);
static void	 test_last(void **);
static void	 test_last_long(void **);

static const struct lexical_case lexical_cases[] = {
	{ "/", "", 0, 0, "/" },
	{ "/", "a/b", 0, 0, "/a/b" },
	{ "/a/b", "", 0, 0, "/a/b" },
	{ "/a/b/", "c", 0, 0, "/a/b/c" },
	{ "/a/b//", "c", 0, 0, "/a/b/c" },
	{ "//", "a", 0, 0, "/a" },
	{ "/a", "./b/./c", 0, 0, "/a/b/c" },
	{ "/a", "b//c/", 0, 0, "/a/b/c" },
	{ "/a", "/b", 0, 0, "/a/b" },		/* joined, never restarted */
	{ "/a/b", "..", 0, 0, "/a" },
	{ "/a/b", "../..", 0, 0, "/" },
	{ "/a", "../../..", 0, 0, "/" },	/* ".." of "/" is "/" */
	{ "/", "..", 0, 0, "/" },
	{ "/a/b", "../c/../d", 0, 0, "/a/d" },
	{ "/a", "b/../../c", 0, 0, "/c" },
	{ "/a", ".", 0, 0, "/a" },
	{ "/a", "...", 0, 0, "/a/..." },	/* a name, not a step */
	{ "/a", "..b/.c", 0, 0, "/a/..b/.c" },
	/* Too long for out: never a prefix. */
	{ "/abcd", "", 5, -ENAMETOOLONG, NULL },
	{ "/abc", "", 5, 0, "/abc" },
	{ "/a", "bc", 6, 0, "/a/bc" },
	{ "/a", "bc", 5, -ENAMETOOLONG, NULL },
	{ "/a", "bcd", 5, -ENAMETOOLONG, NULL },
	{ "/", "abcd", 5, -ENAMETOOLONG, NULL },
	{ "/", "abc", 5, 0, "/abc" },
	{ "/a", "bcd/..", 5, -ENAMETOOLONG, NULL },
	{ "/a", "../bcd", 5, 0, "/bcd" },
};

static const struct last_case last_cases[] = {
	{ "a", 0, "a", 0 },
	{ ".git", 0, ".git", 0 },
	{ ".git/", 0, ".git", 0 },
	{ ".git//", 0, ".git", 0 },
	{ "/", 0, "/", 0 },
	{ "//", 0, "/", 0 },
	{ ".", 0, ".", 1 },
	{ "./", 0, ".", 1 },
	{ "..", 0, "..", 1 },
	{ "../", 0, "..", 1 },
	{ "...", 0, "...", 0 },
	{ ".a", 0, ".a", 0 },
	{ "", 0, "", 0 },
};

static void
test_lexical(void **state)
{
	const struct lexical_case	*c;
	char				 out[PATH_MAX];
	size_t				 i;
	int				 rc;

	(void)state;
	for (i = 0; i < sizeof(lexical_cases) / sizeof(*lexical_cases); i++) {
		c = &lexical_cases[i];
		memset(out, 'x', sizeof(out));
		rc = guard_lexical(c->base, c->dir, out,
		    c->size != 0 ? c->size : sizeof(out));
		if (rc != c->rc || (rc == 0 && strcmp(out, c->want) != 0))
			fail_msg("guard_lexical(\"%s\", \"%s\", %zu): %d \"%s\", "
			    "want %d \"%s\"", c->base, c->dir, c->size, rc,
			    rc == 0 ? out : "", c->rc,
			    c->want != NULL ? c->want : "");
	}
}

static void
test_last(void **state)
{
	const struct last_case	*c;
	char			 last[NAME_MAX + 1];
	size_t			 i;
	int			 rc, dots;

	(void)state;
	for (i = 0; i < sizeof(last_cases) / sizeof(*last_cases); i++) {
		c = &last_cases[i];
		dots = -1;
		rc = guard_last(c->name, last, sizeof(last), &dots);
		if (rc != c->rc || (rc == 0 && (strcmp(last, c->want) != 0 ||
		    dots != c->dots)))
			fail_msg("guard_last(\"%s\"): %d \"%s\" dots %d, want "
			    "%d \"%s\" dots %d", c->name, rc, rc == 0 ? last :
			    "", dots, c->rc, c->want, c->dots);
	}
}

/* NAME_MAX bytes fit, one more does not; trailing slashes do not count. */
static void
test_last_long(void **state)
{
	char	name[NAME_MAX + 8], last[NAME_MAX + 1];
	int	dots;

	(void)state;
	memset(name, 'n', NAME_MAX);
	name[NAME_MAX] = '\0';
	assert_int_equal(guard_last(name, last, sizeof(last), &dots), 0);
	assert_int_equal(strlen(last), NAME_MAX);
	strcat(name, "//");
	assert_int_equal(guard_last(name, last, sizeof(last), &dots), 0);
	assert_int_equal(strlen(last), NAME_MAX);
	name[NAME_MAX] = 'n';
	name[NAME_MAX + 1] = '\0';
	assert_int_equal(guard_last(name, last, sizeof(last), &dots),
	    -ENAMETOOLONG);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lexical),
		cmocka_unit_test(test_last),
		cmocka_unit_test(test_last_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
