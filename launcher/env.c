/*
 * The command's environment: the caller's, minus the supervisor's
 * capability variables (and the config's review capabilityEnv), plus the
 * proxy settings that make clients use the sandbox's only way out.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/launcher.h"

#define ENV_HTTP	"http://127.0.0.1:3128"
#define ENV_SOCKS	"socks5h://127.0.0.1:1080"
#define ENV_NOPROXY	"localhost,127.0.0.1,::1"

/* Set by us: the caller's values are dropped. */
static const char *const env_ours[] = {
	"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy",
	"ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy", "GIT_SSH_COMMAND",
	"TMPDIR", "TMP", "TEMP", "PISBX_SANDBOX", "PISBX_DEPTH",
};

static int	env_named(const char *entry, const char *name);
static int	env_add(char ***, size_t *, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));

static int
env_named(const char *entry, const char *name)
{
	size_t	len = strlen(name);

	return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

static int
env_add(char ***v, size_t *n, const char *fmt, ...)
{
	va_list	 ap;
	char	**nv, *s;
	int	 rc;

	va_start(ap, fmt);
	rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc == -1)
		return -1;
	if ((nv = reallocarray(*v, *n + 2, sizeof(*nv))) == NULL) {
		free(s);
		return -1;
	}
	nv[(*n)++] = s;
	nv[*n] = NULL;
	*v = nv;
	return 0;
}

char **
env_build(char **in, const char *tmpdir, const char *self_exe,
    const char *capability_env, int depth)
{
	char	**v = NULL;
	size_t	  n = 0, i, j;
	int	  skip, rc = 0;

	for (i = 0; in != NULL && in[i] != NULL; i++) {
		skip = strncmp(in[i], "PISBX_SUPERVISOR_", 17) == 0 ||
		    strchr(in[i], '=') == NULL;
		if (capability_env != NULL && env_named(in[i], capability_env))
			skip = 1;
		for (j = 0; j < sizeof(env_ours) / sizeof(*env_ours); j++)
			if (env_named(in[i], env_ours[j]))
				skip = 1;
		if (!skip)
			rc |= env_add(&v, &n, "%s", in[i]);
	}
	rc |= env_add(&v, &n, "HTTP_PROXY=%s", ENV_HTTP);
	rc |= env_add(&v, &n, "http_proxy=%s", ENV_HTTP);
	rc |= env_add(&v, &n, "HTTPS_PROXY=%s", ENV_HTTP);
	rc |= env_add(&v, &n, "https_proxy=%s", ENV_HTTP);
	rc |= env_add(&v, &n, "ALL_PROXY=%s", ENV_SOCKS);
	rc |= env_add(&v, &n, "all_proxy=%s", ENV_SOCKS);
	rc |= env_add(&v, &n, "NO_PROXY=%s", ENV_NOPROXY);
	rc |= env_add(&v, &n, "no_proxy=%s", ENV_NOPROXY);
	/* ssh runs ProxyCommand through the shell: quote the path. */
	rc |= env_add(&v, &n, "GIT_SSH_COMMAND=ssh -o "
	    "ProxyCommand=\"'%s' --connect-proxy %%h %%p\"", self_exe);
	rc |= env_add(&v, &n, "TMPDIR=%s", tmpdir);
	rc |= env_add(&v, &n, "TMP=%s", tmpdir);
	rc |= env_add(&v, &n, "TEMP=%s", tmpdir);
	rc |= env_add(&v, &n, "PISBX_SANDBOX=1");
	rc |= env_add(&v, &n, "PISBX_DEPTH=%d", depth + 1);
	if (rc != 0) {
		env_free(v);
		return NULL;
	}
	return v;
}

void
env_free(char **v)
{
	size_t	i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}
