/*
 * The access log: one record per decision and one per closed connection,
 * as JSON lines (or readable text), each written with one write(2) so
 * that `tail -f` shows it at once and concurrent writers never interleave
 * inside a line.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "log.h"
#include "proxy_int.h"

struct accesslog {
	char		*path;		/* NULL: stdout */
	int		 fd;
	enum log_format	 format;
};

static void	 alog_ts(char *, size_t);
static void	 alog_clean(char *, size_t, const char *);
static int	 alog_set(json_t *, const char *, const char *);

struct accesslog *
accesslog_open(const char *path, enum log_format format)
{
	struct accesslog *al;

	if ((al = calloc(1, sizeof(*al))) == NULL)
		return NULL;
	al->format = format;
	al->fd = -1;
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

/* Open the file again (after logrotate moved it). */
int
accesslog_reopen(struct accesslog *al)
{
	int fd;

	if (al->path == NULL)
		return 0;
	fd = open(al->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd == -1) {
		log_warn("access log %s", al->path);
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
	if (al->path != NULL && al->fd != -1)
		close(al->fd);
	free(al->path);
	free(al);
}

/* RFC 3339 UTC with milliseconds: 2026-11-30T03:12:00.123Z */
static void
alog_ts(char *buf, size_t len)
{
	struct timeval tv;
	struct tm tm;
	char day[32];

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", day, (long)(tv.tv_usec / 1000));
}

/*
 * Copy text for the log with every byte outside printable ASCII replaced
 * by '?': names are canonical already, but a SOCKS5 user name or an error
 * text is whatever the peer sent, and JSON strings must be valid UTF-8.
 */
static void
alog_clean(char *out, size_t outlen, const char *in)
{
	size_t i;

	for (i = 0; in[i] != '\0' && i + 1 < outlen; i++)
		out[i] = (in[i] >= 0x20 && in[i] < 0x7f) ? in[i] : '?';
	out[i] = '\0';
}

static int
alog_set(json_t *o, const char *key, const char *val)
{
	char clean[1024];

	alog_clean(clean, sizeof(clean), val);
	return json_object_set_new(o, key, json_string(clean));
}

char *
accesslog_format(const struct alog_rec *r, enum log_format format)
{
	char ts[64], *line = NULL, *js;
	json_t *o;
	FILE *f;
	size_t len;

	alog_ts(ts, sizeof(ts));
	if (format == LOG_FORMAT_TEXT) {
		char client[256], err[512];

		if ((f = open_memstream(&line, &len)) == NULL)
			return NULL;
		alog_clean(client, sizeof(client), r->client ? r->client : "-");
		fprintf(f, "%s conn=%llu %s %s %s", ts,
		    (unsigned long long)r->conn, r->close ? "close" : "decision",
		    r->proto, client);
		if (r->host != NULL)
			fprintf(f, " -> %s:%d", r->host, r->port);
		if (r->decision != NULL)
			fprintf(f, " %s %s", r->decision,
			    r->reason ? r->reason : "-");
		if (r->addr != NULL && r->addr[0] != '\0')
			fprintf(f, " via %s", r->addr);
		if (r->close)
			fprintf(f, " up=%llu down=%llu ms=%llu end=%s",
			    (unsigned long long)r->bytes_up,
			    (unsigned long long)r->bytes_down,
			    (unsigned long long)r->ms, r->end ? r->end : "-");
		if (r->error != NULL) {
			alog_clean(err, sizeof(err), r->error);
			fprintf(f, " (%s)", err);
		}
		fputc('\n', f);
		if (fclose(f) != 0) {
			free(line);
			return NULL;
		}
		return line;
	}

	if ((o = json_object()) == NULL)
		return NULL;
	json_object_set_new(o, "ts", json_string(ts));
	json_object_set_new(o, "event", json_string(r->close ? "close" :
	    "decision"));
	json_object_set_new(o, "conn", json_integer((json_int_t)r->conn));
	json_object_set_new(o, "proto", json_string(r->proto));
	alog_set(o, "client", r->client ? r->client : "");
	if (r->host != NULL) {
		alog_set(o, "host", r->host);
		json_object_set_new(o, "port", json_integer(r->port));
	}
	if (r->decision != NULL) {
		json_object_set_new(o, "decision", json_string(r->decision));
		alog_set(o, "reason", r->reason ? r->reason : "");
	}
	if (r->addr != NULL && r->addr[0] != '\0')
		alog_set(o, "addr", r->addr);
	if (r->close) {
		json_object_set_new(o, "bytes_up",
		    json_integer((json_int_t)r->bytes_up));
		json_object_set_new(o, "bytes_down",
		    json_integer((json_int_t)r->bytes_down));
		json_object_set_new(o, "ms", json_integer((json_int_t)r->ms));
		if (r->end != NULL)
			alog_set(o, "end", r->end);
	}
	if (r->error != NULL)
		alog_set(o, "error", r->error);
	js = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (js == NULL)
		return NULL;
	len = strlen(js);
	if ((line = malloc(len + 2)) != NULL) {
		memcpy(line, js, len);
		line[len] = '\n';
		line[len + 1] = '\0';
	}
	free(js);
	return line;
}

void
accesslog_write(struct accesslog *al, const struct alog_rec *r)
{
	char *line;
	size_t len, off = 0;
	ssize_t n;

	if (al == NULL || al->fd == -1)
		return;
	if ((line = accesslog_format(r, al->format)) == NULL) {
		log_warnx("access log: cannot format a record");
		return;
	}
	len = strlen(line);
	while (off < len) {
		n = write(al->fd, line + off, len - off);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			log_warn("access log write");
			break;
		}
		off += (size_t)n;
	}
	free(line);
}
