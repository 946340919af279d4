/*
 * SOCKS5 (RFC 1928) with no-auth and username/password (RFC 1929).  Any
 * credentials are accepted: the user name is logged in its own field
 * ("user"), never in place of the client's label -- under pisbx-run the
 * sandboxed code picks the user name, the launcher the label.  CONNECT
 * only; BIND and UDP ASSOCIATE get 0x07.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/log.h"
#include "proxy/cred.h"
#include "proxy/proxy_int.h"

enum socks5_step {
	S5_GREETING,
	S5_AUTH,
	S5_REQUEST,
	S5_DONE
};

/* Longer than any handshake message (RFC 1929 auth: at most 513 bytes). */
#define SOCKS5_MSG_MAX	600

static void	 socks5_read_cb(struct bufferevent *, void *);
static void	 socks5_event_cb(struct bufferevent *, short, void *);
static void	 socks5_answer(struct conn *, size_t, uint8_t, uint8_t);
static int	 socks5_greeting(struct conn *, const uint8_t *, size_t);
static int	 socks5_auth(struct conn *, const uint8_t *, size_t);
static int	 socks5_request(struct conn *, const uint8_t *, size_t);
static void	 socks5_invalid(struct conn *, const char *);
static void	 socks5_reply(struct conn *, uint8_t, const char *);

void
socks5_start(struct conn *c)
{
	c->proto = PROTO_SOCKS5;
	c->state = CONN_READ_REQUEST;
	c->socks_step = S5_GREETING;
	bufferevent_setcb(c->client, socks5_read_cb, NULL, socks5_event_cb, c);
	socks5_read_cb(c->client, c);
}

static void
socks5_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	conn_close(c, (what & BEV_EVENT_ERROR) ? "client-error" :
	    "client-eof");
}

/* A failure reply (zero bound address), then close. */
static void
socks5_reply(struct conn *c, uint8_t rep, const char *end)
{
	uint8_t out[32];
	size_t n;

	n = socks5_build_reply(out, rep, NULL);
	bufferevent_write(c->client, out, n);
	conn_close_after_flush(c, end);
}

/*
 * Feed the client's bytes to the step the handshake is at, one message
 * at a time.  A step returns 1 to go on with the next message, 0 when it
 * needs more bytes or ended the handshake (an error closing, or the
 * request handed to conn_authorise: then c may be gone).
 */
static void
socks5_read_cb(struct bufferevent *bev, void *arg)
{
	static int (*const step[])(struct conn *, const uint8_t *, size_t) = {
		[S5_GREETING] = socks5_greeting,
		[S5_AUTH] = socks5_auth,
		[S5_REQUEST] = socks5_request,
	};
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len;

	do {
		if (c->socks_step >= S5_DONE ||
		    (len = evbuffer_get_length(in)) == 0)
			return;
		if (len > SOCKS5_MSG_MAX)
			len = SOCKS5_MSG_MAX;
	} while (step[c->socks_step](c, evbuffer_pullup(in, len), len));
}

/* Drain a handled message and answer it with two bytes. */
static void
socks5_answer(struct conn *c, size_t used, uint8_t b0, uint8_t b1)
{
	uint8_t out[2] = { b0, b1 };

	evbuffer_drain(bufferevent_get_input(c->client), used);
	/* Now, not from the next loop turn: the client waits for it. */
	relay_send(c->client, out, sizeof(out));
}

/* The method selection: username/password if offered, else none. */
static int
socks5_greeting(struct conn *c, const uint8_t *p, size_t len)
{
	struct socks5_greeting g;
	ssize_t n;

	if ((n = socks5_parse_greeting(p, len, &g)) == 0)
		return 0;
	if (n < 0) {
		conn_error(c, "malformed SOCKS5 greeting");
		conn_close(c, "bad-request");
		return 0;
	}
	if (g.offers_userpass) {
		socks5_answer(c, (size_t)n, SOCKS5_VERSION,
		    SOCKS5_AUTH_USERPASS);
		c->socks_step = S5_AUTH;
	} else if (g.offers_none) {
		socks5_answer(c, (size_t)n, SOCKS5_VERSION, SOCKS5_AUTH_NONE);
		c->socks_step = S5_REQUEST;
	} else {
		socks5_answer(c, (size_t)n, SOCKS5_VERSION,
		    SOCKS5_AUTH_NOACCEPT);
		conn_error(c, "no acceptable SOCKS5 authentication method "
		    "offered");
		conn_close_after_flush(c, "bad-request");
		return 0;
	}
	return 1;
}

/*
 * RFC 1929: any credentials pass; the user name is only logged.  A
 * placeholder of the run's credentials in either is a leak: it is
 * refused at the request, once the target is known
 * (conn_authorise), so that the refusal names where it was going.
 */
static int
socks5_auth(struct conn *c, const uint8_t *p, size_t len)
{
	struct socks5_auth a;
	struct cred_scan cs;
	const struct cred *cr;
	ssize_t n;

	if ((n = socks5_parse_auth(p, len, &a)) == 0)
		return 0;
	if (n < 0) {
		socks5_answer(c, 0, 0x01, 0x01);
		conn_error(c, "malformed SOCKS5 username/password message");
		conn_close_after_flush(c, "bad-request");
		return 0;
	}
	memset(&cs, 0, sizeof(cs));
	if ((cr = cred_scan(c->px->creds, &cs, a.user, strlen(a.user))) ==
	    NULL) {
		memset(&cs, 0, sizeof(cs));
		cr = cred_scan(c->px->creds, &cs, a.pass, strlen(a.pass));
	}
	c->cred_auth = cr;
	explicit_bzero(a.pass, sizeof(a.pass));
	free(c->user);
	c->user = NULL;
	if (a.user[0] != '\0' && (c->user = strdup(a.user)) == NULL) {
		conn_close(c, "out-of-memory");
		return 0;
	}
	socks5_answer(c, (size_t)n, 0x01, 0x00);
	c->socks_step = S5_REQUEST;
	return 1;
}

/* The CONNECT request: the target, then the shared state machine. */
static int
socks5_request(struct conn *c, const uint8_t *p, size_t len)
{
	struct socks5_request r;
	const char *errstr = NULL;
	char detail[400];
	ssize_t n;

	if ((n = socks5_parse_request(p, len, &r)) == 0)
		return 0;
	if (n < 0) {
		conn_error(c, "malformed SOCKS5 request");
		socks5_reply(c, SOCKS5_REP_FAILURE, "bad-request");
		return 0;
	}
	if (r.atyp != SOCKS5_ATYP_IPV4 && r.atyp != SOCKS5_ATYP_IPV6 &&
	    r.atyp != SOCKS5_ATYP_DOMAIN) {
		conn_error(c, "unknown SOCKS5 address type");
		socks5_reply(c, SOCKS5_REP_ATYP, "bad-request");
		return 0;
	}
	if (r.cmd != SOCKS5_CMD_CONNECT) {
		conn_error(c, "SOCKS5 command 0x%02x not supported (CONNECT "
		    "only)", r.cmd);
		socks5_reply(c, SOCKS5_REP_CMD, "bad-request");
		return 0;
	}
	evbuffer_drain(bufferevent_get_input(c->client), (size_t)n);
	c->socks_step = S5_DONE;	/* early bytes stay in the input */
	if (r.atyp == SOCKS5_ATYP_IPV4) {
		struct in_addr ia;

		memcpy(&ia, r.v4, 4);
		host_from_in(&c->host, &ia);
	} else if (r.atyp == SOCKS5_ATYP_IPV6) {
		struct in6_addr i6;

		memcpy(&i6, r.v6, 16);
		host_from_in6(&c->host, &i6);
	} else if (host_canon(r.domain, r.domainlen, &c->host, &errstr) ==
	    -1) {
		snprintf(detail, sizeof(detail), "\"%s\": %s", r.domain,
		    errstr != NULL ? errstr : "bad host");
		socks5_invalid(c, detail);
		return 0;
	}
	c->port = r.port;
	c->have_target = 1;
	if (r.port == 0) {
		socks5_invalid(c, "port 0");
		return 0;
	}
	conn_authorise(c);
	return 0;
}

/* An unusable target: a decision record, then 0x02. */
static void
socks5_invalid(struct conn *c, const char *detail)
{
	conn_decide(c, 0, "invalid-host", detail);
	conn_log_decision(c);
	socks5_reply(c, SOCKS5_REP_NOT_ALLOWED, "invalid-host");
}

void
socks5_connected(struct conn *c)
{
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	uint8_t out[32];
	size_t n;

	if (term_full(c)) {
		conn_deny(c, "tls-tunnels-full", "network.tlsTerminate."
		    "maxTunnels terminated tunnels are open", CERR_BUSY);
		return;
	}
	memset(&ss, 0, sizeof(ss));
	if (getsockname(bufferevent_getfd(c->upstream),
	    (struct sockaddr *)&ss, &sslen) == -1)
		ss.ss_family = AF_UNSPEC;
	n = socks5_build_reply(out, SOCKS5_REP_OK, (struct sockaddr *)&ss);
	relay_send(c->client, out, n);
	relay_start(c);
}

void
socks5_fail(struct conn *c, enum conn_err err)
{
	uint8_t rep;

	switch (err) {
	case CERR_DENY:
	case CERR_INVALID:
		rep = SOCKS5_REP_NOT_ALLOWED;
		break;
	case CERR_DNS:
	case CERR_HOST_UNREACH:
		rep = SOCKS5_REP_HOST_UNREACH;
		break;
	case CERR_NET_UNREACH:
		rep = SOCKS5_REP_NET_UNREACH;
		break;
	case CERR_REFUSED:
		rep = SOCKS5_REP_REFUSED;
		break;
	case CERR_TIMEOUT:
		rep = SOCKS5_REP_TTL;
		break;
	case CERR_BUSY:		/* "general SOCKS server failure" */
	case CERR_FAILURE:
	default:
		rep = SOCKS5_REP_FAILURE;
		break;
	}
	socks5_reply(c, rep, c->reason[0] != '\0' ? c->reason : "failed");
}
