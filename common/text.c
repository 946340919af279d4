/*
 * text: masking text someone else chose before pisbx prints it.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/text.h"

static size_t	text_utf8(const unsigned char *, uint32_t *);
static int	text_code_ok(uint32_t);

/*
 * The length of the well-formed UTF-8 sequence at p (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF) and its code
 * point, or 0.
 */
static size_t
text_utf8(const unsigned char *p, uint32_t *cp)
{
	size_t		 n, i;
	uint32_t	 c, min;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		c = p[0] & 0x1f;
		min = 0x80;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		c = p[0] & 0x0f;
		min = 0x800;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		c = p[0] & 0x07;
		min = 0x10000;
	} else
		return 0;
	/* A NUL ends the loop too: it is no continuation byte. */
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* Whether a code point past ASCII may reach a terminal as it is. */
static int
text_code_ok(uint32_t c)
{
	return !(c <= 0x9f || c == 0x2028 || c == 0x2029 ||
	    (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069));
}

size_t
text_clean(char *dst, size_t size, const char *src, int flags)
{
	const unsigned char	*p = (const unsigned char *)src;
	size_t			 o = 0, n, i;
	uint32_t		 cp;

	if (size == 0)
		return 0;
	while (*p != '\0' && o + 1 < size) {
		if (*p >= 0x20 && *p < 0x7f) {
			dst[o++] = (char)*p++;
			continue;
		}
		n = (flags & TEXT_ASCII) || *p < 0x80 ? 0 : text_utf8(p, &cp);
		if (n == 0 || !text_code_ok(cp)) {
			/* One '?' per byte of what is masked. */
			if (n == 0)
				n = 1;
			for (i = 0; i < n && o + 1 < size; i++)
				dst[o++] = '?';
			p += n;
			continue;
		}
		if (o + n >= size)
			break;
		for (i = 0; i < n; i++)
			dst[o++] = (char)*p++;
	}
	dst[o] = '\0';
	return o;
}
