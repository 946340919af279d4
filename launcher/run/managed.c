/*
 * The managed layer's word on a run, in the parent, once the filesystem
 * plan knows the project: the loader (policy/managed.c) checked every
 * absolute and "~" entry at load; entries relative to the project, the
 * working directory (always readable in the sandbox) and the default
 * workspace (writable) can only be checked now.  A run that would open
 * what /etc/pisbx/managed.json denies does not start.
 */
#include <stddef.h>

#include "common/log.h"
#include "policy/policy.h"
#include "launcher/launcher.h"
#include "launcher/fs/fs.h"
#include "launcher/run/run.h"

int
managed_run_check(const struct config *conf, const struct fs_plan *plan,
    const char *cwd)
{
	struct config_errors	 errs = { NULL, 0 };
	size_t			 i;

	if (config_managed_paths(conf, plan->project, plan->home, &errs) ==
	    -1) {
		for (i = 0; i < errs.n; i++)
			log_warnx("%s", errs.msg[i]);
		log_warnx("the config loosens the managed file %s; nothing "
		    "was run", MANAGED_PATH);
		config_errors_clear(&errs);
		return EXIT_CONFIG;
	}
	if (config_managed_denied(conf, cwd, plan->home, 0) ||
	    (plan->workspace != NULL && config_managed_denied(conf,
	    plan->workspace, plan->home, 1))) {
		log_warnx("the working directory %s (or its workspace) lies "
		    "in a path the managed file %s denies, which a run would "
		    "open; nothing was run", cwd, MANAGED_PATH);
		return EXIT_CONFIG;
	}
	return 0;
}
