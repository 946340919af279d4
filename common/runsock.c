/*
 * Where a running pisbx-run's socket is (common/runsock.h): one lookup
 * for pisbx-run --explain --run and for pisbx-supervisor's push.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
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

int
runsock_ask(long pid, const char *line, char *ans, size_t anslen, int *none,
    char *err, size_t errlen)
{
	struct sockaddr_un	 sun;
	struct timeval		 tv = { RUNSOCK_TIMEOUT_S, 0 };
	char			 path[4096];
	size_t			 len = 0;
	struct ucred		 cr = { 0, (uid_t)-1, (gid_t)-1 };
	socklen_t		 crlen = sizeof(cr);
	ssize_t			 r;
	int			 s;

	*none = 0;
	if (anslen == 0)
		return -1;
	ans[0] = '\0';
	if (runsock_find(pid, path, sizeof(path)) == -1 ||
	    strlen(path) >= sizeof(sun.sun_path)) {
		*none = 1;
		snprintf(err, errlen, "no pisbx-run with pid %ld of this user "
		    "runs here", pid);
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == -1 ||
	    connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (s != -1)
			close(s);
		return -1;
	}
	/*
	 * The socket must be that run's own: its listener made by the
	 * process pid of our user.  A socket planted under the name (a
	 * base the command could write to, a stale one whose pid came
	 * back) would otherwise get the line -- a supervisor's push
	 * carries its capability.
	 */
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == -1 ||
	    (long)cr.pid != pid || cr.uid != geteuid()) {
		snprintf(err, errlen, "%s is not the socket of pisbx-run pid "
		    "%ld (it belongs to pid %ld, uid %ld): nothing was sent",
		    path, pid, (long)cr.pid, (long)cr.uid);
		close(s);
		return -1;
	}
	if (dprintf(s, "%s\n", line) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (s != -1)
			close(s);
		return -1;
	}
	while (len < anslen - 1 && (r = read(s, ans + len,
	    anslen - 1 - len)) > 0)
		len += (size_t)r;
	close(s);
	ans[len] = '\0';
	if (len == 0 || ans[len - 1] != '\n') {
		snprintf(err, errlen, "no answer from pisbx-run pid %ld", pid);
		return -1;
	}
	return 0;
}
