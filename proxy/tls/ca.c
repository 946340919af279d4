/*
 * The run's certificate authority: read from the configured files or made
 * now, the leaf certificates it signs for the hosts the proxy terminates
 * (made once per host and kept), the upstream sessions kept for
 * resumption, and the PKCS#12 trust store for Java.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "common/secmem.h"
#include "proxy/tls/tls.h"

#define CA_DAYS		30
#define LEAF_DAYS	30
#define KEY_FILE_MAX	(64 * 1024)
/* Java's "trusted for" attribute, and its value: any purpose. */
#define JDK_TRUST_OID	"2.16.840.1.113894.746875.1.1"
#define ANY_EKU_OID	"2.5.29.37.0"

static EVP_PKEY	*key_p256(void);
static int	 set_serial(X509 *);
static int	 add_ext(X509 *, X509 *, int, const char *);
static int	 sign(X509 *, EVP_PKEY *);
static int	 ca_make(struct tlsmod_ca *, char *, size_t);
static int	 ca_load(struct tlsmod_ca *, const char *, const char *, char *,
		    size_t);
static EVP_PKEY	*key_read(const char *, char *, size_t);
static int	 no_password_cb(char *, int, int, void *);
static int	 asn1_time(const ASN1_TIME *, time_t *);
static const char *host_bare(const char *, char *, size_t);
static int	 host_valid(const char *);
static unsigned	 host_hash(const char *);
static X509	*leaf_make(struct tlsmod_ca *, const char *, time_t *, char *,
		    size_t);
static void	 leaves_drop(struct tlsmod_ca *);

/* "what: OpenSSL's reason" from the error queue, which is then empty. */
void
tls_errstr(char *buf, size_t len, const char *what)
{
	unsigned long	 e;
	const char	*r;
	char		 tmp[256];

	e = ERR_peek_last_error();
	ERR_clear_error();
	if (e == 0) {
		snprintf(buf, len, "%s", what);
		return;
	}
	if ((r = ERR_reason_error_string(e)) == NULL) {
		ERR_error_string_n(e, tmp, sizeof(tmp));
		r = tmp;
	}
	snprintf(buf, len, "%s: %s", what, r);
}

/* A new P-256 key, or NULL. */
static EVP_PKEY *
key_p256(void)
{
	return EVP_EC_gen("P-256");
}

/* A random positive 127-bit serial number (RFC 5280: at most 20 bytes). */
static int
set_serial(X509 *x)
{
	unsigned char	 b[16];
	BIGNUM		*bn;
	int		 ok;

	if (RAND_bytes(b, sizeof(b)) != 1)
		return -1;
	b[0] &= 0x7f;
	b[0] |= 0x40;	/* never a short, never a zero serial */
	if ((bn = BN_bin2bn(b, sizeof(b), NULL)) == NULL)
		return -1;
	ok = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
	BN_free(bn);
	return ok ? 0 : -1;
}

/* Add an extension written as openssl.cnf writes it (fixed text only). */
static int
add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX	 ctx;
	X509_EXTENSION	*ext;
	int		 ok;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	if ((ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)) == NULL)
		return -1;
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -1;
}

/* Sign with SHA-256, or with no digest for the keys that take none. */
static int
sign(X509 *x, EVP_PKEY *key)
{
	const EVP_MD	*md = EVP_sha256();

	switch (EVP_PKEY_get_id(key)) {
	case EVP_PKEY_ED25519:
	case EVP_PKEY_ED448:
		md = NULL;
		break;
	}
	return X509_sign(x, key, md) > 0 ? 0 : -1;
}

/*
 * The per-run CA: a P-256 key that never leaves this process, a
 * self-signed certificate good for 30 days (an hour back, for clocks a
 * little behind), allowed to sign leaves only (pathlen:0).
 */
static int
ca_make(struct tlsmod_ca *ca, char *err, size_t errlen)
{
	unsigned char	 r[8];
	char		 cn[64];
	X509_NAME	*name;
	X509		*x = NULL;
	size_t		 i;

	if ((ca->key = key_p256()) == NULL) {
		tls_errstr(err, errlen, "cannot make the CA key");
		return -1;
	}
	if (RAND_bytes(r, sizeof(r)) != 1)
		goto fail;
	i = (size_t)snprintf(cn, sizeof(cn), "pisbx run CA ");
	for (size_t k = 0; k < sizeof(r); k++, i += 2)
		snprintf(cn + i, sizeof(cn) - i, "%02x", r[k]);
	if ((x = X509_new()) == NULL || X509_set_version(x, 2) != 1 ||
	    set_serial(x) == -1)
		goto fail;
	name = X509_get_subject_name(x);
	if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	    (const unsigned char *)cn, -1, -1, 0) != 1 ||
	    X509_set_issuer_name(x, name) != 1 ||
	    X509_gmtime_adj(X509_getm_notBefore(x), -3600) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x),
	    (long)CA_DAYS * 24 * 3600) == NULL ||
	    X509_set_pubkey(x, ca->key) != 1)
		goto fail;
	if (add_ext(x, x, NID_basic_constraints,
	    "critical,CA:TRUE,pathlen:0") == -1 ||
	    add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") == -1 ||
	    add_ext(x, x, NID_subject_key_identifier, "hash") == -1 ||
	    sign(x, ca->key) == -1)
		goto fail;
	ca->cert = x;
	return 0;
fail:
	X509_free(x);
	tls_errstr(err, errlen, "cannot make the CA certificate");
	return -1;
}

/* OpenSSL would ask a terminal for a password: there is none to give. */
static int
no_password_cb(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

/*
 * The CA's private key, from a file that must be private: a regular file
 * (not a link: O_NOFOLLOW), ours, without group or other permissions --
 * the key that makes every host's certificate.
 */
static EVP_PKEY *
key_read(const char *path, char *err, size_t errlen)
{
	struct stat	 st;
	unsigned char	*buf = NULL;
	EVP_PKEY	*key = NULL;
	BIO		*bio = NULL;
	ssize_t		 n;
	size_t		 len = 0;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) == -1) {
		snprintf(err, errlen, "caKeyPath %s: %s", path,
		    errno == ELOOP ? "a symbolic link (name the file itself)" :
		    strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "caKeyPath %s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "caKeyPath %s: not a regular file", path);
		goto fail;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "caKeyPath %s: owned by uid %u, not by "
		    "this user (uid %u): the CA key must be a private file",
		    path, (unsigned)st.st_uid, (unsigned)geteuid());
		goto fail;
	}
	if ((st.st_mode & 077) != 0) {
		snprintf(err, errlen, "caKeyPath %s: mode %04o lets others "
		    "read it: the CA key must be a private file (chmod 600)",
		    path, (unsigned)(st.st_mode & 07777));
		goto fail;
	}
	if (st.st_size > KEY_FILE_MAX) {
		snprintf(err, errlen, "caKeyPath %s: larger than %d bytes: not "
		    "a PEM key", path, KEY_FILE_MAX);
		goto fail;
	}
	if ((buf = malloc(KEY_FILE_MAX)) == NULL) {
		snprintf(err, errlen, "caKeyPath %s: %s", path, strerror(errno));
		goto fail;
	}
	while (len < KEY_FILE_MAX &&
	    (n = read(fd, buf + len, KEY_FILE_MAX - len)) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "caKeyPath %s: %s", path,
			    strerror(errno));
			goto fail;
		}
		len += (size_t)n;
	}
	if ((bio = BIO_new_mem_buf(buf, (int)len)) == NULL ||
	    (key = PEM_read_bio_PrivateKey(bio, NULL, no_password_cb,
	    NULL)) == NULL) {
		char	 what[PATH_MAX + 64];

		snprintf(what, sizeof(what), "caKeyPath %s: not a PEM private "
		    "key without a password", path);
		tls_errstr(err, errlen, what);
	}
fail:
	BIO_free(bio);
	if (buf != NULL) {
		secmem_wipe(buf, KEY_FILE_MAX);
		free(buf);
	}
	close(fd);
	return key;
}

/* The configured CA: a CA certificate and the key it was made with. */
static int
ca_load(struct tlsmod_ca *ca, const char *certpath, const char *keypath,
    char *err, size_t errlen)
{
	BASIC_CONSTRAINTS	*bc;
	BIO			*bio;
	char			 what[PATH_MAX + 64];
	time_t			 end;
	int			 isca;

	if ((bio = BIO_new_file(certpath, "r")) == NULL) {
		snprintf(err, errlen, "caCertPath %s: %s", certpath,
		    strerror(errno));
		ERR_clear_error();
		return -1;
	}
	ca->cert = PEM_read_bio_X509(bio, NULL, no_password_cb, NULL);
	BIO_free(bio);
	if (ca->cert == NULL) {
		snprintf(what, sizeof(what), "caCertPath %s: no PEM "
		    "certificate", certpath);
		tls_errstr(err, errlen, what);
		return -1;
	}
	bc = X509_get_ext_d2i(ca->cert, NID_basic_constraints, NULL, NULL);
	isca = bc != NULL && bc->ca;
	BASIC_CONSTRAINTS_free(bc);
	if (!isca) {
		snprintf(err, errlen, "caCertPath %s: not a CA certificate "
		    "(no basicConstraints CA:TRUE)", certpath);
		return -1;
	}
	if (asn1_time(X509_get0_notAfter(ca->cert), &end) == -1 ||
	    end <= time(NULL)) {
		snprintf(err, errlen, "caCertPath %s: the certificate has "
		    "expired", certpath);
		return -1;
	}
	if ((ca->key = key_read(keypath, err, errlen)) == NULL)
		return -1;
	if (X509_check_private_key(ca->cert, ca->key) != 1) {
		ERR_clear_error();
		snprintf(err, errlen, "caKeyPath %s: not the key of the "
		    "certificate in caCertPath %s", keypath, certpath);
		return -1;
	}
	return 0;
}

/* The CA of the options' files, or a new one; its contexts. */
struct tlsmod_ca *
tls_ca_new(const struct tlsmod_ca_opts *o, char *err, size_t errlen)
{
	struct tlsmod_ca	*ca;
	BIO			*bio = NULL;
	BUF_MEM			*mem;

	ERR_clear_error();
	if ((o->cert_path == NULL) != (o->key_path == NULL)) {
		snprintf(err, errlen, "caCertPath and caKeyPath go together");
		return NULL;
	}
	if ((ca = calloc(1, sizeof(*ca))) == NULL) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	if (o->cert_path != NULL) {
		if (ca_load(ca, o->cert_path, o->key_path, err, errlen) == -1)
			goto fail;
	} else if (ca_make(ca, err, errlen) == -1)
		goto fail;
	if ((ca->leafkey = key_p256()) == NULL) {
		tls_errstr(err, errlen, "cannot make the leaf key");
		goto fail;
	}
	if ((bio = BIO_new(BIO_s_mem())) == NULL ||
	    PEM_write_bio_X509(bio, ca->cert) != 1 ||
	    BIO_get_mem_ptr(bio, &mem) != 1 ||
	    (ca->pem = malloc(mem->length + 1)) == NULL) {
		tls_errstr(err, errlen, "cannot write the CA certificate");
		goto fail;
	}
	memcpy(ca->pem, mem->data, mem->length);
	ca->pem[mem->length] = '\0';
	BIO_free(bio);
	bio = NULL;
	if (tls_ctx_setup(ca, o, err, errlen) == -1)
		goto fail;
	return ca;
fail:
	BIO_free(bio);
	tls_ca_free(ca);
	return NULL;
}

void
tls_ca_free(struct tlsmod_ca *ca)
{
	if (ca == NULL)
		return;
	leaves_drop(ca);
	for (size_t i = 0; i < TLS_SESS_MAX; i++)
		SSL_SESSION_free(ca->sess[i].sess);
	SSL_CTX_free(ca->server);
	SSL_CTX_free(ca->client);
	EVP_PKEY_free(ca->leafkey);
	EVP_PKEY_free(ca->key);
	X509_free(ca->cert);
	free(ca->pem);
	free(ca);
}

const char *
tls_ca_pem(const struct tlsmod_ca *ca)
{
	return ca->pem;
}

/* An ASN1_TIME as seconds since the epoch. */
static int
asn1_time(const ASN1_TIME *t, time_t *out)
{
	struct tm	 tm;

	if (ASN1_TIME_to_tm(t, &tm) != 1)
		return -1;
	*out = timegm(&tm);
	return 0;
}

/* host without the brackets of an IPv6 literal, lower case, into buf. */
static const char *
host_bare(const char *host, char *buf, size_t len)
{
	size_t	 n = strlen(host);

	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		host++;
		n -= 2;
	}
	if (n >= len)
		return NULL;
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)tolower((unsigned char)host[i]);
	buf[n] = '\0';
	return buf;
}

/* Whether host (bare) is an IPv4 or IPv6 literal. */
int
tls_host_is_ip(const char *host)
{
	unsigned char	 a[16];

	return inet_pton(AF_INET, host, a) == 1 ||
	    inet_pton(AF_INET6, host, a) == 1;
}

/* A name a certificate can carry: letters, digits, '-', '_', '.'. */
static int
host_valid(const char *host)
{
	size_t	 n = strlen(host);

	if (n == 0 || n > 253 || host[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)host[i]) && host[i] != '-' &&
		    host[i] != '_' && host[i] != '.')
			return 0;
	return 1;
}

/* FNV-1a. */
static unsigned
host_hash(const char *s)
{
	uint32_t	 h = 2166136261u;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h % TLS_LEAF_BUCKETS;
}

/*
 * A leaf for host (bare): the CA's one leaf key, SAN the name or the
 * address (clients ignore the CN), for servers only, valid from an hour
 * ago to 30 days on but never outside the CA's own validity.  *until:
 * when to make a new one.
 */
static X509 *
leaf_make(struct tlsmod_ca *ca, const char *host, time_t *until, char *err,
    size_t errlen)
{
	GENERAL_NAMES	*gens = NULL;
	GENERAL_NAME	*gn = NULL;
	ASN1_IA5STRING	*ia5 = NULL;
	ASN1_OCTET_STRING *ip = NULL;
	unsigned char	 a[16];
	time_t		 now, from, to, cafrom, cato;
	X509		*x = NULL;
	int		 alen = 0;

	if (inet_pton(AF_INET, host, a) == 1)
		alen = 4;
	else if (inet_pton(AF_INET6, host, a) == 1)
		alen = 16;
	else if (!host_valid(host)) {
		snprintf(err, errlen, "cannot make a certificate for \"%.64s\": "
		    "not a host name", host);
		return NULL;
	}
	now = time(NULL);
	if (asn1_time(X509_get0_notBefore(ca->cert), &cafrom) == -1 ||
	    asn1_time(X509_get0_notAfter(ca->cert), &cato) == -1) {
		snprintf(err, errlen, "the CA certificate's validity is "
		    "unreadable");
		return NULL;
	}
	from = now - 3600 < cafrom ? cafrom : now - 3600;
	to = now + (time_t)LEAF_DAYS * 24 * 3600;
	if (to > cato)
		to = cato;
	if (to <= now) {
		snprintf(err, errlen, "the CA certificate has expired");
		return NULL;
	}
	if ((x = X509_new()) == NULL || X509_set_version(x, 2) != 1 ||
	    set_serial(x) == -1 ||
	    X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) != 1 ||
	    ASN1_TIME_set(X509_getm_notBefore(x), from) == NULL ||
	    ASN1_TIME_set(X509_getm_notAfter(x), to) == NULL ||
	    X509_set_pubkey(x, ca->leafkey) != 1)
		goto fail;
	/* A CN is at most 64 characters; clients read the SAN anyway. */
	if (strlen(host) <= 64 && X509_NAME_add_entry_by_txt(
	    X509_get_subject_name(x), "CN", MBSTRING_ASC,
	    (const unsigned char *)host, -1, -1, 0) != 1)
		goto fail;
	/* The SAN built as a structure: no host text is ever parsed. */
	if ((gens = GENERAL_NAMES_new()) == NULL ||
	    (gn = GENERAL_NAME_new()) == NULL)
		goto fail;
	if (alen != 0) {
		if ((ip = ASN1_OCTET_STRING_new()) == NULL ||
		    ASN1_OCTET_STRING_set(ip, a, alen) != 1)
			goto fail;
		GENERAL_NAME_set0_value(gn, GEN_IPADD, ip);
		ip = NULL;
	} else {
		if ((ia5 = ASN1_IA5STRING_new()) == NULL ||
		    ASN1_STRING_set(ia5, host, -1) != 1)
			goto fail;
		GENERAL_NAME_set0_value(gn, GEN_DNS, ia5);
		ia5 = NULL;
	}
	if (sk_GENERAL_NAME_push(gens, gn) == 0)
		goto fail;
	gn = NULL;
	if (X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0,
	    X509V3_ADD_DEFAULT) != 1)
		goto fail;
	if (add_ext(x, ca->cert, NID_basic_constraints,
	    "critical,CA:FALSE") == -1 ||
	    add_ext(x, ca->cert, NID_key_usage,
	    "critical,digitalSignature") == -1 ||
	    add_ext(x, ca->cert, NID_ext_key_usage, "serverAuth") == -1 ||
	    add_ext(x, ca->cert, NID_authority_key_identifier,
	    "keyid") == -1 ||
	    sign(x, ca->key) == -1)
		goto fail;
	GENERAL_NAMES_free(gens);
	/* Remade an hour before it ends, so none is served about to expire. */
	*until = to - 3600 > now ? to - 3600 : to;
	return x;
fail:
	ASN1_OCTET_STRING_free(ip);
	ASN1_IA5STRING_free(ia5);
	GENERAL_NAME_free(gn);
	GENERAL_NAMES_free(gens);
	X509_free(x);
	tls_errstr(err, errlen, "cannot make a leaf certificate");
	return NULL;
}

static void
leaves_drop(struct tlsmod_ca *ca)
{
	struct tls_leaf	*l, *next;

	for (size_t i = 0; i < TLS_LEAF_BUCKETS; i++) {
		for (l = ca->leaves[i]; l != NULL; l = next) {
			next = l->next;
			X509_free(l->cert);
			free(l->host);
			free(l);
		}
		ca->leaves[i] = NULL;
	}
	ca->nleaves = 0;
}

/*
 * The leaf for host (a name or an IP literal, brackets allowed), made
 * once and kept until it nears its end.  The CA keeps the reference.
 * When TLS_LEAF_MAX hosts have one, all are dropped: a fresh start costs
 * a signature per host, an unbounded table costs memory without end.
 */
X509 *
tls_leaf_get(struct tlsmod_ca *ca, const char *host, char *err,
    size_t errlen)
{
	struct tls_leaf	*l, **pp;
	char		 bare[TLS_HOST_MAX];
	time_t		 until;
	X509		*x;
	unsigned	 h;

	if (host_bare(host, bare, sizeof(bare)) == NULL) {
		snprintf(err, errlen, "host name too long");
		return NULL;
	}
	h = host_hash(bare);
	for (pp = &ca->leaves[h]; (l = *pp) != NULL; pp = &l->next) {
		if (strcmp(l->host, bare) != 0)
			continue;
		if (time(NULL) < l->until)
			return l->cert;
		*pp = l->next;
		X509_free(l->cert);
		free(l->host);
		free(l);
		ca->nleaves--;
		break;
	}
	if ((x = leaf_make(ca, bare, &until, err, errlen)) == NULL)
		return NULL;
	if (ca->nleaves >= TLS_LEAF_MAX)
		leaves_drop(ca);
	if ((l = calloc(1, sizeof(*l))) == NULL ||
	    (l->host = strdup(bare)) == NULL) {
		free(l);
		X509_free(x);
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	l->cert = x;
	l->until = until;
	l->next = ca->leaves[h];
	ca->leaves[h] = l;
	ca->nleaves++;
	return x;
}

/* Keep host's newest session (the CA takes the reference). */
void
tls_sess_put(struct tlsmod_ca *ca, const char *host, SSL_SESSION *sess)
{
	struct tls_sess	*slot = NULL;

	for (size_t i = 0; i < TLS_SESS_MAX; i++) {
		struct tls_sess	*s = &ca->sess[i];

		if (s->sess != NULL && strcmp(s->host, host) == 0) {
			slot = s;
			break;
		}
		if (slot == NULL || (slot->sess != NULL &&
		    (s->sess == NULL || s->used < slot->used)))
			slot = s;
	}
	SSL_SESSION_free(slot->sess);
	snprintf(slot->host, sizeof(slot->host), "%s", host);
	slot->sess = sess;
	slot->used = ++ca->sessclock;
}

/* host's kept session, when it can resume (borrowed), else NULL. */
SSL_SESSION *
tls_sess_get(struct tlsmod_ca *ca, const char *host)
{
	for (size_t i = 0; i < TLS_SESS_MAX; i++) {
		struct tls_sess	*s = &ca->sess[i];

		if (s->sess == NULL || strcmp(s->host, host) != 0)
			continue;
		if (!SSL_SESSION_is_resumable(s->sess) ||
		    SSL_SESSION_get_time(s->sess) +
		    SSL_SESSION_get_timeout(s->sess) <= (long)time(NULL)) {
			SSL_SESSION_free(s->sess);
			s->sess = NULL;
			return NULL;
		}
		s->used = ++ca->sessclock;
		return s->sess;
	}
	return NULL;
}

/*
 * A PKCS#12 trust store of every certificate in bundle_path, each marked
 * as Java's keytool marks a trusted certificate entry (the Oracle
 * attribute 2.16.840.1.113894.746875.1.1 = anyExtendedKeyUsage; OpenSSL
 * 3.0's pkcs12 has no -jdktrust yet), unencrypted and without a MAC:
 * Java reads such a store without a password, and it holds nothing
 * secret.  Written to fd.
 */
int
tls_truststore(const struct tlsmod_ca *ca, const char *bundle_path, int fd,
    char *err, size_t errlen)
{
	STACK_OF(PKCS12_SAFEBAG) *bags = NULL;
	STACK_OF(PKCS7)	*safes = NULL;
	PKCS12_SAFEBAG	*bag;
	ASN1_OBJECT	*any = NULL;
	PKCS12		*p12 = NULL;
	BIO		*in = NULL, *out = NULL;
	BUF_MEM		*mem;
	X509		*x;
	size_t		 off;
	ssize_t		 n;
	int		 count = 0, rc = -1;
	char		 what[PATH_MAX + 64];

	(void)ca;
	ERR_clear_error();
	if ((in = BIO_new_file(bundle_path, "r")) == NULL) {
		snprintf(err, errlen, "%s: %s", bundle_path, strerror(errno));
		ERR_clear_error();
		return -1;
	}
	if ((any = OBJ_txt2obj(ANY_EKU_OID, 1)) == NULL)
		goto ossl;
	while ((x = PEM_read_bio_X509(in, NULL, no_password_cb, NULL)) !=
	    NULL) {
		bag = PKCS12_add_cert(&bags, x);
		X509_free(x);
		if (bag == NULL || PKCS12_add1_attr_by_txt(bag, JDK_TRUST_OID,
		    V_ASN1_OBJECT, (const unsigned char *)any, -1) != 1)
			goto ossl;
		count++;
	}
	/* The loop ends at the end of the file: that is no error. */
	if (ERR_GET_REASON(ERR_peek_last_error()) == PEM_R_NO_START_LINE)
		ERR_clear_error();
	else if (ERR_peek_last_error() != 0) {
		snprintf(what, sizeof(what), "%s", bundle_path);
		tls_errstr(err, errlen, what);
		goto fail;
	}
	if (count == 0) {
		snprintf(err, errlen, "%s: no certificate in it", bundle_path);
		goto fail;
	}
	if (PKCS12_add_safe(&safes, bags, -1, 0, NULL) != 1 ||
	    (p12 = PKCS12_add_safes(safes, 0)) == NULL ||
	    (out = BIO_new(BIO_s_mem())) == NULL ||
	    i2d_PKCS12_bio(out, p12) != 1 ||
	    BIO_get_mem_ptr(out, &mem) != 1)
		goto ossl;
	for (off = 0; off < mem->length; off += (size_t)n) {
		if ((n = write(fd, mem->data + off, mem->length - off)) == -1) {
			if (errno == EINTR) {
				n = 0;
				continue;
			}
			snprintf(err, errlen, "writing the trust store: %s",
			    strerror(errno));
			goto fail;
		}
	}
	rc = 0;
	goto fail;
ossl:
	tls_errstr(err, errlen, "cannot make the trust store");
fail:
	BIO_free(in);
	BIO_free(out);
	PKCS12_free(p12);
	sk_PKCS7_pop_free(safes, PKCS7_free);
	sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
	ASN1_OBJECT_free(any);
	return rc;
}
