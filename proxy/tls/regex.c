/*
 * credentials' "extract": srt's patterns are JavaScript regular
 * expressions, read here by PCRE2 with JavaScript's escapes (\u0041,
 * \x41 only with two digits, \U literal: PCRE2_ALT_BSUX and
 * PCRE2_EXTRA_ALT_BSUX), on bytes (no UTF mode: secrets are ASCII, and
 * offsets are byte offsets).  Group 1 of each match is the secret.
 */
#include <stdio.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "proxy/tls/tls.h"

static pcre2_code *regex_compile(const char *, char *, size_t);

/* The pattern compiled, with at least one capturing group; else NULL. */
static pcre2_code *
regex_compile(const char *pattern, char *err, size_t errlen)
{
	pcre2_compile_context	*cc;
	pcre2_code		*re;
	PCRE2_SIZE		 off;
	PCRE2_UCHAR		 msg[256];
	uint32_t		 ncap = 0;
	int			 e;

	if ((cc = pcre2_compile_context_create(NULL)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
#ifdef PCRE2_EXTRA_ALT_BSUX
	pcre2_set_compile_extra_options(cc, PCRE2_EXTRA_ALT_BSUX);
#endif
	re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
	    PCRE2_ALT_BSUX, &e, &off, cc);
	pcre2_compile_context_free(cc);
	if (re == NULL) {
		pcre2_get_error_message(e, msg, sizeof(msg));
		snprintf(err, errlen, "extract /%.200s/: %s at offset %zu",
		    pattern, (const char *)msg, (size_t)off);
		return NULL;
	}
	if (pcre2_pattern_info(re, PCRE2_INFO_CAPTURECOUNT, &ncap) != 0 ||
	    ncap < 1) {
		snprintf(err, errlen, "extract /%.200s/: no capturing group "
		    "(group 1 is the secret)", pattern);
		pcre2_code_free(re);
		return NULL;
	}
	return re;
}

int
tls_regex_check(const char *pattern, char *err, size_t errlen)
{
	pcre2_code	*re;

	if ((re = regex_compile(pattern, err, errlen)) == NULL)
		return -1;
	pcre2_code_free(re);
	return 0;
}

/*
 * Group 1's spans over every match, as JavaScript's "g" flag walks them:
 * after a match the next search starts at its end, after an empty match
 * one byte further.  A match whose group 1 did not take part, or took
 * nothing, has no secret to hide and gives no span.
 */
int
tls_regex_spans(const char *pattern, const char *buf, size_t len,
    size_t (*spans)[2], size_t max, char *err, size_t errlen)
{
	pcre2_match_data	*md = NULL;
	pcre2_code		*re;
	PCRE2_SIZE		*ov;
	size_t			 at = 0, n = 0;
	int			 rc;

	if ((re = regex_compile(pattern, err, errlen)) == NULL)
		return -1;
	if ((md = pcre2_match_data_create_from_pattern(re, NULL)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	while (at <= len) {
		rc = pcre2_match(re, (PCRE2_SPTR)buf, len, at, 0, md, NULL);
		if (rc == PCRE2_ERROR_NOMATCH)
			break;
		if (rc < 0) {
			PCRE2_UCHAR	 msg[256];

			pcre2_get_error_message(rc, msg, sizeof(msg));
			snprintf(err, errlen, "extract /%.200s/: %s", pattern,
			    (const char *)msg);
			goto fail;
		}
		ov = pcre2_get_ovector_pointer(md);
		if (rc >= 2 && ov[2] != PCRE2_UNSET && ov[3] > ov[2]) {
			if (n == max) {
				snprintf(err, errlen, "extract /%.200s/: more "
				    "than %zu matches", pattern, max);
				goto fail;
			}
			spans[n][0] = ov[2];
			spans[n][1] = ov[3] - ov[2];
			n++;
		}
		at = ov[1] > ov[0] ? ov[1] : ov[1] + 1;
	}
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return (int)n;
fail:
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return -1;
}
