/*
 * pisbx-proxy: the filtering proxy on its own, for any client that
 * honours proxy settings.  Exit codes follow sysexits(3): 64 usage, 78
 * configuration, 71 when a listener cannot be bound.
 */
#include <sys/types.h>

#include <err.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "policy/policy.h"
#include "proxy/proxy.h"

#define EX_USAGE_	64
#define EX_OSERR_	71
#define EX_CONFIG_	78

struct main_state {
	struct event_base	*base;
	struct proxy		*px;
	char			*config_path;	/* NULL: embedded default */
};

static void	 usage(FILE *);
static struct config *load_config(const char *, int);
static void	 sighup_cb(evutil_socket_t, short, void *);
static void	 sigterm_cb(evutil_socket_t, short, void *);
static void	 check_entry_cb(enum policy_list, const struct pattern *,
		    void *);

static void
usage(FILE *f)
{
	fprintf(f,
"usage: pisbx-proxy [--config FILE] [--listen ADDR]... [--access-log PATH|-]\n"
"                   [--log-format json|text] [--label NAME] [-v]...\n"
"       pisbx-proxy [--config FILE] -n | --check\n"
"       pisbx-proxy [--config FILE] --explain HOST[:PORT]\n"
"                   [--explain HOST[:PORT]]...\n"
"       pisbx-proxy [--config NEW] --replay ACCESS-LOG|-\n"
"       pisbx-proxy -h | --help | -V | --version\n"
"\n"
"A filtering proxy (HTTP CONNECT, HTTP forwarding, SOCKS5) that decides\n"
"each connection on its canonical host:port: deny list, then allow list,\n"
"then the review hook; no reviewer means deny.\n"
"\n"
"  -c, --config FILE        the trusted config; without it $PISBX_CONFIG,\n"
"                           else $XDG_CONFIG_HOME/pisbx/config.json\n"
"                           (~/.config/pisbx/config.json when\n"
"                           XDG_CONFIG_HOME is unset), else srt's\n"
"                           ~/.srt-settings.json, else the embedded\n"
"                           default, which allows nothing\n"
"  -n, --check              validate the config, print \"configuration OK\"\n"
"                           (with -v, every list entry and where it is\n"
"                           written)\n"
"  -e, --explain HOST[:PORT]\n"
"                           print the policy's decision for a target as JSON;\n"
"                           one target each, repeatable for more\n"
"      --replay LOG         re-decide every decision of a JSON access log\n"
"                           (- is stdin) under the config and print what\n"
"                           would change; exit 0 none, 1 changes, 2 when\n"
"                           the log cannot be read whole\n"
"  -l, --listen ADDR        127.0.0.1:3128, [::1]:0 (port 0 picks one) or a\n"
"                           Unix-socket path; repeatable; overrides\n"
"                           proxy.listen\n"
"  -a, --access-log PATH    JSON lines, one per decision and close; - is stdout\n"
"  -f, --log-format FMT     json (default) or text\n"
"  -L, --label NAME         client label in the log, workerId in reviews\n"
"  -v, --verbose            more diagnostics on stderr (repeatable)\n"
"  -h, --help               this text\n"
"  -V, --version            print the version\n"
"\n"
"Signals: SIGHUP reopens the access log and reloads the config (a bad\n"
"config keeps the old one); SIGTERM and SIGINT close every connection\n"
"and exit 0.\n");
}

/* Load a config, printing every error; NULL on failure. */
static struct config *
load_config(const char *path, int quiet)
{
	struct config_errors errs;
	struct config *conf;
	size_t i;

	memset(&errs, 0, sizeof(errs));
	conf = config_load(path, &errs);
	if (conf == NULL && !quiet) {
		for (i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msg[i]);
		if (errs.n == 0)
			fprintf(stderr, "%s: cannot load the configuration\n",
			    path != NULL ? path : "(embedded default)");
	} else if (conf == NULL) {
		for (i = 0; i < errs.n; i++)
			log_warnx("reload: %s", errs.msg[i]);
	}
	config_errors_clear(&errs);
	return conf;
}

static void
sighup_cb(evutil_socket_t sig, short what, void *arg)
{
	struct main_state *ms = arg;
	struct config *conf;

	(void)sig;
	(void)what;
	if (proxy_reopen_log(ms->px) == -1)
		log_warnx("SIGHUP: cannot reopen the access log; keeping the "
		    "old file");
	if ((conf = load_config(ms->config_path, 1)) == NULL) {
		log_warnx("SIGHUP: %s is not valid; keeping the old "
		    "configuration", ms->config_path != NULL ?
		    ms->config_path : "(embedded default)");
		return;
	}
	(void)proxy_reload(ms->px, conf);
}

/* --check -v: one effective list entry and where it was written. */
static void
check_entry_cb(enum policy_list list, const struct pattern *pat, void *arg)
{
	(void)arg;
	printf("%s %s from %s\n", list == POLICY_DENY ? "deny" : "allow",
	    pat->text, pat->source != NULL ? pat->source : "(unknown)");
}

static void
sigterm_cb(evutil_socket_t sig, short what, void *arg)
{
	struct main_state *ms = arg;

	(void)what;
	log_info("signal %d: closing", (int)sig);
	proxy_stop(ms->px);
	event_base_loopexit(ms->base, NULL);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "config",	required_argument,	NULL, 'c' },
		{ "check",	no_argument,		NULL, 'n' },
		{ "explain",	required_argument,	NULL, 'e' },
		{ "listen",	required_argument,	NULL, 'l' },
		{ "access-log",	required_argument,	NULL, 'a' },
		{ "log-format",	required_argument,	NULL, 'f' },
		{ "label",	required_argument,	NULL, 'L' },
		{ "verbose",	no_argument,		NULL, 'v' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ "replay",	required_argument,	NULL, 'R' },
		{ NULL,		0,			NULL, 0 }
	};
	struct main_state ms;
	struct proxy_opts opts;
	struct config *conf;
	struct event *ev_hup, *ev_term, *ev_int;
	const char *cli_config = NULL, *replay = NULL;
	char **explain = NULL, **listen = NULL, bound[512], cwd[4096];
	char *conf_log = NULL;
	size_t nexplain = 0, nlisten = 0, i;
	int ch, check = 0, verbose = 0, rc = 0, fmt_set = 0;

	memset(&ms, 0, sizeof(ms));
	memset(&opts, 0, sizeof(opts));
	opts.log_format = LOG_FORMAT_JSON;
	opts.reload_said = 1;
	if ((explain = calloc(argc, sizeof(*explain))) == NULL ||
	    (listen = calloc(argc, sizeof(*listen))) == NULL)
		err(1, NULL);
	while ((ch = getopt_long(argc, argv, "c:ne:l:a:f:L:vhV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'c':
			cli_config = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 'e':
			explain[nexplain++] = optarg;
			break;
		case 'l':
			listen[nlisten++] = optarg;
			break;
		case 'a':
			opts.access_log = optarg;
			break;
		case 'f':
			fmt_set = 1;
			if (strcmp(optarg, "json") == 0)
				opts.log_format = LOG_FORMAT_JSON;
			else if (strcmp(optarg, "text") == 0)
				opts.log_format = LOG_FORMAT_TEXT;
			else {
				fprintf(stderr, "pisbx-proxy: --log-format "
				    "takes json or text, not \"%s\"\n", optarg);
				rc = EX_USAGE_;
				goto out;
			}
			break;
		case 'L':
			opts.label = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			goto out;
		case 'V':
			printf("pisbx-proxy %s\n", PISBX_VERSION);
			goto out;
		case 'R':	/* --replay: long option only */
			replay = optarg;
			break;
		default:
			usage(stderr);
			rc = EX_USAGE_;
			goto out;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "pisbx-proxy: unexpected argument \"%s\"\n",
		    argv[optind]);
		usage(stderr);
		rc = EX_USAGE_;
		goto out;
	}
	if (replay != NULL && (check || nexplain > 0)) {
		fprintf(stderr, "pisbx-proxy: --replay does not go with "
		    "--check or --explain\n");
		rc = EX_USAGE_;
		goto out;
	}
	log_init(argv[0], verbose);

	ms.config_path = config_find(cli_config);
	if ((conf = load_config(ms.config_path, 0)) == NULL) {
		rc = EX_CONFIG_;
		goto out;
	}
	for (i = 0; i < conf->warnings.n; i++)
		fprintf(stderr, "pisbx-proxy: warning: %s\n",
		    conf->warnings.v[i]);
	if (replay != NULL) {
		rc = replay_run(conf, replay);
		config_free(conf);
		goto out;
	}
	if (check) {
		printf("%s: configuration OK\n", conf->path);
		if (verbose && policy_walk(conf->policy, check_entry_cb,
		    NULL) == -1)
			err(1, "--check");
		fflush(stdout);
		for (i = 0; verbose && i < conf->notes.n; i++)
			fprintf(stderr, "%s\n", conf->notes.msg[i]);
		if (!verbose && conf->notes.n > 0)
			fprintf(stderr, "%zu note%s on keys accepted without "
			    "effect here: --check -v shows %s\n",
			    conf->notes.n, conf->notes.n == 1 ? "" : "s",
			    conf->notes.n == 1 ? "it" : "them");
	} else
		for (i = 0; i < conf->notes.n; i++)
			log_info("%s", conf->notes.msg[i]);
	if (nexplain > 0) {
		for (i = 0; i < nexplain; i++) {
			char *line = policy_explain(conf, explain[i]);

			if (line == NULL)
				err(1, "explain");
			printf("%s\n", line);
			free(line);
		}
	}
	if (check || nexplain > 0) {
		config_free(conf);
		goto out;
	}
	if (nlisten == 0) {
		for (i = 0; i < conf->listen.n; i++)
			listen[nlisten++] = conf->listen.v[i];
	}
	if (nlisten == 0) {
		fprintf(stderr, "pisbx-proxy: no listeners: give --listen "
		    "ADDR or \"proxy\": {\"listen\": [...]} in %s\n",
		    ms.config_path != NULL ? ms.config_path :
		    "the config");
		config_free(conf);
		rc = EX_CONFIG_;
		goto out;
	}

	signal(SIGPIPE, SIG_IGN);
	if (getcwd(cwd, sizeof(cwd)) != NULL)
		opts.cwd = cwd;
	if ((ms.base = proxy_base_new()) == NULL)
		errx(1, "cannot create the event loop");
	/*
	 * proxy_new takes ownership of conf, but the listen strings may
	 * point into it: copy them first.
	 */
	for (i = 0; i < nlisten; i++)
		if ((listen[i] = strdup(listen[i])) == NULL)
			err(1, NULL);
	/* The command line's access log, else the config's (read at start). */
	if (opts.access_log == NULL && conf->access_log != NULL) {
		if ((conf_log = strdup(conf->access_log)) == NULL)
			err(1, NULL);
		opts.access_log = conf_log;
		if (!fmt_set)
			opts.log_format = conf->access_log_text ?
			    LOG_FORMAT_TEXT : LOG_FORMAT_JSON;
	}
	if ((ms.px = proxy_new(ms.base, conf, &opts)) == NULL) {
		rc = EX_CONFIG_;
		goto out;
	}
	proxy_nofile_prepare(ms.px);
	for (i = 0; i < nlisten; i++) {
		if (proxy_listen(ms.px, listen[i], bound, sizeof(bound)) ==
		    -1) {
			fprintf(stderr, "pisbx-proxy: cannot listen on %s\n",
			    listen[i]);
			rc = EX_OSERR_;
			goto out;
		}
		fprintf(stderr, "pisbx-proxy: listening on %s\n", bound);
	}
	fflush(stderr);

	ev_hup = evsignal_new(ms.base, SIGHUP, sighup_cb, &ms);
	ev_term = evsignal_new(ms.base, SIGTERM, sigterm_cb, &ms);
	ev_int = evsignal_new(ms.base, SIGINT, sigterm_cb, &ms);
	if (ev_hup == NULL || ev_term == NULL || ev_int == NULL ||
	    evsignal_add(ev_hup, NULL) == -1 ||
	    evsignal_add(ev_term, NULL) == -1 ||
	    evsignal_add(ev_int, NULL) == -1)
		errx(1, "cannot install signal handlers");

	event_base_dispatch(ms.base);

	event_free(ev_hup);
	event_free(ev_term);
	event_free(ev_int);
out:
	proxy_free(ms.px);
	if (ms.base != NULL)
		event_base_free(ms.base);
	if (ms.base != NULL)
		for (i = 0; i < nlisten; i++)
			free(listen[i]);
	free(ms.config_path);
	free(conf_log);
	free(explain);
	free(listen);
	return rc;
}
