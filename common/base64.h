/*
 * base64 (RFC 4648 section 4, the standard alphabet with padding): the
 * encoding of HTTP Basic credentials, both ways.  Decoding is strict --
 * a length that is not a multiple of 4, a byte outside the alphabet,
 * padding anywhere but the end or non-zero bits under the padding are
 * refused -- so that one text has one meaning (RFC 4648 section 3.5).
 */
#ifndef PISBX_BASE64_H
#define PISBX_BASE64_H

#include <stddef.h>

/* Bytes of the encoding of len bytes, without the NUL. */
#define BASE64_ENCLEN(len)	(((len) + 2) / 3 * 4)
/* Most bytes that len characters decode to. */
#define BASE64_DECLEN(len)	((len) / 4 * 3)

/*
 * Encode len bytes at in into out, which has room for BASE64_ENCLEN(len)
 * + 1 bytes (NUL-terminated); returns the encoded length.
 */
size_t	base64_encode(const void *in, size_t len, char *out);
/*
 * Decode len characters at in into out (room for BASE64_DECLEN(len)
 * bytes); *outlen gets the decoded length.  0, or -1 when in is not
 * strict base64.
 */
int	base64_decode(const char *in, size_t len, void *out, size_t *outlen);

#endif
