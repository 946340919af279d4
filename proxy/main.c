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

#define CREDS_NOTHING	"pisbx-proxy on its own masks and injects " \
			"nothing: only pisbx-run, which starts the " \
			"command, does"

struct main_state {
	struct event_base	*base;
	struct proxy		*px;
	char			*config_path;	/* NULL: embedded default */
	enum config_layer	 layer;		/* run with --config */
};

/* What the command line asks for. */
struct main_args {
	struct proxy_opts	 opts;
	const char		*cli_config;
	const char		*replay;	/* --replay LOG */
	char			**explain;	/* --explain: nexplain */
	char			**listen;	/* --listen: nlisten */
	size_t			 nexplain, nlisten;
	int			 check, verbose, fmt_set;
	int			 replay_json, replay_format;
	char			*conf_log;	/* the config's access log */
	char			 cwd[4096];	/* opts.cwd */
};

static void	 usage(FILE *);
static struct config *load_config(const char *, enum config_layer);
static void	 sighup_cb(evutil_socket_t, short, void *);
static void	 sigterm_cb(evutil_socket_t, short, void *);
static int	 main_options(struct main_args *, int, char *[]);
static void	 main_creds_note(struct config *);
static int	 main_modes(struct config *, const struct main_args *, int *);
static int	 main_start(struct main_state *, struct config *,
		    struct main_args *);

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
"                   [--replay-format text|json]\n"
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
"                           default, which allows nothing; always under\n"
"                           the managed file " MANAGED_PATH ", when\n"
"                           there is one\n"
"  -n, --check              validate the config, print \"configuration OK\"\n"
"                           (with -v, every entry of the merged policy,\n"
"                           where it is written and its layer: managed,\n"
"                           user, run)\n"
"  -e, --explain HOST[:PORT]\n"
"                           print the policy's decision for a target as JSON;\n"
"                           one target each, repeatable for more\n"
"      --replay LOG         re-decide every decision of a JSON access log\n"
"                           (- is stdin) under the config and print what\n"
"                           would change; exit 0 none, 1 changes, 2 when\n"
"                           the log cannot be read whole\n"
"      --replay-format FMT  text (default) or json: one object per\n"
"                           distinct change, then a summary object\n"
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

/*
 * Reload a config (SIGHUP) under the managed file, as at start: every
 * error logged; NULL on failure.
 */
static struct config *
load_config(const char *path, enum config_layer layer)
{
	struct config_errors errs;
	struct config *conf;
	size_t i;

	memset(&errs, 0, sizeof(errs));
	if ((conf = config_load_layer(path, layer, &errs)) == NULL)
		for (i = 0; i < errs.n; i++)
			log_warnx("reload: %s", errs.msg[i]);
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
	if ((conf = load_config(ms->config_path, ms->layer)) == NULL) {
		log_warnx("SIGHUP: %s is not valid; keeping the old "
		    "configuration", ms->config_path != NULL ?
		    ms->config_path : "(embedded default)");
		return;
	}
	(void)proxy_reload(ms->px, conf);
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

/*
 * The command line into a: -1 to go on, else the exit status (0 after
 * --help or --version, 64 on a usage error, said on stderr).
 */
static int
main_options(struct main_args *a, int argc, char *argv[])
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
		{ "replay-format", required_argument,	NULL, 'F' },
		{ NULL,		0,			NULL, 0 }
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "c:ne:l:a:f:L:vhV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'c':
			a->cli_config = optarg;
			break;
		case 'n':
			a->check = 1;
			break;
		case 'e':
			a->explain[a->nexplain++] = optarg;
			break;
		case 'l':
			a->listen[a->nlisten++] = optarg;
			break;
		case 'a':
			a->opts.access_log = optarg;
			break;
		case 'f':
			a->fmt_set = 1;
			if (strcmp(optarg, "json") == 0)
				a->opts.log_format = LOG_FORMAT_JSON;
			else if (strcmp(optarg, "text") == 0)
				a->opts.log_format = LOG_FORMAT_TEXT;
			else {
				fprintf(stderr, "pisbx-proxy: --log-format "
				    "takes json or text, not \"%s\"\n", optarg);
				return EX_USAGE_;
			}
			break;
		case 'L':
			a->opts.label = optarg;
			break;
		case 'v':
			a->verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("pisbx-proxy %s\n", PISBX_VERSION);
			return 0;
		case 'R':	/* --replay: long option only */
			a->replay = optarg;
			break;
		case 'F':	/* --replay-format: long option only */
			if (strcmp(optarg, "json") == 0)
				a->replay_json = 1;
			else if (strcmp(optarg, "text") == 0)
				a->replay_json = 0;
			else {
				fprintf(stderr, "pisbx-proxy: --replay-format "
				    "takes text or json, not \"%s\"\n", optarg);
				return EX_USAGE_;
			}
			a->replay_format = 1;
			break;
		default:
			usage(stderr);
			return EX_USAGE_;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "pisbx-proxy: unexpected argument \"%s\"\n",
		    argv[optind]);
		usage(stderr);
		return EX_USAGE_;
	}
	if (a->replay_format && a->replay == NULL) {
		fprintf(stderr, "pisbx-proxy: --replay-format goes with "
		    "--replay LOG\n");
		return EX_USAGE_;
	}
	if (a->replay != NULL && (a->check || a->nexplain > 0)) {
		fprintf(stderr, "pisbx-proxy: --replay does not go with "
		    "--check or --explain\n");
		return EX_USAGE_;
	}
	return -1;
}

/*
 * credentials: the placeholder table is made by pisbx-run for the
 * command it starts, from the environment and files it hands that
 * command; a proxy serving clients it did not start has no table, so
 * it swaps nothing in and finds no placeholder to refuse.  A config
 * that lists credentials is told so, not silently half-honoured.
 */
static void
main_creds_note(struct config *conf)
{
	char	**v, *m;

	if (asprintf(&m, "%s: $.credentials: %s",
	    conf->path != NULL ? conf->path : "(embedded default)",
	    CREDS_NOTHING) == -1)
		return;
	if ((v = reallocarray(conf->notes.msg, conf->notes.n + 1,
	    sizeof(*v))) == NULL) {
		free(m);
		return;
	}
	conf->notes.msg = v;
	conf->notes.msg[conf->notes.n++] = m;
}

/*
 * --replay, --check and --explain on the loaded config: 1 when one ran
 * (its exit status in *rc), 0 to go on and serve.
 */
static int
main_modes(struct config *conf, const struct main_args *a, int *rc)
{
	size_t i;

	for (i = 0; i < conf->warnings.n; i++)
		fprintf(stderr, "pisbx-proxy: warning: %s\n",
		    conf->warnings.v[i]);
	if (conf->creds.n > 0 && a->replay == NULL) {
		if (a->check)
			main_creds_note(conf);
		else if (a->nexplain == 0)
			fprintf(stderr, "pisbx-proxy: warning: %s: "
			    "$.credentials: %s\n", conf->path != NULL ?
			    conf->path : "(embedded default)", CREDS_NOTHING);
	}
	if (a->replay != NULL) {
		*rc = replay_run(conf, a->replay, a->replay_json);
		return 1;
	}
	if (a->check) {
		if (check_print(conf, a->verbose) == -1)
			err(1, "--check");
	} else
		for (i = 0; i < conf->notes.n; i++)
			log_info("%s", conf->notes.msg[i]);
	if (a->nexplain > 0 &&
	    check_explain(conf, a->explain, a->nexplain) == -1)
		err(1, "--explain");
	if (a->check || a->nexplain > 0) {
		*rc = 0;
		return 1;
	}
	return 0;
}

/*
 * Serve: bind the listeners (the command line's, else the config's), run
 * the loop until SIGTERM or SIGINT.  Takes conf.  The exit status.
 */
static int
main_start(struct main_state *ms, struct config *conf, struct main_args *a)
{
	struct event *ev_hup, *ev_term, *ev_int;
	char bound[512];
	size_t i;

	if (a->nlisten == 0) {
		for (i = 0; i < conf->listen.n; i++)
			a->listen[a->nlisten++] = conf->listen.v[i];
	}
	if (a->nlisten == 0) {
		fprintf(stderr, "pisbx-proxy: no listeners: give --listen "
		    "ADDR or \"proxy\": {\"listen\": [...]} in %s\n",
		    ms->config_path != NULL ? ms->config_path :
		    "the config");
		config_free(conf);
		return EX_CONFIG_;
	}

	signal(SIGPIPE, SIG_IGN);
	if (getcwd(a->cwd, sizeof(a->cwd)) != NULL)
		a->opts.cwd = a->cwd;
	if ((ms->base = proxy_base_new()) == NULL)
		errx(1, "cannot create the event loop");
	/*
	 * proxy_new takes ownership of conf, but the listen strings may
	 * point into it: copy them first.
	 */
	for (i = 0; i < a->nlisten; i++)
		if ((a->listen[i] = strdup(a->listen[i])) == NULL)
			err(1, NULL);
	/* The command line's access log, else the config's (read at start). */
	if (a->opts.access_log == NULL && conf->access_log != NULL) {
		if ((a->conf_log = strdup(conf->access_log)) == NULL)
			err(1, NULL);
		a->opts.access_log = a->conf_log;
		if (!a->fmt_set)
			a->opts.log_format = conf->access_log_text ?
			    LOG_FORMAT_TEXT : LOG_FORMAT_JSON;
	}
	if ((ms->px = proxy_new(ms->base, conf, &a->opts)) == NULL)
		return EX_CONFIG_;
	proxy_nofile_prepare(ms->px);
	for (i = 0; i < a->nlisten; i++) {
		if (proxy_listen(ms->px, a->listen[i], bound, sizeof(bound)) ==
		    -1) {
			fprintf(stderr, "pisbx-proxy: cannot listen on %s\n",
			    a->listen[i]);
			return EX_OSERR_;
		}
		fprintf(stderr, "pisbx-proxy: listening on %s\n", bound);
	}
	fflush(stderr);

	ev_hup = evsignal_new(ms->base, SIGHUP, sighup_cb, ms);
	ev_term = evsignal_new(ms->base, SIGTERM, sigterm_cb, ms);
	ev_int = evsignal_new(ms->base, SIGINT, sigterm_cb, ms);
	if (ev_hup == NULL || ev_term == NULL || ev_int == NULL ||
	    evsignal_add(ev_hup, NULL) == -1 ||
	    evsignal_add(ev_term, NULL) == -1 ||
	    evsignal_add(ev_int, NULL) == -1)
		errx(1, "cannot install signal handlers");

	event_base_dispatch(ms->base);

	event_free(ev_hup);
	event_free(ev_term);
	event_free(ev_int);
	return 0;
}

int
main(int argc, char *argv[])
{
	struct main_state ms;
	struct main_args a;
	struct config *conf;
	size_t i;
	int rc;

	memset(&ms, 0, sizeof(ms));
	memset(&a, 0, sizeof(a));
	a.opts.log_format = LOG_FORMAT_JSON;
	a.opts.reload_said = 1;
	if ((a.explain = calloc(argc, sizeof(*a.explain))) == NULL ||
	    (a.listen = calloc(argc, sizeof(*a.listen))) == NULL)
		err(1, NULL);
	if ((rc = main_options(&a, argc, argv)) != -1)
		goto out;
	rc = 0;
	log_init(argv[0], a.verbose);

	ms.config_path = config_find(a.cli_config);
	ms.layer = a.cli_config != NULL ? LAYER_RUN : LAYER_USER;
	if ((conf = check_load(ms.config_path, ms.layer)) == NULL) {
		rc = EX_CONFIG_;
		goto out;
	}
	if (main_modes(conf, &a, &rc)) {
		config_free(conf);
		goto out;
	}
	rc = main_start(&ms, conf, &a);
out:
	proxy_free(ms.px);
	if (ms.base != NULL)
		event_base_free(ms.base);
	if (ms.base != NULL)
		for (i = 0; i < a.nlisten; i++)
			free(a.listen[i]);
	free(ms.config_path);
	free(a.conf_log);
	free(a.explain);
	free(a.listen);
	return rc;
}
