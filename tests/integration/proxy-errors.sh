#!/bin/sh
# Failures get a clear answer and never take the proxy down: DNS failure
# (502, dns-error), connect refused (502, connect-error), connect timeout
# (504), malformed requests (garbage, bad targets, ports 0 and 65536,
# invalid hosts: 400, invalid-host), an oversized header section (431),
# slow and stalled clients (408 or close after headerTimeoutMs).
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

srv_start http web
WEB_PORT=$SRV_PORT
srv_start synhole syn
SYN_PORT=$SRV_PORT
REFUSED_PORT=$(free_port)
dns_start ok.test=127.0.0.1 refused.test=127.0.0.1 syn.test=127.0.0.1
px_config "$T/conf.json" \
    --allow "ok.test missing.test refused.test syn.test" \
    --proxy '{"connectTimeoutMs": 1000, "headerTimeoutMs": 1000}'
px_start "$T/conf.json"

# DNS failure.
px_connect "missing.test:443"
eq "CONNECT, name does not resolve: 502" "$STATUS" 502
check_log "dns-error record (connect)" event=decision proto=connect \
    host=missing.test reason=dns-error
px_req "GET http://missing.test:$WEB_PORT/ HTTP/1.1\r\nHost: missing.test\r\n\r\n"
eq "HTTP forward, name does not resolve: 502" "$STATUS" 502
check_log "dns-error record (http)" proto=http host=missing.test reason=dns-error

# Nothing listening.
px_connect "refused.test:$REFUSED_PORT"
eq "CONNECT, connection refused: 502" "$STATUS" 502
check_log "connect-error record" proto=connect host=refused.test \
    port="$REFUSED_PORT" reason=connect-error addr~127.0.0.1

# An unanswered SYN.
if [ "$SYN_PORT" = unsupported ]; then
	ok "# SKIP connect timeout: this kernel answers SYNs on a full backlog"
else
	REQ_TIMEOUT=10 px_connect "syn.test:$SYN_PORT"
	eq "CONNECT, connect timeout: 504" "$STATUS" 504
	check_log "connect timeout logged" proto=connect host=syn.test \
	    port="$SYN_PORT" decision~.
fi

# Malformed requests.
malformed() {
	px_req "$2"
	eq "$1: 400" "$STATUS" 400
}
malformed "garbage request line" "HELLO THERE\r\n\r\n"
malformed "CONNECT without a target" "CONNECT  HTTP/1.1\r\nHost: x\r\n\r\n"
malformed "CONNECT without a port" "CONNECT ok.test HTTP/1.1\r\nHost: ok.test\r\n\r\n"
malformed "CONNECT port 0" "CONNECT ok.test:0 HTTP/1.1\r\nHost: ok.test\r\n\r\n"
malformed "CONNECT port 65536" "CONNECT ok.test:65536 HTTP/1.1\r\nHost: ok.test\r\n\r\n"
malformed "CONNECT port with a sign" "CONNECT ok.test:+443 HTTP/1.1\r\nHost: ok.test\r\n\r\n"
malformed "CONNECT userinfo in the target" "CONNECT user@ok.test:443 HTTP/1.1\r\nHost: ok.test\r\n\r\n"
malformed "CONNECT host with a percent" "CONNECT ok%%2etest:443 HTTP/1.1\r\nHost: ok.test\r\n\r\n"
malformed "CONNECT host with an empty label" "CONNECT ok..test:443 HTTP/1.1\r\nHost: ok.test\r\n\r\n"
malformed "CONNECT non-ASCII host" "CONNECT \303\251x.test:443 HTTP/1.1\r\nHost: x\r\n\r\n"
check_log "invalid-host record" event=decision decision=deny reason=invalid-host
malformed "absolute URI with a bad port" "GET http://ok.test:99999/ HTTP/1.1\r\nHost: ok.test\r\n\r\n"
malformed "request line without a version" "GET http://ok.test:$WEB_PORT/\r\n\r\n"
malformed "header line without a colon" "GET http://ok.test:$WEB_PORT/ HTTP/1.1\r\nHost ok.test\r\n\r\n"
malformed "NUL in the request line" "GET http://ok.test:$WEB_PORT/\000 HTTP/1.1\r\nHost: ok.test\r\n\r\n"
out=$(printf '\026\003\001\000\005\001\000\000\001\000' | raw "$PX_PORT" --hex --timeout 3)
case $out in
"" | "485454502f312e3120343030"*) ok "TLS ClientHello sent to the proxy: closed or 400" ;;
*) not_ok "TLS ClientHello sent to the proxy got: $out" ;;
esac

# Header section over 64 KiB: 431, as one header and as many.
big=$("$PY" -c 'print("a" * 70000)')
px_req "GET http://ok.test:$WEB_PORT/ HTTP/1.1\r\nHost: ok.test\r\nX-Big: $big\r\n\r\n"
eq "one 70000-byte header: 431" "$STATUS" 431
many=$("$PY" -c 'print("".join("X-H%d: %s\\r\\n" % (i, "b" * 40) for i in range(2000)))')
px_req "GET http://ok.test:$WEB_PORT/ HTTP/1.1\r\nHost: ok.test\r\n$many\r\n"
eq "2000 headers (90 KB): 431" "$STATUS" 431
px_req "CONNECT ok.test:$WEB_PORT HTTP/1.1\r\nHost: ok.test\r\nX-Big: $big\r\n\r\n"
eq "CONNECT with a 70000-byte header: 431" "$STATUS" 431

# Slowloris: one byte every 200 ms never completes a header section.
printf 'GET http://ok.test:%s/ HTTP/1.1\r\nHost: ok.test\r\nX-Slow: aaaaaaaaaaaaaaaaaaaa\r\n\r\n' "$WEB_PORT" |
    raw "$PX_PORT" --trickle 200 --timeout 8 >"$T/slow.out" 2>"$T/slow.err"
rc=$?
first=$(head -n 1 "$T/slow.out" | tr -d '\r')
if [ $rc -eq 0 ] && { [ -z "$first" ] || [ "$first" = "HTTP/1.1 408 Request Timeout" ] ||
    case $first in "HTTP/1.1 408"*) true ;; *) false ;; esac; }; then
	ok "slowloris client: 408 or closed before the header completed"
else
	not_ok "slowloris client: rc $rc, got '$first' $(cat "$T/slow.err")"
fi
if grep -q "peer closed" "$T/slow.err"; then
	ok "slowloris client cut off before its 60 bytes went out"
else
	not_ok "slowloris client sent its whole request: $(cat "$T/slow.err")"
fi
# A stalled client: half a request line, then silence.
printf 'GET http://ok' | raw "$PX_PORT" --timeout 8 >"$T/stall.out"
rc=$?
eq "stalled client closed by the header timeout" "$rc" 0
# An idle connection that never sends a byte.
printf '' | raw "$PX_PORT" --timeout 8 >"$T/idle.out"
eq "silent client closed by the header timeout" "$?" 0

# After all of that the proxy still serves.
out=$(curl -sS --max-time 10 -x "http://127.0.0.1:$PX_PORT" "http://ok.test:$WEB_PORT/fine" 2>&1)
contains "proxy serves normally afterwards" "$out" '"path": "/fine"'
check "proxy still running" px_alive
px_done
