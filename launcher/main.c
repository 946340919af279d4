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

static void	usage(FILE *, int) __attribute__((noreturn));
static int	self_dir(char *, size_t);

static void
usage(FILE *f, int code)
{
	fprintf(f,
"usage: pisbx-run [--config FILE] [--timeout SECONDS] [--access-log PATH]\n"
"                 [--log-format json|text] [--quiet] [--report FILE]\n"
"                 [--control-fd N] [--require-namespaces] [-v]\n"
"                 -- COMMAND [ARG...]\n"
"       pisbx-run [options] -c 'SHELL COMMAND'\n"
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


int
main(int argc, char *argv[])
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
		{ "require-namespaces",	no_argument,	   NULL, 'N' },
		{ "help",		no_argument,	   NULL, 'h' },
		{ "version",		no_argument,	   NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct run_opts	 o;
	const char	*name, *hook = NULL, *explain = NULL, *run = NULL;
	char		*end, dir[PATH_MAX];
	long		 lfd;
	int		 ch, connect_mode = 0;

	name = strrchr(argv[0], '/') != NULL ? strrchr(argv[0], '/') + 1 :
	    argv[0];
	if (strcmp(name, "pisbx-sh") == 0)
		return sh_main(argc, argv);

	memset(&o, 0, sizeof(o));
	o.fmt = LOG_FORMAT_JSON;
	o.control_fd = -1;
	log_init("pisbx-run", 0);
	while ((ch = getopt_long(argc, argv, "+c:qvhV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'C':
			o.cli_config = optarg;
			break;
		case 't':
			errno = 0;
			o.timeout = strtod(optarg, &end);
			if (errno != 0 || *end != '\0' || o.timeout <= 0 ||
			    o.timeout > 1e9) {
				log_warnx("--timeout: not a positive number of "
				    "seconds: %s", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'a':
			o.access_log = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "json") == 0)
				o.fmt = LOG_FORMAT_JSON;
			else if (strcmp(optarg, "text") == 0)
				o.fmt = LOG_FORMAT_TEXT;
			else {
				log_warnx("--log-format: json or text, not %s",
				    optarg);
				return EXIT_USAGE;
			}
			o.fmt_set = 1;
			break;
		case 'P':
			connect_mode = 1;
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
			o.control_fd = (int)lfd;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 'r':
			o.report = optarg;
			break;
		case 'H':
			hook = optarg;
			break;
		case 'E':
			explain = optarg;
			break;
		case 'R':
			run = optarg;
			break;
		case 'N':
			o.require_ns = 1;
			break;
		case 'c':
			o.line = optarg;
			break;
		case 'v':
			o.verbose++;
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
	argc -= optind;
	argv += optind;
	log_init("pisbx-run", o.verbose);

	if (connect_mode) {
		if (argc != 2)
			usage(stderr, EXIT_USAGE);
		return connect_proxy_main("127.0.0.1:3128", argv[0], argv[1]);
	}
	/* A running run's answer; its own function (run/explain.c). */
	if (explain != NULL || run != NULL) {
		if (explain == NULL || run == NULL || argc != 0 ||
		    o.line != NULL) {
			log_warnx("--explain HOST[:PORT] --run PID: both, and "
			    "nothing else");
			usage(stderr, EXIT_USAGE);
		}
		return explain_running(run, explain);
	}
	if (hook != NULL) {
		if (argc != 0 || o.line != NULL)
			usage(stderr, EXIT_USAGE);
		if (self_dir(dir, sizeof(dir)) == -1) {
			log_warn("--hook: /proc/self/exe; the command was not "
			    "run");
			return 2;
		}
		return hook_main(hook, dir);
	}
	if ((o.line == NULL) == (argc == 0)) {
		if (o.line != NULL)
			log_warnx("-c takes the whole command; no arguments "
			    "after it");
		usage(stderr, EXIT_USAGE);
	}
	if (o.line == NULL)
		o.argv = argv;
	return run_command(&o);
}
