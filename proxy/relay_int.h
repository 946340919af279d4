/*
 * The relay's two ends and its state, shared by relay.c (the bytes) and
 * relay_check.c (the TLS peek at them).
 */

#ifndef PROXY_RELAY_INT_H
#define PROXY_RELAY_INT_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "proxy/cred.h"
#include "proxy/proxy_int.h"

/* One end of a relay: its socket, and the bytes read from it. */
struct relay_end {
	struct relay		*rl;
	struct relay_end	*dst;		/* where this end's bytes go */
	int			 fd;
	struct event		*rev;		/* fd readable */
	struct event		*wev;		/* fd writable (bytes wait) */
	struct evbuffer		*buf;		/* read here, not yet at dst */
	uint64_t		*bytes;		/* the conn's counter */
	const char		*error;		/* close reason: fd failed */
	const char		*reset;		/* close reason: fd was reset */
	int			 eof;		/* fd sent EOF */
	int			 shut;		/* our writes to fd are shut */
	int			 paused;	/* reads off: dst is behind */
	int			 spliced;	/* fd -> pipe -> dst->fd */
	int			 splice_failed;
	int			 pipe[2];
	size_t			 pipelen;	/* bytes in the pipe */
	size_t			 pipesz;	/* the pipe's capacity */
};

struct relay {
	struct conn		*conn;
	struct relay_end	 client;
	struct relay_end	 upstream;
	struct evbuffer		*held;		/* client bytes not checked */
	int			 checking;	/* client records checked */
	int			 peek_wait;	/* a partial one buffered */
	size_t			 cpass;		/* of a record that passes */
	int			 nhello;	/* ClientHellos checked */
	int			 first_sni;	/* the first one had an SNI */
	int			 scanning;	/* server records followed */
	int			 settled;	/* its ServerHello came */
	struct tls_scan		 scan;
	/*
	 * The leak scan of the client's bytes (the run has masked
	 * credentials): everything while they are checked, everything
	 * after when the tunnel does not carry TLS (cred_all).
	 */
	struct cred_scan	 cscan;
	int			 cred_all;
	int			 owned;		/* the sockets are ours */
	struct relay_end	*fault;		/* the end that reset/failed */
	const char		*fault_end;	/* its close reason */
	struct event		*abort_ev;	/* polls the survivor's queue */
	struct timeval		 abort_start;
};

/* relay.c */
int	 relay_push(struct relay_end *);

/* relay_check.c */
int	 relay_check(struct relay *);
int	 relay_check_done(struct relay *);
int	 relay_cred_scan(struct relay *, const char *, size_t);
int	 relay_scan(struct relay *, const char *, size_t);
void	 relay_peek_refuse(struct conn *, const char *);

#endif
