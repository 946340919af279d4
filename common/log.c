/*
 * Diagnostic logging to stderr, one line per message, prefixed with the
 * program name.  log_warn and fatal append strerror(errno).  Control
 * characters in a message are masked (common/text.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "common/log.h"
#include "common/text.h"

static const char *log_progname = "pisbx";
static int log_verbose;

static void	log_clean(char *);

/*
 * A message is one line on a terminal, whatever a path or a name in it
 * holds: a newline or an escape sequence in a file name the sandboxed
 * command made would otherwise let it write pisbx's lines for it.
 */
static void
log_clean(char *buf)
{
	char	 out[4096];

	text_clean(out, sizeof(out), buf, 0);
	memcpy(buf, out, strlen(out) + 1);
}

void
log_init(const char *progname, int verbose)
{
	const char *slash;

	if (progname != NULL) {
		slash = strrchr(progname, '/');
		log_progname = slash != NULL ? slash + 1 : progname;
	}
	log_verbose = verbose;
}

void
log_setverbose(int verbose)
{
	log_verbose = verbose;
}

int
log_getverbose(void)
{
	return log_verbose;
}

const char *
log_getname(void)
{
	return log_progname;
}

void
vlog(int pri, const char *fmt, va_list ap)
{
	char buf[4096];

	if (pri == LOG_DEBUG && log_verbose < 2)
		return;
	if (pri == LOG_INFO && log_verbose < 1)
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	log_clean(buf);
	fprintf(stderr, "%s: %s\n", log_progname, buf);
	fflush(stderr);
}

/* Log with ": strerror(errno)" appended, keeping errno intact. */
static void
vlog_errno(int pri, const char *fmt, va_list ap)
{
	char buf[4096];
	int saved = errno;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	log_clean(buf);
	fprintf(stderr, "%s: %s: %s\n", log_progname, buf, strerror(saved));
	fflush(stderr);
	(void)pri;
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_errno(LOG_WARNING, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap);
	va_end(ap);
}

/* An event worth a line whatever the verbosity (a reload), not a warning. */
void
log_notice(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_NOTICE, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_errno(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}
