/*
 * pisbx-tls.so's one export: the table of proxy/tlsmod.h.  Built with
 * -fvisibility=hidden, so that nothing else of it (nor of the common/
 * files compiled in) is visible to the program that loads it.
 */
#include <openssl/ssl.h>

#include "proxy/tls/tls.h"

const struct tlsmod_ops *pisbx_tlsmod(void)
    __attribute__((visibility("default")));

static const struct tlsmod_ops ops = {
	.abi = TLSMOD_ABI,
	.ca_new = tls_ca_new,
	.ca_free = tls_ca_free,
	.ca_pem = tls_ca_pem,
	.truststore = tls_truststore,
	.server_new = tls_server_new,
	.client_new = tls_client_new,
	.conn_free = tls_conn_free,
	.handshake = tls_handshake,
	.read = tls_read,
	.pending = tls_pending,
	.write = tls_write,
	.shutdown = tls_shutdown,
	.error = tls_error,
	.version = tls_version,
	.regex_check = tls_regex_check,
	.regex_spans = tls_regex_spans,
};

/* The table, once OpenSSL has started; NULL when it cannot. */
const struct tlsmod_ops *
pisbx_tlsmod(void)
{
	if (OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS |
	    OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL) != 1)
		return NULL;
	return &ops;
}
