/*
 * sha256: SHA-256 (FIPS 180-4) of a buffer, for names derived from
 * paths.  pisbx-run's only use of a digest: linking libcrypto for it
 * cost every sandboxed command the library's loading and its
 * configuration file (about 1 ms; docs/performance.md).
 */
#ifndef PISBX_SHA256_H
#define PISBX_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN	32

/* The digest of len bytes at data, into md. */
void	sha256(const void *data, size_t len, uint8_t md[SHA256_LEN]);

#endif
