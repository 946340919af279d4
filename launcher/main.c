/*
 * pisbx-run and pisbx-sh, one executable: main() reads pisbx-run's
 * options and dispatches -- to --connect-proxy (connect.c), --hook
 * (agent/hook.c), pisbx-sh when called by that name, else to
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

/* bash's set(1) options, which pisbx-sh passes on as "-X" or "+X". */
#define SH_SET_LETTERS	"abefhkmnptuvxBCEHPT"

static void	usage(FILE *, int) __attribute__((noreturn));
static void	sh_usage(FILE *, int) __attribute__((noreturn));
static char	*sh_opt(int, int, const char *);
static void	sh_free(char **, size_t, char **, size_t);
static int	sh_main(int, char *[]);
static int	self_dir(char *, size_t);

static void
usage(FILE *f, int code)
{
	fprintf(f,
"usage: pisbx-run [--config FILE] [--timeout SECONDS] [--access-log PATH]\n"
"                 [--log-format json|text] [--quiet] [--report FILE] [-v]\n"
"                 -- COMMAND [ARG...]\n"
"       pisbx-run [options] -c 'SHELL COMMAND'\n"
"       pisbx-run --connect-proxy HOST PORT\n"
"       pisbx-run --hook claude-code|codex\n"
"       pisbx-run -h | --help | -V | --version\n"
"\n"
"Runs COMMAND in fresh network, mount, PID and IPC namespaces whose only\n"
"way out is a filtering proxy (HTTP on 127.0.0.1:3128, SOCKS5 on\n"
"127.0.0.1:1080), with the config's filesystem policy.\n"
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
"  -c STRING            run STRING with bash -c (sh where there is no bash)\n"
"  -v                   more diagnostics (twice: debug)\n"
"  --connect-proxy H P  relay stdin/stdout to H:P through the sandbox's\n"
"                       proxy (an ssh ProxyCommand; set in GIT_SSH_COMMAND)\n"
"  --hook AGENT         answer the agent's PreToolUse hook (JSON on stdin)\n"
"                       with its Bash command wrapped in pisbx-sh\n"
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
		{ "help",		no_argument,	   NULL, 'h' },
		{ "version",		no_argument,	   NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct run_opts	 o;
	const char	*name, *hook = NULL;
	char		*end, dir[PATH_MAX];
	int		 ch, connect_mode = 0;

	name = strrchr(argv[0], '/') != NULL ? strrchr(argv[0], '/') + 1 :
	    argv[0];
	if (strcmp(name, "pisbx-sh") == 0)
		return sh_main(argc, argv);

	memset(&o, 0, sizeof(o));
	o.fmt = LOG_FORMAT_JSON;
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
		case 'q':
			o.quiet = 1;
			break;
		case 'r':
			o.report = optarg;
			break;
		case 'H':
			hook = optarg;
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

static void
sh_usage(FILE *f, int code)
{
	fprintf(f,
"usage: pisbx-sh [OPTION...] -c 'COMMAND LINE' [NAME [ARG...]]\n"
"       pisbx-sh [OPTION...] 'COMMAND LINE'\n"
"       pisbx-sh PROGRAM ARG...\n"
"       pisbx-sh --help | --version\n"
"Runs the line with bash (or the program) in the pisbx sandbox.  The\n"
"OPTIONs are bash's, passed on to it: the set(1) letters -%s\n"
"(+ turns one off), -o NAME, -O NAME, -i, -l, --login, --noprofile,\n"
"--norc, --posix, --noediting.  pisbx's own settings are in the trusted\n"
"config: $PISBX_CONFIG (an absolute path), else\n"
"$XDG_CONFIG_HOME/pisbx/config.json (~/.config/pisbx/config.json when\n"
"XDG_CONFIG_HOME is unset), else srt's ~/.srt-settings.json, else the\n"
"built-in default, which allows nothing.  See pisbx-sh(1).\n",
	    SH_SET_LETTERS);
	exit(code);
}

/*
 * One of bash's own options for pisbx-sh's command line: "-X", "+X", or
 * the word itself.  NULL and a usage error when out of memory.
 */
static char *
sh_opt(int sign, int letter, const char *word)
{
	char	*s;

	if (word != NULL)
		s = strdup(word);
	else if (asprintf(&s, "%c%c", sign, letter) == -1)
		s = NULL;
	if (s == NULL) {
		log_warn("shell options");
		exit(EXIT_USAGE);
	}
	return s;
}

/*
 * pisbx-sh: pisbx-run for agents that take a shell, or a prefix in front
 * of their shell line.  "-c LINE [NAME ARG...]" and a single LINE run
 * through bash; two or more words run as a program and its arguments.
 * The options bash-compatible callers pass (-e, -o pipefail, -lc, the
 * --noprofile --norc -eo pipefail of CI runners) go to bash, long ones
 * first as bash wants them; anything else is an error, since pisbx's
 * own options cannot travel in a shell path or prefix.
 */
static int
sh_main(int argc, char *argv[])
{
	static const char *const longs[] = { "--noprofile", "--norc",
	    "--posix", "--noediting" };
	struct run_opts	 o;
	char		**longv, **shortv;
	const char	*a, *p;
	size_t		 nlong = 0, nshort = 0, k;
	int		 i, rc, cflag = 0;

	log_init("pisbx-sh", 0);
	memset(&o, 0, sizeof(o));
	o.fmt = LOG_FORMAT_JSON;
	o.agent = 1;
	/* -o NAME: two words for one of argv; longv gets both lists. */
	if ((longv = calloc((size_t)argc * 3 + 1, sizeof(*longv))) == NULL ||
	    (shortv = calloc((size_t)argc * 2 + 1, sizeof(*shortv))) == NULL) {
		log_warn("shell options");
		free(longv);
		return EXIT_USAGE;
	}
	for (i = 1; i < argc && (argv[i][0] == '-' || argv[i][0] == '+');
	    i++) {
		a = argv[i];
		if (strcmp(a, "--") == 0 || strcmp(a, "-") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "--help") == 0)
			goto help;
		if (strcmp(a, "--version") == 0) {
			printf("pisbx-sh %s\n", PISBX_VERSION);
			rc = 0;
			goto done;
		}
		if (strcmp(a, "--login") == 0) {
			o.login = 1;
			continue;
		}
		if (a[0] == '-' && a[1] == '-') {
			for (k = 0; k < sizeof(longs) / sizeof(*longs); k++)
				if (strcmp(a, longs[k]) == 0)
					break;
			if (k == sizeof(longs) / sizeof(*longs)) {
				log_warnx("%s: not an option of bash's that "
				    "pisbx-sh takes; pisbx-run's options go in "
				    "the config", a);
				goto usage;
			}
			if (strcmp(a, "--noprofile") == 0)
				o.noprofile = 1;
			longv[nlong++] = sh_opt(0, 0, a);
			continue;
		}
		if (a[1] == '\0') {
			log_warnx("+: not an option");
			goto usage;
		}
		for (p = a + 1; *p != '\0'; p++) {
			if (*p == 'o' || *p == 'O') {
				/* Like bash: each o takes the next word. */
				if (i + 1 >= argc) {
					log_warnx("%c%c: no option name",
					    a[0], *p);
					goto usage;
				}
				shortv[nshort++] = sh_opt(a[0], *p, NULL);
				shortv[nshort++] = sh_opt(0, 0, argv[++i]);
			} else if (strchr("cli", *p) != NULL && a[0] == '-') {
				if (*p == 'c')
					cflag = 1;
				else if (*p == 'l')
					o.login = 1;
				else {
					o.interactive = 1;
					shortv[nshort++] = sh_opt('-', 'i',
					    NULL);
				}
			} else if (strchr(SH_SET_LETTERS, *p) != NULL)
				shortv[nshort++] = sh_opt(a[0], *p, NULL);
			else {
				log_warnx("%c%c: not an option of bash's that "
				    "pisbx-sh takes; pisbx-run's options go in "
				    "the config", a[0], *p);
				goto usage;
			}
		}
	}
	/* Long options first: bash takes none after a short one. */
	for (k = 0; k < nshort; k++)
		longv[nlong + k] = shortv[k];
	o.shopts = longv;
	if (cflag) {
		if (i >= argc) {
			log_warnx("-c: no command line");
			goto usage;
		}
		o.line = argv[i];
		o.line_args = argv + i + 1;
	} else if (argc - i == 1)
		o.line = argv[i];
	else if (argc - i >= 2) {
		if (nlong + nshort > 0 || o.login) {
			log_warnx("bash's options need a command line: "
			    "pisbx-sh [OPTION...] -c 'LINE'");
			goto usage;
		}
		o.argv = argv + i;
	} else {
		log_warnx("no command");
		goto usage;
	}
	rc = run_command(&o);
done:
	sh_free(longv, nlong, shortv, nshort);
	return rc;
help:
	sh_free(longv, nlong, shortv, nshort);
	sh_usage(stdout, 0);
usage:
	sh_free(longv, nlong, shortv, nshort);
	sh_usage(stderr, EXIT_USAGE);
}

/*
 * The option words sh_main made: longv's first nlong and shortv's
 * nshort (longv's later entries, when copied there, are shortv's).
 */
static void
sh_free(char **longv, size_t nlong, char **shortv, size_t nshort)
{
	size_t	k;

	for (k = 0; k < nlong; k++)
		free(longv[k]);
	for (k = 0; k < nshort; k++)
		free(shortv[k]);
	free(longv);
	free(shortv);
}
