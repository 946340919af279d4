/*
 * Claude Code's bookkeeping around a command run through pisbx-sh.  With
 * CLAUDE_CODE_SHELL_PREFIX=pisbx-sh, Claude Code (2.1.x) hands us one
 * line of this shape:
 *
 *   source SNAPSHOT 2>/dev/null || true && ... && eval 'CMD' < /dev/null
 *       && pwd -P >| TMP/claude-XXXX-cwd
 *
 * It sources its shell snapshot ($CLAUDE_CONFIG_DIR or ~/.claude, then
 * shell-snapshots/snapshot-SHELL-MS-RAND.sh: the user's functions,
 * aliases and PATH), and writes the final working directory to a file it
 * reads back to follow the command's "cd" (TMP is $CLAUDE_CODE_TMPDIR,
 * else the system temp directory; XXXX four hex digits).  Inside the
 * sandbox the snapshot lies in the hidden home and TMP is read-only, so
 * both would fail.
 *
 * The line is the agent's, but the model chose CMD, and other agents hand
 * us lines the model wrote whole: nothing here may open more than these
 * two exact names.  So the snapshot is granted read-only only when it is
 * a regular file of ours with one link, in exactly the snapshot
 * directory, and the cwd file is granted writable only when its name has
 * exactly Claude Code's pattern in exactly the temp directory, and the
 * file does not exist yet (we create it, empty) or is a regular file of
 * ours with one link in a directory nobody else can swap it in.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/agent/agent.h"

#define AGENT_SNAPSHOT_PRE	"source "
#define AGENT_SNAPSHOT_POST	" 2>/dev/null || true && "
#define AGENT_CWD_PRE		" && pwd -P >| "

static const char	*agent_token(const char *s, char *out, size_t len);
static int		 agent_snapshot_name(const char *name);
static int		 agent_cwd_name(const char *name);
static char		*agent_in_dir(const char *path, const char *dir,
			    int (*name_ok)(const char *));
static int		 agent_dir_safe(int dirfd, uid_t uid);

/*
 * One word as Claude Code quotes it (shellQuote of a single argument): a
 * run of [A-Za-z0-9_./:=@+,-], or '...' in which a quote is written
 * '"'"'.  Returns the text after the word, or NULL.
 */
static const char *
agent_token(const char *s, char *out, size_t len)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@+,-";
	size_t	n = 0;

	if (*s != '\'') {
		while (*s != '\0' && strchr(safe, *s) != NULL) {
			if (n + 1 >= len)
				return NULL;
			out[n++] = *s++;
		}
		out[n] = '\0';
		return n > 0 ? s : NULL;
	}
	for (s++;;) {
		if (*s == '\0')
			return NULL;
		if (*s != '\'') {
			if (n + 1 >= len)
				return NULL;
			out[n++] = *s++;
			continue;
		}
		if (strncmp(s, "'\"'\"'", 5) != 0)
			break;
		if (n + 1 >= len)
			return NULL;
		out[n++] = '\'';
		s += 5;
	}
	out[n] = '\0';
	return s + 1;
}

/* "snapshot-(bash|zsh|sh)-MILLISECONDS-RANDOM.sh", RANDOM base 36. */
static int
agent_snapshot_name(const char *name)
{
	static const char *const shells[] = { "bash-", "zsh-", "sh-" };
	const char	*p;
	size_t		 i, n;

	if (strncmp(name, "snapshot-", 9) != 0)
		return 0;
	p = name + 9;
	for (i = 0; i < sizeof(shells) / sizeof(*shells); i++)
		if (strncmp(p, shells[i], strlen(shells[i])) == 0)
			break;
	if (i == sizeof(shells) / sizeof(*shells))
		return 0;
	p += strlen(shells[i]);
	n = strspn(p, "0123456789");
	if (n == 0 || n > 20 || p[n] != '-')
		return 0;
	p += n + 1;
	n = strspn(p, "0123456789abcdefghijklmnopqrstuvwxyz");
	if (n == 0 || n > 12)
		return 0;
	return strcmp(p + n, ".sh") == 0;
}

/* "claude-XXXX-cwd", XXXX four lower-case hex digits. */
static int
agent_cwd_name(const char *name)
{
	return strncmp(name, "claude-", 7) == 0 &&
	    strspn(name + 7, "0123456789abcdef") == 4 &&
	    strcmp(name + 11, "-cwd") == 0;
}

/*
 * path, when it is exactly dir + "/" + a name that name_ok accepts
 * (dir without its trailing slashes): the name, malloc'ed.
 */
static char *
agent_in_dir(const char *path, const char *dir,
    int (*name_ok)(const char *))
{
	size_t	len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (dir[0] != '/' || strncmp(path, dir, len) != 0 ||
	    path[len] != '/' || !name_ok(path + len + 1))
		return NULL;
	return strdup(path + len + 1);
}

int
agent_line_parse(const char *line, const char *claude_dir,
    const char *tmp_dir, struct agent_files *af)
{
	char		 word[PATH_MAX], *dir = NULL, *name;
	const char	*p, *q, *tail;

	memset(af, 0, sizeof(*af));
	/* The snapshot: the line's first command. */
	if (claude_dir != NULL && strncmp(line, AGENT_SNAPSHOT_PRE,
	    strlen(AGENT_SNAPSHOT_PRE)) == 0 &&
	    (p = agent_token(line + strlen(AGENT_SNAPSHOT_PRE), word,
	    sizeof(word))) != NULL &&
	    strncmp(p, AGENT_SNAPSHOT_POST, strlen(AGENT_SNAPSHOT_POST)) == 0 &&
	    asprintf(&dir, "%s/shell-snapshots", claude_dir) != -1) {
		if ((name = agent_in_dir(word, dir, agent_snapshot_name)) !=
		    NULL) {
			free(name);
			if ((af->snapshot = strdup(word)) == NULL)
				goto fail;
		}
	}
	free(dir);
	dir = NULL;

	/* The cwd file: the line's last word, after Claude Code's last "&&". */
	tail = NULL;
	for (q = line; (q = strstr(q, AGENT_CWD_PRE)) != NULL; q++)
		tail = q;
	if (tmp_dir != NULL && tail != NULL &&
	    (p = agent_token(tail + strlen(AGENT_CWD_PRE), word,
	    sizeof(word))) != NULL && *p == '\0' &&
	    (name = agent_in_dir(word, tmp_dir, agent_cwd_name)) != NULL) {
		free(name);
		if ((af->cwd_file = strdup(word)) == NULL)
			goto fail;
	}
	return 0;
fail:
	agent_files_free(af);
	return -1;
}

const char *
agent_claude_dir(char *buf, size_t len)
{
	const char	*e = getenv("CLAUDE_CONFIG_DIR"), *h = getenv("HOME");

	/* As Claude Code: CLAUDE_CONFIG_DIR ?? homedir()/.claude. */
	if (e != NULL)
		return e[0] == '/' ? e : NULL;
	if (h == NULL || h[0] != '/' ||
	    (size_t)snprintf(buf, len, "%s/.claude", h) >= len)
		return NULL;
	return buf;
}

const char *
agent_tmp_dir(void)
{
	static const char *const vars[] = {
		"CLAUDE_CODE_TMPDIR", "TMPDIR", "TMP", "TEMP"
	};
	const char	*e;
	size_t		 i;

	/* As Claude Code: CLAUDE_CODE_TMPDIR, else node's os.tmpdir(). */
	for (i = 0; i < sizeof(vars) / sizeof(*vars); i++)
		if ((e = getenv(vars[i])) != NULL && e[0] != '\0')
			return e[0] == '/' ? e : NULL;
	return "/tmp";
}

/*
 * A directory in which a file of ours stays ours: owned by us or root,
 * and sticky if others may write to it (so only we can rename or remove
 * our files there).
 */
static int
agent_dir_safe(int dirfd, uid_t uid)
{
	struct stat	st;

	if (fstat(dirfd, &st) == -1 || !S_ISDIR(st.st_mode))
		return 0;
	if (st.st_uid != uid && st.st_uid != 0)
		return 0;
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return 0;
	return 1;
}

int
agent_files_prepare(struct agent_files *af, uid_t uid)
{
	char		 dir[PATH_MAX], real[PATH_MAX], *slash, *p;
	const char	*why = NULL;
	struct stat	 st;
	int		 dfd = -1, fd = -1;

	/* The snapshot: ours, regular, one link; named by its real path. */
	if (af->snapshot != NULL) {
		snprintf(dir, sizeof(dir), "%s", af->snapshot);
		slash = strrchr(dir, '/');
		*slash = '\0';
		if (realpath(dir, real) == NULL ||
		    (dfd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC)) ==
		    -1 || fstatat(dfd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) ==
		    -1)
			why = strerror(errno);
		else if (!S_ISREG(st.st_mode) || st.st_uid != uid ||
		    st.st_nlink != 1)
			why = "not a regular file of ours with one link";
		if (dfd != -1)
			close(dfd);
		dfd = -1;
		p = NULL;
		if (why == NULL && asprintf(&p, "%s/%s", real, slash + 1) ==
		    -1)
			return -1;
		if (why != NULL)
			log_debug("not exposing %s: %s", af->snapshot, why);
		free(af->snapshot);
		af->snapshot = p;
		why = NULL;
	}

	/* The cwd file: created empty by us, or an existing one of ours. */
	if (af->cwd_file != NULL) {
		snprintf(dir, sizeof(dir), "%s", af->cwd_file);
		slash = strrchr(dir, '/');
		*slash = '\0';
		if (realpath(dir[0] != '\0' ? dir : "/", real) == NULL ||
		    (dfd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
		    -1)
			why = strerror(errno);
		else if (!agent_dir_safe(dfd, uid))
			why = "its directory is writable by others and not "
			    "sticky";
		else if ((fd = openat(dfd, slash + 1, O_WRONLY | O_CREAT |
		    O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) != -1)
			af->cwd_created = 1;
		else if (errno != EEXIST ||
		    (fd = openat(dfd, slash + 1, O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC)) == -1)
			why = strerror(errno);
		if (why == NULL && (fstat(fd, &st) == -1 ||
		    !S_ISREG(st.st_mode) || st.st_uid != uid ||
		    st.st_nlink != 1))
			why = "not a regular file of ours with one link";
		if (fd != -1)
			close(fd);
		if (dfd != -1)
			close(dfd);
		p = NULL;
		if (why == NULL && asprintf(&p, "%s/%s", real, slash + 1) ==
		    -1)
			return -1;
		if (why != NULL)
			log_warnx("not letting the command write %s: %s",
			    af->cwd_file, why);
		free(af->cwd_file);
		af->cwd_file = p;
	}
	return 0;
}

void
agent_files_done(struct agent_files *af)
{
	struct stat	st;

	/*
	 * A command that failed before "pwd -P" leaves the file we made
	 * empty; the agent reads nothing from it then, so it goes.
	 */
	if (af->cwd_created && af->cwd_file != NULL &&
	    lstat(af->cwd_file, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size == 0)
		unlink(af->cwd_file);
	agent_files_free(af);
}

void
agent_files_free(struct agent_files *af)
{
	free(af->snapshot);
	free(af->cwd_file);
	memset(af, 0, sizeof(*af));
}
