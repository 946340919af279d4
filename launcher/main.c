/*
 * pisbx-run and pisbx-sh, one executable: main() reads pisbx-run's
 * options and dispatches -- to --connect-proxy (connect.c), --hook
 * (agent/hook.c), pisbx-sh (sh.c) when called by that name, else to
 * run_command (run/run.c), which does the work.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "policy/policy.h"
#include "proxy/proxy.h"
#include "launcher/launcher.h"
#include "launcher/agent/agent.h"
#include "launcher/run/run.h"

/* What the command line asks for, besides the run's options. */
struct main_args {
	struct run_opts	 o;
	const char	*hook;		/* --hook AGENT */
	const char	*run;		/* --run PID */
	char		**explain;	/* --explain, nexplain of them */
	size_t		 nexplain;
	int		 connect_mode;	/* --connect-proxy */
	int		 check;		/* --check */
};

static void	usage(FILE *, int) __attribute__((noreturn));
static int	self_dir(char *, size_t);
static int	main_options(struct main_args *, int, char *[]);
static int	main_modes(struct main_args *, int, char *[], int *);
static int	main_run(struct run_opts *, int, char *[]);
static void	main_exit(int) __attribute__((noreturn));
static int	check_main(const struct run_opts *, int, char *const *,
		    size_t);

static void
usage(FILE *f, int code)
{
	fprintf(f,
"usage: pisbx-run [--config FILE] [--timeout SECONDS] [--access-log PATH]\n"
"                 [--log-format json|text] [--quiet] [--report FILE]\n"
"                 [--control-fd N] [--require-namespaces] [-v]\n"
"                 -- COMMAND [ARG...]\n"
"       pisbx-run [options] -c 'SHELL COMMAND'\n"
"       pisbx-run [--config FILE] --check [-v]\n"
"       pisbx-run [--config FILE] --explain HOST[:PORT]...\n"
"       pisbx-run --connect-proxy HOST PORT\n"
"       pisbx-run --hook claude-code|codex\n"
"       pisbx-run --explain HOST[:PORT] --run PID\n"
"       pisbx-run -h | --help | -V | --version\n"
"\n"
"Runs COMMAND in fresh network, mount, PID and IPC namespaces whose only\n"
"way out is a filtering proxy (HTTP on 127.0.0.1:3128, SOCKS5 on\n"
"127.0.0.1:1080), with the config's filesystem policy.  Where namespaces\n"
"cannot be made (a container), it confines COMMAND without them and says\n"
"so in one line.\n"
"\n"
"  --config FILE        the trusted config; without it $PISBX_CONFIG (an\n"
"                       absolute path), else $XDG_CONFIG_HOME/pisbx/config.json\n"
"                       (~/.config/pisbx/config.json when XDG_CONFIG_HOME is\n"
"                       unset), else srt's ~/.srt-settings.json, else the\n"
"                       built-in default, which allows nothing\n"
"                       (always under the managed file " MANAGED_PATH ")\n"
"  --check              validate the merged policy and print it (-v: every\n"
"                       entry with its source and layer); start nothing\n"
"  --explain HOST[:PORT]\n"
"                       what the config's policy would do with a target,\n"
"                       which entry of which file and layer decides, as\n"
"                       JSON; repeatable\n"
"  --timeout SECONDS    kill the whole sandbox after SECONDS (exit 124)\n"
"  --access-log PATH    one record per proxy decision and close ('-': stdout)\n"
"  --log-format FMT     json (default) or text\n"
"  --quiet, -q          no summary of what was refused at exit\n"
"  --report FILE        every refusal of the run as JSON, written at exit\n"
"  --control-fd N       read policy updates from descriptor N while the\n"
"                       command runs: one JSON config a line (srt's format)\n"
"  --require-namespaces refuse to run (exit 125) where namespaces cannot be\n"
"                       made, rather than confine COMMAND without them\n"
"  -c STRING            run STRING with bash -c (sh where there is no bash)\n"
"  -v                   more diagnostics (twice: debug)\n"
"  --connect-proxy H P  relay stdin/stdout to H:P through the sandbox's\n"
"                       proxy (an ssh ProxyCommand; set in GIT_SSH_COMMAND)\n"
"  --hook AGENT         answer the agent's PreToolUse hook (JSON on stdin)\n"
"                       with its Bash command wrapped in pisbx-sh\n"
"  --explain HOST[:PORT] --run PID\n"
"                       what the running pisbx-run PID decides for a\n"
"                       target now: its policy in force and the approvals\n"
"                       given for the rest of that run, as one JSON line\n"
"  -h, --help           this text\n"
"  -V, --version        print the version\n"
"\n"
"Exit status: the command's (128+N when killed by signal N); 124 timeout;\n"
"125 the sandbox could not be built; 126/127 command not executable/found;\n"
"78 bad config; 2 usage.  See pisbx-run(1).\n");
	exit(code);
}

/* The directory of our own executable (symlinks resolved). */
static int
self_dir(char *buf, size_t len)
{
	char	 exe[PATH_MAX], *end;

	if (realpath("/proc/self/exe", exe) == NULL)
		return -1;
	if ((end = strrchr(exe, '/')) != NULL)
		end[end == exe ? 1 : 0] = '\0';
	if ((size_t)snprintf(buf, len, "%s", exe) >= len)
		return -1;
	return 0;
}


/*
 * --check, --explain: the config a run would use (the same trust order,
 * the same layer, the managed file over it), then the proxy's own
 * printing (proxy/check.c).  0, EXIT_CONFIG when the config is refused.
 */
static int
check_main(const struct run_opts *o, int check, char *const *explain,
    size_t nexplain)
{
	struct config	*conf;
	const char	*env;
	char		*path;
	int		 rc = 0;

	if (o->cli_config == NULL && (env = getenv("PISBX_CONFIG")) != NULL &&
	    env[0] != '\0' && env[0] != '/') {
		log_warnx("PISBX_CONFIG=%s: not an absolute path; set it to "
		    "an absolute path", env);
		return EXIT_CONFIG;
	}
	path = config_find(o->cli_config);
	conf = check_load(path, o->cli_config != NULL ? LAYER_RUN :
	    LAYER_USER);
	free(path);
	if (conf == NULL)
		return EXIT_CONFIG;
	if ((check && check_print(conf, o->verbose) == -1) ||
	    check_explain(conf, explain, nexplain) == -1) {
		log_warn("--check");
		rc = EXIT_SETUP;
	}
	config_free(conf);
	return rc;
}

/*
 * The command line into a (optind past the options): -1 to go on, else
 * the exit status of a usage error (said) or --version.
 */
static int
main_options(struct main_args *a, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "config",		required_argument, NULL, 'C' },
		{ "timeout",		required_argument, NULL, 't' },
		{ "access-log",		required_argument, NULL, 'a' },
		{ "log-format",		required_argument, NULL, 'f' },
		{ "connect-proxy",	no_argument,	   NULL, 'P' },
		{ "quiet",		no_argument,	   NULL, 'q' },
		{ "report",		required_argument, NULL, 'r' },
		{ "hook",		required_argument, NULL, 'H' },
		{ "control-fd",		required_argument, NULL, 'F' },
		{ "explain",		required_argument, NULL, 'E' },
		{ "run",		required_argument, NULL, 'R' },
		{ "check",		no_argument,	   NULL, 'n' },
		{ "require-namespaces",	no_argument,	   NULL, 'N' },
		{ "help",		no_argument,	   NULL, 'h' },
		{ "version",		no_argument,	   NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	char		*end;
	long		 lfd;
	int		 ch;

	while ((ch = getopt_long(argc, argv, "+c:qvhV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'C':
			a->o.cli_config = optarg;
			break;
		case 't':
			errno = 0;
			a->o.timeout = strtod(optarg, &end);
			if (errno != 0 || *end != '\0' || a->o.timeout <= 0 ||
			    a->o.timeout > 1e9) {
				log_warnx("--timeout: not a positive number of "
				    "seconds: %s", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'a':
			a->o.access_log = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "json") == 0)
				a->o.fmt = LOG_FORMAT_JSON;
			else if (strcmp(optarg, "text") == 0)
				a->o.fmt = LOG_FORMAT_TEXT;
			else {
				log_warnx("--log-format: json or text, not %s",
				    optarg);
				return EXIT_USAGE;
			}
			a->o.fmt_set = 1;
			break;
		case 'P':
			a->connect_mode = 1;
			break;
		case 'F':
			/* Digits only: not "0x10", " 5", "3e0". */
			errno = 0;
			lfd = strtol(optarg, &end, 10);
			if (optarg[0] < '0' || optarg[0] > '9' || errno != 0 ||
			    *end != '\0' || lfd < 3 || lfd > INT_MAX) {
				log_warnx("--control-fd: an integer file "
				    "descriptor >= 3 (0-2 are stdin, stdout "
				    "and stderr), not %s", optarg);
				return EXIT_USAGE;
			}
			a->o.control_fd = (int)lfd;
			break;
		case 'q':
			a->o.quiet = 1;
			break;
		case 'r':
			a->o.report = optarg;
			break;
		case 'H':
			a->hook = optarg;
			break;
		case 'E':
			a->explain[a->nexplain++] = optarg;
			break;
		case 'n':
			a->check = 1;
			break;
		case 'R':
			a->run = optarg;
			break;
		case 'N':
			a->o.require_ns = 1;
			break;
		case 'c':
			a->o.line = optarg;
			break;
		case 'v':
			a->o.verbose++;
			break;
		case 'h':
			usage(stdout, 0);
		case 'V':
			printf("pisbx-run %s\n", PISBX_VERSION);
			return 0;
		default:
			usage(stderr, EXIT_USAGE);
		}
	}
	return -1;
}

/*
 * The modes that run no command of their own: --connect-proxy, --explain
 * --run, --check and --explain, --hook.  1 when one ran (its exit status
 * in *rc), 0 to go on to the run.  Frees a->explain either way.
 */
static int
main_modes(struct main_args *a, int argc, char *argv[], int *rc)
{
	char	dir[PATH_MAX];

	if (a->connect_mode) {
		free(a->explain);
		if (argc != 2)
			usage(stderr, EXIT_USAGE);
		*rc = connect_proxy_main("127.0.0.1:3128", argv[0], argv[1]);
		return 1;
	}
	/* A running run's answer; its own function (run/explain.c). */
	if (a->run != NULL) {
		if (a->nexplain != 1 || a->check || argc != 0 ||
		    a->o.line != NULL) {
			log_warnx("--explain HOST[:PORT] --run PID: both, and "
			    "nothing else");
			usage(stderr, EXIT_USAGE);
		}
		*rc = explain_running(a->run, a->explain[0]);
		free(a->explain);
		return 1;
	}
	/* The config's answer, or the merged policy: nothing runs. */
	if (a->check || a->nexplain > 0) {
		if (argc != 0 || a->o.line != NULL || a->hook != NULL) {
			log_warnx("--check and --explain run nothing: no "
			    "command, -c or --hook with them");
			usage(stderr, EXIT_USAGE);
		}
		*rc = check_main(&a->o, a->check, a->explain, a->nexplain);
		free(a->explain);
		return 1;
	}
	free(a->explain);
	if (a->hook != NULL) {
		if (argc != 0 || a->o.line != NULL)
			usage(stderr, EXIT_USAGE);
		if (self_dir(dir, sizeof(dir)) == -1) {
			log_warn("--hook: /proc/self/exe; the command was not "
			    "run");
			*rc = 2;
			return 1;
		}
		*rc = hook_main(a->hook, dir);
		return 1;
	}
	return 0;
}

/* The command (-c LINE, or the words left in argv) in its sandbox. */
static int
main_run(struct run_opts *o, int argc, char *argv[])
{
	if ((o->line == NULL) == (argc == 0)) {
		if (o->line != NULL)
			log_warnx("-c takes the whole command; no arguments "
			    "after it");
		usage(stderr, EXIT_USAGE);
	}
	if (o->line == NULL)
		o->argv = argv;
	return run_command(o);
}

/*
 * The end of a run: what stdio holds is written and the process ends
 * without the libraries' destructors.  They only free what the kernel
 * takes back anyway, and each page they write is a page fault: one
 * still shared with the sandbox's PID 1 when the clone copied the
 * parent, or never touched since exec (some 8 a start).  Under
 * AddressSanitizer exit() runs them, so that a leak is still seen.
 */
static void
main_exit(int rc)
{
#ifdef __SANITIZE_ADDRESS__
	exit(rc);
#else
	(void)fflush(NULL);
	_exit(rc);
#endif
}

int
main(int argc, char *argv[])
{
	struct main_args a;
	const char	*name;
	int		 rc;

	name = strrchr(argv[0], '/') != NULL ? strrchr(argv[0], '/') + 1 :
	    argv[0];
	if (strcmp(name, "pisbx-sh") == 0)
		main_exit(sh_main(argc, argv));

	memset(&a, 0, sizeof(a));
	a.o.fmt = LOG_FORMAT_JSON;
	a.o.control_fd = -1;
	if ((a.explain = calloc((size_t)argc + 1, sizeof(*a.explain))) ==
	    NULL) {
		log_warn("calloc");
		return EXIT_SETUP;
	}
	log_init("pisbx-run", 0);
	if ((rc = main_options(&a, argc, argv)) != -1) {
		free(a.explain);
		return rc;
	}
	argc -= optind;
	argv += optind;
	log_init("pisbx-run", a.o.verbose);

	if (main_modes(&a, argc, argv, &rc))
		return rc;
	main_exit(main_run(&a.o, argc, argv));
}
