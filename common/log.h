/*
 * Diagnostic logging (relayd log.h style).  Diagnostics go to stderr; the
 * access log (one record per decision and per close) is separate, in
 * proxy/accesslog.c.
 */
#ifndef PISBX_LOG_H
#define PISBX_LOG_H

#include <stdarg.h>

#define PISBX_VERSION "0.1.0"

void	log_init(const char *progname, int verbose);
void	log_setverbose(int verbose);
int	log_getverbose(void);
/* The program name log lines are signed with ("pisbx-sh"). */
const char *log_getname(void);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_notice(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	vlog(int pri, const char *, va_list) __attribute__((format(printf, 2, 0)));
__attribute__((noreturn)) void fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2)));
__attribute__((noreturn)) void fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2)));

#endif
