/*
 * The filtered copies of settings files (launcher/fs/fsfilter*.c), as tables
 * of input and expected output: a git config keeps its allowed sections
 * and loses every credential (a URL with a user or password, an
 * Authorization header, http's other keys, credential, sendemail,
 * unknown sections), reads git's syntax as git does (quotes, escapes,
 * continuation lines, [a.b], a key on the header's line, CRLF) and
 * refuses what git refuses; includes point at their copies; what it
 * writes reads back the same.  go's env file loses the settings with a
 * credential; a mise config keeps [tools] and [alias]/[tool_alias].
 * fsfilter_copy makes the copies of a file and its includes.
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
#include "launcher/fs/fs.h"

struct filter_case {
	const char	*in;
	const char	*want;		/* NULL: not read (an error) */
	const char	*dropped;	/* NULL: nothing */
};

static const struct filter_case git_cases[] = {
	/* The identity and the aliases stay; credentials go. */
	{ "[user]\n\tname = Dev Eloper\n\temail = d@example.invalid\n"
	  "[credential]\n\thelper = store\n",
	  "[user]\n\tname = \"Dev Eloper\"\n\temail = \"d@example.invalid\"\n",
	  "credential.helper" },
	{ "[alias]\n\tst = status\n\tpub = \"!git push "
	  "https://TOKEN@github.com/x/y\"\n",
	  "[alias]\n\tst = \"status\"\n", "alias.pub" },
	{ "[alias]\n\tcurl = !curl -H 'Authorization: Bearer x' u\n", "",
	  "alias.curl" },
	/* An '@' after the host is no user: kept. */
	{ "[alias]\n\tw = !open https://host/a@b\n",
	  "[alias]\n\tw = \"!open https://host/a@b\"\n", NULL },
	/* url: a token in the rewritten base, or in the value. */
	{ "[url \"https://x-access-token:T@github.com/\"]\n"
	  "\tinsteadOf = https://github.com/\n"
	  "[url \"git@github.com:\"]\n\tpushInsteadOf = https://github.com/\n"
	  "[URL \"https://a/\"]\n\tinsteadOf = https://u:p@b/\n",
	  "[url \"git@github.com:\"]\n\tpushinsteadof = \"https://github.com/\"\n",
	  "url.insteadof" },
	/* http: only its harmless keys, in any subsection. */
	{ "[http]\n\textraHeader = Authorization: Basic eA==\n"
	  "\tsslVerify = false\n\tcookieFile = ~/.c\n"
	  "[http \"https://corp/\"]\n\tproxy = http://u:p@px:3128\n"
	  "\tsslCAInfo = /etc/corp.pem\n",
	  "[http]\n\tsslverify = \"false\"\n[http \"https://corp/\"]\n"
	  "\tsslcainfo = \"/etc/corp.pem\"\n",
	  "http.extraheader, http.cookiefile, http.proxy" },
	/* Sections not on the list. */
	{ "[sendemail]\n\tsmtpPass = p\n[github]\n\ttoken = t\n"
	  "[remote \"origin\"]\n\turl = https://x/\n", "",
	  "sendemail.smtppass, github.token, remote.url" },
	/* git's syntax. */
	{ "# c\n; c\n[core] editor = vim # the editor\n",
	  "[core]\n\teditor = \"vim\"\n", NULL },
	{ "[core]\n\tbare\n\tpager = less \\\n  -R\n",
	  "[core]\n\tbare\n\tpager = \"less   -R\"\n", NULL },
	{ "[core]\n\tcomment = \"a;b\" \"c\\\"d\" \\t\\n # x\n",
	  "[core]\n\tcomment = \"a;b c\\\"d \\t\\n\"\n", NULL },
	{ "[branch.Main]\n\tremote = origin\n",
	  "[branch.main]\n\tremote = \"origin\"\n", NULL },
	{ "[branch \"Ma\\\"in\"]\n\tremote = origin\n",
	  "[branch \"Ma\\\"in\"]\n\tremote = \"origin\"\n", NULL },
	{ "\xef\xbb\xbf[user]\r\n\tname = x\r\n",
	  "[user]\n\tname = \"x\"\n", NULL },
	{ "", "", NULL },
	/* What git refuses, refused: nothing is shown. */
	{ "name = x\n", NULL, NULL },
	{ "[user]\n\tname = \"x\n", NULL, NULL },
	{ "[user]\n\tname = a\\q\n", NULL, NULL },
	{ "[user \"x]\n", NULL, NULL },
	{ "[us er]\n", NULL, NULL },
	{ "[user]\n\tna me = x\n", NULL, NULL },
	{ "[user]\n\t1name = x\n", NULL, NULL },
	{ "[user\n", NULL, NULL },
	{ "[]\n", NULL, NULL },
};

static const struct filter_case goenv_cases[] = {
	{ "GOPROXY=https://u:SECRET@goproxy.corp,direct\n"
	  "GOPRIVATE=corp.example/*\nGOFLAGS=-mod=mod\n",
	  "GOPRIVATE=corp.example/*\nGOFLAGS=-mod=mod\n", "GOPROXY" },
	{ "GONOSUMDB=x\nGOPROXY=https://proxy.golang.org", 
	  "GONOSUMDB=x\nGOPROXY=https://proxy.golang.org\n", NULL },
	{ "", "", NULL },
};

static const struct filter_case mise_cases[] = {
	{ "min_version = \"2024.1\"\n[env]\nGITHUB_TOKEN = \"s\"\n"
	  "[tools]\nnode = \"20\"\npython = [\n  \"3.11\",\n  \"3.12\",\n]\n"
	  "[settings]\nexperimental = true\n",
	  "[tools]\nnode = \"20\"\npython = [\n  \"3.11\",\n  \"3.12\",\n]\n",
	  "all tables but [tools] [alias] [tool_alias]" },
	/* A header inside a multi-line string or an array is no header. */
	{ "[env]\nK = \"\"\"\n[tools]\nsecret\n\"\"\"\nL = '''\n[tools]\n'''\n"
	  "M = [\n\"x\",\n]\n[ \"tools\" ]\n\"npm:x\" = { version = \"1\" }\n",
	  "[ \"tools\" ]\n\"npm:x\" = { version = \"1\" }\n",
	  "all tables but [tools] [alias] [tool_alias]" },
	{ "[tools.node]\nversion = \"20\" # c [x\n[[tasks]]\nrun = \"x\"\n"
	  "[tool_alias]\nnode.versions.x = \"y\"\n",
	  "[tools.node]\nversion = \"20\" # c [x\n[tool_alias]\n"
	  "node.versions.x = \"y\"\n",
	  "all tables but [tools] [alias] [tool_alias]" },
	{ "# only a comment\n\n[tools]\n", "[tools]\n", NULL },
	/* Not TOML that can be followed: nothing is shown. */
	{ "[tools]\nnode = \"20\n", NULL, NULL },
	{ "[env]\nK = \"\"\"\nopen\n", NULL, NULL },
	{ "[tools]\nx = [1,\n", NULL, NULL },
	{ "[tools]\nx = ]\n", NULL, NULL },
	{ "[\n", NULL, NULL },
};

#define JAVANET_PROXY "\n\n# pisbx-run: the sandbox's proxy\n" \
	"http.proxyHost=127.0.0.1\nhttp.proxyPort=3128\n" \
	"https.proxyHost=127.0.0.1\nhttps.proxyPort=3128\n" \
	"http.nonProxyHosts=localhost|127.*|[::1]\n"

/* A JDK's net.properties: kept whole, the proxy after it (later wins). */
static const struct filter_case javanet_cases[] = {
	{ "java.net.useSystemProxies=false\n",
	  "java.net.useSystemProxies=false\n" JAVANET_PROXY, NULL },
	/* Its own proxy is overridden, not removed; a last "\" ends. */
	{ "http.proxyHost=corp\nftp.nonProxyHosts=a|\\",
	  "http.proxyHost=corp\nftp.nonProxyHosts=a|\\" JAVANET_PROXY,
	  NULL },
	{ "", JAVANET_PROXY, NULL },
};

static const struct filter_case ini_cases[] = {
	/* npm: the registry stays, without its user; tokens go. */
	{ "registry=https://u:S3CRET@npm.corp/\n"
	  "//npm.corp/:_authToken=npm_T0KEN\n_auth = dTpw\n"
	  "@corp:registry=https://npm.corp/\nsave-exact=true\n"
	  "; a comment\nalways-auth=true\nemail=d@x\n",
	  "registry=https://npm.corp/\n@corp:registry=https://npm.corp/\n"
	  "save-exact=true\n; a comment\n",
	  "the user and password of URLs, //npm.corp/:_authToken, _auth, "
	  "always-auth, email" },
	/* pip: sections, "key: value", a value over several lines. */
	{ "[global]\nindex-url = https://__token__:pypi-X@pypi.corp/simple\n"
	  "extra-index-url =\n    https://a:b@one/simple\n"
	  "    https://two/simple\ntimeout: 60\n[install]\n"
	  "client-cert = /k.pem\n  /x\nkeyring-provider = subprocess\n"
	  "trusted-host = pypi.corp\n",
	  "[global]\nindex-url = https://pypi.corp/simple\nextra-index-url =\n"
	  "    https://one/simple\n    https://two/simple\ntimeout: 60\n"
	  "[install]\ntrusted-host = pypi.corp\n",
	  "the user and password of URLs, client-cert, keyring-provider" },
	/* An Authorization header in a value; a key with no value. */
	{ "headers = Authorization: Bearer x\nfund\n", "fund\n", "headers" },
	{ "x = see https://a/b@c\n", "x = see https://a/b@c\n", NULL },
	{ "", "", NULL },
};

static const struct {
	const char	*s;
	int		 want;
} secret_cases[] = {
	{ "https://github.com/x", 0 },
	{ "https://tok@github.com/x", 1 },
	{ "https://u:p@h", 1 },
	{ "git@github.com:x/y", 0 },
	{ "ssh://git@github.com/x", 1 },
	{ "!f() { git push https://h/a@b; }", 0 },
	{ "see https://a and https://u@b", 1 },
	{ "Authorization: Bearer x", 1 },
	{ "PRIVATE-TOKEN: x", 1 },
	{ "plain", 0 },
};

static char	top[128], rundir[PATH_MAX];
static struct fs_runfiles files = { .dir = rundir };
static size_t	nwritten;	/* of files, in rundir */

static char	*inc_cb(void *, const char *, const char *);
static void	 run_cases(const struct filter_case *, size_t, int kind);
static void	 files_write(void);
static int	 setup(void **);
static int	 teardown(void **);

/* An include callback: "keep" maps to /copy/keep, anything else out. */
static char *
inc_cb(void *arg, const char *path, const char *dir)
{
	char	*s;

	(void)arg;
	if (strcmp(path, "keep") != 0)
		return NULL;
	if (asprintf(&s, "/copy/%s/%s", dir, path) == -1)
		return NULL;
	return s;
}

/*
 * Each case through the filter kind (1 git, 2 go, 3 mise, 4 ini,
 * 5 net.properties).
 */
static void
run_cases(const struct filter_case *cases, size_t n, int kind)
{
	struct fsfilter_out	 out, again;
	size_t			 i;
	int			 rc, failed = 0;

	for (i = 0; i < n; i++) {
		memset(&out, 0, sizeof(out));
		if (kind == 1)
			rc = fsfilter_git(cases[i].in, strlen(cases[i].in),
			    inc_cb, NULL, "d", &out);
		else if (kind == 2)
			rc = fsfilter_goenv(cases[i].in, strlen(cases[i].in),
			    &out);
		else if (kind == 3)
			rc = fsfilter_mise(cases[i].in, strlen(cases[i].in),
			    &out);
		else if (kind == 4)
			rc = fsfilter_ini(cases[i].in, strlen(cases[i].in),
			    &out);
		else
			rc = fsfilter_javanet(cases[i].in,
			    strlen(cases[i].in), &out);
		if (cases[i].want == NULL) {
			if (rc != -1) {
				print_error("case %zu: read, want an error:\n"
				    "%s\n", i, out.text);
				failed++;
			}
		} else if (rc != 0 || strcmp(out.text, cases[i].want) != 0) {
			print_error("case %zu: got\n%s\nwant\n%s\n", i,
			    rc == 0 ? out.text : "(error)", cases[i].want);
			failed++;
		} else if ((cases[i].dropped == NULL) != (out.dropped ==
		    NULL) || (out.dropped != NULL &&
		    strcmp(out.dropped, cases[i].dropped) != 0)) {
			print_error("case %zu: dropped \"%s\", want \"%s\"\n",
			    i, out.dropped ? out.dropped : "",
			    cases[i].dropped ? cases[i].dropped : "");
			failed++;
		} else if (kind == 1) {
			/* What it writes is git's syntax: read back, same. */
			memset(&again, 0, sizeof(again));
			if (fsfilter_git(out.text, out.len, inc_cb, NULL, "d",
			    &again) != 0 || strcmp(again.text, out.text) != 0 ||
			    again.dropped != NULL) {
				print_error("case %zu: not read back\n", i);
				failed++;
			}
			free(again.text);
			free(again.dropped);
		}
		free(out.text);
		free(out.dropped);
	}
	assert_int_equal(failed, 0);
}

static void
test_git(void **state)
{
	struct fsfilter_out	out;
	static const char	nul[] = "[user]\n\tname = a\0b\n";

	(void)state;
	run_cases(git_cases, sizeof(git_cases) / sizeof(*git_cases), 1);
	/* A NUL octet: not a config. */
	memset(&out, 0, sizeof(out));
	assert_int_equal(fsfilter_git(nul, sizeof(nul) - 1, inc_cb, NULL, "d",
	    &out), -1);
	free(out.dropped);
	/* Includes: the copy the callback names, or left out. */
	memset(&out, 0, sizeof(out));
	assert_int_equal(fsfilter_git("[include]\n\tpath = keep\n\tpath = "
	    "other\n[includeIf \"gitdir:~/w/\"]\n\tpath = keep\n", 76, inc_cb,
	    NULL, "/h", &out), 0);
	assert_string_equal(out.text, "[include]\n\tpath = \"/copy//h/keep\"\n"
	    "[includeif \"gitdir:~/w/\"]\n\tpath = \"/copy//h/keep\"\n");
	free(out.text);
	free(out.dropped);
}

static void
test_goenv(void **state)
{
	(void)state;
	run_cases(goenv_cases, sizeof(goenv_cases) / sizeof(*goenv_cases), 2);
}

static void
test_mise(void **state)
{
	(void)state;
	run_cases(mise_cases, sizeof(mise_cases) / sizeof(*mise_cases), 3);
}

static void
test_ini(void **state)
{
	struct fsfilter_out	out;
	static const char	nul[] = "a=b\0c\n";

	(void)state;
	run_cases(ini_cases, sizeof(ini_cases) / sizeof(*ini_cases), 4);
	/* A NUL octet: not a settings file. */
	memset(&out, 0, sizeof(out));
	assert_int_equal(fsfilter_ini(nul, sizeof(nul) - 1, &out), -1);
	free(out.dropped);
}

static void
test_javanet(void **state)
{
	struct fsfilter_out	out;
	static const char	nul[] = "a=b\0c\n";

	(void)state;
	run_cases(javanet_cases, sizeof(javanet_cases) /
	    sizeof(*javanet_cases), 5);
	memset(&out, 0, sizeof(out));
	assert_int_equal(fsfilter_javanet(nul, sizeof(nul) - 1, &out), -1);
}

static void
test_secret(void **state)
{
	size_t	i;

	(void)state;
	for (i = 0; i < sizeof(secret_cases) / sizeof(*secret_cases); i++)
		if (fsfilter_secret(secret_cases[i].s) != secret_cases[i].want)
			fail_msg("%s: want %d", secret_cases[i].s,
			    secret_cases[i].want);
}

/* The files made since the last call, written as the sandbox does. */
static void
files_write(void)
{
	struct fs_runfiles	 more = files;
	const char		*failed;
	int			 dfd;

	more.v += nwritten;
	more.n -= nwritten;
	assert_int_not_equal(dfd = open(rundir, O_RDONLY | O_DIRECTORY), -1);
	assert_int_equal(fs_runfiles_write(dfd, &more, &failed), 0);
	close(dfd);
	nwritten = files.n;
}

/*
 * fsfilter_copy: the copies of a file and of what it includes (relative
 * to it, or "~/"), among the run directory's files (written out here to
 * be read as the sandbox does); a file that is not a config is shown
 * empty; one that cannot be read has no copy.
 */
static void
test_copy(void **state)
{
	char	 p[PATH_MAX], line[256], *copy, *dropped;
	FILE	*f;
	int	 n;

	(void)state;
	snprintf(p, sizeof(p), "%s/home/.gitconfig", top);
	assert_non_null(f = fopen(p, "w"));
	fprintf(f, "[user]\n\tname = d\n[credential]\n\thelper = x\n"
	    "[include]\n\tpath = ~/.gc-extra\n\tpath = sub/rel\n");
	fclose(f);
	snprintf(p, sizeof(p), "%s/home/.gc-extra", top);
	assert_non_null(f = fopen(p, "w"));
	fprintf(f, "[hub]\n\toauthtoken = T\n[core]\n\teditor = vi\n");
	fclose(f);
	snprintf(p, sizeof(p), "%s/home/sub", top);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/home/sub/rel", top);
	assert_non_null(f = fopen(p, "w"));
	fprintf(f, "[user]\n\temail = e\n");
	fclose(f);
	snprintf(p, sizeof(p), "%s/home/.gitconfig", top);
	snprintf(line, sizeof(line), "%s/home", top);
	dropped = NULL;
	assert_non_null(copy = fsfilter_copy(FS_FILTER_GIT, p, &files, line,
	    &dropped));
	assert_non_null(dropped);
	assert_string_equal(dropped, "hub.oauthtoken, credential.helper");
	files_write();
	assert_non_null(f = fopen(copy, "r"));
	n = 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "path = ") != NULL)
			n++;
	fclose(f);
	assert_int_equal(n, 2);
	free(copy);
	free(dropped);
	/* Three copies in the output directory, none with the token. */
	snprintf(p, sizeof(p), "grep -rq oauthtoken %s/run", top);
	assert_int_not_equal(system(p), 0);
	snprintf(p, sizeof(p), "test $(ls %s/run | wc -l) -eq 3", top);
	assert_int_equal(system(p), 0);

	/* Not a config: an empty copy, said. */
	snprintf(p, sizeof(p), "%s/home/bad", top);
	assert_non_null(f = fopen(p, "w"));
	fprintf(f, "[user\n");
	fclose(f);
	dropped = NULL;
	assert_non_null(copy = fsfilter_copy(FS_FILTER_GIT, p, &files, NULL,
	    &dropped));
	assert_string_equal(dropped, "everything (not read)");
	files_write();
	assert_non_null(f = fopen(copy, "r"));
	assert_null(fgets(line, sizeof(line), f));
	fclose(f);
	free(copy);
	free(dropped);
	/* Not there, or not a file: no copy. */
	snprintf(p, sizeof(p), "%s/home/missing", top);
	assert_null(fsfilter_copy(FS_FILTER_GIT, p, &files, NULL, NULL));
	snprintf(p, sizeof(p), "%s/home", top);
	assert_null(fsfilter_copy(FS_FILTER_GIT, p, &files, NULL, NULL));
}

/* An include loop stops at git's depth: copies, and no hang. */
static void
test_include_loop(void **state)
{
	char	 p[PATH_MAX], *copy;
	FILE	*f;

	(void)state;
	snprintf(p, sizeof(p), "%s/home/loop", top);
	assert_non_null(f = fopen(p, "w"));
	fprintf(f, "[include]\n\tpath = loop\n[user]\n\tname = n\n");
	fclose(f);
	assert_non_null(copy = fsfilter_copy(FS_FILTER_GIT, p, &files, NULL,
	    NULL));
	free(copy);
	files_write();
	snprintf(p, sizeof(p), "test $(ls %s/run | wc -l) -eq 11", top);
	assert_int_equal(system(p), 0);
}

static int
setup(void **state)
{
	char	tmpl[] = "/tmp/pisbx-fsfilter.XXXXXX", p[PATH_MAX];

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(top, sizeof(top), "%s", tmpl);
	snprintf(p, sizeof(p), "%s/home", top);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(rundir, sizeof(rundir), "%s/run", top);
	assert_int_equal(mkdir(rundir, 0700), 0);
	return 0;
}

static int
teardown(void **state)
{
	char	cmd[PATH_MAX + 16];

	(void)state;
	fs_runfiles_clear(&files);
	nwritten = 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	assert_int_equal(system(cmd), 0);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_git),
		cmocka_unit_test(test_goenv),
		cmocka_unit_test(test_mise),
		cmocka_unit_test(test_ini),
		cmocka_unit_test(test_javanet),
		cmocka_unit_test(test_secret),
		cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_include_loop, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
