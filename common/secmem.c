/*
 * secmem: randomness, wiping and constant-time comparison for secrets
 * (capabilities, request ids) without libcrypto.  A secret in the
 * environment is taken by policy_env_take (policy/env.c).
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
