/*
 * The access log (accesslog.c): one record per decision and one per
 * closed connection, JSON lines or text (docs/access-log.md).
 */
#ifndef PISBX_ACCESSLOG_H
#define PISBX_ACCESSLOG_H

#include <stdint.h>

#include "proxy/proxy.h"

struct accesslog;

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
	const char	*addr;
	const char	*parent;	/* the upstream proxy used, or NULL */
	const char	*error;
	const char	*end;		/* close: why the connection ended */
	uint64_t	 bytes_up;
	uint64_t	 bytes_down;
	uint64_t	 ms;
};

struct accesslog *accesslog_open(const char *path, enum log_format);
int		 accesslog_reopen(struct accesslog *);
void		 accesslog_free(struct accesslog *);
void		 accesslog_write(struct accesslog *, const struct alog_rec *);
/* Records lost since the log was opened (0 for NULL). */
unsigned long long accesslog_lost(const struct accesslog *);
/* Format one record into a malloc'ed line ending in "\n". */
char		*accesslog_format(const struct alog_rec *, enum log_format);

#endif
