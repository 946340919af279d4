/*
 * fsreview: the reviewer (review.command) runs on the host, so nothing it
 * runs or reads may be a file the sandboxed command can write.  Its
 * program and every argument that can name a file are resolved the way
 * the reviewer will see them (its working directory is "/") and refused
 * inside a writable root; a word run as a program by name is refused when
 * $PATH would look for it in a writable directory first.
 *
 * An argument that is not one plain word is code.  Given to an
 * interpreter (python3 -c, perl -e, node -e...) it is a program pisbx
 * cannot read: refused.  Otherwise it is read as sh(1) would read it, and
 * only a command line with nothing pisbx cannot see through is accepted:
 * no expansion ($, `), no escape (\), no glob or brace (* ? [ {), no
 * tilde, no cd (the directory relative names are found in stays "/"), no
 * eval or trap (they run a string), no quoted command line inside it.
 * Each of its words is then checked like an argument, and each word in a
 * command's place like the program.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "policy/policy.h"
#include "launcher/launcher.h"
#include "launcher/fs/fs.h"

/* What a program does with an argument that is not a plain word. */
enum rev_kind {
	REV_PROGRAM,		/* unknown: read it as a command line */
	REV_SHELL,		/* a command line */
	REV_INTERP,		/* code in a language pisbx does not read */
	REV_WRAPPER		/* runs its next word as a program */
};

/* What one review.command check needs; i is the entry being checked. */
struct rev {
	const struct config	*conf;
	const struct fs_plan	*plan;
	const char		*home;
	const char		*path;	/* the reviewer's $PATH */
	size_t			 i;
	int			 depth;	/* lines within lines */
};

/* Bytes of a plain argument: nothing a shell would treat specially. */
#define REV_PLAIN \
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" \
	"-_./=:,+@%~"
/* What makes a word of a command line, once unquoted, a line of its own. */
#define REV_SPECIAL	" \t\n;&|()<>!'\""

static const char *const rev_shells[] = {
	"sh", "bash", "dash", "ash", "ksh", "mksh", "zsh", "fish", "csh",
	"tcsh", "yash", "posh", NULL
};
static const char *const rev_interps[] = {
	"python", "pypy", "perl", "ruby", "node", "nodejs", "deno", "bun",
	"php", "lua", "luajit", "tclsh", "wish", "awk", "gawk", "mawk", "nawk",
	"Rscript", "julia", "pwsh", "osascript", "guile", "expect", "sed",
	"find", "git", "make", NULL
};
static const char *const rev_wrappers[] = {
	"env", "nice", "nohup", "setsid", "stdbuf", "ionice", "chrt",
	"timeout", "time", "sudo", "doas", "runuser", "setpriv", "unshare",
	"xargs", "busybox", NULL
};
/* Shell builtins that run no file named by a word. */
static const char *const rev_builtins[] = {
	"true", "false", ":", "echo", "printf", "test", "exit", "set",
	"umask", "export", "unset", "read", "shift", "wait", "readonly",
	"local", "return", "ulimit", "for", "case", "in", "fi", "done",
	"esac", NULL
};
/* Shell words whose next word is run as a program. */
static const char *const rev_runners[] = {
	"exec", "command", ".", "source", "!", "then", "else", "do", "if",
	"elif", "while", "until", NULL
};
/* Shell builtins whose effect pisbx does not follow. */
static const char *const rev_refused[] = {
	"cd", "pushd", "popd", "eval", "trap", "alias", "hash", "enable",
	"builtin", "coproc", "function", "fc", NULL
};

static int	 rev_in(const char *const *, const char *);
static enum rev_kind rev_kind(const char *);
static int	 rev_refuse(struct rev *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static int	 rev_one(struct rev *, const char *);
static int	 rev_file(struct rev *, const char *);
static int	 rev_program(struct rev *, const char *);
static int	 rev_line(struct rev *, const char *);
static int	 rev_word(struct rev *, const char *, int *, int,
		    enum rev_kind *);

static int
rev_in(const char *const *list, const char *s)
{
	for (; *list != NULL; list++)
		if (strcmp(*list, s) == 0)
			return 1;
	return 0;
}

/* The kind of program a word names, by its base name (python3.11: python). */
static enum rev_kind
rev_kind(const char *word)
{
	const char	*base = strrchr(word, '/');
	char		 name[NAME_MAX + 1];
	size_t		 n;

	base = base != NULL ? base + 1 : word;
	n = strlen(base);
	if (n == 0 || n > NAME_MAX)
		return REV_PROGRAM;
	memcpy(name, base, n + 1);
	while (n > 1 && (isdigit((unsigned char)name[n - 1]) ||
	    name[n - 1] == '.'))
		name[--n] = '\0';
	if (rev_in(rev_shells, name))
		return REV_SHELL;
	if (rev_in(rev_interps, name))
		return REV_INTERP;
	if (rev_in(rev_wrappers, name))
		return REV_WRAPPER;
	return REV_PROGRAM;
}

/* Say why review.command[i] is refused; EXIT_CONFIG. */
static int
rev_refuse(struct rev *r, const char *fmt, ...)
{
	char	msg[PATH_MAX + 512];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warnx("%s: review.command[%zu] %s; the reviewer runs on the host, "
	    "and a sandboxed command could change what it runs", r->conf->path,
	    r->i, msg);
	return EXIT_CONFIG;
}

/* One path as the reviewer sees it (from "/"): refused in a writable root. */
static int
rev_one(struct rev *r, const char *word)
{
	const char	*root;
	char		*p;
	int		 rc = 0;

	if (word[0] == '\0')
		return 0;
	if ((p = fs_resolve(word, "/", r->home)) == NULL)
		return -1;
	if ((root = fs_root_of(r->plan, p)) != NULL)
		rc = rev_refuse(r, "names %s, inside the writable directory "
		    "%s: move it out of the writable directories", p, root);
	free(p);
	return rc;
}

/*
 * A word that may name a file: itself, a short option's attached value
 * ("-I/dir"), and for "--opt=VALUE" or "NAME=VALUE" the value and each of
 * its ":"-separated parts (a PATH).  An option word alone ("-x", "--x")
 * names nothing.
 */
static int
rev_file(struct rev *r, const char *word)
{
	const char	*eq, *p, *colon;
	char		 part[PATH_MAX];
	size_t		 n;
	int		 rc;

	if (word[0] != '-' && (rc = rev_one(r, word)) != 0)
		return rc;
	if (word[0] == '-' && word[1] != '-' && word[1] != '\0' &&
	    word[2] != '\0' && (rc = rev_one(r, word + 2)) != 0)
		return rc;
	if ((eq = strchr(word, '=')) == NULL)
		return 0;
	for (p = eq + 1;; p = colon + 1) {
		colon = strchr(p, ':');
		n = colon != NULL ? (size_t)(colon - p) : strlen(p);
		if (n >= sizeof(part))
			return rev_refuse(r, "has a value too long to check");
		memcpy(part, p, n);
		part[n] = '\0';
		if ((rc = rev_one(r, part)) != 0)
			return rc;
		if (colon == NULL)
			return 0;
	}
}

/*
 * A word run as a program: a path is a file; a name is looked up on
 * $PATH, and refused when a writable directory comes before the one that
 * has it (or there is one and none has it): the command could put a
 * program of that name there.
 */
static int
rev_program(struct rev *r, const char *word)
{
	char		*copy, *dir, *save = NULL, *p, *q;
	const char	*root;
	int		 rc = 0;

	if (strchr(word, '/') != NULL || r->path == NULL)
		return rev_file(r, word);
	if ((copy = strdup(r->path)) == NULL)
		return -1;
	for (dir = strtok_r(copy, ":", &save); dir != NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		if ((p = fs_resolve(dir, "/", NULL)) == NULL) {
			rc = -1;
			break;
		}
		if ((root = fs_root_of(r->plan, p)) != NULL) {
			rc = rev_refuse(r, "runs \"%s\" found on $PATH, whose "
			    "directory %s is writable (in %s): write the "
			    "program's absolute path", word, p, root);
			free(p);
			break;
		}
		if (asprintf(&q, "%s/%s", strcmp(p, "/") == 0 ? "" : p,
		    word) == -1) {
			free(p);
			rc = -1;
			break;
		}
		free(p);
		if (access(q, X_OK) == 0) {
			free(q);
			break;
		}
		free(q);
	}
	free(copy);
	return rc;
}

/*
 * One word of a command line: *cmd says it is in a command's place (and
 * is updated), redirect that it follows < or >; *kind is the kind of the
 * command it belongs to.
 */
static int
rev_word(struct rev *r, const char *word, int *cmd, int redirect,
    enum rev_kind *kind)
{
	const char	*eq;
	int		 rc;

	if (strpbrk(word, REV_SPECIAL) != NULL) {
		/* Quoted: code for the command, or a command line. */
		if (*kind == REV_INTERP)
			return rev_refuse(r, "gives \"%s\" to a program "
			    "that runs it as code pisbx cannot read: put the "
			    "reviewer in a script outside the writable "
			    "directories and name it", word);
		if (*cmd || r->depth > 0)
			return rev_refuse(r, "has a command line quoted "
			    "inside a command line: write it out, or put it "
			    "in a script outside the writable directories");
		r->depth++;
		rc = rev_line(r, word);
		r->depth--;
		return rc;
	}
	if (redirect || !*cmd)
		return rev_file(r, word);
	/* NAME=VALUE before a command: the command's place stays. */
	if ((eq = strchr(word, '=')) != NULL && eq != word &&
	    strspn(word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_") == (size_t)(eq - word) && !isdigit((unsigned char)
	    word[0]))
		return rev_file(r, word);
	if (rev_in(rev_refused, word))
		return rev_refuse(r, "uses \"%s\", whose effect pisbx does "
		    "not follow: write the command out with absolute paths, "
		    "or put it in a script outside the writable directories",
		    word);
	if (rev_in(rev_runners, word) || (word[0] == '-' &&
	    *kind == REV_WRAPPER))
		return 0;
	if (rev_in(rev_builtins, word)) {
		*cmd = 0;
		*kind = REV_PROGRAM;
		return 0;
	}
	*kind = rev_kind(word);
	*cmd = *kind == REV_WRAPPER;
	return rev_program(r, word);
}

/* An argument that is not a plain word, read as sh(1) reads a line. */
static int
rev_line(struct rev *r, const char *line)
{
	enum rev_kind	 kind = REV_PROGRAM;
	const char	*p, *bad;
	char		*word;
	size_t		 len = 0;
	int		 quote = 0, have = 0, cmd = 1, redirect = 0, rc = 0;

	if ((bad = strpbrk(line, "$`\\*?[{~")) != NULL)
		return rev_refuse(r, "has '%c' in \"%s\": an expansion, escape "
		    "or glob could name a file the command wrote, and pisbx "
		    "cannot see through it; write the words out, or put the "
		    "reviewer in a script outside the writable directories",
		    *bad, line);
	if ((word = malloc(strlen(line) + 1)) == NULL)
		return -1;
	for (p = line;; p++) {
		if (quote) {
			if (*p == '\0') {
				rc = rev_refuse(r, "has an unterminated "
				    "quote in \"%s\"", line);
				break;
			}
			if (*p == quote)
				quote = 0;
			else
				word[len++] = *p;
			continue;
		}
		if (*p == '\'' || *p == '"') {
			quote = *p;
			have = 1;
			continue;
		}
		if (*p != '\0' && !isspace((unsigned char)*p) &&
		    strchr(";&|()<>!", *p) == NULL) {
			word[len++] = *p;
			have = 1;
			continue;
		}
		if (have) {
			word[len] = '\0';
			if ((rc = rev_word(r, word, &cmd, redirect, &kind)) !=
			    0)
				break;
			len = 0;
			have = 0;
			redirect = 0;
		}
		if (*p == '\0')
			break;
		if (*p == '<' || *p == '>')
			redirect = 1;
		else if (*p == '&' && p > line && (p[-1] == '<' ||
		    p[-1] == '>'))
			;	/* 2>&1 */
		else if (strchr(";&|()!\n", *p) != NULL) {
			cmd = 1;
			kind = REV_PROGRAM;
		}
	}
	free(word);
	return rc;
}

/*
 * Refuse a review.command that could run a file the command can write:
 * 0, -1 on no memory, EXIT_CONFIG (said why, naming the key).
 */
int
fs_reviewer(const struct config *conf, const struct fs_plan *plan,
    const char *home, const char *path)
{
	struct rev	 r;
	enum rev_kind	 kind;
	const char	*arg;
	size_t		 i;
	int		 rc;

	if (conf->review_command.n == 0)
		return 0;
	memset(&r, 0, sizeof(r));
	r.conf = conf;
	r.plan = plan;
	r.home = home;
	r.path = path;
	if ((rc = rev_file(&r, conf->review_command.v[0])) != 0)
		return rc;
	kind = rev_kind(conf->review_command.v[0]);
	for (i = 1; i < conf->review_command.n; i++) {
		r.i = i;
		arg = conf->review_command.v[i];
		if (arg[0] != '\0' && arg[strspn(arg, REV_PLAIN)] == '\0') {
			if (kind != REV_WRAPPER || arg[0] == '-')
				rc = rev_file(&r, arg);
			else if (strchr(arg, '=') != NULL)
				rc = rev_file(&r, arg);	/* NAME=VALUE */
			else {
				rc = rev_program(&r, arg);
				kind = rev_kind(arg);
			}
		} else if (kind == REV_INTERP || kind == REV_WRAPPER)
			rc = rev_refuse(&r, "gives \"%s\" to a program that "
			    "runs it as code pisbx cannot read: put the "
			    "reviewer in a script outside the writable "
			    "directories and name it", arg);
		else
			rc = rev_line(&r, arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}
