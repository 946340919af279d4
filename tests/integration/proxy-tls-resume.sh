#!/bin/sh
# TLS termination resumes its upstream sessions: each terminated tunnel
# opens its own TLS connection to the upstream, and after the first one
# to a host the proxy offers that host's last session ticket, so the
# upstream's certificate is not sent, parsed and verified again for
# every new tunnel (the bulk of a new terminated connection's CPU).  The
# tunnels end as clients end them -- the client closes, the proxy drops
# its upstream without a close_notify -- which must not spoil the
# session kept.  The upstream says, per handshake, whether it resumed.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

[ -f "$PISBX_BINDIR/pisbx-tls.so" ] || skip "pisbx-tls.so not built"
command -v openssl >/dev/null || skip "no openssl"
command -v curl >/dev/null || skip "no curl"

mkca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
	    -nodes -keyout "$T/$1.key" -out "$T/$1.pem" -days 2 -subj "/CN=$1" \
	    -addext basicConstraints=critical,CA:TRUE \
	    -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
	chmod 600 "$T/$1.key"
}
mkca pisbx-ca
mkca upstream-ca
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$T/up.key" -out "$T/up.csr" -subj /CN=test.host 2>/dev/null
printf 'subjectAltName=DNS:test.host\n' >"$T/ext.cnf"
openssl x509 -req -in "$T/up.csr" -CA "$T/upstream-ca.pem" \
    -CAkey "$T/upstream-ca.key" -CAcreateserial -out "$T/up.pem" -days 2 \
    -extfile "$T/ext.cnf" 2>/dev/null

srv_start http up --tls-cert "$T/up.pem" --tls-key "$T/up.key" \
    --log-sessions
P=$SRV_PORT
hosts_file "$T/hosts" "127.0.0.1 test.host"
cat >"$T/conf.json" <<EOF
{"network": {"allowedDomains": ["test.host"],
  "tlsTerminate": {"caCertPath": "$T/pisbx-ca.pem",
    "caKeyPath": "$T/pisbx-ca.key",
    "extraCaCertPaths": ["$T/upstream-ca.pem"]}},
 "resolver": {"hostsFile": "$T/hosts"}}
EOF
px_start "$T/conf.json"

# Four tunnels one after the other, each a curl of its own.
n=0
for i in 1 2 3 4; do
	if curl -sS --max-time 30 --proxy "http://127.0.0.1:$PX_PORT" \
	    --cacert "$T/pisbx-ca.pem" -o /dev/null \
	    "https://test.host:$P/r$i" 2>>"$T/curl.err"; then
		n=$((n + 1))
	fi
done
eq "four requests through four terminated tunnels" "$n" 4
log_wait event=close host=test.host tls=terminated >/dev/null
eq "the upstream saw four handshakes" \
    "$(grep -c '^tls-handshake' "$T/up.out")" 4
eq "the first is a full handshake" \
    "$(sed -n 1p "$T/up.out")" "tls-handshake resumed=0"
eq "the three after it resume the session the proxy kept" \
    "$(grep -c '^tls-handshake resumed=1' "$T/up.out")" 3

check "proxy still running" px_alive
px_done
