/*
 * The keys of an srt settings file (Anthropic's sandbox-runtime,
 * ~/.srt-settings.json) and of a pi-sandbox config that are not pisbx's
 * own, so that such a file drops in as it is.
 *
 * Each key is honoured with srt's meaning or mapped onto pisbx's
 * (deniedDomainReasons, strictAllowlist, additionalAllowRead), accepted
 * with a note saying why it has no effect here (macOS-only switches, the
 * helper binaries srt runs and pisbx does not), or refused with an error
 * that names the pisbx way to say the same thing.  None is ignored
 * silently: the notes are printed by `pisbx-proxy --check -v` and by
 * `pisbx-run -v`.  docs/config.md holds the same table for people.
 */

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <jansson.h>

#include "policy/policy.h"
#include "policy/config_int.h"

#define REASON_MAX	1000	/* bytes of one deniedDomainReasons text */

enum compat_type {
	CT_ANY,		/* refused whatever it is */
	CT_BOOL,
	CT_STRLIST,
	CT_OBJECT,
	CT_ABSPATH
};

enum compat_action {
	CA_NOEFFECT,	/* accepted; a note says why nothing changes */
	CA_REFUSE,	/* an error naming the pisbx way */
	CA_REFUSE_TRUE,	/* true refused; false is what pisbx does anyway */
	CA_NOTE_TRUE	/* true noted (its why); false: nothing to say */
};

struct compat_key {
	const char		*key;
	enum compat_type	 type;
	enum compat_action	 action;
	const char		*why;
};

static void	 compat_table(struct cfgctx *, const char *, const json_t *,
		    const struct compat_key *, size_t);
static int	 compat_type_ok(struct cfgctx *, const char *, const json_t *,
		    enum compat_type);
static void	 compat_subagents(struct cfgctx *, const json_t *);
static void	 compat_reasons(struct cfgctx *, const char *, const json_t *,
		    struct config *);
static const char *compat_reason_check(const char *, size_t);
static void	 compat_ambiguous(struct cfgctx *, const char *,
		    const json_t *);
static char	*item_socket(struct cfgctx *, const char *, const char *,
		    size_t, size_t);
static char	*item_abs_path(struct cfgctx *, const char *, const char *,
		    size_t, size_t);

static const struct item_check check_socket = { item_socket, 1 };
static const struct item_check check_abs_path = { item_abs_path, 1 };

static const struct compat_key compat_keys_top[] = {
	{ "ignoreViolations", CT_OBJECT, CA_NOEFFECT,
	    "srt's filter for its violation log; pisbx silences nothing: "
	    "every refusal is in the access log or on stderr" },
	{ "enableWeakerNestedSandbox", CT_BOOL, CA_NOTE_TRUE,
	    "where a container refuses namespaces, pisbx-run confines the "
	    "command without them whatever this says (its network through "
	    "the proxy only, docs/threat-model.md), and refuses to run with "
	    "requireNamespaces" },
	{ "enableWeakerNetworkIsolation", CT_BOOL, CA_NOEFFECT,
	    "macOS only (com.apple.trustd.agent), ignored by srt on Linux "
	    "too" },
	{ "allowAppleEvents", CT_BOOL, CA_NOEFFECT,
	    "macOS only (Apple Events), ignored by srt on Linux too" },
	{ "ripgrep", CT_OBJECT, CA_NOEFFECT,
	    "pisbx runs no ripgrep: protected names are enforced when "
	    "created, not searched for" },
	{ "mandatoryDenySearchDepth", CT_ANY, CA_REFUSE,
	    "pisbx-run protects the mandatory write-deny set at the top of "
	    "each writable root (also against creation) and does not search "
	    "deeper for existing copies (docs/filesystem.md): remove the key, "
	    "and add deeper files to filesystem.denyWrite" },
	{ "allowPty", CT_BOOL, CA_NOEFFECT,
	    "macOS only; under pisbx-run a command always has its own "
	    "/dev/pts" },
	{ "seccomp", CT_OBJECT, CA_NOEFFECT,
	    "pisbx-run builds its seccomp filter itself; there is no helper "
	    "binary to point at" },
	{ "bwrapPath", CT_ABSPATH, CA_NOEFFECT,
	    "pisbx-run does not use bubblewrap" },
	{ "socatPath", CT_ABSPATH, CA_NOEFFECT,
	    "pisbx-run does not use socat" },
	{ "javaAgentJarPath", CT_ABSPATH, CA_NOEFFECT,
	    "pisbx injects no JVM agent: give JVM tools -Dhttps.proxyHost="
	    "127.0.0.1 -Dhttps.proxyPort=3128 (JAVA_TOOL_OPTIONS)" },
	{ "windows", CT_OBJECT, CA_NOEFFECT, "Windows only" },
	{ "git", CT_OBJECT, CA_NOEFFECT,
	    "files keep their owner inside pisbx-run, so git needs no "
	    "safe.directory" },
};

static const struct compat_key compat_keys_network[] = {
	{ "allowLocalBinding", CT_BOOL, CA_NOEFFECT,
	    "the command has its own network namespace: a port it binds is "
	    "reachable only from inside the sandbox (srt ignores the key on "
	    "Linux too)" },
	{ "allowMachLookup", CT_STRLIST, CA_NOEFFECT,
	    "macOS only (XPC/Mach services)" },
	{ "httpProxyPort", CT_ANY, CA_REFUSE,
	    "pisbx-run always sends the command through its own filtering "
	    "proxy and hands it to no other; to filter for other clients, "
	    "run pisbx-proxy --listen 127.0.0.1:PORT" },
	{ "socksProxyPort", CT_ANY, CA_REFUSE,
	    "pisbx-run always sends the command through its own filtering "
	    "proxy and hands it to no other; to filter for other clients, "
	    "run pisbx-proxy --listen 127.0.0.1:PORT" },
	{ "mitmProxy", CT_ANY, CA_REFUSE,
	    "pisbx hands no connection to a TLS-intercepting proxy: it "
	    "decides on host:port and checks the TLS server name" },
	{ "filterRequest", CT_ANY, CA_REFUSE,
	    "a JavaScript callback in srt; pisbx decides per host:port: use "
	    "allowedDomains, deniedDomains or a review hook (review.command)" },
	{ "deniedResolvedAddresses", CT_ANY, CA_REFUSE,
	    "pisbx keeps no list of addresses a name must not resolve to: "
	    "it already refuses every non-public address (private, CGNAT, "
	    "ULA, loopback, link-local, metadata; docs/policy.md) unless an "
	    "exact allowedDomains entry names the host, and cannot refuse a "
	    "public one by address; remove the key, and keep a host that "
	    "must not reach such an address out of allowedDomains (or in "
	    "deniedDomains)" },
	{ "allowPlaintextHeaderSet", CT_BOOL, CA_REFUSE_TRUE,
	    "it lets srt's filterRequest callback set headers on plain-HTTP "
	    "requests; pisbx has no such callback and sets no header: "
	    "remove the key" },
	{ "stripResponseHeaders", CT_ANY, CA_REFUSE,
	    "pisbx passes response headers on as the upstream sent them "
	    "(srt strips them around its filterRequest callback, which "
	    "pisbx does not have): remove the key" },
	{ "refuseOpaqueTunnels", CT_BOOL, CA_REFUSE_TRUE,
	    "pisbx decides every tunnel by host:port, terminated or not, and "
	    "does not refuse a tunnel for being opaque (a host with "
	    "network.requestRules is the exception: its tunnels must be "
	    "terminated TLS): remove the key, and give the hosts whose "
	    "requests must be seen requestRules" },
	{ "requireHostMatch", CT_BOOL, CA_NOEFFECT,
	    "pisbx always answers 421 to a request on a terminated "
	    "connection whose Host does not name the host it tunnels to, "
	    "and checks the TLS server name of every other" },
};

static const struct compat_key compat_keys_filesystem[] = {
	{ "disabled", CT_BOOL, CA_REFUSE_TRUE,
	    "pisbx-run always applies its filesystem policy and the "
	    "mandatory write-deny set: widen the policy instead "
	    "(\"denyRead\": [], \"allowWrite\": [\"/path\"])" },
};

/* Check the JSON type a table entry wants; an error when it is another. */
static int
compat_type_ok(struct cfgctx *ctx, const char *p, const json_t *v,
    enum compat_type type)
{
	char	 got[CONFIG_QUOTE_MAX];
	size_t	 i;

	cfg_describe(got, sizeof(got), v);
	switch (type) {
	case CT_ANY:
		return 1;
	case CT_BOOL:
		if (json_is_boolean(v))
			return 1;
		cfg_err(ctx, p, "expected true or false, got %s", got);
		return 0;
	case CT_OBJECT:
		if (json_is_object(v))
			return 1;
		cfg_err(ctx, p, "expected an object, got %s", got);
		return 0;
	case CT_STRLIST:
		if (json_is_array(v)) {
			for (i = 0; i < json_array_size(v); i++)
				if (!json_is_string(json_array_get(v, i)))
					break;
			if (i == json_array_size(v))
				return 1;
		}
		cfg_err(ctx, p, "expected an array of strings, got %s", got);
		return 0;
	case CT_ABSPATH:
		if (!json_is_string(v)) {
			cfg_err(ctx, p, "expected a string, got %s", got);
			return 0;
		}
		return cfg_abs_path(ctx, p, json_string_value(v),
		    json_string_length(v), PATH_MAX) == 0;
	}
	return 0;
}

/* The table's keys present in obj, each checked, noted or refused. */
static void
compat_table(struct cfgctx *ctx, const char *base, const json_t *obj,
    const struct compat_key *keys, size_t n)
{
	char		 p[CONFIG_JPATH_MAX];
	const json_t	*v;
	size_t		 i;

	for (i = 0; i < n; i++) {
		if ((v = json_object_get(obj, keys[i].key)) == NULL)
			continue;
		cfg_jpath_key(p, sizeof(p), base, keys[i].key);
		if (!compat_type_ok(ctx, p, v, keys[i].type))
			continue;
		switch (keys[i].action) {
		case CA_NOEFFECT:
			cfg_note(ctx, p, "no effect here: %s", keys[i].why);
			break;
		case CA_REFUSE:
			cfg_err(ctx, p, "not supported: %s", keys[i].why);
			break;
		case CA_REFUSE_TRUE:
			if (json_is_true(v))
				cfg_err(ctx, p, "true is not supported: %s",
				    keys[i].why);
			break;
		case CA_NOTE_TRUE:
			if (json_is_true(v))
				cfg_note(ctx, p, "true: %s", keys[i].why);
			break;
		}
	}
}

/*
 * pi-sandbox's "subagents": which tool runs pi's subagents.  pisbx has
 * no subagent tool of its own; it sandboxes whatever runs through
 * pisbx-run, so the choice changes nothing here -- except a request to
 * isolate external workers, which pisbx cannot do from a config.
 */
static void
compat_subagents(struct cfgctx *ctx, const json_t *v)
{
	static const char *const keys[] = {
		"provider", "externalWorkerIsolation", NULL
	};
	static const char jp[] = "$.subagents";
	char		 p[CONFIG_JPATH_MAX], q[CONFIG_QUOTE_MAX];
	const char	*s;
	size_t		 len;

	if (cfg_obj_check(ctx, jp, v, keys) == -1)
		return;
	if ((s = cfg_string(ctx, jp, v, "provider", &len)) != NULL) {
		cfg_jpath_key(p, sizeof(p), jp, "provider");
		if (strlen(s) != len || (strcmp(s, "builtin") != 0 &&
		    strcmp(s, "pi-subagents") != 0 && strcmp(s, "off") != 0)) {
			cfg_quote(q, sizeof(q), s, len);
			cfg_err(ctx, p, "expected \"builtin\", "
			    "\"pi-subagents\" or \"off\", got %s", q);
		} else
			cfg_note(ctx, p, "no effect here: pi-sandbox's choice "
			    "of subagent tool; pisbx sandboxes every command "
			    "run through pisbx-run, a subagent's included");
	}
	if ((s = cfg_string(ctx, jp, v, "externalWorkerIsolation", &len)) !=
	    NULL) {
		cfg_jpath_key(p, sizeof(p), jp, "externalWorkerIsolation");
		cfg_quote(q, sizeof(q), s, len);
		if (strlen(s) == len && strcmp(s, "off") == 0)
			cfg_note(ctx, p, "no effect here: pisbx starts no "
			    "workers");
		else if (strlen(s) == len && strcmp(s, "enforce") == 0)
			cfg_err(ctx, p, "\"enforce\" is not supported: pisbx "
			    "starts no workers; point pi-subagents at a "
			    "wrapper that runs the worker under pisbx-run "
			    "(PI_SUBAGENT_PI_BINARY)");
		else
			cfg_err(ctx, p, "expected \"off\" or \"enforce\", "
			    "got %s", q);
	}
}

void
compat_top(struct cfgctx *ctx, const json_t *root, struct config *conf)
{
	const json_t	*v;

	compat_table(ctx, "$", root, compat_keys_top,
	    sizeof(compat_keys_top) / sizeof(*compat_keys_top));
	/* Honoured by pisbx-run's seccomp filter (docs/threat-model.md). */
	cfg_bool(ctx, "$", root, "allowNestedUserNamespaces",
	    &conf->allow_nested_userns);
	if ((v = json_object_get(root, "subagents")) != NULL)
		compat_subagents(ctx, v);
	/* srt's weaker mode asked for, and namespaces required: which? */
	if (conf->require_namespaces && json_is_true(json_object_get(root,
	    "enableWeakerNestedSandbox")))
		cfg_err(ctx, "$.enableWeakerNestedSandbox", "true contradicts "
		    "\"requireNamespaces\": true: remove one (pisbx-run runs "
		    "without namespaces only where requireNamespaces is not "
		    "set)");
	/*
	 * srt's strictAllowlist: destinations no list matches are denied
	 * without asking.  That is pisbx without a review hook; with one, the
	 * file says two contradicting things.
	 */
	if (conf->strict_allowlist && json_object_get(root, "review") != NULL)
		cfg_err(ctx, "$.network.strictAllowlist", "true contradicts "
		    "\"review\": remove one (without a review hook pisbx "
		    "denies what no list matches)");
}

/*
 * Why a deniedDomainReasons text cannot be shown, or NULL.  It goes into
 * a 403 body, a log record and a terminal, so no control characters
 * (C0, DEL, C1); the rest of UTF-8 is fine (jansson checked it).
 */
static const char *
compat_reason_check(const char *s, size_t len)
{
	const unsigned char	*u = (const unsigned char *)s;
	size_t			 i;

	if (len == 0)
		return "an empty reason";
	if (len > REASON_MAX)
		return "a reason longer than 1000 bytes";
	if (strlen(s) != len)
		return "a NUL byte in the reason";
	for (i = 0; i < len; i++) {
		if (u[i] < 0x20 || u[i] == 0x7f ||
		    (u[i] == 0xc2 && i + 1 < len && u[i + 1] >= 0x80 &&
		    u[i + 1] <= 0x9f))
			return "a control character in the reason (it is "
			    "shown in a terminal and an HTTP body)";
	}
	return NULL;
}

/*
 * srt's deniedDomainReasons: {"<deniedDomains entry>": "<reason>"}.  The
 * key names a deny entry (compared after canonicalisation: "GitHub.com:22"
 * is "github.com:22"), and the reason travels with it to every refusal
 * that entry decides.  A key that names no entry would never be shown:
 * an error, where srt says nothing.
 */
static void
compat_reasons(struct cfgctx *ctx, const char *base, const json_t *obj,
    struct config *conf)
{
	char		 p[CONFIG_JPATH_MAX], rp[CONFIG_JPATH_MAX];
	char		 got[CONFIG_QUOTE_MAX], q[CONFIG_QUOTE_MAX];
	const json_t	*v, *r;
	const char	*key, *why;
	struct pattern	 pat;

	if ((v = json_object_get(obj, "deniedDomainReasons")) == NULL)
		return;
	cfg_jpath_key(rp, sizeof(rp), base, "deniedDomainReasons");
	if (!json_is_object(v)) {
		cfg_describe(got, sizeof(got), v);
		cfg_err(ctx, rp, "expected an object {\"deniedDomains entry\": "
		    "\"reason\"}, got %s", got);
		return;
	}
	json_object_foreach((json_t *)v, key, r) {
		cfg_jpath_key(p, sizeof(p), rp, key);
		cfg_quote(q, sizeof(q), key, strlen(key));
		if (!json_is_string(r)) {
			cfg_describe(got, sizeof(got), r);
			cfg_err(ctx, p, "expected a reason string, got %s",
			    got);
			continue;
		}
		if ((why = compat_reason_check(json_string_value(r),
		    json_string_length(r))) != NULL) {
			cfg_err(ctx, p, "%s", why);
			continue;
		}
		if (pattern_parse(key, strlen(key), 1, &pat, &why) == -1) {
			cfg_err(ctx, p, "the key %s is not a deniedDomains "
			    "pattern: %s", q, why);
			continue;
		}
		switch (policy_set_reason(conf->policy, &pat,
		    json_string_value(r))) {
		case 0:
			break;
		case 1:
			cfg_err(ctx, p, "no deniedDomains entry is %s: a "
			    "reason explains one of them", q);
			break;
		case 2:
			cfg_err(ctx, p, "the entry %s has a reason already "
			    "(keys are compared as canonical patterns)",
			    pat.text);
			break;
		default:
			cfg_nomem(ctx, p);
			break;
		}
	}
}

/*
 * srt's ambiguousRequestTarget: what becomes of a request target that
 * names another path once normalised.  pisbx refuses it (400) wherever
 * request rules apply, which is srt's "refuse"; forwarding it as
 * spelled or normalised would let the upstream act on another resource
 * than the rules judged.
 */
static void
compat_ambiguous(struct cfgctx *ctx, const char *base, const json_t *obj)
{
	char		 p[CONFIG_JPATH_MAX], q[CONFIG_QUOTE_MAX];
	const char	*s;
	size_t		 len;

	if ((s = cfg_string(ctx, base, obj, "ambiguousRequestTarget", &len)) ==
	    NULL)
		return;
	cfg_jpath_key(p, sizeof(p), base, "ambiguousRequestTarget");
	cfg_quote(q, sizeof(q), s, len);
	if (strlen(s) == len && strcmp(s, "refuse") == 0)
		cfg_note(ctx, p, "no effect here: pisbx always refuses (400) "
		    "an ambiguous request target where request rules apply");
	else if (strlen(s) == len && (strcmp(s, "asSpelled") == 0 ||
	    strcmp(s, "normalize") == 0))
		cfg_err(ctx, p, "%s is not supported: pisbx refuses (400) a "
		    "request target that names another path once normalised "
		    "(a dot segment, \"//\", \"\\\", an encoded \"/\" or "
		    "\".\"), so that the upstream acts on the path the rules "
		    "judged: remove the key, or write \"refuse\"", q);
	else
		cfg_err(ctx, p, "expected \"refuse\", \"asSpelled\" or "
		    "\"normalize\", got %s", q);
}

/* An allowUnixSockets entry: an absolute path that fits sun_path. */
static char *
item_socket(struct cfgctx *ctx, const char *jpath, const char *s, size_t len,
    size_t idx)
{
	char	*d;

	(void)idx;
	if (cfg_abs_path(ctx, jpath, s, len,
	    sizeof(((struct sockaddr_un *)NULL)->sun_path)) == -1)
		return NULL;
	if ((d = strdup(s)) == NULL)
		cfg_nomem(ctx, jpath);
	return d;
}

void
compat_network(struct cfgctx *ctx, const char *jpath, const json_t *v,
    struct config *conf)
{
	char	 p[CONFIG_JPATH_MAX];

	compat_table(ctx, jpath, v, compat_keys_network,
	    sizeof(compat_keys_network) / sizeof(*compat_keys_network));
	compat_reasons(ctx, jpath, v, conf);
	compat_ambiguous(ctx, jpath, v);
	cfg_bool(ctx, jpath, v, "strictAllowlist", &conf->strict_allowlist);
	cfg_strlist(ctx, jpath, v, "allowUnixSockets", &check_socket,
	    &conf->allow_unix_sockets);
	/* Enforced by pisbx-run's guard; moot when every socket is allowed. */
	if (conf->allow_unix_sockets.n > 0 && conf->allow_all_unix_sockets) {
		cfg_jpath_key(p, sizeof(p), jpath, "allowUnixSockets");
		cfg_note(ctx, p, "no effect here: allowAllUnixSockets is true, "
		    "so every Unix socket is reachable");
	}
	if (conf->allow_unix_datagram_sockets &&
	    conf->allow_all_unix_sockets) {
		cfg_jpath_key(p, sizeof(p), jpath, "allowUnixDatagramSockets");
		cfg_note(ctx, p, "no effect here: allowAllUnixSockets is true, "
		    "so Unix datagram sockets are allowed and no send is "
		    "checked");
	}
}

/*
 * pi-sandbox's additionalAllowRead entries are absolute paths, or start
 * at the home directory ("~", "~/x"): pi-sandbox hands them to srt, which
 * expands "~".  They join allowRead, whose "~" pisbx-run expands as it
 * does srt's own keys' (fs_resolve).
 */
static char *
item_abs_path(struct cfgctx *ctx, const char *jpath, const char *s,
    size_t len, size_t idx)
{
	if (len > 0 && !(s[0] == '~' && (len == 1 || s[1] == '/')) &&
	    cfg_abs_path(ctx, jpath, s, len, PATH_MAX) == -1)
		return NULL;
	return cfg_item_path(ctx, jpath, s, len, idx);
}

/*
 * pi-sandbox's filesystem.additionalAllowRead: paths added to the read
 * allowlist inside the denied home directory -- pisbx's allowRead, to
 * which they are appended.
 */
void
compat_filesystem(struct cfgctx *ctx, const char *jpath, const json_t *v,
    struct config *conf)
{
	struct strlist	 extra = { NULL, 0 };
	size_t		 i, j;

	compat_table(ctx, jpath, v, compat_keys_filesystem,
	    sizeof(compat_keys_filesystem) / sizeof(*compat_keys_filesystem));
	cfg_strlist(ctx, jpath, v, "additionalAllowRead", &check_abs_path,
	    &extra);
	for (i = 0; i < extra.n; i++) {
		for (j = 0; j < conf->allow_read.n; j++)
			if (strcmp(conf->allow_read.v[j], extra.v[i]) == 0)
				break;
		if (j < conf->allow_read.n)
			continue;
		if (cfg_strlist_add(&conf->allow_read, extra.v[i]) == -1) {
			cfg_nomem(ctx, jpath);
			continue;
		}
		extra.v[i] = NULL;
	}
	strlist_free(&extra);
}
