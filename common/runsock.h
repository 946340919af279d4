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

#endif
