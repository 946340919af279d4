/*
 * The managed layer: /etc/pisbx/managed.json (MANAGED_PATH), a file
 * root keeps, whose rules hold whatever the user's config, the project's
 * or a run's says.  Lower layers can only tighten: its deny entries come
 * first and cannot be removed or opened, its ceiling bounds every allow
 * entry and every review, its denied paths always apply, its limits can
 * only be lowered, and what it forbids (review transports, loosening
 * switches) is refused.  Each loosening is an error naming the lower
 * file, the key and the managed file; a managed file that exists but
 * cannot be trusted or read refuses everything (fail closed).
 *
 * The path is compiled in: no variable or option names another, so a
 * user cannot swap it.  It is trusted only when it and every directory
 * above it belong to root and no one else can write them; the walk goes
 * descriptor by descriptor, symbolic links refused, so what is checked
 * is what is read.  The denied paths are managed_fs.c's; --check's
 * listing of the merged policy is explain.c's.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "policy/policy.h"
#include "policy/config_int.h"

static const char *const keys_top[] = {
	"$schema", "network", "filesystem", "review", "proxy", "hostIPC",
	"allowNestedUserNamespaces", "requireNamespaces", "credentials", NULL
};
static const char *const keys_network[] = {
	"deniedDomains", "allowedDomainsCeiling", "allowAllUnixSockets",
	"tlsTerminate", "requestRules", NULL
};
static const char *const keys_filesystem[] = {
	"denyRead", "denyWrite", "allowGitConfig", NULL
};
static const char *const keys_review[] = {
	"modes", "timeoutMs", "maxInFlight", NULL
};
static const char *const keys_proxy[] = {
	"maxConnections", "maxClientConnections", "connectTimeoutMs",
	"idleTimeoutMs", "headerTimeoutMs", NULL
};
static const char *const keys_hostipc[] = { "mode", NULL };

const struct managed_limit managed_limits[MANAGED_NLIMITS] = {
	{ "proxy", "maxConnections",
	    offsetof(struct config, max_connections), 0 },
	{ "proxy", "maxClientConnections",
	    offsetof(struct config, max_client_connections), 1 },
	{ "proxy", "connectTimeoutMs",
	    offsetof(struct config, connect_timeout_ms), 0 },
	{ "proxy", "idleTimeoutMs",
	    offsetof(struct config, idle_timeout_ms), 0 },
	{ "proxy", "headerTimeoutMs",
	    offsetof(struct config, header_timeout_ms), 0 },
	{ "review", "timeoutMs",
	    offsetof(struct config, review_timeout_ms), 0 },
	{ "review", "maxInFlight",
	    offsetof(struct config, review_max_inflight), 0 },
};

/* Review transports by name; "supervisor" is supervisor mode's socket. */
const char *const managed_modes[] = {
	"command", "socket", "tty", "supervisor", NULL
};

static int	 managed_open(struct cfgctx *);
static int	 managed_root_unmapped(void);
static int	 managed_trusted(struct cfgctx *, int, const char *, int);
static struct managed *managed_parse(struct cfgctx *, const char *,
		    size_t);
static void	 managed_network(struct cfgctx *, const json_t *,
		    struct managed *);
static void	 managed_rules(struct cfgctx *, const json_t *,
		    struct managed *);
static void	 managed_fs(struct cfgctx *, const json_t *,
		    struct managed *);
static char	*managed_item_path(struct cfgctx *, const char *,
		    const char *, size_t, size_t);
static void	 managed_review(struct cfgctx *, const json_t *,
		    struct managed *);
static void	 managed_nums(struct cfgctx *, const json_t *,
		    struct managed *);
static void	 managed_forbid(struct cfgctx *, const json_t *,
		    struct managed *);
static void	 managed_copy_cb(enum policy_list, const struct pattern *,
		    void *);
static void	 managed_allow_cb(enum policy_list, const struct pattern *,
		    void *);
static void	 managed_limits_apply(struct cfgctx *, const struct managed *,
		    const json_t *, struct config *);
static int	 managed_collect(const struct policy *, enum policy_list,
		    const struct pattern ***, size_t *);
static void	 managed_collect_cb(enum policy_list, const struct pattern *,
		    void *);
static const char *managed_jpath(const char *);
static void	 managed_rules_check(struct cfgctx *, const struct managed *,
		    const struct config *);
static void	 managed_switches(struct cfgctx *, const struct managed *,
		    const json_t *, struct config *);
static const struct item_check managed_check_path = { managed_item_path, 1 };

/* A layer's name, as --check -v, --explain and the access log show it. */
const char *
config_layer_name(enum config_layer l)
{
	switch (l) {
	case LAYER_MANAGED:
		return "managed";
	case LAYER_USER:
		return "user";
	case LAYER_RUN:
		return "run";
	}
	return "user";
}

/*
 * Open MANAGED_PATH component by component from "/", each directory and
 * the file checked as it is held (managed_trusted), symbolic links
 * refused: the descriptor of the file, -2 when some component does not
 * exist (no managed file), -1 after an error.
 */
static int
managed_open(struct cfgctx *ctx)
{
	char	 path[] = MANAGED_PATH, *name, *next;
	int	 dfd, fd;

	if ((dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		cfg_err(ctx, NULL, "cannot open /: %s", strerror(errno));
		return -1;
	}
	if (managed_trusted(ctx, dfd, "/", 1) == -1)
		goto fail;
	for (name = path + 1; (next = strchr(name, '/')) != NULL;
	    name = next + 1) {
		*next = '\0';
		fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (fd == -1 && errno == ENOENT) {
			close(dfd);
			return -2;
		}
		if (fd == -1) {
			cfg_err(ctx, NULL, "cannot open the directory %s: %s%s",
			    path, strerror(errno), errno == ENOTDIR ||
			    errno == ELOOP ? " (a symbolic link or not a "
			    "directory: the path of the managed file must be "
			    "real directories)" : "");
			goto fail;
		}
		close(dfd);
		dfd = fd;
		if (managed_trusted(ctx, dfd, path, 1) == -1)
			goto fail;
		*next = '/';
	}
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC);
	if (fd == -1 && errno == ENOENT) {
		close(dfd);
		return -2;
	}
	if (fd == -1) {
		cfg_err(ctx, NULL, "cannot open: %s%s", strerror(errno),
		    errno == ELOOP ? " (a symbolic link: the managed file "
		    "must be a regular file)" : "");
		goto fail;
	}
	close(dfd);
	if (managed_trusted(ctx, fd, MANAGED_PATH, 0) == -1) {
		close(fd);
		return -1;
	}
	return fd;
fail:
	close(dfd);
	return -1;
}

/*
 * Whether this process's user namespace leaves its parent's root
 * unmapped: there a file of root's (of anyone unmapped) shows as the
 * overflow uid, and who owns it cannot be told.  /proc/self/uid_map
 * holds "inside outside count" lines; the initial namespace's is
 * "0 0 4294967295".
 */
static int
managed_root_unmapped(void)
{
	unsigned long	 in, out, n;
	FILE		*f;
	int		 unmapped = 1;

	if ((f = fopen("/proc/self/uid_map", "re")) == NULL)
		return 0;
	while (fscanf(f, "%lu %lu %lu", &in, &out, &n) == 3)
		if (out == 0 && n > 0)
			unmapped = 0;
	fclose(f);
	return unmapped;
}

/*
 * Whether what fd holds (the directory or the file what) can be trusted:
 * root's, and writable by no one else.  Otherwise one error saying what
 * to change; every run is refused until it is.
 */
static int
managed_trusted(struct cfgctx *ctx, int fd, const char *what, int dir)
{
	struct stat	 st;

	if (fstat(fd, &st) == -1) {
		cfg_err(ctx, NULL, "cannot stat %s: %s", what,
		    strerror(errno));
		return -1;
	}
	if (!dir && !S_ISREG(st.st_mode)) {
		cfg_err(ctx, NULL, "not a regular file");
		return -1;
	}
	if (st.st_uid != 0 && managed_root_unmapped()) {
		cfg_err(ctx, NULL, "%s belongs to a user outside this user "
		    "namespace (shown as uid %u), so the managed file cannot "
		    "be verified from inside it (inside another sandbox, for "
		    "one); nothing runs: run pisbx-run where root's files are "
		    "root's", what, (unsigned)st.st_uid);
		return -1;
	}
	if (st.st_uid != 0) {
		cfg_err(ctx, NULL, "%s belongs to uid %u, not root: the "
		    "managed file is trusted only when it and every directory "
		    "above it are root's (chown root %s); until then nothing "
		    "runs", what, (unsigned)st.st_uid, what);
		return -1;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		cfg_err(ctx, NULL, "%s is writable by %s (mode %04o): the "
		    "managed file is trusted only when no one but root can "
		    "change it or a directory above it (chmod go-w %s); until "
		    "then nothing runs", what, (st.st_mode & S_IWOTH) != 0 ?
		    "others" : "its group", (unsigned)(st.st_mode & 07777),
		    what);
		return -1;
	}
	return 0;
}

/* MANAGED_PATH, when it is there, read and checked (config_int.h). */
int
managed_load(struct config_errors *errs, struct managed **out)
{
	struct cfgctx	 ctx = { MANAGED_PATH, errs, 0, NULL, 0, NULL,
			    "managed" };
	char		*buf;
	size_t		 len;
	int		 fd;

	*out = NULL;
	if ((fd = managed_open(&ctx)) == -2)
		return 0;
	if (fd == -1 || (buf = cfg_file_read(&ctx, fd, &len)) == NULL)
		goto fail;
	*out = managed_parse(&ctx, buf, len);
	free(buf);
	if (*out != NULL)
		return 0;
fail:
	cfg_finish(&ctx);
	return -1;
}

/* The managed file's JSON into its rules; NULL after errors. */
static struct managed *
managed_parse(struct cfgctx *ctx, const char *buf, size_t len)
{
	struct managed	*m = NULL;
	json_t		*root;
	const json_t	*v;
	size_t		 slen;

	if ((root = cfg_json_parse(ctx, buf, len)) == NULL)
		return NULL;
	if (cfg_obj_check(ctx, "$", root, keys_top) == -1)
		goto fail;
	if ((m = calloc(1, sizeof(*m))) == NULL ||
	    (m->deny = policy_new()) == NULL) {
		cfg_nomem(ctx, NULL);
		goto fail;
	}
	cfg_string(ctx, "$", root, "$schema", &slen);
	if ((v = json_object_get(root, "network")) != NULL)
		managed_network(ctx, v, m);
	if ((v = json_object_get(root, "filesystem")) != NULL)
		managed_fs(ctx, v, m);
	if ((v = json_object_get(root, "review")) != NULL)
		managed_review(ctx, v, m);
	/*
	 * Withheld or masked credentials are the run's business for now: a
	 * managed mask would need its placeholders and injectHosts merged
	 * with every lower layer's, and a managed deny its interplay with a
	 * lower mask of the same name.  Named, not taken as unknown.
	 */
	if (json_object_get(root, "credentials") != NULL)
		cfg_err(ctx, "$.credentials", "not a managed key yet: list "
		    "the files to withhold in $.filesystem.denyRead; "
		    "variables are each config's credentials");
	if ((v = json_object_get(root, "proxy")) != NULL)
		cfg_obj_check(ctx, "$.proxy", v, keys_proxy);
	managed_nums(ctx, root, m);
	managed_forbid(ctx, root, m);
	if (ctx->nerr > 0)
		goto fail;
	json_decref(root);
	return m;
fail:
	json_decref(root);
	managed_free(m);
	return NULL;
}

/* "network": the deny entries, the ceiling, allowAllUnixSockets. */
static void
managed_network(struct cfgctx *ctx, const json_t *v, struct managed *m)
{
	static const char jp[] = "$.network";
	int b = 1;

	if (cfg_obj_check(ctx, jp, v, keys_network) == -1)
		return;
	cfg_patterns(ctx, jp, v, "deniedDomains", PATTERN_DENY_LIST, m->deny,
	    NULL);
	if (json_object_get(v, "allowedDomainsCeiling") != NULL) {
		if ((m->ceiling = policy_new()) == NULL) {
			cfg_nomem(ctx, jp);
			return;
		}
		cfg_patterns(ctx, jp, v, "allowedDomainsCeiling", 0,
		    m->ceiling, NULL);
	}
	if (cfg_bool(ctx, jp, v, "allowAllUnixSockets", &b) == 0 && !b)
		m->no_all_unix = 1;
	if (json_object_get(v, "tlsTerminate") != NULL ||
	    json_object_get(v, "requestRules") != NULL)
		managed_rules(ctx, v, m);
}

/*
 * "network.tlsTerminate" and "network.requestRules": parsed here as a
 * config would parse them, so that a bad rule or recipe refuses every
 * run now, named in the managed file; kept as JSON for each config to
 * take in before its own keys (managed_seed_rules).  Rules need the
 * managed file's own tlsTerminate (reqrule.c says so), so termination
 * never depends on a lower layer.  excludeDomains is refused: an
 * excluded host's requests are never read, so in the managed file it
 * could only take hosts out from under rules.
 */
static void
managed_rules(struct cfgctx *ctx, const json_t *v, struct managed *m)
{
	struct config	 scratch;
	const json_t	*t;

	t = json_object_get(v, "tlsTerminate");
	if (json_is_object(t) && json_object_get(t, "excludeDomains") != NULL)
		cfg_err(ctx, "$.network.tlsTerminate.excludeDomains", "not a "
		    "managed key: an excluded host is not terminated, so its "
		    "requests pass every rule; a lower layer's config may "
		    "exclude hosts the managed rules do not name");
	memset(&scratch, 0, sizeof(scratch));
	secrets_tls(ctx, "$.network", v, &scratch);
	reqrule_parse(ctx, "$.network", v, &scratch);
	reqrule_free(&scratch);
	secrets_free(&scratch);
	m->net = json_incref((json_t *)(uintptr_t)v);
}

/*
 * The managed tlsTerminate and requestRules into a config, before its
 * own keys: the rules come first (they are the ones a refusal names)
 * and the termination is there for the layer's rules to need.
 */
void
managed_seed_rules(struct cfgctx *ctx, struct managed *m,
    struct config *conf)
{
	struct cfgctx	 mctx = { MANAGED_PATH, ctx->errs, 0, NULL, 0, NULL,
			    "managed" };

	if (m->net == NULL)
		return;
	secrets_tls(&mctx, "$.network", m->net, conf);
	reqrule_parse(&mctx, "$.network", m->net, conf);
	m->nreq = conf->nreq_hosts;
	ctx->nerr += mctx.nerr;
}

/*
 * A host the layer excludes from termination that a managed rule names:
 * its requests would pass the managed rules unread.  An address is
 * never excluded under managed rules: the server at it may serve a rules
 * host by another name (a tunnel without SNI to github.com's address).
 * Fail closed.
 */
static void
managed_rules_check(struct cfgctx *ctx, const struct managed *m,
    const struct config *conf)
{
	const struct pattern	*x;
	const struct req_host	*h;
	size_t			 i, j;

	if (m->nreq > 0 && conf->tls != NULL) {
		for (j = 0; j < conf->tls->nexclude; j++) {
			x = &conf->tls->exclude[j];
			if (x->kind != PATTERN_EXACT ||
			    x->host.kind == HOST_NAME)
				continue;
			cfg_err(ctx, managed_jpath(x->source), "\"%s\" is an "
			    "address: while %s has request rules, no address "
			    "may be excluded from termination (the server at "
			    "it may serve a host the rules name); remove the "
			    "entry", x->text, MANAGED_NAME);
		}
	}
	for (i = 0; i < m->nreq && i < conf->nreq_hosts; i++) {
		h = &conf->req_hosts[i];
		if (conf->tls == NULL) {
			cfg_err(ctx, NULL, "request rules for %s in %s "
			    "(managed layer) are not enforceable: no "
			    "tlsTerminate", h->host.text, h->source);
			return;
		}
		for (j = 0; j < conf->tls->nexclude; j++) {
			x = &conf->tls->exclude[j];
			if (!pattern_within(&h->host, x) &&
			    !pattern_within(x, &h->host))
				continue;
			cfg_err(ctx, managed_jpath(x->source), "\"%s\" "
			    "excludes %s, which request rules of %s (managed "
			    "layer) name (%s): an excluded host is not "
			    "terminated, so the rules could not be enforced; "
			    "remove the entry", x->text, h->host.text,
			    MANAGED_NAME, h->source);
		}
	}
}

/* "filesystem": paths denied whatever a lower layer says. */
static void
managed_fs(struct cfgctx *ctx, const json_t *v, struct managed *m)
{
	static const char jp[] = "$.filesystem";
	int b = 1;

	if (cfg_obj_check(ctx, jp, v, keys_filesystem) == -1)
		return;
	cfg_strlist(ctx, jp, v, "denyRead", &managed_check_path,
	    &m->deny_read);
	cfg_strlist(ctx, jp, v, "denyWrite", &managed_check_path,
	    &m->deny_write);
	if (cfg_bool(ctx, jp, v, "allowGitConfig", &b) == 0 && !b)
		m->no_git_config = 1;
}

/*
 * A denied path: absolute or from the home directory ("~", "~/..."),
 * never relative -- a relative one would mean another place in each
 * project.
 */
static char *
managed_item_path(struct cfgctx *ctx, const char *jpath, const char *s,
    size_t len, size_t idx)
{
	char	 q[CONFIG_QUOTE_MAX], *d;

	if ((d = cfg_item_path(ctx, jpath, s, len, idx)) == NULL)
		return NULL;
	if (d[0] == '/' || (d[0] == '~' && (d[1] == '\0' || d[1] == '/')))
		return d;
	cfg_quote(q, sizeof(q), s, len);
	cfg_err(ctx, jpath, "%s: a managed path is absolute or starts with "
	    "\"~/\"", q);
	free(d);
	return NULL;
}

/* "review.modes": the transports a lower layer may use. */
static void
managed_review(struct cfgctx *ctx, const json_t *v, struct managed *m)
{
	static const char jp[] = "$.review";
	char		 p[CONFIG_JPATH_MAX], got[CONFIG_QUOTE_MAX];
	const json_t	*a, *e;
	size_t		 i, k;

	if (cfg_obj_check(ctx, jp, v, keys_review) == -1 ||
	    (a = json_object_get(v, "modes")) == NULL)
		return;
	cfg_jpath_key(p, sizeof(p), jp, "modes");
	if (!json_is_array(a)) {
		cfg_describe(got, sizeof(got), a);
		cfg_err(ctx, p, "expected an array of review transports, got "
		    "%s", got);
		return;
	}
	/* An empty list: no reviews at all, only the lists decide. */
	m->modes = 1U << 31;
	json_array_foreach(a, i, e) {
		for (k = 0; managed_modes[k] != NULL; k++)
			if (json_is_string(e) && strcmp(json_string_value(e),
			    managed_modes[k]) == 0)
				break;
		if (managed_modes[k] != NULL) {
			m->modes |= 1U << k;
			continue;
		}
		cfg_jpath_index(p, sizeof(p), "$.review.modes", i);
		cfg_describe(got, sizeof(got), e);
		cfg_err(ctx, p, "expected \"command\", \"socket\", \"tty\" or "
		    "\"supervisor\", got %s", got);
	}
}

/* The limits: the most a lower layer may set. */
static void
managed_nums(struct cfgctx *ctx, const json_t *root, struct managed *m)
{
	char		 jp[32];
	const json_t	*sec;
	size_t		 i;

	for (i = 0; i < MANAGED_NLIMITS; i++) {
		if ((sec = json_object_get(root, managed_limits[i].section))
		    == NULL || !json_is_object(sec))
			continue;
		snprintf(jp, sizeof(jp), "$.%s", managed_limits[i].section);
		cfg_int(ctx, jp, sec, managed_limits[i].key, 1, 86400000,
		    &m->limit[i]);
	}
}

/* What a lower layer may not turn on. */
static void
managed_forbid(struct cfgctx *ctx, const json_t *root, struct managed *m)
{
	char		 q[CONFIG_QUOTE_MAX];
	const json_t	*v;
	const char	*s;
	size_t		 len;
	int		 b = 1;

	if (cfg_bool(ctx, "$", root, "allowNestedUserNamespaces", &b) == 0 &&
	    !b)
		m->no_nested_userns = 1;
	b = 0;
	if (cfg_bool(ctx, "$", root, "requireNamespaces", &b) == 0 && b)
		m->require_ns = 1;
	if ((v = json_object_get(root, "hostIPC")) == NULL ||
	    cfg_obj_check(ctx, "$.hostIPC", v, keys_hostipc) == -1 ||
	    (s = cfg_string(ctx, "$.hostIPC", v, "mode", &len)) == NULL)
		return;
	if (strlen(s) == len && strcmp(s, "off") == 0)
		m->no_hostipc = 1;
	else if (strlen(s) != len || strcmp(s, "ask") != 0) {
		cfg_quote(q, sizeof(q), s, len);
		cfg_err(ctx, "$.hostIPC.mode", "expected \"off\" (no host "
		    "runs) or \"ask\" (a lower layer decides), got %s", q);
	}
}

/* Free the managed rules (NULL is fine). */
void
managed_free(struct managed *m)
{
	if (m == NULL)
		return;
	policy_free(m->deny);
	policy_free(m->ceiling);
	strlist_free(&m->deny_read);
	strlist_free(&m->deny_write);
	json_decref(m->net);
	free(m);
}

/* policy_walk: one managed deny entry into the layer's policy. */
struct managed_copy {
	struct cfgctx	*ctx;
	struct policy	*to;
	enum policy_list list;
};

static void
managed_copy_cb(enum policy_list list, const struct pattern *pat, void *arg)
{
	struct managed_copy *c = arg;

	if (list == c->list && policy_add(c->to, list, pat) == -1)
		cfg_nomem(c->ctx, NULL);
}

/* The managed deny entries first in a layer's policy. */
void
managed_seed(struct cfgctx *ctx, const struct managed *m, struct policy *pol)
{
	struct managed_copy c = { ctx, pol, POLICY_DENY };

	if (policy_walk(m->deny, managed_copy_cb, &c) == -1)
		cfg_nomem(ctx, NULL);
}

/* policy_walk: collect one list's patterns into an array. */
struct managed_vec {
	enum policy_list	  list;
	const struct pattern	**v;
	size_t			  n;
	int			  nomem;
};

static void
managed_collect_cb(enum policy_list list, const struct pattern *pat,
    void *arg)
{
	struct managed_vec	 *c = arg;
	const struct pattern	**v;

	if (list != c->list || c->nomem)
		return;
	if ((v = reallocarray(c->v, c->n + 1, sizeof(*v))) == NULL) {
		c->nomem = 1;
		return;
	}
	c->v = v;
	c->v[c->n++] = pat;
}

/* One list of a policy as an array (free it, not its elements). */
static int
managed_collect(const struct policy *p, enum policy_list list,
    const struct pattern ***out, size_t *n)
{
	struct managed_vec c = { list, NULL, 0, 0 };

	if (p != NULL && (policy_walk(p, managed_collect_cb, &c) == -1 ||
	    c.nomem)) {
		free(c.v);
		return -1;
	}
	*out = c.v;
	*n = c.n;
	return 0;
}

/* The JSON path at the end of a source "FILE: $.x[1]", or NULL. */
static const char *
managed_jpath(const char *source)
{
	const char *p, *last = NULL;

	for (p = source; source != NULL && (p = strstr(p, ": $")) != NULL;
	    p++)
		last = p;
	return last != NULL ? last + 2 : NULL;
}

/* Checking a layer's allow entries against the managed lists. */
struct managed_allow {
	struct cfgctx		 *ctx;
	const struct pattern	**deny, **ceil;
	size_t			  ndeny, nceil;
	int			  ceiling;	/* there is one */
};

static void
managed_allow_cb(enum policy_list list, const struct pattern *pat,
    void *arg)
{
	struct managed_allow	*a = arg;
	const char		*jp;
	size_t			 i;

	if (list != POLICY_ALLOW)
		return;
	jp = managed_jpath(pat->source);
	for (i = 0; i < a->ndeny; i++)
		if (pattern_within(pat, a->deny[i])) {
			cfg_err(a->ctx, jp, "\"%s\" is refused by \"%s\" in "
			    "$.network.deniedDomains of %s (managed layer), "
			    "which no lower layer can open: remove the entry",
			    pat->text, a->deny[i]->text, MANAGED_NAME);
			return;
		}
	if (!a->ceiling)
		return;
	for (i = 0; i < a->nceil; i++)
		if (pattern_within(pat, a->ceil[i]))
			return;
	cfg_err(a->ctx, jp, "\"%s\" is outside $.network.allowedDomainsCeiling "
	    "of %s (managed layer), which bounds every allow entry: allow "
	    "only what lies within it%s%s%s", pat->text, MANAGED_NAME,
	    a->nceil > 0 ? " (\"" : "", a->nceil > 0 ? a->ceil[0]->text : "",
	    a->nceil > 1 ? "\", ...)" : a->nceil > 0 ? "\")" : "");
}

/*
 * Every loosening of the managed rules by a layer: its allow entries
 * against the managed deny entries and ceiling, the ceiling put on its
 * policy; for a config, its switches, limits and paths.
 */
void
managed_check(struct cfgctx *ctx, struct managed *m, const json_t *root,
    struct config *conf, struct policy *pol)
{
	struct managed_allow	 a;
	struct managed_copy	 c;
	struct policy		*ceil;

	memset(&a, 0, sizeof(a));
	a.ctx = ctx;
	a.ceiling = m->ceiling != NULL;
	if (managed_collect(m->deny, POLICY_DENY, &a.deny, &a.ndeny) == -1 ||
	    managed_collect(m->ceiling, POLICY_ALLOW, &a.ceil, &a.nceil) == -1 ||
	    policy_walk(pol, managed_allow_cb, &a) == -1)
		cfg_nomem(ctx, NULL);
	free(a.deny);
	free(a.ceil);
	if (m->ceiling != NULL) {
		c.ctx = ctx;
		c.list = POLICY_ALLOW;
		if ((c.to = ceil = policy_new()) == NULL ||
		    policy_walk(m->ceiling, managed_copy_cb, &c) == -1 ||
		    policy_set_ceiling(pol, ceil, MANAGED_PATH
		    ": $.network.allowedDomainsCeiling") == -1) {
			policy_free(ceil);
			cfg_nomem(ctx, NULL);
		}
	}
	if (conf == NULL)
		return;
	managed_switches(ctx, m, root, conf);
	managed_rules_check(ctx, m, conf);
	managed_limits_apply(ctx, m, root, conf);
	managed_fs_apply(ctx, m, conf);
}

/* What the managed file forbids, turned on by the layer. */
static void
managed_switches(struct cfgctx *ctx, const struct managed *m,
    const json_t *root, struct config *conf)
{
	char	 allowed[64];
	size_t	 k, o = 0;
	int	 mode = -1;

	if (m->no_all_unix && conf->allow_all_unix_sockets)
		cfg_err(ctx, "$.network.allowAllUnixSockets", "forbidden by "
		    "$.network.allowAllUnixSockets false in %s (managed "
		    "layer): list the sockets commands need in "
		    "network.allowUnixSockets instead", MANAGED_NAME);
	if (m->no_git_config && conf->allow_git_config)
		cfg_err(ctx, "$.filesystem.allowGitConfig", "forbidden by "
		    "$.filesystem.allowGitConfig false in %s (managed layer): "
		    "remove it", MANAGED_NAME);
	if (m->no_nested_userns && conf->allow_nested_userns)
		cfg_err(ctx, "$.allowNestedUserNamespaces", "forbidden by "
		    "$.allowNestedUserNamespaces false in %s (managed layer): "
		    "remove it", MANAGED_NAME);
	/* Never without namespaces: a lower false is a loosening. */
	if (m->require_ns && json_is_false(json_object_get(root,
	    "requireNamespaces")))
		cfg_err(ctx, "$.requireNamespaces", "false is forbidden by "
		    "$.requireNamespaces true in %s (managed layer): remove "
		    "it", MANAGED_NAME);
	if (m->require_ns)
		conf->require_namespaces = 1;
	if (m->no_hostipc && conf->hostipc_mode == HOSTIPC_ASK)
		cfg_err(ctx, "$.hostIPC.mode", "\"ask\" is forbidden by "
		    "$.hostIPC.mode \"off\" in %s (managed layer): no command "
		    "runs on the host; remove it", MANAGED_NAME);
	switch (conf->review_mode) {
	case REVIEW_COMMAND:
		mode = 0;
		break;
	case REVIEW_SOCKET:
		mode = 1;
		break;
	case REVIEW_TTY:
		mode = 2;
		break;
	case REVIEW_NONE:
		break;
	}
	if (mode == -1 || m->modes == 0 || (m->modes & (1U << mode)) != 0)
		return;
	allowed[0] = '\0';
	for (k = 0; managed_modes[k] != NULL && o < sizeof(allowed); k++)
		if (m->modes & (1U << k))
			o += (size_t)snprintf(allowed + o, sizeof(allowed) - o,
			    "%s%s", o > 0 ? ", " : "", managed_modes[k]);
	cfg_err(ctx, "$.review", "reviews by %s are not allowed by "
	    "$.review.modes of %s (managed layer; allowed: %s): use one of "
	    "those or no reviewer", managed_modes[mode], MANAGED_NAME,
	    o > 0 ? allowed : "none");
}

/*
 * The limits: a value the layer set above the managed one is an error; a
 * default above it is lowered to it.
 */
static void
managed_limits_apply(struct cfgctx *ctx, const struct managed *m,
    const json_t *root, struct config *conf)
{
	const struct managed_limit	*l;
	const json_t			*sec;
	char				 jp[64];
	size_t				 i;
	int				*v;

	for (i = 0; i < MANAGED_NLIMITS; i++) {
		if (m->limit[i] == 0)
			continue;
		l = &managed_limits[i];
		v = (int *)(void *)((char *)conf + l->off);
		sec = json_object_get(root, l->section);
		if (sec != NULL && json_object_get(sec, l->key) != NULL &&
		    *v > m->limit[i]) {
			snprintf(jp, sizeof(jp), "$.%s.%s", l->section, l->key);
			cfg_err(ctx, jp, "%d is above %d, the most $.%s.%s in "
			    "%s (managed layer) allows: lower it", *v,
			    m->limit[i], l->section, l->key, MANAGED_NAME);
		} else if (*v > m->limit[i] || (l->zero_unset && *v == 0))
			*v = m->limit[i];
	}
}

/* Whether the managed file lets reviews go to mode (policy.h). */
int
config_managed_review(const struct config *conf, const char *mode, char *err,
    size_t errlen)
{
	const struct managed	*m = conf->managed;
	size_t			 k;

	if (m == NULL || m->modes == 0)
		return 0;
	for (k = 0; managed_modes[k] != NULL; k++)
		if (strcmp(managed_modes[k], mode) == 0 &&
		    (m->modes & (1U << k)) != 0)
			return 0;
	snprintf(err, errlen, "reviews by %s are not allowed by $.review.modes "
	    "of %s (managed layer)", mode, MANAGED_NAME);
	return -1;
}
