/*
 * Supervisor mode: an agent host that runs many workers through pisbx-run
 * sets PISBX_SUPERVISOR_SOCKET and PISBX_SUPERVISOR_CAPABILITY; each run
 * registers before anything starts, takes its whole network policy from
 * the reply, sends its reviews to the same socket, and unregisters when
 * the command ends.  A run that cannot register never starts.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "policy/policy.h"
#include "approval/approval.h"
#include "approval/supclient.h"
#include "launcher/run/run.h"
#include "common/secmem.h"

static void	 secret_free(char *);
static int	 supervise_unix(struct supervise *, struct config *, char *,
		    size_t);

int
supervise_init(struct supervise *s, int depth, char *err, size_t errlen)
{
	const char	*sock, *cap, *t;
	int		 rc = -1;

	memset(s, 0, sizeof(*s));
	s->timeout_ms = SUPERVISOR_TIMEOUT_DEFAULT;
	sock = getenv(SUPERVISOR_SOCKET_ENV);
	/* Never inherited by the sandbox, a host-IPC run or a reviewer. */
	cap = policy_env_take(SUPERVISOR_CAPABILITY_ENV);
	if (sock != NULL && *sock == '\0')
		sock = NULL;
	if (cap != NULL && *cap == '\0')
		cap = NULL;
	if (sock == NULL && cap == NULL) {
		rc = 0;
		goto done;
	}
	if (sock == NULL || cap == NULL) {
		snprintf(err, errlen, "%s is set but %s is not; supervisor "
		    "mode needs both (unset both to run on the config's "
		    "policy)",
		    sock != NULL ? SUPERVISOR_SOCKET_ENV :
		    SUPERVISOR_CAPABILITY_ENV, sock != NULL ?
		    SUPERVISOR_CAPABILITY_ENV : SUPERVISOR_SOCKET_ENV);
		goto done;
	}
	/*
	 * Inside a sandbox the supervisor's socket is out of reach (no
	 * AF_UNIX), so a nested run could not register; running on the
	 * config's policy instead would silently swap the supervisor's
	 * policy for another one.
	 */
	if (depth > 0) {
		snprintf(err, errlen, "supervisor mode is not available inside "
		    "a pisbx sandbox (PISBX_DEPTH=%d): the supervisor socket "
		    "cannot be reached from here; run the command directly, "
		    "it is already confined by this sandbox", depth);
		goto done;
	}
	if ((t = getenv(SUPERVISOR_TIMEOUT_ENV)) != NULL && atoi(t) > 0)
		s->timeout_ms = atoi(t);
	if ((s->socket = strdup(sock)) == NULL ||
	    (s->capability = strdup(cap)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	if (review_id_new(s->worker_id) == -1) {
		snprintf(err, errlen, "no random bytes for a worker id");
		goto done;
	}
	rc = 1;
done:
	unsetenv(SUPERVISOR_SOCKET_ENV);
	unsetenv(SUPERVISOR_TIMEOUT_ENV);
	if (rc != 1)
		supervise_clear(s);
	return rc;
}

int
supervise_register(struct supervise *s, struct config *conf, const char *cwd,
    char *err, size_t errlen)
{
	struct policy	*pol = NULL;
	char		*path;
	int		 fallback;

	free(s->cwd);
	if ((s->cwd = strdup(cwd)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (supclient_register(s->socket, s->capability, s->worker_id,
	    s->cwd, s->timeout_ms, &pol, &fallback, err, errlen) == -1)
		return -1;
	s->registered = 1;
	if (fallback)
		fprintf(stderr, "pisbx: warning: supervisor: %s\n", err);
	err[0] = '\0';
	if ((path = strdup(s->socket)) == NULL) {
		policy_free(pol);
		snprintf(err, errlen, "out of memory");
		supervise_unregister(s);
		return -1;
	}
	/*
	 * The supervisor's policy is the whole network policy; its socket
	 * the only reviewer.
	 */
	free(conf->policy_from);
	if (asprintf(&conf->policy_from, "the supervisor at %s",
	    s->socket) == -1) {
		conf->policy_from = NULL;
		policy_free(pol);
		free(path);
		snprintf(err, errlen, "out of memory");
		supervise_unregister(s);
		return -1;
	}
	policy_free(conf->policy);
	conf->policy = pol;
	conf->review_mode = REVIEW_SOCKET;
	free(conf->review_socket);
	conf->review_socket = path;
	if (supervise_unix(s, conf, err, errlen) == -1) {
		supervise_unregister(s);
		return -1;
	}
	return 0;
}

/*
 * Unix sockets in supervisor mode.  The trusted config's allowUnixSockets
 * still apply: they come from the file the filesystem policy comes from,
 * which no sandboxed command can change, and a listed socket is the
 * config owner's own choice, as a writable path is; the registration
 * reply carries destinations for the proxy only.  The supervisor's own
 * socket is never one of them: a list that leads to it is refused.
 * allowAllUnixSockets would open it too: not honoured, and said.
 */
static int
supervise_unix(struct supervise *s, struct config *conf, char *err,
    size_t errlen)
{
	struct stat	 sup, st;
	size_t		 i;

	if (conf->allow_all_unix_sockets) {
		fprintf(stderr, "pisbx: warning: supervisor mode: "
		    "network.allowAllUnixSockets in %s is not honoured (the "
		    "supervisor's socket would be reachable from inside); "
		    "list the sockets commands need in "
		    "network.allowUnixSockets there\n", conf->path);
		conf->allow_all_unix_sockets = 0;
	}
	if (conf->allow_unix_sockets.n == 0)
		return 0;
	if (stat(s->socket, &sup) == -1) {
		snprintf(err, errlen, "cannot stat the supervisor's socket %s "
		    "to keep it out of network.allowUnixSockets: %s",
		    s->socket, strerror(errno));
		return -1;
	}
	for (i = 0; i < conf->allow_unix_sockets.n; i++) {
		if (stat(conf->allow_unix_sockets.v[i], &st) == -1 ||
		    st.st_dev != sup.st_dev || st.st_ino != sup.st_ino)
			continue;
		snprintf(err, errlen, "network.allowUnixSockets[%zu] in %s, "
		    "\"%s\", leads to the supervisor's own socket, which is "
		    "never reachable from inside: remove it", i, conf->path,
		    conf->allow_unix_sockets.v[i]);
		return -1;
	}
	return 0;
}

void
supervise_unregister(struct supervise *s)
{
	char	 err[512];

	if (!s->registered)
		return;
	s->registered = 0;
	if (supclient_unregister(s->socket, s->capability, s->worker_id,
	    s->cwd, s->timeout_ms, err, sizeof(err)) == -1)
		fprintf(stderr, "pisbx: warning: supervisor: unregister %s: "
		    "%s\n", s->worker_id, err);
}

void
supervise_clear(struct supervise *s)
{
	free(s->socket);
	secret_free(s->capability);
	free(s->cwd);
	s->socket = s->capability = s->cwd = NULL;
	s->registered = 0;
}

static void
secret_free(char *p)
{
	if (p == NULL)
		return;
	secmem_wipe(p, strlen(p));
	free(p);
}
