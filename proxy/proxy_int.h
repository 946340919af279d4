/*
 * proxy/ internals: the connection state machine, the protocols (HTTP
 * CONNECT and forwarding, SOCKS5), the relay, async DNS, the TLS
 * ClientHello peek and the access log.  Prototypes grouped by file.
 *
 * The parsers (http_parse.c, socks5_parse.c, tls_peek.c) are pure
 * functions over byte buffers, with no libevent, so they can be unit-
 * tested and fuzzed on their own.
 */
#ifndef PISBX_PROXY_INT_H
#define PISBX_PROXY_INT_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"
#include "proxy/proxy.h"

struct bufferevent;
struct evbuffer;
struct event;
struct evconnlistener;
struct reviewer;
struct review;

/* ---- http_parse.c (pure) ---- */

#define HTTP_HEAD_MAX		(64 * 1024)	/* header section limit: 431 */
#define HTTP_MAX_HEADERS	128

struct http_header {
	const char	*name;
	size_t		 namelen;
	const char	*value;		/* trimmed of surrounding blanks */
	size_t		 valuelen;
};

struct http_msg {
	/* request line */
	const char	*method;
	size_t		 methodlen;
	const char	*target;
	size_t		 targetlen;
	/* status line */
	int		 status;
	const char	*statusline;	/* whole first line, no EOL */
	size_t		 statuslinelen;

	int		 minor;		/* HTTP/1.minor: 0 or 1 */
	struct http_header h[HTTP_MAX_HEADERS];
	size_t		 nh;

	int		 has_length;	/* Content-Length present */
	uint64_t	 length;
	int		 chunked;	/* Transfer-Encoding: chunked */
	int		 te_other;	/* response: another coding, read to EOF */
	int		 conn_close;	/* Connection: close */
	int		 conn_keepalive;	/* Connection: keep-alive */

	int		 error;		/* status to answer a bad message with */
	const char	*errmsg;	/* for people */
};

/*
 * Parse a request head (request line and header section) at the start of
 * buf.  Returns the length of the head including its blank line, 0 when
 * more bytes are needed, or -1 with m->error (400, 431, 501, 505) and
 * m->errmsg set.
 */
ssize_t	 http_parse_request(const char *buf, size_t len, struct http_msg *m);
/* The same for a response head (status line and header section). */
ssize_t	 http_parse_response(const char *buf, size_t len, struct http_msg *m);
/* Case-insensitive compare of a header name or token with a C string. */
int	 http_token_eq(const char *s, size_t len, const char *lit);
/*
 * Whether the comma-separated header value lists token (case-
 * insensitive), as Connection: close, Upgrade does.
 */
int	 http_list_has(const char *v, size_t len, const char *token);
/*
 * Split an absolute URI "http://authority/path?q".  Returns 0 with the
 * authority and origin-form path (pointing into uri; path may be empty,
 * meaning "/"), or -1 with *errstr.  https:// is refused with a message
 * telling the client to use CONNECT.
 */
int	 http_split_uri(const char *uri, size_t len, const char **auth,
	    size_t *authlen, const char **path, size_t *pathlen,
	    const char **errstr);

/* Chunked transfer-coding decoder (pure, incremental). */
enum chunk_state {
	CHUNK_SIZE,		/* reading "hex[;ext]\r\n" */
	CHUNK_DATA,
	CHUNK_DATA_CRLF,
	CHUNK_TRAILER,		/* trailer lines until an empty one */
	CHUNK_DONE
};

struct chunk_decoder {
	enum chunk_state state;
	uint64_t	 remaining;	/* CHUNK_DATA: bytes left of this chunk */
};

/*
 * One step of the decoder over buf.  Returns the number of bytes of buf
 * consumed (0: need more), or -1 on a framing error.  *data and *datalen
 * get the chunk data found in this step (a sub-range of buf) and *hdr a
 * chunk size found in this step (re-serialised by the caller), or
 * UINT64_MAX when none.
 */
ssize_t	 chunk_step(struct chunk_decoder *, const char *buf, size_t len,
	    const char **data, size_t *datalen, uint64_t *hdr);

/* ---- socks5_parse.c (pure) ---- */

#define SOCKS5_VERSION		0x05
#define SOCKS5_AUTH_NONE	0x00
#define SOCKS5_AUTH_USERPASS	0x02
#define SOCKS5_AUTH_NOACCEPT	0xff

#define SOCKS5_CMD_CONNECT	0x01
#define SOCKS5_CMD_BIND		0x02
#define SOCKS5_CMD_UDP		0x03

#define SOCKS5_ATYP_IPV4	0x01
#define SOCKS5_ATYP_DOMAIN	0x03
#define SOCKS5_ATYP_IPV6	0x04

enum socks5_rep {
	SOCKS5_REP_OK		= 0x00,
	SOCKS5_REP_FAILURE	= 0x01,
	SOCKS5_REP_NOT_ALLOWED	= 0x02,
	SOCKS5_REP_NET_UNREACH	= 0x03,
	SOCKS5_REP_HOST_UNREACH	= 0x04,
	SOCKS5_REP_REFUSED	= 0x05,
	SOCKS5_REP_TTL		= 0x06,
	SOCKS5_REP_CMD		= 0x07,
	SOCKS5_REP_ATYP		= 0x08
};

/* Parse results: >0 bytes consumed, 0 need more, -1 malformed. */
struct socks5_greeting {
	int	offers_none;
	int	offers_userpass;
};
ssize_t	 socks5_parse_greeting(const uint8_t *buf, size_t len,
	    struct socks5_greeting *);

struct socks5_auth {
	char	user[256];
	char	pass[256];
};
ssize_t	 socks5_parse_auth(const uint8_t *buf, size_t len,
	    struct socks5_auth *);

struct socks5_request {
	uint8_t		 cmd;
	uint8_t		 atyp;	/* as sent; unknown ones are reported */
	uint8_t		 v4[4];
	uint8_t		 v6[16];
	char		 domain[256];
	size_t		 domainlen;
	uint16_t	 port;
};
/*
 * Parse a request.  An unknown ATYP makes the rest unparseable: then the
 * result is 4 (the fixed part) with atyp set, and the caller answers 0x08.
 */
ssize_t	 socks5_parse_request(const uint8_t *buf, size_t len,
	    struct socks5_request *);
/* Build a reply into out (at least 22 bytes); returns its length. */
size_t	 socks5_build_reply(uint8_t *out, uint8_t rep,
	    const struct sockaddr *bound);

/* ---- tls_peek.c (pure) ---- */

#define TLS_PEEK_MAX	(16384 + 5 + 2048)	/* a hello spread over records */

enum tls_peek_result {
	TLS_PEEK_MORE,		/* need more bytes */
	TLS_PEEK_NOT_TLS,	/* not a TLS handshake: relay as is */
	TLS_PEEK_INVALID,	/* TLS but malformed or over the cap */
	TLS_PEEK_NO_SNI,	/* a ClientHello without server_name */
	TLS_PEEK_SNI		/* a ClientHello with a host_name */
};

/*
 * Look at the first bytes a client sent into a tunnel.  On TLS_PEEK_SNI
 * the host name (as sent, NUL-terminated) is in sni; *why gets a short
 * text for TLS_PEEK_INVALID.
 */
enum tls_peek_result tls_peek_clienthello(const uint8_t *buf, size_t len,
	    char *sni, size_t snilen, const char **why);

/* ---- accesslog.c ---- */

struct accesslog;

struct alog_rec {
	int		 close;		/* 0: decision record, 1: close record */
	uint64_t	 conn;
	const char	*proto;
	const char	*client;
	const char	*host;		/* NULL: not known yet */
	int		 port;
	const char	*decision;	/* NULL: none was made */
	const char	*reason;
	const char	*addr;
	const char	*error;
	const char	*end;		/* close: why the connection ended */
	uint64_t	 bytes_up;
	uint64_t	 bytes_down;
	uint64_t	 ms;
};

struct accesslog *accesslog_open(const char *path, enum log_format);
int		 accesslog_reopen(struct accesslog *);
void		 accesslog_free(struct accesslog *);
void		 accesslog_write(struct accesslog *, const struct alog_rec *);
/* Format one record into a malloc'ed line ending in "\n". */
char		*accesslog_format(const struct alog_rec *, enum log_format);

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

/* ---- proxy.c ---- */

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
	char			 name[TARGET_TEXT_MAX + 108];
	char			*unlink_path;	/* a Unix socket we created */
};

struct http_conn;

#define CONN_MAX_ADDRS	DNS_MAX_ADDRS

struct conn {
	TAILQ_ENTRY(conn)	 entry;
	struct proxy		*px;
	uint64_t		 id;
	enum conn_state		 state;
	enum conn_proto		 proto;
	struct bufferevent	*client;
	struct bufferevent	*upstream;
	char			 client_name[400];
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
	int			 redial;	/* conn_redial: decision logged */

	/* the decision */
	const char		*decision;	/* "allow", "deny", NULL */
	char			 reason[TARGET_TEXT_MAX + 32];
	char			*error;		/* detail, malloc'ed */
	char			 approved[TARGET_TEXT_MAX];	/* review:allow */
	struct pgen		*gen;		/* held during a review */
	struct review		*review;
	struct event		*gone_ev;	/* REVIEW: client hung up */
	struct dns_query	*dnsq;

	uint64_t		 bytes_up;
	uint64_t		 bytes_down;

	/* relay */
	int			 client_eof;
	int			 upstream_eof;
	int			 client_shut;	/* shut down our writes to it */
	int			 upstream_shut;
	struct event		*rev[2];	/* relay: client, upstream */
	struct event		*wev[2];
	int			 spliced[2];	/* direction s through a pipe */
	int			 splice_failed[2];
	int			 pipefd[2][2];
	size_t			 pipelen[2];	/* bytes in the pipe */
	size_t			 pipesz[2];	/* the pipe's capacity */
	int			 peeking;	/* TLS ClientHello peek */
	int			 client_paused;	/* backpressure */
	int			 upstream_paused;

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
	TAILQ_HEAD(listener_head, listener) listeners;
	TAILQ_HEAD(, conn)	 conns;
	size_t			 nconns;
	uint64_t		 next_id;
	int			 stopping;
};

/* Free everything the connection owns and write its close record. */
void	 conn_close(struct conn *, const char *end);
/* Write the connection's decision record. */
void	 conn_log_decision(struct conn *);
/* Record a decision; reason is copied, detail (may be NULL) too. */
void	 conn_decide(struct conn *, int allow, const char *reason,
	    const char *detail);
/* Protocol handler has set host/port/proto: run policy, review, DNS, connect. */
void	 conn_authorise(struct conn *);
/* Dial the current target's checked addresses again (HTTP retry). */
void	 conn_redial(struct conn *);
/* Flush what is queued to the client, then close. */
void	 conn_close_after_flush(struct conn *, const char *end);
/* Mark activity for the idle timeout. */
void	 conn_touch(struct conn *);
/* Arm the connection timer (header/idle/flush timeouts). */
void	 conn_timer_set(struct conn *, int ms);
const struct config *conn_config(const struct conn *);
/* Map a failure to the protocol's answer (http_fail, socks5_fail). */
void	 conn_fail(struct conn *, enum conn_err);

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


/* Both bufferevents exist: relay until both sides are done. */
void	 relay_start(struct conn *);
/* Relay with a TLS ClientHello peek on the client's first bytes. */
void	 relay_start_peek(struct conn *);
/* Write a buffer straight to a socket (MSG_NOSIGNAL); bytes or -1. */
ssize_t	 relay_write_now(struct evbuffer *, int);
/* Read more than a bufferevent's 4 KiB into its input, if there is more. */
void	 relay_read_more(struct bufferevent *);
/* Send a short reply now if nothing is queued, else queue it. */
void	 relay_send(struct bufferevent *, const void *, size_t);
/* Free the relay's events (conn_close). */
void	 relay_free(struct conn *);
/* Tune a bufferevent for relaying (read/write sizes). */
void	 relay_tune(struct bufferevent *);
/* Pause/resume reading from src while dst's output is over the mark. */
void	 relay_backpressure(struct conn *, struct bufferevent *src,
	    struct bufferevent *dst);

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

/* ---- socks5.c ---- */

void	 socks5_start(struct conn *);
void	 socks5_connected(struct conn *);
void	 socks5_fail(struct conn *, enum conn_err);

#endif
