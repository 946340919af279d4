#!/bin/sh
# The TLS ClientHello check on every tunnel: CONNECT and SOCKS5, to a name
# and to an address.  A ClientHello whose SNI names another host than the
# authorised target is refused (sni-mismatch) before a byte of it reaches
# the upstream; one split over several TCP segments is reassembled and
# checked the same; a partial one that stalls is refused after
# proxy.headerTimeoutMs; an oversized one at once; no SNI passes.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

"$PY" "$SERVERS" certgen "$T/cert" tls.test
srv_start http tls --tls-cert "$T/cert/cert.pem" --tls-key "$T/cert/key.pem"
P=$SRV_PORT
dns_start tls.test=127.0.0.1
px_config "$T/conf.json" --allow "tls.test 127.0.0.1:$P" \
    --proxy '{"headerTimeoutMs": 1500}'
px_start "$T/conf.json"

# tls NAME VIA TARGET [ARGS...]: the tls client's output in $OUT.
tls() {
	_n=$1 _v=$2 _t=$3
	shift 3
	OUT=$("$PY" "$SERVERS" tls --port "$PX_PORT" --via "$_v" \
	    --target "$_t" "$@" 2>"$T/$_n.err")
}

# passes DESC: the handshake went through and the origin answered.
passes() { contains "$1" "$OUT" "response HTTP/1.1 200"; }
# refused DESC VIA HOST ERROR-RE: no handshake, and a sni-mismatch record.
refused() {
	case $OUT in
	*"handshake ok"*) not_ok "$1: the handshake went through ($OUT)" ;;
	*) ok "$1: no handshake with the origin" ;;
	esac
	check_log "$1: sni-mismatch record" event=decision proto="$2" \
	    host="$3" port="$P" decision=deny reason=sni-mismatch error~"$4"
	check_log "$1: nothing of it went upstream" event=close proto="$2" \
	    host="$3" port="$P" end=sni-mismatch bytes_up=0
}

for via in connect socks5; do
	# The right SNI, in one piece and split over five segments.
	tls "$via-ok" $via "tls.test:$P" --sni tls.test
	passes "$via to tls.test, SNI tls.test"
	tls "$via-split-ok" $via "tls.test:$P" --sni Tls.Test. --split 5
	passes "$via to tls.test, SNI Tls.Test. split over 5 segments"
	# No SNI: nothing is claimed, the authorised target is what is reached.
	tls "$via-nosni" $via "tls.test:$P"
	passes "$via to tls.test without SNI"

	: >"$PX_LOG"
	tls "$via-bad" $via "tls.test:$P" --sni bad.test
	refused "$via to tls.test, SNI bad.test" $via tls.test \
	    'SNI "bad.test" does not name the target tls.test'

	: >"$PX_LOG"
	tls "$via-split-bad" $via "tls.test:$P" --sni bad.test --split 7
	refused "$via, SNI bad.test split over 7 segments" $via tls.test \
	    'SNI "bad.test"'

	# An address target: a name in the SNI is another destination.
	: >"$PX_LOG"
	tls "$via-ip-bad" $via "127.0.0.1:$P" --sni bad.test
	refused "$via to 127.0.0.1, SNI bad.test" $via 127.0.0.1 \
	    'does not name the target 127.0.0.1 \(connect by name'
	tls "$via-ip-nosni" $via "127.0.0.1:$P"
	passes "$via to 127.0.0.1 without SNI"

	# Half a ClientHello, then nothing: refused after headerTimeoutMs.
	: >"$PX_LOG"
	tls "$via-stall" $via "tls.test:$P" --sni tls.test --stall
	eq "$via: a stalled partial ClientHello is closed" "$OUT" closed
	refused "$via, stalled partial ClientHello" $via tls.test \
	    'incomplete TLS ClientHello.*headerTimeoutMs \(1500 ms\)'

	# A ClientHello claiming 64 KiB: over the peek limit, refused at once.
	: >"$PX_LOG"
	tls "$via-big" $via "tls.test:$P" --raw 1603014000010fffff0303
	eq "$via: an oversized ClientHello is closed" "$OUT" closed
	refused "$via, oversized ClientHello" $via tls.test \
	    'larger than the peek limit'
done

check "proxy still running" px_alive
px_done
