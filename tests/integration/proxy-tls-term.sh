#!/bin/sh
# TLS termination (network.tlsTerminate) in pisbx-proxy standalone: the
# proxy answers the client's TLS with a leaf its CA signs, verifies the
# upstream against extraCaCertPaths, and reads the HTTP/1.1 inside --
# Host checked (421), request rules (403 naming the rule and its file,
# 400 for an ambiguous target), one access-log record per request,
# keep-alive, bodies of 50 MB both ways intact, h2 offered and declined.
# An upstream that does not verify is a 502 saying why; a client that
# does not trust the CA is a close record "client-tls"; an excluded host
# is a plain tunnel; a tunnel that does not carry TLS to a host with
# request rules is refused; maxTunnels answers 503.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

[ -f "$PISBX_BINDIR/pisbx-tls.so" ] || skip "pisbx-tls.so not built"
command -v openssl >/dev/null || skip "no openssl"
command -v curl >/dev/null || skip "no curl"

# The CA pisbx signs its leaves with, and the upstream's own CA and leaf.
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
printf 'subjectAltName=DNS:test.host,DNS:other.host,DNS:excl.host\n' \
    >"$T/ext.cnf"
openssl x509 -req -in "$T/up.csr" -CA "$T/upstream-ca.pem" \
    -CAkey "$T/upstream-ca.key" -CAcreateserial -out "$T/up.pem" -days 2 \
    -extfile "$T/ext.cnf" 2>/dev/null
# An upstream whose certificate no configured CA signs.
"$PY" "$SERVERS" certgen "$T/self" test.host

srv_start http up --tls-cert "$T/up.pem" --tls-key "$T/up.key"
P=$SRV_PORT
srv_start http self --tls-cert "$T/self/cert.pem" --tls-key "$T/self/key.pem"
PS=$SRV_PORT
hosts_file "$T/hosts" "127.0.0.1 test.host other.host excl.host"

# conf FILE MAXTUNNELS
conf() {
	cat >"$1" <<EOF
{"network": {"allowedDomains": ["test.host", "other.host", "excl.host"],
  "tlsTerminate": {"caCertPath": "$T/pisbx-ca.pem",
    "caKeyPath": "$T/pisbx-ca.key",
    "extraCaCertPaths": ["$T/upstream-ca.pem"],
    "excludeDomains": ["excl.host"], "maxTunnels": $2,
    "handshakeTimeoutMs": 1500},
  "requestRules": [{"host": "test.host", "deny": ["POST /deny/**"]}]},
 "proxy": {"headerTimeoutMs": 1500},
 "resolver": {"hostsFile": "$T/hosts"}}
EOF
}
conf "$T/conf.json" 256
px_start "$T/conf.json"
PXU=http://127.0.0.1:$PX_PORT

# c ARGS...: curl through the proxy trusting pisbx's CA.
c() { curl -sS --max-time 60 --proxy "$PXU" --cacert "$T/pisbx-ca.pem" "$@"; }

# A request reaches the upstream through the terminated tunnel.
out=$(c "https://test.host:$P/hello?key=secretvalue&b=2" \
    -H 'X-Test: one' 2>"$T/c1.err")
case $out in
*'"path": "/hello?key=secretvalue&b=2"'*'"X-Test", "one"'*)
	ok "terminated: the upstream's echo arrives" ;;
*) not_ok "terminated: got '$out' $(cat "$T/c1.err")" ;;
esac
check_log "request record: method, path without query values, status" \
    event=request proto=connect host=test.host port="$P" method=GET \
    'path=/hello?key&b' status=200 tls=terminated
eq "no query value in the log" "$(grep -c secretvalue "$PX_LOG")" 0
check_log "close record says the tunnel was terminated" event=close \
    host=test.host port="$P" end=eof tls=terminated
# The leaf the client saw is pisbx's, for the CONNECT host.
issuer=$(openssl s_client -proxy "127.0.0.1:$PX_PORT" \
    -connect "test.host:$P" -servername test.host \
    -CAfile "$T/pisbx-ca.pem" </dev/null 2>/dev/null |
    sed -n 's/^issuer=//p' | head -n 1)
contains "the client's certificate is issued by pisbx's CA" "$issuer" \
    "pisbx-ca"

# Upstream verification failure: 502 with why, after the client's handshake.
: >"$PX_LOG"
out=$(c -D - "https://test.host:$PS/x" 2>"$T/c2.err")
contains "untrusted upstream: 502" "$out" "HTTP/1.1 502 Bad Gateway"
contains "untrusted upstream: X-Pisbx-Reason" "$out" \
    "X-Pisbx-Reason: upstream-tls"
contains "untrusted upstream: the body says what to change" "$out" \
    "test.host:$PS's certificate did not verify (certificate verify failed"
contains "untrusted upstream: names extraCaCertPaths" "$out" \
    "add its CA to network.tlsTerminate.extraCaCertPaths, or the host to excludeDomains"
check_log "untrusted upstream: logged upstream-tls" event=request \
    port="$PS" status=502 reason=upstream-tls

# A client that does not trust pisbx's CA: its handshake fails.
: >"$PX_LOG"
curl -sS --max-time 10 --proxy "$PXU" "https://test.host:$P/" \
    >/dev/null 2>"$T/c3.err"
check "client without the CA: curl refuses the certificate" \
    has_line "$T/c3.err" "certificate"
check_log "client without the CA: close record client-tls" event=close \
    port="$P" end=client-tls tls=terminated

# SNI for another name than the CONNECT host: refused before upstream.
: >"$PX_LOG"
openssl s_client -proxy "127.0.0.1:$PX_PORT" -connect "test.host:$P" \
    -servername other.host -CAfile "$T/pisbx-ca.pem" </dev/null \
    >"$T/sni.out" 2>&1
check "SNI mismatch: no certificate" has_line "$T/sni.out" \
    "no peer certificate"
check_log "SNI mismatch: refused" event=decision port="$P" decision=deny \
    reason=sni-mismatch error~'SNI "other.host"'

# A ClientHello split over segments is terminated all the same (its
# request, with Host "x", is pisbx's to answer); half of one that stalls
# is refused after network.tlsTerminate.handshakeTimeoutMs.
: >"$PX_LOG"
out=$("$PY" "$SERVERS" tls --port "$PX_PORT" --via connect \
    --target "test.host:$P" --sni test.host --split 5 2>&1)
contains "split ClientHello: terminated" "$out" "response HTTP/1.1 421"
out=$("$PY" "$SERVERS" tls --port "$PX_PORT" --via connect \
    --target "test.host:$P" --sni test.host --stall 2>&1)
contains "stalled ClientHello: closed (or reset: it was never read)" \
    "$out" closed
check_log "stalled ClientHello: refused after handshakeTimeoutMs" \
    event=decision decision=deny reason=sni-mismatch \
    error~'incomplete TLS ClientHello.*1500 ms'

# Host header for another host: 421.
: >"$PX_LOG"
out=$(c -D - -H "Host: other.host:$P" "https://test.host:$P/x" 2>&1)
contains "Host mismatch: 421" "$out" "HTTP/1.1 421 Misdirected Request"
contains "Host mismatch: why" "$out" "is not the tunnel's host test.host:$P"
check_log "Host mismatch: logged" event=request status=421 \
    reason=host-mismatch
# Absolute-form naming the host is accepted; another host is not.
out=$(c --request-target "https://test.host:$P/abs" \
    "https://test.host:$P/abs" 2>&1)
contains "absolute-form for the CONNECT host passes" "$out" \
    '"path": "/abs"'

# Request rules: a deny rule, an unmatched request, an ambiguous target.
: >"$PX_LOG"
out=$(c -D - -X POST -d x "https://test.host:$P/deny/a/b" 2>&1)
contains "request rule: 403" "$out" "HTTP/1.1 403 Forbidden"
contains "request rule: names the rule and its file" "$out" \
    "refused by the request rule \"POST /deny/**\" ($T/conf.json: \$.network.requestRules[0].deny[0])"
check_log "request rule: logged with rule and source" event=request \
    method=POST path=/deny/a/b status=403 reason=request-rule \
    'rule=POST /deny/**' source~'requestRules\[0\]\.deny\[0\]'
out=$(c -X POST -d x "https://test.host:$P/allowed/a" 2>&1)
contains "request rule: an unmatched request passes" "$out" \
    '"method": "POST", "path": "/allowed/a"'
out=$(c -D - --path-as-is "https://test.host:$P/a/%2e%2e/deny/x" 2>&1)
contains "ambiguous target: 400" "$out" "HTTP/1.1 400 Bad Request"
contains "ambiguous target: reason" "$out" \
    "X-Pisbx-Reason: ambiguous-target"
# Plain HTTP to a host with request rules would go unread: refused.
out=$(curl -sS --max-time 10 --proxy "$PXU" -D - \
    "http://test.host:$P/plain" 2>&1)
contains "plain HTTP to a rules host: 403" "$out" "HTTP/1.1 403"
check_log "plain HTTP to a rules host: request-rules-opaque" \
    event=decision proto=http decision=deny reason=request-rules-opaque
# A tunnel that does not carry TLS to a rules host: refused.
: >"$PX_LOG"
"$PY" - "$PX_PORT" "$P" <<'EOF' >"$T/plain.out" 2>&1
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"CONNECT test.host:%s HTTP/1.1\r\nHost: x\r\n\r\n" %
          sys.argv[2].encode())
s.settimeout(5)
print(s.recv(4096))
s.sendall(b"GET / HTTP/1.1\r\nHost: test.host\r\n\r\n")
try:
    print(repr(s.recv(4096)))
except OSError as e:
    print("error", e)
EOF
check_log "non-TLS tunnel to a rules host: refused" event=decision \
    port="$P" decision=deny reason=request-rules-opaque
check "non-TLS tunnel to a rules host: nothing came back" \
    has_line "$T/plain.out" "^(b''|error .*reset.*)$"

# Keep-alive: two requests, one connection, two records.
: >"$PX_LOG"
c -o /dev/null -o /dev/null -w '%{num_connects}\n' \
    "https://test.host:$P/one" "https://test.host:$P/two" >"$T/ka.out" 2>&1
eq "keep-alive: the second request reuses the connection" \
    "$(sed -n 2p "$T/ka.out")" 0
check_log "keep-alive: first request" event=request path=/one status=200
check_log "keep-alive: second request" event=request path=/two status=200
eq "keep-alive: one tunnel" "$(log_count event=close tls=terminated)" 1

# h2 offered: pisbx's ALPN says http/1.1, and the request works.
out=$(c --http2 -o /dev/null -w '%{http_code} %{http_version}' \
    "https://test.host:$P/h2" 2>&1)
eq "h2 offered: served over HTTP/1.1" "$out" "200 1.1"

# 50 MB both ways, Content-Length and chunked, and a download.
head -c 52428800 /dev/urandom >"$T/big"
want=$(sha256sum <"$T/big" | cut -d' ' -f1)
c --data-binary @"$T/big" -H 'Content-Type: application/octet-stream' \
    -o "$T/big.out" "https://test.host:$P/echo-body" 2>"$T/big.err"
eq "50 MB up and back (Content-Length)" \
    "$(sha256sum <"$T/big.out" | cut -d' ' -f1)" "$want"
c --data-binary @"$T/big" -H 'Transfer-Encoding: chunked' \
    -o "$T/big2.out" "https://test.host:$P/echo-body" 2>"$T/big2.err"
eq "50 MB up and back (chunked)" \
    "$(sha256sum <"$T/big2.out" | cut -d' ' -f1)" "$want"
c -o "$T/dl.out" "https://test.host:$P/bytes/52428800" 2>"$T/dl.err"
eq "50 MB down" "$(sha256sum <"$T/dl.out" | cut -d' ' -f1)" \
    "$("$PY" "$SERVERS" sha 52428800)"
c -o "$T/ch.out" "https://test.host:$P/chunked/3000000" 2>"$T/ch.err"
eq "chunked response re-framed intact" \
    "$(sha256sum <"$T/ch.out" | cut -d' ' -f1)" \
    "$("$PY" "$SERVERS" sha 3000000)"

# An excluded host: a plain tunnel, the client sees the upstream's cert.
: >"$PX_LOG"
out=$(curl -sS --max-time 10 --proxy "$PXU" --cacert "$T/upstream-ca.pem" \
    "https://excl.host:$P/ex" 2>&1)
contains "excluded host: the upstream's own certificate" "$out" \
    '"path": "/ex"'
check_log "excluded host: closed as a plain tunnel" event=close \
    host=excl.host end=eof
eq "excluded host: no request record" "$(log_count event=request)" 0

# SOCKS5 tunnels are terminated too.
out=$(curl -sS --max-time 10 --socks5-hostname "127.0.0.1:$PX_PORT" \
    --cacert "$T/pisbx-ca.pem" "https://test.host:$P/socks" 2>&1)
contains "SOCKS5: terminated" "$out" '"path": "/socks"'
check_log "SOCKS5: request record" event=request proto=socks5 path=/socks

# maxTunnels: one held open, the next CONNECT is 503.
conf "$T/conf1.json" 1
px_start "$T/conf1.json"
PX1=$PX_PORT
sleep 30 | openssl s_client -proxy "127.0.0.1:$PX1" -connect "test.host:$P" \
    -servername test.host -CAfile "$T/pisbx-ca.pem" >"$T/hold.out" 2>&1 &
HOLD=$!
_pids="$_pids $HOLD"
wait_file "$T/hold.out" 100
i=0
while ! grep -q "Verify return code: 0" "$T/hold.out" && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
out=$(curl -sS --max-time 10 --proxy "http://127.0.0.1:$PX1" \
    --cacert "$T/pisbx-ca.pem" "https://test.host:$P/full" 2>&1)
contains "maxTunnels: the next tunnel is refused 503" "$out" "503"
check_log "maxTunnels: tls-tunnels-full" event=decision decision=deny \
    reason=tls-tunnels-full
kill "$HOLD" 2>/dev/null

# SIGHUP: the CA and the upstream roots are made at start; a reload that
# changes them is refused whole (the old allow list stays too), one that
# changes excludeDomains is taken.
hup_wait() {	# N: wait for the Nth reload line on the proxy's stderr
	i=0
	while [ "$(grep -c 'reload\|reloaded' "$PX_ERR")" -lt "$1" ] &&
	    [ $i -lt 100 ]; do
		sleep 0.05; i=$((i + 1))
	done
}
sed -e 's|"extraCaCertPaths": \["[^"]*"\]|"extraCaCertPaths": []|' \
    -e 's|\["test.host", "other.host", "excl.host"\]|["other.host"]|' \
    "$T/conf1.json" >"$T/roots.json"
cp "$T/roots.json" "$T/conf1.json"
kill -HUP "$PX_PID"
hup_wait 1
check "reload changing extraCaCertPaths: refused, said" has_line "$PX_ERR" \
    "reload: keeping the old config: network\.tlsTerminate's CA and roots change only at a restart"
out=$(curl -sS --max-time 10 --proxy "http://127.0.0.1:$PX1" \
    --cacert "$T/pisbx-ca.pem" "https://test.host:$P/kept" 2>&1)
contains "... the old config stays whole (allow list, roots)" "$out" \
    '"path": "/kept"'
conf "$T/conf1.json" 1
sed 's|"excludeDomains": \["excl.host"\]|"excludeDomains": ["excl.host", "other.host"]|' \
    "$T/conf1.json" >"$T/excl.json"
cp "$T/excl.json" "$T/conf1.json"
kill -HUP "$PX_PID"
hup_wait 2
check "reload changing excludeDomains: taken" has_line "$PX_ERR" \
    "configuration reloaded"
out=$(curl -sS --max-time 10 --proxy "http://127.0.0.1:$PX1" \
    --cacert "$T/upstream-ca.pem" "https://other.host:$P/plain" 2>&1)
contains "... other.host is now a plain tunnel (the upstream's own leaf)" \
    "$out" '"path": "/plain"'

# Standalone without caCertPath: a config error naming the key.
cat >"$T/noca.json" <<EOF
{"network": {"allowedDomains": ["test.host"], "tlsTerminate": {}},
 "resolver": {"hostsFile": "$T/hosts"}}
EOF
"$PROXY" --config "$T/noca.json" --listen 127.0.0.1:0 2>"$T/noca.err" &
NOCA=$!
wait "$NOCA"
eq "no caCertPath: exit 78" "$?" 78
check "no caCertPath: names the key" has_line "$T/noca.err" \
    'network\.tlsTerminate\.caCertPath'
# A missing extraCaCertPaths file: refused, saying which and why.
sed "s|\"$T/upstream-ca.pem\"|\"$T/no-such-ca.pem\"|" "$T/conf.json" \
    >"$T/noextra.json"
"$PROXY" --config "$T/noextra.json" --listen 127.0.0.1:0 2>"$T/noextra.err" &
NOEX=$!
wait "$NOEX"
eq "missing extraCaCertPaths file: exit 78" "$?" 78
check "missing extraCaCertPaths file: named, with why" has_line \
    "$T/noextra.err" "extraCaCertPaths $T/no-such-ca\.pem: No such file or directory"

# The text format: the request's line and the close's tls=terminated.
spawn "$PROXY" --config "$T/conf.json" --listen 127.0.0.1:0 \
    --access-log "$T/text.log" --log-format text 2>"$T/text.err"
TXT=$LAST_PID
i=0 TP=
while [ $i -lt 200 ] && [ -z "$TP" ]; do
	TP=$(sed -n 's/^pisbx-proxy: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' \
	    "$T/text.err")
	sleep 0.05; i=$((i + 1))
done
curl -sS --max-time 10 --proxy "http://127.0.0.1:$TP" \
    --cacert "$T/pisbx-ca.pem" -X POST -d x \
    "https://test.host:$P/deny/t?k=v" >/dev/null 2>&1
sleep 0.2
check "text format: the request line" has_line "$T/text.log" \
    " request connect 127\.0\.0\.1:[0-9]+ -> test\.host:$P POST /deny/t\?k 403 request-rule rule=\"POST /deny/\*\*\" \($T/conf.json"
check "text format: tls=terminated on the close" has_line "$T/text.log" \
    " close connect .* tls=terminated"
kill "$TXT"

# A server that speaks first (SMTP, FTP) on a terminated host: the plain
# tunnel carries it at once, not after handshakeTimeoutMs (20 s here).
sed 's/"handshakeTimeoutMs": 1500/"handshakeTimeoutMs": 20000/' \
    "$T/conf.json" >"$T/slow.json"
spawn "$PROXY" --config "$T/slow.json" --listen 127.0.0.1:0 \
    --access-log "$T/slow.log" 2>"$T/slow.err"
SLOW=$LAST_PID
i=0 SP=
while [ $i -lt 200 ] && [ -z "$SP" ]; do
	SP=$(sed -n 's/^pisbx-proxy: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' \
	    "$T/slow.err")
	sleep 0.05; i=$((i + 1))
done
"$PY" - "$SP" >"$T/first.out" 2>&1 <<'EOF'
import socket, sys, threading, time
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(1)
def serve():
    s, _ = ls.accept()
    s.sendall(b"220 first.host ESMTP ready\r\n")
    s.settimeout(10)
    s.sendall(s.recv(100))
    s.close()
threading.Thread(target=serve, daemon=True).start()
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
c.sendall(b"CONNECT other.host:%d HTTP/1.1\r\nHost: x\r\n\r\n" %
          ls.getsockname()[1])
c.settimeout(10)
t0 = time.monotonic()
got = b""
while b"220 " not in got:
    d = c.recv(4096)
    if not d:
        break
    got += d
print("banner after %.1f s" % (time.monotonic() - t0))
c.sendall(b"EHLO me\r\n")
print("echo", c.recv(100).decode().strip())
EOF
check "server speaks first: its banner comes before the timeout" \
    has_line "$T/first.out" "^banner after [0-4]\.[0-9] s$"
check "server speaks first: the tunnel carries both ways" \
    has_line "$T/first.out" "^echo EHLO me$"
kill "$SLOW"

check "proxy still running" px_alive
px_done
