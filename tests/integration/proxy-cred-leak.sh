#!/bin/sh
# Masked credentials on the paths the proxy does not terminate: a
# placeholder in plain HTTP (a header, Basic credentials in the URL, the
# body), in a CONNECT tunnel that does not carry TLS, in a TLS
# ClientHello's ALPN, in a SOCKS5 user name or a target name is refused
# as credential-leak -- the record names the credential, proxy_opts
# .refused is told, and the upstream never sees the placeholder.  With
# allowPlaintextInject, plain HTTP to an injectHost gets the real value
# (header, Basic, body re-framed) instead.  The proxy is tests/helpers/
# credproxy: the table is pisbx-run's to fill, pisbx-proxy has none.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

CREDPROXY=$PISBX_BUILD/tests/helpers/credproxy
[ -x "$CREDPROXY" ] || skip "credproxy not built ($CREDPROXY)"
command -v curl >/dev/null || skip "curl not installed"

# The upstream: records every byte each connection sends (in $T/up.bytes)
# and answers a complete HTTP request with 200.
cat >"$T/recorder.py" <<'EOF'
import socket, sys, threading
portfile, record = sys.argv[1], sys.argv[2]
lock = threading.Lock()

def complete(d):
    end = d.find(b"\r\n\r\n")
    if end < 0:
        return False
    head = d[:end].lower()
    body = d[end + 4:]
    if b"transfer-encoding: chunked" in head:
        return body.endswith(b"0\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return True

def serve(c):
    data = b""
    c.settimeout(5)
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            data += d
            if data[:1].isalpha() and complete(data):
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
                          b"Connection: close\r\n\r\nok\n")
                break
    except OSError:
        pass
    with lock, open(record, "ab") as f:
        f.write(data + b"\n--\n")
    c.close()

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
import os
os.rename(portfile + ".tmp", portfile)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
: >"$T/up.bytes"
spawn "$PY" "$T/recorder.py" "$T/up.port" "$T/up.bytes"
wait_file "$T/up.port" 200 || { not_ok "recorder did not start"; exit 1; }
UP=$(cat "$T/up.port")

dns_start cred.test=127.0.0.1
px_config "$T/conf.json" --allow "127.0.0.1 cred.test"

# cp_start NAME ARGS...: credproxy with its port in CP_PORT, placeholders
# in $T/NAME.ph, stderr in $T/NAME.err.
_cp_pids=""
cp_start() {
	_n=$1; shift
	spawn "$CREDPROXY" --config "$T/conf.json" --access-log "$PX_LOG" \
	    "$@" >"$T/$_n.ph" 2>"$T/$_n.err"
	_cp_pids="$_cp_pids $LAST_PID:$T/$_n.err"
	_i=0
	CP_PORT=
	while [ $_i -lt 200 ]; do
		CP_PORT=$(sed -n 's/^credproxy: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' \
		    "$T/$_n.err")
		[ -n "$CP_PORT" ] && return 0
		sleep 0.05; _i=$((_i + 1))
	done
	not_ok "credproxy did not start: $(cat "$T/$_n.err")"
	exit 1
}
ph() { sed -n "s/^placeholder $2 //p" "$T/$1.ph"; }
# up_clean DESC PLACEHOLDER: the upstream never saw it.
up_clean() {
	if grep -qF -- "$2" "$T/up.bytes"; then
		not_ok "$1: the upstream saw the placeholder"
	else
		ok "$1: the upstream never saw the placeholder"
	fi
}
# told DESC: proxy_opts.refused was told of a credential-leak for $GH_TOKEN.
told() {
	if grep -q "^refused .* credential-leak \$GH_TOKEN\$" "$T/leak.err"; then
		ok "$1: proxy_opts.refused told"
	else
		not_ok "$1: proxy_opts.refused not told"
		sed 's/^/# /' "$T/leak.err" | tail -n 3
	fi
	: >"$T/leak.err"
}

cp_start leak --cred GH_TOKEN=ghp_realsecretvalue0123456789
LP=$CP_PORT
GH=$(ph leak GH_TOKEN)
case $GH in
pisbx_*) ok "a placeholder for \$GH_TOKEN" ;;
*) not_ok "no placeholder (got '$GH')"; exit 1 ;;
esac

# A header.
out=$(curl -sS -i --max-time 10 -x "http://127.0.0.1:$LP" \
    -H "X-Token: $GH" "http://127.0.0.1:$UP/h" 2>&1 | tr -d '\r')
contains "header placeholder: 403" "$out" "HTTP/1.1 403"
contains "... X-Pisbx-Reason credential-leak" "$out" \
    "X-Pisbx-Reason: credential-leak"
contains "... the body names the credential" "$out" '$GH_TOKEN'
case $out in
*ghp_realsecret*) not_ok "the 403 shows the value" ;;
*) ok "the 403 never shows the value" ;;
esac
check_log "header: credential-leak record with the credential's name" \
    event=decision proto=http decision=deny reason=credential-leak \
    credential='$GH_TOKEN' error~'request headers'
told "header"

# Basic credentials in the URL (curl sends Authorization: Basic).
out=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 10 \
    -x "http://127.0.0.1:$LP" "http://git:$GH@127.0.0.1:$UP/b" 2>&1)
eq "Basic user:placeholder: 403" "$out" 403
told "Basic"

# The body: the head went up, the body is refused and the upstream reset.
out=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 10 \
    -x "http://127.0.0.1:$LP" --data-binary "a=1&token=$GH&b=2" \
    "http://127.0.0.1:$UP/p" 2>&1)
eq "body placeholder: 403" "$out" 403
check_log "body: credential-leak record" event=decision proto=http \
    reason=credential-leak credential='$GH_TOKEN' error~'request body'
told "body"

# A target name that carries it (a DNS label can: exfiltration by name).
out=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 10 \
    -x "http://127.0.0.1:$LP" "http://$GH.cred.test:$UP/n" 2>&1)
eq "placeholder in the host name: 403" "$out" 403
if dns_asked "$GH.cred.test"; then
	not_ok "the name with the placeholder was looked up"
else
	ok "the name with the placeholder was never looked up"
fi
told "host name"

# A CONNECT tunnel that does not carry TLS: the stream is scanned.
out=$("$PY" - "$LP" "$UP" "$GH" <<'EOF'
import socket, sys, time
px, up, ph = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.create_connection(("127.0.0.1", px), 5)
s.sendall(("CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: x\r\n\r\n" % up).encode())
r = s.recv(4096)
print(r.split(b"\r\n")[0].decode())
s.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
time.sleep(0.3)
s.sendall(b"a much later line with the token " + ph.encode() + b"\n")
s.settimeout(5)
try:
    while s.recv(4096):
        pass
    print("closed")
except OSError as e:
    print("closed", e)
EOF
)
contains "CONNECT established" "$out" "200"
contains "non-TLS tunnel closed at the placeholder" "$out" "closed"
check_log "tunnel: credential-leak decision record" event=decision \
    proto=connect reason=credential-leak credential='$GH_TOKEN' \
    error~'does not carry TLS'
check_log "tunnel: close record ends credential-leak" event=close \
    proto=connect end=credential-leak credential='$GH_TOKEN'
told "tunnel"
if grep -qF "SSH-2.0-OpenSSH_9.6" "$T/up.bytes"; then
	ok "the tunnel's bytes before the placeholder were relayed"
else
	not_ok "the tunnel's first line never reached the upstream"
fi

# A placeholder split over two writes (the scan's carry).
out=$("$PY" - "$LP" "$UP" "$GH" <<'EOF'
import socket, sys, time
px, up, ph = int(sys.argv[1]), sys.argv[2], sys.argv[3].encode()
s = socket.create_connection(("127.0.0.1", px), 5)
s.sendall(("CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: x\r\n\r\n" % up).encode())
s.recv(4096)
s.sendall(b"raw tcp " + ph[:20])
time.sleep(0.3)
s.sendall(ph[20:] + b" more")
s.settimeout(5)
try:
    while s.recv(4096):
        pass
    print("closed")
except OSError as e:
    print("closed", e)
EOF
)
contains "a placeholder split over two writes closes the tunnel" "$out" closed
told "split tunnel"

# The ALPN of a TLS ClientHello (openssl s_client through the CONNECT).
if command -v openssl >/dev/null; then
	timeout 10 openssl s_client -proxy "127.0.0.1:$LP" \
	    -connect "127.0.0.1:$UP" -alpn "$GH" </dev/null >"$T/sc.out" 2>&1
	check_log "ClientHello ALPN: credential-leak" event=decision \
	    proto=connect reason=credential-leak error~'TLS handshake'
	told "ALPN"
fi

# SOCKS5: the placeholder as the user name.
out=$(socks "$LP" --auth "$GH:x" --target "127.0.0.1:$UP" --send hi)
contains "SOCKS5 user placeholder: reply 0x02" "$out" "reply 0x02"
check_log "SOCKS5: credential-leak record" event=decision proto=socks5 \
    reason=credential-leak credential='$GH_TOKEN' error~'SOCKS5 user'
told "SOCKS5"
up_clean "every refusal" "$GH"
# The head of the placeholder (its first 38 bytes) is what identifies it.
up_clean "every refusal (head)" "$(printf '%s' "$GH" | cut -c1-38)"

# allowPlaintextInject: plain HTTP to the injectHost gets the value.
: >"$T/up.bytes"
cp_start inj --plaintext-inject --cred INJ=real-inj-value@127.0.0.1 \
    --cred GH_TOKEN=ghp_other@cred.test
IP=$CP_PORT
PI=$(ph inj INJ)
out=$(curl -sS --max-time 10 -x "http://127.0.0.1:$IP" \
    -H "Authorization: Bearer $PI" "http://127.0.0.1:$UP/i" 2>&1)
eq "inject: a header to the injectHost passes" "$out" ok
check "inject: the upstream got the value in the header" \
    grep -qF "Authorization: Bearer real-inj-value" "$T/up.bytes"
out=$(curl -sS --max-time 10 -x "http://127.0.0.1:$IP" \
    -u "git:$PI" "http://127.0.0.1:$UP/u" 2>&1)
eq "inject: Basic user:placeholder passes" "$out" ok
b64=$(printf 'git:real-inj-value' | base64)
check "inject: the upstream got Basic git:value" \
    grep -qF "Authorization: Basic $b64" "$T/up.bytes"
out=$(curl -sS --max-time 10 -x "http://127.0.0.1:$IP" \
    --data-binary "k=$PI&z=1" "http://127.0.0.1:$UP/d" 2>&1)
eq "inject: a body to the injectHost passes" "$out" ok
check "inject: the body went chunked with the value" \
    grep -qF "k=real-inj-value&z=1" "$T/up.bytes"
check "inject: Transfer-Encoding chunked (the length changed)" \
    grep -qi "Transfer-Encoding: chunked" "$T/up.bytes"
up_clean "inject" "$PI"
# The other credential (injectHosts cred.test) is still a leak here.
GH2=$(ph inj GH_TOKEN)
out=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 10 \
    -x "http://127.0.0.1:$IP" -H "X-T: $GH2" "http://127.0.0.1:$UP/x" 2>&1)
eq "inject: another credential's placeholder is still refused" "$out" 403
up_clean "inject (other credential)" "$GH2"

# HTTP/1.0 client, a body whose length changes: the upstream gets it
# chunked, so the request goes as HTTP/1.1 (chunked is no HTTP/1.0
# framing: RFC 9112 6.1).
: >"$T/up.bytes"
out=$(curl -sS --http1.0 --max-time 10 -x "http://127.0.0.1:$IP" \
    --data-binary "k=$PI&z=10" "http://127.0.0.1:$UP/d10" 2>&1)
eq "inject, HTTP/1.0 client: the body passes" "$out" ok
check "inject, HTTP/1.0 client: the upstream got the value" \
    grep -qF "k=real-inj-value&z=10" "$T/up.bytes"
check "inject, HTTP/1.0 client: sent as HTTP/1.1, chunked" \
    grep -qF "POST /d10 HTTP/1.1" "$T/up.bytes"
if grep -qF "POST /d10 HTTP/1.0" "$T/up.bytes"; then
	not_ok "inject, HTTP/1.0 client: chunked under an HTTP/1.0 line"
else
	ok "inject, HTTP/1.0 client: no chunked HTTP/1.0 request"
fi

# What comes back from the injectHost is hidden: an upstream that echoes
# the Authorization header (in a header and the body) shows the client
# the placeholder.  Its answers: /cl Content-Length, /ch chunked, /eof
# delimited by its close, all written in small pieces so that a value
# straddles reads.
cat >"$T/echo.py" <<'EOF'
import socket, sys, threading, time
portfile = sys.argv[1]

def serve(c):
    c.settimeout(5)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            d = c.recv(65536)
            if not d:
                return
            data += d
        head = data.split(b"\r\n\r\n")[0].split(b"\r\n")
        path = head[0].split(b" ")[1]
        auth = b""
        for line in head[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"authorization":
                auth = v.strip()
        body = b"auth=" + auth + b" twice=" + auth + b"\n"
        if path == b"/cl":
            out = (b"HTTP/1.1 200 OK\r\nX-Echo: " + auth +
                   b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        elif path == b"/ch":
            out = b"HTTP/1.1 200 OK\r\nX-Echo: " + auth + \
                  b"\r\nTransfer-Encoding: chunked\r\n\r\n"
            for i in range(0, len(body), 7):
                piece = body[i:i + 7]
                out += b"%x\r\n" % len(piece) + piece + b"\r\n"
            out += b"0\r\n\r\n"
        else:
            out = (b"HTTP/1.1 200 OK\r\nX-Echo: " + auth +
                   b"\r\nConnection: close\r\n\r\n" + body)
        for i in range(0, len(out), 9):
            c.sendall(out[i:i + 9])
            time.sleep(0.002)
    except OSError:
        pass
    finally:
        c.close()

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
import os
os.rename(portfile + ".tmp", portfile)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
spawn "$PY" "$T/echo.py" "$T/echo.port"
wait_file "$T/echo.port" 200 || { not_ok "echo server did not start"; exit 1; }
EP=$(cat "$T/echo.port")
want_body="auth=Bearer $PI twice=Bearer $PI"
for _v in 1.1 1.0; do
	for _p in cl ch eof; do
		_d="hide, HTTP/$_v client, /$_p"
		curl -sS -i --http$_v --max-time 10 -x "http://127.0.0.1:$IP" \
		    -H "Authorization: Bearer $PI" \
		    "http://127.0.0.1:$EP/$_p" >"$T/echo.out" 2>&1
		tr -d '\r' <"$T/echo.out" >"$T/echo.txt"
		if grep -qF "real-inj-value" "$T/echo.txt"; then
			not_ok "$_d: the client saw the value"
			sed 's/^/# /' "$T/echo.txt" | head -n 12
		else
			ok "$_d: the client never saw the value"
		fi
		check "$_d: the header echo says the placeholder" \
		    grep -qxF "X-Echo: Bearer $PI" "$T/echo.txt"
		check "$_d: the body says the placeholder, whole" \
		    grep -qxF "$want_body" "$T/echo.txt"
		case $_v/$_p in
		1.1/eof) ;;
		1.1/*)
			check "$_d: re-framed chunked (the length changed)" \
			    grep -qix "Transfer-Encoding: chunked" "$T/echo.txt"
			;;
		1.0/*)
			check "$_d: delimited by the close" \
			    grep -qix "Connection: close" "$T/echo.txt"
			if grep -qi "^Transfer-Encoding\|^Content-Length" \
			    "$T/echo.txt"; then
				not_ok "$_d: a length or chunked to HTTP/1.0"
			else
				ok "$_d: no length, no chunked to HTTP/1.0"
			fi
			;;
		esac
	done
done

for _e in $_cp_pids; do
	_p=${_e%%:*} _f=${_e#*:}
	kill -TERM "$_p"
	wait "$_p"
	_rc=$?
	if [ $_rc -eq 0 ] && ! grep -q 'Sanitizer' "$_f"; then
		ok "credproxy $_p: SIGTERM, clean exit"
	else
		not_ok "credproxy $_p: exit $_rc"
		grep -A 12 'Sanitizer' "$_f" | sed 's/^/# /'
	fi
done
done_testing
