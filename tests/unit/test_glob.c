/*
 * glob_compile, glob_match, glob_match_below, glob_match_all_below,
 * glob_base, glob_text: a table of patterns with paths that match and
 * paths that do not, the errors malformed patterns get, and the
 * walk-pruning answers.  The working directory is /w and the home
 * directory /h throughout.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"

#define CWD	"/w"
#define HOME	"/h"

/* A path and whether it is a directory ("/" suffix in the table). */
struct glob_case {
	const char	*pattern;
	const char	*text;		/* glob_text */
	const char	*base;		/* glob_base */
	const char	*yes[8];	/* trailing "/": a directory */
	const char	*no[8];
};

static const struct glob_case glob_cases[] = {
	{ "**/.env", "/w/**/.env", "/w",
	    { "/w/.env", "/w/sub/.env", "/w/a/b/c/.env", "/w/.env/" },
	    { "/w/.env.local", "/x/.env", "/w/sub/.envx", "/w/sub/x.env",
	      "/.env", "/w" } },
	{ "*.pem", "/w/*.pem", "/w",
	    { "/w/key.pem", "/w/.pem", "/w/a.b.pem" },
	    { "/w/sub/key.pem", "/w/key.pem.bak", "/w/keypem", "/key.pem" } },
	{ ".env.*", "/w/.env.*", "/w",
	    { "/w/.env.local", "/w/.env." },
	    { "/w/.env", "/w/sub/.env.local", "/w/x.env.local" } },
	{ "dir/**", "/w/dir/**", "/w/dir",
	    { "/w/dir/x", "/w/dir/a/b", "/w/dir/.hidden/", "/w/dir/a/" },
	    { "/w/dir", "/w/dir/", "/w/dirx/y", "/w/di/r" } },
	{ "**", "/w/**", "/w",
	    { "/w/x", "/w/a/b/c", "/w/.git/" },
	    { "/w", "/", "/x" } },
	{ "src/**/*.ts", "/w/src/**/*.ts", "/w/src",
	    { "/w/src/a.ts", "/w/src/x/y/a.ts", "/w/src/.ts" },
	    { "/w/src/a.tsx", "/w/a.ts", "/w/src", "/w/srcx/a.ts" } },
	{ "a/**/b", "/w/a/**/b", "/w/a",
	    { "/w/a/b", "/w/a/x/b", "/w/a/x/y/b" },
	    { "/w/a/b/c", "/w/b", "/w/a/bb" } },
	{ "~/.ssh/id_*", "/h/.ssh/id_*", "/h/.ssh",
	    { "/h/.ssh/id_rsa", "/h/.ssh/id_", "/h/.ssh/id_ed25519.pub" },
	    { "/h/.ssh/known_hosts", "/w/.ssh/id_rsa", "/h/.ssh/x/id_rsa" } },
	{ "~/**", "/h/**", "/h",
	    { "/h/x", "/h/a/b/" },
	    { "/h", "/w/x" } },
	{ "/etc/*.conf", "/etc/*.conf", "/etc",
	    { "/etc/a.conf", "/etc/.conf" },
	    { "/etc/a/b.conf", "/w/etc/a.conf" } },
	{ "file?.txt", "/w/file?.txt", "/w",
	    { "/w/file1.txt", "/w/file\xc3\xa9.txt", "/w/file\xff.txt" },
	    { "/w/file10.txt", "/w/file.txt", "/w/file\xc3\xa9\xc3\xa9.txt" } },
	{ "file[0-9].txt", "/w/file[0-9].txt", "/w",
	    { "/w/file3.txt", "/w/file0.txt" },
	    { "/w/filea.txt", "/w/file33.txt", "/w/file/.txt" } },
	{ "[!a]*", "/w/[!a]*", "/w",
	    { "/w/b", "/w/.x", "/w/ba" },
	    { "/w/a", "/w/abc" } },
	{ "[^a-c]x", "/w/[^a-c]x", "/w",
	    { "/w/dx", "/w/_x" },
	    { "/w/ax", "/w/cx", "/w/\xc3\xa9x" } },
	{ "[]]x", "/w/[]]x", "/w",
	    { "/w/]x" },
	    { "/w/x", "/w/[]]x" } },
	{ "[*]", "/w/[*]", "/w",
	    { "/w/*" },
	    { "/w/a", "/w/**" } },
	{ "a\\*b?", "/w/a\\*b?", "/w",
	    { "/w/a\\xbc", "/w/a\\bc" },
	    { "/w/a*bc", "/w/axbc" } },
	{ "build/", "/w/build/", "/w",
	    { "/w/build/" },
	    { "/w/build", "/w/sub/build/" } },
	{ "**/node_modules/", "/w/**/node_modules/", "/w",
	    { "/w/node_modules/", "/w/a/node_modules/" },
	    { "/w/node_modules", "/w/a/node_modules/x/" } },
	{ "../*.pem", "/*.pem", "/",
	    { "/k.pem" },
	    { "/w/k.pem" } },
	{ "./x*/./y", "/w/x*/y", "/w",
	    { "/w/x/y", "/w/xa/y" },
	    { "/w/x/z", "/w/y" } },
	{ "a//b*", "/w/a/b*", "/w/a",
	    { "/w/a/b", "/w/a/bc" },
	    { "/w/ab" } },
	{ "**/**/x", "/w/**/x", "/w",
	    { "/w/x", "/w/a/x" },
	    { "/w/xa" } },
	{ "*/*/*", "/w/*/*/*", "/w",
	    { "/w/a/b/c" },
	    { "/w/a/b", "/w/a/b/c/d" } },
	{ "*a*b*c*", "/w/*a*b*c*", "/w",
	    { "/w/abc", "/w/xaxbxcx", "/w/aabbcc" },
	    { "/w/acb", "/w/ab" } },
};

struct glob_bad {
	const char	*pattern;
	const char	*err;
};

static const struct glob_bad glob_bad[] = {
	{ "", "empty pattern" },
	{ "a**b", "'**' only as a whole path component" },
	{ "**x/y", "'**' only as a whole path component" },
	{ "x/***", "'**' only as a whole path component" },
	{ "[abc", "unclosed '['" },
	{ "[", "unclosed '['" },
	{ "[]", "unclosed '['" },
	{ "[!]", "unclosed '['" },
	{ "[z-a]", "reversed range" },
	{ "[a/b]", "a set never holds '/'" },
	{ "[a-/]", "unclosed '['" },
	{ "[a-\xc3\xa9]", "only ASCII" },
	{ "[\xc3\xa9]", "only ASCII" },
	{ "*/../x", "'..' after a wildcard" },
	{ "**/..", "'..' after a wildcard" },
};

/* "/x/" -> ("/x", 1); "/x" -> ("/x", 0). */
static int
glob_path(const char *in, char *out, size_t len)
{
	size_t	 n = strlen(in);

	snprintf(out, len, "%s", in);
	if (n > 1 && in[n - 1] == '/') {
		out[n - 1] = '\0';
		return 1;
	}
	return 0;
}

static void
test_glob_table(void **state)
{
	const struct glob_case	*c;
	struct glob		*g;
	const char		*err;
	char			 p[512];
	size_t			 i, j;
	int			 dir, bad = 0;

	(void)state;
	for (i = 0; i < sizeof(glob_cases) / sizeof(*glob_cases); i++) {
		c = &glob_cases[i];
		if ((g = glob_compile(c->pattern, CWD, HOME, &err)) == NULL) {
			print_error("%s: %s\n", c->pattern, err);
			bad++;
			continue;
		}
		if (strcmp(glob_text(g), c->text) != 0 ||
		    strcmp(glob_base(g), c->base) != 0) {
			print_error("%s: text %s base %s, want %s %s\n",
			    c->pattern, glob_text(g), glob_base(g), c->text,
			    c->base);
			bad++;
		}
		for (j = 0; j < 8 && c->yes[j] != NULL; j++) {
			dir = glob_path(c->yes[j], p, sizeof(p));
			if (!glob_match(g, p, dir)) {
				print_error("%s: should match %s\n",
				    c->pattern, c->yes[j]);
				bad++;
			}
		}
		for (j = 0; j < 8 && c->no[j] != NULL; j++) {
			dir = glob_path(c->no[j], p, sizeof(p));
			if (glob_match(g, p, dir)) {
				print_error("%s: should not match %s\n",
				    c->pattern, c->no[j]);
				bad++;
			}
		}
		glob_free(g);
	}
	assert_int_equal(bad, 0);
}

static void
test_glob_errors(void **state)
{
	const char	*err;
	size_t		 i;
	int		 bad = 0;

	(void)state;
	for (i = 0; i < sizeof(glob_bad) / sizeof(*glob_bad); i++) {
		err = NULL;
		if (glob_check(glob_bad[i].pattern, &err) != -1 ||
		    err == NULL || strstr(err, glob_bad[i].err) == NULL) {
			print_error("%s: want error \"%s\", got %s\n",
			    glob_bad[i].pattern, glob_bad[i].err,
			    err != NULL ? err : "none");
			bad++;
		}
	}
	assert_int_equal(bad, 0);
	/* Anchors must be there and absolute. */
	assert_null(glob_compile("~/x*", CWD, NULL, &err));
	assert_non_null(strstr(err, "home"));
	assert_null(glob_compile("x*", NULL, HOME, &err));
	assert_null(glob_compile("x*", "rel", HOME, &err));
	assert_null(glob_compile("~user*", "rel", HOME, &err));
}

/* A pattern, a directory, and what a question about it should answer. */
struct dir_case {
	const char	*pattern;
	const char	*dir;
	int		 want;
};

/* Ask fn about each case; the mismatches, said. */
static int
dir_cases(const struct dir_case *c, size_t n,
    int (*fn)(const struct glob *, const char *), const char *what)
{
	struct glob	*g;
	const char	*err;
	size_t		 i;
	int		 bad = 0;

	for (i = 0; i < n; i++) {
		g = glob_compile(c[i].pattern, CWD, HOME, &err);
		assert_non_null(g);
		if (fn(g, c[i].dir) != c[i].want) {
			print_error("%s %s %s: want %d\n", c[i].pattern, what,
			    c[i].dir, c[i].want);
			bad++;
		}
		glob_free(g);
	}
	return bad;
}

/* The walk asks whether anything below a directory can still match. */
static void
test_glob_below(void **state)
{
	static const struct dir_case cases[] = {
		{ "**/.env", "/", 1 },
		{ "**/.env", "/w", 1 },
		{ "**/.env", "/w/a/b", 1 },
		{ "**/.env", "/x", 0 },
		{ "**/.env", "/wx", 0 },
		{ "src/*.ts", "/w", 1 },
		{ "src/*.ts", "/w/src", 1 },
		{ "src/*.ts", "/w/src/sub", 0 },
		{ "src/*.ts", "/w/lib", 0 },
		{ "dir/**", "/w/dir", 1 },
		{ "dir/**", "/w/dir/a/b", 1 },
		{ "dir/**", "/w/other", 0 },
		{ "*.pem", "/w/sub", 0 },
		{ "*/x", "/w/anything", 1 },
		{ "*/x", "/w/a/x", 0 },
	};

	(void)state;
	assert_int_equal(dir_cases(cases, sizeof(cases) / sizeof(*cases),
	    glob_match_below, "below"), 0);
}

/*
 * Whether everything below a directory matches, so the walk takes the
 * directory whole: only a "*" once and "**" at least once may remain.
 */
static void
test_glob_all_below(void **state)
{
	static const struct dir_case cases[] = {
		{ "dir/**", "/w/dir", 1 },
		{ "dir/**", "/w/dir/a", 1 },
		{ "dir/**", "/w", 0 },
		{ "dir/**", "/w/other", 0 },
		{ "**/secrets/**", "/w/a/b/secrets", 1 },
		{ "**/secrets/**", "/w/a/b", 0 },
		{ "**/secrets/**", "/w/secretsx", 0 },
		{ "dir/**/*", "/w/dir", 1 },
		{ "dir/*", "/w/dir", 0 },		/* one level only */
		{ "dir/*/**", "/w/dir", 0 },		/* two or more */
		{ "dir/*/**", "/w/dir/a", 1 },
		{ "dir/**/", "/w/dir", 0 },		/* directories only */
		{ "dir/**/*.pem", "/w/dir", 0 },
		{ "**", "/w", 1 },
		{ "**", "/x", 0 },
		{ "~/**", "/h", 1 },
	};

	(void)state;
	assert_int_equal(dir_cases(cases, sizeof(cases) / sizeof(*cases),
	    glob_match_all_below, "all below"), 0);
}

/* What is and is not a pattern; relative paths never match. */
static void
test_glob_misc(void **state)
{
	struct glob	*g;
	const char	*err;

	(void)state;
	assert_true(glob_is_pattern("**/.env"));
	assert_true(glob_is_pattern("a?"));
	assert_true(glob_is_pattern("[ab]"));
	assert_false(glob_is_pattern("/etc/a]b"));
	assert_false(glob_is_pattern("~/.ssh"));
	assert_false(glob_is_pattern("a\\b"));

	assert_non_null(g = glob_compile("*", CWD, HOME, &err));
	assert_false(glob_match(g, "w/x", 0));
	assert_false(glob_match(g, "", 0));
	assert_true(glob_match(g, "/w/x", 0));
	assert_false(glob_match_below(g, "w"));
	glob_free(g);

	/* Deep paths and many components stay bounded. */
	assert_non_null(g = glob_compile("**/a/**/b/**/c", CWD, HOME, &err));
	assert_true(glob_match(g, "/w/x/a/y/y/y/b/c", 0));
	assert_false(glob_match(g, "/w/x/a/y/y/y/c/b", 0));
	glob_free(g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glob_table),
		cmocka_unit_test(test_glob_errors),
		cmocka_unit_test(test_glob_below),
		cmocka_unit_test(test_glob_all_below),
		cmocka_unit_test(test_glob_misc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
