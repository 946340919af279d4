/*
 * pisbx-tls.so's insides, shared by its files (ca.c, conn.c, regex.c,
 * module.c).  Nothing outside proxy/tls/ includes this: the proxy sees
 * the module through proxy/tlsmod.h's table only.
 */
#ifndef PISBX_PROXY_TLS_H
#define PISBX_PROXY_TLS_H

#include <sys/types.h>

#include <stddef.h>
#include <time.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "proxy/tlsmod.h"

#define TLS_LEAF_MAX		4096	/* leaves kept; then all dropped */
#define TLS_LEAF_BUCKETS	1024
#define TLS_SESS_MAX		128	/* upstream sessions kept, by host */
#define TLS_HOST_MAX		256	/* a DNS name, or an IP literal */

/* A leaf certificate for one host, in its hash bucket's list. */
struct tls_leaf {
	struct tls_leaf		*next;
	char			*host;
	X509			*cert;
	time_t			 until;	/* remade before this */
};

/* An upstream's TLS session, for resumption on its next connection. */
struct tls_sess {
	char			 host[TLS_HOST_MAX];
	SSL_SESSION		*sess;
	unsigned long		 used;	/* LRU stamp */
};

struct tlsmod_ca {
	X509			*cert;
	EVP_PKEY		*key;
	char			*pem;
	EVP_PKEY		*leafkey;	/* one key for every leaf */
	SSL_CTX			*server;	/* we are the client's server */
	SSL_CTX			*client;	/* we are the upstream's client */
	struct tls_leaf		*leaves[TLS_LEAF_BUCKETS];
	size_t			 nleaves;
	struct tls_sess		 sess[TLS_SESS_MAX];
	unsigned long		 sessclock;
};

struct tlsmod_conn {
	SSL			*ssl;
	struct tlsmod_ca	*ca;
	int			 server;
	char			 host[TLS_HOST_MAX];	/* brackets stripped */
	char			 err[512];
};

/* ca.c */
struct tlsmod_ca *tls_ca_new(const struct tlsmod_ca_opts *, char *, size_t);
void	 tls_ca_free(struct tlsmod_ca *);
const char *tls_ca_pem(const struct tlsmod_ca *);
X509	*tls_leaf_get(struct tlsmod_ca *, const char *, char *, size_t);
int	 tls_truststore(const struct tlsmod_ca *, const char *, int, char *,
	    size_t);
void	 tls_sess_put(struct tlsmod_ca *, const char *, SSL_SESSION *);
SSL_SESSION *tls_sess_get(struct tlsmod_ca *, const char *);
int	 tls_host_is_ip(const char *);
void	 tls_errstr(char *, size_t, const char *);

/* conn.c */
struct tlsmod_conn *tls_server_new(struct tlsmod_ca *, int, const char *,
	    char *, size_t);
struct tlsmod_conn *tls_client_new(struct tlsmod_ca *, int, const char *,
	    char *, size_t);
void	 tls_conn_free(struct tlsmod_conn *);
int	 tls_handshake(struct tlsmod_conn *);
ssize_t	 tls_read(struct tlsmod_conn *, void *, size_t);
int	 tls_pending(struct tlsmod_conn *);
ssize_t	 tls_write(struct tlsmod_conn *, const void *, size_t);
int	 tls_shutdown(struct tlsmod_conn *);
const char *tls_error(const struct tlsmod_conn *);
const char *tls_version(const struct tlsmod_conn *);
int	 tls_ctx_setup(struct tlsmod_ca *, const struct tlsmod_ca_opts *,
	    char *, size_t);

/* regex.c */
int	 tls_regex_check(const char *, char *, size_t);
int	 tls_regex_spans(const char *, const char *, size_t, size_t (*)[2],
	    size_t, char *, size_t);

#endif
