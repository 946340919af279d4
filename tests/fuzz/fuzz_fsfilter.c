/*
 * libFuzzer target for the settings-file filters (launcher/fs/fsfilter*.c):
 * arbitrary bytes as a git config, go's env file, a mise config and an
 * npmrc or pip.conf (whose kept text never names a credential).  A
 * git config that is read gives text git reads back the same; every
 * result is freed, so the leak checker sees a path that forgets memory.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "launcher/fs/fs.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char	*fuzz_include(void *, const char *, const char *);

/* Every include kept, as one fixed copy. */
static char *
fuzz_include(void *arg, const char *path, const char *dir)
{
	(void)arg;
	(void)path;
	(void)dir;
	return strdup("/copy");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fsfilter_out	out, again;
	const char		*text = (const char *)data;

	memset(&out, 0, sizeof(out));
	if (fsfilter_git(text, size, fuzz_include, NULL, "/d", &out) == 0) {
		memset(&again, 0, sizeof(again));
		if (fsfilter_git(out.text, out.len, fuzz_include, NULL, "/d",
		    &again) != 0 || strcmp(again.text, out.text) != 0 ||
		    again.dropped != NULL)
			abort();
		free(again.text);
	}
	free(out.text);
	free(out.dropped);
	memset(&out, 0, sizeof(out));
	(void)fsfilter_goenv(text, size, &out);
	free(out.text);
	free(out.dropped);
	memset(&out, 0, sizeof(out));
	(void)fsfilter_mise(text, size, &out);
	free(out.text);
	free(out.dropped);
	/* An npmrc or pip.conf: what is kept has no user in a URL. */
	memset(&out, 0, sizeof(out));
	if (fsfilter_ini(text, size, &out) == 0 && fsfilter_secret(out.text))
		abort();
	free(out.text);
	free(out.dropped);
	return 0;
}
