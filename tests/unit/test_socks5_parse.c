/*
 * SOCKS5 greeting, RFC 1929 username/password and request parsing, and
 * the reply builder: every prefix of a good message needs more bytes,
 * bad versions and lengths are refused, unknown ATYP is reported.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proxy/parse.h"

static void
test_greeting(void **state)
{
	static const uint8_t none[] = { 5, 1, 0 };
	static const uint8_t both[] = { 5, 3, 0, 1, 2 };
	static const uint8_t gssapi[] = { 5, 1, 1 };
	static const uint8_t v4[] = { 4, 1, 0 };
	static const uint8_t zero[] = { 5, 0 };
	struct socks5_greeting g;
	size_t i;

	(void)state;
	assert_int_equal(socks5_parse_greeting(none, 3, &g), 3);
	assert_true(g.offers_none);
	assert_false(g.offers_userpass);
	assert_int_equal(socks5_parse_greeting(both, 5, &g), 5);
	assert_true(g.offers_none);
	assert_true(g.offers_userpass);
	assert_int_equal(socks5_parse_greeting(gssapi, 3, &g), 3);
	assert_false(g.offers_none);
	assert_false(g.offers_userpass);
	for (i = 0; i < sizeof(both); i++)
		assert_int_equal(socks5_parse_greeting(both, i, &g), 0);
	assert_int_equal(socks5_parse_greeting(v4, 3, &g), -1);
	assert_int_equal(socks5_parse_greeting(zero, 2, &g), -1);
}

static void
test_auth(void **state)
{
	static const uint8_t good[] = { 1, 4, 'u', 's', 'e', 'r', 2, 'p', 'w' };
	static const uint8_t empty[] = { 1, 0, 0 };
	static const uint8_t badver[] = { 5, 1, 'u', 1, 'p' };
	struct socks5_auth a;
	size_t i;

	(void)state;
	assert_int_equal(socks5_parse_auth(good, sizeof(good), &a),
	    sizeof(good));
	assert_string_equal(a.user, "user");
	assert_string_equal(a.pass, "pw");
	for (i = 0; i < sizeof(good); i++)
		assert_int_equal(socks5_parse_auth(good, i, &a), 0);
	assert_int_equal(socks5_parse_auth(empty, 3, &a), 3);
	assert_string_equal(a.user, "");
	assert_int_equal(socks5_parse_auth(badver, sizeof(badver), &a), -1);
}

static void
test_request(void **state)
{
	static const uint8_t v4[] = { 5, 1, 0, 1, 10, 0, 0, 1, 0x01, 0xbb };
	static const uint8_t dom[] = { 5, 1, 0, 3, 11, 'e', 'x', 'a', 'm',
	    'p', 'l', 'e', '.', 'c', 'o', 'm', 0, 80, 'X' };
	static const uint8_t v6[] = { 5, 1, 0, 4, 0x20, 1, 0x0d, 0xb8, 0, 0,
	    0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x1f, 0x90 };
	static const uint8_t bind[] = { 5, 2, 0, 1, 1, 2, 3, 4, 0, 80 };
	static const uint8_t badatyp[] = { 5, 1, 0, 9, 1, 2, 3 };
	static const uint8_t rsv[] = { 5, 1, 1, 1, 1, 2, 3, 4, 0, 80 };
	static const uint8_t emptydom[] = { 5, 1, 0, 3, 0, 0, 80 };
	struct socks5_request r;
	size_t i;

	(void)state;
	assert_int_equal(socks5_parse_request(v4, sizeof(v4), &r), 10);
	assert_int_equal(r.cmd, SOCKS5_CMD_CONNECT);
	assert_int_equal(r.atyp, SOCKS5_ATYP_IPV4);
	assert_int_equal(r.port, 443);
	assert_memory_equal(r.v4, v4 + 4, 4);
	for (i = 0; i < sizeof(v4); i++)
		assert_int_equal(socks5_parse_request(v4, i, &r), 0);

	/* Early data after the request is left alone. */
	assert_int_equal(socks5_parse_request(dom, sizeof(dom), &r),
	    sizeof(dom) - 1);
	assert_string_equal(r.domain, "example.com");
	assert_int_equal(r.domainlen, 11);
	assert_int_equal(r.port, 80);
	for (i = 0; i < sizeof(dom) - 1; i++)
		assert_int_equal(socks5_parse_request(dom, i, &r), 0);

	assert_int_equal(socks5_parse_request(v6, sizeof(v6), &r), 22);
	assert_int_equal(r.port, 8080);
	assert_int_equal(r.v6[0], 0x20);

	assert_int_equal(socks5_parse_request(bind, sizeof(bind), &r), 10);
	assert_int_equal(r.cmd, SOCKS5_CMD_BIND);
	assert_int_equal(socks5_parse_request(badatyp, sizeof(badatyp), &r),
	    4);
	assert_int_equal(r.atyp, 9);
	assert_int_equal(socks5_parse_request(rsv, sizeof(rsv), &r), -1);
	assert_int_equal(socks5_parse_request(emptydom, sizeof(emptydom),
	    &r), -1);
}

static void
test_reply(void **state)
{
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
	uint8_t out[32];
	static const uint8_t want4[] = { 5, 0, 0, 1, 127, 0, 0, 1, 0x30, 0x39 };
	static const uint8_t wantfail[] = { 5, 2, 0, 1, 0, 0, 0, 0, 0, 0 };

	(void)state;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(12345);
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	assert_int_equal(socks5_build_reply(out, 0,
	    (struct sockaddr *)&sin), 10);
	assert_memory_equal(out, want4, 10);
	assert_int_equal(socks5_build_reply(out, 2, NULL), 10);
	assert_memory_equal(out, wantfail, 10);
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(443);
	inet_pton(AF_INET6, "::1", &sin6.sin6_addr);
	assert_int_equal(socks5_build_reply(out, 0,
	    (struct sockaddr *)&sin6), 22);
	assert_int_equal(out[3], SOCKS5_ATYP_IPV6);
	assert_int_equal(out[19], 1);
	assert_int_equal(out[20], 0x01);
	assert_int_equal(out[21], 0xbb);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_greeting),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
