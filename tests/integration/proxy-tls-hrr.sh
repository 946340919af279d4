#!/bin/sh
# The ClientHello check follows a HelloRetryRequest.  A real TLS server
# (openssl s_server offering P-384 only) answers a first ClientHello that
# names the target with an X25519 key share alone with a retry; a second
# ClientHello naming another host is then refused (sni-mismatch) before
# it reaches the server -- through CONNECT, SOCKS5 and inside pisbx-run
# -- and so is one without SNI, half a one that stalls (after
# headerTimeoutMs) and a record of another type before the ServerHello;
# a second one for the same name, and a genuine openssl s_client
# handshake that goes through a retry, still work.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

command -v openssl >/dev/null || skip "openssl not installed"

# A test CA, a certificate for allowed.test, and one for other.test that
# the server switches to when a hello names other.test.
mkdir "$T/ca"
ossl() { openssl "$@" >/dev/null 2>&1 || { not_ok "openssl $1 failed"; exit 1; }; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$T/ca/ca.key" -out "$T/ca/ca.pem" -days 2 -subj /CN=pisbx-test-ca
for n in allowed other; do
	ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$T/ca/$n.key" -out "$T/ca/$n.csr" -subj "/CN=$n.test"
	echo "subjectAltName=DNS:$n.test" >"$T/ca/$n.ext"
	ossl x509 -req -in "$T/ca/$n.csr" -CA "$T/ca/ca.pem" \
	    -CAkey "$T/ca/ca.key" -CAcreateserial -days 2 \
	    -extfile "$T/ca/$n.ext" -out "$T/ca/$n.pem"
done
# The P-384 key share of the second hello.
ossl ecparam -name secp384r1 -genkey -noout -out "$T/ca/p384.pem"
ossl ec -in "$T/ca/p384.pem" -pubout -outform DER -out "$T/ca/p384.der"
chmod -R a+rX "$T/ca"

SP=$(free_port)
spawn openssl s_server -accept "127.0.0.1:$SP" -www -groups P-384 \
    -cert "$T/ca/allowed.pem" -key "$T/ca/allowed.key" \
    -servername other.test -cert2 "$T/ca/other.pem" -key2 "$T/ca/other.key" \
    >"$T/s_server.out" 2>"$T/s_server.err"
wait_port 127.0.0.1 "$SP" || { not_ok "s_server did not start"; exit 1; }

dns_start allowed.test=127.0.0.1 other.test=127.0.0.1
px_config "$T/conf.json" --allow "allowed.test" --proxy '{"headerTimeoutMs": 1500}'
px_start "$T/conf.json"

# hrr VIA SNI2 [ARGS...]: the crafted client's two lines in $OUT.
hrr() {
	_v=$1 _s=$2
	shift 2
	OUT=$("$PY" "$SERVERS" hrr --port "$PX_PORT" --via "$_v" \
	    --target "allowed.test:$SP" --sni allowed.test --sni2 "$_s" \
	    --p384 "$T/ca/p384.der" "$@" 2>&1 | tr '\n' ' ')
}

for via in connect socks5; do
	: >"$PX_LOG"
	hrr $via other.test
	contains "$via: the first hello for allowed.test draws a retry" \
	    "$OUT" "first hrr"
	contains "$via: the second hello, for other.test, gets no answer" \
	    "$OUT" "second closed"
	check_log "$via: the second hello is refused (sni-mismatch)" \
	    event=decision proto=$via host=allowed.test decision=deny \
	    reason=sni-mismatch \
	    error~'TLS SNI "other.test" does not name the target allowed.test'
	check_log "$via: the tunnel ends sni-mismatch" event=close \
	    proto=$via host=allowed.test end=sni-mismatch

	# RFC 8446 4.1.2: the second hello keeps the first one's name.
	: >"$PX_LOG"
	hrr $via ""
	contains "$via: a second hello without SNI gets no answer" \
	    "$OUT" "second closed"
	check_log "$via: the second hello without SNI is refused" \
	    event=decision proto=$via host=allowed.test decision=deny \
	    reason=sni-mismatch error~'after a HelloRetryRequest has no SNI'

	# Half a second hello, then nothing: refused after headerTimeoutMs.
	: >"$PX_LOG"
	hrr $via allowed.test --stall2
	contains "$via: a stalled second hello is closed" "$OUT" "second closed"
	check_log "$via: ... after headerTimeoutMs" event=decision proto=$via \
	    host=allowed.test decision=deny reason=sni-mismatch \
	    error~'incomplete TLS ClientHello.*headerTimeoutMs \(1500 ms\)'

	# Before the ServerHello, a record that is none of a hello,
	# change_cipher_spec, alert or early data (here heartbeat, 24).
	: >"$PX_LOG"
	hrr $via allowed.test --raw2 1803030003010000
	contains "$via: another record type after the retry is closed" \
	    "$OUT" "second closed"
	check_log "$via: ... refused" event=decision proto=$via \
	    host=allowed.test decision=deny reason=sni-mismatch \
	    error~'TLS record of type 24 before the server'"'"'s ServerHello'

	: >"$PX_LOG"
	hrr $via allowed.test
	eq "$via: a second hello for allowed.test gets its ServerHello" \
	    "$OUT" "first hrr second serverhello "
	check "$via: no refusal for it" \
	    sh -c "! grep -q sni-mismatch '$PX_LOG'"
done

# A real client through a real retry: openssl s_client offers X25519 and
# P-384 with an X25519 share, the server wants P-384.
: >"$PX_LOG"
echo | openssl s_client -proxy "127.0.0.1:$PX_PORT" \
    -connect "allowed.test:$SP" -servername allowed.test \
    -groups X25519:P-384 -CAfile "$T/ca/ca.pem" -verify_return_error \
    -brief -msg >"$T/s_client.out" 2>&1
# -msg dumps the retry: a ServerHello with the fixed random of RFC 8446
# 4.1.3, and then a second ClientHello.
check "s_client: the server sent a HelloRetryRequest" \
    grep -q "02 00 00 .. 03 03 cf 21 ad 74 e5 9a 61 11 be 1d" "$T/s_client.out"
eq "s_client: it sent two ClientHellos" \
    "$(grep -c '^>>> .*ClientHello' "$T/s_client.out")" 2
check "s_client: handshake through the retry, certificate verified" \
    grep -q "^Verification: OK" "$T/s_client.out"
check "s_client: no refusal" sh -c "! grep -q sni-mismatch '$PX_LOG'"

# The same inside pisbx-run, through its CONNECT (3128) and SOCKS5 (1080).
if [ -x "$RUN" ] && { unshare -U -r -n true 2>/dev/null || [ "$(id -u)" -eq 0 ]; }; then
	. "$PISBX_TOP/tests/lib/run.sh"
	HOSTS_NAMES="allowed.test other.test"
	export HOSTS_NAMES
	run_config --allow "allowed.test" --proxy '{"headerTimeoutMs": 1500}'
	for pv in 3128:connect 1080:socks5; do
		: >"$PX_LOG"
		sbx -- /usr/bin/python3 "$SERVERS" hrr --port "${pv%%:*}" \
		    --via "${pv#*:}" --target "allowed.test:$SP" \
		    --sni allowed.test --sni2 other.test \
		    --p384 "$T/ca/p384.der" >"$T/run.out" 2>&1
		OUT=$(tr '\n' ' ' <"$T/run.out")
		eq "pisbx-run, ${pv#*:}: the second hello gets no answer" \
		    "$OUT" "first hrr second closed "
		check_log "pisbx-run, ${pv#*:}: refused (sni-mismatch)" \
		    event=decision proto="${pv#*:}" host=allowed.test \
		    decision=deny reason=sni-mismatch error~'"other.test"'
	done
else
	echo "# pisbx-run part skipped: no user namespaces"
fi

check "proxy still running" px_alive
px_done
