/*
 * pattern_parse: valid forms with their canonical spelling and kind,
 * invalid forms with the message expected.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"

struct pattern_case {
	const char		*in;
	int			 deny;		/* pattern_parse flags */
	int			 ok;
	enum pattern_kind	 kind;
	const char		*text;		/* ok: canonical text */
	const char		*host;		/* ok: host.text (NULL: ANY) */
	uint16_t		 port;
	const char		*err;		/* !ok: substring */
};

#define OK(in, deny, kind, text, host, port) \
	{ in, deny, 1, kind, text, host, port, NULL }
#define BAD(in, deny, err) \
	{ in, deny, 0, PATTERN_EXACT, NULL, NULL, 0, err }

static const struct pattern_case pattern_cases[] = {
	/* exact names */
	OK("github.com", 0, PATTERN_EXACT, "github.com", "github.com", 0),
	OK("GitHub.COM.", 0, PATTERN_EXACT, "github.com", "github.com", 0),
	OK("  github.com\t\n", 0, PATTERN_EXACT, "github.com", "github.com", 0),
	OK("registry.npmjs.org:443", 0, PATTERN_EXACT,
	    "registry.npmjs.org:443", "registry.npmjs.org", 443),
	OK("localhost", 0, PATTERN_EXACT, "localhost", "localhost", 0),
	OK("localhost:65535", 0, PATTERN_EXACT, "localhost:65535",
	    "localhost", 65535),
	OK("a.b:1", 1, PATTERN_EXACT, "a.b:1", "a.b", 1),
	/* wildcards */
	OK("*.github.com", 0, PATTERN_WILDCARD, "*.github.com", "github.com",
	    0),
	OK("*.GitHub.com.:443", 0, PATTERN_WILDCARD, "*.github.com:443",
	    "github.com", 443),
	OK("*.co.uk", 1, PATTERN_WILDCARD, "*.co.uk", "co.uk", 0),
	OK("*.a.b.c.d", 0, PATTERN_WILDCARD, "*.a.b.c.d", "a.b.c.d", 0),
	/* IPv4 literals, any spelling */
	OK("127.0.0.1", 0, PATTERN_EXACT, "127.0.0.1", "127.0.0.1", 0),
	OK("127.1", 0, PATTERN_EXACT, "127.0.0.1", "127.0.0.1", 0),
	OK("0x7f000001:8080", 0, PATTERN_EXACT, "127.0.0.1:8080", "127.0.0.1",
	    8080),
	OK("0251.0376.0251.0376", 1, PATTERN_EXACT, "169.254.169.254",
	    "169.254.169.254", 0),
	/* IPv6 literals */
	OK("[::1]", 0, PATTERN_EXACT, "[::1]", "[::1]", 0),
	OK("[0:0::1]:8443", 0, PATTERN_EXACT, "[::1]:8443", "[::1]", 8443),
	OK("[2001:DB8::0:1]", 0, PATTERN_EXACT, "[2001:db8::1]",
	    "[2001:db8::1]", 0),
	OK("[::ffff:10.0.0.1]:80", 0, PATTERN_EXACT, "10.0.0.1:80",
	    "10.0.0.1", 80),
	/* any host: deny list only */
	OK("*", 1, PATTERN_ANY, "*", NULL, 0),
	OK(" * ", 1, PATTERN_ANY, "*", NULL, 0),
	OK("*:22", 1, PATTERN_ANY, "*:22", NULL, 22),
	BAD("*", 0, "only allowed in deniedDomains"),
	BAD("*:443", 0, "only allowed in deniedDomains"),

	BAD("", 0, "empty pattern"),
	BAD("   ", 1, "empty pattern"),
	BAD(":443", 0, "empty host"),
	BAD("https://github.com", 0, "not a URL"),
	BAD("http://x", 1, "not a URL"),
	BAD("github.com/path", 0, "not a URL"),
	BAD("*x.com", 0, "'*'"),
	BAD("x*.com", 0, "'*'"),
	BAD("a.*.com", 0, "'*'"),
	BAD("*.*.com", 0, "'*'"),
	BAD("**.example.com", 0, "'*'"),
	BAD("*.com", 0, "at least two labels"),
	BAD("*.internal", PATTERN_DENY_LIST, "at least two labels"),
	/* routing lists (noProxy) take a one-label suffix */
	OK("*.internal", PATTERN_SHORT_SUFFIX, PATTERN_WILDCARD, "*.internal",
	    "internal", 0),
	OK("*.Corp:8080", PATTERN_SHORT_SUFFIX, PATTERN_WILDCARD,
	    "*.corp:8080", "corp", 8080),
	BAD("*", PATTERN_SHORT_SUFFIX, "only allowed in deniedDomains"),
	BAD("*.1.2", PATTERN_SHORT_SUFFIX, "not an IP address"),
	BAD("*.com.", 1, "at least two labels"),
	BAD("*.", 0, "empty host"),
	BAD("*.127.0.0.1", 0, "not an IP address"),
	BAD("*.[::1]", 0, "must be a DNS name"),
	BAD("*.foo.123", 0, "invalid IPv4"),
	BAD("a..b", 0, "empty label"),
	BAD(".a.b", 0, "empty label"),
	BAD("git hub.com", 0, "whitespace inside"),
	BAD("github.com :443", 0, "whitespace inside"),
	BAD("github.com:0", 0, "invalid port"),
	BAD("github.com:65536", 0, "invalid port"),
	BAD("github.com:0443", 0, "invalid port"),
	BAD("github.com:", 0, "missing port"),
	BAD("github.com:-1", 0, "invalid port"),
	BAD("github.com:443:443", 0, "a port is not part of the host"),
	BAD("::1", 0, "brackets"),
	BAD("[::1]:0", 0, "invalid port"),
	BAD("[::1]443", 0, "after ']'"),
	BAD("[::1", 0, "unterminated"),
	BAD("[fe80::1%eth0]", 0, "zone ID"),
	BAD("user@github.com", 0, "'@'"),
	BAD("b\xc3\xbc" "cher.de", 0, "punycode"),
	BAD("1.2.3.4.5", 0, "more than four"),
	BAD("256.1.1.1", 0, "out of range"),
};

static void
test_pattern_table(void **state)
{
	const struct pattern_case	*c;
	struct pattern			 p, again;
	const char			*err;
	size_t				 i;
	int				 rc, failed = 0;

	(void)state;
	for (i = 0; i < sizeof(pattern_cases) / sizeof(pattern_cases[0]);
	    i++) {
		c = &pattern_cases[i];
		err = NULL;
		rc = pattern_parse(c->in, strlen(c->in), c->deny, &p, &err);
		if (!c->ok) {
			if (rc != -1 || err == NULL ||
			    strstr(err, c->err) == NULL) {
				print_error("case %zu \"%s\": rc %d \"%s\" "
				    "(%s), want error with \"%s\"\n", i, c->in,
				    rc, rc == 0 ? p.text : "",
				    err ? err : "none", c->err);
				failed++;
			}
			continue;
		}
		if (rc != 0 || p.kind != c->kind ||
		    strcmp(p.text, c->text) != 0 || p.port != c->port ||
		    (c->host != NULL && strcmp(p.host.text, c->host) != 0)) {
			print_error("case %zu \"%s\": rc %d kind %d text \"%s\" "
			    "host \"%s\" port %u (%s)\n", i, c->in, rc,
			    (int)p.kind, p.text, p.host.text, p.port,
			    err ? err : "");
			failed++;
			continue;
		}
		/* The canonical spelling parses back to itself. */
		rc = pattern_parse(p.text, strlen(p.text), c->deny, &again,
		    &err);
		if (rc != 0 || strcmp(again.text, p.text) != 0 ||
		    again.kind != p.kind || again.port != p.port) {
			print_error("case %zu: \"%s\" is not a fixed point\n",
			    i, p.text);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

/* An explicit length stops at a NUL; a NUL inside the length is refused. */
static void
test_pattern_nul(void **state)
{
	struct pattern	 p;
	const char	*err;

	(void)state;
	assert_int_equal(pattern_parse("a.com\0b.com", 11, 0, &p, &err), -1);
	assert_non_null(strstr(err, "NUL"));
	assert_int_equal(pattern_parse("a.com\0b.com", 5, 0, &p, &err), 0);
	assert_string_equal(p.text, "a.com");
}

/* The longest pattern text fits its buffer. */
static void
test_pattern_longest(void **state)
{
	char		 buf[300];
	struct pattern	 p;
	const char	*err;
	size_t		 i;

	(void)state;
	memcpy(buf, "*.", 2);
	for (i = 0; i < 253; i++)
		buf[2 + i] = (i % 64 == 63) ? '.' : 'c';
	memcpy(buf + 255, ":65535", 7);
	assert_int_equal(pattern_parse(buf, strlen(buf), 0, &p, &err), 0);
	assert_string_equal(p.text, buf);
	assert_int_equal(p.port, 65535);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pattern_table),
		cmocka_unit_test(test_pattern_nul),
		cmocka_unit_test(test_pattern_longest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
