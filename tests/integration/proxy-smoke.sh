#!/bin/sh
# Quick end-to-end smoke check of pisbx-proxy: one allowed and one denied
# request over each protocol (HTTP forwarding, CONNECT, SOCKS5), their
# access-log records in both formats, and a clean SIGTERM.
. "$(dirname "$0")/../lib/common.sh"
[ -x "$PROXY" ] || skip "pisbx-proxy not built"
command -v curl >/dev/null || skip "curl missing"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy

mkdir "$T/www"
echo "hello from upstream" > "$T/www/index.html"
UP=$(free_port)
spawn $PY -m http.server "$UP" --bind 127.0.0.1 --directory "$T/www"
wait_port 127.0.0.1 "$UP" || { not_ok "upstream did not start"; done_testing; }

printf '127.0.0.1 allowed.test\n127.0.0.1 denied.test\n' > "$T/hosts"
cat > "$T/conf.json" <<JSON
{
  "network": {
    "allowedDomains": ["allowed.test"],
    "deniedDomains": ["denied.test"]
  },
  "resolver": { "hostsFile": "$T/hosts" }
}
JSON

# start_proxy FORMAT: run the proxy, set PORT from its "listening on" line.
start_proxy() {
	rm -f "$T/err" "$T/access.log"
	spawn "$PROXY" --config "$T/conf.json" --listen 127.0.0.1:0 \
	    --access-log "$T/access.log" --log-format "$1" 2>"$T/err"
	PXPID=$LAST_PID
	i=0
	while ! grep -q 'listening on' "$T/err" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.05; i=$((i + 1))
	done
	PORT=$(sed -n 's/^pisbx-proxy: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/err")
	[ -n "$PORT" ]
}

check "proxy starts and prints its port" start_proxy json

out=$(curl -sS -x "http://127.0.0.1:$PORT" "http://allowed.test:$UP/")
check "HTTP forwarding: allowed body" [ "$out" = "hello from upstream" ]
code=$(curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$PORT" "http://denied.test:$UP/")
check "HTTP forwarding: denied is 403 ($code)" [ "$code" = 403 ]
hdr=$(curl -s -D - -o /dev/null -x "http://127.0.0.1:$PORT" "http://denied.test:$UP/" | tr -d '\r' | grep -i '^x-pisbx-reason:')
check "403 names the reason ($hdr)" [ "$hdr" = "X-Pisbx-Reason: deny-list:denied.test" ]
out=$(curl -sS -p -x "http://127.0.0.1:$PORT" "http://allowed.test:$UP/")
check "CONNECT tunnel: allowed body" [ "$out" = "hello from upstream" ]
out=$(curl -sS --socks5-hostname "127.0.0.1:$PORT" "http://allowed.test:$UP/")
check "SOCKS5: allowed body" [ "$out" = "hello from upstream" ]
curl -s -o /dev/null --socks5-hostname "127.0.0.1:$PORT" "http://denied.test:$UP/"
rc=$?
check "SOCKS5: denied (curl exit $rc)" [ $rc -eq 97 ]

sleep 0.2
check "access log: allow decision with the dialled address" \
    has_line "$T/access.log" '"event":"decision".*"proto":"http".*"host":"allowed.test".*"decision":"allow","reason":"allow-list:allowed.test","source":"[^"]*: \$\.network\.allowedDomains\[0\]","layer":"run","addr":"127.0.0.1:'"$UP"'"'
check "access log: deny decision" \
    has_line "$T/access.log" '"event":"decision".*"host":"denied.test".*"decision":"deny","reason":"deny-list:denied.test"'
check "access log: close record with byte counts" \
    has_line "$T/access.log" '"event":"close".*"proto":"socks5".*"bytes_up":[1-9][0-9]*,"bytes_down":[1-9][0-9]*,"ms":[0-9]+'
n=$($PY -c 'import json,sys
n=0
for l in open(sys.argv[1]):
    json.loads(l); n+=1
print(n)' "$T/access.log")
check "access log: every line is JSON ($n records)" [ "${n:-0}" -ge 12 ]

# A kept-alive upstream that hangs up on the second request: the proxy
# sends that (bodiless) request once more on a fresh connection.
STALE=$(free_port)
cat > "$T/stale.py" <<'PYEOF'
import socket, sys
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", int(sys.argv[1])))
srv.listen(5)
open(sys.argv[2], "w").write("ready\n")
def head(c):
    d = b""
    while b"\r\n\r\n" not in d:
        x = c.recv(4096)
        if not x:
            return
        d += x
for n in range(3):
    c, _ = srv.accept()
    head(c)
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n" + (b"one" if n == 0 else b"two"))
    if n == 0:
        head(c)
    c.close()
PYEOF
spawn $PY "$T/stale.py" "$STALE" "$T/stale.ready"
wait_file "$T/stale.ready"
out=$(curl -sS -x "http://127.0.0.1:$PORT" "http://allowed.test:$STALE/a" "http://allowed.test:$STALE/b")
check "stale kept-alive upstream: request resent ($out)" [ "$out" = "onetwo" ]

kill -TERM "$PXPID"
wait "$PXPID"
rc=$?
check "SIGTERM: exit 0 (got $rc)" [ $rc -eq 0 ]

check "text format: proxy starts" start_proxy text
curl -s -o /dev/null -x "http://127.0.0.1:$PORT" "http://denied.test:$UP/"
sleep 0.2
check "text format: readable deny line" \
    has_line "$T/access.log" '^[0-9T:.-]+Z conn=1 decision http .* -> denied.test:'"$UP"' deny deny-list:denied.test rule=.*: \$\.network\.deniedDomains\[0\] \(run\)$'
kill -TERM "$PXPID"
wait "$PXPID"
done_testing
