/*
 * shell: single-quote text for a POSIX shell.
 */
#include <string.h>

#include "common/shell.h"

char *
shell_quote(char *dst, const char *s)
{
	char	*p = dst;

	*p++ = '\'';
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			p = stpcpy(p, "'\\''");
		else
			*p++ = *s;
	}
	*p++ = '\'';
	*p = '\0';
	return p;
}
