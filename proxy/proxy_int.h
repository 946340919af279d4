/*
 * proxy/ internals: the proxy object, listeners, the connection state
 * machine, the protocols (HTTP CONNECT and forwarding, SOCKS5), the relay
 * and async DNS.  Prototypes grouped by file.  The pure parsers are
 * declared in parse.h and the access log in accesslog.h, which need none
 * of this.
 */
#ifndef PISBX_PROXY_INT_H
#define PISBX_PROXY_INT_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "policy/policy.h"
#include "approval/approval.h"
#include "proxy/accesslog.h"
#include "proxy/parse.h"
#include "proxy/proxy.h"

struct bufferevent;
struct evbuffer;
struct event;
struct evconnlistener;
struct reviewer;
struct review;

/* ---- dns.c ---- */

#define DNS_MAX_ADDRS	16

struct dns;
struct dns_query;

/* Called once per lookup, never from inside dns_lookup, never after cancel. */
typedef void (*dns_cb)(const struct sockaddr_storage *addrs, size_t n,
	    const char *err, void *arg);

struct dns	*dns_new(struct event_base *, const struct config *,
		    char *err, size_t errlen);
void		 dns_free(struct dns *);
/* Whether this config needs a different resolver than d was made with. */
int		 dns_differs(const struct dns *, const struct config *);
struct dns_query *dns_lookup(struct dns *, const char *name, uint16_t port,
		    dns_cb, void *arg);
void		 dns_cancel(struct dns_query *);
/*
 * The addresses the hosts file (hosts_file, else /etc/hosts) gives name,
 * read now, from the local file only: what c-ares answers first, as its
 * lookups start there.  At most max in out; the count (0: not named, or
 * the file cannot be read).
 */
size_t		 dns_hosts_addrs(const char *hosts_file, const char *name,
		    struct sockaddr_storage *out, size_t max);

/* ---- proxy.c, listen.c, conn.c, authorise.c, dial.c ---- */

enum conn_state {
	CONN_SNIFF,		/* waiting for the first byte */
	CONN_READ_REQUEST,	/* protocol head / greeting */
	CONN_AUTHORISE,
	CONN_REVIEW,
	CONN_RESOLVE,
	CONN_CONNECT,
	CONN_RELAY,
	CONN_CLOSING		/* flushing a last reply */
};

enum conn_proto {
	PROTO_NONE,
	PROTO_CONNECT,
	PROTO_HTTP,
	PROTO_SOCKS5
};

/* Why a connection could not be set up; each protocol maps it. */
enum conn_err {
	CERR_DENY,		/* 403 / 0x02 */
	CERR_INVALID,		/* 400 / 0x02 */
	CERR_DNS,		/* 502 / 0x04 */
	CERR_REFUSED,		/* 502 / 0x05 */
	CERR_NET_UNREACH,	/* 502 / 0x03 */
	CERR_HOST_UNREACH,	/* 502 / 0x04 */
	CERR_TIMEOUT,		/* 504 / 0x06 */
	CERR_BUSY,		/* 503 / 0x01: over a connection limit */
	CERR_FAILURE		/* 502 / 0x01 */
};

/* A config generation: kept alive while a review started under it runs. */
struct pgen {
	struct config	*conf;
	struct reviewer	*rv;
	int		 refs;
};

struct listener {
	TAILQ_ENTRY(listener)	 entry;
	struct proxy		*px;
	struct evconnlistener	*lev;
	struct event		*retry;		/* after EMFILE */
	struct sockaddr_storage	 ss;
	socklen_t		 sslen;
	int			 v6only;	/* IPv6: IPV6_V6ONLY set */
	char			 name[TARGET_TEXT_MAX + 108];
	char			*unlink_path;	/* a Unix socket we created */
};

struct cred;
struct http_conn;
struct parent_conn;
struct relay;
struct term;
struct budget;
struct budget_acct;

/* What one client holds: its address (or uid) and its connections. */
#define CLIENT_BUCKETS		256

struct client_slot {
	LIST_ENTRY(client_slot)	 entry;
	int			 family;	/* AF_INET, AF_INET6, AF_UNIX */
	uint8_t			 key[16];	/* address, /64, or uid */
	int			 n;		/* connections it holds */
};

/*
 * Connections over a limit are held only to answer 503 / SOCKS5 0x01:
 * at most this many at once, each for at most CONN_REFUSE_TIMEOUT_MS.
 */
#define CONN_REFUSING_MAX	64
#define CONN_REFUSE_TIMEOUT_MS	5000

#define CONN_MAX_ADDRS	DNS_MAX_ADDRS

struct conn {
	TAILQ_ENTRY(conn)	 entry;
	struct proxy		*px;
	uint64_t		 id;
	enum conn_state		 state;
	enum conn_proto		 proto;
	struct bufferevent	*client;
	struct bufferevent	*upstream;
	struct client_slot	*slot;		/* NULL while refusing */
	const char		*refuse;	/* over a limit: the reason */
	char			 client_name[400];
	char			*user;		/* SOCKS5 user name (logged) */
	struct timeval		 start;
	struct timeval		 last_active;
	struct event		*timer;
	const char		*closing_end;	/* CONN_CLOSING */

	/* the target */
	int			 have_target;
	struct host		 host;
	uint16_t		 port;
	char			 addr[64];	/* dialled "ip:port" */
	struct sockaddr_storage	 addrs[CONN_MAX_ADDRS];
	size_t			 naddrs;
	size_t			 addr_i;
	int			 connect_fd;	/* in CONN_CONNECT */
	struct event		*connect_ev;
	int			 connect_errno;
	int			 connect_timedout;
	struct timeval		 connect_start;	/* of the current attempt */
	int			 redial;	/* conn_redial: decision logged */
	struct parent_conn	*parent;	/* the route via the upstream proxy */
	int			 parent_dial;	/* dialling the upstream proxy */
	int			 decision_wait;	/* logged at its answer (HTTP) */

	/* the decision */
	const char		*decision;	/* "allow", "deny", NULL */
	char			 reason[TARGET_TEXT_MAX + 32];
	char			*rule_source;	/* the deciding entry's, malloc'ed */
	const char		*rule_layer;	/* its layer (static), or NULL */
	char			*error;		/* detail, malloc'ed */
	const char		*credential;	/* credential-leak: the table's name */
	const struct cred	*cred_auth;	/* one in the SOCKS5 user/password */
	struct review_grant	 grant;		/* what review:allow covers */
	struct pgen		*gen;		/* held during a review */
	struct review		*review;
	struct event		*gone_ev;	/* REVIEW: client hung up */
	struct dns_query	*dnsq;

	uint64_t		 bytes_up;
	uint64_t		 bytes_down;
	struct budget_acct	*budget;	/* its host's, or NULL */
	struct budget_acct	*budget_ask;	/* the decision's, or NULL */
	const char		*budget_key;	/* past it: under review */
	uint64_t		 budget_limit;
	uint64_t		 budget_used;

	struct relay		*relay;		/* CONNECT, SOCKS5 tunnels */
	struct term		*term;		/* a terminated tunnel (term.c) */
	int			 terminated;	/* its TLS is ours: logged */
	struct timeval		 review_t0;	/* the review was asked */

	/* protocol */
	struct http_conn	*http;
	int			 socks_step;	/* greeting, auth, request */
};

struct proxy {
	struct event_base	*base;
	struct pgen		*gen;
	struct dns		*dns;
	struct accesslog	*alog;
	char			*access_log;
	enum log_format		 log_format;
	char			*label;
	char			*cwd;
	char			*capability;
	void			(*refused)(const struct proxy_refusal *,
				    void *);
	void			*refused_arg;
	void			(*injected)(const char *, const char *,
				    unsigned, void *);
	void			*injected_arg;
	int			 reload_said;	/* proxy_opts' */
	int			 one_client;	/* proxy_opts' */
	const struct cred_table	*creds;		/* proxy_opts', or NULL */
	char			*command;	/* the tty shows it */
	struct review_grant	*grants;	/* scope run/worker approvals */
	enum review_scope	*grant_scope;	/* each one's scope */
	size_t			 ngrants;
	TAILQ_HEAD(listener_head, listener) listeners;
	TAILQ_HEAD(, conn)	 conns;
	size_t			 nconns;	/* all, refusing ones too */
	size_t			 nrefusing;	/* held to answer "not now" */
	size_t			 npeak;		/* most since a trim */
	unsigned long long	 dropped;	/* unanswered, unsaid */
	unsigned long long	 dropped_total;
	const char		*dropped_why;	/* the limit */
	unsigned long long	 nofd;		/* 503 at EMFILE, unsaid */
	unsigned long long	 nofd_total;
	struct event		*report_ev;	/* says them each second */
	int			 spare_fd;	/* for a 503 at EMFILE */
	LIST_HEAD(, client_slot) clients[CLIENT_BUCKETS];
	struct metrics		*metrics;	/* proxy.metrics, or NULL */
	struct budget		*budget;	/* network.budget accounts */
	uint64_t		 next_id;
	int			 stopping;
	/* network.tlsTerminate: the module and the CA (term.c) */
	const struct tlsmod_ops	*tls;
	struct tlsmod_ca	*tls_ca;
	int			 tls_ca_ours;	/* made here: freed here */
	size_t			 nterm;		/* tunnels terminated now */
};

/* proxy.c */
/* Drop a reference to a config generation; the last one frees it. */
void	 pgen_unref(struct pgen *);
/* Approvals of this process (scope run or worker), at most PROXY_GRANTS. */
#define PROXY_GRANTS	1024
void	 proxy_grant_add(struct proxy *, const struct review_request *,
	    enum review_scope);
int	 proxy_grant_covers(const struct proxy *,
	    const struct review_request *);

/* listen.c */
/* Stop serving a listener and free it (and its Unix socket file). */
void	 listener_free(struct listener *);
/* The connections one client may hold (proxy.maxClientConnections). */
int	 proxy_client_limit(const struct config *);
/*
 * The proxy's spare descriptor (px->spare_fd): opened when it is not,
 * so that a client can be told 503 when the others are all in use.
 */
void	 listener_spare(struct proxy *);
/* Say (now, then once a second) what overload closed or refused. */
void	 listener_report(struct proxy *);
/* The totals of listener_report, when the proxy is freed. */
void	 listener_report_total(struct proxy *);
/* Give back a connection's hold on its client slot. */
void	 client_slot_put(struct proxy *, struct client_slot *);
/*
 * Whether a connection to sa would reach one of the proxy's own
 * listeners, whatever address spells it (0.0.0.0, 127.0.0.0/8 and the
 * interfaces' addresses for a wildcard listener, IPv4-mapped IPv6).
 */
int	 proxy_own_addr(struct proxy *, const struct sockaddr *);

/* conn.c */
/*
 * A new client connection accepted on l: start reading its first bytes.
 * It holds slot; refuse (with detail) is the limit it is over, if any:
 * then its request is read only to be answered 503 / SOCKS5 0x01.
 */
void	 conn_new(struct listener *, int fd, struct sockaddr *, socklen_t,
	    struct client_slot *slot, const char *refuse,
	    const char *detail);
/*
 * The header deadline of a new connection: proxy.headerTimeoutMs while
 * at most half the slots are used, then shorter as they fill, down to
 * CONN_HEADER_MIN_MS when full.
 */
#define CONN_HEADER_MIN_MS	2000
int	 conn_header_deadline(const struct proxy *);
/*
 * Full: close the oldest connection still without a complete request
 * head or SOCKS5 handshake (end "header-shed"), so that a new client
 * gets its slot.  1 when one was closed, 0 when there is none.
 */
int	 conn_shed_oldest(struct proxy *);
/* Free everything the connection owns and write its close record. */
void	 conn_close(struct conn *, const char *end);
/* The protocol's name, as logged and shown to reviewers. */
const char *conn_proto_name(enum conn_proto);
/* The fields a connection's decision and close records share. */
void	 conn_record(struct conn *, struct alog_rec *);
/* Flush what is queued to the client, then close. */
void	 conn_close_after_flush(struct conn *, const char *end);
/* Mark activity for the idle timeout. */
void	 conn_touch(struct conn *);
/* Arm the connection timer (header/idle/flush timeouts). */
void	 conn_timer_set(struct conn *, int ms);
const struct config *conn_config(const struct conn *);

/* authorise.c */
/* Protocol handler has set host/port/proto: run policy, review, DNS, connect. */
void	 conn_authorise(struct conn *);
/* Write the connection's decision record. */
void	 conn_log_decision(struct conn *);
/*
 * The detail a connection's records and answers carry ("error"), from a
 * printf format; it replaces any earlier one.
 */
void	 conn_error(struct conn *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Record a decision; reason is copied, detail (may be NULL) too. */
void	 conn_decide(struct conn *, int allow, const char *reason,
	    const char *detail);
/*
 * What would allow the connection's refusal (c->reason), as the 403/502
 * body and pisbx-run's summary say it: 0, or -1 and "" when nothing in
 * a config would.
 */
int	 conn_hint(const struct conn *, char *, size_t);
/* Deny, log and answer. */
void	 conn_deny(struct conn *, const char *reason, const char *detail,
	    enum conn_err);
/* Map a failure to the protocol's answer (http_fail, socks5_fail). */
void	 conn_fail(struct conn *, enum conn_err);
/*
 * A credential's placeholder found where it may not go (where: "in the
 * request headers"): the refusal is decided, logged with the
 * credential's name and told to proxy_opts.refused; the caller answers
 * or closes (end "credential-leak").
 */
void	 conn_cred_leak(struct conn *, const struct cred *, const char *where);
/*
 * conn_cred_leak; why, when not NULL: the credential may go to the
 * host, but its value could not stand where its placeholder stood
 * (cred_unfit_why).
 */
void	 conn_cred_refuse(struct conn *, const struct cred *,
	    const char *where, const char *why);
/*
 * Tell proxy_opts.injected of the credentials marked in used (CRED_MAX
 * flags, by table index) that went to conn's host in one request.
 */
void	 conn_cred_injected(struct conn *, const uint8_t *used);

/* dial.c */
/* An allowed target: its addresses (a literal, or DNS), then dial. */
void	 conn_resolve(struct conn *);
/* conn_addr_ok for a literal target's one address. */
int	 conn_literal_ok(struct conn *, char *why, size_t whylen);
/* Dial the checked addresses in c->addrs, the first one first. */
void	 conn_dial(struct conn *);
/* The target (or the tunnel to it) is up: log the allow, go on. */
void	 conn_connected(struct conn *);
/* Dial the current target's checked addresses again (HTTP retry). */
void	 conn_redial(struct conn *);

/* ---- budget.c ---- */

/*
 * Clients whose budgets are kept apart, and hosts per client; past them
 * new clients share one table and new hosts one account.
 */
#define BUDGET_CLIENTS_MAX	256
#define BUDGET_HOSTS_MAX	1024

/* Whether conf sets a budget. */
int	 budget_enabled(const struct config *);
/*
 * The account of slot's client for the canonical host, made when new
 * (it lives as long as the proxy).  NULL: out of memory.
 */
struct budget_acct *budget_acct_get(struct proxy *, const struct config *,
	    const struct client_slot *, const char *host);
/*
 * The budget a is past under conf ("connectionsPerHost",
 * "bytesUpPerHost") with its limit and what was used; NULL when none.
 */
const char *budget_over(const struct config *, const struct budget_acct *,
	    uint64_t *limit, uint64_t *used);
/* The access log's reason for a budget's key. */
const char *budget_reason(const char *key);
/* An approval of a budget review: one budget more, or (run) none. */
void	 budget_raise(struct budget_acct *, int run);
/* A reload: every approval that raised or lifted a budget ends. */
void	 budget_reload(struct proxy *);
/* An allowed connection counts against a (may be NULL). */
void	 budget_take(struct conn *, struct budget_acct *);
/* Bytes the connection may still send up: UINT64_MAX without a budget. */
uint64_t budget_left(const struct conn *);
/* Count n bytes sent up. */
void	 budget_spend(struct conn *, uint64_t n);
/* The next byte up crosses the bytes budget: log, tell, close. */
void	 budget_cross(struct conn *);
/* Free every account (proxy_free). */
void	 budget_free(struct proxy *);

/* ---- metrics.c ---- */

struct metrics;

int	 metrics_open(struct proxy *, const struct config *);
void	 metrics_free(struct proxy *);
const char *metrics_addr(const struct proxy *);
/*
 * The hooks, each a no-op without proxy.metrics: a connection accepted,
 * a tunnel started (+1) or freed (-1), a review asked and answered, a
 * decision record and a close record written.
 */
void	 metrics_accept(struct proxy *);
void	 metrics_tunnel(struct proxy *, int);
/* A connection closed at its bytes budget. */
void	 metrics_budget(struct proxy *);
void	 metrics_review_begin(struct conn *);
void	 metrics_review_end(struct conn *);
void	 metrics_decision(struct proxy *, enum conn_proto,
	    const struct alog_rec *);
void	 metrics_close(struct proxy *, enum conn_proto,
	    const struct alog_rec *);

/* ---- parent.c ---- */

/* An answer to CONNECT longer than this is refused. */
#define PARENT_HEAD_MAX		(16 * 1024)

/*
 * The route of the connection's current target under the current
 * config: 1 through the upstream proxy (held until the next choice or
 * the close), 0 direct, -1 out of memory.
 */
int	 parent_conn_select(struct conn *);
/*
 * Whether the kept-alive upstream connection may carry a request for
 * host:port: the same route under the current config.
 */
int	 parent_conn_keeps(struct conn *, const struct host *, uint16_t);
/* The upstream proxy's name to resolve, or NULL for an address. */
const char *parent_conn_name(const struct conn *);
uint16_t parent_conn_port(const struct conn *);
/* Its addresses (from DNS, or none for a literal): dial them. */
void	 parent_conn_addrs(struct conn *, const struct sockaddr_storage *,
	    size_t, const char *err);
/* No address of the upstream proxy could be connected to. */
void	 parent_conn_unreachable(struct conn *, const char *detail,
	    int timedout);
/* Connected to the upstream proxy: CONNECT, then conn_connected. */
void	 parent_conn_handshake(struct conn *);
/*
 * Whether this forwarded HTTP request goes to the upstream proxy as a
 * proxy request (httpForwarding "absolute-form"), not inside a tunnel.
 */
int	 parent_conn_absolute(const struct conn *);
/*
 * A forwarded request head (origin-form, as http.c builds it) for the
 * upstream proxy in absolute-form: the request line rewritten,
 * Max-Forwards dropped, Proxy-Authorization added.  0; 1 when the
 * request was refused (TRACE, TRACK) and the connection moved on; -1
 * out of memory.
 */
int	 parent_conn_http_head(struct conn *, struct evbuffer *);
/* The upstream proxy wants other credentials (status 407, 401). */
void	 parent_conn_auth_refused(struct conn *, int status);
/* The upstream proxy closed without answering a forwarded request. */
void	 parent_conn_no_answer(struct conn *);
/* "host:port" of the upstream proxy this connection uses, or NULL. */
const char *parent_conn_via(const struct conn *);
void	 parent_conn_free(struct conn *);

/* ---- relay.c ---- */

/*
 * Backpressure: reading from one side stops while the other side's output
 * holds more than RELAY_HIGH bytes and resumes once it is down to
 * RELAY_LOW, so a slow reader never makes the proxy buffer without bound.
 */
#define RELAY_HIGH	(256 * 1024)
#define RELAY_LOW	(64 * 1024)
#define RELAY_READ_MAX	(262144)
/* A direction that has moved this much switches to splice(2). */
#define RELAY_SPLICE_AFTER	(1024 * 1024)
/* The pipe a spliced direction asks for (/proc/sys/fs/pipe-max-size). */
#define RELAY_PIPE_MAX	(1024 * 1024)


/*
 * A tunnel's both bufferevents exist: check the client's first bytes (a
 * TLS ClientHello must name the target), then relay until both sides
 * are done.
 */
void	 relay_start(struct conn *);
/* Whether the tunnel waits for the rest of a split ClientHello. */
int	 relay_peek_waiting(const struct conn *);
/* A split ClientHello was not completed in time: refuse the tunnel. */
void	 relay_peek_timeout(struct conn *);
/* Write a buffer straight to a socket (MSG_NOSIGNAL); bytes or -1. */
ssize_t	 relay_write_now(struct evbuffer *, int);
/* Read more than a bufferevent's 4 KiB into its input, if there is more. */
void	 relay_read_more(struct bufferevent *);
/* Send a short reply now if nothing is queued, else queue it. */
void	 relay_send(struct bufferevent *, const void *, size_t);
/* Free the relay and close its sockets (conn_close). */
void	 relay_free(struct conn *);
/* relay_start without the choice of termination: the plain relay. */
void	 relay_open(struct conn *);
/* Tune a bufferevent for relaying (read/write sizes). */
void	 relay_tune(struct bufferevent *);

/* ---- term.c ---- */

/*
 * Whether the connection's tunnel is to be terminated (tlsTerminate,
 * not excluded, the module loaded).
 */
int	 term_wanted(const struct conn *);
/* Whether a new terminated tunnel would be over maxTunnels. */
int	 term_full(const struct conn *);
/*
 * The tunnel is set up (the reply sent): peek at the client's first
 * bytes and terminate TLS, or hand the tunnel to the plain relay.
 */
void	 term_start(struct conn *);
/* The connection timer of a terminated tunnel (handshake, idle). */
void	 term_timeout(struct conn *);
/* Free the terminated tunnel and close its sockets (conn_close). */
void	 term_free(struct conn *);
/*
 * Whether a decision for a CONNECT/SOCKS5/HTTP target must be refused
 * because request rules apply to it and it would not be terminated
 * ("request-rules-opaque"); the hint for the refusal into buf.
 */
int	 term_opaque(const struct conn *, char *, size_t);

/* ---- http.c ---- */

/* The first byte was ASCII: read an HTTP request. */
void	 http_start(struct conn *);
/* Upstream is connected: send the 200 / the forwarded request. */
void	 http_connected(struct conn *);
/* Setup failed: answer the client and close. */
void	 http_fail(struct conn *, enum conn_err);
void	 http_conn_free(struct http_conn *);
/* The dialled address of a kept-alive upstream being reused. */
const char *http_reuse_addr(const struct conn *);
/* The header timeout fired: 408 and close. */
void	 http_timeout(struct conn *);
/* "Forbidden" for 403; "Error" for a status without a known phrase. */
const char *http_status_text(int);

/* ---- socks5.c ---- */

void	 socks5_start(struct conn *);
void	 socks5_connected(struct conn *);
void	 socks5_fail(struct conn *, enum conn_err);

#endif
