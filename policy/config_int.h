/*
 * The config loader's internals, shared by config.c (pisbx's own keys)
 * and compat.c (the keys of srt and pi-sandbox configs): one load's
 * context, how errors and notes are recorded, and the typed getters that
 * check a value and name its JSON path when it is wrong.
 */
#ifndef PISBX_CONFIG_INT_H
#define PISBX_CONFIG_INT_H

#include <jansson.h>

#define CONFIG_MAX_SIZE		(4 * 1024 * 1024)
#define CONFIG_MAX_ERRORS	100	/* stored; the rest are counted */
#define CONFIG_JPATH_MAX	192	/* a JSON path in a message */
#define CONFIG_VALUE_SHOWN	64	/* characters of a value in a message */
#define CONFIG_QUOTE_MAX	(CONFIG_VALUE_SHOWN * 12 + 8)
#define CONFIG_DEFAULT_NAME	"(embedded default)"
#define CONFIG_BUFFER_NAME	"(buffer)"
#define CONFIG_RELATIVE		"pisbx/config.json"
#define CONFIG_SRT		".srt-settings.json"	/* srt's, in $HOME */
#define CAPABILITY_ENV_DEFAULT	"PISBX_CAPABILITY"
#define ENV_NAME_MAX		255
#define RESOLVER_PORT_DEFAULT	53

/* One load: where errors go and how many there were. */
struct cfgctx {
	const char		*name;
	struct config_errors	*errs;
	size_t			 nerr;	/* all errors, also those not stored */
	struct config_errors	*notes;	/* the config's, once it exists */
	int			 paths;	/* a file: note allow entries that
					   name nothing (fs_missing_note) */
	const char		*source;	/* the file named absolutely, for
						   list entries' sources; NULL:
						   name */
	const char		*layer;		/* list entries' layer, or NULL */
};

/*
 * Validates one string-list entry and returns its stored form (malloc'ed),
 * or NULL after reporting an error.
 */
struct item_check {
	char	*(*fn)(struct cfgctx *, const char *, const char *, size_t,
		    size_t);
	int	  dedup;	/* drop entries equal to an earlier one */
};

/* config.c */
void		 cfg_err(struct cfgctx *, const char *, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
/* A remark for --check -v: a key accepted without effect, and why. */
void		 cfg_note(struct cfgctx *, const char *, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
void		 cfg_nomem(struct cfgctx *, const char *);
void		 cfg_quote(char *, size_t, const char *, size_t);
void		 cfg_describe(char *, size_t, const json_t *);
void		 cfg_jpath_key(char *, size_t, const char *, const char *);
void		 cfg_jpath_index(char *, size_t, const char *, size_t);
int		 cfg_obj_check(struct cfgctx *, const char *, const json_t *,
		    const char *const *);
int		 cfg_bool(struct cfgctx *, const char *, const json_t *,
		    const char *, int *);
int		 cfg_int(struct cfgctx *, const char *, const json_t *,
		    const char *, long long, long long, int *);
int		 cfg_int64(struct cfgctx *, const char *, const json_t *,
		    const char *, long long, long long, long long *);
const char	*cfg_string(struct cfgctx *, const char *, const json_t *,
		    const char *, size_t *);
int		 cfg_strlist(struct cfgctx *, const char *, const json_t *,
		    const char *, const struct item_check *, struct strlist *);
int		 cfg_strlist_add(struct strlist *, char *);
char		*cfg_item_path(struct cfgctx *, const char *, const char *,
		    size_t, size_t);
int		 cfg_abs_path(struct cfgctx *, const char *, const char *,
		    size_t, size_t);
extern const struct item_check cfg_check_path;
void		 cfg_patterns(struct cfgctx *, const char *, const json_t *,
		    const char *, int, struct policy *, struct strlist *);
char		*cfg_file_read(struct cfgctx *, int fd, size_t *);
json_t		*cfg_json_parse(struct cfgctx *, const char *, size_t);
void		 cfg_finish(struct cfgctx *);
const char	*cfg_home(void);
/* [A-Za-z_][A-Za-z0-9_]*, at most ENV_NAME_MAX bytes. */
int		 cfg_env_name_valid(const char *, size_t);

/* managed.c */
#define MANAGED_NAME	"the managed file " MANAGED_PATH
#define MANAGED_NLIMITS	7

/* A limit the managed file caps: its key and where it is in a config. */
struct managed_limit {
	const char	*section;	/* "proxy", "review" */
	const char	*key;
	size_t		 off;		/* of the int in struct config */
	int		 zero_unset;	/* 0 in the config: "the default" */
};
extern const struct managed_limit managed_limits[MANAGED_NLIMITS];
/* Review transports by name; "supervisor" is supervisor mode's socket. */
extern const char *const managed_modes[];

/* The managed file's rules. */
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
	int		 require_ns;	/* requireNamespaces true */
	/* The network object, when it has tlsTerminate or requestRules. */
	json_t		*net;
	/* What managed_check put in the config (for config_walk). */
	size_t		 nread;		/* conf->deny_read's first entries */
	size_t		 nwrite;	/* conf->deny_write's */
	int		 home_added;	/* "~" for the default denyRead */
	size_t		 nreq;		/* conf->req_hosts' first entries */
};

/*
 * Read MANAGED_PATH: 0 with *out NULL when there is no such file, 0 with
 * *out set, or -1 after errors (an untrusted path, a bad file).
 */
int		 managed_load(struct config_errors *, struct managed **out);
void		 managed_free(struct managed *);
/* Before a layer's own keys: the managed deny entries into pol. */
void		 managed_seed(struct cfgctx *, const struct managed *,
		    struct policy *);
/*
 * Before a config's network keys: the managed tlsTerminate and
 * requestRules into conf (errors counted in ctx, named in the managed
 * file).
 */
void		 managed_seed_rules(struct cfgctx *, struct managed *,
		    struct config *);
/*
 * After them: every loosening of the managed rules by the layer (root
 * is its JSON, conf NULL for a supervisor's "network" object) is an
 * error; the ceiling goes on pol, the denied paths and limits on conf.
 */
void		 managed_check(struct cfgctx *, struct managed *,
		    const json_t *root, struct config *, struct policy *);

/* managed_fs.c */
/*
 * The managed denied paths: a lower allow entry that would open one is
 * an error; then they go first in the layer's lists.
 */
void		 managed_fs_apply(struct cfgctx *, struct managed *,
		    struct config *);

/* compat.c */
void		 compat_top(struct cfgctx *, const json_t *, struct config *);
void		 compat_network(struct cfgctx *, const char *, const json_t *,
		    struct config *);
void		 compat_filesystem(struct cfgctx *, const char *,
		    const json_t *, struct config *);

/* secrets.c */
/* network.tlsTerminate in the network object at base. */
void		 secrets_tls(struct cfgctx *, const char *base, const json_t *,
		    struct config *);
/*
 * The top-level "credentials" (after the network object: its checks
 * need allowedDomains and tlsTerminate).
 */
void		 secrets_creds(struct cfgctx *, const json_t *root,
		    struct config *);
void		 secrets_free(struct config *);

/* reqrule.c */
/* network.requestRules (after tlsTerminate). */
void		 reqrule_parse(struct cfgctx *, const char *base,
		    const json_t *, struct config *);
void		 reqrule_free(struct config *);

#endif
