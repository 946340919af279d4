/*
 * tls_peek_clienthello: ClientHellos built here (one or several records,
 * with and without server_name) and broken ones (truncated, two SNIs,
 * wrong lengths, other record types, over the cap); tls_scan_serverhello:
 * a HelloRetryRequest told from a ServerHello, fed whole or byte by byte,
 * and server replies that are not TLS.
 */
#include <sys/types.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"
#include "proxy/parse.h"

struct hello {
	uint8_t	b[40000];
	size_t	n;
};

static void
put8(struct hello *h, unsigned v)
{
	h->b[h->n++] = (uint8_t)v;
}

static void
put16(struct hello *h, unsigned v)
{
	put8(h, v >> 8);
	put8(h, v & 0xff);
}

/*
 * A handshake message (no record header) with the given server names
 * (NULL-terminated list; nsni_ext server_name extensions), padded with an
 * extra extension of pad bytes.
 */
static size_t
build_hs(uint8_t *out, const char *const *names, int nsni_ext, size_t pad,
    int with_ext)
{
	struct hello h;
	size_t extstart, extlen_at, i, e, snilen_at, listlen_at;

	memset(&h, 0, sizeof(h));
	put8(&h, 0x01);
	put8(&h, 0);
	put16(&h, 0);			/* length, filled below */
	put16(&h, 0x0303);
	for (i = 0; i < 32; i++)
		put8(&h, i);
	put8(&h, 0);			/* session id */
	put16(&h, 2);
	put16(&h, 0x1301);
	put8(&h, 1);
	put8(&h, 0);
	if (with_ext) {
		extlen_at = h.n;
		put16(&h, 0);
		extstart = h.n;
		for (e = 0; e < (size_t)nsni_ext; e++) {
			put16(&h, 0x0000);
			snilen_at = h.n;
			put16(&h, 0);
			listlen_at = h.n;
			put16(&h, 0);
			for (i = 0; names != NULL && names[i] != NULL; i++) {
				put8(&h, 0);
				put16(&h, (unsigned)strlen(names[i]));
				memcpy(h.b + h.n, names[i], strlen(names[i]));
				h.n += strlen(names[i]);
			}
			h.b[snilen_at] = (uint8_t)((h.n - snilen_at - 2) >> 8);
			h.b[snilen_at + 1] = (uint8_t)(h.n - snilen_at - 2);
			h.b[listlen_at] = (uint8_t)((h.n - listlen_at - 2) >> 8);
			h.b[listlen_at + 1] = (uint8_t)(h.n - listlen_at - 2);
		}
		if (pad > 0) {
			put16(&h, 0x0015);	/* padding */
			put16(&h, (unsigned)pad);
			h.n += pad;
		}
		h.b[extlen_at] = (uint8_t)((h.n - extstart) >> 8);
		h.b[extlen_at + 1] = (uint8_t)(h.n - extstart);
	}
	h.b[1] = (uint8_t)((h.n - 4) >> 16);
	h.b[2] = (uint8_t)((h.n - 4) >> 8);
	h.b[3] = (uint8_t)(h.n - 4);
	memcpy(out, h.b, h.n);
	return h.n;
}

/* Wrap a handshake message in records of at most recmax bytes. */
static size_t
wrap(uint8_t *out, const uint8_t *hs, size_t n, size_t recmax)
{
	size_t off = 0, o = 0, k;

	while (off < n) {
		k = n - off < recmax ? n - off : recmax;
		out[o++] = 0x16;
		out[o++] = 0x03;
		out[o++] = 0x01;
		out[o++] = (uint8_t)(k >> 8);
		out[o++] = (uint8_t)k;
		memcpy(out + o, hs + off, k);
		o += k;
		off += k;
	}
	return o;
}

static uint8_t hsbuf[40000], recbuf[42000];

static size_t peek_used;

static enum tls_peek_result
peek(const uint8_t *b, size_t n, char *sni)
{
	const char *why;

	return tls_peek_clienthello(b, n, sni, HOST_TEXT_MAX, &peek_used,
	    &why);
}

static void
test_sni(void **state)
{
	const char *names[] = { "example.com", NULL };
	char sni[HOST_TEXT_MAX];
	size_t n;

	(void)state;
	n = wrap(recbuf, hsbuf, build_hs(hsbuf, names, 1, 0, 1), 16384);
	assert_int_equal(peek(recbuf, n, sni), TLS_PEEK_SNI);
	assert_string_equal(sni, "example.com");
}

static void
test_no_sni(void **state)
{
	char sni[HOST_TEXT_MAX];
	size_t n;

	(void)state;
	n = wrap(recbuf, hsbuf, build_hs(hsbuf, NULL, 0, 10, 1), 16384);
	assert_int_equal(peek(recbuf, n, sni), TLS_PEEK_NO_SNI);
	n = wrap(recbuf, hsbuf, build_hs(hsbuf, NULL, 0, 0, 0), 16384);
	assert_int_equal(peek(recbuf, n, sni), TLS_PEEK_NO_SNI);
}

static void
test_split_records(void **state)
{
	const char *names[] = { "split.example", NULL };
	char sni[HOST_TEXT_MAX];
	size_t n, i;

	(void)state;
	/* A 5000-byte hello in 7 records, then every prefix is MORE. */
	n = wrap(recbuf, hsbuf, build_hs(hsbuf, names, 1, 5000, 1), 700);
	assert_int_equal(peek(recbuf, n, sni), TLS_PEEK_SNI);
	assert_string_equal(sni, "split.example");
	for (i = 1; i < n; i += 97)
		assert_int_equal(peek(recbuf, i, sni), TLS_PEEK_MORE);
}

static void
test_truncated_and_not_tls(void **state)
{
	char sni[HOST_TEXT_MAX];
	static const uint8_t get[] = "GET / HTTP/1.1\r\n";
	static const uint8_t ssh[] = "SSH-2.0-OpenSSH\r\n";
	static const uint8_t not_v3[] = { 0x16, 0x01, 0x00 };

	(void)state;
	assert_int_equal(peek(get, sizeof(get) - 1, sni), TLS_PEEK_NOT_TLS);
	assert_int_equal(peek(ssh, sizeof(ssh) - 1, sni), TLS_PEEK_NOT_TLS);
	assert_int_equal(peek(not_v3, 3, sni), TLS_PEEK_NOT_TLS);
	assert_int_equal(peek(not_v3, 0, sni), TLS_PEEK_MORE);
	assert_int_equal(peek(not_v3, 1, sni), TLS_PEEK_MORE);
}

static void
test_invalid(void **state)
{
	const char *names[] = { "a.example", NULL };
	const char *two[] = { "a.example", "b.example", NULL };
	char sni[HOST_TEXT_MAX];
	size_t n, hn;

	(void)state;
	/* Two server_name extensions. */
	n = wrap(recbuf, hsbuf, build_hs(hsbuf, names, 2, 0, 1), 16384);
	assert_int_equal(peek(recbuf, n, sni), TLS_PEEK_INVALID);
	/* Two host_name entries in one. */
	n = wrap(recbuf, hsbuf, build_hs(hsbuf, two, 1, 0, 1), 16384);
	assert_int_equal(peek(recbuf, n, sni), TLS_PEEK_INVALID);
	/* Extensions length off by one. */
	hn = build_hs(hsbuf, names, 1, 0, 1);
	hsbuf[4 + 2 + 32 + 1 + 2 + 2 + 1 + 1 + 1]++;
	n = wrap(recbuf, hsbuf, hn, 16384);
	assert_int_equal(peek(recbuf, n, sni), TLS_PEEK_INVALID);
	/* Not a ClientHello (ServerHello type). */
	hn = build_hs(hsbuf, names, 1, 0, 1);
	hsbuf[0] = 0x02;
	n = wrap(recbuf, hsbuf, hn, 16384);
	assert_int_equal(peek(recbuf, n, sni), TLS_PEEK_INVALID);
	/* An alert record in the middle of a split hello. */
	n = wrap(recbuf, hsbuf, build_hs(hsbuf, names, 1, 2000, 1), 500);
	recbuf[505] = 0x15;
	assert_int_equal(peek(recbuf, n, sni), TLS_PEEK_INVALID);
	/* Zero-length record. */
	recbuf[0] = 0x16; recbuf[1] = 3; recbuf[2] = 1;
	recbuf[3] = 0; recbuf[4] = 0;
	assert_int_equal(peek(recbuf, 5, sni), TLS_PEEK_INVALID);
	/* A hello longer than the peek buffer. */
	n = wrap(recbuf, hsbuf, build_hs(hsbuf, names, 1, 30000, 1), 16384);
	assert_int_equal(peek(recbuf, n, sni), TLS_PEEK_INVALID);
	/* ... refused from its first bytes, not after waiting for more. */
	assert_int_equal(peek(recbuf, 9, sni), TLS_PEEK_INVALID);
	assert_int_equal(peek(recbuf, 8, sni), TLS_PEEK_MORE);
	/* A NUL inside the name. */
	{
		const char *nul[] = { "a.example", NULL };

		hn = build_hs(hsbuf, nul, 1, 0, 1);
		hsbuf[hn - 3] = '\0';
		n = wrap(recbuf, hsbuf, hn, 16384);
		assert_int_equal(peek(recbuf, n, sni), TLS_PEEK_INVALID);
	}
}

static void
test_trailing(void **state)
{
	const char *names[] = { "a.example", NULL };
	char sni[HOST_TEXT_MAX];
	size_t hn, n;

	(void)state;
	hn = build_hs(hsbuf, names, 1, 0, 1);
	n = wrap(recbuf, hsbuf, hn, 16384);
	/* What follows the hello's records is not the hello's. */
	memcpy(recbuf + n, "\x14\x03\x03\x00\x01\x01", 6);
	assert_int_equal(peek(recbuf, n + 6, sni), TLS_PEEK_SNI);
	assert_int_equal(peek_used, n);
	/* Two hellos in one record: the second would go unchecked. */
	memcpy(hsbuf + hn, hsbuf, hn);
	n = wrap(recbuf, hsbuf, 2 * hn, 16384);
	assert_int_equal(peek(recbuf, n, sni), TLS_PEEK_INVALID);
}

static const uint8_t hrr_random[32] = {
	0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11,
	0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
	0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e,
	0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c
};

/* A ServerHello record (a retry when hrr), body padded to blen bytes. */
static size_t
server_hello(uint8_t *out, int hrr, size_t blen)
{
	size_t i;

	out[0] = 0x16; out[1] = 0x03; out[2] = 0x03;
	out[3] = (uint8_t)((blen + 4) >> 8); out[4] = (uint8_t)(blen + 4);
	out[5] = 0x02; out[6] = 0;
	out[7] = (uint8_t)(blen >> 8); out[8] = (uint8_t)blen;
	out[9] = 0x03; out[10] = 0x03;
	for (i = 0; i < 32; i++)
		out[11 + i] = hrr ? hrr_random[i] : (uint8_t)i;
	memset(out + 43, 0, blen - 34);
	return 9 + blen;
}

/* Feed b in pieces of step bytes; the result that ended the scan. */
static enum tls_scan_result
scan(struct tls_scan *ts, const uint8_t *b, size_t n, size_t step,
    unsigned *nhrr)
{
	enum tls_scan_result r = TLS_SCAN_MORE;
	const char *why;
	size_t off = 0, k, used;

	*nhrr = 0;
	while (off < n) {
		k = n - off < step ? n - off : step;
		r = tls_scan_serverhello(ts, b + off, k, &used, &why);
		assert_true(used <= k);
		off += used;
		if (r == TLS_SCAN_HRR)
			(*nhrr)++;
		else if (r != TLS_SCAN_MORE)
			break;
	}
	return r;
}

static void
test_server_hello(void **state)
{
	static const uint8_t ccs[] = { 0x14, 0x03, 0x03, 0x00, 0x01, 0x01 };
	static const uint8_t http[] = "HTTP/1.1 400 Bad Request\r\n";
	static const uint8_t appdata[] = { 0x17, 0x03, 0x03, 0x00, 0x01, 0 };
	static const uint8_t cert[] = { 0x16, 0x03, 0x03, 0x00, 0x04,
	    0x0b, 0x00, 0x00, 0x00 };
	struct tls_scan ts;
	size_t n, step;
	unsigned nhrr;

	(void)state;
	for (step = 1; step <= 4096; step *= 8) {
		/* A ServerHello at once. */
		tls_scan_init(&ts);
		n = server_hello(recbuf, 0, 80);
		assert_int_equal(scan(&ts, recbuf, n, step, &nhrr),
		    TLS_SCAN_HELLO);
		assert_int_equal(nhrr, 0);
		/* A retry, its dummy change_cipher_spec, the ServerHello. */
		tls_scan_init(&ts);
		n = server_hello(recbuf, 1, 60);
		memcpy(recbuf + n, ccs, sizeof(ccs));
		n += sizeof(ccs);
		n += server_hello(recbuf + n, 0, 80);
		assert_int_equal(scan(&ts, recbuf, n, step, &nhrr),
		    TLS_SCAN_HELLO);
		assert_int_equal(nhrr, 1);
		/* Only a retry so far: more is needed. */
		tls_scan_init(&ts);
		n = server_hello(recbuf, 1, 60);
		assert_int_equal(scan(&ts, recbuf, n, step, &nhrr),
		    TLS_SCAN_MORE);
		assert_int_equal(nhrr, 1);
		/* Two retries: RFC 8446 4.1.4 forbids it. */
		tls_scan_init(&ts);
		n = server_hello(recbuf, 1, 60);
		n += server_hello(recbuf + n, 1, 60);
		assert_int_equal(scan(&ts, recbuf, n, step, &nhrr),
		    TLS_SCAN_INVALID);
	}
	/* Not TLS, early application data, another message first. */
	tls_scan_init(&ts);
	assert_int_equal(scan(&ts, http, sizeof(http) - 1, 64, &nhrr),
	    TLS_SCAN_INVALID);
	tls_scan_init(&ts);
	assert_int_equal(scan(&ts, appdata, sizeof(appdata), 64, &nhrr),
	    TLS_SCAN_INVALID);
	tls_scan_init(&ts);
	assert_int_equal(scan(&ts, cert, sizeof(cert), 64, &nhrr),
	    TLS_SCAN_INVALID);
	/* A ServerHello too short to hold its fields. */
	tls_scan_init(&ts);
	n = server_hello(recbuf, 0, 80);
	recbuf[8] = 20;
	assert_int_equal(scan(&ts, recbuf, n, 64, &nhrr), TLS_SCAN_INVALID);
	/* An alert inside a split retry. */
	tls_scan_init(&ts);
	n = server_hello(recbuf, 1, 60);
	recbuf[3] = 0; recbuf[4] = 10;
	memcpy(recbuf + 15, ccs, sizeof(ccs));
	recbuf[15] = 0x15;
	assert_int_equal(scan(&ts, recbuf, 21, 64, &nhrr), TLS_SCAN_INVALID);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sni),
		cmocka_unit_test(test_no_sni),
		cmocka_unit_test(test_split_records),
		cmocka_unit_test(test_truncated_and_not_tls),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_trailing),
		cmocka_unit_test(test_server_hello),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
