/*
 * What a git repository the command made during the run would have git
 * run, for the warning after the run (guard_report_warn).  The
 * repository's config and hooks came from the sandbox, and git runs
 * them outside (core.fsmonitor, core.sshCommand, a filter, a hook), in
 * it or in a repository that takes it in as a submodule.
 *
 * The check is an allow list, not a list of dangerous keys: every
 * setting that git init and git clone do not write, every hook that is
 * not one of git's samples, every file of the git directory a fresh
 * clone does not have (rebase-merge/, whose todo list has exec lines;
 * modules/, worktrees/, commondir) is named, and so is any line of the
 * config this reader does not parse exactly as git would.  A plain
 * clone (git clone, cargo new, git init and commits) names nothing and
 * is not mentioned; anything else is named exactly, so the user knows
 * what to look at.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "launcher/git/git.h"

#define GITNEW_CONFIG_MAX	(1024 * 1024)	/* larger is named unread */
#define GITNEW_SHOWN		6		/* items named, then "..." */

/* A setting git init or git clone writes: section, subsection?, key. */
struct gitnew_key {
	const char	*section;
	int		 sub;
	const char	*key;
};

static const struct gitnew_key gitnew_keys[] = {
	{ "core", 0, "repositoryformatversion" },
	{ "core", 0, "filemode" },
	{ "core", 0, "bare" },
	{ "core", 0, "logallrefupdates" },
	{ "core", 0, "ignorecase" },
	{ "core", 0, "precomposeunicode" },
	{ "core", 0, "symlinks" },
	{ "extensions", 0, "objectformat" },
	{ "extensions", 0, "partialclone" },
	{ "remote", 1, "url" },
	{ "remote", 1, "fetch" },
	{ "remote", 1, "promisor" },
	{ "remote", 1, "partialclonefilter" },
	{ "branch", 1, "remote" },
	{ "branch", 1, "merge" },
	{ "submodule", 1, "url" },
	{ "submodule", 1, "active" },
};

/* The names at the top of a fresh clone's git directory. */
static const char *const gitnew_top[] = {
	"HEAD", "config", "description", "hooks", "info", "objects", "refs",
	"logs", "index", "packed-refs", "shallow", "branches", "FETCH_HEAD",
	"ORIG_HEAD", "COMMIT_EDITMSG", "gc.log",
	/* A merge stopped on a conflict: refs and a message, nothing run. */
	"MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE",
};

/* What info/ may hold: patterns and lists git reads, none run. */
static const char *const gitnew_info[] = {
	"exclude", "attributes", "refs", "sparse-checkout",
};

static int	gitnew_known(const char *const *, size_t, const char *);
static int	gitnew_allowed(const char *, size_t, int, const char *,
		    size_t);
static void	gitnew_readconf(int gitfd, const char *pre,
		    struct gitnew_found *);
static void	gitnew_dir(int gitfd, const char *name, const char *pre,
		    struct gitnew_found *);
static int	gitnew_worktree(int repofd, struct gitnew_found *);
static int	gitnew_common(int entryfd, char *what, size_t len);
static int	gitnew_old(int dirfd, const char *name);
static void	gitnew_gitlinks(int repofd, int gitfd, int depth,
		    struct gitnew_found *);
static void	gitnew_check_at(int repofd, int bare, int depth,
		    struct gitnew_found *);

#define GITNEW_INDEX_MAX	(64 * 1024 * 1024)	/* larger: named */
#define GITNEW_DEPTH		8	/* submodules in submodules */

/* When the run started (gitnew_run_started); 0: nothing is older. */
static struct timespec	gitnew_since;

void
gitnew_run_started(void)
{
	(void)clock_gettime(CLOCK_REALTIME_COARSE, &gitnew_since);
}

void
gitnew_found_init(struct gitnew_found *f)
{
	f->text[0] = '\0';
	f->n = 0;
}

/* Name one item: at most GITNEW_SHOWN, then "...", the rest counted. */
void
gitnew_add(struct gitnew_found *f, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 len = strlen(f->text);
	char	 item[256], *p;
	int	 r;

	if (f->n++ >= GITNEW_SHOWN) {
		if (f->n == GITNEW_SHOWN + 1 && len + 5 < sizeof(f->text))
			strcat(f->text, ", ...");
		return;
	}
	va_start(ap, fmt);
	r = vsnprintf(item, sizeof(item), fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	/* Names come from the sandbox: nothing reaches the terminal raw. */
	for (p = item; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
	(void)snprintf(f->text + len, sizeof(f->text) - len, "%s%s",
	    len > 0 ? ", " : "", item);
}

static int
gitnew_known(const char *const *v, size_t n, const char *name)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return 1;
	return 0;
}

/* Whether git init or clone writes this key (names ignore ASCII case). */
static int
gitnew_allowed(const char *sec, size_t seclen, int sub, const char *key,
    size_t keylen)
{
	const struct gitnew_key	*k;
	size_t			 i;

	for (i = 0; i < sizeof(gitnew_keys) / sizeof(gitnew_keys[0]); i++) {
		k = &gitnew_keys[i];
		if (k->sub == sub && strlen(k->section) == seclen &&
		    strncasecmp(k->section, sec, seclen) == 0 &&
		    strlen(k->key) == keylen &&
		    strncasecmp(k->key, key, keylen) == 0)
			return 1;
	}
	return 0;
}

/*
 * Name each setting of a config text that git init and clone do not
 * write, as "PRE section.sub.key", and each line read otherwise than
 * by this strict reading as "PRE line N".  Values are not looked at:
 * only the keys are allowed.  A value continued on the next line (a
 * backslash at the end) makes that line look like a line of its own
 * here: a header there moves us to another section while git stays in
 * the one before, which can only be a section of the allow list (its
 * key with the backslash was allowed).  Every allowed key name is
 * inert in every such section (core.url, remote.o.bare), so git still
 * sees nothing that runs.
 */
void
gitnew_config(const char *text, size_t len, const char *pre,
    struct gitnew_found *f)
{
	const char	*p = text, *end = text + len, *eol, *sec = NULL, *s;
	const char	*subp = NULL, *k;
	size_t		 seclen = 0, sublen = 0, klen, line = 0;
	int		 sub = 0;

	if (memchr(text, '\0', len) != NULL) {
		gitnew_add(f, "%s (a NUL byte)", pre);
		return;
	}
	for (; p < end; p = eol + 1) {
		line++;
		if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
			eol = end;
		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (p == eol || *p == '#' || *p == ';' || (*p == '\r' &&
		    p + 1 == eol))
			continue;
		if (*p == '[') {
			/* [section] or [section "sub"], nothing after. */
			s = ++p;
			while (p < eol && (isalnum((unsigned char)*p) ||
			    *p == '-'))
				p++;
			sec = s;
			seclen = (size_t)(p - s);
			sub = 0;
			if (p < eol && *p == ' ') {
				p++;
				if (p >= eol || *p++ != '"')
					goto bad;
				subp = p;
				while (p < eol && *p != '"' && *p != '\\')
					p++;
				if (p >= eol || *p != '"')
					goto bad;
				sublen = (size_t)(p++ - subp);
				sub = 1;
			}
			if (seclen == 0 || p >= eol || *p++ != ']')
				goto bad;
			while (p < eol && (*p == ' ' || *p == '\t' ||
			    *p == '\r'))
				p++;
			if (p < eol && *p != '#' && *p != ';')
				goto bad;
			continue;
		}
		if (sec == NULL || !isalpha((unsigned char)*p))
			goto bad;
		k = p;
		while (p < eol && (isalnum((unsigned char)*p) || *p == '-'))
			p++;
		klen = (size_t)(p - k);
		while (p < eol && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		if (p < eol && *p != '=' && *p != '#' && *p != ';')
			goto bad;
		if (gitnew_allowed(sec, seclen, sub, k, klen))
			continue;
		if (sub)
			gitnew_add(f, "%s %.*s.%.*s.%.*s", pre, (int)seclen,
			    sec, (int)sublen, subp, (int)klen, k);
		else
			gitnew_add(f, "%s %.*s.%.*s", pre, (int)seclen, sec,
			    (int)klen, k);
		continue;
bad:
		/* From here on git may see other sections than we do. */
		gitnew_add(f, "%s line %zu", pre, line);
		sec = NULL;
	}
}

/* Read the config of the git directory gitfd (no link followed). */
static void
gitnew_readconf(int gitfd, const char *pre, struct gitnew_found *f)
{
	char	label[64], *buf;
	size_t	len;

	(void)snprintf(label, sizeof(label), "%sconfig", pre);
	if ((buf = gitnew_read(gitfd, "config", label, GITNEW_CONFIG_MAX, &len,
	    f)) == NULL)
		return;
	gitnew_config(buf, len, label, f);
	free(buf);
}

/*
 * The content of dirfd/name: NULL when it is not there (nothing named)
 * or cannot be trusted to be what git reads (named under label): not a
 * plain file, a link, another hard link, over max bytes.  NUL-terminated.
 */
char *
gitnew_read(int dirfd, const char *name, const char *label, size_t max,
    size_t *len, struct gitnew_found *f)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 got = 0;
	ssize_t		 r;
	int		 fd;

	if ((fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1) {
		if (errno == ELOOP)
			gitnew_add(f, "%s (a symbolic link)", label);
		else if (errno != ENOENT)
			gitnew_add(f, "%s (%s)", label, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		gitnew_add(f, "%s (not a plain file)", label);
		goto fail;
	}
	/* Another name of it could change it after the check. */
	if (st.st_nlink != 1) {
		gitnew_add(f, "%s (has other hard links)", label);
		goto fail;
	}
	if (st.st_size > (off_t)max ||
	    (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		gitnew_add(f, "%s (not read)", label);
		goto fail;
	}
	while (got < (size_t)st.st_size && (r = read(fd, buf + got,
	    (size_t)st.st_size - got)) > 0)
		got += (size_t)r;
	if (got != (size_t)st.st_size) {
		gitnew_add(f, "%s (not read)", label);
		goto fail;
	}
	buf[got] = '\0';
	close(fd);
	*len = got;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

/*
 * Name the entries of hooks/ that are not git's samples (regular files
 * ending in ".sample"), or of info/ that git's lists do not name.
 */
static void
gitnew_dir(int gitfd, const char *name, const char *pre,
    struct gitnew_found *f)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	size_t		 l;
	int		 fd, hooks = strcmp(name, "hooks") == 0;

	if ((fd = openat(gitfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		if (errno != ENOENT)
			gitnew_add(f, "%s%s", pre, name);
		return;
	}
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		gitnew_add(f, "%s%s", pre, name);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		l = strlen(de->d_name);
		if (hooks ? l > 7 && strcmp(de->d_name + l - 7, ".sample") ==
		    0 && fstatat(dirfd(d), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) :
		    gitnew_known(gitnew_info, sizeof(gitnew_info) /
		    sizeof(gitnew_info[0]), de->d_name))
			continue;
		gitnew_add(f, "%s%s/%s", pre, name, de->d_name);
	}
	closedir(d);
}

/*
 * Whether dirfd/name (not followed) changed before the run started: its
 * inode's ctime, which every write, rename, link and chmod sets to the
 * current time and which the command cannot set back.
 */
static int
gitnew_old(int dirfd, const char *name)
{
	struct stat	st;

	if (gitnew_since.tv_sec == 0 ||
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
	    (strcmp(name, "config") == 0 && !S_ISREG(st.st_mode)))
		return 0;
	return st.st_ctim.tv_sec < gitnew_since.tv_sec ||
	    (st.st_ctim.tv_sec == gitnew_since.tv_sec &&
	    st.st_ctim.tv_nsec < gitnew_since.tv_nsec);
}

/*
 * The common directory of the linked worktree entry entryfd (its
 * "../.."): the config and hooks git in that worktree runs.  1 when
 * they are what git init makes, or the user's: a config file and a
 * hooks directory (each of its entries too) unchanged since before the
 * run -- a repository older than the run, whose config and hooks the
 * guard protected throughout.  0 otherwise, what is there in what.
 */
static int
gitnew_common(int entryfd, char *what, size_t len)
{
	struct gitnew_found	 f;
	struct dirent		*de;
	DIR			*d;
	int			 cfd, hfd = -1, ok;

	if ((cfd = openat(entryfd, "../..", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1) {
		(void)snprintf(what, len, "(not read)");
		return 0;
	}
	gitnew_found_init(&f);
	gitnew_readconf(cfd, "", &f);
	gitnew_dir(cfd, "hooks", "", &f);
	(void)snprintf(what, len, "%s", f.text);
	ok = f.n == 0;
	if (!ok && gitnew_old(cfd, "config") &&
	    (hfd = openat(cfd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 && errno == ENOENT)
		ok = 1;		/* no hooks: the config is the user's */
	else if (!ok && gitnew_old(cfd, "config") && hfd != -1 &&
	    gitnew_old(cfd, "hooks")) {
		if ((d = fdopendir(hfd)) == NULL) {
			close(hfd);
			hfd = -1;
		} else {
			ok = 1;
			while (ok && (de = readdir(d)) != NULL)
				if (strcmp(de->d_name, "..") != 0 &&
				    !gitnew_old(dirfd(d), de->d_name))
					ok = 0;
			closedir(d);
			hfd = -1;
		}
	}
	if (hfd != -1)
		close(hfd);
	close(cfd);
	return ok;
}

/*
 * Whether repofd's .git file is what git worktree add writes: "gitdir:
 * DIR" where DIR is a linked worktree's entry, COMMON/worktrees/W,
 * reached without a symbolic link, whose commondir is git's "../.."
 * and which holds no config, config.worktree or hooks of its own.  Git
 * in that worktree then runs only what COMMON's config and hooks name,
 * so COMMON must be a repository older than the run (protected) or
 * have nothing beyond git init (gitnew_common): a COMMON the command
 * made, wherever (one moved out of a .git is reported nowhere else), is
 * named here, with what it has.  1: that worktree; 0: not (f told when
 * it is one whose COMMON is the command's).
 */
static int
gitnew_worktree(int repofd, struct gitnew_found *f)
{
	struct gitnew_found	 junk;
	struct stat		 st;
	char			*text, *dir = NULL, *eol, *real = NULL, *cd = NULL;
	char			 what[sizeof(f->text)];
	const char		*w;
	size_t			 len;
	int			 fd = -1, ok = 0;

	gitnew_found_init(&junk);
	if ((text = gitnew_read(repofd, ".git", ".git", 4096, &len,
	    &junk)) == NULL)
		return 0;
	if (strncmp(text, "gitdir: /", 9) != 0)
		goto done;
	dir = text + 8;
	if ((eol = strchr(dir, '\n')) != NULL) {
		if (eol[1] != '\0')
			goto done;
		*eol = '\0';
	}
	/* .../worktrees/W, W one component, the path its own real path. */
	if ((w = strrchr(dir, '/')) == NULL || w[1] == '\0' ||
	    w - dir < 10 || strncmp(w - 10, "/worktrees", 10) != 0 ||
	    (real = realpath(dir, NULL)) == NULL || strcmp(real, dir) != 0)
		goto done;
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		goto done;
	if ((cd = gitnew_read(fd, "commondir", "commondir", 64, &len,
	    &junk)) == NULL || (strcmp(cd, "../..") != 0 &&
	    strcmp(cd, "../..\n") != 0))
		goto done;
	ok = fstatat(fd, "config", &st, AT_SYMLINK_NOFOLLOW) == -1 &&
	    errno == ENOENT && fstatat(fd, "config.worktree", &st,
	    AT_SYMLINK_NOFOLLOW) == -1 && errno == ENOENT &&
	    fstatat(fd, "hooks", &st, AT_SYMLINK_NOFOLLOW) == -1 &&
	    errno == ENOENT && junk.n == 0;
	if (ok && !gitnew_common(fd, what, sizeof(what))) {
		ok = 0;
		/* dir ends in "/worktrees/W": its common directory. */
		gitnew_add(f, ".git (a worktree of %.*s, made or changed "
		    "during the run: %s)", (int)(w - 10 - dir), dir, what);
		free(cd);
		free(real);
		free(text);
		close(fd);
		return -1;
	}
done:
	if (fd != -1)
		close(fd);
	free(cd);
	free(real);
	free(text);
	return ok && junk.n == 0;
}

/*
 * The gitlinks (submodules) in the index of the repository whose work
 * tree is repofd and git directory gitfd: "git status" there runs git
 * in each (its core.fsmonitor too) when it has a .git.  Each one that
 * has something to name is named, as "PATH (submodule: ...)"; an index
 * this does not read (a version, a hash size, a length it does not
 * know) is named.  Index versions 2, 3 and 4; SHA-1 or SHA-256.
 */
static void
gitnew_gitlinks(int repofd, int gitfd, int depth, struct gitnew_found *f)
{
	struct gitnew_found	 sub;
	char			*buf, path[4096], prev[4096] = "";
	const unsigned char	*p, *end;
	size_t			 len, i, n, hs, nl, strip, plen, plen0 = 0;
	unsigned int		 ver, mode, flags;
	int			 fd, ok = 0, try;

	if ((buf = gitnew_read(gitfd, "index", ".git/index",
	    GITNEW_INDEX_MAX, &len, f)) == NULL)
		return;
	/* SHA-1 first, then SHA-256: the one whose entries all parse. */
	for (try = 0; try < 2 && !ok; try++) {
		hs = try == 0 ? 20 : 32;
		p = (const unsigned char *)buf;
		end = p + len;
		if (len < 12 || memcmp(p, "DIRC", 4) != 0)
			break;
		ver = (unsigned int)p[4] << 24 | p[5] << 16 | p[6] << 8 | p[7];
		n = (size_t)p[8] << 24 | p[9] << 16 | p[10] << 8 | p[11];
		if (ver < 2 || ver > 4)
			break;
		p += 12;
		prev[0] = '\0';
		plen0 = 0;
		for (i = 0; i < n; i++) {
			const unsigned char *e = p;

			if ((size_t)(end - p) < 40 + hs + 2)
				break;
			mode = (unsigned int)p[24] << 24 | p[25] << 16 |
			    p[26] << 8 | p[27];
			flags = (unsigned int)p[40 + hs] << 8 | p[41 + hs];
			nl = flags & 0xfff;
			p += 42 + hs;
			if ((flags & 0x4000) != 0) {
				if (ver < 3 || end - p < 2)
					break;
				p += 2;
			}
			if (ver == 4) {
				strip = 0;
				do {
					if (p >= end || strip > sizeof(path))
						goto next;
					strip = (strip << 7) | (*p & 0x7f);
					if (*p & 0x80)
						strip++;
				} while (*p++ & 0x80);
				if (strip > plen0)
					break;
				plen = plen0 - strip;
				memcpy(path, prev, plen);
			} else
				plen = 0;
			if ((e = memchr(p, '\0', (size_t)(end - p))) == NULL ||
			    plen + (size_t)(e - p) >= sizeof(path))
				break;
			memcpy(path + plen, p, (size_t)(e - p));
			plen += (size_t)(e - p);
			path[plen] = '\0';
			if (ver != 4 && nl != 0xfff && nl != plen)
				break;
			p = e + 1;
			if (ver != 4) {
				/* Padded with NULs to a multiple of 8. */
				size_t used = 42 + hs + ((flags & 0x4000) ?
				    2 : 0) + plen + 1;
				size_t pad = (8 - used % 8) % 8;

				if ((size_t)(end - p) < pad)
					break;
				p += pad;
			}
			memcpy(prev, path, plen + 1);
			plen0 = plen;
			if ((mode & 0170000) != 0160000)
				continue;
			/* A gitlink: git status looks in it. */
			if ((fd = openat(repofd, path, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC)) == -1) {
				if (errno != ENOENT && errno != ENOTDIR)
					gitnew_add(f, "%s (a submodule, not read)",
					    path);
				continue;
			}
			gitnew_found_init(&sub);
			if (depth >= GITNEW_DEPTH)
				gitnew_add(&sub, "submodules too deep");
			else
				gitnew_check_at(fd, 0, depth + 1, &sub);
			close(fd);
			if (sub.n > 0)
				gitnew_add(f, "%s (a submodule: %s)", path,
				    sub.text);
		}
		ok = i == n;
next:
		;
	}
	if (!ok)
		gitnew_add(f, ".git/index (not read)");
	free(buf);
}

/*
 * Name what in the repository at repofd git would use beyond a fresh
 * clone: its .git directory, or repofd itself when bare.  f->n is 0 when
 * there is nothing.
 */
void
gitnew_check(int repofd, int bare, struct gitnew_found *f)
{
	gitnew_check_at(repofd, bare, 0, f);
}

static void
gitnew_check_at(int repofd, int bare, int depth, struct gitnew_found *f)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	const char	*pre = bare ? "" : ".git/";
	int		 gitfd, r;

	if (bare)
		gitfd = openat(repofd, ".", O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC);
	else if (fstatat(repofd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISDIR(st.st_mode)) {
		if (S_ISREG(st.st_mode) && (r = gitnew_worktree(repofd,
		    f)) != 0)
			return;	/* 1: git's own; -1: named */
		/* A gitdir file or a link: git goes where it points. */
		gitnew_add(f, ".git (%s)", S_ISLNK(st.st_mode) ?
		    "a symbolic link" : "a file naming another git directory");
		return;
	} else
		gitfd = openat(repofd, ".git", O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
	if (gitfd == -1 || (d = fdopendir(gitfd)) == NULL) {
		if (gitfd != -1)
			close(gitfd);
		gitnew_add(f, "%s (not read)", bare ? "." : ".git");
		return;
	}
	gitnew_readconf(dirfd(d), pre, f);
	gitnew_dir(dirfd(d), "hooks", pre, f);
	gitnew_dir(dirfd(d), "info", pre, f);
	if (!bare)
		gitnew_gitlinks(repofd, dirfd(d), depth, f);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    gitnew_known(gitnew_top, sizeof(gitnew_top) /
		    sizeof(gitnew_top[0]), de->d_name))
			continue;
		gitnew_add(f, "%s%s", pre, de->d_name);
	}
	closedir(d);
}
