/*
 * policy/: host canonicalisation, patterns, deny -> allow -> review
 * evaluation, address classification and the config loader.
 *
 * Pure functions over strings and addresses: no sockets, no libevent, no
 * I/O beyond reading the config file (and, for a hint, the shipped domain
 * lists).  The proxy asks policy; policy never calls back into the proxy.
 */
#ifndef PISBX_POLICY_H
#define PISBX_POLICY_H

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <stddef.h>
#include <stdint.h>

#define HOST_NAME_MAXLEN	253	/* octets, without the trailing dot */
#define HOST_LABEL_MAXLEN	63
#define HOST_TEXT_MAX		256	/* canonical text + NUL, fits "[v6]" */
#define TARGET_TEXT_MAX		(HOST_TEXT_MAX + 8)	/* "host:65535" */

enum host_kind {
	HOST_NAME,		/* a DNS name: text is lower-case, no trailing dot */
	HOST_IPV4,		/* text is the dotted quad, v4 is set */
	HOST_IPV6		/* text is "[rfc5952]", v6 is set */
};

/*
 * A canonical host.  The text is what the policy sees, what the reviewer
 * is shown, what is logged and -- for literals -- what is dialled.
 */
struct host {
	enum host_kind	kind;
	char		text[HOST_TEXT_MAX];
	struct in_addr	v4;	/* HOST_IPV4 */
	struct in6_addr	v6;	/* HOST_IPV6 */
};

/* canon.c */
/*
 * Canonicalise one host as written in a URL authority, a CONNECT target,
 * a SOCKS5 domain or a pattern: "Example.COM.", "127.1", "0x7f000001",
 * "[::ffff:127.0.0.1]" (IPv6 only in brackets).  Returns 0, or -1 with a
 * static message in *errstr that a person can act on.
 */
int	 host_canon(const char *in, size_t len, struct host *out,
	    const char **errstr);
/* Parse a decimal port 1..65535 with no sign, no leading zero. */
int	 port_parse(const char *in, size_t len, uint16_t *out);
/*
 * Parse "host:port", "[v6]:port", or -- when default_port is not 0 -- a
 * bare host, which takes default_port.  On failure *port is still the
 * port when that part parsed (so --explain can report it), else 0.
 */
int	 target_parse(const char *in, size_t len, uint16_t default_port,
	    struct host *out, uint16_t *port, const char **errstr);
/*
 * Split "host[:port]" / "[v6][:port]" into its host part (*hostlen octets
 * from in) and its port text (*port, NULL when there is none).  An
 * unbracketed host with several colons is left whole for host_canon to
 * refuse.  The one splitter for requests and patterns alike.
 */
int	 target_split(const char *in, size_t len, size_t *hostlen,
	    const char **port, size_t *portlen, const char **errstr);
/* Fill a host from a binary address; IPv4-mapped/compatible v6 unwrap. */
void	 host_from_in(struct host *, const struct in_addr *);
void	 host_from_in6(struct host *, const struct in6_addr *);
/* "host:port" into buf; returns the length snprintf would. */
int	 target_format(char *buf, size_t len, const struct host *,
	    uint16_t port);

/*
 * The name the proxy maps to its own machine's loopback (127.0.0.1 and
 * [::1]), so a sandbox can reach a service the user runs on the host
 * without opening "localhost" ("internal" is reserved for private use:
 * it never resolves in public DNS).  Only an exact allow entry with the
 * port ("host.pisbx.internal:5173") reaches it: never a wildcard, "*",
 * an entry without a port, or a reviewer.
 */
#define HOST_LOOPBACK_NAME	"host.pisbx.internal"
/* Whether h is HOST_LOOPBACK_NAME. */
int	 host_is_loopback_name(const struct host *);
/*
 * Whether h can only ever be the loopback: 127.0.0.0/8, [::1],
 * "localhost" and names below it (RFC 6761: clients resolve them
 * themselves, and NO_PROXY sends them past any proxy).
 */
int	 host_is_loopback(const struct host *);

/* pattern.c */
enum pattern_kind {
	PATTERN_EXACT,		/* one host (name or literal) */
	PATTERN_WILDCARD,	/* "*.suffix": strict subdomains of host.text */
	PATTERN_ANY		/* "*": deny list only */
};

struct pattern {
	enum pattern_kind kind;
	struct host	host;	/* EXACT: the host; WILDCARD: the suffix */
	uint16_t	port;	/* 0: any port */
	char		text[TARGET_TEXT_MAX + 2];	/* canonical spelling */
	char	       *reason;	/* deny list: its deniedDomainReasons text */
	/*
	 * Where the entry was written, "FILE: $.network.allowedDomains[2]"
	 * (the config loader sets it; a policy keeps its own copy), or NULL.
	 */
	char	       *source;
	/*
	 * The layer it comes from: "managed", "user" or "run" (a static
	 * string, config_layer_name), or NULL.
	 */
	const char     *layer;
	/* The deny a policy gives a target outside its managed ceiling. */
	int		ceiling;
	size_t		seq;	/* in a policy: the order entries were added */
};

/*
 * Whether every host:port that inner matches, outer matches too ("a.b.c"
 * and "*.b.c" are within "*.b.c"; "b.c" is not; "x.org:443" is within
 * "x.org").
 */
int	 pattern_within(const struct pattern *inner,
	    const struct pattern *outer);
/* Whether pat matches host:port (a list of its own, outside a policy). */
int	 pattern_match(const struct pattern *, const struct host *,
	    uint16_t port);

/* pattern_parse flags */
#define PATTERN_DENY_LIST	0x01	/* the bare "*" form is allowed */
#define PATTERN_SHORT_SUFFIX	0x02	/* "*.internal": one label after "*." */

/*
 * Parse one allowedDomains/deniedDomains entry (already a C string; it is
 * trimmed here).  flags: PATTERN_DENY_LIST, PATTERN_SHORT_SUFFIX (routing
 * lists, which grant nothing).  Returns 0, or -1 with *errstr set.
 */
int	 pattern_parse(const char *in, size_t len, int flags,
	    struct pattern *out, const char **errstr);

/* eval.c */
enum policy_list {
	POLICY_DENY,
	POLICY_ALLOW
};

enum verdict {
	VERDICT_DENY,
	VERDICT_ALLOW,
	VERDICT_REVIEW
};

struct policy;

struct policy	*policy_new(void);
void		 policy_free(struct policy *);
/*
 * Add a parsed pattern: 0 added, 1 duplicate (ignored), -1 no memory.
 * Its reason is not copied: see policy_set_reason.
 */
int		 policy_add(struct policy *, enum policy_list,
		    const struct pattern *);
/*
 * Give the deny entry equal to pat (same canonical text) the reason a
 * refusal shows ("SSH to GitHub is closed; use an https remote"), which
 * policy_eval's matched pattern then carries.  0 done, 1 no such deny
 * entry, 2 that entry has a reason already, -1 no memory.
 */
int		 policy_set_reason(struct policy *, const struct pattern *,
		    const char *reason);
size_t		 policy_count(const struct policy *, enum policy_list);
/*
 * Call cb for every entry of both lists in the order they were added
 * (the order of the config file).  0, or -1 out of memory.
 */
int		 policy_walk(const struct policy *,
		    void (*cb)(enum policy_list, const struct pattern *,
		    void *), void *arg);
/*
 * Deny list, then allow list, then review.  *matched (may be NULL) gets
 * the deciding pattern, or NULL for VERDICT_REVIEW.  HOST_LOOPBACK_NAME
 * is allowed only by an exact entry naming its port: otherwise it is
 * VERDICT_DENY with *matched NULL, never VERDICT_REVIEW.
 */
enum verdict	 policy_eval(const struct policy *, const struct host *,
		    uint16_t port, const struct pattern **matched);
/*
 * Whether an exact (non-wildcard) allow entry names this host and port:
 * the only thing that lets a name resolve to a non-public address.
 */
int		 policy_exact_allowed(const struct policy *,
		    const struct host *, uint16_t port);
const char	*verdict_name(enum verdict);
/*
 * Give the policy a ceiling (taken over; NULL removes it): its allow
 * list bounds what can be allowed at all.  A target that neither list
 * decides and that no ceiling entry matches is VERDICT_DENY, never
 * reviewed; *matched is then a pattern with ceiling set, whose source
 * and layer are source and "managed".  0, or -1 out of memory.
 */
int		 policy_set_ceiling(struct policy *, struct policy *ceiling,
		    const char *source);
/*
 * The access-log reason of a verdict that the lists (or the ceiling)
 * gave, with the pattern policy_eval matched: "deny-list:PATTERN",
 * "allow-list:PATTERN", "managed-ceiling" or "host-loopback".
 */
void		 policy_reason(enum verdict, const struct pattern *,
		    char *buf, size_t len);

/* glob.c */
#define GLOB_MAX_COMPONENTS	256

struct glob;

/* Whether a configured path is a pattern: it holds '*', '?' or '['. */
int		 glob_is_pattern(const char *);
/*
 * Compile a filesystem pattern: "~" / "~/..." is taken from home, any
 * other relative pattern from cwd (both absolute, symlink-free).  NULL
 * with *errstr on a malformed pattern.  The grammar is in glob.c and
 * docs/config.md.
 */
struct glob	*glob_compile(const char *pattern, const char *cwd,
		    const char *home, const char **errstr);
/* Only the syntax of a pattern (the config loader's check). */
int		 glob_check(const char *pattern, const char **errstr);
/*
 * Whether an absolute, normalised path (no "." or "..", no trailing
 * slash) matches; is_dir tells whether it names a directory.
 */
int		 glob_match(const struct glob *, const char *path, int is_dir);
/* Whether some path strictly below the directory dir could match. */
int		 glob_match_below(const struct glob *, const char *dir);
/*
 * Whether every path strictly below the directory dir matches ("dir/" +
 * "**"): then dir can be taken as a whole.
 */
int		 glob_match_all_below(const struct glob *, const char *dir);
/* The literal directory a pattern's matches all lie below: "/a/b". */
const char	*glob_base(const struct glob *);
/* The anchored pattern as text, for messages. */
const char	*glob_text(const struct glob *);
void		 glob_free(struct glob *);

/* parent.c */
#define PARENT_CRED_MAX		1024	/* "user:password" octets */

/* One upstream proxy: http://HOST[:PORT] (network.parentProxy.http/https). */
struct parent_url {
	int		 set;
	struct host	 host;		/* canonical; a name is resolved */
	uint16_t	 port;
	char		 text[TARGET_TEXT_MAX];	/* "host:port", for people */
};

/* A noProxy address range: matches IP-literal targets only. */
struct parent_cidr {
	int		 family;	/* AF_INET, AF_INET6 */
	uint8_t		 addr[16];
	unsigned	 bits;
};

/*
 * network.parentProxy: where allowed connections go after pisbx decided,
 * and which go direct.  The credentials are kept only as the header value
 * they become.
 */
struct parent_proxy {
	struct parent_url  http;	/* forwarded HTTP, tunnels not to 443 */
	struct parent_url  https;	/* tunnels to port 443 */
	struct policy	  *direct;	/* noProxy patterns (its allow list) */
	struct parent_cidr *cidr;	/* noProxy ranges */
	size_t		   ncidr;
	int		   direct_all;	/* noProxy "*" */
	char		  *auth;	/* "Basic <base64>", or NULL */
	size_t		   authlen;
	char		  *cred_file;	/* where the credentials come from */
	char		  *cred_env;
	/*
	 * httpForwarding "absolute-form": forwarded HTTP goes to the
	 * upstream as a proxy request with the credentials on it, whose
	 * answer the client reads.  0 ("tunnel", the default): inside a
	 * CONNECT, the credentials on the CONNECT only.
	 */
	int		   http_absolute;
};

struct parent_proxy *parent_new(void);
/* Frees the proxy and wipes the credentials it holds. */
void		 parent_free(struct parent_proxy *);
/*
 * Parse an upstream URL: "http://HOST[:PORT][/]", PORT 80 by default.
 * No credentials, path, query or fragment; https:// and other schemes are
 * refused.  0, or -1 with *errstr.
 */
int		 parent_url_parse(const char *, size_t, struct parent_url *,
		    const char **errstr);
/*
 * Add one noProxy entry.  pisbx's own form (srt_form 0) is a pattern as
 * in allowedDomains (a suffix after "*." may be one label: "*.internal"),
 * "*", or an address range "10.0.0.0/8", "[fd00::]/8".  The srt / NO_PROXY
 * form (srt_form 1) also reads "example.com" and ".example.com" as the
 * name and every name below it.  0, or -1 with *errstr.
 */
int		 parent_noproxy_add(struct parent_proxy *, const char *,
		    size_t, int srt_form, const char **errstr);
/*
 * Set the credentials "user:password" (never quoted in an error).
 * 0, or -1 with *errstr.
 */
int		 parent_auth_set(struct parent_proxy *, const char *, size_t,
		    const char **errstr);
/*
 * The upstream a connection to host:port goes through, or NULL when it
 * goes direct: loopback addresses, "localhost" and names below it, and
 * what noProxy lists.  tls: a tunnel to port 443 (the https upstream).
 */
const struct parent_url *parent_route(const struct parent_proxy *,
		    const struct host *, uint16_t port, int tls);

/* addr.c */
/*
 * NULL when the address is public; otherwise the name of its special-
 * purpose class ("loopback", "rfc1918", "link-local", ...).
 */
const char	*addr_class_v4(const struct in_addr *);
const char	*addr_class_v6(const struct in6_addr *);
const char	*addr_class(const struct sockaddr *);

/* hint.c */
struct config;
/*
 * What would allow a refused target, as one clause for a person and an
 * agent: 'add "registry.npmjs.org" to network.allowedDomains in FILE',
 * and when a shipped list (conf/domains) has the host among others, that
 * list and its entries.
 * reason is the refusal's access-log reason; conf the config that
 * decided.  Writes "" and returns -1 when no config change allows it
 * (DNS, connect or protocol errors).
 */
int	 policy_hint(const struct config *, const struct host *,
	    uint16_t port, const char *reason, char *buf, size_t len);
/*
 * Where the shipped domain lists (conf/domains) are, for the hints that
 * name them: dir, or NULL to look next to the running program (as
 * installed, or in its source tree).  Read once, at the first hint.
 */
void	 policy_hint_lists_dir(const char *dir);
/*
 * The config file a person edits to change what conf decided: its path,
 * or the per-user file to create when the embedded default decided.
 */
void	 policy_hint_file(const struct config *, char *buf, size_t len);
/*
 * The hint when the upstream proxy refused the CONNECT that carries a
 * forwarded plain-HTTP request to port (httpForwarding "tunnel"): what
 * to change on the gateway, or the key that sends such requests as
 * proxy requests instead.  -1 without an upstream.
 */
int	 policy_hint_parent_tunnel(const struct config *, uint16_t port,
	    char *buf, size_t len);
/* The allow entry to suggest for host:port (the name alone on 80, 443). */
void	 policy_hint_entry(const struct host *, uint16_t port, char *buf,
	    size_t len);

/* explain.c */
/*
 * The --explain answer for one "host[:port]" target as a JSON line
 * (no newline), malloc'ed: {"host":..,"port":..,"decision":..,"reason":..}
 * and, for a review, "reviewer"; unless allowed, a "hint".  Without a
 * reviewer an unlisted target is "deny" with "no-reviewer", as the proxy
 * would answer.
 */
char	*policy_explain(const struct config *, const char *target);

/* config.c */
struct strlist {
	char	**v;
	size_t	  n;
};

enum review_mode {
	REVIEW_NONE,
	REVIEW_COMMAND,
	REVIEW_SOCKET,
	REVIEW_TTY
};
/* A review mode's name: command, socket, tty or none. */
const char	*policy_review_mode_name(enum review_mode);

enum hostipc_mode {
	HOSTIPC_OFF,
	HOSTIPC_ASK
};

/*
 * The layers a policy is built from, strongest first: the managed file
 * (MANAGED_PATH, root's), the user's config ($PISBX_CONFIG, the per-user
 * file, srt's, the embedded default), and what the run names (--config,
 * a supervisor's registration reply).  A lower layer can only tighten
 * what the managed file sets (managed.c, docs/config.md).
 */
enum config_layer {
	LAYER_MANAGED,
	LAYER_USER,
	LAYER_RUN
};
/* "managed", "user" or "run". */
const char	*config_layer_name(enum config_layer);

/* The managed file: fixed, root's, never named by a variable or option. */
#define MANAGED_PATH	"/etc/pisbx/managed.json"

struct managed;

/* network.budget.bytesUpPerHost: at most 1 TiB. */
#define BUDGET_BYTES_MAX	1099511627776LL
#define BUDGET_HOSTS_LISTED	256	/* network.budget.hosts entries */

/* One network.budget.hosts entry: a host's own budget (0: the default). */
struct budget_host {
	char		 host[HOST_TEXT_MAX];	/* canonical, exact */
	uint64_t	 bytes_up;
	int		 connections;
};
/*
 * The budget of one canonical host under conf: its hosts entry's values,
 * else bytesUpPerHost and connectionsPerHost (0: no budget).  host NULL:
 * the defaults.
 */
void	 config_budget(const struct config *, const char *host,
	    uint64_t *bytes_up, int *connections);
/*
 * The key that sets that budget, as a person would raise it:
 * "network.budget.bytesUpPerHost", or "network.budget.hosts[2].bytesUp"
 * (bytes: 1 the bytes budget, 0 the connections budget).
 */
void	 config_budget_key(const struct config *, const char *host,
	    int bytes, char *buf, size_t len);

/*
 * secrets.c (network.tlsTerminate, credentials) and reqrule.c
 * (network.requestRules): what the proxy terminates, which secrets the
 * command sees only as placeholders, and the method/path rules of the
 * terminated hosts.  docs/credentials.md.
 */
#define TLS_MAX_TUNNELS_DEFAULT		256
#define TLS_HANDSHAKE_TIMEOUT_DEFAULT	10000	/* ms */

/* network.tlsTerminate (srt's keys) */
struct tls_terminate {
	char		*ca_cert_path;	/* absolute; both or neither */
	char		*ca_key_path;
	struct pattern	*exclude;	/* excludeDomains */
	size_t		 nexclude;
	struct strlist	 extra_ca;	/* extraCaCertPaths, absolute */
	int		 max_tunnels;	/* maxTunnels */
	int		 handshake_timeout_ms;	/* handshakeTimeoutMs */
	char		*source;	/* "FILE: $.network.tlsTerminate" */
};

enum cred_kind {
	CRED_ENV,		/* credentials.envVars[] */
	CRED_FILE		/* credentials.files[] */
};

enum cred_mode {
	CRED_DENY,		/* unset / unreadable inside */
	CRED_MASK		/* a placeholder inside, the value injected */
};

/* onExtractNoMatch; pisbx's default is CRED_NOMATCH_DENY, srt's warn */
enum cred_nomatch {
	CRED_NOMATCH_DENY,	/* as mode "deny" */
	CRED_NOMATCH_WARN,	/* a warning, the value left as it is */
	CRED_NOMATCH_ERROR	/* the run is refused */
};

/* One credentials.envVars[] or credentials.files[] entry. */
struct cred_entry {
	enum cred_kind	 kind;
	char		*name;		/* variable name, or absolute path */
	char		*source;	/* "FILE: $.credentials.envVars[0]" */
	enum cred_mode	 mode;
	char		*extract;	/* a PCRE2 pattern (group 1), or NULL */
	enum cred_nomatch on_nomatch;
	int		 mask_duplicates;	/* maskDuplicates */
	int		 inject_set;	/* injectHosts given (else allowed) */
	struct pattern	*inject;	/* injectHosts */
	size_t		 ninject;
};

struct credentials {
	struct cred_entry *v;
	size_t		 n;
	int		 allow_plaintext_inject;	/* allowPlaintextInject */
};

/* One "METHOD /path/glob" of a requestRules entry. */
struct req_rule {
	char		*method;	/* "POST", or "*" */
	char		*path;		/* a glob: "*" within a segment, "**" across */
	char		*text;		/* as written */
	char		*source;	/* "FILE: $.requestRules[0].deny[1]" */
};

enum req_unmatched {
	REQ_UNMATCHED_ALLOW,	/* the host's decision (the default) */
	REQ_UNMATCHED_DENY
};

/* One network.requestRules entry: the rules of one host pattern. */
struct req_host {
	struct pattern	 host;
	struct req_rule	*deny;
	size_t		 ndeny;
	struct req_rule	*allow;
	size_t		 nallow;
	enum req_unmatched unmatched;
	char		*source;	/* "FILE: $.network.requestRules[0]" */
	/* "managed", "user" or "run" (config_layer_name), or NULL */
	const char	*layer;
};

enum req_verdict {
	REQ_NO_RULES,		/* no requestRules entry for the host */
	REQ_ALLOW,		/* an allow rule matched */
	REQ_DENY,		/* a deny rule matched, or unmatched: deny */
	REQ_UNMATCHED		/* rules, none matched: the host's decision */
};

/*
 * Whether a tunnel to host:port is terminated: network.tlsTerminate is
 * set and excludeDomains does not match.
 */
int	 config_tls_terminates(const struct config *, const struct host *,
	    uint16_t port);
/*
 * Whether credential entry e may be injected at host:port: its
 * injectHosts match, or (none given) the config's allowedDomains do.
 */
int	 config_cred_injects(const struct config *, const struct cred_entry *,
	    const struct host *, uint16_t port);
/* Whether any requestRules entry matches host:port. */
int	 config_has_request_rules(const struct config *, const struct host *,
	    uint16_t port);
/*
 * The request rules' verdict on method and path (a request_path_canon
 * path) at host:port: the host's deny rules first, then its allow rules,
 * then its "unmatched".  *matched: the deciding rule (NULL when none
 * matched); *entry: the host's entry (NULL for REQ_NO_RULES).  A deny
 * rule's method and path match case-insensitively, an allow rule's
 * exactly.
 */
enum req_verdict config_request_rule(const struct config *,
	    const struct host *, uint16_t port, const char *method,
	    const char *path, const struct req_rule **matched,
	    const struct req_host **entry);
/*
 * The path a request target names, for the rules: the query dropped,
 * %XX of unreserved characters decoded.  -1 with *errstr when the target
 * could name another path to the server than as spelled (a dot segment,
 * "//", "\", an encoded "/", "\", "." or control character, a NUL, not
 * origin-form): such a request is refused where rules apply.
 */
int	 request_path_canon(const char *target, size_t len, char *out,
	    size_t outlen, const char **errstr);
/*
 * Whether two configs agree on network.tlsTerminate, and on credentials:
 * keys fixed while a command runs (a --control-fd line or a reload that
 * changes one is refused).
 */
int	 config_tls_same(const struct config *, const struct config *);
/*
 * Whether they agree on what is made once, at start: network.tlsTerminate
 * set or not, its CA (caCertPath, caKeyPath) and its roots
 * (extraCaCertPaths).  excludeDomains, maxTunnels and handshakeTimeoutMs
 * are read per connection: pisbx-proxy's reload takes them.
 */
int	 config_tls_ca_same(const struct config *, const struct config *);
int	 config_creds_same(const struct config *, const struct config *);
/*
 * Where requestRules recipes (NAME -> DIR/NAME.json) are: dir, or NULL
 * to look next to the running program, as the shipped domain lists are
 * found (../share/pisbx/rules as installed, conf/rules in the source
 * tree).
 */
void	 policy_rules_dir(const char *dir);

/* Every error found, each "FILE: $.json.path: message (value)". */
struct config_errors {
	char	**msg;
	size_t	  n;
};

struct config {
	char		*path;		/* file read, or "(embedded default)" */
	enum config_layer layer;	/* of path: user or run */
	struct managed	*managed;	/* MANAGED_PATH's rules, or NULL */
	struct policy	*policy;
	char		*policy_from;	/* who else set the policy, or NULL */
	/* ... the file it is written in (a supervisor's config), or NULL */
	char		*policy_file;
	/*
	 * Remarks for --check -v, "FILE: $.path: ...": the srt and
	 * pi-sandbox keys accepted without effect here, and why.
	 */
	struct config_errors notes;

	/* network */
	int		 allow_all_unix_sockets;
	int		 allow_unix_datagram_sockets; /* and every send checked
						   by the guard */
	int		 allow_nested_userns;	/* srt's allowNestedUserNamespaces */
	int		 require_namespaces;	/* requireNamespaces: pisbx-run
						   refuses to run without */
	struct strlist	 allow_unix_sockets;	/* absolute socket paths */
	int		 strict_allowlist;	/* srt: no review for others */
	struct parent_proxy *parent;	/* network.parentProxy, or NULL */
	/*
	 * network.budget: per client and canonical host, the bytes sent up
	 * and the connections allowed; 0 is no budget.
	 */
	uint64_t	 budget_bytes_up;	/* bytesUpPerHost */
	int		 budget_connections;	/* connectionsPerHost */
	struct budget_host *budget_hosts;	/* network.budget.hosts */
	size_t		 nbudget_hosts;

	/* proxy */
	struct strlist	 listen;	/* "127.0.0.1:3128", "[::1]:0", "/path" */
	int		 max_connections;
	int		 max_client_connections;	/* 0: the default */
	int		 connect_timeout_ms;
	int		 idle_timeout_ms;
	int		 header_timeout_ms;
	char		*access_log;		/* absolute path, or NULL */
	int		 access_log_text;	/* format "text" */
	char		*metrics_listen;	/* "ip:port", or NULL */
	int		 metrics_non_loopback;	/* allowNonLoopback */
	char		*syslog_address;	/* "ip:port" or a path, or NULL */
	int		 syslog_tcp;		/* address is "ip:port" */
	char		*syslog_app;		/* appName, or NULL */
	int		 syslog_facility;	/* 0..23 */
	int		 syslog_queue_max;	/* records held while down */

	/* resolver */
	struct strlist	 resolver_servers;	/* "ip:port" */
	char		*hosts_file;
	int		 resolver_timeout_ms;

	/* review */
	enum review_mode review_mode;
	struct strlist	 review_command;
	int		 review_timeout_ms;
	char		*review_socket;
	char		*review_capability_env;
	int		 review_max_inflight;

	/* filesystem (pisbx-run) */
	struct strlist	 deny_read;
	struct strlist	 allow_read;
	struct strlist	 allow_write;
	struct strlist	 deny_write;
	int		 allow_git_config;
	int		 fs_deny_read_set;	/* denyRead given (else: home) */
	int		 fs_allow_write_set;	/* allowWrite given */
	unsigned int	 fs_toolchains;	/* 1 << enum fs_toolchain: shown */
	unsigned int	 fs_caches;	/* 1 << enum fs_cache: wired */

	/* TLS termination, credentials, request rules (secrets.c, reqrule.c) */
	struct tls_terminate *tls;		/* network.tlsTerminate, or NULL */
	struct credentials creds;
	struct req_host	*req_hosts;		/* network.requestRules */
	size_t		 nreq_hosts;

	/* hostIPC (pisbx-run) */
	enum hostipc_mode hostipc_mode;
	struct strlist	 hostipc_prefixes;
	int		 hostipc_retry;

	/* valid, but cannot do what it seems to: "FILE: $.path: why" */
	struct strlist	 warnings;
};

/*
 * filesystem.toolchains: the places in the hidden home re-exposed, read-
 * only, where toolchains and their non-secret settings live; and
 * filesystem.caches: the writable caches under ~/.cache/pisbx that
 * package managers are pointed at.  Both default to every entry; the
 * paths, variables and reasons are the launcher's (docs/filesystem.md).
 */
enum fs_toolchain {
	TOOLCHAIN_RUSTUP, TOOLCHAIN_CARGO, TOOLCHAIN_PYENV, TOOLCHAIN_NVM,
	TOOLCHAIN_VOLTA, TOOLCHAIN_BUN, TOOLCHAIN_DENO, TOOLCHAIN_GO,
	TOOLCHAIN_LOCAL, TOOLCHAIN_MISE, TOOLCHAIN_ASDF, TOOLCHAIN_SDKMAN,
	TOOLCHAIN_GIT, TOOLCHAIN_NPM, TOOLCHAIN_PIP,
	TOOLCHAIN_MAX
};
enum fs_cache {
	CACHE_NPM, CACHE_YARN, CACHE_PIP, CACHE_UV, CACHE_CARGO, CACHE_GO,
	CACHE_MAVEN, CACHE_GRADLE, CACHE_BUN, CACHE_DENO, CACHE_XDG,
	CACHE_MAX
};
/* The config's names, indexed by the enums (NULL-terminated). */
extern const char *const config_toolchain_names[];
extern const char *const config_cache_names[];

/* The embedded default config (conf/default.json), NUL-terminated. */
extern const char pisbx_default_config[];

/*
 * Which config to trust: the --config argument, then $PISBX_CONFIG, then
 * $XDG_CONFIG_HOME/pisbx/config.json (or ~/.config/...) if it exists,
 * then srt's ~/.srt-settings.json if it exists.  Returns a malloc'ed
 * path, or NULL for the embedded default.
 */
char		*config_find(const char *cli_path);
/*
 * The per-user config file config_find looks for, whether or not it
 * exists: $XDG_CONFIG_HOME/pisbx/config.json or ~/.config/... (NULL when
 * neither is absolute).
 */
char		*config_user_path(void);
/*
 * Load a file, or the embedded default when path is NULL, as a layer
 * (LAYER_USER or LAYER_RUN), under the managed file when there is one:
 * its deny entries first, its ceiling on the policy, every loosening of
 * its rules an error naming both files.  A managed file that exists but
 * cannot be trusted (not root's, writable by others, on such a path) or
 * read is an error too.
 */
struct config	*config_load_layer(const char *path, enum config_layer,
		    struct config_errors *);
/* config_load_layer(path, LAYER_USER, errs). */
struct config	*config_load(const char *path, struct config_errors *);
/*
 * Load from memory; name is used in messages.  A pisbx-run --control-fd
 * line is loaded here, by the same parser as a file (config_parse), so
 * every check of the loader holds for it.
 */
struct config	*config_load_buffer(const char *buf, size_t len,
		    const char *name, struct config_errors *);
/*
 * The same as a layer; both load under the managed file, like
 * config_load_layer.  A --control-fd line is LAYER_RUN.
 */
struct config	*config_load_buffer_layer(const char *buf, size_t len,
		    const char *name, enum config_layer,
		    struct config_errors *);
/*
 * Validate a "network" object given as JSON text (the supervisor's
 * registration reply) exactly like the config file's, into a policy of
 * the run layer, under the managed file as config_load_layer puts it.
 */
struct policy	*config_network_policy(const char *json, size_t len,
		    const char *name, struct config_errors *);
void		 config_free(struct config *);
/*
 * Whether the len bytes at s are all printable ASCII (0x20..0x7e): what
 * a config or a log record may hold where pisbx shows it as it is.
 */
int		 config_printable(const char *s, size_t len);

/* managed.c */
/*
 * What the managed file says of a lower layer's filesystem entries that
 * name paths relative to the project: the check config_load_layer makes
 * for absolute and "~" entries, made again with every entry resolved
 * (proj and home absolute).  0, or -1 with the errors in errs.
 */
int		 config_managed_paths(const struct config *, const char *proj,
		    const char *home, struct config_errors *);
/*
 * Whether an absolute path lies at or below a managed denyRead path (or,
 * with write, a denyWrite one too): what pisbx-run re-exposes on its own
 * (toolchains, caches) is left alone there.
 */
int		 config_managed_denied(const struct config *, const char *path,
		    const char *home, int write);
/*
 * Whether the managed file lets reviews go to mode ("command", "socket",
 * "tty", "supervisor"): 0, or -1 with why in err, naming the file.
 */
int		 config_managed_review(const struct config *, const char *mode,
		    char *err, size_t errlen);
/*
 * The merged policy as --check -v lists it, one line per entry with its
 * source and layer: "deny *:22 from FILE: $.network.deniedDomains[0]
 * (managed)", the ceiling, the filesystem lists, the managed file's
 * limits and refusals.  0, or -1 out of memory.
 */
int		 config_walk(const struct config *,
		    void (*cb)(const char *line, void *), void *arg);
void		 config_errors_clear(struct config_errors *);
void		 strlist_free(struct strlist *);

/* replay.c */
#define REPLAY_LINE_MAX		65536	/* octets of one access-log line */
#define REPLAY_PATH_MAX		2048	/* a request record's path */

/* One decision record of an access log (docs/access-log.md). */
struct replay_record {
	char		 proto[16];
	struct host	 host;
	int		 has_host;	/* 0: an invalid-host record */
	uint16_t	 port;
	int		 allow;		/* decision */
	char		 reason[TARGET_TEXT_MAX + 32];
	char		 addr[64];	/* "" when not dialled */
	int		 own_listener;	/* error: "... the proxy's own listener" */
	int		 parent;	/* through an upstream proxy */
	/*
	 * A request record (a terminated tunnel's request): its method
	 * and path (query keys only, as logged); reason "request-rule:
	 * RULE" when a rule refused it, else the allow rule that let it
	 * by, or "no-rule".
	 */
	int		 request;
	char		 method[32];
	char		 path[REPLAY_PATH_MAX];
};

/* How a record's re-decision compares with the logged one. */
enum replay_class {
	REPLAY_UNCHANGED,
	REPLAY_NEWLY_REFUSED,
	REPLAY_NEWLY_ALLOWED,
	REPLAY_NOW_REVIEWED,
	REPLAY_NO_LONGER_REVIEWED,
	REPLAY_OTHER_RULE,	/* same decision, another reason */
	REPLAY_NOT_POLICY,	/* invalid-host, limits, sni-mismatch */
	REPLAY_NCLASS
};

/* One distinct change: target, old and new outcome, how many records. */
struct replay_change {
	enum replay_class cls;
	/* "host:port proto", a request's with " METHOD path" */
	char		 target[TARGET_TEXT_MAX + 48 + REPLAY_PATH_MAX];
	char		 from[TARGET_TEXT_MAX + 48];	/* "deny no-reviewer" */
	char		 to[TARGET_TEXT_MAX + 48];
	uint64_t	 count;
};

struct replay;

/*
 * Parse one access-log line (without its newline): 1 a decision record
 * in *r, 0 a close record, -1 with *errstr for anything else (not JSON,
 * a field missing or of the wrong type, an unknown reason, a host that
 * is not canonical, over REPLAY_LINE_MAX octets).
 */
int		 replay_parse(const char *line, size_t len,
		    struct replay_record *r, const char **errstr);
/*
 * Re-decide a record under conf as the proxy would, before and without
 * DNS: the new outcome ("allow allow-list:x", "deny no-reviewer",
 * "review (command)") into to, and how it compares with the old one.
 */
enum replay_class replay_decide(const struct config *,
		    const struct replay_record *r, char *to, size_t len);
const char	*replay_class_name(enum replay_class);
/* A tally of changes holding at most max distinct ones. */
struct replay	*replay_new(size_t max);
void		 replay_free(struct replay *);
/* Count one re-decided record: 0, or -1 out of memory. */
int		 replay_add(struct replay *, const struct replay_record *,
		    enum replay_class, const char *to);
/*
 * The distinct changes sorted by class and target (free the array, not
 * its elements); *unlisted: changed records beyond max; counts: records
 * per class.  NULL when out of memory.
 */
const struct replay_change **replay_changes(const struct replay *,
		    size_t *n, uint64_t *unlisted,
		    uint64_t counts[REPLAY_NCLASS]);

/* env.c */
/*
 * Take the secret in environment variable name: its value (kept for the
 * process's life, and returned again by later calls), the bytes
 * overwritten where /proc/PID/environ shows them and the variable
 * removed, so no child inherits it.  NULL when it is not set (or out of
 * memory).
 */
const char	*policy_env_take(const char *name);

#endif
