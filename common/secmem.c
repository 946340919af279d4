/*
 * secmem: randomness, wiping and constant-time comparison for secrets
 * (capabilities, request ids) without libcrypto, and the one way a
 * secret is taken from the environment.
 */
#include <sys/random.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/secmem.h"

int
secmem_random(void *buf, size_t len)
{
	unsigned char	*p = buf;
	ssize_t		 n;

	/* Blocks only until the pool is initialised, never short of it. */
	while (len > 0) {
		if ((n = getrandom(p, len, 0)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void
secmem_wipe(void *p, size_t len)
{
	explicit_bzero(p, len);
}

int
secmem_cmp(const void *a, const void *b, size_t len)
{
	const volatile unsigned char	*x = a, *y = b;
	unsigned char			 d = 0;
	size_t				 i;

	for (i = 0; i < len; i++)
		d |= x[i] ^ y[i];
	return d != 0;
}

extern char **environ;

/* A secret taken from the environment, kept for the process's life. */
struct secmem_env {
	struct secmem_env	*next;
	char			*name;
	char			*value;
};

static struct secmem_env	*secmem_envs;

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
secmem_env(const char *name)
{
	struct secmem_env	*se;
	size_t			 nlen = strlen(name);
	char			**ep, *value = NULL;

	for (ep = environ; ep != NULL && *ep != NULL; ep++) {
		if (strncmp(*ep, name, nlen) != 0 || (*ep)[nlen] != '=')
			continue;
		if (value == NULL && (value = strdup(*ep + nlen + 1)) == NULL)
			return NULL;
		secmem_wipe(*ep + nlen + 1, strlen(*ep + nlen + 1));
	}
	for (se = secmem_envs; se != NULL; se = se->next)
		if (strcmp(se->name, name) == 0)
			break;
	if (value == NULL)
		return se != NULL ? se->value : NULL;
	unsetenv(name);
	if (se == NULL) {
		if ((se = calloc(1, sizeof(*se))) == NULL ||
		    (se->name = strdup(name)) == NULL) {
			free(se);
			secmem_wipe(value, strlen(value));
			free(value);
			return NULL;
		}
		se->next = secmem_envs;
		secmem_envs = se;
	} else {
		secmem_wipe(se->value, strlen(se->value));
		free(se->value);
	}
	se->value = value;
	return value;
}
