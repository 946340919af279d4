/*
 * Deny -> allow -> review evaluation over hashed patterns.
 *
 * Each list is one open-addressing hash table keyed by (pattern kind,
 * host text, port).  A lookup costs a handful of probes whatever the size
 * of the config: the exact host with its port and with "any port", then
 * each strictly shorter parent suffix of a name (longest first) for
 * "*.suffix" entries, then the "*" entries.  The first hit in that order
 * is also the most specific pattern, which is what is reported.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

struct policy_entry {
	uint64_t	 hash;
	size_t		 keylen;	/* strlen(pat.host.text) */
	struct pattern	 pat;
};

struct policy_table {
	struct policy_entry	**slot;
	size_t			  cap;	/* power of two, 0 when empty */
	size_t			  n;
};

struct policy {
	struct policy_table	 list[2];	/* POLICY_DENY, POLICY_ALLOW */
};

static uint64_t	 policy_hash_text(const char *, size_t);
static uint64_t	 policy_hash_key(uint64_t, enum pattern_kind, uint16_t);
static const struct policy_entry *policy_find(const struct policy_table *,
		    uint64_t, enum pattern_kind, const char *, size_t,
		    uint16_t);
static int	 policy_grow(struct policy_table *);
static const struct pattern *policy_match(const struct policy_table *,
		    const struct host *, uint16_t);

/* FNV-1a over the host text; the key hash mixes in kind and port. */
static uint64_t
policy_hash_text(const char *s, size_t len)
{
	uint64_t	 h = 0xcbf29ce484222325ULL;
	size_t		 i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* splitmix64's finaliser, so similar keys spread over the table. */
static uint64_t
policy_hash_key(uint64_t texthash, enum pattern_kind kind, uint16_t port)
{
	uint64_t	 h;

	h = texthash ^ ((uint64_t)kind << 32 | port) * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

static const struct policy_entry *
policy_find(const struct policy_table *t, uint64_t hash,
    enum pattern_kind kind, const char *key, size_t keylen, uint16_t port)
{
	const struct policy_entry	*e;
	size_t				 i, mask;

	if (t->cap == 0)
		return NULL;
	mask = t->cap - 1;
	for (i = hash & mask; (e = t->slot[i]) != NULL; i = (i + 1) & mask) {
		if (e->hash == hash && e->pat.kind == kind &&
		    e->pat.port == port && e->keylen == keylen &&
		    memcmp(e->pat.host.text, key, keylen) == 0)
			return e;
	}
	return NULL;
}

/* Double the table (kept at most half full) and rehash. */
static int
policy_grow(struct policy_table *t)
{
	struct policy_entry	**slot, *e;
	size_t			  cap, i, j;

	cap = t->cap ? t->cap * 2 : 64;
	if ((slot = calloc(cap, sizeof(*slot))) == NULL)
		return -1;
	for (i = 0; i < t->cap; i++) {
		if ((e = t->slot[i]) == NULL)
			continue;
		for (j = e->hash & (cap - 1); slot[j] != NULL;
		    j = (j + 1) & (cap - 1))
			;
		slot[j] = e;
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

struct policy *
policy_new(void)
{
	return calloc(1, sizeof(struct policy));
}

void
policy_free(struct policy *p)
{
	size_t	 l, i;

	if (p == NULL)
		return;
	for (l = 0; l < 2; l++) {
		for (i = 0; i < p->list[l].cap; i++)
			free(p->list[l].slot[i]);
		free(p->list[l].slot);
	}
	free(p);
}

int
policy_add(struct policy *p, enum policy_list list, const struct pattern *pat)
{
	struct policy_table	*t = &p->list[list == POLICY_ALLOW];
	struct policy_entry	*e;
	size_t			 keylen, i;
	uint64_t		 hash;

	keylen = pat->kind == PATTERN_ANY ? 0 : strlen(pat->host.text);
	hash = policy_hash_key(policy_hash_text(pat->host.text, keylen),
	    pat->kind, pat->port);
	if (policy_find(t, hash, pat->kind, pat->host.text, keylen,
	    pat->port) != NULL)
		return 1;
	if ((t->n + 1) * 2 > t->cap && policy_grow(t) == -1)
		return -1;
	if ((e = malloc(sizeof(*e))) == NULL)
		return -1;
	e->hash = hash;
	e->keylen = keylen;
	e->pat = *pat;
	if (pat->kind == PATTERN_ANY)
		memset(&e->pat.host, 0, sizeof(e->pat.host));
	for (i = hash & (t->cap - 1); t->slot[i] != NULL;
	    i = (i + 1) & (t->cap - 1))
		;
	t->slot[i] = e;
	t->n++;
	return 0;
}

size_t
policy_count(const struct policy *p, enum policy_list list)
{
	return p->list[list == POLICY_ALLOW].n;
}

/*
 * The most specific pattern of one list matching host:port: exact with
 * port, exact, "*.suffix" from the longest suffix down (with port before
 * without at each), then "*:port" and "*".
 */
static const struct pattern *
policy_match(const struct policy_table *t, const struct host *h,
    uint16_t port)
{
	const struct policy_entry	*e;
	const char			*s = h->text, *dot;
	size_t				 len = strlen(h->text);
	uint64_t			 th;

	if (t->n == 0)
		return NULL;
	th = policy_hash_text(s, len);
	if ((e = policy_find(t, policy_hash_key(th, PATTERN_EXACT, port),
	    PATTERN_EXACT, s, len, port)) != NULL ||
	    (e = policy_find(t, policy_hash_key(th, PATTERN_EXACT, 0),
	    PATTERN_EXACT, s, len, 0)) != NULL)
		return &e->pat;

	/* Wildcards match names only, and only strict subdomains. */
	if (h->kind == HOST_NAME) {
		while ((dot = memchr(s, '.', len)) != NULL) {
			len -= (size_t)(dot - s) + 1;
			s = dot + 1;
			/* A suffix needs two labels: "*.com" never exists. */
			if (memchr(s, '.', len) == NULL)
				break;
			th = policy_hash_text(s, len);
			if ((e = policy_find(t, policy_hash_key(th,
			    PATTERN_WILDCARD, port), PATTERN_WILDCARD, s, len,
			    port)) != NULL ||
			    (e = policy_find(t, policy_hash_key(th,
			    PATTERN_WILDCARD, 0), PATTERN_WILDCARD, s, len,
			    0)) != NULL)
				return &e->pat;
		}
	}

	th = policy_hash_text("", 0);
	if ((e = policy_find(t, policy_hash_key(th, PATTERN_ANY, port),
	    PATTERN_ANY, "", 0, port)) != NULL ||
	    (e = policy_find(t, policy_hash_key(th, PATTERN_ANY, 0),
	    PATTERN_ANY, "", 0, 0)) != NULL)
		return &e->pat;
	return NULL;
}

enum verdict
policy_eval(const struct policy *p, const struct host *h, uint16_t port,
    const struct pattern **matched)
{
	const struct pattern	*m;
	enum verdict		 v = VERDICT_REVIEW;

	if ((m = policy_match(&p->list[0], h, port)) != NULL)
		v = VERDICT_DENY;
	else if ((m = policy_match(&p->list[1], h, port)) != NULL)
		v = VERDICT_ALLOW;
	if (matched != NULL)
		*matched = m;
	return v;
}

int
policy_exact_allowed(const struct policy *p, const struct host *h,
    uint16_t port)
{
	const struct policy_table	*t = &p->list[1];
	size_t				 len = strlen(h->text);
	uint64_t			 th;

	if (t->n == 0)
		return 0;
	th = policy_hash_text(h->text, len);
	return policy_find(t, policy_hash_key(th, PATTERN_EXACT, port),
	    PATTERN_EXACT, h->text, len, port) != NULL ||
	    policy_find(t, policy_hash_key(th, PATTERN_EXACT, 0),
	    PATTERN_EXACT, h->text, len, 0) != NULL;
}

const char *
verdict_name(enum verdict v)
{
	switch (v) {
	case VERDICT_DENY:
		return "deny";
	case VERDICT_ALLOW:
		return "allow";
	case VERDICT_REVIEW:
		return "review";
	}
	return "deny";
}
