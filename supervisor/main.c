/*
 * pisbx-supervisor: the reference supervisor for pisbx-run's supervisor
 * mode.  It hands every registering worker the trusted config's network
 * policy, answers its reviews through a review command or the TTY, and
 * prints the worker table on SIGUSR1.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <err.h>
#include <fcntl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "common/io.h"
#include "common/log.h"
#include "common/shell.h"
#include "policy/policy.h"
#include "approval/approval.h"
#include "approval/supclient.h"
#include "supervisor/supervisor.h"

#define CAPABILITY_BYTES	32

/* What the command line asks for. */
struct main_args {
	struct supervisor_opts	 o;
	const char		*cli_config;
	const char		*push;		/* --push FILE */
	char			**rargv;	/* the reviewer's argv */
	int			 verbose;
};

/* What main holds until the supervisor stops, freed at its end. */
struct main_state {
	struct event_base	*base;
	struct config		*conf;
	char			*path;		/* NULL: embedded default */
	char			*net;		/* o.network_json */
	char			*policy_file;	/* o.policy_file */
	char			*envfile;	/* --interactive */
	char			*defsock;	/* --interactive's socket */
	ino_t			 envino;	/* envfile's, as written */
	int			 rargv_alloc;	/* rargv is the config's */
	int			 from_env;	/* cap from the environment */
	char			 cap[CAPABILITY_BYTES * 2 + 1];
};

static void	 usage(FILE *, int) __attribute__((noreturn));
static int	 push_main(const char *, const char *, int);
static void	 signal_cb(evutil_socket_t, short, void *);
static char	*read_file(const char *, size_t *);
static char	*runtime_path(const char *);
static int	 envfile_write(const char *, const char *, const char *,
		    ino_t *);
static int	 main_options(struct main_args *, int, char *[]);
static int	 main_modes(struct main_state *, struct main_args *, int *);
static void	 main_config(struct main_state *, struct main_args *);
static void	 main_capability(struct main_state *, struct main_args *);
static void	 main_start(struct main_state *, struct main_args *);

static struct supervisor *sup;

static void
usage(FILE *f, int status)
{
	fprintf(f,
"usage: pisbx-supervisor [-v] [--config FILE] --socket PATH\n"
"                        [--access-log PATH|-] [--review-timeout MS]\n"
"                        [--tty | --review-command /abs/reviewer [ARG...]]\n"
"       pisbx-supervisor [-v] [--config FILE] [--socket PATH]\n"
"                        [--access-log PATH|-] [--review-timeout MS]\n"
"                        --interactive\n"
"       pisbx-supervisor [--socket PATH] --push FILE\n"
"       pisbx-supervisor -h | --help | -V | --version\n"
"\n"
"The reference supervisor for pisbx-run's supervisor mode: it hands every\n"
"registering worker the trusted config's network policy, answers its\n"
"network and host-IPC reviews, and keeps the worker table.  It prints the\n"
"line to export (PISBX_SUPERVISOR_SOCKET, and PISBX_SUPERVISOR_CAPABILITY\n"
"unless it was given one in its environment) on standard output.\n"
"\n"
"  --config FILE          the trusted config; without it $PISBX_CONFIG,\n"
"                         else $XDG_CONFIG_HOME/pisbx/config.json\n"
"                         (~/.config/pisbx/config.json when XDG_CONFIG_HOME\n"
"                         is unset), else srt's ~/.srt-settings.json, else\n"
"                         the embedded default, which allows nothing\n"
"  --socket PATH          the Unix socket to serve (created mode 0600)\n"
"  --access-log PATH      one JSON line per request; - is stdout\n"
"  --review-timeout MS    per review (default: the config's\n"
"                         review.timeoutMs)\n"
"  --tty                  ask the person at this terminal\n"
"  --interactive          ask the person at this terminal, and let every\n"
"                         pisbx-run and pisbx-sh of this user find this\n"
"                         supervisor: the socket defaults to\n"
"                         $XDG_RUNTIME_DIR/pisbx/supervisor.sock, and\n"
"                         $XDG_RUNTIME_DIR/pisbx/supervisor.env (mode 0600)\n"
"                         names it and the capability until it stops\n"
"  --review-command ...   ask this command (the rest of the line)\n"
"  --push FILE            send the network lists of the config FILE to the\n"
"                         running supervisor (--socket, else\n"
"                         $PISBX_SUPERVISOR_SOCKET; the capability from\n"
"                         $PISBX_SUPERVISOR_CAPABILITY): every worker it\n"
"                         registered takes them at once, later ones at\n"
"                         registration; exit 0 when all took them\n"
"  -v                     more diagnostics on stderr (repeatable)\n"
"  -h, --help             this text\n"
"  -V, --version          print the version\n"
"\n"
"With --interactive nothing is printed to export; s at its question allows\n"
"a target for every worker until the supervisor stops.\n"
"Without --tty or --review-command the config's review (command or tty)\n"
"answers; without any, every review is denied.  SIGUSR1 prints the\n"
"worker table on stderr; SIGTERM, SIGINT and SIGHUP stop it and remove\n"
"the socket.\n");
	exit(status);
}

/*
 * The command line into a: -1 to go on, else the exit status (0 after
 * --version); usage errors and --help exit here.
 */
static int
main_options(struct main_args *a, int argc, char *argv[])
{
	size_t	 i;

	for (i = 1; i < (size_t)argc; i++) {
		const char *s = argv[i];

		if (strcmp(s, "--config") == 0 && i + 1 < (size_t)argc)
			a->cli_config = argv[++i];
		else if (strcmp(s, "--socket") == 0 && i + 1 < (size_t)argc)
			a->o.socket_path = argv[++i];
		else if (strcmp(s, "--push") == 0 && i + 1 < (size_t)argc)
			a->push = argv[++i];
		else if (strcmp(s, "--access-log") == 0 && i + 1 <
		    (size_t)argc)
			a->o.access_log = argv[++i];
		else if (strcmp(s, "--review-timeout") == 0 && i + 1 <
		    (size_t)argc) {
			a->o.review_timeout_ms = atoi(argv[++i]);
			if (a->o.review_timeout_ms <= 0)
				usage(stderr, 2);
		} else if (strcmp(s, "--tty") == 0)
			a->o.review_tty = 1;
		else if (strcmp(s, "--interactive") == 0)
			a->o.interactive = 1;
		else if (strcmp(s, "--review-command") == 0) {
			/* The rest of the line is the reviewer's argv. */
			if (i + 1 >= (size_t)argc || argv[i + 1][0] != '/')
				errx(2, "--review-command needs an absolute "
				    "path");
			a->rargv = &argv[i + 1];
			break;
		} else if (strcmp(s, "-v") == 0)
			a->verbose++;
		else if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0)
			usage(stdout, 0);
		else if (strcmp(s, "-V") == 0 || strcmp(s, "--version") == 0) {
			printf("pisbx-supervisor %s\n", PISBX_VERSION);
			return 0;
		} else
			usage(stderr, 2);
	}
	return -1;
}

/*
 * --push runs on its own: 1 when it ran (its exit status in *rc), else 0
 * after --interactive found its terminal and runtime files and the
 * options were found to go together (errors exit here).
 */
static int
main_modes(struct main_state *ms, struct main_args *a, int *rc)
{
	int	 fd;

	if (a->push != NULL) {
		*rc = push_main(a->push, a->o.socket_path, a->verbose);
		return 1;
	}
	if (a->o.interactive) {
		if (a->rargv != NULL)
			errx(2, "--interactive and --review-command exclude "
			    "each other");
		/* A person answers: there has to be one. */
		if ((fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)) ==
		    -1)
			errx(2, "--interactive needs a terminal to ask at: "
			    "/dev/tty: %s", strerror(errno));
		close(fd);
		a->o.review_tty = 1;
		if ((ms->envfile = runtime_path(SUPERVISOR_ENV_FILE)) == NULL)
			exit(2);
		if (a->o.socket_path == NULL) {
			if ((ms->defsock = runtime_path(SUPERVISOR_SOCKET_FILE))
			    == NULL)
				exit(2);
			a->o.socket_path = ms->defsock;
		}
		if (strchr(a->o.socket_path, '\n') != NULL)
			errx(2, "--socket: a newline in the path");
	}
	if (a->o.socket_path == NULL)
		usage(stderr, 2);
	if (a->o.review_tty && a->rargv != NULL)
		errx(2, "--tty and --review-command exclude each other");
	return 0;
}

/*
 * Load the trusted config into ms and take from it the network policy,
 * the policy file to name and, unless the command line chose, the
 * reviewer and its timeout; a bad config exits here.
 */
static void
main_config(struct main_state *ms, struct main_args *a)
{
	struct config_errors	 errs = { NULL, 0 };
	char			*text;
	size_t			 i, len;

	ms->path = config_find(a->cli_config);
	if ((ms->conf = config_load(ms->path, &errs)) == NULL) {
		for (i = 0; i < errs.n; i++)
			fprintf(stderr, "pisbx-supervisor: %s\n", errs.msg[i]);
		errx(78, "%zu error(s) in the config; not started", errs.n);
	}
	if (ms->path != NULL) {
		if ((text = read_file(ms->path, &len)) == NULL)
			err(78, "%s", ms->path);
	} else if ((text = strdup(pisbx_default_config)) == NULL)
		err(1, "strdup");
	else
		len = strlen(text);
	if ((ms->net = supervisor_network_json(text, len)) == NULL)
		errx(78, "%s: cannot read the network policy",
		    ms->path != NULL ? ms->path : "(embedded default)");
	free(text);
	a->o.network_json = ms->net;
	/*
	 * The file a person edits to change the workers' policy: the
	 * config read, else the per-user one the embedded default stands
	 * in for.  pisbx-run's refusals name it.
	 */
	if (ms->path != NULL)
		ms->policy_file = strdup(ms->conf->path);
	else
		ms->policy_file = config_user_path();
	a->o.policy_file = ms->policy_file;

	/* The command line's reviewer wins over the config's. */
	if (a->rargv == NULL && !a->o.review_tty) {
		switch (ms->conf->review_mode) {
		case REVIEW_COMMAND:
			if ((a->rargv = calloc(ms->conf->review_command.n + 1,
			    sizeof(char *))) == NULL)
				err(1, "calloc");
			ms->rargv_alloc = 1;
			for (i = 0; i < ms->conf->review_command.n; i++)
				a->rargv[i] = ms->conf->review_command.v[i];
			break;
		case REVIEW_TTY:
			a->o.review_tty = 1;
			break;
		case REVIEW_SOCKET:
			errx(78, "%s: review.socket names another supervisor; "
			    "give pisbx-supervisor a review command or --tty",
			    ms->conf->path);
		case REVIEW_NONE:
			break;
		}
	}
	a->o.review_argv = a->rargv;
	if (a->o.review_timeout_ms == 0)
		a->o.review_timeout_ms = ms->conf->review_timeout_ms;
}

/*
 * The capability into ms->cap: the agent host's own when it set one, else
 * a fresh 256-bit secret printed once, for the agent host's environment.
 */
static void
main_capability(struct main_state *ms, struct main_args *a)
{
	unsigned char	 rnd[CAPABILITY_BYTES];
	const char	*env;
	size_t		 i;

	env = policy_env_take(SUPERVISOR_CAPABILITY_ENV);
	if (env != NULL && *env != '\0') {
		if (strlen(env) >= sizeof(ms->cap))
			errx(2, "%s is too long (at most %zu characters)",
			    SUPERVISOR_CAPABILITY_ENV, sizeof(ms->cap) - 1);
		snprintf(ms->cap, sizeof(ms->cap), "%s", env);
		if (strchr(ms->cap, '\n') != NULL)
			errx(2, "%s holds a newline", SUPERVISOR_CAPABILITY_ENV);
		ms->from_env = 1;
	} else {
		if (RAND_bytes(rnd, sizeof(rnd)) != 1)
			errx(1, "no random bytes for a capability");
		for (i = 0; i < sizeof(rnd); i++)
			snprintf(ms->cap + 2 * i, 3, "%02x", rnd[i]);
		OPENSSL_cleanse(rnd, sizeof(rnd));
	}
	a->o.capability = ms->cap;
}

/*
 * Serve: start the supervisor, print the line to export (or write the
 * --interactive file) and run the loop until a stopping signal.
 */
static void
main_start(struct main_state *ms, struct main_args *a)
{
	struct event		*ev[4];
	static const int	 sigs[4] = { SIGUSR1, SIGTERM, SIGINT, SIGHUP };
	char			 errbuf[512];
	char			*q;
	size_t			 i;

	signal(SIGPIPE, SIG_IGN);
	if ((ms->base = event_base_new()) == NULL)
		errx(1, "cannot create an event base");
	if ((sup = supervisor_new(ms->base, &a->o, errbuf, sizeof(errbuf))) ==
	    NULL)
		errx(1, "%s", errbuf);
	for (i = 0; i < 4; i++)
		if ((ev[i] = evsignal_new(ms->base, sigs[i], signal_cb,
		    ms->base)) == NULL || evsignal_add(ev[i], NULL) == -1)
			errx(1, "cannot watch signal %d", sigs[i]);

	if ((q = malloc(SHELL_QUOTE_SIZE(strlen(a->o.socket_path)))) == NULL)
		err(1, "malloc");
	shell_quote(q, a->o.socket_path);
	if (ms->envfile != NULL) {
		/* The capability goes in the file only, never on the screen. */
		if (envfile_write(ms->envfile, a->o.socket_path, ms->cap,
		    &ms->envino) == -1) {
			supervisor_free(sup);
			exit(1);
		}
		printf("pisbx-supervisor: asking here for the commands that "
		    "register on %s;\n"
		    "pisbx-supervisor: pisbx-run and pisbx-sh find it through "
		    "%s (^C stops)\n", a->o.socket_path, ms->envfile);
	} else if (ms->from_env)
		printf("export %s=%s\n", SUPERVISOR_SOCKET_ENV, q);
	else
		printf("export %s=%s %s=%s\n", SUPERVISOR_SOCKET_ENV, q,
		    SUPERVISOR_CAPABILITY_ENV, ms->cap);
	fflush(stdout);
	free(q);
	log_info("listening on %s (%s)", a->o.socket_path,
	    a->o.review_tty ? "reviews at the terminal" :
	    a->o.review_argv != NULL ? "reviews by command" :
	    "no reviewer: reviews denied");

	event_base_dispatch(ms->base);

	for (i = 0; i < 4; i++)
		event_free(ev[i]);
}

int
main(int argc, char *argv[])
{
	struct main_state	 ms;
	struct main_args	 a;
	struct stat		 st;
	int			 rc;

	memset(&ms, 0, sizeof(ms));
	memset(&a, 0, sizeof(a));
	if ((rc = main_options(&a, argc, argv)) != -1)
		return rc;
	if (main_modes(&ms, &a, &rc))
		return rc;
	log_init("pisbx-supervisor", a.verbose);
	main_config(&ms, &a);
	main_capability(&ms, &a);
	main_start(&ms, &a);

	/* Ours only: another supervisor may have replaced it meanwhile. */
	if (ms.envfile != NULL && stat(ms.envfile, &st) == 0 &&
	    st.st_ino == ms.envino)
		unlink(ms.envfile);
	free(ms.envfile);
	free(ms.defsock);
	free(ms.policy_file);
	supervisor_free(sup);
	event_base_free(ms.base);
	OPENSSL_cleanse(ms.cap, sizeof(ms.cap));
	if (ms.rargv_alloc)
		free(a.rargv);
	free(ms.net);
	free(ms.path);
	config_free(ms.conf);
	return 0;
}

/*
 * --push FILE: the socket from --socket or the environment, the
 * capability from the environment (it never goes on a command line).
 */
static int
push_main(const char *file, const char *socket, int verbose)
{
	const char	*cap;

	log_init("pisbx-supervisor", verbose);
	if (socket == NULL && (socket = getenv(SUPERVISOR_SOCKET_ENV)) ==
	    NULL) {
		fprintf(stderr, "pisbx-supervisor: --push: which supervisor? "
		    "give --socket PATH or set %s\n", SUPERVISOR_SOCKET_ENV);
		return 2;
	}
	if ((cap = policy_env_take(SUPERVISOR_CAPABILITY_ENV)) == NULL ||
	    *cap == '\0') {
		fprintf(stderr, "pisbx-supervisor: --push: set %s to the "
		    "supervisor's capability (as its workers have it)\n",
		    SUPERVISOR_CAPABILITY_ENV);
		return 2;
	}
	return supervisor_push_main(file, socket, cap);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct event_base	*base = arg;

	(void)what;
	switch (sig) {
	case SIGUSR1:
		supervisor_dump(sup, STDERR_FILENO);
		break;
	default:
		log_info("signal %d: stopping", (int)sig);
		event_base_loopbreak(base);
		break;
	}
}

static char *
read_file(const char *path, size_t *len)
{
	FILE	*f;
	char	*buf = NULL;
	size_t	 cap = 0;

	if ((f = fopen(path, "re")) == NULL)
		return NULL;
	if (getdelim(&buf, &cap, '\0', f) == -1) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	if (buf != NULL)
		*len = strlen(buf);
	return buf;
}

/*
 * $XDG_RUNTIME_DIR/rel, after checking that the runtime directory is the
 * user's own and closed to others (pisbx-run hides it from every
 * sandbox) and making its pisbx directory (mode 0700).  NULL, said, when
 * it cannot be used.
 */
static char *
runtime_path(const char *rel)
{
	struct stat	 st;
	const char	*dir = getenv("XDG_RUNTIME_DIR");
	char		*p = NULL, *sub = NULL;

	if (dir == NULL || dir[0] != '/') {
		warnx("--interactive: XDG_RUNTIME_DIR is not set to an "
		    "absolute path; set it to a directory of yours with mode "
		    "0700 (a login session's /run/user/%ld)", (long)getuid());
		return NULL;
	}
	if (stat(dir, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != getuid() || (st.st_mode & 077) != 0) {
		warnx("--interactive: XDG_RUNTIME_DIR %s is not a directory "
		    "of yours closed to others (mode 0700)", dir);
		return NULL;
	}
	if (asprintf(&sub, "%s/%s", dir, SUPERVISOR_DIR) == -1 ||
	    asprintf(&p, "%s/%s", dir, rel) == -1) {
		warnx("out of memory");
		goto fail;
	}
	if (mkdir(sub, 0700) == -1 && errno != EEXIST) {
		warn("--interactive: %s", sub);
		goto fail;
	}
	if (lstat(sub, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != getuid() || (st.st_mode & 077) != 0) {
		warnx("--interactive: %s is not a directory of yours closed "
		    "to others (mode 0700)", sub);
		goto fail;
	}
	free(sub);
	return p;
fail:
	free(sub);
	free(p);
	return NULL;
}

/*
 * Write the file pisbx-run reads when its supervisor variables are unset:
 * made mode 0600 under a temporary name, then renamed over path, so a
 * reader never sees half of it.  Its inode in *ino; -1 when it failed.
 */
static int
envfile_write(const char *path, const char *sock, const char *cap,
    ino_t *ino)
{
	struct stat	 st;
	char		*tmp = NULL, *text = NULL;
	int		 fd = -1, n;

	if (asprintf(&tmp, "%s.%ld", path, (long)getpid()) == -1 ||
	    (n = asprintf(&text, "%s=%s\n%s=%s\n", SUPERVISOR_SOCKET_ENV,
	    sock, SUPERVISOR_CAPABILITY_ENV, cap)) == -1) {
		text = NULL;
		warnx("out of memory");
		goto fail;
	}
	unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1 || io_write_all(fd, text, (size_t)n,
	    0) == -1 || fstat(fd, &st) == -1 || close(fd) == -1) {
		warn("%s", tmp);
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) == -1) {
		warn("%s", path);
		goto fail;
	}
	*ino = st.st_ino;
	OPENSSL_cleanse(text, (size_t)n);
	free(text);
	free(tmp);
	return 0;
fail:
	if (fd != -1)
		close(fd);
	if (tmp != NULL)
		unlink(tmp);
	if (text != NULL) {
		OPENSSL_cleanse(text, strlen(text));
		free(text);
	}
	free(tmp);
	return -1;
}
