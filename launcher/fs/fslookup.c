/*
 * What the creation guard asks of the plan on every name it creates,
 * writes or replaces, as pure functions over a resolved path:
 * fs_plan_guarded (the plan's protected paths, through the index
 * fs_plan_index builds once) and fs_root_of (the writable root a path
 * lies in); and the hash of a file's identity for the guard's tables.
 */
#include <sys/types.h>

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "launcher/fs/fs.h"
#include "launcher/fs/fs_int.h"

static size_t	 fs_fold_hash(const char *, size_t);
static struct fs_gslot *fs_gslot(struct fs_gslot *, size_t, const char *,
		    size_t);
static int	 fs_gput(struct fs_gslot *, size_t, const char *, size_t,
		    size_t);
static const char *fs_gindex_find(const struct fs_plan *,
		    const struct fs_gindex *, const char *, int);

/* A hash of a file's identity, for the guard's tables. */
size_t
fs_id_hash(dev_t dev, ino_t ino)
{
	uint64_t	h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^
			    (uint64_t)dev * 0xc2b2ae3d27d4eb4fULL;

	return (size_t)(h >> 17);
}

/* The writable root path lies in, or NULL. */
const char *
fs_root_of(const struct fs_plan *plan, const char *path)
{
	size_t	i;

	for (i = 0; i < plan->nwritable; i++)
		if (fs_under(path, plan->writable[i]))
			return plan->writable[i];
	return NULL;
}

const char *
fs_plan_hides(const struct fs_plan *plan, const char *path)
{
	const struct fs_rule	*in = NULL;
	size_t			 i;

	for (i = 0; i < plan->nrules; i++) {
		if ((plan->rules[i].action == FS_HIDE ||
		    plan->rules[i].source != NULL) &&
		    fs_under_ci(plan->rules[i].path, path))
			return plan->rules[i].path;
		if (fs_under_ci(path, plan->rules[i].path) && (in == NULL ||
		    strlen(plan->rules[i].path) > strlen(in->path)))
			in = &plan->rules[i];
	}
	if (in == NULL || (in->action != FS_HIDE && in->source == NULL))
		return NULL;
	/* A writable root inside the hidden tree is not hidden. */
	for (i = 0; i < plan->nwritable; i++)
		if (fs_under_ci(path, plan->writable[i]) &&
		    strlen(plan->writable[i]) > strlen(in->path))
			return NULL;
	return in->path;
}

/*
 * Whether creating or replacing path would touch a guarded path: the path
 * itself or anything below it, and with ancestors_too also a directory on
 * the way to one (renaming a prepared directory to ".git" would otherwise
 * plant .git/hooks in one step).  Returns who reads the guarded path, or
 * NULL.
 */
const char *
fs_plan_guarded(const struct fs_plan *plan, const char *path,
    int ancestors_too)
{
	const struct fs_gindex	*gi;
	size_t			 i;

	/* Published by fs_plan_index while other guard threads ask. */
	if ((gi = __atomic_load_n(&plan->gindex, __ATOMIC_ACQUIRE)) != NULL)
		return fs_gindex_find(plan, gi, path, ancestors_too);
	for (i = 0; i < plan->nguarded; i++) {
		if (fs_under_ci(path, plan->guarded[i]) ||
		    (ancestors_too && fs_under_ci(plan->guarded[i], path)))
			return plan->guarded_why[i];
	}
	return NULL;
}

/*
 * The guarded paths indexed for the creation guard, which asks about
 * every creation: fs_plan_guarded's answer from a few hash lookups (one
 * per component of the path) instead of a pass over a few hundred names.
 * Keys are the paths with ASCII letters folded, as strncasecmp compares
 * them; each maps to the lowest index of a guarded path it stands for,
 * so the answer is the one the pass would find first.
 */
struct fs_gslot {
	char	*key;		/* NULL: free */
	size_t	 idx;
};

struct fs_gindex {
	struct fs_gslot	*at;	/* a guarded path itself */
	struct fs_gslot	*above;	/* a directory above a guarded path */
	size_t		 cap;	/* of each, a power of two */
	size_t		 root;	/* a guarded "/", or SIZE_MAX */
};

/* FNV-1a of len octets of s, ASCII case folded. */
static size_t
fs_fold_hash(const char *s, size_t len)
{
	uint64_t	h = 0xcbf29ce484222325ULL;
	size_t		i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)tolower((unsigned char)s[i])) *
		    0x100000001b3ULL;
	return (size_t)(h ^ (h >> 29));
}

/* The slot of key (len octets, folded) in t: its own, or the free one. */
static struct fs_gslot *
fs_gslot(struct fs_gslot *t, size_t cap, const char *key, size_t len)
{
	size_t	i = fs_fold_hash(key, len) & (cap - 1);

	while (t[i].key != NULL && (strlen(t[i].key) != len ||
	    strncasecmp(t[i].key, key, len) != 0))
		i = (i + 1) & (cap - 1);
	return &t[i];
}

/* Map key (len octets) to idx in t, keeping the lowest index. */
static int
fs_gput(struct fs_gslot *t, size_t cap, const char *key, size_t len,
    size_t idx)
{
	struct fs_gslot	*sl = fs_gslot(t, cap, key, len);

	if (sl->key != NULL) {
		if (idx < sl->idx)
			sl->idx = idx;
		return 0;
	}
	if ((sl->key = strndup(key, len)) == NULL)
		return -1;
	sl->idx = idx;
	return 0;
}

void
fs_gindex_free(struct fs_gindex *gi)
{
	size_t	i;

	if (gi == NULL)
		return;
	for (i = 0; i < gi->cap; i++) {
		free(gi->at[i].key);
		free(gi->above[i].key);
	}
	free(gi->at);
	free(gi->above);
	free(gi);
}

int
fs_plan_index(struct fs_plan *plan)
{
	struct fs_gindex	*gi;
	const char		*p, *sl;
	size_t			 i, n = 0;

	if (plan->gindex != NULL)
		return 0;
	for (i = 0; i < plan->nguarded; i++)
		for (p = plan->guarded[i]; *p != '\0'; p++)
			n += *p == '/';
	if ((gi = calloc(1, sizeof(*gi))) == NULL)
		return -1;
	gi->root = SIZE_MAX;
	for (gi->cap = 64; gi->cap < 2 * (n + plan->nguarded + 1);
	    gi->cap *= 2)
		;
	if ((gi->at = calloc(gi->cap, sizeof(*gi->at))) == NULL ||
	    (gi->above = calloc(gi->cap, sizeof(*gi->above))) == NULL)
		goto fail;
	for (i = 0; i < plan->nguarded; i++) {
		p = plan->guarded[i];
		if (strcmp(p, "/") == 0) {
			if (i < gi->root)
				gi->root = i;
			continue;
		}
		if (fs_gput(gi->at, gi->cap, p, strlen(p), i) == -1)
			goto fail;
		/* Every directory above it but "/" (asked apart). */
		for (sl = strchr(p + 1, '/'); sl != NULL;
		    sl = strchr(sl + 1, '/'))
			if (fs_gput(gi->above, gi->cap, p, (size_t)(sl - p),
			    i) == -1)
				goto fail;
	}
	__atomic_store_n(&plan->gindex, gi, __ATOMIC_RELEASE);
	return 0;
fail:
	fs_gindex_free(gi);
	return -1;
}

/* fs_plan_guarded, from the index. */
static const char *
fs_gindex_find(const struct fs_plan *plan, const struct fs_gindex *gi,
    const char *path, int ancestors_too)
{
	struct fs_gslot		*sl;
	const char		*p;
	size_t			 best = gi->root, len = strlen(path);

	/* path or a directory above it is guarded. */
	for (p = path + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			sl = fs_gslot(gi->at, gi->cap, path, (size_t)(p - path));
			if (sl->key != NULL && sl->idx < best)
				best = sl->idx;
		}
		if (*p == '\0')
			break;
	}
	if (ancestors_too) {
		if (strcmp(path, "/") == 0 && plan->nguarded > 0)
			best = 0;
		sl = fs_gslot(gi->above, gi->cap, path, len);
		if (sl->key != NULL && sl->idx < best)
			best = sl->idx;
	}
	return best == SIZE_MAX ? NULL : plan->guarded_why[best];
}
