/*
 * pisbx-sh: pisbx-run for agents that take a shell, or a prefix in front
 * of their shell line.  It reads bash's options, not pisbx-run's (those
 * are in the trusted config), and hands the line or the program to
 * run_command (run/run.c) as pisbx-run would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "proxy/proxy.h"
#include "launcher/launcher.h"
#include "launcher/run/run.h"

/* bash's set(1) options, which pisbx-sh passes on as "-X" or "+X". */
#define SH_SET_LETTERS	"abefhkmnptuvxBCEHPT"

static void	sh_usage(FILE *, int) __attribute__((noreturn));
static char	*sh_opt(int, int, const char *);
static void	sh_free(char **, size_t, char **, size_t);

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
int
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
	o.control_fd = -1;
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
