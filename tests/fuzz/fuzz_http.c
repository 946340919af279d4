/*
 * libFuzzer target: the HTTP request/response head parsers, the URI
 * splitter on the parsed target, and the chunked decoder over the bytes
 * after the head.
 */
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proxy/parse.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_msg m;
	struct chunk_decoder d;
	const char *buf = (const char *)data, *auth, *path, *err, *cd;
	size_t alen, plen, cdl, off, i;
	uint64_t hdr;
	ssize_t n, r;

	n = http_parse_request(buf, size, &m);
	if (n > 0) {
		if (m.target != NULL)
			(void)http_split_uri(m.target, m.targetlen, &auth,
			    &alen, &path, &plen, &err);
		for (i = 0; i < m.nh; i++)
			(void)http_list_has(m.h[i].value, m.h[i].valuelen,
			    "close");
		memset(&d, 0, sizeof(d));
		for (off = (size_t)n; off < size; off += (size_t)r) {
			r = chunk_step(&d, buf + off, size - off, &cd, &cdl,
			    &hdr);
			if (r <= 0 || d.state == CHUNK_DONE)
				break;
		}
	}
	(void)http_parse_response(buf, size, &m);
	return 0;
}
