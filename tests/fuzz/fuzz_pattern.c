/*
 * libFuzzer target for pattern_parse: a parsed pattern's canonical text
 * parses back to itself, "*" appears only in the deny list, and a policy
 * holding the pattern matches what the pattern says it matches (the host
 * itself for an exact entry, host.pisbx.internal only with its port; a
 * subdomain but never the apex for a wildcard).
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void	 check_pattern(const struct pattern *, int);

/* Round trip and matching invariants of one parsed pattern. */
static void
check_pattern(const struct pattern *p, int deny)
{
	struct pattern		 again;
	struct policy		*pol;
	const struct pattern	*m;
	struct host		 h;
	const char		*err;
	char			 sub[HOST_TEXT_MAX + 8];
	uint16_t		 port = p->port ? p->port : 443;

	if (strlen(p->text) >= sizeof(p->text) - 1)
		abort();
	if (pattern_parse(p->text, strlen(p->text), deny, &again, &err) != 0 ||
	    strcmp(again.text, p->text) != 0 || again.kind != p->kind ||
	    again.port != p->port)
		abort();
	if (p->kind == PATTERN_ANY && !deny)
		abort();
	if ((pol = policy_new()) == NULL)
		abort();
	if (policy_add(pol, deny ? POLICY_DENY : POLICY_ALLOW, p) != 0 ||
	    policy_add(pol, deny ? POLICY_DENY : POLICY_ALLOW, &again) != 1)
		abort();
	switch (p->kind) {
	case PATTERN_EXACT:
		/* The loopback name: only its exact entry with the port. */
		if (!deny && host_is_loopback_name(&p->host)) {
			if (policy_eval(pol, &p->host, port, &m) !=
			    (p->port != 0 ? VERDICT_ALLOW : VERDICT_DENY) ||
			    (p->port == 0 && m != NULL) ||
			    policy_exact_allowed(pol, &p->host, port) !=
			    (p->port != 0))
				abort();
			break;
		}
		if (policy_eval(pol, &p->host, port, &m) !=
		    (deny ? VERDICT_DENY : VERDICT_ALLOW) ||
		    strcmp(m->text, p->text) != 0)
			abort();
		if (!deny && !policy_exact_allowed(pol, &p->host, port))
			abort();
		if (p->port != 0 && p->port != 1 && policy_eval(pol,
		    &p->host, (uint16_t)(p->port ^ 1), &m) !=
		    (host_is_loopback_name(&p->host) ? VERDICT_DENY :
		    VERDICT_REVIEW))
			abort();
		break;
	case PATTERN_WILDCARD:
		/* Never the apex; the loopback name is never reviewed. */
		if (policy_eval(pol, &p->host, port, &m) !=
		    (host_is_loopback_name(&p->host) ? VERDICT_DENY :
		    VERDICT_REVIEW))
			abort();
		snprintf(sub, sizeof(sub), "x.%s", p->host.text);
		if (strlen(sub) <= HOST_NAME_MAXLEN) {
			if (host_canon(sub, strlen(sub), &h, &err) != 0)
				abort();
			if (policy_eval(pol, &h, port, &m) !=
			    (deny ? VERDICT_DENY : VERDICT_ALLOW) ||
			    strcmp(m->text, p->text) != 0)
				abort();
			/* A port-restricted entry matches only its port. */
			if (p->port != 0 && policy_eval(pol, &h,
			    (uint16_t)(p->port ^ 1), &m) != VERDICT_REVIEW)
				abort();
			if (policy_exact_allowed(pol, &h, port))
				abort();
		}
		break;
	case PATTERN_ANY:
		if (host_canon("example.com", 11, &h, &err) != 0 ||
		    policy_eval(pol, &h, port, &m) != VERDICT_DENY)
			abort();
		break;
	}
	policy_free(pol);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pattern	 p, pd;
	const char	*err;
	int		 rc, rcd;

	rc = pattern_parse((const char *)data, size, 0, &p, &err);
	if (rc == 0)
		check_pattern(&p, 0);
	else if (rc != -1 || err == NULL)
		abort();
	rcd = pattern_parse((const char *)data, size, 1, &pd, &err);
	if (rcd == 0)
		check_pattern(&pd, 1);
	else if (rcd != -1 || err == NULL)
		abort();
	/* The deny list accepts everything the allow list does, alike. */
	if (rc == 0 && (rcd != 0 || strcmp(p.text, pd.text) != 0))
		abort();
	return 0;
}
