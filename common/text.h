/*
 * text: what pisbx prints of text someone else chose (a path the
 * sandboxed command created, a host, an error a peer sent), made safe
 * for a terminal and for a log line.
 */
#ifndef PISBX_TEXT_H
#define PISBX_TEXT_H

#include <stddef.h>

/* text_clean flags */
#define TEXT_ASCII	0x01	/* every byte outside 0x20..0x7e masked */

/*
 * Copy src into dst (size bytes with the NUL, truncated, never in the
 * middle of a character) with every byte that could move the cursor,
 * start an escape sequence or pass for a line of ours replaced by '?':
 * C0 controls (newline and ESC among them), DEL, and every byte of a
 * malformed UTF-8 sequence (a lone 0x9b is CSI to an 8-bit terminal).
 * Well-formed UTF-8 is kept, but for the C1 controls (U+0080..U+009F),
 * the line and paragraph separators (U+2028, U+2029) and the bidi
 * controls (U+202A..U+202E, U+2066..U+2069), which would reorder what a
 * person reads; with TEXT_ASCII all of it is masked (the access log).
 * Returns the length written.
 */
size_t	text_clean(char *dst, size_t size, const char *src, int flags);

#endif
