#!/bin/sh
# Masked credentials inside terminated tunnels: a placeholder in the
# request line, a header (Bearer), Basic credentials (user:placeholder,
# as git and pip send them) or the body (Content-Length and chunked)
# reaches an injectHost as the real value; the request record names the
# credential; a body keeps its Content-Length when the values that may
# go there are as long as their placeholders.  A value shorter than its
# placeholder changes the body's length: the body is re-framed chunked
# and arrives whole.  A
# placeholder for a host that is not an injectHost is refused 403
# credential-leak with nothing sent upstream.  A server that sends a
# value back (an echo) is seen by the client as the placeholder.  The
# proxy is tests/helpers/credproxy (pisbx-run fills the table; pisbx-
# proxy has none), copied beside pisbx-tls.so so that it loads it.
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
printf 'subjectAltName=DNS:api.test,DNS:other.test\n' >"$T/ext.cnf"
openssl x509 -req -in "$T/up.csr" -CA "$T/upstream-ca.pem" \
    -CAkey "$T/upstream-ca.key" -CAcreateserial -out "$T/up.pem" -days 2 \
    -extfile "$T/ext.cnf" 2>/dev/null

# The upstream: appends each request (head, then its decoded body) to
# $T/up.record and answers with the head and body it read, so that
# what it saw also comes back.
cat >"$T/upstream.py" <<'EOF'
import socket, ssl, sys, threading
portfile, cert, key, record = sys.argv[1:5]
lock = threading.Lock()

def serve(c):
    f = c.makefile("rb")
    try:
        while True:
            head = b""
            while True:
                line = f.readline(65536)
                if not line:
                    return
                head += line
                if line in (b"\r\n", b"\n"):
                    break
            hl = head.lower()
            if b"\r\nupgrade:" in hl:
                # 101, then every byte back until EOF (a websocket's shape).
                with lock:
                    with open(record, "ab") as r:
                        r.write(head)
                c.sendall(b"HTTP/1.1 101 Switching Protocols\r\n"
                          b"Upgrade: echo\r\nConnection: Upgrade\r\n\r\n")
                while True:
                    d = c.recv(65536)
                    if not d:
                        return
                    with lock:
                        with open(record, "ab") as r:
                            r.write(d)
                    c.sendall(d)
            body = b""
            if b"transfer-encoding: chunked" in hl:
                while True:
                    n = int(f.readline().split(b";")[0], 16)
                    if n == 0:
                        f.readline()
                        break
                    body += f.read(n)
                    f.readline()
            else:
                for l in hl.split(b"\r\n"):
                    if l.startswith(b"content-length:"):
                        body = f.read(int(l.split(b":")[1]))
            with lock:
                with open(record, "ab") as r:
                    r.write(head + body + b"\n----\n")
            out = head + body
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n"
                      % len(out) + out)
    except (OSError, ValueError):
        pass
    finally:
        c.close()

ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(portfile + ".tmp", "w") as pf:
    pf.write(str(s.getsockname()[1]))
import os
os.rename(portfile + ".tmp", portfile)
while True:
    c, _ = s.accept()
    try:
        c = ctx.wrap_socket(c, server_side=True)
    except (OSError, ssl.SSLError):
        c.close()
        continue
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
spawn "$PY" "$T/upstream.py" "$T/up.port" "$T/up.pem" "$T/up.key" \
    "$T/up.record"
wait_file "$T/up.port" 200 || { not_ok "upstream did not start"; exit 1; }
P=$(cat "$T/up.port")
hosts_file "$T/hosts" "127.0.0.1 api.test other.test"
cat >"$T/conf.json" <<EOF
{"network": {"allowedDomains": ["api.test", "other.test"],
  "tlsTerminate": {"caCertPath": "$T/pisbx-ca.pem",
    "caKeyPath": "$T/pisbx-ca.key",
    "extraCaCertPaths": ["$T/upstream-ca.pem"]}},
 "resolver": {"hostsFile": "$T/hosts"}}
EOF

LONGV=ghp_realvalue0123456789abcdefghijklmnopqrstuvwxyz
SHORTV=short-secret-42
spawn "$T/bin/credproxy" --config "$T/conf.json" --access-log "$PX_LOG" \
    --cred "TOKEN=$LONGV@api.test" --cred "SHORT=$SHORTV@other.test" \
    >"$T/cp.out" 2>"$T/cp.err"
CP_PID=$LAST_PID
i=0 CP_PORT=
while [ $i -lt 200 ] && [ -z "$CP_PORT" ]; do
	CP_PORT=$(sed -n 's/^credproxy: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' \
	    "$T/cp.err")
	sleep 0.05; i=$((i + 1))
done
[ -n "$CP_PORT" ] || { not_ok "credproxy did not start: $(cat "$T/cp.err")"; exit 1; }
PH=$(sed -n 's/^placeholder TOKEN //p' "$T/cp.out")
PHS=$(sed -n 's/^placeholder SHORT //p' "$T/cp.out")

c() {
	curl -sS --max-time 30 --proxy "http://127.0.0.1:$CP_PORT" \
	    --cacert "$T/pisbx-ca.pem" "$@"
}
# seen STRING: the upstream received it.
seen() { grep -qF -- "$1" "$T/up.record"; }

# Bearer header, request line, and the answer hidden again.
out=$(c -H "Authorization: Bearer $PH" \
    "https://api.test:$P/repos?access_token=$PH" 2>&1)
check "Bearer: the upstream got the value" seen "Authorization: Bearer $LONGV"
check "request line: the upstream got the value" seen \
    "GET /repos?access_token=$LONGV HTTP/1.1"
contains "echo: the client sees the placeholder" "$out" \
    "Authorization: Bearer $PH"
case $out in
*"$LONGV"*) not_ok "echo: the value reached the client" ;;
*) ok "echo: the value never reaches the client" ;;
esac
check_log "request record names the credential" event=request \
    host=api.test status=200 'injected~\$TOKEN'

# Basic user:placeholder (git's way).
: >"$T/up.record"
c -u "x-access-token:$PH" "https://api.test:$P/git" >/dev/null 2>&1
want=$(printf 'x-access-token:%s' "$LONGV" | base64 -w0)
check "Basic: the upstream got user:value" seen "Authorization: Basic $want"

# Bodies: same length (Content-Length kept), shorter (re-framed).
: >"$T/up.record"
printf '{"token":"%s","n":1}' "$PH" >"$T/body1"
out=$(c --data-binary @"$T/body1" -H 'Content-Type: application/json' \
    "https://api.test:$P/b1" 2>&1)
check "body (Content-Length): the upstream got the value" seen \
    "{\"token\":\"$LONGV\",\"n\":1}"
check "body (Content-Length): the length was kept" seen \
    "Content-Length: $(wc -c <"$T/body1" | tr -d ' ')"
printf 'a=%s&b=%s&end' "$PHS" "$PHS" >"$T/body2"
c --data-binary @"$T/body2" "https://other.test:$P/b2" >/dev/null 2>&1
check "body (shorter value): the upstream got the values" seen \
    "a=$SHORTV&b=$SHORTV&end"
check "body (shorter value): re-framed chunked" seen \
    "Transfer-Encoding: chunked"
: >"$T/up.record"
c -H 'Transfer-Encoding: chunked' --data-binary @"$T/body1" \
    "https://api.test:$P/b3" >/dev/null 2>&1
check "body (chunked): the upstream got the value" seen \
    "{\"token\":\"$LONGV\",\"n\":1}"

# To a host that is not an injectHost: 403, nothing upstream.
: >"$T/up.record"
: >"$PX_LOG"
out=$(c -D - -H "Authorization: Bearer $PH" "https://other.test:$P/x" 2>&1)
contains "leak: 403" "$out" "HTTP/1.1 403 Forbidden"
contains "leak: X-Pisbx-Reason" "$out" "X-Pisbx-Reason: credential-leak"
contains "leak: names the credential" "$out" "placeholder of \$TOKEN"
eq "leak: nothing reached the upstream" "$(wc -c <"$T/up.record" | tr -d ' ')" 0
check_log "leak: request record" event=request host=other.test \
    status=403 reason=credential-leak
check "leak: proxy_opts.refused told" has_line "$T/cp.err" \
    "refused other.test:$P credential-leak \\\$TOKEN"
: >"$T/up.record"
c --data-binary @"$T/body1" "https://other.test:$P/y" -o "$T/leak2.out" \
    -D "$T/leak2.head" 2>/dev/null
check "leak in a body: 403" has_line "$T/leak2.head" "403"
case $(cat "$T/up.record") in
*"$LONGV"*) not_ok "leak in a body: the value went up" ;;
*) ok "leak in a body: no value went up" ;;
esac

# Upgrade: after 101 the bytes go both ways as they are; a placeholder
# from the client still closes the connection before it goes up.
: >"$T/up.record"
"$PY" - "$CP_PORT" "$P" "$T/pisbx-ca.pem" "$PH" >"$T/ws.out" 2>&1 <<'PYEOF'
import socket, ssl, sys
port, up, ca, ph = sys.argv[1:5]
s = socket.create_connection(("127.0.0.1", int(port)))
s.sendall(b"CONNECT api.test:%s HTTP/1.1\r\nHost: api.test\r\n\r\n" % up.encode())
s.recv(4096)
ctx = ssl.create_default_context(cafile=ca)
t = ctx.wrap_socket(s, server_hostname="api.test")
t.sendall(b"GET /ws HTTP/1.1\r\nHost: api.test:%s\r\nUpgrade: echo\r\n"
          b"Connection: Upgrade\r\n\r\n" % up.encode())
t.settimeout(5)
got = b""
while b"\r\n\r\n" not in got:
    got += t.recv(4096)
print("head", got.split(b"\r\n")[0].decode())
t.sendall(b"hello raw bytes")
got = b""
while len(got) < 15:
    got += t.recv(4096)
print("echo", got.decode())
t.sendall(b"now " + ph.encode())
try:
    d = t.recv(4096)
    print("after-leak", repr(d))
except (OSError, ssl.SSLError) as e:
    print("after-leak closed", type(e).__name__)
PYEOF
check "upgrade: 101 reaches the client" has_line "$T/ws.out" \
    "^head HTTP/1.1 101"
check "upgrade: raw bytes both ways (one that could begin a value too)" \
    has_line "$T/ws.out" \
    "^echo hello raw bytes$"
check "upgrade: a placeholder closes it" has_line "$T/ws.out" \
    "^after-leak (b''|closed)"
case $(cat "$T/up.record") in
*"$PH"*) not_ok "upgrade: the placeholder went up" ;;
*) ok "upgrade: the placeholder did not go up" ;;
esac
check_log "upgrade: credential-leak logged" event=decision \
    reason=credential-leak credential='$TOKEN'

kill -TERM "$CP_PID"
wait "$CP_PID"
eq "credproxy: clean exit" "$?" 0
if grep -qE "Sanitizer|runtime error" "$T/cp.err"; then
	not_ok "credproxy: a sanitizer report"
	grep -EA 20 "Sanitizer|runtime error" "$T/cp.err" | sed 's/^/# /'
fi
done_testing
