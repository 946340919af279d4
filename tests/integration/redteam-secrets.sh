#!/bin/sh
# Red-team cases for masked credentials in terminated tunnels: an
# injectHost that sends the real value back must never get it to the
# client, whatever the response's shape.  The upstream is an echo server
# whose answer the request picks by its path:
#   /enc    the request head back as the body, labelled
#           "Content-Encoding: x" (not compressed at all);
#   /up     101 Switching Protocols, then the request head as raw bytes;
#   other   the request head back as an identity body.
# The proxy is tests/helpers/credproxy (see proxy-tls-term-cred.sh).
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
printf 'subjectAltName=DNS:api.test\n' >"$T/ext.cnf"
openssl x509 -req -in "$T/up.csr" -CA "$T/upstream-ca.pem" \
    -CAkey "$T/upstream-ca.key" -CAcreateserial -out "$T/up.pem" -days 2 \
    -extfile "$T/ext.cnf" 2>/dev/null

cat >"$T/upstream.py" <<'EOF'
import os, socket, ssl, sys, threading
portfile, cert, key = sys.argv[1:4]

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
            path = head.split(b" ")[1]
            if path.startswith(b"/up"):
                c.sendall(b"HTTP/1.1 101 Switching Protocols\r\n"
                          b"Connection: Upgrade\r\nUpgrade: echo\r\n\r\n")
                # Split in two writes, the value across them.
                c.sendall(head[:len(head) // 2])
                c.sendall(head[len(head) // 2:])
                c.shutdown(socket.SHUT_WR)
                f.read()
                return
            enc = b"Content-Encoding: x\r\n" if path.startswith(b"/enc") \
                else b""
            c.sendall(b"HTTP/1.1 200 OK\r\n" + enc +
                      b"Content-Length: %d\r\n\r\n" % len(head) + head)
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
spawn "$PY" "$T/upstream.py" "$T/up.port" "$T/up.pem" "$T/up.key"
wait_file "$T/up.port" 200 || { not_ok "upstream did not start"; exit 1; }
P=$(cat "$T/up.port")
hosts_file "$T/hosts" "127.0.0.1 api.test"
cat >"$T/conf.json" <<EOF
{"network": {"allowedDomains": ["api.test"],
  "tlsTerminate": {"caCertPath": "$T/pisbx-ca.pem",
    "caKeyPath": "$T/pisbx-ca.key",
    "extraCaCertPaths": ["$T/upstream-ca.pem"]},
  "requestRules": [{"host": "api.test",
    "deny": ["POST /**/git-receive-pack"]}]},
 "resolver": {"hostsFile": "$T/hosts"}}
EOF

V=ghp_redteamvalue0123456789abcdefghijklmnopqrstuv
spawn "$T/bin/credproxy" --config "$T/conf.json" --access-log "$PX_LOG" \
    --cred "TOKEN=$V@api.test" >"$T/cp.out" 2>"$T/cp.err"
CP_PID=$LAST_PID
i=0 CP_PORT=
while [ $i -lt 200 ] && [ -z "$CP_PORT" ]; do
	CP_PORT=$(sed -n 's/^credproxy: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' \
	    "$T/cp.err")
	sleep 0.05; i=$((i + 1))
done
[ -n "$CP_PORT" ] || { not_ok "credproxy did not start: $(cat "$T/cp.err")"; exit 1; }
PH=$(sed -n 's/^placeholder TOKEN //p' "$T/cp.out")

c() {
	curl -sS --max-time 10 --proxy "http://127.0.0.1:$CP_PORT" \
	    --cacert "$T/pisbx-ca.pem" "$@"
}
# hidden DESC FILE: FILE holds the placeholder, never the value.
hidden() {
	if grep -qF -- "$V" "$2"; then
		not_ok "$1: the value reached the client"
	elif grep -qF -- "$PH" "$2"; then
		ok "$1: the client sees the placeholder"
	else
		not_ok "$1: the echo did not come back: $(head -c 300 "$2")"
	fi
}

# The baseline: an identity echo.
c -H "Authorization: Bearer $PH" -H 'Accept-Encoding: gzip, br' \
    "https://api.test:$P/plain" >"$T/plain.out" 2>&1
hidden "identity body" "$T/plain.out"
# Where a value may go, the server is asked for no compression (a
# compressed echo could not be hidden).
check "injectHost: asked for identity" has_line "$T/plain.out" \
    '^Accept-Encoding: identity'
if grep -qi 'gzip' "$T/plain.out"; then
	not_ok "injectHost: the client's Accept-Encoding went on"
else
	ok "injectHost: the client's Accept-Encoding was dropped"
fi

# A body labelled encoded is not decoded by curl without --compressed:
# the bytes the server wrote are the bytes the client reads.
c -H "Authorization: Bearer $PH" "https://api.test:$P/enc" \
    >"$T/enc.out" 2>&1
hidden "Content-Encoding'd body" "$T/enc.out"

# After 101 the server's raw bytes go to the client as they are.
"$PY" - "$CP_PORT" "$P" "$PH" "$T/pisbx-ca.pem" >"$T/up.out" 2>&1 <<'EOF'
import socket, ssl, sys
cport, port, ph, ca = sys.argv[1:5]
s = socket.create_connection(("127.0.0.1", int(cport)), 10)
s.settimeout(10)
s.sendall(b"CONNECT api.test:%s HTTP/1.1\r\nHost: api.test:%s\r\n\r\n"
          % (port.encode(), port.encode()))
r = b""
while b"\r\n\r\n" not in r:
    r += s.recv(4096)
ctx = ssl.create_default_context(cafile=ca)
t = ctx.wrap_socket(s, server_hostname="api.test")
t.sendall(b"GET /up HTTP/1.1\r\nHost: api.test:%s\r\nConnection: Upgrade\r\n"
          b"Upgrade: echo\r\nAuthorization: Bearer %s\r\n\r\n"
          % (port.encode(), ph.encode()))
out = b""
try:
    while True:
        d = t.recv(65536)
        if not d:
            break
        out += d
except (OSError, ssl.SSLError):
    pass
sys.stdout.write(out.decode("latin-1"))
EOF
hidden "after 101, raw bytes" "$T/up.out"

# A deny rule on a path: the spellings a server may read as that path.
# A trailing "/" (routers that are not strict about it) and ";params"
# in a segment (servlet containers drop them: JGit, Gerrit) name the
# same resource to many servers.
for path in /o/r.git/git-receive-pack /o/r.git/GIT-receive-pack \
    /o/r.git/git-receive-pac%6B /o/r.git/git-receive-pack/ \
    "/o/r.git/git-receive-pack;x=1" "/o/r.git;a/git-receive-pack;" \
    "/o/r.git/git-receive-pack?service=x"; do
	st=$(c -o /dev/null -w '%{http_code}' --path-as-is -X post \
	    --data-binary x "https://api.test:$P$path" 2>/dev/null)
	case $st in
	403|400) ok "rule: post $path refused ($st)" ;;
	*) not_ok "rule: post $path got $st" ;;
	esac
done
st=$(c -o /dev/null -w '%{http_code}' -X POST --data-binary x \
    "https://api.test:$P/o/r.git/git-upload-pack" 2>/dev/null)
eq "rule: another path goes through" "$st" 200

kill -TERM "$CP_PID"
wait "$CP_PID"
eq "credproxy: clean exit" "$?" 0
done_testing
