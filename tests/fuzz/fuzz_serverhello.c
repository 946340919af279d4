/*
 * libFuzzer target: the scan of a server's first records for its
 * ServerHello (tls_scan_serverhello), fed in pieces whose sizes the
 * first input byte picks, as a relay reads them.
 */
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "proxy/parse.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tls_scan ts;
	const char *why;
	size_t off, n, used, step;
	enum tls_scan_result res = TLS_SCAN_MORE;

	if (size < 1)
		return 0;
	step = (size_t)data[0] % 64 + 1;
	data++;
	size--;
	tls_scan_init(&ts);
	for (off = 0; off < size && res != TLS_SCAN_HELLO &&
	    res != TLS_SCAN_INVALID; off += used) {
		n = size - off < step ? size - off : step;
		res = tls_scan_serverhello(&ts, data + off, n, &used, &why);
		/* Progress on every call, never past what was given. */
		if (used > n || (used == 0 && res != TLS_SCAN_INVALID))
			__builtin_trap();
		if (res == TLS_SCAN_INVALID && why == NULL)
			__builtin_trap();
	}
	return 0;
}
