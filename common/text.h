/*
 * text: showing text that came from elsewhere on a terminal.
 */
#ifndef PISBX_TEXT_H
#define PISBX_TEXT_H

#include <stddef.h>

/*
 * Copy in to out (outlen bytes, NUL included, cut if longer) with every
 * control character -- C0, DEL, and C1 as UTF-8 (U+0080..U+009F) --
 * shown as '?': a name a command chose (a file, a socket) printed on
 * pisbx's own lines can then neither end the line nor carry a terminal
 * escape sequence.  Other bytes, UTF-8 text included, are kept.
 * Returns out.
 */
char	*text_mask(char *out, size_t outlen, const char *in);

#endif
