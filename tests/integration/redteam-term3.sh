#!/bin/sh
# Red-team cases, round 3, for TLS termination in pisbx-proxy: through
# a parent proxy (tinyproxy), with egress budgets, and with target
# names spelled otherwise than the rules spell them.  The upstream
# (tests/lib/rawupstream.py) records every byte it receives, so the
# budget cases assert what reached it, not what the client wrote.
#   - via tinyproxy: the ORIGIN's certificate is verified (an origin
#     whose CA is not configured is a 502 upstream-tls even though the
#     parent is reachable), request rules hold;
#   - network.budget.bytesUpPerHost through a terminated tunnel: many
#     keep-alive requests, and an Expect: 100-continue body, are cut at
#     the budget; the next tunnel is refused;
#   - "API.TEST." and an IP literal: the rules of api.test apply (403),
#     and a tunnel to the IP cannot carry requests for api.test (421).
# Cases run by tests/integration/redteam3_client.py, one line each.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/parent.sh"

[ -f "$PISBX_BINDIR/pisbx-tls.so" ] || skip "pisbx-tls.so not built"
command -v openssl >/dev/null || skip "no openssl"
[ -n "$TP_MNTNS" ] || skip "no mount namespace for tinyproxy's hosts file"
CLIENT=$PISBX_TOP/tests/integration/redteam3_client.py

mkca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
	    -nodes -keyout "$T/$1.key" -out "$T/$1.pem" -days 2 -subj "/CN=$1" \
	    -addext basicConstraints=critical,CA:TRUE \
	    -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
	chmod 600 "$T/$1.key"
}
mkca pisbx-ca
mkca upstream-ca
mkca rogue-ca
# leaf NAME CA: a leaf for api.test, other.test and 127.0.0.1.
leaf() {
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
	    -nodes -keyout "$T/$1.key" -out "$T/$1.csr" -subj /CN=api.test \
	    2>/dev/null
	printf 'subjectAltName=DNS:api.test,DNS:other.test,IP:127.0.0.1\n' \
	    >"$T/ext.cnf"
	openssl x509 -req -in "$T/$1.csr" -CA "$T/$2.pem" -CAkey "$T/$2.key" \
	    -CAcreateserial -out "$T/$1.pem" -days 2 -extfile "$T/ext.cnf" \
	    2>/dev/null
}
leaf up upstream-ca
leaf rogue rogue-ca

# up: the origin (trusted CA); rogue: one signed by a CA nobody trusts.
upstart() {
	: >"$T/$1.raw"
	spawn "$PY" "$PISBX_TOP/tests/lib/rawupstream.py" "$T/$1.port" \
	    "$T/$1.pem" "$T/$1.key" "$T/$1.raw"
	wait_file "$T/$1.port" 200 || { not_ok "$1 did not start"; exit 1; }
}
upstart up
P=$(cat "$T/up.port")
upstart rogue
PR=$(cat "$T/rogue.port")
hosts_file "$T/hosts" "127.0.0.1 api.test other.test"
printf '127.0.0.1 localhost\n127.0.0.1 api.test other.test\n' >"$T/tp.hosts"
tp_start term3 --allow "api.test other.test" --hosts "$T/tp.hosts"

# conf FILE EXTRA: api.test has rules; EXTRA goes into "network".
conf() {
	cat >"$1" <<EOF2
{"network": {"allowedDomains": ["api.test", "other.test", "127.0.0.1"],
  "tlsTerminate": {"caCertPath": "$T/pisbx-ca.pem",
    "caKeyPath": "$T/pisbx-ca.key",
    "extraCaCertPaths": ["$T/upstream-ca.pem"],
    "handshakeTimeoutMs": 2000},
  "requestRules": [{"host": "api.test", "deny": ["POST /deny/**"]}]
  $2},
 "resolver": {"hostsFile": "$T/hosts"}}
EOF2
}
cl() { "$PY" "$CLIENT" "$PX_PORT" "$T/pisbx-ca.pem" "$@" 2>&1; }

# 1. Through tinyproxy.
conf "$T/parent.json" ", \"parentProxy\": {\"http\": \"http://127.0.0.1:$TP_PORT\"}"
px_start "$T/parent.json"
out=$(cl "api.test:$P" api.test "GET /ok api.test")
eq "via parent: a request reaches the origin" "$out" "HTTP/1.1 200 OK"
check "via parent: tinyproxy carried the tunnel" tp_saw "$TP_LOG" CONNECT
out=$(cl "api.test:$P" api.test "POST /deny/x api.test")
eq "via parent: a request rule refuses" "$out" "HTTP/1.1 403 Forbidden"
check "via parent: the refused request did not reach the origin" \
    sh -c "! grep -q 'POST /deny/x' '$T/up.raw'"
out=$(cl "api.test:$PR" api.test "GET /rogue api.test")
eq "via parent: the origin's certificate is verified (502)" "$out" \
    "HTTP/1.1 502 Bad Gateway"
check_log "via parent: upstream-tls logged" event=request port="$PR" \
    status=502 reason=upstream-tls
eq "via parent: nothing reached the untrusted origin" \
    "$(grep -c rogue "$T/rogue.raw")" 0
px_stop

# 2. Names spelled otherwise, IP literals.
conf "$T/plain.json" ""
px_start "$T/plain.json"
out=$(cl "API.TEST.:$P" api.test "POST /deny/y api.test")
eq "upper case and trailing dot: the rule holds" "$out" \
    "HTTP/1.1 403 Forbidden"
out=$(cl "127.0.0.1:$P" - "POST /deny/z api.test")
eq "IP tunnel, Host api.test: 421" "$out" "HTTP/1.1 421 Misdirected Request"
out=$(cl "127.0.0.1:$P" api.test "POST /deny/z api.test")
eq "IP tunnel, SNI api.test: refused" "$out" "error-tls"
check_log "IP tunnel, SNI api.test: sni-mismatch" event=decision \
    host=127.0.0.1 port="$P" reason=sni-mismatch
check "neither reached the origin" sh -c "! grep -q 'POST /deny/z' '$T/up.raw'"
px_stop

# 3. Budgets through a terminated tunnel: 20000 bytes up to api.test.
conf "$T/budget.json" ", \"budget\": {\"bytesUpPerHost\": 20000}"
px_start "$T/budget.json"
: >"$T/up.raw"
out=$(cl "api.test:$P" api.test budget)
case $out in
"closed-after "*) ok "budget: keep-alive requests are cut ($out)" ;;
*) not_ok "budget: keep-alive requests not cut: $out" ;;
esac
n=$(wc -c <"$T/up.raw")
check "budget: the upstream got at most the budget ($n bytes)" \
    test "$n" -le 20000
check_log "budget: close record budget-bytes-up" event=close \
    host=api.test end=budget-bytes-up tls=terminated
out=$(cl "api.test:$P" api.test "GET /again api.test")
case $out in
"HTTP/1.1 200"*) not_ok "budget: a new tunnel after the budget: $out" ;;
*) ok "budget: a new tunnel after the budget is refused ($out)" ;;
esac
px_stop
conf "$T/budget.json" ", \"budget\": {\"bytesUpPerHost\": 20000}"
px_start "$T/budget.json"
: >"$T/up.raw"
out=$(cl "api.test:$P" api.test continue)
case $out in
"HTTP/1.1 200"*) not_ok "budget: a 100-continue body past it: $out" ;;
*) ok "budget: a 100-continue body past it is cut ($out)" ;;
esac
n=$(wc -c <"$T/up.raw")
check "budget: 100-continue: the upstream got at most the budget ($n)" \
    test "$n" -le 20000
px_done
