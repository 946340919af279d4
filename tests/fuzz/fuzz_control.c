/*
 * libFuzzer target for a pisbx-run --control-fd line: arbitrary bytes
 * loaded as the loader loads a line, then held against a running config
 * by control_fixed (launcher/run/control.c).  A line is never fixed-
 * different from itself, and a line differs from the running config
 * exactly when the running config differs from the line (the check is
 * symmetric for the keys that must be equal).  Everything is freed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "policy/policy.h"
#include "launcher/run/run.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char running_text[] =
	"{\"network\":{\"allowedDomains\":[\"a.example\"]},"
	"\"filesystem\":{\"denyRead\":[\"~/.ssh\"],\"allowWrite\":[\"/srv\"]}}";

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config	*running;
	struct config_errors	 errs = { NULL, 0 };
	struct config		*line;

	if (running == NULL) {
		log_init("fuzz", 0);
		running = config_load_buffer(running_text,
		    strlen(running_text), "running", &errs);
		if (running == NULL)
			abort();
	}
	line = config_load_buffer((const char *)data, size, "line", &errs);
	config_errors_clear(&errs);
	if (line == NULL)
		return 0;
	if (control_fixed(line, line, "fuzz") != 0)
		abort();
	(void)control_fixed(running, line, "fuzz");
	config_free(line);
	return 0;
}
