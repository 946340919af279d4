/*
 * The --explain answer: what the proxy would do with one "host[:port]"
 * target before any DNS -- the lists, then the reviewer, or a deny when
 * there is none -- as one JSON line a person or a script can read.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy/policy.h"

#define EXPLAIN_DEFAULT_PORT	443

static json_t	*explain_raw_string(const char *);
static enum verdict explain_decide(const struct config *, const struct host *,
		    uint16_t, char *, size_t, const struct pattern **);

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

/*
 * What the proxy would do before any DNS: the lists; the loopback name;
 * a literal non-public address that no exact entry names (refused before
 * anyone is asked); the reviewer, or a deny when there is none.  *mp is
 * the deciding list entry, or NULL.
 */
static enum verdict
explain_decide(const struct config *conf, const struct host *h,
    uint16_t port, char *reason, size_t len, const struct pattern **mp)
{
	const struct pattern	*m = NULL;
	enum verdict		 v;

	v = policy_eval(conf->policy, h, port, &m);
	*mp = m;
	if (v != VERDICT_REVIEW) {
		policy_reason(v, m, reason, len);
		return v;
	}
	if (h->kind != HOST_NAME && (h->kind == HOST_IPV4 ?
	    addr_class_v4(&h->v4) : addr_class_v6(&h->v6)) != NULL) {
		snprintf(reason, len, "non-public-address");
		return VERDICT_DENY;
	}
	if (conf->review_mode == REVIEW_NONE) {
		snprintf(reason, len, "no-reviewer");
		return VERDICT_DENY;
	}
	snprintf(reason, len, "review");
	return VERDICT_REVIEW;
}

/* A review mode's name: command, socket, tty or none. */
const char *
policy_review_mode_name(enum review_mode m)
{
	switch (m) {
	case REVIEW_COMMAND:
		return "command";
	case REVIEW_SOCKET:
		return "socket";
	case REVIEW_TTY:
		return "tty";
	case REVIEW_NONE:
		break;
	}
	return "none";
}

char *
policy_explain(const struct config *conf, const char *target)
{
	struct host		 h;
	const struct pattern	*m;
	json_t			*o = NULL;
	const char		*err = NULL;
	char			*out = NULL, reason[TARGET_TEXT_MAX + 16];
	char			 hint[2048];
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
		v = explain_decide(conf, &h, port, reason, sizeof(reason), &m);
		if (json_object_set_new(o, "host", json_string(h.text)) == -1 ||
		    json_object_set_new(o, "port", json_integer(port)) == -1 ||
		    json_object_set_new(o, "decision",
		    json_string(verdict_name(v))) == -1 ||
		    json_object_set_new(o, "reason", json_string(reason)) == -1)
			goto fail;
		if (v == VERDICT_DENY && m != NULL && m->reason != NULL &&
		    json_object_set_new(o, "message",
		    json_string(m->reason)) == -1)
			goto fail;
		if (v == VERDICT_REVIEW && json_object_set_new(o, "reviewer",
		    json_string(policy_review_mode_name(conf->review_mode))) == -1)
			goto fail;
		if (v != VERDICT_ALLOW && policy_hint(conf, &h, port,
		    v == VERDICT_REVIEW ? "review:deny" : reason, hint,
		    sizeof(hint)) == 0 &&
		    json_object_set_new(o, "hint", json_string(hint)) == -1)
			goto fail;
		if (m != NULL && m->source != NULL &&
		    json_object_set_new(o, "source",
		    json_string(m->source)) == -1)
			goto fail;
		if (m != NULL && m->source != NULL && m->layer != NULL &&
		    json_object_set_new(o, "layer",
		    json_string(m->layer)) == -1)
			goto fail;
	}
	out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
 fail:
	json_decref(o);
	return out;
}
