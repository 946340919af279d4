/*
 * proxy/'s parsers: pure functions over byte buffers -- the HTTP/1.1
 * message head and chunked coding, the SOCKS5 handshake, the TLS
 * ClientHello peek.  No libevent and no connection state, so the unit
 * tests and the fuzzers drive them on their own.  Prototypes grouped by
 * file.
 */
#ifndef PISBX_PARSE_H
#define PISBX_PARSE_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct sockaddr;

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
#define TLS_RECORD_MAX	(16384 + 2048)		/* RFC 8446 5.2 */
/* Record content types (RFC 8446 5.1, B.1). */
#define TLS_CT_CCS		20	/* change_cipher_spec */
#define TLS_CT_ALERT		21
#define TLS_CT_HANDSHAKE	22
#define TLS_CT_APPDATA		23

enum tls_peek_result {
	TLS_PEEK_MORE,		/* need more bytes */
	TLS_PEEK_NOT_TLS,	/* not a TLS handshake: relay as is */
	TLS_PEEK_INVALID,	/* TLS but malformed or over the cap */
	TLS_PEEK_NO_SNI,	/* a ClientHello without server_name */
	TLS_PEEK_SNI		/* a ClientHello with a host_name */
};

/*
 * Look at the bytes a client sent into a tunnel, from a record boundary.
 * On TLS_PEEK_SNI the host name (as sent, NUL-terminated) is in sni; on
 * TLS_PEEK_SNI and TLS_PEEK_NO_SNI *used is the length of the records
 * the ClientHello took; *why gets a short text for TLS_PEEK_INVALID.
 */
enum tls_peek_result tls_peek_clienthello(const uint8_t *buf, size_t len,
	    char *sni, size_t snilen, size_t *used, const char **why);

enum tls_scan_result {
	TLS_SCAN_MORE,		/* no ServerHello yet */
	TLS_SCAN_HRR,		/* a HelloRetryRequest: scan on */
	TLS_SCAN_HELLO,		/* a ServerHello that is not a retry */
	TLS_SCAN_INVALID	/* anything else */
};

/* Where a scan of the server's first records is (tls_scan_serverhello). */
struct tls_scan {
	uint8_t		 hdr[5];	/* the current record's header */
	size_t		 hdrlen;
	size_t		 rleft;		/* its body bytes still to come */
	uint8_t		 msg[4 + 2 + 32];	/* a ServerHello's start */
	size_t		 msglen;
	size_t		 mleft;		/* the rest of a retry, skipped */
	unsigned	 nhrr;
};

void	 tls_scan_init(struct tls_scan *);
/*
 * Feed the server's bytes, in order, from its first one: TLS_SCAN_HRR
 * and TLS_SCAN_HELLO once the random of a ServerHello is seen, *used
 * being how much of buf was consumed; *why gets a short text for
 * TLS_SCAN_INVALID.
 */
enum tls_scan_result tls_scan_serverhello(struct tls_scan *,
	    const uint8_t *buf, size_t len, size_t *used, const char **why);

#endif
