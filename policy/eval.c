/*
 * Deny -> allow -> review evaluation over hashed patterns.
 *
 * Each list is one open-addressing hash table keyed by (pattern kind,
 * host text); an entry holds the "any port" pattern and the
 * port-restricted ones, sorted by port.  A lookup costs one probe for the
 * exact host, one per strictly shorter parent suffix of a name (longest
 * first) for "*.suffix" entries, and one for "*" -- whatever the size of
 * the config.  Text hashes run from the end of the name backwards, so one
 * pass over the host yields the hash of every suffix.  The first hit in
 * that order, port-restricted before any-port, is also the most specific
 * pattern, which is what is reported.
 */

#include <arpa/inet.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

#define POLICY_MAX_LABELS	(HOST_NAME_MAXLEN / 2 + 1)

struct policy_entry {
	struct pattern	 *any;		/* port 0, or NULL */
	struct pattern	**port;		/* sorted by port */
	size_t		  nport;
	size_t		  capport;
	enum pattern_kind kind;
	size_t		  keylen;
	char		  key[];	/* host text, not NUL-terminated */
};

/* The hash sits in the slot so a probe rarely touches the entry. */
struct policy_slot {
	uint64_t		 hash;
	struct policy_entry	*e;	/* NULL: empty */
};

struct policy_table {
	struct policy_slot	*slot;
	size_t			 cap;	/* power of two, 0 when empty */
	size_t			 nentry;
	size_t			 npattern;
	size_t			 nkind[3];	/* entries by pattern kind */
	struct policy_entry	*any;		/* the "*" entry, if any */
};

struct policy {
	struct policy_table	 list[2];	/* POLICY_DENY, POLICY_ALLOW */
	size_t			 nadded;	/* patterns added, for seq */
	int			 short_suffix;	/* a "*.tld" entry (noProxy) */
	struct policy		*ceiling;	/* the managed ceiling, or NULL */
	struct pattern		 outside;	/* its deny (ceiling set) */
};

/* The looked-up host: its hash and those of its wildcard suffixes. */
struct policy_key {
	const char	*s;
	size_t		 len;
	uint64_t	 hash;
	size_t		 nsuf;
	struct {
		size_t	 off;
		uint64_t hash;
	}		 suf[POLICY_MAX_LABELS];
};

static uint64_t	 policy_hash_text(const char *, size_t);
static uint64_t	 policy_hash_key(uint64_t, enum pattern_kind);
static struct policy_entry *policy_find(const struct policy_table *,
		    uint64_t, enum pattern_kind, const char *, size_t);
static const struct pattern *policy_entry_port(const struct policy_entry *,
		    uint16_t);
static int	 policy_grow(struct policy_table *);
static struct policy_entry *policy_entry_new(struct policy_table *,
		    uint64_t, enum pattern_kind, const char *, size_t);
static void	 policy_key_init(struct policy_key *, const struct policy *,
		    const struct host *);
static const struct pattern *policy_match(const struct policy_table *,
		    const struct policy_key *, uint16_t);
static int	 policy_seq_cmp(const void *, const void *);
static const struct pattern *policy_exact(const struct policy *,
		    const struct host *, uint16_t);

#define FNV_OFFSET	0xcbf29ce484222325ULL
#define FNV_PRIME	0x100000001b3ULL

/* FNV-1a over the text from its last byte to its first. */
static uint64_t
policy_hash_text(const char *s, size_t len)
{
	uint64_t	 h = FNV_OFFSET;

	while (len > 0) {
		h ^= (unsigned char)s[--len];
		h *= FNV_PRIME;
	}
	return h;
}

/* splitmix64's finaliser with the kind mixed in, to spread the table. */
static uint64_t
policy_hash_key(uint64_t texthash, enum pattern_kind kind)
{
	uint64_t	 h;

	h = texthash ^ ((uint64_t)kind + 1) * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

static struct policy_entry *
policy_find(const struct policy_table *t, uint64_t hash,
    enum pattern_kind kind, const char *key, size_t keylen)
{
	struct policy_entry	*e;
	size_t			 i, mask;

	if (t->cap == 0)
		return NULL;
	mask = t->cap - 1;
	for (i = hash & mask; (e = t->slot[i].e) != NULL; i = (i + 1) & mask) {
		if (t->slot[i].hash == hash && e->kind == kind &&
		    e->keylen == keylen && memcmp(e->key, key, keylen) == 0)
			return e;
	}
	return NULL;
}

/* The entry's pattern for this port: port-restricted, else any-port. */
static const struct pattern *
policy_entry_port(const struct policy_entry *e, uint16_t port)
{
	size_t	 lo = 0, hi = e->nport, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (e->port[mid]->port == port)
			return e->port[mid];
		if (e->port[mid]->port < port)
			lo = mid + 1;
		else
			hi = mid;
	}
	return e->any;
}

/* Double the table (kept at most half full) and rehash. */
static int
policy_grow(struct policy_table *t)
{
	struct policy_slot	*slot;
	size_t			 cap, i, j;

	cap = t->cap ? t->cap * 2 : 64;
	if ((slot = calloc(cap, sizeof(*slot))) == NULL)
		return -1;
	for (i = 0; i < t->cap; i++) {
		if (t->slot[i].e == NULL)
			continue;
		for (j = t->slot[i].hash & (cap - 1); slot[j].e != NULL;
		    j = (j + 1) & (cap - 1))
			;
		slot[j] = t->slot[i];
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

/* Insert an empty entry for (kind, key). */
static struct policy_entry *
policy_entry_new(struct policy_table *t, uint64_t hash,
    enum pattern_kind kind, const char *key, size_t keylen)
{
	struct policy_entry	*e;
	size_t			 i;

	if ((t->nentry + 1) * 2 > t->cap && policy_grow(t) == -1)
		return NULL;
	if ((e = calloc(1, sizeof(*e) + keylen)) == NULL)
		return NULL;
	e->kind = kind;
	e->keylen = keylen;
	memcpy(e->key, key, keylen);
	for (i = hash & (t->cap - 1); t->slot[i].e != NULL;
	    i = (i + 1) & (t->cap - 1))
		;
	t->slot[i].hash = hash;
	t->slot[i].e = e;
	t->nentry++;
	t->nkind[kind]++;
	if (kind == PATTERN_ANY)
		t->any = e;
	return e;
}

struct policy *
policy_new(void)
{
	return calloc(1, sizeof(struct policy));
}

void
policy_free(struct policy *p)
{
	struct policy_entry	*e;
	size_t			 l, i, j;

	if (p == NULL)
		return;
	policy_free(p->ceiling);
	free(p->outside.source);
	for (l = 0; l < 2; l++) {
		for (i = 0; i < p->list[l].cap; i++) {
			if ((e = p->list[l].slot[i].e) == NULL)
				continue;
			for (j = 0; j < e->nport; j++) {
				free(e->port[j]->reason);
				free(e->port[j]->source);
				free(e->port[j]);
			}
			free(e->port);
			if (e->any != NULL) {
				free(e->any->reason);
				free(e->any->source);
			}
			free(e->any);
			free(e);
		}
		free(p->list[l].slot);
	}
	free(p);
}

int
policy_add(struct policy *p, enum policy_list list, const struct pattern *pat)
{
	struct policy_table	*t = &p->list[list == POLICY_ALLOW];
	struct policy_entry	*e;
	struct pattern		*copy, **port;
	const char		*key = pat->host.text;
	size_t			 keylen, i, cap;
	uint64_t		 hash;

	keylen = pat->kind == PATTERN_ANY ? 0 : strlen(key);
	hash = policy_hash_key(policy_hash_text(key, keylen), pat->kind);
	if ((e = policy_find(t, hash, pat->kind, key, keylen)) == NULL &&
	    (e = policy_entry_new(t, hash, pat->kind, key, keylen)) == NULL)
		return -1;
	if (pat->port == 0 ? e->any != NULL :
	    (e->nport > 0 && policy_entry_port(e, pat->port) != e->any))
		return 1;

	if ((copy = malloc(sizeof(*copy))) == NULL)
		return -1;
	*copy = *pat;
	copy->reason = NULL;
	copy->seq = p->nadded;
	if (pat->source != NULL &&
	    (copy->source = strdup(pat->source)) == NULL) {
		free(copy);
		return -1;
	}
	if (pat->kind == PATTERN_WILDCARD && memchr(key, '.', keylen) == NULL)
		p->short_suffix = 1;
	if (pat->kind == PATTERN_ANY)
		memset(&copy->host, 0, sizeof(copy->host));
	if (pat->port == 0)
		e->any = copy;
	else {
		if (e->nport == e->capport) {
			cap = e->capport ? e->capport * 2 : 2;
			if ((port = reallocarray(e->port, cap,
			    sizeof(*port))) == NULL) {
				free(copy->source);
				free(copy);
				return -1;
			}
			e->port = port;
			e->capport = cap;
		}
		for (i = e->nport; i > 0 && e->port[i - 1]->port > pat->port;
		    i--)
			e->port[i] = e->port[i - 1];
		e->port[i] = copy;
		e->nport++;
	}
	t->npattern++;
	p->nadded++;
	return 0;
}

int
policy_set_reason(struct policy *p, const struct pattern *pat,
    const char *reason)
{
	struct policy_table	*t = &p->list[0];
	struct policy_entry	*e;
	struct pattern		*m;
	const char		*key = pat->host.text;
	size_t			 keylen, i;

	keylen = pat->kind == PATTERN_ANY ? 0 : strlen(key);
	e = policy_find(t, policy_hash_key(policy_hash_text(key, keylen),
	    pat->kind), pat->kind, key, keylen);
	if (e == NULL)
		return 1;
	m = NULL;
	if (pat->port == 0)
		m = e->any;
	else
		for (i = 0; i < e->nport; i++)
			if (e->port[i]->port == pat->port)
				m = e->port[i];
	if (m == NULL)
		return 1;
	if (m->reason != NULL)
		return 2;
	if ((m->reason = strdup(reason)) == NULL)
		return -1;
	return 0;
}

size_t
policy_count(const struct policy *p, enum policy_list list)
{
	return p->list[list == POLICY_ALLOW].npattern;
}

/* One entry of a walk: the pattern and its list. */
struct policy_walk_item {
	const struct pattern	*pat;
	enum policy_list	 list;
};

/* By the order the patterns were added. */
static int
policy_seq_cmp(const void *a, const void *b)
{
	const struct policy_walk_item *x = a, *y = b;

	return x->pat->seq < y->pat->seq ? -1 : x->pat->seq > y->pat->seq;
}

int
policy_walk(const struct policy *p, void (*cb)(enum policy_list,
    const struct pattern *, void *), void *arg)
{
	struct policy_walk_item	*v;
	struct policy_entry	*e;
	size_t			 l, i, j, n = 0, total;

	total = p->list[0].npattern + p->list[1].npattern;
	if ((v = calloc(total + 1, sizeof(*v))) == NULL)
		return -1;
	for (l = 0; l < 2; l++)
		for (i = 0; i < p->list[l].cap; i++) {
			if ((e = p->list[l].slot[i].e) == NULL)
				continue;
			for (j = 0; j <= e->nport; j++) {
				v[n].pat = j < e->nport ? e->port[j] : e->any;
				v[n].list = l == 0 ? POLICY_DENY : POLICY_ALLOW;
				if (v[n].pat != NULL)
					n++;
			}
		}
	qsort(v, n, sizeof(*v), policy_seq_cmp);
	for (i = 0; i < n; i++)
		cb(v[i].list, v[i].pat, arg);
	free(v);
	return 0;
}

/*
 * Hash the host once for both lists: one backward pass, and at each dot
 * the hash so far is that of the suffix after it.  Only suffixes of two
 * or more labels can carry a wildcard ("*.com" is never accepted), and
 * wildcards match names only, never IP literals.
 */
static void
policy_key_init(struct policy_key *k, const struct policy *p,
    const struct host *h)
{
	const char	*s = h->text;
	uint64_t	 th = FNV_OFFSET;
	size_t		 i, dots = 0;
	int		 wild;

	k->s = s;
	k->len = strlen(s);
	k->nsuf = 0;
	wild = h->kind == HOST_NAME &&
	    (p->list[0].nkind[PATTERN_WILDCARD] != 0 ||
	    p->list[1].nkind[PATTERN_WILDCARD] != 0);
	for (i = k->len; i > 0; i--) {
		if (wild && s[i - 1] == '.' && (dots++ > 0 ||
		    p->short_suffix) &&
		    k->nsuf < POLICY_MAX_LABELS) {
			k->suf[k->nsuf].off = i;
			k->suf[k->nsuf].hash = th;
			k->nsuf++;
		}
		th ^= (unsigned char)s[i - 1];
		th *= FNV_PRIME;
	}
	k->hash = th;
}

/*
 * The most specific pattern of one list matching host:port: exact (with
 * port before any port), "*.suffix" from the longest suffix down, then
 * "*:port" and "*".
 */
static const struct pattern *
policy_match(const struct policy_table *t, const struct policy_key *k,
    uint16_t port)
{
	const struct pattern	*m;
	struct policy_entry	*e;
	size_t			 n, off;

	if (t->nentry == 0)
		return NULL;
	if (t->nkind[PATTERN_EXACT] != 0 && (e = policy_find(t,
	    policy_hash_key(k->hash, PATTERN_EXACT), PATTERN_EXACT, k->s,
	    k->len)) != NULL && (m = policy_entry_port(e, port)) != NULL)
		return m;
	if (t->nkind[PATTERN_WILDCARD] != 0) {
		for (n = k->nsuf; n-- > 0; ) {
			off = k->suf[n].off;
			if ((e = policy_find(t, policy_hash_key(k->suf[n].hash,
			    PATTERN_WILDCARD), PATTERN_WILDCARD, k->s + off,
			    k->len - off)) != NULL &&
			    (m = policy_entry_port(e, port)) != NULL)
				return m;
		}
	}
	if (t->any != NULL)
		return policy_entry_port(t->any, port);
	return NULL;
}

enum verdict
policy_eval(const struct policy *p, const struct host *h, uint16_t port,
    const struct pattern **matched)
{
	struct policy_key	 k;
	const struct pattern	*m;
	enum verdict		 v = VERDICT_REVIEW;

	policy_key_init(&k, p, h);
	if ((m = policy_match(&p->list[0], &k, port)) != NULL)
		v = VERDICT_DENY;
	else if (host_is_loopback_name(h)) {
		m = policy_exact(p, h, port);
		v = m != NULL && m->port == port ? VERDICT_ALLOW : VERDICT_DENY;
		if (v == VERDICT_DENY)
			m = NULL;
	} else if ((m = policy_match(&p->list[1], &k, port)) != NULL)
		v = VERDICT_ALLOW;
	else if (p->ceiling != NULL &&
	    policy_eval(p->ceiling, h, port, NULL) != VERDICT_ALLOW) {
		/* Outside the managed ceiling: no reviewer may open it. */
		v = VERDICT_DENY;
		m = &p->outside;
	}
	if (matched != NULL)
		*matched = m;
	return v;
}

/* The managed ceiling on a policy, and the deny it gives (policy.h). */
int
policy_set_ceiling(struct policy *p, struct policy *ceiling,
    const char *source)
{
	char	*s = NULL;

	if (ceiling != NULL && source != NULL && (s = strdup(source)) == NULL)
		return -1;
	policy_free(p->ceiling);
	free(p->outside.source);
	memset(&p->outside, 0, sizeof(p->outside));
	p->ceiling = ceiling;
	p->outside.kind = PATTERN_ANY;
	snprintf(p->outside.text, sizeof(p->outside.text), "*");
	p->outside.source = s;
	p->outside.layer = "managed";
	p->outside.ceiling = 1;
	return 0;
}

/* The access-log reason of a list verdict (policy.h). */
void
policy_reason(enum verdict v, const struct pattern *m, char *buf,
    size_t len)
{
	if (v == VERDICT_REVIEW)
		snprintf(buf, len, "review");
	else if (m == NULL)
		snprintf(buf, len, v == VERDICT_DENY ? "host-loopback" :
		    "allow-list:?");
	else if (m->ceiling)
		snprintf(buf, len, "managed-ceiling");
	else
		snprintf(buf, len, "%s:%s", v == VERDICT_DENY ? "deny-list" :
		    "allow-list", m->text);
}

/*
 * Whether inner's matches are all outer's: ports first (outer any port,
 * or the same one), then hosts -- "*" holds everything, an exact host
 * itself, "*.s" every name strictly below s and every "*.t" with t
 * equal to s or below it.
 */
int
pattern_within(const struct pattern *inner, const struct pattern *outer)
{
	const char	*a, *s;
	size_t		 alen, slen;

	if (outer->port != 0 && outer->port != inner->port)
		return 0;
	switch (outer->kind) {
	case PATTERN_ANY:
		return 1;
	case PATTERN_EXACT:
		return inner->kind == PATTERN_EXACT &&
		    strcmp(inner->host.text, outer->host.text) == 0;
	case PATTERN_WILDCARD:
		break;
	}
	if (inner->kind == PATTERN_ANY || inner->host.kind != HOST_NAME)
		return 0;
	a = inner->host.text;
	s = outer->host.text;
	alen = strlen(a);
	slen = strlen(s);
	if (inner->kind == PATTERN_WILDCARD && alen == slen)
		return strcmp(a, s) == 0;
	return alen > slen + 1 && a[alen - slen - 1] == '.' &&
	    strcmp(a + alen - slen, s) == 0;
}

/* The exact allow entry naming host:port (or the host, any port). */
static const struct pattern *
policy_exact(const struct policy *p, const struct host *h, uint16_t port)
{
	const struct policy_table	*t = &p->list[1];
	struct policy_entry		*e;
	size_t				 len = strlen(h->text);

	if (t->nkind[PATTERN_EXACT] == 0)
		return NULL;
	e = policy_find(t, policy_hash_key(policy_hash_text(h->text, len),
	    PATTERN_EXACT), PATTERN_EXACT, h->text, len);
	return e != NULL ? policy_entry_port(e, port) : NULL;
}

int
policy_exact_allowed(const struct policy *p, const struct host *h,
    uint16_t port)
{
	const struct pattern	*m = policy_exact(p, h, port);

	/* The loopback name: only with its port (policy_eval). */
	if (m != NULL && host_is_loopback_name(h))
		return m->port == port;
	return m != NULL;
}

int
host_is_loopback_name(const struct host *h)
{
	return h->kind == HOST_NAME && strcmp(h->text, HOST_LOOPBACK_NAME) == 0;
}

int
host_is_loopback(const struct host *h)
{
	static const char	 suffix[] = ".localhost";
	size_t			 len, slen = sizeof(suffix) - 1;

	switch (h->kind) {
	case HOST_IPV4:
		return (ntohl(h->v4.s_addr) >> 24) == 127;
	case HOST_IPV6:
		return IN6_IS_ADDR_LOOPBACK(&h->v6);
	case HOST_NAME:
		len = strlen(h->text);
		return strcmp(h->text, "localhost") == 0 || (len > slen &&
		    strcmp(h->text + len - slen, suffix) == 0);
	}
	return 0;
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
