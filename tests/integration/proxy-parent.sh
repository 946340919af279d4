#!/bin/sh
# network.parentProxy with pisbx-proxy on its own, against Debian's
# tinyproxy as the corporate gateway: allowed names reach a local origin
# through it (forwarded HTTP, CONNECT, SOCKS5, TLS with the ClientHello
# check), names only the gateway can resolve are never resolved by pisbx,
# denied and unreviewed targets never reach the gateway (its log), a
# noProxy entry goes direct, the gateway's refusals become parent-refused
# / parent-auth / parent-error with the 403/502/504 and SOCKS5 codes,
# credentials from a file (rotated by SIGHUP) and from a variable work and
# are in no log; a scripted upstream for the edges: a banner sent with the
# 200, an interim 100, garbage, 5xx, no answer within the connect timeout.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/parent.sh"

SECRET='S3cr3t-Pw_42'
SECRET_B64=$(printf 'alice:%s' "$SECRET" | base64)

# The origins, and the names only the gateway resolves.
"$PY" "$SERVERS" certgen "$T/cert" tls.parent.test
srv_start http web
WEB_PORT=$SRV_PORT
srv_start http tls --tls-cert "$T/cert/cert.pem" --tls-key "$T/cert/key.pem"
TLS_PORT=$SRV_PORT
hosts_file "$T/gw-hosts" "127.0.0.1 localhost" \
    "127.0.0.1 origin.parent.test" "127.0.0.1 tls.parent.test" \
    "127.0.0.1 refused.parent.test" "127.0.0.1 denied.parent.test" \
    "127.0.0.1 unlisted.parent.test"
# pisbx's resolver knows direct.test only.
dns_start direct.test=127.0.0.1

tp_start open --hosts "$T/gw-hosts" \
    --allow "origin.parent.test tls.parent.test noname.parent.test"
OPEN_PORT=$TP_PORT OPEN_LOG=$TP_LOG
tp_start auth --hosts "$T/gw-hosts" --auth "alice:$SECRET" \
    --allow "origin.parent.test"
AUTH_PORT=$TP_PORT AUTH_LOG=$TP_LOG

ALLOW="origin.parent.test tls.parent.test refused.parent.test
    noname.parent.test direct.test:$WEB_PORT 93.184.215.14:443"
keep_err() { cat "$PX_ERR" >>"$T/all-proxy.err"; }

# --- through the gateway ---------------------------------------------------
parent_config "$T/open.json" --allow "$ALLOW" --deny "denied.parent.test" \
    --parent "{\"http\": \"http://127.0.0.1:$OPEN_PORT\",
	\"noProxy\": \"localhost, direct.test\"}"
px_start "$T/open.json" -v -v

out=$(curl -sS --max-time 10 -x "http://127.0.0.1:$PX_PORT" \
    "http://origin.parent.test:$WEB_PORT/fwd?q=1" 2>&1)
contains "forwarded GET through the gateway reaches the origin" "$out" \
    '"path": "/fwd?q=1"'
contains "... with the origin's Host" "$out" \
    "[\"Host\", \"origin.parent.test:$WEB_PORT\"]"
# httpForwarding "tunnel", the default: plain HTTP inside a CONNECT.
if tp_saw "$OPEN_LOG" "CONNECT origin.parent.test:$WEB_PORT HTTP/1.1" &&
    ! tp_saw "$OPEN_LOG" "GET http://origin.parent.test"; then
	ok "the gateway got a CONNECT for the plain-HTTP request, not the request"
else
	not_ok "the gateway's log: $(grep -F 'Request (' "$OPEN_LOG")"
fi
check_log "forwarded request: allow record names the gateway" \
    event=decision proto=http host=origin.parent.test decision=allow \
    reason=allow-list:origin.parent.test parent="127.0.0.1:$OPEN_PORT" \
    addr="127.0.0.1:$OPEN_PORT"

out=$(curl -sS --max-time 10 -p -x "http://127.0.0.1:$PX_PORT" \
    "http://origin.parent.test:$WEB_PORT/tunnel" 2>&1)
contains "CONNECT through the gateway reaches the origin" "$out" \
    '"path": "/tunnel"'
if tp_saw "$OPEN_LOG" "CONNECT origin.parent.test:$WEB_PORT HTTP/1.1"; then
	ok "the gateway got CONNECT for the canonical target"
else
	not_ok "the gateway did not log the CONNECT"
fi
check_log "CONNECT: allow record names the gateway" event=decision \
    proto=connect host=origin.parent.test decision=allow \
    parent="127.0.0.1:$OPEN_PORT"
check_log "CONNECT: close record with bytes both ways" event=close \
    proto=connect host=origin.parent.test parent="127.0.0.1:$OPEN_PORT" \
    bytes_up~'^[1-9]' bytes_down~'^[1-9]'

out=$(curl -sS --max-time 10 --socks5-hostname "127.0.0.1:$PX_PORT" \
    "http://origin.parent.test:$WEB_PORT/socks" 2>&1)
contains "SOCKS5 through the gateway reaches the origin" "$out" \
    '"path": "/socks"'
check_log "SOCKS5: allow record names the gateway" event=decision \
    proto=socks5 host=origin.parent.test decision=allow \
    parent="127.0.0.1:$OPEN_PORT"

# TLS end to end through the gateway, and the ClientHello check on it.
out=$(curl -sS --max-time 10 -x "http://127.0.0.1:$PX_PORT" \
    --cacert "$T/cert/cert.pem" "https://tls.parent.test:$TLS_PORT/tls" 2>&1)
contains "TLS through the gateway: certificate verified, origin answered" \
    "$out" '"path": "/tls"'
out=$("$PY" "$SERVERS" tls --port "$PX_PORT" --via connect \
    --target "tls.parent.test:$TLS_PORT" --sni other.test 2>&1)
check_log "a ClientHello for another name through the gateway: sni-mismatch" \
    proto=connect host=tls.parent.test port="$TLS_PORT" reason=sni-mismatch \
    parent="127.0.0.1:$OPEN_PORT"

# pisbx resolved none of these names: only the gateway could.
for n in origin.parent.test tls.parent.test; do
	if dns_asked "$n"; then
		not_ok "pisbx resolved $n itself (the gateway resolves it)"
	else
		ok "pisbx did not resolve $n: the gateway did"
	fi
done

# Denied and unreviewed: refused by pisbx, never shown to the gateway.
px_connect "denied.parent.test:443"
eq "deny-listed CONNECT: 403" "$STATUS" 403
eq "... deny-list reason" "$REASON_HDR" "deny-list:denied.parent.test"
px_req "GET http://unlisted.parent.test/ HTTP/1.1\r\nHost: unlisted.parent.test\r\n\r\n"
eq "unlisted forwarded request: 403 no-reviewer" "$STATUS:$REASON_HDR" \
    "403:no-reviewer"
out=$(socks "$PX_PORT" --target "denied.parent.test:80")
contains "deny-listed SOCKS5: 0x02" "$out" "reply 0x02"
if grep -E 'denied\.parent|unlisted\.parent' "$OPEN_LOG"; then
	not_ok "a refused target reached the gateway"
else
	ok "denied and unreviewed targets never reached the gateway"
fi
eq "a deny by policy names no gateway" \
    "$(log_count event=decision host=denied.parent.test parent~.)" 0

# Address targets are still checked, before anyone is asked.
px_connect "10.1.2.3:443"
eq "a non-public address, not allowed: 403 non-public-address" \
    "$STATUS:$REASON_HDR" "403:non-public-address"
if grep -q '10\.1\.2\.3' "$OPEN_LOG"; then
	not_ok "the non-public address reached the gateway"
else
	ok "the non-public address never reached the gateway"
fi
# A public address allowed exactly goes to the gateway, which refuses it.
px_connect "93.184.215.14:443"
eq "allowed public address, the gateway's filter: 403 parent-refused" \
    "$STATUS:$REASON_HDR" "403:parent-refused"
if tp_saw "$OPEN_LOG" "CONNECT 93.184.215.14:443"; then
	ok "the allowed address was handed to the gateway"
else
	not_ok "the allowed address did not reach the gateway"
fi

# The gateway's own refusal (its filter): parent-refused.
px_connect "refused.parent.test:443"
eq "the gateway refuses CONNECT: 403" "$STATUS" 403
eq "... X-Pisbx-Reason parent-refused" "$REASON_HDR" parent-refused
contains "... the body names the gateway and its answer" "$RESP" \
    "the upstream proxy 127.0.0.1:$OPEN_PORT refused CONNECT refused.parent.test:443: 403"
contains "... and whose policy that is" "$RESP" \
    "pisbx allowed it; the upstream proxy (network.parentProxy in $T/open.json) refused it"
check_log "parent-refused record" event=decision proto=connect \
    host=refused.parent.test decision=deny reason=parent-refused \
    parent="127.0.0.1:$OPEN_PORT" error~'refused CONNECT'
out=$(socks "$PX_PORT" --target "refused.parent.test:443")
contains "the gateway refuses, SOCKS5: 0x02 (not allowed)" "$out" "reply 0x02"
# A forwarded request: the gateway refuses its tunnel, which pisbx can
# tell from the origin's answers.
px_req "GET http://refused.parent.test/ HTTP/1.1\r\nHost: refused.parent.test\r\n\r\n"
eq "the gateway refuses a forwarded request's tunnel: 403 parent-refused" \
    "$STATUS:$REASON_HDR" "403:parent-refused"
contains "... the hint names the gateway's setting and the opt-in key" \
    "$RESP" 'network.parentProxy.httpForwarding to "absolute-form" in'
check_log "... its record" event=decision proto=http \
    host=refused.parent.test decision=deny reason=parent-refused \
    error~'refused CONNECT refused.parent.test:80: 403 .*plain-HTTP'

# A 5xx from the gateway (it cannot resolve the name): parent-error.
px_connect "noname.parent.test:443"
eq "the gateway answers 500: 502 parent-error" "$STATUS:$REASON_HDR" \
    "502:parent-error"
contains "... the hint: reachability, or noProxy for a host reached directly" \
    "$RESP" "goes in network.parentProxy.noProxy (\"noname.parent.test\")"
out=$(socks "$PX_PORT" --target "noname.parent.test:443")
contains "... SOCKS5: 0x01" "$out" "reply 0x01"

# noProxy: direct.test goes direct (and pisbx resolves it itself).
out=$(curl -sS --max-time 10 -x "http://127.0.0.1:$PX_PORT" \
    "http://direct.test:$WEB_PORT/direct" 2>&1)
contains "a noProxy name is reached directly" "$out" '"path": "/direct"'
if grep -q 'direct\.test' "$OPEN_LOG"; then
	not_ok "a noProxy name went through the gateway"
else
	ok "a noProxy name never reached the gateway"
fi
if dns_asked direct.test; then
	ok "a direct name is resolved by pisbx"
else
	not_ok "pisbx did not resolve the direct name"
fi
eq "the direct connection's record names no gateway" \
    "$(log_count event=decision host=direct.test parent~.)" 0
keep_err

# --- httpForwarding "absolute-form" (opt-in) --------------------------------
# Forwarded HTTP goes to the gateway as a proxy request, as from clients
# that talk to it themselves; the gateway's answers pass on as they come.
parent_config "$T/abs.json" --allow "$ALLOW" \
    --parent "{\"http\": \"http://127.0.0.1:$OPEN_PORT\",
	\"httpForwarding\": \"absolute-form\"}"
px_start "$T/abs.json"
out=$(curl -sS --max-time 10 -x "http://127.0.0.1:$PX_PORT" \
    "http://origin.parent.test:$WEB_PORT/abs?q=2" 2>&1)
contains "absolute-form: a forwarded GET reaches the origin" "$out" \
    '"path": "/abs?q=2"'
if tp_saw "$OPEN_LOG" "GET http://origin.parent.test:$WEB_PORT/abs?q=2 HTTP/1.1"; then
	ok "... and the gateway got it in absolute-form"
else
	not_ok "the gateway did not log the absolute-form request"
fi
check_log "... allow record names the gateway" event=decision proto=http \
    host=origin.parent.test decision=allow reason=allow-list:origin.parent.test \
    parent="127.0.0.1:$OPEN_PORT"
px_req "GET http://refused.parent.test/ HTTP/1.1\r\nHost: refused.parent.test\r\n\r\n"
eq "absolute-form: the gateway's 403 is passed on as it came" \
    "$STATUS:$REASON_HDR" "403:"
contains "... its own page" "$RESP" "tinyproxy"
: >"$T/trace.before"
grep -c 'TRACE' "$OPEN_LOG" >"$T/trace.before"
px_req "TRACE http://origin.parent.test:$WEB_PORT/t HTTP/1.1\r\nHost: origin.parent.test\r\nMax-Forwards: 0\r\n\r\n"
eq "absolute-form: TRACE is refused, 403 parent-method" \
    "$STATUS:$REASON_HDR" "403:parent-method"
contains "... the hint names the tunnel mode" "$RESP" \
    'httpForwarding "tunnel" (the default)'
eq "... it never reached the gateway" "$(grep -c 'TRACE' "$OPEN_LOG")" \
    "$(cat "$T/trace.before")"
check_log "... its record" event=decision proto=http host=origin.parent.test \
    decision=deny reason=parent-method error~'^TRACE through the upstream proxy'
keep_err
px_stop

# --- a gateway that wants credentials -------------------------------------
parent_config "$T/noauth.json" --allow "$ALLOW" \
    --parent "{\"https\": \"http://127.0.0.1:$AUTH_PORT\"}"
px_start "$T/noauth.json"
px_connect "origin.parent.test:443"
eq "no credentials, the gateway answers 407: 502 parent-auth" \
    "$STATUS:$REASON_HDR" "502:parent-auth"
contains "... the body says where credentials go" "$RESP" \
    "set network.parentProxy.credentialsFile or credentialsEnv in $T/noauth.json"
px_req "GET http://origin.parent.test:$WEB_PORT/ HTTP/1.1\r\nHost: origin.parent.test\r\n\r\n"
eq "forwarded request, 407 from the gateway: 502 parent-auth" \
    "$STATUS:$REASON_HDR" "502:parent-auth"
check_log "parent-auth record for the forwarded request" event=decision \
    proto=http host=origin.parent.test decision=deny reason=parent-auth
n=$(log_count event=decision proto=http host=origin.parent.test \
    parent="127.0.0.1:$AUTH_PORT")
eq "... one decision record for it (held for the gateway's answer)" "$n" 1
out=$(socks "$PX_PORT" --target "origin.parent.test:443")
contains "... SOCKS5: 0x01" "$out" "reply 0x01"
keep_err
px_stop

printf 'alice:wrong-password\n' >"$T/cred"
chmod 600 "$T/cred"
parent_config "$T/file.json" --allow "$ALLOW" \
    --parent "{\"http\": \"http://127.0.0.1:$AUTH_PORT\",
	\"credentialsFile\": \"$T/cred\"}"
px_start "$T/file.json"
px_connect "origin.parent.test:$WEB_PORT"
eq "wrong credentials: 502 parent-auth" "$STATUS:$REASON_HDR" "502:parent-auth"
contains "... the body names the credentials file" "$RESP" \
    "answered 401 Unauthorized to the credentials from $T/cred"
contains "... and what to check" "$RESP" \
    "check the upstream proxy's credentials in $T/cred (network.parentProxy.credentialsFile in $T/file.json)"
# Rotated on disk, read again on SIGHUP.
printf 'alice:%s\n' "$SECRET" >"$T/cred"
kill -HUP "$PX_PID"
i=0
while ! grep -q 'configuration reloaded' "$PX_ERR" && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
out=$(curl -sS --max-time 10 -p -x "http://127.0.0.1:$PX_PORT" \
    "http://origin.parent.test:$WEB_PORT/file" 2>&1)
contains "credentials from the file (after SIGHUP): CONNECT works" "$out" \
    '"path": "/file"'
out=$(curl -sS --max-time 10 -x "http://127.0.0.1:$PX_PORT" \
    "http://origin.parent.test:$WEB_PORT/file-fwd" 2>&1)
contains "... and forwarded HTTP" "$out" '"path": "/file-fwd"'
case $out in
*[Pp]roxy-[Aa]uthorization*) not_ok "the origin saw Proxy-Authorization" ;;
*) ok "the origin never sees the gateway's credentials" ;;
esac
keep_err
px_stop

parent_config "$T/env.json" --allow "$ALLOW" \
    --parent "{\"http\": \"http://127.0.0.1:$AUTH_PORT\",
	\"credentialsEnv\": \"PISBX_TEST_GW_CRED\"}"
export PISBX_TEST_GW_CRED="alice:$SECRET"
px_start "$T/env.json" -v -v
unset PISBX_TEST_GW_CRED
out=$(curl -sS --max-time 10 --socks5-hostname "127.0.0.1:$PX_PORT" \
    "http://origin.parent.test:$WEB_PORT/env" 2>&1)
contains "credentials from the environment: SOCKS5 works" "$out" \
    '"path": "/env"'
keep_err
px_stop
if out=$("$PROXY" --config "$T/env.json" --check 2>&1); then
	not_ok "--check passed without the credentials variable"
else
	contains "--check: the variable is not set" "$out" \
	    "credentialsEnv: the environment variable PISBX_TEST_GW_CRED is not set"
fi

# The secret and its encoding: in no log, no stderr, no answer.
leak=
for f in "$PX_LOG" "$T/all-proxy.err"; do
	if grep -qF -e "$SECRET" -e "$SECRET_B64" "$f"; then
		leak="$leak $f"
	fi
done
if [ -z "$leak" ]; then
	ok "the password appears in no access log and no diagnostics (-v -v)"
else
	not_ok "the password leaked into:$leak"
fi
if grep -q 'Proxy-Authorization' "$T/all-proxy.err"; then
	not_ok "diagnostics mention Proxy-Authorization"
else
	ok "diagnostics never show the Proxy-Authorization header"
fi

# --- the edges, with a scripted upstream ----------------------------------
# edge MODE JSON-EXTRA: a pisbx-proxy in front of fakeparent.py MODE.
edge() {
	fake_parent "$1" "$1"
	parent_config "$T/edge.json" --allow "$ALLOW" \
	    --parent "{\"http\": \"http://127.0.0.1:$FP_PORT\"}" \
	    --proxy "{\"connectTimeoutMs\": 1000}"
	px_start "$T/edge.json"
}

# The target's first bytes came with the 200: none is lost.
edge banner
out=$(printf 'CONNECT origin.parent.test:22 HTTP/1.1\r\nHost: x\r\n\r\n' |
    raw "$PX_PORT" --timeout 2 | tr -d '\r')
contains "banner sent with the gateway's 200 reaches the client" "$out" \
    "BANNER-FROM-TARGET"
out=$(socks "$PX_PORT" --target "origin.parent.test:22" --send ping)
contains "... through SOCKS5 too, and the tunnel then relays" "$out" "reply 0x00"
if grep -q '"CONNECT", "origin.parent.test:22", "HTTP/1.1"' "$FP_HEADS" &&
    ! grep -q 'Proxy-Authorization' "$FP_HEADS"; then
	ok "CONNECT line as sent: canonical target, no credentials unasked"
else
	not_ok "the upstream got: $(head -n 1 "$FP_HEADS")"
fi
px_stop

edge interim
out=$(printf 'CONNECT origin.parent.test:7 HTTP/1.1\r\nHost: x\r\n\r\nafter' |
    raw "$PX_PORT" --timeout 2 | tr -d '\r')
contains "an interim 100 before the 200: the tunnel works" "$out" "after"
px_stop

edge garbage
px_connect "origin.parent.test:443"
eq "garbage from the upstream: 502 parent-error" "$STATUS:$REASON_HDR" \
    "502:parent-error"
contains "... said so" "$RESP" "no valid HTTP response"
px_stop

edge status:503
px_connect "origin.parent.test:443"
eq "503 from the upstream: 502 parent-error" "$STATUS:$REASON_HDR" \
    "502:parent-error"
px_stop

edge status:504
px_connect "origin.parent.test:443"
eq "504 from the upstream: 504 parent-error" "$STATUS:$REASON_HDR" \
    "504:parent-error"
out=$(socks "$PX_PORT" --target "origin.parent.test:443")
contains "... SOCKS5: 0x06" "$out" "reply 0x06"
px_stop

edge status:403
out=$(socks "$PX_PORT" --target "origin.parent.test:443")
contains "403 from the upstream, SOCKS5: 0x02" "$out" "reply 0x02"
px_stop

edge close
px_connect "origin.parent.test:443"
eq "the upstream closes without a word: 502 parent-error" \
    "$STATUS:$REASON_HDR" "502:parent-error"
px_req "GET http://origin.parent.test/ HTTP/1.1\r\nHost: origin.parent.test\r\n\r\n"
eq "... for a forwarded request too" "$STATUS:$REASON_HDR" "502:parent-error"
px_stop

# A gateway that echoes what it gets (TRACE with Max-Forwards: 0 answered
# by the gateway itself, RFC 9110 9.3.8; an error page quoting the
# request): by default the credentials ride only on the CONNECT, whose
# answer pisbx keeps, so the sandbox's client never reads them.
export PISBX_TEST_GW_CRED="alice:$SECRET"
fake_parent echo echo
parent_config "$T/echo.json" --allow "$ALLOW" \
    --parent "{\"http\": \"http://127.0.0.1:$FP_PORT\",
	\"credentialsEnv\": \"PISBX_TEST_GW_CRED\"}"
px_start "$T/echo.json"
out=$(curl -sS --max-time 10 -x "http://127.0.0.1:$PX_PORT" -X TRACE \
    -H 'Max-Forwards: 0' "http://origin.parent.test/trace" 2>&1)
contains "an echoing gateway: TRACE goes through the tunnel and is echoed" \
    "$out" "TRACE /trace HTTP/1.1"
case $out in
*"$SECRET_B64"* | *[Pp]roxy-[Aa]uthorization*)
	not_ok "the credentials came back to the client: $out" ;;
*) ok "... the echo holds no credentials" ;;
esac
out=$(curl -sS --max-time 10 -x "http://127.0.0.1:$PX_PORT" \
    -H 'X-Quote-Me: 1' "http://origin.parent.test/page" 2>&1)
case $out in
*"GET /page"*)
	case $out in
	*"$SECRET_B64"* | *[Pp]roxy-[Aa]uthorization*)
		not_ok "a quoting page handed back the credentials: $out" ;;
	*) ok "a page that quotes the request holds no credentials either" ;;
	esac ;;
*) not_ok "a GET through the echoing gateway: $out" ;;
esac
if grep '"CONNECT", "origin.parent.test:80"' "$FP_HEADS" |
    grep -qF "$SECRET_B64" &&
    ! grep '"tunnel": true' "$FP_HEADS" | grep -qi 'proxy-authorization'; then
	ok "the credentials went on the CONNECT only, not inside the tunnel"
else
	not_ok "the gateway got: $(cat "$FP_HEADS")"
fi
# A reload to absolute-form between two requests on one client
# connection: the kept tunnel (to the origin) is not reused for a request
# that carries the credentials.
parent_config "$T/echo-abs.json" --allow "$ALLOW" \
    --parent "{\"http\": \"http://127.0.0.1:$FP_PORT\",
	\"credentialsEnv\": \"PISBX_TEST_GW_CRED\",
	\"httpForwarding\": \"absolute-form\"}"
: >"$FP_HEADS"
"$PY" - "$PX_PORT" "$PX_PID" "$PX_ERR" "$T/echo.json" "$T/echo-abs.json" \
    >"$T/keep.out" 2>&1 <<'PYEOF'
import os, signal, socket, sys, time
port, pid, err, conf, new = sys.argv[1:]
def get(s, path):
    s.sendall(b"GET http://origin.parent.test/%s HTTP/1.1\r\n"
              b"Host: origin.parent.test\r\n\r\n" % path.encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(4096)
    head, _, body = buf.partition(b"\r\n\r\n")
    n = int([l.split(b":")[1] for l in head.split(b"\r\n")
             if l.lower().startswith(b"content-length:")][0])
    while len(body) < n:
        body += s.recv(4096)
    return body.decode("latin-1")
s = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
print("first:", get(s, "one"))
before = open(err).read().count("configuration reloaded")
os.replace(new, conf)
os.kill(int(pid), signal.SIGHUP)
for _ in range(200):
    if open(err).read().count("configuration reloaded") > before:
        break
    time.sleep(0.05)
print("second:", get(s, "two"))
PYEOF
if grep -q '"GET", "/one"' "$FP_HEADS" &&
    grep -q '"GET", "http://origin.parent.test/two"' "$FP_HEADS" &&
    ! grep '"tunnel": true' "$FP_HEADS" | grep -qi 'proxy-authorization'; then
	ok "a reload to absolute-form: the next request is not sent into the kept tunnel"
else
	not_ok "after the reload the gateway got: $(cat "$FP_HEADS") ($(cat "$T/keep.out"))"
fi
px_stop

# The same gateway, absolute-form: TRACE and TRACK never sent, and
# Max-Forwards dropped (OPTIONS with Max-Forwards: 0 could be answered
# by the gateway itself).
parent_config "$T/echo-abs.json" --allow "$ALLOW" \
    --parent "{\"http\": \"http://127.0.0.1:$FP_PORT\",
	\"credentialsEnv\": \"PISBX_TEST_GW_CRED\",
	\"httpForwarding\": \"absolute-form\"}"
px_start "$T/echo-abs.json"
: >"$FP_HEADS"
for m in TRACE TRACK TrAcE; do
	px_req "$m http://origin.parent.test/t HTTP/1.1\r\nHost: origin.parent.test\r\nMax-Forwards: 0\r\n\r\n"
	eq "absolute-form, $m: 403 parent-method" "$STATUS:$REASON_HDR" \
	    "403:parent-method"
done
eq "... none reached the gateway" "$(wc -l <"$FP_HEADS")" 0
px_req "OPTIONS http://origin.parent.test/o HTTP/1.1\r\nHost: origin.parent.test\r\nMax-Forwards: 0\r\n\r\n"
eq "absolute-form, OPTIONS: passed on" "$STATUS" 200
if grep -q '"OPTIONS", "http://origin.parent.test/o"' "$FP_HEADS" &&
    ! grep -qi 'max-forwards' "$FP_HEADS"; then
	ok "... without Max-Forwards"
else
	not_ok "the gateway got: $(cat "$FP_HEADS")"
fi
px_stop

# A gateway that allows CONNECT to 443 only (squid's default): plain HTTP
# is refused with the way out; tunnels to 443 work; absolute-form works.
fake_parent sslonly ssl-only
parent_config "$T/ssl.json" --allow "$ALLOW" \
    --parent "{\"http\": \"http://127.0.0.1:$FP_PORT\",
	\"credentialsEnv\": \"PISBX_TEST_GW_CRED\"}"
px_start "$T/ssl.json"
px_req "GET http://origin.parent.test/ HTTP/1.1\r\nHost: origin.parent.test\r\n\r\n"
eq "CONNECT to 443 only: plain HTTP refused, 403 parent-refused" \
    "$STATUS:$REASON_HDR" "403:parent-refused"
contains "... the hint: the gateway's setting" "$RESP" \
    'squid: "acl SSL_ports port 80"'
contains "... or the opt-in key, in this config" "$RESP" \
    "network.parentProxy.httpForwarding to \"absolute-form\" in $T/ssl.json"
px_connect "origin.parent.test:443"
eq "... a tunnel to 443 goes through" "$STATUS" 200
px_stop
parent_config "$T/ssl-abs.json" --allow "$ALLOW" \
    --parent "{\"http\": \"http://127.0.0.1:$FP_PORT\",
	\"credentialsEnv\": \"PISBX_TEST_GW_CRED\",
	\"httpForwarding\": \"absolute-form\"}"
px_start "$T/ssl-abs.json"
px_req "GET http://origin.parent.test/abs HTTP/1.1\r\nHost: origin.parent.test\r\n\r\n"
eq "... with absolute-form, plain HTTP goes through it" "$STATUS" 200
contains "... as a proxy request" "$RESP" "GET http://origin.parent.test/abs HTTP/1.1"
px_stop
unset PISBX_TEST_GW_CRED

# An upstream that accepts and never answers: the connect timeout (1 s
# here) covers its answer too.
srv_start blackhole hole
parent_config "$T/hole.json" --allow "$ALLOW" \
    --parent "{\"http\": \"http://127.0.0.1:$SRV_PORT\"}" \
    --proxy '{"connectTimeoutMs": 1000}'
px_start "$T/hole.json"
px_connect "origin.parent.test:443"
eq "no answer within connectTimeoutMs: 504 parent-error" \
    "$STATUS:$REASON_HDR" "504:parent-error"
contains "... said so" "$RESP" "did not answer CONNECT within 1000 ms"
px_stop

# No upstream listening: parent-error, 502 / SOCKS5 0x01 (not 0x05: the
# target did not refuse anything).
DEAD=$(free_port)
parent_config "$T/dead.json" --allow "$ALLOW" \
    --parent "{\"http\": \"http://127.0.0.1:$DEAD\"}"
px_start "$T/dead.json"
px_connect "origin.parent.test:443"
eq "upstream down: 502 parent-error" "$STATUS:$REASON_HDR" "502:parent-error"
contains "... naming it" "$RESP" "the upstream proxy 127.0.0.1:$DEAD: connect to 127.0.0.1:$DEAD"
out=$(socks "$PX_PORT" --target "origin.parent.test:443")
contains "... SOCKS5: 0x01" "$out" "reply 0x01"
# An upstream named by a name pisbx cannot resolve.
parent_config "$T/unres.json" --allow "$ALLOW" \
    --parent '{"http": "http://gw.nowhere.test:3128"}'
px_start "$T/unres.json"
px_connect "origin.parent.test:443"
eq "upstream name unresolvable: 502 parent-error" "$STATUS:$REASON_HDR" \
    "502:parent-error"
contains "... said so" "$RESP" "cannot resolve the upstream proxy gw.nowhere.test"

px_done
