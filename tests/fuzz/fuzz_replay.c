/*
 * libFuzzer target for the access-log line parser of --replay: arbitrary
 * bytes as one line.  A parsed decision record holds a canonical host (it
 * canonicalises to itself), a port, a known reason; its re-decision
 * under a config with lists, request rules, and with and without a
 * reviewer is one of the classes with a non-empty outcome, and the tally
 * counts it.  A request record (its method and path) goes through the
 * rules of its host.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define FUZZ_NETWORK \
	"\"network\":{\"allowedDomains\":[\"github.com\",\"*.github.com\"," \
	"\"10.1.2.3\",\"host.pisbx.internal:5173\",\"[::1]:8080\"]," \
	"\"deniedDomains\":[\"uploads.github.com\",\"*:22\"]," \
	"\"tlsTerminate\":{},\"requestRules\":[{\"host\":\"github.com\"," \
	"\"deny\":[\"POST /**/git-receive-pack\",\"* /admin/*\"]," \
	"\"allow\":[\"GET /**\"],\"unmatched\":\"deny\"}," \
	"{\"host\":\"*.github.com\",\"deny\":[\"DELETE /**\"]}]}"

static struct config *
fuzz_conf(const char *text)
{
	struct config_errors	 errs = { NULL, 0 };
	struct config		*conf;

	if ((conf = config_load_buffer(text, strlen(text), "fuzz",
	    &errs)) == NULL)
		abort();
	return conf;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config	*conf[2];
	struct replay_record	 r;
	struct replay		*rp;
	struct host		 h;
	const struct replay_change **v;
	uint64_t		 counts[REPLAY_NCLASS], unlisted, total;
	const char		*err;
	char			 to[512];
	enum replay_class	 cls;
	size_t			 n, i, c;
	int			 rc;

	if (conf[0] == NULL) {
		conf[0] = fuzz_conf("{" FUZZ_NETWORK "}");
		conf[1] = fuzz_conf("{" FUZZ_NETWORK ",\"review\":{\"command\":"
		    "[\"/bin/false\"]}}");
	}
	rc = replay_parse((const char *)data, size, &r, &err);
	if (rc == -1) {
		if (err == NULL || *err == '\0')
			abort();
		return 0;
	}
	if (rc == 0)
		return 0;
	if (rc != 1)
		abort();
	if (r.has_host && (host_canon(r.host.text, strlen(r.host.text), &h,
	    &err) != 0 || strcmp(h.text, r.host.text) != 0 || r.port == 0))
		abort();
	for (i = 0; i < 2; i++) {
		if ((rp = replay_new(1)) == NULL)
			abort();
		to[0] = '\0';
		cls = replay_decide(conf[i], &r, to, sizeof(to));
		if ((unsigned)cls >= REPLAY_NCLASS || to[0] == '\0' ||
		    (strncmp(to, "allow ", 6) != 0 &&
		    strncmp(to, "deny ", 5) != 0 &&
		    strncmp(to, "review (", 8) != 0))
			abort();
		/* Only a config with a reviewer reviews. */
		if (i == 0 && strncmp(to, "review", 6) == 0)
			abort();
		if (replay_add(rp, &r, cls, to) == -1 ||
		    replay_add(rp, &r, cls, to) == -1)
			abort();
		if ((v = replay_changes(rp, &n, &unlisted, counts)) == NULL)
			abort();
		for (c = 0, total = 0; c < REPLAY_NCLASS; c++)
			total += counts[c];
		if (total != 2 || counts[cls] != 2 || unlisted != 0 ||
		    n != (cls == REPLAY_UNCHANGED ||
		    cls == REPLAY_NOT_POLICY ? 0 : 1) ||
		    (n == 1 && v[0]->count != 2))
			abort();
		free(v);
		replay_free(rp);
	}
	return 0;
}
