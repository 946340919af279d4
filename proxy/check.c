/*
 * --check and --explain, one implementation for the two programs a user
 * runs them on: pisbx-proxy and pisbx-run.  Both load the trusted config
 * as its layer under the managed file, print the merged policy with the
 * source and layer of every entry (config_walk), or what decides a
 * target (policy_explain), and start nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "proxy/proxy.h"

static void	 check_line_cb(const char *, void *);

struct config *
check_load(const char *path, enum config_layer layer)
{
	struct config_errors	 errs;
	struct config		*conf;
	size_t			 i;

	memset(&errs, 0, sizeof(errs));
	if ((conf = config_load_layer(path, layer, &errs)) == NULL) {
		for (i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msg[i]);
		if (errs.n == 0)
			fprintf(stderr, "%s: cannot load the configuration\n",
			    path != NULL ? path : "(embedded default)");
	}
	config_errors_clear(&errs);
	return conf;
}

/* One line of the merged policy. */
static void
check_line_cb(const char *line, void *arg)
{
	(void)arg;
	printf("%s\n", line);
}

int
check_print(const struct config *conf, int verbose)
{
	size_t	 i;

	printf("%s: configuration OK\n", conf->path);
	if (verbose && config_walk(conf, check_line_cb, NULL) == -1)
		return -1;
	fflush(stdout);
	for (i = 0; verbose && i < conf->notes.n; i++)
		fprintf(stderr, "%s\n", conf->notes.msg[i]);
	if (!verbose && conf->notes.n > 0)
		fprintf(stderr, "%zu note%s on keys accepted without effect "
		    "here: --check -v shows %s\n", conf->notes.n,
		    conf->notes.n == 1 ? "" : "s", conf->notes.n == 1 ? "it" :
		    "them");
	return 0;
}

int
check_explain(const struct config *conf, char *const *targets, size_t n)
{
	char	*line;
	size_t	 i;

	for (i = 0; i < n; i++) {
		if ((line = policy_explain(conf, targets[i])) == NULL)
			return -1;
		printf("%s\n", line);
		free(line);
	}
	fflush(stdout);
	return 0;
}
