/*
 * The parent's reader of the creation guard's records.  The guard, in
 * the reaper, tells the parent on report_fd (a SOCK_SEQPACKET socket, one
 * record a message, the format in guard/guard.h) about every git
 * repository the command made, every one renamed, every git operation
 * state it wrote in an older repository, and every refusal.  The parent
 * collects them while the command runs (guard_report_read, from its
 * event loop, until EOF) and, after the run, replays them: renames
 * rewrite the paths before them, refusals go to the run's summary, and
 * every repository or operation state that still exists and would have
 * git run more than a fresh clone does is named in a warning (git/);
 * the TCP connects to the sandbox's loopback that nothing answered go to
 * the summary while the config is still there (guard_report_loopback).
 * The channel is the guard's alone; each record is still checked whole
 * before it is kept.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/git/git.h"
#include "launcher/fs/fs.h"
#include "launcher/guard/guard.h"
#include "launcher/run/run.h"

/* The parent's collection of the guard's records. */
struct guard_report {
	char	*buf;
	size_t	 len;
	size_t	 cap;
	int	 lost;		/* records past the bound were dropped */
};

static int	guard_report_nfields(char);
static int	guard_report_valid(const char *, size_t);
static int	guard_report_sockverb(const char *);
static void	guard_report_states(char **, size_t, int lost);

struct guard_report *
guard_report_new(void)
{
	return calloc(1, sizeof(struct guard_report));
}

/* How many fields a record of the tag has (guard/guard.h), or -1. */
static int
guard_report_nfields(char tag)
{
	switch (tag) {
	case REPORT_FULL:
	case REPORT_REFUSED_MORE:
	case REPORT_STATE_LOST:
		return 0;
	case REPORT_REPO:
	case REPORT_STATE:
		return 1;
	case REPORT_MOVED:
	case REPORT_LOOPBACK:
		return 2;
	case REPORT_REFUSED:
		return 3;
	default:
		return -1;
	}
}

/*
 * Whether one message is a whole record as guard_send makes them: a known
 * tag, exactly its fields, each NUL-terminated, the paths absolute.  The
 * channel is the guard's alone; this is a second wall.
 */
static int
guard_report_valid(const char *m, size_t len)
{
	const char	*p = m + 1, *end = m + len, *z;
	int		 want, i;

	if (len == 0 || (want = guard_report_nfields(m[0])) == -1)
		return 0;
	for (i = 0; i < want; i++) {
		if ((z = memchr(p, '\0', (size_t)(end - p))) == NULL)
			return 0;
		/*
		 * Every path is absolute: a refusal's second field, unless
		 * a socket call's refusal names an address or a socket
		 * (guard/nons.c: "connect to 127.0.0.1:22"; guard/unix.c:
		 * "make a Unix datagram socket").  A loopback
		 * record holds an address and a port, no path.
		 */
		if (m[0] != REPORT_LOOPBACK && (m[0] != REPORT_REFUSED ||
		    i == 1) && p[0] != '/' && !(m[0] == REPORT_REFUSED &&
		    i == 1 && p[0] != '\0' && guard_report_sockverb(m + 1)))
			return 0;
		p = z + 1;
	}
	return p == end;
}

/* Whether a refusal's verb is a socket call's, which names no file. */
static int
guard_report_sockverb(const char *verb)
{
	static const char *const verbs[] = {
		"connect to", "send to", "send on", "bind", "listen on",
		"make",
	};
	size_t	i;

	for (i = 0; i < sizeof(verbs) / sizeof(*verbs); i++)
		if (strcmp(verb, verbs[i]) == 0)
			return 1;
	return 0;
}

/*
 * Append the records readable on fd (non-blocking), one a message; a
 * message that is not a whole record is dropped, and said once.  0 at
 * EOF, 1 when more may come, -1 on error.
 */
int
guard_report_read(struct guard_report *r, int fd)
{
	static int	 told;
	char		 m[4 * PATH_MAX + 1024], *nb;
	ssize_t		 n;

	for (;;) {
		n = recv(fd, m, sizeof(m), MSG_TRUNC);
		if (n == 0)
			return 0;
		if (n == -1)
			return errno == EAGAIN || errno == EINTR ? 1 : -1;
		if ((size_t)n > sizeof(m) || !guard_report_valid(m,
		    (size_t)n)) {
			if (!told++)
				log_warnx("ignored a malformed record from "
				    "the creation guard");
			continue;
		}
		if (r->cap - r->len < (size_t)n) {
			/*
			 * A bound: the guard follows GUARD_MAXREPOS and
			 * GUARD_MAXSTATESENT.  Past it (moves are not
			 * counted), records are dropped, and that is said.
			 */
			if (r->cap >= (size_t)(GUARD_MAXREPOS * 3 +
			    GUARD_MAXREFUSED * 3 + GUARD_MAXSTATESENT) *
			    PATH_MAX) {
				r->lost = 1;
				continue;
			}
			if ((nb = realloc(r->buf, r->cap + 65536)) == NULL)
				return -1;
			r->buf = nb;
			r->cap += 65536;
		}
		memcpy(r->buf + r->len, m, (size_t)n);
		r->len += (size_t)n;
	}
}

/*
 * Replay the records (moves rewrite the paths before them), then warn
 * about each repository that still exists; refusals go to sum (may be
 * NULL).
 */
void
guard_report_warn(struct guard_report *r, struct summary *sum)
{
	char		*repos[GUARD_MAXREPOS], *s, buf[PATH_MAX];
	char		*states[GUARD_MAXSTATESENT];
	const char	*p = r->buf, *end = r->buf + r->len, *a, *b, *c;
	struct stat	 st;
	size_t		 n = 0, i, j, al, shown = 0, ns = 0;
	int		 full = 0, fd, kind, lost = r->lost;
	struct gitnew_found *found;

	while (p < end) {
		char tag = *p++;

		if (tag == REPORT_FULL) {
			full = 1;
			continue;
		}
		if (tag == REPORT_STATE_LOST) {
			lost = 1;
			continue;
		}
		if (tag == REPORT_REFUSED_MORE) {
			if (sum != NULL)
				summary_more(sum);
			continue;
		}
		a = p;
		if ((p = memchr(p, '\0', (size_t)(end - p))) == NULL)
			break;
		p++;
		if (tag == REPORT_REPO) {
			if (n < GUARD_MAXREPOS && (repos[n] = strdup(a)) != NULL)
				n++;
			continue;
		}
		if (tag == REPORT_STATE) {
			for (i = 0; i < ns; i++)
				if (strcmp(states[i], a) == 0)
					break;
			if (i < ns)
				continue;
			if (ns < GUARD_MAXSTATESENT &&
			    (states[ns] = strdup(a)) != NULL)
				ns++;
			else
				lost = 1;
			continue;
		}
		b = p;
		if ((p = memchr(p, '\0', (size_t)(end - p))) == NULL)
			break;
		p++;
		if (tag == REPORT_REFUSED) {
			c = p;
			if ((p = memchr(p, '\0', (size_t)(end - p))) == NULL)
				break;
			p++;
			if (sum != NULL)
				summary_file(sum, a, b, c);
			continue;
		}
		if (tag == REPORT_LOOPBACK)
			continue;	/* guard_report_loopback's */
		al = strlen(a);
		for (i = 0; i < n; i++) {
			if (strncmp(repos[i], a, al) != 0 || (repos[i][al] !=
			    '\0' && repos[i][al] != '/'))
				continue;
			if ((size_t)snprintf(buf, sizeof(buf), "%s%s", b,
			    repos[i] + al) >= sizeof(buf) ||
			    (s = strdup(buf)) == NULL)
				continue;
			free(repos[i]);
			repos[i] = s;
		}
	}
	/* What each still existing one has beyond a fresh clone. */
	if ((found = calloc(n > 0 ? n : 1, sizeof(*found))) == NULL) {
		log_warn("git repositories made by the command");
		goto done;
	}
	for (i = 0; i < n; i++) {
		gitnew_found_init(&found[i]);
		if ((fd = open(repos[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
		    -1)
			continue;
		/* 1: a repository (with a .git), 2: a bare one, 0: gone. */
		kind = 0;
		if (fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0)
			kind = 1;
		else if (guard_shape(fd))
			kind = 2;
		if (kind != 0)
			gitnew_check(fd, kind == 2, &found[i]);
		close(fd);
	}
	for (i = 0; i < n; i++) {
		if (found[i].n == 0)
			continue;
		/*
		 * One inside another named is part of it (a clone's
		 * submodules); inside one with nothing to name, it is named.
		 */
		for (j = 0; j < n; j++)
			if (j != i && found[j].n != 0 &&
			    fs_under(repos[i], repos[j]) &&
			    strcmp(repos[i], repos[j]) != 0)
				break;
		if (j < n || shown++ >= 10)
			continue;
		log_warnx("the command made a git repository at %s with "
		    "more than a fresh clone has, which git may run: %s; look "
		    "at it before you run git there", repos[i], found[i].text);
	}
	if (shown > 10 || full)
		log_warnx("the command made more git repositories than "
		    "listed here");
	free(found);
done:
	for (i = 0; i < n; i++)
		free(repos[i]);
	guard_report_states(states, ns, lost);
	for (i = 0; i < ns; i++)
		free(states[i]);
}

/*
 * Warn about each git operation state the command wrote in a repository
 * older than the run that, as it is now, would run a program when the
 * user continues it outside the sandbox; lost: the guard's records did
 * not all arrive.
 */
static void
guard_report_states(char **states, size_t n, int lost)
{
	struct gitnew_found	 f;
	const char		*base, *what, *abort;
	size_t			 i, shown = 0;

	for (i = 0; i < n; i++) {
		gitnew_found_init(&f);
		if (!gitstate_check(states[i], &f))
			continue;
		if (shown++ >= 10)
			continue;
		base = strrchr(states[i], '/');
		base = base != NULL ? base + 1 : states[i];
		if (strcasecmp(base, "sequencer") == 0) {
			what = "cherry-pick or revert";
			abort = "git cherry-pick --abort (or git revert --abort)";
		} else if (strcasecmp(base, "rebase-apply") == 0) {
			what = "rebase or am";
			abort = "git rebase --abort (or git am --abort)";
		} else {
			what = "rebase";
			abort = "git rebase --abort";
		}
		log_warnx("the command left a git %s in progress (%s) that "
		    "would run more than git when continued: %s; look at it, "
		    "or run %s in that repository, before you continue it "
		    "outside the sandbox", what, states[i], f.text, abort);
	}
	if (shown > 10)
		log_warnx("more git operations in progress would run more "
		    "than git than listed here");
	if (lost)
		log_warnx("the command wrote the state of more git rebases, "
		    "cherry-picks or ams than pisbx-run followed: look at "
		    "\"git status\" in each repository it could write, and at "
		    "the todo list of any operation in progress, before you "
		    "continue one outside the sandbox");
}

/*
 * Walk the kept records for the loopback ones (an address, a port) and
 * hand each to the summary with what conf says of the port.
 */
void
guard_report_loopback(const struct guard_report *r, struct summary *sum,
    const struct config *conf)
{
	const char	*p = r->buf, *end = r->buf + r->len, *a, *b, *z;
	char		*e;
	unsigned long	 port;
	int		 i, n;

	while (p < end) {
		char tag = *p++;

		/* Every kept record was checked whole (guard_report_valid). */
		if ((n = guard_report_nfields(tag)) == -1)
			return;
		a = b = p;
		for (i = 0; i < n; i++) {
			if ((z = memchr(p, '\0', (size_t)(end - p))) == NULL)
				return;
			if (i == 1)
				b = p;
			p = z + 1;
		}
		if (tag != REPORT_LOOPBACK)
			continue;
		port = strtoul(b, &e, 10);
		if (*e != '\0' || port == 0 || port > 65535)
			continue;
		summary_loopback(sum, a, (unsigned int)port, conf);
	}
}

void
guard_report_free(struct guard_report *r)
{
	if (r == NULL)
		return;
	free(r->buf);
	free(r);
}
