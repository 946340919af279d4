/*
 * The set of paths a plan is built from (struct fs_set, fs_int.h): each
 * path once, hashed, with what the config and the defaults say about it;
 * and a directory's names read at once (struct fs_listing), which is
 * cheaper than a lstat(2) of each of the few hundred names a start asks
 * about.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "policy/policy.h"
#include "launcher/fs/fs.h"
#include "launcher/fs/fs_int.h"

static size_t	*fs_set_slot(const struct fs_set *, const char *path,
		    size_t len);
static int	 fs_name_cmp(const void *, const void *);
static int	 fs_set_grow(struct fs_set *);

/* The slot of the first len octets of path: its entry's, or a free one. */
static size_t *
fs_set_slot(const struct fs_set *set, const char *path, size_t len)
{
	uint64_t	 h = 0xcbf29ce484222325ULL;
	size_t		 i, *sl;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)path[i]) * 0x100000001b3ULL;
	for (i = (size_t)(h ^ (h >> 29)) & (set->cap - 1);; i = (i + 1) &
	    (set->cap - 1)) {
		sl = &set->slot[i];
		if (*sl == 0 || (strncmp(set->v[*sl - 1].path, path, len) ==
		    0 && set->v[*sl - 1].path[len] == '\0'))
			return sl;
	}
}

/* The entry of the first len octets of path, or NULL. */
struct fs_entry *
fs_set_find(const struct fs_set *set, const char *path, size_t len)
{
	size_t	*sl;

	if (set->cap == 0)
		return NULL;
	sl = fs_set_slot(set, path, len);
	return *sl == 0 ? NULL : &set->v[*sl - 1];
}

void
fs_listing_clear(struct fs_listing *l)
{
	size_t	i;

	for (i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	memset(l, 0, sizeof(*l));
}

/* Two names of a listing, for qsort and bsearch. */
static int
fs_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Read the directory named by the first len octets of dir: its names, or
 * that it does not exist; FS_LIST_NONE (ask name by name) when it cannot
 * be read in full (not listable, too large, out of memory).
 */
void
fs_listing_read(struct fs_listing *l, const char *dir, size_t len)
{
	DIR		*d;
	struct dirent	*de;
	char		**nv;

	fs_listing_clear(l);
	if (len >= sizeof(l->dir))
		return;
	memcpy(l->dir, dir, len);
	l->dir[len] = '\0';
	if ((d = opendir(len == 0 ? "/" : l->dir)) == NULL) {
		if (errno == ENOENT || errno == ENOTDIR)
			l->state = FS_LIST_MISSING;
		return;
	}
	l->state = FS_LIST_READ;
	while ((de = readdir(d)) != NULL) {
		if (l->n == FS_LIST_MAX || (nv = reallocarray(l->names,
		    l->n + 1, sizeof(*nv))) == NULL || (l->names = nv,
		    (nv[l->n] = strdup(de->d_name)) == NULL)) {
			l->state = FS_LIST_NONE;
			break;
		}
		l->n++;
	}
	closedir(d);
	if (l->state == FS_LIST_READ)
		qsort(l->names, l->n, sizeof(*l->names), fs_name_cmp);
}

/*
 * Whether the directory read holds the name (len octets): 1, 0, or -1
 * when it was not read (ask lstat).
 */
int
fs_listing_has(const struct fs_listing *l, const char *name, size_t len)
{
	char	key[NAME_MAX + 1], *kp = key;

	if (l->state == FS_LIST_MISSING)
		return 0;
	if (l->state != FS_LIST_READ || len > NAME_MAX)
		return -1;
	memcpy(key, name, len);
	key[len] = '\0';
	return bsearch(&kp, l->names, l->n, sizeof(*l->names),
	    fs_name_cmp) != NULL;
}

/* Room for one more entry: the slots at most half full. */
static int
fs_set_grow(struct fs_set *set)
{
	size_t	*old = set->slot, ocap = set->cap, i;

	if ((set->n + 1) * 2 <= set->cap)
		return 0;
	set->cap = ocap == 0 ? 256 : ocap * 2;
	if ((set->slot = calloc(set->cap, sizeof(*set->slot))) == NULL) {
		set->slot = old;
		set->cap = ocap;
		return -1;
	}
	for (i = 0; i < set->n; i++)
		*fs_set_slot(set, set->v[i].path, strlen(set->v[i].path)) =
		    i + 1;
	free(old);
	return 0;
}

int
fs_set_add(struct fs_set *set, const char *path, int flags, const char *why)
{
	struct fs_entry	*v, *e;
	size_t		*sl;

	if (path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	if (fs_set_grow(set) == -1)
		return -1;
	sl = fs_set_slot(set, path, strlen(path));
	if (*sl != 0) {
		e = &set->v[*sl - 1];
		e->flags |= flags;
		if (e->why == NULL)
			e->why = why;
		return 0;
	}
	v = reallocarray(set->v, set->n + 1, sizeof(*v));
	if (v == NULL)
		return -1;
	set->v = v;
	if ((v[set->n].path = strdup(path)) == NULL)
		return -1;
	v[set->n].flags = flags;
	v[set->n].why = why;
	v[set->n].source = NULL;
	v[set->n].note = NULL;
	*sl = ++set->n;
	return 0;
}

/* Resolve a path as the config would name it, and add it. */
int
fs_set_add_resolved(struct fs_set *set, const char *path, int flags,
    const char *why, const char *cwd, const char *home)
{
	char	*p;
	int	 rc;

	if ((p = fs_resolve(path, cwd, home)) == NULL)
		return -1;
	rc = fs_set_add(set, p, flags, why);
	free(p);
	return rc;
}

int
fs_set_add_list(struct fs_set *set, const struct strlist *l, int flags,
    const char *cwd, const char *home)
{
	struct stat	 st;
	const char	*key, *what;
	char		*p;
	size_t		 i;
	int		 rc;

	if (flags & P_DENY_READ) {
		key = "denyRead";
		what = "nothing to hide";
	} else if (flags & P_ALLOW_READ) {
		key = "allowRead";
		what = "nothing to show";
	} else if (flags & P_ALLOW_WRITE) {
		key = "allowWrite";
		what = "nothing is made writable (create it before the run "
		    "to let commands write there)";
	} else {
		key = "denyWrite";
		what = "commands cannot create it";
	}
	for (i = 0; i < l->n; i++) {
		if (glob_is_pattern(l->v[i]))
			continue;	/* fsglob.c */
		if ((p = fs_resolve(l->v[i], cwd, home)) == NULL) {
			log_warnx("filesystem path %s: cannot resolve "
			    "(no home directory?)", l->v[i]);
			return -1;
		}
		/*
		 * A path for another machine, or a tool not yet installed.
		 * A denyWrite name that does not exist yet (.env) is what
		 * the entry is for: said at -vv only, not as a warning on
		 * every run.
		 */
		if (lstat(p, &st) == -1 && errno == ENOENT) {
			if (flags & P_DENY_WRITE)
				log_debug("fs: filesystem.%s[%zu]: %s (%s) "
				    "does not exist: %s", key, i, l->v[i], p,
				    what);
			else
				log_info("warning: filesystem.%s[%zu]: %s (%s) "
				    "does not exist: %s", key, i, l->v[i], p,
				    what);
		}
		rc = fs_set_add(set, p, flags, flags & P_DENY_WRITE ?
		    "filesystem.denyWrite" : NULL);
		free(p);
		if (rc == -1)
			return -1;
	}
	return 0;
}

void
fs_set_free(struct fs_set *set)
{
	size_t	i;

	for (i = 0; i < set->n; i++) {
		free(set->v[i].path);
		free(set->v[i].source);
	}
	free(set->v);
	free(set->slot);
	memset(set, 0, sizeof(*set));
}

/* The flags of the set's entry at path, 0 when none. */
int
fs_flags_at(const struct fs_set *set, const char *path)
{
	size_t	i;

	for (i = 0; i < set->n; i++)
		if (strcmp(set->v[i].path, path) == 0)
			return set->v[i].flags;
	return 0;
}
