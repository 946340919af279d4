#!/bin/sh
# HTTP forwarding of absolute-URI requests: curl -x, origin-form to the
# upstream, Host rebuilt from the checked authority, hop-by-hop and proxy
# headers removed, Content-Length and chunked bodies both ways, HEAD,
# keep-alive to the client across hosts with the policy applied per
# request, origin-form requests to the proxy (400), denies (403), and the
# access-log records.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

srv_start http web
WEB_PORT=$SRV_PORT
dns_start web.test=127.0.0.1 other.test=127.0.0.1 blocked.test=127.0.0.1 \
    unlisted.test=127.0.0.1
px_config "$T/conf.json" --allow "web.test other.test [::1]" --deny "blocked.test"
px_start "$T/conf.json"
P="http://127.0.0.1:$PX_PORT"
W="http://web.test:$WEB_PORT"

# Plain GET through curl -x.
out=$(curl -sS --max-time 10 -x "$P" -H 'X-Test: kept' "$W/path/a?q=1" 2>&1)
contains "curl -x http: origin-form path upstream" "$out" '"path": "/path/a?q=1"'
contains "curl -x http: Host from the authority" "$out" "[\"Host\", \"web.test:$WEB_PORT\"]"
contains "curl -x http: end-to-end header kept" "$out" '["X-Test", "kept"]'
check_log "http allow record" event=decision proto=http host=web.test \
    port="$WEB_PORT" decision=allow reason=allow-list:web.test addr~127.0.0.1

# Hop-by-hop, proxy and Connection-named headers removed; a lying Host
# header replaced by the checked authority.
px_req "GET $W/hop HTTP/1.1\r\nHost: evil.test\r\nConnection: keep-alive, X-Drop-Me\r\nX-Drop-Me: secret\r\nProxy-Authorization: Basic dTpw\r\nProxy-Connection: keep-alive\r\nKeep-Alive: timeout=5\r\nUpgrade: websocket\r\nX-Keep: yes\r\n\r\n"
eq "forwarded request answered 200" "$STATUS" 200
hdrs=$(printf '%s\n' "$RESP" | sed -n '/^{/p' | "$PY" -c '
import json, sys
d = json.loads(sys.stdin.read())
print(" ".join(sorted(k.lower() for k, v in d["headers"])))
print(" ".join(v for k, v in d["headers"] if k.lower() == "host"))')
names=$(printf '%s\n' "$hdrs" | sed -n 1p)
hostv=$(printf '%s\n' "$hdrs" | sed -n 2p)
for h in x-drop-me proxy-authorization proxy-connection keep-alive upgrade; do
	case " $names " in
	*" $h "*) not_ok "hop-by-hop header $h forwarded" ;;
	*) ok "hop-by-hop header $h removed" ;;
	esac
done
contains "end-to-end header X-Keep forwarded" " $names " " x-keep "
eq "one Host header, rebuilt from the checked authority" "$hostv" "web.test:$WEB_PORT"

# Request bodies: Content-Length and chunked, 1 MB each.
head -c 1000000 /dev/urandom >"$T/body"
want=$(sha256sum <"$T/body" | cut -d' ' -f1)
got=$(curl -sS --max-time 20 -x "$P" --data-binary @"$T/body" \
    -H 'Content-Type: application/octet-stream' "$W/echo-body" | sha256sum | cut -d' ' -f1)
eq "POST with Content-Length: 1 MB body echoed intact" "$got" "$want"
out=$(curl -sS --max-time 20 -x "$P" --data-binary @"$T/body" \
    -H 'Transfer-Encoding: chunked' "$W/json" 2>&1)
contains "POST chunked: origin read the whole body" "$out" "\"body_sha256\": \"$want\""

# Expect: 100-continue: the interim 100 is relayed, then the final answer.
head -c 3000000 /dev/urandom >"$T/body3"
want=$(sha256sum <"$T/body3" | cut -d' ' -f1)
got=$(curl -sS --max-time 20 -x "$P" --data-binary @"$T/body3" \
    -H 'Expect: 100-continue' "$W/echo-body" | sha256sum | cut -d' ' -f1)
eq "POST with Expect: 100-continue: 3 MB echoed intact" "$got" "$want"
out=$(curl -sS --max-time 20 -x "$P" -D - -o /dev/null --data-binary @"$T/body3" \
    -H 'Expect: 100-continue' "$W/json" | tr -d '\r')
contains "the origin's 100 Continue reached the client" "$out" "HTTP/1.1 100"
contains "then the final 200" "$out" "HTTP/1.1 200"

# Response bodies: close-delimited, chunked and Content-Length.
want=$("$PY" "$SERVERS" sha 2000000)
got=$(curl -sS --max-time 20 -x "$P" "$W/eof-body/2000000" | sha256sum | cut -d' ' -f1)
eq "close-delimited response (no Content-Length) intact" "$got" "$want"
px_req "GET $W/h10 HTTP/1.0\r\nHost: x\r\n\r\n"
contains "HTTP/1.0 client answered" "$RESP" '"path": "/h10"'

want=$("$PY" "$SERVERS" sha 3000000)
got=$(curl -sS --max-time 20 -x "$P" "$W/chunked/3000000" | sha256sum | cut -d' ' -f1)
eq "chunked response (odd chunk sizes) intact" "$got" "$want"
want=$("$PY" "$SERVERS" sha 50000000)
got=$(curl -sS --max-time 30 -x "$P" "$W/bytes/50000000" | sha256sum | cut -d' ' -f1)
eq "50 MB Content-Length response intact" "$got" "$want"
out=$(curl -sS --max-time 10 -x "$P" "$W/close")
eq "upstream Connection: close response delivered" "$out" "closing"

# One client connection: HEAD, GET to another host, a denied host, then
# the first host again -- policy per request, framing kept.
"$PY" - "$PX_PORT" "$WEB_PORT" >"$T/ka.out" 2>&1 <<'EOF'
import socket, sys
px, wp = int(sys.argv[1]), sys.argv[2]
s = f = None

def connect():
    global s, f
    s = socket.create_connection(("127.0.0.1", px), 10)
    f = s.makefile("rb")

def ask(method, url):
    """One request; returns whether the response announced a close."""
    s.sendall(("%s %s HTTP/1.1\r\nHost: x\r\n\r\n" % (method, url)).encode())
    line = f.readline().decode()
    status = line.split(" ")[1]
    n = 0
    chunked = close = False
    while True:
        h = f.readline().decode().strip()
        if not h:
            break
        k, _, v = h.partition(":")
        if k.lower() == "content-length":
            n = int(v)
        if k.lower() == "transfer-encoding" and "chunked" in v.lower():
            chunked = True
        if k.lower() == "connection" and "close" in v.lower():
            close = True
    body = b""
    if method != "HEAD":
        if chunked:
            while True:
                size = int(f.readline().split(b";")[0], 16)
                if size == 0:
                    f.readline()
                    break
                body += f.read(size)
                f.readline()
        else:
            body = f.read(n)
    print(status, method, url.split("/")[2], len(body),
          "close" if close else "keep")
    return close

connect()
first = s.getsockname()
for m, u in (("HEAD", "http://web.test:%s/head" % wp),
             ("GET", "http://web.test:%s/status/204" % wp),
             ("GET", "http://web.test:%s/status/304" % wp),
             ("GET", "http://other.test:%s/other" % wp),
             ("GET", "http://blocked.test:%s/no" % wp),
             ("GET", "http://web.test:%s/again" % wp)):
    try:
        if ask(m, u):
            s.close()
            connect()
    except (OSError, ValueError, IndexError) as e:
        print("ERR", m, u, repr(e))
        connect()
EOF
sed 's/^/# /' "$T/ka.out"
has_line "$T/ka.out" "^200 HEAD web.test:$WEB_PORT 0 keep$" &&
	ok "keep-alive: HEAD answered without a body" ||
	not_ok "keep-alive: HEAD"
has_line "$T/ka.out" "^204 GET web.test:$WEB_PORT 0 keep$" &&
	ok "keep-alive: 204 without framing headers ends at its head" ||
	not_ok "keep-alive: 204"
has_line "$T/ka.out" "^304 GET web.test:$WEB_PORT 0 keep$" &&
	ok "keep-alive: 304 without framing headers ends at its head" ||
	not_ok "keep-alive: 304"
has_line "$T/ka.out" "^200 GET other.test:$WEB_PORT [1-9][0-9]* keep$" &&
	ok "keep-alive: second request to another host forwarded" ||
	not_ok "keep-alive: second host"
has_line "$T/ka.out" "^403 GET blocked.test:$WEB_PORT " &&
	ok "keep-alive: denied host on the same connection gets 403" ||
	not_ok "keep-alive: denied host"
has_line "$T/ka.out" "^200 GET web.test:$WEB_PORT [1-9]" &&
	ok "keep-alive: the host is served again after a 403" ||
	not_ok "keep-alive: after the 403"
if grep -q '^ERR' "$T/ka.out"; then
	not_ok "keep-alive: a connection closed without Connection: close"
else
	ok "keep-alive: every close was announced with Connection: close"
fi
c1=$(log_field conn event=decision proto=http host=other.test)
check_log "one client connection: other.test and blocked.test share its conn id" \
    event=decision proto=http host=blocked.test conn="$c1" decision=deny \
    reason=deny-list:blocked.test

# Denied by curl, with the reason header.
out=$(curl -sS --max-time 10 -x "$P" -D - -o "$T/deny.body" \
    "http://blocked.test:$WEB_PORT/" | tr -d '\r')
contains "curl -x to a denied host: 403" "$out" "HTTP/1.1 403"
contains "curl -x to a denied host: X-Pisbx-Reason" "$out" "deny-list:blocked.test"
contains "403 body names the canonical target" "$(cat "$T/deny.body")" "blocked.test:$WEB_PORT"

# Two requests in one write (pipelined): both answered, in order.
printf 'GET %s/p1 HTTP/1.1\r\nHost: x\r\n\r\nGET %s/p2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' "$W" "$W" |
    raw "$PX_PORT" --timeout 5 >"$T/pipe.out"
if grep -o '"path": "/p[12]"' "$T/pipe.out" | tr '\n' ' ' | grep -qx '"path": "/p1" "path": "/p2" '; then
	ok "pipelined requests answered in order"
else
	not_ok "pipelined requests: $(grep -o '"path": "[^"]*"' "$T/pipe.out" | tr '\n' ' ')"
fi

# Framing attacks: ambiguous bodies are refused or normalised.
px_req "POST $W/json HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello!!"
eq "two different Content-Length values: 400" "$STATUS" 400
px_req "POST $W/json HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"
eq "non-numeric Content-Length: 400" "$STATUS" 400
px_req "POST $W/json HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
case $STATUS in
400) ok "Content-Length with Transfer-Encoding: 400" ;;
200)
	case $RESP in
	*'"Content-Length"'* | *'"content-length"'*) not_ok "Content-Length forwarded next to Transfer-Encoding" ;;
	*'"body_len": 5'*) ok "Content-Length with Transfer-Encoding: chunked framing wins, CL removed" ;;
	*) not_ok "Content-Length with Transfer-Encoding: $RESP" ;;
	esac ;;
*) not_ok "Content-Length with Transfer-Encoding: $STATUS" ;;
esac
px_req "POST $W/json HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"
case $STATUS in
400 | 501) ok "unknown Transfer-Encoding refused ($STATUS)" ;;
*) not_ok "unknown Transfer-Encoding: $STATUS" ;;
esac

# Userinfo must not be mistaken for the host.
px_req "GET http://web.test:$WEB_PORT@unlisted.test:$WEB_PORT/ui HTTP/1.1\r\nHost: web.test\r\n\r\n"
case $STATUS in
400 | 403) ok "userinfo before the host is not the host ($STATUS)" ;;
*) not_ok "http://web.test@unlisted.test/ answered $STATUS" ;;
esac
n=$(log_count event=decision decision=allow host=unlisted.test)
eq "userinfo trick allowed nothing" "$n" 0
case $RESP in
*'"path": "/ui"'*) not_ok "userinfo trick reached an origin" ;;
*) ok "userinfo trick reached no origin" ;;
esac

# IPv6 literal authority.
srv_start http web6 --bind ::1
W6=$SRV_PORT
out=$(curl -sS --max-time 10 -x "$P" "http://[::1]:$W6/six" 2>&1)
contains "IPv6 literal authority forwarded" "$out" '"path": "/six"'
contains "IPv6 literal Host header" "$out" "[\"Host\", \"[::1]:$W6\"]"

# An upstream that closes before its Content-Length: the client sees the
# short body end, never a hang or a reused connection.
curl -sS --max-time 10 -x "$P" "$W/truncate/100000" -o "$T/trunc" 2>"$T/trunc.err"
rc=$?
eq "truncated upstream body: curl reports a partial transfer (18)" "$rc" 18
eq "truncated upstream body: the half that came is delivered" "$(wc -c <"$T/trunc")" 50000

# Origin-form requests to the proxy are refused.
px_req "GET /index.html HTTP/1.1\r\nHost: web.test:$WEB_PORT\r\n\r\n"
eq "origin-form request to the proxy: 400" "$STATUS" 400

check "proxy still running" px_alive
px_done
