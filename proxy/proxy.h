/*
 * proxy/: the event-driven filtering proxy.  This header is the whole of
 * what the launcher and pisbx-proxy's main use; the proxy's internals
 * (connection state machine, protocols, relay, DNS, access log) are
 * declared in proxy_int.h.
 */
#ifndef PISBX_PROXY_H
#define PISBX_PROXY_H

#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

struct event_base;
struct config;
struct cred_table;
struct proxy;
struct tlsmod_ca;
struct tlsmod_ops;

enum log_format {
	LOG_FORMAT_JSON,
	LOG_FORMAT_TEXT
};

/*
 * One refused connection, or an allowed one that could not be reached,
 * as the access log and the 403/502 say it.
 */
struct proxy_refusal {
	const char	*host;		/* canonical */
	unsigned int	 port;
	const char	*proto;		/* "connect", "http", "socks5" */
	const char	*reason;	/* the access log's reason */
	const char	*detail;	/* the access log's error, or NULL */
	const char	*hint;		/* what would allow it, or NULL */
	int		 unreachable;	/* dns-, connect-, parent-error */
	const char	*credential;	/* credential-leak: "$GH_TOKEN" */
};

struct proxy_opts {
	const char	*access_log;	/* path, "-" for stdout, NULL for none */
	enum log_format	 log_format;
	const char	*label;		/* workerId in reviews; client label */
	const char	*cwd;		/* shown to reviewers */
	const char	*capability;	/* supervisor capability, or NULL */
	const char	*command;	/* the command run (the tty shows it) */
	/*
	 * Told of every connection the policy (or the upstream proxy)
	 * refused, and of every allowed one that could not be reached
	 * (pisbx-run's summary).
	 */
	void		(*refused)(const struct proxy_refusal *, void *);
	void		*refused_arg;
	/*
	 * Told once per request into which masked credentials were put
	 * (placeholders swapped for values: a terminated tunnel's request,
	 * or plain HTTP with credentials.allowPlaintextInject), once for
	 * each credential that went in: its name ("$GH_TOKEN", never a
	 * value) and the host and port it went to (pisbx-run's summary).
	 */
	void		(*injected)(const char *name, const char *host,
			    unsigned port, void *arg);
	void		*injected_arg;
	/*
	 * A reload that is taken is said without -v (pisbx-proxy's SIGHUP);
	 * pisbx-run's, on its command's stderr, only with -v.
	 */
	int		 reload_said;
	/*
	 * Every client is one (pisbx-run: the listeners are the sandbox's,
	 * and the command picks its source address -- 127.0.0.2, ... -- so
	 * an address would be a fresh budget and client limit for the
	 * asking).  maxClientConnections and network.budget count the run.
	 */
	int		 one_client;
	/*
	 * TLS termination (network.tlsTerminate): the module and the CA
	 * the run made (pisbx-run), or NULL: proxy_new loads the module
	 * and makes the CA from the config (pisbx-proxy, which needs
	 * caCertPath and caKeyPath).  The proxy frees neither.
	 */
	const struct tlsmod_ops *tls;
	struct tlsmod_ca *tls_ca;
	/* The run's masked credentials (pisbx-run), or NULL; not freed. */
	const struct cred_table *creds;
};

/* replay.c */
#define REPLAY_EXIT_SAME	0
#define REPLAY_EXIT_CHANGED	1
#define REPLAY_EXIT_TROUBLE	2
/*
 * --replay: re-decide every decision record of the JSON access log at
 * path ("-": standard input) under conf and print the changes and a
 * summary on standard output, unreadable lines on standard error.
 * Returns 0 (no change), 1 (changes) or 2 (the log could not be read
 * whole).
 */
int		 replay_run(const struct config *, const char *path,
		    int json);

/* check.c: --check and --explain, for pisbx-proxy and pisbx-run alike */
/*
 * Load the trusted config at path (NULL: the embedded default) as a
 * layer, under the managed file; every error on stderr.  NULL on
 * failure.
 */
struct config	*check_load(const char *path, enum config_layer);
/*
 * --check: "FILE: configuration OK" and, with verbose, every entry of
 * the merged policy with its source and layer (config_walk) on stdout,
 * the notes on stderr.  0, or -1 out of memory.
 */
int		 check_print(const struct config *, int verbose);
/* --explain: one JSON line per target (policy_explain).  0 or -1. */
int		 check_explain(const struct config *, char *const *targets,
		    size_t n);

/* An event loop for a proxy (epoll changes applied once per turn). */
struct event_base *proxy_base_new(void);
/* A proxy on base; it takes ownership of conf. */
struct proxy	*proxy_new(struct event_base *, struct config *,
		    const struct proxy_opts *);
/*
 * Bind and listen on "ip:port", "[v6]:port" or a Unix-socket path; port 0
 * picks one.  The bound address is written to bound (may be NULL).
 */
int		 proxy_listen(struct proxy *, const char *addr,
		    char *bound, size_t boundlen);
/* Serve an already-listening socket (the launcher's hand-off). */
int		 proxy_listen_fd(struct proxy *, int fd);
/*
 * Swap in a new config (SIGHUP, pisbx-run --control-fd); the proxy takes
 * ownership.  Every connection the old config allowed is decided again:
 * one the new config refuses is closed (end "policy-changed").  0, or -1
 * when the new config could not be set up (it is freed, the old one
 * stays).
 */
int		 proxy_reload(struct proxy *, struct config *);
/* The config in force (the proxy owns it; valid until the next reload). */
const struct config *proxy_config(const struct proxy *);
/*
 * The approvals in force for host:port (canonical) that a reviewer gave
 * beyond one connection, as JSON objects separated by commas into buf:
 * {"protocol":"connect","scope":"run"}.  Their number, or -1 when buf
 * is too small.
 */
int		 proxy_grants_json(const struct proxy *, const char *host,
		    uint16_t port, char *buf, size_t len);
/* Reopen the access log (SIGHUP, logrotate). */
int		 proxy_reopen_log(struct proxy *);
/*
 * Raise the soft open-file limit to the hard one, and warn when
 * proxy.maxConnections cannot be served within it (each connection holds
 * two descriptors, a tunnel's spliced directions a pipe each).
 */
void		 proxy_nofile_prepare(struct proxy *);
/* Stop accepting and close every connection, writing close records. */
void		 proxy_stop(struct proxy *);
void		 proxy_free(struct proxy *);

#endif
