/*
 * What the run refused, said once at exit: the proxy's refusals (each
 * destination with its reason and the config change that would allow
 * it) and the creation guard's (each path and who reads it).  Repeats
 * are counted, not listed; stderr shows the first SUMMARY_SHOWN, the
 * --report file all of them, as JSON, for an agent to hand its model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "launcher/launcher.h"

#define SUMMARY_SHOWN	10	/* lines on stderr */
#define SUMMARY_KEPT	1000	/* distinct refusals remembered */

struct summary_item {
	enum summary_kind kind;
	char		*what;		/* "host:port" or the path */
	char		*reason;	/* access-log reason, or the verb */
	char		*detail;	/* or NULL */
	char		*hint;		/* what would allow it, or NULL */
	char		*proto;		/* network: connect, http, socks5 */
	char		*host;
	unsigned int	 port;
	size_t		 count;
};

struct summary {
	struct summary_item	*v;
	size_t			 n;
	size_t			 dropped;	/* distinct ones past KEPT */
	int			 more;		/* the guard stopped telling */
};

static struct summary_item *summary_find(struct summary *,
		    enum summary_kind, const char *, const char *);
static struct summary_item *summary_add(struct summary *, enum summary_kind,
		    const char *, const char *);
static char	*summary_dup(const char *);

struct summary *
summary_new(void)
{
	return calloc(1, sizeof(struct summary));
}

void
summary_free(struct summary *s)
{
	size_t	 i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++) {
		free(s->v[i].what);
		free(s->v[i].reason);
		free(s->v[i].detail);
		free(s->v[i].hint);
		free(s->v[i].proto);
		free(s->v[i].host);
	}
	free(s->v);
	free(s);
}

/* strdup that keeps NULL; on failure NULL too (the text is optional). */
static char *
summary_dup(const char *t)
{
	return t != NULL ? strdup(t) : NULL;
}

/* The same thing refused for the same reason. */
static struct summary_item *
summary_find(struct summary *s, enum summary_kind kind, const char *what,
    const char *reason)
{
	size_t	 i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].kind == kind && strcmp(s->v[i].what, what) == 0 &&
		    strcmp(s->v[i].reason, reason) == 0)
			return &s->v[i];
	return NULL;
}

/* A new item, or the one it repeats (counted); NULL past the bound. */
static struct summary_item *
summary_add(struct summary *s, enum summary_kind kind, const char *what,
    const char *reason)
{
	struct summary_item	*it, *nv;

	if ((it = summary_find(s, kind, what, reason)) != NULL) {
		it->count++;
		return NULL;
	}
	if (s->n == SUMMARY_KEPT) {
		s->dropped++;
		return NULL;
	}
	if ((nv = reallocarray(s->v, s->n + 1, sizeof(*nv))) == NULL) {
		s->dropped++;
		return NULL;
	}
	s->v = nv;
	it = &s->v[s->n];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->count = 1;
	if ((it->what = strdup(what)) == NULL ||
	    (it->reason = strdup(reason)) == NULL) {
		free(it->what);
		s->dropped++;
		return NULL;
	}
	s->n++;
	return it;
}

void
summary_net(struct summary *s, const char *host, unsigned int port,
    const char *proto, const char *reason, const char *detail,
    const char *hint)
{
	struct summary_item	*it;
	char			 what[300];

	/* Brackets for IPv6 come with the canonical host text. */
	snprintf(what, sizeof(what), "%s:%u", host, port);
	if ((it = summary_add(s, SUMMARY_NET, what, reason)) == NULL)
		return;
	it->detail = summary_dup(detail);
	it->hint = summary_dup(hint);
	it->proto = summary_dup(proto);
	it->host = summary_dup(host);
	it->port = port;
}

void
summary_file(struct summary *s, const char *verb, const char *path,
    const char *why)
{
	struct summary_item	*it;

	if ((it = summary_add(s, SUMMARY_FILE, path, verb)) == NULL)
		return;
	it->detail = summary_dup(why);
}

void
summary_more(struct summary *s)
{
	s->more = 1;
}

size_t
summary_count(const struct summary *s)
{
	return s->n + s->dropped;
}

void
summary_print(const struct summary *s, FILE *f, const char *report)
{
	const struct summary_item	*it;
	size_t				 i, shown;

	if (s->n == 0 && s->dropped == 0 && !s->more)
		return;
	fprintf(f, "pisbx-run: refused during this run (--quiet hides "
	    "this):\n");
	for (i = 0, shown = 0; i < s->n && shown < SUMMARY_SHOWN; i++) {
		it = &s->v[i];
		shown++;
		if (it->kind == SUMMARY_NET) {
			fprintf(f, "  %s %s (%s", it->proto != NULL ?
			    it->proto : "connect", it->what, it->reason);
			if (it->count > 1)
				fprintf(f, ", %zu times", it->count);
			fprintf(f, ")%s%s\n", it->hint != NULL ? ": " : "",
			    it->hint != NULL ? it->hint : "");
		} else {
			fprintf(f, "  %s %s", it->reason, it->what);
			if (it->count > 1)
				fprintf(f, " (%zu times)", it->count);
			fprintf(f, "%s%s\n", it->detail != NULL ? ": " : "",
			    it->detail != NULL ? it->detail : "");
		}
	}
	if (s->n > shown || s->dropped > 0 || s->more)
		fprintf(f, "  ... and more%s%s\n", report != NULL ?
		    "; all of them in " : " (--report FILE lists them all)",
		    report != NULL ? report : "");
}

int
summary_json(const struct summary *s, FILE *f)
{
	const struct summary_item	*it;
	json_t				*o;
	char				*line;
	size_t				 i;
	int				 rc = 0;

	fprintf(f, "[");
	for (i = 0; i < s->n; i++) {
		it = &s->v[i];
		if (it->kind == SUMMARY_NET)
			o = json_pack("{s:s, s:s, s:i, s:s, s:s, s:i}",
			    "kind", "network", "host", it->host != NULL ?
			    it->host : "", "port", (int)it->port, "proto",
			    it->proto != NULL ? it->proto : "", "reason",
			    it->reason, "count", (int)it->count);
		else
			o = json_pack("{s:s, s:s, s:s, s:i}", "kind", "file",
			    "op", it->reason, "path", it->what, "count",
			    (int)it->count);
		if (o == NULL) {
			rc = -1;
			continue;
		}
		if ((it->detail != NULL && json_object_set_new(o,
		    it->kind == SUMMARY_NET ? "detail" : "why",
		    json_string(it->detail)) == -1) ||
		    (it->hint != NULL && json_object_set_new(o, "hint",
		    json_string(it->hint)) == -1) ||
		    (line = json_dumps(o, JSON_COMPACT |
		    JSON_PRESERVE_ORDER)) == NULL) {
			json_decref(o);
			rc = -1;
			continue;
		}
		fprintf(f, "%s\n%s", i > 0 ? "," : "", line);
		free(line);
		json_decref(o);
	}
	if (s->dropped > 0 || s->more)
		fprintf(f, "%s\n{\"kind\":\"more\",\"count\":%zu}",
		    s->n > 0 ? "," : "", s->dropped);
	fprintf(f, "\n]\n");
	return rc == 0 && !ferror(f) ? 0 : -1;
}
