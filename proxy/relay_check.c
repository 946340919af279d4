/*
 * The TLS peek of a relay, on the bytes relay.c moves.
 *
 * Every tunnel (CONNECT and SOCKS5, to a name or an address) first peeks
 * at the client's first bytes: a TLS ClientHello whose SNI names another
 * host than the authorised target is refused (sni-mismatch), so a tunnel
 * to an allowed name cannot carry a TLS session for a different one.  A
 * ClientHello split over several segments or records is reassembled up
 * to TLS_PEEK_MAX; one that is not complete within proxy.headerTimeoutMs
 * is refused too.  Nothing of it reaches the upstream before the check.
 *
 * The check does not stop at the first ClientHello: a server answers one
 * without a usable key_share with a HelloRetryRequest, and the client's
 * second ClientHello (RFC 8446 4.1.2) could name another host.  So the
 * client's bytes are followed record by record until the server's first
 * ServerHello that is not a retry: every handshake record in between must
 * be a ClientHello and is checked like the first one (and must keep its
 * server_name); change_cipher_spec, alert and early-data records pass;
 * anything else is refused.  The server's records are followed as they
 * are relayed, only to find that ServerHello; a reply that is not TLS
 * ends the tunnel (fail closed: its client is no longer followed).
 *
 * When the run has masked credentials, every client byte is also
 * scanned for their placeholders before it goes up: the ClientHello
 * (an SNI or ALPN could carry one) and everything else until the
 * handshake settles, and the whole stream of a tunnel that is not TLS
 * (SSH, raw TCP), which then never switches to splice(2).  TLS
 * application data after the handshake is encrypted: a placeholder
 * cannot show in it.  A placeholder found closes the tunnel
 * (credential-leak).  A scan keeps the last CRED_PLACEHOLDER_MIN - 1
 * bytes of a read to find one split over two, so the start of such a
 * head may have gone up before the rest is seen: a placeholder is not
 * the secret, and what matters -- the tunnel carrying it -- ends.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/log.h"
#include "proxy/proxy_int.h"
#include "proxy/relay_int.h"

static int	 relay_check_hello(struct relay *, const uint8_t *, size_t,
		    size_t *);
static int	 relay_check_move(struct relay *, size_t);

/*
 * Check the client's held bytes record by record while the handshake is
 * not settled, and send on what passed.  The first bytes decide whether
 * there is a handshake to follow at all.  0, or -1 when the connection
 * was closed.
 */
int
relay_check(struct relay *rl)
{
	struct conn *c = rl->conn;
	size_t len, n, rlen, used;
	const uint8_t *p;
	char detail[96];
	int wait = 0;

	while (rl->checking && (len = evbuffer_get_length(rl->held)) > 0) {
		if (rl->cpass > 0) {
			n = len < rl->cpass ? len : rl->cpass;
			if (relay_check_move(rl, n) == -1)
				return -1;
			rl->cpass -= n;
			continue;
		}
		/*
		 * At a record boundary after the server's ServerHello: the
		 * handshake is settled, a ClientHello is no longer possible.
		 */
		if (rl->settled) {
			if (relay_check_done(rl) == -1)
				return -1;
			break;
		}
		if (rl->nhello == 0) {
			if (len > TLS_PEEK_MAX)
				len = TLS_PEEK_MAX;
			if ((p = evbuffer_pullup(rl->held, len)) == NULL)
				goto oom;
			if (relay_check_hello(rl, p, len, &used) == -1)
				return -1;
			if (used == 0) {
				wait = 1;
				break;
			}
			continue;
		}
		if (len < 5) {
			wait = 1;
			break;
		}
		if ((p = evbuffer_pullup(rl->held, 5)) == NULL)
			goto oom;
		rlen = (size_t)p[3] << 8 | p[4];
		if (p[1] != 0x03 || rlen > TLS_RECORD_MAX) {
			relay_peek_refuse(c, "malformed TLS record before the "
			    "server's ServerHello");
			return -1;
		}
		switch (p[0]) {
		case TLS_CT_HANDSHAKE:
			/* Another ClientHello: checked like the first. */
			if (len > TLS_PEEK_MAX)
				len = TLS_PEEK_MAX;
			if ((p = evbuffer_pullup(rl->held, len)) == NULL)
				goto oom;
			if (relay_check_hello(rl, p, len, &used) == -1)
				return -1;
			if (used == 0)
				wait = 1;
			break;
		case TLS_CT_CCS:	/* RFC 8446 D.4 */
		case TLS_CT_ALERT:
		case TLS_CT_APPDATA:	/* early data (RFC 8446 4.2.10) */
			rl->cpass = 5 + rlen;
			break;
		default:
			snprintf(detail, sizeof(detail), "TLS record of type "
			    "%u before the server's ServerHello", p[0]);
			relay_peek_refuse(c, detail);
			return -1;
		}
		if (wait)
			break;
	}
	if (rl->checking && wait) {
		/* A split record: wait, but not for ever. */
		if (!rl->peek_wait) {
			rl->peek_wait = 1;
			conn_timer_set(c, conn_config(c)->header_timeout_ms);
		}
	} else if (rl->peek_wait) {
		rl->peek_wait = 0;
		conn_timer_set(c, conn_config(c)->idle_timeout_ms);
	}
	return relay_push(&rl->client);
oom:
	conn_close(c, "out-of-memory");
	return -1;
}

/*
 * Decide on a ClientHello at the start of len held bytes: *used is the
 * length of its records once it passed (all of len when the first bytes
 * are not TLS), 0 while it is incomplete.  0, or -1 when the connection
 * was closed.
 */
static int
relay_check_hello(struct relay *rl, const uint8_t *p, size_t len,
    size_t *used)
{
	struct conn *c = rl->conn;
	char sni[HOST_TEXT_MAX], detail[HOST_TEXT_MAX * 2 + 96];
	const char *why = NULL, *errstr;
	struct host h;
	enum tls_peek_result res;

	*used = 0;
	res = tls_peek_clienthello(p, len, sni, sizeof(sni), used, &why);
	switch (res) {
	case TLS_PEEK_MORE:
		if (len < TLS_PEEK_MAX)
			return 0;
		why = "ClientHello larger than the peek limit";
		/* FALLTHROUGH */
	case TLS_PEEK_INVALID:
		snprintf(detail, sizeof(detail), "malformed TLS ClientHello: "
		    "%s", why != NULL ? why : "?");
		break;
	case TLS_PEEK_NOT_TLS:
		/*
		 * Only the first bytes can be: relayed unlooked at by the
		 * TLS check, but scanned to the end for placeholders.
		 */
		rl->cred_all = cred_table_count(c->px->creds) > 0;
		*used = len;
		return relay_check_done(rl);
	case TLS_PEEK_NO_SNI:
		/*
		 * RFC 8446 4.1.2: the second ClientHello repeats the first
		 * but for key_share, early_data, cookie, pre_shared_key and
		 * padding; one that drops the name is not that.
		 */
		if (rl->nhello > 0 && rl->first_sni) {
			snprintf(detail, sizeof(detail), "TLS ClientHello "
			    "after a HelloRetryRequest has no SNI (the first "
			    "named the target %s)", c->host.text);
			break;
		}
		goto pass;
	case TLS_PEEK_SNI:
		/*
		 * The SNI must name the authorised target: the same name, or
		 * for an address target the same address (RFC 6066 forbids
		 * literals in SNI, but some clients send one).  A name sent
		 * to an address target is another destination than the one
		 * authorised -- a shared front end would route by it.
		 */
		if (host_canon(sni, strlen(sni), &h, &errstr) == 0 &&
		    h.kind == c->host.kind &&
		    strcmp(h.text, c->host.text) == 0) {
			if (rl->nhello == 0)
				rl->first_sni = 1;
			goto pass;
		}
		snprintf(detail, sizeof(detail), "TLS SNI \"%s\" does not "
		    "name the target %s%s", sni, c->host.text,
		    c->host.kind != HOST_NAME ? " (connect by name so that "
		    "the name is what is authorised)" : "");
		break;
	}
	*used = 0;
	relay_peek_refuse(c, detail);
	return -1;
pass:
	if (relay_check_move(rl, *used) == -1)
		return -1;
	/* From the first one on, the server's answer is looked for. */
	if (rl->nhello++ == 0) {
		tls_scan_init(&rl->scan);
		rl->scanning = 1;
	}
	return 0;
}

/*
 * Checked client bytes go to the client end's buffer, and count, once
 * the leak scan passed them.  0, or -1 when the connection was closed.
 */
static int
relay_check_move(struct relay *rl, size_t n)
{
	struct evbuffer_ptr	 pos;
	struct evbuffer_iovec	 v[16];
	size_t			 left = n, i;
	int			 moved, nv;

	/* The held bytes are scanned where they are, chunk by chunk. */
	if (cred_table_count(rl->conn->px->creds) > 0 && n > 0) {
		evbuffer_ptr_set(rl->held, &pos, 0, EVBUFFER_PTR_SET);
		while (left > 0) {
			nv = evbuffer_peek(rl->held, (ev_ssize_t)left, &pos, v,
			    16);
			if (nv <= 0)
				break;
			for (i = 0; i < (size_t)nv && i < 16 && left > 0; i++) {
				if (v[i].iov_len > left)
					v[i].iov_len = left;
				if (relay_cred_scan(rl, v[i].iov_base,
				    v[i].iov_len) == -1)
					return -1;
				left -= v[i].iov_len;
				evbuffer_ptr_set(rl->held, &pos, v[i].iov_len,
				    EVBUFFER_PTR_ADD);
			}
		}
	}
	if ((moved = evbuffer_remove_buffer(rl->held, rl->client.buf,
	    n)) > 0) {
		*rl->client.bytes += (uint64_t)moved;
		budget_spend(rl->conn, (uint64_t)moved);
	}
	return 0;
}

/*
 * Scan n client bytes about to go up for the run's placeholders.  0, or
 * -1 when one was found and the tunnel closed.
 */
int
relay_cred_scan(struct relay *rl, const char *p, size_t n)
{
	struct conn		*c = rl->conn;
	const struct cred	*cr;

	if ((cr = cred_scan(c->px->creds, &rl->cscan, p, n)) == NULL)
		return 0;
	conn_cred_leak(c, cr, rl->cred_all ? "in a tunnel that does not "
	    "carry TLS" : "in the tunnel's TLS handshake");
	conn_close(c, "credential-leak");
	return -1;
}

/*
 * The handshake is settled (or there is none): relay the rest unlooked
 * (but for the leak scan).  0, or -1 when the connection was closed.
 */
int
relay_check_done(struct relay *rl)
{
	struct conn *c = rl->conn;

	rl->checking = 0;
	rl->cpass = 0;
	if (relay_check_move(rl, evbuffer_get_length(rl->held)) == -1)
		return -1;
	if (rl->peek_wait) {
		rl->peek_wait = 0;
		conn_timer_set(c, conn_config(c)->idle_timeout_ms);
	}
	return 0;
}

/*
 * Follow n bytes the server sent, as they pass, up to its ServerHello
 * that is not a HelloRetryRequest.  0, or -1 when the connection was
 * closed: a reply that is not TLS leaves a client that would no longer
 * be followed (fail closed).
 */
int
relay_scan(struct relay *rl, const char *p, size_t n)
{
	char detail[128];
	const char *why;
	size_t off = 0, used;

	while (rl->scanning && off < n) {
		switch (tls_scan_serverhello(&rl->scan,
		    (const uint8_t *)p + off, n - off, &used, &why)) {
		case TLS_SCAN_MORE:
		case TLS_SCAN_HRR:
			break;
		case TLS_SCAN_HELLO:
			rl->scanning = 0;
			rl->settled = 1;
			break;
		case TLS_SCAN_INVALID:
			snprintf(detail, sizeof(detail), "unexpected TLS reply "
			    "to the ClientHello: %s", why != NULL ? why : "?");
			relay_peek_refuse(rl->conn, detail);
			return -1;
		}
		off += used;
	}
	return 0;
}

/* Fail closed: the tunnel was for another name than the TLS one. */
void
relay_peek_refuse(struct conn *c, const char *detail)
{
	conn_decide(c, 0, "sni-mismatch", detail);
	conn_log_decision(c);
	conn_close(c, "sni-mismatch");
}

void
relay_peek_timeout(struct conn *c)
{
	char detail[128];

	snprintf(detail, sizeof(detail), "incomplete TLS ClientHello: not "
	    "complete within proxy.headerTimeoutMs (%d ms)",
	    conn_config(c)->header_timeout_ms);
	relay_peek_refuse(c, detail);
}
