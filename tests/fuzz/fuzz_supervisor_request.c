/*
 * libFuzzer target for supervisor_request_parse, what pisbx-supervisor
 * does first with every line a client sends: any bytes in; an accepted
 * request has an id, a known kind, a token workerId and an absolute cwd,
 * and no longer carries the capability; a refused one has a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy/policy.h"
#include "approval/approval.h"
#include "supervisor/supervisor.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct supervisor_request	 r;
	char				 reason[256];
	int				 rc;

	memset(reason, 'x', sizeof(reason));
	rc = supervisor_request_parse((const char *)data, size, "fuzz-cap", &r,
	    reason, sizeof(reason));
	if (strnlen(reason, sizeof(reason)) == sizeof(reason))
		abort();
	if (rc == -1) {
		if (reason[0] == '\0')
			abort();
	} else {
		if (rc != 0 || r.id == NULL || r.worker_id == NULL ||
		    r.cwd == NULL || r.cwd[0] != '/' || r.obj == NULL ||
		    json_object_get(r.obj, "capability") != NULL)
			abort();
		if (r.kind != SUPREQ_REGISTER && r.kind != SUPREQ_UNREGISTER &&
		    r.kind != SUPREQ_NETWORK && r.kind != SUPREQ_HOSTIPC)
			abort();
	}
	supervisor_request_clear(&r);
	return 0;
}
