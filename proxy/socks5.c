/*
 * SOCKS5 (RFC 1928) with no-auth and username/password (RFC 1929).  Any
 * credentials are accepted: the user name only labels the client in the
 * access log.  CONNECT only; BIND and UDP ASSOCIATE get 0x07.
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
#include "proxy/proxy_int.h"

enum socks5_step {
	S5_GREETING,
	S5_AUTH,
	S5_REQUEST,
	S5_DONE
};

static void	 socks5_read_cb(struct bufferevent *, void *);
static void	 socks5_event_cb(struct bufferevent *, short, void *);
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

static void
socks5_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct socks5_greeting g;
	struct socks5_auth a;
	struct socks5_request r;
	const uint8_t *p;
	const char *errstr = NULL;
	uint8_t out[2];
	size_t len;
	ssize_t n;
	char detail[400];

	for (;;) {
		len = evbuffer_get_length(in);
		if (len == 0)
			return;
		if (len > 600)
			len = 600;	/* longer than any handshake message */
		p = evbuffer_pullup(in, len);
		switch (c->socks_step) {
		case S5_GREETING:
			if ((n = socks5_parse_greeting(p, len, &g)) == 0)
				return;
			if (n < 0) {
				c->error = strdup("malformed SOCKS5 greeting");
				conn_close(c, "bad-request");
				return;
			}
			evbuffer_drain(in, (size_t)n);
			out[0] = SOCKS5_VERSION;
			if (g.offers_userpass) {
				out[1] = SOCKS5_AUTH_USERPASS;
				c->socks_step = S5_AUTH;
			} else if (g.offers_none) {
				out[1] = SOCKS5_AUTH_NONE;
				c->socks_step = S5_REQUEST;
			} else {
				out[1] = SOCKS5_AUTH_NOACCEPT;
				bufferevent_write(bev, out, 2);
				c->error = strdup("no acceptable SOCKS5 "
				    "authentication method offered");
				conn_close_after_flush(c, "bad-request");
				return;
			}
			bufferevent_write(bev, out, 2);
			break;
		case S5_AUTH:
			if ((n = socks5_parse_auth(p, len, &a)) == 0)
				return;
			out[0] = 0x01;
			if (n < 0) {
				out[1] = 0x01;
				bufferevent_write(bev, out, 2);
				c->error = strdup("malformed SOCKS5 "
				    "username/password message");
				conn_close_after_flush(c, "bad-request");
				return;
			}
			evbuffer_drain(in, (size_t)n);
			if (a.user[0] != '\0')
				snprintf(c->client_name,
				    sizeof(c->client_name), "%s", a.user);
			explicit_bzero(a.pass, sizeof(a.pass));
			out[1] = 0x00;
			bufferevent_write(bev, out, 2);
			c->socks_step = S5_REQUEST;
			break;
		case S5_REQUEST:
			if ((n = socks5_parse_request(p, len, &r)) == 0)
				return;
			if (n < 0) {
				c->error = strdup("malformed SOCKS5 request");
				socks5_reply(c, SOCKS5_REP_FAILURE,
				    "bad-request");
				return;
			}
			if (r.atyp != SOCKS5_ATYP_IPV4 &&
			    r.atyp != SOCKS5_ATYP_IPV6 &&
			    r.atyp != SOCKS5_ATYP_DOMAIN) {
				c->error = strdup("unknown SOCKS5 address "
				    "type");
				socks5_reply(c, SOCKS5_REP_ATYP,
				    "bad-request");
				return;
			}
			if (r.cmd != SOCKS5_CMD_CONNECT) {
				snprintf(detail, sizeof(detail), "SOCKS5 "
				    "command 0x%02x not supported (CONNECT "
				    "only)", r.cmd);
				c->error = strdup(detail);
				socks5_reply(c, SOCKS5_REP_CMD,
				    "bad-request");
				return;
			}
			evbuffer_drain(in, (size_t)n);	/* early bytes stay */
			c->socks_step = S5_DONE;
			if (r.atyp == SOCKS5_ATYP_IPV4) {
				struct in_addr ia;

				memcpy(&ia, r.v4, 4);
				host_from_in(&c->host, &ia);
			} else if (r.atyp == SOCKS5_ATYP_IPV6) {
				struct in6_addr i6;

				memcpy(&i6, r.v6, 16);
				host_from_in6(&c->host, &i6);
			} else if (host_canon(r.domain, r.domainlen, &c->host,
			    &errstr) == -1) {
				snprintf(detail, sizeof(detail),
				    "\"%s\": %s", r.domain,
				    errstr != NULL ? errstr : "bad host");
				conn_decide(c, 0, "invalid-host", detail);
				conn_log_decision(c);
				socks5_reply(c, SOCKS5_REP_NOT_ALLOWED,
				    "invalid-host");
				return;
			}
			if (r.port == 0) {
				c->have_target = 1;
				conn_decide(c, 0, "invalid-host", "port 0");
				conn_log_decision(c);
				socks5_reply(c, SOCKS5_REP_NOT_ALLOWED,
				    "invalid-host");
				return;
			}
			c->port = r.port;
			c->have_target = 1;
			conn_authorise(c);
			return;
		default:
			return;
		}
	}
}

void
socks5_connected(struct conn *c)
{
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	uint8_t out[32];
	size_t n;

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
	case CERR_FAILURE:
	default:
		rep = SOCKS5_REP_FAILURE;
		break;
	}
	socks5_reply(c, rep, c->reason[0] != '\0' ? c->reason : "failed");
}
