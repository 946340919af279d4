/*
 * A system error's name (EPERM), as the scenarios match it, for the test
 * helpers that print what each call answered.  E<n> for a number glibc
 * does not name.
 */
#ifndef TESTS_HELPERS_ERRNAME_H
#define TESTS_HELPERS_ERRNAME_H

#include <stdio.h>
#include <string.h>

static const char *
errname(int e)
{
	static char	 buf[32];
	const char	*n = strerrorname_np(e);

	if (n != NULL)
		return n;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

#endif
