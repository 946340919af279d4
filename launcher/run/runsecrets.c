/*
 * network.tlsTerminate and credentials, on the launcher's side, before
 * the plan and the environment are built: the TLS module loaded (only
 * for a run that needs it), the run's CA made in this process's memory
 * (its key is never written anywhere), every credential given its
 * placeholder in the table the proxy swaps with, the masked copies of
 * credentials files and the CA bundle made among the run directory's
 * files (in memory until the sandbox's own tmpfs holds them: rundir.c),
 * and the credentials taken out of the environment.  The real values stay
 * in this process (the proxy's), never in the run directory, which the
 * command reads (docs/credentials.md, docs/filesystem.md).
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/io.h"
#include "common/log.h"
#include "common/secmem.h"
#include "policy/policy.h"
#include "proxy/cred.h"
#include "proxy/tlsmod.h"
#include "launcher/launcher.h"
#include "launcher/fs/fs.h"
#include "launcher/sandbox/sandbox.h"
#include "launcher/run/run.h"

#define SECRETS_FILE_MAX	(1024 * 1024)	/* a masked file, octets */
#define SECRETS_PEM_MAX		(1024 * 1024)	/* an extraCaCertPaths file */
#define SECRETS_BUNDLE_MAX	(16 * 1024 * 1024)	/* the system's */
#define SECRETS_SPANS_MAX	CRED_MAX	/* group-1 spans of one value */

#define PEM_BEGIN	"-----BEGIN CERTIFICATE-----"
#define PEM_END		"-----END CERTIFICATE-----"

/*
 * The system bundles clients read when no variable names one: Debian and
 * its kin, Fedora and RHEL, Alpine's and the BSDs' name.  The first that
 * exists on the host starts the run's bundle; ours is bound over each
 * one inside.
 */
static const char *const secrets_sys_bundles[] = {
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/cert.pem",
};

/* A range of a credential's text that becomes a placeholder. */
struct secrets_range {
	size_t		 off;
	size_t		 len;
	const char	*ph;
};

struct runsecrets {
	const struct tlsmod_ops	*tls;		/* NULL: not loaded */
	struct tlsmod_ca	*ca;		/* NULL: no termination */
	struct cred_table	*creds;
	char			**env;		/* "NAME=VALUE", NULL-ended */
	size_t			 nenv;
	char			**taken;	/* variables taken from environ */
	size_t			 ntaken;
	struct fs_secret_file	*files;		/* for the plan */
	const char		**files_src;	/* each one's config entry */
	size_t			 nfiles;
	char			**owned;	/* paths the files point at */
	size_t			 nowned;
	char			*bundle;	/* rundir/ca-bundle.pem */
	char			*truststore;	/* rundir/truststore.p12 */
	struct sandbox_bind	*binds;
	size_t			 nbinds;
};

static const char *secrets_own(struct runsecrets *, char *);
static int	 secrets_file_add(struct runsecrets *, const char *path,
		    const char *source, const char *entry);
static char	*secrets_read(const char *, size_t, size_t *, char *, size_t);
static int	 secrets_range_cmp(const void *, const void *);
static char	*secrets_mask(struct runsecrets *, const struct cred_entry *,
		    size_t, const char *, const char *, size_t, size_t *,
		    int *, char *, size_t);
static int	 secrets_nomatch(struct runsecrets *, const struct cred_entry *,
		    const char *what);
static int	 secrets_env_entry(struct runsecrets *, const struct config *,
		    size_t);
static int	 secrets_file_entry(struct runsecrets *, const struct config *,
		    size_t, struct fs_runfiles *, const char *);
static int	 secrets_extra(const struct tls_terminate *, char **,
		    const char ***, size_t *);
static char	*secrets_bundle(struct runsecrets *, const char *,
		    struct fs_runfiles *, size_t *);
static int	 secrets_truststore(struct runsecrets *, struct fs_runfiles *,
		    const char *, size_t);
static int	 secrets_tls(struct runsecrets *, const struct tls_terminate *,
		    struct fs_runfiles *);
static int	 secrets_checks(const struct runsecrets *, const struct config *);

/* Keep a malloc'ed text for the secrets' lifetime: it, or NULL. */
static const char *
secrets_own(struct runsecrets *s, char *text)
{
	if (env_push(&s->owned, &s->nowned, text) == -1)
		return NULL;
	return text;
}

/* One more file for the plan: hidden (source NULL), or shown masked. */
static int
secrets_file_add(struct runsecrets *s, const char *path, const char *source,
    const char *entry)
{
	struct fs_secret_file	*nv;
	const char		**ns;

	if ((nv = reallocarray(s->files, s->nfiles + 1, sizeof(*nv))) == NULL)
		return -1;
	s->files = nv;
	if ((ns = reallocarray(s->files_src, s->nfiles + 1,
	    sizeof(*ns))) == NULL)
		return -1;
	s->files_src = ns;
	nv[s->nfiles].path = path;
	nv[s->nfiles].source = source;
	nv[s->nfiles].note = source != NULL ? "credentials masked: "
	    "placeholders in place of the values" : NULL;
	ns[s->nfiles] = entry;
	s->nfiles++;
	return 0;
}

/*
 * A whole regular file of at most max octets, malloc'ed and
 * NUL-terminated (*len without the NUL); NULL with errno (EISDIR for a
 * directory, EINVAL for anything else not a regular file, EFBIG past
 * max) and the reason in err.
 */
static char *
secrets_read(const char *path, size_t max, size_t *len, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 got = 0;
	ssize_t		 n;
	int		 fd, saved;

	/* O_NONBLOCK: a FIFO planted at the name must not hang the run. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
	    O_NOCTTY)) == -1)
		goto fail;
	if (fstat(fd, &st) == -1)
		goto fail;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		errno = EINVAL;
		goto fail2;
	}
	if ((size_t)st.st_size > max) {
		snprintf(err, errlen, "%s: larger than %zu octets", path, max);
		errno = EFBIG;
		goto fail2;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL)
		goto fail;
	while (got < (size_t)st.st_size) {
		n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			goto fail;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*len = got;
	close(fd);
	return buf;
fail:
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
fail2:
	saved = errno;
	if (fd != -1)
		close(fd);
	if (buf != NULL) {
		secmem_wipe(buf, (size_t)st.st_size);
		free(buf);
	}
	errno = saved;
	return NULL;
}

static int
secrets_range_cmp(const void *a, const void *b)
{
	const struct secrets_range	*ra = a, *rb = b;

	if (ra->off != rb->off)
		return ra->off < rb->off ? -1 : 1;
	return ra->len > rb->len ? -1 : ra->len < rb->len;
}

/*
 * buf (len octets) as the command sees it: with e->extract, each group-1
 * span a placeholder (and with maskDuplicates every verbatim repeat of a
 * span's value elsewhere too); without, the whole text one placeholder.
 * Every value goes into the table under name.  The text (malloc'ed,
 * NUL-terminated, *outlen), or NULL: *nomatch set when extract matched
 * nothing to mask, else err says why.
 */
static char *
secrets_mask(struct runsecrets *s, const struct cred_entry *e, size_t idx,
    const char *name, const char *buf, size_t len, size_t *outlen,
    int *nomatch, char *err, size_t errlen)
{
	struct secrets_range	*r = NULL, *nv;
	size_t			(*sp)[2] = NULL, nr = 0, cap, nspan, i, at;
	size_t			 plen;
	const char		*ph, *hit;
	char			*out = NULL, *o;
	int			 n;

	*nomatch = 0;
	err[0] = '\0';
	if (e->extract == NULL) {
		/*
		 * A file's last line end is the file's, not the value's: a
		 * token file read with $(cat) goes into a header without
		 * it, and the copy keeps it after the placeholder.  (Kept in
		 * the value, its LF went into the header and ended the
		 * request's head there.)
		 */
		at = len;
		if (e->kind == CRED_FILE && buf[at - 1] == '\n' && --at > 0 &&
		    buf[at - 1] == '\r')
			at--;
		if (at == 0)
			at = len;	/* nothing but a line end: as it is */
		if (cred_table_add(s->creds, name, idx, buf, at, &ph) == -1)
			goto full;
		if (asprintf(&out, "%s%.*s", ph, (int)(len - at),
		    buf + at) == -1)
			return NULL;
		*outlen = strlen(out);
		return out;
	}
	if ((sp = calloc(SECRETS_SPANS_MAX, sizeof(*sp))) == NULL)
		return NULL;
	if ((n = s->tls->regex_spans(e->extract, buf, len, sp,
	    SECRETS_SPANS_MAX, err, errlen)) == -1)
		goto done;
	cap = (size_t)n + 1;
	if ((r = calloc(cap, sizeof(*r))) == NULL)
		goto done;
	for (i = 0; i < (size_t)n; i++) {
		/* A group that matched nothing has nothing to hide. */
		if (sp[i][1] == 0)
			continue;
		if (cred_table_add(s->creds, name, idx, buf + sp[i][0],
		    sp[i][1], &ph) == -1)
			goto full;
		r[nr].off = sp[i][0];
		r[nr].len = sp[i][1];
		r[nr++].ph = ph;
	}
	if (nr == 0) {
		*nomatch = 1;
		goto done;
	}
	/*
	 * maskDuplicates: the value wherever else it is written (a token
	 * repeated under another key); each span's own place is found
	 * again and dropped with the overlaps below.
	 */
	nspan = nr;
	for (i = 0; e->mask_duplicates && i < nspan; i++) {
		for (at = 0; at < len && (hit = memmem(buf + at, len - at,
		    buf + r[i].off, r[i].len)) != NULL;
		    at = (size_t)(hit - buf) + r[i].len) {
			if (nr == cap) {
				if ((nv = reallocarray(r, cap * 2,
				    sizeof(*r))) == NULL)
					goto done;
				r = nv;
				cap *= 2;
			}
			r[nr].off = (size_t)(hit - buf);
			r[nr].len = r[i].len;
			r[nr++].ph = r[i].ph;
		}
	}
	qsort(r, nr, sizeof(*r), secrets_range_cmp);
	/* The output: the text between ranges, a placeholder for each. */
	for (i = 0, plen = len; i < nr; i++)
		plen += strlen(r[i].ph);
	if ((out = malloc(plen + 1)) == NULL)
		goto done;
	for (i = 0, at = 0, o = out; i < nr; i++) {
		/*
		 * Overlapping ranges (a span found again, or a repeat of one
		 * value running into another's span): the first placeholder,
		 * and none of the later range's octets, which are a value's.
		 */
		if (r[i].off < at) {
			if (r[i].off + r[i].len > at)
				at = r[i].off + r[i].len;
			continue;
		}
		memcpy(o, buf + at, r[i].off - at);
		o += r[i].off - at;
		memcpy(o, r[i].ph, strlen(r[i].ph));
		o += strlen(r[i].ph);
		at = r[i].off + r[i].len;
	}
	memcpy(o, buf + at, len - at);
	o += len - at;
	*o = '\0';
	*outlen = (size_t)(o - out);
	goto done;
full:
	snprintf(err, errlen, "a value longer than %d octets, or more than %d "
	    "credentials in one run", CRED_VALUE_MAX, CRED_MAX);
done:
	free(sp);
	free(r);
	return out;
}

/*
 * extract found nothing in what (the variable or the file): as
 * onExtractNoMatch says.  0: deny (the caller hides it), 1: warn (left
 * as it is, said), EXIT_SETUP: error (said).
 */
static int
secrets_nomatch(struct runsecrets *s, const struct cred_entry *e,
    const char *what)
{
	(void)s;
	switch (e->on_nomatch) {
	case CRED_NOMATCH_WARN:
		log_warnx("warning: %s.extract matches nothing in %s: it is "
		    "left as it is, unmasked (onExtractNoMatch \"warn\")",
		    e->source, what);
		return 1;
	case CRED_NOMATCH_ERROR:
		log_warnx("%s.extract matches nothing in %s, and "
		    "onExtractNoMatch is \"error\"; nothing was run",
		    e->source, what);
		return EXIT_SETUP;
	case CRED_NOMATCH_DENY:
		break;
	}
	log_info("%s.extract matches nothing in %s: hidden from the command "
	    "(onExtractNoMatch \"deny\")", e->source, what);
	return 0;
}

/*
 * A credentials.envVars entry.  The variable leaves this process's
 * environment either way (its bytes wiped where /proc/PID/environ shows
 * them: policy_env_take); masked, the command gets it back with
 * placeholders.  0, -1 (no memory), or EXIT_SETUP (said why).
 */
static int
secrets_env_entry(struct runsecrets *s, const struct config *conf, size_t idx)
{
	const struct cred_entry	*e = &conf->creds.v[idx];
	const char		*v;
	char			*masked, *name = NULL, err[512];
	size_t			 mlen;
	int			 nomatch, rc;

	if (getenv(e->name) == NULL) {
		log_debug("%s: $%s is not set: nothing to %s", e->source,
		    e->name, e->mode == CRED_DENY ? "deny" : "mask");
		return 0;
	}
	if ((v = policy_env_take(e->name)) == NULL ||
	    env_push(&s->taken, &s->ntaken, strdup(e->name)) == -1)
		return -1;
	if (e->mode == CRED_DENY)
		return 0;
	/* Empty: nothing to hide, the command gets it as it is. */
	if (v[0] == '\0') {
		if (asprintf(&name, "%s=", e->name) == -1)
			return -1;
		return env_push(&s->env, &s->nenv, name);
	}
	if (asprintf(&name, "$%s", e->name) == -1)
		return -1;
	masked = secrets_mask(s, e, idx, name, v, strlen(v), &mlen,
	    &nomatch, err, sizeof(err));
	free(name);
	if (masked == NULL && nomatch) {
		if (asprintf(&name, "$%s", e->name) == -1)
			return -1;
		rc = secrets_nomatch(s, e, name);
		free(name);
		if (rc != 1)
			return rc;
		if (asprintf(&name, "%s=%s", e->name, v) == -1)
			return -1;
		return env_push(&s->env, &s->nenv, name);
	}
	if (masked == NULL) {
		if (err[0] == '\0')
			return -1;
		log_warnx("%s: $%s: %s; nothing was run", e->source, e->name,
		    err);
		return EXIT_SETUP;
	}
	rc = asprintf(&name, "%s=%s", e->name, masked);
	free(masked);
	if (rc == -1)
		return -1;
	return env_push(&s->env, &s->nenv, name);
}

/*
 * A credentials.files entry: deny hides it as a filesystem.denyRead path
 * would; mask shows a copy in the run directory, the values replaced by
 * their placeholders, bound read-only over it.  A file that does not
 * exist has nothing to protect.  0, -1, or EXIT_SETUP (said why).
 */
static int
secrets_file_entry(struct runsecrets *s, const struct config *conf, size_t idx,
    struct fs_runfiles *files, const char *home)
{
	const struct cred_entry	*e = &conf->creds.v[idx];
	const char		*copy;
	char			*buf, *masked = NULL, *name, *path;
	char			 err[PATH_MAX + 256], file[32];
	size_t			 len, mlen = 0, hl;
	int			 nomatch = 0, rc;

	if (e->mode == CRED_DENY)
		return secrets_file_add(s, e->name, NULL, e->source);
	if ((buf = secrets_read(e->name, SECRETS_FILE_MAX, &len, err,
	    sizeof(err))) == NULL) {
		if (errno == ENOENT || errno == ENOTDIR) {
			log_info("%s: %s does not exist: nothing to mask",
			    e->source, e->name);
			return 0;
		}
		if (errno == EISDIR) {
			log_warnx("%s: %s is a directory: mode \"mask\" "
			    "masks a file's values; hide a directory with mode "
			    "\"deny\"; nothing was run", e->source, e->name);
			return EXIT_SETUP;
		}
		log_warnx("%s: %s; nothing was run", e->source, err);
		return EXIT_SETUP;
	}
	/* The name the access log and the summary give it. */
	hl = home != NULL ? strlen(home) : 0;
	if (hl > 1 && strncmp(e->name, home, hl) == 0 && e->name[hl] == '/')
		rc = asprintf(&name, "~%s", e->name + hl);
	else
		rc = asprintf(&name, "%s", e->name);
	if (rc == -1) {
		secmem_wipe(buf, len);
		free(buf);
		return -1;
	}
	if (len == 0)
		nomatch = 0;	/* empty: shown as it is, nothing to hide */
	else
		masked = secrets_mask(s, e, idx, name, buf, len, &mlen,
		    &nomatch, err, sizeof(err));
	secmem_wipe(buf, len);
	free(buf);
	if (len == 0) {
		free(name);
		return 0;
	}
	if (masked == NULL) {
		rc = nomatch ? secrets_nomatch(s, e, name) : -1;
		if (!nomatch && err[0] != '\0') {
			log_warnx("%s: %s: %s; nothing was run", e->source,
			    e->name, err);
			rc = EXIT_SETUP;
		}
		free(name);
		if (rc == 0)
			return secrets_file_add(s, e->name, NULL, e->source);
		return rc == 1 ? 0 : rc;
	}
	free(name);
	snprintf(file, sizeof(file), "masked.%zu", idx);
	path = fs_runfile_add(files, file, 0, 0444, masked, mlen);
	free(masked);
	if (path == NULL || (copy = secrets_own(s, path)) == NULL) {
		free(path);
		return -1;
	}
	return secrets_file_add(s, e->name, copy, e->source);
}

/*
 * extraCaCertPaths: the certificates of each file (PEM, into *pem,
 * malloc'ed) and the files that hold any (*good, borrowed).  A path
 * that is missing, unreadable or holds no certificate is said and
 * skipped: srt's configs list paths that exist on some hosts only.
 * 0, or -1.
 */
static int
secrets_extra(const struct tls_terminate *t, char **pem,
    const char ***good, size_t *ngood)
{
	FILE		*m;
	const char	**nv;
	char		*buf, *p, *q, err[PATH_MAX + 256];
	size_t		 plen = 0, len, i, found;
	int		 rc = 0;

	*pem = NULL;
	*good = NULL;
	*ngood = 0;
	if ((m = open_memstream(pem, &plen)) == NULL)
		return -1;
	for (i = 0; i < t->extra_ca.n && rc == 0; i++) {
		if ((buf = secrets_read(t->extra_ca.v[i], SECRETS_PEM_MAX,
		    &len, err, sizeof(err))) == NULL) {
			log_warnx("warning: %s.extraCaCertPaths[%zu]: %s: not "
			    "trusted", t->source, i, err);
			continue;
		}
		for (found = 0, p = buf; (p = strstr(p, PEM_BEGIN)) != NULL &&
		    (q = strstr(p, PEM_END)) != NULL; p = q, found++) {
			q += strlen(PEM_END);
			fprintf(m, "%.*s\n", (int)(q - p), p);
		}
		free(buf);
		if (found == 0) {
			log_warnx("warning: %s.extraCaCertPaths[%zu]: %s holds "
			    "no PEM certificate: not trusted", t->source, i,
			    t->extra_ca.v[i]);
			continue;
		}
		if ((nv = reallocarray(*good, *ngood + 1,
		    sizeof(*nv))) == NULL)
			rc = -1;
		else {
			*good = nv;
			nv[(*ngood)++] = t->extra_ca.v[i];
		}
	}
	if (fclose(m) == EOF)
		rc = -1;
	if (rc == -1) {
		free(*pem);
		free(*good);
		*pem = NULL;
		*good = NULL;
	}
	return rc;
}

/*
 * rundir/ca-bundle.pem: the host's bundle, the run's CA, and pem, the
 * certificates of extraCaCertPaths (an upstream's private CA the command
 * trusted directly before).  Its text (malloc'ed, *olen octets), or
 * NULL.
 */
static char *
secrets_bundle(struct runsecrets *s, const char *pem,
    struct fs_runfiles *files, size_t *olen)
{
	FILE		*m;
	char		*out = NULL, *buf, err[PATH_MAX + 256];
	size_t		 len, i;

	*olen = 0;
	if ((m = open_memstream(&out, olen)) == NULL)
		return NULL;
	for (i = 0; i < sizeof(secrets_sys_bundles) /
	    sizeof(*secrets_sys_bundles); i++) {
		if ((buf = secrets_read(secrets_sys_bundles[i],
		    SECRETS_BUNDLE_MAX, &len, err, sizeof(err))) == NULL)
			continue;
		fwrite(buf, 1, len, m);
		if (len > 0 && buf[len - 1] != '\n')
			fputc('\n', m);
		free(buf);
		break;
	}
	if (i == sizeof(secrets_sys_bundles) / sizeof(*secrets_sys_bundles))
		log_info("no system CA bundle here (%s...): the run's bundle "
		    "holds the run's CA and extraCaCertPaths only",
		    secrets_sys_bundles[0]);
	fprintf(m, "# pisbx: the run's CA (network.tlsTerminate)\n%s",
	    s->tls->ca_pem(s->ca));
	if (pem != NULL)
		fputs(pem, m);
	if (fclose(m) == EOF) {
		free(out);
		return NULL;
	}
	if ((s->bundle = fs_runfile_add(files, "ca-bundle.pem", 0, 0444, out,
	    *olen)) == NULL) {
		free(out);
		return NULL;
	}
	return out;
}

/*
 * rundir/truststore.p12, the JVM's, from the bundle's text.  The module
 * reads a bundle by path and writes to a descriptor: both are files in
 * this process's memory (memfd), the bundle named through /proc.  0, or
 * -1 (said why).
 */
static int
secrets_truststore(struct runsecrets *s, struct fs_runfiles *files,
    const char *bundle, size_t blen)
{
	char	 err[PATH_MAX + 256], path[64];
	int	 in, out = -1, rc = -1;

	if ((in = memfd_create("pisbx-bundle", MFD_CLOEXEC)) == -1 ||
	    (out = memfd_create("pisbx-truststore", MFD_CLOEXEC)) == -1 ||
	    io_write_all(in, bundle, blen, 0) == -1) {
		log_warn("truststore.p12");
		goto done;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", in);
	if (s->tls->truststore(s->ca, path, out, err, sizeof(err)) == -1) {
		log_warnx("truststore.p12: %s", err);
		goto done;
	}
	if ((s->truststore = fs_runfile_add_fd(files, "truststore.p12", 0444,
	    out)) == NULL) {
		log_warn("truststore.p12");
		goto done;
	}
	rc = 0;
done:
	if (in != -1)
		close(in);
	if (out != -1)
		close(out);
	return rc;
}

/*
 * The run's CA (the configured files, else a key made now that never
 * leaves this process), its bundle and the JVM's trust store in the run
 * directory, the bundle bound over each system bundle the host has, and
 * the configured key hidden from the command.  0, -1, or EXIT_SETUP.
 */
static int
secrets_tls(struct runsecrets *s, const struct tls_terminate *t,
    struct fs_runfiles *files)
{
	struct tlsmod_ca_opts	 opts;
	struct sandbox_bind	*nb;
	const char		**good;
	char			 err[PATH_MAX + 256], real[PATH_MAX], *pem;
	char			*bundle;
	size_t			 i, j, ngood, blen;
	int			 rc;

	if (secrets_extra(t, &pem, &good, &ngood) == -1)
		return -1;
	memset(&opts, 0, sizeof(opts));
	opts.cert_path = t->ca_cert_path;
	opts.key_path = t->ca_key_path;
	opts.extra_ca = good;
	opts.nextra = ngood;
	s->ca = s->tls->ca_new(&opts, err, sizeof(err));
	free(good);
	if (s->ca == NULL) {
		free(pem);
		log_warnx("%s: %s; nothing was run", t->source, err);
		return EXIT_SETUP;
	}
	bundle = secrets_bundle(s, pem, files, &blen);
	free(pem);
	if (bundle == NULL)
		return -1;
	rc = secrets_truststore(s, files, bundle, blen);
	free(bundle);
	if (rc == -1)
		return -1;
	if (t->ca_key_path != NULL &&
	    secrets_file_add(s, t->ca_key_path, NULL, t->source) == -1)
		return -1;
	for (i = 0; i < sizeof(secrets_sys_bundles) /
	    sizeof(*secrets_sys_bundles); i++) {
		/* One bind per file: cert.pem is often a link to another. */
		if (io_realpath(secrets_sys_bundles[i], real) == NULL)
			continue;
		for (j = 0; j < s->nbinds; j++)
			if (strcmp(s->binds[j].target, real) == 0)
				break;
		if (j < s->nbinds)
			continue;
		if ((nb = reallocarray(s->binds, s->nbinds + 1,
		    sizeof(*nb))) == NULL)
			return -1;
		s->binds = nb;
		nb[s->nbinds].source = s->bundle;
		if ((nb[s->nbinds].target = strdup(real)) == NULL)
			return -1;
		s->nbinds++;
	}
	return 0;
}

/*
 * Every extract compiles and has a group (the module's PCRE2: the config
 * loader only knows it is a string): each bad one said, then 1.
 */
static int
secrets_checks(const struct runsecrets *s, const struct config *conf)
{
	const struct cred_entry	*e;
	char			 err[512];
	size_t			 i;
	int			 bad = 0;

	for (i = 0; i < conf->creds.n; i++) {
		e = &conf->creds.v[i];
		if (e->extract == NULL || e->mode != CRED_MASK)
			continue;
		if (s->tls->regex_check(e->extract, err, sizeof(err)) == -1) {
			log_warnx("%s.extract: %s (%s)", e->source, err,
			    e->extract);
			bad = 1;
		}
	}
	if (bad)
		log_warnx("credentials: every extract needs a capturing group "
		    "around the secret, as /_authToken=(.+)/; nothing was run");
	return bad;
}

int
runsecrets_prepare(const struct config *conf, struct fs_runfiles *files,
    const char *home, struct runsecrets **out)
{
	struct runsecrets	*s;
	char		 err[PATH_MAX + 256];
	size_t		 i;
	int		 rc = -1, need = conf->tls != NULL;

	*out = NULL;
	if (conf->tls == NULL && conf->creds.n == 0)
		return 0;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	for (i = 0; i < conf->creds.n; i++)
		if (conf->creds.v[i].mode == CRED_MASK)
			need = 1;
	if (need) {
		if ((s->tls = tlsmod_load(err, sizeof(err))) == NULL) {
			log_warnx("%s; nothing was run", err);
			rc = EXIT_SETUP;
			goto fail;
		}
		if (secrets_checks(s, conf)) {
			rc = EXIT_SETUP;
			goto fail;
		}
		if ((s->creds = cred_table_new()) == NULL)
			goto fail;
	}
	if (conf->tls != NULL && (rc = secrets_tls(s, conf->tls,
	    files)) != 0)
		goto fail;
	for (i = 0; i < conf->creds.n; i++) {
		rc = conf->creds.v[i].kind == CRED_ENV ?
		    secrets_env_entry(s, conf, i) :
		    secrets_file_entry(s, conf, i, files, home);
		if (rc != 0)
			goto fail;
	}
	*out = s;
	return 0;
fail:
	if (rc == -1)
		log_warn("credentials");
	runsecrets_free(s);
	return rc == -1 ? EXIT_SETUP : rc;
}

void
runsecrets_fs(const struct runsecrets *s, struct fs_inputs *in)
{
	if (s == NULL)
		return;
	in->secrets = s->files;
	in->nsecrets = s->nfiles;
}

void
runsecrets_env(const struct runsecrets *s, struct env_inputs *ei)
{
	if (s == NULL)
		return;
	ei->extra = s->env;
	ei->ca_bundle = s->bundle;
	ei->truststore = s->truststore;
}

void
runsecrets_sandbox(const struct runsecrets *s, struct sandbox *sb)
{
	if (s == NULL)
		return;
	sb->binds = s->binds;
	sb->nbinds = s->nbinds;
}

void
runsecrets_proxy(const struct runsecrets *s, struct proxy_opts *po)
{
	if (s == NULL)
		return;
	po->tls = s->tls;
	po->tls_ca = s->ca;
	po->creds = s->creds;
}

/*
 * The sandbox is started (its processes forked from us, each made
 * undumpable before the command runs: reaper.c).  From now on this
 * process, which holds the CA's key and the values, is undumpable too:
 * no other process of the user reads its memory or environment (under
 * Yama's ptrace_scope 0, or without namespaces, where the command sees
 * our pid).  Not before: a child that is to write its own uid_map must
 * not inherit it.
 *
 * Without namespaces nothing can be bound: a masked copy cannot stand in
 * for its original, which the plan hides instead (landlock_nons), and
 * only the environment's variables name the run's CA bundle.
 */
void
runsecrets_started(const struct runsecrets *s, int nons)
{
	size_t	i;

	if (s == NULL)
		return;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		log_warn("prctl PR_SET_DUMPABLE");
	if (!nons)
		return;
	for (i = 0; i < s->nfiles; i++)
		if (s->files[i].source != NULL)
			log_warnx("%s: %s: cannot show a masked copy without "
			    "namespaces: the file is hidden instead",
			    s->files_src[i], s->files[i].path);
	if (s->bundle != NULL && s->nbinds > 0)
		log_warnx("no namespaces: the run's CA is trusted through "
		    "SSL_CERT_FILE and the other variables only, not in %s; "
		    "a client that reads only the system's bundle fails to "
		    "verify terminated hosts (add it to excludeDomains)",
		    s->binds[0].target);
}

/*
 * The caller's variables back in our environment, for a command the
 * host-IPC fallback runs on the host, outside any sandbox.
 */
void
runsecrets_restore_env(const struct runsecrets *s)
{
	const char	*v;
	size_t		 i;

	for (i = 0; s != NULL && i < s->ntaken; i++)
		if ((v = policy_env_take(s->taken[i])) != NULL)
			(void)setenv(s->taken[i], v, 1);
}

void
runsecrets_free(struct runsecrets *s)
{
	size_t	i;

	if (s == NULL)
		return;
	if (s->tls != NULL && s->ca != NULL)
		s->tls->ca_free(s->ca);
	cred_table_free(s->creds);
	for (i = 0; i < s->nenv; i++) {
		secmem_wipe(s->env[i], strlen(s->env[i]));
		free(s->env[i]);
	}
	free(s->env);
	for (i = 0; i < s->ntaken; i++)
		free(s->taken[i]);
	free(s->taken);
	for (i = 0; i < s->nowned; i++)
		free(s->owned[i]);
	free(s->owned);
	free(s->files);
	free(s->files_src);
	for (i = 0; i < s->nbinds; i++)
		free(s->binds[i].target);
	free(s->binds);
	free(s->bundle);
	free(s->truststore);
	free(s);
}
