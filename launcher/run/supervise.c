/*
 * Supervisor mode: an agent host that runs many workers through pisbx-run
 * sets PISBX_SUPERVISOR_SOCKET and PISBX_SUPERVISOR_CAPABILITY; each run
 * registers before anything starts, takes its whole network policy from
 * the reply, sends its reviews to the same socket, and unregisters when
 * the command ends.  A run that cannot register never starts.  Without
 * the variables, a supervisor that published itself in the runtime
 * directory (pisbx-supervisor --interactive, the user unit) is used.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/log.h"
#include "common/sha256.h"
#include "policy/policy.h"
#include "approval/approval.h"
#include "approval/supclient.h"
#include "launcher/run/run.h"
#include "common/secmem.h"

static void	 secret_free(char *);
static int	 supervise_find(char **, char **, char *, size_t);
static int	 supervise_alive(const char *);
static int	 supervise_unix(struct supervise *, struct config *, char *,
		    size_t);
static int	 supervise_apply(struct supervise *, struct config *,
		    struct policy *, char *, size_t);
static int	 supervise_secret_same(const char *, const char *, size_t);

int
supervise_init(struct supervise *s, int depth, char *err, size_t errlen)
{
	const char	*sock, *cap, *t;
	char		*fsock = NULL, *fcap = NULL;
	int		 rc = -1, found;

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
		/* Inside a sandbox the runtime directory is hidden anyway. */
		if (depth > 0 || (found = supervise_find(&fsock, &fcap, err,
		    errlen)) == 0) {
			rc = 0;
			goto done;
		}
		if (found == -1)
			goto done;
		sock = fsock;
		cap = fcap;
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
	free(fsock);
	secret_free(fcap);
	if (rc != 1)
		supervise_clear(s);
	return rc;
}

/*
 * The supervisor published in $XDG_RUNTIME_DIR/pisbx/supervisor.env: 1
 * with its socket and capability (malloc'ed), 0 when there is none or it
 * no longer listens (said), -1 with err set when the file is there but
 * not one to trust (not a regular file of ours closed to others) or
 * unreadable: a supervisor was meant, so nothing runs.
 */
static int
supervise_find(char **sock, char **cap, char *err, size_t errlen)
{
	struct stat	 st;
	const char	*dir = getenv("XDG_RUNTIME_DIR");
	char		 buf[1024], *path = NULL, *line, *next, *v;
	ssize_t		 n;
	int		 fd = -1, rc = -1;

	*sock = *cap = NULL;
	if (dir == NULL || dir[0] != '/')
		return 0;
	if (asprintf(&path, "%s/%s", dir, SUPERVISOR_ENV_FILE) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK))
	    == -1) {
		if (errno == ENOENT || errno == ENOTDIR) {
			free(path);
			return 0;
		}
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_uid != getuid() || (st.st_mode & 077) != 0) {
		snprintf(err, errlen, "%s names a supervisor but is not a "
		    "regular file of yours closed to others (mode 0600); "
		    "remove it or fix its mode", path);
		goto fail;
	}
	if ((n = read(fd, buf, sizeof(buf) - 1)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	buf[n] = '\0';
	for (line = buf; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if ((v = strchr(line, '=')) == NULL)
			continue;
		*v++ = '\0';
		if (strcmp(line, SUPERVISOR_SOCKET_ENV) == 0 && *v != '\0') {
			free(*sock);
			*sock = strdup(v);
		} else if (strcmp(line, SUPERVISOR_CAPABILITY_ENV) == 0 &&
		    *v != '\0') {
			secret_free(*cap);
			*cap = strdup(v);
		}
	}
	secmem_wipe(buf, sizeof(buf));
	if (*sock == NULL || *cap == NULL) {
		snprintf(err, errlen, "%s names no %s and %s; remove it or "
		    "restart the supervisor that wrote it", path,
		    SUPERVISOR_SOCKET_ENV, SUPERVISOR_CAPABILITY_ENV);
		goto fail;
	}
	/* Left behind by a supervisor that was killed: not one to wait for. */
	if (!supervise_alive(*sock)) {
		fprintf(stderr, "pisbx: note: %s names %s, where no "
		    "supervisor listens; running on the config's policy\n",
		    path, *sock);
		rc = 0;
		goto fail;
	}
	close(fd);
	free(path);
	return 1;
fail:
	if (fd != -1)
		close(fd);
	free(path);
	free(*sock);
	secret_free(*cap);
	*sock = *cap = NULL;
	return rc;
}

/* Whether something accepts connections on the Unix socket at path. */
static int
supervise_alive(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd, ok;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		return 1;	/* registering will say what is wrong */
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 1;
	ok = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0 ||
	    (errno != ECONNREFUSED && errno != ENOENT);
	close(fd);
	return ok;
}

int
supervise_register(struct supervise *s, struct config *conf, const char *cwd,
    char *err, size_t errlen)
{
	struct policy	*pol = NULL;
	int		 fallback;

	free(s->cwd);
	if ((s->cwd = strdup(cwd)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	free(s->policy_file);
	s->policy_file = NULL;
	if (supclient_register(s->socket, s->capability, s->worker_id,
	    s->cwd, s->timeout_ms, &pol, &s->policy_file, &fallback, err,
	    errlen) == -1)
		return -1;
	s->registered = 1;
	if (fallback)
		fprintf(stderr, "pisbx: warning: supervisor: %s\n", err);
	err[0] = '\0';
	if (supervise_apply(s, conf, pol, err, errlen) == -1) {
		supervise_unregister(s);
		return -1;
	}
	return 0;
}

/*
 * The supervisor's policy (pol, taken) as the whole network policy of
 * conf, its socket the only reviewer, and the Unix sockets checked
 * against it; refusals name the file it is written in when the
 * supervisor said at registration (policyFile).  0, or -1 with err set.
 */
static int
supervise_apply(struct supervise *s, struct config *conf, struct policy *pol,
    char *err, size_t errlen)
{
	char	*path;

	free(conf->policy_file);
	conf->policy_file = NULL;
	if ((path = strdup(s->socket)) == NULL || (s->policy_file != NULL &&
	    (conf->policy_file = strdup(s->policy_file)) == NULL)) {
		free(path);
		policy_free(pol);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	free(conf->policy_from);
	if (asprintf(&conf->policy_from, "the supervisor at %s",
	    s->socket) == -1) {
		conf->policy_from = NULL;
		policy_free(pol);
		free(path);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	policy_free(conf->policy);
	conf->policy = pol;
	conf->review_mode = REVIEW_SOCKET;
	free(conf->review_socket);
	conf->review_socket = path;
	return supervise_unix(s, conf, err, errlen);
}

/*
 * Whether two secrets are equal, in time that depends on neither: their
 * digests compared in full.
 */
static int
supervise_secret_same(const char *a, const char *b, size_t blen)
{
	uint8_t		 da[SHA256_LEN], db[SHA256_LEN];
	unsigned	 d = 0;
	size_t		 i;

	sha256(a, strlen(a), da);
	sha256(b, blen, db);
	for (i = 0; i < SHA256_LEN; i++)
		d |= (unsigned)(da[i] ^ db[i]);
	return d == 0 && a[0] != '\0';
}

int
supervise_push(struct supervise *s, const char *config_path,
    struct proxy *px, const char *line, size_t len, char *err, size_t errlen)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*conf = NULL;
	struct policy		*pol = NULL;
	json_error_t		 jerr;
	json_t			*o, *v;
	char			*net = NULL;
	int			 rc = -1;

	if (s == NULL || !s->registered) {
		snprintf(err, errlen, "this run has no supervisor; its policy "
		    "changes through --control-fd");
		return -1;
	}
	if ((o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL || !json_is_object(o)) {
		snprintf(err, errlen, "not a JSON object");
		goto out;
	}
	v = json_object_get(o, "capability");
	if (!json_is_string(v) || !supervise_secret_same(s->capability,
	    json_string_value(v), json_string_length(v))) {
		snprintf(err, errlen, "bad capability");
		goto out;
	}
	if (!json_is_string(json_object_get(o, "type")) ||
	    strcmp(json_string_value(json_object_get(o, "type")), "policy") !=
	    0 || !json_is_object(v = json_object_get(o, "network")) ||
	    (net = json_dumps(v, JSON_COMPACT)) == NULL) {
		snprintf(err, errlen, "not a policy message (type \"policy\", "
		    "a network object)");
		goto out;
	}
	/* The registration's checks, and then the file's, as at start. */
	if ((pol = config_network_policy(net, strlen(net), "the supervisor's "
	    "push", &errs)) == NULL) {
		snprintf(err, errlen, "%s", errs.n > 0 ? errs.msg[0] :
		    "invalid network policy");
		goto out;
	}
	if ((conf = config_load(config_path, &errs)) == NULL) {
		snprintf(err, errlen, "the trusted config %s no longer loads: "
		    "%s", config_path != NULL ? config_path : "(default)",
		    errs.n > 0 ? errs.msg[0] : "unknown error");
		goto out;
	}
	(void)review_capability(conf);
	if (supervise_apply(s, conf, pol, err, errlen) == -1) {
		pol = NULL;
		goto out;
	}
	pol = NULL;
	if (control_fixed(proxy_config(px), conf, "supervisor push") > 0) {
		snprintf(err, errlen, "the trusted config %s changed keys "
		    "fixed while the command runs (see pisbx-run's stderr)",
		    config_path != NULL ? config_path : "(default)");
		goto out;
	}
	rc = proxy_reload(px, conf);
	conf = NULL;
	if (rc == -1)
		snprintf(err, errlen, "the new policy could not be set up");
out:
	config_errors_clear(&errs);
	if (pol != NULL)
		policy_free(pol);
	config_free(conf);
	free(net);
	json_decref(o);
	return rc;
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
	free(s->policy_file);
	s->socket = s->capability = s->cwd = s->policy_file = NULL;
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
