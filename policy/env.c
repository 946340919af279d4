/*
 * The one way a secret is taken from the environment (the upstream
 * proxy's credentialsEnv, a review socket's or the supervisor's
 * capability): read once, wiped where /proc/PID/environ shows it, kept
 * for the process's life so that a reload finds it again.
 */
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

extern char **environ;

/* A secret taken from the environment, kept for the process's life. */
struct policy_env {
	struct policy_env	*next;
	char			*name;
	char			*value;
};

static struct policy_env	*policy_envs;

/*
 * unsetenv(3) only drops the pointer from environ: the bytes stay in the
 * block the kernel copied in at execve, which /proc/PID/environ shows to
 * every process of the same user (and a fork carries along).  So every
 * entry of the name (execve allows duplicates) has its value overwritten
 * in place first, then the variable goes.  The copy is kept, so that a
 * reload (SIGHUP) finds the secret again; a variable set again since is
 * taken anew.
 */
const char *
policy_env_take(const char *name)
{
	struct policy_env	*se;
	size_t			 nlen = strlen(name);
	char			**ep, *value = NULL;

	for (ep = environ; ep != NULL && *ep != NULL; ep++) {
		if (strncmp(*ep, name, nlen) != 0 || (*ep)[nlen] != '=')
			continue;
		if (value == NULL && (value = strdup(*ep + nlen + 1)) == NULL)
			return NULL;
		explicit_bzero(*ep + nlen + 1, strlen(*ep + nlen + 1));
	}
	for (se = policy_envs; se != NULL; se = se->next)
		if (strcmp(se->name, name) == 0)
			break;
	if (value == NULL)
		return se != NULL ? se->value : NULL;
	unsetenv(name);
	if (se == NULL) {
		if ((se = calloc(1, sizeof(*se))) == NULL ||
		    (se->name = strdup(name)) == NULL) {
			free(se);
			explicit_bzero(value, strlen(value));
			free(value);
			return NULL;
		}
		se->next = policy_envs;
		policy_envs = se;
	} else {
		explicit_bzero(se->value, strlen(se->value));
		free(se->value);
	}
	se->value = value;
	return value;
}
