/*
 * The access log: one record per decision and one per closed connection,
 * as JSON lines (or readable text), each written with one write(2) so
 * that `tail -f` shows it at once and concurrent writers never interleave
 * inside a line.  A record is written whole or not at all: one that a
 * full disk cut short is taken back, and lost records are counted and
 * reported once when writing fails, once when it works again, and in all
 * when the log is closed -- never a line per record.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "common/text.h"
#include "common/time.h"
#include "policy/policy.h"
#include "proxy/accesslog.h"

struct accesslog {
	char		*path;		/* NULL: stdout */
	int		 fd;
	enum log_format	 format;
	int		 failing;	/* errno of the failure, or 0 */
	unsigned long long lost;	/* since writing failed */
	unsigned long long lost_total;
	struct logsyslog *sys;		/* proxy.accessLogSyslog, or NULL */
};

/* A JSON line being built. */
struct alog_line {
	char		*p;		/* NULL once out of memory */
	size_t		 len;
	size_t		 size;
};

static void	 alog_ts(char *, size_t);
static void	 alog_add(struct alog_line *, const char *, size_t);
static void	 alog_add_str(struct alog_line *, const char *, const char *);
static void	 alog_add_clean(struct alog_line *, const char *,
		    const char *);
static void	 alog_add_int(struct alog_line *, const char *, long long);
static void	 alog_json_request(struct alog_line *,
		    const struct alog_rec *);
static void	 alog_text_request(FILE *, const struct alog_rec *);
static int	 alog_write_record(struct accesslog *, const char *, size_t);
static void	 alog_lost(struct accesslog *, int);
static const char *alog_name(const struct accesslog *);
static void	 alog_syslog(struct accesslog *, const struct alog_rec *,
		    const char *);

struct accesslog *
accesslog_open(const char *path, enum log_format format)
{
	struct accesslog *al;

	if ((al = calloc(1, sizeof(*al))) == NULL)
		return NULL;
	al->format = format;
	al->fd = -1;
	if (path == NULL)
		return al;
	if (strcmp(path, "-") == 0) {
		al->fd = STDOUT_FILENO;
		return al;
	}
	if ((al->path = strdup(path)) == NULL)
		goto fail;
	if (accesslog_reopen(al) == -1)
		goto fail;
	return al;
fail:
	accesslog_free(al);
	return NULL;
}

/*
 * Open the file again (after logrotate moved it).  The path may lie where
 * a sandboxed command wrote: no link in it, no FIFO (io_open_write).
 */
int
accesslog_reopen(struct accesslog *al)
{
	char why[PATH_MAX + 256];
	int fd;

	if (al->path == NULL)
		return 0;
	fd = io_open_write(al->path, O_WRONLY | O_APPEND | O_CREAT |
	    O_CLOEXEC, 0640, 0, why, sizeof(why));
	if (fd == -1) {
		log_warnx("access log: %s", why);
		return -1;
	}
	if (al->fd != -1)
		close(al->fd);
	al->fd = fd;
	return 0;
}

void
accesslog_free(struct accesslog *al)
{
	if (al == NULL)
		return;
	if (al->lost_total > 0)
		log_warnx("access log %s: %llu record(s) lost in all%s",
		    alog_name(al), al->lost_total, al->failing ?
		    " (it still cannot be written)" : "");
	if (al->path != NULL && al->fd != -1)
		close(al->fd);
	logsyslog_free(al->sys);
	free(al->path);
	free(al);
}

/* Now, in RFC 3339 UTC with milliseconds: 2026-11-30T03:12:00.123Z. */
static void
alog_ts(char *buf, size_t len)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	time_rfc3339(buf, len, tv.tv_sec, (long)(tv.tv_usec / 1000));
}

/* Append n bytes to the line, growing it; on failure the line is freed. */
static void
alog_add(struct alog_line *l, const char *s, size_t n)
{
	char *p;
	size_t size;

	if (l->p == NULL)
		return;
	if (l->len + n + 1 > l->size) {
		size = l->size * 2 > l->len + n + 1 ? l->size * 2 :
		    l->len + n + 1;
		if ((p = realloc(l->p, size)) == NULL) {
			free(l->p);
			l->p = NULL;
			return;
		}
		l->p = p;
		l->size = size;
	}
	memcpy(l->p + l->len, s, n);
	l->len += n;
	l->p[l->len] = '\0';
}

/*
 * Append ,"key":"value" (no comma before the first key) with value
 * escaped exactly as jansson's json_dumps does without JSON_ENSURE_ASCII
 * or JSON_ESCAPE_SLASH, so that records read the same as they always
 * have.  A NULL value leaves the key out, as json_string(NULL) did.
 */
static void
alog_add_str(struct alog_line *l, const char *key, const char *val)
{
	const char *p, *run;
	char esc[8];

	if (val == NULL)
		return;
	alog_add(l, l->len > 1 ? ",\"" : "\"", l->len > 1 ? 2 : 1);
	alog_add(l, key, strlen(key));
	alog_add(l, "\":\"", 3);
	for (p = run = val; *p != '\0'; p++) {
		unsigned char ch = (unsigned char)*p;

		if (ch >= 0x20 && ch != '"' && ch != '\\')
			continue;
		alog_add(l, run, (size_t)(p - run));
		switch (ch) {
		case '"':
			alog_add(l, "\\\"", 2);
			break;
		case '\\':
			alog_add(l, "\\\\", 2);
			break;
		case '\b':
			alog_add(l, "\\b", 2);
			break;
		case '\f':
			alog_add(l, "\\f", 2);
			break;
		case '\n':
			alog_add(l, "\\n", 2);
			break;
		case '\r':
			alog_add(l, "\\r", 2);
			break;
		case '\t':
			alog_add(l, "\\t", 2);
			break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04X", ch);
			alog_add(l, esc, 6);
			break;
		}
		run = p + 1;
	}
	alog_add(l, run, (size_t)(p - run));
	alog_add(l, "\"", 1);
}

/*
 * alog_add_str for text a peer may have sent, with every byte outside
 * printable ASCII masked: names are canonical already, but a SOCKS5 user
 * name or an error text is whatever the peer sent, and JSON strings must
 * be valid UTF-8.
 */
static void
alog_add_clean(struct alog_line *l, const char *key, const char *val)
{
	char clean[1024];

	text_clean(clean, sizeof(clean), val, TEXT_ASCII);
	alog_add_str(l, key, clean);
}

/* Append ,"key":v (a JSON integer, as json_int_t prints). */
static void
alog_add_int(struct alog_line *l, const char *key, long long v)
{
	char num[24], *p = num + sizeof(num);
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v :
	    (unsigned long long)v;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--p = '-';
	alog_add(l, ",\"", 2);
	alog_add(l, key, strlen(key));
	alog_add(l, "\":", 2);
	alog_add(l, p, (size_t)(num + sizeof(num) - p));
}

/*
 * A request record's own fields: method, path, status, and what decided
 * a refusal (reason, rule, its source), the credentials injected (names
 * only, never a value).
 */
static void
alog_json_request(struct alog_line *l, const struct alog_rec *r)
{
	size_t i;

	alog_add_clean(l, "method", r->method != NULL ? r->method : "");
	alog_add_clean(l, "path", r->path != NULL ? r->path : "");
	if (r->status > 0)
		alog_add_int(l, "status", r->status);
	if (r->reason != NULL)
		alog_add_clean(l, "reason", r->reason);
	if (r->rule != NULL)
		alog_add_clean(l, "rule", r->rule);
	if (r->rule != NULL && r->source != NULL)
		alog_add_clean(l, "source", r->source);
	if (r->rule != NULL && r->source != NULL && r->layer != NULL)
		alog_add_str(l, "layer", r->layer);
	if (r->ninjected > 0) {
		alog_add(l, ",\"injected\":[", 13);
		for (i = 0; i < r->ninjected; i++) {
			struct alog_line one;

			/* Each name as a lone JSON string, then its text. */
			one.size = 64;
			one.len = 0;
			if ((one.p = malloc(one.size)) == NULL) {
				free(l->p);
				l->p = NULL;
				return;
			}
			alog_add(&one, "{", 1);
			alog_add_clean(&one, "n", r->injected[i]);
			if (one.p == NULL) {
				free(l->p);
				l->p = NULL;
				return;
			}
			if (i > 0)
				alog_add(l, ",", 1);
			/* {"n":"NAME" -> "NAME" */
			alog_add(l, one.p + 5, one.len - 5);
			free(one.p);
		}
		alog_add(l, "]", 1);
	}
}

static void
alog_text_request(FILE *f, const struct alog_rec *r)
{
	char buf[1024];
	size_t i;

	text_clean(buf, sizeof(buf), r->method != NULL ? r->method : "-",
	    TEXT_ASCII);
	fprintf(f, " %s", buf);
	text_clean(buf, sizeof(buf), r->path != NULL ? r->path : "-",
	    TEXT_ASCII);
	fprintf(f, " %s %d", buf, r->status);
	if (r->reason != NULL)
		fprintf(f, " %s", r->reason);
	if (r->rule != NULL) {
		text_clean(buf, sizeof(buf), r->rule, TEXT_ASCII);
		fprintf(f, " rule=\"%s\"", buf);
		if (r->source != NULL) {
			text_clean(buf, sizeof(buf), r->source, TEXT_ASCII);
			fprintf(f, " (%s)", buf);
		}
	}
	for (i = 0; i < r->ninjected; i++) {
		text_clean(buf, sizeof(buf), r->injected[i], TEXT_ASCII);
		fprintf(f, "%s%s", i == 0 ? " injected=" : ",", buf);
	}
}

char *
accesslog_format(const struct alog_rec *r, enum log_format format)
{
	char ts[64], *line = NULL;
	struct alog_line l;
	FILE *f;
	size_t len;

	alog_ts(ts, sizeof(ts));
	if (format == LOG_FORMAT_TEXT) {
		char client[256], err[512];

		if ((f = open_memstream(&line, &len)) == NULL)
			return NULL;
		text_clean(client, sizeof(client), r->client ? r->client : "-",
		    TEXT_ASCII);
		fprintf(f, "%s conn=%llu %s %s %s", ts,
		    (unsigned long long)r->conn, r->request ? "request" :
		    r->close ? "close" : "decision", r->proto, client);
		if (r->user != NULL) {
			text_clean(err, sizeof(err), r->user, TEXT_ASCII);
			fprintf(f, " user=%s", err);
		}
		if (r->host != NULL)
			fprintf(f, " -> %s:%d", r->host, r->port);
		if (r->request)
			alog_text_request(f, r);
		if (r->decision != NULL)
			fprintf(f, " %s %s", r->decision,
			    r->reason ? r->reason : "-");
		if (r->decision != NULL && r->source != NULL) {
			text_clean(err, sizeof(err), r->source, TEXT_ASCII);
			fprintf(f, " rule=%s (%s)", err, r->layer != NULL ?
			    r->layer : "-");
		}
		if (r->addr != NULL && r->addr[0] != '\0')
			fprintf(f, " via %s", r->addr);
		if (r->parent != NULL)
			fprintf(f, " parent=%s", r->parent);
		if (r->close)
			fprintf(f, " up=%llu down=%llu ms=%llu end=%s",
			    (unsigned long long)r->bytes_up,
			    (unsigned long long)r->bytes_down,
			    (unsigned long long)r->ms, r->end ? r->end : "-");
		if (r->tls != NULL)
			fprintf(f, " tls=%s", r->tls);
		if (r->credential != NULL) {
			text_clean(err, sizeof(err), r->credential,
			    TEXT_ASCII);
			fprintf(f, " credential=%s", err);
		}
		if (r->error != NULL) {
			text_clean(err, sizeof(err), r->error, TEXT_ASCII);
			fprintf(f, " (%s)", err);
		}
		fputc('\n', f);
		if (fclose(f) != 0) {
			free(line);
			return NULL;
		}
		return line;
	}

	/*
	 * JSON written directly, not through a jansson object: building and
	 * dumping one took more instructions than the rest of a short
	 * connection's user-space work together.
	 */
	l.size = 512;
	l.len = 0;
	if ((l.p = malloc(l.size)) == NULL)
		return NULL;
	alog_add(&l, "{", 1);
	alog_add_str(&l, "ts", ts);
	alog_add_str(&l, "event", r->request ? "request" : r->close ?
	    "close" : "decision");
	alog_add_int(&l, "conn", (long long)r->conn);
	alog_add_str(&l, "proto", r->proto);
	alog_add_clean(&l, "client", r->client ? r->client : "");
	if (r->user != NULL)
		alog_add_clean(&l, "user", r->user);
	if (r->host != NULL) {
		alog_add_clean(&l, "host", r->host);
		alog_add_int(&l, "port", r->port);
	}
	if (r->request)
		alog_json_request(&l, r);
	if (r->decision != NULL) {
		alog_add_str(&l, "decision", r->decision);
		alog_add_clean(&l, "reason", r->reason ? r->reason : "");
		if (r->source != NULL)
			alog_add_clean(&l, "source", r->source);
		if (r->source != NULL && r->layer != NULL)
			alog_add_str(&l, "layer", r->layer);
	}
	if (r->addr != NULL && r->addr[0] != '\0')
		alog_add_clean(&l, "addr", r->addr);
	if (r->parent != NULL)
		alog_add_clean(&l, "parent", r->parent);
	if (r->close) {
		alog_add_int(&l, "bytes_up", (long long)r->bytes_up);
		alog_add_int(&l, "bytes_down", (long long)r->bytes_down);
		alog_add_int(&l, "ms", (long long)r->ms);
		if (r->end != NULL)
			alog_add_clean(&l, "end", r->end);
	}
	if (r->tls != NULL)
		alog_add_str(&l, "tls", r->tls);
	if (r->credential != NULL)
		alog_add_clean(&l, "credential", r->credential);
	if (r->error != NULL)
		alog_add_clean(&l, "error", r->error);
	alog_add(&l, "}\n", 2);
	return l.p;
}

/* The log's name in messages. */
static const char *
alog_name(const struct accesslog *al)
{
	return al->path != NULL ? al->path : "(standard output)";
}

/*
 * Write one record whole, or not at all: 0, or -1 with errno set and
 * nothing of it left in the file.  A short write to a regular file (the
 * disk filled up inside the record) is taken back by truncating the file
 * to where the record began: with O_APPEND that is the offset the write
 * left minus what it wrote, and only when the file still ends there --
 * another process appending to the same file after us (on a full disk
 * its writes fail too) would otherwise lose its record.  Anything else
 * (a pipe, a terminal) gets the rest of the record, as a reader of a
 * stream expects.
 */
static int
alog_write_record(struct accesslog *al, const char *line, size_t len)
{
	struct stat st;
	ssize_t w;
	off_t end;

	while ((w = write(al->fd, line, len)) == -1 && errno == EINTR)
		;
	if (w == (ssize_t)len)
		return 0;
	if (w == -1)
		return -1;
	if (fstat(al->fd, &st) == -1 || !S_ISREG(st.st_mode))
		return io_write_all(al->fd, line + w, len - (size_t)w, 0);
	if ((end = lseek(al->fd, 0, SEEK_CUR)) != -1 && st.st_size == end &&
	    end >= w && ftruncate(al->fd, end - w) == -1)
		log_debug("access log: cannot cut a partial record: %s",
		    strerror(errno));
	errno = ENOSPC;		/* what a write of the rest would say */
	return -1;
}

/*
 * A record was lost (err: why).  Said once when writing starts failing;
 * the count comes when it works again (alog_resumed) and at the close.
 */
static void
alog_lost(struct accesslog *al, int err)
{
	al->lost++;
	al->lost_total++;
	if (al->failing)
		return;
	al->failing = err;
	log_warnx("access log %s: %s; records are lost (and counted) until "
	    "it can be written again", alog_name(al), strerror(err));
}

int
accesslog_syslog(struct accesslog *al, struct event_base *base,
    const struct config *conf)
{
	if (conf->syslog_address == NULL)
		return 0;
	if ((al->sys = logsyslog_new(base, conf)) == NULL) {
		log_warnx("access log: cannot use syslog address %s",
		    conf->syslog_address);
		return -1;
	}
	return 0;
}

/* The record to syslog, as JSON whatever the file's format. */
static void
alog_syslog(struct accesslog *al, const struct alog_rec *r, const char *line)
{
	char *json = NULL;

	if (al->sys == NULL)
		return;
	if (line == NULL || al->format != LOG_FORMAT_JSON)
		line = json = accesslog_format(r, LOG_FORMAT_JSON);
	logsyslog_write(al->sys, line, r->close);
	free(json);
}

void
accesslog_write(struct accesslog *al, const struct alog_rec *r)
{
	char *line;

	if (al == NULL)
		return;
	if (al->fd == -1) {
		alog_syslog(al, r, NULL);
		return;
	}
	line = accesslog_format(r, al->format);
	alog_syslog(al, r, line);
	if (line == NULL) {
		alog_lost(al, ENOMEM);
		return;
	}
	if (alog_write_record(al, line, strlen(line)) == -1)
		alog_lost(al, errno);
	else if (al->failing) {
		log_warnx("access log %s: %llu record(s) lost while %s",
		    alog_name(al), al->lost, al->failing == ENOSPC ||
		    al->failing == EDQUOT ? "the disk was full" :
		    al->failing == ENOMEM ? "out of memory" :
		    "it could not be written");
		al->failing = 0;
		al->lost = 0;
	}
	free(line);
}

unsigned long long
accesslog_lost(const struct accesslog *al)
{
	return al != NULL ? al->lost_total + logsyslog_lost(al->sys) : 0;
}
