/*
 * libFuzzer target: the TLS ClientHello peek over a tunnel's first
 * bytes, and the host check the relay applies to a found SNI.
 */
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "policy/policy.h"
#include "proxy/parse.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char sni[HOST_TEXT_MAX];
	const char *why, *err;
	struct host h;
	size_t used;
	enum tls_peek_result res;

	if (size > TLS_PEEK_MAX)
		size = TLS_PEEK_MAX;
	res = tls_peek_clienthello(data, size, sni, sizeof(sni), &used, &why);
	/* A hello never takes more than it was given. */
	if (used > size)
		__builtin_trap();
	if (res == TLS_PEEK_SNI)
		(void)host_canon(sni, strlen(sni), &h, &err);
	return 0;
}
