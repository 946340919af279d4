/*
 * http_parse_request/response, http_split_uri, http_list_has and the
 * chunked decoder: tables of good and bad heads, including the
 * request-smuggling shapes a forwarding proxy must refuse.
 */
#include <sys/types.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proxy/parse.h"

struct req_case {
	const char	*in;
	int		 want;	/* 0: complete, -2: need more, else status */
};

static const struct req_case req_cases[] = {
	{ "GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\n\r\n", 0 },
	{ "GET http://a.example/ HTTP/1.0\n\n", 0 },
	{ "CONNECT a.example:443 HTTP/1.1\r\n\r\n", 0 },
	{ "\r\nGET http://a/ HTTP/1.1\r\n\r\n", 0 },
	{ "GET http://a/ HTTP/1.1\r\nHost: a\r\n", -2 },
	{ "GET http://a/ HTTP/1.1", -2 },
	{ "", -2 },
	{ "GET http://a/ HTTP/2.0\r\n\r\n", 505 },
	{ "GET http://a/ HTTP/1.2\r\n\r\n", 505 },
	{ "GET http://a/ FOO/1.1\r\n\r\n", 400 },
	{ "GET  http://a/ HTTP/1.1\r\n\r\n", 400 },
	{ "GET http://a/\r\n\r\n", 400 },
	{ "G(T http://a/ HTTP/1.1\r\n\r\n", 400 },
	{ "GET http://a/ HTTP/1.1\r\nHost : a\r\n\r\n", 400 },
	{ "GET http://a/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", 400 },
	{ "GET http://a/ HTTP/1.1\r\nNoColon\r\n\r\n", 400 },
	{ "GET http://a/ HTTP/1.1\r\n: empty\r\n\r\n", 400 },
	{ "GET http://a/ HTTP/1.1\r\nX: a\x01" "b\r\n\r\n", 400 },
	{ "GET http://a/ HTTP/1.1\r\nX: a\rb\r\n\r\n", 400 },
	{ "GET http://a/\x7f HTTP/1.1\r\n\r\n", 400 },
	{ "POST http://a/ HTTP/1.1\r\nContent-Length: 3\r\n"
	    "Content-Length: 4\r\n\r\n", 400 },
	{ "POST http://a/ HTTP/1.1\r\nContent-Length: 3\r\n"
	    "Content-Length: 3\r\n\r\n", 0 },
	{ "POST http://a/ HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\n", 400 },
	{ "POST http://a/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400 },
	{ "POST http://a/ HTTP/1.1\r\nContent-Length: +1\r\n\r\n", 400 },
	{ "POST http://a/ HTTP/1.1\r\nContent-Length: \r\n\r\n", 400 },
	{ "POST http://a/ HTTP/1.1\r\nContent-Length: 9999999999999999999\r\n"
	    "\r\n", 400 },
	{ "POST http://a/ HTTP/1.1\r\nContent-Length: 3\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", 400 },
	{ "POST http://a/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", 400 },
	{ "POST http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n"
	    "\r\n", 501 },
	{ "POST http://a/ HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n",
	    501 },
	{ "POST http://a/ HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", 0 },
	{ "\r\n\r\n\r\n\r\n\r\nGET http://a/ HTTP/1.1\r\n\r\n", 400 },
};

static void
test_requests(void **state)
{
	struct http_msg m;
	size_t i;
	ssize_t n;

	(void)state;
	for (i = 0; i < sizeof(req_cases) / sizeof(req_cases[0]); i++) {
		const struct req_case *c = &req_cases[i];

		n = http_parse_request(c->in, strlen(c->in), &m);
		if (c->want == 0 && n != (ssize_t)strlen(c->in))
			fail_msg("case %zu \"%s\": got %zd (error %d %s)", i,
			    c->in, n, m.error, m.errmsg ? m.errmsg : "");
		if (c->want == -2 && n != 0)
			fail_msg("case %zu \"%s\": want need-more, got %zd",
			    i, c->in, n);
		if (c->want > 0 && (n != -1 || m.error != c->want))
			fail_msg("case %zu \"%s\": want %d, got %zd/%d", i,
			    c->in, c->want, n, m.error);
	}
}

static void
test_request_fields(void **state)
{
	static const char in[] = "POST http://A.example:8080/p?q HTTP/1.1\r\n"
	    "Host: x\r\nConnection: close, X-Foo\r\nX-Foo:  bar  \r\n"
	    "Transfer-Encoding: chunked\r\n\r\nBODY";
	struct http_msg m;
	ssize_t n;

	(void)state;
	n = http_parse_request(in, sizeof(in) - 1, &m);
	assert_int_equal(n, sizeof(in) - 1 - 4);
	assert_true(http_token_eq(m.method, m.methodlen, "POST"));
	assert_int_equal(m.targetlen, strlen("http://A.example:8080/p?q"));
	assert_int_equal(m.minor, 1);
	assert_int_equal(m.nh, 4);
	assert_true(m.chunked);
	assert_true(m.conn_close);
	assert_false(m.has_length);
	assert_int_equal(m.h[2].valuelen, 3);
	assert_memory_equal(m.h[2].value, "bar", 3);
	assert_true(http_list_has(m.h[1].value, m.h[1].valuelen, "x-foo"));
	assert_false(http_list_has(m.h[1].value, m.h[1].valuelen, "foo"));
}

static void
test_limits(void **state)
{
	char *big;
	struct http_msg m;
	size_t n, i, off;

	(void)state;
	/* No end of head within 64 KiB: 431. */
	n = HTTP_HEAD_MAX + 10;
	big = malloc(n);
	assert_non_null(big);
	memcpy(big, "GET http://a/ HTTP/1.1\r\nX: ", 27);
	memset(big + 27, 'a', n - 27);
	assert_int_equal(http_parse_request(big, n, &m), -1);
	assert_int_equal(m.error, 431);
	/* A partial head under the limit: need more. */
	assert_int_equal(http_parse_request(big, 1000, &m), 0);
	/* Too many header lines: 431. */
	off = (size_t)sprintf(big, "GET http://a/ HTTP/1.1\r\n");
	for (i = 0; i < HTTP_MAX_HEADERS + 1; i++)
		off += (size_t)sprintf(big + off, "X-%zu: v\r\n", i);
	off += (size_t)sprintf(big + off, "\r\n");
	assert_int_equal(http_parse_request(big, off, &m), -1);
	assert_int_equal(m.error, 431);
	free(big);
}

static void
test_responses(void **state)
{
	struct http_msg m;
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
	static const char noreason[] = "HTTP/1.1 204\r\n\r\n";
	static const char te_cl[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n";
	static const char gzip[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: "
	    "gzip\r\n\r\n";
	static const char bad[] = "HTTP/1.1 2000 OK\r\n\r\n";
	static const char h10[] = "HTTP/1.0 404 Not Found\r\n\r\n";

	(void)state;
	assert_int_equal(http_parse_response(ok, sizeof(ok) - 1, &m),
	    sizeof(ok) - 1);
	assert_int_equal(m.status, 200);
	assert_true(m.has_length);
	assert_int_equal(m.length, 5);
	assert_int_equal(http_parse_response(noreason, sizeof(noreason) - 1,
	    &m), sizeof(noreason) - 1);
	assert_int_equal(m.status, 204);
	assert_int_equal(http_parse_response(te_cl, sizeof(te_cl) - 1, &m),
	    sizeof(te_cl) - 1);
	assert_true(m.chunked);
	assert_false(m.has_length);
	assert_true(m.conn_close);
	assert_int_equal(http_parse_response(gzip, sizeof(gzip) - 1, &m),
	    sizeof(gzip) - 1);
	assert_true(m.te_other);
	assert_int_equal(http_parse_response(bad, sizeof(bad) - 1, &m), -1);
	assert_int_equal(m.error, 502);
	assert_int_equal(http_parse_response(h10, sizeof(h10) - 1, &m),
	    sizeof(h10) - 1);
	assert_int_equal(m.minor, 0);
	assert_int_equal(m.status, 404);
}

struct uri_case {
	const char	*uri;
	const char	*auth;	/* NULL: refused */
	const char	*path;
};

static const struct uri_case uri_cases[] = {
	{ "http://a.example/x?y", "a.example", "/x?y" },
	{ "HTTP://a.example", "a.example", "" },
	{ "http://a.example:8080?q", "a.example:8080", "?q" },
	{ "http://[::1]:80/", "[::1]:80", "/" },
	{ "http://a.example#frag", "a.example", "" },
	{ "https://a.example/", NULL, NULL },
	{ "ftp://a.example/", NULL, NULL },
	{ "http://user@a.example/", NULL, NULL },
	{ "http://u:p@a.example/", NULL, NULL },
	{ "http:///x", NULL, NULL },
	{ "/x", NULL, NULL },
};

static void
test_uris(void **state)
{
	const char *auth, *path, *err;
	size_t alen, plen, i;
	int r;

	(void)state;
	for (i = 0; i < sizeof(uri_cases) / sizeof(uri_cases[0]); i++) {
		const struct uri_case *c = &uri_cases[i];

		err = NULL;
		r = http_split_uri(c->uri, strlen(c->uri), &auth, &alen, &path,
		    &plen, &err);
		if (c->auth == NULL) {
			assert_int_equal(r, -1);
			assert_non_null(err);
			continue;
		}
		assert_int_equal(r, 0);
		assert_int_equal(alen, strlen(c->auth));
		assert_memory_equal(auth, c->auth, alen);
		assert_int_equal(plen, strlen(c->path));
		assert_memory_equal(path, c->path, plen);
	}
}

/* Decode a whole chunked body; returns the data or NULL on error. */
static char *
dechunk(const char *in, size_t len, int *done)
{
	struct chunk_decoder d;
	static char out[4096];
	const char *data;
	size_t dlen, o = 0, off = 0;
	uint64_t hdr;
	ssize_t r;

	memset(&d, 0, sizeof(d));
	*done = 0;
	while (off < len) {
		r = chunk_step(&d, in + off, len - off, &data, &dlen, &hdr);
		if (r < 0)
			return NULL;
		if (r == 0)
			break;
		if (data != NULL) {
			memcpy(out + o, data, dlen);
			o += dlen;
		}
		off += (size_t)r;
		if (d.state == CHUNK_DONE) {
			*done = 1;
			break;
		}
	}
	out[o] = '\0';
	return out;
}

static void
test_chunked(void **state)
{
	static const char good[] = "5\r\nhello\r\n6;ext=1\r\n world\r\n"
	    "0\r\nTrailer: x\r\n\r\n";
	static const char lf[] = "3\nabc\n0\n\n";
	int done;
	char *s;

	(void)state;
	s = dechunk(good, sizeof(good) - 1, &done);
	assert_non_null(s);
	assert_string_equal(s, "hello world");
	assert_true(done);
	s = dechunk(lf, sizeof(lf) - 1, &done);
	assert_string_equal(s, "abc");
	assert_true(done);
	s = dechunk("5\r\nhel", 7, &done);
	assert_string_equal(s, "hel");
	assert_false(done);
	assert_null(dechunk("x\r\n", 3, &done));
	assert_null(dechunk("5 x\r\n", 5, &done));
	assert_null(dechunk("-5\r\n", 4, &done));
	assert_null(dechunk("1234567890abcdef0\r\n", 19, &done));
	assert_null(dechunk("3\r\nabcX\r\n", 9, &done));
	assert_null(dechunk("3\r\nabc\rX", 8, &done));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_request_fields),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_responses),
		cmocka_unit_test(test_uris),
		cmocka_unit_test(test_chunked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
