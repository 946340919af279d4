/*
 * Filtered copies of the settings files the sandbox is shown from the
 * hidden home: a toolchain needs some of what they say (git's identity
 * and aliases, go's GOPRIVATE, mise's tool versions), while the same
 * files are where people keep registry and forge credentials
 * (url.<https://TOKEN@host/>.insteadOf, http.extraHeader, a credential
 * helper, sendemail.smtpPass, a GOPROXY with a password, mise's [env]).
 * Each filter keeps what is on its list and drops the rest; a file it
 * cannot read as its format is shown empty.  The copies are files of
 * the run directory, made in memory (fsrunfile.c), bound over the
 * originals (fspolicy.c).
 *
 * This file holds what the filters share (the output buffer, the list
 * of names left out) and the copies themselves: a file read, its
 * format's filter run, the result written, git's includes followed.
 * The formats are read in fsfilter_git.c (git's config) and
 * fsfilter_tools.c (go, mise, npm and pip, a JDK's net.properties).
 *
 *   git:  sections on an allow-list (user, alias, core, ...), http with
 *         its non-secret keys only, core without the programs it names
 *         (askPass, sshCommand, fsmonitor); any entry naming a URL with
 *         a user or password, or an Authorization header, dropped;
 *         include.path and includeIf.*.path point at filtered copies of
 *         their files.
 *   go:   every KEY=VALUE line of go's env file but those whose value
 *         names a URL with a user or password.
 *   mise: the [tools] and [alias]/[tool_alias] tables of a TOML file.
 *   ini:  npm's npmrc and pip's pip.conf: every setting but those named
 *         for a credential (_authToken, _auth, password, username,
 *         cert, key, ...) and npm's per-registry ones ("//host/:..."),
 *         with the user and password taken out of every URL, so that a
 *         private registry stays the one asked (and refuses) rather
 *         than a public one standing in for it.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "launcher/fs/fs.h"
#include "launcher/fs/fs_int.h"

#define FSF_MAXFILE	(1024 * 1024)	/* a settings file, at most */
#define FSF_MAXDEPTH	10		/* git's own include depth */
#define FSF_MAXFILES	64		/* copies written for one file */
#define FSF_UNREAD	"everything (not read)"

/* What writing a file's copies needs. */
struct fsf_ctx {
	struct fs_runfiles *files;
	const char	*home;
	int		 nfiles;	/* copies written */
	int		 depth;		/* of the file being read */
	char		*dropped;	/* "sec.key, ..." of them all */
};

static char	 fsf_shown(char);
static char	*fsf_read(const char *path, size_t *len);
static char	*fsf_write(struct fsf_ctx *, const char *name,
		    const struct fsf_buf *);
static char	*fsf_file(struct fsf_ctx *, enum fs_filter, const char *src,
		    int depth);
static char	*fsf_git_include(void *, const char *path, const char *dir);

/* Append n octets of s to b, NUL-terminated; on no memory, b->ok is 0. */
void
fsf_add(struct fsf_buf *b, const char *s, size_t n)
{
	char	*ns;
	size_t	 cap;

	if (!b->ok)
		return;
	if (b->len + n + 1 > b->cap) {
		for (cap = b->cap ? b->cap : 256; cap < b->len + n + 1; cap *= 2)
			;
		if ((ns = realloc(b->s, cap)) == NULL) {
			b->ok = 0;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* Append a printf-formatted text to b, as fsf_add does. */
void
fsf_addf(struct fsf_buf *b, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n == -1) {
		b->ok = 0;
		return;
	}
	fsf_add(b, s, (size_t)n);
	free(s);
}

/*
 * Add a name to a list of names left out ("a, b"), once, as fsf_shown
 * shows it.
 */
int
fsf_drop(char **list, const char *name, size_t len)
{
	const char	*p, *q;
	char		*nl;
	size_t		 have = *list != NULL ? strlen(*list) : 0, i;

	for (p = *list; p != NULL && *p != '\0'; p = q) {
		if ((q = strstr(p, ", ")) == NULL)
			q = p + strlen(p);
		if ((size_t)(q - p) == len) {
			for (i = 0; i < len; i++)
				if (p[i] != fsf_shown(name[i]))
					break;
			if (i == len)
				return 0;
		}
		if (*q != '\0')
			q += 2;
	}
	if ((nl = realloc(*list, have + len + 3)) == NULL)
		return -1;
	if (have > 0) {
		memcpy(nl + have, ", ", 2);
		have += 2;
	}
	for (i = 0; i < len; i++)
		nl[have + i] = fsf_shown(name[i]);
	nl[have + len] = '\0';
	*list = nl;
	return 0;
}

/* An octet of a name as -v shows it: '?' outside "_.-[]()/:@ " and alnum. */
static char
fsf_shown(char c)
{
	return isalnum((unsigned char)c) || (c != '\0' &&
	    strchr("_.-[]()/:@ ", c) != NULL) ? c : '?';
}

/* Hand b to out when rc is 0, else free it: rc. */
int
fsf_result(struct fsfilter_out *out, struct fsf_buf *b, int rc)
{
	if (rc == 0) {
		out->text = b->s;
		out->len = b->len;
	} else
		free(b->s);
	return rc;
}

/* Whether s is one of the n strings of v, in any case. */
int
fsf_in(const char *const *v, size_t n, const char *s)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strcasecmp(v[i], s) == 0)
			return 1;
	return 0;
}

/*
 * Whether s names a URL with a user or a password ("scheme://u:p@h",
 * "scheme://token@h") or an Authorization header: a credential.
 */
int
fsfilter_secret(const char *s)
{
	const char	*p, *q;

	for (p = s; (p = strstr(p, "://")) != NULL; p += 3) {
		for (q = p + 3; *q != '\0' && strchr("/?#", *q) == NULL &&
		    !isspace((unsigned char)*q) && *q != '"' && *q != '\'';
		    q++)
			if (*q == '@')
				return 1;
	}
	for (p = s; *p != '\0'; p++)
		if (strncasecmp(p, "authorization", 13) == 0 ||
		    strncasecmp(p, "private-token", 13) == 0)
			return 1;
	return 0;
}

/* A regular file of at most FSF_MAXFILE octets, NUL-terminated. */
static char *
fsf_read(const char *path, size_t *len)
{
	struct stat	 st;
	char		*s = NULL;
	ssize_t		 n;
	size_t		 off = 0;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return NULL;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > FSF_MAXFILE ||
	    (s = malloc((size_t)st.st_size + 1)) == NULL)
		goto fail;
	while (off < (size_t)st.st_size &&
	    (n = read(fd, s + off, (size_t)st.st_size - off)) > 0)
		off += (size_t)n;
	close(fd);
	s[off] = '\0';
	*len = off;
	return s;
fail:
	close(fd);
	free(s);
	return NULL;
}

/* b as a new file of the run directory: its path, or NULL. */
static char *
fsf_write(struct fsf_ctx *c, const char *name, const struct fsf_buf *b)
{
	c->nfiles++;
	return fs_runfile_add(c->files, name, 1, 0644, b->s != NULL ? b->s :
	    "", b->len);
}

/* The filtered copy of an included git config file, or NULL: none. */
static char *
fsf_git_include(void *arg, const char *path, const char *dir)
{
	struct fsf_ctx	*c = arg;
	char		*abs = NULL, *copy;
	int		 depth = c->depth;

	/* Relative to the including file; "~/" from the home. */
	if (path[0] == '~' && path[1] == '/') {
		if (c->home == NULL || asprintf(&abs, "%s/%s", c->home,
		    path + 2) == -1)
			return NULL;
	} else if (path[0] == '/')
		abs = strdup(path);
	else if (path[0] != '~' && asprintf(&abs, "%s/%s", dir, path) == -1)
		abs = NULL;
	if (abs == NULL)
		return NULL;
	copy = fsf_file(c, FS_FILTER_GIT, abs, depth + 1);
	c->depth = depth;
	free(abs);
	return copy;
}

/*
 * The filtered copy of src, among the run directory's files; a file
 * that cannot be read as its format is written empty (nothing of it is
 * shown).  NULL: src cannot be read, or past the bounds.
 */
static char *
fsf_file(struct fsf_ctx *c, enum fs_filter kind, const char *src, int depth)
{
	static const char *const names[] = { "", "gitconfig", "goenv",
	    "mise", "ini", "net.properties" };
	struct fsf_buf		 b = { NULL, 0, 0, 1 };
	struct fsfilter_out	 out;
	char			*text, *dir, *slash, *path, *p, *q;
	size_t			 len;
	int			 rc;

	if (depth > FSF_MAXDEPTH || c->nfiles >= FSF_MAXFILES ||
	    (text = fsf_read(src, &len)) == NULL)
		return NULL;
	memset(&out, 0, sizeof(out));
	c->depth = depth;
	switch (kind) {
	case FS_FILTER_GIT:
		if ((dir = strdup(src)) == NULL) {
			rc = -1;
			break;
		}
		if ((slash = strrchr(dir, '/')) != NULL)
			*slash = '\0';
		rc = fsfilter_git(text, len, fsf_git_include, c, dir, &out);
		free(dir);
		break;
	case FS_FILTER_GOENV:
		rc = fsfilter_goenv(text, len, &out);
		break;
	case FS_FILTER_MISE:
		rc = fsfilter_mise(text, len, &out);
		break;
	case FS_FILTER_INI:
		rc = fsfilter_ini(text, len, &out);
		break;
	case FS_FILTER_JAVANET:
		rc = fsfilter_javanet(text, len, &out);
		break;
	default:
		rc = -1;
		break;
	}
	free(text);
	/* This file's names join those of the files it includes. */
	for (p = out.dropped; p != NULL && *p != '\0'; p = q) {
		if ((q = strstr(p, ", ")) == NULL)
			q = p + strlen(p);
		if (fsf_drop(&c->dropped, p, (size_t)(q - p)) == -1)
			rc = -1;
		if (*q != '\0')
			q += 2;
	}
	free(out.dropped);
	if (rc == -1) {
		log_warnx("%s: not read as a %s file: the sandbox sees it "
		    "empty", src, names[kind]);
		if (fsf_drop(&c->dropped, FSF_UNREAD, strlen(FSF_UNREAD)) ==
		    -1)
			return NULL;
	} else {
		b.s = out.text;
		b.len = out.len;
	}
	path = fsf_write(c, names[kind], &b);
	free(b.s);
	return path;
}

/* The filtered copy of src and of the files it includes (fs.h). */
char *
fsfilter_copy(enum fs_filter kind, const char *src, struct fs_runfiles *files,
    const char *home, char **dropped)
{
	struct fsf_ctx	 c;
	char		*path;

	memset(&c, 0, sizeof(c));
	c.files = files;
	c.home = home;
	path = fsf_file(&c, kind, src, 0);
	if (path != NULL && dropped != NULL) {
		*dropped = c.dropped;
		c.dropped = NULL;
	}
	free(c.dropped);
	return path;
}
