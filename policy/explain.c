/*
 * The --explain answer: how the policy decides one "host[:port]" target,
 * as one JSON line a person or a script can read.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy/policy.h"

#define EXPLAIN_DEFAULT_PORT	443

static json_t	*explain_raw_string(const char *);

/*
 * The raw target as a JSON string: as written when it is valid UTF-8,
 * otherwise with every byte outside printable ASCII shown as \xNN.
 */
static json_t *
explain_raw_string(const char *s)
{
	json_t		*j;
	char		*buf;
	size_t		 i, off = 0, len = strlen(s);

	if ((j = json_string(s)) != NULL)
		return j;
	if ((buf = malloc(len * 4 + 1)) == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f)
			buf[off++] = (char)c;
		else
			off += (size_t)snprintf(buf + off, len * 4 + 1 - off,
			    "\\x%02x", c);
	}
	buf[off] = '\0';
	j = json_string(buf);
	free(buf);
	return j;
}

char *
policy_explain(const struct policy *p, const char *target)
{
	const struct pattern	*m = NULL;
	struct host		 h;
	json_t			*o = NULL;
	const char		*err = NULL;
	char			*out = NULL, reason[sizeof(m->text) + 16];
	uint16_t		 port = 0;
	enum verdict		 v;

	if ((o = json_object()) == NULL)
		goto fail;
	if (target_parse(target, strlen(target), EXPLAIN_DEFAULT_PORT, &h,
	    &port, &err) == -1) {
		if (json_object_set_new(o, "host",
		    explain_raw_string(target)) == -1 ||
		    json_object_set_new(o, "port", json_integer(port)) == -1 ||
		    json_object_set_new(o, "decision",
		    json_string(verdict_name(VERDICT_DENY))) == -1 ||
		    json_object_set_new(o, "reason",
		    json_string("invalid-host")) == -1 ||
		    json_object_set_new(o, "error", json_string(err)) == -1)
			goto fail;
	} else {
		v = policy_eval(p, &h, port, &m);
		if (v == VERDICT_REVIEW)
			snprintf(reason, sizeof(reason), "review");
		else
			snprintf(reason, sizeof(reason), "%s:%s",
			    v == VERDICT_DENY ? "deny-list" : "allow-list",
			    m->text);
		if (json_object_set_new(o, "host", json_string(h.text)) == -1 ||
		    json_object_set_new(o, "port", json_integer(port)) == -1 ||
		    json_object_set_new(o, "decision",
		    json_string(verdict_name(v))) == -1 ||
		    json_object_set_new(o, "reason", json_string(reason)) == -1)
			goto fail;
	}
	out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
 fail:
	json_decref(o);
	return out;
}
