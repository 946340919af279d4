/*
 * TLS endpoints on the proxy's sockets: the two SSL_CTXs (ours as the
 * client's server, ours as the upstream's client) and the calls the
 * proxy makes on one endpoint, their outcomes mapped to TLSMOD_*.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "proxy/tls/tls.h"

#define TLS_READ_AHEAD	(64 * 1024)	/* raw bytes one read(2) may take */

static const unsigned char alpn_http11[] = "\x08http/1.1";

static int	 servername_cb(SSL *, int *, void *);
static int	 alpn_select_cb(SSL *, const unsigned char **, unsigned char *,
		    const unsigned char *, unsigned int, void *);
static int	 new_session_cb(SSL *, SSL_SESSION *);
static struct tlsmod_conn *conn_new(struct tlsmod_ca *, SSL_CTX *, int,
		    const char *, char *, size_t);
static int	 conn_result(struct tlsmod_conn *, int, const char *);
static int	 name_eq(const char *, const char *);

/*
 * The client's SNI, when it sends one, must name the host of its
 * CONNECT: the leaf is for that host, and a client asking for another
 * name here is not talking to whom the policy allowed.
 */
static int
servername_cb(SSL *ssl, int *alert, void *arg)
{
	struct tlsmod_conn	*c = SSL_get_app_data(ssl);
	const char		*sni;

	(void)arg;
	sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	if (sni == NULL || c == NULL || name_eq(sni, c->host))
		return SSL_TLSEXT_ERR_OK;
	snprintf(c->err, sizeof(c->err), "sni-mismatch: the client asked for "
	    "%.253s", sni);
	*alert = SSL_AD_UNRECOGNIZED_NAME;
	return SSL_TLSEXT_ERR_ALERT_FATAL;
}

/* Host names equal, case aside, a trailing dot on either ignored. */
static int
name_eq(const char *a, const char *b)
{
	size_t	 la = strlen(a), lb = strlen(b);

	if (la > 0 && a[la - 1] == '.')
		la--;
	if (lb > 0 && b[lb - 1] == '.')
		lb--;
	return la == lb && strncasecmp(a, b, la) == 0;
}

/*
 * HTTP/1.1 is what the proxy reads inside: chosen when offered; a client
 * that offers ALPN without it (h2 only) would not understand our answer,
 * so the handshake fails saying so.  No ALPN at all means HTTP/1.1.
 */
static int
alpn_select_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	struct tlsmod_conn	*c = SSL_get_app_data(ssl);
	unsigned int		 i, n;
	size_t			 used = 0;
	char			 list[256] = "";

	(void)arg;
	for (i = 0; i < inlen; i += 1 + n) {
		n = in[i];
		if (i + 1 + n > inlen)
			break;
		if (n == 8 && memcmp(in + i + 1, "http/1.1", 8) == 0) {
			*out = in + i + 1;
			*outlen = 8;
			return SSL_TLSEXT_ERR_OK;
		}
		if (used < sizeof(list) - 1) {
			int	 w;

			w = snprintf(list + used, sizeof(list) - used, "%s%.*s",
			    used ? ", " : "", (int)n, (const char *)in + i + 1);
			if (w > 0)
				used += (size_t)w;
			if (used > sizeof(list) - 1)
				used = sizeof(list) - 1;
		}
	}
	/* The names are the client's bytes: keep them printable. */
	for (char *p = list; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	if (c != NULL)
		snprintf(c->err, sizeof(c->err), "no-alpn: the client offers "
		    "%s only", list);
	return SSL_TLSEXT_ERR_ALERT_FATAL;
}

/*
 * A new upstream session: a copy kept for the host.  Not sess itself:
 * it stays the connection's, and OpenSSL marks a connection's session
 * not resumable when it is freed without a close_notify sent -- which
 * is how a tunnel's upstream ends when its client goes -- so no
 * session kept was ever resumed.
 */
static int
new_session_cb(SSL *ssl, SSL_SESSION *sess)
{
	struct tlsmod_conn	*c = SSL_get_app_data(ssl);
	SSL_SESSION		*dup;

	if (c == NULL || (dup = SSL_SESSION_dup(sess)) == NULL)
		return 0;
	tls_sess_put(c->ca, c->host, dup);
	return 0;
}

/*
 * The CA's two contexts.  Both: TLS 1.2 or newer; a peer that closes
 * without close_notify reads as a close (OpenSSL 3 would call it an
 * error; HTTP/1.1 frames its own messages).  The upstream one verifies
 * against the system's roots and each extra CA file (one that does not
 * load is an error naming it).
 */
int
tls_ctx_setup(struct tlsmod_ca *ca, const struct tlsmod_ca_opts *o,
    char *err, size_t errlen)
{
	SSL_CTX		*s, *c;
	char		 what[PATH_MAX + 64];

	if ((s = ca->server = SSL_CTX_new(TLS_server_method())) == NULL ||
	    (c = ca->client = SSL_CTX_new(TLS_client_method())) == NULL) {
		tls_errstr(err, errlen, "cannot start TLS");
		return -1;
	}
	if (SSL_CTX_set_min_proto_version(s, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION) != 1) {
		tls_errstr(err, errlen, "cannot require TLS 1.2");
		return -1;
	}
	SSL_CTX_set_options(s, SSL_OP_IGNORE_UNEXPECTED_EOF |
	    SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_options(c, SSL_OP_IGNORE_UNEXPECTED_EOF |
	    SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_clear_mode(s, SSL_MODE_ENABLE_PARTIAL_WRITE);
	SSL_CTX_clear_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE);
	SSL_CTX_set_mode(s, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_mode(c, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	/*
	 * Read ahead, several records a read(2): without it each record
	 * costs two (its header, then its body), most of a terminated
	 * tunnel's system time.  term.c reads until WANT_READ, so what
	 * sits read ahead is never left waiting for an event.
	 */
	SSL_CTX_set_read_ahead(s, 1);
	SSL_CTX_set_read_ahead(c, 1);
	SSL_CTX_set_default_read_buffer_len(s, TLS_READ_AHEAD);
	SSL_CTX_set_default_read_buffer_len(c, TLS_READ_AHEAD);

	SSL_CTX_set_tlsext_servername_callback(s, servername_cb);
	SSL_CTX_set_alpn_select_cb(s, alpn_select_cb, NULL);
	/* No resumption towards clients: each handshake is cheap enough. */
	SSL_CTX_set_session_cache_mode(s, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(s, 0);
	SSL_CTX_set_options(s, SSL_OP_NO_TICKET);

	SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
	if (SSL_CTX_set_default_verify_paths(c) != 1) {
		tls_errstr(err, errlen, "cannot load the system's CA "
		    "certificates");
		return -1;
	}
	for (size_t i = 0; i < o->nextra; i++) {
		/* OpenSSL says "system lib" for a missing file: say it. */
		if (access(o->extra_ca[i], R_OK) == -1) {
			snprintf(err, errlen, "extraCaCertPaths %s: %s: give "
			    "a readable PEM file of CA certificates, or remove "
			    "the entry", o->extra_ca[i], strerror(errno));
			ERR_clear_error();
			return -1;
		}
		if (SSL_CTX_load_verify_locations(c, o->extra_ca[i], NULL) !=
		    1) {
			snprintf(what, sizeof(what), "extraCaCertPaths %s: no "
			    "PEM CA certificate could be read from it",
			    o->extra_ca[i]);
			tls_errstr(err, errlen, what);
			return -1;
		}
	}
	if (SSL_CTX_set_alpn_protos(c, alpn_http11,
	    sizeof(alpn_http11) - 1) != 0) {
		tls_errstr(err, errlen, "cannot set ALPN");
		return -1;
	}
	SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_CLIENT |
	    SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(c, new_session_cb);
	return 0;
}

/* An endpoint of ctx on fd for host (brackets stripped). */
static struct tlsmod_conn *
conn_new(struct tlsmod_ca *ca, SSL_CTX *ctx, int fd, const char *host,
    char *err, size_t errlen)
{
	struct tlsmod_conn	*c;
	size_t			 n = strlen(host);

	ERR_clear_error();
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		host++;
		n -= 2;
	}
	if (n == 0 || n >= TLS_HOST_MAX) {
		snprintf(err, errlen, "bad host name for TLS");
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	memcpy(c->host, host, n);
	c->host[n] = '\0';
	c->ca = ca;
	if ((c->ssl = SSL_new(ctx)) == NULL || SSL_set_fd(c->ssl, fd) != 1) {
		tls_errstr(err, errlen, "cannot start TLS");
		tls_conn_free(c);
		return NULL;
	}
	SSL_set_app_data(c->ssl, c);
	return c;
}

/* We are the server for host, with the CA's leaf for it. */
struct tlsmod_conn *
tls_server_new(struct tlsmod_ca *ca, int fd, const char *host, char *err,
    size_t errlen)
{
	struct tlsmod_conn	*c;
	X509			*leaf;

	if ((c = conn_new(ca, ca->server, fd, host, err, errlen)) == NULL)
		return NULL;
	c->server = 1;
	if ((leaf = tls_leaf_get(ca, c->host, err, errlen)) == NULL)
		goto fail;
	if (SSL_use_certificate(c->ssl, leaf) != 1 ||
	    SSL_use_PrivateKey(c->ssl, ca->leafkey) != 1 ||
	    SSL_add1_chain_cert(c->ssl, ca->cert) != 1) {
		tls_errstr(err, errlen, "cannot use the leaf certificate");
		goto fail;
	}
	SSL_set_accept_state(c->ssl);
	return c;
fail:
	tls_conn_free(c);
	return NULL;
}

/*
 * We are the client of host: its certificate must name it (a DNS name,
 * or for an IP literal the address); SNI for names only (RFC 6066 does
 * not allow literals there); the host's last session offered.
 */
struct tlsmod_conn *
tls_client_new(struct tlsmod_ca *ca, int fd, const char *host, char *err,
    size_t errlen)
{
	struct tlsmod_conn	*c;
	SSL_SESSION		*sess;

	if ((c = conn_new(ca, ca->client, fd, host, err, errlen)) == NULL)
		return NULL;
	if (tls_host_is_ip(c->host)) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl),
		    c->host) != 1) {
			tls_errstr(err, errlen, "cannot check the address");
			goto fail;
		}
	} else if (SSL_set1_host(c->ssl, c->host) != 1 ||
	    SSL_set_tlsext_host_name(c->ssl, c->host) != 1) {
		tls_errstr(err, errlen, "cannot check the host name");
		goto fail;
	}
	if ((sess = tls_sess_get(ca, c->host)) != NULL &&
	    SSL_set_session(c->ssl, sess) != 1)
		ERR_clear_error();	/* a full handshake then */
	SSL_set_connect_state(c->ssl);
	return c;
fail:
	tls_conn_free(c);
	return NULL;
}

void
tls_conn_free(struct tlsmod_conn *c)
{
	if (c == NULL)
		return;
	SSL_free(c->ssl);	/* the fd is the proxy's: SSL_set_fd's BIO */
	free(c);		/* does not close it (BIO_NOCLOSE) */
}

/*
 * An SSL call's outcome as TLSMOD_*: rc > 0 passes through; the reason
 * of a failure into c->err unless a callback already said it.
 */
static int
conn_result(struct tlsmod_conn *c, int rc, const char *what)
{
	long	 v;
	int	 e;

	if (rc > 0)
		return rc;
	e = SSL_get_error(c->ssl, rc);
	switch (e) {
	case SSL_ERROR_WANT_READ:
		return TLSMOD_WANT_READ;
	case SSL_ERROR_WANT_WRITE:
		return TLSMOD_WANT_WRITE;
	case SSL_ERROR_ZERO_RETURN:
		ERR_clear_error();
		if (!SSL_is_init_finished(c->ssl)) {
			if (c->err[0] == '\0')
				snprintf(c->err, sizeof(c->err), "%s: the "
				    "peer closed the connection", what);
		}
		return TLSMOD_CLOSED;
	case SSL_ERROR_SYSCALL:
		if (ERR_peek_error() == 0 && errno == 0) {
			/* EOF without close_notify (the option's case). */
			if (c->err[0] == '\0')
				snprintf(c->err, sizeof(c->err), "%s: the "
				    "peer closed the connection", what);
			return TLSMOD_CLOSED;
		}
		if (c->err[0] == '\0') {
			if (ERR_peek_error() != 0)
				tls_errstr(c->err, sizeof(c->err), what);
			else
				snprintf(c->err, sizeof(c->err), "%s: %s", what,
				    strerror(errno));
		}
		ERR_clear_error();
		return TLSMOD_ERROR;
	default:
		break;
	}
	if (c->err[0] != '\0') {
		ERR_clear_error();
		return TLSMOD_ERROR;
	}
	if (!c->server && (v = SSL_get_verify_result(c->ssl)) != X509_V_OK) {
		snprintf(c->err, sizeof(c->err), "certificate verify failed: "
		    "%s", X509_verify_cert_error_string(v));
		ERR_clear_error();
		return TLSMOD_ERROR;
	}
	tls_errstr(c->err, sizeof(c->err), what);
	return TLSMOD_ERROR;
}

int
tls_handshake(struct tlsmod_conn *c)
{
	int	 rc;

	ERR_clear_error();
	errno = 0;
	rc = conn_result(c, SSL_do_handshake(c->ssl), "handshake");
	return rc > 0 ? 0 : rc;
}

ssize_t
tls_read(struct tlsmod_conn *c, void *buf, size_t len)
{
	int	 n = len > INT_MAX ? INT_MAX : (int)len;

	ERR_clear_error();
	errno = 0;
	return conn_result(c, SSL_read(c->ssl, buf, n), "read");
}

int
tls_pending(struct tlsmod_conn *c)
{
	return SSL_pending(c->ssl) > 0;
}

/* All of len or nothing (no partial writes); a WANT repeats the call. */
ssize_t
tls_write(struct tlsmod_conn *c, const void *buf, size_t len)
{
	int	 n = len > INT_MAX ? INT_MAX : (int)len;

	if (len == 0)
		return 0;
	ERR_clear_error();
	errno = 0;
	return conn_result(c, SSL_write(c->ssl, buf, n), "write");
}

/* Our close_notify sent (the peer's is not waited for). */
int
tls_shutdown(struct tlsmod_conn *c)
{
	int	 rc;

	ERR_clear_error();
	errno = 0;
	if ((rc = SSL_shutdown(c->ssl)) >= 0)
		return 0;
	rc = conn_result(c, rc, "shutdown");
	return rc == TLSMOD_CLOSED ? 0 : rc;
}

const char *
tls_error(const struct tlsmod_conn *c)
{
	return c->err[0] != '\0' ? c->err : "no error";
}

const char *
tls_version(const struct tlsmod_conn *c)
{
	return SSL_is_init_finished(c->ssl) ? SSL_get_version(c->ssl) : "";
}
