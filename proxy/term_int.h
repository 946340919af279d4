/*
 * A terminated tunnel (term.c): the two TLS endpoints, the plaintext
 * between them, and where the HTTP/1.1 exchange inside is.
 */
#ifndef PROXY_TERM_INT_H
#define PROXY_TERM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "proxy/cred.h"
#include "proxy/proxy_int.h"

/* Plaintext read from one side is held at most this much (backpressure). */
#define TERM_HIGH	RELAY_HIGH
#define TERM_READ	(16 * 1024)	/* one TLS read or write */
#define TERM_PATH_LOG	512		/* a logged path, at most */
/*
 * The server's bytes that could begin a value are held back until the
 * next ones show whether they do; when none come for this long, they go
 * (a server-sent event stream, a websocket must not stall on them).
 */
#define TERM_FLUSH_MS	20

enum term_phase {
	TERM_PEEK,		/* waiting for the client's ClientHello */
	TERM_HANDSHAKE,		/* both handshakes */
	TERM_HTTP,		/* requests and responses */
	TERM_RAW		/* after 101 Switching Protocols */
};

/* How a body comes in, and how it goes out. */
enum term_in {
	TIN_NONE,
	TIN_LENGTH,
	TIN_CHUNKED,
	TIN_EOF			/* until the sender's close */
};

enum term_out {
	TOUT_SAME,		/* as it came: its Content-Length holds */
	TOUT_CHUNKED,		/* re-framed */
	TOUT_EOF		/* delimited by our close */
};

struct term_body {
	enum term_in		 in;
	enum term_out		 out;
	uint64_t		 remaining;	/* TIN_LENGTH */
	struct chunk_decoder	 dec;		/* TIN_CHUNKED */
	struct cred_stream	*cs;		/* NULL: bytes as they are */
	int			 done;
	char			 tail[CRED_PLACEHOLDER_MIN];	/* last bytes in */
	size_t			 ntail;
};

/* One TLS endpoint: its socket and the plaintext both ways. */
struct term_end {
	struct term		*t;
	struct term_end		*dst;		/* where its bytes go */
	int			 fd;
	struct tlsmod_conn	*tls;
	struct event		*rev;
	struct event		*wev;
	struct evbuffer		*in;		/* plaintext read from it */
	struct evbuffer		*out;		/* plaintext to write to it */
	uint64_t		*bytes;		/* the conn's counter */
	int			 hs_done;
	int			 failed;	/* TLSMOD_ERROR: error() says */
	int			 eof;		/* it closed (or close_notify) */
	int			 shut;		/* our close_notify went */
	int			 want_r;
	int			 want_w;
};

enum term_req {
	TRQ_HEAD,		/* reading a request head */
	TRQ_BODY,		/* its body up */
	TRQ_WAIT		/* sent: waiting for the response's end */
};

enum term_resp {
	TRS_IDLE,		/* no request outstanding */
	TRS_HEAD,
	TRS_BODY
};

struct term {
	struct conn		*c;
	enum term_phase		 phase;
	struct event		*peek_ev;
	struct event		*peek_again;	/* a split ClientHello */
	struct event		*peek_up;	/* the server speaks first */
	struct event		*flush_ev;	/* what a hide stream holds */
	int			 peek_waiting;	/* its start has come */
	struct term_end		 client;
	struct term_end		 upstream;
	int			 counted;	/* in px->nterm */
	int			 moved;		/* progress in this pass */
	const char		*closing;	/* flush, then close: the end */

	/* the request in flight */
	enum term_req		 rq;
	enum term_resp		 rs;
	struct term_body	 req;
	struct term_body	 resp;
	char			 method[32];
	char			 path[TERM_PATH_LOG];	/* as logged */
	int			 head_req;	/* HEAD: no response body */
	int			 upgrade;	/* the request asks Upgrade */
	int			 client_minor;
	int			 close_after;	/* the client's last request */
	const struct req_rule	*rule;		/* what allowed it, if a rule */
	const char		*rule_source;
	const char		*rule_layer;	/* its entry's layer, or NULL */
	uint8_t			 used[CRED_MAX];	/* creds injected */
	struct cred_scan	 scan;		/* TERM_RAW, client to server */
	unsigned		 nreq;
};

#endif
