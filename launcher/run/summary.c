/*
 * What the run refused, said once at exit: the proxy's refusals (each
 * destination with its reason and the config change that would allow
 * it) and the creation guard's (each path and who reads it), then the
 * allowed destinations that could not be reached (DNS, connect, the
 * upstream proxy), which an HTTPS client shows only as "502".  A
 * budget (network.budget) says what was used of it, a credential-leak
 * refusal which credential the command sent where it may not go (its
 * name: never a value).  Repeats
 * are counted, not listed; stderr shows the first SUMMARY_SHOWN of each
 * part, the --report file all of them, as JSON, for an agent to hand its
 * model.  Paths and details are the command's or a peer's words: every
 * line is masked for the terminal.
 *
 * Apart from the refusals, and never counted with them: the masked
 * credentials put into requests on the way (proxy_opts.injected), by
 * name and host:port with the number of requests, for -v and the
 * --report file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/log.h"
#include "common/text.h"
#include "approval/supclient.h"
#include "proxy/proxy.h"
#include "launcher/run/run.h"

#define SUMMARY_SHOWN	10	/* refusals on stderr */
#define SUMMARY_UNREACH_SHOWN 5	/* failures on stderr */
#define SUMMARY_KEPT	1000	/* distinct items remembered */
#define SUMMARY_LINE	8192	/* longest line printed */

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

/* A masked credential put into requests to one host:port. */
struct summary_inject {
	char		*name;		/* "$GH_TOKEN": never a value */
	char		*host;
	unsigned int	 port;
	size_t		 requests;
};

struct summary {
	struct summary_item	*v;
	size_t			 n;
	struct summary_inject	*inj;
	size_t			 ninj;
	size_t			 injdropped;	/* past KEPT */
	size_t			 dropped[SUMMARY_KINDS]; /* past KEPT */
	int			 more;		/* the guard stopped telling */
	size_t			 lost;		/* supervisor restarted */
	size_t			 relost;	/* ... re-register failed */
};

static struct summary_item *summary_find(struct summary *,
		    enum summary_kind, const char *, const char *);
static struct summary_item *summary_add(struct summary *, enum summary_kind,
		    const char *, const char *);
static char	*summary_dup(const char *);
static void	 summary_line(FILE *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static void	 summary_print_part(const struct summary *, FILE *,
		    const char *, int, size_t, int);
static size_t	 summary_dropped(const struct summary *);
static int	 summary_has(const struct summary *, int);

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
	for (i = 0; i < s->ninj; i++) {
		free(s->inj[i].name);
		free(s->inj[i].host);
	}
	free(s->inj);
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
		s->dropped[kind]++;
		return NULL;
	}
	if ((nv = reallocarray(s->v, s->n + 1, sizeof(*nv))) == NULL) {
		s->dropped[kind]++;
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
		s->dropped[kind]++;
		return NULL;
	}
	s->n++;
	return it;
}

/*
 * A review that failed because the supervisor had been restarted (it no
 * longer knew this run) is no policy decision: it is counted apart and
 * carries no hint to change the config.
 */
void
summary_proxy_cb(const struct proxy_refusal *r, void *arg)
{
	struct summary	*s = arg;
	const char	*hint = r->hint;

	if (strcmp(r->reason, "review:error") == 0 && r->detail != NULL &&
	    strncmp(r->detail, SUPERVISOR_LOST_DETAIL,
	    strlen(SUPERVISOR_LOST_DETAIL)) == 0) {
		s->lost++;
		if (strstr(r->detail, "registering again failed") != NULL)
			s->relost++;
		hint = NULL;
	}
	summary_net(s, r->unreachable ? SUMMARY_UNREACH : SUMMARY_NET,
	    r->host, r->port, r->proto, r->reason, r->detail, hint);
}

void
summary_injected_cb(const char *name, const char *host, unsigned port,
    void *arg)
{
	struct summary		*s = arg;
	struct summary_inject	*it, *nv;
	size_t			 i;

	for (i = 0; i < s->ninj; i++) {
		it = &s->inj[i];
		if (it->port == port && strcmp(it->name, name) == 0 &&
		    strcmp(it->host, host) == 0) {
			it->requests++;
			return;
		}
	}
	if (s->ninj == SUMMARY_KEPT || (nv = reallocarray(s->inj,
	    s->ninj + 1, sizeof(*nv))) == NULL) {
		s->injdropped++;
		return;
	}
	s->inj = nv;
	it = &s->inj[s->ninj];
	if ((it->name = strdup(name)) == NULL ||
	    (it->host = strdup(host)) == NULL) {
		free(it->name);
		s->injdropped++;
		return;
	}
	it->port = port;
	it->requests = 1;
	s->ninj++;
}

void
summary_print_injected(const struct summary *s, FILE *f)
{
	const struct summary_inject	*it;
	size_t				 i;

	for (i = 0; i < s->ninj; i++) {
		it = &s->inj[i];
		summary_line(f, "%s: put in on the way: %s \u2192 %s:%u "
		    "(%zu request%s)", log_getname(), it->name, it->host,
		    it->port, it->requests, it->requests == 1 ? "" : "s");
	}
	if (s->injdropped > 0)
		summary_line(f, "%s: put in on the way: %zu more", log_getname(),
		    s->injdropped);
}

void
summary_net(struct summary *s, enum summary_kind kind, const char *host,
    unsigned int port, const char *proto, const char *reason,
    const char *detail, const char *hint)
{
	struct summary_item	*it;
	char			 what[300];

	/* Brackets for IPv6 come with the canonical host text. */
	snprintf(what, sizeof(what), "%s:%u", host, port);
	if ((it = summary_add(s, kind, what, reason)) == NULL)
		return;
	it->detail = summary_dup(detail);
	it->hint = summary_dup(hint);
	it->proto = summary_dup(proto);
	it->host = summary_dup(host);
	it->port = port;
}

void
summary_loopback(struct summary *s, const char *addr, unsigned int port,
    const struct config *conf)
{
	const struct pattern	*m = NULL;
	struct host		 h;
	const char		*errstr;
	char			 detail[512], hint[2048], file[1024];
	char			 reason[600];
	enum verdict		 v = VERDICT_DENY;

	snprintf(detail, sizeof(detail), "nothing listens on port %u inside "
	    "the sandbox, whose loopback is its own; a server on this "
	    "machine is %s:%u inside", port, HOST_LOOPBACK_NAME, port);
	hint[0] = '\0';
	if (conf != NULL && host_canon(HOST_LOOPBACK_NAME,
	    strlen(HOST_LOOPBACK_NAME), &h, &errstr) == 0) {
		v = policy_eval(conf->policy, &h, (uint16_t)port, &m);
		if (v == VERDICT_ALLOW && conf->policy_from == NULL) {
			policy_hint_file(conf, file, sizeof(file));
			snprintf(hint, sizeof(hint), "%s:%u is allowed in %s: "
			    "use that name", HOST_LOOPBACK_NAME, port, file);
		} else if (v == VERDICT_ALLOW)
			snprintf(hint, sizeof(hint), "%s:%u is allowed: use "
			    "that name", HOST_LOOPBACK_NAME, port);
		else {
			snprintf(reason, sizeof(reason), "%s%s", m != NULL ?
			    "deny-list:" : "host-loopback", m != NULL ?
			    m->text : "");
			(void)policy_hint(conf, &h, (uint16_t)port, reason,
			    hint, sizeof(hint));
		}
	}
	summary_net(s, SUMMARY_UNREACH, addr, port, "tcp", "sandbox-loopback",
	    detail, hint[0] != '\0' ? hint : NULL);
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

static size_t
summary_dropped(const struct summary *s)
{
	size_t	 i, n = 0;

	for (i = 0; i < SUMMARY_KINDS; i++)
		n += s->dropped[i];
	return n;
}

size_t
summary_count(const struct summary *s)
{
	return s->n + summary_dropped(s);
}

/* One line on the terminal, whatever the text in it holds. */
static void
summary_line(FILE *f, const char *fmt, ...)
{
	char	 raw[SUMMARY_LINE], line[SUMMARY_LINE];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	text_clean(line, sizeof(line), raw, 0);
	fprintf(f, "%s\n", line);
}

/*
 * The items of one part (unreach: the failures, else the refusals), at
 * most shown of them, then where the rest is; the heading is the
 * caller's.
 */
static void
summary_print_part(const struct summary *s, FILE *f, const char *report,
    int unreach, size_t shown, int agent)
{
	const struct summary_item	*it;
	char				 count[32];
	size_t				 i, n = 0, more;

	for (i = 0; i < s->n; i++) {
		it = &s->v[i];
		if ((it->kind == SUMMARY_UNREACH) != unreach)
			continue;
		if (n++ >= shown)
			continue;
		count[0] = '\0';
		if (it->count > 1)
			snprintf(count, sizeof(count), "%s%zu times",
			    it->kind == SUMMARY_FILE ? "" : ", ", it->count);
		if (it->kind == SUMMARY_FILE)
			summary_line(f, "  %s %s%s%s%s%s%s", it->reason,
			    it->what, count[0] != '\0' ? " (" : "", count,
			    count[0] != '\0' ? ")" : "", it->detail != NULL ?
			    ": " : "", it->detail != NULL ? it->detail : "");
		else if (it->kind == SUMMARY_NET && strncmp(it->reason,
		    "budget-", 7) != 0 && strcmp(it->reason,
		    "credential-leak") != 0)
			summary_line(f, "  %s %s (%s%s)%s%s", it->proto !=
			    NULL ? it->proto : "connect", it->what, it->reason,
			    count, it->hint != NULL ? ": " : "", it->hint !=
			    NULL ? it->hint : "");
		else
			summary_line(f, "  %s %s (%s%s)%s%s%s%s", it->proto !=
			    NULL ? it->proto : "connect", it->what, it->reason,
			    count, it->detail != NULL ? ": " : "", it->detail !=
			    NULL ? it->detail : "", it->hint != NULL ? "; " :
			    "", it->hint != NULL ? it->hint : "");
	}
	more = unreach ? s->dropped[SUMMARY_UNREACH] : s->dropped[SUMMARY_NET] +
	    s->dropped[SUMMARY_FILE] + (size_t)s->more;
	if (n > shown || more > 0)
		summary_line(f, "  ... and more%s%s", report != NULL ?
		    "; all of them in " : agent ? "" :
		    " (--report FILE lists them all)",
		    report != NULL ? report : "");
}

/* Whether the part has anything to say. */
static int
summary_has(const struct summary *s, int unreach)
{
	size_t	 i;

	for (i = 0; i < s->n; i++)
		if ((s->v[i].kind == SUMMARY_UNREACH) == unreach)
			return 1;
	return unreach ? s->dropped[SUMMARY_UNREACH] > 0 :
	    s->dropped[SUMMARY_NET] + s->dropped[SUMMARY_FILE] > 0 || s->more;
}

void
summary_print(const struct summary *s, FILE *f, const char *report,
    int status, int agent)
{
	const char	*me = log_getname();
	const char	*quiet = agent ? "" : "; --quiet hides this";
	int		 refused = summary_has(s, 0);

	if (s->lost > 0)
		summary_line(f, "%s: the supervisor was restarted "
		    "during this run and no longer knew it: %zu review(s) "
		    "failed (review:error, not a policy decision; ask again)%s",
		    me, s->lost, s->relost == s->lost ? "; registering again "
		    "failed" : s->relost > 0 ? "; pisbx-run registered again "
		    "(once it could)" : "; pisbx-run registered again, later "
		    "reviews went to it");
	/*
	 * A command that exited 0 made do without what was refused (npm's
	 * audit and update check): say so first, so neither the person nor
	 * the agent's model goes fixing what did not fail.  A model reads
	 * pisbx-sh's lines: it is told of no option it cannot pass.
	 */
	if (refused) {
		if (status == 0)
			summary_line(f, "%s: the command exited 0; refused on "
			    "the way (allow these only if something is "
			    "missing%s):", me, quiet);
		else
			summary_line(f, "%s: refused during this run%s:", me,
			    agent ? "" : " (--quiet hides this)");
		summary_print_part(s, f, report, 0, SUMMARY_SHOWN, agent);
	}
	if (summary_has(s, 1)) {
		summary_line(f, "%s: allowed, but could not be reached%s:", me,
		    refused || agent ? "" : " (--quiet hides this)");
		summary_print_part(s, f, report, 1, SUMMARY_UNREACH_SHOWN,
		    agent);
	}
}

int
summary_json(const struct summary *s, FILE *f)
{
	const struct summary_item	*it;
	json_t				*o;
	char				*line;
	size_t				 i;
	int				 rc = 0, sep;

	fprintf(f, "[");
	for (i = 0; i < s->n; i++) {
		it = &s->v[i];
		if (it->kind != SUMMARY_FILE)
			o = json_pack("{s:s, s:s, s:i, s:s, s:s, s:i}",
			    "kind", it->kind == SUMMARY_NET ? "network" :
			    "unreachable", "host", it->host != NULL ?
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
		    it->kind != SUMMARY_FILE ? "detail" : "why",
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
	if (summary_dropped(s) > 0 || s->more)
		fprintf(f, "%s\n{\"kind\":\"more\",\"count\":%zu}",
		    s->n > 0 ? "," : "", summary_dropped(s));
	sep = s->n > 0 || summary_dropped(s) > 0 || s->more;
	for (i = 0; i < s->ninj; i++) {
		o = json_pack("{s:s, s:s, s:s, s:i, s:i}", "kind", "injected",
		    "credential", s->inj[i].name, "host", s->inj[i].host,
		    "port", (int)s->inj[i].port, "requests",
		    (int)s->inj[i].requests);
		if (o == NULL || (line = json_dumps(o, JSON_COMPACT |
		    JSON_PRESERVE_ORDER)) == NULL) {
			json_decref(o);
			rc = -1;
			continue;
		}
		fprintf(f, "%s\n%s", sep ? "," : "", line);
		sep = 1;
		free(line);
		json_decref(o);
	}
	fprintf(f, "\n]\n");
	return rc == 0 && !ferror(f) ? 0 : -1;
}
