/*
 * Unit tests for proxy/cred.c (the placeholder table, the leak scan and
 * the swaps both ways) and common/base64.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/base64.h"
#include "policy/policy.h"
#include "proxy/cred.h"

#define INJECT_HOST	"api.example.com"
#define OTHER_HOST	"evil.example.net"

/*
 * policy/ defines config_cred_injects (injectHosts, else allowedDomains)
 * in secrets.c, which this test does not link (it loads no config): this
 * one answers the same for the entries below, which always give
 * injectHosts.  Weak, so that the real one wins wherever it is linked.
 */
__attribute__((weak)) int
config_cred_injects(const struct config *conf, const struct cred_entry *e,
    const struct host *h, uint16_t port)
{
	struct pattern	 hp;
	char		 t[TARGET_TEXT_MAX + 2];
	const char	*errstr;
	size_t		 i;

	(void)conf;
	if (target_format(t, sizeof(t), h, port) == -1 ||
	    pattern_parse(t, strlen(t), 0, &hp, &errstr) == -1)
		return 0;
	for (i = 0; i < e->ninject; i++)
		if (pattern_within(&hp, &e->inject[i]))
			return 1;
	return 0;
}

static struct pattern	 inject_pat;
static struct cred_entry entries[2];
static struct config	*conf;
static struct host	 inject_host, other_host;

static void	 setup_conf(void);
static struct host	 mkhost(const char *);

static struct host
mkhost(const char *name)
{
	struct host	 h;
	const char	*errstr;

	assert_int_equal(host_canon(name, strlen(name), &h, &errstr), 0);
	return h;
}

/* A config of two entries: 0 injects at INJECT_HOST, 1 nowhere. */
static void
setup_conf(void)
{
	const char	*errstr;

	if (conf != NULL)
		return;
	conf = calloc(1, sizeof(*conf));
	assert_non_null(conf);
	assert_int_equal(pattern_parse(INJECT_HOST, strlen(INJECT_HOST), 0,
	    &inject_pat, &errstr), 0);
	entries[0].kind = CRED_ENV;
	entries[0].mode = CRED_MASK;
	entries[0].inject_set = 1;
	entries[0].inject = &inject_pat;
	entries[0].ninject = 1;
	entries[1].kind = CRED_ENV;
	entries[1].mode = CRED_MASK;
	entries[1].inject_set = 1;
	entries[1].ninject = 0;
	conf->creds.v = entries;
	conf->creds.n = 2;
	inject_host = mkhost(INJECT_HOST);
	other_host = mkhost(OTHER_HOST);
}

static void
test_base64(void **state)
{
	static const struct {
		const char	*plain, *enc;
	} v[] = {			/* RFC 4648 section 10 */
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" },
		{ "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	static const char *const bad[] = {
		"Zg=", "Zg", "Z===", "Zh==", "Zm9=", "Zm 9", "Zg==Zg==",
		"Zm9v_A==", "Zm-v", "=Zm9",
	};
	char	 buf[64];
	size_t	 i, n;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		n = base64_encode(v[i].plain, strlen(v[i].plain), buf);
		assert_int_equal(n, strlen(v[i].enc));
		assert_string_equal(buf, v[i].enc);
		assert_int_equal(base64_decode(v[i].enc, strlen(v[i].enc),
		    buf, &n), 0);
		assert_int_equal(n, strlen(v[i].plain));
		assert_memory_equal(buf, v[i].plain, n);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(base64_decode(bad[i], strlen(bad[i]), buf,
		    &n), -1);
}

static void
test_placeholders(void **state)
{
	struct cred_table	*t;
	const char		*p[40], *again;
	char			 v[64];
	size_t			 i, j, seen[36] = { 0 };

	(void)state;
	t = cred_table_new();
	assert_non_null(t);
	for (i = 0; i < 40; i++) {
		snprintf(v, sizeof(v), "value-%zu", i);
		assert_int_equal(cred_table_add(t, "$V", 0, v, strlen(v),
		    &p[i]), 0);
		assert_int_equal(strlen(p[i]), CRED_PLACEHOLDER_MIN);
		assert_memory_equal(p[i], CRED_PREFIX, 6);
		for (j = 6; j < CRED_PLACEHOLDER_MIN; j++) {
			assert_true((p[i][j] >= 'a' && p[i][j] <= 'z') ||
			    (p[i][j] >= '0' && p[i][j] <= '9'));
			seen[p[i][j] >= 'a' ? p[i][j] - 'a' :
			    p[i][j] - '0' + 26]++;
		}
		for (j = 0; j < i; j++)
			assert_int_not_equal(memcmp(p[i], p[j],
			    CRED_PLACEHOLDER_MIN), 0);
	}
	/* 1280 random characters: every one of the 36 shows up. */
	for (i = 0; i < 36; i++)
		assert_true(seen[i] > 0);
	/* The same value for the same entry: the same placeholder. */
	assert_int_equal(cred_table_add(t, "$V", 0, "value-3", 7, &again), 0);
	assert_ptr_equal(again, p[3]);
	assert_int_equal(cred_table_count(t), 40);
	/* For another entry: a new one. */
	assert_int_equal(cred_table_add(t, "$W", 1, "value-3", 7, &again), 0);
	assert_string_not_equal(again, p[3]);
	assert_int_equal(cred_table_count(t), 41);
	cred_table_free(t);
}

static void
test_limits(void **state)
{
	struct cred_table	*t;
	const char		*p;
	char			*big, v[32];
	size_t			 i;

	(void)state;
	t = cred_table_new();
	assert_non_null(t);
	assert_int_equal(cred_table_add(t, "$E", 0, "", 0, &p), -1);
	big = malloc(CRED_VALUE_MAX + 1);
	assert_non_null(big);
	memset(big, 'x', CRED_VALUE_MAX + 1);
	assert_int_equal(cred_table_add(t, "$B", 0, big, CRED_VALUE_MAX + 1,
	    &p), -1);
	/* The longest value: padded to its length. */
	assert_int_equal(cred_table_add(t, "$B", 0, big, CRED_VALUE_MAX, &p),
	    0);
	assert_int_equal(strlen(p), CRED_VALUE_MAX);
	assert_memory_equal(p, CRED_PREFIX, 6);
	free(big);
	for (i = 1; i < CRED_MAX; i++) {
		snprintf(v, sizeof(v), "v%zu", i);
		assert_int_equal(cred_table_add(t, "$V", 0, v, strlen(v), &p),
		    0);
	}
	assert_int_equal(cred_table_count(t), CRED_MAX);
	assert_int_equal(cred_table_add(t, "$V", 0, "one-more", 8, &p), -1);
	/* A value already there still has its placeholder. */
	assert_int_equal(cred_table_add(t, "$V", 0, "v7", 2, &p), 0);
	cred_table_free(t);
}

static void
test_padding(void **state)
{
	struct cred_table	*t;
	const struct cred	*c;
	const char		*p;
	const char		 val[] = "ghp_0123456789abcdefghijklmnopqrstuvwxyzABCD";

	(void)state;
	t = cred_table_new();
	assert_int_equal(cred_table_add(t, "$GH_TOKEN", 0, val,
	    strlen(val), &p), 0);
	assert_int_equal(strlen(p), strlen(val));
	c = cred_table_get(t, 0);
	assert_int_equal(c->plen, strlen(val));
	assert_int_equal(c->vlen, strlen(val));
	assert_string_equal(c->name, "$GH_TOKEN");
	assert_int_equal(c->entry, 0);
	assert_null(cred_table_get(t, 1));
	cred_table_free(t);
}

static void
test_scan_splits(void **state)
{
	struct cred_table	*t;
	struct cred_scan	 s;
	const char		*p;
	char			 buf[256];
	size_t			 len, i, j, hits;
	const struct cred	*c;

	(void)state;
	t = cred_table_new();
	assert_int_equal(cred_table_add(t, "$T", 0, "secret", 6, &p), 0);
	len = (size_t)snprintf(buf, sizeof(buf),
	    "GET /x?a=pisbx_ HTTP/1.1\r\nX-Token: %s\r\n\r\n", p);
	/* Every split point, and every pair of split points. */
	for (i = 0; i <= len; i++) {
		for (j = i; j <= len; j++) {
			memset(&s, 0, sizeof(s));
			hits = 0;
			if ((c = cred_scan(t, &s, buf, i)) != NULL)
				hits++;
			if (hits == 0 &&
			    (c = cred_scan(t, &s, buf + i, j - i)) != NULL)
				hits++;
			if (hits == 0 &&
			    (c = cred_scan(t, &s, buf + j, len - j)) != NULL)
				hits++;
			assert_int_equal(hits, 1);
			assert_string_equal(c->name, "$T");
		}
	}
	/* One byte at a time. */
	memset(&s, 0, sizeof(s));
	for (i = 0, c = NULL; i < len && c == NULL; i++)
		c = cred_scan(t, &s, buf + i, 1);
	assert_non_null(c);
	/* A head with one byte changed is no placeholder. */
	buf[strlen("GET /x?a=pisbx_ HTTP/1.1\r\nX-Token: ") + 20] ^= 1;
	for (i = 0; i <= len; i++) {
		memset(&s, 0, sizeof(s));
		assert_null(cred_scan(t, &s, buf, i));
		assert_null(cred_scan(t, &s, buf + i, len - i));
	}
	/* An empty table finds nothing and costs nothing. */
	memset(&s, 0, sizeof(s));
	assert_null(cred_scan(NULL, &s, buf, len));
	cred_table_free(t);
}

static void
test_swap_buf(void **state)
{
	struct cred_table	*t;
	const struct cred	*leak = NULL;
	const char		*pa, *pb;
	char			 in[256], *out;
	size_t			 outlen;

	(void)state;
	setup_conf();
	t = cred_table_new();
	assert_int_equal(cred_table_add(t, "$A", 0, "tok-A", 5, &pa), 0);
	assert_int_equal(cred_table_add(t, "$B", 1, "tok-B", 5, &pb), 0);
	/* A may go to INJECT_HOST: swapped, twice. */
	snprintf(in, sizeof(in), "/api?k=%s&again=%s", pa, pa);
	assert_int_equal(cred_swap_buf(t, conf, &inject_host, 443, in,
	    strlen(in), &out, &outlen, &leak), 2);
	assert_string_equal(out, "/api?k=tok-A&again=tok-A");
	assert_int_equal(outlen, strlen(out));
	free(out);
	/* Not to OTHER_HOST: a leak naming it. */
	assert_int_equal(cred_swap_buf(t, conf, &other_host, 443, in,
	    strlen(in), &out, &outlen, &leak), -1);
	assert_ptr_equal(leak, cred_table_get(t, 0));
	assert_null(out);
	/* B nowhere, even beside A where A may go. */
	snprintf(in, sizeof(in), "%s %s", pa, pb);
	leak = NULL;
	assert_int_equal(cred_swap_buf(t, conf, &inject_host, 443, in,
	    strlen(in), &out, &outlen, &leak), -1);
	assert_string_equal(leak->name, "$B");
	/* No host: a scan, every placeholder a leak. */
	assert_int_equal(cred_swap_buf(t, NULL, NULL, 0, pa, strlen(pa),
	    &out, &outlen, &leak), -1);
	/* Nothing to swap: a copy. */
	assert_int_equal(cred_swap_buf(t, conf, &other_host, 443,
	    "pisbx_ but no head", 18, &out, &outlen, &leak), 0);
	assert_string_equal(out, "pisbx_ but no head");
	free(out);
	cred_table_free(t);
}

/*
 * A placeholder cut one to five bytes short and followed by another's:
 * the first must not read as whole by borrowing the other's "pisbx",
 * which would hide the other's head from the scan.  To a host the
 * other may not go to, that is a leak naming it, for every one of 250
 * placeholders (with a last byte drawn from all 36, about 7 of them
 * would end in 'p' and go through).
 */
static void
test_swap_overlap(void **state)
{
	struct cred_table	*t;
	const struct cred	*leak;
	const char		*pa, *pb;
	char			 v[32], in[2 * CRED_PLACEHOLDER_MIN + 1], *out;
	size_t			 i, k, outlen;

	(void)state;
	setup_conf();
	t = cred_table_new();
	assert_int_equal(cred_table_add(t, "$B", 1, "tok-B", 5, &pb), 0);
	for (i = 0; i < 250; i++) {
		snprintf(v, sizeof(v), "over-%zu", i);
		assert_int_equal(cred_table_add(t, "$A", 0, v, strlen(v),
		    &pa), 0);
		assert_null(memchr("pisbx", pa[CRED_PLACEHOLDER_MIN - 1], 5));
		for (k = 1; k <= 5; k++) {
			memcpy(in, pa, CRED_PLACEHOLDER_MIN - k);
			memcpy(in + CRED_PLACEHOLDER_MIN - k, pb,
			    CRED_PLACEHOLDER_MIN);
			leak = NULL;
			out = NULL;
			assert_int_equal(cred_swap_buf(t, conf, &inject_host,
			    443, in, 2 * CRED_PLACEHOLDER_MIN - k, &out,
			    &outlen, &leak), -1);
			assert_non_null(leak);
			assert_null(out);
		}
	}
	cred_table_free(t);
}

static void
test_swap_basic(void **state)
{
	struct cred_table	*t;
	const struct cred	*leak = NULL;
	const char		*p;
	char			 userpass[128], hdr[256], *out, dec[128];
	size_t			 outlen, n;

	(void)state;
	setup_conf();
	t = cred_table_new();
	assert_int_equal(cred_table_add(t, "$GH_TOKEN", 0, "ghp_realvalue",
	    13, &p), 0);
	snprintf(userpass, sizeof(userpass), "x-access-token:%s", p);
	strcpy(hdr, "Basic ");
	base64_encode(userpass, strlen(userpass), hdr + 6);
	assert_int_equal(cred_swap_header(t, conf, &inject_host, 443,
	    "authorization", 13, hdr, strlen(hdr), &out, &outlen, &leak), 1);
	assert_memory_equal(out, "Basic ", 6);
	assert_int_equal(base64_decode(out + 6, outlen - 6, dec, &n), 0);
	assert_int_equal(n, strlen("x-access-token:ghp_realvalue"));
	assert_memory_equal(dec, "x-access-token:ghp_realvalue", n);
	free(out);
	/* Proxy-Authorization too, and a leak elsewhere. */
	assert_int_equal(cred_swap_header(t, conf, &other_host, 80,
	    "Proxy-Authorization", 19, hdr, strlen(hdr), &out, &outlen,
	    &leak), -1);
	assert_string_equal(leak->name, "$GH_TOKEN");
	/* Bearer: the placeholder as it is. */
	snprintf(hdr, sizeof(hdr), "Bearer %s", p);
	assert_int_equal(cred_swap_header(t, conf, &inject_host, 443,
	    "Authorization", 13, hdr, strlen(hdr), &out, &outlen, &leak), 1);
	assert_string_equal(out, "Bearer ghp_realvalue");
	free(out);
	/* "Basic" with what is not base64: scanned as it is. */
	snprintf(hdr, sizeof(hdr), "Basic %s", p);
	assert_int_equal(cred_swap_header(t, conf, &other_host, 443,
	    "Authorization", 13, hdr, strlen(hdr), &out, &outlen, &leak), -1);
	/* Basic without a placeholder: the value unchanged. */
	assert_int_equal(cred_swap_header(t, conf, &other_host, 443,
	    "Authorization", 13, "Basic dXNlcjpwdw==", 18, &out, &outlen,
	    &leak), 0);
	assert_string_equal(out, "Basic dXNlcjpwdw==");
	free(out);
	/* Another header: as a buffer. */
	assert_int_equal(cred_swap_header(t, conf, &inject_host, 443,
	    "X-Api-Key", 9, p, strlen(p), &out, &outlen, &leak), 1);
	assert_string_equal(out, "ghp_realvalue");
	free(out);
	cred_table_free(t);
}

/*
 * A value with a line break (a whole file of two lines) is never put in
 * a header or a request line as it is: refused, naming the credential.
 * In a Basic credential it is encoded again, and in a body it goes.
 */
static void
test_swap_line_breaks(void **state)
{
	static const char	*const bad[] = { "tok\nX-Evil: 1", "tok\r\n",
	    "\rtok" };
	struct cred_table	*t;
	struct cred_stream	*s;
	const struct cred	*leak;
	const char		*p;
	char			 userpass[128], hdr[256], *out, dec[128];
	size_t			 outlen, n, i;

	(void)state;
	setup_conf();
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		t = cred_table_new();
		assert_int_equal(cred_table_add(t, "~/two.txt", 0, bad[i],
		    strlen(bad[i]), &p), 0);
		leak = NULL;
		snprintf(hdr, sizeof(hdr), "Bearer %s", p);
		assert_int_equal(cred_swap_header(t, conf, &inject_host, 443,
		    "Authorization", 13, hdr, strlen(hdr), &out, &outlen,
		    &leak), -1);
		assert_non_null(leak);
		assert_string_equal(leak->name, "~/two.txt");
		assert_null(out);
		leak = NULL;
		snprintf(hdr, sizeof(hdr), "/p/%s", p);
		assert_int_equal(cred_swap_buf(t, conf, &inject_host, 443,
		    hdr, strlen(hdr), &out, &outlen, &leak), -1);
		assert_non_null(leak);
		/* Basic: decoded, swapped, encoded again. */
		snprintf(userpass, sizeof(userpass), "u:%s", p);
		strcpy(hdr, "Basic ");
		base64_encode(userpass, strlen(userpass), hdr + 6);
		assert_int_equal(cred_swap_header(t, conf, &inject_host, 443,
		    "Authorization", 13, hdr, strlen(hdr), &out, &outlen,
		    &leak), 1);
		assert_int_equal(base64_decode(out + 6, outlen - 6, dec, &n),
		    0);
		assert_int_equal(n, 2 + strlen(bad[i]));
		assert_memory_equal(dec + 2, bad[i], strlen(bad[i]));
		free(out);
		/* A body: as it is. */
		s = cred_stream_new(t, conf, &inject_host, 443, CRED_INJECT);
		assert_non_null(s);
		out = NULL;
		outlen = 0;
		assert_int_equal(cred_stream_feed(s, p, strlen(p), 1, &out,
		    &outlen, &leak), 1);
		assert_int_equal(outlen, strlen(bad[i]));
		assert_memory_equal(out, bad[i], outlen);
		free(out);
		cred_stream_free(s);
		cred_table_free(t);
	}
}

/*
 * The request target takes URI characters only: a value with a space, a
 * control byte, DEL or a byte over 0x7f is refused there (the space
 * would end the target and make the rest the version), naming the
 * credential, with the reason; in a header value a space goes, and a
 * plain token goes in the target.  A credential that may not go to the
 * host at all has no such reason (NULL: not an injectHost).
 */
static void
test_swap_target_bytes(void **state)
{
	static const char	*const bad[] = { "tok en", "tok\tX", "tok\x01",
	    "tok\x7f", "t\xc3\xa9k", "tok\x80" };
	struct cred_table	*t;
	const struct cred	*leak;
	const char		*p, *why;
	char			 buf[256], *out;
	size_t			 outlen, i;

	(void)state;
	setup_conf();
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		t = cred_table_new();
		assert_int_equal(cred_table_add(t, "$API_KEY", 0, bad[i],
		    strlen(bad[i]), &p), 0);
		leak = NULL;
		snprintf(buf, sizeof(buf), "/v1?key=%s&x=1", p);
		assert_int_equal(cred_swap_target(t, conf, &inject_host, 443,
		    buf, strlen(buf), &out, &outlen, &leak), -1);
		assert_null(out);
		assert_non_null(leak);
		assert_string_equal(leak->name, "$API_KEY");
		why = cred_unfit_why(conf, leak, &inject_host, 443,
		    CRED_FIT_TARGET);
		assert_non_null(why);
		if (strchr(bad[i], '\t') == NULL)
			assert_non_null(strstr(why,
			    "cannot be put in a request target"));
		/* Not an injectHost: the placeholder may not go at all. */
		assert_null(cred_unfit_why(conf, leak, &other_host, 443,
		    CRED_FIT_TARGET));
		/* A header value keeps spaces (and the rest but CR, LF). */
		snprintf(buf, sizeof(buf), "Bearer %s", p);
		assert_int_equal(cred_swap_header(t, conf, &inject_host, 443,
		    "Authorization", 13, buf, strlen(buf), &out, &outlen,
		    &leak), 1);
		assert_int_equal(outlen, 7 + strlen(bad[i]));
		assert_memory_equal(out + 7, bad[i], strlen(bad[i]));
		free(out);
		cred_table_free(t);
	}
	/* A token of URI characters goes into the target. */
	t = cred_table_new();
	assert_int_equal(cred_table_add(t, "$API_KEY", 0, "sk-AZaz09._~%2F",
	    15, &p), 0);
	snprintf(buf, sizeof(buf), "/v1?key=%s", p);
	assert_int_equal(cred_swap_target(t, conf, &inject_host, 443, buf,
	    strlen(buf), &out, &outlen, &leak), 1);
	assert_string_equal(out, "/v1?key=sk-AZaz09._~%2F");
	free(out);
	cred_table_free(t);
}

/* Feed buf to s cut at i and j, the output collected. */
static int
feed3(struct cred_stream *s, const char *buf, size_t len, size_t i,
    size_t j, char **out, size_t *outlen, const struct cred **leak)
{
	int	r, sum = 0;

	*out = NULL;
	*outlen = 0;
	if ((r = cred_stream_feed(s, buf, i, 0, out, outlen, leak)) < 0)
		return r;
	sum += r;
	if ((r = cred_stream_feed(s, buf + i, j - i, 0, out, outlen,
	    leak)) < 0)
		return r;
	sum += r;
	if ((r = cred_stream_feed(s, buf + j, len - j, 1, out, outlen,
	    leak)) < 0)
		return r;
	return sum + r;
}

static void
test_stream(void **state)
{
	struct cred_table	*t;
	struct cred_stream	*s;
	const struct cred	*leak;
	const char		*pshort, *plong;
	const char		 lval[] = "LONG-VALUE-0123456789-0123456789-0123456789";
	char			 in[512], want[512], *out;
	size_t			 len, wlen, outlen, i, j;

	(void)state;
	setup_conf();
	t = cred_table_new();
	assert_int_equal(cred_table_add(t, "$S", 0, "short", 5, &pshort), 0);
	assert_int_equal(cred_table_add(t, "$L", 0, lval, strlen(lval),
	    &plong), 0);
	len = (size_t)snprintf(in, sizeof(in),
	    "{\"a\":\"%s\",\"pisbx_x\":\"%s\",\"p\":\"pisbx\"}", pshort, plong);
	wlen = (size_t)snprintf(want, sizeof(want),
	    "{\"a\":\"short\",\"pisbx_x\":\"%s\",\"p\":\"pisbx\"}", lval);
	for (i = 0; i <= len; i++) {
		for (j = i; j <= len; j += 3) {
			s = cred_stream_new(t, conf, &inject_host, 443,
			    CRED_INJECT);
			assert_non_null(s);
			assert_true(cred_stream_length_changes(s));
			assert_int_equal(feed3(s, in, len, i, j, &out, &outlen,
			    &leak), 2);
			assert_int_equal(outlen, wlen);
			assert_memory_equal(out, want, wlen);
			free(out);
			cred_stream_free(s);

			/* Back: the values hidden again. */
			s = cred_stream_new(t, conf, &inject_host, 443,
			    CRED_HIDE);
			assert_int_equal(feed3(s, want, wlen, i < wlen ? i :
			    wlen, j < wlen ? j : wlen, &out, &outlen, &leak),
			    2);
			assert_int_equal(outlen, len);
			assert_memory_equal(out, in, len);
			free(out);
			cred_stream_free(s);

			/* Elsewhere: a leak, at whatever split. */
			s = cred_stream_new(t, conf, &other_host, 443,
			    CRED_INJECT);
			leak = NULL;
			assert_int_equal(feed3(s, in, len, i, j, &out, &outlen,
			    &leak), -1);
			assert_string_equal(leak->name, "$S");
			free(out);
			cred_stream_free(s);
		}
	}
	cred_table_free(t);
}

static void
test_stream_lengths(void **state)
{
	struct cred_table	*t;
	struct cred_stream	*s;
	const struct cred	*leak = NULL;
	const char		*p;
	char			*out;
	size_t			 outlen;
	const char		 val[] = "ghp_0123456789abcdefghijklmnopqrstuvwxyzABCD";

	(void)state;
	setup_conf();
	t = cred_table_new();
	assert_int_equal(cred_table_add(t, "$GH_TOKEN", 0, val, strlen(val),
	    &p), 0);
	/* Padded to the value's length: a Content-Length holds. */
	s = cred_stream_new(t, conf, &inject_host, 443, CRED_INJECT);
	assert_false(cred_stream_length_changes(s));
	cred_stream_free(s);
	/* Its head with the padding cut is refused, not guessed. */
	assert_int_equal(cred_swap_buf(t, conf, &inject_host, 443, p,
	    CRED_PLACEHOLDER_MIN, &out, &outlen, &leak), -1);
	assert_string_equal(leak->name, "$GH_TOKEN");
	assert_int_equal(cred_swap_buf(t, conf, &inject_host, 443, p,
	    strlen(p), &out, &outlen, &leak), 1);
	assert_string_equal(out, val);
	free(out);
	/* A short value changes the length. */
	assert_int_equal(cred_table_add(t, "$X", 0, "abc", 3, &p), 0);
	s = cred_stream_new(t, conf, &inject_host, 443, CRED_INJECT);
	assert_true(cred_stream_length_changes(s));
	cred_stream_free(s);
	s = cred_stream_new(t, conf, &inject_host, 443, CRED_HIDE);
	assert_true(cred_stream_length_changes(s));
	/* The end of a stream may come with no bytes and no buffer. */
	out = NULL;
	outlen = 0;
	assert_int_equal(cred_stream_feed(s, "xa", 2, 0, &out, &outlen,
	    &leak), 0);
	assert_int_equal(outlen, 1);	/* "x"; "a" may begin "abc" */
	free(out);
	out = NULL;
	outlen = 0;
	assert_int_equal(cred_stream_feed(s, NULL, 0, 1, &out, &outlen,
	    &leak), 0);
	assert_string_equal(out, "a");
	free(out);
	cred_stream_free(s);
	cred_table_free(t);
}

/* A whole head hidden, and which hosts take some value. */
static void
test_hide_buf(void **state)
{
	struct cred_table	*t;
	const char		*pa, *pb;
	char			 want[256], *out;
	size_t			 outlen;

	(void)state;
	setup_conf();
	t = cred_table_new();
	assert_false(cred_injects_any(t, conf, &inject_host, 443));
	assert_int_equal(cred_table_add(t, "$A", 0, "tok-A", 5, &pa), 0);
	assert_int_equal(cred_table_add(t, "$B", 1, "tok-B", 5, &pb), 0);
	assert_true(cred_injects_any(t, conf, &inject_host, 443));
	assert_false(cred_injects_any(t, conf, &other_host, 443));
	assert_false(cred_injects_any(NULL, conf, &inject_host, 443));
	assert_int_equal(cred_hide_buf(t, "HTTP/1.1 200 OK\r\nX-A: tok-A\r\n"
	    "X-B: tok-Btok-A\r\n\r\n", 48, &out, &outlen), 3);
	snprintf(want, sizeof(want), "HTTP/1.1 200 OK\r\nX-A: %s\r\n"
	    "X-B: %s%s\r\n\r\n", pa, pb, pa);
	assert_string_equal(out, want);
	assert_int_equal(outlen, strlen(want));
	free(out);
	/* A value cut at the end is no value: out as it is. */
	assert_int_equal(cred_hide_buf(t, "x tok-", 6, &out, &outlen), 0);
	assert_string_equal(out, "x tok-");
	free(out);
	cred_table_free(t);
}

/*
 * Not an assertion: how fast the leak scan runs over text with no
 * placeholder and with "pisbx_" now and then (it is on every tunnel).
 */
/*
 * Two values where one's tail is the other's head ("...XYZ" and
 * "XYZ..."), in a response that holds them run together: both are
 * hidden, and no byte of the second goes out, whole or fed a byte at a
 * time.  The same for a value that overlaps a copy of itself.
 */
static void
test_hide_overlap(void **state)
{
	static const char *const in[] = {
		"[abc-secret-XYZ-def-token]",	/* A's tail is B's head */
		"[XYZ-def-token]",		/* B alone */
		"[abc-secret-XYZ-def-tokenabc-secret-XYZ-def-token]",
		"[q1q1q1q]",			/* C overlaps itself */
	};
	struct cred_table	*t;
	struct cred_stream	*s;
	const struct cred	*leak = NULL;
	const char		*pa, *pb, *pc;
	char			*out, big[4096];
	size_t			 i, k, outlen;
	int			 r;

	(void)state;
	setup_conf();
	t = cred_table_new();
	assert_int_equal(cred_table_add(t, "$A", 0, "abc-secret-XYZ", 14,
	    &pa), 0);
	assert_int_equal(cred_table_add(t, "$B", 1, "XYZ-def-token", 13,
	    &pb), 0);
	assert_int_equal(cred_table_add(t, "$C", 1, "q1q1q", 5, &pc), 0);
	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		assert_true(cred_hide_buf(t, in[i], strlen(in[i]), &out,
		    &outlen) > 0);
		assert_null(memmem(out, outlen, "-def-token", 10));
		assert_null(memmem(out, outlen, "abc-secret", 10));
		assert_null(memmem(out, outlen, "q1q1", 4));
		assert_null(memmem(out, outlen, "1q]", 3));
		free(out);
		/* A byte at a time, as a stream. */
		s = cred_stream_new(t, conf, &inject_host, 443, CRED_HIDE);
		assert_non_null(s);
		out = NULL;	/* each feed appends to it */
		outlen = 0;
		for (k = 0; k < strlen(in[i]); k++)
			assert_true(cred_stream_feed(s, in[i] + k, 1,
			    k + 1 == strlen(in[i]), &out, &outlen, &leak) >= 0);
		assert_null(memmem(out, outlen, "-def-token", 10));
		assert_null(memmem(out, outlen, "abc-secret", 10));
		assert_null(memmem(out, outlen, "q1q1", 4));
		assert_null(memmem(out, outlen, "1q]", 3));
		free(out);
		cred_stream_free(s);
	}
	/* Alone, each is its own placeholder, as before. */
	assert_int_equal(cred_hide_buf(t, "XYZ-def-token", 13, &out, &outlen),
	    1);
	assert_string_equal(out, pb);
	free(out);
	cred_table_free(t);

	/*
	 * A value of one byte repeated, in a stream of that byte: each
	 * place may begin another, so the bytes are held; past four
	 * values' worth the stream ends instead of holding them all.
	 */
	t = cred_table_new();
	memset(big, 'a', sizeof(big));
	assert_int_equal(cred_table_add(t, "$R", 1, big, 1000, &pa), 0);
	s = cred_stream_new(t, conf, &inject_host, 443, CRED_HIDE);
	out = NULL;
	outlen = 0;
	for (k = 0, r = 0; k < 300 && r >= 0; k++)
		r = cred_stream_feed(s, big, sizeof(big), 0, &out, &outlen,
		    &leak);
	assert_int_equal(r, -2);
	assert_true(k > 4 * CRED_VALUE_MAX / sizeof(big));
	assert_null(memmem(out, outlen, "aaaa", 4));
	free(out);
	cred_stream_free(s);
	cred_table_free(t);
}

static void
test_scan_speed(void **state)
{
	struct cred_table	*t;
	struct cred_scan	 s;
	struct timespec		 a, b;
	const char		*p;
	char			*buf, v[16];
	size_t			 len = 64 << 20, i, chunk = 16384, rounds = 4;
	double			 sec;

	(void)state;
	t = cred_table_new();
	for (i = 0; i < 16; i++) {
		snprintf(v, sizeof(v), "val%zu", i);
		assert_int_equal(cred_table_add(t, "$V", 0, v, strlen(v), &p),
		    0);
	}
	buf = malloc(len);
	assert_non_null(buf);
	for (i = 0; i < len; i++)
		buf[i] = "the quick brown fox jumps over a lazy dog; "
		    "pip pisb x_\n"[i % 56];
	for (i = 4096; i + 6 < len; i += 65536)
		memcpy(buf + i, "pisbx_", 6);
	memset(&s, 0, sizeof(s));
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (size_t r = 0; r < rounds; r++)
		for (i = 0; i < len; i += chunk)
			assert_null(cred_scan(t, &s, buf + i, chunk));
	clock_gettime(CLOCK_MONOTONIC, &b);
	sec = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	print_message("cred_scan: %.2f GB/s (16 KiB pieces, 16 credentials)\n",
	    (double)len * rounds / sec / 1e9);
	free(buf);
	cred_table_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_placeholders),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_padding),
		cmocka_unit_test(test_scan_splits),
		cmocka_unit_test(test_swap_buf),
		cmocka_unit_test(test_swap_overlap),
		cmocka_unit_test(test_swap_basic),
		cmocka_unit_test(test_swap_line_breaks),
		cmocka_unit_test(test_swap_target_bytes),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_stream_lengths),
		cmocka_unit_test(test_hide_buf),
		cmocka_unit_test(test_hide_overlap),
		cmocka_unit_test(test_scan_speed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
