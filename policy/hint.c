/*
 * Hints: what would allow a refused target, in the words of the config
 * that refused it.  The proxy's 403 body, pisbx-run's summary at exit and
 * --explain say the same thing, from here.
 */

#include <sys/stat.h>

#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "policy/policy.h"
#include "policy/config_int.h"

#define HINT_DEFAULT_NAME	"(embedded default)"
#define HINT_LISTS_MAX		64	/* files read from the lists' folder */
#define HINT_LIST_BYTES		65536	/* the largest one read */

/* One shipped list (conf/domains/NAME.json), for the hint. */
struct hint_list {
	char		*name;		/* "cargo" */
	char		*path;		/* where it is, absolute */
	char		*entries;	/* "index.crates.io:443, ..." */
	size_t		 n;
	struct policy	*pol;		/* its allowedDomains */
};

/* The lists, read once, at the first hint that could name one. */
static struct {
	int		 loaded;
	char		*dir;		/* policy_hint_lists_dir's, or NULL */
	struct hint_list *v;
	size_t		 n;
} hint_lists;

static int	 policy_hint_in(const struct config *, const char *,
		    const struct host *, uint16_t, const char *, char *,
		    size_t);
static int	 policy_hint_parent(const struct config *, const char *,
		    const char *, const char *, char *, size_t);
static int	 hint_list_read(const char *, const char *,
		    struct hint_list *);
static void	 hint_lists_load(void);
static void	 hint_lists_free(void);
static void	 hint_list_append(const struct host *, uint16_t, char *,
		    size_t);
static int	 hint_list_file(const struct dirent *);

/*
 * A folder of shipped data (NAME: "domains", "rules") next to the
 * running program: as installed ($(PREFIX)/bin and
 * $(PREFIX)/share/pisbx/NAME, see the Makefile's install rule), else in
 * the source tree it was built in (conf/NAME, for bin/, or a build
 * folder's bin/ or tests/).  Malloc'ed; NULL when there is none.
 */
char *
policy_data_dir(const char *name)
{
	static const char *const rel[] = {
		"../share/pisbx", "../conf", "../../conf", NULL
	};
	char		 exe[PATH_MAX], cand[PATH_MAX + 64], *slash, *real;
	struct stat	 st;
	ssize_t		 n;
	size_t		 i;

	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return NULL;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) == NULL)
		return NULL;
	*slash = '\0';
	for (i = 0; rel[i] != NULL; i++) {
		snprintf(cand, sizeof(cand), "%s/%s/%s", exe, rel[i], name);
		if ((real = realpath(cand, NULL)) == NULL)
			continue;
		if (stat(real, &st) == 0 && S_ISDIR(st.st_mode))
			return real;
		free(real);
	}
	return NULL;
}

/*
 * One list: a config whose network.allowedDomains holds the entries.
 * 0, or -1 when it is not such a file (then it is left out).
 */
static int
hint_list_read(const char *dir, const char *file, struct hint_list *l)
{
	char		 path[PATH_MAX], *buf = NULL, *e;
	const char	*errstr;
	const json_t	*a, *v;
	json_t		*root = NULL;
	json_error_t	 jerr;
	struct pattern	 pat;
	FILE		*f;
	size_t		 len, i, elen = 0, esize = 0;
	int		 rc = -1;

	memset(l, 0, sizeof(*l));
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path) || (f = fopen(path, "re")) == NULL)
		return -1;
	if ((buf = malloc(HINT_LIST_BYTES)) != NULL)
		len = fread(buf, 1, HINT_LIST_BYTES, f);
	fclose(f);
	if (buf == NULL || len == HINT_LIST_BYTES ||
	    (root = json_loadb(buf, len, 0, &jerr)) == NULL)
		goto done;
	a = json_object_get(json_object_get(root, "network"),
	    "allowedDomains");
	if (!json_is_array(a) || json_array_size(a) == 0 ||
	    (l->pol = policy_new()) == NULL)
		goto done;
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || pattern_parse(json_string_value(v),
		    json_string_length(v), 0, &pat, &errstr) == -1 ||
		    policy_add(l->pol, POLICY_ALLOW, &pat) == -1)
			goto done;
		/* "a:443, b:443" */
		if (elen + strlen(pat.text) + 3 > esize) {
			esize = (elen + strlen(pat.text) + 3) * 2;
			if ((e = realloc(l->entries, esize)) == NULL)
				goto done;
			l->entries = e;
		}
		elen += (size_t)snprintf(l->entries + elen, esize - elen,
		    "%s%s", elen > 0 ? ", " : "", pat.text);
		l->n++;
	}
	if ((l->path = strdup(path)) == NULL ||
	    (l->name = strndup(file, strlen(file) - 5)) == NULL)
		goto done;
	rc = 0;
done:
	if (rc == -1) {
		if (l->pol != NULL)
			policy_free(l->pol);
		free(l->entries);
		free(l->path);
		memset(l, 0, sizeof(*l));
	}
	json_decref(root);
	free(buf);
	return rc;
}

static int
hint_list_file(const struct dirent *d)
{
	size_t	 n = strlen(d->d_name);

	return n > 5 && d->d_name[0] != '.' &&
	    strcmp(d->d_name + n - 5, ".json") == 0;
}

/* Read every list once; what cannot be read is left out (a hint only). */
static void
hint_lists_load(void)
{
	struct dirent	**names = NULL;
	struct hint_list *v;
	char		*dir;
	int		 n, i;

	hint_lists.loaded = 1;
	dir = hint_lists.dir != NULL ? strdup(hint_lists.dir) :
	    policy_data_dir("domains");
	if (dir == NULL)
		return;
	if ((n = scandir(dir, &names, hint_list_file, alphasort)) > 0 &&
	    (hint_lists.v = calloc((size_t)n, sizeof(*v))) != NULL) {
		for (i = 0; i < n && hint_lists.n < HINT_LISTS_MAX; i++)
			if (hint_list_read(dir, names[i]->d_name,
			    &hint_lists.v[hint_lists.n]) == 0)
				hint_lists.n++;
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(dir);
}

static void
hint_lists_free(void)
{
	size_t	 i;

	for (i = 0; i < hint_lists.n; i++) {
		policy_free(hint_lists.v[i].pol);
		free(hint_lists.v[i].name);
		free(hint_lists.v[i].path);
		free(hint_lists.v[i].entries);
	}
	free(hint_lists.v);
	hint_lists.v = NULL;
	hint_lists.n = 0;
	hint_lists.loaded = 0;
}

void
policy_hint_lists_dir(const char *dir)
{
	hint_lists_free();
	free(hint_lists.dir);
	hint_lists.dir = dir != NULL ? strdup(dir) : NULL;
}

/*
 * A package manager needs more than its registry's name (cargo both
 * index.crates.io and static.crates.io): when a shipped list with more
 * than one entry allows host:port, name the list and all it holds.
 */
static void
hint_list_append(const struct host *h, uint16_t port, char *buf,
    size_t len)
{
	const struct pattern	*pat;
	size_t			 i, used = strlen(buf);

	if (!hint_lists.loaded)
		hint_lists_load();
	for (i = 0; i < hint_lists.n; i++) {
		if (hint_lists.v[i].n < 2 || policy_eval(hint_lists.v[i].pol,
		    h, port, &pat) != VERDICT_ALLOW)
			continue;
		if (used < len)
			snprintf(buf + used, len - used, "; it is in pisbx's "
			    "list for %s, %s, with the other hosts that "
			    "ecosystem needs: add them all (%s)",
			    hint_lists.v[i].name, hint_lists.v[i].path,
			    hint_lists.v[i].entries);
		return;
	}
}

/*
 * The file a person edits: the config that decided, or, when the embedded
 * default did, the per-user file pisbx would read next time.
 */
void
policy_hint_file(const struct config *conf, char *buf, size_t len)
{
	char	*user;

	if (conf->path != NULL && strcmp(conf->path, HINT_DEFAULT_NAME) != 0) {
		snprintf(buf, len, "%s", conf->path);
		return;
	}
	if ((user = config_user_path()) == NULL) {
		snprintf(buf, len, "a config file (--config or $PISBX_CONFIG)");
		return;
	}
	snprintf(buf, len, "%s (a new file: no config was found, the "
	    "embedded default decided)", user);
	free(user);
}

void
policy_hint_entry(const struct host *h, uint16_t port, char *buf, size_t len)
{
	/*
	 * A name alone opens every port: on the web ports that is what a
	 * config customarily says, anywhere else it would open far more
	 * than was asked for (ssh, a database).
	 */
	if ((port == 443 || port == 80) && !host_is_loopback_name(h))
		snprintf(buf, len, "%s", h->text);
	else
		target_format(buf, len, h, port);
}

int
policy_hint(const struct config *conf, const struct host *h, uint16_t port,
    const char *reason, char *buf, size_t len)
{
	char	 file[1024], key[96];
	size_t	 used;
	int	 rc;

	if (len > 0)
		buf[0] = '\0';
	if (reason == NULL)
		return -1;
	/* network.budget comes from the trusted config, supervised too. */
	if (strncmp(reason, "budget-", 7) == 0) {
		policy_hint_file(conf, file, sizeof(file));
		config_budget_key(conf, h->text, strcmp(reason,
		    "budget-bytes-up") == 0, key, sizeof(key));
		snprintf(buf, len, "to allow more, raise %s in %s%s", key, file,
		    conf->review_mode == REVIEW_NONE ? " (or configure a "
		    "reviewer to ask past it)" : "");
		return 0;
	}
	if (conf->policy_from != NULL && (strcmp(reason, "no-reviewer") == 0 ||
	    strncmp(reason, "review:", 7) == 0 ||
	    strncmp(reason, "deny-list:", 10) == 0 ||
	    strcmp(reason, "non-public-address") == 0 ||
	    strcmp(reason, "host-loopback") == 0)) {
		/*
		 * A supervisor's policy: the file it is written in, when
		 * the supervisor said, and that it is read at its start.
		 */
		if (conf->policy_file == NULL) {
			snprintf(buf, len, "the network policy comes from %s: "
			    "only it can allow this", conf->policy_from);
			return 0;
		}
		if ((rc = policy_hint_in(conf, conf->policy_file, h, port,
		    reason, buf, len)) == 0 && (used = strlen(buf)) < len)
			snprintf(buf + used, len - used, " (the network policy "
			    "of %s, which reads that file when it starts: "
			    "restart it, and the runs that register after that "
			    "have the change)", conf->policy_from);
		return rc;
	}
	policy_hint_file(conf, file, sizeof(file));
	return policy_hint_in(conf, file, h, port, reason, buf, len);
}

/* policy_hint, the config file to edit named: file. */
static int
policy_hint_in(const struct config *conf, const char *file,
    const struct host *h, uint16_t port, const char *reason, char *buf,
    size_t len)
{
	const struct pattern	*m = NULL;
	char			 entry[TARGET_TEXT_MAX];
	int			 n;

	policy_hint_entry(h, port, entry, sizeof(entry));
	/* The upstream proxy comes from pisbx's own config, supervised too. */
	if (strncmp(reason, "parent-", 7) == 0)
		return policy_hint_parent(conf, reason, entry, file, buf, len);
	/* The managed layer's: no lower config can change it. */
	if (strcmp(reason, "managed-ceiling") == 0) {
		snprintf(buf, len, "it lies outside "
		    "network.allowedDomainsCeiling of the managed file %s, "
		    "which no config or reviewer can widen: ask its "
		    "administrator", MANAGED_PATH);
		return 0;
	}
	if (strncmp(reason, "deny-list:", 10) == 0 &&
	    policy_eval(conf->policy, h, port, &m) == VERDICT_DENY &&
	    m != NULL && m->layer != NULL && strcmp(m->layer, "managed") == 0) {
		snprintf(buf, len, "\"%s\" in network.deniedDomains of the "
		    "managed file %s refuses it, whatever any config or "
		    "reviewer says: ask its administrator", reason + 10,
		    MANAGED_PATH);
		return 0;
	}
	if (strncmp(reason, "deny-list:", 10) == 0) {
		snprintf(buf, len, "\"%s\" in network.deniedDomains of %s "
		    "refuses it, whatever network.allowedDomains says",
		    reason + 10, file);
		return 0;
	}
	if (strcmp(reason, "host-loopback") == 0) {
		snprintf(buf, len, "to allow it, add \"%s:%u\" to "
		    "network.allowedDomains in %s", HOST_LOOPBACK_NAME, port,
		    file);
		return 0;
	}
	if (strcmp(reason, "non-public-address") == 0 &&
	    host_is_loopback(h)) {
		snprintf(buf, len, "to reach this machine's own services, add "
		    "\"%s:%u\" to network.allowedDomains in %s and use the "
		    "name %s", HOST_LOOPBACK_NAME, port, file,
		    HOST_LOOPBACK_NAME);
		return 0;
	}
	if (strcmp(reason, "non-public-address") == 0) {
		snprintf(buf, len, "to allow it, add the exact entry \"%s\" to "
		    "network.allowedDomains in %s (only an exact entry reaches "
		    "a non-public address)", entry, file);
		return 0;
	}
	if (strcmp(reason, "no-reviewer") == 0 ||
	    strncmp(reason, "review:", 7) == 0) {
		/*
		 * A terminal reviewer under a command that has no terminal (an
		 * agent's) never asks anyone: say so, and both ways out.
		 */
		if (strcmp(reason, "review:error") == 0 &&
		    conf->review_mode == REVIEW_TTY) {
			snprintf(buf, len, "the terminal reviewer got no answer "
			    "(review.mode \"tty\" in %s: a command without a "
			    "terminal, as an agent's are, cannot be asked); to "
			    "allow it, add \"%s\" to network.allowedDomains in "
			    "%s, or run pisbx-supervisor --interactive in a "
			    "terminal of yours to be asked there", file, entry,
			    file);
			hint_list_append(h, port, buf, len);
			return 0;
		}
		/* A reviewer that cannot run: --check warns of it too. */
		n = 0;
		if (strcmp(reason, "review:error") == 0 && ((n = snprintf(buf,
		    len, "the reviewer could not answer (review in %s%s); ",
		    file, conf->access_log != NULL ? "; the access log says "
		    "why" : "")) < 0 || (size_t)n >= len))
			n = 0;
		snprintf(buf + n, len - (size_t)n, "to allow it, add \"%s\" to "
		    "network.allowedDomains in %s", entry, file);
		hint_list_append(h, port, buf, len);
		return 0;
	}
	return -1;
}

int
policy_hint_parent_tunnel(const struct config *conf, uint16_t port,
    char *buf, size_t len)
{
	char	 file[1024];

	if (len > 0)
		buf[0] = '\0';
	if (conf->parent == NULL)
		return -1;
	policy_hint_file(conf, file, sizeof(file));
	/*
	 * squid's default config has "http_access deny CONNECT !SSL_ports"
	 * with SSL_ports 443: the case this hint exists for.
	 */
	snprintf(buf, len, "pisbx allowed it; plain HTTP goes to the upstream "
	    "proxy (network.parentProxy in %s) inside a CONNECT, so that "
	    "its credentials never reach the client, and it refused CONNECT "
	    "to port %u, by its own policy or because it allows CONNECT to "
	    "port 443 only: then let it allow port %u (squid: \"acl "
	    "SSL_ports port %u\"), or set network.parentProxy.httpForwarding "
	    "to \"absolute-form\" in %s (the gateway then sees each request "
	    "with the credentials on it: docs/config.md)", file, port, port,
	    port, file);
	return 0;
}

/*
 * What a person can do when the upstream proxy (network.parentProxy)
 * refused or failed: its credentials, its reachability -- never a way
 * around it.  Its policy is its administrators'.
 */
static int
policy_hint_parent(const struct config *conf, const char *reason,
    const char *entry, const char *file, char *buf, size_t len)
{
	const struct parent_proxy	*pp = conf->parent;

	if (pp == NULL)
		return -1;
	if (strcmp(reason, "parent-auth") == 0) {
		if (pp->cred_file != NULL)
			snprintf(buf, len, "check the upstream proxy's "
			    "credentials in %s (network.parentProxy."
			    "credentialsFile in %s)", pp->cred_file, file);
		else if (pp->cred_env != NULL)
			snprintf(buf, len, "check the upstream proxy's "
			    "credentials in $%s (network.parentProxy."
			    "credentialsEnv in %s)", pp->cred_env, file);
		else
			snprintf(buf, len, "the upstream proxy wants "
			    "credentials: set network.parentProxy."
			    "credentialsFile or credentialsEnv in %s", file);
		return 0;
	}
	if (strcmp(reason, "parent-refused") == 0) {
		snprintf(buf, len, "pisbx allowed it; the upstream proxy "
		    "(network.parentProxy in %s) refused it by its own policy, "
		    "which its administrators set", file);
		return 0;
	}
	if (strcmp(reason, "parent-method") == 0) {
		snprintf(buf, len, "TRACE and TRACK are not sent to the "
		    "upstream proxy as proxy requests, since its echo would "
		    "carry its credentials; with network.parentProxy."
		    "httpForwarding \"tunnel\" (the default) in %s they go "
		    "inside a tunnel", file);
		return 0;
	}
	if (strcmp(reason, "parent-error") == 0) {
		snprintf(buf, len, "check that the upstream proxy "
		    "(network.parentProxy in %s) is up and can reach it; a "
		    "host this machine reaches directly goes in "
		    "network.parentProxy.noProxy (\"%s\")", file, entry);
		return 0;
	}
	return -1;
}
