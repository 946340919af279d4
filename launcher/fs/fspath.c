/*
 * Path helpers of the filesystem plan: a configured path made absolute
 * and symlink-free (fs_resolve), joined, compared (fs_under, also ignoring
 * case), counted; vectors of strings; the first line of a small file.
 * Nothing here knows the plan.
 */
#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/fs/fs.h"
#include "launcher/fs/fs_int.h"

static int	 fs_prefix(const char *path, const char *root,
		    int (*)(const char *, const char *, size_t));

/* "a" + "/" + "b", without doubling the slash after "/". */
char *
fs_join(const char *a, const char *b)
{
	char	*s;
	size_t	 la = strlen(a);

	if (la > 0 && a[la - 1] == '/')
		la--;
	if (asprintf(&s, "%.*s/%s", (int)la, a, b) == -1)
		return NULL;
	return s;
}

/*
 * Absolute, symlink-free form of a configured path: "~" and "~/x" use
 * home, a relative path is taken against cwd, and the longest existing
 * prefix goes through realpath(3) so a path that does not exist yet is
 * still named the way the kernel will see it once created.
 */
char *
fs_resolve(const char *in, const char *cwd, const char *home)
{
	char	*abs = NULL, *res = NULL, *cut, real[PATH_MAX];
	char	*tail = NULL;

	if (in[0] == '~' && (in[1] == '\0' || in[1] == '/')) {
		if (home == NULL)
			return NULL;
		abs = fs_join(home, in[1] == '/' ? in + 2 : "");
	} else if (in[0] == '/')
		abs = strdup(in);
	else
		abs = fs_join(cwd, in);
	if (abs == NULL)
		return NULL;
	/* Trailing slashes mean nothing here. */
	while (strlen(abs) > 1 && abs[strlen(abs) - 1] == '/')
		abs[strlen(abs) - 1] = '\0';

	cut = abs + strlen(abs);
	for (;;) {
		char save = *cut;

		*cut = '\0';
		if (realpath(abs[0] != '\0' ? abs : "/", real) != NULL) {
			*cut = save;
			tail = cut;
			break;
		}
		*cut = save;
		while (cut > abs && *--cut != '/')
			;
		if (cut == abs) {
			strcpy(real, "/");
			tail = abs;
			break;
		}
	}
	while (*tail == '/')
		tail++;
	if (*tail == '\0')
		res = strdup(real);
	else
		res = fs_join(real, tail);
	free(abs);
	return res;
}

int
fs_strv_add(char ***v, size_t *n, const char *s)
{
	size_t	  i;

	for (i = 0; i < *n; i++)
		if (strcmp((*v)[i], s) == 0)
			return 0;
	return fs_strv_push(v, n, s);
}

/* Append a copy of s (fs_strv_add, when s cannot be there yet). */
int
fs_strv_push(char ***v, size_t *n, const char *s)
{
	char	**nv;

	if ((nv = reallocarray(*v, *n + 1, sizeof(*nv))) == NULL)
		return -1;
	*v = nv;
	if ((nv[*n] = strdup(s)) == NULL)
		return -1;
	(*n)++;
	return 0;
}

/* Whether path is root or lies below it, by the given comparison. */
static int
fs_prefix(const char *path, const char *root,
    int (*cmp)(const char *, const char *, size_t))
{
	size_t	len = strlen(root);

	if (strcmp(root, "/") == 0)
		return 1;
	return cmp(path, root, len) == 0 &&
	    (path[len] == '\0' || path[len] == '/');
}

int
fs_under(const char *path, const char *root)
{
	return fs_prefix(path, root, strncmp);
}

const char *
fs_shared_tmp_of(const char *path)
{
	size_t	i;

	for (i = 0; i < fs_nshared_tmp; i++)
		if (fs_under(path, fs_shared_tmp[i]))
			return fs_shared_tmp[i];
	return NULL;
}

/*
 * fs_under, ignoring ASCII case: on a case-insensitive filesystem (vfat,
 * exfat, CIFS, a casefolded ext4 directory) ".GIT/CONFIG" is
 * ".git/config".  For protected names only: refusing a name nobody uses
 * on a case-sensitive one costs nothing.
 */
int
fs_under_ci(const char *path, const char *root)
{
	return fs_prefix(path, root, strncasecmp);
}

int
fs_depth(const char *p)
{
	int	d = 0;

	for (; *p != '\0'; p++)
		if (*p == '/')
			d++;
	return d;
}

int
fs_rule_cmp(const void *a, const void *b)
{
	const struct fs_rule *ra = a, *rb = b;
	int	da = fs_depth(ra->path), db = fs_depth(rb->path);

	if (da != db)
		return da < db ? -1 : 1;
	return strcmp(ra->path, rb->path);
}

/*
 * The first line of a small file, without its newline and after prefix
 * (which it must start with; NULL: any line); NULL when absent.
 */
char *
fs_read_line(const char *file, const char *prefix)
{
	char	 line[PATH_MAX + 16], *p;
	FILE	*f;
	struct stat st;

	if (lstat(file, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (f = fopen(file, "re")) == NULL)
		return NULL;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (p == NULL)
		return NULL;
	if (prefix != NULL) {
		if (strncmp(line, prefix, strlen(prefix)) != 0)
			return NULL;
		p += strlen(prefix);
		p += strspn(p, " \t");
	}
	p[strcspn(p, "\r\n")] = '\0';
	return strdup(p);
}

/* path with its directory resolved, its last component as it is. */
char *
fs_resolve_dir(const char *path)
{
	char	 real[PATH_MAX], *dir, *slash, *out;

	if ((dir = strdup(path)) == NULL)
		return NULL;
	if ((slash = strrchr(dir, '/')) == NULL || slash == dir ||
	    slash[1] == '\0') {
		free(dir);
		return NULL;
	}
	*slash = '\0';
	out = realpath(dir, real) != NULL ? fs_join(real, slash + 1) : NULL;
	free(dir);
	return out;
}
