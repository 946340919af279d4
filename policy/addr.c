/*
 * Address classification from the IANA IPv4 and IPv6 Special-Purpose
 * Address Registries (RFC 6890 and successors).  A name that resolves to
 * a non-public address is how a sandboxed command would reach the host's
 * loopback services, the LAN or a cloud metadata endpoint through an
 * allowed-looking name (DNS rebinding), so the proxy refuses it unless an
 * exact allow entry names the host.
 *
 * IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64,
 * 6to4, Teredo) are classified by the IPv4 address they would reach: a
 * translator or relay forwards to it, so 64:ff9b::7f00:1 is loopback.
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "policy/policy.h"

struct addr_v4_range {
	uint32_t	 net;
	unsigned	 plen;
	const char	*name;
};

/* More specific entries first: the first match names the class. */
static const struct addr_v4_range addr_v4_ranges[] = {
	{ 0x00000000, 32, "unspecified" },	/* 0.0.0.0 */
	{ 0x00000000, 8, "this-network" },	/* 0.0.0.0/8 */
	{ 0x0a000000, 8, "rfc1918" },		/* 10.0.0.0/8 */
	{ 0x64400000, 10, "cgnat" },		/* 100.64.0.0/10 */
	{ 0x7f000000, 8, "loopback" },		/* 127.0.0.0/8 */
	{ 0xa9fe0000, 16, "link-local" },	/* 169.254.0.0/16, metadata */
	{ 0xac100000, 12, "rfc1918" },		/* 172.16.0.0/12 */
	{ 0xc0000000, 24, "ietf-protocol" },	/* 192.0.0.0/24 */
	{ 0xc0000200, 24, "documentation" },	/* 192.0.2.0/24 */
	{ 0xc0586300, 24, "6to4-relay" },	/* 192.88.99.0/24 */
	{ 0xc0a80000, 16, "rfc1918" },		/* 192.168.0.0/16 */
	{ 0xc6120000, 15, "benchmarking" },	/* 198.18.0.0/15 */
	{ 0xc6336400, 24, "documentation" },	/* 198.51.100.0/24 */
	{ 0xcb007100, 24, "documentation" },	/* 203.0.113.0/24 */
	{ 0xe0000000, 4, "multicast" },		/* 224.0.0.0/4 */
	{ 0xffffffff, 32, "broadcast" },	/* 255.255.255.255 */
	{ 0xf0000000, 4, "reserved" },		/* 240.0.0.0/4 */
};

enum addr_v6_action {
	V6_CLASS,		/* the range's own class */
	V6_EMBED_LOW32,		/* classify bytes 12..15 (mapped, NAT64) */
	V6_EMBED_6TO4,		/* classify bytes 2..5 */
	V6_EMBED_TEREDO		/* server bytes 4..7, client ~bytes 12..15 */
};

struct addr_v6_range {
	uint8_t			 net[16];
	unsigned		 plen;
	enum addr_v6_action	 action;
	const char		*name;
};

static const struct addr_v6_range addr_v6_ranges[] = {
	{ { 0 }, 128, V6_CLASS, "unspecified" },			/* :: */
	{ { [15] = 1 }, 128, V6_CLASS, "loopback" },			/* ::1 */
	{ { [10] = 0xff, [11] = 0xff }, 96, V6_EMBED_LOW32, NULL },	/* ::ffff:0:0/96 */
	{ { 0 }, 96, V6_EMBED_LOW32, NULL },			/* ::/96 compatible */
	{ { 0x00, 0x64, 0xff, 0x9b }, 96, V6_EMBED_LOW32, NULL },	/* 64:ff9b::/96 */
	{ { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, 48, V6_CLASS,
	    "nat64-local" },					/* 64:ff9b:1::/48 */
	{ { 0x01, 0x00 }, 64, V6_CLASS, "discard" },		/* 100::/64 */
	{ { 0x20, 0x01, 0x00, 0x00 }, 32, V6_EMBED_TEREDO, NULL },	/* 2001::/32 */
	{ { 0x20, 0x01, 0x00, 0x02 }, 48, V6_CLASS, "benchmarking" },	/* 2001:2::/48 */
	{ { 0x20, 0x01, 0x00, 0x10 }, 28, V6_CLASS, "orchid" },	/* 2001:10::/28 */
	{ { 0x20, 0x01, 0x00, 0x20 }, 28, V6_CLASS, "orchid" },	/* 2001:20::/28 */
	{ { 0x20, 0x01, 0x0d, 0xb8 }, 32, V6_CLASS, "documentation" },	/* 2001:db8::/32 */
	{ { 0x20, 0x02 }, 16, V6_EMBED_6TO4, NULL },			/* 2002::/16 */
	{ { 0x3f, 0xff }, 20, V6_CLASS, "documentation" },		/* 3fff::/20 */
	{ { 0x5f, 0x00 }, 16, V6_CLASS, "srv6-sid" },		/* 5f00::/16 */
	{ { 0xfc }, 7, V6_CLASS, "ula" },				/* fc00::/7 */
	{ { 0xfe, 0x80 }, 10, V6_CLASS, "link-local" },		/* fe80::/10 */
	{ { 0xfe, 0xc0 }, 10, V6_CLASS, "site-local" },		/* fec0::/10 */
	{ { 0xff }, 8, V6_CLASS, "multicast" },			/* ff00::/8 */
};

static int	 addr_v6_in(const uint8_t *, const struct addr_v6_range *);
static const char *addr_class_bytes(const uint8_t *);

const char *
addr_class_v4(const struct in_addr *a)
{
	uint32_t	 v = ntohl(a->s_addr), mask;
	size_t		 i;

	for (i = 0; i < sizeof(addr_v4_ranges) / sizeof(addr_v4_ranges[0]);
	    i++) {
		mask = addr_v4_ranges[i].plen == 0 ? 0 :
		    0xffffffffU << (32 - addr_v4_ranges[i].plen);
		if ((v & mask) == addr_v4_ranges[i].net)
			return addr_v4_ranges[i].name;
	}
	return NULL;
}

/* Classify four bytes in network order as an IPv4 address. */
static const char *
addr_class_bytes(const uint8_t *b)
{
	struct in_addr	 a;

	memcpy(&a.s_addr, b, 4);
	return addr_class_v4(&a);
}

static int
addr_v6_in(const uint8_t *b, const struct addr_v6_range *r)
{
	unsigned	 full = r->plen / 8, rest = r->plen % 8;
	uint8_t		 mask;

	if (memcmp(b, r->net, full) != 0)
		return 0;
	if (rest == 0)
		return 1;
	mask = (uint8_t)(0xff << (8 - rest));
	return (b[full] & mask) == r->net[full];
}

const char *
addr_class_v6(const struct in6_addr *a)
{
	const struct addr_v6_range	*r;
	const uint8_t			*b = a->s6_addr;
	uint8_t				 client[4];
	const char			*c;
	size_t				 i, j;

	for (i = 0; i < sizeof(addr_v6_ranges) / sizeof(addr_v6_ranges[0]);
	    i++) {
		r = &addr_v6_ranges[i];
		if (!addr_v6_in(b, r))
			continue;
		switch (r->action) {
		case V6_CLASS:
			return r->name;
		case V6_EMBED_LOW32:
			return addr_class_bytes(b + 12);
		case V6_EMBED_6TO4:
			return addr_class_bytes(b + 2);
		case V6_EMBED_TEREDO:
			/* RFC 4380 section 4: the server's IPv4 in bits
			 * 32..63, the client's obfuscated (inverted) in the
			 * last 32 bits. */
			if ((c = addr_class_bytes(b + 4)) != NULL)
				return c;
			for (j = 0; j < 4; j++)
				client[j] = (uint8_t)~b[12 + j];
			return addr_class_bytes(client);
		}
	}
	return NULL;
}

const char *
addr_class(const struct sockaddr *sa)
{
	if (sa == NULL)
		return "unknown-family";
	switch (sa->sa_family) {
	case AF_INET:
		return addr_class_v4(
		    &((const struct sockaddr_in *)(const void *)sa)->sin_addr);
	case AF_INET6:
		return addr_class_v6(
		    &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
	}
	return "unknown-family";
}
