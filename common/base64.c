/*
 * base64 (RFC 4648): HTTP Basic credentials, for the upstream proxy's
 * Proxy-Authorization (policy/parent.c) and the credential swap
 * (proxy/cred.c).
 */
#include <stddef.h>
#include <stdint.h>

#include "common/base64.h"

static int	base64_value(unsigned char);

static const char base64_tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    "abcdefghijklmnopqrstuvwxyz0123456789+/";

size_t
base64_encode(const void *inv, size_t len, char *out)
{
	const unsigned char	*in = inv;
	uint32_t		 v;
	size_t			 i, o = 0;

	for (i = 0; i + 2 < len; i += 3) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		out[o++] = base64_tab[v >> 18 & 63];
		out[o++] = base64_tab[v >> 12 & 63];
		out[o++] = base64_tab[v >> 6 & 63];
		out[o++] = base64_tab[v & 63];
	}
	if (i < len) {
		v = (uint32_t)in[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		out[o++] = base64_tab[v >> 18 & 63];
		out[o++] = base64_tab[v >> 12 & 63];
		out[o++] = i + 1 < len ? base64_tab[v >> 6 & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
	return o;
}

/* The 6-bit value of base64 character c, or -1. */
static int
base64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int
base64_decode(const char *in, size_t len, void *outv, size_t *outlen)
{
	unsigned char	*out = outv;
	uint32_t	 v;
	size_t		 i, j, o = 0, pad;
	int		 d;

	if (len % 4 != 0)
		return -1;
	for (i = 0; i < len; i += 4) {
		pad = 0;
		if (i + 4 == len) {
			if (in[i + 3] == '=')
				pad++;
			if (pad == 1 && in[i + 2] == '=')
				pad++;
		}
		v = 0;
		for (j = 0; j < 4 - pad; j++) {
			if ((d = base64_value((unsigned char)in[i + j])) == -1)
				return -1;
			v = v << 6 | (uint32_t)d;
		}
		v <<= 6 * pad;
		/* The bits under the padding must be zero (canonical). */
		if ((pad == 1 && (v & 0xff) != 0) ||
		    (pad == 2 && (v & 0xffff) != 0))
			return -1;
		out[o++] = v >> 16 & 0xff;
		if (pad < 2)
			out[o++] = v >> 8 & 0xff;
		if (pad < 1)
			out[o++] = v & 0xff;
	}
	*outlen = o;
	return 0;
}
