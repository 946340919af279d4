/*
 * Unit tests for pisbx-tls.so (proxy/tls/), loaded from this build by its
 * path as the proxy would load it: a CA made now and one read from
 * files (its key refused when others can read it), full handshakes over
 * socket pairs between the module's two sides, SNI and ALPN refusals
 * against an OpenSSL client the test drives itself, upstreams that must
 * fail verification (unknown CA, self-signed, wrong address, TLS 1.1
 * only), the Java trust store's attributes, and extract's regexes.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "proxy/tlsmod.h"

#ifndef TLSMOD_TEST_PATH
#error TLSMOD_TEST_PATH: the Makefile names the module to test
#endif

#define STEP_DONE	0
#define STEP_MAX	2000

/* One side of a handshake: 0 done, TLSMOD_WANT_*, or an error. */
struct side {
	struct tlsmod_conn	*conn;	/* the module's endpoint, or */
	SSL			*ssl;	/* one OpenSSL of the test drives */
	int			 rc;
};

static const struct tlsmod_ops	*ops;
static struct tlsmod_ca		*ca_a;	/* serves leaves */
static struct tlsmod_ca		*ca_b;	/* trusts ca_a (extra_ca) */
static char			 dir[] = "/tmp/test_tlsmod.XXXXXX";
static char			 path_a[PATH_MAX];

static int	 group_setup(void **);
static int	 group_teardown(void **);
static void	 sockpair(int [2]);
static void	 side_step(struct side *);
static void	 run(struct side *, struct side *);
static char	*in_dir(const char *);
static void	 sh(const char *, ...) __attribute__((format(printf, 1, 2)));
static void	 write_file(const char *, const char *);
static SSL_CTX	*test_ctx(const SSL_METHOD *);
static void	 exchange(struct tlsmod_conn *, struct tlsmod_conn *);

static char *
in_dir(const char *name)
{
	static char	 buf[32][PATH_MAX];	/* each kept for 32 calls */
	static int	 i;

	i = (i + 1) % 32;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

/* Run a shell command in the test's directory; it must succeed. */
static void
sh(const char *fmt, ...)
{
	char	 cmd[4096];
	va_list	 ap;
	int	 n;

	n = snprintf(cmd, sizeof(cmd), "cd %s && ", dir);
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("%s: failed", cmd);
}

static void
write_file(const char *path, const char *text)
{
	FILE	*f;

	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static int
group_setup(void **state)
{
	struct tlsmod_ca_opts	 o = { 0 };
	const char		*extra[1];
	char			 err[512];
	void			*h;
	tlsmod_fn		 fn;

	(void)state;
	if ((h = dlopen(TLSMOD_TEST_PATH, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		fprintf(stderr, "%s\n", dlerror());
		return -1;
	}
	if ((fn = (tlsmod_fn)dlsym(h, TLSMOD_SYMBOL)) == NULL ||
	    (ops = fn()) == NULL || ops->abi != TLSMOD_ABI)
		return -1;
	if (mkdtemp(dir) == NULL)
		return -1;
	if ((ca_a = ops->ca_new(&o, err, sizeof(err))) == NULL) {
		fprintf(stderr, "ca_new: %s\n", err);
		return -1;
	}
	snprintf(path_a, sizeof(path_a), "%s/a.pem", dir);
	write_file(path_a, ops->ca_pem(ca_a));
	extra[0] = path_a;
	o.extra_ca = extra;
	o.nextra = 1;
	if ((ca_b = ops->ca_new(&o, err, sizeof(err))) == NULL) {
		fprintf(stderr, "ca_new: %s\n", err);
		return -1;
	}
	/* A CA and a self-signed server certificate, from files. */
	sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
	    "-nodes -keyout ca.key -out ca.pem -subj /CN=testca -days 2 "
	    "2>/dev/null");
	sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
	    "-nodes -keyout self.key -out self.pem -subj /CN=example.test "
	    "-days 2 -addext subjectAltName=DNS:example.test "
	    "-addext basicConstraints=critical,CA:FALSE 2>/dev/null");
	return 0;
}

static int
group_teardown(void **state)
{
	char	 cmd[PATH_MAX + 16];

	(void)state;
	if (ops != NULL) {
		ops->ca_free(ca_a);
		ops->ca_free(ca_b);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
sockpair(int fd[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    fd), 0);
}

static void
side_step(struct side *s)
{
	int	 rc, e;

	if (s->rc == STEP_DONE || s->rc == TLSMOD_ERROR ||
	    s->rc == TLSMOD_CLOSED)
		return;
	if (s->conn != NULL) {
		s->rc = ops->handshake(s->conn);
		return;
	}
	ERR_clear_error();
	if ((rc = SSL_do_handshake(s->ssl)) == 1) {
		s->rc = STEP_DONE;
		return;
	}
	e = SSL_get_error(s->ssl, rc);
	s->rc = e == SSL_ERROR_WANT_READ ? TLSMOD_WANT_READ :
	    e == SSL_ERROR_WANT_WRITE ? TLSMOD_WANT_WRITE : TLSMOD_ERROR;
	ERR_clear_error();
}

/*
 * Both sides stepped in turn until both are done or one failed (and the
 * other then has nothing more to read).
 */
static void
run(struct side *a, struct side *b)
{
	int	 i;

	a->rc = b->rc = TLSMOD_WANT_READ;
	for (i = 0; i < STEP_MAX; i++) {
		side_step(a);
		side_step(b);
		if (a->rc == STEP_DONE && b->rc == STEP_DONE)
			return;
		if ((a->rc == TLSMOD_ERROR || a->rc == TLSMOD_CLOSED) &&
		    (b->rc == TLSMOD_ERROR || b->rc == TLSMOD_CLOSED ||
		    b->rc == STEP_DONE))
			return;
		if ((b->rc == TLSMOD_ERROR || b->rc == TLSMOD_CLOSED) &&
		    a->rc == STEP_DONE)
			return;
		if (i > 50 && (a->rc < 0 || b->rc < 0) &&
		    (a->rc == TLSMOD_ERROR || b->rc == TLSMOD_ERROR))
			return;
	}
}

/* A context for the test's own end of a handshake. */
static SSL_CTX *
test_ctx(const SSL_METHOD *m)
{
	SSL_CTX	*ctx;

	assert_non_null(ctx = SSL_CTX_new(m));
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	return ctx;
}

/* Bytes both ways, then close_notify both ways. */
static void
exchange(struct tlsmod_conn *srv, struct tlsmod_conn *cli)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char resp[] = "HTTP/1.1 204 No Content\r\n\r\n";
	char		 buf[256];
	ssize_t		 n;

	assert_int_equal(ops->write(cli, req, sizeof(req) - 1),
	    sizeof(req) - 1);
	n = ops->read(srv, buf, 4);
	assert_int_equal(n, 4);
	assert_memory_equal(buf, "GET ", 4);
	/* The rest is decrypted already: pending says so. */
	assert_int_equal(ops->pending(srv), 1);
	n = ops->read(srv, buf, sizeof(buf));
	assert_int_equal(n, sizeof(req) - 1 - 4);
	assert_memory_equal(buf, req + 4, (size_t)n);
	assert_int_equal(ops->pending(srv), 0);
	assert_int_equal(ops->read(srv, buf, sizeof(buf)), TLSMOD_WANT_READ);
	assert_int_equal(ops->write(srv, resp, sizeof(resp) - 1),
	    sizeof(resp) - 1);
	/* TLS 1.3: the server's tickets (none here) come first. */
	n = ops->read(cli, buf, sizeof(buf));
	assert_int_equal(n, sizeof(resp) - 1);
	assert_memory_equal(buf, resp, (size_t)n);
	assert_int_equal(ops->shutdown(srv), 0);
	assert_int_equal(ops->read(cli, buf, sizeof(buf)), TLSMOD_CLOSED);
	assert_int_equal(ops->shutdown(cli), 0);
	assert_int_equal(ops->read(srv, buf, sizeof(buf)), TLSMOD_CLOSED);
}

/* A full handshake between the module's sides: name, v4, bracketed v6. */
static void
test_handshake(void **state)
{
	static const char *hosts[] = { "example.test", "127.0.0.1", "[::1]",
	    "Mixed.Case.test" };
	struct side	 s, c;
	char		 err[512];
	int		 fd[2];

	(void)state;
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		sockpair(fd);
		memset(&s, 0, sizeof(s));
		memset(&c, 0, sizeof(c));
		s.conn = ops->server_new(ca_a, fd[0], hosts[i], err,
		    sizeof(err));
		assert_non_null(s.conn);
		c.conn = ops->client_new(ca_b, fd[1], hosts[i], err,
		    sizeof(err));
		assert_non_null(c.conn);
		assert_string_equal(ops->version(c.conn), "");
		run(&s, &c);
		if (s.rc != 0 || c.rc != 0)
			fail_msg("%s: server %d (%s), client %d (%s)", hosts[i],
			    s.rc, ops->error(s.conn), c.rc,
			    ops->error(c.conn));
		assert_string_equal(ops->version(c.conn), "TLSv1.3");
		assert_string_equal(ops->version(s.conn), "TLSv1.3");
		exchange(s.conn, c.conn);
		ops->conn_free(s.conn);
		ops->conn_free(c.conn);
		/* The module never closes the proxy's descriptors. */
		assert_int_equal(fcntl(fd[0], F_GETFD), 0);
		assert_int_equal(fcntl(fd[1], F_GETFD), 0);
		close(fd[0]);
		close(fd[1]);
	}
}

/* The client's SNI must name the host the server side is for. */
static void
test_sni_mismatch(void **state)
{
	struct side	 s = { 0 }, c = { 0 };
	char		 err[512];
	int		 fd[2];

	(void)state;
	sockpair(fd);
	assert_non_null(s.conn = ops->server_new(ca_a, fd[0], "a.example",
	    err, sizeof(err)));
	assert_non_null(c.conn = ops->client_new(ca_b, fd[1], "b.example",
	    err, sizeof(err)));
	run(&s, &c);
	assert_int_equal(s.rc, TLSMOD_ERROR);
	assert_string_equal(ops->error(s.conn),
	    "sni-mismatch: the client asked for b.example");
	assert_int_equal(c.rc, TLSMOD_ERROR);
	assert_non_null(strstr(ops->error(c.conn), "unrecognized name"));
	ops->conn_free(s.conn);
	ops->conn_free(c.conn);
	close(fd[0]);
	close(fd[1]);
}

/*
 * SNI compared as names are: case aside, a trailing dot aside; and ALPN:
 * http/1.1 chosen among others, h2 alone refused, none at all fine.
 */
static void
test_sni_alpn(void **state)
{
	static const struct {
		const char		*sni;
		const char		*alpn;	/* wire format */
		unsigned		 alpnlen;
		const char		*err;	/* NULL: succeeds */
		const char		*chosen;
	} cases[] = {
		{ "EXAMPLE.Test.", NULL, 0, NULL, NULL },
		{ "example.test", "\x02h2\x08http/1.1", 12, NULL, "http/1.1" },
		{ "example.test", "\x02h2", 3,
		    "no-alpn: the client offers h2 only", NULL },
		{ "example.test", "\x02h2\x06spdy/3", 10,
		    "no-alpn: the client offers h2, spdy/3 only", NULL },
		{ "example.testx", NULL, 0,
		    "sni-mismatch: the client asked for example.testx", NULL },
		{ NULL, "\x08http/1.1", 9, NULL, "http/1.1" },
	};
	const unsigned char	*sel;
	unsigned		 sellen;
	struct side		 s, c;
	SSL_CTX			*ctx = test_ctx(TLS_client_method());
	char			 err[512];
	int			 fd[2];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sockpair(fd);
		memset(&s, 0, sizeof(s));
		memset(&c, 0, sizeof(c));
		assert_non_null(s.conn = ops->server_new(ca_a, fd[0],
		    "example.test", err, sizeof(err)));
		assert_non_null(c.ssl = SSL_new(ctx));
		SSL_set_fd(c.ssl, fd[1]);
		SSL_set_connect_state(c.ssl);
		if (cases[i].sni != NULL)
			SSL_set_tlsext_host_name(c.ssl, cases[i].sni);
		if (cases[i].alpn != NULL)
			assert_int_equal(SSL_set_alpn_protos(c.ssl,
			    (const unsigned char *)cases[i].alpn,
			    cases[i].alpnlen), 0);
		run(&s, &c);
		if (cases[i].err == NULL) {
			if (s.rc != 0 || c.rc != 0)
				fail_msg("case %zu: %s", i, ops->error(s.conn));
		} else {
			assert_int_equal(s.rc, TLSMOD_ERROR);
			assert_string_equal(ops->error(s.conn), cases[i].err);
			assert_int_not_equal(c.rc, 0);
		}
		if (cases[i].chosen != NULL) {
			SSL_get0_alpn_selected(c.ssl, &sel, &sellen);
			assert_int_equal(sellen, strlen(cases[i].chosen));
			assert_memory_equal(sel, cases[i].chosen, sellen);
		}
		ops->conn_free(s.conn);
		SSL_free(c.ssl);
		close(fd[0]);
		close(fd[1]);
	}
	SSL_CTX_free(ctx);
}

/*
 * The leaf the module serves: for the host (SAN), for servers (EKU),
 * signed by the CA, within its validity; the same one for the same host.
 */
static void
test_leaf(void **state)
{
	X509		*leaf, *again, *ca;
	BIO		*bio;
	GENERAL_NAMES	*san;
	GENERAL_NAME	*gn;
	EXTENDED_KEY_USAGE *eku;
	struct side	 s, c;
	SSL_CTX		*ctx = test_ctx(TLS_client_method());
	char		 err[512];
	int		 fd[2], round;

	(void)state;
	leaf = again = NULL;
	for (round = 0; round < 2; round++) {
		sockpair(fd);
		memset(&s, 0, sizeof(s));
		memset(&c, 0, sizeof(c));
		assert_non_null(s.conn = ops->server_new(ca_a, fd[0],
		    "leaf.example", err, sizeof(err)));
		assert_non_null(c.ssl = SSL_new(ctx));
		SSL_set_fd(c.ssl, fd[1]);
		SSL_set_connect_state(c.ssl);
		run(&s, &c);
		assert_int_equal(c.rc, 0);
		if (round == 0)
			leaf = SSL_get1_peer_certificate(c.ssl);
		else
			again = SSL_get1_peer_certificate(c.ssl);
		ops->conn_free(s.conn);
		SSL_free(c.ssl);
		close(fd[0]);
		close(fd[1]);
	}
	assert_non_null(leaf);
	assert_non_null(again);
	assert_int_equal(X509_cmp(leaf, again), 0);
	san = X509_get_ext_d2i(leaf, NID_subject_alt_name, NULL, NULL);
	assert_non_null(san);
	assert_int_equal(sk_GENERAL_NAME_num(san), 1);
	gn = sk_GENERAL_NAME_value(san, 0);
	assert_int_equal(gn->type, GEN_DNS);
	assert_string_equal((const char *)ASN1_STRING_get0_data(gn->d.dNSName),
	    "leaf.example");
	GENERAL_NAMES_free(san);
	eku = X509_get_ext_d2i(leaf, NID_ext_key_usage, NULL, NULL);
	assert_non_null(eku);
	assert_int_equal(sk_ASN1_OBJECT_num(eku), 1);
	assert_int_equal(OBJ_obj2nid(sk_ASN1_OBJECT_value(eku, 0)),
	    NID_server_auth);
	EXTENDED_KEY_USAGE_free(eku);
	bio = BIO_new_mem_buf(ops->ca_pem(ca_a), -1);
	assert_non_null(ca = PEM_read_bio_X509(bio, NULL, NULL, NULL));
	BIO_free(bio);
	assert_int_equal(X509_verify(leaf, X509_get0_pubkey(ca)), 1);
	assert_int_equal(X509_check_issued(ca, leaf), X509_V_OK);
	assert_true(ASN1_TIME_compare(X509_get0_notAfter(leaf),
	    X509_get0_notAfter(ca)) <= 0);
	assert_true(ASN1_TIME_compare(X509_get0_notBefore(leaf),
	    X509_get0_notBefore(ca)) >= 0);
	X509_free(ca);
	X509_free(leaf);
	X509_free(again);
	SSL_CTX_free(ctx);
}

/* The CA made now: what the design promises of it. */
static void
test_ca_made(void **state)
{
	BASIC_CONSTRAINTS	*bc;
	ASN1_BIT_STRING		*ku;
	X509_NAME_ENTRY		*e;
	const char		*cn;
	EVP_PKEY		*pk;
	char			 name[80];
	X509			*ca;
	BIO			*bio;
	int			 crit, days, secs;

	(void)state;
	bio = BIO_new_mem_buf(ops->ca_pem(ca_a), -1);
	assert_non_null(ca = PEM_read_bio_X509(bio, NULL, NULL, NULL));
	BIO_free(bio);
	e = X509_NAME_get_entry(X509_get_subject_name(ca),
	    X509_NAME_get_index_by_NID(X509_get_subject_name(ca),
	    NID_commonName, -1));
	assert_non_null(e);
	cn = (const char *)ASN1_STRING_get0_data(X509_NAME_ENTRY_get_data(e));
	snprintf(name, sizeof(name), "%s", cn);
	assert_int_equal(strncmp(name, "pisbx run CA ", 13), 0);
	assert_int_equal(strlen(name), 13 + 16);
	assert_int_equal(strspn(name + 13, "0123456789abcdef"), 16);
	bc = X509_get_ext_d2i(ca, NID_basic_constraints, &crit, NULL);
	assert_non_null(bc);
	assert_int_equal(crit, 1);
	assert_true(bc->ca);
	assert_int_equal(ASN1_INTEGER_get(bc->pathlen), 0);
	BASIC_CONSTRAINTS_free(bc);
	ku = X509_get_ext_d2i(ca, NID_key_usage, NULL, NULL);
	assert_non_null(ku);
	assert_true(ASN1_BIT_STRING_get_bit(ku, 5));	/* keyCertSign */
	assert_true(ASN1_BIT_STRING_get_bit(ku, 6));	/* cRLSign */
	assert_false(ASN1_BIT_STRING_get_bit(ku, 0));
	ASN1_BIT_STRING_free(ku);
	assert_non_null(pk = X509_get0_pubkey(ca));
	assert_int_equal(EVP_PKEY_get_id(pk), EVP_PKEY_EC);
	assert_int_equal(EVP_PKEY_get_bits(pk), 256);
	assert_int_equal(ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(ca),
	    X509_get0_notAfter(ca)), 1);
	assert_int_equal(days, 30);
	assert_int_equal(secs, 3600);
	/* Two CAs made now are two CAs. */
	assert_string_not_equal(ops->ca_pem(ca_a), ops->ca_pem(ca_b));
	X509_free(ca);
}

/* Upstreams that must not pass, with a reason a person can act on. */
static void
test_upstream_refused(void **state)
{
	struct tlsmod_ca_opts	 o = { 0 };
	struct tlsmod_ca	*ca_c;
	struct side		 s, c;
	SSL_CTX			*ctx;
	char			 err[512];
	int			 fd[2];

	(void)state;
	/* A leaf of a CA the upstream side does not trust. */
	assert_non_null(ca_c = ops->ca_new(&o, err, sizeof(err)));
	sockpair(fd);
	memset(&s, 0, sizeof(s));
	memset(&c, 0, sizeof(c));
	assert_non_null(s.conn = ops->server_new(ca_a, fd[0], "example.test",
	    err, sizeof(err)));
	assert_non_null(c.conn = ops->client_new(ca_c, fd[1], "example.test",
	    err, sizeof(err)));
	run(&s, &c);
	assert_int_equal(c.rc, TLSMOD_ERROR);
	assert_string_equal(ops->error(c.conn), "certificate verify failed: "
	    "self-signed certificate in certificate chain");
	ops->conn_free(s.conn);
	ops->conn_free(c.conn);
	close(fd[0]);
	close(fd[1]);
	ops->ca_free(ca_c);

	/* A trusted CA's leaf for another address (no SNI with literals). */
	sockpair(fd);
	memset(&s, 0, sizeof(s));
	memset(&c, 0, sizeof(c));
	assert_non_null(s.conn = ops->server_new(ca_a, fd[0], "127.0.0.1",
	    err, sizeof(err)));
	assert_non_null(c.conn = ops->client_new(ca_b, fd[1], "127.0.0.2",
	    err, sizeof(err)));
	run(&s, &c);
	assert_int_equal(c.rc, TLSMOD_ERROR);
	assert_string_equal(ops->error(c.conn),
	    "certificate verify failed: IP address mismatch");
	ops->conn_free(s.conn);
	ops->conn_free(c.conn);
	close(fd[0]);
	close(fd[1]);

	/* A self-signed server certificate, served by OpenSSL itself. */
	ctx = test_ctx(TLS_server_method());
	assert_int_equal(SSL_CTX_use_certificate_file(ctx, in_dir("self.pem"),
	    SSL_FILETYPE_PEM), 1);
	assert_int_equal(SSL_CTX_use_PrivateKey_file(ctx, in_dir("self.key"),
	    SSL_FILETYPE_PEM), 1);
	sockpair(fd);
	memset(&s, 0, sizeof(s));
	memset(&c, 0, sizeof(c));
	assert_non_null(s.ssl = SSL_new(ctx));
	SSL_set_fd(s.ssl, fd[0]);
	SSL_set_accept_state(s.ssl);
	assert_non_null(c.conn = ops->client_new(ca_b, fd[1], "example.test",
	    err, sizeof(err)));
	run(&s, &c);
	assert_int_equal(c.rc, TLSMOD_ERROR);
	assert_string_equal(ops->error(c.conn),
	    "certificate verify failed: self-signed certificate");
	SSL_free(s.ssl);
	ops->conn_free(c.conn);
	close(fd[0]);
	close(fd[1]);

	/* A server that speaks TLS 1.1 at most: the module needs 1.2. */
	SSL_CTX_set_security_level(ctx, 0);
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_1_VERSION) != 1 ||
	    SSL_CTX_set_max_proto_version(ctx, TLS1_1_VERSION) != 1 ||
	    SSL_CTX_set_cipher_list(ctx, "DEFAULT:@SECLEVEL=0") != 1) {
		SSL_CTX_free(ctx);
		skip();	/* this OpenSSL cannot serve TLS 1.1 at all */
	}
	sockpair(fd);
	memset(&s, 0, sizeof(s));
	memset(&c, 0, sizeof(c));
	assert_non_null(s.ssl = SSL_new(ctx));
	SSL_set_fd(s.ssl, fd[0]);
	SSL_set_accept_state(s.ssl);
	assert_non_null(c.conn = ops->client_new(ca_b, fd[1], "example.test",
	    err, sizeof(err)));
	run(&s, &c);
	assert_int_equal(c.rc, TLSMOD_ERROR);
	assert_string_equal(ops->error(c.conn),
	    "handshake: tlsv1 alert protocol version");
	SSL_free(s.ssl);
	ops->conn_free(c.conn);
	close(fd[0]);
	close(fd[1]);
	SSL_CTX_free(ctx);
}

/* A CA from files: the key must be private, the pair must match. */
static void
test_ca_files(void **state)
{
	struct tlsmod_ca_opts	 o = { 0 };
	struct tlsmod_ca	*ca;
	const char		*extra[1];
	struct side		 s, c;
	char			 err[512], want[PATH_MAX + 128];
	int			 fd[2];

	(void)state;
	o.cert_path = in_dir("ca.pem");
	o.key_path = in_dir("ca.key");
	assert_int_equal(chmod(o.key_path, 0600), 0);
	ca = ops->ca_new(&o, err, sizeof(err));
	if (ca == NULL)
		fail_msg("ca_new: %s", err);
	/* Its leaves pass a client that trusts the file's CA. */
	{
		struct tlsmod_ca_opts	 t = { 0 };
		struct tlsmod_ca	*trusting;

		extra[0] = in_dir("ca.pem");
		t.extra_ca = extra;
		t.nextra = 1;
		assert_non_null(trusting = ops->ca_new(&t, err, sizeof(err)));
		sockpair(fd);
		memset(&s, 0, sizeof(s));
		memset(&c, 0, sizeof(c));
		assert_non_null(s.conn = ops->server_new(ca, fd[0],
		    "files.example", err, sizeof(err)));
		assert_non_null(c.conn = ops->client_new(trusting, fd[1],
		    "files.example", err, sizeof(err)));
		run(&s, &c);
		if (s.rc != 0 || c.rc != 0)
			fail_msg("%s / %s", ops->error(s.conn),
			    ops->error(c.conn));
		ops->conn_free(s.conn);
		ops->conn_free(c.conn);
		close(fd[0]);
		close(fd[1]);
		ops->ca_free(trusting);
	}
	ops->ca_free(ca);

	/* Readable by others: refused, naming the path. */
	assert_int_equal(chmod(o.key_path, 0644), 0);
	assert_null(ops->ca_new(&o, err, sizeof(err)));
	snprintf(want, sizeof(want), "caKeyPath %s: mode 0644 lets others "
	    "read it: the CA key must be a private file (chmod 600)",
	    o.key_path);
	assert_string_equal(err, want);
	assert_int_equal(chmod(o.key_path, 0640), 0);
	assert_null(ops->ca_new(&o, err, sizeof(err)));
	assert_non_null(strstr(err, "mode 0640"));
	assert_int_equal(chmod(o.key_path, 0600), 0);

	/* A symbolic link to it: refused (the check is of the link). */
	sh("ln -sf ca.key link.key");
	o.key_path = in_dir("link.key");
	assert_null(ops->ca_new(&o, err, sizeof(err)));
	assert_non_null(strstr(err, "link.key: a symbolic link"));

	/* Another certificate's key. */
	o.key_path = in_dir("self.key");
	assert_int_equal(chmod(o.key_path, 0600), 0);
	assert_null(ops->ca_new(&o, err, sizeof(err)));
	if (strstr(err, "not the key of the certificate") == NULL)
		fail_msg("%s", err);

	/* A certificate that is no CA. */
	o.cert_path = in_dir("self.pem");
	assert_null(ops->ca_new(&o, err, sizeof(err)));
	snprintf(want, sizeof(want), "caCertPath %s: not a CA certificate "
	    "(no basicConstraints CA:TRUE)", o.cert_path);
	assert_string_equal(err, want);

	/* One without the other; a missing file. */
	o.key_path = NULL;
	assert_null(ops->ca_new(&o, err, sizeof(err)));
	assert_string_equal(err, "caCertPath and caKeyPath go together");
	o.cert_path = in_dir("nosuch.pem");
	o.key_path = in_dir("ca.key");
	assert_null(ops->ca_new(&o, err, sizeof(err)));
	assert_non_null(strstr(err, "nosuch.pem: No such file"));

	/* An extra CA file that does not load: named. */
	memset(&o, 0, sizeof(o));
	extra[0] = in_dir("ca.key");
	o.extra_ca = extra;
	o.nextra = 1;
	assert_null(ops->ca_new(&o, err, sizeof(err)));
	snprintf(want, sizeof(want), "extraCaCertPaths %s", extra[0]);
	assert_int_equal(strncmp(err, want, strlen(want)), 0);
}

/*
 * The trust store: one certificate bag per certificate of the bundle,
 * each with Java's trusted-key-usage attribute = anyExtendedKeyUsage,
 * no encryption and no MAC (Java then needs no password).
 */
static void
test_truststore(void **state)
{
	STACK_OF(PKCS7)		*safes;
	STACK_OF(PKCS12_SAFEBAG) *bags;
	const ASN1_TYPE		*t;
	PKCS12_SAFEBAG		*bag;
	ASN1_OBJECT		*jdk;
	PKCS12			*p12;
	BIO			*bio;
	FILE			*f;
	char			 bundle[PATH_MAX], err[512];
	int			 fd, n = 0;

	(void)state;
	sh("cat a.pem ca.pem > bundle.pem");
	snprintf(bundle, sizeof(bundle), "%s", in_dir("bundle.pem"));
	fd = open(in_dir("trust.p12"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	if (ops->truststore(ca_a, bundle, fd, err, sizeof(err)) != 0)
		fail_msg("truststore: %s", err);
	close(fd);
	assert_non_null(f = fopen(in_dir("trust.p12"), "rb"));
	p12 = d2i_PKCS12_fp(f, NULL);
	fclose(f);
	assert_non_null(p12);
	assert_int_equal(PKCS12_mac_present(p12), 0);
	assert_non_null(jdk = OBJ_txt2obj("2.16.840.1.113894.746875.1.1", 1));
	assert_non_null(safes = PKCS12_unpack_authsafes(p12));
	assert_int_equal(sk_PKCS7_num(safes), 1);
	assert_int_equal(OBJ_obj2nid(sk_PKCS7_value(safes, 0)->type),
	    NID_pkcs7_data);
	assert_non_null(bags = PKCS12_unpack_p7data(sk_PKCS7_value(safes, 0)));
	for (int i = 0; i < sk_PKCS12_SAFEBAG_num(bags); i++) {
		bag = sk_PKCS12_SAFEBAG_value(bags, i);
		assert_int_equal(PKCS12_SAFEBAG_get_nid(bag), NID_certBag);
		t = NULL;
		for (int k = 0; k < sk_X509_ATTRIBUTE_num(
		    PKCS12_SAFEBAG_get0_attrs(bag)); k++) {
			X509_ATTRIBUTE *a = sk_X509_ATTRIBUTE_value(
			    PKCS12_SAFEBAG_get0_attrs(bag), k);

			if (OBJ_cmp(X509_ATTRIBUTE_get0_object(a), jdk) == 0)
				t = X509_ATTRIBUTE_get0_type(a, 0);
		}
		assert_non_null(t);
		assert_int_equal(t->type, V_ASN1_OBJECT);
		assert_int_equal(OBJ_obj2nid(t->value.object),
		    NID_anyExtendedKeyUsage);
		n++;
	}
	assert_int_equal(n, 2);
	sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
	sk_PKCS7_pop_free(safes, PKCS7_free);
	ASN1_OBJECT_free(jdk);
	PKCS12_free(p12);
	/* A bundle without certificates, a missing bundle. */
	bio = NULL;
	(void)bio;
	fd = open("/dev/null", O_WRONLY);
	assert_int_equal(ops->truststore(ca_a, in_dir("ca.key"), fd, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "no certificate in it"));
	assert_int_equal(ops->truststore(ca_a, in_dir("nosuch"), fd, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "nosuch: No such file"));
	close(fd);
}

/* extract: compile checks, and group 1 of every match as JS's "g". */
static void
test_regex(void **state)
{
	static const struct {
		const char	*re;
		const char	*text;
		int		 n;		/* spans, or -1 */
		size_t		 span[3][2];
	} cases[] = {
		{ "token=(\\w+)", "a token=abc&token=de", 2,
		    { { 8, 3 }, { 18, 2 } } },
		{ "(\\d+)", "a1 b22 c333", 3, { { 1, 1 }, { 4, 2 }, { 8, 3 } } },
		/* Empty matches advance one byte; empty groups give none. */
		{ "(x*)", "axxbx", 2, { { 1, 2 }, { 4, 1 } } },
		/* JavaScript's \u escape. */
		{ "\\u0041(\\w)", "zAbAc", 2, { { 2, 1 }, { 4, 1 } } },
		/* Group 1 not taking part. */
		{ "(a)|b", "bbb", 0, { { 0, 0 } } },
		{ "key: \"([^\"]+)\"", "{key: \"s3cr3t\"}", 1, { { 7, 6 } } },
		{ "(.)", "", 0, { { 0, 0 } } },
	};
	size_t	 spans[3][2];
	char	 err[512];
	int	 n;

	(void)state;
	assert_int_equal(ops->regex_check("^Bearer (.+)$", err, sizeof(err)),
	    0);
	assert_int_equal(ops->regex_check("no group", err, sizeof(err)), -1);
	assert_string_equal(err, "extract /no group/: no capturing group "
	    "(group 1 is the secret)");
	assert_int_equal(ops->regex_check("(?:x)", err, sizeof(err)), -1);
	assert_int_equal(ops->regex_check("(unclosed", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "extract /(unclosed/: missing closing "
	    "parenthesis at offset 9"));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = ops->regex_spans(cases[i].re, cases[i].text,
		    strlen(cases[i].text), spans, 3, err, sizeof(err));
		if (n != cases[i].n)
			fail_msg("/%s/ on \"%s\": %d spans, not %d (%s)",
			    cases[i].re, cases[i].text, n, cases[i].n,
			    n < 0 ? err : "");
		for (int k = 0; k < n; k++) {
			assert_int_equal(spans[k][0], cases[i].span[k][0]);
			assert_int_equal(spans[k][1], cases[i].span[k][1]);
		}
	}
	/* Bytes after a NUL are searched too: the length rules. */
	n = ops->regex_spans("k=(\\w+)", "\0k=v", 4, spans, 3, err,
	    sizeof(err));
	assert_int_equal(n, 1);
	assert_int_equal(spans[0][0], 3);
	/* More matches than room: an error, not a silent cut. */
	assert_int_equal(ops->regex_spans("(\\d)", "1234", 4, spans, 3, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 3 matches"));
}

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		cmocka_unit_test(test_handshake),
		cmocka_unit_test(test_sni_mismatch),
		cmocka_unit_test(test_sni_alpn),
		cmocka_unit_test(test_leaf),
		cmocka_unit_test(test_ca_made),
		cmocka_unit_test(test_upstream_refused),
		cmocka_unit_test(test_ca_files),
		cmocka_unit_test(test_truststore),
		cmocka_unit_test(test_regex),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
