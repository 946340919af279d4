/*
 * What a git operation's state, written during the run in a repository
 * older than it, would have git run when the user continues it on the
 * host, for the warning after the run (guard_report_warn).  The state
 * directories (rebase-merge/, rebase-apply/, sequencer/) are allowed
 * inside, so that git rebase, git pull --rebase, git cherry-pick A B and
 * git am work; the guard names each one the command wrote in.
 *
 * The check is an allow list, like gitnew.c's: every todo line whose
 * command is not one that only picks, rewords, labels or merges commits
 * (an "exec", or anything this reader does not know) is named with its
 * number and text; so is a merge strategy git does not have built in (git
 * runs git-merge-NAME from PATH), a git apply option git am does not
 * write, a line of sequencer/opts it does not read exactly, and any of
 * these files that is not a plain file of its own (a link, hard links).
 * A rebase or cherry-pick stopped on a conflict names nothing.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "launcher/git/git.h"

#define GITSTATE_FILE_MAX	(8 * 1024 * 1024)	/* larger: unread */

/*
 * The todo commands that run nothing but git itself (sequencer.c's
 * todo_command_info): a word, or its one-letter form.  Not "exec" ("x").
 */
static const char *const gitstate_cmds[] = {
	"pick", "p", "revert", "edit", "e", "reword", "r", "fixup", "f",
	"squash", "s", "break", "b", "label", "l", "reset", "t", "merge", "m",
	"update-ref", "u", "noop", "drop", "d",
};

/* Merge strategies git has built in (or ships: resolve, octopus). */
static const char *const gitstate_strategies[] = {
	"ort", "recursive", "resolve", "octopus", "ours", "subtree",
};

/* The git apply options git am keeps in rebase-apply/apply-opt. */
static const char *const gitstate_applyopts[] = {
	"--whitespace=", "--ignore-space-change", "--ignore-whitespace",
	"--directory=", "--exclude=", "--include=", "--reject", "-C", "-p",
	"--quiet", "-q",
};

/* The keys of sequencer/opts ([options]) git reads. */
static const char *const gitstate_optkeys[] = {
	"no-commit", "edit", "allow-empty", "allow-empty-message",
	"drop-redundant-commits", "keep-redundant-commits", "signoff",
	"record-origin", "allow-ff", "mainline", "strategy",
	"strategy-option", "gpg-sign", "allow-rerere-auto",
	"default-msg-cleanup",
};

static int	gitstate_in(const char *const *, size_t, const char *,
		    size_t, int prefix);
static void	gitstate_strategy(const char *text, size_t len,
		    const char *label, struct gitnew_found *);
static void	gitstate_applyopt(const char *text, size_t len,
		    const char *label, struct gitnew_found *);
static void	gitstate_opts(const char *text, size_t len, const char *label,
		    struct gitnew_found *);

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

/* Whether w (len bytes) is one of v's words, or starts with one. */
static int
gitstate_in(const char *const *v, size_t n, const char *w, size_t len,
    int prefix)
{
	size_t	i, l;

	for (i = 0; i < n; i++) {
		l = strlen(v[i]);
		if ((prefix ? len >= l : len == l) && memcmp(v[i], w, l) == 0)
			return 1;
	}
	return 0;
}

/*
 * Name each line of a todo list whose command could run a program: git
 * skips blanks and tabs, then takes a word ending at a blank, a tab, a
 * CR, the end of the line or a NUL; '#' starts a comment.
 */
void
gitstate_todo(const char *text, size_t len, const char *label,
    struct gitnew_found *f)
{
	const char	*p = text, *end = text + len, *eol, *w;
	size_t		 line = 0, wl;

	for (; p < end; p = eol + 1) {
		line++;
		if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
			eol = end;
		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (p == eol || *p == '#' || (*p == '\r' && p + 1 == eol))
			continue;
		for (w = p; p < eol && *p != ' ' && *p != '\t' && *p != '\r' &&
		    *p != '\0'; p++)
			;
		wl = (size_t)(p - w);
		if (wl > 0 && gitstate_in(gitstate_cmds, NITEMS(gitstate_cmds),
		    w, wl, 0))
			continue;
		gitnew_add(f, "%s line %zu \"%.*s\"", label, line,
		    (int)((eol - w) > 120 ? 120 : (eol - w)), w);
	}
}

/* A strategy (one line, as git reads it) git runs from PATH. */
static void
gitstate_strategy(const char *text, size_t len, const char *label,
    struct gitnew_found *f)
{
	while (len > 0 && isspace((unsigned char)text[len - 1]))
		len--;
	if (len == 0 || gitstate_in(gitstate_strategies,
	    NITEMS(gitstate_strategies), text, len, 0))
		return;
	gitnew_add(f, "%s \"%.*s\" (git runs git-merge-%.*s from PATH)",
	    label, (int)(len > 60 ? 60 : len), text, (int)(len > 60 ? 60 : len),
	    text);
}

/*
 * rebase-apply/apply-opt: git am writes each option as " 'opt'"; any
 * other shape, or an option it does not write, is named.
 */
static void
gitstate_applyopt(const char *text, size_t len, const char *label,
    struct gitnew_found *f)
{
	const char	*p = text, *end = text + len, *q;

	while (p < end) {
		if (*p == ' ' || *p == '\n') {
			p++;
			continue;
		}
		if (*p != '\'' || (q = memchr(p + 1, '\'', (size_t)(end - p -
		    1))) == NULL || memchr(p + 1, '\\', (size_t)(q - p - 1)) !=
		    NULL || !gitstate_in(gitstate_applyopts,
		    NITEMS(gitstate_applyopts), p + 1, (size_t)(q - p - 1),
		    1)) {
			gitnew_add(f, "%s \"%.*s\"", label,
			    (int)(len > 120 ? 120 : len), text);
			return;
		}
		p = q + 1;
	}
}

/*
 * sequencer/opts, as git writes it: "[options]" and "\tkey = value"
 * lines.  A key git does not read, a value git could read otherwise than
 * as written (quotes, escapes, comments), or a strategy from PATH, is
 * named by line.
 */
static void
gitstate_opts(const char *text, size_t len, const char *label,
    struct gitnew_found *f)
{
	const char	*p = text, *end = text + len, *eol, *k, *v, *l;
	size_t		 line = 0, kl, vl;
	int		 insec = 0;
	char		 what[96];

	for (; p < end; p = eol + 1) {
		line++;
		if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
			eol = end;
		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (p == eol)
			continue;
		l = p;
		if (*p == '[') {
			insec = (size_t)(eol - p) == 9 &&
			    strncasecmp(p, "[options]", 9) == 0;
			if (!insec)
				goto bad;
			continue;
		}
		for (k = p; p < eol && (isalnum((unsigned char)*p) ||
		    *p == '-'); p++)
			;
		kl = (size_t)(p - k);
		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (!insec || kl == 0 || p == eol || *p++ != '=')
			goto bad;
		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		v = p;
		vl = (size_t)(eol - v);
		if (memchr(v, '"', vl) != NULL || memchr(v, '\\', vl) != NULL ||
		    memchr(v, '#', vl) != NULL || memchr(v, ';', vl) != NULL ||
		    memchr(v, '\r', vl) != NULL || memchr(v, '\0', vl) != NULL)
			goto bad;
		{
			size_t	i;
			int	known = 0;

			for (i = 0; i < NITEMS(gitstate_optkeys); i++)
				if (strlen(gitstate_optkeys[i]) == kl &&
				    strncasecmp(gitstate_optkeys[i], k, kl) == 0)
					known = 1;
			if (!known)
				goto bad;
		}
		if (kl == 8 && strncasecmp(k, "strategy", 8) == 0) {
			(void)snprintf(what, sizeof(what), "%s line %zu", label,
			    line);
			gitstate_strategy(v, vl, what, f);
		}
		continue;
bad:
		gitnew_add(f, "%s line %zu \"%.*s\"", label, line,
		    (int)((eol - l) > 120 ? 120 : (eol - l)), l);
	}
}

int
gitstate_check(const char *path, struct gitnew_found *f)
{
	/* The files of each state directory that can name a program. */
	static const struct {
		const char	*dir;
		const char	*name;
		void		(*check)(const char *, size_t, const char *,
				    struct gitnew_found *);
	} files[] = {
		{ "rebase-merge", "git-rebase-todo", gitstate_todo },
		{ "rebase-merge", "strategy", gitstate_strategy },
		{ "rebase-apply", "strategy", gitstate_strategy },
		{ "rebase-apply", "apply-opt", gitstate_applyopt },
		{ "sequencer", "todo", gitstate_todo },
		{ "sequencer", "opts", gitstate_opts },
	};
	const char	*base = strrchr(path, '/');
	struct stat	 st;
	size_t		 i, len;
	char		*text;
	int		 fd;

	base = base != NULL ? base + 1 : path;
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		/* Git follows a link to a directory. */
		if (lstat(path, &st) == 0)
			gitnew_add(f, "%s (%s)", base, S_ISLNK(st.st_mode) ?
			    "a symbolic link" : "not read");
		return f->n > 0;
	}
	for (i = 0; i < NITEMS(files); i++) {
		if (strcasecmp(base, files[i].dir) != 0 ||
		    (text = gitnew_read(fd, files[i].name, files[i].name,
		    GITSTATE_FILE_MAX, &len, f)) == NULL)
			continue;
		files[i].check(text, len, files[i].name, f);
		free(text);
	}
	close(fd);
	return f->n > 0;
}
