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
 * is what is read.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "policy/policy.h"
#include "policy/config_int.h"

#define MANAGED_NAME	"the managed file " MANAGED_PATH

/* A limit the managed file caps: its key and where it is in a config. */
struct managed_limit {
	const char	*section;	/* "proxy", "review" */
	const char	*key;
	size_t		 off;		/* of the int in struct config */
	int		 zero_unset;	/* 0 in the config: "the default" */
};

static const struct managed_limit managed_limits[] = {
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
#define MANAGED_NLIMITS	(sizeof(managed_limits) / sizeof(*managed_limits))

/* Review transports by name; "supervisor" is supervisor mode's socket. */
static const char *const managed_modes[] = {
	"command", "socket", "tty", "supervisor", NULL
};

struct managed {
	struct policy	*deny;		/* deniedDomains (its deny list) */
	struct policy	*ceiling;	/* allowedDomainsCeiling, or NULL */
	struct strlist	 deny_read;	/* absolute or "~" */
	struct strlist	 deny_write;
	int		 limit[MANAGED_NLIMITS];	/* 0: none */
	unsigned int	 modes;		/* 1 << managed_modes[i]; 0: any */
	int		 no_all_unix;	/* network.allowAllUnixSockets false */
	int		 no_git_config;	/* filesystem.allowGitConfig false */
	int		 no_nested_userns; /* allowNestedUserNamespaces false */
	int		 no_hostipc;	/* hostIPC.mode "off" */
	/* What managed_check put in the config (for config_walk). */
	size_t		 nread;		/* conf->deny_read's first entries */
	size_t		 nwrite;	/* conf->deny_write's */
	int		 home_added;	/* "~" for the default denyRead */
};

static const char *const keys_top[] = {
	"$schema", "network", "filesystem", "review", "proxy", "hostIPC",
	"allowNestedUserNamespaces", NULL
};
static const char *const keys_network[] = {
	"deniedDomains", "allowedDomainsCeiling", "allowAllUnixSockets", NULL
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

static int	 managed_open(struct cfgctx *);
static int	 managed_trusted(struct cfgctx *, int, const char *, int);
static struct managed *managed_parse(struct cfgctx *, const char *,
		    size_t);
static void	 managed_network(struct cfgctx *, const json_t *,
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
static void	 managed_fs_apply(struct cfgctx *, struct managed *,
		    struct config *);
static int	 managed_fs_prepend(struct strlist *, const struct strlist *);
static void	 managed_limits_apply(struct cfgctx *, const struct managed *,
		    const json_t *, struct config *);
static int	 managed_path_meets(const char *, const char *, const char *,
		    const char *);
static char	*managed_expand(const char *, const char *, const char *);
static void	 managed_paths_list(struct cfgctx *, const struct managed *,
		    const struct strlist *, const char *, int, const char *,
		    const char *);
static void	 managed_normalise(char *);
static int	 managed_collect(const struct policy *, enum policy_list,
		    const struct pattern ***, size_t *);
static void	 managed_collect_cb(enum policy_list, const struct pattern *,
		    void *);
static const char *managed_jpath(const char *);
struct managed_walk;
static void	 managed_walk_list(struct managed_walk *,
		    const struct config *, const struct strlist *,
		    const char *, size_t, int);
static void	 managed_line(struct managed_walk *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static void	 managed_walk_cb(enum policy_list, const struct pattern *,
		    void *);
static int	 managed_under(const char *, const char *);
static void	 managed_switches(struct cfgctx *, const struct managed *,
		    struct config *);
static const struct item_check managed_check_path = { managed_item_path, 1 };

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

void
managed_free(struct managed *m)
{
	if (m == NULL)
		return;
	policy_free(m->deny);
	policy_free(m->ceiling);
	strlist_free(&m->deny_read);
	strlist_free(&m->deny_write);
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
	managed_switches(ctx, m, conf);
	managed_limits_apply(ctx, m, root, conf);
	managed_fs_apply(ctx, m, conf);
}

/* What the managed file forbids, turned on by the layer. */
static void
managed_switches(struct cfgctx *ctx, const struct managed *m,
    struct config *conf)
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

/* Put from's entries (copies) before l's. */
static int
managed_fs_prepend(struct strlist *l, const struct strlist *from)
{
	char	**v;
	size_t	  i;

	if (from->n == 0)
		return 0;
	if ((v = calloc(l->n + from->n + 1, sizeof(*v))) == NULL)
		return -1;
	for (i = 0; i < from->n; i++)
		if ((v[i] = strdup(from->v[i])) == NULL) {
			while (i-- > 0)
				free(v[i]);
			free(v);
			return -1;
		}
	if (l->n > 0)
		memcpy(v + from->n, l->v, l->n * sizeof(*v));
	free(l->v);
	l->v = v;
	l->n += from->n;
	l->v[l->n] = NULL;
	return 0;
}

/*
 * The denied paths: a lower allow entry that would open one is an error
 * (entries relative to the project are checked by pisbx-run, which
 * knows it: config_managed_paths); then the managed entries go first in
 * the layer's lists.  Without a denyRead of its own the layer keeps its
 * default, the home directory hidden, besides them.
 */
static void
managed_fs_apply(struct cfgctx *ctx, struct managed *m, struct config *conf)
{
	const char	*home = cfg_home();

	managed_paths_list(ctx, m, &conf->allow_read, "allowRead", 0, NULL,
	    home);
	managed_paths_list(ctx, m, &conf->allow_write, "allowWrite", 1, NULL,
	    home);
	if (m->deny_read.n > 0 && !conf->fs_deny_read_set) {
		char *h;

		conf->fs_deny_read_set = 1;
		if (home != NULL && strcmp(home, "/") != 0) {
			if ((h = strdup("~")) == NULL ||
			    cfg_strlist_add(&conf->deny_read, h) == -1) {
				free(h);
				cfg_nomem(ctx, "$.filesystem.denyRead");
			}
			m->home_added = 1;
		}
	}
	if (managed_fs_prepend(&conf->deny_read, &m->deny_read) == -1 ||
	    managed_fs_prepend(&conf->deny_write, &m->deny_write) == -1)
		cfg_nomem(ctx, "$.filesystem");
	m->nread = m->deny_read.n;
	m->nwrite = m->deny_write.n;
}

/* Lexically: no "//", "/./", "/x/../", trailing "/" (p absolute). */
static void
managed_normalise(char *p)
{
	char	*out = p, *in = p, *slash;
	size_t	 n;

	while (*in != '\0') {
		while (*in == '/')
			in++;
		if (*in == '\0')
			break;
		n = strcspn(in, "/");
		if (n == 1 && in[0] == '.') {
			in += n;
			continue;
		}
		if (n == 2 && in[0] == '.' && in[1] == '.') {
			*out = '\0';
			if ((slash = strrchr(p, '/')) != NULL)
				out = slash;
			in += n;
			continue;
		}
		*out++ = '/';
		memmove(out, in, n);
		out += n;
		in += n;
	}
	if (out == p)
		*out++ = '/';
	*out = '\0';
}

/*
 * An entry as an absolute path: "~" from home, relative from proj (NULL
 * when it cannot be placed), normalised, and with symbolic links
 * resolved where it exists.  malloc'ed.
 */
static char *
managed_expand(const char *e, const char *proj, const char *home)
{
	char	*p, real[PATH_MAX];
	int	 r;

	if (e[0] == '~' && (e[1] == '\0' || e[1] == '/'))
		r = home != NULL ? asprintf(&p, "%s/%s", home, e + 1) : -1;
	else if (e[0] == '/')
		r = asprintf(&p, "%s", e);
	else
		r = proj != NULL ? asprintf(&p, "%s/%s", proj, e) : -1;
	if (r == -1)
		return NULL;
	managed_normalise(p);
	if (!glob_is_pattern(p) && realpath(p, real) != NULL) {
		free(p);
		p = strdup(real);
	}
	return p;
}

/* Whether path is dir or lies below it. */
static int
managed_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return 1;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' ||
	    path[n] == '/');
}

/*
 * Whether the allow entry e (expanded) opens something of the denied
 * d (expanded): e at or below d; for patterns, what they can match.
 * Two patterns meet when either's literal base lies in the other's.
 */
static int
managed_path_meets(const char *e, const char *d, const char *proj,
    const char *home)
{
	struct glob	*ge = NULL, *gd = NULL;
	const char	*why;
	char		*a, *slash;
	int		 hit = 0;

	if (!glob_is_pattern(e) && !glob_is_pattern(d))
		return managed_under(e, d);
	if (glob_is_pattern(e) &&
	    (ge = glob_compile(e, proj != NULL ? proj : "/", home, &why))
	    == NULL)
		return 1;	/* cannot be checked: refused */
	if (glob_is_pattern(d) &&
	    (gd = glob_compile(d, "/", home, &why)) == NULL) {
		glob_free(ge);
		return 1;
	}
	if (ge != NULL && gd != NULL)
		hit = managed_under(glob_base(ge), glob_base(gd)) ||
		    managed_under(glob_base(gd), glob_base(ge));
	else if (ge != NULL)
		hit = glob_match(ge, d, 0) || glob_match(ge, d, 1) ||
		    glob_match_below(ge, d);
	else if ((a = strdup(e)) == NULL)
		hit = 1;
	else {
		/* e, or a directory above it, matched by the pattern d. */
		for (;;) {
			if (glob_match(gd, a, 0) || glob_match(gd, a, 1)) {
				hit = 1;
				break;
			}
			if ((slash = strrchr(a, '/')) == NULL || slash == a)
				break;
			*slash = '\0';
		}
		free(a);
	}
	glob_free(ge);
	glob_free(gd);
	return hit;
}

/*
 * Each entry of a layer's allowRead or allowWrite (write) that would
 * open a managed denyRead (or, for writes, denyWrite) path: one error
 * naming both.  proj NULL: entries relative to the project are left.
 */
static void
managed_paths_list(struct cfgctx *ctx, const struct managed *m,
    const struct strlist *l, const char *key, int write, const char *proj,
    const char *home)
{
	const struct strlist	*deny;
	char			 jp[64], q[CONFIG_QUOTE_MAX], *e, *d;
	size_t			 i, j, k;
	int			 hit;

	snprintf(jp, sizeof(jp), "$.filesystem.%s", key);
	for (i = 0; i < l->n; i++) {
		if (l->v[i][0] != '/' && l->v[i][0] != '~' && proj == NULL)
			continue;
		if ((e = managed_expand(l->v[i], proj, home)) == NULL)
			continue;	/* "~" without a home: names nothing */
		for (k = 0, hit = 0; k < 2 && !hit; k++) {
			deny = k == 0 ? &m->deny_read : &m->deny_write;
			if (k == 1 && !write)
				break;
			for (j = 0; j < deny->n && !hit; j++) {
				if ((d = managed_expand(deny->v[j], NULL,
				    home)) == NULL)
					continue;
				hit = managed_path_meets(e, d, proj, home);
				free(d);
				if (!hit)
					continue;
				cfg_quote(q, sizeof(q), l->v[i],
				    strlen(l->v[i]));
				cfg_err(ctx, jp, "%s would open \"%s\" of "
				    "$.filesystem.%s in %s (managed layer), "
				    "which always applies: remove the entry",
				    q, deny->v[j], k == 0 ? "denyRead" :
				    "denyWrite", MANAGED_NAME);
			}
		}
		free(e);
	}
}

int
config_managed_paths(const struct config *conf, const char *proj,
    const char *home, struct config_errors *errs)
{
	struct cfgctx	 ctx = { conf->path, errs, 0, NULL, 0, NULL, NULL };
	struct strlist	 read = { NULL, 0 }, write = { NULL, 0 };

	if (conf->managed == NULL)
		return 0;
	/* The layer's own entries: what follows the managed ones. */
	read = conf->allow_read;
	write = conf->allow_write;
	managed_paths_list(&ctx, conf->managed, &read, "allowRead", 0, proj,
	    home);
	managed_paths_list(&ctx, conf->managed, &write, "allowWrite", 1, proj,
	    home);
	if (ctx.nerr == 0)
		return 0;
	cfg_finish(&ctx);
	return -1;
}

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

/* config_walk's state: the callback, and a failure to report. */
struct managed_walk {
	void		(*cb)(const char *, void *);
	void		 *arg;
	const char	 *what;		/* "allow", "deny", "ceiling" */
	int		  nomem;
};

/* One line through the callback (printf-like); nomem on failure. */
static void
managed_line(struct managed_walk *w, const char *fmt, ...)
{
	va_list	 ap;
	char	*line;
	int	 r;

	va_start(ap, fmt);
	r = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (r == -1) {
		w->nomem = 1;
		return;
	}
	w->cb(line, w->arg);
	free(line);
}

static void
managed_walk_cb(enum policy_list list, const struct pattern *pat, void *arg)
{
	struct managed_walk *w = arg;

	managed_line(w, "%s %s from %s (%s)", w->what != NULL ? w->what :
	    list == POLICY_DENY ? "deny" : "allow", pat->text,
	    pat->source != NULL ? pat->source : "(unknown)",
	    pat->layer != NULL ? pat->layer : "user");
}

/*
 * Entries [from, to) of a filesystem list: managed ones (before
 * nmanaged) named by the managed file, the others by the layer's.
 */
static void
managed_walk_list(struct managed_walk *w, const struct config *conf,
    const struct strlist *l, const char *key, size_t nmanaged, int home)
{
	size_t	 i;

	for (i = 0; i < l->n; i++) {
		if (i < nmanaged)
			managed_line(w, "%s %s from %s: $.filesystem.%s "
			    "(managed)", key, l->v[i], MANAGED_PATH, key);
		else if (home && i == nmanaged)
			managed_line(w, "%s %s from the default (the home "
			    "directory, hidden without a denyRead of %s's "
			    "own; %s)", key, l->v[i], conf->path,
			    config_layer_name(conf->layer));
		else
			managed_line(w, "%s %s from %s: $.filesystem.%s (%s)",
			    key, l->v[i], conf->path, key,
			    config_layer_name(conf->layer));
	}
}

int
config_walk(const struct config *conf, void (*cb)(const char *, void *),
    void *arg)
{
	const struct managed	*m = conf->managed;
	struct managed_walk	 w = { cb, arg, NULL, 0 };
	size_t			 i, k, o = 0;
	char			 modes[64];

	if (policy_walk(conf->policy, managed_walk_cb, &w) == -1)
		return -1;
	w.what = "ceiling";
	if (m != NULL && m->ceiling != NULL &&
	    policy_walk(m->ceiling, managed_walk_cb, &w) == -1)
		return -1;
	managed_walk_list(&w, conf, &conf->deny_read, "denyRead",
	    m != NULL ? m->nread : 0, m != NULL && m->home_added);
	managed_walk_list(&w, conf, &conf->allow_read, "allowRead", 0, 0);
	managed_walk_list(&w, conf, &conf->allow_write, "allowWrite", 0, 0);
	managed_walk_list(&w, conf, &conf->deny_write, "denyWrite",
	    m != NULL ? m->nwrite : 0, 0);
	for (i = 0; m != NULL && i < MANAGED_NLIMITS; i++)
		if (m->limit[i] != 0)
			managed_line(&w, "limit %s.%s at most %d from %s: "
			    "$.%s.%s (managed)", managed_limits[i].section,
			    managed_limits[i].key, m->limit[i], MANAGED_PATH,
			    managed_limits[i].section, managed_limits[i].key);
	if (m != NULL && m->modes != 0) {
		modes[0] = '\0';
		for (k = 0; managed_modes[k] != NULL && o < sizeof(modes); k++)
			if (m->modes & (1U << k))
				o += (size_t)snprintf(modes + o,
				    sizeof(modes) - o, "%s%s", o > 0 ? "," : "",
				    managed_modes[k]);
		managed_line(&w, "review.modes %s from %s: $.review.modes "
		    "(managed)", o > 0 ? modes : "none", MANAGED_PATH);
	}
	if (m != NULL && m->no_all_unix)
		managed_line(&w, "forbid network.allowAllUnixSockets from %s: "
		    "$.network.allowAllUnixSockets (managed)", MANAGED_PATH);
	if (m != NULL && m->no_git_config)
		managed_line(&w, "forbid filesystem.allowGitConfig from %s: "
		    "$.filesystem.allowGitConfig (managed)", MANAGED_PATH);
	if (m != NULL && m->no_nested_userns)
		managed_line(&w, "forbid allowNestedUserNamespaces from %s: "
		    "$.allowNestedUserNamespaces (managed)", MANAGED_PATH);
	if (m != NULL && m->no_hostipc)
		managed_line(&w, "forbid hostIPC.mode ask from %s: "
		    "$.hostIPC.mode (managed)", MANAGED_PATH);
	return w.nomem ? -1 : 0;
}
