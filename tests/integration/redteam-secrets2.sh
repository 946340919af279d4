#!/bin/sh
# Red-team cases, round 2, for masked credentials and request rules on
# the proxy side (tests/helpers/credproxy, a proxy with a credentials
# table).  The upstream (tests/lib/rawupstream.py) records every byte
# it receives, so each case asserts the upstream's view: what pisbx
# decided to send, never what the client wrote.
#   TOKEN  injectHosts api.test
#   DEF    no injectHosts: allowedDomains (api.test, other.test)
# rev.test is not allowed: a review command approves it, and neither
# credential may go there.  Everything goes through a gateway (a
# parentProxy) that connects to 127.0.0.1, so that pisbx resolves no
# name: a reviewed name may not reach a loopback address otherwise.  The cases are in redteam2.py, one "ok" or
# "not ok" line each.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

CREDPROXY=$PISBX_BUILD/tests/helpers/credproxy
[ -x "$CREDPROXY" ] || skip "credproxy not built ($CREDPROXY)"
[ -f "$PISBX_BINDIR/pisbx-tls.so" ] || skip "pisbx-tls.so not built"
command -v openssl >/dev/null || skip "no openssl"
command -v curl >/dev/null || skip "no curl"
mkdir "$T/bin"
cp "$CREDPROXY" "$PISBX_BINDIR/pisbx-tls.so" "$T/bin/"

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
    -keyout "$T/up.key" -out "$T/up.csr" -subj /CN=api.test 2>/dev/null
printf 'subjectAltName=DNS:api.test,DNS:other.test,DNS:rev.test\n' \
    >"$T/ext.cnf"
openssl x509 -req -in "$T/up.csr" -CA "$T/upstream-ca.pem" \
    -CAkey "$T/upstream-ca.key" -CAcreateserial -out "$T/up.pem" -days 2 \
    -extfile "$T/ext.cnf" 2>/dev/null

: >"$T/up.raw"
spawn "$PY" "$PISBX_TOP/tests/lib/rawupstream.py" "$T/up.port" \
    "$T/up.pem" "$T/up.key" "$T/up.raw"
wait_file "$T/up.port" 200 || { not_ok "upstream did not start"; exit 1; }
P=$(cat "$T/up.port")
# A plain HTTP server on an injectHost's name.
spawn "$PY" "$PISBX_TOP/tests/lib/tlsserver.py" echo --plain \
    --port-file "$T/plain.port" --log "$T/plain.log"
wait_file "$T/plain.port" 200 || { not_ok "plain server did not start"; exit 1; }
PP=$(cat "$T/plain.port")
hosts_file "$T/hosts" "127.0.0.1 api.test other.test rev.test"
# The gateway: every CONNECT to 127.0.0.1 at its port, so that names are
# not resolved by pisbx (a reviewed name reaches no loopback otherwise).
cat >"$T/parent.py" <<'EOF'
import os, socket, sys, threading
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass
def serve(c):
    head = b""
    while b"\r\n\r\n" not in head:
        d = c.recv(4096)
        if not d:
            c.close()
            return
        head += d
    port = int(head.split(b" ")[1].rsplit(b":", 1)[1])
    u = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    rest = head.split(b"\r\n\r\n", 1)[1]
    if rest:
        u.sendall(rest)
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
    pipe(c, u)
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(512)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
spawn "$PY" "$T/parent.py" "$T/parent.port"
wait_file "$T/parent.port" 200 || { not_ok "gateway did not start"; exit 1; }
GW=$(cat "$T/parent.port")
printf '#!/bin/sh\nread -r req\nprintf %s\n' \
    "'{\"action\":\"allow\",\"reason\":\"red team says yes\"}\\n'" \
    >"$T/rev.sh"
chmod +x "$T/rev.sh"
cat >"$T/conf.json" <<EOF
{"network": {"allowedDomains": ["api.test", "other.test"],
  "tlsTerminate": {"caCertPath": "$T/pisbx-ca.pem",
    "caKeyPath": "$T/pisbx-ca.key",
    "extraCaCertPaths": ["$T/upstream-ca.pem"],
    "maxTunnels": 8, "handshakeTimeoutMs": 1000},
  "requestRules": [{"host": "api.test",
    "deny": ["POST /**/git-receive-pack", "PUT /**"]}],
  "parentProxy": {"http": "http://127.0.0.1:$GW"}},
 "resolver": {"hostsFile": "$T/hosts"},
 "review": {"command": ["$T/rev.sh"], "timeoutMs": 10000}}
EOF

V=ghp_redteamvalue0123456789abcdefghijklmnopqrstuv
V2=npm_defaultvalue0123456789abcdefghijklmnopqrst
spawn "$T/bin/credproxy" --config "$T/conf.json" --access-log "$PX_LOG" \
    --cred "TOKEN=$V@api.test" --cred "DEF=$V2@" >"$T/cp.out" 2>"$T/cp.err"
CP_PID=$LAST_PID
i=0 CP_PORT=
while [ $i -lt 200 ] && [ -z "$CP_PORT" ]; do
	CP_PORT=$(sed -n 's/^credproxy: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' \
	    "$T/cp.err")
	sleep 0.05; i=$((i + 1))
done
[ -n "$CP_PORT" ] || { not_ok "credproxy did not start: $(cat "$T/cp.err")"; exit 1; }
PH=$(sed -n 's/^placeholder TOKEN //p' "$T/cp.out")
PH2=$(sed -n 's/^placeholder DEF //p' "$T/cp.out")

"$PY" "$PISBX_TOP/tests/integration/redteam2.py" "$CP_PORT" "$P" "$PP" \
    "$T/pisbx-ca.pem" "$T/up.raw" "$T/plain.log" "$PH" "$V" "$PH2" "$V2" \
    "$CP_PID" >"$T/cases.out" 2>&1
rc=$?
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	*) echo "# $line" ;;
	esac
done <"$T/cases.out"
eq "redteam2.py ran to its end" "$rc" 0
# No value in any log.
for f in "$PX_LOG" "$T/cp.err"; do
	if grep -qF -e "$V" -e "$V2" "$f"; then
		not_ok "$(basename "$f"): holds a value"
	else
		ok "$(basename "$f"): no value"
	fi
done

kill -TERM "$CP_PID"
wait "$CP_PID"
eq "credproxy: clean exit" "$?" 0
done_testing
