/*
 * shell: quoting text for a POSIX shell.
 */
#ifndef PISBX_SHELL_H
#define PISBX_SHELL_H

/* The bytes shell_quote needs for n bytes of text, its NUL included. */
#define SHELL_QUOTE_SIZE(n)	((n) * 4 + 3)

/*
 * Write s to dst as one single-quoted word ('it'\''s'), which a POSIX
 * shell reads back as exactly s; dst holds SHELL_QUOTE_SIZE(strlen(s))
 * bytes.  Returns the end of what was written (its NUL).
 */
char	*shell_quote(char *dst, const char *s);

#endif
