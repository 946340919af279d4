/*
 * credproxy: the proxy with a table of masked credentials, as pisbx-run
 * builds it, for the credential scenarios (tests/integration/
 * proxy-cred-*.sh) -- pisbx-proxy has no table of its own.
 *
 *   credproxy --config FILE --access-log PATH [--plaintext-inject]
 *	    --cred NAME=VALUE[@INJECTHOST]...
 *
 * Each --cred is one credentials.envVars[] entry, mode mask, whose
 * injectHosts is INJECTHOST (none: injected nowhere; an empty one,
 * "NAME=VALUE@": no injectHosts, so allowedDomains); --plaintext-inject
 * sets credentials.allowPlaintextInject.  Listens on 127.0.0.1:0 and
 * says "credproxy: listening on 127.0.0.1:PORT" on stderr; each
 * placeholder is printed "placeholder NAME PLACEHOLDER" on stdout, each
 * refusal told to proxy_opts.refused "refused HOST:PORT REASON NAME" on
 * stderr.  SIGTERM ends it.
 */
#include <err.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "policy/policy.h"
#include "proxy/cred.h"
#include "proxy/proxy.h"

#define CREDPROXY_MAX	16

static void	 refused_cb(const struct proxy_refusal *, void *);
static void	 term_cb(evutil_socket_t, short, void *);

static void
refused_cb(const struct proxy_refusal *r, void *arg)
{
	(void)arg;
	fprintf(stderr, "refused %s:%u %s %s\n", r->host, r->port, r->reason,
	    r->credential != NULL ? r->credential : "-");
	fflush(stderr);
}

static void
term_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

int
main(int argc, char *argv[])
{
	struct config_errors	 errs = { NULL, 0 };
	struct proxy_opts	 opts;
	struct config		*conf;
	struct cred_table	*t;
	struct cred_entry	*v;
	struct event_base	*base;
	struct event		*ev;
	struct proxy		*px;
	const char		*path = NULL, *log = NULL, *creds[CREDPROXY_MAX];
	const char		*ph, *errstr;
	char			 bound[128], name[128], *arg, *eq, *at;
	size_t			 ncreds = 0, i;
	int			 plain = 0, ai;

	for (ai = 1; ai < argc; ai++) {
		if (strcmp(argv[ai], "--config") == 0 && ai + 1 < argc)
			path = argv[++ai];
		else if (strcmp(argv[ai], "--access-log") == 0 && ai + 1 < argc)
			log = argv[++ai];
		else if (strcmp(argv[ai], "--plaintext-inject") == 0)
			plain = 1;
		else if (strcmp(argv[ai], "--cred") == 0 && ai + 1 < argc &&
		    ncreds < CREDPROXY_MAX)
			creds[ncreds++] = argv[++ai];
		else
			errx(2, "usage: credproxy --config FILE --access-log "
			    "PATH [--plaintext-inject] --cred NAME=VALUE"
			    "[@HOST]...");
	}
	if (path == NULL || log == NULL || ncreds == 0)
		errx(2, "--config, --access-log and a --cred are needed");
	if ((conf = config_load(path, &errs)) == NULL) {
		for (i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msg[i]);
		errx(1, "%s: cannot load", path);
	}
	if ((t = cred_table_new()) == NULL ||
	    (v = calloc(ncreds, sizeof(*v))) == NULL)
		err(1, NULL);
	for (i = 0; i < ncreds; i++) {
		if ((arg = strdup(creds[i])) == NULL)
			err(1, NULL);
		if ((eq = strchr(arg, '=')) == NULL)
			errx(2, "--cred %s: expected NAME=VALUE[@HOST]", arg);
		*eq++ = '\0';
		if ((at = strrchr(eq, '@')) != NULL)
			*at++ = '\0';
		v[i].kind = CRED_ENV;
		v[i].mode = CRED_MASK;
		v[i].name = arg;
		v[i].source = strdup("credproxy: --cred");
		v[i].inject_set = at == NULL || *at != '\0';
		if (at != NULL && *at != '\0') {
			if ((v[i].inject = calloc(1, sizeof(*v[i].inject))) ==
			    NULL)
				err(1, NULL);
			if (pattern_parse(at, strlen(at), 0, v[i].inject,
			    &errstr) == -1)
				errx(2, "--cred %s: %s: %s", arg, at, errstr);
			v[i].ninject = 1;
		}
		snprintf(name, sizeof(name), "$%s", arg);
		if (cred_table_add(t, name, i, eq, strlen(eq), &ph) == -1)
			errx(1, "--cred %s: cannot add", arg);
		printf("placeholder %s %s\n", arg, ph);
	}
	fflush(stdout);
	conf->creds.v = v;
	conf->creds.n = ncreds;
	conf->creds.allow_plaintext_inject = plain;

	signal(SIGPIPE, SIG_IGN);
	memset(&opts, 0, sizeof(opts));
	opts.access_log = log;
	opts.log_format = LOG_FORMAT_JSON;
	opts.refused = refused_cb;
	opts.creds = t;
	if ((base = proxy_base_new()) == NULL ||
	    (px = proxy_new(base, conf, &opts)) == NULL)
		errx(1, "cannot start the proxy");
	if (proxy_listen(px, "127.0.0.1:0", bound, sizeof(bound)) == -1)
		errx(1, "cannot listen");
	fprintf(stderr, "credproxy: listening on %s\n", bound);
	fflush(stderr);
	if ((ev = evsignal_new(base, SIGTERM, term_cb, base)) == NULL ||
	    evsignal_add(ev, NULL) == -1)
		errx(1, "cannot catch SIGTERM");
	event_base_dispatch(base);
	/* The table is wiped; the rest goes with the process. */
	cred_table_free(t);
	_exit(0);
}
