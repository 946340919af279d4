/*
 * The socket of a running pisbx-run: "BASE/pisbx-run.PID.XXXXXX.sock",
 * next to its run directory "BASE/pisbx-run.PID.XXXXXX", where BASE is
 * "$TMPDIR/pisbx-UID" ($TMPDIR when it is an absolute directory, else
 * /tmp): the user's alone (0700) and hidden in every sandbox.  pisbx-run
 * answers --explain --run and a supervisor's pushed policy there; both
 * pisbx-run and pisbx-supervisor look it up by pid, here.
 */
#ifndef PISBX_RUNSOCK_H
#define PISBX_RUNSOCK_H

#include <stddef.h>

#define RUNSOCK_PREFIX	"pisbx-run."	/* the run directory's too */
#define RUNSOCK_SUFFIX	".sock"

/* BASE into buf: 0, or -1 when it does not fit. */
int	runsock_base(char *buf, size_t len);
/* The socket of the run with pid into buf: 0, or -1 when there is none. */
int	runsock_find(long pid, char *buf, size_t len);
/*
 * One exchange with the run with pid: line (a newline is added) sent,
 * the answer read to its end into ans (NUL-terminated), each way within
 * RUNSOCK_TIMEOUT_S.  0, or -1 with err set: there is no such run (1 in
 * *none), or it could not be asked.
 */
#define RUNSOCK_TIMEOUT_S	5
int	runsock_ask(long pid, const char *line, char *ans, size_t anslen,
	    int *none, char *err, size_t errlen);

#endif
