/*
 * policy_eval throughput: a policy of 10,000 patterns (exact names,
 * wildcards, IP literals, some port-restricted, a few deny entries) and
 * millions of lookups of canonical hosts that hit exact entries, hit
 * wildcards at various depths, or miss entirely.  Prints one line
 *   policy_eval: 10000 patterns, N ns/lookup
 * plus a breakdown.  Host canonicalisation is timed separately because the
 * proxy does it once per connection too.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy/policy.h"

#define NPATTERNS	10000
#define NHOSTS		4096	/* power of two */
#define ROUNDS		500	/* lookups = NHOSTS * ROUNDS per kind */
#define NHOT		64	/* hosts in the cache-warm run */
#define REPEAT		3

static double	 bench_now(void);
static void	 bench_add(struct policy *, enum policy_list, const char *);
static void	 bench_host(struct host *, const char *);
static double	 bench_run(const struct policy *, const struct host *,
		    size_t, const uint16_t *, unsigned *);

static double
bench_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void
bench_add(struct policy *pol, enum policy_list list, const char *s)
{
	struct pattern	 p;
	const char	*err;

	if (pattern_parse(s, strlen(s), list == POLICY_DENY, &p, &err) != 0) {
		fprintf(stderr, "bench_policy: %s: %s\n", s, err);
		exit(1);
	}
	if (policy_add(pol, list, &p) == -1) {
		fprintf(stderr, "bench_policy: out of memory\n");
		exit(1);
	}
}

static void
bench_host(struct host *h, const char *s)
{
	const char	*err;

	if (host_canon(s, strlen(s), h, &err) != 0) {
		fprintf(stderr, "bench_policy: %s: %s\n", s, err);
		exit(1);
	}
}

/*
 * ns per lookup over ROUNDS passes of the first nhosts hosts (the best of
 * REPEAT runs: the machine is shared, so the minimum is the figure least
 * disturbed by others); counts the verdicts of the last run.
 */
static double
bench_run(const struct policy *pol, const struct host *hosts, size_t nhosts,
    const uint16_t *ports, unsigned *count)
{
	const struct pattern	*m;
	double			 t0, t1, best = 0;
	size_t			 r, i, rep, rounds = ROUNDS * NHOSTS / nhosts;

	for (rep = 0; rep < REPEAT; rep++) {
		count[0] = count[1] = count[2] = 0;
		t0 = bench_now();
		for (r = 0; r < rounds; r++)
			for (i = 0; i < nhosts; i++)
				count[policy_eval(pol, &hosts[i], ports[i],
				    &m)]++;
		t1 = bench_now();
		if (rep == 0 || t1 - t0 < best)
			best = t1 - t0;
	}
	return best / ((double)rounds * nhosts);
}

int
main(void)
{
	static struct host	 hit_exact[NHOSTS], hit_wild[NHOSTS],
				 miss[NHOSTS], mixed[NHOSTS];
	static uint16_t		 ports[NHOSTS];
	static const char	*tlds[] = { "com", "org", "net", "io", "dev" };
	struct policy		*pol;
	char			 buf[128];
	unsigned		 count[3];
	static char		 names[1024][64];
	double			 ns_exact, ns_wild, ns_miss, ns_mixed, ns_hot;
	double			 t0, t1;
	size_t			 i, n = 0;
	const char		*err;
	struct host		 h;

	if ((pol = policy_new()) == NULL)
		return 1;
	/* 6,000 exact names (a third port-restricted), 3,000 wildcards,
	 * 950 IP literals, 50 deny entries. */
	for (i = 0; i < 6000; i++, n++) {
		if (i % 3 == 0)
			snprintf(buf, sizeof(buf), "api%zu.service%zu.%s:443",
			    i, i % 97, tlds[i % 5]);
		else
			snprintf(buf, sizeof(buf), "api%zu.service%zu.%s", i,
			    i % 97, tlds[i % 5]);
		bench_add(pol, POLICY_ALLOW, buf);
	}
	for (i = 0; i < 3000; i++, n++) {
		if (i % 4 == 0)
			snprintf(buf, sizeof(buf), "*.cdn%zu.example.%s:443", i,
			    tlds[i % 5]);
		else
			snprintf(buf, sizeof(buf), "*.cdn%zu.example.%s", i,
			    tlds[i % 5]);
		bench_add(pol, POLICY_ALLOW, buf);
	}
	for (i = 0; i < 950; i++, n++) {
		snprintf(buf, sizeof(buf), "203.%zu.%zu.7", i / 256, i % 256);
		bench_add(pol, POLICY_ALLOW, buf);
	}
	for (i = 0; i < 49; i++, n++) {
		snprintf(buf, sizeof(buf), "blocked%zu.cdn%zu.example.%s", i,
		    i, tlds[i % 5]);
		bench_add(pol, POLICY_DENY, buf);
	}
	bench_add(pol, POLICY_DENY, "*:22");
	n++;

	for (i = 0; i < NHOSTS; i++) {
		snprintf(buf, sizeof(buf), "api%zu.service%zu.%s",
		    (i * 7) % 6000, ((i * 7) % 6000) % 97, tlds[(i * 7) % 5]);
		bench_host(&hit_exact[i], buf);
		snprintf(buf, sizeof(buf), "a.b.node%zu.cdn%zu.example.%s",
		    i, i % 3000, tlds[i % 3000 % 5]);
		bench_host(&hit_wild[i], buf);
		snprintf(buf, sizeof(buf), "www.unlisted%zu.example.co.uk", i);
		bench_host(&miss[i], buf);
		switch (i % 4) {
		case 0: mixed[i] = hit_exact[i]; break;
		case 1: mixed[i] = hit_wild[i]; break;
		case 2: mixed[i] = miss[i]; break;
		case 3:
			snprintf(buf, sizeof(buf), "203.%zu.%zu.7", i % 4,
			    i % 256);
			bench_host(&mixed[i], buf);
			break;
		}
		ports[i] = 443;
	}

	ns_exact = bench_run(pol, hit_exact, NHOSTS, ports, count);
	if (count[VERDICT_ALLOW] != (unsigned)ROUNDS * NHOSTS) {
		fprintf(stderr, "bench_policy: exact hosts not all allowed\n");
		return 1;
	}
	ns_wild = bench_run(pol, hit_wild, NHOSTS, ports, count);
	if (count[VERDICT_ALLOW] != (unsigned)ROUNDS * NHOSTS) {
		fprintf(stderr, "bench_policy: wildcard hosts not all "
		    "allowed\n");
		return 1;
	}
	ns_miss = bench_run(pol, miss, NHOSTS, ports, count);
	if (count[VERDICT_REVIEW] != (unsigned)ROUNDS * NHOSTS) {
		fprintf(stderr, "bench_policy: misses not all reviewed\n");
		return 1;
	}
	ns_mixed = bench_run(pol, mixed, NHOSTS, ports, count);
	ns_hot = bench_run(pol, mixed, NHOT, ports, count);

	for (i = 0; i < 1024; i++)
		snprintf(names[i], sizeof(names[i]),
		    "API%zu.Service.Example.COM.", i);
	t0 = bench_now();
	for (i = 0; i < (size_t)ROUNDS * NHOSTS / 4; i++) {
		if (host_canon(names[i & 1023], strlen(names[i & 1023]), &h,
		    &err) != 0)
			return 1;
	}
	t1 = bench_now();

	printf("policy_eval: %zu patterns, %.1f ns/lookup\n",
	    policy_count(pol, POLICY_ALLOW) + policy_count(pol, POLICY_DENY),
	    ns_mixed);
	printf("policy_eval: %d distinct hosts: exact hit %.1f ns, wildcard "
	    "hit (depth 3) %.1f ns, miss %.1f ns; %d hosts (cache-warm) "
	    "%.1f ns\n", NHOSTS, ns_exact, ns_wild, ns_miss, NHOT, ns_hot);
	printf("host_canon: %.1f ns/name\n",
	    (t1 - t0) / ((double)ROUNDS * NHOSTS / 4));
	if (n != NPATTERNS)
		return 1;
	policy_free(pol);
	return 0;
}
