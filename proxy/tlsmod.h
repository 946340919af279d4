/*
 * The TLS module: OpenSSL (and PCRE2, for credentials' "extract") behind
 * a small table of functions, built as pisbx-tls.so (proxy/tls/) and
 * loaded with dlopen only when a config sets network.tlsTerminate or
 * credentials -- so that pisbx-run and pisbx-proxy do not load libssl,
 * libcrypto and libpcre2 at every start (about 3 ms here) for a feature
 * most runs do not use.  The module includes nothing of ours
 * but common/ and this header, and calls nothing back: the proxy drives
 * its endpoints from its own events (term.c).
 *
 * An endpoint works on a non-blocking socket the proxy owns (the module
 * never closes it).  Each call that can block answers TLSMOD_WANT_READ or
 * TLSMOD_WANT_WRITE; the proxy waits for that and calls again.
 */
#ifndef PISBX_TLSMOD_H
#define PISBX_TLSMOD_H

#include <sys/types.h>

#include <stddef.h>

#define TLSMOD_ABI		1
#define TLSMOD_SYMBOL		"pisbx_tlsmod"	/* its one export */
#define TLSMOD_FILE		"pisbx-tls.so"

/* Results of handshake, read, write, shutdown (>= 0: bytes, or done) */
#define TLSMOD_WANT_READ	(-2)
#define TLSMOD_WANT_WRITE	(-3)
#define TLSMOD_CLOSED		(-4)	/* the peer's close_notify, or EOF */
#define TLSMOD_ERROR		(-1)	/* tlsmod_ops.error says why */

struct tlsmod_ca;	/* the run's CA, its leaves and upstream context */
struct tlsmod_conn;	/* one TLS endpoint on one socket */

struct tlsmod_ca_opts {
	const char		*cert_path;	/* both NULL: made now, */
	const char		*key_path;	/* in memory only */
	const char *const	*extra_ca;	/* upstream roots besides the */
	size_t			 nextra;	/* system's (PEM files) */
};

struct tlsmod_ops {
	int	 abi;				/* TLSMOD_ABI */
	/*
	 * The CA: read from the files (the key must be a private file:
	 * a regular file, ours, mode 0600 or stricter), or made now (a
	 * P-256 key that never leaves this process).  NULL with err set.
	 */
	struct tlsmod_ca *(*ca_new)(const struct tlsmod_ca_opts *,
		    char *err, size_t errlen);
	void	 (*ca_free)(struct tlsmod_ca *);
	/* The CA certificate, PEM, NUL-terminated (the CA owns it). */
	const char *(*ca_pem)(const struct tlsmod_ca *);
	/*
	 * Write a PKCS#12 trust store (no password) holding every
	 * certificate of the PEM bundle at bundle_path, marked trusted for
	 * Java, to the open descriptor fd.  0, or -1 with err.
	 */
	int	 (*truststore)(const struct tlsmod_ca *, const char *bundle_path,
		    int fd, char *err, size_t errlen);

	/*
	 * The client's side: we are the server for host (canonical name
	 * or IP literal), with a leaf the CA signs (made once per host
	 * and kept).  The client's SNI, when it sends one, must name host
	 * (else the handshake fails, error "sni-mismatch: ..."); ALPN
	 * offers http/1.1 only.
	 */
	struct tlsmod_conn *(*server_new)(struct tlsmod_ca *, int fd,
		    const char *host, char *err, size_t errlen);
	/*
	 * The upstream's side: we are the client of host, TLS 1.2 or
	 * newer, the certificate verified against the system roots and
	 * the extra CAs, for host (its name, or its IP address), SNI set
	 * for a name, ALPN http/1.1, sessions resumed per host.
	 */
	struct tlsmod_conn *(*client_new)(struct tlsmod_ca *, int fd,
		    const char *host, char *err, size_t errlen);
	void	 (*conn_free)(struct tlsmod_conn *);

	/* 0 done, or TLSMOD_WANT_*, TLSMOD_ERROR, TLSMOD_CLOSED. */
	int	 (*handshake)(struct tlsmod_conn *);
	/* Bytes read (> 0), or TLSMOD_WANT_*, TLSMOD_CLOSED, TLSMOD_ERROR. */
	ssize_t	 (*read)(struct tlsmod_conn *, void *, size_t);
	/* Whether read has bytes decrypted and waiting (no event will say). */
	int	 (*pending)(struct tlsmod_conn *);
	/* Bytes written (> 0, all of len unless WANT), or TLSMOD_*. */
	ssize_t	 (*write)(struct tlsmod_conn *, const void *, size_t);
	/* Send close_notify: 0, or TLSMOD_WANT_*, TLSMOD_ERROR. */
	int	 (*shutdown)(struct tlsmod_conn *);
	/*
	 * Why the last call failed, for the access log and a 502 body:
	 * "certificate verify failed: unable to get local issuer
	 * certificate", "sni-mismatch: the client asked for x.org",
	 * "no-alpn: the client offers h2 only".  Never NULL.
	 */
	const char *(*error)(const struct tlsmod_conn *);
	/* "TLSv1.3" once the handshake is done. */
	const char *(*version)(const struct tlsmod_conn *);

	/*
	 * PCRE2, for credentials' "extract" (srt's are JavaScript regular
	 * expressions; PCRE2 reads the same syntax but for a few corners).
	 * regex_check: 0 when pattern compiles and has a capturing group,
	 * else -1 with err.  regex_spans: the spans of group 1 of every
	 * match in buf, as JavaScript's "g" flag finds them, into
	 * spans[i][0] (offset) and spans[i][1] (length); their number (at
	 * most max), or -1 with err.
	 */
	int	 (*regex_check)(const char *pattern, char *err, size_t errlen);
	int	 (*regex_spans)(const char *pattern, const char *buf, size_t len,
		    size_t (*spans)[2], size_t max, char *err, size_t errlen);
};

/* The module's export: its table, or NULL when OpenSSL cannot start. */
typedef const struct tlsmod_ops *(*tlsmod_fn)(void);

/* tlsload.c (in the proxy): find, check and load the module, once. */
/*
 * The module next to the running program: EXEDIR/../lib/pisbx/ (an
 * installed tree), else EXEDIR/ (the source tree's bin/).  It must be
 * a regular file owned by root or by the program's owner, writable by
 * no one else, in a directory writable by no one else; it is loaded by
 * its descriptor, so the file checked is the file loaded.  NULL with err
 * set, without the program's name ("pisbx-tls.so (for
 * network.tlsTerminate and credentials): /usr/lib/pisbx/pisbx-tls.so:
 * unsafe (owner uid 1000, mode 0664): ..."; a static pisbx-run: "this
 * pisbx-run is linked statically: ...").  The result is kept: a second
 * call answers the same.
 */
const struct tlsmod_ops *tlsmod_load(char *err, size_t errlen);

#endif
