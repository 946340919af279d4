/*
 * The command line: the shell that runs it (bash where there is one), its
 * argv, and its text for the terminal's question.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/shell.h"
#include "launcher/run/run.h"

/*
 * The command as a person would type it, for the terminal's question: the
 * -c line, or the words, each quoted only when the shell would need it.
 */
char *
run_cmdline(const struct run_opts *o)
{
	char	*s = NULL, *p, *q;
	size_t	 i, len = 1;

	if (o->line != NULL)
		return strdup(o->line);
	for (i = 0; o->argv[i] != NULL; i++)
		len += SHELL_QUOTE_SIZE(strlen(o->argv[i])) + 1;
	if ((s = calloc(1, len)) == NULL)
		return NULL;
	for (i = 0, p = s; o->argv[i] != NULL; i++) {
		if (i > 0)
			*p++ = ' ';
		q = o->argv[i];
		if (q[0] != '\0' && q[strspn(q, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%")] == '\0') {
			memcpy(p, q, strlen(q) + 1);
			p += strlen(q);
		} else
			p = shell_quote(p, q);
	}
	return s;
}

/*
 * The shell for a command line: bash, whatever $SHELL says (agents write
 * bash: "[[", arrays, "source"); sh only where there is no bash.
 */
const char *
run_bash(void)
{
	static const char *const shells[] = { "/bin/bash", "/usr/bin/bash" };
	size_t	i;

	for (i = 0; i < sizeof(shells) / sizeof(*shells); i++)
		if (access(shells[i], X_OK) == 0)
			return shells[i];
	return "/bin/sh";
}

/*
 * bash [OPTION...] [-l] -c LINE [$0 $1...], or NULL on no memory.  With
 * login_rc (rundir_login) an interactive login shell reads it as its
 * rcfile instead of being one: bash reads nothing after the profile of
 * an interactive login shell.
 */
char **
run_shell_argv(const struct run_opts *o, const char *login_rc)
{
	char	**v;
	size_t	  n = 0, i, nargs = 0, nopts = 0;

	while (o->line_args != NULL && o->line_args[nargs] != NULL)
		nargs++;
	while (o->shopts != NULL && o->shopts[nopts] != NULL)
		nopts++;
	if ((v = calloc(nargs + nopts + 7, sizeof(*v))) == NULL)
		return NULL;
	v[n++] = (char *)run_bash();
	if (o->login && login_rc != NULL && o->interactive) {
		v[n++] = (char *)"--rcfile";
		v[n++] = (char *)login_rc;
	}
	for (i = 0; i < nopts; i++)
		v[n++] = o->shopts[i];
	if (o->login && (login_rc == NULL || !o->interactive))
		v[n++] = (char *)"-l";
	v[n++] = (char *)"-c";
	v[n++] = (char *)o->line;
	for (i = 0; i < nargs; i++)
		v[n++] = o->line_args[i];
	v[n] = NULL;
	return v;
}
