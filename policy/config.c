/*
 * The config loader: a strict reader of pisbx's trusted JSON config.
 *
 * Every key is known and every value checked.  Nothing is silently
 * widened: an unknown key, a wrong type, a number out of range or a bad
 * pattern makes the whole config invalid.  Each error names the file, the
 * JSON path and the bad value, and all of them are collected before the
 * load fails once at the end (httpd's parse.y does the same), so a person
 * fixes a config in one round instead of one error per run.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "policy/policy.h"
#include "policy/config_int.h"

static void	 cfg_line(struct cfgctx *, struct config_errors *,
		    const char *, const char *, va_list)
		    __attribute__((format(printf, 4, 0)));
static void	 jpath_trunc(char *, size_t, int);
static void	 cfg_flags(struct cfgctx *, const char *, const json_t *,
		    const char *, const char *const *, unsigned int *);
static int	 strlist_has(const struct strlist *, const char *);
static char	*item_listen(struct cfgctx *, const char *, const char *,
		    size_t, size_t);
static char	*item_server(struct cfgctx *, const char *, const char *,
		    size_t, size_t);
static char	*item_argv(struct cfgctx *, const char *, const char *,
		    size_t, size_t);
static char	*item_prefix(struct cfgctx *, const char *, const char *,
		    size_t, size_t);
static char	*item_write_path(struct cfgctx *, const char *, const char *,
		    size_t, size_t);
static int	 port_text(const char *, size_t, int, uint16_t *);
static int	 addr_port_parse(const char *, size_t, int, uint16_t, char *,
		    size_t, const char **);
static void	 pattern_warn(struct cfgctx *, const char *, const char *,
		    const struct pattern *, struct strlist *);
static void	 parse_network(struct cfgctx *, const char *, const json_t *,
		    struct config *, struct policy *);
static void	 parse_budget(struct cfgctx *, const char *, const json_t *,
		    struct config *);
static void	 parse_budget_hosts(struct cfgctx *, const char *,
		    const json_t *, struct config *);
static void	 parse_parent(struct cfgctx *, const char *, const json_t *,
		    struct config *);
static void	 parent_url(struct cfgctx *, const char *, const json_t *,
		    const char *, struct parent_url *);
static void	 parent_noproxy(struct cfgctx *, const char *,
		    const json_t *, struct parent_proxy *);
static void	 parent_cred(struct cfgctx *, const char *, const json_t *,
		    struct parent_proxy *);
static void	 parent_forwarding(struct cfgctx *, const char *,
		    const json_t *, struct parent_proxy *);
static void	 review_command_warn(struct cfgctx *, struct config *);
static void	 fs_missing_note(struct cfgctx *, const char *, const json_t *,
		    const char *);
static struct config *config_parse(const char *, size_t, const char *,
		    const char *, struct config_errors *, int, enum config_layer,
		    struct managed *);
static char	*parent_cred_read(struct cfgctx *, const char *,
		    const char *, size_t *);
static void	 parse_filesystem(struct cfgctx *, const json_t *,
		    struct config *);
static void	 parse_proxy(struct cfgctx *, const json_t *, struct config *);
static void	 parse_metrics(struct cfgctx *, const json_t *,
		    struct config *);
static int	 metrics_loopback(const char *);
static void	 parse_syslog(struct cfgctx *, const json_t *,
		    struct config *);
static void	 parse_resolver(struct cfgctx *, const json_t *,
		    struct config *);
static void	 parse_review(struct cfgctx *, const json_t *,
		    struct config *);
static void	 parse_hostipc(struct cfgctx *, const json_t *,
		    struct config *);
static struct config *config_new(struct cfgctx *, const char *);
static char	*config_path_in(const char *, const char *);
static char	*config_present(char *);

/*
 * Key lists.  Besides pisbx's own keys, every key of an srt settings file
 * (Anthropic's sandbox-runtime) and of a pi-sandbox config is known: each
 * is honoured, mapped, accepted without effect (with a note) or refused
 * with the pisbx way to say it -- compat.c, and the table in
 * docs/config.md.
 */
static const char *const keys_top[] = {
	"$schema", "network", "filesystem", "proxy", "resolver", "review",
	"hostIPC", "requireNamespaces",
	/* srt */
	"credentials", "ignoreViolations", "enableWeakerNestedSandbox",
	"enableWeakerNetworkIsolation", "allowAppleEvents", "ripgrep",
	"mandatoryDenySearchDepth", "allowPty", "seccomp", "bwrapPath",
	"socatPath", "javaAgentJarPath", "windows", "git",
	"allowNestedUserNamespaces",
	/* pi-sandbox */
	"subagents", NULL
};
static const char *const keys_network[] = {
	"allowedDomains", "deniedDomains", "allowAllUnixSockets",
	/* srt's, and parentProxy (pisbx's too) */
	"deniedDomainReasons", "strictAllowlist", "allowUnixSockets",
	"allowLocalBinding", "allowMachLookup", "httpProxyPort",
	"socksProxyPort", "mitmProxy", "filterRequest", "tlsTerminate",
	"deniedResolvedAddresses", "parentProxy", "allowPlaintextHeaderSet",
	"stripResponseHeaders", "refuseOpaqueTunnels", "requireHostMatch",
	"ambiguousRequestTarget",
	/* pisbx's */
	"budget", "requestRules", "allowUnixDatagramSockets", NULL
};
static const char *const keys_budget[] = {
	"bytesUpPerHost", "connectionsPerHost", "hosts", NULL
};
static const char *const keys_budget_host[] = {
	"host", "bytesUp", "connections", NULL
};
static const char *const keys_parent[] = {
	"http", "https", "noProxy", "credentialsFile", "credentialsEnv",
	"httpForwarding", NULL
};
static const char *const keys_network_policy[] = {
	"allowedDomains", "deniedDomains", NULL
};
static const char *const keys_filesystem[] = {
	"denyRead", "allowRead", "allowWrite", "denyWrite", "allowGitConfig",
	"toolchains", "caches",
	/* srt */
	"disabled",
	/* pi-sandbox */
	"additionalAllowRead", NULL
};

const char *const config_toolchain_names[] = {
	[TOOLCHAIN_RUSTUP] = "rustup", [TOOLCHAIN_CARGO] = "cargo",
	[TOOLCHAIN_PYENV] = "pyenv", [TOOLCHAIN_NVM] = "nvm",
	[TOOLCHAIN_VOLTA] = "volta", [TOOLCHAIN_BUN] = "bun",
	[TOOLCHAIN_DENO] = "deno", [TOOLCHAIN_GO] = "go",
	[TOOLCHAIN_LOCAL] = "local", [TOOLCHAIN_MISE] = "mise",
	[TOOLCHAIN_ASDF] = "asdf", [TOOLCHAIN_SDKMAN] = "sdkman",
	[TOOLCHAIN_GIT] = "git", [TOOLCHAIN_NPM] = "npm",
	[TOOLCHAIN_PIP] = "pip", [TOOLCHAIN_MAX] = NULL
};
const char *const config_cache_names[] = {
	[CACHE_NPM] = "npm", [CACHE_YARN] = "yarn", [CACHE_PIP] = "pip",
	[CACHE_UV] = "uv", [CACHE_CARGO] = "cargo", [CACHE_GO] = "go",
	[CACHE_MAVEN] = "maven", [CACHE_GRADLE] = "gradle",
	[CACHE_BUN] = "bun", [CACHE_DENO] = "deno", [CACHE_XDG] = "xdg",
	[CACHE_MAX] = NULL
};
static const char *const keys_proxy[] = {
	"listen", "maxConnections", "maxClientConnections", "connectTimeoutMs",
	"idleTimeoutMs", "headerTimeoutMs", "accessLog", "accessLogFormat",
	"accessLogSyslog", "metrics", NULL
};
static const char *const keys_syslog[] = {
	"address", "appName", "facility", "queueMax", NULL
};
static const char *const keys_metrics[] = {
	"listen", "allowNonLoopback", NULL
};
static const char *const keys_resolver[] = {
	"servers", "hostsFile", "timeoutMs", NULL
};
static const char *const keys_review[] = {
	"command", "socket", "capabilityEnv", "mode", "timeoutMs",
	"maxInFlight", NULL
};
static const char *const keys_hostipc[] = {
	"mode", "preflightCommandPrefixes", "retryOnUnixSocketError", NULL
};

const struct item_check cfg_check_path = { cfg_item_path, 1 };
static const struct item_check check_listen = { item_listen, 1 };
static const struct item_check check_server = { item_server, 1 };
static const struct item_check check_argv = { item_argv, 0 };
static const struct item_check check_prefix = { item_prefix, 1 };
static const struct item_check check_write_path = { item_write_path, 1 };

/* Append "NAME: JPATH: message" (JPATH may be NULL) to a list. */
static void
cfg_line(struct cfgctx *ctx, struct config_errors *e, const char *jpath,
    const char *fmt, va_list ap)
{
	char *msg = NULL, *line = NULL, **v;
	int r;

	if (vasprintf(&msg, fmt, ap) == -1)
		return;
	if (jpath != NULL)
		r = asprintf(&line, "%s: %s: %s", ctx->name, jpath, msg);
	else
		r = asprintf(&line, "%s: %s", ctx->name, msg);
	free(msg);
	if (r == -1)
		return;
	if ((v = reallocarray(e->msg, e->n + 1, sizeof(*v))) == NULL) {
		free(line);
		return;
	}
	e->msg = v;
	e->msg[e->n++] = line;
}

/* Record one error; all are counted, the first 100 kept. */
void
cfg_err(struct cfgctx *ctx, const char *jpath, const char *fmt, ...)
{
	va_list ap;

	if (ctx->nerr++ >= CONFIG_MAX_ERRORS || ctx->errs == NULL)
		return;
	va_start(ap, fmt);
	cfg_line(ctx, ctx->errs, jpath, fmt, ap);
	va_end(ap);
}

void
cfg_note(struct cfgctx *ctx, const char *jpath, const char *fmt, ...)
{
	va_list ap;

	if (ctx->notes == NULL || ctx->notes->n >= CONFIG_MAX_ERRORS)
		return;
	va_start(ap, fmt);
	cfg_line(ctx, ctx->notes, jpath, fmt, ap);
	va_end(ap);
}

void
cfg_nomem(struct cfgctx *ctx, const char *jpath)
{
	cfg_err(ctx, jpath, "out of memory");
}

/* Say how many errors were counted but not stored. */
void
cfg_finish(struct cfgctx *ctx)
{
	size_t more;

	if (ctx->nerr <= CONFIG_MAX_ERRORS)
		return;
	more = ctx->nerr - CONFIG_MAX_ERRORS;
	ctx->nerr = 0;	/* let this last line through */
	cfg_err(ctx, NULL, "%zu more error%s not shown", more,
	    more == 1 ? "" : "s");
	ctx->nerr = CONFIG_MAX_ERRORS + more;
}

/* Whether the len bytes at s are all printable ASCII (0x20..0x7e). */
int
config_printable(const char *s, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

/*
 * Quote a value for a message: ASCII only, so a hostile config cannot put
 * terminal escapes or bidi overrides on the user's screen; non-ASCII is
 * shown as \uXXXX (jansson has already checked it is valid UTF-8).
 */
void
cfg_quote(char *out, size_t outlen, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0, shown, tl;
	unsigned long cp;
	char tmp[16];
	int n, k;

	if (outlen < 8) {
		if (outlen > 0)
			out[0] = '\0';
		return;
	}
	out[o++] = '"';
	for (shown = 0; i < len; shown++) {
		if (shown == CONFIG_VALUE_SHOWN) {
			snprintf(tmp, sizeof(tmp), "...");
			i = len;
		} else if (p[i] == '"' || p[i] == '\\') {
			snprintf(tmp, sizeof(tmp), "\\%c", p[i]);
			i++;
		} else if (p[i] >= 0x20 && p[i] < 0x7f) {
			snprintf(tmp, sizeof(tmp), "%c", p[i]);
			i++;
		} else if (p[i] < 0x80) {
			snprintf(tmp, sizeof(tmp), "\\u%04x", p[i]);
			i++;
		} else {
			if ((p[i] & 0xe0) == 0xc0)
				n = 2, cp = p[i] & 0x1f;
			else if ((p[i] & 0xf0) == 0xe0)
				n = 3, cp = p[i] & 0x0f;
			else if ((p[i] & 0xf8) == 0xf0)
				n = 4, cp = p[i] & 0x07;
			else
				n = 0, cp = 0;
			for (k = 1; k < n; k++) {
				if (i + k >= len || (p[i + k] & 0xc0) != 0x80) {
					n = 0;
					break;
				}
				cp = (cp << 6) | (p[i + k] & 0x3f);
			}
			if (n == 0) {
				snprintf(tmp, sizeof(tmp), "\\x%02x", p[i]);
				i++;
			} else {
				snprintf(tmp, sizeof(tmp), cp > 0xffff ?
				    "\\U%08lx" : "\\u%04lx", cp);
				i += (size_t)n;
			}
		}
		tl = strlen(tmp);
		if (o + tl + 2 > outlen)
			break;
		memcpy(out + o, tmp, tl);
		o += tl;
	}
	out[o++] = '"';
	out[o] = '\0';
}

/* Describe a JSON value for a "got ..." message. */
void
cfg_describe(char *out, size_t outlen, const json_t *v)
{
	char *d;

	switch (json_typeof(v)) {
	case JSON_STRING:
		cfg_quote(out, outlen, json_string_value(v),
		    json_string_length(v));
		return;
	case JSON_INTEGER:
		snprintf(out, outlen, "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		return;
	case JSON_REAL:
		if ((d = json_dumps(v, JSON_ENCODE_ANY)) == NULL) {
			snprintf(out, outlen, "a number");
			return;
		}
		snprintf(out, outlen, "%s", d);
		free(d);
		return;
	case JSON_TRUE:
		snprintf(out, outlen, "true");
		return;
	case JSON_FALSE:
		snprintf(out, outlen, "false");
		return;
	case JSON_NULL:
		snprintf(out, outlen, "null");
		return;
	case JSON_ARRAY:
		snprintf(out, outlen, "an array");
		return;
	case JSON_OBJECT:
		snprintf(out, outlen, "an object");
		return;
	}
	snprintf(out, outlen, "a value");
}

/* base.key, or base["key"] when the key is not a plain identifier. */
void
cfg_jpath_key(char *out, size_t outlen, const char *base, const char *key)
{
	char q[CONFIG_QUOTE_MAX];
	size_t i;
	int plain = key[0] != '\0', r;

	for (i = 0; key[i] != '\0' && plain; i++)
		plain = key[i] == '_' || key[i] == '$' ||
		    (key[i] >= 'a' && key[i] <= 'z') ||
		    (key[i] >= 'A' && key[i] <= 'Z') ||
		    (i > 0 && key[i] >= '0' && key[i] <= '9');
	if (plain && i <= CONFIG_VALUE_SHOWN)
		r = snprintf(out, outlen, "%s.%s", base, key);
	else {
		cfg_quote(q, sizeof(q), key, strlen(key));
		r = snprintf(out, outlen, "%s[%s]", base, q);
	}
	jpath_trunc(out, outlen, r);
}

void
cfg_jpath_index(char *out, size_t outlen, const char *base, size_t i)
{
	jpath_trunc(out, outlen, snprintf(out, outlen, "%s[%zu]", base, i));
}

/* Mark a path that did not fit (only hostile configs nest that deep). */
static void
jpath_trunc(char *out, size_t outlen, int r)
{
	if (r >= 0 && (size_t)r < outlen)
		return;
	if (outlen >= 4)
		memcpy(out + outlen - 4, "...", 4);
}

/*
 * Parse JSON text strictly: duplicate keys rejected, NUL inside strings
 * rejected (jansson's default without JSON_ALLOW_NUL), nothing after the
 * value.  Syntax errors are reported as NAME:LINE:COLUMN.
 */
json_t *
cfg_json_parse(struct cfgctx *ctx, const char *buf, size_t len)
{
	json_error_t jerr;
	json_t *root;
	char text[sizeof(jerr.text)];
	size_t i;

	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr))
	    != NULL)
		return root;
	/* The message can quote input bytes: keep it printable ASCII. */
	for (i = 0; jerr.text[i] != '\0' && i < sizeof(text) - 1; i++)
		text[i] = jerr.text[i] >= 0x20 && jerr.text[i] < 0x7f ?
		    jerr.text[i] : '?';
	text[i] = '\0';
	if (jerr.line >= 1)
		cfg_err(ctx, NULL, "line %d, column %d: invalid JSON: %s",
		    jerr.line, jerr.column, text);
	else
		cfg_err(ctx, NULL, "invalid JSON: %s", text);
	return NULL;
}

/*
 * Check that v is an object whose keys are all in keys[]; each unknown key
 * is one error.  Returns -1 when v is not an object at all.
 */
int
cfg_obj_check(struct cfgctx *ctx, const char *jpath, const json_t *v,
    const char *const *keys)
{
	char got[CONFIG_QUOTE_MAX], p[CONFIG_JPATH_MAX], known[1024];
	const char *key;
	json_t *val;
	size_t i, o = 0;

	if (!json_is_object(v)) {
		cfg_describe(got, sizeof(got), v);
		cfg_err(ctx, jpath, "expected an object, got %s", got);
		return -1;
	}
	known[0] = '\0';
	for (i = 0; keys[i] != NULL && o < sizeof(known); i++)
		o += (size_t)snprintf(known + o, sizeof(known) - o, "%s%s",
		    i > 0 ? ", " : "", keys[i]);
	/* The cast: jansson's iteration API takes a non-const object. */
	json_object_foreach((json_t *)v, key, val) {
		for (i = 0; keys[i] != NULL; i++)
			if (strcmp(keys[i], key) == 0)
				break;
		if (keys[i] != NULL)
			continue;
		cfg_jpath_key(p, sizeof(p), jpath, key);
		cfg_err(ctx, p, "unknown key (known keys here: %s)", known);
	}
	return 0;
}

/* An optional boolean: 0 (absent or set), -1 on a wrong type. */
int
cfg_bool(struct cfgctx *ctx, const char *base, const json_t *obj,
    const char *key, int *out)
{
	char p[CONFIG_JPATH_MAX], got[CONFIG_QUOTE_MAX];
	const json_t *v;

	if ((v = json_object_get(obj, key)) == NULL)
		return 0;
	if (!json_is_boolean(v)) {
		cfg_jpath_key(p, sizeof(p), base, key);
		cfg_describe(got, sizeof(got), v);
		cfg_err(ctx, p, "expected true or false, got %s", got);
		return -1;
	}
	*out = json_is_true(v);
	return 0;
}

/*
 * An optional set of named switches, all on by default: true (all),
 * false (none), or an object turning single names on or off; the rest
 * keep their default.  An unknown name is an error listing the known.
 */
static void
cfg_flags(struct cfgctx *ctx, const char *base, const json_t *obj,
    const char *key, const char *const *names, unsigned int *out)
{
	char p[CONFIG_JPATH_MAX], ip[CONFIG_JPATH_MAX], got[CONFIG_QUOTE_MAX];
	char known[256];
	const json_t *v, *item;
	const char *name;
	size_t i, o = 0;

	if ((v = json_object_get(obj, key)) == NULL)
		return;
	cfg_jpath_key(p, sizeof(p), base, key);
	if (json_is_boolean(v)) {
		*out = json_is_true(v) ? ~0U : 0;
		return;
	}
	if (!json_is_object(v)) {
		cfg_describe(got, sizeof(got), v);
		cfg_err(ctx, p, "expected true, false or an object of names "
		    "with true or false, got %s", got);
		return;
	}
	known[0] = '\0';
	for (i = 0; names[i] != NULL && o < sizeof(known); i++)
		o += (size_t)snprintf(known + o, sizeof(known) - o, "%s%s",
		    i > 0 ? ", " : "", names[i]);
	/* The cast: jansson's iteration API takes a non-const object. */
	json_object_foreach((json_t *)v, name, item) {
		cfg_jpath_key(ip, sizeof(ip), p, name);
		for (i = 0; names[i] != NULL; i++)
			if (strcmp(names[i], name) == 0)
				break;
		if (names[i] == NULL) {
			cfg_err(ctx, ip, "unknown name (known names here: %s)",
			    known);
			continue;
		}
		if (!json_is_boolean(item)) {
			cfg_describe(got, sizeof(got), item);
			cfg_err(ctx, ip, "expected true or false, got %s", got);
			continue;
		}
		if (json_is_true(item))
			*out |= 1U << i;
		else
			*out &= ~(1U << i);
	}
}

/*
 * An optional integer in [min, max].  Only JSON integers count: 1.5, 1.0,
 * 1e3, true and "5" are all rejected.
 */
int
cfg_int(struct cfgctx *ctx, const char *base, const json_t *obj,
    const char *key, long long min, long long max, int *out)
{
	long long n;

	if (cfg_int64(ctx, base, obj, key, min, max, &n) == -1)
		return -1;
	if (json_object_get(obj, key) != NULL)
		*out = (int)n;
	return 0;
}

/* cfg_int for a range beyond int's (byte counts). */
int
cfg_int64(struct cfgctx *ctx, const char *base, const json_t *obj,
    const char *key, long long min, long long max, long long *out)
{
	char p[CONFIG_JPATH_MAX], got[CONFIG_QUOTE_MAX];
	const json_t *v;
	json_int_t n;

	if ((v = json_object_get(obj, key)) == NULL)
		return 0;
	n = json_is_integer(v) ? json_integer_value(v) : 0;
	if (!json_is_integer(v) || n < min || n > max) {
		cfg_jpath_key(p, sizeof(p), base, key);
		cfg_describe(got, sizeof(got), v);
		cfg_err(ctx, p, "expected an integer from %lld to %lld, got %s",
		    min, max, got);
		return -1;
	}
	*out = (long long)n;
	return 0;
}

/*
 * An optional string: the value (its length in *len), or NULL when absent
 * or after reporting a wrong type (then *len is (size_t)-1).
 */
const char *
cfg_string(struct cfgctx *ctx, const char *base, const json_t *obj,
    const char *key, size_t *len)
{
	char p[CONFIG_JPATH_MAX], got[CONFIG_QUOTE_MAX];
	const json_t *v;

	*len = 0;
	if ((v = json_object_get(obj, key)) == NULL)
		return NULL;
	if (!json_is_string(v)) {
		cfg_jpath_key(p, sizeof(p), base, key);
		cfg_describe(got, sizeof(got), v);
		cfg_err(ctx, p, "expected a string, got %s", got);
		*len = (size_t)-1;
		return NULL;
	}
	*len = json_string_length(v);
	return json_string_value(v);
}

/*
 * An optional array of strings, each checked (and possibly rewritten) by
 * chk into out.  Returns 1 when the key was present, 0 when absent; errors
 * are reported, not returned.
 */
int
cfg_strlist(struct cfgctx *ctx, const char *base, const json_t *obj,
    const char *key, const struct item_check *chk, struct strlist *out)
{
	char p[CONFIG_JPATH_MAX], ip[CONFIG_JPATH_MAX], got[CONFIG_QUOTE_MAX];
	const json_t *v, *item;
	char *s;
	size_t i;

	if ((v = json_object_get(obj, key)) == NULL)
		return 0;
	cfg_jpath_key(p, sizeof(p), base, key);
	if (!json_is_array(v)) {
		cfg_describe(got, sizeof(got), v);
		cfg_err(ctx, p, "expected an array of strings, got %s", got);
		return 1;
	}
	json_array_foreach(v, i, item) {
		cfg_jpath_index(ip, sizeof(ip), p, i);
		if (!json_is_string(item)) {
			cfg_describe(got, sizeof(got), item);
			cfg_err(ctx, ip, "expected a string, got %s", got);
			continue;
		}
		s = chk->fn(ctx, ip, json_string_value(item),
		    json_string_length(item), i);
		if (s == NULL)
			continue;
		if (chk->dedup && strlist_has(out, s)) {
			free(s);
			continue;
		}
		if (cfg_strlist_add(out, s) == -1) {
			free(s);
			cfg_nomem(ctx, ip);
		}
	}
	return 1;
}

/* Append s (taken over); the vector stays NULL-terminated for execv. */
int
cfg_strlist_add(struct strlist *l, char *s)
{
	char **v;

	if ((v = reallocarray(l->v, l->n + 2, sizeof(*v))) == NULL)
		return -1;
	l->v = v;
	l->v[l->n++] = s;
	l->v[l->n] = NULL;
	return 0;
}

static int
strlist_has(const struct strlist *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

/*
 * A filesystem path: non-empty, no NUL, at most PATH_MAX - 1 bytes.
 * Relative paths and "~" are the launcher's to resolve.  A pattern
 * ("**" + "/.env", "*.pem") must be well formed: pisbx-run matches it
 * against the files there at start and the names created during the run.
 */
char *
cfg_item_path(struct cfgctx *ctx, const char *jpath, const char *s, size_t len,
    size_t idx)
{
	char q[CONFIG_QUOTE_MAX], *d;
	const char *why;

	(void)idx;
	if (len == 0) {
		cfg_err(ctx, jpath, "expected a non-empty path, got \"\"");
		return NULL;
	}
	cfg_quote(q, sizeof(q), s, len);
	if (strlen(s) != len || len >= PATH_MAX) {
		cfg_err(ctx, jpath, "%s: %s", strlen(s) != len ?
		    "path contains a NUL byte" : "path too long", q);
		return NULL;
	}
	if (glob_is_pattern(s) && glob_check(s, &why) == -1) {
		cfg_err(ctx, jpath, "invalid pattern %s: %s", q, why);
		return NULL;
	}
	if ((d = strdup(s)) == NULL)
		cfg_nomem(ctx, jpath);
	return d;
}

/*
 * An allowWrite entry: a path, or a directory's contents ("dir/" + "**",
 * stored as "dir": the same writable root).  Any other pattern is an
 * error: a file created later under a matching name needs its directory
 * writable, and Landlock and the read-only mounts can only make the whole
 * directory writable, every other name in it too.
 */
static char *
item_write_path(struct cfgctx *ctx, const char *jpath, const char *s,
    size_t len, size_t idx)
{
	char q[CONFIG_QUOTE_MAX], *d;
	size_t n;

	if ((d = cfg_item_path(ctx, jpath, s, len, idx)) == NULL ||
	    !glob_is_pattern(d))
		return d;
	n = strlen(d);
	if (strcmp(d, "**") == 0) {
		free(d);
		if ((d = strdup(".")) == NULL)
			cfg_nomem(ctx, jpath);
		return d;
	}
	if (n > 3 && strcmp(d + n - 3, "/**") == 0) {
		d[n - 3] = '\0';
		if (!glob_is_pattern(d))
			return d;
	}
	cfg_quote(q, sizeof(q), s, len);
	cfg_err(ctx, jpath, "%s: allowWrite takes directories, not patterns: "
	    "a file created under a matching name would need its directory "
	    "writable, with every other name in it; name the directories "
	    "(\"logs\", or \"logs/**\" for everything in logs)", q);
	free(d);
	return NULL;
}

/* A listen address: "IPv4:PORT", "[IPv6]:PORT" (port 0 = any) or a path. */
static char *
item_listen(struct cfgctx *ctx, const char *jpath, const char *s, size_t len,
    size_t idx)
{
	char q[CONFIG_QUOTE_MAX], buf[INET6_ADDRSTRLEN + 16], *d;
	const char *why;

	(void)idx;
	if (len > 0 && s[0] == '/') {
		if (cfg_abs_path(ctx, jpath, s, len,
		    sizeof(((struct sockaddr_un *)NULL)->sun_path)) == -1)
			return NULL;
		d = strdup(s);
	} else {
		if (addr_port_parse(s, len, 1, 0, buf, sizeof(buf), &why)
		    == -1) {
			cfg_quote(q, sizeof(q), s, len);
			cfg_err(ctx, jpath, "invalid listen address %s: %s "
			    "(expected IPv4:PORT, [IPv6]:PORT or an absolute "
			    "socket path)", q, why);
			return NULL;
		}
		d = strdup(buf);
	}
	if (d == NULL)
		cfg_nomem(ctx, jpath);
	return d;
}

/* A resolver: an IP literal with an optional port, stored as "ip:port". */
static char *
item_server(struct cfgctx *ctx, const char *jpath, const char *s, size_t len,
    size_t idx)
{
	char q[CONFIG_QUOTE_MAX], buf[INET6_ADDRSTRLEN + 16], *d;
	const char *why;

	(void)idx;
	if (addr_port_parse(s, len, 0, RESOLVER_PORT_DEFAULT, buf,
	    sizeof(buf), &why) == -1) {
		cfg_quote(q, sizeof(q), s, len);
		cfg_err(ctx, jpath, "invalid resolver address %s: %s "
		    "(expected IPv4[:PORT], IPv6 or [IPv6]:PORT)", q, why);
		return NULL;
	}
	if ((d = strdup(buf)) == NULL)
		cfg_nomem(ctx, jpath);
	return d;
}

/* One review command word: the first must be an absolute path. */
static char *
item_argv(struct cfgctx *ctx, const char *jpath, const char *s, size_t len,
    size_t idx)
{
	char *d;

	if (idx == 0 && cfg_abs_path(ctx, jpath, s, len, PATH_MAX) == -1)
		return NULL;
	if ((d = strdup(s)) == NULL)
		cfg_nomem(ctx, jpath);
	return d;
}

/* A host-IPC command prefix: trimmed, and not empty after trimming. */
static char *
item_prefix(struct cfgctx *ctx, const char *jpath, const char *s, size_t len,
    size_t idx)
{
	static const char ws[] = " \t\n\r\f\v";
	size_t b = 0, e = len;
	char *d;

	(void)idx;
	while (b < e && strchr(ws, s[b]) != NULL)
		b++;
	while (e > b && strchr(ws, s[e - 1]) != NULL)
		e--;
	if (b == e) {
		char q[CONFIG_QUOTE_MAX];

		cfg_quote(q, sizeof(q), s, len);
		cfg_err(ctx, jpath, "empty command prefix %s", q);
		return NULL;
	}
	if ((d = strndup(s + b, e - b)) == NULL)
		cfg_nomem(ctx, jpath);
	return d;
}

/*
 * A decimal port without sign or leading zero; 0 only when allow_zero.
 * Returns 0 or -1.
 */
static int
port_text(const char *s, size_t len, int allow_zero, uint16_t *out)
{
	unsigned long n = 0;
	size_t i;

	if (len == 0 || len > 5 || (s[0] == '0' && len > 1))
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		n = n * 10 + (unsigned long)(s[i] - '0');
	}
	if (n > 65535 || (n == 0 && !allow_zero))
		return -1;
	*out = (uint16_t)n;
	return 0;
}

/*
 * Parse an IP literal with a port into canonical "a.b.c.d:port" or
 * "[v6]:port".  listen: the port is required and may be 0, a bare IPv6
 * address is not accepted; otherwise the port is optional (default_port)
 * and 1..65535.  Literals go through inet_pton only: no names, no zone ids,
 * no shorthand IPv4 spellings.
 */
static int
addr_port_parse(const char *s, size_t len, int listen, uint16_t default_port,
    char *out, size_t outlen, const char **why)
{
	char host[INET6_ADDRSTRLEN], text[INET6_ADDRSTRLEN];
	unsigned char bin[sizeof(struct in6_addr)];
	const char *h = s, *close, *colon, *port = NULL;
	size_t hostlen = len, portlen = 0;
	uint16_t pn = default_port;
	int af = AF_INET;

	*why = "not an IP address";
	if (len == 0 || strlen(s) != len) {
		*why = len == 0 ? "empty" : "contains a NUL byte";
		return -1;
	}
	colon = strchr(s, ':');
	if (s[0] == '[') {
		if ((close = strchr(s, ']')) == NULL) {
			*why = "missing ']'";
			return -1;
		}
		af = AF_INET6;
		h = s + 1;
		hostlen = (size_t)(close - h);
		if (close[1] == ':')
			port = close + 2;
		else if (close[1] != '\0') {
			*why = "unexpected text after ']'";
			return -1;
		}
	} else if (colon != NULL && strchr(colon + 1, ':') != NULL) {
		/* Two colons or more: a bare IPv6 address, which has no port. */
		if (listen) {
			*why = "an IPv6 address needs brackets: [IPv6]:PORT";
			return -1;
		}
		af = AF_INET6;
	} else if (colon != NULL) {
		hostlen = (size_t)(colon - s);
		port = colon + 1;
	}
	if (hostlen == 0 || hostlen >= sizeof(host))
		return -1;
	memcpy(host, h, hostlen);
	host[hostlen] = '\0';
	if (inet_pton(af, host, bin) != 1)
		return -1;
	if (port != NULL) {
		portlen = len - (size_t)(port - s);
		if (port_text(port, portlen, listen, &pn) == -1) {
			*why = listen ? "port must be 0..65535 without leading "
			    "zeros" : "port must be 1..65535 without leading "
			    "zeros";
			return -1;
		}
	} else if (listen) {
		*why = "missing :PORT";
		return -1;
	}
	if (inet_ntop(af, bin, text, sizeof(text)) == NULL)
		return -1;
	snprintf(out, outlen, af == AF_INET6 ? "[%s]:%u" : "%s:%u", text,
	    (unsigned)pn);
	return 0;
}

/* An absolute path shorter than max bytes, or an error. */
int
cfg_abs_path(struct cfgctx *ctx, const char *jpath, const char *s,
    size_t len, size_t max)
{
	char q[CONFIG_QUOTE_MAX];

	cfg_quote(q, sizeof(q), s, len);
	if (len == 0 || s[0] != '/') {
		cfg_err(ctx, jpath, "expected an absolute path, got %s", q);
		return -1;
	}
	if (strlen(s) != len) {
		cfg_err(ctx, jpath, "path contains a NUL byte: %s", q);
		return -1;
	}
	if (len >= max) {
		cfg_err(ctx, jpath, "path longer than %zu bytes: %s", max - 1,
		    q);
		return -1;
	}
	return 0;
}

/* [A-Za-z_][A-Za-z0-9_]*, at most ENV_NAME_MAX bytes. */
int
cfg_env_name_valid(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > ENV_NAME_MAX || strlen(s) != len)
		return 0;
	for (i = 0; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (i > 0 && s[i] >= '0' && s[i] <= '9')))
			return 0;
	return 1;
}

/*
 * allowedDomains / deniedDomains: each entry parsed by pattern_parse and
 * added to the policy; entries equal after canonicalisation collapse.
 */
/*
 * An allow entry for the loopback can only ever be used by clients that
 * ignore NO_PROXY: every other client goes to its own loopback directly
 * (in pisbx-run, the sandbox's).  Say so, and what reaches the host.
 */
static void
pattern_warn(struct cfgctx *ctx, const char *jpath, const char *got,
    const struct pattern *pat, struct strlist *warn)
{
	char *msg, port[8] = "PORT";

	if (warn == NULL || pat->kind == PATTERN_ANY ||
	    !host_is_loopback(&pat->host))
		return;
	if (pat->port != 0)
		snprintf(port, sizeof(port), "%u", pat->port);
	if (asprintf(&msg, "%s: %s: %s names the loopback, which clients "
	    "that honour NO_PROXY (pisbx-run sets localhost,127.0.0.1,::1) "
	    "reach directly, never through the proxy; inside pisbx-run that "
	    "is the sandbox's own loopback.  To reach a service on this "
	    "machine from a sandbox, allow \"%s:%s\" and use that name",
	    ctx->name, jpath, got, HOST_LOOPBACK_NAME, port) == -1) {
		cfg_nomem(ctx, jpath);
		return;
	}
	if (cfg_strlist_add(warn, msg) == -1) {
		free(msg);
		cfg_nomem(ctx, jpath);
	}
}

void
cfg_patterns(struct cfgctx *ctx, const char *base, const json_t *obj,
    const char *key, int deny, struct policy *pol, struct strlist *warn)
{
	char p[CONFIG_JPATH_MAX], ip[CONFIG_JPATH_MAX], got[CONFIG_QUOTE_MAX];
	const json_t *v, *item;
	struct pattern pat;
	const char *why;
	size_t i;

	if ((v = json_object_get(obj, key)) == NULL)
		return;
	cfg_jpath_key(p, sizeof(p), base, key);
	if (!json_is_array(v)) {
		cfg_describe(got, sizeof(got), v);
		cfg_err(ctx, p, "expected an array of patterns, got %s", got);
		return;
	}
	json_array_foreach(v, i, item) {
		cfg_jpath_index(ip, sizeof(ip), p, i);
		cfg_describe(got, sizeof(got), item);
		if (!json_is_string(item)) {
			cfg_err(ctx, ip, "expected a pattern string, got %s",
			    got);
			continue;
		}
		why = "invalid pattern";
		if (strlen(json_string_value(item)) !=
		    json_string_length(item) ||
		    pattern_parse(json_string_value(item),
		    json_string_length(item), deny, &pat, &why) == -1) {
			cfg_err(ctx, ip, "invalid pattern %s: %s", got, why);
			continue;
		}
		if (!deny && pat.kind == PATTERN_EXACT && pat.port == 0 &&
		    host_is_loopback_name(&pat.host)) {
			cfg_err(ctx, ip, "%s reaches this machine's own "
			    "services: name the one port to open (\"%s:PORT\")",
			    got, HOST_LOOPBACK_NAME);
			continue;
		}
		if (!deny)
			pattern_warn(ctx, ip, got, &pat, warn);
		/* Where it was written: --check -v and --explain say it. */
		pat.layer = ctx->layer;
		if (asprintf(&pat.source, "%s: %s", ctx->source != NULL ?
		    ctx->source : ctx->name, ip) == -1) {
			pat.source = NULL;
			cfg_nomem(ctx, ip);
			continue;
		}
		if (pol != NULL && policy_add(pol, deny ? POLICY_DENY :
		    POLICY_ALLOW, &pat) == -1)
			cfg_nomem(ctx, ip);
		free(pat.source);
	}
}

/*
 * The "network" object at jpath.  conf is NULL for a supervisor's policy,
 * which may carry only the two lists.
 */
static void
parse_network(struct cfgctx *ctx, const char *jpath, const json_t *v,
    struct config *conf, struct policy *pol)
{
	if (cfg_obj_check(ctx, jpath, v, conf != NULL ? keys_network :
	    keys_network_policy) == -1)
		return;
	cfg_patterns(ctx, jpath, v, "allowedDomains", 0, pol,
	    conf != NULL ? &conf->warnings : NULL);
	cfg_patterns(ctx, jpath, v, "deniedDomains", 1, pol, NULL);
	if (conf == NULL)
		return;
	cfg_bool(ctx, jpath, v, "allowAllUnixSockets",
	    &conf->allow_all_unix_sockets);
	cfg_bool(ctx, jpath, v, "allowUnixDatagramSockets",
	    &conf->allow_unix_datagram_sockets);
	if (json_object_get(v, "parentProxy") != NULL)
		parse_parent(ctx, jpath, v, conf);
	if (json_object_get(v, "budget") != NULL)
		parse_budget(ctx, jpath, v, conf);
	secrets_tls(ctx, jpath, v, conf);
	reqrule_parse(ctx, jpath, v, conf);
	compat_network(ctx, jpath, v, conf);
}

/*
 * "network.budget": what one client may send to one host, and how many
 * connections to it are allowed, before the next one goes to review.
 */
static void
parse_budget(struct cfgctx *ctx, const char *base, const json_t *obj,
    struct config *conf)
{
	char p[CONFIG_JPATH_MAX];
	const json_t *v = json_object_get(obj, "budget");
	long long n = 0;

	cfg_jpath_key(p, sizeof(p), base, "budget");
	if (cfg_obj_check(ctx, p, v, keys_budget) == -1)
		return;
	if (cfg_int64(ctx, p, v, "bytesUpPerHost", 1, BUDGET_BYTES_MAX,
	    &n) == 0)
		conf->budget_bytes_up = (uint64_t)n;
	cfg_int(ctx, p, v, "connectionsPerHost", 1, 1000000,
	    &conf->budget_connections);
	if (json_object_get(v, "hosts") != NULL)
		parse_budget_hosts(ctx, p, v, conf);
}

/*
 * "network.budget.hosts": hosts with a budget of their own, each an
 * exact host (no wildcard, no port) once; a key left out is the
 * default's.
 */
static void
parse_budget_hosts(struct cfgctx *ctx, const char *base, const json_t *obj,
    struct config *conf)
{
	char p[CONFIG_JPATH_MAX], ip[CONFIG_JPATH_MAX], hp[CONFIG_JPATH_MAX];
	char got[CONFIG_QUOTE_MAX];
	const json_t *v = json_object_get(obj, "hosts"), *item;
	struct budget_host *bh;
	struct host h;
	const char *s, *errstr = NULL;
	long long n;
	size_t i, j, len;

	cfg_jpath_key(p, sizeof(p), base, "hosts");
	if (!json_is_array(v) || json_array_size(v) > BUDGET_HOSTS_LISTED) {
		cfg_describe(got, sizeof(got), v);
		cfg_err(ctx, p, "expected an array of at most %d objects, got "
		    "%s", BUDGET_HOSTS_LISTED, got);
		return;
	}
	if ((conf->budget_hosts = calloc(json_array_size(v) + 1,
	    sizeof(*conf->budget_hosts))) == NULL) {
		cfg_nomem(ctx, p);
		return;
	}
	json_array_foreach(v, i, item) {
		cfg_jpath_index(ip, sizeof(ip), p, i);
		if (cfg_obj_check(ctx, ip, item, keys_budget_host) == -1)
			continue;
		bh = &conf->budget_hosts[conf->nbudget_hosts];
		cfg_jpath_key(hp, sizeof(hp), ip, "host");
		if ((s = cfg_string(ctx, ip, item, "host", &len)) == NULL) {
			if (len != (size_t)-1)
				cfg_err(ctx, hp, "missing: the host this "
				    "budget is for (\"api.example.com\")");
			continue;
		}
		if (host_canon(s, len, &h, &errstr) == -1) {
			cfg_quote(got, sizeof(got), s, len);
			cfg_err(ctx, hp, "invalid host %s: %s (one exact host, "
			    "no wildcard, no port)", got, errstr);
			continue;
		}
		snprintf(bh->host, sizeof(bh->host), "%s", h.text);
		for (j = 0; j < conf->nbudget_hosts; j++)
			if (strcmp(conf->budget_hosts[j].host, bh->host) == 0)
				break;
		if (j < conf->nbudget_hosts) {
			cfg_err(ctx, hp, "\"%s\" has a budget already (entry "
			    "%zu)", bh->host, j);
			continue;
		}
		n = 0;
		if (cfg_int64(ctx, ip, item, "bytesUp", 1, BUDGET_BYTES_MAX,
		    &n) == 0)
			bh->bytes_up = (uint64_t)n;
		cfg_int(ctx, ip, item, "connections", 1, 1000000,
		    &bh->connections);
		conf->nbudget_hosts++;
	}
}

void
config_budget_key(const struct config *conf, const char *host, int bytes,
    char *buf, size_t len)
{
	size_t i;

	for (i = 0; host != NULL && i < conf->nbudget_hosts; i++)
		if (strcmp(conf->budget_hosts[i].host, host) == 0 &&
		    (bytes ? conf->budget_hosts[i].bytes_up > 0 :
		    conf->budget_hosts[i].connections > 0)) {
			snprintf(buf, len, "network.budget.hosts[%zu].%s", i,
			    bytes ? "bytesUp" : "connections");
			return;
		}
	snprintf(buf, len, "network.budget.%s", bytes ? "bytesUpPerHost" :
	    "connectionsPerHost");
}

void
config_budget(const struct config *conf, const char *host,
    uint64_t *bytes_up, int *connections)
{
	size_t i;

	*bytes_up = conf->budget_bytes_up;
	*connections = conf->budget_connections;
	if (host == NULL)
		return;
	for (i = 0; i < conf->nbudget_hosts; i++)
		if (strcmp(conf->budget_hosts[i].host, host) == 0) {
			if (conf->budget_hosts[i].bytes_up > 0)
				*bytes_up = conf->budget_hosts[i].bytes_up;
			if (conf->budget_hosts[i].connections > 0)
				*connections = conf->budget_hosts[i].connections;
			return;
		}
}

/*
 * "network.parentProxy": srt's object (http, https, noProxy) plus where
 * the Basic credentials come from.  The credentials are read here, with
 * the config (at start and on every reload), so a missing or unsafe
 * file fails --check and never a connection.
 */
static void
parse_parent(struct cfgctx *ctx, const char *base, const json_t *obj,
    struct config *conf)
{
	char p[CONFIG_JPATH_MAX];
	const json_t *v = json_object_get(obj, "parentProxy");

	cfg_jpath_key(p, sizeof(p), base, "parentProxy");
	if (cfg_obj_check(ctx, p, v, keys_parent) == -1)
		return;
	if ((conf->parent = parent_new()) == NULL) {
		cfg_nomem(ctx, p);
		return;
	}
	parent_url(ctx, p, v, "http", &conf->parent->http);
	parent_url(ctx, p, v, "https", &conf->parent->https);
	if (json_object_get(v, "http") == NULL &&
	    json_object_get(v, "https") == NULL)
		cfg_err(ctx, p, "names no upstream: give \"http\" and/or "
		    "\"https\" (\"http://HOST:PORT\"); pisbx does not take "
		    "one from HTTP_PROXY in its own environment");
	parent_noproxy(ctx, p, v, conf->parent);
	parent_cred(ctx, p, v, conf->parent);
	parent_forwarding(ctx, p, v, conf->parent);
}

/*
 * "httpForwarding": how a forwarded plain-HTTP request reaches the
 * upstream.  "tunnel" (the default) sends it inside a CONNECT, so the
 * credentials ride on the CONNECT alone, whose answer pisbx reads and
 * never passes on; "absolute-form" sends it as a proxy request, with the
 * credentials on it, for gateways that allow CONNECT to port 443 only.
 */
static void
parent_forwarding(struct cfgctx *ctx, const char *base, const json_t *obj,
    struct parent_proxy *pp)
{
	char p[CONFIG_JPATH_MAX], q[CONFIG_QUOTE_MAX];
	const char *s;
	size_t len;

	if ((s = cfg_string(ctx, base, obj, "httpForwarding", &len)) == NULL)
		return;
	if (strlen(s) == len && strcmp(s, "tunnel") == 0)
		pp->http_absolute = 0;
	else if (strlen(s) == len && strcmp(s, "absolute-form") == 0)
		pp->http_absolute = 1;
	else {
		cfg_jpath_key(p, sizeof(p), base, "httpForwarding");
		cfg_quote(q, sizeof(q), s, len);
		cfg_err(ctx, p, "expected \"tunnel\" or \"absolute-form\", "
		    "got %s", q);
	}
}

/* One upstream URL (key "http" or "https"). */
static void
parent_url(struct cfgctx *ctx, const char *base, const json_t *obj,
    const char *key, struct parent_url *out)
{
	char p[CONFIG_JPATH_MAX], q[CONFIG_QUOTE_MAX];
	const char *s, *why = NULL;
	size_t len;

	if ((s = cfg_string(ctx, base, obj, key, &len)) == NULL)
		return;
	if (parent_url_parse(s, len, out, &why) == 0)
		return;
	cfg_jpath_key(p, sizeof(p), base, key);
	/* Quoted only when it holds no credentials. */
	if (memchr(s, '@', len) != NULL)
		cfg_err(ctx, p, "%s", why);
	else {
		cfg_quote(q, sizeof(q), s, len);
		cfg_err(ctx, p, "invalid upstream proxy %s: %s", q, why);
	}
}

/*
 * "noProxy": an array of pisbx patterns, or srt's comma-separated
 * NO_PROXY string.
 */
static void
parent_noproxy(struct cfgctx *ctx, const char *base, const json_t *obj,
    struct parent_proxy *pp)
{
	char p[CONFIG_JPATH_MAX], ip[CONFIG_JPATH_MAX], got[CONFIG_QUOTE_MAX];
	const json_t *v, *item;
	const char *s, *e, *why;
	size_t i, len;

	if ((v = json_object_get(obj, "noProxy")) == NULL)
		return;
	cfg_jpath_key(p, sizeof(p), base, "noProxy");
	if (json_is_string(v)) {
		s = json_string_value(v);
		len = json_string_length(v);
		for (i = 0; s < json_string_value(v) + len; i++, s = e + 1) {
			if ((e = memchr(s, ',', (size_t)(json_string_value(v) +
			    len - s))) == NULL)
				e = json_string_value(v) + len;
			/* "a,,b" and a trailing comma: NO_PROXY skips them. */
			if (strspn(s, " \t") >= (size_t)(e - s))
				continue;
			if (parent_noproxy_add(pp, s, (size_t)(e - s), 1,
			    &why) == 0)
				continue;
			cfg_quote(got, sizeof(got), s, (size_t)(e - s));
			cfg_err(ctx, p, "entry %zu %s: %s", i, got, why);
		}
		return;
	}
	if (!json_is_array(v)) {
		cfg_describe(got, sizeof(got), v);
		cfg_err(ctx, p, "expected an array of patterns (or srt's "
		    "comma-separated string), got %s", got);
		return;
	}
	json_array_foreach(v, i, item) {
		cfg_jpath_index(ip, sizeof(ip), p, i);
		cfg_describe(got, sizeof(got), item);
		if (!json_is_string(item)) {
			cfg_err(ctx, ip, "expected a pattern string, got %s",
			    got);
			continue;
		}
		if (parent_noproxy_add(pp, json_string_value(item),
		    json_string_length(item), 0, &why) == -1)
			cfg_err(ctx, ip, "invalid pattern %s: %s", got, why);
	}
}

/* "credentialsFile" or "credentialsEnv": at most one; read now. */
static void
parent_cred(struct cfgctx *ctx, const char *base, const json_t *obj,
    struct parent_proxy *pp)
{
	char p[CONFIG_JPATH_MAX], q[CONFIG_QUOTE_MAX], *cred = NULL;
	const char *file, *env, *val, *why;
	size_t flen, elen, len = 0;

	file = cfg_string(ctx, base, obj, "credentialsFile", &flen);
	env = cfg_string(ctx, base, obj, "credentialsEnv", &elen);
	if (file != NULL && env != NULL) {
		cfg_err(ctx, base, "give \"credentialsFile\" or "
		    "\"credentialsEnv\", not both");
		return;
	}
	if (file != NULL) {
		cfg_jpath_key(p, sizeof(p), base, "credentialsFile");
		if (cfg_abs_path(ctx, p, file, flen, PATH_MAX) == -1)
			return;
		if ((pp->cred_file = strdup(file)) == NULL) {
			cfg_nomem(ctx, p);
			return;
		}
		if ((cred = parent_cred_read(ctx, p, file, &len)) == NULL)
			return;
		val = cred;
	} else if (env != NULL) {
		cfg_jpath_key(p, sizeof(p), base, "credentialsEnv");
		if (!cfg_env_name_valid(env, elen)) {
			cfg_quote(q, sizeof(q), env, elen);
			cfg_err(ctx, p, "expected an environment variable "
			    "name ([A-Za-z_][A-Za-z0-9_]*), got %s", q);
			return;
		}
		if ((pp->cred_env = strdup(env)) == NULL) {
			cfg_nomem(ctx, p);
			return;
		}
		/*
		 * Taken out of the environment: nothing this process starts,
		 * nor /proc/PID/environ, shows the password (a reload finds
		 * it again: policy_env_take).
		 */
		if ((val = policy_env_take(pp->cred_env)) == NULL ||
		    val[0] == '\0') {
			cfg_err(ctx, p, "the environment variable %s is %s: "
			    "set it to USER:PASSWORD", env, val == NULL ?
			    "not set" : "empty");
			return;
		}
		len = strlen(val);
	} else
		return;
	if (parent_auth_set(pp, val, len, &why) == -1) {
		cfg_quote(q, sizeof(q), file != NULL ? file : env,
		    file != NULL ? flen : elen);
		cfg_err(ctx, p, "%s%s: %s", file != NULL ? "the file " :
		    "the variable ", q, why);
	}
	if (cred != NULL) {
		explicit_bzero(cred, len);
		free(cred);
	}
}

/*
 * Read a credentials file: a regular file of one line, which others may
 * not read and only its owner (the user or root) may write.  The line
 * without its end (malloc'ed, *len bytes), or NULL after an error.
 */
static char *
parent_cred_read(struct cfgctx *ctx, const char *jpath, const char *path,
    size_t *lenp)
{
	struct stat st;
	char buf[PARENT_CRED_MAX + 3], q[CONFIG_QUOTE_MAX], *d = NULL;
	size_t len = 0;
	ssize_t r;
	int fd;

	cfg_quote(q, sizeof(q), path, strlen(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1) {
		cfg_err(ctx, jpath, "cannot open %s: %s", q,
		    strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1) {
		cfg_err(ctx, jpath, "cannot stat %s: %s", q,
		    strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		cfg_err(ctx, jpath, "%s is not a regular file", q);
		goto out;
	}
	if ((st.st_mode & (S_IRWXO | S_IWGRP)) != 0) {
		cfg_err(ctx, jpath, "%s is open to others (mode %04o): it "
		    "holds a password (chmod 600 the file)", q,
		    (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		cfg_err(ctx, jpath, "%s belongs to uid %u: only a file of "
		    "this user (uid %u) or of root is trusted", q,
		    (unsigned)st.st_uid, (unsigned)geteuid());
		goto out;
	}
	for (;;) {
		r = read(fd, buf + len, sizeof(buf) - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			cfg_err(ctx, jpath, "cannot read %s: %s", q,
			    strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len == sizeof(buf)) {
			cfg_err(ctx, jpath, "%s is longer than %d bytes: it "
			    "should hold one line USER:PASSWORD", q,
			    PARENT_CRED_MAX);
			goto out;
		}
	}
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	if (len == 0) {
		cfg_err(ctx, jpath, "%s is empty: it should hold one line "
		    "USER:PASSWORD", q);
		goto out;
	}
	if ((d = malloc(len + 1)) == NULL) {
		cfg_nomem(ctx, jpath);
		goto out;
	}
	memcpy(d, buf, len);
	d[len] = '\0';
	*lenp = len;
out:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return d;
}

static void
parse_filesystem(struct cfgctx *ctx, const json_t *v, struct config *conf)
{
	static const char jp[] = "$.filesystem";

	if (cfg_obj_check(ctx, jp, v, keys_filesystem) == -1)
		return;
	conf->fs_deny_read_set = cfg_strlist(ctx, jp, v, "denyRead",
	    &cfg_check_path, &conf->deny_read);
	cfg_strlist(ctx, jp, v, "allowRead", &cfg_check_path,
	    &conf->allow_read);
	conf->fs_allow_write_set = cfg_strlist(ctx, jp, v, "allowWrite",
	    &check_write_path, &conf->allow_write);
	cfg_strlist(ctx, jp, v, "denyWrite", &cfg_check_path,
	    &conf->deny_write);
	cfg_bool(ctx, jp, v, "allowGitConfig", &conf->allow_git_config);
	cfg_flags(ctx, jp, v, "toolchains", config_toolchain_names,
	    &conf->fs_toolchains);
	cfg_flags(ctx, jp, v, "caches", config_cache_names, &conf->fs_caches);
	compat_filesystem(ctx, jp, v, conf);
	if (ctx->paths) {
		fs_missing_note(ctx, jp, v, "allowRead");
		fs_missing_note(ctx, jp, v, "allowWrite");
		fs_missing_note(ctx, jp, v, "additionalAllowRead");
	}
}

/*
 * A note (--check -v, pisbx-run -v) for each absolute or "~" entry of an
 * allow list that names nothing: it allows nothing until it exists
 * (allowWrite ["~/.npm"] on a fresh machine).  Patterns and relative
 * entries depend on the run (what matches, the project directory).
 */
static void
fs_missing_note(struct cfgctx *ctx, const char *base, const json_t *obj,
    const char *key)
{
	char		 p[CONFIG_JPATH_MAX], q[CONFIG_QUOTE_MAX], path[PATH_MAX];
	const json_t	*v, *e;
	const char	*s, *home;
	struct stat	 st;
	size_t		 i;

	if ((v = json_object_get(obj, key)) == NULL || !json_is_array(v))
		return;
	cfg_jpath_key(p, sizeof(p), base, key);
	for (i = 0; i < json_array_size(v); i++) {
		e = json_array_get(v, i);
		if (!json_is_string(e) || strlen(s = json_string_value(e)) !=
		    json_string_length(e) || glob_is_pattern(s))
			continue;
		if (s[0] == '~' && (s[1] == '\0' || s[1] == '/')) {
			if ((home = cfg_home()) == NULL ||
			    (size_t)snprintf(path, sizeof(path), "%s%s", home,
			    s + 1) >= sizeof(path))
				continue;
		} else if (s[0] != '/' ||
		    (size_t)snprintf(path, sizeof(path), "%s", s) >=
		    sizeof(path))
			continue;
		if (lstat(path, &st) == 0 || errno != ENOENT)
			continue;
		cfg_jpath_index(q, sizeof(q), p, i);
		cfg_note(ctx, q, "warning: %s does not exist: the entry allows "
		    "nothing until it does", path);
	}
}

static void
parse_proxy(struct cfgctx *ctx, const json_t *v, struct config *conf)
{
	static const char jp[] = "$.proxy";
	char p[CONFIG_JPATH_MAX], q[CONFIG_QUOTE_MAX];
	const json_t *m;
	const char *s;
	size_t len;

	if (cfg_obj_check(ctx, jp, v, keys_proxy) == -1)
		return;
	cfg_strlist(ctx, jp, v, "listen", &check_listen, &conf->listen);
	cfg_int(ctx, jp, v, "maxConnections", 1, 1000000,
	    &conf->max_connections);
	cfg_int(ctx, jp, v, "maxClientConnections", 1, 1000000,
	    &conf->max_client_connections);
	cfg_int(ctx, jp, v, "connectTimeoutMs", 1, 600000,
	    &conf->connect_timeout_ms);
	cfg_int(ctx, jp, v, "idleTimeoutMs", 1, 86400000,
	    &conf->idle_timeout_ms);
	cfg_int(ctx, jp, v, "headerTimeoutMs", 1, 600000,
	    &conf->header_timeout_ms);
	/* For programs started without options (pisbx-sh). */
	if ((s = cfg_string(ctx, jp, v, "accessLog", &len)) != NULL) {
		cfg_jpath_key(p, sizeof(p), jp, "accessLog");
		if (cfg_abs_path(ctx, p, s, len, PATH_MAX) == 0 &&
		    (conf->access_log = strdup(s)) == NULL)
			cfg_nomem(ctx, p);
	}
	if ((s = cfg_string(ctx, jp, v, "accessLogFormat", &len)) != NULL) {
		cfg_jpath_key(p, sizeof(p), jp, "accessLogFormat");
		if (strcmp(s, "text") == 0)
			conf->access_log_text = 1;
		else if (strcmp(s, "json") != 0) {
			cfg_quote(q, sizeof(q), s, len);
			cfg_err(ctx, p, "must be \"json\" or \"text\" (%s)", q);
		}
	}
	if ((m = json_object_get(v, "metrics")) != NULL)
		parse_metrics(ctx, m, conf);
	if ((m = json_object_get(v, "accessLogSyslog")) != NULL)
		parse_syslog(ctx, m, conf);
}

/*
 * The syslog facilities by name (RFC 5424, 6.2.1), numbered from 0: a
 * value, not a key table (tests/integration/docs-consistency.sh).
 */
static const char syslog_facilities[][9] = {
	"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
	"uucp", "cron", "authpriv", "ftp", "ntp", "audit", "alert", "clock",
	"local0", "local1", "local2", "local3", "local4", "local5", "local6",
	"local7", ""
};

/*
 * proxy.accessLogSyslog: the access log's records also go to a syslog
 * collector, "tcp:IP:PORT" (RFC 6587 octet counting) or "unix:/PATH".
 */
static void
parse_syslog(struct cfgctx *ctx, const json_t *v, struct config *conf)
{
	static const char jp[] = "$.proxy.accessLogSyslog";
	char p[CONFIG_JPATH_MAX], q[CONFIG_QUOTE_MAX];
	char buf[INET6_ADDRSTRLEN + 16];
	const char *s, *why;
	size_t len, i;

	if (cfg_obj_check(ctx, jp, v, keys_syslog) == -1)
		return;
	conf->syslog_facility = 16;		/* local0 */
	conf->syslog_queue_max = 10000;
	cfg_int(ctx, jp, v, "queueMax", 1, 1000000, &conf->syslog_queue_max);
	cfg_jpath_key(p, sizeof(p), jp, "facility");
	if ((s = cfg_string(ctx, jp, v, "facility", &len)) != NULL) {
		for (i = 0; syslog_facilities[i][0] != '\0'; i++)
			if (strcmp(s, syslog_facilities[i]) == 0)
				break;
		if (syslog_facilities[i][0] == '\0') {
			cfg_quote(q, sizeof(q), s, len);
			cfg_err(ctx, p, "unknown facility %s (kern, user, "
			    "daemon, local0 ... local7, ...)", q);
		} else
			conf->syslog_facility = (int)i;
	}
	cfg_jpath_key(p, sizeof(p), jp, "appName");
	if ((s = cfg_string(ctx, jp, v, "appName", &len)) != NULL) {
		/* RFC 5424 APP-NAME: 1*48PRINTUSASCII (33..126). */
		for (i = 0; i < len; i++)
			if (s[i] < 33 || s[i] > 126)
				break;
		if (len == 0 || len > 48 || i < len) {
			cfg_quote(q, sizeof(q), s, len);
			cfg_err(ctx, p, "must be 1 to 48 printable ASCII "
			    "characters without spaces (%s)", q);
		} else if ((conf->syslog_app = strdup(s)) == NULL)
			cfg_nomem(ctx, p);
	}
	cfg_jpath_key(p, sizeof(p), jp, "address");
	if ((s = cfg_string(ctx, jp, v, "address", &len)) == NULL) {
		if (len == 0)
			cfg_err(ctx, p, "missing: \"tcp:127.0.0.1:514\" or "
			    "\"unix:/dev/log\"");
		return;
	}
	cfg_quote(q, sizeof(q), s, len);
	if (len > 4 && strncmp(s, "tcp:", 4) == 0) {
		if (addr_port_parse(s + 4, len - 4, 0, 514, buf, sizeof(buf),
		    &why) == -1) {
			cfg_err(ctx, p, "invalid address %s: %s", q, why);
			return;
		}
		conf->syslog_tcp = 1;
		s = buf;
	} else if (len > 5 && strncmp(s, "unix:", 5) == 0) {
		if (cfg_abs_path(ctx, p, s + 5, len - 5,
		    sizeof(((struct sockaddr_un *)NULL)->sun_path)) == -1)
			return;
		s += 5;
	} else {
		cfg_err(ctx, p, "invalid address %s: expected "
		    "\"tcp:IP:PORT\" or \"unix:/PATH\"", q);
		return;
	}
	if ((conf->syslog_address = strdup(s)) == NULL)
		cfg_nomem(ctx, p);
}

/* Whether "ip:port" or "[v6]:port" (as addr_port_parse writes) is loopback. */
static int
metrics_loopback(const char *addr)
{
	char ip[INET6_ADDRSTRLEN + 2];
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
	const char *end, *cls = NULL;

	memset(&sin, 0, sizeof(sin));
	memset(&sin6, 0, sizeof(sin6));
	if ((end = strrchr(addr, ':')) == NULL ||
	    (size_t)(end - addr) >= sizeof(ip))
		return 0;
	memcpy(ip, addr, (size_t)(end - addr));
	ip[end - addr] = '\0';
	if (ip[0] == '[' && end > addr + 1 && end[-1] == ']') {
		ip[end - addr - 1] = '\0';
		sin6.sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, ip + 1, &sin6.sin6_addr) == 1)
			cls = addr_class((struct sockaddr *)&sin6);
	} else {
		sin.sin_family = AF_INET;
		if (inet_pton(AF_INET, ip, &sin.sin_addr) == 1)
			cls = addr_class((struct sockaddr *)&sin);
	}
	return cls != NULL && strcmp(cls, "loopback") == 0;
}

/*
 * proxy.metrics: where the Prometheus endpoint listens.  The figures say
 * which hosts are refused and how much traffic flows, so only a loopback
 * address is taken unless allowNonLoopback says the exposure is meant.
 */
static void
parse_metrics(struct cfgctx *ctx, const json_t *v, struct config *conf)
{
	static const char jp[] = "$.proxy.metrics";
	char p[CONFIG_JPATH_MAX], q[CONFIG_QUOTE_MAX];
	char buf[INET6_ADDRSTRLEN + 16];
	const char *s, *why;
	size_t len;
	int wide = 0;

	if (cfg_obj_check(ctx, jp, v, keys_metrics) == -1)
		return;
	cfg_bool(ctx, jp, v, "allowNonLoopback", &wide);
	cfg_jpath_key(p, sizeof(p), jp, "listen");
	if ((s = cfg_string(ctx, jp, v, "listen", &len)) == NULL) {
		if (len == 0)
			cfg_err(ctx, p, "missing: the address to serve "
			    "/metrics on, such as \"127.0.0.1:9464\"");
		return;
	}
	cfg_quote(q, sizeof(q), s, len);
	if (addr_port_parse(s, len, 1, 0, buf, sizeof(buf), &why) == -1) {
		cfg_err(ctx, p, "invalid address %s: %s (expected IPv4:PORT "
		    "or [IPv6]:PORT)", q, why);
		return;
	}
	if (!wide && !metrics_loopback(buf)) {
		cfg_err(ctx, p, "%s is not a loopback address: set "
		    "$.proxy.metrics.allowNonLoopback to true to serve the "
		    "metrics beyond this host", q);
		return;
	}
	conf->metrics_non_loopback = wide;
	if ((conf->metrics_listen = strdup(buf)) == NULL)
		cfg_nomem(ctx, p);
}

static void
parse_resolver(struct cfgctx *ctx, const json_t *v, struct config *conf)
{
	static const char jp[] = "$.resolver";
	char p[CONFIG_JPATH_MAX];
	const char *s;
	size_t len;

	if (cfg_obj_check(ctx, jp, v, keys_resolver) == -1)
		return;
	cfg_strlist(ctx, jp, v, "servers", &check_server,
	    &conf->resolver_servers);
	if ((s = cfg_string(ctx, jp, v, "hostsFile", &len)) != NULL) {
		cfg_jpath_key(p, sizeof(p), jp, "hostsFile");
		if (cfg_abs_path(ctx, p, s, len, PATH_MAX) == 0 &&
		    (conf->hosts_file = strdup(s)) == NULL)
			cfg_nomem(ctx, p);
	}
	cfg_int(ctx, jp, v, "timeoutMs", 1, 600000,
	    &conf->resolver_timeout_ms);
}

/*
 * A reviewer that cannot run makes every review a deny (review:error):
 * fail-closed, so a warning, not an error -- a config shared between
 * machines stays usable where the program is missing, its allow list
 * working -- but one --check and pisbx-proxy always show.
 */
static void
review_command_warn(struct cfgctx *ctx, struct config *conf)
{
	const char	*prog = conf->review_command.v[0];
	char		*msg = NULL, why[256];
	struct stat	 st;

	if (stat(prog, &st) == -1)
		snprintf(why, sizeof(why), "cannot be run: %s",
		    strerror(errno));
	else if (!S_ISREG(st.st_mode))
		snprintf(why, sizeof(why), "is not a regular file");
	else if (faccessat(AT_FDCWD, prog, X_OK, AT_EACCESS) == -1)
		snprintf(why, sizeof(why), "is not executable (%s)",
		    strerror(errno));
	else
		return;
	if (asprintf(&msg, "%s: $.review.command[0]: the reviewer \"%s\" %s: "
	    "every destination no list matches will be refused "
	    "(review:error) until it can", ctx->name, prog, why) == -1 ||
	    cfg_strlist_add(&conf->warnings, msg) == -1) {
		free(msg);
		cfg_nomem(ctx, "$.review.command");
	}
}

/*
 * "review": exactly one transport (command, socket or mode "tty"); the
 * capability variable only makes sense for the socket.
 */
static void
parse_review(struct cfgctx *ctx, const json_t *v, struct config *conf)
{
	static const char jp[] = "$.review";
	char p[CONFIG_JPATH_MAX], q[CONFIG_QUOTE_MAX];
	const json_t *cmd, *sock, *mode, *cap;
	const char *s;
	size_t len;
	int n;

	if (cfg_obj_check(ctx, jp, v, keys_review) == -1)
		return;
	cmd = json_object_get(v, "command");
	sock = json_object_get(v, "socket");
	mode = json_object_get(v, "mode");
	cap = json_object_get(v, "capabilityEnv");
	n = (cmd != NULL) + (sock != NULL) + (mode != NULL);
	if (n != 1)
		cfg_err(ctx, jp, "needs exactly one of \"command\", \"socket\" "
		    "or \"mode\", got %s", n == 0 ? "none" : "several");

	if (cmd != NULL) {
		cfg_jpath_key(p, sizeof(p), jp, "command");
		cfg_strlist(ctx, jp, v, "command", &check_argv,
		    &conf->review_command);
		if (json_is_array(cmd) && json_array_size(cmd) == 0)
			cfg_err(ctx, p, "expected [\"/absolute/reviewer\", "
			    "args...], got an empty array");
		if (n == 1)
			conf->review_mode = REVIEW_COMMAND;
		if (conf->review_command.n > 0)
			review_command_warn(ctx, conf);
	}
	if ((s = cfg_string(ctx, jp, v, "socket", &len)) != NULL) {
		cfg_jpath_key(p, sizeof(p), jp, "socket");
		if (cfg_abs_path(ctx, p, s, len,
		    sizeof(((struct sockaddr_un *)NULL)->sun_path)) == 0 &&
		    (conf->review_socket = strdup(s)) == NULL)
			cfg_nomem(ctx, p);
		if (n == 1)
			conf->review_mode = REVIEW_SOCKET;
	}
	if ((s = cfg_string(ctx, jp, v, "mode", &len)) != NULL) {
		cfg_jpath_key(p, sizeof(p), jp, "mode");
		if (strlen(s) != len || strcmp(s, "tty") != 0) {
			cfg_quote(q, sizeof(q), s, len);
			cfg_err(ctx, p, "expected \"tty\", got %s", q);
		} else if (n == 1)
			conf->review_mode = REVIEW_TTY;
	}
	if (cap != NULL) {
		cfg_jpath_key(p, sizeof(p), jp, "capabilityEnv");
		s = cfg_string(ctx, jp, v, "capabilityEnv", &len);
		if (s != NULL && sock == NULL)
			cfg_err(ctx, p, "only applies with \"socket\"");
		else if (s != NULL && !cfg_env_name_valid(s, len)) {
			cfg_quote(q, sizeof(q), s, len);
			cfg_err(ctx, p, "expected an environment variable "
			    "name ([A-Za-z_][A-Za-z0-9_]*), got %s", q);
		} else if (s != NULL) {
			free(conf->review_capability_env);
			if ((conf->review_capability_env = strdup(s)) == NULL)
				cfg_nomem(ctx, p);
		}
	}
	cfg_int(ctx, jp, v, "timeoutMs", 1, 3600000, &conf->review_timeout_ms);
	cfg_int(ctx, jp, v, "maxInFlight", 1, 1024, &conf->review_max_inflight);
}

static void
parse_hostipc(struct cfgctx *ctx, const json_t *v, struct config *conf)
{
	static const char jp[] = "$.hostIPC";
	char p[CONFIG_JPATH_MAX], q[CONFIG_QUOTE_MAX];
	const char *s;
	size_t len;

	if (cfg_obj_check(ctx, jp, v, keys_hostipc) == -1)
		return;
	if ((s = cfg_string(ctx, jp, v, "mode", &len)) != NULL) {
		if (strlen(s) == len && strcmp(s, "off") == 0)
			conf->hostipc_mode = HOSTIPC_OFF;
		else if (strlen(s) == len && strcmp(s, "ask") == 0)
			conf->hostipc_mode = HOSTIPC_ASK;
		else {
			cfg_jpath_key(p, sizeof(p), jp, "mode");
			cfg_quote(q, sizeof(q), s, len);
			cfg_err(ctx, p, "expected \"off\" or \"ask\", got %s",
			    q);
		}
	}
	cfg_strlist(ctx, jp, v, "preflightCommandPrefixes", &check_prefix,
	    &conf->hostipc_prefixes);
	cfg_bool(ctx, jp, v, "retryOnUnixSocketError", &conf->hostipc_retry);
}

/* A config with every default filled in and an empty policy. */
static struct config *
config_new(struct cfgctx *ctx, const char *name)
{
	struct config *conf;

	if ((conf = calloc(1, sizeof(*conf))) == NULL)
		goto fail;
	if ((conf->path = strdup(name)) == NULL)
		goto fail;
	if ((conf->policy = policy_new()) == NULL)
		goto fail;
	if ((conf->review_capability_env = strdup(CAPABILITY_ENV_DEFAULT))
	    == NULL)
		goto fail;
	conf->allow_all_unix_sockets = 0;
	conf->allow_unix_datagram_sockets = 0;
	conf->fs_toolchains = ~0U;
	conf->fs_caches = ~0U;
	conf->max_connections = 1024;
	conf->connect_timeout_ms = 10000;
	conf->idle_timeout_ms = 300000;
	conf->header_timeout_ms = 30000;
	conf->resolver_timeout_ms = 5000;
	conf->review_mode = REVIEW_NONE;
	conf->review_timeout_ms = 30000;
	conf->review_max_inflight = 16;
	conf->hostipc_mode = HOSTIPC_OFF;
	return conf;
fail:
	cfg_nomem(ctx, NULL);
	config_free(conf);
	return NULL;
}

struct config *
config_load_buffer(const char *buf, size_t len, const char *name,
    struct config_errors *errs)
{
	return config_load_buffer_layer(buf, len, name, LAYER_USER, errs);
}

struct config *
config_load_buffer_layer(const char *buf, size_t len, const char *name,
    enum config_layer layer, struct config_errors *errs)
{
	struct managed *m;

	/* No config without the managed file's rules, from memory too. */
	if (managed_load(errs, &m) == -1)
		return NULL;
	return config_parse(buf, len, name, NULL, errs, 0, layer, m);
}

/*
 * Load a config of a layer from a buffer, under the managed rules m
 * (NULL: none; the config takes m over, also on failure); paths: it was
 * read from a file, whose allow entries are looked for on this machine
 * (fs_missing_note).
 */
static struct config *
config_parse(const char *buf, size_t len, const char *name,
    const char *source, struct config_errors *errs, int paths,
    enum config_layer layer, struct managed *m)
{
	struct cfgctx ctx = { name != NULL ? name : CONFIG_BUFFER_NAME, errs,
	    0, NULL, paths, source, config_layer_name(layer) };
	struct config *conf = NULL;
	json_t *root = NULL, *v;
	size_t slen;

	if ((root = cfg_json_parse(&ctx, buf, len)) == NULL)
		goto fail;
	if (cfg_obj_check(&ctx, "$", root, keys_top) == -1)
		goto fail;
	if ((conf = config_new(&ctx, ctx.name)) == NULL)
		goto fail;
	conf->layer = layer;
	conf->managed = m;
	m = NULL;
	ctx.notes = &conf->notes;
	/* The managed deny entries first: they are the ones reported. */
	if (conf->managed != NULL)
		managed_seed(&ctx, conf->managed, conf->policy);
	/* "$schema" is for editors; only its type is checked. */
	cfg_string(&ctx, "$", root, "$schema", &slen);
	if (conf->managed != NULL)
		managed_seed_rules(&ctx, conf->managed, conf);
	if ((v = json_object_get(root, "network")) != NULL)
		parse_network(&ctx, "$.network", v, conf, conf->policy);
	/* After the network: injectHosts are checked against it. */
	secrets_creds(&ctx, root, conf);
	if ((v = json_object_get(root, "filesystem")) != NULL)
		parse_filesystem(&ctx, v, conf);
	if ((v = json_object_get(root, "proxy")) != NULL)
		parse_proxy(&ctx, v, conf);
	if ((v = json_object_get(root, "resolver")) != NULL)
		parse_resolver(&ctx, v, conf);
	if ((v = json_object_get(root, "review")) != NULL)
		parse_review(&ctx, v, conf);
	if ((v = json_object_get(root, "hostIPC")) != NULL)
		parse_hostipc(&ctx, v, conf);
	/* pisbx-run: refuse, rather than run without namespaces. */
	cfg_bool(&ctx, "$", root, "requireNamespaces",
	    &conf->require_namespaces);
	compat_top(&ctx, root, conf);
	if (conf->managed != NULL)
		managed_check(&ctx, conf->managed, root, conf, conf->policy);
	if (ctx.nerr > 0)
		goto fail;
	json_decref(root);
	return conf;
fail:
	cfg_finish(&ctx);
	json_decref(root);
	config_free(conf);
	managed_free(m);
	return NULL;
}

/*
 * Read a whole config file from fd (closed here).  Only a regular file
 * of at most 4 MiB is accepted: a FIFO or a device as "config" would
 * hang or feed us garbage (the caller opens with O_NONBLOCK, so the open
 * itself does not hang on a FIFO).
 */
char *
cfg_file_read(struct cfgctx *ctx, int fd, size_t *lenp)
{
	struct stat st;
	char *buf = NULL, *nb;
	size_t len = 0, cap;
	ssize_t r;

	if (fstat(fd, &st) == -1) {
		cfg_err(ctx, NULL, "cannot stat: %s", strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		cfg_err(ctx, NULL, "not a regular file");
		goto fail;
	}
	if (st.st_size > CONFIG_MAX_SIZE) {
		cfg_err(ctx, NULL, "larger than 4 MiB (%lld bytes)",
		    (long long)st.st_size);
		goto fail;
	}
	cap = (size_t)st.st_size + 1;
	if ((buf = malloc(cap)) == NULL) {
		cfg_nomem(ctx, NULL);
		goto fail;
	}
	/* The file may grow while we read it: keep the 4 MiB bound. */
	for (;;) {
		if (len == cap) {
			if (cap > CONFIG_MAX_SIZE) {
				cfg_err(ctx, NULL, "larger than 4 MiB");
				goto fail;
			}
			cap = cap * 2 > CONFIG_MAX_SIZE + 1 ?
			    CONFIG_MAX_SIZE + 1 : cap * 2;
			if ((nb = realloc(buf, cap)) == NULL) {
				cfg_nomem(ctx, NULL);
				goto fail;
			}
			buf = nb;
		}
		r = read(fd, buf + len, cap - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			cfg_err(ctx, NULL, "cannot read: %s", strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	if (len > CONFIG_MAX_SIZE) {
		cfg_err(ctx, NULL, "larger than 4 MiB");
		goto fail;
	}
	close(fd);
	*lenp = len;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

struct config *
config_load(const char *path, struct config_errors *errs)
{
	return config_load_layer(path, LAYER_USER, errs);
}

struct config *
config_load_layer(const char *path, enum config_layer layer,
    struct config_errors *errs)
{
	struct cfgctx ctx = { path, errs, 0, NULL, 0, NULL, NULL };
	struct config *conf;
	struct managed *m;
	char *buf, *abs, cwd[PATH_MAX], real[PATH_MAX];
	size_t len;
	int fd;

	if (path != NULL && path[0] == '\0') {
		ctx.name = "\"\"";
		cfg_err(&ctx, NULL, "empty config file name");
		return NULL;
	}
	/* The managed file first: no config is read without its rules. */
	if (managed_load(errs, &m) == -1)
		return NULL;
	if (path == NULL)
		return config_parse(pisbx_default_config,
		    strlen(pisbx_default_config), CONFIG_DEFAULT_NAME, NULL,
		    errs, 0, layer, m);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1) {
		cfg_err(&ctx, NULL, "cannot open: %s", strerror(errno));
		managed_free(m);
		return NULL;
	}
	if ((buf = cfg_file_read(&ctx, fd, &len)) == NULL) {
		managed_free(m);
		return NULL;
	}
	/*
	 * Messages name the file as given; the config (and the source of
	 * each list entry) names it absolutely, for hints read later from
	 * another directory.
	 */
	abs = NULL;
	if (path[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL) {
		if (realpath(path, real) != NULL)
			abs = strdup(real);
		else if (asprintf(&abs, "%s/%s", cwd, path) == -1)
			abs = NULL;
		if (abs == NULL) {
			free(buf);
			managed_free(m);
			cfg_nomem(&ctx, NULL);
			return NULL;
		}
	}
	conf = config_parse(buf, len, path, abs, errs, 1, layer, m);
	free(buf);
	if (conf != NULL && abs != NULL) {
		free(conf->path);
		conf->path = abs;
		abs = NULL;
	}
	free(abs);
	return conf;
}

struct policy *
config_network_policy(const char *json, size_t len, const char *name,
    struct config_errors *errs)
{
	struct cfgctx ctx = { name != NULL ? name : CONFIG_BUFFER_NAME, errs,
	    0, NULL, 0, NULL, config_layer_name(LAYER_RUN) };
	struct policy *pol = NULL;
	struct managed *m = NULL;
	json_t *root = NULL;

	if (managed_load(errs, &m) == -1)
		return NULL;
	if ((root = cfg_json_parse(&ctx, json, len)) == NULL)
		goto fail;
	if ((pol = policy_new()) == NULL) {
		cfg_nomem(&ctx, NULL);
		goto fail;
	}
	if (m != NULL)
		managed_seed(&ctx, m, pol);
	parse_network(&ctx, "$.network", root, NULL, pol);
	if (m != NULL)
		managed_check(&ctx, m, root, NULL, pol);
	if (ctx.nerr > 0)
		goto fail;
	managed_free(m);
	json_decref(root);
	return pol;
fail:
	cfg_finish(&ctx);
	managed_free(m);
	json_decref(root);
	if (pol != NULL)
		policy_free(pol);
	return NULL;
}

/* dir + "/" + rel, malloc'ed; dir must be absolute (never the cwd). */
static char *
config_path_in(const char *dir, const char *rel)
{
	char *p;

	if (dir == NULL || dir[0] != '/')
		return NULL;
	if (asprintf(&p, "%s/%s", dir, rel) == -1)
		abort();
	return p;
}

/* A per-user file if something is there (anything but ENOENT), or NULL. */
static char *
config_present(char *p)
{
	struct stat st;

	/*
	 * Anything there but ENOENT (a directory, a dangling link, no
	 * permission) is returned, to be reported by config_load.
	 */
	if (p != NULL && lstat(p, &st) == -1 &&
	    (errno == ENOENT || errno == ENOTDIR)) {
		free(p);
		return NULL;
	}
	return p;
}

/*
 * The trust order.  An explicitly named config ($PISBX_CONFIG) is returned
 * even when missing, so that config_load reports it instead of silently
 * falling back to a weaker default; the per-user files are used only if
 * they exist: pisbx's own, then srt's ~/.srt-settings.json.  Relative
 * XDG_CONFIG_HOME/HOME values are ignored, as the XDG spec says, so
 * nothing is ever looked up in the current directory -- which may be the
 * sandboxed workspace.  Out of memory aborts: falling back to the default
 * policy would be the silent widening this function exists to prevent.
 */
char *
config_find(const char *cli_path)
{
	const char *env;
	char *p;

	if (cli_path != NULL) {
		if ((p = strdup(cli_path)) == NULL)
			abort();
		return p;
	}
	if ((env = getenv("PISBX_CONFIG")) != NULL && env[0] != '\0') {
		if ((p = strdup(env)) == NULL)
			abort();
		return p;
	}
	if ((p = config_present(config_user_path())) != NULL)
		return p;
	return config_present(config_path_in(cfg_home(), CONFIG_SRT));
}

/* $HOME when absolute, else the password entry's, or NULL. */
const char *
cfg_home(void)
{
	const char *home;
	struct passwd *pw;

	if ((home = getenv("HOME")) == NULL || home[0] != '/') {
		pw = getpwuid(getuid());
		home = pw != NULL ? pw->pw_dir : NULL;
	}
	return home;
}

char *
config_user_path(void)
{
	const char *env;
	char *p, *dir;

	env = getenv("XDG_CONFIG_HOME");
	if (env != NULL && env[0] == '/')
		p = config_path_in(env, CONFIG_RELATIVE);
	else if ((dir = config_path_in(cfg_home(), ".config")) != NULL) {
		p = config_path_in(dir, CONFIG_RELATIVE);
		free(dir);
	} else
		p = NULL;
	return p;
}

void
strlist_free(struct strlist *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void
config_free(struct config *conf)
{
	if (conf == NULL)
		return;
	free(conf->path);
	managed_free(conf->managed);
	free(conf->policy_from);
	free(conf->policy_file);
	if (conf->policy != NULL)
		policy_free(conf->policy);
	parent_free(conf->parent);
	free(conf->budget_hosts);
	strlist_free(&conf->listen);
	free(conf->metrics_listen);
	free(conf->syslog_address);
	free(conf->syslog_app);
	strlist_free(&conf->resolver_servers);
	free(conf->hosts_file);
	free(conf->access_log);
	strlist_free(&conf->review_command);
	free(conf->review_socket);
	free(conf->review_capability_env);
	strlist_free(&conf->deny_read);
	strlist_free(&conf->allow_read);
	strlist_free(&conf->allow_write);
	strlist_free(&conf->deny_write);
	strlist_free(&conf->hostipc_prefixes);
	strlist_free(&conf->allow_unix_sockets);
	secrets_free(conf);
	reqrule_free(conf);
	config_errors_clear(&conf->notes);
	strlist_free(&conf->warnings);
	free(conf);
}

void
config_errors_clear(struct config_errors *errs)
{
	size_t i;

	if (errs == NULL)
		return;
	for (i = 0; i < errs->n; i++)
		free(errs->msg[i]);
	free(errs->msg);
	errs->msg = NULL;
	errs->n = 0;
}
