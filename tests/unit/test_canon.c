/*
 * host_canon, port_parse, target_parse, host_from_in6, target_format:
 * tables of spellings and hostile inputs with the canonical text or the
 * error expected for each.
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
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"

struct canon_case {
	const char	*in;
	size_t		 len;		/* 0: strlen(in) */
	int		 ok;
	enum host_kind	 kind;
	const char	*text;		/* ok: canonical text */
	const char	*err;		/* !ok: substring of the message */
};

#define OK(in, kind, text)	{ in, 0, 1, kind, text, NULL }
#define BAD(in, err)		{ in, 0, 0, HOST_NAME, NULL, err }
#define BADN(in, len, err)	{ in, len, 0, HOST_NAME, NULL, err }

static const struct canon_case canon_cases[] = {
	/* names */
	OK("example.com", HOST_NAME, "example.com"),
	OK("Example.COM", HOST_NAME, "example.com"),
	OK("example.com.", HOST_NAME, "example.com"),
	OK("EXAMPLE.COM.", HOST_NAME, "example.com"),
	OK("localhost", HOST_NAME, "localhost"),
	OK("a", HOST_NAME, "a"),
	OK("xn--bcher-kva.example", HOST_NAME, "xn--bcher-kva.example"),
	OK("_dmarc.example.com", HOST_NAME, "_dmarc.example.com"),
	OK("a-b.c_d.e", HOST_NAME, "a-b.c_d.e"),
	OK("1.2.3.com", HOST_NAME, "1.2.3.com"),
	OK("0x7f.example", HOST_NAME, "0x7f.example"),
	OK("123abc", HOST_NAME, "123abc"),
	OK("0xg", HOST_NAME, "0xg"),
	OK("1e5", HOST_NAME, "1e5"),
	BAD("example.com..", "empty label"),
	BAD("a..b", "empty label"),
	BAD(".example.com", "empty label"),
	BAD(".", "empty host"),
	BAD("..", "empty label"),
	BAD("", "empty host"),

	/* IPv4: every spelling the WHATWG URL parser accepts */
	OK("127.0.0.1", HOST_IPV4, "127.0.0.1"),
	OK("127.0.0.1.", HOST_IPV4, "127.0.0.1"),
	OK("127.1", HOST_IPV4, "127.0.0.1"),
	OK("127.0.1", HOST_IPV4, "127.0.0.1"),
	OK("0x7f.0.0.1", HOST_IPV4, "127.0.0.1"),
	OK("0X7F.0.0.1", HOST_IPV4, "127.0.0.1"),
	OK("0177.0.0.1", HOST_IPV4, "127.0.0.1"),
	OK("0177.0.0.01", HOST_IPV4, "127.0.0.1"),
	OK("2130706433", HOST_IPV4, "127.0.0.1"),
	OK("0x7f000001", HOST_IPV4, "127.0.0.1"),
	OK("0x7F000001", HOST_IPV4, "127.0.0.1"),
	OK("017700000001", HOST_IPV4, "127.0.0.1"),
	OK("0x7f.1", HOST_IPV4, "127.0.0.1"),
	OK("0x7f.0x0.0x0.0x1", HOST_IPV4, "127.0.0.1"),
	OK("0", HOST_IPV4, "0.0.0.0"),
	OK("0x", HOST_IPV4, "0.0.0.0"),
	OK("0x.0x.0x.0x", HOST_IPV4, "0.0.0.0"),
	OK("00", HOST_IPV4, "0.0.0.0"),
	OK("4294967295", HOST_IPV4, "255.255.255.255"),
	OK("0xffffffff", HOST_IPV4, "255.255.255.255"),
	OK("255.255.255.255", HOST_IPV4, "255.255.255.255"),
	OK("1.2.65535", HOST_IPV4, "1.2.255.255"),
	OK("1.16777215", HOST_IPV4, "1.255.255.255"),
	OK("169.254.169.254", HOST_IPV4, "169.254.169.254"),
	OK("0251.0376.0251.0376", HOST_IPV4, "169.254.169.254"),
	OK("0xa9fea9fe", HOST_IPV4, "169.254.169.254"),
	OK("010.0.0.1", HOST_IPV4, "8.0.0.1"),
	OK("0000000000000000000000001.2.3.4", HOST_IPV4, "1.2.3.4"),
	BAD("4294967296", "out of range"),
	BAD("0x100000000", "out of range"),
	BAD("99999999999999999999999", "out of range"),
	BAD("256.0.0.1", "out of range"),
	BAD("1.2.3.256", "out of range"),
	BAD("1.2.65536", "out of range"),
	BAD("1.16777216", "out of range"),
	BAD("1.2.3.4.5", "more than four parts"),
	BAD("0x1g.0.0.1", "invalid IPv4"),
	BAD("foo.0x10", "invalid IPv4"),
	BAD("foo.123", "invalid IPv4"),
	BAD("example.0x", "invalid IPv4"),
	BAD("09.0.0.1", "invalid IPv4"),
	BAD("08", "invalid IPv4"),
	BAD("1..1", "invalid IPv4"),
	BAD("1.2.3.4..", "empty label"),

	/* IPv6, only in brackets */
	OK("[::1]", HOST_IPV6, "[::1]"),
	OK("[::]", HOST_IPV6, "[::]"),
	OK("[0:0:0:0:0:0:0:1]", HOST_IPV6, "[::1]"),
	OK("[2001:DB8::1]", HOST_IPV6, "[2001:db8::1]"),
	OK("[2001:0db8:0000:0000:0000:0000:0000:0001]", HOST_IPV6,
	    "[2001:db8::1]"),
	OK("[2001:db8:0:0:1:0:0:1]", HOST_IPV6, "[2001:db8::1:0:0:1]"),
	OK("[2001:db8:0:1:1:1:1:1]", HOST_IPV6, "[2001:db8:0:1:1:1:1:1]"),
	OK("[2001:0:0:1:0:0:0:1]", HOST_IPV6, "[2001:0:0:1::1]"),
	OK("[2001:db8::]", HOST_IPV6, "[2001:db8::]"),
	OK("[1:0:0:0:0:0:0:0]", HOST_IPV6, "[1::]"),
	OK("[fe80::1]", HOST_IPV6, "[fe80::1]"),
	OK("[FF02::1]", HOST_IPV6, "[ff02::1]"),
	OK("[1:2:3:4:5:6:7:8]", HOST_IPV6, "[1:2:3:4:5:6:7:8]"),
	OK("[64:ff9b::7f00:1]", HOST_IPV6, "[64:ff9b::7f00:1]"),
	OK("[64:ff9b::127.0.0.1]", HOST_IPV6, "[64:ff9b::7f00:1]"),
	OK("[::ffff:0:0:1]", HOST_IPV6, "[::ffff:0:0:1]"),
	OK("[::1:0:0:0:1]", HOST_IPV6, "[::1:0:0:0:1]"),
	OK("[0:1:0:0:0:1:0:0]", HOST_IPV6, "[0:1::1:0:0]"),
	OK("[1:0:0:2:0:0:3:4]", HOST_IPV6, "[1::2:0:0:3:4]"),
	OK("[1:0:2:0:3:0:4:0]", HOST_IPV6, "[1:0:2:0:3:0:4:0]"),
	OK("[0:0:1:0:0:0:0:2]", HOST_IPV6, "[0:0:1::2]"),
	OK("[0:0:0:1:0:0:0:2]", HOST_IPV6, "[::1:0:0:0:2]"),
	OK("[abcd:ef01:2345:6789:ABCD:EF01:2345:6789]", HOST_IPV6,
	    "[abcd:ef01:2345:6789:abcd:ef01:2345:6789]"),
	OK("[0001:0002:0003:0004:0005:0006:0007:0008]", HOST_IPV6,
	    "[1:2:3:4:5:6:7:8]"),
	/* mapped and compatible forms unwrap */
	OK("[::ffff:127.0.0.1]", HOST_IPV4, "127.0.0.1"),
	OK("[::FFFF:7f00:1]", HOST_IPV4, "127.0.0.1"),
	OK("[::ffff:169.254.169.254]", HOST_IPV4, "169.254.169.254"),
	OK("[::127.0.0.1]", HOST_IPV4, "127.0.0.1"),
	OK("[::10.1.2.3]", HOST_IPV4, "10.1.2.3"),
	OK("[::2]", HOST_IPV4, "0.0.0.2"),
	OK("[::ffff:0.0.0.0]", HOST_IPV4, "0.0.0.0"),
	BAD("[::1%eth0]", "zone ID"),
	BAD("[fe80::1%25eth0]", "zone ID"),
	BAD("[::1", "unterminated"),
	BAD("[]", "empty IPv6"),
	BAD("[1:2:3:4:5:6:7:8:9]", "invalid IPv6"),
	BAD("[:::1]", "invalid IPv6"),
	BAD("[1::2::3]", "invalid IPv6"),
	BAD("[127.0.0.1]", "invalid IPv6"),
	BAD("[example.com]", "invalid character in IPv6"),
	BAD("[::1 ]", "invalid character in IPv6"),
	BAD("[0000:0000:0000:0000:0000:0000:0000:0000:0000:1]", "too long"),
	BAD("::1", "write IPv6 in brackets"),
	BAD("2001:db8::1", "write IPv6 in brackets"),
	BAD("fe80::1", "write IPv6 in brackets"),
	BAD("::ffff:127.0.0.1", "write IPv6 in brackets"),
	BAD("example.com:443", "port is not part"),
	BAD("::1]", "':' in host"),
	BAD("a[::1]", "misplaced"),

	/* hostile bytes */
	BADN("example.com\0.evil.com", 21, "NUL"),
	BADN("\0", 1, "NUL"),
	BAD("example.com\r\nX-Evil: 1", "CR or LF"),
	BAD("example.com\n", "CR or LF"),
	BAD("exa\rmple.com", "CR or LF"),
	BAD("example.com%00", "'%'"),
	BAD("example%2ecom", "'%'"),
	BAD("user@example.com", "'@'"),
	BAD("example.com/path", "'/'"),
	BAD("example.com\\evil", "'/'"),
	BAD("example .com", "whitespace"),
	BAD(" example.com", "whitespace"),
	BAD("example.com\t", "whitespace"),
	BAD("exa\x01mple", "control character"),
	BAD("exa\x7fmple", "control character"),
	BAD("b\xc3\xbc" "cher.de", "punycode"),
	BAD("\x80", "punycode"),
	BAD("example.com\xff", "punycode"),
	BAD("*.example.com", "'*'"),
	BAD("exa!mple.com", "invalid character"),
	BAD("exa+mple.com", "invalid character"),
	BAD("example.com#", "invalid character"),
	BAD("example.com?", "invalid character"),
};

/*
 * Lengths: a 63-octet label is fine, 64 is not; a 253-octet name is fine
 * (also with its trailing dot), 254 is not.
 */
static void
test_lengths(void **state)
{
	char		 buf[300];
	struct host	 h;
	const char	*err;
	size_t		 i;

	(void)state;
	memset(buf, 'a', 63);
	memcpy(buf + 63, ".com", 5);
	assert_int_equal(host_canon(buf, strlen(buf), &h, &err), 0);
	assert_string_equal(h.text, buf);

	memset(buf, 'a', 64);
	memcpy(buf + 64, ".com", 5);
	assert_int_equal(host_canon(buf, strlen(buf), &h, &err), -1);
	assert_non_null(strstr(err, "63"));

	/* 4 x 63 + 3 dots = 255; trim to exactly 253. */
	for (i = 0; i < 253; i++)
		buf[i] = (i % 64 == 63) ? '.' : 'b';
	buf[253] = '\0';
	assert_int_equal(host_canon(buf, 253, &h, &err), 0);
	assert_int_equal(strlen(h.text), 253);
	buf[253] = '.';
	buf[254] = '\0';
	assert_int_equal(host_canon(buf, 254, &h, &err), 0);
	assert_int_equal(strlen(h.text), 253);
	buf[253] = 'b';
	assert_int_equal(host_canon(buf, 254, &h, &err), -1);
	assert_non_null(strstr(err, "253"));
	buf[254] = '.';
	buf[255] = '\0';
	assert_int_equal(host_canon(buf, 255, &h, &err), -1);
	assert_non_null(strstr(err, "253"));

	/* Very long input of every kind fails without overrunning. */
	memset(buf, '1', 299);
	assert_int_equal(host_canon(buf, 299, &h, &err), -1);
	buf[0] = '[';
	buf[298] = ']';
	assert_int_equal(host_canon(buf, 299, &h, &err), -1);
}

static void
test_canon_table(void **state)
{
	const struct canon_case	*c;
	struct host		 h, again;
	const char		*err;
	size_t			 i, len;
	int			 rc, failed = 0;

	(void)state;
	for (i = 0; i < sizeof(canon_cases) / sizeof(canon_cases[0]); i++) {
		c = &canon_cases[i];
		len = c->len ? c->len : strlen(c->in);
		err = NULL;
		rc = host_canon(c->in, len, &h, &err);
		if (c->ok) {
			if (rc != 0 || h.kind != c->kind ||
			    strcmp(h.text, c->text) != 0) {
				print_error("case %zu \"%s\": got rc %d kind %d "
				    "\"%s\" (%s), want kind %d \"%s\"\n", i,
				    c->in, rc, (int)h.kind, rc == 0 ? h.text :
				    "", err ? err : "", (int)c->kind, c->text);
				failed++;
				continue;
			}
			/* Canonical output re-canonicalises to itself. */
			rc = host_canon(h.text, strlen(h.text), &again, &err);
			if (rc != 0 || again.kind != h.kind ||
			    strcmp(again.text, h.text) != 0) {
				print_error("case %zu: \"%s\" is not a fixed "
				    "point\n", i, h.text);
				failed++;
			}
		} else if (rc != -1 || err == NULL ||
		    strstr(err, c->err) == NULL) {
			print_error("case %zu \"%s\": got rc %d \"%s\" (%s), "
			    "want error containing \"%s\"\n", i, c->in, rc,
			    rc == 0 ? h.text : "", err ? err : "(none)",
			    c->err);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

/* Binary addresses in the struct match the text. */
static void
test_canon_binary(void **state)
{
	struct host	 h;
	const char	*err;
	struct in6_addr	 a6;

	(void)state;
	assert_int_equal(host_canon("0x7f.1", 6, &h, &err), 0);
	assert_int_equal(ntohl(h.v4.s_addr), 0x7f000001);
	assert_int_equal(host_canon("[::ffff:10.0.0.1]", 17, &h, &err), 0);
	assert_int_equal(h.kind, HOST_IPV4);
	assert_int_equal(ntohl(h.v4.s_addr), 0x0a000001);
	assert_int_equal(host_canon("[2001:db8::1]", 13, &h, &err), 0);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", &a6), 1);
	assert_memory_equal(&h.v6, &a6, sizeof(a6));

	/* host_from_in6 unwraps like the text path does */
	assert_int_equal(inet_pton(AF_INET6, "::ffff:192.168.1.1", &a6), 1);
	host_from_in6(&h, &a6);
	assert_int_equal(h.kind, HOST_IPV4);
	assert_string_equal(h.text, "192.168.1.1");
	assert_int_equal(inet_pton(AF_INET6, "::1", &a6), 1);
	host_from_in6(&h, &a6);
	assert_int_equal(h.kind, HOST_IPV6);
	assert_string_equal(h.text, "[::1]");
	assert_int_equal(inet_pton(AF_INET6, "::", &a6), 1);
	host_from_in6(&h, &a6);
	assert_string_equal(h.text, "[::]");
	assert_int_equal(inet_pton(AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:"
	    "ffff:ffff", &a6), 1);
	host_from_in6(&h, &a6);
	assert_string_equal(h.text,
	    "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]");
}

struct port_case {
	const char	*in;
	int		 ok;
	uint16_t	 port;
};

static const struct port_case port_cases[] = {
	{ "1", 1, 1 },
	{ "80", 1, 80 },
	{ "443", 1, 443 },
	{ "65535", 1, 65535 },
	{ "0", 0, 0 },
	{ "00", 0, 0 },
	{ "080", 0, 0 },
	{ "65536", 0, 0 },
	{ "99999", 0, 0 },
	{ "100000", 0, 0 },
	{ "4294967377", 0, 0 },
	{ "+80", 0, 0 },
	{ "-1", 0, 0 },
	{ " 80", 0, 0 },
	{ "80 ", 0, 0 },
	{ "8a", 0, 0 },
	{ "0x50", 0, 0 },
	{ "", 0, 0 },
};

static void
test_port_table(void **state)
{
	size_t		 i;
	uint16_t	 p;
	int		 rc;

	(void)state;
	for (i = 0; i < sizeof(port_cases) / sizeof(port_cases[0]); i++) {
		p = 0;
		rc = port_parse(port_cases[i].in, strlen(port_cases[i].in),
		    &p);
		if (port_cases[i].ok) {
			if (rc != 0 || p != port_cases[i].port)
				fail_msg("port \"%s\": rc %d port %u",
				    port_cases[i].in, rc, p);
		} else if (rc != -1)
			fail_msg("port \"%s\" accepted as %u",
			    port_cases[i].in, p);
	}
}

struct target_case {
	const char	*in;
	uint16_t	 defport;
	int		 ok;
	const char	*host;
	uint16_t	 port;		/* also checked on failure */
	const char	*err;
};

static const struct target_case target_cases[] = {
	{ "example.com:443", 0, 1, "example.com", 443, NULL },
	{ "Example.com.:80", 0, 1, "example.com", 80, NULL },
	{ "example.com", 443, 1, "example.com", 443, NULL },
	{ "example.com", 0, 0, NULL, 0, "missing ':port'" },
	{ "example.com:", 443, 0, NULL, 0, "missing port" },
	{ "example.com:0", 443, 0, NULL, 0, "invalid port" },
	{ "example.com:65536", 443, 0, NULL, 0, "invalid port" },
	{ "example.com:065", 443, 0, NULL, 0, "invalid port" },
	{ "example.com:+80", 443, 0, NULL, 0, "invalid port" },
	{ "example.com: 80", 443, 0, NULL, 0, "invalid port" },
	{ "127.1:22", 0, 1, "127.0.0.1", 22, NULL },
	{ "0x7f000001:8080", 0, 1, "127.0.0.1", 8080, NULL },
	{ "[::1]:8080", 0, 1, "[::1]", 8080, NULL },
	{ "[::1]", 443, 1, "[::1]", 443, NULL },
	{ "[::1]", 0, 0, NULL, 0, "missing ':port'" },
	{ "[::ffff:127.0.0.1]:80", 0, 1, "127.0.0.1", 80, NULL },
	{ "[2001:DB8:0:0::1]:443", 0, 1, "[2001:db8::1]", 443, NULL },
	{ "[::1]x", 443, 0, NULL, 0, "after ']'" },
	{ "[::1]:", 443, 0, NULL, 0, "missing port" },
	{ "[::1:80", 443, 0, NULL, 0, "unterminated" },
	{ "[fe80::1%eth0]:80", 0, 0, NULL, 80, "zone ID" },
	{ "::1", 443, 0, NULL, 443, "write IPv6 in brackets" },
	{ "::1:80", 0, 0, NULL, 0, "write IPv6 in brackets" },
	{ "", 443, 0, NULL, 0, "empty target" },
	{ ":443", 0, 0, NULL, 443, "empty host" },
	{ "bad host:443", 0, 0, NULL, 443, "whitespace" },
	{ "1.2.3.4.5:80", 0, 0, NULL, 80, "more than four" },
	{ "user@example.com:80", 0, 0, NULL, 80, "'@'" },
};

static void
test_target_table(void **state)
{
	const struct target_case	*c;
	struct host			 h;
	const char			*err;
	uint16_t			 port;
	size_t				 i;
	int				 rc, failed = 0;

	(void)state;
	for (i = 0; i < sizeof(target_cases) / sizeof(target_cases[0]); i++) {
		c = &target_cases[i];
		err = NULL;
		rc = target_parse(c->in, strlen(c->in), c->defport, &h, &port,
		    &err);
		if (c->ok ? (rc != 0 || strcmp(h.text, c->host) != 0 ||
		    port != c->port) : (rc != -1 || port != c->port ||
		    err == NULL || strstr(err, c->err) == NULL)) {
			print_error("target \"%s\": rc %d host \"%s\" port %u "
			    "err \"%s\"\n", c->in, rc, h.text, port,
			    err ? err : "");
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

static void
test_target_format(void **state)
{
	struct host	 h;
	const char	*err;
	char		 buf[TARGET_TEXT_MAX];
	uint16_t	 port;

	(void)state;
	assert_int_equal(target_parse("[2001:db8::1]:443", 17, 0, &h, &port,
	    &err), 0);
	assert_int_equal(target_format(buf, sizeof(buf), &h, port), 17);
	assert_string_equal(buf, "[2001:db8::1]:443");
	assert_int_equal(target_parse("0177.1", 6, 80, &h, &port, &err), 0);
	target_format(buf, sizeof(buf), &h, port);
	assert_string_equal(buf, "127.0.0.1:80");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canon_table),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_canon_binary),
		cmocka_unit_test(test_port_table),
		cmocka_unit_test(test_target_table),
		cmocka_unit_test(test_target_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
