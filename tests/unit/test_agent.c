/*
 * agent_line_parse: Claude Code's wrapper around a command is recognised
 * (its snapshot and its cwd file), and nothing else is: another
 * directory, another name, a path that only starts like one, a word the
 * model appended after the cwd file, quoting that does not end.
 * agent_files_prepare: the cwd file is created only where it is safe and
 * only as a regular file of ours.
 */
#include <sys/stat.h>
#include <sys/types.h>

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

#include "launcher/agent/agent.h"

#define CFG	"/home/u/.claude"
#define SNAP	CFG "/shell-snapshots/snapshot-bash-1796051827154-txpytb.sh"
#define TMP	"/tmp"
#define CWDF	TMP "/claude-a771-cwd"
#define MID	" && { shopt -u extglob || setopt NO_EXTENDED_GLOB " \
		"NO_BARE_GLOB_QUAL; } >/dev/null 2>&1 || true && eval 'ls' " \
		"< /dev/null"

struct parse_case {
	const char	*name;
	const char	*line;
	const char	*tmp;		/* the temp dir (NULL: none) */
	const char	*snapshot;	/* expected, or NULL */
	const char	*cwd_file;	/* expected, or NULL */
};

static const struct parse_case parse_cases[] = {
	{ "claude code 2.1.197", "source " SNAP " 2>/dev/null || true" MID
	    " && pwd -P >| " CWDF, TMP, SNAP, CWDF },
	{ "no snapshot yet", "{ shopt -u extglob; } || true" MID
	    " && pwd -P >| " CWDF, TMP, NULL, CWDF },
	{ "quoted temp dir", "true && pwd -P >| '/tmp/my '\"'\"'dir/"
	    "claude-00ff-cwd'", "/tmp/my 'dir", NULL,
	    "/tmp/my 'dir/claude-00ff-cwd" },
	{ "temp dir with a trailing slash", "true && pwd -P >| " CWDF,
	    "/tmp/", NULL, CWDF },
	{ "zsh snapshot", "source " CFG "/shell-snapshots/snapshot-zsh-1-a.sh"
	    " 2>/dev/null || true && true", TMP,
	    CFG "/shell-snapshots/snapshot-zsh-1-a.sh", NULL },
	{ "plain command", "ls -la", TMP, NULL, NULL },
	{ "cwd file elsewhere", "true && pwd -P >| /var/tmp/claude-a771-cwd",
	    TMP, NULL, NULL },
	{ "cwd file in a subdirectory", "true && pwd -P >| /tmp/x/claude-"
	    "a771-cwd", TMP, NULL, NULL },
	{ "dot-dot out of the temp dir", "true && pwd -P >| /tmp/../etc/"
	    "claude-a771-cwd", TMP, NULL, NULL },
	{ "upper-case hex", "true && pwd -P >| /tmp/claude-A771-cwd", TMP,
	    NULL, NULL },
	{ "five hex digits", "true && pwd -P >| /tmp/claude-a7710-cwd", TMP,
	    NULL, NULL },
	{ "other name", "true && pwd -P >| /tmp/.bashrc", TMP, NULL, NULL },
	{ "word after the cwd file", "true && pwd -P >| " CWDF " /etc/passwd",
	    TMP, NULL, NULL },
	{ "redirect after the cwd file", "true && pwd -P >| " CWDF ";x",
	    TMP, NULL, NULL },
	{ "model's suffix before claude's", "true && pwd -P >| /tmp/claude-"
	    "0000-cwd; echo && pwd -P >| " CWDF, TMP, NULL, CWDF },
	{ "unterminated quote", "true && pwd -P >| '/tmp/claude-a771-cwd",
	    TMP, NULL, NULL },
	{ "no temp dir known", "true && pwd -P >| " CWDF, NULL, NULL, NULL },
	{ "relative temp dir", "true && pwd -P >| " CWDF, "tmp", NULL, NULL },
	{ "snapshot in another dir", "source /home/u/.ssh/snapshot-bash-1-a.sh"
	    " 2>/dev/null || true && true", TMP, NULL, NULL },
	{ "snapshot with another name", "source " CFG "/shell-snapshots/"
	    "id_rsa 2>/dev/null || true && true", TMP, NULL, NULL },
	{ "snapshot path climbing out", "source " CFG "/shell-snapshots/../"
	    "snapshot-bash-1-a.sh 2>/dev/null || true && true", TMP, NULL,
	    NULL },
	{ "snapshot not first", "true; source " SNAP " 2>/dev/null || true "
	    "&& true", TMP, NULL, NULL },
	{ "snapshot without claude's suffix", "source " SNAP " && cat x",
	    TMP, NULL, NULL },
};

static void
test_parse(void **state)
{
	struct agent_files	af;
	size_t			i;

	(void)state;
	for (i = 0; i < sizeof(parse_cases) / sizeof(*parse_cases); i++) {
		const struct parse_case *c = &parse_cases[i];

		assert_int_equal(agent_line_parse(c->line, CFG, c->tmp, &af),
		    0);
		if ((c->snapshot == NULL) != (af.snapshot == NULL) ||
		    (c->snapshot != NULL && strcmp(c->snapshot,
		    af.snapshot) != 0))
			fail_msg("%s: snapshot %s, want %s", c->name,
			    af.snapshot ? af.snapshot : "(none)",
			    c->snapshot ? c->snapshot : "(none)");
		if ((c->cwd_file == NULL) != (af.cwd_file == NULL) ||
		    (c->cwd_file != NULL && strcmp(c->cwd_file,
		    af.cwd_file) != 0))
			fail_msg("%s: cwd file %s, want %s", c->name,
			    af.cwd_file ? af.cwd_file : "(none)",
			    c->cwd_file ? c->cwd_file : "(none)");
		agent_files_free(&af);
	}
}

/* A cwd file of the right name, in dir, run through prepare. */
static int
prepare_in(const char *dir, struct agent_files *af)
{
	char	line[PATH_MAX + 64];

	snprintf(line, sizeof(line), "true && pwd -P >| %s/claude-beef-cwd",
	    dir);
	assert_int_equal(agent_line_parse(line, NULL, dir, af), 0);
	assert_non_null(af->cwd_file);
	return agent_files_prepare(af, getuid());
}

static void
test_prepare(void **state)
{
	char			 dir[] = "/tmp/pisbx-agent-XXXXXX", f[PATH_MAX];
	char			 other[PATH_MAX];
	struct agent_files	 af;
	struct stat		 st;
	int			 fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(f, sizeof(f), "%s/claude-beef-cwd", dir);
	snprintf(other, sizeof(other), "%s/other", dir);

	/* Missing: created empty, and removed again while still empty. */
	assert_int_equal(prepare_in(dir, &af), 0);
	assert_non_null(af.cwd_file);
	assert_int_equal(af.cwd_created, 1);
	assert_int_equal(lstat(f, &st), 0);
	assert_true(S_ISREG(st.st_mode) && st.st_size == 0);
	agent_files_done(&af);
	assert_int_equal(lstat(f, &st), -1);

	/* Written by the command: kept for the agent to read. */
	assert_int_equal(prepare_in(dir, &af), 0);
	fd = open(f, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "/x\n", 3), 3);
	close(fd);
	agent_files_done(&af);
	assert_int_equal(lstat(f, &st), 0);

	/* Existing regular file of ours: granted, not ours to remove. */
	assert_int_equal(prepare_in(dir, &af), 0);
	assert_non_null(af.cwd_file);
	assert_int_equal(af.cwd_created, 0);
	agent_files_done(&af);
	assert_int_equal(unlink(f), 0);

	/* A symlink (to anything) in its place: refused. */
	fd = open(other, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink(other, f), 0);
	assert_int_equal(prepare_in(dir, &af), 0);
	assert_null(af.cwd_file);
	agent_files_done(&af);
	assert_int_equal(unlink(f), 0);

	/* A second link to another file: refused. */
	assert_int_equal(link(other, f), 0);
	assert_int_equal(prepare_in(dir, &af), 0);
	assert_null(af.cwd_file);
	agent_files_done(&af);
	assert_int_equal(unlink(f), 0);

	/* A directory others may write to, without the sticky bit. */
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(prepare_in(dir, &af), 0);
	assert_null(af.cwd_file);
	assert_int_equal(lstat(f, &st), -1);
	agent_files_done(&af);
	assert_int_equal(chmod(dir, 01777), 0);
	assert_int_equal(prepare_in(dir, &af), 0);
	assert_non_null(af.cwd_file);
	agent_files_done(&af);

	assert_int_equal(unlink(other), 0);
	assert_int_equal(rmdir(dir), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_prepare),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
