/*
 * The access log (accesslog.c): one record per decision and one per
 * closed connection, JSON lines or text (docs/access-log.md).
 */
#ifndef PISBX_ACCESSLOG_H
#define PISBX_ACCESSLOG_H

#include <stdint.h>

#include "proxy/proxy.h"

struct accesslog;
struct config;
struct event_base;
struct logsyslog;

struct alog_rec {
	int		 close;		/* 0: decision record, 1: close record */
	uint64_t	 conn;
	const char	*proto;
	const char	*client;
	const char	*user;		/* SOCKS5 user name, or NULL */
	const char	*host;		/* NULL: not known yet */
	int		 port;
	const char	*decision;	/* NULL: none was made */
	const char	*reason;
	const char	*source;	/* the deciding list entry's, or NULL */
	const char	*layer;		/* its layer, or NULL */
	const char	*addr;
	const char	*parent;	/* the upstream proxy used, or NULL */
	const char	*error;
	const char	*credential;	/* credential-leak: its name */
	const char	*end;		/* close: why the connection ended */
	uint64_t	 bytes_up;
	uint64_t	 bytes_down;
	uint64_t	 ms;
	const char	*tls;		/* "terminated", or NULL */
	/* A request record (term.c): one request of a terminated tunnel. */
	int		 request;
	const char	*method;
	const char	*path;		/* query values left out */
	int		 status;	/* 0: none was answered */
	const char	*rule;		/* the deciding request rule's text */
	const char	*const *injected;	/* credential names swapped in */
	size_t		 ninjected;
};

/* path NULL: no file (the records may still go to syslog). */
struct accesslog *accesslog_open(const char *path, enum log_format);
/*
 * Send the records to conf's proxy.accessLogSyslog too: 0, or -1 (out
 * of memory, an address that cannot be used).
 */
int		 accesslog_syslog(struct accesslog *, struct event_base *,
		    const struct config *);
int		 accesslog_reopen(struct accesslog *);
void		 accesslog_free(struct accesslog *);
void		 accesslog_write(struct accesslog *, const struct alog_rec *);
/* Records lost since the log was opened, file and syslog (0 for NULL). */
unsigned long long accesslog_lost(const struct accesslog *);

/* logsyslog.c: the syslog sink (RFC 5424; TCP per RFC 6587, Unix). */
struct logsyslog *logsyslog_new(struct event_base *, const struct config *);
void		 logsyslog_free(struct logsyslog *);
/* Queue a JSON record (close_rec: a close record) and send what it can. */
void		 logsyslog_write(struct logsyslog *, const char *json,
		    int close_rec);
unsigned long long logsyslog_lost(const struct logsyslog *);
/* Format one record into a malloc'ed line ending in "\n". */
char		*accesslog_format(const struct alog_rec *, enum log_format);

#endif
