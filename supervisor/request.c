/*
 * pisbx-supervisor's requests before they are handled (supervisor.c
 * handles them): a request line parsed and checked -- its size, its JSON,
 * its type, the capability (compared in constant time), the id, worker
 * id, cwd and target within their bounds and free of control characters
 * -- and the tables a request is checked against: the workers that
 * registered (bounded, the oldest exited entry making room) and the ids
 * seen, kept as keyed digests so that no id is accepted twice.  Also the
 * network policy a registration hands out, taken from the trusted config.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "policy/policy.h"
#include "approval/approval.h"
#include "approval/supclient.h"
#include "supervisor/supervisor.h"
#include "supervisor/supervisor_int.h"

static int	 text_ok(const char *, size_t, size_t);
static int	 worker_id_ok(const char *);

/* Parse and check one request line (supervisor.h): 0, or -1 and why. */
int
supervisor_request_parse(const char *line, size_t len, const char *capability,
    struct supervisor_request *r, char *reason, size_t reasonlen)
{
	json_t		*o, *v;
	json_error_t	 jerr;
	const char	*s;
	json_int_t	 port;

	memset(r, 0, sizeof(*r));
	reason[0] = '\0';
	if (len > REVIEW_FRAME_MAX) {
		snprintf(reason, reasonlen, "request frame over %d octets",
		    REVIEW_FRAME_MAX);
		return -1;
	}
	if ((o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL || !json_is_object(o)) {
		snprintf(reason, reasonlen, "request is not a JSON object%s%s",
		    o == NULL ? ": " : "", o == NULL ? jerr.text : "");
		json_decref(o);
		return -1;
	}
	r->obj = o;
	v = json_object_get(o, "id");
	if ((s = json_string_value(v)) == NULL ||
	    !text_ok(s, json_string_length(v), ID_MAX)) {
		snprintf(reason, reasonlen, "request has no usable id");
		return -1;
	}
	r->id = s;
	v = json_object_get(o, "version");
	if (!json_is_integer(v) || json_integer_value(v) != 1) {
		snprintf(reason, reasonlen, "unsupported protocol version");
		return -1;
	}
	v = json_object_get(o, "capability");
	if (!json_is_string(v) || !supervisor_capability_ok(capability,
	    json_string_value(v), json_string_length(v))) {
		r->bad_capability = v == NULL ? 1 : 2;
		snprintf(reason, reasonlen, "bad capability");
		return -1;
	}
	/* Nothing downstream (reviewers, logs) ever sees it. */
	json_object_del(o, "capability");

	if ((r->type = json_string_value(json_object_get(o, "type"))) ==
	    NULL) {
		snprintf(reason, reasonlen, "request has no type");
		return -1;
	}
	/* A new policy from the person: no worker of its own. */
	if (strcmp(r->type, "push") == 0) {
		r->kind = SUPREQ_PUSH;
		if (!json_is_object(json_object_get(o, "network"))) {
			snprintf(reason, reasonlen, "malformed push request: "
			    "no network object");
			return -1;
		}
		return 0;
	}
	r->worker_id = json_string_value(json_object_get(o, "workerId"));
	if (r->worker_id == NULL || !worker_id_ok(r->worker_id)) {
		snprintf(reason, reasonlen, "request has no usable workerId");
		return -1;
	}
	r->cwd = json_string_value(json_object_get(o, "cwd"));
	if (r->cwd == NULL || r->cwd[0] != '/' || !text_ok(r->cwd,
	    strlen(r->cwd), CWD_MAX)) {
		snprintf(reason, reasonlen, "request has no absolute cwd");
		return -1;
	}
	if (strcmp(r->type, "register") == 0)
		r->kind = SUPREQ_REGISTER;
	else if (strcmp(r->type, "unregister") == 0)
		r->kind = SUPREQ_UNREGISTER;
	else if (strcmp(r->type, "network") == 0) {
		r->kind = SUPREQ_NETWORK;
		v = json_object_get(o, "port");
		port = json_is_integer(v) ? json_integer_value(v) : 0;
		s = json_string_value(json_object_get(o, "hostname"));
		if (s == NULL || !text_ok(s, strlen(s), HOST_TEXT_MAX) ||
		    port < 1 || port > 65535 ||
		    !json_is_string(json_object_get(o, "protocol"))) {
			snprintf(reason, reasonlen,
			    "malformed network request");
			return -1;
		}
	} else if (strcmp(r->type, "host-ipc") == 0) {
		r->kind = SUPREQ_HOSTIPC;
		s = json_string_value(json_object_get(o, "operation"));
		if (s == NULL || strcmp(s, "execute-host") != 0 ||
		    !json_is_string(json_object_get(o, "command")) ||
		    !json_is_string(json_object_get(o, "rule"))) {
			snprintf(reason, reasonlen,
			    "malformed host-ipc request");
			return -1;
		}
	} else {
		snprintf(reason, reasonlen, "unknown request type");
		return -1;
	}
	return 0;
}

/* Free what a parsed request holds. */
void
supervisor_request_clear(struct supervisor_request *r)
{
	json_decref(r->obj);
	memset(r, 0, sizeof(*r));
}

/* The worker registered with this id, or NULL. */
struct worker *
worker_find(struct supervisor *sup, const char *id)
{
	struct worker	*w;

	TAILQ_FOREACH(w, &sup->workers, entry)
		if (strcmp(w->id, id) == 0)
			return w;
	return NULL;
}

/* A new running entry; the oldest exited one makes room when full. */
int
worker_add(struct supervisor *sup, const char *id, const char *cwd,
    pid_t pid, struct worker **out)
{
	struct worker	*w;

	if ((w = worker_find(sup, id)) != NULL) {
		TAILQ_REMOVE(&sup->workers, w, entry);
		sup->nworkers--;
		free(w->cwd);
		free(w);
	}
	if (sup->nworkers >= SUPERVISOR_WORKERS_MAX) {
		TAILQ_FOREACH(w, &sup->workers, entry)
			if (w->state == WORKER_EXITED)
				break;
		if (w == NULL)
			return -1;
		TAILQ_REMOVE(&sup->workers, w, entry);
		sup->nworkers--;
		free(w->cwd);
		free(w);
	}
	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    (w->cwd = strdup(cwd)) == NULL) {
		free(w);
		return -1;
	}
	snprintf(w->id, sizeof(w->id), "%s", id);
	w->state = WORKER_RUNNING;
	w->started = time(NULL);
	w->pid = pid;
	TAILQ_INSERT_TAIL(&sup->workers, w, entry);
	sup->nworkers++;
	*out = w;
	return 0;
}

/* Non-empty, at most max octets, no NUL and no control characters. */
static int
text_ok(const char *s, size_t len, size_t max)
{
	size_t	 i;

	if (len == 0 || len > max || strlen(s) != len)
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

/* Worker ids are short tokens: letters, digits, '-', '_', '.'. */
static int
worker_id_ok(const char *s)
{
	size_t	 n = strlen(s);

	if (n == 0 || n > WORKER_ID_MAX)
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789-_.") == n;
}

/* Whether the presented capability is the expected one, in constant time. */
int
supervisor_capability_ok(const char *expected, const char *presented,
    size_t presented_len)
{
	unsigned char	 a[EVP_MAX_MD_SIZE], b[EVP_MAX_MD_SIZE];
	unsigned int	 alen = 0, blen = 0;
	int		 ok;

	/*
	 * Comparing digests keeps the time independent of where the strings
	 * differ and of the presented length.
	 */
	if (expected == NULL || presented == NULL)
		return 0;
	if (EVP_Digest(expected, strlen(expected), a, &alen, EVP_sha256(),
	    NULL) != 1 || EVP_Digest(presented, presented_len, b, &blen,
	    EVP_sha256(), NULL) != 1 || alen != blen)
		return 0;
	ok = CRYPTO_memcmp(a, b, alen) == 0;
	return ok && *expected != '\0';
}

/* The network policy a registration hands out, from a config's text. */
char *
supervisor_network_json(const char *text, size_t len)
{
	json_t		*root, *net, *out = NULL, *v;
	json_error_t	 jerr;
	char		*s = NULL;

	if ((root = json_loadb(text, len, 0, &jerr)) == NULL)
		return NULL;
	net = json_object_get(root, "network");
	if ((out = json_object()) == NULL)
		goto done;
	v = net != NULL ? json_object_get(net, "allowedDomains") : NULL;
	json_object_set_new(out, "allowedDomains", v != NULL ?
	    json_deep_copy(v) : json_array());
	v = net != NULL ? json_object_get(net, "deniedDomains") : NULL;
	json_object_set_new(out, "deniedDomains", v != NULL ?
	    json_deep_copy(v) : json_array());
	s = json_dumps(out, JSON_COMPACT);
done:
	json_decref(out);
	json_decref(root);
	return s;
}

/*
 * Remember id: 0 when new, 1 when seen before, -1 when the table is full
 * (or out of memory).  Ids are kept as keyed digests (SHA-256 of a
 * per-process random key and the id, 8 octets of it), so a request cannot
 * pick collisions; a false "seen" is a 1 in 2^64 chance per id.
 */
int
idset_add(struct idset *set, const char *id)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen = 0;
	EVP_MD_CTX	*ctx;
	uint64_t	 h, *nv;
	size_t		 i, j, nsize;
	int		 ok;

	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return -1;
	ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
	    EVP_DigestUpdate(ctx, set->key, sizeof(set->key)) == 1 &&
	    EVP_DigestUpdate(ctx, id, strlen(id)) == 1 &&
	    EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen >= 8;
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return -1;
	memcpy(&h, md, sizeof(h));
	if (h == 0)
		h = 1;
	/* Grow at half full; the table never shrinks. */
	if (set->n + 1 > set->size / 2) {
		if (set->n >= IDS_MAX)
			return -1;
		nsize = set->size == 0 ? 1024 : set->size * 2;
		if ((nv = calloc(nsize, sizeof(*nv))) == NULL)
			return -1;
		for (i = 0; i < set->size; i++) {
			if (set->v[i] == 0)
				continue;
			for (j = set->v[i] & (nsize - 1); nv[j] != 0;
			    j = (j + 1) & (nsize - 1))
				;
			nv[j] = set->v[i];
		}
		free(set->v);
		set->v = nv;
		set->size = nsize;
	}
	for (j = h & (set->size - 1); set->v[j] != 0;
	    j = (j + 1) & (set->size - 1))
		if (set->v[j] == h)
			return 1;
	set->v[j] = h;
	set->n++;
	return 0;
}
