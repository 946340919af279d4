/*
 * text: showing text that came from elsewhere on a terminal.
 */
#include "common/text.h"

char *
text_mask(char *out, size_t outlen, const char *in)
{
	const unsigned char	*p = (const unsigned char *)in;
	size_t			 o = 0;

	if (outlen == 0)
		return out;
	while (*p != '\0' && o + 1 < outlen) {
		if (p[0] < 0x20 || p[0] == 0x7f) {
			out[o++] = '?';
			p++;
		} else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			/* A C1 control (CSI is U+009B) in UTF-8. */
			out[o++] = '?';
			p += 2;
		} else
			out[o++] = (char)*p++;
	}
	out[o] = '\0';
	return out;
}
