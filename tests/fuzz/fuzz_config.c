/*
 * libFuzzer target for the config loader: arbitrary bytes as a config file
 * and as a supervisor's network policy.  Everything is freed, so the leak
 * checker sees any path that forgets memory; errors are walked to make
 * sure each message is a valid, printable string.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
errors_check(struct config_errors *errs, int failed)
{
	const unsigned char *p;
	size_t i;

	/* A failed load always says why; a successful one says nothing. */
	if ((failed && errs->n == 0) || (!failed && errs->n != 0))
		abort();
	for (i = 0; i < errs->n; i++)
		for (p = (const unsigned char *)errs->msg[i]; *p != '\0'; p++)
			if (*p < 0x20 || *p >= 0x7f)
				abort();
	config_errors_clear(errs);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_errors errs = { NULL, 0 };
	struct config *conf;
	struct policy *pol;

	conf = config_load_buffer((const char *)data, size, "fuzz", &errs);
	if (conf != NULL && conf->policy == NULL)
		abort();
	errors_check(&errs, conf == NULL);
	config_free(conf);

	pol = config_network_policy((const char *)data, size, "fuzz", &errs);
	errors_check(&errs, pol == NULL);
	if (pol != NULL)
		policy_free(pol);
	return 0;
}
