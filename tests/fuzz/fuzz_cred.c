/*
 * libFuzzer target for the credential streams (proxy/cred.c).  A fixed
 * table of three credentials -- a short value, one longer than a
 * placeholder's head (its placeholder padded to its length) and one as
 * long as the head -- with injectHosts a.test / a.test, b.test /
 * b.test.  The input is a little program (the placeholders are random:
 * the fuzzer could never guess one): its first byte picks the host
 * (a.test, b.test or c.test, where nothing is injected), then each byte
 * is an op whose top three bits say what to append to the message --
 * literal bytes, a credential's placeholder or value, a prefix of one,
 * "pisbx_", a placeholder with a wrong tail -- or where to cut it into
 * the pieces a stream is fed.
 *
 * Invariants: the INJECT stream's output over the pieces is the
 * whole-buffer swap's (cred_swap_buf), leak for leak; a placeholder
 * head of a credential that may not go to the host is always a leak;
 * the HIDE stream's output never holds a value and swaps back to the
 * message; the scanner finds the first head the whole message holds;
 * Basic credentials are decoded, swapped as the plain text is, and
 * encoded again.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "policy/policy.h"
#include "proxy/cred.h"

#define FC_MSG_MAX	(16 * 1024)
#define FC_CUTS_MAX	64
#define FC_NCRED	3
#define FC_NHOST	3

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct fc {
	char		 msg[FC_MSG_MAX];
	size_t		 len;
	size_t		 cut[FC_CUTS_MAX + 1];
	size_t		 ncut;
};

static void	 fc_init(void);
static void	 fc_add(struct fc *, const void *, size_t);
static void	 fc_build(struct fc *, const uint8_t *, size_t);
static int	 fc_inject(const struct fc *, const struct host *);
static void	 fc_hide(const struct fc *, const struct host *, int);
static void	 fc_scan(const struct fc *);
static void	 fc_basic(const struct fc *, const struct host *);
static const struct cred *fc_first_head(const char *, size_t, size_t *);

/*
 * The values share no byte with a placeholder's alphabet at either
 * end and hold no "p": no value can be made of a placeholder's bytes,
 * whole or in part, so a value in what HIDE gives out is a value it
 * missed.
 */
static const char *fc_values[FC_NCRED] = {
	"Q!7",
	"GHP-LONG+VALUE/0123456789ABCDEFGHIJKLMNOQRSTUVW==",
	"MID#0123456789ABCDEFGHIJKLMNOQRSTUVWXY"
};

static const char fc_json[] =
    "{\"network\": {\"allowedDomains\": [\"a.test\", \"b.test\", "
    "\"c.test\"], \"tlsTerminate\": {}},"
    " \"credentials\": {\"envVars\": ["
    "  {\"name\": \"FC_SHORT\", \"mode\": \"mask\", \"injectHosts\": "
    "[\"a.test\"]},"
    "  {\"name\": \"FC_LONG\", \"mode\": \"mask\", \"injectHosts\": "
    "[\"a.test\", \"b.test\"]},"
    "  {\"name\": \"FC_HEAD\", \"mode\": \"mask\", \"injectHosts\": "
    "[\"b.test\"]}"
    " ]}}";

static const char *fc_hostnames[FC_NHOST] = { "a.test", "b.test", "c.test" };

static struct config		*fc_conf;
static struct cred_table	*fc_table;
static const struct cred	*fc_cred[FC_NCRED];
static struct host		 fc_hosts[FC_NHOST];

/* The config, the table and the hosts, once: a failure is the target's. */
static void
fc_init(void)
{
	struct config_errors errs = { NULL, 0 };
	const char *ph, *err;
	char name[32];
	size_t i;

	if (fc_table != NULL)
		return;
	fc_conf = config_load_buffer(fc_json, sizeof(fc_json) - 1, "fuzz_cred",
	    &errs);
	if (fc_conf == NULL || fc_conf->creds.n != FC_NCRED)
		abort();
	if ((fc_table = cred_table_new()) == NULL)
		abort();
	for (i = 0; i < FC_NCRED; i++) {
		snprintf(name, sizeof(name), "$%s", fc_conf->creds.v[i].name);
		if (cred_table_add(fc_table, name, i, fc_values[i],
		    strlen(fc_values[i]), &ph) == -1)
			abort();
	}
	/* The table's array moves as it grows: pointers once it is full. */
	for (i = 0; i < FC_NCRED; i++)
		if ((fc_cred[i] = cred_table_get(fc_table, i)) == NULL ||
		    fc_cred[i]->entry != i)
			abort();
	for (i = 0; i < FC_NHOST; i++)
		if (host_canon(fc_hostnames[i], strlen(fc_hostnames[i]),
		    &fc_hosts[i], &err) != 0)
			abort();
	/* The table is as the header says: padded to a longer value. */
	if (fc_cred[0]->plen != CRED_PLACEHOLDER_MIN ||
	    fc_cred[1]->plen != fc_cred[1]->vlen ||
	    fc_cred[2]->plen != CRED_PLACEHOLDER_MIN ||
	    fc_cred[2]->vlen != CRED_PLACEHOLDER_MIN)
		abort();
}

static void
fc_add(struct fc *f, const void *p, size_t n)
{
	if (n > FC_MSG_MAX - f->len)
		n = FC_MSG_MAX - f->len;
	memcpy(f->msg + f->len, p, n);
	f->len += n;
}

/* Run the input's program: the message and its cuts. */
static void
fc_build(struct fc *f, const uint8_t *d, size_t n)
{
	const struct cred *c;
	static char wrong[CRED_VALUE_MAX];
	size_t i = 0, k;
	unsigned op, arg;

	f->len = 0;
	f->ncut = 0;
	while (i < n && f->len < FC_MSG_MAX) {
		op = d[i] >> 5;
		arg = d[i] & 31;
		i++;
		c = fc_cred[arg % FC_NCRED];
		switch (op) {
		case 0:		/* arg + 1 literal bytes */
			k = arg + 1 < n - i ? arg + 1 : n - i;
			fc_add(f, d + i, k);
			i += k;
			break;
		case 1:
			fc_add(f, c->placeholder, c->plen);
			break;
		case 2:
			fc_add(f, c->value, c->vlen);
			break;
		case 3:		/* a prefix of a placeholder */
			k = i < n ? d[i++] % c->plen : arg;
			fc_add(f, c->placeholder, k);
			break;
		case 4:		/* a prefix of a value */
			k = i < n ? d[i++] % c->vlen : 0;
			fc_add(f, c->value, k);
			break;
		case 5:
			fc_add(f, CRED_PREFIX, strlen(CRED_PREFIX));
			break;
		case 6:		/* cut here */
			if (f->ncut < FC_CUTS_MAX)
				f->cut[f->ncut++] = f->len;
			break;
		case 7:		/* a placeholder with one byte changed */
			memcpy(wrong, c->placeholder, c->plen);
			k = i < n ? d[i++] % c->plen : c->plen - 1;
			wrong[k] = wrong[k] == 'z' ? 'y' : 'z';
			fc_add(f, wrong, c->plen);
			break;
		}
	}
	f->cut[f->ncut++] = f->len;
}

/* The earliest placeholder head in buf, its offset in *at; or NULL. */
static const struct cred *
fc_first_head(const char *buf, size_t len, size_t *at)
{
	const struct cred *best = NULL;
	const char *p;
	size_t i;

	*at = SIZE_MAX;
	for (i = 0; i < FC_NCRED; i++) {
		p = memmem(buf, len, fc_cred[i]->placeholder,
		    CRED_PLACEHOLDER_MIN);
		if (p != NULL && (size_t)(p - buf) < *at) {
			*at = (size_t)(p - buf);
			best = fc_cred[i];
		}
	}
	return best;
}

/*
 * INJECT over the pieces against the whole-buffer swap.  Returns
 * whether the message leaked.
 */
static int
fc_inject(const struct fc *f, const struct host *h)
{
	struct cred_stream *s;
	const struct cred *leak = NULL, *rleak = NULL;
	char *out = NULL, *ref = NULL;
	size_t outlen = 0, reflen = 0, start = 0, i, at;
	int r = 0, swaps = 0, rr;

	if ((s = cred_stream_new(fc_table, fc_conf, h, 443, CRED_INJECT)) ==
	    NULL)
		abort();
	for (i = 0; i < f->ncut; i++) {
		r = cred_stream_feed(s, f->msg + start, f->cut[i] - start,
		    i == f->ncut - 1, &out, &outlen, &leak);
		if (r == -2)
			abort();
		if (r == -1)
			break;
		swaps += r;
		start = f->cut[i];
	}
	cred_stream_free(s);
	rr = cred_swap_buf(fc_table, fc_conf, h, 443, f->msg, f->len, &ref,
	    &reflen, &rleak);
	if (rr == -2)
		abort();
	if ((r == -1) != (rr == -1))
		abort();
	if (rr == -1) {
		if (leak != rleak || leak == NULL || ref != NULL)
			abort();
	} else if (swaps != rr || outlen != reflen ||
	    memcmp(out, ref, reflen) != 0)
		abort();
	/* A head that may not go to h is a leak, wherever it is. */
	for (i = 0; i < FC_NCRED; i++)
		if (!cred_injects(fc_conf, fc_cred[i], h, 443) &&
		    memmem(f->msg, f->len, fc_cred[i]->placeholder,
		    CRED_PLACEHOLDER_MIN) != NULL && rr != -1)
			abort();
	/* Nothing that names no credential is a leak. */
	if (rr == -1 && fc_first_head(f->msg, f->len, &at) == NULL)
		abort();
	free(out);
	free(ref);
	return rr == -1;
}

/*
 * HIDE over the pieces (flush: every piece fed as final, as a response
 * whose server paused): no value in what comes out, and swapping the
 * placeholders back gives the message.
 */
static void
fc_hide(const struct fc *f, const struct host *h, int flush)
{
	struct cred_stream *s;
	const struct cred *leak = NULL;
	char *out = NULL, *back = NULL;
	size_t outlen = 0, backlen = 0, start = 0, i;
	int r;

	if ((s = cred_stream_new(fc_table, fc_conf, h, 443, CRED_HIDE)) ==
	    NULL)
		abort();
	for (i = 0; i < f->ncut; i++) {
		r = cred_stream_feed(s, f->msg + start, f->cut[i] - start,
		    flush || i == f->ncut - 1, &out, &outlen, &leak);
		if (r < 0)
			abort();
		start = f->cut[i];
	}
	cred_stream_free(s);
	if (flush) {
		/* A value cut by a flush may go out whole in two pieces. */
		free(out);
		return;
	}
	for (i = 0; i < FC_NCRED; i++)
		if (memmem(out, outlen, fc_cred[i]->value,
		    fc_cred[i]->vlen) != NULL)
			abort();
	/*
	 * With no "pisbx_" of its own, the message is what its hidden form
	 * swaps back to -- where each value it held may go.
	 */
	if (memmem(f->msg, f->len, CRED_PREFIX, strlen(CRED_PREFIX)) == NULL) {
		r = cred_swap_buf(fc_table, fc_conf, h, 443, out, outlen,
		    &back, &backlen, &leak);
		if (r == -2)
			abort();
		if (r == -1) {
			if (cred_injects(fc_conf, leak, h, 443) ||
			    memmem(f->msg, f->len, leak->value,
			    leak->vlen) == NULL)
				abort();
		} else if (backlen != f->len ||
		    memcmp(back, f->msg, f->len) != 0)
			abort();
		free(back);
	}
	free(out);
}

/* The scanner over the pieces finds the whole message's first head. */
static void
fc_scan(const struct fc *f)
{
	struct cred_scan sc;
	const struct cred *found = NULL, *first;
	size_t start = 0, i, at;

	memset(&sc, 0, sizeof(sc));
	for (i = 0; i < f->ncut && found == NULL; i++) {
		found = cred_scan(fc_table, &sc, f->msg + start,
		    f->cut[i] - start);
		start = f->cut[i];
	}
	first = fc_first_head(f->msg, f->len, &at);
	if (found != first)
		abort();
}

/*
 * Basic credentials: the message as the decoded user:password is
 * swapped as the plain text is and encoded again; the message as the
 * raw header value never crashes.
 */
static void
fc_basic(const struct fc *f, const struct host *h)
{
	const struct cred *leak = NULL, *rleak = NULL;
	char *val, *out = NULL, *ref = NULL, *enc;
	size_t vlen, outlen, reflen, n;
	int r, rr;

	if ((val = malloc(6 + BASE64_ENCLEN(f->len) + 1)) == NULL)
		abort();
	memcpy(val, "Basic ", 6);
	vlen = 6 + base64_encode(f->msg, f->len, val + 6);
	r = cred_swap_header(fc_table, fc_conf, h, 443, "Authorization", 13,
	    val, vlen, &out, &outlen, &leak);
	rr = cred_swap_buf(fc_table, fc_conf, h, 443, f->msg, f->len, &ref,
	    &reflen, &rleak);
	if (r == -2 || rr == -2)
		abort();
	if (f->len == 0) {
		/* "Basic " alone is not base64: scanned as it is. */
		if (r != 0 || outlen != vlen || memcmp(out, val, vlen) != 0)
			abort();
	} else if (r != rr || (r == -1 && leak != rleak))
		abort();
	else if (r == 0 && (outlen != vlen || memcmp(out, val, vlen) != 0))
		abort();
	else if (r > 0) {
		if ((enc = malloc(6 + BASE64_ENCLEN(reflen) + 1)) == NULL)
			abort();
		memcpy(enc, "Basic ", 6);
		n = 6 + base64_encode(ref, reflen, enc + 6);
		if (outlen != n || memcmp(out, enc, n) != 0)
			abort();
		free(enc);
	}
	free(out);
	free(ref);
	free(val);

	out = NULL;
	r = cred_swap_header(fc_table, fc_conf, h, 443, "proxy-authorization",
	    19, f->msg, f->len, &out, &outlen, &leak);
	if (r == -2)
		abort();
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fc f;
	const struct host *h;

	fc_init();
	if (size == 0)
		return 0;
	h = &fc_hosts[data[0] % FC_NHOST];
	fc_build(&f, data + 1, size - 1);
	(void)fc_inject(&f, h);
	fc_hide(&f, h, 0);
	fc_hide(&f, h, 1);
	fc_scan(&f);
	fc_basic(&f, h);
	return 0;
}
