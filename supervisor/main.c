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

static void	 usage(FILE *, int) __attribute__((noreturn));
static int	 push_main(const char *, const char *, int);
static void	 signal_cb(evutil_socket_t, short, void *);
static char	*read_file(const char *, size_t *);
static char	*runtime_path(const char *);
static int	 envfile_write(const char *, const char *, const char *,
		    ino_t *);

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

int
main(int argc, char *argv[])
{
	struct supervisor_opts	 o;
	struct config_errors	 errs = { NULL, 0 };
	struct stat		 st;
	struct config		*conf;
	struct event_base	*base;
	struct event		*ev[4];
	static const int	 sigs[4] = { SIGUSR1, SIGTERM, SIGINT, SIGHUP };
	const char		*cli_config = NULL, *env, *push = NULL;
	unsigned char		 rnd[CAPABILITY_BYTES];
	char			 cap[CAPABILITY_BYTES * 2 + 1];
	char			 errbuf[512];
	char			*path, *text, *net, *q;
	char			*envfile = NULL, *defsock = NULL;
	char			*policy_file = NULL;
	char			**rargv = NULL;
	size_t			 i, len;
	ino_t			 envino = 0;
	int			 verbose = 0, from_env = 0, rargv_alloc = 0;
	int			 fd;

	memset(&o, 0, sizeof(o));
	for (i = 1; i < (size_t)argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--config") == 0 && i + 1 < (size_t)argc)
			cli_config = argv[++i];
		else if (strcmp(a, "--socket") == 0 && i + 1 < (size_t)argc)
			o.socket_path = argv[++i];
		else if (strcmp(a, "--push") == 0 && i + 1 < (size_t)argc)
			push = argv[++i];
		else if (strcmp(a, "--access-log") == 0 && i + 1 <
		    (size_t)argc)
			o.access_log = argv[++i];
		else if (strcmp(a, "--review-timeout") == 0 && i + 1 <
		    (size_t)argc) {
			o.review_timeout_ms = atoi(argv[++i]);
			if (o.review_timeout_ms <= 0)
				usage(stderr, 2);
		} else if (strcmp(a, "--tty") == 0)
			o.review_tty = 1;
		else if (strcmp(a, "--interactive") == 0)
			o.interactive = 1;
		else if (strcmp(a, "--review-command") == 0) {
			/* The rest of the line is the reviewer's argv. */
			if (i + 1 >= (size_t)argc || argv[i + 1][0] != '/')
				errx(2, "--review-command needs an absolute "
				    "path");
			rargv = &argv[i + 1];
			break;
		} else if (strcmp(a, "-v") == 0)
			verbose++;
		else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
			usage(stdout, 0);
		else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
			printf("pisbx-supervisor %s\n", PISBX_VERSION);
			return 0;
		} else
			usage(stderr, 2);
	}
	if (push != NULL)
		return push_main(push, o.socket_path, verbose);
	if (o.interactive) {
		if (rargv != NULL)
			errx(2, "--interactive and --review-command exclude "
			    "each other");
		/* A person answers: there has to be one. */
		if ((fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)) ==
		    -1)
			errx(2, "--interactive needs a terminal to ask at: "
			    "/dev/tty: %s", strerror(errno));
		close(fd);
		o.review_tty = 1;
		if ((envfile = runtime_path(SUPERVISOR_ENV_FILE)) == NULL)
			exit(2);
		if (o.socket_path == NULL) {
			if ((defsock = runtime_path(SUPERVISOR_SOCKET_FILE)) ==
			    NULL)
				exit(2);
			o.socket_path = defsock;
		}
		if (strchr(o.socket_path, '\n') != NULL)
			errx(2, "--socket: a newline in the path");
	}
	if (o.socket_path == NULL)
		usage(stderr, 2);
	if (o.review_tty && rargv != NULL)
		errx(2, "--tty and --review-command exclude each other");
	log_init("pisbx-supervisor", verbose);

	path = config_find(cli_config);
	if ((conf = config_load(path, &errs)) == NULL) {
		for (i = 0; i < errs.n; i++)
			fprintf(stderr, "pisbx-supervisor: %s\n", errs.msg[i]);
		errx(78, "%zu error(s) in the config; not started", errs.n);
	}
	if (path != NULL) {
		if ((text = read_file(path, &len)) == NULL)
			err(78, "%s", path);
	} else if ((text = strdup(pisbx_default_config)) == NULL)
		err(1, "strdup");
	else
		len = strlen(text);
	if ((net = supervisor_network_json(text, len)) == NULL)
		errx(78, "%s: cannot read the network policy",
		    path != NULL ? path : "(embedded default)");
	free(text);
	o.network_json = net;
	/*
	 * The file a person edits to change the workers' policy: the
	 * config read, else the per-user one the embedded default stands
	 * in for.  pisbx-run's refusals name it.
	 */
	if (path != NULL)
		policy_file = strdup(conf->path);
	else
		policy_file = config_user_path();
	o.policy_file = policy_file;

	/* The command line's reviewer wins over the config's. */
	if (rargv == NULL && !o.review_tty) {
		switch (conf->review_mode) {
		case REVIEW_COMMAND:
			if ((rargv = calloc(conf->review_command.n + 1,
			    sizeof(char *))) == NULL)
				err(1, "calloc");
			rargv_alloc = 1;
			for (i = 0; i < conf->review_command.n; i++)
				rargv[i] = conf->review_command.v[i];
			break;
		case REVIEW_TTY:
			o.review_tty = 1;
			break;
		case REVIEW_SOCKET:
			errx(78, "%s: review.socket names another supervisor; "
			    "give pisbx-supervisor a review command or --tty",
			    conf->path);
		case REVIEW_NONE:
			break;
		}
	}
	o.review_argv = rargv;
	if (o.review_timeout_ms == 0)
		o.review_timeout_ms = conf->review_timeout_ms;

	/*
	 * The capability: the agent host's own when it set one, else a fresh
	 * 256-bit secret printed once, for the agent host's environment.
	 */
	env = policy_env_take(SUPERVISOR_CAPABILITY_ENV);
	if (env != NULL && *env != '\0') {
		if (strlen(env) >= sizeof(cap))
			errx(2, "%s is too long (at most %zu characters)",
			    SUPERVISOR_CAPABILITY_ENV, sizeof(cap) - 1);
		snprintf(cap, sizeof(cap), "%s", env);
		if (strchr(cap, '\n') != NULL)
			errx(2, "%s holds a newline", SUPERVISOR_CAPABILITY_ENV);
		from_env = 1;
	} else {
		if (RAND_bytes(rnd, sizeof(rnd)) != 1)
			errx(1, "no random bytes for a capability");
		for (i = 0; i < sizeof(rnd); i++)
			snprintf(cap + 2 * i, 3, "%02x", rnd[i]);
		OPENSSL_cleanse(rnd, sizeof(rnd));
	}
	o.capability = cap;

	signal(SIGPIPE, SIG_IGN);
	if ((base = event_base_new()) == NULL)
		errx(1, "cannot create an event base");
	if ((sup = supervisor_new(base, &o, errbuf, sizeof(errbuf))) == NULL)
		errx(1, "%s", errbuf);
	for (i = 0; i < 4; i++)
		if ((ev[i] = evsignal_new(base, sigs[i], signal_cb, base)) ==
		    NULL || evsignal_add(ev[i], NULL) == -1)
			errx(1, "cannot watch signal %d", sigs[i]);

	if ((q = malloc(SHELL_QUOTE_SIZE(strlen(o.socket_path)))) == NULL)
		err(1, "malloc");
	shell_quote(q, o.socket_path);
	if (envfile != NULL) {
		/* The capability goes in the file only, never on the screen. */
		if (envfile_write(envfile, o.socket_path, cap, &envino) == -1) {
			supervisor_free(sup);
			exit(1);
		}
		printf("pisbx-supervisor: asking here for the commands that "
		    "register on %s;\n"
		    "pisbx-supervisor: pisbx-run and pisbx-sh find it through "
		    "%s (^C stops)\n", o.socket_path, envfile);
	} else if (from_env)
		printf("export %s=%s\n", SUPERVISOR_SOCKET_ENV, q);
	else
		printf("export %s=%s %s=%s\n", SUPERVISOR_SOCKET_ENV, q,
		    SUPERVISOR_CAPABILITY_ENV, cap);
	fflush(stdout);
	free(q);
	log_info("listening on %s (%s)", o.socket_path,
	    o.review_tty ? "reviews at the terminal" : o.review_argv != NULL ?
	    "reviews by command" : "no reviewer: reviews denied");

	event_base_dispatch(base);

	for (i = 0; i < 4; i++)
		event_free(ev[i]);
	/* Ours only: another supervisor may have replaced it meanwhile. */
	if (envfile != NULL && stat(envfile, &st) == 0 && st.st_ino == envino)
		unlink(envfile);
	free(envfile);
	free(defsock);
	free(policy_file);
	supervisor_free(sup);
	event_base_free(base);
	OPENSSL_cleanse(cap, sizeof(cap));
	if (rargv_alloc)
		free(rargv);
	free(net);
	free(path);
	config_free(conf);
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
