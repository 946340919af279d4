/*
 * libFuzzer target for request_path_canon and config_request_rule: the
 * first byte picks a method, the rest is a request target.  A path that
 * canonicalises is one spelling of one path (starts with "/", no "//",
 * no dot segment, no encoded "/", a fixed point), and no target --
 * canonical or not -- crashes the rule matcher of a fixed set of request
 * rules or gets a verdict without the rule and entry it names.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/policy.h"

#define REQPATH_OUT	(8192 + 64)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const struct config *reqpath_config(void);
static int	 reqpath_dot_segment(const char *);
static void	 reqpath_rule(const struct config *, const char *,
		    const char *);

static const char reqpath_json[] =
    "{\"network\": {\"allowedDomains\": [\"github.com\", "
    "\"registry.npmjs.org\", \"*.example.test\"],"
    " \"tlsTerminate\": {},"
    " \"requestRules\": ["
    "  {\"host\": \"github.com\", \"deny\": [\"POST /**/git-receive-pack\","
    "   \"POST /**/info/lfs/locks/**\", \"* /*/secret;*\"]},"
    "  {\"host\": \"github.com\", \"allow\": [\"GET /**\", \"POST /**/"
    "git-upload-pack\", \"GET /a/*/b/**/c\"], \"unmatched\": \"deny\"},"
    "  {\"host\": \"registry.npmjs.org\", \"deny\": [\"PUT /**\","
    "   \"DELETE /-/user/**\", \"* /-/npm/v1/tokens\"]},"
    "  {\"host\": \"*.example.test\", \"allow\": [\"GET /x/**/y/*/z\","
    "   \"* /%C3%A9/**\"], \"unmatched\": \"deny\"}"
    " ]}}";

static const char *reqpath_methods[] = {
	"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "post", "OPTIONS"
};

static const char *reqpath_hosts[] = {
	"github.com", "registry.npmjs.org", "a.example.test", "other.test"
};

/* The fixed config, loaded once: a config error is the target's bug. */
static const struct config *
reqpath_config(void)
{
	static struct config *conf;
	struct config_errors errs = { NULL, 0 };

	if (conf == NULL) {
		conf = config_load_buffer(reqpath_json, sizeof(reqpath_json) -
		    1, "fuzz_reqpath", &errs);
		if (conf == NULL)
			abort();
	}
	return conf;
}

/* Whether some segment of canonical path p is "." or "..". */
static int
reqpath_dot_segment(const char *p)
{
	const char *s = p;
	size_t n;

	while (*s == '/') {
		s++;
		n = strcspn(s, "/");
		if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' &&
		    s[1] == '.'))
			return 1;
		s += n;
	}
	return 0;
}

/* The rules' verdict on method and path at every host: never crashes. */
static void
reqpath_rule(const struct config *conf, const char *method, const char *path)
{
	const struct req_rule *r1;
	const struct req_host *e1;
	enum req_verdict v1;
	struct host h;
	const char *err;
	size_t i;

	for (i = 0; i < sizeof(reqpath_hosts) / sizeof(reqpath_hosts[0]);
	    i++) {
		if (host_canon(reqpath_hosts[i], strlen(reqpath_hosts[i]), &h,
		    &err) != 0)
			abort();
		v1 = config_request_rule(conf, &h, 443, method, path, &r1, &e1);
		if (v1 == REQ_NO_RULES && (e1 != NULL || r1 != NULL))
			abort();
		if (v1 == REQ_ALLOW && (r1 == NULL || e1 == NULL))
			abort();
		if ((v1 == REQ_DENY || v1 == REQ_UNMATCHED) && e1 == NULL)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct config *conf = reqpath_config();
	const char *method, *err, *err2;
	static char out[REQPATH_OUT], out2[REQPATH_OUT];
	char *raw;
	size_t len;

	if (size == 0)
		return 0;
	method = reqpath_methods[data[0] %
	    (sizeof(reqpath_methods) / sizeof(reqpath_methods[0]))];
	data++;
	size--;

	if (request_path_canon((const char *)data, size, out, sizeof(out),
	    &err) == 0) {
		len = strlen(out);
		if (err != NULL || len == 0 || out[0] != '/')
			abort();
		if (strstr(out, "//") != NULL || reqpath_dot_segment(out) ||
		    strcasestr(out, "%2f") != NULL ||
		    strcasestr(out, "%5c") != NULL ||
		    strcasestr(out, "%2e") != NULL ||
		    strchr(out, '?') != NULL || strchr(out, '\\') != NULL)
			abort();
		/* A fixed point: the canonical form canonicalises to itself. */
		if (request_path_canon(out, len, out2, sizeof(out2),
		    &err2) != 0 || strcmp(out, out2) != 0)
			abort();
		reqpath_rule(conf, method, out);
	} else {
		if (err == NULL || out[0] != '\0')
			abort();
	}

	/* The matcher on whatever the bytes are, up to a NUL. */
	if ((raw = malloc(size + 1)) == NULL)
		return 0;
	memcpy(raw, data, size);
	raw[size] = '\0';
	reqpath_rule(conf, method, raw);
	free(raw);
	return 0;
}
