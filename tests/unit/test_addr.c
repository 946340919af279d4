/*
 * addr_class_v4/v6/addr_class: every special-purpose range at its edges
 * (first and last address inside, the neighbours outside), embedded IPv4
 * in mapped/compatible/NAT64/6to4/Teredo forms, and the sockaddr dispatch.
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"

struct addr_case {
	const char	*addr;
	const char	*class;		/* NULL: public */
};

static const struct addr_case v4_cases[] = {
	{ "0.0.0.0", "unspecified" },
	{ "0.0.0.1", "this-network" },
	{ "0.255.255.255", "this-network" },
	{ "1.0.0.0", NULL },
	{ "1.1.1.1", NULL },
	{ "8.8.8.8", NULL },
	{ "9.255.255.255", NULL },
	{ "10.0.0.0", "rfc1918" },
	{ "10.255.255.255", "rfc1918" },
	{ "11.0.0.0", NULL },
	{ "100.63.255.255", NULL },
	{ "100.64.0.0", "cgnat" },
	{ "100.127.255.255", "cgnat" },
	{ "100.128.0.0", NULL },
	{ "126.255.255.255", NULL },
	{ "127.0.0.0", "loopback" },
	{ "127.0.0.1", "loopback" },
	{ "127.255.255.255", "loopback" },
	{ "128.0.0.0", NULL },
	{ "169.253.255.255", NULL },
	{ "169.254.0.0", "link-local" },
	{ "169.254.169.254", "link-local" },
	{ "169.254.255.255", "link-local" },
	{ "169.255.0.0", NULL },
	{ "172.15.255.255", NULL },
	{ "172.16.0.0", "rfc1918" },
	{ "172.31.255.255", "rfc1918" },
	{ "172.32.0.0", NULL },
	{ "191.255.255.255", NULL },
	{ "192.0.0.0", "ietf-protocol" },
	{ "192.0.0.255", "ietf-protocol" },
	{ "192.0.1.0", NULL },
	{ "192.0.1.255", NULL },
	{ "192.0.2.0", "documentation" },
	{ "192.0.2.255", "documentation" },
	{ "192.0.3.0", NULL },
	{ "192.88.98.255", NULL },
	{ "192.88.99.0", "6to4-relay" },
	{ "192.88.99.255", "6to4-relay" },
	{ "192.88.100.0", NULL },
	{ "192.167.255.255", NULL },
	{ "192.168.0.0", "rfc1918" },
	{ "192.168.255.255", "rfc1918" },
	{ "192.169.0.0", NULL },
	{ "198.17.255.255", NULL },
	{ "198.18.0.0", "benchmarking" },
	{ "198.19.255.255", "benchmarking" },
	{ "198.20.0.0", NULL },
	{ "198.51.99.255", NULL },
	{ "198.51.100.0", "documentation" },
	{ "198.51.100.255", "documentation" },
	{ "198.51.101.0", NULL },
	{ "203.0.112.255", NULL },
	{ "203.0.113.0", "documentation" },
	{ "203.0.113.255", "documentation" },
	{ "203.0.114.0", NULL },
	{ "223.255.255.255", NULL },
	{ "224.0.0.0", "multicast" },
	{ "239.255.255.255", "multicast" },
	{ "240.0.0.0", "reserved" },
	{ "255.255.255.254", "reserved" },
	{ "255.255.255.255", "broadcast" },
};

static const struct addr_case v6_cases[] = {
	{ "::", "unspecified" },
	{ "::1", "loopback" },
	/* ::/96 compatible: the embedded IPv4 decides */
	{ "::2", "this-network" },
	{ "::8.8.8.8", NULL },
	{ "::127.0.0.1", "loopback" },
	{ "::255.255.255.255", "broadcast" },
	{ "::1:0:0", NULL },
	/* ::ffff:0:0/96 mapped */
	{ "::ffff:0.0.0.0", "unspecified" },
	{ "::ffff:127.0.0.1", "loopback" },
	{ "::ffff:169.254.169.254", "link-local" },
	{ "::ffff:10.0.0.1", "rfc1918" },
	{ "::ffff:8.8.8.8", NULL },
	{ "::fffe:ffff:ffff", NULL },
	{ "::1:0:0:0", NULL },
	/* 64:ff9b::/96 NAT64 */
	{ "64:ff9b::", "unspecified" },
	{ "64:ff9b::127.0.0.1", "loopback" },
	{ "64:ff9b::192.168.1.1", "rfc1918" },
	{ "64:ff9b::8.8.8.8", NULL },
	{ "64:ff9b::ffff:ffff", "broadcast" },
	{ "64:ff9b::1:0:0", NULL },
	{ "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	/* 64:ff9b:1::/48 */
	{ "64:ff9b:1::", "nat64-local" },
	{ "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "nat64-local" },
	{ "64:ff9b:2::", NULL },
	{ "64:ff9b:0:ffff:ffff:ffff:ffff:ffff", NULL },
	/* 100::/64 */
	{ "100::", "discard" },
	{ "100::ffff:ffff:ffff:ffff", "discard" },
	{ "100:0:0:1::", NULL },
	{ "ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	/* 2001::/32 Teredo: server bits 32..63, client ~last 32 bits */
	{ "2001:0:808:808::f7f7:f7f7", NULL },		/* 8.8.8.8 both */
	{ "2001:0:7f00:1::f7f7:f7f7", "loopback" },	/* server 127.0.0.1 */
	{ "2001:0:808:808::80ff:fffe", "loopback" },	/* client 127.0.0.1 */
	{ "2001:0:808:808::f5ff:fffe", "rfc1918" },	/* client 10.0.0.1 */
	{ "2001:0:808:808::5601:5601", "link-local" },	/* client 169.254.169.254 */
	{ "2001::", "unspecified" },			/* server 0.0.0.0 */
	{ "2001:0:ffff:ffff:ffff:ffff:ffff:ffff", "broadcast" },
	{ "2001:1::1", NULL },
	/* 2001:2::/48 benchmarking */
	{ "2001:2::", "benchmarking" },
	{ "2001:2:0:ffff:ffff:ffff:ffff:ffff", "benchmarking" },
	{ "2001:2:1::", NULL },
	/* 2001:10::/28 and 2001:20::/28 ORCHID */
	{ "2001:f:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	{ "2001:10::", "orchid" },
	{ "2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", "orchid" },
	{ "2001:20::", "orchid" },
	{ "2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", "orchid" },
	{ "2001:30::", NULL },
	/* 2001:db8::/32 documentation */
	{ "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	{ "2001:db8::", "documentation" },
	{ "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation" },
	{ "2001:db9::", NULL },
	/* 2002::/16 6to4: bits 16..47 */
	{ "2002:808:808::1", NULL },
	{ "2002:7f00:1::1", "loopback" },
	{ "2002:a9fe:a9fe::", "link-local" },
	{ "2002:c0a8:101:ffff:ffff:ffff:ffff:ffff", "rfc1918" },
	{ "2002::", "unspecified" },
	{ "2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	{ "2003::", NULL },
	{ "2606:4700:4700::1111", NULL },
	/* 3fff::/20 documentation */
	{ "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	{ "3fff::", "documentation" },
	{ "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "documentation" },
	{ "3fff:1000::", NULL },
	/* 5f00::/16 SRv6 SIDs */
	{ "5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	{ "5f00::", "srv6-sid" },
	{ "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "srv6-sid" },
	{ "5f01::", NULL },
	/* fc00::/7 */
	{ "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	{ "fc00::", "ula" },
	{ "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ula" },
	{ "fe00::", NULL },
	{ "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	/* fe80::/10 */
	{ "fe80::", "link-local" },
	{ "fe80::1", "link-local" },
	{ "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local" },
	/* fec0::/10 */
	{ "fec0::", "site-local" },
	{ "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "site-local" },
	/* ff00::/8 */
	{ "ff00::", "multicast" },
	{ "ff02::1", "multicast" },
	{ "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast" },
};

static int
check(const char *addr, const char *got, const char *want)
{
	if (got == NULL && want == NULL)
		return 0;
	if (got != NULL && want != NULL && strcmp(got, want) == 0)
		return 0;
	print_error("%s: got %s, want %s\n", addr, got ? got : "public",
	    want ? want : "public");
	return 1;
}

static void
test_addr_v4(void **state)
{
	struct sockaddr_in	 sin;
	size_t			 i;
	int			 failed = 0;

	(void)state;
	for (i = 0; i < sizeof(v4_cases) / sizeof(v4_cases[0]); i++) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, v4_cases[i].addr,
		    &sin.sin_addr), 1);
		failed += check(v4_cases[i].addr, addr_class_v4(&sin.sin_addr),
		    v4_cases[i].class);
		failed += check(v4_cases[i].addr,
		    addr_class((struct sockaddr *)&sin), v4_cases[i].class);
	}
	assert_int_equal(failed, 0);
}

static void
test_addr_v6(void **state)
{
	struct sockaddr_in6	 sin6;
	size_t			 i;
	int			 failed = 0;

	(void)state;
	for (i = 0; i < sizeof(v6_cases) / sizeof(v6_cases[0]); i++) {
		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, v6_cases[i].addr,
		    &sin6.sin6_addr), 1);
		failed += check(v6_cases[i].addr,
		    addr_class_v6(&sin6.sin6_addr), v6_cases[i].class);
		failed += check(v6_cases[i].addr,
		    addr_class((struct sockaddr *)&sin6), v6_cases[i].class);
	}
	assert_int_equal(failed, 0);
}

/* A family the proxy never dials is never public. */
static void
test_addr_family(void **state)
{
	struct sockaddr_un	 sun;

	(void)state;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	assert_string_equal(addr_class((struct sockaddr *)&sun),
	    "unknown-family");
	assert_string_equal(addr_class(NULL), "unknown-family");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addr_v4),
		cmocka_unit_test(test_addr_v6),
		cmocka_unit_test(test_addr_family),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
