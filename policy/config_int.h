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

/* compat.c */
void		 compat_top(struct cfgctx *, const json_t *, struct config *);
void		 compat_network(struct cfgctx *, const char *, const json_t *,
		    struct config *);
void		 compat_filesystem(struct cfgctx *, const char *,
		    const json_t *, struct config *);

#endif
