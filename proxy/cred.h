/*
 * Masked credentials in the proxy (cred.c): the run's table of
 * placeholder -> value, and the byte-stream work on it -- finding a
 * placeholder (a leak, where it may not go), swapping placeholders for
 * values (on the way to a credential's injectHosts), and values back
 * for placeholders (in what comes back).  No libevent, no OpenSSL: the
 * launcher fills the table, the proxy uses it (docs/credentials.md).
 *
 * A placeholder is "pisbx_" and random [a-z0-9]: its first
 * CRED_PLACEHOLDER_MIN bytes (the head) tell it from every other, and
 * it is padded with more random to the length of its value when that is
 * longer (so that a Content-Length does not change).  Its last byte is
 * none of "pisbx": no head can begin inside one and run past its end.
 * Finding a head is finding a placeholder, so a scan holds back at most
 * CRED_PLACEHOLDER_MIN - 1 bytes.
 */
#ifndef PISBX_CRED_H
#define PISBX_CRED_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

#define CRED_PREFIX		"pisbx_"
#define CRED_PLACEHOLDER_MIN	38		/* "pisbx_" + 32 */
#define CRED_VALUE_MAX		(64 * 1024)	/* bytes of one value */
#define CRED_MAX		256		/* credentials of one run */

struct cred {
	char		*name;		/* "$GH_TOKEN", "~/.npmrc" (logged) */
	size_t		 entry;		/* its index in config creds.v */
	char		*placeholder;
	size_t		 plen;
	char		*value;		/* wiped when freed */
	size_t		 vlen;
};

struct cred_table;

struct cred_table *cred_table_new(void);
/* Wipe every value and free. */
void		 cred_table_free(struct cred_table *);
/*
 * Add a value for config entry index entry under name; *placeholder
 * gets its placeholder (the table owns it).  The same value added again
 * for the same entry gets the same placeholder.  0, or -1 (out of
 * memory, more than CRED_MAX, an empty value or one over CRED_VALUE_MAX).
 */
int		 cred_table_add(struct cred_table *, const char *name,
		    size_t entry, const char *value, size_t vlen,
		    const char **placeholder);
size_t		 cred_table_count(const struct cred_table *);
const struct cred *cred_table_get(const struct cred_table *, size_t);

/*
 * Whether cred c may be injected at host:port under conf (its entry's
 * injectHosts, else allowedDomains: config_cred_injects).
 */
int		 cred_injects(const struct config *, const struct cred *,
		    const struct host *, uint16_t port);
/* Whether some credential of the table may be injected at host:port. */
int		 cred_injects_any(const struct cred_table *,
		    const struct config *, const struct host *, uint16_t port);

/*
 * A stream scanner: placeholders found in a byte stream fed in pieces
 * (one may straddle two pieces).  Returns the first credential whose
 * placeholder is found, or NULL.
 */
struct cred_scan {
	char		 carry[CRED_PLACEHOLDER_MIN - 1];
	size_t		 ncarry;
};
const struct cred *cred_scan(const struct cred_table *, struct cred_scan *,
		    const void *buf, size_t len);

/*
 * Swap within a whole buffer (a header value; with conf NULL, the
 * method or a header name, where every placeholder is a leak): every
 * placeholder of a credential that may go to host:port becomes its
 * value; the result is malloc'ed into *out (NUL-terminated, *outlen).
 * A header "Authorization: Basic" / "Proxy-Authorization: Basic" value
 * is decoded, swapped and encoded again (git and pip put
 * user:placeholder there).  Returns the number of swaps, or -1 with
 * *leak set: a placeholder of a credential that may not go there, or
 * whose value cannot stand there as it is (enum cred_fit; the request
 * must be refused), or -2 out of memory.
 */
int		 cred_swap_buf(const struct cred_table *, const struct config *,
		    const struct host *, uint16_t port, const char *in,
		    size_t len, char **out, size_t *outlen,
		    const struct cred **leak);
/*
 * Where a swap puts a value as it is: anywhere (a body, a Basic
 * credential, which is encoded again), a header value (no CR, LF or
 * NUL), or the request target (nor a space, a control byte, DEL or a
 * byte over 0x7f).  A value that does not fit is refused as a leak.
 */
enum cred_fit {
	CRED_FIT_ANY,
	CRED_FIT_HEADER,
	CRED_FIT_TARGET
};
/* cred_swap_buf for the request line's target (CRED_FIT_TARGET). */
int		 cred_swap_target(const struct cred_table *,
		    const struct config *, const struct host *, uint16_t port,
		    const char *in, size_t len, char **out, size_t *outlen,
		    const struct cred **leak);
/*
 * After a swap at fit refused c's placeholder (-1, *leak == c): why,
 * when c may go to host:port but its value could not (a text for the
 * 403 and the log), or NULL: c may not go there at all.
 */
const char	*cred_unfit_why(const struct config *, const struct cred *,
		    const struct host *, uint16_t port, enum cred_fit);
/*
 * Note in used[] (CRED_MAX flags, by table index) every credential
 * whose placeholder buf holds: after a swap, which ones went in.
 * cred_mark_header also looks inside an Authorization: Basic value,
 * decoded (user:placeholder).
 */
void		 cred_mark(const struct cred_table *, const void *buf,
		    size_t len, uint8_t *used);
void		 cred_mark_header(const struct cred_table *, const char *name,
		    size_t namelen, const char *value, size_t valuelen,
		    uint8_t *used);
int		 cred_swap_header(const struct cred_table *,
		    const struct config *, const struct host *, uint16_t port,
		    const char *name, size_t namelen, const char *value,
		    size_t valuelen, char **out, size_t *outlen,
		    const struct cred **leak);

/*
 * Hide within a whole buffer (a response head): every value becomes its
 * placeholder; the result is malloc'ed into *out (NUL-terminated,
 * *outlen).  Returns the number of swaps, or -2 out of memory.
 */
int		 cred_hide_buf(const struct cred_table *, const char *in,
		    size_t len, char **out, size_t *outlen);

/*
 * A streaming swap for a body: placeholder -> value (dir CRED_INJECT,
 * with the same leak rule) or value -> placeholder (dir CRED_HIDE, for
 * what comes back: a server that echoes a credential).  Bytes that could
 * begin a match are held back until the next feed or the end.
 */
enum cred_dir {
	CRED_INJECT,
	CRED_HIDE
};
struct cred_stream;
struct cred_stream *cred_stream_new(const struct cred_table *,
		    const struct config *, const struct host *, uint16_t port,
		    enum cred_dir);
void		 cred_stream_free(struct cred_stream *);
/*
 * Feed len bytes (final: no more will come); the output is appended to
 * a malloc'ed/realloc'ed *out of *outlen bytes (the caller frees and
 * resets it).  Returns swaps made, -1 with *leak, -2 out of memory (or,
 * hiding, values that keep running into each other for more than four
 * values' worth of bytes, which would have to be held back whole).
 */
int		 cred_stream_feed(struct cred_stream *, const void *buf,
		    size_t len, int final, char **out, size_t *outlen,
		    const struct cred **leak);
/* INJECT: note in used[] (as cred_mark) the credentials it swapped. */
void		 cred_stream_mark(const struct cred_stream *, uint8_t *used);
/* Whether any swap can change a length (a value shorter than its */
/* placeholder or longer: a Content-Length body must be re-framed). */
int		 cred_stream_length_changes(const struct cred_stream *);

#endif
