/*
 * Bounded, hand-written TLS handshake readers.  tls_peek_clienthello
 * (RFC 8446 4.1.2, RFC 6066 3) reassembles a ClientHello from one or
 * more handshake records and extracts the server_name host_name;
 * tls_scan_serverhello follows the server's records up to its
 * ServerHello and tells a HelloRetryRequest (RFC 8446 4.1.3, 4.1.4)
 * from a real one.  Pure: no allocation, no I/O; they see untrusted
 * bytes and are fuzzed.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proxy/parse.h"

#define TLS_HS_CLIENT_HELLO	0x01
#define TLS_HS_SERVER_HELLO	0x02
#define TLS_EXT_SERVER_NAME	0x0000

struct rd {
	const uint8_t	*p;
	size_t		 len;
};

static int	 rd_u8(struct rd *, unsigned *);
static int	 rd_u16(struct rd *, unsigned *);
static int	 rd_skip(struct rd *, size_t);
static int	 rd_sub(struct rd *, size_t, struct rd *);
static size_t	 tls_u24(const uint8_t *);

static int
rd_u8(struct rd *r, unsigned *v)
{
	if (r->len < 1)
		return -1;
	*v = r->p[0];
	r->p++;
	r->len--;
	return 0;
}

static int
rd_u16(struct rd *r, unsigned *v)
{
	if (r->len < 2)
		return -1;
	*v = (unsigned)r->p[0] << 8 | r->p[1];
	r->p += 2;
	r->len -= 2;
	return 0;
}

static int
rd_skip(struct rd *r, size_t n)
{
	if (r->len < n)
		return -1;
	r->p += n;
	r->len -= n;
	return 0;
}

/* A 24-bit length, as handshake headers carry it. */
static size_t
tls_u24(const uint8_t *p)
{
	return (size_t)p[0] << 16 | (size_t)p[1] << 8 | p[2];
}

/* Take the next n bytes as a sub-reader. */
static int
rd_sub(struct rd *r, size_t n, struct rd *sub)
{
	if (r->len < n)
		return -1;
	sub->p = r->p;
	sub->len = n;
	return rd_skip(r, n);
}

/*
 * The random of a HelloRetryRequest: SHA-256 of "HelloRetryRequest"
 * (RFC 8446 4.1.3), which is how it is told from a ServerHello.
 */
static const uint8_t tls_hrr_random[32] = {
	0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11,
	0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
	0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e,
	0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c
};

enum tls_peek_result
tls_peek_clienthello(const uint8_t *buf, size_t len, char *sni,
    size_t snilen, size_t *used, const char **why)
{
	uint8_t hs[TLS_PEEK_MAX];
	size_t hslen = 0, off = 0, need = 0, rlen;
	struct rd r, ext, names, name;
	unsigned v, type, elen, n, ntype, seen_sni = 0;

	*why = NULL;
	*used = 0;
	if (sni != NULL && snilen > 0)
		sni[0] = '\0';
	if (len == 0)
		return TLS_PEEK_MORE;
	if (buf[0] != TLS_CT_HANDSHAKE)
		return TLS_PEEK_NOT_TLS;
	if (len >= 2 && buf[1] != 0x03)
		return TLS_PEEK_NOT_TLS;

	/* Reassemble the handshake message from consecutive records. */
	for (;;) {
		if (len - off < 5)
			return TLS_PEEK_MORE;
		if (buf[off] != TLS_CT_HANDSHAKE) {
			*why = "record of another type inside the ClientHello";
			return TLS_PEEK_INVALID;
		}
		if (buf[off + 1] != 0x03) {
			*why = "bad record version";
			return TLS_PEEK_INVALID;
		}
		rlen = (size_t)buf[off + 3] << 8 | buf[off + 4];
		if (rlen == 0 || rlen > TLS_RECORD_MAX) {
			*why = "bad record length";
			return TLS_PEEK_INVALID;
		}
		if (len - off - 5 < rlen) {
			/*
			 * Take what there is so far to learn the type and
			 * the length: a hello that can never fit is refused
			 * now, not after waiting for the rest of it.
			 */
			if (hslen == 0 && len - off - 5 >= 4) {
				if (buf[off + 5] != TLS_HS_CLIENT_HELLO) {
					*why = "first handshake message is "
					    "not a ClientHello";
					return TLS_PEEK_INVALID;
				}
				need = 4 + ((size_t)buf[off + 6] << 16 |
				    (size_t)buf[off + 7] << 8 | buf[off + 8]);
				if (need > sizeof(hs)) {
					*why = "ClientHello larger than the "
					    "peek limit";
					return TLS_PEEK_INVALID;
				}
			}
			return TLS_PEEK_MORE;
		}
		if (hslen + rlen > sizeof(hs)) {
			*why = "ClientHello larger than the peek limit";
			return TLS_PEEK_INVALID;
		}
		memcpy(hs + hslen, buf + off + 5, rlen);
		hslen += rlen;
		off += 5 + rlen;
		if (hslen >= 4) {
			if (hs[0] != TLS_HS_CLIENT_HELLO) {
				*why = "first handshake message is not a "
				    "ClientHello";
				return TLS_PEEK_INVALID;
			}
			need = 4 + ((size_t)hs[1] << 16 | (size_t)hs[2] << 8 |
			    hs[3]);
			if (need > sizeof(hs)) {
				*why = "ClientHello larger than the peek limit";
				return TLS_PEEK_INVALID;
			}
			if (hslen >= need)
				break;
		}
	}
	/*
	 * The hello ends its last record: a client sends nothing more before
	 * the server's answer (RFC 8446 4.1.2), and what would follow in the
	 * same record would reach the server unchecked.
	 */
	if (hslen != need) {
		*why = "bytes after the ClientHello in its record";
		return TLS_PEEK_INVALID;
	}
	*used = off;

	r.p = hs + 4;
	r.len = need - 4;
	if (rd_skip(&r, 2 + 32) == -1)		/* legacy_version, random */
		goto bad;
	if (rd_u8(&r, &v) == -1 || v > 32 || rd_skip(&r, v) == -1)
		goto bad;			/* legacy_session_id */
	if (rd_u16(&r, &v) == -1 || v < 2 || v % 2 != 0 ||
	    rd_skip(&r, v) == -1)
		goto bad;			/* cipher_suites */
	if (rd_u8(&r, &v) == -1 || v < 1 || rd_skip(&r, v) == -1)
		goto bad;			/* compression_methods */
	if (r.len == 0)
		return TLS_PEEK_NO_SNI;		/* no extensions at all */
	if (rd_u16(&r, &v) == -1 || v != r.len)
		goto bad;
	while (r.len > 0) {
		if (rd_u16(&r, &type) == -1 || rd_u16(&r, &elen) == -1 ||
		    rd_sub(&r, elen, &ext) == -1)
			goto bad;
		if (type != TLS_EXT_SERVER_NAME)
			continue;
		if (seen_sni++) {
			*why = "two server_name extensions";
			return TLS_PEEK_INVALID;
		}
		if (rd_u16(&ext, &v) == -1 || v != ext.len || v == 0 ||
		    rd_sub(&ext, v, &names) == -1)
			goto bad;
		while (names.len > 0) {
			if (rd_u8(&names, &ntype) == -1 ||
			    rd_u16(&names, &n) == -1 ||
			    rd_sub(&names, n, &name) == -1)
				goto bad;
			if (ntype != 0)
				continue;	/* not host_name */
			if (sni[0] != '\0') {
				*why = "two host_name entries";
				return TLS_PEEK_INVALID;
			}
			if (n == 0 || n >= snilen ||
			    memchr(name.p, '\0', n) != NULL) {
				*why = "bad server_name";
				return TLS_PEEK_INVALID;
			}
			memcpy(sni, name.p, n);
			sni[n] = '\0';
		}
	}
	return sni[0] != '\0' ? TLS_PEEK_SNI : TLS_PEEK_NO_SNI;
bad:
	*why = "truncated or malformed ClientHello";
	return TLS_PEEK_INVALID;
}

void
tls_scan_init(struct tls_scan *ts)
{
	memset(ts, 0, sizeof(*ts));
}

/*
 * Follow the server's first records: alerts and change_cipher_spec
 * records are stepped over (RFC 8446 D.4: a dummy one follows a
 * HelloRetryRequest), handshake records must carry a ServerHello.  Its
 * first 38 bytes (header, legacy_version, random) decide: a
 * HelloRetryRequest is reported and the scan goes on to the ServerHello
 * that must follow; another random ends the scan.  *used says how much
 * of buf was consumed; call again with the rest after TLS_SCAN_HRR.
 */
enum tls_scan_result
tls_scan_serverhello(struct tls_scan *ts, const uint8_t *buf, size_t len,
    size_t *used, const char **why)
{
	size_t off = 0, n;

	*why = NULL;
	*used = 0;
	while (off < len) {
		if (ts->hdrlen < 5) {
			/* A record header, possibly across reads. */
			ts->hdr[ts->hdrlen++] = buf[off++];
			if (ts->hdrlen < 5)
				continue;
			ts->rleft = (size_t)ts->hdr[3] << 8 | ts->hdr[4];
			if (ts->hdr[1] != 0x03) {
				*why = "not a TLS record";
				goto bad;
			}
			if (ts->rleft > TLS_RECORD_MAX) {
				*why = "bad record length";
				goto bad;
			}
			switch (ts->hdr[0]) {
			case TLS_CT_HANDSHAKE:
				/* RFC 8446 5.1: no empty handshake fragment. */
				if (ts->rleft == 0) {
					*why = "bad record length";
					goto bad;
				}
				break;
			case TLS_CT_CCS:
			case TLS_CT_ALERT:
				/* Never inside a handshake message (5.1). */
				if (ts->msglen > 0 || ts->mleft > 0) {
					*why = "record of another type inside "
					    "the ServerHello";
					goto bad;
				}
				break;
			default:
				*why = "record of another type before the "
				    "ServerHello";
				goto bad;
			}
			if (ts->rleft == 0)
				ts->hdrlen = 0;
			continue;
		}
		n = len - off < ts->rleft ? len - off : ts->rleft;
		if (ts->hdr[0] != TLS_CT_HANDSHAKE) {
			off += n;
			ts->rleft -= n;
		} else if (ts->mleft > 0) {
			/* The rest of a HelloRetryRequest. */
			if (n > ts->mleft)
				n = ts->mleft;
			off += n;
			ts->rleft -= n;
			ts->mleft -= n;
		} else {
			/* The first bytes of the next handshake message. */
			ts->msg[ts->msglen++] = buf[off++];
			ts->rleft--;
			if (ts->msglen == 4 &&
			    ts->msg[0] != TLS_HS_SERVER_HELLO) {
				*why = "first handshake message is not a "
				    "ServerHello";
				goto bad;
			}
			if (ts->msglen == 4 &&
			    tls_u24(ts->msg + 1) < sizeof(ts->msg)) {
				*why = "truncated ServerHello";
				goto bad;
			}
			if (ts->msglen == sizeof(ts->msg)) {
				ts->msglen = 0;
				if (memcmp(ts->msg + 6, tls_hrr_random,
				    sizeof(tls_hrr_random)) != 0) {
					if (ts->rleft == 0)
						ts->hdrlen = 0;
					*used = off;
					return TLS_SCAN_HELLO;
				}
				/* RFC 8446 4.1.4: one retry, never two. */
				if (ts->nhrr++ > 0) {
					*why = "a second HelloRetryRequest";
					goto bad;
				}
				ts->mleft = 4 + tls_u24(ts->msg + 1) -
				    sizeof(ts->msg);
				if (ts->rleft == 0)
					ts->hdrlen = 0;
				*used = off;
				return TLS_SCAN_HRR;
			}
		}
		if (ts->rleft == 0)
			ts->hdrlen = 0;
	}
	*used = off;
	return TLS_SCAN_MORE;
bad:
	*used = off;
	return TLS_SCAN_INVALID;
}
