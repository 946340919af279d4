/*
 * Egress budgets (network.budget): per client of the proxy and per
 * canonical host, the bytes sent up and the connections allowed.  An
 * allowed host is an open door; what a command may carry out through it
 * is bounded here.  A connection past a budget is asked about (or
 * refused) in authorise.c; the bytes are counted as they flow, in
 * relay.c and http.c, and a connection that crosses the bytes budget is
 * closed at the crossing byte.
 *
 * The accounts outlive the connections (a client slot goes with its last
 * connection; a budget must not), and are bounded: at most
 * BUDGET_CLIENTS_MAX clients and BUDGET_HOSTS_MAX hosts per client are
 * kept apart (and the hosts network.budget.hosts lists, always); past
 * that, new clients share one account table and a client's new hosts
 * share one account ("other hosts").  Sharing only spends a budget
 * faster: it never widens one.  Everything is freed with
 * the proxy.
 */

#include <sys/queue.h>
#include <sys/socket.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "proxy/proxy_int.h"

#define BUDGET_CLIENT_BUCKETS	64
#define BUDGET_HOST_BUCKETS	256

/* What one client sent to one host (or to its "other hosts"). */
struct budget_acct {
	LIST_ENTRY(budget_acct)	 entry;
	char			*host;		/* NULL: the other hosts */
	uint64_t		 bytes_up;
	uint64_t		 conns;
	unsigned int		 raised;	/* approvals: one budget each */
	int			 lifted;	/* approved for the run */
};

/* One client's accounts. */
struct budget_client {
	LIST_ENTRY(budget_client) entry;
	int			 family;
	uint8_t			 key[16];
	LIST_HEAD(, budget_acct) hosts[BUDGET_HOST_BUCKETS];
	size_t			 nhosts;
	struct budget_acct	 other;
};

struct budget {
	LIST_HEAD(, budget_client) clients[BUDGET_CLIENT_BUCKETS];
	size_t			 nclients;
	struct budget_client	*other;		/* past BUDGET_CLIENTS_MAX */
};

static uint32_t	 budget_hash(const void *, size_t, uint32_t);
static struct budget_client *budget_client_get(struct budget *,
		    const struct client_slot *);
static struct budget_client *budget_client_new(int, const uint8_t *);
static void	 budget_client_free(struct budget_client *);
static void	 budget_client_reset(struct budget_client *);
static uint64_t	 budget_times(uint64_t, const struct budget_acct *);
static int	 budget_listed(const struct config *, const char *);

/* FNV-1a over n bytes, from h. */
static uint32_t
budget_hash(const void *p, size_t n, uint32_t h)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* A client's empty accounts, keyed like its client slot. */
static struct budget_client *
budget_client_new(int family, const uint8_t *key)
{
	struct budget_client *bc;
	size_t i;

	if ((bc = calloc(1, sizeof(*bc))) == NULL)
		return NULL;
	bc->family = family;
	memcpy(bc->key, key, sizeof(bc->key));
	for (i = 0; i < BUDGET_HOST_BUCKETS; i++)
		LIST_INIT(&bc->hosts[i]);
	return bc;
}

/* Free a client's accounts and their host names. */
static void
budget_client_free(struct budget_client *bc)
{
	struct budget_acct *a;
	size_t i;

	if (bc == NULL)
		return;
	for (i = 0; i < BUDGET_HOST_BUCKETS; i++)
		while ((a = LIST_FIRST(&bc->hosts[i])) != NULL) {
			LIST_REMOVE(a, entry);
			free(a->host);
			free(a);
		}
	free(bc);
}

/* The client's accounts, made when new; the shared ones past the bound. */
static struct budget_client *
budget_client_get(struct budget *b, const struct client_slot *slot)
{
	static const uint8_t none[16];
	struct budget_client *bc;
	uint32_t h;

	h = budget_hash(&slot->family, sizeof(slot->family), 2166136261u);
	h = budget_hash(slot->key, sizeof(slot->key), h) %
	    BUDGET_CLIENT_BUCKETS;
	LIST_FOREACH(bc, &b->clients[h], entry)
		if (bc->family == slot->family &&
		    memcmp(bc->key, slot->key, sizeof(bc->key)) == 0)
			return bc;
	if (b->nclients >= BUDGET_CLIENTS_MAX) {
		if (b->other == NULL)
			b->other = budget_client_new(AF_UNSPEC, none);
		return b->other;
	}
	if ((bc = budget_client_new(slot->family, slot->key)) == NULL)
		return NULL;
	LIST_INSERT_HEAD(&b->clients[h], bc, entry);
	b->nclients++;
	return bc;
}

/* Whether network.budget.hosts names host. */
static int
budget_listed(const struct config *conf, const char *host)
{
	size_t i;

	for (i = 0; i < conf->nbudget_hosts; i++)
		if (strcmp(conf->budget_hosts[i].host, host) == 0)
			return 1;
	return 0;
}

struct budget_acct *
budget_acct_get(struct proxy *px, const struct config *conf,
    const struct client_slot *slot, const char *host)
{
	struct budget_client *bc;
	struct budget_acct *a;
	uint32_t h;

	if (slot == NULL)
		return NULL;
	if (px->budget == NULL) {
		if ((px->budget = calloc(1, sizeof(*px->budget))) == NULL)
			return NULL;
	}
	if ((bc = budget_client_get(px->budget, slot)) == NULL)
		return NULL;
	h = budget_hash(host, strlen(host), 2166136261u) % BUDGET_HOST_BUCKETS;
	LIST_FOREACH(a, &bc->hosts[h], entry)
		if (strcmp(a->host, host) == 0)
			return a;
	/*
	 * Past the bound a host shares "other hosts" under the defaults --
	 * unless network.budget.hosts gives it a budget of its own, which
	 * the defaults could widen: those (at most BUDGET_HOSTS_LISTED)
	 * are always counted apart.
	 */
	if (bc->nhosts >= BUDGET_HOSTS_MAX && !budget_listed(conf, host))
		return &bc->other;
	if ((a = calloc(1, sizeof(*a))) == NULL ||
	    (a->host = strdup(host)) == NULL) {
		free(a);
		return NULL;
	}
	LIST_INSERT_HEAD(&bc->hosts[h], a, entry);
	bc->nhosts++;
	return a;
}

void
budget_free(struct proxy *px)
{
	struct budget *b = px->budget;
	struct budget_client *bc;
	size_t i;

	if (b == NULL)
		return;
	for (i = 0; i < BUDGET_CLIENT_BUCKETS; i++)
		while ((bc = LIST_FIRST(&b->clients[i])) != NULL) {
			LIST_REMOVE(bc, entry);
			budget_client_free(bc);
		}
	budget_client_free(b->other);
	free(b);
	px->budget = NULL;
}

int
budget_enabled(const struct config *conf)
{
	return conf->budget_bytes_up > 0 || conf->budget_connections > 0 ||
	    conf->nbudget_hosts > 0;
}

/* A budget and the approvals that raised it, saturating. */
static uint64_t
budget_times(uint64_t limit, const struct budget_acct *a)
{
	uint64_t n = (uint64_t)a->raised + 1;

	return limit > UINT64_MAX / n ? UINT64_MAX : limit * n;
}

const char *
budget_over(const struct config *conf, const struct budget_acct *a,
    uint64_t *limit, uint64_t *used)
{
	uint64_t l, bytes;
	int conns;

	if (a == NULL || a->lifted)
		return NULL;
	config_budget(conf, a->host, &bytes, &conns);
	if (conns > 0) {
		l = budget_times((uint64_t)conns, a);
		if (a->conns >= l) {
			*limit = l;
			*used = a->conns;
			return "connectionsPerHost";
		}
	}
	if (bytes > 0) {
		l = budget_times(bytes, a);
		if (a->bytes_up >= l) {
			*limit = l;
			*used = a->bytes_up;
			return "bytesUpPerHost";
		}
	}
	return NULL;
}

const char *
budget_reason(const char *key)
{
	return strcmp(key, "connectionsPerHost") == 0 ?
	    "budget-connections" : "budget-bytes-up";
}

void
budget_raise(struct budget_acct *a, int run)
{
	if (a == NULL)
		return;
	if (run)
		a->lifted = 1;
	else if (a->raised < UINT32_MAX)
		a->raised++;
}

void
budget_reload(struct proxy *px)
{
	struct budget *b = px->budget;
	struct budget_client *bc;
	size_t i;

	if (b == NULL)
		return;
	for (i = 0; i < BUDGET_CLIENT_BUCKETS; i++)
		LIST_FOREACH(bc, &b->clients[i], entry)
			budget_client_reset(bc);
	if (b->other != NULL)
		budget_client_reset(b->other);
}

/* Every approval of the client's accounts ends. */
static void
budget_client_reset(struct budget_client *bc)
{
	struct budget_acct *a;
	size_t i;

	for (i = 0; i < BUDGET_HOST_BUCKETS; i++)
		LIST_FOREACH(a, &bc->hosts[i], entry)
			a->raised = a->lifted = 0;
	bc->other.raised = bc->other.lifted = 0;
}

void
budget_take(struct conn *c, struct budget_acct *a)
{
	c->budget = a;
	if (a != NULL)
		a->conns++;
}

uint64_t
budget_left(const struct conn *c)
{
	const struct config *conf = conn_config(c);
	const struct budget_acct *a = c->budget;
	uint64_t l, bytes;
	int conns;

	if (a == NULL || a->lifted)
		return UINT64_MAX;
	config_budget(conf, a->host, &bytes, &conns);
	if (bytes == 0)
		return UINT64_MAX;
	l = budget_times(bytes, a);
	return a->bytes_up >= l ? 0 : l - a->bytes_up;
}

void
budget_spend(struct conn *c, uint64_t n)
{
	if (c->budget != NULL)
		c->budget->bytes_up += n;
}

/*
 * The connection's next byte up would cross its host's bytes budget:
 * close it, with a decision-like refusal for whoever counts them
 * (pisbx-run's summary) and the close record's end "budget-bytes-up".
 */
void
budget_cross(struct conn *c)
{
	const struct config *conf = conn_config(c);
	struct proxy_refusal r;
	char hint[1400], key[96];
	uint64_t limit = 0, bytes;
	int conns;

	if (c->budget != NULL) {
		config_budget(conf, c->budget->host, &bytes, &conns);
		limit = budget_times(bytes, c->budget);
	}

	/* Spent: the client wanted more, so the next connection is asked. */
	if (c->budget != NULL && c->budget->bytes_up < limit)
		c->budget->bytes_up = limit;
	config_budget_key(conf, c->host.text, 1, key, sizeof(key));
	conn_error(c, "%s (%llu bytes) used up for %s by this client: %llu "
	    "bytes, and it sent more", key, (unsigned long long)limit,
	    c->host.text, (unsigned long long)limit);
	log_info("conn %llu: %s:%u crossed its bytes budget (%llu)",
	    (unsigned long long)c->id, c->host.text, c->port,
	    (unsigned long long)limit);
	metrics_budget(c->px);
	if (c->px->refused != NULL && c->have_target) {
		memset(&r, 0, sizeof(r));
		policy_hint(conf, &c->host, c->port, "budget-bytes-up", hint,
		    sizeof(hint));
		r.host = c->host.text;
		r.port = c->port;
		r.proto = conn_proto_name(c->proto);
		r.reason = "budget-bytes-up";
		r.detail = c->error;
		r.hint = hint;
		c->px->refused(&r, c->px->refused_arg);
	}
	conn_close(c, "budget-bytes-up");
}
