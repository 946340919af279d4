/*
 * pisbx-proxy --replay: read a JSON access log line by line, re-decide
 * each decision record under the new config (policy/replay.c) and print
 * one line per distinct change and a summary.  Memory is bounded by the
 * distinct changes (at most REPLAY_MAX_CHANGES are itemised) and one
 * line of REPLAY_LINE_MAX octets, whatever the size of the log.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy/policy.h"
#include "proxy/proxy.h"

#define REPLAY_MAX_CHANGES	100000
#define REPLAY_MAX_REPORTED	100	/* unreadable lines named each */

static int	 replay_read_line(FILE *, char *, size_t, size_t *, int *);
static int	 replay_print(const struct replay *, uint64_t, uint64_t,
		    uint64_t);
static int	 replay_print_json(const struct replay *, uint64_t, uint64_t,
		    uint64_t);
static void	 replay_key(char *, size_t, enum replay_class);

/*
 * Read one line into buf (without its newline): 1 a line, 0 end of file,
 * -1 a read error.  A line over len octets is read to its end and
 * *toolong set, so the next call starts at the next line.
 */
static int
replay_read_line(FILE *f, char *buf, size_t len, size_t *n, int *toolong)
{
	int	 ch;

	*n = 0;
	*toolong = 0;
	while ((ch = getc_unlocked(f)) != EOF) {
		if (ch == '\n')
			return 1;
		if (*n < len)
			buf[(*n)++] = (char)ch;
		else
			*toolong = 1;
	}
	if (ferror(f))
		return -1;
	return *n > 0 || *toolong ? 1 : 0;
}

/* The change lines, then the summary table; 1 when anything changed. */
static int
replay_print(const struct replay *rp, uint64_t lines, uint64_t closes,
    uint64_t bad)
{
	const struct replay_change **v;
	uint64_t		 counts[REPLAY_NCLASS], unlisted, changed = 0;
	size_t			 n, i;
	int			 c;

	if ((v = replay_changes(rp, &n, &unlisted, counts)) == NULL) {
		fprintf(stderr, "pisbx-proxy: --replay: out of memory\n");
		return -1;
	}
	for (i = 0; i < n; i++)
		printf("%s: %s: %s -> %s (%llu record%s)\n",
		    replay_class_name(v[i]->cls), v[i]->target, v[i]->from,
		    v[i]->to, (unsigned long long)v[i]->count,
		    v[i]->count == 1 ? "" : "s");
	free(v);
	if (unlisted > 0)
		printf("... %llu more changed record%s, over %d distinct "
		    "changes, not itemised\n", (unsigned long long)unlisted,
		    unlisted == 1 ? "" : "s", REPLAY_MAX_CHANGES);
	printf("%-22s %llu\n", "records read", (unsigned long long)lines);
	for (c = 0; c < REPLAY_NCLASS; c++) {
		printf("%-22s %llu\n", replay_class_name(c),
		    (unsigned long long)counts[c]);
		if (c != REPLAY_UNCHANGED && c != REPLAY_NOT_POLICY)
			changed += counts[c];
	}
	printf("%-22s %llu\n", "close records", (unsigned long long)closes);
	printf("%-22s %llu\n", "unreadable", (unsigned long long)bad);
	return changed > 0;
}

/* A class's name as a JSON key: "newly refused" is "newly-refused". */
static void
replay_key(char *buf, size_t len, enum replay_class c)
{
	char	*p;

	snprintf(buf, len, "%s", replay_class_name(c));
	for (p = buf; *p != '\0'; p++)
		if (*p == ' ')
			*p = '-';
}

/*
 * --replay-format json: one object per distinct change, then one summary
 * object (records per class); 1 when anything changed, -1 on failure.
 */
static int
replay_print_json(const struct replay *rp, uint64_t lines, uint64_t closes,
    uint64_t bad)
{
	const struct replay_change **v;
	uint64_t		 counts[REPLAY_NCLASS], unlisted, changed = 0;
	json_t			*o = NULL, *byclass;
	char			*line, key[32];
	size_t			 n, i;
	int			 c, rc = -1;

	if ((v = replay_changes(rp, &n, &unlisted, counts)) == NULL)
		goto fail;
	for (i = 0; i < n; i++) {
		replay_key(key, sizeof(key), v[i]->cls);
		o = json_pack("{s:s, s:s, s:s, s:s, s:I}", "change", key,
		    "target", v[i]->target, "from", v[i]->from, "to",
		    v[i]->to, "records", (json_int_t)v[i]->count);
		if (o == NULL || (line = json_dumps(o, JSON_COMPACT |
		    JSON_PRESERVE_ORDER)) == NULL)
			goto fail;
		printf("%s\n", line);
		free(line);
		json_decref(o);
	}
	if ((o = json_pack("{s:b, s:I}", "summary", 1, "records",
	    (json_int_t)lines)) == NULL || (byclass = json_object()) == NULL ||
	    json_object_set_new(o, "classes", byclass) == -1)
		goto fail;
	for (c = 0; c < REPLAY_NCLASS; c++) {
		replay_key(key, sizeof(key), c);
		if (json_object_set_new(byclass, key,
		    json_integer((json_int_t)counts[c])) == -1)
			goto fail;
		if (c != REPLAY_UNCHANGED && c != REPLAY_NOT_POLICY)
			changed += counts[c];
	}
	if (json_object_set_new(o, "changed",
	    json_integer((json_int_t)changed)) == -1 ||
	    json_object_set_new(o, "not_itemised",
	    json_integer((json_int_t)unlisted)) == -1 ||
	    json_object_set_new(o, "close_records",
	    json_integer((json_int_t)closes)) == -1 ||
	    json_object_set_new(o, "unreadable",
	    json_integer((json_int_t)bad)) == -1 ||
	    (line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER)) == NULL)
		goto fail;
	printf("%s\n", line);
	free(line);
	rc = changed > 0;
fail:
	json_decref(o);
	free(v);
	if (rc == -1)
		fprintf(stderr, "pisbx-proxy: --replay: out of memory\n");
	return rc;
}

int
replay_run(const struct config *conf, const char *path, int json)
{
	struct replay_record	 r;
	struct replay		*rp = NULL;
	FILE			*f = NULL;
	const char		*errstr, *name;
	char			*buf = NULL, to[TARGET_TEXT_MAX + 48];
	uint64_t		 lines = 0, closes = 0, bad = 0;
	size_t			 n;
	int			 rc = REPLAY_EXIT_TROUBLE, got, toolong;
	int			 changed;

	name = strcmp(path, "-") == 0 ? "(standard input)" : path;
	if (strcmp(path, "-") == 0)
		f = stdin;
	else if ((f = fopen(path, "re")) == NULL) {
		fprintf(stderr, "pisbx-proxy: --replay %s: %s\n", path,
		    strerror(errno));
		goto fail;
	}
	if ((buf = malloc(REPLAY_LINE_MAX)) == NULL ||
	    (rp = replay_new(REPLAY_MAX_CHANGES)) == NULL) {
		fprintf(stderr, "pisbx-proxy: --replay: out of memory\n");
		goto fail;
	}
	while ((got = replay_read_line(f, buf, REPLAY_LINE_MAX, &n,
	    &toolong)) == 1) {
		lines++;
		switch (toolong ? -1 : replay_parse(buf, n, &r, &errstr)) {
		case 0:
			closes++;
			continue;
		case 1:
			if (replay_add(rp, &r, replay_decide(conf, &r, to,
			    sizeof(to)), to) == -1) {
				fprintf(stderr, "pisbx-proxy: --replay: out "
				    "of memory\n");
				goto fail;
			}
			continue;
		}
		if (toolong)
			errstr = "line over 65536 octets";
		if (++bad <= REPLAY_MAX_REPORTED)
			fprintf(stderr, "pisbx-proxy: %s:%llu: %s\n", name,
			    (unsigned long long)lines, errstr);
	}
	if (got == -1) {
		fprintf(stderr, "pisbx-proxy: --replay %s: read error after "
		    "line %llu: %s\n", name, (unsigned long long)lines,
		    strerror(errno));
		goto fail;
	}
	if (bad > REPLAY_MAX_REPORTED)
		fprintf(stderr, "pisbx-proxy: %s: %llu more unreadable "
		    "lines\n", name,
		    (unsigned long long)(bad - REPLAY_MAX_REPORTED));
	fflush(stderr);
	if ((changed = json ? replay_print_json(rp, lines, closes, bad) :
	    replay_print(rp, lines, closes, bad)) == -1)
		goto fail;
	rc = bad > 0 ? REPLAY_EXIT_TROUBLE : changed ? REPLAY_EXIT_CHANGED :
	    REPLAY_EXIT_SAME;
 fail:
	if (f != NULL && f != stdin)
		fclose(f);
	free(buf);
	replay_free(rp);
	fflush(stdout);
	return rc;
}
