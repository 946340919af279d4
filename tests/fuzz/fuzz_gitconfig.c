/*
 * libFuzzer target for gitnew_config, which reads a git config the
 * sandbox wrote: any bytes in; what comes out is printable ASCII, within
 * its buffer, and empty exactly when nothing was found; anything with
 * a NUL byte names something.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "launcher/git/git.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gitnew_found	 f;
	const unsigned char	*p;
	size_t			 len;

	gitnew_found_init(&f);
	gitnew_config((const char *)data, size, "c", &f);
	len = strnlen(f.text, sizeof(f.text));
	if (len == sizeof(f.text) || (f.n == 0) != (len == 0))
		abort();
	for (p = (const unsigned char *)f.text; *p != '\0'; p++)
		if (*p < 0x20 || *p >= 0x7f)
			abort();
	if (size > 0 && memchr(data, '\0', size) != NULL && f.n == 0)
		abort();
	return 0;
}
