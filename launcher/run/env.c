/*
 * The command's environment: the caller's, minus the supervisor's
 * capability variables (and the config's review capabilityEnv), plus the
 * proxy settings that make clients use the sandbox's only way out.
 *
 * Each client family spells "use this proxy" its own way; the table says
 * which spelling is for whom (docs/pisbx-run.1, ENVIRONMENT).  A client
 * that reads none of them fails at its first connection: the sandbox's
 * network has no route and no DNS, so nothing leaves unseen.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/shell.h"
#include "launcher/run/run.h"

#define ENV_HTTP	"http://127.0.0.1:3128"
#define ENV_SOCKS	"socks5h://127.0.0.1:1080"
#define ENV_NOPROXY	"localhost,127.0.0.1,::1"
/*
 * The JVM reads no *_PROXY variable.  The JDKs found get the proxy in
 * their net.properties (fspolicy.c, fs_java), silently.  Where none was
 * found, or the caller set JAVA_TOOL_OPTIONS (a system property there
 * beats net.properties), ours go in JAVA_TOOL_OPTIONS, which reaches
 * every JVM (java, javac, mvn, gradle and its daemon) and makes each
 * print "Picked up JAVA_TOOL_OPTIONS": the last -D of a name wins, so
 * ours go after the caller's own options.  nonProxyHosts is NO_PROXY.
 */
#define ENV_JAVA	"-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 " \
			"-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 " \
			"-Dhttp.nonProxyHosts=localhost|127.*|[::1]"

struct env_pair {
	const char	*name;
	const char	*value;
};

/* Set by us, whatever the caller had. */
static const struct env_pair env_fixed[] = {
	/* curl, wget, git, pip, uv, cargo, go, deno, bun, python, ruby... */
	{ "HTTP_PROXY", ENV_HTTP }, { "http_proxy", ENV_HTTP },
	{ "HTTPS_PROXY", ENV_HTTP }, { "https_proxy", ENV_HTTP },
	{ "ALL_PROXY", ENV_SOCKS }, { "all_proxy", ENV_SOCKS },
	{ "NO_PROXY", ENV_NOPROXY }, { "no_proxy", ENV_NOPROXY },
	/* npm, pnpm and yarn 1: over a project .npmrc's own proxy= */
	{ "npm_config_proxy", ENV_HTTP },
	{ "npm_config_https_proxy", ENV_HTTP },
	{ "npm_config_noproxy", ENV_NOPROXY },
	/* yarn 2 and later read no *_PROXY variable at all */
	{ "YARN_HTTP_PROXY", ENV_HTTP }, { "YARN_HTTPS_PROXY", ENV_HTTP },
	/* Node's own fetch() and http (22.21, 24 and later) */
	{ "NODE_USE_ENV_PROXY", "1" },
	/* rsync:// (the rsync daemon protocol) through CONNECT */
	{ "RSYNC_PROXY", "127.0.0.1:3128" },
	{ "PISBX_SANDBOX", "1" },
};

/*
 * With TLS termination, the run's CA bundle (the system's roots, the
 * run's CA, extraCaCertPaths) in each family's spelling of "trust these",
 * the caller's values dropped: a client that reads its own bundle would
 * not trust the proxy's certificates.  The JVM's is a trust store, in
 * JAVA_TOOL_OPTIONS (env_build).
 */
static const char *const env_ca[] = {
	"SSL_CERT_FILE",	/* OpenSSL: curl, wget, git, python, ruby */
	"CURL_CA_BUNDLE",	/* curl */
	"REQUESTS_CA_BUNDLE",	/* python requests, pip's vendored copy */
	"PIP_CERT",		/* pip */
	"NODE_EXTRA_CA_CERTS",	/* node (with its own roots), npm */
	"GIT_SSL_CAINFO",	/* git over https */
	"CARGO_HTTP_CAINFO",	/* cargo */
	"AWS_CA_BUNDLE",	/* aws-cli, the AWS SDKs */
	"DENO_CERT",		/* deno */
	"NIX_SSL_CERT_FILE",	/* Nix's builds of all of the above */
};

/* Set by us from the run (below), the caller's values dropped. */
static const char *const env_ours[] = {
	"GIT_SSH_COMMAND", "GIT_PROXY_COMMAND", "JAVA_TOOL_OPTIONS",
	"TMPDIR", "TMP", "TEMP", "PISBX_DEPTH",
};

/*
 * filesystem.caches: each tool's cache in its own directory under the
 * project's cache directory (~/.cache/pisbx/<project>-<hash>), which the
 * host's own tools and other projects' runs never read.  The caller's value is replaced: it names a place the
 * sandbox cannot write, or one the host's tools read.
 */
static const struct env_cache {
	enum fs_cache	 which;
	const char	*name;
	const char	*sub;
} env_caches[] = {
	{ CACHE_NPM, "npm_config_cache", "npm" },
	{ CACHE_YARN, "YARN_CACHE_FOLDER", "yarn" },		/* yarn 1 */
	{ CACHE_YARN, "YARN_GLOBAL_FOLDER", "yarn-berry" },	/* yarn 2+ */
	{ CACHE_PIP, "PIP_CACHE_DIR", "pip" },
	{ CACHE_UV, "UV_CACHE_DIR", "uv" },
	/* The toolchain stays where it is (~/.cargo/bin on PATH, rustup). */
	{ CACHE_CARGO, "CARGO_HOME", "cargo" },
	{ CACHE_GO, "GOPATH", "go" },		/* modules: GOPATH/pkg/mod */
	{ CACHE_GO, "GOMODCACHE", "go/pkg/mod" },
	{ CACHE_GO, "GOCACHE", "go-build" },
	{ CACHE_GRADLE, "GRADLE_USER_HOME", "gradle" },
	{ CACHE_BUN, "BUN_INSTALL_CACHE_DIR", "bun" },
	{ CACHE_DENO, "DENO_DIR", "deno" },
	/* node-gyp, pre-commit, ruff, mypy... anything XDG */
	{ CACHE_XDG, "XDG_CACHE_HOME", "xdg" },
};

static int	env_named(const char *entry, const char *name);
static int	env_same_name(const char *a, const char *b);
static int	env_set_here(const char *, const struct env_inputs *);
static char	*env_git_ssh(const char *self_exe);
static int	env_add(char ***, size_t *, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));

static int
env_named(const char *entry, const char *name)
{
	size_t	len = strlen(name);

	return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

/* Whether two "NAME=VALUE" entries set the same name. */
static int
env_same_name(const char *a, const char *b)
{
	size_t	len = strcspn(a, "=");

	return a[len] == '=' && strncmp(a, b, len + 1) == 0;
}

char *
env_ssh_percent(const char *s)
{
	char	*out, *p;

	if ((out = malloc(strlen(s) * 2 + 1)) == NULL)
		return NULL;
	for (p = out; *s != '\0'; s++) {
		if (*s == '%')
			*p++ = '%';
		*p++ = *s;
	}
	*p = '\0';
	return out;
}

/*
 * GIT_SSH_COMMAND for self_exe.  Two shells read it: git's, which runs
 * "ssh -o ProxyCommand=…", and ssh's, which runs the ProxyCommand after
 * expanding its %-tokens.  So the path is quoted for ssh's shell with
 * every '%' doubled, and the whole option again for git's: a path with
 * a quote, a space or a '%' in it reaches execve as it is.
 */
static char *
env_git_ssh(const char *self_exe)
{
	char	*pct = NULL, *inner = NULL, *opt = NULL, *outer = NULL;
	char	*out = NULL;

	if ((pct = env_ssh_percent(self_exe)) == NULL)
		goto fail;
	if ((inner = malloc(SHELL_QUOTE_SIZE(strlen(pct)))) == NULL)
		goto fail;
	shell_quote(inner, pct);
	if (asprintf(&opt, "ProxyCommand=%s --connect-proxy %%h %%p",
	    inner) == -1) {
		opt = NULL;
		goto fail;
	}
	if ((outer = malloc(SHELL_QUOTE_SIZE(strlen(opt)))) == NULL)
		goto fail;
	shell_quote(outer, opt);
	if (asprintf(&out, "ssh -o %s", outer) == -1)
		out = NULL;
fail:
	free(pct);
	free(inner);
	free(opt);
	free(outer);
	return out;
}

static int
env_add(char ***v, size_t *n, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;
	int	 rc;

	va_start(ap, fmt);
	rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc == -1)
		return -1;
	return env_push(v, n, s);
}

int
env_push(char ***v, size_t *n, char *s)
{
	char	**nv;

	if (s == NULL)
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

/*
 * Whether env_build sets the variable of entry ("NAME=VALUE") for the
 * command itself, the caller's value dropped.
 */
static int
env_set_here(const char *entry, const struct env_inputs *ei)
{
	size_t	j;

	for (j = 0; j < sizeof(env_fixed) / sizeof(*env_fixed); j++)
		if (env_named(entry, env_fixed[j].name))
			return 1;
	for (j = 0; j < sizeof(env_ours) / sizeof(*env_ours); j++)
		if (env_named(entry, env_ours[j]))
			return 1;
	for (j = 0; ei->cache_dir != NULL &&
	    j < sizeof(env_caches) / sizeof(*env_caches); j++)
		if ((ei->caches & (1U << env_caches[j].which)) &&
		    env_named(entry, env_caches[j].name))
			return 1;
	if (ei->tmux_private && env_named(entry, "TMUX_TMPDIR"))
		return 1;
	for (j = 0; ei->ca_bundle != NULL &&
	    j < sizeof(env_ca) / sizeof(*env_ca); j++)
		if (env_named(entry, env_ca[j]))
			return 1;
	return 0;
}

char **
env_build(char **in, const struct env_inputs *ei)
{
	const char	*java = NULL, *maven = NULL;
	char		**v = NULL, *ssh;
	size_t		  n = 0, i, j;
	int		  skip, rc = 0;

	for (i = 0; in != NULL && in[i] != NULL; i++) {
		skip = strncmp(in[i], "PISBX_SUPERVISOR_", 17) == 0 ||
		    strchr(in[i], '=') == NULL;
		if (ei->capability_env != NULL &&
		    env_named(in[i], ei->capability_env))
			skip = 1;
		if (env_set_here(in[i], ei))
			skip = 1;
		for (j = 0; ei->extra != NULL && ei->extra[j] != NULL; j++)
			if (env_same_name(ei->extra[j], in[i]))
				skip = 1;
		/* pisbx-sh -l: its file (rundir_login) hands it back. */
		if (ei->bash_env != NULL && env_named(in[i], "BASH_ENV"))
			skip = 1;
		if (env_named(in[i], "JAVA_TOOL_OPTIONS"))
			java = strchr(in[i], '=') + 1;
		if (env_named(in[i], "MAVEN_OPTS")) {
			maven = strchr(in[i], '=') + 1;
			skip = 1;
		}
		if (!skip)
			rc |= env_add(&v, &n, "%s", in[i]);
	}
	for (j = 0; j < sizeof(env_fixed) / sizeof(*env_fixed); j++)
		rc |= env_add(&v, &n, "%s=%s", env_fixed[j].name,
		    env_fixed[j].value);
	/*
	 * The masked credentials.  One the JVM or Maven reads joins ours as
	 * the caller's would; any other name set here would be there twice,
	 * and which one a program reads is its own choice: refused.
	 */
	for (j = 0; ei->extra != NULL && ei->extra[j] != NULL; j++) {
		if (env_named(ei->extra[j], "JAVA_TOOL_OPTIONS"))
			java = strchr(ei->extra[j], '=') + 1;
		else if (env_named(ei->extra[j], "MAVEN_OPTS"))
			maven = strchr(ei->extra[j], '=') + 1;
		else if (env_set_here(ei->extra[j], ei)) {
			log_warnx("credentials.envVars: pisbx-run sets $%.*s "
			    "for the command itself, so it cannot be masked: "
			    "give it mode \"deny\", or remove the entry",
			    (int)strcspn(ei->extra[j], "="), ei->extra[j]);
			errno = EINVAL;
			rc = -1;
		} else
			rc |= env_add(&v, &n, "%s", ei->extra[j]);
	}
	for (j = 0; ei->ca_bundle != NULL &&
	    j < sizeof(env_ca) / sizeof(*env_ca); j++)
		rc |= env_add(&v, &n, "%s=%s", env_ca[j], ei->ca_bundle);
	/*
	 * The caller's own already makes the JVM say so: ours join it.  A
	 * trust store has no net.properties of its own: always here.
	 */
	if (!ei->java_quiet || (java != NULL && java[0] != '\0') ||
	    ei->truststore != NULL)
		rc |= env_add(&v, &n, "JAVA_TOOL_OPTIONS=%s%s%s%s%s%s",
		    java != NULL ? java : "", java != NULL &&
		    java[0] != '\0' ? " " : "", ENV_JAVA,
		    ei->truststore != NULL ? " -Djavax.net.ssl.trustStore=" :
		    "", ei->truststore != NULL ? ei->truststore : "",
		    ei->truststore != NULL ?
		    " -Djavax.net.ssl.trustStoreType=PKCS12" : "");
	for (j = 0; ei->cache_dir != NULL &&
	    j < sizeof(env_caches) / sizeof(*env_caches); j++)
		if (ei->caches & (1U << env_caches[j].which))
			rc |= env_add(&v, &n, "%s=%s/%s", env_caches[j].name,
			    ei->cache_dir, env_caches[j].sub);
	/* Maven reads its local repository from a system property. */
	if (ei->cache_dir != NULL && (ei->caches & (1U << CACHE_MAVEN)))
		rc |= env_add(&v, &n, "MAVEN_OPTS=%s%s-Dmaven.repo.local=%s/"
		    "maven", maven != NULL ? maven : "", maven != NULL &&
		    maven[0] != '\0' ? " " : "", ei->cache_dir);
	else if (maven != NULL)
		rc |= env_add(&v, &n, "MAVEN_OPTS=%s", maven);
	if ((ssh = env_git_ssh(ei->self_exe)) == NULL)
		rc = -1;
	else
		rc |= env_add(&v, &n, "GIT_SSH_COMMAND=%s", ssh);
	free(ssh);
	/* git runs GIT_PROXY_COMMAND HOST PORT itself, with no shell. */
	if (ei->git_proxy != NULL)
		rc |= env_add(&v, &n, "GIT_PROXY_COMMAND=%s", ei->git_proxy);
	if (ei->bash_env != NULL)
		rc |= env_add(&v, &n, "BASH_ENV=%s", ei->bash_env);
	rc |= env_add(&v, &n, "TMPDIR=%s", ei->tmpdir);
	rc |= env_add(&v, &n, "TMP=%s", ei->tmpdir);
	rc |= env_add(&v, &n, "TEMP=%s", ei->tmpdir);
	/*
	 * tmux makes its server's socket in $TMUX_TMPDIR/tmux-UID, else in
	 * /tmp, which is read-only here: with no host socket reachable, a
	 * tmux started inside gets a server of its own in the run's TMPDIR
	 * (gone with the run).  A config that lets commands reach host
	 * sockets keeps the caller's value, for the host's server.
	 */
	if (ei->tmux_private)
		rc |= env_add(&v, &n, "TMUX_TMPDIR=%s", ei->tmpdir);
	rc |= env_add(&v, &n, "PISBX_DEPTH=%d", ei->depth + 1);
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
