/*
 * libFuzzer target for review_reply_parse, the parser of every reviewer's
 * and supervisor's reply: any bytes in; an accepted reply is allow or
 * deny, its detail printable (no control octets) and NUL-terminated, and
 * an id in it matched the request's.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "approval/approval.h"

#define FUZZ_ID	"3f0c2a9e-5b1d-4c7e-9a2b-0123456789ab"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum review_result	 res;
	enum review_scope	 scope;
	char			 detail[128];
	size_t			 i, n;
	int			 rc, id_required;

	for (id_required = 0; id_required <= 1; id_required++) {
		memset(detail, 'x', sizeof(detail));
		scope = (enum review_scope)-1;
		rc = review_reply_parse((const char *)data, size, FUZZ_ID,
		    id_required, &res, &scope, detail, sizeof(detail));
		n = strnlen(detail, sizeof(detail));
		if (n == sizeof(detail))
			abort();	/* not terminated */
		if (rc == -1) {
			if (res != REVIEW_RESULT_ERROR || n == 0)
				abort();
			continue;
		}
		if (rc != 0 ||
		    (res != REVIEW_RESULT_ALLOW && res != REVIEW_RESULT_DENY))
			abort();
		/* Wider than once only when the reply says so, in words. */
		if ((scope != REVIEW_SCOPE_ONCE && scope != REVIEW_SCOPE_RUN &&
		    scope != REVIEW_SCOPE_WORKER) ||
		    (scope == REVIEW_SCOPE_WORKER && !id_required) ||
		    (scope != REVIEW_SCOPE_ONCE &&
		    memmem(data, size, "scope", 5) == NULL &&
		    memmem(data, size, "\\u", 2) == NULL))
			abort();
		for (i = 0; i < n; i++)
			if ((unsigned char)detail[i] < 0x20 ||
			    detail[i] == 0x7f)
				abort();
		if (id_required && memmem(data, size, FUZZ_ID,
		    strlen(FUZZ_ID)) == NULL && memmem(data, size, "\\u",
		    2) == NULL)
			abort();	/* accepted without the id */
	}
	return 0;
}
