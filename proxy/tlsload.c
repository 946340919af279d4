/*
 * Find, check and load pisbx-tls.so (proxy/tlsmod.h), once.  No OpenSSL
 * here: the point of the module is that programs which do not terminate
 * TLS never load libssl.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proxy/tlsmod.h"

#define WHY	"pisbx-tls.so (for network.tlsTerminate and credentials)"

#ifndef PISBX_STATIC_RUN
static int	 module_open(const char *, char *, size_t, char *, size_t);
static int	 owner_ok(const struct stat *);
static const struct tlsmod_ops *module_load(char *, size_t);
#endif

static const struct tlsmod_ops	*loaded;
static int			 tried;
static char			 loaderr[PATH_MAX + 256];

#ifndef PISBX_STATIC_RUN
/* Owned by root or by us, writable by no one else. */
static int
owner_ok(const struct stat *st)
{
	return (st->st_uid == 0 || st->st_uid == geteuid()) &&
	    (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/*
 * path opened (no symbolic link), a regular file that passes owner_ok()
 * in a directory that does too: whoever could replace the module runs
 * code in the proxy, which holds the credentials.  The descriptor, or
 * -1: with ENOENT and nothing in err when there is no such file.
 */
static int
module_open(const char *dir, char *path, size_t pathlen, char *err,
    size_t errlen)
{
	struct stat	 st;
	int		 fd;

	snprintf(path, pathlen, "%s/%s", dir, TLSMOD_FILE);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		if (errno != ENOENT)
			snprintf(err, errlen, WHY ": %s: %s", path,
			    errno == ELOOP ? "a symbolic link" :
			    strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, WHY ": %s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || !owner_ok(&st)) {
		snprintf(err, errlen, WHY ": %s: %s (owner uid %u, mode %04o): "
		    "it must be a regular file owned by root or uid %u and "
		    "writable by no one else", path,
		    S_ISREG(st.st_mode) ? "unsafe" : "not a regular file",
		    (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
		    (unsigned)geteuid());
		goto fail;
	}
	if (stat(dir, &st) == -1 || !owner_ok(&st)) {
		snprintf(err, errlen, WHY ": %s: its directory %s is writable "
		    "by others or not owned by root or uid %u", path, dir,
		    (unsigned)geteuid());
		goto fail;
	}
	return fd;
fail:
	close(fd);
	errno = EPERM;
	return -1;
}

/* The module next to /proc/self/exe, checked, loaded by descriptor. */
static const struct tlsmod_ops *
module_load(char *err, size_t errlen)
{
	const struct tlsmod_ops	*ops;
	tlsmod_fn		 fn;
	char			 exe[PATH_MAX], dir[PATH_MAX + 16];
	char			 path[PATH_MAX + 64], alt[PATH_MAX + 64];
	char			 proc[64];
	char			*slash;
	void			*h;
	ssize_t			 n;
	int			 fd;

	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) == -1) {
		snprintf(err, errlen, WHY ": /proc/self/exe: %s",
		    strerror(errno));
		return NULL;
	}
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) == NULL) {
		snprintf(err, errlen, WHY ": /proc/self/exe: %s: no directory",
		    exe);
		return NULL;
	}
	*slash = '\0';
	err[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/../lib/pisbx", exe);
	if ((fd = module_open(dir, path, sizeof(path), err, errlen)) == -1) {
		if (err[0] != '\0')
			return NULL;
		if ((fd = module_open(exe, alt, sizeof(alt), err, errlen)) ==
		    -1) {
			if (err[0] == '\0')
				snprintf(err, errlen, WHY ": not installed: "
				    "neither %s nor %s exists", path, alt);
			return NULL;
		}
		memcpy(path, alt, sizeof(path));
	}
	/* The file checked is the file loaded: dlopen by its descriptor. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	h = dlopen(proc, RTLD_NOW | RTLD_LOCAL);
	close(fd);
	if (h == NULL) {
		snprintf(err, errlen, WHY ": %s: %s", path, dlerror());
		return NULL;
	}
	if ((fn = (tlsmod_fn)dlsym(h, TLSMOD_SYMBOL)) == NULL) {
		snprintf(err, errlen, WHY ": %s: no %s in it: not pisbx's TLS "
		    "module", path, TLSMOD_SYMBOL);
		return NULL;
	}
	if ((ops = fn()) == NULL) {
		snprintf(err, errlen, WHY ": %s: OpenSSL did not start", path);
		return NULL;
	}
	if (ops->abi != TLSMOD_ABI) {
		snprintf(err, errlen, WHY ": %s: interface version %d, this "
		    "program needs %d: install the module of the same build",
		    path, ops->abi, TLSMOD_ABI);
		return NULL;
	}
	return ops;
}
#endif

const struct tlsmod_ops *
tlsmod_load(char *err, size_t errlen)
{
	if (!tried) {
		tried = 1;
#ifdef PISBX_STATIC_RUN
		/*
		 * glibc's dlopen from a static-pie cannot load a library
		 * that needs libc's symbols: said plainly instead.
		 */
		snprintf(loaderr, sizeof(loaderr), "this pisbx-run is linked "
		    "statically: TLS termination and credentials need the "
		    "dynamic build");
#else
		loaded = module_load(loaderr, sizeof(loaderr));
#endif
	}
	if (loaded == NULL)
		snprintf(err, errlen, "%s", loaderr);
	return loaded;
}
