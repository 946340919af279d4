/*
 * Where a running pisbx-run's socket is (common/runsock.h): one lookup
 * for pisbx-run --explain --run and for pisbx-supervisor's push.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/runsock.h"

int
runsock_base(char *buf, size_t len)
{
	const char	*t = getenv("TMPDIR");
	struct stat	 st;

	if (t == NULL || t[0] != '/' || stat(t, &st) == -1 ||
	    !S_ISDIR(st.st_mode))
		t = "/tmp";
	if ((size_t)snprintf(buf, len, "%s/pisbx-%lu", t,
	    (unsigned long)geteuid()) >= len)
		return -1;
	return 0;
}

int
runsock_find(long pid, char *buf, size_t len)
{
	struct dirent	*de;
	DIR		*d;
	char		 base[4096], prefix[64];
	size_t		 n, sl = strlen(RUNSOCK_SUFFIX), dl;
	int		 rc = -1;

	if (runsock_base(base, sizeof(base)) == -1 ||
	    (d = opendir(base)) == NULL)
		return -1;
	n = (size_t)snprintf(prefix, sizeof(prefix), "%s%ld.", RUNSOCK_PREFIX,
	    pid);
	while ((de = readdir(d)) != NULL) {
		dl = strlen(de->d_name);
		if (strncmp(de->d_name, prefix, n) != 0 || dl < n + sl ||
		    strcmp(de->d_name + dl - sl, RUNSOCK_SUFFIX) != 0)
			continue;
		if ((size_t)snprintf(buf, len, "%s/%s", base, de->d_name) <
		    len)
			rc = 0;
		break;
	}
	closedir(d);
	return rc;
}
