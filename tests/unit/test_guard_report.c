/*
 * The parent's reader of the creation guard's records
 * (launcher/run/guard_report.c), fed through a SOCK_SEQPACKET pair one
 * message a record, as the guard sends them: refusals reach the summary,
 * a record that is not whole is dropped, a rename rewrites the path of a
 * repository reported before it, and the warning names what a made
 * repository has beyond a fresh clone -- and nothing for a fresh one or
 * one that is gone.
 */
#include <sys/socket.h>
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

#include "launcher/guard/guard.h"
#include "launcher/run/run.h"

/* One message: tag, then len bytes of fields as given. */
static void
send_raw(int fd, char tag, const char *fields, size_t len)
{
	char	 m[4 * PATH_MAX];

	assert_true(len + 1 <= sizeof(m));
	m[0] = tag;
	memcpy(m + 1, fields, len);
	assert_int_equal(send(fd, m, len + 1, 0), (ssize_t)(len + 1));
}

/* One record as guard_send makes it: each field NUL-terminated. */
static void
send_rec(int fd, char tag, const char *a, const char *b, const char *c)
{
	char		 f[4 * PATH_MAX];
	const char	*v[3] = { a, b, c };
	size_t		 len = 0, i, l;

	for (i = 0; i < 3; i++) {
		if (v[i] == NULL)
			continue;
		l = strlen(v[i]) + 1;
		memcpy(f + len, v[i], l);
		len += l;
	}
	send_raw(fd, tag, f, len);
}

/* A pair: records go in sv[1], the reader reads sv[0]. */
static void
pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    sv), 0);
}

/* The writer closed: everything read, to EOF. */
static struct guard_report *
collect(int sv[2])
{
	struct guard_report	*r;

	close(sv[1]);
	assert_non_null(r = guard_report_new());
	assert_int_equal(guard_report_read(r, sv[0]), 0);
	close(sv[0]);
	return r;
}

/* What guard_report_warn says on stderr (malloc'ed). */
static char *
warn_text(struct guard_report *r, struct summary *sum)
{
	FILE	*f;
	char	*buf;
	long	 n;
	int	 saved;

	assert_non_null(f = tmpfile());
	fflush(stderr);
	assert_true((saved = dup(2)) != -1);
	assert_int_equal(dup2(fileno(f), 2), 2);
	guard_report_warn(r, sum);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	/* Written through fd 2, not the stream: its size from the fd. */
	n = (long)lseek(fileno(f), 0, SEEK_END);
	assert_true(n >= 0);
	assert_non_null(buf = calloc(1, (size_t)n + 1));
	assert_int_equal(pread(fileno(f), buf, (size_t)n, 0), n);
	fclose(f);
	return buf;
}

/* What the summary holds as JSON (malloc'ed). */
static char *
json_text(const struct summary *sum)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*f;

	assert_non_null(f = open_memstream(&buf, &len));
	assert_int_equal(summary_json(sum, f), 0);
	fclose(f);
	return buf;
}

static void
write_file(const char *dir, const char *name, const char *text)
{
	char	 path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

/* dir/name/.git with a HEAD and config, as git init leaves them. */
static void
make_repo(const char *dir, const char *name, const char *config)
{
	char	 path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%s/.git", dir, name);
	assert_int_equal(mkdir(path, 0755), 0);
	write_file(path, "HEAD", "ref: refs/heads/main\n");
	write_file(path, "config", config);
}

static void
rm_tree(const char *dir)
{
	char	 cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void
test_report_refusals(void **state)
{
	struct guard_report	*r;
	struct summary		*sum;
	char			*json, *text;
	int			 sv[2];

	(void)state;
	pair(sv);
	send_rec(sv[1], REPORT_REFUSED, "create", "/w/.bashrc",
	    "bash reads it at start");
	send_rec(sv[1], REPORT_REFUSED, "write", "/w/.git/config",
	    "git reads it");
	r = collect(sv);
	assert_non_null(sum = summary_new());
	text = warn_text(r, sum);
	assert_string_equal(text, "");
	assert_int_equal(summary_count(sum), 2);
	json = json_text(sum);
	assert_non_null(strstr(json, "/w/.bashrc"));
	assert_non_null(strstr(json, "/w/.git/config"));
	free(json);
	free(text);
	summary_free(sum);
	guard_report_free(r);
}

/*
 * Loopback records (a TCP connect to the sandbox's loopback nothing
 * answered) become one summary item per port, with what the config says
 * of host.pisbx.internal on it; a port that is not one is dropped; the
 * other records stay guard_report_warn's, counted once.
 */
static void
test_report_loopback(void **state)
{
	struct config_errors	 errs = { NULL, 0 };
	struct guard_report	*r;
	struct summary		*sum;
	struct config		*conf;
	char			 dir[] = "/tmp/test_guard_report.XXXXXX";
	char			 path[PATH_MAX], want[2 * PATH_MAX];
	char			*json, *text;
	int			 sv[2];

	(void)state;
	assert_non_null(mkdtemp(dir));
	write_file(dir, "c.json", "{\"network\": {\"allowedDomains\": "
	    "[\"host.pisbx.internal:8080\"]}}");
	snprintf(path, sizeof(path), "%s/c.json", dir);
	assert_non_null(conf = config_load(path, &errs));
	pair(sv);
	send_rec(sv[1], REPORT_LOOPBACK, "127.0.0.1", "5173", NULL);
	send_rec(sv[1], REPORT_REFUSED, "create", "/w/.bashrc", "bash");
	send_rec(sv[1], REPORT_LOOPBACK, "[::1]", "8080", NULL);
	send_rec(sv[1], REPORT_LOOPBACK, "127.0.0.1", "0", NULL);
	send_rec(sv[1], REPORT_LOOPBACK, "127.0.0.1", "65536", NULL);
	send_rec(sv[1], REPORT_LOOPBACK, "127.0.0.1", "80x", NULL);
	r = collect(sv);
	assert_non_null(sum = summary_new());
	guard_report_loopback(r, sum, conf);
	assert_int_equal(summary_count(sum), 2);
	text = warn_text(r, sum);
	assert_string_equal(text, "");
	assert_int_equal(summary_count(sum), 3);
	json = json_text(sum);
	assert_non_null(strstr(json, "{\"kind\":\"unreachable\",\"host\":"
	    "\"127.0.0.1\",\"port\":5173,\"proto\":\"tcp\",\"reason\":"
	    "\"sandbox-loopback\",\"count\":1,\"detail\":\"nothing listens "
	    "on port 5173 inside the sandbox, whose loopback is its own; a "
	    "server on this machine is host.pisbx.internal:5173 inside\""));
	snprintf(want, sizeof(want), "\"hint\":\"to allow it, add "
	    "\\\"host.pisbx.internal:5173\\\" to network.allowedDomains in "
	    "%s\"", path);
	assert_non_null(strstr(json, want));
	snprintf(want, sizeof(want), "\"hint\":\"host.pisbx.internal:8080 is "
	    "allowed in %s: use that name\"", path);
	assert_non_null(strstr(json, want));
	assert_null(strstr(json, "\"port\":0,"));
	assert_null(strstr(json, "65536"));
	assert_null(strstr(json, "\"port\":80,"));
	free(json);
	free(text);
	summary_free(sum);
	guard_report_free(r);
	config_free(conf);
	rm_tree(dir);
}

/* Records that are not whole are dropped; the whole ones kept. */
static void
test_report_malformed(void **state)
{
	struct guard_report	*r;
	struct summary		*sum;
	char			*json, *text;
	int			 sv[2];

	(void)state;
	pair(sv);
	/* No such tag; a relative path, twice; no NUL; a field too many, */
	send_raw(sv[1], 'Q', "/a\0", 3);
	send_rec(sv[1], REPORT_REFUSED, "create", "w/rel", "why");
	send_rec(sv[1], REPORT_REPO, "rel", NULL, NULL);
	send_raw(sv[1], REPORT_REPO, "/a", 2);
	send_raw(sv[1], REPORT_REPO, "/a\0/b\0", 6);
	/* one too few, and one where none is expected. */
	send_rec(sv[1], REPORT_MOVED, "/a", NULL, NULL);
	send_raw(sv[1], REPORT_FULL, "/a\0", 3);
	send_rec(sv[1], REPORT_REFUSED, "create", "/w/.zshrc", "zsh");
	/* A socket call names an address; no other verb may, nor empty. */
	send_rec(sv[1], REPORT_REFUSED, "connect to", "127.0.0.1:22", "nons");
	send_rec(sv[1], REPORT_REFUSED, "write", "10.0.0.1:22", "no");
	send_rec(sv[1], REPORT_REFUSED, "connect to", "", "empty");
	r = collect(sv);
	assert_non_null(sum = summary_new());
	text = warn_text(r, sum);
	/* No "more repositories" line: the F record was dropped. */
	assert_string_equal(text, "");
	assert_int_equal(summary_count(sum), 2);
	json = json_text(sum);
	assert_non_null(strstr(json, "/w/.zshrc"));
	assert_non_null(strstr(json, "127.0.0.1:22"));
	assert_null(strstr(json, "10.0.0.1:22"));
	assert_null(strstr(json, "empty"));
	assert_null(strstr(json, "w/rel"));
	free(json);
	free(text);
	summary_free(sum);
	guard_report_free(r);
}

/*
 * A repository reported, then renamed with its parent: the warning names
 * its new path and what git would run there; a fresh one and one that is
 * gone are not named.
 */
static void
test_report_repos(void **state)
{
	struct guard_report	*r;
	char			 dir[] = "/tmp/test_guard_report.XXXXXX";
	char			 a[PATH_MAX], b[PATH_MAX], c[PATH_MAX];
	char			 d[PATH_MAX], e[PATH_MAX];
	char			*text;
	int			 sv[2];

	(void)state;
	assert_non_null(mkdtemp(dir));
	make_repo(dir, "moved", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
	make_repo(dir, "fresh", "[core]\n\trepositoryformatversion = 0\n");
	snprintf(a, sizeof(a), "%s/old/repo", dir);
	snprintf(b, sizeof(b), "%s/old", dir);
	snprintf(c, sizeof(c), "%s/moved", dir);
	snprintf(d, sizeof(d), "%s/fresh", dir);
	snprintf(e, sizeof(e), "%s/gone", dir);
	pair(sv);
	send_rec(sv[1], REPORT_REPO, a, NULL, NULL);
	send_rec(sv[1], REPORT_REPO, d, NULL, NULL);
	send_rec(sv[1], REPORT_REPO, e, NULL, NULL);
	/* old/repo -> moved: old -> DIR, then DIR/repo -> moved. */
	send_rec(sv[1], REPORT_MOVED, b, dir, NULL);
	snprintf(b, sizeof(b), "%s/repo", dir);
	send_rec(sv[1], REPORT_MOVED, b, c, NULL);
	r = collect(sv);
	text = warn_text(r, NULL);
	assert_non_null(strstr(text, c));
	assert_non_null(strstr(text, "core.fsmonitor"));
	assert_null(strstr(text, d));
	assert_null(strstr(text, e));
	assert_null(strstr(text, "more git repositories"));
	free(text);
	guard_report_free(r);
	rm_tree(dir);
}

/* The guard's bound reached: said after the repositories it named. */
static void
test_report_full(void **state)
{
	struct guard_report	*r;
	char			*text;
	int			 sv[2];

	(void)state;
	pair(sv);
	send_rec(sv[1], REPORT_FULL, NULL, NULL, NULL);
	r = collect(sv);
	text = warn_text(r, NULL);
	assert_non_null(strstr(text, "more git repositories than listed"));
	free(text);
	guard_report_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_refusals),
		cmocka_unit_test(test_report_loopback),
		cmocka_unit_test(test_report_malformed),
		cmocka_unit_test(test_report_repos),
		cmocka_unit_test(test_report_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
