/*
 * The access log's syslog sink (proxy.accessLogSyslog): each record as an
 * RFC 5424 message, over TCP with RFC 6587 octet counting or to a Unix
 * socket (datagram, as /dev/log, or stream), written from the event loop
 * and never blocking it.
 *
 * Records wait in a queue of at most queueMax while the collector is slow
 * or away; a record is taken off the queue only once the kernel has all
 * of it.  Past the bound, records are lost and counted, said once when
 * loss starts and once with the count when delivery works again, like
 * the file's full disk (accesslog.c).  Reconnects back off from 100 ms to
 * 5 s.  What a collector that dies takes with it from its socket buffer
 * cannot be known over plain TCP (RFC 6587 has no acknowledgements): the
 * peer's close is watched so that nothing more is written to a dead
 * connection.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "common/sockaddr.h"
#include "common/time.h"
#include "policy/policy.h"
#include "proxy/accesslog.h"

#define LOGSYSLOG_BACKOFF_MIN_MS	100
#define LOGSYSLOG_BACKOFF_MAX_MS	5000
#define LOGSYSLOG_SEVERITY_INFO		6

struct logsyslog_msg {
	TAILQ_ENTRY(logsyslog_msg) entry;
	size_t		 len;
	char		 data[];
};

struct logsyslog {
	struct event_base *base;
	char		*name;		/* "tcp:ip:port", "unix:/path" */
	struct sockaddr_storage ss;
	socklen_t	 sslen;
	int		 tcp;
	int		 type;		/* SOCK_STREAM, SOCK_DGRAM */
	int		 fd;
	int		 connecting;
	int		 up;		/* connected (or dgram ready) */
	struct event	*rev;		/* stream: the peer's close */
	struct event	*wev;		/* writable / connected */
	struct event	*retry;
	int		 backoff_ms;
	char		 app[49];
	char		 host[256];
	int		 facility;
	TAILQ_HEAD(, logsyslog_msg) queue;
	size_t		 nqueue;
	size_t		 queue_max;
	size_t		 sent_off;	/* of the first message (stream) */
	int		 outage;	/* said unreachable, not back yet */
	int		 failing;	/* losing records now */
	unsigned long long lost;	/* since loss started */
	unsigned long long lost_total;
	unsigned long long sent;
};

static void	 logsyslog_connect(struct logsyslog *);
static void	 logsyslog_down(struct logsyslog *, const char *, int);
static void	 logsyslog_flush(struct logsyslog *);
static void	 logsyslog_retry_cb(evutil_socket_t, short, void *);
static void	 logsyslog_write_cb(evutil_socket_t, short, void *);
static void	 logsyslog_read_cb(evutil_socket_t, short, void *);

struct logsyslog *
logsyslog_new(struct event_base *base, const struct config *conf)
{
	struct logsyslog *ls;
	struct sockaddr_un *sun;

	if ((ls = calloc(1, sizeof(*ls))) == NULL)
		return NULL;
	ls->base = base;
	ls->fd = -1;
	ls->tcp = conf->syslog_tcp;
	ls->facility = conf->syslog_facility;
	ls->queue_max = (size_t)conf->syslog_queue_max;
	ls->backoff_ms = LOGSYSLOG_BACKOFF_MIN_MS;
	TAILQ_INIT(&ls->queue);
	snprintf(ls->app, sizeof(ls->app), "%s", conf->syslog_app != NULL ?
	    conf->syslog_app : "pisbx-proxy");
	if (gethostname(ls->host, sizeof(ls->host)) == -1 ||
	    ls->host[0] == '\0')
		snprintf(ls->host, sizeof(ls->host), "-");
	ls->host[sizeof(ls->host) - 1] = '\0';
	if (asprintf(&ls->name, "%s:%s", ls->tcp ? "tcp" : "unix",
	    conf->syslog_address) == -1) {
		ls->name = NULL;
		goto fail;
	}
	if (ls->tcp) {
		if (sockaddr_parse(conf->syslog_address, &ls->ss,
		    &ls->sslen) == -1)
			goto fail;
		ls->type = SOCK_STREAM;
	} else {
		sun = (struct sockaddr_un *)&ls->ss;
		sun->sun_family = AF_UNIX;
		if (strlen(conf->syslog_address) >= sizeof(sun->sun_path))
			goto fail;
		strcpy(sun->sun_path, conf->syslog_address);
		ls->sslen = sizeof(*sun);
		ls->type = SOCK_DGRAM;
	}
	if ((ls->retry = evtimer_new(base, logsyslog_retry_cb, ls)) == NULL)
		goto fail;
	logsyslog_connect(ls);
	return ls;
fail:
	logsyslog_free(ls);
	return NULL;
}

void
logsyslog_free(struct logsyslog *ls)
{
	struct logsyslog_msg *m;
	unsigned long long left = 0;

	if (ls == NULL)
		return;
	while ((m = TAILQ_FIRST(&ls->queue)) != NULL) {
		TAILQ_REMOVE(&ls->queue, m, entry);
		free(m);
		left++;
	}
	ls->lost_total += left;
	if (ls->lost_total > 0)
		log_warnx("access log %s: %llu record(s) lost in all%s",
		    ls->name, ls->lost_total, left > 0 ?
		    " (some still queued at exit)" : "");
	if (ls->rev != NULL)
		event_free(ls->rev);
	if (ls->wev != NULL)
		event_free(ls->wev);
	if (ls->retry != NULL)
		event_free(ls->retry);
	if (ls->fd != -1)
		close(ls->fd);
	free(ls->name);
	free(ls);
}

unsigned long long
logsyslog_lost(const struct logsyslog *ls)
{
	return ls != NULL ? ls->lost_total : 0;
}

/* Open the socket and start connecting; on failure, retry later. */
static void
logsyslog_connect(struct logsyslog *ls)
{
	int fd;

	fd = socket(ls->ss.ss_family, ls->type | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd == -1) {
		logsyslog_down(ls, "socket", errno);
		return;
	}
	if (connect(fd, (struct sockaddr *)&ls->ss, ls->sslen) == -1 &&
	    errno != EINPROGRESS) {
		/* /dev/log as a stream socket (some syslog daemons). */
		if (errno == EPROTOTYPE && !ls->tcp && ls->type == SOCK_DGRAM) {
			close(fd);
			ls->type = SOCK_STREAM;
			logsyslog_connect(ls);
			return;
		}
		close(fd);
		logsyslog_down(ls, "connect", errno);
		return;
	}
	ls->fd = fd;
	ls->connecting = 1;
	ls->wev = event_new(ls->base, fd, EV_WRITE, logsyslog_write_cb, ls);
	if (ls->type == SOCK_STREAM)
		ls->rev = event_new(ls->base, fd, EV_READ | EV_PERSIST,
		    logsyslog_read_cb, ls);
	if (ls->wev == NULL || (ls->type == SOCK_STREAM && ls->rev == NULL) ||
	    event_add(ls->wev, NULL) == -1) {
		logsyslog_down(ls, "event", ENOMEM);
		return;
	}
}

/*
 * The collector cannot be reached (what: the step that failed): close,
 * keep the queue, retry after the backoff.  Said once per outage.
 */
static void
logsyslog_down(struct logsyslog *ls, const char *what, int err)
{
	struct timeval tv;

	if (!ls->outage) {
		ls->outage = 1;
		log_warnx("access log %s: %s: %s; records are queued (at "
		    "most %zu) until the collector is back", ls->name, what,
		    strerror(err), ls->queue_max);
	}
	ls->up = 0;
	ls->connecting = 0;
	ls->sent_off = 0;	/* a partial message is sent again whole */
	if (ls->rev != NULL) {
		event_free(ls->rev);
		ls->rev = NULL;
	}
	if (ls->wev != NULL) {
		event_free(ls->wev);
		ls->wev = NULL;
	}
	if (ls->fd != -1) {
		close(ls->fd);
		ls->fd = -1;
	}
	tv.tv_sec = ls->backoff_ms / 1000;
	tv.tv_usec = (ls->backoff_ms % 1000) * 1000;
	evtimer_add(ls->retry, &tv);
	ls->backoff_ms = ls->backoff_ms * 2 > LOGSYSLOG_BACKOFF_MAX_MS ?
	    LOGSYSLOG_BACKOFF_MAX_MS : ls->backoff_ms * 2;
}

static void
logsyslog_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	logsyslog_connect(arg);
}

/* The peer closed (or sent something, which a collector never does). */
static void
logsyslog_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct logsyslog *ls = arg;
	char buf[512];
	ssize_t n;

	(void)what;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n > 0 || (n == -1 && (errno == EAGAIN || errno == EINTR)))
		return;
	logsyslog_down(ls, n == 0 ? "closed by the collector" : "read",
	    n == 0 ? ECONNRESET : errno);
}

static void
logsyslog_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct logsyslog *ls = arg;
	socklen_t len = sizeof(int);
	int err = 0;

	(void)what;
	if (ls->connecting) {
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
			err = errno;
		if (err != 0) {
			logsyslog_down(ls, "connect", err);
			return;
		}
		ls->connecting = 0;
		ls->up = 1;
		if (ls->rev != NULL && event_add(ls->rev, NULL) == -1) {
			logsyslog_down(ls, "event", ENOMEM);
			return;
		}
	}
	logsyslog_flush(ls);
}

/*
 * Write what the queue holds until the kernel takes no more; a message
 * leaves the queue once all of it is written.
 */
static void
logsyslog_flush(struct logsyslog *ls)
{
	struct logsyslog_msg *m;
	ssize_t n;

	if (!ls->up)
		return;
	while ((m = TAILQ_FIRST(&ls->queue)) != NULL) {
		n = send(ls->fd, m->data + ls->sent_off, m->len - ls->sent_off,
		    MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == ENOBUFS)) {
			event_add(ls->wev, NULL);
			return;
		}
		if (n == -1) {
			logsyslog_down(ls, "send", errno);
			return;
		}
		ls->sent_off += (size_t)n;
		if (ls->sent_off < m->len)
			continue;
		ls->sent_off = 0;
		TAILQ_REMOVE(&ls->queue, m, entry);
		ls->nqueue--;
		free(m);
		ls->sent++;
		ls->backoff_ms = LOGSYSLOG_BACKOFF_MIN_MS;
		if (ls->failing) {
			log_warnx("access log %s: %llu record(s) lost while "
			    "the collector was unreachable", ls->name,
			    ls->lost);
			ls->failing = 0;
			ls->lost = 0;
		} else if (ls->outage)
			log_warnx("access log %s: the collector is back; "
			    "no record lost", ls->name);
		ls->outage = 0;
	}
}

/*
 * Queue one record (json: a JSON line, its "\n" left out) as an RFC 5424
 * message: <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID - MSG, the
 * MSGID the record's event; framed "LEN SP" for a stream (RFC 6587 3.4.1).
 */
void
logsyslog_write(struct logsyslog *ls, const char *json, int close_rec)
{
	struct logsyslog_msg *m;
	struct timeval tv;
	char head[512], ts[64], frame[24];
	size_t jlen, hlen, flen = 0;
	int h;

	if (ls == NULL)
		return;
	if (ls->nqueue >= ls->queue_max || json == NULL) {
		ls->lost++;
		ls->lost_total++;
		if (!ls->failing) {
			ls->failing = 1;
			log_warnx("access log %s: %s; records are lost (and "
			    "counted) until it takes them again", ls->name,
			    json == NULL ? "a record could not be made" :
			    "the queue is full");
		}
		return;
	}
	jlen = strlen(json);
	while (jlen > 0 && json[jlen - 1] == '\n')
		jlen--;
	gettimeofday(&tv, NULL);
	time_rfc3339(ts, sizeof(ts), tv.tv_sec, (long)(tv.tv_usec / 1000));
	h = snprintf(head, sizeof(head), "<%d>1 %s %s %s %ld %s - ",
	    ls->facility * 8 + LOGSYSLOG_SEVERITY_INFO, ts, ls->host, ls->app,
	    (long)getpid(), close_rec ? "close" : "decision");
	if (h < 0 || (size_t)h >= sizeof(head)) {
		logsyslog_write(ls, NULL, close_rec);	/* counted lost */
		return;
	}
	hlen = (size_t)h;
	if (ls->type == SOCK_STREAM)
		flen = (size_t)snprintf(frame, sizeof(frame), "%zu ",
		    hlen + jlen);
	if ((m = malloc(sizeof(*m) + flen + hlen + jlen)) == NULL) {
		logsyslog_write(ls, NULL, close_rec);
		return;
	}
	memcpy(m->data, frame, flen);
	memcpy(m->data + flen, head, hlen);
	memcpy(m->data + flen + hlen, json, jlen);
	m->len = flen + hlen + jlen;
	TAILQ_INSERT_TAIL(&ls->queue, m, entry);
	ls->nqueue++;
	logsyslog_flush(ls);
}
