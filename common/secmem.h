/*
 * secmem: the small primitives secrets need -- kernel randomness, a wipe
 * the compiler cannot drop, a comparison whose time does not depend on
 * where the bytes differ, and taking a secret out of the environment.
 * Here rather than libcrypto so that pisbx-run does not load libcrypto
 * (about 1 ms per start) for them.
 */
#ifndef PISBX_SECMEM_H
#define PISBX_SECMEM_H

#include <stddef.h>

/* Fill buf with len bytes from getrandom(2); 0, or -1 with errno set. */
int	secmem_random(void *buf, size_t len);
/* Zero len bytes at p (explicit_bzero: never optimised away). */
void	secmem_wipe(void *p, size_t len);
/* 0 when the len bytes at a and b are equal, else 1; constant time. */
int	secmem_cmp(const void *a, const void *b, size_t len);

#endif
